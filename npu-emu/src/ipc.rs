//! Sharing between processes of a node (DESIGN §2): IPC memory exported by key, notifies and
//! count notifies, IPC events, and shareable handles of the virtual-memory API. Every
//! process of the user that opens the node (the same job, or another job) sees them.
//!
//! Two pieces, both in the node directory:
//! - `ipc.slots`: [`SLOTS`] 64-byte synchronisation slots in shared memory. A notify, count
//!   notify or IPC event is one slot (its id is the slot index): a futex [`Word`] whose value
//!   is the notify flag / the count / the completion counter of an event, plus the event's
//!   issued-record counter. A slot is claimed with a compare-and-swap of its kind word (no
//!   lock), and names its owner process; a slot whose owner died is free again, and a waiter
//!   on it is told that the owner exited instead of waiting forever.
//! - `ipc/<key>.json`: one small file per exported key (IPC memory, a notify, a shareable
//!   VMM handle): what it is, its owner, and the pid allow-list. Files are replaced
//!   atomically (write, then rename), so a reader never sees half a record.
//!
//! Keys are made here (`<kind><pid hex>_<n hex>`, under 64 characters); a key given to an
//! import is checked to be one of ours before it becomes a file name.

use crate::codes::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_NO_PERMISSION,
};
use crate::error::{Error, Result};
use crate::globals::{IPC_KEY_SERIAL, IPC_SLOT_HINT};
use npu_emu_ffi::os::process_start_time;

/// Whether `pid` (started at `start`) still runs. IPC slots do not record a pid namespace:
/// the processes sharing a node's IPC state are taken to share ours.
fn process_alive(pid: u32, start: u64) -> bool {
    npu_emu_ffi::os::process_alive(pid, start, 0)
}
use crate::wait::{wait_until, Policy, WaitError, Word};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Synchronisation slots on a node.
pub const SLOTS: usize = 8192;

/// Kinds of slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    Notify = 1,
    CntNotify = 2,
    Event = 3,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Notify => "notify",
            Kind::CntNotify => "count notify",
            Kind::Event => "IPC event",
        }
    }
}

/// One synchronisation slot (64 bytes, shared memory).
#[repr(C)]
pub struct Slot {
    /// 0 = free, else a [`Kind`].
    kind: AtomicU32,
    /// Bumped at each claim: a handle names (index, generation), so a stale one is caught.
    pub gen: AtomicU32,
    pub owner_pid: AtomicU32,
    pub device: AtomicU32,
    owner_start: AtomicU64,
    /// Notify flag (0/1), count of a count notify, or completed records of an event.
    pub word: Word,
    /// Records issued (events).
    pub issued: AtomicU64,
    /// Timestamp (ns, CLOCK_MONOTONIC) of the latest completed record (events).
    pub stamp: AtomicU64,
    /// Processes using the slot (owner and importers).
    refs: AtomicU32,
    /// Export flags.
    pub flags: AtomicU32,
    _pad: u64,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// A slot this process uses: index and generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotRef {
    pub index: u32,
    pub gen: u32,
}

/// What an exported key stands for (the JSON file).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Export {
    /// `"mem"`, `"notify"` or `"vmm"`.
    pub kind: String,
    pub owner_pid: u32,
    pub owner_start: u64,
    /// Physical device.
    pub device: u32,
    /// Memory: canonical address and size; VMM: physical offset and size.
    pub addr: u64,
    pub size: u64,
    /// Notify: its slot.
    pub slot: Option<SlotRef>,
    /// Whether importers must be in `pids` (export flag without DISABLE_PID_VALIDATION).
    pub pid_check: bool,
    pub pids: Vec<i32>,
    /// Cross-server allow-list entries (super-pod device id, pid).
    #[serde(default)]
    pub server_pids: Vec<(u32, i32)>,
    /// `aclrtIpcMemSetAttr` values by attribute type.
    #[serde(default)]
    pub attrs: Vec<(i32, u64)>,
}

impl Export {
    /// Whether its owner still runs.
    pub fn owner_alive(&self) -> bool {
        process_alive(self.owner_pid, self.owner_start)
    }

    /// Check that process `pid` may import it.
    pub fn allows(&self, pid: i32, key: &str) -> Result<()> {
        if !self.owner_alive() {
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "key {key} was exported by process {}, which has exited",
                    self.owner_pid
                ),
            ));
        }
        if self.pid_check
            && pid as u32 != self.owner_pid
            && !self.pids.contains(&pid)
            && !self.server_pids.iter().any(|&(_, p)| p == pid)
        {
            return Err(Error::new(
                ACL_ERROR_RT_NO_PERMISSION,
                format!(
                    "process {pid} may not import key {key}: its exporter (process {}) allows {} (set them with the SetImportPid call of the key, or export with the DISABLE_PID_VALIDATION flag)",
                    self.owner_pid,
                    if self.pids.is_empty() && self.server_pids.is_empty() {
                        "no process yet".to_string()
                    } else {
                        format!(
                            "only {:?}",
                            self.pids
                                .iter()
                                .copied()
                                .chain(self.server_pids.iter().map(|&(_, p)| p))
                                .collect::<Vec<_>>()
                        )
                    }
                ),
            ));
        }
        Ok(())
    }
}

/// The IPC state of a node, as one process sees it.
pub struct Ipc {
    dir: PathBuf,
    slots: *mut Slot,
    _file: File,
    pid: u32,
    start: u64,
}

// SAFETY: the slots are shared memory accessed only through atomics.
unsafe impl Send for Ipc {}
// SAFETY: as for Send: shared state is only touched through atomics.
unsafe impl Sync for Ipc {}

impl Drop for Ipc {
    fn drop(&mut self) {
        // SAFETY: our own mapping of SLOTS slots.
        unsafe {
            libc::munmap(
                self.slots as *mut libc::c_void,
                SLOTS * std::mem::size_of::<Slot>(),
            )
        };
    }
}

fn io_err(what: String, e: std::io::Error) -> Error {
    Error::new(ACL_ERROR_RT_INTERNAL_ERROR, format!("{what}: {e}"))
}

/// Nanoseconds of `CLOCK_MONOTONIC`.
pub fn now_ns() -> u64 {
    crate::event::now_ns()
}

/// Wake every sleeper on `w` (its value was changed).
fn wake(w: &Word) {
    if w.sleepers.load(Ordering::SeqCst) != 0 {
        npu_emu_ffi::os::futex_wake(&w.value);
    }
}

impl Ipc {
    /// Open (creating if needed) the IPC state of the node in `node_dir`.
    pub fn open(node_dir: &Path) -> Result<Ipc> {
        let dir = node_dir.join("ipc");
        std::fs::create_dir_all(&dir)
            .map_err(|e| io_err(format!("cannot create {}", dir.display()), e))?;
        let path = node_dir.join("ipc.slots");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
        let len = (SLOTS * std::mem::size_of::<Slot>()) as u64;
        if f.metadata().map(|m| m.len()).unwrap_or(0) < len {
            // Growing only adds zero (free) slots, so racing openers agree.
            f.set_len(len)
                .map_err(|e| io_err(format!("cannot size {}", path.display()), e))?;
        }
        // SAFETY: a shared mapping of the whole file, which is at least `len` bytes.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io_err(
                format!("cannot map {}", path.display()),
                std::io::Error::last_os_error(),
            ));
        }
        let pid = std::process::id();
        Ok(Ipc {
            dir,
            slots: p as *mut Slot,
            _file: f,
            pid,
            start: process_start_time(pid).unwrap_or(0),
        })
    }

    /// Slot `i`.
    pub fn slot(&self, i: u32) -> &Slot {
        assert!((i as usize) < SLOTS);
        // SAFETY: inside the mapping of SLOTS slots.
        unsafe { &*self.slots.add(i as usize) }
    }

    /// Claim a free slot of `kind` for this process on physical device `device`.
    pub fn claim(&self, kind: Kind, device: u32) -> Result<SlotRef> {
        let start = (IPC_SLOT_HINT.fetch_add(1, Ordering::Relaxed) as usize
            + self.pid as usize * 31)
            % SLOTS;
        for n in 0..SLOTS {
            let i = ((start + n) % SLOTS) as u32;
            let s = self.slot(i);
            let k = s.kind.load(Ordering::SeqCst);
            let free = k == 0 || {
                let pid = s.owner_pid.load(Ordering::SeqCst);
                pid != 0 && !process_alive(pid, s.owner_start.load(Ordering::SeqCst))
            };
            if !free
                || s.kind
                    .compare_exchange(k, kind as u32, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
            {
                continue;
            }
            let gen = s.gen.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
            s.owner_start.store(self.start, Ordering::SeqCst);
            s.owner_pid.store(self.pid, Ordering::SeqCst);
            s.device.store(device, Ordering::SeqCst);
            s.word.value.store(0, Ordering::SeqCst);
            s.issued.store(0, Ordering::SeqCst);
            s.stamp.store(0, Ordering::SeqCst);
            s.flags.store(0, Ordering::SeqCst);
            s.refs.store(1, Ordering::SeqCst);
            return Ok(SlotRef { index: i, gen });
        }
        Err(Error::new(
            crate::codes::ACL_ERROR_RT_NO_NOTIFY_RESOURCE,
            format!(
                "all {SLOTS} notify/event slots of node {} are in use",
                self.dir.display()
            ),
        ))
    }

    /// Use slot `r` of `kind` made by another process (an import): checks that it is still
    /// that object and that its owner runs.
    pub fn attach(&self, r: SlotRef, kind: Kind) -> Result<()> {
        self.check(r, kind)?;
        self.slot(r.index).refs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Check that `r` still names a live object of `kind`.
    pub fn check(&self, r: SlotRef, kind: Kind) -> Result<()> {
        if r.index as usize >= SLOTS {
            return Err(Error::invalid(format!(
                "{} id {} is out of range",
                kind.name(),
                r.index
            )));
        }
        let s = self.slot(r.index);
        if s.kind.load(Ordering::SeqCst) != kind as u32 || s.gen.load(Ordering::SeqCst) != r.gen {
            return Err(Error::invalid(format!(
                "the {} (slot {}) no longer exists: its owner destroyed it",
                kind.name(),
                r.index
            )));
        }
        let pid = s.owner_pid.load(Ordering::SeqCst);
        if !process_alive(pid, s.owner_start.load(Ordering::SeqCst)) {
            return Err(Error::invalid(format!(
                "the {} (slot {}) belongs to process {pid}, which has exited",
                kind.name(),
                r.index
            )));
        }
        Ok(())
    }

    /// Stop using slot `r`; the last user frees it.
    pub fn release(&self, r: SlotRef) {
        let s = self.slot(r.index);
        if s.gen.load(Ordering::SeqCst) != r.gen {
            return;
        }
        if s.refs.fetch_sub(1, Ordering::SeqCst) <= 1 {
            s.owner_pid.store(0, Ordering::SeqCst);
            s.kind.store(0, Ordering::SeqCst);
        }
    }

    /// Wait until `ready(slot)` holds for slot `r`, at most `timeout` (`None` = forever).
    /// The owner exiting ends the wait with an error. Returns false on timeout.
    pub fn wait(
        &self,
        r: SlotRef,
        kind: Kind,
        timeout: Option<Duration>,
        ready: impl Fn(&Slot) -> bool,
    ) -> Result<bool> {
        let s = self.slot(r.index);
        let deadline = timeout.map(|t| Instant::now() + t);
        match wait_until(
            &Policy::for_participants(2),
            &s.word,
            || ready(s),
            deadline,
            || {
                if crate::stream::task_aborted() {
                    return Err(Error::new(
                        crate::codes::ACL_ERROR_RT_STREAM_ABORT,
                        format!(
                            "the wait on {} (slot {}) was aborted with its stream",
                            kind.name(),
                            r.index
                        ),
                    ));
                }
                self.check(r, kind)
            },
        ) {
            Ok(()) => Ok(true),
            Err(WaitError::TimedOut) => Ok(false),
            Err(WaitError::Check(e)) => Err(e),
        }
    }

    /// Set a notify (its record reached the device).
    pub fn notify_set(&self, r: SlotRef) {
        self.slot(r.index).word.store_wake(1);
    }

    /// Clear a notify.
    pub fn notify_reset(&self, r: SlotRef) {
        self.slot(r.index).word.value.store(0, Ordering::SeqCst);
    }

    /// Wait until the notify is set, then clear it (one waiter takes each set).
    pub fn notify_wait_reset(&self, r: SlotRef, timeout: Option<Duration>) -> Result<bool> {
        self.wait(r, Kind::Notify, timeout, |s| {
            s.word
                .value
                .compare_exchange(1, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
    }

    /// Update a count notify with `f` (set, add, or, and) and wake its waiters.
    pub fn count_update(&self, r: SlotRef, f: impl Fn(u32) -> u32) {
        let w = &self.slot(r.index).word;
        let _ = w
            .value
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(f(v)));
        wake(w);
    }

    /// The current count of a count notify.
    pub fn count(&self, r: SlotRef) -> u32 {
        self.slot(r.index).word.value.load(Ordering::SeqCst)
    }

    /// Number the next record of an IPC event.
    pub fn event_issue(&self, r: SlotRef) -> u64 {
        self.slot(r.index).issued.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Record `n` of an IPC event completed.
    pub fn event_complete(&self, r: SlotRef, n: u64) {
        let s = self.slot(r.index);
        s.stamp.store(now_ns(), Ordering::SeqCst);
        // The completion counter lives in the futex word (low 32 bits suffice: waiters
        // compare with wrap-around).
        let _ = s
            .word
            .value
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
                Some(if crate::ipc::seq_ge(v, n as u32) {
                    v
                } else {
                    n as u32
                })
            });
        wake(&s.word);
    }

    /// Whether record `n` of an IPC event completed.
    pub fn event_done(&self, r: SlotRef, n: u64) -> bool {
        n == 0
            || seq_ge(
                self.slot(r.index).word.value.load(Ordering::SeqCst),
                n as u32,
            )
    }

    /// Records issued so far.
    pub fn event_issued(&self, r: SlotRef) -> u64 {
        self.slot(r.index).issued.load(Ordering::SeqCst)
    }

    // ----- exported keys -----

    /// A new key of `kind` (`mem`, `ntf`, `vmm`) for this process.
    pub fn new_key(&self, kind: &str) -> String {
        format!(
            "{kind}{:x}_{:x}",
            self.pid,
            IPC_KEY_SERIAL.fetch_add(1, Ordering::Relaxed)
        )
    }

    fn path(&self, key: &str) -> Result<PathBuf> {
        let ok = !key.is_empty()
            && key.len() < 64
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(Error::invalid(format!(
                "key {key:?} is not a key made by an export of npu-emu"
            )));
        }
        Ok(self.dir.join(format!("{key}.json")))
    }

    /// Publish (or replace) `key`.
    pub fn publish(&self, key: &str, e: &Export) -> Result<()> {
        let path = self.path(key)?;
        let tmp = self.dir.join(format!(".{key}.{}.tmp", self.pid));
        let text = serde_json::to_vec(e).unwrap_or_default();
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|err| io_err(format!("cannot write {}", path.display()), err))
    }

    /// What `key` stands for, or an error naming it.
    pub fn lookup(&self, key: &str) -> Result<Export> {
        let path = self.path(key)?;
        let text = std::fs::read(&path).map_err(|_| {
            Error::invalid(format!(
                "key {key} is not exported on node {} (never exported, or closed by its exporter)",
                self.dir.parent().unwrap_or(&self.dir).display()
            ))
        })?;
        serde_json::from_slice(&text).map_err(|e| {
            Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("the record of key {key} is damaged: {e}"),
            )
        })
    }

    /// Change the record of `key`, which this process exported.
    pub fn update(&self, key: &str, f: impl FnOnce(&mut Export) -> Result<()>) -> Result<()> {
        let mut e = self.lookup(key)?;
        if e.owner_pid != self.pid {
            return Err(Error::invalid(format!(
                "key {key} was exported by process {}, not by this process ({})",
                e.owner_pid, self.pid
            )));
        }
        f(&mut e)?;
        self.publish(key, &e)
    }

    /// Withdraw `key` (later imports fail; existing imports stay usable).
    pub fn withdraw(&self, key: &str) -> Result<()> {
        let path = self.path(key)?;
        let _ = std::fs::remove_file(path);
        Ok(())
    }

    /// A record for this process.
    pub fn export(&self, kind: &str, device: u32, addr: u64, size: u64, pid_check: bool) -> Export {
        Export {
            kind: kind.to_string(),
            owner_pid: self.pid,
            owner_start: self.start,
            device,
            addr,
            size,
            slot: None,
            pid_check,
            pids: Vec::new(),
            server_pids: Vec::new(),
            attrs: Vec::new(),
        }
    }

    /// Remove the records this process exported whose owner is gone (housekeeping).
    pub fn collect_dead(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                if let Ok(t) = std::fs::read(&p) {
                    if let Ok(x) = serde_json::from_slice::<Export>(&t) {
                        if !x.owner_alive() {
                            let _ = std::fs::remove_file(&p);
                        }
                    }
                }
            }
        }
    }
}

/// `a >= b` for 32-bit counters that may wrap.
pub fn seq_ge(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) < (1 << 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("npu-emu-ipc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn slots_claim_release_and_stale_handles() {
        let d = dir("slots");
        let ipc = Ipc::open(&d).unwrap();
        let a = ipc.claim(Kind::Notify, 0).unwrap();
        ipc.check(a, Kind::Notify).unwrap();
        assert!(ipc.check(a, Kind::Event).is_err());
        ipc.release(a);
        assert!(ipc.check(a, Kind::Notify).is_err());
        let b = ipc.claim(Kind::Event, 1).unwrap();
        assert_eq!(ipc.event_issue(b), 1);
        assert!(!ipc.event_done(b, 1));
        ipc.event_complete(b, 1);
        assert!(ipc.event_done(b, 1));
        ipc.release(b);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn notify_between_threads() {
        let d = dir("notify");
        let ipc = std::sync::Arc::new(Ipc::open(&d).unwrap());
        let n = ipc.claim(Kind::Notify, 0).unwrap();
        assert!(!ipc
            .notify_wait_reset(n, Some(Duration::from_millis(5)))
            .unwrap());
        let i2 = ipc.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            i2.notify_set(n);
        });
        assert!(ipc.notify_wait_reset(n, None).unwrap());
        t.join().unwrap();
        assert_eq!(ipc.count(n), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn keys_and_allow_lists() {
        let d = dir("keys");
        let ipc = Ipc::open(&d).unwrap();
        let k = ipc.new_key("mem");
        let mut e = ipc.export("mem", 0, 0x1000, 64, true);
        ipc.publish(&k, &e).unwrap();
        let me = std::process::id() as i32;
        ipc.lookup(&k).unwrap().allows(me, &k).unwrap();
        assert_eq!(
            ipc.lookup(&k).unwrap().allows(me + 1, &k).unwrap_err().code,
            ACL_ERROR_RT_NO_PERMISSION
        );
        ipc.update(&k, |x| {
            x.pids.push(me + 1);
            Ok(())
        })
        .unwrap();
        ipc.lookup(&k).unwrap().allows(me + 1, &k).unwrap();
        e.pid_check = false;
        ipc.publish(&k, &e).unwrap();
        ipc.lookup(&k).unwrap().allows(12345, &k).unwrap();
        assert!(ipc.lookup("../etc").is_err());
        ipc.withdraw(&k).unwrap();
        assert!(ipc.lookup(&k).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
