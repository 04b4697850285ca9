//! `aclInit`, `aclFinalize`, `aclFinalizeReference` (CANN 8.5 semantics, abi.md §1.3).
//!
//! - `aclInit` is reference counted: a call while initialised increments the count and
//!   returns `ACL_ERROR_REPEAT_INITIALIZE` (100002).
//! - The config path may be NULL or "", or name an empty file (no config). An unreadable
//!   file, or one that is not a regular file (`/dev/zero`, a FIFO), is
//!   `ACL_ERROR_INVALID_FILE`; a file over 16 MiB is `ACL_ERROR_INVALID_FILE_SIZE`; malformed JSON is `ACL_ERROR_PARSE_FILE` with the
//!   parser's message. The content of the first successful init with a config is
//!   remembered: a later init (after a finalize) with different content is
//!   `ACL_ERROR_INVALID_PARAM`, as in CANN.
//! - Config keys acted on: `err_msg_mode` ("0": `aclGetRecentErrMsg` per thread, the
//!   default; "1": per process; anything else is
//!   `ACL_ERROR_INVALID_PARAM`), `defaultDevice.default_device` (threads with no current
//!   context use that device) and `dump` (checked, see `api/dump.rs`). Other keys
//!   (profiling, …) are accepted and ignored.
//! - Init and finalize callbacks (`api/init_cb.rs`) run in CANN's order.
//! - `aclFinalize` finalises whatever the count (as CANN); a second call returns
//!   `ACL_ERROR_REPEAT_FINALIZE` (100037). `aclFinalizeReference` decrements the count and
//!   only finalises at 1.
//! - `aclrtSetDevice` before `aclInit` works, as in CANN (whose runtime needs no `aclInit`;
//!   CANN's samples set the device, make contexts and streams, then call `aclInit`): it
//!   starts the runtime without a config, and `aclInit` keeps that runtime. Other calls
//!   before either still return `ACL_ERROR_UNINITIALIZE` naming `aclInit`.
//! - Deviation: CANN's `aclFinalize` before any `aclInit` returns success; we return 100037
//!   with a message, because it is always a bug in the caller.

use crate::api::{errors, init_cb};
use crate::runtime::{self, InitOptions, LIFECYCLE};
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use std::ffi::CStr;
use std::os::raw::c_char;

/// Read and check the config file: its content ("" when there is none, or the file is
/// empty, as CANN treats it) and the options it sets.
fn read_config(path: *const c_char) -> Result<(String, InitOptions)> {
    let mut opts = InitOptions::default();
    if path.is_null() {
        return Ok((String::new(), opts));
    }
    // SAFETY: non-null, NUL-terminated per the ACL contract.
    let p = unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned();
    if p.is_empty() {
        return Ok((String::new(), opts));
    }
    let limit = npu_emu::config::MAX_CONFIG_FILE_BYTES;
    let text = npu_emu::config::read_config_file(std::path::Path::new(&p), limit).map_err(|e| {
        let code = match e {
            npu_emu::config::FileError::TooBig { .. } => ACL_ERROR_INVALID_FILE_SIZE,
            _ => ACL_ERROR_INVALID_FILE,
        };
        Error::new(
            code,
            format!("cannot read the config file configPath = {p:?}: {e}"),
        )
    })?;
    let text = String::from_utf8(text).map_err(|e| {
        Error::new(
            ACL_ERROR_PARSE_FILE,
            format!("config file {p:?} is not UTF-8 text: {e}"),
        )
    })?;
    if text.trim().is_empty() {
        return Ok((String::new(), opts));
    }
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(
            ACL_ERROR_PARSE_FILE,
            format!("config file {p:?} is not valid JSON: {e}"),
        )
    })?;
    // "err_msg_mode": "0" (per thread) or "1" (per process), CANN's HandleErrorManagerConfig;
    // applied by `init` once the runtime is up.
    if let Some(m) = json.get("err_msg_mode") {
        if m.as_str() != Some("0") && m.as_str() != Some("1") {
            return Err(Error::invalid(format!(
                "config file {p:?}: err_msg_mode = {m} is invalid: expected \"0\" (INTERNAL_MODE) or \"1\" (PROCESS_MODE)"
            )));
        }
    }
    // "dump": checked as CANN's dump module checks it (applied by `init`).
    crate::api::dump::check_config(&json, &p)?;
    // "defaultDevice": {"default_device": "N"} (a string, or a number).
    if let Some(dd) = json
        .get("defaultDevice")
        .and_then(|d| d.get("default_device"))
    {
        let n = match dd {
            serde_json::Value::String(s) => s.trim().parse::<i32>().ok(),
            serde_json::Value::Number(n) => n.as_i64().and_then(|v| i32::try_from(v).ok()),
            _ => None,
        };
        match n {
            Some(n) => opts.default_device = Some(n),
            None => {
                return Err(Error::invalid(format!(
                    "config file {p:?}: defaultDevice.default_device = {dd} is not a device id"
                )))
            }
        }
    }
    Ok((text, opts))
}

fn init(path: *const c_char) -> Result<()> {
    init_cb::check_not_in_callback("aclInit")?;
    let mut lc = LIFECYCLE.lock();
    if lc.refcount > 0 {
        lc.refcount += 1;
        return Err(Error::new(
            ACL_ERROR_REPEAT_INITIALIZE,
            format!(
                "the ACL runtime is already initialized (init count now {})",
                lc.refcount
            ),
        ));
    }
    let (content, opts) = read_config(path)?;
    // As CANN: the first init that had a config fixes its content; a later init (after a
    // finalize) must give the same content. An init without config fixes nothing.
    if let Some(first) = &lc.first_config {
        if *first != content {
            return Err(Error::invalid(
                "the config content differs from the one given to the first aclInit of this process",
            ));
        }
    }
    // A runtime aclrtSetDevice started before aclInit is kept (as CANN's, which needs no
    // aclInit); otherwise start one.
    let adopted = runtime::adopt_started(&opts)?;
    if !adopted {
        runtime::create(opts)?;
    }
    // SAFETY: non-null, NUL-terminated per the ACL contract.
    let with_path = !path.is_null() && unsafe { *path } != 0;
    if let Err(e) = init_cb::notify_init(&content, with_path) {
        if !adopted {
            runtime::destroy();
        }
        return Err(e);
    }
    // err_msg_mode "1": aclGetRecentErrMsg reports the messages of every thread.
    let process_messages = serde_json::from_str::<serde_json::Value>(&content)
        .ok()
        .and_then(|v| v.get("err_msg_mode")?.as_str().map(|m| m == "1"))
        .unwrap_or(false);
    crate::ffi::set_process_mode(process_messages);
    lc.refcount = 1;
    init_cb::set_initialized(Some(&content));
    let dump = serde_json::from_str::<serde_json::Value>(&content)
        .ok()
        .and_then(|v| crate::api::dump::check_config(&v, "").ok().flatten());
    crate::api::dump::set_from_init(dump);
    if lc.first_config.is_none() && !content.is_empty() {
        lc.first_config = Some(content);
    }
    Ok(())
}

/// `aclError aclInit(const char *configPath)`
#[no_mangle]
pub unsafe extern "C" fn aclInit(configPath: *const c_char) -> i32 {
    errors::boundary_quiet("aclInit", &[ACL_ERROR_REPEAT_INITIALIZE], || {
        init(configPath)
    })
}

/// `aclError aclFinalize()`
#[no_mangle]
pub unsafe extern "C" fn aclFinalize() -> i32 {
    errors::boundary("aclFinalize", || {
        init_cb::check_not_in_callback("aclFinalize")?;
        let mut lc = LIFECYCLE.lock();
        if lc.refcount == 0 {
            return Err(Error::new(
                ACL_ERROR_REPEAT_FINALIZE,
                "the ACL runtime is not initialized: aclFinalize was already called, or aclInit never was",
            ));
        }
        init_cb::notify_finalize()?;
        init_cb::set_initialized(None);
        runtime::destroy();
        lc.refcount = 0;
        Ok(())
    })
}

/// `aclError aclFinalizeReference(uint64_t *refCount)`
#[no_mangle]
pub unsafe extern "C" fn aclFinalizeReference(refCount: *mut u64) -> i32 {
    errors::boundary("aclFinalizeReference", || {
        init_cb::check_not_in_callback("aclFinalizeReference")?;
        let mut lc = LIFECYCLE.lock();
        let put = |v: u64| {
            if !refCount.is_null() {
                // SAFETY: non-null out-pointer per the ACL contract.
                unsafe { refCount.write_unaligned(v) };
            }
        };
        put(lc.refcount);
        if lc.refcount > 1 {
            lc.refcount -= 1;
            put(lc.refcount);
            return Ok(());
        }
        if lc.refcount == 0 {
            return Err(Error::new(
                ACL_ERROR_REPEAT_FINALIZE,
                "the ACL runtime is not initialized: finalized already, or aclInit never called",
            ));
        }
        init_cb::notify_finalize()?;
        init_cb::set_initialized(None);
        runtime::destroy();
        lc.refcount = 0;
        put(0);
        Ok(())
    })
}
