//! Assorted math of the aclnn reference's `aclnn_math` domain: diagonals (`diag`, `diag_flat`),
//! `signbit`, `gcd`, bit shifts (`shift`), membership of a scalar in a tensor (`isin_scalar`), the scaled outer
//! product `addr`, the batched p-norm distance `cdist`, `triangular_solve`, `max_unpool` and
//! `svd` (one-sided Jacobi), `gather_nd`, `scatter_nd` and `bucketize`.
//!
//! Data movement (the diagonals) copies elements without arithmetic, so every dtype keeps its
//! values bit for bit; the arithmetic follows the engine's rules (f16/bf16 in f32, f64 in f64,
//! integers in i64 wrapping to the stored width); `cdist` accumulates in f64 and rounds once.

use super::dtype::{Class, DType};
use super::extra::{load, store};
use super::iter::{self, map1, map2, map3};
use super::scalar::Scalar;
use super::view::{Scratch, View};

/// The view of the `d`-th diagonal of the 2-D view `m` (`d > 0` above the main diagonal),
/// `len` elements long.
fn diagonal(m: &View, d: i64, len: usize) -> View {
    let (r0, c0) = if d >= 0 {
        (0, d as usize)
    } else {
        ((-d) as usize, 0)
    };
    View {
        ptr: if len == 0 { m.ptr } else { m.at(&[r0, c0]) },
        dtype: m.dtype,
        shape: vec![len],
        strides: vec![m.strides[0] + m.strides[1]],
    }
}

/// Length of the `d`-th diagonal of an `[rows, cols]` matrix.
pub fn diagonal_len(rows: usize, cols: usize, d: i64) -> usize {
    let (rows, cols) = (rows as i64, cols as i64);
    let n = if d >= 0 {
        rows.min(cols - d)
    } else {
        (rows + d).min(cols)
    };
    n.max(0) as usize
}

/// `torch.diag`: a 1-D `x` of n elements becomes the `[n + |d|, n + |d|]` matrix `out` with `x`
/// on its `d`-th diagonal and zeros elsewhere; a 2-D `x` gives its `d`-th diagonal in the 1-D
/// `out`.
pub fn diag(x: &View, d: i64, out: &View) -> Result<(), String> {
    match x.ndim() {
        1 => {
            iter::fill::<i64>(out, 0)?;
            if x.numel() == 0 {
                return Ok(());
            }
            iter::copy(x, &diagonal(out, d, x.shape[0]))
        }
        2 => {
            let n = diagonal_len(x.shape[0], x.shape[1], d);
            if n == 0 {
                return Ok(());
            }
            iter::copy(&diagonal(x, d, n), out)
        }
        k => Err(format!("diag takes a 1-D or 2-D tensor, not {k}-D")),
    }
}

/// `torch.diagflat`: `x` flattened (row-major) onto the `d`-th diagonal of the square `out`.
pub fn diag_flat(x: &View, d: i64, out: &View) -> Result<(), String> {
    let n = x.numel();
    iter::fill::<i64>(out, 0)?;
    if n == 0 {
        return Ok(());
    }
    let flat = Scratch::new(x.dtype, &x.shape);
    iter::copy(x, &flat.view)?;
    iter::copy(&flat.view.reshaped(&[n]), &diagonal(out, d, n))
}

/// `out = signbit(x)`: the sign bit of floats (set for -0.0 and negative NaNs), `x < 0` for
/// integers, false for bool.
pub fn signbit(x: &View, out: &View) -> Result<(), String> {
    match x.dtype.class() {
        Class::Int => map1::<i64, bool>(x, out, |v| v < 0),
        _ => map1::<f64, bool>(x, out, |v| v.is_sign_negative()),
    }
}

/// PyTorch's `calc_gcd`: Euclid on the absolute values; `gcd(0, 0) = 0`.
fn gcd1(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.wrapping_abs(), b.wrapping_abs());
    while a != 0 {
        let c = a;
        a = b.wrapping_rem(a);
        b = c;
    }
    b
}

/// `out = gcd(a, b)` elementwise (integers, broadcast).
pub fn gcd(a: &View, b: &View, out: &View) -> Result<(), String> {
    map2::<i64, i64>(a, b, out, gcd1)
}

/// `out = (s in test) != invert`, a single bool, the comparison in the compute type `ct` (the
/// scalar rounded to it first, as a kernel of that type sees it).
pub fn isin_scalar(
    test: &View,
    s: Scalar,
    ct: DType,
    invert: bool,
    out: &View,
) -> Result<(), String> {
    let s = s.rounded_to(ct);
    let found = match ct.class() {
        Class::Int => {
            let v = s.to_i64();
            load::<i64>(test, DType::I64)?.contains(&v)
        }
        Class::F32 => {
            let v = s.to_f32();
            load::<f32>(test, DType::F32)?.contains(&v)
        }
        Class::F64 => {
            let v = s.to_f64();
            load::<f64>(test, DType::F64)?.contains(&v)
        }
    };
    iter::fill::<bool>(out, found != invert)
}

/// `out = beta * s + alpha * outer(v1, v2)` computed in the class of `ct`; with `beta == 0`
/// `s` is not read (its NaNs do not propagate), as in PyTorch. Bool results are
/// `(beta && s) || (alpha && v1 && v2)`.
#[allow(clippy::too_many_arguments)]
pub fn addr(
    s: &View,
    v1: &View,
    v2: &View,
    beta: Scalar,
    alpha: Scalar,
    out: &View,
    ct: DType,
) -> Result<(), String> {
    let (n, m) = (v1.numel(), v2.numel());
    let col = View {
        shape: vec![n, 1],
        strides: vec![v1.strides[0], 0],
        ..v1.clone()
    };
    let row = View {
        shape: vec![1, m],
        strides: vec![0, v2.strides[0]],
        ..v2.clone()
    };
    macro_rules! float {
        ($f:ty) => {{
            let (be, al): ($f, $f) = (beta.get(), alpha.get());
            if be == 0.0 {
                map3::<$f, $f>(s, &col, &row, out, move |_, a, b| al * a * b)
            } else {
                map3::<$f, $f>(s, &col, &row, out, move |x, a, b| be * x + al * a * b)
            }
        }};
    }
    match ct.class() {
        Class::F32 => float!(f32),
        Class::F64 => float!(f64),
        Class::Int if ct == DType::Bool => {
            let (be, al) = (beta.to_bool(), alpha.to_bool());
            map3::<bool, bool>(s, &col, &row, out, move |x, a, b| {
                (be && x) || (al && a && b)
            })
        }
        Class::Int => {
            let (be, al) = (beta.to_i64(), alpha.to_i64());
            map3::<i64, i64>(s, &col, &row, out, move |x, a, b| {
                let p = al.wrapping_mul(a).wrapping_mul(b);
                if be == 0 {
                    p
                } else {
                    be.wrapping_mul(x).wrapping_add(p)
                }
            })
        }
    }
}

/// `v` truncated to the width of the integer dtype `dt` (sign- or zero-extended back).
fn wrap_to(v: i64, dt: DType) -> i64 {
    match dt {
        DType::I8 => v as i8 as i64,
        DType::U8 => v as u8 as i64,
        DType::I16 => v as i16 as i64,
        DType::U16 => v as u16 as i64,
        DType::I32 => v as i32 as i64,
        DType::U32 => v as u32 as i64,
        _ => v,
    }
}

/// `out = a << b` (`left`) or `a >> b` in the integer type `ct` (the promoted type): a count
/// that is negative or of the type's width or more gives 0 to the left and the sign fill (-1
/// for a negative signed value, else 0) to the right, as PyTorch's kernels do and as the
/// RightShift reference states.
pub fn shift(a: &View, b: &View, left: bool, ct: DType, out: &View) -> Result<(), String> {
    let bits = (ct.size() * 8) as i64;
    let unsigned = ct.is_unsigned();
    map2::<i64, i64>(a, b, out, move |v, n| {
        let n = if n < 0 { bits } else { n };
        let v = wrap_to(v, ct);
        if left {
            if n >= bits {
                0
            } else {
                wrap_to(((v as u64) << n) as i64, ct)
            }
        } else if unsigned {
            let u = if bits == 64 {
                v as u64
            } else {
                (v as u64) & ((1u64 << bits) - 1)
            };
            if n >= bits {
                0
            } else {
                wrap_to((u >> n) as i64, ct)
            }
        } else {
            v >> n.min(bits - 1)
        }
    })
}

/// The p-norm of the differences: p 0 counts the nonzero ones, p inf takes the largest.
fn pdistance(d: impl Iterator<Item = f64>, p: f64) -> f64 {
    if p == 0.0 {
        d.filter(|&v| v != 0.0).count() as f64
    } else if p.is_infinite() {
        d.fold(0.0, |m, v| {
            if v.abs() > m || v.is_nan() {
                v.abs()
            } else {
                m
            }
        })
    } else if p == 1.0 {
        d.map(f64::abs).sum()
    } else if p == 2.0 {
        d.map(|v| v * v).sum::<f64>().sqrt()
    } else {
        d.map(|v| v.abs().powf(p)).sum::<f64>().powf(1.0 / p)
    }
}

/// `torch.cdist`: `out[b, i, j] = ||x1[b, i, :] - x2[b, j, :]||_p` for `x1` `[*, P, M]`, `x2`
/// `[*, R, M]` and `out` `[*, P, R]`, the batch dimensions of the inputs broadcast to `out`'s.
/// In f64, rounded once.
pub fn cdist(x1: &View, x2: &View, p: f64, out: &View) -> Result<(), String> {
    let nd = out.ndim();
    let (pp, rr) = (out.shape[nd - 2], out.shape[nd - 1]);
    let mm = x1.shape[x1.ndim() - 1];
    let batch = &out.shape[..nd - 2];
    let expand = |x: &View, rows: usize| -> Result<Vec<f64>, String> {
        let shape = [batch, &[rows, mm][..]].concat();
        let v = x
            .expand(&shape)
            .ok_or_else(|| format!("cdist: {:?} does not broadcast to {shape:?}", x.shape))?;
        load::<f64>(&v, DType::F64)
    };
    let (a, b) = (expand(x1, pp)?, expand(x2, rr)?);
    let nb: usize = batch.iter().product();
    let mut r = Vec::with_capacity(nb * pp * rr);
    for bi in 0..nb {
        for i in 0..pp {
            let xa = &a[(bi * pp + i) * mm..(bi * pp + i + 1) * mm];
            for j in 0..rr {
                let xb = &b[(bi * rr + j) * mm..(bi * rr + j + 1) * mm];
                r.push(pdistance(xa.iter().zip(xb).map(|(u, v)| u - v), p));
            }
        }
    }
    store(r, DType::F64, out)
}

/// Solve `op(A) X = b` for each matrix of the batch: `b` `[*, m, n]` and `a` `[*, m, m]`
/// broadcast to `x`'s batch (`x` `[*, m, n]`, `mcopy` `[*, m, m]`); `op(A)` is `A` or its
/// transpose, using only A's upper (`upper`) or lower triangle, with ones on the diagonal when
/// `unit`. `mcopy` receives that triangle of the broadcast A (zeros elsewhere), as the
/// reference's mOut. Substitution in f64; a zero on the diagonal gives inf/NaN, as the
/// reference warns.
pub fn triangular_solve(
    b: &View,
    a: &View,
    upper: bool,
    transpose: bool,
    unit: bool,
    x: &View,
    mcopy: &View,
) -> Result<(), String> {
    let nd = x.ndim();
    let (m, n) = (x.shape[nd - 2], x.shape[nd - 1]);
    let batch = &x.shape[..nd - 2];
    let nb: usize = batch.iter().product();
    let bshape = [batch, &[m, n][..]].concat();
    let ashape = [batch, &[m, m][..]].concat();
    let bv = b.expand(&bshape).ok_or_else(|| {
        format!(
            "triangular_solve: b {:?} does not broadcast to {bshape:?}",
            b.shape
        )
    })?;
    let av = a.expand(&ashape).ok_or_else(|| {
        format!(
            "triangular_solve: A {:?} does not broadcast to {ashape:?}",
            a.shape
        )
    })?;
    let bb: Vec<f64> = load(&bv, DType::F64)?;
    let aa: Vec<f64> = load(&av, DType::F64)?;
    let mut xs = vec![0f64; nb * m * n];
    let mut ms = vec![0f64; nb * m * m];
    let in_tri = |i: usize, j: usize| if upper { j >= i } else { j <= i };
    for bi in 0..nb {
        let am = &aa[bi * m * m..(bi + 1) * m * m];
        for i in 0..m {
            for j in 0..m {
                if in_tri(i, j) {
                    ms[bi * m * m + i * m + j] = am[i * m + j];
                }
            }
        }
        // op(A)[i][j], restricted to the triangle
        let t = |i: usize, j: usize| -> f64 {
            let (r, c) = if transpose { (j, i) } else { (i, j) };
            if r == c && unit {
                1.0
            } else if in_tri(r, c) {
                am[r * m + c]
            } else {
                0.0
            }
        };
        // op(A) is upper triangular when exactly one of (upper, transpose) holds
        let eff_upper = upper != transpose;
        let xb = &mut xs[bi * m * n..(bi + 1) * m * n];
        let rhs = &bb[bi * m * n..(bi + 1) * m * n];
        for col in 0..n {
            let order: Box<dyn Iterator<Item = usize>> = if eff_upper {
                Box::new((0..m).rev())
            } else {
                Box::new(0..m)
            };
            for i in order {
                let mut s = rhs[i * n + col];
                let range = if eff_upper { i + 1..m } else { 0..i };
                for k in range {
                    s -= t(i, k) * xb[k * n + col];
                }
                xb[i * n + col] = s / t(i, i);
            }
        }
    }
    store(xs, DType::F64, x)?;
    store(ms, DType::F64, mcopy)
}

/// `max_unpool{2,3}d`: each plane of `x` (the dimensions before the last `k`, which are
/// flattened) scatters its elements into the same plane of `out` (zeros elsewhere) at the
/// flat positions `idx` gives (`idx` has `x`'s shape). Elements are copied bit for bit; a
/// later duplicate index wins, as in PyTorch's loop; an index outside the output plane fails
/// the task.
pub fn max_unpool(x: &View, idx: &View, k: usize, out: &View) -> Result<(), String> {
    let nd = x.ndim();
    let in_plane: usize = x.shape[nd - k..].iter().product();
    let out_plane: usize = out.shape[out.ndim() - k..].iter().product();
    let planes: usize = x.shape[..nd - k].iter().product();
    let es = x.esize();
    let src = Scratch::new(x.dtype, &x.shape);
    iter::copy(x, &src.view)?;
    let ids: Vec<i64> = load(idx, DType::I64)?;
    let dst = Scratch::new(out.dtype, &out.shape);
    for p in 0..planes {
        for i in 0..in_plane {
            let j = ids[p * in_plane + i];
            if j < 0 || j as usize >= out_plane {
                return Err(format!(
                    "index {j} at position {} is outside the output plane of {out_plane} \
                     elements",
                    p * in_plane + i
                ));
            }
            let (from, to) = ((p * in_plane + i) * es, (p * out_plane + j as usize) * es);
            // SAFETY: both offsets lie inside the scratch buffers (checked bounds above).
            unsafe {
                std::ptr::copy_nonoverlapping(src.view.ptr.add(from), dst.view.ptr.add(to), es)
            };
        }
    }
    if out.numel() == 0 {
        return Ok(());
    }
    iter::copy(&dst.view, out)
}

/// Complete the first `have` orthonormal columns of the column-major `rows`-long vectors in
/// `q` (`cols` of them) to an orthonormal set, by Gram-Schmidt over the unit vectors.
fn complete_basis(q: &mut [Vec<f64>], have: usize, rows: usize) {
    let mut next_unit = 0;
    for c in have..q.len() {
        loop {
            let mut v = vec![0f64; rows];
            v[next_unit % rows] = 1.0;
            next_unit += 1;
            for _ in 0..2 {
                for prev in q.iter().take(c) {
                    let d: f64 = prev.iter().zip(&v).map(|(a, b)| a * b).sum();
                    for (x, p) in v.iter_mut().zip(prev) {
                        *x -= d * p;
                    }
                }
            }
            let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 1e-8 {
                q[c] = v.into_iter().map(|x| x / n).collect();
                break;
            }
        }
    }
}

/// Singular value decomposition of one `[m, n]` row-major matrix by one-sided Jacobi
/// rotations in f64: `(s, u, v)` with `s` descending (k = min(m, n) values), `u` `ucols`
/// column vectors of length m and `v` `vcols` column vectors of length n (`ucols`/`vcols` k,
/// or m/n for the full matrices; extra columns complete orthonormal bases).
fn svd1(a: &[f64], m: usize, n: usize, full: bool) -> (Vec<f64>, Vec<Vec<f64>>, Vec<Vec<f64>>) {
    // work on the tall orientation: w is rows x cols with rows >= cols
    let tall = m >= n;
    let (rows, cols) = if tall { (m, n) } else { (n, m) };
    let at = |i: usize, j: usize| if tall { a[i * n + j] } else { a[j * n + i] };
    let mut w: Vec<Vec<f64>> = (0..cols)
        .map(|j| (0..rows).map(|i| at(i, j)).collect())
        .collect();
    let mut vv: Vec<Vec<f64>> = (0..cols)
        .map(|j| (0..cols).map(|i| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for _sweep in 0..60 {
        let mut rotated = false;
        for p in 0..cols {
            for q in p + 1..cols {
                let al: f64 = w[p].iter().map(|x| x * x).sum();
                let be: f64 = w[q].iter().map(|x| x * x).sum();
                let ga: f64 = w[p].iter().zip(&w[q]).map(|(x, y)| x * y).sum();
                if ga == 0.0 || ga.abs() <= 1e-15 * (al * be).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (be - al) / (2.0 * ga);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for mat in [&mut w, &mut vv] {
                    let (lo, hi) = mat.split_at_mut(q);
                    for (x, y) in lo[p].iter_mut().zip(hi[0].iter_mut()) {
                        let (xp, yq) = (*x, *y);
                        *x = c * xp - s * yq;
                        *y = s * xp + c * yq;
                    }
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = w
        .iter()
        .map(|c| c.iter().map(|x| x * x).sum::<f64>().sqrt())
        .collect();
    let mut order: Vec<usize> = (0..cols).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let s: Vec<f64> = order.iter().map(|&j| norms[j]).collect();
    // left vectors (length rows) of the nonzero values, then completion
    let ucount = if full { rows } else { cols };
    let mut uu: Vec<Vec<f64>> = vec![vec![0f64; rows]; ucount];
    let mut good = 0;
    let tiny = s.first().copied().unwrap_or(0.0) * 1e-13;
    for &j in &order {
        if norms[j] <= tiny || norms[j] == 0.0 {
            break;
        }
        uu[good] = w[j].iter().map(|x| x / norms[j]).collect();
        good += 1;
    }
    complete_basis(&mut uu, good, rows);
    let vcols: Vec<Vec<f64>> = order.iter().map(|&j| vv[j].clone()).collect();
    if tall {
        (s, uu, vcols)
    } else {
        // A^T = W' S V'^T, so A = V' S W'^T: u is vv's columns, v the left vectors
        let mut u = vcols;
        u.truncate(if full { m } else { cols });
        (s, u, uu)
    }
}

/// `torch.linalg.svd` for each matrix of the batch `x` (`[*, m, n]`): `sigma` `[*, k]` and,
/// when `uv` is Some((u, v)), `u` `[*, m, m or k]` and `v` `[*, n, n or k]` (V, not V^T, as the
/// reference's outputs), with `x = u diag(sigma) v^T`. Signs of singular vectors are those of
/// the Jacobi iteration (any valid pair, as LAPACK's are).
pub fn svd(x: &View, full: bool, sigma: &View, uv: Option<(&View, &View)>) -> Result<(), String> {
    let nd = x.ndim();
    let (m, n) = (x.shape[nd - 2], x.shape[nd - 1]);
    let k = m.min(n);
    let nb: usize = x.shape[..nd - 2].iter().product();
    let a: Vec<f64> = load(x, DType::F64)?;
    let (uc, vc) = if full { (m, n) } else { (k, k) };
    let (mut ss, mut us, mut vs) = (
        vec![0f64; nb * k],
        vec![0f64; nb * m * uc],
        vec![0f64; nb * n * vc],
    );
    for b in 0..nb {
        let (s, u, v) = svd1(&a[b * m * n..(b + 1) * m * n], m, n, full);
        ss[b * k..(b + 1) * k].copy_from_slice(&s[..k]);
        for (c, col) in u.iter().enumerate().take(uc) {
            for (i, &e) in col.iter().enumerate() {
                us[b * m * uc + i * uc + c] = e;
            }
        }
        for (c, col) in v.iter().enumerate().take(vc) {
            for (i, &e) in col.iter().enumerate() {
                vs[b * n * vc + i * vc + c] = e;
            }
        }
    }
    store(ss, DType::F64, sigma)?;
    if let Some((u, v)) = uv {
        store(us, DType::F64, u)?;
        store(vs, DType::F64, v)?;
    }
    Ok(())
}

/// `out[i...] = x[idx[i..., 0], …, idx[i..., c-1], ...]` (`c = idx.shape[-1]`): each index tuple
/// picks an element (c = x.ndim()) or a slice of `x`. Negative indices count from the end when
/// `negative` allows them; an index outside its dimension fails the task. Bit-for-bit copies.
pub fn gather_nd(x: &View, idx: &View, negative: bool, out: &View) -> Result<(), String> {
    let c = idx.shape[idx.ndim() - 1];
    let slice: usize = x.shape[c..].iter().product();
    let tuples = idx.numel().checked_div(c).unwrap_or(0);
    let es = x.esize();
    let src = Scratch::new(x.dtype, &x.shape);
    iter::copy(x, &src.view)?;
    let ids: Vec<i64> = load(idx, DType::I64)?;
    let dst = Scratch::new(out.dtype, &out.shape);
    for t in 0..tuples {
        let mut off = 0usize;
        for d in 0..c {
            let n = x.shape[d] as i64;
            let mut v = ids[t * c + d];
            if v < 0 && negative {
                v += n;
            }
            if v < 0 || v >= n {
                return Err(format!(
                    "index {} of index tuple {t} is out of range for dimension {d} of size {n}{}",
                    ids[t * c + d],
                    if negative {
                        ""
                    } else {
                        " (negativeIndexSupport is false)"
                    }
                ));
            }
            off = off * x.shape[d] + v as usize;
        }
        // SAFETY: the tuple's slice and the destination row lie inside the scratch buffers.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.view.ptr.add(off * slice * es),
                dst.view.ptr.add(t * slice * es),
                slice * es,
            )
        };
    }
    if out.numel() == 0 {
        return Ok(());
    }
    iter::copy(&dst.view, out)
}

/// `out = data` with `out[idx[i..., :]] = updates[i...]` (`c = idx.shape[-1]`; each index tuple
/// names an element or a slice of `out`), in order, so a later duplicate wins. Indices must be
/// non-negative and in range, as the reference requires; others fail the task.
pub fn scatter_nd(data: &View, idx: &View, updates: &View, out: &View) -> Result<(), String> {
    let c = idx.shape[idx.ndim() - 1];
    let slice: usize = data.shape[c..].iter().product();
    let tuples = idx.numel().checked_div(c).unwrap_or(0);
    let es = data.esize();
    let dst = Scratch::new(data.dtype, &data.shape);
    iter::copy(data, &dst.view)?;
    let up = Scratch::new(updates.dtype, &updates.shape);
    iter::copy(updates, &up.view)?;
    let ids: Vec<i64> = load(idx, DType::I64)?;
    for t in 0..tuples {
        let mut off = 0usize;
        for d in 0..c {
            let v = ids[t * c + d];
            if v < 0 || v >= data.shape[d] as i64 {
                return Err(format!(
                    "index {v} of index tuple {t} is out of range for dimension {d} of size {} \
                     (only non-negative indices are supported)",
                    data.shape[d]
                ));
            }
            off = off * data.shape[d] + v as usize;
        }
        // SAFETY: the tuple's update row and destination slice lie inside the scratch buffers.
        unsafe {
            std::ptr::copy_nonoverlapping(
                up.view.ptr.add(t * slice * es),
                dst.view.ptr.add(off * slice * es),
                slice * es,
            )
        };
    }
    if out.numel() == 0 {
        return Ok(());
    }
    iter::copy(&dst.view, out)
}

/// `torch.bucketize`: for each element of `x` the number of `boundaries` (1-D, ascending) that
/// are below it (`right` false: `b[i-1] < x <= b[i]`) or not above it (`right` true:
/// `b[i-1] <= x < b[i]`), compared in the promoted type (f64 for floats, i64 for integers).
pub fn bucketize(
    x: &View,
    boundaries: &View,
    right: bool,
    ct: DType,
    out: &View,
) -> Result<(), String> {
    macro_rules! go {
        ($t:ty, $dt:expr) => {{
            let b: Vec<$t> = load(boundaries, $dt)?;
            map1::<$t, i64>(x, out, move |v| {
                if right {
                    b.partition_point(|&e| e <= v) as i64
                } else {
                    b.partition_point(|&e| e < v) as i64
                }
            })
        }};
    }
    match ct.class() {
        Class::Int => go!(i64, DType::I64),
        _ => go!(f64, DType::F64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcd_and_diagonals() {
        assert_eq!(gcd1(12, -18), 6);
        assert_eq!(gcd1(0, 0), 0);
        assert_eq!(gcd1(0, -7), 7);
        assert_eq!(diagonal_len(3, 4, 0), 3);
        assert_eq!(diagonal_len(3, 4, 2), 2);
        assert_eq!(diagonal_len(3, 4, -2), 1);
        assert_eq!(diagonal_len(3, 4, 5), 0);
        assert_eq!(diagonal_len(3, 4, -4), 0);
        let mut x = vec![1f32, 2., 3.];
        let mut o = vec![9f32; 16];
        let xv = View::of_slice(&mut x, DType::F32, &[3]);
        let ov = View::of_slice(&mut o, DType::F32, &[4, 4]);
        diag(&xv, -1, &ov).unwrap();
        let mut want = vec![0f32; 16];
        want[4] = 1.;
        want[9] = 2.;
        want[14] = 3.;
        assert_eq!(o, want);
    }

    #[test]
    fn shifts() {
        let (mut a, mut b, mut o) = (vec![-3i8, 100, 1, -128], vec![1i8, 2, 8, 9], vec![0i8; 4]);
        let av = View::of_slice(&mut a, DType::I8, &[4]);
        let bv = View::of_slice(&mut b, DType::I8, &[4]);
        let ov = View::of_slice(&mut o, DType::I8, &[4]);
        shift(&av, &bv, true, DType::I8, &ov).unwrap();
        assert_eq!(o, vec![-6, -112, 0, 0]);
        shift(&av, &bv, false, DType::I8, &ov).unwrap();
        assert_eq!(o, vec![-2, 25, 0, -1]);
        let (mut u, mut ou) = (vec![200u8, 255, 1, 128], vec![0u8; 4]);
        let uv = View::of_slice(&mut u, DType::U8, &[4]);
        let ouv = View::of_slice(&mut ou, DType::U8, &[4]);
        shift(&uv, &bv, false, DType::U8, &ouv).unwrap();
        assert_eq!(ou, vec![100, 63, 0, 0]);
    }

    #[test]
    fn triangular() {
        // upper [[2, 1], [0, 4]] X = [[4], [8]] -> X = [[1], [2]]; the transpose solves
        // [[2, 0], [1, 4]] X = [[4], [8]] -> [[2], [1.5]]
        let (mut a, mut b) = (vec![2f64, 1., 9., 4.], vec![4f64, 8.]);
        let (mut x, mut mc) = (vec![0f64; 2], vec![0f64; 4]);
        let av = View::of_slice(&mut a, DType::F64, &[2, 2]);
        let bv = View::of_slice(&mut b, DType::F64, &[2, 1]);
        let xv = View::of_slice(&mut x, DType::F64, &[2, 1]);
        let mv = View::of_slice(&mut mc, DType::F64, &[2, 2]);
        triangular_solve(&bv, &av, true, false, false, &xv, &mv).unwrap();
        assert_eq!(x, vec![1., 2.]);
        assert_eq!(mc, vec![2., 1., 0., 4.]);
        triangular_solve(&bv, &av, true, true, false, &xv, &mv).unwrap();
        assert_eq!(x, vec![2., 1.5]);
    }

    #[test]
    fn svd_reconstructs() {
        for (m, n, full) in [(4, 3, false), (3, 5, true), (4, 3, true), (2, 2, false)] {
            let mut a: Vec<f64> = (0..m * n).map(|i| ((i * 7 % 11) as f64) - 5.0).collect();
            let k = m.min(n);
            let (uc, vc) = if full { (m, n) } else { (k, k) };
            let (mut s, mut u, mut v) = (vec![0f64; k], vec![0f64; m * uc], vec![0f64; n * vc]);
            let av = View::of_slice(&mut a, DType::F64, &[m, n]);
            let sv = View::of_slice(&mut s, DType::F64, &[k]);
            let uv = View::of_slice(&mut u, DType::F64, &[m, uc]);
            let vv = View::of_slice(&mut v, DType::F64, &[n, vc]);
            svd(&av, full, &sv, Some((&uv, &vv))).unwrap();
            for i in 0..m {
                for j in 0..n {
                    let r: f64 = (0..k).map(|l| u[i * uc + l] * s[l] * v[j * vc + l]).sum();
                    assert!((r - a[i * n + j]).abs() < 1e-9, "{m}x{n} ({i}, {j}): {r}");
                }
            }
            for (cols, mat, rows) in [(uc, &u, m), (vc, &v, n)] {
                for p in 0..cols {
                    for q in 0..cols {
                        let d: f64 = (0..rows)
                            .map(|i| mat[i * cols + p] * mat[i * cols + q])
                            .sum();
                        assert!((d - if p == q { 1.0 } else { 0.0 }).abs() < 1e-9);
                    }
                }
            }
            assert!(s.windows(2).all(|w| w[0] >= w[1]));
        }
    }

    #[test]
    fn distances() {
        let d = [3.0, -4.0, 0.0];
        assert_eq!(pdistance(d.iter().copied(), 2.0), 5.0);
        assert_eq!(pdistance(d.iter().copied(), 1.0), 7.0);
        assert_eq!(pdistance(d.iter().copied(), 0.0), 2.0);
        assert_eq!(pdistance(d.iter().copied(), f64::INFINITY), 4.0);
    }
}
