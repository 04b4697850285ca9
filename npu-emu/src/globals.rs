//! Every piece of process-global state of the machine crate, and why it must be global.
//!
//! The machine holds types and logic; the one runtime instance of a process lives in
//! `libascendcl` (DESIGN §1). What is global here is what the operating system makes
//! per-process (address-space reservations, signal handlers), what a signal handler must
//! reach without a reference, facts of the machine worth computing once, and the counters
//! that make ids unique within the process (task groups, IPC keys).
//!
//! Not yet here: the stream workers' three thread-locals (`LAST_SUBMIT`, `WORKER_OF`,
//! `TASK_GEN`), still declared in [`crate::stream`].

use crate::fault::{KernelCtx, KERNEL_NAME_MAX};
use crate::memory::MAX_DEVICES;
use parking_lot::Mutex;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::OnceLock;

/// Canonical reservations of this process ([`crate::node`]): bytes reserved from
/// `device_addr(d, 0)` per device. Process-wide because an address range can be reserved
/// only once per process, and several `Node`s (tests, re-init after `aclFinalize`) reuse
/// it. Never shrinks.
pub(crate) static CANONICAL: Mutex<[u64; MAX_DEVICES as usize]> =
    parking_lot::const_mutex([0; MAX_DEVICES as usize]);

/// The SIGSEGV and SIGBUS dispositions found when [`crate::fault::install`] ran, chained to
/// for faults that are not ours. Global because signal dispositions are per process and
/// the handler gets no context pointer.
pub(crate) struct Prev(pub(crate) UnsafeCell<[MaybeUninit<libc::sigaction>; 2]>);
// SAFETY: written once by `install` (guarded by INSTALLED) before the handler can run,
// read-only afterwards.
unsafe impl Sync for Prev {}

/// See [`Prev`].
pub(crate) static PREV: Prev = Prev(UnsafeCell::new([
    MaybeUninit::uninit(),
    MaybeUninit::uninit(),
]));

/// Whether the fault handler is installed (once per process: signal dispositions are
/// per process).
pub(crate) static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The fault handler's `describe` callback as a `fn(u64) -> Option<String>` pointer
/// (0 = none): the signal handler has no other way to reach the runtime.
pub(crate) static DESCRIBE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The kernel block the calling (AI-core) thread runs, for the fault message: per
    /// thread because each core thread runs its own block, and a const-initialised `Copy`
    /// cell so the signal handler reads it without allocating or locking.
    pub(crate) static KERNEL_CTX: Cell<KernelCtx> = const {
        Cell::new(KernelCtx {
            active: false,
            name: [0; KERNEL_NAME_MAX],
            len: 0,
            block_idx: 0,
            block_num: 0,
        })
    };
}

/// Threads one format conversion may use ([`crate::formats`]): a fact of the machine,
/// read once.
pub(crate) static CONVERSION_THREADS: OnceLock<usize> = OnceLock::new();

/// The id of the next captured task group ([`crate::capture`], `aclrtTaskGrp`): ids are
/// unique in the process, across models and runtime instances.
pub(crate) static NEXT_TASK_GROUP: AtomicU64 = AtomicU64::new(1);

/// Where the next search for a free IPC slot starts ([`crate::ipc`]): spreads the claims of
/// this process's threads over the node's slot table (a hint only; any start is correct).
pub(crate) static IPC_SLOT_HINT: AtomicU32 = AtomicU32::new(0);

/// The serial of the next exported IPC key of this process ([`crate::ipc`]): a key is this
/// pid and the serial, so it must be unique within the process to be unique on the node,
/// whichever `Ipc` instance (runtime re-initialised) makes it.
pub(crate) static IPC_KEY_SERIAL: AtomicU64 = AtomicU64::new(1);
