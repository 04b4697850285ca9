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
//! - The ACL layer checks first (CANN's order): NULL `dst`/`src`/`devPtr` and kinds outside
//!   `aclrtMemcpyKind` are `ACL_ERROR_INVALID_PARAM` whatever the count; then `count == 0`
//!   copies and memsets succeed before any other check; `count > destMax` is
//!   `ACL_ERROR_RT_PARAM_INVALID` (also `count > maxCount` of `aclrtMemsetAsync`; the
//!   synchronous `aclrtMemset` gives `ACL_ERROR_INVALID_PARAM`).
//! - `aclrtMemcpyAsync`: host-to-host is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`. With ACL host
//!   memory the copy is checked at call time and again when the stream runs it (memory freed
//!   in between fails at the next synchronize; freed and reallocated at the same address
//!   cannot be told apart); the host buffer must stay valid until then, except for
//!   `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`, whose data is staged at call time. With pageable host
//!   memory the call synchronizes the stream and copies before returning, as CANN does.
//! - `aclrtMemcpy2d` supports host-to-device and device-to-host, `aclrtMemcpy2dAsync` also
//!   device-to-device; NULL pointers, then `height == 0` or `width == 0`, are
//!   `ACL_ERROR_INVALID_PARAM` (`CheckMemcpy2dParam`); width above
//!   5000000 or height above 5242880 is `ACL_ERROR_RT_PARAM_INVALID`.
//! - `aclrtMemset[Async]` on host memory requires memory from `aclrtMallocHost` (or
//!   registered with `aclrtHostRegister`): anything else is undefined in CANN and an error
//!   here.
//!
//! This file checks and converts the C arguments; the copy engines (direction, 1-D, 2-D and
//! batch copies, fills, their range checks) are the machine's, in `npu_emu::copy`, and the
//! allocation size rule is `npu_emu::memory::rounded_size`.

use crate::ffi::{boundary, non_null, out};
use crate::mem::is_device_addr;
use crate::runtime::{get, Runtime};
use npu_emu::codes::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_MEMORY_TYPE,
    ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID,
};
use npu_emu::copy::batch::{self, Batch};
use npu_emu::copy::copy2d::Copy2d;
use npu_emu::copy::direction::{
    kind_name, pageable_host_end, resolve, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
};
use npu_emu::copy::{linear, memset};
use npu_emu::memory::{rounded_size, Rounding, Space};
use npu_emu::{Error, Result};
use std::ffi::c_void;

/// What CANN's ACL layer checks before handing a copy to the runtime: `dst` and `src` not
/// NULL, then `kind` an `aclrtMemcpyKind` value (`ACL_ERROR_INVALID_PARAM`).
fn copy_prechecks(dst: *mut c_void, src: *const c_void, kind: i32) -> Result<()> {
    non_null(dst, "dst")?;
    non_null(src, "src")?;
    if !(0..=7).contains(&kind) {
        return Err(Error::invalid(format!(
            "kind {kind} is not an aclrtMemcpyKind (expected 0..=7)"
        )));
    }
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

pub(crate) fn malloc_impl(
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
pub(crate) fn config_device(cfg: *const MallocConfig) -> Result<Option<i32>> {
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

/// `aclrtMallocHostWithCfg`. `ACL_RT_MEM_ATTR_VA_FLAG` with `vaFlag` 1 asks for host
/// memory whose device address after `aclrtHostRegister` equals its host address (VA
/// normalization): `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, what CANN returns where the driver
/// lacks the feature. The emulator cannot offer it: device addresses are the canonical
/// device ranges, which host code must not be able to dereference (that is how a host
/// access to device memory is caught, `npu_emu::fault`). Callers fall back to
/// `aclrtMallocHost` (torch_npu's swapped-memory allocator does). Other attributes are
/// validated and otherwise ignored.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocHostWithCfg(
    ptr: *mut *mut c_void,
    size: u64,
    cfg: *mut MallocConfig,
) -> i32 {
    boundary("aclrtMallocHostWithCfg", || {
        config_device(cfg)?;
        if va_flag(cfg) {
            return Err(Error::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "ACL_RT_MEM_ATTR_VA_FLAG with vaFlag 1 (host and device addresses equal) is not \
                 supported: the emulated device's addresses are never host-accessible; allocate \
                 with aclrtMallocHost and use the device address aclrtHostRegister returns",
            ));
        }
        malloc_host_impl(ptr, size)
    })
}

/// Whether `cfg` (validated by [`config_device`]) sets `ACL_RT_MEM_ATTR_VA_FLAG` to 1.
fn va_flag(cfg: *mut MallocConfig) -> bool {
    if cfg.is_null() {
        return false;
    }
    // SAFETY: validated by config_device: non-null with numAttrs readable entries.
    let cfg = unsafe { &*cfg };
    (0..cfg.num_attrs).any(|i| {
        // SAFETY: as above.
        let a = unsafe { cfg.attrs.add(i).read_unaligned() };
        a.attr == ACL_RT_MEM_ATTR_VA_FLAG && a.value[0] != 0
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
        rt.mem.host_free(Some(&rt.node), hostPtr as usize)?;
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
        // CANN checks the pointers and the kind first (ACL layer); a zero-byte copy then
        // succeeds before any other check.
        copy_prechecks(dst, src, kind)?;
        if count_ == 0 {
            return Ok(());
        }
        common_copy_args(dst, destMax, src, count_)?;
        let (d, s, n) = (dst as u64, src as u64, count_ as u64);
        if !is_device_addr(d) && !is_device_addr(s) {
            // Host to host works without aclInit; ACL host memory is range-checked if the
            // runtime is up.
            let rt = crate::runtime::try_get();
            // SAFETY: host ranges the runtime does not know are the program's contract.
            return unsafe { linear::copy_host(rt.as_deref(), kind, d, s, n) };
        }
        let rt = get()?;
        crate::api::mdlri::check_unsafe_call(&rt, "aclrtMemcpy")?;
        // SAFETY: as above.
        unsafe { linear::copy_sync(&*rt, kind, d, s, n) }
    })
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
        // CANN checks the pointers and the kind first (ACL layer); a zero-byte copy then
        // succeeds before any other check.
        copy_prechecks(dst, src, kind)?;
        if count_ == 0 {
            return Ok(());
        }
        common_copy_args(dst, destMax, src, count_)?;
        let rt = get()?;
        let (d, s) = (dst as u64, src as u64);
        let dir = resolve(Some(&*rt), kind, d, s)?;
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
        let st = rt.stream(stream)?;
        if pageable_host_end(&*rt, d, s, dir) {
            // Done at the call (CANN): not allowed where a capture forbids synchronous work.
            crate::api::mdlri::check_unsafe_call(
                &rt,
                "aclrtMemcpyAsync with pageable host memory",
            )?;
        }
        let staged = kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE;
        // SAFETY: host memory stays valid until the stream ran the copy (the program's
        // contract in CANN), except for the staged kind.
        unsafe {
            linear::copy_async(
                &rt,
                &st,
                "aclrtMemcpyAsync",
                d,
                s,
                count_ as u64,
                dir,
                staged,
            )
        }
    })
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
        matrix_prechecks(dst, src, width, height)?;
        let rt = get()?;
        let (d, s) = (dst as u64, src as u64);
        let c = Copy2d::check(&*rt, d, dpitch, s, spitch, width, height, kind, false)?;
        crate::api::mdlri::check_unsafe_call(&rt, "aclrtMemcpy2d")?;
        // SAFETY: host rows the runtime does not know are the program's contract.
        unsafe { c.run(&*rt) }
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
        matrix_prechecks(dst, src, width, height)?;
        let rt = get()?;
        let (d, s) = (dst as u64, src as u64);
        let c = Copy2d::check(&*rt, d, dpitch, s, spitch, width, height, kind, true)?;
        let st = rt.stream(stream)?;
        // SAFETY: host rows stay valid until the stream ran the copy (the program's
        // contract in CANN).
        unsafe { c.submit(&rt, &st, "aclrtMemcpy2dAsync") }
    })
}

/// CANN's first checks of a 2-D copy (`CheckMemcpy2dParam`): `dst`, `src` not NULL, then
/// `height` and `width` positive, all `ACL_ERROR_INVALID_PARAM`.
fn matrix_prechecks(
    dst: *mut c_void,
    src: *const c_void,
    width: usize,
    height: usize,
) -> Result<()> {
    non_null(dst, "dst")?;
    non_null(src, "src")?;
    if height == 0 {
        return Err(Error::invalid("height is 0 (expected > 0)"));
    }
    if width == 0 {
        return Err(Error::invalid("width is 0 (expected > 0)"));
    }
    Ok(())
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
        // CANN checks devPtr first; a zero-byte memset then succeeds before any other check.
        non_null(devPtr, "devPtr")?;
        if count_ == 0 {
            return Ok(());
        }
        memset_args(devPtr, maxCount, count_, ACL_ERROR_INVALID_PARAM)?;
        let rt = get()?;
        crate::api::mdlri::check_unsafe_call(&rt, "aclrtMemset")?;
        memset::fill(&*rt, devPtr as u64, value as u8, count_ as u64)
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
        // As aclrtMemset: devPtr first, then a zero-byte memset succeeds.
        non_null(devPtr, "devPtr")?;
        if count_ == 0 {
            return Ok(());
        }
        memset_args(devPtr, maxCount, count_, ACL_ERROR_RT_PARAM_INVALID)?;
        let rt = get()?;
        let st = rt.stream(stream)?;
        let (addr, n) = (devPtr as u64, count_ as u64);
        memset::fill_async(&rt, &st, "aclrtMemsetAsync", addr, value as u8, n)
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

use npu_emu::copy::batch::{ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST};
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
            let logical = rt.logical_of(phys);
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

/// `aclrtHostRegister`: map page-aligned host memory into the current device's address
/// space; `devPtr` is a device address whose memory is the host memory (`crate::mem`).
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
        let device = rt.current_device()?.1;
        let dev = rt
            .mem
            .register_host(&rt.node, Some(device), ptr as usize, size)?
            .expect("a mapped registration has a device address");
        out(devPtr, "devPtr", dev as *mut c_void)
    })
}

/// `aclrtHostUnregister`.
#[no_mangle]
pub unsafe extern "C" fn aclrtHostUnregister(ptr: *mut c_void) -> i32 {
    boundary("aclrtHostUnregister", || {
        non_null(ptr, "ptr")?;
        let rt = get()?;
        rt.mem.unregister_host(&rt.node, ptr as usize)
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
        rt.mem.host_free(Some(&rt.node), hostPtr as usize)?;
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
        let device = if flag & ACL_HOST_REG_MAPPED != 0 {
            Some(rt.current_device()?.1)
        } else {
            None
        };
        rt.mem
            .register_host(&rt.node, device, ptr as usize, size)
            .map(drop)
    })
}

/// `aclrtHostGetDevicePointer`: the device address of a byte of host memory registered as
/// mapped.
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
        let Some((start, reg)) = rt.mem.registration(pHost as usize) else {
            return Err(Error::invalid(format!(
                "pHost {pHost:p} is not inside host memory registered with aclrtHostRegister or \
                 aclrtHostRegisterV2"
            )));
        };
        let Some(dev) = reg.dev else {
            return Err(Error::invalid(format!(
                "pHost {pHost:p} is inside host memory {start:#x} registered with \
                 aclrtHostRegisterV2 without ACL_HOST_REG_MAPPED: it has no device address"
            )));
        };
        out(
            pDevice,
            "pDevice",
            (dev + (pHost as usize - start) as u64) as *mut c_void,
        )
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

/// Read and check the C arrays of `aclrtMemcpyBatch[Async]` (`failIndex` is set to
/// `SIZE_MAX` first), then validate the batch; a copy at fault is written to `failIndex`.
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
) -> Result<Batch> {
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
    let (idx, attrs, entries) = unsafe {
        let idx: Vec<usize> = (0..num_attrs)
            .map(|k| attrs_indexes.add(k).read_unaligned())
            .collect();
        let attrs: Vec<batch::Attr> = (0..num_attrs)
            .map(|k| {
                let a = attrs.add(k).read_unaligned();
                batch::Attr {
                    dst: batch::Location {
                        id: a.dst_id,
                        ty: a.dst_type,
                    },
                    src: batch::Location {
                        id: a.src_id,
                        ty: a.src_type,
                    },
                }
            })
            .collect();
        let entries: Vec<batch::Entry> = (0..num)
            .map(|i| batch::Entry {
                dst: dsts.add(i).read_unaligned() as u64,
                dest_max: dest_maxs.add(i).read_unaligned(),
                src: srcs.add(i).read_unaligned() as u64,
                size: sizes.add(i).read_unaligned(),
            })
            .collect();
        (idx, attrs, entries)
    };
    batch::check(rt, &entries, &attrs, &idx).map_err(|f| fail_at(fail, f))
}

/// The error of a failed batch; the copy at fault, if any, is written to `failIndex`.
fn fail_at(fail: *mut usize, f: batch::Failed) -> Error {
    if let Some(i) = f.index {
        // SAFETY: checked non-null by check_batch before any copy is looked at.
        unsafe { fail.write_unaligned(i) };
    }
    f.error
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
        // SAFETY: the C arrays as the API documents them.
        let batch = unsafe {
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
        // SAFETY: host memory the runtime does not know is the program's contract.
        unsafe { batch.run(&*rt) }.map_err(|f| fail_at(failIndex, f))
    })
}

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
        let st = rt.stream(stream)?;
        // SAFETY: the C arrays as the API documents them.
        let batch = unsafe {
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
        // SAFETY: host memory stays valid until the stream ran the batch (the program's
        // contract in CANN).
        unsafe { batch.submit(&rt, &st, "aclrtMemcpyBatchAsync") }
            .map_err(|f| fail_at(failIndex, f))
    })
}
