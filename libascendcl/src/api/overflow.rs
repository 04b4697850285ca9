//! Floating-point overflow status: `aclrtCtxGetFloatOverflowAddr`,
//! `aclrtGetOverflowStatus`/`aclrtResetOverflowStatus`, `aclrtGetFloatOverflowStatus`/
//! `aclrtResetFloatOverflowStatus`, `aclrtNpuGetFloatOverFlowStatus`/
//! `aclrtNpuClearFloatOverFlowStatus`, and the stream switch
//! `aclrtSetStreamOverflowSwitch`/`aclrtGetStreamOverflowSwitch` (also
//! `ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK` of `aclrtSetStreamAttribute`).
//!
//! As on Atlas A2/A3 the status is process-level: a task (a kernel, an operator, a copy
//! engine's reduction) on a stream whose switch is not off that produces ±inf or NaN (the
//! CPU's IEEE overflow, invalid or divide-by-zero flags, see `npu_emu::fpstatus`) sets
//! it. The query is a stream task (CANN: a copy from the context's overflow area) writing
//! the 64-byte status block to device memory: a `uint32_t` 1 at offset 0 after an
//! overflow, all zeros otherwise. The reset is a stream task too. Each context has a
//! 512-byte overflow area in device memory (`aclrtCtxGetFloatOverflowAddr`, CANN's
//! `OVERFLOW_ADDR_MAX_SIZE`) holding the same block.
//!
//! Codes as CANN 8.5 (`acl/aclrt_impl`, `runtime/api_impl`): a NULL `outputAddr` of
//! `aclrtGetOverflowStatus` is `ACL_ERROR_INVALID_PARAM` (the ACL check), an `outputSize`
//! other than 64 or a NULL `outputAddr` elsewhere `ACL_ERROR_RT_PARAM_INVALID`; a NULL
//! stream means the default stream, except for `aclrtNpuClearFloatOverFlowStatus`
//! (`ACL_ERROR_RT_PARAM_INVALID`). The switch is 0 or 1 (`ACL_ERROR_INVALID_PARAM`) and
//! can be set in saturation mode only (`aclrtSetDeviceSatMode`, else
//! `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`); it reads 0 until set, as CANN's, while a stream
//! whose switch was never set still records overflows (an AI Core always sets its status).

use crate::ffi::{boundary, non_null, out};
use crate::globals::{
    OVERFLOW_AREAS as AREAS, OVERFLOW_STATUS as STATUS, OVERFLOW_SWITCH as SWITCH,
};
use crate::runtime::{self, Runtime, StreamEntry};
use npu_emu::codes::*;
use npu_emu::copy::translate;
use npu_emu::stream::Op;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// CANN's `OVERFLOW_OUTPUT_SIZE`.
const OUTPUT_SIZE: u64 = 64;
/// CANN's `OVERFLOW_ADDR_MAX_SIZE`.
const AREA_SIZE: u64 = 512;

/// The hook every stream starts with: a task raised a floating-point flag.
pub fn hook() -> npu_emu::stream::OverflowHook {
    Arc::new(|| STATUS.store(1, Ordering::SeqCst))
}

fn rt_invalid(msg: String) -> Error {
    Error::new(ACL_ERROR_RT_PARAM_INVALID, msg)
}

/// The current context's overflow area (allocated on first use).
fn area(rt: &Runtime) -> Result<u64> {
    let ctx = rt.current_context()?;
    let mut map = AREAS.lock();
    match map.get(&ctx.handle) {
        Some(&a) if rt.node.lookup(a).is_some() => Ok(a),
        _ => {
            let info = rt.node.alloc(ctx.physical, AREA_SIZE, 64)?;
            map.insert(ctx.handle, info.addr);
            Ok(info.addr)
        }
    }
}

/// Put the status query on `stream`: the block goes to the context's area and to `output`.
fn get_status(
    api: &'static str,
    output: *mut c_void,
    size: u64,
    stream: *mut c_void,
) -> Result<()> {
    if output.is_null() {
        return Err(rt_invalid("outputAddr is NULL".into()));
    }
    if size != OUTPUT_SIZE {
        return Err(rt_invalid(format!(
            "outputSize = {size} is invalid: the overflow status is {OUTPUT_SIZE} bytes"
        )));
    }
    let rt = runtime::get()?;
    let e = rt.stream_entry(stream, "stream")?;
    let dst = output as u64;
    rt.node.phys(dst, size, "outputAddr")?;
    let area = area(&rt)?;
    let r = rt.clone();
    e.stream.enqueue_op(Op::run(
        "overflow_status",
        format!("overflow status to {dst:#x}"),
        move || {
            let mut block = [0u8; OUTPUT_SIZE as usize];
            block[..4].copy_from_slice(&STATUS.load(Ordering::SeqCst).to_le_bytes());
            let run = || -> Result<()> {
                for (a, what) in [(area, "the overflow area"), (dst, "outputAddr")] {
                    let p = translate(&*r, a, OUTPUT_SIZE, true, what)?;
                    // SAFETY: a checked range of a live device allocation.
                    unsafe { std::ptr::copy_nonoverlapping(block.as_ptr(), p, block.len()) };
                }
                Ok(())
            };
            run().map_err(|e| Error::new(e.code, format!("{api} (run on the stream): {}", e.msg)))
        },
    ))
}

/// Put the status reset on `stream`.
fn reset_status(stream: *mut c_void) -> Result<()> {
    let rt = runtime::get()?;
    let e = rt.stream_entry(stream, "stream")?;
    let area = area(&rt)?;
    let r = rt.clone();
    e.stream.enqueue_op(Op::run(
        "overflow_reset",
        "overflow status reset",
        move || {
            STATUS.store(0, Ordering::SeqCst);
            let p = translate(&*r, area, AREA_SIZE, true, "the overflow area")?;
            // SAFETY: the whole live area.
            unsafe { std::ptr::write_bytes(p, 0, AREA_SIZE as usize) };
            Ok(())
        },
    ))
}

/// The switch of `e` (0 until set).
pub fn get_switch(e: &StreamEntry) -> u32 {
    SWITCH.lock().get(&e.handle).copied().unwrap_or(0)
}

/// Set the switch of `e` (saturation mode only): off stops recording its overflows.
pub fn set_switch(e: &StreamEntry, flag: u32) -> Result<()> {
    if flag > 1 {
        return Err(Error::invalid(format!(
            "flag = {flag} is invalid: expected 0 or 1"
        )));
    }
    let mode = crate::api::sys_param::current_sat_mode();
    if mode != 0 {
        return Err(Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "the overflow switch works in saturation mode only (ACL_RT_OVERFLOW_MODE_SATURATION, 0); the current mode is {mode} (aclrtSetDeviceSatMode)"
            ),
        ));
    }
    e.stream.set_overflow_hook((flag == 1).then(hook));
    SWITCH.lock().insert(e.handle, flag);
    Ok(())
}

/// `aclError aclrtCtxGetFloatOverflowAddr(void **overflowAddr)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCtxGetFloatOverflowAddr(overflowAddr: *mut *mut c_void) -> i32 {
    boundary("aclrtCtxGetFloatOverflowAddr", || {
        if overflowAddr.is_null() {
            return Err(rt_invalid("overflowAddr is NULL".into()));
        }
        let rt = runtime::get()?;
        out(overflowAddr, "overflowAddr", area(&rt)? as *mut c_void)
    })
}

/// `aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetOverflowStatus(
    outputAddr: *mut c_void,
    outputSize: usize,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtGetOverflowStatus", || {
        non_null(outputAddr, "outputAddr")?;
        get_status(
            "aclrtGetOverflowStatus",
            outputAddr,
            outputSize as u64,
            stream,
        )
    })
}

/// `aclError aclrtResetOverflowStatus(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetOverflowStatus(stream: *mut c_void) -> i32 {
    boundary("aclrtResetOverflowStatus", || reset_status(stream))
}

/// `aclError aclrtGetFloatOverflowStatus(void *outputAddr, uint64_t outputSize, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetFloatOverflowStatus(
    outputAddr: *mut c_void,
    outputSize: u64,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtGetFloatOverflowStatus", || {
        get_status(
            "aclrtGetFloatOverflowStatus",
            outputAddr,
            outputSize,
            stream,
        )
    })
}

/// `aclError aclrtResetFloatOverflowStatus(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetFloatOverflowStatus(stream: *mut c_void) -> i32 {
    boundary("aclrtResetFloatOverflowStatus", || reset_status(stream))
}

/// `aclError aclrtNpuGetFloatOverFlowStatus(void *outputAddr, uint64_t outputSize,
/// uint32_t checkMode, aclrtStream stream)`: `checkMode` selects nothing in npu-emu (one
/// status).
#[no_mangle]
pub unsafe extern "C" fn aclrtNpuGetFloatOverFlowStatus(
    outputAddr: *mut c_void,
    outputSize: u64,
    _checkMode: u32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtNpuGetFloatOverFlowStatus", || {
        get_status(
            "aclrtNpuGetFloatOverFlowStatus",
            outputAddr,
            outputSize,
            stream,
        )
    })
}

/// `aclError aclrtNpuClearFloatOverFlowStatus(uint32_t checkMode, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtNpuClearFloatOverFlowStatus(
    _checkMode: u32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtNpuClearFloatOverFlowStatus", || {
        if stream.is_null() {
            return Err(rt_invalid("stream is NULL".into()));
        }
        reset_status(stream)
    })
}

/// `aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetStreamOverflowSwitch(stream: *mut c_void, flag: u32) -> i32 {
    boundary("aclrtSetStreamOverflowSwitch", || {
        if flag > 1 {
            return Err(Error::invalid(format!(
                "flag = {flag} is invalid: expected 0 (off) or 1 (on)"
            )));
        }
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        set_switch(&e, flag)
    })
}

/// `aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetStreamOverflowSwitch(stream: *mut c_void, flag: *mut u32) -> i32 {
    boundary("aclrtGetStreamOverflowSwitch", || {
        non_null(flag, "flag")?;
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        out(flag, "flag", get_switch(&e))
    })
}
