//! `aclnn_fake_quant_per_tensor_affine_cachemask.h` and
//! `aclnn_fake_quant_per_channel_affine_cachemask.h`: what torch_npu calls for
//! `torch.fake_quantize_per_tensor_affine` / `…_per_channel_affine` (quantisation-aware
//! training; the gradient is `grad · mask`, composed by torch). The engine is
//! `npu_emu::ops::fake_quant`.

use super::args::{self as a, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::fake_quant as engine;
use std::ffi::c_void;

const FLOAT: &[DType] = &[DType::F16, DType::F32];

/// The checks both forms share: self FLOAT16/FLOAT32 of at most 8 dimensions, out of self's
/// type and mask BOOL both of self's shape, quantMin <= quantMax.
fn common(x: &T, out: &T, mask: &T, qmin: i64, qmax: i64) -> NnResult<()> {
    a::dtype_in(x, FLOAT)?;
    a::max_dims(x, 8)?;
    a::same_dtype(out, x)?;
    a::dtype_of(mask.dtype(), "mask", &[DType::Bool])?;
    a::same_shape(out, x.shape())?;
    a::same_shape(mask, x.shape())?;
    if qmin > qmax {
        return Err(NnError::invalid(format!(
            "quantMin {qmin} must not exceed quantMax {qmax}"
        )));
    }
    Ok(())
}

/// The launch both forms share: self, scale and zeroPoint in, out and mask out.
fn launch(
    api: &'static str,
    inputs: [&T; 3],
    outputs: [&T; 2],
    kernel: impl Fn(&[npu_emu::ops::View]) -> Result<(), String> + Send + Sync + 'static,
) -> NnResult<Built> {
    let mut l = Launch::new(api);
    for t in inputs {
        l.input(t);
    }
    for t in outputs {
        l.output(t);
    }
    l.finish(move |v, _| kernel(v))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnFakeQuantPerTensorAffineCachemaskGetWorkspaceSize(
    self_: *const c_void,
    scale: *const c_void,
    zeroPoint: *const c_void,
    fakeQuantEnabled: f32,
    quantMin: i64,
    quantMax: i64,
    out: *mut c_void,
    mask: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFakeQuantPerTensorAffineCachemaskGetWorkspaceSize",
        workspaceSize,
        executor,
        || -> NnResult<Built> {
            let x = a::tensor(self_, "self")?;
            let s = a::tensor(scale, "scale")?;
            let z = a::tensor(zeroPoint, "zeroPoint")?;
            let o = a::tensor(out, "out")?;
            let m = a::tensor(mask, "mask")?;
            common(&x, &o, &m, quantMin, quantMax)?;
            a::dtype_in(&s, FLOAT)?;
            a::dtype_of(z.dtype(), "zeroPoint", &[DType::I32])?;
            for t in [&s, &z] {
                if t.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "{} must hold one value, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let enabled = fakeQuantEnabled >= 1.0;
            let (qmin, qmax) = (quantMin, quantMax);
            launch(
                "aclnnFakeQuantPerTensorAffineCachemask",
                [&x, &s, &z],
                [&o, &m],
                move |v| engine::per_tensor(&v[0], &v[1], &v[2], enabled, qmin, qmax, &v[3], &v[4]),
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnFakeQuantPerChannelAffineCachemaskGetWorkspaceSize(
    self_: *const c_void,
    scale: *const c_void,
    zeroPoint: *const c_void,
    axis: i64,
    quantMin: i64,
    quantMax: i64,
    out: *mut c_void,
    mask: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFakeQuantPerChannelAffineCachemaskGetWorkspaceSize",
        workspaceSize,
        executor,
        || -> NnResult<Built> {
            let x = a::tensor(self_, "self")?;
            let s = a::tensor(scale, "scale")?;
            let z = a::tensor(zeroPoint, "zeroPoint")?;
            let o = a::tensor(out, "out")?;
            let m = a::tensor(mask, "mask")?;
            common(&x, &o, &m, quantMin, quantMax)?;
            if x.ndim() == 0 {
                return Err(NnError::invalid(
                    "self is 0-D; the per-channel form needs an axis",
                ));
            }
            let ax = a::dim(axis, x.ndim(), "axis")?;
            a::dtype_in(&s, FLOAT)?;
            a::dtype_of(
                z.dtype(),
                "zeroPoint",
                &[DType::I32, DType::F16, DType::F32],
            )?;
            let c = x.shape()[ax];
            for t in [&s, &z] {
                if t.ndim() != 1 || t.numel() != c {
                    return Err(NnError::invalid(format!(
                        "{} must be 1-D with self's {c} elements along axis {axis}, but its \
                         shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let (qmin, qmax) = (quantMin, quantMax);
            launch(
                "aclnnFakeQuantPerChannelAffineCachemask",
                [&x, &s, &z],
                [&o, &m],
                move |v| engine::per_channel(&v[0], &v[1], &v[2], ax, qmin, qmax, &v[3], &v[4]),
            )
        },
    )
}

crate::phase2!(
    aclnnFakeQuantPerTensorAffineCachemask,
    aclnnFakeQuantPerChannelAffineCachemask
);
