//! Unary math: `aclnn_neg.h`, `aclnn_abs.h`, `aclnn_exp.h`, `aclnn_log.h`, `aclnn_sqrt.h`,
//! `aclnn_rsqrt.h`, `aclnn_reciprocal.h`, `aclnn_sin.h`, `aclnn_cos.h`, `aclnn_tanh.h`,
//! `aclnn_erf.h`, `aclnn_logical_not.h`, `aclnn_floor.h`, `aclnn_ceil.h`, `aclnn_round.h`
//! (with RoundDecimals), `aclnn_trunc.h`, `aclnn_sign.h`, `aclnn_square.h`, `aclnn_exp2.h`,
//! `aclnn_log2.h`, `aclnn_log10.h`, `aclnn_log1p.h`, `aclnn_expm1.h`, `aclnn_asin.h`,
//! `aclnn_acos.h`, `aclnn_atan.h`, `aclnn_sinh.h`, `aclnn_cosh.h`, `aclnn_tan.h`,
//! `aclnn_isfinite.h`, `aclnn_erfc.h`, `aclnn_asinh.h`, `aclnn_acosh.h`, `aclnn_atanh.h`,
//! `aclnn_erfinv.h`, `aclnn_nan_to_num.h`, `aclnn_frac.h`, and the in-place forms.
//!
//! Floating functions of an integer or bool tensor compute in float32 (the output must then
//! be floating); the others compute in the input's type. Shapes of `self` and `out` match.

use super::args::{self as a, ALL_NUM, T};
use super::launch::{Built, Launch};
use crate::status::NnResult;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{self, Unary};

/// `out = op(self)`.
pub(crate) fn unary(
    api: &'static str,
    x: T,
    out: T,
    dtypes: &[DType],
    op: Unary,
) -> NnResult<Built> {
    a::dtype_in(&x, dtypes)?;
    a::max_dims(&x, 8)?;
    let ct = if op.float_only() && !x.dtype().is_float() {
        DType::F32
    } else {
        x.dtype()
    };
    let rt = if op.is_predicate() { DType::Bool } else { ct };
    a::castable(rt, &out)?;
    a::same_shape(&out, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&out);
    l.finish(move |v, _| math::unary(op, &v[0], &v[1], ct))
}

/// Define `aclnnXxxGetWorkspaceSize(self, out, …)` and, when given,
/// `aclnnInplaceXxxGetWorkspaceSize(selfRef, …)` for a unary operator.
#[macro_export]
macro_rules! unary_ops {
    ($get:ident, $api:literal, $ip_get:ident, $ip_api:literal, $dtypes:expr, $op:expr) => {
        $crate::unary_ops!($get, $api, $dtypes, $op);
        #[no_mangle]
        pub unsafe extern "C" fn $ip_get(
            selfRef: *mut std::ffi::c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut std::ffi::c_void,
        ) -> i32 {
            $crate::ops::launch::phase1(stringify!($ip_get), workspaceSize, executor, || {
                let x = $crate::ops::args::tensor_cx(selfRef, "selfRef")?;
                if let Some(r) = $crate::ops::complex::unary($ip_api, $op, &x, &x) {
                    return r;
                }
                $crate::ops::unary::unary($ip_api, x.0.clone(), x.0, $dtypes, $op)
            })
        }
    };
    ($get:ident, $api:literal, $dtypes:expr, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const std::ffi::c_void,
            out: *mut std::ffi::c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut std::ffi::c_void,
        ) -> i32 {
            $crate::ops::launch::phase1(stringify!($get), workspaceSize, executor, || {
                let x = $crate::ops::args::tensor_cx(self_, "self")?;
                let o = $crate::ops::args::tensor_cx(out, "out")?;
                if let Some(r) = $crate::ops::complex::unary($api, $op, &x, &o) {
                    return r;
                }
                $crate::ops::unary::unary($api, x.0, o.0, $dtypes, $op)
            })
        }
    };
}

unary_ops!(
    aclnnNegGetWorkspaceSize,
    "aclnnNeg",
    aclnnInplaceNegGetWorkspaceSize,
    "aclnnInplaceNeg",
    ALL_NUM,
    Unary::Neg
);
unary_ops!(aclnnAbsGetWorkspaceSize, "aclnnAbs", ALL_NUM, Unary::Abs);
unary_ops!(
    aclnnExpGetWorkspaceSize,
    "aclnnExp",
    aclnnInplaceExpGetWorkspaceSize,
    "aclnnInplaceExp",
    ALL_NUM,
    Unary::Exp
);
unary_ops!(
    aclnnLogGetWorkspaceSize,
    "aclnnLog",
    aclnnInplaceLogGetWorkspaceSize,
    "aclnnInplaceLog",
    ALL_NUM,
    Unary::Log
);
unary_ops!(
    aclnnSqrtGetWorkspaceSize,
    "aclnnSqrt",
    aclnnInplaceSqrtGetWorkspaceSize,
    "aclnnInplaceSqrt",
    ALL_NUM,
    Unary::Sqrt
);
unary_ops!(
    aclnnRsqrtGetWorkspaceSize,
    "aclnnRsqrt",
    aclnnInplaceRsqrtGetWorkspaceSize,
    "aclnnInplaceRsqrt",
    ALL_NUM,
    Unary::Rsqrt
);
unary_ops!(
    aclnnReciprocalGetWorkspaceSize,
    "aclnnReciprocal",
    aclnnInplaceReciprocalGetWorkspaceSize,
    "aclnnInplaceReciprocal",
    ALL_NUM,
    Unary::Reciprocal
);
unary_ops!(
    aclnnSinGetWorkspaceSize,
    "aclnnSin",
    aclnnInplaceSinGetWorkspaceSize,
    "aclnnInplaceSin",
    ALL_NUM,
    Unary::Sin
);
unary_ops!(
    aclnnCosGetWorkspaceSize,
    "aclnnCos",
    aclnnInplaceCosGetWorkspaceSize,
    "aclnnInplaceCos",
    ALL_NUM,
    Unary::Cos
);
unary_ops!(
    aclnnTanhGetWorkspaceSize,
    "aclnnTanh",
    aclnnInplaceTanhGetWorkspaceSize,
    "aclnnInplaceTanh",
    ALL_NUM,
    Unary::Tanh
);
unary_ops!(
    aclnnErfGetWorkspaceSize,
    "aclnnErf",
    aclnnInplaceErfGetWorkspaceSize,
    "aclnnInplaceErf",
    ALL_NUM,
    Unary::Erf
);
unary_ops!(
    aclnnLogicalNotGetWorkspaceSize,
    "aclnnLogicalNot",
    aclnnInplaceLogicalNotGetWorkspaceSize,
    "aclnnInplaceLogicalNot",
    ALL_NUM,
    Unary::LogicalNot
);

unary_ops!(
    aclnnFloorGetWorkspaceSize,
    "aclnnFloor",
    aclnnInplaceFloorGetWorkspaceSize,
    "aclnnInplaceFloor",
    ALL_NUM,
    Unary::Floor
);
unary_ops!(
    aclnnCeilGetWorkspaceSize,
    "aclnnCeil",
    aclnnInplaceCeilGetWorkspaceSize,
    "aclnnInplaceCeil",
    ALL_NUM,
    Unary::Ceil
);
unary_ops!(
    aclnnRoundGetWorkspaceSize,
    "aclnnRound",
    aclnnInplaceRoundGetWorkspaceSize,
    "aclnnInplaceRound",
    ALL_NUM,
    Unary::Round
);
unary_ops!(
    aclnnTruncGetWorkspaceSize,
    "aclnnTrunc",
    aclnnInplaceTruncGetWorkspaceSize,
    "aclnnInplaceTrunc",
    ALL_NUM,
    Unary::Trunc
);
unary_ops!(
    aclnnSquareGetWorkspaceSize,
    "aclnnSquare",
    ALL_NUM,
    Unary::Square
);
unary_ops!(
    aclnnExp2GetWorkspaceSize,
    "aclnnExp2",
    aclnnInplaceExp2GetWorkspaceSize,
    "aclnnInplaceExp2",
    ALL_NUM,
    Unary::Exp2
);
unary_ops!(
    aclnnLog2GetWorkspaceSize,
    "aclnnLog2",
    aclnnInplaceLog2GetWorkspaceSize,
    "aclnnInplaceLog2",
    ALL_NUM,
    Unary::Log2
);
unary_ops!(
    aclnnLog10GetWorkspaceSize,
    "aclnnLog10",
    aclnnInplaceLog10GetWorkspaceSize,
    "aclnnInplaceLog10",
    ALL_NUM,
    Unary::Log10
);
unary_ops!(
    aclnnLog1pGetWorkspaceSize,
    "aclnnLog1p",
    aclnnInplaceLog1pGetWorkspaceSize,
    "aclnnInplaceLog1p",
    ALL_NUM,
    Unary::Log1p
);
unary_ops!(
    aclnnExpm1GetWorkspaceSize,
    "aclnnExpm1",
    aclnnInplaceExpm1GetWorkspaceSize,
    "aclnnInplaceExpm1",
    ALL_NUM,
    Unary::Expm1
);
unary_ops!(
    aclnnAsinGetWorkspaceSize,
    "aclnnAsin",
    aclnnInplaceAsinGetWorkspaceSize,
    "aclnnInplaceAsin",
    ALL_NUM,
    Unary::Asin
);
unary_ops!(
    aclnnAcosGetWorkspaceSize,
    "aclnnAcos",
    aclnnInplaceAcosGetWorkspaceSize,
    "aclnnInplaceAcos",
    ALL_NUM,
    Unary::Acos
);
unary_ops!(
    aclnnAtanGetWorkspaceSize,
    "aclnnAtan",
    aclnnInplaceAtanGetWorkspaceSize,
    "aclnnInplaceAtan",
    ALL_NUM,
    Unary::Atan
);
unary_ops!(
    aclnnSinhGetWorkspaceSize,
    "aclnnSinh",
    aclnnInplaceSinhGetWorkspaceSize,
    "aclnnInplaceSinh",
    ALL_NUM,
    Unary::Sinh
);
unary_ops!(
    aclnnCoshGetWorkspaceSize,
    "aclnnCosh",
    aclnnInplaceCoshGetWorkspaceSize,
    "aclnnInplaceCosh",
    ALL_NUM,
    Unary::Cosh
);
unary_ops!(
    aclnnTanGetWorkspaceSize,
    "aclnnTan",
    aclnnInplaceTanGetWorkspaceSize,
    "aclnnInplaceTan",
    ALL_NUM,
    Unary::Tan
);
unary_ops!(
    aclnnIsFiniteGetWorkspaceSize,
    "aclnnIsFinite",
    ALL_NUM,
    Unary::IsFinite
);

/// `aclnnSign(self, result)` (CANN names the output `result`).
#[no_mangle]
pub unsafe extern "C" fn aclnnSignGetWorkspaceSize(
    self_: *const std::ffi::c_void,
    result: *mut std::ffi::c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    super::launch::phase1("aclnnSignGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor_cx(self_, "self")?;
        let o = a::tensor_cx(result, "result")?;
        // COMPLEX64/128 (Atlas A2/A3 table): z / |z|, torch.sgn
        if let Some(r) = super::complex::unary("aclnnSign", Unary::Sign, &x, &o) {
            return r;
        }
        unary("aclnnSign", x.0, o.0, ALL_NUM, Unary::Sign)
    })
}

fn round_decimals(d: i64) -> NnResult<Unary> {
    if d.abs() > 300 {
        return Err(crate::status::NnError::invalid(format!(
            "decimals {d} is out of range [-300, 300]"
        )));
    }
    Ok(Unary::RoundDecimals(d as i32))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRoundDecimalsGetWorkspaceSize(
    self_: *const std::ffi::c_void,
    decimals: i64,
    out: *mut std::ffi::c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    super::launch::phase1(
        "aclnnRoundDecimalsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            unary(
                "aclnnRoundDecimals",
                x,
                o,
                ALL_NUM,
                round_decimals(decimals)?,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRoundDecimalsGetWorkspaceSize(
    selfRef: *mut std::ffi::c_void,
    decimals: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    super::launch::phase1(
        "aclnnInplaceRoundDecimalsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            unary(
                "aclnnInplaceRoundDecimals",
                x.clone(),
                x,
                ALL_NUM,
                round_decimals(decimals)?,
            )
        },
    )
}

crate::phase2!(
    aclnnFloor,
    aclnnInplaceFloor,
    aclnnCeil,
    aclnnInplaceCeil,
    aclnnRound,
    aclnnInplaceRound,
    aclnnRoundDecimals,
    aclnnInplaceRoundDecimals,
    aclnnTrunc,
    aclnnInplaceTrunc,
    aclnnSquare,
    aclnnExp2,
    aclnnInplaceExp2,
    aclnnLog2,
    aclnnInplaceLog2,
    aclnnLog10,
    aclnnInplaceLog10,
    aclnnLog1p,
    aclnnInplaceLog1p,
    aclnnExpm1,
    aclnnInplaceExpm1,
    aclnnAsin,
    aclnnInplaceAsin,
    aclnnAcos,
    aclnnInplaceAcos,
    aclnnAtan,
    aclnnInplaceAtan,
    aclnnSinh,
    aclnnInplaceSinh,
    aclnnCosh,
    aclnnInplaceCosh,
    aclnnTan,
    aclnnInplaceTan,
    aclnnIsFinite,
    aclnnSign
);

crate::phase2!(
    aclnnNeg,
    aclnnInplaceNeg,
    aclnnAbs,
    aclnnExp,
    aclnnInplaceExp,
    aclnnLog,
    aclnnInplaceLog,
    aclnnSqrt,
    aclnnInplaceSqrt,
    aclnnRsqrt,
    aclnnInplaceRsqrt,
    aclnnReciprocal,
    aclnnInplaceReciprocal,
    aclnnSin,
    aclnnInplaceSin,
    aclnnCos,
    aclnnInplaceCos,
    aclnnTanh,
    aclnnInplaceTanh,
    aclnnErf,
    aclnnInplaceErf,
    aclnnLogicalNot,
    aclnnInplaceLogicalNot
);

unary_ops!(
    aclnnErfcGetWorkspaceSize,
    "aclnnErfc",
    aclnnInplaceErfcGetWorkspaceSize,
    "aclnnInplaceErfc",
    ALL_NUM,
    Unary::Erfc
);
unary_ops!(
    aclnnAsinhGetWorkspaceSize,
    "aclnnAsinh",
    aclnnInplaceAsinhGetWorkspaceSize,
    "aclnnInplaceAsinh",
    ALL_NUM,
    Unary::Asinh
);
unary_ops!(
    aclnnAcoshGetWorkspaceSize,
    "aclnnAcosh",
    aclnnInplaceAcoshGetWorkspaceSize,
    "aclnnInplaceAcosh",
    ALL_NUM,
    Unary::Acosh
);
unary_ops!(
    aclnnAtanhGetWorkspaceSize,
    "aclnnAtanh",
    aclnnInplaceAtanhGetWorkspaceSize,
    "aclnnInplaceAtanh",
    ALL_NUM,
    Unary::Atanh
);
unary_ops!(
    aclnnErfinvGetWorkspaceSize,
    "aclnnErfinv",
    aclnnInplaceErfinvGetWorkspaceSize,
    "aclnnInplaceErfinv",
    ALL_NUM,
    Unary::Erfinv
);

/// NanToNum's dtypes (CANN's table: no DOUBLE).
const NAN_TO_NUM: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::Bool,
    DType::BF16,
];

#[no_mangle]
pub unsafe extern "C" fn aclnnNanToNumGetWorkspaceSize(
    self_: *const std::ffi::c_void,
    nan: f32,
    posinf: f32,
    neginf: f32,
    out: *mut std::ffi::c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    crate::ops::launch::phase1(
        "aclnnNanToNumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            let op = Unary::NanToNum(nan as f64, posinf as f64, neginf as f64);
            unary("aclnnNanToNum", x, o, NAN_TO_NUM, op)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceNanToNumGetWorkspaceSize(
    selfRef: *mut std::ffi::c_void,
    nan: f32,
    posinf: f32,
    neginf: f32,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    crate::ops::launch::phase1(
        "aclnnInplaceNanToNumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let op = Unary::NanToNum(nan as f64, posinf as f64, neginf as f64);
            unary("aclnnInplaceNanToNum", x.clone(), x, NAN_TO_NUM, op)
        },
    )
}

crate::phase2!(
    aclnnErfc,
    aclnnInplaceErfc,
    aclnnAsinh,
    aclnnInplaceAsinh,
    aclnnAcosh,
    aclnnInplaceAcosh,
    aclnnAtanh,
    aclnnInplaceAtanh,
    aclnnErfinv,
    aclnnInplaceErfinv,
    aclnnNanToNum,
    aclnnInplaceNanToNum
);

// ---- Frac ----

/// Frac's data types (Atlas A2): the result has the input's type (0 for integers).
const FRAC: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::BF16,
];

fn frac(api: &'static str, x: T, out: T) -> NnResult<Built> {
    a::dtype_in(&x, FRAC)?;
    if out.dtype() != x.dtype() {
        return Err(crate::status::NnError::invalid(format!(
            "{} data type {} must be {}'s {}",
            out.arg,
            out.dtype(),
            x.arg,
            x.dtype()
        )));
    }
    unary(api, x, out, FRAC, Unary::Frac)
}

/// `out = input - trunc(input)` (`aclnn_frac.h`).
#[no_mangle]
pub unsafe extern "C" fn aclnnFracGetWorkspaceSize(
    input: *const std::ffi::c_void,
    out: *mut std::ffi::c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    super::launch::phase1("aclnnFracGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(input, "input")?;
        let o = a::tensor(out, "out")?;
        frac("aclnnFrac", x, o)
    })
}

/// `inputRef = inputRef - trunc(inputRef)`.
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceFracGetWorkspaceSize(
    inputRef: *mut std::ffi::c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut std::ffi::c_void,
) -> i32 {
    super::launch::phase1(
        "aclnnInplaceFracGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(inputRef, "inputRef")?;
            frac("aclnnInplaceFrac", x.clone(), x)
        },
    )
}

crate::phase2!(aclnnFrac, aclnnInplaceFrac);
