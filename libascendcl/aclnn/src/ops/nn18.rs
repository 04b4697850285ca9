//! `aclnn_selu_backward.h`, `aclnn_shrink.h`, `aclnn_swish.h`, `aclnn_swish_backward.h`,
//! `aclnn_squared_relu.h`, `aclnn_softsign.h`, `aclnn_softsign_backward.h`,
//! `aclnn_gelu_mul.h`, `aclnn_fatrelu_mul.h`: activations of the operator reference. The
//! engine is `npu_emu::ops::nn18`.

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::nn18 as engine;
use npu_emu::ops::View;
use std::ffi::c_void;

/// Checks of a one-input activation: `x` of `dtypes`, `o` of its dtype and shape, at most 8
/// dimensions; then the launch of `kernel(x, out)`.
fn unary(
    api: &'static str,
    x: a::T,
    o: a::T,
    dtypes: &[DType],
    kernel: impl Fn(&View, &View) -> Result<(), String> + Send + Sync + 'static,
) -> NnResult<Built> {
    a::dtype_in(&x, dtypes)?;
    a::same_dtype(&o, &x)?;
    a::max_dims(&x, 8)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| kernel(&v[0], &v[1]))
}

/// Checks of a gradient: `g`, `x` and `o` of one dtype of `dtypes` and one shape.
fn binary(
    api: &'static str,
    g: a::T,
    x: a::T,
    o: a::T,
    dtypes: &[DType],
    kernel: impl Fn(&View, &View, &View) -> Result<(), String> + Send + Sync + 'static,
) -> NnResult<Built> {
    a::dtype_in(&g, dtypes)?;
    a::same_dtype(&x, &g)?;
    a::same_dtype(&o, &g)?;
    a::max_dims(&g, 8)?;
    a::same_shape(&x, g.shape())?;
    a::same_shape(&o, g.shape())?;
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| kernel(&v[0], &v[1], &v[2]))
}

/// An optional `beta` scalar (1.0 when NULL); it must convert to FLOAT.
fn beta(h: *const c_void) -> NnResult<f32> {
    match a::opt_scalar(h, "betaOptional")? {
        None => Ok(1.0),
        Some(s) => {
            a::dtype_of(s.dtype, "betaOptional", a::ALL_NUM)?;
            Ok(s.to_f64() as f32)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSeluBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    result: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSeluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let y = a::tensor(result, "result")?;
            let o = a::tensor(gradInput, "gradInput")?;
            let types = [DType::F32, DType::F16, DType::I32, DType::I8, DType::BF16];
            binary("aclnnSeluBackward", g, y, o, &types, engine::selu_backward)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnShrinkGetWorkspaceSize(
    self_: *const c_void,
    lambd: *const c_void,
    bias: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnShrinkGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let l = a::scalar(lambd, "lambd")?;
            let b = a::scalar(bias, "bias")?;
            let o = a::tensor(out, "out")?;
            a::dtype_of(l.dtype, "lambd", a::FLOATS)?;
            a::dtype_of(b.dtype, "bias", a::FLOATS)?;
            let (lv, bv) = (l.to_f64() as f32, b.to_f64() as f32);
            if lv.is_nan() || lv < 0.0 {
                return Err(NnError::invalid(format!(
                    "lambd must be non-negative, but it is {lv}"
                )));
            }
            unary(
                "aclnnShrink",
                x,
                o,
                &[DType::F32, DType::F16],
                move |x, o| engine::shrink(x, lv, bv, o),
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSwishGetWorkspaceSize(
    self_: *const c_void,
    betaOptional: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSwishGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            let b = beta(betaOptional)?;
            unary("aclnnSwish", x, o, FLOATS3, move |x, o| {
                engine::swish(x, b, o)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSwishBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    betaOptional: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSwishBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(gradInput, "gradInput")?;
            let b = beta(betaOptional)?;
            binary("aclnnSwishBackward", g, x, o, FLOATS3, move |g, x, o| {
                engine::swish_backward(g, x, b, o)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSquaredReluGetWorkspaceSize(
    input: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSquaredReluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let o = a::tensor(out, "out")?;
            if x.ndim() == 0 {
                return Err(NnError::invalid(
                    "input must have 1 to 8 dimensions, but it is 0-d",
                ));
            }
            unary("aclnnSquaredRelu", x, o, FLOATS3, engine::squared_relu)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftsignGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftsignGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            unary("aclnnSoftsign", x, o, FLOATS3, engine::softsign)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftsignBackwardGetWorkspaceSize(
    gradients: *const c_void,
    features: *const c_void,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftsignBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradients, "gradients")?;
            let x = a::tensor(features, "features")?;
            let o = a::tensor(output, "output")?;
            binary(
                "aclnnSoftsignBackward",
                g,
                x,
                o,
                FLOATS3,
                engine::softsign_backward,
            )
        },
    )
}

/// Checks of the split-and-multiply fusions: `x` of 2-8 dimensions with an even last
/// dimension; `o` of x's dtype and shape with the last dimension halved.
fn split_mul_checks(x: &a::T, o: &a::T) -> NnResult<()> {
    a::dtype_in(x, FLOATS3)?;
    a::same_dtype(o, x)?;
    if !(2..=8).contains(&x.ndim()) {
        return Err(NnError::invalid(format!(
            "input must have 2 to 8 dimensions, but its shape is {:?}",
            x.shape()
        )));
    }
    let last = x.shape()[x.ndim() - 1];
    if !last.is_multiple_of(2) {
        return Err(NnError::invalid(format!(
            "the last dimension of input must be even, but input's shape is {:?}",
            x.shape()
        )));
    }
    let mut shape = x.shape().to_vec();
    *shape.last_mut().unwrap() = last / 2;
    a::same_shape(o, &shape)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGeluMulGetWorkspaceSize(
    input: *const c_void,
    approximateOptional: *const std::ffi::c_char,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeluMulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let o = a::tensor(out, "out")?;
            let tanh = if approximateOptional.is_null() {
                false
            } else {
                // SAFETY: a non-NULL C string from the caller.
                let s = unsafe { std::ffi::CStr::from_ptr(approximateOptional) }.to_string_lossy();
                match s.as_ref() {
                    "none" => false,
                    "tanh" => true,
                    v => {
                        return Err(NnError::invalid(format!(
                            "approximateOptional must be \"none\" or \"tanh\", but it is \"{v}\""
                        )))
                    }
                }
            };
            split_mul_checks(&x, &o)?;
            let mut l = Launch::new("aclnnGeluMul");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::gelu_mul(&v[0], tanh, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFatreluMulGetWorkspaceSize(
    input: *const c_void,
    threshold: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFatreluMulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let t = a::tensor(threshold, "threshold")?;
            let o = a::tensor(out, "out")?;
            split_mul_checks(&x, &o)?;
            a::same_dtype(&t, &x)?;
            if t.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "threshold must hold exactly one element, but its shape is {:?}",
                    t.shape()
                )));
            }
            let mut l = Launch::new("aclnnFatreluMul");
            l.input(&x);
            l.input(&t);
            l.output(&o);
            l.finish(move |v, _| engine::fatrelu_mul(&v[0], &v[1], &v[2]))
        },
    )
}

crate::phase2!(
    aclnnSeluBackward,
    aclnnShrink,
    aclnnSwish,
    aclnnSwishBackward,
    aclnnSquaredRelu,
    aclnnSoftsign,
    aclnnSoftsignBackward,
    aclnnGeluMul,
    aclnnFatreluMul
);

// ---------------------------------------------------------------- softmax losses

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(
    features: *const c_void,
    labels: *mut c_void,
    loss: *mut c_void,
    backprop: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(features, "features")?;
            let y = a::tensor(labels, "labels")?;
            let l = a::tensor(loss, "loss")?;
            let b = a::tensor(backprop, "backprop")?;
            a::dtype_in(&x, FLOATS3)?;
            for t in [&y, &l, &b] {
                a::same_dtype(t, &x)?;
            }
            if x.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "features must be 2-D [N, C], but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&y, x.shape())?;
            a::same_shape(&b, x.shape())?;
            a::same_shape(&l, &x.shape()[..1])?;
            let mut lc = Launch::new("aclnnSoftmaxCrossEntropyWithLogits");
            lc.input(&x);
            lc.input(&y);
            lc.output(&l);
            lc.output(&b);
            lc.finish(move |v, _| {
                engine::softmax_cross_entropy_with_logits(&v[0], &v[1], &v[2], &v[3])
            })
        },
    )
}

/// The checks of the scaled masked softmax pair: `x`-like tensors 4-D of FLOAT, FLOAT16,
/// BFLOAT16 with a last dimension in (0, 4096]; `mask` BOOL broadcasting to them.
fn smx_checks(x: &a::T, mask: &a::T, fix_triu: bool) -> NnResult<()> {
    a::dtype_in(x, FLOATS3)?;
    a::dtype_in(mask, &[DType::Bool])?;
    if fix_triu {
        return Err(NnError::invalid("fixTriuMask must be false"));
    }
    for t in [x, mask] {
        if t.ndim() != 4 {
            return Err(NnError::invalid(format!(
                "{} must be 4-D, but its shape is {:?}",
                t.arg,
                t.shape()
            )));
        }
    }
    let s2 = x.shape()[3];
    if s2 == 0 || s2 > 4096 {
        return Err(NnError::invalid(format!(
            "the last dimension of {} must lie in (0, 4096], but it is {s2}",
            x.arg
        )));
    }
    if a::broadcast(x, mask)? != x.shape() {
        return Err(NnError::invalid(format!(
            "mask {:?} must broadcast to {} {:?}",
            mask.shape(),
            x.arg,
            x.shape()
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnScaledMaskedSoftmaxGetWorkspaceSize(
    x: *const c_void,
    mask: *const c_void,
    scale: f64,
    fixTriuMask: bool,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScaledMaskedSoftmaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let yt = a::tensor(y, "y")?;
            let mt = a::tensor(mask, "mask")?;
            smx_checks(&xt, &mt, fixTriuMask)?;
            a::same_dtype(&yt, &xt)?;
            a::same_shape(&yt, xt.shape())?;
            let mut l = Launch::new("aclnnScaledMaskedSoftmax");
            l.input(&xt);
            l.input(&mt);
            l.output(&yt);
            l.finish(move |v, _| engine::scaled_masked_softmax(&v[0], &v[1], scale, &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    y: *const c_void,
    mask: *const c_void,
    scale: f64,
    fixTriuMask: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let yt = a::tensor(y, "y")?;
            let mt = a::tensor(mask, "mask")?;
            let o = a::tensor(out, "out")?;
            smx_checks(&g, &mt, fixTriuMask)?;
            for t in [&yt, &o] {
                a::same_dtype(t, &g)?;
                a::same_shape(t, g.shape())?;
            }
            let mut l = Launch::new("aclnnScaledMaskedSoftmaxBackward");
            l.input(&g);
            l.input(&yt);
            l.input(&mt);
            l.output(&o);
            l.finish(move |v, _| {
                engine::scaled_masked_softmax_backward(&v[0], &v[1], &v[2], scale, &v[3])
            })
        },
    )
}

// ---------------------------------------------------------------- batch and group norm

/// A 1-D tensor of `c` elements.
fn channels(t: &a::T, c: usize) -> NnResult<()> {
    if t.ndim() != 1 || t.shape()[0] != c {
        return Err(NnError::invalid(format!(
            "{} must be 1-D with {c} elements, but its shape is {:?}",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormReduceGetWorkspaceSize(
    x: *const c_void,
    sum: *mut c_void,
    squareSum: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormReduceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let s = a::tensor(sum, "sum")?;
            let q = a::tensor(squareSum, "squareSum")?;
            a::dtype_in(&xt, FLOATS3)?;
            a::dtype_in(&s, &[DType::F32])?;
            a::dtype_in(&q, &[DType::F32])?;
            if xt.ndim() != 4 {
                return Err(NnError::invalid(format!(
                    "x must be 4-D (NCHW), but its shape is {:?}",
                    xt.shape()
                )));
            }
            let c = xt.shape()[1];
            channels(&s, c)?;
            channels(&q, c)?;
            let mut l = Launch::new("aclnnBatchNormReduce");
            l.input(&xt);
            l.output(&s);
            l.output(&q);
            l.finish(move |v, _| engine::batch_norm_reduce(&v[0], &v[1], &v[2]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnSyncBatchNormGatherStatsGetWorkspaceSize(
    totalSum: *const c_void,
    totalSquareSum: *const c_void,
    sampleCount: *const c_void,
    mean: *mut c_void,
    variance: *mut c_void,
    momentum: f32,
    eps: f32,
    batchMean: *mut c_void,
    batchInvstd: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSyncBatchNormGatherStatsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(totalSum, "totalSum")?;
            let q = a::tensor(totalSquareSum, "totalSquareSum")?;
            let n = a::tensor(sampleCount, "sampleCount")?;
            let m = a::tensor(mean, "mean")?;
            let v = a::tensor(variance, "variance")?;
            let bm = a::tensor(batchMean, "batchMean")?;
            let bi = a::tensor(batchInvstd, "batchInvstd")?;
            a::dtype_in(&s, FLOATS3)?;
            a::dtype_in(&n, &[DType::F32, DType::F16, DType::BF16, DType::I32])?;
            for t in [&q, &m, &v, &bm, &bi] {
                a::same_dtype(t, &s)?;
            }
            if s.ndim() != 2 || s.shape()[0] == 0 {
                return Err(NnError::invalid(format!(
                    "totalSum must be 2-D [devices, C] with at least one device, but its shape \
                     is {:?}",
                    s.shape()
                )));
            }
            a::same_shape(&q, s.shape())?;
            a::same_shape(&n, &s.shape()[..1])?;
            let c = s.shape()[1];
            for t in [&bm, &bi] {
                channels(t, c)?;
            }
            for t in [&m, &v] {
                if t.numel() != 0 {
                    channels(t, c)?;
                }
            }
            let mut l = Launch::new("aclnnSyncBatchNormGatherStats");
            l.input(&s);
            l.input(&q);
            l.input(&n);
            l.output(&m);
            l.output(&v);
            l.output(&bm);
            l.output(&bi);
            let (mo, ep) = (momentum as f64, eps as f64);
            l.finish(move |v, _| {
                engine::sync_batch_norm_gather_stats(
                    &v[0], &v[1], &v[2], &v[3], &v[4], mo, ep, &v[5], &v[6],
                )
            })
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnFastBatchNormBackwardGetWorkspaceSize(
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
    version: i32,
    gradInput: *mut c_void,
    gradWeight: *mut c_void,
    gradBias: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    if version != 0 && version != 1 {
        return phase1(
            "aclnnFastBatchNormBackwardGetWorkspaceSize",
            workspaceSize,
            executor,
            || {
                Err(NnError::invalid(format!(
                    "version must be 0 or 1, but it is {version}"
                )))
            },
        );
    }
    // The same computation as aclnnBatchNormBackward (its checks and kernel).
    super::cnn::aclnnBatchNormBackwardGetWorkspaceSize(
        gradOut,
        input,
        weight,
        runningMean,
        runningVar,
        saveMean,
        saveInvstd,
        training,
        eps,
        outputMask,
        gradInput,
        gradWeight,
        gradBias,
        workspaceSize,
        executor,
    )
}

/// `dataFormatOptional`: NULL or one of the plain layouts with channels second.
fn data_format(h: *const std::ffi::c_char) -> NnResult<()> {
    if h.is_null() {
        return Ok(());
    }
    // SAFETY: a non-NULL C string from the caller.
    let s = unsafe { std::ffi::CStr::from_ptr(h) }.to_string_lossy();
    match s.as_ref() {
        "NCHW" | "ND" | "NCL" | "NCDHW" | "NC" | "" => Ok(()),
        v => Err(NnError::invalid(format!(
            "dataFormatOptional \"{v}\" is not supported; the channels are dimension 1 \
             (NCHW, ND)"
        ))),
    }
}

/// `x` of 2-8 dimensions with positive N and C, C divisible by `groups` (> 0).
fn group_checks(x: &a::T, groups: i64) -> NnResult<usize> {
    if !(2..=8).contains(&x.ndim()) {
        return Err(NnError::invalid(format!(
            "{} must have 2 to 8 dimensions, but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    let (n, c) = (x.shape()[0], x.shape()[1]);
    if n == 0 || c == 0 || x.numel() == 0 {
        return Err(NnError::invalid(format!(
            "{} must not be empty, but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    if groups <= 0 || c as i64 % groups != 0 {
        return Err(NnError::invalid(format!(
            "numGroups {groups} must be positive and divide the {c} channels of {}",
            x.arg
        )));
    }
    Ok(c)
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnGroupNormSwishGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    numGroups: i64,
    dataFormatOptional: *const std::ffi::c_char,
    eps: f64,
    activateSwish: bool,
    swishScale: f64,
    yOut: *const c_void,
    meanOut: *const c_void,
    rstdOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupNormSwishGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let b = a::tensor(beta, "beta")?;
            let y = a::tensor(yOut, "yOut")?;
            let m = a::tensor(meanOut, "meanOut")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            data_format(dataFormatOptional)?;
            a::dtype_in(&xt, FLOATS3)?;
            a::dtype_in(&g, FLOATS3)?;
            if g.dtype() != xt.dtype() && g.dtype() != DType::F32 {
                return Err(NnError::invalid(format!(
                    "gamma data type {} must be x's {} or FLOAT",
                    g.dtype(),
                    xt.dtype()
                )));
            }
            a::same_dtype(&b, &g)?;
            a::same_dtype(&y, &xt)?;
            a::same_dtype(&m, &g)?;
            a::same_dtype(&r, &g)?;
            let c = group_checks(&xt, numGroups)?;
            for t in [&g, &b] {
                if t.numel() != c {
                    return Err(NnError::invalid(format!(
                        "{} must hold the {c} channels of x, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            a::same_shape(&y, xt.shape())?;
            let ng = numGroups as usize;
            a::same_shape(&m, &[xt.shape()[0], ng])?;
            a::same_shape(&r, &[xt.shape()[0], ng])?;
            let mut l = Launch::new("aclnnGroupNormSwish");
            l.input(&xt);
            l.input(&g);
            l.input(&b);
            l.output(&y);
            l.output(&m);
            l.output(&r);
            l.finish(move |v, _| {
                engine::group_norm_swish(
                    &v[0],
                    &v[1],
                    &v[2],
                    ng,
                    eps,
                    activateSwish,
                    swishScale,
                    &v[3],
                    &v[4],
                    &v[5],
                )
            })
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnGroupNormSwishGradGetWorkspaceSize(
    dy: *const c_void,
    mean: *const c_void,
    rstd: *const c_void,
    x: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    numGroups: i64,
    dataFormatOptional: *const std::ffi::c_char,
    swishScale: f64,
    dgammaIsRequire: bool,
    dbetaIsRequire: bool,
    dxOut: *const c_void,
    dgammaOut: *const c_void,
    dbetaOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupNormSwishGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let d = a::tensor(dy, "dy")?;
            let m = a::tensor(mean, "mean")?;
            let r = a::tensor(rstd, "rstd")?;
            let xt = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let b = a::tensor(beta, "beta")?;
            let dx = a::tensor(dxOut, "dxOut")?;
            let dg = a::tensor(dgammaOut, "dgammaOut")?;
            let db = a::tensor(dbetaOut, "dbetaOut")?;
            data_format(dataFormatOptional)?;
            a::dtype_in(&d, FLOATS3)?;
            for t in [&m, &r, &xt, &g, &b, &dx, &dg, &db] {
                a::same_dtype(t, &d)?;
            }
            let c = group_checks(&d, numGroups)?;
            a::same_shape(&xt, d.shape())?;
            a::same_shape(&dx, d.shape())?;
            let ng = numGroups as usize;
            a::same_shape(&m, &[d.shape()[0], ng])?;
            a::same_shape(&r, &[d.shape()[0], ng])?;
            for t in [&g, &b, &dg, &db] {
                if t.numel() != c {
                    return Err(NnError::invalid(format!(
                        "{} must hold the {c} channels of dy, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnGroupNormSwishGrad");
            for t in [&d, &m, &r, &xt, &g, &b] {
                l.input(t);
            }
            l.output(&dx);
            l.output(&dg);
            l.output(&db);
            l.finish(move |v, _| {
                engine::group_norm_swish_grad(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    &v[4],
                    &v[5],
                    ng,
                    swishScale,
                    &v[6],
                    dgammaIsRequire.then_some(&v[7]),
                    dbetaIsRequire.then_some(&v[8]),
                )
            })
        },
    )
}

// ---------------------------------------------------------------- chamfer distance

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnChamferDistanceBackwardGetWorkspaceSize(
    xyz1: *const c_void,
    xyz2: *const c_void,
    idx1: *const c_void,
    idx2: *const c_void,
    gradDist1: *const c_void,
    gradDist2: *const c_void,
    gradXyz1: *mut c_void,
    gradXyz2: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnChamferDistanceBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let p1 = a::tensor(xyz1, "xyz1")?;
            let p2 = a::tensor(xyz2, "xyz2")?;
            let i1 = a::tensor(idx1, "idx1")?;
            let i2 = a::tensor(idx2, "idx2")?;
            let g1 = a::tensor(gradDist1, "gradDist1")?;
            let g2 = a::tensor(gradDist2, "gradDist2")?;
            let o1 = a::tensor(gradXyz1, "gradXyz1")?;
            let o2 = a::tensor(gradXyz2, "gradXyz2")?;
            let fl = [DType::F32, DType::F16];
            for t in [&p1, &p2, &g1, &g2, &o1, &o2] {
                a::dtype_in(t, &fl)?;
            }
            a::same_dtype(&p2, &p1)?;
            a::dtype_in(&i1, &[DType::I32])?;
            a::dtype_in(&i2, &[DType::I32])?;
            for t in [&p1, &p2] {
                if t.ndim() != 3 || t.shape()[2] != 2 {
                    return Err(NnError::invalid(format!(
                        "{} must be [B, points, 2], but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let (b, n, m) = (p1.shape()[0], p1.shape()[1], p2.shape()[1]);
            if p2.shape()[0] != b {
                return Err(NnError::invalid(format!(
                    "xyz1 {:?} and xyz2 {:?} must have the same batch",
                    p1.shape(),
                    p2.shape()
                )));
            }
            a::same_shape(&i1, &[b, n])?;
            a::same_shape(&g1, &[b, n])?;
            a::same_shape(&i2, &[b, m])?;
            a::same_shape(&g2, &[b, m])?;
            a::same_shape(&o1, p1.shape())?;
            a::same_shape(&o2, p2.shape())?;
            let mut l = Launch::new("aclnnChamferDistanceBackward");
            for t in [&p1, &p2, &i1, &i2, &g1, &g2] {
                l.input(t);
            }
            l.output(&o1);
            l.output(&o2);
            l.finish(move |v, _| {
                engine::chamfer_distance_backward(
                    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
                )
            })
        },
    )
}

// ---------------------------------------------------------------- foreach rounding

/// Both ForeachRoundOffNumber forms: `x` and `out` lists of one dtype (FLOAT, FLOAT16,
/// BFLOAT16, INT16), position by position of one shape; `mode` read from the scalar (V2) or
/// the one-element INT8 tensor (V1, read when the task runs).
fn round_off(
    api: &'static str,
    x: Vec<a::T>,
    out: Vec<a::T>,
    mode: Result<i64, a::T>,
) -> NnResult<Built> {
    let types = [DType::F32, DType::F16, DType::BF16, DType::I16];
    if x.len() != out.len() {
        return Err(NnError::invalid(format!(
            "out has {} tensors, x has {}",
            out.len(),
            x.len()
        )));
    }
    for (i, (t, o)) in x.iter().zip(&out).enumerate() {
        a::dtype_in(t, &types)?;
        a::same_dtype(t, &x[0])?;
        a::same_dtype(o, t)?;
        a::max_dims(t, 8)?;
        if o.shape() != t.shape() {
            return Err(NnError::invalid(format!(
                "out[{i}] has shape {:?}, x[{i}] {:?}",
                o.shape(),
                t.shape()
            )));
        }
    }
    let n = x.len();
    let mut l = Launch::new(api);
    l.inputs(&x);
    let mode_slot = match &mode {
        Err(t) => {
            a::dtype_in(t, &[DType::I8])?;
            if t.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "roundMode must hold one element, but its shape is {:?}",
                    t.shape()
                )));
            }
            Some(l.input(t))
        }
        Ok(_) => None,
    };
    let first = l.outputs(&out);
    let fixed = mode.as_ref().ok().copied();
    l.finish(move |v, _| {
        let m = match (fixed, mode_slot) {
            (Some(m), _) => m,
            // SAFETY: a one-element view the executor checked.
            (None, Some(k)) => unsafe { npu_emu::ops::elem::read_i64(v[k].dtype, v[k].ptr) },
            _ => 0,
        };
        for i in 0..n {
            engine::round_off_number(&v[i], m, &v[first + i])?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachRoundOffNumberGetWorkspaceSize(
    x: *const c_void,
    roundMode: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachRoundOffNumberGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(x, "x")?;
            let m = a::tensor(roundMode, "roundMode")?;
            let os = a::tensor_list(out, "out")?;
            round_off("aclnnForeachRoundOffNumber", xs, os, Err(m))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachRoundOffNumberV2GetWorkspaceSize(
    x: *const c_void,
    roundMode: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachRoundOffNumberV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(x, "x")?;
            let m = a::scalar(roundMode, "roundMode")?;
            let os = a::tensor_list(out, "out")?;
            a::dtype_of(m.dtype, "roundMode", &[DType::I8, DType::I64])?;
            round_off(
                "aclnnForeachRoundOffNumberV2",
                xs,
                os,
                Ok(m.to_f64() as i64),
            )
        },
    )
}

// ---------------------------------------------------------------- matrix products

fn cube_math(t: i8, max: i8) -> NnResult<()> {
    if (0..=max).contains(&t) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "cubeMathType {t} is not supported; 0 to {max}"
        )))
    }
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnGemmGetWorkspaceSize(
    A: *const c_void,
    B: *const c_void,
    C: *const c_void,
    alpha: f32,
    beta: f32,
    transA: i64,
    transB: i64,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnGemmGetWorkspaceSize", workspaceSize, executor, || {
        let at = a::tensor(A, "A")?;
        let bt = a::tensor(B, "B")?;
        let ct = a::tensor(C, "C")?;
        let o = a::tensor(out, "out")?;
        for t in [&at, &bt, &ct, &o] {
            a::dtype_in(t, FLOATS3)?;
            if t.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "{} must be 2-D, but its shape is {:?}",
                    t.arg,
                    t.shape()
                )));
            }
        }
        let p = a::promote(at.dtype(), "A", bt.dtype(), "B")?;
        let p = a::promote(p, "A@B", ct.dtype(), "C")?;
        a::castable(p, &o)?;
        cube_math(cubeMathType, 4)?;
        let (ta, tb) = (transA != 0, transB != 0);
        let (m, k) = if ta {
            (at.shape()[1], at.shape()[0])
        } else {
            (at.shape()[0], at.shape()[1])
        };
        let (k2, n) = if tb {
            (bt.shape()[1], bt.shape()[0])
        } else {
            (bt.shape()[0], bt.shape()[1])
        };
        if k != k2 {
            return Err(NnError::invalid(format!(
                "A {:?} (transA {transA}) and B {:?} (transB {transB}) do not multiply: \
                 inner sizes {k} and {k2}",
                at.shape(),
                bt.shape()
            )));
        }
        let shape = vec![m, n];
        if npu_emu::ops::view::broadcast_shapes(ct.shape(), &shape).as_deref() != Some(&shape[..]) {
            return Err(NnError::invalid(format!(
                "C {:?} does not broadcast to the product's shape {shape:?}",
                ct.shape()
            )));
        }
        a::same_shape(&o, &shape)?;
        let mut l = Launch::new("aclnnGemm");
        l.input(&at);
        l.input(&bt);
        l.input(&ct);
        l.output(&o);
        let (al, be) = (alpha as f64, beta as f64);
        l.finish(move |v, _| engine::gemm(&v[0], &v[1], &v[2], al, be, ta, tb, &v[3]))
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnTransposeBatchMatMulGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    scale: *const c_void,
    permX1: *const c_void,
    permX2: *const c_void,
    permY: *const c_void,
    cubeMathType: i8,
    batchSplitFactor: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTransposeBatchMatMulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let o = a::tensor(out, "out")?;
            if !bias.is_null() {
                return Err(NnError::invalid("bias is reserved and must be nullptr"));
            }
            if !scale.is_null() {
                return Err(NnError::invalid(
                    "scale (the INT8 quantised output) is not supported by this emulator",
                ));
            }
            let p1 = a::int_array(permX1, "permX1")?;
            let p2 = a::int_array(permX2, "permX2")?;
            let py = a::int_array(permY, "permY")?;
            for t in [&a1, &a2, &o] {
                a::dtype_in(t, FLOATS3)?;
                if t.ndim() != 3 {
                    return Err(NnError::invalid(format!(
                        "{} must be 3-D, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let mixed_bf16 = |x: DType, y: DType| (x == DType::BF16) != (y == DType::BF16);
            if mixed_bf16(a1.dtype(), a2.dtype()) {
                return Err(NnError::invalid(format!(
                    "x1 data type {} and x2 data type {} cannot be mixed",
                    a1.dtype(),
                    a2.dtype()
                )));
            }
            let p = a::promote(a1.dtype(), "x1", a2.dtype(), "x2")?;
            a::dtype_of(o.dtype(), "out", &[p])?;
            cube_math(cubeMathType, 3)?;
            if p1 != [0, 1, 2] && p1 != [1, 0, 2] {
                return Err(NnError::invalid(format!(
                    "permX1 {p1:?} must be [0, 1, 2] or [1, 0, 2]"
                )));
            }
            if p2 != [0, 1, 2] && p2 != [0, 2, 1] {
                return Err(NnError::invalid(format!(
                    "permX2 {p2:?} must be [0, 1, 2] or [0, 2, 1]"
                )));
            }
            if py != [1, 0, 2] {
                return Err(NnError::invalid(format!("permY {py:?} must be [1, 0, 2]")));
            }
            let perm = |p: &[i64]| -> Vec<usize> { p.iter().map(|&v| v as usize).collect() };
            let (q1, q2) = (perm(&p1), perm(&p2));
            let s1: Vec<usize> = q1.iter().map(|&d| a1.shape()[d]).collect();
            let s2: Vec<usize> = q2.iter().map(|&d| a2.shape()[d]).collect();
            let (b, m, k, n) = (s1[0], s1[1], s1[2], s2[2]);
            if s2[0] != b || s2[1] != k {
                return Err(NnError::invalid(format!(
                    "x1 {:?} (permX1 {p1:?}) and x2 {:?} (permX2 {p2:?}) do not multiply \
                     batch by batch",
                    a1.shape(),
                    a2.shape()
                )));
            }
            let f = batchSplitFactor;
            if f < 1 || f as usize > b.max(1) || b % f as usize != 0 {
                return Err(NnError::invalid(format!(
                    "batchSplitFactor {f} must lie in [1, {b}] and divide the batch {b}"
                )));
            }
            let f = f as usize;
            let shape = if f == 1 {
                vec![m, b, n]
            } else {
                vec![f, m, b * n / f]
            };
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnTransposeBatchMatMul");
            l.input(&a1);
            l.input(&a2);
            l.output(&o);
            l.finish(move |v, _| engine::transpose_batch_matmul(&v[0], &v[1], &q1, &q2, f, &v[2]))
        },
    )
}

crate::phase2!(
    aclnnSoftmaxCrossEntropyWithLogits,
    aclnnScaledMaskedSoftmax,
    aclnnScaledMaskedSoftmaxBackward,
    aclnnBatchNormReduce,
    aclnnSyncBatchNormGatherStats,
    aclnnGroupNormSwish,
    aclnnGroupNormSwishGrad,
    aclnnChamferDistanceBackward,
    aclnnForeachRoundOffNumber,
    aclnnForeachRoundOffNumberV2,
    aclnnGemm,
    aclnnTransposeBatchMatMul,
    aclnnFastBatchNormBackward
);
