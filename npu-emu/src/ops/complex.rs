//! Complex elements (ACL_COMPLEX64 / ACL_COMPLEX128). A complex tensor reaches the engine as
//! its real view: a float32 (float64) tensor with one more, innermost dimension of size 2
//! holding (real, imaginary), as `torch.view_as_real` lays it out. The kernels here read any
//! operand, complex or real, as (re, im) pairs in f64, broadcast to the result's shape,
//! compute in f64 pairs, and store the pairs (or only the real part into a real output,
//! which is what a cast from complex to real keeps).
//!
//! Every kernel reads all of its inputs before writing, so an output that is an input (the
//! in-place forms) is fine.

use super::elem;
use super::view::View;
use std::ops::{Add, Div, Mul, Sub};

/// A complex value in f64.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Cx {
    pub re: f64,
    pub im: f64,
}

impl Cx {
    pub const fn new(re: f64, im: f64) -> Cx {
        Cx { re, im }
    }
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    pub fn arg(self) -> f64 {
        self.im.atan2(self.re)
    }
    pub fn exp(self) -> Cx {
        let m = self.re.exp();
        Cx::new(m * self.im.cos(), m * self.im.sin())
    }
    pub fn conj(self) -> Cx {
        Cx::new(self.re, -self.im)
    }
}

impl Add for Cx {
    type Output = Cx;
    fn add(self, o: Cx) -> Cx {
        Cx::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for Cx {
    type Output = Cx;
    fn sub(self, o: Cx) -> Cx {
        Cx::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Cx {
    type Output = Cx;
    fn mul(self, o: Cx) -> Cx {
        Cx::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

/// Smith's division (no overflow for large denominators).
impl Div for Cx {
    type Output = Cx;
    fn div(self, o: Cx) -> Cx {
        if o.im == 0.0 {
            return Cx::new(self.re / o.re, self.im / o.re);
        }
        if o.re.abs() >= o.im.abs() {
            let r = o.im / o.re;
            let d = o.re + o.im * r;
            Cx::new((self.re + self.im * r) / d, (self.im - self.re * r) / d)
        } else {
            let r = o.re / o.im;
            let d = o.re * r + o.im;
            Cx::new((self.re * r + self.im) / d, (self.im * r - self.re) / d)
        }
    }
}

/// An operand: a tensor (its real view when `cx`) or a constant.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    T(&'a View, bool),
    C(Cx),
}

/// The logical shape of a view (without the (re, im) dimension when complex).
pub fn logical_shape(v: &View, cx: bool) -> &[usize] {
    if cx {
        &v.shape[..v.shape.len() - 1]
    } else {
        &v.shape
    }
}

fn check_cx(v: &View, cx: bool) -> Result<(), String> {
    if cx && v.shape.last() != Some(&2) {
        return Err(format!(
            "complex view {:?} has no (re, im) innermost dimension",
            v.shape
        ));
    }
    Ok(())
}

/// Element offsets (in elements of the view's dtype) of every logical element of `v`
/// broadcast to `shape`, in row-major order of `shape`.
fn offsets(v: &View, cx: bool, shape: &[usize]) -> Result<Vec<isize>, String> {
    check_cx(v, cx)?;
    let ls = logical_shape(v, cx);
    let lst = &v.strides[..ls.len()];
    if ls.len() > shape.len() {
        return Err(format!("{ls:?} does not broadcast to {shape:?}"));
    }
    let pad = shape.len() - ls.len();
    let mut st = vec![0isize; shape.len()];
    for (i, (&d, &s)) in ls.iter().zip(lst).enumerate() {
        let want = shape[pad + i];
        if d == want {
            st[pad + i] = if d == 1 { 0 } else { s };
        } else if d == 1 {
            st[pad + i] = 0;
        } else {
            return Err(format!("{ls:?} does not broadcast to {shape:?}"));
        }
    }
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return Ok(out);
    }
    let mut idx = vec![0usize; shape.len()];
    let mut off = 0isize;
    for _ in 0..n {
        out.push(off);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            off += st[d];
            if idx[d] < shape[d] {
                break;
            }
            off -= st[d] * shape[d] as isize;
            idx[d] = 0;
        }
    }
    Ok(out)
}

fn read1(v: &View, off: isize) -> f64 {
    let mut b = [0f64; 1];
    let p = v.ptr.wrapping_offset(off * v.esize() as isize);
    // SAFETY: `off` is inside the view the executor checked.
    unsafe { elem::load::<f64>(v.dtype, p, 0, 1, &mut b) };
    b[0]
}

fn write1(v: &View, off: isize, x: f64) {
    let p = v.ptr.wrapping_offset(off * v.esize() as isize);
    // SAFETY: `off` is inside the view the executor checked.
    unsafe { elem::store::<f64>(v.dtype, p, 0, &[x]) };
}

/// Every element of `a` broadcast to `shape` as complex values (a real tensor has im 0).
pub fn gather(a: Arg, shape: &[usize]) -> Result<Vec<Cx>, String> {
    match a {
        Arg::C(c) => Ok(vec![c; shape.iter().product()]),
        Arg::T(v, cx) => {
            let offs = offsets(v, cx, shape)?;
            let ims = if cx {
                v.strides[v.strides.len() - 1]
            } else {
                0
            };
            Ok(offs
                .iter()
                .map(|&o| {
                    if cx {
                        Cx::new(read1(v, o), read1(v, o + ims))
                    } else {
                        Cx::new(read1(v, o), 0.0)
                    }
                })
                .collect())
        }
    }
}

/// Store `vals` (row-major over the logical shape) into `out`; a real output keeps the real
/// parts.
pub fn scatter(out: &View, cx: bool, vals: &[Cx]) -> Result<(), String> {
    let shape = logical_shape(out, cx).to_vec();
    let offs = offsets(out, cx, &shape)?;
    if offs.len() != vals.len() {
        return Err(format!(
            "{} values for an output of shape {shape:?}",
            vals.len()
        ));
    }
    let ims = if cx {
        out.strides[out.strides.len() - 1]
    } else {
        0
    };
    for (&o, v) in offs.iter().zip(vals) {
        write1(out, o, v.re);
        if cx {
            write1(out, o + ims, v.im);
        }
    }
    Ok(())
}

/// Binary operators on complex values.
#[derive(Clone, Copy, Debug)]
pub enum CBinary {
    /// a + alpha*b
    Add(Cx),
    /// a - alpha*b
    Sub(Cx),
    /// b - alpha*a
    RSub(Cx),
    Mul,
    Div,
    /// a + i*b (`aclnnComplex`)
    Complex,
    /// a*(cos b + i sin b) (`aclnnPolar`)
    Polar,
}

impl CBinary {
    pub fn apply(self, x: Cx, y: Cx) -> Cx {
        match self {
            CBinary::Add(al) => x.add(al.mul(y)),
            CBinary::Sub(al) => x.sub(al.mul(y)),
            CBinary::RSub(al) => y.sub(al.mul(x)),
            CBinary::Mul => x.mul(y),
            CBinary::Div => x.div(y),
            CBinary::Complex => Cx::new(x.re, y.re),
            CBinary::Polar => Cx::new(x.re * y.re.cos(), x.re * y.re.sin()),
        }
    }
}

/// `out = op(a, b)`, broadcasting both to out's (logical) shape.
pub fn binary(op: CBinary, a: Arg, b: Arg, out: &View, out_cx: bool) -> Result<(), String> {
    check_cx(out, out_cx)?;
    let shape = logical_shape(out, out_cx).to_vec();
    let xa = gather(a, &shape)?;
    let xb = gather(b, &shape)?;
    let r: Vec<Cx> = xa.iter().zip(&xb).map(|(&x, &y)| op.apply(x, y)).collect();
    scatter(out, out_cx, &r)
}

/// Unary operators on complex values; Abs, Angle, Real and Imag give real results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CUnary {
    Neg,
    Abs,
    Exp,
    Conj,
    Angle,
    /// the angle of a real value: pi below 0, else 0 (NaN stays NaN)
    AngleOfReal,
    Real,
    Imag,
    /// copy or cast (a real output keeps the real part)
    Copy,
    Reciprocal,
    Sqrt,
    Log,
    Square,
    /// `torch.sgn`: `x / |x|`, 0 at 0
    Sgn,
}

impl CUnary {
    pub fn apply(self, x: Cx) -> Cx {
        match self {
            CUnary::Neg => Cx::new(-x.re, -x.im),
            CUnary::Abs => Cx::new(x.abs(), 0.0),
            CUnary::Exp => x.exp(),
            CUnary::Conj => x.conj(),
            CUnary::Angle => Cx::new(x.arg(), 0.0),
            CUnary::AngleOfReal => Cx::new(
                if x.re.is_nan() {
                    x.re
                } else if x.re < 0.0 {
                    std::f64::consts::PI
                } else {
                    0.0
                },
                0.0,
            ),
            CUnary::Real => Cx::new(x.re, 0.0),
            CUnary::Imag => Cx::new(x.im, 0.0),
            CUnary::Copy => x,
            CUnary::Reciprocal => Cx::new(1.0, 0.0).div(x),
            CUnary::Sqrt => {
                let m = x.abs();
                let re = ((m + x.re) / 2.0).sqrt();
                let im = ((m - x.re) / 2.0).sqrt();
                Cx::new(re, if x.im < 0.0 { -im } else { im })
            }
            CUnary::Log => Cx::new(x.abs().ln(), x.arg()),
            CUnary::Square => x.mul(x),
            CUnary::Sgn => {
                let m = x.abs();
                if m == 0.0 {
                    Cx::new(0.0, 0.0)
                } else {
                    Cx::new(x.re / m, x.im / m)
                }
            }
        }
    }
}

/// `out = op(x)`, broadcasting x to out's (logical) shape.
pub fn unary(op: CUnary, x: Arg, out: &View, out_cx: bool) -> Result<(), String> {
    check_cx(out, out_cx)?;
    let shape = logical_shape(out, out_cx).to_vec();
    let xs = gather(x, &shape)?;
    let r: Vec<Cx> = xs.iter().map(|&v| op.apply(v)).collect();
    scatter(out, out_cx, &r)
}

/// Sum (or mean) of `x` over `dims` (of its logical shape) into `out`, whose logical shape
/// is x's with the reduced dimensions removed or kept as 1.
pub fn reduce_sum(
    x: &View,
    x_cx: bool,
    dims: &[usize],
    mean: bool,
    out: &View,
    out_cx: bool,
) -> Result<(), String> {
    let shape = logical_shape(x, x_cx).to_vec();
    let xs = gather(Arg::T(x, x_cx), &shape)?;
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(d)).collect();
    let kshape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let nout: usize = kshape.iter().product();
    let count: usize = dims.iter().map(|&d| shape[d]).product();
    let mut acc = vec![Cx::default(); nout];
    let mut idx = vec![0usize; shape.len()];
    for v in &xs {
        let mut o = 0usize;
        for &d in &kept {
            o = o * shape[d] + idx[d];
        }
        acc[o] = acc[o].add(*v);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    if mean {
        let n = count as f64;
        for a in &mut acc {
            *a = Cx::new(a.re / n, a.im / n);
        }
    }
    let on: usize = logical_shape(out, out_cx).iter().product();
    if on != nout {
        return Err(format!("reduction gives {nout} values, out holds {on}"));
    }
    scatter(out, out_cx, &acc)
}

/// Short-time Fourier transform (`aclStft`) of a real or complex signal `x` ([L] or [B, L],
/// already padded by the caller), frames of `n_fft` every `hop` samples, multiplied by
/// `window` (length `win_length`, centred in n_fft; None: ones). `out` is
/// [(B,) n_fft/2+1 or n_fft, frames] complex, passed as its real view (which is also the
/// float output of `return_complex` false: the same [..., 2] layout).
#[allow(clippy::too_many_arguments)]
pub fn stft(
    x: &View,
    x_cx: bool,
    window: Option<(&View, bool)>,
    n_fft: usize,
    hop: usize,
    win_length: usize,
    normalized: bool,
    onesided: bool,
    out: &View,
) -> Result<(), String> {
    let xs_shape = logical_shape(x, x_cx).to_vec();
    let xs = gather(Arg::T(x, x_cx), &xs_shape)?;
    let (batch, len) = match xs_shape.len() {
        1 => (1, xs_shape[0]),
        2 => (xs_shape[0], xs_shape[1]),
        _ => return Err(format!("stft input {xs_shape:?} is neither 1-D nor 2-D")),
    };
    let mut win = vec![Cx::new(1.0, 0.0); win_length];
    if let Some((w, wc)) = window {
        win = gather(Arg::T(w, wc), &[win_length])?;
    }
    let left = (n_fft - win_length) / 2;
    let mut full = vec![Cx::default(); n_fft];
    full[left..left + win_length].copy_from_slice(&win);
    let frames = if len >= n_fft {
        1 + (len - n_fft) / hop
    } else {
        0
    };
    let freqs = if onesided { n_fft / 2 + 1 } else { n_fft };
    let scale = if normalized {
        1.0 / (n_fft as f64).sqrt()
    } else {
        1.0
    };
    // twiddles
    let tw: Vec<Cx> = (0..n_fft)
        .map(|k| {
            let a = -2.0 * std::f64::consts::PI * k as f64 / n_fft as f64;
            Cx::new(a.cos(), a.sin())
        })
        .collect();
    let mut res = vec![Cx::default(); batch * freqs * frames];
    let mut seg = vec![Cx::default(); n_fft];
    for b in 0..batch {
        for t in 0..frames {
            for (n, s) in seg.iter_mut().enumerate() {
                *s = xs[b * len + t * hop + n].mul(full[n]);
            }
            for f in 0..freqs {
                let mut acc = Cx::default();
                for (n, s) in seg.iter().enumerate() {
                    acc = acc.add(s.mul(tw[(f * n) % n_fft]));
                }
                res[(b * freqs + f) * frames + t] = Cx::new(acc.re * scale, acc.im * scale);
            }
        }
    }
    scatter(out, true, &res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let a = Cx::new(1.0, 2.0);
        let b = Cx::new(3.0, -1.0);
        assert_eq!(a.mul(b), Cx::new(5.0, 5.0));
        let q = Cx::new(5.0, 5.0).div(b);
        assert!((q.re - 1.0).abs() < 1e-15 && (q.im - 2.0).abs() < 1e-15);
        assert_eq!(Cx::new(3.0, 4.0).abs(), 5.0);
        let s = CUnary::Sqrt.apply(Cx::new(-4.0, 0.0));
        assert!((s.im - 2.0).abs() < 1e-15 && s.re.abs() < 1e-15);
    }

    #[test]
    fn views_broadcast() {
        // complex [2] real view [2, 2]
        let mut a = [1f32, 2.0, 3.0, -1.0];
        let va = View::of_slice(&mut a, crate::ops::DType::F32, &[2, 2]);
        let mut r = [2f32];
        let vr = View::of_slice(&mut r, crate::ops::DType::F32, &[1]);
        let mut o = [0f32; 4];
        let vo = View::of_slice(&mut o, crate::ops::DType::F32, &[2, 2]);
        binary(
            CBinary::Mul,
            Arg::T(&va, true),
            Arg::T(&vr, false),
            &vo,
            true,
        )
        .unwrap();
        assert_eq!(o, [2.0, 4.0, 6.0, -2.0]);
        let mut m = [0f32; 2];
        let vm = View::of_slice(&mut m, crate::ops::DType::F32, &[2]);
        unary(CUnary::Abs, Arg::T(&vo, true), &vm, false).unwrap();
        assert!((m[0] - 20f32.sqrt()).abs() < 1e-6);
    }
}
