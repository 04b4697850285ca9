//! Shared queues (`acl/acl_tdt_queue.h`; CANN's `libacl_tdt_queue.so`, which the install
//! links to `libascendcl.so`): queues, queue attributes, routes, route lists and route
//! queries. The `acltdt*Buf*` functions of the header are the shared buffers of `mbuf.rs`.
//!
//! A queue belongs to the device current when `acltdtCreateQueue` ran: its id is the lowest
//! id free on that device, and every call finds it by (current device, id), as CANN's
//! runtime does. It holds at most `depth` messages (attribute default 8) and has a name of
//! at most 127 bytes (CANN's `RT_MQ_MAX_NAME_LEN` 128 with the NUL; default "" as CANN's
//! attribute default; the name is not looked up by any call). A message is either a shared
//! buffer (`acltdtEnqueue`: the queue takes the buffer over, `acltdtDequeue` hands it to the
//! caller) or data copied in (`acltdtEnqueueData`: data plus up to 96 bytes of user data,
//! host or device memory of this process). Either end may use either form: data dequeued as
//! a buffer becomes a new buffer on the current device (data in its data area, the user data
//! in its private area); a buffer dequeued as data gives its valid data (and that of the
//! buffers chained to it) and the start of its private area.
//!
//! `timeout` is in ms: -1 waits for ever, 0 does not wait, other negative values are
//! `ACL_ERROR_INVALID_PARAM`. A full queue is `ACL_ERROR_RT_QUEUE_FULL`, an empty one
//! `ACL_ERROR_RT_QUEUE_EMPTY` once the timeout passed (CANN's runtime codes). An id with no
//! queue on the current device (never made, destroyed, also while a call waited on it) is
//! `ACL_ERROR_INVALID_QUEUE_ID`. `acltdtDequeueData` into a buffer smaller than the
//! message is `ACL_ERROR_INVALID_PARAM` with the message's size in `retDataSize`; the message
//! stays queued.
//!
//! Routes: `acltdtBindQueueRoutes` binds each (src, dst) of a list on the current device and
//! sets its status to `ACL_TDT_QUEUE_ROUTE_BIND`, as CANN's queue scheduler does, and from
//! then on every message of src moves to dst as soon as dst has room (to every dst in turn
//! when src has several routes, each getting a copy). A route to itself, one already bound,
//! one that would close a cycle, or one naming a queue that does not exist fails the whole
//! call before anything is bound. `acltdtUnbindQueueRoutes` sets the status back to
//! `ACL_TDT_QUEUE_ROUTE_UNBIND`; a queue with routes cannot be destroyed
//! (`ACL_ERROR_FAILURE`, "unbind first", as CANN). `acltdtQueryQueueRoutes` lists the bound
//! routes by source, destination or both; nothing is ever "abnormal" here, so that mode
//! lists none.
//!
//! Grant and attach: queues live in the memory of the process that made them (the emulated
//! machine has no queue scheduler process to hold them), so `acltdtGrantQueue` to this
//! process records the permission and `acltdtAttachQueue` reports the permissions this
//! process has (the creator has all three); granting to another process is
//! `ACL_ERROR_FEATURE_UNSUPPORTED` (CANN's own code for grant/attach where it lacks them).

use crate::api::mbuf;
use crate::ffi::{boundary, boundary_value, non_null, out};
use crate::globals::{TDTQ, TDTQ_ATTRS, TDTQ_INFOS, TDTQ_LISTS, TDTQ_ROUTES, TDTQ_WAKE};
use crate::runtime;
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::HandleKind;
use parking_lot::MutexGuard;
use std::collections::{BTreeMap, VecDeque};
use std::ffi::{c_char, c_void};
use std::time::{Duration, Instant};

/// `ACL_ERROR_INVALID_QUEUE_ID` (acl_base.h).
const ACL_ERROR_INVALID_QUEUE_ID: i32 = 100032;
use npu_emu::codes::{ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL};

const PERMISSION_MANAGE: u32 = 1;
const PERMISSION_DEQUEUE: u32 = 2;
const PERMISSION_ENQUEUE: u32 = 4;
const PERMISSION_ALL: u32 = PERMISSION_MANAGE | PERMISSION_DEQUEUE | PERMISSION_ENQUEUE;
const ROUTE_UNBIND: i32 = 0;
const ROUTE_BIND: i32 = 1;

const ACL_TDT_QUEUE_NAME_PTR: i32 = 0;
const ACL_TDT_QUEUE_DEPTH_UINT32: i32 = 1;
const ACL_TDT_QUEUE_ROUTE_SRC_UINT32: i32 = 0;
const ACL_TDT_QUEUE_ROUTE_DST_UINT32: i32 = 1;
const ACL_TDT_QUEUE_ROUTE_STATUS_INT32: i32 = 2;
const QUERY_SRC: i32 = 0;
const QUERY_DST: i32 = 1;
const QUERY_SRC_AND_DST: i32 = 2;
const QUERY_ABNORMAL: i32 = 100;
const ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM: i32 = 0;
const ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32: i32 = 1;
const ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32: i32 = 2;

/// Longest queue name with its NUL (CANN's `RT_MQ_MAX_NAME_LEN`).
const NAME_MAX: usize = 128;
/// Default depth of a queue (CANN's `RT_MQ_DEPTH_DEFAULT`).
const DEFAULT_DEPTH: u32 = 8;
/// Size of a message's user data (the shared buffer's private area).
const USER_MAX: usize = 96;

/// What an `acltdtQueueAttr *` is.
pub static ATTR: HandleKind = HandleKind::new(*b"QA", "acltdtQueueAttr", "acltdtCreateQueueAttr");
/// What an `acltdtQueueRoute *` is.
pub static ROUTE: HandleKind =
    HandleKind::new(*b"QR", "acltdtQueueRoute", "acltdtCreateQueueRoute");
/// What an `acltdtQueueRouteList *` is.
pub static LIST: HandleKind =
    HandleKind::new(*b"QL", "acltdtQueueRouteList", "acltdtCreateQueueRouteList");
/// What an `acltdtQueueRouteQueryInfo *` is.
pub static INFO: HandleKind = HandleKind::new(
    *b"QI",
    "acltdtQueueRouteQueryInfo",
    "acltdtCreateQueueRouteQueryInfo",
);

/// The object behind an `acltdtQueueAttr *`.
pub struct QueueAttr {
    /// NUL-terminated; boxed so the pointer `acltdtGetQueueAttr` hands out stays put.
    name: Box<[u8; NAME_MAX]>,
    depth: u32,
}

/// The object behind an `acltdtQueueRoute *` (and one entry of a route list).
#[derive(Clone, Copy)]
pub struct Route {
    src: u32,
    dst: u32,
    status: i32,
}

/// The object behind an `acltdtQueueRouteList *`.
pub struct RouteList {
    routes: Vec<Route>,
}

/// The object behind an `acltdtQueueRouteQueryInfo *`: what was set.
#[derive(Default)]
pub struct QueryInfo {
    mode: Option<i32>,
    src: Option<u32>,
    dst: Option<u32>,
}

/// One queued message.
enum Msg {
    /// A shared buffer (handle) the queue owns.
    Buf(u64),
    /// Data and the 96-byte user area.
    Data(Vec<u8>, [u8; USER_MAX]),
}

impl Msg {
    /// Turn a buffer message into a data message (the buffer is freed).
    fn into_data(self) -> Result<(Vec<u8>, [u8; USER_MAX])> {
        match self {
            Msg::Data(d, u) => Ok((d, u)),
            Msg::Buf(h) => {
                let c = mbuf::contents(h);
                mbuf::release(h);
                c
            }
        }
    }
}

/// One queue.
struct MemQueue {
    name: String,
    depth: u32,
    q: VecDeque<Msg>,
    /// Permissions granted to this process by `acltdtGrantQueue` (the creator has all).
    granted: u32,
}

/// Every queue and bound route of the process, by logical device.
pub struct Queues {
    map: BTreeMap<(i32, u32), MemQueue>,
    /// Bound routes: (device, src, dst).
    routes: Vec<(i32, u32, u32)>,
}

impl Queues {
    pub const fn new() -> Queues {
        Queues {
            map: BTreeMap::new(),
            routes: Vec::new(),
        }
    }

    fn get(&mut self, dev: i32, qid: u32) -> Result<&mut MemQueue> {
        self.map
            .get_mut(&(dev, qid))
            .ok_or_else(|| unknown(dev, qid))
    }

    /// Move messages along the bound routes while their destinations have room.
    fn forward(&mut self) {
        loop {
            let mut moved = false;
            let mut srcs: Vec<(i32, u32)> = self.routes.iter().map(|r| (r.0, r.1)).collect();
            srcs.sort_unstable();
            srcs.dedup();
            for (dev, src) in srcs {
                let dsts: Vec<u32> = self
                    .routes
                    .iter()
                    .filter(|r| r.0 == dev && r.1 == src)
                    .map(|r| r.2)
                    .collect();
                loop {
                    let room = dsts.iter().all(|d| {
                        self.map
                            .get(&(dev, *d))
                            .is_some_and(|q| q.q.len() < q.depth as usize)
                    });
                    if !room {
                        break;
                    }
                    let Some(msg) = self.map.get_mut(&(dev, src)).and_then(|q| q.q.pop_front())
                    else {
                        break;
                    };
                    let copies: Vec<Msg> = if dsts.len() == 1 {
                        vec![msg]
                    } else {
                        let (d, u) = msg.into_data().unwrap_or_default_user();
                        dsts.iter().map(|_| Msg::Data(d.clone(), u)).collect()
                    };
                    for (d, m) in dsts.iter().zip(copies) {
                        if let Some(q) = self.map.get_mut(&(dev, *d)) {
                            q.q.push_back(m);
                        }
                    }
                    moved = true;
                }
            }
            if !moved {
                return;
            }
        }
    }
}

impl Default for Queues {
    fn default() -> Self {
        Queues::new()
    }
}

/// A failed buffer read during forwarding (the buffer was freed behind the queue's back)
/// forwards an empty message rather than losing the route's order.
trait OrEmpty {
    fn unwrap_or_default_user(self) -> (Vec<u8>, [u8; USER_MAX]);
}

impl OrEmpty for Result<(Vec<u8>, [u8; USER_MAX])> {
    fn unwrap_or_default_user(self) -> (Vec<u8>, [u8; USER_MAX]) {
        self.unwrap_or((Vec::new(), [0; USER_MAX]))
    }
}

fn unknown(dev: i32, qid: u32) -> Error {
    Error::new(
        ACL_ERROR_INVALID_QUEUE_ID,
        format!("qid = {qid}: device {dev} has no such queue (acltdtCreateQueue)"),
    )
}

/// The current logical device.
fn device() -> Result<i32> {
    Ok(runtime::get()?.current_device()?.0)
}

/// The deadline of a `timeout` in ms (-1: none).
fn deadline(timeout: i32) -> Result<Option<Instant>> {
    match timeout {
        -1 => Ok(None),
        t if t >= 0 => Ok(Some(Instant::now() + Duration::from_millis(t as u64))),
        t => Err(Error::invalid(format!(
            "timeout = {t} is invalid: expected -1 (wait for ever), 0 (no wait) or a number of ms"
        ))),
    }
}

/// Wait for a change to the queues until `until`; false when `until` has passed.
fn wait(st: &mut MutexGuard<'_, Queues>, until: Option<Instant>) -> bool {
    match until {
        None => {
            TDTQ_WAKE.wait(st);
            true
        }
        Some(u) => {
            if Instant::now() >= u {
                return false;
            }
            TDTQ_WAKE.wait_until(st, u);
            true
        }
    }
}

/// Put `msg` on queue `qid` of `dev`, waiting up to `timeout` for room. On failure a buffer
/// message stays the caller's (dropping a `Msg` frees nothing).
fn enqueue(dev: i32, qid: u32, msg: Msg, timeout: i32) -> Result<()> {
    let until = deadline(timeout)?;
    let mut st = TDTQ.lock();
    if let Msg::Buf(h) = msg {
        let holder = st
            .map
            .iter()
            .find(|(_, q)| q.q.iter().any(|m| matches!(m, Msg::Buf(x) if *x == h)));
        if let Some(((d, id), _)) = holder {
            return Err(Error::invalid(format!(
                "buf = {h:#x} is already in queue {id} of device {d}: a buffer is in one queue at a time"
            )));
        }
    }
    loop {
        let q = st.get(dev, qid)?;
        if q.q.len() < q.depth as usize {
            q.q.push_back(msg);
            st.forward();
            TDTQ_WAKE.notify_all();
            return Ok(());
        }
        let (depth, name) = (q.depth, q.name.clone());
        if !wait(&mut st, until) {
            return Err(Error::new(
                ACL_ERROR_RT_QUEUE_FULL,
                format!(
                    "queue {qid} ({name:?}) of device {dev} is full ({depth} messages) and stayed so for timeout = {timeout} ms"
                ),
            ));
        }
    }
}

/// Wait up to `timeout` for a message of queue `qid` of `dev` and hand it to `take`, which
/// may refuse it (it stays queued).
fn dequeue<R>(
    dev: i32,
    qid: u32,
    timeout: i32,
    take: impl FnOnce(&mut VecDeque<Msg>) -> Result<R>,
) -> Result<R> {
    let until = deadline(timeout)?;
    let mut st = TDTQ.lock();
    loop {
        let q = st.get(dev, qid)?;
        if !q.q.is_empty() {
            let r = take(&mut q.q);
            st.forward();
            TDTQ_WAKE.notify_all();
            return r;
        }
        let name = q.name.clone();
        if !wait(&mut st, until) {
            return Err(Error::new(
                ACL_ERROR_RT_QUEUE_EMPTY,
                format!("queue {qid} ({name:?}) of device {dev} is empty and stayed so for timeout = {timeout} ms"),
            ));
        }
    }
}

/// `aclError acltdtCreateQueue(const acltdtQueueAttr *attr, uint32_t *qid)`
#[no_mangle]
pub extern "C" fn acltdtCreateQueue(attr: *const c_void, qid: *mut u32) -> i32 {
    boundary("acltdtCreateQueue", || {
        non_null(qid, "qid")?;
        let (name, depth) = if attr.is_null() {
            (String::new(), DEFAULT_DEPTH)
        } else {
            let attrs = TDTQ_ATTRS.lock();
            let a = attrs.get(attr as u64, "attr")?;
            let end = a.name.iter().position(|b| *b == 0).unwrap_or(NAME_MAX);
            (
                String::from_utf8_lossy(&a.name[..end]).into_owned(),
                a.depth,
            )
        };
        if depth == 0 {
            return Err(Error::invalid(
                "attr: depth = 0 is invalid: a queue holds at least one message",
            ));
        }
        let dev = device()?;
        let mut st = TDTQ.lock();
        let id = (0..=u32::MAX)
            .find(|i| !st.map.contains_key(&(dev, *i)))
            .ok_or_else(|| Error::new(ACL_ERROR_FAILURE, "no queue id is free"))?;
        st.map.insert(
            (dev, id),
            MemQueue {
                name,
                depth,
                q: VecDeque::new(),
                granted: 0,
            },
        );
        drop(st);
        out(qid, "qid", id)
    })
}

/// `aclError acltdtDestroyQueue(uint32_t qid)`: refused while routes name the queue.
#[no_mangle]
pub extern "C" fn acltdtDestroyQueue(qid: u32) -> i32 {
    boundary("acltdtDestroyQueue", || {
        let dev = device()?;
        let q = {
            let mut st = TDTQ.lock();
            st.get(dev, qid)?;
            if let Some(r) = st
                .routes
                .iter()
                .find(|r| r.0 == dev && (r.1 == qid || r.2 == qid))
            {
                return Err(Error::new(
                    ACL_ERROR_FAILURE,
                    format!(
                        "qid = {qid} is bound in route {} -> {}: it needs to be unbound first (acltdtUnbindQueueRoutes)",
                        r.1, r.2
                    ),
                ));
            }
            let q = st.map.remove(&(dev, qid));
            TDTQ_WAKE.notify_all();
            q
        };
        for m in q.into_iter().flat_map(|q| q.q) {
            if let Msg::Buf(h) = m {
                mbuf::release(h);
            }
        }
        Ok(())
    })
}

/// `aclError acltdtEnqueue(uint32_t qid, acltdtBuf buf, int32_t timeout)`: the queue takes
/// the buffer over.
#[no_mangle]
pub extern "C" fn acltdtEnqueue(qid: u32, buf: *mut c_void, timeout: i32) -> i32 {
    boundary("acltdtEnqueue", || {
        mbuf::check(buf as u64, "buf")?;
        let dev = device()?;
        enqueue(dev, qid, Msg::Buf(buf as u64), timeout)
    })
}

/// `aclError acltdtDequeue(uint32_t qid, acltdtBuf *buf, int32_t timeout)`
#[no_mangle]
pub extern "C" fn acltdtDequeue(qid: u32, buf: *mut *mut c_void, timeout: i32) -> i32 {
    boundary("acltdtDequeue", || {
        non_null(buf, "buf")?;
        let dev = device()?;
        let h = dequeue(dev, qid, timeout, |q| {
            let h = match q.front() {
                Some(Msg::Buf(h)) => *h,
                Some(Msg::Data(d, u)) => mbuf::from_contents(d, u)?,
                None => unreachable!("dequeue hands over a non-empty queue"),
            };
            q.pop_front();
            Ok(h)
        })?;
        out(buf, "buf", h as *mut c_void)
    })
}

/// A host pointer for `n` bytes at `p`, host or device memory of this process.
fn host_view(p: *const c_void, n: usize, what: &str) -> Result<*mut u8> {
    if n != 0 && npu_emu::memory::is_canonical(p as u64) {
        runtime::get()?.node.check(p as u64, n as u64, what)
    } else {
        Ok(p as *mut u8)
    }
}

/// Check a user-data argument pair.
fn check_user(user: *const c_void, size: usize) -> Result<()> {
    if size > USER_MAX {
        return Err(Error::invalid(format!(
            "userDataSize = {size} is larger than {USER_MAX} bytes"
        )));
    }
    if user.is_null() && size != 0 {
        return Err(Error::invalid(format!(
            "userData is NULL but userDataSize = {size}: pass 0 when there is no user data"
        )));
    }
    Ok(())
}

/// `aclError acltdtEnqueueData(uint32_t qid, const void *data, size_t dataSize,
/// const void *userData, size_t userDataSize, int32_t timeout, uint32_t rsv)`: `rsv` is
/// reserved (CANN ignores it).
#[no_mangle]
pub extern "C" fn acltdtEnqueueData(
    qid: u32,
    data: *const c_void,
    dataSize: usize,
    userData: *const c_void,
    userDataSize: usize,
    timeout: i32,
    rsv: u32,
) -> i32 {
    let _ = rsv;
    boundary("acltdtEnqueueData", || {
        non_null(data, "data")?;
        if dataSize == 0 {
            return Err(Error::invalid("dataSize = 0: it must be greater than 0"));
        }
        check_user(userData, userDataSize)?;
        let dev = device()?;
        let src = host_view(data, dataSize, "data")?;
        // SAFETY: `dataSize` bytes at `data`: checked by the node for device memory, the
        // caller's contract for host memory.
        let bytes = unsafe { std::slice::from_raw_parts(src, dataSize) }.to_vec();
        let mut user = [0u8; USER_MAX];
        if userDataSize != 0 {
            let u = host_view(userData, userDataSize, "userData")?;
            // SAFETY: as above, `userDataSize` <= 96 bytes at `userData`.
            user[..userDataSize]
                .copy_from_slice(unsafe { std::slice::from_raw_parts(u, userDataSize) });
        }
        enqueue(dev, qid, Msg::Data(bytes, user), timeout)
    })
}

/// `aclError acltdtDequeueData(uint32_t qid, void *data, size_t dataSize, size_t *retDataSize,
/// void *userData, size_t userDataSize, int32_t timeout)`
#[no_mangle]
pub extern "C" fn acltdtDequeueData(
    qid: u32,
    data: *mut c_void,
    dataSize: usize,
    retDataSize: *mut usize,
    userData: *mut c_void,
    userDataSize: usize,
    timeout: i32,
) -> i32 {
    boundary("acltdtDequeueData", || {
        non_null(data, "data")?;
        non_null(retDataSize, "retDataSize")?;
        if dataSize == 0 {
            return Err(Error::invalid("dataSize = 0: it must be greater than 0"));
        }
        check_user(userData, userDataSize)?;
        let dev = device()?;
        let dst = host_view(data, dataSize, "data")?;
        let udst = if userDataSize != 0 {
            host_view(userData, userDataSize, "userData")?
        } else {
            std::ptr::null_mut()
        };
        let n = dequeue(dev, qid, timeout, |q| {
            if let Some(Msg::Buf(_)) = q.front() {
                let m = q.pop_front().expect("non-empty");
                let (d, u) = m.into_data()?;
                q.push_front(Msg::Data(d, u));
            }
            let Some(Msg::Data(d, u)) = q.front() else {
                unreachable!("a data message at the front");
            };
            if d.len() > dataSize {
                let n = d.len();
                out(retDataSize, "retDataSize", n)?;
                return Err(Error::invalid(format!(
                    "dataSize = {dataSize} is smaller than the message's {n} bytes (left in the queue; retDataSize = {n})"
                )));
            }
            // SAFETY: `dst` has room for dataSize >= d.len() bytes, `udst` for
            // userDataSize <= 96 (checked by the node for device memory, the caller's
            // contract for host memory); the message's bytes are our own.
            unsafe {
                std::ptr::copy_nonoverlapping(d.as_ptr(), dst, d.len());
                if !udst.is_null() {
                    std::ptr::copy_nonoverlapping(u.as_ptr(), udst, userDataSize);
                }
            }
            let n = d.len();
            q.pop_front();
            Ok(n)
        })?;
        out(retDataSize, "retDataSize", n)
    })
}

/// `aclError acltdtGrantQueue(uint32_t qid, int32_t pid, uint32_t permission,
/// int32_t timeout)`
#[no_mangle]
pub extern "C" fn acltdtGrantQueue(qid: u32, pid: i32, permission: u32, timeout: i32) -> i32 {
    boundary("acltdtGrantQueue", || {
        deadline(timeout)?;
        if permission == 0 || permission & !PERMISSION_ALL != 0 {
            return Err(Error::invalid(format!(
                "permission = {permission:#x} is invalid: expected a non-empty combination of ACL_TDT_QUEUE_PERMISSION_MANAGE (1), _DEQUEUE (2) and _ENQUEUE (4)"
            )));
        }
        if pid <= 0 {
            return Err(Error::invalid(format!("pid = {pid} is not a process id")));
        }
        let dev = device()?;
        let mut st = TDTQ.lock();
        let q = st.get(dev, qid)?;
        if pid as u32 != std::process::id() {
            return Err(Error::new(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                format!(
                    "pid = {pid}: queues of npu-emu live in the process that created them; granting queue {qid} to another process is not supported"
                ),
            ));
        }
        q.granted |= permission;
        Ok(())
    })
}

/// `aclError acltdtAttachQueue(uint32_t qid, int32_t timeout, uint32_t *permission)`: the
/// permissions this process has on the queue.
#[no_mangle]
pub extern "C" fn acltdtAttachQueue(qid: u32, timeout: i32, permission: *mut u32) -> i32 {
    boundary("acltdtAttachQueue", || {
        non_null(permission, "permission")?;
        deadline(timeout)?;
        let dev = device()?;
        let p = {
            let mut st = TDTQ.lock();
            let q = st.get(dev, qid)?;
            PERMISSION_ALL | q.granted
        };
        out(permission, "permission", p)
    })
}

/// `acltdtQueueAttr *acltdtCreateQueueAttr(void)`: default name "" and depth 8.
#[no_mangle]
pub extern "C" fn acltdtCreateQueueAttr() -> *mut c_void {
    boundary_value("acltdtCreateQueueAttr", std::ptr::null_mut(), || {
        Ok(TDTQ_ATTRS.lock().insert(QueueAttr {
            name: Box::new([0; NAME_MAX]),
            depth: DEFAULT_DEPTH,
        }) as *mut c_void)
    })
}

/// `aclError acltdtDestroyQueueAttr(const acltdtQueueAttr *attr)`
#[no_mangle]
pub extern "C" fn acltdtDestroyQueueAttr(attr: *const c_void) -> i32 {
    boundary("acltdtDestroyQueueAttr", || {
        TDTQ_ATTRS.lock().remove(attr as u64, "attr")?;
        Ok(())
    })
}

/// `len` must be the size of the parameter's type.
fn check_len(len: usize, want: usize, ty: &str) -> Result<()> {
    if len != want {
        return Err(Error::invalid(format!(
            "len = {len} is invalid for {ty}: expected {want}"
        )));
    }
    Ok(())
}

/// `len` must hold the parameter (getters).
fn check_room(len: usize, want: usize, ty: &str) -> Result<()> {
    if len < want {
        return Err(Error::invalid(format!(
            "len = {len} is too small for {ty}: it needs {want} bytes"
        )));
    }
    Ok(())
}

/// `aclError acltdtSetQueueAttr(acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len,
/// const void *param)`: `param` points to a `const char *` (name) or a `uint32_t` (depth).
#[no_mangle]
pub extern "C" fn acltdtSetQueueAttr(
    attr: *mut c_void,
    type_: i32,
    len: usize,
    param: *const c_void,
) -> i32 {
    boundary("acltdtSetQueueAttr", || {
        non_null(param, "param")?;
        let mut attrs = TDTQ_ATTRS.lock();
        let a = attrs.get_mut(attr as u64, "attr")?;
        match type_ {
            ACL_TDT_QUEUE_NAME_PTR => {
                check_len(len, std::mem::size_of::<*const c_char>(), "ACL_TDT_QUEUE_NAME_PTR")?;
                // SAFETY: param points to a `const char *` (len checked).
                let s = unsafe { (param as *const *const c_char).read_unaligned() };
                non_null(s, "*param (the queue name)")?;
                // SAFETY: a NUL-terminated string (the caller's contract); at most
                // NAME_MAX bytes are read.
                let n = (0..NAME_MAX)
                    .find(|i| unsafe { *s.add(*i) } == 0)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "the queue name is longer than {} bytes (at most {NAME_MAX} with its NUL)",
                            NAME_MAX - 1
                        ))
                    })?;
                let mut name = [0u8; NAME_MAX];
                // SAFETY: `n` bytes before the NUL were just read.
                name[..n].copy_from_slice(unsafe { std::slice::from_raw_parts(s as *const u8, n) });
                *a.name = name;
                Ok(())
            }
            ACL_TDT_QUEUE_DEPTH_UINT32 => {
                check_len(len, 4, "ACL_TDT_QUEUE_DEPTH_UINT32")?;
                // SAFETY: param points to a uint32_t (len checked).
                let d = unsafe { (param as *const u32).read_unaligned() };
                if d == 0 {
                    return Err(Error::invalid(
                        "depth = 0 is invalid: a queue holds at least one message",
                    ));
                }
                a.depth = d;
                Ok(())
            }
            t => Err(Error::invalid(format!(
                "type = {t} is invalid: expected ACL_TDT_QUEUE_NAME_PTR (0) or ACL_TDT_QUEUE_DEPTH_UINT32 (1)"
            ))),
        }
    })
}

/// Write `bytes` to a getter's `param` and their count to `paramRetSize`.
fn put(param: *mut c_void, len: usize, ret: *mut usize, bytes: &[u8], ty: &str) -> Result<()> {
    check_room(len, bytes.len(), ty)?;
    // SAFETY: param has room for len >= bytes.len() bytes (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), param as *mut u8, bytes.len()) };
    out(ret, "paramRetSize", bytes.len())
}

/// `aclError acltdtGetQueueAttr(const acltdtQueueAttr *attr, acltdtQueueAttrType type,
/// size_t len, size_t *paramRetSize, void *param)`: the name comes back as a `const char *`
/// valid while the attribute lives.
#[no_mangle]
pub extern "C" fn acltdtGetQueueAttr(
    attr: *const c_void,
    type_: i32,
    len: usize,
    paramRetSize: *mut usize,
    param: *mut c_void,
) -> i32 {
    boundary("acltdtGetQueueAttr", || {
        non_null(param, "param")?;
        non_null(paramRetSize, "paramRetSize")?;
        let attrs = TDTQ_ATTRS.lock();
        let a = attrs.get(attr as u64, "attr")?;
        match type_ {
            ACL_TDT_QUEUE_NAME_PTR => {
                let p = a.name.as_ptr() as usize;
                put(param, len, paramRetSize, &p.to_ne_bytes(), "ACL_TDT_QUEUE_NAME_PTR")
            }
            ACL_TDT_QUEUE_DEPTH_UINT32 => put(
                param,
                len,
                paramRetSize,
                &a.depth.to_ne_bytes(),
                "ACL_TDT_QUEUE_DEPTH_UINT32",
            ),
            t => Err(Error::invalid(format!(
                "type = {t} is invalid: expected ACL_TDT_QUEUE_NAME_PTR (0) or ACL_TDT_QUEUE_DEPTH_UINT32 (1)"
            ))),
        }
    })
}

/// `acltdtQueueRoute *acltdtCreateQueueRoute(uint32_t srcId, uint32_t dstId)`
#[no_mangle]
pub extern "C" fn acltdtCreateQueueRoute(srcId: u32, dstId: u32) -> *mut c_void {
    boundary_value("acltdtCreateQueueRoute", std::ptr::null_mut(), || {
        Ok(TDTQ_ROUTES.lock().insert(Route {
            src: srcId,
            dst: dstId,
            status: ROUTE_UNBIND,
        }) as *mut c_void)
    })
}

/// `aclError acltdtDestroyQueueRoute(const acltdtQueueRoute *route)`
#[no_mangle]
pub extern "C" fn acltdtDestroyQueueRoute(route: *const c_void) -> i32 {
    boundary("acltdtDestroyQueueRoute", || {
        TDTQ_ROUTES.lock().remove(route as u64, "route")?;
        Ok(())
    })
}

/// `aclError acltdtGetQueueRouteParam(const acltdtQueueRoute *route,
/// acltdtQueueRouteParamType type, size_t len, size_t *paramRetSize, void *param)`
#[no_mangle]
pub extern "C" fn acltdtGetQueueRouteParam(
    route: *const c_void,
    type_: i32,
    len: usize,
    paramRetSize: *mut usize,
    param: *mut c_void,
) -> i32 {
    boundary("acltdtGetQueueRouteParam", || {
        non_null(param, "param")?;
        non_null(paramRetSize, "paramRetSize")?;
        let r = *TDTQ_ROUTES.lock().get(route as u64, "route")?;
        let (bytes, ty) = match type_ {
            ACL_TDT_QUEUE_ROUTE_SRC_UINT32 => (r.src.to_ne_bytes(), "ACL_TDT_QUEUE_ROUTE_SRC_UINT32"),
            ACL_TDT_QUEUE_ROUTE_DST_UINT32 => (r.dst.to_ne_bytes(), "ACL_TDT_QUEUE_ROUTE_DST_UINT32"),
            ACL_TDT_QUEUE_ROUTE_STATUS_INT32 => {
                (r.status.to_ne_bytes(), "ACL_TDT_QUEUE_ROUTE_STATUS_INT32")
            }
            t => {
                return Err(Error::invalid(format!(
                    "type = {t} is invalid: expected ACL_TDT_QUEUE_ROUTE_SRC_UINT32 (0), _DST_UINT32 (1) or _STATUS_INT32 (2)"
                )))
            }
        };
        put(param, len, paramRetSize, &bytes, ty)
    })
}

/// `acltdtQueueRouteList *acltdtCreateQueueRouteList(void)`
#[no_mangle]
pub extern "C" fn acltdtCreateQueueRouteList() -> *mut c_void {
    boundary_value("acltdtCreateQueueRouteList", std::ptr::null_mut(), || {
        Ok(TDTQ_LISTS.lock().insert(RouteList { routes: Vec::new() }) as *mut c_void)
    })
}

/// `aclError acltdtDestroyQueueRouteList(const acltdtQueueRouteList *routeList)`
#[no_mangle]
pub extern "C" fn acltdtDestroyQueueRouteList(routeList: *const c_void) -> i32 {
    boundary("acltdtDestroyQueueRouteList", || {
        TDTQ_LISTS.lock().remove(routeList as u64, "routeList")?;
        Ok(())
    })
}

/// `aclError acltdtAddQueueRoute(acltdtQueueRouteList *routeList,
/// const acltdtQueueRoute *route)`: the list keeps a copy.
#[no_mangle]
pub extern "C" fn acltdtAddQueueRoute(routeList: *mut c_void, route: *const c_void) -> i32 {
    boundary("acltdtAddQueueRoute", || {
        let r = *TDTQ_ROUTES.lock().get(route as u64, "route")?;
        TDTQ_LISTS
            .lock()
            .get_mut(routeList as u64, "routeList")?
            .routes
            .push(r);
        Ok(())
    })
}

/// `aclError acltdtGetQueueRoute(const acltdtQueueRouteList *routeList, size_t index,
/// acltdtQueueRoute *route)`: copies entry `index` into `route` (made by
/// `acltdtCreateQueueRoute`).
#[no_mangle]
pub extern "C" fn acltdtGetQueueRoute(
    routeList: *const c_void,
    index: usize,
    route: *mut c_void,
) -> i32 {
    boundary("acltdtGetQueueRoute", || {
        let r = {
            let lists = TDTQ_LISTS.lock();
            let l = lists.get(routeList as u64, "routeList")?;
            *l.routes.get(index).ok_or_else(|| {
                Error::invalid(format!(
                    "index = {index} must be less than the route list's size {}",
                    l.routes.len()
                ))
            })?
        };
        *TDTQ_ROUTES.lock().get_mut(route as u64, "route")? = r;
        Ok(())
    })
}

/// `size_t acltdtGetQueueRouteNum(const acltdtQueueRouteList *routeList)`: 0 for a NULL or
/// dead list (with the message).
#[no_mangle]
pub extern "C" fn acltdtGetQueueRouteNum(routeList: *const c_void) -> usize {
    boundary_value("acltdtGetQueueRouteNum", 0, || {
        Ok(TDTQ_LISTS
            .lock()
            .get(routeList as u64, "routeList")?
            .routes
            .len())
    })
}

/// `acltdtQueueRouteQueryInfo *acltdtCreateQueueRouteQueryInfo(void)`
#[no_mangle]
pub extern "C" fn acltdtCreateQueueRouteQueryInfo() -> *mut c_void {
    boundary_value(
        "acltdtCreateQueueRouteQueryInfo",
        std::ptr::null_mut(),
        || Ok(TDTQ_INFOS.lock().insert(QueryInfo::default()) as *mut c_void),
    )
}

/// `aclError acltdtDestroyQueueRouteQueryInfo(const acltdtQueueRouteQueryInfo *info)`
#[no_mangle]
pub extern "C" fn acltdtDestroyQueueRouteQueryInfo(info: *const c_void) -> i32 {
    boundary("acltdtDestroyQueueRouteQueryInfo", || {
        TDTQ_INFOS.lock().remove(info as u64, "info")?;
        Ok(())
    })
}

/// `aclError acltdtSetQueueRouteQueryInfo(acltdtQueueRouteQueryInfo *param,
/// acltdtQueueRouteQueryInfoParamType type, size_t len, const void *value)`
#[no_mangle]
pub extern "C" fn acltdtSetQueueRouteQueryInfo(
    param: *mut c_void,
    type_: i32,
    len: usize,
    value: *const c_void,
) -> i32 {
    boundary("acltdtSetQueueRouteQueryInfo", || {
        non_null(value, "value")?;
        let mut infos = TDTQ_INFOS.lock();
        let i = infos.get_mut(param as u64, "param")?;
        let ty = match type_ {
            ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM => "ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM",
            ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 => "ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32",
            ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32 => "ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32",
            t => {
                return Err(Error::invalid(format!(
                    "type = {t} is invalid: expected ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM (0), _SRC_ID_UINT32 (1) or _DST_ID_UINT32 (2)"
                )))
            }
        };
        check_len(len, 4, ty)?;
        // SAFETY: value points to 4 bytes (len checked).
        let v = unsafe { (value as *const u32).read_unaligned() };
        match type_ {
            ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM => i.mode = Some(v as i32),
            ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 => i.src = Some(v),
            _ => i.dst = Some(v),
        }
        Ok(())
    })
}

/// `aclError acltdtQueryQueueRoutes(const acltdtQueueRouteQueryInfo *queryInfo,
/// acltdtQueueRouteList *qRouteList)`: replaces the list's routes with the bound routes
/// that match.
#[no_mangle]
pub extern "C" fn acltdtQueryQueueRoutes(queryInfo: *const c_void, qRouteList: *mut c_void) -> i32 {
    boundary("acltdtQueryQueueRoutes", || {
        let (mode, src, dst) = {
            let infos = TDTQ_INFOS.lock();
            let i = infos.get(queryInfo as u64, "queryInfo")?;
            (i.mode, i.src, i.dst)
        };
        TDTQ_LISTS
            .lock()
            .get_mut(qRouteList as u64, "qRouteList")?
            .routes
            .clear();
        let Some(mode) = mode else {
            return Err(Error::invalid(
                "queryInfo has no mode: set ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM with acltdtSetQueueRouteQueryInfo",
            ));
        };
        let need = |what: Option<u32>, which: &str| {
            what.ok_or_else(|| {
                Error::invalid(format!(
                    "queryInfo has no {which} queue id: set ACL_TDT_QUEUE_ROUTE_QUERY_{}_ID_UINT32 with acltdtSetQueueRouteQueryInfo for mode {mode}",
                    which.to_uppercase()
                ))
            })
        };
        let keep: Box<dyn Fn(u32, u32) -> bool> = match mode {
            QUERY_SRC => {
                let s = need(src, "src")?;
                Box::new(move |a, _| a == s)
            }
            QUERY_DST => {
                let d = need(dst, "dst")?;
                Box::new(move |_, b| b == d)
            }
            QUERY_SRC_AND_DST => {
                let s = need(src, "src")?;
                let d = need(dst, "dst")?;
                Box::new(move |a, b| a == s && b == d)
            }
            QUERY_ABNORMAL => Box::new(|_, _| false),
            m => {
                return Err(Error::invalid(format!(
                    "queryInfo mode = {m} is invalid: expected ACL_TDT_QUEUE_ROUTE_QUERY_SRC (0), _DST (1), _SRC_AND_DST (2) or _ABNORMAL (100)"
                )))
            }
        };
        let dev = device()?;
        let found: Vec<Route> = TDTQ
            .lock()
            .routes
            .iter()
            .filter(|r| r.0 == dev && keep(r.1, r.2))
            .map(|r| Route {
                src: r.1,
                dst: r.2,
                status: ROUTE_BIND,
            })
            .collect();
        TDTQ_LISTS
            .lock()
            .get_mut(qRouteList as u64, "qRouteList")?
            .routes = found;
        Ok(())
    })
}

/// Whether `to` is reachable from `from` along `routes` of `dev`.
fn reaches(routes: &[(i32, u32, u32)], dev: i32, from: u32, to: u32) -> bool {
    let mut seen = vec![from];
    let mut k = 0;
    while k < seen.len() {
        let n = seen[k];
        if n == to {
            return true;
        }
        for r in routes.iter().filter(|r| r.0 == dev && r.1 == n) {
            if !seen.contains(&r.2) {
                seen.push(r.2);
            }
        }
        k += 1;
    }
    false
}

/// `aclError acltdtBindQueueRoutes(acltdtQueueRouteList *qRouteList)`
#[no_mangle]
pub extern "C" fn acltdtBindQueueRoutes(qRouteList: *mut c_void) -> i32 {
    boundary("acltdtBindQueueRoutes", || {
        let mut lists = TDTQ_LISTS.lock();
        let l = lists.get_mut(qRouteList as u64, "qRouteList")?;
        let dev = device()?;
        let mut st = TDTQ.lock();
        let mut routes = st.routes.clone();
        for (k, r) in l.routes.iter().enumerate() {
            for q in [r.src, r.dst] {
                if !st.map.contains_key(&(dev, q)) {
                    return Err(Error::new(
                        ACL_ERROR_INVALID_QUEUE_ID,
                        format!(
                            "route {k} ({} -> {}): device {dev} has no queue {q}",
                            r.src, r.dst
                        ),
                    ));
                }
            }
            if r.src == r.dst {
                return Err(Error::invalid(format!(
                    "route {k} binds queue {} to itself",
                    r.src
                )));
            }
            if routes.contains(&(dev, r.src, r.dst)) {
                return Err(Error::invalid(format!(
                    "route {k} ({} -> {}) is already bound",
                    r.src, r.dst
                )));
            }
            if reaches(&routes, dev, r.dst, r.src) {
                return Err(Error::invalid(format!(
                    "route {k} ({} -> {}) would close a cycle of routes",
                    r.src, r.dst
                )));
            }
            routes.push((dev, r.src, r.dst));
        }
        st.routes = routes;
        for r in l.routes.iter_mut() {
            r.status = ROUTE_BIND;
        }
        st.forward();
        TDTQ_WAKE.notify_all();
        Ok(())
    })
}

/// `aclError acltdtUnbindQueueRoutes(acltdtQueueRouteList *qRouteList)`
#[no_mangle]
pub extern "C" fn acltdtUnbindQueueRoutes(qRouteList: *mut c_void) -> i32 {
    boundary("acltdtUnbindQueueRoutes", || {
        let mut lists = TDTQ_LISTS.lock();
        let l = lists.get_mut(qRouteList as u64, "qRouteList")?;
        let dev = device()?;
        let mut st = TDTQ.lock();
        let mut routes = st.routes.clone();
        for (k, r) in l.routes.iter().enumerate() {
            let Some(at) = routes.iter().position(|x| *x == (dev, r.src, r.dst)) else {
                return Err(Error::invalid(format!(
                    "route {k} ({} -> {}) is not bound on device {dev}",
                    r.src, r.dst
                )));
            };
            routes.remove(at);
        }
        st.routes = routes;
        for r in l.routes.iter_mut() {
            r.status = ROUTE_UNBIND;
        }
        Ok(())
    })
}
