//! Operators PyTorch reaches through torch_npu beyond the core families: repeat (Tile),
//! one-hot, linspace, cumulative product, nansum, min and max together, group norm and its
//! backward, nearest upsampling and its backward, reflection and replication padding and
//! their backward forms, unique.
//!
//! Kernels that are not elementwise work on dense host copies (`f64` for floating types,
//! `i64` for integers; no value changes on the way) and store the result through
//! [`iter::copy`], which converts and rounds once into the output's dtype.

use super::dtype::{Class, DType};
use super::iter;
use super::nn;
use super::reduce::{self, Reduce};
use super::shape;
use super::view::{contiguous_strides, Scratch, View};

/// Dense row-major copy of `v` as `T` (`as_dt` is `T`'s dtype).
pub(crate) fn load<T: Default + Clone>(v: &View, as_dt: DType) -> Result<Vec<T>, String> {
    let mut buf = vec![T::default(); v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, as_dt, &v.shape))?;
    }
    Ok(buf)
}

/// Store the dense row-major `buf` (of dtype `as_dt`) into `out`.
pub(crate) fn store<T>(mut buf: Vec<T>, as_dt: DType, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, as_dt, &out.shape);
    iter::copy(&src, out)
}

fn is_int(v: &View) -> bool {
    v.dtype.class() == Class::Int
}

/// `out = x.repeat(reps)`: `reps` has at least `x.ndim()` entries; `x` is seen with leading
/// size-1 dimensions, and output dimension d is `reps[d]` copies of input dimension d.
pub fn repeat(x: &View, reps: &[usize], out: &View) -> Result<(), String> {
    let nd = reps.len();
    if nd < x.ndim() || out.ndim() != nd {
        return Err(format!(
            "repeat: {} repeats for a {}-D input and a {}-D output",
            nd,
            x.ndim(),
            out.ndim()
        ));
    }
    if out.numel() == 0 {
        return Ok(());
    }
    let pad = nd - x.ndim();
    let (mut ss, mut sst, mut ds, mut dst) = (vec![], vec![], vec![], vec![]);
    for (d, &r) in reps.iter().enumerate() {
        let (n, st) = if d < pad {
            (1, 0)
        } else {
            (x.shape[d - pad], x.strides[d - pad])
        };
        if out.shape[d] != r * n {
            return Err(format!(
                "repeat: output dimension {d} is {}, expected {}",
                out.shape[d],
                r * n
            ));
        }
        ss.extend([r, n]);
        sst.extend([0, st]);
        ds.extend([r, n]);
        dst.extend([out.strides[d] * n as isize, out.strides[d]]);
    }
    let src = View {
        ptr: x.ptr,
        dtype: x.dtype,
        shape: ss,
        strides: sst,
    };
    let dstv = View {
        ptr: out.ptr,
        dtype: out.dtype,
        shape: ds,
        strides: dst,
    };
    iter::copy(&src, &dstv)
}

/// `out = x.repeat_interleave(reps, dim)`: element i along `dim` repeated `reps[i]` times
/// (`reps` holds one count for every element, or a single count for all). With `dim`
/// `None` the input is flattened first. An output whose length along the dimension is not
/// the sum of the counts, or a negative count, is an error.
pub fn repeat_interleave(
    x: &View,
    reps: &[i64],
    dim: Option<usize>,
    out: &View,
) -> Result<(), String> {
    let flat;
    let (xv, d) = match dim {
        Some(d) => (x, d),
        None => {
            flat = Scratch::new(x.dtype, &[x.numel()]);
            if x.numel() > 0 {
                iter::copy(x, &flat.view.reshaped(&x.shape))?;
            }
            (&flat.view, 0)
        }
    };
    let n = if xv.ndim() == 0 { 1 } else { xv.shape[d] };
    if reps.len() != 1 && reps.len() != n {
        return Err(format!(
            "repeats holds {} counts for a dimension of size {n}",
            reps.len()
        ));
    }
    let count = |i: usize| reps[if reps.len() == 1 { 0 } else { i }];
    if let Some(r) = reps.iter().find(|&&r| r < 0) {
        return Err(format!("repeats holds a negative count {r}"));
    }
    let total: i64 = (0..n).map(count).sum();
    let od = if out.ndim() == 0 { 1 } else { out.shape[d] };
    if total as usize != od {
        return Err(format!(
            "the counts of repeats sum to {total}, but outputSize (the output's dimension {d}) \
             is {od}"
        ));
    }
    let mut at = 0usize;
    for i in 0..n {
        let src = shape::narrow(xv, d, i, 1);
        for _ in 0..count(i) {
            iter::copy(&src, &shape::narrow(out, d, at, 1))?;
            at += 1;
        }
    }
    Ok(())
}

/// `out` = each index i of `reps` repeated `reps[i]` times (`torch.repeat_interleave(t)`).
pub fn repeat_index(reps: &[i64], out: &View) -> Result<(), String> {
    if let Some(r) = reps.iter().find(|&&r| r < 0) {
        return Err(format!("repeats holds a negative count {r}"));
    }
    let v: Vec<i64> = reps
        .iter()
        .enumerate()
        .flat_map(|(i, &r)| std::iter::repeat_n(i as i64, r as usize))
        .collect();
    if v.len() != out.numel() {
        return Err(format!(
            "the counts of repeats sum to {}, but outputSize is {}",
            v.len(),
            out.numel()
        ));
    }
    store(v, DType::I64, out)
}

/// One-hot: `out` has `x`'s shape with a dimension of `depth` inserted at `axis`; element
/// `[.., k at axis, ..]` is `on` where `x[..] == k`, else `off` (an index outside
/// `[0, depth)` gives a row of `off`, as CANN's OneHot does).
pub fn one_hot(
    x: &View,
    depth: usize,
    on: f64,
    off: f64,
    axis: usize,
    out: &View,
) -> Result<(), String> {
    let idx: Vec<i64> = load(x, DType::I64)?;
    let mut dense = vec![off; idx.len() * depth];
    for (i, &k) in idx.iter().enumerate() {
        if k >= 0 && (k as usize) < depth {
            dense[i * depth + k as usize] = on;
        }
    }
    // out with the depth dimension moved last matches the dense layout
    let mut perm: Vec<usize> = (0..out.ndim()).filter(|&d| d != axis).collect();
    perm.push(axis);
    let o = out.permute(&perm);
    store(dense, DType::F64, &o)
}

/// `out[i]` = `steps` evenly spaced values from `start` to `end` (PyTorch's formula: the
/// first half counted from `start`, the second from `end`; floating outputs compute in
/// their own precision (f32 for f16/bf16/f32), integer outputs in f64, truncated).
pub fn linspace(start: f64, end: f64, out: &View) -> Result<(), String> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let half = n / 2;
    if out.dtype == DType::F64 || is_int(out) {
        let step = if n > 1 {
            (end - start) / (n - 1) as f64
        } else {
            0.0
        };
        let v: Vec<f64> = (0..n)
            .map(|i| {
                let r = if i < half {
                    start + step * i as f64
                } else {
                    end - step * (n - 1 - i) as f64
                };
                if is_int(out) {
                    r.trunc()
                } else {
                    r
                }
            })
            .collect();
        return store(v, DType::F64, out);
    }
    let (s, e) = (start as f32, end as f32);
    let step = if n > 1 { (e - s) / (n - 1) as f32 } else { 0.0 };
    let v: Vec<f32> = (0..n)
        .map(|i| {
            if i < half {
                s + step * i as f32
            } else {
                e - step * (n - 1 - i) as f32
            }
        })
        .collect();
    store(v, DType::F32, out)
}

/// Cumulative product along `dim` (`out` has `x`'s shape), in f64 or (integer outputs) i64.
pub fn cumprod(x: &View, dim: usize, out: &View) -> Result<(), String> {
    if x.numel() == 0 {
        return Ok(());
    }
    let n = x.shape[dim];
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&d| d != dim).collect();
    perm.push(dim);
    let (xv, ov) = (x.permute(&perm), out.permute(&perm));
    if is_int(out) {
        let mut v: Vec<i64> = load(&xv, DType::I64)?;
        for row in v.chunks_mut(n) {
            for k in 1..row.len() {
                row[k] = row[k].wrapping_mul(row[k - 1]);
            }
        }
        store(v, DType::I64, &ov)
    } else {
        let mut v: Vec<f64> = load(&xv, DType::F64)?;
        for row in v.chunks_mut(n) {
            for k in 1..row.len() {
                row[k] *= row[k - 1];
            }
        }
        store(v, DType::F64, &ov)
    }
}

/// Histogram of `x` (`torch.histc`): `out.numel()` equal bins over `[min, max]` (both
/// included; the last bin takes `max`); values outside the range and NaNs are not counted.
/// When `min == max` the data's own minimum and maximum are the range, and when those are
/// equal too, `[v - 1, v + 1]`; a range that is not finite fails.
pub fn histc(x: &View, min: f64, max: f64, out: &View) -> Result<(), String> {
    let bins = out.numel();
    let v: Vec<f64> = load(x, DType::F64)?;
    let (mut lo, mut hi) = (min, max);
    if lo == hi && !v.is_empty() {
        lo = v
            .iter()
            .copied()
            .filter(|e| !e.is_nan())
            .fold(f64::INFINITY, f64::min);
        hi = v
            .iter()
            .copied()
            .filter(|e| !e.is_nan())
            .fold(f64::NEG_INFINITY, f64::max);
    }
    if lo == hi {
        lo -= 1.0;
        hi += 1.0;
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(format!("the range [{lo}, {hi}] is not finite"));
    }
    let mut h = vec![0f64; bins];
    for &e in &v {
        if e.is_nan() || e < lo || e > hi {
            continue;
        }
        let b = (((e - lo) * bins as f64) / (hi - lo)).floor() as usize;
        h[b.min(bins - 1)] += 1.0;
    }
    store(h, DType::F64, out)
}

/// Occurrences of each value of the 1-D non-negative integer `x` (`torch.bincount`), summed
/// `weights` when given; `out` must have `max(max(x) + 1, minlength)` elements.
pub fn bincount(
    x: &View,
    weights: Option<&View>,
    minlength: usize,
    out: &View,
) -> Result<(), String> {
    let v: Vec<i64> = load(x, DType::I64)?;
    if let Some(bad) = v.iter().find(|e| **e < 0) {
        return Err(format!(
            "self holds {bad}: bincount counts non-negative integers"
        ));
    }
    let want = v
        .iter()
        .map(|&e| e as usize + 1)
        .max()
        .unwrap_or(0)
        .max(minlength);
    if out.numel() != want {
        return Err(format!(
            "out has {} elements, but max(self) + 1 and minlength give {want}",
            out.numel()
        ));
    }
    let w: Option<Vec<f64>> = weights.map(|w| load(w, DType::F64)).transpose()?;
    let mut c = vec![0f64; want];
    for (i, &e) in v.iter().enumerate() {
        c[e as usize] += w.as_ref().map_or(1.0, |w| w[i]);
    }
    store(c, DType::F64, out)
}

/// Insertion positions of `x`'s values in the sorted last dimension of `seq`
/// (`torch.searchsorted`): a 1-D `seq` serves every value; otherwise `seq` `[..., M]` and
/// `x` `[..., K]` share their leading dimensions and each row searches its own row.
/// `right` takes the position after equal values; `sorter` (INT64, `seq`'s shape) gives the
/// order of an unsorted `seq` (an index outside `[0, M)` fails).
pub fn searchsorted(
    seq: &View,
    x: &View,
    right: bool,
    sorter: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let m = *seq.shape.last().unwrap_or(&1);
    let sv: Vec<f64> = load(seq, DType::F64)?;
    let srt: Option<Vec<i64>> = sorter.map(|s| load(s, DType::I64)).transpose()?;
    let xv: Vec<f64> = load(x, DType::F64)?;
    let k = if seq.ndim() <= 1 {
        xv.len().max(1)
    } else {
        *x.shape.last().unwrap_or(&1)
    };
    let mut pos = vec![0i64; xv.len()];
    for (i, &v) in xv.iter().enumerate() {
        let row = if seq.ndim() <= 1 { 0 } else { i / k.max(1) };
        let at = |j: usize| -> Result<f64, String> {
            let idx = match &srt {
                Some(s) => {
                    let o = s[row * m + j];
                    if o < 0 || o as usize >= m {
                        return Err(format!("sorter holds {o}, outside [0, {m})"));
                    }
                    o as usize
                }
                None => j,
            };
            Ok(sv[row * m + idx])
        };
        // first position whose value is > v (right) or >= v (left); NaN sorts last
        let (mut lo, mut hi) = (0usize, m);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let e = at(mid)?;
            let before = if right {
                e <= v || (v.is_nan() && !e.is_nan())
            } else {
                e < v || (v.is_nan() && !e.is_nan())
            };
            if before {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        pos[i] = lo as i64;
    }
    store(pos, DType::I64, out)
}

/// `out` (2-D) = ones on the main diagonal, zeros elsewhere (`torch.eye`).
pub fn eye(out: &View) -> Result<(), String> {
    let (n, m) = (out.shape[0], out.shape[1]);
    let mut v = vec![0f64; n * m];
    for i in 0..n.min(m) {
        v[i * m + i] = 1.0;
    }
    store(v, DType::F64, out)
}

/// `out[i]` = `base` raised to the `i`-th of `steps` evenly spaced exponents from `start`
/// to `end` (`torch.logspace`: the exponents as [`linspace`] spaces them, in `f64`).
pub fn logspace(start: f64, end: f64, base: f64, out: &View) -> Result<(), String> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let step = if n > 1 {
        (end - start) / (n - 1) as f64
    } else {
        0.0
    };
    let half = n / 2;
    let v: Vec<f64> = (0..n)
        .map(|i| {
            let e = if i < half {
                start + step * i as f64
            } else {
                end - step * (n - 1 - i) as f64
            };
            base.powf(e)
        })
        .collect();
    store(v, DType::F64, out)
}

/// Cumulative maximum (`max`) or minimum along `dim`: `values` gets the running extreme,
/// `indices` (INT32 or INT64) the position it was last seen at (PyTorch: ties take the later
/// index; a NaN wins and stays, each further NaN taking over the index).
pub fn cum_extreme(
    x: &View,
    dim: usize,
    max: bool,
    values: &View,
    indices: &View,
) -> Result<(), String> {
    if x.numel() == 0 {
        return Ok(());
    }
    if x.ndim() == 0 {
        iter::copy(x, values)?;
        return store(vec![0i64], DType::I64, indices);
    }
    let n = x.shape[dim];
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&d| d != dim).collect();
    perm.push(dim);
    let (xv, vv, iv) = (
        x.permute(&perm),
        values.permute(&perm),
        indices.permute(&perm),
    );
    let mut idx = vec![0i64; x.numel()];
    if is_int(x) || x.dtype == DType::Bool {
        let mut v: Vec<i64> = load(&xv, DType::I64)?;
        for (row, ir) in v.chunks_mut(n).zip(idx.chunks_mut(n)) {
            let (mut best, mut at) = (row[0], 0usize);
            for k in 0..row.len() {
                let c = row[k];
                if (max && c >= best) || (!max && c <= best) {
                    best = c;
                    at = k;
                }
                row[k] = best;
                ir[k] = at as i64;
            }
        }
        store(v, DType::I64, &vv)?;
    } else {
        let mut v: Vec<f64> = load(&xv, DType::F64)?;
        for (row, ir) in v.chunks_mut(n).zip(idx.chunks_mut(n)) {
            let (mut best, mut at) = (row[0], 0usize);
            for k in 0..row.len() {
                let c = row[k];
                let take =
                    c.is_nan() || (!best.is_nan() && ((max && c >= best) || (!max && c <= best)));
                if take {
                    best = c;
                    at = k;
                }
                row[k] = best;
                ir[k] = at as i64;
            }
        }
        store(v, DType::F64, &vv)?;
    }
    store(idx, DType::I64, &iv)
}

/// Unique consecutive slices of `x` along `dim` (`torch.unique_consecutive(dim=...)`):
/// runs of equal neighbouring slices collapse into one. `values` (contiguous, x's shape)
/// gets the kept slices, stored contiguously as a tensor of x's shape with `k` at `dim`,
/// `inverse` (`[x.shape[dim]]`) each slice's run number,
/// `counts` (at least as long) the run lengths. Returns the number of runs.
pub fn unique_consecutive_dim(
    x: &View,
    dim: usize,
    values: &View,
    inverse: Option<&View>,
    counts: Option<&View>,
) -> Result<usize, String> {
    unique_slices(x, dim, false, values, inverse, counts)
}

/// Unique slices of `x` along `dim` (`torch.unique(dim=...)`): the distinct slices in
/// ascending lexicographic order (-0.0 equals 0.0; a slice holding NaN equals no other
/// slice), stored as for
/// [`unique_consecutive_dim`]; `inverse[i]` is the position of slice i among them and
/// `counts` how often each occurs. Returns the number of distinct slices.
pub fn unique_dim(
    x: &View,
    dim: usize,
    values: &View,
    inverse: Option<&View>,
    counts: Option<&View>,
) -> Result<usize, String> {
    unique_slices(x, dim, true, values, inverse, counts)
}

/// A unique result of `need` elements must fit in the caller's output of `room` elements
/// (the caller sizes it before the result is known).
fn fits(what: &str, need: usize, room: usize) -> Result<(), String> {
    if need > room {
        return Err(format!(
            "the result needs {need} elements but {what} has room for {room}: allocate it \
             for the worst case (every element distinct)"
        ));
    }
    Ok(())
}

/// [`unique_consecutive_dim`] over the slices in their order, or with `sorted` over the
/// slices sorted (stable) lexicographically, which makes equal slices neighbours.
fn unique_slices(
    x: &View,
    dim: usize,
    sorted: bool,
    values: &View,
    inverse: Option<&View>,
    counts: Option<&View>,
) -> Result<usize, String> {
    let n = x.shape[dim];
    if n == 0 {
        return Ok(0);
    }
    let mut perm = vec![dim];
    perm.extend((0..x.ndim()).filter(|&d| d != dim));
    let xv = x.permute(&perm);
    let row = x.numel() / n;
    let int = is_int(x) || x.dtype == DType::Bool;
    let (ik, fk): (Vec<i64>, Vec<f64>) = if int {
        (load(&xv, DType::I64)?, vec![])
    } else {
        (vec![], load(&xv, DType::F64)?)
    };
    let same = |a: usize, b: usize| -> bool {
        if int {
            ik[a * row..(a + 1) * row] == ik[b * row..(b + 1) * row]
        } else {
            fk[a * row..(a + 1) * row] == fk[b * row..(b + 1) * row]
        }
    };
    let mut order: Vec<usize> = (0..n).collect();
    if sorted {
        let cmp = |a: usize, b: usize| -> std::cmp::Ordering {
            use std::cmp::Ordering::Equal;
            let (ra, rb) = (a * row..(a + 1) * row, b * row..(b + 1) * row);
            if int {
                ik[ra].cmp(&ik[rb])
            } else {
                fk[ra]
                    .iter()
                    .zip(&fk[rb])
                    .map(|(p, q)| p.partial_cmp(q).unwrap_or(Equal))
                    .find(|&o| o != Equal)
                    .unwrap_or(Equal)
            }
        };
        order.sort_by(|&a, &b| cmp(a, b));
    }
    let mut firsts: Vec<usize> = Vec::new();
    let mut cnt: Vec<i64> = Vec::new();
    let mut inv = vec![0i64; n];
    for (j, &i) in order.iter().enumerate() {
        if j == 0 || !same(order[j - 1], i) {
            firsts.push(i);
            cnt.push(0);
        }
        *cnt.last_mut().unwrap() += 1;
        inv[i] = firsts.len() as i64 - 1;
    }
    let k = firsts.len();
    fits("valueOut", k * row, values.numel())?;
    if let Some(cv) = counts {
        fits("countsOut", k, cv.numel())?;
    }
    // `values` is contiguous: the result is stored contiguously in its new shape (x's
    // with `k` at `dim`), as a caller that reads the view shape back and resizes expects
    let mut nshape = x.shape.clone();
    nshape[dim] = k;
    let front = View {
        ptr: values.ptr,
        dtype: values.dtype,
        strides: contiguous_strides(&nshape),
        shape: nshape,
    }
    .permute(&perm);
    if int {
        let d: Vec<i64> = firsts
            .iter()
            .flat_map(|&f| ik[f * row..(f + 1) * row].iter().copied())
            .collect();
        store(d, DType::I64, &front)?;
    } else {
        let d: Vec<f64> = firsts
            .iter()
            .flat_map(|&f| fk[f * row..(f + 1) * row].iter().copied())
            .collect();
        store(d, DType::F64, &front)?;
    }
    if let Some(iv) = inverse {
        if iv.numel() == n {
            store(inv, DType::I64, &iv.reshaped(&[n]))?;
        }
    }
    if let Some(cv) = counts {
        let st = cv.strides.first().copied().unwrap_or(1);
        let c = View {
            ptr: cv.ptr,
            dtype: cv.dtype,
            shape: vec![k],
            strides: vec![st],
        };
        store(cnt, DType::I64, &c)?;
    }
    Ok(k)
}

/// `out` (0-d) = the sum of the main diagonal of the 2-D `x` (`torch.trace`), in i64 for
/// integer outputs and f64 otherwise.
pub fn trace(x: &View, out: &View) -> Result<(), String> {
    let n = x.shape[0].min(x.shape[1]);
    let diag = View {
        ptr: x.ptr,
        dtype: x.dtype,
        shape: vec![n],
        strides: vec![x.strides[0] + x.strides[1]],
    };
    reduce::reduce(Reduce::Sum, &diag, &[0], out, is_int(out))
}

/// Sum over `dims` treating NaN as 0 (`torch.nansum`); `out` as for [`reduce::reduce`].
pub fn nansum(x: &View, dims: &[usize], out: &View) -> Result<(), String> {
    if is_int(x) {
        return reduce::reduce(Reduce::Sum, x, dims, out, is_int(out));
    }
    let mut v: Vec<f64> = load(x, DType::F64)?;
    for e in v.iter_mut() {
        if e.is_nan() {
            *e = 0.0;
        }
    }
    let xv = View::of_slice(&mut v, DType::F64, &x.shape);
    reduce::reduce(Reduce::Sum, &xv, dims, out, false)
}

/// Group normalisation of `x` `[N, C, *]` in `groups` groups: `out = (x - mean) * rstd *
/// gamma[c] + beta[c]`; `mean`/`rstd` `[N, groups]` (biased variance, `rstd = 1/sqrt(var +
/// eps)`). Statistics in f64.
#[allow(clippy::too_many_arguments)]
pub fn group_norm(
    x: &View,
    gamma: Option<&View>,
    beta: Option<&View>,
    groups: usize,
    eps: f64,
    out: &View,
    mean: Option<&View>,
    rstd: Option<&View>,
) -> Result<(), String> {
    let n = x.shape[0];
    let c = x.shape[1];
    let hw: usize = x.shape[2..].iter().product();
    let xs: Vec<f64> = load(x, DType::F64)?;
    let g: Vec<f64> = match gamma {
        Some(v) => load(v, DType::F64)?,
        None => vec![1.0; c],
    };
    let b: Vec<f64> = match beta {
        Some(v) => load(v, DType::F64)?,
        None => vec![0.0; c],
    };
    let cpg = c / groups.max(1);
    let len = cpg * hw;
    let mut y = vec![0f64; xs.len()];
    let mut ms = vec![0f64; n * groups];
    let mut rs = vec![0f64; n * groups];
    for i in 0..n * groups {
        let seg = &xs[i * len..(i + 1) * len];
        let m = if len == 0 {
            0.0
        } else {
            seg.iter().sum::<f64>() / len as f64
        };
        let var = if len == 0 {
            0.0
        } else {
            seg.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / len as f64
        };
        let r = 1.0 / (var + eps).sqrt();
        ms[i] = m;
        rs[i] = r;
        let (ni, gi) = (i / groups, i % groups);
        for cc in 0..cpg {
            let ch = gi * cpg + cc;
            let base = (ni * c + ch) * hw;
            for k in 0..hw {
                y[base + k] = (xs[base + k] - m) * r * g[ch] + b[ch];
            }
        }
    }
    store(y, DType::F64, out)?;
    if let Some(mv) = mean {
        store(ms, DType::F64, mv)?;
    }
    if let Some(rv) = rstd {
        store(rs, DType::F64, rv)?;
    }
    Ok(())
}

/// The backward of [`group_norm`]: from `dy`, `x`, the saved `mean`/`rstd` `[N, groups]`
/// and `gamma`, the input gradient `dx` and the parameter gradients `dgamma`/`dbeta` `[C]`
/// (each optional, as `outputMask` asks).
#[allow(clippy::too_many_arguments)]
pub fn group_norm_backward(
    dy: &View,
    x: &View,
    mean: &View,
    rstd: &View,
    gamma: Option<&View>,
    groups: usize,
    dx: Option<&View>,
    dgamma: Option<&View>,
    dbeta: Option<&View>,
) -> Result<(), String> {
    let n = x.shape[0];
    let c = x.shape[1];
    let hw: usize = x.shape[2..].iter().product();
    let xs: Vec<f64> = load(x, DType::F64)?;
    let dys: Vec<f64> = load(dy, DType::F64)?;
    let ms: Vec<f64> = load(mean, DType::F64)?;
    let rs: Vec<f64> = load(rstd, DType::F64)?;
    let g: Vec<f64> = match gamma {
        Some(v) => load(v, DType::F64)?,
        None => vec![1.0; c],
    };
    let cpg = c / groups.max(1);
    let len = (cpg * hw) as f64;
    let mut dxs = vec![0f64; xs.len()];
    let mut dg = vec![0f64; c];
    let mut db = vec![0f64; c];
    for ni in 0..n {
        for gi in 0..groups {
            let (m, r) = (ms[ni * groups + gi], rs[ni * groups + gi]);
            // sums over the group of dy*gamma and dy*gamma*xhat
            let (mut s1, mut s2) = (0f64, 0f64);
            for cc in 0..cpg {
                let ch = gi * cpg + cc;
                let base = (ni * c + ch) * hw;
                for k in 0..hw {
                    let xh = (xs[base + k] - m) * r;
                    let d = dys[base + k];
                    s1 += d * g[ch];
                    s2 += d * g[ch] * xh;
                    dg[ch] += d * xh;
                    db[ch] += d;
                }
            }
            for cc in 0..cpg {
                let ch = gi * cpg + cc;
                let base = (ni * c + ch) * hw;
                for k in 0..hw {
                    let xh = (xs[base + k] - m) * r;
                    let d = dys[base + k] * g[ch];
                    dxs[base + k] = r * (d - s1 / len - xh * s2 / len);
                }
            }
        }
    }
    if let Some(v) = dx {
        store(dxs, DType::F64, v)?;
    }
    if let Some(v) = dgamma {
        store(dg, DType::F64, v)?;
    }
    if let Some(v) = dbeta {
        store(db, DType::F64, v)?;
    }
    Ok(())
}

/// Source index of output index `o` for nearest interpolation (PyTorch's legacy `nearest`):
/// `floor(o * scale)` clamped to the input, with `scale` = in/out or 1/scale_factor.
fn nearest_src(o: usize, scale: f64, n_in: usize) -> usize {
    ((o as f64 * scale).floor() as usize).min(n_in.saturating_sub(1))
}

/// Source index for `nearest-exact` (PyTorch's `_upsample_nearest_exact`): the pixel
/// centre, `floor((o + 0.5) * scale)` clamped to the input.
fn nearest_exact_src(o: usize, scale: f64, n_in: usize) -> usize {
    (((o as f64 + 0.5) * scale).floor() as usize).min(n_in.saturating_sub(1))
}

fn src_fn(exact: bool) -> fn(usize, f64, usize) -> usize {
    if exact {
        nearest_exact_src
    } else {
        nearest_src
    }
}

/// The scale of one spatial dimension: `1 / s` when a scale factor `s > 0` is given, else
/// `in / out`.
pub fn nearest_scale(n_in: usize, n_out: usize, s: Option<f64>) -> f64 {
    match s {
        Some(s) if s > 0.0 => 1.0 / s,
        _ => n_in as f64 / n_out.max(1) as f64,
    }
}

/// Nearest upsampling of the trailing `scales.len()` dimensions of `x` into `out` (the
/// leading dimensions match).
pub fn upsample_nearest(x: &View, scales: &[f64], out: &View) -> Result<(), String> {
    upsample_nearest_mode(x, scales, false, out)
}

/// [`upsample_nearest`], or with `exact` the `nearest-exact` mode (pixel centres).
pub fn upsample_nearest_mode(
    x: &View,
    scales: &[f64],
    exact: bool,
    out: &View,
) -> Result<(), String> {
    let src = src_fn(exact);
    let k = scales.len();
    let nd = x.ndim();
    // index maps per spatial dimension, then a gather through strided views
    let maps: Vec<Vec<usize>> = (0..k)
        .map(|j| {
            let d = nd - k + j;
            (0..out.shape[d])
                .map(|o| src(o, scales[j], x.shape[d]))
                .collect()
        })
        .collect();
    gather_spatial(x, &maps, out)
}

/// `out[.., o1, .., ok] = x[.., maps[0][o1], .., maps[k-1][ok]]` over the trailing k
/// dimensions.
fn gather_spatial(x: &View, maps: &[Vec<usize>], out: &View) -> Result<(), String> {
    if out.numel() == 0 {
        return Ok(());
    }
    let k = maps.len();
    let nd = x.ndim();
    let lead = nd - k;
    let xs: Vec<f64> = load(x, DType::F64)?;
    let in_strides = contiguous_strides(&x.shape);
    let outer: usize = x.shape[..lead].iter().product();
    let in_inner: usize = x.shape[lead..].iter().product();
    let out_inner: usize = out.shape[lead..].iter().product();
    let mut y = vec![0f64; outer * out_inner];
    let oshape = &out.shape[lead..];
    for o in 0..out_inner {
        let mut rem = o;
        let mut src = 0isize;
        for j in (0..k).rev() {
            let i = rem % oshape[j];
            rem /= oshape[j];
            src += maps[j][i] as isize * in_strides[lead + j];
        }
        for b in 0..outer {
            y[b * out_inner + o] = xs[b * in_inner + src as usize];
        }
    }
    store(y, DType::F64, out)
}

/// The backward of [`upsample_nearest`]: `dx` (the input's shape) gets the sum of the
/// output gradients that read each input element.
pub fn upsample_nearest_backward(dy: &View, scales: &[f64], dx: &View) -> Result<(), String> {
    upsample_nearest_backward_mode(dy, scales, false, dx)
}

/// [`upsample_nearest_backward`] for either mode (see [`upsample_nearest_mode`]).
pub fn upsample_nearest_backward_mode(
    dy: &View,
    scales: &[f64],
    exact: bool,
    dx: &View,
) -> Result<(), String> {
    let src = src_fn(exact);
    let k = scales.len();
    let nd = dx.ndim();
    let maps: Vec<Vec<usize>> = (0..k)
        .map(|j| {
            let d = nd - k + j;
            (0..dy.shape[d])
                .map(|o| src(o, scales[j], dx.shape[d]))
                .collect()
        })
        .collect();
    scatter_spatial(dy, &maps, dx)
}

/// `dx[.., maps[0][o1], .., maps[k-1][ok]] += dy[.., o1, .., ok]` (dx zeroed first).
fn scatter_spatial(dy: &View, maps: &[Vec<usize>], dx: &View) -> Result<(), String> {
    let k = maps.len();
    let nd = dx.ndim();
    let lead = nd - k;
    let ds: Vec<f64> = load(dy, DType::F64)?;
    let in_strides = contiguous_strides(&dx.shape);
    let outer: usize = dx.shape[..lead].iter().product();
    let in_inner: usize = dx.shape[lead..].iter().product();
    let out_inner: usize = dy.shape[lead..].iter().product();
    let mut g = vec![0f64; outer * in_inner];
    let oshape = &dy.shape[lead..];
    for o in 0..out_inner {
        let mut rem = o;
        let mut src = 0isize;
        for j in (0..k).rev() {
            let i = rem % oshape[j];
            rem /= oshape[j];
            src += maps[j][i] as isize * in_strides[lead + j];
        }
        for b in 0..outer {
            g[b * in_inner + src as usize] += ds[b * out_inner + o];
        }
    }
    store(g, DType::F64, dx)
}

/// Per output index of one spatial dimension: the two source indices and their weights
/// (PyTorch's `area_pixel_compute_source_index` for linear modes).
fn linear_taps(
    n_in: usize,
    n_out: usize,
    scale: Option<f64>,
    align: bool,
) -> Vec<(usize, usize, f64, f64)> {
    let ratio = if align {
        if n_out > 1 {
            (n_in as f64 - 1.0) / (n_out as f64 - 1.0)
        } else {
            0.0
        }
    } else {
        nearest_scale(n_in, n_out, scale)
    };
    (0..n_out)
        .map(|o| {
            let src = if align {
                ratio * o as f64
            } else {
                (ratio * (o as f64 + 0.5) - 0.5).max(0.0)
            };
            let i0 = (src.floor() as usize).min(n_in - 1);
            let i1 = if i0 < n_in - 1 { i0 + 1 } else { i0 };
            let l1 = (src - i0 as f64).clamp(0.0, 1.0);
            (i0, i1, 1.0 - l1, l1)
        })
        .collect()
}

/// The (source offset, weight) pairs of every output position of the trailing spatial
/// dimensions (row-major over them), for one batch row.
fn linear_plan(
    in_sp: &[usize],
    out_sp: &[usize],
    scales: &[Option<f64>],
    align: bool,
) -> Vec<Vec<(usize, f64)>> {
    let k = in_sp.len();
    let taps: Vec<_> = (0..k)
        .map(|j| linear_taps(in_sp[j], out_sp[j], scales[j], align))
        .collect();
    let in_st = contiguous_strides(in_sp);
    let n_out: usize = out_sp.iter().product();
    (0..n_out)
        .map(|o| {
            let mut idx = vec![0usize; k];
            let mut rem = o;
            for j in (0..k).rev() {
                idx[j] = rem % out_sp[j];
                rem /= out_sp[j];
            }
            let mut terms = vec![(0usize, 1.0f64)];
            for j in 0..k {
                let (i0, i1, l0, l1) = taps[j][idx[j]];
                let st = in_st[j] as usize;
                terms = terms
                    .into_iter()
                    .flat_map(|(off, w)| [(off + i0 * st, w * l0), (off + i1 * st, w * l1)])
                    .collect();
            }
            terms
        })
        .collect()
}

/// Linear (1 trailing dimension) or bilinear (2) interpolation of `x` into `out`
/// (`F.interpolate` modes `linear`/`bilinear`): `scales[j]` is the given scale factor of
/// spatial dimension `j` (used when > 0 and `align` is false), `align` is `align_corners`.
pub fn upsample_linear(
    x: &View,
    scales: &[Option<f64>],
    align: bool,
    out: &View,
) -> Result<(), String> {
    let k = scales.len();
    let lead = x.ndim() - k;
    let plan = linear_plan(&x.shape[lead..], &out.shape[lead..], scales, align);
    let xs: Vec<f64> = load(x, DType::F64)?;
    let outer: usize = x.shape[..lead].iter().product();
    let in_inner: usize = x.shape[lead..].iter().product();
    let out_inner = plan.len();
    let mut y = vec![0f64; outer * out_inner];
    for b in 0..outer {
        let src = &xs[b * in_inner..(b + 1) * in_inner];
        for (o, terms) in plan.iter().enumerate() {
            y[b * out_inner + o] = terms.iter().map(|&(i, w)| w * src[i]).sum();
        }
    }
    store(y, DType::F64, out)
}

/// The backward of [`upsample_linear`]: `dx` (the input's shape) gets each output
/// gradient spread over the input positions with the interpolation weights.
pub fn upsample_linear_backward(
    dy: &View,
    scales: &[Option<f64>],
    align: bool,
    dx: &View,
) -> Result<(), String> {
    let k = scales.len();
    let lead = dx.ndim() - k;
    let plan = linear_plan(&dx.shape[lead..], &dy.shape[lead..], scales, align);
    let ds: Vec<f64> = load(dy, DType::F64)?;
    let outer: usize = dx.shape[..lead].iter().product();
    let in_inner: usize = dx.shape[lead..].iter().product();
    let out_inner = plan.len();
    let mut g = vec![0f64; outer * in_inner];
    for b in 0..outer {
        let dst = &mut g[b * in_inner..(b + 1) * in_inner];
        for (o, terms) in plan.iter().enumerate() {
            let v = ds[b * out_inner + o];
            for &(i, w) in terms {
                dst[i] += w * v;
            }
        }
    }
    store(g, DType::F64, dx)
}

/// Padding modes that read the input at mirrored or clamped positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// mirror without repeating the edge (`reflect`)
    Reflect,
    /// repeat the edge (`replicate`)
    Replicate,
}

/// Source index of output position `o` for padding `before` of an input of size `n`.
fn pad_src(o: usize, before: i64, n: usize, mode: PadMode) -> usize {
    let i = o as i64 - before;
    let n = n as i64;
    let s = match mode {
        PadMode::Replicate => i.clamp(0, n - 1),
        PadMode::Reflect => {
            if n == 1 {
                0
            } else {
                let period = 2 * (n - 1);
                let m = i.rem_euclid(period);
                if m < n {
                    m
                } else {
                    period - m
                }
            }
        }
    };
    s as usize
}

/// The index maps of a padding: `pad` holds (before, after) pairs from the last dimension.
fn pad_maps(
    in_shape: &[usize],
    out_shape: &[usize],
    pad: &[i64],
    mode: PadMode,
) -> Vec<Vec<usize>> {
    let k = pad.len() / 2;
    let nd = in_shape.len();
    (0..k)
        .map(|j| {
            let d = nd - k + j;
            let before = pad[2 * (k - 1 - j)];
            (0..out_shape[d])
                .map(|o| pad_src(o, before, in_shape[d], mode))
                .collect()
        })
        .collect()
}

/// Reflection or replication padding of the trailing `pad.len() / 2` dimensions.
pub fn pad(x: &View, pad: &[i64], mode: PadMode, out: &View) -> Result<(), String> {
    let maps = pad_maps(&x.shape, &out.shape, pad, mode);
    gather_spatial(x, &maps, out)
}

/// The backward of [`pad`]: `dx` gets the sum of the gradients of the positions that read
/// each input element.
pub fn pad_backward(dy: &View, pad: &[i64], mode: PadMode, dx: &View) -> Result<(), String> {
    let maps = pad_maps(&dx.shape, &dy.shape, pad, mode);
    scatter_spatial(dy, &maps, dx)
}

/// `x` `[N, C, d1, ...]` as a dense `[N * d1 * ..., C]` f64 scratch (class dimension last),
/// and the permutation that moves dimension 1 last.
fn classes_last(x: &View) -> Result<(Scratch, Vec<usize>), String> {
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&d| d != 1).collect();
    perm.push(1);
    let xp = x.permute(&perm);
    let s = Scratch::new(DType::F64, &xp.shape);
    iter::copy(&xp, &s.view)?;
    Ok((s, perm))
}

/// NLL loss of `x` `[N, C, d1, ...]` at `target` `[N, d1, ...]` (`aclnnNLLLoss2d`): the 2-D
/// [`nn::nll_loss`] over every position. `out` is `target`'s shape (no reduction) or 0-d.
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_nd(
    x: &View,
    target: &View,
    weight: Option<&View>,
    reduction: nn::Reduction,
    ignore_index: i64,
    out: &View,
    total_weight: &View,
) -> Result<(), String> {
    let c = x.shape[1];
    let rows = target.numel();
    let (xs, _) = classes_last(x)?;
    let x2 = xs.view.reshaped(&[rows, c]);
    let ts = Scratch::new(DType::I64, &target.shape);
    iter::copy(target, &ts.view)?;
    let t1 = ts.view.reshaped(&[rows]);
    if reduction == nn::Reduction::None {
        let os = Scratch::new(DType::F64, &[rows]);
        nn::nll_loss(
            &x2,
            &t1,
            weight,
            reduction,
            ignore_index,
            &os.view,
            total_weight,
        )?;
        iter::copy(&os.view.reshaped(&out.shape), out)
    } else {
        nn::nll_loss(&x2, &t1, weight, reduction, ignore_index, out, total_weight)
    }
}

/// The gradient of [`nll_loss_nd`] with respect to `x` (`out` has `x`'s shape).
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_nd_backward(
    g: &View,
    x: &View,
    target: &View,
    weight: Option<&View>,
    reduction: nn::Reduction,
    ignore_index: i64,
    total_weight: &View,
    out: &View,
) -> Result<(), String> {
    let c = x.shape[1];
    let rows = target.numel();
    let (xs, perm) = classes_last(x)?;
    let x2 = xs.view.reshaped(&[rows, c]);
    let ts = Scratch::new(DType::I64, &target.shape);
    iter::copy(target, &ts.view)?;
    let t1 = ts.view.reshaped(&[rows]);
    let gs = Scratch::new(DType::F64, &g.shape);
    iter::copy(g, &gs.view)?;
    let g1 = if reduction == nn::Reduction::None {
        gs.view.reshaped(&[rows])
    } else {
        gs.view.reshaped(&[])
    };
    let os = Scratch::new(DType::F64, &[rows, c]);
    nn::nll_loss_backward(
        &g1,
        &x2,
        &t1,
        weight,
        reduction,
        ignore_index,
        total_weight,
        &os.view,
    )?;
    let shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    iter::copy(&os.view.reshaped(&shape), &out.permute(&perm))
}

/// What [`unique`] found: the number of unique values (the length of `values`/`counts`).
pub struct Unique {
    pub count: usize,
}

/// Unique values of `x` (flattened): sorted ascending, or with `consecutive` only runs of
/// equal neighbours collapsed (in input order).
/// `values` (1-D, at least `count` long) gets the values, `inverse` (x's shape) the index
/// of each element's value, `counts` (at least `count` long) the occurrences. NaNs are
/// each their own value (as in PyTorch), sorted last.
pub fn unique(
    x: &View,
    consecutive: bool,
    values: &View,
    inverse: Option<&View>,
    counts: Option<&View>,
) -> Result<Unique, String> {
    let n = x.numel();
    let flat_out = |v: &View, len: usize| -> View {
        let st = v.strides.first().copied().unwrap_or(1);
        View {
            ptr: v.ptr,
            dtype: v.dtype,
            shape: vec![len],
            strides: vec![st],
        }
    };
    let int = is_int(x);
    let keys: Vec<f64> = if int {
        load::<i64>(x, DType::I64)?
            .into_iter()
            .map(|v| v as f64)
            .collect()
    } else {
        load(x, DType::F64)?
    };
    let ikeys: Vec<i64> = if int { load(x, DType::I64)? } else { vec![] };
    let eq = |a: usize, b: usize| -> bool {
        if int {
            ikeys[a] == ikeys[b]
        } else {
            keys[a] == keys[b]
        }
    };
    let order: Vec<usize> = if consecutive {
        (0..n).collect()
    } else {
        let mut o: Vec<usize> = (0..n).collect();
        if int {
            o.sort_by_key(|&i| ikeys[i]);
        } else {
            o.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]).then(a.cmp(&b)));
            // -0.0 and 0.0 are one value: total_cmp separates them, so equal runs are
            // found with == below; NaNs sort last and stay distinct
        }
        o
    };
    let mut firsts: Vec<usize> = Vec::new();
    let mut cnt: Vec<i64> = Vec::new();
    let mut inv = vec![0i64; n];
    for (pos, &i) in order.iter().enumerate() {
        if pos == 0 || !eq(order[pos - 1], i) {
            firsts.push(i);
            cnt.push(0);
        }
        *cnt.last_mut().unwrap() += 1;
        inv[i] = firsts.len() as i64 - 1;
    }
    let k = firsts.len();
    fits("valueOut", k, values.numel())?;
    if let Some(cv) = counts {
        fits("countsOut", k, cv.numel())?;
    }
    if int {
        let v: Vec<i64> = firsts.iter().map(|&i| ikeys[i]).collect();
        store(v, DType::I64, &flat_out(values, k))?;
    } else {
        let v: Vec<f64> = firsts.iter().map(|&i| keys[i]).collect();
        store(v, DType::F64, &flat_out(values, k))?;
    }
    if let Some(iv) = inverse {
        if iv.numel() == n {
            store(inv, DType::I64, iv)?;
        }
    }
    if let Some(cv) = counts {
        store(cnt, DType::I64, &flat_out(cv, k))?;
    }
    Ok(Unique { count: k })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_and_pad() {
        let mut x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let xv = View::of_slice(&mut x, DType::F32, &[3, 2]);
        let mut o = [0f32; 24];
        let ov = View::of_slice(&mut o, DType::F32, &[2, 6, 2]);
        repeat(&xv, &[2, 2, 1], &ov).unwrap();
        assert_eq!(&o[..12], &[1., 2., 3., 4., 5., 6., 1., 2., 3., 4., 5., 6.]);
        assert_eq!(&o[..12], &o[12..]);
        let mut p = [0f32; 6 * 2];
        let pv = View::of_slice(&mut p, DType::F32, &[3, 4]);
        // reflect (1, 1) on the last dim: [b a b a], replicate: [a a b b]
        pad(&xv, &[1, 1], PadMode::Reflect, &pv).unwrap();
        assert_eq!(&p[..4], &[2., 1., 2., 1.]);
        pad(&xv, &[1, 1], PadMode::Replicate, &pv).unwrap();
        assert_eq!(&p[..4], &[1., 1., 2., 2.]);
        let mut g = [0f32; 6];
        let gv = View::of_slice(&mut g, DType::F32, &[3, 2]);
        let mut ones = [1f32; 12];
        let onesv = View::of_slice(&mut ones, DType::F32, &[3, 4]);
        pad_backward(&onesv, &[1, 1], PadMode::Replicate, &gv).unwrap();
        assert_eq!(g, [2., 2., 2., 2., 2., 2.]);
    }

    #[test]
    fn nearest_upsampling_and_its_backward() {
        let mut x = [1.0f32, 2.0, 3.0, 4.0];
        let xv = View::of_slice(&mut x, DType::F32, &[1, 2, 2]);
        let mut o = [0f32; 12];
        let ov = View::of_slice(&mut o, DType::F32, &[1, 3, 4]);
        let scales = [nearest_scale(2, 3, None), nearest_scale(2, 4, Some(2.0))];
        upsample_nearest(&xv, &scales, &ov).unwrap();
        // rows 0, 0, 1 (floor(o * 2/3)); columns 0, 0, 1, 1
        assert_eq!(o, [1., 1., 2., 2., 1., 1., 2., 2., 3., 3., 4., 4.]);
        let mut g = [0f32; 4];
        let gv = View::of_slice(&mut g, DType::F32, &[1, 2, 2]);
        let mut ones = [1f32; 12];
        let onesv = View::of_slice(&mut ones, DType::F32, &[1, 3, 4]);
        upsample_nearest_backward(&onesv, &scales, &gv).unwrap();
        assert_eq!(g, [4., 4., 2., 2.]);
    }

    #[test]
    fn unique_counts_and_cumprod() {
        let mut x = [3i64, 1, 3, 2, 1, 1];
        let xv = View::of_slice(&mut x, DType::I64, &[6]);
        let (mut v, mut i, mut c) = ([0i64; 6], [0i64; 6], [0i64; 6]);
        let vv = View::of_slice(&mut v, DType::I64, &[6]);
        let iv = View::of_slice(&mut i, DType::I64, &[6]);
        let cv = View::of_slice(&mut c, DType::I64, &[6]);
        let u = unique(&xv, false, &vv, Some(&iv), Some(&cv)).unwrap();
        assert_eq!(u.count, 3);
        assert_eq!(&v[..3], &[1, 2, 3]);
        assert_eq!(&c[..3], &[3, 1, 2]);
        assert_eq!(i, [2, 0, 2, 1, 0, 0]);
        let u = unique(&xv, true, &vv, None, Some(&cv)).unwrap();
        assert_eq!(u.count, 5);
        assert_eq!(&v[..5], &[3, 1, 3, 2, 1]);
        assert_eq!(&c[..5], &[1, 1, 1, 1, 2]);
        let mut o = [0i64; 6];
        let ov = View::of_slice(&mut o, DType::I64, &[6]);
        cumprod(&xv, 0, &ov).unwrap();
        assert_eq!(o, [3, 3, 9, 18, 18, 18]);
    }

    #[test]
    fn unique_dim_sorts_the_slices() {
        // columns (3, 0), (1, 5), (3, 0), (-1, 2) of a [2, 4]
        let mut x = vec![3i64, 1, 3, -1, 0, 5, 0, 2];
        let mut v = vec![0i64; 8];
        let (mut inv, mut cnt) = (vec![0i64; 4], vec![0i64; 4]);
        let vx = View::of_slice(&mut x, DType::I64, &[2, 4]);
        let vv = View::of_slice(&mut v, DType::I64, &[2, 4]);
        let vi = View::of_slice(&mut inv, DType::I64, &[4]);
        let vc = View::of_slice(&mut cnt, DType::I64, &[4]);
        assert_eq!(unique_dim(&vx, 1, &vv, Some(&vi), Some(&vc)).unwrap(), 3);
        assert_eq!(&v[..6], &[-1, 1, 3, 2, 5, 0]);
        assert_eq!(inv, vec![2, 1, 2, 0]);
        assert_eq!(&cnt[..3], &[1, 1, 2]);
    }
}
