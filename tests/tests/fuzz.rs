//! Fuzz target over the C ABI (issue 16): random sequences of ACL and HCCL calls drawn from
//! pools of valid, stale and invalid handles and pointers, from 1 and 4 threads, against the
//! built `libascendcl.so` / `libhccl.so`. Nothing may crash and nothing may hang: every bad
//! call must come back with an error code.
//!
//! Each case runs in a child process (this test binary again, with `NPU_EMU_FUZZ_CHILD`
//! set), so a crash is a failed case, not a dead test run; a case that finishes no call for
//! [`CASE_LIMIT`] is a hang. The calls are `arbitrary::Arbitrary` values decoded from a
//! ChaCha8 stream seeded by the case number, so every case is reproducible from its seed.
//!
//! Bounded in CI by call counts (defaults below). A longer run is one command away:
//!
//! ```text
//! NPU_EMU_FUZZ_CASES=200 NPU_EMU_FUZZ_CALLS=50000 \
//!     cargo test --release -p npu-emu-tests --test fuzz -- --nocapture
//! ```
//! (`make fuzz` does that: `make fuzz FUZZ_CASES=1000` for more), and one failing case is rerun with `NPU_EMU_FUZZ_SEED=<seed>
//! NPU_EMU_FUZZ_CASES=1`, printed with every failure.
//!
//! What the fuzzer keeps to (the C contract, not the emulator's business): host pointers it
//! passes are its own live buffers with counts that fit them, or NULL; out-parameters are
//! valid or NULL; "wild" addresses are drawn from the device address ranges only.

use arbitrary::{Arbitrary, Unstructured};
use npu_emu_tests::{lib_dir, node_dir, scratch};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use std::ffi::{c_char, c_void};
use std::process::{Command, Stdio};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

/// Longest a case may go without finishing a call before it counts as a hang (a call may
/// legitimately wait for `HCCL_EXEC_TIMEOUT`, 3 s in these cases: an HCCL task whose turn
/// never comes, because an earlier operation of its communicator sits behind an event wait
/// that the random sequence never satisfies, gives up after it). Progress, not the
/// case's total time, is what counts, so a loaded machine does not fake a hang.
const CASE_LIMIT: Duration = Duration::from_secs(90);

/// Calls finished by the case running in this (child) process, for the progress file.
static PROGRESS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------- the calls

/// A device-side pointer argument (`Valid` weighted as in [`H`]).
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Dev {
    Valid(u8),
    Valid2(u8),
    Valid3(u8),
    /// Inside a live allocation, at a random offset.
    Interior(u8, u32),
    Stale(u8),
    Null,
    /// Anywhere in the device address ranges (mostly nothing allocated there).
    Wild(u64),
    /// One of the fuzzer's host buffers.
    Host(u8),
    /// Memory from aclrtMallocHost.
    Pinned(u8),
}

/// A handle argument (stream, event, context, communicator). (`Valid` is drawn three times
/// as often as each other kind, through `Valid2` and `Valid3`, so that calls whose every
/// argument must be right happen often enough.)
#[derive(Arbitrary, Debug, Clone, Copy)]
enum H {
    Valid(u8),
    Valid2(u8),
    Valid3(u8),
    Stale(u8),
    Null,
    Wild(u64),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Size {
    Zero,
    Small(u16),
    Page,
    Big(u32),
    Huge,
    Max,
}

impl Size {
    fn get(self) -> u64 {
        match self {
            Size::Zero => 0,
            Size::Small(n) => n as u64,
            Size::Page => 4096,
            Size::Big(n) => n as u64 % (64 << 20),
            Size::Huge => 1 << 40,
            Size::Max => u64::MAX,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Call {
    Init,
    Finalize,
    SetDevice(i8),
    ResetDevice(i8),
    GetDevice(bool),
    SynchronizeDevice,
    CreateContext(i8),
    DestroyContext(H),
    SetCurrentContext(H),
    CreateStream(bool),
    DestroyStream(H),
    SynchronizeStream(H),
    Malloc(Size, u8, bool),
    Free(Dev),
    MallocHost(Size),
    FreeHost(Dev),
    Memcpy(Dev, Size, Dev, Size, u8),
    MemcpyAsync(Dev, Size, Dev, Size, u8, H),
    Memcpy2d(Dev, Size, Dev, Size, Size, Size, u8),
    Memset(Dev, Size, i32, Size),
    MemsetAsync(Dev, Size, i32, Size, H),
    GetMemInfo(u8, bool),
    PointerGetAttributes(Dev, bool),
    CreateEvent(bool),
    DestroyEvent(H),
    RecordEvent(H, H),
    SynchronizeEvent(H),
    QueryEventStatus(H, bool),
    StreamWaitEvent(H, H),
    EventElapsedTime(H, H, bool),
    GetRecentErrMsg,
    CommInit(bool),
    CommDestroy(H),
    AllReduce(Dev, Dev, Size, u8, u8, H, H),
    Broadcast(Dev, Size, u8, u32, H, H),
    AllGather(Dev, Dev, Size, u8, H, H),
    ReduceScatter(Dev, Dev, Size, u8, u8, H, H),
    Barrier(H, H),
    GetRankSize(H, bool),
    GetCommAsyncError(H, bool),
    GetErrorString(i32),
}

impl Call {
    fn name(&self) -> &'static str {
        match self {
            Call::Init => "aclInit",
            Call::Finalize => "aclFinalize",
            Call::SetDevice(_) => "aclrtSetDevice",
            Call::ResetDevice(_) => "aclrtResetDevice",
            Call::GetDevice(_) => "aclrtGetDevice",
            Call::SynchronizeDevice => "aclrtSynchronizeDevice",
            Call::CreateContext(_) => "aclrtCreateContext",
            Call::DestroyContext(_) => "aclrtDestroyContext",
            Call::SetCurrentContext(_) => "aclrtSetCurrentContext",
            Call::CreateStream(_) => "aclrtCreateStream",
            Call::DestroyStream(_) => "aclrtDestroyStream",
            Call::SynchronizeStream(_) => "aclrtSynchronizeStream",
            Call::Malloc(..) => "aclrtMalloc",
            Call::Free(_) => "aclrtFree",
            Call::MallocHost(_) => "aclrtMallocHost",
            Call::FreeHost(_) => "aclrtFreeHost",
            Call::Memcpy(..) => "aclrtMemcpy",
            Call::MemcpyAsync(..) => "aclrtMemcpyAsync",
            Call::Memcpy2d(..) => "aclrtMemcpy2d",
            Call::Memset(..) => "aclrtMemset",
            Call::MemsetAsync(..) => "aclrtMemsetAsync",
            Call::GetMemInfo(..) => "aclrtGetMemInfo",
            Call::PointerGetAttributes(..) => "aclrtPointerGetAttributes",
            Call::CreateEvent(_) => "aclrtCreateEvent",
            Call::DestroyEvent(_) => "aclrtDestroyEvent",
            Call::RecordEvent(..) => "aclrtRecordEvent",
            Call::SynchronizeEvent(_) => "aclrtSynchronizeEvent",
            Call::QueryEventStatus(..) => "aclrtQueryEventStatus",
            Call::StreamWaitEvent(..) => "aclrtStreamWaitEvent",
            Call::EventElapsedTime(..) => "aclrtEventElapsedTime",
            Call::GetRecentErrMsg => "aclGetRecentErrMsg",
            Call::CommInit(_) => "HcclCommInitRootInfo",
            Call::CommDestroy(_) => "HcclCommDestroy",
            Call::AllReduce(..) => "HcclAllReduce",
            Call::Broadcast(..) => "HcclBroadcast",
            Call::AllGather(..) => "HcclAllGather",
            Call::ReduceScatter(..) => "HcclReduceScatter",
            Call::Barrier(..) => "HcclBarrier",
            Call::GetRankSize(..) => "HcclGetRankSize",
            Call::GetCommAsyncError(..) => "HcclGetCommAsyncError",
            Call::GetErrorString(_) => "HcclGetErrorString",
        }
    }
}

// ---------------------------------------------------------------- the libraries

type P = *mut c_void;

macro_rules! api {
    ($($name:ident : fn($($an:ident : $a:ty),*) -> $r:ty;)*) => {
        #[allow(non_snake_case)]
        struct Raw { $($name: unsafe extern "C" fn($($a),*) -> $r,)* }
        /// The functions, each call counted in [`STATS`].
        struct Api { raw: Raw }
        #[allow(non_snake_case, clippy::too_many_arguments)]
        impl Api {
            fn load(acl: &libloading::Library, hccl: &libloading::Library) -> Api {
                // SAFETY: each symbol has the C signature declared here (acl_rt.h, hccl.h).
                unsafe {
                    Api { raw: Raw { $($name: *acl.get(concat!(stringify!($name), "\0").as_bytes())
                        .or_else(|_| hccl.get(concat!(stringify!($name), "\0").as_bytes()))
                        .expect(stringify!($name)),)* } }
                }
            }
            $(
                unsafe fn $name(&self, $($an: $a),*) -> $r {
                    let r = (self.raw.$name)($($an),*);
                            Outcome::record(&r);
                    r
                }
            )*
        }
    };
}

// Calls made and calls that succeeded, in this thread.
thread_local! {
    static STATS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

trait Outcome {
    fn ok(&self) -> bool;
    fn record(&self) {
        let ok = self.ok() as u64;
        STATS.with(|s| {
            let (n, k) = s.get();
            s.set((n + 1, k + ok));
        });
    }
}
impl Outcome for i32 {
    fn ok(&self) -> bool {
        *self == 0
    }
}
impl Outcome for *const c_char {
    fn ok(&self) -> bool {
        !self.is_null()
    }
}

api! {
    aclInit: fn(a0: *const c_char) -> i32;
    aclFinalize: fn() -> i32;
    aclrtSetDevice: fn(a0: i32) -> i32;
    aclrtResetDevice: fn(a0: i32) -> i32;
    aclrtGetDevice: fn(a0: *mut i32) -> i32;
    aclrtSynchronizeDevice: fn() -> i32;
    aclrtCreateContext: fn(a0: *mut P, a1: i32) -> i32;
    aclrtDestroyContext: fn(a0: P) -> i32;
    aclrtSetCurrentContext: fn(a0: P) -> i32;
    aclrtCreateStream: fn(a0: *mut P) -> i32;
    aclrtDestroyStream: fn(a0: P) -> i32;
    aclrtSynchronizeStream: fn(a0: P) -> i32;
    aclrtMalloc: fn(a0: *mut P, a1: usize, a2: i32) -> i32;
    aclrtFree: fn(a0: P) -> i32;
    aclrtMallocHost: fn(a0: *mut P, a1: usize) -> i32;
    aclrtFreeHost: fn(a0: P) -> i32;
    aclrtMemcpy: fn(a0: P, a1: usize, a2: P, a3: usize, a4: i32) -> i32;
    aclrtMemcpyAsync: fn(a0: P, a1: usize, a2: P, a3: usize, a4: i32, a5: P) -> i32;
    aclrtMemcpy2d: fn(a0: P, a1: usize, a2: P, a3: usize, a4: usize, a5: usize, a6: i32) -> i32;
    aclrtMemset: fn(a0: P, a1: usize, a2: i32, a3: usize) -> i32;
    aclrtMemsetAsync: fn(a0: P, a1: usize, a2: i32, a3: usize, a4: P) -> i32;
    aclrtGetMemInfo: fn(a0: i32, a1: *mut usize, a2: *mut usize) -> i32;
    aclrtPointerGetAttributes: fn(a0: P, a1: *mut [u32; 8]) -> i32;
    aclrtCreateEvent: fn(a0: *mut P) -> i32;
    aclrtDestroyEvent: fn(a0: P) -> i32;
    aclrtRecordEvent: fn(a0: P, a1: P) -> i32;
    aclrtSynchronizeEvent: fn(a0: P) -> i32;
    aclrtQueryEventStatus: fn(a0: P, a1: *mut i32) -> i32;
    aclrtStreamWaitEvent: fn(a0: P, a1: P) -> i32;
    aclrtEventElapsedTime: fn(a0: *mut f32, a1: P, a2: P) -> i32;
    aclGetRecentErrMsg: fn() -> *const c_char;
    HcclGetRootInfo: fn(a0: *mut [u8; 4108]) -> i32;
    HcclCommInitRootInfo: fn(a0: u32, a1: *const [u8; 4108], a2: u32, a3: *mut P) -> i32;
    HcclCommDestroy: fn(a0: P) -> i32;
    HcclAllReduce: fn(a0: P, a1: P, a2: u64, a3: i32, a4: i32, a5: P, a6: P) -> i32;
    HcclBroadcast: fn(a0: P, a1: u64, a2: i32, a3: u32, a4: P, a5: P) -> i32;
    HcclAllGather: fn(a0: P, a1: P, a2: u64, a3: i32, a4: P, a5: P) -> i32;
    HcclReduceScatter: fn(a0: P, a1: P, a2: u64, a3: i32, a4: i32, a5: P, a6: P) -> i32;
    HcclBarrier: fn(a0: P, a1: P) -> i32;
    HcclGetRankSize: fn(a0: P, a1: *mut u32) -> i32;
    HcclGetCommAsyncError: fn(a0: P, a1: *mut i32) -> i32;
    HcclGetErrorString: fn(a0: i32) -> *const c_char;
}

// ---------------------------------------------------------------- the pools

/// Size of each of the fuzzer's own host buffers.
const HOST_BYTES: usize = 1 << 20;
const HOST_BUFS: usize = 4;

#[derive(Default)]
struct Pool {
    valid: Vec<(u64, u64)>,
    stale: Vec<u64>,
}

impl Pool {
    fn pick(&self, i: u8) -> Option<(u64, u64)> {
        (!self.valid.is_empty()).then(|| self.valid[i as usize % self.valid.len()])
    }
    fn stale(&self, i: u8) -> Option<u64> {
        (!self.stale.is_empty()).then(|| self.stale[i as usize % self.stale.len()])
    }
    fn add(&mut self, v: u64, size: u64) {
        self.valid.push((v, size));
        if self.valid.len() > 64 {
            let (old, _) = self.valid.remove(0);
            self.stale.push(old); // forgotten, not freed: still "live" to the library
        }
    }
    fn retire(&mut self, v: u64) {
        self.valid.retain(|&(x, _)| x != v);
        self.stale.push(v);
        if self.stale.len() > 64 {
            self.stale.remove(0);
        }
    }
    fn retire_all(&mut self) {
        let all: Vec<u64> = self.valid.drain(..).map(|(v, _)| v).collect();
        for v in all {
            self.retire(v);
        }
    }
}

struct World {
    api: Api,
    host: Vec<Vec<u8>>,
    dev: Mutex<Pool>,
    /// aclrtMallocHost memory: calls that read or write it hold the read lock, whatever may
    /// free it (aclrtFreeHost, aclFinalize, aclrtResetDevice) the write lock, so the fuzzer
    /// never hands the library host memory it freed (that would be the fuzzer's bug).
    pinned: RwLock<Pool>,
    streams: Mutex<Pool>,
    events: Mutex<Pool>,
    contexts: Mutex<Pool>,
    comms: Mutex<Pool>,
}

impl World {
    fn handle(&self, pool: &Mutex<Pool>, h: H) -> P {
        let p = pool.lock().unwrap();
        (match h {
            H::Valid(i) | H::Valid2(i) | H::Valid3(i) => p.pick(i).map_or(0, |x| x.0),
            H::Stale(i) => p.stale(i).unwrap_or(0),
            H::Null => 0,
            H::Wild(w) => w | 1,
        }) as P
    }

    /// A pointer for `d`, and the room behind it when it is host memory (counts that touch
    /// host memory are cut to it).
    fn ptr(&self, d: Dev, pinned: &Pool) -> (P, Option<u64>) {
        match d {
            Dev::Valid(i) | Dev::Valid2(i) | Dev::Valid3(i) => (
                self.dev.lock().unwrap().pick(i).map_or(0, |x| x.0) as P,
                None,
            ),
            Dev::Interior(i, off) => {
                let v = self.dev.lock().unwrap().pick(i);
                (v.map_or(0, |(a, s)| a + off as u64 % s.max(1)) as P, None)
            }
            Dev::Stale(i) => (self.dev.lock().unwrap().stale(i).unwrap_or(0) as P, None),
            Dev::Null => (std::ptr::null_mut(), None),
            Dev::Wild(w) => {
                // The device ranges: devices 0..8 (1 TiB apart), or the VMM range.
                let a = if w & 1 == 0 {
                    0x1100_0000_0000u64 + (w >> 1) % (8 << 40)
                } else {
                    0x6800_0000_0000u64 + (w >> 1) % (1 << 40)
                };
                (a as P, None)
            }
            Dev::Host(i) => {
                let b = &self.host[i as usize % HOST_BUFS];
                (b.as_ptr() as P, Some(HOST_BYTES as u64))
            }
            Dev::Pinned(i) => match pinned.pick(i) {
                Some((a, s)) => (a as P, Some(s)),
                None => (std::ptr::null_mut(), None),
            },
        }
    }
}

fn cut(n: u64, room: &[Option<u64>]) -> usize {
    let m = room.iter().flatten().min().copied().unwrap_or(u64::MAX);
    n.min(m) as usize
}

fn dtype(t: u8) -> i32 {
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 17, 27, -1, 100][t as usize % 17]
}

/// Run one call. Returns false when the call was not possible (nothing to call it with).
fn call(w: &World, c: Call) {
    let a = &w.api;
    // SAFETY: (for every call below) arguments follow the C contract as the module doc
    // says: host pointers are live buffers of the fuzzer with counts cut to their room, out
    // pointers are valid or NULL; everything else is exactly what is being fuzzed.
    unsafe {
        match c {
            Call::Init => {
                a.aclInit(std::ptr::null());
            }
            Call::Finalize => {
                let mut pinned = w.pinned.write().unwrap();
                a.aclFinalize();
                pinned.retire_all();
                for p in [&w.dev, &w.streams, &w.events, &w.contexts, &w.comms] {
                    p.lock().unwrap().retire_all();
                }
            }
            Call::SetDevice(d) => {
                a.aclrtSetDevice(d as i32 % 10);
            }
            Call::ResetDevice(d) => {
                let mut pinned = w.pinned.write().unwrap();
                a.aclrtResetDevice(d as i32 % 10);
                pinned.retire_all();
            }
            Call::GetDevice(null) => {
                let mut d = 0;
                a.aclrtGetDevice(if null { std::ptr::null_mut() } else { &mut d });
            }
            Call::SynchronizeDevice => {
                a.aclrtSynchronizeDevice();
            }
            Call::CreateContext(d) => {
                let mut c: P = std::ptr::null_mut();
                if a.aclrtCreateContext(&mut c, d as i32 % 10) == 0 {
                    w.contexts.lock().unwrap().add(c as u64, 0);
                }
            }
            Call::DestroyContext(h) => {
                let c = w.handle(&w.contexts, h);
                if a.aclrtDestroyContext(c) == 0 {
                    w.contexts.lock().unwrap().retire(c as u64);
                }
            }
            Call::SetCurrentContext(h) => {
                a.aclrtSetCurrentContext(w.handle(&w.contexts, h));
            }
            Call::CreateStream(null) => {
                let mut s: P = std::ptr::null_mut();
                let out = if null { std::ptr::null_mut() } else { &mut s };
                if a.aclrtCreateStream(out) == 0 && !null {
                    w.streams.lock().unwrap().add(s as u64, 0);
                }
            }
            Call::DestroyStream(h) => {
                let s = w.handle(&w.streams, h);
                if a.aclrtDestroyStream(s) == 0 {
                    w.streams.lock().unwrap().retire(s as u64);
                }
            }
            Call::SynchronizeStream(h) => {
                a.aclrtSynchronizeStream(w.handle(&w.streams, h));
            }
            Call::Malloc(size, policy, null) => {
                let mut p: P = std::ptr::null_mut();
                let out = if null { std::ptr::null_mut() } else { &mut p };
                let n = size.get();
                if a.aclrtMalloc(out, n as usize, policy as i32 % 9) == 0 && !null {
                    w.dev.lock().unwrap().add(p as u64, n);
                }
            }
            Call::Free(d) => {
                let pinned = w.pinned.read().unwrap();
                let (p, room) = w.ptr(d, &pinned);
                if room.is_some() {
                    return; // a host buffer: freeing it as device memory is checked elsewhere
                }
                if a.aclrtFree(p) == 0 {
                    w.dev.lock().unwrap().retire(p as u64);
                }
            }
            Call::MallocHost(size) => {
                let mut pinned = w.pinned.write().unwrap();
                let n = size.get().min(4 << 20);
                let mut p: P = std::ptr::null_mut();
                if a.aclrtMallocHost(&mut p, n as usize) == 0 {
                    pinned.add(p as u64, n);
                }
            }
            Call::FreeHost(d) => {
                let mut pinned = w.pinned.write().unwrap();
                let p = match d {
                    Dev::Pinned(i) => pinned.pick(i).map_or(0, |x| x.0),
                    Dev::Stale(i) => pinned.stale(i).unwrap_or(0),
                    Dev::Null => 0,
                    Dev::Wild(_)
                    | Dev::Valid(_)
                    | Dev::Valid2(_)
                    | Dev::Valid3(_)
                    | Dev::Interior(..) => w.ptr(d, &pinned).0 as u64,
                    Dev::Host(_) => return, // not ACL memory: freeing it is the caller's bug
                };
                if a.aclrtFreeHost(p as P) == 0 {
                    pinned.retire(p);
                }
            }
            Call::Memcpy(dst, dmax, src, count, kind) => {
                let pinned = w.pinned.read().unwrap();
                let ((d, dr), (s, sr)) = (w.ptr(dst, &pinned), w.ptr(src, &pinned));
                let n = cut(count.get(), &[dr, sr]);
                let dm = if dr.is_some() { n } else { dmax.get() as usize };
                a.aclrtMemcpy(d, dm, s, n, kind as i32 % 9);
            }
            Call::MemcpyAsync(dst, dmax, src, count, kind, st) => {
                let pinned = w.pinned.read().unwrap();
                let ((d, dr), (s, sr)) = (w.ptr(dst, &pinned), w.ptr(src, &pinned));
                // Queued copies read and write host memory later: only the fuzzer's own
                // buffers (never freed) or pinned memory with the stream synchronized here.
                let n = cut(count.get(), &[dr, sr]);
                let dm = if dr.is_some() { n } else { dmax.get() as usize };
                let stream = w.handle(&w.streams, st);
                a.aclrtMemcpyAsync(d, dm, s, n, kind as i32 % 9, stream);
                if matches!(dst, Dev::Pinned(_)) || matches!(src, Dev::Pinned(_)) {
                    a.aclrtSynchronizeStream(stream);
                }
            }
            Call::Memcpy2d(dst, dpitch, src, spitch, width, height, kind) => {
                let pinned = w.pinned.read().unwrap();
                let ((d, dr), (s, sr)) = (w.ptr(dst, &pinned), w.ptr(src, &pinned));
                let (dp, sp) = (dpitch.get() % 8192, spitch.get() % 8192);
                let (wd, h) = (width.get() % 8192, height.get() % 512);
                // Host sides: pitch * height must fit.
                let fits = |pitch: u64, room: Option<u64>| {
                    room.is_none_or(|r| pitch.saturating_mul(h) <= r && wd <= pitch)
                };
                if !fits(dp, dr) || !fits(sp, sr) {
                    return;
                }
                a.aclrtMemcpy2d(
                    d,
                    dp as usize,
                    s,
                    sp as usize,
                    wd as usize,
                    h as usize,
                    kind as i32 % 9,
                );
            }
            Call::Memset(dst, max, v, count) => {
                let pinned = w.pinned.read().unwrap();
                let (d, dr) = w.ptr(dst, &pinned);
                let n = cut(count.get(), &[dr]);
                let m = if dr.is_some() { n } else { max.get() as usize };
                a.aclrtMemset(d, m, v, n);
            }
            Call::MemsetAsync(dst, max, v, count, st) => {
                let pinned = w.pinned.read().unwrap();
                let (d, dr) = w.ptr(dst, &pinned);
                let n = cut(count.get(), &[dr]);
                let m = if dr.is_some() { n } else { max.get() as usize };
                let stream = w.handle(&w.streams, st);
                a.aclrtMemsetAsync(d, m, v, n, stream);
                if dr.is_some() {
                    a.aclrtSynchronizeStream(stream);
                }
            }
            Call::GetMemInfo(attr, null) => {
                let (mut f, mut t) = (0usize, 0usize);
                let fp = if null { std::ptr::null_mut() } else { &mut f };
                a.aclrtGetMemInfo(attr as i32 % 8, fp, &mut t);
            }
            Call::PointerGetAttributes(d, null) => {
                let pinned = w.pinned.read().unwrap();
                let (p, _) = w.ptr(d, &pinned);
                let mut attr = [0u32; 8];
                let out = if null {
                    std::ptr::null_mut()
                } else {
                    &mut attr
                };
                a.aclrtPointerGetAttributes(p, out);
            }
            Call::CreateEvent(null) => {
                let mut e: P = std::ptr::null_mut();
                let out = if null { std::ptr::null_mut() } else { &mut e };
                if a.aclrtCreateEvent(out) == 0 && !null {
                    w.events.lock().unwrap().add(e as u64, 0);
                }
            }
            Call::DestroyEvent(h) => {
                let e = w.handle(&w.events, h);
                if a.aclrtDestroyEvent(e) == 0 {
                    w.events.lock().unwrap().retire(e as u64);
                }
            }
            Call::RecordEvent(e, s) => {
                a.aclrtRecordEvent(w.handle(&w.events, e), w.handle(&w.streams, s));
            }
            Call::SynchronizeEvent(e) => {
                a.aclrtSynchronizeEvent(w.handle(&w.events, e));
            }
            Call::QueryEventStatus(e, null) => {
                let mut st = 0;
                let out = if null { std::ptr::null_mut() } else { &mut st };
                a.aclrtQueryEventStatus(w.handle(&w.events, e), out);
            }
            Call::StreamWaitEvent(s, e) => {
                a.aclrtStreamWaitEvent(w.handle(&w.streams, s), w.handle(&w.events, e));
            }
            Call::EventElapsedTime(e1, e2, null) => {
                let mut ms = 0f32;
                let out = if null { std::ptr::null_mut() } else { &mut ms };
                a.aclrtEventElapsedTime(out, w.handle(&w.events, e1), w.handle(&w.events, e2));
            }
            Call::GetRecentErrMsg => {
                let m = a.aclGetRecentErrMsg();
                if !m.is_null() {
                    let _ = std::ffi::CStr::from_ptr(m).to_bytes().len();
                }
            }
            Call::CommInit(null) => {
                let mut ri = [0u8; 4108];
                if a.HcclGetRootInfo(&mut ri) != 0 {
                    return;
                }
                let mut c: P = std::ptr::null_mut();
                let out = if null { std::ptr::null_mut() } else { &mut c };
                if a.HcclCommInitRootInfo(1, &ri, 0, out) == 0 && !null {
                    w.comms.lock().unwrap().add(c as u64, 0);
                }
            }
            Call::CommDestroy(h) => {
                let c = w.handle(&w.comms, h);
                if a.HcclCommDestroy(c) == 0 {
                    w.comms.lock().unwrap().retire(c as u64);
                }
            }
            Call::AllReduce(s, r, n, t, op, c, st) => {
                let (s, r) = dev_pair(w, s, r);
                a.HcclAllReduce(
                    s,
                    r,
                    n.get(),
                    dtype(t),
                    op as i32 % 6,
                    w.handle(&w.comms, c),
                    w.handle(&w.streams, st),
                );
            }
            Call::Broadcast(b, n, t, root, c, st) => {
                let (b, _) = dev_pair(w, b, b);
                a.HcclBroadcast(
                    b,
                    n.get(),
                    dtype(t),
                    root % 3,
                    w.handle(&w.comms, c),
                    w.handle(&w.streams, st),
                );
            }
            Call::AllGather(s, r, n, t, c, st) => {
                let (s, r) = dev_pair(w, s, r);
                a.HcclAllGather(
                    s,
                    r,
                    n.get(),
                    dtype(t),
                    w.handle(&w.comms, c),
                    w.handle(&w.streams, st),
                );
            }
            Call::ReduceScatter(s, r, n, t, op, c, st) => {
                let (s, r) = dev_pair(w, s, r);
                a.HcclReduceScatter(
                    s,
                    r,
                    n.get(),
                    dtype(t),
                    op as i32 % 6,
                    w.handle(&w.comms, c),
                    w.handle(&w.streams, st),
                );
            }
            Call::Barrier(c, st) => {
                a.HcclBarrier(w.handle(&w.comms, c), w.handle(&w.streams, st));
            }
            Call::GetRankSize(c, null) => {
                let mut n = 0u32;
                let out = if null { std::ptr::null_mut() } else { &mut n };
                a.HcclGetRankSize(w.handle(&w.comms, c), out);
            }
            Call::GetCommAsyncError(c, null) => {
                let mut e = 0i32;
                let out = if null { std::ptr::null_mut() } else { &mut e };
                a.HcclGetCommAsyncError(w.handle(&w.comms, c), out);
            }
            Call::GetErrorString(e) => {
                let m = a.HcclGetErrorString(e);
                if !m.is_null() {
                    let _ = std::ffi::CStr::from_ptr(m).to_bytes().len();
                }
            }
        }
    }
}

/// Device-side buffers of a collective: host memory is never passed (HCCL takes device
/// memory only, and checks it).
fn dev_pair(w: &World, a: Dev, b: Dev) -> (P, P) {
    let pinned = Pool::default();
    let f = |d: Dev| match d {
        Dev::Host(_) | Dev::Pinned(_) => w.ptr(Dev::Wild(0), &pinned).0,
        d => w.ptr(d, &pinned).0,
    };
    (f(a), f(b))
}

// ---------------------------------------------------------------- the child: one case

/// Runs one case; returns the C calls made (the fuzzer's own setup calls included) and how
/// many of them succeeded.
fn run_case(seed: u64, threads: usize, calls: u64) -> (u64, u64) {
    let dir = lib_dir();
    // SAFETY: our own libraries; their initialisers are safe to run.
    let acl =
        unsafe { libloading::Library::new(dir.join("libascendcl.so")) }.expect("libascendcl.so");
    // SAFETY: as above.
    let hccl = unsafe { libloading::Library::new(dir.join("libhccl.so")) }.expect("libhccl.so");
    let w = World {
        api: Api::load(&acl, &hccl),
        host: (0..HOST_BUFS).map(|i| vec![i as u8; HOST_BYTES]).collect(),
        dev: Default::default(),
        pinned: Default::default(),
        streams: Default::default(),
        events: Default::default(),
        contexts: Default::default(),
        comms: Default::default(),
    };
    // A good start: initialised, a device, a stream, some memory (the rest is random).
    // SAFETY: aclInit with NULL (no config file) is a valid call.
    unsafe {
        w.api.aclInit(std::ptr::null());
    }
    let per = calls / threads as u64;
    let done = std::sync::atomic::AtomicU64::new(0);
    let succeeded = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (w, done, succeeded) = (&w, &done, &succeeded);
            s.spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
                    seed.wrapping_mul(31).wrapping_add(t as u64),
                );
                let mut bytes = vec![0u8; 1 << 16];
                let mut first = vec![
                    Call::SetDevice(t as i8),
                    Call::CreateStream(false),
                    Call::Malloc(Size::Page, 0, false),
                    Call::Malloc(Size::Big(1 << 20), 0, false),
                    Call::CreateEvent(false),
                    Call::CommInit(false),
                ];
                first.reverse();
                let mut n = 0;
                while n < per {
                    rng.fill_bytes(&mut bytes);
                    let mut u = Unstructured::new(&bytes);
                    while n < per {
                        // (An exhausted Unstructured decodes the first variant forever.)
                        if u.len() < 64 && first.is_empty() {
                            break;
                        }
                        let c = match first.pop() {
                            Some(c) => c,
                            None => match Call::arbitrary(&mut u) {
                                Ok(c) => c,
                                Err(_) => break,
                            },
                        };
                        // Calls that end everything (finalize, reset) are drawn 25 times less
                        // often than the others, so most calls meet a live runtime.
                        if matches!(c, Call::Finalize | Call::ResetDevice(_))
                            && u.int_in_range(0..=24u8).unwrap_or(0) != 0
                        {
                            continue;
                        }
                        if std::env::var_os("NPU_EMU_FUZZ_TRACE").is_some() {
                            eprintln!("[{t}] {} {c:?}", c.name());
                        }
                        call(w, c);
                        n += 1;
                        PROGRESS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                let (made, ok) = STATS.with(|s| s.get());
                done.fetch_add(made, std::sync::atomic::Ordering::Relaxed);
                succeeded.fetch_add(ok, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    // SAFETY: aclFinalize takes nothing; every thread of the case has ended.
    unsafe {
        w.api.aclFinalize();
    }
    (done.into_inner(), succeeded.into_inner())
}

#[test]
fn fuzz_child() {
    let Ok(spec) = std::env::var("NPU_EMU_FUZZ_CHILD") else {
        return;
    };
    let v: Vec<u64> = spec.split(':').map(|x| x.parse().unwrap()).collect();
    // Progress for the parent's hang detection: the file changes while calls finish.
    if let Ok(path) = std::env::var("NPU_EMU_FUZZ_PROGRESS") {
        std::thread::spawn(move || {
            let mut last = u64::MAX;
            loop {
                let now = PROGRESS.load(std::sync::atomic::Ordering::Relaxed);
                if now != last {
                    let _ = std::fs::write(&path, now.to_string());
                    last = now;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        });
    }
    let (n, ok) = run_case(v[0], v[1] as usize, v[2]);
    println!("fuzz-calls={n} fuzz-ok={ok}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // SAFETY: end the child without running destructors of whatever the fuzz left behind.
    unsafe { libc::_exit(0) };
}

// ---------------------------------------------------------------- the parent

struct Totals {
    cases: u64,
    calls: u64,
    ok: u64,
}

fn campaign(threads: usize, default_cases: u64, default_calls: u64) -> Totals {
    let cases = env_u64("NPU_EMU_FUZZ_CASES", default_cases);
    let calls = env_u64("NPU_EMU_FUZZ_CALLS", default_calls);
    let seed0 = env_u64("NPU_EMU_FUZZ_SEED", 16);
    let work = scratch(&format!("fuzz-{threads}"));
    let mut total = Totals {
        cases: 0,
        calls: 0,
        ok: 0,
    };
    for i in 0..cases {
        let seed = seed0 + i;
        let node = node_dir(&work);
        let progress = work.join("progress");
        let _ = std::fs::remove_file(&progress);
        let _ = std::fs::remove_dir_all(&node);
        // The node goes away with the case, also when it crashed or hung.
        struct Rm(std::path::PathBuf);
        impl Drop for Rm {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
        let _rm = Rm(node.clone());
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "fuzz_child", "--nocapture", "--test-threads=1"])
            .env("NPU_EMU_FUZZ_CHILD", format!("{seed}:{threads}:{calls}"))
            .env("NPU_EMU_FUZZ_PROGRESS", &progress)
            .env("NPU_EMU_NODE_DIR", &node)
            .env("NPU_EMU_HBM_SIZE", "1G")
            .env("NPU_EMU_DEVICES", "4")
            .env("HCCL_EXEC_TIMEOUT", "3")
            .env("HCCL_CONNECT_TIMEOUT", "3")
            .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
            .env_remove("ASCEND_RT_VISIBLE_DEVICES")
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // A traced child writes megabytes to stderr: straight to ours, as the parent reads
            // its pipe only at the end (a full pipe would stop the child and look like a hang).
            .stderr(if std::env::var_os("NPU_EMU_FUZZ_TRACE").is_some() {
                Stdio::inherit()
            } else {
                Stdio::piped()
            })
            .spawn()
            .unwrap();
        let repro = format!(
            "reproduce: NPU_EMU_FUZZ_SEED={seed} NPU_EMU_FUZZ_CASES=1 NPU_EMU_FUZZ_CALLS={calls} \
             cargo test --release -p npu-emu-tests --test fuzz fuzz_{}_thread -- --nocapture \
             (NPU_EMU_FUZZ_TRACE=1 prints every call)",
            if threads == 1 { "1" } else { "4" }
        );
        let (mut last, mut since) = (String::new(), Instant::now());
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            let now = std::fs::read_to_string(&progress).unwrap_or_default();
            if now != last {
                (last, since) = (now, Instant::now());
            }
            if since.elapsed() > CASE_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "fuzz case {seed} ({threads} threads) HUNG: no call finished for \
                     {CASE_LIMIT:?} (after {last} calls); {repro}"
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        use std::os::unix::process::ExitStatusExt;
        assert!(
            status.success(),
            "fuzz case {seed} ({threads} threads) CRASHED ({status:?}, signal {:?}); {repro}\n{}",
            status.signal(),
            stderr
                .lines()
                .rev()
                .take(30)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        );
        let field = |k: &str| -> u64 {
            stdout
                .split_whitespace()
                .find_map(|w| w.strip_prefix(k))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("fuzz case {seed}: no {k}\n{stdout}\n{stderr}"))
        };
        total.cases += 1;
        total.calls += field("fuzz-calls=");
        total.ok += field("fuzz-ok=");
        let _ = std::fs::remove_dir_all(&node);
    }
    eprintln!(
        "fuzz ({threads} threads): {} cases, {} C calls ({} succeeded, the rest returned an \
         error code), 0 crashes, 0 hangs (seeds {seed0}..{})",
        total.cases,
        total.calls,
        total.ok,
        seed0 + cases
    );
    // A fuzzer that only ever meets errors tests little.
    assert!(
        total.ok * 10 >= total.calls,
        "only {} of {} calls succeeded",
        total.ok,
        total.calls
    );
    total
}

#[test]
fn fuzz_1_thread() {
    campaign(1, 20, 20000);
}

#[test]
fn fuzz_4_threads() {
    campaign(4, 20, 40000);
}
