//! Every piece of process-global state of libascendcl, and why it must be global.
//!
//! A C caller holds plain handles and calls plain functions, with no context object to hang
//! state on, so what outlives one call lives here: the one runtime instance of the process
//! (DESIGN §1), the registries behind the handles a caller holds, and per-thread state that
//! the ACL API defines per thread (the current context, the recent error messages).
//!
//! Not state, so declared beside their types: the `HandleKind` descriptors (a handle tag and
//! the names used in messages) and constant tables such as the exported runtime table.

use crate::api::helpers::{DataBuffer, BUFFER};
use crate::api::op::{OpAttr, ATTR};
use crate::api::prof::Prof;
use crate::api::tdt::{Channel, Dataset, Item, Queue, CHANNEL, DATASET, ITEM};
use crate::api::tdt_queue::{
    QueryInfo, QueueAttr, Queues, Route, RouteList, ATTR as QATTR, INFO, LIST, ROUTE,
};
use crate::api::tensor_desc::{TensorDesc, DESC};
use crate::runtime::{Lifecycle, ProcessSettings, Runtime};
use npu_emu::aicore::AiCorePool;
use npu_emu_ffi::handles::HandleTable;
use parking_lot::{Condvar, Mutex, RwLock};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32};
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
