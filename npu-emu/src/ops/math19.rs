//! Math operators of CANN's ops-math documentation beyond the core families: digamma and
//! lgamma, logdet, the tensor-list reductions (MaxN, MinN, Sum / AddN), ReduceLogSum, and
//! Caffe's Scale. QR and the plain reductions reuse [`super::linalg`] and [`super::reduce`].
//!
//! Everything computes in float64 (integers in wrapping i64) and rounds once when stored.

use super::dtype::{Class, DType};
use super::iter::{copy, map1, map2, map3};
use super::linalg;
use super::reduce::{reduce, Reduce};
use super::view::Scratch;
use super::View;

const PI: f64 = std::f64::consts::PI;

/// `ln|Γ(x)|` (Lanczos, g = 7, reflection below 0.5); +inf at 0 and the negative integers,
/// as `torch.lgamma`.
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::INFINITY;
    }
    if x < 0.5 {
        // Γ(x) Γ(1 - x) = π / sin(πx)
        let s = (PI * x).sin().abs();
        return (PI / s).ln() - lgamma(1.0 - x);
    }
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// `ψ(x) = d/dx ln Γ(x)`: recurrence up to x ≥ 6, then the asymptotic series; reflection for
/// negative x. As `torch.digamma`: -inf at 0, NaN at the negative integers.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    if x < 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // ψ(1 - x) - ψ(x) = π cot(πx)
        return digamma(1.0 - x) - PI / (PI * x).tan();
    }
    let (mut x, mut acc) = (x, 0.0);
    while x < 6.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = f
        * (1.0 / 12.0
            - f * (1.0 / 120.0
                - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (1.0 / 132.0 - f * 691.0 / 32760.0)))));
    acc + x.ln() - 0.5 / x - series
}

/// `out = digamma(x)` elementwise.
pub fn digamma_op(x: &View, out: &View) -> Result<(), String> {
    map1::<f64, f64>(x, out, digamma)
}

/// `out = lgamma(x)` elementwise.
pub fn lgamma_op(x: &View, out: &View) -> Result<(), String> {
    map1::<f64, f64>(x, out, lgamma)
}

/// `log(det(x))` of each square matrix of the batch `x` into `out` (`[*]`): `log|det|` when
/// the determinant is positive, NaN when it is negative, -inf when the matrix is singular.
pub fn logdet(x: &View, out: &View) -> Result<(), String> {
    let s = Scratch::new(DType::F64, &out.shape);
    let l = Scratch::new(DType::F64, &out.shape);
    linalg::slogdet(x, &s.view, &l.view)?;
    map2::<f64, f64>(
        &s.view,
        &l.view,
        out,
        |sg, lg| if sg < 0.0 { f64::NAN } else { lg },
    )
}

/// What a tensor-list reduction combines.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ListOp {
    Max,
    Min,
    Sum,
}

fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// `out = op(xs[0], xs[1], …)` elementwise with broadcasting to `out`'s shape (MaxN, MinN,
/// Sum, AddN). NaN propagates through max and min. Integers combine in wrapping i64. The
/// result is gathered in a scratch tensor, so `out` may be one of the inputs.
pub fn list_reduce(op: ListOp, xs: &[View], out: &View) -> Result<(), String> {
    if out.numel() == 0 {
        return Ok(());
    }
    let Some(first) = xs.first() else {
        return Err("the tensor list is empty".into());
    };
    let int = out.dtype.class() == Class::Int || out.dtype == DType::Bool;
    let acc = Scratch::new(if int { DType::I64 } else { DType::F64 }, &out.shape);
    let fx = first
        .expand(&out.shape)
        .ok_or("a tensor of the list does not broadcast to out")?;
    copy(&fx, &acc.view)?;
    for x in &xs[1..] {
        let xe = x
            .expand(&out.shape)
            .ok_or("a tensor of the list does not broadcast to out")?;
        if int {
            map2::<i64, i64>(&acc.view, &xe, &acc.view, move |a, b| match op {
                ListOp::Max => a.max(b),
                ListOp::Min => a.min(b),
                ListOp::Sum => a.wrapping_add(b),
            })?;
        } else {
            map2::<f64, f64>(&acc.view, &xe, &acc.view, move |a, b| match op {
                ListOp::Max => fmax(a, b),
                ListOp::Min => fmin(a, b),
                ListOp::Sum => a + b,
            })?;
        }
    }
    copy(&acc.view, out)
}

/// `out = log(sum(x over dims))` (ReduceLogSum); `out` has the kept or keepdim shape.
pub fn reduce_log_sum(x: &View, dims: &[usize], out: &View) -> Result<(), String> {
    let s = Scratch::new(DType::F64, &out.shape);
    reduce(Reduce::Sum, x, dims, &s.view, false)?;
    map1::<f64, f64>(&s.view, out, f64::ln)
}

/// Caffe's Scale: `y = x * scale (+ bias)`, `scale` and `bias` covering the dimensions
/// `axis .. axis + scale.ndim()` of `x`; with `single`, their one element applies everywhere.
pub fn scale(
    x: &View,
    scale: &View,
    bias: Option<&View>,
    axis: usize,
    single: bool,
    y: &View,
) -> Result<(), String> {
    let nd = x.ndim();
    let place = |s: &View| -> Result<View, String> {
        let mut shape = x.shape.clone();
        let mut strides = vec![0isize; nd];
        if !single {
            for (i, (&d, &st)) in s.shape.iter().zip(&s.strides).enumerate() {
                let at = axis + i;
                if at >= nd || x.shape[at] != d {
                    return Err(format!(
                        "scale shape {:?} does not match x shape {:?} from axis {axis}",
                        s.shape, x.shape
                    ));
                }
                strides[at] = st;
            }
        }
        shape.truncate(nd);
        Ok(View {
            ptr: s.ptr,
            dtype: s.dtype,
            shape,
            strides,
        })
    };
    let sv = place(scale)?;
    match bias {
        Some(b) => {
            let bv = place(b)?;
            map3::<f64, f64>(x, &sv, &bv, y, |a, s, c| a * s + c)
        }
        None => map2::<f64, f64>(x, &sv, y, |a, s| a * s),
    }
}

/// SignBitsPack (1-bit Adam): bit `i % 8` of byte `i / 8` is 1 when element `i` of `x` is at
/// least 0 (little-endian within a byte); the bits past the end are 0. `out` holds the bytes
/// in row-major order.
pub fn sign_bits_pack(x: &View, out: &View) -> Result<(), String> {
    let xs: Vec<f64> = super::extra::load(x, DType::F64)?;
    let mut bytes = vec![0u8; out.numel()];
    for (i, v) in xs.iter().enumerate() {
        if *v >= 0.0 {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    super::extra::store(bytes, DType::U8, out)
}

/// SignBitsUnpack: bit `i % 8` of byte `i / 8` becomes element `i` of `out`, +1 when set and
/// -1 when clear.
pub fn sign_bits_unpack(x: &View, out: &View) -> Result<(), String> {
    let bs: Vec<u8> = super::extra::load(x, DType::U8)?;
    let v: Vec<f64> = (0..out.numel())
        .map(|i| {
            if bs[i / 8] >> (i % 8) & 1 == 1 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    super::extra::store(v, DType::F64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_functions() {
        assert!((lgamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((lgamma(0.5) - PI.sqrt().ln()).abs() < 1e-12);
        assert!((lgamma(-0.5) - (2.0 * PI.sqrt()).ln()).abs() < 1e-12);
        assert_eq!(lgamma(-2.0), f64::INFINITY);
        let euler = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + euler).abs() < 1e-12);
        assert!((digamma(0.5) + euler + 2.0 * 2f64.ln()).abs() < 1e-12);
        assert!((digamma(-0.5) - (digamma(1.5) - 0.0)).abs() > 0.0);
        assert!(digamma(-2.0).is_nan());
        // ψ(x + 1) = ψ(x) + 1/x
        for x in [0.3, 2.7, 11.5, -1.3] {
            assert!(
                (digamma(x + 1.0) - digamma(x) - 1.0 / x).abs() < 1e-10,
                "{x}"
            );
        }
    }
}
