//! Shared buffers (`aclrtMbuf`): `aclrtAllocBuf`, `aclrtFreeBuf`, `aclrtGetBufData`,
//! `aclrtGetBufDataLen`, `aclrtSetBufDataLen`, `aclrtCopyBufRef`, `aclrtSetBufUserData`,
//! `aclrtGetBufUserData`, `aclrtAppendBufChain`, `aclrtGetBufChainNum`,
//! `aclrtGetBufFromChain`, and their `acltdt*` twins of `acl/acl_tdt_queue.h`
//! (`acltdtAllocBuf` … `acltdtCopyBufRef`): CANN's `acltdtBuf` is the same object as
//! `aclrtMbuf` (its queue processor forwards each `acltdt*Buf*` call to the `aclrt*` one).
//!
//! CANN documents these as reserved ("共享Buffer管理(预留,暂不支持)"; not on Atlas A2/A3);
//! npu-emu offers them as documented for the products that have them. A buffer is a data
//! area of device memory on the current device (`size` in (0, 4 GiB]), a valid-data length
//! (initially 0, at most the data size), a 96-byte private area for user control data
//! (`offset + size <= 96`), and a chain of buffers appended after it. `aclrtCopyBufRef`
//! makes a second buffer sharing the data area (the area is freed with its last buffer);
//! it copies the valid length and the private area. `aclrtFreeBuf` frees one buffer (not
//! the buffers chained to it). A NULL or dead buffer and out-of-range values are
//! `ACL_ERROR_INVALID_PARAM`; a chain index past its end too.

use crate::ffi::{boundary, non_null, out};
use crate::runtime;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// Size of the private (user data) area.
const USER_AREA: usize = 96;
/// Largest data area.
const MAX_SIZE: usize = 4 << 30;

/// A data area in device memory, freed when its last buffer goes.
struct Area {
    addr: u64,
    size: usize,
}

impl Drop for Area {
    fn drop(&mut self) {
        if let Ok(rt) = runtime::get() {
            let _ = rt.node.free(self.addr);
        }
    }
}

pub(crate) struct Mbuf {
    area: Arc<Area>,
    data_len: usize,
    user: [u8; USER_AREA],
    /// Buffers appended after this one (handles).
    chain: Vec<u64>,
}

use crate::globals::{MBUFS, MBUF_NEXT as NEXT};

/// Handles look like pointers with a tag, so a stray pointer is recognised.
const TAG: u64 = 0x4D42 << 48; // "MB"

fn with<R>(buf: *mut c_void, arg: &str, f: impl FnOnce(&mut Mbuf) -> Result<R>) -> Result<R> {
    non_null(buf, arg)?;
    let mut m = MBUFS.lock();
    let b = m.get_mut(&(buf as u64)).ok_or_else(|| {
        Error::invalid(format!(
            "{arg} = {buf:p} is not a live shared buffer (aclrtAllocBuf / aclrtCopyBufRef)"
        ))
    })?;
    f(b)
}

fn insert(b: Mbuf) -> u64 {
    let h = TAG | NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    MBUFS.lock().insert(h, b);
    h
}

/// `aclError aclrtAllocBuf(aclrtMbuf *buf, size_t size)`
pub(crate) unsafe fn alloc_buf(name: &'static str, buf: *mut *mut c_void, size: usize) -> i32 {
    boundary(name, || {
        non_null(buf, "buf")?;
        if size == 0 || size > MAX_SIZE {
            return Err(Error::invalid(format!(
                "size = {size} is out of range: expected (0, 4 GiB]"
            )));
        }
        let rt = runtime::get()?;
        let ctx = rt.current_context()?;
        let info = rt.node.alloc(ctx.physical, size as u64, size as u64)?;
        let h = insert(Mbuf {
            area: Arc::new(Area {
                addr: info.addr,
                size,
            }),
            data_len: 0,
            user: [0; USER_AREA],
            chain: Vec::new(),
        });
        out(buf, "buf", h as *mut c_void)
    })
}

/// `aclError aclrtFreeBuf(aclrtMbuf buf)`
pub(crate) unsafe fn free_buf(name: &'static str, buf: *mut c_void) -> i32 {
    boundary(name, || {
        with(buf, "buf", |_| Ok(()))?;
        let b = MBUFS.lock().remove(&(buf as u64));
        drop(b);
        Ok(())
    })
}

/// `aclError aclrtGetBufData(const aclrtMbuf buf, void **dataPtr, size_t *size)`
pub(crate) unsafe fn get_buf_data(
    name: &'static str,

    buf: *mut c_void,
    dataPtr: *mut *mut c_void,
    size: *mut usize,
) -> i32 {
    boundary(name, || {
        non_null(dataPtr, "dataPtr")?;
        non_null(size, "size")?;
        let (a, s) = with(buf, "buf", |b| Ok((b.area.addr, b.area.size)))?;
        out(dataPtr, "dataPtr", a as *mut c_void)?;
        out(size, "size", s)
    })
}

/// `aclError aclrtGetBufDataLen(aclrtMbuf buf, size_t *len)`
pub(crate) unsafe fn get_buf_data_len(
    name: &'static str,
    buf: *mut c_void,
    len: *mut usize,
) -> i32 {
    boundary(name, || {
        non_null(len, "len")?;
        let l = with(buf, "buf", |b| Ok(b.data_len))?;
        out(len, "len", l)
    })
}

/// `aclError aclrtSetBufDataLen(aclrtMbuf buf, size_t len)`
pub(crate) unsafe fn set_buf_data_len(name: &'static str, buf: *mut c_void, len: usize) -> i32 {
    boundary(name, || {
        with(buf, "buf", |b| {
            if len > b.area.size {
                return Err(Error::invalid(format!(
                    "len = {len} exceeds the buffer's data area of {} bytes",
                    b.area.size
                )));
            }
            b.data_len = len;
            Ok(())
        })
    })
}

/// `aclError aclrtCopyBufRef(const aclrtMbuf buf, aclrtMbuf *newBuf)`
pub(crate) unsafe fn copy_buf_ref(
    name: &'static str,
    buf: *mut c_void,
    newBuf: *mut *mut c_void,
) -> i32 {
    boundary(name, || {
        non_null(newBuf, "newBuf")?;
        let copy = with(buf, "buf", |b| {
            Ok(Mbuf {
                area: b.area.clone(),
                data_len: b.data_len,
                user: b.user,
                chain: Vec::new(),
            })
        })?;
        let h = insert(copy);
        out(newBuf, "newBuf", h as *mut c_void)
    })
}

fn check_user(size: usize, offset: usize) -> Result<()> {
    if offset.checked_add(size).is_none_or(|e| e > USER_AREA) {
        return Err(Error::invalid(format!(
            "offset {offset} + size {size} exceeds the {USER_AREA}-byte private data area"
        )));
    }
    Ok(())
}

/// `aclError aclrtSetBufUserData(aclrtMbuf buf, const void *dataPtr, size_t size, size_t offset)`
pub(crate) unsafe fn set_buf_user_data(
    name: &'static str,

    buf: *mut c_void,
    dataPtr: *const c_void,
    size: usize,
    offset: usize,
) -> i32 {
    boundary(name, || {
        non_null(dataPtr, "dataPtr")?;
        check_user(size, offset)?;
        with(buf, "buf", |b| {
            // SAFETY: the caller's dataPtr holds `size` bytes; the range fits the area.
            let src = unsafe { std::slice::from_raw_parts(dataPtr as *const u8, size) };
            b.user[offset..offset + size].copy_from_slice(src);
            Ok(())
        })
    })
}

/// `aclError aclrtGetBufUserData(const aclrtMbuf buf, void *dataPtr, size_t size, size_t offset)`
pub(crate) unsafe fn get_buf_user_data(
    name: &'static str,

    buf: *mut c_void,
    dataPtr: *mut c_void,
    size: usize,
    offset: usize,
) -> i32 {
    boundary(name, || {
        non_null(dataPtr, "dataPtr")?;
        check_user(size, offset)?;
        with(buf, "buf", |b| {
            // SAFETY: the caller's dataPtr has room for `size` bytes.
            let dst = unsafe { std::slice::from_raw_parts_mut(dataPtr as *mut u8, size) };
            dst.copy_from_slice(&b.user[offset..offset + size]);
            Ok(())
        })
    })
}

/// `aclError aclrtAppendBufChain(aclrtMbuf headBuf, aclrtMbuf buf)`
pub(crate) unsafe fn append_buf_chain(
    name: &'static str,
    headBuf: *mut c_void,
    buf: *mut c_void,
) -> i32 {
    boundary(name, || {
        with(buf, "buf", |_| Ok(()))?;
        if headBuf == buf {
            return Err(Error::invalid(
                "buf is headBuf itself: a buffer cannot follow itself in its chain",
            ));
        }
        with(headBuf, "headBuf", |h| {
            if h.chain.contains(&(buf as u64)) {
                return Err(Error::invalid(format!(
                    "buf = {buf:p} is already in headBuf's chain"
                )));
            }
            h.chain.push(buf as u64);
            Ok(())
        })
    })
}

/// Live buffers of `head`'s chain, head first.
fn chain_of(head: *mut c_void) -> Result<Vec<u64>> {
    let links = with(head, "headBuf", |h| Ok(h.chain.clone()))?;
    let m = MBUFS.lock();
    let mut v = vec![head as u64];
    v.extend(links.into_iter().filter(|h| m.contains_key(h)));
    Ok(v)
}

/// `aclError aclrtGetBufChainNum(aclrtMbuf headBuf, uint32_t *num)`
pub(crate) unsafe fn get_buf_chain_num(
    name: &'static str,
    headBuf: *mut c_void,
    num: *mut u32,
) -> i32 {
    boundary(name, || {
        non_null(num, "num")?;
        let c = chain_of(headBuf)?;
        out(num, "num", c.len() as u32)
    })
}

/// `aclError aclrtGetBufFromChain(aclrtMbuf headBuf, uint32_t index, aclrtMbuf *buf)`
pub(crate) unsafe fn get_buf_from_chain(
    name: &'static str,

    headBuf: *mut c_void,
    index: u32,
    buf: *mut *mut c_void,
) -> i32 {
    boundary(name, || {
        non_null(buf, "buf")?;
        let c = chain_of(headBuf)?;
        let h = c.get(index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "index = {index} is past the end of the chain of {} buffer(s)",
                c.len()
            ))
        })?;
        out(buf, "buf", *h as *mut c_void)
    })
}

// The exports: each `aclrt*` buffer function and its `acltdt*` twin, naming itself in
// messages (written out: abi/stubgen.rs finds exports by their `pub unsafe extern "C" fn`).

#[no_mangle]
pub unsafe extern "C" fn aclrtFreeBuf(buf: *mut c_void) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { free_buf("aclrtFreeBuf", buf) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtFreeBuf(buf: *mut c_void) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { free_buf("acltdtFreeBuf", buf) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtGetBufData(
    buf: *mut c_void,
    dataPtr: *mut *mut c_void,
    size: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_data("aclrtGetBufData", buf, dataPtr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtGetBufData(
    buf: *mut c_void,
    dataPtr: *mut *mut c_void,
    size: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_data("acltdtGetBufData", buf, dataPtr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtGetBufDataLen(buf: *mut c_void, len: *mut usize) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_data_len("aclrtGetBufDataLen", buf, len) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtGetBufDataLen(buf: *mut c_void, len: *mut usize) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_data_len("acltdtGetBufDataLen", buf, len) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtSetBufDataLen(buf: *mut c_void, len: usize) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { set_buf_data_len("aclrtSetBufDataLen", buf, len) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtSetBufDataLen(buf: *mut c_void, len: usize) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { set_buf_data_len("acltdtSetBufDataLen", buf, len) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtCopyBufRef(buf: *mut c_void, newBuf: *mut *mut c_void) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { copy_buf_ref("aclrtCopyBufRef", buf, newBuf) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtCopyBufRef(buf: *mut c_void, newBuf: *mut *mut c_void) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { copy_buf_ref("acltdtCopyBufRef", buf, newBuf) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtSetBufUserData(
    buf: *mut c_void,
    dataPtr: *const c_void,
    size: usize,
    offset: usize,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { set_buf_user_data("aclrtSetBufUserData", buf, dataPtr, size, offset) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtSetBufUserData(
    buf: *mut c_void,
    dataPtr: *const c_void,
    size: usize,
    offset: usize,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { set_buf_user_data("acltdtSetBufUserData", buf, dataPtr, size, offset) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtGetBufUserData(
    buf: *mut c_void,
    dataPtr: *mut c_void,
    size: usize,
    offset: usize,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_user_data("aclrtGetBufUserData", buf, dataPtr, size, offset) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtGetBufUserData(
    buf: *mut c_void,
    dataPtr: *mut c_void,
    size: usize,
    offset: usize,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_user_data("acltdtGetBufUserData", buf, dataPtr, size, offset) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtAppendBufChain(headBuf: *mut c_void, buf: *mut c_void) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { append_buf_chain("aclrtAppendBufChain", headBuf, buf) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtAppendBufChain(headBuf: *mut c_void, buf: *mut c_void) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { append_buf_chain("acltdtAppendBufChain", headBuf, buf) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtGetBufChainNum(headBuf: *mut c_void, num: *mut u32) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_chain_num("aclrtGetBufChainNum", headBuf, num) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtGetBufChainNum(headBuf: *mut c_void, num: *mut u32) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_chain_num("acltdtGetBufChainNum", headBuf, num) }
}

#[no_mangle]
pub unsafe extern "C" fn aclrtGetBufFromChain(
    headBuf: *mut c_void,
    index: u32,
    buf: *mut *mut c_void,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_from_chain("aclrtGetBufFromChain", headBuf, index, buf) }
}

#[no_mangle]
pub unsafe extern "C" fn acltdtGetBufFromChain(
    headBuf: *mut c_void,
    index: u32,
    buf: *mut *mut c_void,
) -> i32 {
    // SAFETY: the caller's contract for the arguments is the inner function's.
    unsafe { get_buf_from_chain("acltdtGetBufFromChain", headBuf, index, buf) }
}

/// `aclError aclrtAllocBuf(aclrtMbuf *buf, size_t size)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocBuf(buf: *mut *mut c_void, size: usize) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { alloc_buf("aclrtAllocBuf", buf, size) }
}

/// `acltdtAllocBuf` type values (`acltdtAllocBufType`): normal and DVPP memory are the same
/// device memory here.
const ACL_TDT_NORMAL_MEM: u32 = 0;
const ACL_TDT_DVPP_MEM: u32 = 1;

/// `aclError acltdtAllocBuf(size_t size, uint32_t type, acltdtBuf *buf)`
#[no_mangle]
pub unsafe extern "C" fn acltdtAllocBuf(size: usize, type_: u32, buf: *mut *mut c_void) -> i32 {
    if type_ != ACL_TDT_NORMAL_MEM && type_ != ACL_TDT_DVPP_MEM {
        return boundary("acltdtAllocBuf", || {
            Err(Error::invalid(format!(
                "type = {type_} is invalid: expected ACL_TDT_NORMAL_MEM (0) or ACL_TDT_DVPP_MEM (1)"
            )))
        });
    }
    // SAFETY: the caller's contract.
    unsafe { alloc_buf("acltdtAllocBuf", buf, size) }
}

/// Whether `h` is a live buffer (`arg` names it in the error).
pub(crate) fn check(h: u64, arg: &str) -> Result<()> {
    with(h as *mut c_void, arg, |_| Ok(()))
}

/// The valid data of a buffer and of the buffers chained to it, in order, and its private
/// area (what a queue message built from it carries).
pub(crate) fn contents(h: u64) -> Result<(Vec<u8>, [u8; USER_AREA])> {
    let parts: Vec<(u64, usize)> = {
        let m = MBUFS.lock();
        let head = m
            .get(&h)
            .ok_or_else(|| Error::invalid(format!("buffer {h:#x} is not a live shared buffer")))?;
        std::iter::once(h)
            .chain(head.chain.iter().copied())
            .filter_map(|b| m.get(&b).map(|x| (x.area.addr, x.data_len)))
            .collect()
    };
    let user = with(h as *mut c_void, "buf", |b| Ok(b.user))?;
    let rt = runtime::get()?;
    let mut data = Vec::new();
    for (addr, len) in parts {
        if len == 0 {
            continue;
        }
        let p = rt
            .node
            .check(addr, len as u64, "the shared buffer's data")?;
        // SAFETY: the node checked that `len` bytes at `addr` are live device memory, mapped
        // in this process.
        data.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
    }
    Ok((data, user))
}

/// A new buffer on the current device holding `data` (its valid length) and `user` at the
/// start of its private area.
pub(crate) fn from_contents(data: &[u8], user: &[u8]) -> Result<u64> {
    let size = data.len().max(1);
    if size > MAX_SIZE {
        return Err(Error::invalid(format!(
            "{size} bytes do not fit a shared buffer (at most 4 GiB)"
        )));
    }
    let rt = runtime::get()?;
    let ctx = rt.current_context()?;
    let info = rt.node.alloc(ctx.physical, size as u64, size as u64)?;
    let area = Area {
        addr: info.addr,
        size,
    };
    if !data.is_empty() {
        let p = rt
            .node
            .check(info.addr, data.len() as u64, "the new shared buffer")?;
        // SAFETY: just allocated, `data.len()` bytes of device memory mapped here.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    }
    let mut u = [0; USER_AREA];
    let n = user.len().min(USER_AREA);
    u[..n].copy_from_slice(&user[..n]);
    Ok(insert(Mbuf {
        area: Arc::new(area),
        data_len: data.len(),
        user: u,
        chain: Vec::new(),
    }))
}

/// Free a buffer and the buffers chained to it (a queue message that nobody dequeued).
pub(crate) fn release(h: u64) {
    let gone: Vec<Mbuf> = {
        let mut m = MBUFS.lock();
        let head = m.remove(&h);
        let chained = head
            .iter()
            .flat_map(|b| b.chain.clone())
            .collect::<Vec<_>>();
        let mut v: Vec<Mbuf> = chained.iter().filter_map(|c| m.remove(c)).collect();
        v.extend(head);
        v
    };
    drop(gone); // areas are freed outside the lock
}
