//! The rest of `acl/acl_prof.h`: msproftx marks and ranges (`aclprofCreateStamp`,
//! `aclprofSetStampTraceMessage`, `aclprofMark`, `aclprofMarkEx`, `aclprofPush`/`Pop`,
//! `aclprofRangeStart`/`Stop`, `aclprofDestroyStamp`, `aclprofStr2Id`), step timestamps
//! (`aclprofCreateStepInfo`, `aclprofGetStepTimestamp`, `aclprofDestroyStepInfo`),
//! `aclprofSetConfig`, and model subscription with its op-information readers
//! (`aclprofCreateSubscribeConfig`, `aclprofModelSubscribe`, `aclprofGetOp*`, …).
//!
//! Marks, ranges and steps are recorded into the `msproftx` list of the summary
//! `aclprofFinalize` writes (see `api/prof.rs`) while a session whose config has
//! `ACL_PROF_MSPROFTX` runs; outside one they are accepted and not recorded, as msprof
//! drops them. Messages are at most 128 bytes (100000 beyond). `aclprofPop` without a
//! matching `aclprofPush` on the thread, and `aclprofRangeStop` of an unknown range, are
//! `ACL_ERROR_INVALID_PARAM`. `aclprofMarkEx` and `aclprofGetStepTimestamp` put a trace
//! point on their stream (it runs in order with the stream's work).
//!
//! `aclprofSetConfig`: the types `ACL_PROF_STORAGE_LIMIT` .. `ACL_PROF_HOST_SYS_USAGE_FREQ`
//! with a non-empty value of at most 256 bytes; kept in the summary (npu-emu samples no
//! system metrics). Other types are 100000.
//!
//! Subscription: npu-emu loads no offline models, so there is no model id to subscribe to:
//! `aclprofModelSubscribe`/`UnSubscribe` are `ACL_ERROR_INVALID_MODEL_ID` naming the id.
//! The op-information readers check their buffer (NULL, a length that is not a whole
//! number of `aclprofGetOpDescSize` records, an index past them) and then refuse it: no
//! subscription writes op records here. All are `ACL_ERROR_INVALID_PARAM`; the `uint64_t`
//! readers return 0.

use crate::api::prof::{record_tx, set_config};
use crate::ffi::{boundary, boundary_value, non_null, out};
use crate::globals::{
    PROF_TX_IDS, PROF_TX_NEXT_ID, PROF_TX_NEXT_RANGE, PROF_TX_PUSHED, PROF_TX_RANGES,
    PROF_TX_STAMPS, PROF_TX_STEPS, PROF_TX_SUB_CONFIGS,
};
use crate::runtime;
use npu_emu::stream::Op;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::HandleKind;
use std::ffi::{c_void, CStr};
use std::os::raw::c_char;
use std::sync::atomic::Ordering;

/// Longest stamp message.
const MAX_MSG: usize = 128;
/// Longest `aclprofSetConfig` value.
const MAX_CONFIG: usize = 256;
/// `ACL_ERROR_INVALID_MODEL_ID`.
const ACL_ERROR_INVALID_MODEL_ID: i32 = 100011;

/// The object behind a stamp (`void *`), a handle of [`PROF_TX_STAMPS`].
#[derive(Default, Clone)]
pub(crate) struct Stamp {
    msg: String,
}

/// What a stamp (`void *`) is: a handle of [`PROF_TX_STAMPS`].
pub static STAMP: HandleKind = HandleKind::new(*b"PS", "msproftx stamp", "aclprofCreateStamp");

fn stamp_msg(stamp: *mut c_void) -> Result<String> {
    non_null(stamp, "stamp")?;
    Ok(PROF_TX_STAMPS
        .lock()
        .get(stamp as u64, "stamp")?
        .msg
        .clone())
}

fn text(p: *const c_char, len: usize, arg: &str) -> Result<String> {
    non_null(p, arg)?;
    if len == 0 || len > MAX_MSG {
        return Err(Error::invalid(format!(
            "the length of {arg} is {len}: expected 1..={MAX_MSG} bytes"
        )));
    }
    // SAFETY: the caller passes `len` readable bytes; strnlen stops at a NUL before them.
    let n = unsafe { libc::strnlen(p, len) };
    // SAFETY: n <= len bytes of the caller's buffer.
    let b = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
    Ok(String::from_utf8_lossy(b).into_owned())
}

/// `void *aclprofCreateStamp()`
#[no_mangle]
pub extern "C" fn aclprofCreateStamp() -> *mut c_void {
    boundary_value("aclprofCreateStamp", std::ptr::null_mut(), || {
        Ok(PROF_TX_STAMPS.lock().insert(Stamp::default()) as *mut c_void)
    })
}

/// `void aclprofDestroyStamp(void *stamp)`
#[no_mangle]
pub unsafe extern "C" fn aclprofDestroyStamp(stamp: *mut c_void) {
    let _ = boundary("aclprofDestroyStamp", || {
        non_null(stamp, "stamp")?;
        PROF_TX_STAMPS.lock().remove(stamp as u64, "stamp")?;
        Ok(())
    });
}

/// `aclError aclprofSetStampTraceMessage(void *stamp, const char *msg, uint32_t msgLen)`
#[no_mangle]
pub unsafe extern "C" fn aclprofSetStampTraceMessage(
    stamp: *mut c_void,
    msg: *const c_char,
    msgLen: u32,
) -> i32 {
    boundary("aclprofSetStampTraceMessage", || {
        stamp_msg(stamp)?;
        let m = text(msg, msgLen as usize, "msg")?;
        if let Ok(s) = PROF_TX_STAMPS.lock().get_mut(stamp as u64, "stamp") {
            s.msg = m;
        }
        Ok(())
    })
}

/// `aclError aclprofMark(void *stamp)`
#[no_mangle]
pub unsafe extern "C" fn aclprofMark(stamp: *mut c_void) -> i32 {
    boundary("aclprofMark", || {
        let m = stamp_msg(stamp)?;
        record_tx(serde_json::json!({"event": "mark", "message": m}));
        Ok(())
    })
}

/// `aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclprofMarkEx(
    msg: *const c_char,
    msgLen: usize,
    stream: *mut c_void,
) -> i32 {
    boundary("aclprofMarkEx", || {
        let m = text(msg, msgLen, "msg")?;
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        let label = e.stream.label().to_string();
        e.stream.enqueue_op(Op::run(
            "prof_mark",
            format!("msproftx mark {m:?}"),
            move || {
                record_tx(serde_json::json!({"event": "mark_ex", "message": m, "stream": label}));
                Ok(())
            },
        ))
    })
}

/// `aclError aclprofPush(void *stamp)`
#[no_mangle]
pub unsafe extern "C" fn aclprofPush(stamp: *mut c_void) -> i32 {
    boundary("aclprofPush", || {
        let m = stamp_msg(stamp)?;
        PROF_TX_PUSHED.with(|p| p.borrow_mut().push((m, npu_emu::event::now_ns())));
        Ok(())
    })
}

/// `aclError aclprofPop()`
#[no_mangle]
pub extern "C" fn aclprofPop() -> i32 {
    boundary("aclprofPop", || {
        let (m, start) = PROF_TX_PUSHED
            .with(|p| p.borrow_mut().pop())
            .ok_or_else(|| {
                Error::invalid("no stamp was pushed on this thread (aclprofPush before aclprofPop)")
            })?;
        record_tx(serde_json::json!({"event": "push_pop", "message": m, "start_ns": start}));
        Ok(())
    })
}

/// `aclError aclprofRangeStart(void *stamp, uint32_t *rangeId)`
#[no_mangle]
pub unsafe extern "C" fn aclprofRangeStart(stamp: *mut c_void, rangeId: *mut u32) -> i32 {
    boundary("aclprofRangeStart", || {
        let m = stamp_msg(stamp)?;
        non_null(rangeId, "rangeId")?;
        let id = PROF_TX_NEXT_RANGE.fetch_add(1, Ordering::Relaxed);
        PROF_TX_RANGES
            .lock()
            .insert(id, (m, npu_emu::event::now_ns()));
        out(rangeId, "rangeId", id)
    })
}

/// `aclError aclprofRangeStop(uint32_t rangeId)`
#[no_mangle]
pub extern "C" fn aclprofRangeStop(rangeId: u32) -> i32 {
    boundary("aclprofRangeStop", || {
        let (m, start) = PROF_TX_RANGES.lock().remove(&rangeId).ok_or_else(|| {
            Error::invalid(format!(
                "rangeId = {rangeId} is not a range started by aclprofRangeStart (or it was stopped)"
            ))
        })?;
        record_tx(
            serde_json::json!({"event": "range", "message": m, "id": rangeId, "start_ns": start}),
        );
        Ok(())
    })
}

/// `uint64_t aclprofStr2Id(const char *message)`: the same message gives the same id in
/// a process (ids count from 1); 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn aclprofStr2Id(message: *const c_char) -> u64 {
    boundary_value("aclprofStr2Id", 0, || {
        non_null(message, "message")?;
        // SAFETY: non-null, NUL-terminated per the ACL contract.
        let m = unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned();
        let mut ids = PROF_TX_IDS.lock();
        let id = *ids
            .entry(m)
            .or_insert_with(|| PROF_TX_NEXT_ID.fetch_add(1, Ordering::Relaxed));
        Ok(id)
    })
}

/// The object behind an `aclprofStepInfo *`, a handle of [`PROF_TX_STEPS`].
#[derive(Default)]
pub(crate) struct StepInfo {
    start: Option<u64>,
}

/// What an `aclprofStepInfo *` is: a handle of [`PROF_TX_STEPS`].
pub static STEP_INFO: HandleKind =
    HandleKind::new(*b"PI", "aclprofStepInfo", "aclprofCreateStepInfo");

/// `aclprofStepInfo *aclprofCreateStepInfo()`
#[no_mangle]
pub extern "C" fn aclprofCreateStepInfo() -> *mut c_void {
    boundary_value("aclprofCreateStepInfo", std::ptr::null_mut(), || {
        Ok(PROF_TX_STEPS.lock().insert(StepInfo::default()) as *mut c_void)
    })
}

/// `void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo)`
#[no_mangle]
pub unsafe extern "C" fn aclprofDestroyStepInfo(stepinfo: *mut c_void) {
    let _ = boundary("aclprofDestroyStepInfo", || {
        non_null(stepinfo, "stepinfo")?;
        PROF_TX_STEPS.lock().remove(stepinfo as u64, "stepinfo")?;
        Ok(())
    });
}

/// `aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetStepTimestamp(
    stepInfo: *mut c_void,
    tag: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclprofGetStepTimestamp", || {
        non_null(stepInfo, "stepInfo")?;
        if tag != 0 && tag != 1 {
            return Err(Error::invalid(format!(
                "tag = {tag} is invalid: expected ACL_STEP_START (0) or ACL_STEP_END (1)"
            )));
        }
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        let key = stepInfo as usize;
        {
            let mut steps = PROF_TX_STEPS.lock();
            let s = steps.get_mut(key as u64, "stepInfo")?;
            if tag == 1 && s.start.is_none() {
                return Err(Error::invalid(
                    "ACL_STEP_END without an ACL_STEP_START on this step info",
                ));
            }
            s.start = (tag == 0).then(npu_emu::event::now_ns);
        }
        let what = if tag == 0 { "step start" } else { "step end" };
        e.stream
            .enqueue_op(Op::run("prof_step", what.to_string(), move || {
                record_tx(serde_json::json!({"event": what, "step_info": format!("{key:#x}")}));
                Ok(())
            }))
    })
}

/// `aclError aclprofSetConfig(aclprofConfigType configType, const char *config, size_t configLength)`
#[no_mangle]
pub unsafe extern "C" fn aclprofSetConfig(
    configType: i32,
    config: *const c_char,
    configLength: usize,
) -> i32 {
    boundary("aclprofSetConfig", || {
        if !(1..=10).contains(&configType) {
            return Err(Error::invalid(format!(
                "configType = {configType} is invalid: expected ACL_PROF_STORAGE_LIMIT (1) .. ACL_PROF_HOST_SYS_USAGE_FREQ (10)"
            )));
        }
        non_null(config, "config")?;
        if configLength == 0 || configLength > MAX_CONFIG {
            return Err(Error::invalid(format!(
                "configLength = {configLength}: expected 1..={MAX_CONFIG} bytes"
            )));
        }
        // SAFETY: `configLength` readable bytes; strnlen stops at a NUL before them.
        let n = unsafe { libc::strnlen(config, configLength) };
        // SAFETY: n bytes of the caller's buffer.
        let b = unsafe { std::slice::from_raw_parts(config as *const u8, n) };
        let v = String::from_utf8_lossy(b).into_owned();
        if v.is_empty() {
            return Err(Error::invalid("config is an empty string"));
        }
        set_config(configType, v);
        Ok(())
    })
}

/// The object behind an `aclprofSubscribeConfig *`, a handle of [`PROF_TX_SUB_CONFIGS`].
pub(crate) struct SubscribeConfig {
    _time_info: i8,
    _metrics: i32,
    _fd: usize,
}

/// What an `aclprofSubscribeConfig *` is: a handle of [`PROF_TX_SUB_CONFIGS`].
pub static SUBSCRIBE_CONFIG: HandleKind = HandleKind::new(
    *b"PB",
    "aclprofSubscribeConfig",
    "aclprofCreateSubscribeConfig",
);

/// `aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch, aclprofAicoreMetrics aicoreMetrics, void *fd)`
#[no_mangle]
pub unsafe extern "C" fn aclprofCreateSubscribeConfig(
    timeInfoSwitch: i8,
    aicoreMetrics: i32,
    fd: *mut c_void,
) -> *mut c_void {
    boundary_value("aclprofCreateSubscribeConfig", std::ptr::null_mut(), || {
        non_null(fd, "fd")?;
        if timeInfoSwitch != 0 && timeInfoSwitch != 1 {
            return Err(Error::invalid(format!(
                "timeInfoSwitch = {timeInfoSwitch} is invalid: expected 0 or 1"
            )));
        }
        if !(0..=6).contains(&aicoreMetrics) && aicoreMetrics != 255 {
            return Err(Error::invalid(format!(
                "aicoreMetrics = {aicoreMetrics} is not an aclprofAicoreMetrics value"
            )));
        }
        let h = PROF_TX_SUB_CONFIGS.lock().insert(SubscribeConfig {
            _time_info: timeInfoSwitch,
            _metrics: aicoreMetrics,
            _fd: fd as usize,
        });
        Ok(h as *mut c_void)
    })
}

/// `aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig)`
#[no_mangle]
pub unsafe extern "C" fn aclprofDestroySubscribeConfig(profSubscribeConfig: *const c_void) -> i32 {
    boundary("aclprofDestroySubscribeConfig", || {
        non_null(profSubscribeConfig, "profSubscribeConfig")?;
        PROF_TX_SUB_CONFIGS
            .lock()
            .remove(profSubscribeConfig as u64, "profSubscribeConfig")?;
        Ok(())
    })
}

fn no_model(modelId: u32) -> Error {
    Error::new(
        ACL_ERROR_INVALID_MODEL_ID,
        format!("modelId = {modelId} is not a loaded model: npu-emu loads no offline models (aclmdlLoad*), so none can be subscribed"),
    )
}

/// `aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig)`
#[no_mangle]
pub unsafe extern "C" fn aclprofModelSubscribe(
    modelId: u32,
    profSubscribeConfig: *const c_void,
) -> i32 {
    boundary("aclprofModelSubscribe", || {
        non_null(profSubscribeConfig, "profSubscribeConfig")?;
        PROF_TX_SUB_CONFIGS
            .lock()
            .get(profSubscribeConfig as u64, "profSubscribeConfig")?;
        Err(no_model(modelId))
    })
}

/// `aclError aclprofModelUnSubscribe(uint32_t modelId)`
#[no_mangle]
pub extern "C" fn aclprofModelUnSubscribe(modelId: u32) -> i32 {
    boundary("aclprofModelUnSubscribe", || Err(no_model(modelId)))
}

/// Size of one op record of a subscription (CANN's `ProfOpDesc`: four `u32`, seven `u64`
/// and a `u32` device id, 80 bytes with padding).
const OP_DESC_SIZE: usize = 80;

/// `aclError aclprofGetOpDescSize(size_t *opDescSize)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpDescSize(opDescSize: *mut usize) -> i32 {
    boundary("aclprofGetOpDescSize", || {
        non_null(opDescSize, "opDescSize")?;
        out(opDescSize, "opDescSize", OP_DESC_SIZE)
    })
}

/// Check an op-information buffer. A subscription never writes one in npu-emu (there is no
/// model to subscribe to), so a well-formed buffer is still not op information.
fn records(opInfo: *const c_void, opInfoLen: usize, index: Option<u32>) -> Result<u32> {
    non_null(opInfo, "opInfo")?;
    if opInfoLen == 0 || !opInfoLen.is_multiple_of(OP_DESC_SIZE) {
        return Err(Error::invalid(format!(
            "opInfoLen = {opInfoLen} is not a whole number of {OP_DESC_SIZE}-byte op records (aclprofGetOpDescSize)"
        )));
    }
    let n = (opInfoLen / OP_DESC_SIZE) as u32;
    if let Some(i) = index.filter(|&i| i >= n) {
        return Err(Error::invalid(format!(
            "index = {i} is past the {n} op record(s) of opInfo"
        )));
    }
    Err(Error::invalid(
        "opInfo was not written by a model subscription (aclprofModelSubscribe): npu-emu loads no offline models, so it writes no op records",
    ))
}

/// `aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpNum(
    opInfo: *const c_void,
    opInfoLen: usize,
    opNumber: *mut u32,
) -> i32 {
    boundary("aclprofGetOpNum", || {
        non_null(opNumber, "opNumber")?;
        let n = records(opInfo, opInfoLen, None)?;
        out(opNumber, "opNumber", n)
    })
}

fn check_out<T>(
    name: &'static str,
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    p: *const T,
    arg: &str,
) -> i32 {
    boundary(name, || {
        non_null(p, arg)?;
        records(opInfo, opInfoLen, Some(index)).map(|_| ())
    })
}

/// `aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opTypeLen)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpTypeLen(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opTypeLen: *mut usize,
) -> i32 {
    check_out(
        "aclprofGetOpTypeLen",
        opInfo,
        opInfoLen,
        index,
        opTypeLen,
        "opTypeLen",
    )
}

/// `aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType, size_t opTypeLen)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpType(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opType: *mut c_char,
    opTypeLen: usize,
) -> i32 {
    let _ = opTypeLen;
    check_out(
        "aclprofGetOpType",
        opInfo,
        opInfoLen,
        index,
        opType,
        "opType",
    )
}

/// `aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opNameLen)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpNameLen(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opNameLen: *mut usize,
) -> i32 {
    check_out(
        "aclprofGetOpNameLen",
        opInfo,
        opInfoLen,
        index,
        opNameLen,
        "opNameLen",
    )
}

/// `aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName, size_t opNameLen)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpName(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opName: *mut c_char,
    opNameLen: usize,
) -> i32 {
    let _ = opNameLen;
    check_out(
        "aclprofGetOpName",
        opInfo,
        opInfoLen,
        index,
        opName,
        "opName",
    )
}

fn value(name: &'static str, opInfo: *const c_void, opInfoLen: usize, index: u32) -> u64 {
    boundary_value(name, 0, || {
        records(opInfo, opInfoLen, Some(index)).map(u64::from)
    })
}

/// `uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpStart(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
) -> u64 {
    value("aclprofGetOpStart", opInfo, opInfoLen, index)
}

/// `uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpEnd(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
) -> u64 {
    value("aclprofGetOpEnd", opInfo, opInfoLen, index)
}

/// `uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetOpDuration(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
) -> u64 {
    value("aclprofGetOpDuration", opInfo, opInfoLen, index)
}

/// `size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index)`
#[no_mangle]
pub unsafe extern "C" fn aclprofGetModelId(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
) -> usize {
    value("aclprofGetModelId", opInfo, opInfoLen, index) as usize
}
