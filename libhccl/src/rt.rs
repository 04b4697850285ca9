//! The ACL runtime as libhccl sees it: the shared runtime-table client
//! ([`npu_emu_ffi::rt`]: the `npuemu_runtime_api` table of `libascendcl.so`, DESIGN §1) with
//! HCCL's error type.

use crate::errors::{HResult, HcclError};
use crate::globals::RT;
use npu_emu_ffi::rt::Client;

/// The loaded runtime.
pub type Rt = Client<HcclError>;

/// The CANN log module of libhccl's lines (`HCCL`, module id 3 of CANN's `log_types.h`).
pub const MODULE: &str = "HCCL";

/// The runtime, loading it on first use.
pub fn rt() -> HResult<&'static Rt> {
    RT.get()
}

/// Record `msg` as the thread's recent error (`aclGetRecentErrMsg`); the runtime also logs
/// it as `[ERROR] HCCL(pid,tid): msg`, subject to the HCCL module's level. False if the
/// runtime is not loaded.
pub fn set_recent(msg: &str) -> bool {
    RT.set_recent(msg)
}
