//! Every piece of process-global state of libascendcl, and why it must be global.
//!
//! A C caller holds plain handles and calls plain functions, with no context object to hang
//! state on, so what outlives one call lives here: the one runtime instance of the process
//! (DESIGN §1), the settings and switches CANN keeps per process outside it (profiling,
//! dump, overflow status, callbacks), the tables behind the handles a caller holds (every
//! one a [`HandleTable`] except the kernel tables, see [`KERNEL_TABLES`]), and per-thread
//! state that the ACL API defines per thread (the current context, the recent error
//! messages, the capture mode).
//!
//! Not state, so declared beside their types: the `HandleKind` descriptors (a handle tag and
//! the names used in messages) and constant tables such as the exported runtime table.
//!
//! `MBUFS` (the `aclrtMbuf`s) is still a map keyed by a tagged counter rather than a
//! [`HandleTable`].

use crate::api::allocator::Allocators;
use crate::api::devres::Limits;
use crate::api::dump::{DumpState, GraphDumpOption, GRAPH_DUMP_OPT};
use crate::api::helpers::{DataBuffer, BUFFER};
use crate::api::init_cb::Callbacks;
use crate::api::kernel_bin::{Func, Tables};
use crate::api::mdl::{
    Aipp, Dataset as ModelDataset, ExecConfig, LoadConfig, ModelDesc, MODEL_AIPP, MODEL_DATASET,
    MODEL_DESC, MODEL_EXEC_CONFIG, MODEL_LOAD_CONFIG,
};
use crate::api::op::{OpAttr, ATTR};
use crate::api::prof::Prof;
use crate::api::prof_tx::{Stamp, StepInfo, SubscribeConfig, STAMP, STEP_INFO, SUBSCRIBE_CONFIG};
use crate::api::state::{AbortCb, DeviceCb, Snap, SnapState, StreamCb};
use crate::api::tdt::{Channel, Dataset, Item, Queue, CHANNEL, DATASET, ITEM};
use crate::api::tdt_queue::{
    QueryInfo, QueueAttr, Queues, Route, RouteList, ATTR as QATTR, INFO, LIST, ROUTE,
};
use crate::api::tensor_desc::{TensorDesc, DESC};
use crate::runtime::{Lifecycle, ProcessSettings, Released, Runtime};
use npu_emu::aicore::AiCorePool;
use npu_emu_ffi::handles::HandleTable;
use parking_lot::{Condvar, Mutex, RwLock};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::OnceLock;
use std::sync::{Arc, Once};

/// The runtime instance (DESIGN §1: one per process): created by the first `aclInit`,
/// dropped by the last `aclFinalize`. Every ACL call of every thread reaches it, and
/// libhccl and libnnopbase reach it through the exported runtime table.
pub static RUNTIME: RwLock<Option<Arc<Runtime>>> = RwLock::new(None);

/// The `aclInit` lock and reference count: `aclInit`/`aclFinalize` pair per process, from
/// any thread.
pub static LIFECYCLE: Mutex<Lifecycle> = Mutex::new(Lifecycle {
    refcount: 0,
    first_config: None,
});

/// Settings CANN keeps per process outside any device or context (`aclSetCompileopt`,
/// `aclrtSetSysParamOpt` …): they work before `aclInit` and survive `aclFinalize`, so they
/// cannot live in the runtime instance. See [`crate::runtime::with_settings`].
pub static SETTINGS: Mutex<Option<ProcessSettings>> = Mutex::new(None);

/// Set in a child forked after `aclInit` (by the `pthread_atfork` handler, which has no
/// other way to say so): the child's runtime has no worker threads.
pub static FORKED: AtomicBool = AtomicBool::new(false);

/// What the last `aclFinalize` released while the program still held it ([`Released`]):
/// it must outlive the runtime instance that `aclFinalize` dropped, so it cannot live in it.
pub static RELEASED: Mutex<Option<Released>> = Mutex::new(None);

/// Pid of the process that initialised the runtime (for the forked child's message).
pub static PARENT_PID: AtomicU32 = AtomicU32::new(0);

/// The `pthread_atfork` registration, done once per process (handlers cannot be removed).
pub static ATFORK: Once = Once::new();

thread_local! {
    /// Handle of the calling thread's current context (0 = none): ACL defines the current
    /// context per thread (`aclrtSetCurrentContext`).
    pub static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// Live `aclDataBuffer`s. A data buffer exists without `aclInit` and outlives
/// `aclFinalize` (CANN's is a plain heap object), so it cannot belong to the runtime.
pub static BUFFERS: Mutex<HandleTable<DataBuffer>> = Mutex::new(HandleTable::new(&BUFFER));

/// Live `aclTensorDesc`s; like data buffers, independent of `aclInit`.
pub static DESCS: Mutex<HandleTable<TensorDesc>> = Mutex::new(HandleTable::new(&DESC));

/// Live `aclopAttr`s; like data buffers, independent of `aclInit`.
pub static ATTRS: Mutex<HandleTable<OpAttr>> = Mutex::new(HandleTable::new(&ATTR));

/// The profiler (`aclprofInit` … `aclprofFinalize`): CANN's profiling is per process and
/// independent of `aclInit`, and it counts the calls of every export (see `COUNTING`).
pub static PROF: Mutex<Option<Prof>> = Mutex::new(None);

/// Whether a profiling session runs: read by every export ([`crate::api::prof::count`]),
/// so it is a lone atomic beside [`PROF`] that costs one load when nothing is profiled.
pub static COUNTING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The calling thread's error messages since its last `aclGetRecentErrMsg`, oldest
    /// first ([`crate::ffi`]): CANN keeps them per thread.
    pub static RECENT: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };

    /// The text `aclGetRecentErrMsg` last returned on this thread: the pointer it gave must
    /// stay valid until the thread's next call.
    pub static RECENT_SHOWN: RefCell<Option<CString>> = const { RefCell::new(None) };

    /// The calling thread's last error code (`aclrtGetLastError`, `aclrtPeekAtLastError`),
    /// per thread as in CANN.
    pub static LAST_ERROR_CODE: Cell<i32> = const { Cell::new(0) };

    /// The message of this thread's last failed `npuemu_kernel_launch`, for
    /// `npuemu_kernel_launch_async_error` (the launch's C caller asks on the same thread).
    pub static LAST_LAUNCH_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// `err_msg_mode` "1" of the `aclInit` config: the recent messages are the process's, not
/// the thread's ("获取进程级别、还是线程级别的错误描述信息由aclInit接口中的err_msg_mode配置控制").
pub static PROCESS_MODE: AtomicBool = AtomicBool::new(false);

/// The process's recent error messages in `err_msg_mode` 1.
pub static PROCESS_RECENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The emulated AI cores by physical device: their threads are made on the first kernel
/// launch and kept for later launches on the device (by any thread, across
/// `aclFinalize`/`aclInit`, as the device itself persists).
pub static AICORE_POOLS: Mutex<BTreeMap<u32, Arc<AiCorePool>>> = Mutex::new(BTreeMap::new());

/// `aclrtGetSocName`'s string: the pointer it returns must stay valid for the life of the
/// process, without `aclInit`.
pub static SOC_NAME: OnceLock<CString> = OnceLock::new();

/// Live `acltdtDataItem` handles (`api/tdt.rs`): made and destroyed by free functions.
pub static TDT_ITEMS: Mutex<HandleTable<Item>> = Mutex::new(HandleTable::new(&ITEM));

/// Live `acltdtDataset` handles (`api/tdt.rs`).
pub static TDT_DATASETS: Mutex<HandleTable<Dataset>> = Mutex::new(HandleTable::new(&DATASET));

/// Live `acltdtChannelHandle` handles (`api/tdt.rs`).
pub static TDT_CHANNELS: Mutex<HandleTable<Channel>> = Mutex::new(HandleTable::new(&CHANNEL));

/// The channel queues of the process by (device, name): every handle naming one is the same
/// queue, whichever thread made it.
pub static TDT_QUEUES: Mutex<BTreeMap<(u32, String), Arc<Queue>>> = Mutex::new(BTreeMap::new());

/// The shared queues and bound routes of the process (`api/tdt_queue.rs`): queue ids are
/// plain numbers any thread may use, so the queues cannot belong to a handle.
pub static TDTQ: Mutex<Queues> = Mutex::new(Queues::new());

/// Wakes the enqueue/dequeue calls waiting on [`TDTQ`] when a queue changes.
pub static TDTQ_WAKE: Condvar = Condvar::new();

/// Live `acltdtQueueAttr` handles (`api/tdt_queue.rs`).
pub static TDTQ_ATTRS: Mutex<HandleTable<QueueAttr>> = Mutex::new(HandleTable::new(&QATTR));

/// Live `acltdtQueueRoute` handles.
pub static TDTQ_ROUTES: Mutex<HandleTable<Route>> = Mutex::new(HandleTable::new(&ROUTE));

/// Live `acltdtQueueRouteList` handles.
pub static TDTQ_LISTS: Mutex<HandleTable<RouteList>> = Mutex::new(HandleTable::new(&LIST));

/// Live `acltdtQueueRouteQueryInfo` handles.
pub static TDTQ_INFOS: Mutex<HandleTable<QueryInfo>> = Mutex::new(HandleTable::new(&INFO));

/// External allocators (`api/allocator.rs`): the live `aclrtAllocatorDesc`s and the
/// registration of each stream. Descriptions are made by free functions, exist without
/// `aclInit` and are handed to other libraries (`aclrtAllocatorGetByStream`), so they
/// cannot belong to the runtime instance.
pub(crate) static ALLOCATORS: Mutex<Allocators> = Mutex::new(Allocators::new());

/// The dump configuration (`api/dump.rs`): set by `aclInit`'s config file or
/// `aclmdlInitDump`/`aclmdlSetDump`, per process in CANN, and it survives `aclFinalize`;
/// the paths `acldumpGetPath` returned must stay valid for the life of the process.
pub(crate) static DUMP: Mutex<DumpState> = Mutex::new(DumpState::new());

/// Whether the "nothing is dumped" warning was given: once per process.
pub static DUMP_WARNED: AtomicBool = AtomicBool::new(false);

/// `aclopStartDumpArgs`'s directory while the operator-argument dump runs: a process-wide
/// switch in CANN's `DumpManager`, independent of `aclInit`.
pub static DUMP_ARGS_PATH: Mutex<Option<String>> = Mutex::new(None);

/// Live `aclGraphDumpOption` handles (`api/dump.rs`): made and destroyed by free
/// functions, without `aclInit`.
pub(crate) static GRAPH_DUMP_OPTS: Mutex<HandleTable<GraphDumpOption>> =
    Mutex::new(HandleTable::new(&GRAPH_DUMP_OPT));

/// Live msproftx stamps (`aclprofCreateStamp`, `api/prof_tx.rs`): made and destroyed by
/// free functions, independent of `aclInit` and of a profiling session.
pub(crate) static PROF_TX_STAMPS: Mutex<HandleTable<Stamp>> = Mutex::new(HandleTable::new(&STAMP));

/// Open msproftx ranges by id (`aclprofRangeStart` … `aclprofRangeStop`): a range may be
/// stopped by another thread than the one that started it.
pub static PROF_TX_RANGES: Mutex<BTreeMap<u32, (String, u64)>> = Mutex::new(BTreeMap::new());

/// The next `aclprofRangeStart` id: ids are unique in the process.
pub static PROF_TX_NEXT_RANGE: AtomicU32 = AtomicU32::new(1);

/// `aclprofStr2Id`'s ids by string: the same string gives the same id in every thread.
pub static PROF_TX_IDS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// The next `aclprofStr2Id` id.
pub static PROF_TX_NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The calling thread's `aclprofPush` stamps, (message, start time): push and pop pair
    /// per thread in msproftx.
    pub static PROF_TX_PUSHED: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Live `aclprofStepInfo`s (`aclprofCreateStepInfo`): made and destroyed by free functions.
pub(crate) static PROF_TX_STEPS: Mutex<HandleTable<StepInfo>> =
    Mutex::new(HandleTable::new(&STEP_INFO));

/// Live `aclprofSubscribeConfig`s (`aclprofCreateSubscribeConfig`): made and destroyed by
/// free functions.
pub(crate) static PROF_TX_SUB_CONFIGS: Mutex<HandleTable<SubscribeConfig>> =
    Mutex::new(HandleTable::new(&SUBSCRIBE_CONFIG));

/// Device state callbacks by registration name (`aclrtRegDeviceStateCallback`,
/// `api/state.rs`), with their args: registered without `aclInit` and called by any
/// thread that sets or resets a device.
pub(crate) static DEVICE_CBS: Mutex<BTreeMap<String, (DeviceCb, usize)>> =
    Mutex::new(BTreeMap::new());

/// Stream state callbacks by registration name (`aclrtRegStreamStateCallback`).
pub(crate) static STREAM_CBS: Mutex<BTreeMap<String, (StreamCb, usize)>> =
    Mutex::new(BTreeMap::new());

/// Task-abort callbacks by registration name (`aclrtSetDeviceTaskAbortCallback`).
pub(crate) static ABORT_CBS: Mutex<BTreeMap<String, (AbortCb, usize)>> =
    Mutex::new(BTreeMap::new());

/// Whether any device or stream state callback is registered: a lone atomic beside
/// [`DEVICE_CBS`] and [`STREAM_CBS`] so the hooks of every stream create and destroy cost
/// one load when none is.
pub static STATE_CBS_ANY: AtomicBool = AtomicBool::new(false);

/// The first failed task's code per logical device since the last repair or abort
/// (`aclrtGetErrorVerbose`): set by the stream worker threads' error hook, read by any
/// caller; an error of the device, not of one stream or thread.
pub static DEVICE_ERRORS: Mutex<BTreeMap<i32, i32>> = Mutex::new(BTreeMap::new());

/// The snapshot state machine (`aclrtSnapShotProcessLock` … `Restore`): CANN's is per
/// process (`aclrtProcessState`), and it holds the backed-up device memory.
pub(crate) static SNAPSHOT: Mutex<SnapState> = Mutex::new(SnapState {
    state: Snap::Running,
    saved: BTreeMap::new(),
});

/// The floating-point overflow status (0 or 1, `api/overflow.rs`): process-level on Atlas
/// A2/A3, set by the overflow hook of every stream worker thread.
pub static OVERFLOW_STATUS: AtomicU32 = AtomicU32::new(0);

/// Context handle → its overflow area's device address (`aclrtCtxGetFloatOverflowAddr`).
/// Handles are never reused, so the entry of a destroyed context is never found again.
pub static OVERFLOW_AREAS: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// Stream handle → the overflow switch set on it (`aclrtSetStreamOverflowSwitch`), read
/// from whichever thread queries the stream.
pub static OVERFLOW_SWITCH: Mutex<BTreeMap<u64, u32>> = Mutex::new(BTreeMap::new());

/// The latest aclop fallbacks torch_npu's op-plugin announced through `aclAppLog`
/// (`api/fallback.rs`): (aclnn function, the call made instead), newest last. Logged by
/// any thread, read when a later operator call of any thread fails.
pub static FALLBACKS_SEEN: Mutex<VecDeque<(String, String)>> = Mutex::new(VecDeque::new());

/// The msprof entry points (`api/rt_compat.rs`) already warned about: each is logged once
/// per process.
pub static MSPROF_LOGGED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// Loaded kernel binaries, their function handles and argument lists
/// (`api/kernel_bin.rs`, `aclrtBinaryLoad*` …): not tied to the runtime instance (nothing
/// unloads them at `aclFinalize`), and any thread may launch a function. Keyed by
/// the handle value, not a [`HandleTable`]: an argument list's handle may be the caller's
/// own memory (`aclrtKernelArgsInitByUserMem`).
pub(crate) static KERNEL_TABLES: Mutex<Option<Tables>> = Mutex::new(None);

/// Kernels registered with `rtFunctionRegister`, by the host stub address the program
/// launches them with (`rtKernelLaunch`): process-wide, as the registration a `<<<>>>`
/// launch's generated code makes once at load time.
pub(crate) static KERNEL_STUBS: Mutex<Option<HashMap<usize, Arc<Func>>>> = Mutex::new(None);

/// Device default context handle → its resource limits (`aclrtSetDeviceResLimit`,
/// `api/devres.rs`; a reset makes a new context: no limits). Handles are never reused.
pub(crate) static DEVICE_LIMITS: Mutex<BTreeMap<u64, Limits>> = Mutex::new(BTreeMap::new());

/// Stream handle → its resource limits (`aclrtSetStreamResLimit`), read by any thread that
/// adopts the stream's limits.
pub(crate) static STREAM_LIMITS: Mutex<BTreeMap<u64, Limits>> = Mutex::new(BTreeMap::new());

thread_local! {
    /// The stream whose limits the calling thread uses (`aclrtUseStreamResInCurrentThread`,
    /// per thread in ACL; 0 = none).
    pub static THREAD_STREAM: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    /// Captures begun on the calling thread and not ended, by `aclmdlRICaptureMode`
    /// (`api/mdlri.rs`): the modes' rules about unsafe calls are per thread.
    pub static CAPTURE_THREAD_MODES: RefCell<[u32; 3]> = const { RefCell::new([0; 3]) };

    /// The calling thread's mode for unsafe calls (`aclmdlRICaptureThreadExchangeMode`,
    /// per thread in ACL).
    pub static CAPTURE_EXCHANGE: Cell<i32> =
        const { Cell::new(crate::api::mdlri::MODE_GLOBAL) };
}

/// The callbacks registered with `aclInitCallbackRegister`/`aclFinalizeCallbackRegister`
/// (`api/init_cb.rs`): registered before `aclInit` and kept across it, so they cannot live
/// in the runtime instance.
pub(crate) static INIT_CALLBACKS: Mutex<Callbacks> = Mutex::new(Callbacks {
    init: Vec::new(),
    fini: Vec::new(),
});

/// The content of the config given to the `aclInit` in force ("" for none), for init
/// callbacks registered after it; `None` while not initialised.
pub static INIT_CONFIG: Mutex<Option<String>> = Mutex::new(None);

/// Whether an `aclInit` is in force, for init callbacks registered after it (they run at
/// once).
pub static INIT_INITIALIZED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set while the calling thread runs init or finalize callbacks, so an `aclInit` or
    /// `aclFinalize` called from one of them is refused (the lifecycle lock is held).
    pub static INIT_IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Stream handle → its `ACL_STREAM_ATTR_CACHE_OP_INFO` setting (`api/task_info.rs`),
/// read by whichever thread captures on the stream. Handles are never reused.
pub static OP_INFO_CACHE_SWITCH: Mutex<BTreeMap<u64, u32>> = Mutex::new(BTreeMap::new());

/// Model (`aclmdlRI`) handle → the op information cached on its tasks
/// (`aclrtCacheLastTaskOpInfo` during a capture), read by any thread.
pub static OP_INFOS: Mutex<BTreeMap<u64, Vec<Vec<u8>>>> = Mutex::new(BTreeMap::new());

/// Default context handle → its hardware sync address (`aclrtGetHardwareSyncAddr`): the
/// same address for every caller of the device.
pub static SYNC_ADDRS: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// The serial of the next shareable VMM handle this process exports
/// (`aclrtMemExportToShareableHandle`, `api/ipc.rs`): the handle is this pid and the
/// serial, so it must be unique within the process to be unique on the node.
pub static SHAREABLE_SERIAL: AtomicU32 = AtomicU32::new(1);

/// Live `aclmdlDesc`s (`api/mdl.rs`): made and destroyed by free functions, independent of
/// `aclInit`, like the other object handles of the offline-model API below.
pub static MDL_DESCS: Mutex<HandleTable<ModelDesc>> = Mutex::new(HandleTable::new(&MODEL_DESC));

/// Live `aclmdlDataset`s.
pub static MDL_DATASETS: Mutex<HandleTable<ModelDataset>> =
    Mutex::new(HandleTable::new(&MODEL_DATASET));

/// Live `aclmdlAIPP` parameter sets.
pub static MDL_AIPPS: Mutex<HandleTable<Aipp>> = Mutex::new(HandleTable::new(&MODEL_AIPP));

/// Live `aclmdlConfigHandle`s (load configurations).
pub static MDL_LOAD_CONFIGS: Mutex<HandleTable<LoadConfig>> =
    Mutex::new(HandleTable::new(&MODEL_LOAD_CONFIG));

/// Live `aclmdlExecConfigHandle`s (execute configurations).
pub static MDL_EXEC_CONFIGS: Mutex<HandleTable<ExecConfig>> =
    Mutex::new(HandleTable::new(&MODEL_EXEC_CONFIG));

/// Live `aclrtMbuf`/`acltdtBuf` buffers (`api/mbuf.rs`) by handle: buffers pass between
/// threads and through TDT queues, and exist apart from any stream or context.
pub(crate) static MBUFS: Mutex<BTreeMap<u64, crate::api::mbuf::Mbuf>> = Mutex::new(BTreeMap::new());

/// The next `aclrtMbuf` handle number (tagged "MB" in `api/mbuf.rs`).
pub(crate) static MBUF_NEXT: AtomicU64 = AtomicU64::new(1);
