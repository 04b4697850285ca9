//! Model run instances (`aclmdlRI`): stream capture and replay, built models, task groups
//! and updates, debug prints (CANN 8.5 `acl_rt.h`; the machine is [`npu_emu::capture`]).
//!
//! Capture (`aclmdlRICaptureBegin` … `aclmdlRICaptureEnd`): the operations enqueued on the
//! stream go into a new model instead of running. Captured: copies and memsets, kernel
//! launches, HCCL operations, host callbacks, records and waits of events. An event recorded
//! on a capturing stream must come from `aclrtCreateEventExWithFlag` (CANN's rule): it becomes
//! an event of the capture, and a stream that waits for it joins the capture (fork/join);
//! such a stream must end with a record the capturing stream waits for, else
//! `aclmdlRICaptureEnd` returns `ACL_ERROR_RT_STREAM_UNJOINED`. Records, waits and resets of
//! an `ACL_EVENT_EXTERNAL` event stay real in the model: the model records that event, and
//! waits until it is set (recorded and not reset since), at each execution.
//!
//! Codes, as CANN's runtime: a NULL handle argument is `ACL_ERROR_INVALID_PARAM`; capturing
//! the default stream `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`; a stream that already captures
//! `ACL_ERROR_RT_STREAM_CAPTURED`; ending a capture on a stream that does not capture
//! `ACL_ERROR_RT_STREAM_NOT_CAPTURED`, or on a stream that joined but did not begin it,
//! `ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED`; an invalidated capture
//! `ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED`; a task group left open or missing
//! `ACL_ERROR_STREAM_TASK_GROUP_STATUS`; a call that is unsafe during a capture in
//! GLOBAL/THREAD_LOCAL mode (synchronous copies and memsets)
//! `ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT`.
//!
//! Built models (`aclmdlRIBuildBegin`, `aclmdlRIBindStream` … `aclmdlRIBuildEnd`): each bound
//! stream is a lane; lanes bound with flag 0 start when the model runs, the others when an
//! `aclrtActiveStream` or a true `aclrtSwitchStream` starts them; labels jump within them.

use crate::api::errors;
use crate::ffi::{self, out};
use crate::globals::{CAPTURE_EXCHANGE as EXCHANGE, CAPTURE_THREAD_MODES as THREAD_MODES};
use crate::runtime::{
    self, bad_handle, new_handle, timeout_ms, Member, Runtime, MODEL, TASK_GROUP,
};
use npu_emu::capture::{Group, LaneSink, Model, Node, Origin, Status, UpdateSink};
use npu_emu::codes::*;
use npu_emu::stream::{Op, Replay, Sink};
use npu_emu::{Error, Result};
use npu_emu_ffi::os::gettid;
use parking_lot::Mutex;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// `aclmdlRICaptureMode` values.
pub const MODE_GLOBAL: i32 = 0;
pub const MODE_THREAD_LOCAL: i32 = 1;
pub const MODE_RELAXED: i32 = 2;
const MODE_NAMES: [&str; 3] = ["GLOBAL", "THREAD_LOCAL", "RELAXED"];

fn check_mode(mode: i32, arg: &str) -> Result<()> {
    if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{arg} = {mode} is not an aclmdlRICaptureMode: expected 0 (GLOBAL), 1 (THREAD_LOCAL) or 2 (RELAXED)"
            ),
        ));
    }
    Ok(())
}

/// Refuse `what` (a synchronous copy or memset, or an asynchronous copy through pageable
/// memory) when a capture forbids it for this thread, as CANN's `IsCaptureModeSupport`:
/// a capture in GLOBAL mode anywhere in the process, or one this thread began in
/// THREAD_LOCAL mode, forbids it unless this thread exchanged its mode to RELAXED (a
/// thread in THREAD_LOCAL exchange mode is only restricted by its own captures).
pub fn check_unsafe_call(rt: &Runtime, what: &str) -> Result<()> {
    let process = rt.reg.lock().capture_modes;
    if process.iter().all(|&n| n == 0) {
        return Ok(());
    }
    let context_mode = process.iter().position(|&n| n > 0).unwrap_or(3) as i32;
    let thread = THREAD_MODES.with(|t| *t.borrow());
    let thread_mode = thread.iter().position(|&n| n > 0).unwrap_or(3) as i32;
    let exchange = EXCHANGE.with(|e| e.get());
    let refused = match exchange {
        MODE_RELAXED => false,
        MODE_GLOBAL => context_mode == MODE_GLOBAL || thread_mode == MODE_THREAD_LOCAL,
        _ => thread_mode == MODE_GLOBAL || thread_mode == MODE_THREAD_LOCAL,
    };
    if refused {
        let by = if thread_mode < 3 {
            format!(
                "this thread captures in {} mode",
                MODE_NAMES[thread_mode as usize]
            )
        } else {
            format!(
                "a stream captures in {} mode",
                MODE_NAMES[context_mode as usize]
            )
        };
        return Err(Error::new(
            ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
            format!(
                "{what} is not allowed while {by} (this thread's exchange mode is {}): call it before aclmdlRICaptureBegin or after aclmdlRICaptureEnd, or switch this thread to ACL_MODEL_RI_CAPTURE_MODE_RELAXED with aclmdlRICaptureThreadExchangeMode",
                MODE_NAMES[exchange as usize]
            ),
        ));
    }
    Ok(())
}

/// The model behind an `aclmdlRI` handle.
pub fn model(rt: &Runtime, h: *mut c_void, arg: &str) -> Result<Arc<Model>> {
    ffi::non_null(h, arg)?;
    rt.reg
        .lock()
        .models
        .get(&(h as u64))
        .cloned()
        .ok_or_else(|| bad_handle(&MODEL, arg, h as u64))
}

/// What `aclmdlRICaptureGetInfo` reports for `stream`: `(aclmdlRICaptureStatus, aclmdlRI)`.
/// NONE (0) and NULL when the stream does not capture; ACTIVE (1) with the model while it
/// captures; INVALIDATED (2) with the model once an error invalidated the capture.
pub fn capture_info(stream: *mut c_void) -> Result<(i32, *mut c_void)> {
    let rt = runtime::get()?;
    let s = rt.stream_entry(stream, "stream")?;
    Ok(capture_info_of(&rt, s.handle))
}

/// [`capture_info`] of the stream with handle `handle`.
pub fn capture_info_of(rt: &runtime::Runtime, handle: u64) -> (i32, *mut c_void) {
    let reg = rt.reg.lock();
    match reg.members.get(&handle) {
        Some(m) if !m.bound => {
            let st = reg.models.get(&m.model).map(|x| x.status());
            let status = match st {
                Some(Status::Invalid(_)) => 2,
                _ => 1,
            };
            (status, m.model as *mut c_void)
        }
        _ => (0, std::ptr::null_mut()),
    }
}

fn stream_name(rt: &Runtime, h: u64) -> String {
    rt.reg.lock().streams.peek(h).map_or_else(
        || format!("stream {h:#x}"),
        |s| s.stream.label().to_string(),
    )
}

/// Put `stream` (entry handle `sh`) into lane `lane` of `model` (handle `mh`).
fn join(rt: &Runtime, sh: u64, m: &Arc<Model>, mh: u64, lane: usize, member: Member) -> Result<()> {
    let s = rt.reg.lock().streams.get(sh, "stream")?.clone();
    let sink: Arc<dyn Sink> = Arc::new(LaneSink {
        model: m.clone(),
        lane,
        stream: s.stream.label().to_string(),
    });
    debug_assert_eq!(member.model, mh);
    rt.reg.lock().members.insert(sh, member);
    s.stream.set_sink(Some(sink));
    Ok(())
}

/// Take every stream of the capture `mh` out of it (capture end or failure).
fn leave_capture(rt: &Runtime, mh: u64) {
    let streams: Vec<Arc<runtime::StreamEntry>> = {
        let mut reg = rt.reg.lock();
        let hs: Vec<u64> = reg
            .members
            .iter()
            .filter(|(_, m)| m.model == mh && !m.bound)
            .map(|(&h, _)| h)
            .collect();
        for h in &hs {
            if let Some(m) = reg.members.remove(h) {
                if m.origin {
                    let i = m.mode.clamp(0, 2) as usize;
                    reg.capture_modes[i] = reg.capture_modes[i].saturating_sub(1);
                }
            }
        }
        reg.captured_events.retain(|_, (m, _)| *m != mh);
        hs.iter()
            .filter_map(|h| reg.streams.peek(*h).cloned())
            .collect()
    };
    for s in streams {
        s.stream.set_sink(None);
    }
}

/// `aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureBegin(stream: *mut c_void, mode: i32) -> i32 {
    errors::boundary("aclmdlRICaptureBegin", || {
        ffi::non_null(stream, "stream")?;
        check_mode(mode, "mode")?;
        let rt = runtime::get()?;
        let s = rt.stream_entry(stream, "stream")?;
        if s.is_default {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "{} is a default stream, which cannot be captured: capture a stream made by aclrtCreateStream",
                    s.stream.label()
                ),
            ));
        }
        let (mh, id) = new_handle(&MODEL);
        {
            let reg = rt.reg.lock();
            if let Some(m) = reg.members.get(&s.handle) {
                return Err(if m.bound {
                    Error::new(
                        ACL_ERROR_RT_STREAM_MODEL,
                        format!(
                            "{} is bound to model {:#x} (aclmdlRIBindStream): unbind it before capturing it",
                            s.stream.label(),
                            m.model
                        ),
                    )
                } else {
                    Error::new(
                        ACL_ERROR_RT_STREAM_CAPTURED,
                        format!(
                            "{} is already capturing into model {:#x}",
                            s.stream.label(),
                            m.model
                        ),
                    )
                });
            }
            if reg.updates.contains_key(&s.handle) {
                return Err(Error::new(
                    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                    format!(
                        "{} is in a task update (aclmdlRICaptureTaskUpdateBegin): end it first",
                        s.stream.label()
                    ),
                ));
            }
        }
        let m = Model::new(id, Origin::Captured, s.logical, Some(s.stream.label()));
        rt.reg.lock().models.insert(mh, m.clone());
        join(
            &rt,
            s.handle,
            &m,
            mh,
            0,
            Member {
                model: mh,
                lane: 0,
                origin: true,
                bound: false,
                mode,
                tid: gettid(),
            },
        )?;
        rt.reg.lock().capture_modes[mode as usize] += 1;
        THREAD_MODES.with(|t| t.borrow_mut()[mode as usize] += 1);
        Ok(())
    })
}

/// `aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureEnd(stream: *mut c_void, modelRI: *mut *mut c_void) -> i32 {
    errors::boundary("aclmdlRICaptureEnd", || {
        ffi::non_null(stream, "stream")?;
        ffi::non_null(modelRI, "modelRI")?;
        let rt = runtime::get()?;
        let s = rt.stream_entry(stream, "stream")?;
        let member = rt.reg.lock().members.get(&s.handle).cloned();
        let member = match member {
            Some(m) if !m.bound => m,
            _ => {
                return Err(Error::new(
                    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                    format!(
                        "{} is not capturing (call aclmdlRICaptureBegin on it first)",
                        s.stream.label()
                    ),
                ))
            }
        };
        if !member.origin {
            let origin = origin_stream(&rt, member.model);
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
                format!(
                    "{} joined the capture of model {:#x} through an event but did not begin it: end the capture on {origin}, which began it",
                    s.stream.label(),
                    member.model
                ),
            ));
        }
        if member.mode == MODE_THREAD_LOCAL && member.tid != gettid() {
            leave_capture_thread(member.mode);
            leave_capture(&rt, member.model);
            drop_model(&rt, member.model);
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                format!(
                    "the capture on {} was begun in THREAD_LOCAL mode by thread {} and must end on that thread (this is thread {}); the capture is discarded",
                    s.stream.label(),
                    member.tid,
                    gettid()
                ),
            ));
        }
        leave_capture_thread(member.mode);
        let m = model(&rt, member.model as *mut c_void, "modelRI")?;
        let r = m.complete();
        leave_capture(&rt, member.model);
        if let Err(e) = r {
            drop_model(&rt, member.model);
            return Err(Error::new(
                e.code,
                format!("{} (the capture is discarded)", e.msg),
            ));
        }
        out(modelRI, "modelRI", member.model as *mut c_void)
    })
}

fn leave_capture_thread(mode: i32) {
    THREAD_MODES.with(|t| {
        let mut t = t.borrow_mut();
        let i = mode.clamp(0, 2) as usize;
        t[i] = t[i].saturating_sub(1);
    });
}

fn origin_stream(rt: &Runtime, mh: u64) -> String {
    let h = rt
        .reg
        .lock()
        .members
        .iter()
        .find(|(_, m)| m.model == mh && m.origin)
        .map(|(&h, _)| h);
    h.map_or_else(
        || "the stream that began it".to_string(),
        |h| stream_name(rt, h),
    )
}

/// Forget model `mh` and stop its helper streams (it must not be running).
fn drop_model(rt: &Runtime, mh: u64) {
    let m = {
        let mut reg = rt.reg.lock();
        let m = reg.models.remove(&mh);
        if let Some(m) = &m {
            reg.groups
                .retain(|_, g| g.model().is_some_and(|x| !Arc::ptr_eq(&x, m)));
        }
        m
    };
    if let Some(m) = m {
        m.wait_idle();
        m.shut_down();
    }
    crate::api::task_info::forget_model(mh);
}

/// `aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)`: set this
/// thread's mode for unsafe calls to `*mode`, and give back the previous one in `*mode`.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureThreadExchangeMode(mode: *mut i32) -> i32 {
    errors::boundary("aclmdlRICaptureThreadExchangeMode", || {
        ffi::non_null(mode, "mode")?;
        // SAFETY: non-null, the caller's aclmdlRICaptureMode.
        let new = unsafe { mode.read_unaligned() };
        check_mode(new, "*mode")?;
        let old = EXCHANGE.with(|e| e.replace(new));
        out(mode, "mode", old)
    })
}

/// `aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIExecuteAsync(modelRI: *mut c_void, stream: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIExecuteAsync", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        let s = rt.stream_entry(stream, "stream")?;
        if s.stream.is_capturing() {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "{} is capturing or bound to a model: running model {} inside another model is not supported by npu-emu",
                    s.stream.label(),
                    m.id
                ),
            ));
        }
        if s.logical != m.device {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CONTEXT,
                format!(
                    "model {} belongs to device {}, but {} is a stream of device {}",
                    m.id,
                    m.device,
                    s.stream.label(),
                    s.logical
                ),
            ));
        }
        m.launch(&s.stream)
    })
}

/// `aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout)`: run and wait; `timeout`
/// in milliseconds, -1 = forever.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIExecute(modelRI: *mut c_void, timeout: i32) -> i32 {
    errors::boundary("aclmdlRIExecute", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        let t = timeout_ms(timeout)?;
        m.execute(t)
    })
}

/// `aclError aclmdlRIDestroy(aclmdlRI modelRI)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIDestroy(modelRI: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIDestroy", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        let mh = modelRI as u64;
        let capturing = rt
            .reg
            .lock()
            .members
            .values()
            .any(|x| x.model == mh && !x.bound);
        if capturing {
            return Err(Error::new(
                ACL_ERROR_RT_MODEL_CAPTURED,
                format!(
                    "model {} is still being captured: end the capture (aclmdlRICaptureEnd) first",
                    m.id
                ),
            ));
        }
        if m.running() > 0 {
            return Err(Error::new(
                ACL_ERROR_RT_MODEL_RUNNING,
                format!(
                    "model {} is still running ({} execution(s)): synchronize the stream it runs on first",
                    m.id,
                    m.running()
                ),
            ));
        }
        // Streams still bound to a built model are unbound with it.
        let bound: Vec<u64> = {
            let mut reg = rt.reg.lock();
            let hs: Vec<u64> = reg
                .members
                .iter()
                .filter(|(_, x)| x.model == mh)
                .map(|(&h, _)| h)
                .collect();
            for h in &hs {
                reg.members.remove(h);
            }
            hs
        };
        for h in bound {
            if let Some(s) = rt.reg.lock().streams.peek(h).cloned() {
                s.stream.set_sink(None);
            }
        }
        drop_model(&rt, mh);
        Ok(())
    })
}

/// `aclError aclmdlRIAbort(aclmdlRI modelRI)`: executions in progress or queued stop
/// between tasks (and finish without error).
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIAbort(modelRI: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIAbort", || {
        let rt = runtime::get()?;
        model(&rt, modelRI, "modelRI")?.abort();
        Ok(())
    })
}

/// `aclError aclmdlRIDebugPrint(aclmdlRI modelRI)`: the model's lanes and tasks, one line
/// each, on stdout (CANN prints them to its log).
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIDebugPrint(modelRI: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIDebugPrint", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        use std::io::Write;
        let mut o = std::io::stdout().lock();
        for l in m.describe() {
            let _ = writeln!(o, "[EVENT] ASCENDCL({}): {l}", std::process::id());
        }
        let infos = crate::api::task_info::op_info_count(modelRI as u64);
        if infos > 0 {
            let _ = writeln!(
                o,
                "[EVENT] ASCENDCL({}): {infos} op information record(s) cached (aclrtCacheLastTaskOpInfo)",
                std::process::id()
            );
        }
        let _ = o.flush();
        Ok(())
    })
}

/// `aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)`:
/// write the model as JSON to the file `path` (replaced if it exists).
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIDebugJsonPrint(
    modelRI: *mut c_void,
    path: *const c_char,
    flags: u32,
) -> i32 {
    errors::boundary("aclmdlRIDebugJsonPrint", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        ffi::non_null(path, "path")?;
        // SAFETY: non-null C string from the caller.
        let p = unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        if p.is_empty() {
            return Err(Error::invalid("path is an empty string"));
        }
        let mut v = m.to_json();
        v["flags"] = serde_json::json!(flags);
        let text = serde_json::to_string_pretty(&v).unwrap_or_default();
        std::fs::write(&p, text + "\n").map_err(|e| {
            Error::new(
                ACL_ERROR_RT_FILE_WRITE,
                format!("cannot write the model's JSON to {p}: {e}"),
            )
        })
    })
}

/// `aclError aclmdlRISetName(aclmdlRI modelRI, const char *name)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRISetName(modelRI: *mut c_void, name: *const c_char) -> i32 {
    errors::boundary("aclmdlRISetName", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        ffi::non_null(name, "name")?;
        // SAFETY: non-null C string from the caller.
        let n = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        m.set_name(&n);
        Ok(())
    })
}

/// `aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name)`: the name
/// with its NUL must fit in `maxLen` bytes (`ACL_ERROR_RT_PARAM_INVALID` otherwise).
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIGetName(
    modelRI: *mut c_void,
    maxLen: u32,
    name: *mut c_char,
) -> i32 {
    errors::boundary("aclmdlRIGetName", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        ffi::non_null(name, "name")?;
        let n = m.name();
        if n.len() + 1 > maxLen as usize {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "maxLen = {maxLen} is too small for the model's name ({} bytes with its NUL)",
                    n.len() + 1
                ),
            ));
        }
        // SAFETY: the caller's buffer holds maxLen >= len+1 bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(n.as_ptr(), name as *mut u8, n.len());
            *name.add(n.len()) = 0;
        }
        Ok(())
    })
}

/// `aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)`: a new, empty model to
/// build by binding streams (`flag` is reserved: 0).
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIBuildBegin(modelRI: *mut *mut c_void, flag: u32) -> i32 {
    errors::boundary("aclmdlRIBuildBegin", || {
        ffi::non_null(modelRI, "modelRI")?;
        if flag != 0 {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag = {flag:#x} is reserved and must be 0"),
            ));
        }
        let rt = runtime::get()?;
        let (logical, _) = rt.current_device()?;
        let (mh, id) = new_handle(&MODEL);
        let m = Model::new(id, Origin::Built, logical, None);
        rt.reg.lock().models.insert(mh, m);
        out(modelRI, "modelRI", mh as *mut c_void)
    })
}

/// `ACL_MODEL_STREAM_FLAG_HEAD` (CANN's `RT_HEAD_STREAM`): the lane starts with the model.
pub const STREAM_FLAG_HEAD: u32 = 0;

/// `aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag)`: tasks
/// enqueued on `stream` go into the model from now on; `flag` 0 = head stream (starts when
/// the model runs), anything else = a stream another one activates.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIBindStream(
    modelRI: *mut c_void,
    stream: *mut c_void,
    flag: u32,
) -> i32 {
    errors::boundary("aclmdlRIBindStream", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        ffi::non_null(stream, "stream")?;
        let s = rt.stream_entry(stream, "stream")?;
        if m.origin != Origin::Built {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "model {} was made by a capture: streams are bound only to models made by aclmdlRIBuildBegin",
                    m.id
                ),
            ));
        }
        if s.is_default {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "{} is a default stream, which cannot be bound to a model",
                    s.stream.label()
                ),
            ));
        }
        if let Some(x) = rt.reg.lock().members.get(&s.handle) {
            return Err(Error::new(
                if x.bound {
                    ACL_ERROR_RT_STREAM_MODEL
                } else {
                    ACL_ERROR_RT_STREAM_CAPTURED
                },
                format!(
                    "{} is already {} model {:#x}",
                    s.stream.label(),
                    if x.bound {
                        "bound to"
                    } else {
                        "capturing into"
                    },
                    x.model
                ),
            ));
        }
        if s.logical != m.device {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CONTEXT,
                format!(
                    "model {} belongs to device {}, but {} is a stream of device {}",
                    m.id,
                    m.device,
                    s.stream.label(),
                    s.logical
                ),
            ));
        }
        let lane = m.add_lane(s.stream.label(), flag == STREAM_FLAG_HEAD)?;
        join(
            &rt,
            s.handle,
            &m,
            modelRI as u64,
            lane,
            Member {
                model: modelRI as u64,
                lane,
                origin: false,
                bound: true,
                mode: MODE_RELAXED,
                tid: gettid(),
            },
        )
    })
}

/// The membership of `stream` in `modelRI` (bound), or an error naming both.
fn bound_lane(rt: &Runtime, m: &Model, mh: u64, s: &runtime::StreamEntry) -> Result<usize> {
    match rt.reg.lock().members.get(&s.handle) {
        Some(x) if x.model == mh && x.bound => Ok(x.lane),
        _ => Err(Error::new(
            ACL_ERROR_RT_STREAM_MODEL,
            format!(
                "{} is not bound to model {} (aclmdlRIBindStream)",
                s.stream.label(),
                m.id
            ),
        )),
    }
}

/// `aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream)`: the end of the model on
/// that bound stream.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIEndTask(modelRI: *mut c_void, stream: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIEndTask", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        let s = rt.stream_entry(stream, "stream")?;
        let lane = bound_lane(&rt, &m, modelRI as u64, &s)?;
        m.push(lane, Node::End)
    })
}

/// `aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)`: the model is complete and
/// may run (`reserve` must be NULL).
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIBuildEnd(modelRI: *mut c_void, reserve: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIBuildEnd", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        if !reserve.is_null() {
            return Err(Error::invalid("argument reserve must be NULL"));
        }
        if m.origin != Origin::Built {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "model {} was made by a capture, not by aclmdlRIBuildBegin",
                    m.id
                ),
            ));
        }
        m.complete()
    })
}

/// `aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRIUnbindStream(modelRI: *mut c_void, stream: *mut c_void) -> i32 {
    errors::boundary("aclmdlRIUnbindStream", || {
        let rt = runtime::get()?;
        let m = model(&rt, modelRI, "modelRI")?;
        let s = rt.stream_entry(stream, "stream")?;
        bound_lane(&rt, &m, modelRI as u64, &s)?;
        rt.reg.lock().members.remove(&s.handle);
        s.stream.set_sink(None);
        Ok(())
    })
}

/// The capture membership of `stream`, or `ACL_ERROR_RT_STREAM_NOT_CAPTURED`.
fn capturing(rt: &Runtime, s: &runtime::StreamEntry) -> Result<(Member, Arc<Model>)> {
    let reg = rt.reg.lock();
    match reg.members.get(&s.handle) {
        Some(x) if !x.bound => {
            let m =
                reg.models.get(&x.model).cloned().ok_or_else(|| {
                    Error::new(ACL_ERROR_RT_INTERNAL_ERROR, "capture model vanished")
                })?;
            Ok((x.clone(), m))
        }
        _ => Err(Error::new(
            ACL_ERROR_RT_STREAM_NOT_CAPTURED,
            format!(
                "{} is not capturing (call aclmdlRICaptureBegin on it first)",
                s.stream.label()
            ),
        )),
    }
}

/// `aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)`: the next tasks of the
/// capturing stream form a group that an update may replace.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureTaskGrpBegin(stream: *mut c_void) -> i32 {
    errors::boundary("aclmdlRICaptureTaskGrpBegin", || {
        ffi::non_null(stream, "stream")?;
        let rt = runtime::get()?;
        let s = rt.stream_entry(stream, "stream")?;
        let (x, m) = capturing(&rt, &s)?;
        m.begin_group(x.lane)
    })
}

/// `aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureTaskGrpEnd(
    stream: *mut c_void,
    handle: *mut *mut c_void,
) -> i32 {
    errors::boundary("aclmdlRICaptureTaskGrpEnd", || {
        ffi::non_null(stream, "stream")?;
        ffi::non_null(handle, "handle")?;
        let rt = runtime::get()?;
        let s = rt.stream_entry(stream, "stream")?;
        let (x, m) = capturing(&rt, &s)?;
        let g = m.end_group(x.lane)?;
        let (gh, _) = new_handle(&TASK_GROUP);
        rt.reg.lock().groups.insert(gh, g);
        out(handle, "handle", gh as *mut c_void)
    })
}

fn group(rt: &Runtime, h: *mut c_void) -> Result<Arc<Group>> {
    ffi::non_null(h, "handle")?;
    rt.reg
        .lock()
        .groups
        .get(&(h as u64))
        .cloned()
        .ok_or_else(|| bad_handle(&TASK_GROUP, "handle", h as u64))
}

/// `aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)`: the
/// next tasks enqueued on `stream` replace the group's tasks (same number, same kinds)
/// instead of running; the replacement takes effect when `stream` reaches
/// `aclmdlRICaptureTaskUpdateEnd`.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureTaskUpdateBegin(
    stream: *mut c_void,
    handle: *mut c_void,
) -> i32 {
    errors::boundary("aclmdlRICaptureTaskUpdateBegin", || {
        ffi::non_null(stream, "stream")?;
        let rt = runtime::get()?;
        let g = group(&rt, handle)?;
        let s = rt.stream_entry(stream, "stream")?;
        if s.stream.is_capturing() {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CAPTURED,
                format!(
                    "{} is capturing or bound to a model: update task groups from another stream",
                    s.stream.label()
                ),
            ));
        }
        let m = g.model().ok_or_else(|| {
            Error::invalid("the task group's model was destroyed (aclmdlRIDestroy)")
        })?;
        if m.status() != Status::Ready {
            return Err(Error::new(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                format!(
                    "the task group's model {} is not complete yet: update it after aclmdlRICaptureEnd",
                    m.id
                ),
            ));
        }
        let u = Arc::new(UpdateSink {
            group: g,
            ops: Mutex::new(Vec::new()),
            stream: s.stream.label().to_string(),
        });
        rt.reg.lock().updates.insert(s.handle, u.clone());
        s.stream.set_sink(Some(u));
        Ok(())
    })
}

/// `aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureTaskUpdateEnd(stream: *mut c_void) -> i32 {
    errors::boundary("aclmdlRICaptureTaskUpdateEnd", || {
        ffi::non_null(stream, "stream")?;
        let rt = runtime::get()?;
        let s = rt.stream_entry(stream, "stream")?;
        let u = rt.reg.lock().updates.remove(&s.handle).ok_or_else(|| {
            Error::new(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                format!(
                    "{} is not in a task update (call aclmdlRICaptureTaskUpdateBegin first)",
                    s.stream.label()
                ),
            )
        })?;
        s.stream.set_sink(None);
        let ops = std::mem::take(&mut *u.ops.lock());
        u.group.check_update(&ops)?;
        let g = u.group.clone();
        let cell = Mutex::new(Some(ops));
        s.stream.enqueue(Box::new(move || {
            if let Some(ops) = cell.lock().take() {
                g.replace(ops);
            }
            Ok(())
        }))
    })
}

/// What a capturing (or bound) stream does with an event record: `None` when the stream
/// runs it as usual.
pub fn record_in_model(
    rt: &Runtime,
    ev: &runtime::EventEntry,
    s: &runtime::StreamEntry,
    external: bool,
) -> Option<Result<()>> {
    let member = rt.reg.lock().members.get(&s.handle).cloned()?;
    let m = rt.reg.lock().models.get(&member.model).cloned()?;
    let real = external || member.bound || ev.event.flags() & ACL_EVENT_EXTERNAL != 0;
    if real {
        let e = ev.event.clone();
        let id = ev.id;
        let op = Op {
            kind: "event_record",
            what: format!("record of event {id}"),
            replay: Replay::Host(Arc::new(move || {
                let t = e.reserve_record();
                Ok(Box::new(move || {
                    t.fire();
                    Ok(())
                }))
            })),
        };
        return Some(m.push(member.lane, Node::Op(op)));
    }
    if !ev.ex {
        return Some(Err(Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {} was made by aclrtCreateEvent/aclrtCreateEventWithFlag: a capture records only events made by aclrtCreateEventExWithFlag (or with ACL_EVENT_EXTERNAL)",
                ev.id
            ),
        )));
    }
    Some(record_captured(rt, ev, &m, &member))
}

/// Record `ev` as an event of the capture `m` (made on its first record in the capture).
fn record_captured(
    rt: &Runtime,
    ev: &runtime::EventEntry,
    m: &Arc<Model>,
    member: &Member,
) -> Result<()> {
    let e = {
        let mut reg = rt.reg.lock();
        match reg.captured_events.get(&ev.handle) {
            Some(&(mh, e)) if mh == member.model => e,
            _ => {
                let e = m.new_event();
                reg.captured_events.insert(ev.handle, (member.model, e));
                e
            }
        }
    };
    m.record(member.lane, e).map(|_| ())
}

/// `ACL_EVENT_EXTERNAL`.
pub const ACL_EVENT_EXTERNAL: u32 = 0x20;

/// What a stream wait on an event does when a capture or model is involved: `None` when
/// the stream waits as usual. `external` = `ACL_EVENT_WAIT_EXTERNAL` (the model waits, at
/// each execution, for the record of the event that was the latest when it was launched).
pub fn wait_in_model(
    rt: &Runtime,
    ev: &runtime::EventEntry,
    s: &runtime::StreamEntry,
    external: bool,
) -> Option<Result<()>> {
    let (member, captured) = {
        let reg = rt.reg.lock();
        (
            reg.members.get(&s.handle).cloned(),
            reg.captured_events.get(&ev.handle).copied(),
        )
    };
    if let (Some((mh, e)), false) = (captured, external) {
        // An event recorded in a capture in progress: the waiting stream joins it.
        return Some(join_by_wait(rt, ev, s, member.as_ref(), mh, e));
    }
    let member = member?;
    let m = rt.reg.lock().models.get(&member.model).cloned()?;
    let flag_semantics = ev.event.flags() & ACL_EVENT_EXTERNAL != 0 && !external;
    if !(external || member.bound || flag_semantics) {
        if !ev.ex {
            return Some(Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "event {} was made by aclrtCreateEvent/aclrtCreateEventWithFlag: a capturing stream waits only on events made by aclrtCreateEventExWithFlag, or with ACL_EVENT_EXTERNAL",
                    ev.id
                ),
            )));
        }
        if ev.event.records_issued() > 0 {
            return Some(Err(Error::new(
                ACL_ERROR_RT_CAPTURE_DEPENDENCY,
                format!(
                    "event {} was recorded outside the capture: a capturing stream cannot depend on work outside it (record it in the capture, or wait with ACL_EVENT_WAIT_EXTERNAL)",
                    ev.id
                ),
            )));
        }
        // Never recorded: nothing to wait for.
        return Some(Ok(()));
    }
    let e = ev.event.clone();
    let id = ev.id;
    let op = if flag_semantics {
        Op::run(
            "event_wait",
            format!("wait until event {id} is recorded"),
            move || {
                e.wait_set(None, &|| false);
                Ok(())
            },
        )
    } else {
        Op {
            kind: "event_wait",
            what: format!("wait for the latest record of event {id}"),
            replay: Replay::Host(Arc::new(move || {
                let target = e.records_issued();
                let e = e.clone();
                Ok(Box::new(move || {
                    e.wait_record(target, None, &|| false);
                    Ok(())
                }))
            })),
        }
    };
    Some(m.push(member.lane, Node::Op(op)))
}

/// A wait of `s` on `ev`, an event recorded in the capture `mh` (its event `e`): `s` joins the
/// capture if it is not in it yet.
fn join_by_wait(
    rt: &Runtime,
    ev: &runtime::EventEntry,
    s: &runtime::StreamEntry,
    member: Option<&Member>,
    mh: u64,
    e: usize,
) -> Result<()> {
    let m = rt
        .reg
        .lock()
        .models
        .get(&mh)
        .cloned()
        .ok_or_else(|| Error::new(ACL_ERROR_RT_INTERNAL_ERROR, "capture model vanished"))?;
    let lane = match member {
        Some(x) if x.model == mh => x.lane,
        Some(x) => {
            return Err(Error::new(
                ACL_ERROR_STREAM_CAPTURE_CONFLICT,
                format!(
                    "event {} was recorded in the capture of model {mh:#x}, but {} belongs to model {:#x}",
                    ev.id,
                    s.stream.label(),
                    x.model
                ),
            ))
        }
        None => {
            if s.is_default {
                return Err(Error::new(
                    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                    format!(
                        "{} is a default stream: it cannot wait on event {}, which was recorded in a capture (it would join the capture)",
                        s.stream.label(),
                        ev.id
                    ),
                ));
            }
            let lane = m.add_lane(s.stream.label(), true)?;
            join(
                rt,
                s.handle,
                &m,
                mh,
                lane,
                Member {
                    model: mh,
                    lane,
                    origin: false,
                    bound: false,
                    mode: MODE_RELAXED,
                    tid: gettid(),
                },
            )?;
            lane
        }
    };
    m.wait(lane, e)
}

/// What a capturing stream does with an event reset: `None` when the stream runs it.
pub fn reset_in_model(
    rt: &Runtime,
    ev: &runtime::EventEntry,
    s: &runtime::StreamEntry,
) -> Option<Result<()>> {
    let member = rt.reg.lock().members.get(&s.handle).cloned()?;
    let m = rt.reg.lock().models.get(&member.model).cloned()?;
    if rt.reg.lock().captured_events.contains_key(&ev.handle) {
        // The capture's own events start fresh at each execution.
        return Some(Ok(()));
    }
    if !(member.bound || ev.ex || ev.event.flags() & ACL_EVENT_EXTERNAL != 0) {
        return Some(Err(Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {} was made by aclrtCreateEvent/aclrtCreateEventWithFlag: a capture resets only events made by aclrtCreateEventExWithFlag or with ACL_EVENT_EXTERNAL",
                ev.id
            ),
        )));
    }
    let e = ev.event.clone();
    let op = Op::run(
        "event_reset",
        format!("reset of event {}", ev.id),
        move || {
            e.reset_now();
            Ok(())
        },
    );
    Some(m.push(member.lane, Node::Op(op)))
}

/// A stream operation for `stream` that must sit in a model (labels, stream activation):
/// the model and lane of the stream's binding, or `ACL_ERROR_RT_STREAM_MODEL`.
pub fn model_lane(
    rt: &Runtime,
    s: &runtime::StreamEntry,
    what: &str,
) -> Result<(Arc<Model>, usize)> {
    let member = rt.reg.lock().members.get(&s.handle).cloned();
    let Some(member) = member else {
        return Err(Error::new(
            ACL_ERROR_RT_STREAM_MODEL,
            format!(
                "{} is not bound to a model: {what} exists only inside a model (bind the stream with aclmdlRIBindStream, or capture it)",
                s.stream.label()
            ),
        ));
    };
    let m = rt
        .reg
        .lock()
        .models
        .get(&member.model)
        .cloned()
        .ok_or_else(|| Error::new(ACL_ERROR_RT_INTERNAL_ERROR, "the stream's model vanished"))?;
    Ok((m, member.lane))
}
