//! The ACL runtime as libnnopbase sees it: the shared runtime-table client
//! ([`npu_emu_ffi::rt`]) with aclnn's error type (DESIGN §1, the same one-runtime-instance
//! rule as libhccl). Besides the table it uses two ordinary ACL exports: `aclrtGetSocName`
//! (the emulated SoC decides what aclnn supports) and `aclGetRecentErrMsg` (to quote the
//! runtime's message when one of its calls fails).

use crate::globals::RT;
use crate::status::{NnError, NnResult};
use npu_emu_ffi::rt::Client;

/// The loaded runtime.
pub type Rt = Client<NnError>;

/// The CANN log module of libnnopbase's / libopapi's lines: `OP` (module id 63 of CANN's
/// `log_types.h`, the `OP_ID` that `aclnn/opdev/op_log.h` logs under with sub-module `NNOP`).
pub const MODULE: &str = "OP";

/// The runtime, loading it on first use.
pub fn rt() -> NnResult<&'static Rt> {
    RT.get()
}

/// Record `msg` as the thread's recent error; the runtime also logs it as
/// `[ERROR] OP(pid,tid): msg`, subject to the OP module's log level. False if the runtime
/// cannot be loaded.
pub fn set_recent(msg: &str) -> bool {
    RT.set_recent(msg)
}
