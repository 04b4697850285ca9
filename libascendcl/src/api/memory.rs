//! Memory management of `acl_rt.h`: device and host allocation, copies, memsets, memory
//! information (abi.md §1.2, behaviour facts §1.3). Codes and orders of checks follow the
//! CANN 8.5 sources and docs as recorded in the conformance notes (tests/tests/conformance.rs).
//!
//! Behaviour (see also the tests in `tests/tests/memory.rs`):
//! - Every device range a copy or memset touches is checked against this process's live
//!   allocations ([`npu_emu::node::Node::check`]); a copy past the end, into freed memory or
//!   to an unknown address fails with `ACL_ERROR_INVALID_PARAM` and a message, and touches
//!   nothing. Host ranges inside `aclrtMallocHost` / registered memory are checked too.
//! - The direction of a copy comes from the pointers (CANN's kind auto-correction): device
//!   memory and ACL host memory force it; with pageable host memory (malloc, stack) the kind
//!   must allow the direction, else `ACL_ERROR_RT_PARAM_INVALID` with a message. A copy
//!   between two different devices needs peer access between them
//!   (`aclrtDeviceEnablePeerAccess` in either direction), else `ACL_ERROR_RT_NO_PERMISSION`
//!   (207006, an emulator decision: CANN's code is not documented).
//! - `count == 0` copies and memsets succeed before any other check; `count > destMax` is
//!   `ACL_ERROR_RT_PARAM_INVALID` (also `count > maxCount` of `aclrtMemsetAsync`; the
//!   synchronous `aclrtMemset` gives `ACL_ERROR_INVALID_PARAM`).
//! - `aclrtMemcpyAsync`: host-to-host is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`. With ACL host
//!   memory the copy is checked at call time and again when the stream runs it (memory freed
//!   in between fails at the next synchronize; freed and reallocated at the same address
//!   cannot be told apart); the host buffer must stay valid until then, except for
//!   `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`, whose data is staged at call time. With pageable host
//!   memory the call synchronizes the stream and copies before returning, as CANN does.
//! - `aclrtMemcpy2d` supports host-to-device and device-to-host, `aclrtMemcpy2dAsync` also
//!   device-to-device; `width == 0` or `height == 0` succeeds before any check; width above
//!   5000000 or height above 5242880 is `ACL_ERROR_RT_PARAM_INVALID`.
//! - `aclrtMemset[Async]` on host memory requires memory from `aclrtMallocHost` (or
//!   registered with `aclrtHostRegister`): anything else is undefined in CANN and an error
//!   here.

use crate::ffi::{boundary, non_null, out};
use crate::mem::is_device_addr;
use crate::runtime::{get, Runtime};
use npu_emu::codes::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_MEMORY_TYPE,
    ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_NO_PERMISSION, ACL_ERROR_RT_PARAM_INVALID,
};
use npu_emu::memory::device_of;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

// aclrtMemcpyKind
pub const ACL_MEMCPY_HOST_TO_HOST: i32 = 0;
pub const ACL_MEMCPY_HOST_TO_DEVICE: i32 = 1;
pub const ACL_MEMCPY_DEVICE_TO_HOST: i32 = 2;
pub const ACL_MEMCPY_DEVICE_TO_DEVICE: i32 = 3;
pub const ACL_MEMCPY_DEFAULT: i32 = 4;
pub const ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: i32 = 5;
pub const ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: i32 = 6;
pub const ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: i32 = 7;

// aclrtMemMallocPolicy (low byte) and the padding rule.
pub const ACL_MEM_MALLOC_HUGE1G_ONLY: i32 = 6;
pub const ACL_MEM_MALLOC_HUGE1G_ONLY_P2P: i32 = 7;

/// Largest 2-D copy height CANN accepts.
pub const MEMCPY2D_MAX_HEIGHT: usize = 5 * 1024 * 1024;
/// Largest 2-D copy width CANN accepts.
pub const MEMCPY2D_MAX_WIDTH: usize = 5_000_000;

/// How `aclrtMalloc` sizes an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Multiple of 32 plus 32 bytes of padding (`aclrtMalloc`, `aclrtMallocCached`).
    Padded,
    /// Multiple of 32 (`aclrtMallocAlign32`).
    Align32,
}

/// The size CANN really allocates for `size` bytes under `policy` (abi.md §1.3): a multiple
/// of 32 plus 32 bytes of padding; no padding for `Align32` and the HUGE1G policies. Unknown
/// policy values behave as the default. `None` on overflow.
pub fn rounded_size(size: u64, policy: i32, rounding: Rounding) -> Option<u64> {
    let aligned = size.checked_add(31)? & !31;
    let base = policy & 0xFF;
    let huge1g = base == ACL_MEM_MALLOC_HUGE1G_ONLY || base == ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
    if rounding == Rounding::Align32 || huge1g {
        Some(aligned)
    } else {
        aligned.checked_add(32)
    }
}

fn kind_name(kind: i32) -> &'static str {
    match kind {
        ACL_MEMCPY_HOST_TO_HOST => "ACL_MEMCPY_HOST_TO_HOST",
        ACL_MEMCPY_HOST_TO_DEVICE => "ACL_MEMCPY_HOST_TO_DEVICE",
        ACL_MEMCPY_DEVICE_TO_HOST => "ACL_MEMCPY_DEVICE_TO_HOST",
        ACL_MEMCPY_DEVICE_TO_DEVICE => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        ACL_MEMCPY_DEFAULT => "ACL_MEMCPY_DEFAULT",
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE => "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE",
        ACL_MEMCPY_INTER_DEVICE_TO_DEVICE => "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE",
        _ => "an invalid kind",
    }
}

/// Where the two ends of a copy live: `true` = device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dir {
    dst_dev: bool,
    src_dev: bool,
}

/// Where one end of a copy lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    /// Device memory (an allocation or a mapped VMM range).
    Device,
    /// Host memory the runtime knows: `aclrtMallocHost` or `aclrtHostRegister[V2]`.
    Pinned,
    /// Other host memory (malloc, stack, …): "pageable" in CANN's terms.
    Pageable,
}

fn locate(rt: Option<&Runtime>, addr: u64) -> Loc {
    if is_device_addr(addr) {
        Loc::Device
    } else if rt.is_some_and(|rt| rt.mem.host_lookup(addr as usize).is_some()) {
        Loc::Pinned
    } else {
        Loc::Pageable
    }
}

fn loc_text(loc: Loc, addr: u64) -> String {
    match loc {
        Loc::Device => format!(
            "device memory ({addr:#x}, device {})",
            device_of(addr).map_or("VMM".to_string(), |d| d.to_string())
        ),
        Loc::Pinned => format!("host memory from aclrtMallocHost ({addr:#x})"),
        Loc::Pageable => format!("pageable host memory ({addr:#x}, not from aclrtMallocHost)"),
    }
}

/// CANN's kind handling (S1 `MemcpyKindAutoCorrect`; the docs call `kind` a reserved
/// parameter): the direction comes from the pointers. Device memory and ACL host memory
/// force the kind whatever was passed; with pageable host memory the kind must allow the
/// direction (pageable → device: a host-to-device or device-to-device kind; device →
/// pageable: a device-to-host or device-to-device kind), else `ACL_ERROR_RT_PARAM_INVALID`.
/// Kinds outside `aclrtMemcpyKind` are `ACL_ERROR_INVALID_PARAM`.
fn resolve_locs(kind: i32, dst: u64, dl: Loc, src: u64, sl: Loc) -> Result<Dir> {
    if !(0..=7).contains(&kind) {
        return Err(Error::invalid(format!(
            "kind {kind} is not an aclrtMemcpyKind (expected 0..=7)"
        )));
    }
    let dir = Dir {
        dst_dev: dl == Loc::Device,
        src_dev: sl == Loc::Device,
    };
    let (allowed, names): (&[i32], &str) = match (sl, dl) {
        (Loc::Pageable, Loc::Device) => (
            &[1, 3, 4, 5, 6, 7],
            "ACL_MEMCPY_HOST_TO_DEVICE or ACL_MEMCPY_DEFAULT",
        ),
        (Loc::Device, Loc::Pageable) => (
            &[2, 3, 4, 6, 7],
            "ACL_MEMCPY_DEVICE_TO_HOST or ACL_MEMCPY_DEFAULT",
        ),
        _ => return Ok(dir),
    };
    if allowed.contains(&kind) {
        return Ok(dir);
    }
    Err(Error::new(
        ACL_ERROR_RT_PARAM_INVALID,
        format!(
            "kind {} does not fit a copy from {} (src) to {} (dst): with host memory not from \
             aclrtMallocHost the kind must name the direction ({names})",
            kind_name(kind),
            loc_text(sl, src),
            loc_text(dl, dst),
        ),
    ))
}

/// [`resolve_locs`] with the locations looked up (`rt` knows the ACL host memory).
fn resolve(rt: Option<&Runtime>, kind: i32, dst: u64, src: u64) -> Result<Dir> {
    resolve_locs(kind, dst, locate(rt, dst), src, locate(rt, src))
}

/// Whether the host end of a host↔device copy is pageable memory (CANN then runs an async
/// copy synchronously: the stream is synchronized and the copy done before returning).
fn pageable_host_end(rt: &Runtime, dst: u64, src: u64, dir: Dir) -> bool {
    if dir.dst_dev == dir.src_dev {
        return false;
    }
    let host = if dir.dst_dev { src } else { dst };
    locate(Some(rt), host) == Loc::Pageable
}

/// A pointer that may move to a stream worker (the program keeps the memory alive until
/// the stream ran the task, as CANN requires).
#[derive(Clone, Copy)]
struct SendPtr(u64);
// SAFETY: only an address; validity is the program's contract (see module docs).
unsafe impl Send for SendPtr {}

/// Translate one end of a copy: device addresses through the node's range check, host
/// addresses as they are.
/// Host ranges inside an `aclrtMallocHost` allocation (or a registered range) are checked
/// against its end too; other host memory is the caller's contract.
fn translate(rt: &Runtime, addr: u64, len: u64, dev: bool, what: &str) -> Result<*mut u8> {
    if dev {
        return rt.node.check(addr, len, what);
    }
    if let Some((start, size)) = rt.mem.host_lookup(addr as usize) {
        let end = (start + size) as u64;
        if addr.checked_add(len).is_none_or(|e| e > end) {
            return Err(Error::invalid(format!(
                "{what} range {addr:#x}..+{len} runs past the end of the host allocation \
                 {start:#x} ({size} bytes, from aclrtMallocHost or aclrtHostRegister) by {} bytes",
                addr.saturating_add(len) - end
            )));
        }
    }
    Ok(addr as *mut u8)
}

/// Check both ends of a 1-D copy and give the pointers to copy between.
fn check_copy(
    rt: &Runtime,
    dst: u64,
    src: u64,
    count: u64,
    dir: Dir,
) -> Result<(*mut u8, *const u8)> {
    let d = translate(rt, dst, count, dir.dst_dev, "dst")?;
    let s = translate(rt, src, count, dir.src_dev, "src")?;
    Ok((d, s))
}

/// Logical id (as the program sees it) of physical device `phys`.
fn logical_of(rt: &Runtime, phys: u32) -> i32 {
    rt.cfg
        .visible_devices
        .iter()
        .position(|&p| p == phys)
        .map_or(phys as i32, |l| l as i32)
}

/// A device-to-device copy between two different devices needs peer access between them
/// (`aclrtDeviceEnablePeerAccess`, either direction), as on hardware.
fn check_peer(rt: &Runtime, dst: u64, src: u64, dir: Dir) -> Result<()> {
    if !(dir.dst_dev && dir.src_dev) {
        return Ok(());
    }
    let d = logical_of(rt, rt.node.phys(dst, 1, "dst")?.device);
    let s = logical_of(rt, rt.node.phys(src, 1, "src")?.device);
    if d == s {
        return Ok(());
    }
    let reg = rt.reg.lock();
    if reg.peers.contains(&(d, s)) || reg.peers.contains(&(s, d)) {
        return Ok(());
    }
    Err(Error::new(
        ACL_ERROR_RT_NO_PERMISSION,
        format!(
            "copy from device {s} (src {src:#x}) to device {d} (dst {dst:#x}) needs peer              access between the two devices: call aclrtDeviceEnablePeerAccess first"
        ),
    ))
}

fn do_copy(rt: &Runtime, dst: u64, src: u64, count: u64, dir: Dir) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let (d, s) = check_copy(rt, dst, src, count, dir)?;
    // SAFETY: device ranges checked by the node; host ranges are the caller's contract.
    // `copy` allows overlap (a D2D copy within one allocation).
    unsafe { std::ptr::copy(s, d, count as usize) };
    Ok(())
}

fn common_copy_args(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
) -> Result<()> {
    non_null(dst, "dst")?;
    non_null(src, "src")?;
    if count > dest_max {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than destMax {dest_max}"),
        ));
    }
    Ok(())
}

fn malloc_impl(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: i32,
    rounding: Rounding,
    device: Option<i32>,
) -> Result<()> {
    non_null(dev_ptr, "devPtr")?;
    if size == 0 {
        return Err(Error::invalid("size is 0 (expected > 0)"));
    }
    let rt = get()?;
    let phys = match device {
        Some(l) => rt.physical_device(l)?,
        None => rt.current_device()?.1,
    };
    let real = rounded_size(size as u64, policy, rounding).ok_or_else(|| {
        Error::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("size {size} is too large"),
        )
    })?;
    let info = rt.node.alloc(phys, real, size as u64)?;
    out(dev_ptr, "devPtr", info.addr as *mut c_void)
}

/// `aclrtMalloc`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMalloc(devPtr: *mut *mut c_void, size: usize, policy: i32) -> i32 {
    boundary("aclrtMalloc", || {
        malloc_impl(devPtr, size, policy, Rounding::Padded, None)
    })
}

/// `aclrtMallocAlign32`: rounded to 32 bytes, no padding.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocAlign32(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: i32,
) -> i32 {
    boundary("aclrtMallocAlign32", || {
        malloc_impl(devPtr, size, policy, Rounding::Align32, None)
    })
}

/// `aclrtMallocCached`: as `aclrtMalloc` (the emulator has no cache to manage).
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocCached(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: i32,
) -> i32 {
    boundary("aclrtMallocCached", || {
        malloc_impl(devPtr, size, policy, Rounding::Padded, None)
    })
}

/// `aclrtMallocAttribute` (12 bytes: attr, 8-byte value union at offset 4).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MallocAttribute {
    pub attr: i32,
    pub value: [u32; 2],
}

/// `aclrtMallocConfig`.
#[repr(C)]
pub struct MallocConfig {
    pub attrs: *mut MallocAttribute,
    pub num_attrs: usize,
}

const ACL_RT_MEM_ATTR_RSV: i32 = 0;
const ACL_RT_MEM_ATTR_MODULE_ID: i32 = 1;
const ACL_RT_MEM_ATTR_DEVICE_ID: i32 = 2;
const ACL_RT_MEM_ATTR_VA_FLAG: i32 = 3;

/// Read a `aclrtMallocConfig`: the device id attribute, if any. Other known attributes are
/// accepted and ignored; unknown ones are an error.
fn config_device(cfg: *const MallocConfig) -> Result<Option<i32>> {
    if cfg.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null; the program passes a valid aclrtMallocConfig.
    let cfg = unsafe { &*cfg };
    if cfg.num_attrs == 0 {
        return Ok(None);
    }
    if cfg.attrs.is_null() {
        return Err(Error::invalid(format!(
            "cfg->attrs is NULL but cfg->numAttrs is {}",
            cfg.num_attrs
        )));
    }
    let mut device = None;
    for i in 0..cfg.num_attrs {
        // SAFETY: numAttrs entries by the ACL contract.
        let a = unsafe { cfg.attrs.add(i).read_unaligned() };
        match a.attr {
            ACL_RT_MEM_ATTR_DEVICE_ID => device = Some(a.value[0] as i32),
            ACL_RT_MEM_ATTR_RSV | ACL_RT_MEM_ATTR_MODULE_ID | ACL_RT_MEM_ATTR_VA_FLAG => {}
            other => {
                return Err(Error::invalid(format!(
                    "cfg->attrs[{i}].attr is {other}, not an aclrtMallocAttrType (0..=3)"
                )))
            }
        }
    }
    Ok(device)
}

/// `aclrtMallocWithCfg`: `ACL_RT_MEM_ATTR_DEVICE_ID` picks the device (logical id).
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocWithCfg(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: i32,
    cfg: *mut MallocConfig,
) -> i32 {
    boundary("aclrtMallocWithCfg", || {
        let device = config_device(cfg)?;
        malloc_impl(devPtr, size, policy, Rounding::Padded, device)
    })
}

/// `aclrtFree`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFree(devPtr: *mut c_void) -> i32 {
    boundary("aclrtFree", || {
        non_null(devPtr, "devPtr")?;
        let rt = get()?;
        if !is_device_addr(devPtr as u64) {
            let what = if rt.mem.host_lookup(devPtr as usize).is_some() {
                " (it is host memory from aclrtMallocHost: free it with aclrtFreeHost)"
            } else {
                ""
            };
            return Err(Error::invalid(format!(
                "devPtr {devPtr:p} is not device memory{what}"
            )));
        }
        rt.node.free(devPtr as u64)?;
        Ok(())
    })
}

fn malloc_host_impl(host_ptr: *mut *mut c_void, size: u64) -> Result<()> {
    non_null(host_ptr, "hostPtr")?;
    if size == 0 {
        return Err(Error::invalid("size is 0 (expected > 0)"));
    }
    let rt = get()?;
    let size =
        usize::try_from(size).map_err(|_| Error::invalid(format!("size {size} is too large")))?;
    let p = rt.mem.host_alloc(size)?;
    out(host_ptr, "hostPtr", p as *mut c_void)
}

/// `aclrtMallocHost`: page-aligned host memory, tracked so a bad free is caught.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) -> i32 {
    boundary("aclrtMallocHost", || malloc_host_impl(hostPtr, size as u64))
}

/// `aclrtMallocHostWithCfg`: attributes are validated and otherwise ignored.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocHostWithCfg(
    ptr: *mut *mut c_void,
    size: u64,
    cfg: *mut MallocConfig,
) -> i32 {
    boundary("aclrtMallocHostWithCfg", || {
        config_device(cfg)?;
        malloc_host_impl(ptr, size)
    })
}

/// `aclrtFreeHost`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreeHost(hostPtr: *mut c_void) -> i32 {
    boundary("aclrtFreeHost", || {
        non_null(hostPtr, "hostPtr")?;
        let rt = get()?;
        if is_device_addr(hostPtr as u64) {
            return Err(Error::invalid(format!(
                "hostPtr {hostPtr:p} is device memory (free it with aclrtFree)"
            )));
        }
        rt.mem.host_free(hostPtr as usize)?;
        Ok(())
    })
}

/// `aclrtMemcpy`: synchronous with respect to the host.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count_: usize,
    kind: i32,
) -> i32 {
    boundary("aclrtMemcpy", || {
        // CANN: a zero-byte copy succeeds before any other check.
        if count_ == 0 {
            return Ok(());
        }
        common_copy_args(dst, destMax, src, count_)?;
        let (d, s) = (dst as u64, src as u64);
        if !is_device_addr(d) && !is_device_addr(s) {
            // Host to host works without aclInit; ACL host memory is range-checked if the
            // runtime is up.
            let rt = crate::runtime::try_get();
            let dir = resolve(rt.as_deref(), kind, d, s)?;
            if let Some(rt) = rt {
                return do_copy(&rt, d, s, count_ as u64, dir);
            }
            // SAFETY: both host ranges are the caller's contract.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count_) };
            return Ok(());
        }
        let rt = get()?;
        let dir = resolve(Some(&rt), kind, d, s)?;
        check_copy(&rt, d, s, count_ as u64, dir)?;
        check_peer(&rt, d, s, dir)?;
        do_copy(&rt, d, s, count_ as u64, dir)
    })
}

/// Enqueue a copy on `stream` after checking it now.
fn copy_async(
    rt: Arc<Runtime>,
    stream: *mut c_void,
    dst: u64,
    src: u64,
    n: u64,
    dir: Dir,
    kind: i32,
) -> Result<()> {
    let s = rt.stream(stream)?;
    if n == 0 {
        return Ok(());
    }
    check_copy(&rt, dst, src, n, dir)?;
    check_peer(&rt, dst, src, dir)?;
    if pageable_host_end(&rt, dst, src, dir) {
        // CANN: with pageable host memory the call waits for the stream, copies, and
        // returns when the copy is done.
        s.synchronize(None)?;
        return do_copy(&rt, dst, src, n, dir);
    }
    let (d, sr) = (SendPtr(dst), SendPtr(src));
    let rt2 = rt.clone();
    if kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        // ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: the host data goes through a staging buffer
        // taken now, so the program may reuse its buffer as soon as the call returns.
        let n = usize::try_from(n).map_err(|_| Error::invalid("count too large"))?;
        let mut buf: Vec<u8> = Vec::new();
        buf.try_reserve_exact(n).map_err(|_| {
            Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("out of host memory for a {n}-byte staging buffer"),
            )
        })?;
        buf.resize(n, 0);
        // SAFETY: host source range is the caller's contract (checked non-null).
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, buf.as_mut_ptr(), n) };
        return s.enqueue(Box::new(move || {
            let d = d;
            let p = rt2.node.check(d.0, n as u64, "dst").map_err(|e| {
                Error::new(
                    e.code,
                    format!("aclrtMemcpyAsync (run on the stream): {}", e.msg),
                )
            })?;
            // SAFETY: checked just now.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p, n) };
            Ok(())
        }));
    }
    s.enqueue(Box::new(move || {
        let (d, sr) = (d, sr);
        do_copy(&rt2, d.0, sr.0, n, dir).map_err(|e| {
            Error::new(
                e.code,
                format!("aclrtMemcpyAsync (run on the stream): {}", e.msg),
            )
        })
    }))
}

/// `aclrtMemcpyAsync`: checked now, run in order on `stream`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count_: usize,
    kind: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemcpyAsync", || {
        // CANN: a zero-byte copy succeeds before any other check.
        if count_ == 0 {
            return Ok(());
        }
        common_copy_args(dst, destMax, src, count_)?;
        let rt = get()?;
        let (d, s) = (dst as u64, src as u64);
        let dir = resolve(Some(&rt), kind, d, s)?;
        if !dir.dst_dev && !dir.src_dev {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!(
                    "a host-to-host copy ({}, dst {d:#x}, src {s:#x}) is not supported by \
                     aclrtMemcpyAsync (use aclrtMemcpy)",
                    kind_name(kind)
                ),
            ));
        }
        copy_async(rt, stream, d, s, count_ as u64, dir, kind)
    })
}

/// Arguments of a 2-D copy after validation.
#[derive(Clone, Copy)]
struct Copy2d {
    dst: u64,
    dpitch: u64,
    src: u64,
    spitch: u64,
    width: u64,
    height: u64,
    dir: Dir,
}

/// Validate a 2-D copy (S1 `CheckMemcpy2dParam`, `MemCopy2DCheckParam`): NULL pointers and
/// pitches smaller than the width are `ACL_ERROR_INVALID_PARAM`; width above 5000000 or
/// height above 5242880 is `ACL_ERROR_RT_PARAM_INVALID`. The synchronous copy supports
/// host-to-device and device-to-host; the asynchronous one also device-to-device (A2/A3).
/// The caller handles `width == 0 || height == 0` (success before any check).
#[allow(clippy::too_many_arguments)]
fn check_2d(
    rt: &Runtime,
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    allow_d2d: bool,
) -> Result<Copy2d> {
    non_null(dst, "dst")?;
    non_null(src, "src")?;
    if dpitch < width {
        return Err(Error::invalid(format!(
            "dpitch {dpitch} is smaller than width {width}"
        )));
    }
    if spitch < width {
        return Err(Error::invalid(format!(
            "spitch {spitch} is smaller than width {width}"
        )));
    }
    if width > MEMCPY2D_MAX_WIDTH {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("width {width} is larger than the maximum {MEMCPY2D_MAX_WIDTH}"),
        ));
    }
    if height > MEMCPY2D_MAX_HEIGHT {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("height {height} is larger than the maximum {MEMCPY2D_MAX_HEIGHT}"),
        ));
    }
    let dir = resolve(Some(rt), kind, dst as u64, src as u64)?;
    if dir.dst_dev == dir.src_dev && !(allow_d2d && dir.dst_dev) {
        // CANN's ACL layer refuses a kind outside H2D, D2H, DEFAULT (and D2D when
        // asynchronous) with ACL_ERROR_INVALID_PARAM; an accepted kind whose pointers make
        // the copy host-to-host or device-to-device is refused by the runtime
        // (RT_ERROR_INVALID_VALUE → ACL_ERROR_RT_PARAM_INVALID).
        let accepted = kind == ACL_MEMCPY_HOST_TO_DEVICE
            || kind == ACL_MEMCPY_DEVICE_TO_HOST
            || kind == ACL_MEMCPY_DEFAULT
            || (allow_d2d && kind == ACL_MEMCPY_DEVICE_TO_DEVICE);
        let code = if accepted {
            ACL_ERROR_RT_PARAM_INVALID
        } else {
            npu_emu::codes::ACL_ERROR_INVALID_PARAM
        };
        return Err(Error::new(
            code,
            format!(
                "{} copy ({}): CANN supports only ACL_MEMCPY_HOST_TO_DEVICE and \
             ACL_MEMCPY_DEVICE_TO_HOST{} for {} 2-D copies",
                if dir.dst_dev {
                    "device-to-device"
                } else {
                    "host-to-host"
                },
                kind_name(kind),
                if allow_d2d {
                    " (and ACL_MEMCPY_DEVICE_TO_DEVICE)"
                } else {
                    ""
                },
                if allow_d2d {
                    "asynchronous"
                } else {
                    "synchronous"
                },
            ),
        ));
    }
    // The last row's end must not overflow the address space.
    for (arg, base, pitch) in [
        ("dst", dst as u64, dpitch as u64),
        ("src", src as u64, spitch as u64),
    ] {
        (height as u64 - 1)
            .checked_mul(pitch)
            .and_then(|o| o.checked_add(width as u64))
            .and_then(|o| o.checked_add(base))
            .ok_or_else(|| Error::invalid(format!("{arg} + (height-1)*pitch + width overflows")))?;
    }
    Ok(Copy2d {
        dst: dst as u64,
        dpitch: dpitch as u64,
        src: src as u64,
        spitch: spitch as u64,
        width: width as u64,
        height: height as u64,
        dir,
    })
}

/// Check every row of a 2-D copy (without copying).
fn check_rows(rt: &Runtime, c: &Copy2d) -> Result<()> {
    if c.width == 0 {
        return Ok(());
    }
    for r in 0..c.height {
        let what_d = format!("dst (row {r})");
        let what_s = format!("src (row {r})");
        translate(rt, c.dst + r * c.dpitch, c.width, c.dir.dst_dev, &what_d)?;
        translate(rt, c.src + r * c.spitch, c.width, c.dir.src_dev, &what_s)?;
    }
    Ok(())
}

fn do_copy_2d(rt: &Runtime, c: &Copy2d) -> Result<()> {
    // Check all rows first, so a bad row copies nothing.
    check_rows(rt, c)?;
    if c.width == 0 {
        return Ok(());
    }
    for r in 0..c.height {
        let d = translate(rt, c.dst + r * c.dpitch, c.width, c.dir.dst_dev, "dst")?;
        let s = translate(rt, c.src + r * c.spitch, c.width, c.dir.src_dev, "src")?;
        // SAFETY: checked above (device) or the caller's contract (host).
        unsafe { std::ptr::copy(s, d, c.width as usize) };
    }
    Ok(())
}

/// `aclrtMemcpy2d`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpy2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> i32 {
    boundary("aclrtMemcpy2d", || {
        // CANN: an empty matrix succeeds before any other check.
        if width == 0 || height == 0 {
            return Ok(());
        }
        let rt = get()?;
        let c = check_2d(&rt, dst, dpitch, src, spitch, width, height, kind, false)?;
        do_copy_2d(&rt, &c)
    })
}

/// `aclrtMemcpy2dAsync`: also device-to-device; with pageable host memory it completes
/// before returning, as in CANN.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpy2dAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemcpy2dAsync", || {
        if width == 0 || height == 0 {
            return Ok(());
        }
        let rt = get()?;
        let c = check_2d(&rt, dst, dpitch, src, spitch, width, height, kind, true)?;
        let s = rt.stream(stream)?;
        check_rows(&rt, &c)?;
        check_peer(&rt, c.dst, c.src, c.dir)?;
        if pageable_host_end(&rt, c.dst, c.src, c.dir) {
            s.synchronize(None)?;
            return do_copy_2d(&rt, &c);
        }
        let rt2 = rt.clone();
        let c = SendCopy2d(c);
        s.enqueue(Box::new(move || {
            let c = c;
            do_copy_2d(&rt2, &c.0).map_err(|e| {
                Error::new(
                    e.code,
                    format!("aclrtMemcpy2dAsync (run on the stream): {}", e.msg),
                )
            })
        }))
    })
}

struct SendCopy2d(Copy2d);
// SAFETY: addresses only; see SendPtr.
unsafe impl Send for SendCopy2d {}

/// Check a memset target: device memory through the node, host memory must come from
/// `aclrtMallocHost` / `aclrtHostRegister`. Returns the pointer to write.
fn memset_target(rt: &Runtime, addr: u64, n: u64) -> Result<*mut u8> {
    if is_device_addr(addr) {
        return rt.node.check(addr, n, "devPtr");
    }
    match rt.mem.host_lookup(addr as usize) {
        Some((s, size)) if addr.checked_add(n).is_some_and(|e| e <= (s + size) as u64) => {
            Ok(addr as *mut u8)
        }
        Some((s, size)) => Err(Error::invalid(format!(
            "devPtr {addr:#x} + count {n} runs past the end of the host allocation {s:#x} \
             ({size} bytes) by {} bytes",
            addr.saturating_add(n) - (s + size) as u64
        ))),
        None => Err(Error::invalid(format!(
            "devPtr {addr:#x} is neither device memory nor host memory from aclrtMallocHost \
             (CANN: undefined behaviour)"
        ))),
    }
}

/// `count > maxCount` is `ACL_ERROR_RT_PARAM_INVALID` for the async memset (the lower
/// runtime's check in CANN) and `ACL_ERROR_INVALID_PARAM` for the synchronous one.
fn memset_args(dev_ptr: *mut c_void, max_count: usize, n: usize, code: i32) -> Result<()> {
    non_null(dev_ptr, "devPtr")?;
    if n > max_count {
        return Err(Error::new(
            code,
            format!("count {n} is larger than maxCount {max_count}"),
        ));
    }
    Ok(())
}

/// `aclrtMemset`: device or (ACL-allocated) host memory, immediately.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemset(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count_: usize,
) -> i32 {
    boundary("aclrtMemset", || {
        // CANN: a zero-byte memset succeeds before any other check.
        if count_ == 0 {
            return Ok(());
        }
        memset_args(devPtr, maxCount, count_, ACL_ERROR_INVALID_PARAM)?;
        let rt = get()?;
        let p = memset_target(&rt, devPtr as u64, count_ as u64)?;
        // SAFETY: range checked above.
        unsafe { std::ptr::write_bytes(p, value as u8, count_) };
        Ok(())
    })
}

/// `aclrtMemsetAsync`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemsetAsync(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count_: usize,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemsetAsync", || {
        if count_ == 0 {
            return Ok(());
        }
        memset_args(devPtr, maxCount, count_, ACL_ERROR_RT_PARAM_INVALID)?;
        let rt = get()?;
        let s = rt.stream(stream)?;
        let addr = devPtr as u64;
        let n = count_ as u64;
        memset_target(&rt, addr, n)?;
        let rt2 = rt.clone();
        let a = SendPtr(addr);
        s.enqueue(Box::new(move || {
            let a = a;
            let p = memset_target(&rt2, a.0, n).map_err(|e| {
                Error::new(
                    e.code,
                    format!("aclrtMemsetAsync (run on the stream): {}", e.msg),
                )
            })?;
            // SAFETY: checked just now.
            unsafe { std::ptr::write_bytes(p, value as u8, n as usize) };
            Ok(())
        }))
    })
}

/// `aclrtGetMemInfo`: the current device's memory as the node accounts it (every process
/// of the node). As in CANN, only the attributes of the memory the SoC has report figures:
/// HBM SoCs (Ascend910*, the default) report through the `ACL_HBM_MEM*` attributes and give
/// 0 / 0 for the `ACL_DDR_MEM*` ones; DDR SoCs (Ascend310*) the reverse. The generic 8.5
/// `ACL_MEM_*` attributes always report device memory. Values outside `aclrtMemAttr` are
/// `ACL_ERROR_RT_INVALID_MEMORY_TYPE`.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetMemInfo(attr: i32, free: *mut usize, total: *mut usize) -> i32 {
    boundary("aclrtGetMemInfo", || {
        non_null(free, "free")?;
        non_null(total, "total")?;
        // ACL_DDR_MEM, _HUGE, _NORMAL, _P2P_HUGE, _P2P_NORMAL
        let ddr = matches!(attr, 0 | 2 | 3 | 6 | 7);
        // ACL_HBM_MEM, _HUGE, _NORMAL, _P2P_HUGE, _P2P_NORMAL, _HUGE1G, _P2P_HUGE1G
        let hbm = matches!(attr, 1 | 4 | 5 | 8..=11);
        let generic = matches!(attr, 12..=17);
        if !(ddr || hbm || generic) {
            return Err(Error::new(
                ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                format!("attr {attr} is not an aclrtMemAttr (expected 0..=17)"),
            ));
        }
        let rt = get()?;
        let (_, phys) = rt.current_device()?;
        let ddr_soc = rt.node.soc_name().starts_with("Ascend310");
        let (f, t) = if generic || (hbm && !ddr_soc) || (ddr && ddr_soc) {
            rt.node.mem_info(phys)
        } else {
            (0, 0)
        };
        out(free, "free", f as usize)?;
        out(total, "total", t as usize)
    })
}

/// `aclrtMemLocation` + `aclrtPtrAttributes` (28 bytes).
#[repr(C)]
pub struct PtrAttributes {
    pub location_id: u32,
    pub location_type: i32,
    pub page_size: u32,
    pub rsv: [u32; 4],
}

const ACL_MEM_LOCATION_TYPE_HOST: i32 = 0;
const ACL_MEM_LOCATION_TYPE_DEVICE: i32 = 1;
const ACL_MEM_LOCATION_TYPE_UNREGISTERED: i32 = 2;

/// `aclrtPointerGetAttributes`: device pointers report their (logical) device and a 2 MiB
/// huge page, ACL host memory is HOST with 4 KiB pages, other host memory UNREGISTERED.
#[no_mangle]
pub unsafe extern "C" fn aclrtPointerGetAttributes(
    ptr: *const c_void,
    attributes: *mut PtrAttributes,
) -> i32 {
    boundary("aclrtPointerGetAttributes", || {
        non_null(ptr, "ptr")?;
        non_null(attributes, "attributes")?;
        let rt = get()?;
        let addr = ptr as u64;
        let (id, ty, page) = if is_device_addr(addr) {
            // A live allocation or a mapped VMM range; the node's message says what else
            // the address is (freed, unmapped, …).
            let phys = rt.node.phys(addr, 1, "ptr")?.device;
            let logical = logical_of(&rt, phys);
            (logical as u32, ACL_MEM_LOCATION_TYPE_DEVICE, 2u32 << 20)
        } else if rt.mem.host_lookup(addr as usize).is_some() {
            (0, ACL_MEM_LOCATION_TYPE_HOST, 4096)
        } else {
            (0, ACL_MEM_LOCATION_TYPE_UNREGISTERED, 4096)
        };
        out(
            attributes,
            "attributes",
            PtrAttributes {
                location_id: id,
                location_type: ty,
                page_size: page,
                rsv: [0; 4],
            },
        )
    })
}

fn flush_like(dev_ptr: *mut c_void, size: usize) -> Result<()> {
    non_null(dev_ptr, "devPtr")?;
    if size == 0 {
        return Err(Error::invalid("size is 0 (expected > 0)"));
    }
    let rt = get()?;
    rt.node.check(dev_ptr as u64, size as u64, "devPtr")?;
    Ok(())
}

/// `aclrtMemFlush`: validates the range; the emulator has no cache to flush.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemFlush(devPtr: *mut c_void, size: usize) -> i32 {
    boundary("aclrtMemFlush", || flush_like(devPtr, size))
}

/// `aclrtMemInvalidate`: validates the range; nothing to invalidate.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemInvalidate(devPtr: *mut c_void, size: usize) -> i32 {
    boundary("aclrtMemInvalidate", || flush_like(devPtr, size))
}

const ACL_HOST_REGISTER_MAPPED: i32 = 0;

/// `aclrtHostRegister`: the emulator's device can address host memory directly, so the
/// "device pointer" handed back is the host pointer itself (copies treat it as host memory).
#[no_mangle]
pub unsafe extern "C" fn aclrtHostRegister(
    ptr: *mut c_void,
    size: u64,
    type_: i32,
    devPtr: *mut *mut c_void,
) -> i32 {
    boundary("aclrtHostRegister", || {
        non_null(ptr, "ptr")?;
        non_null(devPtr, "devPtr")?;
        if size == 0 {
            return Err(Error::invalid("size is 0 (expected > 0)"));
        }
        if type_ != ACL_HOST_REGISTER_MAPPED {
            return Err(Error::invalid(format!(
                "type {type_} is not an aclrtHostRegisterType (expected ACL_HOST_REGISTER_MAPPED = 0)"
            )));
        }
        if is_device_addr(ptr as u64) {
            return Err(Error::invalid(format!(
                "ptr {ptr:p} is device memory, not host memory"
            )));
        }
        let rt = get()?;
        let size = usize::try_from(size).map_err(|_| Error::invalid("size too large"))?;
        rt.mem.register_host(ptr as usize, size)?;
        out(devPtr, "devPtr", ptr)
    })
}

/// `aclrtHostUnregister`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostUnregister(ptr: *mut c_void) -> i32 {
    boundary("aclrtHostUnregister", || {
        non_null(ptr, "ptr")?;
        get()?.mem.unregister_host(ptr as usize)
    })
}

/// `aclrtFreeHostWithDevSync`: wait for the current device's streams (which may still read
/// or write the buffer), then free like `aclrtFreeHost`.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) -> i32 {
    boundary("aclrtFreeHostWithDevSync", || {
        non_null(hostPtr, "hostPtr")?;
        let rt = get()?;
        if is_device_addr(hostPtr as u64) {
            return Err(Error::invalid(format!(
                "hostPtr {hostPtr:p} is device memory (free it with aclrtFree)"
            )));
        }
        if rt.mem.host_lookup(hostPtr as usize).is_none() {
            return Err(Error::invalid(format!(
                "hostPtr {hostPtr:p} is not a live allocation of aclrtMallocHost (freed \
                 twice, or allocated by something else)"
            )));
        }
        rt.synchronize_device(None)?;
        rt.mem.host_free(hostPtr as usize)?;
        Ok(())
    })
}

const ACL_HOST_REG_MAPPED: u32 = 0x2;
const ACL_HOST_REG_PINNED: u32 = 0x1000_0000;

/// `aclrtHostRegisterV2`: register host memory (flags `ACL_HOST_REG_MAPPED` and/or
/// `ACL_HOST_REG_PINNED`); the device pointer comes from `aclrtHostGetDevicePointer`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> i32 {
    boundary("aclrtHostRegisterV2", || {
        non_null(ptr, "ptr")?;
        if size == 0 {
            return Err(Error::invalid("size is 0 (expected > 0)"));
        }
        let known = ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED;
        if flag & !known != 0 || flag == 0 {
            return Err(Error::invalid(format!(
                "flag {flag:#x} is not a combination of ACL_HOST_REG_MAPPED (0x2) and \
                 ACL_HOST_REG_PINNED (0x10000000)"
            )));
        }
        if is_device_addr(ptr as u64) {
            return Err(Error::invalid(format!(
                "ptr {ptr:p} is device memory, not host memory"
            )));
        }
        let rt = get()?;
        let size = usize::try_from(size).map_err(|_| Error::invalid("size too large"))?;
        rt.mem.register_host(ptr as usize, size)
    })
}

/// `aclrtHostGetDevicePointer`: the device-side address of registered host memory (the
/// emulated device addresses host memory directly, so it is the host address).
#[no_mangle]
pub unsafe extern "C" fn aclrtHostGetDevicePointer(
    pHost: *mut c_void,
    pDevice: *mut *mut c_void,
    flag: u32,
) -> i32 {
    boundary("aclrtHostGetDevicePointer", || {
        non_null(pHost, "pHost")?;
        non_null(pDevice, "pDevice")?;
        if flag != 0 {
            return Err(Error::invalid(format!("flag {flag} must be 0")));
        }
        let rt = get()?;
        if !rt.mem.is_registered(pHost as usize) {
            return Err(Error::invalid(format!(
                "pHost {pHost:p} is not inside host memory registered with aclrtHostRegister or \
                 aclrtHostRegisterV2"
            )));
        }
        out(pDevice, "pDevice", pHost)
    })
}

/// `aclrtMemcpyBatchAttr` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MemcpyBatchAttr {
    pub dst_id: u32,
    pub dst_type: i32,
    pub src_id: u32,
    pub src_type: i32,
    pub rsv: [u8; 16],
}

/// One validated copy of a batch.
#[derive(Clone, Copy)]
struct BatchItem {
    dst: u64,
    src: u64,
    n: u64,
    dir: Dir,
}

/// An error about copy `i` of a batch: `failIndex` is set to `i`.
fn batch_err(fail: *mut usize, i: usize, e: Error) -> Error {
    // SAFETY: checked non-null by the caller before any item is looked at.
    unsafe { fail.write_unaligned(i) };
    Error::new(e.code, format!("copy {i}: {}", e.msg))
}

/// Validate every argument of `aclrtMemcpyBatch[Async]` (CANN: only host-to-device and
/// device-to-host copies; every copy's attribute must describe its two ends).
#[allow(clippy::too_many_arguments)]
unsafe fn check_batch(
    rt: &Runtime,
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    num: usize,
    attrs: *mut MemcpyBatchAttr,
    attrs_indexes: *mut usize,
    num_attrs: usize,
    fail: *mut usize,
) -> Result<Vec<BatchItem>> {
    non_null(fail, "failIndex")?;
    // SAFETY: non-null output.
    unsafe { fail.write_unaligned(usize::MAX) };
    non_null(dsts, "dsts")?;
    non_null(dest_maxs, "destMaxs")?;
    non_null(srcs, "srcs")?;
    non_null(sizes, "sizes")?;
    non_null(attrs, "attrs")?;
    non_null(attrs_indexes, "attrsIndexes")?;
    if num == 0 {
        return Err(Error::invalid("numBatches is 0 (expected > 0)"));
    }
    if num_attrs == 0 || num_attrs > num {
        return Err(Error::invalid(format!(
            "numAttrs {num_attrs} is out of range (expected 1..=numBatches {num})"
        )));
    }
    // SAFETY: the arrays have numAttrs / numBatches entries by the API contract.
    let idx: Vec<usize> = (0..num_attrs)
        .map(|k| unsafe { attrs_indexes.add(k).read_unaligned() })
        .collect();
    if idx[0] != 0 {
        return Err(Error::invalid(format!(
            "attrsIndexes[0] is {}, expected 0",
            idx[0]
        )));
    }
    for k in 1..num_attrs {
        if idx[k] <= idx[k - 1] || idx[k] >= num {
            return Err(Error::invalid(format!(
                "attrsIndexes[{k}] is {}: entries must increase and stay below numBatches {num}",
                idx[k]
            )));
        }
    }
    let mut items = Vec::with_capacity(num);
    let mut k = 0;
    for i in 0..num {
        while k + 1 < num_attrs && idx[k + 1] <= i {
            k += 1;
        }
        // SAFETY: as above.
        let (dst, src, n, max, a) = unsafe {
            (
                dsts.add(i).read_unaligned() as u64,
                srcs.add(i).read_unaligned() as u64,
                sizes.add(i).read_unaligned(),
                dest_maxs.add(i).read_unaligned(),
                attrs.add(k).read_unaligned(),
            )
        };
        let item = (|| {
            if dst == 0 || src == 0 {
                return Err(Error::invalid(format!("dsts[{i}] or srcs[{i}] is NULL")));
            }
            if n > max {
                return Err(Error::invalid(format!(
                    "sizes[{i}] {n} is larger than destMaxs[{i}] {max}"
                )));
            }
            let dir = resolve(Some(rt), ACL_MEMCPY_DEFAULT, dst, src)?;
            if dir.dst_dev == dir.src_dev {
                return Err(Error::invalid(format!(
                    "a {} copy: batch copies support only host-to-device and device-to-host",
                    if dir.dst_dev {
                        "device-to-device"
                    } else {
                        "host-to-host"
                    }
                )));
            }
            for (arg, addr, dev, id, ty) in [
                ("dstLoc", dst, dir.dst_dev, a.dst_id, a.dst_type),
                ("srcLoc", src, dir.src_dev, a.src_id, a.src_type),
            ] {
                if dev {
                    let want = logical_of(rt, rt.node.phys(addr, 1, arg)?.device);
                    if ty != ACL_MEM_LOCATION_TYPE_DEVICE || id as i32 != want {
                        return Err(Error::invalid(format!(
                            "attrs[{k}].{arg} is (type {ty}, id {id}) but {addr:#x} is memory of \
                             device {want} (expected type ACL_MEM_LOCATION_TYPE_DEVICE, id {want})"
                        )));
                    }
                } else if ty != ACL_MEM_LOCATION_TYPE_HOST && ty != 4 {
                    return Err(Error::invalid(format!(
                        "attrs[{k}].{arg} has type {ty} but {addr:#x} is host memory (expected \
                         ACL_MEM_LOCATION_TYPE_HOST)"
                    )));
                }
            }
            if n > 0 {
                check_copy(rt, dst, src, n as u64, dir)?;
            }
            Ok(BatchItem {
                dst,
                src,
                n: n as u64,
                dir,
            })
        })()
        .map_err(|e| batch_err(fail, i, e))?;
        items.push(item);
    }
    Ok(items)
}

/// `aclrtMemcpyBatch`: every copy is validated before any runs.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpyBatch(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut MemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    failIndex: *mut usize,
) -> i32 {
    boundary("aclrtMemcpyBatch", || {
        let rt = get()?;
        // SAFETY: the arrays and counts are the caller's, as the ACL contract describes them; check_batch checks NULLs before reading.
        let items = unsafe {
            check_batch(
                &rt,
                dsts,
                destMaxs,
                srcs,
                sizes,
                numBatches,
                attrs,
                attrsIndexes,
                numAttrs,
                failIndex,
            )?
        };
        for (i, it) in items.iter().enumerate() {
            do_copy(&rt, it.dst, it.src, it.n, it.dir).map_err(|e| batch_err(failIndex, i, e))?;
        }
        Ok(())
    })
}

struct SendBatch(Vec<BatchItem>);
// SAFETY: addresses only; see SendPtr.
unsafe impl Send for SendBatch {}

/// `aclrtMemcpyBatchAsync`: validated now, run as one task on `stream` (or completed before
/// returning when a copy involves pageable host memory, as `aclrtMemcpyAsync` does).
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpyBatchAsync(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut MemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    failIndex: *mut usize,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemcpyBatchAsync", || {
        let rt = get()?;
        let s = rt.stream(stream)?;
        // SAFETY: as in aclrtMemcpyBatch.
        let items = unsafe {
            check_batch(
                &rt,
                dsts,
                destMaxs,
                srcs,
                sizes,
                numBatches,
                attrs,
                attrsIndexes,
                numAttrs,
                failIndex,
            )?
        };
        if items
            .iter()
            .any(|it| pageable_host_end(&rt, it.dst, it.src, it.dir))
        {
            // As aclrtMemcpyAsync: pageable host memory makes the call complete the copies.
            s.synchronize(None)?;
            for (i, it) in items.iter().enumerate() {
                do_copy(&rt, it.dst, it.src, it.n, it.dir)
                    .map_err(|e| batch_err(failIndex, i, e))?;
            }
            return Ok(());
        }
        let rt2 = rt.clone();
        let batch = SendBatch(items);
        s.enqueue(Box::new(move || {
            let batch = batch;
            for (i, it) in batch.0.iter().enumerate() {
                do_copy(&rt2, it.dst, it.src, it.n, it.dir).map_err(|e| {
                    Error::new(
                        e.code,
                        format!(
                            "aclrtMemcpyBatchAsync (run on the stream): copy {i}: {}",
                            e.msg
                        ),
                    )
                })?;
            }
            Ok(())
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cann_rounding() {
        assert_eq!(rounded_size(1, 0, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(32, 0, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(33, 0, Rounding::Padded), Some(96));
        assert_eq!(rounded_size(33, 2, Rounding::Align32), Some(64));
        assert_eq!(rounded_size(33, 6, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(33, 7 | 0x1000, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(33, 0x55, Rounding::Padded), Some(96));
        assert_eq!(rounded_size(u64::MAX - 3, 0, Rounding::Padded), None);
    }

    #[test]
    fn kinds_follow_the_pointers() {
        use Loc::*;
        let dev = npu_emu::memory::device_addr(1, 4096);
        let host = 0x7fff_1234_0000u64;
        let h2d = Dir {
            dst_dev: true,
            src_dev: false,
        };
        let d2d = Dir {
            dst_dev: true,
            src_dev: true,
        };
        // Known locations force the direction whatever the kind.
        assert_eq!(resolve_locs(2, dev, Device, host, Pinned).unwrap(), h2d);
        assert_eq!(resolve_locs(0, dev, Device, dev, Device).unwrap(), d2d);
        // Pageable host memory: the kind must allow the direction.
        assert_eq!(resolve_locs(1, dev, Device, host, Pageable).unwrap(), h2d);
        assert_eq!(resolve_locs(4, dev, Device, host, Pageable).unwrap(), h2d);
        let e = resolve_locs(2, dev, Device, host, Pageable).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(e.msg.contains("pageable host memory"), "{}", e.msg);
        assert!(e.msg.contains("device 1"), "{}", e.msg);
        assert!(resolve_locs(0, host, Pageable, dev, Device).is_err());
        assert!(resolve_locs(2, host, Pageable, dev, Device).is_ok());
        // Host to host: any kind.
        assert!(resolve_locs(1, host, Pageable, host, Pageable).is_ok());
        assert_eq!(
            resolve_locs(8, host, Pageable, host, Pageable)
                .unwrap_err()
                .code,
            ACL_ERROR_INVALID_PARAM
        );
    }
}
