//! What every C-interface library of npu-emu shares (`libascendcl.so`, `libhccl.so`,
//! `libnnopbase.so`), written once. It depends on nothing of ours, so the machine crate
//! (`npu-emu`) uses its OS helpers and runtime-table types too.
//!
//! Where things live:
//! - [`boundary`]: the panic boundary of every export ([`boundary::call`],
//!   [`boundary::call_value`]), generic over a library's [`boundary::Convention`] (its C
//!   status type, its codes, where its messages go); NULL-argument checks and out-parameters.
//! - [`handles`]: [`handles::HandleTable`], the one registry type for live handles
//!   (tagged ids, never dereferenced; a stale, foreign or wrongly typed handle is named).
//! - [`stub`]: what an export that is not implemented yet returns and says.
//! - [`rtapi`]: the runtime table `libascendcl.so` exports (`npuemu_runtime_api`) and its
//!   loader; [`rt`]: the client libhccl and libnnopbase reach the runtime through.
//! - [`os`]: shared file mappings, process liveness (and whether a process is stopped), the
//!   directory of the library we are linked into, futex wait/wake, thread and CPU ids.
//! - [`codes`]: the names of status codes, for messages (`HcclResult`).
//! - [`globals`]: this crate's process-global state, each with its reason.

pub mod boundary;
pub mod codes;
pub mod globals;
pub mod handles;
pub mod os;
pub mod rt;
pub mod rtapi;
pub mod stub;
