//! The Foreach family (`aclnn_foreach_*.h`): one elementwise operator applied to every
//! tensor of a list, as PyTorch's multi-tensor optimizers (SGD, Adam, AdamW with
//! `foreach=True`) call them. Both generations CANN ships are here:
//! - V1 (generated from the operator definitions): scalars and `alpha` are device tensors
//!   of one element (read when the task runs), e.g. `aclnnForeachAddScalar(x, scalar, out)`;
//! - V2: scalars are host `aclScalar`s, e.g. `aclnnForeachAddScalarV2`;
//! - `…ScalarList` forms take one scalar per tensor (an `aclScalarList`, or for
//!   Addcmul/Addcdiv a device tensor of n elements).
//!
//! Every list must have the same length; tensors at the same position must have the same
//! shape (no broadcasting) and a floating or integer type; `out` may be the input list (the
//! in-place use).

use super::args::{self as a, T};
use super::arith::promote_scalar;
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{self, scalar_view, Binary, Ternary, Unary};
use npu_emu::ops::reduce::{self, Reduce};
use npu_emu::ops::{elem, Scalar, View};
use std::ffi::c_void;

use DType::*;
const TYPES: &[DType] = &[F32, F16, BF16, F64, I32, I64, I16, I8, U8];

/// Where a scalar comes from.
#[derive(Clone)]
enum Sc {
    None,
    /// one host scalar for all
    Host(Scalar),
    /// one per tensor
    List(Vec<Scalar>),
    /// input view index of a device tensor holding one value (V1) or n values (lists)
    Dev(usize, bool),
}

fn read_dev(v: &View, i: usize) -> Scalar {
    let es = v.esize() as isize;
    let st = if v.ndim() == 0 {
        0
    } else {
        *v.strides.last().unwrap()
    };
    let p = v.ptr.wrapping_offset(i as isize * st * es);
    if v.dtype.is_float() {
        // SAFETY: element i of a checked view (its size was checked in phase 1).
        Scalar::f64(unsafe { elem::read_f64(v.dtype, p) })
    } else {
        // SAFETY: as above.
        Scalar::i64(unsafe { elem::read_i64(v.dtype, p) })
    }
}

impl Sc {
    fn get(&self, views: &[View], i: usize) -> Scalar {
        match self {
            Sc::None => Scalar::i64(1),
            Sc::Host(s) => *s,
            Sc::List(v) => v[i],
            Sc::Dev(k, per) => read_dev(&views[*k], if *per { i } else { 0 }),
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Unary(Unary),
    /// x1 op x2 (alpha from the scalar for Add/Sub)
    List(Binary),
    /// x op s
    Scalar(Binary),
    /// s op x (PowScalarAndTensor)
    ScalarFirst(Binary),
    /// x1 + s * x2 * x3 / x1 + s * x2 / x3
    Addc(bool),
    /// lerp(x1, x2, w) with a scalar or list weight
    Lerp(bool),
    Norm,
    Zero,
    Copy,
}

fn with_alpha(op: Binary, s: Scalar) -> Binary {
    match op {
        Binary::Add(_) => Binary::Add(s),
        Binary::Sub(_) => Binary::Sub(s),
        o => o,
    }
}

/// Build a Foreach executor: `lists` are the input lists (x1, x2, x3 as the kind needs),
/// `out` the output list.
fn build(
    api: &'static str,
    kind: Kind,
    lists: Vec<Vec<T>>,
    out: Vec<T>,
    sc: Sc,
    sc_tensor: Option<T>,
) -> NnResult<Built> {
    let n = lists.first().map_or(out.len(), |l| l.len());
    for (k, l) in lists.iter().enumerate() {
        if l.len() != n {
            return Err(NnError::invalid(format!(
                "input list {} has {} tensors, the first has {n}",
                k + 1,
                l.len()
            )));
        }
    }
    if out.len() != n && !matches!(kind, Kind::Zero) {
        return Err(NnError::invalid(format!(
            "out has {} tensors, the inputs have {n}",
            out.len()
        )));
    }
    if let Sc::List(v) = &sc {
        if v.len() != n {
            return Err(NnError::invalid(format!(
                "scalars has {} values for {n} tensors",
                v.len()
            )));
        }
    }
    if let (Some(t), Sc::Dev(_, per)) = (&sc_tensor, &sc) {
        let want = if *per { n } else { 1 };
        if t.numel() != want {
            return Err(NnError::invalid(format!(
                "{} has {} elements; {want} expected",
                t.arg,
                t.numel()
            )));
        }
    }
    // per-position checks and compute types
    let mut cts = Vec::with_capacity(n);
    for i in 0..n {
        let first = lists.first().map(|l| &l[i]).unwrap_or(&out[i]);
        let mut p = first.dtype();
        for l in &lists {
            a::dtype_in(&l[i], TYPES)?;
            if l[i].shape() != first.shape() {
                return Err(NnError::invalid(format!(
                    "{}[{i}] has shape {:?}, {}[{i}] {:?}: tensors at one position must have the same shape",
                    l[i].arg,
                    l[i].shape(),
                    first.arg,
                    first.shape()
                )));
            }
            p = a::promote(p, first.arg, l[i].dtype(), l[i].arg)?;
        }
        let o = &out[i.min(out.len().saturating_sub(1))];
        if let Sc::Host(s) = &sc {
            if matches!(kind, Kind::Scalar(_) | Kind::ScalarFirst(_)) {
                p = promote_scalar(p, s.dtype, o.dtype());
            }
        }
        let ct = match kind {
            Kind::Unary(u) if u.float_only() && !p.is_float() => F32,
            Kind::Addc(true) | Kind::Lerp(_) | Kind::Norm if !p.is_float() => F32,
            Kind::List(Binary::Div) | Kind::Scalar(Binary::Div) if !p.is_float() => F32,
            _ => p,
        };
        if !out.is_empty() {
            a::dtype_in(o, TYPES)?;
            a::castable(ct, o)?;
            if matches!(kind, Kind::Norm) {
                if o.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "out[{i}] must be 0-d (a norm), but its shape is {:?}",
                        o.shape()
                    )));
                }
            } else {
                a::same_shape(o, first.shape())?;
            }
        }
        cts.push(ct);
    }
    let mut l = Launch::new(api);
    let nl = lists.len();
    for lst in &lists {
        l.inputs(lst);
    }
    let sc = match (sc, &sc_tensor) {
        (Sc::Dev(_, per), Some(t)) => Sc::Dev(l.input(t), per),
        (s, _) => s,
    };
    l.outputs(&out);
    let base_out = nl * n + sc_tensor.is_some() as usize;
    l.finish(move |v, _| {
        for i in 0..n {
            let ct = cts[i];
            let x = |k: usize| &v[k * n + i];
            let o = &v[base_out + i.min(v.len() - base_out - 1)];
            let s = sc.get(v, i);
            match kind {
                Kind::Unary(u) => math::unary(u, x(0), o, ct)?,
                Kind::List(op) => math::binary(with_alpha(op, s), x(0), x(1), o, ct)?,
                Kind::Scalar(op) => {
                    let mut buf = [0u64; 1];
                    let sv = scalar_view(s, ct, &mut buf);
                    math::binary(op, x(0), &sv, o, ct)?
                }
                Kind::ScalarFirst(op) => {
                    let mut buf = [0u64; 1];
                    let sv = scalar_view(s, ct, &mut buf);
                    math::binary(op, &sv, x(0), o, ct)?
                }
                Kind::Addc(div) => {
                    let op = if div {
                        Ternary::Addcdiv(s)
                    } else {
                        Ternary::Addcmul(s)
                    };
                    math::ternary(op, x(0), x(1), x(2), o, ct)?
                }
                Kind::Lerp(list) => {
                    if list {
                        math::ternary(Ternary::Lerp, x(0), x(1), x(2), o, ct)?
                    } else {
                        math::lerp_scalar(x(0), x(1), s.rounded_to(ct).to_f64(), o, ct)?
                    }
                }
                Kind::Norm => {
                    let dims: Vec<usize> = (0..x(0).ndim()).collect();
                    let mut ov = o.clone();
                    ov.shape.clear();
                    ov.strides.clear();
                    reduce::reduce(Reduce::Norm(s.to_f64()), x(0), &dims, &ov, false)?
                }
                Kind::Zero => npu_emu::ops::iter::fill::<i64>(&v[i], 0)?,
                Kind::Copy => npu_emu::ops::iter::copy(x(0), o)?,
            }
        }
        Ok(())
    })
}

fn list(h: *const c_void, arg: &'static str) -> NnResult<Vec<T>> {
    a::tensor_list(h, arg)
}

// ---- exports ----

macro_rules! unary {
    ($($get:ident $api:literal $op:expr;)+) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $get(x: *const c_void, out: *const c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                build($api, Kind::Unary($op), vec![list(x, "x")?], list(out, "out")?, Sc::None, None)
            })
        }
    )+};
}
unary! {
    aclnnForeachAbsGetWorkspaceSize "aclnnForeachAbs" Unary::Abs;
    aclnnForeachAcosGetWorkspaceSize "aclnnForeachAcos" Unary::Acos;
    aclnnForeachAsinGetWorkspaceSize "aclnnForeachAsin" Unary::Asin;
    aclnnForeachAtanGetWorkspaceSize "aclnnForeachAtan" Unary::Atan;
    aclnnForeachCosGetWorkspaceSize "aclnnForeachCos" Unary::Cos;
    aclnnForeachCoshGetWorkspaceSize "aclnnForeachCosh" Unary::Cosh;
    aclnnForeachErfGetWorkspaceSize "aclnnForeachErf" Unary::Erf;
    aclnnForeachErfcGetWorkspaceSize "aclnnForeachErfc" Unary::Erfc;
    aclnnForeachExpGetWorkspaceSize "aclnnForeachExp" Unary::Exp;
    aclnnForeachExpm1GetWorkspaceSize "aclnnForeachExpm1" Unary::Expm1;
    aclnnForeachLogGetWorkspaceSize "aclnnForeachLog" Unary::Log;
    aclnnForeachLog10GetWorkspaceSize "aclnnForeachLog10" Unary::Log10;
    aclnnForeachLog1pGetWorkspaceSize "aclnnForeachLog1p" Unary::Log1p;
    aclnnForeachLog2GetWorkspaceSize "aclnnForeachLog2" Unary::Log2;
    aclnnForeachNegGetWorkspaceSize "aclnnForeachNeg" Unary::Neg;
    aclnnForeachReciprocalGetWorkspaceSize "aclnnForeachReciprocal" Unary::Reciprocal;
    aclnnForeachSigmoidGetWorkspaceSize "aclnnForeachSigmoid" Unary::Sigmoid;
    aclnnForeachSignGetWorkspaceSize "aclnnForeachSign" Unary::Sign;
    aclnnForeachSinGetWorkspaceSize "aclnnForeachSin" Unary::Sin;
    aclnnForeachSinhGetWorkspaceSize "aclnnForeachSinh" Unary::Sinh;
    aclnnForeachSqrtGetWorkspaceSize "aclnnForeachSqrt" Unary::Sqrt;
    aclnnForeachTanGetWorkspaceSize "aclnnForeachTan" Unary::Tan;
    aclnnForeachTanhGetWorkspaceSize "aclnnForeachTanh" Unary::Tanh;
}

macro_rules! list_list {
    ($($get:ident $api:literal $op:expr;)+) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $get(x1: *const c_void, x2: *const c_void, out: *const c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                build($api, Kind::List($op), vec![list(x1, "x1")?, list(x2, "x2")?], list(out, "out")?, Sc::None, None)
            })
        }
    )+};
}
list_list! {
    aclnnForeachMulListGetWorkspaceSize "aclnnForeachMulList" Binary::Mul;
    aclnnForeachDivListGetWorkspaceSize "aclnnForeachDivList" Binary::Div;
    aclnnForeachMaximumListGetWorkspaceSize "aclnnForeachMaximumList" Binary::Maximum;
    aclnnForeachMinimumListGetWorkspaceSize "aclnnForeachMinimumList" Binary::Minimum;
    aclnnForeachPowListGetWorkspaceSize "aclnnForeachPowList" Binary::Pow;
}

macro_rules! list_alpha {
    ($($get:ident $api:literal $op:expr, $dev:expr;)+) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $get(x1: *const c_void, x2: *const c_void, alpha: *const c_void, out: *const c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let (l1, l2, o) = (list(x1, "x1")?, list(x2, "x2")?, list(out, "out")?);
                if $dev {
                    let t = a::tensor(alpha, "alpha")?;
                    build($api, Kind::List($op), vec![l1, l2], o, Sc::Dev(0, false), Some(t))
                } else {
                    let s = a::scalar(alpha, "alpha")?;
                    build($api, Kind::List($op), vec![l1, l2], o, Sc::Host(s), None)
                }
            })
        }
    )+};
}
list_alpha! {
    aclnnForeachAddListGetWorkspaceSize "aclnnForeachAddList" Binary::Add(Scalar::i64(1)), true;
    aclnnForeachAddListV2GetWorkspaceSize "aclnnForeachAddListV2" Binary::Add(Scalar::i64(1)), false;
    aclnnForeachSubListGetWorkspaceSize "aclnnForeachSubList" Binary::Sub(Scalar::i64(1)), true;
    aclnnForeachSubListV2GetWorkspaceSize "aclnnForeachSubListV2" Binary::Sub(Scalar::i64(1)), false;
}

/// Scalar forms: `$kind` is 0 (device tensor, V1), 1 (host scalar, V2), 2 (scalar list).
macro_rules! list_scalar {
    ($($get:ident $api:literal $op:expr, $kind:expr;)+) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $get(x: *const c_void, scalar: *const c_void, out: *const c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let (lx, o) = (list(x, "x")?, list(out, "out")?);
                match $kind {
                    0 => {
                        let t = a::tensor(scalar, "scalar")?;
                        build($api, Kind::Scalar($op), vec![lx], o, Sc::Dev(0, false), Some(t))
                    }
                    1 => build($api, Kind::Scalar($op), vec![lx], o, Sc::Host(a::scalar(scalar, "scalar")?), None),
                    _ => build($api, Kind::Scalar($op), vec![lx], o, Sc::List(a::scalar_list(scalar, "scalars")?), None),
                }
            })
        }
    )+};
}
list_scalar! {
    aclnnForeachAddScalarGetWorkspaceSize "aclnnForeachAddScalar" Binary::Add(Scalar::i64(1)), 0;
    aclnnForeachAddScalarV2GetWorkspaceSize "aclnnForeachAddScalarV2" Binary::Add(Scalar::i64(1)), 1;
    aclnnForeachAddScalarListGetWorkspaceSize "aclnnForeachAddScalarList" Binary::Add(Scalar::i64(1)), 2;
    aclnnForeachSubScalarGetWorkspaceSize "aclnnForeachSubScalar" Binary::Sub(Scalar::i64(1)), 0;
    aclnnForeachSubScalarV2GetWorkspaceSize "aclnnForeachSubScalarV2" Binary::Sub(Scalar::i64(1)), 1;
    aclnnForeachSubScalarListGetWorkspaceSize "aclnnForeachSubScalarList" Binary::Sub(Scalar::i64(1)), 2;
    aclnnForeachMulScalarGetWorkspaceSize "aclnnForeachMulScalar" Binary::Mul, 0;
    aclnnForeachMulScalarV2GetWorkspaceSize "aclnnForeachMulScalarV2" Binary::Mul, 1;
    aclnnForeachMulScalarListGetWorkspaceSize "aclnnForeachMulScalarList" Binary::Mul, 2;
    aclnnForeachDivScalarGetWorkspaceSize "aclnnForeachDivScalar" Binary::Div, 0;
    aclnnForeachDivScalarV2GetWorkspaceSize "aclnnForeachDivScalarV2" Binary::Div, 1;
    aclnnForeachDivScalarListGetWorkspaceSize "aclnnForeachDivScalarList" Binary::Div, 2;
    aclnnForeachMaximumScalarGetWorkspaceSize "aclnnForeachMaximumScalar" Binary::Maximum, 0;
    aclnnForeachMaximumScalarV2GetWorkspaceSize "aclnnForeachMaximumScalarV2" Binary::Maximum, 1;
    aclnnForeachMaximumScalarListGetWorkspaceSize "aclnnForeachMaximumScalarList" Binary::Maximum, 2;
    aclnnForeachMinimumScalarGetWorkspaceSize "aclnnForeachMinimumScalar" Binary::Minimum, 0;
    aclnnForeachMinimumScalarV2GetWorkspaceSize "aclnnForeachMinimumScalarV2" Binary::Minimum, 1;
    aclnnForeachMinimumScalarListGetWorkspaceSize "aclnnForeachMinimumScalarList" Binary::Minimum, 2;
    aclnnForeachPowScalarGetWorkspaceSize "aclnnForeachPowScalar" Binary::Pow, 0;
    aclnnForeachPowScalarV2GetWorkspaceSize "aclnnForeachPowScalarV2" Binary::Pow, 1;
    aclnnForeachPowScalarListGetWorkspaceSize "aclnnForeachPowScalarList" Binary::Pow, 2;
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachPowScalarAndTensorGetWorkspaceSize(
    scalar: *const c_void,
    x: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachPowScalarAndTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(scalar, "scalar")?;
            build(
                "aclnnForeachPowScalarAndTensor",
                Kind::ScalarFirst(Binary::Pow),
                vec![list(x, "x")?],
                list(out, "out")?,
                Sc::Host(s),
                None,
            )
        },
    )
}

/// Addcmul/Addcdiv: `$kind` 0 (device scalar, V1), 1 (host scalar, V2), 2 (device tensor
/// of one scalar per position: the `…ScalarList` and `…List` forms).
macro_rules! addc {
    ($($get:ident $api:literal $div:expr, $kind:expr;)+) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $get(x1: *const c_void, x2: *const c_void, x3: *const c_void, scalar: *const c_void, out: *const c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let ls = vec![list(x1, "x1")?, list(x2, "x2")?, list(x3, "x3")?];
                let o = list(out, "out")?;
                match $kind {
                    1 => build($api, Kind::Addc($div), ls, o, Sc::Host(a::scalar(scalar, "scalar")?), None),
                    k => {
                        let t = a::tensor(scalar, if k == 0 { "scalar" } else { "scalars" })?;
                        build($api, Kind::Addc($div), ls, o, Sc::Dev(0, k == 2), Some(t))
                    }
                }
            })
        }
    )+};
}
addc! {
    aclnnForeachAddcmulScalarGetWorkspaceSize "aclnnForeachAddcmulScalar" false, 0;
    aclnnForeachAddcmulScalarV2GetWorkspaceSize "aclnnForeachAddcmulScalarV2" false, 1;
    aclnnForeachAddcmulScalarListGetWorkspaceSize "aclnnForeachAddcmulScalarList" false, 2;
    aclnnForeachAddcmulListGetWorkspaceSize "aclnnForeachAddcmulList" false, 2;
    aclnnForeachAddcdivScalarGetWorkspaceSize "aclnnForeachAddcdivScalar" true, 0;
    aclnnForeachAddcdivScalarV2GetWorkspaceSize "aclnnForeachAddcdivScalarV2" true, 1;
    aclnnForeachAddcdivScalarListGetWorkspaceSize "aclnnForeachAddcdivScalarList" true, 2;
    aclnnForeachAddcdivListGetWorkspaceSize "aclnnForeachAddcdivList" true, 2;
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachLerpScalarGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    weight: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachLerpScalarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let w = a::scalar(weight, "weight")?;
            build(
                "aclnnForeachLerpScalar",
                Kind::Lerp(false),
                vec![list(x1, "x1")?, list(x2, "x2")?],
                list(out, "out")?,
                Sc::Host(w),
                None,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachLerpListGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    weight: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachLerpListGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            build(
                "aclnnForeachLerpList",
                Kind::Lerp(true),
                vec![list(x1, "x1")?, list(x2, "x2")?, list(weight, "weight")?],
                list(out, "out")?,
                Sc::None,
                None,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachNormGetWorkspaceSize(
    x: *const c_void,
    scalar: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(scalar, "scalar")?;
            build(
                "aclnnForeachNorm",
                Kind::Norm,
                vec![list(x, "x")?],
                list(out, "out")?,
                Sc::Host(s),
                None,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachZeroInplaceGetWorkspaceSize(
    x: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachZeroInplaceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let l = list(x, "x")?;
            for t in &l {
                a::dtype_in(t, TYPES)?;
            }
            build(
                "aclnnForeachZeroInplace",
                Kind::Zero,
                vec![],
                l,
                Sc::None,
                None,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnForeachCopyGetWorkspaceSize(
    x: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachCopyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            build(
                "aclnnForeachCopy",
                Kind::Copy,
                vec![list(x, "x")?],
                list(out, "out")?,
                Sc::None,
                None,
            )
        },
    )
}

crate::phase2!(
    aclnnForeachAbs,
    aclnnForeachAcos,
    aclnnForeachAsin,
    aclnnForeachAtan,
    aclnnForeachCos,
    aclnnForeachCosh,
    aclnnForeachErf,
    aclnnForeachErfc,
    aclnnForeachExp,
    aclnnForeachExpm1,
    aclnnForeachLog,
    aclnnForeachLog10,
    aclnnForeachLog1p,
    aclnnForeachLog2,
    aclnnForeachNeg,
    aclnnForeachReciprocal,
    aclnnForeachSigmoid,
    aclnnForeachSign,
    aclnnForeachSin,
    aclnnForeachSinh,
    aclnnForeachSqrt,
    aclnnForeachTan,
    aclnnForeachTanh,
    aclnnForeachMulList,
    aclnnForeachDivList,
    aclnnForeachMaximumList,
    aclnnForeachMinimumList,
    aclnnForeachPowList,
    aclnnForeachAddList,
    aclnnForeachAddListV2,
    aclnnForeachSubList,
    aclnnForeachSubListV2,
    aclnnForeachAddScalar,
    aclnnForeachAddScalarV2,
    aclnnForeachAddScalarList,
    aclnnForeachSubScalar,
    aclnnForeachSubScalarV2,
    aclnnForeachSubScalarList,
    aclnnForeachMulScalar,
    aclnnForeachMulScalarV2,
    aclnnForeachMulScalarList,
    aclnnForeachDivScalar,
    aclnnForeachDivScalarV2,
    aclnnForeachDivScalarList,
    aclnnForeachMaximumScalar,
    aclnnForeachMaximumScalarV2,
    aclnnForeachMaximumScalarList,
    aclnnForeachMinimumScalar,
    aclnnForeachMinimumScalarV2,
    aclnnForeachMinimumScalarList,
    aclnnForeachPowScalar,
    aclnnForeachPowScalarV2,
    aclnnForeachPowScalarList,
    aclnnForeachPowScalarAndTensor,
    aclnnForeachAddcmulScalar,
    aclnnForeachAddcmulScalarV2,
    aclnnForeachAddcmulScalarList,
    aclnnForeachAddcmulList,
    aclnnForeachAddcdivScalar,
    aclnnForeachAddcdivScalarV2,
    aclnnForeachAddcdivScalarList,
    aclnnForeachAddcdivList,
    aclnnForeachLerpScalar,
    aclnnForeachLerpList,
    aclnnForeachNorm,
    aclnnForeachZeroInplace,
    aclnnForeachCopy
);
