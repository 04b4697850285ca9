//! Operators of the aclnn reference beyond the core families: views and indexing (permute,
//! split, gather along one dimension, index copy), the infinity predicates, and the
//! activations and pointwise functions built from two halves or a per-channel weight (PReLU
//! and its backward, GLU and its backward, threshold, logit, logaddexp in base e and 2,
//! sinc, heaviside).
//!
//! Elementwise values are computed in float64 and rounded once into the output, as the
//! activations of [`super::act`] are; data movement copies element bits (or converts once
//! when the dtypes differ).

use super::elem;
use super::iter::{self, map1, map2, map3};
use super::shape::narrow;
use super::view::View;

/// `out = x.permute(perm)` (`perm[i]` is the dimension of `x` that becomes dimension i).
pub fn permute(x: &View, perm: &[usize], out: &View) -> Result<(), String> {
    iter::copy(&x.permute(perm), out)
}

/// Copy consecutive slices of `x` along `dim` into `outs` (each takes `outs[k].shape[dim]`
/// entries, in order): `torch.split`.
pub fn split(x: &View, dim: usize, outs: &[View]) -> Result<(), String> {
    let mut start = 0;
    for o in outs {
        let len = o.shape[dim];
        iter::copy(&narrow(x, dim, start, len), o)?;
        start += len;
    }
    Ok(())
}

/// The index at flat (row-major) position `i` of `index`, made non-negative for a dimension
/// of size `n`; an index outside `[-n, n)` is an error naming the position.
fn index_at(index: &View, i: usize, n: usize, what: &str) -> Result<usize, String> {
    let mut rem = i;
    let mut off = 0isize;
    for d in (0..index.ndim()).rev() {
        let k = rem % index.shape[d];
        rem /= index.shape[d];
        off += k as isize * index.strides[d];
    }
    let p = index.ptr.wrapping_offset(off * index.esize() as isize);
    // SAFETY: `p` is element `i` of the checked index view.
    let t = unsafe { elem::read_i64(index.dtype, p) };
    let ni = n as i64;
    if t < -ni || t >= ni {
        return Err(format!(
            "index {t} at position {i} is out of range for {what} of size {n}"
        ));
    }
    Ok(if t < 0 { (t + ni) as usize } else { t as usize })
}

/// `out = x.index_select(dim, index.flatten()).reshape(x[:dim] + index.shape + x[dim+1:])`
/// (`GatherV2`): `out` has `x`'s dimensions with `dim` replaced by `index`'s. Negative
/// indices count from the end.
pub fn gather_v2(x: &View, dim: usize, index: &View, out: &View) -> Result<(), String> {
    let n = x.shape[dim];
    let ni = index.ndim();
    // out seen as x's dimensions with `dim` flattened to index.numel()
    let mut flat = View {
        ptr: out.ptr,
        dtype: out.dtype,
        shape: x.shape.clone(),
        strides: x.strides.clone(),
    };
    flat.shape[dim] = index.numel();
    for d in 0..x.ndim() {
        if d < dim {
            flat.strides[d] = out.strides[d];
        } else if d > dim {
            flat.strides[d] = out.strides[d + ni - 1];
        }
    }
    for k in 0..index.numel() {
        let t = index_at(index, k, n, &format!("dimension {dim}"))?;
        // position of index element k inside out's index dimensions
        let mut rem = k;
        let mut off = 0isize;
        for d in (0..ni).rev() {
            let c = rem % index.shape[d];
            rem /= index.shape[d];
            off += c as isize * out.strides[dim + d];
        }
        let mut dst = narrow(&flat, dim, 0, 1);
        dst.ptr = out.ptr.wrapping_offset(off * out.esize() as isize);
        iter::copy(&narrow(x, dim, t, 1), &dst)?;
    }
    Ok(())
}

/// `out[..., index[i], ...] = source[..., i, ...]` along `dim` (`index_copy`); `out` already
/// holds `self`. Later positions win when an index repeats.
pub fn index_copy(out: &View, dim: usize, index: &View, source: &View) -> Result<(), String> {
    let n = out.shape.get(dim).copied().unwrap_or(1);
    let scalar = out.ndim() == 0;
    for k in 0..index.numel() {
        let t = index_at(index, k, n, &format!("dimension {dim}"))?;
        if scalar {
            iter::copy(source, out)?;
        } else {
            iter::copy(&narrow(source, dim, k, 1), &narrow(out, dim, t, 1))?;
        }
    }
    Ok(())
}

/// Which infinities a predicate looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inf {
    Any,
    Pos,
    Neg,
}

/// `out = x is ±inf / +inf / -inf` (integers and bool are never infinite).
pub fn is_inf(which: Inf, x: &View, out: &View) -> Result<(), String> {
    map1::<f64, bool>(x, out, move |v| match which {
        Inf::Any => v.is_infinite(),
        Inf::Pos => v == f64::INFINITY,
        Inf::Neg => v == f64::NEG_INFINITY,
    })
}

/// The stride of a tensor whose elements lie along one dimension (every other dimension
/// has size 1): PReLU's weight as `[C]` or reshaped to `[1, C, 1, ...]`.
fn flat_stride(v: &View) -> isize {
    v.shape
        .iter()
        .zip(&v.strides)
        .find(|(&d, _)| d > 1)
        .map(|(_, &s)| s)
        .unwrap_or(1)
}

/// `weight` (1 or C elements) expanded over `x`'s shape along dimension 1 (PReLU's channel
/// dimension; a weight of one element applies everywhere).
fn channel_weight(x: &View, weight: &View) -> View {
    let mut strides = vec![0isize; x.ndim()];
    if weight.numel() > 1 && x.ndim() >= 2 {
        strides[1] = flat_stride(weight);
    }
    View {
        ptr: weight.ptr,
        dtype: weight.dtype,
        shape: x.shape.clone(),
        strides,
    }
}

/// `out = x > 0 ? x : weight[c] * x` with `c` the channel (dimension 1).
pub fn prelu(x: &View, weight: &View, out: &View) -> Result<(), String> {
    let w = channel_weight(x, weight);
    map2::<f64, f64>(x, &w, out, |v, a| if v > 0.0 { v } else { a * v })
}

/// PReLU's backward: `grad_input = g * (x > 0 ? 1 : weight[c])`, and
/// `grad_weight[c] = sum over the other dimensions of (x > 0 ? 0 : g * x)` (one element when
/// the weight has one).
pub fn prelu_backward(
    g: &View,
    x: &View,
    weight: &View,
    grad_input: &View,
    grad_weight: &View,
) -> Result<(), String> {
    let w = channel_weight(x, weight);
    let gx = g
        .expand(&x.shape)
        .ok_or("gradOutput does not broadcast to self")?;
    map3::<f64, f64>(
        &gx,
        x,
        &w,
        grad_input,
        |gv, v, a| {
            if v > 0.0 {
                gv
            } else {
                gv * a
            }
        },
    )?;
    let channels = grad_weight.numel();
    let mut sums = vec![0f64; channels.max(1)];
    let n = x.numel();
    let nd = x.ndim();
    let mut idx = vec![0usize; nd];
    for _ in 0..n {
        // SAFETY: `idx` is inside x's (and the expanded g's) shape.
        let (xv, gv) = unsafe {
            (
                elem::read_f64(x.dtype, x.at(&idx)),
                elem::read_f64(gx.dtype, gx.at(&idx)),
            )
        };
        if xv <= 0.0 {
            let c = if channels > 1 { idx[1] } else { 0 };
            sums[c] += gv * xv;
        }
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < x.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let flat = View {
        ptr: grad_weight.ptr,
        dtype: grad_weight.dtype,
        shape: vec![channels],
        strides: vec![flat_stride(grad_weight)],
    };
    for (c, s) in sums.iter().enumerate().take(channels) {
        // SAFETY: element c of the checked grad_weight view.
        unsafe { elem::write::<f64>(flat.dtype, flat.at(&[c]), *s) };
    }
    Ok(())
}

/// `out = x > threshold ? x : value`.
pub fn threshold(x: &View, threshold: f64, value: f64, out: &View) -> Result<(), String> {
    map1::<f64, f64>(x, out, move |v| if v > threshold { v } else { value })
}

fn sigmoid(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

/// GLU along `dim`: `out = a * sigmoid(b)` with `a`, `b` the two halves of `x`.
pub fn glu(x: &View, dim: usize, out: &View) -> Result<(), String> {
    let h = x.shape[dim] / 2;
    let (a, b) = (narrow(x, dim, 0, h), narrow(x, dim, h, h));
    map2::<f64, f64>(&a, &b, out, |a, b| a * sigmoid(b))
}

/// GLU's backward into `grad_input` (the shape of `x`): the first half gets
/// `g * sigmoid(b)`, the second `g * sigmoid(b) * (1 - sigmoid(b)) * a`.
pub fn glu_backward(g: &View, x: &View, dim: usize, grad_input: &View) -> Result<(), String> {
    let h = x.shape[dim] / 2;
    let (a, b) = (narrow(x, dim, 0, h), narrow(x, dim, h, h));
    let (ga, gb) = (narrow(grad_input, dim, 0, h), narrow(grad_input, dim, h, h));
    // the second half first: it reads `a`, which the first write may overwrite in place
    map3::<f64, f64>(g, &a, &b, &gb, |g, a, b| {
        let s = sigmoid(b);
        g * s * (1.0 - s) * a
    })?;
    map2::<f64, f64>(g, &b, &ga, |g, b| g * sigmoid(b))
}

/// `out = ln(z / (1 - z))` with `z = clamp(x, eps, 1 - eps)` when `eps >= 0`, `z = x`
/// otherwise.
pub fn logit(x: &View, eps: f64, out: &View) -> Result<(), String> {
    map1::<f64, f64>(x, out, move |v| {
        let z = if eps >= 0.0 {
            if v < eps {
                eps
            } else if v > 1.0 - eps {
                1.0 - eps
            } else {
                v
            }
        } else {
            v
        };
        (z / (1.0 - z)).ln()
    })
}

/// `out = log(e^a + e^b)` (`base2`: `log2(2^a + 2^b)`), stable for large arguments.
pub fn log_add_exp(a: &View, b: &View, base2: bool, out: &View) -> Result<(), String> {
    map2::<f64, f64>(a, b, out, move |x, y| {
        if x.is_nan() || y.is_nan() {
            return f64::NAN;
        }
        if x == y && x.is_infinite() {
            // both +inf or both -inf: the sum is that infinity
            return x;
        }
        let m = x.max(y);
        let d = -(x - y).abs();
        if base2 {
            m + (d.exp2()).ln_1p() / std::f64::consts::LN_2
        } else {
            m + d.exp().ln_1p()
        }
    })
}

/// `out = sin(pi x) / (pi x)`, 1 at 0.
pub fn sinc(x: &View, out: &View) -> Result<(), String> {
    map1::<f64, f64>(x, out, |v| {
        if v == 0.0 {
            1.0
        } else {
            let p = std::f64::consts::PI * v;
            p.sin() / p
        }
    })
}

/// `out = x == 0 ? values : (x > 0 ? 1 : 0)` (PyTorch's `heaviside`: NaN gives 0).
pub fn heaviside(x: &View, values: &View, out: &View) -> Result<(), String> {
    map2::<f64, f64>(x, values, out, |v, h| {
        if v == 0.0 {
            h
        } else if v > 0.0 {
            1.0
        } else {
            0.0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::DType;

    #[test]
    fn gather_v2_takes_slices_in_index_shape() {
        let mut x: Vec<f32> = (0..6).map(|v| v as f32).collect(); // [2, 3]
        let mut idx = vec![2i64, -3, 1, 1]; // [2, 2]
        let mut o = vec![0f32; 8]; // [2, 2, 2]
        let vx = View::of_slice(&mut x, DType::F32, &[2, 3]);
        let vi = View::of_slice(&mut idx, DType::I64, &[2, 2]);
        let vo = View::of_slice(&mut o, DType::F32, &[2, 2, 2]);
        gather_v2(&vx, 1, &vi, &vo).unwrap();
        assert_eq!(o, vec![2.0, 0.0, 1.0, 1.0, 5.0, 3.0, 4.0, 4.0]);
        let mut bad = vec![3i64];
        let vb = View::of_slice(&mut bad, DType::I64, &[1]);
        let vo1 = View::of_slice(&mut o[..2], DType::F32, &[2, 1]);
        assert!(gather_v2(&vx, 1, &vb, &vo1)
            .unwrap_err()
            .contains("index 3"));
    }

    #[test]
    fn log_add_exp_is_stable() {
        let mut a = vec![1000f64, -1000.0, 0.0];
        let mut b = vec![1000f64, -1000.0, 1.0];
        let mut o = vec![0f64; 3];
        let va = View::of_slice(&mut a, DType::F64, &[3]);
        let vb = View::of_slice(&mut b, DType::F64, &[3]);
        let vo = View::of_slice(&mut o, DType::F64, &[3]);
        log_add_exp(&va, &vb, false, &vo).unwrap();
        assert!((o[0] - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert!((o[1] - (-1000.0 + 2f64.ln())).abs() < 1e-12);
        assert!((o[2] - (1f64.exp() + 1.0).ln()).abs() < 1e-15);
    }
}
