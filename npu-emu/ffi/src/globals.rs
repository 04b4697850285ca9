//! Every piece of process-global state of this crate, and why it is global. The crate is
//! linked into each library (`libascendcl.so`, `libhccl.so`, `libnnopbase.so`) on its own,
//! so each library has its own copy of these.

use crate::handles::HandleKind;
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;

/// The serial number of the next handle ([`crate::handles`]). Global so that no handle
/// value is ever made twice in a process: a stale handle must never name a new object,
/// even after a table was emptied or the runtime re-initialised.
pub(crate) static HANDLE_SERIAL: AtomicU64 = AtomicU64::new(1);

/// The kinds of handle this library has made, so a handle passed where another kind is
/// expected is named in the message. Global because handles of every table may meet.
pub(crate) static HANDLE_KINDS: Mutex<Vec<&'static HandleKind>> = Mutex::new(Vec::new());

/// The unimplemented functions called so far ([`crate::stub`]): each is logged once per
/// process, as CANN's own "not supported" warnings are.
pub(crate) static STUBS_SEEN: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// Online CPU count ([`crate::os::online_cpus`]), a fact of the machine read once: the wait
/// policy asks for it on every wait.
pub(crate) static ONLINE_CPUS: OnceLock<u32> = OnceLock::new();

/// This process's pid namespace ([`crate::os::pid_namespace`]), read once: liveness checks
/// compare it with their peers' on every check.
pub(crate) static OWN_PID_NAMESPACE: OnceLock<u32> = OnceLock::new();
