//! Per-task information: `aclrtGetThreadLastTaskId`, `aclrtCacheLastTaskOpInfo` (with the
//! stream attribute `ACL_STREAM_ATTR_CACHE_OP_INFO`), `aclrtProfTrace` and
//! `aclrtGetHardwareSyncAddr`.
//!
//! - The last task id of a thread is the number (1-based, in enqueue order) of the last
//!   task it put on a stream, the id the exception callback reports for a failed task; 0
//!   before its first task or when that task went into a capture.
//! - Op information (CANN: attached to a captured task for profiling): the stream switch
//!   `ACL_STREAM_ATTR_CACHE_OP_INFO` (0 or 1, else 107000) is the stream's own setting; it
//!   takes effect for the capture the stream begins, and reads back as 1 only on a stream
//!   that captures into a model whose origin stream has it on (CANN's rule).
//!   `aclrtCacheLastTaskOpInfo(info, size)` (size in (0, 64 KiB], else 100000) copies
//!   `info` onto the last task the calling thread captured; it fails with
//!   `ACL_ERROR_RT_INTERNAL_ERROR` (507000, CANN's code) when that task's stream does not
//!   capture or the switch is off. The copies live with the model (`aclmdlRIDestroy` frees
//!   them); profiling data of a replay is not collected by npu-emu.
//! - `aclrtProfTrace(userdata, length, stream)`: `length` in (0, 18] (CANN's
//!   `rtProfTraceUserData`, else 107000); puts a trace point on the stream (capturable). It
//!   marks nothing while no `aclprof` session runs, as in CANN.
//! - `aclrtGetHardwareSyncAddr`: the address Cube/Vector cores synchronize through. npu-emu
//!   gives each device context 64 bytes of device memory for it; kernels compiled for the
//!   CPU synchronize without it.

use crate::ffi::{boundary, non_null, out};
use crate::globals::{OP_INFOS, OP_INFO_CACHE_SWITCH as CACHE_SWITCH, SYNC_ADDRS};
use crate::runtime::{self, Runtime, StreamEntry};
use npu_emu::codes::*;
use npu_emu::stream::Op;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// CANN's `MAX_SHAPE_INFO_SIZE`.
const MAX_OP_INFO: usize = 64 * 1024;
/// `sizeof(rtProfTraceUserData)`: u64 id, u64 modelId, u16 tagId (packed).
const PROF_TRACE_MAX: i32 = 18;

/// The model stream `h` captures into (not a bound model), if any.
fn capturing_model(rt: &Runtime, h: u64) -> Option<u64> {
    let reg = rt.reg.lock();
    reg.members.get(&h).filter(|m| !m.bound).map(|m| m.model)
}

/// `ACL_STREAM_ATTR_CACHE_OP_INFO` set on stream `e` (`aclrtSetStreamAttribute`).
pub fn set_cache_switch(e: &StreamEntry, v: u32) -> Result<()> {
    if v > 1 {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("value->cacheOpInfoSwitch = {v} is invalid: expected 0 (off) or 1 (on)"),
        ));
    }
    CACHE_SWITCH.lock().insert(e.handle, v);
    Ok(())
}

/// `ACL_STREAM_ATTR_CACHE_OP_INFO` as it reads on stream `e`: the switch of the capture it
/// takes part in (its origin stream's), 0 when it does not capture.
pub fn cache_switch(rt: &Runtime, e: &StreamEntry) -> u32 {
    let Some(model) = capturing_model(rt, e.handle) else {
        return 0;
    };
    let origin = rt
        .reg
        .lock()
        .members
        .iter()
        .find(|(_, m)| m.model == model && m.origin && !m.bound)
        .map(|(&h, _)| h);
    origin
        .and_then(|o| CACHE_SWITCH.lock().get(&o).copied())
        .unwrap_or(0)
}

/// Forget what belongs to model `h` (it was destroyed).
pub fn forget_model(h: u64) {
    OP_INFOS.lock().remove(&h);
}

/// Op informations cached on model `h`'s tasks (for its debug print).
pub fn op_info_count(h: u64) -> usize {
    OP_INFOS.lock().get(&h).map_or(0, Vec::len)
}

/// The stream entry whose stream has [`npu_emu::stream::Stream::key`] `key`.
fn stream_by_key(rt: &Runtime, key: usize) -> Option<Arc<StreamEntry>> {
    rt.reg
        .lock()
        .streams
        .values()
        .find(|e| e.stream.key() == key)
        .cloned()
}

/// `aclError aclrtGetThreadLastTaskId(uint32_t *taskId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetThreadLastTaskId(taskId: *mut u32) -> i32 {
    boundary("aclrtGetThreadLastTaskId", || {
        non_null(taskId, "taskId")?;
        runtime::get()?;
        let id = npu_emu::stream::last_submission().map_or(0, |(_, n)| n as u32);
        out(taskId, "taskId", id)
    })
}

/// `aclError aclrtCacheLastTaskOpInfo(const void *const infoPtr, const size_t infoSize)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCacheLastTaskOpInfo(infoPtr: *const c_void, infoSize: usize) -> i32 {
    boundary("aclrtCacheLastTaskOpInfo", || {
        non_null(infoPtr, "infoPtr")?;
        if infoSize == 0 || infoSize > MAX_OP_INFO {
            return Err(Error::invalid(format!(
                "infoSize = {infoSize} is out of range: expected (0, {MAX_OP_INFO}] bytes"
            )));
        }
        let rt = runtime::get()?;
        let not_captured = || {
            Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                "the calling thread's last task was not captured into a model (aclmdlRICaptureBegin): op information is cached only on captured tasks",
            )
        };
        let (key, _) = npu_emu::stream::last_submission().ok_or_else(not_captured)?;
        let e = stream_by_key(&rt, key).ok_or_else(not_captured)?;
        let model = capturing_model(&rt, e.handle).ok_or_else(not_captured)?;
        if cache_switch(&rt, &e) == 0 {
            return Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!(
                    "the op information switch of the capture of {} is off: set ACL_STREAM_ATTR_CACHE_OP_INFO to 1 on the capturing stream first",
                    e.stream.label()
                ),
            ));
        }
        // SAFETY: non-null host memory of infoSize bytes per the ACL contract.
        let bytes = unsafe { std::slice::from_raw_parts(infoPtr as *const u8, infoSize) }.to_vec();
        OP_INFOS.lock().entry(model).or_default().push(bytes);
        Ok(())
    })
}

/// `aclError aclrtProfTrace(void *userdata, int32_t length, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtProfTrace(
    userdata: *mut c_void,
    length: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtProfTrace", || {
        non_null(userdata, "userdata")?;
        if length <= 0 || length > PROF_TRACE_MAX {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("length = {length} is out of range: expected (0, {PROF_TRACE_MAX}] bytes"),
            ));
        }
        let mut data = [0u8; PROF_TRACE_MAX as usize];
        // SAFETY: the caller's userdata holds `length` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(userdata as *const u8, data.as_mut_ptr(), length as usize)
        };
        let id = u64::from_le_bytes(data[0..8].try_into().expect("8 bytes"));
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        e.stream.enqueue_op(Op::run(
            "prof_trace",
            format!("profiling trace point {id}"),
            || Ok(()),
        ))
    })
}

/// `aclError aclrtGetHardwareSyncAddr(void **addr)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetHardwareSyncAddr(addr: *mut *mut c_void) -> i32 {
    boundary("aclrtGetHardwareSyncAddr", || {
        non_null(addr, "addr")?;
        let rt = runtime::get()?;
        let ctx = rt.current_context()?;
        let mut map = SYNC_ADDRS.lock();
        let a = match map.get(&ctx.handle) {
            Some(&a) if rt.node.lookup(a).is_some() => a,
            _ => {
                let info = rt.node.alloc(ctx.physical, 64, 64)?;
                map.insert(ctx.handle, info.addr);
                info.addr
            }
        };
        out(addr, "addr", a as *mut c_void)
    })
}
