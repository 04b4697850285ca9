//! The machine's error type: an ACL error code (abi.md §1.5) and a readable message.
//!
//! The C ABI crates turn an [`Error`] into the vendor return code and record its message
//! for `aclGetRecentErrMsg` (and the log). Messages name the call's argument and the
//! expected versus actual value wherever that is known.

use std::fmt;

/// An ACL error code with a readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The `aclError` value returned to C.
    pub code: i32,
    /// What went wrong, in words a user can act on.
    pub msg: String,
}

/// Result of machine operations.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with the given ACL code and message.
    pub fn new(code: i32, msg: impl Into<String>) -> Self {
        Error {
            code,
            msg: msg.into(),
        }
    }
    /// `ACL_ERROR_INVALID_PARAM` with a message.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::new(crate::codes::ACL_ERROR_INVALID_PARAM, msg)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (error code {})", self.msg, self.code)
    }
}

impl std::error::Error for Error {}

/// A value that is not a live handle is `ACL_ERROR_INVALID_PARAM` (real CANN would
/// dereference it; this is the closest documented code), with the table's message.
impl From<npu_emu_ffi::handles::HandleError> for Error {
    fn from(e: npu_emu_ffi::handles::HandleError) -> Error {
        Error::invalid(e.to_string())
    }
}

/// Return early with an [`Error`] of the given code and formatted message.
#[macro_export]
macro_rules! bail {
    ($code:expr, $($arg:tt)*) => {
        return Err($crate::error::Error::new($code, format!($($arg)*)))
    };
}
