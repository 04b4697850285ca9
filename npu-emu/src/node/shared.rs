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

use crate::codes::{
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_NO_PERMISSION,
};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::memory::MAX_DEVICES;
use npu_emu_ffi::os;
pub use npu_emu_ffi::os::Mapping;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
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
    Mapping::map(file, len).map_err(|e| map_error(e, len, path))
}

/// Map device `device`'s HBM file: 17 pages further from an 8 MiB boundary per device
/// ([`Mapping::map_placed`] says why), so the same offset in two devices' memory is never
/// the same address modulo a large power of two.
pub fn map_hbm(file: &File, len: usize, path: &Path, device: u32) -> Result<Mapping> {
    let skew = (device as usize * 17 * 4096) % npu_emu_ffi::os::PLACE_ALIGN;
    Mapping::map_placed(file, len, skew).map_err(|e| map_error(e, len, path))
}

fn map_error(e: std::io::Error, len: usize, path: &Path) -> Error {
    Error::new(
        ACL_ERROR_RT_INTERNAL_ERROR,
        format!("cannot map {} ({len} bytes): {e}", path.display()),
    )
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
    /// The files behind `procs` and `slabs` (with their paths), to back their pages again
    /// ([`Shared::back_tables`]) after a reaper gave them back ([`Shared::release_tables`]).
    table_files: Vec<(File, PathBuf)>,
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

fn cpath(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::invalid(format!("node path {} contains a NUL", path.display())))
}

/// What to do about a node directory that is not safely ours.
fn not_yours(dir: &Path) -> String {
    format!(
        "remove {} (as its owner, or as root) or set NPU_EMU_NODE_DIR to a directory of your \
         own; a node directory must belong to you and be accessible to no one else, because \
         whoever can open its files can read and change your device memory",
        dir.display()
    )
}

fn refuse(msg: String) -> Error {
    Error::new(ACL_ERROR_RT_NO_PERMISSION, msg)
}

/// `fstat` of an open descriptor.
fn fstat(fd: i32, path: &Path) -> Result<libc::stat> {
    // SAFETY: an all-zero stat (plain integers) is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes only into `st`, valid for writes; a bad fd is an error return.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(os_err(&format!("cannot stat {}", path.display())));
    }
    Ok(st)
}

/// Open the node directory, creating it (mode 0700) when missing, and check that it is a
/// directory (not a symbolic link) owned by this user and writable by no one else. A
/// directory of ours that others may only read or enter (made by `mkdir` with the usual
/// umask, or by an older npu-emu) is tightened to 0700: nobody else could have put anything
/// in it, and every file in it is checked when opened.
pub fn open_dir(dir: &Path) -> Result<OwnedFd> {
    open_dir_with(dir, true)
}

/// [`open_dir`] for a node directory that must exist already (the reaper's: it never
/// makes a node, and one removed under it stays removed).
pub fn open_existing_dir(dir: &Path) -> Result<OwnedFd> {
    open_dir_with(dir, false)
}

fn open_dir_with(dir: &Path, create: bool) -> Result<OwnedFd> {
    let c = cpath(dir)?;
    if create && std::fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        // SAFETY: valid C string.
        if unsafe { libc::mkdir(c.as_ptr(), 0o700) } != 0
            && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
        {
            return Err(os_err(&format!(
                "cannot create the node directory {} (NPU_EMU_NODE_DIR)",
                dir.display()
            )));
        }
    }
    // SAFETY: valid C string; the descriptor is owned by the OwnedFd below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => refuse(format!(
                "the node directory {} is a symbolic link or not a directory; {}",
                dir.display(),
                not_yours(dir)
            )),
            Some(libc::EACCES) => refuse(format!(
                "cannot open the node directory {}: {e}; it belongs to another user: {}",
                dir.display(),
                not_yours(dir)
            )),
            _ => os_err(&format!("cannot open the node directory {}", dir.display())),
        });
    }
    // SAFETY: fd is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let st = fstat(fd.as_raw_fd(), dir)?;
    // SAFETY: plain syscall.
    let me = unsafe { libc::geteuid() };
    if st.st_uid != me {
        return Err(refuse(format!(
            "the node directory {} belongs to uid {}, not to this user (uid {me}): another \
             user may have made it to read or change your device memory; {}",
            dir.display(),
            st.st_uid,
            not_yours(dir)
        )));
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(format!(
            "the node directory {} (mode {mode:04o}) is writable by other users, who may have \
             put files of theirs in it; {}",
            dir.display(),
            not_yours(dir)
        )));
    }
    // SAFETY: fchmod on our own descriptor.
    if mode & 0o077 != 0 && unsafe { libc::fchmod(fd.as_raw_fd(), 0o700) } != 0 {
        return Err(os_err(&format!(
            "cannot make the node directory {} private (chmod 700)",
            dir.display()
        )));
    }
    Ok(fd)
}

/// Check that an open node file is a regular file of this user that no one else may use.
pub fn check_file(fd: i32, path: &Path, dir: &Path) -> Result<()> {
    let st = fstat(fd, path)?;
    // SAFETY: plain syscall.
    let me = unsafe { libc::geteuid() };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(refuse(format!(
            "node file {} is not a regular file; {}",
            path.display(),
            not_yours(dir)
        )));
    }
    if st.st_uid != me {
        return Err(refuse(format!(
            "node file {} belongs to uid {}, not to this user (uid {me}); {}",
            path.display(),
            st.st_uid,
            not_yours(dir)
        )));
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o077 != 0 {
        return Err(refuse(format!(
            "node file {} (mode {mode:04o}) is accessible to other users, who may hold it \
             open; {}",
            path.display(),
            not_yours(dir)
        )));
    }
    Ok(())
}

/// Open file `name` of the node directory `dirfd` (`dir` for messages), never following a
/// symbolic link, creating it (mode 0600) when `create`; the file is checked with
/// [`check_file`].
pub fn open_in(dirfd: &OwnedFd, dir: &Path, name: &str, create: bool) -> Result<File> {
    let path = dir.join(name);
    let c = CString::new(name).map_err(|_| Error::invalid("node file name contains a NUL"))?;
    let flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let mut fd = -1;
    if create {
        // SAFETY: valid C string and directory descriptor.
        fd = unsafe {
            libc::openat(
                dirfd.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_CREAT | libc::O_EXCL,
                0o600,
            )
        };
        if fd < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            return Err(os_err(&format!("cannot create {}", path.display())));
        }
    }
    if fd < 0 {
        // SAFETY: as above.
        fd = unsafe { libc::openat(dirfd.as_raw_fd(), c.as_ptr(), flags) };
    }
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) => refuse(format!(
                "node file {} is a symbolic link; {}",
                path.display(),
                not_yours(dir)
            )),
            _ => os_err(&format!("cannot open {}", path.display())),
        });
    }
    // SAFETY: fd is a fresh descriptor we own.
    let f = unsafe { File::from_raw_fd(fd) };
    check_file(f.as_raw_fd(), &path, dir)?;
    Ok(f)
}

fn set_len(f: &File, len: u64, path: &Path) -> Result<()> {
    f.set_len(len).map_err(|e| {
        Error::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("cannot size {} to {len} bytes: {e}", path.display()),
        )
    })
}

/// Give `f` `len` bytes with every page backed now (`fallocate`), so touching its mapping
/// can never raise SIGBUS when the file system fills up later.
pub fn reserve_file(f: &File, len: u64, path: &Path) -> Result<()> {
    loop {
        // SAFETY: fallocate on our own descriptor.
        if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len as libc::off_t) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            // A file system without fallocate: size it; nothing can be reserved there.
            Some(libc::EOPNOTSUPP) => {
                if f.metadata().map(|m| m.len()).unwrap_or(0) < len {
                    set_len(f, len, path)?;
                }
                return Ok(());
            }
            _ => {
                return Err(Error::new(
                    ACL_ERROR_RT_MEMORY_ALLOCATION,
                    format!(
                        "cannot reserve {len} bytes for {}: {e}; the file system holding the \
                         node directory (usually /dev/shm) is full: free space there, enlarge \
                         it, or set NPU_EMU_NODE_DIR to another directory",
                        path.display()
                    ),
                ))
            }
        }
    }
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
        Self::open_with(cfg, true)
    }

    /// Join the node in `cfg.node_dir` only if it exists and is set up: what the reaper
    /// does. A reaper that started after the node was removed (its last process gone, the
    /// directory deleted by whoever made it) must not make it again.
    pub fn open_existing(cfg: &Config) -> Result<(Shared, Vec<String>)> {
        Self::open_with(cfg, false)
    }

    fn open_with(cfg: &Config, create: bool) -> Result<(Shared, Vec<String>)> {
        let dir = cfg.node_dir.clone();
        let dirfd = open_dir_with(&dir, create)?;
        let lock = open_in(&dirfd, &dir, "lock", create)?;
        let guard = flock(&lock, None)?;
        let hpath = dir.join("header");
        let hfile = open_in(&dirfd, &dir, "header", create)?;
        reserve_file(&hfile, HEADER_BYTES as u64, &hpath)?;
        let header = map(&hfile, HEADER_BYTES, &hpath)?;
        // SAFETY: the mapping is HEADER_BYTES long, larger than Header.
        let h = unsafe { &mut *(header.ptr() as *mut Header) };
        let mut warnings = Vec::new();
        let fresh = h.magic != MAGIC;
        if fresh && !create {
            return Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("node directory {} is not set up", dir.display()),
            ));
        }
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
        let pfile = open_in(&dirfd, &dir, "procs", create)?;
        let plen = MAX_PROCS * std::mem::size_of::<ProcEntry>();
        if fresh {
            // A fresh header means the node was never finished (its first process died
            // half way) or the header was damaged. Starting over throws away every slot
            // and slab owner and the device memory itself: never while a process uses it.
            let live = live_pids(&pfile, plen);
            if !live.is_empty() {
                return Err(Error::new(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!(
                        "node header {} is damaged (bad magic) while processes {live:?} use the \
                         node; it cannot be set up again under them: stop them, then remove {}",
                        hpath.display(),
                        dir.display()
                    ),
                ));
            }
            set_len(&pfile, 0, &ppath)?;
        }
        reserve_file(&pfile, plen as u64, &ppath)?;
        let procs = map(&pfile, plen, &ppath)?;
        let mut table_files = vec![(pfile, ppath.clone())];
        let mut slabs = Vec::new();
        let mut hbm = Vec::new();
        for d in 0..devices {
            let sname = format!("slabs.{d}");
            let spath = dir.join(&sname);
            let sfile = open_in(&dirfd, &dir, &sname, create)?;
            // Whole pages, so the reaper can give them back (`release_tables`).
            let slen = (nslabs as usize * 4).max(4).next_multiple_of(4096);
            if fresh {
                set_len(&sfile, 0, &spath)?;
            }
            reserve_file(&sfile, slen as u64, &spath)?;
            slabs.push(map(&sfile, slen, &spath)?);
            table_files.push((sfile, spath));
            let bname = format!("hbm.{d}");
            let bpath = dir.join(&bname);
            let bfile = open_in(&dirfd, &dir, &bname, create)?;
            if fresh {
                set_len(&bfile, 0, &bpath)?;
            }
            // Sparse: backing pages are reserved per allocation (`reserve`).
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
            table_files,
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

    /// Free the slabs and the slot of every dead process, and every slab whose owner word
    /// names no registered process (a damaged slab table would otherwise lose that capacity
    /// for good). Call with the lock held. Returns how many slots and stray slab runs were
    /// reclaimed.
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
        dead.len() + self.release_stray_slabs()
    }

    /// Free slabs owned by no registered slot (owner out of range, or a free slot: slabs
    /// are only ever taken by a registered slot under the lock). Call with the lock held.
    fn release_stray_slabs(&self) -> usize {
        let stray = |o: u32| {
            o != 0
                && (o as usize > MAX_PROCS
                    || self.proc(o as usize - 1).pid.load(Ordering::SeqCst) == 0)
        };
        let mut runs = 0;
        for d in 0..self.devices {
            let mut s = 0;
            while s < self.nslabs {
                if !stray(self.slab(d, s).load(Ordering::SeqCst)) {
                    s += 1;
                    continue;
                }
                let first = s;
                while s < self.nslabs && stray(self.slab(d, s).load(Ordering::SeqCst)) {
                    self.slab(d, s).store(0, Ordering::SeqCst);
                    s += 1;
                }
                self.punch(d, first * self.slab_size, (s - first) * self.slab_size);
                runs += 1;
            }
        }
        runs
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

    /// Back every page of the process table and the slab tables (`fallocate`, a no-op for
    /// pages backed already). Call with the lock held, before writing them.
    fn back_tables(&self) -> Result<()> {
        for (f, path) in &self.table_files {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            reserve_file(f, len, path)?;
        }
        Ok(())
    }

    /// Give the pages of the process and slab tables back to the system (they are all
    /// zero when no process is registered), and every page of device memory. Call with the
    /// lock held, only when no slot is registered: the next process to register backs the
    /// tables again under the lock, and owns no memory before it did.
    ///
    /// Device memory: a dead process's slabs were punched when it was reclaimed, but a
    /// process that died after it could still have stored into them in between (a rank
    /// stopped mid-collective, continued and killed, writing its last results into a peer's
    /// buffer whose memory had gone back already). Such pages belong to nobody; with
    /// nobody registered, none can be in use.
    pub fn release_tables(&self, _guard: &LockGuard<'_>) {
        for d in 0..self.devices {
            self.punch(d, 0, self.hbm_size);
        }
        for (f, _) in &self.table_files {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            // SAFETY: fallocate on our own descriptor.
            unsafe {
                libc::fallocate(
                    f.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    0,
                    len as libc::off_t,
                )
            };
        }
    }

    /// Register this process in a free slot (reclaiming dead ones first).
    pub fn register(&self) -> Result<usize> {
        let g = self.lock()?;
        // The tables may have been given back by the node's reaper since we opened it.
        self.back_tables()?;
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

    /// Take the first of the runs `near` (first slab, count) whose slabs are all free, else
    /// a fresh run of `n` slabs anywhere, for `slot`. Returns the run taken. Dead
    /// processes are reclaimed when nothing is free.
    pub fn take_slabs_near(
        &self,
        d: u32,
        near: &[(u64, u64)],
        n: u64,
        slot: usize,
    ) -> Result<Option<(u64, u64)>> {
        let g = self.lock()?;
        for attempt in 0..2 {
            let free = |&(f, k): &(u64, u64)| {
                f + k <= self.nslabs
                    && (f..f + k).all(|s| self.slab(d, s).load(Ordering::SeqCst) == 0)
            };
            let run = near
                .iter()
                .copied()
                .find(free)
                .or_else(|| self.find_free_run(d, n).map(|f| (f, n)));
            if let Some((first, k)) = run {
                for s in first..first + k {
                    self.slab(d, s).store(slot as u32 + 1, Ordering::SeqCst);
                }
                return Ok(Some((first, k)));
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

    /// Owner slot of the slab holding byte `off` of device `d`, if owned by a valid slot
    /// number (the word may be damaged: never panics, as the fault handler calls it).
    pub fn slab_owner(&self, d: u32, off: u64) -> Option<usize> {
        if d >= self.devices || off / self.slab_size >= self.nslabs {
            return None;
        }
        match self.slab(d, off / self.slab_size).load(Ordering::SeqCst) {
            0 => None,
            o if o as usize > MAX_PROCS => None,
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

    /// Bytes the file system holding device `d`'s HBM file can still give to new pages
    /// (`fstatvfs`, what an unprivileged writer may use); `None` if it cannot tell.
    pub fn space_left(&self, d: u32) -> Option<u64> {
        let fd = self.hbm[d as usize].as_raw_fd();
        // SAFETY: `statvfs` is a plain C struct (all zeroes is a valid value) that fstatvfs
        // fills, from our own descriptor.
        let (r, st) = unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            (libc::fstatvfs(fd, &mut st), st)
        };
        if r != 0 {
            return None;
        }
        Some(st.f_bavail.saturating_mul(st.f_frsize))
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

/// Pids of the live processes registered in a procs file of `len` bytes (read, not mapped:
/// the file may be short or damaged). A process of another pid namespace counts as live
/// ([`os::process_alive`]).
fn live_pids(f: &File, len: usize) -> Vec<u32> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; len];
    let n = f.read_at(&mut buf, 0).unwrap_or(0);
    let sz = std::mem::size_of::<ProcEntry>();
    let mut out = Vec::new();
    for e in buf[..n - n % sz].chunks_exact(sz) {
        let word = |o: usize| u32::from_ne_bytes([e[o], e[o + 1], e[o + 2], e[o + 3]]);
        let (pid, ns) = (word(0), word(4));
        let start = u64::from_ne_bytes(e[8..16].try_into().unwrap_or([0; 8]));
        if os::process_alive(pid, start, ns) {
            out.push(pid);
        }
    }
    out
}
