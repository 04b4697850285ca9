//! Fused optimizer steps: `aclnn_apply_adam_w_v2.h` (ApplyAdamWV2) and
//! `aclnn_apply_adam_w.h` (ApplyAdamW, hyper-parameters in device tensors). The engine is
//! `npu_emu::ops::optim`; `varRef`, `mRef`, `vRef` and (with amsgrad) `maxGradNormOptionalRef`
//! are updated in place. The step count is read from the `step` tensor when the task runs
//! (a count below 1 fails the task).

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::optim::{self, AdamW, AdamWV1};
use std::ffi::c_void;

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnApplyAdamWV2GetWorkspaceSize(
    varRef: *mut c_void,
    mRef: *mut c_void,
    vRef: *mut c_void,
    maxGradNormOptionalRef: *mut c_void,
    grad: *const c_void,
    step: *const c_void,
    lr: f32,
    beta1: f32,
    beta2: f32,
    weightDecay: f32,
    eps: f32,
    amsgrad: bool,
    maximize: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyAdamWV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let var = a::tensor(varRef, "varRef")?;
            let m = a::tensor(mRef, "mRef")?;
            let v = a::tensor(vRef, "vRef")?;
            let mx = a::opt_tensor(maxGradNormOptionalRef, "maxGradNormOptionalRef")?;
            let g = a::tensor(grad, "grad")?;
            let s = a::tensor(step, "step")?;
            if amsgrad && mx.is_none() {
                return Err(NnError::nullptr(
                    "maxGradNormOptionalRef is nullptr, but amsgrad is true",
                ));
            }
            for t in [Some(&var), Some(&m), Some(&v), mx.as_ref(), Some(&g)]
                .into_iter()
                .flatten()
            {
                a::dtype_in(t, FLOATS3)?;
                a::max_dims(t, 8)?;
                a::same_shape(t, var.shape())?;
            }
            for t in [&m, &v] {
                if t.dtype() != var.dtype() {
                    return Err(NnError::invalid(format!(
                        "{} data type {} must be varRef's {}",
                        t.arg,
                        t.dtype(),
                        var.dtype()
                    )));
                }
            }
            a::dtype_in(&s, &[DType::I64, DType::F32])?;
            if s.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "step must hold one element, but its shape is {:?}",
                    s.shape()
                )));
            }
            let h = AdamW {
                lr: lr as f64,
                beta1: beta1 as f64,
                beta2: beta2 as f64,
                weight_decay: weightDecay as f64,
                eps: eps as f64,
                amsgrad,
                maximize,
            };
            let mut l = Launch::new("aclnnApplyAdamWV2");
            l.input(&g);
            l.input(&s);
            l.output(&var);
            l.output(&m);
            l.output(&v);
            let with_max = mx.is_some();
            if let Some(x) = &mx {
                l.output(x);
            }
            l.finish(move |x, _| {
                let vmax = if with_max { Some(&x[5]) } else { None };
                optim::adamw(&x[2], &x[3], &x[4], vmax, &x[0], &x[1], h)
            })
        },
    )
}

/// `aclnn_apply_adam_w.h` (ApplyAdamW, V1): the hyper-parameters are one-element device
/// tensors of varRef's data type (`beta1Power`, `beta2Power` = beta^(t-1)); with amsgrad,
/// `vRef` keeps `max(maxGradNormOptional, v)` as the reference's formula says (the maximum
/// tensor is only read).
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnApplyAdamWGetWorkspaceSize(
    varRef: *mut c_void,
    mRef: *mut c_void,
    vRef: *mut c_void,
    beta1Power: *const c_void,
    beta2Power: *const c_void,
    lr: *const c_void,
    weightDecay: *const c_void,
    beta1: *const c_void,
    beta2: *const c_void,
    eps: *const c_void,
    grad: *const c_void,
    maxGradNormOptional: *const c_void,
    amsgrad: bool,
    maximize: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyAdamWGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let var = a::tensor(varRef, "varRef")?;
            let m = a::tensor(mRef, "mRef")?;
            let v = a::tensor(vRef, "vRef")?;
            let mut scalars = vec![];
            for (h, name) in [
                (beta1Power, "beta1Power"),
                (beta2Power, "beta2Power"),
                (lr, "lr"),
                (weightDecay, "weightDecay"),
                (beta1, "beta1"),
                (beta2, "beta2"),
                (eps, "eps"),
            ] {
                scalars.push(a::tensor(h, name)?);
            }
            let g = a::tensor(grad, "grad")?;
            let mx = a::opt_tensor(maxGradNormOptional, "maxGradNormOptional")?;
            if amsgrad && mx.is_none() {
                return Err(NnError::nullptr(
                    "maxGradNormOptional is nullptr, but amsgrad is true",
                ));
            }
            a::dtype_in(&var, FLOATS3)?;
            a::max_dims(&var, 8)?;
            if var.ndim() == 0 {
                return Err(NnError::invalid(
                    "varRef must have 1 to 8 dimensions, but it is 0-D",
                ));
            }
            let ams = if amsgrad { mx.as_ref() } else { None };
            for t in [Some(&m), Some(&v), Some(&g), ams].into_iter().flatten() {
                a::same_shape(t, var.shape())?;
            }
            for t in [Some(&m), Some(&v), Some(&g), ams]
                .into_iter()
                .flatten()
                .chain(&scalars)
            {
                if t.dtype() != var.dtype() {
                    return Err(NnError::invalid(format!(
                        "{} data type {} must be varRef's {}",
                        t.arg,
                        t.dtype(),
                        var.dtype()
                    )));
                }
            }
            for t in &scalars {
                if t.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "{} must hold one element, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let h = AdamWV1 { amsgrad, maximize };
            let mut l = Launch::new("aclnnApplyAdamW");
            l.input(&g);
            for t in &scalars {
                l.input(t);
            }
            let with_max = ams.is_some();
            if let Some(x) = ams {
                l.input(x);
            }
            l.output(&var);
            l.output(&m);
            l.output(&v);
            l.finish(move |x, _| {
                let (mxv, first_out) = if with_max {
                    (Some(&x[8]), 9)
                } else {
                    (None, 8)
                };
                let o = &x[first_out..];
                optim::adamw_v1(&o[0], &o[1], &o[2], &x[0], mxv, &x[1..8], h)
            })
        },
    )
}

crate::phase2!(aclnnApplyAdamWV2, aclnnApplyAdamW);
