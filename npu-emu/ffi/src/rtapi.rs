//! The narrow runtime interface `libascendcl` exports for `libhccl` (DESIGN §1).
//!
//! `libascendcl.so` exports one C function, `npuemu_runtime_api`, returning a pointer to a
//! static [`RtApi`]. `libhccl.so` and `libnnopbase.so` find it with [`load_runtime`] (the
//! already-loaded library, else the sibling file next to the calling library) and reach the
//! one runtime instance of the process only through this table ([`crate::rt`] is their
//! client). Everything crossing it is C ABI, so the libraries need not share Rust type
//! layouts beyond these `#[repr(C)]` structs.

use std::ffi::{c_char, c_void};

/// Bump when [`RtApi`] changes; `libhccl` and `libnnopbase` refuse a table of another
/// version ([`load_runtime`]). New entries go at the end of the table only.
///
/// - 1: the first table.
/// - 2: `set_error_module` (a library's errors logged under its own CANN module).
/// - 3: `translate_serial` and `peer_to_host` (queued HCCL operations recheck their buffers
///   when they run; peers' published buffers are checked against the peer's memory).
/// - 4: `stream_capturing`, `enqueue_template`, `enqueue_repeatable` (stream capture into
///   models, `aclmdlRI*`).
/// - 5: `stream_idle` (a small HCCL collective on an idle stream runs at its call).
/// - 6: `hold` and `release` (an operation running on the calling thread keeps the device
///   memory it uses mapped while another thread calls `aclFinalize`).
/// - 7: `set_gate` and `pass_gate` (a small collective whose peers are not there yet
///   leaves its second half on the stream's host side); `stream_idle` says 2 for an idle
///   stream that holds such a gate.
/// - 8: `task_waits_for_network` (host threads waiting for a stream whose task waits for
///   other servers sleep instead of polling).
pub const RT_API_VERSION: u32 = 8;

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

/// A stream operation a model can hold ([`RtApi::enqueue_template`]): each time it is to run
/// (at once outside a capture; at each execution of the model inside one), `instantiate` is
/// called on the launching host thread and fills `*out` with a fresh one-shot [`RtTask`], or
/// returns an ACL error code (after setting the message). `drop` is called once when the
/// operation is no longer needed. `instantiate` may be called from any thread, concurrently
/// with tasks it made earlier.
#[repr(C)]
pub struct RtTemplate {
    pub ctx: *mut c_void,
    pub instantiate: unsafe extern "C" fn(ctx: *mut c_void, out: *mut RtTask) -> i32,
    pub drop: unsafe extern "C" fn(ctx: *mut c_void),
}

// SAFETY: the producer of an RtTemplate guarantees ctx may be used from any thread.
unsafe impl Send for RtTemplate {}
// SAFETY: as for Send: `instantiate` may be called from any thread, concurrently.
unsafe impl Sync for RtTemplate {}

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
    /// message (`aclGetRecentErrMsg`), and log it at ERROR level under `ASCENDCL`.
    /// Libraries with a module of their own use `set_error_module` instead.
    pub set_error: unsafe extern "C" fn(msg: *const u8, len: usize),
    /// Identity of the stream handle `stream` (NULL = default stream), for fingerprints
    /// and logs. Returns 0 on success.
    pub stream_id: unsafe extern "C" fn(stream: *mut c_void, id: *mut i32) -> i32,
    /// Like `set_error`, but the ERROR line is logged under `module` (`module_len` bytes of
    /// UTF-8, not NUL-terminated; a CANN module name such as `HCCL` or `OP`), filtered by
    /// that module's level (`ASCEND_MODULE_LOG_LEVEL`, else `ASCEND_GLOBAL_LOG_LEVEL`), as
    /// CANN's own libraries log under their module. The message is recorded for
    /// `aclGetRecentErrMsg` whatever the level. Since version 2.
    pub set_error_module:
        unsafe extern "C" fn(module: *const u8, module_len: usize, msg: *const u8, len: usize),
    /// Like `translate`, also giving the serial of the allocation (or VMM mapping) holding
    /// the range (`npu_emu::node::Node::phys_serial`): the same address later held by
    /// another serial was freed (and maybe allocated again) in between. Since version 3.
    pub translate_serial:
        unsafe extern "C" fn(addr: u64, len: u64, out: *mut RtPhys, serial: *mut u64) -> i32,
    /// Like `phys_to_host`, for a peer's buffer: NULL (with a message) unless the whole
    /// range lies in device memory held by process `pid` of this node
    /// (`npu_emu::node::Node::held_by`). Since version 3.
    pub peer_to_host: unsafe extern "C" fn(pid: u32, phys: RtPhys, len: u64) -> *mut u8,
    /// Whether `stream` (NULL = default stream) hands its operations to a model (it is
    /// being captured, bound to a model, or in a task update): `*capturing` = 1 or 0.
    /// Since version 4.
    pub stream_capturing: unsafe extern "C" fn(stream: *mut c_void, capturing: *mut i32) -> i32,
    /// Enqueue an operation a model can hold (see [`RtTemplate`]); `kind` (`kind_len` bytes,
    /// e.g. `hccl`) and `what` (one line with its arguments) describe it in debug prints.
    /// Takes ownership of the template even on failure. Since version 4.
    pub enqueue_template: unsafe extern "C" fn(
        stream: *mut c_void,
        tmpl: RtTemplate,
        kind: *const u8,
        kind_len: usize,
        what: *const u8,
        what_len: usize,
    ) -> i32,
    /// Like `enqueue`, for a task whose `run` may be called any number of times (each
    /// execution of a model that captured it) and whose `drop` is called once at the end.
    /// Since version 4.
    pub enqueue_repeatable: unsafe extern "C" fn(
        stream: *mut c_void,
        task: RtTask,
        kind: *const u8,
        kind_len: usize,
        what: *const u8,
        what_len: usize,
    ) -> i32,
    /// Whether `stream` (NULL = default stream) is idle: every task enqueued so far has
    /// finished, no error of one waits to be reported, and it does not hand its operations
    /// to a model. `*idle` = 1 or 0. An operation whose inputs are ready may then run at
    /// once on the calling thread, as if the stream had run it. Since version 5.
    pub stream_idle: unsafe extern "C" fn(stream: *mut c_void, idle: *mut i32) -> i32,
    /// Keep this process's runtime, and the device memory it maps, alive until the token is
    /// given to `release`: an operation that runs on the calling thread (not on a stream,
    /// whose worker `aclFinalize` stops first) holds it while it reads and writes device
    /// memory, so an `aclFinalize` on another thread cannot unmap that memory under it.
    /// NULL when the runtime is not initialized. Since version 6.
    pub hold: unsafe extern "C" fn() -> *const c_void,
    /// Give back a token from `hold` (NULL is ignored). Since version 6.
    pub release: unsafe extern "C" fn(token: *const c_void),
    /// Leave `gate` ahead of everything enqueued on `stream` from now on (a gate already
    /// there runs to its end first). The runtime calls `gate.run(ctx, block)` on a host
    /// thread before that thread enqueues on, synchronizes, captures or destroys the
    /// stream (`block` = 1), and in `aclrtStreamQuery` (`block` = 0); it returns 0 when its
    /// work is done (the gate goes away), 1 when not yet (only with `block` = 0), else an
    /// ACL error code after recording its message on the thread (the gate goes away, the
    /// error is the stream's next synchronize's). `gate.drop` runs once, at the end or when
    /// the stream is aborted or destroyed by force. Takes the gate's ownership even on
    /// failure. Since version 7.
    pub set_gate: unsafe extern "C" fn(stream: *mut c_void, gate: RtGate) -> i32,
    /// Run `stream`'s gate if it has one (`block` as above); `*pending` = 1 if it is still
    /// there. Since version 7.
    pub pass_gate: unsafe extern "C" fn(stream: *mut c_void, block: i32, pending: *mut i32) -> i32,
    /// Say that the stream task running on the calling thread (on the stream's worker, or on
    /// a host thread that runs the stream's tasks in a synchronize) spends its time waiting
    /// for other servers: until a task that does not say so has run on that stream, host
    /// threads waiting for it sleep at once instead of polling. No effect outside a stream
    /// task. Since version 8.
    pub task_waits_for_network: unsafe extern "C" fn(),
}

/// Work left on a stream's host side (see [`RtApi::set_gate`]).
#[repr(C)]
pub struct RtGate {
    pub ctx: *mut c_void,
    pub run: unsafe extern "C" fn(ctx: *mut c_void, block: i32) -> i32,
    pub drop: unsafe extern "C" fn(ctx: *mut c_void),
}

/// The runtime of this process as a library without one of its own sees it (libhccl,
/// libnnopbase): the [`RtApi`] table, and the `libascendcl.so` it came from for ordinary ACL
/// exports. Kept in a static by its user, so the library stays loaded for the life of the
/// process.
pub struct LoadedRuntime {
    pub api: &'static RtApi,
    lib: libloading::os::unix::Library,
}

impl LoadedRuntime {
    /// A `const char *f(void)` export of the same `libascendcl.so` (`aclGetRecentErrMsg`,
    /// `aclrtGetSocName`), if it has one.
    pub fn str_fn(&self, name: &[u8]) -> Option<unsafe extern "C" fn() -> *const c_char> {
        // SAFETY: the caller names a function of exactly this C signature.
        unsafe {
            self.lib
                .get::<unsafe extern "C" fn() -> *const c_char>(name)
        }
        .ok()
        .map(|s| *s)
    }
}

/// Find the runtime: the already-loaded `libascendcl.so`, else the file next to the calling
/// library, else the plain name through the loader's search path. `user` names the calling
/// library in the messages (e.g. "libhccl.so").
pub fn load_runtime(user: &str) -> Result<LoadedRuntime, String> {
    use libloading::os::unix::Library;
    let mut tried = Vec::new();
    // SAFETY: loading libascendcl.so runs no foreign initialisers beyond its own.
    let mut lib =
        unsafe { Library::open(Some("libascendcl.so"), libc::RTLD_NOW | libc::RTLD_NOLOAD) }.ok();
    if lib.is_none() {
        tried.push("already-loaded libascendcl.so".to_string());
        if let Some(d) = crate::os::own_dir() {
            let p = d.join("libascendcl.so");
            // SAFETY: as above: loading libascendcl.so runs only its own initialisers.
            match unsafe { Library::open(Some(&p), libc::RTLD_NOW | libc::RTLD_GLOBAL) } {
                Ok(l) => lib = Some(l),
                Err(e) => tried.push(format!("{} ({e})", p.display())),
            }
        }
    }
    if lib.is_none() {
        // SAFETY: as above.
        match unsafe { Library::open(Some("libascendcl.so"), libc::RTLD_NOW | libc::RTLD_GLOBAL) } {
            Ok(l) => lib = Some(l),
            Err(e) => tried.push(format!("libascendcl.so on the search path ({e})")),
        }
    }
    let lib =
        lib.ok_or_else(|| format!("cannot load the ACL runtime: tried {}", tried.join(", ")))?;
    // SAFETY: npuemu_runtime_api has this signature (see RT_API_SYMBOL).
    let get: unsafe extern "C" fn() -> *const RtApi = unsafe {
        *lib.get::<unsafe extern "C" fn() -> *const RtApi>(RT_API_SYMBOL)
            .map_err(|e| {
                format!("libascendcl.so has no npuemu_runtime_api ({e}); is it npu-emu's?")
            })?
    };
    // SAFETY: the accessor takes nothing and returns a pointer to a static table.
    let api = unsafe { get() };
    if api.is_null() {
        return Err("npuemu_runtime_api returned NULL".into());
    }
    // SAFETY: a static table of the loaded library, which is never unloaded.
    let api: &'static RtApi = unsafe { &*api };
    if api.version != RT_API_VERSION {
        return Err(format!(
            "libascendcl.so runtime interface version {} but {user} needs {}; use libraries \
             from the same build",
            api.version, RT_API_VERSION
        ));
    }
    Ok(LoadedRuntime { api, lib })
}
