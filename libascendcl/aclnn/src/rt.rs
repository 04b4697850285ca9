//! The ACL runtime as libnnopbase sees it: the [`RtApi`] table exported by `libascendcl.so`
//! (DESIGN §1, the same one-runtime-instance rule as libhccl). It is found in the
//! already-loaded `libascendcl.so`, else in the file next to this library, else by the plain
//! name through the loader's search path, and cached. Besides the table, two ordinary ACL
//! exports are used: `aclrtGetSocName` (the emulated SoC decides what aclnn supports) and
//! `aclGetRecentErrMsg` (to quote the runtime's message when one of its calls fails).

use crate::status::{NnError, NnResult};
use npu_emu::rtapi::{RtApi, RtPhys, RtTask, RT_API_SYMBOL, RT_API_VERSION};
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

pub struct Rt {
    pub api: &'static RtApi,
    soc_name: Option<unsafe extern "C" fn() -> *const c_char>,
    recent: Option<unsafe extern "C" fn() -> *const c_char>,
}

static RT: OnceLock<Result<Rt, String>> = OnceLock::new();

fn own_dir() -> Option<std::path::PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = own_dir as *const c_void;
    // SAFETY: dladdr only reads the loader's tables.
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
    let sym = |name: &[u8]| {
        unsafe { lib.get::<unsafe extern "C" fn() -> *const c_char>(name) }
            .ok()
            .map(|s| *s)
    };
    let soc_name = sym(b"aclrtGetSocName\0");
    let recent = sym(b"aclGetRecentErrMsg\0");
    let api = unsafe { get() };
    if api.is_null() {
        return Err("npuemu_runtime_api returned NULL".into());
    }
    // SAFETY: a static table of the loaded library.
    let api: &'static RtApi = unsafe { &*api };
    if api.version != RT_API_VERSION {
        return Err(format!(
            "libascendcl.so runtime interface version {} but libnnopbase.so needs {}; use libraries from the same build",
            api.version, RT_API_VERSION
        ));
    }
    // The library stays loaded for the life of the process.
    std::mem::forget(lib);
    Ok(Rt {
        api,
        soc_name,
        recent,
    })
}

/// The runtime, loading it on first use.
pub fn rt() -> NnResult<&'static Rt> {
    match RT.get_or_init(load) {
        Ok(r) => Ok(r),
        Err(e) => Err(NnError::runtime(e.clone())),
    }
}

/// Record `msg` as the thread's recent error (the runtime also logs it). False if the
/// runtime cannot be loaded.
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
            return Err(self.fail(r, "enqueueing the conversion on the stream"));
        }
        Ok(())
    }

    /// Record a message as the calling thread's recent error (also on a stream worker).
    pub fn set_error(&self, msg: &str) {
        unsafe { (self.api.set_error)(msg.as_ptr(), msg.len()) };
    }
}
