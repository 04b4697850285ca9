//! The shared-memory node: one emulated server (DESIGN §2 "Node").
//!
//! A directory (`/dev/shm/npu-emu-<uid>` by default, [`crate::config`]) holding a header
//! (device count, SoC, HBM size), a process table (pid, start time, bytes in use per
//! device — read by `npu-emu smi` and `aclrtGetMemInfo`), per-device slab tables, and one
//! sparse HBM backing file per device. Any process of the user that opens the node joins
//! it; slabs of dead processes are reclaimed. The file layout is described in
//! `node/shared.rs`.
//!
//! How memory is handed out:
//! - A process takes slabs (64 MiB on big devices, see [`Node::slab_size`]) of a device's
//!   HBM from the shared slab table under the node lock; an allocation larger than a slab
//!   takes a contiguous run of slabs. Inside its slabs it suballocates privately (first fit,
//!   32-byte aligned, over all its slabs of the device, so an allocation may span two
//!   adjacent slabs: see `node/suballoc.rs`). A slab with no live byte left goes back to the
//!   node.
//! - Backing pages are reserved with `fallocate`, so a full `/dev/shm` is an error with a
//!   message, never a SIGBUS later; freed pages are punched out of the file so the RAM goes
//!   back to the system. An allocation below [`LAZY_RESERVE_FROM`] is reserved when it is
//!   made. A larger one (reserving costs ~0.5 s per GiB on a VM: the pages are allocated)
//!   is checked against the file system's free space when it is made (`fstatvfs`, counting
//!   this process's allocations not reserved yet), and reserved at its first use: the first
//!   [`Node::check`] / [`Node::phys`] of any part of it (every copy, memset, kernel argument,
//!   HCCL buffer and IPC export goes through them), or [`Node::reserve_pending`] (before a
//!   kernel runs, which may reach memory through pointers in its arguments). Every access
//!   to device memory happens after one of these, so the emulator never touches an
//!   unreserved page; if `/dev/shm` filled up in between (another process), the first use
//!   fails with `ACL_ERROR_RT_MEMORY_ALLOCATION` and the message. In total nothing is lost:
//!   first touching reserved pages costs what touching unreserved ones costs.
//! - Freeing gives the pages back to the system (`fallocate` punching a hole). That costs
//!   ~0.2 s per GiB (the kernel frees every page), so a free of at least
//!   [`PUNCH_LATER_FROM`] bytes hands its range to this process's punch thread and returns:
//!   the range stays this process's (out of its pool, so nothing can be allocated there)
//!   until its pages are punched, then goes back to the pool and its wholly free slabs to
//!   the node, as a small free does at once. An allocation that finds no room, or no
//!   backing store, while punches are pending waits for them and tries again, so a freed
//!   range is never counted against the caller ([`Node::settle_frees`] waits for them too).
//! - Device `d`'s HBM is reserved without access at its canonical address
//!   ([`crate::memory::device_addr`]) in every process, so a device pointer means the same
//!   everywhere and a host dereference faults ([`crate::fault`]); the emulator reads and
//!   writes through a read-write alias mapping of the same file ([`Node::check`]).
//! - Each process counts the bytes it holds per device in its process-table slot (the sizes
//!   after CANN's rounding, as the caller passes them), so [`Node::mem_info`] and
//!   [`Node::usage`] add up across processes.
//!
//! Who may use it: the directory must belong to the user and be writable by no one else
//! (created 0700; a directory of another user, or one others may write to, is refused with
//! `ACL_ERROR_RT_NO_PERMISSION` and a message saying what to do; one of ours that others may
//! only read is tightened to 0700). Every file is opened without following symbolic links
//! and must be a regular file of the user that no one else may open
//! ([`open_dir`], [`check_file`]). Every page of the small shared files is
//! backed with `fallocate` when the node is opened, so a full `/dev/shm` is an error then,
//! never a SIGBUS later. A node's [`reaper`] process reclaims dead processes at once.
//!
//! The virtual-memory family (`aclrtReserveMemAddress`, `aclrtMallocPhysical`,
//! `aclrtMapMem` …) is [`Node::reserve_va`], [`Node::alloc_physical`], [`Node::map`] and
//! their inverses.
//!
//! A `Node` is used from many threads (API calls, stream workers); all methods take `&self`.
//! A process that forks keeps the parent's `Node` in the child: the child may read memory
//! through it but must not allocate or free (it has no slot of its own), which is an error.

mod host_map;
pub mod reaper;
mod shared;
mod suballoc;

use crate::codes::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_MEMORY_ALLOCATION};
use crate::config::{Config, LogLevel};
use crate::error::{Error, Result};
use crate::globals::CANONICAL;
use crate::log::Logger;
use crate::memory::{
    device_addr, device_of, AllocInfo, PhysHandleInfo, VMM_BASE, VMM_GRANULARITY, VMM_SIZE,
};
use crate::rtapi::RtPhys;
pub use host_map::HOST_PAGE;
use parking_lot::{Condvar, Mutex, MutexGuard};
pub use shared::{check_file, open_dir, reserve_file};
use shared::{Mapping, Shared};
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use suballoc::{Pool, ALIGN};

/// Allocations of at least this many bytes are reserved at their first use instead of
/// when they are made (see the module documentation).
pub const LAZY_RESERVE_FROM: u64 = 1 << 20;

/// Frees of at least this many bytes punch their pages on the punch thread (a punch of
/// 4 MiB takes about a millisecond; see the module documentation).
pub const PUNCH_LATER_FROM: u64 = 4 << 20;

/// How many freed allocations a process remembers, to tell "freed memory" from "never
/// allocated" in messages.
const FREED_HISTORY: usize = 4096;

/// What one live process uses (for `smi`).
#[derive(Clone, Debug)]
pub struct ProcessUsage {
    pub pid: u32,
    /// Command name (`/proc/<pid>/comm`).
    pub name: String,
    /// Bytes in use per physical device.
    pub bytes: Vec<u64>,
}

/// A mapped VMM range: `[va, va+size)` shows `[offset, offset+size)` of a physical handle.
#[derive(Clone, Copy, Debug)]
struct VaMap {
    /// Which mapping this is (as [`AllocInfo::serial`]).
    serial: u64,
    size: u64,
    handle: u64,
    offset: u64,
    /// Physical location of `va`.
    phys: RtPhys,
}

/// A physical handle and how many mappings use it.
#[derive(Clone, Copy, Debug)]
struct Handle {
    info: PhysHandleInfo,
    maps: usize,
    /// Imported from another process (`aclrtMemImportFromShareableHandle`): freeing it
    /// forgets it; the pages stay the exporter's.
    imported: bool,
}

/// Device memory of another process this process may use (IPC memory,
/// `aclrtIpcMemImportByKey`): `[addr, addr+size)` at its canonical address.
#[derive(Clone, Copy, Debug)]
struct Import {
    size: u64,
    device: u32,
    /// How many imports of this range are open (each key import counts once).
    refs: u32,
    /// Serial of the import ([`AllocInfo::serial`]): a range imported again after being
    /// closed has a new one.
    serial: u64,
}

/// This process's private bookkeeping.
#[derive(Default)]
struct Inner {
    /// The slabs this process holds and the free space in them, per device.
    pools: BTreeMap<u32, Pool>,
    /// Live allocations by canonical start address.
    allocs: BTreeMap<u64, AllocInfo>,
    /// Recently freed allocations, newest last.
    freed: VecDeque<AllocInfo>,
    /// Physical handles by id.
    handles: BTreeMap<u64, Handle>,
    next_handle: u64,
    /// VA ranges reserved by this process: start → size.
    vas: BTreeMap<u64, u64>,
    /// Mapped VA ranges: start → mapping.
    maps: BTreeMap<u64, VaMap>,
    /// Imported ranges of other processes' memory: start → import.
    imports: BTreeMap<u64, Import>,
    /// Allocations whose pages are mapped over registered host memory
    /// (`node/host_map.rs`): device start address → host range.
    host_maps: BTreeMap<u64, host_map::HostMap>,
    /// Serial of the last allocation or mapping ([`AllocInfo::serial`]).
    next_serial: u64,
    /// Live allocations whose backing pages are not reserved yet: start → bytes (rounded).
    unreserved: BTreeMap<u64, u64>,
    /// The sum of `unreserved`.
    pending: u64,
    /// Freed ranges whose pages the punch thread gives back before they return to the
    /// pool: (device, physical offset, bytes).
    to_punch: VecDeque<(u32, u64, u64)>,
    /// Ranges handed to the punch thread and not back in the pool yet.
    punching: usize,
    /// The punch thread runs.
    punch_thread: bool,
    /// The punch thread is to exit once `to_punch` is empty (the node is dropped).
    punch_stop: bool,
}

/// The punch thread's two signals, on [`Node::inner`]'s lock.
#[derive(Default)]
struct PunchSignals {
    /// A range was queued, or the thread is to stop.
    work: Condvar,
    /// A range went back to the pool, or the thread stopped.
    done: Condvar,
}

/// This process's view of the node: mappings, its own allocations, its process-table slot.
pub struct Node {
    sh: Arc<Shared>,
    /// Our slot in the process table.
    slot: usize,
    /// The process that opened the node (a fork child must not allocate through it).
    pid: u32,
    /// Read-write alias of each device's HBM file.
    alias: Vec<Mapping>,
    inner: Arc<Mutex<Inner>>,
    punch: Arc<PunchSignals>,
    /// Most device bytes this process held at once, per device (`aclrtGetMemUsageInfo`).
    peak: Vec<std::sync::atomic::AtomicU64>,
}

/// Return `[off, off+size)` of `device` to its pool; punch the pages now wholly free (only
/// those outside the range when `punched`: the punch thread did the range already); give
/// every slab that holds nothing live any more back to the node.
fn give_back(sh: &Shared, inner: &mut Inner, device: u32, off: u64, size: u64, punched: bool) {
    let Some(pool) = inner.pools.get_mut(&device) else {
        return;
    };
    let (fstart, flen) = pool.free(off, size);
    let fend = fstart + flen;
    // Punch while every page of the block is still ours, then let the slabs go.
    if punched {
        // The pages the range shares with free neighbours (`punch` keeps to whole pages).
        let left = page_up(off).min(fend);
        sh.punch(device, fstart, left - fstart);
        let right = ((off + size) & !4095).max(fstart);
        sh.punch(device, right, fend - right);
    } else {
        sh.punch(device, fstart, flen);
    }
    for (first, n) in pool.release_free(fstart, flen) {
        sh.release_slabs(device, first, n);
    }
    if pool.is_empty() {
        inner.pools.remove(&device);
    }
}

/// The punch thread of a [`Node`]: gives back the pages of large freed ranges (the range is
/// still this process's, out of its pool, so nobody else touches it meanwhile), then
/// returns the range to the pool. Exits when the node is dropped.
fn punch_thread(sh: Arc<Shared>, state: Arc<Mutex<Inner>>, sig: Arc<PunchSignals>) {
    // SCHED_BATCH: a fair share of the CPU, but a wake-up never preempts the thread that
    // freed (otherwise, with more runnable threads than CPUs, the free's caller may wait a
    // whole timeslice while the punch runs). Best effort: without it the thread still works.
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: changes the calling thread's policy (pid 0); `param` is a valid local.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    let mut inner = state.lock();
    loop {
        let Some((device, off, size)) = inner.to_punch.pop_front() else {
            if inner.punch_stop {
                inner.punch_thread = false;
                sig.done.notify_all();
                return;
            }
            sig.work.wait(&mut inner);
            continue;
        };
        drop(inner);
        sh.punch(device, off, size);
        inner = state.lock();
        give_back(&sh, &mut inner, device, off, size, true);
        inner.punching -= 1;
        sig.done.notify_all();
    }
}

fn page_up(n: u64) -> u64 {
    n.next_multiple_of(4096)
}

/// Reserve `[addr, addr+len)` without access, failing if anything is mapped there.
fn reserve_fixed(addr: u64, len: u64) -> std::io::Result<()> {
    // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    if p as u64 != addr {
        // A kernel older than 4.17 treats the flag as a hint.
        // SAFETY: we just created this mapping.
        unsafe { libc::munmap(p, len as usize) };
        return Err(std::io::Error::from_raw_os_error(libc::EEXIST));
    }
    Ok(())
}

/// Make sure device `d`'s canonical range covers `len` bytes in this process.
fn reserve_canonical(d: u32, len: u64) -> Result<()> {
    let mut have = CANONICAL.lock();
    let cur = have[d as usize];
    let len = page_up(len);
    if cur >= len {
        return Ok(());
    }
    let start = device_addr(d, cur);
    if let Err(e) = reserve_fixed(start, len - cur) {
        return Err(Error::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!(
                "cannot reserve the device address range 0x{start:x}..0x{:x} of device {d} in \
                 this process: {e}; something else (a library or a fixed mapping) already \
                 uses it, so device memory cannot be mapped at its canonical address",
                device_addr(d, len)
            ),
        ));
    }
    have[d as usize] = len;
    Ok(())
}

impl Node {
    /// Create or join the node described by `cfg`; map every device's HBM (canonical
    /// range without access, plus the read-write alias); register this process.
    pub fn open(cfg: &Config) -> Result<Node> {
        let (sh, warnings) = Shared::open(cfg)?;
        let logger = Logger::new(cfg);
        for w in &warnings {
            logger.log(LogLevel::Warning, "NPU_EMU", w);
        }
        for d in 0..sh.devices {
            reserve_canonical(d, sh.hbm_size)?;
        }
        let mut alias = Vec::new();
        for d in 0..sh.devices {
            let path = sh.dir.join(format!("hbm.{d}"));
            alias.push(shared::map_hbm(
                &sh.hbm[d as usize],
                sh.hbm_size as usize,
                &path,
                d,
            )?);
        }
        let slot = sh.register()?;
        Ok(Node {
            sh: Arc::new(sh),
            slot,
            pid: std::process::id(),
            alias,
            inner: Arc::new(Mutex::new(Inner {
                next_handle: 1,
                ..Default::default()
            })),
            punch: Arc::default(),
            peak: (0..crate::memory::MAX_DEVICES)
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect(),
        })
    }

    /// Device bytes this process holds on `device` now, and the most it held at once.
    pub fn process_bytes(&self, device: u32) -> (u64, u64) {
        if device >= self.sh.devices {
            return (0, 0);
        }
        let cur = self.sh.proc(self.slot).bytes[device as usize].load(Ordering::SeqCst);
        let peak = self.peak[device as usize].load(Ordering::SeqCst);
        (cur, peak.max(cur))
    }

    /// Start the node's reaper unless one runs ([`reaper`]): dead processes' memory goes
    /// back as soon as they die, not when the next process opens the node.
    pub fn start_reaper(&self, cfg: &Config) {
        let maps: Vec<(usize, usize)> = self
            .alias
            .iter()
            .map(|m| (m.ptr() as usize, m.len()))
            .collect();
        reaper::ensure(cfg, &maps);
    }

    /// Devices on the node (from the node header, which the first process wrote).
    pub fn devices(&self) -> u32 {
        self.sh.devices
    }

    /// HBM bytes per device.
    pub fn hbm_size(&self) -> u64 {
        self.sh.hbm_size
    }

    /// SoC name of the node (from the node header).
    pub fn soc_name(&self) -> &str {
        &self.sh.soc
    }

    /// The node directory.
    pub fn dir(&self) -> &Path {
        &self.sh.dir
    }

    /// Size of the slabs processes take from a device.
    pub fn slab_size(&self) -> u64 {
        self.sh.slab_size
    }

    fn check_device(&self, device: u32, func: &str) -> Result<()> {
        if device >= self.sh.devices {
            return Err(Error::invalid(format!(
                "{func}: device {device} does not exist; the node has devices 0..{}",
                self.sh.devices - 1
            )));
        }
        Ok(())
    }

    fn check_owner(&self) -> Result<()> {
        let me = std::process::id();
        if me != self.pid {
            return Err(Error::invalid(format!(
                "process {me} uses device memory state inherited from process {} across \
                 fork(); a forked child must not allocate or free through its parent's \
                 runtime",
                self.pid
            )));
        }
        Ok(())
    }

    fn alias_ptr(&self, device: u32, offset: u64) -> *mut u8 {
        // SAFETY: callers check offset <= hbm_size; the alias maps hbm_size bytes.
        unsafe { self.alias[device as usize].ptr().add(offset as usize) }
    }

    fn bytes_add(&self, device: u32, n: u64) {
        let now = self.sh.proc(self.slot).bytes[device as usize].fetch_add(n, Ordering::SeqCst) + n;
        self.peak[device as usize].fetch_max(now, Ordering::SeqCst);
    }

    fn bytes_sub(&self, device: u32, n: u64) {
        self.sh.proc(self.slot).bytes[device as usize].fetch_sub(n, Ordering::SeqCst);
    }

    /// Take `size` bytes (multiple of 32) aligned to `align` on `device`, with backing
    /// pages reserved (`lazy`: only checked against the free space, reserved at first use).
    /// Returns the physical offset.
    fn take(
        &self,
        inner: &mut Inner,
        device: u32,
        size: u64,
        align: u64,
        lazy: bool,
    ) -> Result<u64> {
        let slab = self.sh.slab_size;
        let pool = inner.pools.entry(device).or_insert_with(|| Pool::new(slab));
        let off = match pool.alloc(size, align) {
            Some(off) => off,
            None => {
                // Grow next to free space we hold if the slabs there are free, else take a
                // fresh run big enough on its own.
                let near = pool.growth(size, align, self.sh.nslabs);
                let n = size.div_ceil(slab).max(1);
                let Some((first, k)) = self.sh.take_slabs_near(device, &near, n, self.slot)? else {
                    let (free, total) = self.mem_info(device);
                    return Err(Error::new(
                        ACL_ERROR_RT_MEMORY_ALLOCATION,
                        format!(
                            "out of memory on device {device}: cannot allocate {size} bytes; {} \
                             of {total} bytes are in use by the processes of node {} and no run \
                             of {n} free {slab}-byte slabs is left",
                            total - free,
                            self.sh.dir.display()
                        ),
                    ));
                };
                let pool = inner.pools.get_mut(&device).expect("pool present");
                pool.add(first, k);
                match pool.alloc(size, align) {
                    Some(off) => off,
                    None => {
                        return Err(Error::new(
                            ACL_ERROR_RT_INTERNAL_ERROR,
                            format!(
                                "device {device}: {k} slabs from slab {first} were taken for an \
                                 allocation of {size} bytes, but it does not fit in them"
                            ),
                        ))
                    }
                }
            }
        };
        let reserved = if lazy {
            match self.sh.space_left(device) {
                Some(left) if left < inner.pending.saturating_add(size) => {
                    Err(std::io::Error::other(format!(
                        "{left} bytes are free there and this process already has {} bytes \
                         allocated but not reserved yet",
                        inner.pending
                    )))
                }
                _ => Ok(()),
            }
        } else {
            self.sh.reserve(device, off, size)
        };
        if let Err(e) = reserved {
            self.give(inner, device, off, size);
            return Err(Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "out of memory on device {device}: cannot reserve {size} bytes of backing \
                     store in node directory {}: {e}; the file system holding it (usually \
                     /dev/shm) is full: free memory, enlarge it, or set NPU_EMU_NODE_DIR",
                    self.sh.dir.display()
                ),
            ));
        }
        Ok(off)
    }

    /// Return `[off, off+size)` of `device` to its pool; punch the pages now wholly free;
    /// give every slab that holds nothing live any more back to the node.
    fn give(&self, inner: &mut Inner, device: u32, off: u64, size: u64) {
        give_back(&self.sh, inner, device, off, size, false);
    }

    /// Free `[off, off+size)` of `device` as [`Node::give`] does, on the punch thread when
    /// it is large ([`PUNCH_LATER_FROM`]) and the thread runs or can be started.
    fn give_freed(&self, inner: &mut Inner, device: u32, off: u64, size: u64) {
        if size >= PUNCH_LATER_FROM && self.punch_thread(inner) {
            inner.to_punch.push_back((device, off, size));
            inner.punching += 1;
            self.punch.work.notify_one();
        } else {
            self.give(inner, device, off, size);
        }
    }

    /// Whether the punch thread runs (started now if not yet).
    fn punch_thread(&self, inner: &mut Inner) -> bool {
        if inner.punch_thread {
            return true;
        }
        if inner.punch_stop {
            return false;
        }
        let (sh, state, sig) = (self.sh.clone(), self.inner.clone(), self.punch.clone());
        inner.punch_thread = std::thread::Builder::new()
            .name("npu-emu-free".into())
            .stack_size(256 << 10)
            .spawn(move || punch_thread(sh, state, sig))
            .is_ok();
        inner.punch_thread
    }

    /// Wait until every range handed to the punch thread is back in the pool; whether
    /// there was any (a failed allocation is then worth another try).
    fn settle(&self, inner: &mut MutexGuard<'_, Inner>) -> bool {
        // (A fork child has a copy of the queue but not the thread.)
        if inner.punching == 0 || std::process::id() != self.pid {
            return false;
        }
        while inner.punching > 0 {
            self.punch.done.wait(inner);
        }
        true
    }

    /// Wait until the pages of every free of this process are given back to the system
    /// and its ranges are back in the pool (large frees finish on the punch thread).
    pub fn settle_frees(&self) {
        self.settle(&mut self.inner.lock());
    }

    /// Allocate `size` bytes (already rounded by the caller) on physical device `device`.
    /// Backing space is reserved now, or checked now and reserved at first use (from
    /// [`LAZY_RESERVE_FROM`] bytes): a full `/dev/shm` or exhausted HBM gives
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` with a message, never a SIGBUS.
    pub fn alloc(&self, device: u32, size: u64, requested: u64) -> Result<AllocInfo> {
        self.check_device(device, "alloc")?;
        self.check_owner()?;
        if size == 0 {
            return Err(Error::invalid("size is 0; expected at least 1 byte"));
        }
        if size > self.sh.hbm_size {
            return Err(Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "out of memory on device {device}: cannot allocate {size} bytes, more than \
                     the device's {} bytes of HBM",
                    self.sh.hbm_size
                ),
            ));
        }
        let asize = size.next_multiple_of(ALIGN);
        let mut inner = self.inner.lock();
        let lazy = asize >= LAZY_RESERVE_FROM;
        let off = match self.take(&mut inner, device, asize, ALIGN, lazy) {
            // No room, or no backing store, while freed ranges are still being given back:
            // wait for them and try again.
            Err(e) if e.code == ACL_ERROR_RT_MEMORY_ALLOCATION && self.settle(&mut inner) => {
                self.take(&mut inner, device, asize, ALIGN, lazy)?
            }
            r => r?,
        };
        inner.next_serial += 1;
        let info = AllocInfo {
            addr: device_addr(device, off),
            size,
            requested,
            device,
            serial: inner.next_serial,
        };
        inner.allocs.insert(info.addr, info);
        if lazy {
            inner.unreserved.insert(info.addr, asize);
            inner.pending += asize;
        }
        self.bytes_add(device, size);
        Ok(info)
    }

    fn remember_freed(inner: &mut Inner, a: AllocInfo) {
        if inner.freed.len() == FREED_HISTORY {
            inner.freed.pop_front();
        }
        inner.freed.push_back(a);
    }

    /// Free the allocation starting at `addr`. Freeing an address that is not the start of
    /// a live allocation of this process (double free, interior pointer, foreign pointer)
    /// is an error naming the address.
    pub fn free(&self, addr: u64) -> Result<AllocInfo> {
        self.check_owner()?;
        let mut inner = self.inner.lock();
        if let Some(m) = inner.host_maps.get(&addr) {
            return Err(Error::invalid(format!(
                "devPtr 0x{addr:x} is the device address of host memory 0x{:x} ({} bytes) \
                 registered with aclrtHostRegister: release it with aclrtHostUnregister on the \
                 host pointer, not aclrtFree",
                m.host, m.len
            )));
        }
        self.free_locked(&mut inner, addr)
    }

    /// [`Node::free`] with the lock held.
    fn free_locked(&self, inner: &mut Inner, addr: u64) -> Result<AllocInfo> {
        let Some(a) = inner.allocs.remove(&addr) else {
            return Err(Error::invalid(format!(
                "devPtr 0x{addr:x} is not the start of a live device allocation: {}",
                self.what_is(inner, addr, true)
            )));
        };
        if let Some(n) = inner.unreserved.remove(&addr) {
            inner.pending -= n;
        }
        let off = addr - device_addr(a.device, 0);
        self.give_freed(inner, a.device, off, a.size.next_multiple_of(ALIGN));
        self.bytes_sub(a.device, a.size);
        Self::remember_freed(inner, a);
        Ok(a)
    }

    /// What `addr` is, for messages: "already freed", "inside allocation …", "not a device
    /// address" …; `free` asks about the start of an allocation.
    fn what_is(&self, inner: &Inner, addr: u64, free: bool) -> String {
        if let Some((_, a)) = inner.allocs.range(..=addr).next_back() {
            if addr < a.addr + a.size {
                return format!(
                    "it is inside allocation 0x{:x} of {} bytes on device {} (offset {})",
                    a.addr,
                    a.size,
                    a.device,
                    addr - a.addr
                );
            }
        }
        if let Some(f) = inner
            .freed
            .iter()
            .rev()
            .find(|f| (f.addr..f.addr + f.size).contains(&addr))
        {
            return if free && f.addr == addr {
                format!(
                    "it was already freed (allocation of {} bytes on device {})",
                    f.size, f.device
                )
            } else {
                format!(
                    "it is in freed memory (inside allocation 0x{:x} of {} bytes on device {}, \
                     already freed)",
                    f.addr, f.size, f.device
                )
            };
        }
        if let Some((&va, m)) = inner.maps.range(..=addr).next_back() {
            if addr < va + m.size {
                return format!(
                    "it is inside the mapped virtual range 0x{va:x} of {} bytes (physical \
                     handle {} on device {}); release it with aclrtUnmapMem",
                    m.size, m.handle, m.phys.device
                );
            }
        }
        if let Some((&va, &size)) = inner.vas.range(..=addr).next_back() {
            if addr < va + size {
                return format!(
                    "it is inside the reserved virtual range 0x{va:x} of {size} bytes, where \
                     nothing is mapped"
                );
            }
        }
        match device_of(addr) {
            Some(d) if d < self.sh.devices => {
                let off = addr - device_addr(d, 0);
                if off >= self.sh.hbm_size {
                    return format!(
                        "it is beyond the {} bytes of device {d}'s HBM",
                        self.sh.hbm_size
                    );
                }
                match self.sh.slab_owner(d, off) {
                    Some(s) if s != self.slot => {
                        let pid = self.sh.proc(s).pid.load(Ordering::SeqCst);
                        format!(
                            "it is device memory of device {d} held by another process \
                             (pid {pid}, {}), not allocated by this process",
                            self.sh.comm(s)
                        )
                    }
                    _ => match inner.allocs.range(..addr).next_back() {
                        // The nearest allocation below, if the address is in the same slab.
                        Some((_, a))
                            if a.device == d
                                && (a.addr + a.size - 1 - device_addr(d, 0))
                                    / self.sh.slab_size
                                    == off / self.sh.slab_size =>
                        {
                            format!(
                                "it is not allocated: {} bytes past the end of allocation \
                                 0x{:x} ({} bytes) on device {d}",
                                addr - (a.addr + a.size),
                                a.addr,
                                a.size
                            )
                        }
                        _ => format!("it is not allocated (device {d}, no live allocation)"),
                    },
                }
            }
            Some(d) => format!(
                "it is not a device address (device {d} does not exist; the node has {})",
                self.sh.devices
            ),
            None if (VMM_BASE..VMM_BASE + VMM_SIZE).contains(&addr) => {
                "it is a virtual address no range of this process was reserved at".to_string()
            }
            None => "it is not a device address".to_string(),
        }
    }

    /// The VA range reserved by this process (`aclrtReserveMemAddress`) containing `va`:
    /// (start, size).
    pub fn reservation_at(&self, va: u64) -> Option<(u64, u64)> {
        let inner = self.inner.lock();
        let (&start, &size) = inner.vas.range(..=va).next_back()?;
        (va < start + size).then_some((start, size))
    }

    /// Every live allocation of this process, by address (not imports or VMM mappings).
    pub fn allocations(&self) -> Vec<AllocInfo> {
        self.inner.lock().allocs.values().copied().collect()
    }

    /// The live allocation of this process containing `addr` (or an imported range of
    /// another process's memory, described as an allocation), if any.
    pub fn lookup(&self, addr: u64) -> Option<AllocInfo> {
        let inner = self.inner.lock();
        if let Some((_, a)) = inner.allocs.range(..=addr).next_back() {
            if addr < a.addr + a.size {
                return Some(*a);
            }
        }
        let (&start, i) = inner.imports.range(..=addr).next_back()?;
        (addr < start + i.size).then_some(AllocInfo {
            addr: start,
            size: i.size,
            requested: i.size,
            device: i.device,
            serial: i.serial,
        })
    }

    /// Let this process use `[addr, addr+size)` of physical device `device`, memory another
    /// process allocated and exported (`aclrtIpcMemImportByKey`). Importing the same range
    /// again counts one more import.
    pub fn import_range(&self, device: u32, addr: u64, size: u64) -> Result<()> {
        self.check_device(device, "import")?;
        if size == 0 || device_of(addr) != Some(device) {
            return Err(Error::invalid(format!(
                "address 0x{addr:x} (+{size} bytes) is not device memory of device {device}"
            )));
        }
        let mut inner = self.inner.lock();
        if let Some(i) = inner.imports.get_mut(&addr) {
            i.refs += 1;
            i.size = i.size.max(size);
            return Ok(());
        }
        inner.next_serial += 1;
        let serial = inner.next_serial;
        inner.imports.insert(
            addr,
            Import {
                size,
                device,
                refs: 1,
                serial,
            },
        );
        Ok(())
    }

    /// Close one import of the range starting at `addr`; false if there is none.
    pub fn drop_import(&self, addr: u64) -> bool {
        let mut inner = self.inner.lock();
        match inner.imports.get_mut(&addr) {
            Some(i) if i.refs > 1 => {
                i.refs -= 1;
                true
            }
            Some(_) => {
                inner.imports.remove(&addr);
                true
            }
            None => false,
        }
    }

    /// Pid of the live process that holds the slab containing `offset` of physical device
    /// `device` (the owner of that memory), if any.
    pub fn memory_owner(&self, device: u32, offset: u64) -> Option<u32> {
        if device >= self.sh.devices || offset >= self.sh.hbm_size {
            return None;
        }
        let slot = self.sh.slab_owner(device, offset)?;
        let pid = self.sh.proc(slot).pid.load(Ordering::SeqCst);
        (pid != 0).then_some(pid)
    }

    /// The physical handle `handle` of this process.
    pub fn physical(&self, handle: u64) -> Option<PhysHandleInfo> {
        self.inner.lock().handles.get(&handle).map(|h| h.info)
    }

    /// Make another process's physical allocation usable here as a local handle
    /// (`aclrtMemImportFromShareableHandle`): it can be mapped with [`Node::map`]; freeing
    /// it forgets it. Returns the new handle's info.
    pub fn import_physical(&self, device: u32, size: u64, phys: RtPhys) -> Result<PhysHandleInfo> {
        self.check_device(device, "import_physical")?;
        let mut inner = self.inner.lock();
        let id = inner.next_handle;
        inner.next_handle += 1;
        let info = PhysHandleInfo {
            id,
            device,
            size,
            phys,
        };
        inner.handles.insert(
            id,
            Handle {
                info,
                maps: 0,
                imported: true,
            },
        );
        Ok(info)
    }

    /// Reserve the backing pages of the live allocation starting at `addr` if they are not
    /// yet (its first use).
    fn reserve_alloc(&self, inner: &mut MutexGuard<'_, Inner>, addr: u64) -> Result<()> {
        let Some(&n) = inner.unreserved.get(&addr) else {
            return Ok(());
        };
        let Some(a) = inner.allocs.get(&addr).copied() else {
            return Ok(());
        };
        let off = addr - device_addr(a.device, 0);
        let mut r = self.sh.reserve(a.device, off, n);
        if r.is_err() && self.settle(inner) {
            // Pages this process freed were still being given back: try again without them.
            r = self.sh.reserve(a.device, off, n);
        }
        if let Err(e) = r {
            return Err(Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "out of memory on device {}: allocation 0x{addr:x} ({} bytes) cannot be \
                     used: reserving its backing store at its first use failed: {e}; the file \
                     system holding node directory {} (usually /dev/shm) filled up since it \
                     was allocated: free memory, enlarge it, or set NPU_EMU_NODE_DIR",
                    a.device,
                    a.size,
                    self.sh.dir.display()
                ),
            ));
        }
        inner.unreserved.remove(&addr);
        inner.pending -= n;
        Ok(())
    }

    /// Reserve the backing pages of every allocation of this process not reserved yet
    /// (before a kernel runs: it may reach any of them through pointers in its arguments).
    pub fn reserve_pending(&self) -> Result<()> {
        let mut inner = self.inner.lock();
        while let Some((&addr, _)) = inner.unreserved.first_key_value() {
            self.reserve_alloc(&mut inner, addr)?;
        }
        Ok(())
    }

    /// Resolve `[addr, addr+len)` to a physical location and the serial of the allocation
    /// or mapping holding it, or explain why not. An allocation of this process is
    /// reserved at its first resolution.
    fn resolve(&self, addr: u64, len: u64, what: &str) -> Result<(RtPhys, u64)> {
        let mut inner = self.inner.lock();
        let end = addr.checked_add(len);
        if let Some((_, &a)) = inner.allocs.range(..=addr).next_back() {
            let aend = a.addr + a.size;
            // (An empty range may sit at the very end; a range starting there does not
            // belong to this allocation.)
            if addr < aend || (addr == aend && len == 0) {
                if end.is_some_and(|e| e <= aend) {
                    if !inner.unreserved.is_empty() {
                        self.reserve_alloc(&mut inner, a.addr)?;
                    }
                    let p = RtPhys {
                        device: a.device,
                        _pad: 0,
                        offset: addr - device_addr(a.device, 0),
                    };
                    return Ok((p, a.serial));
                }
                return Err(Error::invalid(format!(
                    "{what} range 0x{addr:x}..+{len} runs past the end of allocation 0x{:x} \
                     ({} bytes) on device {}: it starts at offset {} and needs {len} bytes, \
                     but only {} are left",
                    a.addr,
                    a.size,
                    a.device,
                    addr - a.addr,
                    aend - addr
                )));
            }
        }
        if let Some((&start, i)) = inner.imports.range(..=addr).next_back() {
            let iend = start + i.size;
            if addr < iend {
                if end.is_some_and(|e| e <= iend) {
                    let p = RtPhys {
                        device: i.device,
                        _pad: 0,
                        offset: addr - device_addr(i.device, 0),
                    };
                    return Ok((p, i.serial));
                }
                return Err(Error::invalid(format!(
                    "{what} range 0x{addr:x}..+{len} runs past the end of the imported IPC \
                     memory 0x{start:x} ({} bytes) on device {}: only {} bytes are left",
                    i.size,
                    i.device,
                    iend - addr
                )));
            }
        }
        if let Some((&va, m)) = inner.maps.range(..=addr).next_back() {
            let mend = va + m.size;
            if addr < mend || (addr == mend && len == 0) {
                if end.is_some_and(|e| e <= mend) {
                    let p = RtPhys {
                        device: m.phys.device,
                        _pad: 0,
                        offset: m.phys.offset + (addr - va),
                    };
                    return Ok((p, m.serial));
                }
                return Err(Error::invalid(format!(
                    "{what} range 0x{addr:x}..+{len} runs past the end of the mapped virtual \
                     range 0x{va:x} ({} bytes, physical handle {} on device {}): only {} \
                     bytes are left",
                    m.size,
                    m.handle,
                    m.phys.device,
                    mend - addr
                )));
            }
        }
        Err(Error::invalid(format!(
            "{what} address 0x{addr:x} (length {len}) is not usable device memory: {}",
            self.what_is(&inner, addr, false)
        )))
    }

    /// Check that `[addr, addr+len)` lies inside one live allocation of this process (or a
    /// mapped VMM range) and return the alias pointer to its first byte. `what` names the
    /// argument in the message ("dst", "src", "devPtr"). Out of bounds, freed or unknown
    /// memory is `ACL_ERROR_INVALID_PARAM` with the address, the allocation and its size.
    pub fn check(&self, addr: u64, len: u64, what: &str) -> Result<*mut u8> {
        let (p, _) = self.resolve(addr, len, what)?;
        Ok(self.alias_ptr(p.device, p.offset))
    }

    /// Like [`Node::check`], giving the physical location instead.
    pub fn phys(&self, addr: u64, len: u64, what: &str) -> Result<RtPhys> {
        Ok(self.resolve(addr, len, what)?.0)
    }

    /// Like [`Node::phys`], with the serial of the allocation (or VMM mapping) holding the
    /// range: an operation queued with a buffer checks at run time that the same serial
    /// still holds it (not freed, not freed and allocated again at the same address).
    pub fn phys_serial(&self, addr: u64, len: u64, what: &str) -> Result<(RtPhys, u64)> {
        self.resolve(addr, len, what)
    }

    /// Whether `[phys.offset, +len)` of `phys.device` lies wholly in slabs held by process
    /// `pid` on this node: what a peer's published buffer is checked against before this
    /// process reads or writes it. A forged or damaged offset pointing into another
    /// process's memory (or nobody's) fails this.
    pub fn held_by(&self, pid: u32, phys: RtPhys, len: u64) -> bool {
        if len == 0 {
            return true;
        }
        let slab = self.sh.slab_size;
        let Some(end) = phys.offset.checked_add(len) else {
            return false;
        };
        if phys.device >= self.sh.devices || end > self.sh.nslabs * slab {
            return false;
        }
        let mut last = None;
        (phys.offset / slab..=(end - 1) / slab).all(|s| {
            let Some(o) = self.sh.slab_owner(phys.device, s * slab) else {
                return false;
            };
            if last == Some(o) {
                return true;
            }
            last = Some(o);
            self.sh.proc(o).pid.load(Ordering::SeqCst) == pid
        })
    }

    /// Alias pointer for a physical range (any process's memory; HCCL peers). `None` if
    /// the range leaves the device's HBM.
    pub fn phys_to_host(&self, phys: RtPhys, len: u64) -> Option<*mut u8> {
        if phys.device >= self.sh.devices {
            return None;
        }
        let end = phys.offset.checked_add(len)?;
        (end <= self.sh.hbm_size).then(|| self.alias_ptr(phys.device, phys.offset))
    }

    /// `(free, total)` bytes of physical device `device`, counting every live process.
    pub fn mem_info(&self, device: u32) -> (u64, u64) {
        if device >= self.sh.devices {
            return (0, 0);
        }
        let total = self.sh.hbm_size;
        let slots = self.sh.live_slots().unwrap_or_default();
        let used: u64 = slots
            .iter()
            .map(|&s| self.sh.proc(s).bytes[device as usize].load(Ordering::SeqCst))
            .sum();
        (total.saturating_sub(used), total)
    }

    /// Usage of every live process on the node (dead ones are reclaimed first).
    pub fn usage(&self) -> Vec<ProcessUsage> {
        let mut out: Vec<ProcessUsage> = Vec::new();
        for s in self.sh.live_slots().unwrap_or_default() {
            let e = self.sh.proc(s);
            let pid = e.pid.load(Ordering::SeqCst);
            let bytes: Vec<u64> = (0..self.sh.devices as usize)
                .map(|d| e.bytes[d].load(Ordering::SeqCst))
                .collect();
            match out.iter_mut().find(|u| u.pid == pid) {
                Some(u) => u.bytes.iter_mut().zip(&bytes).for_each(|(a, b)| *a += b),
                None => out.push(ProcessUsage {
                    pid,
                    name: self.sh.comm(s),
                    bytes,
                }),
            }
        }
        out.sort_by_key(|u| u.pid);
        out
    }

    /// Describe what a host access at `addr` hit, for the fault handler: "inside
    /// allocation 0x… (N bytes) on device D at offset K (allocated by this process)" and
    /// similar. Never blocks: `None` if another thread holds this node's state (or `addr`
    /// is outside the canonical ranges). Allocates, so call it only on the way to dying.
    pub fn describe_addr(&self, addr: u64) -> Option<String> {
        if !crate::memory::is_canonical(addr) {
            return None;
        }
        let inner = self.inner.try_lock()?;
        if let Some((_, a)) = inner.allocs.range(..=addr).next_back() {
            if addr < a.addr + a.size {
                return Some(format!(
                    "inside allocation 0x{:x} ({} bytes) on device {} at offset {} (allocated \
                     by this process)",
                    a.addr,
                    a.size,
                    a.device,
                    addr - a.addr
                ));
            }
        }
        let s = self.what_is(&inner, addr, false);
        Some(s.strip_prefix("it is ").unwrap_or(&s).to_string())
    }

    // ----- virtual memory management (aclrtReserveMemAddress & co.) -----

    /// Allocation granularity of the VMM family: sizes passed to [`Node::reserve_va`] and
    /// [`Node::alloc_physical`] must be multiples of it (2 MiB).
    pub fn granularity(&self) -> u64 {
        VMM_GRANULARITY
    }

    /// Reserve `size` bytes of device virtual address space (`aclrtReserveMemAddress`).
    /// `size` must be a non-zero multiple of [`Node::granularity`]; `align` is 0 (meaning
    /// the granularity) or a power of two. The address comes from the node's VMM range
    /// (starting at [`VMM_BASE`]) through a counter shared by every process of the node, so
    /// it is unique within the node, and is reserved without access in this process (host
    /// dereferences fault like any device address). Nothing is mapped until [`Node::map`].
    pub fn reserve_va(&self, size: u64, align: u64) -> Result<u64> {
        let g = VMM_GRANULARITY;
        if size == 0 || !size.is_multiple_of(g) {
            return Err(Error::invalid(format!(
                "size {size} is not a positive multiple of the granularity {g}"
            )));
        }
        if align != 0 && !align.is_power_of_two() {
            return Err(Error::invalid(format!(
                "alignment {align} is not 0 or a power of two"
            )));
        }
        let align = align.max(g);
        let mut inner = self.inner.lock();
        loop {
            // Take the next range from the shared counter (leaving one granule as a guard).
            let va = {
                let _l = self.sh.lock()?;
                let next = self.sh.vmm_next().load(Ordering::SeqCst);
                let va = (VMM_BASE + next).next_multiple_of(align);
                if va.checked_add(size).is_none_or(|e| e > VMM_BASE + VMM_SIZE) {
                    return Err(Error::new(
                        ACL_ERROR_RT_MEMORY_ALLOCATION,
                        format!(
                            "cannot reserve {size} bytes of virtual address space: the node's \
                             {VMM_SIZE}-byte range at 0x{VMM_BASE:x} is used up"
                        ),
                    ));
                }
                self.sh
                    .vmm_next()
                    .store(va + size + g - VMM_BASE, Ordering::SeqCst);
                va
            };
            match reserve_fixed(va, size) {
                Ok(()) => {
                    inner.vas.insert(va, size);
                    return Ok(va);
                }
                // Taken in this process (another node opened here); try the next range.
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                Err(e) => {
                    return Err(Error::new(
                        ACL_ERROR_RT_MEMORY_ALLOCATION,
                        format!("cannot reserve {size} bytes of address space at 0x{va:x}: {e}"),
                    ))
                }
            }
        }
    }

    /// Release a range from [`Node::reserve_va`] (`aclrtReleaseMemAddress`). `va` must be
    /// the start of a reservation of this process with nothing mapped in it.
    pub fn release_va(&self, va: u64) -> Result<()> {
        let mut inner = self.inner.lock();
        let Some(&size) = inner.vas.get(&va) else {
            return Err(Error::invalid(format!(
                "virPtr 0x{va:x} is not the start of an address range reserved by this process: \
                 {}",
                self.what_is(&inner, va, false)
            )));
        };
        if let Some((&m, mm)) = inner.maps.range(va..va + size).next() {
            return Err(Error::invalid(format!(
                "virPtr 0x{va:x}: the range still has memory mapped at 0x{m:x} ({} bytes); \
                 unmap it with aclrtUnmapMem first",
                mm.size
            )));
        }
        inner.vas.remove(&va);
        // SAFETY: we reserved exactly this range.
        unsafe { libc::munmap(va as *mut libc::c_void, size as usize) };
        Ok(())
    }

    /// Allocate `size` bytes of physical HBM on `device` (`aclrtMallocPhysical`), backed and
    /// counted like [`Node::alloc`] but not reachable through any device address until
    /// [`Node::map`]. `size` must be a non-zero multiple of [`Node::granularity`].
    pub fn alloc_physical(&self, device: u32, size: u64) -> Result<PhysHandleInfo> {
        self.check_device(device, "alloc_physical")?;
        self.check_owner()?;
        let g = VMM_GRANULARITY;
        if size == 0 || !size.is_multiple_of(g) {
            return Err(Error::invalid(format!(
                "size {size} is not a positive multiple of the granularity {g}"
            )));
        }
        if size > self.sh.hbm_size {
            return Err(Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "out of memory on device {device}: cannot allocate {size} bytes of physical \
                     memory, more than the device's {} bytes of HBM",
                    self.sh.hbm_size
                ),
            ));
        }
        let mut inner = self.inner.lock();
        let off = match self.take(&mut inner, device, size, ALIGN, false) {
            Err(e) if e.code == ACL_ERROR_RT_MEMORY_ALLOCATION && self.settle(&mut inner) => {
                self.take(&mut inner, device, size, ALIGN, false)?
            }
            r => r?,
        };
        let id = inner.next_handle;
        inner.next_handle += 1;
        let info = PhysHandleInfo {
            id,
            device,
            size,
            phys: RtPhys {
                device,
                _pad: 0,
                offset: off,
            },
        };
        inner.handles.insert(
            id,
            Handle {
                info,
                maps: 0,
                imported: false,
            },
        );
        self.bytes_add(device, size);
        Ok(info)
    }

    /// Free a physical allocation (`aclrtFreePhysical`). It must not be mapped anywhere.
    pub fn free_physical(&self, handle: u64) -> Result<()> {
        self.check_owner()?;
        let mut inner = self.inner.lock();
        let h = match inner.handles.get(&handle) {
            None => {
                return Err(Error::invalid(format!(
                    "handle {handle} is not a live physical allocation of this process \
                     (already freed, or never returned by aclrtMallocPhysical)"
                )))
            }
            Some(h) if h.maps > 0 => {
                return Err(Error::invalid(format!(
                    "handle {handle} ({} bytes on device {}) is still mapped {} time(s); unmap \
                     it with aclrtUnmapMem first",
                    h.info.size, h.info.device, h.maps
                )))
            }
            Some(h) => *h,
        };
        inner.handles.remove(&handle);
        if h.imported {
            return Ok(());
        }
        self.give_freed(&mut inner, h.info.device, h.info.phys.offset, h.info.size);
        self.bytes_sub(h.info.device, h.info.size);
        Ok(())
    }

    /// Map `[offset, offset+size)` of physical allocation `handle` at `[va, va+size)`
    /// (`aclrtMapMem`). The range must lie inside one reservation of this process and not
    /// overlap another mapping; `size` must be non-zero and the physical range inside the
    /// handle. Afterwards [`Node::check`] and [`Node::phys`] resolve the range to the
    /// handle's pages (host dereferences of `va` still fault, as for any device address).
    pub fn map(&self, va: u64, size: u64, offset: u64, handle: u64) -> Result<()> {
        let mut inner = self.inner.lock();
        let Some(h) = inner.handles.get(&handle).copied() else {
            return Err(Error::invalid(format!(
                "handle {handle} is not a live physical allocation of this process"
            )));
        };
        if size == 0 || offset.checked_add(size).is_none_or(|e| e > h.info.size) {
            return Err(Error::invalid(format!(
                "size {size} at offset {offset} does not fit in physical handle {handle} of {} \
                 bytes (expected 0 < size and offset + size <= {})",
                h.info.size, h.info.size
            )));
        }
        let inside = inner
            .vas
            .range(..=va)
            .next_back()
            .is_some_and(|(&r, &rs)| va.checked_add(size).is_some_and(|e| e <= r + rs));
        if !inside {
            return Err(Error::invalid(format!(
                "virPtr 0x{va:x} with size {size} is not inside one address range reserved by \
                 this process with aclrtReserveMemAddress"
            )));
        }
        let prev = inner
            .maps
            .range(..va + size)
            .next_back()
            .map(|(&m, mm)| (m, mm.size));
        if let Some((m, ms)) = prev {
            if m + ms > va {
                return Err(Error::invalid(format!(
                    "virPtr 0x{va:x} with size {size} overlaps the mapping at 0x{m:x} ({ms} \
                     bytes); unmap it first"
                )));
            }
        }
        let phys = RtPhys {
            device: h.info.device,
            _pad: 0,
            offset: h.info.phys.offset + offset,
        };
        inner.next_serial += 1;
        let serial = inner.next_serial;
        inner.maps.insert(
            va,
            VaMap {
                serial,
                size,
                handle,
                offset,
                phys,
            },
        );
        inner.handles.get_mut(&handle).expect("handle present").maps += 1;
        Ok(())
    }

    /// The mapping containing `va`: (start, physical handle id, offset in the handle, size).
    pub fn mapping_at(&self, va: u64) -> Option<(u64, u64, u64, u64)> {
        let inner = self.inner.lock();
        let (&start, m) = inner.maps.range(..=va).next_back()?;
        (va < start + m.size).then_some((start, m.handle, m.offset, m.size))
    }

    /// Unmap the mapping starting at `va` (`aclrtUnmapMem`).
    pub fn unmap(&self, va: u64) -> Result<()> {
        let mut inner = self.inner.lock();
        let Some(m) = inner.maps.remove(&va) else {
            return Err(Error::invalid(format!(
                "virPtr 0x{va:x} is not the start of a mapping of this process: {}",
                self.what_is(&inner, va, false)
            )));
        };
        if let Some(h) = inner.handles.get_mut(&m.handle) {
            h.maps -= 1;
        }
        let _ = m.offset;
        Ok(())
    }
}

#[cfg(test)]
impl Node {
    /// Overwrite the owner word of the slab holding byte `off` of device `d` (tests of
    /// damaged node files).
    pub(crate) fn damage_slab_owner(&self, d: u32, off: u64, word: u32) {
        self.sh
            .slab(d, off / self.sh.slab_size)
            .store(word, Ordering::SeqCst);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            return; // a fork child: the slot and slabs are the parent's
        }
        {
            // Let the punch thread finish what it has and exit.
            let mut inner = self.inner.lock();
            self.settle(&mut inner);
            inner.punch_stop = true;
            self.punch.work.notify_all();
            while inner.punch_thread {
                self.punch.done.wait(&mut inner);
            }
            // Host memory must not keep aliasing HBM that goes back to the node.
            Self::unmap_all_hosts(&mut inner);
        }
        if let Ok(g) = self.sh.lock() {
            self.sh.release_slot_slabs(self.slot);
            self.sh.clear_slot(self.slot);
            drop(g);
        }
        let inner = self.inner.lock();
        for (&va, &size) in &inner.vas {
            // SAFETY: ranges this node reserved.
            unsafe { libc::munmap(va as *mut libc::c_void, size as usize) };
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
