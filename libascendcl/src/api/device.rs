//! Devices: set/reset/get, count, run mode, synchronize, status, info and capability,
//! SoC name, UUID, TS device, peer access, stream priority range.
//!
//! Device info follows the platform file of the emulated SoC (abi.md §4.1; core counts from
//! `npu_emu::aicore::soc_cores`: Ascend910B1 has 24 AI cores, 24 cube cores, 48 vector
//! cores), 192 MiB L2, HBM as configured (`NPU_EMU_HBM_SIZE`, 64 GiB).
//! Bad device ids are `ACL_ERROR_RT_INVALID_DEVICEID` (107001), what `rtSetDevice` reports.
//! Unlike CANN (whose lower runtime opens devices lazily), every device function except
//! `aclrtSetDevice`, `aclrtGetDevice`, `aclrtGetDeviceCount`, `aclrtGetRunMode`,
//! `aclrtGetSocName` and `aclGetDeviceCapability` needs `aclInit` first and returns
//! `ACL_ERROR_UNINITIALIZE` (100001) otherwise. `aclrtGetDevice` before anything started the
//! runtime answers as CANN's does with no device set: `ACL_ERROR_RT_CONTEXT_NULL` (107002),
//! which torch_npu reads as "device 0, not initialised yet".

use crate::api::errors;
use crate::ffi::{self, out};
use crate::runtime::{self, timeout_ms};
use npu_emu::codes::*;
use npu_emu::config::Config;
use npu_emu::{Error, Result};
use std::ffi::{c_void, CString};
use std::os::raw::c_char;

/// Core counts of the emulated SoC (`NPU_EMU_SOC`): the platform file's `ai_core_cnt`,
/// `cube_core_cnt`, `vector_core_cnt` ([`npu_emu::aicore::soc_cores`], which also sizes the
/// AI-core pool that runs kernel blocks).
fn cores(cfg: &Config) -> npu_emu::aicore::SocCores {
    npu_emu::aicore::soc_cores(&cfg.soc_name)
}
/// AI CPU cores of `soc` (`ai_cpu_cnt` of CANN's platform configuration: 6 on the Ascend910B
/// and Ascend910_93 families); `None` where npu-emu does not know the figure.
fn aicpu_cores(soc: &str) -> Option<u32> {
    soc.starts_with("Ascend910").then_some(6)
}

/// `l2_size` of Ascend910B1 (192 MiB).
pub const L2_SIZE: i64 = 201326592;

/// Least and greatest stream priority (`aclrtCreateStreamWithConfig`: 0..7, 0 highest).
pub const LEAST_PRIORITY: i32 = 7;
pub const GREATEST_PRIORITY: i32 = 0;

fn cfg_any() -> Result<Config> {
    match runtime::try_get() {
        Some(rt) => Ok(rt.cfg.clone()),
        None => Config::from_env(),
    }
}

/// `aclError aclrtSetDevice(int32_t deviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetDevice(deviceId: i32) -> i32 {
    errors::boundary("aclrtSetDevice", || {
        runtime::get_or_start()?.set_device(deviceId)
    })
}

/// `aclError aclrtResetDevice(int32_t deviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetDevice(deviceId: i32) -> i32 {
    errors::boundary("aclrtResetDevice", || match runtime::get() {
        Ok(rt) => rt.reset_device(deviceId, false),
        Err(e) => runtime::reset_after_finalize(e, deviceId, false),
    })
}

/// `aclError aclrtResetDeviceForce(int32_t deviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetDeviceForce(deviceId: i32) -> i32 {
    errors::boundary("aclrtResetDeviceForce", || match runtime::get() {
        Ok(rt) => rt.reset_device(deviceId, true),
        Err(e) => runtime::reset_after_finalize(e, deviceId, true),
    })
}

/// `aclError aclrtGetDevice(int32_t *deviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDevice(deviceId: *mut i32) -> i32 {
    // Before anything started the runtime, "no device" is the expected answer torch_npu
    // asks for (its first GetDevice precedes aclInit): logged at INFO, not ERROR.
    let fresh = runtime::get().is_err()
        && !crate::globals::FORKED.load(std::sync::atomic::Ordering::Relaxed);
    let quiet: &[i32] = if fresh {
        &[ACL_ERROR_RT_CONTEXT_NULL]
    } else {
        &[]
    };
    errors::boundary_quiet("aclrtGetDevice", quiet, || {
        ffi::non_null(deviceId, "deviceId")?;
        // No current device: CANN returns the runtime's "context null" error (abi.md §1.3),
        // also before `aclInit` (its runtime needs none): nothing can have set a device yet.
        let rt = match runtime::get() {
            Err(e)
                if e.code == ACL_ERROR_UNINITIALIZE
                    && !crate::globals::FORKED.load(std::sync::atomic::Ordering::Relaxed) =>
            {
                return Err(Error::new(
                    ACL_ERROR_RT_CONTEXT_NULL,
                    "no device is set: neither aclrtSetDevice nor aclInit was called in this \
                     process",
                ))
            }
            r => r?,
        };
        let (logical, _) = rt.current_device()?;
        out(deviceId, "deviceId", logical)
    })
}

/// `aclError aclrtGetDeviceCount(uint32_t *count)` (works before `aclInit`, as in CANN).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> i32 {
    errors::boundary("aclrtGetDeviceCount", || {
        ffi::non_null(count, "count")?;
        out(count, "count", cfg_any()?.visible_count())
    })
}

/// `aclError aclrtGetRunMode(aclrtRunMode *runMode)`: always `ACL_HOST` (1).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetRunMode(runMode: *mut i32) -> i32 {
    errors::boundary("aclrtGetRunMode", || out(runMode, "runMode", 1))
}

/// `aclError aclrtSynchronizeDevice(void)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSynchronizeDevice() -> i32 {
    errors::boundary("aclrtSynchronizeDevice", || {
        runtime::get()?.synchronize_device(None)
    })
}

/// `aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> i32 {
    errors::boundary("aclrtSynchronizeDeviceWithTimeout", || {
        let t = timeout_ms(timeout)?;
        runtime::get()?.synchronize_device(t)
    })
}

/// `aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)`
#[no_mangle]
pub unsafe extern "C" fn aclrtQueryDeviceStatus(deviceId: i32, deviceStatus: *mut i32) -> i32 {
    errors::boundary("aclrtQueryDeviceStatus", || {
        ffi::non_null(deviceStatus, "deviceStatus")?;
        runtime::get()?.physical_device(deviceId)?;
        out(deviceStatus, "deviceStatus", 0) // ACL_RT_DEVICE_STATUS_NORMAL
    })
}

fn device_info(deviceId: u32, attr: i32) -> Result<i64> {
    let rt = runtime::get()?;
    let logical = i32::try_from(deviceId).unwrap_or(i32::MAX);
    let phys = rt.physical_device(logical)?;
    let unsupported = |name: &str| {
        Err(Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("attr = {attr} ({name}) is not reported by npu-emu"),
        ))
    };
    match attr {
        1 => aicpu_cores(&rt.cfg.soc_name).map_or_else(
            || unsupported("ACL_DEV_ATTR_AICPU_CORE_NUM"),
            |n| Ok(n as i64),
        ),
        101 => Ok(cores(&rt.cfg).ai_core as i64),
        102 => Ok(cores(&rt.cfg).cube_core as i64),
        201 => Ok(cores(&rt.cfg).vector_core as i64),
        202 => unsupported("ACL_DEV_ATTR_WARP_SIZE"),
        203 => unsupported("ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE"),
        204 => unsupported("ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE"),
        301 => Ok(rt.cfg.hbm_size as i64),
        302 => Ok(L2_SIZE),
        401 => Ok(0),
        402 => Ok(phys as i64),
        403 => unsupported("ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID"),
        404 => unsupported("ACL_DEV_ATTR_SUPER_POD_SERVER_ID"),
        405 => unsupported("ACL_DEV_ATTR_SUPER_POD_ID"),
        406 => unsupported("ACL_DEV_ATTR_CUST_OP_PRIVILEGE"),
        407 => unsupported("ACL_DEV_ATTR_MAINBOARD_ID"),
        501 => Ok(0),
        _ => Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("attr = {attr} is not an aclrtDevAttr value"),
        )),
    }
}

/// `aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceInfo(deviceId: u32, attr: i32, value: *mut i64) -> i32 {
    errors::boundary("aclrtGetDeviceInfo", || {
        ffi::non_null(value, "value")?;
        let v = device_info(deviceId, attr)?;
        out(value, "value", v)
    })
}

/// `aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclGetDeviceCapability(
    deviceId: u32,
    deviceInfo: i32,
    value: *mut i64,
) -> i32 {
    errors::boundary("aclGetDeviceCapability", || {
        ffi::non_null(value, "value")?;
        let cfg = cfg_any()?;
        if deviceId >= cfg.visible_count() {
            // CANN's aclGetDeviceCapabilityImpl checks the id itself: ACL_ERROR_INVALID_PARAM.
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "deviceId {deviceId} is out of range: this process sees {} devices",
                    cfg.visible_count()
                ),
            ));
        }
        let v = match deviceInfo {
            0 => cores(&cfg).ai_core as i64,
            1 => cores(&cfg).vector_core as i64,
            2 => L2_SIZE,
            _ => {
                return Err(Error::invalid(format!(
                    "deviceInfo = {deviceInfo} is invalid: expected ACL_DEVICE_INFO_AI_CORE_NUM (0), ACL_DEVICE_INFO_VECTOR_CORE_NUM (1) or ACL_DEVICE_INFO_L2_SIZE (2)"
                )))
            }
        };
        out(value, "value", v)
    })
}

/// `const char *aclrtGetSocName()`: never NULL (the configured SoC, default `Ascend910B1`).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    crate::globals::SOC_NAME
        .get_or_init(|| {
            let n = cfg_any()
                .map(|c| c.soc_name)
                .unwrap_or_else(|_| "Ascend910B1".to_string());
            CString::new(n.replace('\0', " ")).unwrap_or_default()
        })
        .as_ptr()
}

/// `aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)`: 16 stable bytes per
/// physical device (`"npu-emu\0"`, physical id, node device count).
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceGetUuid(deviceId: i32, uuid: *mut [u8; 16]) -> i32 {
    errors::boundary("aclrtDeviceGetUuid", || {
        ffi::non_null(uuid, "uuid")?;
        let rt = runtime::get()?;
        let phys = rt.physical_device(deviceId)?;
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(b"npu-emu\0");
        b[8..12].copy_from_slice(&phys.to_le_bytes());
        b[12..16].copy_from_slice(&rt.cfg.devices.to_le_bytes());
        out(uuid, "uuid", b)
    })
}

/// `aclError aclrtSetTsDevice(aclrtTsId tsId)`: accepts `ACL_TS_ID_AICORE` (0) and
/// `ACL_TS_ID_AIVECTOR` (1), as CANN; the emulator has one scheduler, so it changes nothing.
#[no_mangle]
pub unsafe extern "C" fn aclrtSetTsDevice(tsId: i32) -> i32 {
    errors::boundary("aclrtSetTsDevice", || {
        if tsId == 0 || tsId == 1 {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "tsId = {tsId} is invalid: expected ACL_TS_ID_AICORE (0) or ACL_TS_ID_AIVECTOR (1)"
            )))
        }
    })
}

fn check_pair(rt: &runtime::Runtime, dev: i32, peer: i32, what: &str) -> Result<()> {
    rt.physical_device(dev)?;
    rt.physical_device(peer)?;
    if dev == peer {
        return Err(Error::invalid(format!(
            "{what}: deviceId and peerDeviceId are both {dev}; they must be different devices"
        )));
    }
    Ok(())
}

/// `aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)`:
/// every pair of distinct devices on the node can (HCCS over shared memory).
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceCanAccessPeer(
    canAccessPeer: *mut i32,
    deviceId: i32,
    peerDeviceId: i32,
) -> i32 {
    errors::boundary("aclrtDeviceCanAccessPeer", || {
        ffi::non_null(canAccessPeer, "canAccessPeer")?;
        let rt = runtime::get()?;
        check_pair(&rt, deviceId, peerDeviceId, "peer access query")?;
        out(canAccessPeer, "canAccessPeer", 1)
    })
}

/// `aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)`: from the
/// current device; `flags` must be 0.
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> i32 {
    errors::boundary("aclrtDeviceEnablePeerAccess", || {
        // CANN checks the reserved flags first and answers ACL_ERROR_FEATURE_UNSUPPORTED.
        if flags != 0 {
            return Err(Error::new(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                format!("flags = {flags} is not supported: it is reserved and must be 0"),
            ));
        }
        let rt = runtime::get()?;
        let (cur, _) = rt.current_device()?;
        check_pair(&rt, cur, peerDeviceId, "the current device")?;
        rt.reg.lock().peers.insert((cur, peerDeviceId));
        Ok(())
    })
}

/// `aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) -> i32 {
    errors::boundary("aclrtDeviceDisablePeerAccess", || {
        let rt = runtime::get()?;
        let (cur, _) = rt.current_device()?;
        check_pair(&rt, cur, peerDeviceId, "the current device")?;
        if !rt.reg.lock().peers.remove(&(cur, peerDeviceId)) {
            return Err(Error::invalid(format!(
                "peer access from device {cur} to device {peerDeviceId} is not enabled (aclrtDeviceEnablePeerAccess)"
            )));
        }
        Ok(())
    })
}

/// `aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDevicePeerAccessStatus(
    deviceId: i32,
    peerDeviceId: i32,
    status: *mut i32,
) -> i32 {
    errors::boundary("aclrtDevicePeerAccessStatus", || {
        ffi::non_null(status, "status")?;
        let rt = runtime::get()?;
        check_pair(&rt, deviceId, peerDeviceId, "peer access status")?;
        let on = rt.reg.lock().peers.contains(&(deviceId, peerDeviceId));
        out(status, "status", on as i32)
    })
}

/// `aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceGetStreamPriorityRange(
    leastPriority: *mut i32,
    greatestPriority: *mut i32,
) -> i32 {
    errors::boundary("aclrtDeviceGetStreamPriorityRange", || {
        ffi::non_null(leastPriority, "leastPriority")?;
        ffi::non_null(greatestPriority, "greatestPriority")?;
        out(leastPriority, "leastPriority", LEAST_PRIORITY)?;
        out(greatestPriority, "greatestPriority", GREATEST_PRIORITY)
    })
}

/// `aclrtUtilizationInfo` (abi.md §1.6: 24 bytes).
#[repr(C)]
pub struct aclrtUtilizationInfo {
    pub cubeUtilization: i32,
    pub vectorUtilization: i32,
    pub aicpuUtilization: i32,
    pub memoryUtilization: i32,
    pub utilizationExtend: *mut c_void,
}

/// `aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo)`:
/// cube, vector and AI CPU utilization are 0 (npu-emu runs no kernels on them); memory
/// utilization is -1 ("not supported"), as CANN 8.5 reports it. `utilizationExtend` is
/// reserved and must be NULL (as CANN checks).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceUtilizationRate(
    deviceId: i32,
    utilizationInfo: *mut aclrtUtilizationInfo,
) -> i32 {
    errors::boundary("aclrtGetDeviceUtilizationRate", || {
        ffi::non_null(utilizationInfo, "utilizationInfo")?;
        // SAFETY: non-null, the caller's struct.
        let info = unsafe { &mut *utilizationInfo };
        if !info.utilizationExtend.is_null() {
            return Err(Error::invalid(
                "utilizationInfo->utilizationExtend is a reserved parameter and must be NULL",
            ));
        }
        runtime::get()?.physical_device(deviceId)?;
        info.cubeUtilization = 0;
        info.vectorUtilization = 0;
        info.aicpuUtilization = 0;
        info.memoryUtilization = -1;
        Ok(())
    })
}
