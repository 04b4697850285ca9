//! What an unimplemented ACL export does: the stubs `build.rs` generates for every function
//! of `abi/acl_functions.tsv` that `api/` does not define call `npu_emu_ffi::stub` with
//! [`Lib`]: they return `ACL_ERROR_API_NOT_SUPPORT` (or NULL, zero, nothing), keep a message
//! naming the function for `aclGetRecentErrMsg`, and log it once per function at ERROR level
//! (so it shows at the default log level, before the caller turns the code into a bare
//! number). A function listed in `abi/acl_stubs.tsv` is a stub on purpose (pure hardware):
//! it returns the code listed there, the one CANN returns on hardware without the feature,
//! and its message gives the listed reason.

use npu_emu::codes::ACL_ERROR_API_NOT_SUPPORT;
use npu_emu::config::LogLevel;

/// libascendcl's "not supported" conventions.
pub struct Lib;

impl npu_emu_ffi::stub::Unsupported for Lib {
    const CODE: i32 = ACL_ERROR_API_NOT_SUPPORT;
    const CODE_NAME: &'static str = "ACL_ERROR_API_NOT_SUPPORT";
    fn record(msg: &str, first: bool) {
        crate::ffi::set_recent(msg);
        if first {
            crate::runtime::log(LogLevel::Error, msg);
        }
    }
}
