//! The ACL runtime as libhccl sees it: the [`RtApi`] table exported by `libascendcl.so`
//! (DESIGN §1). It is found in the already-loaded `libascendcl.so`, else in the file next to
//! this library, else by the plain name through the loader's search path, and cached.

use crate::errors::{HResult, HcclError, HCCL_E_PARA, HCCL_E_RUNTIME};
use npu_emu::rtapi::{RtApi, RtPhys, RtTask};
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

/// The loaded runtime: its table and `aclGetRecentErrMsg` (to quote its messages).
pub struct Rt {
    pub api: &'static RtApi,
    recent: Option<unsafe extern "C" fn() -> *const c_char>,
    /// Keeps libascendcl.so loaded (the static holding this is never dropped).
    _lib: npu_emu::rtapi::LoadedRuntime,
}

static RT: OnceLock<Result<Rt, String>> = OnceLock::new();

fn load() -> Result<Rt, String> {
    let loaded = npu_emu::rtapi::load_runtime("libhccl.so")?;
    let recent = loaded.str_fn(b"aclGetRecentErrMsg\0");
    Ok(Rt {
        api: loaded.api,
        recent,
        _lib: loaded,
    })
}

/// The runtime, loading it on first use.
pub fn rt() -> HResult<&'static Rt> {
    match RT.get_or_init(load) {
        Ok(r) => Ok(r),
        Err(e) => Err(HcclError::new(HCCL_E_RUNTIME, e.clone())),
    }
}

/// The CANN log module of libhccl's lines (`HCCL`, module id 3 of CANN's `log_types.h`).
pub const MODULE: &str = "HCCL";

/// Record `msg` as the thread's recent error (`aclGetRecentErrMsg`); the runtime also logs
/// it as `[ERROR] HCCL(pid,tid): msg`, subject to the HCCL module's log level. False if the
/// runtime is not loaded.
pub fn set_recent(msg: &str) -> bool {
    if let Ok(r) = rt() {
        r.set_error(msg);
        true
    } else {
        false
    }
}

impl Rt {
    /// The runtime's recent message of this thread (taken), for quoting.
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

    fn fail(&self, code: i32, what: &str) -> HcclError {
        let m = self.take_msg();
        let hint = if code == npu_emu::codes::ACL_ERROR_UNINITIALIZE {
            " (was aclInit called?)"
        } else {
            ""
        };
        HcclError::new(
            HCCL_E_RUNTIME,
            format!(
                "{what} failed with ACL error {code}{hint}{}{m}",
                if m.is_empty() { "" } else { ": " }
            ),
        )
    }

    /// Logical and physical id of the calling thread's current device.
    pub fn current_device(&self) -> HResult<(i32, u32)> {
        let (mut l, mut p) = (0i32, 0u32);
        let r = unsafe { (self.api.current_device)(&mut l, &mut p) };
        if r != 0 {
            return Err(self.fail(r, "getting the current device (call aclrtSetDevice first)"));
        }
        Ok((l, p))
    }

    pub fn logical_to_physical(&self, logical: i32) -> HResult<u32> {
        let mut p = 0u32;
        let r = unsafe { (self.api.logical_to_physical)(logical, &mut p) };
        if r != 0 {
            return Err(self.fail(r, &format!("device {logical}")));
        }
        Ok(p)
    }

    /// Check a device buffer argument and give its physical location.
    pub fn translate(&self, addr: u64, len: u64, what: &str) -> HResult<RtPhys> {
        let mut out = RtPhys::default();
        let r = unsafe { (self.api.translate)(addr, len, &mut out) };
        if r != 0 {
            let m = self.take_msg();
            return Err(HcclError::new(
                HCCL_E_PARA,
                format!(
                    "{what}={addr:#x} ({len} bytes) is not inside one live device allocation of this process{}{m}",
                    if m.is_empty() { "" } else { ": " }
                ),
            ));
        }
        Ok(out)
    }

    /// Host pointer to a physical range (any process's device memory).
    pub fn host(&self, phys: RtPhys, len: u64) -> HResult<*mut u8> {
        let p = unsafe { (self.api.phys_to_host)(phys, len) };
        if p.is_null() {
            return Err(HcclError::new(
                HCCL_E_RUNTIME,
                format!(
                    "device {} offset {:#x} (+{len} bytes) is outside its HBM",
                    phys.device, phys.offset
                ),
            ));
        }
        Ok(p)
    }

    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn enqueue(&self, stream: *mut c_void, task: RtTask) -> HResult<()> {
        let r = unsafe { (self.api.enqueue)(stream, task) };
        if r != 0 {
            return Err(self.fail(r, "enqueueing on the stream"));
        }
        Ok(())
    }

    /// Whether `stream` hands its operations to a model (capture, bound stream, update).
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn capturing(&self, stream: *mut c_void) -> HResult<bool> {
        let mut v = 0i32;
        let r = unsafe { (self.api.stream_capturing)(stream, &mut v) };
        if r != 0 {
            return Err(self.fail(r, "querying the stream"));
        }
        Ok(v != 0)
    }

    /// Enqueue an operation a model can hold (see `RtTemplate`).
    ///
    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn enqueue_template(
        &self,
        stream: *mut c_void,
        tmpl: npu_emu::rtapi::RtTemplate,
        what: &str,
    ) -> HResult<()> {
        let kind = "hccl";
        // SAFETY: both (pointer, length) pairs are valid for the call.
        let r = unsafe {
            (self.api.enqueue_template)(
                stream,
                tmpl,
                kind.as_ptr(),
                kind.len(),
                what.as_ptr(),
                what.len(),
            )
        };
        if r != 0 {
            return Err(self.fail(r, "putting the operation into the stream's model"));
        }
        Ok(())
    }

    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn synchronize(&self, stream: *mut c_void) -> HResult<()> {
        let r = unsafe { (self.api.synchronize)(stream) };
        if r != 0 {
            return Err(self.fail(r, "synchronizing the stream"));
        }
        Ok(())
    }

    /// Record `msg` as the calling thread's recent error and log it under `HCCL` (also on a
    /// stream worker thread: the message of a failed task).
    pub fn set_error(&self, msg: &str) {
        // SAFETY: both (pointer, length) pairs are valid for the call.
        unsafe {
            (self.api.set_error_module)(MODULE.as_ptr(), MODULE.len(), msg.as_ptr(), msg.len())
        };
    }
}
