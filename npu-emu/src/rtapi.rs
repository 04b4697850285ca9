//! The narrow runtime interface `libascendcl` exports for `libhccl` (DESIGN §1).
//!
//! `libascendcl.so` exports one C function, `npuemu_runtime_api`, returning a pointer to a
//! static [`RtApi`]. `libhccl.so` finds it with `libloading` (the already-loaded library,
//! else the sibling file next to `libhccl.so`) and reaches the one runtime instance of the
//! process only through this table. Everything crossing it is C ABI, so the two libraries
//! need not share Rust type layouts beyond this `#[repr(C)]` struct.

use std::ffi::c_void;

/// Bump when [`RtApi`] changes; `libhccl` refuses a table of another version.
pub const RT_API_VERSION: u32 = 1;

/// Name of the exported accessor in `libascendcl.so`.
pub const RT_API_SYMBOL: &[u8] = b"npuemu_runtime_api\0";

/// A task for a stream, in C ABI form. `run` is called once on the stream's worker thread
/// and returns 0 or an ACL error code (after calling [`RtApi::set_error`] with a message on
/// that thread); `drop` is called exactly once afterwards (or instead, if the task is
/// discarded) to free `ctx`.
#[repr(C)]
pub struct RtTask {
    pub ctx: *mut c_void,
    pub run: unsafe extern "C" fn(ctx: *mut c_void) -> i32,
    pub drop: unsafe extern "C" fn(ctx: *mut c_void),
}

// SAFETY: the producer of an RtTask guarantees ctx may move to the worker thread.
unsafe impl Send for RtTask {}

/// A physical location in device memory: device (physical id) and byte offset in its HBM.
/// Physical addresses mean the same in every process of the node, so ranks publish them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtPhys {
    pub device: u32,
    pub _pad: u32,
    pub offset: u64,
}

/// The function table. All functions are safe to call from any thread once `aclInit` ran;
/// before that they return `ACL_ERROR_UNINITIALIZE` (100001) or NULL.
#[repr(C)]
pub struct RtApi {
    pub version: u32,
    /// Current device of the calling thread: logical id (as the program sees it) and
    /// physical id (as the node sees it). Returns 0, or an ACL code if no device is set.
    pub current_device: unsafe extern "C" fn(logical: *mut i32, physical: *mut u32) -> i32,
    /// Logical id → physical id in this process (honours `ASCEND_RT_VISIBLE_DEVICES`).
    pub logical_to_physical: unsafe extern "C" fn(logical: i32, physical: *mut u32) -> i32,
    /// Enqueue `task` on `stream` (NULL = the current context's default stream). Takes
    /// ownership of the task even on failure. Returns 0 or an ACL code (message recorded).
    pub enqueue: unsafe extern "C" fn(stream: *mut c_void, task: RtTask) -> i32,
    /// Wait until `stream` has run everything enqueued so far (as `aclrtSynchronizeStream`).
    pub synchronize: unsafe extern "C" fn(stream: *mut c_void) -> i32,
    /// Check that `[addr, addr+len)` lies inside one live device allocation of this process
    /// (or a mapped VMM range) and give its physical location. `len` may be 0.
    /// Returns 0, or `ACL_ERROR_INVALID_PARAM` with a message naming the address.
    pub translate: unsafe extern "C" fn(addr: u64, len: u64, out: *mut RtPhys) -> i32,
    /// A host pointer through which this process may read and write the physical range
    /// (the emulator's alias mapping). NULL if the range is outside the device's HBM.
    pub phys_to_host: unsafe extern "C" fn(phys: RtPhys, len: u64) -> *mut u8,
    /// Record `msg` (UTF-8, not NUL-terminated) as the calling thread's recent error
    /// message (`aclGetRecentErrMsg`), and log it at ERROR level.
    pub set_error: unsafe extern "C" fn(msg: *const u8, len: usize),
    /// Identity of the stream handle `stream` (NULL = default stream), for fingerprints
    /// and logs. Returns 0 on success.
    pub stream_id: unsafe extern "C" fn(stream: *mut c_void, id: *mut i32) -> i32,
}
