//! The exported C functions: [`comm`] (communicator management, `hccl_comm.h`), [`ops`]
//! (operations, `hccl.h`), [`group`] (`HcclGroupStart`/`HcclGroupEnd`) and [`mem`] (user
//! memory registration). Every export has the same shape: run the body inside the panic
//! boundary, report a failure with the function's name (and the communicator's history),
//! and log the call with its arguments and duration when `HCCL_ENTRY_LOG_ENABLE=1`.

pub mod by_name;
pub mod comm;
pub mod group;
pub mod mem;
pub mod ops;
pub mod resilience;
pub mod sym_win;
pub mod zero_copy;

use crate::algo::BufRef;
use crate::comm::{peek, CommInner, HcclComm};
use crate::errors::{boundary, code_name, HResult, HcclError};
use crate::fingerprint::Dtype;
use npu_emu::config::LogLevel;
use std::ffi::c_void;
use std::time::Instant;

/// Run an export: see the module documentation.
pub fn entry(
    name: &str,
    comm: HcclComm,
    args: impl FnOnce() -> String,
    body: impl FnOnce() -> HResult<()>,
) -> i32 {
    let log = crate::entry_log_enabled();
    // The clock only when the call is logged: a small collective costs about a µs, and
    // every rank's share of it counts when ranks outnumber cores.
    let t0 = log.then(Instant::now);
    let a = if log { Some(args()) } else { None };
    let code = boundary(name, body);
    if code != 0 {
        if let Some(c) = peek(comm) {
            c.dump_history();
        }
    }
    if let Some(a) = a {
        crate::log_always(
            LogLevel::Info,
            &format!(
                "{name}({a}) -> {} in {} us",
                code_name(code),
                t0.map_or(0, |t| t.elapsed().as_micros())
            ),
        );
    }
    code
}

/// `count` elements of `dt` in bytes, or an error naming the argument.
pub fn bytes(count: u64, dt: Dtype, what: &str) -> HResult<u64> {
    count
        .checked_mul(dt.size() as u64)
        .filter(|&b| b < (1u64 << 56))
        .ok_or_else(|| {
            HcclError::para(format!(
                "{what}={count} elements of {} is too large",
                dt.name()
            ))
        })
}

/// Check a device buffer argument of `len` bytes (NULL → `HCCL_E_PTR`).
pub fn dev_buf(c: &CommInner, p: *const c_void, len: u64, what: &str) -> HResult<BufRef> {
    if p.is_null() {
        return Err(HcclError::ptr(what));
    }
    let (phys, serial) = c.rt.translate_serial(p as u64, len, what)?;
    Ok(BufRef {
        phys,
        len,
        addr: p as u64,
        serial,
        // The argument's own name ("sendRecvInfo[3].buf" names it as "buf").
        what: ["sendBuf", "recvBuf", "buf"]
            .into_iter()
            .find(|n| what.ends_with(n))
            .unwrap_or("buffer"),
    })
}

/// `p` as text for entry logs.
pub fn ptr<T>(p: *const T) -> String {
    format!("{p:p}")
}
