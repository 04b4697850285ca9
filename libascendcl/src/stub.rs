//! What a not-yet-implemented export does: record a message naming the function, log it
//! once per function, and return the documented "not supported" value. Called by the
//! stubs `build.rs` generates for every function of `abi/acl_functions.tsv` that `api/`
//! does not define.

use npu_emu::codes::ACL_ERROR_API_NOT_SUPPORT;
use npu_emu::config::LogLevel;
use parking_lot::Mutex;
use std::collections::HashSet;

static LOGGED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

fn note(name: &'static str) {
    let msg = format!(
        "{name} is not supported by npu-emu yet (returns ACL_ERROR_API_NOT_SUPPORT {ACL_ERROR_API_NOT_SUPPORT})"
    );
    crate::ffi::set_recent(&msg);
    let first = LOGGED.lock().get_or_insert_with(HashSet::new).insert(name);
    if first {
        crate::runtime::log(LogLevel::Warning, &msg);
    }
}

/// Stub for functions returning `aclError`.
pub fn not_supported(name: &'static str) -> i32 {
    note(name);
    ACL_ERROR_API_NOT_SUPPORT
}

/// Stub for functions returning a pointer: NULL.
pub fn not_supported_ptr<T>(name: &'static str) -> *mut T {
    note(name);
    std::ptr::null_mut()
}

/// Stub for functions returning an integer or float: zero.
pub fn not_supported_zero<T: Default>(name: &'static str) -> T {
    note(name);
    T::default()
}

/// Stub for functions returning `void`.
pub fn not_supported_void(name: &'static str) {
    note(name);
}
