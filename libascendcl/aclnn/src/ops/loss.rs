//! Losses: `aclnn_mse_loss.h`, `aclnn_mse_loss_backward.h`, `aclnn_nll_loss.h`,
//! `aclnn_nll_loss_backward.h`, `aclnn_nll_loss2d.h`, `aclnn_nll_loss2d_backward.h` (self
//! `[N, C, H, W]`, target `[N, H, W]`, out `[N, H, W]` for none). `reduction` is 0 (none), 1 (mean) or 2 (sum).
//!
//! NLLLoss takes log-probabilities `self` `[N, C]` (or `[C]`), class indices `target` `[N]`
//! (INT64, INT32 or UINT8), class weights `weight` `[C]`; `out` is `[N]` for none, else 0-d;
//! `totalWeight` is 0-d (the summed weights of the counted targets). A target outside
//! `[0, C)` other than `ignoreIndex` fails the task (at the next synchronisation).
//!
//! Pointwise losses over `npu_emu::ops::loss` (`aclnn_l1_loss.h`, `aclnn_l1_loss_backward.h`,
//! `aclnn_smooth_l1_loss.h`, `aclnn_smooth_l1_loss_backward.h`,
//! `aclnn_binary_cross_entropy.h`, `aclnn_binary_cross_entropy_backward.h`,
//! `aclnn_binary_cross_entropy_with_logits.h`,
//! `aclnn_binary_cross_entropy_with_logits_backward.h`): FLOAT, FLOAT16 or BFLOAT16 inputs
//! (promoted together; the result type must cast to the output), `self` and `target`
//! broadcast (BCE: same shape), weights broadcast to `self`; `out` is the broadcast shape for
//! reduction none, else 0-d (or `[1]`). BCE's `self` outside `[0, 1]` fails the task.
//! `aclnn_kl_div.h`, `aclnn_kl_div_backward.h` and KlDivTargetBackward (the target's
//! gradient, which torch_npu calls; its signature is op-plugin's call, the operator
//! reference does not list it): `self` holds log-probabilities, `logTarget` says whether
//! `target` does too; reduction 1 (mean) divides by the element count as PyTorch does, the
//! backward forms also take 3 (batchmean: divided by `self.size(0)`).

use super::args::{self as a, FLOATS, FLOATS3};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::extra;
use npu_emu::ops::loss::{self as pl, Kind, Wrt};
use npu_emu::ops::nn::{self, Reduction};
use std::ffi::c_void;

pub(super) fn reduction(r: i64) -> NnResult<Reduction> {
    Reduction::from_i64(r).ok_or_else(|| {
        NnError::invalid(format!(
            "reduction {r} is not supported; 0 (none), 1 (mean) or 2 (sum)"
        ))
    })
}

pub(super) fn zero_d(t: &a::T) -> NnResult<()> {
    if t.numel() == 1 && t.ndim() <= 1 {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} must be 0-d, but its shape is {:?}",
            t.arg,
            t.shape()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMseLossGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMseLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_)?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&t, FLOATS)?;
            a::dtype_in(&o, FLOATS)?;
            let shape = a::broadcast(&x, &t)?;
            if r == Reduction::None {
                a::same_shape(&o, &shape)?;
            } else {
                zero_d(&o)?;
            }
            let mut l = Launch::new("aclnnMseLoss");
            l.input(&x);
            l.input(&t);
            l.output(&o);
            l.finish(move |v, _| {
                let mut out = v[2].clone();
                if r != Reduction::None {
                    out.shape.clear();
                    out.strides.clear();
                }
                nn::mse_loss(&v[0], &v[1], r, &out)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMseLossBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMseLossBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(gradInput, "gradInput")?;
            let r = reduction(reduction_)?;
            for v in [&g, &x, &t, &o] {
                a::dtype_in(v, FLOATS)?;
            }
            mse_backward("aclnnMseLossBackward", g, x, t, o, r)
        },
    )
}

/// The MSE gradient `out = 2 (x - t) g` (over the count for mean) of broadcast inputs, their
/// types checked by the caller (MseLossBackward, and MseLossGrad in `experimental.rs`).
pub(super) fn mse_backward(
    api: &'static str,
    g: a::T,
    x: a::T,
    t: a::T,
    o: a::T,
    r: Reduction,
) -> NnResult<Built> {
    let shape = a::broadcast_all(&[&g, &x, &t])?;
    a::same_shape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&x);
    l.input(&t);
    l.output(&o);
    l.finish(move |v, _| nn::mse_loss_backward(&v[0], &v[1], &v[2], r, &v[3]))
}

const TARGET_TYPES: &[DType] = &[DType::I64, DType::I32, DType::U8];

fn nll_shapes(x: &a::T, t: &a::T, w: &Option<a::T>) -> NnResult<usize> {
    if x.ndim() == 0 || x.ndim() > 2 {
        return Err(NnError::invalid(format!(
            "self must be 1-D or 2-D, but its shape is {:?}",
            x.shape()
        )));
    }
    let (n, c) = if x.ndim() == 1 {
        (1, x.shape()[0])
    } else {
        (x.shape()[0], x.shape()[1])
    };
    let tn = if t.ndim() == 0 { 1 } else { t.shape()[0] };
    if t.ndim() > 1 || tn != n || (x.ndim() == 1 && t.ndim() != 0 && tn != 1) {
        return Err(NnError::invalid(format!(
            "target shape {:?} does not match self {:?} (expected [{n}])",
            t.shape(),
            x.shape()
        )));
    }
    if let Some(w) = w {
        if w.shape() != [c] {
            return Err(NnError::invalid(format!(
                "weight must have shape [{c}], but it is {:?}",
                w.shape()
            )));
        }
    }
    Ok(n)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNLLLossGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    weight: *const c_void,
    reduction_: i64,
    ignoreIndex: i64,
    out: *mut c_void,
    totalWeightOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNLLLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weight, "weight")?;
            let o = a::tensor(out, "out")?;
            let tw = a::tensor(totalWeightOut, "totalWeightOut")?;
            let r = reduction(reduction_)?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&t, TARGET_TYPES)?;
            a::dtype_in(&o, FLOATS)?;
            a::dtype_in(&tw, FLOATS)?;
            if let Some(w) = &w {
                a::dtype_in(w, FLOATS)?;
            }
            let n = nll_shapes(&x, &t, &w)?;
            if r == Reduction::None && x.ndim() == 2 {
                a::same_shape(&o, &[n])?;
            } else {
                zero_d(&o)?;
            }
            zero_d(&tw)?;
            let mut l = Launch::new("aclnnNLLLoss");
            l.input(&x);
            l.input(&t);
            let has_w = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            l.output(&o);
            l.output(&tw);
            l.finish(move |v, _| {
                let k = 2 + has_w as usize;
                let out = if r == Reduction::None && v[0].ndim() == 2 {
                    v[k].clone()
                } else {
                    zero_view(&v[k])
                };
                nn::nll_loss(
                    &v[0],
                    &v[1],
                    if has_w { Some(&v[2]) } else { None },
                    r,
                    ignoreIndex,
                    &out,
                    &zero_view(&v[k + 1]),
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNLLLossBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    weight: *const c_void,
    reduction_: i64,
    ignoreIndex: i64,
    totalWeight: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNLLLossBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weight, "weight")?;
            let tw = a::tensor(totalWeight, "totalWeight")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_)?;
            a::dtype_in(&g, FLOATS)?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&t, TARGET_TYPES)?;
            a::dtype_in(&tw, FLOATS)?;
            a::dtype_in(&o, FLOATS)?;
            let n = nll_shapes(&x, &t, &w)?;
            if r == Reduction::None && x.ndim() == 2 {
                a::same_shape(&g, &[n])?;
            } else {
                zero_d(&g)?;
            }
            zero_d(&tw)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnNLLLossBackward");
            l.input(&g);
            l.input(&x);
            l.input(&t);
            l.input(&tw);
            let has_w = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let k = 4 + has_w as usize;
                let g = if r == Reduction::None && v[1].ndim() == 2 {
                    v[0].clone()
                } else {
                    zero_view(&v[0])
                };
                nn::nll_loss_backward(
                    &g,
                    &v[1],
                    &v[2],
                    if has_w { Some(&v[4]) } else { None },
                    r,
                    ignoreIndex,
                    &zero_view(&v[3]),
                    &v[k],
                )
            })
        },
    )
}

/// NLLLoss2d's shapes: `self` `[N, C, H, W]`, `target` `[N, H, W]`, `weight` `[C]`.
fn nll2d_shapes(x: &a::T, t: &a::T, w: &Option<a::T>) -> NnResult<Vec<usize>> {
    if x.ndim() != 4 {
        return Err(NnError::invalid(format!(
            "self must be 4-D [N, C, H, W], but its shape is {:?}",
            x.shape()
        )));
    }
    let s = x.shape();
    let want = vec![s[0], s[2], s[3]];
    if t.shape() != want.as_slice() {
        return Err(NnError::invalid(format!(
            "target must have shape {want:?} (self {:?} without C), but its shape is {:?}",
            s,
            t.shape()
        )));
    }
    if let Some(w) = w {
        a::dtype_in(w, FLOATS)?;
        a::same_shape(w, &[s[1]])?;
    }
    Ok(want)
}

/// `x` as a 0-d view of its first element (a scalar output such as a reduced loss, its
/// total weight, or a trace).
pub(crate) fn zero_view(x: &npu_emu::ops::View) -> npu_emu::ops::View {
    npu_emu::ops::View {
        shape: vec![],
        strides: vec![],
        ..x.clone()
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNLLLoss2dGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    weight: *const c_void,
    reduction_: i64,
    ignoreIndex: i64,
    out: *mut c_void,
    totalWeightOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNLLLoss2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weight, "weight")?;
            let o = a::tensor(out, "out")?;
            let tw = a::tensor(totalWeightOut, "totalWeightOut")?;
            let r = reduction(reduction_)?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&t, TARGET_TYPES)?;
            a::dtype_in(&o, FLOATS)?;
            a::dtype_in(&tw, FLOATS)?;
            let nhw = nll2d_shapes(&x, &t, &w)?;
            if r == Reduction::None {
                a::same_shape(&o, &nhw)?;
            } else {
                zero_d(&o)?;
            }
            zero_d(&tw)?;
            let mut l = Launch::new("aclnnNLLLoss2d");
            l.input(&x);
            l.input(&t);
            let has_w = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            l.output(&o);
            l.output(&tw);
            l.finish(move |v, _| {
                let k = 2 + has_w as usize;
                let out = if r == Reduction::None {
                    v[k].clone()
                } else {
                    zero_view(&v[k])
                };
                extra::nll_loss_nd(
                    &v[0],
                    &v[1],
                    if has_w { Some(&v[2]) } else { None },
                    r,
                    ignoreIndex,
                    &out,
                    &zero_view(&v[k + 1]),
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNLLLoss2dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    weight: *const c_void,
    reduction_: i64,
    ignoreIndex: i64,
    totalWeight: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNLLLoss2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weight, "weight")?;
            let tw = a::tensor(totalWeight, "totalWeight")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_)?;
            a::dtype_in(&g, FLOATS)?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&t, TARGET_TYPES)?;
            a::dtype_in(&tw, FLOATS)?;
            a::dtype_in(&o, FLOATS)?;
            let nhw = nll2d_shapes(&x, &t, &w)?;
            if r == Reduction::None {
                a::same_shape(&g, &nhw)?;
            } else {
                zero_d(&g)?;
            }
            zero_d(&tw)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnNLLLoss2dBackward");
            l.input(&g);
            l.input(&x);
            l.input(&t);
            l.input(&tw);
            let has_w = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let k = 4 + has_w as usize;
                let g = if r == Reduction::None {
                    v[0].clone()
                } else {
                    zero_view(&v[0])
                };
                extra::nll_loss_nd_backward(
                    &g,
                    &v[1],
                    &v[2],
                    if has_w { Some(&v[4]) } else { None },
                    r,
                    ignoreIndex,
                    &zero_view(&v[3]),
                    &v[k],
                )
            })
        },
    )
}

crate::phase2!(aclnnNLLLoss2d, aclnnNLLLoss2dBackward);

// ---- pointwise losses ----

/// The dtype every pointwise-loss tensor must have, and the promotion of `ts`.
fn loss_dtypes(ts: &[&a::T]) -> NnResult<DType> {
    let mut d: Option<(DType, &str)> = None;
    for t in ts {
        a::dtype_in(t, FLOATS3)?;
        d = Some(match d {
            None => (t.dtype(), t.arg),
            Some((pd, pn)) => (a::promote(pd, pn, t.dtype(), t.arg)?, pn),
        });
    }
    Ok(d.map(|(d, _)| d).unwrap_or(DType::F32))
}

/// BCE's `target` has `self`'s shape; its weights broadcast to `self`.
fn bce_shapes(x: &a::T, t: &a::T, ws: &[&Option<a::T>]) -> NnResult<()> {
    if t.shape() != x.shape() {
        return Err(NnError::invalid(format!(
            "target shape {:?} must be self's shape {:?}",
            t.shape(),
            x.shape()
        )));
    }
    for w in ws.iter().copied().flatten() {
        let b = npu_emu::ops::view::broadcast_shapes(w.shape(), x.shape());
        if b.as_deref() != Some(x.shape()) {
            return Err(NnError::invalid(format!(
                "{} shape {:?} does not broadcast to self's shape {:?}",
                w.arg,
                w.shape(),
                x.shape()
            )));
        }
    }
    Ok(())
}

/// Phase 1 of a pointwise loss: `ins` are self, target and the optional weights in the
/// order the kernel takes them.
#[allow(clippy::too_many_arguments)]
fn pointwise_loss(
    api: &'static str,
    kind: Kind,
    x: a::T,
    t: a::T,
    w: Option<a::T>,
    p: Option<a::T>,
    reduction_: i64,
    o: a::T,
) -> NnResult<Built> {
    let r = reduction(reduction_)?;
    let mut all = vec![&x, &t];
    all.extend(w.as_ref());
    all.extend(p.as_ref());
    let rt = loss_dtypes(&all)?;
    a::dtype_in(&o, FLOATS3)?;
    a::castable(rt, &o)?;
    for v in &all {
        a::max_dims(v, 8)?;
    }
    if matches!(kind, Kind::Bce | Kind::BceWithLogits) {
        bce_shapes(&x, &t, &[&w, &p])?;
    }
    let shape = a::broadcast_all(&all)?;
    if r == Reduction::None {
        a::same_shape(&o, &shape)?;
    } else {
        zero_d(&o)?;
    }
    let (hw, hp) = (w.is_some(), p.is_some());
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&t);
    if let Some(w) = &w {
        l.input(w);
    }
    if let Some(p) = &p {
        l.input(p);
    }
    l.output(&o);
    l.finish(move |v, _| {
        let wi = hw.then_some(&v[2]);
        let pi = hp.then(|| &v[2 + hw as usize]);
        pl::loss(kind, &v[0], &v[1], wi, pi, r, &v[v.len() - 1])
    })
}

#[allow(clippy::too_many_arguments)]
fn pointwise_loss_backward(
    api: &'static str,
    kind: Kind,
    g: a::T,
    x: a::T,
    t: a::T,
    w: Option<a::T>,
    p: Option<a::T>,
    reduction_: i64,
    o: a::T,
) -> NnResult<Built> {
    pointwise_loss_grad(api, kind, Wrt::Input, g, x, t, w, p, reduction_, o)
}

/// The checks and launch of a pointwise loss's gradient with respect to `wrt` (the input,
/// or the target: `aclnnBinaryCrossEntropyWithLogitsTargetBackward`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn pointwise_loss_grad(
    api: &'static str,
    kind: Kind,
    wrt: Wrt,
    g: a::T,
    x: a::T,
    t: a::T,
    w: Option<a::T>,
    p: Option<a::T>,
    reduction_: i64,
    o: a::T,
) -> NnResult<Built> {
    let r = reduction(reduction_)?;
    let mut all = vec![&g, &x, &t];
    all.extend(w.as_ref());
    all.extend(p.as_ref());
    let rt = loss_dtypes(&all)?;
    a::dtype_in(&o, FLOATS3)?;
    a::castable(rt, &o)?;
    for v in &all {
        a::max_dims(v, 8)?;
    }
    if matches!(kind, Kind::Bce | Kind::BceWithLogits) {
        bce_shapes(&x, &t, &[&w, &p])?;
    }
    let shape = a::broadcast_all(&all)?;
    a::same_shape(&o, &shape)?;
    let (hw, hp) = (w.is_some(), p.is_some());
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&x);
    l.input(&t);
    if let Some(w) = &w {
        l.input(w);
    }
    if let Some(p) = &p {
        l.input(p);
    }
    l.output(&o);
    l.finish(move |v, _| {
        let wi = hw.then_some(&v[3]);
        let pi = hp.then(|| &v[3 + hw as usize]);
        pl::loss_backward(kind, wrt, &v[0], &v[1], &v[2], wi, pi, r, &v[v.len() - 1])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnL1LossGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnL1LossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            pointwise_loss("aclnnL1Loss", Kind::L1, x, t, None, None, reduction_, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnL1LossBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnL1LossBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(gradInput, "gradInput")?;
            pointwise_loss_backward(
                "aclnnL1LossBackward",
                Kind::L1,
                g,
                x,
                t,
                None,
                None,
                reduction_,
                o,
            )
        },
    )
}

fn beta_of(beta: f32) -> NnResult<f64> {
    if beta.is_nan() || beta < 0.0 {
        return Err(NnError::invalid(format!("beta {beta} must be >= 0")));
    }
    Ok(beta as f64)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSmoothL1LossGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    beta: f32,
    result: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSmoothL1LossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(result, "result")?;
            let k = Kind::SmoothL1(beta_of(beta)?);
            pointwise_loss("aclnnSmoothL1Loss", k, x, t, None, None, reduction_, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSmoothL1LossBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    beta: f32,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSmoothL1LossBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(gradInput, "gradInput")?;
            let k = Kind::SmoothL1(beta_of(beta)?);
            pointwise_loss_backward(
                "aclnnSmoothL1LossBackward",
                k,
                g,
                x,
                t,
                None,
                None,
                reduction_,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBinaryCrossEntropyGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    weight: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBinaryCrossEntropyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weight, "weight")?;
            let o = a::tensor(out, "out")?;
            pointwise_loss(
                "aclnnBinaryCrossEntropy",
                Kind::Bce,
                x,
                t,
                w,
                None,
                reduction_,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    weightOptional: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBinaryCrossEntropyBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let o = a::tensor(out, "out")?;
            pointwise_loss_backward(
                "aclnnBinaryCrossEntropyBackward",
                Kind::Bce,
                g,
                x,
                t,
                w,
                None,
                reduction_,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    weightOptional: *const c_void,
    posWeightOptional: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let p = a::opt_tensor(posWeightOptional, "posWeightOptional")?;
            let o = a::tensor(out, "out")?;
            pointwise_loss(
                "aclnnBinaryCrossEntropyWithLogits",
                Kind::BceWithLogits,
                x,
                t,
                w,
                p,
                reduction_,
                o,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    weightOptional: *const c_void,
    posWeightOptional: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let p = a::opt_tensor(posWeightOptional, "posWeightOptional")?;
            let o = a::tensor(out, "out")?;
            pointwise_loss_backward(
                "aclnnBinaryCrossEntropyWithLogitsBackward",
                Kind::BceWithLogits,
                g,
                x,
                t,
                w,
                p,
                reduction_,
                o,
            )
        },
    )
}

// ---- KL divergence ----

#[no_mangle]
pub unsafe extern "C" fn aclnnKlDivGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    logTarget: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnKlDivGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            let k = Kind::KlDiv {
                log_target: logTarget,
            };
            pointwise_loss("aclnnKlDiv", k, x, t, None, None, reduction_, o)
        },
    )
}

/// KL divergence's backward forms: the gradient with respect to `wrt`; reduction 0..=3.
#[allow(clippy::too_many_arguments)]
fn kl_div_grad(
    api: &'static str,
    wrt: Wrt,
    grad_output: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    log_target: bool,
    out: *mut c_void,
) -> NnResult<Built> {
    let g = a::tensor(grad_output, "gradOutput")?;
    let x = a::tensor(self_, "self")?;
    let t = a::tensor(target, "target")?;
    let o = a::tensor(out, "out")?;
    if !(0..=3).contains(&reduction_) {
        return Err(NnError::invalid(format!(
            "reduction {reduction_} is not supported; 0 (none), 1 (mean), 2 (sum) or 3 (batchmean)"
        )));
    }
    let rt = loss_dtypes(&[&g, &x, &t])?;
    a::dtype_in(&o, FLOATS3)?;
    a::castable(rt, &o)?;
    for v in [&g, &x, &t] {
        a::max_dims(v, 8)?;
    }
    let shape = a::broadcast_all(&[&g, &x, &t])?;
    a::same_shape(&o, &shape)?;
    let n: usize = shape.iter().product();
    let batch = x.shape().first().copied().unwrap_or(1);
    let k = match reduction_ {
        1 => 1.0 / n.max(1) as f64,
        3 => 1.0 / batch.max(1) as f64,
        _ => 1.0,
    };
    let kind = Kind::KlDiv { log_target };
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&x);
    l.input(&t);
    l.output(&o);
    l.finish(move |v, _| pl::loss_grad(kind, wrt, &v[0], &v[1], &v[2], None, None, k, &v[3]))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnKlDivBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    logTarget: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnKlDivBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            kl_div_grad(
                "aclnnKlDivBackward",
                Wrt::Input,
                gradOutput,
                self_,
                target,
                reduction_,
                logTarget,
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnKlDivTargetBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    logTarget: bool,
    gradTarget: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnKlDivTargetBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            kl_div_grad(
                "aclnnKlDivTargetBackward",
                Wrt::Target,
                gradOutput,
                self_,
                target,
                reduction_,
                logTarget,
                gradTarget,
            )
        },
    )
}

crate::phase2!(aclnnKlDiv, aclnnKlDivBackward, aclnnKlDivTargetBackward);

crate::phase2!(
    aclnnL1Loss,
    aclnnL1LossBackward,
    aclnnSmoothL1Loss,
    aclnnSmoothL1LossBackward,
    aclnnBinaryCrossEntropy,
    aclnnBinaryCrossEntropyBackward,
    aclnnBinaryCrossEntropyWithLogits,
    aclnnBinaryCrossEntropyWithLogitsBackward,
);

crate::phase2!(
    aclnnMseLoss,
    aclnnMseLossBackward,
    aclnnNLLLoss,
    aclnnNLLLossBackward
);
