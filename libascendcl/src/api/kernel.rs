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
//! At execution (in stream order, on the stream's worker; the machine's
//! [`npu_emu::kernels::launch::Launch`]): the regions are checked again
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
use crate::globals::{AICORE_POOLS, LAST_LAUNCH_ERROR};
use crate::runtime;
use npu_emu::aicore::{soc_cores, AiCorePool, MAX_BLOCK_DIM};
use npu_emu::codes::{
    ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID,
};
use npu_emu::config::LogLevel;
use npu_emu::kernels::launch::{device_memory, Launch, Region};
pub use npu_emu::kernels::launch::{
    npuemu_block_fn, npuemu_block_info, npuemu_gm_region, npuemu_mem_range,
};
use npu_emu::memory::is_canonical;
use npu_emu::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// `npuemu_kernel_ptr_arg`: a pointer argument of a launch, by parameter name.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct npuemu_kernel_ptr_arg {
    pub name: *const c_char,
    pub value: *const c_void,
}

/// The pool of `physical`, with `cores` (the emulated SoC's, [`npu_emu::aicore::SocCores::launch_cores`]:
/// the most blocks that run at once) when it is made.
fn pool(physical: u32, cores: u32) -> Arc<AiCorePool> {
    let mut map = AICORE_POOLS.lock();
    match map.get(&physical) {
        Some(p) if p.is_usable() && p.cores() == cores => p.clone(),
        _ => {
            let p = Arc::new(AiCorePool::new(&format!("device {physical}"), cores));
            map.insert(physical, p.clone());
            p
        }
    }
}

/// Run `launch` on the AI cores of physical device `physical` (on the stream's worker).
pub(crate) fn execute(launch: &Launch, physical: u32) -> Result<()> {
    let rt = runtime::get()?;
    launch.check(&rt.node)?;
    let cores = soc_cores(&rt.cfg.soc_name).launch_cores();
    let devmem = device_memory(&rt.node);
    drop(rt);
    let start = std::time::Instant::now();
    launch.run(&pool(physical, cores), devmem)?;
    // aclrtSetOpExecuteTimeOut*: a kernel that ran too long fails its stream.
    crate::api::sys_param::check_op_timeout(launch.kernel(), start.elapsed())
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
        if regions.iter().any(|r| r.dev_addr() == a.addr) {
            continue;
        }
        let host = rt.node.check(a.addr, a.size, &format!("argument {name}"))?;
        regions.push(Region::new(name, a.addr, a.size, host));
    }
    Ok(regions)
}

/// Queue `launch` on `entry`'s stream; a failure at execution is logged when it happens.
pub(crate) fn submit(entry: &runtime::StreamEntry, launch: Launch) -> Result<()> {
    let physical = entry.physical;
    let what = format!("{}<<<{}>>>", launch.kernel(), launch.block_dim());
    submit_task(entry, what, move || execute(&launch, physical))
}

/// Queue `task` (a launch run when the stream gets to it) on `entry`'s stream; its failure is
/// logged when it happens.
pub(crate) fn submit_task(
    entry: &runtime::StreamEntry,
    what: String,
    task: impl Fn() -> Result<()> + Send + Sync + 'static,
) -> Result<()> {
    let label = entry.stream.label().to_string();
    // An operation, so a capture (aclmdlRICaptureBegin) can hold it and run it again.
    entry
        .stream
        .enqueue_op(npu_emu::stream::Op::run("kernel", what, move || {
            let r = task();
            if let Err(e) = &r {
                runtime::log(
                    LogLevel::Error,
                    &format!("AI-core exception on {label}: {}", e.msg),
                );
            }
            r
        }))
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
    let args: &[u8] = if args_size > 0 {
        // SAFETY: args_size readable bytes at args (non-null) by the launch contract.
        unsafe { std::slice::from_raw_parts(args as *const u8, args_size) }
    } else {
        &[]
    };
    submit(&entry, Launch::new(kernel, block_dim, func, args, regions))
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
        // SAFETY: as above: the generated launch function passes its arguments as `enqueue` documents.
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

/// `int npuemu_gemm_f32(uint32_t m, uint32_t n, uint32_t k, const float *a, uint32_t lda, const
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
/// detects F16C at run time; [`npu_emu::cube::f16_to_f32`]). For the kernel headers' staging copies of fp16 matrices (Matmul).
/// Returns 0, or 1 when a pointer is NULL with n > 0.
#[no_mangle]
pub unsafe extern "C" fn npuemu_f16_to_f32(src: *const u16, dst: *mut f32, n: u64) -> c_int {
    if n == 0 {
        return 0;
    }
    if src.is_null() || dst.is_null() {
        return 1;
    }
    // SAFETY: the caller passes n readable halves at src and n writable floats at dst, not
    // overlapping (the kernel headers' operand and staging buffers); checked non-null above.
    let (s, d) = unsafe {
        (
            std::slice::from_raw_parts(src, n as usize),
            std::slice::from_raw_parts_mut(dst, n as usize),
        )
    };
    npu_emu::cube::f16_to_f32(s, d);
    0
}
