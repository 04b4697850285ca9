//! The complex path of the existing operators (Add/Sub/Rsub/Mul/Div and their scalar and
//! in-place forms, Neg, Abs, Exp, Reciprocal, Sqrt, Log, Sign (`z / |z|`), InplaceCopy, Cast,
//! InplaceZero, ConstantPadNd, ReduceSum, Mean)
//! and `acl_stft.h` (aclStft), `aclnn_complex.h` (aclnnComplex), `aclnn_polar.h`
//! (aclnnPolar), `aclnn_real.h` (aclnnReal),
//! `aclnn_angle_v2.h` (aclnnAngleV2).
//!
//! A complex tensor (ACL_COMPLEX64, ACL_COMPLEX128) is read by [`a::tensor_cx`] as its real
//! view (float/double with an innermost (re, im) dimension); the engine
//! (`npu_emu::ops::complex`) computes in f64 pairs. Types: an operation with a complex
//! operand gives a complex result (COMPLEX64, or COMPLEX128 when any operand is double or
//! COMPLEX128), which `out` must hold; Abs gives the real magnitude (out FLOAT/DOUBLE). A
//! complex value stored into a real output keeps its real part (casts and copies, as
//! PyTorch's `copy_` does).

use super::args::{self as a, ALL_NUM, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::complex::{self as cxk, Arg, CBinary, CUnary, Cx};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{Binary, Unary};
use npu_emu::ops::scalar::Value;
use npu_emu::ops::view::broadcast_shapes;
use npu_emu::ops::Scalar;
use std::ffi::c_void;

/// A tensor argument and whether it is complex (then `T` is its real view).
pub(crate) type CT = (T, bool);

/// The logical shape (without the (re, im) dimension).
pub(crate) fn lshape(t: &CT) -> &[usize] {
    if t.1 {
        &t.0.shape()[..t.0.ndim() - 1]
    } else {
        t.0.shape()
    }
}

/// The ACL name of the tensor's logical data type.
fn dname(t: &CT) -> String {
    match (t.1, t.0.dtype()) {
        (true, DType::F64) => "ACL_COMPLEX128".into(),
        (true, _) => "ACL_COMPLEX64".into(),
        (false, d) => d.name().into(),
    }
}

/// Whether a complex result needs COMPLEX128 (double or COMPLEX128 operands).
fn wide(ts: &[&CT]) -> bool {
    ts.iter().any(|t| t.0.dtype() == DType::F64)
}

fn real_ok(t: &CT) -> NnResult<()> {
    if !t.1 {
        a::dtype_in(&t.0, ALL_NUM)?;
    }
    Ok(())
}

/// `out` must be complex, COMPLEX128 when the computation is.
fn complex_out(o: &CT, wide: bool) -> NnResult<()> {
    if !o.1 {
        return Err(NnError::invalid(format!(
            "{} has data type {}, but the result is complex ({}): out must be complex",
            o.0.arg,
            dname(o),
            if wide {
                "ACL_COMPLEX128"
            } else {
                "ACL_COMPLEX64"
            }
        )));
    }
    if wide && o.0.dtype() != DType::F64 {
        return Err(NnError::invalid(format!(
            "{} has data type ACL_COMPLEX64, but the result is ACL_COMPLEX128",
            o.0.arg
        )));
    }
    Ok(())
}

fn same_lshape(o: &CT, shape: &[usize]) -> NnResult<()> {
    if lshape(o) != shape {
        return Err(NnError::invalid(format!(
            "{} has shape {:?}; the result has shape {shape:?}",
            o.0.arg,
            lshape(o)
        )));
    }
    Ok(())
}

fn scalar_cx(s: Scalar) -> Cx {
    match s.value {
        Value::F(v) => Cx::new(v, 0.0),
        Value::I(v) => Cx::new(v as f64, 0.0),
        Value::B(v) => Cx::new(v as u8 as f64, 0.0),
    }
}

fn unsupported(t: &CT) -> NnError {
    NnError::invalid(format!(
        "{} has data type {}, which this operator does not support",
        t.0.arg,
        dname(t)
    ))
}

fn cbinary(op: Binary, x: &CT) -> NnResult<CBinary> {
    Ok(match op {
        Binary::Add(al) => CBinary::Add(scalar_cx(al)),
        Binary::Sub(al) => CBinary::Sub(scalar_cx(al)),
        Binary::RSub(al) => CBinary::RSub(scalar_cx(al)),
        Binary::Mul => CBinary::Mul,
        Binary::Div => CBinary::Div,
        _ => return Err(unsupported(x)),
    })
}

fn cunary(op: Unary, x: &CT) -> NnResult<CUnary> {
    Ok(match op {
        Unary::Neg => CUnary::Neg,
        Unary::Abs => CUnary::Abs,
        Unary::Exp => CUnary::Exp,
        Unary::Reciprocal => CUnary::Reciprocal,
        Unary::Sqrt => CUnary::Sqrt,
        Unary::Log => CUnary::Log,
        Unary::Sign => CUnary::Sgn,
        _ => return Err(unsupported(x)),
    })
}

/// The complex form of `out = op(self, other)`, when any of the three is complex.
pub(crate) fn tt(api: &'static str, op: Binary, x: &CT, y: &CT, o: &CT) -> Option<NnResult<Built>> {
    if !(x.1 || y.1 || o.1) {
        return None;
    }
    Some((|| {
        let c = cbinary(
            op,
            if x.1 {
                x
            } else if y.1 {
                y
            } else {
                o
            },
        )?;
        real_ok(x)?;
        real_ok(y)?;
        if !(x.1 || y.1) {
            return Err(NnError::invalid(format!(
                "out has data type {}, but {} and {} are real: the result is real",
                dname(o),
                dname(x),
                dname(y)
            )));
        }
        complex_out(o, wide(&[x, y]))?;
        let shape = broadcast_shapes(lshape(x), lshape(y)).ok_or_else(|| {
            NnError::invalid(format!(
                "{} shape {:?} and {} shape {:?} do not broadcast",
                x.0.arg,
                lshape(x),
                y.0.arg,
                lshape(y)
            ))
        })?;
        same_lshape(o, &shape)?;
        let (xc, yc, oc) = (x.1, y.1, o.1);
        let mut l = Launch::new(api);
        l.input(&x.0);
        l.input(&y.0);
        l.output(&o.0);
        l.finish(move |v, _| cxk::binary(c, Arg::T(&v[0], xc), Arg::T(&v[1], yc), &v[2], oc))
    })())
}

/// The complex form of `out = op(self, scalar)` (`op(scalar, self)` when `swap`).
pub(crate) fn ts(
    api: &'static str,
    op: Binary,
    x: &CT,
    s: Scalar,
    o: &CT,
    swap: bool,
) -> Option<NnResult<Built>> {
    if !(x.1 || o.1) {
        return None;
    }
    Some((|| {
        let c = cbinary(op, if x.1 { x } else { o })?;
        if !x.1 {
            return Err(unsupported(o));
        }
        complex_out(o, wide(&[x]))?;
        same_lshape(o, lshape(x))?;
        let sv = scalar_cx(s);
        let oc = o.1;
        let mut l = Launch::new(api);
        l.input(&x.0);
        l.output(&o.0);
        l.finish(move |v, _| {
            let (p, q) = if swap {
                (Arg::C(sv), Arg::T(&v[0], true))
            } else {
                (Arg::T(&v[0], true), Arg::C(sv))
            };
            cxk::binary(c, p, q, &v[1], oc)
        })
    })())
}

/// The complex form of `out = op(self)`.
pub(crate) fn unary(api: &'static str, op: Unary, x: &CT, o: &CT) -> Option<NnResult<Built>> {
    if !(x.1 || o.1) {
        return None;
    }
    Some((|| {
        let c = cunary(op, if x.1 { x } else { o })?;
        if !x.1 {
            return Err(unsupported(o));
        }
        if c == CUnary::Abs {
            // the reference's Abs takes COMPLEX32 and COMPLEX64 (out FLOAT16 / FLOAT)
            if x.0.dtype() == DType::F64 {
                return Err(unsupported(x));
            }
            if o.1 || o.0.dtype() != x.0.dtype() {
                return Err(NnError::invalid(format!(
                    "out has data type {}; the magnitude of {} is {}",
                    dname(o),
                    dname(x),
                    x.0.dtype()
                )));
            }
        } else {
            complex_out(o, wide(&[x]))?;
        }
        same_lshape(o, lshape(x))?;
        let oc = o.1;
        let mut l = Launch::new(api);
        l.input(&x.0);
        l.output(&o.0);
        l.finish(move |v, _| cxk::unary(c, Arg::T(&v[0], true), &v[1], oc))
    })())
}

/// The complex form of a copy or cast of `src` into `dst` (broadcasting src): real to complex
/// sets the imaginary part to 0, complex to real keeps the real part.
pub(crate) fn copy(api: &'static str, src: &CT, dst: &CT) -> Option<NnResult<Built>> {
    if !(src.1 || dst.1) {
        return None;
    }
    Some((|| {
        real_ok(src)?;
        if !dst.1 {
            a::dtype_in(&dst.0, npu_emu::ops::dtype::ALL)?;
        }
        let shape = broadcast_shapes(lshape(src), lshape(dst));
        if shape.as_deref() != Some(lshape(dst)) {
            return Err(NnError::invalid(format!(
                "{} shape {:?} cannot be broadcast to {} shape {:?}",
                src.0.arg,
                lshape(src),
                dst.0.arg,
                lshape(dst)
            )));
        }
        let (sc, dc) = (src.1, dst.1);
        let mut l = Launch::new(api);
        l.input(&src.0);
        l.output(&dst.0);
        l.finish(move |v, _| cxk::unary(CUnary::Copy, Arg::T(&v[0], sc), &v[1], dc))
    })())
}

/// The complex form of ReduceSum / Mean over `dims` (empty: all).
pub(crate) fn reduce(
    api: &'static str,
    x: &CT,
    dims: &[i64],
    keep: bool,
    mean: bool,
    o: &CT,
) -> Option<NnResult<Built>> {
    if !(x.1 || o.1) {
        return None;
    }
    Some((|| {
        if !x.1 {
            return Err(unsupported(o));
        }
        complex_out(o, wide(&[x]))?;
        let xs = lshape(x).to_vec();
        let ds: Vec<usize> = if dims.is_empty() {
            (0..xs.len()).collect()
        } else {
            a::dims(dims, xs.len(), "dim")?
        };
        let want: Vec<usize> = (0..xs.len())
            .filter_map(|d| {
                if ds.contains(&d) {
                    keep.then_some(1)
                } else {
                    Some(xs[d])
                }
            })
            .collect();
        let got = lshape(o);
        let full_to_1 = want.is_empty() && got.len() == 1 && got[0] == 1;
        if got != want.as_slice() && !full_to_1 {
            return Err(NnError::invalid(format!(
                "out has shape {got:?}; reducing self {xs:?} over {ds:?} (keepDim {keep}) gives \
                 {want:?}"
            )));
        }
        let mut l = Launch::new(api);
        l.input(&x.0);
        l.output(&o.0);
        l.finish(move |v, _| cxk::reduce_sum(&v[0], true, &ds, mean, &v[1], true))
    })())
}

/// `out = op(a, b)` of two real tensors of one dtype (`dtypes`) into a complex `out` of the
/// matching width (aclnnComplex: real + imag*i; aclnnPolar: abs*(cos angle + i sin angle)).
fn from_real_pair(
    api: &'static str,
    op: CBinary,
    x: CT,
    y: CT,
    o: CT,
    dtypes: &[DType],
) -> NnResult<Built> {
    for t in [&x, &y] {
        if t.1 {
            return Err(unsupported(t));
        }
        a::dtype_in(&t.0, dtypes)?;
    }
    if x.0.dtype() != y.0.dtype() {
        return Err(NnError::invalid(format!(
            "{} has data type {} and {} {}; they must be the same",
            x.0.arg,
            x.0.dtype(),
            y.0.arg,
            y.0.dtype()
        )));
    }
    complex_out(&o, x.0.dtype() == DType::F64)?;
    if o.0.dtype() != x.0.dtype() {
        return Err(NnError::invalid(format!(
            "out has data type {}; {} inputs give {}",
            dname(&o),
            x.0.dtype(),
            if x.0.dtype() == DType::F64 {
                "ACL_COMPLEX128"
            } else {
                "ACL_COMPLEX64"
            }
        )));
    }
    let shape = a::broadcast(&x.0, &y.0)?;
    same_lshape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x.0);
    l.input(&y.0);
    l.output(&o.0);
    l.finish(move |v, _| cxk::binary(op, Arg::T(&v[0], false), Arg::T(&v[1], false), &v[2], true))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnComplexGetWorkspaceSize(
    real: *const c_void,
    imag: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnComplexGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor_cx(real, "real")?;
            let y = a::tensor_cx(imag, "imag")?;
            let o = a::tensor_cx(out, "out")?;
            // FLOAT16 (into COMPLEX32) is in the reference's table; the engine has no COMPLEX32
            from_real_pair(
                "aclnnComplex",
                CBinary::Complex,
                x,
                y,
                o,
                &[DType::F32, DType::F64],
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPolarGetWorkspaceSize(
    input: *const c_void,
    angle: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPolarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor_cx(input, "input")?;
            let y = a::tensor_cx(angle, "angle")?;
            let o = a::tensor_cx(out, "out")?;
            from_real_pair("aclnnPolar", CBinary::Polar, x, y, o, &[DType::F32])
        },
    )
}

/// aclnnReal: the real part (COMPLEX64 -> FLOAT, COMPLEX128 -> DOUBLE; a real self is
/// copied into out of its own dtype).
#[no_mangle]
pub unsafe extern "C" fn aclnnRealGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnRealGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor_cx(self_, "self")?;
        let o = a::tensor_cx(out, "out")?;
        if o.1 {
            return Err(unsupported(&o));
        }
        if !x.1 {
            a::dtype_in(&x.0, &[DType::F32, DType::F16])?;
        }
        if o.0.dtype() != x.0.dtype() {
            return Err(NnError::invalid(format!(
                "out has data type {}; the real part of {} is {}",
                dname(&o),
                dname(&x),
                x.0.dtype()
            )));
        }
        same_lshape(&o, lshape(&x))?;
        let xc = x.1;
        let mut l = Launch::new("aclnnReal");
        l.input(&x.0);
        l.output(&o.0);
        l.finish(move |v, _| cxk::unary(CUnary::Real, Arg::T(&v[0], xc), &v[1], false))
    })
}

/// aclnnAngleV2: the argument in radians; a real x gives pi below 0 and 0 otherwise. y is
/// FLOAT16 (BFLOAT16) for a FLOAT16 (BFLOAT16) x, else FLOAT.
#[no_mangle]
pub unsafe extern "C" fn aclnnAngleV2GetWorkspaceSize(
    x: *const c_void,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAngleV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor_cx(x, "x")?;
            let o = a::tensor_cx(y, "y")?;
            if x.1 && x.0.dtype() == DType::F64 {
                return Err(unsupported(&x));
            }
            if o.1 {
                return Err(unsupported(&o));
            }
            if !x.1 {
                use DType::*;
                a::dtype_in(&x.0, &[F16, F32, BF16, Bool, U8, I8, I16, I32, I64])?;
            }
            let want = if !x.1 && matches!(x.0.dtype(), DType::F16 | DType::BF16) {
                x.0.dtype()
            } else {
                DType::F32
            };
            if o.0.dtype() != want {
                return Err(NnError::invalid(format!(
                    "y has data type {}; the angle of {} is {want}",
                    o.0.dtype(),
                    dname(&x)
                )));
            }
            same_lshape(&o, lshape(&x))?;
            let xc = x.1;
            let op = if xc {
                CUnary::Angle
            } else {
                CUnary::AngleOfReal
            };
            let mut l = Launch::new("aclnnAngleV2");
            l.input(&x.0);
            l.output(&o.0);
            l.finish(move |v, _| cxk::unary(op, Arg::T(&v[0], xc), &v[1], false))
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclStftGetWorkspaceSize(
    self_: *const c_void,
    windowOptional: *const c_void,
    out: *mut c_void,
    nFft: i64,
    hopLength: i64,
    winLength: i64,
    normalized: bool,
    onesided: bool,
    returnComplex: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclStftGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor_cx(self_, "self")?;
        let w = a::opt_tensor_cx(windowOptional, "windowOptional")?;
        let o = a::tensor_cx(out, "out")?;
        for t in [Some(&x), w.as_ref(), Some(&o)].into_iter().flatten() {
            a::dtype_of(t.0.dtype(), t.0.arg, &[DType::F32, DType::F64])?;
        }
        if let Some(w) = &w {
            if w.0.dtype() != x.0.dtype() || w.1 != x.1 {
                return Err(NnError::invalid(format!(
                    "windowOptional has data type {}; it must be self's, {}",
                    dname(w),
                    dname(&x)
                )));
            }
        }
        for (v, n) in [
            (nFft, "nFft"),
            (hopLength, "hopLength"),
            (winLength, "winLength"),
        ] {
            if v <= 0 {
                return Err(NnError::invalid(format!("{n} is {v}; it must be > 0")));
            }
        }
        if winLength > nFft {
            return Err(NnError::invalid(format!(
                "winLength {winLength} is larger than nFft {nFft}"
            )));
        }
        let xs = lshape(&x).to_vec();
        if xs.is_empty() || xs.len() > 2 {
            return Err(NnError::invalid(format!(
                "self has shape {xs:?}; it must be 1-D (L) or 2-D (B, L)"
            )));
        }
        let len = *xs.last().unwrap() as i64;
        if nFft > len {
            return Err(NnError::invalid(format!(
                "nFft {nFft} is larger than the signal length {len}"
            )));
        }
        if let Some(w) = &w {
            if lshape(w) != [winLength as usize].as_slice() {
                return Err(NnError::invalid(format!(
                    "windowOptional has shape {:?}; it must be [winLength] = [{winLength}]",
                    lshape(w)
                )));
            }
        }
        if x.1 && onesided {
            return Err(NnError::invalid(
                "onesided is true for a complex self; a one-sided spectrum needs a real signal",
            ));
        }
        let frames = ((len - nFft) / hopLength + 1) as usize;
        let freqs = (if onesided { nFft / 2 + 1 } else { nFft }) as usize;
        let mut want: Vec<usize> = xs[..xs.len() - 1].to_vec();
        want.push(freqs);
        want.push(frames);
        if returnComplex {
            if !o.1 {
                return Err(NnError::invalid(format!(
                    "returnComplex is true but out has data type {}",
                    dname(&o)
                )));
            }
        } else if o.1 {
            return Err(NnError::invalid(
                "returnComplex is false but out is complex; it must be real with a last \
                 dimension of 2",
            ));
        }
        // either way `o.0` is the real view [..., freqs, frames, 2]
        let mut want_view = want.clone();
        want_view.push(2);
        if o.0.shape() != want_view.as_slice() {
            return Err(NnError::invalid(format!(
                "out has shape {:?}; the transform gives {:?}{}",
                lshape(&o),
                want,
                if returnComplex { "" } else { " x 2 (re, im)" }
            )));
        }
        if o.0.dtype() != x.0.dtype() {
            return Err(NnError::invalid(format!(
                "out has data type {}; self is {}",
                dname(&o),
                dname(&x)
            )));
        }
        let (xc, has_w, wc) = (x.1, w.is_some(), w.as_ref().is_some_and(|w| w.1));
        let (n, hop, wl) = (nFft as usize, hopLength as usize, winLength as usize);
        let mut l = Launch::new("aclStft");
        l.input(&x.0);
        if let Some(w) = &w {
            l.input(&w.0);
        }
        l.output(&o.0);
        l.finish(move |v, _| {
            let (win, out) = if has_w {
                (Some((&v[1], wc)), &v[2])
            } else {
                (None, &v[1])
            };
            cxk::stft(&v[0], xc, win, n, hop, wl, normalized, onesided, out)
        })
    })
}

crate::phase2!(aclStft, aclnnComplex, aclnnPolar, aclnnReal, aclnnAngleV2);
