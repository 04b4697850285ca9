//! aclnn status codes and the C boundary.
//!
//! The codes are those of CANN's `aclnn/opdev/op_errno.h` (8.1.RC1 toolkit and hicann/opbase
//! agree): `ACLNN_SUCCESS` 0, `ACLNN_ERR_PARAM_NULLPTR` 161001, `ACLNN_ERR_PARAM_INVALID`
//! 161002, `ACLNN_ERR_RUNTIME_ERROR` 361001, `ACLNN_ERR_INNER` 561000,
//! `ACLNN_ERR_INNER_NULLPTR` 561103. Messages go to the runtime's `aclGetRecentErrMsg` (the
//! thread's recent messages, kept by libascendcl) as `"<function>: <message>"`.

use crate::rt;
use npu_emu_ffi::boundary::{self, Convention};
use npu_emu_ffi::handles::{HandleError, Problem};
use npu_emu_ffi::rt::{RtError, RtErrorKind};
use std::borrow::Cow;

pub const ACLNN_SUCCESS: i32 = 0;
pub const ACLNN_ERR_PARAM_NULLPTR: i32 = 161001;
pub const ACLNN_ERR_PARAM_INVALID: i32 = 161002;
pub const ACLNN_ERR_RUNTIME_ERROR: i32 = 361001;
pub const ACLNN_ERR_INNER: i32 = 561000;

/// A failed call: an aclnn status and a readable message.
#[derive(Debug, Clone)]
pub struct NnError {
    pub code: i32,
    pub msg: String,
}

pub type NnResult<T> = Result<T, NnError>;

impl NnError {
    pub fn new(code: i32, msg: impl Into<String>) -> Self {
        NnError {
            code,
            msg: msg.into(),
        }
    }
    pub fn nullptr(msg: impl Into<String>) -> Self {
        Self::new(ACLNN_ERR_PARAM_NULLPTR, msg)
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        Self::new(ACLNN_ERR_PARAM_INVALID, msg)
    }
    pub fn runtime(msg: impl Into<String>) -> Self {
        Self::new(ACLNN_ERR_RUNTIME_ERROR, msg)
    }
    /// The same error with `suffix` appended to its message.
    pub fn with_suffix(mut self, suffix: impl AsRef<str>) -> Self {
        self.msg.push_str(suffix.as_ref());
        self
    }
}

impl From<RtError> for NnError {
    fn from(e: RtError) -> NnError {
        match e.kind {
            RtErrorKind::Argument => NnError::invalid(e.msg),
            RtErrorKind::Runtime | RtErrorKind::Peer => NnError::runtime(e.msg),
        }
    }
}

/// A value that is not a live handle: `ACLNN_ERR_PARAM_NULLPTR` for NULL, else
/// `ACLNN_ERR_PARAM_INVALID`, with the table's message.
impl From<HandleError> for NnError {
    fn from(e: HandleError) -> NnError {
        match e.problem {
            Problem::Null => NnError::nullptr(e.to_string()),
            _ => NnError::invalid(e.to_string()),
        }
    }
}

/// Record `"{name}: {msg}"` as the thread's recent error (and log it under `OP`); without a
/// runtime the line is logged directly, so it is not lost.
pub fn report(name: &str, msg: &str) {
    record_text(&format!("{name}: {msg}"));
}

/// Keep `text` as the thread's recent error through the runtime (which logs it under `OP`);
/// without a runtime, log it directly.
fn record_text(text: &str) {
    if !rt::set_recent(text) {
        let logger = match npu_emu::config::Config::from_env() {
            Ok(c) => npu_emu::log::Logger::new(&c),
            Err(_) => npu_emu::log::Logger::default(),
        };
        logger.log(npu_emu::config::LogLevel::Error, rt::MODULE, text);
    }
}

/// libnnopbase's conventions at the C boundary ([`npu_emu_ffi::boundary`]): `aclnnStatus`
/// codes, `ACLNN_ERR_INNER` for a panic, messages kept by the runtime for
/// `aclGetRecentErrMsg` and logged under `OP`.
pub struct Nn;

impl Convention for Nn {
    type Code = i32;
    type Error = NnError;
    const SUCCESS: i32 = ACLNN_SUCCESS;
    const PANIC: i32 = ACLNN_ERR_INNER;
    fn code(e: &NnError) -> i32 {
        e.code
    }
    fn describe(e: &NnError) -> Cow<'_, str> {
        Cow::Borrowed(&e.msg)
    }
    fn null_argument(arg: &str) -> NnError {
        NnError::nullptr(format!("{arg} is nullptr"))
    }
    fn record(_code: i32, msg: &str) {
        record_text(msg);
    }
}

/// Run an exported function returning `aclnnStatus`: `Err` becomes its code with the
/// message recorded; a panic becomes `ACLNN_ERR_INNER` with the panic text.
pub fn boundary(name: &'static str, f: impl FnOnce() -> NnResult<()>) -> i32 {
    boundary::call::<Nn>(name, f)
}

/// Like [`boundary`] for functions returning a value (a handle): `fallback` on error.
pub fn boundary_value<T>(name: &'static str, fallback: T, f: impl FnOnce() -> NnResult<T>) -> T {
    boundary::call_value::<Nn, T>(name, fallback, f)
}

/// `ptr` must not be NULL: `ACLNN_ERR_PARAM_NULLPTR` naming the argument otherwise.
pub fn non_null<T>(ptr: *const T, arg: &str) -> NnResult<()> {
    boundary::non_null::<Nn, T>(ptr, arg)
}

/// Write `v` through a C out-pointer that must not be NULL (out-parameters are valid for
/// writes per the aclnn contract).
pub fn out<T>(ptr: *mut T, arg: &str, v: T) -> NnResult<()> {
    boundary::out::<Nn, T>(ptr, arg, v)
}
