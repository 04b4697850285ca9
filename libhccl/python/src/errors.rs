//! `hccl.HcclError` and the conversion of HCCL and ACL failures into it.
//!
//! An HCCL call that fails raises `HcclError` with `code` (the `HcclResult`), `name` (its C
//! name, e.g. `"HCCL_E_TIMEOUT"`) and `message` (what HCCL said, from `aclGetRecentErrMsg`, or
//! `HcclGetErrorString` when it said nothing). A failing ACL call (allocation, copy, stream)
//! is `HCCL_E_RUNTIME`, as HCCL itself reports a runtime failure, with the ACL code in the
//! message. Bad arguments are `ValueError`/`TypeError` naming the argument, raised before
//! anything reaches HCCL.

use crate::ffi::Api;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    hccl,
    HcclError,
    PyRuntimeError,
    "An HCCL call failed. Attributes: code (the HcclResult number), name (its C name, such as \
     'HCCL_E_TIMEOUT') and message (what HCCL said)."
);

pub const HCCL_E_TIMEOUT: i32 = 9;
pub const HCCL_E_RUNTIME: i32 = 15;

/// The C name of an `HcclResult` value (abi.md §2.3).
pub fn code_name(code: i32) -> &'static str {
    npu_emu_ffi::codes::hccl_result_name(code).unwrap_or("HCCL_E_UNKNOWN")
}

/// What went wrong, before it becomes a Python exception.
#[derive(Debug)]
pub enum Error {
    /// `HcclError`: code and full message.
    Hccl {
        code: i32,
        msg: String,
    },
    Value(String),
    Type(String),
    Runtime(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn value(msg: impl Into<String>) -> Error {
        Error::Value(msg.into())
    }
    pub fn hccl(code: i32, msg: impl Into<String>) -> Error {
        Error::Hccl {
            code,
            msg: msg.into(),
        }
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Hccl { code, msg } => Python::attach(|py| new_hccl_error(py, code, &msg)),
            Error::Value(m) => PyValueError::new_err(m),
            Error::Type(m) => PyTypeError::new_err(m),
            Error::Runtime(m) => PyRuntimeError::new_err(m),
        }
    }
}

/// An `HcclError` instance with its attributes set.
pub fn new_hccl_error(py: Python<'_>, code: i32, msg: &str) -> PyErr {
    let name = code_name(code);
    let err = HcclError::new_err(format!("{name} ({code}): {msg}"));
    let v = err.value(py);
    let _ = v.setattr("code", code);
    let _ = v.setattr("name", name);
    let _ = v.setattr("message", msg);
    err
}

/// HCCL's own message for a failed call: `aclGetRecentErrMsg`, else `HcclGetErrorString`.
fn hccl_message(api: &Api, code: i32) -> String {
    let m = api.recent();
    if m.is_empty() {
        api.error_string(code)
    } else {
        m
    }
}

/// Check the `HcclResult` of `call` (e.g. `"HcclAllReduce"`).
pub fn check_hccl(api: &Api, call: &str, code: i32) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    let m = hccl_message(api, code);
    // HCCL's messages already start with the call's name; do not say it twice.
    let msg = if m.starts_with(call) {
        m
    } else {
        format!("{call} failed: {m}")
    };
    Err(Error::hccl(code, msg))
}

/// Check the `aclError` of `call`: a failure is `HCCL_E_RUNTIME` naming the ACL call and code.
pub fn check_acl(api: &Api, call: &str, code: i32) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    let m = api.recent();
    let detail = if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    };
    Err(Error::hccl(
        HCCL_E_RUNTIME,
        format!("{call} failed with ACL error {code}{detail}"),
    ))
}
