//! The operating-system helpers every part of npu-emu uses: a shared file mapping, process
//! liveness across processes (and pid namespaces) and whether a process is stopped, the
//! directory of the library we are linked into, futex wait and wake, thread and CPU ids.
//! Hand-written over `libc` rather than taken from a crate such as `memmap2` or
//! `nix`: each is a few lines, and we need their exact flags (shared futexes, `MAP_SHARED`
//! of our own files) more than a general interface.

use crate::globals::{ONLINE_CPUS, OWN_PID_NAMESPACE};
use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Alignment [`Mapping::map_placed`] places mappings against: 8 MiB, room for 64 skews of
/// 17 pages (68 KiB; an odd number of pages, so any two of them differ in the low page bits).
pub const PLACE_ALIGN: usize = 8 << 20;

/// A shared read-write mapping of (the start of) a file; unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Mapping is an address range of shared memory; the type hands out only a raw
// pointer, and whoever dereferences it (through `unsafe`) is responsible for the accesses
// (the users of this module access shared words through atomics).
unsafe impl Send for Mapping {}
// SAFETY: as for Send: no safe method reads or writes the mapped memory.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Map the first `len` bytes of `file` shared and read-write (the file must be at
    /// least that long for every page to be usable).
    pub fn map(file: &File, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of a file descriptor we own; the kernel picks the
        // address, so no existing mapping is replaced.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    /// [`Mapping::map`], at an address `skew` bytes (a multiple of the page size, less than
    /// [`PLACE_ALIGN`]) past a multiple of [`PLACE_ALIGN`].
    ///
    /// Why: the kernel places big mappings side by side, so without this every device's
    /// HBM alias starts at the same address modulo its size (64 GiB), and the same offset
    /// in two devices is the same address in all but the high bits. An HCCL reduction reads
    /// every rank's buffer at one offset at once, and on the Zen 4 VM such streams collide
    /// in the core's virtually indexed structures: an 8-source fp32 sum from DRAM ran at
    /// 14 GB/s (read + write) with the sources 64 GiB apart, 25 GB/s with them a further
    /// 17 pages apart each (a C loop over 8 x 16 MiB, best of 3). Inside one HCCL
    /// ReduceScatter of 128 MiB at 8 ranks each rank's reduction took 23 ms of CPU against
    /// 7.4 ms for the same kernel over private buffers.
    pub fn map_placed(file: &File, len: usize, skew: usize) -> io::Result<Mapping> {
        assert!(skew < PLACE_ALIGN && skew.is_multiple_of(4096));
        let span = len + 2 * PLACE_ALIGN;
        // SAFETY: a fresh private reservation without access; the kernel picks the address,
        // so no existing mapping is replaced.
        let r = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if r == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = r as usize;
        let at = base.next_multiple_of(PLACE_ALIGN) + skew;
        // SAFETY: `[at, at + len)` lies inside the reservation just made (`at - base` <
        // 2 * PLACE_ALIGN), which nothing else uses; MAP_FIXED replaces only that.
        let p = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                file.as_raw_fd(),
                0,
            )
        };
        let err = (p == libc::MAP_FAILED).then(io::Error::last_os_error);
        // Give back the parts of the reservation around the file mapping (all of it if the
        // mapping failed).
        let (head, tail) = match err {
            None => ((base, at - base), (at + len, base + span - (at + len))),
            Some(_) => ((base, span), (0, 0)),
        };
        for (a, l) in [head, tail] {
            if l > 0 {
                // SAFETY: a part of our own reservation that holds nothing else.
                unsafe { libc::munmap(a as *mut libc::c_void, l) };
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(Mapping {
                ptr: at as *mut u8,
                len,
            }),
        }
    }

    /// First byte of the mapping.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range is the one mmap gave us, and nothing refers to it once the
        // Mapping is dropped (borrows of mapped memory cannot outlive it).
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Open `path` read-write (mode 0600 when `create` makes it), close-on-exec.
pub fn open_rw(path: &Path, create: bool) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .mode(0o600)
        .open(path)
}

/// Inode of this process's pid namespace (`/proc/self/ns/pid`), 0 if unknown.
pub fn pid_namespace() -> u32 {
    *OWN_PID_NAMESPACE.get_or_init(|| {
        std::fs::metadata("/proc/self/ns/pid")
            .map(|m| m.ino() as u32)
            .unwrap_or(0)
    })
}

/// `starttime` (field 22 of `/proc/<pid>/stat`), or None if the process is gone, a zombie,
/// or cannot be read.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // Fields after the command start at field 3 (state); starttime is field 22.
    f.nth(22 - 4)?.parse().ok()
}

/// Whether process `pid`, which started at `start_time` (0: unknown) in pid namespace
/// `pidns` (0: unknown), still runs. A process of another pid namespace (a container
/// sharing `/dev/shm`) cannot be seen through our `/proc`, so it is taken for alive; in our
/// namespace a pid that is gone, a zombie, or has another start time (a reused pid) is dead.
pub fn process_alive(pid: u32, start_time: u64, pidns: u32) -> bool {
    if pid == 0 {
        return false;
    }
    let ours = pid_namespace();
    if pidns != 0 && ours != 0 && pidns != ours {
        return true;
    }
    if pid == std::process::id() {
        return true;
    }
    match process_start_time(pid) {
        Some(t) => start_time == 0 || t == start_time,
        None => false,
    }
}

/// Scheduler state of `pid` (field 3 of `/proc/<pid>/stat`: `R` running, `S` sleeping,
/// `D` in the kernel, `T` stopped by a signal, `t` stopped by a debugger, `Z` zombie …), if
/// the process is visible in our pid namespace.
pub fn process_state(pid: u32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.get(s.rfind(')')? + 1..)?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Whether `pid` is stopped (SIGSTOP, Ctrl-Z, or a debugger): alive, but it makes no
/// progress until continued.
pub fn process_stopped(pid: u32) -> bool {
    matches!(process_state(pid), Some('T') | Some('t'))
}

/// Directory of the shared object (or executable) this code is linked into: the calling
/// library, since this crate is linked statically into each of them (`libascendcl.so`,
/// `libhccl.so`, `libnnopbase.so`, the `npu-emu` tool). None if the loader cannot say.
pub fn own_dir() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: an all-zero Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = own_dir as *const libc::c_void;
    // SAFETY: `addr` is an address of this object's code; `info` is valid for writes;
    // dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr succeeded and set a non-NULL, NUL-terminated file name owned by the
    // loader, valid while the object stays loaded (ours is never unloaded while we run).
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    path.parent().map(|p| p.to_path_buf())
}

/// Sleep while `*word == expected`: until woken ([`futex_wake`]), for at most `timeout`
/// (`None`: no bound), or not at all if the word already differs. The futex is a shared
/// one, so a waker in another process that maps the same page reaches it. Spurious returns
/// happen; callers re-check their condition.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: FUTEX_WAIT reads the aligned u32 behind `word` (valid for the call) and the
    // timespec (NULL or valid for the call); it writes nothing.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            tsp,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wake every sleeper on `word` (in any process).
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address of `word` as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// The kernel's id of the calling thread.
pub fn gettid() -> u64 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// The CPU the calling thread runs on (-1 if unknown); a vDSO call, no system call.
pub fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu has no arguments.
    unsafe { libc::sched_getcpu() }
}

/// The calling thread's affinity mask, if it can be read.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: pid 0 is the calling thread; `set` is a cpu_set_t of `size` bytes.
    (unsafe { libc::sched_getaffinity(0, size, &mut set) } == 0).then_some(set)
}

/// `cpu` as an index into a cpu_set_t, if it can be one.
fn cpu_index(cpu: i32) -> Option<usize> {
    usize::try_from(cpu)
        .ok()
        .filter(|&c| c < libc::CPU_SETSIZE as usize)
}

/// Run the calling thread on the CPUs `pick` chooses from its affinity mask (a non-empty
/// subset, or `None` to stay): the affinity is set to them (the kernel migrates the thread
/// before the call returns), then put back as it was, so the thread stays free to run
/// anywhere it could before. Returns whether the affinity was set.
fn hop(pick: impl FnOnce(&libc::cpu_set_t) -> Option<libc::cpu_set_t>) -> bool {
    let Some(old) = affinity() else {
        return false;
    };
    let Some(new) = pick(&old) else {
        return false;
    };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `new` is a non-empty subset of the thread's own mask (`pick`'s contract).
    let moved = unsafe { libc::sched_setaffinity(0, size, &new) } == 0;
    // SAFETY: restores the mask read above.
    unsafe { libc::sched_setaffinity(0, size, &old) };
    moved
}

/// Move the calling thread off CPU `cpu` when its affinity allows another one (see [`hop`]).
/// Returns whether the thread now runs on another CPU. A thread pinned to `cpu` alone stays.
pub fn step_off_cpu(cpu: i32) -> bool {
    let Some(c) = cpu_index(cpu) else {
        return false;
    };
    hop(|old| {
        let mut new = *old;
        // SAFETY: `c < CPU_SETSIZE`, the sets are valid cpu_set_t values.
        let others = unsafe {
            let mine = libc::CPU_ISSET(c, old);
            libc::CPU_CLR(c, &mut new);
            mine && libc::CPU_COUNT(&new) > 0
        };
        others.then_some(new)
    }) && current_cpu() != cpu
}

/// Move the calling thread to CPU `cpu`, one of those its affinity allows (see [`hop`]).
/// Returns whether the thread now runs on `cpu`.
pub fn move_to_cpu(cpu: i32) -> bool {
    let Some(c) = cpu_index(cpu) else {
        return false;
    };
    hop(|old| {
        // SAFETY: cpu_set_t is plain data; all zero is the empty set.
        let mut only: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `c < CPU_SETSIZE`; the sets are valid cpu_set_t values.
        let allowed = unsafe {
            libc::CPU_SET(c, &mut only);
            libc::CPU_ISSET(c, old)
        };
        allowed.then_some(only)
    }) && current_cpu() == cpu
}

/// The CPUs the calling thread may run on (its affinity mask), lowest first; empty if the
/// mask cannot be read.
pub fn allowed_cpus() -> Vec<i32> {
    let Some(set) = affinity() else {
        return Vec::new();
    };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c < CPU_SETSIZE`; `set` is a valid cpu_set_t.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as i32)
        .collect()
}

/// Give the CPU to another runnable thread, if any.
pub fn sched_yield() {
    // SAFETY: sched_yield has no arguments.
    unsafe { libc::sched_yield() };
}

/// Number of CPUs this process may use (at least 1): its affinity and CPU quota, read once.
pub fn online_cpus() -> u32 {
    *ONLINE_CPUS.get_or_init(|| {
        // The CPUs this process may run on: its affinity mask and its cgroup's CPU quota
        // count (`taskset -c 0`, `docker --cpus 1`), not only the machine's online CPUs. Two
        // ranks confined to one CPU that spun for each other took a scheduler tick (2-4 ms)
        // per operation.
        if let Ok(n) = std::thread::available_parallelism() {
            return n.get().min(u32::MAX as usize) as u32;
        }
        // SAFETY: sysconf only reads a system value.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        n.clamp(1, u32::MAX as libc::c_long) as u32
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn moving_between_cpus_leaves_the_affinity_as_it_was() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        assert!(cpus.contains(&current_cpu()), "{cpus:?} {}", current_cpu());
        // The scheduler may move the thread again right after the affinity is put back (it
        // is free to): a few tries.
        for &c in &cpus {
            assert!((0..5).any(|_| move_to_cpu(c)), "cpu {c} of {cpus:?}");
            assert_eq!(allowed_cpus(), cpus);
        }
        assert!(!move_to_cpu(-1) && !move_to_cpu(libc::CPU_SETSIZE));
        // Off the only CPU of a one-CPU mask there is nowhere to go.
        let stepped = (0..5).any(|_| step_off_cpu(current_cpu()));
        assert_eq!(stepped, cpus.len() > 1);
        assert_eq!(allowed_cpus(), cpus);
    }

    #[test]
    fn liveness() {
        let me = std::process::id();
        let st = process_start_time(me).unwrap();
        assert!(process_alive(me, st, pid_namespace()));
        assert!(!process_alive(0, 0, 0));
        // A pid beyond pid_max in our namespace is dead, in another namespace alive.
        assert!(!process_alive(me.wrapping_add(4_000_000), 1, 0));
        if pid_namespace() != 0 {
            assert!(process_alive(
                me.wrapping_add(4_000_000),
                1,
                pid_namespace() ^ 1
            ));
        }
        // Our parent (the test runner) is alive; with a wrong start time it is not "it".
        // SAFETY: getppid has no arguments.
        let parent = unsafe { libc::getppid() } as u32;
        if let Some(t) = process_start_time(parent) {
            assert!(process_alive(parent, t, 0));
            assert!(!process_alive(parent, t + 1, 0));
        }
        // We run, so we are not stopped; a pid beyond pid_max has no state.
        assert!(matches!(
            process_state(me),
            Some('R') | Some('S') | Some('D')
        ));
        assert!(!process_stopped(me));
        assert_eq!(process_state(me.wrapping_add(4_000_000)), None);
    }

    #[test]
    fn futex_wakes_and_times_out() {
        let w = Arc::new(AtomicU32::new(0));
        let t0 = std::time::Instant::now();
        futex_wait(&w, 0, Some(Duration::from_millis(20)));
        assert!(t0.elapsed() >= Duration::from_millis(15));
        futex_wait(&w, 1, None); // the word differs: returns at once
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            w2.store(1, Ordering::SeqCst);
            futex_wake(&w2);
        });
        while w.load(Ordering::SeqCst) == 0 {
            futex_wait(&w, 0, Some(Duration::from_secs(10)));
        }
        t.join().unwrap();
    }

    #[test]
    fn mapping_is_shared() {
        let dir = std::env::temp_dir().join(format!("npu-emu-ffi-os-{}", std::process::id()));
        let f = open_rw(&dir, true).unwrap();
        f.set_len(4096).unwrap();
        let a = Mapping::map(&f, 4096).unwrap();
        let b = Mapping::map(&f, 4096).unwrap();
        // SAFETY: both mappings are 4096 bytes long and alive.
        unsafe {
            *a.ptr().add(100) = 42;
            assert_eq!(*b.ptr().add(100), 42);
        }
        assert_eq!(a.len(), 4096);
        std::fs::remove_file(&dir).unwrap();
        assert!(online_cpus() >= 1);
        assert!(gettid() > 0);
        // The test binary is an executable: its directory exists.
        assert!(own_dir().is_some_and(|d| d.is_dir()));
    }

    #[test]
    fn placed_mapping_sits_at_its_skew_and_is_shared() {
        let dir = std::env::temp_dir().join(format!("npu-emu-ffi-place-{}", std::process::id()));
        let f = open_rw(&dir, true).unwrap();
        let len = 3 << 20;
        f.set_len(len as u64).unwrap();
        let plain = Mapping::map(&f, len).unwrap();
        for skew in [0, 17 * 4096, 63 * 17 * 4096] {
            let m = Mapping::map_placed(&f, len, skew).unwrap();
            assert_eq!(m.ptr() as usize % PLACE_ALIGN, skew);
            assert_eq!(m.len(), len);
            // SAFETY: both mappings are `len` bytes long and alive.
            unsafe {
                *m.ptr().add(len - 1) = skew as u8 ^ 0x5a;
                assert_eq!(*plain.ptr().add(len - 1), skew as u8 ^ 0x5a);
            }
        }
        std::fs::remove_file(&dir).unwrap();
    }
}
