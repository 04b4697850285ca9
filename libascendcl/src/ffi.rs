//! The C boundary: panics never cross it, errors become codes plus a message.

use npu_emu::codes::ACL_ERROR_INTERNAL_ERROR;
use npu_emu::config::LogLevel;
use npu_emu::Error;
use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// The calling thread's most recent error message (`aclGetRecentErrMsg`).
    static RECENT: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Set `msg` as this thread's recent error message, without logging it.
pub fn set_recent(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    RECENT.with(|r| *r.borrow_mut() = Some(c));
}

/// Record `msg` as this thread's recent error message and log it at ERROR level.
pub fn record_error(msg: &str) {
    set_recent(msg);
    crate::runtime::log(LogLevel::Error, msg);
}

/// Take this thread's recent message, leaving none: the pointer stays valid until the
/// thread records the next message (kept in a second slot).
pub fn recent_error_ptr() -> *const libc::c_char {
    thread_local! {
        static SHOWN: RefCell<Option<CString>> = const { RefCell::new(None) };
    }
    let taken = RECENT.with(|r| r.borrow_mut().take());
    SHOWN.with(|s| {
        let mut s = s.borrow_mut();
        match taken {
            Some(c) => {
                *s = Some(c);
                s.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
            }
            None => {
                *s = None;
                std::ptr::null()
            }
        }
    })
}

/// Run an exported function's body: map `Err` to its code and record `"{name}: {msg}"`,
/// map a panic to `ACL_ERROR_INTERNAL_ERROR` with the panic text.
pub fn boundary(name: &str, f: impl FnOnce() -> Result<(), Error>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            record_error(&format!("{name}: {}", e.msg));
            e.code
        }
        Err(p) => {
            record_error(&format!("{name}: internal error: {}", panic_text(&p)));
            ACL_ERROR_INTERNAL_ERROR
        }
    }
}

/// Like [`boundary`] for functions that return a value instead of a code: `fallback` on
/// error or panic (the message is recorded either way).
pub fn boundary_value<T>(name: &str, fallback: T, f: impl FnOnce() -> Result<T, Error>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            record_error(&format!("{name}: {}", e.msg));
            fallback
        }
        Err(p) => {
            record_error(&format!("{name}: internal error: {}", panic_text(&p)));
            fallback
        }
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// `ptr` must not be NULL: `ACL_ERROR_INVALID_PARAM` naming the argument otherwise.
pub fn non_null<T>(ptr: *const T, arg: &str) -> Result<(), Error> {
    if ptr.is_null() {
        Err(Error::invalid(format!("argument {arg} is NULL")))
    } else {
        Ok(())
    }
}

/// Write `v` through an out-pointer that must not be NULL.
///
/// Safe to call by design: the pointer comes straight from a C caller, and the ACL contract
/// (which this crate cannot check beyond NULL) is that out-parameters are valid for writes.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn out<T>(ptr: *mut T, arg: &str, v: T) -> Result<(), Error> {
    non_null(ptr, arg)?;
    // SAFETY: non-null checked; the caller promised a valid pointer per the ACL contract.
    unsafe { ptr.write_unaligned(v) };
    Ok(())
}
