//! Operators of CANN 8.5's ops-nn example programs that npu-emu lacked:
//!
//! - `aclnn_binary_cross_entropy_grad_v2.h` (ops-nn `experimental/loss`, Atlas A2):
//!   `z = weight · grad · (logits − labels)` with the operator's own `reduction` numbering
//!   (0 none: `grad` elementwise; 1 sum: `grad`'s first element; 2 mean: that divided by the
//!   element count), as its README and kernel define it (not aclnnBinaryCrossEntropyBackward's
//!   formula);
//! - `aclnn_gather_elements_v3.h` (ops-nn `experimental/index`, Atlas A2): torch.gather along
//!   `dim` with INT32 indices, on the engine of `aclnnGather`;
//! - `aclnn_dequant_bias.h` (Atlas A2/A3): INT32 `[M, N]` times FLOAT/BFLOAT16 `weightScale [N]`
//!   and FLOAT `activateScaleOptional [M]`, an INT32 bias added before the scales, a float one
//!   after, into FLOAT16 (`outputDtype` 1, FLOAT scale) or BFLOAT16 (27, BFLOAT16 scale);
//!   activateScale/bias types and shapes, and M above 25000, are 561002 as the page lists;
//! - `aclnn_quantized_batch_norm.h` (Atlas A2/A3): dequantise, normalise with the running
//!   statistics, requantise (round half to even, saturated) an INT8/UINT8/INT32 NCHW input;
//! - `aclnn_expand_into_jagged_permute.h` (Atlas A2/A3, fbgemm's
//!   `expand_into_jagged_permute`): INT32 throughout, shape mismatches 561002, offsets that
//!   do not fit the output fail the task;
//! - `aclnn_masked_softmax_with_rel_pos_bias.h` (Atlas A2/A3): `softmax(scale · x + mask +
//!   bias)` over the last axis, x `(B·W, N, S1, S2)` or `(B, W, N, S1, S2)`, the mask
//!   `(W, S1, S2)` in 3, 4 or 5 dimensions (optional), the bias `(N, S1, S2)` likewise; types
//!   and shapes outside the page's are 561002 as it lists; `innerPrecisionMode` has no effect
//!   (the sums are exact); the unified-buffer limit on S2 is not enforced;
//! - `aclnn_flat_quant.h` (Atlas A2/A3): `P1 @ x[k] @ P2` per slice, per-slice INT4
//!   quantisation with `clipRatio`, into INT32 words of eight INT4 values; an ACL_INT4 `out`
//!   is refused (npu-emu keeps no sub-byte tensors);
//! - `aclnn_dynamic_block_quant.h` (Atlas A2/A3 form: FLOAT16/BFLOAT16 x of 2 or 3 dimensions,
//!   roundMode rint, dstType 2 (INT8), rowBlockSize 1, colBlockSize 64/128/192/256, as the
//!   page's A2/A3 notes restrict it; the FLOAT8/HIFLOAT8 forms are Ascend 950's);
//! - `aclnn_apply_fused_ema_adam.h` (Atlas A2/A3): an Adam (mode 0, L2) or AdamW (mode 1)
//!   step with optional bias correction from the INT64 `step` tensor (its first element), then
//!   the EMA of the
//!   weights, in place on varRef, mRef, vRef, sRef (BFLOAT16, FLOAT16, FLOAT32, one type
//!   and shape);
//! - `aclnn_ada_layer_norm_quant.h` (Atlas A2/A3): aclnnAdaLayerNorm's checks and engine, then
//!   the optional smoothing and per-row dynamic INT8 quantisation (`quantMode` "dynamic" only,
//!   `quantOffsetOptional` must be nullptr, as the page says);
//! - `aclnn_batchmatmul_quant.h` (Atlas A2/A3): FLOAT16 `x1 @ x2 + bias` requantised to INT8 by
//!   the UINT64 `quantParam` of aclnnTransQuantParam (1 or align(N, 16) elements, as CANN's
//!   op_api checks; aclnnTransQuantParam pads its list to 16);
//! - `aclnn_grouped_dynamic_mx_quant.h` and `aclnn_fused_matmul.h`: Ascend 950 only in the
//!   operator reference; exported and refused as CANN refuses them on Atlas A2/A3
//!   (ACLNN_ERR_PARAM_INVALID naming the platform).
//!
//! The computation is `npu_emu::ops::nn85` and `npu_emu::ops::shape::gather`.

use super::args::{self as a};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::nn85::{self as engine, BceGradMode};
use npu_emu::ops::shape;
use std::ffi::{c_char, c_void};

use DType::{BF16, F16, F32, I16, I32, I8, U8};

/// ACLNN_ERR_INNER_TILING_ERROR: the code the pages list for shape errors their tiling finds.
const TILING: i32 = 561002;

fn tiling(msg: impl Into<String>) -> NnError {
    NnError::new(TILING, msg)
}

/// The data types of BinaryCrossEntropyGradV2's tensors (its README and op definition).
const BCE_GRAD_V2_TYPES: &[DType] = &[F32, F16, I32, I16];

/// The operator's `reduction`: 0 none, 1 sum, 2 mean.
fn bce_grad_mode(r: i64) -> NnResult<BceGradMode> {
    match r {
        0 => Ok(BceGradMode::None),
        1 => Ok(BceGradMode::Sum),
        2 => Ok(BceGradMode::Mean),
        _ => Err(NnError::invalid(format!(
            "reductionOptional {r} is not supported; 0 (none), 1 (sum) or 2 (mean)"
        ))),
    }
}

/// `aclnnBinaryCrossEntropyGradV2`: the gradient of binary cross entropy as the ops-nn
/// experimental operator computes it. `grad`, `logits`, `labels`, `weight` and `zOut` have one
/// type; `labels`, `weight` and `zOut` have `logits`' shape, and so does `grad` for reduction
/// none (for sum and mean its first element is used, any non-empty shape).
#[no_mangle]
pub unsafe extern "C" fn aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(
    grad: *const c_void,
    logits: *const c_void,
    labels: *const c_void,
    weight: *const c_void,
    reductionOptional: i64,
    zOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBinaryCrossEntropyGradV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(grad, "grad")?;
            let x = a::tensor(logits, "logits")?;
            let y = a::tensor(labels, "labels")?;
            let w = a::tensor(weight, "weight")?;
            let z = a::tensor(zOut, "zOut")?;
            let mode = bce_grad_mode(reductionOptional)?;
            for t in [&g, &x, &y, &w, &z] {
                a::dtype_in(t, BCE_GRAD_V2_TYPES)?;
                a::same_dtype(t, &x)?;
                a::max_dims(t, 8)?;
            }
            for t in [&y, &w, &z] {
                a::same_shape(t, x.shape())?;
            }
            if mode == BceGradMode::None {
                a::same_shape(&g, x.shape())?;
            } else if g.numel() == 0 && x.numel() > 0 {
                return Err(NnError::invalid(
                    "grad is empty; reduction sum and mean scale by its first element".to_string(),
                ));
            }
            let mut l = Launch::new("aclnnBinaryCrossEntropyGradV2");
            for t in [&g, &x, &y, &w] {
                l.input(t);
            }
            l.output(&z);
            l.finish(move |v, _| engine::bce_grad_v2(&v[0], &v[1], &v[2], &v[3], mode, &v[4]))
        },
    )
}

/// `aclnnGatherElementsV3`: `y[i…, j, k…] = x[i…, index[i…, j, k…], k…]` along `dim`, with
/// INT32 `index` of `x`'s rank (no larger than `x` outside `dim`), `yOut` `x`'s type and
/// `index`'s shape; an index outside `[-x.shape[dim], x.shape[dim])` fails the task.
#[no_mangle]
pub unsafe extern "C" fn aclnnGatherElementsV3GetWorkspaceSize(
    x: *const c_void,
    index: *const c_void,
    dim: i64,
    yOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGatherElementsV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let i = a::tensor(index, "index")?;
            let y = a::tensor(yOut, "yOut")?;
            a::dtype_in(&x, &[F32, F16, BF16, I32])?;
            a::dtype_in(&i, &[I32])?;
            a::max_dims(&x, 8)?;
            if x.ndim() == 0 {
                return Err(NnError::invalid(
                    "x must have 1 to 8 dimensions, but it is 0-d",
                ));
            }
            if i.ndim() != x.ndim() {
                return Err(NnError::invalid(format!(
                    "index {:?} must have as many dimensions as x {:?}",
                    i.shape(),
                    x.shape()
                )));
            }
            let d = a::dim(dim, x.ndim(), "dim")?;
            for k in 0..x.ndim() {
                if k != d && i.shape()[k] > x.shape()[k] {
                    return Err(NnError::invalid(format!(
                        "index {:?} is larger than x {:?} in dimension {k}",
                        i.shape(),
                        x.shape()
                    )));
                }
            }
            a::same_dtype(&y, &x)?;
            a::same_shape(&y, i.shape())?;
            let mut l = Launch::new("aclnnGatherElementsV3");
            l.input(&x);
            l.input(&i);
            l.output(&y);
            l.finish(move |v, _| shape::gather(&v[0], d, &v[1], &v[2]))
        },
    )
}

/// `aclnnGroupedDynamicMxQuant`: Ascend 950 only in the operator reference (FLOAT8 outputs
/// with FLOAT8_E8M0 scales per group of 32).
#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedDynamicMxQuantGetWorkspaceSize(
    _x: *const c_void,
    _groupIndex: *const c_void,
    _roundMode: *const c_char,
    _dstType: i64,
    _blocksize: i64,
    _y: *const c_void,
    _mxscale: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    super::quant31::ascend950_only(
        "aclnnGroupedDynamicMxQuantGetWorkspaceSize",
        "the grouped MX quantisation",
        workspaceSize,
        executor,
    )
}

/// `aclnnFusedMatmul`: Ascend 950 only in the operator reference (`x1 @ x2 + bias` fused
/// with add, mul, gelu or relu).
#[no_mangle]
pub unsafe extern "C" fn aclnnFusedMatmulGetWorkspaceSize(
    _x1: *const c_void,
    _x2: *const c_void,
    _bias: *const c_void,
    _x3: *const c_void,
    _fusedOpType: *const c_char,
    _cubeMathType: i8,
    _y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    super::quant31::ascend950_only(
        "aclnnFusedMatmulGetWorkspaceSize",
        "the fused matmul",
        workspaceSize,
        executor,
    )
}

/// `aclnnDequantBias` (see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn aclnnDequantBiasGetWorkspaceSize(
    x: *const c_void,
    weightScale: *const c_void,
    activateScaleOptional: *const c_void,
    biasOptional: *const c_void,
    outputDtype: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDequantBiasGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let ws = a::tensor(weightScale, "weightScale")?;
            let act = a::opt_tensor(activateScaleOptional, "activateScaleOptional")?;
            let bias = a::opt_tensor(biasOptional, "biasOptional")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[I32])?;
            a::dtype_in(&ws, &[F32, BF16])?;
            a::dtype_in(&o, &[F16, BF16])?;
            let want = match outputDtype {
                1 => F16,
                27 => BF16,
                v => {
                    return Err(NnError::invalid(format!(
                        "outputDtype {v} is not supported; 1 (FLOAT16) or 27 (BFLOAT16)"
                    )))
                }
            };
            let ws_for = if ws.dtype() == F32 { 1 } else { 27 };
            if outputDtype != ws_for {
                return Err(NnError::invalid(format!(
                    "outputDtype {outputDtype} does not fit weightScale {}: a FLOAT weightScale \
                     takes 1 (FLOAT16), a BFLOAT16 one 27 (BFLOAT16)",
                    ws.dtype()
                )));
            }
            if o.dtype() != want {
                return Err(NnError::invalid(format!(
                    "out is {}, but outputDtype {outputDtype} asks for {want}",
                    o.dtype()
                )));
            }
            if x.ndim() != 2 {
                return Err(tiling(format!(
                    "x must be 2-D [M, N], but its shape is {:?}",
                    x.shape()
                )));
            }
            let (m, n) = (x.shape()[0], x.shape()[1]);
            if m > 25000 {
                return Err(tiling(format!("M is {m}; at most 25000")));
            }
            let vec_of = |t: &a::T, len: usize, what: &str| -> NnResult<()> {
                if t.shape() != [len] {
                    return Err(tiling(format!(
                        "{} must be [{what}] = [{len}], but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
                Ok(())
            };
            vec_of(&ws, n, "N")?;
            if let Some(t) = &act {
                if t.dtype() != F32 {
                    return Err(tiling(format!(
                        "activateScaleOptional is {}; FLOAT",
                        t.dtype()
                    )));
                }
                vec_of(t, m, "M")?;
            }
            let kind = match &bias {
                None => engine::DequantBiasKind::None,
                Some(t) => {
                    if ![F32, BF16, F16, I32].contains(&t.dtype()) {
                        return Err(tiling(format!(
                            "biasOptional is {}; FLOAT, BFLOAT16, FLOAT16 or INT32",
                            t.dtype()
                        )));
                    }
                    vec_of(t, n, "N")?;
                    if t.dtype() == I32 {
                        engine::DequantBiasKind::Int
                    } else {
                        engine::DequantBiasKind::Float
                    }
                }
            };
            a::same_shape(&o, x.shape())?;
            let (ha, hb) = (act.is_some(), bias.is_some());
            let mut l = Launch::new("aclnnDequantBias");
            l.input(&x);
            l.input(&ws);
            if let Some(t) = &act {
                l.input(t);
            }
            if let Some(t) = &bias {
                l.input(t);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let av = ha.then(|| &v[2]);
                let bv = hb.then(|| &v[2 + ha as usize]);
                engine::dequant_bias(&v[0], &v[1], av, bv, kind, &v[v.len() - 1])
            })
        },
    )
}

/// `aclnnQuantizedBatchNorm` (see the module documentation): `input`/`output` INT8, UINT8 or
/// INT32 4-D of one type and shape; `mean`, `var`, `weight`, `bias` FLOAT `[C]`;
/// `inputScale`/`outputScale` FLOAT scalars, the zero points INT32 scalars within the input
/// type's range; nothing empty.
#[no_mangle]
pub unsafe extern "C" fn aclnnQuantizedBatchNormGetWorkspaceSize(
    input: *const c_void,
    mean: *const c_void,
    var: *const c_void,
    inputScale: *const c_void,
    inputZeroPoint: *const c_void,
    outputScale: *const c_void,
    outputZeroPoint: *const c_void,
    weight: *mut c_void,
    bias: *mut c_void,
    epsilon: f32,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnQuantizedBatchNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let o = a::tensor(output, "output")?;
            let mu = a::tensor(mean, "mean")?;
            let va = a::tensor(var, "var")?;
            let is = a::scalar(inputScale, "inputScale")?;
            let izp = a::scalar(inputZeroPoint, "inputZeroPoint")?;
            let os = a::scalar(outputScale, "outputScale")?;
            let ozp = a::scalar(outputZeroPoint, "outputZeroPoint")?;
            let w = a::opt_tensor(weight, "weight")?;
            let b = a::opt_tensor(bias, "bias")?;
            let mut all = vec![&x, &mu, &va];
            all.extend(w.as_ref());
            all.extend(b.as_ref());
            for t in &all {
                if t.numel() == 0 {
                    return Err(NnError::invalid(format!(
                        "{} is empty; empty tensors are not supported",
                        t.arg
                    )));
                }
            }
            a::dtype_in(&x, &[I8, U8, I32])?;
            a::same_dtype(&o, &x)?;
            if x.ndim() != 4 {
                return Err(NnError::invalid(format!(
                    "input must be 4-D NCHW, but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&o, x.shape())?;
            let c = x.shape()[1];
            for t in [Some(&mu), Some(&va), w.as_ref(), b.as_ref()]
                .into_iter()
                .flatten()
            {
                a::dtype_in(t, &[F32])?;
                if t.shape() != [c] {
                    return Err(NnError::invalid(format!(
                        "{} must be [C] = [{c}], but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            for (s, name, d) in [
                (&is, "inputScale", F32),
                (&izp, "inputZeroPoint", I32),
                (&os, "outputScale", F32),
                (&ozp, "outputZeroPoint", I32),
            ] {
                if s.dtype != d {
                    return Err(NnError::invalid(format!("{name} is {}; {d}", s.dtype)));
                }
            }
            let (lo, hi) = match x.dtype() {
                I8 => (-128, 127),
                U8 => (0, 255),
                _ => (i32::MIN as i64, i32::MAX as i64),
            };
            for (s, name) in [(&izp, "inputZeroPoint"), (&ozp, "outputZeroPoint")] {
                let v = s.to_i64();
                if v < lo || v > hi {
                    return Err(NnError::invalid(format!(
                        "{name} {v} is outside the {} range [{lo}, {hi}]",
                        x.dtype()
                    )));
                }
            }
            let scales = [is.to_f32(), os.to_f32()];
            let zps = [izp.to_i64() as i32, ozp.to_i64() as i32];
            let (hw, hb) = (w.is_some(), b.is_some());
            let mut l = Launch::new("aclnnQuantizedBatchNorm");
            for t in &all {
                l.input(t);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let wv = hw.then(|| &v[3]);
                let bv = hb.then(|| &v[3 + hw as usize]);
                engine::quantized_batch_norm(
                    &v[0],
                    &v[1],
                    &v[2],
                    wv,
                    bv,
                    scales,
                    zps,
                    epsilon,
                    &v[v.len() - 1],
                )
            })
        },
    )
}

/// `aclnnExpandIntoJaggedPermute` (see the module documentation): `permute` `[T]`,
/// `inputOffset` and `outputOffset` `[T + 1]`, `outputPermuteOutOut` `[outputSize]`, all
/// INT32.
#[no_mangle]
pub unsafe extern "C" fn aclnnExpandIntoJaggedPermuteGetWorkspaceSize(
    permute: *const c_void,
    inputOffset: *const c_void,
    outputOffset: *const c_void,
    outputSize: i64,
    outputPermuteOutOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnExpandIntoJaggedPermuteGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let p = a::tensor(permute, "permute")?;
            let io = a::tensor(inputOffset, "inputOffset")?;
            let oo = a::tensor(outputOffset, "outputOffset")?;
            let o = a::tensor(outputPermuteOutOut, "outputPermuteOutOut")?;
            for t in [&p, &io, &oo, &o] {
                a::dtype_in(t, &[I32])?;
            }
            for t in [&p, &io, &oo, &o] {
                if t.ndim() != 1 {
                    return Err(tiling(format!(
                        "{} must be 1-D, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let n = p.shape()[0];
            for t in [&io, &oo] {
                if t.shape()[0] != n + 1 {
                    return Err(tiling(format!(
                        "{} must have permute's length + 1 = {} elements, but it has {}",
                        t.arg,
                        n + 1,
                        t.shape()[0]
                    )));
                }
            }
            if outputSize < 0 || o.shape()[0] as i64 != outputSize {
                return Err(tiling(format!(
                    "outputPermuteOutOut has {} elements, but outputSize is {outputSize}",
                    o.shape()[0]
                )));
            }
            let mut l = Launch::new("aclnnExpandIntoJaggedPermute");
            l.input(&p);
            l.input(&io);
            l.input(&oo);
            l.output(&o);
            l.finish(move |v, _| engine::expand_into_jagged_permute(&v[0], &v[1], &v[2], &v[3]))
        },
    )
}

/// `aclnnMaskedSoftmaxWithRelPosBias` (see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn aclnnMaskedSoftmaxWithRelPosBiasGetWorkspaceSize(
    x: *const c_void,
    attenMaskOptional: *const c_void,
    relativePosBias: *const c_void,
    scaleValue: f64,
    _innerPrecisionMode: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaskedSoftmaxWithRelPosBiasGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let m = a::opt_tensor(attenMaskOptional, "attenMaskOptional")?;
            let b = a::tensor(relativePosBias, "relativePosBias")?;
            let o = a::tensor(out, "out")?;
            for t in [Some(&x), m.as_ref(), Some(&b), Some(&o)]
                .into_iter()
                .flatten()
            {
                if ![F32, F16, BF16].contains(&t.dtype()) || t.dtype() != x.dtype() {
                    return Err(tiling(format!(
                        "{} is {}; x, attenMaskOptional, relativePosBias and out are one of \
                         FLOAT, FLOAT16, BFLOAT16 (x is {})",
                        t.arg,
                        t.dtype(),
                        x.dtype()
                    )));
                }
            }
            let dims: [usize; 5] = match *x.shape() {
                [bw, n, s1, s2] => [1, bw, n, s1, s2],
                [b, w, n, s1, s2] => [b, w, n, s1, s2],
                _ => {
                    return Err(tiling(format!(
                        "x must be (B*W, N, S1, S2) or (B, W, N, S1, S2), but its shape is {:?}",
                        x.shape()
                    )))
                }
            };
            let [_, _, n, s1, s2] = dims;
            // the 4-D form has B*W in front: the mask's W must divide it
            let w = match &m {
                Some(t) => match *t.shape() {
                    [w, a1, a2] | [w, 1, a1, a2] | [1, w, 1, a1, a2] if a1 == s1 && a2 == s2 => w,
                    _ => {
                        return Err(tiling(format!(
                            "attenMaskOptional must be (W, S1, S2), (W, 1, S1, S2) or \
                             (1, W, 1, S1, S2) with S1 {s1}, S2 {s2}, but its shape is {:?}",
                            t.shape()
                        )))
                    }
                },
                None => {
                    if x.ndim() == 5 {
                        dims[1]
                    } else {
                        1
                    }
                }
            };
            let dims = if x.ndim() == 4 {
                if w == 0 || !dims[1].is_multiple_of(w) {
                    return Err(tiling(format!(
                        "x's first dimension {} (B*W) is not a multiple of the mask's W {w}",
                        dims[1]
                    )));
                }
                [dims[1] / w, w, n, s1, s2]
            } else {
                if dims[1] != w {
                    return Err(tiling(format!(
                        "attenMaskOptional's W {w} differs from x's {}",
                        dims[1]
                    )));
                }
                dims
            };
            match *b.shape() {
                [bn, a1, a2] | [1, bn, a1, a2] | [1, 1, bn, a1, a2]
                    if bn == n && a1 == s1 && a2 == s2 => {}
                _ => {
                    return Err(tiling(format!(
                        "relativePosBias must be (N, S1, S2), (1, N, S1, S2) or (1, 1, N, S1, S2) \
                         = N {n}, S1 {s1}, S2 {s2}, but its shape is {:?}",
                        b.shape()
                    )))
                }
            }
            if o.shape() != x.shape() {
                return Err(tiling(format!(
                    "out must have x's shape {:?}, but it is {:?}",
                    x.shape(),
                    o.shape()
                )));
            }
            let hm = m.is_some();
            let mut l = Launch::new("aclnnMaskedSoftmaxWithRelPosBias");
            l.input(&x);
            if let Some(t) = &m {
                l.input(t);
            }
            l.input(&b);
            l.output(&o);
            l.finish(move |v, _| {
                let mv = hm.then(|| &v[1]);
                engine::masked_softmax_rel_pos_bias(
                    &v[0],
                    mv,
                    &v[1 + hm as usize],
                    scaleValue,
                    dims,
                    &v[v.len() - 1],
                )
            })
        },
    )
}

/// `aclnnFlatQuant` (see the module documentation); every check of the page's list is
/// 161002.
#[no_mangle]
pub unsafe extern "C" fn aclnnFlatQuantGetWorkspaceSize(
    x: *const c_void,
    kroneckerP1: *const c_void,
    kroneckerP2: *const c_void,
    clipRatio: f64,
    out: *mut c_void,
    quantScale: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFlatQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let p1 = a::tensor(kroneckerP1, "kroneckerP1")?;
            let p2 = a::tensor(kroneckerP2, "kroneckerP2")?;
            let o = a::tensor(out, "out")?;
            let qs = a::tensor(quantScale, "quantScale")?;
            a::dtype_in(&x, &[F16, BF16])?;
            a::same_dtype(&p1, &x)?;
            a::same_dtype(&p2, &x)?;
            a::dtype_in(&o, &[I32])?;
            a::dtype_in(&qs, &[F32])?;
            let (k, m, n) = match *x.shape() {
                [k, m, n] => (k, m, n),
                _ => {
                    return Err(NnError::invalid(format!(
                        "x must be 3-D [K, M, N], but its shape is {:?}",
                        x.shape()
                    )))
                }
            };
            if !(1..=262144).contains(&k) || !(1..=256).contains(&m) || !(1..=256).contains(&n) {
                return Err(NnError::invalid(format!(
                    "x {:?} is outside K in [1, 262144], M and N in [1, 256]",
                    x.shape()
                )));
            }
            if p1.shape() != [m, m] {
                return Err(NnError::invalid(format!(
                    "kroneckerP1 must be [M, M] = [{m}, {m}], but its shape is {:?}",
                    p1.shape()
                )));
            }
            if p2.shape() != [n, n] {
                return Err(NnError::invalid(format!(
                    "kroneckerP2 must be [N, N] = [{n}, {n}], but its shape is {:?}",
                    p2.shape()
                )));
            }
            if qs.shape() != [k] {
                return Err(NnError::invalid(format!(
                    "quantScale must be [K] = [{k}], but its shape is {:?}",
                    qs.shape()
                )));
            }
            if !n.is_multiple_of(8) || o.shape() != [k, m, n / 8] {
                return Err(NnError::invalid(format!(
                    "an INT32 out holds eight INT4 values a word: x's last dimension {n} must be a \
                     multiple of 8 and out [{k}, {m}, {}], but out is {:?}",
                    n / 8,
                    o.shape()
                )));
            }
            if !(clipRatio > 0.0 && clipRatio <= 1.0) {
                return Err(NnError::invalid(format!(
                    "clipRatio {clipRatio} is outside (0, 1]"
                )));
            }
            let clip = clipRatio as f32;
            let mut l = Launch::new("aclnnFlatQuant");
            l.input(&x);
            l.input(&p1);
            l.input(&p2);
            l.output(&o);
            l.output(&qs);
            l.finish(move |v, _| engine::flat_quant(&v[0], &v[1], &v[2], clip, &v[3], &v[4]))
        },
    )
}

/// `aclnnDynamicBlockQuant` (see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn aclnnDynamicBlockQuantGetWorkspaceSize(
    x: *const c_void,
    minScale: f64,
    roundModeOptional: *mut c_char,
    dstType: i64,
    rowBlockSize: i64,
    colBlockSize: i64,
    yOut: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDynamicBlockQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let y = a::tensor(yOut, "yOut")?;
            let s = a::tensor(scaleOut, "scaleOut")?;
            a::dtype_in(&x, &[F16, BF16])?;
            let mode = if roundModeOptional.is_null() {
                "rint".to_string()
            } else {
                std::ffi::CStr::from_ptr(roundModeOptional)
                    .to_string_lossy()
                    .into_owned()
            };
            if mode != "rint" {
                return Err(NnError::invalid(format!(
                    "roundModeOptional \"{mode}\" is not supported on Atlas A2/A3; only \"rint\" \
                     (\"round\" is Ascend 950's, for HIFLOAT8)"
                )));
            }
            if dstType != 2 {
                return Err(NnError::invalid(format!(
                    "dstType {dstType} is not supported on Atlas A2/A3; only 2 (INT8) (34, 35, 36, \
                     the FLOAT8/HIFLOAT8 outputs, are Ascend 950's)"
                )));
            }
            if rowBlockSize != 1 {
                return Err(NnError::invalid(format!(
                    "rowBlockSize {rowBlockSize} is not supported on Atlas A2/A3; only 1"
                )));
            }
            if ![64, 128, 192, 256].contains(&colBlockSize) {
                return Err(NnError::invalid(format!(
                    "colBlockSize {colBlockSize} is not supported; 64, 128, 192 or 256"
                )));
            }
            if minScale.is_nan() || minScale < 0.0 {
                return Err(NnError::invalid(format!(
                    "minScale {minScale} must not be negative"
                )));
            }
            a::dtype_in(&y, &[I8])?;
            a::dtype_in(&s, &[F32])?;
            if !(2..=3).contains(&x.ndim()) || x.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "x must be a non-empty 2-D [M, N] or 3-D [B, M, N] tensor, but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&y, x.shape())?;
            let nd = x.ndim();
            let mut want = x.shape().to_vec();
            want[nd - 1] = want[nd - 1].div_ceil(colBlockSize as usize);
            a::same_shape(&s, &want)?;
            let (ms, cb) = (minScale as f32, colBlockSize as usize);
            let mut l = Launch::new("aclnnDynamicBlockQuant");
            l.input(&x);
            l.output(&y);
            l.output(&s);
            l.finish(move |v, _| engine::dynamic_block_quant_rows(&v[0], ms, cb, &v[1], &v[2]))
        },
    )
}

/// `aclnnApplyFusedEmaAdam` (see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn aclnnApplyFusedEmaAdamGetWorkspaceSize(
    grad: *const c_void,
    varRef: *mut c_void,
    mRef: *mut c_void,
    vRef: *mut c_void,
    sRef: *mut c_void,
    step: *const c_void,
    lr: f64,
    emaDecay: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    mode: i64,
    biasCorrection: bool,
    weightDecay: f64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyFusedEmaAdamGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(grad, "grad")?;
            let var = a::tensor(varRef, "varRef")?;
            let m = a::tensor(mRef, "mRef")?;
            let v = a::tensor(vRef, "vRef")?;
            let s = a::tensor(sRef, "sRef")?;
            let st = a::tensor(step, "step")?;
            for t in [&g, &var, &m, &v, &s] {
                a::dtype_in(t, &[BF16, F16, F32])?;
                a::same_dtype(t, &g)?;
                a::same_shape(t, g.shape())?;
            }
            a::dtype_in(&st, &[DType::I64])?;
            // the kernel reads the first element (CANN's example passes a [2, 2] step)
            if st.numel() == 0 {
                return Err(NnError::invalid(
                    "step is empty; its first element is the step count",
                ));
            }
            if mode != 0 && mode != 1 {
                return Err(NnError::invalid(format!(
                    "mode {mode} is not supported; 0 (L2) or 1 (AdamW)"
                )));
            }
            let p = engine::EmaAdam {
                lr: lr as f32,
                ema_decay: emaDecay as f32,
                beta1: beta1 as f32,
                beta2: beta2 as f32,
                eps: eps as f32,
                mode,
                bias_correction: biasCorrection,
                weight_decay: weightDecay as f32,
            };
            let mut l = Launch::new("aclnnApplyFusedEmaAdam");
            l.input(&g);
            l.input(&st);
            for t in [&var, &m, &v, &s] {
                l.output(t);
            }
            l.finish(move |x, _| {
                engine::fused_ema_adam(&x[0], &x[1], p, &x[2], &x[3], &x[4], &x[5])
            })
        },
    )
}

/// `aclnnAdaLayerNormQuant` (see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn aclnnAdaLayerNormQuantGetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    shift: *const c_void,
    weightOptional: *const c_void,
    biasOptional: *const c_void,
    smoothScalesOptional: *const c_void,
    epsilon: f64,
    quantMode: *const c_char,
    out: *mut c_void,
    quantScale: *mut c_void,
    quantOffsetOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaLayerNormQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let sc = a::tensor(scale, "scale")?;
            let sh = a::tensor(shift, "shift")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let b = a::opt_tensor(biasOptional, "biasOptional")?;
            let sm = a::opt_tensor(smoothScalesOptional, "smoothScalesOptional")?;
            let o = a::tensor(out, "out")?;
            let qs = a::tensor(quantScale, "quantScale")?;
            if quantMode.is_null() {
                return Err(NnError::nullptr("quantMode is nullptr"));
            }
            let mode = std::ffi::CStr::from_ptr(quantMode).to_string_lossy();
            if mode != "dynamic" {
                return Err(NnError::invalid(format!(
                    "quantMode \"{mode}\" is not supported; only \"dynamic\""
                )));
            }
            if !quantOffsetOptional.is_null() {
                return Err(NnError::invalid(
                    "quantOffsetOptional must be nullptr: asymmetric quantisation is not supported",
                ));
            }
            a::dtype_in(&x, &[F16, BF16])?;
            let opt: Vec<&a::T> = [w.as_ref(), b.as_ref(), sm.as_ref()]
                .into_iter()
                .flatten()
                .collect();
            for t in [&sc, &sh].into_iter().chain(opt.iter().copied()) {
                a::same_dtype(t, &x)?;
            }
            super::model_ops::ada_shapes(&x, &[&sc, &sh], &opt)?;
            a::dtype_in(&o, &[I8])?;
            a::same_shape(&o, x.shape())?;
            a::dtype_in(&qs, &[F32])?;
            a::same_shape(&qs, &x.shape()[..x.ndim() - 1])?;
            let mut l = Launch::new("aclnnAdaLayerNormQuant");
            l.input(&x);
            l.input(&sc);
            l.input(&sh);
            let wi = w.as_ref().map(|t| l.input(t));
            let bi = b.as_ref().map(|t| l.input(t));
            let si = sm.as_ref().map(|t| l.input(t));
            let oi = l.output(&o);
            let qi = l.output(&qs);
            l.finish(move |v, _| {
                let at = |i: Option<usize>| i.map(|i| &v[i]);
                engine::ada_layer_norm_quant(
                    &v[0],
                    &v[1],
                    &v[2],
                    at(wi),
                    at(bi),
                    at(si),
                    epsilon,
                    &v[oi],
                    &v[qi],
                )
            })
        },
    )
}

/// `aclnnBatchMatmulQuant` (see the module documentation); CANN's op_api checks, all 161002.
#[no_mangle]
pub unsafe extern "C" fn aclnnBatchMatmulQuantGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    quantParam: *const c_void,
    bias: *const c_void,
    transposeX1: bool,
    transposeX2: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchMatmulQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x1 = a::tensor(x1, "x1")?;
            let x2 = a::tensor(x2, "x2")?;
            let qp = a::tensor(quantParam, "quantParam")?;
            let b = a::opt_tensor(bias, "bias")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x1, &[F16])?;
            a::dtype_in(&x2, &[F16])?;
            a::dtype_in(&qp, &[DType::U64])?;
            if let Some(t) = &b {
                a::dtype_in(t, &[F16])?;
            }
            a::dtype_in(&o, &[I8])?;
            let (d1, d2) = (x1.ndim(), x2.ndim());
            if d1 < 2 || d2 < 2 || d1 != d2 || d1 > 6 {
                return Err(NnError::invalid(format!(
                    "the dims of the two inputs should be the same, 2 to 6, now they are {:?}, {:?}",
                    x1.shape(),
                    x2.shape()
                )));
            }
            let (s1, s2) = (x1.shape(), x2.shape());
            let (m, k1) = if transposeX1 {
                (s1[d1 - 1], s1[d1 - 2])
            } else {
                (s1[d1 - 2], s1[d1 - 1])
            };
            let (k2, n) = if transposeX2 {
                (s2[d2 - 1], s2[d2 - 2])
            } else {
                (s2[d2 - 2], s2[d2 - 1])
            };
            let n16 = n.div_ceil(16) * 16;
            if qp.ndim() != 1 || (qp.shape()[0] != 1 && qp.shape()[0] != n16) {
                return Err(NnError::invalid(format!(
                    "quantParam {:?} must be 1-D with 1 or N aligned to 16 = {n16} elements",
                    qp.shape()
                )));
            }
            if let Some(t) = &b {
                if t.shape() != [n] {
                    return Err(NnError::invalid(format!(
                        "bias must be [N] = [{n}], but its shape is {:?}",
                        t.shape()
                    )));
                }
            }
            if k1 != k2 {
                return Err(NnError::invalid(format!(
                    "the k-axis of the two inputs are different {s1:?}, {s2:?}"
                )));
            }
            if s1[..d1 - 2] != s2[..d2 - 2] {
                return Err(NnError::invalid(format!(
                    "the batch dimensions of x1 {s1:?} and x2 {s2:?} differ"
                )));
            }
            let want = [&s1[..d1 - 2], &[m, n][..]].concat();
            a::same_shape(&o, &want)?;
            if [&x1, &x2, &o].iter().any(|t| t.numel() == 0) {
                return Err(NnError::invalid(
                    "aclnnBatchMatmulQuant does not support empty tensors",
                ));
            }
            let hb = b.is_some();
            let mut l = Launch::new("aclnnBatchMatmulQuant");
            l.input(&x1);
            l.input(&x2);
            l.input(&qp);
            if let Some(t) = &b {
                l.input(t);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let bv = hb.then(|| &v[3]);
                engine::batch_matmul_quant(
                    &v[0],
                    &v[1],
                    &v[2],
                    bv,
                    transposeX1,
                    transposeX2,
                    &v[v.len() - 1],
                )
            })
        },
    )
}

crate::phase2!(
    aclnnBatchMatmulQuant,
    aclnnAdaLayerNormQuant,
    aclnnApplyFusedEmaAdam,
    aclnnDynamicBlockQuant,
    aclnnFlatQuant,
    aclnnMaskedSoftmaxWithRelPosBias,
    aclnnDequantBias,
    aclnnQuantizedBatchNorm,
    aclnnExpandIntoJaggedPermute,
    aclnnBinaryCrossEntropyGradV2,
    aclnnGatherElementsV3,
    aclnnGroupedDynamicMxQuant,
    aclnnFusedMatmul
);
