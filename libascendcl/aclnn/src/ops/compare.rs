//! Comparisons, logical operators and selection: `aclnn_{eq,ne,gt,ge,lt,le}_{tensor,scalar}.h`
//! (with the in-place forms, which store 1/0 in `selfRef`'s type), `aclnn_logical_and.h`,
//! `aclnn_logical_or.h`, `aclnn_logical_xor.h`, `aclnn_s_where.h`,
//! `aclnn_masked_fill_scalar.h`, `aclnn_masked_fill_tensor.h`, `aclnn_equal.h`.
//!
//! Comparisons compute in the promoted type of their operands (a scalar promotes as in the
//! arithmetic family) and write bool, or anything bool casts to.

use super::args::{self as a, ALL_NUM};
use super::arith::{inplace_shape, tensor_scalar, tensor_tensor, Typing};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{self, scalar_view, Binary, Ternary};
use std::ffi::c_void;

macro_rules! cmp {
    ($get_t:ident, $api_t:literal, $get_s:ident, $api_s:literal, $ip_t:ident, $ip_api_t:literal, $ip_s:ident, $ip_api_s:literal, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get_t(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get_t), workspaceSize, executor, || {
                let (x, y, o) = (
                    a::tensor(self_, "self")?,
                    a::tensor(other, "other")?,
                    a::tensor(out, "out")?,
                );
                tensor_tensor($api_t, x, y, o, ALL_NUM, $op, None, Typing::Promoted)
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $get_s(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get_s), workspaceSize, executor, || {
                let (x, s, o) = (
                    a::tensor(self_, "self")?,
                    a::scalar(other, "other")?,
                    a::tensor(out, "out")?,
                );
                tensor_scalar($api_s, x, s, o, ALL_NUM, $op, None, Typing::Promoted, false)
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $ip_t(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($ip_t), workspaceSize, executor, || {
                let (x, y) = (a::tensor(selfRef, "selfRef")?, a::tensor(other, "other")?);
                inplace_shape(&x, &y)?;
                tensor_tensor(
                    $ip_api_t,
                    x.clone(),
                    y,
                    x,
                    ALL_NUM,
                    $op,
                    None,
                    Typing::Promoted,
                )
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $ip_s(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($ip_s), workspaceSize, executor, || {
                let (x, s) = (a::tensor(selfRef, "selfRef")?, a::scalar(other, "other")?);
                tensor_scalar(
                    $ip_api_s,
                    x.clone(),
                    s,
                    x,
                    ALL_NUM,
                    $op,
                    None,
                    Typing::Promoted,
                    false,
                )
            })
        }
    };
}

cmp!(
    aclnnEqTensorGetWorkspaceSize,
    "aclnnEqTensor",
    aclnnEqScalarGetWorkspaceSize,
    "aclnnEqScalar",
    aclnnInplaceEqTensorGetWorkspaceSize,
    "aclnnInplaceEqTensor",
    aclnnInplaceEqScalarGetWorkspaceSize,
    "aclnnInplaceEqScalar",
    Binary::Eq
);
cmp!(
    aclnnNeTensorGetWorkspaceSize,
    "aclnnNeTensor",
    aclnnNeScalarGetWorkspaceSize,
    "aclnnNeScalar",
    aclnnInplaceNeTensorGetWorkspaceSize,
    "aclnnInplaceNeTensor",
    aclnnInplaceNeScalarGetWorkspaceSize,
    "aclnnInplaceNeScalar",
    Binary::Ne
);
cmp!(
    aclnnGtTensorGetWorkspaceSize,
    "aclnnGtTensor",
    aclnnGtScalarGetWorkspaceSize,
    "aclnnGtScalar",
    aclnnInplaceGtTensorGetWorkspaceSize,
    "aclnnInplaceGtTensor",
    aclnnInplaceGtScalarGetWorkspaceSize,
    "aclnnInplaceGtScalar",
    Binary::Gt
);
cmp!(
    aclnnGeTensorGetWorkspaceSize,
    "aclnnGeTensor",
    aclnnGeScalarGetWorkspaceSize,
    "aclnnGeScalar",
    aclnnInplaceGeTensorGetWorkspaceSize,
    "aclnnInplaceGeTensor",
    aclnnInplaceGeScalarGetWorkspaceSize,
    "aclnnInplaceGeScalar",
    Binary::Ge
);
cmp!(
    aclnnLtTensorGetWorkspaceSize,
    "aclnnLtTensor",
    aclnnLtScalarGetWorkspaceSize,
    "aclnnLtScalar",
    aclnnInplaceLtTensorGetWorkspaceSize,
    "aclnnInplaceLtTensor",
    aclnnInplaceLtScalarGetWorkspaceSize,
    "aclnnInplaceLtScalar",
    Binary::Lt
);
cmp!(
    aclnnLeTensorGetWorkspaceSize,
    "aclnnLeTensor",
    aclnnLeScalarGetWorkspaceSize,
    "aclnnLeScalar",
    aclnnInplaceLeTensorGetWorkspaceSize,
    "aclnnInplaceLeTensor",
    aclnnInplaceLeScalarGetWorkspaceSize,
    "aclnnInplaceLeScalar",
    Binary::Le
);

macro_rules! logical {
    ($get:ident, $api:literal, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let (x, y, o) = (
                    a::tensor(self_, "self")?,
                    a::tensor(other, "other")?,
                    a::tensor(out, "out")?,
                );
                tensor_tensor($api, x, y, o, ALL_NUM, $op, None, Typing::Promoted)
            })
        }
    };
    ($get:ident, $api:literal, $ip:ident, $ip_api:literal, $op:expr) => {
        logical!($get, $api, $op);
        #[no_mangle]
        pub unsafe extern "C" fn $ip(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($ip), workspaceSize, executor, || {
                let (x, y) = (a::tensor(selfRef, "selfRef")?, a::tensor(other, "other")?);
                inplace_shape(&x, &y)?;
                tensor_tensor(
                    $ip_api,
                    x.clone(),
                    y,
                    x,
                    ALL_NUM,
                    $op,
                    None,
                    Typing::Promoted,
                )
            })
        }
    };
}
logical!(
    aclnnLogicalAndGetWorkspaceSize,
    "aclnnLogicalAnd",
    aclnnInplaceLogicalAndGetWorkspaceSize,
    "aclnnInplaceLogicalAnd",
    Binary::LogicalAnd
);
logical!(
    aclnnLogicalOrGetWorkspaceSize,
    "aclnnLogicalOr",
    aclnnInplaceLogicalOrGetWorkspaceSize,
    "aclnnInplaceLogicalOr",
    Binary::LogicalOr
);
logical!(
    aclnnLogicalXorGetWorkspaceSize,
    "aclnnLogicalXor",
    Binary::LogicalXor
);

#[no_mangle]
pub unsafe extern "C" fn aclnnSWhereGetWorkspaceSize(
    condition: *const c_void,
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSWhereGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let c = a::tensor(condition, "condition")?;
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&c, &[DType::Bool, DType::U8])?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&y, ALL_NUM)?;
            let p = a::promote(x.dtype(), "self", y.dtype(), "other")?;
            a::castable(p, &o)?;
            let shape = a::broadcast_all(&[&c, &x, &y])?;
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnSWhere");
            l.input(&c);
            l.input(&x);
            l.input(&y);
            l.output(&o);
            l.finish(move |v, _| math::ternary(Ternary::Where, &v[0], &v[1], &v[2], &v[3], p))
        },
    )
}

fn mask_check(x: &a::T, m: &a::T) -> Result<(), NnError> {
    a::dtype_in(m, &[DType::Bool, DType::U8])?;
    a::dtype_in(x, ALL_NUM)?;
    inplace_shape(x, m)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceMaskedFillScalarGetWorkspaceSize(
    selfRef: *mut c_void,
    mask: *const c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceMaskedFillScalarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let m = a::tensor(mask, "mask")?;
            let s = a::scalar(value, "value")?;
            mask_check(&x, &m)?;
            let ct = x.dtype();
            let mut l = Launch::new("aclnnInplaceMaskedFillScalar");
            l.input(&m);
            l.input(&x);
            l.output(&x);
            l.finish(move |v, _| {
                let mut buf = [0u64; 1];
                let sv = scalar_view(s, ct, &mut buf);
                math::ternary(Ternary::Where, &v[0], &sv, &v[1], &v[2], ct)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceMaskedFillTensorGetWorkspaceSize(
    selfRef: *mut c_void,
    mask: *const c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceMaskedFillTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let m = a::tensor(mask, "mask")?;
            let val = a::tensor(value, "value")?;
            mask_check(&x, &m)?;
            if val.numel() != 1 || val.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "value must be a 0-d tensor, but its shape is {:?}",
                    val.shape()
                )));
            }
            let ct = x.dtype();
            let mut l = Launch::new("aclnnInplaceMaskedFillTensor");
            l.input(&m);
            l.input(&val);
            l.input(&x);
            l.output(&x);
            l.finish(move |v, _| {
                let vv = npu_emu::ops::View {
                    shape: vec![],
                    strides: vec![],
                    ..v[1].clone()
                };
                math::ternary(Ternary::Where, &v[0], &vv, &v[2], &v[3], ct)
            })
        },
    )
}

/// `aclnnEqual(self, other, out)`: one bool, true when the shapes and every element are
/// equal (`torch.equal`).
#[no_mangle]
pub unsafe extern "C" fn aclnnEqualGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEqualGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&y, ALL_NUM)?;
            a::dtype_in(&o, &[DType::Bool])?;
            if o.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "out must hold one element, but its shape is {:?}",
                    o.shape()
                )));
            }
            let same_shape = x.shape() == y.shape();
            let p = a::promote(x.dtype(), "self", y.dtype(), "other")?;
            let mut l = Launch::new("aclnnEqual");
            l.input(&x);
            l.input(&y);
            l.output(&o);
            l.finish(move |v, _| {
                let o = npu_emu::ops::View {
                    shape: vec![],
                    strides: vec![],
                    ..v[2].clone()
                };
                if !same_shape {
                    return npu_emu::ops::iter::fill::<bool>(&o, false);
                }
                let eq = npu_emu::ops::view::Scratch::new(DType::Bool, &v[0].shape);
                math::binary(Binary::Eq, &v[0], &v[1], &eq.view, p)?;
                let dims: Vec<usize> = (0..v[0].ndim()).collect();
                npu_emu::ops::reduce::reduce(
                    npu_emu::ops::reduce::Reduce::All,
                    &eq.view,
                    &dims,
                    &o,
                    true,
                )
            })
        },
    )
}

crate::phase2!(aclnnEqual);

crate::phase2!(
    aclnnEqTensor,
    aclnnEqScalar,
    aclnnInplaceEqTensor,
    aclnnInplaceEqScalar,
    aclnnNeTensor,
    aclnnNeScalar,
    aclnnInplaceNeTensor,
    aclnnInplaceNeScalar,
    aclnnGtTensor,
    aclnnGtScalar,
    aclnnInplaceGtTensor,
    aclnnInplaceGtScalar,
    aclnnGeTensor,
    aclnnGeScalar,
    aclnnInplaceGeTensor,
    aclnnInplaceGeScalar,
    aclnnLtTensor,
    aclnnLtScalar,
    aclnnInplaceLtTensor,
    aclnnInplaceLtScalar,
    aclnnLeTensor,
    aclnnLeScalar,
    aclnnInplaceLeTensor,
    aclnnInplaceLeScalar,
    aclnnLogicalAnd,
    aclnnInplaceLogicalAnd,
    aclnnLogicalOr,
    aclnnInplaceLogicalOr,
    aclnnLogicalXor,
    aclnnSWhere,
    aclnnInplaceMaskedFillScalar,
    aclnnInplaceMaskedFillTensor
);
