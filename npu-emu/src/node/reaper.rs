//! The node's reaper: a small background process that gives a dead process's device memory
//! back as soon as it dies, and clears what dead jobs leave in the node directory.
//!
//! Without it, the memory of a process that exits without `aclFinalize`, or is killed, stays
//! in `/dev/shm` until another process happens to open the node (512 MiB after one `exit()`,
//! 1 GiB after a killed 4-rank job), and a killed launcher's `jobs/<id>` stays forever.
//!
//! [`ensure`] (called by the runtime at `aclInit` and by `npu-emu run`) starts one reaper per
//! node unless one runs (it holds `flock` on `<node>/reaper`). The reaper:
//! - watches every registered process of its pid namespace (`pidfd_open` + `poll`, so a
//!   death is seen at once; a rescan every [`RESCAN`] catches new processes), and reclaims a
//!   dead one's slot and slabs (punching its pages) under the node lock;
//! - removes `jobs/<id>` directories whose launcher (`jobs/<id>/launcher`: pid and start
//!   time) is gone;
//! - when no process of the node and no launcher is left: removes the HCCL control blocks
//!   (`hccl-*`: no process can use them, and a new one must register under the node lock
//!   first), gives the pages of the process and slab tables back (all zero then; the next
//!   process backs them again when it registers), and exits. What stays is the 4 KiB header
//!   and the empty sparse files.
//!
//! It is the `npu-emu` tool (`npu-emu reap`, hidden) when the tool is found beside the
//! library (`target/release/npu-emu` next to `libascendcl.so`, or `<prefix>/bin/npu-emu` for
//! `<prefix>/lib64`): started with every other descriptor closed, it forks itself into a new
//! session (so it is nobody's child or terminal job) and its starter exits at once, so it
//! carries nothing of the application (memory, descriptors, locks). Without the tool, the
//! calling process is forked twice the same way without `exec`: that child closes every
//! inherited descriptor and unmaps the HBM alias mappings it was given, uses only its own
//! new state (no lock of the parent's), and ends with `_exit`, so the parent's `atexit`
//! handlers and stdio buffers are never run twice (it does keep a copy-on-write view of the
//! parent's memory, which is why the tool is preferred).

use super::shared::{self, Shared, MAX_PROCS};
use crate::config::Config;
use npu_emu_ffi::os;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How often the reaper rescans the process table and the jobs directory.
pub const RESCAN: Duration = Duration::from_millis(500);

/// Name of the file whose `flock` the running reaper holds.
const LOCK_NAME: &str = "reaper";

/// Name of the file in a `jobs/<id>` directory naming the launcher: `"<pid> <start time>"`.
pub const LAUNCHER_FILE: &str = "launcher";

/// Whether a reaper holds the lock of the node whose directory is `dirfd`.
fn running(dirfd: &std::os::unix::io::OwnedFd, dir: &Path) -> bool {
    let Ok(f) = shared::open_in(dirfd, dir, LOCK_NAME, true) else {
        return true; // cannot tell: do not start another
    };
    // SAFETY: flock on our own descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        // SAFETY: as above.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_UN) };
        return false;
    }
    true
}

/// Start the reaper of the node in `cfg.node_dir` unless one runs. `unmap` lists mappings of
/// this process (the HBM aliases) the reaper must not keep alive. Best effort: a reaper that
/// cannot start leaves the old behaviour (dead processes reclaimed by the next opener).
pub fn ensure(cfg: &Config, unmap: &[(usize, usize)]) {
    let Ok(dirfd) = shared::open_existing_dir(&cfg.node_dir) else {
        return;
    };
    if running(&dirfd, &cfg.node_dir) {
        return;
    }
    drop(dirfd);
    if spawn_tool(&cfg.node_dir) {
        return;
    }
    let cfg = cfg.clone();
    let unmap = unmap.to_vec();
    // SAFETY: between the two forks the child only calls async-signal-safe functions
    // (setsid, fork, _exit); the grandchild is described in the module documentation.
    unsafe {
        let child = libc::fork();
        if child < 0 {
            return;
        }
        if child == 0 {
            libc::setsid();
            if libc::fork() != 0 {
                libc::_exit(0);
            }
            become_reaper(&unmap);
            let _ = std::panic::catch_unwind(|| run(&cfg));
            libc::_exit(0);
        }
        let mut st = 0;
        while libc::waitpid(child, &mut st, 0) < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
}

/// Start the reaper as `npu-emu reap` if the tool is beside this library; whether it was.
fn spawn_tool(node_dir: &Path) -> bool {
    use std::os::unix::process::CommandExt;
    let Some(dir) = os::own_dir() else {
        return false;
    };
    let tool = [dir.join("npu-emu"), dir.join("../bin/npu-emu")]
        .into_iter()
        .find(|p| p.is_file());
    let Some(tool) = tool else {
        return false;
    };
    let mut c = std::process::Command::new(tool);
    c.arg("reap")
        .env("NPU_EMU_NODE_DIR", node_dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: close_range is async-signal-safe; descriptors 0-2 are /dev/null by now.
    unsafe {
        c.pre_exec(|| {
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            Ok(())
        });
    }
    match c.status() {
        Ok(st) => st.success(),
        Err(_) => false,
    }
}

/// `npu-emu reap`: become the reaper of the node in `cfg.node_dir` (in a new session, the
/// starter returning at once). Returns in the starter; the reaper itself ends the process.
pub fn reap_main(cfg: &Config) {
    // SAFETY: this process is the freshly started tool: one thread, nothing to inherit.
    unsafe {
        let child = libc::fork();
        if child != 0 {
            return; // the starter: report success (or the fork failure) at once
        }
        libc::setsid();
        libc::prctl(libc::PR_SET_NAME, c"npu-emu-reaper".as_ptr());
        libc::umask(0o077);
    }
    let _ = std::panic::catch_unwind(|| run(cfg));
    // SAFETY: end the reaper.
    unsafe { libc::_exit(0) };
}

/// Shed what the grandchild inherited: descriptors, mappings, signal state, name.
///
/// # Safety
/// Call only in the freshly forked reaper process.
unsafe fn become_reaper(unmap: &[(usize, usize)]) {
    for &(p, len) in unmap {
        libc::munmap(p as *mut libc::c_void, len);
    }
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
        let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(1024, 1 << 20);
        for fd in 0..max as i32 {
            libc::close(fd);
        }
    }
    let null = c"/dev/null".as_ptr();
    let fd = libc::open(null, libc::O_RDWR);
    if fd == 0 {
        libc::dup2(0, 1);
        libc::dup2(0, 2);
    }
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
        libc::signal(sig, libc::SIG_DFL);
    }
    libc::prctl(libc::PR_SET_NAME, c"npu-emu-reaper".as_ptr());
    libc::umask(0o077);
}

/// The reaper's loop (returns when nothing is left to watch).
fn run(cfg: &Config) {
    // Never make the node: a reaper that starts after it was removed (its processes gone,
    // the directory deleted by whoever made it) just ends.
    let Ok(dirfd) = shared::open_existing_dir(&cfg.node_dir) else {
        return;
    };
    // (Made by `ensure`'s check, before the reaper starts.)
    let Ok(lock) = shared::open_in(&dirfd, &cfg.node_dir, LOCK_NAME, false) else {
        return;
    };
    // SAFETY: flock on our own descriptor; held until we exit.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return; // another reaper won the race
    }
    let Ok((sh, _)) = Shared::open_existing(cfg) else {
        return;
    };
    let mut watched: Vec<(u32, i32)> = Vec::new();
    loop {
        let live = match sh.lock() {
            Ok(g) => {
                sh.reclaim_dead(&g);
                let live = sh.local_live_pids();
                let jobs = clear_dead_jobs(&cfg.node_dir);
                if live.is_empty() && jobs == 0 {
                    // Processes of another pid namespace may still use the node: leave
                    // their control blocks (we cannot watch them anyway).
                    if sh.registered() == 0 {
                        remove_control_blocks(&cfg.node_dir);
                        sh.release_tables(&g);
                    }
                    return;
                }
                live
            }
            Err(_) => return,
        };
        watch(&mut watched, &live);
        wait_for_death(&watched, RESCAN);
    }
}

/// Keep a pidfd for each pid in `live` (closing those of pids no longer listed).
fn watch(watched: &mut Vec<(u32, i32)>, live: &[u32]) {
    watched.retain(|&(pid, fd)| {
        let keep = live.contains(&pid);
        if !keep {
            // SAFETY: our own pidfd.
            unsafe { libc::close(fd) };
        }
        keep
    });
    for &pid in live {
        if watched.iter().any(|&(p, _)| p == pid) {
            continue;
        }
        // SAFETY: plain syscall; the descriptor is ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0u32) };
        if fd >= 0 {
            watched.push((pid, fd as i32));
        }
    }
}

/// Sleep until one of the watched processes exits, or `max` passes.
fn wait_for_death(watched: &[(u32, i32)], max: Duration) {
    let mut fds: Vec<libc::pollfd> = watched
        .iter()
        .map(|&(_, fd)| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: a valid array of pollfds (poll with none just sleeps).
    unsafe {
        libc::poll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            max.as_millis() as i32,
        )
    };
}

/// Remove `jobs/<id>` directories whose launcher is gone (or that name none and are older
/// than a minute: a launcher killed before it wrote its file). Returns how many jobs live.
fn clear_dead_jobs(node_dir: &Path) -> usize {
    let jobs = node_dir.join("jobs");
    let Ok(rd) = std::fs::read_dir(&jobs) else {
        return 0;
    };
    let mut live = 0;
    for e in rd.filter_map(|e| e.ok()).take(4096) {
        let p = e.path();
        let alive = match std::fs::read_to_string(p.join(LAUNCHER_FILE)) {
            Ok(s) => {
                let mut it = s.split_whitespace().map(|w| w.parse::<u64>().unwrap_or(0));
                let (pid, start) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
                os::process_alive(pid as u32, start, 0)
            }
            Err(_) => e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age < Duration::from_secs(60)),
        };
        if alive {
            live += 1;
        } else {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
    let _ = std::fs::remove_dir(&jobs); // only when empty
    live
}

/// Remove every HCCL control block (`hccl-*`): called with the node lock held when no
/// process of the node is alive.
fn remove_control_blocks(node_dir: &Path) {
    let Ok(rd) = std::fs::read_dir(node_dir) else {
        return;
    };
    for e in rd.filter_map(|e| e.ok()).take(1 << 16) {
        if e.file_name().as_encoded_bytes().starts_with(b"hccl-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Shared {
    /// How many slots are registered. Call with the lock held.
    pub fn registered(&self) -> usize {
        (0..MAX_PROCS)
            .filter(|&i| self.proc(i).pid.load(Ordering::SeqCst) != 0)
            .count()
    }

    /// Pids of the registered processes of our pid namespace (those a reaper can watch).
    /// Call with the lock held, after [`Shared::reclaim_dead`].
    pub fn local_live_pids(&self) -> Vec<u32> {
        let me = os::pid_namespace();
        (0..MAX_PROCS)
            .filter_map(|i| {
                let e = self.proc(i);
                let pid = e.pid.load(Ordering::SeqCst);
                let ns = e.pidns.load(Ordering::SeqCst);
                (pid != 0 && (ns == 0 || me == 0 || ns == me)).then_some(pid)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reaper started after its node was removed (the last process gone, the directory
    /// deleted by whoever made it) ends without making the node again.
    #[test]
    fn a_reaper_never_makes_its_node() {
        let dir = std::env::temp_dir().join(format!("npu-emu-reaper-gone-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cfg = crate::node::tests::config(&dir, 1, "64M");
        run(&cfg);
        assert!(
            std::fs::symlink_metadata(&dir).is_err(),
            "{} was made",
            dir.display()
        );
        assert!(Shared::open_existing(&cfg).is_err());
        assert!(std::fs::symlink_metadata(&dir).is_err());
        // An empty directory (removed files, or a node never set up) is not joined either.
        std::fs::create_dir(&dir).unwrap();
        run(&cfg);
        assert!(Shared::open_existing(&cfg).is_err());
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(names.is_empty(), "{names:?}");
        std::fs::remove_dir(&dir).unwrap();
    }
}
