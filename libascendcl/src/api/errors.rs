//! Error reporting: `aclGetRecentErrMsg`, `aclrtPeekAtLastError`, `aclrtGetLastError`.
//!
//! The recent message is per thread (kept by [`crate::ffi`]). The last error *code* is per
//! thread too; [`ffi::boundary`] records it for every export through [`note_code`], and a
//! failure of another of our libraries on the thread clears it ([`note_foreign_failure`]).

use crate::ffi;
use crate::globals::LAST_ERROR_CODE;
use npu_emu::Error;
use std::os::raw::c_char;

/// Record `code` as the calling thread's last error (0 is ignored).
pub fn note_code(code: i32) {
    if code != 0 {
        LAST_ERROR_CODE.with(|l| l.set(code));
    }
}

/// A call of another library of the process (libhccl, libopapi) failed on this thread: its
/// code is that library's, so the thread's last ACL error is cleared rather than left to be
/// reported for it. Frameworks replace a failing call's code with `aclrtPeekAtLastError`
/// when that is not `ACL_SUCCESS` (torch_npu's `NPU_CHECK_ERROR`): an ACL failure the caller
/// tolerated earlier must not be reported as the cause of an unrelated later failure.
pub fn note_foreign_failure() {
    LAST_ERROR_CODE.with(|l| l.set(0));
}

/// [`ffi::boundary`] (kept so the runtime core's exports read alike).
pub fn boundary(name: &'static str, f: impl FnOnce() -> Result<(), Error>) -> i32 {
    ffi::boundary(name, f)
}

/// Like [`boundary`], but an error whose code is in `quiet` is an expected outcome (a
/// report wait that timed out, a repeated `aclInit`, a poll that found work pending): its
/// message is recorded for `aclGetRecentErrMsg` and logged at INFO instead of ERROR, so
/// loops that expect it do not flood the log.
pub fn boundary_quiet(
    name: &'static str,
    quiet: &[i32],
    f: impl FnOnce() -> Result<(), Error>,
) -> i32 {
    let mut expected: Option<Error> = None;
    let c = ffi::boundary(name, || match f() {
        Err(e) if quiet.contains(&e.code) => {
            expected = Some(e);
            Ok(())
        }
        r => r,
    });
    if let Some(e) = expected {
        let m = format!("{name}: {}", e.msg);
        ffi::set_recent(&m);
        crate::runtime::log(npu_emu::config::LogLevel::Info, &m);
        note_code(e.code);
        return e.code;
    }
    c
}

/// `const char *aclGetRecentErrMsg()`: the calling thread's most recent error message, or
/// NULL if none since the last call.
#[no_mangle]
pub unsafe extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    ffi::recent_error_ptr()
}

fn check_level(level: i32) -> Result<(), Error> {
    if level != 0 {
        return Err(Error::invalid(format!(
            "level = {level} is invalid: expected ACL_RT_THREAD_LEVEL (0)"
        )));
    }
    Ok(())
}

/// `aclError aclrtPeekAtLastError(aclrtLastErrLevel level)`: the thread's last error code,
/// kept.
#[no_mangle]
pub unsafe extern "C" fn aclrtPeekAtLastError(level: i32) -> i32 {
    if let Err(e) = check_level(level) {
        return ffi::boundary("aclrtPeekAtLastError", || Err(e));
    }
    LAST_ERROR_CODE.with(|l| l.get())
}

/// `aclError aclrtGetLastError(aclrtLastErrLevel level)`: the thread's last error code,
/// then reset to `ACL_SUCCESS`.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetLastError(level: i32) -> i32 {
    if let Err(e) = check_level(level) {
        return ffi::boundary("aclrtGetLastError", || Err(e));
    }
    LAST_ERROR_CODE.with(|l| l.replace(0))
}
