//! `aclAppLog`: application log lines through the runtime's logger.
//!
//! The real function is C-variadic (`const char *fmt, ...`). Defining a C-variadic function
//! needs nightly Rust (`c_variadic`), and no C build step exists, so this definition takes
//! the fixed arguments only: callers' extra arguments are ignored (harmless in the C calling
//! convention) and the line shows `fmt` verbatim followed by "(arguments not formatted)"
//! when it contains conversions.

use npu_emu::config::LogLevel;
use std::ffi::CStr;
use std::os::raw::c_char;

unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-null NUL-terminated string per the ACL contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)`
#[no_mangle]
pub unsafe extern "C" fn aclAppLog(
    logLevel: i32,
    func: *const c_char,
    file: *const c_char,
    line: u32,
    fmt: *const c_char,
) {
    let _ = std::panic::catch_unwind(|| {
        let level = match logLevel {
            0 => LogLevel::Debug,
            1 => LogLevel::Info,
            2 => LogLevel::Warning,
            _ => LogLevel::Error,
        };
        // SAFETY: C strings from the caller.
        let (func, file, fmt) = unsafe { (text(func), text(file), text(fmt)) };
        let fmt = fmt.trim_end_matches('\n');
        let note = if fmt.replace("%%", "").contains('%') {
            " (arguments not formatted)"
        } else {
            ""
        };
        let msg = format!("[{file}:{line}][{func}] {}{note}", fmt.replace("%%", "%"));
        crate::runtime::log(level, &msg);
    });
}
