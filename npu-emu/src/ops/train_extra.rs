//! Engine of `libascendcl/aclnn/src/ops/train_extra.rs`: SiluMul, SortWithIndex, AsStrided
//! and FusedMulAddN of the ops-nn/ops-math experimental Atlas A2 operators.

use super::dtype::{Class, DType};
use super::elem;
use super::iter::{self, map2, map3, map_chunks};
use super::view::{Scratch, View};
use std::cmp::Ordering;

/// `out = silu(x) * y` (`aclnnSiluMul`), computed in float32 as the kernel does.
pub fn silu_mul(x: &View, y: &View, out: &View) -> Result<(), String> {
    map2::<f32, f32>(x, y, out, |a, b| a / (1.0 + (-a).exp()) * b)
}

/// `y = x1 * x3[0] + x2` (`aclnnFusedMulAddN`); `x3` holds one element.
pub fn fused_mul_add_n(x1: &View, x2: &View, x3: &View, y: &View) -> Result<(), String> {
    let s = View {
        shape: vec![],
        strides: vec![],
        ..x3.clone()
    };
    let s = s
        .expand(&x1.shape)
        .ok_or_else(|| "x3 does not broadcast".to_string())?;
    if x1.dtype.class() == Class::Int {
        map3::<i64, i64>(x1, x2, &s, y, |a, b, c| a.wrapping_mul(c).wrapping_add(b))
    } else {
        map3::<f32, f32>(x1, x2, &s, y, |a, b, c| a * c + b)
    }
}

/// Dense row-major copy of `v` as `T`.
fn load<T: Default + Clone>(v: &View, dt: DType) -> Result<Vec<T>, String> {
    let mut buf = vec![T::default(); v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, dt, &v.shape))?;
    }
    Ok(buf)
}

fn store<T>(mut buf: Vec<T>, dt: DType, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    iter::copy(&View::of_slice(&mut buf, dt, &out.shape), out)
}

/// `aclnnSortWithIndex`: stable sort of `x` along its last dimension, `index` following the
/// same permutation. NaN goes first in both orders (the documented A2 behaviour).
pub fn sort_with_index(
    x: &View,
    index: &View,
    descending: bool,
    values: &View,
    sorted: &View,
) -> Result<(), String> {
    let n = x.shape.last().copied().unwrap_or(1);
    let keys: Vec<f64> = load(x, DType::F64)?;
    let idx: Vec<i64> = load(index, DType::I64)?;
    let mut vals = vec![0f64; keys.len()];
    let mut out_idx = vec![0i64; keys.len()];
    let cmp = |a: f64, b: f64| match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ if descending => b.partial_cmp(&a).unwrap_or(Ordering::Equal),
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    };
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for r in 0..keys.len().checked_div(n).unwrap_or(0) {
        let (k, i) = (&keys[r * n..(r + 1) * n], &idx[r * n..(r + 1) * n]);
        order.clear();
        order.extend(0..n);
        order.sort_by(|&p, &q| cmp(k[p], k[q]));
        for (j, &o) in order.iter().enumerate() {
            vals[r * n + j] = k[o];
            out_idx[r * n + j] = i[o];
        }
    }
    store(vals, DType::F64, values)?;
    store(out_idx, DType::I64, sorted)
}

/// `aclnnAsStrided`: `out[i] = x_flat[offset + Σ i_d stride_d]` over `x`'s elements in
/// row-major order; the caller checks that every position lies inside `x`.
pub fn as_strided(x: &View, stride: &[usize], offset: usize, out: &View) -> Result<(), String> {
    if out.numel() == 0 {
        return Ok(());
    }
    let flat = Scratch::new(x.dtype, &x.shape);
    iter::copy(x, &flat.view)?;
    let src = View {
        // SAFETY: the caller checked offset + Σ (size_d - 1) stride_d < numel.
        ptr: unsafe { flat.view.ptr.add(offset * x.esize()) },
        dtype: x.dtype,
        shape: out.shape.clone(),
        strides: stride.iter().map(|&s| s as isize).collect(),
    };
    iter::copy(&src, out)
}

/// One ViewCopy view: `(size, stride, storage offset)` read from its INT32/INT64 metadata
/// tensors, checked against a storage of `numel` elements.
fn meta_view(
    size: &View,
    stride: &View,
    offset: &View,
    numel: usize,
    name: &str,
) -> Result<(Vec<usize>, Vec<isize>, usize), String> {
    let conv = |v: Vec<i64>, what: &str| -> Result<Vec<usize>, String> {
        v.iter()
            .map(|&e| usize::try_from(e).map_err(|_| format!("{name}_{what} {v:?} is negative")))
            .collect()
    };
    let sz = conv(load(size, DType::I64)?, "size")?;
    let st = conv(load(stride, DType::I64)?, "stride")?;
    let off = conv(load(offset, DType::I64)?, "storage_offset")?[0];
    if sz.iter().all(|&n| n > 0) {
        let last = off
            + sz.iter()
                .zip(&st)
                .map(|(&n, &s)| (n - 1) * s)
                .sum::<usize>();
        if last >= numel {
            return Err(format!(
                "the {name} view (size {sz:?}, stride {st:?}, offset {off}) reaches element \
                 {last} of a storage of {numel}"
            ));
        }
    }
    Ok((sz, st.iter().map(|&s| s as isize).collect(), off))
}

/// `aclnnViewCopy`: `out` is `dst` with the view `meta[0..3]` of its elements (row-major)
/// overwritten by the view `meta[3..6]` of `src`'s elements; both views have one shape.
pub fn view_copy(dst: &View, meta: &[View], src: &View, out: &View) -> Result<(), String> {
    let (dsz, dst_st, doff) = meta_view(&meta[0], &meta[1], &meta[2], dst.numel(), "dst")?;
    let (ssz, src_st, soff) = meta_view(&meta[3], &meta[4], &meta[5], src.numel(), "src")?;
    if dsz != ssz {
        return Err(format!(
            "dst_size {dsz:?} and src_size {ssz:?} differ (ViewCopy does not broadcast)"
        ));
    }
    let d = Scratch::new(dst.dtype, &dst.shape);
    let s = Scratch::new(src.dtype, &src.shape);
    iter::copy(dst, &d.view)?;
    iter::copy(src, &s.view)?;
    if dsz.iter().all(|&n| n > 0) {
        let es = dst.esize();
        // SAFETY: meta_view checked the source view against src's elements.
        let sp = unsafe { s.view.ptr.add(soff * es) };
        // SAFETY: meta_view checked the destination view against dst's elements.
        let dp = unsafe { d.view.ptr.add(doff * es) };
        let sv = View {
            ptr: sp,
            dtype: src.dtype,
            shape: ssz,
            strides: src_st,
        };
        let dv = View {
            ptr: dp,
            dtype: dst.dtype,
            shape: dsz,
            strides: dst_st,
        };
        iter::copy(&sv, &dv)?;
    }
    iter::copy(&d.view, out)
}

/// The values of one-element views (checked by the caller), as float64.
fn scalars(v: &[View]) -> Vec<f64> {
    // SAFETY: each view is a checked one-element tensor.
    v.iter()
        .map(|x| unsafe { elem::read_f64(x.dtype, x.ptr) })
        .collect()
}

/// `aclnnApplyAdamD`: `s` = `[beta1Power, beta2Power, lr, beta1, beta2, epsilon]`;
/// `lr' = lr sqrt(1 - b2p) / (1 - b1p)`, `m' = b1 m + (1 - b1) g`, `v' = b2 v + (1 - b2) g²`,
/// `var' = var - lr' (nesterov ? b1 m' + (1 - b1) g : m') / (eps + sqrt(v'))`. Each output
/// may share its input's memory: `var` is written first from the old `m`, `v`.
#[allow(clippy::too_many_arguments)]
pub fn apply_adam_d(
    var: &View,
    m: &View,
    v: &View,
    s: &[View],
    grad: &View,
    nesterov: bool,
    var_out: &View,
    m_out: &View,
    v_out: &View,
) -> Result<(), String> {
    let s = scalars(s);
    let (b1p, b2p, lr, b1, b2, eps) = (s[0], s[1], s[2], s[3], s[4], s[5]);
    let lr_t = lr * (1.0 - b2p).sqrt() / (1.0 - b1p);
    map_chunks::<f64, f64>(&[var, m, v, grad], var_out, &|i, o| {
        for (k, o) in o.iter_mut().enumerate() {
            let (p, m, v, g) = (i[0][k], i[1][k], i[2][k], i[3][k]);
            let m1 = b1 * m + (1.0 - b1) * g;
            let v1 = b2 * v + (1.0 - b2) * g * g;
            let num = if nesterov {
                m1 * b1 + (1.0 - b1) * g
            } else {
                m1
            };
            *o = p - lr_t * num / (eps + v1.sqrt());
        }
    })?;
    map2::<f64, f64>(m, grad, m_out, move |m, g| b1 * m + (1.0 - b1) * g)?;
    map2::<f64, f64>(v, grad, v_out, move |v, g| b2 * v + (1.0 - b2) * g * g)
}

/// `aclnnApplyFtrl`, in place: `s` = `[lr, l1, l2, lr_power]`; `a' = a + g²`,
/// `linear += g - (a'^-p - a^-p) / lr var`, `var = |linear| > l1 ? (sign(linear) l1 -
/// linear) / (a'^-p / lr + 2 l2) : 0`, `accum = a'`.
pub fn apply_ftrl(
    var: &View,
    accum: &View,
    linear: &View,
    grad: &View,
    s: &[View],
) -> Result<(), String> {
    let s = scalars(s);
    let (lr, l1, l2, p) = (s[0], s[1], s[2], s[3]);
    map_chunks::<f64, f64>(&[linear, grad, accum, var], linear, &|i, o| {
        for (k, o) in o.iter_mut().enumerate() {
            let (l, g, a, w) = (i[0][k], i[1][k], i[2][k], i[3][k]);
            let a1 = a + g * g;
            *o = l + g - (a1.powf(-p) - a.powf(-p)) / lr * w;
        }
    })?;
    map3::<f64, f64>(linear, accum, grad, var, move |l, a, g| {
        let a1 = a + g * g;
        if l.abs() > l1 {
            (l.signum() * l1 - l) / (a1.powf(-p) / lr + 2.0 * l2)
        } else {
            0.0
        }
    })?;
    map2::<f64, f64>(accum, grad, accum, |a, g| a + g * g)
}
