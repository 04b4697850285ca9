//! User memory registration (hcomm `hccl.h`): `HcclCommRegister`, `HcclCommDeregister`,
//! `HcclCommExchangeMem`. torch_npu registers a "window" buffer with a communicator and
//! exchanges it with its peers before zero-copy collectives.
//!
//! - `HcclCommRegister(comm, addr, size, &handle, flag)`: `[addr, addr + size)` must lie in
//!   one live device allocation of this process; registrations of one communicator may not
//!   overlap (as for `HcclCommMemReg`: "内存注册不允许有交集"). Returns a handle.
//! - `HcclCommDeregister(comm, handle)`: the handle must be one of `comm`'s.
//! - `HcclCommExchangeMem(comm, handle, peerRanks, n)`: makes the window known to the listed
//!   peers. The emulated fabric reads peers' device memory directly (every operation
//!   publishes its buffers and checks them against the owner's live allocations), so nothing
//!   has to be copied or mapped: the call checks its arguments and records the peers.
//!
//! Handles are checked: a foreign, freed or another communicator's handle is `HCCL_E_PARA`
//! naming it, never a crash.

use super::{entry, ptr};
use crate::comm::{self as cm, HcclComm};
use crate::errors::{non_null, HcclError};
use crate::globals::MEM_REGS as REGS;
use npu_emu_ffi::handles::HandleKind;
use std::ffi::c_void;

/// A registered range, the object behind an `HcclCommRegister` handle (a handle of
/// [`REGS`]).
pub(crate) struct Registration {
    comm: usize,
    addr: u64,
    size: u64,
    peers: Vec<u32>,
}

/// What an `HcclCommRegister` handle is.
pub static REGISTRATION: HandleKind =
    HandleKind::new(*b"MR", "memory registration", "HcclCommRegister")
        .stale_because("it was already deregistered, or its communicator was destroyed");

#[no_mangle]
pub unsafe extern "C" fn HcclCommRegister(
    comm: HcclComm,
    addr: *mut c_void,
    size: u64,
    handle: *mut *mut c_void,
    flag: u32,
) -> i32 {
    entry(
        "HcclCommRegister",
        comm,
        || {
            format!(
                "comm={}, addr={}, size={size}, handle={}, flag={flag}",
                ptr(comm),
                ptr(addr),
                ptr(handle)
            )
        },
        || {
            let c = cm::get(comm)?;
            non_null(handle, "handle")?;
            if addr.is_null() {
                return Err(HcclError::ptr("addr"));
            }
            if size == 0 {
                return Err(HcclError::para(
                    "size=0; expected the size of the buffer in bytes",
                ));
            }
            // The range must be device memory of this process, on the communicator's device.
            c.rt.translate(addr as u64, size, "addr")?;
            let (a, end) = (addr as u64, addr as u64 + size);
            let mut regs = REGS.lock();
            // Registrations of destroyed communicators go with them.
            regs.retain(|_, r| cm::peek(r.comm as HcclComm).is_some());
            if let Some(r) = regs
                .values()
                .find(|r| r.comm == comm as usize && a < r.addr + r.size && r.addr < end)
            {
                return Err(HcclError::para(format!(
                    "addr={a:#x} size={size} overlaps memory already registered with this communicator (addr={:#x} size={}); registrations may not overlap",
                    r.addr, r.size
                )));
            }
            let h = regs.insert(Registration {
                comm: comm as usize,
                addr: a,
                size,
                peers: Vec::new(),
            });
            *handle = h as *mut c_void;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommDeregister(comm: HcclComm, handle: *mut c_void) -> i32 {
    entry(
        "HcclCommDeregister",
        comm,
        || format!("comm={}, handle={}", ptr(comm), ptr(handle)),
        || {
            cm::get(comm)?;
            if handle.is_null() {
                return Err(HcclError::ptr("handle"));
            }
            let mut regs = REGS.lock();
            if regs.get(handle as u64, "handle")?.comm != comm as usize {
                return Err(HcclError::para(format!(
                    "handle={} was registered with another communicator",
                    ptr(handle)
                )));
            }
            regs.remove(handle as u64, "handle")?;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommExchangeMem(
    comm: HcclComm,
    windowHandle: *mut c_void,
    peerRanks: *mut u32,
    peerRankNum: u32,
) -> i32 {
    entry(
        "HcclCommExchangeMem",
        comm,
        || {
            format!(
                "comm={}, windowHandle={}, peerRanks={}, peerRankNum={peerRankNum}",
                ptr(comm),
                ptr(windowHandle),
                ptr(peerRanks)
            )
        },
        || {
            let c = cm::get(comm)?;
            if windowHandle.is_null() {
                return Err(HcclError::ptr("windowHandle"));
            }
            let peers: Vec<u32> = if peerRankNum == 0 {
                Vec::new()
            } else {
                non_null(peerRanks, "peerRanks")?;
                std::slice::from_raw_parts(peerRanks, peerRankNum as usize).to_vec()
            };
            for (i, &p) in peers.iter().enumerate() {
                if p >= c.n {
                    return Err(HcclError::para(format!(
                        "peerRanks[{i}]={p} is out of range for a communicator of {} ranks",
                        c.n
                    )));
                }
                if let Some(j) = peers[..i].iter().position(|&q| q == p) {
                    return Err(HcclError::para(format!(
                        "peerRanks[{i}]={p} repeats peerRanks[{j}]"
                    )));
                }
            }
            let mut regs = REGS.lock();
            let r = regs.get_mut(windowHandle as u64, "windowHandle")?;
            if r.comm != comm as usize {
                return Err(HcclError::para(format!(
                    "windowHandle={} is not a live HcclCommRegister handle of this communicator: it was registered with another",
                    ptr(windowHandle)
                )));
            }
            r.peers = peers;
            Ok(())
        },
    )
}
