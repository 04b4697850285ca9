//! The runtime as a library without one of its own sees it (libhccl, libnnopbase): the
//! [`RtApi`] table of `libascendcl.so`, found with [`load_runtime`] and cached for the
//! life of the process ([`Cached`]), behind methods that check the table's answers and
//! turn failures into the library's own error type (through `From<RtError>`), quoting the
//! runtime's message.

use crate::rtapi::{load_runtime, LoadedRuntime, RtApi, RtPhys, RtTask};
use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;
use std::sync::OnceLock;

/// `ACL_ERROR_UNINITIALIZE` (abi.md §1.5): the runtime's answer before `aclInit`.
const ACL_ERROR_UNINITIALIZE: i32 = 100001;

/// What kind of failure an [`RtError`] is: the caller's argument, or the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtErrorKind {
    /// The caller's argument is wrong (a device address that is no live allocation).
    Argument,
    /// The runtime could not be loaded or failed.
    Runtime,
    /// A range another process published (a peer's buffer in a communicator's control
    /// block) is not device memory that process holds: a damaged or forged record, never
    /// the caller's argument.
    Peer,
}

/// A hold on the runtime ([`Client::hold`]), released when dropped.
pub struct RtHold {
    release: unsafe extern "C" fn(token: *const c_void),
    token: *const c_void,
}

impl Drop for RtHold {
    fn drop(&mut self) {
        // SAFETY: `token` came from the same table's `hold` and is released exactly once.
        unsafe { (self.release)(self.token) };
    }
}

/// A failure of a runtime call, with a readable message; libraries convert it into their
/// own error type (`impl From<RtError>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtError {
    pub kind: RtErrorKind,
    pub msg: String,
}

impl RtError {
    fn runtime(msg: String) -> RtError {
        RtError {
            kind: RtErrorKind::Runtime,
            msg,
        }
    }
}

/// The loaded runtime; `E` is the library's error type.
pub struct Client<E> {
    pub api: &'static RtApi,
    /// The CANN log module of the library's lines (`HCCL`, `OP`).
    pub module: &'static str,
    recent: Option<unsafe extern "C" fn() -> *const c_char>,
    soc_name: Option<unsafe extern "C" fn() -> *const c_char>,
    /// Keeps libascendcl.so loaded (a `Client` lives in a static that is never dropped).
    _lib: LoadedRuntime,
    _error: PhantomData<fn() -> E>,
}

/// Text behind a C string pointer (empty for NULL).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: per the function's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `": msg"`, or nothing for an empty message.
fn quoted(m: &str) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    }
}

impl<E: From<RtError>> Client<E> {
    /// Load the runtime for library `user` (named in messages), whose lines are logged
    /// under `module`.
    pub fn load(user: &str, module: &'static str) -> Result<Client<E>, String> {
        let loaded = load_runtime(user)?;
        Ok(Client {
            api: loaded.api,
            module,
            recent: loaded.str_fn(b"aclGetRecentErrMsg\0"),
            soc_name: loaded.str_fn(b"aclrtGetSocName\0"),
            _lib: loaded,
            _error: PhantomData,
        })
    }

    /// The runtime's recent messages of this thread (taken), for quoting.
    fn take_msg(&self) -> String {
        match self.recent {
            // SAFETY: aclGetRecentErrMsg takes nothing and returns NULL or a string that
            // stays valid until the thread's next call.
            Some(f) => unsafe { text(f()) },
            None => String::new(),
        }
    }

    fn fail(&self, code: i32, what: &str) -> E {
        let m = self.take_msg();
        let hint = if code == ACL_ERROR_UNINITIALIZE {
            " (was aclInit called?)"
        } else {
            ""
        };
        E::from(RtError::runtime(format!(
            "{what} failed with ACL error {code}{hint}{}",
            quoted(&m)
        )))
    }

    /// The emulated SoC (`aclrtGetSocName`), empty if unknown.
    pub fn soc_name(&self) -> String {
        match self.soc_name {
            // SAFETY: aclrtGetSocName takes nothing and returns NULL or a static string.
            Some(f) => unsafe { text(f()) },
            None => String::new(),
        }
    }

    /// Logical and physical id of the calling thread's current device.
    pub fn current_device(&self) -> Result<(i32, u32), E> {
        let (mut l, mut p) = (0i32, 0u32);
        // SAFETY: both out-pointers are valid for writes during the call.
        let r = unsafe { (self.api.current_device)(&mut l, &mut p) };
        if r != 0 {
            return Err(self.fail(r, "getting the current device (call aclrtSetDevice first)"));
        }
        Ok((l, p))
    }

    /// Physical id of logical device `logical`.
    pub fn logical_to_physical(&self, logical: i32) -> Result<u32, E> {
        let mut p = 0u32;
        // SAFETY: the out-pointer is valid for writes during the call.
        let r = unsafe { (self.api.logical_to_physical)(logical, &mut p) };
        if r != 0 {
            return Err(self.fail(r, &format!("device {logical}")));
        }
        Ok(p)
    }

    /// Check that `[addr, addr+len)` is inside one live device allocation of this process
    /// and give its physical location; `what` names the argument.
    pub fn translate(&self, addr: u64, len: u64, what: &str) -> Result<RtPhys, E> {
        let mut out = RtPhys::default();
        // SAFETY: the out-pointer is valid for writes during the call.
        let r = unsafe { (self.api.translate)(addr, len, &mut out) };
        if r != 0 {
            let m = self.take_msg();
            return Err(E::from(RtError {
                kind: RtErrorKind::Argument,
                msg: format!(
                    "{what} {addr:#x} ({len} bytes) is not inside one device allocation of \
                     this process{}",
                    quoted(&m)
                ),
            }));
        }
        Ok(out)
    }

    /// Like [`Self::translate`], also giving the serial of the allocation (or VMM mapping)
    /// holding the range: the same address later held by another serial was freed (and
    /// maybe allocated again) in between.
    pub fn translate_serial(&self, addr: u64, len: u64, what: &str) -> Result<(RtPhys, u64), E> {
        let mut out = RtPhys::default();
        let mut serial = 0u64;
        // SAFETY: both out-pointers are valid for writes during the call.
        let r = unsafe { (self.api.translate_serial)(addr, len, &mut out, &mut serial) };
        if r != 0 {
            let m = self.take_msg();
            return Err(E::from(RtError {
                kind: RtErrorKind::Argument,
                msg: format!(
                    "{what} {addr:#x} ({len} bytes) is not inside one device allocation of \
                     this process{}",
                    quoted(&m)
                ),
            }));
        }
        Ok((out, serial))
    }

    /// A host pointer to a range process `pid` of this node published: only if the whole
    /// range lies in device memory that process holds (else an [`RtErrorKind::Peer`] error
    /// quoting the runtime's message).
    pub fn peer_host(&self, pid: u32, phys: RtPhys, len: u64) -> Result<*mut u8, E> {
        // SAFETY: plain values in, a pointer out; the runtime checks the range.
        let p = unsafe { (self.api.peer_to_host)(pid, phys, len) };
        if p.is_null() {
            return Err(E::from(RtError {
                kind: RtErrorKind::Peer,
                msg: self.take_msg(),
            }));
        }
        Ok(p)
    }

    /// A host pointer to a physical range (any process's device memory).
    pub fn host(&self, phys: RtPhys, len: u64) -> Result<*mut u8, E> {
        // SAFETY: plain values in, a pointer out; the runtime checks the range.
        let p = unsafe { (self.api.phys_to_host)(phys, len) };
        if p.is_null() {
            return Err(E::from(RtError::runtime(format!(
                "device {} offset {:#x} (+{len} bytes) is outside its HBM",
                phys.device, phys.offset
            ))));
        }
        Ok(p)
    }

    /// [`Self::translate`] then [`Self::host`]: a host pointer to `len` bytes of this
    /// process's device memory at `addr`.
    pub fn device_range(&self, addr: u64, len: u64, what: &str) -> Result<*mut u8, E> {
        let phys = self.translate(addr, len, what)?;
        self.host(phys, len)
    }

    /// Enqueue `task` on `stream` (NULL: the default stream). The task is consumed either
    /// way.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn enqueue(&self, stream: *mut c_void, task: RtTask) -> Result<(), E> {
        // SAFETY: the caller passes a valid stream; the table takes the task's ownership.
        let r = unsafe { (self.api.enqueue)(stream, task) };
        if r != 0 {
            return Err(self.fail(r, "enqueueing on the stream"));
        }
        Ok(())
    }

    /// Like [`Self::enqueue`], for a task whose `run` may be called any number of times: a
    /// stream being captured into a model (`aclmdlRICaptureBegin`, `torch.npu.graph`) keeps
    /// it and runs it at each execution of the model; `drop` is called once at the end.
    /// `what` (one line) names it in the model's debug print.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process; `task.run` may be called again
    /// after it returned (never concurrently).
    pub unsafe fn enqueue_repeatable(
        &self,
        stream: *mut c_void,
        task: RtTask,
        what: &str,
    ) -> Result<(), E> {
        let kind = self.module.to_ascii_lowercase();
        // SAFETY: the caller passes a valid stream and a repeatable task; both (pointer,
        // length) pairs describe live strings for the call; the table takes the task's
        // ownership.
        let r = unsafe {
            (self.api.enqueue_repeatable)(
                stream,
                task,
                kind.as_ptr(),
                kind.len(),
                what.as_ptr(),
                what.len(),
            )
        };
        if r != 0 {
            return Err(self.fail(r, "enqueueing on the stream"));
        }
        Ok(())
    }

    /// Whether `stream` hands its operations to a model (capture, bound stream, task-group
    /// update) instead of running them.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn capturing(&self, stream: *mut c_void) -> Result<bool, E> {
        let mut v = 0i32;
        // SAFETY: the caller passes a valid stream; the out-pointer is valid for the call.
        let r = unsafe { (self.api.stream_capturing)(stream, &mut v) };
        if r != 0 {
            return Err(self.fail(r, "querying the stream"));
        }
        Ok(v != 0)
    }

    /// Keep the runtime and its device memory alive while the guard lives (see
    /// [`crate::rtapi::RtApi::hold`]): for operations that run on the calling thread.
    pub fn hold(&self) -> RtHold {
        // SAFETY: no arguments; the token is given back by the guard's `Drop`.
        let token = unsafe { (self.api.hold)() };
        RtHold {
            release: self.api.release,
            token,
        }
    }

    /// Whether `stream` is idle (see [`crate::rtapi::RtApi::stream_idle`]): an operation
    /// may then run on the calling thread in its place.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn stream_idle(&self, stream: *mut c_void) -> Result<bool, E> {
        let mut v = 0i32;
        // SAFETY: the caller passes a valid stream; the out-pointer is valid for the call.
        let r = unsafe { (self.api.stream_idle)(stream, &mut v) };
        if r != 0 {
            return Err(self.fail(r, "querying the stream"));
        }
        // 2: idle but for a gate, whose work comes first.
        Ok(v == 1)
    }

    /// `stream`'s idleness as [`Self::stream_idle`] sees it, telling apart an idle stream
    /// that holds a gate: 0 not idle, 1 idle, 2 idle with a gate.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn stream_idleness(&self, stream: *mut c_void) -> Result<i32, E> {
        let mut v = 0i32;
        // SAFETY: the caller passes a valid stream; the out-pointer is valid for the call.
        let r = unsafe { (self.api.stream_idle)(stream, &mut v) };
        if r != 0 {
            return Err(self.fail(r, "querying the stream"));
        }
        Ok(v)
    }

    /// Leave `gate` on `stream` (see [`crate::rtapi::RtApi::set_gate`]); consumed either way.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn set_gate(
        &self,
        stream: *mut c_void,
        gate: crate::rtapi::RtGate,
    ) -> Result<(), E> {
        // SAFETY: the caller passes a valid stream; the table takes the gate's ownership.
        let r = unsafe { (self.api.set_gate)(stream, gate) };
        if r != 0 {
            return Err(self.fail(r, "leaving work on the stream"));
        }
        Ok(())
    }

    /// Run `stream`'s gate (see [`crate::rtapi::RtApi::pass_gate`]); true if it is still
    /// there.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn pass_gate(&self, stream: *mut c_void, block: bool) -> Result<bool, E> {
        let mut v = 0i32;
        // SAFETY: the caller passes a valid stream; the out-pointer is valid for the call.
        let r = unsafe { (self.api.pass_gate)(stream, block as i32, &mut v) };
        if r != 0 {
            return Err(self.fail(r, "running the work left on the stream"));
        }
        Ok(v != 0)
    }

    /// Say that the stream task running on the calling thread waits for other servers (see
    /// [`crate::rtapi::RtApi::task_waits_for_network`]).
    pub fn task_waits_for_network(&self) {
        // SAFETY: the function takes nothing and only sets a flag of the calling thread's
        // stream task, if any.
        unsafe { (self.api.task_waits_for_network)() }
    }

    /// Enqueue an operation a model can hold (see [`crate::rtapi::RtTemplate`]); `what`
    /// describes it in capture information. The template is consumed either way.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn enqueue_template(
        &self,
        stream: *mut c_void,
        tmpl: crate::rtapi::RtTemplate,
        what: &str,
    ) -> Result<(), E> {
        let kind = self.module.to_ascii_lowercase();
        // SAFETY: the caller passes a valid stream; both (pointer, length) pairs describe
        // live strings for the call; the table takes the template's ownership.
        let r = unsafe {
            (self.api.enqueue_template)(
                stream,
                tmpl,
                kind.as_ptr(),
                kind.len(),
                what.as_ptr(),
                what.len(),
            )
        };
        if r != 0 {
            return Err(self.fail(r, "putting the operation into the stream's model"));
        }
        Ok(())
    }

    /// Wait until `stream` ran everything enqueued so far.
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn synchronize(&self, stream: *mut c_void) -> Result<(), E> {
        // SAFETY: the caller passes a valid stream.
        let r = unsafe { (self.api.synchronize)(stream) };
        if r != 0 {
            return Err(self.fail(r, "synchronizing the stream"));
        }
        Ok(())
    }

    /// Record `msg` as the calling thread's recent error (also on a stream worker: the
    /// message of a failed task) and log it under the library's module.
    pub fn set_error(&self, msg: &str) {
        // SAFETY: both (pointer, length) pairs describe live strings for the call.
        unsafe {
            (self.api.set_error_module)(
                self.module.as_ptr(),
                self.module.len(),
                msg.as_ptr(),
                msg.len(),
            )
        };
    }
}

/// The runtime of a library, loaded on first use and kept for the life of the process
/// (held in a `static`).
pub struct Cached<E> {
    cell: OnceLock<Result<Client<E>, String>>,
    user: &'static str,
    module: &'static str,
}

impl<E: From<RtError>> Cached<E> {
    /// The runtime of library `user` (e.g. `"libhccl.so"`), logging under `module`.
    pub const fn new(user: &'static str, module: &'static str) -> Cached<E> {
        Cached {
            cell: OnceLock::new(),
            user,
            module,
        }
    }

    /// The runtime, loading it on first use.
    pub fn get(&self) -> Result<&Client<E>, E> {
        match self
            .cell
            .get_or_init(|| Client::load(self.user, self.module))
        {
            Ok(c) => Ok(c),
            Err(e) => Err(E::from(RtError::runtime(e.clone()))),
        }
    }

    /// Record `msg` as the thread's recent error through the runtime, which also logs it
    /// under the library's module. False if the runtime cannot be loaded (then the caller
    /// logs the message itself).
    pub fn set_recent(&self, msg: &str) -> bool {
        match self.get() {
            Ok(c) => {
                c.set_error(msg);
                true
            }
            Err(_) => false,
        }
    }
}
