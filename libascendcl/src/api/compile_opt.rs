//! Operator compile options of `acl/acl_op_compiler.h`: `aclSetCompileopt`,
//! `aclGetCompileoptSize`, `aclGetCompileopt`, `aclopSetCompileFlag`; and
//! `aclopSetMaxOpQueueNum` of `acl/acl_op.h`.
//!
//! CANN's documentation: `aclGetCompileopt` returns an option's default value before
//! `aclSetCompileopt` and the value set after it; `aclGetCompileoptSize` is the size of the
//! buffer that holds the value (here: its length plus the terminating NUL). Options with a
//! documented default ([`default_value`]) always have a value; the others have one once set
//! (until then their size is 0 and `aclGetCompileopt` fails with `ACL_ERROR_INVALID_PARAM`
//! naming the option). `ACL_AUTO_TUNE_MODE` is refused with `ACL_ERROR_FEATURE_UNSUPPORTED`
//! as in CANN ("The Auto Tune function has been discarded").
//!
//! npu-emu compiles no aclop models, so the options change nothing it computes; they are
//! kept, validated and reported exactly as set. The values are the process's
//! (`globals::SETTINGS`) and work before `aclInit`, as CANN's op-compiler options do.

use crate::api::errors;
use crate::ffi::{self, boundary_value};
use crate::runtime;
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use std::ffi::CStr;
use std::os::raw::c_char;

/// `aclCompileOpt` names, by value (abi.md Appendix A).
const NAMES: [&str; 17] = [
    "ACL_PRECISION_MODE",
    "ACL_AICORE_NUM",
    "ACL_AUTO_TUNE_MODE",
    "ACL_OP_SELECT_IMPL_MODE",
    "ACL_OPTYPELIST_FOR_IMPLMODE",
    "ACL_OP_DEBUG_LEVEL",
    "ACL_DEBUG_DIR",
    "ACL_OP_COMPILER_CACHE_MODE",
    "ACL_OP_COMPILER_CACHE_DIR",
    "ACL_OP_PERFORMANCE_MODE",
    "ACL_OP_JIT_COMPILE",
    "ACL_OP_DETERMINISTIC",
    "ACL_CUSTOMIZE_DTYPES",
    "ACL_OP_PRECISION_MODE",
    "ACL_ALLOW_HF32",
    "ACL_PRECISION_MODE_V2",
    "ACL_OP_DEBUG_OPTION",
];
const ACL_PRECISION_MODE: i32 = 0;
const ACL_AUTO_TUNE_MODE: i32 = 2;
const ACL_OP_COMPILER_CACHE_MODE: i32 = 7;
const ACL_OP_JIT_COMPILE: i32 = 10;
const ACL_OP_DETERMINISTIC: i32 = 11;

/// The name of an `aclCompileOpt`, or `ACL_ERROR_INVALID_PARAM` naming the bad value.
fn opt_name(opt: i32) -> Result<&'static str> {
    usize::try_from(opt)
        .ok()
        .and_then(|i| NAMES.get(i).copied())
        .ok_or_else(|| {
            Error::invalid(format!(
                "opt = {opt} is not an aclCompileOpt (expected ACL_PRECISION_MODE (0) .. ACL_OP_DEBUG_OPTION ({}))",
                NAMES.len() - 1
            ))
        })
}

/// Documented defaults ("如果不配置该编译选项，默认采用…"): precision mode
/// `allow_fp32_to_fp16`, compile cache `enable`, JIT compilation `disable` on Atlas A2/A3
/// (binary operators are used; online compilation is the default only on older SoCs), no
/// deterministic computing (`0`).
fn default_value(opt: i32) -> Option<&'static str> {
    match opt {
        ACL_PRECISION_MODE => Some("allow_fp32_to_fp16"),
        ACL_OP_COMPILER_CACHE_MODE => Some("enable"),
        ACL_OP_JIT_COMPILE => Some("disable"),
        ACL_OP_DETERMINISTIC => Some("0"),
        _ => None,
    }
}

/// The option's current value: the one set, else its default.
fn current(opt: i32) -> Option<String> {
    runtime::with_settings(|s| s.compile_opts.get(&opt).cloned())
        .or_else(|| default_value(opt).map(str::to_string))
}

/// Values an option accepts, where CANN documents a closed set.
fn check_value(opt: i32, v: &str) -> Result<()> {
    let allowed: &[&str] = match opt {
        ACL_OP_JIT_COMPILE => &["enable", "disable"],
        ACL_OP_DETERMINISTIC => &["0", "1"],
        ACL_OP_COMPILER_CACHE_MODE => &["enable", "disable", "force"],
        _ => return Ok(()),
    };
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "value = {v:?} is invalid for {}: expected one of {allowed:?}",
            NAMES[opt as usize]
        )))
    }
}

/// `aclError aclSetCompileopt(aclCompileOpt opt, const char *value)`
#[no_mangle]
pub unsafe extern "C" fn aclSetCompileopt(opt: i32, value: *const c_char) -> i32 {
    errors::boundary("aclSetCompileopt", || {
        let name = opt_name(opt)?;
        ffi::non_null(value, "value")?;
        if opt == ACL_AUTO_TUNE_MODE {
            return Err(Error::new(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                format!("{name}: the Auto Tune function has been discarded; use the AOE tool for tuning"),
            ));
        }
        // SAFETY: non-null, NUL-terminated per the ACL contract.
        let v = unsafe { CStr::from_ptr(value) }
            .to_str()
            .map_err(|_| Error::invalid(format!("value for {name} is not valid UTF-8")))?;
        check_value(opt, v)?;
        runtime::with_settings(|s| s.compile_opts.insert(opt, v.to_string()));
        Ok(())
    })
}

/// `size_t aclGetCompileoptSize(aclCompileOpt opt)`: bytes needed for the option's value
/// (its length + 1), 0 if the option has no value or is not an `aclCompileOpt`.
#[no_mangle]
pub unsafe extern "C" fn aclGetCompileoptSize(opt: i32) -> usize {
    boundary_value("aclGetCompileoptSize", 0, || {
        opt_name(opt)?;
        Ok(current(opt).map_or(0, |v| v.len() + 1))
    })
}

/// `aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t length)`: copies the
/// option's value (NUL-terminated) into `value`, which holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn aclGetCompileopt(opt: i32, value: *mut c_char, length: usize) -> i32 {
    errors::boundary("aclGetCompileopt", || {
        let name = opt_name(opt)?;
        ffi::non_null(value, "value")?;
        let v = current(opt).ok_or_else(|| {
            Error::invalid(format!(
                "{name} has no value: it was never set with aclSetCompileopt and has no default"
            ))
        })?;
        if length < v.len() + 1 {
            return Err(Error::invalid(format!(
                "length = {length} is too small for the value of {name} ({} bytes with the terminating NUL; see aclGetCompileoptSize)",
                v.len() + 1
            )));
        }
        // SAFETY: `value` holds `length` >= v.len() + 1 bytes (the caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(v.as_ptr() as *const c_char, value, v.len());
            *value.add(v.len()) = 0;
        }
        Ok(())
    })
}

/// `aclError aclopSetCompileFlag(aclOpCompileFlag flag)`: `ACL_OP_COMPILE_DEFAULT` (0) or
/// `ACL_OP_COMPILE_FUZZ` (1), kept for the process. npu-emu compiles no operators, so the
/// flag is recorded and validated only.
#[no_mangle]
pub extern "C" fn aclopSetCompileFlag(flag: i32) -> i32 {
    errors::boundary("aclopSetCompileFlag", || {
        if !(0..=1).contains(&flag) {
            return Err(Error::invalid(format!(
                "flag = {flag} is not an aclOpCompileFlag (ACL_OP_COMPILE_DEFAULT (0) or ACL_OP_COMPILE_FUZZ (1))"
            )));
        }
        runtime::with_settings(|s| s.op_compile_flag = flag);
        Ok(())
    })
}

/// `aclError aclopSetMaxOpQueueNum(uint64_t maxOpNum)`: the length of the "operator type ->
/// single-operator model" cache (CANN's default 20000). npu-emu loads no single-operator
/// models, so nothing is ever aged out; the value is kept for the process.
#[no_mangle]
pub extern "C" fn aclopSetMaxOpQueueNum(max_op_num: u64) -> i32 {
    errors::boundary("aclopSetMaxOpQueueNum", || {
        runtime::with_settings(|s| s.max_op_queue_num = Some(max_op_num));
        Ok(())
    })
}
