//! Every piece of process-global state of libhccl, and why it must be global.
//!
//! A C caller holds plain handles and calls plain functions, with no context object to hang
//! state on, so what outlives one call lives here: the way to the ACL runtime, the
//! process's HCCL settings, the tables behind the handles a caller holds (communicators,
//! memory registrations, symmetric windows), and per-thread state HCCL defines per thread
//! (the open group).
//!
//! Not state, so declared beside their types: the `HandleKind` descriptors (a handle tag and
//! the names used in messages).

use crate::api::group::Group;
use crate::api::mem::{Registration, REGISTRATION};
use crate::api::sym_win::{Window, SYM_WINDOW};
use crate::api::zero_copy::Ranges;
use crate::comm::{CommInner, COMM};
use crate::errors::HcclError;
use crate::reduce::Scratch;
use npu_emu::config::Config;
use npu_emu_ffi::handles::HandleTable;
use npu_emu_ffi::rt::Cached;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, OnceLock};

/// The ACL runtime of this process, reached through libascendcl's table ([`crate::rt`]):
/// loaded once and kept while the process lives (the one runtime instance is
/// libascendcl's; this is only our way to it).
pub static RT: Cached<HcclError> = Cached::new("libhccl.so", crate::rt::MODULE);

/// The process configuration (environment), read once: HCCL's variables are per process.
pub static CONFIG: OnceLock<Result<Config, npu_emu::Error>> = OnceLock::new();

/// `HcclSetConfig(HCCL_DETERMINISTIC)`: a process-wide setting in CANN (-1: not set, then
/// the `HCCL_DETERMINISTIC` variable decides).
pub static DETERMINISTIC: AtomicI32 = AtomicI32::new(-1);

/// Live communicators by `HcclComm` handle: made and destroyed by free functions from any
/// thread; stream tasks keep their own `Arc` so a destroyed handle's queued work still runs.
pub static COMMS: Mutex<HandleTable<Arc<CommInner>>> = Mutex::new(HandleTable::new(&COMM));

/// How many times this process made a communicator with a given derived id and rank
/// ([`crate::comm::incarnation`]): re-creating the same communicator from the same rank
/// table must give a new id that every rank derives identically, so the count must outlive
/// every communicator.
pub static INCARNATIONS: Mutex<BTreeMap<([u8; 16], u32), u64>> = Mutex::new(BTreeMap::new());

/// Whether the CPU has AVX2 ([`crate::reduce`]): a fact of the machine, detected once.
#[cfg(target_arch = "x86_64")]
pub static HAS_AVX2: OnceLock<bool> = OnceLock::new();

/// Whether the CPU has AVX-512 F and BW ([`crate::reduce`]'s streaming kernels), detected once.
#[cfg(target_arch = "x86_64")]
pub static HAS_AVX512: OnceLock<bool> = OnceLock::new();

thread_local! {
    /// Reduction scratch buffers of the calling (stream worker) thread, kept between
    /// operations so a collective allocates nothing.
    pub static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

thread_local! {
    /// The calling thread's `HcclGroupStart` … `HcclGroupEnd` group and the calls held in
    /// it: a group holds the calls its own thread makes between start and end (as NCCL's
    /// groups do), so another thread's calls are not caught in it.
    pub(crate) static GROUP: RefCell<Group> = RefCell::new(Group::default());
}

/// Live `HcclCommRegister` handles (`api/mem.rs`): made and destroyed by free functions from
/// any thread, like communicators; the entries of a destroyed communicator are dropped at
/// the next registration.
pub(crate) static MEM_REGS: Mutex<HandleTable<Registration>> =
    Mutex::new(HandleTable::new(&REGISTRATION));

/// Live symmetric windows (`HcclCommSymWinRegister`, `api/sym_win.rs`); the windows of a
/// destroyed communicator are dropped at the next register or deregister.
pub(crate) static SYM_WINDOWS: Mutex<HandleTable<Window>> =
    Mutex::new(HandleTable::new(&SYM_WINDOW));

/// The zero-copy ranges set and activated (`HcclCommSetMemoryRange`,
/// `HcclCommActivateCommMemory`, `api/zero_copy.rs`): address ranges of the process's
/// virtual memory, shared by every communicator of the process.
pub(crate) static ZERO_COPY: Mutex<Ranges> = Mutex::new(Ranges {
    ranges: BTreeMap::new(),
    active: BTreeMap::new(),
});

/// Handles of suspended communicators (`HcclCommSuspend`, `api/resilience.rs`): checked by
/// every operation of any thread. Communicator handles are never reused.
pub static SUSPENDED: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());
