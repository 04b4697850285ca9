//! The files of a node directory and the cross-process state in them.
//!
//! ```text
//! <node_dir>/lock       empty; flock(LOCK_EX) serialises every change to the files below
//!                       (the kernel drops the lock when its holder dies)
//! <node_dir>/header     4 KiB: magic, layout version, devices, HBM size, slab size, SoC,
//!                       the VMM address counter
//! <node_dir>/procs      MAX_PROCS process slots: pid, start time, command, bytes per device
//! <node_dir>/slabs.<d>  one u32 per slab of device d: 0 = free, else owner slot + 1
//! <node_dir>/hbm.<d>    the HBM of device d: a sparse file of hbm_size bytes
//! ```
//!
//! The header is written by the first process (under the lock, magic last, so a process
//! that dies half way leaves a directory the next one initialises again). A process slot is
//! dead when its pid is gone, is a zombie, or belongs to a process with another start time
//! (pid reuse); whoever scans the table under the lock frees a dead slot's slabs (punching
//! holes in the HBM files to give the RAM back) and clears the slot.

use crate::codes::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_MEMORY_ALLOCATION};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::memory::MAX_DEVICES;
use npu_emu_ffi::os;
pub use npu_emu_ffi::os::Mapping;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// First bytes of a valid header.
pub const MAGIC: [u8; 8] = *b"NPUEMU\0\x01";
/// Bump when the layout of the node files changes.
pub const LAYOUT_VERSION: u32 = 1;
/// Process slots in the table.
pub const MAX_PROCS: usize = 1024;
const HEADER_BYTES: usize = 4096;
const SOC_BYTES: usize = 64;

#[repr(C)]
struct Header {
    magic: [u8; 8],
    layout: u32,
    devices: u32,
    hbm_size: u64,
    slab_size: u64,
    soc: [u8; SOC_BYTES],
    /// Next free offset in the VMM range (bytes from `VMM_BASE`).
    vmm_next: AtomicU64,
}

/// One process slot. `pid == 0` means free.
#[repr(C)]
pub struct ProcEntry {
    pub pid: AtomicU32,
    /// Inode of the process's pid namespace (`/proc/self/ns/pid`; 0 = unknown). A process
    /// in another pid namespace (a container sharing /dev/shm) cannot be checked through
    /// our /proc, so it is never taken for dead.
    pub pidns: AtomicU32,
    pub start_time: AtomicU64,
    pub comm: [AtomicU64; 2],
    pub bytes: [AtomicU64; MAX_DEVICES as usize],
}

/// Map the first `len` bytes of `file` (at `path`, for the message) shared and read-write.
pub fn map(file: &File, len: usize, path: &Path) -> Result<Mapping> {
    Mapping::map(file, len).map_err(|e| {
        Error::new(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("cannot map {} ({len} bytes): {e}", path.display()),
        )
    })
}

/// An error for a failed system call, with `errno` text.
pub fn os_err(what: &str) -> Error {
    Error::new(
        ACL_ERROR_RT_INTERNAL_ERROR,
        format!("{what}: {}", io::Error::last_os_error()),
    )
}

/// The node's shared files, mapped.
pub struct Shared {
    pub dir: PathBuf,
    lock: File,
    /// flock excludes other processes only (threads share the open file description, and
    /// one thread's unlock would release it for all), so threads also take this mutex.
    local: parking_lot::Mutex<()>,
    /// Our pid namespace (see [`ProcEntry::pidns`]).
    pidns: u32,
    header: Mapping,
    procs: Mapping,
    slabs: Vec<Mapping>,
    /// HBM backing file per device.
    pub hbm: Vec<File>,
    pub devices: u32,
    pub hbm_size: u64,
    pub slab_size: u64,
    pub nslabs: u64,
    pub soc: String,
}

/// Holds the node lock (and the process-local mutex); unlocks on drop.
pub struct LockGuard<'a> {
    file: &'a File,
    /// Released after the flock (fields drop after `drop` runs).
    _local: Option<parking_lot::MutexGuard<'a, ()>>,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: plain flock on our own descriptor.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

fn flock<'a>(f: &'a File, local: Option<parking_lot::MutexGuard<'a, ()>>) -> Result<LockGuard<'a>> {
    loop {
        // SAFETY: plain flock on our own descriptor.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(LockGuard {
                file: f,
                _local: local,
            });
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Err(os_err("cannot lock the node (flock)"));
        }
    }
}

fn open_file(path: &Path, create: bool) -> Result<File> {
    os::open_rw(path, create).map_err(|e| {
        Error::new(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("cannot open {}: {e}", path.display()),
        )
    })
}

fn set_len(f: &File, len: u64, path: &Path) -> Result<()> {
    f.set_len(len).map_err(|e| {
        Error::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("cannot size {} to {len} bytes: {e}", path.display()),
        )
    })
}

/// Slab size for an HBM of `hbm` bytes: 64 MiB for big devices, smaller for small ones so a
/// small device still has at least 32 slabs to share between processes; never below 2 MiB.
pub fn slab_size_for(hbm: u64) -> u64 {
    let mut s = 64u64 << 20;
    while s > 2 << 20 && hbm / s < 32 {
        s /= 2;
    }
    s
}

impl Shared {
    /// Create or join the node in `cfg.node_dir`. Returns the state and the warnings to log
    /// (settings of this process that differ from the node's header).
    pub fn open(cfg: &Config) -> Result<(Shared, Vec<String>)> {
        let dir = cfg.node_dir.clone();
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!(
                    "cannot create the node directory {} (NPU_EMU_NODE_DIR): {e}",
                    dir.display()
                ),
            ));
        }
        let lock = open_file(&dir.join("lock"), true)?;
        let guard = flock(&lock, None)?;
        let hpath = dir.join("header");
        let hfile = open_file(&hpath, true)?;
        let hlen = hfile.metadata().map(|m| m.len()).unwrap_or(0);
        let header = if hlen as usize >= HEADER_BYTES {
            map(&hfile, HEADER_BYTES, &hpath)?
        } else {
            set_len(&hfile, HEADER_BYTES as u64, &hpath)?;
            map(&hfile, HEADER_BYTES, &hpath)?
        };
        // SAFETY: the mapping is HEADER_BYTES long, larger than Header.
        let h = unsafe { &mut *(header.ptr() as *mut Header) };
        let mut warnings = Vec::new();
        let fresh = h.magic != MAGIC;
        if fresh {
            h.magic = [0; 8];
            h.layout = LAYOUT_VERSION;
            h.devices = cfg.devices;
            h.hbm_size = cfg.hbm_size;
            h.slab_size = slab_size_for(cfg.hbm_size);
            let soc = cfg.soc_name.as_bytes();
            let n = soc.len().min(SOC_BYTES - 1);
            h.soc = [0; SOC_BYTES];
            h.soc[..n].copy_from_slice(&soc[..n]);
            h.vmm_next.store(0, Ordering::SeqCst);
        } else if h.layout != LAYOUT_VERSION {
            return Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!(
                    "node directory {} has layout version {}, this library uses {}: it was \
                     made by another npu-emu version; remove it when no process uses it, or \
                     set NPU_EMU_NODE_DIR to another directory",
                    dir.display(),
                    h.layout,
                    LAYOUT_VERSION
                ),
            ));
        }
        if h.devices == 0
            || h.devices > MAX_DEVICES
            || h.slab_size == 0
            || h.hbm_size < h.slab_size
            || h.hbm_size > crate::config::MAX_HBM_SIZE
        {
            return Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!(
                    "node header {} is corrupt (devices {}, HBM size {}, slab size {}); \
                     remove the directory when no process uses it",
                    hpath.display(),
                    h.devices,
                    h.hbm_size,
                    h.slab_size
                ),
            ));
        }
        let soc_len = h.soc.iter().position(|&b| b == 0).unwrap_or(SOC_BYTES);
        let soc = String::from_utf8_lossy(&h.soc[..soc_len]).into_owned();
        if !fresh {
            let d = dir.display();
            if cfg.devices != h.devices {
                warnings.push(format!(
                    "NPU_EMU_DEVICES asks for {} devices but node {d} has {}; using {}",
                    cfg.devices, h.devices, h.devices
                ));
            }
            if cfg.hbm_size != h.hbm_size {
                warnings.push(format!(
                    "NPU_EMU_HBM_SIZE asks for {} bytes but node {d} has {} bytes per device; \
                     using the node's size",
                    cfg.hbm_size, h.hbm_size
                ));
            }
            if cfg.soc_name != soc {
                warnings.push(format!(
                    "NPU_EMU_SOC asks for {} but node {d} is {soc}; using {soc}",
                    cfg.soc_name
                ));
            }
        }
        if !warnings.is_empty() {
            warnings.push(format!(
                "every process of a node shares its settings; to start a node with new ones, \
                 remove {} when no process uses it, or set NPU_EMU_NODE_DIR to another \
                 directory",
                dir.display()
            ));
        }
        let devices = h.devices;
        let hbm_size = h.hbm_size;
        let slab_size = h.slab_size;
        let nslabs = hbm_size / slab_size;

        let ppath = dir.join("procs");
        let pfile = open_file(&ppath, true)?;
        let plen = MAX_PROCS * std::mem::size_of::<ProcEntry>();
        if fresh {
            set_len(&pfile, 0, &ppath)?;
        }
        set_len(&pfile, plen as u64, &ppath)?;
        let procs = map(&pfile, plen, &ppath)?;
        let mut slabs = Vec::new();
        let mut hbm = Vec::new();
        for d in 0..devices {
            let spath = dir.join(format!("slabs.{d}"));
            let sfile = open_file(&spath, true)?;
            let slen = (nslabs as usize * 4).max(4);
            if fresh {
                set_len(&sfile, 0, &spath)?;
            }
            set_len(&sfile, slen as u64, &spath)?;
            slabs.push(map(&sfile, slen, &spath)?);
            let bpath = dir.join(format!("hbm.{d}"));
            let bfile = open_file(&bpath, true)?;
            if fresh {
                set_len(&bfile, 0, &bpath)?;
            }
            if bfile.metadata().map(|m| m.len()).unwrap_or(0) != hbm_size {
                set_len(&bfile, hbm_size, &bpath)?;
            }
            hbm.push(bfile);
        }
        if fresh {
            std::sync::atomic::fence(Ordering::SeqCst);
            h.magic = MAGIC;
        }
        drop(guard);
        let shared = Shared {
            dir,
            lock,
            local: parking_lot::Mutex::new(()),
            pidns: os::pid_namespace(),
            header,
            procs,
            slabs,
            hbm,
            devices,
            hbm_size,
            slab_size,
            nslabs,
            soc,
        };
        Ok((shared, warnings))
    }

    /// Take the node lock (cross-process; the kernel releases it if we die).
    pub fn lock(&self) -> Result<LockGuard<'_>> {
        flock(&self.lock, Some(self.local.lock()))
    }

    fn header(&self) -> &Header {
        // SAFETY: the header mapping is larger than Header and lives as long as self.
        unsafe { &*(self.header.ptr() as *const Header) }
    }

    /// The shared VMM counter (bytes from `VMM_BASE` handed out so far).
    pub fn vmm_next(&self) -> &AtomicU64 {
        &self.header().vmm_next
    }

    /// Process slot `i`.
    pub fn proc(&self, i: usize) -> &ProcEntry {
        assert!(i < MAX_PROCS);
        // SAFETY: the mapping holds MAX_PROCS entries; all fields are atomics or plain
        // integers only written under the lock.
        unsafe { &*(self.procs.ptr() as *const ProcEntry).add(i) }
    }

    /// Slab owner word of slab `s` of device `d` (0 free, else slot + 1).
    pub fn slab(&self, d: u32, s: u64) -> &AtomicU32 {
        assert!(s < self.nslabs);
        // SAFETY: the mapping holds nslabs u32 words.
        unsafe { &*(self.slabs[d as usize].ptr() as *const AtomicU32).add(s as usize) }
    }

    /// Whether slot `i` holds a live process. Call with the lock held.
    fn slot_alive(&self, i: usize) -> bool {
        let e = self.proc(i);
        let pid = e.pid.load(Ordering::SeqCst);
        if pid == 0 {
            return false;
        }
        os::process_alive(
            pid,
            e.start_time.load(Ordering::SeqCst),
            e.pidns.load(Ordering::SeqCst),
        )
    }

    /// Free the slabs and the slot of every dead process. Call with the lock held.
    /// Returns how many slots were reclaimed.
    pub fn reclaim_dead(&self, _guard: &LockGuard<'_>) -> usize {
        let mut dead = Vec::new();
        for i in 0..MAX_PROCS {
            if self.proc(i).pid.load(Ordering::SeqCst) != 0 && !self.slot_alive(i) {
                dead.push(i);
            }
        }
        for &i in &dead {
            self.release_slot_slabs(i);
            self.clear_slot(i);
        }
        dead.len()
    }

    /// Return every slab owned by slot `i` and punch its pages. Call with the lock held.
    pub fn release_slot_slabs(&self, i: usize) {
        let owner = i as u32 + 1;
        for d in 0..self.devices {
            let mut s = 0;
            while s < self.nslabs {
                if self.slab(d, s).load(Ordering::SeqCst) != owner {
                    s += 1;
                    continue;
                }
                let first = s;
                while s < self.nslabs && self.slab(d, s).load(Ordering::SeqCst) == owner {
                    self.slab(d, s).store(0, Ordering::SeqCst);
                    s += 1;
                }
                self.punch(d, first * self.slab_size, (s - first) * self.slab_size);
            }
        }
    }

    /// Clear slot `i`. Call with the lock held.
    pub fn clear_slot(&self, i: usize) {
        let e = self.proc(i);
        for b in &e.bytes {
            b.store(0, Ordering::SeqCst);
        }
        e.comm[0].store(0, Ordering::SeqCst);
        e.comm[1].store(0, Ordering::SeqCst);
        e.start_time.store(0, Ordering::SeqCst);
        e.pidns.store(0, Ordering::SeqCst);
        e.pid.store(0, Ordering::SeqCst);
    }

    /// Register this process in a free slot (reclaiming dead ones first).
    pub fn register(&self) -> Result<usize> {
        let g = self.lock()?;
        self.reclaim_dead(&g);
        let pid = std::process::id();
        let start = os::process_start_time(pid).unwrap_or(0);
        let comm = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
        let mut cb = [0u8; 16];
        let c = comm.trim().as_bytes();
        let n = c.len().min(15);
        cb[..n].copy_from_slice(&c[..n]);
        for i in 0..MAX_PROCS {
            let e = self.proc(i);
            if e.pid.load(Ordering::SeqCst) == 0 {
                self.clear_slot(i);
                e.start_time.store(start, Ordering::SeqCst);
                e.pidns.store(self.pidns, Ordering::SeqCst);
                e.comm[0].store(
                    u64::from_le_bytes(cb[..8].try_into().unwrap()),
                    Ordering::SeqCst,
                );
                e.comm[1].store(
                    u64::from_le_bytes(cb[8..].try_into().unwrap()),
                    Ordering::SeqCst,
                );
                e.pid.store(pid, Ordering::SeqCst);
                return Ok(i);
            }
        }
        Err(Error::new(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!(
                "node {} already has {MAX_PROCS} live processes; no slot is free",
                self.dir.display()
            ),
        ))
    }

    /// Command name stored in slot `i`.
    pub fn comm(&self, i: usize) -> String {
        let e = self.proc(i);
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&e.comm[0].load(Ordering::SeqCst).to_le_bytes());
        b[8..].copy_from_slice(&e.comm[1].load(Ordering::SeqCst).to_le_bytes());
        let n = b.iter().position(|&c| c == 0).unwrap_or(16);
        String::from_utf8_lossy(&b[..n]).into_owned()
    }

    /// Live slots (after reclaiming dead ones), with the lock taken inside.
    pub fn live_slots(&self) -> Result<Vec<usize>> {
        let g = self.lock()?;
        self.reclaim_dead(&g);
        Ok((0..MAX_PROCS)
            .filter(|&i| self.proc(i).pid.load(Ordering::SeqCst) != 0)
            .collect())
    }

    /// Find `n` contiguous free slabs on device `d`, mark them owned by `slot`, and return the
    /// first one. Dead processes are reclaimed when no run is free.
    pub fn take_slabs(&self, d: u32, n: u64, slot: usize) -> Result<Option<u64>> {
        let g = self.lock()?;
        for attempt in 0..2 {
            if let Some(first) = self.find_free_run(d, n) {
                for s in first..first + n {
                    self.slab(d, s).store(slot as u32 + 1, Ordering::SeqCst);
                }
                return Ok(Some(first));
            }
            if attempt == 0 && self.reclaim_dead(&g) == 0 {
                break;
            }
        }
        Ok(None)
    }

    fn find_free_run(&self, d: u32, n: u64) -> Option<u64> {
        let mut run = 0;
        for s in 0..self.nslabs {
            if self.slab(d, s).load(Ordering::SeqCst) == 0 {
                run += 1;
                if run == n {
                    return Some(s + 1 - n);
                }
            } else {
                run = 0;
            }
        }
        None
    }

    /// Give slabs `[first, first+n)` of device `d` back (punching their pages).
    pub fn release_slabs(&self, d: u32, first: u64, n: u64) {
        let _g = self.lock();
        self.punch(d, first * self.slab_size, n * self.slab_size);
        for s in first..first + n {
            self.slab(d, s).store(0, Ordering::SeqCst);
        }
    }

    /// Owner slot of the slab holding byte `off` of device `d`, if owned.
    pub fn slab_owner(&self, d: u32, off: u64) -> Option<usize> {
        if d >= self.devices || off / self.slab_size >= self.nslabs {
            return None;
        }
        match self.slab(d, off / self.slab_size).load(Ordering::SeqCst) {
            0 => None,
            o => Some(o as usize - 1),
        }
    }

    /// Reserve backing pages for `[off, off+len)` of device `d`'s HBM file.
    pub fn reserve(&self, d: u32, off: u64, len: u64) -> io::Result<()> {
        let (a, b) = (off & !4095, (off + len + 4095) & !4095);
        let fd = self.hbm[d as usize].as_raw_fd();
        loop {
            // SAFETY: fallocate on our own descriptor.
            let r = unsafe { libc::fallocate(fd, 0, a as libc::off_t, (b - a) as libc::off_t) };
            if r == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // A file system without fallocate: nothing to reserve with.
                Some(libc::EOPNOTSUPP) => return Ok(()),
                _ => return Err(e),
            }
        }
    }

    /// Give the pages wholly inside `[off, off+len)` of device `d` back to the system.
    pub fn punch(&self, d: u32, off: u64, len: u64) {
        let a = (off + 4095) & !4095;
        let b = (off + len) & !4095;
        if b <= a {
            return;
        }
        let fd = self.hbm[d as usize].as_raw_fd();
        // SAFETY: fallocate on our own descriptor.
        unsafe {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                a as libc::off_t,
                (b - a) as libc::off_t,
            )
        };
    }
}
