//! Host callbacks: `aclrtSubscribeReport`, `aclrtUnSubscribeReport`, `aclrtLaunchCallback`
//! (blocking and non-blocking), `aclrtProcessReport`, and `aclrtLaunchHostFunc`.
//!
//! A callback task, when its stream reaches it, hands the callback to the thread subscribed
//! to that stream; that thread runs it inside `aclrtProcessReport`. With
//! `ACL_CALLBACK_BLOCK` the stream waits until the callback has run; with
//! `ACL_CALLBACK_NO_BLOCK` it continues at once. `aclrtLaunchHostFunc` needs no subscription:
//! the function runs on the stream's own worker, in order.
//!
//! Codes (CANN passes the lower runtime's codes through): launching on an unsubscribed stream
//! is `ACL_ERROR_RT_STREAM_NO_CB_REG` (107015); subscribing a stream twice or unsubscribing
//! a stream the thread does not hold is `ACL_ERROR_RT_STREAM_SUBSCRIBE` (107011);
//! `aclrtProcessReport` on a thread with no subscription is `ACL_ERROR_RT_THREAD_SUBSCRIBE`
//! (107012), and a timeout with nothing to process is `ACL_ERROR_RT_REPORT_TIMEOUT`
//! (507012). Its timeout is -1 (forever) or > 0 ms; 0 and values below -1 are
//! `ACL_ERROR_INVALID_PARAM` (abi.md §1.3).

use crate::api::errors;
use crate::runtime::{self, ExceptionInfo, Report, ReportQueue};
use npu_emu::codes::*;
use npu_emu::config::LogLevel;
use npu_emu::stream::Op;
use npu_emu::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `ACL_ERROR_RT_REPORT_TIMEOUT` (abi.md §1.5 B).
pub const ACL_ERROR_RT_REPORT_TIMEOUT: i32 = 507012;

/// `aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSubscribeReport(threadId: u64, stream: *mut c_void) -> i32 {
    errors::boundary("aclrtSubscribeReport", || {
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let mut reg = rt.reg.lock();
        if let Some(t) = reg.subs.get(&e.handle) {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "{} is already subscribed by thread {t:#x}; unsubscribe it first",
                    e.stream.label()
                ),
            ));
        }
        // CANN: "同一个进程内，在不同的Device上注册回调函数的线程时，不能指定同一个线程ID".
        let other = reg.subscribed_on_other_device(&reg.subs, threadId, e.logical);
        if let Some((dev, label)) = other {
            return Err(Error::new(
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                format!(
                    "thread {threadId:#x} already handles the callbacks of {label} on device {dev}; \
                     a report thread serves the streams of one device only"
                ),
            ));
        }
        reg.subs.insert(e.handle, threadId);
        reg.reports
            .entry(threadId)
            .or_insert_with(|| Arc::new(ReportQueue::default()));
        Ok(())
    })
}

/// `aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtUnSubscribeReport(threadId: u64, stream: *mut c_void) -> i32 {
    errors::boundary("aclrtUnSubscribeReport", || {
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let orphaned = {
            let mut reg = rt.reg.lock();
            match reg.subs.get(&e.handle) {
                Some(&t) if t == threadId => {}
                Some(&t) => {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        format!(
                            "{} is subscribed by thread {t:#x}, not by threadId {threadId:#x}",
                            e.stream.label()
                        ),
                    ))
                }
                None => {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        format!(
                            "{} is not subscribed (aclrtSubscribeReport)",
                            e.stream.label()
                        ),
                    ))
                }
            }
            reg.subs.remove(&e.handle);
            if reg.subs.values().any(|&t| t == threadId) {
                None
            } else {
                reg.reports.remove(&threadId)
            }
        };
        if let Some(q) = orphaned {
            let left: Vec<Report> = q.q.lock().drain(..).collect();
            if !left.is_empty() {
                rt.log(
                    LogLevel::Warning,
                    &format!(
                        "aclrtUnSubscribeReport: {} callback(s) for thread {threadId:#x} were never processed and are dropped",
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

pub fn release(r: &Report) {
    if let Some(d) = &r.done {
        *d.0.lock() = true;
        d.1.notify_all();
    }
}

fn launch_callback(
    func: Option<unsafe extern "C" fn(*mut c_void)>,
    user_data: *mut c_void,
    block_type: i32,
    stream: *mut c_void,
) -> Result<()> {
    if block_type != 0 && block_type != 1 {
        return Err(Error::invalid(format!(
            "blockType = {block_type} is invalid: expected ACL_CALLBACK_NO_BLOCK (0) or ACL_CALLBACK_BLOCK (1)"
        )));
    }
    let Some(func) = func else {
        return Err(Error::invalid("argument fn is NULL"));
    };
    let rt = runtime::get()?;
    let e = rt.stream_entry(stream, "stream")?;
    let queue = {
        let reg = rt.reg.lock();
        let t = reg.subs.get(&e.handle).copied().ok_or_else(|| {
            Error::new(
                ACL_ERROR_RT_STREAM_NO_CB_REG,
                format!(
                    "{} has no subscribed report thread: call aclrtSubscribeReport(threadId, stream) first",
                    e.stream.label()
                ),
            )
        })?;
        reg.reports
            .get(&t)
            .cloned()
            .expect("subscribed thread has a queue")
    };
    let ud = user_data as usize;
    let blocking = block_type == 1;
    let what = format!("callback {:#x}({ud:#x})", func as usize);
    e.stream
        .enqueue_op_on_worker(Op::run("callback", what, move || {
            let done = blocking.then(|| Arc::new((Mutex::new(false), Condvar::new())));
            queue.q.lock().push_back(Report {
                func,
                user_data: ud,
                done: done.clone(),
            });
            queue.cv.notify_all();
            if let Some(d) = done {
                let mut g = d.0.lock();
                while !*g {
                    d.1.wait(&mut g);
                }
            }
            Ok(())
        }))
}

/// `aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtLaunchCallback(
    func: Option<unsafe extern "C" fn(*mut c_void)>,
    userData: *mut c_void,
    blockType: i32,
    stream: *mut c_void,
) -> i32 {
    errors::boundary("aclrtLaunchCallback", || {
        launch_callback(func, userData, blockType, stream)
    })
}

/// `aclError aclrtProcessReport(int32_t timeout)`: run the callbacks queued for the calling
/// thread, waiting up to `timeout` ms (-1 = forever) for the first one.
#[no_mangle]
pub unsafe extern "C" fn aclrtProcessReport(timeout: i32) -> i32 {
    // CANN logs "no subscription yet" and "no callback within the timeout" at INFO: a
    // polling report thread expects both.
    let quiet = [ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_THREAD_SUBSCRIBE];
    errors::boundary_quiet("aclrtProcessReport", &quiet, || {
        if timeout == 0 || timeout < -1 {
            return Err(Error::invalid(format!(
                "timeout = {timeout} is invalid: -1 waits forever, a value above 0 waits that many milliseconds"
            )));
        }
        let rt = runtime::get()?;
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as u64;
        let q = rt.reg.lock().reports.get(&me).cloned().ok_or_else(|| {
            Error::new(
                ACL_ERROR_RT_THREAD_SUBSCRIBE,
                format!("the calling thread ({me:#x}) is not subscribed to any stream (aclrtSubscribeReport)"),
            )
        })?;
        drop(rt);
        run_queued(&q, timeout, "callback")
    })
}

/// Run what is queued on `q` (waiting up to `timeout` ms, -1 = forever, for the first
/// item), releasing blocked streams; `what` names the items in the timeout message.
pub fn run_queued(q: &ReportQueue, timeout: i32, what: &str) -> Result<()> {
    let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
    let batch: Vec<Report> = {
        let mut g = q.q.lock();
        while g.is_empty() {
            match deadline {
                None => q.cv.wait(&mut g),
                Some(d) => {
                    if Instant::now() >= d {
                        return Err(Error::new(
                            ACL_ERROR_RT_REPORT_TIMEOUT,
                            format!("no {what} arrived within {timeout} ms"),
                        ));
                    }
                    let _ = q.cv.wait_until(&mut g, d);
                }
            }
        }
        g.drain(..).collect()
    };
    for r in batch {
        // SAFETY: a C callback with the user's pointer, as registered.
        unsafe { (r.func)(r.user_data as *mut c_void) };
        release(&r);
    }
    Ok(())
}

/// `aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)`
#[no_mangle]
pub unsafe extern "C" fn aclrtLaunchHostFunc(
    stream: *mut c_void,
    func: Option<unsafe extern "C" fn(*mut c_void)>,
    args: *mut c_void,
) -> i32 {
    errors::boundary("aclrtLaunchHostFunc", || {
        let Some(func) = func else {
            return Err(Error::invalid("argument fn is NULL"));
        };
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let a = args as usize;
        let what = format!("host function {:#x}({a:#x})", func as usize);
        // A stream with a host-function thread (aclrtSubscribeHostFunc): that thread runs
        // it inside aclrtProcessHostFunc while the stream waits.
        let queue = {
            let reg = rt.reg.lock();
            reg.host_subs
                .get(&e.handle)
                .and_then(|t| reg.host_reports.get(t))
                .cloned()
        };
        if let Some(queue) = queue {
            return e
                .stream
                .enqueue_op_on_worker(Op::run("host_func", what, move || {
                    let done = Arc::new((Mutex::new(false), Condvar::new()));
                    queue.q.lock().push_back(Report {
                        func,
                        user_data: a,
                        done: Some(done.clone()),
                    });
                    queue.cv.notify_all();
                    let mut g = done.0.lock();
                    while !*g {
                        done.1.wait(&mut g);
                    }
                    Ok(())
                }));
        }
        e.stream
            .enqueue_op_on_worker(Op::run("host_func", what, move || {
                // SAFETY: the user's host function with the user's pointer.
                unsafe { func(a as *mut c_void) };
                Ok(())
            }))
    })
}

/// `aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)`: `callback`
/// runs whenever a task of a stream fails, on the thread that ran the task (the stream's
/// worker, or a host thread that ran the stream's tasks inside its synchronize), before the
/// error is reported by the next synchronize. NULL removes it.
#[no_mangle]
pub unsafe extern "C" fn aclrtSetExceptionInfoCallback(
    callback: Option<unsafe extern "C" fn(*mut c_void)>,
) -> i32 {
    errors::boundary("aclrtSetExceptionInfoCallback", || {
        *runtime::get()?.exception_cb.lock() = callback;
        Ok(())
    })
}

fn info_field(
    name: &'static str,
    info: *const ExceptionInfo,
    f: impl Fn(&ExceptionInfo) -> u32,
) -> u32 {
    crate::ffi::boundary_value(name, u32::MAX, || {
        crate::ffi::non_null(info, "info")?;
        // SAFETY: non-null; the magic check below rejects what we did not hand out.
        let i = unsafe { &*info };
        if i.magic != ExceptionInfo::MAGIC {
            return Err(Error::invalid(format!(
                "info = {info:p} is not an aclrtExceptionInfo passed to an aclrtSetExceptionInfoCallback callback"
            )));
        }
        Ok(f(i))
    })
}

/// `uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info)`: the failed
/// task's number on its stream (UINT32_MAX and a message for a bad `info`).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetTaskIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    info_field("aclrtGetTaskIdFromExceptionInfo", info, |i| i.task_id)
}

/// `uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetStreamIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    info_field("aclrtGetStreamIdFromExceptionInfo", info, |i| i.stream_id)
}

/// `uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info)`: the thread
/// (`gettid`) that ran the task.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetThreadIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    info_field("aclrtGetThreadIdFromExceptionInfo", info, |i| i.thread_id)
}

/// `uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceIdFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    info_field("aclrtGetDeviceIdFromExceptionInfo", info, |i| i.device_id)
}

/// `uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetErrorCodeFromExceptionInfo(info: *const ExceptionInfo) -> u32 {
    info_field("aclrtGetErrorCodeFromExceptionInfo", info, |i| i.retcode)
}
