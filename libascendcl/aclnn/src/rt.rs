//! The ACL runtime as libnnopbase sees it: the [`RtApi`] table exported by `libascendcl.so`
//! (DESIGN §1, the same one-runtime-instance rule as libhccl). It is found in the
//! already-loaded `libascendcl.so`, else in the file next to this library, else by the plain
//! name through the loader's search path, and cached. Besides the table, two ordinary ACL
//! exports are used: `aclrtGetSocName` (the emulated SoC decides what aclnn supports) and
//! `aclGetRecentErrMsg` (to quote the runtime's message when one of its calls fails).

use crate::status::{NnError, NnResult};
use npu_emu::rtapi::{RtApi, RtPhys, RtTask};
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

pub struct Rt {
    pub api: &'static RtApi,
    soc_name: Option<unsafe extern "C" fn() -> *const c_char>,
    recent: Option<unsafe extern "C" fn() -> *const c_char>,
    /// Keeps libascendcl.so loaded (the static holding this is never dropped).
    _lib: npu_emu::rtapi::LoadedRuntime,
}

static RT: OnceLock<Result<Rt, String>> = OnceLock::new();

fn load() -> Result<Rt, String> {
    let loaded = npu_emu::rtapi::load_runtime("libnnopbase.so")?;
    Ok(Rt {
        api: loaded.api,
        soc_name: loaded.str_fn(b"aclrtGetSocName\0"),
        recent: loaded.str_fn(b"aclGetRecentErrMsg\0"),
        _lib: loaded,
    })
}

/// The runtime, loading it on first use.
pub fn rt() -> NnResult<&'static Rt> {
    match RT.get_or_init(load) {
        Ok(r) => Ok(r),
        Err(e) => Err(NnError::runtime(e.clone())),
    }
}

/// The CANN log module of libnnopbase's / libopapi's lines: `OP` (module id 63 of CANN's
/// `log_types.h`, the `OP_ID` that `aclnn/opdev/op_log.h` logs under with sub-module `NNOP`).
pub const MODULE: &str = "OP";

/// Record `msg` as the thread's recent error; the runtime also logs it as
/// `[ERROR] OP(pid,tid): msg`, subject to the OP module's log level. False if the runtime
/// cannot be loaded.
pub fn set_recent(msg: &str) -> bool {
    match rt() {
        Ok(r) => {
            r.set_error(msg);
            true
        }
        Err(_) => false,
    }
}

impl Rt {
    /// The runtime's recent messages of this thread (taken), for quoting.
    fn take_msg(&self) -> String {
        match self.recent {
            Some(f) => {
                let p = unsafe { f() };
                if p.is_null() {
                    String::new()
                } else {
                    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
                }
            }
            None => String::new(),
        }
    }

    fn fail(&self, code: i32, what: &str) -> NnError {
        let m = self.take_msg();
        let hint = if code == npu_emu::codes::ACL_ERROR_UNINITIALIZE {
            " (was aclInit called?)"
        } else {
            ""
        };
        NnError::runtime(format!(
            "{what} failed with ACL error {code}{hint}{}{m}",
            if m.is_empty() { "" } else { ": " }
        ))
    }

    /// The emulated SoC (`aclrtGetSocName`).
    pub fn soc_name(&self) -> String {
        let p = match self.soc_name {
            Some(f) => unsafe { f() },
            None => std::ptr::null(),
        };
        if p.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// Check that `[addr, addr+len)` is inside one live device allocation of this process
    /// and give a host pointer to it (the emulator's alias of that device memory).
    pub fn device_range(&self, addr: u64, len: u64, what: &str) -> NnResult<*mut u8> {
        let mut phys = RtPhys::default();
        let r = unsafe { (self.api.translate)(addr, len, &mut phys) };
        if r != 0 {
            let m = self.take_msg();
            return Err(NnError::invalid(format!(
                "{what} {addr:#x} ({len} bytes) is not inside one device allocation of this process{}{m}",
                if m.is_empty() { "" } else { ": " }
            )));
        }
        let p = unsafe { (self.api.phys_to_host)(phys, len) };
        if p.is_null() {
            let m = self.take_msg();
            return Err(NnError::runtime(format!(
                "{what} {addr:#x} ({len} bytes) cannot be mapped{}{m}",
                if m.is_empty() { "" } else { ": " }
            )));
        }
        Ok(p)
    }

    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn enqueue(&self, stream: *mut c_void, task: RtTask) -> NnResult<()> {
        let r = unsafe { (self.api.enqueue)(stream, task) };
        if r != 0 {
            return Err(self.fail(r, "enqueueing the task on the stream"));
        }
        Ok(())
    }

    /// Record a message as the calling thread's recent error (also on a stream worker) and
    /// log it under the `OP` module.
    pub fn set_error(&self, msg: &str) {
        // SAFETY: both (pointer, length) pairs are valid for the call.
        unsafe {
            (self.api.set_error_module)(MODULE.as_ptr(), MODULE.len(), msg.as_ptr(), msg.len())
        };
    }
}
