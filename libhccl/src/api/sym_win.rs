//! Symmetric memory windows (hcomm `hccl.h`, CANN 9.0): `HcclCommSymWinRegister`,
//! `HcclCommSymWinDeregister`, `HcclCommSymWinGet`.
//!
//! Each rank registers the same-sized window of its own device memory; operations may then
//! address a peer's window at the same offset. hcomm's register only records the window
//! (the memory is registered with the fabric when channels are set up); the emulated fabric
//! reads peers' device memory directly, so recording and checking is all there is to do:
//!
//! - register: `comm`, `addr`, `winHandle` non-NULL (`HCCL_E_PTR`), `size` > 0 and the
//!   range in one live device allocation of this process (`HCCL_E_PARA`), windows of one
//!   communicator may not overlap (`HCCL_E_PARA`); `flag` must be
//!   `HCCL_WIN_COLL_SYMMETRIC` (1) — hcomm does not support 0 yet (`HCCL_E_NOT_SUPPORT`).
//! - deregister: a live handle (`HCCL_E_PTR` for NULL, `HCCL_E_PARA` otherwise).
//! - get: the window of `comm` holding `[ptr, ptr + size)` and the offset of `ptr` in it;
//!   none is `HCCL_E_NOT_FOUND`.
//!
//! Windows of a destroyed communicator go with it.

use super::{entry, ptr};
use crate::comm::{self as cm, HcclComm};
use crate::errors::{non_null, HcclError, HCCL_E_NOT_FOUND, HCCL_E_NOT_SUPPORT};
use crate::globals::SYM_WINDOWS as WINDOWS;
use npu_emu_ffi::handles::{HandleKind, HandleTable};
use std::ffi::c_void;

/// `HCCL_WIN_COLL_SYMMETRIC`.
const HCCL_WIN_COLL_SYMMETRIC: u32 = 1;

/// A registered window, the object behind an `HcclCommSymWindow` (a handle of
/// [`WINDOWS`]).
pub(crate) struct Window {
    comm: usize,
    addr: u64,
    size: u64,
}

/// What an `HcclCommSymWindow` is.
pub static SYM_WINDOW: HandleKind =
    HandleKind::new(*b"SW", "symmetric window", "HcclCommSymWinRegister")
        .stale_because("it was deregistered, or its communicator was destroyed");

fn prune(w: &mut HandleTable<Window>) {
    w.retain(|_, x| cm::peek(x.comm as HcclComm).is_some());
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommSymWinRegister(
    comm: HcclComm,
    addr: *mut c_void,
    size: u64,
    winHandle: *mut *mut c_void,
    flag: u32,
) -> i32 {
    entry(
        "HcclCommSymWinRegister",
        comm,
        || {
            format!(
                "comm={}, addr={}, size={size}, winHandle={}, flag={flag}",
                ptr(comm),
                ptr(addr),
                ptr(winHandle)
            )
        },
        || {
            if comm.is_null() {
                return Err(HcclError::ptr("comm"));
            }
            let c = cm::get(comm)?;
            if addr.is_null() {
                return Err(HcclError::ptr("addr"));
            }
            non_null(winHandle, "winHandle")?;
            if size == 0 {
                return Err(HcclError::para("size=0; expected the window size in bytes"));
            }
            if flag != HCCL_WIN_COLL_SYMMETRIC {
                return Err(HcclError::new(
                    HCCL_E_NOT_SUPPORT,
                    format!("flag={flag} is not supported: only HCCL_WIN_COLL_SYMMETRIC (1) windows are"),
                ));
            }
            c.rt.translate(addr as u64, size, "addr")?;
            let (a, end) = (addr as u64, addr as u64 + size);
            let mut w = WINDOWS.lock();
            prune(&mut w);
            if let Some(x) = w
                .values()
                .find(|x| x.comm == comm as usize && a < x.addr + x.size && x.addr < end)
            {
                return Err(HcclError::para(format!(
                    "addr={a:#x} size={size} overlaps the window addr={:#x} size={} of this communicator",
                    x.addr, x.size
                )));
            }
            let h = w.insert(Window {
                comm: comm as usize,
                addr: a,
                size,
            });
            *winHandle = h as *mut c_void;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommSymWinDeregister(winHandle: *mut c_void) -> i32 {
    let comm = WINDOWS
        .lock()
        .peek(winHandle as u64)
        .map_or(std::ptr::null_mut(), |x| x.comm as HcclComm);
    entry(
        "HcclCommSymWinDeregister",
        comm,
        || format!("winHandle={}", ptr(winHandle)),
        || {
            if winHandle.is_null() {
                return Err(HcclError::ptr("winHandle"));
            }
            let mut w = WINDOWS.lock();
            prune(&mut w);
            w.remove(winHandle as u64, "winHandle")?;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommSymWinGet(
    comm: HcclComm,
    ptr_: *mut c_void,
    size: usize,
    winHandle: *mut *mut c_void,
    offset: *mut usize,
) -> i32 {
    entry(
        "HcclCommSymWinGet",
        comm,
        || {
            format!(
                "comm={}, ptr={}, size={size}, winHandle={}, offset={}",
                ptr(comm),
                ptr(ptr_),
                ptr(winHandle),
                ptr(offset)
            )
        },
        || {
            if comm.is_null() {
                return Err(HcclError::ptr("comm"));
            }
            cm::get(comm)?;
            if ptr_.is_null() {
                return Err(HcclError::ptr("ptr"));
            }
            non_null(winHandle, "winHandle")?;
            non_null(offset, "offset")?;
            let (a, len) = (ptr_ as u64, size as u64);
            let found = WINDOWS
                .lock()
                .iter()
                .find(|(_, x)| {
                    x.comm == comm as usize
                        && a >= x.addr
                        && a.saturating_add(len) <= x.addr + x.size
                })
                .map(|(h, x)| (h, x.addr));
            match found {
                Some((h, addr)) => {
                    *winHandle = h as *mut c_void;
                    *offset = (a - addr) as usize;
                    Ok(())
                }
                None => Err(HcclError::new(
                    HCCL_E_NOT_FOUND,
                    format!(
                        "no symmetric window of this communicator holds ptr={a:#x} size={size}"
                    ),
                )),
            }
        },
    )
}
