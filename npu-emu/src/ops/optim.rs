//! Fused optimizer steps: AdamW (`ApplyAdamWV2`), as PyTorch's `torch.optim.AdamW` defines
//! it, CANN's `ApplyAdamW` (V1: hyper-parameters and `beta^(t-1)` in device tensors, see
//! [`adamw_v1`]), SGD (`FusedSgd`, [`sgd`]) and Adam (`FusedAdam`, [`adam`]). A step is a
//! few chunked elementwise passes over the engine's iterator (each computing in float64 and
//! rounding once into its stored dtype), updating the optimizer's state (`m`, `v`, the running maximum of `v`, the momentum
//! buffer) and the parameter in place.

use super::dtype::DType;
use super::elem;
use super::iter::{copy, map1, map2, map3};
use super::view::{Scratch, View};

/// The hyper-parameters of one AdamW step.
#[derive(Clone, Copy, Debug)]
pub struct AdamW {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub weight_decay: f64,
    pub eps: f64,
    pub amsgrad: bool,
    pub maximize: bool,
}

/// One AdamW step with the step count read from `step` (one INT64 or FLOAT element): CANN's
/// kernel counts this step as `t = step + 1` (it adds one to what it reads, and torch_npu's
/// fused AdamW passes its `state_steps - 1`), so `step` is the number of steps taken before:
/// `g = maximize ? -grad : grad`, `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g^2`,
/// `vmax = max(vmax, v)` (amsgrad), `var = var (1 - lr wd) - lr / (1 - b1^t) * m /
/// (sqrt(v or vmax) / sqrt(1 - b2^t) + eps)`.
pub fn adamw(
    var: &View,
    m: &View,
    v: &View,
    vmax: Option<&View>,
    grad: &View,
    step: &View,
    h: AdamW,
) -> Result<(), String> {
    // SAFETY: `step` is a checked one-element view.
    let before = unsafe { elem::read_f64(step.dtype, step.ptr) };
    if !before.is_finite() || before < 0.0 {
        return Err(format!(
            "step {before} must be the number of steps taken before this one (0 or more)"
        ));
    }
    let t = before + 1.0;
    let sign = if h.maximize { -1.0 } else { 1.0 };
    let (b1, b2) = (h.beta1, h.beta2);
    map2::<f64, f64>(m, grad, m, move |m, g| b1 * m + (1.0 - b1) * sign * g)?;
    map2::<f64, f64>(v, grad, v, move |v, g| b2 * v + (1.0 - b2) * g * g)?;
    let second = match vmax {
        Some(mx) if h.amsgrad => {
            map2::<f64, f64>(mx, v, mx, |a, b| if b > a || a.is_nan() { b } else { a })?;
            mx
        }
        _ => v,
    };
    let bias1 = 1.0 - b1.powf(t);
    let sqrt_bias2 = (1.0 - b2.powf(t)).sqrt();
    let (lr, decay, eps) = (h.lr, 1.0 - h.lr * h.weight_decay, h.eps);
    map3::<f64, f64>(var, m, second, var, move |p, m, s| {
        p * decay - lr / bias1 * m / (s.sqrt() / sqrt_bias2 + eps)
    })
}

/// The hyper-parameters of one `FusedAdam` step (PyTorch's `torch.optim.Adam`: the weight
/// decay is L2, added to the gradient, not AdamW's decoupled decay).
#[derive(Clone, Copy, Debug)]
pub struct Adam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub weight_decay: f64,
    pub eps: f64,
    pub amsgrad: bool,
    pub maximize: bool,
}

/// Whether a `foundInfOptional` view holds exactly 1 (the `FusedAdam` kernel then skips the
/// whole step: no parameter, state or gradient is written).
pub fn found_inf(found_inf: Option<&View>) -> bool {
    // SAFETY: `found_inf` is a checked view with at least one element.
    found_inf.is_some_and(|f| unsafe { elem::read_f64(f.dtype, f.ptr) } == 1.0)
}

/// One `FusedAdam` step of one parameter as CANN's kernel computes it. `step` (INT64 or
/// FLOAT, its first element) is the number of steps taken before; the kernel counts this one
/// as `t = step + 1`. With a gradient scale `s` the gradient is unscaled (`g * (1 / s)`, the
/// float reciprocal) and written back; then `d = (maximize ? -g : g) + wd p`, `m = b1 m + (1 -
/// b1) d`, `v = b2 v + (1 - b2) d^2`, with amsgrad `vmax = max(vmax, v)`, and `p = p - lr /
/// (1 - b1^t) * m / (sqrt(vmax or v) / sqrt(1 - b2^t) + eps)`. As the kernel keeps one
/// parameter's values in wide local buffers, the update uses the new moments before they are
/// rounded into their stored type (a FLOAT16 `v` that rounds to 0 still divides by its value).
#[allow(clippy::too_many_arguments)]
pub fn adam(
    p: &View,
    grad: &View,
    m: &View,
    v: &View,
    vmax: Option<&View>,
    step: &View,
    scale: Option<&View>,
    h: Adam,
) -> Result<(), String> {
    // SAFETY: `step` is a checked view with at least one element.
    let before = unsafe { elem::read_f64(step.dtype, step.ptr) };
    if !before.is_finite() || before < 0.0 {
        return Err(format!(
            "stateSteps holds {before}; it must be the number of steps taken before this one \
             (0 or more)"
        ));
    }
    let inv = match scale {
        // SAFETY: `scale` is a checked one-element view.
        Some(s) => (1.0 / unsafe { elem::read_f64(s.dtype, s.ptr) } as f32) as f64,
        None => 1.0,
    };
    let t = before + 1.0;
    let sign = if h.maximize { -1.0 } else { 1.0 };
    let (b1, b2, wd) = (h.beta1, h.beta2, h.weight_decay);
    let d = move |g: f64, p: f64| sign * g * inv + wd * p;
    let (mf, vf) = (
        Scratch::new(DType::F64, &p.shape),
        Scratch::new(DType::F64, &p.shape),
    );
    map3::<f64, f64>(m, grad, p, &mf.view, move |m, g, p| {
        b1 * m + (1.0 - b1) * d(g, p)
    })?;
    map3::<f64, f64>(v, grad, p, &vf.view, move |v, g, p| {
        let d = d(g, p);
        b2 * v + (1.0 - b2) * d * d
    })?;
    let second = match vmax {
        Some(mx) if h.amsgrad => {
            let xf = Scratch::new(DType::F64, &p.shape);
            map2::<f64, f64>(mx, &vf.view, &xf.view, |a, b| {
                if b > a || a.is_nan() {
                    b
                } else {
                    a
                }
            })?;
            copy(&xf.view, mx)?;
            Some(xf)
        }
        _ => None,
    };
    let step_size = h.lr / (1.0 - b1.powf(t));
    let sqrt_bias2 = (1.0 - b2.powf(t)).sqrt();
    let eps = h.eps;
    let sv = second.as_ref().map_or(&vf.view, |x| &x.view);
    map3::<f64, f64>(p, &mf.view, sv, p, move |p, m, s| {
        p - step_size * m / (s.sqrt() / sqrt_bias2 + eps)
    })?;
    copy(&mf.view, m)?;
    copy(&vf.view, v)?;
    if scale.is_some() {
        map1::<f64, f64>(grad, grad, move |g| g * inv)?;
    }
    Ok(())
}

/// The scalars of an `ApplyAdamW` (V1) step, read from one-element device tensors:
/// `beta1Power`, `beta2Power` are `beta^(t-1)`.
#[derive(Clone, Copy, Debug)]
pub struct AdamWV1 {
    pub amsgrad: bool,
    pub maximize: bool,
}

/// One `ApplyAdamW` (V1) step as CANN documents it: `scalars` are the one-element views
/// `[beta1Power, beta2Power, lr, weightDecay, beta1, beta2, eps]`; `beta^t = betaPower *
/// beta`; `m` and `v` are the running moments; with amsgrad `v` keeps `max(maxGradNorm,
/// v)` (maxGradNorm is read only); `var = var (1 - lr wd) - lr m / (1 - b1^t) / (sqrt(v /
/// (1 - b2^t)) + eps)`.
pub fn adamw_v1(
    var: &View,
    m: &View,
    v: &View,
    grad: &View,
    max_grad_norm: Option<&View>,
    scalars: &[View],
    h: AdamWV1,
) -> Result<(), String> {
    // SAFETY: each scalar view is a checked one-element tensor.
    let s: Vec<f64> = scalars
        .iter()
        .map(|x| unsafe { elem::read_f64(x.dtype, x.ptr) })
        .collect();
    let (b1p, b2p, lr, wd, b1, b2, eps) = (s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
    let sign = if h.maximize { -1.0 } else { 1.0 };
    map2::<f64, f64>(m, grad, m, move |m, g| b1 * m + (1.0 - b1) * sign * g)?;
    map2::<f64, f64>(v, grad, v, move |v, g| b2 * v + (1.0 - b2) * g * g)?;
    if let (true, Some(mx)) = (h.amsgrad, max_grad_norm) {
        map2::<f64, f64>(v, mx, v, |a, b| if b > a || b.is_nan() { b } else { a })?;
    }
    let bias1 = 1.0 - b1p * b1;
    let bias2 = 1.0 - b2p * b2;
    let decay = 1.0 - lr * wd;
    map3::<f64, f64>(var, m, v, var, move |p, m, v| {
        p * decay - lr * (m / bias1) / ((v / bias2).sqrt() + eps)
    })
}

/// The hyper-parameters of one fused SGD step (`aclnnFusedSgd`, PyTorch's `torch.optim.SGD`).
#[derive(Clone, Copy, Debug)]
pub struct Sgd {
    pub weight_decay: f64,
    pub momentum: f64,
    pub lr: f64,
    pub dampening: f64,
    pub nesterov: bool,
    pub maximize: bool,
    pub first_step: bool,
}

/// One SGD step of one parameter, as CANN's FusedSgd kernel computes it: with a gradient
/// scale `s`, `grad = grad / s` is written back first; then `d = (maximize ? -grad : grad) +
/// wd p`; with a momentum buffer `buf = first ? d : mu buf + (1 - dampening) d` and the
/// update is `nesterov ? d + mu buf : buf`, without one it is `d`; `p = p - lr update`.
/// A zero `scale` fails the step (the reference forbids it).
pub fn sgd(
    p: &View,
    grad: &View,
    buf: Option<&View>,
    scale: Option<&View>,
    h: Sgd,
) -> Result<(), String> {
    if let Some(s) = scale {
        // SAFETY: `scale` is a checked one-element view.
        let s = unsafe { elem::read_f64(s.dtype, s.ptr) };
        if s == 0.0 {
            return Err("gradScaleOptional is 0; the gradients cannot be unscaled".into());
        }
        // The kernel multiplies by the float reciprocal.
        let inv = (1.0 / s as f32) as f64;
        map1::<f64, f64>(grad, grad, move |g| g * inv)?;
    }
    let sign = if h.maximize { -1.0 } else { 1.0 };
    let (wd, mu, lr) = (h.weight_decay, h.momentum, h.lr);
    let d = move |g: f64, p: f64| sign * g + wd * p;
    match buf {
        Some(b) => {
            let (first, keep) = (h.first_step, 1.0 - h.dampening);
            map3::<f64, f64>(b, grad, p, b, move |b, g, p| {
                if first {
                    d(g, p)
                } else {
                    mu * b + keep * d(g, p)
                }
            })?;
            let nesterov = h.nesterov;
            map3::<f64, f64>(p, grad, b, p, move |p, g, b| {
                p - lr * if nesterov { d(g, p) + mu * b } else { b }
            })
        }
        None => map2::<f64, f64>(p, grad, p, move |p, g| p - lr * d(g, p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::DType;

    #[test]
    fn two_steps_match_the_formula() {
        let mut p = vec![1.0f64, -2.0];
        let (mut m, mut v) = (vec![0f64; 2], vec![0f64; 2]);
        let mut g = vec![0.5f64, -1.0];
        let h = AdamW {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.999,
            weight_decay: 0.01,
            eps: 1e-8,
            amsgrad: false,
            maximize: false,
        };
        let (mut rp, mut rm, mut rv) = (p.clone(), m.clone(), v.clone());
        for t in 1..=2 {
            let mut s = vec![t as i64 - 1];
            let vs = View::of_slice(&mut s, DType::I64, &[1]);
            let vp = View::of_slice(&mut p, DType::F64, &[2]);
            let vm = View::of_slice(&mut m, DType::F64, &[2]);
            let vv = View::of_slice(&mut v, DType::F64, &[2]);
            let vg = View::of_slice(&mut g, DType::F64, &[2]);
            adamw(&vp, &vm, &vv, None, &vg, &vs, h).unwrap();
            for i in 0..2 {
                rp[i] *= 1.0 - 0.1 * 0.01;
                rm[i] = 0.9 * rm[i] + 0.1 * g[i];
                rv[i] = 0.999 * rv[i] + 0.001 * g[i] * g[i];
                let mh = rm[i] / (1.0 - 0.9f64.powi(t));
                let vh = rv[i] / (1.0 - 0.999f64.powi(t));
                rp[i] -= 0.1 * mh / (vh.sqrt() + 1e-8);
            }
        }
        for i in 0..2 {
            assert!((p[i] - rp[i]).abs() < 1e-12, "{p:?} {rp:?}");
        }
    }

    #[test]
    fn adam_step_unscales_adds_l2_decay_and_keeps_the_max() {
        // one FusedAdam step (step tensor 2: this is step 3) against the formula in float64
        let (mut p, mut g) = (vec![1.0f64, -2.0], vec![0.5f64, -1.0]);
        let (mut m, mut v, mut mx) = (vec![0.1f64, 0.2], vec![0.01f64, 0.5], vec![0.2f64, 0.0]);
        let (mut st, mut sc) = (vec![2.0f32, 9.0], vec![4.0f32]);
        let h = Adam {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.99,
            weight_decay: 0.05,
            eps: 1e-8,
            amsgrad: true,
            maximize: true,
        };
        let (p0, g0, m0, v0, x0) = (p.clone(), g.clone(), m.clone(), v.clone(), mx.clone());
        let f = |x: &mut Vec<f64>| View::of_slice(x, DType::F64, &[2]);
        let (vp, vg, vm, vv, vx) = (f(&mut p), f(&mut g), f(&mut m), f(&mut v), f(&mut mx));
        let vs = View::of_slice(&mut st, DType::F32, &[2]);
        let vsc = View::of_slice(&mut sc, DType::F32, &[1]);
        adam(&vp, &vg, &vm, &vv, Some(&vx), &vs, Some(&vsc), h).unwrap();
        for i in 0..2 {
            let gi = g0[i] * 0.25;
            let d = -gi + 0.05 * p0[i];
            let mi = 0.9 * m0[i] + 0.1 * d;
            let vi = 0.99 * v0[i] + 0.01 * d * d;
            let xi = f64::max(x0[i], vi);
            let pi = p0[i]
                - 0.1 / (1.0 - 0.9f64.powi(3)) * mi
                    / (xi.sqrt() / (1.0 - 0.99f64.powi(3)).sqrt() + 1e-8);
            assert!((g[i] - gi).abs() < 1e-15, "{g:?}");
            assert!(
                (m[i] - mi).abs() < 1e-15 && (v[i] - vi).abs() < 1e-15,
                "{m:?} {v:?}"
            );
            assert!((mx[i] - xi).abs() < 1e-15, "{mx:?}");
            assert!((p[i] - pi).abs() < 1e-12, "{p:?} vs {pi}");
        }
    }

    #[test]
    fn adam_updates_from_the_unrounded_moments() {
        // a FLOAT16 second moment that rounds to 0 must not leave the update as m / eps
        let mut p = vec![half::f16::from_f32(0.5)];
        let mut g = vec![half::f16::from_f32(1e-4)];
        let (mut m, mut v) = (vec![half::f16::ZERO], vec![half::f16::ZERO]);
        let mut st = vec![0i64];
        let h = Adam {
            lr: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            weight_decay: 0.0,
            eps: 1e-8,
            amsgrad: false,
            maximize: false,
        };
        let f = |x: &mut Vec<half::f16>| View::of_slice(x, DType::F16, &[1]);
        let (vp, vg, vm, vv) = (f(&mut p), f(&mut g), f(&mut m), f(&mut v));
        let vs = View::of_slice(&mut st, DType::I64, &[1]);
        adam(&vp, &vg, &vm, &vv, None, &vs, None, h).unwrap();
        assert_eq!(v[0], half::f16::ZERO);
        // step 1: m_hat / sqrt(v_hat) = sign(g), so p moves by lr
        assert!((p[0].to_f32() - 0.49).abs() < 1e-3, "{}", p[0]);
    }

    #[test]
    fn v1_step_uses_the_power_tensors_and_keeps_the_max_in_v() {
        let mut p = vec![1.0f64];
        let (mut m, mut v) = (vec![0.5f64], vec![0.01f64]);
        let mut g = vec![0.2f64];
        let mut mx = vec![0.5f64];
        // beta1Power, beta2Power, lr, weightDecay, beta1, beta2, eps
        let mut s = [0.81f64, 0.998001, 0.1, 0.01, 0.9, 0.999, 1e-8];
        let scalars: Vec<View> = s
            .iter_mut()
            .map(|x| View::of_slice(std::slice::from_mut(x), DType::F64, &[1]))
            .collect();
        let vp = View::of_slice(&mut p, DType::F64, &[1]);
        let vm = View::of_slice(&mut m, DType::F64, &[1]);
        let vv = View::of_slice(&mut v, DType::F64, &[1]);
        let vg = View::of_slice(&mut g, DType::F64, &[1]);
        let vx = View::of_slice(&mut mx, DType::F64, &[1]);
        let h = AdamWV1 {
            amsgrad: true,
            maximize: false,
        };
        adamw_v1(&vp, &vm, &vv, &vg, Some(&vx), &scalars, h).unwrap();
        let rm = 0.9 * 0.5 + 0.1 * 0.2;
        let rv = f64::max(0.999 * 0.01 + 0.001 * 0.04, 0.5);
        let (bc1, bc2) = (1.0 - 0.729, 1.0 - 0.999f64.powi(3));
        let rp = 1.0 * (1.0 - 0.1 * 0.01) - 0.1 * (rm / bc1) / ((rv / bc2).sqrt() + 1e-8);
        assert!(
            (m[0] - rm).abs() < 1e-15 && (v[0] - rv).abs() < 1e-15,
            "{m:?} {v:?}"
        );
        assert!((p[0] - rp).abs() < 1e-12, "{p:?} vs {rp}");
        assert_eq!(mx, vec![0.5]);
    }
}
