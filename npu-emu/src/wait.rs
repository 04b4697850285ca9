//! The one waiting policy of npu-emu: spin briefly, then poll with `sched_yield`, then sleep
//! on a futex word (see `reference/performance.md`). Streams (a host thread waiting for a
//! stream's worker, a worker waiting for work), events, HCCL's rendezvous, point-to-point
//! mailboxes and turn-taking all wait through [`wait_until`] (or [`poll`] then [`sleep`]),
//! with one of the [`Policy`] values below; every constant of the policy is in this file.
//!
//! On this kind of machine waiters often outnumber cores. Pure spinning then collapses to
//! timeslice-bound milliseconds; `sched_yield` polling stays at a few µs per hop; a futex
//! hand-off costs 15–30 µs because an idle vCPU has to be woken. So a waiter:
//! 1. spins for a few µs (streams) or ~50 µs (HCCL ranks), and only when every participant
//!    can have its own core;
//! 2. polls with `sched_yield` for about a millisecond (streams) or a few (HCCL ranks);
//! 3. then sleeps on a futex word, re-checking its condition when woken (and, with a sleep
//!    slice, periodically, running the caller's `check` such as peer liveness). HCCL's words
//!    live in shared memory and the futex is a shared one, so a waker in another process
//!    reaches the sleeper.
//!
//! The waker changes the condition, then calls [`Word::notify`] (or [`Word::store_wake`],
//! [`Word::bump_wake`] for words whose value is itself the condition): a system call is made
//! only when a sleeper announced itself in the word's sleeper count, so a hand-off between
//! busy threads costs none.

use npu_emu_ffi::os::{futex_wait, online_cpus, sched_yield};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// HCCL ranks: spin this long when every rank can have its own core. About 2000 `pause`
/// iterations (~24 ns each on the Zen 4 VM); 5 µs was too short on a loaded machine: a
/// waiter whose peer was briefly descheduled then yielded its CPU to another program for a
/// whole timeslice. 8-byte AllReduce on 2 ranks while other jobs loaded the VM (alternating
/// runs, medians of 9): 440 µs with 5 µs of spinning, 58 µs with 50 µs, 224 µs with 150 µs.
const RANK_SPIN: Duration = Duration::from_micros(48);
/// HCCL ranks whose own stream has nothing to run (a collective completing at its call):
/// spin this long when every rank can have its own core. No thread of ours needs the CPU
/// meanwhile, and on a machine loaded by other programs a `sched_yield` hands the core to
/// one of them for a whole timeslice (ms) while the peer is about to arrive: 8-byte
/// AllReduce on 2 ranks at load 9–13 took 70–3700 µs with 48 µs of spinning then yielding,
/// against OpenMPI's 0.4 µs busy polling in the same runs.
const RANK_SPIN_IDLE: Duration = Duration::from_millis(2);
/// HCCL ranks whose own stream is idle: poll with `sched_yield` this long before sleeping.
/// A rank that sleeps needs a futex wake-up per operation, which under load may wait for a
/// CPU for milliseconds; a yielding rank stays runnable. (Chosen on a machine at load 9–13,
/// where one run of 8-byte AllReduce on 2 ranks took 3.9 ms per operation with 4 ms of
/// yielding; the runs there were too noisy to settle it: measure on a quiet machine.)
const RANK_YIELD_IDLE: Duration = Duration::from_millis(20);
/// HCCL ranks: how long to poll with `sched_yield` before sleeping.
const RANK_YIELD: Duration = Duration::from_millis(4);
/// HCCL ranks of a communicator that spans servers: poll with `sched_yield` this long (no
/// spin) before sleeping. Their waits for each other last about as long as a network
/// transfer (milliseconds), and emulated servers share the machine's cores: a spinning or
/// yielding rank takes the CPU from the ranks and the kernel's network work it waits for.
/// Measured on 2 vCPUs, alternating runs of 50-100 operations: 2 servers x 4 ranks, 8 MiB
/// AllReduce 14.4-15.4 ms with 4 ms of yielding, 11.7-12.1 with 50 us, 12.2-12.8 with
/// 300 us, AllGather 7.4-7.6, 5.4-5.8, 5.7; 2 servers x 2 ranks (which spun 48 us first),
/// 8-byte AllReduce 113-220 us before, 58-119 after, 64 KiB AllGather 453-1758 before,
/// 121-153 after, 8 MiB AllReduce 10.9-12.0 ms before, 10.5-10.6 after.
const RANK_YIELD_ACROSS: Duration = Duration::from_micros(50);
/// HCCL ranks: longest single futex sleep; the condition, the deadline and `check` are
/// re-evaluated at least this often.
const RANK_SLEEP_SLICE: Duration = Duration::from_millis(50);
/// HCCL ranks: how often `check` (peer liveness) runs while sleeping.
const RANK_CHECK_EVERY: Duration = Duration::from_millis(200);

/// Streams: spin this long (a round trip to an idle worker on another core takes less).
const STREAM_SPIN: Duration = Duration::from_micros(2);
/// Streams: poll with `sched_yield` until this long after the wait began. Yielding rather
/// than spinning keeps a loaded machine (more runnable threads than cores) usable, while
/// on an idle core a yield returns at once, so a round trip still needs no futex wake-up.
/// 1 ms covers a collective of 8 ranks on 2 cores (30–100 µs under load) with a margin:
/// with 50 µs, a program that synchronizes after every HCCL call paid two futex wake-ups
/// per call (the worker's and the waiter's, ~25 µs each across vCPUs on a VM).
const STREAM_YIELD: Duration = Duration::from_millis(1);

/// Receives from a peer on another server: a wait for a message of at most this many bytes
/// polls with `sched_yield` for [`NET_YIELD`] first (the message is about one network round
/// trip away, and a futex wake-up would cost as much); a wait for a bigger one sleeps at
/// once (polling takes the CPU from the kernel's network work and the ranks it waits for).
/// 2 servers x 4 ranks on 2 vCPUs, medians of 3 alternating runs: 8-byte AllReduce 356 µs
/// yielding, 434 sleeping; 64 KiB AllReduce (8 KiB messages) within the noise.
pub const NET_YIELD_MAX_BYTES: usize = 4 << 10;
/// See [`NET_YIELD_MAX_BYTES`].
pub const NET_YIELD: Duration = Duration::from_micros(300);

/// Events: a record is usually imminent when someone waits for it, so poll briefly, no spin.
const EVENT_YIELD: Duration = Duration::from_micros(50);

/// Events waited on by a model's tasks: how often the wait checks whether it was cancelled
/// (the task aborted, the model destroyed).
const EVENT_CANCEL_CHECK: Duration = Duration::from_millis(20);

/// How often the clock is read while spinning, in spins.
const SPINS_PER_CLOCK: u32 = 32;
/// How often the clock is read while yielding, in polls.
const POLLS_PER_CLOCK: u32 = 8;

/// A futex word with a count of sleepers (in shared memory for HCCL, in the process for
/// streams and events).
#[repr(C)]
#[derive(Default)]
pub struct Word {
    /// The value waiters sleep on; wakers change it before waking.
    pub value: AtomicU32,
    /// Number of waiters that may be sleeping on `value`.
    pub sleepers: AtomicU32,
}

impl Word {
    /// A word at 0 with no sleepers.
    pub const fn new() -> Word {
        Word {
            value: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
        }
    }

    /// Store `v` and wake every sleeper, if any announced itself.
    pub fn store_wake(&self, v: u32) {
        self.value.store(v, Ordering::SeqCst);
        self.nudge();
    }

    /// Add one and wake every sleeper, if any.
    pub fn bump_wake(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
        self.nudge();
    }

    /// For a word that only signals (its value means nothing else): wake every sleeper,
    /// changing the value so a sleeper about to sleep does not. Costs one load when nobody
    /// sleeps. Call after making the waiters' condition true.
    pub fn notify(&self) {
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            self.value.fetch_add(1, Ordering::SeqCst);
            npu_emu_ffi::os::futex_wake(&self.value);
        }
    }

    /// Wake every sleeper, if any, without changing the value (they re-check their
    /// condition and run their `check`).
    pub fn nudge(&self) {
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            npu_emu_ffi::os::futex_wake(&self.value);
        }
    }
}

/// How a waiter behaves; see the module documentation.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// How long to spin before yielding (zero when participants outnumber cores).
    pub spin: Duration,
    /// How long after the start of the wait to poll with `sched_yield` before sleeping.
    pub yield_for: Duration,
    /// Longest single futex sleep (`None`: until woken or the deadline); the condition, the
    /// deadline and `check` are re-evaluated at least this often.
    pub sleep_slice: Option<Duration>,
    /// How often the caller's `check` runs while sleeping.
    pub check_every: Duration,
}

impl Policy {
    /// The policy for `participants` threads or processes that wait for each other (HCCL
    /// ranks): spin only when each can have its own core.
    pub fn for_participants(participants: u32) -> Policy {
        Policy {
            spin: if participants <= online_cpus() {
                RANK_SPIN
            } else {
                Duration::ZERO
            },
            yield_for: RANK_YIELD,
            sleep_slice: Some(RANK_SLEEP_SLICE),
            check_every: RANK_CHECK_EVERY,
        }
    }

    /// The policy of [`Policy::for_participants`] for a rank whose own stream is idle (it
    /// completes a collective on the calling thread): a longer spin when it spins at all.
    pub fn idle_stream(self) -> Policy {
        // When ranks outnumber cores (no spinning), a waiter that keeps polling takes CPU
        // from the peers it waits for: the ordinary policy stays.
        if self.spin.is_zero() {
            return self;
        }
        Policy {
            spin: RANK_SPIN_IDLE,
            yield_for: self.yield_for.max(RANK_YIELD_IDLE),
            ..self
        }
    }

    /// The policy of [`Policy::for_participants`] for the ranks of a communicator that spans
    /// servers: no spin, a short yield phase ([`RANK_YIELD_ACROSS`]).
    pub fn across_servers(self) -> Policy {
        Policy {
            spin: Duration::ZERO,
            yield_for: self.yield_for.min(RANK_YIELD_ACROSS),
            ..self
        }
    }

    /// A host thread waiting for a stream's worker, or an idle worker waiting for work.
    pub const STREAM: Policy = Policy {
        spin: STREAM_SPIN,
        yield_for: STREAM_YIELD,
        sleep_slice: None,
        check_every: Duration::MAX,
    };

    /// A stream's worker or a host thread waiting for an event's record.
    pub const EVENT: Policy = Policy {
        spin: Duration::ZERO,
        yield_for: EVENT_YIELD,
        sleep_slice: None,
        check_every: Duration::MAX,
    };

    /// [`Policy::EVENT`] for a wait that can be cancelled: it wakes every
    /// [`EVENT_CANCEL_CHECK`] to ask.
    pub const EVENT_CANCELLABLE: Policy = Policy {
        spin: Duration::ZERO,
        yield_for: EVENT_YIELD,
        sleep_slice: Some(EVENT_CANCEL_CHECK),
        check_every: EVENT_CANCEL_CHECK,
    };

    /// The same policy going straight to sleep, with no spin or yield phase: for a waiter
    /// whose peer process shares its CPU and stays there (HCCL's `wait_peers_with` first
    /// spins a while, which is what gets two busy ranks on one CPU separated when another
    /// CPU is idle). Then each hand-off is one futex wake on the same CPU, a few µs, where a
    /// spin would last until the scheduler's next tick.
    pub const fn sleep_at_once(self) -> Policy {
        Policy {
            spin: Duration::ZERO,
            yield_for: Duration::ZERO,
            ..self
        }
    }

    /// The same policy without the spin phase (when the thread we wait for shares our CPU,
    /// spinning would only delay it).
    pub const fn without_spin(self) -> Policy {
        Policy {
            spin: Duration::ZERO,
            ..self
        }
    }

    /// No spinning, no yielding: sleep at once. For a host thread waiting for a stream whose
    /// task waits for other servers (`stream::task_waits_for_network`), and for a receive of
    /// a big message from another server ([`NET_YIELD_MAX_BYTES`]). Such a
    /// task lasts milliseconds, so a futex wake-up (15–30 µs) costs little, while a thread
    /// polling with `sched_yield` for [`STREAM_YIELD`] takes the CPU from the ranks and the
    /// kernel's network work the task waits for (emulated servers share the machine's
    /// cores). 2 servers on 2 vCPUs, 8 MiB, alternating runs of 100 operations, medians of 4
    /// (with the receives' [`NET_YIELD_MAX_BYTES`]): AllReduce 1, 2 and 4 ranks per server
    /// 8653 -> 8146, 9794 -> 9567, 11771 -> 11553 µs; AllGather 3940 -> 3855, 4853 -> 4639,
    /// 6117 -> 5849. Only such tasks: for the single-server collectives (2 ranks, 128 MiB
    /// AllReduce) sleeping at once was not clearly better and maybe worse (runs of 12–21 ms
    /// against 12–16).
    pub const fn without_polling(self) -> Policy {
        Policy {
            spin: Duration::ZERO,
            yield_for: Duration::ZERO,
            ..self
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

/// What [`poll`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polled {
    /// The condition is true.
    Ready,
    /// The deadline passed.
    TimedOut,
    /// The spin and yield phases ended; sleep next ([`sleep`]).
    Pending,
}

/// Spin until `ready()` (true) or `until` passes (false).
fn spin_until(until: Instant, ready: &mut impl FnMut() -> bool) -> bool {
    loop {
        for _ in 0..SPINS_PER_CLOCK {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if Instant::now() >= until {
            return ready();
        }
    }
}

/// The first two phases of a wait that began at `start`: spin, then yield, until `ready()`,
/// the deadline, or the end of the yield phase.
pub fn poll(
    policy: &Policy,
    start: Instant,
    mut ready: impl FnMut() -> bool,
    deadline: Option<Instant>,
) -> Polled {
    if ready() {
        return Polled::Ready;
    }
    if !policy.spin.is_zero() && spin_until(start + policy.spin, &mut ready) {
        return Polled::Ready;
    }
    let yield_until = start + policy.yield_for;
    let mut polls: u32 = 0;
    loop {
        if polls.is_multiple_of(POLLS_PER_CLOCK) {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return if ready() {
                    Polled::Ready
                } else {
                    Polled::TimedOut
                };
            }
            if now >= yield_until {
                return Polled::Pending;
            }
        }
        polls = polls.wrapping_add(1);
        sched_yield();
        if ready() {
            return Polled::Ready;
        }
    }
}

/// The last phase of a wait: sleep on `word` until `ready()`, re-checking whenever woken and
/// at least every [`Policy::sleep_slice`]; `check` runs every [`Policy::check_every`] and
/// aborts the wait with its error.
pub fn sleep<E>(
    policy: &Policy,
    word: &Word,
    mut ready: impl FnMut() -> bool,
    deadline: Option<Instant>,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<(), WaitError<E>> {
    let mut last_check = Instant::now();
    loop {
        // The value is read before announcing ourselves and before the last look at the
        // condition: a waker that makes the condition true after that look sees us in
        // `sleepers` and changes the value, so the futex wait returns at once.
        let snapshot = word.value.load(Ordering::SeqCst);
        word.sleepers.fetch_add(1, Ordering::SeqCst);
        if ready() {
            word.sleepers.fetch_sub(1, Ordering::SeqCst);
            return Ok(());
        }
        let mut slice = policy.sleep_slice;
        if let Some(d) = deadline {
            let now = Instant::now();
            if now >= d {
                word.sleepers.fetch_sub(1, Ordering::SeqCst);
                return Err(WaitError::TimedOut);
            }
            slice = Some(slice.map_or(d - now, |s| s.min(d - now)));
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

/// Wait until `ready()` is true: [`poll`], then [`sleep`] on `word` (the futex word a waker
/// changes when `ready` may have become true). `deadline` `None` waits forever.
pub fn wait_until<E>(
    policy: &Policy,
    word: &Word,
    mut ready: impl FnMut() -> bool,
    deadline: Option<Instant>,
    check: impl FnMut() -> Result<(), E>,
) -> Result<(), WaitError<E>> {
    match poll(policy, Instant::now(), &mut ready, deadline) {
        Polled::Ready => Ok(()),
        Polled::TimedOut => Err(WaitError::TimedOut),
        Polled::Pending => sleep(policy, word, ready, deadline, check),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn wakes_a_sleeper_across_threads() {
        let w = Arc::new(Word::new());
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
        let w = Word::new();
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

#[cfg(test)]
mod more_tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// `sleep_at_once` skips both polling phases: the waiter announces itself as a sleeper
    /// at once (so the waker's `store_wake` makes the futex call that wakes it).
    #[test]
    fn sleep_at_once_does_not_poll() {
        let p = Policy::for_participants(1).idle_stream().sleep_at_once();
        assert!(p.spin.is_zero() && p.yield_for.is_zero());
        let w = Arc::new(Word::new());
        assert_eq!(
            poll(&p, Instant::now(), || false, None),
            Polled::Pending,
            "no spin or yield phase"
        );
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            while w2.sleepers.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            w2.store_wake(1);
        });
        let r: Result<(), WaitError<()>> = wait_until(
            &p,
            &w,
            || w.value.load(Ordering::SeqCst) == 1,
            Some(Instant::now() + Duration::from_secs(10)),
            || Ok(()),
        );
        assert!(r.is_ok());
        t.join().unwrap();
    }

    /// The stream and event policies sleep without a slice: only `notify` wakes them.
    #[test]
    fn notify_wakes_an_unsliced_sleeper() {
        for policy in [Policy::STREAM, Policy::EVENT, Policy::STREAM.without_spin()] {
            let w = Arc::new(Word::new());
            let flag = Arc::new(AtomicBool::new(false));
            let (w2, f2) = (w.clone(), flag.clone());
            let t = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                f2.store(true, Ordering::SeqCst);
                w2.notify();
            });
            let r: Result<(), WaitError<()>> =
                wait_until(&policy, &w, || flag.load(Ordering::SeqCst), None, || Ok(()));
            assert!(r.is_ok());
            t.join().unwrap();
            assert_eq!(w.sleepers.load(Ordering::SeqCst), 0);
        }
    }

    #[test]
    fn poll_phases() {
        let start = Instant::now();
        assert_eq!(poll(&Policy::EVENT, start, || true, None), Polled::Ready);
        assert_eq!(poll(&Policy::EVENT, start, || false, None), Polled::Pending);
        assert!(start.elapsed() >= Duration::from_micros(50));
        let past = Some(Instant::now());
        assert_eq!(
            poll(&Policy::STREAM, Instant::now(), || false, past),
            Polled::TimedOut
        );
        let mut n = 0;
        assert_eq!(
            poll(
                &Policy::STREAM,
                Instant::now(),
                || {
                    n += 1;
                    n > 3
                },
                None
            ),
            Polled::Ready
        );
        assert!(Policy::for_participants(1).spin > Duration::ZERO);
        let idle = Policy::for_participants(1).idle_stream();
        assert!(idle.spin > Policy::for_participants(1).spin && idle.yield_for >= idle.spin);
        let crowded = Policy::for_participants(100_000).idle_stream();
        assert_eq!(crowded.spin, Duration::ZERO);
        assert_eq!(
            crowded.yield_for,
            Policy::for_participants(100_000).yield_for
        );
        assert_eq!(Policy::for_participants(100_000).spin, Duration::ZERO);
    }
}
