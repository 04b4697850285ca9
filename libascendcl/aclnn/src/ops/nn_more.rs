//! `aclnn_strided_slice.h`, `aclnn_add_v3.h`, `aclnn_apply_adam.h`, `aclnn_dropout_v3.h`,
//! `aclnn_dropout_v3_grad.h` and `aclnnDropoutGenMaskV2Tensor` (`aclnn_dropout_gen_mask_v2.h`
//! in CANN's tree): operators the installed torch_npu names (`npu_indexing`, a host scalar
//! plus a device tensor, `npu_apply_adam`, dropout in aclnn-only mode and under graph
//! capture), and `aclnnDynamicQuantV3/V4` (`npu_dynamic_quant` with a quant_mode).
//! Also CANN's experimental `aclnnReluV3` (ReLU with a bit mask), `aclnnHardShrink`,
//! `aclnnXlog1py`, `aclnnExpandv` and `aclnnSqrtBackward`. Engines: `npu_emu::ops::nn_more` (strided slice), `math::binary` (AddV3),
//! `train_extra::apply_adam_d` (ApplyAdam, in place) and `random` (the dropout bit masks,
//! the same Philox stream as `aclnnDropoutGenMaskV2`).

use super::args::{self as a, ALL_NUM, FLOATS3};
use super::arith::promote_scalar;
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::{can_cast, DType};
use npu_emu::ops::math::{self, scalar_view, Binary};
use npu_emu::ops::nn_more::{self as engine, QuantMode};
use npu_emu::ops::view::Scratch;
use npu_emu::ops::{elem, iter, random, train_extra};
use std::ffi::{c_char, c_void, CStr};

// ---- StridedSlice ----

/// The element types of `aclnnStridedSlice` the machine stores (the doc's list without the
/// complex and 8-bit float types, which `aclCreateTensor` here does not create).
const SLICE_TYPES: &[DType] = &[
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U64,
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::Bool,
];

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnStridedSliceGetWorkspaceSize(
    self_: *const c_void,
    begin: *const c_void,
    end: *const c_void,
    strides: *const c_void,
    beginMask: i64,
    endMask: i64,
    ellipsisMask: i64,
    newAxisMask: i64,
    shrinkAxisMask: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnStridedSliceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let b = a::int_array(begin, "begin")?;
            let e = a::int_array(end, "end")?;
            let s = a::int_array(strides, "strides")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, SLICE_TYPES)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let (axes, map, shape) = engine::slice_plan(
                x.shape(),
                &b,
                &e,
                &s,
                [
                    beginMask,
                    endMask,
                    ellipsisMask,
                    newAxisMask,
                    shrinkAxisMask,
                ],
            )
            .map_err(NnError::invalid)?;
            if shape.len() > 8 {
                return Err(NnError::invalid(format!(
                    "the result would have {} dimensions (more than 8)",
                    shape.len()
                )));
            }
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnStridedSlice");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::strided_slice(&v[0], &axes, &map, &v[1]))
        },
    )
}

// ---- AddV3 ----

/// The computation type of `scalar + alpha * tensor` (CANN's rule for AddV3: a floating
/// tensor computes in float32, float64 here kept in float64; otherwise the tensor/scalar
/// promotion of `aclnnAdds`).
fn add_v3_type(t: DType, s: DType, out: DType) -> DType {
    match t {
        DType::F16 | DType::BF16 | DType::F32 => DType::F32,
        _ => promote_scalar(t, s, out),
    }
}

fn add_v3(
    api: &'static str,
    self_: *const c_void,
    other: *const c_void,
    alpha: *const c_void,
    out: Option<*const c_void>,
) -> NnResult<Built> {
    let s = a::scalar(self_, if out.is_some() { "self" } else { "selfRef" })?;
    let y = a::tensor(other, "other")?;
    let al = a::scalar(alpha, "alpha")?;
    let o = match out {
        Some(p) => a::tensor(p, "out")?,
        None => y.clone(),
    };
    // The doc lists FLOAT, FLOAT16, INT32, INT8 and BFLOAT16; the other numeric types are
    // accepted too, as torch_npu sends every non-bool tensor here once the operator exists.
    a::dtype_in(&y, ALL_NUM)?;
    if y.dtype() == DType::Bool && s.dtype == DType::Bool {
        return Err(NnError::invalid(
            "self and other are both bool: AddV3 needs a numeric operand",
        ));
    }
    a::max_dims(&y, 8)?;
    let ct = add_v3_type(y.dtype(), s.dtype, o.dtype());
    let alpha_ok = if ct == DType::Bool {
        !al.dtype.is_float()
    } else {
        can_cast(al.dtype, ct)
    };
    if !alpha_ok {
        return Err(NnError::invalid(format!(
            "alpha data type {} cannot be cast to the computation type {ct}",
            al.dtype
        )));
    }
    if !can_cast(ct, o.dtype()) {
        return Err(NnError::invalid(format!(
            "the computation type {ct} cannot be cast to the {} data type {}",
            o.arg,
            o.dtype()
        )));
    }
    a::same_shape(&o, y.shape())?;
    let mut l = Launch::new(api);
    l.input(&y);
    l.output(&o);
    l.finish(move |v, _| {
        let mut buf = [0u64; 1];
        let sv = scalar_view(s, ct, &mut buf);
        math::binary(Binary::Add(al), &sv, &v[0], &v[1], ct)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddV3GetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || add_v3("aclnnAddV3", self_, other, alpha, Some(out)),
    )
}

/// CANN's in-place form writes the result into `other` (`selfRef` is a scalar).
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceAddV3GetWorkspaceSize(
    selfRef: *const c_void,
    other: *const c_void,
    alpha: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceAddV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || add_v3("aclnnInplaceAddV3", selfRef, other, alpha, None),
    )
}

// ---- ApplyAdam ----

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnApplyAdamGetWorkspaceSize(
    varRef: *mut c_void,
    m: *const c_void,
    v: *const c_void,
    beta1Power: *const c_void,
    beta2Power: *const c_void,
    lr: *const c_void,
    beta1: *const c_void,
    beta2: *const c_void,
    epsilon: *const c_void,
    grad: *const c_void,
    useLocking: bool,
    useNesterov: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyAdamGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let _ = useLocking; // does not change the arithmetic
            let p = a::tensor(varRef, "varRef")?;
            let m = a::tensor(m, "m")?;
            let v = a::tensor(v, "v")?;
            let s = [
                a::tensor(beta1Power, "beta1Power")?,
                a::tensor(beta2Power, "beta2Power")?,
                a::tensor(lr, "lr")?,
                a::tensor(beta1, "beta1")?,
                a::tensor(beta2, "beta2")?,
                a::tensor(epsilon, "epsilon")?,
            ];
            let g = a::tensor(grad, "grad")?;
            a::dtype_in(&p, FLOATS3)?;
            if p.ndim() == 0 || p.ndim() > 8 {
                return Err(NnError::invalid(format!(
                    "varRef must have 1 to 8 dimensions, but its shape is {:?}",
                    p.shape()
                )));
            }
            for t in [&m, &v, &g] {
                a::same_dtype(t, &p)?;
                a::same_shape(t, p.shape())?;
            }
            for t in &s {
                a::dtype_in(t, &[DType::F32])?;
                if t.shape() != [1] {
                    return Err(NnError::invalid(format!(
                        "{} must have shape [1], but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnApplyAdam");
            for t in [&m, &v].into_iter().chain(&s).chain([&g]) {
                l.input(t);
            }
            l.output(&p);
            l.output(&m);
            l.output(&v);
            l.finish(move |x, _| {
                // var (x[9]) is read and written in place; m and v are updated too.
                train_extra::apply_adam_d(
                    &x[9],
                    &x[0],
                    &x[1],
                    &x[2..8],
                    &x[8],
                    useNesterov,
                    &x[9],
                    &x[10],
                    &x[11],
                )
            })
        },
    )
}

// ---- DropoutV3, DropoutV3Grad, DropoutGenMaskV2Tensor ----

/// Bytes of a dropout bit mask for `n` elements: `align(n, 128) / 8`.
fn mask_bytes(n: usize) -> usize {
    n.div_ceil(128) * 128 / 8
}

fn prob(p: f64, arg: &str) -> NnResult<f64> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(NnError::invalid(format!("{arg} {p} must be in [0, 1]")))
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnDropoutV3GetWorkspaceSize(
    input: *const c_void,
    optionalNoiseShape: *const c_void,
    p: f64,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    maskOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            // optionalNoiseShape is reserved (the doc asks for NULL); a tensor is checked
            // for being one but does not change the result.
            if !optionalNoiseShape.is_null() {
                a::tensor(optionalNoiseShape, "optionalNoiseShape")?;
            }
            let o = a::tensor(out, "out")?;
            let m = a::tensor(maskOut, "maskOut")?;
            a::dtype_in(&x, FLOATS3)?;
            a::dtype_in(&o, FLOATS3)?;
            a::dtype_in(&m, &[DType::U8])?;
            a::max_dims(&x, 8)?;
            a::castable(x.dtype(), &o)?;
            a::same_shape(&o, x.shape())?;
            let p = prob(p, "p")?;
            if offset % 4 != 0 {
                return Err(NnError::invalid(format!(
                    "offset {offset} must be a multiple of 4"
                )));
            }
            let n = x.numel();
            let nb = mask_bytes(n);
            if m.shape() != [nb] {
                return Err(NnError::invalid(format!(
                    "maskOut must have shape [{nb}] (align({n}, 128) / 8 bytes of bits), but it is {:?}",
                    m.shape()
                )));
            }
            let mut l = Launch::new("aclnnDropoutV3");
            l.input(&x);
            l.output(&o);
            l.output(&m);
            l.finish(move |v, _| {
                // p = 0 and p = 1 leave maskOut as it is (the doc).
                if p == 0.0 {
                    return iter::copy(&v[0], &v[1]);
                }
                if p == 1.0 {
                    return iter::fill::<f64>(&v[1], 0.0);
                }
                random::dropout_mask(n, p, seed as u64, offset as u64, &v[2]);
                random::apply_mask(&v[0], &v[2], 1.0 / (1.0 - p), &v[1])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDropoutV3GradGetWorkspaceSize(
    gradY: *const c_void,
    mask: *const c_void,
    scale: f64,
    gradX: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutV3GradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradY, "gradY")?;
            let m = a::tensor(mask, "mask")?;
            let o = a::tensor(gradX, "gradX")?;
            a::dtype_in(&g, FLOATS3)?;
            a::dtype_in(&o, FLOATS3)?;
            a::dtype_in(&m, &[DType::U8])?;
            a::max_dims(&g, 8)?;
            a::max_dims(&m, 8)?;
            a::castable(g.dtype(), &o)?;
            a::same_shape(&o, g.shape())?;
            let nb = mask_bytes(g.numel());
            if m.numel() != nb {
                return Err(NnError::invalid(format!(
                    "mask has {} elements; {} elements of gradY need align({}, 128) / 8 = {nb}",
                    m.numel(),
                    g.numel(),
                    g.numel()
                )));
            }
            let mut l = Launch::new("aclnnDropoutV3Grad");
            l.input(&g);
            l.input(&m);
            l.output(&o);
            l.finish(move |v, _| {
                if v[0].numel() == 0 {
                    return Ok(());
                }
                // The bits are read in row-major order from a dense copy of the mask.
                let dense = Scratch::new(DType::U8, &v[1].shape);
                iter::copy(&v[1], &dense.view)?;
                let flat = dense.view.reshaped(&[v[1].numel()]);
                random::apply_mask(&v[0], &flat, scale, &v[2])
            })
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnDropoutGenMaskV2TensorGetWorkspaceSize(
    shape: *const c_void,
    prob_: f64,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: i64,
    probDataType: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutGenMaskV2TensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let shape = a::int_array(shape, "shape")?;
            let st = a::tensor(seedTensor, "seedTensor")?;
            let ot = a::tensor(offsetTensor, "offsetTensor")?;
            let o = a::tensor(out, "out")?;
            let pt = a::dtype(probDataType, "probDataType")?;
            a::dtype_of(pt, "probDataType", FLOATS3)?;
            a::dtype_in(&o, &[DType::U8])?;
            for t in [&st, &ot] {
                a::dtype_in(t, &[DType::I64])?;
                if t.shape() != [1] {
                    return Err(NnError::invalid(format!(
                        "{} must have shape [1], but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            if let Some(d) = shape.iter().find(|&&d| d < 0) {
                return Err(NnError::invalid(format!(
                    "shape {shape:?} has a negative size {d}"
                )));
            }
            let p = prob(prob_, "prob")?;
            let n: usize = shape.iter().map(|&d| d as usize).product();
            let nb = mask_bytes(n);
            if o.shape() != [nb] {
                return Err(NnError::invalid(format!(
                    "out must have shape [{nb}] (align({n}, 128) / 8 bytes of bits), but it is {:?}",
                    o.shape()
                )));
            }
            let mut l = Launch::new("aclnnDropoutGenMaskV2Tensor");
            l.input(&st);
            l.input(&ot);
            l.output(&o);
            l.finish(move |v, _| {
                // SAFETY: both are checked one-element INT64 tensors.
                let (seed, base) = unsafe {
                    (
                        elem::read_i64(DType::I64, v[0].ptr),
                        elem::read_i64(DType::I64, v[1].ptr),
                    )
                };
                let off = base.wrapping_add(offset);
                random::dropout_mask(n, p, seed as u64, off as u64, &v[2]);
                Ok(())
            })
        },
    )
}

// ---- DynamicQuantV3 / V4 ----

/// `aclnnDynamicQuantV3/V4`: INT8 output (dstType 2) only, as the machine has no INT4,
/// FLOAT8 or HIFLOAT8 tensors; groupIndexOptional (per token) picks each row's smooth row.
#[allow(clippy::too_many_arguments)]
unsafe fn dynamic_quant_v3(
    api: &'static str,
    x: *const c_void,
    smooth: *const c_void,
    group: *const c_void,
    dst_type: i64,
    symmetrical: bool,
    quant_mode: *const c_char,
    dst_type_max: Option<f32>,
    y: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
) -> NnResult<Built> {
    let x = a::tensor(x, "x")?;
    let sm = a::opt_tensor(smooth, "smoothScalesOptional")?;
    let g = a::opt_tensor(group, "groupIndexOptional")?;
    if quant_mode.is_null() {
        return Err(NnError::nullptr("quantMode is nullptr"));
    }
    let mode_s = CStr::from_ptr(quant_mode).to_string_lossy().into_owned();
    let mode = match mode_s.as_str() {
        "pertoken" => QuantMode::PerToken,
        "pertensor" => QuantMode::PerTensor,
        "perchannel" => QuantMode::PerChannel,
        _ => {
            return Err(NnError::invalid(format!(
                "quantMode \"{mode_s}\" must be \"pertoken\", \"pertensor\" or \"perchannel\""
            )))
        }
    };
    let y = a::tensor(y, "yOut")?;
    let s = a::tensor(scale, "scaleOut")?;
    let o = if symmetrical {
        if !offset.is_null() {
            return Err(NnError::invalid(
                "offsetOut must be nullptr when isSymmetrical is true",
            ));
        }
        None
    } else {
        Some(a::tensor(offset, "offsetOut")?)
    };
    a::dtype_in(&x, &[DType::F16, DType::BF16])?;
    let n = x.ndim();
    if !(2..=8).contains(&n) {
        return Err(NnError::invalid(format!(
            "x must have 2 to 8 dimensions, but its shape is {:?}",
            x.shape()
        )));
    }
    if let Some(m) = dst_type_max {
        if !(0.0..=32768.0).contains(&m) {
            return Err(NnError::invalid(format!(
                "dstTypeMax {m} must be in [0, 32768]"
            )));
        }
    }
    if dst_type != 2 {
        return Err(NnError::invalid(format!(
            "dstType {dst_type} is not supported: npu-emu quantizes to INT8 (2) only \
             (INT32-packed INT4, INT4, HIFLOAT8 and FLOAT8 outputs are not modelled)"
        )));
    }
    a::dtype_in(&y, &[DType::I8])?;
    a::same_shape(&y, x.shape())?;
    let sh = x.shape();
    if let Some(g) = &g {
        if mode != QuantMode::PerToken {
            return Err(NnError::invalid(
                "groupIndexOptional must be nullptr when quantMode is pertensor or perchannel",
            ));
        }
        let Some(sm) = &sm else {
            return Err(NnError::invalid(
                "groupIndexOptional needs smoothScalesOptional (one row per expert)",
            ));
        };
        a::dtype_in(g, &[DType::I32])?;
        if g.ndim() != 1 || g.shape()[0] == 0 || g.shape()[0] > 1024 {
            return Err(NnError::invalid(format!(
                "groupIndexOptional must be 1-D with 1 to 1024 experts, but its shape is {:?}",
                g.shape()
            )));
        }
        a::same_dtype(sm, &x)?;
        a::same_shape(sm, &[g.shape()[0], sh[n - 1]])?;
    } else if let Some(sm) = &sm {
        a::same_dtype(sm, &x)?;
        let want = if mode == QuantMode::PerChannel {
            sh[n - 2]
        } else {
            sh[n - 1]
        };
        a::same_shape(sm, &[want])?;
    }
    let scale_shape: Vec<usize> = match mode {
        QuantMode::PerToken => sh[..n - 1].to_vec(),
        QuantMode::PerTensor => vec![1],
        QuantMode::PerChannel => sh[..n - 2].iter().chain(&sh[n - 1..]).copied().collect(),
    };
    for t in std::iter::once(&s).chain(o.as_ref()) {
        a::dtype_in(t, &[DType::F32])?;
        a::same_shape(t, &scale_shape)?;
    }
    let mut l = Launch::new(api);
    l.input(&x);
    let smi = sm.as_ref().map(|t| l.input(t));
    let gi = g.as_ref().map(|t| l.input(t));
    let yi = l.output(&y);
    l.output(&s);
    let oi = o.as_ref().map(|t| l.output(t));
    l.finish(move |v, _| {
        engine::dynamic_quant_modes(
            &v[0],
            smi.map(|i| &v[i]),
            gi.map(|i| &v[i]),
            mode,
            &v[yi],
            &v[yi + 1],
            oi.map(|i| &v[i]),
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnDynamicQuantV3GetWorkspaceSize(
    x: *const c_void,
    smoothScalesOptional: *const c_void,
    groupIndexOptional: *const c_void,
    dstType: i64,
    isSymmetrical: bool,
    quantMode: *const c_char,
    yOut: *const c_void,
    scaleOut: *const c_void,
    offsetOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDynamicQuantV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            dynamic_quant_v3(
                "aclnnDynamicQuantV3",
                x,
                smoothScalesOptional,
                groupIndexOptional,
                dstType,
                isSymmetrical,
                quantMode,
                None,
                yOut,
                scaleOut,
                offsetOut,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnDynamicQuantV4GetWorkspaceSize(
    x: *const c_void,
    smoothScalesOptional: *const c_void,
    groupIndexOptional: *const c_void,
    dstType: i64,
    isSymmetrical: bool,
    quantMode: *const c_char,
    dstTypeMax: f32,
    yOut: *const c_void,
    scaleOut: *const c_void,
    offsetOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDynamicQuantV4GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            // dstTypeMax only acts on HIFLOAT8 outputs (the doc); INT8 ignores it.
            dynamic_quant_v3(
                "aclnnDynamicQuantV4",
                x,
                smoothScalesOptional,
                groupIndexOptional,
                dstType,
                isSymmetrical,
                quantMode,
                Some(dstTypeMax),
                yOut,
                scaleOut,
                offsetOut,
            )
        },
    )
}

// ---- ReluV3 ----

#[no_mangle]
pub unsafe extern "C" fn aclnnReluV3GetWorkspaceSize(
    x: *const c_void,
    yOut: *const c_void,
    maskOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnReluV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor_nc1hwc0(x, "x")?;
            let y = a::tensor_nc1hwc0(yOut, "yOut")?;
            let m = a::tensor(maskOut, "maskOut")?;
            let types = [
                DType::F16,
                DType::F32,
                DType::I32,
                DType::I8,
                DType::U8,
                DType::BF16,
            ];
            a::dtype_in(&x, &types)?;
            a::same_dtype(&y, &x)?;
            a::dtype_in(&m, &[DType::U8])?;
            if x.ndim() != 5 {
                return Err(NnError::invalid(format!(
                    "x must be 5-D (NC1HWC0), but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&y, x.shape())?;
            let mut ms = x.shape().to_vec();
            ms[4] = ms[4].div_ceil(8);
            if m.shape() != ms.as_slice() {
                return Err(NnError::invalid(format!(
                    "maskOut must have shape {ms:?} (x's shape with the last dimension in bytes of bits), but it is {:?}",
                    m.shape()
                )));
            }
            let mut l = Launch::new("aclnnReluV3");
            l.input(&x);
            l.output(&y);
            l.output(&m);
            l.finish(move |v, _| engine::relu_v3(&v[0], &v[1], &v[2]))
        },
    )
}

// ---- HardShrink, Xlog1py, Expandv (CANN's experimental set) ----

#[no_mangle]
pub unsafe extern "C" fn aclnnHardShrinkGetWorkspaceSize(
    self_: *const c_void,
    lambd: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHardShrinkGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let l = a::scalar(lambd, "lambd")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS3)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            a::same_shape(&o, x.shape())?;
            let lv = l.to_f64();
            let mut ln = Launch::new("aclnnHardShrink");
            ln.input(&x);
            ln.output(&o);
            ln.finish(move |v, _| engine::hard_shrink(&v[0], lv, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnXlog1pyGetWorkspaceSize(
    x: *const c_void,
    y: *const c_void,
    z: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnXlog1pyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let y = a::tensor(y, "y")?;
            let z = a::tensor(z, "z")?;
            a::dtype_in(&x, FLOATS3)?;
            a::same_dtype(&y, &x)?;
            a::same_dtype(&z, &x)?;
            for t in [&x, &y, &z] {
                a::max_dims(t, 8)?;
            }
            let shape = a::broadcast(&x, &y)?;
            a::same_shape(&z, &shape)?;
            let mut l = Launch::new("aclnnXlog1py");
            l.input(&x);
            l.input(&y);
            l.output(&z);
            l.finish(move |v, _| engine::xlog1py(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnExpandvGetWorkspaceSize(
    self_: *const c_void,
    shape: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnExpandvGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let sh = a::int_array(shape, "shape")?;
            let o = a::tensor(out, "out")?;
            let types = [
                DType::F32,
                DType::F16,
                DType::F64,
                DType::BF16,
                DType::I8,
                DType::I16,
                DType::I32,
                DType::I64,
                DType::U8,
                DType::Bool,
            ];
            a::dtype_in(&x, &types)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            if sh.len() > 8 || sh.len() < x.ndim() {
                return Err(NnError::invalid(format!(
                    "shape {sh:?} must have {} to 8 entries (self is {}-D)",
                    x.ndim(),
                    x.ndim()
                )));
            }
            // Right-aligned: a size-1 axis of self expands; -1 keeps self's size.
            let lead = sh.len() - x.ndim();
            let mut target = Vec::with_capacity(sh.len());
            for (i, &d) in sh.iter().enumerate() {
                let own = if i >= lead {
                    Some(x.shape()[i - lead])
                } else {
                    None
                };
                let t = match (d, own) {
                    (-1, Some(s)) => s,
                    (d, _) if d < 0 => {
                        return Err(NnError::invalid(format!(
                            "shape[{i}] = {d} is negative (only -1 on an axis of self keeps its size)"
                        )))
                    }
                    (d, Some(s)) if s != 1 && s as i64 != d => {
                        return Err(NnError::invalid(format!(
                            "self of shape {:?} cannot expand to {sh:?}: axis {} has size {s}, not 1 or {d}",
                            x.shape(),
                            i - lead
                        )))
                    }
                    (d, _) => d as usize,
                };
                target.push(t);
            }
            a::same_shape(&o, &target)?;
            let mut l = Launch::new("aclnnExpandv");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| iter::copy(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSqrtBackwardGetWorkspaceSize(
    y: *const c_void,
    dy: *const c_void,
    z: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSqrtBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let y = a::tensor(y, "y")?;
            let g = a::tensor(dy, "dy")?;
            let z = a::tensor(z, "z")?;
            a::dtype_in(&y, FLOATS3)?;
            a::same_dtype(&g, &y)?;
            a::same_dtype(&z, &y)?;
            a::max_dims(&y, 8)?;
            a::same_shape(&g, y.shape())?;
            a::same_shape(&z, y.shape())?;
            let mut l = Launch::new("aclnnSqrtBackward");
            l.input(&y);
            l.input(&g);
            l.output(&z);
            l.finish(move |v, _| engine::sqrt_backward(&v[0], &v[1], &v[2]))
        },
    )
}

crate::phase2!(
    aclnnStridedSlice,
    aclnnAddV3,
    aclnnInplaceAddV3,
    aclnnApplyAdam,
    aclnnDropoutV3,
    aclnnDropoutV3Grad,
    aclnnDropoutGenMaskV2Tensor,
    aclnnDynamicQuantV3,
    aclnnDynamicQuantV4,
    aclnnReluV3,
    aclnnHardShrink,
    aclnnXlog1py,
    aclnnExpandv,
    aclnnSqrtBackward,
);
