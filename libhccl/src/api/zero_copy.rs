//! Zero-copy memory ranges (`hccl_comm.h`): `HcclCommSetMemoryRange`,
//! `HcclCommUnsetMemoryRange`, `HcclCommActivateCommMemory`, `HcclCommDeactivateCommMemory`.
//!
//! The program reserves virtual addresses (`aclrtReserveMemAddress`), tells HCCL the range,
//! maps physical memory into it (`aclrtMallocPhysical` + `aclrtMapMem`) and activates the
//! mapped part; operations whose buffers lie in activated memory then work on it directly.
//! npu-emu's operations always work on the caller's buffers (any device memory, VMM
//! mappings included, through the runtime's translation), so activation changes no data path;
//! what these functions keep is CANN's bookkeeping and its checks:
//! - ranges are the process's (visible to every communicator), must lie in the virtual
//!   range `aclrtReserveMemAddress` hands out, must not overlap, and `alignment`/`flags`
//!   must be 0; a range with activated memory cannot be unset;
//! - activated memory must lie inside one range, be mapped (`aclrtMapMem`) over its whole
//!   size, not overlap other activated memory, and `offset`/`flags` must be 0; `handle`
//!   must not be NULL;
//! - unset/deactivate take the address given to set/activate.
//!
//! Bad values are `HCCL_E_PARA`, NULL pointers `HCCL_E_PTR`, each with a message.

use super::{entry, ptr};
use crate::comm::{self as cm, HcclComm};
use crate::errors::{non_null, HResult, HcclError};
use crate::globals::ZERO_COPY;
use npu_emu::memory::{VMM_BASE, VMM_SIZE};
use std::collections::BTreeMap;
use std::ffi::c_void;

/// The zero-copy ranges of the process ([`ZERO_COPY`]).
pub(crate) struct Ranges {
    /// Set ranges: base → size.
    pub(crate) ranges: BTreeMap<u64, u64>,
    /// Activated memory: start → size.
    pub(crate) active: BTreeMap<u64, u64>,
}

/// The entry of `m` overlapping `[a, a+n)`, if any.
fn overlap(m: &BTreeMap<u64, u64>, a: u64, n: u64) -> Option<(u64, u64)> {
    m.range(..a + n)
        .next_back()
        .filter(|(&s, &len)| s + len > a)
        .map(|(&s, &len)| (s, len))
}

fn reserved(a: u64, n: u64) -> HResult<()> {
    if a < VMM_BASE || a.checked_add(n).is_none_or(|e| e > VMM_BASE + VMM_SIZE) {
        return Err(HcclError::para(format!(
            "{a:#x} (+{n} bytes) is not a virtual address range from aclrtReserveMemAddress"
        )));
    }
    Ok(())
}

/// `HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size, size_t alignment, uint64_t flags)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommSetMemoryRange(
    comm: HcclComm,
    baseVirPtr: *mut c_void,
    size: usize,
    alignment: usize,
    flags: u64,
) -> i32 {
    entry(
        "HcclCommSetMemoryRange",
        comm,
        || {
            format!(
                "comm={}, baseVirPtr={}, size={size}, alignment={alignment}, flags={flags}",
                ptr(comm),
                ptr(baseVirPtr)
            )
        },
        || {
            cm::get(comm)?;
            non_null(baseVirPtr, "baseVirPtr")?;
            if size == 0 {
                return Err(HcclError::para("size is 0"));
            }
            if alignment != 0 || flags != 0 {
                return Err(HcclError::para(format!(
                    "alignment={alignment}, flags={flags}: both are reserved and must be 0"
                )));
            }
            let (a, n) = (baseVirPtr as u64, size as u64);
            reserved(a, n)?;
            let mut z = ZERO_COPY.lock();
            if let Some((s, len)) = overlap(&z.ranges, a, n) {
                return Err(HcclError::para(format!(
                    "the range {a:#x} (+{n}) overlaps the range {s:#x} (+{len}) set before"
                )));
            }
            z.ranges.insert(a, n);
            Ok(())
        },
    )
}

/// `HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommUnsetMemoryRange(comm: HcclComm, baseVirPtr: *mut c_void) -> i32 {
    entry(
        "HcclCommUnsetMemoryRange",
        comm,
        || format!("comm={}, baseVirPtr={}", ptr(comm), ptr(baseVirPtr)),
        || {
            cm::get(comm)?;
            non_null(baseVirPtr, "baseVirPtr")?;
            let a = baseVirPtr as u64;
            let mut z = ZERO_COPY.lock();
            let n = *z.ranges.get(&a).ok_or_else(|| {
                HcclError::para(format!(
                    "baseVirPtr={a:#x} is not the base of a range set by HcclCommSetMemoryRange"
                ))
            })?;
            if let Some((s, len)) = overlap(&z.active, a, n) {
                return Err(HcclError::para(format!(
                    "the range still has activated memory {s:#x} (+{len}): HcclCommDeactivateCommMemory it first"
                )));
            }
            z.ranges.remove(&a);
            Ok(())
        },
    )
}

/// `HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: HcclComm,
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: *mut c_void,
    flags: u64,
) -> i32 {
    entry(
        "HcclCommActivateCommMemory",
        comm,
        || {
            format!(
                "comm={}, virPtr={}, size={size}, offset={offset}, handle={}, flags={flags}",
                ptr(comm),
                ptr(virPtr),
                ptr(handle)
            )
        },
        || {
            let c = cm::get(comm)?;
            non_null(virPtr, "virPtr")?;
            non_null(handle, "handle")?;
            if size == 0 {
                return Err(HcclError::para("size is 0"));
            }
            if offset != 0 || flags != 0 {
                return Err(HcclError::para(format!(
                    "offset={offset}, flags={flags}: both are reserved and must be 0"
                )));
            }
            let (a, n) = (virPtr as u64, size as u64);
            let mut z = ZERO_COPY.lock();
            let inside = z
                .ranges
                .range(..=a)
                .next_back()
                .is_some_and(|(&s, &len)| a + n <= s + len);
            if !inside {
                return Err(HcclError::para(format!(
                    "virPtr={a:#x} (+{n}) is not inside one range set by HcclCommSetMemoryRange"
                )));
            }
            if let Some((s, len)) = overlap(&z.active, a, n) {
                return Err(HcclError::para(format!(
                    "virPtr={a:#x} (+{n}) overlaps activated memory {s:#x} (+{len})"
                )));
            }
            // The physical memory must be mapped there (aclrtMapMem) over the whole size.
            c.rt.translate(a, n, "virPtr").map_err(|e| {
                HcclError::para(format!(
                    "virPtr={a:#x} (+{n}) is not mapped to physical memory (aclrtMapMem first): {}",
                    e.msg
                ))
            })?;
            z.active.insert(a, n);
            Ok(())
        },
    )
}

/// `HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(comm: HcclComm, virPtr: *mut c_void) -> i32 {
    entry(
        "HcclCommDeactivateCommMemory",
        comm,
        || format!("comm={}, virPtr={}", ptr(comm), ptr(virPtr)),
        || {
            cm::get(comm)?;
            non_null(virPtr, "virPtr")?;
            let a = virPtr as u64;
            if ZERO_COPY.lock().active.remove(&a).is_none() {
                return Err(HcclError::para(format!(
                    "virPtr={a:#x} is not memory activated by HcclCommActivateCommMemory"
                )));
            }
            Ok(())
        },
    )
}
