//! Assorted math of the aclnn reference's `aclnn_math` domain: diagonals (`diag`, `diag_flat`),
//! `signbit`, `gcd`, bit shifts (`shift`), membership of a scalar in a tensor (`isin_scalar`), the scaled outer
//! product `addr` and the batched p-norm distance `cdist`.
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

/// `out = a << b` (`left`) or `a >> b` in the integer type `ct` (the promoted type): shifts
/// of the type's width or more give 0 to the left and the sign fill (0 for unsigned types)
/// to the right, as PyTorch's kernels do; a negative count shifts by 0 (the reference's rule
/// for RightShift, applied to both directions).
pub fn shift(a: &View, b: &View, left: bool, ct: DType, out: &View) -> Result<(), String> {
    let bits = (ct.size() * 8) as i64;
    let unsigned = ct.is_unsigned();
    map2::<i64, i64>(a, b, out, move |v, n| {
        let n = n.max(0);
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
    fn distances() {
        let d = [3.0, -4.0, 0.0];
        assert_eq!(pdistance(d.iter().copied(), 2.0), 5.0);
        assert_eq!(pdistance(d.iter().copied(), 1.0), 7.0);
        assert_eq!(pdistance(d.iter().copied(), 0.0), 2.0);
        assert_eq!(pdistance(d.iter().copied(), f64::INFINITY), 4.0);
    }
}
