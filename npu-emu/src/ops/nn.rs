//! Neural-network operators: softmax and log-softmax with their backward forms, the NLL
//! and MSE losses with theirs, layer norm with its backward, embedding with its dense
//! backward, instance norm (NCHW or NHWC, with the per-plane statistics).
//!
//! Rows along the softmax/norm dimension are computed in f64 and rounded once into the
//! output (tests: relative 1e-5 for float32 against a float64 host reference).

use super::dtype::DType;
use super::elem;
use super::iter::{map2, map3, parallel_ranges, threads_for};
use super::view::View;

/// Loss reductions (`int64_t reduction` of aclnn: 0 none, 1 mean, 2 sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    None,
    Mean,
    Sum,
}

impl Reduction {
    pub fn from_i64(v: i64) -> Option<Reduction> {
        Some(match v {
            0 => Reduction::None,
            1 => Reduction::Mean,
            2 => Reduction::Sum,
            _ => return None,
        })
    }
}

/// Walk the rows of `shape` along `dim`: `f(row)` with the row index, for the views, gives
/// each view's byte offset of the row start. Rows are split across threads.
fn for_rows(
    shape: &[usize],
    dim: usize,
    views: &[&View],
    f: &(dyn Fn(&[*mut u8], &[isize]) + Sync),
) {
    let n = shape[dim];
    let rows: usize = shape.iter().product::<usize>() / n.max(1);
    if rows == 0 || n == 0 {
        return;
    }
    let outer: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != dim)
        .map(|(_, &s)| s)
        .collect();
    let per_view: Vec<(Vec<isize>, isize, usize)> = views
        .iter()
        .map(|v| {
            let es = v.esize() as isize;
            let st: Vec<isize> = (0..shape.len())
                .filter(|&d| d != dim)
                .map(|d| v.strides[d] * es)
                .collect();
            (st, v.strides[dim] * es, v.ptr as usize)
        })
        .collect();
    let inner: Vec<isize> = per_view.iter().map(|p| p.1).collect();
    let work = |r: std::ops::Range<usize>| {
        let mut ptrs = vec![std::ptr::null_mut(); views.len()];
        for row in r {
            for (k, (st, _, base)) in per_view.iter().enumerate() {
                let mut rem = row;
                let mut off = 0isize;
                for d in (0..outer.len()).rev() {
                    off += (rem % outer[d]) as isize * st[d];
                    rem /= outer[d];
                }
                ptrs[k] = (*base as *mut u8).wrapping_offset(off);
            }
            f(&ptrs, &inner);
        }
    };
    parallel_ranges(rows, threads_for(rows * n).min(rows), &work);
}

/// Read a row of `n` elements as f64.
///
/// # Safety
/// The row lies inside a checked view.
unsafe fn row(dt: DType, p: *const u8, stride: isize, n: usize, buf: &mut Vec<f64>) {
    buf.resize(n, 0.0);
    // SAFETY: forwarded.
    unsafe { elem::load(dt, p, stride, n, buf) };
}

/// Softmax (`log` false) or log-softmax along `dim`.
pub fn softmax(x: &View, dim: usize, out: &View, log: bool) -> Result<(), String> {
    let n = x.shape[dim];
    let (xd, od) = (x.dtype, out.dtype);
    for_rows(&x.shape, dim, &[x, out], &|p, s| {
        let mut b = Vec::new();
        // SAFETY: rows of checked views.
        unsafe { row(xd, p[0], s[0], n, &mut b) };
        let m = b.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let m = if m.is_finite() { m } else { 0.0 };
        let sum: f64 = b.iter().map(|v| (v - m).exp()).sum();
        if log {
            let l = sum.ln();
            for v in b.iter_mut() {
                *v = *v - m - l;
            }
        } else {
            for v in b.iter_mut() {
                *v = (*v - m).exp() / sum;
            }
        }
        // SAFETY: as above.
        unsafe { elem::store(od, p[1], s[1], &b) };
    });
    Ok(())
}

/// Backward of softmax (`log` false: `y * (g - sum(g*y))`) or log-softmax
/// (`g - exp(y) * sum(g)`), from the forward output `y`.
pub fn softmax_backward(
    g: &View,
    y: &View,
    dim: usize,
    out: &View,
    log: bool,
) -> Result<(), String> {
    let n = y.shape[dim];
    let (gd, yd, od) = (g.dtype, y.dtype, out.dtype);
    for_rows(&y.shape, dim, &[g, y, out], &|p, s| {
        let (mut gb, mut yb) = (Vec::new(), Vec::new());
        // SAFETY: rows of checked views.
        unsafe {
            row(gd, p[0], s[0], n, &mut gb);
            row(yd, p[1], s[1], n, &mut yb);
        }
        if log {
            let sg: f64 = gb.iter().sum();
            for (gv, yv) in gb.iter_mut().zip(&yb) {
                *gv -= yv.exp() * sg;
            }
        } else {
            let sgy: f64 = gb.iter().zip(&yb).map(|(a, b)| a * b).sum();
            for (gv, yv) in gb.iter_mut().zip(&yb) {
                *gv = yv * (*gv - sgy);
            }
        }
        // SAFETY: as above.
        unsafe { elem::store(od, p[2], s[2], &gb) };
    });
    Ok(())
}

/// Read element `i` of a 1-D view (or the only element of a 0-d one) as f64.
fn at1(v: &View, i: usize) -> f64 {
    let off = if v.ndim() == 0 {
        0
    } else {
        i as isize * v.strides[0]
    };
    // SAFETY: callers index inside the checked view.
    unsafe { elem::read_f64(v.dtype, v.ptr.wrapping_offset(off * v.esize() as isize)) }
}

fn at1_i64(v: &View, i: usize) -> i64 {
    let off = if v.ndim() == 0 {
        0
    } else {
        i as isize * v.strides[0]
    };
    // SAFETY: callers index inside the checked view.
    unsafe { elem::read_i64(v.dtype, v.ptr.wrapping_offset(off * v.esize() as isize)) }
}

fn at2(v: &View, i: usize, j: usize) -> *mut u8 {
    let es = v.esize() as isize;
    if v.ndim() == 1 {
        v.ptr.wrapping_offset(j as isize * v.strides[0] * es)
    } else {
        v.ptr
            .wrapping_offset((i as isize * v.strides[0] + j as isize * v.strides[1]) * es)
    }
}

/// NLL loss of log-probabilities `x` (`[N, C]` or `[C]`) at class indices `target` (`[N]`
/// or 0-d), class weights `weight` (`[C]`). `out` is `[N]` (none) or 0-d; `total_weight`
/// 0-d. A target outside `[0, C)` other than `ignore_index` is an error.
pub fn nll_loss(
    x: &View,
    target: &View,
    weight: Option<&View>,
    reduction: Reduction,
    ignore_index: i64,
    out: &View,
    total_weight: &View,
) -> Result<(), String> {
    let (n, c) = if x.ndim() == 1 {
        (1, x.shape[0])
    } else {
        (x.shape[0], x.shape[1])
    };
    let mut losses = vec![0f64; n];
    let mut tw = 0f64;
    for (i, loss) in losses.iter_mut().enumerate() {
        let t = at1_i64(target, i);
        if t == ignore_index {
            continue;
        }
        if t < 0 || t as usize >= c {
            return Err(format!(
                "target {t} at position {i} is out of bounds [0, {c})"
            ));
        }
        let w = weight.map_or(1.0, |w| at1(w, t as usize));
        // SAFETY: inside the checked view.
        let v = unsafe { elem::read_f64(x.dtype, at2(x, i, t as usize)) };
        *loss = -w * v;
        tw += w;
    }
    match reduction {
        Reduction::None => {
            for (i, &l) in losses.iter().enumerate() {
                let p = if out.ndim() == 0 {
                    out.ptr
                } else {
                    out.ptr
                        .wrapping_offset(i as isize * out.strides[0] * out.esize() as isize)
                };
                // SAFETY: inside the checked output.
                unsafe { elem::write(out.dtype, p, l) };
            }
            // SAFETY: 0-d checked output.
            unsafe { elem::write(total_weight.dtype, total_weight.ptr, 0f64) };
        }
        Reduction::Sum | Reduction::Mean => {
            let s: f64 = losses.iter().sum();
            let v = if reduction == Reduction::Mean {
                s / tw
            } else {
                s
            };
            // SAFETY: 0-d checked outputs.
            unsafe {
                elem::write(out.dtype, out.ptr, v);
                elem::write(total_weight.dtype, total_weight.ptr, tw);
            }
        }
    }
    Ok(())
}

/// Gradient of [`nll_loss`] with respect to `x`: zero except `-w[t] * g` at the targets.
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_backward(
    g: &View,
    x: &View,
    target: &View,
    weight: Option<&View>,
    reduction: Reduction,
    ignore_index: i64,
    total_weight: &View,
    out: &View,
) -> Result<(), String> {
    let (n, c) = if x.ndim() == 1 {
        (1, x.shape[0])
    } else {
        (x.shape[0], x.shape[1])
    };
    super::iter::fill::<f64>(out, 0.0)?;
    let tw = at1(total_weight, 0);
    for i in 0..n {
        let t = at1_i64(target, i);
        if t == ignore_index {
            continue;
        }
        if t < 0 || t as usize >= c {
            return Err(format!(
                "target {t} at position {i} is out of bounds [0, {c})"
            ));
        }
        let w = weight.map_or(1.0, |w| at1(w, t as usize));
        let gv = match reduction {
            Reduction::None => at1(g, i),
            Reduction::Sum => at1(g, 0),
            Reduction::Mean => at1(g, 0) / tw,
        };
        // SAFETY: inside the checked output.
        unsafe { elem::write(out.dtype, at2(out, i, t as usize), -w * gv) };
    }
    Ok(())
}

/// MSE loss: `(x - t)^2` broadcast, then reduced.
pub fn mse_loss(x: &View, t: &View, reduction: Reduction, out: &View) -> Result<(), String> {
    let ct = if x.dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    match reduction {
        Reduction::None => super::math::binary(super::math::Binary::SquaredDiff, x, t, out, ct),
        _ => {
            let shape = super::view::broadcast_shapes(&x.shape, &t.shape)
                .ok_or("shapes do not broadcast")?;
            let s = super::view::Scratch::new(DType::F64, &shape);
            map2::<f64, f64>(x, t, &s.view, |a, b| (a - b) * (a - b))?;
            let dims: Vec<usize> = (0..shape.len()).collect();
            let op = if reduction == Reduction::Mean {
                super::reduce::Reduce::Mean
            } else {
                super::reduce::Reduce::Sum
            };
            super::reduce::reduce(op, &s.view, &dims, out, false)
        }
    }
}

/// Gradient of [`mse_loss`]: `2 (x - t) g` (divided by the element count for mean).
pub fn mse_loss_backward(
    g: &View,
    x: &View,
    t: &View,
    reduction: Reduction,
    out: &View,
) -> Result<(), String> {
    let n = out.numel().max(1) as f64;
    let k = if reduction == Reduction::Mean {
        2.0 / n
    } else {
        2.0
    };
    if x.dtype == DType::F64 || out.dtype == DType::F64 {
        map3::<f64, f64>(x, t, g, out, move |a, b, gv| k * (a - b) * gv)
    } else {
        let k = k as f32;
        map3::<f32, f32>(x, t, g, out, move |a, b, gv| k * (a - b) * gv)
    }
}

#[allow(clippy::too_many_arguments)]
/// Layer norm over the last `nd` dimensions: `y = (x - mean) * rstd * w + b`; writes the
/// per-row mean and rstd when asked (shape: the leading dims with 1s for the normalized ones).
pub fn layer_norm(
    x: &View,
    nd: usize,
    w: Option<&View>,
    b: Option<&View>,
    eps: f64,
    y: &View,
    mean: Option<&View>,
    rstd: Option<&View>,
) -> Result<(), String> {
    let lead = x.ndim() - nd;
    let m: usize = x.shape[lead..].iter().product();
    let rows: usize = x.shape[..lead].iter().product();
    let norm_shape = &x.shape[lead..];
    let flat = |v: &View, i: usize| -> *mut u8 {
        // element i (row-major) of a view shaped like `norm_shape`
        let mut rem = i;
        let mut off = 0isize;
        let k = v.ndim();
        for d in (0..norm_shape.len()).rev() {
            off += (rem % norm_shape[d]) as isize * v.strides[k - norm_shape.len() + d];
            rem /= norm_shape[d];
        }
        v.ptr.wrapping_offset(off * v.esize() as isize)
    };
    let rowp = |v: &View, r: usize| -> isize {
        let mut rem = r;
        let mut off = 0isize;
        for d in (0..lead).rev() {
            off += (rem % v.shape[d]) as isize * v.strides[d];
            rem /= v.shape[d];
        }
        off * v.esize() as isize
    };
    let wv: Vec<f64> = (0..m)
        .map(|i| {
            w.map_or(1.0, |w| {
                // SAFETY: element i of the checked weight (shaped like the normalized dims).
                unsafe { elem::read_f64(w.dtype, flat(w, i)) }
            })
        })
        .collect();
    let bv: Vec<f64> = (0..m)
        .map(|i| {
            b.map_or(0.0, |b| {
                // SAFETY: element i of the checked bias.
                unsafe { elem::read_f64(b.dtype, flat(b, i)) }
            })
        })
        .collect();
    let work = |r: std::ops::Range<usize>| {
        let mut buf = vec![0f64; m];
        for row in r {
            let xr = View {
                ptr: x.ptr.wrapping_offset(rowp(x, row)),
                ..x.clone()
            };
            for (i, v) in buf.iter_mut().enumerate() {
                // SAFETY: inside the checked input.
                *v = unsafe { elem::read_f64(x.dtype, flat(&xr, i)) };
            }
            let mu = buf.iter().sum::<f64>() / m as f64;
            let var = buf.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / m as f64;
            let rs = 1.0 / (var + eps).sqrt();
            let yr = View {
                ptr: y.ptr.wrapping_offset(rowp(y, row)),
                ..y.clone()
            };
            for i in 0..m {
                let v = (buf[i] - mu) * rs * wv[i] + bv[i];
                // SAFETY: inside the checked output.
                unsafe { elem::write(y.dtype, flat(&yr, i), v) };
            }
            if let Some(mv) = mean {
                // SAFETY: inside the checked output.
                unsafe { elem::write(mv.dtype, mv.ptr.wrapping_offset(rowp(mv, row)), mu) };
            }
            if let Some(rv) = rstd {
                // SAFETY: inside the checked output.
                unsafe { elem::write(rv.dtype, rv.ptr.wrapping_offset(rowp(rv, row)), rs) };
            }
        }
    };
    parallel_ranges(rows, threads_for(rows * m).min(rows.max(1)), &work);
    Ok(())
}

/// Backward of [`layer_norm`] from the saved mean and rstd: the gradients of the input,
/// the weight and the bias (each optional).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward(
    g: &View,
    x: &View,
    nd: usize,
    mean: &View,
    rstd: &View,
    w: Option<&View>,
    gx: Option<&View>,
    gw: Option<&View>,
    gb: Option<&View>,
) -> Result<(), String> {
    let lead = x.ndim() - nd;
    let m: usize = x.shape[lead..].iter().product();
    let rows: usize = x.shape[..lead].iter().product();
    let norm_shape = x.shape[lead..].to_vec();
    let at = |v: &View, row: usize, i: usize| -> *mut u8 {
        let k = v.ndim();
        let mut off = 0isize;
        let mut rem = i;
        for d in (0..norm_shape.len()).rev() {
            off += (rem % norm_shape[d]) as isize * v.strides[k - norm_shape.len() + d];
            rem /= norm_shape[d];
        }
        let mut rem = row;
        for d in (0..k - norm_shape.len()).rev() {
            off += (rem % v.shape[d]) as isize * v.strides[d];
            rem /= v.shape[d];
        }
        v.ptr.wrapping_offset(off * v.esize() as isize)
    };
    let rd = |v: &View, row: usize, i: usize| {
        // SAFETY: (row, i) is an element of the checked view.
        unsafe { elem::read_f64(v.dtype, at(v, row, i)) }
    };
    // mean and rstd hold one value per row: element `row` in their own row-major order (any
    // shape of `rows` elements; reading them through `at` lost the row when more than one
    // dimension was normalized)
    let rd_row = |v: &View, row: usize| {
        let mut off = 0isize;
        let mut rem = row;
        for d in (0..v.ndim()).rev() {
            off += (rem % v.shape[d]) as isize * v.strides[d];
            rem /= v.shape[d];
        }
        // SAFETY: element `row` of the checked view of `rows` elements.
        unsafe { elem::read_f64(v.dtype, v.ptr.wrapping_offset(off * v.esize() as isize)) }
    };
    let wv: Vec<f64> = (0..m).map(|i| w.map_or(1.0, |w| rd(w, 0, i))).collect();
    let mut dw = vec![0f64; m];
    let mut db = vec![0f64; m];
    for row in 0..rows {
        let mu = rd_row(mean, row);
        let rs = rd_row(rstd, row);
        let xs: Vec<f64> = (0..m).map(|i| rd(x, row, i)).collect();
        let gs: Vec<f64> = (0..m).map(|i| rd(g, row, i)).collect();
        let xhat: Vec<f64> = xs.iter().map(|v| (v - mu) * rs).collect();
        for i in 0..m {
            dw[i] += gs[i] * xhat[i];
            db[i] += gs[i];
        }
        if let Some(gx) = gx {
            let gw_: Vec<f64> = (0..m).map(|i| gs[i] * wv[i]).collect();
            let s1: f64 = gw_.iter().sum::<f64>() / m as f64;
            let s2: f64 = gw_.iter().zip(&xhat).map(|(a, b)| a * b).sum::<f64>() / m as f64;
            for i in 0..m {
                let v = rs * (gw_[i] - s1 - xhat[i] * s2);
                // SAFETY: inside the checked output.
                unsafe { elem::write(gx.dtype, at(gx, row, i), v) };
            }
        }
    }
    if let Some(gw) = gw {
        for (i, &v) in dw.iter().enumerate() {
            // SAFETY: inside the checked output.
            unsafe { elem::write(gw.dtype, at(gw, 0, i), v) };
        }
    }
    if let Some(gb) = gb {
        for (i, &v) in db.iter().enumerate() {
            // SAFETY: inside the checked output.
            unsafe { elem::write(gb.dtype, at(gb, 0, i), v) };
        }
    }
    Ok(())
}

/// `out[..., :] = weight[indices[...], :]` (weight `[V, D]`, out `indices.shape + [D]`).
pub fn embedding(weight: &View, indices: &View, out: &View) -> Result<(), String> {
    let v = weight.shape[0];
    let d = weight.shape[1];
    let n = indices.numel();
    let flat_idx = |i: usize| -> i64 {
        let mut rem = i;
        let mut off = 0isize;
        for k in (0..indices.ndim()).rev() {
            off += (rem % indices.shape[k]) as isize * indices.strides[k];
            rem /= indices.shape[k];
        }
        // SAFETY: inside the checked view.
        unsafe {
            elem::read_i64(
                indices.dtype,
                indices.ptr.wrapping_offset(off * indices.esize() as isize),
            )
        }
    };
    let on = out.ndim();
    for i in 0..n {
        let t = flat_idx(i);
        if t < 0 || t as usize >= v {
            return Err(format!(
                "index {t} is out of range for an embedding of {v} rows"
            ));
        }
        let src = View {
            ptr: weight
                .ptr
                .wrapping_offset(t as isize * weight.strides[0] * weight.esize() as isize),
            dtype: weight.dtype,
            shape: vec![d],
            strides: vec![weight.strides[1]],
        };
        let mut rem = i;
        let mut off = 0isize;
        for k in (0..on - 1).rev() {
            off += (rem % out.shape[k]) as isize * out.strides[k];
            rem /= out.shape[k];
        }
        let dst = View {
            ptr: out.ptr.wrapping_offset(off * out.esize() as isize),
            dtype: out.dtype,
            shape: vec![d],
            strides: vec![out.strides[on - 1]],
        };
        super::iter::copy(&src, &dst)?;
    }
    Ok(())
}

/// Dense embedding gradient: `out[V, D]` = sum of the grad rows per index (rows of
/// `padding_idx` skipped; scaled by 1/frequency when `scale_by_freq`).
pub fn embedding_dense_backward(
    grad: &View,
    indices: &View,
    padding_idx: i64,
    scale_by_freq: bool,
    out: &View,
) -> Result<(), String> {
    let (v, d) = (out.shape[0], out.shape[1]);
    let n = indices.numel();
    let mut acc = vec![0f64; v * d];
    let mut idx = Vec::with_capacity(n);
    let mut freq = vec![0usize; v];
    for i in 0..n {
        let mut rem = i;
        let mut off = 0isize;
        for k in (0..indices.ndim()).rev() {
            off += (rem % indices.shape[k]) as isize * indices.strides[k];
            rem /= indices.shape[k];
        }
        // SAFETY: inside the checked view.
        let t = unsafe {
            elem::read_i64(
                indices.dtype,
                indices.ptr.wrapping_offset(off * indices.esize() as isize),
            )
        };
        if t < 0 || t as usize >= v {
            return Err(format!("index {t} is out of range for {v} rows"));
        }
        idx.push(t as usize);
        freq[t as usize] += 1;
    }
    let gn = grad.ndim();
    for (i, &t) in idx.iter().enumerate() {
        if t as i64 == padding_idx {
            continue;
        }
        let mut rem = i;
        let mut off = 0isize;
        for k in (0..gn - 1).rev() {
            off += (rem % grad.shape[k]) as isize * grad.strides[k];
            rem /= grad.shape[k];
        }
        let scale = if scale_by_freq {
            1.0 / freq[t] as f64
        } else {
            1.0
        };
        for j in 0..d {
            let p = grad
                .ptr
                .wrapping_offset((off + j as isize * grad.strides[gn - 1]) * grad.esize() as isize);
            // SAFETY: inside the checked view.
            acc[t * d + j] += scale * unsafe { elem::read_f64(grad.dtype, p) };
        }
    }
    for r in 0..v {
        for j in 0..d {
            let p = out.ptr.wrapping_offset(
                (r as isize * out.strides[0] + j as isize * out.strides[1]) * out.esize() as isize,
            );
            // SAFETY: inside the checked output.
            unsafe { elem::write(out.dtype, p, acc[r * d + j]) };
        }
    }
    Ok(())
}

/// Instance normalization of a 4-D `x`, `[N, C, H, W]` (or `[N, H, W, C]` with `nhwc`):
/// each (n, c) plane is normalized by its own mean and biased variance, `y = (x - mean) /
/// sqrt(var + eps) * gamma[c] + beta[c]`; `mean` and `var` receive the statistics
/// (`[N, C, 1, 1]`, or `[N, 1, 1, C]`). Computed in float64, rounded once.
#[allow(clippy::too_many_arguments)]
pub fn instance_norm(
    x: &View,
    gamma: &View,
    beta: &View,
    nhwc: bool,
    eps: f64,
    y: &View,
    mean: &View,
    var: &View,
) -> Result<(), String> {
    // the planes as [N, C, HW] views
    let perm: [usize; 4] = if nhwc { [0, 3, 1, 2] } else { [0, 1, 2, 3] };
    let xv = x.permute(&perm);
    let yv = y.permute(&perm);
    let (n, c) = (xv.shape[0], xv.shape[1]);
    let hw = xv.shape[2] * xv.shape[3];
    if x.numel() == 0 {
        return Ok(());
    }
    let xs: Vec<f64> = super::extra::load(&xv, DType::F64)?;
    let g: Vec<f64> = super::extra::load(gamma, DType::F64)?;
    let b: Vec<f64> = super::extra::load(beta, DType::F64)?;
    let mut ys = vec![0f64; xs.len()];
    let (mut ms, mut vs) = (vec![0f64; n * c], vec![0f64; n * c]);
    for p in 0..n * c {
        let plane = &xs[p * hw..(p + 1) * hw];
        let m = plane.iter().sum::<f64>() / hw as f64;
        let v = plane.iter().map(|t| (t - m) * (t - m)).sum::<f64>() / hw as f64;
        let r = 1.0 / (v + eps).sqrt();
        let ci = p % c;
        for (o, t) in ys[p * hw..(p + 1) * hw].iter_mut().zip(plane) {
            *o = (t - m) * r * g[ci] + b[ci];
        }
        ms[p] = m;
        vs[p] = v;
    }
    super::extra::store(ys, DType::F64, &yv)?;
    let stat_perm: [usize; 4] = if nhwc { [0, 3, 1, 2] } else { [0, 1, 2, 3] };
    super::extra::store(ms, DType::F64, &mean.permute(&stat_perm))?;
    super::extra::store(vs, DType::F64, &var.permute(&stat_perm))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_backward_over_two_dims_reads_each_rows_statistics() {
        // x [2, 2, 3] normalized over (2, 3) must give the gradient of x [2, 6] over (6)
        let mut x: Vec<f32> = (0..12)
            .map(|v| ((v * 7) % 5) as f32 - 1.5 * (v / 6) as f32)
            .collect();
        let mut g: Vec<f32> = (0..12).map(|v| ((v * 3) % 4) as f32 - 1.0).collect();
        let (mut mean, mut rstd) = (vec![0f32; 2], vec![0f32; 2]);
        for r in 0..2 {
            let row = &x[r * 6..r * 6 + 6];
            let mu = row.iter().sum::<f32>() / 6.0;
            let var = row.iter().map(|v| (v - mu) * (v - mu)).sum::<f32>() / 6.0;
            mean[r] = mu;
            rstd[r] = 1.0 / (var + 1e-5).sqrt();
        }
        let mv = View::of_slice(&mut mean, DType::F32, &[2, 1]);
        let rv = View::of_slice(&mut rstd, DType::F32, &[2, 1]);
        let mut one = vec![0f32; 12];
        let mut two = vec![0f32; 12];
        let xv1 = View::of_slice(&mut x, DType::F32, &[2, 6]);
        let gv1 = View::of_slice(&mut g, DType::F32, &[2, 6]);
        let ov1 = View::of_slice(&mut one, DType::F32, &[2, 6]);
        layer_norm_backward(&gv1, &xv1, 1, &mv, &rv, None, Some(&ov1), None, None).unwrap();
        let xv2 = View::of_slice(&mut x, DType::F32, &[2, 2, 3]);
        let gv2 = View::of_slice(&mut g, DType::F32, &[2, 2, 3]);
        let ov2 = View::of_slice(&mut two, DType::F32, &[2, 2, 3]);
        layer_norm_backward(&gv2, &xv2, 2, &mv, &rv, None, Some(&ov2), None, None).unwrap();
        assert_eq!(one, two);
        assert!(one[6..].iter().any(|v| *v != 0.0));
    }

    #[test]
    fn log_softmax_and_nll() {
        let mut x = vec![1f32, 2., 3., 1., 1., 1.];
        let vx = View::of_slice(&mut x, DType::F32, &[2, 3]);
        let mut y = vec![0f32; 6];
        let vy = View::of_slice(&mut y, DType::F32, &[2, 3]);
        softmax(&vx, 1, &vy, true).unwrap();
        let l = (1f64.exp() + 2f64.exp() + 3f64.exp()).ln();
        assert!((y[2] as f64 - (3.0 - l)).abs() < 1e-6);
        assert!((y[4] as f64 + 3f64.ln()).abs() < 1e-6);
        let mut t = vec![2i64, 0];
        let vt = View::of_slice(&mut t, DType::I64, &[2]);
        let mut o = vec![0f32; 1];
        let mut tw = vec![0f32; 1];
        let vo = View::of_slice(&mut o, DType::F32, &[]);
        let vtw = View::of_slice(&mut tw, DType::F32, &[]);
        nll_loss(&vy, &vt, None, Reduction::Mean, -100, &vo, &vtw).unwrap();
        let want = -(y[2] + y[3]) / 2.0;
        assert!((o[0] - want).abs() < 1e-6);
        assert_eq!(tw[0], 2.0);
    }

    #[test]
    fn instance_norm_nchw_and_nhwc_agree() {
        // N = 1, C = 2, H = 1, W = 2: planes [1, 3] and [2, 6]
        let mut x = vec![1f64, 3.0, 2.0, 6.0];
        let mut g = vec![1f64, 2.0];
        let mut b = vec![0f64, 1.0];
        let (mut y, mut m, mut v) = (vec![0f64; 4], vec![0f64; 2], vec![0f64; 2]);
        let vx = View::of_slice(&mut x, DType::F64, &[1, 2, 1, 2]);
        let vg = View::of_slice(&mut g, DType::F64, &[2]);
        let vb = View::of_slice(&mut b, DType::F64, &[2]);
        let vy = View::of_slice(&mut y, DType::F64, &[1, 2, 1, 2]);
        let vm = View::of_slice(&mut m, DType::F64, &[1, 2, 1, 1]);
        let vv = View::of_slice(&mut v, DType::F64, &[1, 2, 1, 1]);
        instance_norm(&vx, &vg, &vb, false, 0.0, &vy, &vm, &vv).unwrap();
        assert_eq!((m.clone(), v.clone()), (vec![2.0, 4.0], vec![1.0, 4.0]));
        assert_eq!(y, vec![-1.0, 1.0, -1.0, 3.0]);
        // the same data as NHWC [1, 1, 2, 2]: x[0, 0, w, c]
        let mut xh = vec![1f64, 2.0, 3.0, 6.0];
        let mut yh = vec![0f64; 4];
        let (mut mh, mut vh2) = (vec![0f64; 2], vec![0f64; 2]);
        let vxh = View::of_slice(&mut xh, DType::F64, &[1, 1, 2, 2]);
        let vyh = View::of_slice(&mut yh, DType::F64, &[1, 1, 2, 2]);
        let vmh = View::of_slice(&mut mh, DType::F64, &[1, 1, 1, 2]);
        let vvh = View::of_slice(&mut vh2, DType::F64, &[1, 1, 1, 2]);
        instance_norm(&vxh, &vg, &vb, true, 0.0, &vyh, &vmh, &vvh).unwrap();
        assert_eq!((mh, vh2), (vec![2.0, 4.0], vec![1.0, 4.0]));
        assert_eq!(yh, vec![-1.0, -1.0, 1.0, 3.0]);
    }
}
