//! Elementwise operators: unary math, binary arithmetic, comparisons and logical ops, and
//! the ternary forms (addcmul, addcdiv, lerp, where). Each computes in the class of its
//! compute dtype (f32 for f16/bf16/f32, f64, i64 for integers and bool) and stores into the
//! output dtype with one rounding.
//!
//! The transcendental functions are the C library's (`expf`, `erff`, … of the system libm,
//! through Rust's `f32`/`f64` methods or a direct declaration), so they agree bit for bit
//! with a C program computing the same expression in the same type.

use super::dtype::{Class, DType};
use super::elem::Compute;
use super::iter::{map1, map2, map3};
use super::scalar::Scalar;
use super::view::View;

/// Float compute types.
pub trait Float: Compute + num_traits::Float {
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    fn c(v: f64) -> Self {
        <Self as Compute>::from_f64(v)
    }
}

extern "C" {
    // The system libm (linked by std on Linux): the functions C programs call.
    fn erff(x: f32) -> f32;
    fn erfcf(x: f32) -> f32;
    #[link_name = "erf"]
    fn erf_f64(x: f64) -> f64;
    #[link_name = "erfc"]
    fn erfc_f64(x: f64) -> f64;
}

impl Float for f32 {
    fn erf(self) -> f32 {
        // SAFETY: pure libm function.
        unsafe { erff(self) }
    }
    fn erfc(self) -> f32 {
        // SAFETY: pure libm function.
        unsafe { erfcf(self) }
    }
}

impl Float for f64 {
    fn erf(self) -> f64 {
        // SAFETY: pure libm function.
        unsafe { erf_f64(self) }
    }
    fn erfc(self) -> f64 {
        // SAFETY: pure libm function.
        unsafe { erfc_f64(self) }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unary {
    Neg,
    Abs,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Sigmoid,
    Erf,
    Erfc,
    Relu,
    /// gelu with erf ("none" approximation).
    Gelu,
    /// gelu with the tanh approximation.
    GeluTanh,
    Silu,
    Floor,
    Ceil,
    Round,
    Trunc,
    /// the fractional part `x - trunc(x)` (`frac`; 0 for integers)
    Frac,
    Sign,
    Square,
    LogicalNot,
    BitwiseNot,
    /// x if x > 0 else x * slope
    LeakyRelu(f64),
    /// min(max(x, lo), hi)
    Clamp(Option<f64>, Option<f64>),
    /// x^p (scalar exponent)
    PowScalar(f64),
    /// p^x (scalar base)
    ScalarPow(f64),
    /// 1 where the value is finite (bool result)
    IsFinite,
    /// round half to even at `d` decimal places (negative: tens, hundreds, …)
    RoundDecimals(i32),
    Asinh,
    Acosh,
    Atanh,
    /// the inverse of erf: ±inf at ±1, NaN outside [-1, 1]
    Erfinv,
    /// NaN, +inf and -inf replaced by the three values (integers unchanged)
    NanToNum(f64, f64, f64),
}

impl Unary {
    /// Operators that only make sense on floats (integer inputs compute in f32).
    pub fn float_only(self) -> bool {
        !matches!(
            self,
            Unary::Neg
                | Unary::Abs
                | Unary::Relu
                | Unary::Sign
                | Unary::Square
                | Unary::LogicalNot
                | Unary::BitwiseNot
                | Unary::Floor
                | Unary::Ceil
                | Unary::Round
                | Unary::Trunc
                | Unary::Frac
                | Unary::Clamp(..)
                | Unary::LeakyRelu(_)
                | Unary::IsFinite
                | Unary::NanToNum(..)
        )
    }

    /// Operators whose result is bool.
    pub fn is_predicate(self) -> bool {
        matches!(self, Unary::LogicalNot | Unary::IsFinite)
    }
}

fn round_half_even<F: Float>(x: F) -> F {
    let r = x.round();
    if (r - x).abs() == F::c(0.5) {
        // a tie: round() went away from zero; go to the even neighbour
        let half = r / F::c(2.0);
        if half.floor() != half {
            return r - x.signum();
        }
    }
    r
}

fn unary_float<F: Float>(op: Unary, x: &View, out: &View) -> Result<(), String> {
    let one = F::one();
    let zero = F::zero();
    macro_rules! m {
        ($f:expr) => {
            map1::<F, F>(x, out, $f)
        };
    }
    match op {
        Unary::Neg => m!(|v| -v),
        Unary::Abs => m!(|v| v.abs()),
        Unary::Exp => m!(|v| v.exp()),
        Unary::Exp2 => m!(|v| v.exp2()),
        Unary::Expm1 => m!(|v| v.exp_m1()),
        Unary::Log => m!(|v| v.ln()),
        Unary::Log2 => m!(|v| v.log2()),
        Unary::Log10 => m!(|v| v.log10()),
        Unary::Log1p => m!(|v| v.ln_1p()),
        Unary::Sqrt => m!(|v| v.sqrt()),
        Unary::Rsqrt => m!(|v| one / v.sqrt()),
        Unary::Reciprocal => m!(|v| one / v),
        Unary::Sin => m!(|v| v.sin()),
        Unary::Cos => m!(|v| v.cos()),
        Unary::Tan => m!(|v| v.tan()),
        Unary::Asin => m!(|v| v.asin()),
        Unary::Acos => m!(|v| v.acos()),
        Unary::Atan => m!(|v| v.atan()),
        Unary::Sinh => m!(|v| v.sinh()),
        Unary::Cosh => m!(|v| v.cosh()),
        Unary::Tanh => m!(|v| v.tanh()),
        Unary::Sigmoid => m!(|v| one / (one + (-v).exp())),
        Unary::Erf => m!(|v| v.erf()),
        Unary::Erfc => m!(|v| v.erfc()),
        Unary::Relu => m!(|v| if v > zero || v.is_nan() { v } else { zero }),
        Unary::Gelu => {
            let r = F::c(std::f64::consts::FRAC_1_SQRT_2);
            let h = F::c(0.5);
            m!(|v| h * v * (one + (v * r).erf()))
        }
        Unary::GeluTanh => {
            let k = F::c((2.0 / std::f64::consts::PI).sqrt());
            let c = F::c(0.044715);
            let h = F::c(0.5);
            m!(|v| h * v * (one + (k * (v + c * v * v * v)).tanh()))
        }
        Unary::Silu => m!(|v| v / (one + (-v).exp())),
        Unary::Floor => m!(|v| v.floor()),
        Unary::Ceil => m!(|v| v.ceil()),
        Unary::Round => m!(round_half_even),
        Unary::Trunc => m!(|v| v.trunc()),
        Unary::Frac => m!(|v| v - v.trunc()),
        Unary::Sign => m!(|v| if v > zero {
            one
        } else if v < zero {
            -one
        } else {
            v * zero
        }),
        Unary::Square => m!(|v| v * v),
        Unary::LogicalNot => map1::<F, bool>(x, out, |v| v == zero),
        Unary::BitwiseNot => Err("bitwise_not needs an integer or bool tensor".into()),
        Unary::LeakyRelu(s) => {
            let s = F::c(s);
            m!(|v| if v > zero { v } else { v * s })
        }
        Unary::Clamp(lo, hi) => {
            let lo = lo.map(F::c);
            let hi = hi.map(F::c);
            m!(|v| {
                let mut r = v;
                if let Some(l) = lo {
                    if r < l {
                        r = l;
                    }
                }
                if let Some(h) = hi {
                    if r > h {
                        r = h;
                    }
                }
                r
            })
        }
        Unary::PowScalar(p) => {
            let pf = F::c(p);
            if p == 2.0 {
                m!(|v| v * v)
            } else if p == 0.5 {
                m!(|v| v.sqrt())
            } else {
                m!(|v| v.powf(pf))
            }
        }
        Unary::ScalarPow(b) => {
            let bf = F::c(b);
            m!(|v| bf.powf(v))
        }
        Unary::IsFinite => map1::<F, bool>(x, out, |v| v.is_finite()),
        Unary::Asinh => m!(|v| v.asinh()),
        Unary::Acosh => m!(|v| v.acosh()),
        Unary::Atanh => m!(|v| v.atanh()),
        Unary::Erfinv => map1::<F, F>(x, out, |v| F::c(erfinv(v.to_f64()))),
        Unary::NanToNum(nan, pinf, ninf) => {
            let (n, p, q) = (F::c(nan), F::c(pinf), F::c(ninf));
            m!(move |v| if v.is_nan() {
                n
            } else if v == F::infinity() {
                p
            } else if v == F::neg_infinity() {
                q
            } else {
                v
            })
        }
        Unary::RoundDecimals(d) => {
            let p = F::c(10f64.powi(d.abs()));
            if d >= 0 {
                m!(move |v| round_half_even(v * p) / p)
            } else {
                m!(move |v| round_half_even(v / p) * p)
            }
        }
    }
}

/// erfinv in f64: a rational first guess (Giles, "Approximating the erfinv function", 2010,
/// single-precision branch) refined by two Newton steps on erf; no maintained crate offers
/// erfinv for f32/f64 with libm's erf, so it is written here.
fn erfinv(x: f64) -> f64 {
    if x.is_nan() || !(-1.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x == 1.0 || x == -1.0 {
        return x * f64::INFINITY;
    }
    let w = -((1.0 - x) * (1.0 + x)).ln();
    let mut y = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p * x
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257;
        for c in [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p * x
    };
    let k = 2.0 / std::f64::consts::PI.sqrt();
    for _ in 0..2 {
        let e = <f64 as Float>::erf(y) - x;
        y -= e / (k * (-y * y).exp());
    }
    y
}

fn unary_int(op: Unary, x: &View, out: &View) -> Result<(), String> {
    let is_bool = x.dtype == DType::Bool;
    macro_rules! m {
        ($f:expr) => {
            map1::<i64, i64>(x, out, $f)
        };
    }
    match op {
        Unary::Neg => m!(|v: i64| v.wrapping_neg()),
        Unary::Abs => m!(|v: i64| v.wrapping_abs()),
        Unary::Relu => m!(|v: i64| v.max(0)),
        Unary::Sign => m!(|v: i64| v.signum()),
        Unary::Square => m!(|v: i64| v.wrapping_mul(v)),
        Unary::Floor | Unary::Ceil | Unary::Round | Unary::Trunc => m!(|v: i64| v),
        Unary::Frac => m!(|_: i64| 0),
        Unary::LogicalNot => map1::<i64, bool>(x, out, |v| v == 0),
        Unary::IsFinite => map1::<i64, bool>(x, out, |_| true),
        Unary::NanToNum(..) => m!(|v: i64| v),
        Unary::RoundDecimals(d) if d >= 0 => m!(|v: i64| v),
        Unary::BitwiseNot if is_bool => m!(|v: i64| (v == 0) as i64),
        Unary::BitwiseNot => m!(|v: i64| !v),
        Unary::LeakyRelu(s) => map1::<f64, f64>(x, out, move |v| if v > 0.0 { v } else { v * s }),
        // Floating bounds of an integer tensor promote the result (torch's `clamp(int, 2.5)`
        // is a float tensor): compare in float64 when the output is floating, so the bound is
        // not truncated first.
        Unary::Clamp(lo, hi) if out.dtype.is_float() => map1::<f64, f64>(x, out, move |v| {
            let mut r = v;
            if let Some(l) = lo {
                r = r.max(l);
            }
            if let Some(h) = hi {
                r = r.min(h);
            }
            r
        }),
        Unary::Clamp(lo, hi) => {
            let lo = lo.map(|v| v as i64);
            let hi = hi.map(|v| v as i64);
            m!(move |v: i64| {
                let mut r = v;
                if let Some(l) = lo {
                    r = r.max(l);
                }
                if let Some(h) = hi {
                    r = r.min(h);
                }
                r
            })
        }
        Unary::PowScalar(p) if p >= 0.0 && p.fract() == 0.0 => {
            let e = p as u32;
            m!(move |v: i64| v.wrapping_pow(e))
        }
        _ => Err(format!("{op:?} is not defined for integer tensors")),
    }
}

/// `out = op(x)`, computing in the class of `ct`.
pub fn unary(op: Unary, x: &View, out: &View, ct: DType) -> Result<(), String> {
    match ct.class() {
        Class::F32 => unary_float::<f32>(op, x, out),
        Class::F64 => unary_float::<f64>(op, x, out),
        Class::Int => unary_int(op, x, out),
    }
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Binary {
    /// a + alpha * b
    Add(Scalar),
    /// a - alpha * b
    Sub(Scalar),
    /// b - alpha * a (`rsub`)
    RSub(Scalar),
    Mul,
    /// true division
    Div,
    /// division rounded toward zero
    DivTrunc,
    /// division rounded down
    DivFloor,
    Maximum,
    Minimum,
    Pow,
    /// C fmod (sign of the dividend)
    Fmod,
    /// Python remainder (sign of the divisor)
    Remainder,
    Atan2,
    /// |x - y| <= atol + rtol * |y| (rtol, atol, equal_nan): `torch.isclose`
    IsClose(f64, f64, bool),
    /// x * log(y), 0 where x is 0 (and y is not NaN): `torch.xlogy`
    XLogY,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitAnd,
    BitOr,
    BitXor,
    /// (grad, x): grad where x > threshold, else 0
    ThresholdBackward(f64),
    /// (grad, y): grad * y * (1 - y) with y = sigmoid(x)
    SigmoidBackward,
    /// (grad, y): grad * (1 - y^2) with y = tanh(x)
    TanhBackward,
    /// (grad, x): d gelu(x) (erf form)
    GeluBackward,
    /// (grad, x): d gelu(x) (tanh approximation)
    GeluTanhBackward,
    /// (grad, x): d silu(x)
    SiluBackward,
    /// (a, b): (a - b)^2
    SquaredDiff,
}

impl Binary {
    /// Operators whose result is bool.
    pub fn is_predicate(self) -> bool {
        matches!(
            self,
            Binary::Eq
                | Binary::Ne
                | Binary::Lt
                | Binary::Le
                | Binary::Gt
                | Binary::Ge
                | Binary::LogicalAnd
                | Binary::LogicalOr
                | Binary::LogicalXor
                | Binary::IsClose(..)
        )
    }
}

fn binary_float<F: Float>(op: Binary, a: &View, b: &View, out: &View) -> Result<(), String> {
    let one = F::one();
    let zero = F::zero();
    let half = F::c(0.5);
    macro_rules! m {
        ($f:expr) => {
            map2::<F, F>(a, b, out, $f)
        };
    }
    macro_rules! p {
        ($f:expr) => {
            map2::<F, bool>(a, b, out, $f)
        };
    }
    match op {
        Binary::Add(al) => {
            if al.to_f64() == 1.0 {
                m!(|x, y| x + y)
            } else {
                let al: F = al.get();
                m!(move |x, y| x + al * y)
            }
        }
        Binary::Sub(al) => {
            if al.to_f64() == 1.0 {
                m!(|x, y| x - y)
            } else {
                let al: F = al.get();
                m!(move |x, y| x - al * y)
            }
        }
        Binary::RSub(al) => {
            let al: F = al.get();
            m!(move |x, y| y - al * x)
        }
        Binary::Mul => m!(|x, y| x * y),
        Binary::Div => m!(|x, y| x / y),
        Binary::DivTrunc => m!(|x, y| (x / y).trunc()),
        Binary::DivFloor => m!(|x, y| (x / y).floor()),
        Binary::Maximum => m!(|x, y| if x.is_nan() || x > y {
            x
        } else if y.is_nan() {
            y
        } else {
            y.max(x)
        }),
        Binary::Minimum => m!(|x, y| if x.is_nan() || x < y {
            x
        } else if y.is_nan() {
            y
        } else {
            y.min(x)
        }),
        Binary::Pow => m!(|x, y| x.powf(y)),
        Binary::Fmod => m!(|x, y| x % y),
        Binary::Remainder => m!(|x, y| {
            let r = x % y;
            if r != zero && ((r < zero) != (y < zero)) {
                r + y
            } else {
                r
            }
        }),
        Binary::Atan2 => m!(|x, y| x.atan2(y)),
        Binary::IsClose(rtol, atol, equal_nan) => {
            let (rtol, atol) = (F::c(rtol), F::c(atol));
            p!(move |x, y| {
                if x == y {
                    true
                } else if x.is_nan() || y.is_nan() {
                    equal_nan && x.is_nan() && y.is_nan()
                } else if x.is_infinite() || y.is_infinite() {
                    false
                } else {
                    (x - y).abs() <= atol + rtol * y.abs()
                }
            })
        }
        Binary::XLogY => m!(move |x, y| if y.is_nan() {
            y
        } else if x == zero {
            zero
        } else {
            x * y.ln()
        }),
        Binary::Eq => p!(|x, y| x == y),
        Binary::Ne => p!(|x, y| x != y),
        Binary::Lt => p!(|x, y| x < y),
        Binary::Le => p!(|x, y| x <= y),
        Binary::Gt => p!(|x, y| x > y),
        Binary::Ge => p!(|x, y| x >= y),
        Binary::LogicalAnd => p!(|x, y| x != zero && y != zero),
        Binary::LogicalOr => p!(|x, y| x != zero || y != zero),
        Binary::LogicalXor => p!(|x, y| (x != zero) != (y != zero)),
        Binary::BitAnd | Binary::BitOr | Binary::BitXor => {
            Err("bitwise operators need integer or bool tensors".into())
        }
        Binary::ThresholdBackward(t) => {
            let t = F::c(t);
            m!(move |g, x| if x <= t { zero } else { g })
        }
        Binary::SigmoidBackward => m!(|g, y| g * y * (one - y)),
        Binary::TanhBackward => m!(|g, y| g * (one - y * y)),
        Binary::GeluBackward => {
            let r = F::c(std::f64::consts::FRAC_1_SQRT_2);
            let k = F::c(1.0 / (2.0 * std::f64::consts::PI).sqrt());
            m!(move |g, x| {
                let cdf = half * (one + (x * r).erf());
                let pdf = k * (-half * x * x).exp();
                g * (cdf + x * pdf)
            })
        }
        Binary::GeluTanhBackward => {
            let k = F::c((2.0 / std::f64::consts::PI).sqrt());
            let c = F::c(0.044715);
            let c3 = F::c(3.0 * 0.044715);
            m!(move |g, x| {
                let inner = k * (x + c * x * x * x);
                let t = inner.tanh();
                let left = half * (one + t);
                let right = half * x * (one - t * t) * k * (one + c3 * x * x);
                g * (left + right)
            })
        }
        Binary::SiluBackward => m!(|g, x| {
            let s = one / (one + (-x).exp());
            g * s * (one + x * (one - s))
        }),
        Binary::SquaredDiff => m!(|x, y| (x - y) * (x - y)),
    }
}

fn binary_int(op: Binary, a: &View, b: &View, out: &View) -> Result<(), String> {
    macro_rules! m {
        ($f:expr) => {
            map2::<i64, i64>(a, b, out, $f)
        };
    }
    macro_rules! p {
        ($f:expr) => {
            map2::<i64, bool>(a, b, out, $f)
        };
    }
    match op {
        Binary::Add(al) => {
            let al = al.to_i64();
            m!(move |x: i64, y: i64| x.wrapping_add(al.wrapping_mul(y)))
        }
        Binary::Sub(al) => {
            let al = al.to_i64();
            m!(move |x: i64, y: i64| x.wrapping_sub(al.wrapping_mul(y)))
        }
        Binary::RSub(al) => {
            let al = al.to_i64();
            m!(move |x: i64, y: i64| y.wrapping_sub(al.wrapping_mul(x)))
        }
        Binary::Mul => m!(|x: i64, y: i64| x.wrapping_mul(y)),
        Binary::Div => map2::<f64, f64>(a, b, out, |x, y| x / y),
        Binary::DivTrunc => m!(|x: i64, y: i64| if y == 0 { 0 } else { x.wrapping_div(y) }),
        Binary::DivFloor => m!(|x: i64, y: i64| if y == 0 {
            0
        } else {
            let q = x.wrapping_div(y);
            if (x % y != 0) && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            }
        }),
        Binary::Maximum => m!(|x: i64, y: i64| x.max(y)),
        Binary::Minimum => m!(|x: i64, y: i64| x.min(y)),
        Binary::Pow => m!(|x: i64, y: i64| if y < 0 {
            match x {
                1 => 1,
                -1 => {
                    if y % 2 == 0 {
                        1
                    } else {
                        -1
                    }
                }
                _ => 0,
            }
        } else {
            x.wrapping_pow(y.min(u32::MAX as i64) as u32)
        }),
        Binary::Fmod => m!(|x: i64, y: i64| if y == 0 { 0 } else { x.wrapping_rem(y) }),
        Binary::Remainder => m!(|x: i64, y: i64| if y == 0 {
            0
        } else {
            let r = x.wrapping_rem(y);
            if r != 0 && ((r < 0) != (y < 0)) {
                r + y
            } else {
                r
            }
        }),
        Binary::Atan2 => map2::<f32, f32>(a, b, out, |x, y| x.atan2(y)),
        Binary::IsClose(rtol, atol, _) => map2::<f64, bool>(a, b, out, move |x, y| {
            x == y || (x - y).abs() <= atol + rtol * y.abs()
        }),
        Binary::XLogY => map2::<f32, f32>(a, b, out, |x, y| {
            if y.is_nan() {
                y
            } else if x == 0.0 {
                0.0
            } else {
                x * y.ln()
            }
        }),
        Binary::Eq => p!(|x, y| x == y),
        Binary::Ne => p!(|x, y| x != y),
        Binary::Lt => p!(|x, y| x < y),
        Binary::Le => p!(|x, y| x <= y),
        Binary::Gt => p!(|x, y| x > y),
        Binary::Ge => p!(|x, y| x >= y),
        Binary::LogicalAnd => p!(|x, y| x != 0 && y != 0),
        Binary::LogicalOr => p!(|x, y| x != 0 || y != 0),
        Binary::LogicalXor => p!(|x, y| (x != 0) != (y != 0)),
        Binary::BitAnd => m!(|x: i64, y: i64| x & y),
        Binary::BitOr => m!(|x: i64, y: i64| x | y),
        Binary::BitXor => m!(|x: i64, y: i64| x ^ y),
        Binary::ThresholdBackward(t) => {
            map2::<f64, f64>(a, b, out, move |g, x| if x <= t { 0.0 } else { g })
        }
        Binary::SquaredDiff => m!(|x: i64, y: i64| (x - y).wrapping_mul(x - y)),
        _ => Err(format!("{op:?} is not defined for integer tensors")),
    }
}

/// `out = op(a, b)` with broadcasting, computing in the class of `ct`.
pub fn binary(op: Binary, a: &View, b: &View, out: &View, ct: DType) -> Result<(), String> {
    match ct.class() {
        Class::F32 => binary_float::<f32>(op, a, b, out),
        Class::F64 => binary_float::<f64>(op, a, b, out),
        Class::Int => binary_int(op, a, b, out),
    }
}

/// Ternary operators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ternary {
    /// self + value * t1 * t2
    Addcmul(Scalar),
    /// self + value * t1 / t2
    Addcdiv(Scalar),
    /// self + weight * (end - self), weight a tensor
    Lerp,
    /// cond ? a : b with (cond, a, b); cond is read as bool
    Where,
}

fn lerp<F: Float>(s: F, e: F, w: F) -> F {
    // PyTorch's form: exact at both ends.
    if w.abs() < F::c(0.5) {
        s + w * (e - s)
    } else {
        e - (e - s) * (F::one() - w)
    }
}

fn ternary_float<F: Float>(
    op: Ternary,
    a: &View,
    b: &View,
    c: &View,
    out: &View,
) -> Result<(), String> {
    match op {
        Ternary::Addcmul(v) => {
            let v: F = v.get();
            map3::<F, F>(a, b, c, out, move |s, x, y| s + v * x * y)
        }
        Ternary::Addcdiv(v) => {
            let v: F = v.get();
            map3::<F, F>(a, b, c, out, move |s, x, y| s + v * x / y)
        }
        Ternary::Lerp => map3::<F, F>(a, b, c, out, lerp),
        Ternary::Where => map3::<F, F>(a, b, c, out, |k, x, y| if k != F::zero() { x } else { y }),
    }
}

/// `out = op(a, b, c)` with broadcasting, computing in the class of `ct`.
pub fn ternary(
    op: Ternary,
    a: &View,
    b: &View,
    c: &View,
    out: &View,
    ct: DType,
) -> Result<(), String> {
    match ct.class() {
        Class::F32 => ternary_float::<f32>(op, a, b, c, out),
        Class::F64 => ternary_float::<f64>(op, a, b, c, out),
        Class::Int => match op {
            Ternary::Addcmul(v) => {
                let v = v.to_i64();
                map3::<i64, i64>(a, b, c, out, move |s, x, y| {
                    s.wrapping_add(v.wrapping_mul(x).wrapping_mul(y))
                })
            }
            Ternary::Where => map3::<i64, i64>(a, b, c, out, |k, x, y| if k != 0 { x } else { y }),
            _ => Err(format!("{op:?} is not defined for integer tensors")),
        },
    }
}

/// `lerp` with a scalar weight: `out = s + w * (e - s)`.
pub fn lerp_scalar(s: &View, e: &View, w: f64, out: &View, ct: DType) -> Result<(), String> {
    match ct.class() {
        Class::F64 => map2::<f64, f64>(s, e, out, move |a, b| lerp(a, b, w)),
        _ => {
            let w = w as f32;
            map2::<f32, f32>(s, e, out, move |a, b| lerp(a, b, w))
        }
    }
}

/// A 0-d view of `s` (converted to the compute type of `ct`) over `buf`.
pub fn scalar_view(s: Scalar, ct: DType, buf: &mut [u64; 1]) -> View {
    let r = s.rounded_to(ct);
    let dtype = match ct.class() {
        Class::F32 | Class::F64 => {
            buf[0] = r.to_f64().to_bits();
            DType::F64
        }
        Class::Int => {
            buf[0] = r.to_i64() as u64;
            DType::I64
        }
    };
    View {
        ptr: buf.as_mut_ptr() as *mut u8,
        dtype,
        shape: vec![],
        strides: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v32(d: &mut [f32], shape: &[usize]) -> View {
        View::of_slice(d, DType::F32, shape)
    }

    #[test]
    fn erfinv_inverts_erf() {
        for &x in &[-0.999, -0.7, -0.2, 0.0, 1e-6, 0.3, 0.95, 0.999_999] {
            let y = erfinv(x);
            assert!((<f64 as Float>::erf(y) - x).abs() < 1e-14, "{x}: {y}");
        }
        assert_eq!(erfinv(1.0), f64::INFINITY);
        assert_eq!(erfinv(-1.0), f64::NEG_INFINITY);
        assert!(erfinv(1.5).is_nan());
    }

    #[test]
    fn arithmetic_matches_f32() {
        let mut a = vec![1.5f32, -2.25, 3.0, 1e-3];
        let mut b = vec![0.1f32, 0.2, -0.3, 7.0];
        let mut o = vec![0f32; 4];
        let (va, vb, vo) = (v32(&mut a, &[4]), v32(&mut b, &[4]), v32(&mut o, &[4]));
        binary(Binary::Add(Scalar::f32(0.5)), &va, &vb, &vo, DType::F32).unwrap();
        for i in 0..4 {
            assert_eq!(o[i], a[i] + 0.5f32 * b[i]);
        }
        binary(Binary::Div, &va, &vb, &vo, DType::F32).unwrap();
        for i in 0..4 {
            assert_eq!(o[i], a[i] / b[i]);
        }
        unary(Unary::Exp, &va, &vo, DType::F32).unwrap();
        for i in 0..4 {
            assert_eq!(o[i], a[i].exp());
        }
    }

    #[test]
    fn integer_ops_wrap_and_floor() {
        let mut a = vec![7i32, -7, i32::MAX];
        let mut b = vec![2i32, 2, 1];
        let mut o = vec![0i32; 3];
        let va = View::of_slice(&mut a, DType::I32, &[3]);
        let vb = View::of_slice(&mut b, DType::I32, &[3]);
        let vo = View::of_slice(&mut o, DType::I32, &[3]);
        binary(Binary::DivFloor, &va, &vb, &vo, DType::I32).unwrap();
        assert_eq!(o, vec![3, -4, i32::MAX]);
        binary(Binary::Add(Scalar::i64(1)), &va, &vb, &vo, DType::I32).unwrap();
        assert_eq!(o, vec![9, -5, i32::MIN]);
        let mut ob = vec![0u8; 3];
        let vob = View::of_slice(&mut ob, DType::Bool, &[3]);
        binary(Binary::Gt, &va, &vb, &vob, DType::I32).unwrap();
        assert_eq!(ob, vec![1, 0, 1]);
    }

    #[test]
    fn lerp_and_addcdiv() {
        let mut s = vec![1f32, 2.0];
        let mut e = vec![3f32, -2.0];
        let mut o = vec![0f32; 2];
        let (vs, ve, vo) = (v32(&mut s, &[2]), v32(&mut e, &[2]), v32(&mut o, &[2]));
        lerp_scalar(&vs, &ve, 0.25, &vo, DType::F32).unwrap();
        assert_eq!(o, vec![1.5, 1.0]);
        ternary(
            Ternary::Addcdiv(Scalar::f64(2.0)),
            &vs,
            &ve,
            &vs,
            &vo,
            DType::F32,
        )
        .unwrap();
        assert_eq!(o, vec![1.0 + 2.0 * 3.0 / 1.0, 2.0 + 2.0 * -2.0 / 2.0]);
    }
}
