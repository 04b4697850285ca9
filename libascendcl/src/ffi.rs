//! libascendcl's side of the C boundary: its [`Acl`] conventions for the shared
//! `npu_emu_ffi::boundary` (panics never cross it, errors become codes plus a message),
//! the recent-error messages of `aclGetRecentErrMsg` (per thread, or per process with
//! `err_msg_mode` 1), and the argument helpers every export uses.

use crate::globals::{PROCESS_MODE, PROCESS_RECENT, RECENT, RECENT_SHOWN};
use npu_emu::codes::ACL_ERROR_INTERNAL_ERROR;
use npu_emu::config::LogLevel;
use npu_emu::Error;
use npu_emu_ffi::boundary::{self, Convention};
use std::borrow::Cow;
use std::ffi::CString;
use std::sync::atomic::Ordering;

use npu_emu::codes::{ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL};

/// Most messages kept for one `aclGetRecentErrMsg` read; older ones are dropped.
const MAX_RECENT: usize = 16;

/// Keep recent messages per process (`true`, `err_msg_mode` "1") or per thread (default).
pub fn set_process_mode(on: bool) {
    PROCESS_MODE.store(on, Ordering::SeqCst);
}

fn push_recent(r: &mut Vec<String>, msg: &str) {
    if r.len() == MAX_RECENT {
        r.remove(0);
    }
    r.push(msg.replace('\0', " "));
}

/// Add `msg` to this thread's (in process mode: the process's) recent error messages,
/// without logging it.
pub fn set_recent(msg: &str) {
    if PROCESS_MODE.load(Ordering::SeqCst) {
        push_recent(&mut PROCESS_RECENT.lock(), msg);
    } else {
        RECENT.with(|r| push_recent(&mut r.borrow_mut(), msg));
    }
}

/// Record `msg` as this thread's recent error message and log it at ERROR level.
pub fn record_error(msg: &str) {
    set_recent(msg);
    crate::runtime::log(LogLevel::Error, msg);
}

/// Take this thread's recent messages (newest first, one per line), leaving none: the
/// pointer stays valid until the thread's next read (kept in a second slot). NULL if there
/// were none.
pub fn recent_error_ptr() -> *const libc::c_char {
    let taken: Vec<String> = if PROCESS_MODE.load(Ordering::SeqCst) {
        std::mem::take(&mut *PROCESS_RECENT.lock())
    } else {
        RECENT.with(|r| std::mem::take(&mut *r.borrow_mut()))
    };
    RECENT_SHOWN.with(|s| {
        let mut s = s.borrow_mut();
        *s = if taken.is_empty() {
            None
        } else {
            let text: Vec<&str> = taken.iter().rev().map(String::as_str).collect();
            CString::new(text.join("\n")).ok()
        };
        s.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
    })
}

/// libascendcl's conventions at the C boundary ([`npu_emu_ffi::boundary`]): `aclError`
/// codes, `ACL_ERROR_INTERNAL_ERROR` for a panic, messages kept for `aclGetRecentErrMsg`
/// and logged, and the failing code noted for `aclrtGetLastError`.
pub struct Acl;

impl Convention for Acl {
    type Code = i32;
    type Error = Error;
    const SUCCESS: i32 = 0;
    const PANIC: i32 = ACL_ERROR_INTERNAL_ERROR;
    fn code(e: &Error) -> i32 {
        e.code
    }
    fn describe(e: &Error) -> Cow<'_, str> {
        Cow::Borrowed(&e.msg)
    }
    fn null_argument(arg: &str) -> Error {
        Error::invalid(format!("argument {arg} is NULL"))
    }
    fn record(code: i32, msg: &str) {
        // An empty or full queue is what a polling caller expects to see (timeout 0 in a
        // loop): CANN logs it at INFO, not as an error on every poll.
        if matches!(code, ACL_ERROR_RT_QUEUE_EMPTY | ACL_ERROR_RT_QUEUE_FULL) {
            set_recent(msg);
            crate::runtime::log(LogLevel::Info, msg);
        } else {
            record_error(msg);
        }
        crate::api::errors::note_code(code);
    }
}

/// Run an exported function's body: map `Err` to its code and record `"{name}: {msg}"`,
/// map a panic to `ACL_ERROR_INTERNAL_ERROR` with the panic text. Also counts the call for
/// `aclprof*` and notes a failure's code for `aclrtGetLastError`.
pub fn boundary(name: &'static str, f: impl FnOnce() -> Result<(), Error>) -> i32 {
    crate::api::prof::count(name);
    boundary::call::<Acl>(name, f)
}

/// Like [`boundary`] for functions that return a value instead of a code: `fallback` on
/// error or panic (the message is recorded either way). Counts the call for `aclprof*`.
pub fn boundary_value<T>(
    name: &'static str,
    fallback: T,
    f: impl FnOnce() -> Result<T, Error>,
) -> T {
    crate::api::prof::count(name);
    boundary::call_value::<Acl, T>(name, fallback, f)
}

/// `ptr` must not be NULL: `ACL_ERROR_INVALID_PARAM` naming the argument otherwise.
pub fn non_null<T>(ptr: *const T, arg: &str) -> Result<(), Error> {
    boundary::non_null::<Acl, T>(ptr, arg)
}

/// Write `v` through an out-pointer that must not be NULL (the ACL contract makes
/// out-parameters valid for writes; nothing can check more than NULL).
pub fn out<T>(ptr: *mut T, arg: &str, v: T) -> Result<(), Error> {
    boundary::out::<Acl, T>(ptr, arg, v)
}
