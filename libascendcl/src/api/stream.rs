//! Streams: create (plain, with config, V2 and the config-handle functions), destroy (and
//! force), synchronize (and with timeout), query, wait on an event (and with timeout),
//! failure mode, id, priority, flags, the current context's default stream.
//!
//! A NULL `aclrtStream` means the current context's default stream, as in CANN.
//! Priorities are 0..=7 (0 highest); out-of-range priorities and unknown flag bits are
//! `ACL_ERROR_RT_PARAM_INVALID` (107000), the lower runtime's code in CANN.

use crate::api::errors;
use crate::ffi::{self, out};
use crate::runtime::{self, timeout_ms, Runtime, StreamEntry};
use npu_emu::codes::*;
use npu_emu::stream::FailureMode;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// All `ACL_STREAM_*` flag bits (abi.md §1.1).
pub const STREAM_FLAGS_MASK: u32 = 0x3F;

/// `aclrtStreamConfigHandle` (abi.md §1.6: 32 bytes, align 8).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aclrtStreamConfigHandle {
    pub workptr: *mut c_void,
    pub workSize: usize,
    pub flag: usize,
    pub priority: u32,
}

fn check_config(priority: u32, flag: u64) -> Result<()> {
    if priority > 7 {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("priority = {priority} is out of range: expected 0 (highest) to 7 (lowest)"),
        ));
    }
    if flag & !(STREAM_FLAGS_MASK as u64) != 0 {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag = {flag:#x} has unknown bits: expected a combination of ACL_STREAM_* flags (mask {STREAM_FLAGS_MASK:#x})"),
        ));
    }
    Ok(())
}

fn create(stream: *mut *mut c_void, priority: u32, flag: u64) -> Result<()> {
    ffi::non_null(stream, "stream")?;
    check_config(priority, flag)?;
    let h = runtime::get()?.create_stream(priority, flag as u32)?;
    out(stream, "stream", h as *mut c_void)
}

/// `aclError aclrtCreateStream(aclrtStream *stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut *mut c_void) -> i32 {
    errors::boundary("aclrtCreateStream", || create(stream, 0, 0))
}

/// `aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)`:
/// as CANN documents and does (8.5 `aclrtCreateStreamWithConfigImpl`, `StreamCreate`), a
/// priority outside 0..=7 is moved to the nearest bound (the runtime reads it as `int32_t`:
/// values from 2^31 on are negative and become 0), and flag bits outside the `ACL_STREAM_*`
/// flags are ignored (the stream is then like one from `aclrtCreateStream`).
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(
    stream: *mut *mut c_void,
    priority: u32,
    flag: u32,
) -> i32 {
    errors::boundary("aclrtCreateStreamWithConfig", || {
        use crate::api::device::{GREATEST_PRIORITY, LEAST_PRIORITY};
        let p = (priority as i32).clamp(GREATEST_PRIORITY, LEAST_PRIORITY) as u32;
        create(stream, p, (flag & STREAM_FLAGS_MASK) as u64)
    })
}

/// `aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle)`;
/// a NULL handle means the defaults. The handle may be the caller's own struct.
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateStreamV2(
    stream: *mut *mut c_void,
    handle: *const aclrtStreamConfigHandle,
) -> i32 {
    errors::boundary("aclrtCreateStreamV2", || {
        if handle.is_null() {
            return create(stream, 0, 0);
        }
        // SAFETY: non-null, points to the public struct per the ACL contract.
        let c = unsafe { handle.read_unaligned() };
        create(stream, c.priority, c.flag as u64)
    })
}

/// `aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)`: NULL (message recorded)
/// before `aclInit`.
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateStreamConfigHandle() -> *mut aclrtStreamConfigHandle {
    ffi::boundary_value(
        "aclrtCreateStreamConfigHandle",
        std::ptr::null_mut(),
        || {
            let rt = runtime::get()?;
            let p = Box::into_raw(Box::new(aclrtStreamConfigHandle {
                workptr: std::ptr::null_mut(),
                workSize: 0,
                flag: 0,
                priority: 0,
            }));
            rt.reg.lock().cfg_handles.insert(p as usize);
            Ok(p)
        },
    )
}

fn live_cfg(rt: &Runtime, handle: *mut aclrtStreamConfigHandle) -> Result<()> {
    ffi::non_null(handle, "handle")?;
    if !rt.reg.lock().cfg_handles.contains(&(handle as usize)) {
        return Err(Error::invalid(format!(
            "handle = {handle:p} was not returned by aclrtCreateStreamConfigHandle (or was destroyed)"
        )));
    }
    Ok(())
}

unsafe fn read_uint(attrValue: *const c_void, valueSize: usize, attr: &str) -> Result<u64> {
    match valueSize {
        // SAFETY: caller promised valueSize readable bytes.
        4 => Ok(unsafe { (attrValue as *const u32).read_unaligned() } as u64),
        // SAFETY: as above.
        8 => Ok(unsafe { (attrValue as *const u64).read_unaligned() }),
        n => Err(Error::invalid(format!(
            "valueSize = {n} is invalid for {attr}: expected 4 or 8"
        ))),
    }
}

/// `aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr, const void *attrValue, size_t valueSize)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetStreamConfigOpt(
    handle: *mut aclrtStreamConfigHandle,
    attr: i32,
    attrValue: *const c_void,
    valueSize: usize,
) -> i32 {
    errors::boundary("aclrtSetStreamConfigOpt", || {
        let rt = runtime::get()?;
        live_cfg(&rt, handle)?;
        ffi::non_null(attrValue, "attrValue")?;
        // SAFETY: live handle allocated by us.
        let h = unsafe { &mut *handle };
        match attr {
            0 => {
                if valueSize != std::mem::size_of::<*mut c_void>() {
                    return Err(Error::invalid(format!(
                        "valueSize = {valueSize} is invalid for ACL_RT_STREAM_WORK_ADDR_PTR: expected {}",
                        std::mem::size_of::<*mut c_void>()
                    )));
                }
                // SAFETY: checked size.
                h.workptr = unsafe { (attrValue as *const *mut c_void).read_unaligned() };
            }
            // SAFETY: `attrValue` is non-NULL with `valueSize` readable bytes (the ACL
            // contract); read_uint reads no more than that (here and in the next two arms).
            1 => h.workSize = unsafe { read_uint(attrValue, valueSize, "ACL_RT_STREAM_WORK_SIZE") }? as usize,
            2 => {
                // SAFETY: as above.
                let f = unsafe { read_uint(attrValue, valueSize, "ACL_RT_STREAM_FLAG") }?;
                check_config(0, f)?;
                h.flag = f as usize;
            }
            3 => {
                // SAFETY: as above.
                let p = unsafe { read_uint(attrValue, valueSize, "ACL_RT_STREAM_PRIORITY") }?;
                check_config(u32::try_from(p).unwrap_or(u32::MAX), 0)?;
                h.priority = p as u32;
            }
            _ => {
                return Err(Error::invalid(format!(
                    "attr = {attr} is invalid: expected ACL_RT_STREAM_WORK_ADDR_PTR (0), ACL_RT_STREAM_WORK_SIZE (1), ACL_RT_STREAM_FLAG (2) or ACL_RT_STREAM_PRIORITY (3)"
                )))
            }
        }
        Ok(())
    })
}

/// `aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyStreamConfigHandle(
    handle: *mut aclrtStreamConfigHandle,
) -> i32 {
    errors::boundary("aclrtDestroyStreamConfigHandle", || {
        let rt = runtime::get()?;
        live_cfg(&rt, handle)?;
        rt.reg.lock().cfg_handles.remove(&(handle as usize));
        // SAFETY: allocated by Box::into_raw in aclrtCreateStreamConfigHandle, removed once.
        drop(unsafe { Box::from_raw(handle) });
        Ok(())
    })
}

/// `aclError aclrtDestroyStream(aclrtStream stream)`: waits for the stream's pending tasks.
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyStream(stream: *mut c_void) -> i32 {
    errors::boundary("aclrtDestroyStream", || match runtime::get() {
        Ok(rt) => rt.destroy_stream(stream, false),
        Err(e) => runtime::handle_after_finalize(e, stream as u64),
    })
}

/// `aclError aclrtDestroyStreamForce(aclrtStream stream)`: discards pending tasks.
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyStreamForce(stream: *mut c_void) -> i32 {
    errors::boundary("aclrtDestroyStreamForce", || match runtime::get() {
        Ok(rt) => rt.destroy_stream(stream, true),
        Err(e) => runtime::handle_after_finalize(e, stream as u64),
    })
}

/// Synchronize a stream entry, naming it in errors of its asynchronous tasks.
pub fn sync_entry(e: &StreamEntry, timeout: Option<Duration>) -> Result<()> {
    e.stream.synchronize(timeout).map_err(|err| {
        if err.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT {
            err
        } else {
            Error::new(
                err.code,
                format!(
                    "an asynchronous task on {} failed: {}",
                    e.stream.label(),
                    err.msg
                ),
            )
        }
    })
}

/// `aclError aclrtSynchronizeStream(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSynchronizeStream(stream: *mut c_void) -> i32 {
    errors::boundary("aclrtSynchronizeStream", || {
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        sync_entry(&e, None)
    })
}

/// `aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)`:
/// milliseconds, -1 = forever (0 is invalid, as in CANN); `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`
/// on timeout.
#[no_mangle]
pub unsafe extern "C" fn aclrtSynchronizeStreamWithTimeout(
    stream: *mut c_void,
    timeout: i32,
) -> i32 {
    errors::boundary("aclrtSynchronizeStreamWithTimeout", || {
        let t = timeout_ms(timeout)?;
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        sync_entry(&e, t)
    })
}

/// `aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)`
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamQuery(stream: *mut c_void, status: *mut i32) -> i32 {
    errors::boundary("aclrtStreamQuery", || {
        ffi::non_null(status, "status")?;
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        // ACL_STREAM_STATUS_COMPLETE = 0, ACL_STREAM_STATUS_NOT_READY = 1
        out(status, "status", if e.stream.query() { 0 } else { 1 })
    })
}

fn wait_event(stream: *mut c_void, event: *mut c_void, timeout: Option<Duration>) -> Result<()> {
    wait_event_flag(stream, event, timeout, false)
}

fn wait_event_flag(
    stream: *mut c_void,
    event: *mut c_void,
    timeout: Option<Duration>,
    external: bool,
) -> Result<()> {
    let rt = runtime::get()?;
    let ev = rt.event_entry(event, "event")?;
    let s = rt.stream_entry(stream, "stream")?;
    if let Some(slot) = ev.ipc {
        if s.stream.is_capturing() {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "event {} is an IPC event, which a capture cannot wait on",
                    ev.id
                ),
            ));
        }
        return crate::api::ipc::event_wait(&rt, slot, &s, timeout);
    }
    if let Some(r) = crate::api::mdlri::wait_in_model(&rt, &ev, &s, external) {
        return r;
    }
    ev.event.wait_on(&s.stream, timeout)
}

/// `ACL_EVENT_WAIT_EXTERNAL` (`aclrtStreamWaitEventWithFlag`).
pub const ACL_EVENT_WAIT_EXTERNAL: u32 = 0x1;

/// `aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t
/// timeout, uint32_t flag)`: `flag` `ACL_EVENT_WAIT_DEFAULT` (0) waits as
/// `aclrtStreamWaitEventWithTimeout` (`timeout` in ms, 0 = no limit);
/// `ACL_EVENT_WAIT_EXTERNAL` (1) on a capturing stream makes the model wait, at each
/// execution, for the event's latest record made outside the model before it was launched
/// (`timeout` must then be 0, as CANN documents).
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamWaitEventWithFlag(
    stream: *mut c_void,
    event: *mut c_void,
    timeout: u32,
    flag: u32,
) -> i32 {
    errors::boundary("aclrtStreamWaitEventWithFlag", || {
        if flag & !ACL_EVENT_WAIT_EXTERNAL != 0 {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag = {flag:#x} is invalid: expected ACL_EVENT_WAIT_DEFAULT (0) or ACL_EVENT_WAIT_EXTERNAL (1)"),
            ));
        }
        let external = flag == ACL_EVENT_WAIT_EXTERNAL;
        if external && timeout != 0 {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("timeout = {timeout}: with ACL_EVENT_WAIT_EXTERNAL only 0 is supported"),
            ));
        }
        let t = (timeout > 0).then(|| Duration::from_millis(timeout as u64));
        wait_event_flag(stream, event, t, external)
    })
}

/// `aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)`: later tasks on
/// `stream` wait until the event's latest record (at call time) has completed, at most the
/// time set by `aclrtSetOpWaitTimeout` (default: forever).
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamWaitEvent(stream: *mut c_void, event: *mut c_void) -> i32 {
    errors::boundary("aclrtStreamWaitEvent", || {
        let t = runtime::with_settings(|s| s.op_wait_timeout);
        wait_event(stream, event, t)
    })
}

/// `aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout)`:
/// milliseconds in [0, INT_MAX] (as CANN checks; negative is `ACL_ERROR_RT_PARAM_INVALID`),
/// 0 = no time limit. A wait that times out becomes the stream's error
/// (`ACL_ERROR_RT_EVENT_SYNC_TIMEOUT`, reported by the next synchronize).
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamWaitEventWithTimeout(
    stream: *mut c_void,
    event: *mut c_void,
    timeout: i32,
) -> i32 {
    errors::boundary("aclrtStreamWaitEventWithTimeout", || {
        if timeout < 0 {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "timeout = {timeout} is invalid: expected 0 (no limit) to INT_MAX milliseconds"
                ),
            ));
        }
        let t = (timeout > 0).then(|| Duration::from_millis(timeout as u64));
        wait_event(stream, event, t)
    })
}

fn entry(stream: *mut c_void) -> Result<Arc<StreamEntry>> {
    runtime::get()?.stream_entry(stream, "stream")
}

/// `aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)`
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamGetPriority(stream: *mut c_void, priority: *mut u32) -> i32 {
    errors::boundary("aclrtStreamGetPriority", || {
        ffi::non_null(priority, "priority")?;
        out(priority, "priority", entry(stream)?.priority)
    })
}

/// `aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)`
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamGetFlags(stream: *mut c_void, flags: *mut u32) -> i32 {
    errors::boundary("aclrtStreamGetFlags", || {
        ffi::non_null(flags, "flags")?;
        out(flags, "flags", entry(stream)?.flags)
    })
}

/// `aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamGetId(stream: *mut c_void, streamId: *mut i32) -> i32 {
    errors::boundary("aclrtStreamGetId", || {
        ffi::non_null(streamId, "streamId")?;
        out(streamId, "streamId", entry(stream)?.id)
    })
}

/// `aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)`:
/// `ACL_CONTINUE_ON_FAILURE` (0) or `ACL_STOP_ON_FAILURE` (1). As CANN 8.5 does
/// (`StreamSetMode`): the default stream (NULL) is not supported, only bit 0 of `mode`
/// counts, setting the mode a stream has succeeds, and a stream set to stop on failure
/// cannot go back to continue (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` for both refusals).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetStreamFailureMode(stream: *mut c_void, mode: u64) -> i32 {
    errors::boundary("aclrtSetStreamFailureMode", || {
        if stream.is_null() {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "stream is NULL: the failure mode of the default stream cannot be set",
            ));
        }
        let m = if mode & 1 == 1 {
            FailureMode::Stop
        } else {
            FailureMode::Continue
        };
        let e = entry(stream)?;
        if e.stream.failure_mode() == FailureMode::Stop && m == FailureMode::Continue {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "mode = {mode}: the stream stops on failure (ACL_STOP_ON_FAILURE) and cannot \
                     be set back to ACL_CONTINUE_ON_FAILURE"
                ),
            ));
        }
        e.stream.set_failure_mode(m);
        Ok(())
    })
}

/// `aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCtxGetCurrentDefaultStream(stream: *mut *mut c_void) -> i32 {
    errors::boundary("aclrtCtxGetCurrentDefaultStream", || {
        ffi::non_null(stream, "stream")?;
        let ctx = runtime::get()?.current_context()?;
        out(stream, "stream", ctx.default_stream as *mut c_void)
    })
}

/// `aclError aclrtStreamAbort(aclrtStream stream)`: discard the stream's tasks that have not
/// started; a running task finishes. The stream stays usable. The default stream (NULL) is
/// not supported in CANN 8.5 (the lower runtime refuses it: `ACL_ERROR_RT_PARAM_INVALID`).
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamAbort(stream: *mut c_void) -> i32 {
    errors::boundary("aclrtStreamAbort", || {
        if stream.is_null() {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "stream is NULL: aborting the default stream is not supported (pass a stream \
                 created with aclrtCreateStream)",
            ));
        }
        entry(stream)?.stream.abort();
        Ok(())
    })
}

/// `aclrtStreamAttrValue` (abi.md §1.6: a 16-byte union, align 8).
#[repr(C)]
pub union aclrtStreamAttrValue {
    pub failureMode: u64,
    pub overflowSwitch: u32,
    pub userCustomTag: u32,
    pub cacheOpInfoSwitch: u32,
    pub reserve: [u32; 4],
}

fn attr_unsupported(attr: i32) -> Error {
    Error::invalid(format!(
        "stmAttrType = {attr} is invalid: expected ACL_STREAM_ATTR_FAILURE_MODE (1), ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK (2), ACL_STREAM_ATTR_USER_CUSTOM_TAG (3) or ACL_STREAM_ATTR_CACHE_OP_INFO (4)"
    ))
}

/// `aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType, aclrtStreamAttrValue *value)`:
/// all four attributes (`ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK` is `aclrtSetStreamOverflowSwitch`).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetStreamAttribute(
    stream: *mut c_void,
    stmAttrType: i32,
    value: *mut aclrtStreamAttrValue,
) -> i32 {
    errors::boundary("aclrtSetStreamAttribute", || {
        ffi::non_null(value, "value")?;
        let e = entry(stream)?;
        // SAFETY: non-null, the caller's union.
        let v = unsafe { &*value };
        match stmAttrType {
            1 => {
                // SAFETY: the caller's union: the member named by `stmAttrType` is the one it set.
                let m = match unsafe { v.failureMode } {
                    0 => FailureMode::Continue,
                    1 => FailureMode::Stop,
                    m => {
                        return Err(Error::new(
                            ACL_ERROR_RT_PARAM_INVALID,
                            format!("value->failureMode = {m} is invalid: expected ACL_CONTINUE_ON_FAILURE (0) or ACL_STOP_ON_FAILURE (1)"),
                        ))
                    }
                };
                e.stream.set_failure_mode(m);
            }
            // SAFETY: the union member of this attribute (as above).
            2 => crate::api::overflow::set_switch(&e, unsafe { v.overflowSwitch })?,
            3 => e.tag.store(
                // SAFETY: as above.
                unsafe { v.userCustomTag },
                std::sync::atomic::Ordering::SeqCst,
            ),
            // SAFETY: the union member of this attribute (as above).
            4 => crate::api::task_info::set_cache_switch(&e, unsafe { v.cacheOpInfoSwitch })?,
            a => return Err(attr_unsupported(a)),
        }
        Ok(())
    })
}

/// `aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType, aclrtStreamAttrValue *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetStreamAttribute(
    stream: *mut c_void,
    stmAttrType: i32,
    value: *mut aclrtStreamAttrValue,
) -> i32 {
    errors::boundary("aclrtGetStreamAttribute", || {
        ffi::non_null(value, "value")?;
        let e = entry(stream)?;
        let v = match stmAttrType {
            1 => aclrtStreamAttrValue {
                failureMode: (e.stream.failure_mode() == FailureMode::Stop) as u64,
            },
            2 => {
                let mut v = aclrtStreamAttrValue { reserve: [0; 4] };
                v.overflowSwitch = crate::api::overflow::get_switch(&e);
                v
            }
            3 => {
                let mut v = aclrtStreamAttrValue { reserve: [0; 4] };
                v.userCustomTag = e.tag.load(std::sync::atomic::Ordering::SeqCst);
                v
            }
            4 => {
                let mut v = aclrtStreamAttrValue { reserve: [0; 4] };
                v.cacheOpInfoSwitch = crate::api::task_info::cache_switch(&*runtime::get()?, &e);
                v
            }
            a => return Err(attr_unsupported(a)),
        };
        out(value, "value", v)
    })
}
