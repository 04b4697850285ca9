//! The ACL runtime as libhccl sees it: the [`RtApi`] table exported by `libascendcl.so`
//! (DESIGN §1). It is found in the already-loaded `libascendcl.so`, else in the file next to
//! this library, else by the plain name through the loader's search path, and cached.

use crate::errors::{HResult, HcclError, HCCL_E_PARA, HCCL_E_RUNTIME};
use npu_emu::rtapi::{RtApi, RtPhys, RtTask, RT_API_SYMBOL, RT_API_VERSION};
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

/// The loaded runtime: its table and `aclGetRecentErrMsg` (to quote its messages).
pub struct Rt {
    pub api: &'static RtApi,
    recent: Option<unsafe extern "C" fn() -> *const c_char>,
}

static RT: OnceLock<Result<Rt, String>> = OnceLock::new();

fn own_dir() -> Option<std::path::PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = own_dir as *const c_void;
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let path = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    std::path::Path::new(&path)
        .parent()
        .map(|p| p.to_path_buf())
}

fn load() -> Result<Rt, String> {
    use libloading::os::unix::Library;
    let mut tried = Vec::new();
    let mut lib =
        unsafe { Library::open(Some("libascendcl.so"), libc::RTLD_NOW | libc::RTLD_NOLOAD) }.ok();
    if lib.is_none() {
        tried.push("already-loaded libascendcl.so".to_string());
        if let Some(d) = own_dir() {
            let p = d.join("libascendcl.so");
            match unsafe { Library::open(Some(&p), libc::RTLD_NOW | libc::RTLD_GLOBAL) } {
                Ok(l) => lib = Some(l),
                Err(e) => tried.push(format!("{} ({e})", p.display())),
            }
        }
    }
    if lib.is_none() {
        match unsafe { Library::open(Some("libascendcl.so"), libc::RTLD_NOW | libc::RTLD_GLOBAL) } {
            Ok(l) => lib = Some(l),
            Err(e) => tried.push(format!("libascendcl.so on the search path ({e})")),
        }
    }
    let lib =
        lib.ok_or_else(|| format!("cannot load the ACL runtime: tried {}", tried.join(", ")))?;
    let get: unsafe extern "C" fn() -> *const RtApi = unsafe {
        *lib.get::<unsafe extern "C" fn() -> *const RtApi>(RT_API_SYMBOL)
            .map_err(|e| {
                format!("libascendcl.so has no npuemu_runtime_api ({e}); is it npu-emu's?")
            })?
    };
    let recent =
        unsafe { lib.get::<unsafe extern "C" fn() -> *const c_char>(b"aclGetRecentErrMsg\0") }
            .ok()
            .map(|s| *s);
    let api = unsafe { get() };
    if api.is_null() {
        return Err("npuemu_runtime_api returned NULL".into());
    }
    let api: &'static RtApi = unsafe { &*api };
    if api.version != RT_API_VERSION {
        return Err(format!(
            "libascendcl.so runtime interface version {} but libhccl.so needs {}; use libraries from the same build",
            api.version, RT_API_VERSION
        ));
    }
    // The library stays loaded for the life of the process.
    std::mem::forget(lib);
    Ok(Rt { api, recent })
}

/// The runtime, loading it on first use.
pub fn rt() -> HResult<&'static Rt> {
    match RT.get_or_init(load) {
        Ok(r) => Ok(r),
        Err(e) => Err(HcclError::new(HCCL_E_RUNTIME, e.clone())),
    }
}

/// Record `msg` as the thread's recent error (the runtime also logs it). False if the
/// runtime is not loaded.
pub fn set_recent(msg: &str) -> bool {
    if let Ok(r) = rt() {
        unsafe { (r.api.set_error)(msg.as_ptr(), msg.len()) };
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

    /// # Safety
    /// `stream` is NULL or an `aclrtStream` of this process.
    pub unsafe fn synchronize(&self, stream: *mut c_void) -> HResult<()> {
        let r = unsafe { (self.api.synchronize)(stream) };
        if r != 0 {
            return Err(self.fail(r, "synchronizing the stream"));
        }
        Ok(())
    }

    /// Set the error message on a stream worker thread (the message of a failed task).
    pub fn set_error(&self, msg: &str) {
        unsafe { (self.api.set_error)(msg.as_ptr(), msg.len()) };
    }
}
