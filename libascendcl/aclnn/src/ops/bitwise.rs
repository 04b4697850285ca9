//! Bitwise operators: `aclnn_bitwise_and_tensor.h`, `aclnn_bitwise_and_scalar.h`,
//! `aclnn_bitwise_or_tensor.h`, `aclnn_bitwise_or_scalar.h`, `aclnn_bitwise_xor_tensor.h`,
//! `aclnn_bitwise_xor_scalar.h` (each with its in-place form) and `aclnn_bitwise_not.h`.
//!
//! Integer and bool tensors only (BOOL, INT8, INT16, INT32, INT64, UINT8); two tensors
//! compute in their promoted type, a tensor and an integer or bool scalar in the tensor's
//! type (bool with an integer scalar: int64), as the arithmetic operators do. On bool,
//! and/or/xor are the logical ones; `BitwiseNot` of bool is logical not.

use super::args::{self as a, T};
use super::arith::{inplace_shape, tensor_scalar, tensor_tensor, Typing};
use super::launch::phase1;
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{Binary, Unary};
use std::ffi::c_void;

use DType::*;
const INT_BOOL: &[DType] = &[Bool, I8, I16, I32, I64, U8];

fn int_scalar(s: &npu_emu::ops::Scalar) -> Result<(), NnError> {
    if s.dtype.is_float() {
        return Err(NnError::invalid(format!(
            "other is a {} scalar; bitwise operators take integer or bool values",
            s.dtype
        )));
    }
    Ok(())
}

fn self_ref(t: &T) -> T {
    T {
        arg: "selfRef",
        ..t.clone()
    }
}

macro_rules! bitwise {
    ($tget:ident, $t:ident, $sget:ident, $s:ident, $itget:ident, $it:ident,
     $isget:ident, $is:ident, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $tget(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($tget), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let y = a::tensor(other, "other")?;
                let o = a::tensor(out, "out")?;
                a::dtype_in(&o, INT_BOOL)?;
                tensor_tensor(
                    stringify!($t),
                    x,
                    y,
                    o,
                    INT_BOOL,
                    $op,
                    None,
                    Typing::Promoted,
                )
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $sget(
            self_: *const c_void,
            other: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($sget), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let s = a::scalar(other, "other")?;
                let o = a::tensor(out, "out")?;
                int_scalar(&s)?;
                a::dtype_in(&o, INT_BOOL)?;
                tensor_scalar(
                    stringify!($s),
                    x,
                    s,
                    o,
                    INT_BOOL,
                    $op,
                    None,
                    Typing::Promoted,
                    false,
                )
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $itget(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($itget), workspaceSize, executor, || {
                let x = a::tensor(selfRef, "selfRef")?;
                let y = a::tensor(other, "other")?;
                inplace_shape(&x, &y)?;
                let o = self_ref(&x);
                tensor_tensor(
                    stringify!($it),
                    x,
                    y,
                    o,
                    INT_BOOL,
                    $op,
                    None,
                    Typing::Promoted,
                )
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $isget(
            selfRef: *mut c_void,
            other: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($isget), workspaceSize, executor, || {
                let x = a::tensor(selfRef, "selfRef")?;
                let s = a::scalar(other, "other")?;
                int_scalar(&s)?;
                let o = self_ref(&x);
                tensor_scalar(
                    stringify!($is),
                    x,
                    s,
                    o,
                    INT_BOOL,
                    $op,
                    None,
                    Typing::Promoted,
                    false,
                )
            })
        }

        crate::phase2!($t, $s, $it, $is);
    };
}

bitwise!(
    aclnnBitwiseAndTensorGetWorkspaceSize,
    aclnnBitwiseAndTensor,
    aclnnBitwiseAndScalarGetWorkspaceSize,
    aclnnBitwiseAndScalar,
    aclnnInplaceBitwiseAndTensorGetWorkspaceSize,
    aclnnInplaceBitwiseAndTensor,
    aclnnInplaceBitwiseAndScalarGetWorkspaceSize,
    aclnnInplaceBitwiseAndScalar,
    Binary::BitAnd
);
bitwise!(
    aclnnBitwiseOrTensorGetWorkspaceSize,
    aclnnBitwiseOrTensor,
    aclnnBitwiseOrScalarGetWorkspaceSize,
    aclnnBitwiseOrScalar,
    aclnnInplaceBitwiseOrTensorGetWorkspaceSize,
    aclnnInplaceBitwiseOrTensor,
    aclnnInplaceBitwiseOrScalarGetWorkspaceSize,
    aclnnInplaceBitwiseOrScalar,
    Binary::BitOr
);
bitwise!(
    aclnnBitwiseXorTensorGetWorkspaceSize,
    aclnnBitwiseXorTensor,
    aclnnBitwiseXorScalarGetWorkspaceSize,
    aclnnBitwiseXorScalar,
    aclnnInplaceBitwiseXorTensorGetWorkspaceSize,
    aclnnInplaceBitwiseXorTensor,
    aclnnInplaceBitwiseXorScalarGetWorkspaceSize,
    aclnnInplaceBitwiseXorScalar,
    Binary::BitXor
);

crate::unary_ops!(
    aclnnBitwiseNotGetWorkspaceSize,
    "aclnnBitwiseNot",
    INT_BOOL,
    Unary::BitwiseNot
);

crate::phase2!(aclnnBitwiseNot);
