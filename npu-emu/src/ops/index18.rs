//! Indexing and pooling operators of the operator reference beyond the core families:
//! GatherV3 (gather with batch dimensions), ScatterNdUpdate, TfScatterAdd (TensorFlow's
//! `scatter_add` / `scatter_nd_add`), ScatterList (a window of rows written into each
//! tensor of a list), the backward of MaxUnpool2d/3d, and MaxPool (ONNX-style pads).
//!
//! Data movement copies element bits (or converts once when the dtypes differ); additions
//! compute in f32 for f16/bf16/f32, in f64 for doubles and in i64 (wrapping to the stored
//! width) for integers. An index outside its dimension fails the task with a message that
//! names it, except in TfScatterAdd, which skips it as CANN's kernels do.

use super::breadth::gather_v2;
use super::dtype::{Class, DType};
use super::elem;
use super::extra::{load, store};
use super::iter::{self, map2};
use super::shape::narrow;
use super::View;

/// Element `i` of `v` along dimension `d`, that dimension dropped.
pub fn select(v: &View, d: usize, i: usize) -> View {
    let t = narrow(v, d, i, 1);
    let mut shape = t.shape.clone();
    let mut strides = t.strides.clone();
    shape.remove(d);
    strides.remove(d);
    View {
        ptr: t.ptr,
        dtype: t.dtype,
        shape,
        strides,
    }
}

/// `v` with its leading dimensions selected at the row-major position `pos` of
/// `v.shape[..n]`.
fn select_lead(v: &View, n: usize, mut pos: usize) -> View {
    let mut idx = vec![0usize; n];
    for d in (0..n).rev() {
        idx[d] = pos % v.shape[d];
        pos /= v.shape[d];
    }
    let mut t = v.clone();
    for &i in &idx {
        t = select(&t, 0, i);
    }
    t
}

fn indices_of(index: &View) -> Result<Vec<i64>, String> {
    load::<i64>(index, DType::I64)
}

fn check_index(t: i64, n: usize, what: &str) -> Result<usize, String> {
    if t < 0 || t >= n as i64 {
        return Err(format!("{what} {t} is out of range [0, {n})"));
    }
    Ok(t as usize)
}

/// `dst += src` in place (src broadcast to dst).
fn add_into(dst: &View, src: &View) -> Result<(), String> {
    match dst.dtype.class() {
        Class::F32 => map2::<f32, f32>(dst, src, dst, |a, b| a + b),
        Class::F64 => map2::<f64, f64>(dst, src, dst, |a, b| a + b),
        Class::Int => map2::<i64, i64>(dst, src, dst, |a, b| a.wrapping_add(b)),
    }
}

/// `aclnnGatherV3`: TensorFlow's `gather(x, index, axis=dim, batch_dims)`: for every position
/// of the first `batch` dimensions (shared by `x`, `index` and `out`), `out` is `x` with
/// dimension `dim` replaced by `index`'s remaining dimensions.
pub fn gather_v3(
    x: &View,
    dim: usize,
    index: &View,
    batch: usize,
    out: &View,
) -> Result<(), String> {
    if batch == 0 {
        return gather_v2(x, dim, index, out);
    }
    let nb: usize = x.shape[..batch].iter().product();
    for b in 0..nb {
        gather_v2(
            &select_lead(x, batch, b),
            dim - batch,
            &select_lead(index, batch, b),
            &select_lead(out, batch, b),
        )?;
    }
    Ok(())
}

/// The slice of `var` at the first `k = idx.len()` coordinates `idx`.
fn nd_slice(var: &View, idx: &[i64]) -> Result<View, String> {
    let mut t = var.clone();
    for (d, &i) in idx.iter().enumerate() {
        let n = t.shape[0];
        let at = check_index(i, n, &format!("indices value for dimension {d} of varRef"))?;
        t = select(&t, 0, at);
    }
    Ok(t)
}

/// `aclnnScatterNdUpdate` (TensorFlow's `scatter_nd_update`): with `K = indices.shape[-1]`,
/// `var[indices[i, :]] = updates[i, ...]` for every position `i` of `indices.shape[:-1]`;
/// later positions win when an index repeats.
pub fn scatter_nd_update(var: &View, indices: &View, updates: &View) -> Result<(), String> {
    scatter_nd(var, indices, updates, false)
}

fn scatter_nd(var: &View, indices: &View, updates: &View, add: bool) -> Result<(), String> {
    let k = *indices.shape.last().unwrap_or(&1);
    let lead = indices.ndim().saturating_sub(1);
    let idx = indices_of(indices)?;
    let n: usize = indices.shape[..lead].iter().product();
    for i in 0..n {
        let at = &idx[i * k..(i + 1) * k];
        let src = select_lead(updates, lead, i);
        if add {
            // CANN's ScatterNdAdd kernels skip an index row outside varRef.
            if at
                .iter()
                .zip(&var.shape)
                .any(|(&t, &d)| t < 0 || t >= d as i64)
            {
                continue;
            }
            add_into(&nd_slice(var, at)?, &src)?;
        } else {
            iter::copy(&src, &nd_slice(var, at)?)?;
        }
    }
    Ok(())
}

/// `aclnnTfScatterAdd`: `var[indices[i...]] += updates[i..., ...]` when `updates.shape ==
/// indices.shape + var.shape[1:]` (`tf.scatter_add`), else `var[indices[i, :]] +=
/// updates[i, ...]` (`tf.scatter_nd_add`). Repeated indices accumulate; an index outside
/// varRef is skipped, as CANN's ScatterAdd / ScatterNdAdd kernels (and TensorFlow on GPU) do.
pub fn tf_scatter_add(var: &View, indices: &View, updates: &View) -> Result<(), String> {
    if is_row_scatter(&var.shape, &indices.shape, &updates.shape) {
        let idx = indices_of(indices)?;
        let lead = indices.ndim();
        for (i, &t) in idx.iter().enumerate() {
            if t < 0 || t >= var.shape[0] as i64 {
                continue;
            }
            add_into(&select(var, 0, t as usize), &select_lead(updates, lead, i))?;
        }
        Ok(())
    } else {
        scatter_nd(var, indices, updates, true)
    }
}

/// Whether `updates.shape == indices.shape + var.shape[1:]` (the `tf.scatter_add` form).
pub fn is_row_scatter(var: &[usize], indices: &[usize], updates: &[usize]) -> bool {
    let mut want = indices.to_vec();
    want.extend_from_slice(&var[1..]);
    !var.is_empty() && want == updates
}

/// `aclnnScatterList`: for each tensor `b` of `vars` (mask value non-zero, or no mask),
/// rows `[start, start + len)` along `axis` (an axis of each var tensor) are overwritten with
/// the first `len` rows of `updates[b]`; `indices[b]` is `start` (and `len` is the updates
/// axis size) or the pair `(start, len)` (`len` capped at the updates axis size).
pub fn scatter_list(
    vars: &[View],
    indices: &View,
    updates: &View,
    mask: Option<&View>,
    axis: usize,
) -> Result<(), String> {
    let idx = indices_of(indices)?;
    let m: Option<Vec<i64>> = mask.map(indices_of).transpose()?;
    let pairs = indices.ndim() == 2;
    let s2 = updates.shape[axis + 1];
    for (b, var) in vars.iter().enumerate() {
        if m.as_ref().is_some_and(|m| m[b] == 0) {
            continue;
        }
        let (start, len) = if pairs {
            (idx[2 * b], idx[2 * b + 1].min(s2 as i64))
        } else {
            (idx[b], s2 as i64)
        };
        if len <= 0 {
            continue;
        }
        let n = var.shape[axis] as i64;
        if start < 0 || start + len > n {
            return Err(format!(
                "indice of tensor {b} writes rows [{start}, {}) along axis {axis} of a varRef \
                 tensor of size {n}",
                start + len
            ));
        }
        let src = narrow(&select(updates, 0, b), axis, 0, len as usize);
        iter::copy(&src, &narrow(var, axis, start as usize, len as usize))?;
    }
    Ok(())
}

/// The backward of MaxUnpool2d (`spatial` 2) and MaxUnpool3d (`spatial` 3): with the last
/// `spatial` dimensions flattened, `out[p][i] = grad[p][indices[p][i]]` for every plane `p`
/// of the leading dimensions.
pub fn max_unpool_backward(
    grad: &View,
    indices: &View,
    spatial: usize,
    out: &View,
) -> Result<(), String> {
    let nd = out.ndim();
    let inner: usize = out.shape[nd - spatial..].iter().product();
    let ginner: usize = grad.shape[nd - spatial..].iter().product();
    let planes: usize = out.shape[..nd - spatial].iter().product();
    if out.numel() == 0 {
        return Ok(());
    }
    let idx = indices_of(indices)?;
    let same = grad.dtype == out.dtype;
    let es = out.esize();
    let coords = |shape: &[usize], mut pos: usize| -> Vec<usize> {
        let mut c = vec![0usize; shape.len()];
        for d in (0..shape.len()).rev() {
            c[d] = pos % shape[d];
            pos /= shape[d];
        }
        c
    };
    for p in 0..planes {
        for i in 0..inner {
            let t = idx[p * inner + i];
            let j = check_index(t, ginner, "indices value")?;
            let src = grad.at(&coords(&grad.shape, p * ginner + j));
            let dst = out.at(&coords(&out.shape, p * inner + i));
            // SAFETY: both pointers are elements of views the executor checked.
            unsafe {
                if same {
                    std::ptr::copy(src, dst, es);
                } else {
                    let v = elem::read_f64(grad.dtype, src);
                    elem::write::<f64>(out.dtype, dst, v);
                }
            }
        }
    }
    Ok(())
}

/// Window geometry of [`max_pool`]: kernel, stride and pads (top, left, bottom, right).
#[derive(Clone, Copy, Debug)]
pub struct MaxPool {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub pads: [usize; 4],
    pub ceil: bool,
}

impl MaxPool {
    /// The output length of spatial axis `a` (0 H, 1 W) for an input of length `i`: the
    /// documented formula, less one when the last window starts in the end padding. None
    /// when no window fits.
    pub fn out_len(&self, a: usize, i: usize) -> Option<usize> {
        let (k, s) = (self.kernel[a] as i64, self.stride[a] as i64);
        let (p0, p1) = (self.pads[a] as i64, self.pads[a + 2] as i64);
        let num = i as i64 + p0 + p1 - k;
        if num < 0 {
            return None;
        }
        let mut o = if self.ceil {
            (num + s - 1) / s + 1
        } else {
            num / s + 1
        };
        if (o - 1) * s >= i as i64 + p0 {
            o -= 1;
        }
        (o > 0).then_some(o as usize)
    }
}

/// `aclnnMaxPool`: the maximum of each window of the last two dimensions (padding never
/// wins; NaN propagates). `x` and `out` are `[N, C, H, W]` or `[C, H, W]`.
pub fn max_pool(x: &View, p: &MaxPool, out: &View) -> Result<(), String> {
    match x.dtype.class() {
        Class::Int => max_pool_t::<i64>(x, p, out, DType::I64),
        _ => max_pool_t::<f64>(x, p, out, DType::F64),
    }
}

/// NaN is the only value unequal to itself (integers never are).
#[allow(clippy::eq_op)]
fn is_nan<T: PartialEq>(v: T) -> bool {
    v != v
}

fn max_pool_t<T: elem::Compute>(
    x: &View,
    p: &MaxPool,
    out: &View,
    dt: DType,
) -> Result<(), String> {
    let nd = x.ndim();
    let (h, w) = (x.shape[nd - 2], x.shape[nd - 1]);
    let (oh, ow) = (out.shape[nd - 2], out.shape[nd - 1]);
    let planes: usize = x.shape[..nd - 2].iter().product();
    let xs: Vec<T> = load(x, dt)?;
    let mut ys = vec![T::default(); planes * oh * ow];
    for pl in 0..planes {
        let xp = &xs[pl * h * w..][..h * w];
        for oy in 0..oh {
            for ox in 0..ow {
                let mut best: Option<T> = None;
                for ky in 0..p.kernel[0] {
                    let iy = (oy * p.stride[0] + ky) as i64 - p.pads[0] as i64;
                    if iy < 0 || iy >= h as i64 {
                        continue;
                    }
                    for kx in 0..p.kernel[1] {
                        let ix = (ox * p.stride[1] + kx) as i64 - p.pads[1] as i64;
                        if ix < 0 || ix >= w as i64 {
                            continue;
                        }
                        let v = xp[iy as usize * w + ix as usize];
                        match best {
                            Some(b) if !(is_nan(v) || v > b) || is_nan(b) => {}
                            _ => best = Some(v),
                        }
                    }
                }
                ys[(pl * oh + oy) * ow + ox] = best.unwrap_or_default();
            }
        }
    }
    store(ys, dt, out)
}
