//! Fused optimizer steps: `aclnn_apply_adam_w_v2.h` (ApplyAdamWV2). The engine is
//! `npu_emu::ops::optim`; `varRef`, `mRef`, `vRef` and (with amsgrad) `maxGradNormOptionalRef`
//! are updated in place. The step count is read from the `step` tensor when the task runs
//! (a count below 1 fails the task).

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::optim::{self, AdamW};
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

crate::phase2!(aclnnApplyAdamWV2);
