//! Process-wide runtime settings and capability queries that frameworks read at device init
//! (torch_npu stops on each of them when it is missing, see `reference/torch_npu.md` §3):
//!
//! - `aclrtSetSysParamOpt` / `aclrtGetSysParamOpt`: runtime parameters of the process. An
//!   unset parameter reads as its documented default 0 ("如果不调用aclrtSetSysParamOpt接口设置
//!   运行时参数的值，直接调用本接口可获取各参数的默认值0"); the per-context variants in
//!   `context.rs` have no default and fail with `ACL_ERROR_RT_SYSPARAMOPT_NOT_SET`.
//! - `aclGetCannAttribute` / `aclGetCannAttributeList`: what this CANN supports on the SoC
//!   (`ACL_CANN_ATTR_INF_NAN`, `ACL_CANN_ATTR_BF16`, `ACL_CANN_ATTR_JIT_COMPILE`).
//! - Operator execution timeouts: `aclrtSetOpExecuteTimeOut` (s), `...V2` (µs, returns the
//!   effective value), `aclrtGetOpExecuteTimeout` (ms), `aclrtGetOpTimeOutInterval` (µs).
//!   `aclrtSetOpExecuteTimeOutWithMs` is not supported on Atlas A2/A3 (CANN's
//!   `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`). A kernel launch that runs longer than the timeout
//!   fails its stream with `ACL_ERROR_RT_AICORE_TIMEOUT` ([`check_op_timeout`]; the emulator
//!   cannot preempt a CPU kernel, so the check happens when the kernel returns).
//! - `aclrtSetDeviceSatMode` / `aclrtGetDeviceSatMode`: the float overflow mode.
//! - `aclmdlRICaptureGetInfo`: the capture state of a stream.
//!
//! The settings are the process's (`runtime::SETTINGS`): they work before `aclInit`, like
//! CANN's runtime singletons.

use crate::api::errors;
use crate::ffi::{self, out};
use crate::runtime;
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::time::Duration;

/// `aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)`: process-wide.
#[no_mangle]
pub unsafe extern "C" fn aclrtSetSysParamOpt(opt: i32, value: i64) -> i32 {
    errors::boundary("aclrtSetSysParamOpt", || {
        crate::api::context::opt_name(opt)?;
        runtime::with_settings(|s| s.sys_params.insert(opt, value));
        Ok(())
    })
}

/// `aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)`: the value set by
/// `aclrtSetSysParamOpt`, or the documented default 0.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetSysParamOpt(opt: i32, value: *mut i64) -> i32 {
    errors::boundary("aclrtGetSysParamOpt", || {
        ffi::non_null(value, "value")?;
        crate::api::context::opt_name(opt)?;
        let v = runtime::with_settings(|s| s.sys_params.get(&opt).copied().unwrap_or(0));
        out(value, "value", v)
    })
}

// ---------------------------------------------------------------------------------------
// CANN attributes

/// `aclCannAttr` values (abi.md Appendix A).
const ACL_CANN_ATTR_INF_NAN: i32 = 0;
const ACL_CANN_ATTR_BF16: i32 = 1;
const ACL_CANN_ATTR_JIT_COMPILE: i32 = 2;

/// The SoC this process runs on: the runtime's once `aclInit` ran, else the configuration.
pub fn soc_name() -> String {
    if let Some(rt) = runtime::try_get() {
        return rt.cfg.soc_name.clone();
    }
    npu_emu::config::Config::from_env()
        .map(|c| c.soc_name)
        .unwrap_or_else(|_| "Ascend910B1".to_string())
}

/// Whether the SoC computes in INF/NaN mode and has bf16: the Atlas A2/A3 generations
/// (Ascend910B*, Ascend910_93*) and later (Ascend950*); not Ascend910A/310P.
fn soc_has_inf_nan_and_bf16(soc: &str) -> bool {
    soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93") || soc.starts_with("Ascend950")
}

/// `(attribute, available)` for every `aclCannAttr` of this install. JIT compilation is
/// not available: npu-emu has no online operator compiler (aclop models are not built).
fn cann_attrs() -> [(i32, bool); 3] {
    let soc = soc_name();
    let modern = soc_has_inf_nan_and_bf16(&soc);
    [
        (ACL_CANN_ATTR_INF_NAN, modern),
        (ACL_CANN_ATTR_BF16, modern),
        (ACL_CANN_ATTR_JIT_COMPILE, false),
    ]
}

/// `aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)`: 1 if this CANN
/// supports the attribute on the current SoC, else 0.
#[no_mangle]
pub unsafe extern "C" fn aclGetCannAttribute(cannAttr: i32, value: *mut i32) -> i32 {
    errors::boundary("aclGetCannAttribute", || {
        ffi::non_null(value, "value")?;
        let v = cann_attrs()
            .into_iter()
            .find(|(a, _)| *a == cannAttr)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "cannAttr = {cannAttr} is invalid: expected ACL_CANN_ATTR_INF_NAN (0), ACL_CANN_ATTR_BF16 (1) or ACL_CANN_ATTR_JIT_COMPILE (2)"
                ))
            })?;
        out(value, "value", v.1 as i32)
    })
}

/// The attribute arrays handed out by `aclGetCannAttributeList`: one static array per
/// possible availability pattern, so the pointer stays valid for the life of the process.
static ATTRS_ALL: [i32; 3] = [
    ACL_CANN_ATTR_INF_NAN,
    ACL_CANN_ATTR_BF16,
    ACL_CANN_ATTR_JIT_COMPILE,
];
static ATTRS_MODERN: [i32; 2] = [ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16];

/// `aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)`: the
/// attributes available here (a static array owned by the library).
#[no_mangle]
pub unsafe extern "C" fn aclGetCannAttributeList(
    cannAttrList: *mut *const i32,
    num: *mut usize,
) -> i32 {
    errors::boundary("aclGetCannAttributeList", || {
        ffi::non_null(cannAttrList, "cannAttrList")?;
        ffi::non_null(num, "num")?;
        let avail: Vec<i32> = cann_attrs()
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(a, _)| a)
            .collect();
        let list: &'static [i32] = if avail.len() == 3 {
            &ATTRS_ALL
        } else if avail.len() == 2 {
            &ATTRS_MODERN
        } else {
            &ATTRS_ALL[..0]
        };
        debug_assert_eq!(list, avail.as_slice());
        out(cannAttrList, "cannAttrList", list.as_ptr())?;
        out(num, "num", list.len())
    })
}

// ---------------------------------------------------------------------------------------
// Operator execution timeouts

/// Granularity of operator execution timeouts (`aclrtGetOpTimeOutInterval`), µs: a set
/// timeout is rounded up to a multiple of it. Below 100000 µs, so a timeout of 0 means
/// "never" on Atlas A2/A3 (CANN: "当...获取的时间间隔小于100000微秒，并且将timeout参数值设置为0时，
/// 表示AI Core算子将永不超时").
pub const OP_TIMEOUT_INTERVAL_US: u64 = 1000;

fn round_up_us(us: u64) -> u64 {
    us.div_ceil(OP_TIMEOUT_INTERVAL_US)
        .saturating_mul(OP_TIMEOUT_INTERVAL_US)
}

/// The operator execution timeout in force (`None` = operators never time out, the
/// default).
pub fn op_execute_timeout() -> Option<Duration> {
    runtime::with_settings(|s| s.op_execute_timeout_us).map(Duration::from_micros)
}

/// Called by a kernel launch when it returns after running for `elapsed`: past the
/// operator execution timeout, the launch fails with `ACL_ERROR_RT_AICORE_TIMEOUT`.
pub fn check_op_timeout(kernel: &str, elapsed: Duration) -> Result<()> {
    match op_execute_timeout() {
        Some(t) if elapsed > t => Err(Error::new(
            ACL_ERROR_RT_AICORE_TIMEOUT,
            format!(
                "kernel {kernel} ran for {:.3} ms, longer than the operator execution timeout of {:.3} ms (aclrtSetOpExecuteTimeOut*)",
                elapsed.as_secs_f64() * 1e3,
                t.as_secs_f64() * 1e3
            ),
        )),
        _ => Ok(()),
    }
}

/// `aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)`: seconds; 0 restores the default
/// (operators never time out).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetOpExecuteTimeOut(timeout: u32) -> i32 {
    errors::boundary("aclrtSetOpExecuteTimeOut", || {
        let t = (timeout != 0).then(|| round_up_us(timeout as u64 * 1_000_000));
        runtime::with_settings(|s| s.op_execute_timeout_us = t);
        Ok(())
    })
}

/// `aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)`: µs,
/// rounded up to a multiple of [`OP_TIMEOUT_INTERVAL_US`]; 0 means the maximum, which on
/// this SoC is "never" (`*actualTimeout` = UINT64_MAX).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetOpExecuteTimeOutV2(timeout: u64, actualTimeout: *mut u64) -> i32 {
    errors::boundary("aclrtSetOpExecuteTimeOutV2", || {
        ffi::non_null(actualTimeout, "actualTimeout")?;
        let t = (timeout != 0).then(|| round_up_us(timeout));
        runtime::with_settings(|s| s.op_execute_timeout_us = t);
        out(actualTimeout, "actualTimeout", t.unwrap_or(u64::MAX))
    })
}

/// `aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout)`: not supported on the Atlas
/// A2/A3 SoCs npu-emu emulates (CANN's product table marks it ☓ for every current product).
#[no_mangle]
pub unsafe extern "C" fn aclrtSetOpExecuteTimeOutWithMs(timeout: u32) -> i32 {
    errors::boundary("aclrtSetOpExecuteTimeOutWithMs", || {
        Err(Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "timeout = {timeout} ms: aclrtSetOpExecuteTimeOutWithMs is not supported on {}; use aclrtSetOpExecuteTimeOutV2 (microseconds)",
                soc_name()
            ),
        ))
    })
}

/// `aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs)`: the timeout in force, in
/// milliseconds (rounded up); UINT32_MAX when operators never time out (the default).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetOpExecuteTimeout(timeoutMs: *mut u32) -> i32 {
    errors::boundary("aclrtGetOpExecuteTimeout", || {
        ffi::non_null(timeoutMs, "timeoutMs")?;
        let ms = match runtime::with_settings(|s| s.op_execute_timeout_us) {
            None => u32::MAX,
            Some(us) => us.div_ceil(1000).min(u32::MAX as u64) as u32,
        };
        out(timeoutMs, "timeoutMs", ms)
    })
}

/// `aclError aclrtGetOpTimeOutInterval(uint64_t *interval)`: [`OP_TIMEOUT_INTERVAL_US`].
#[no_mangle]
pub unsafe extern "C" fn aclrtGetOpTimeOutInterval(interval: *mut u64) -> i32 {
    errors::boundary("aclrtGetOpTimeOutInterval", || {
        out(interval, "interval", OP_TIMEOUT_INTERVAL_US)
    })
}

// ---------------------------------------------------------------------------------------
// Saturation mode

/// `aclrtFloatOverflowMode` values.
const ACL_RT_OVERFLOW_MODE_SATURATION: i32 = 0;
const ACL_RT_OVERFLOW_MODE_INFNAN: i32 = 1;

/// The process's mode: the one set by `aclrtSetDeviceSatMode`, else the SoC's default.
pub fn current_sat_mode() -> i32 {
    runtime::with_settings(|s| s.sat_mode).unwrap_or_else(default_sat_mode)
}

fn default_sat_mode() -> i32 {
    if soc_has_inf_nan_and_bf16(&soc_name()) {
        ACL_RT_OVERFLOW_MODE_INFNAN
    } else {
        ACL_RT_OVERFLOW_MODE_SATURATION
    }
}

/// `aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)`: saturation or INF/NaN
/// mode for the process's float computations. `ACL_RT_OVERFLOW_MODE_UNDEF` and unknown
/// values are `ACL_ERROR_INVALID_PARAM`; INF/NaN mode on a SoC without it (Ascend910A,
/// Ascend310P) is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
#[no_mangle]
pub unsafe extern "C" fn aclrtSetDeviceSatMode(mode: i32) -> i32 {
    errors::boundary("aclrtSetDeviceSatMode", || {
        match mode {
            ACL_RT_OVERFLOW_MODE_SATURATION => {}
            ACL_RT_OVERFLOW_MODE_INFNAN => {
                let soc = soc_name();
                if !soc_has_inf_nan_and_bf16(&soc) {
                    return Err(Error::new(
                        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        format!("mode = ACL_RT_OVERFLOW_MODE_INFNAN (1) is not supported on {soc}"),
                    ));
                }
            }
            // CANN 8.5 checks the range in the runtime (SetDeviceSatMode: RT_ERROR_INVALID_VALUE).
            _ => {
                return Err(Error::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("mode = {mode} is invalid: expected ACL_RT_OVERFLOW_MODE_SATURATION (0) or ACL_RT_OVERFLOW_MODE_INFNAN (1)"),
                ))
            }
        }
        runtime::with_settings(|s| s.sat_mode = Some(mode));
        Ok(())
    })
}

/// `aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode)`: the mode set, or the
/// SoC's default (INF/NaN on Atlas A2/A3 and later, saturation before).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceSatMode(mode: *mut i32) -> i32 {
    errors::boundary("aclrtGetDeviceSatMode", || {
        ffi::non_null(mode, "mode")?;
        let m = runtime::with_settings(|s| s.sat_mode).unwrap_or_else(default_sat_mode);
        out(mode, "mode", m)
    })
}

// ---------------------------------------------------------------------------------------
// Stream capture

/// `aclmdlRICaptureStatus` values.
pub const ACL_MODEL_RI_CAPTURE_STATUS_NONE: i32 = 0;

/// The capture state of a stream: `(aclmdlRICaptureStatus, aclmdlRI being built)`, from
/// the stream captures of `api/mdlri.rs` (ACTIVE while capturing, INVALIDATED after a
/// capture broke).
pub fn stream_capture_info(entry: &runtime::StreamEntry) -> (i32, *mut c_void) {
    match runtime::get() {
        Ok(rt) => crate::api::mdlri::capture_info_of(&rt, entry.handle),
        Err(_) => (ACL_MODEL_RI_CAPTURE_STATUS_NONE, std::ptr::null_mut()),
    }
}

/// `aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
/// aclmdlRI *modelRI)`: whether `stream` (NULL = the current context's default stream) is
/// being captured, and into which model. Either output may be NULL, not both.
#[no_mangle]
pub unsafe extern "C" fn aclmdlRICaptureGetInfo(
    stream: *mut c_void,
    status: *mut i32,
    modelRI: *mut *mut c_void,
) -> i32 {
    errors::boundary("aclmdlRICaptureGetInfo", || {
        if status.is_null() && modelRI.is_null() {
            return Err(Error::invalid(
                "status and modelRI are both NULL: at least one output is required",
            ));
        }
        let rt = runtime::get()?;
        let entry = rt.stream_entry(stream, "stream")?;
        let (st, model) = stream_capture_info(&entry);
        if !status.is_null() {
            out(status, "status", st)?;
        }
        if !modelRI.is_null() {
            out(modelRI, "modelRI", model)?;
        }
        Ok(())
    })
}
