//! The one runtime instance of the process: what it holds (node, devices, contexts,
//! streams, events), how it is created by the first `aclInit` and torn down by the last
//! `aclFinalize`, and how a call reaches it ([`get`]). The instance itself, the init
//! bookkeeping and each thread's current context are in [`crate::globals`] with the rest
//! of the library's process-global state.
//!
//! Handles (`aclrtStream`, `aclrtEvent`, `aclrtContext`) are entries of
//! [`npu_emu_ffi::handles::HandleTable`]s: opaque tagged ids, never dereferenced, so a
//! destroyed, foreign or garbage handle is an error naming the handle instead of undefined
//! behaviour. Ids are never reused, not even across `aclFinalize`/`aclInit`.

use crate::api::state;
pub use crate::globals::LIFECYCLE;
use crate::globals::{ATFORK, CURRENT, FORKED, PARENT_PID, RELEASED, RUNTIME, SETTINGS};
use npu_emu::codes::*;
use npu_emu::config::{Config, LogLevel};
use npu_emu::event::Event;
use npu_emu::log::Logger;
use npu_emu::node::Node;
use npu_emu::stream::Stream;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::{self, HandleKind, HandleTable};
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::{c_void, CString};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The runtime: created by the first `aclInit`, dropped by the last `aclFinalize`.
pub struct Runtime {
    pub cfg: Config,
    pub logger: Logger,
    /// The node this process joined (opened at `aclInit`).
    pub node: Node,
    /// Device and host memory bookkeeping of this process (see [`crate::mem`]).
    pub mem: crate::mem::MemState,
    /// Contexts, streams, events, subscriptions.
    pub reg: Mutex<Registry>,
    /// `cfg.soc_name` as a C string (`aclrtGetSocName`).
    pub soc_name: CString,
    /// `aclrtSetExceptionInfoCallback`: called on a stream's worker when one of its tasks
    /// fails, with an [`ExceptionInfo`].
    pub exception_cb: Arc<Mutex<Option<ExceptionCallback>>>,
    /// The config's default device: used by threads with no current context. Set at
    /// creation, or by an `aclInit` that adopts a runtime `aclrtSetDevice` started.
    pub default_device: Mutex<Option<i32>>,
    /// The node's IPC state (opened on first use, see [`Runtime::ipc`]).
    pub ipc: std::sync::OnceLock<Arc<npu_emu::ipc::Ipc>>,
}

/// What the `aclInit` config file asks of the runtime.
#[derive(Clone, Debug, Default)]
pub struct InitOptions {
    /// `{"defaultDevice": {"default_device": "N"}}`.
    pub default_device: Option<i32>,
}

/// `aclrtExceptionInfoCallback`.
pub type ExceptionCallback = unsafe extern "C" fn(*mut c_void);

/// What `aclrtExceptionInfo *` points to (opaque to C; read by the
/// `aclrtGet*FromExceptionInfo` functions).
#[repr(C)]
pub struct ExceptionInfo {
    /// [`ExceptionInfo::MAGIC`], to reject pointers that are not ours.
    pub magic: u32,
    /// Number of the failed task on its stream (1-based, in enqueue order).
    pub task_id: u32,
    pub stream_id: u32,
    /// `gettid` of the stream's worker thread, which ran the task.
    pub thread_id: u32,
    /// Logical device id.
    pub device_id: u32,
    /// The task's ACL error code.
    pub retcode: u32,
}

impl ExceptionInfo {
    pub const MAGIC: u32 = 0x4558_4350; // "EXCP"
}

/// Why a stream, event or context handle made by this process is no longer live.
const STALE: &str = "it was destroyed, or belongs to a runtime that was finalized since";

/// What an `aclrtStream` is: a handle of [`Registry::streams`].
pub static STREAM: HandleKind =
    HandleKind::new(*b"ST", "stream", "aclrtCreateStream").stale_because(STALE);
/// What an `aclrtEvent` is: a handle of [`Registry::events`].
pub static EVENT: HandleKind =
    HandleKind::new(*b"EV", "event", "aclrtCreateEvent").stale_because(STALE);
/// What an `aclrtContext` is: a handle of [`Registry::contexts`].
pub static CONTEXT: HandleKind = HandleKind::new(
    *b"CX",
    "context",
    "aclrtCreateContext / aclrtGetCurrentContext",
)
.stale_because(STALE);
/// What an `aclmdlRI` is: a handle of [`Registry::models`].
pub static MODEL: HandleKind = HandleKind::new(
    *b"MD",
    "model (aclmdlRI)",
    "aclmdlRICaptureEnd / aclmdlRIBuildBegin",
)
.stale_because(STALE);
/// What an `aclrtTaskGrp` is: a handle of [`Registry::groups`].
pub static TASK_GROUP: HandleKind = HandleKind::new(
    *b"TG",
    "task group (aclrtTaskGrp)",
    "aclmdlRICaptureTaskGrpEnd",
)
.stale_because(STALE);
/// What an `aclrtNotify` is: a handle of [`Registry::notifies`].
pub static NOTIFY: HandleKind =
    HandleKind::new(*b"NT", "notify", "aclrtCreateNotify").stale_because(STALE);
/// What an `aclrtCntNotify` is: a handle of [`Registry::notifies`].
pub static CNT_NOTIFY: HandleKind =
    HandleKind::new(*b"CN", "count notify", "aclrtCntNotifyCreate").stale_because(STALE);
/// What an `aclrtLabel` is: a handle of [`Registry::labels`].
pub static LABEL: HandleKind =
    HandleKind::new(*b"LB", "label", "aclrtCreateLabel").stale_because(STALE);
/// What an `aclrtLabelList` is: a handle of [`Registry::label_lists`].
pub static LABEL_LIST: HandleKind =
    HandleKind::new(*b"LL", "label list", "aclrtCreateLabelList").stale_because(STALE);

/// The error for `h`, which is not a live handle of `kind` (argument `arg`).
pub fn bad_handle(kind: &'static HandleKind, arg: &str, h: u64) -> Error {
    handles::HandleError::new(kind, h, arg).into()
}

/// `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR` (abi.md §1.5 B).
pub const ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: i32 = 507007;

/// A fresh handle of `kind` and its small id (for labels and `aclrtStreamGetId`).
pub fn new_handle(kind: &'static HandleKind) -> (u64, u32) {
    let h = kind.new_id();
    (h, handles::serial(h) as u32)
}

/// A context: a device plus its default stream.
pub struct Context {
    pub handle: u64,
    pub logical: i32,
    pub physical: u32,
    /// Handle of the context's default stream.
    pub default_stream: u64,
    /// The device's default context (made by `aclrtSetDevice`, freed by `aclrtResetDevice`).
    pub is_default: bool,
    /// `aclrtCtxSetSysParamOpt` values of this context.
    pub params: Mutex<HashMap<i32, i64>>,
}

/// A live stream and what the API reports about it.
pub struct StreamEntry {
    pub handle: u64,
    pub id: i32,
    pub ctx: u64,
    pub logical: i32,
    pub physical: u32,
    pub priority: u32,
    pub flags: u32,
    pub is_default: bool,
    pub stream: Arc<Stream>,
    /// `ACL_STREAM_ATTR_USER_CUSTOM_TAG` (`aclrtSetStreamAttribute`).
    pub tag: std::sync::atomic::AtomicU32,
}

/// A live event.
pub struct EventEntry {
    pub handle: u64,
    pub id: u32,
    pub logical: i32,
    pub event: Arc<Event>,
    /// Made by `aclrtCreateEventExWithFlag` (CANN's "new mode" events, the ones a capture
    /// turns into its own events).
    pub ex: bool,
    /// An IPC event (`ACL_EVENT_IPC`, or opened from an IPC handle): its records and waits
    /// go through this slot of the node, which every process sees.
    pub ipc: Option<npu_emu::ipc::SlotRef>,
}

/// One host callback waiting for `aclrtProcessReport`.
pub struct Report {
    pub func: unsafe extern "C" fn(*mut c_void),
    pub user_data: usize,
    /// Set (and notified) once the callback ran, for `ACL_CALLBACK_BLOCK`.
    pub done: Option<Arc<(Mutex<bool>, Condvar)>>,
}

/// Reports for one subscribed thread.
#[derive(Default)]
pub struct ReportQueue {
    pub q: Mutex<VecDeque<Report>>,
    pub cv: Condvar,
}

/// Every object of the runtime, by handle (one lock over the tables: a context's streams
/// come and go with it).
pub struct Registry {
    pub contexts: HandleTable<Arc<Context>>,
    /// Logical device → (default context handle, `aclrtSetDevice` reference count).
    pub default_ctx: HashMap<i32, (u64, u32)>,
    pub streams: HandleTable<Arc<StreamEntry>>,
    pub events: HandleTable<Arc<EventEntry>>,
    /// Enabled peer access (current device, peer device), logical ids.
    pub peers: HashSet<(i32, i32)>,
    /// Stream handle → subscribed thread id (`aclrtSubscribeReport`).
    pub subs: HashMap<u64, u64>,
    /// Thread id → its report queue.
    pub reports: HashMap<u64, Arc<ReportQueue>>,
    /// Stream handle → thread running its host functions (`aclrtSubscribeHostFunc`).
    pub host_subs: HashMap<u64, u64>,
    /// Thread id → its host-function queue (`aclrtProcessHostFunc`).
    pub host_reports: HashMap<u64, Arc<ReportQueue>>,
    /// Live `aclrtStreamConfigHandle` pointers. Not a handle table: the header makes the
    /// struct public, so the handle must be a real pointer to it.
    pub cfg_handles: HashSet<usize>,
    /// Models (`aclmdlRI`) by handle.
    pub models: HashMap<u64, Arc<npu_emu::capture::Model>>,
    /// Task groups (`aclrtTaskGrp`) by handle.
    pub groups: HashMap<u64, Arc<npu_emu::capture::Group>>,
    /// Streams capturing into a model or bound to one: stream handle → membership.
    pub members: HashMap<u64, Member>,
    /// Streams in a task-group update: stream handle → the update.
    pub updates: HashMap<u64, Arc<npu_emu::capture::UpdateSink>>,
    /// Events recorded in a capture in progress: event handle → (model handle, the
    /// capture's own event).
    pub captured_events: HashMap<u64, (u64, usize)>,
    /// Captures in progress by capture mode (GLOBAL, THREAD_LOCAL, RELAXED).
    pub capture_modes: [u32; 3],
    /// Notifies and count notifies by handle: (logical device, slot, imported).
    pub notifies: HashMap<u64, NotifyEntry>,
    /// IPC memory keys this process exported: key → (address, size).
    pub mem_exports: HashMap<String, (u64, u64)>,
    /// IPC memory keys this process imported: key → address.
    pub mem_imports: HashMap<String, u64>,
    /// Access flags set by `aclrtMemSetAccess` on mapped VMM ranges: start → flags by
    /// (location type, id).
    pub vmm_access: HashMap<u64, Vec<AccessFlags>>,
    /// Labels (`aclrtCreateLabel`): handle → the model they were set in, if any.
    pub labels: HashMap<u64, Option<u64>>,
    /// Label lists: handle → label handles.
    pub label_lists: HashMap<u64, Vec<u64>>,
}

impl Registry {
    /// In a subscription table `subs` (stream handle → thread id: [`Registry::subs`] or
    /// [`Registry::host_subs`]), a stream that `thread` already serves on a device other than
    /// `logical`, as (device, stream label). CANN: a subscribed thread serves the streams of
    /// one device only.
    pub fn subscribed_on_other_device(
        &self,
        subs: &HashMap<u64, u64>,
        thread: u64,
        logical: i32,
    ) -> Option<(i32, String)> {
        subs.iter()
            .filter(|(_, &t)| t == thread)
            .filter_map(|(h, _)| self.streams.peek(*h))
            .find(|s| s.logical != logical)
            .map(|s| (s.logical, s.stream.label().to_string()))
    }
}

/// Access flags of one location (`aclrtMemLocation` type and id) on a mapped range.
pub type AccessFlags = ((i32, u32), u64);

/// A notify or count notify of this process.
#[derive(Clone, Debug)]
pub struct NotifyEntry {
    pub logical: i32,
    pub slot: npu_emu::ipc::SlotRef,
    /// Opened from another process's key (`aclrtNotifyImportByKey`).
    pub imported: bool,
    /// Keys this notify was exported under.
    pub keys: Vec<String>,
}

/// How a stream takes part in a model.
#[derive(Clone, Debug)]
pub struct Member {
    /// Model handle.
    pub model: u64,
    /// The stream's lane in the model.
    pub lane: usize,
    /// Captured model: the stream that began the capture.
    pub origin: bool,
    /// Bound to a built model (not a capture).
    pub bound: bool,
    /// Capture mode (origin stream of a capture).
    pub mode: i32,
    /// Thread that began the capture (`gettid`).
    pub tid: u64,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry {
            contexts: HandleTable::new(&CONTEXT),
            default_ctx: HashMap::new(),
            streams: HandleTable::new(&STREAM),
            events: HandleTable::new(&EVENT),
            peers: HashSet::new(),
            subs: HashMap::new(),
            reports: HashMap::new(),
            host_subs: HashMap::new(),
            host_reports: HashMap::new(),
            cfg_handles: HashSet::new(),
            models: HashMap::new(),
            groups: HashMap::new(),
            members: HashMap::new(),
            updates: HashMap::new(),
            captured_events: HashMap::new(),
            capture_modes: [0; 3],
            notifies: HashMap::new(),
            mem_exports: HashMap::new(),
            mem_imports: HashMap::new(),
            vmm_access: HashMap::new(),
            labels: HashMap::new(),
            label_lists: HashMap::new(),
        }
    }
}

/// Init bookkeeping (`aclInit` / `aclFinalize`).
pub struct Lifecycle {
    pub refcount: u64,
    /// Config content of the first successful `aclInit` ("" = no config).
    pub first_config: Option<String>,
}

/// Settings CANN keeps per process, outside any device or context, that work before
/// `aclInit` and survive `aclFinalize` (as CANN's op-compiler and runtime singletons do):
/// see `api/compile_opt.rs` and `api/sys_param.rs`. The instance is
/// [`crate::globals::SETTINGS`].
pub struct ProcessSettings {
    /// `aclSetCompileopt` values by `aclCompileOpt`.
    pub compile_opts: std::collections::BTreeMap<i32, String>,
    /// `aclrtSetSysParamOpt` values by `aclSysParamOpt` (unset = the documented default 0).
    pub sys_params: HashMap<i32, i64>,
    /// `aclrtSetOpExecuteTimeOut*`: operator execution timeout in µs (`None` = never).
    pub op_execute_timeout_us: Option<u64>,
    /// `aclrtSetOpWaitTimeout`: bound of `aclrtStreamWaitEvent` waits (`None` = never).
    /// torch_npu's `ProcessGroupHCCL` sets it before any device is touched.
    pub op_wait_timeout: Option<Duration>,
    /// `aclrtSetDeviceSatMode` (`aclrtFloatOverflowMode`), `None` until set.
    pub sat_mode: Option<i32>,
    /// `aclopSetCompileFlag` (`aclOpCompileFlag`), `ACL_OP_COMPILE_DEFAULT` until set.
    pub op_compile_flag: i32,
    /// `aclopSetMaxOpQueueNum`: the length of the single-operator model cache, `None` until
    /// set (CANN's default 20000).
    pub max_op_queue_num: Option<u64>,
}

/// Run `f` on the process's [`ProcessSettings`] (created empty on first use).
pub fn with_settings<R>(f: impl FnOnce(&mut ProcessSettings) -> R) -> R {
    let mut g = SETTINGS.lock();
    let s = g.get_or_insert_with(|| ProcessSettings {
        compile_opts: Default::default(),
        sys_params: HashMap::new(),
        op_execute_timeout_us: None,
        op_wait_timeout: None,
        sat_mode: None,
        op_compile_flag: 0,
        max_op_queue_num: None,
    });
    f(s)
}

extern "C" fn after_fork_in_child() {
    if PARENT_PID.load(Ordering::Relaxed) != 0 && try_get_unforked().is_some() {
        FORKED.store(true, Ordering::Relaxed);
    }
}

fn try_get_unforked() -> Option<()> {
    RUNTIME.try_read().and_then(|g| g.as_ref().map(|_| ()))
}

/// The calling thread's current context handle (0 = none), unchecked.
pub fn current_handle() -> u64 {
    CURRENT.with(|c| c.get())
}

/// Make `h` the calling thread's current context (0 = none).
pub fn set_current_handle(h: u64) {
    CURRENT.with(|c| c.set(h));
}

/// The initialised runtime, or `ACL_ERROR_UNINITIALIZE` (with a message) before `aclInit`
/// or after the last `aclFinalize`.
pub fn get() -> Result<Arc<Runtime>> {
    if FORKED.load(Ordering::Relaxed) {
        return Err(Error::new(
            ACL_ERROR_UNINITIALIZE,
            format!(
                "this process was forked (from pid {}) after aclInit: the ACL runtime's stream threads do not exist in a forked child, so it cannot be used here (as with CANN); initialise in the child only, or exec a new program",
                PARENT_PID.load(Ordering::Relaxed)
            ),
        ));
    }
    match RUNTIME.read().as_ref() {
        Some(rt) => Ok(rt.clone()),
        None => Err(Error::new(
            ACL_ERROR_UNINITIALIZE,
            "the ACL runtime is not initialized: call aclInit first (or it was finalized by aclFinalize)",
        )),
    }
}

/// The runtime for `aclrtSetDevice`: as CANN's runtime, which needs no `aclInit`, a
/// device may be set before `aclInit` (CANN's own samples do so). The first such call
/// starts the runtime with no config; a later `aclInit` adopts it ([`adopt_started`]).
/// Other calls still need the runtime started (by `aclInit` or this).
pub fn get_or_start() -> Result<Arc<Runtime>> {
    match get() {
        Err(e) if e.code == ACL_ERROR_UNINITIALIZE && !FORKED.load(Ordering::Relaxed) => {
            let _lc = LIFECYCLE.lock();
            if RUNTIME.read().is_none() {
                create(InitOptions::default())?;
            }
            get()
        }
        r => r,
    }
}

/// For `aclInit` (lifecycle lock held, count 0): if `aclrtSetDevice` started the runtime
/// before, keep it and apply the config's options; whether there was one.
pub fn adopt_started(opts: &InitOptions) -> Result<bool> {
    let Some(rt) = RUNTIME.read().clone() else {
        return Ok(false);
    };
    rt.apply_default_device(opts.default_device)?;
    Ok(true)
}

/// The runtime without blocking (for the fault handler): `None` if not initialised or
/// if the lock is held by a writer.
pub fn try_get() -> Option<Arc<Runtime>> {
    RUNTIME.try_read().and_then(|g| g.as_ref().cloned())
}

/// Create the runtime (called by `aclInit` with the lifecycle lock held).
pub fn create(opts: InitOptions) -> Result<()> {
    let mut cfg = Config::from_env()?;
    let logger = Logger::new(&cfg);
    let node = Node::open(&cfg)?;
    node.start_reaper(&cfg);
    adopt_node(&mut cfg, &node);
    let soc_name = CString::new(cfg.soc_name.replace('\0', " ")).unwrap_or_default();
    let rt = Arc::new(Runtime {
        cfg,
        logger,
        node,
        mem: crate::mem::MemState::new(),
        reg: Mutex::new(Registry::default()),
        soc_name,
        exception_cb: Arc::new(Mutex::new(None)),
        default_device: Mutex::new(None),
        ipc: std::sync::OnceLock::new(),
    });
    rt.apply_default_device(opts.default_device)?;
    let check = rt.cfg.host_access_check;
    *RUNTIME.write() = Some(rt);
    *RELEASED.lock() = None;
    PARENT_PID.store(std::process::id(), Ordering::Relaxed);
    // SAFETY: registers a child-side fork handler that only touches atomics and a try-lock.
    ATFORK.call_once(|| unsafe {
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
    });
    install_fault_handler(check);
    Ok(())
}

/// A node created earlier by another process keeps its own device count, HBM size and SoC
/// (`Node::open` warns about a mismatch): make the configuration say what the node has.
/// The visible-device list is renumbered over the node's devices with CANN's rule (an id
/// beyond the last device ends the list).
fn adopt_node(cfg: &mut Config, node: &Node) {
    let n = node.devices();
    if n != cfg.devices {
        let all_visible = cfg.visible_devices.len() as u32 == cfg.devices
            && cfg
                .visible_devices
                .iter()
                .enumerate()
                .all(|(i, &d)| d == i as u32);
        cfg.visible_devices = if all_visible {
            (0..n).collect()
        } else {
            cfg.visible_devices
                .iter()
                .copied()
                .take_while(|&d| d < n)
                .collect()
        };
        cfg.devices = n;
    }
    cfg.hbm_size = node.hbm_size();
    cfg.soc_name = node.soc_name().to_string();
}

/// Tear the runtime down (called by the finalizing `aclFinalize`, lifecycle lock held):
/// destroy every stream (pending tasks are discarded, a running task finishes), forget
/// every handle, and drop the instance (the node is closed once the last user lets go).
pub fn destroy() {
    let rt = RUNTIME.write().take();
    if let Some(rt) = rt {
        let streams: Vec<Arc<StreamEntry>> = {
            let mut reg = rt.reg.lock();
            *RELEASED.lock() = Some(Released {
                devices: reg.default_ctx.iter().map(|(&d, &(_, n))| (d, n)).collect(),
                handles: reg
                    .streams
                    .iter()
                    .map(|(h, _)| h)
                    .chain(reg.events.iter().map(|(h, _)| h))
                    .chain(reg.contexts.iter().map(|(h, _)| h))
                    .collect(),
            });
            let s = reg.streams.drain().into_iter().map(|(_, e)| e).collect();
            *reg = Registry::default();
            s
        };
        for s in streams {
            s.stream.destroy(true);
        }
    }
    set_current_handle(0);
}

/// What the last `aclFinalize` released while the program still held it: the devices set
/// (with their `aclrtSetDevice` counts) and the streams, events and contexts alive. In CANN
/// these outlive `aclFinalize` (it does not reset devices), so programs release them after
/// it; here `aclFinalize` released them already, and such a later release succeeds (once)
/// instead of failing with `ACL_ERROR_UNINITIALIZE`. Cleared by the next `aclInit`. Kept in
/// [`crate::globals::RELEASED`].
#[derive(Default)]
pub struct Released {
    pub devices: HashMap<i32, u32>,
    pub handles: HashSet<u64>,
}

/// For a release call made while the runtime is not initialised (`e` is that error):
/// `Ok` if `take` finds what it releases among what the last `aclFinalize` released (and
/// removes it), else `e`.
pub fn released_by_finalize(e: Error, take: impl FnOnce(&mut Released) -> bool) -> Result<()> {
    if e.code != ACL_ERROR_UNINITIALIZE {
        return Err(e);
    }
    let mut g = RELEASED.lock();
    if g.as_mut().is_some_and(take) {
        Ok(())
    } else {
        Err(e)
    }
}

/// `aclrtResetDevice(Force)` after `aclFinalize` of a device that was set then.
pub fn reset_after_finalize(e: Error, logical: i32, force: bool) -> Result<()> {
    released_by_finalize(e, |r| match r.devices.get_mut(&logical) {
        Some(n) if *n > 1 && !force => {
            *n -= 1;
            true
        }
        Some(_) => {
            r.devices.remove(&logical);
            true
        }
        None => false,
    })
}

/// A stream, event or context destroyed after the `aclFinalize` that released it.
pub fn handle_after_finalize(e: Error, h: u64) -> Result<()> {
    released_by_finalize(e, |r| h != 0 && r.handles.remove(&h))
}

/// Install the SIGSEGV handler that names host accesses to device memory (unless
/// `NPU_EMU_HOST_ACCESS_CHECK=0`).
fn install_fault_handler(enabled: bool) {
    if enabled {
        // SAFETY: installs process signal handlers once; `describe_fault` never blocks.
        unsafe { npu_emu::fault::install(describe_fault) };
    }
}

/// What a faulting host access at `addr` hit, for the fault handler: reaches the runtime
/// without blocking (`try_get`) and asks the node (which itself only try-locks).
fn describe_fault(addr: u64) -> Option<String> {
    let rt = try_get()?;
    npu_emu::fault::describe(&rt.node, addr)
}

impl Runtime {
    /// `defaultDevice` of the aclInit config: threads with no current context use this
    /// device's default context, which the runtime holds (one reference) until finalize.
    fn apply_default_device(&self, d: Option<i32>) -> Result<()> {
        let Some(d) = d else {
            return Ok(());
        };
        self.set_device_ref(d).map_err(|e| {
            Error::new(
                e.code,
                format!("config defaultDevice.default_device: {}", e.msg),
            )
        })?;
        *self.default_device.lock() = Some(d);
        Ok(())
    }

    /// The calling thread's current device: (logical id, physical id). An error
    /// (`ACL_ERROR_RT_CONTEXT_NULL`) if the thread has no current context/device.
    pub fn current_device(&self) -> Result<(i32, u32)> {
        let c = self.current_context()?;
        Ok((c.logical, c.physical))
    }

    /// Logical device id → physical id, or `ACL_ERROR_INVALID_DEVICE`-style error naming
    /// the id and the valid range.
    pub fn physical_device(&self, logical: i32) -> Result<u32> {
        // rtSetDevice reports a bad id as ACL_ERROR_RT_INVALID_DEVICEID (107001).
        self.cfg.physical(logical).ok_or_else(|| {
            let n = self.cfg.visible_count();
            let vis = if n < self.cfg.devices {
                format!(
                    " (ASCEND_RT_VISIBLE_DEVICES leaves {n} of the node's {} devices)",
                    self.cfg.devices
                )
            } else {
                String::new()
            };
            if n == 0 {
                Error::new(
                    ACL_ERROR_RT_INVALID_DEVICEID,
                    format!("deviceId {logical} is invalid: no device is visible{vis}"),
                )
            } else {
                Error::new(
                    ACL_ERROR_RT_INVALID_DEVICEID,
                    format!(
                        "deviceId {logical} is out of range: expected 0..={}{vis}",
                        n - 1
                    ),
                )
            }
        })
    }

    /// The stream behind an `aclrtStream` handle; NULL = the current context's default
    /// stream. Destroyed or foreign handles are an error naming the handle.
    pub fn stream(&self, handle: *mut c_void) -> Result<Arc<Stream>> {
        Ok(self.stream_entry(handle, "stream")?.stream.clone())
    }

    /// The registry entry behind an `aclrtStream` handle (NULL = current default stream);
    /// `arg` names the argument in the message.
    pub fn stream_entry(&self, handle: *mut c_void, arg: &str) -> Result<Arc<StreamEntry>> {
        let h = handle as u64;
        if h == 0 {
            let ctx = self.current_context()?;
            let reg = self.reg.lock();
            return reg
                .streams
                .peek(ctx.default_stream)
                .cloned()
                .ok_or_else(|| {
                    Error::new(
                        ACL_ERROR_RT_CONTEXT_NULL,
                        "the current context has no default stream",
                    )
                });
        }
        Ok(self.reg.lock().streams.get(h, arg)?.clone())
    }

    /// The registry entry behind an `aclrtEvent` handle (NULL is an error).
    pub fn event_entry(&self, handle: *mut c_void, arg: &str) -> Result<Arc<EventEntry>> {
        let h = handle as u64;
        if h == 0 {
            return Err(Error::invalid(format!("argument {arg} is NULL")));
        }
        Ok(self.reg.lock().events.get(h, arg)?.clone())
    }

    /// The calling thread's current context.
    pub fn current_context(&self) -> Result<Arc<Context>> {
        let h = current_handle();
        let reg = self.reg.lock();
        if h != 0 {
            if let Some(c) = reg.contexts.peek(h) {
                return Ok(c.clone());
            }
        }
        if let Some(d) = *self.default_device.lock() {
            if let Some((dh, _)) = reg.default_ctx.get(&d) {
                if let Some(c) = reg.contexts.peek(*dh) {
                    return Ok(c.clone());
                }
            }
        }
        if h == 0 {
            return Err(Error::new(
                ACL_ERROR_RT_CONTEXT_NULL,
                "this thread has no current device or context: call aclrtSetDevice (or aclrtSetCurrentContext) on this thread first",
            ));
        }
        Err(Error::new(
            ACL_ERROR_RT_CONTEXT_NULL,
            format!(
                "this thread's current context {h:#x} was destroyed (aclrtDestroyContext or aclrtResetDevice): set a device or context again"
            ),
        ))
    }

    /// The context behind an `aclrtContext` handle.
    pub fn context(&self, handle: *mut c_void, arg: &str) -> Result<Arc<Context>> {
        let h = handle as u64;
        if h == 0 {
            return Err(Error::invalid(format!("argument {arg} is NULL")));
        }
        Ok(self.reg.lock().contexts.get(h, arg)?.clone())
    }

    /// A new stream whose failed tasks are reported to the exception callback.
    fn new_stream(&self, label: String, id: u32, logical: i32) -> Result<Arc<Stream>> {
        let stream = Arc::new(Stream::new(&label)?);
        stream.set_overflow_hook(Some(crate::api::overflow::hook()));
        let cell = self.exception_cb.clone();
        stream.set_error_hook(Some(Arc::new(move |seq: u64, e: &Error| {
            state::note_task_error(logical, e);
            let cb = *cell.lock();
            if let Some(cb) = cb {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
                let mut info = ExceptionInfo {
                    magic: ExceptionInfo::MAGIC,
                    task_id: seq as u32,
                    stream_id: id,
                    thread_id: tid,
                    device_id: logical as u32,
                    retcode: e.code as u32,
                };
                // SAFETY: the user's callback with a pointer valid for the call.
                unsafe { cb(&mut info as *mut ExceptionInfo as *mut c_void) };
            }
        })));
        Ok(stream)
    }

    /// A new context on logical device `logical` with its default stream; registered.
    fn new_context(
        &self,
        reg: &mut Registry,
        logical: i32,
        physical: u32,
        is_default: bool,
    ) -> Result<Arc<Context>> {
        let (ch, _) = new_handle(&CONTEXT);
        let (sh, sid) = new_handle(&STREAM);
        let stream = self.new_stream(
            format!("default stream {sid} of device {logical}"),
            sid,
            logical,
        )?;
        let ctx = Arc::new(Context {
            handle: ch,
            logical,
            physical,
            default_stream: sh,
            is_default,
            params: Mutex::new(HashMap::new()),
        });
        reg.streams.insert_at(
            sh,
            Arc::new(StreamEntry {
                handle: sh,
                id: sid as i32,
                ctx: ch,
                logical,
                physical,
                priority: 0,
                flags: 0,
                is_default: true,
                stream,
                tag: Default::default(),
            }),
        );
        reg.contexts.insert_at(ch, ctx.clone());
        Ok(ctx)
    }

    /// `aclrtSetDevice`: take a reference on the device's default context (creating it) and
    /// make it the calling thread's current context.
    pub fn set_device(&self, logical: i32) -> Result<()> {
        let h = self.set_device_ref(logical)?;
        set_current_handle(h);
        Ok(())
    }

    /// Take a reference on logical device `logical`'s default context (creating it); its
    /// handle.
    fn set_device_ref(&self, logical: i32) -> Result<u64> {
        let physical = self.physical_device(logical)?;
        {
            let mut reg = self.reg.lock();
            if let Some((h, n)) = reg.default_ctx.get_mut(&logical) {
                *n += 1;
                return Ok(*h);
            }
        }
        // The device opens: its state callbacks run around it, outside our lock.
        state::device_state(logical, state::DEVICE_SET_PRE);
        let mut reg = self.reg.lock();
        if let Some((h, n)) = reg.default_ctx.get_mut(&logical) {
            // Another thread opened it meanwhile.
            *n += 1;
            return Ok(*h);
        }
        let c = self.new_context(&mut reg, logical, physical, true)?;
        reg.default_ctx.insert(logical, (c.handle, 1));
        drop(reg);
        state::stream_state(c.default_stream, state::STREAM_CREATE_POST);
        state::device_state(logical, state::DEVICE_SET_POST);
        Ok(c.handle)
    }

    /// `aclrtResetDevice(Force)`: drop one reference (all with `force`); the last one frees
    /// the default context, its streams (after their pending work) and the device's peer
    /// access settings.
    pub fn reset_device(&self, logical: i32, force: bool) -> Result<()> {
        self.physical_device(logical)?;
        let mut reg = self.reg.lock();
        let Some((h, n)) = reg.default_ctx.get_mut(&logical) else {
            // CANN: RT_ERROR_CONTEXT_DEL -> ACL_ERROR_RT_CONTEXT_RELEASE_ERROR (507007).
            return Err(Error::new(
                ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                format!(
                    "device {logical} is not set in this process (call aclrtSetDevice first; it was never set or already reset)"
                ),
            ));
        };
        let h = *h;
        if !force && *n > 1 {
            *n -= 1;
            return Ok(());
        }
        if state::has_callbacks() {
            // The device closes: its streams' and its own state callbacks run first,
            // outside our lock.
            let streams = Self::context_streams(&reg, h);
            drop(reg);
            for s in streams {
                state::stream_state(s, state::STREAM_DESTROY_PRE);
            }
            state::device_state(logical, state::DEVICE_RESET_PRE);
            reg = self.reg.lock();
            if reg.default_ctx.get(&logical).map(|e| e.0) != Some(h) {
                return Ok(());
            }
        }
        reg.default_ctx.remove(&logical);
        // The device's own access to its peers goes with it; other devices keep their access
        // to this one (it is theirs to disable).
        reg.peers.retain(|&(a, _)| a != logical);
        let victims = Self::remove_context_locked(&mut reg, h);
        drop(reg);
        for s in victims {
            s.stream.destroy(false);
        }
        if current_handle() == h {
            set_current_handle(0);
        }
        state::device_state(logical, state::DEVICE_RESET_POST);
        Ok(())
    }

    /// Handles of context `h`'s streams (its default stream first).
    fn context_streams(reg: &Registry, h: u64) -> Vec<u64> {
        let mut v: Vec<(bool, i32, u64)> = reg
            .streams
            .values()
            .filter(|s| s.ctx == h)
            .map(|s| (!s.is_default, s.id, s.handle))
            .collect();
        v.sort();
        v.into_iter().map(|x| x.2).collect()
    }

    /// Remove context `h` and its streams from the registry; returns the streams to destroy
    /// (outside the lock).
    fn remove_context_locked(reg: &mut Registry, h: u64) -> Vec<Arc<StreamEntry>> {
        let _ = reg.contexts.remove(h, "context");
        let mut out = Vec::new();
        reg.streams.retain(|_, s| {
            if s.ctx == h {
                out.push(s.clone());
            }
            s.ctx != h
        });
        for s in &out {
            reg.subs.remove(&s.handle);
        }
        out
    }

    /// `aclrtCreateContext`: a new context on `logical`, made current for the caller.
    pub fn create_context(&self, logical: i32) -> Result<u64> {
        let physical = self.physical_device(logical)?;
        let mut reg = self.reg.lock();
        let c = self.new_context(&mut reg, logical, physical, false)?;
        drop(reg);
        set_current_handle(c.handle);
        state::stream_state(c.default_stream, state::STREAM_CREATE_POST);
        Ok(c.handle)
    }

    /// `aclrtDestroyContext`. A default context, or a handle that is not a live context, is
    /// `ACL_ERROR_RT_CONTEXT_NULL` (CANN's `ApiImpl::ContextDestroy`).
    pub fn destroy_context(&self, handle: *mut c_void) -> Result<()> {
        if handle.is_null() {
            return Err(Error::invalid("argument context is NULL"));
        }
        let c = self
            .context(handle, "context")
            .map_err(|e| Error::new(ACL_ERROR_RT_CONTEXT_NULL, e.msg))?;
        if c.is_default {
            return Err(Error::new(ACL_ERROR_RT_CONTEXT_NULL, format!(
                "context = {:#x} is the default context of device {}, which aclrtResetDevice releases; aclrtDestroyContext only destroys contexts made by aclrtCreateContext",
                c.handle, c.logical
            )));
        }
        if state::has_callbacks() {
            let streams = Self::context_streams(&self.reg.lock(), c.handle);
            for s in streams {
                state::stream_state(s, state::STREAM_DESTROY_PRE);
            }
        }
        let victims = {
            let mut reg = self.reg.lock();
            Self::remove_context_locked(&mut reg, c.handle)
        };
        for s in victims {
            s.stream.destroy(false);
        }
        if current_handle() == c.handle {
            set_current_handle(0);
        }
        Ok(())
    }

    /// `aclrtCreateStream*`: a new stream in the current context.
    pub fn create_stream(&self, priority: u32, flags: u32) -> Result<u64> {
        let ctx = self.current_context()?;
        let (h, id) = new_handle(&STREAM);
        let stream = self.new_stream(
            format!("stream {id} of device {}", ctx.logical),
            id,
            ctx.logical,
        )?;
        let e = Arc::new(StreamEntry {
            handle: h,
            id: id as i32,
            ctx: ctx.handle,
            logical: ctx.logical,
            physical: ctx.physical,
            priority,
            flags,
            is_default: false,
            stream,
            tag: Default::default(),
        });
        self.reg.lock().streams.insert_at(h, e);
        state::stream_state(h, state::STREAM_CREATE_POST);
        Ok(h)
    }

    /// `aclrtDestroyStream(Force)`.
    pub fn destroy_stream(&self, handle: *mut c_void, force: bool) -> Result<()> {
        let h = handle as u64;
        if h == 0 {
            return Err(Error::invalid("argument stream is NULL"));
        }
        if state::has_callbacks()
            && self
                .reg
                .lock()
                .streams
                .peek(h)
                .is_some_and(|e| !e.is_default)
        {
            state::stream_state(h, state::STREAM_DESTROY_PRE);
        }
        let e = {
            let mut reg = self.reg.lock();
            match reg.streams.get(h, "stream")? {
                e if e.is_default => {
                    return Err(Error::invalid(format!(
                        "stream = {h:#x} is the default stream of a context; it is released with its context"
                    )))
                }
                _ => {}
            }
            reg.subs.remove(&h);
            reg.streams.remove(h, "stream")?
        };
        e.stream.destroy(force);
        Ok(())
    }

    /// Every live stream of logical device `logical`.
    pub fn device_streams(&self, logical: i32) -> Vec<Arc<StreamEntry>> {
        let reg = self.reg.lock();
        let mut v: Vec<_> = reg
            .streams
            .values()
            .filter(|s| s.logical == logical)
            .cloned()
            .collect();
        v.sort_by_key(|s| s.id);
        v
    }

    /// `aclrtSynchronizeDevice(WithTimeout)`: wait for every stream of the current device.
    pub fn synchronize_device(&self, timeout: Option<Duration>) -> Result<()> {
        let (logical, _) = self.current_device()?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut first: Option<Error> = None;
        for s in self.device_streams(logical) {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if let Err(e) = s.stream.synchronize(left) {
                if e.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                        format!(
                            "device {logical} did not finish within {} ms: {}",
                            timeout.map_or(0, |d| d.as_millis()),
                            e.msg
                        ),
                    ));
                }
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// `aclrtCreateEvent*`: a new event on the current device.
    pub fn create_event(&self, flags: u32) -> Result<u64> {
        self.create_event_ex(flags, false)
    }

    /// `aclrtCreateEvent*`; `ex` for `aclrtCreateEventExWithFlag`.
    pub fn create_event_ex(&self, flags: u32, ex: bool) -> Result<u64> {
        let (logical, physical) = self.current_device()?;
        // ACL_EVENT_IPC: the event lives in a slot of the node, so other processes can open it.
        let ipc = if flags & 0x40 != 0 {
            Some(self.ipc()?.claim(npu_emu::ipc::Kind::Event, physical)?)
        } else {
            None
        };
        self.insert_event(flags, ex, logical, ipc)
    }

    /// Register an event (made here, or opened from an IPC handle).
    pub fn insert_event(
        &self,
        flags: u32,
        ex: bool,
        logical: i32,
        ipc: Option<npu_emu::ipc::SlotRef>,
    ) -> Result<u64> {
        let (h, id) = new_handle(&EVENT);
        let e = Arc::new(EventEntry {
            handle: h,
            id,
            logical,
            event: Event::new(flags),
            ex,
            ipc,
        });
        self.reg.lock().events.insert_at(h, e);
        Ok(h)
    }

    /// `aclrtDestroyEvent`.
    pub fn destroy_event(&self, handle: *mut c_void) -> Result<()> {
        let h = handle as u64;
        if h == 0 {
            return Err(Error::invalid("argument event is NULL"));
        }
        let e = self.reg.lock().events.remove(h, "event")?;
        if let (Some(slot), Ok(ipc)) = (e.ipc, self.ipc()) {
            ipc.release(slot);
        }
        Ok(())
    }

    /// The node's IPC state (opened on first use).
    pub fn ipc(&self) -> Result<Arc<npu_emu::ipc::Ipc>> {
        if let Some(i) = self.ipc.get() {
            return Ok(i.clone());
        }
        let i = Arc::new(npu_emu::ipc::Ipc::open(self.node.dir())?);
        i.collect_dead();
        Ok(self.ipc.get_or_init(|| i).clone())
    }

    /// Log one line through this runtime's logger.
    pub fn log(&self, level: LogLevel, msg: &str) {
        self.logger.log(level, "ASCENDCL", msg);
    }
}

/// Log one line through the runtime's logger (works before `aclInit`: the environment is
/// read on first use).
pub fn log(level: LogLevel, msg: &str) {
    log_module(level, "ASCENDCL", msg);
}

/// Log one line under `module` (another library's CANN module, e.g. `HCCL`) through the
/// runtime's logger, filtered by that module's level.
pub fn log_module(level: LogLevel, module: &str, msg: &str) {
    if let Some(rt) = try_get() {
        rt.logger.log(level, module, msg);
        return;
    }
    let logger = match Config::from_env() {
        Ok(c) => Logger::new(&c),
        Err(_) => Logger::default(),
    };
    logger.log(level, module, msg);
}

/// A C timeout in milliseconds (-1 = forever, > 0 = that long) as a `Duration`. 0 and values
/// below -1 are `ACL_ERROR_RT_PARAM_INVALID`, as CANN's `ApiErrorDecorator::StreamSynchronize`
/// / `EventSynchronize` / `DeviceSynchronize` reject `timeout < -1 || timeout == 0`.
pub fn timeout_ms(timeout: i32) -> Result<Option<Duration>> {
    match timeout {
        -1 => Ok(None),
        t if t > 0 => Ok(Some(Duration::from_millis(t as u64))),
        t => Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("timeout = {t} is invalid: expected -1 (wait forever) or a number of milliseconds above 0"),
        )),
    }
}
