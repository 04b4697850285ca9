//! Layers and losses torch_npu reaches by name: `channel_shuffle`, `soft_margin_loss` (and
//! its gradient) and `embedding_renorm_` (`F.embedding` with `max_norm`).

use super::dtype::DType;
use super::elem;
use super::iter::{copy, map2, map3};
use super::nn::Reduction;
use super::reduce::{reduce, Reduce};
use super::view::Scratch;
use super::View;

/// `F.channel_shuffle`: channel `c` of `out` (dimension 1) is channel `(c % g) * (C / g) + c / g`
/// of `x`, i.e. `x` viewed as `[N, g, C / g, …]` with the two group dimensions swapped.
pub fn channel_shuffle(x: &View, groups: usize, out: &View) -> Result<(), String> {
    let c = x.shape[1];
    let per = c / groups;
    let split = |v: &View| {
        let mut shape = vec![v.shape[0], groups, per];
        shape.extend_from_slice(&v.shape[2..]);
        let mut strides = vec![v.strides[0], v.strides[1] * per as isize, v.strides[1]];
        strides.extend_from_slice(&v.strides[2..]);
        View {
            ptr: v.ptr,
            dtype: v.dtype,
            shape,
            strides,
        }
    };
    // out viewed as [N, C / g, g, …]: out channel i * g + j holds input group j, member i.
    let o = {
        let mut shape = vec![out.shape[0], per, groups];
        shape.extend_from_slice(&out.shape[2..]);
        let mut strides = vec![
            out.strides[0],
            out.strides[1] * groups as isize,
            out.strides[1],
        ];
        strides.extend_from_slice(&out.strides[2..]);
        View {
            ptr: out.ptr,
            dtype: out.dtype,
            shape,
            strides,
        }
    };
    let mut perm: Vec<usize> = (0..o.shape.len()).collect();
    perm.swap(1, 2);
    copy(&split(x).permute(&perm), &o)
}

/// `F.soft_margin_loss`: `log(1 + exp(-y x))` per element, then none / mean / sum. Computed
/// in f64.
pub fn soft_margin_loss(x: &View, y: &View, r: Reduction, out: &View) -> Result<(), String> {
    let f = |a: f64, b: f64| (-a * b).exp().ln_1p();
    match r {
        Reduction::None => map2::<f64, f64>(x, y, out, f),
        _ => {
            let shape = super::view::broadcast_shapes(&x.shape, &y.shape)
                .ok_or("self and target do not broadcast")?;
            let s = Scratch::new(DType::F64, &shape);
            map2::<f64, f64>(x, y, &s.view, f)?;
            let dims: Vec<usize> = (0..shape.len()).collect();
            let op = if r == Reduction::Mean {
                Reduce::Mean
            } else {
                Reduce::Sum
            };
            reduce(op, &s.view, &dims, out, false)
        }
    }
}

/// The gradient of [`soft_margin_loss`]: `-y sigmoid(-y x) g` (divided by the element count
/// for mean); `g` is the loss's gradient (0-d when reduced).
pub fn soft_margin_loss_backward(
    g: &View,
    x: &View,
    y: &View,
    r: Reduction,
    out: &View,
) -> Result<(), String> {
    let k = if r == Reduction::Mean {
        1.0 / out.numel().max(1) as f64
    } else {
        1.0
    };
    map3::<f64, f64>(x, y, g, out, move |a, b, gv| {
        let z = (-a * b).exp();
        k * -b * z / (1.0 + z) * gv
    })
}

/// `embedding_renorm_`: every row of `weight` (2-D) named in `indices` (once each, however
/// often named) whose `norm_type`-norm exceeds `max_norm` is scaled by
/// `max_norm / (norm + 1e-7)`, in place. An index outside the rows is an error.
pub fn embedding_renorm(
    weight: &View,
    indices: &[i64],
    max_norm: f64,
    norm_type: f64,
) -> Result<(), String> {
    let rows = weight.shape[0] as i64;
    let mut idx: Vec<i64> = indices.to_vec();
    idx.sort_unstable();
    idx.dedup();
    if let Some(&bad) = idx.iter().find(|&&i| i < 0 || i >= rows) {
        return Err(format!(
            "indices holds {bad}, outside the {rows} rows of selfRef"
        ));
    }
    let (cols, es) = (weight.shape[1], weight.dtype.size() as isize);
    for i in idx {
        let row = weight
            .ptr
            .wrapping_offset(i as isize * weight.strides[0] * es);
        let at = |j: usize| row.wrapping_offset(j as isize * weight.strides[1] * es);
        // SAFETY: elements of a view the executor checked (row i < rows, j < cols).
        let vals: Vec<f64> = (0..cols)
            .map(|j| unsafe { elem::read_f64(weight.dtype, at(j)) })
            .collect();
        let norm = if norm_type == f64::INFINITY {
            vals.iter().fold(0f64, |m, v| m.max(v.abs()))
        } else if norm_type == 0.0 {
            vals.iter().filter(|v| **v != 0.0).count() as f64
        } else {
            vals.iter()
                .map(|v| v.abs().powf(norm_type))
                .sum::<f64>()
                .powf(1.0 / norm_type)
        };
        if norm > max_norm {
            let scale = max_norm / (norm + 1e-7);
            for (j, v) in vals.iter().enumerate() {
                // SAFETY: as above.
                unsafe { elem::write::<f64>(weight.dtype, at(j), v * scale) };
            }
        }
    }
    Ok(())
}

/// `rrelu_with_noise`: elements above 0 pass (their noise 1); the others are multiplied by a
/// slope: in training a uniform draw from `[lower, upper)` per element (Philox with `seed`
/// and `offset`, as the other random operators), written to `noise`; otherwise
/// `(lower + upper) / 2`, with `noise` left alone. `noise` holds at least as many elements
/// as `x` (row-major order); computed in f64 and rounded once.
#[allow(clippy::too_many_arguments)]
pub fn rrelu_with_noise(
    x: &View,
    noise: &View,
    lower: f64,
    upper: f64,
    training: bool,
    seed: u64,
    offset: u64,
    out: &View,
) -> Result<(), String> {
    let xs: Vec<f64> = super::extra::load(x, DType::F64)?;
    let mid = (lower + upper) / 2.0;
    let mut slopes = vec![1f64; xs.len()];
    let wide = x.dtype == DType::F64;
    for (i, v) in xs.iter().enumerate() {
        if *v <= 0.0 {
            slopes[i] = if training {
                lower + super::random::uniform01(seed, offset, i, wide) * (upper - lower)
            } else {
                mid
            };
        }
    }
    let ys: Vec<f64> = xs.iter().zip(&slopes).map(|(v, a)| v * a).collect();
    if training && !slopes.is_empty() {
        // The first x.numel() elements of noise, in its row-major order.
        let n = slopes.len();
        let mut all: Vec<f64> = super::extra::load(noise, DType::F64)?;
        all[..n].copy_from_slice(&slopes);
        super::extra::store(all, DType::F64, noise)?;
    }
    super::extra::store(ys, DType::F64, out)
}
