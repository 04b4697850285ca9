//! Host-function threads: `aclrtSubscribeHostFunc`, `aclrtUnSubscribeHostFunc`,
//! `aclrtProcessHostFunc`.
//!
//! CANN documents these for the Atlas inference products (not A2/A3); we offer them on
//! every SoC. A thread the user created subscribes to streams (of one device); from then
//! on `aclrtLaunchHostFunc` on such a stream hands the function to that thread, which runs
//! it inside `aclrtProcessHostFunc`, while the stream waits for it (so the stream's tasks
//! keep their order). Without a subscription the function runs on the stream's own worker.
//!
//! Codes (those of the report-thread functions): subscribing a stream that already has a
//! host-function thread, or unsubscribing a thread from a stream it does not serve, is
//! `ACL_ERROR_RT_STREAM_SUBSCRIBE` (107011); one thread for streams of two devices, or
//! `aclrtProcessHostFunc` on a thread with no subscription, is
//! `ACL_ERROR_RT_THREAD_SUBSCRIBE` (107012); nothing to run within the timeout is
//! `ACL_ERROR_RT_REPORT_TIMEOUT` (507012). The timeout is -1 (forever) or > 0 ms.
//! Host functions still queued when their thread unsubscribes are dropped (with a
//! warning) and their streams continue.

use crate::api::callback::{release, run_queued};
use crate::api::errors;
use crate::runtime::{self, Report, ReportQueue};
use npu_emu::codes::*;
use npu_emu::config::LogLevel;
use npu_emu::Error;
use std::ffi::c_void;
use std::sync::Arc;

/// `aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSubscribeHostFunc(
    hostFuncThreadId: u64,
    exeStream: *mut c_void,
) -> i32 {
    errors::boundary("aclrtSubscribeHostFunc", || {
        let rt = runtime::get()?;
        let e = rt.stream_entry(exeStream, "exeStream")?;
        let mut reg = rt.reg.lock();
        if let Some(t) = reg.host_subs.get(&e.handle) {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "{} already has host-function thread {t:#x}; a stream has one (unsubscribe it first)",
                    e.stream.label()
                ),
            ));
        }
        let other = reg.subscribed_on_other_device(&reg.host_subs, hostFuncThreadId, e.logical);
        if let Some((dev, label)) = other {
            return Err(Error::new(
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                format!(
                    "thread {hostFuncThreadId:#x} already runs the host functions of {label} on device {dev}; \
                     a host-function thread serves the streams of one device only"
                ),
            ));
        }
        reg.host_subs.insert(e.handle, hostFuncThreadId);
        reg.host_reports
            .entry(hostFuncThreadId)
            .or_insert_with(|| Arc::new(ReportQueue::default()));
        Ok(())
    })
}

/// `aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtUnSubscribeHostFunc(
    hostFuncThreadId: u64,
    exeStream: *mut c_void,
) -> i32 {
    errors::boundary("aclrtUnSubscribeHostFunc", || {
        let rt = runtime::get()?;
        let e = rt.stream_entry(exeStream, "exeStream")?;
        let orphaned = {
            let mut reg = rt.reg.lock();
            match reg.host_subs.get(&e.handle) {
                Some(&t) if t == hostFuncThreadId => {}
                Some(&t) => {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        format!(
                            "{} has host-function thread {t:#x}, not hostFuncThreadId {hostFuncThreadId:#x}",
                            e.stream.label()
                        ),
                    ))
                }
                None => {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        format!(
                            "{} has no host-function thread (aclrtSubscribeHostFunc)",
                            e.stream.label()
                        ),
                    ))
                }
            }
            reg.host_subs.remove(&e.handle);
            if reg.host_subs.values().any(|&t| t == hostFuncThreadId) {
                None
            } else {
                reg.host_reports.remove(&hostFuncThreadId)
            }
        };
        if let Some(q) = orphaned {
            let left: Vec<Report> = q.q.lock().drain(..).collect();
            if !left.is_empty() {
                rt.log(
                    LogLevel::Warning,
                    &format!(
                        "aclrtUnSubscribeHostFunc: {} host function(s) for thread {hostFuncThreadId:#x} were never processed and are dropped",
                        left.len()
                    ),
                );
            }
            for r in left {
                release(&r);
            }
        }
        Ok(())
    })
}

/// `aclError aclrtProcessHostFunc(int32_t timeout)`: run the host functions queued for the
/// calling thread, waiting up to `timeout` ms (-1 = forever) for the first one.
#[no_mangle]
pub unsafe extern "C" fn aclrtProcessHostFunc(timeout: i32) -> i32 {
    let quiet = [ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_THREAD_SUBSCRIBE];
    errors::boundary_quiet("aclrtProcessHostFunc", &quiet, || {
        if timeout == 0 || timeout < -1 {
            return Err(Error::invalid(format!(
                "timeout = {timeout} is invalid: -1 waits forever, a value above 0 waits that many milliseconds"
            )));
        }
        let rt = runtime::get()?;
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as u64;
        let q = rt.reg.lock().host_reports.get(&me).cloned().ok_or_else(|| {
            Error::new(
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                format!("the calling thread ({me:#x}) runs the host functions of no stream (aclrtSubscribeHostFunc)"),
            )
        })?;
        drop(rt);
        run_queued(&q, timeout, "host function")
    })
}
