//! Emulated AI cores: the threads that run the blocks of an Ascend C kernel launch.
//!
//! A device has one [`AiCorePool`] (kept by the runtime, created on the first launch) with
//! `cores` emulated cores ([`SocCores::launch_cores`] of the emulated SoC: its vector cores,
//! 48 on Ascend910B1, 40 on Ascend910B4; its AI cores on Ascend310P3): at most that many
//! blocks run at the same time, and blocks beyond the core count wait for a free core (as on
//! hardware, where `blockDim` is a count of logical cores scheduled onto the physical ones).
//!
//! [`AiCorePool::run`] is called by a stream task (so launches complete in stream order) and
//! returns when every block has returned. Launches from several streams of one device share
//! the pool. A failed block fails the launch: blocks not started yet are skipped, blocks
//! already running finish, and the failure of the lowest failed block index is reported
//! (always the same block for a given kernel: blocks start in index order, so every block
//! below the lowest failing one runs).
//!
//! Who runs the blocks. The host has a few CPUs, the emulated device dozens of cores, and a
//! thread hand-off costs 3–30 µs (a futex wake-up, more when the other CPU is idle in a VM),
//! so a launch does not wake a thread per block:
//! - the launching thread (the stream's worker, or a host thread running the stream's tasks)
//!   runs blocks itself, one after another, when it has a main thread's stack
//!   ([`CORE_STACK`]; otherwise helper threads run them all);
//! - blocks still waiting [`SPREAD_AFTER`] after the launch began get helper threads of the
//!   pool, one per host CPU, which take blocks the same way;
//! - a launch whose blocks are still waiting [`ALL_RESIDENT_AFTER`] after it began, or one
//!   of whose blocks waits in `SyncAll` for the others, gets a thread for every block up to
//!   the core count: on hardware the blocks of a launch with `blockDim` at most the cores
//!   all run at once, and kernels may rely on it (`SyncAll`, flags in GM), so they do here,
//!   only a little later. A watcher thread per pool, ticking only while launches run,
//!   applies the two delays when the launching thread is itself inside a long block.
//!
//! Helper threads (up to `cores`, with [`CORE_STACK`] each) are started when first needed.
//!
//! While a block runs, its thread carries the kernel name and block index in a thread-local
//! read by the SIGSEGV handler ([`crate::fault::set_kernel_context`]), so a raw dereference
//! of a device pointer inside kernel code is reported as "kernel K block i/n ...".

use crate::error::{Error, Result};
use crate::wait::{self, Policy, Word};
use npu_emu_ffi::os;
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `ACL_ERROR_RT_AICORE_EXCEPTION` (abi.md §1.5 B): a kernel failed on an AI core.
pub const ACL_ERROR_RT_AICORE_EXCEPTION: i32 = 507015;

/// Largest `blockDim` of a launch (Ascend C: "blockDim是逻辑核的概念，取值范围为[1,65535]").
pub const MAX_BLOCK_DIM: u32 = 65535;

/// Stack of a thread that runs blocks: kernels keep their local tensors' bookkeeping and
/// sometimes sizeable arrays on the stack, so give them what a main thread gets. Stream
/// workers get it too, since they run blocks.
pub const CORE_STACK: usize = 8 << 20;

/// A launching thread runs blocks itself only with at least this much stack left (a main
/// thread or a default pthread has 8 MiB; a thread made with a small stack leaves the
/// blocks to the pool's threads).
const CALLER_STACK_MIN: usize = 6 << 20;

/// Blocks of a launch still unclaimed this long after it began get helper threads, one per
/// host CPU. Below it a launch of small blocks runs on the launching thread alone, with no
/// thread to wake (a wake-up of an idle CPU costs ~26 µs on the VM of
/// `reference/performance.md`).
pub const SPREAD_AFTER: Duration = Duration::from_micros(50);

/// Blocks of a launch still unclaimed this long after it began get a thread each, up to
/// the core count (blocks that wait for each other all run, as on hardware).
pub const ALL_RESIDENT_AFTER: Duration = Duration::from_millis(1);

/// The watcher's tick while launches run.
const WATCH_TICK: Duration = Duration::from_micros(500);

/// The watcher sleeps until the next launch after this long without one.
const WATCH_IDLE: Duration = Duration::from_millis(100);

/// Core counts of a SoC, from the `[SoCInfo]` section of CANN's platform file
/// `data/platform_config/<SoC>.ini` (`ai_core_cnt`, `cube_core_cnt`, `vector_core_cnt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocCores {
    /// `ai_core_cnt` (`ACL_DEV_ATTR_AICORE_CORE_NUM`, `ACL_DEVICE_INFO_AI_CORE_NUM`).
    pub ai_core: u32,
    /// `cube_core_cnt` (`ACL_DEV_ATTR_CUBE_CORE_NUM`).
    pub cube_core: u32,
    /// `vector_core_cnt` (`ACL_DEV_ATTR_VECTOR_CORE_NUM`, `ACL_DEVICE_INFO_VECTOR_CORE_NUM`).
    pub vector_core: u32,
    /// Separated (分离) architecture: vector (AIV) and cube (AIC) cores are distinct, and a
    /// vector kernel's blocks run on the vector cores. Coupled (耦合, Ascend310P): each AI
    /// core has both units, and blocks run on the AI cores.
    pub separated: bool,
}

impl SocCores {
    /// How many blocks of a vector kernel run at once: the vector cores on a separated SoC,
    /// the AI cores on a coupled one (Ascend C: "耦合模式 ... BlockDim用于设置启动多个AI Core
    /// 核实例执行"; "分离模式 ... 启动多少个Vector(AIV)实例执行").
    pub fn launch_cores(&self) -> u32 {
        if self.separated {
            self.vector_core
        } else {
            self.ai_core
        }
    }
}

/// The core counts of `soc` (an `NPU_EMU_SOC` / `aclrtGetSocName` name). Known: Ascend910B1,
/// B2, B2C (24 AI / 48 vector cores), Ascend910B3, B4, B4-1 (20 / 40), Ascend910_93xx
/// (24 / 48 per die), Ascend310P3 (8 AI cores, coupled, 7 extra vector cores). Any other name
/// gets the Ascend910B1 counts, the emulator's default SoC.
pub fn soc_cores(soc: &str) -> SocCores {
    let sep = |ai, vec| SocCores {
        ai_core: ai,
        cube_core: ai,
        vector_core: vec,
        separated: true,
    };
    match soc {
        "Ascend910B3" | "Ascend910B4" | "Ascend910B4-1" => sep(20, 40),
        "Ascend310P3" => SocCores {
            ai_core: 8,
            cube_core: 8,
            vector_core: 7,
            separated: false,
        },
        // Ascend910B1, B2, B2C, the Ascend910_93 family, and the default for other names.
        _ => sep(24, 48),
    }
}

/// Runs one block: `(block_idx) -> Ok(()) | Err(message)`.
pub type BlockFn<'a> = dyn Fn(u32) -> std::result::Result<(), String> + Sync + 'a;

/// Set in a launch's `next` word once one of its blocks failed: claimed together with the
/// block index, so the decision to skip a block is atomic with its claim.
const FAILED: u64 = 1 << 63;

/// One launch being executed.
struct Job {
    kernel: String,
    block_dim: u32,
    /// Next block index to hand out, with [`FAILED`].
    next: AtomicU64,
    /// Blocks finished or skipped.
    finished: AtomicU32,
    /// Failures: (block index, message).
    errors: Mutex<Vec<(u32, String)>>,
    /// A block raised a floating-point overflow, invalid or divide-by-zero flag.
    fp_raised: AtomicBool,
    /// The block function, lifetime-erased: valid until the job is finished, because
    /// [`AiCorePool::run`] does not return before.
    body: BodyPtr,
    start: Instant,
    /// Notified when the last block finished.
    done: Word,
    /// How far the launch was spread: 0 the launching thread only, 1 a helper per CPU, 2 a
    /// thread per block up to the core count.
    spread: AtomicU8,
}

impl Job {
    /// Blocks not handed out yet.
    fn unclaimed(&self) -> u32 {
        let next = self.next.load(Ordering::SeqCst) & !FAILED;
        (self.block_dim as u64).saturating_sub(next) as u32
    }

    fn is_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst) >= self.block_dim
    }
}

#[derive(Clone, Copy)]
struct BodyPtr(*const BlockFn<'static>);
// SAFETY: points to a `Sync` closure that `run` keeps alive while any block can call it.
unsafe impl Send for BodyPtr {}
// SAFETY: as for Send: the closure is `Sync`, so sharing the pointer between cores is sound.
unsafe impl Sync for BodyPtr {}

struct State {
    /// Launches with blocks that helpers may take, oldest first.
    jobs: VecDeque<Arc<Job>>,
    threads: u32,
    watcher_started: bool,
    /// The watcher sleeps until a launch wakes it.
    watcher_asleep: bool,
    last_launch: Instant,
}

struct Inner {
    label: String,
    cores: u32,
    state: Mutex<State>,
    /// Idle helper threads wait on it.
    work: Condvar,
    /// The watcher waits on it.
    watch: Condvar,
    /// Blocks running now (claimed, not finished), at most `cores`.
    busy: AtomicU32,
    /// Process that created the pool: a forked child has none of its threads.
    pid: u32,
    next_thread: AtomicU32,
}

/// The AI cores of one device.
pub struct AiCorePool {
    inner: Arc<Inner>,
}

thread_local! {
    /// While a block runs on this thread: its pool and launch (for `SyncAll`, which needs
    /// every block of the launch running). Valid while the block runs.
    static CURRENT: Cell<(*const Arc<Inner>, *const Arc<Job>)> =
        const { Cell::new((std::ptr::null(), std::ptr::null())) };
    /// Lowest address of the calling thread's stack (0 = not known yet, 1 = unknown).
    static STACK_LOW: Cell<usize> = const { Cell::new(0) };
}

/// Whether the calling thread has [`CALLER_STACK_MIN`] bytes of stack left.
fn caller_stack_ok() -> bool {
    let mut low = STACK_LOW.with(|s| s.get());
    if low == 0 {
        low = stack_low().unwrap_or(1);
        STACK_LOW.with(|s| s.set(low));
    }
    let here = &low as *const usize as usize;
    low > 1 && here > low && here - low >= CALLER_STACK_MIN
}

/// Lowest address of the calling thread's stack (`pthread_getattr_np`).
fn stack_low() -> Option<usize> {
    // SAFETY: `attr` is initialised by pthread_getattr_np before use and destroyed after;
    // the out-pointers are valid locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let r = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (r == 0 && !addr.is_null()).then_some(addr as usize)
    }
}

/// Called by a block about to wait for the other blocks of its launch (`SyncAll`): make
/// sure every block of the launch (up to the core count) gets a thread now. Does nothing
/// outside a block.
pub fn block_waits_for_others() {
    let (inner, job) = CURRENT.with(|c| c.get());
    if inner.is_null() || job.is_null() {
        return;
    }
    // SAFETY: set by `run_block` to its pool and job, both alive while the block runs (and
    // this function is called from inside the block).
    let (inner, job) = unsafe { (&*inner, &*job) };
    spread(inner, job, 2);
}

impl Inner {
    /// Take a core and the next block of `job`: `(index, skip)`; `None` if every block was
    /// handed out or every core is busy.
    fn claim(&self, job: &Job) -> Option<(u32, bool)> {
        if job.unclaimed() == 0 {
            return None;
        }
        let mut b = self.busy.load(Ordering::SeqCst);
        loop {
            if b >= self.cores {
                return None;
            }
            match self
                .busy
                .compare_exchange_weak(b, b + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => break,
                Err(x) => b = x,
            }
        }
        let v = job.next.fetch_add(1, Ordering::SeqCst);
        let idx = v & !FAILED;
        if idx >= job.block_dim as u64 {
            self.release_core();
            return None;
        }
        Some((idx as u32, v & FAILED != 0))
    }

    fn release_core(&self) {
        if self.busy.fetch_sub(1, Ordering::SeqCst) == self.cores {
            // Every core was busy: a helper may wait for one. Notify under the state lock:
            // a helper checks `busy` and starts waiting under it, so it cannot miss this.
            let _st = self.state.lock();
            self.work.notify_one();
        }
    }
}

/// Clear the calling thread's floating-point flags before it runs blocks of one launch
/// (testing them is much cheaper than clearing them: glibc's feclearexcept saves and reloads
/// the whole x87 environment).
fn fp_begin() {
    if crate::fpstatus::raised() {
        crate::fpstatus::clear();
    }
}

/// Run block `idx` of `job` on the calling thread (skipped: count it only) and count it
/// finished. A thread calls [`fp_begin`] before it runs blocks; a block that raises a flag
/// clears it again, so the flags are clear before each block.
fn run_block(inner: &Arc<Inner>, job: &Arc<Job>, idx: u32, skip: bool) {
    let result = if skip {
        Ok(())
    } else {
        let saved = CURRENT.with(|c| c.replace((inner as *const _, job as *const _)));
        crate::fault::set_kernel_context(Some((&job.kernel, idx, job.block_dim)));
        // SAFETY: `run` keeps the closure alive until this block is counted finished.
        let r = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.body.0)(idx) }));
        // Before the block is counted finished: `run` reads `fp_raised` then.
        if crate::fpstatus::raised() {
            job.fp_raised.store(true, Ordering::SeqCst);
            crate::fpstatus::clear();
        }
        crate::fault::set_kernel_context(None);
        CURRENT.with(|c| c.set(saved));
        match r {
            Ok(r) => r,
            Err(_) => Err(format!(
                "kernel {} block {idx}/{}: internal error in the AI-core emulation",
                job.kernel, job.block_dim
            )),
        }
    };
    if let Err(msg) = result {
        job.next.fetch_or(FAILED, Ordering::SeqCst);
        job.errors.lock().push((idx, msg));
    }
    inner.release_core();
    // The last count releases `run`, which may then drop the closure: nothing of the block
    // is touched after it but the job itself (kept alive by our `Arc`).
    if job.finished.fetch_add(1, Ordering::SeqCst) + 1 == job.block_dim {
        job.done.notify();
    }
}

/// Give `job` more threads: level 1, a helper per host CPU; level 2, a thread per block up
/// to the core count. Each level is applied once. Returns false if the pool has no helper
/// thread at all (none could be started).
fn spread(inner: &Arc<Inner>, job: &Job, level: u8) -> bool {
    if job.spread.fetch_max(level, Ordering::SeqCst) >= level {
        return true;
    }
    let unclaimed = job.unclaimed();
    if unclaimed == 0 {
        return true;
    }
    let want = if level >= 2 {
        inner.cores
    } else {
        os::online_cpus().min(inner.cores)
    }
    .min(job.block_dim);
    let mut st = inner.state.lock();
    while st.threads < want {
        let n = inner.next_thread.fetch_add(1, Ordering::Relaxed);
        let i2 = inner.clone();
        let name: String = format!("aicore{n}-{}", inner.label.replace("device ", "d"))
            .chars()
            .take(15)
            .collect();
        match std::thread::Builder::new()
            .name(name)
            .stack_size(CORE_STACK)
            .spawn(move || core_thread(i2))
        {
            Ok(_) => st.threads += 1,
            Err(_) => {
                break; // run with the threads we have
            }
        }
    }
    let any = st.threads > 0;
    drop(st);
    for _ in 0..unclaimed.min(want) {
        inner.work.notify_one();
    }
    any
}

impl AiCorePool {
    /// A pool of up to `cores` (>= 1) emulated cores; `label` names the device in thread
    /// names and messages (e.g. `"device 0"`). No thread is started yet.
    pub fn new(label: &str, cores: u32) -> AiCorePool {
        AiCorePool {
            inner: Arc::new(Inner {
                label: label.to_string(),
                cores: cores.max(1),
                state: Mutex::new(State {
                    jobs: VecDeque::new(),
                    threads: 0,
                    watcher_started: false,
                    watcher_asleep: false,
                    last_launch: Instant::now(),
                }),
                work: Condvar::new(),
                watch: Condvar::new(),
                busy: AtomicU32::new(0),
                pid: std::process::id(),
                next_thread: AtomicU32::new(0),
            }),
        }
    }

    /// Whether the pool's threads belong to this process (false in a forked child).
    pub fn is_usable(&self) -> bool {
        self.inner.pid == std::process::id()
    }

    /// Number of cores (the most blocks that run at once).
    pub fn cores(&self) -> u32 {
        self.inner.cores
    }

    /// Helper threads started so far.
    pub fn threads(&self) -> u32 {
        self.inner.state.lock().threads
    }

    /// Run blocks `0..block_dim` of `kernel` with `body` and wait for all of them. An error
    /// (`ACL_ERROR_RT_AICORE_EXCEPTION`) carries the message of the lowest failed block.
    pub fn run(&self, kernel: &str, block_dim: u32, body: &BlockFn<'_>) -> Result<()> {
        if block_dim == 0 {
            return Ok(());
        }
        let inner = &self.inner;
        // SAFETY: only the lifetime is erased; `run` waits below until every block that
        // could call `body` has returned (finished == block_dim), and a skipped block never
        // calls it.
        let body: *const BlockFn<'static> = unsafe { std::mem::transmute(body) };
        let job = Arc::new(Job {
            kernel: kernel.to_string(),
            block_dim,
            next: AtomicU64::new(0),
            finished: AtomicU32::new(0),
            errors: Mutex::new(Vec::new()),
            fp_raised: AtomicBool::new(false),
            body: BodyPtr(body),
            start: Instant::now(),
            done: Word::new(),
            spread: AtomicU8::new(0),
        });
        // Blocks run on this thread clear its floating-point status: keep what it had.
        let fp_before = crate::fpstatus::raised();
        let mut caller_runs = caller_stack_ok();
        // One block on a thread that can run it needs nobody else.
        let shared = block_dim > 1 || !caller_runs;
        if shared {
            self.publish(&job);
        }
        if !caller_runs && !spread(inner, &job, 1) {
            // No helper thread could be started: run the blocks here after all.
            caller_runs = true;
        }
        if caller_runs {
            fp_begin();
            while let Some((idx, skip)) = inner.claim(&job) {
                run_block(inner, &job, idx, skip);
                // The clock is read after every 4th block only (tiny blocks take ~0.1 µs,
                // a clock read in a VM a good part of that); the watcher spreads a launch
                // whose blocks are long.
                if idx % 4 == 3
                    && job.spread.load(Ordering::Relaxed) == 0
                    && job.unclaimed() > 0
                    && job.start.elapsed() >= SPREAD_AFTER
                {
                    spread(inner, &job, 1);
                }
            }
            if job.unclaimed() > 0 {
                // Every core is busy with other launches: helpers take the rest.
                spread(inner, &job, 1);
            }
        }
        // Wait for the blocks other threads run.
        let done = || job.is_finished();
        if !done() {
            let _ = wait::wait_until(&Policy::STREAM, &job.done, done, None, || Ok::<(), ()>(()));
        }
        if shared {
            let mut st = inner.state.lock();
            st.jobs.retain(|j| !Arc::ptr_eq(j, &job));
        }
        if fp_before || job.fp_raised.load(Ordering::SeqCst) {
            // Pass the blocks' floating-point status on to the launching thread (the stream
            // task that launched them tests it), and keep what it had before.
            crate::fpstatus::raise();
        }
        let mut errors = std::mem::take(&mut *job.errors.lock());
        if errors.is_empty() {
            return Ok(());
        }
        errors.sort_by_key(|(i, _)| *i);
        let (_, msg) = errors.swap_remove(0);
        let more = errors.len();
        let msg = if more > 0 {
            format!(
                "{msg} (and {more} more failed block{} of this launch)",
                if more == 1 { "" } else { "s" }
            )
        } else {
            msg
        };
        Err(Error::new(ACL_ERROR_RT_AICORE_EXCEPTION, msg))
    }

    /// Make `job`'s blocks available to helper threads, and have the watcher look after it.
    fn publish(&self, job: &Arc<Job>) {
        let inner = &self.inner;
        let mut st = inner.state.lock();
        st.jobs.push_back(job.clone());
        st.last_launch = job.start;
        if !st.watcher_started {
            let i2 = inner.clone();
            let name: String = format!("aicore-w-{}", inner.label.replace("device ", "d"))
                .chars()
                .take(15)
                .collect();
            // Without a watcher, the launching thread and SyncAll still spread launches.
            st.watcher_started = std::thread::Builder::new()
                .name(name)
                .spawn(move || watcher(i2))
                .is_ok();
        } else if st.watcher_asleep {
            st.watcher_asleep = false;
            inner.watch.notify_one();
        }
    }
}

/// The all-block barrier of one launch (`AscendC::SyncAll`).
///
/// Every block of the launch must arrive before any leaves. On hardware that needs every block
/// resident at once (blockDim at most the cores), and a block that returns without arriving,
/// or fails, leaves the others waiting forever: here those cases fail the waiting blocks with a
/// message instead.
pub struct LaunchSync {
    block_num: u32,
    cores: u32,
    state: Mutex<SyncState>,
    cv: Condvar,
}

#[derive(Default)]
struct SyncState {
    /// Blocks waiting at the current barrier.
    waiting: u32,
    /// Blocks that have returned (done).
    finished: u32,
    /// Lowest block that failed.
    failed: Option<u32>,
    /// Barriers completed.
    generation: u64,
    /// Why the barrier can never complete, once found: every waiting block reports the
    /// same cause (not "block b failed" for a block that failed only because of it).
    stuck: Option<String>,
}

impl LaunchSync {
    /// The barrier of a launch of `block_num` blocks on a pool of `cores` cores.
    pub fn new(block_num: u32, cores: u32) -> LaunchSync {
        LaunchSync {
            block_num,
            cores,
            state: Mutex::new(SyncState::default()),
            cv: Condvar::new(),
        }
    }

    fn stuck(&self, st: &mut SyncState) -> Option<String> {
        if st.stuck.is_none() {
            if let Some(f) = st.failed {
                st.stuck = Some(format!(
                    "SyncAll: block {f} failed, so the blocks waiting in SyncAll can never continue"
                ));
            } else if st.finished > 0 && st.waiting + st.finished == self.block_num {
                st.stuck = Some(format!(
                    "SyncAll: {} of the {} blocks returned from the kernel without calling SyncAll; on hardware the \
                     others wait for them forever",
                    st.finished, self.block_num
                ));
            }
        }
        st.stuck.clone()
    }

    /// Block `idx` arrives; returns when every block has arrived (or why they never will).
    pub fn arrive(&self, idx: u32) -> std::result::Result<(), String> {
        let _ = idx;
        if self.block_num > self.cores {
            return Err(format!(
                "SyncAll with blockDim {} on {} cores: the blocks that run first would wait in SyncAll for \
                 blocks that can only start when they finish (on hardware the kernel hangs); use a blockDim of at \
                 most {}",
                self.block_num, self.cores, self.cores
            ));
        }
        let mut st = self.state.lock();
        if let Some(m) = self.stuck(&mut st) {
            return Err(m);
        }
        st.waiting += 1;
        if st.waiting + st.finished == self.block_num {
            if let Some(m) = self.stuck(&mut st) {
                return Err(m);
            }
            st.waiting = 0;
            st.generation += 1;
            self.cv.notify_all();
            return Ok(());
        }
        let gen = st.generation;
        // The others must be running to arrive: give every block a thread now.
        drop(st);
        block_waits_for_others();
        let mut st = self.state.lock();
        loop {
            if st.generation != gen {
                return Ok(());
            }
            if let Some(m) = self.stuck(&mut st) {
                return Err(m);
            }
            self.cv.wait(&mut st);
        }
    }

    /// Block `idx` has returned (`ok`) or failed.
    pub fn done(&self, idx: u32, ok: bool) {
        let mut st = self.state.lock();
        st.finished += 1;
        if !ok {
            st.failed = Some(st.failed.map_or(idx, |f| f.min(idx)));
        }
        self.cv.notify_all();
    }
}

/// A helper thread: take blocks of the oldest launch that has some left, else sleep.
fn core_thread(inner: Arc<Inner>) {
    let mut st = inner.state.lock();
    loop {
        let job = st.jobs.iter().find(|j| j.unclaimed() > 0).cloned();
        let Some(job) = job else {
            inner.work.wait(&mut st);
            continue;
        };
        drop(st);
        let mut ran = false;
        fp_begin();
        while let Some((idx, skip)) = inner.claim(&job) {
            run_block(&inner, &job, idx, skip);
            ran = true;
        }
        st = inner.state.lock();
        if !ran && job.unclaimed() > 0 && inner.busy.load(Ordering::SeqCst) >= inner.cores {
            // Every core is busy: wait until one is released (`release_core` notifies
            // under the state lock, after lowering `busy`).
            inner.work.wait(&mut st);
        }
    }
}

/// The pool's watcher: while launches run, spread those whose blocks wait too long (the
/// launching thread may itself be inside a long block); asleep when nothing was launched
/// for [`WATCH_IDLE`].
fn watcher(inner: Arc<Inner>) {
    let mut st = inner.state.lock();
    loop {
        let now = Instant::now();
        let late: Vec<(Arc<Job>, u8)> = st
            .jobs
            .iter()
            .filter(|j| j.unclaimed() > 0)
            .filter_map(|j| {
                let age = now.saturating_duration_since(j.start);
                let level = if age >= ALL_RESIDENT_AFTER {
                    2
                } else if age >= SPREAD_AFTER {
                    1
                } else {
                    0
                };
                (level > j.spread.load(Ordering::SeqCst)).then(|| (j.clone(), level))
            })
            .collect();
        if !late.is_empty() {
            drop(st);
            for (j, level) in &late {
                spread(&inner, j, *level);
            }
            st = inner.state.lock();
        }
        if st.jobs.is_empty() && now.saturating_duration_since(st.last_launch) >= WATCH_IDLE {
            st.watcher_asleep = true;
            while st.watcher_asleep {
                inner.watch.wait(&mut st);
            }
        } else {
            let _ = inner.watch.wait_for(&mut st, WATCH_TICK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    #[test]
    fn runs_every_block_once() {
        let pool = AiCorePool::new("device 0", 4);
        for n in [1u32, 3, 4, 9, 100] {
            let seen: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
            pool.run("k", n, &|i| {
                seen[i as usize].fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .unwrap();
            assert!(seen.iter().all(|c| c.load(Ordering::SeqCst) == 1), "n={n}");
        }
        assert!(pool.threads() <= 4);
    }

    #[test]
    fn blocks_up_to_the_core_count_run_together() {
        // Every block waits until all 6 have started: only possible if 6 run at once.
        let pool = AiCorePool::new("device 1", 8);
        let started = AtomicU32::new(0);
        pool.run("barrier", 6, &|_| {
            started.fetch_add(1, Ordering::SeqCst);
            let t0 = std::time::Instant::now();
            while started.load(Ordering::SeqCst) < 6 {
                if t0.elapsed() > Duration::from_secs(20) {
                    return Err("blocks did not run in parallel".into());
                }
                std::thread::yield_now();
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(pool.threads(), 6);
    }

    #[test]
    fn never_more_blocks_at_once_than_cores() {
        // Whatever the timing, the number of blocks inside `body` at any moment never
        // exceeds the pool's cores, and every block runs.
        for (soc, cores) in [
            ("Ascend910B1", 48),
            ("Ascend910B4", 40),
            ("Ascend910_9392", 48),
            ("Ascend310P3", 8),
        ] {
            assert_eq!(soc_cores(soc).launch_cores(), cores, "{soc}");
            let pool = AiCorePool::new("device 0", soc_cores(soc).launch_cores());
            let (now, max, ran) = (AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0));
            pool.run("limit", 200, &|_| {
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                max.fetch_max(n, Ordering::SeqCst);
                for _ in 0..50 {
                    std::thread::yield_now();
                }
                ran.fetch_add(1, Ordering::SeqCst);
                now.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
            .unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 200, "{soc}");
            let m = max.load(Ordering::SeqCst);
            assert!(
                m >= 1 && m <= cores,
                "{soc}: {m} blocks at once, {cores} cores"
            );
            assert!(
                pool.threads() <= cores,
                "{soc}: at most one thread per core"
            );
        }
        let c = soc_cores("Ascend910B3");
        assert_eq!((c.ai_core, c.cube_core, c.vector_core), (20, 20, 40));
        assert_eq!(soc_cores("SomethingElse"), soc_cores("Ascend910B1"));
    }

    #[test]
    fn lowest_failed_block_is_reported() {
        let pool = AiCorePool::new("device 0", 2);
        let e = pool
            .run("bad", 5, &|i| {
                if i == 3 || i == 1 {
                    Err(format!("kernel bad block {i}/5: boom"))
                } else {
                    Ok(())
                }
            })
            .unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_AICORE_EXCEPTION);
        assert!(e.msg.starts_with("kernel bad block 1/5: boom"), "{}", e.msg);
        // The pool is still usable.
        let sum = AtomicU64::new(0);
        pool.run("ok", 10, &|i| {
            sum.fetch_add(i as u64, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        assert_eq!(sum.load(Ordering::SeqCst), 45);
    }

    #[test]
    fn sync_all_is_a_barrier_and_reports_stuck_blocks() {
        let pool = AiCorePool::new("device 0", 4);
        let sync = LaunchSync::new(4, 4);
        let phase = AtomicU32::new(0);
        pool.run("sync", 4, &|i| {
            phase.fetch_add(1, Ordering::SeqCst);
            sync.arrive(i)?;
            // every block arrived before any leaves
            if phase.load(Ordering::SeqCst) != 4 {
                return Err("left the barrier early".into());
            }
            sync.arrive(i)?;
            sync.done(i, true);
            Ok(())
        })
        .unwrap();
        // one block returns without arriving
        let sync = LaunchSync::new(3, 4);
        let e = pool
            .run("early", 3, &|i| {
                let r = if i == 2 { Ok(()) } else { sync.arrive(i) };
                sync.done(i, r.is_ok());
                r
            })
            .unwrap_err();
        assert!(
            e.msg
                .contains("returned from the kernel without calling SyncAll"),
            "{}",
            e.msg
        );
        // more blocks than cores
        let sync = LaunchSync::new(8, 4);
        let e = sync.arrive(0).unwrap_err();
        assert!(e.contains("blockDim 8 on 4 cores"), "{e}");
    }

    #[test]
    fn concurrent_launches_share_the_pool() {
        let pool = Arc::new(AiCorePool::new("device 2", 3));
        let total = Arc::new(AtomicU64::new(0));
        let ts: Vec<_> = (0..4)
            .map(|_| {
                let (p, t) = (pool.clone(), total.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        p.run("c", 7, &|_| {
                            t.fetch_add(1, Ordering::SeqCst);
                            Ok(())
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        assert_eq!(total.load(Ordering::SeqCst), 4 * 20 * 7);
    }

    /// Run `f` on a thread with `stack` bytes of stack.
    fn on_thread<R: Send + 'static>(stack: usize, f: impl FnOnce() -> R + Send + 'static) -> R {
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn the_launching_thread_runs_blocks_itself() {
        let pool = Arc::new(AiCorePool::new("device 0", 48));
        let p = pool.clone();
        let (me, ran_on, all) = on_thread(CORE_STACK, move || {
            let me = os::gettid();
            let ran_on = AtomicU64::new(0);
            p.run("one", 1, &|_| {
                ran_on.store(os::gettid(), Ordering::SeqCst);
                Ok(())
            })
            .unwrap();
            let seen: Vec<AtomicU32> = (0..48).map(|_| AtomicU32::new(0)).collect();
            p.run("many", 48, &|i| {
                seen[i as usize].fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .unwrap();
            let all = seen.iter().all(|c| c.load(Ordering::SeqCst) == 1);
            (me, ran_on.load(Ordering::SeqCst), all)
        });
        assert_eq!(me, ran_on, "a 1-block launch runs on the launching thread");
        assert!(all, "every block of the 48 ran once");
        assert!(pool.threads() <= 48);
    }

    #[test]
    fn a_thread_with_a_small_stack_leaves_the_blocks_to_the_pool() {
        let pool = Arc::new(AiCorePool::new("device 0", 4));
        let p = pool.clone();
        let (me, ran_on) = on_thread(256 << 10, move || {
            let ran_on = Mutex::new(Vec::new());
            p.run("small", 3, &|_| {
                ran_on.lock().push(os::gettid());
                Ok(())
            })
            .unwrap();
            (os::gettid(), ran_on.into_inner())
        });
        assert_eq!(ran_on.len(), 3);
        assert!(ran_on.iter().all(|t| *t != me), "{ran_on:?} {me}");
        assert!(pool.threads() >= 1);
    }

    #[test]
    fn a_block_that_overflows_is_seen_by_the_launching_thread_and_only_for_its_launch() {
        // On the launching thread (it runs the blocks) and on one with a small stack (the
        // pool's threads run them): a flag raised by one block of 48 reaches the launching
        // thread after `run`; the next clean launch leaves the flags clear.
        for stack in [CORE_STACK, 256 << 10] {
            let pool = Arc::new(AiCorePool::new("device 0", 48));
            let p = pool.clone();
            let (raised, clean) = on_thread(stack, move || {
                crate::fpstatus::clear();
                p.run("ovf", 48, &|i| {
                    if i == 37 {
                        let r = std::hint::black_box(f32::MAX) * 2.0;
                        assert!(std::hint::black_box(r).is_infinite());
                    }
                    Ok(())
                })
                .unwrap();
                let raised = crate::fpstatus::raised();
                crate::fpstatus::clear();
                p.run("clean", 48, &|_| Ok(())).unwrap();
                (raised, !crate::fpstatus::raised())
            });
            assert!(raised, "stack {stack}: the overflow of block 37 was lost");
            assert!(clean, "stack {stack}: a clean launch reported an overflow");
        }
    }

    #[test]
    fn blocks_that_wait_for_each_other_all_get_a_thread() {
        // Block 0 runs on the launching thread and waits (without SyncAll) for a flag that
        // the last block sets: the watcher must start the others.
        let pool = Arc::new(AiCorePool::new("device 0", 8));
        let p = pool.clone();
        let r = on_thread(CORE_STACK, move || {
            let flag = AtomicU32::new(0);
            p.run("flags", 8, &|i| {
                if i == 7 {
                    flag.store(1, Ordering::SeqCst);
                    return Ok(());
                }
                let t0 = std::time::Instant::now();
                while flag.load(Ordering::SeqCst) == 0 {
                    if t0.elapsed() > Duration::from_secs(60) {
                        return Err(format!("block {i} waited 60 s for block 7"));
                    }
                    std::thread::yield_now();
                }
                Ok(())
            })
        });
        r.unwrap();
    }
}
