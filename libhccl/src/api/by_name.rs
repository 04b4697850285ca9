//! `HcclCommGetHandleWithName`: the live communicator of this process with a given name (the
//! string `HcclGetCommName` returns). The fused matmul+collective operators of the aclnn
//! library (`aclnnMatmulAllReduce`, `aclnnAllGatherMatmul`, ...) take the communicator this
//! way, as a `char* group`.
//!
//! - `commName` NULL or `comm` NULL: `HCCL_E_PTR`; a name longer than the documented 128
//!   characters: `HCCL_E_PARA`; no live communicator of that name: `HCCL_E_NOT_FOUND`.
//! - Names are unique per device in CANN (its communicator table is per device); a process
//!   that drives several devices (`HcclCommInitAll`) can hold one communicator of a name per
//!   device. Then the one on the calling thread's current device is returned, or, with none
//!   there, the oldest.

use super::entry;
use crate::comm::HcclComm;
use crate::errors::{non_null, HcclError, HCCL_E_NOT_FOUND};
use crate::globals::COMMS;
use std::ffi::{c_char, CStr};

/// The documented maximum length of a communicator name.
const COMM_NAME_MAX_LENGTH: usize = 128;

/// `HcclResult HcclCommGetHandleWithName(const char* commName, HcclComm* comm)`
#[no_mangle]
pub unsafe extern "C" fn HcclCommGetHandleWithName(
    commName: *const c_char,
    comm: *mut HcclComm,
) -> i32 {
    entry(
        "HcclCommGetHandleWithName",
        std::ptr::null_mut(),
        || {
            let n = if commName.is_null() {
                "NULL".to_string()
            } else {
                format!("\"{}\"", CStr::from_ptr(commName).to_string_lossy())
            };
            format!("commName={n}, comm={:p}", comm)
        },
        || {
            non_null(commName, "commName")?;
            non_null(comm, "comm")?;
            // Read at most the documented length (plus the NUL) so an unterminated name
            // cannot run off its buffer.
            let mut bytes = Vec::new();
            for i in 0..=COMM_NAME_MAX_LENGTH {
                let b = *commName.add(i) as u8;
                if b == 0 {
                    break;
                }
                bytes.push(b);
            }
            if bytes.len() > COMM_NAME_MAX_LENGTH {
                return Err(HcclError::para(format!(
                    "commName is longer than {COMM_NAME_MAX_LENGTH} characters"
                )));
            }
            let name = String::from_utf8_lossy(&bytes).into_owned();
            if name.is_empty() {
                return Err(HcclError::para("commName is empty"));
            }
            let device = crate::rt::rt()
                .ok()
                .and_then(|r| r.current_device().ok())
                .map(|(l, _)| l);
            let table = COMMS.lock();
            let mut same: Vec<(u64, i32)> = table
                .iter()
                .filter(|(_, c)| c.name == name)
                .map(|(h, c)| (h, c.device_logical))
                .collect();
            same.sort_by_key(|&(h, _)| npu_emu_ffi::handles::serial(h));
            let pick = same
                .iter()
                .find(|&&(_, d)| Some(d) == device)
                .or(same.first());
            match pick {
                Some(&(h, _)) => {
                    *comm = h as HcclComm;
                    Ok(())
                }
                None => Err(HcclError::new(
                    HCCL_E_NOT_FOUND,
                    format!(
                        "commName=\"{name}\" names no live communicator of this process (HcclGetCommName gives a communicator's name)"
                    ),
                )),
            }
        },
    )
}
