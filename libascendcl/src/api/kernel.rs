//! Ascend C kernel launches: `npuemu_kernel_launch`, the entry point that the generated
//! `aclrtlaunch_<kernel>` functions call (contract in `headers/ascendc/npuemu/launch.h`;
//! the generator is `npu-emu ascendc-stub`).
//!
//! At the call (enqueue): the stream handle, `block_dim` (1..=65535, as Ascend C documents
//! "取值范围为[1,65535]") and every non-null pointer argument are checked; each pointer must
//! lie in a live device allocation of the stream's device, which becomes one region the
//! kernel may access (the whole allocation). The argument block is copied. Errors return
//! the ACL code and record a message naming `aclrtlaunch_<kernel>` and the argument.
//!
//! At execution (in stream order, on the stream's worker): the regions are checked again
//! (an allocation freed after the launch was enqueued is an error, not a use-after-free),
//! then the device's emulated AI cores ([`npu_emu::aicore::AiCorePool`], one per physical
//! device, sized by the emulated SoC (`NPU_EMU_SOC`): its vector cores, or its AI cores on a
//! coupled SoC, as `aclrtGetDeviceInfo` reports them) run the `block_dim` blocks in parallel.
//! A failed block fails the task: the next synchronize returns
//! `ACL_ERROR_RT_AICORE_EXCEPTION` (507015) with the block's message, which is also logged
//! when it happens.
//!
//! The pools live in a process-wide table here (not in [`crate::runtime::Runtime`]): idle
//! AI-core threads sleep and survive `aclFinalize`, and a forked child makes new ones.

use crate::ffi;
use crate::runtime;
use npu_emu::aicore::{
    soc_cores, AiCorePool, LaunchSync, ACL_ERROR_RT_AICORE_EXCEPTION, MAX_BLOCK_DIM,
};
use npu_emu::codes::{
    ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID,
};
use npu_emu::config::LogLevel;
use npu_emu::memory::{device_addr, is_canonical};
use npu_emu::rtapi::RtPhys;
use npu_emu::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// `npuemu_gm_region`: one buffer handed to the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct npuemu_gm_region {
    /// Canonical device address of the start of the allocation.
    pub dev_addr: u64,
    /// Bytes of the allocation.
    pub size: u64,
    /// Read-write alias of `dev_addr` in this process.
    pub host: *mut c_void,
    /// The kernel parameter's name.
    pub name: *const c_char,
}

/// `npuemu_mem_range`: one device's whole HBM (canonical range and this process's alias).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct npuemu_mem_range {
    pub dev_addr: u64,
    pub size: u64,
    pub host: *mut c_void,
}

/// `npuemu_block_info`: what a block needs besides the kernel's arguments.
#[repr(C)]
pub struct npuemu_block_info {
    pub block_idx: u32,
    pub block_num: u32,
    pub regions: *const npuemu_gm_region,
    pub nregions: usize,
    pub devmem: *const npuemu_mem_range,
    pub ndevmem: usize,
    pub tiling_key: u64,
    pub cores: u32,
    pub reserved: u32,
    pub launch: *mut c_void,
    pub sync_all: Option<unsafe extern "C" fn(*mut c_void, u32, *mut c_char, usize) -> c_int>,
    pub err: *mut c_char,
    pub errlen: usize,
}

/// `npuemu_block_fn`: runs one block; 0 = ok, else a message in `info->err`.
pub type npuemu_block_fn =
    unsafe extern "C" fn(args: *const c_void, info: *const npuemu_block_info) -> c_int;

/// `npuemu_kernel_ptr_arg`: a pointer argument of a launch, by parameter name.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct npuemu_kernel_ptr_arg {
    pub name: *const c_char,
    pub value: *const c_void,
}

thread_local! {
    /// The message of this thread's last failed `npuemu_kernel_launch`, for
    /// [`npuemu_kernel_launch_async_error`].
    static LAST_LAUNCH_ERROR: std::cell::RefCell<Option<String>> =
        const { std::cell::RefCell::new(None) };
}

/// Bytes of the buffer a block writes its failure message into.
const ERR_LEN: usize = 2048;

/// The AI-core pools, by physical device.
static POOLS: Mutex<Option<HashMap<u32, Arc<AiCorePool>>>> = Mutex::new(None);

/// The pool of `physical`, with `cores` (the emulated SoC's, [`npu_emu::aicore::SocCores::launch_cores`]:
/// the most blocks that run at once) when it is made.
fn pool(physical: u32, cores: u32) -> Arc<AiCorePool> {
    let mut g = POOLS.lock();
    let map = g.get_or_insert_with(HashMap::new);
    match map.get(&physical) {
        Some(p) if p.is_usable() && p.cores() == cores => p.clone(),
        _ => {
            let p = Arc::new(AiCorePool::new(&format!("device {physical}"), cores));
            map.insert(physical, p.clone());
            p
        }
    }
}

/// One region plus what is needed to re-check it at execution.
pub(crate) struct Region {
    name: CString,
    dev_addr: u64,
    size: u64,
    host: *mut c_void,
}

/// A launch as queued on the stream.
pub(crate) struct Launch {
    pub(crate) kernel: String,
    pub(crate) block_dim: u32,
    pub(crate) func: npuemu_block_fn,
    /// The argument block, 16-byte aligned.
    pub(crate) args: Vec<u128>,
    pub(crate) regions: Vec<Region>,
    /// Physical device of the stream: whose AI cores run the blocks.
    pub(crate) physical: u32,
    /// `TILING_KEY_IS`: the key of the launched entry.
    pub(crate) tiling_key: u64,
    /// Kept alive while the launch is queued (a loaded kernel binary, device buffers of
    /// placeholder arguments freed when it is dropped): held for its `Drop` only.
    #[allow(dead_code)]
    pub(crate) keep: Option<Box<dyn std::any::Any + Send + Sync>>,
    /// `aclrtLaunchKernel`: the argument block is in device memory and is read when the launch
    /// runs (after the copies queued before it), then its pointers are resolved to regions.
    pub(crate) deferred: Option<Deferred>,
}

/// An argument block in device memory, for [`Launch::deferred`].
pub(crate) struct Deferred {
    pub(crate) addr: u64,
    pub(crate) size: usize,
    pub(crate) kernel: npu_emu::kernel_bin::KernelInfo,
    pub(crate) entry: Arc<runtime::StreamEntry>,
}

// SAFETY: the raw pointers are aliases of device memory (valid while the allocation lives,
// re-checked before use) and the generated block function, which is thread-safe by
// contract (blocks run in parallel).
unsafe impl Send for Launch {}
unsafe impl Sync for Launch {}

/// What the blocks of one run share: the region and device tables and the SyncAll barrier.
struct Shared {
    regions: Vec<npuemu_gm_region>,
    devmem: Vec<npuemu_mem_range>,
    sync: LaunchSync,
    cores: u32,
}
// SAFETY: read-only tables of pointers into `Launch` and the node's mappings, plus a barrier
// that is `Sync`, shared by the blocks of one run.
unsafe impl Sync for Shared {}

/// `sync_all` of `npuemu_block_info`: `launch` is the run's [`Shared`].
unsafe extern "C" fn sync_all_cb(
    launch: *mut c_void,
    block_idx: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    let r = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `launch` points to the `Shared` of the running launch (block_info).
        let shared = unsafe { &*(launch as *const Shared) };
        shared.sync.arrive(block_idx)
    }));
    let msg = match r {
        Ok(Ok(())) => return 0,
        Ok(Err(m)) => m,
        Err(_) => "SyncAll: internal error in the AI-core emulation".to_string(),
    };
    if !err.is_null() && errlen > 0 {
        let n = msg.len().min(errlen - 1);
        // SAFETY: err has errlen writable bytes (the block's message buffer).
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), err as *mut u8, n);
            *err.add(n) = 0;
        }
    }
    1
}

impl Launch {
    /// Check that every region is still live, then run the blocks on the device's cores.
    pub(crate) fn execute(&self) -> Result<()> {
        let rt = runtime::get()?;
        // aclrtLaunchKernel: read the argument block now, in stream order.
        let resolved;
        let (args, regions): (&[u128], &[Region]) = match &self.deferred {
            None => (&self.args, &self.regions),
            Some(d) => {
                let src = rt
                    .node
                    .check(d.addr, d.size as u64, "argsData")
                    .map_err(|e| {
                        Error::new(
                            ACL_ERROR_RT_PARAM_INVALID,
                            format!("kernel {}: {}", self.kernel, e.msg),
                        )
                    })?;
                let mut buf = vec![0u128; d.size.div_ceil(16).max(1)];
                // SAFETY: d.size bytes of device memory (checked above) into a buffer as large.
                unsafe { std::ptr::copy_nonoverlapping(src, buf.as_mut_ptr() as *mut u8, d.size) };
                // SAFETY: buf holds d.size initialised bytes.
                let bytes =
                    unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, d.size) };
                let regs = regions_of(&rt, &d.entry, &d.kernel.pointers(bytes)).map_err(|e| {
                    Error::new(
                        e.code,
                        format!(
                            "kernel {}: the argument block at 0x{:x}: {}",
                            self.kernel, d.addr, e.msg
                        ),
                    )
                })?;
                resolved = (buf, regs);
                (&resolved.0, &resolved.1)
            }
        };
        for r in regions {
            match rt.node.lookup(r.dev_addr) {
                Some(a) if a.addr == r.dev_addr && a.size == r.size => {}
                _ => {
                    return Err(Error::new(
                        ACL_ERROR_RT_AICORE_EXCEPTION,
                        format!(
                            "kernel {}: argument {} (allocation 0x{:x}, {} bytes) was freed before the kernel ran",
                            self.kernel,
                            r.name.to_string_lossy(),
                            r.dev_addr,
                            r.size
                        ),
                    ))
                }
            }
        }
        let cores = soc_cores(&rt.cfg.soc_name).launch_cores();
        let hbm = rt.node.hbm_size();
        let devmem: Vec<npuemu_mem_range> = (0..rt.node.devices())
            .filter_map(|d| {
                let host = rt.node.phys_to_host(
                    RtPhys {
                        device: d,
                        _pad: 0,
                        offset: 0,
                    },
                    hbm,
                )?;
                Some(npuemu_mem_range {
                    dev_addr: device_addr(d, 0),
                    size: hbm,
                    host: host as *mut c_void,
                })
            })
            .collect();
        drop(rt);
        let shared = Shared {
            regions: regions
                .iter()
                .map(|r| npuemu_gm_region {
                    dev_addr: r.dev_addr,
                    size: r.size,
                    host: r.host,
                    name: r.name.as_ptr(),
                })
                .collect(),
            devmem,
            sync: LaunchSync::new(self.block_dim, cores),
            cores,
        };
        pool(self.physical, cores).run(&self.kernel, self.block_dim, &|idx| {
            let r = self.block(&shared, args, idx);
            shared.sync.done(idx, r.is_ok());
            r
        })
    }

    /// Run block `idx` through the generated block function.
    fn block(&self, shared: &Shared, args: &[u128], idx: u32) -> std::result::Result<(), String> {
        let mut err = [0u8; ERR_LEN];
        let info = npuemu_block_info {
            block_idx: idx,
            block_num: self.block_dim,
            regions: if shared.regions.is_empty() {
                std::ptr::null()
            } else {
                shared.regions.as_ptr()
            },
            nregions: shared.regions.len(),
            devmem: shared.devmem.as_ptr(),
            ndevmem: shared.devmem.len(),
            tiling_key: self.tiling_key,
            cores: shared.cores,
            reserved: 0,
            launch: shared as *const Shared as *mut c_void,
            sync_all: Some(sync_all_cb),
            err: err.as_mut_ptr() as *mut c_char,
            errlen: ERR_LEN,
        };
        // SAFETY: the generated block function with the argument block copied at enqueue
        // and the block info (its tables and buffer valid for this call).
        let rc = unsafe { (self.func)(args.as_ptr() as *const c_void, &info) };
        if rc == 0 {
            return Ok(());
        }
        err[ERR_LEN - 1] = 0;
        let msg = CStr::from_bytes_until_nul(&err)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        Err(if msg.is_empty() {
            format!(
                "kernel {} block {idx}/{}: the block failed (code {rc}) without a message",
                self.kernel, self.block_dim
            )
        } else {
            msg
        })
    }
}

/// Read a C string argument that must not be NULL.
unsafe fn c_str(p: *const c_char, arg: &str) -> Result<String> {
    ffi::non_null(p, arg)?;
    // SAFETY: non-null, NUL-terminated by contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `blockDim` in 1..=65535.
pub(crate) fn check_block_dim(block_dim: u32) -> Result<()> {
    if block_dim == 0 || block_dim > MAX_BLOCK_DIM {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "blockDim = {block_dim} is invalid: expected 1..={MAX_BLOCK_DIM} (the number of AI-core blocks that run the kernel)"
            ),
        ));
    }
    Ok(())
}

/// The regions of a launch on `entry`'s device: every non-null pointer argument `(name,
/// value)` must lie in a live device allocation of that device; each becomes the whole
/// allocation (one region per allocation, as several arguments may point into one).
pub(crate) fn regions_of(
    rt: &runtime::Runtime,
    entry: &runtime::StreamEntry,
    ptrs: &[(String, u64)],
) -> Result<Vec<Region>> {
    let mut regions: Vec<Region> = Vec::new();
    for (name, addr) in ptrs {
        let (name, addr) = (name.as_str(), *addr);
        if addr == 0 {
            continue;
        }
        let dev = entry.logical;
        if !is_canonical(addr) {
            let what = if rt.mem.host_lookup(addr as usize).is_some() {
                "host memory from aclrtMallocHost"
            } else {
                "a host address"
            };
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "argument {name} = 0x{addr:x} is {what}, not device memory: a kernel reads and writes device memory only; pass a buffer from aclrtMalloc on device {dev} (copy host data there with aclrtMemcpy)"
                ),
            ));
        }
        let Some(a) = rt.node.lookup(addr) else {
            return Err(match rt.node.phys(addr, 1, &format!("argument {name}")) {
                // Usable device memory that is no aclrtMalloc allocation: a mapped VMM range.
                Ok(_) => Error::new(
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    format!(
                        "argument {name} = 0x{addr:x} lies in a virtual range mapped with aclrtMapMem: npu-emu passes only aclrtMalloc allocations to kernels (not supported yet)"
                    ),
                ),
                // Say what the address is (freed memory, just past an allocation, …) rather
                // than how a one-byte range at it fails to resolve.
                Err(e) => Error::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "argument {name} = 0x{addr:x} is not a live device allocation of this process: {}",
                        rt.node.describe_addr(addr).unwrap_or(e.msg)
                    ),
                ),
            });
        };
        if a.device != entry.physical {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "argument {name} = 0x{addr:x} is memory of device {} (physical), but the kernel runs on {} of device {dev}: pass a buffer allocated on the stream's device",
                    a.device,
                    entry.stream.label()
                ),
            ));
        }
        if regions.iter().any(|r| r.dev_addr == a.addr) {
            continue;
        }
        let host = rt.node.check(a.addr, a.size, &format!("argument {name}"))? as *mut c_void;
        regions.push(Region {
            name: CString::new(name.replace('\0', " ")).unwrap_or_default(),
            dev_addr: a.addr,
            size: a.size,
            host,
        });
    }
    Ok(regions)
}

/// Queue `launch` on `entry`'s stream; a failure at execution is logged when it happens.
pub(crate) fn submit(entry: &runtime::StreamEntry, launch: Launch) -> Result<()> {
    let label = entry.stream.label().to_string();
    entry.stream.enqueue(Box::new(move || {
        let r = launch.execute();
        if let Err(e) = &r {
            runtime::log(
                LogLevel::Error,
                &format!("AI-core exception on {label}: {}", e.msg),
            );
        }
        r
    }))
}

/// Copy `args_size` bytes at `args` into a 16-byte aligned argument block.
pub(crate) unsafe fn copy_args(args: *const c_void, args_size: usize) -> Vec<u128> {
    let mut buf = vec![0u128; args_size.div_ceil(16)];
    if args_size > 0 {
        // SAFETY: args_size readable bytes at args (caller), buf holds at least as many.
        unsafe {
            std::ptr::copy_nonoverlapping(args as *const u8, buf.as_mut_ptr() as *mut u8, args_size)
        };
    }
    buf
}

#[allow(clippy::too_many_arguments)]
unsafe fn enqueue(
    kernel: &str,
    block_dim: u32,
    stream: *mut c_void,
    func: Option<npuemu_block_fn>,
    args: *const c_void,
    args_size: usize,
    ptr_args: *const npuemu_kernel_ptr_arg,
    n_ptr_args: usize,
) -> Result<()> {
    let func = func.ok_or_else(|| Error::invalid("the block function (fn) is NULL"))?;
    check_block_dim(block_dim)?;
    if args_size > 0 {
        ffi::non_null(args, "args")?;
    }
    if n_ptr_args > 0 {
        ffi::non_null(ptr_args, "ptr_args")?;
    }
    let rt = runtime::get()?;
    let entry = rt.stream_entry(stream, "stream")?;
    let mut ptrs = Vec::with_capacity(n_ptr_args);
    for i in 0..n_ptr_args {
        // SAFETY: n_ptr_args entries, checked non-null above.
        let pa = unsafe { *ptr_args.add(i) };
        let name = if pa.name.is_null() {
            format!("#{i}")
        } else {
            // SAFETY: NUL-terminated parameter name from the generated code.
            unsafe { CStr::from_ptr(pa.name) }
                .to_string_lossy()
                .into_owned()
        };
        ptrs.push((name, pa.value as u64));
    }
    let regions = regions_of(&rt, &entry, &ptrs)?;
    // SAFETY: args_size readable bytes at args (checked non-null when non-zero).
    let buf = unsafe { copy_args(args, args_size) };
    let launch = Launch {
        kernel: kernel.to_string(),
        block_dim,
        func,
        args: buf,
        regions,
        physical: entry.physical,
        tiling_key: 0,
        keep: None,
        deferred: None,
    };
    submit(&entry, launch)
}

/// `uint32_t npuemu_kernel_launch(const char *kernel_name, uint32_t block_dim, void *stream,
/// npuemu_block_fn fn, const void *args, size_t args_size, const npuemu_kernel_ptr_arg
/// *ptr_args, size_t n_ptr_args)`: enqueue a kernel launch (see the module doc). Returns an
/// `aclError`; a failure's message names `aclrtlaunch_<kernel>`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn npuemu_kernel_launch(
    kernel_name: *const c_char,
    block_dim: u32,
    stream: *mut c_void,
    func: Option<npuemu_block_fn>,
    args: *const c_void,
    args_size: usize,
    ptr_args: *const npuemu_kernel_ptr_arg,
    n_ptr_args: usize,
) -> u32 {
    crate::api::prof::count("npuemu_kernel_launch");
    let mut who = "npuemu_kernel_launch".to_string();
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
        // SAFETY: C strings and arrays from the generated launch function.
        let kernel = unsafe { c_str(kernel_name, "kernel_name") }?;
        who = format!("aclrtlaunch_{kernel}");
        unsafe {
            enqueue(
                &kernel, block_dim, stream, func, args, args_size, ptr_args, n_ptr_args,
            )
        }
    }));
    let code = match r {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            let msg = format!("{who}: {}", e.msg);
            ffi::record_error(&msg);
            LAST_LAUNCH_ERROR.with(|l| *l.borrow_mut() = Some(msg));
            e.code
        }
        Err(_) => {
            ffi::record_error(&format!(
                "{who}: internal error while enqueueing the launch"
            ));
            ACL_ERROR_INTERNAL_ERROR
        }
    };
    crate::api::errors::note_code(code);
    code as u32
}

/// `uint32_t npuemu_kernel_launch_null_arg(const char *kernel_name, const char *arg)`: called
/// by a generated `aclrtlaunch_<kernel>` when the host passed NULL for a struct (tiling)
/// argument, which the launch copies: records "aclrtlaunch_<kernel>: argument <arg> is NULL
/// ..." and returns `ACL_ERROR_INVALID_PARAM`.
#[no_mangle]
pub unsafe extern "C" fn npuemu_kernel_launch_null_arg(
    kernel_name: *const c_char,
    arg: *const c_char,
) -> u32 {
    let text = |p: *const c_char| {
        if p.is_null() {
            "?".to_string()
        } else {
            // SAFETY: NUL-terminated strings from the generated code.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let (k, a) = (text(kernel_name), text(arg));
    ffi::record_error(&format!(
        "aclrtlaunch_{k}: argument {a} is NULL: pass the address of the {a} struct in host memory (it is copied when the kernel is launched)"
    ));
    let code = npu_emu::codes::ACL_ERROR_INVALID_PARAM;
    crate::api::errors::note_code(code);
    code as u32
}

/// `void npuemu_kernel_launch_async_error(const char *kernel_name, uint32_t code, void
/// *stream)`: called by the code generated for `kernel<<<blockDim, l2ctrl, stream>>>(args)`
/// when its `aclrtlaunch_<kernel>` failed with `code`. A kernel call returns nothing: CANN's
/// compiler lowers it to `rtConfigureCall(blockDim, l2ctrl, stream)`, `rtSetupArgument`
/// and `rtLaunch` and drops their return codes, so a failure is only logged and recorded
/// for `aclGetRecentErrMsg` (done already by `npuemu_kernel_launch`). npu-emu also puts the
/// failure on the stream (when the stream handle itself is valid), so the stream's next
/// synchronize returns `code` with that message instead of succeeding as if the kernel had
/// run; CANN's synchronize would succeed with the kernel never run.
#[no_mangle]
pub unsafe extern "C" fn npuemu_kernel_launch_async_error(
    kernel_name: *const c_char,
    code: u32,
    stream: *mut c_void,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let kernel = if kernel_name.is_null() {
            "?".to_string()
        } else {
            // SAFETY: NUL-terminated kernel name from the generated code.
            unsafe { CStr::from_ptr(kernel_name) }
                .to_string_lossy()
                .into_owned()
        };
        let cause = LAST_LAUNCH_ERROR
            .with(|l| l.borrow_mut().take())
            .unwrap_or_else(|| format!("aclrtlaunch_{kernel} failed with error {code}"));
        let msg = format!(
            "{kernel}<<<...>>>: the kernel was not launched: {cause} (a kernel call returns no error code; reported at the stream's synchronize)"
        );
        let Ok(rt) = runtime::get() else { return };
        let Ok(entry) = rt.stream_entry(stream, "stream") else {
            // The stream itself was the problem: there is no stream to fail.
            return;
        };
        drop(rt);
        let code = code as i32;
        let _ = entry
            .stream
            .enqueue(Box::new(move || Err(Error::new(code, msg))));
    }));
}

/// `void npuemu_gemm_f32(uint32_t m, uint32_t n, uint32_t k, const float *a, uint32_t lda, const
/// float *b, uint32_t ldb, float *c, uint32_t ldc)`: the cube unit's `C += A × B` (row-major,
/// leading dimensions in elements) for `Mmad` and the `Matmul` API of the kernel headers
/// ([`npu_emu::cube::gemm_f32`]). Returns 0, or 1 when a pointer is NULL with a non-empty shape.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn npuemu_gemm_f32(
    m: u32,
    n: u32,
    k: u32,
    a: *const f32,
    lda: u32,
    b: *const f32,
    ldb: u32,
    c: *mut f32,
    ldc: u32,
) -> c_int {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    if m == 0 || n == 0 || k == 0 {
        return 0;
    }
    if a.is_null()
        || b.is_null()
        || c.is_null()
        || (lda as usize) < k
        || (ldb as usize) < n
        || (ldc as usize) < n
    {
        return 1;
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller (the kernel headers) passes matrices of these shapes and leading
        // dimensions; checked non-null above.
        let (a, b, c) = unsafe {
            (
                std::slice::from_raw_parts(a, (m - 1) * lda as usize + k),
                std::slice::from_raw_parts(b, (k - 1) * ldb as usize + n),
                std::slice::from_raw_parts_mut(c, (m - 1) * ldc as usize + n),
            )
        };
        npu_emu::cube::gemm_f32(m, n, k, a, lda as usize, b, ldb as usize, c, ldc as usize);
    }));
    if r.is_ok() {
        0
    } else {
        1
    }
}

/// `int npuemu_f16_to_f32(const uint16_t *src, float *dst, uint64_t n)`: `n` IEEE binary16 values
/// to float (exact), with the CPU's conversion instructions when it has them (the `half` crate
/// detects F16C at run time). For the kernel headers' staging copies of fp16 matrices (Matmul).
/// Returns 0, or 1 when a pointer is NULL with n > 0.
#[no_mangle]
pub unsafe extern "C" fn npuemu_f16_to_f32(src: *const u16, dst: *mut f32, n: u64) -> c_int {
    if n == 0 {
        return 0;
    }
    if src.is_null() || dst.is_null() {
        return 1;
    }
    use half::slice::HalfFloatSliceExt;
    // SAFETY: the caller passes n readable halves at src and n writable floats at dst, not
    // overlapping (the kernel headers' operand and staging buffers); checked non-null above.
    let (s, d) = unsafe {
        (
            std::slice::from_raw_parts(src as *const half::f16, n as usize),
            std::slice::from_raw_parts_mut(dst, n as usize),
        )
    };
    s.convert_to_f32_slice(d);
    0
}
