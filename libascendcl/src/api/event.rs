//! Events: create (plain and with flags), destroy, record, reset, query (every variant),
//! synchronize (and with timeout), elapsed time, timestamp.
//!
//! Query variants and their numbering (abi.md §1.4):
//! - `aclrtQueryEvent` (deprecated) → `aclrtEventStatus`: COMPLETE = 0 when every record
//!   issued so far has run (also for an event never recorded), NOT_READY = 1 otherwise.
//! - `aclrtQueryEventStatus` → `aclrtEventRecordedStatus`: COMPLETE = 1 only when the event
//!   was recorded, its latest record ran and no reset ran since; NOT_READY = 0 otherwise.
//! - `aclrtQueryEventWaitStatus` → `aclrtEventWaitStatus`: COMPLETE = 0 when a stream
//!   waiting on the event now can proceed (the latest record ran), NOT_READY = 1 otherwise.
//!
//! Timing needs timestamps: `aclrtCreateEvent` events have them; an event from
//! `aclrtCreateEventWithFlag`/`ExWithFlag` has them only with `ACL_EVENT_TIME_LINE` (as CANN
//! documents), otherwise elapsed time and timestamp give `ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID`.
//!
//! `aclrtEventElapsedTime` gives milliseconds between the two events' completion
//! (`CLOCK_MONOTONIC`); `aclrtEventGetTimestamp` gives microseconds, as CANN documents.

use crate::api::{errors, mdlri};
use crate::ffi::{self, out};
use crate::runtime::{self, timeout_ms};
use npu_emu::codes::*;
use npu_emu::event::Event;
use npu_emu::{Error, Result};
use std::ffi::c_void;

/// `ACL_EVENT_TIME_LINE`: the event records timestamps.
pub const ACL_EVENT_TIME_LINE: u32 = 0x8;
/// What `aclrtCreateEvent` gives: usable for synchronisation and timing
/// (`ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE`).
pub const EVENT_DEFAULT_FLAGS: u32 = 0x1 | ACL_EVENT_TIME_LINE;

/// Timestamps of `e`, which must record them (CANN: an event made by
/// `aclrtCreateEventWithFlag` records timestamps only with `ACL_EVENT_TIME_LINE`).
fn timed(e: &crate::runtime::EventEntry, arg: &str) -> Result<()> {
    if e.event.flags() & ACL_EVENT_TIME_LINE == 0 {
        return Err(Error::new(
            ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
            format!(
                "{arg} was created with flags {:#x}, without ACL_EVENT_TIME_LINE (0x8): it records no timestamp",
                e.event.flags()
            ),
        ));
    }
    Ok(())
}

/// The flags `aclrtCreateEventWithFlag` accepts (CANN 8.5 `RT_EVENT_FLAG_MAX`):
/// ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4 (DDSYNC), ACL_EVENT_TIME_LINE,
/// ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL.
pub const EVENT_FLAGS_MASK: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20;
/// The flags `aclrtCreateEventExWithFlag` accepts (8.5 `EventCreateEx`): the synchronization
/// and time-line bits and ACL_EVENT_IPC.
pub const EVENT_EX_FLAGS_MASK: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x40;

/// CANN 8.5's flag checks (`ApiErrorDecorator::EventCreate[Ex]`), all
/// `ACL_ERROR_RT_PARAM_INVALID`: ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL and (Ex)
/// ACL_EVENT_IPC cannot be combined with other flags; then the flag must have a bit of the
/// function's mask and none above it.
fn check_flags(flag: u32, ex: bool) -> Result<()> {
    let (mask, alone): (u32, &[u32]) = if ex {
        (EVENT_EX_FLAGS_MASK, &[0x10, 0x20, 0x40])
    } else {
        (EVENT_FLAGS_MASK, &[0x10, 0x20])
    };
    let func = if ex {
        "aclrtCreateEventExWithFlag"
    } else {
        "aclrtCreateEventWithFlag"
    };
    if let Some(a) = alone.iter().find(|&&a| flag & a != 0 && flag & !a != 0) {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag = {flag:#x} is invalid: flag {a:#x} cannot be combined with other flags"),
        ));
    }
    if flag & mask == 0 || flag > mask {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag = {flag:#x} is invalid: {func} expects a non-empty combination of the flags in {mask:#x}"),
        ));
    }
    Ok(())
}

fn create(event: *mut *mut c_void, flag: u32, check: bool) -> Result<()> {
    create_ex(event, flag, check, false)
}

fn create_ex(event: *mut *mut c_void, flag: u32, check: bool, ex: bool) -> Result<()> {
    ffi::non_null(event, "event")?;
    if check {
        check_flags(flag, ex)?;
    }
    let h = runtime::get()?.create_event_ex(flag, ex)?;
    out(event, "event", h as *mut c_void)
}

/// `aclError aclrtCreateEvent(aclrtEvent *event)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut *mut c_void) -> i32 {
    errors::boundary("aclrtCreateEvent", || {
        create(event, EVENT_DEFAULT_FLAGS, false)
    })
}

/// `aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut *mut c_void, flag: u32) -> i32 {
    errors::boundary("aclrtCreateEventWithFlag", || create(event, flag, true))
}

/// `aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateEventExWithFlag(event: *mut *mut c_void, flag: u32) -> i32 {
    errors::boundary("aclrtCreateEventExWithFlag", || {
        create_ex(event, flag, true, true)
    })
}

/// `aclError aclrtDestroyEvent(aclrtEvent event)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyEvent(event: *mut c_void) -> i32 {
    errors::boundary("aclrtDestroyEvent", || match runtime::get() {
        Ok(rt) => rt.destroy_event(event),
        Err(e) => runtime::handle_after_finalize(e, event as u64),
    })
}

/// `ACL_EVENT_RECORD_EXTERNAL` (`aclrtRecordEventWithFlag`): a record a captured model
/// makes of the real event at each execution, for streams outside the model.
pub const ACL_EVENT_RECORD_EXTERNAL: u32 = 0x1;

fn record(event: *mut c_void, stream: *mut c_void, external: bool) -> Result<()> {
    let rt = runtime::get()?;
    let ev = rt.event_entry(event, "event")?;
    let s = rt.stream_entry(stream, "stream")?;
    if let Some(slot) = ev.ipc {
        if s.stream.is_capturing() {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "event {} is an IPC event, which a capture cannot record",
                    ev.id
                ),
            ));
        }
        return crate::api::ipc::event_record(&rt, &ev, slot, &s);
    }
    if let Some(r) = mdlri::record_in_model(&rt, &ev, &s, external) {
        return r;
    }
    ev.event.record(&s.stream)
}

/// `aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag)`:
/// `flag` `ACL_EVENT_RECORD_DEFAULT` (0) records as `aclrtRecordEvent`;
/// `ACL_EVENT_RECORD_EXTERNAL` (1) on a capturing stream records the real event (not one of
/// the capture's own) each time the model runs, so a stream outside the model can wait for it.
#[no_mangle]
pub unsafe extern "C" fn aclrtRecordEventWithFlag(
    event: *mut c_void,
    stream: *mut c_void,
    flag: u32,
) -> i32 {
    errors::boundary("aclrtRecordEventWithFlag", || {
        if flag & !ACL_EVENT_RECORD_EXTERNAL != 0 {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag = {flag:#x} is invalid: expected ACL_EVENT_RECORD_DEFAULT (0) or ACL_EVENT_RECORD_EXTERNAL (1)"),
            ));
        }
        record(event, stream, flag == ACL_EVENT_RECORD_EXTERNAL)
    })
}

/// `aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtRecordEvent(event: *mut c_void, stream: *mut c_void) -> i32 {
    errors::boundary("aclrtRecordEvent", || record(event, stream, false))
}

/// `aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetEvent(event: *mut c_void, stream: *mut c_void) -> i32 {
    errors::boundary("aclrtResetEvent", || {
        let rt = runtime::get()?;
        let ev = rt.event_entry(event, "event")?;
        let s = rt.stream_entry(stream, "stream")?;
        if ev.ipc.is_some() {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "event {} is an IPC event: it cannot be reset (record it again instead)",
                    ev.id
                ),
            ));
        }
        if let Some(r) = mdlri::reset_in_model(&rt, &ev, &s) {
            return r;
        }
        ev.event.reset(&s.stream)
    })
}

fn status(event: *mut c_void) -> Result<npu_emu::event::Status> {
    let rt = runtime::get()?;
    let e = rt.event_entry(event, "event")?;
    if let Some(slot) = e.ipc {
        let (ever, done) = crate::api::ipc::event_status(&rt, slot)?;
        return Ok(npu_emu::event::Status {
            ever_recorded: ever,
            complete: done,
            valid: ever && done,
            waits_complete: true,
        });
    }
    Ok(e.event.status())
}

/// Synchronize with an event (IPC or not).
fn sync(event: *mut c_void, t: Option<std::time::Duration>) -> Result<()> {
    let rt = runtime::get()?;
    let e = rt.event_entry(event, "event")?;
    if let Some(slot) = e.ipc {
        return crate::api::ipc::event_sync(&rt, slot, t);
    }
    e.event.synchronize(t)
}

/// `aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)` (deprecated)
#[no_mangle]
pub unsafe extern "C" fn aclrtQueryEvent(event: *mut c_void, st: *mut i32) -> i32 {
    errors::boundary("aclrtQueryEvent", || {
        ffi::non_null(event, "event")?;
        ffi::non_null(st, "status")?;
        let s = status(event)?;
        out(st, "status", if s.complete { 0 } else { 1 })
    })
}

/// `aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)`
#[no_mangle]
pub unsafe extern "C" fn aclrtQueryEventStatus(event: *mut c_void, st: *mut i32) -> i32 {
    errors::boundary("aclrtQueryEventStatus", || {
        ffi::non_null(event, "event")?;
        ffi::non_null(st, "status")?;
        let s = status(event)?;
        out(st, "status", if s.complete && s.valid { 1 } else { 0 })
    })
}

/// `aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status)`
#[no_mangle]
pub unsafe extern "C" fn aclrtQueryEventWaitStatus(event: *mut c_void, st: *mut i32) -> i32 {
    errors::boundary("aclrtQueryEventWaitStatus", || {
        ffi::non_null(event, "event")?;
        ffi::non_null(st, "status")?;
        let s = status(event)?;
        out(
            st,
            "status",
            if s.ever_recorded && s.complete { 0 } else { 1 },
        )
    })
}

/// `aclError aclrtSynchronizeEvent(aclrtEvent event)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSynchronizeEvent(event: *mut c_void) -> i32 {
    errors::boundary("aclrtSynchronizeEvent", || sync(event, None))
}

/// `aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)`:
/// milliseconds, -1 = forever (0 is invalid, as in CANN); `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT`
/// on timeout.
#[no_mangle]
pub unsafe extern "C" fn aclrtSynchronizeEventWithTimeout(event: *mut c_void, timeout: i32) -> i32 {
    errors::boundary("aclrtSynchronizeEventWithTimeout", || {
        let t = timeout_ms(timeout)?;
        sync(event, t)
    })
}

/// `aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)`
#[no_mangle]
pub unsafe extern "C" fn aclrtEventElapsedTime(
    ms: *mut f32,
    startEvent: *mut c_void,
    endEvent: *mut c_void,
) -> i32 {
    errors::boundary("aclrtEventElapsedTime", || {
        ffi::non_null(ms, "ms")?;
        let rt = runtime::get()?;
        let a = rt.event_entry(startEvent, "startEvent")?;
        let b = rt.event_entry(endEvent, "endEvent")?;
        timed(&a, "startEvent")?;
        timed(&b, "endEvent")?;
        let v = Event::elapsed_ms(&a.event, &b.event)?;
        out(ms, "ms", v)
    })
}

/// `aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)`: microseconds of
/// `CLOCK_MONOTONIC` at which the event's latest record completed.
#[no_mangle]
pub unsafe extern "C" fn aclrtEventGetTimestamp(event: *mut c_void, timestamp: *mut u64) -> i32 {
    errors::boundary("aclrtEventGetTimestamp", || {
        ffi::non_null(timestamp, "timestamp")?;
        let e = runtime::get()?.event_entry(event, "event")?;
        timed(&e, "event")?;
        let ns = e.event.timestamp_ns()?;
        out(timestamp, "timestamp", ns / 1000)
    })
}

/// `aclError aclrtSetOpWaitTimeout(uint32_t timeout)`: seconds a later
/// `aclrtStreamWaitEvent` may wait for its event (0 = never time out, the default). A wait
/// that times out fails its stream with `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT`, reported by the
/// next synchronize. Waits enqueued before the call keep their bound. A process setting, as in
/// CANN's runtime: it works before `aclInit` (torch_npu's `ProcessGroupHCCL` sets it first).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetOpWaitTimeout(timeout: u32) -> i32 {
    errors::boundary("aclrtSetOpWaitTimeout", || {
        let t = (timeout != 0).then(|| std::time::Duration::from_secs(timeout as u64));
        runtime::with_settings(|s| s.op_wait_timeout = t);
        Ok(())
    })
}

/// `aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetEventId(event: *mut c_void, eventId: *mut u32) -> i32 {
    errors::boundary("aclrtGetEventId", || {
        ffi::non_null(event, "event")?;
        ffi::non_null(eventId, "eventId")?;
        let e = runtime::get()?.event_entry(event, "event")?;
        out(eventId, "eventId", e.id)
    })
}
