//! What a not-yet-implemented export does: record a message naming the function, log it
//! once per function, and return `HCCL_E_NOT_SUPPORT` (or NULL / zero / nothing). Called by
//! the stubs `build.rs` generates for every function of `abi/hccl_functions.tsv` that
//! `api/` does not define. Never reports success.

use crate::errors::HCCL_E_NOT_SUPPORT;
use npu_emu::config::LogLevel;
use parking_lot::Mutex;
use std::collections::HashSet;

static LOGGED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

fn note(name: &'static str) {
    let msg = format!(
        "{name} is not supported by npu-emu yet (returns HCCL_E_NOT_SUPPORT {HCCL_E_NOT_SUPPORT})"
    );
    // With the runtime loaded, the message is recorded (and printed) through it.
    let recorded = crate::rt::set_recent(&msg);
    let first = LOGGED.lock().get_or_insert_with(HashSet::new).insert(name);
    if first && !recorded {
        crate::log(LogLevel::Error, &msg);
    }
}

/// Stub for functions returning `HcclResult`.
pub fn not_supported(name: &'static str) -> i32 {
    note(name);
    HCCL_E_NOT_SUPPORT
}

/// Stub for functions returning a pointer: NULL.
pub fn not_supported_ptr<T>(name: &'static str) -> *mut T {
    note(name);
    std::ptr::null_mut()
}

/// Stub for functions returning an integer: zero.
pub fn not_supported_zero<T: Default>(name: &'static str) -> T {
    note(name);
    T::default()
}

/// Stub for functions returning `void`.
pub fn not_supported_void(name: &'static str) {
    note(name);
}
