//! Convolutional-network operators: `aclnn_convolution.h`, `aclnn_convolution_backward.h`,
//! `aclnn_batch_norm.h`, `aclnn_batch_norm_backward.h`, the 2-D pooling headers
//! (`aclnn_max_pool2d_with_indices[_backward].h`, `aclnn_max_pool2d_with_mask[_backward].h`,
//! `aclnn_avgpool2d[_backward].h`, `aclnn_adaptive_avg_pool2d[_backward].h`,
//! `aclnn_adaptive_max_pool2d[_backward].h`), `aclnn_im2col.h` (`F.unfold`; torch_npu maps
//! `F.fold` to the aclop `Col2im`, not to an aclnn function, so there is no Col2im here).
//!
//! The engine is `npu_emu::ops::{conv, batchnorm, pool}`. torch_npu on Atlas A2 uses the
//! `…WithMask` max pooling (int8 mask of CANN's documented shape); `…WithIndices` gives
//! int32/int64 flat indices as PyTorch does.

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Built, Launch};
use super::matmul::cube;
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::{batchnorm, conv, pool, View};
use std::ffi::c_void;

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

/// An int array of length `n` (a single value is repeated); every value checked by `ok`.
fn spatial(h: *const c_void, arg: &'static str, n: usize, min: i64) -> NnResult<Vec<usize>> {
    let v = a::int_array(h, arg)?;
    let v = if v.len() == 1 && n > 1 {
        vec![v[0]; n]
    } else {
        v
    };
    if v.len() != n {
        return Err(bad(format!(
            "{arg} has {} values; {n} are needed (one per spatial dimension)",
            v.len()
        )));
    }
    if let Some(x) = v.iter().find(|&&x| x < min) {
        return Err(bad(format!("{arg} value {x} must be at least {min}")));
    }
    Ok(v.into_iter().map(|x| x as usize).collect())
}

fn pad3(v: &[usize], fill: usize) -> [usize; 3] {
    let mut o = [fill; 3];
    o[3 - v.len()..].copy_from_slice(v);
    o
}

fn same_dtype(t: &a::T, d: DType) -> NnResult<()> {
    if t.dtype() == d {
        Ok(())
    } else {
        Err(bad(format!(
            "{} data type {} must be the same as input's {d}",
            t.arg,
            t.dtype()
        )))
    }
}

/// The checked geometry of one convolution call: the plain [`conv::Geo`] and the shape of
/// the (forward) output.
struct ConvArgs {
    geo: conv::Geo,
    out_shape: Vec<usize>,
    bias_len: usize,
}

#[allow(clippy::too_many_arguments)]
fn conv_args(
    x: &a::T,
    w: &a::T,
    stride: *const c_void,
    padding: *const c_void,
    dilation: *const c_void,
    transposed: bool,
    output_padding: *const c_void,
    groups: i64,
) -> NnResult<ConvArgs> {
    a::dtype_in(x, FLOATS3)?;
    same_dtype(w, x.dtype())?;
    if !(3..=5).contains(&x.ndim()) {
        return Err(bad(format!(
            "input must be 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW), but its shape is {:?}",
            x.shape()
        )));
    }
    if w.ndim() != x.ndim() {
        return Err(bad(format!(
            "weight must have as many dimensions as input ({}), but its shape is {:?}",
            x.ndim(),
            w.shape()
        )));
    }
    let sp = x.ndim() - 2;
    let stride = spatial(stride, "stride", sp, 1)?;
    let padding = spatial(padding, "padding", sp, 0)?;
    let dilation = spatial(dilation, "dilation", sp, 1)?;
    if groups < 1 {
        return Err(bad(format!("groups {groups} must be at least 1")));
    }
    let g = groups as usize;
    let (n, cin) = (x.shape()[0], x.shape()[1]);
    let ks: Vec<usize> = w.shape()[2..].to_vec();
    if ks.contains(&0) {
        return Err(bad(format!(
            "weight shape {:?} has an empty kernel",
            w.shape()
        )));
    }
    let ins: Vec<usize> = x.shape()[2..].to_vec();
    if !transposed {
        let cout = w.shape()[0];
        if cin != w.shape()[1] * g || !cout.is_multiple_of(g) {
            return Err(bad(format!(
                "input channels {cin} and weight shape {:?} do not fit groups {g} \
                 (weight must be [Cout, Cin/groups, k...] with Cout divisible by groups)",
                w.shape()
            )));
        }
        let mut os = Vec::with_capacity(sp);
        for d in 0..sp {
            os.push(
                conv::out_len(ins[d], ks[d], stride[d], padding[d], dilation[d]).ok_or_else(
                    || {
                        bad(format!(
                            "the kernel (size {:?}, dilation {dilation:?}) is larger than the \
                             padded input {:?} (padding {padding:?})",
                            ks, ins
                        ))
                    },
                )?,
            );
        }
        let mut out_shape = vec![n, cout];
        out_shape.extend(&os);
        Ok(ConvArgs {
            geo: conv::Geo {
                n,
                cin,
                isz: pad3(&ins, 1),
                cout,
                ksz: pad3(&ks, 1),
                osz: pad3(&os, 1),
                stride: pad3(&stride, 1),
                pad: pad3(&padding, 0),
                dil: pad3(&dilation, 1),
                groups: g,
            },
            out_shape,
            bias_len: cout,
        })
    } else {
        let op = spatial(output_padding, "outputPadding", sp, 0)?;
        for d in 0..sp {
            if op[d] >= stride[d].max(dilation[d]) {
                return Err(bad(format!(
                    "outputPadding {op:?} must be smaller than stride {stride:?} or dilation \
                     {dilation:?}"
                )));
            }
        }
        if cin != w.shape()[0] || !cin.is_multiple_of(g) {
            return Err(bad(format!(
                "input channels {cin} and weight shape {:?} do not fit a transposed \
                 convolution with groups {g} (weight must be [Cin, Cout/groups, k...])",
                w.shape()
            )));
        }
        let cout = w.shape()[1] * g;
        let mut os = Vec::with_capacity(sp);
        for d in 0..sp {
            os.push(
                conv::transposed_len(ins[d], ks[d], stride[d], padding[d], dilation[d], op[d])
                    .ok_or_else(|| {
                        bad(format!(
                            "the transposed convolution of input {ins:?} with kernel {ks:?}, \
                             stride {stride:?}, padding {padding:?} has no output"
                        ))
                    })?,
            );
        }
        let mut out_shape = vec![n, cout];
        out_shape.extend(&os);
        Ok(ConvArgs {
            geo: conv::Geo {
                n,
                cin: cout,
                isz: pad3(&os, 1),
                cout: cin,
                ksz: pad3(&ks, 1),
                osz: pad3(&ins, 1),
                stride: pad3(&stride, 1),
                pad: pad3(&padding, 0),
                dil: pad3(&dilation, 1),
                groups: g,
            },
            out_shape,
            bias_len: cout,
        })
    }
}

/// The forward convolution's launch once `c` is checked: `out` of `c`'s output shape, the
/// optional `bias` of its output channels.
fn forward_launch(
    api: &'static str,
    x: &a::T,
    w: &a::T,
    b: Option<&a::T>,
    o: &a::T,
    c: ConvArgs,
    transposed: bool,
) -> NnResult<Built> {
    a::same_shape(o, &c.out_shape)?;
    if let Some(b) = b {
        a::dtype_in(b, FLOATS3)?;
        a::same_shape(b, &[c.bias_len])?;
    }
    let mut l = Launch::new(api);
    l.input(x);
    l.input(w);
    let hb = b.is_some();
    if let Some(b) = b {
        l.input(b);
    }
    l.output(o);
    let geo = c.geo;
    l.finish(move |v, _| {
        let (bv, ov) = if hb {
            (Some(&v[2]), &v[3])
        } else {
            (None, &v[2])
        };
        conv::conv_forward(&v[0], &v[1], bv, ov, &geo, transposed)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnConvolutionGetWorkspaceSize(
    input: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: *const c_void,
    transposed: bool,
    outputPadding: *const c_void,
    groups: i64,
    output: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConvolutionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let w = a::tensor(weight, "weight")?;
            let b = a::opt_tensor(bias, "bias")?;
            let o = a::tensor(output, "output")?;
            cube(cubeMathType)?;
            let c = conv_args(
                &x,
                &w,
                stride,
                padding,
                dilation,
                transposed,
                outputPadding,
                groups,
            )?;
            a::dtype_in(&o, FLOATS3)?;
            forward_launch("aclnnConvolution", &x, &w, b.as_ref(), &o, c, transposed)
        },
    )
}

/// The checked geometry of a `conv_tbc` call: self (T, B, Cin), weight (K, Cin, Cout),
/// bias (Cout), `pad` in [0, 255]; the output is (T + 2·pad − K + 1, B, Cout). Computed as
/// the NCL convolution of the permuted views ([`TBC`], [`KIO`]).
fn tbc_geometry(x: &a::T, w: &a::T, b: &a::T, pad: i64) -> NnResult<(conv::Geo, Vec<usize>)> {
    a::dtype_in(x, FLOATS3)?;
    for t in [w, b] {
        same_dtype(t, x.dtype())?;
    }
    if x.ndim() != 3 || w.ndim() != 3 {
        return Err(bad(format!(
            "self (T, B, Cin) and weight (K, Cin, Cout) must be 3-D, but their shapes are {:?} \
             and {:?}",
            x.shape(),
            w.shape()
        )));
    }
    let (t, n, cin) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    let (k, wcin, cout) = (w.shape()[0], w.shape()[1], w.shape()[2]);
    if wcin != cin || k == 0 {
        return Err(bad(format!(
            "weight {:?} must be (K >= 1, Cin = {cin}, Cout) for self {:?}",
            w.shape(),
            x.shape()
        )));
    }
    if !(0..=255).contains(&pad) {
        return Err(bad(format!("pad {pad} must lie in [0, 255]")));
    }
    a::same_shape(b, &[cout])?;
    let p = pad as usize;
    let tout = conv::out_len(t, k, 1, p, 1).ok_or_else(|| {
        bad(format!(
            "the kernel length {k} is larger than self's padded length {} (T {t}, pad {pad})",
            t + 2 * p
        ))
    })?;
    let geo = conv::Geo {
        n,
        cin,
        isz: [1, 1, t],
        cout,
        ksz: [1, 1, k],
        osz: [1, 1, tout],
        stride: [1; 3],
        pad: [0, 0, p],
        dil: [1; 3],
        groups: 1,
    };
    Ok((geo, vec![tout, n, cout]))
}

/// (T, B, C) seen as (B, C, T).
const TBC: [usize; 3] = [1, 2, 0];
/// The weight (K, Cin, Cout) seen as (Cout, Cin, K).
const KIO: [usize; 3] = [2, 1, 0];

/// `aclnnConvTbc` (in `aclnn_convolution.h`): the 1-D convolution of PyTorch's `conv_tbc`
/// (what torch_npu calls for `torch.conv_tbc`), bias required.
#[no_mangle]
pub unsafe extern "C" fn aclnnConvTbcGetWorkspaceSize(
    self_: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    pad: i64,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConvTbcGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let w = a::tensor(weight, "weight")?;
            let b = a::tensor(bias, "bias")?;
            let o = a::tensor(out, "out")?;
            cube(cubeMathType)?;
            let (geo, out_shape) = tbc_geometry(&x, &w, &b, pad)?;
            same_dtype(&o, x.dtype())?;
            a::same_shape(&o, &out_shape)?;
            let mut l = Launch::new("aclnnConvTbc");
            l.input(&x);
            l.input(&w);
            l.input(&b);
            l.output(&o);
            l.finish(move |v, _| {
                conv::conv_forward(
                    &v[0].permute(&TBC),
                    &v[1].permute(&KIO),
                    Some(&v[2]),
                    &v[3].permute(&TBC),
                    &geo,
                    false,
                )
            })
        },
    )
}

/// `aclnnConvTbcBackward` (in `aclnn_convolution_backward.h`): the three gradients of
/// [`aclnnConvTbcGetWorkspaceSize`] from `self` (the output's gradient, (T', B, Cout)), as
/// torch_npu calls it for `conv_tbc`'s backward; every output is required.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnConvTbcBackwardGetWorkspaceSize(
    self_: *const c_void,
    input: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    pad: i64,
    cubeMathType: i8,
    gradInput: *mut c_void,
    gradWeight: *mut c_void,
    gradBias: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConvTbcBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let gy = a::tensor(self_, "self")?;
            let x = a::tensor(input, "input")?;
            let w = a::tensor(weight, "weight")?;
            let b = a::tensor(bias, "bias")?;
            let gx = a::tensor(gradInput, "gradInput")?;
            let gw = a::tensor(gradWeight, "gradWeight")?;
            let gb = a::tensor(gradBias, "gradBias")?;
            cube(cubeMathType)?;
            let (geo, out_shape) = tbc_geometry(&x, &w, &b, pad)?;
            same_dtype(&gy, x.dtype())?;
            a::same_shape(&gy, &out_shape)?;
            for (g, like) in [(&gx, &x), (&gw, &w), (&gb, &b)] {
                same_dtype(g, x.dtype())?;
                a::same_shape(g, like.shape())?;
            }
            let mut l = Launch::new("aclnnConvTbcBackward");
            l.input(&gy);
            l.input(&x);
            l.input(&w);
            l.output(&gx);
            l.output(&gw);
            l.output(&gb);
            l.finish(move |v, _| {
                conv::conv_backward(
                    &v[0].permute(&TBC),
                    &v[1].permute(&TBC),
                    &v[2].permute(&KIO),
                    &geo,
                    false,
                    Some(&v[3].permute(&TBC)),
                    Some(&v[4].permute(&KIO)),
                    Some(&v[5]),
                )
            })
        },
    )
}

/// `aclnnConvDepthwise2d` (in `aclnn_convolution.h`): the depthwise 2-D convolution of
/// `thnn_conv_depthwise2d`, `weight` (Cout, 1, KH, KW) with Cout a multiple of Cin, each
/// input channel convolved with its own Cout/Cin kernels (groups = Cin); `kernelSize` must
/// be weight's (KH, KW); `bias` (Cout) is optional.
#[no_mangle]
pub unsafe extern "C" fn aclnnConvDepthwise2dGetWorkspaceSize(
    self_: *const c_void,
    weight: *const c_void,
    kernelSize: *const c_void,
    bias: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConvDepthwise2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let w = a::tensor(weight, "weight")?;
            let b = a::opt_tensor(bias, "bias")?;
            let o = a::tensor(out, "out")?;
            cube(cubeMathType)?;
            if x.ndim() != 4 || w.ndim() != 4 {
                return Err(bad(format!(
                    "self (N, Cin, H, W) and weight (Cout, 1, KH, KW) must be 4-D, but their \
                     shapes are {:?} and {:?}",
                    x.shape(),
                    w.shape()
                )));
            }
            let ks = spatial(kernelSize, "kernelSize", 2, 1)?;
            if ks.as_slice() != &w.shape()[2..] {
                return Err(bad(format!(
                    "kernelSize {ks:?} must be weight's (KH, KW) {:?}",
                    &w.shape()[2..]
                )));
            }
            let cin = x.shape()[1];
            if w.shape()[1] != 1 || cin == 0 || !w.shape()[0].is_multiple_of(cin) {
                return Err(bad(format!(
                    "weight {:?} must be (Cout, 1, KH, KW) with Cout a multiple of self's {cin} \
                     channels",
                    w.shape()
                )));
            }
            let c = conv_args(
                &x,
                &w,
                stride,
                padding,
                dilation,
                false,
                std::ptr::null(),
                cin as i64,
            )?;
            same_dtype(&o, x.dtype())?;
            forward_launch("aclnnConvDepthwise2d", &x, &w, b.as_ref(), &o, c, false)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnConvolutionBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    input: *const c_void,
    weight: *const c_void,
    biasSizes: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: *const c_void,
    transposed: bool,
    outputPadding: *const c_void,
    groups: i32,
    outputMask: *const c_void,
    cubeMathType: i8,
    gradInput: *mut c_void,
    gradWeight: *mut c_void,
    gradBias: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConvolutionBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let gy = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(input, "input")?;
            let w = a::tensor(weight, "weight")?;
            let mask = a::bool_array(outputMask, "outputMask")?;
            if mask.len() != 3 {
                return Err(bad(format!(
                    "outputMask must have 3 values, it has {}",
                    mask.len()
                )));
            }
            cube(cubeMathType)?;
            let c = conv_args(
                &x,
                &w,
                stride,
                padding,
                dilation,
                transposed,
                outputPadding,
                groups as i64,
            )?;
            same_dtype(&gy, x.dtype())?;
            a::same_shape(&gy, &c.out_shape)?;
            let gx = if mask[0] {
                Some(a::tensor(gradInput, "gradInput")?)
            } else {
                None
            };
            let gw = if mask[1] {
                Some(a::tensor(gradWeight, "gradWeight")?)
            } else {
                None
            };
            let gb = if mask[2] {
                Some(a::tensor(gradBias, "gradBias")?)
            } else {
                None
            };
            if let Some(t) = &gx {
                a::dtype_in(t, FLOATS3)?;
                a::same_shape(t, x.shape())?;
            }
            if let Some(t) = &gw {
                a::dtype_in(t, FLOATS3)?;
                a::same_shape(t, w.shape())?;
            }
            if let Some(t) = &gb {
                a::dtype_in(t, FLOATS3)?;
                if t.numel() != c.bias_len || t.ndim() != 1 {
                    return Err(bad(format!(
                        "gradBias has shape {:?}, expected [{}]",
                        t.shape(),
                        c.bias_len
                    )));
                }
                if let Some(bs) = a::opt_int_array(biasSizes, "biasSizes")? {
                    if bs != [c.bias_len as i64] {
                        return Err(bad(format!(
                            "biasSizes {bs:?} must be [{}] (the output channels)",
                            c.bias_len
                        )));
                    }
                }
            }
            let mut l = Launch::new("aclnnConvolutionBackward");
            l.input(&gy);
            l.input(&x);
            l.input(&w);
            let has = [gx.is_some(), gw.is_some(), gb.is_some()];
            for t in [&gx, &gw, &gb].into_iter().flatten() {
                l.output(t);
            }
            let geo = c.geo;
            l.finish(move |v, _| {
                let mut i = 3;
                let mut next = |h: bool| -> Option<&View> {
                    h.then(|| {
                        i += 1;
                        &v[i - 1]
                    })
                };
                let (ogx, ogw, ogb) = (next(has[0]), next(has[1]), next(has[2]));
                conv::conv_backward(&v[0], &v[1], &v[2], &geo, transposed, ogx, ogw, ogb)
            })
        },
    )
}

// ---- batch norm ----

fn channel_vec(t: &Option<a::T>, c: usize) -> NnResult<()> {
    if let Some(t) = t {
        a::dtype_in(t, &[DType::F32, DType::F16, DType::BF16])?;
        if t.ndim() != 1 || t.shape()[0] != c {
            return Err(bad(format!(
                "{} has shape {:?}, expected [{c}] (the channels of input)",
                t.arg,
                t.shape()
            )));
        }
    }
    Ok(())
}

fn bn_input(x: &a::T) -> NnResult<usize> {
    a::dtype_in(x, FLOATS3)?;
    if !(2..=8).contains(&x.ndim()) {
        return Err(bad(format!(
            "input must have 2 to 8 dimensions (channels at dimension 1), but its shape is {:?}",
            x.shape()
        )));
    }
    Ok(x.shape()[1])
}

/// Views of the optional tensors added in order `has` (starting at view `first`).
fn pick<'v>(v: &'v [View], first: usize, has: &[bool]) -> Vec<Option<&'v View>> {
    let mut i = first;
    has.iter()
        .map(|&h| {
            h.then(|| {
                i += 1;
                &v[i - 1]
            })
        })
        .collect()
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormGetWorkspaceSize(
    input: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    runningMean: *mut c_void,
    runningVar: *mut c_void,
    training: bool,
    momentum: f64,
    eps: f64,
    output: *mut c_void,
    saveMean: *mut c_void,
    saveInvstd: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let w = a::opt_tensor(weight, "weight")?;
            let b = a::opt_tensor(bias, "bias")?;
            let (rm, rv) = if training {
                (
                    a::opt_tensor(runningMean, "runningMean")?,
                    a::opt_tensor(runningVar, "runningVar")?,
                )
            } else {
                (
                    Some(a::tensor(runningMean, "runningMean")?),
                    Some(a::tensor(runningVar, "runningVar")?),
                )
            };
            let o = a::tensor(output, "output")?;
            let sm = a::opt_tensor(saveMean, "saveMean")?;
            let si = a::opt_tensor(saveInvstd, "saveInvstd")?;
            let c = bn_input(&x)?;
            for t in [&w, &b, &rm, &rv, &sm, &si] {
                channel_vec(t, c)?;
            }
            a::dtype_in(&o, FLOATS3)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnBatchNorm");
            l.input(&x);
            let ins = [w.is_some(), b.is_some()];
            for t in [&w, &b].into_iter().flatten() {
                l.input(t);
            }
            // running statistics are read and (training) written: outputs
            let nin = 1 + ins.iter().filter(|&&h| h).count();
            let outs = [rm.is_some(), rv.is_some(), true, sm.is_some(), si.is_some()];
            for t in [&rm, &rv].into_iter().flatten() {
                l.output(t);
            }
            l.output(&o);
            for t in [&sm, &si].into_iter().flatten() {
                l.output(t);
            }
            l.finish(move |v, _| {
                let i = pick(v, 1, &ins);
                let r = pick(v, nin, &outs);
                batchnorm::batch_norm(
                    &v[0],
                    i[0],
                    i[1],
                    r[0],
                    r[1],
                    training,
                    momentum,
                    eps,
                    r[2].expect("output"),
                    r[3],
                    r[4],
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    input: *const c_void,
    weight: *const c_void,
    runningMean: *const c_void,
    runningVar: *const c_void,
    saveMean: *const c_void,
    saveInvstd: *const c_void,
    training: bool,
    eps: f64,
    outputMask: *const c_void,
    gradInput: *mut c_void,
    gradWeight: *mut c_void,
    gradBias: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(input, "input")?;
            let w = a::opt_tensor(weight, "weight")?;
            let rm = a::opt_tensor(runningMean, "runningMean")?;
            let rv = a::opt_tensor(runningVar, "runningVar")?;
            let (sm, si) = if training {
                (
                    Some(a::tensor(saveMean, "saveMean")?),
                    Some(a::tensor(saveInvstd, "saveInvstd")?),
                )
            } else {
                (
                    a::opt_tensor(saveMean, "saveMean")?,
                    a::opt_tensor(saveInvstd, "saveInvstd")?,
                )
            };
            if !training && (rm.is_none() || rv.is_none()) {
                return Err(NnError::nullptr(
                    "runningMean and runningVar are needed when training is false".to_string(),
                ));
            }
            let mask = a::bool_array(outputMask, "outputMask")?;
            if mask.len() != 3 {
                return Err(bad(format!(
                    "outputMask must have 3 values, it has {}",
                    mask.len()
                )));
            }
            let c = bn_input(&x)?;
            same_dtype(&g, x.dtype())?;
            a::same_shape(&g, x.shape())?;
            for t in [&w, &rm, &rv, &sm, &si] {
                channel_vec(t, c)?;
            }
            let gx = if mask[0] {
                Some(a::tensor(gradInput, "gradInput")?)
            } else {
                None
            };
            let gw = if mask[1] {
                Some(a::tensor(gradWeight, "gradWeight")?)
            } else {
                None
            };
            let gb = if mask[2] {
                Some(a::tensor(gradBias, "gradBias")?)
            } else {
                None
            };
            if let Some(t) = &gx {
                a::dtype_in(t, FLOATS3)?;
                a::same_shape(t, x.shape())?;
            }
            channel_vec(&gw, c)?;
            channel_vec(&gb, c)?;
            let mut l = Launch::new("aclnnBatchNormBackward");
            l.input(&g);
            l.input(&x);
            let ins = [
                w.is_some(),
                rm.is_some(),
                rv.is_some(),
                sm.is_some(),
                si.is_some(),
            ];
            for t in [&w, &rm, &rv, &sm, &si].into_iter().flatten() {
                l.input(t);
            }
            let nin = 2 + ins.iter().filter(|&&h| h).count();
            let outs = [gx.is_some(), gw.is_some(), gb.is_some()];
            for t in [&gx, &gw, &gb].into_iter().flatten() {
                l.output(t);
            }
            l.finish(move |v, _| {
                let i = pick(v, 2, &ins);
                let o = pick(v, nin, &outs);
                batchnorm::batch_norm_backward(
                    &v[0], &v[1], i[0], i[1], i[2], i[3], i[4], training, eps, o[0], o[1], o[2],
                )
            })
        },
    )
}

// ---- pooling ----

/// A 2-D pooling array: 1 value (both dimensions) or 2; `empty_is` for an empty array.
fn pair(
    h: *const c_void,
    arg: &'static str,
    min: i64,
    empty_is: Option<[usize; 2]>,
) -> NnResult<[usize; 2]> {
    let v = a::int_array(h, arg)?;
    let v = match (v.len(), empty_is) {
        (0, Some(d)) => return Ok(d),
        (1, _) => vec![v[0], v[0]],
        (2, _) => v,
        (n, _) => {
            return Err(bad(format!(
                "{arg} has {n} values; 1 or 2 are needed for 2-D pooling"
            )))
        }
    };
    if let Some(x) = v.iter().find(|&&x| x < min) {
        return Err(bad(format!("{arg} value {x} must be at least {min}")));
    }
    Ok([v[0] as usize, v[1] as usize])
}

fn pool_input(x: &a::T) -> NnResult<()> {
    a::dtype_in(x, FLOATS3)?;
    if x.ndim() != 3 && x.ndim() != 4 {
        return Err(bad(format!(
            "self must be 3-D (CHW) or 4-D (NCHW), but its shape is {:?}",
            x.shape()
        )));
    }
    Ok(())
}

/// Kernel/stride/padding/dilation checked against the input; the output shape.
fn pool_geo(
    x: &a::T,
    kernel: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: Option<*const c_void>,
    ceil: bool,
) -> NnResult<(pool::Pool2d, Vec<usize>)> {
    let k = pair(kernel, "kernelSize", 1, None)?;
    let s = pair(stride, "stride", 1, Some(k))?;
    let p = pair(padding, "padding", 0, None)?;
    let d = match dilation {
        Some(h) => pair(h, "dilation", 1, None)?,
        None => [1, 1],
    };
    for i in 0..2 {
        if p[i] * 2 > k[i] {
            return Err(bad(format!(
                "padding {p:?} must be at most half of kernelSize {k:?}"
            )));
        }
    }
    let nd = x.ndim();
    let mut shape = x.shape()[..nd - 2].to_vec();
    for i in 0..2 {
        let o = pool::pool_out_len(x.shape()[nd - 2 + i], k[i], s[i], p[i], d[i], ceil)
            .ok_or_else(|| {
                bad(format!(
                    "the pooling window (kernelSize {k:?}, dilation {d:?}, padding {p:?}) does \
                     not fit input {:?}",
                    x.shape()
                ))
            })?;
        shape.push(o);
    }
    Ok((
        pool::Pool2d {
            kernel: k,
            stride: s,
            pad: p,
            dil: d,
            ceil,
        },
        shape,
    ))
}

/// The mask shape of `aclnnMaxPool2dWithMask` for output `oshape`.
fn mask_shape(oshape: &[usize], p: &pool::Pool2d) -> Vec<usize> {
    let nd = oshape.len();
    let ohw = oshape[nd - 2] * oshape[nd - 1];
    let mut s = oshape[..nd - 2].to_vec();
    s.push(p.kernel[0] * p.kernel[1]);
    s.push((ohw.div_ceil(16) + 1) * 32);
    s
}

#[allow(clippy::too_many_arguments)]
fn max_pool(
    api: &'static str,
    with_mask: bool,
    self_: *const c_void,
    kernel: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: *const c_void,
    ceil: bool,
    out: *mut c_void,
    indices: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    let i = a::tensor(indices, "indices")?;
    pool_input(&x)?;
    let (p, oshape) = pool_geo(&x, kernel, stride, padding, Some(dilation), ceil)?;
    same_dtype(&o, x.dtype())?;
    a::same_shape(&o, &oshape)?;
    if with_mask {
        a::dtype_in(&i, &[DType::I8])?;
        a::same_shape(&i, &mask_shape(&oshape, &p))?;
    } else {
        a::dtype_in(&i, &[DType::I32, DType::I64])?;
        a::same_shape(&i, &oshape)?;
    }
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.output(&i);
    l.finish(move |v, _| pool::max_pool2d(&v[0], &p, &v[1], &v[2], with_mask))
}

#[allow(clippy::too_many_arguments)]
fn max_pool_backward(
    api: &'static str,
    with_mask: bool,
    grad_output: *const c_void,
    self_: *const c_void,
    indices: *const c_void,
    kernel: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: *const c_void,
    ceil: bool,
    grad_input: *mut c_void,
) -> NnResult<Built> {
    let g = a::tensor(grad_output, "gradOutput")?;
    let x = a::tensor(self_, "self")?;
    let i = a::tensor(indices, "indices")?;
    let gi = a::tensor(grad_input, "gradInput")?;
    pool_input(&x)?;
    let (p, oshape) = pool_geo(&x, kernel, stride, padding, Some(dilation), ceil)?;
    same_dtype(&g, x.dtype())?;
    a::same_shape(&g, &oshape)?;
    if with_mask {
        a::dtype_in(&i, &[DType::I8])?;
        a::same_shape(&i, &mask_shape(&oshape, &p))?;
    } else {
        a::dtype_in(&i, &[DType::I32, DType::I64])?;
        a::same_shape(&i, &oshape)?;
    }
    same_dtype(&gi, x.dtype())?;
    a::same_shape(&gi, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&i);
    l.output(&gi);
    l.finish(move |v, _| pool::max_pool2d_backward(&v[0], &v[1], &p, &v[2], with_mask))
}

macro_rules! max_pool_fwd {
    ($get:ident, $api:literal, $mask:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            kernelSize: *const c_void,
            stride: *const c_void,
            padding: *const c_void,
            dilation: *const c_void,
            ceilMode: bool,
            out: *mut c_void,
            indices: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                max_pool(
                    $api, $mask, self_, kernelSize, stride, padding, dilation, ceilMode, out,
                    indices,
                )
            })
        }
    };
}
max_pool_fwd!(
    aclnnMaxPool2dWithMaskGetWorkspaceSize,
    "aclnnMaxPool2dWithMask",
    true
);
max_pool_fwd!(
    aclnnMaxPool2dWithIndicesGetWorkspaceSize,
    "aclnnMaxPool2dWithIndices",
    false
);

macro_rules! max_pool_bwd {
    ($get:ident, $api:literal, $mask:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            gradOutput: *const c_void,
            self_: *const c_void,
            indices: *const c_void,
            kernelSize: *const c_void,
            stride: *const c_void,
            padding: *const c_void,
            dilation: *const c_void,
            ceilMode: bool,
            gradInput: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                max_pool_backward(
                    $api, $mask, gradOutput, self_, indices, kernelSize, stride, padding, dilation,
                    ceilMode, gradInput,
                )
            })
        }
    };
}
max_pool_bwd!(
    aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize,
    "aclnnMaxPool2dWithMaskBackward",
    true
);
max_pool_bwd!(
    aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize,
    "aclnnMaxPool2dWithIndicesBackward",
    false
);

/// `divisorOverride`: 0 is none; CANN takes any other value, a negative one too (it only
/// multiplies by `1 / divisorOverride`), as PyTorch does.
fn divisor(d: i64) -> NnResult<i64> {
    Ok(d)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAvgPool2dGetWorkspaceSize(
    self_: *const c_void,
    kernelSize: *const c_void,
    strides: *const c_void,
    paddings: *const c_void,
    ceilMode: bool,
    countIncludePad: bool,
    divisorOverride: i64,
    cubeMathType: i8,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAvgPool2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            pool_input(&x)?;
            cube(cubeMathType)?;
            let dv = divisor(divisorOverride)?;
            let (p, oshape) = pool_geo(&x, kernelSize, strides, paddings, None, ceilMode)?;
            same_dtype(&o, x.dtype())?;
            a::same_shape(&o, &oshape)?;
            let mut l = Launch::new("aclnnAvgPool2d");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| pool::avg_pool2d(&v[0], &p, countIncludePad, dv, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAvgPool2dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    kernelSize: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    ceilMode: bool,
    countIncludePad: bool,
    divisorOverride: i64,
    cubeMathType: i8,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAvgPool2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            pool_input(&x)?;
            cube(cubeMathType)?;
            let dv = divisor(divisorOverride)?;
            let (p, oshape) = pool_geo(&x, kernelSize, stride, padding, None, ceilMode)?;
            same_dtype(&g, x.dtype())?;
            a::same_shape(&g, &oshape)?;
            same_dtype(&gi, x.dtype())?;
            a::same_shape(&gi, x.shape())?;
            let mut l = Launch::new("aclnnAvgPool2dBackward");
            l.input(&g);
            l.output(&gi);
            l.finish(move |v, _| pool::avg_pool2d_backward(&v[0], &p, countIncludePad, dv, &v[1]))
        },
    )
}

fn adaptive_shape(x: &a::T, output_size: *const c_void) -> NnResult<Vec<usize>> {
    let os = a::int_array(output_size, "outputSize")?;
    if os.len() != 2 || os.iter().any(|&v| v <= 0) {
        return Err(bad(format!(
            "outputSize {os:?} must be two positive values"
        )));
    }
    let nd = x.ndim();
    if x.shape()[nd - 2] == 0 || x.shape()[nd - 1] == 0 {
        return Err(bad(format!(
            "self {:?} has an empty spatial dimension",
            x.shape()
        )));
    }
    let mut s = x.shape()[..nd - 2].to_vec();
    s.extend(os.iter().map(|&v| v as usize));
    Ok(s)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveAvgPool2dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveAvgPool2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            pool_input(&x)?;
            let os = adaptive_shape(&x, outputSize)?;
            same_dtype(&o, x.dtype())?;
            a::same_shape(&o, &os)?;
            let mut l = Launch::new("aclnnAdaptiveAvgPool2d");
            l.input(&x);
            l.output(&o);
            l.finish(|v, _| pool::adaptive_avg_pool2d(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            pool_input(&x)?;
            same_dtype(&g, x.dtype())?;
            if g.ndim() != x.ndim() || g.shape()[..x.ndim() - 2] != x.shape()[..x.ndim() - 2] {
                return Err(bad(format!(
                    "gradOutput shape {:?} does not match self {:?}",
                    g.shape(),
                    x.shape()
                )));
            }
            same_dtype(&o, x.dtype())?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnAdaptiveAvgPool2dBackward");
            l.input(&g);
            l.output(&o);
            l.finish(|v, _| pool::adaptive_avg_pool2d_backward(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveMaxPool2dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    outputOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveMaxPool2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(outputOut, "outputOut")?;
            let i = a::tensor(indicesOut, "indicesOut")?;
            pool_input(&x)?;
            let os = adaptive_shape(&x, outputSize)?;
            same_dtype(&o, x.dtype())?;
            a::same_shape(&o, &os)?;
            a::dtype_in(&i, &[DType::I32, DType::I64])?;
            a::same_shape(&i, &os)?;
            let mut l = Launch::new("aclnnAdaptiveMaxPool2d");
            l.input(&x);
            l.output(&o);
            l.output(&i);
            l.finish(|v, _| pool::adaptive_max_pool2d(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveMaxPool2dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    indices: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveMaxPool2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(indices, "indices")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            pool_input(&x)?;
            same_dtype(&g, x.dtype())?;
            a::dtype_in(&i, &[DType::I32, DType::I64])?;
            a::same_shape(&i, g.shape())?;
            if g.ndim() != x.ndim() || g.shape()[..x.ndim() - 2] != x.shape()[..x.ndim() - 2] {
                return Err(bad(format!(
                    "gradOutput shape {:?} does not match self {:?}",
                    g.shape(),
                    x.shape()
                )));
            }
            same_dtype(&gi, x.dtype())?;
            a::same_shape(&gi, x.shape())?;
            let mut l = Launch::new("aclnnAdaptiveMaxPool2dBackward");
            l.input(&g);
            l.input(&i);
            l.output(&gi);
            // flat indices: the max-pooling backward with any window parameters
            let p = pool::Pool2d {
                kernel: [1, 1],
                stride: [1, 1],
                pad: [0, 0],
                dil: [1, 1],
                ceil: false,
            };
            l.finish(move |v, _| pool::max_pool2d_backward(&v[0], &v[1], &p, &v[2], false))
        },
    )
}

crate::phase2!(
    aclnnConvolution,
    aclnnConvTbc,
    aclnnConvTbcBackward,
    aclnnConvDepthwise2d,
    aclnnConvolutionBackward,
    aclnnBatchNorm,
    aclnnBatchNormBackward,
    aclnnMaxPool2dWithMask,
    aclnnMaxPool2dWithIndices,
    aclnnMaxPool2dWithMaskBackward,
    aclnnMaxPool2dWithIndicesBackward,
    aclnnAvgPool2d,
    aclnnAvgPool2dBackward,
    aclnnAdaptiveAvgPool2d,
    aclnnAdaptiveAvgPool2dBackward,
    aclnnAdaptiveMaxPool2d,
    aclnnAdaptiveMaxPool2dBackward
);

// ---- Im2col (torch.nn.functional.unfold) ----

/// `out = unfold(self)`: `self` is `[N, C, H, W]` or `[C, H, W]` (FLOAT, FLOAT16,
/// BFLOAT16); `kernelSize`, `dilation`, `stride` (each > 0) and `padding` (>= 0) have two
/// values (H, W); `out` is `[N, C * kH * kW, L]` or `[C * kH * kW, L]` with self's data
/// type.
/// Im2col's data types: CANN's table less UINT64 and the complex types (the values are
/// moved exactly, floats through f64 and integers through i64).
const IM2COL: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::Bool,
];

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnIm2colGetWorkspaceSize(
    self_: *const c_void,
    kernelSize: *const c_void,
    dilation: *const c_void,
    padding: *const c_void,
    stride: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIm2colGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let k = spatial(kernelSize, "kernelSize", 2, 1)?;
            let d = spatial(dilation, "dilation", 2, 1)?;
            let p = spatial(padding, "padding", 2, 0)?;
            let s = spatial(stride, "stride", 2, 1)?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, IM2COL)?;
            same_dtype(&o, x.dtype())?;
            let nd = x.ndim();
            if nd != 3 && nd != 4 {
                return Err(bad(format!(
                    "self must be 3-D or 4-D, but its shape is {:?}",
                    x.shape()
                )));
            }
            let (c, h, w) = (x.shape()[nd - 3], x.shape()[nd - 2], x.shape()[nd - 1]);
            let mut l_total = 1;
            for (i, n) in [h, w].into_iter().enumerate() {
                match conv::out_len(n, k[i], s[i], p[i], d[i]) {
                    Some(v) if v > 0 => l_total *= v,
                    _ => {
                        return Err(bad(format!(
                            "the kernel {k:?} (dilation {d:?}, padding {p:?}) does not fit in the \
                         spatial size {:?} of self {:?}",
                            [h, w],
                            x.shape()
                        )))
                    }
                }
            }
            let mut want = x.shape()[..nd - 3].to_vec();
            want.extend([c * k[0] * k[1], l_total]);
            a::same_shape(&o, &want)?;
            let (k, d, p, s) = ([k[0], k[1]], [d[0], d[1]], [p[0], p[1]], [s[0], s[1]]);
            let mut l = Launch::new("aclnnIm2col");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| conv::unfold(&v[0], k, d, p, s, &v[1]))
        },
    )
}

/// Exactly two values (the reference refuses any other length for Im2colBackward), each at
/// least `min`.
fn exactly_two(h: *const c_void, arg: &'static str, min: i64) -> NnResult<[usize; 2]> {
    if a::int_array(h, arg)?.len() != 2 {
        return Err(bad(format!("{arg} must have 2 values")));
    }
    pair(h, arg, min, None)
}

/// `aclnn_im2col_backward.h`: col2im, the backward of Im2col (`F.unfold`) and torch's
/// `F.fold`: `gradOutput` `[N, C·kH·kW, L]` or `[C·kH·kW, L]` → `out` `[N, C, H, W]` or
/// `[C, H, W]` with `(H, W) = inputSize`, each column value added where Im2col read it.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnIm2colBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    inputSize: *const c_void,
    kernelSize: *const c_void,
    dilation: *const c_void,
    padding: *const c_void,
    stride: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIm2colBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let size = exactly_two(inputSize, "inputSize", 1)?;
            let k = exactly_two(kernelSize, "kernelSize", 1)?;
            let d = exactly_two(dilation, "dilation", 1)?;
            let p = exactly_two(padding, "padding", 0)?;
            let s = exactly_two(stride, "stride", 1)?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&g, FLOATS3)?;
            same_dtype(&o, g.dtype())?;
            let nd = g.ndim();
            if nd != 2 && nd != 3 {
                return Err(bad(format!(
                    "gradOutput must be 2-D or 3-D, but its shape is {:?}",
                    g.shape()
                )));
            }
            if o.ndim() != nd + 1 {
                return Err(bad(format!(
                    "out must have one dimension more than gradOutput ({nd}), but its shape is {:?}",
                    o.shape()
                )));
            }
            let mut l_total = 1;
            for i in 0..2 {
                match conv::out_len(size[i], k[i], s[i], p[i], d[i]) {
                    Some(v) if v > 0 => l_total *= v,
                    _ => {
                        return Err(bad(format!(
                            "the kernel {k:?} (dilation {d:?}, padding {p:?}) does not fit in inputSize {size:?}"
                        )))
                    }
                }
            }
            let rows = g.shape()[nd - 2];
            let kk = k[0] * k[1];
            if rows % kk != 0 || g.shape()[nd - 1] != l_total {
                return Err(bad(format!(
                    "gradOutput's shape {:?} must end in [C * {kk}, {l_total}] for kernelSize {k:?} and inputSize {size:?}",
                    g.shape()
                )));
            }
            let mut want = g.shape()[..nd - 2].to_vec();
            want.extend([rows / kk, size[0], size[1]]);
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnIm2colBackward");
            l.input(&g);
            l.output(&o);
            l.finish(move |v, _| npu_emu::ops::grads::fold(&v[0], size, k, d, p, s, &v[1]))
        },
    )
}

crate::phase2!(aclnnIm2col, aclnnIm2colBackward);
