//! Arithmetic: `aclnn_add.h`, `aclnn_sub.h`, `aclnn_rsub.h`, `aclnn_mul.h`, `aclnn_div.h`
//! (true division and the `mode` forms: 0 none, 1 trunc, 2 floor), `aclnn_maximum.h`,
//! `aclnn_minimum.h`, `aclnn_pow.h`, `aclnn_pow_tensor_tensor.h`, `aclnn_remainder.h`
//! (Python's remainder: the sign of the divisor), `aclnn_floor_divide.h`, `aclnn_atan2.h`, `aclnn_x_log_y_*.h` (xlogy).
//!
//! Types (the reference's rules): a tensor pair computes in `PromoteType(self, other)`; a
//! tensor and a scalar compute in the tensor's type when it is floating, else in
//! `PromoteType(self, scalar)` when the scalar is floating or the tensor bool, else in the
//! tensor's type (a double scalar with a float output computes in float). True division
//! of integers computes in float. `alpha` must be castable to the computation type; the
//! result must be castable to `out` (no float to integer, nothing but bool to bool).

use super::args::{self as a, ALL_NUM, T};
use super::complex as cx;
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::{can_cast, DType};
use npu_emu::ops::math::{self, scalar_view, Binary};
use npu_emu::ops::Scalar;
use std::ffi::c_void;

const MAX_DIMS: usize = 8;

/// How a binary operator types its computation from the promoted input type.
#[derive(Clone, Copy)]
pub(crate) enum Typing {
    /// compute in the promoted type
    Promoted,
    /// integers and bool compute in float32 (true division)
    FloatResult,
}

fn compute_type(p: DType, typing: Typing) -> DType {
    match typing {
        Typing::Promoted => p,
        Typing::FloatResult if !p.is_float() => DType::F32,
        Typing::FloatResult => p,
    }
}

fn check_alpha(alpha: Option<Scalar>, p: DType) -> NnResult<()> {
    if let Some(al) = alpha {
        let ok = if p == DType::Bool {
            !al.dtype.is_float()
        } else {
            can_cast(al.dtype, p)
        };
        if !ok {
            return Err(NnError::invalid(format!(
                "alpha data type {} cannot be cast to the computation type {p}",
                al.dtype
            )));
        }
    }
    Ok(())
}

/// The compute type of a tensor with a scalar (the non-regbase rule of CANN's `Adds`).
pub(crate) fn promote_scalar(t: DType, s: DType, out: DType) -> DType {
    if t.is_float() {
        t
    } else if s == DType::F64 && out == DType::F32 {
        DType::F32
    } else if s.is_float() || t == DType::Bool {
        npu_emu::ops::dtype::promote(t, s).unwrap_or(t)
    } else {
        t
    }
}

/// `out = op(self, other)` for two tensors.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tensor_tensor(
    api: &'static str,
    x: T,
    y: T,
    out: T,
    dtypes: &[DType],
    op: Binary,
    alpha: Option<Scalar>,
    typing: Typing,
) -> NnResult<Built> {
    a::dtype_in(&x, dtypes)?;
    a::dtype_in(&y, dtypes)?;
    a::max_dims(&x, MAX_DIMS)?;
    a::max_dims(&y, MAX_DIMS)?;
    let p = a::promote(x.dtype(), x.arg, y.dtype(), y.arg)?;
    check_alpha(alpha, p)?;
    let ct = compute_type(p, typing);
    let rt = if op.is_predicate() { DType::Bool } else { ct };
    a::castable(rt, &out)?;
    let shape = a::broadcast(&x, &y)?;
    a::same_shape(&out, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&y);
    l.output(&out);
    l.finish(move |v, _| math::binary(op, &v[0], &v[1], &v[2], ct))
}

/// `out = op(self, scalar)` (or `op(scalar, self)` when `swap`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn tensor_scalar(
    api: &'static str,
    x: T,
    s: Scalar,
    out: T,
    dtypes: &[DType],
    op: Binary,
    alpha: Option<Scalar>,
    typing: Typing,
    swap: bool,
) -> NnResult<Built> {
    a::dtype_in(&x, dtypes)?;
    a::max_dims(&x, MAX_DIMS)?;
    let p = promote_scalar(x.dtype(), s.dtype, out.dtype());
    check_alpha(alpha, p)?;
    let ct = compute_type(p, typing);
    let rt = if op.is_predicate() { DType::Bool } else { ct };
    // On Atlas A2/A3 CANN's Muls checks no promotion for a scalar factor (that check is
    // Ascend 950 only): an INT64 selfRef times a DOUBLE scalar is computed in DOUBLE and cast
    // back to INT64, truncating (torch_npu's window functions build on it).
    if !matches!(api, "aclnnMuls" | "aclnnInplaceMuls") {
        a::castable(rt, &out)?;
    }
    a::same_shape(&out, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&out);
    l.finish(move |v, _| {
        let mut buf = [0u64; 1];
        let sv = scalar_view(s, ct, &mut buf);
        if swap {
            math::binary(op, &sv, &v[0], &v[1], ct)
        } else {
            math::binary(op, &v[0], &sv, &v[1], ct)
        }
    })
}

/// The in-place form's shape rule: `other` broadcasts to `selfRef`'s own shape.
pub(crate) fn inplace_shape(x: &T, y: &T) -> NnResult<()> {
    let shape = a::broadcast(x, y)?;
    if shape != x.shape() {
        return Err(NnError::invalid(format!(
            "{} shape {:?} broadcast with {} shape {:?} gives {shape:?}; in place the result \
             must keep {}'s shape",
            x.arg,
            x.shape(),
            y.arg,
            y.shape(),
            x.arg
        )));
    }
    Ok(())
}

fn as_out(t: &T) -> T {
    T {
        arg: "selfRef",
        ..t.clone()
    }
}

macro_rules! tt_op {
    ($get:ident, $api:literal, $op:expr, $typing:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(self_, "self")?;
                let y = a::tensor_cx(other, "other")?;
                let o = a::tensor_cx(out, "out")?;
                if let Some(r) = cx::tt($api, $op, &x, &y, &o) {
                    return r;
                }
                tensor_tensor($api, x.0, y.0, o.0, ALL_NUM, $op, None, $typing)
            })
        }
    };
}

macro_rules! ts_op {
    ($get:ident, $api:literal, $op:expr, $typing:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(self_, "self")?;
                let s = a::scalar(other, "other")?;
                let o = a::tensor_cx(out, "out")?;
                if let Some(r) = cx::ts($api, $op, &x, s, &o, false) {
                    return r;
                }
                tensor_scalar($api, x.0, s, o.0, ALL_NUM, $op, None, $typing, false)
            })
        }
    };
}

macro_rules! inplace_tt_op {
    ($get:ident, $api:literal, $op:expr, $typing:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(selfRef, "selfRef")?;
                let y = a::tensor_cx(other, "other")?;
                if let Some(r) = cx::tt($api, $op, &x, &y, &x) {
                    return r;
                }
                let (x, y) = (x.0, y.0);
                inplace_shape(&x, &y)?;
                tensor_tensor($api, x.clone(), y, as_out(&x), ALL_NUM, $op, None, $typing)
            })
        }
    };
}

macro_rules! inplace_ts_op {
    ($get:ident, $api:literal, $op:expr, $typing:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(selfRef, "selfRef")?;
                let s = a::scalar(other, "other")?;
                if let Some(r) = cx::ts($api, $op, &x, s, &x, false) {
                    return r;
                }
                let x = x.0;
                tensor_scalar(
                    $api,
                    x.clone(),
                    s,
                    as_out(&x),
                    ALL_NUM,
                    $op,
                    None,
                    $typing,
                    false,
                )
            })
        }
    };
}

// ---- Add / Sub / Rsub (with alpha) ----

fn alpha_op(kind: &str, al: Scalar) -> Binary {
    match kind {
        "add" => Binary::Add(al),
        "sub" => Binary::Sub(al),
        _ => Binary::RSub(al),
    }
}

fn sub_dtypes(kind: &str, x: &T) -> NnResult<()> {
    if kind != "add" && x.dtype() == DType::Bool {
        return Err(NnError::invalid(format!(
            "{} is ACL_BOOL: subtraction of bool tensors is not supported (use logical_xor)",
            x.arg
        )));
    }
    Ok(())
}

macro_rules! alpha_tt {
    ($get:ident, $api:literal, $kind:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            other: *const c_void,
            alpha: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(self_, "self")?;
                let y = a::tensor_cx(other, "other")?;
                let al = a::scalar(alpha, "alpha")?;
                let o = a::tensor_cx(out, "out")?;
                if let Some(r) = cx::tt($api, alpha_op($kind, al), &x, &y, &o) {
                    return r;
                }
                let (x, y, o) = (x.0, y.0, o.0);
                sub_dtypes($kind, &x)?;
                let op = alpha_op($kind, al);
                tensor_tensor($api, x, y, o, ALL_NUM, op, Some(al), Typing::Promoted)
            })
        }
    };
}

macro_rules! alpha_ts {
    ($get:ident, $api:literal, $kind:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            other: *const c_void,
            alpha: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(self_, "self")?;
                let s = a::scalar(other, "other")?;
                let al = a::scalar(alpha, "alpha")?;
                let o = a::tensor_cx(out, "out")?;
                if let Some(r) = cx::ts($api, alpha_op($kind, al), &x, s, &o, false) {
                    return r;
                }
                let (x, o) = (x.0, o.0);
                sub_dtypes($kind, &x)?;
                let op = alpha_op($kind, al);
                tensor_scalar(
                    $api,
                    x,
                    s,
                    o,
                    ALL_NUM,
                    op,
                    Some(al),
                    Typing::Promoted,
                    false,
                )
            })
        }
    };
}

macro_rules! alpha_inplace_tt {
    ($get:ident, $api:literal, $kind:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            selfRef: *const c_void,
            other: *const c_void,
            alpha: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(selfRef, "selfRef")?;
                let y = a::tensor_cx(other, "other")?;
                let al = a::scalar(alpha, "alpha")?;
                if let Some(r) = cx::tt($api, alpha_op($kind, al), &x, &y, &x) {
                    return r;
                }
                let (x, y) = (x.0, y.0);
                sub_dtypes($kind, &x)?;
                inplace_shape(&x, &y)?;
                let op = alpha_op($kind, al);
                tensor_tensor(
                    $api,
                    x.clone(),
                    y,
                    as_out(&x),
                    ALL_NUM,
                    op,
                    Some(al),
                    Typing::Promoted,
                )
            })
        }
    };
}

macro_rules! alpha_inplace_ts {
    ($get:ident, $api:literal, $kind:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            selfRef: *const c_void,
            other: *const c_void,
            alpha: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor_cx(selfRef, "selfRef")?;
                let s = a::scalar(other, "other")?;
                let al = a::scalar(alpha, "alpha")?;
                if let Some(r) = cx::ts($api, alpha_op($kind, al), &x, s, &x, false) {
                    return r;
                }
                let x = x.0;
                sub_dtypes($kind, &x)?;
                let op = alpha_op($kind, al);
                tensor_scalar(
                    $api,
                    x.clone(),
                    s,
                    as_out(&x),
                    ALL_NUM,
                    op,
                    Some(al),
                    Typing::Promoted,
                    false,
                )
            })
        }
    };
}

alpha_tt!(aclnnAddGetWorkspaceSize, "aclnnAdd", "add");
alpha_ts!(aclnnAddsGetWorkspaceSize, "aclnnAdds", "add");
alpha_inplace_tt!(aclnnInplaceAddGetWorkspaceSize, "aclnnInplaceAdd", "add");
alpha_inplace_ts!(aclnnInplaceAddsGetWorkspaceSize, "aclnnInplaceAdds", "add");
alpha_tt!(aclnnSubGetWorkspaceSize, "aclnnSub", "sub");
alpha_ts!(aclnnSubsGetWorkspaceSize, "aclnnSubs", "sub");
alpha_inplace_tt!(aclnnInplaceSubGetWorkspaceSize, "aclnnInplaceSub", "sub");
alpha_inplace_ts!(aclnnInplaceSubsGetWorkspaceSize, "aclnnInplaceSubs", "sub");
alpha_tt!(aclnnRsubGetWorkspaceSize, "aclnnRsub", "rsub");
alpha_ts!(aclnnRsubsGetWorkspaceSize, "aclnnRsubs", "rsub");
crate::phase2!(
    aclnnAdd,
    aclnnAdds,
    aclnnInplaceAdd,
    aclnnInplaceAdds,
    aclnnSub,
    aclnnSubs,
    aclnnInplaceSub,
    aclnnInplaceSubs,
    aclnnRsub,
    aclnnRsubs
);

// ---- Mul / Div ----

tt_op!(
    aclnnMulGetWorkspaceSize,
    "aclnnMul",
    Binary::Mul,
    Typing::Promoted
);
ts_op!(
    aclnnMulsGetWorkspaceSize,
    "aclnnMuls",
    Binary::Mul,
    Typing::Promoted
);
inplace_tt_op!(
    aclnnInplaceMulGetWorkspaceSize,
    "aclnnInplaceMul",
    Binary::Mul,
    Typing::Promoted
);
inplace_ts_op!(
    aclnnInplaceMulsGetWorkspaceSize,
    "aclnnInplaceMuls",
    Binary::Mul,
    Typing::Promoted
);
tt_op!(
    aclnnDivGetWorkspaceSize,
    "aclnnDiv",
    Binary::Div,
    Typing::FloatResult
);
ts_op!(
    aclnnDivsGetWorkspaceSize,
    "aclnnDivs",
    Binary::Div,
    Typing::FloatResult
);
inplace_tt_op!(
    aclnnInplaceDivGetWorkspaceSize,
    "aclnnInplaceDiv",
    Binary::Div,
    Typing::FloatResult
);
inplace_ts_op!(
    aclnnInplaceDivsGetWorkspaceSize,
    "aclnnInplaceDivs",
    Binary::Div,
    Typing::FloatResult
);

fn div_mode(mode: i32) -> NnResult<(Binary, Typing)> {
    match mode {
        0 => Ok((Binary::Div, Typing::FloatResult)),
        1 => Ok((Binary::DivTrunc, Typing::Promoted)),
        2 => Ok((Binary::DivFloor, Typing::Promoted)),
        _ => Err(NnError::invalid(format!(
            "mode {mode} is not supported; 0 (true division), 1 (round toward zero) or 2 \
             (round down)"
        ))),
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDivModGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    mode: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDivModGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            let (op, t) = div_mode(mode)?;
            tensor_tensor("aclnnDivMod", x, y, o, ALL_NUM, op, None, t)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDivModsGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    mode: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDivModsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let s = a::scalar(other, "other")?;
            let o = a::tensor(out, "out")?;
            let (op, t) = div_mode(mode)?;
            tensor_scalar("aclnnDivMods", x, s, o, ALL_NUM, op, None, t, false)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceDivModGetWorkspaceSize(
    selfRef: *mut c_void,
    other: *const c_void,
    mode: i32,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceDivModGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let y = a::tensor(other, "other")?;
            inplace_shape(&x, &y)?;
            let (op, t) = div_mode(mode)?;
            tensor_tensor(
                "aclnnInplaceDivMod",
                x.clone(),
                y,
                as_out(&x),
                ALL_NUM,
                op,
                None,
                t,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceDivModsGetWorkspaceSize(
    selfRef: *mut c_void,
    other: *const c_void,
    mode: i32,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceDivModsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let s = a::scalar(other, "other")?;
            let (op, t) = div_mode(mode)?;
            tensor_scalar(
                "aclnnInplaceDivMods",
                x.clone(),
                s,
                as_out(&x),
                ALL_NUM,
                op,
                None,
                t,
                false,
            )
        },
    )
}

crate::phase2!(
    aclnnMul,
    aclnnMuls,
    aclnnInplaceMul,
    aclnnInplaceMuls,
    aclnnDiv,
    aclnnDivs,
    aclnnInplaceDiv,
    aclnnInplaceDivs,
    aclnnDivMod,
    aclnnDivMods,
    aclnnInplaceDivMod,
    aclnnInplaceDivMods
);

// ---- Maximum / Minimum / Pow ----

tt_op!(
    aclnnMaximumGetWorkspaceSize,
    "aclnnMaximum",
    Binary::Maximum,
    Typing::Promoted
);
tt_op!(
    aclnnMinimumGetWorkspaceSize,
    "aclnnMinimum",
    Binary::Minimum,
    Typing::Promoted
);

#[no_mangle]
pub unsafe extern "C" fn aclnnPowTensorScalarGetWorkspaceSize(
    self_: *const c_void,
    exponent: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPowTensorScalarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let e = a::scalar(exponent, "exponent")?;
            let o = a::tensor(out, "out")?;
            tensor_scalar(
                "aclnnPowTensorScalar",
                x,
                e,
                o,
                ALL_NUM,
                Binary::Pow,
                None,
                Typing::Promoted,
                false,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplacePowTensorScalarGetWorkspaceSize(
    self_: *const c_void,
    exponent: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplacePowTensorScalarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let e = a::scalar(exponent, "exponent")?;
            tensor_scalar(
                "aclnnInplacePowTensorScalar",
                x.clone(),
                e,
                x,
                ALL_NUM,
                Binary::Pow,
                None,
                Typing::Promoted,
                false,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPowScalarTensorGetWorkspaceSize(
    self_: *const c_void,
    exponent: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPowScalarTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(self_, "self")?;
            let e = a::tensor(exponent, "exponent")?;
            let o = a::tensor(out, "out")?;
            tensor_scalar(
                "aclnnPowScalarTensor",
                e,
                s,
                o,
                ALL_NUM,
                Binary::Pow,
                None,
                Typing::Promoted,
                true,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPowTensorTensorGetWorkspaceSize(
    self_: *const c_void,
    exponent: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPowTensorTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let e = a::tensor(exponent, "exponent")?;
            let o = a::tensor(out, "out")?;
            tensor_tensor(
                "aclnnPowTensorTensor",
                x,
                e,
                o,
                ALL_NUM,
                Binary::Pow,
                None,
                Typing::Promoted,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplacePowTensorTensorGetWorkspaceSize(
    self_: *const c_void,
    exponent: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplacePowTensorTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let e = a::tensor(exponent, "exponent")?;
            inplace_shape(&x, &e)?;
            tensor_tensor(
                "aclnnInplacePowTensorTensor",
                x.clone(),
                e,
                x,
                ALL_NUM,
                Binary::Pow,
                None,
                Typing::Promoted,
            )
        },
    )
}

crate::phase2!(
    aclnnMaximum,
    aclnnMinimum,
    aclnnPowTensorScalar,
    aclnnInplacePowTensorScalar,
    aclnnPowScalarTensor,
    aclnnPowTensorTensor,
    aclnnInplacePowTensorTensor
);

// ---- Remainder / FloorDivide / Atan2 ----

tt_op!(
    aclnnRemainderTensorTensorGetWorkspaceSize,
    "aclnnRemainderTensorTensor",
    Binary::Remainder,
    Typing::Promoted
);
ts_op!(
    aclnnRemainderTensorScalarGetWorkspaceSize,
    "aclnnRemainderTensorScalar",
    Binary::Remainder,
    Typing::Promoted
);
inplace_tt_op!(
    aclnnInplaceRemainderTensorTensorGetWorkspaceSize,
    "aclnnInplaceRemainderTensorTensor",
    Binary::Remainder,
    Typing::Promoted
);
inplace_ts_op!(
    aclnnInplaceRemainderTensorScalarGetWorkspaceSize,
    "aclnnInplaceRemainderTensorScalar",
    Binary::Remainder,
    Typing::Promoted
);
// `aclnn_fmod_tensor.h` / `aclnn_fmod_scalar.h`: C fmod (the sign of the dividend)
tt_op!(
    aclnnFmodTensorGetWorkspaceSize,
    "aclnnFmodTensor",
    Binary::Fmod,
    Typing::Promoted
);
ts_op!(
    aclnnFmodScalarGetWorkspaceSize,
    "aclnnFmodScalar",
    Binary::Fmod,
    Typing::Promoted
);
inplace_tt_op!(
    aclnnInplaceFmodTensorGetWorkspaceSize,
    "aclnnInplaceFmodTensor",
    Binary::Fmod,
    Typing::Promoted
);
inplace_ts_op!(
    aclnnInplaceFmodScalarGetWorkspaceSize,
    "aclnnInplaceFmodScalar",
    Binary::Fmod,
    Typing::Promoted
);
crate::phase2!(
    aclnnFmodTensor,
    aclnnFmodScalar,
    aclnnInplaceFmodTensor,
    aclnnInplaceFmodScalar
);
tt_op!(
    aclnnFloorDivideGetWorkspaceSize,
    "aclnnFloorDivide",
    Binary::DivFloor,
    Typing::Promoted
);
ts_op!(
    aclnnFloorDividesGetWorkspaceSize,
    "aclnnFloorDivides",
    Binary::DivFloor,
    Typing::Promoted
);
inplace_tt_op!(
    aclnnInplaceFloorDivideGetWorkspaceSize,
    "aclnnInplaceFloorDivide",
    Binary::DivFloor,
    Typing::Promoted
);
inplace_ts_op!(
    aclnnInplaceFloorDividesGetWorkspaceSize,
    "aclnnInplaceFloorDivides",
    Binary::DivFloor,
    Typing::Promoted
);
tt_op!(
    aclnnAtan2GetWorkspaceSize,
    "aclnnAtan2",
    Binary::Atan2,
    Typing::FloatResult
);
inplace_tt_op!(
    aclnnInplaceAtan2GetWorkspaceSize,
    "aclnnInplaceAtan2",
    Binary::Atan2,
    Typing::FloatResult
);

#[no_mangle]
pub unsafe extern "C" fn aclnnRemainderScalarTensorGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRemainderScalarTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            tensor_scalar(
                "aclnnRemainderScalarTensor",
                y,
                s,
                o,
                ALL_NUM,
                Binary::Remainder,
                None,
                Typing::Promoted,
                true,
            )
        },
    )
}

// ---- XLogY (`aclnn_x_log_y_tensor.h`, `…_scalar_other.h`, `…_scalar_self.h`) ----

tt_op!(
    aclnnXLogYTensorGetWorkspaceSize,
    "aclnnXLogYTensor",
    Binary::XLogY,
    Typing::FloatResult
);
inplace_tt_op!(
    aclnnInplaceXLogYTensorGetWorkspaceSize,
    "aclnnInplaceXLogYTensor",
    Binary::XLogY,
    Typing::FloatResult
);
ts_op!(
    aclnnXLogYScalarOtherGetWorkspaceSize,
    "aclnnXLogYScalarOther",
    Binary::XLogY,
    Typing::FloatResult
);
inplace_ts_op!(
    aclnnInplaceXLogYScalarOtherGetWorkspaceSize,
    "aclnnInplaceXLogYScalarOther",
    Binary::XLogY,
    Typing::FloatResult
);

#[no_mangle]
pub unsafe extern "C" fn aclnnXLogYScalarSelfGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnXLogYScalarSelfGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            tensor_scalar(
                "aclnnXLogYScalarSelf",
                y,
                s,
                o,
                ALL_NUM,
                Binary::XLogY,
                None,
                Typing::FloatResult,
                true,
            )
        },
    )
}

crate::phase2!(
    aclnnXLogYTensor,
    aclnnInplaceXLogYTensor,
    aclnnXLogYScalarOther,
    aclnnInplaceXLogYScalarOther,
    aclnnXLogYScalarSelf
);

crate::phase2!(
    aclnnRemainderTensorTensor,
    aclnnRemainderTensorScalar,
    aclnnRemainderScalarTensor,
    aclnnInplaceRemainderTensorTensor,
    aclnnInplaceRemainderTensorScalar,
    aclnnFloorDivide,
    aclnnFloorDivides,
    aclnnInplaceFloorDivide,
    aclnnInplaceFloorDivides,
    aclnnAtan2,
    aclnnInplaceAtan2
);
