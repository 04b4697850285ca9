//! Virtual memory management of `acl_rt.h` (abi.md Appendix A, `aclrtPhysicalMemProp` in
//! §1.6): reserve a device virtual range, allocate physical HBM, map and unmap it.
//!
//! The node ([`npu_emu::node::Node`]) keeps reservations, physical allocations and mappings;
//! this file validates the C arguments and keeps, per handle, what the program asked for
//! (logical device, `memAttr`) so it can be reported back. The handle value given to C is
//! the machine's handle id.
//!
//! Decisions: the granularity is 2 MiB for both options; `expectPtr` of
//! `aclrtReserveMemAddress` is a hint the emulator does not honour (the address always
//! comes from the node's shared VMM range); `flags` are accepted and ignored;
//! `aclrtMallocPhysical` accepts device memory only (`location.type` DEVICE, an HBM
//! `memAttr`), `handleType` NONE and `allocationType` PINNED.

use crate::ffi::{boundary, non_null, out};
use crate::mem::VmmHandle;
use crate::runtime::{get, Runtime};
use npu_emu::{Error, Result};
use std::ffi::c_void;

/// `aclrtPhysicalMemProp` (32 bytes, align 8).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhysicalMemProp {
    pub handle_type: i32,
    pub allocation_type: i32,
    pub mem_attr: i32,
    pub location_id: u32,
    pub location_type: i32,
    pub reserve: u64,
}

const ACL_MEM_HANDLE_TYPE_NONE: i32 = 0;
const ACL_MEM_ALLOCATION_TYPE_PINNED: i32 = 0;
const ACL_MEM_LOCATION_TYPE_DEVICE: i32 = 1;

/// Validate a property block; returns the physical device it names.
fn check_prop(rt: &Runtime, prop: *const PhysicalMemProp) -> Result<(u32, PhysicalMemProp)> {
    non_null(prop, "prop")?;
    // SAFETY: non-null; the caller passes an aclrtPhysicalMemProp.
    let p = unsafe { prop.read_unaligned() };
    if p.handle_type != ACL_MEM_HANDLE_TYPE_NONE {
        return Err(Error::invalid(format!(
            "prop->handleType is {}, expected ACL_MEM_HANDLE_TYPE_NONE (0)",
            p.handle_type
        )));
    }
    if p.allocation_type != ACL_MEM_ALLOCATION_TYPE_PINNED {
        return Err(Error::invalid(format!(
            "prop->allocationType is {}, expected ACL_MEM_ALLOCATION_TYPE_PINNED (0)",
            p.allocation_type
        )));
    }
    if p.location_type != ACL_MEM_LOCATION_TYPE_DEVICE {
        return Err(Error::invalid(format!(
            "prop->location.type is {}, expected ACL_MEM_LOCATION_TYPE_DEVICE (1)",
            p.location_type
        )));
    }
    match p.mem_attr {
        // ACL_HBM_MEM, _HUGE, _NORMAL, _P2P_HUGE, _P2P_NORMAL, _HUGE1G, _P2P_HUGE1G, and the
        // generic ACL_MEM_* attributes of 8.5
        1 | 4 | 5 | 8..=17 => {}
        0 | 2 | 3 | 6 | 7 => {
            return Err(Error::invalid(format!(
                "prop->memAttr {} is host (DDR) memory; physical allocations are device memory \
                 (an ACL_HBM_MEM_* attribute)",
                p.mem_attr
            )))
        }
        a => {
            return Err(Error::invalid(format!(
                "prop->memAttr {a} is not an aclrtMemAttr (expected 0..=17)"
            )))
        }
    }
    let phys = rt.physical_device(p.location_id as i32)?;
    Ok((phys, p))
}

/// `aclrtMemGetAllocationGranularity`: 2 MiB for both options.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *mut PhysicalMemProp,
    option: i32,
    granularity: *mut usize,
) -> i32 {
    boundary("aclrtMemGetAllocationGranularity", || {
        non_null(granularity, "granularity")?;
        if option != 0 && option != 1 {
            return Err(Error::invalid(format!(
                "option {option} is not ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM (0) or \
                 ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED (1)"
            )));
        }
        let rt = get()?;
        check_prop(&rt, prop)?;
        out(granularity, "granularity", rt.node.granularity() as usize)
    })
}

/// `aclrtReserveMemAddress`.
#[no_mangle]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> i32 {
    let _ = (expectPtr, flags);
    boundary("aclrtReserveMemAddress", || {
        non_null(virPtr, "virPtr")?;
        let rt = get()?;
        let va = rt.node.reserve_va(size as u64, alignment as u64)?;
        out(virPtr, "virPtr", va as *mut c_void)
    })
}

/// `aclrtReleaseMemAddress`.
#[no_mangle]
pub unsafe extern "C" fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> i32 {
    boundary("aclrtReleaseMemAddress", || {
        non_null(virPtr, "virPtr")?;
        get()?.node.release_va(virPtr as u64)
    })
}

/// `aclrtMallocPhysical`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut *mut c_void,
    size: usize,
    prop: *const PhysicalMemProp,
    flags: u64,
) -> i32 {
    let _ = flags;
    boundary("aclrtMallocPhysical", || {
        non_null(handle, "handle")?;
        let rt = get()?;
        let (phys, p) = check_prop(&rt, prop)?;
        let info = rt.node.alloc_physical(phys, size as u64)?;
        let h = rt.mem.handles.lock().insert(VmmHandle {
            id: info.id,
            device: phys,
            logical: p.location_id as i32,
            size: info.size,
            mem_attr: p.mem_attr,
        });
        out(handle, "handle", h as *mut c_void)
    })
}

/// The handle behind a C `aclrtDrvMemHandle`.
fn live_handle(rt: &Runtime, handle: *mut c_void) -> Result<VmmHandle> {
    Ok(*rt.mem.handles.lock().get(handle as u64, "handle")?)
}

/// `aclrtFreePhysical`: the handle must not be mapped anywhere.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreePhysical(handle: *mut c_void) -> i32 {
    boundary("aclrtFreePhysical", || {
        let rt = get()?;
        let h = live_handle(&rt, handle)?;
        rt.node.free_physical(h.id)?;
        rt.mem.handles.lock().remove(handle as u64, "handle")?;
        Ok(())
    })
}

/// `aclrtMapMem`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMapMem(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: *mut c_void,
    flags: u64,
) -> i32 {
    let _ = flags;
    boundary("aclrtMapMem", || {
        non_null(virPtr, "virPtr")?;
        let rt = get()?;
        let h = live_handle(&rt, handle)?;
        rt.node.map(virPtr as u64, size as u64, offset as u64, h.id)
    })
}

/// `aclrtUnmapMem`.
#[no_mangle]
pub unsafe extern "C" fn aclrtUnmapMem(virPtr: *mut c_void) -> i32 {
    boundary("aclrtUnmapMem", || {
        non_null(virPtr, "virPtr")?;
        get()?.node.unmap(virPtr as u64)
    })
}

/// `aclrtMemGetAllocationPropertiesFromHandle`: what `aclrtMallocPhysical` was given.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemGetAllocationPropertiesFromHandle(
    handle: *mut c_void,
    prop: *mut PhysicalMemProp,
) -> i32 {
    boundary("aclrtMemGetAllocationPropertiesFromHandle", || {
        non_null(prop, "prop")?;
        let rt = get()?;
        let h = live_handle(&rt, handle)?;
        out(
            prop,
            "prop",
            PhysicalMemProp {
                handle_type: ACL_MEM_HANDLE_TYPE_NONE,
                allocation_type: ACL_MEM_ALLOCATION_TYPE_PINNED,
                mem_attr: h.mem_attr,
                location_id: h.logical as u32,
                location_type: ACL_MEM_LOCATION_TYPE_DEVICE,
                reserve: 0,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prop_layout_matches_abi_md() {
        assert_eq!(std::mem::size_of::<PhysicalMemProp>(), 32);
        assert_eq!(std::mem::align_of::<PhysicalMemProp>(), 8);
        assert_eq!(std::mem::offset_of!(PhysicalMemProp, mem_attr), 8);
        assert_eq!(std::mem::offset_of!(PhysicalMemProp, location_id), 12);
        assert_eq!(std::mem::offset_of!(PhysicalMemProp, reserve), 24);
        assert_eq!(std::mem::size_of::<crate::api::memory::PtrAttributes>(), 28);
        assert_eq!(
            std::mem::size_of::<crate::api::memory::MallocAttribute>(),
            12
        );
        assert_eq!(std::mem::size_of::<crate::api::memory::MallocConfig>(), 16);
        assert_eq!(
            std::mem::size_of::<crate::api::memory::MemcpyBatchAttr>(),
            32
        );
    }
}
