//! Linear algebra beyond the plain products of [`super::matmul`]: `addmv`
//! (`beta * self + alpha * mat @ vec`), the outer product `ger`, `addbmm`
//! (`beta * self + alpha * sum_b batch1[b] @ batch2[b]`) and the inverse of square matrices
//! (batched).
//!
//! Products go through [`super::matmul::matmul`] (float32 accumulation, float64 for double);
//! `addbmm` sums the batch in a float64 scratch and rounds once into the output. The inverse
//! is Gauss-Jordan elimination with partial pivoting in float64, one matrix at a time (the
//! matrices of these operators are small; no maintained crate inverts strided views of our
//! dtypes in place, and a dependency for one routine is not worth it).

use super::dtype::DType;
use super::elem;
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
}
