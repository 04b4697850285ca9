//! Pointwise losses and their gradients: L1, smooth L1 (Huber with `beta`), binary cross
//! entropy on probabilities and on logits (with class weights and positive weights),
//! Kullback–Leibler divergence (input in log space, target in log space or not).
//!
//! Every input is broadcast to the common shape and read as `f64`; the per-element losses
//! are computed in `f64` and either stored (reduction none, into `out` of the broadcast
//! shape) or summed in `f64` and stored once into the 0-d `out` (mean divides by the element
//! count). Gradients follow PyTorch's formulas (`torch/csrc/autograd` derivatives): the
//! incoming gradient is broadcast as well (0-d for mean/sum), mean divides by the count.

use super::dtype::DType;
use super::iter;
use super::nn::Reduction;
use super::view::{broadcast_shapes, View};

/// Which pointwise loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `|x - t|`.
    L1,
    /// `0.5 (x - t)^2 / beta` where `|x - t| < beta`, else `|x - t| - 0.5 beta` (`beta` 0 is L1).
    SmoothL1(f64),
    /// `-w (t ln x + (1 - t) ln(1 - x))`, each log clamped at -100 (PyTorch's choice).
    Bce,
    /// `w ((1 - t) x + (1 + (p - 1) t) (ln(1 + e^-|x|) + max(-x, 0)))`, `p` the positive
    /// weight (1 when absent).
    BceWithLogits,
    /// `t (ln t - x)` (0 where `t` is 0), or with a log-space target `e^t (t - x)`.
    KlDiv { log_target: bool },
}

/// Dense `f64` copy of `v` expanded to `shape`.
fn dense(v: &View, shape: &[usize], what: &str) -> Result<Vec<f64>, String> {
    let e = v
        .expand(shape)
        .ok_or_else(|| format!("{what} {:?} does not broadcast to {shape:?}", v.shape))?;
    let mut buf = vec![0f64; shape.iter().product()];
    if !buf.is_empty() {
        iter::copy(&e, &View::of_slice(&mut buf, DType::F64, shape))?;
    }
    Ok(buf)
}

fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let shape = out.shape.clone();
    iter::copy(&View::of_slice(&mut buf, DType::F64, &shape), out)
}

fn shape_of(views: &[&View]) -> Result<Vec<usize>, String> {
    let mut s: Vec<usize> = Vec::new();
    for v in views {
        s = broadcast_shapes(&s, &v.shape)
            .ok_or_else(|| format!("shapes {s:?} and {:?} do not broadcast", v.shape))?;
    }
    Ok(s)
}

/// The inputs of one loss, each as dense `f64` over the broadcast shape.
struct Inputs {
    x: Vec<f64>,
    t: Vec<f64>,
    w: Option<Vec<f64>>,
    p: Option<Vec<f64>>,
}

fn inputs(
    x: &View,
    t: &View,
    w: Option<&View>,
    p: Option<&View>,
    extra: Option<&View>,
) -> Result<(Vec<usize>, Inputs), String> {
    let mut all = vec![x, t];
    all.extend(w);
    all.extend(p);
    all.extend(extra);
    let shape = shape_of(&all)?;
    let i = Inputs {
        x: dense(x, &shape, "self")?,
        t: dense(t, &shape, "target")?,
        w: w.map(|w| dense(w, &shape, "weight")).transpose()?,
        p: p.map(|p| dense(p, &shape, "posWeight")).transpose()?,
    };
    Ok((shape, i))
}

fn one(kind: Kind, x: f64, t: f64, w: f64, p: f64) -> f64 {
    match kind {
        Kind::L1 => (x - t).abs(),
        Kind::SmoothL1(beta) => {
            let d = (x - t).abs();
            if d < beta {
                0.5 * d * d / beta
            } else {
                d - 0.5 * beta
            }
        }
        Kind::Bce => -w * (t * x.ln().max(-100.0) + (1.0 - t) * (1.0 - x).ln().max(-100.0)),
        Kind::BceWithLogits => {
            let lw = 1.0 + (p - 1.0) * t;
            w * ((1.0 - t) * x + lw * ((-x.abs()).exp().ln_1p() + (-x).max(0.0)))
        }
        Kind::KlDiv { log_target: true } => t.exp() * (t - x),
        Kind::KlDiv { log_target: false } => {
            if t == 0.0 {
                0.0
            } else {
                t * (t.ln() - x)
            }
        }
    }
}

fn grad_one(kind: Kind, x: f64, t: f64, w: f64, p: f64) -> f64 {
    match kind {
        Kind::L1 => sign(x - t),
        Kind::SmoothL1(beta) => {
            let d = x - t;
            if d.abs() < beta {
                d / beta
            } else {
                sign(d)
            }
        }
        // PyTorch clamps the denominator at 1e-12
        Kind::Bce => w * (x - t) / ((1.0 - x) * x).max(1e-12),
        Kind::BceWithLogits => {
            let s = 1.0 / (1.0 + (-x).exp());
            w * ((p * t + 1.0 - t) * s - p * t)
        }
        Kind::KlDiv { log_target: true } => -t.exp(),
        Kind::KlDiv { log_target: false } => -t,
    }
}

/// The gradient of KL divergence with respect to the target.
fn kl_target_grad(log_target: bool, x: f64, t: f64) -> f64 {
    if log_target {
        t.exp() * (t - x + 1.0)
    } else if t > 0.0 {
        t.ln() + 1.0 - x
    } else {
        0.0
    }
}

fn sign(d: f64) -> f64 {
    if d > 0.0 {
        1.0
    } else if d < 0.0 {
        -1.0
    } else if d.is_nan() {
        d
    } else {
        0.0
    }
}

/// The loss of `kind` between `x` and `t` (weights `w`, positive weights `p` where the kind
/// uses them), reduced into `out`.
pub fn loss(
    kind: Kind,
    x: &View,
    t: &View,
    w: Option<&View>,
    p: Option<&View>,
    reduction: Reduction,
    out: &View,
) -> Result<(), String> {
    let (shape, i) = inputs(x, t, w, p, None)?;
    let n = i.x.len();
    if kind == Kind::Bce {
        if let Some(bad) = i.x.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(format!(
                "all elements of self should be between 0 and 1, found {bad}"
            ));
        }
    }
    let l: Vec<f64> = (0..n)
        .map(|k| {
            let w = i.w.as_ref().map_or(1.0, |w| w[k]);
            let p = i.p.as_ref().map_or(1.0, |p| p[k]);
            one(kind, i.x[k], i.t[k], w, p)
        })
        .collect();
    match reduction {
        Reduction::None => {
            debug_assert_eq!(out.shape, shape);
            store(l, out)
        }
        Reduction::Sum | Reduction::Mean => {
            let s: f64 = l.iter().sum();
            let v = if reduction == Reduction::Mean {
                s / n as f64 // 0/0 = NaN for an empty input, as PyTorch gives
            } else {
                s
            };
            let mut o = out.clone();
            o.shape.clear();
            o.strides.clear();
            store(vec![v], &o)
        }
    }
}

/// The gradient of [`loss`] with respect to `x` (or `t`): `out` (the broadcast shape) =
/// `g * dloss/dx` (`g` broadcast; divided by the element count for mean).
#[allow(clippy::too_many_arguments)]
pub fn loss_backward(
    kind: Kind,
    wrt: Wrt,
    g: &View,
    x: &View,
    t: &View,
    w: Option<&View>,
    p: Option<&View>,
    reduction: Reduction,
    out: &View,
) -> Result<(), String> {
    let mut all = vec![g, x, t];
    all.extend(w);
    all.extend(p);
    let n = shape_of(&all)?.iter().product::<usize>();
    let k = if reduction == Reduction::Mean {
        1.0 / n.max(1) as f64
    } else {
        1.0
    };
    loss_grad(kind, wrt, g, x, t, w, p, k, out)
}

/// Which input a gradient is taken with respect to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrt {
    Input,
    /// The target (KL divergence, binary cross entropy with logits).
    Target,
}

/// `out` (the broadcast shape) = `k * g * dloss/d(wrt)`: the general form of
/// [`loss_backward`], with the reduction's factor `k` given (1 for none and sum, `1 / n` for
/// mean, `1 / batch` for KL divergence's batchmean).
#[allow(clippy::too_many_arguments)]
pub fn loss_grad(
    kind: Kind,
    wrt: Wrt,
    g: &View,
    x: &View,
    t: &View,
    w: Option<&View>,
    p: Option<&View>,
    k: f64,
    out: &View,
) -> Result<(), String> {
    let (shape, i) = inputs(x, t, w, p, Some(g))?;
    let gs = dense(g, &shape, "gradOutput")?;
    let n = i.x.len();
    let d: Vec<f64> = (0..n)
        .map(|j| {
            let w = i.w.as_ref().map_or(1.0, |w| w[j]);
            let p = i.p.as_ref().map_or(1.0, |p| p[j]);
            let dl = match (wrt, kind) {
                (Wrt::Target, Kind::KlDiv { log_target }) => {
                    kl_target_grad(log_target, i.x[j], i.t[j])
                }
                // d/dt of w((1 - t)x + (1 + (p - 1)t) softplus(-x))
                (Wrt::Target, Kind::BceWithLogits) => {
                    let x = i.x[j];
                    w * ((p - 1.0) * ((-x.abs()).exp().ln_1p() + (-x).max(0.0)) - x)
                }
                _ => grad_one(kind, i.x[j], i.t[j], w, p),
            };
            k * gs[j] * dl
        })
        .collect();
    store(d, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(data: &mut [f32], shape: &[usize]) -> View {
        View::of_slice(data, DType::F32, shape)
    }

    #[test]
    fn l1_and_smooth_l1_match_their_formulas() {
        let (mut x, mut t) = ([1.0f32, -2.0, 0.5], [0.0f32, 0.0, 0.0]);
        let mut o = [0f32; 3];
        let (xv, tv, ov) = (v(&mut x, &[3]), v(&mut t, &[3]), v(&mut o, &[3]));
        loss(Kind::L1, &xv, &tv, None, None, Reduction::None, &ov).unwrap();
        assert_eq!(o, [1.0, 2.0, 0.5]);
        let mut s = [0f32];
        let sv = v(&mut s, &[]);
        loss(
            Kind::SmoothL1(1.0),
            &xv,
            &tv,
            None,
            None,
            Reduction::Sum,
            &sv,
        )
        .unwrap();
        assert!((s[0] - (0.5 + 1.5 + 0.125)).abs() < 1e-6);
        let mut g = [1.0f32];
        let gv = v(&mut g, &[]);
        loss_backward(
            Kind::L1,
            Wrt::Input,
            &gv,
            &xv,
            &tv,
            None,
            None,
            Reduction::Mean,
            &ov,
        )
        .unwrap();
        assert_eq!(o, [1.0 / 3.0, -1.0 / 3.0, 1.0 / 3.0]);
    }

    #[test]
    fn bce_refuses_values_outside_0_1() {
        let (mut x, mut t) = ([1.5f32], [1.0f32]);
        let mut o = [0f32];
        let e = loss(
            Kind::Bce,
            &v(&mut x, &[1]),
            &v(&mut t, &[1]),
            None,
            None,
            Reduction::None,
            &v(&mut o, &[1]),
        )
        .unwrap_err();
        assert!(e.contains("between 0 and 1"), "{e}");
    }
}
