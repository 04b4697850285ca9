//! Emulated AI cores: the threads that run the blocks of an Ascend C kernel launch.
//!
//! A device has one [`AiCorePool`] (kept by the runtime, created on the first launch). The
//! pool owns up to `cores` threads ([`SocCores::launch_cores`] of the emulated SoC: its
//! vector cores, 48 on Ascend910B1, 40 on Ascend910B4; its AI cores on Ascend310P3), created
//! lazily: a launch of `block_dim` blocks makes sure `min(block_dim, cores)` threads exist,
//! so up to that many blocks run at the same time, each on its own thread, and blocks beyond
//! the core count wait for a free core (as on hardware, where `blockDim` is a count of
//! logical cores scheduled onto the physical ones).
//!
//! [`AiCorePool::run`] is called by a stream task (so launches complete in stream order) and
//! returns when every block has returned. Launches from several streams of one device share
//! the pool. A failed block fails the launch: blocks not started yet are skipped, blocks
//! already running finish, and the failure of the lowest failed block index is reported
//! (always the same block for a given kernel: blocks start in index order, so every block
//! below the lowest failing one runs).
//!
//! While a block runs, its thread carries the kernel name and block index in a thread-local
//! read by the SIGSEGV handler ([`crate::fault::set_kernel_context`]), so a raw dereference
//! of a device pointer inside kernel code is reported as "kernel K block i/n ...".

use crate::error::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// `ACL_ERROR_RT_AICORE_EXCEPTION` (abi.md §1.5 B): a kernel failed on an AI core.
pub const ACL_ERROR_RT_AICORE_EXCEPTION: i32 = 507015;

/// Largest `blockDim` of a launch (Ascend C: "blockDim是逻辑核的概念，取值范围为[1,65535]").
pub const MAX_BLOCK_DIM: u32 = 65535;

/// Stack of an AI-core thread: kernels keep their local tensors' bookkeeping and sometimes
/// sizeable arrays on the stack, so give them what a main thread gets.
const CORE_STACK: usize = 8 << 20;

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

/// One launch being executed.
struct Job {
    kernel: String,
    block_dim: u32,
    /// Next block index to hand out (under the pool lock).
    next: u32,
    /// Blocks finished or skipped.
    finished: u32,
    /// Set once a block failed: blocks not started are skipped.
    failed: bool,
    /// Failures: (block index, message).
    errors: Vec<(u32, String)>,
    /// A block raised a floating-point overflow, invalid or divide-by-zero flag.
    fp_raised: bool,
    /// The block function, lifetime-erased: valid until the job is finished, because
    /// [`AiCorePool::run`] does not return before.
    body: BodyPtr,
}

#[derive(Clone, Copy)]
struct BodyPtr(*const BlockFn<'static>);
// SAFETY: points to a `Sync` closure that `run` keeps alive while any block can call it.
unsafe impl Send for BodyPtr {}
// SAFETY: as for Send: the closure is `Sync`, so sharing the pointer between cores is sound.
unsafe impl Sync for BodyPtr {}

struct State {
    jobs: VecDeque<Arc<Mutex<Job>>>,
    threads: u32,
    idle: u32,
}

struct Inner {
    label: String,
    cores: u32,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    /// Process that created the pool: a forked child has none of its threads.
    pid: u32,
    next_thread: AtomicU32,
}

/// The AI cores of one device.
pub struct AiCorePool {
    inner: Arc<Inner>,
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
                    idle: 0,
                }),
                work: Condvar::new(),
                done: Condvar::new(),
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

    /// Threads started so far.
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
        let job = Arc::new(Mutex::new(Job {
            kernel: kernel.to_string(),
            block_dim,
            next: 0,
            finished: 0,
            failed: false,
            errors: Vec::new(),
            fp_raised: false,
            body: BodyPtr(body),
        }));
        {
            let mut st = inner.state.lock();
            st.jobs.push_back(job.clone());
            let want = block_dim.min(inner.cores);
            // Start threads until `want` blocks can run at once.
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
                    Ok(_) => {
                        st.threads += 1;
                        st.idle += 1;
                    }
                    Err(e) if st.threads == 0 => {
                        st.jobs.retain(|j| !Arc::ptr_eq(j, &job));
                        return Err(Error::new(
                            crate::codes::ACL_ERROR_RT_INTERNAL_ERROR,
                            format!(
                                "cannot start an AI-core thread of {} for kernel {kernel}: {e}",
                                inner.label
                            ),
                        ));
                    }
                    Err(_) => break, // run with the cores we have
                }
            }
            // Wake as many idle cores as there are blocks (not all of them: a 1-block launch
            // on a 48-core pool would otherwise wake 48 threads for nothing).
            let wake = block_dim.min(st.idle);
            if wake >= st.idle {
                inner.work.notify_all();
            } else {
                for _ in 0..wake {
                    inner.work.notify_one();
                }
            }
            while job.lock().finished < block_dim {
                inner.done.wait(&mut st);
            }
        }
        let mut j = job.lock();
        if j.fp_raised {
            // Pass the blocks' floating-point status on to the launching thread (the stream
            // task that launched them tests it).
            crate::fpstatus::raise();
        }
        if j.errors.is_empty() {
            return Ok(());
        }
        j.errors.sort_by_key(|(i, _)| *i);
        let (_, msg) = j.errors.swap_remove(0);
        let more = j.errors.len();
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

    fn stuck(&self, st: &SyncState) -> Option<String> {
        if let Some(f) = st.failed {
            return Some(format!(
                "SyncAll: block {f} failed, so the blocks waiting in SyncAll can never continue"
            ));
        }
        if st.finished > 0 && st.waiting + st.finished == self.block_num {
            return Some(format!(
                "SyncAll: {} of the {} blocks returned from the kernel without calling SyncAll; on hardware the \
                 others wait for them forever",
                st.finished, self.block_num
            ));
        }
        None
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
        if let Some(m) = self.stuck(&st) {
            return Err(m);
        }
        st.waiting += 1;
        if st.waiting + st.finished == self.block_num {
            if let Some(m) = self.stuck(&st) {
                return Err(m);
            }
            st.waiting = 0;
            st.generation += 1;
            self.cv.notify_all();
            return Ok(());
        }
        let gen = st.generation;
        loop {
            self.cv.wait(&mut st);
            if st.generation != gen {
                return Ok(());
            }
            if let Some(m) = self.stuck(&st) {
                return Err(m);
            }
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

fn core_thread(inner: Arc<Inner>) {
    let mut st = inner.state.lock();
    loop {
        // Take the next block of the oldest job that has one left.
        let mut claimed = None;
        while let Some(front) = st.jobs.front().cloned() {
            let mut j = front.lock();
            if j.next < j.block_dim {
                let idx = j.next;
                j.next += 1;
                // Decided when the block is claimed (blocks are claimed in index order): a
                // block below the lowest failing one is never skipped, so the reported
                // failure does not depend on timing.
                let skip = j.failed;
                if j.next == j.block_dim {
                    drop(j);
                    st.jobs.pop_front();
                } else {
                    drop(j);
                }
                claimed = Some((front, idx, skip));
                break;
            }
            drop(j);
            st.jobs.pop_front();
        }
        let Some((job, idx, skip)) = claimed else {
            inner.work.wait(&mut st);
            continue;
        };
        st.idle -= 1;
        drop(st);
        let (kernel, block_dim, body) = {
            let j = job.lock();
            (j.kernel.clone(), j.block_dim, j.body)
        };
        let mut fp = false;
        let result = if skip {
            Ok(())
        } else {
            crate::fault::set_kernel_context(Some((&kernel, idx, block_dim)));
            crate::fpstatus::clear();
            // SAFETY: `run` keeps the closure alive until this block is counted finished.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe { (*body.0)(idx) }));
            fp = crate::fpstatus::raised();
            crate::fault::set_kernel_context(None);
            match r {
                Ok(r) => r,
                Err(_) => Err(format!(
                    "kernel {kernel} block {idx}/{block_dim}: internal error in the AI-core emulation"
                )),
            }
        };
        st = inner.state.lock();
        st.idle += 1;
        let mut j = job.lock();
        j.fp_raised |= fp;
        if let Err(msg) = result {
            j.failed = true;
            j.errors.push((idx, msg));
        }
        j.finished += 1;
        let all = j.finished == j.block_dim;
        drop(j);
        if all {
            inner.done.notify_all();
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
        assert_eq!(pool.threads(), 4);
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
            assert_eq!(pool.threads(), cores, "{soc}: one thread per core");
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
}
