//! Symbols of CANN's `libruntime.so` and `libprofapi.so` that frameworks link directly.
//!
//! `libtorch_npu.so` is linked with BIND_NOW and imports these ten functions, so they must
//! exist for it to load at all; eager PyTorch never calls them (they serve torch_npu's
//! inductor/MLIR kernels and its profiler). Real CANN's `libascendcl.so` depends on
//! `libruntime.so` and `libprofapi.so`, which export them; npu-emu exports them from
//! `libascendcl.so` itself (the same load, one library fewer).
//!
//! - `rtDevBinaryRegister`, `rtFunctionRegister`, `rtKernelLaunch` (and
//!   `rtDevBinaryUnRegister`) are the older launch path of registered kernel binaries: the
//!   binary is npu-emu's (`ascendc_fatbin_library`, given as bytes), a stub address stands for
//!   one of its kernels, and a launch takes the argument block from host memory, in stream
//!   order (`api/kernel_bin.rs`). A device object of CANN's compiler is refused with
//!   `ACL_ERROR_INVALID_FILE` saying so.
//! - `rtGetC2cCtrlAddr` returns `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000, the code CANN's
//!   runtime returns for a feature the device lacks): the emulated SoC has no chip-to-chip
//!   control space.
//! - `MsprofReportApi`, `MsprofReportCompactInfo`, `MsprofReportAdditionalInfo` and
//!   `MsprofRegisterCallback` return `MSPROF_ERROR_UNINITIALIZE` (6): npu-emu has no msprof
//!   collector to report to or to drive a callback (`aclprof*` is the profiling it has).
//! - `MsprofSysCycleTime` and `MsprofGetHashId` compute what they are asked for: a monotonic
//!   timestamp (ns) and a stable 64-bit id of a string.
//!
//! Each failing function records a message for `aclGetRecentErrMsg` and logs a warning the
//! first time it is called.

use crate::api::{errors, kernel_bin};
use crate::globals::MSPROF_LOGGED;
use npu_emu::codes::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
use npu_emu::config::LogLevel;
use npu_emu::Error;
use std::ffi::c_void;
use std::os::raw::c_char;

/// `MsprofErrorCode::MSPROF_ERROR_UNINITIALIZE` of CANN's `aprof_pub.h`.
pub const MSPROF_ERROR_UNINITIALIZE: i32 = 6;

fn rt_not_supported(name: &'static str, why: &str) -> i32 {
    errors::boundary(name, || {
        Err(Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("not supported by npu-emu: {why}"),
        ))
    })
}

fn msprof_uninitialized(name: &'static str) -> i32 {
    let msg = format!(
        "{name}: no msprof collector in npu-emu (use aclprofInit/aclprofStart); returns MSPROF_ERROR_UNINITIALIZE ({MSPROF_ERROR_UNINITIALIZE})"
    );
    crate::ffi::set_recent(&msg);
    if MSPROF_LOGGED.lock().insert(name) {
        crate::runtime::log(LogLevel::Warning, &msg);
    }
    MSPROF_ERROR_UNINITIALIZE
}

/// `rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len)`
#[no_mangle]
pub unsafe extern "C" fn rtGetC2cCtrlAddr(_addr: *mut u64, _len: *mut u32) -> i32 {
    rt_not_supported(
        "rtGetC2cCtrlAddr",
        "the emulated SoC has no chip-to-chip control address space",
    )
}

/// `rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t
/// argsSize, rtSmDesc_t *smDesc, rtStream_t stream)`: the kernel bound to `stubFunc`
/// (`rtFunctionRegister`), its argument block in host memory (copied now), in stream order
/// ([`kernel_bin::rt_kernel_launch`]).
#[no_mangle]
pub unsafe extern "C" fn rtKernelLaunch(
    stubFunc: *const c_void,
    blockDim: u32,
    args: *mut c_void,
    argsSize: u32,
    smDesc: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    errors::boundary("rtKernelLaunch", || unsafe {
        // SAFETY: the caller's pointers, as rtKernelLaunch documents them.
        kernel_bin::rt_kernel_launch(stubFunc, blockDim, args, argsSize, smDesc, stream)
    })
}

/// `rtError_t rtDevBinaryRegister(const rtDevBinary_t *bin, void **handle)`: a kernel binary
/// of npu-emu (`ascendc_fatbin_library` output) given as bytes ([`kernel_bin::rt_dev_binary_register`]).
#[no_mangle]
pub unsafe extern "C" fn rtDevBinaryRegister(bin: *const c_void, handle: *mut *mut c_void) -> i32 {
    errors::boundary("rtDevBinaryRegister", || unsafe {
        // SAFETY: the caller's rtDevBinary_t and handle pointer.
        kernel_bin::rt_dev_binary_register(bin, handle)
    })
}

/// `rtError_t rtDevBinaryUnRegister(void *handle)`: the binary and the stubs bound to it go.
#[no_mangle]
pub unsafe extern "C" fn rtDevBinaryUnRegister(handle: *mut c_void) -> i32 {
    errors::boundary("rtDevBinaryUnRegister", || {
        kernel_bin::rt_dev_binary_unregister(handle)
    })
}

/// `rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName,
/// const void *devFunc, uint32_t funcMode)`: `stubFunc` stands for the kernel named by
/// `devFunc` (or `stubName`) ([`kernel_bin::rt_function_register`]).
#[no_mangle]
pub unsafe extern "C" fn rtFunctionRegister(
    binHandle: *mut c_void,
    stubFunc: *const c_void,
    stubName: *const c_char,
    devFunc: *const c_void,
    funcMode: u32,
) -> i32 {
    errors::boundary("rtFunctionRegister", || unsafe {
        // SAFETY: the caller's handle and NUL-terminated names.
        kernel_bin::rt_function_register(binHandle, stubFunc, stubName, devFunc, funcMode)
    })
}

/// `int32_t MsprofRegisterCallback(uint32_t moduleId, ProfCommandHandle handle)`
#[no_mangle]
pub unsafe extern "C" fn MsprofRegisterCallback(_moduleId: u32, _handle: *const c_void) -> i32 {
    msprof_uninitialized("MsprofRegisterCallback")
}

/// `int32_t MsprofReportApi(uint32_t nonPersistantFlag, const struct MsprofApi *api)`
#[no_mangle]
pub unsafe extern "C" fn MsprofReportApi(_nonPersistantFlag: u32, _api: *const c_void) -> i32 {
    msprof_uninitialized("MsprofReportApi")
}

/// `int32_t MsprofReportCompactInfo(uint32_t nonPersistantFlag, const VOID_PTR data,
/// uint32_t length)`
#[no_mangle]
pub unsafe extern "C" fn MsprofReportCompactInfo(
    _nonPersistantFlag: u32,
    _data: *const c_void,
    _length: u32,
) -> i32 {
    msprof_uninitialized("MsprofReportCompactInfo")
}

/// `int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const VOID_PTR data,
/// uint32_t length)`
#[no_mangle]
pub unsafe extern "C" fn MsprofReportAdditionalInfo(
    _nonPersistantFlag: u32,
    _data: *const c_void,
    _length: u32,
) -> i32 {
    msprof_uninitialized("MsprofReportAdditionalInfo")
}

/// `uint64_t MsprofGetHashId(const char *hashInfo, size_t length)`: a stable 64-bit id of
/// the `length` bytes at `hashInfo` (FNV-1a; the same string always gets the same id, in
/// every process). NULL gives 0.
#[no_mangle]
pub unsafe extern "C" fn MsprofGetHashId(hashInfo: *const c_char, length: usize) -> u64 {
    if hashInfo.is_null() {
        return 0;
    }
    // SAFETY: the caller passes `length` readable bytes at `hashInfo` (the profapi contract).
    let bytes = unsafe { std::slice::from_raw_parts(hashInfo as *const u8, length) };
    // FNV-1a, written out: eight lines, and a crate would add a dependency for it.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `uint64_t MsprofSysCycleTime(void)`: the monotonic clock in nanoseconds (the profiler's
/// timestamps; on hardware a cycle counter).
#[no_mangle]
pub unsafe extern "C" fn MsprofSysCycleTime() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_MONOTONIC_RAW always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
