//! Pointwise gradients and losses of CANN's `experimental/` operator set (ops-math and
//! ops-nn) that have no twin elsewhere in the engine: the Asin and Acosh gradients, the
//! Huber, hinge, hinge-embedding and Gaussian negative log-likelihood losses (and the
//! latter's gradient), MSE reduced over the leading axis only, ReLU with its mask and the
//! mask-driven ReLU gradient, and the plain gradient-descent step.
//!
//! Each element is read as `f64`, computed in `f64` and rounded once into the output's
//! type; reductions sum in `f64` and store once.

use super::dtype::DType;
use super::extra::{load, store};
use super::iter::{map1, map2, map3};
use super::nn::Reduction;
use super::view::View;

/// `z = dy / sqrt(1 - y^2)` (the gradient of asin at the input `y`).
pub fn asin_grad(y: &View, dy: &View, z: &View) -> Result<(), String> {
    map2::<f64, f64>(y, dy, z, |y, g| g / (1.0 - y * y).sqrt())
}

/// `dx = dy / sinh(y)` (the gradient of acosh, `y` its output).
pub fn acosh_grad(y: &View, dy: &View, dx: &View) -> Result<(), String> {
    map2::<f64, f64>(y, dy, dx, |y, g| g / y.sinh())
}

/// Huber loss per element: `0.5 e^2` where `|e| <= delta`, else `delta (|e| - 0.5 delta)`,
/// `e = x - t`.
pub fn huber(x: &View, t: &View, delta: f64, out: &View) -> Result<(), String> {
    map2::<f64, f64>(x, t, out, move |x, t| {
        let e = (x - t).abs();
        if e <= delta {
            0.5 * e * e
        } else {
            delta * (e - 0.5 * delta)
        }
    })
}

/// Hinge loss per element: `max(0, 1 - t x)`.
pub fn hinge(x: &View, t: &View, out: &View) -> Result<(), String> {
    map2::<f64, f64>(x, t, out, |x, t| (1.0 - t * x).max(0.0))
}

/// Sum or mean of the dense `l` stored into the one-element `out`; or `l` itself (none).
fn reduce_into(l: Vec<f64>, reduction: Reduction, out: &View) -> Result<(), String> {
    match reduction {
        Reduction::None => store(l, DType::F64, out),
        Reduction::Sum | Reduction::Mean => {
            let n = l.len();
            let s: f64 = l.iter().sum();
            let v = if reduction == Reduction::Mean {
                s / n as f64
            } else {
                s
            };
            store(vec![v], DType::F64, out)
        }
    }
}

/// Hinge embedding loss: with `w = (t + 1) / 2` and `n = max(0, margin - x)`, each element
/// is `n + (x - n) w` (`x` where `t` is 1, `n` where `t` is -1, as the kernel computes it),
/// then reduced into `out` (`x`'s shape for none, one element otherwise).
pub fn hinge_embedding(
    x: &View,
    t: &View,
    margin: f64,
    reduction: Reduction,
    out: &View,
) -> Result<(), String> {
    let xs: Vec<f64> = load(x, DType::F64)?;
    let ts: Vec<f64> = load(t, DType::F64)?;
    let l = xs
        .iter()
        .zip(&ts)
        .map(|(&x, &t)| {
            let n = (margin - x).max(0.0);
            n + (x - n) * ((t + 1.0) * 0.5)
        })
        .collect();
    reduce_into(l, reduction, out)
}

/// `var`'s shape under the Gaussian NLL rule: one dimension fewer than `x` and equal to
/// `x`'s leading dimensions reads as `var.unsqueeze(-1)`; any other shape broadcasts as it
/// is (the same shape, last dimension 1, a size-1 axis, a single element).
fn gaussian_var_shape(var: &[usize], x: &[usize]) -> Vec<usize> {
    let mut s = var.to_vec();
    if var.len() + 1 == x.len() && var == &x[..var.len()] {
        s.push(1);
    }
    s
}

/// `var` seen with `x`'s shape under [`gaussian_var_shape`]'s rule.
pub fn gaussian_expand(var: &View, shape: &[usize]) -> Option<View> {
    let mut v = var.clone();
    if gaussian_var_shape(&var.shape, shape).len() > var.ndim() {
        v.shape.push(1);
        v.strides.push(1);
    }
    v.expand(shape)
}

/// Dense `f64` input, target and variance of a Gaussian NLL, all of the input's shape.
struct Gaussian {
    x: Vec<f64>,
    t: Vec<f64>,
    v: Vec<f64>,
}

fn gaussian_inputs(x: &View, t: &View, var: &View) -> Result<Gaussian, String> {
    let shape = x.shape.clone();
    let te = t
        .expand(&shape)
        .ok_or_else(|| format!("target {:?} does not broadcast to {shape:?}", t.shape))?;
    let ve = gaussian_expand(var, &shape)
        .ok_or_else(|| format!("var {:?} does not broadcast to {shape:?}", var.shape))?;
    Ok(Gaussian {
        x: load(x, DType::F64)?,
        t: load(&te, DType::F64)?,
        v: load(&ve, DType::F64)?,
    })
}

/// Gaussian negative log-likelihood: `0.5 (ln v + d^2 / v)` (plus `0.5 ln 2 pi` when
/// `full`) with `d = x - t`, `v = max(var, eps)`; `t` and `var` are expanded to `x`'s shape
/// ([`gaussian_expand`]).
pub fn gaussian_nll(
    x: &View,
    t: &View,
    var: &View,
    full: bool,
    eps: f64,
    reduction: Reduction,
    out: &View,
) -> Result<(), String> {
    let Gaussian {
        x: xs,
        t: ts,
        v: vs,
    } = gaussian_inputs(x, t, var)?;
    let c = if full {
        0.5 * (2.0 * std::f64::consts::PI).ln()
    } else {
        0.0
    };
    let l = (0..xs.len())
        .map(|i| {
            let v = vs[i].max(eps);
            let d = xs[i] - ts[i];
            0.5 * (v.ln() + d * d / v) + c
        })
        .collect();
    reduce_into(l, reduction, out)
}

/// Gradients of [`gaussian_nll`]: `gx = g d / v`, `gv = g 0.5 (1 / v - d^2 / v^2)` (times
/// `1 / n` for mean; `g` is `x`'s shape for none, one element otherwise); `gv` is summed
/// back to `var`'s own shape.
#[allow(clippy::too_many_arguments)]
pub fn gaussian_nll_grad(
    g: &View,
    x: &View,
    t: &View,
    var: &View,
    eps: f64,
    reduction: Reduction,
    gx: &View,
    gvar: &View,
) -> Result<(), String> {
    let Gaussian {
        x: xs,
        t: ts,
        v: vs,
    } = gaussian_inputs(x, t, var)?;
    let n = xs.len();
    let gs: Vec<f64> = load(g, DType::F64)?;
    let k = if reduction == Reduction::Mean {
        1.0 / n.max(1) as f64
    } else {
        1.0
    };
    let gat = |i: usize| {
        k * if reduction == Reduction::None {
            gs[i]
        } else {
            gs[0]
        }
    };
    let mut dx = vec![0f64; n];
    // each element's var gradient goes to the var element it read
    let vshape = gaussian_var_shape(&var.shape, &x.shape);
    let dense = View {
        ptr: std::ptr::null_mut(),
        dtype: DType::F64,
        strides: super::view::contiguous_strides(&vshape),
        shape: vshape,
    };
    let map = dense
        .broadcast_strides(&x.shape)
        .ok_or("var does not broadcast")?;
    let mut dv = vec![0f64; var.numel()];
    let mut idx = vec![0usize; x.ndim()];
    for i in 0..n {
        let v = vs[i].max(eps);
        let d = xs[i] - ts[i];
        let gi = gat(i);
        dx[i] = gi * d / v;
        let at: isize = idx.iter().zip(&map).map(|(&j, &s)| j as isize * s).sum();
        dv[at as usize] += gi * 0.5 * (1.0 / v - d * d / (v * v));
        for a in (0..idx.len()).rev() {
            idx[a] += 1;
            if idx[a] < x.shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    store(dx, DType::F64, gx)?;
    store(dv, DType::F64, gvar)
}

/// `(x - t)^2` (broadcast), then for mean or sum reduced over the leading axis only (what
/// aclnnMseLossOut computes); `out` has the broadcast shape without its first dimension.
pub fn mse_loss_axis0(x: &View, t: &View, reduction: Reduction, out: &View) -> Result<(), String> {
    let shape =
        super::view::broadcast_shapes(&x.shape, &t.shape).ok_or("shapes do not broadcast")?;
    let s = super::view::Scratch::new(DType::F64, &shape);
    map2::<f64, f64>(x, t, &s.view, |a, b| (a - b) * (a - b))?;
    let op = match reduction {
        Reduction::None => return super::iter::copy(&s.view, out),
        Reduction::Mean => super::reduce::Reduce::Mean,
        Reduction::Sum => super::reduce::Reduce::Sum,
    };
    if shape.is_empty() {
        return super::iter::copy(&s.view, out);
    }
    super::reduce::reduce(op, &s.view, &[0], out, false)
}

/// `y = max(x, 0)` and `mask = x > 0` (as 0/1 in the mask's type).
pub fn relu_with_mask(x: &View, y: &View, mask: &View) -> Result<(), String> {
    map1::<f64, f64>(x, y, |v| if v > 0.0 || v.is_nan() { v } else { 0.0 })?;
    map1::<f64, f64>(x, mask, |v| if v > 0.0 { 1.0 } else { 0.0 })
}

/// `out = g` where `x > 0`, else 0 (`g` broadcast).
pub fn relu_grad(x: &View, g: &View, out: &View) -> Result<(), String> {
    map2::<f64, f64>(x, g, out, |x, g| if x > 0.0 { g } else { 0.0 })
}

/// `out = g` where `mask` is non-zero, else 0.
pub fn masked_grad(g: &View, mask: &View, out: &View) -> Result<(), String> {
    map2::<f64, f64>(g, mask, out, |g, m| if m != 0.0 { g } else { 0.0 })
}

/// `var -= alpha * delta` (`alpha` broadcast).
pub fn gradient_descent(var: &View, alpha: &View, delta: &View) -> Result<(), String> {
    map3::<f64, f64>(var, alpha, delta, var, |v, a, d| v - a * d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(data: &mut [f32], shape: &[usize]) -> View {
        View::of_slice(data, DType::F32, shape)
    }

    #[test]
    fn gaussian_grad_sums_the_var_gradient_back() {
        let mut x = [1.0f32, 2.0, 3.0, 4.0];
        let mut t = [0.0f32; 4];
        let mut var = [1.0f32, 2.0];
        let mut g = [1.0f32];
        let (mut gx, mut gv) = ([0f32; 4], [0f32; 2]);
        gaussian_nll_grad(
            &v(&mut g, &[]),
            &v(&mut x, &[2, 2]),
            &v(&mut t, &[2, 2]),
            &v(&mut var, &[2]),
            1e-6,
            Reduction::Sum,
            &v(&mut gx, &[2, 2]),
            &v(&mut gv, &[2]),
        )
        .unwrap();
        // var [2] is one dimension short: row 0 uses 1, row 1 uses 2
        assert_eq!(gx, [1.0, 2.0, 1.5, 2.0]);
        let r0 = 0.5 * (1.0 - 1.0) + 0.5 * (1.0 - 4.0);
        let r1 = 0.5 * (0.5 - 9.0 / 4.0) + 0.5 * (0.5 - 16.0 / 4.0);
        assert_eq!(gv, [r0 as f32, r1 as f32]);
    }

    #[test]
    fn hinge_embedding_follows_the_label() {
        let mut x = [0.5f32, 0.5, 2.0];
        let mut t = [1.0f32, -1.0, -1.0];
        let mut o = [0f32];
        hinge_embedding(
            &v(&mut x, &[3]),
            &v(&mut t, &[3]),
            1.0,
            Reduction::Sum,
            &v(&mut o, &[]),
        )
        .unwrap();
        assert_eq!(o, [1.0]);
    }
}
