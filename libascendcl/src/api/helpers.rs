//! Small helpers of `acl_base_rt.h`: fp16 conversion, `aclDataTypeSize`, data buffers
//! (abi.md §1.3). None of them needs `aclInit`, as in CANN.
//!
//! Data buffers are kept in a registry of live handles, so a destroyed or foreign handle is
//! reported (`ACL_ERROR_INVALID_PARAM` with a message) instead of being dereferenced.

use crate::ffi::{boundary, boundary_value};
use crate::globals::BUFFERS;
use npu_emu::{fp16, Error};
use npu_emu_ffi::handles::HandleKind;
use std::ffi::c_void;

/// `aclFloatToFloat16`: round to nearest even; overflow, ±Inf and NaN saturate to ±65504.
#[no_mangle]
pub extern "C" fn aclFloatToFloat16(value: f32) -> u16 {
    crate::api::prof::count("aclFloatToFloat16");
    fp16::float_to_fp16(value)
}

/// `aclFloat16ToFloat`: exponent 31 is an ordinary exponent (0x7C00 → 65536.0f).
#[no_mangle]
pub extern "C" fn aclFloat16ToFloat(value: u16) -> f32 {
    crate::api::prof::count("aclFloat16ToFloat");
    fp16::fp16_to_float(value)
}

/// Bytes per element of an `aclDataType` (CANN's table; unknown values give 8).
pub fn data_type_size(dt: i32) -> usize {
    match dt {
        // ACL_DT_UNDEFINED, ACL_STRING
        -1 | 13 => 0,
        // ACL_INT4, ACL_UINT1 (sub-byte types count one byte)
        29 | 30 => 1,
        // BOOL, INT8, UINT8, HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT8_E8M0
        12 | 2 | 4 | 34 | 35 | 36 | 37 => 1,
        // FLOAT16, INT16, UINT16, BF16
        1 | 6 | 7 | 27 => 2,
        // FLOAT, INT32, UINT32, COMPLEX32
        0 | 3 | 8 | 33 => 4,
        // COMPLEX128
        17 => 16,
        // INT64, UINT64, DOUBLE, COMPLEX64 and CANN's default branch (FLOAT6_*, FLOAT4_*,
        // unknown values)
        _ => 8,
    }
}

/// `aclDataTypeSize`.
#[no_mangle]
pub extern "C" fn aclDataTypeSize(dataType: i32) -> usize {
    crate::api::prof::count("aclDataTypeSize");
    data_type_size(dataType)
}

/// The object behind an `aclDataBuffer *` (a handle of [`BUFFERS`]).
pub struct DataBuffer {
    pub data: *mut c_void,
    pub size: usize,
}

// SAFETY: `data` is the caller's address, stored and handed back, never dereferenced
// through this type; moving it to another thread is moving a number.
unsafe impl Send for DataBuffer {}

/// What an `aclDataBuffer *` is: a handle of [`BUFFERS`].
pub static BUFFER: HandleKind = HandleKind::new(*b"DB", "aclDataBuffer", "aclCreateDataBuffer");

/// Run `f` on the live data buffer `buf`; NULL, destroyed or foreign handles are
/// `ACL_ERROR_INVALID_PARAM`. The registry stays locked during `f`.
pub fn with_live<T>(
    buf: *const DataBuffer,
    f: impl FnOnce(&mut DataBuffer) -> T,
) -> Result<T, Error> {
    if buf.is_null() {
        return Err(Error::invalid("argument dataBuffer is NULL"));
    }
    let mut live = BUFFERS.lock();
    Ok(f(live.get_mut(buf as u64, "dataBuffer")?))
}

/// `aclCreateDataBuffer`: never fails except when out of memory; `data` may be NULL and
/// `size` 0.
#[no_mangle]
pub extern "C" fn aclCreateDataBuffer(data: *mut c_void, size: usize) -> *mut DataBuffer {
    boundary_value("aclCreateDataBuffer", std::ptr::null_mut(), || {
        Ok(BUFFERS.lock().insert(DataBuffer { data, size }) as *mut DataBuffer)
    })
}

/// `aclDestroyDataBuffer`: NULL, destroyed or foreign handles → `ACL_ERROR_INVALID_PARAM`.
/// The memory the buffer points to is not freed (as in CANN).
#[no_mangle]
pub extern "C" fn aclDestroyDataBuffer(dataBuffer: *const DataBuffer) -> i32 {
    boundary("aclDestroyDataBuffer", || {
        if dataBuffer.is_null() {
            return Err(Error::invalid("argument dataBuffer is NULL"));
        }
        BUFFERS.lock().remove(dataBuffer as u64, "dataBuffer")?;
        Ok(())
    })
}

/// `aclUpdateDataBuffer`: point an existing buffer at new memory.
#[no_mangle]
pub extern "C" fn aclUpdateDataBuffer(
    dataBuffer: *mut DataBuffer,
    data: *mut c_void,
    size: usize,
) -> i32 {
    boundary("aclUpdateDataBuffer", || {
        with_live(dataBuffer, |b| {
            b.data = data;
            b.size = size;
        })
    })
}

/// `aclGetDataBufferAddr`: NULL for a NULL (or dead) buffer.
#[no_mangle]
pub extern "C" fn aclGetDataBufferAddr(dataBuffer: *const DataBuffer) -> *mut c_void {
    boundary_value("aclGetDataBufferAddr", std::ptr::null_mut(), || {
        with_live(dataBuffer, |b| b.data)
    })
}

/// `aclGetDataBufferSize` (deprecated): the size truncated to 32 bits, 0 for NULL.
#[no_mangle]
pub extern "C" fn aclGetDataBufferSize(dataBuffer: *const DataBuffer) -> u32 {
    boundary_value("aclGetDataBufferSize", 0, || {
        with_live(dataBuffer, |b| b.size as u32)
    })
}

/// `aclGetDataBufferSizeV2`: the size, 0 for NULL.
#[no_mangle]
pub extern "C" fn aclGetDataBufferSizeV2(dataBuffer: *const DataBuffer) -> usize {
    boundary_value("aclGetDataBufferSizeV2", 0, || {
        with_live(dataBuffer, |b| b.size)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use npu_emu::codes::ACL_ERROR_INVALID_PARAM;

    #[test]
    fn data_type_sizes() {
        assert_eq!(data_type_size(-1), 0);
        assert_eq!(data_type_size(13), 0);
        assert_eq!(data_type_size(0), 4);
        assert_eq!(data_type_size(1), 2);
        assert_eq!(data_type_size(27), 2);
        assert_eq!(data_type_size(17), 16);
        assert_eq!(data_type_size(16), 8);
        assert_eq!(data_type_size(33), 4);
        assert_eq!(data_type_size(38), 8);
        assert_eq!(data_type_size(41), 8);
        assert_eq!(data_type_size(5), 8);
        assert_eq!(data_type_size(1000), 8);
    }

    #[test]
    fn buffers() {
        let mut x = 0u8;
        let b = aclCreateDataBuffer(&mut x as *mut u8 as *mut c_void, (1usize << 32) + 5);
        assert!(!b.is_null());
        assert_eq!(aclGetDataBufferSize(b), 5);
        assert_eq!(aclGetDataBufferSizeV2(b), (1usize << 32) + 5);
        assert_eq!(aclGetDataBufferAddr(b), &mut x as *mut u8 as *mut c_void);
        assert_eq!(aclUpdateDataBuffer(b, std::ptr::null_mut(), 0), 0);
        assert_eq!(aclGetDataBufferSizeV2(b), 0);
        assert_eq!(aclDestroyDataBuffer(b), 0);
        assert_eq!(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            aclDestroyDataBuffer(std::ptr::null()),
            ACL_ERROR_INVALID_PARAM
        );
        assert!(aclGetDataBufferAddr(std::ptr::null()).is_null());
        assert_eq!(aclGetDataBufferSizeV2(std::ptr::null()), 0);
    }
}
