//! 3-D pooling: `aclnn_avgpool3d.h`, `aclnn_avgpool3d_backward.h`,
//! `aclnn_adaptive_avg_pool3d.h`, `aclnn_adaptive_avg_pool3d_backward.h`,
//! `aclnn_max_pool3d_with_argmax.h`, `aclnn_max_pool3d_with_argmax_backward.h`,
//! `aclnn_adaptive_max_pool3d.h`, `aclnn_adaptive_max_pool3d_backward.h`.
//!
//! `self` is `[N, C, D, H, W]` or `[C, D, H, W]` (FLOAT, FLOAT16, BFLOAT16, any strides);
//! outputs have self's data type; indices are INT32 or INT64 flat positions
//! `(d * H + h) * W + w` inside each `[D, H, W]` plane, as PyTorch's. Window arrays follow
//! the reference: `kernelSize` 1 or 3 values (> 0), `stride` 0 (= kernelSize), 1 or 3 values
//! (> 0), `padding` 1 or 3 values (>= 0, at most half the kernel), `dilation` 1 or 3 values
//! (> 0). The engine is `npu_emu::ops::pool3d`.
//!
//! Also the padding of the trailing dimensions: `aclnn_reflection_pad3d[_backward].h`,
//! `aclnn_replication_pad3d[_backward].h`, `aclnn_circular_pad2d[_backward].h`,
//! `aclnn_circular_pad3d[_backward].h`. `padding` holds (before, after) pairs from the last
//! dimension (left, right, top, bottom, front, back), each in `[0, size)` for reflection and
//! circular padding and `>= 0` for replication; `self` has `k + 1` or `k + 2` dimensions for
//! a `k`-D padding. Reflection and replication are `npu_emu::ops::extra::pad`, circular
//! padding `pool3d::circular_pad`; all compute through float64 (INT64 values beyond 2^53 lose
//! precision, as in the 1-D/2-D padding operators).

use super::args::{self as a, FLOATS3, INDEX};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::extra::{self, PadMode};
use npu_emu::ops::pool::pool_out_len;
use npu_emu::ops::pool3d::{self, Pool3d};
use std::ffi::c_void;

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

/// A window array of 1 or 3 values (`empty_is` for an empty array), each at least `min`.
fn triple(
    h: *const c_void,
    arg: &'static str,
    min: i64,
    empty_is: Option<[usize; 3]>,
) -> NnResult<[usize; 3]> {
    let v = a::int_array(h, arg)?;
    let v = match (v.len(), empty_is) {
        (0, Some(d)) => return Ok(d),
        (1, _) => vec![v[0]; 3],
        (3, _) => v,
        (n, _) => {
            return Err(bad(format!(
                "{arg} has {n} values; {} are needed for 3-D pooling",
                if empty_is.is_some() {
                    "0, 1 or 3"
                } else {
                    "1 or 3"
                }
            )))
        }
    };
    if let Some(x) = v.iter().find(|&&x| x < min) {
        return Err(bad(format!("{arg} value {x} must be at least {min}")));
    }
    Ok([v[0] as usize, v[1] as usize, v[2] as usize])
}

/// `self`: FLOAT, FLOAT16 or BFLOAT16, 4-D or 5-D.
fn input(x: &a::T) -> NnResult<()> {
    a::dtype_in(x, FLOATS3)?;
    if x.ndim() != 4 && x.ndim() != 5 {
        return Err(bad(format!(
            "{} must be 4-D (CDHW) or 5-D (NCDHW), but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    Ok(())
}

fn same_dtype(t: &a::T, x: &a::T) -> NnResult<()> {
    if t.dtype() == x.dtype() {
        Ok(())
    } else {
        Err(bad(format!(
            "{} data type {} must be the same as {}'s {}",
            t.arg,
            t.dtype(),
            x.arg,
            x.dtype()
        )))
    }
}

/// The window parameters checked against `x`, and the output shape.
fn geometry(
    x: &a::T,
    kernel: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    dilation: Option<*const c_void>,
    ceil: bool,
) -> NnResult<(Pool3d, Vec<usize>)> {
    let k = triple(kernel, "kernelSize", 1, None)?;
    let s = triple(stride, "stride", 1, Some(k))?;
    let p = triple(padding, "padding", 0, None)?;
    let d = match dilation {
        Some(h) => triple(h, "dilation", 1, None)?,
        None => [1; 3],
    };
    if (0..3).any(|i| p[i] * 2 > k[i]) {
        return Err(bad(format!(
            "padding {p:?} must be at most half of kernelSize {k:?}"
        )));
    }
    let nd = x.ndim();
    let mut shape = x.shape()[..nd - 3].to_vec();
    for i in 0..3 {
        let o =
            pool_out_len(x.shape()[nd - 3 + i], k[i], s[i], p[i], d[i], ceil).ok_or_else(|| {
                bad(format!(
                    "the pooling window (kernelSize {k:?}, stride {s:?}, padding {p:?}, \
                     dilation {d:?}) gives no output for self {:?}",
                    x.shape()
                ))
            })?;
        shape.push(o);
    }
    let geo = Pool3d {
        kernel: k,
        stride: s,
        pad: p,
        dil: d,
        ceil,
    };
    Ok((geo, shape))
}

/// `g` has `x`'s rank and leading (non-spatial) dimensions.
fn same_planes(g: &a::T, x: &a::T) -> NnResult<()> {
    let nd = x.ndim();
    if g.ndim() != nd || g.shape()[..nd - 3] != x.shape()[..nd - 3] {
        return Err(bad(format!(
            "{} shape {:?} does not match {} {:?} outside the last three dimensions",
            g.arg,
            g.shape(),
            x.arg,
            x.shape()
        )));
    }
    Ok(())
}

// ---- AvgPool3d ----

/// `out = avg_pool3d(self)`; `divisorOverride` 0 means none (the window size, with or
/// without the padding as `countIncludePad` says).
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnAvgPool3dGetWorkspaceSize(
    self_: *const c_void,
    kernelSize: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    ceilMode: bool,
    countIncludePad: bool,
    divisorOverride: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAvgPool3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            input(&x)?;
            let (p, oshape) = geometry(&x, kernelSize, stride, padding, None, ceilMode)?;
            same_dtype(&o, &x)?;
            a::same_shape(&o, &oshape)?;
            let mut l = Launch::new("aclnnAvgPool3d");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                pool3d::avg_pool3d(&v[0], &p, countIncludePad, divisorOverride, &v[1])
            })
        },
    )
}

/// `output` (self's shape) = the gradient of [`aclnnAvgPool3dGetWorkspaceSize`]'s result.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnAvgPool3dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    kernelSize: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    ceilMode: bool,
    countIncludePad: bool,
    divisorOverride: i64,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAvgPool3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let gi = a::tensor(output, "output")?;
            input(&x)?;
            let (p, oshape) = geometry(&x, kernelSize, stride, padding, None, ceilMode)?;
            same_dtype(&g, &x)?;
            a::same_shape(&g, &oshape)?;
            same_dtype(&gi, &x)?;
            a::same_shape(&gi, x.shape())?;
            let mut l = Launch::new("aclnnAvgPool3dBackward");
            l.input(&g);
            l.output(&gi);
            l.finish(move |v, _| {
                pool3d::avg_pool3d_backward(&v[0], &p, countIncludePad, divisorOverride, &v[1])
            })
        },
    )
}

// ---- AdaptiveAvgPool3d ----

/// `outputSize` (3 positive values) appended to self's leading dimensions; self's spatial
/// dimensions must not be empty.
fn adaptive_shape(x: &a::T, output_size: *const c_void) -> NnResult<Vec<usize>> {
    let os = a::int_array(output_size, "outputSize")?;
    if os.len() != 3 || os.iter().any(|&v| v <= 0) {
        return Err(bad(format!(
            "outputSize {os:?} must be three positive values"
        )));
    }
    let nd = x.ndim();
    if x.shape()[nd - 3..].contains(&0) {
        return Err(bad(format!(
            "self {:?} has an empty spatial dimension",
            x.shape()
        )));
    }
    let mut s = x.shape()[..nd - 3].to_vec();
    s.extend(os.iter().map(|&v| v as usize));
    Ok(s)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveAvgPool3dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveAvgPool3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            input(&x)?;
            let os = adaptive_shape(&x, outputSize)?;
            same_dtype(&o, &x)?;
            a::same_shape(&o, &os)?;
            let mut l = Launch::new("aclnnAdaptiveAvgPool3d");
            l.input(&x);
            l.output(&o);
            l.finish(|v, _| pool3d::adaptive_avg_pool3d(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveAvgPool3dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveAvgPool3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            input(&x)?;
            same_dtype(&g, &x)?;
            same_planes(&g, &x)?;
            if g.shape()[g.ndim() - 3..].contains(&0) || x.shape()[x.ndim() - 3..].contains(&0) {
                return Err(bad(format!(
                    "gradOutput {:?} and self {:?} must not have an empty spatial dimension",
                    g.shape(),
                    x.shape()
                )));
            }
            same_dtype(&o, &x)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnAdaptiveAvgPool3dBackward");
            l.input(&g);
            l.output(&o);
            l.finish(|v, _| pool3d::adaptive_avg_pool3d_backward(&v[0], &v[1]))
        },
    )
}

// ---- MaxPool3dWithArgmax ----

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnMaxPool3dWithArgmaxGetWorkspaceSize(
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
    phase1(
        "aclnnMaxPool3dWithArgmaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            let i = a::tensor(indices, "indices")?;
            input(&x)?;
            let (p, oshape) = geometry(&x, kernelSize, stride, padding, Some(dilation), ceilMode)?;
            same_dtype(&o, &x)?;
            a::same_shape(&o, &oshape)?;
            a::dtype_in(&i, INDEX)?;
            a::same_shape(&i, &oshape)?;
            let mut l = Launch::new("aclnnMaxPool3dWithArgmax");
            l.input(&x);
            l.output(&o);
            l.output(&i);
            l.finish(move |v, _| pool3d::max_pool3d(&v[0], &p, &v[1], &v[2]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize(
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
    phase1(
        "aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(indices, "indices")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            input(&x)?;
            let (_, oshape) = geometry(&x, kernelSize, stride, padding, Some(dilation), ceilMode)?;
            same_dtype(&g, &x)?;
            a::same_shape(&g, &oshape)?;
            a::dtype_in(&i, INDEX)?;
            a::same_shape(&i, &oshape)?;
            same_dtype(&gi, &x)?;
            a::same_shape(&gi, x.shape())?;
            let mut l = Launch::new("aclnnMaxPool3dWithArgmaxBackward");
            l.input(&g);
            l.input(&i);
            l.output(&gi);
            l.finish(|v, _| pool3d::max_pool3d_backward(&v[0], &v[1], &v[2]))
        },
    )
}

// ---- AdaptiveMaxPool3d ----

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveMaxPool3dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    outputOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveMaxPool3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(outputOut, "outputOut")?;
            let i = a::tensor(indicesOut, "indicesOut")?;
            input(&x)?;
            let os = adaptive_shape(&x, outputSize)?;
            same_dtype(&o, &x)?;
            a::same_shape(&o, &os)?;
            a::dtype_in(&i, INDEX)?;
            a::same_shape(&i, &os)?;
            let mut l = Launch::new("aclnnAdaptiveMaxPool3d");
            l.input(&x);
            l.output(&o);
            l.output(&i);
            l.finish(|v, _| pool3d::adaptive_max_pool3d(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    indices: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(indices, "indices")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            input(&x)?;
            same_dtype(&g, &x)?;
            same_planes(&g, &x)?;
            a::dtype_in(&i, INDEX)?;
            a::same_shape(&i, g.shape())?;
            same_dtype(&gi, &x)?;
            a::same_shape(&gi, x.shape())?;
            let mut l = Launch::new("aclnnAdaptiveMaxPool3dBackward");
            l.input(&g);
            l.input(&i);
            l.output(&gi);
            l.finish(|v, _| pool3d::max_pool3d_backward(&v[0], &v[1], &v[2]))
        },
    )
}

// ---- ReflectionPad3d, ReplicationPad3d, CircularPad2d/3d ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pad {
    Reflect,
    Replicate,
    Circular,
}

/// The padded shape of `x` (a `k`-D padding), every check of the reference done.
fn padded_shape(
    x: &a::T,
    padding: *const c_void,
    k: usize,
    mode: Pad,
) -> NnResult<(Vec<i64>, Vec<usize>)> {
    let p = a::int_array(padding, "padding")?;
    if x.ndim() != k + 1 && x.ndim() != k + 2 {
        return Err(bad(format!(
            "{} must have {} or {} dimensions, but its shape is {:?}",
            x.arg,
            k + 1,
            k + 2,
            x.shape()
        )));
    }
    if p.len() != 2 * k {
        return Err(bad(format!("padding {p:?} must hold {} values", 2 * k)));
    }
    let nd = x.ndim();
    let mut want = x.shape().to_vec();
    for j in 0..k {
        let d = nd - 1 - j;
        let (lo, hi) = (p[2 * j], p[2 * j + 1]);
        let n = x.shape()[d] as i64;
        let ok = match mode {
            Pad::Replicate => lo >= 0 && hi >= 0 && n > 0,
            Pad::Reflect | Pad::Circular => lo >= 0 && hi >= 0 && lo < n && hi < n,
        };
        if !ok {
            return Err(bad(format!(
                "padding ({lo}, {hi}) of dimension {d} (size {n}) is out of range: {}",
                if mode == Pad::Replicate {
                    "each must be >= 0 and the dimension non-empty"
                } else {
                    "each must be in [0, size)"
                }
            )));
        }
        want[d] = (n + lo + hi) as usize;
    }
    Ok((p, want))
}

fn pad_forward(
    api: &'static str,
    k: usize,
    mode: Pad,
    types: &[DType],
    self_: *const c_void,
    padding: *const c_void,
    out: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, types)?;
    let (p, want) = padded_shape(&x, padding, k, mode)?;
    same_dtype(&o, &x)?;
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| match mode {
        Pad::Reflect => extra::pad(&v[0], &p, PadMode::Reflect, &v[1]),
        Pad::Replicate => extra::pad(&v[0], &p, PadMode::Replicate, &v[1]),
        Pad::Circular => pool3d::circular_pad(&v[0], &p, &v[1]),
    })
}

#[allow(clippy::too_many_arguments)]
fn pad_backward(
    api: &'static str,
    k: usize,
    mode: Pad,
    types: &[DType],
    grad_output: *const c_void,
    self_: *const c_void,
    padding: *const c_void,
    grad_input: *mut c_void,
) -> NnResult<Built> {
    let g = a::tensor(grad_output, "gradOutput")?;
    let x = a::tensor(self_, "self")?;
    let gi = a::tensor(grad_input, "gradInput")?;
    a::dtype_in(&x, types)?;
    let (p, want) = padded_shape(&x, padding, k, mode)?;
    same_dtype(&g, &x)?;
    a::same_shape(&g, &want)?;
    same_dtype(&gi, &x)?;
    a::same_shape(&gi, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&g);
    l.output(&gi);
    l.finish(move |v, _| match mode {
        Pad::Reflect => extra::pad_backward(&v[0], &p, PadMode::Reflect, &v[1]),
        Pad::Replicate => extra::pad_backward(&v[0], &p, PadMode::Replicate, &v[1]),
        Pad::Circular => pool3d::circular_pad_backward(&v[0], &p, &v[1]),
    })
}

use DType::{Bool, BF16, F16, F32, F64, I16, I32, I64, I8, U8};
const REFLECT_TYPES: &[DType] = &[BF16, F16, F32, F64, I8, I16, I32, I64, U8, Bool];
const REFLECT_GRAD_TYPES: &[DType] = &[BF16, F16, F32, F64];
const REPLICATE_TYPES: &[DType] = &[F16, F32, F64, I8, I16, I32, I64, U8];
const REPLICATE_GRAD_TYPES: &[DType] = &[F16, F32, BF16, F64];
const CIRCULAR_TYPES: &[DType] = &[F16, BF16, F32, I8, I32];
const CIRCULAR_GRAD_TYPES: &[DType] = &[F16, BF16, F32];

macro_rules! pad_fwd {
    ($get:ident, $api:literal, $k:expr, $mode:expr, $types:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            padding: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                pad_forward($api, $k, $mode, $types, self_, padding, out)
            })
        }
    };
}

macro_rules! pad_bwd {
    ($get:ident, $api:literal, $k:expr, $mode:expr, $types:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            gradOutput: *const c_void,
            self_: *const c_void,
            padding: *const c_void,
            gradInput: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                pad_backward(
                    $api, $k, $mode, $types, gradOutput, self_, padding, gradInput,
                )
            })
        }
    };
}

pad_fwd!(
    aclnnReflectionPad3dGetWorkspaceSize,
    "aclnnReflectionPad3d",
    3,
    Pad::Reflect,
    REFLECT_TYPES
);
pad_bwd!(
    aclnnReflectionPad3dBackwardGetWorkspaceSize,
    "aclnnReflectionPad3dBackward",
    3,
    Pad::Reflect,
    REFLECT_GRAD_TYPES
);
pad_fwd!(
    aclnnReplicationPad3dGetWorkspaceSize,
    "aclnnReplicationPad3d",
    3,
    Pad::Replicate,
    REPLICATE_TYPES
);
pad_bwd!(
    aclnnReplicationPad3dBackwardGetWorkspaceSize,
    "aclnnReplicationPad3dBackward",
    3,
    Pad::Replicate,
    REPLICATE_GRAD_TYPES
);
pad_fwd!(
    aclnnCircularPad2dGetWorkspaceSize,
    "aclnnCircularPad2d",
    2,
    Pad::Circular,
    CIRCULAR_TYPES
);
pad_bwd!(
    aclnnCircularPad2dBackwardGetWorkspaceSize,
    "aclnnCircularPad2dBackward",
    2,
    Pad::Circular,
    CIRCULAR_GRAD_TYPES
);
pad_fwd!(
    aclnnCircularPad3dGetWorkspaceSize,
    "aclnnCircularPad3d",
    3,
    Pad::Circular,
    CIRCULAR_TYPES
);
pad_bwd!(
    aclnnCircularPad3dBackwardGetWorkspaceSize,
    "aclnnCircularPad3dBackward",
    3,
    Pad::Circular,
    CIRCULAR_GRAD_TYPES
);

crate::phase2!(
    aclnnReflectionPad3d,
    aclnnReflectionPad3dBackward,
    aclnnReplicationPad3d,
    aclnnReplicationPad3dBackward,
    aclnnCircularPad2d,
    aclnnCircularPad2dBackward,
    aclnnCircularPad3d,
    aclnnCircularPad3dBackward
);

crate::phase2!(
    aclnnAvgPool3d,
    aclnnAvgPool3dBackward,
    aclnnAdaptiveAvgPool3d,
    aclnnAdaptiveAvgPool3dBackward,
    aclnnMaxPool3dWithArgmax,
    aclnnMaxPool3dWithArgmaxBackward,
    aclnnAdaptiveMaxPool3d,
    aclnnAdaptiveMaxPool3dBackward
);
