//! Fused optimizer steps: `aclnn_apply_adam_w_v2.h` (ApplyAdamWV2),
//! `aclnn_apply_adam_w.h` (ApplyAdamW, hyper-parameters in device tensors) and
//! `aclnn_fused_sgd.h` (FusedSgd) and `aclnn_fused_adam.h` (FusedAdam, what torch_npu runs for
//! `torch.optim.Adam(fused=True)`). The engine is
//! `npu_emu::ops::optim`; `varRef`, `mRef`, `vRef` and (with amsgrad) `maxGradNormOptionalRef`
//! are updated in place. The step count is read from the `step` tensor when the task runs
//! (as CANN's kernel, this step is that count plus one; a negative count fails the task).

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::optim::{self, Adam, AdamW, AdamWV1, Sgd};
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

/// `aclnn_fused_sgd.h` (FusedSgd, what torch_npu runs for `torch.optim.SGD(fused=True)`):
/// every parameter, its gradient and (when given) its momentum buffer updated in place. The
/// checks follow the reference's order: the hyper-parameters, null pointers, list lengths, data
/// types, shapes. An empty momentum list or an empty `gradScaleOptional` counts as absent.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnFusedSgdGetWorkspaceSize(
    paramsRef: *const c_void,
    gradsRef: *const c_void,
    momentumBufferListOptionalRef: *const c_void,
    gradScaleOptional: *const c_void,
    weightDecay: f32,
    momentum: f32,
    lr: f32,
    dampening: f32,
    nesterov: bool,
    maximize: bool,
    isFirstStep: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedSgdGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            const EPS: f32 = 1e-6;
            let bufs = if momentumBufferListOptionalRef.is_null() {
                None
            } else {
                Some(a::tensor_list(
                    momentumBufferListOptionalRef,
                    "momentumBufferListOptionalRef",
                )?)
                .filter(|v| !v.is_empty())
            };
            let scale =
                a::opt_tensor(gradScaleOptional, "gradScaleOptional")?.filter(|t| t.numel() > 0);
            for (v, name) in [
                (weightDecay, "weightDecay"),
                (momentum, "momentum"),
                (lr, "lr"),
            ] {
                if v.is_nan() || v < 0.0 {
                    return Err(NnError::invalid(format!(
                        "{name} is {v}; it must be at least 0"
                    )));
                }
            }
            if nesterov && (momentum <= 0.0 || dampening.abs() >= EPS) {
                return Err(NnError::invalid(format!(
                    "nesterov momentum needs a momentum above 0 and dampening 0, but momentum is \
                 {momentum} and dampening {dampening}"
                )));
            }
            match (&bufs, momentum.abs() >= EPS) {
                (None, true) => {
                    return Err(NnError::invalid(format!(
                        "momentum is {momentum}, but there is no momentumBufferListOptionalRef; \
                     without momentum buffers momentum must be 0"
                    )))
                }
                (Some(_), false) => {
                    return Err(NnError::invalid(format!(
                        "momentum is {momentum}; with momentum buffers it must be above 0"
                    )))
                }
                _ => {}
            }
            let params = a::tensor_list(paramsRef, "paramsRef")?;
            let grads = a::tensor_list(gradsRef, "gradsRef")?;
            if params.is_empty() {
                return Err(NnError::invalid("paramsRef is an empty list"));
            }
            let lists = [Some(&grads), bufs.as_ref()];
            for (list, name) in lists
                .iter()
                .zip(["gradsRef", "momentumBufferListOptionalRef"])
            {
                if let Some(l) = list {
                    if l.len() != params.len() {
                        return Err(NnError::invalid(format!(
                            "{name} has {} tensors, but paramsRef has {}",
                            l.len(),
                            params.len()
                        )));
                    }
                }
            }
            for (i, p) in params.iter().enumerate() {
                a::dtype_in(p, FLOATS3)?;
                a::same_dtype(p, &params[0])?;
                a::max_dims(p, 8)?;
                for t in lists.iter().flatten().map(|l| &l[i]) {
                    a::dtype_in(t, FLOATS3)?;
                    a::same_dtype(t, &params[0])?;
                    a::same_shape(t, p.shape())?;
                }
            }
            if let Some(s) = &scale {
                a::dtype_in(s, FLOATS3)?;
                if s.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "gradScaleOptional must hold one element, but its shape is {:?}",
                        s.shape()
                    )));
                }
            }
            let h = Sgd {
                weight_decay: weightDecay as f64,
                momentum: momentum as f64,
                lr: lr as f64,
                dampening: dampening as f64,
                nesterov,
                maximize,
                first_step: isFirstStep,
            };
            let n = params.len();
            let mut l = Launch::new("aclnnFusedSgd");
            let with_scale = scale.is_some();
            if let Some(s) = &scale {
                l.input(s);
            }
            let p0 = l.outputs(&params);
            let g0 = l.outputs(&grads);
            let b0 = bufs.as_ref().map(|b| l.outputs(b));
            l.finish(move |x, _| {
                let s = if with_scale { Some(&x[0]) } else { None };
                for i in 0..n {
                    let b = b0.map(|b0| &x[b0 + i]);
                    optim::sgd(&x[p0 + i], &x[g0 + i], b, s, h)?;
                }
                Ok(())
            })
        },
    )
}

/// An optional one-element FLOAT tensor of FusedAdam (`gradScaleOptional`,
/// `foundInfOptional`); an empty tensor counts as absent, as torch_npu may pass one.
fn adam_scalar(h: *const c_void, name: &'static str) -> Result<Option<a::T>, NnError> {
    let t = a::opt_tensor(h, name)?.filter(|t| t.numel() > 0);
    if let Some(t) = &t {
        a::dtype_in(t, &[DType::F32])?;
        if t.numel() != 1 {
            return Err(NnError::invalid(format!(
                "{name} must hold one element, but its shape is {:?}",
                t.shape()
            )));
        }
    }
    Ok(t)
}

/// `aclnn_fused_adam.h` (FusedAdam): one Adam step of every parameter of the lists, in place
/// (parameters, first and second moments, with amsgrad their running maximum, and with a
/// gradient scale the unscaled gradients). The checks follow the reference's error table:
/// null lists, data types (parameters, gradients and moments FLOAT16, BFLOAT16 or FLOAT32,
/// all one type; stateSteps INT64 or FLOAT32; the scale and found-inf FLOAT), shapes, and the
/// list lengths. An empty maxExpAvgSqsRef list counts as absent (what torch passes without
/// amsgrad). A found-inf of 1 skips the whole step when the task runs.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnFusedAdamGetWorkspaceSize(
    paramsRef: *const c_void,
    gradsRef: *const c_void,
    expAvgsRef: *const c_void,
    expAvgSqsRef: *const c_void,
    maxExpAvgSqsRef: *const c_void,
    stateSteps: *const c_void,
    gradScaleOptional: *const c_void,
    foundInfOptional: *const c_void,
    lr: f64,
    beta1: f64,
    beta2: f64,
    weightDecay: f64,
    eps: f64,
    amsgrad: bool,
    maximize: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedAdamGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let params = a::tensor_list(paramsRef, "paramsRef")?;
            let grads = a::tensor_list(gradsRef, "gradsRef")?;
            let avgs = a::tensor_list(expAvgsRef, "expAvgsRef")?;
            let sqs = a::tensor_list(expAvgSqsRef, "expAvgSqsRef")?;
            let steps = a::tensor_list(stateSteps, "stateSteps")?;
            let maxs = if maxExpAvgSqsRef.is_null() {
                None
            } else {
                Some(a::tensor_list(maxExpAvgSqsRef, "maxExpAvgSqsRef")?).filter(|v| !v.is_empty())
            };
            if amsgrad && maxs.is_none() {
                return Err(NnError::nullptr(
                    "maxExpAvgSqsRef is nullptr or empty, but amsgrad is true",
                ));
            }
            let scale = adam_scalar(gradScaleOptional, "gradScaleOptional")?;
            let inf = adam_scalar(foundInfOptional, "foundInfOptional")?;
            if params.is_empty() {
                return Err(NnError::invalid("paramsRef is an empty list"));
            }
            let maxs = if amsgrad { maxs } else { None };
            let lists = [Some(&grads), Some(&avgs), Some(&sqs), maxs.as_ref()];
            let names = ["gradsRef", "expAvgsRef", "expAvgSqsRef", "maxExpAvgSqsRef"];
            for (i, p) in params.iter().enumerate() {
                a::dtype_in(p, FLOATS3)?;
                a::same_dtype(p, &params[0])?;
                for l in lists.iter().flatten() {
                    if let Some(t) = l.get(i) {
                        a::dtype_in(t, FLOATS3)?;
                        a::same_dtype(t, &params[0])?;
                    }
                }
            }
            for (list, name) in lists.iter().zip(names) {
                if let Some(l) = list {
                    if l.len() != params.len() {
                        return Err(NnError::invalid(format!(
                            "{name} has {} tensors, but paramsRef has {}",
                            l.len(),
                            params.len()
                        )));
                    }
                }
            }
            for (i, p) in params.iter().enumerate() {
                a::max_dims(p, 8)?;
                for t in lists.iter().flatten().map(|l| &l[i]) {
                    a::same_shape(t, p.shape())?;
                }
            }
            if steps.len() != params.len() {
                return Err(NnError::invalid(format!(
                    "stateSteps has {} tensors, but paramsRef has {}",
                    steps.len(),
                    params.len()
                )));
            }
            for s in &steps {
                a::dtype_in(s, &[DType::I64, DType::F32])?;
                if s.numel() == 0 {
                    return Err(NnError::invalid(
                        "a stateSteps tensor is empty; each holds the step count in its first \
                         element",
                    ));
                }
            }
            let h = Adam {
                lr,
                beta1,
                beta2,
                weight_decay: weightDecay,
                eps,
                amsgrad,
                maximize,
            };
            let n = params.len();
            let mut l = Launch::new("aclnnFusedAdam");
            let s0 = l.inputs(&steps);
            let scale_at = scale.as_ref().map(|s| l.input(s));
            let inf_at = inf.as_ref().map(|s| l.input(s));
            let p0 = l.outputs(&params);
            let g0 = l.outputs(&grads);
            let m0 = l.outputs(&avgs);
            let v0 = l.outputs(&sqs);
            let x0 = maxs.as_ref().map(|x| l.outputs(x));
            l.finish(move |x, _| {
                if optim::found_inf(inf_at.map(|i| &x[i])) {
                    return Ok(());
                }
                let scale = scale_at.map(|i| &x[i]);
                for i in 0..n {
                    let mx = x0.map(|x0| &x[x0 + i]);
                    optim::adam(
                        &x[p0 + i],
                        &x[g0 + i],
                        &x[m0 + i],
                        &x[v0 + i],
                        mx,
                        &x[s0 + i],
                        scale,
                        h,
                    )?;
                }
                Ok(())
            })
        },
    )
}

crate::phase2!(
    aclnnApplyAdamWV2,
    aclnnApplyAdamW,
    aclnnFusedSgd,
    aclnnFusedAdam
);
