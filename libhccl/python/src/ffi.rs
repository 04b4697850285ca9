//! The HCCL and ACL C functions, found at run time in whatever `libascendcl.so` and
//! `libhccl.so` the environment provides (npu-emu's or a real CANN install's), so this module
//! is not tied to one build of them. Signatures are CANN's (abi.md §1.2, §2.2).

use libloading::Library;
use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::sync::OnceLock;

pub type Ptr = *mut c_void;

/// `aclError` values this module looks at (abi.md §1.5).
pub const ACL_ERROR_REPEAT_INITIALIZE: i32 = 100002;
/// `aclrtMemcpyKind`.
pub const ACL_MEMCPY_HOST_TO_DEVICE: i32 = 1;
pub const ACL_MEMCPY_DEVICE_TO_HOST: i32 = 2;
/// `aclrtMemMallocPolicy`: `ACL_MEM_MALLOC_HUGE_FIRST`.
pub const ACL_MEM_MALLOC_HUGE_FIRST: i32 = 0;
/// `aclrtEventRecordedStatus`: `ACL_EVENT_RECORDED_STATUS_COMPLETE`.
pub const ACL_EVENT_RECORDED_STATUS_COMPLETE: i32 = 1;

/// `HCCL_ROOT_INFO_BYTES`.
pub const ROOT_INFO_BYTES: usize = 4108;

macro_rules! api {
    ($( $lib:ident $field:ident = $sym:literal : fn($($arg:ty),*) -> $ret:ty; )*) => {
        /// Function pointers into the two libraries (which stay loaded for the process).
        pub struct Api {
            _acl: Library,
            _hccl: Library,
            /// Where the libraries were found, for messages.
            pub found: String,
            $( pub $field: unsafe extern "C" fn($($arg),*) -> $ret, )*
        }

        impl Api {
            fn load(acl: Library, hccl: Library, found: String) -> Result<Api, String> {
                $(
                    // SAFETY: the symbol is declared with CANN's C signature (abi.md §1.2,
                    // §2.2); the copied function pointer stays valid while `Api` keeps the
                    // library loaded, and `Api` lives in a static for the process.
                    let $field = unsafe {
                        *api!(@lib $lib, acl, hccl)
                            .get::<unsafe extern "C" fn($($arg),*) -> $ret>($sym)
                            .map_err(|e| format!(
                                "{} has no {}: {e}",
                                stringify!($lib),
                                String::from_utf8_lossy(&$sym[..$sym.len() - 1])
                            ))?
                    };
                )*
                Ok(Api { _acl: acl, _hccl: hccl, found, $($field,)* })
            }
        }
    };
    (@lib acl, $a:ident, $h:ident) => { $a };
    (@lib hccl, $a:ident, $h:ident) => { $h };
}

api! {
    acl init = b"aclInit\0": fn(*const c_char) -> i32;
    acl set_device = b"aclrtSetDevice\0": fn(i32) -> i32;
    acl get_device = b"aclrtGetDevice\0": fn(*mut i32) -> i32;
    acl get_device_count = b"aclrtGetDeviceCount\0": fn(*mut u32) -> i32;
    acl create_stream = b"aclrtCreateStream\0": fn(*mut Ptr) -> i32;
    acl destroy_stream = b"aclrtDestroyStream\0": fn(Ptr) -> i32;
    acl sync_stream_timeout = b"aclrtSynchronizeStreamWithTimeout\0": fn(Ptr, i32) -> i32;
    acl malloc = b"aclrtMalloc\0": fn(*mut Ptr, usize, i32) -> i32;
    acl free = b"aclrtFree\0": fn(Ptr) -> i32;
    acl memcpy = b"aclrtMemcpy\0": fn(Ptr, usize, *const c_void, usize, i32) -> i32;
    acl create_event = b"aclrtCreateEvent\0": fn(*mut Ptr) -> i32;
    acl destroy_event = b"aclrtDestroyEvent\0": fn(Ptr) -> i32;
    acl record_event = b"aclrtRecordEvent\0": fn(Ptr, Ptr) -> i32;
    acl query_event = b"aclrtQueryEventStatus\0": fn(Ptr, *mut i32) -> i32;
    acl sync_event_timeout = b"aclrtSynchronizeEventWithTimeout\0": fn(Ptr, i32) -> i32;
    acl stream_wait_event = b"aclrtStreamWaitEvent\0": fn(Ptr, Ptr) -> i32;
    acl recent_err_msg = b"aclGetRecentErrMsg\0": fn() -> *const c_char;

    hccl get_root_info = b"HcclGetRootInfo\0": fn(*mut u8) -> i32;
    hccl init_root_info = b"HcclCommInitRootInfo\0": fn(u32, *const u8, u32, *mut Ptr) -> i32;
    hccl init_cluster_info = b"HcclCommInitClusterInfo\0": fn(*const c_char, u32, *mut Ptr) -> i32;
    hccl create_sub_comm = b"HcclCreateSubCommConfig\0":
        fn(*mut Ptr, u32, *mut u32, u64, u32, *mut u8, *mut Ptr) -> i32;
    hccl comm_destroy = b"HcclCommDestroy\0": fn(Ptr) -> i32;
    hccl get_rank_size = b"HcclGetRankSize\0": fn(Ptr, *mut u32) -> i32;
    hccl get_rank_id = b"HcclGetRankId\0": fn(Ptr, *mut u32) -> i32;
    hccl get_async_error = b"HcclGetCommAsyncError\0": fn(Ptr, *mut i32) -> i32;
    hccl error_string = b"HcclGetErrorString\0": fn(i32) -> *const c_char;
    hccl all_reduce = b"HcclAllReduce\0": fn(Ptr, Ptr, u64, i32, i32, Ptr, Ptr) -> i32;
    hccl broadcast = b"HcclBroadcast\0": fn(Ptr, u64, i32, u32, Ptr, Ptr) -> i32;
    hccl all_gather = b"HcclAllGather\0": fn(Ptr, Ptr, u64, i32, Ptr, Ptr) -> i32;
    hccl reduce_scatter = b"HcclReduceScatter\0": fn(Ptr, Ptr, u64, i32, i32, Ptr, Ptr) -> i32;
    hccl reduce = b"HcclReduce\0": fn(Ptr, Ptr, u64, i32, i32, u32, Ptr, Ptr) -> i32;
    hccl all_to_all = b"HcclAlltoAll\0": fn(Ptr, u64, i32, Ptr, u64, i32, Ptr, Ptr) -> i32;
    hccl send = b"HcclSend\0": fn(Ptr, u64, i32, u32, Ptr, Ptr) -> i32;
    hccl recv = b"HcclRecv\0": fn(Ptr, u64, i32, u32, Ptr, Ptr) -> i32;
    hccl barrier = b"HcclBarrier\0": fn(Ptr, Ptr) -> i32;
}

// SAFETY: the struct holds C function pointers and library handles, which may be used from
// any thread (the C libraries are thread-safe, as CANN's are).
unsafe impl Send for Api {}
// SAFETY: as above; nothing in `Api` is mutated after loading.
unsafe impl Sync for Api {}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The loaded libraries, or why they could not be loaded.
pub fn api() -> Result<&'static Api, String> {
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// Where to look for `name`: first the dynamic loader's own search (a library already loaded
/// by torch_npu, `LD_LIBRARY_PATH` as `set_env.sh` sets it), then `lib64/` of the CANN install
/// named by `ASCEND_HOME_PATH` / `ASCEND_TOOLKIT_HOME`.
fn candidates(name: &str) -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from(name)];
    for var in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        if let Some(d) = std::env::var_os(var).filter(|d| !d.is_empty()) {
            v.push(PathBuf::from(d).join("lib64").join(name));
        }
    }
    v
}

fn open(name: &str) -> Result<(Library, String), String> {
    let mut tried = Vec::new();
    for c in candidates(name) {
        // SAFETY: loading a CANN library runs its initialisers, which is what using it
        // requires; the same library may already be loaded (by torch_npu), and then the
        // loader returns that copy.
        match unsafe { Library::new(&c) } {
            Ok(l) => return Ok((l, c.display().to_string())),
            Err(e) => tried.push(format!("{}: {e}", c.display())),
        }
    }
    Err(format!(
        "cannot load {name} (tried {}); source the set_env.sh of npu-emu or of a CANN install \
         first, so that LD_LIBRARY_PATH or ASCEND_HOME_PATH leads to it",
        tried.join("; ")
    ))
}

/// The file a loaded library was mapped from (the loader found it by its search path).
fn mapped_from(name: &str, fallback: String) -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.rsplit('/').next() == Some(name))
        .map(str::to_string)
        .unwrap_or(fallback)
}

fn load() -> Result<Api, String> {
    // libascendcl first: libhccl reaches the ACL runtime through the copy already loaded.
    let (acl, a) = open("libascendcl.so")?;
    let (hccl, h) = open("libhccl.so")?;
    let found = format!(
        "{}, {}",
        mapped_from("libascendcl.so", a),
        mapped_from("libhccl.so", h)
    );
    Api::load(acl, hccl, found)
}

impl Api {
    /// `aclGetRecentErrMsg()` (empty when there is none).
    pub fn recent(&self) -> String {
        // SAFETY: aclGetRecentErrMsg takes no arguments and returns NULL or a NUL-terminated
        // string owned by the library's thread-local state, copied here at once.
        unsafe {
            let p = (self.recent_err_msg)();
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().trim_end().to_string()
            }
        }
    }

    /// Discard this thread's pending `aclGetRecentErrMsg` text (left by calls whose failure
    /// was expected, or by other users of ACL such as torch_npu), so that a message read after
    /// a failing call is that call's.
    pub fn drain(&self) {
        let _ = self.recent();
    }

    /// `HcclGetErrorString(code)`.
    pub fn error_string(&self, code: i32) -> String {
        // SAFETY: HcclGetErrorString accepts any value and returns a static string (or NULL).
        unsafe {
            let p = (self.error_string)(code);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        }
    }
}
