//! What an export that is not implemented yet does: record a message naming the function
//! (logged once per function and process) and return the library's "not supported" status,
//! or NULL, zero or nothing. Never success. The stubs that `build.rs` generates from
//! `abi/*_functions.tsv` call these with the library's [`Unsupported`] marker type.

use crate::globals::STUBS_SEEN;

/// A library's "not supported" conventions.
pub trait Unsupported {
    /// The status a stub returns (`ACL_ERROR_API_NOT_SUPPORT`, `HCCL_E_NOT_SUPPORT`).
    const CODE: i32;
    /// Its name, for the message.
    const CODE_NAME: &'static str;
    /// Keep `msg` as the calling thread's recent error; log it when `first` (the first call
    /// of this function in the process).
    fn record(msg: &str, first: bool);
}

fn note<L: Unsupported>(name: &'static str) {
    let msg = format!(
        "{name} is not supported by npu-emu yet (returns {} {})",
        L::CODE_NAME,
        L::CODE
    );
    let first = STUBS_SEEN.lock().insert(name);
    L::record(&msg, first);
}

fn note_because<L: Unsupported>(name: &'static str, returns: &str, why: &str) {
    let msg = format!("{name} is not supported by npu-emu (returns {returns}): {why}");
    let first = STUBS_SEEN.lock().insert(name);
    L::record(&msg, first);
}

/// Stub kept on purpose (`abi/*_stubs.tsv`): `code` (what CANN returns where the feature
/// is missing), with the reason `why` in the message.
pub fn not_supported_because<L: Unsupported>(name: &'static str, code: i32, why: &str) -> i32 {
    note_because::<L>(name, &code.to_string(), why);
    code
}

/// Stub kept on purpose returning a pointer: NULL, with the reason `why` in the message.
pub fn not_supported_ptr_because<L: Unsupported, T>(name: &'static str, why: &str) -> *mut T {
    note_because::<L>(name, "NULL", why);
    std::ptr::null_mut()
}

/// Stub kept on purpose returning `void`: the reason `why` in the message.
pub fn not_supported_void_because<L: Unsupported>(name: &'static str, why: &str) {
    note_because::<L>(name, "nothing", why);
}

/// Stub for functions returning a status.
pub fn not_supported<L: Unsupported>(name: &'static str) -> i32 {
    note::<L>(name);
    L::CODE
}

/// Stub for functions returning a pointer: NULL.
pub fn not_supported_ptr<L: Unsupported, T>(name: &'static str) -> *mut T {
    note::<L>(name);
    std::ptr::null_mut()
}

/// Stub for functions returning a number: zero.
pub fn not_supported_zero<L: Unsupported, T: Default>(name: &'static str) -> T {
    note::<L>(name);
    T::default()
}

/// Stub for functions returning `void`.
pub fn not_supported_void<L: Unsupported>(name: &'static str) {
    note::<L>(name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    static LOG: Mutex<Vec<(String, bool)>> = Mutex::new(Vec::new());
    struct Lib;
    impl Unsupported for Lib {
        const CODE: i32 = 5;
        const CODE_NAME: &'static str = "E_NOT_SUPPORT";
        fn record(msg: &str, first: bool) {
            LOG.lock().push((msg.to_string(), first));
        }
    }

    #[test]
    fn says_so_and_logs_once() {
        assert_eq!(not_supported::<Lib>("fooStub"), 5);
        assert!(not_supported_ptr::<Lib, u8>("fooStub").is_null());
        assert_eq!(not_supported_zero::<Lib, u32>("barStub"), 0);
        not_supported_void::<Lib>("barStub");
        assert_eq!(
            not_supported_because::<Lib>("bazStub", 7, "no such unit"),
            7
        );
        let log = LOG.lock();
        assert_eq!(
            log[4].0,
            "bazStub is not supported by npu-emu (returns 7): no such unit"
        );
        assert_eq!(
            log[0].0,
            "fooStub is not supported by npu-emu yet (returns E_NOT_SUPPORT 5)"
        );
        let firsts: Vec<bool> = log.iter().map(|l| l.1).collect();
        assert_eq!(firsts, vec![true, false, true, false, true]);
    }
}
