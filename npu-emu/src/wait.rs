//! The wait policy shared by streams and HCCL: spin briefly, then poll with `sched_yield`,
//! then sleep on a shared futex (see `reference/performance.md`).
//!
//! On this kind of machine ranks often outnumber cores. Pure spinning then collapses to
//! timeslice-bound milliseconds; `sched_yield` polling stays at a few µs per hop; a futex
//! hand-off costs 15–30 µs because an idle vCPU has to be woken. So a waiter:
//! 1. spins for up to ~50 µs, only when every participant can have its own core;
//! 2. polls with `sched_yield` for a few milliseconds;
//! 3. then sleeps on a futex word in shared memory (not process-private, so a waker in
//!    another process reaches it), re-checking its condition and its deadline periodically.
//!
//! The waker side is [`Word::wake`]: it bumps the word and issues `FUTEX_WAKE` only when a
//! sleeper announced itself in the word's sleeper count, so a hand-off between busy ranks
//! costs no system call.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A futex word with a count of sleepers, both in shared memory.
#[repr(C)]
pub struct Word {
    /// The value waiters sleep on; wakers change it before waking.
    pub value: AtomicU32,
    /// Number of waiters that may be sleeping on `value`.
    pub sleepers: AtomicU32,
}

impl Word {
    /// Store `v` and wake every sleeper, if any announced itself.
    pub fn store_wake(&self, v: u32) {
        self.value.store(v, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            futex_wake(&self.value);
        }
    }
    /// Add one and wake every sleeper, if any.
    pub fn bump_wake(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            futex_wake(&self.value);
        }
    }
}

/// How a waiter behaves; see the module documentation.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// Spin iterations before yielding (0 when participants outnumber cores).
    pub spin: u32,
    /// How long to poll with `sched_yield` before sleeping on the futex.
    pub yield_for: Duration,
    /// Longest single futex sleep; the condition, the deadline and `check` are re-evaluated
    /// at least this often.
    pub sleep_slice: Duration,
    /// How often the caller's `check` (peer liveness) runs while waiting.
    pub check_every: Duration,
}

/// Number of online CPUs (at least 1).
pub fn online_cpus() -> u32 {
    static CPUS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| {
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        if n < 1 {
            1
        } else {
            n as u32
        }
    })
}

impl Policy {
    /// The policy for `participants` threads or processes that wait for each other.
    pub fn for_participants(participants: u32) -> Policy {
        Policy {
            // About 50 µs of `pause` (~24 ns each on the Zen 4 VM). 200 (5 µs) was too
            // short on a loaded machine: a waiter whose peer was briefly descheduled then
            // yielded its CPU to another program for a whole timeslice. 8-byte AllReduce on
            // 2 ranks, while other jobs loaded the VM (alternating runs, medians of 9):
            // 440 µs with 200 spins, 58 µs with 2000, 224 µs with 6000.
            spin: if participants <= online_cpus() {
                2000
            } else {
                0
            },
            yield_for: Duration::from_millis(4),
            sleep_slice: Duration::from_millis(50),
            check_every: Duration::from_millis(200),
        }
    }
}

/// Why a wait ended without its condition becoming true.
#[derive(Debug)]
pub enum WaitError<E> {
    /// The deadline passed.
    TimedOut,
    /// `check` returned an error (for example a peer died).
    Check(E),
}

/// Wait until `ready()` is true. `word` is the futex word a waker changes when `ready` may
/// have become true; `deadline` `None` waits forever; `check` runs every
/// [`Policy::check_every`] and aborts the wait with its error.
pub fn wait_until<E>(
    policy: &Policy,
    word: &Word,
    mut ready: impl FnMut() -> bool,
    deadline: Option<Instant>,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<(), WaitError<E>> {
    if ready() {
        return Ok(());
    }
    for _ in 0..policy.spin {
        std::hint::spin_loop();
        if ready() {
            return Ok(());
        }
    }
    let start = Instant::now();
    let mut last_check = start;
    let mut polls: u32 = 0;
    loop {
        // Yield phase.
        unsafe { libc::sched_yield() };
        if ready() {
            return Ok(());
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(64) {
            let now = Instant::now();
            if now.duration_since(start) >= policy.yield_for {
                break;
            }
            if deadline.is_some_and(|d| now >= d) {
                return Err(WaitError::TimedOut);
            }
        }
    }
    // Sleep phase.
    loop {
        let snapshot = word.value.load(Ordering::SeqCst);
        word.sleepers.fetch_add(1, Ordering::SeqCst);
        if ready() {
            word.sleepers.fetch_sub(1, Ordering::SeqCst);
            return Ok(());
        }
        let now = Instant::now();
        let mut slice = policy.sleep_slice;
        if let Some(d) = deadline {
            if now >= d {
                word.sleepers.fetch_sub(1, Ordering::SeqCst);
                return Err(WaitError::TimedOut);
            }
            slice = slice.min(d - now);
        }
        futex_wait(&word.value, snapshot, slice);
        word.sleepers.fetch_sub(1, Ordering::SeqCst);
        if ready() {
            return Ok(());
        }
        let now = Instant::now();
        if now.duration_since(last_check) >= policy.check_every {
            last_check = now;
            check().map_err(WaitError::Check)?;
        }
        if deadline.is_some_and(|d| now >= d) {
            return Err(WaitError::TimedOut);
        }
    }
}

/// Sleep while `*word == expected`, at most `timeout` (shared futex: works across
/// processes mapping the same page).
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wake every sleeper on `word`.
pub fn futex_wake(word: &AtomicU32) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn wakes_a_sleeper_across_threads() {
        let w = Arc::new(Word {
            value: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
        });
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            w2.store_wake(7);
        });
        let p = Policy::for_participants(64);
        let r: Result<(), WaitError<()>> = wait_until(
            &p,
            &w,
            || w.value.load(Ordering::SeqCst) == 7,
            Some(Instant::now() + Duration::from_secs(10)),
            || Ok(()),
        );
        assert!(r.is_ok());
        t.join().unwrap();
    }

    #[test]
    fn times_out_and_checks() {
        let w = Word {
            value: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
        };
        let p = Policy {
            check_every: Duration::from_millis(1),
            ..Policy::for_participants(64)
        };
        let r: Result<(), WaitError<()>> = wait_until(
            &p,
            &w,
            || false,
            Some(Instant::now() + Duration::from_millis(50)),
            || Ok(()),
        );
        assert!(matches!(r, Err(WaitError::TimedOut)));
        let r: Result<(), WaitError<&str>> = wait_until(&p, &w, || false, None, || Err("dead"));
        assert!(matches!(r, Err(WaitError::Check("dead"))));
    }
}
