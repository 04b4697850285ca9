//! What an unimplemented export does: record a message naming the function, log it once
//! per function at ERROR level (so it shows at the default log level, before the caller
//! turns the code into a bare number), and return the documented "not supported" value.
//! Called by the stubs `build.rs` generates for every function of `abi/acl_functions.tsv`
//! that `api/` does not define. A function listed in `abi/acl_stubs.tsv` is a stub on
//! purpose (pure hardware): it returns the code listed there, the one CANN returns on
//! hardware without the feature, and its message gives the listed reason.

use npu_emu::codes::ACL_ERROR_API_NOT_SUPPORT;
use npu_emu::config::LogLevel;
use parking_lot::Mutex;
use std::collections::HashSet;

static LOGGED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

fn note(name: &'static str, msg: String) {
    crate::ffi::set_recent(&msg);
    let first = LOGGED.lock().get_or_insert_with(HashSet::new).insert(name);
    if first {
        crate::runtime::log(LogLevel::Error, &msg);
    }
}

fn generic(name: &'static str) {
    note(
        name,
        format!(
            "{name} is not supported by npu-emu (returns ACL_ERROR_API_NOT_SUPPORT {ACL_ERROR_API_NOT_SUPPORT})"
        ),
    );
}

/// Stub for functions returning `aclError`.
pub fn not_supported(name: &'static str) -> i32 {
    generic(name);
    ACL_ERROR_API_NOT_SUPPORT
}

/// Stub kept on purpose (`abi/acl_stubs.tsv`): `code`, with `why` in the message.
pub fn not_supported_because(name: &'static str, code: i32, why: &str) -> i32 {
    note(
        name,
        format!("{name} is not supported by npu-emu (returns {code}): {why}"),
    );
    code
}

/// Stub kept on purpose (`abi/acl_stubs.tsv`) returning a pointer: NULL, with `why` in the
/// message.
pub fn not_supported_ptr_because<T>(name: &'static str, why: &str) -> *mut T {
    note(
        name,
        format!("{name} is not supported by npu-emu (returns NULL): {why}"),
    );
    std::ptr::null_mut()
}

/// Stub for functions returning a pointer: NULL.
pub fn not_supported_ptr<T>(name: &'static str) -> *mut T {
    generic(name);
    std::ptr::null_mut()
}

/// Stub for functions returning an integer or float: zero.
pub fn not_supported_zero<T: Default>(name: &'static str) -> T {
    generic(name);
    T::default()
}

/// Stub for functions returning `void`.
pub fn not_supported_void(name: &'static str) {
    generic(name);
}
