//! What the aclnn API generated for a custom operator (`op_build`, the C++ of
//! `register/npuemu_op_runtime.h`) reads from the argument objects that CANN's public
//! functions keep opaque: the values of an `aclIntArray` / `aclFloatArray` / `aclBoolArray`
//! (a list attribute of the operator) and the tensors of an `aclTensorList`. npu-emu's own
//! exports (`npuemu_*`), not part of CANN's interface.

use crate::objects::{self, Object};
use crate::status::{boundary, NnError, ACLNN_ERR_PARAM_NULLPTR};
use std::ffi::c_void;

/// Copy up to `cap` elements of `v` to `dst` (may be NULL when `cap` is 0); the count to `n`.
///
/// # Safety
/// `dst` must have room for `cap` elements of `T`, `n` be writable.
unsafe fn copy_out<T: Copy>(v: &[T], dst: *mut T, cap: u64, n: *mut u64) {
    let k = v.len().min(cap as usize);
    if k > 0 {
        // SAFETY: the caller gives room for cap >= k elements at dst.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), dst, k) };
    }
    // SAFETY: checked non-null by the callers.
    unsafe { *n = v.len() as u64 };
}

fn check(p: *const c_void, n: *mut u64, dst_null: bool, cap: u64) -> Result<(), NnError> {
    if p.is_null() {
        return Err(NnError::new(ACLNN_ERR_PARAM_NULLPTR, "array is nullptr"));
    }
    if n.is_null() {
        return Err(NnError::new(ACLNN_ERR_PARAM_NULLPTR, "size is nullptr"));
    }
    if dst_null && cap > 0 {
        return Err(NnError::new(ACLNN_ERR_PARAM_NULLPTR, "values is nullptr"));
    }
    Ok(())
}

/// `int32_t npuemu_aclnn_int_array(const aclIntArray *a, int64_t *values, uint64_t cap,
/// uint64_t *size)`: the first `cap` values into `values`, the element count into `size`.
#[no_mangle]
pub unsafe extern "C" fn npuemu_aclnn_int_array(
    array: *const c_void,
    values: *mut i64,
    cap: u64,
    size: *mut u64,
) -> i32 {
    boundary("npuemu_aclnn_int_array", || {
        check(array, size, values.is_null(), cap)?;
        objects::with(array as usize, "aclIntArray", "array", |o| match o {
            Object::IntArray(v) => {
                // SAFETY: values has room for cap elements, size is non-null (checked).
                unsafe { copy_out(v, values, cap, size) };
                Ok(())
            }
            _ => unreachable!(),
        })
    })
}

/// `int32_t npuemu_aclnn_float_array(const aclFloatArray *a, float *values, uint64_t cap,
/// uint64_t *size)`.
#[no_mangle]
pub unsafe extern "C" fn npuemu_aclnn_float_array(
    array: *const c_void,
    values: *mut f32,
    cap: u64,
    size: *mut u64,
) -> i32 {
    boundary("npuemu_aclnn_float_array", || {
        check(array, size, values.is_null(), cap)?;
        objects::with(array as usize, "aclFloatArray", "array", |o| match o {
            Object::FloatArray(v) => {
                // SAFETY: as above.
                unsafe { copy_out(v, values, cap, size) };
                Ok(())
            }
            _ => unreachable!(),
        })
    })
}

/// `int32_t npuemu_aclnn_bool_array(const aclBoolArray *a, bool *values, uint64_t cap,
/// uint64_t *size)`.
#[no_mangle]
pub unsafe extern "C" fn npuemu_aclnn_bool_array(
    array: *const c_void,
    values: *mut bool,
    cap: u64,
    size: *mut u64,
) -> i32 {
    boundary("npuemu_aclnn_bool_array", || {
        check(array, size, values.is_null(), cap)?;
        objects::with(array as usize, "aclBoolArray", "array", |o| match o {
            Object::BoolArray(v) => {
                // SAFETY: as above.
                unsafe { copy_out(v, values, cap, size) };
                Ok(())
            }
            _ => unreachable!(),
        })
    })
}
