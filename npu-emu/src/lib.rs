//! The emulated Ascend NPU machine.
//!
//! This crate holds types and logic; the one runtime instance of a process lives in
//! `libascendcl` (see `../shared/DESIGN.md` §1). Its few process-global items (address
//! reservations, the fault handler's state, cached machine facts, process-unique id
//! counters) are in [`globals`], each with the reason it must be global; the one exception
//! is the stream workers' thread-locals, still declared in [`stream`].
//!
//! Where things live:
//! - [`config`]: every `NPU_EMU_*`, `ASCEND_*` and `HCCL_*` environment variable, read once.
//! - [`log`]: CANN-style log lines `[LEVEL] MODULE(pid,tid): message`.
//! - [`error`]: [`error::Error`], an ACL error code plus a readable message.
//! - [`codes`]: ACL error code values (abi.md §1.5) used by the machine.
//! - [`node`]: the shared-memory node (`/dev/shm/npu-emu-<uid>`): header, process table, slabs;
//!   the checks that keep it private; its reaper process ([`node::reaper`]).
//! - [`memory`]: device address layout, CANN's allocation sizes, and [`memory::Space`] (the
//!   memory of one process as the copy engines and kernels see it).
//! - [`copy`]: the copy engines (`aclrtMemcpy*`, `aclrtMemset*`), one file per variant.
//! - [`kernels`]: operator kernels run on a stream (the "Cast" operator …), one file each.
//! - [`fault`]: the SIGSEGV handler that names host accesses to device memory.
//! - [`aicore`]: the emulated AI cores that run the blocks of an Ascend C kernel launch.
//! - [`cube`]: the cube unit's arithmetic (`C += A × B` in float) for `Mmad` and `Matmul`.
//! - [`kernel_bin`]: kernel binaries (`ascendc_fatbin_library` output) loaded by name.
//! - [`stream`], [`event`]: ordered task queues with one worker each (a host thread that
//!   synchronizes runs queued tasks itself when the worker is not running one), and events.
//! - [`capture`]: models (`aclmdlRI`): stream operations captured or bound, run any number of
//!   times.
//! - [`wait`]: the one spin / yield / futex wait policy (streams, events, HCCL), with all
//!   its constants.
//! - [`globals`]: every process-global item of the crate and why it is global.
//! - [`formats`]: private data formats (NC1HWC0, FRACTAL_Z, FRACTAL_NZ …): shapes and conversions.
//! - [`ipc`]: sharing between processes: IPC memory keys, notifies, count notifies, IPC
//!   events, shareable VMM handles (`<node_dir>/ipc.slots`, `<node_dir>/ipc/`).
//! - [`fp16`]: the ACL fp16 helpers with CANN's quirks.
//! - [`fpstatus`]: the thread's floating-point exception flags (overflow detection).
//! - [`rtapi`]: the narrow runtime interface `libascendcl` exports for `libhccl` and
//!   `libnnopbase` (defined in `npu-emu-ffi`, re-exported here).
//! - OS helpers (file mappings, process liveness, futexes) are `npu_emu_ffi::os`, shared
//!   with the C-interface libraries.
//! - [`ops`]: the operator engine of the aclnn operators (views, broadcasting, kernels).

pub mod aicore;
pub mod capture;
pub mod codes;
pub mod config;
pub mod copy;
pub mod cube;
pub mod error;
pub mod event;
pub mod fault;
pub mod formats;
pub mod fp16;
pub mod fpstatus;
pub mod globals;
pub mod ipc;
pub mod kernel_bin;
pub mod kernels;
pub mod log;
pub mod memory;
pub mod node;
pub mod ops;
pub mod stream;
pub mod wait;

pub use error::{Error, Result};
/// The runtime table (`npuemu_runtime_api`), defined with the other C-interface plumbing in
/// `npu-emu-ffi` and used here for its [`rtapi::RtPhys`].
pub use npu_emu_ffi::rtapi;
