//! What a not-yet-implemented HCCL export does: the stubs `build.rs` generates for every
//! function of `abi/hccl_functions.tsv` that `api/` does not define call
//! `npu_emu_ffi::stub` with [`Lib`]: they return `HCCL_E_NOT_SUPPORT` (or NULL, zero,
//! nothing) and leave a message naming the function. Never success.

use crate::errors::HCCL_E_NOT_SUPPORT;
use npu_emu::config::LogLevel;

/// libhccl's "not supported" conventions.
pub struct Lib;

impl npu_emu_ffi::stub::Unsupported for Lib {
    const CODE: i32 = HCCL_E_NOT_SUPPORT;
    const CODE_NAME: &'static str = "HCCL_E_NOT_SUPPORT";
    fn record(msg: &str, first: bool) {
        // With the runtime loaded, the message is recorded (and printed) through it.
        let recorded = crate::rt::set_recent(msg);
        if first && !recorded {
            crate::log(LogLevel::Error, msg);
        }
    }
}
