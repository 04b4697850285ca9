//! Fault handling of a communicator: `HcclCommSuspend`, `HcclCommResume`,
//! `HcclCommWorkingDevNicSet`.
//!
//! - Suspend puts the communicator in the suspended state (CANN: after a device memory error,
//!   before `aclrtDeviceTaskAbort`): every operation on it is then refused with
//!   `HCCL_E_SUSPENDING` until `HcclCommResume`. Suspending twice is fine (still suspended).
//! - Resume returns it to the ready state and clears its asynchronous error. CANN asks the
//!   program to abort the device's tasks (`aclrtDeviceTaskAbort`) and to synchronize the
//!   ranks before resuming; the ranks must then resume having issued the same operations
//!   (npu-emu pairs operations by their order, it does not re-number them on resume).
//!   Resuming a communicator that is not suspended is accepted (CANN's resume also recovers
//!   from an abort without a suspend).
//! - NIC selection: CANN switches a rank to its backup device NIC only on RDMA links with
//!   `HCCL_OP_RETRY_ENABLE` "L2:1"; elsewhere it returns success with a WARNING and switches
//!   nothing. The emulated node has no RDMA links, so after checking its arguments (the
//!   communicator must have run an operation, ranks in range, non-NULL arrays) this is what
//!   happens here too.

use super::{entry, ptr};
use crate::comm::{self as cm, HcclComm};
use crate::errors::{non_null, HResult, HcclError};
use crate::globals::SUSPENDED;
use npu_emu::config::LogLevel;
use std::sync::atomic::Ordering;

/// `HCCL_E_SUSPENDING`.
const HCCL_E_SUSPENDING: i32 = 22;

/// Refuse an operation on a suspended communicator.
pub fn check_not_suspended(comm: HcclComm) -> HResult<()> {
    if SUSPENDED.lock().contains(&(comm as usize)) {
        return Err(HcclError::new(
            HCCL_E_SUSPENDING,
            format!("comm={comm:p} is suspended (HcclCommSuspend): call HcclCommResume before using it again"),
        ));
    }
    Ok(())
}

/// `HcclResult HcclCommSuspend(HcclComm comm)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommSuspend(comm: HcclComm) -> i32 {
    entry(
        "HcclCommSuspend",
        comm,
        || format!("comm={}", ptr(comm)),
        || {
            cm::get(comm)?;
            SUSPENDED.lock().insert(comm as usize);
            Ok(())
        },
    )
}

/// `HcclResult HcclCommResume(HcclComm comm)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommResume(comm: HcclComm) -> i32 {
    entry(
        "HcclCommResume",
        comm,
        || format!("comm={}", ptr(comm)),
        || {
            let c = cm::get(comm)?;
            c.async_error.store(0, Ordering::SeqCst);
            SUSPENDED.lock().remove(&(comm as usize));
            Ok(())
        },
    )
}

/// `HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t *ranks, bool *useBackup, uint32_t nRanks)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommWorkingDevNicSet(
    comm: HcclComm,
    ranks: *mut u32,
    useBackup: *mut bool,
    nRanks: u32,
) -> i32 {
    entry(
        "HcclCommWorkingDevNicSet",
        comm,
        || {
            format!(
                "comm={}, ranks={}, useBackup={}, nRanks={nRanks}",
                ptr(comm),
                ptr(ranks),
                ptr(useBackup)
            )
        },
        || {
            let c = cm::get(comm)?;
            non_null(ranks, "ranks")?;
            non_null(useBackup, "useBackup")?;
            if nRanks == 0 || nRanks > c.n {
                return Err(HcclError::para(format!(
                    "nRanks={nRanks} is out of range: expected 1..={} (the communicator's ranks)",
                    c.n
                )));
            }
            if c.seq.load(Ordering::SeqCst) == 0 {
                return Err(HcclError::para(
                    "the communicator has not run an operation yet: CANN configures the NIC of links an operation built",
                ));
            }
            // SAFETY: the caller passes nRanks entries in each array.
            let (rs, bs) = unsafe {
                (
                    std::slice::from_raw_parts(ranks, nRanks as usize),
                    std::slice::from_raw_parts(useBackup, nRanks as usize),
                )
            };
            if let Some(r) = rs.iter().find(|&&r| r >= c.n) {
                return Err(HcclError::para(format!(
                    "ranks contains {r}, not a rank of this {}-rank communicator",
                    c.n
                )));
            }
            let backup = bs.iter().filter(|&&b| b).count();
            crate::log_always(
                LogLevel::Warning,
                &format!(
                    "HcclCommWorkingDevNicSet: {nRanks} rank(s), {backup} to a backup NIC: the emulated node has no RDMA links, so no NIC is switched (CANN does the same without RDMA links)"
                ),
            );
            Ok(())
        },
    )
}
