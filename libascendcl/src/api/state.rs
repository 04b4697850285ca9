//! Device and stream state callbacks, task abort, stream stop, device errors and process
//! snapshots:
//! `aclrtRegDeviceStateCallback`, `aclrtRegStreamStateCallback`,
//! `aclrtSetDeviceTaskAbortCallback`, `aclrtDeviceTaskAbort`, `aclrtStreamStop`,
//! `aclrtGetErrorVerbose`, `aclrtRepairError`, `aclrtGetMemUceInfo`, `aclrtMemUceRepair`,
//! `aclrtSnapShotProcessLock`/`Unlock`/`Backup`/`Restore`.
//!
//! Callbacks (CANN 8.5's `DeviceStateCallbackManager`, `StreamStateCallbackManager`,
//! `Runtime::SetTaskAbortCallBack`): registered by a unique name; a NULL callback removes
//! the name (no error if absent); a name registered twice is `ACL_ERROR_RT_PARAM_INVALID`
//! (107000); a NULL name is `ACL_ERROR_INVALID_PARAM`. They live for the process and run
//! without our locks held:
//! - device: `SET_PRE`/`SET_POST` around the first `aclrtSetDevice` of a device (when its
//!   default context is created), `RESET_PRE`/`RESET_POST` around the reset that releases
//!   it (not at `aclFinalize`, as CANN skips them when the process exits);
//! - stream: `CREATE_POST` after a stream is created (also a context's default stream),
//!   `DESTROY_PRE` before it is destroyed (also by a reset or a context destroy);
//! - task abort: `PRE` and `POST` around the kill step of `aclrtDeviceTaskAbort`, with the
//!   time left of its timeout; a callback returning non-zero stops the abort with that code.
//!
//! `aclrtDeviceTaskAbort(deviceId, timeout)`: discards every task not started on the
//! device's streams, lets running ones end (a task blocked on a notify, count notify or IPC
//! event gives up within 0.2 s), then clears the streams' errors: they are usable again.
//! `timeout` is in ms, 0 = no limit, at most 36 minutes (else 107000); running out of it is
//! `ACL_ERROR_RT_WAIT_TIMEOUT` (107019).
//!
//! `aclrtStreamStop`: CANN stops only streams made for device-side scheduling
//! (`ACL_STREAM_DEVICE_USE_ONLY`, the MC2 streams) in the current context; any other stream
//! is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000), a stream of another context is
//! `ACL_ERROR_RT_STREAM_CONTEXT` (107003). A stopped stream's pending tasks are discarded.
//!
//! Errors: CANN's runtime implements `aclrtGetErrorVerbose`/`aclrtRepairError` only on the
//! Ascend 910_96 and 950 families (chip feature `DFX_ERR_GET_AND_REPAIR`); on the
//! Ascend910B / 910_93 SoCs we emulate by default they return
//! `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` as there. With another `NPU_EMU_SOC` the verbose error
//! is the device's first failed task since the last repair or abort: no error → type
//! `ACL_RT_NO_ERROR`; an AI Core fault (507015/507016, 507034..507036) →
//! `ACL_RT_ERROR_AICORE` with detail `ACL_RT_AICORE_ERROR_SW`; anything else →
//! `ACL_RT_ERROR_OTHERS`. `tryRepair` is 1 when there is an error; `aclrtRepairError`
//! requires it (else 107000) and clears the record. The emulated HBM has no uncorrectable
//! errors: `aclrtGetMemUceInfo` reports none (it needs a current context on the device, else
//! 107002), `aclrtMemUceRepair` checks its ranges (device memory of this process on that
//! device, at most 20, reserved fields zero) and has nothing to repair.
//!
//! Snapshots (CANN's `GlobalStateManager`; supported on Ascend910B): `Lock` moves the
//! process from RUNNING to LOCKED (else `ACL_ERROR_SNAPSHOT_LOCK_FAILED` 507906); `Backup`
//! (LOCKED only, else 507908) waits for every stream and copies this process's device
//! allocations to host memory; `Restore` (BACKED_UP only, else 507909) writes them back
//! and returns to LOCKED; `Unlock` (LOCKED or BACKED_UP, else 507907) returns to RUNNING.

use crate::ffi::{boundary, non_null};
use crate::globals::{
    ABORT_CBS, DEVICE_CBS, DEVICE_ERRORS, SNAPSHOT, STATE_CBS_ANY as ANY, STREAM_CBS,
};
use crate::runtime::{self, Runtime};
use npu_emu::codes::*;
use npu_emu::config::LogLevel;
use npu_emu::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::{c_void, CStr};
use std::os::raw::c_char;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `aclrtDeviceState`.
pub const DEVICE_SET_PRE: i32 = 0;
pub const DEVICE_SET_POST: i32 = 1;
pub const DEVICE_RESET_PRE: i32 = 2;
pub const DEVICE_RESET_POST: i32 = 3;
/// `aclrtStreamState`.
pub const STREAM_CREATE_POST: i32 = 1;
pub const STREAM_DESTROY_PRE: i32 = 2;
/// `aclrtDeviceTaskAbortStage`.
const ABORT_PRE: i32 = 0;
const ABORT_POST: i32 = 1;
/// `ACL_STREAM_DEVICE_USE_ONLY`.
const ACL_STREAM_DEVICE_USE_ONLY: u32 = 0x20;
/// CANN's `TASK_ABORT_TIMEOUT_MAX`: 36 minutes in ms.
const TASK_ABORT_TIMEOUT_MAX: u32 = 36 * 60 * 1000;
/// `ACL_RT_MEM_UCE_INFO_MAX_NUM` / `RT_MAX_RECORD_PA_NUM_PER_DEV`.
const UCE_MAX: usize = 20;

/// `aclrtDeviceStateCallback`.
pub(crate) type DeviceCb = unsafe extern "C" fn(i32, i32, *mut c_void);
/// `aclrtStreamStateCallback`.
pub(crate) type StreamCb = unsafe extern "C" fn(*mut c_void, i32, *mut c_void);
/// `aclrtDeviceTaskAbortCallback`.
pub(crate) type AbortCb = unsafe extern "C" fn(i32, i32, u32, *mut c_void) -> i32;

fn update_any() {
    let any = !DEVICE_CBS.lock().is_empty() || !STREAM_CBS.lock().is_empty();
    ANY.store(any, Ordering::SeqCst);
}

/// Whether device or stream state callbacks are registered.
pub fn has_callbacks() -> bool {
    ANY.load(Ordering::SeqCst)
}

/// Run the device state callbacks for `logical` entering `state`.
pub fn device_state(logical: i32, state: i32) {
    if !has_callbacks() {
        return;
    }
    let cbs: Vec<(DeviceCb, usize)> = DEVICE_CBS.lock().values().copied().collect();
    for (f, args) in cbs {
        // SAFETY: the user's callback with the documented arguments.
        unsafe { f(logical, state, args as *mut c_void) };
    }
}

/// Run the stream state callbacks for stream handle `h` entering `state`.
pub fn stream_state(h: u64, state: i32) {
    if !has_callbacks() {
        return;
    }
    let cbs: Vec<(StreamCb, usize)> = STREAM_CBS.lock().values().copied().collect();
    for (f, args) in cbs {
        // SAFETY: the user's callback with the documented arguments.
        unsafe { f(h as *mut c_void, state, args as *mut c_void) };
    }
}

fn reg_name(regName: *const c_char) -> Result<String> {
    non_null(regName, "regName")?;
    // SAFETY: non-null, NUL-terminated per the ACL contract.
    let name = unsafe { CStr::from_ptr(regName) }
        .to_string_lossy()
        .into_owned();
    Ok(name)
}

fn register<F: Copy>(
    map: &Mutex<BTreeMap<String, (F, usize)>>,
    name: String,
    cb: Option<F>,
    args: *mut c_void,
) -> Result<()> {
    let mut m = map.lock();
    match cb {
        None => {
            m.remove(&name);
        }
        Some(f) => {
            if m.contains_key(&name) {
                return Err(Error::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("regName {name:?} has already been registered (pass a NULL callback to remove it first)"),
                ));
            }
            m.insert(name, (f, args as usize));
        }
    }
    Ok(())
}

/// `aclError aclrtRegDeviceStateCallback(const char *regName, aclrtDeviceStateCallback callback, void *args)`
#[no_mangle]
pub unsafe extern "C" fn aclrtRegDeviceStateCallback(
    regName: *const c_char,
    callback: Option<DeviceCb>,
    args: *mut c_void,
) -> i32 {
    boundary("aclrtRegDeviceStateCallback", || {
        register(&DEVICE_CBS, reg_name(regName)?, callback, args)?;
        update_any();
        Ok(())
    })
}

/// `aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback, void *args)`
#[no_mangle]
pub unsafe extern "C" fn aclrtRegStreamStateCallback(
    regName: *const c_char,
    callback: Option<StreamCb>,
    args: *mut c_void,
) -> i32 {
    boundary("aclrtRegStreamStateCallback", || {
        register(&STREAM_CBS, reg_name(regName)?, callback, args)?;
        update_any();
        Ok(())
    })
}

/// `aclError aclrtSetDeviceTaskAbortCallback(const char *regName, aclrtDeviceTaskAbortCallback callback, void *args)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetDeviceTaskAbortCallback(
    regName: *const c_char,
    callback: Option<AbortCb>,
    args: *mut c_void,
) -> i32 {
    boundary("aclrtSetDeviceTaskAbortCallback", || {
        register(&ABORT_CBS, reg_name(regName)?, callback, args)
    })
}

/// Run the task-abort callbacks of `stage`; the first failure stops them.
fn abort_callbacks(logical: i32, stage: i32, left_ms: u32) -> Result<()> {
    let cbs: Vec<(String, (AbortCb, usize))> = ABORT_CBS
        .lock()
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    for (name, (f, args)) in cbs {
        // SAFETY: the user's callback with the documented arguments.
        let r = unsafe { f(logical, stage, left_ms, args as *mut c_void) };
        if r != 0 {
            let st = if stage == ABORT_PRE { "PRE" } else { "POST" };
            return Err(Error::new(
                r,
                format!("the task abort callback {name:?} failed with {r} at stage ACL_RT_DEVICE_TASK_ABORT_{st}"),
            ));
        }
    }
    Ok(())
}

fn task_abort(logical: i32, timeout: u32) -> Result<()> {
    if timeout > TASK_ABORT_TIMEOUT_MAX {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("timeout = {timeout} ms is out of range: expected 0 (no limit) ..= {TASK_ABORT_TIMEOUT_MAX} ms (36 minutes)"),
        ));
    }
    let rt = runtime::get()?;
    rt.physical_device(logical)?;
    let start = Instant::now();
    let left = |step: &str| -> Result<u32> {
        if timeout == 0 {
            return Ok(0);
        }
        let spent = start.elapsed().as_millis() as u64;
        if spent > timeout as u64 {
            return Err(Error::new(
                ACL_ERROR_RT_WAIT_TIMEOUT,
                format!("the task abort of device {logical} did not finish within {timeout} ms (at: {step})"),
            ));
        }
        Ok((timeout as u64 - spent).max(1) as u32)
    };
    let streams = rt.device_streams(logical);
    let mut discarded = 0;
    for s in &streams {
        discarded += s.stream.abort();
    }
    let t = left("abort")?;
    abort_callbacks(logical, ABORT_PRE, t)?;
    // Kill: running tasks end (blocked waits give up, see `npu_emu::stream::task_aborted`).
    for s in &streams {
        let t = left("kill")?;
        let bound = (timeout != 0).then(|| Duration::from_millis(t as u64));
        if let Err(e) = s.stream.synchronize(bound) {
            if e.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT {
                return Err(Error::new(
                    ACL_ERROR_RT_WAIT_TIMEOUT,
                    format!(
                        "the task abort of device {logical} timed out after {timeout} ms: {}",
                        e.msg
                    ),
                ));
            }
        }
    }
    let t = left("kill")?;
    abort_callbacks(logical, ABORT_POST, t)?;
    // Clean: the streams and the device are usable again.
    for s in &streams {
        let _ = s.stream.take_error();
    }
    DEVICE_ERRORS.lock().remove(&logical);
    rt.log(
        LogLevel::Info,
        &format!(
            "aclrtDeviceTaskAbort: device {logical}: {discarded} pending task(s) of {} stream(s) discarded",
            streams.len()
        ),
    );
    Ok(())
}

/// `aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceTaskAbort(deviceId: i32, timeout: u32) -> i32 {
    boundary("aclrtDeviceTaskAbort", || task_abort(deviceId, timeout))
}

/// `aclError aclrtStreamStop(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtStreamStop(stream: *mut c_void) -> i32 {
    boundary("aclrtStreamStop", || {
        non_null(stream, "stream")?;
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let ctx = rt.current_context()?;
        if e.ctx != ctx.handle {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CONTEXT,
                format!(
                    "{} belongs to another context than the current one ({:#x})",
                    e.stream.label(),
                    ctx.handle
                ),
            ));
        }
        if e.flags & ACL_STREAM_DEVICE_USE_ONLY == 0 {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "{} was not created with ACL_STREAM_DEVICE_USE_ONLY: CANN stops only such (MC2) streams",
                    e.stream.label()
                ),
            ));
        }
        e.stream.abort();
        Ok(())
    })
}

/// Note that a task of device `logical` failed with `e` (stream error hook).
pub fn note_task_error(logical: i32, e: &Error) {
    DEVICE_ERRORS.lock().entry(logical).or_insert(e.code);
}

/// Whether the emulated SoC is one CANN gives `aclrtGetErrorVerbose` (910_96, 950 families).
fn error_verbose_supported(rt: &Runtime) -> bool {
    let soc = rt.cfg.soc_name.as_str();
    !(soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93"))
}

fn error_verbose_refused(rt: &Runtime) -> Error {
    Error::new(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        format!(
            "{} does not support it: CANN's runtime offers it only on the Ascend 910_96 and 950 families (NPU_EMU_SOC)",
            rt.cfg.soc_name
        ),
    )
}

/// `aclrtErrorInfo` (acl_rt.h): 4 bytes of flags, the type, then the detail union
/// (`aclrtMemUceInfoArray`, 8 + 20 * 80 bytes, at offset 8).
#[repr(C)]
struct ErrorInfoHead {
    try_repair: u8,
    has_detail: u8,
    reserved: [u8; 2],
    error_type: i32,
}

/// `aclrtMemUceInfo`: addr, len, reserved[UCE_INFO_RESERVED_SIZE = 8].
#[repr(C)]
#[derive(Clone, Copy)]
struct MemUceInfo {
    addr: *mut c_void,
    len: usize,
    reserved: [usize; 8],
}

const ACL_RT_NO_ERROR: i32 = 0;
const ACL_RT_ERROR_AICORE: i32 = 3;
const ACL_RT_ERROR_OTHERS: i32 = 65535;
const ACL_RT_AICORE_ERROR_SW: i32 = 1;

/// `aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetErrorVerbose(deviceId: i32, errorInfo: *mut c_void) -> i32 {
    boundary("aclrtGetErrorVerbose", || {
        non_null(errorInfo, "errorInfo")?;
        let rt = runtime::get()?;
        if !error_verbose_supported(&rt) {
            return Err(error_verbose_refused(&rt));
        }
        rt.physical_device(deviceId)?;
        let code = DEVICE_ERRORS.lock().get(&deviceId).copied();
        let (ty, detail) = match code {
            None => (ACL_RT_NO_ERROR, None),
            // ACL_ERROR_RT_AICORE_EXCEPTION, _TRAP_EXCEPTION, ACL_ERROR_RT_VECTOR_CORE_*.
            Some(507015 | 507016 | 507034..=507036) => {
                (ACL_RT_ERROR_AICORE, Some(ACL_RT_AICORE_ERROR_SW))
            }
            Some(_) => (ACL_RT_ERROR_OTHERS, None),
        };
        let head = ErrorInfoHead {
            try_repair: code.is_some() as u8,
            has_detail: detail.is_some() as u8,
            reserved: [0; 2],
            error_type: ty,
        };
        // SAFETY: errorInfo is non-null and points to an aclrtErrorInfo (head, then the
        // detail union at offset 8) per the ACL contract.
        unsafe {
            (errorInfo as *mut ErrorInfoHead).write_unaligned(head);
            let d = (errorInfo as *mut u8).add(8);
            std::ptr::write_bytes(d, 0, 8);
            if let Some(v) = detail {
                (d as *mut i32).write_unaligned(v);
            }
        }
        Ok(())
    })
}

/// `aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo)`
#[no_mangle]
pub unsafe extern "C" fn aclrtRepairError(deviceId: i32, errorInfo: *const c_void) -> i32 {
    boundary("aclrtRepairError", || {
        non_null(errorInfo, "errorInfo")?;
        let rt = runtime::get()?;
        if !error_verbose_supported(&rt) {
            return Err(error_verbose_refused(&rt));
        }
        // SAFETY: non-null aclrtErrorInfo per the ACL contract.
        let head = unsafe { (errorInfo as *const ErrorInfoHead).read_unaligned() };
        if head.try_repair == 0 {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "errorInfo->tryRepair is 0: only an error aclrtGetErrorVerbose marked for repair (tryRepair 1) can be repaired",
            ));
        }
        rt.physical_device(deviceId)?;
        DEVICE_ERRORS.lock().remove(&deviceId);
        Ok(())
    })
}

/// The current context must be on `logical` (CANN's `CheckCurCtxValid`).
fn require_context_on(rt: &Runtime, logical: i32) -> Result<()> {
    rt.physical_device(logical)?;
    let c = rt.current_context()?;
    if c.logical != logical {
        return Err(Error::new(
            ACL_ERROR_RT_CONTEXT_NULL,
            format!(
                "the current context is on device {}, not on deviceId {logical}: set device {logical} first",
                c.logical
            ),
        ));
    }
    Ok(())
}

/// `aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize, size_t *retSize)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetMemUceInfo(
    deviceId: i32,
    memUceInfoArray: *mut c_void,
    arraySize: usize,
    retSize: *mut usize,
) -> i32 {
    boundary("aclrtGetMemUceInfo", || {
        non_null(memUceInfoArray, "memUceInfoArray")?;
        non_null(retSize, "retSize")?;
        let rt = runtime::get()?;
        require_context_on(&rt, deviceId)?;
        let _ = arraySize;
        // The emulated HBM has no uncorrectable errors.
        crate::ffi::out(retSize, "retSize", 0)
    })
}

/// `aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemUceRepair(
    deviceId: i32,
    memUceInfoArray: *mut c_void,
    arraySize: usize,
) -> i32 {
    boundary("aclrtMemUceRepair", || {
        non_null(memUceInfoArray, "memUceInfoArray")?;
        if arraySize > UCE_MAX {
            return Err(Error::invalid(format!(
                "arraySize = {arraySize} exceeds ACL_RT_MEM_UCE_INFO_MAX_NUM ({UCE_MAX})"
            )));
        }
        let rt = runtime::get()?;
        require_context_on(&rt, deviceId)?;
        let physical = rt.physical_device(deviceId)?;
        // SAFETY: the caller passes arraySize aclrtMemUceInfo entries.
        let items =
            unsafe { std::slice::from_raw_parts(memUceInfoArray as *const MemUceInfo, arraySize) };
        for (i, it) in items.iter().enumerate() {
            if it.reserved.iter().any(|&r| r != 0) {
                return Err(Error::invalid(format!(
                    "memUceInfoArray[{i}].reserved is not zero: set only addr and len"
                )));
            }
            let a = it.addr as u64;
            match rt.node.lookup(a) {
                Some(al) if al.device == physical && a + it.len as u64 <= al.addr + al.size => {}
                _ => {
                    return Err(Error::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!(
                            "memUceInfoArray[{i}] ({a:#x}, {} bytes) is not device memory of device {deviceId} in this process",
                            it.len
                        ),
                    ))
                }
            }
        }
        // Nothing to repair: the emulated HBM never reports an uncorrectable error.
        Ok(())
    })
}

/// `aclrtProcessState` of the snapshot state machine (plus BACKED_UP, internal).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Snap {
    Running,
    Locked,
    BackedUp,
}

/// The process's snapshot state ([`SNAPSHOT`]).
pub(crate) struct SnapState {
    pub(crate) state: Snap,
    /// Backed-up device allocations: address → bytes.
    pub(crate) saved: BTreeMap<u64, Vec<u8>>,
}

fn snap_state_name(s: Snap) -> &'static str {
    match s {
        Snap::Running => "RUNNING",
        Snap::Locked => "LOCKED",
        Snap::BackedUp => "BACKED_UP",
    }
}

/// `aclError aclrtSnapShotProcessLock()`
#[no_mangle]
pub unsafe extern "C" fn aclrtSnapShotProcessLock() -> i32 {
    boundary("aclrtSnapShotProcessLock", || {
        runtime::get()?;
        let mut s = SNAPSHOT.lock();
        if s.state != Snap::Running {
            return Err(Error::new(
                ACL_ERROR_SNAPSHOT_LOCK_FAILED,
                format!(
                    "the process is {}, not RUNNING: it is already locked",
                    snap_state_name(s.state)
                ),
            ));
        }
        s.state = Snap::Locked;
        Ok(())
    })
}

/// `aclError aclrtSnapShotProcessUnlock()`
#[no_mangle]
pub unsafe extern "C" fn aclrtSnapShotProcessUnlock() -> i32 {
    boundary("aclrtSnapShotProcessUnlock", || {
        runtime::get()?;
        let mut s = SNAPSHOT.lock();
        if s.state == Snap::Running {
            return Err(Error::new(
                ACL_ERROR_SNAPSHOT_UNLOCK_FAILED,
                "the process is RUNNING, not LOCKED or BACKED_UP: call aclrtSnapShotProcessLock first",
            ));
        }
        s.state = Snap::Running;
        s.saved.clear();
        Ok(())
    })
}

fn all_streams(rt: &Arc<Runtime>) -> Vec<Arc<crate::runtime::StreamEntry>> {
    rt.reg.lock().streams.values().cloned().collect()
}

/// `aclError aclrtSnapShotProcessBackup()`
#[no_mangle]
pub unsafe extern "C" fn aclrtSnapShotProcessBackup() -> i32 {
    boundary("aclrtSnapShotProcessBackup", || {
        let rt = runtime::get()?;
        let mut s = SNAPSHOT.lock();
        if s.state != Snap::Locked {
            return Err(Error::new(
                ACL_ERROR_SNAPSHOT_BACKUP_FAILED,
                format!(
                    "the process is {}, not LOCKED: call aclrtSnapShotProcessLock first",
                    snap_state_name(s.state)
                ),
            ));
        }
        for e in all_streams(&rt) {
            e.stream.synchronize(None).map_err(|err| {
                Error::new(
                    ACL_ERROR_SNAPSHOT_BACKUP_FAILED,
                    format!("{} failed while draining it: {}", e.stream.label(), err.msg),
                )
            })?;
        }
        let mut saved = BTreeMap::new();
        for a in rt.node.allocations() {
            let p = rt.node.check(a.addr, a.size, "allocation")?;
            // SAFETY: `check` returned the alias of a live allocation of `a.size` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(p, a.size as usize) }.to_vec();
            saved.insert(a.addr, bytes);
        }
        s.saved = saved;
        s.state = Snap::BackedUp;
        Ok(())
    })
}

/// `aclError aclrtSnapShotProcessRestore()`
#[no_mangle]
pub unsafe extern "C" fn aclrtSnapShotProcessRestore() -> i32 {
    boundary("aclrtSnapShotProcessRestore", || {
        let rt = runtime::get()?;
        let mut s = SNAPSHOT.lock();
        if s.state != Snap::BackedUp {
            return Err(Error::new(
                ACL_ERROR_SNAPSHOT_RESTORE_FAILED,
                format!(
                    "the process is {}, not BACKED_UP: call aclrtSnapShotProcessBackup first",
                    snap_state_name(s.state)
                ),
            ));
        }
        for (addr, bytes) in &s.saved {
            // An allocation freed since the backup is not restored.
            if let Ok(p) = rt.node.check(*addr, bytes.len() as u64, "allocation") {
                // SAFETY: `check` returned the alias of a live range of `bytes.len()` bytes.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
            }
        }
        s.state = Snap::Locked;
        Ok(())
    })
}
