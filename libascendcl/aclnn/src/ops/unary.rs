//! Unary math: `aclnn_neg.h`, `aclnn_abs.h`, `aclnn_exp.h`, `aclnn_log.h`, `aclnn_sqrt.h`,
//! `aclnn_rsqrt.h`, `aclnn_reciprocal.h`, `aclnn_sin.h`, `aclnn_cos.h`, `aclnn_tanh.h`,
//! `aclnn_erf.h`, `aclnn_logical_not.h`, and the in-place forms.
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
    let rt = if op == Unary::LogicalNot {
        DType::Bool
    } else {
        ct
    };
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
                let x = $crate::ops::args::tensor(selfRef, "selfRef")?;
                $crate::ops::unary::unary($ip_api, x.clone(), x, $dtypes, $op)
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
                let x = $crate::ops::args::tensor(self_, "self")?;
                let o = $crate::ops::args::tensor(out, "out")?;
                $crate::ops::unary::unary($api, x, o, $dtypes, $op)
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
