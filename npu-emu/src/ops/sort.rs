//! Sorting along a dimension: `aclnnSort` (all elements), `aclnnTopk` (the first k), and the
//! order statistics `aclnnKthvalue`, `aclnnMedian(Dim)`, `aclnnNanMedian(Dim)`.
//!
//! The order is PyTorch's: NaN counts as larger than every number (last when ascending,
//! first when descending), and equal keys keep their original order (a stable sort; CPU
//! torch's sort is stable too, so tied indices match it). Values are compared in float64
//! for floating types and in int64 for integer and boolean types, so no value changes on
//! the way through. Rows are split across threads.

use super::dtype::{Class, DType};
use super::iter::{self, parallel_ranges, threads_for};
use super::view::View;
use std::cmp::Ordering;

/// The view with `dim` moved last (a 0-d view is seen as `[1]`).
fn last(v: &View, dim: usize) -> View {
    if v.ndim() == 0 {
        return View {
            shape: vec![1],
            strides: vec![0],
            ..v.clone()
        };
    }
    let mut perm: Vec<usize> = (0..v.ndim()).filter(|&d| d != dim).collect();
    perm.push(dim);
    v.permute(&perm)
}

/// Dense copy of `v` as `T` (row-major over `v`'s shape).
fn load<T: Default + Clone>(v: &View, as_dt: DType) -> Result<Vec<T>, String> {
    let mut buf = vec![T::default(); v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, as_dt, &v.shape))?;
    }
    Ok(buf)
}

fn store<T>(mut buf: Vec<T>, as_dt: DType, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, as_dt, &out.shape);
    iter::copy(&src, out)
}

/// NaN-last total order of floats (-0.0 equals 0.0, so ties stay stable).
fn cmp_f(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Sort `keys` rows of length `n` and keep the first `k` of each: values and indices.
fn sort_rows<T: Copy + Send + Sync + Default>(
    keys: &[T],
    n: usize,
    k: usize,
    descending: bool,
    cmp: fn(T, T) -> Ordering,
) -> (Vec<T>, Vec<i64>) {
    let rows = keys.len().checked_div(n).unwrap_or(0);
    let mut vals = vec![T::default(); rows * k];
    let mut idx = vec![0i64; rows * k];
    let (vp, ip) = (vals.as_mut_ptr() as usize, idx.as_mut_ptr() as usize);
    parallel_ranges(rows, threads_for(keys.len()).min(rows.max(1)), &|r| {
        let mut order: Vec<usize> = Vec::with_capacity(n);
        for row in r {
            let key = &keys[row * n..(row + 1) * n];
            order.clear();
            order.extend(0..n);
            if descending {
                order.sort_by(|&a, &b| cmp(key[b], key[a]));
            } else {
                order.sort_by(|&a, &b| cmp(key[a], key[b]));
            }
            for (j, &o) in order.iter().take(k).enumerate() {
                // SAFETY: each row writes its own k elements of vals/idx.
                unsafe {
                    *(vp as *mut T).add(row * k + j) = key[o];
                    *(ip as *mut i64).add(row * k + j) = o as i64;
                }
            }
        }
    });
    (vals, idx)
}

/// Sort `x` along `dim` (k = None) or keep the first `k` (topk); `values` and `indices`
/// (int64 or int32) have the result shape.
pub fn sort(
    x: &View,
    dim: usize,
    descending: bool,
    k: Option<usize>,
    values: &View,
    indices: &View,
) -> Result<(), String> {
    let xv = last(x, dim);
    let n = *xv.shape.last().unwrap_or(&1);
    let k = k.unwrap_or(n);
    let (vo, io) = (last(values, dim), last(indices, dim));
    if x.dtype.class() == Class::Int {
        let keys: Vec<i64> = load(&xv, DType::I64)?;
        let (v, i) = sort_rows(&keys, n, k, descending, |a: i64, b: i64| a.cmp(&b));
        store(v, DType::I64, &vo)?;
        store(i, DType::I64, &io)
    } else {
        let keys: Vec<f64> = load(&xv, DType::F64)?;
        let (v, i) = sort_rows(&keys, n, k, descending, cmp_f);
        store(v, DType::F64, &vo)?;
        store(i, DType::I64, &io)
    }
}

/// Which order statistic [`select`] picks along a dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The k-th smallest (1-based), NaN largest (`torch.kthvalue`).
    Kth(usize),
    /// The lower median; NaN when the row holds one (`torch.median`).
    Median,
    /// The lower median of the non-NaN values (`torch.nanmedian`).
    NanMedian,
}

/// The position (in the ascending stable order `order` of `key`) that `pick` selects.
fn pick_pos(key: &[f64], order: &[usize], pick: Pick) -> usize {
    let n = key.len();
    let nan = key.iter().filter(|v| v.is_nan()).count();
    match pick {
        Pick::Kth(k) => k - 1,
        Pick::Median if nan > 0 => n - nan,
        Pick::Median => (n - 1) / 2,
        Pick::NanMedian if nan == n => 0,
        Pick::NanMedian => (n - nan - 1) / 2,
    }
    .min(order.len().saturating_sub(1))
}

/// `values`/`indices` (the shape of `x` with dimension `dim` of size 1) get the order
/// statistic `pick` of every row along `dim`, and its index.
pub fn select(
    x: &View,
    dim: usize,
    pick: Pick,
    values: &View,
    indices: &View,
) -> Result<(), String> {
    let xv = last(x, dim);
    let n = *xv.shape.last().unwrap_or(&1);
    let (vo, io) = (last(values, dim), last(indices, dim));
    let keys: Vec<f64> = load(&xv, DType::F64)?;
    let rows = keys.len().checked_div(n).unwrap_or(0);
    let mut vals = vec![0f64; rows];
    let mut idx = vec![0i64; rows];
    for row in 0..rows {
        let key = &keys[row * n..(row + 1) * n];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| cmp_f(key[a], key[b]));
        let o = order[pick_pos(key, &order, pick)];
        vals[row] = key[o];
        idx[row] = o as i64;
    }
    store(vals, DType::F64, &vo)?;
    store(idx, DType::I64, &io)
}

/// The median (or, `nan` true, the NaN-ignoring median) of all elements into the 0-d `out`.
pub fn median_all(x: &View, nan: bool, out: &View) -> Result<(), String> {
    let key: Vec<f64> = load(x, DType::F64)?;
    if key.is_empty() {
        return store(vec![f64::NAN], DType::F64, out);
    }
    let mut order: Vec<usize> = (0..key.len()).collect();
    order.sort_by(|&a, &b| cmp_f(key[a], key[b]));
    let pick = if nan { Pick::NanMedian } else { Pick::Median };
    let v = key[order[pick_pos(&key, &order, pick)]];
    store(vec![v], DType::F64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_with_nan_largest() {
        let mut x = [3.0f32, f32::NAN, 1.0, 3.0, -0.0, 0.0];
        let xv = View::of_slice(&mut x, DType::F32, &[6]);
        let mut v = [0f32; 6];
        let mut i = [0i64; 6];
        let vv = View::of_slice(&mut v, DType::F32, &[6]);
        let iv = View::of_slice(&mut i, DType::I64, &[6]);
        sort(&xv, 0, false, None, &vv, &iv).unwrap();
        assert_eq!(i, [4, 5, 2, 0, 3, 1]);
        sort(&xv, 0, true, None, &vv, &iv).unwrap();
        assert_eq!(i, [1, 0, 3, 2, 4, 5]);
        let mut v2 = [0f32; 2];
        let mut i2 = [0i64; 2];
        let vv2 = View::of_slice(&mut v2, DType::F32, &[2]);
        let iv2 = View::of_slice(&mut i2, DType::I64, &[2]);
        sort(&xv, 0, false, Some(2), &vv2, &iv2).unwrap();
        assert_eq!(v2[0].to_bits(), (-0.0f32).to_bits());
        assert_eq!(i2, [4, 5]);
        let mut m = [0f32; 1];
        let mv = View::of_slice(&mut m, DType::F32, &[]);
        median_all(&xv, false, &mv).unwrap();
        assert!(m[0].is_nan());
        median_all(&xv, true, &mv).unwrap();
        assert_eq!(m[0], 1.0);
        let mut y = [5.0f32, 1.0, 4.0, 2.0];
        let yv = View::of_slice(&mut y, DType::F32, &[4]);
        let mut i1 = [0i64; 1];
        let iv1 = View::of_slice(&mut i1, DType::I64, &[1]);
        let mv1 = View::of_slice(&mut m, DType::F32, &[1]);
        select(&yv, 0, Pick::Median, &mv1, &iv1).unwrap();
        assert_eq!((m[0], i1[0]), (2.0, 3));
        select(&yv, 0, Pick::Kth(3), &mv1, &iv1).unwrap();
        assert_eq!((m[0], i1[0]), (4.0, 2));
    }
}
