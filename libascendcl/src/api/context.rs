//! Contexts: create, destroy, set and get the calling thread's current context.
//!
//! `aclrtSetDevice` makes the device's default context current; `aclrtCreateContext` makes
//! the new context current (as CANN). The current context is per thread.

use crate::api::errors;
use crate::ffi::{self, out};
use crate::runtime::{self, set_current_handle};
use std::ffi::c_void;

/// `aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateContext(context: *mut *mut c_void, deviceId: i32) -> i32 {
    errors::boundary("aclrtCreateContext", || {
        ffi::non_null(context, "context")?;
        let h = runtime::get()?.create_context(deviceId)?;
        out(context, "context", h as *mut c_void)
    })
}

/// `aclError aclrtDestroyContext(aclrtContext context)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyContext(context: *mut c_void) -> i32 {
    errors::boundary("aclrtDestroyContext", || match runtime::get() {
        Ok(rt) => rt.destroy_context(context),
        Err(e) => runtime::handle_after_finalize(e, context as u64),
    })
}

/// `aclError aclrtSetCurrentContext(aclrtContext context)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetCurrentContext(context: *mut c_void) -> i32 {
    errors::boundary("aclrtSetCurrentContext", || {
        ffi::non_null(context, "context")?;
        // CANN: an invalid context is RT_ERROR_INVALID_VALUE -> ACL_ERROR_RT_PARAM_INVALID.
        let c = runtime::get()?
            .context(context, "context")
            .map_err(|e| npu_emu::Error::new(npu_emu::codes::ACL_ERROR_RT_PARAM_INVALID, e.msg))?;
        set_current_handle(c.handle);
        Ok(())
    })
}

/// `aclError aclrtGetCurrentContext(aclrtContext *context)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetCurrentContext(context: *mut *mut c_void) -> i32 {
    errors::boundary("aclrtGetCurrentContext", || {
        ffi::non_null(context, "context")?;
        let c = runtime::get()?.current_context()?;
        out(context, "context", c.handle as *mut c_void)
    })
}

/// `aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active)`:
/// `active` is 1 while the device's default context exists (between `aclrtSetDevice` and
/// the last `aclrtResetDevice`). `flags` is reserved and must be NULL, as CANN checks.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetPrimaryCtxState(
    deviceId: i32,
    flags: *mut u32,
    active: *mut i32,
) -> i32 {
    errors::boundary("aclrtGetPrimaryCtxState", || {
        ffi::non_null(active, "active")?;
        if !flags.is_null() {
            return Err(npu_emu::Error::invalid(
                "flags is a reserved parameter and must be NULL",
            ));
        }
        let rt = runtime::get()?;
        rt.physical_device(deviceId)?;
        let on = rt.reg.lock().default_ctx.contains_key(&deviceId);
        out(active, "active", on as i32)
    })
}

/// `ACL_ERROR_RT_SYSPARAMOPT_NOT_SET` (abi.md §1.5 B).
pub const ACL_ERROR_RT_SYSPARAMOPT_NOT_SET: i32 = 107021;

/// The name of an `aclSysParamOpt`, or `ACL_ERROR_INVALID_PARAM` naming the bad value.
pub fn opt_name(opt: i32) -> npu_emu::Result<&'static str> {
    match opt {
        0 => Ok("ACL_OPT_DETERMINISTIC"),
        1 => Ok("ACL_OPT_ENABLE_DEBUG_KERNEL"),
        2 => Ok("ACL_OPT_STRONG_CONSISTENCY"),
        _ => Err(npu_emu::Error::invalid(format!(
            "opt = {opt} is invalid: expected ACL_OPT_DETERMINISTIC (0), ACL_OPT_ENABLE_DEBUG_KERNEL (1) or ACL_OPT_STRONG_CONSISTENCY (2)"
        ))),
    }
}

fn not_set(opt: i32, scope: &str) -> npu_emu::Error {
    npu_emu::Error::new(
        ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
        format!(
            "{} is not set in {scope}",
            opt_name(opt).unwrap_or("the option")
        ),
    )
}

/// `aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)`: kept per context
/// and reported by `aclrtCtxGetSysParamOpt`. (npu-emu runs no AI Core kernels; its
/// collective reductions are deterministic whatever `ACL_OPT_DETERMINISTIC` says.)
#[no_mangle]
pub unsafe extern "C" fn aclrtCtxSetSysParamOpt(opt: i32, value: i64) -> i32 {
    errors::boundary("aclrtCtxSetSysParamOpt", || {
        opt_name(opt)?;
        let c = runtime::get()?.current_context()?;
        c.params.lock().insert(opt, value);
        Ok(())
    })
}

/// `aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)`:
/// `ACL_ERROR_RT_SYSPARAMOPT_NOT_SET` if never set in the current context.
#[no_mangle]
pub unsafe extern "C" fn aclrtCtxGetSysParamOpt(opt: i32, value: *mut i64) -> i32 {
    errors::boundary("aclrtCtxGetSysParamOpt", || {
        ffi::non_null(value, "value")?;
        opt_name(opt)?;
        let c = runtime::get()?.current_context()?;
        let v = c.params.lock().get(&opt).copied();
        out(
            value,
            "value",
            v.ok_or_else(|| not_set(opt, "the current context"))?,
        )
    })
}
