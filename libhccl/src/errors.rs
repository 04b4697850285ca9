//! HCCL result codes (abi.md §2.3), `HcclGetErrorString`'s strings (§2.2), the error type
//! and the C boundary: every export runs inside [`boundary`], so no panic crosses into C and
//! every failure leaves a message for `aclGetRecentErrMsg` and on stderr.

use npu_emu::config::LogLevel;
use npu_emu_ffi::boundary::{self, Convention};
use npu_emu_ffi::handles::{HandleError, Problem};
use npu_emu_ffi::rt::{RtError, RtErrorKind};
use std::borrow::Cow;

pub const HCCL_SUCCESS: i32 = 0;
pub const HCCL_E_PARA: i32 = 1;
pub const HCCL_E_PTR: i32 = 2;
pub const HCCL_E_MEMORY: i32 = 3;
pub const HCCL_E_INTERNAL: i32 = 4;
pub const HCCL_E_NOT_SUPPORT: i32 = 5;
pub const HCCL_E_NOT_FOUND: i32 = 6;
pub const HCCL_E_UNAVAIL: i32 = 7;
pub const HCCL_E_SYSCALL: i32 = 8;
pub const HCCL_E_TIMEOUT: i32 = 9;
pub const HCCL_E_OPEN_FILE_FAILURE: i32 = 10;
pub const HCCL_E_TCP_CONNECT: i32 = 11;
pub const HCCL_E_TCP_TRANSFER: i32 = 13;
pub const HCCL_E_RUNTIME: i32 = 15;
pub const HCCL_E_REMOTE: i32 = 21;

/// Names of the `HcclResult` values, for messages.
pub fn code_name(code: i32) -> &'static str {
    npu_emu_ffi::codes::hccl_result_name(code).unwrap_or("unknown HcclResult")
}

/// `HcclGetErrorString`'s text (abi.md §2.2). CANN has no entry for 22–24 and 1041 (it
/// would throw); we give them readable strings instead of crashing.
pub fn error_string(code: i32) -> &'static std::ffi::CStr {
    match code {
        0 => c"no error",
        1 => c"parameter error",
        2 => c"empty pointer",
        3 => c"memory error",
        4 => c"internal error",
        5 => c"not support feature",
        6 => c"not found specific resource",
        7 => c"resource unavailable",
        8 => c"call system interface error",
        9 => c"timeout",
        10 => c"open file fail",
        11 => c"tcp connect fail",
        12 => c"roce connect fail",
        13 => c"tcp transfer fail",
        14 => c"roce transfer fail",
        15 => c"call runtime api fail",
        16 => c"call driver api fail",
        17 => c"call profiling api fail",
        18 => c"call cce api fail",
        19 => c"call network api fail",
        20 => c"try again",
        21 => c"error cqe",
        22 => c"communicator is suspending",
        23 => c"op retry failed",
        24 => c"out of memory",
        1041 => c"detail is in status",
        _ => c"unknow error",
    }
}

/// An `HcclResult` with a readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HcclError {
    pub code: i32,
    pub msg: String,
}

pub type HResult<T> = std::result::Result<T, HcclError>;

impl HcclError {
    pub fn new(code: i32, msg: impl Into<String>) -> Self {
        HcclError {
            code,
            msg: msg.into(),
        }
    }
    pub fn para(msg: impl Into<String>) -> Self {
        Self::new(HCCL_E_PARA, msg)
    }
    pub fn ptr(arg: &str) -> Self {
        Self::new(HCCL_E_PTR, format!("argument {arg} is NULL"))
    }
}

/// Return early with an [`HcclError`].
#[macro_export]
macro_rules! hbail {
    ($code:expr, $($arg:tt)*) => {
        return Err($crate::errors::HcclError::new($code, format!($($arg)*)))
    };
}

impl From<RtError> for HcclError {
    fn from(e: RtError) -> HcclError {
        match e.kind {
            RtErrorKind::Argument => HcclError::new(HCCL_E_PARA, e.msg),
            RtErrorKind::Runtime => HcclError::new(HCCL_E_RUNTIME, e.msg),
            RtErrorKind::Peer => HcclError::new(HCCL_E_INTERNAL, e.msg),
        }
    }
}

/// A value that is not a live handle: `HCCL_E_PTR` for NULL, else `HCCL_E_PARA`, with the
/// table's message.
impl From<HandleError> for HcclError {
    fn from(e: HandleError) -> HcclError {
        match e.problem {
            Problem::Null => HcclError::new(HCCL_E_PTR, e.to_string()),
            _ => HcclError::new(HCCL_E_PARA, e.to_string()),
        }
    }
}

/// libhccl's conventions at the C boundary ([`npu_emu_ffi::boundary`]): `HcclResult`
/// codes (named after the message), `HCCL_E_INTERNAL` for a panic, messages kept by the
/// runtime for `aclGetRecentErrMsg` and logged under `HCCL`.
pub struct Hccl;

impl Convention for Hccl {
    type Code = i32;
    type Error = HcclError;
    const SUCCESS: i32 = HCCL_SUCCESS;
    const PANIC: i32 = HCCL_E_INTERNAL;
    fn code(e: &HcclError) -> i32 {
        e.code
    }
    fn describe(e: &HcclError) -> Cow<'_, str> {
        Cow::Owned(format!("{} [{}]", e.msg, code_name(e.code)))
    }
    fn null_argument(arg: &str) -> HcclError {
        HcclError::ptr(arg)
    }
    fn record(_code: i32, msg: &str) {
        report(msg);
    }
}

/// `ptr` must not be NULL: `HCCL_E_PTR` naming the argument otherwise.
pub fn non_null<T>(ptr: *const T, arg: &str) -> HResult<()> {
    boundary::non_null::<Hccl, T>(ptr, arg)
}

/// Record `msg` for `aclGetRecentErrMsg` through the runtime, which also prints it as
/// `[ERROR] HCCL(pid,tid): msg` (the HCCL module's level applies); without a runtime, print
/// that line directly.
pub fn report(msg: &str) {
    if !crate::rt::set_recent(msg) {
        crate::log(LogLevel::Error, msg);
    }
}

/// Run an export's body. Errors become their code with `"{name}: {msg} [CODE_NAME]"`
/// reported; a panic becomes `HCCL_E_INTERNAL`.
pub fn boundary(name: &str, f: impl FnOnce() -> HResult<()>) -> i32 {
    boundary::call::<Hccl>(name, f)
}

/// Run a value-returning export's body; `fallback` on panic.
pub fn boundary_value<T>(name: &str, fallback: T, f: impl FnOnce() -> T) -> T {
    boundary::call_value::<Hccl, T>(name, fallback, || Ok(f()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn strings_match_cann() {
        assert_eq!(error_string(0).to_str().unwrap(), "no error");
        assert_eq!(error_string(9).to_str().unwrap(), "timeout");
        assert_eq!(error_string(21).to_str().unwrap(), "error cqe");
        assert_eq!(error_string(-1).to_str().unwrap(), "unknow error");
        assert_eq!(error_string(5000).to_str().unwrap(), "unknow error");
    }
}
