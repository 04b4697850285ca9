//! Streams: an ordered task queue run by one worker thread each (DESIGN §2).
//!
//! Host calls that are asynchronous return at once; a task's error is kept and returned by
//! the next [`Stream::synchronize`] (as on hardware).
//!
//! Design:
//! - Tasks are numbered in enqueue order; `submitted` counts enqueued tasks and `completed`
//!   counts tasks that ran (or were discarded). Both are atomics, so an idle stream's
//!   synchronize or query reads two words and takes no lock and makes no syscall.
//! - One task runs at a time, by whoever holds the stream's run token (`Queue::running`):
//!   normally the stream's worker, but a host thread in [`Stream::synchronize`] (without a
//!   timeout) that finds the token free takes it and runs the queued tasks itself, up to the
//!   ones it waits for. So "enqueue, then synchronize" costs the work and no hand-off to a
//!   second thread, which on a loaded machine (more runnable threads than cores) may not get
//!   a CPU for milliseconds. Tasks still run one at a time and in order, and their errors,
//!   the error hook and the failure mode behave the same whichever thread runs them. Tasks
//!   given with [`Stream::enqueue_op_on_worker`] (host functions and callbacks: user code) only
//!   ever run on the worker. A synchronize with a timeout never runs tasks (a task may
//!   block longer than the timeout), it waits for the worker.
//! - The worker waits for work, and a host thread in `synchronize` waits for the task being
//!   run, with the stream policy of [`crate::wait`] (spin briefly, yield, then sleep on a
//!   futex word): a round trip needs no futex wake-up, while an idle stream stops polling
//!   after 1 ms. When the waiting host thread and the worker run on the same CPU
//!   (`sched_getcpu`, common when threads outnumber cores), both skip the spin and yield at
//!   once, since spinning would only delay the other.
//! - Tasks are taken one at a time under the queue lock (uncontended: a few ns); `abort`
//!   and a forced `destroy` drain the queue and bump a generation counter, so a task taken
//!   just before is discarded instead of run.
//! - Failure mode [`FailureMode::Stop`] (`ACL_STOP_ON_FAILURE`): after a failed task the rest
//!   of the queue is discarded until the error has been reported by a synchronize.
//! - Capture (`aclmdlRICaptureBegin`, a stream bound to a model): a stream with a [`Sink`]
//!   hands every operation to it instead of running it. Producers that can be captured
//!   enqueue an [`Op`] (which can run any number of times) with [`Stream::enqueue_op`]; a
//!   plain one-shot [`Task`] given to a capturing stream is refused (the sink says why) and
//!   invalidates the capture. See [`crate::capture`].

use crate::codes::{ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT};
use crate::error::{Error, Result};
use crate::wait::{self, Policy, Polled, Word};
use npu_emu_ffi::os;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A unit of work on a stream.
pub type Task = Box<dyn FnOnce() -> Result<()> + Send + 'static>;

/// Work that can run any number of times: an operation captured into a model runs once per
/// execution of the model.
pub type Repeatable = Arc<dyn Fn() -> Result<()> + Send + Sync + 'static>;

/// How a captured operation runs at each execution of its model.
#[derive(Clone)]
pub enum Replay {
    /// Run as is (it reads its arguments, e.g. addresses and sizes, every time).
    Run(Repeatable),
    /// Made fresh on the host thread that launches the model, in capture order, then run
    /// once: for operations whose host call takes a ticket (an HCCL collective takes its
    /// communicator's next sequence number at the call, an event record its record number).
    Host(Arc<dyn Fn() -> Result<Task> + Send + Sync + 'static>),
}

/// One stream operation in a form a model can hold: what it is (for messages, task-group
/// updates and debug prints) and how to run it.
#[derive(Clone)]
pub struct Op {
    /// Kind of task: `"memcpy"`, `"memset"`, `"kernel"`, `"hccl"`, `"event_record"`, …
    /// A task-group update must replace each task with one of the same kind.
    pub kind: &'static str,
    /// One line describing the task with its arguments.
    pub what: String,
    pub replay: Replay,
}

impl Op {
    /// An operation that runs `f` each time.
    pub fn run(
        kind: &'static str,
        what: impl Into<String>,
        f: impl Fn() -> Result<()> + Send + Sync + 'static,
    ) -> Op {
        Op {
            kind,
            what: what.into(),
            replay: Replay::Run(Arc::new(f)),
        }
    }

    /// The one-shot task for running this operation now (outside a model).
    pub fn into_task(self) -> Result<Task> {
        match self.replay {
            Replay::Run(f) => Ok(Box::new(move || f())),
            Replay::Host(make) => make(),
        }
    }
}

/// Work a library left on a stream's host side instead of enqueuing it (see
/// [`Stream::set_gate`]). Called with `block`: `Ok(true)` = all done (the gate goes away),
/// `Ok(false)` = not yet (only when `block` is false), `Err` = it failed (the gate goes
/// away; the error is the stream's, reported by the next synchronize).
pub type Gate = Box<dyn FnMut(bool) -> Result<bool> + Send + 'static>;

/// Where the operations of a capturing stream go (a model being captured or built).
pub trait Sink: Send + Sync {
    /// Take `op` (it is not run now).
    fn capture(&self, op: Op) -> Result<()>;
    /// The error for a one-shot task (`what`) that cannot be captured; the sink notes that
    /// its capture is invalid.
    fn refuse(&self, what: &str) -> Error;
}

/// Called when a task fails (on the thread that ran it), with the task's number on the
/// stream (1-based, in enqueue order) and its error (e.g. to run
/// `aclrtSetExceptionInfoCallback`).
pub type ErrorHook = Arc<dyn Fn(u64, &Error) + Send + Sync + 'static>;

/// Called on the worker thread after a task whose computation produced ±inf or NaN.
pub type OverflowHook = Arc<dyn Fn() + Send + Sync + 'static>;

/// What a stream does after one of its tasks failed (`aclrtSetStreamFailureMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureMode {
    /// `ACL_CONTINUE_ON_FAILURE` (0): later tasks still run.
    Continue,
    /// `ACL_STOP_ON_FAILURE` (1): later tasks are discarded until the next synchronize.
    Stop,
}

/// A queued task and whether only the worker may run it.
struct Queued {
    task: Task,
    worker_only: bool,
}

struct Queue {
    tasks: VecDeque<Queued>,
    /// First error of an asynchronous task since the last synchronize.
    error: Option<Error>,
    shutdown: bool,
    /// A thread holds the run token: it took a task and has not finished it.
    running: bool,
}

struct Shared {
    label: String,
    q: Mutex<Queue>,
    /// Notified when a task is enqueued, when the run token is given back with tasks left,
    /// or when the stream shuts down (the idle worker sleeps on it).
    work: Word,
    /// Notified when tasks complete (host threads in `synchronize` sleep on it).
    done: Word,
    /// The queue's `shutdown`, readable without the lock by the idle worker.
    closing: AtomicBool,
    /// The queue's `running`, readable without the lock.
    running: AtomicBool,
    /// [`thread_key`] of the thread holding the run token (0 = none): a task that
    /// synchronizes its own stream is refused instead of waiting for itself.
    runner: AtomicUsize,
    submitted: AtomicU64,
    completed: AtomicU64,
    /// The latest task (or the running one, once it said so) waits for other servers
    /// ([`task_waits_for_network`]): host threads waiting for the stream sleep at once.
    network_task: AtomicBool,
    has_error: AtomicBool,
    stop_on_failure: AtomicBool,
    /// Id of the worker thread (`gettid`).
    worker_tid: AtomicU64,
    hook: Mutex<Option<ErrorHook>>,
    /// Stop-on-failure tripped: discard tasks until the error is reported.
    discarding: AtomicBool,
    /// CPU the worker last ran on, and CPU of the latest host thread waiting in
    /// `synchronize` (-1 = none): when both share a CPU, spinning only delays the other, so
    /// both go straight to yielding.
    worker_cpu: AtomicI32,
    waiter_cpu: AtomicI32,
    /// Bumped (under the queue lock) by abort and forced destroy: a task taken before the
    /// bump is discarded.
    abort_gen: AtomicU64,
    /// Tests: the worker takes no task while set (so host threads run them).
    #[cfg(test)]
    hold_worker: AtomicBool,
    /// Called after a task that raised a floating-point overflow, invalid or
    /// divide-by-zero flag (see [`crate::fpstatus`]); `None` = not watched.
    overflow_hook: Mutex<Option<OverflowHook>>,
    watch_fp: AtomicBool,
    /// Where operations go while the stream captures (`capturing` says whether there is one).
    sink: Mutex<Option<Arc<dyn Sink>>>,
    capturing: AtomicBool,
    /// Work ahead of everything enqueued from now on (see [`Stream::set_gate`]); the mutex
    /// is held while it runs, so a second host thread waits for it.
    gate: Mutex<Option<Gate>>,
    /// Whether `gate` holds one (read without the lock).
    gated: AtomicBool,
}

/// One stream with its worker thread.
pub struct Stream {
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

thread_local! {
    /// Its address identifies the calling thread (cheaper than `gettid`, a system call).
    static THREAD_KEY: u8 = const { 0 };
}

/// A number identifying the calling thread among the live threads of the process.
fn thread_key() -> usize {
    THREAD_KEY.with(|k| k as *const u8 as usize)
}

/// Who is taking a task.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// The stream's worker: may run every task.
    Worker,
    /// A host thread in `synchronize`: runs tasks not reserved for the worker.
    Host,
}

impl Stream {
    /// A new stream whose worker thread is named after `label` (shown in messages and by
    /// debuggers, e.g. `"stream 3 (device 0)"`).
    pub fn new(label: &str) -> Result<Stream> {
        let shared = Arc::new(Shared {
            label: label.to_string(),
            q: Mutex::new(Queue {
                tasks: VecDeque::new(),
                error: None,
                shutdown: false,
                running: false,
            }),
            work: Word::new(),
            done: Word::new(),
            closing: AtomicBool::new(false),
            running: AtomicBool::new(false),
            runner: AtomicUsize::new(0),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            has_error: AtomicBool::new(false),
            stop_on_failure: AtomicBool::new(false),
            worker_tid: AtomicU64::new(0),
            hook: Mutex::new(None),
            discarding: AtomicBool::new(false),
            worker_cpu: AtomicI32::new(-1),
            network_task: AtomicBool::new(false),
            waiter_cpu: AtomicI32::new(-1),
            abort_gen: AtomicU64::new(0),
            #[cfg(test)]
            hold_worker: AtomicBool::new(false),
            overflow_hook: Mutex::new(None),
            watch_fp: AtomicBool::new(false),
            sink: Mutex::new(None),
            capturing: AtomicBool::new(false),
            gate: Mutex::new(None),
            gated: AtomicBool::new(false),
        });
        let s2 = shared.clone();
        let name: String = format!("npu-{label}").chars().take(15).collect();
        // The worker runs the blocks of kernel launches itself: it gets an AI core's stack.
        let handle = std::thread::Builder::new()
            .name(name)
            .stack_size(crate::aicore::CORE_STACK)
            .spawn(move || worker(s2))
            .map_err(|e| {
                Error::new(
                    crate::codes::ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("cannot start the worker thread of {label}: {e}"),
                )
            })?;
        Ok(Stream {
            shared,
            worker: Mutex::new(Some(handle)),
        })
    }

    /// Append `task`; it runs after everything enqueued before it, on the worker or on a
    /// host thread that synchronizes the stream. A capturing stream refuses it (a one-shot
    /// task cannot be replayed): use [`Stream::enqueue_op`].
    pub fn enqueue(&self, task: Task) -> Result<()> {
        self.enqueue_numbered(task).map(|_| ())
    }

    /// [`Stream::enqueue`], returning the task's number on the stream (1-based; it has
    /// finished when [`Stream::completed`] reaches it).
    pub fn enqueue_numbered(&self, task: Task) -> Result<u64> {
        if self.shared.capturing.load(Ordering::SeqCst) {
            if let Some(sink) = self.sink() {
                drop(task);
                return Err(sink.refuse("this kind of task"));
            }
        }
        self.push(task, false)
    }

    /// Append `op`: run it in order, or hand it to the sink while the stream captures.
    pub fn enqueue_op(&self, op: Op) -> Result<()> {
        self.enqueue_op_where(op, false)
    }

    /// [`Stream::enqueue_op`] for an operation that runs on the stream's worker thread only
    /// (user code such as host functions and callbacks, which must not run inside the
    /// caller's synchronize).
    pub fn enqueue_op_on_worker(&self, op: Op) -> Result<()> {
        self.enqueue_op_where(op, true)
    }

    fn enqueue_op_where(&self, op: Op, worker_only: bool) -> Result<()> {
        if self.shared.capturing.load(Ordering::SeqCst) {
            if let Some(sink) = self.sink() {
                sink.capture(op)?;
                LAST_SUBMIT.with(|l| l.set((self.key(), 0)));
                return Ok(());
            }
        }
        self.push(op.into_task()?, worker_only).map(|_| ())
    }

    /// A number identifying this stream while it lives (for [`last_submission`]).
    pub fn key(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Start (`Some`) or stop (`None`) sending this stream's operations to `sink`.
    pub fn set_sink(&self, sink: Option<Arc<dyn Sink>>) {
        self.pass_gate(true);
        let mut g = self.shared.sink.lock();
        self.shared
            .capturing
            .store(sink.is_some(), Ordering::SeqCst);
        *g = sink;
    }

    /// The sink the stream's operations go to, if it captures.
    pub fn sink(&self) -> Option<Arc<dyn Sink>> {
        if !self.shared.capturing.load(Ordering::SeqCst) {
            return None;
        }
        self.shared.sink.lock().clone()
    }

    /// Whether the stream's operations go to a sink.
    pub fn is_capturing(&self) -> bool {
        self.shared.capturing.load(Ordering::SeqCst)
    }

    /// Take the first error of an asynchronous task since the last synchronize (clearing
    /// it), without waiting: for a model that ran part of its work on this stream.
    pub fn take_error(&self) -> Option<Error> {
        let s = &self.shared;
        if !s.has_error.load(Ordering::SeqCst) {
            return None;
        }
        let mut q = s.q.lock();
        s.discarding.store(false, Ordering::SeqCst);
        s.has_error.store(false, Ordering::SeqCst);
        q.error.take()
    }

    fn push(&self, task: Task, worker_only: bool) -> Result<u64> {
        self.pass_gate(true);
        let s = &self.shared;
        let mut q = s.q.lock();
        if q.shutdown {
            drop(q);
            drop(task);
            return Err(Error::invalid(format!("{} is being destroyed", s.label)));
        }
        q.tasks.push_back(Queued { task, worker_only });
        let n = s.submitted.fetch_add(1, Ordering::SeqCst) + 1;
        LAST_SUBMIT.with(|l| l.set((self.key(), n)));
        drop(q);
        s.work.notify();
        Ok(n)
    }

    /// Wait for every task enqueued so far; `None` = forever. Returns the first error of an
    /// asynchronous task since the last synchronize (then clears it), or a timeout error.
    /// Without a timeout the calling thread runs queued tasks itself when no other thread
    /// is running one (see the module documentation).
    pub fn synchronize(&self, timeout: Option<Duration>) -> Result<()> {
        let s = &self.shared;
        if !self.gate_passed(timeout) {
            let ms = timeout.map_or(0, |d| d.as_millis());
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                format!(
                    "{} did not finish within {ms} ms (a collective called on it still waits for its peers)",
                    s.label
                ),
            ));
        }
        let target = s.submitted.load(Ordering::SeqCst);
        if s.completed.load(Ordering::SeqCst) < target {
            if self.is_worker_thread() {
                return Err(Error::invalid(format!(
                    "{} cannot be synchronized from one of its own tasks (it would wait for itself)",
                    s.label
                )));
            }
            if !self.wait_for(target, timeout) {
                let ms = timeout.map_or(0, |d| d.as_millis());
                return Err(Error::new(
                    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                    format!(
                        "{} did not finish within {ms} ms ({} of {} tasks done)",
                        s.label,
                        s.completed.load(Ordering::SeqCst),
                        target
                    ),
                ));
            }
        }
        if s.has_error.load(Ordering::SeqCst) {
            let mut q = s.q.lock();
            s.discarding.store(false, Ordering::SeqCst);
            s.has_error.store(false, Ordering::SeqCst);
            if let Some(e) = q.error.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Wait until task `n` (a number from [`Stream::submitted`]) has finished, running
    /// queued tasks on the calling thread as `synchronize` does; errors stay for the next
    /// synchronize. Used by `aclrtSynchronizeEvent` for the record it waits for. Returns
    /// false, waiting for nothing, when called from one of the stream's own tasks.
    pub fn run_until(&self, n: u64) -> bool {
        self.handle().run_until(n)
    }

    /// A handle that does not keep the stream alive, for [`StreamRef::run_until`].
    pub fn handle(&self) -> StreamRef {
        StreamRef(Arc::downgrade(&self.shared))
    }

    /// Whether every task enqueued so far has finished. A gate (see [`Stream::set_gate`])
    /// does not count: [`Stream::query`] is the user's view.
    pub fn is_idle(&self) -> bool {
        let s = &self.shared;
        s.completed.load(Ordering::SeqCst) >= s.submitted.load(Ordering::SeqCst)
    }

    /// `aclrtStreamQuery`: whether everything given to the stream has finished, the work of
    /// its gate included (which this advances as far as it can without waiting).
    pub fn query(&self) -> bool {
        !self.pass_gate(false) && self.is_idle()
    }

    /// Whether the stream holds a gate.
    pub fn is_gated(&self) -> bool {
        self.shared.gated.load(Ordering::Acquire)
    }

    /// Leave `gate` ahead of everything enqueued on the stream from now on: a library that
    /// ran an operation's first half at the call (an HCCL collective that published its
    /// input, its peers not there yet) leaves the rest here instead of enqueuing a task
    /// that a second thread would have to wake for. Host threads run the gate: waiting for
    /// it (`block`) before they enqueue, synchronize, capture or destroy; without waiting
    /// in [`Stream::query`]. A gate already there runs to its end first.
    pub fn set_gate(&self, gate: Gate) {
        self.pass_gate(true);
        let mut g = self.shared.gate.lock();
        *g = Some(gate);
        self.shared.gated.store(true, Ordering::Release);
    }

    /// Run the gate if there is one (not from inside a gate or one of the stream's own
    /// tasks). Returns whether it is still there (only when `block` is false).
    pub fn pass_gate(&self, block: bool) -> bool {
        let s = &self.shared;
        if !s.gated.load(Ordering::Acquire) || IN_GATE.with(|g| g.get()) || self.is_worker_thread()
        {
            return s.gated.load(Ordering::Acquire) && !block;
        }
        // Without waiting, a gate another thread runs now counts as still there.
        let mut g = if block {
            s.gate.lock()
        } else {
            match s.gate.try_lock() {
                Some(g) => g,
                None => return true,
            }
        };
        let Some(f) = g.as_mut() else {
            return false;
        };
        IN_GATE.with(|g| g.set(true));
        let r = npu_emu_ffi::boundary::catch(|| f(block));
        IN_GATE.with(|g| g.set(false));
        let r = r.unwrap_or_else(|p| {
            Err(Error::new(
                ACL_ERROR_INTERNAL_ERROR,
                format!("the work left on {} panicked: {p}", s.label),
            ))
        });
        match r {
            Ok(false) => return true,
            Ok(true) => {}
            Err(e) => {
                let mut q = s.q.lock();
                if q.error.is_none() {
                    q.error = Some(e);
                }
                s.has_error.store(true, Ordering::SeqCst);
            }
        }
        *g = None;
        s.gated.store(false, Ordering::Release);
        false
    }

    /// Run the gate to its end, or (with a timeout) until the deadline without blocking
    /// past it. False: timed out.
    fn gate_passed(&self, timeout: Option<Duration>) -> bool {
        let Some(t) = timeout else {
            self.pass_gate(true);
            return true;
        };
        let deadline = Instant::now() + t;
        while self.pass_gate(false) {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        true
    }

    /// Drop the gate without running it (abort, forced destroy).
    fn drop_gate(&self) {
        let g = self.shared.gate.lock().take();
        self.shared.gated.store(false, Ordering::Release);
        drop(g);
    }

    /// Whether a task's error waits to be reported by a synchronize.
    pub fn has_error(&self) -> bool {
        self.shared.has_error.load(Ordering::SeqCst)
    }

    /// Tasks enqueued so far (a sequence number: task `n` is done when
    /// [`Stream::completed`] `>= n`).
    pub fn submitted(&self) -> u64 {
        self.shared.submitted.load(Ordering::SeqCst)
    }

    /// Tasks finished (run or discarded) so far.
    pub fn completed(&self) -> u64 {
        self.shared.completed.load(Ordering::SeqCst)
    }

    /// Set what happens after a failed task.
    pub fn set_failure_mode(&self, mode: FailureMode) {
        self.shared
            .stop_on_failure
            .store(mode == FailureMode::Stop, Ordering::SeqCst);
    }

    /// The current failure mode.
    pub fn failure_mode(&self) -> FailureMode {
        if self.shared.stop_on_failure.load(Ordering::SeqCst) {
            FailureMode::Stop
        } else {
            FailureMode::Continue
        }
    }

    /// Install (or remove) the function called when a task of this stream fails.
    pub fn set_error_hook(&self, hook: Option<ErrorHook>) {
        *self.shared.hook.lock() = hook;
    }

    /// Watch (`Some`) or stop watching (`None`) the floating-point status of this stream's
    /// tasks: `hook` runs after a task (or a kernel it launched) that raised an overflow,
    /// invalid or divide-by-zero flag, as an AI Core sets its overflow status.
    pub fn set_overflow_hook(&self, hook: Option<OverflowHook>) {
        let mut g = self.shared.overflow_hook.lock();
        self.shared.watch_fp.store(hook.is_some(), Ordering::SeqCst);
        *g = hook;
    }

    /// Id (`gettid`) of the worker thread, 0 before it started or after it ended.
    pub fn worker_tid(&self) -> u64 {
        self.shared.worker_tid.load(Ordering::SeqCst)
    }

    /// The label given at creation.
    pub fn label(&self) -> &str {
        &self.shared.label
    }

    /// Whether the caller runs inside one of this stream's tasks (on the worker, or on a
    /// host thread that runs the stream's tasks in `synchronize`).
    pub fn is_worker_thread(&self) -> bool {
        self.shared.runner.load(Ordering::SeqCst) == thread_key()
    }

    /// Discard every task not started yet (`aclrtStreamAbort`); a running task finishes.
    /// The stream stays usable. Returns how many tasks were discarded.
    pub fn abort(&self) -> u64 {
        self.drop_gate();
        let s = &self.shared;
        let discarded: Vec<Queued> = {
            let mut q = s.q.lock();
            s.abort_gen.fetch_add(1, Ordering::SeqCst);
            q.tasks.drain(..).collect()
        };
        let n = discarded.len() as u64;
        drop(discarded);
        if n > 0 {
            s.completed.fetch_add(n, Ordering::SeqCst);
            s.done.notify();
        }
        n
    }

    /// Stop the stream: with `force == false` every pending task runs first; with
    /// `force == true` pending tasks are discarded (a running task finishes). Waits for the
    /// worker to exit unless called from one of the stream's tasks. Idempotent.
    pub fn destroy(&self, force: bool) {
        if force {
            self.drop_gate();
        } else {
            self.pass_gate(true);
        }
        let s = &self.shared;
        let discarded: Vec<Queued> = {
            let mut q = s.q.lock();
            q.shutdown = true;
            s.closing.store(true, Ordering::SeqCst);
            if force {
                s.abort_gen.fetch_add(1, Ordering::SeqCst);
                q.tasks.drain(..).collect()
            } else {
                Vec::new()
            }
        };
        let n = discarded.len() as u64;
        drop(discarded);
        if n > 0 {
            s.completed.fetch_add(n, Ordering::SeqCst);
            s.done.notify();
        }
        s.work.bump_wake();
        if self.is_worker_thread() {
            // Called from a task on this stream: the worker exits once the queue is empty.
            let _ = self.worker.lock().take();
            return;
        }
        let handle = self.worker.lock().take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    fn wait_for(&self, target: u64, timeout: Option<Duration>) -> bool {
        wait_for(&self.shared, target, timeout)
    }
}

/// A weak handle on a stream (an event remembers the stream of its latest record).
#[derive(Clone)]
pub struct StreamRef(std::sync::Weak<Shared>);

impl StreamRef {
    /// [`Stream::run_until`]; false (nothing waited for) if the stream is gone or the
    /// caller runs one of its tasks.
    pub fn run_until(&self, n: u64) -> bool {
        let Some(s) = self.0.upgrade() else {
            return false;
        };
        if s.runner.load(Ordering::SeqCst) == thread_key() {
            return false;
        }
        wait_for(&s, n, None)
    }
}

/// Wait until `completed >= target`; false on timeout. Without a timeout, run tasks on
/// this thread whenever the run token is free.
fn wait_for(s: &Arc<Shared>, target: u64, timeout: Option<Duration>) -> bool {
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        let seen = s.completed.load(Ordering::SeqCst);
        if seen >= target {
            return true;
        }
        if timeout.is_none() && run_one(s, Runner::Host) {
            continue;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return s.completed.load(Ordering::SeqCst) >= target;
        }
        // Someone else runs a task (or the next one is the worker's): wait until a task
        // finishes, then look again.
        let progressed = || s.completed.load(Ordering::SeqCst) != seen;
        if !wait_progress(s, progressed, deadline) {
            return s.completed.load(Ordering::SeqCst) >= target;
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.destroy(false);
    }
}

/// Wait (a host thread) until `progressed()`; false if `deadline` passed first.
fn wait_progress(s: &Shared, progressed: impl Fn() -> bool, deadline: Option<Instant>) -> bool {
    if progressed() {
        return true;
    }
    if deadline.is_some_and(|d| d <= Instant::now()) {
        return false;
    }
    let start = Instant::now();
    let cpu = os::current_cpu();
    s.waiter_cpu.store(cpu, Ordering::SeqCst);
    let shared_cpu = cpu >= 0 && cpu == s.worker_cpu.load(Ordering::SeqCst);
    let policy = if s.network_task.load(Ordering::Relaxed) {
        Policy::STREAM.without_polling()
    } else if shared_cpu {
        Policy::STREAM.without_spin()
    } else {
        Policy::STREAM
    };
    let polled = wait::poll(&policy, start, &progressed, deadline);
    s.waiter_cpu.store(-1, Ordering::SeqCst);
    match polled {
        Polled::Ready => true,
        Polled::TimedOut => false,
        Polled::Pending => {
            wait::sleep(&policy, &s.done, &progressed, deadline, || Ok::<(), ()>(())).is_ok()
        }
    }
}

/// Take the next task if the run token is free (and, for a host thread, the task is not
/// reserved for the worker), run it on the calling thread, and count it finished. Returns
/// whether a task was taken.
fn run_one(s: &Arc<Shared>, who: Runner) -> bool {
    let (queued, gen) = {
        let mut q = s.q.lock();
        if q.running {
            return false;
        }
        match q.tasks.front() {
            Some(t) if who == Runner::Worker || !t.worker_only => {}
            _ => return false,
        }
        let Some(queued) = q.tasks.pop_front() else {
            return false;
        };
        q.running = true;
        s.running.store(true, Ordering::SeqCst);
        s.runner.store(thread_key(), Ordering::SeqCst);
        (queued, s.abort_gen.load(Ordering::SeqCst))
    };
    if s.discarding.load(Ordering::SeqCst) || s.abort_gen.load(Ordering::SeqCst) != gen {
        // Stop-on-failure tripped, or aborted since it was taken: it does not run.
        drop(queued);
    } else {
        let outer = CURRENT_TASK.with(|c| c.replace(Some((s.clone(), gen))));
        let outer_network = NETWORK_TASK.with(|n| n.replace(false));
        let watch = s.watch_fp.load(Ordering::Relaxed);
        // A host thread keeps its own floating-point status across the task.
        let fp_before = watch && who == Runner::Host && crate::fpstatus::raised();
        if watch {
            crate::fpstatus::clear();
        }
        let r = npu_emu_ffi::boundary::catch(queued.task);
        if watch && crate::fpstatus::raised() {
            let hook = s.overflow_hook.lock().clone();
            if let Some(h) = hook {
                let _ = npu_emu_ffi::boundary::catch(|| h());
            }
        }
        if fp_before {
            crate::fpstatus::raise();
        }
        CURRENT_TASK.with(|c| *c.borrow_mut() = outer);
        // Until the next task has run, waiters expect one like this one.
        s.network_task.store(
            NETWORK_TASK.with(|n| n.replace(outer_network)),
            Ordering::Relaxed,
        );
        let r = r.unwrap_or_else(|p| {
            Err(Error::new(
                ACL_ERROR_INTERNAL_ERROR,
                format!("a task on {} panicked: {p}", s.label),
            ))
        });
        if let Err(e) = r {
            let hook = s.hook.lock().clone();
            if let Some(h) = hook {
                let seq = s.completed.load(Ordering::SeqCst) + 1;
                let _ = npu_emu_ffi::boundary::catch(|| h(seq, &e));
            }
            let mut q = s.q.lock();
            if q.error.is_none() {
                q.error = Some(e);
            }
            if s.stop_on_failure.load(Ordering::SeqCst) {
                s.discarding.store(true, Ordering::SeqCst);
            }
            s.has_error.store(true, Ordering::SeqCst);
        }
    }
    {
        let mut q = s.q.lock();
        q.running = false;
        s.running.store(false, Ordering::SeqCst);
        s.runner.store(0, Ordering::SeqCst);
        s.completed.fetch_add(1, Ordering::SeqCst);
    }
    s.done.notify();
    if who == Runner::Host
        && (s.submitted.load(Ordering::SeqCst) > s.completed.load(Ordering::SeqCst)
            || s.closing.load(Ordering::SeqCst))
    {
        // Tasks are left (or the stream closes): the worker takes over.
        s.work.notify();
    }
    true
}

thread_local! {
    /// The calling thread runs a stream's gate (which must not wait for itself).
    static IN_GATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The calling thread's last submission: (stream key, task number; 0 = captured).
    static LAST_SUBMIT: std::cell::Cell<(usize, u64)> = const { std::cell::Cell::new((0, 0)) };
    /// While the calling thread runs a stream task (as the stream's worker or inside a
    /// synchronize): its stream and the abort generation when the task was taken.
    static CURRENT_TASK: std::cell::RefCell<Option<(Arc<Shared>, u64)>> =
        const { std::cell::RefCell::new(None) };
    /// The task running on the calling thread said it waits for other servers.
    static NETWORK_TASK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The calling thread's last task: the stream's [`Stream::key`] and the task's number on it
/// (1-based; 0 for a task a capture took). `None` before its first.
pub fn last_submission() -> Option<(usize, u64)> {
    let (k, n) = LAST_SUBMIT.with(|l| l.get());
    (k != 0).then_some((k, n))
}

/// Whether the task running on the calling thread (a stream's worker, or a host thread
/// running the stream's tasks in a synchronize) was aborted since it started
/// (`aclrtStreamAbort`, `aclrtDeviceTaskAbort`, a forced destroy): a task that blocks
/// (waits on a notify or another process) checks this now and then and gives up. False
/// outside a stream task.
pub fn task_aborted() -> bool {
    CURRENT_TASK.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|(s, gen)| s.abort_gen.load(Ordering::SeqCst) != *gen)
    })
}

/// The task running on the calling thread spends its time waiting for other servers (an
/// HCCL collective across servers, milliseconds of network transfers): host threads waiting
/// for its stream sleep at once rather than poll ([`Policy::without_polling`]), now and
/// until a task that does not say so has run. No effect outside a stream task.
/// Never panics (it is called across the C boundary): outside a task, or on a thread whose
/// thread-locals are gone, it does nothing.
pub fn task_waits_for_network() {
    let _ = CURRENT_TASK.try_with(|c| {
        if let Ok(c) = c.try_borrow() {
            if let Some((s, _)) = c.as_ref() {
                let _ = NETWORK_TASK.try_with(|n| n.set(true));
                s.network_task.store(true, Ordering::Relaxed);
            }
        }
    });
}

fn worker(s: Arc<Shared>) {
    s.worker_tid.store(os::gettid(), Ordering::SeqCst);
    loop {
        #[cfg(test)]
        if s.hold_worker.load(Ordering::SeqCst) && !s.closing.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        if run_one(&s, Runner::Worker) {
            continue;
        }
        {
            let q = s.q.lock();
            if q.shutdown && q.tasks.is_empty() && !q.running {
                drop(q);
                s.worker_tid.store(0, Ordering::SeqCst);
                return;
            }
        }
        // Idle, or a host thread runs the tasks: wait until there is a task to take (the
        // run token free) or the stream closes. If a host thread waits for us on this very
        // CPU, skip the spin: it would only delay it.
        let has_work = || {
            !s.running.load(Ordering::SeqCst)
                && (s.submitted.load(Ordering::SeqCst) > s.completed.load(Ordering::SeqCst)
                    || s.closing.load(Ordering::SeqCst))
        };
        let cpu = os::current_cpu();
        s.worker_cpu.store(cpu, Ordering::SeqCst);
        let shared_cpu = cpu >= 0 && cpu == s.waiter_cpu.load(Ordering::SeqCst);
        let policy = if shared_cpu {
            Policy::STREAM.without_spin()
        } else {
            Policy::STREAM
        };
        let _ = wait::wait_until(&policy, &s.work, has_work, None, || Ok::<(), ()>(()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn runs_in_order_and_syncs() {
        let st = Stream::new("test stream").unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        for i in 0..100 {
            let l = log.clone();
            st.enqueue(Box::new(move || {
                l.lock().push(i);
                Ok(())
            }))
            .unwrap();
        }
        st.synchronize(None).unwrap();
        assert_eq!(*log.lock(), (0..100).collect::<Vec<_>>());
        assert!(st.is_idle());
        st.synchronize(Some(Duration::ZERO)).unwrap();
    }

    /// A task that waits for other servers makes waiters sleep until a task that does not
    /// say so has run; outside a task the call does nothing.
    #[test]
    fn a_network_task_marks_its_stream_until_an_ordinary_one_runs() {
        task_waits_for_network();
        let st = Stream::new("net").unwrap();
        let flag = |st: &Stream| st.shared.network_task.load(Ordering::Relaxed);
        assert!(!flag(&st));
        let seen = Arc::new(AtomicBool::new(false));
        let s2 = st.shared.clone();
        let seen2 = seen.clone();
        st.enqueue(Box::new(move || {
            task_waits_for_network();
            // Seen at once by waiters of the running task.
            seen2.store(s2.network_task.load(Ordering::Relaxed), Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        st.synchronize(None).unwrap();
        assert!(seen.load(Ordering::SeqCst));
        assert!(flag(&st), "the mark outlives its task");
        st.enqueue(Box::new(|| Ok(()))).unwrap();
        st.synchronize(None).unwrap();
        assert!(!flag(&st), "an ordinary task clears it");
        // Outside any task: no effect on the stream, no panic.
        task_waits_for_network();
        assert!(!flag(&st));
    }

    #[test]
    fn first_error_reported_once() {
        let st = Stream::new("err").unwrap();
        st.enqueue(Box::new(|| Err(Error::invalid("first"))))
            .unwrap();
        st.enqueue(Box::new(|| Err(Error::invalid("second"))))
            .unwrap();
        let e = st.synchronize(None).unwrap_err();
        assert_eq!(e.msg, "first");
        st.synchronize(None).unwrap();
    }

    #[test]
    fn stop_on_failure_discards_until_sync() {
        let st = Stream::new("stop").unwrap();
        st.set_failure_mode(FailureMode::Stop);
        let ran = Arc::new(AtomicUsize::new(0));
        st.enqueue(Box::new(|| Err(Error::invalid("boom"))))
            .unwrap();
        for _ in 0..5 {
            let r = ran.clone();
            st.enqueue(Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
        }
        assert!(st.synchronize(None).is_err());
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        let r = ran.clone();
        st.enqueue(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        st.synchronize(None).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn timeout_and_poll() {
        let st = Stream::new("slow").unwrap();
        let gate = Arc::new(AtomicBool::new(false));
        let g = gate.clone();
        st.enqueue(Box::new(move || {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        let e = st.synchronize(Some(Duration::ZERO)).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        let e = st.synchronize(Some(Duration::from_millis(20))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert!(!st.is_idle());
        gate.store(true, Ordering::SeqCst);
        st.synchronize(None).unwrap();
    }

    #[test]
    fn destroy_waits_and_force_discards() {
        let ran = Arc::new(AtomicUsize::new(0));
        let st = Stream::new("d").unwrap();
        for _ in 0..10 {
            let r = ran.clone();
            st.enqueue(Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
        }
        st.destroy(false);
        assert_eq!(ran.load(Ordering::SeqCst), 10);
        assert!(st.enqueue(Box::new(|| Ok(()))).is_err());

        let st = Stream::new("f").unwrap();
        let gate = Arc::new(AtomicBool::new(false));
        let g = gate.clone();
        st.enqueue(Box::new(move || {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        let r = ran.clone();
        st.enqueue(Box::new(move || {
            r.fetch_add(100, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let g2 = gate.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            g2.store(true, Ordering::SeqCst);
        });
        st.destroy(true);
        t.join().unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 10);
    }

    #[test]
    fn many_producers_and_synchronizers() {
        let st = Arc::new(Stream::new("mp").unwrap());
        let n = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (st, n) = (st.clone(), n.clone());
                std::thread::spawn(move || {
                    for i in 0..5000 {
                        let n = n.clone();
                        st.enqueue(Box::new(move || {
                            n.fetch_add(1, Ordering::SeqCst);
                            Ok(())
                        }))
                        .unwrap();
                        if (i + t) % 97 == 0 {
                            st.synchronize(None).unwrap();
                        }
                    }
                    st.synchronize(None).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        st.synchronize(None).unwrap();
        assert_eq!(n.load(Ordering::SeqCst), 20000);
        assert!(st.is_idle());
    }

    #[test]
    fn sleeping_worker_wakes_up() {
        let st = Stream::new("sleepy").unwrap();
        for _ in 0..3 {
            // Long enough for the worker to go through spin and yield into its sleep.
            std::thread::sleep(Duration::from_millis(5));
            let done = Arc::new(AtomicBool::new(false));
            let d = done.clone();
            st.enqueue(Box::new(move || {
                d.store(true, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
            st.synchronize(Some(Duration::from_secs(10))).unwrap();
            assert!(done.load(Ordering::SeqCst));
        }
    }

    #[test]
    fn error_hook_sees_failed_task_number() {
        let st = Stream::new("hook").unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        st.set_error_hook(Some(Arc::new(move |n, e: &Error| {
            s2.lock().push((n, e.code))
        })));
        st.enqueue(Box::new(|| Ok(()))).unwrap();
        st.enqueue(Box::new(|| Err(Error::new(7, "x")))).unwrap();
        assert!(st.synchronize(None).is_err());
        assert_eq!(*seen.lock(), vec![(2, 7)]);
    }

    #[test]
    fn panics_become_errors() {
        let st = Stream::new("p").unwrap();
        st.enqueue(Box::new(|| panic!("oops"))).unwrap();
        let e = st.synchronize(None).unwrap_err();
        assert!(e.msg.contains("oops"), "{}", e.msg);
    }

    #[test]
    fn a_gate_runs_before_what_is_enqueued_after_it() {
        let st = Stream::new("gate").unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let ready = Arc::new(AtomicBool::new(false));
        let (l, r) = (log.clone(), ready.clone());
        st.set_gate(Box::new(move |block| {
            if !block && !r.load(Ordering::SeqCst) {
                return Ok(false);
            }
            l.lock().push("gate");
            Ok(true)
        }));
        assert!(st.is_gated() && st.is_idle(), "a gate is not a task");
        assert!(
            !st.query(),
            "a query does not wait for it, and it is not done"
        );
        ready.store(true, Ordering::SeqCst);
        assert!(st.query(), "done once it can finish");
        assert!(!st.is_gated());
        // Enqueueing runs a pending gate first (waiting for it).
        let l = log.clone();
        st.set_gate(Box::new(move |_| {
            l.lock().push("gate2");
            Ok(true)
        }));
        let l = log.clone();
        st.enqueue(Box::new(move || {
            l.lock().push("task");
            Ok(())
        }))
        .unwrap();
        st.synchronize(None).unwrap();
        assert_eq!(*log.lock(), vec!["gate", "gate2", "task"]);
        // A gate's error is the stream's, reported once by the next synchronize.
        st.set_gate(Box::new(|_| Err(Error::invalid("peer gone".to_string()))));
        let e = st.synchronize(None).unwrap_err();
        assert!(e.msg.contains("peer gone"), "{}", e.msg);
        st.synchronize(None).unwrap();
        // Abort drops a gate without running it.
        let l = log.clone();
        st.set_gate(Box::new(move |_| {
            l.lock().push("dropped");
            Ok(true)
        }));
        st.abort();
        st.synchronize(None).unwrap();
        assert!(!log.lock().contains(&"dropped"));
    }

    fn held(label: &str) -> Stream {
        let st = Stream::new(label).unwrap();
        st.shared.hold_worker.store(true, Ordering::SeqCst);
        st
    }

    #[test]
    fn synchronize_runs_tasks_on_the_calling_thread() {
        let st = held("inline");
        let me = os::gettid();
        let ran = Arc::new(Mutex::new(Vec::new()));
        let hooked = Arc::new(Mutex::new(Vec::new()));
        let h2 = hooked.clone();
        st.set_error_hook(Some(Arc::new(move |n, _e: &Error| {
            h2.lock().push((n, os::gettid()))
        })));
        for i in 0..5u32 {
            let r = ran.clone();
            st.enqueue(Box::new(move || {
                r.lock().push((i, os::gettid()));
                if i == 2 {
                    return Err(Error::invalid("task 3 fails"));
                }
                Ok(())
            }))
            .unwrap();
        }
        let e = st.synchronize(None).unwrap_err();
        assert_eq!(e.msg, "task 3 fails");
        let ran = ran.lock().clone();
        assert_eq!(
            ran.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        assert!(ran.iter().all(|r| r.1 == me), "{ran:?} vs {me}");
        assert_eq!(*hooked.lock(), vec![(3, me)]);
        assert!(st.is_idle());
        st.synchronize(None).unwrap();
    }

    #[test]
    fn worker_only_tasks_wait_for_the_worker() {
        let st = Arc::new(held("pinned"));
        let ran = Arc::new(Mutex::new(Vec::new()));
        for (i, pinned) in [(0, false), (1, true), (2, false)] {
            let r = ran.clone();
            let op = Op::run("test", format!("task {i}"), move || {
                r.lock().push((i, os::gettid()));
                Ok(())
            });
            if pinned {
                st.enqueue_op_on_worker(op).unwrap();
            } else {
                st.enqueue_op(op).unwrap();
            }
        }
        let s2 = st.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            s2.shared.hold_worker.store(false, Ordering::SeqCst);
        });
        st.synchronize(None).unwrap();
        t.join().unwrap();
        let ran = ran.lock().clone();
        assert_eq!(ran.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(ran[0].1, os::gettid(), "the first task ran on the caller");
        assert_eq!(
            ran[1].1,
            st.worker_tid(),
            "the pinned task ran on the worker"
        );
    }

    #[test]
    fn a_synchronize_with_a_timeout_runs_nothing() {
        let st = held("timed");
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        st.enqueue(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        let e = st.synchronize(Some(Duration::from_millis(20))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        st.shared.hold_worker.store(false, Ordering::SeqCst);
        st.synchronize(Some(Duration::from_secs(30))).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_task_run_by_a_host_thread_cannot_synchronize_its_stream() {
        let st = Arc::new(held("self"));
        let seen = Arc::new(Mutex::new(None));
        let (s2, seen2) = (Arc::downgrade(&st), seen.clone());
        st.enqueue(Box::new(move || {
            let st = s2.upgrade().unwrap();
            assert!(st.is_worker_thread());
            *seen2.lock() = Some(st.synchronize(None).map_err(|e| e.msg));
            Ok(())
        }))
        .unwrap();
        st.synchronize(None).unwrap();
        let got = seen.lock().clone().unwrap();
        assert!(
            got.as_ref()
                .unwrap_err()
                .contains("from one of its own tasks"),
            "{got:?}"
        );
        assert!(!st.is_worker_thread());
    }

    #[test]
    fn abort_and_destroy_with_a_host_runner() {
        // A host thread runs a long task; abort discards what follows; destroy waits.
        let st = Arc::new(held("abort"));
        let gate = Arc::new(AtomicBool::new(false));
        let ran = Arc::new(AtomicUsize::new(0));
        let g = gate.clone();
        st.enqueue(Box::new(move || {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        for _ in 0..3 {
            let r = ran.clone();
            st.enqueue(Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
        }
        let s2 = st.clone();
        let t = std::thread::spawn(move || s2.synchronize(None));
        while st.shared.runner.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(st.abort(), 3);
        gate.store(true, Ordering::SeqCst);
        t.join().unwrap().unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        let r = ran.clone();
        st.enqueue(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        st.destroy(false);
        assert_eq!(
            ran.load(Ordering::SeqCst),
            1,
            "destroy ran the pending task"
        );
    }
}
