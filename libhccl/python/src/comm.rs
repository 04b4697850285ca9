//! Communicators: the world (built from the launcher's environment on first use), groups
//! carved from it with `HcclCreateSubCommConfig`, the device each lives on, this module's
//! stream per communicator (for host arrays), staging memory, and the process-wide state.

use crate::bootstrap::{self, How, Launch};
use crate::errors::{check_acl, check_hccl, Error, Result};
use crate::ffi::{self, api, Api, Ptr, ROOT_INFO_BYTES};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Lock `m`, ignoring poisoning (a panic inside never leaves the protected data invalid:
/// every value is written whole).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An ACL event, destroyed when the last reference goes.
pub struct Event(pub usize);

impl Drop for Event {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: the event was created by aclrtCreateEvent and is destroyed once.
            unsafe { (a.destroy_event)(self.0 as Ptr) };
        }
    }
}

impl Event {
    pub fn new(a: &Api) -> Result<Event> {
        let mut e: Ptr = std::ptr::null_mut();
        // SAFETY: `e` is a valid out-pointer.
        check_acl(a, "aclrtCreateEvent", unsafe { (a.create_event)(&mut e) })?;
        Ok(Event(e as usize))
    }
}

/// One communicator.
pub struct Comm {
    /// "world" or "group <id>".
    pub label: String,
    pub rank: u32,
    pub size: u32,
    pub device: i32,
    /// The `HcclComm` (0 once destroyed).
    handle: Mutex<usize>,
    /// This module's stream on `device`, for calls on host arrays.
    pub stream: usize,
    /// Stream and completion event of the last asynchronous call, which the next call on
    /// another stream waits for, so the communicator's calls run in call order.
    pub pending: Mutex<Option<(usize, Arc<Event>)>>,
    /// Calls on one communicator are issued one at a time.
    pub serial: Mutex<()>,
}

impl Comm {
    /// The `HcclComm`, or an error naming the call when the communicator was destroyed.
    pub fn handle(&self, call: &str) -> Result<usize> {
        match *lock(&self.handle) {
            0 => Err(Error::value(format!(
                "{call}: the {} communicator was destroyed (hccl.destroy); create a new group, \
                 or call hccl.init_comm_group() again for the world",
                self.label
            ))),
            h => Ok(h),
        }
    }

    /// Wait for everything queued on this communicator, then destroy it (once).
    pub fn destroy(&self, a: &Api) -> Result<()> {
        let h = std::mem::take(&mut *lock(&self.handle));
        if h == 0 {
            return Ok(());
        }
        let pending = lock(&self.pending).take();
        a.drain();
        with_device(a, self.device, || {
            if let Some((_, ev)) = pending {
                // SAFETY: a live event of this process.
                unsafe { (a.sync_event_timeout)(ev.0 as Ptr, -1) };
            }
            // SAFETY: our own stream, destroyed only here after the communicator.
            unsafe { (a.sync_stream_timeout)(self.stream as Ptr, -1) };
            // SAFETY: `h` is the live HcclComm taken out of the handle slot (so destroyed once).
            let rc = unsafe { (a.comm_destroy)(h as Ptr) };
            // SAFETY: as above.
            unsafe { (a.destroy_stream)(self.stream as Ptr) };
            check_hccl(a, "HcclCommDestroy", rc)
        })
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            let _ = self.destroy(a);
        }
    }
}

/// Run `f` with `device` current on this thread, restoring a different previous device after.
/// (Asking ACL for the current device logs an error on a thread that has none: the first
/// call of a new thread does; setup_device gives the first thread its device without asking.)
pub fn with_device<T>(a: &Api, device: i32, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let mut cur = -1;
    // SAFETY: `cur` is a valid out-pointer.
    let had = unsafe { (a.get_device)(&mut cur) } == 0;
    if had && cur == device {
        return f();
    }
    // SAFETY: plain call; errors are checked.
    check_acl(a, "aclrtSetDevice", unsafe { (a.set_device)(device) })?;
    let r = f();
    if had {
        // SAFETY: back to the device this thread had.
        unsafe { (a.set_device)(cur) };
    }
    r
}

/// Device memory for staging host arrays, returned to a small pool when dropped.
pub struct DevBuf {
    pub ptr: usize,
    pub size: usize,
    device: i32,
}

static POOL: Mutex<Vec<(i32, usize, usize)>> = Mutex::new(Vec::new());
const POOL_KEEP: usize = 8;
const POOL_MAX_BYTES: usize = 1 << 30;

impl DevBuf {
    /// At least `bytes` of device memory on `device` (a pooled block when one fits).
    pub fn get(a: &Api, device: i32, bytes: usize) -> Result<DevBuf> {
        let want = bytes.max(512).next_power_of_two();
        {
            let mut p = lock(&POOL);
            let best = p
                .iter()
                .enumerate()
                .filter(|(_, (d, _, s))| *d == device && *s >= bytes.max(1) && *s <= want * 2)
                .min_by_key(|(_, (_, _, s))| *s)
                .map(|(i, _)| i);
            if let Some(i) = best {
                let (_, ptr, size) = p.swap_remove(i);
                return Ok(DevBuf { ptr, size, device });
            }
        }
        let mut ptr: Ptr = std::ptr::null_mut();
        with_device(a, device, || {
            // SAFETY: `ptr` is a valid out-pointer; the size is non-zero.
            check_acl(a, "aclrtMalloc", unsafe {
                (a.malloc)(&mut ptr, want, ffi::ACL_MEM_MALLOC_HUGE_FIRST)
            })
        })?;
        Ok(DevBuf {
            ptr: ptr as usize,
            size: want,
            device,
        })
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        let mut p = lock(&POOL);
        let total: usize = p.iter().map(|x| x.2).sum();
        if p.len() < POOL_KEEP && total + self.size <= POOL_MAX_BYTES {
            p.push((self.device, self.ptr, self.size));
            return;
        }
        drop(p);
        if let Ok(a) = api() {
            let (ptr, dev) = (self.ptr, self.device);
            let _ = with_device(a, dev, || {
                // SAFETY: memory from aclrtMalloc that no call uses any more.
                unsafe { (a.free)(ptr as Ptr) };
                Ok(())
            });
        }
    }
}

/// Process-wide state.
struct State {
    world: Option<Arc<Comm>>,
    /// Number of world communicators built so far (the next one's number).
    generation: u64,
    /// Groups created since the world was built (the next group's id - 1).
    groups_made: u64,
    groups: Vec<Weak<Comm>>,
    launch: Option<Launch>,
    /// Python objects that must live as long as the process (torchrun's store on rank 0).
    keep: Vec<Py<PyAny>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    world: None,
    generation: 0,
    groups_made: 0,
    groups: Vec::new(),
    launch: None,
    keep: Vec::new(),
});
/// Held while the world or a group is being built (collective calls, in call order).
static BUILD: Mutex<()> = Mutex::new(());

pub fn keep_alive(o: Py<PyAny>) {
    lock(&STATE).keep.push(o);
}

pub fn api_or_err() -> Result<&'static Api> {
    api().map_err(|e| Error::Runtime(format!("hccl: {e}")))
}

/// The world communicator, built on first use.
pub fn world(py: Python<'_>) -> Result<Arc<Comm>> {
    if let Some(w) = lock(&STATE).world.clone() {
        return Ok(w);
    }
    let _b = BUILD
        .lock_py_attached(py)
        .unwrap_or_else(|e| e.into_inner());
    if let Some(w) = lock(&STATE).world.clone() {
        return Ok(w);
    }
    let a = api_or_err()?;
    let launch = bootstrap::detect()?;
    let gen = lock(&STATE).generation;
    let (device, hint) = setup_device(py, a, &launch)?;
    a.drain();
    let context = |e: Error| {
        match e {
        Error::Hccl { code, msg } => Error::Hccl {
            code,
            msg: format!(
                "{msg} [hccl: building the world communicator of rank {} from {} on device {device}{hint}]",
                launch.rank, launch.source
            ),
        },
        other => other,
    }
    };
    let rank = launch.rank;
    let handle = match &launch.how {
        How::RankTable(path) => {
            let p = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|_| Error::value("hccl: RANK_TABLE_FILE contains a NUL byte"))?;
            py.detach(|| {
                with_device(a, device, || {
                    let mut c: Ptr = std::ptr::null_mut();
                    // SAFETY: a NUL-terminated path and a valid out-pointer.
                    let rc = unsafe { (a.init_cluster_info)(p.as_ptr(), rank, &mut c) };
                    check_hccl(a, "HcclCommInitClusterInfo", rc)?;
                    Ok(c as usize)
                })
            })
            .map_err(context)?
        }
        How::Single => py
            .detach(|| {
                with_device(a, device, || {
                    let ri = root_info(a)?;
                    init_root(a, 1, &ri, 0)
                })
            })
            .map_err(context)?,
        How::RootInfo(ex) => {
            let size = launch.size.unwrap_or(1);
            let mine = if rank == 0 {
                Some(
                    py.detach(|| with_device(a, device, || root_info(a)))
                        .map_err(context)?,
                )
            } else {
                None
            };
            let ri = bootstrap::share(py, ex, rank, size, gen, mine)?;
            let h = py
                .detach(|| with_device(a, device, || init_root(a, size, &ri, rank)))
                .map_err(context)?;
            bootstrap::cleanup(ex, rank, gen);
            h
        }
    };
    let comm = finish_comm(a, handle, "world".into(), device)?;
    if let Some(s) = launch.size {
        if s != comm.size || launch.rank != comm.rank {
            return Err(Error::Runtime(format!(
                "hccl: HCCL made this process rank {} of {}, but {} says rank {} of {s}",
                comm.rank, comm.size, launch.source, launch.rank
            )));
        }
    }
    let comm = Arc::new(comm);
    let mut st = lock(&STATE);
    st.world = Some(comm.clone());
    st.generation += 1;
    st.groups_made = 0;
    st.launch = Some(launch);
    Ok(comm)
}

fn root_info(a: &Api) -> Result<Vec<u8>> {
    let mut ri = vec![0u8; ROOT_INFO_BYTES];
    // SAFETY: `ri` has HCCL_ROOT_INFO_BYTES bytes, the size of HcclRootInfo.
    check_hccl(a, "HcclGetRootInfo", unsafe {
        (a.get_root_info)(ri.as_mut_ptr())
    })?;
    Ok(ri)
}

fn init_root(a: &Api, n: u32, ri: &[u8], rank: u32) -> Result<usize> {
    let mut c: Ptr = std::ptr::null_mut();
    // SAFETY: `ri` holds HCCL_ROOT_INFO_BYTES bytes (checked by the exchange); `c` is a valid
    // out-pointer.
    let rc = unsafe { (a.init_root_info)(n, ri.as_ptr(), rank, &mut c) };
    check_hccl(a, "HcclCommInitRootInfo", rc)?;
    Ok(c as usize)
}

/// Rank, size and stream of a new communicator.
fn finish_comm(a: &Api, h: usize, label: String, device: i32) -> Result<Comm> {
    let (mut rank, mut size) = (0u32, 0u32);
    // SAFETY: `h` is a live HcclComm; out-pointers are valid.
    check_hccl(a, "HcclGetRankId", unsafe {
        (a.get_rank_id)(h as Ptr, &mut rank)
    })?;
    // SAFETY: as above.
    check_hccl(a, "HcclGetRankSize", unsafe {
        (a.get_rank_size)(h as Ptr, &mut size)
    })?;
    let mut s: Ptr = std::ptr::null_mut();
    with_device(a, device, || {
        // SAFETY: valid out-pointer.
        check_acl(a, "aclrtCreateStream", unsafe { (a.create_stream)(&mut s) })
    })?;
    Ok(Comm {
        label,
        rank,
        size,
        device,
        handle: Mutex::new(h),
        stream: s as usize,
        pending: Mutex::new(None),
        serial: Mutex::new(()),
    })
}

/// Initialise ACL and choose this process's device (see `bootstrap` for the order).
/// Also returns a hint for init errors when torch_npu had chosen another device than the
/// launcher's.
fn setup_device(py: Python<'_>, a: &Api, l: &Launch) -> Result<(i32, String)> {
    // SAFETY: NULL is a valid config path (no configuration).
    let rc = unsafe { (a.init)(std::ptr::null()) };
    if rc != 0 && rc != ffi::ACL_ERROR_REPEAT_INITIALIZE {
        check_acl(a, "aclInit", rc)?;
    }
    let modules = py.import("sys").and_then(|s| s.getattr("modules"));
    let torch_npu = modules
        .as_ref()
        .map(|m| m.contains("torch_npu").unwrap_or(false))
        .unwrap_or(false);
    let npu = || py.import("torch").and_then(|t| t.getattr("npu"));
    let (d, why) = match (l.device, l.local_rank) {
        (Some(d), _) => (d, "ASCEND_DEVICE_ID"),
        (None, Some(r)) => (r as i32, "the local rank"),
        (None, None) => (l.rank as i32, "the rank"),
    };
    if torch_npu {
        // torch_npu already chose a device: that is this process's device.
        let inited = npu()
            .and_then(|n| n.call_method0("is_initialized"))
            .and_then(|b| b.extract::<bool>())
            .unwrap_or(false);
        if inited {
            let cur = npu()
                .and_then(|n| n.call_method0("current_device"))
                .and_then(|d| d.extract::<i32>())
                .map_err(|e| Error::Runtime(format!("hccl: torch.npu.current_device(): {e}")))?;
            let hint = if cur != d {
                format!(
                    "; torch_npu was already using npu:{cur} while {why} says {d}: call \
                     torch.npu.set_device({d}) (or any hccl function) before making NPU tensors"
                )
            } else {
                String::new()
            };
            return Ok((cur, hint));
        }
    }
    let mut count = 0u32;
    // SAFETY: valid out-pointer.
    check_acl(a, "aclrtGetDeviceCount", unsafe {
        (a.get_device_count)(&mut count)
    })?;
    if d < 0 || d as u32 >= count {
        return Err(Error::value(format!(
            "hccl: rank {} would use device {d} ({why}), but this process sees {count} devices; \
             set ASCEND_DEVICE_ID (or call torch.npu.set_device) to choose one",
            l.rank
        )));
    }
    if torch_npu {
        // torch_npu keeps its own idea of the current device: let it set the device.
        npu()
            .and_then(|n| n.call_method1("set_device", (d,)))
            .map_err(|e| Error::Runtime(format!("hccl: torch.npu.set_device({d}) failed: {e}")))?;
        return Ok((d, String::new()));
    }
    // SAFETY: plain call; the device exists (checked above).
    check_acl(a, "aclrtSetDevice", unsafe { (a.set_device)(d) })?;
    Ok((d, String::new()))
}

/// Whether the world exists (without building it).
pub fn initialized() -> bool {
    lock(&STATE).world.is_some()
}

/// A communicator of `ranks` (world ranks, sorted, unique), collective over the world:
/// `None` for a rank outside it.
pub fn create_group(py: Python<'_>, ranks: &[u32]) -> Result<(u64, Option<Arc<Comm>>)> {
    let w = world(py)?;
    let _b = BUILD
        .lock_py_attached(py)
        .unwrap_or_else(|e| e.into_inner());
    let id = {
        let mut st = lock(&STATE);
        st.groups_made += 1;
        st.groups_made
    };
    let Some(me) = ranks.iter().position(|&r| r == w.rank) else {
        return Ok((id, None));
    };
    let a = api_or_err()?;
    let parent = w.handle("create_group")?;
    let mut ids = ranks.to_vec();
    let device = w.device;
    let h = py.detach(|| {
        a.drain();
        with_device(a, device, || {
            let mut cfg = comm_config();
            let mut p = parent as Ptr;
            let mut sub: Ptr = std::ptr::null_mut();
            // SAFETY: `p` points to the live parent HcclComm, `ids` holds `ids.len()` sorted
            // ranks, `cfg` is a v5 HcclCommConfig of 300 bytes, `sub` a valid out-pointer.
            let rc = unsafe {
                (a.create_sub_comm)(
                    &mut p,
                    ids.len() as u32,
                    ids.as_mut_ptr(),
                    id,
                    me as u32,
                    cfg.as_mut_ptr(),
                    &mut sub,
                )
            };
            check_hccl(a, "HcclCreateSubCommConfig", rc)?;
            Ok(sub as usize)
        })
    })?;
    let c = Arc::new(finish_comm(a, h, format!("group {id}"), device)?);
    lock(&STATE).groups.push(Arc::downgrade(&c));
    Ok((id, Some(c)))
}

/// An `HcclCommConfig` as `HcclCommConfigInit` of a version-5 header (CANN 8.1) writes it:
/// every field at "not set", so the library's defaults and environment apply. Version 5 is
/// read by every library from 8.1 on (abi.md §2.6).
fn comm_config() -> Vec<u8> {
    let mut c = vec![0u8; 300];
    c[0..8].copy_from_slice(&300u64.to_le_bytes());
    c[8..12].copy_from_slice(&0xf0f0_f0f0u32.to_le_bytes());
    c[12..16].copy_from_slice(&5u32.to_le_bytes());
    c[24..28].copy_from_slice(&u32::MAX.to_le_bytes()); // hcclBufferSize
    c[28..32].copy_from_slice(&u32::MAX.to_le_bytes()); // hcclDeterministic
    c[292..296].copy_from_slice(&u32::MAX.to_le_bytes()); // hcclRdmaTrafficClass
    c[296..300].copy_from_slice(&u32::MAX.to_le_bytes()); // hcclRdmaServiceLevel
    c
}

/// Destroy the world and every group (the next call builds a new world).
pub fn destroy_all(py: Python<'_>) -> Result<()> {
    let _b = BUILD
        .lock_py_attached(py)
        .unwrap_or_else(|e| e.into_inner());
    let (world, groups) = {
        let mut st = lock(&STATE);
        (st.world.take(), std::mem::take(&mut st.groups))
    };
    let Ok(a) = api() else { return Ok(()) };
    let mut first: Option<Error> = None;
    py.detach(|| {
        for g in groups.iter().filter_map(Weak::upgrade) {
            if let Err(e) = g.destroy(a) {
                first.get_or_insert(e);
            }
        }
        if let Some(w) = &world {
            if let Err(e) = w.destroy(a) {
                first.get_or_insert(e);
            }
        }
    });
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
