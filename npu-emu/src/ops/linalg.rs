//! Linear algebra beyond the plain products of [`super::matmul`]: `addmv`
//! (`beta * self + alpha * mat @ vec`), the outer product `ger`, `addbmm`
//! (`beta * self + alpha * sum_b batch1[b] @ batch2[b]`), the inverse of square matrices
//! (batched), the cross product along one dimension and einsum (any number of operands,
//! letters only, no ellipsis; parsed by [`Einsum::parse`], contracted by a plain loop over
//! every label in float64 or wrapping i64), `renorm`, `pdist`, `slogdet` and `qr` (float64).
//!
//! Products go through [`super::matmul::matmul`] (float32 accumulation, float64 for double);
//! `addbmm` sums the batch in a float64 scratch and rounds once into the output. The inverse
//! is Gauss-Jordan elimination with partial pivoting in float64, one matrix at a time (the
//! matrices of these operators are small; no maintained crate inverts strided views of our
//! dtypes in place, and a dependency for one routine is not worth it).

use super::dtype::{Class, DType};
use super::elem;
use super::extra::{load, store};
use super::iter::{self, map2};
use super::math::{self, Binary};
use super::matmul;
use super::view::{Scratch, View};

/// `v` (1-D of `n` or 1 elements) seen as an `[n, 1]` column broadcast to `rows` rows.
fn column(v: &View, rows: usize) -> View {
    let s = if v.shape.first().copied().unwrap_or(1) == 1 {
        0
    } else {
        v.strides[0]
    };
    View {
        ptr: v.ptr,
        dtype: v.dtype,
        shape: vec![rows, 1],
        strides: vec![s, 0],
    }
}

/// `out = beta * self + alpha * (mat @ vec)`; `self` is 1-D of `mat.shape[0]` or 1 elements
/// (or 0-D), ignored when `beta` is 0.
pub fn addmv(
    bias: &View,
    mat: &View,
    vec: &View,
    beta: f64,
    alpha: f64,
    out: &View,
) -> Result<(), String> {
    let m = mat.shape[0];
    let k = mat.shape[1];
    let v = View {
        ptr: vec.ptr,
        dtype: vec.dtype,
        shape: vec![k, 1],
        strides: vec![vec.strides[0], 1],
    };
    let o = View {
        ptr: out.ptr,
        dtype: out.dtype,
        shape: vec![m, 1],
        strides: vec![out.strides[0], 1],
    };
    let b = column(bias, m);
    matmul::matmul(mat, &v, &o, alpha, Some((&b, beta)))
}

/// `out[i][j] = a[i] * b[j]`, computing in the class of `ct`.
pub fn ger(a: &View, b: &View, out: &View, ct: DType) -> Result<(), String> {
    let (n, m) = (a.shape[0], b.shape[0]);
    let av = View {
        ptr: a.ptr,
        dtype: a.dtype,
        shape: vec![n, m],
        strides: vec![a.strides[0], 0],
    };
    let bv = View {
        ptr: b.ptr,
        dtype: b.dtype,
        shape: vec![n, m],
        strides: vec![0, b.strides[0]],
    };
    math::binary(Binary::Mul, &av, &bv, out, ct)
}

/// Matrix `i` of a batch view `[B, R, C]`.
fn batch_item(v: &View, i: usize) -> View {
    View {
        ptr: v
            .ptr
            .wrapping_offset(i as isize * v.strides[0] * v.esize() as isize),
        dtype: v.dtype,
        shape: v.shape[1..].to_vec(),
        strides: v.strides[1..].to_vec(),
    }
}

/// `out = beta * self + alpha * sum_b batch1[b] @ batch2[b]` (`self` broadcast to `out`,
/// ignored when `beta` is 0). The sum is kept in float64 and rounded once.
pub fn addbmm(
    bias: &View,
    b1: &View,
    b2: &View,
    beta: f64,
    alpha: f64,
    out: &View,
) -> Result<(), String> {
    let acc = Scratch::new(DType::F64, &out.shape);
    iter::fill::<f64>(&acc.view, 0.0)?;
    if alpha != 0.0 {
        for i in 0..b1.shape[0] {
            matmul::matmul(
                &batch_item(b1, i),
                &batch_item(b2, i),
                &acc.view,
                1.0,
                Some((&acc.view, 1.0)),
            )?;
        }
    }
    if beta == 0.0 {
        iter::map1::<f64, f64>(&acc.view, out, move |s| alpha * s)
    } else {
        map2::<f64, f64>(bias, &acc.view, out, move |c, s| beta * c + alpha * s)
    }
}

/// `out = x^-1` for every square matrix of the batch `[..., n, n]`. A singular matrix (a zero
/// pivot) is an error naming the matrix.
pub fn inverse(x: &View, out: &View) -> Result<(), String> {
    let nd = x.ndim();
    let n = x.shape[nd - 1];
    let batch: usize = x.shape[..nd - 2].iter().product();
    let mut a = vec![0f64; n * n];
    let mut inv = vec![0f64; n * n];
    let mut idx = vec![0usize; nd - 2];
    for bi in 0..batch {
        let at = |v: &View, r: usize, c: usize| {
            let mut full = idx.clone();
            full.push(r);
            full.push(c);
            v.at(&full)
        };
        for r in 0..n {
            for c in 0..n {
                // SAFETY: (idx, r, c) is inside the checked input view.
                a[r * n + c] = unsafe { elem::read_f64(x.dtype, at(x, r, c)) };
                inv[r * n + c] = if r == c { 1.0 } else { 0.0 };
            }
        }
        for col in 0..n {
            // partial pivoting: the largest magnitude at or below the diagonal
            let p = (col..n)
                .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
                .unwrap_or(col);
            let pv = a[p * n + col];
            if pv == 0.0 || !pv.is_finite() {
                return Err(format!(
                    "matrix {bi} of the batch is singular (no pivot in column {col}); it has no \
                     inverse"
                ));
            }
            if p != col {
                for c in 0..n {
                    a.swap(p * n + c, col * n + c);
                    inv.swap(p * n + c, col * n + c);
                }
            }
            for c in 0..n {
                a[col * n + c] /= pv;
                inv[col * n + c] /= pv;
            }
            for r in 0..n {
                if r == col {
                    continue;
                }
                let f = a[r * n + col];
                if f == 0.0 {
                    continue;
                }
                for c in 0..n {
                    a[r * n + c] -= f * a[col * n + c];
                    inv[r * n + c] -= f * inv[col * n + c];
                }
            }
        }
        for r in 0..n {
            for c in 0..n {
                // SAFETY: (idx, r, c) is inside the checked output view.
                unsafe { elem::write::<f64>(out.dtype, at(out, r, c), inv[r * n + c]) };
            }
        }
        for d in (0..nd - 2).rev() {
            idx[d] += 1;
            if idx[d] < x.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(())
}

/// Dense row-major copies of `views` and the output in the compute class of `out`: i64 for
/// integer and bool outputs (wrapping), f64 otherwise; `f` fills the output buffer.
fn dense_apply(
    views: &[View],
    out: &View,
    fi: impl Fn(&[Vec<i64>]) -> Vec<i64>,
    ff: impl Fn(&[Vec<f64>]) -> Vec<f64>,
) -> Result<(), String> {
    if out.numel() == 0 {
        return Ok(());
    }
    if out.dtype.class() == Class::Int {
        let xs = views
            .iter()
            .map(|v| load::<i64>(v, DType::I64))
            .collect::<Result<Vec<_>, _>>()?;
        store(fi(&xs), DType::I64, out)
    } else {
        let xs = views
            .iter()
            .map(|v| load::<f64>(v, DType::F64))
            .collect::<Result<Vec<_>, _>>()?;
        store(ff(&xs), DType::F64, out)
    }
}

/// `out = a × b` along `dim` (of size 3; `torch.linalg.cross`): `a` and `b` broadcast to
/// `out`'s shape. Floating types compute in float64 and round once; integers wrap.
pub fn cross(a: &View, b: &View, dim: usize, out: &View) -> Result<(), String> {
    let shape = out.shape.clone();
    let ea = a
        .expand(&shape)
        .ok_or_else(|| format!("self {:?} does not broadcast to {shape:?}", a.shape))?;
    let eb = b
        .expand(&shape)
        .ok_or_else(|| format!("other {:?} does not broadcast to {shape:?}", b.shape))?;
    if shape.get(dim) != Some(&3) {
        return Err(format!("dimension {dim} of {shape:?} must have size 3"));
    }
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    fn apply<T: Copy + Default>(
        x: &[T],
        y: &[T],
        outer: usize,
        inner: usize,
        det: impl Fn(T, T, T, T) -> T,
    ) -> Vec<T> {
        let mut r = vec![T::default(); x.len()];
        for o in 0..outer {
            for i in 0..inner {
                let at = |k: usize| o * 3 * inner + k * inner + i;
                for k in 0..3 {
                    let (p, q) = ((k + 1) % 3, (k + 2) % 3);
                    r[at(k)] = det(x[at(p)], y[at(q)], x[at(q)], y[at(p)]);
                }
            }
        }
        r
    }
    dense_apply(
        &[ea, eb],
        out,
        |v| {
            apply(&v[0], &v[1], outer, inner, |a, b, c, d| {
                a.wrapping_mul(b).wrapping_sub(c.wrapping_mul(d))
            })
        },
        |v| apply(&v[0], &v[1], outer, inner, |a, b, c, d| a * b - c * d),
    )
}

/// A parsed einsum equation: one label list per operand and the output's labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Einsum {
    pub inputs: Vec<Vec<u8>>,
    pub output: Vec<u8>,
    /// The size of every label (indexed by the label byte).
    pub sizes: Vec<(u8, usize)>,
}

impl Einsum {
    /// Parse `equation` ("ij,jk->ik"; letters only, spaces ignored; without "->" the output
    /// is the labels that appear once, in alphabetical order) against the operands' shapes.
    pub fn parse(equation: &str, shapes: &[Vec<usize>]) -> Result<Einsum, String> {
        let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
        if eq.contains("...") || eq.contains('.') {
            return Err(format!(
                "equation {equation:?} uses an ellipsis, which is not supported"
            ));
        }
        let (lhs, rhs) = match eq.split_once("->") {
            Some((l, r)) => (l, Some(r)),
            None => (eq.as_str(), None),
        };
        let terms: Vec<Vec<u8>> = lhs.split(',').map(|t| t.bytes().collect()).collect();
        let bad = |t: &[u8]| t.iter().any(|c| !c.is_ascii_alphabetic());
        if terms.iter().any(|t| bad(t)) || rhs.is_some_and(|r| bad(r.as_bytes())) {
            return Err(format!(
                "equation {equation:?} must be letters, commas and one \"->\""
            ));
        }
        if terms.len() != shapes.len() {
            return Err(format!(
                "equation {equation:?} has {} operand term(s), but tensors holds {}",
                terms.len(),
                shapes.len()
            ));
        }
        let mut sizes: Vec<(u8, usize)> = vec![];
        for (k, (t, s)) in terms.iter().zip(shapes).enumerate() {
            if t.len() != s.len() {
                return Err(format!(
                    "term {:?} of equation {equation:?} has {} labels, but tensor {k} has {} dimensions {s:?}",
                    String::from_utf8_lossy(t),
                    t.len(),
                    s.len()
                ));
            }
            for (&c, &n) in t.iter().zip(s) {
                match sizes.iter().find(|(l, _)| *l == c) {
                    Some(&(_, m)) if m != n => {
                        return Err(format!(
                            "label {:?} of equation {equation:?} has size {m} and {n}",
                            c as char
                        ))
                    }
                    Some(_) => {}
                    None => sizes.push((c, n)),
                }
            }
        }
        let output: Vec<u8> = match rhs {
            Some(r) => {
                let r: Vec<u8> = r.bytes().collect();
                for (i, c) in r.iter().enumerate() {
                    if r[..i].contains(c) || !sizes.iter().any(|(l, _)| l == c) {
                        return Err(format!(
                            "output label {:?} of equation {equation:?} repeats or is not an input label",
                            *c as char
                        ));
                    }
                }
                r
            }
            None => {
                let mut once: Vec<u8> = sizes
                    .iter()
                    .map(|&(l, _)| l)
                    .filter(|l| terms.iter().flatten().filter(|c| *c == l).count() == 1)
                    .collect();
                once.sort_unstable();
                once
            }
        };
        Ok(Einsum {
            inputs: terms,
            output,
            sizes,
        })
    }

    /// The shape of the result.
    pub fn out_shape(&self) -> Vec<usize> {
        self.output.iter().map(|&c| self.size(c)).collect()
    }

    fn size(&self, c: u8) -> usize {
        self.sizes
            .iter()
            .find(|(l, _)| *l == c)
            .map_or(1, |&(_, n)| n)
    }
}

/// `out = einsum(e, xs…)`: the sum over the labels missing from the output of the product
/// of the operands. Floats accumulate in float64 and round once; integers wrap in i64.
pub fn einsum(e: &Einsum, xs: &[View], out: &View) -> Result<(), String> {
    // every label: the output's first, then the summed ones
    let mut labels = e.output.clone();
    for &(l, _) in &e.sizes {
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let dims: Vec<usize> = labels.iter().map(|&c| e.size(c)).collect();
    let nout = e.output.len();
    // per operand, the dense stride contributed by each label (repeated labels add up)
    let strides: Vec<Vec<usize>> = e
        .inputs
        .iter()
        .zip(xs)
        .map(|(t, x)| {
            let cs = super::view::contiguous_strides(&x.shape);
            labels
                .iter()
                .map(|l| {
                    t.iter()
                        .zip(&cs)
                        .filter(|(c, _)| *c == l)
                        .map(|(_, &s)| s as usize)
                        .sum()
                })
                .collect()
        })
        .collect();
    fn run<T: Copy + Default>(
        xs: &[Vec<T>],
        dims: &[usize],
        nout: usize,
        strides: &[Vec<usize>],
        one: T,
        mul: impl Fn(T, T) -> T,
        add: impl Fn(T, T) -> T,
    ) -> Vec<T> {
        let out_n: usize = dims[..nout].iter().product();
        let sum_n: usize = dims[nout..].iter().product();
        let mut r = vec![T::default(); out_n];
        let mut idx = vec![0usize; dims.len()];
        for (o, slot) in r.iter_mut().enumerate() {
            let mut rem = o;
            for d in (0..nout).rev() {
                idx[d] = rem % dims[d];
                rem /= dims[d];
            }
            let mut acc = T::default();
            for s in 0..sum_n {
                let mut rem = s;
                for d in (nout..dims.len()).rev() {
                    idx[d] = rem % dims[d];
                    rem /= dims[d];
                }
                let mut p = one;
                for (x, st) in xs.iter().zip(strides) {
                    let off: usize = idx.iter().zip(st).map(|(i, s)| i * s).sum();
                    p = mul(p, x[off]);
                }
                acc = add(acc, p);
            }
            *slot = acc;
        }
        r
    }
    dense_apply(
        xs,
        out,
        |v| {
            run(
                v,
                &dims,
                nout,
                &strides,
                1i64,
                i64::wrapping_mul,
                i64::wrapping_add,
            )
        },
        |v| run(v, &dims, nout, &strides, 1f64, |a, b| a * b, |a, b| a + b),
    )
}

/// The p-norm of `xs` in float64: `max |x|` for p = inf, the count of nonzeros for p = 0.
fn pnorm(xs: impl Iterator<Item = f64>, p: f64) -> f64 {
    if p == f64::INFINITY {
        xs.fold(0.0, |m, x| m.max(x.abs()))
    } else if p == 0.0 {
        xs.filter(|x| *x != 0.0).count() as f64
    } else if p == 1.0 {
        xs.map(f64::abs).sum()
    } else if p == 2.0 {
        xs.map(|x| x * x).sum::<f64>().sqrt()
    } else {
        xs.map(|x| x.abs().powf(p)).sum::<f64>().powf(1.0 / p)
    }
}

/// `out = renorm(x, p, dim, maxnorm)`: each slice of `x` at an index of dimension `dim`
/// whose p-norm exceeds `maxnorm` is scaled by `maxnorm / (norm + 1e-7)` (PyTorch's
/// formula), the others are copied. Norms and products in float64, one rounding.
pub fn renorm(x: &View, p: f64, dim: usize, maxnorm: f64, out: &View) -> Result<(), String> {
    let mut b: Vec<f64> = load(x, DType::F64)?;
    let n = x.shape.get(dim).copied().unwrap_or(1);
    let inner: usize = x.shape.iter().skip(dim + 1).product();
    let outer = b.len().checked_div(n * inner).unwrap_or(0);
    for j in 0..n {
        let idx = move |k: usize| ((k / inner) * n + j) * inner + k % inner;
        let norm = pnorm((0..outer * inner).map(|k| b[idx(k)]), p);
        if norm > maxnorm {
            let f = maxnorm / (norm + 1e-7);
            for k in 0..outer * inner {
                b[idx(k)] *= f;
            }
        }
    }
    store(b, DType::F64, out)
}

/// `out = pdist(x, p)`: the p-norm distances of the row pairs (i, j), i < j, of the
/// `[N, M]` matrix `x`, in the order (0, 1) … (0, N-1), (1, 2) … (N-2, N-1); float64.
pub fn pdist(x: &View, p: f64, out: &View) -> Result<(), String> {
    let a: Vec<f64> = load(x, DType::F64)?;
    let (n, m) = (x.shape[0], x.shape[1]);
    let mut r = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            r.push(pnorm((0..m).map(|k| a[i * m + k] - a[j * m + k]), p));
        }
    }
    store(r, DType::F64, out)
}

/// `(sign, log|det|)` of each square matrix of the batch `x` (`[*, n, n]`) into `sign` and
/// `logabs` (`[*]`): LU decomposition with partial pivoting in float64; a singular matrix
/// gives sign 0 and log -inf, as the reference says.
pub fn slogdet(x: &View, sign: &View, logabs: &View) -> Result<(), String> {
    let a: Vec<f64> = load(x, DType::F64)?;
    let nd = x.ndim();
    let n = x.shape[nd - 1];
    let batch: usize = x.shape[..nd - 2].iter().product();
    let (mut sg, mut lg) = (vec![0f64; batch], vec![0f64; batch]);
    for bi in 0..batch {
        let mut m = a[bi * n * n..(bi + 1) * n * n].to_vec();
        let (mut s, mut l) = (1f64, 0f64);
        for col in 0..n {
            let p = (col..n)
                .max_by(|&i, &j| m[i * n + col].abs().total_cmp(&m[j * n + col].abs()))
                .unwrap_or(col);
            let pv = m[p * n + col];
            if pv == 0.0 {
                s = 0.0;
                l = f64::NEG_INFINITY;
                break;
            }
            if p != col {
                for c in 0..n {
                    m.swap(p * n + c, col * n + c);
                }
                s = -s;
            }
            if pv < 0.0 {
                s = -s;
            }
            l += pv.abs().ln();
            for r in col + 1..n {
                let f = m[r * n + col] / pv;
                if f != 0.0 {
                    for c in col..n {
                        m[r * n + c] -= f * m[col * n + c];
                    }
                }
            }
        }
        sg[bi] = s;
        lg[bi] = l;
    }
    store(sg, DType::F64, sign)?;
    store(lg, DType::F64, logabs)
}

/// QR decomposition of each `[m, n]` matrix of the batch `x` by Householder reflections in
/// float64, LAPACK's convention (`geqrf`: `beta = -sign(alpha) * norm`, so R's diagonal may be
/// negative; `orgqr` forms Q), which is what CPU PyTorch returns. `q` is `[*, m, k]`
/// (reduced) or `[*, m, m]` (complete), or `None` (mode 'r'); `r` is `[*, rows, n]` with
/// `rows` k or m (the rows below k are zero). `k = min(m, n)`.
pub fn qr(x: &View, q: Option<&View>, r: &View) -> Result<(), String> {
    let a: Vec<f64> = load(x, DType::F64)?;
    let nd = x.ndim();
    let (m, n) = (x.shape[nd - 2], x.shape[nd - 1]);
    let k = m.min(n);
    let batch: usize = x.shape[..nd - 2].iter().product();
    let qc = q.map(|q| q.shape[q.ndim() - 1]).unwrap_or(0);
    let rr = r.shape[r.ndim() - 2];
    let (mut qs, mut rs) = (vec![0f64; batch * m * qc], vec![0f64; batch * rr * n]);
    for bi in 0..batch {
        let mut w = a[bi * m * n..(bi + 1) * m * n].to_vec();
        let mut taus = vec![0f64; k];
        for j in 0..k {
            let alpha = w[j * n + j];
            let xn = (j + 1..m).map(|i| w[i * n + j].powi(2)).sum::<f64>().sqrt();
            if xn == 0.0 {
                continue;
            }
            let beta = -alpha.signum() * alpha.hypot(xn);
            taus[j] = (beta - alpha) / beta;
            let sc = 1.0 / (alpha - beta);
            for i in j + 1..m {
                w[i * n + j] *= sc;
            }
            w[j * n + j] = beta;
            // apply H = I - tau v v^T (v = [1, w[j+1.., j]]) to the columns right of j
            for c in j + 1..n {
                let dot =
                    w[j * n + c] + (j + 1..m).map(|i| w[i * n + j] * w[i * n + c]).sum::<f64>();
                let f = taus[j] * dot;
                w[j * n + c] -= f;
                for i in j + 1..m {
                    w[i * n + c] -= f * w[i * n + j];
                }
            }
        }
        for i in 0..rr.min(m) {
            for c in i..n {
                rs[(bi * rr + i) * n + c] = w[i * n + c];
            }
        }
        if qc > 0 {
            // Q = H_0 … H_{k-1} applied to the first qc columns of the identity
            let qm = &mut qs[bi * m * qc..(bi + 1) * m * qc];
            for i in 0..m.min(qc) {
                qm[i * qc + i] = 1.0;
            }
            for j in (0..k).rev() {
                if taus[j] == 0.0 {
                    continue;
                }
                for c in 0..qc {
                    let dot = qm[j * qc + c]
                        + (j + 1..m)
                            .map(|i| w[i * n + j] * qm[i * qc + c])
                            .sum::<f64>();
                    let f = taus[j] * dot;
                    qm[j * qc + c] -= f;
                    for i in j + 1..m {
                        qm[i * qc + c] -= f * w[i * n + j];
                    }
                }
            }
        }
    }
    if let Some(q) = q {
        store(qs, DType::F64, q)?;
    }
    store(rs, DType::F64, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_a_permuted_matrix_and_a_singular_one() {
        // needs pivoting: the leading entry is 0
        let mut x = vec![0f64, 2.0, 1.0, 4.0, 1.0, 0.0, 3.0, 0.0, 1.0];
        let mut o = vec![0f64; 9];
        let vx = View::of_slice(&mut x, DType::F64, &[3, 3]);
        let vo = View::of_slice(&mut o, DType::F64, &[3, 3]);
        inverse(&vx, &vo).unwrap();
        for r in 0..3 {
            for c in 0..3 {
                let s: f64 = (0..3).map(|k| x[r * 3 + k] * o[k * 3 + c]).sum();
                assert!((s - if r == c { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        let mut s = vec![1f64, 2.0, 2.0, 4.0];
        let vs = View::of_slice(&mut s, DType::F64, &[2, 2]);
        let vo2 = View::of_slice(&mut o[..4], DType::F64, &[2, 2]);
        assert!(inverse(&vs, &vo2).unwrap_err().contains("singular"));
    }

    #[test]
    fn cross_of_unit_vectors_and_of_integers() {
        // e_x × e_y = e_z, rows along dim 0 of a [3, 2] layout
        let mut a = vec![1f64, 0.0, 0.0, 1.0, 0.0, 0.0];
        let mut b = vec![0f64, 0.0, 1.0, 0.0, 0.0, 1.0];
        let mut o = vec![9f64; 6];
        let va = View::of_slice(&mut a, DType::F64, &[3, 2]);
        let vb = View::of_slice(&mut b, DType::F64, &[3, 2]);
        let vo = View::of_slice(&mut o, DType::F64, &[3, 2]);
        cross(&va, &vb, 0, &vo).unwrap();
        // column 0: e_x × e_y = e_z; column 1: e_y × e_z = e_x
        assert_eq!(o, vec![0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
        let mut x = vec![1i32, 2, 3];
        let mut y = vec![4i32, 5, 6];
        let mut z = vec![0i32; 3];
        let vx = View::of_slice(&mut x, DType::I32, &[3]);
        let vy = View::of_slice(&mut y, DType::I32, &[1, 3]);
        let vz = View::of_slice(&mut z, DType::I32, &[1, 3]);
        cross(&vx, &vy, 1, &vz).unwrap();
        assert_eq!(z, vec![-3, 6, -3]);
    }

    #[test]
    fn einsum_parses_and_contracts() {
        let e = Einsum::parse("ij, jk -> ik", &[vec![2, 3], vec![3, 2]]).unwrap();
        assert_eq!(e.out_shape(), vec![2, 2]);
        let implicit = Einsum::parse("ba,ac", &[vec![2, 3], vec![3, 4]]).unwrap();
        assert_eq!(implicit.output, b"bc".to_vec());
        assert!(Einsum::parse("ij,jk->ik", &[vec![2, 3], vec![4, 2]])
            .unwrap_err()
            .contains("size 3 and 4"));
        assert!(Einsum::parse("i...,j->ij", &[vec![2], vec![3]])
            .unwrap_err()
            .contains("ellipsis"));
        assert!(Einsum::parse("ij->k", &[vec![2, 3]]).is_err());
        let mut a = vec![1f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut b = vec![1f64, 0.0, 0.0, 1.0, 1.0, 1.0];
        let mut o = vec![0f64; 4];
        let va = View::of_slice(&mut a, DType::F64, &[2, 3]);
        let vb = View::of_slice(&mut b, DType::F64, &[3, 2]);
        let vo = View::of_slice(&mut o, DType::F64, &[2, 2]);
        einsum(&e, &[va.clone(), vb], &vo).unwrap();
        assert_eq!(o, vec![4.0, 5.0, 10.0, 11.0]);
        // the trace through a repeated label
        let t = Einsum::parse("ii->", &[vec![2, 2]]).unwrap();
        let mut tr = vec![0f64; 1];
        let vt = View::of_slice(&mut tr, DType::F64, &[]);
        let mut m = vec![1f64, 2.0, 3.0, 4.0];
        let vm = View::of_slice(&mut m, DType::F64, &[2, 2]);
        einsum(&t, &[vm], &vt).unwrap();
        assert_eq!(tr, vec![5.0]);
    }

    #[test]
    fn renorm_pdist_and_slogdet() {
        // rows [1,1,1], [2,2,2], [3,3,3]; p = 1, dim 0, maxnorm 5 (the reference's example)
        let mut x = vec![1f64, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0];
        let mut o = vec![0f64; 9];
        let vx = View::of_slice(&mut x, DType::F64, &[3, 3]);
        let vo = View::of_slice(&mut o, DType::F64, &[3, 3]);
        renorm(&vx, 1.0, 0, 5.0, &vo).unwrap();
        assert_eq!(&o[..3], &[1.0, 1.0, 1.0]);
        assert!((o[3] - 2.0 * 5.0 / (6.0 + 1e-7)).abs() < 1e-12);
        assert!((o[8] - 3.0 * 5.0 / (9.0 + 1e-7)).abs() < 1e-12);
        let mut d = vec![0f64; 3];
        let vd = View::of_slice(&mut d, DType::F64, &[3]);
        pdist(&vx, 2.0, &vd).unwrap();
        let r3 = 3f64.sqrt();
        assert!(
            (d[0] - r3).abs() < 1e-12
                && (d[1] - 2.0 * r3).abs() < 1e-12
                && (d[2] - r3).abs() < 1e-12
        );
        // det [[0, 2], [3, 1]] = -6; a singular one
        let mut m = vec![0f64, 2.0, 3.0, 1.0, 1.0, 2.0, 2.0, 4.0];
        let (mut s, mut l) = (vec![0f64; 2], vec![0f64; 2]);
        let vm = View::of_slice(&mut m, DType::F64, &[2, 2, 2]);
        let vs = View::of_slice(&mut s, DType::F64, &[2]);
        let vl = View::of_slice(&mut l, DType::F64, &[2]);
        slogdet(&vm, &vs, &vl).unwrap();
        assert_eq!(s, vec![-1.0, 0.0]);
        assert!((l[0] - 6f64.ln()).abs() < 1e-12 && l[1] == f64::NEG_INFINITY);
    }

    #[test]
    fn qr_reconstructs_the_matrix() {
        for (m, n, qc, rr) in [(4, 3, 3, 3), (4, 3, 4, 4), (2, 5, 2, 2)] {
            let mut x: Vec<f64> = (0..m * n).map(|i| ((i * 7 % 11) as f64) - 5.0).collect();
            let mut q = vec![0f64; m * qc];
            let mut r = vec![0f64; rr * n];
            let vx = View::of_slice(&mut x, DType::F64, &[m, n]);
            let vq = View::of_slice(&mut q, DType::F64, &[m, qc]);
            let vr = View::of_slice(&mut r, DType::F64, &[rr, n]);
            qr(&vx, Some(&vq), &vr).unwrap();
            for i in 0..m {
                for c in 0..n {
                    let s: f64 = (0..qc.min(rr)).map(|t| q[i * qc + t] * r[t * n + c]).sum();
                    assert!((s - x[i * n + c]).abs() < 1e-12, "{m}x{n}: ({i}, {c})");
                }
            }
            for c1 in 0..qc {
                for c2 in 0..qc {
                    let s: f64 = (0..m).map(|i| q[i * qc + c1] * q[i * qc + c2]).sum();
                    assert!((s - if c1 == c2 { 1.0 } else { 0.0 }).abs() < 1e-12);
                }
            }
        }
    }
}
