//! Math operators of the aclnn reference, each as its page documents it (Atlas A2/A3 tables):
//! `aclnn_diag.h`, `aclnn_diag_flat.h`, `aclnn_signbit.h`, `aclnn_gcd.h`,
//! `aclnn_isin_tensor_scalar.h` (IsInTensorScalar), `aclnn_isin.h` (IsInScalarTensor),
//! `aclnn_addr.h` (Addr, InplaceAddr), `aclnn_cdist.h`, `aclnn_left_shift.h` (LeftShift,
//! LeftShifts), `aclnn_right_shift.h` (RightShift), `aclnn_triangular_solve.h`,
//! `aclnn_max_unpool2d.h`, `aclnn_max_unpool3d.h`, `aclnn_svd.h`, `aclnn_gather_nd.h` and
//! `aclnn_scatter_nd.h` and `aclnn_bucketize.h`.
//!
//! The engine is `npu_emu::ops::math_misc` (IsInTensorScalar is EqScalar / NeScalar with a
//! BOOL out). Bad arguments fail phase 1 with ACLNN_ERR_PARAM_NULLPTR /
//! ACLNN_ERR_PARAM_INVALID and a message naming the argument. Decisions:
//! - Diag/DiagFlat copy without conversion: out must have self's data type; COMPLEX64 is
//!   not supported (the engine has no complex types).
//! - IsInScalarTensor writes one BOOL element (out 0-d or `[1]`, as torch's `isin(Scalar,
//!   Tensor)` gives).
//! - Cdist: `compute_mode` is reserved, but the reference accepts only 2 when p is 2.0 (what
//!   torch_npu passes); the distances are computed in float64 and rounded once.
//! - Shifts compute in the promoted integer type, as PyTorch's `<<` / `>>`: a count that is
//!   negative or of the type's width or more gives 0 (left) or the sign fill (right: -1 for a
//!   negative signed value, else 0), which is also the RightShift reference's rule.
//! - TriangularSolve (FLOAT, DOUBLE; complex types are not supported): mOut is the used
//!   triangle of the broadcast A with zeros elsewhere, as the reference says (CPU torch's
//!   `cloned_coefficient` is the whole of A); with unitriangular only FLOAT, as the reference
//!   says. Substitution in float64, rounded once.
//! - MaxUnpool2d/3d: an index outside the output plane fails the task (at the next
//!   synchronisation), as PyTorch refuses it; stride and padding of the 3-D form are checked
//!   (positive, non-negative) and otherwise unused, as in PyTorch.
//! - Svd (FLOAT, DOUBLE): one-sided Jacobi in float64; v is V (not V^T), as the reference's
//!   output; singular vectors are unique only up to sign, and theirs need not be LAPACK's;
//!   with computeUV false u and v are not checked or written, as the reference says.
//! - GatherNd: a negative index counts from the end when negativeIndexSupport is true; one
//!   out of range (or negative without it) fails the task at the next synchronisation.
//! - ScatterNd: updates are applied in order (a later duplicate index wins); a negative or
//!   out-of-range index, which the reference does not support, fails the task.
//! - Bucketize (listed for Ascend 950 only; offered on every SoC, as the other newer
//!   operators): PyTorch's rule (`right` false: `b[i-1] < x <= b[i]`, left-open right-closed,
//!   as the reference names it); the reference's formulas write the two cases the other way
//!   round, which contradicts its own interval names.

use super::args::{self as a, T};
use super::arith::promote_scalar;
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::{can_cast, DType};
use npu_emu::ops::math::Binary;
use npu_emu::ops::math_misc as m;
use npu_emu::ops::Scalar;
use std::ffi::c_void;

use DType::*;

/// `o` must have `x`'s dtype.
fn same_dtype(o: &T, x: &T) -> NnResult<()> {
    if o.dtype() == x.dtype() {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} data type {} must be the same as {} data type {}",
            o.arg,
            o.dtype(),
            x.arg,
            x.dtype()
        )))
    }
}

// ---- Diag, DiagFlat ----

/// Diag's and DiagFlat's data types (Atlas A2/A3; COMPLEX64 aside).
const DIAG: &[DType] = &[F32, F16, F64, I32, I64, I16, I8, U8, Bool, BF16];

#[no_mangle]
pub unsafe extern "C" fn aclnnDiagGetWorkspaceSize(
    self_: *const c_void,
    diagonal: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnDiagGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        a::dtype_in(&x, DIAG)?;
        same_dtype(&o, &x)?;
        let want = match x.ndim() {
            1 => {
                let n = x.shape()[0] + diagonal.unsigned_abs() as usize;
                vec![n, n]
            }
            2 => vec![m::diagonal_len(x.shape()[0], x.shape()[1], diagonal)],
            _ => {
                return Err(NnError::invalid(format!(
                    "self must be 1-D or 2-D, but its shape is {:?}",
                    x.shape()
                )))
            }
        };
        a::same_shape(&o, &want)?;
        let mut l = Launch::new("aclnnDiag");
        l.input(&x);
        l.output(&o);
        l.finish(move |v, _| m::diag(&v[0], diagonal, &v[1]))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDiagFlatGetWorkspaceSize(
    self_: *const c_void,
    diagonal: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDiagFlatGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, DIAG)?;
            a::max_dims(&x, 8)?;
            same_dtype(&o, &x)?;
            let n = x.numel() + diagonal.unsigned_abs() as usize;
            a::same_shape(&o, &[n, n])?;
            let mut l = Launch::new("aclnnDiagFlat");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| m::diag_flat(&v[0], diagonal, &v[1]))
        },
    )
}

// ---- Signbit ----

/// Signbit's data types (Atlas A2/A3).
const SIGNBIT: &[DType] = &[
    F32, F16, BF16, I32, U32, I64, U64, I16, U16, I8, U8, Bool, F64,
];

#[no_mangle]
pub unsafe extern "C" fn aclnnSignbitGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSignbitGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, SIGNBIT)?;
            a::max_dims(&x, 8)?;
            a::max_dims(&o, 8)?;
            a::castable(Bool, &o)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnSignbit");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| m::signbit(&v[0], &v[1]))
        },
    )
}

// ---- Gcd ----

/// Gcd's input types and the types its out may have (the ops-math reference's table).
const GCD_IN: &[DType] = &[U8, I8, I16, I32, I64];
const GCD_OUT: &[DType] = &[U8, I8, U16, I16, I32, U32, I64, U64];

fn dims_1_to_8(t: &T) -> NnResult<()> {
    if (1..=8).contains(&t.ndim()) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} must have 1 to 8 dimensions, but its shape is {:?}",
            t.arg,
            t.shape()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGcdGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnGcdGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let y = a::tensor(other, "other")?;
        let o = a::tensor(out, "out")?;
        a::dtype_in(&x, GCD_IN)?;
        a::dtype_in(&y, GCD_IN)?;
        let p = a::promote(x.dtype(), "self", y.dtype(), "other")?;
        a::dtype_of(p, "the promoted type of self and other", GCD_IN)?;
        a::dtype_in(&o, GCD_OUT)?;
        a::castable(p, &o)?;
        for t in [&x, &y, &o] {
            dims_1_to_8(t)?;
        }
        let shape = a::broadcast(&x, &y)?;
        a::same_shape(&o, &shape)?;
        let mut l = Launch::new("aclnnGcd");
        l.input(&x);
        l.input(&y);
        l.output(&o);
        l.finish(move |v, _| m::gcd(&v[0], &v[1], &v[2]))
    })
}

// ---- IsInTensorScalar, IsInScalarTensor ----

/// IsIn's data types (Atlas A2/A3), for the tensor and the scalar.
const ISIN: &[DType] = &[F32, BF16, F16, I32, I64, I16, I8, U8, F64];

fn bool_out(o: &T) -> NnResult<()> {
    if o.dtype() == Bool {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "out has data type {}; it must be BOOL",
            o.dtype()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIsInTensorScalarGetWorkspaceSize(
    element: *const c_void,
    testElement: *const c_void,
    assumeUnique: bool,
    invert: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = assumeUnique; // a speed hint only; the result does not depend on it
    phase1(
        "aclnnIsInTensorScalarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(element, "element")?;
            let s = a::scalar(testElement, "testElement")?;
            let o = a::tensor(out, "out")?;
            a::dtype_of(s.dtype, "testElement", ISIN)?;
            bool_out(&o)?;
            let op = if invert { Binary::Ne } else { Binary::Eq };
            super::arith::tensor_scalar(
                "aclnnIsInTensorScalar",
                x,
                s,
                o,
                ISIN,
                op,
                None,
                super::arith::Typing::Promoted,
                false,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIsInScalarTensorGetWorkspaceSize(
    element: *const c_void,
    testElements: *const c_void,
    assumeUnique: bool,
    invert: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = assumeUnique; // a speed hint only; the result does not depend on it
    phase1(
        "aclnnIsInScalarTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(element, "element")?;
            let t = a::tensor(testElements, "testElements")?;
            let o = a::tensor(out, "out")?;
            a::dtype_of(s.dtype, "element", ISIN)?;
            a::dtype_in(&t, ISIN)?;
            a::max_dims(&t, 8)?;
            bool_out(&o)?;
            if o.numel() != 1 || o.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "out must hold one element (shape [] or [1]), but its shape is {:?}",
                    o.shape()
                )));
            }
            let ct = promote_scalar(t.dtype(), s.dtype, Bool);
            let mut l = Launch::new("aclnnIsInScalarTensor");
            l.input(&t);
            l.output(&o);
            l.finish(move |v, _| m::isin_scalar(&v[0], s, ct, invert, &v[1]))
        },
    )
}

// ---- Addr, InplaceAddr ----

/// Addr's data types (Atlas A2/A3).
const ADDR: &[DType] = &[F32, F16, F64, I8, I16, I32, I64, U8, Bool, BF16];

/// beta / alpha must suit the computation type (PyTorch's rule: no float factor for integer
/// results, no non-bool factor for bool results beyond 0/1 integers).
fn factor(s: Option<Scalar>, arg: &str, ct: DType) -> NnResult<Scalar> {
    let s = s.unwrap_or(Scalar::i64(1));
    let ok = if ct == Bool {
        !s.dtype.is_float()
    } else {
        can_cast(s.dtype, ct)
    };
    if ok {
        Ok(s)
    } else {
        Err(NnError::invalid(format!(
            "{arg} data type {} cannot be used with the computation type {ct}",
            s.dtype
        )))
    }
}

#[allow(clippy::too_many_arguments)]
fn addr(
    api: &'static str,
    x: T,
    v1: *const c_void,
    v2: *const c_void,
    beta: *const c_void,
    alpha: *const c_void,
    o: T,
) -> NnResult<Built> {
    let v1 = a::tensor(v1, "vec1")?;
    let v2 = a::tensor(v2, "vec2")?;
    let be = a::opt_scalar(beta, "betaOptional")?;
    let al = a::opt_scalar(alpha, "alphaOptional")?;
    for t in [&x, &v1, &v2, &o] {
        a::dtype_in(t, ADDR)?;
    }
    for t in [&v1, &v2] {
        if t.ndim() != 1 {
            return Err(NnError::invalid(format!(
                "{} must be 1-D, but its shape is {:?}",
                t.arg,
                t.shape()
            )));
        }
    }
    a::max_dims(&x, 2)?;
    let shape = vec![v1.shape()[0], v2.shape()[0]];
    let bs = npu_emu::ops::view::broadcast_shapes(x.shape(), &shape);
    if bs.as_deref() != Some(&shape[..]) {
        return Err(NnError::invalid(format!(
            "{} shape {:?} does not broadcast to the outer product's shape {shape:?}",
            x.arg,
            x.shape()
        )));
    }
    a::same_shape(&o, &shape)?;
    let p = a::promote(x.dtype(), x.arg, v1.dtype(), "vec1")?;
    let ct = a::promote(p, "the promoted type", v2.dtype(), "vec2")?;
    a::castable(ct, &o)?;
    let be = factor(be, "betaOptional", ct)?;
    let al = factor(al, "alphaOptional", ct)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&v1);
    l.input(&v2);
    l.output(&o);
    l.finish(move |v, _| m::addr(&v[0], &v[1], &v[2], be, al, &v[3], ct))
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnAddrGetWorkspaceSize(
    self_: *const c_void,
    vec1: *const c_void,
    vec2: *const c_void,
    betaOptional: *const c_void,
    alphaOptional: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnAddrGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        addr("aclnnAddr", x, vec1, vec2, betaOptional, alphaOptional, o)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceAddrGetWorkspaceSize(
    selfRef: *mut c_void,
    vec1: *const c_void,
    vec2: *const c_void,
    betaOptional: *const c_void,
    alphaOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceAddrGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            addr(
                "aclnnInplaceAddr",
                x.clone(),
                vec1,
                vec2,
                betaOptional,
                alphaOptional,
                x,
            )
        },
    )
}

// ---- Cdist ----

/// Cdist's data types (Atlas A2/A3).
const CDIST: &[DType] = &[F32, F16, BF16];

#[no_mangle]
pub unsafe extern "C" fn aclnnCdistGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    p: f32,
    compute_mode: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCdistGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&a1, CDIST)?;
            same_dtype(&a2, &a1)?;
            same_dtype(&o, &a1)?;
            for t in [&a1, &a2] {
                if !(2..=8).contains(&t.ndim()) {
                    return Err(NnError::invalid(format!(
                        "{} must have 2 to 8 dimensions, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let (n1, n2) = (a1.ndim(), a2.ndim());
            if a1.shape()[n1 - 1] != a2.shape()[n2 - 1] {
                return Err(NnError::invalid(format!(
                    "x1 {:?} and x2 {:?} must have the same last dimension",
                    a1.shape(),
                    a2.shape()
                )));
            }
            let batch =
                npu_emu::ops::view::broadcast_shapes(&a1.shape()[..n1 - 2], &a2.shape()[..n2 - 2])
                    .ok_or_else(|| {
                        NnError::invalid(format!(
                            "the batch dimensions of x1 {:?} and x2 {:?} cannot broadcast",
                            a1.shape(),
                            a2.shape()
                        ))
                    })?;
            let pv = p as f64;
            if pv.is_nan() || pv < 0.0 {
                return Err(NnError::invalid(format!(
                    "p must be in [0, inf], but it is {pv}"
                )));
            }
            if pv == 2.0 && compute_mode != 2 {
                return Err(NnError::invalid(format!(
                    "compute_mode must be 2 when p is 2.0, but it is {compute_mode}"
                )));
            }
            let want = [&batch[..], &[a1.shape()[n1 - 2], a2.shape()[n2 - 2]]].concat();
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnCdist");
            l.input(&a1);
            l.input(&a2);
            l.output(&o);
            l.finish(move |v, _| m::cdist(&v[0], &v[1], pv, &v[2]))
        },
    )
}

// ---- LeftShift, LeftShifts, RightShift ----

/// The shifts' data types (inputs and out, Atlas A2/A3).
const SHIFT: &[DType] = &[I8, I16, I32, I64, U8, U16, U32, U64];

fn shift_tt(
    api: &'static str,
    x: *const c_void,
    xname: &'static str,
    b: *const c_void,
    out: *mut c_void,
    left: bool,
) -> NnResult<Built> {
    let x = a::tensor(x, xname)?;
    let b = a::tensor(b, "shiftBits")?;
    let o = a::tensor(out, "out")?;
    for t in [&x, &b, &o] {
        a::dtype_in(t, SHIFT)?;
        a::max_dims(t, 8)?;
    }
    let ct = a::promote(x.dtype(), xname, b.dtype(), "shiftBits")?;
    a::dtype_of(ct, "the promoted type", SHIFT)?;
    a::castable(ct, &o)?;
    let shape = a::broadcast(&x, &b)?;
    a::same_shape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&b);
    l.output(&o);
    l.finish(move |v, _| m::shift(&v[0], &v[1], left, ct, &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLeftShiftGetWorkspaceSize(
    self_: *const c_void,
    shiftBits: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLeftShiftGetWorkspaceSize",
        workspaceSize,
        executor,
        || shift_tt("aclnnLeftShift", self_, "self", shiftBits, out, true),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRightShiftGetWorkspaceSize(
    input: *const c_void,
    shiftBits: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRightShiftGetWorkspaceSize",
        workspaceSize,
        executor,
        || shift_tt("aclnnRightShift", input, "input", shiftBits, out, false),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLeftShiftsGetWorkspaceSize(
    self_: *const c_void,
    shiftBits: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLeftShiftsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let s = a::scalar(shiftBits, "shiftBits")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, SHIFT)?;
            a::dtype_of(s.dtype, "shiftBits", SHIFT)?;
            a::dtype_in(&o, SHIFT)?;
            a::max_dims(&x, 8)?;
            let ct = promote_scalar(x.dtype(), s.dtype, o.dtype());
            a::castable(ct, &o)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnLeftShifts");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                let mut buf = [0u64; 1];
                let sv = npu_emu::ops::math::scalar_view(s, DType::I64, &mut buf);
                m::shift(&v[0], &sv, true, ct, &v[1])
            })
        },
    )
}

crate::phase2!(aclnnLeftShift, aclnnLeftShifts, aclnnRightShift);

// ---- TriangularSolve ----

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnTriangularSolveGetWorkspaceSize(
    self_: *const c_void,
    A: *const c_void,
    upper: bool,
    transpose: bool,
    unitriangular: bool,
    xOut: *mut c_void,
    mOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTriangularSolveGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let b = a::tensor(self_, "self")?;
            let am = a::tensor(A, "A")?;
            let x = a::tensor(xOut, "xOut")?;
            let mo = a::tensor(mOut, "mOut")?;
            a::dtype_in(&b, &[F32, F64])?;
            for t in [&am, &x, &mo] {
                same_dtype(t, &b)?;
            }
            if unitriangular && b.dtype() != F32 {
                return Err(NnError::invalid(format!(
                    "with unitriangular the data type must be FLOAT, but self is {}",
                    b.dtype()
                )));
            }
            for t in [&b, &am] {
                if !(2..=8).contains(&t.ndim()) {
                    return Err(NnError::invalid(format!(
                        "{} must have 2 to 8 dimensions, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let (nb, na) = (b.ndim(), am.ndim());
            let m = am.shape()[na - 1];
            if am.shape()[na - 2] != m {
                return Err(NnError::invalid(format!(
                    "A must be a batch of square matrices, but its shape is {:?}",
                    am.shape()
                )));
            }
            if b.shape()[nb - 2] != m {
                return Err(NnError::invalid(format!(
                    "self {:?} must have A's {m} rows (A {:?})",
                    b.shape(),
                    am.shape()
                )));
            }
            let batch =
                npu_emu::ops::view::broadcast_shapes(&b.shape()[..nb - 2], &am.shape()[..na - 2])
                    .ok_or_else(|| {
                    NnError::invalid(format!(
                        "the batch dimensions of self {:?} and A {:?} cannot broadcast",
                        b.shape(),
                        am.shape()
                    ))
                })?;
            let n = b.shape()[nb - 1];
            a::same_shape(&x, &[&batch[..], &[m, n]].concat())?;
            a::same_shape(&mo, &[&batch[..], &[m, m]].concat())?;
            let mut l = Launch::new("aclnnTriangularSolve");
            l.input(&b);
            l.input(&am);
            l.output(&x);
            l.output(&mo);
            l.finish(move |v, _| {
                m::triangular_solve(&v[0], &v[1], upper, transpose, unitriangular, &v[2], &v[3])
            })
        },
    )
}

crate::phase2!(aclnnTriangularSolve);

// ---- MaxUnpool2d, MaxUnpool3d ----

/// MaxUnpool's data types (Atlas A2/A3) and its index types.
const UNPOOL: &[DType] = &[F32, F16, I16, I32, I64, I8, U8, F64];

#[allow(clippy::too_many_arguments)]
fn max_unpool(
    api: &'static str,
    x: *const c_void,
    indices: *const c_void,
    output_size: *const c_void,
    spatial: Option<(*const c_void, *const c_void)>,
    out: *mut c_void,
    outname: &'static str,
    k: usize,
) -> NnResult<Built> {
    let x = a::tensor(x, "self")?;
    let idx = a::tensor(indices, "indices")?;
    let osz = a::int_array(output_size, "outputSize")?;
    let extra = match spatial {
        Some((st, pd)) => Some((a::int_array(st, "stride")?, a::int_array(pd, "padding")?)),
        None => None,
    };
    let o = a::tensor(out, outname)?;
    a::dtype_in(&x, UNPOOL)?;
    same_dtype(&o, &x)?;
    a::dtype_in(&idx, a::INDEX)?;
    if x.ndim() != k + 1 && x.ndim() != k + 2 {
        return Err(NnError::invalid(format!(
            "self must be {}-D or {}-D, but its shape is {:?}",
            k + 1,
            k + 2,
            x.shape()
        )));
    }
    a::same_shape(&idx, x.shape())?;
    let nd = x.ndim();
    if x.shape()[nd - k..].contains(&0) {
        return Err(NnError::invalid(format!(
            "self's spatial dimensions must not be 0, but its shape is {:?}",
            x.shape()
        )));
    }
    if osz.len() != k || osz.iter().any(|&v| v <= 0) {
        return Err(NnError::invalid(format!(
            "outputSize must hold {k} positive sizes, but it is {osz:?}"
        )));
    }
    if let Some((st, pd)) = &extra {
        if st.len() != k || st.iter().any(|&v| v <= 0) {
            return Err(NnError::invalid(format!(
                "stride must hold {k} positive values, but it is {st:?}"
            )));
        }
        if pd.len() != k || pd.iter().any(|&v| v < 0) {
            return Err(NnError::invalid(format!(
                "padding must hold {k} non-negative values, but it is {pd:?}"
            )));
        }
    }
    let in_plane: usize = x.shape()[nd - k..].iter().product();
    let out_plane: i64 = osz.iter().product();
    if (out_plane as usize) < in_plane {
        return Err(NnError::invalid(format!(
            "outputSize {osz:?} holds {out_plane} elements, fewer than self's {in_plane} per plane"
        )));
    }
    let want: Vec<usize> = x.shape()[..nd - k]
        .iter()
        .copied()
        .chain(osz.iter().map(|&v| v as usize))
        .collect();
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&idx);
    l.output(&o);
    l.finish(move |v, _| m::max_unpool(&v[0], &v[1], k, &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMaxUnpool2dGetWorkspaceSize(
    self_: *const c_void,
    indices: *const c_void,
    outputSize: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaxUnpool2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            max_unpool(
                "aclnnMaxUnpool2d",
                self_,
                indices,
                outputSize,
                None,
                out,
                "out",
                2,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnMaxUnpool3dGetWorkspaceSize(
    self_: *const c_void,
    indices: *const c_void,
    outputSize: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    outRef: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaxUnpool3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            max_unpool(
                "aclnnMaxUnpool3d",
                self_,
                indices,
                outputSize,
                Some((stride, padding)),
                outRef,
                "outRef",
                3,
            )
        },
    )
}

crate::phase2!(aclnnMaxUnpool2d, aclnnMaxUnpool3d);

// ---- Svd ----

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnSvdGetWorkspaceSize(
    input: *const c_void,
    fullMatrices: bool,
    computeUV: bool,
    sigma: *mut c_void,
    u: *mut c_void,
    v: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnSvdGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(input, "input")?;
        let s = a::tensor(sigma, "sigma")?;
        let ut = a::tensor(u, "u")?;
        let vt = a::tensor(v, "v")?;
        a::dtype_in(&x, &[F32, F64])?;
        for t in [&s, &ut, &vt] {
            same_dtype(t, &x)?;
        }
        let nd = x.ndim();
        if !(2..=8).contains(&nd) {
            return Err(NnError::invalid(format!(
                "input must have 2 to 8 dimensions, but its shape is {:?}",
                x.shape()
            )));
        }
        if x.numel() == 0 {
            return Err(NnError::invalid(format!(
                "input must not be empty, but its shape is {:?}",
                x.shape()
            )));
        }
        let (mm, nn) = (x.shape()[nd - 2], x.shape()[nd - 1]);
        let k = mm.min(nn);
        let batch = &x.shape()[..nd - 2];
        let shape = |last: &[usize]| [batch, last].concat();
        a::same_shape(&s, &shape(&[k]))?;
        let (uc, vc) = if fullMatrices { (mm, nn) } else { (k, k) };
        let mut l = Launch::new("aclnnSvd");
        l.input(&x);
        l.output(&s);
        if computeUV {
            a::same_shape(&ut, &shape(&[mm, uc]))?;
            a::same_shape(&vt, &shape(&[nn, vc]))?;
            l.output(&ut);
            l.output(&vt);
            l.finish(move |v, _| m::svd(&v[0], fullMatrices, &v[1], Some((&v[2], &v[3]))))
        } else {
            l.finish(move |v, _| m::svd(&v[0], fullMatrices, &v[1], None))
        }
    })
}

crate::phase2!(aclnnSvd);

// ---- GatherNd ----

/// GatherNd's data types (Atlas A2/A3).
const GATHER_ND: &[DType] = &[I64, I32, I8, U8, Bool, F32, F16, BF16];

#[no_mangle]
pub unsafe extern "C" fn aclnnGatherNdGetWorkspaceSize(
    self_: *const c_void,
    indices: *const c_void,
    negativeIndexSupport: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGatherNdGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let idx = a::tensor(indices, "indices")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, GATHER_ND)?;
            same_dtype(&o, &x)?;
            a::dtype_in(&idx, a::INDEX)?;
            if !(1..=8).contains(&x.ndim()) {
                return Err(NnError::invalid(format!(
                    "self must have 1 to 8 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            if idx.ndim() < 1 {
                return Err(NnError::invalid("indices must have at least 1 dimension"));
            }
            let q = idx.ndim();
            let c = idx.shape()[q - 1];
            if c < 1 || c > x.ndim() {
                return Err(NnError::invalid(format!(
                    "the last dimension of indices {:?} must be in [1, {}] (self {:?})",
                    idx.shape(),
                    x.ndim(),
                    x.shape()
                )));
            }
            let want = [&idx.shape()[..q - 1], &x.shape()[c..]].concat();
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnGatherNd");
            l.input(&x);
            l.input(&idx);
            l.output(&o);
            l.finish(move |v, _| m::gather_nd(&v[0], &v[1], negativeIndexSupport, &v[2]))
        },
    )
}

crate::phase2!(aclnnGatherNd);

// ---- ScatterNd ----

/// ScatterNd's data types (Atlas A2/A3).
const SCATTER_ND: &[DType] = &[F16, F32, Bool, BF16];

#[no_mangle]
pub unsafe extern "C" fn aclnnScatterNdGetWorkspaceSize(
    data: *const c_void,
    indices: *const c_void,
    updates: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterNdGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let d = a::tensor(data, "data")?;
            let idx = a::tensor(indices, "indices")?;
            let up = a::tensor(updates, "updates")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&d, SCATTER_ND)?;
            same_dtype(&up, &d)?;
            same_dtype(&o, &d)?;
            a::dtype_in(&idx, a::INDEX)?;
            for t in [&d, &idx, &up] {
                if !(1..=8).contains(&t.ndim()) {
                    return Err(NnError::invalid(format!(
                        "{} must have 1 to 8 dimensions, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let q = idx.ndim();
            let c = idx.shape()[q - 1];
            if c > d.ndim() {
                return Err(NnError::invalid(format!(
                    "the last dimension of indices {:?} must be at most data's rank {}",
                    idx.shape(),
                    d.ndim()
                )));
            }
            let want = [&idx.shape()[..q - 1], &d.shape()[c..]].concat();
            a::same_shape(&up, &want)?;
            a::same_shape(&o, d.shape())?;
            let mut l = Launch::new("aclnnScatterNd");
            l.input(&d);
            l.input(&idx);
            l.input(&up);
            l.output(&o);
            l.finish(move |v, _| m::scatter_nd(&v[0], &v[1], &v[2], &v[3]))
        },
    )
}

crate::phase2!(aclnnScatterNd);

// ---- Bucketize ----

/// Bucketize's data types (self and boundaries).
const BUCKETIZE: &[DType] = &[F32, F16, BF16, I8, I16, I32, I64, U8];

#[no_mangle]
pub unsafe extern "C" fn aclnnBucketizeGetWorkspaceSize(
    self_: *const c_void,
    boundaries: *const c_void,
    outInt32: bool,
    right: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBucketizeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let b = a::tensor(boundaries, "boundaries")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, BUCKETIZE)?;
            a::dtype_in(&b, BUCKETIZE)?;
            a::max_dims(&x, 8)?;
            let ct = a::promote(x.dtype(), "self", b.dtype(), "boundaries")?;
            if b.ndim() != 1 || b.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "boundaries must be 1-D and not empty, but its shape is {:?}",
                    b.shape()
                )));
            }
            let want = if outInt32 { I32 } else { I64 };
            if o.dtype() != want {
                return Err(NnError::invalid(format!(
                    "out has data type {}, but outInt32 {outInt32} asks for {want}",
                    o.dtype()
                )));
            }
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnBucketize");
            l.input(&x);
            l.input(&b);
            l.output(&o);
            l.finish(move |v, _| m::bucketize(&v[0], &v[1], right, ct, &v[2]))
        },
    )
}

crate::phase2!(aclnnBucketize);

crate::phase2!(
    aclnnDiag,
    aclnnDiagFlat,
    aclnnSignbit,
    aclnnGcd,
    aclnnIsInTensorScalar,
    aclnnIsInScalarTensor,
    aclnnAddr,
    aclnnInplaceAddr,
    aclnnCdist
);
