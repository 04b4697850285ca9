//! External allocators (`acl/acl_rt_allocator.h`): `aclrtAllocatorCreateDesc`,
//! `DestroyDesc`, the `Set*ToDesc` setters, `aclrtAllocatorRegister`/`Unregister` and
//! `aclrtAllocatorGetByStream` (CANN 8.5's `allocator.cpp`).
//!
//! A description collects an allocator object and its functions; registering it on a
//! stream stores a copy (later changes to the description do not affect the registration)
//! which `aclrtAllocatorGetByStream` hands back, with the description pointer, to the
//! libraries that allocate workspace for that stream. Codes as CANN: a NULL argument is
//! `ACL_ERROR_INVALID_PARAM`; registering a description without an object, alloc, free
//! or get-address function is `ACL_ERROR_INVALID_PARAM` naming the setter to call (the
//! advise function is optional); `aclrtAllocatorGetByStream` on a stream with no
//! registration is `ACL_ERROR_INVALID_PARAM`. Unlike CANN (which dereferences them),
//! a description pointer that is not a live one and a stream that is not a live stream
//! are `ACL_ERROR_INVALID_PARAM` with a message.

use crate::ffi::{boundary, boundary_value, non_null};
use crate::globals::ALLOCATORS;
use crate::runtime;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::{HandleKind, HandleTable};
use std::collections::BTreeMap;
use std::ffi::c_void;

/// The object behind an `aclrtAllocatorDesc`.
#[derive(Clone, Copy, Default)]
pub(crate) struct Desc {
    obj: usize,
    alloc: usize,
    free: usize,
    advise: usize,
    get_addr: usize,
}

/// What an `aclrtAllocatorDesc` is: a handle of [`Allocators::descs`].
pub static ALLOCATOR_DESC: HandleKind =
    HandleKind::new(*b"AD", "aclrtAllocatorDesc", "aclrtAllocatorCreateDesc");

/// The external allocators of the process ([`ALLOCATORS`]).
pub(crate) struct Allocators {
    /// Live descriptions.
    pub(crate) descs: HandleTable<Desc>,
    /// Stream handle → (description handle, copy made at registration).
    pub(crate) by_stream: BTreeMap<u64, (usize, Desc)>,
}

impl Allocators {
    pub(crate) const fn new() -> Allocators {
        Allocators {
            descs: HandleTable::new(&ALLOCATOR_DESC),
            by_stream: BTreeMap::new(),
        }
    }
}

/// Run `f` on the live description `d`.
fn with_desc<R>(d: *mut c_void, f: impl FnOnce(&mut Desc) -> R) -> Result<R> {
    non_null(d, "allocatorDesc")?;
    let mut a = ALLOCATORS.lock();
    Ok(f(a.descs.get_mut(d as u64, "allocatorDesc")?))
}

/// `aclrtAllocatorDesc aclrtAllocatorCreateDesc()`
#[no_mangle]
pub extern "C" fn aclrtAllocatorCreateDesc() -> *mut c_void {
    boundary_value("aclrtAllocatorCreateDesc", std::ptr::null_mut(), || {
        Ok(ALLOCATORS.lock().descs.insert(Desc::default()) as *mut c_void)
    })
}

/// `aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorDestroyDesc(allocatorDesc: *mut c_void) -> i32 {
    boundary("aclrtAllocatorDestroyDesc", || {
        non_null(allocatorDesc, "allocatorDesc")?;
        ALLOCATORS
            .lock()
            .descs
            .remove(allocatorDesc as u64, "allocatorDesc")?;
        Ok(())
    })
}

fn set(
    name: &'static str,
    d: *mut c_void,
    v: *mut c_void,
    arg: &str,
    f: fn(&mut Desc, usize),
) -> i32 {
    boundary(name, || {
        non_null(d, "allocatorDesc")?;
        non_null(v, arg)?;
        with_desc(d, |desc| f(desc, v as usize))
    })
}

/// `aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorSetObjToDesc(
    allocatorDesc: *mut c_void,
    allocator: *mut c_void,
) -> i32 {
    set(
        "aclrtAllocatorSetObjToDesc",
        allocatorDesc,
        allocator,
        "allocator",
        |d, v| d.obj = v,
    )
}

/// `aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocFunc func)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorSetAllocFuncToDesc(
    allocatorDesc: *mut c_void,
    func: *mut c_void,
) -> i32 {
    set(
        "aclrtAllocatorSetAllocFuncToDesc",
        allocatorDesc,
        func,
        "func",
        |d, v| d.alloc = v,
    )
}

/// `aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorFreeFunc func)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorSetFreeFuncToDesc(
    allocatorDesc: *mut c_void,
    func: *mut c_void,
) -> i32 {
    set(
        "aclrtAllocatorSetFreeFuncToDesc",
        allocatorDesc,
        func,
        "func",
        |d, v| d.free = v,
    )
}

/// `aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorSetAllocAdviseFuncToDesc(
    allocatorDesc: *mut c_void,
    func: *mut c_void,
) -> i32 {
    set(
        "aclrtAllocatorSetAllocAdviseFuncToDesc",
        allocatorDesc,
        func,
        "func",
        |d, v| d.advise = v,
    )
}

/// `aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    allocatorDesc: *mut c_void,
    func: *mut c_void,
) -> i32 {
    set(
        "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
        allocatorDesc,
        func,
        "func",
        |d, v| d.get_addr = v,
    )
}

/// `aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorRegister(
    stream: *mut c_void,
    allocatorDesc: *mut c_void,
) -> i32 {
    boundary("aclrtAllocatorRegister", || {
        non_null(stream, "stream")?;
        non_null(allocatorDesc, "allocatorDesc")?;
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        let copy = with_desc(allocatorDesc, |d| *d)?;
        for (v, setter) in [
            (copy.obj, "aclrtAllocatorSetObjToDesc"),
            (copy.alloc, "aclrtAllocatorSetAllocFuncToDesc"),
            (copy.free, "aclrtAllocatorSetFreeFuncToDesc"),
            (copy.get_addr, "aclrtAllocatorSetGetAddrFromBlockFuncToDesc"),
        ] {
            if v == 0 {
                return Err(Error::invalid(format!(
                    "allocatorDesc = {allocatorDesc:p} is incomplete: call {setter} first"
                )));
            }
        }
        ALLOCATORS
            .lock()
            .by_stream
            .insert(e.handle, (allocatorDesc as usize, copy));
        Ok(())
    })
}

/// `aclError aclrtAllocatorUnregister(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorUnregister(stream: *mut c_void) -> i32 {
    boundary("aclrtAllocatorUnregister", || {
        non_null(stream, "stream")?;
        ALLOCATORS.lock().by_stream.remove(&(stream as u64));
        Ok(())
    })
}

/// `aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc, aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc, aclrtAllocatorFreeFunc *freeFunc, aclrtAllocatorAllocAdviseFunc *allocAdviseFunc, aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)`
#[no_mangle]
pub unsafe extern "C" fn aclrtAllocatorGetByStream(
    stream: *mut c_void,
    allocatorDesc: *mut *mut c_void,
    allocator: *mut *mut c_void,
    allocFunc: *mut *mut c_void,
    freeFunc: *mut *mut c_void,
    allocAdviseFunc: *mut *mut c_void,
    getAddrFromBlockFunc: *mut *mut c_void,
) -> i32 {
    boundary("aclrtAllocatorGetByStream", || {
        non_null(allocatorDesc, "allocatorDesc")?;
        let (d, c) = ALLOCATORS
            .lock()
            .by_stream
            .get(&(stream as u64))
            .copied()
            .ok_or_else(|| {
                Error::invalid(format!(
                    "stream = {stream:p} has no allocator registered (aclrtAllocatorRegister)"
                ))
            })?;
        let put = |p: *mut *mut c_void, v: usize| {
            if !p.is_null() {
                // SAFETY: a non-null out-pointer per the ACL contract.
                unsafe { p.write_unaligned(v as *mut c_void) };
            }
        };
        put(allocatorDesc, d);
        put(allocator, c.obj);
        put(allocFunc, c.alloc);
        put(freeFunc, c.free);
        put(allocAdviseFunc, c.advise);
        put(getAddrFromBlockFunc, c.get_addr);
        Ok(())
    })
}
