//! Dump configuration (`acl/acl_dump.h`, the model-dump functions of `acl_rt.h`):
//! `aclmdlInitDump`, `aclmdlSetDump`, `aclmdlFinalizeDump`, `acldumpRegCallback`,
//! `acldumpUnregCallback`, `acldumpGetPath`, and the graph-dump option handles of
//! `acl_op_compiler.h` (`aclCreateGraphDumpOpt`, `aclDestroyGraphDumpOpt`).
//!
//! The configuration is checked as CANN's dump module checks it: a `"dump"` object whose
//! `dump_mode` is input/output/all, `dump_op_switch`, `dump_debug` on/off, `dump_data`
//! tensor/stats, `dump_list` an array, and a non-empty `dump_path` when data or overflow
//! dump is on; anything else is `ACL_ERROR_INVALID_DUMP_CONFIG` (100009) naming the key.
//! Order as CANN: before `aclInit` every call is `ACL_ERROR_UNINITIALIZE`; `aclmdlInitDump`
//! twice is `ACL_ERROR_REPEAT_INITIALIZE` and after an `aclInit` that configured a dump it
//! is `ACL_ERROR_DUMP_ALREADY_RUN` (100044); `aclmdlSetDump`/`aclmdlFinalizeDump` without
//! `aclmdlInitDump` are `ACL_ERROR_DUMP_NOT_RUN` (100045). `acldumpGetPath` gives the
//! configured `dump_path` for the kind of dump that is on (`DATA_DUMP` with a dump list,
//! `OVERFLOW_DUMP` with `dump_debug` on, the `AIC_ERR_*` kinds with the matching
//! `dump_scene`), NULL otherwise.
//!
//! `aclopStartDumpArgs`/`aclopStopDumpArgs` (operator-information records,
//! `ACL_OP_DUMP_OP_AICORE_ARGS`) as CANN's `DumpManager`: other dump types are accepted and
//! do nothing; a start makes the directory (with parents) and fails with
//! `ACL_ERROR_FAILURE` (500001) when it is already started, the path is NULL or empty, or
//! the path is not a directory; a stop when not started succeeds.
//!
//! npu-emu records no operator inputs and outputs: with a dump configured, nothing is
//! written to `dump_path` and a registered `acldumpRegCallback` function is never called;
//! the first configuration says so once at WARNING level.

use crate::ffi::{boundary, boundary_value, non_null};
use crate::globals::{DUMP, DUMP_ARGS_PATH, DUMP_WARNED, GRAPH_DUMP_OPTS};
use crate::runtime;
use npu_emu::codes::{ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE};
use npu_emu::config::LogLevel;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::HandleKind;
use std::ffi::{c_void, CStr, CString};
use std::os::raw::c_char;
use std::sync::atomic::Ordering;

/// `ACL_ERROR_INVALID_DUMP_CONFIG`.
pub const ACL_ERROR_INVALID_DUMP_CONFIG: i32 = 100009;
/// `ACL_ERROR_REPEAT_INITIALIZE`.
const ACL_ERROR_REPEAT_INITIALIZE: i32 = 100002;
/// `ACL_ERROR_DUMP_ALREADY_RUN`.
const ACL_ERROR_DUMP_ALREADY_RUN: i32 = 100044;
/// `ACL_ERROR_DUMP_NOT_RUN`.
const ACL_ERROR_DUMP_NOT_RUN: i32 = 100045;
/// `ACL_ERROR_INVALID_FILE`, `ACL_ERROR_PARSE_FILE`.
const ACL_ERROR_INVALID_FILE: i32 = 100003;
const ACL_ERROR_PARSE_FILE: i32 = 100005;

/// A checked dump configuration.
#[derive(Clone, Debug, Default)]
pub struct DumpConfig {
    path: Option<String>,
    data: bool,
    overflow: bool,
    /// `dump_scene` (exception dumps).
    scene: Option<String>,
}

/// The dump configuration of the process ([`DUMP`]).
pub(crate) struct DumpState {
    /// `aclmdlInitDump` was called (and not finalized).
    inited: bool,
    /// Configured by `aclInit`.
    from_init: Option<DumpConfig>,
    /// Configured by `aclmdlSetDump`.
    set: Option<DumpConfig>,
    callback: Option<usize>,
    /// Paths handed out by `acldumpGetPath` (kept alive for the process).
    paths: Vec<CString>,
}

impl DumpState {
    pub(crate) const fn new() -> DumpState {
        DumpState {
            inited: false,
            from_init: None,
            set: None,
            callback: None,
            paths: Vec::new(),
        }
    }
}

fn invalid(msg: String) -> Error {
    Error::new(ACL_ERROR_INVALID_DUMP_CONFIG, msg)
}

/// Check the `"dump"` object of a configuration (`json` is the whole file); `None` when
/// the file configures no dump.
pub fn check_config(json: &serde_json::Value, file: &str) -> Result<Option<DumpConfig>> {
    let Some(d) = json.get("dump") else {
        return Ok(None);
    };
    let d = d
        .as_object()
        .ok_or_else(|| invalid(format!("{file}: \"dump\" must be an object")))?;
    let text = |k: &str, allowed: &[&str]| -> Result<Option<String>> {
        match d.get(k) {
            None => Ok(None),
            Some(serde_json::Value::String(s))
                if allowed.is_empty() || allowed.contains(&s.as_str()) =>
            {
                Ok(Some(s.clone()))
            }
            Some(v) => Err(invalid(format!(
                "{file}: dump.{k} = {v} is invalid{}",
                if allowed.is_empty() {
                    ": expected a string".to_string()
                } else {
                    format!(": expected one of {allowed:?}")
                }
            ))),
        }
    };
    text("dump_mode", &["input", "output", "all"])?;
    let op_switch = text("dump_op_switch", &["on", "off"])?;
    let debug = text("dump_debug", &["on", "off"])?;
    text("dump_data", &["tensor", "stats"])?;
    let scene = text("dump_scene", &[])?;
    let path = text("dump_path", &[])?;
    let list = match d.get("dump_list") {
        None => false,
        Some(serde_json::Value::Array(_)) => true,
        Some(v) => {
            return Err(invalid(format!(
                "{file}: dump.dump_list = {v} is invalid: expected an array"
            )))
        }
    };
    let data = list || op_switch.as_deref() == Some("on");
    let overflow = debug.as_deref() == Some("on");
    if (data || overflow) && path.as_deref().is_none_or(str::is_empty) {
        return Err(invalid(format!(
            "{file}: dump.dump_path is required when data dump (dump_list / dump_op_switch) or overflow dump (dump_debug) is on"
        )));
    }
    if data && overflow {
        return Err(invalid(format!(
            "{file}: data dump (dump_list) and overflow dump (dump_debug \"on\") cannot be configured together"
        )));
    }
    Ok(Some(DumpConfig {
        path,
        data,
        overflow,
        scene,
    }))
}

fn warn_once(cfg: &DumpConfig) {
    if (cfg.data || cfg.overflow || cfg.scene.is_some())
        && !DUMP_WARNED.swap(true, Ordering::SeqCst)
    {
        runtime::log(
            LogLevel::Warning,
            &format!(
                "dump configured (dump_path {:?}): npu-emu records no operator inputs or outputs, so no dump files are written and acldumpRegCallback callbacks are not called",
                cfg.path.as_deref().unwrap_or("")
            ),
        );
    }
}

/// Remember the dump configuration of `aclInit` (`None`: it had none).
pub fn set_from_init(cfg: Option<DumpConfig>) {
    if let Some(c) = &cfg {
        warn_once(c);
    }
    let mut d = DUMP.lock();
    d.from_init = cfg;
    d.inited = false;
    d.set = None;
}

fn require_init() -> Result<()> {
    runtime::get().map(|_| ()).map_err(|_| {
        Error::new(
            ACL_ERROR_UNINITIALIZE,
            "the ACL runtime is not initialized: call aclInit first",
        )
    })
}

/// `aclError aclmdlInitDump()`
#[no_mangle]
pub extern "C" fn aclmdlInitDump() -> i32 {
    boundary("aclmdlInitDump", || {
        require_init()?;
        let mut d = DUMP.lock();
        if d.from_init.is_some() {
            return Err(Error::new(
                ACL_ERROR_DUMP_ALREADY_RUN,
                "the aclInit configuration already configured a dump; aclmdlInitDump works only when aclInit configured none",
            ));
        }
        if d.inited {
            return Err(Error::new(
                ACL_ERROR_REPEAT_INITIALIZE,
                "dump is already initialized: call aclmdlFinalizeDump before initializing it again",
            ));
        }
        d.inited = true;
        Ok(())
    })
}

/// `aclError aclmdlSetDump(const char *dumpCfgPath)`
#[no_mangle]
pub unsafe extern "C" fn aclmdlSetDump(dumpCfgPath: *const c_char) -> i32 {
    boundary("aclmdlSetDump", || {
        require_init()?;
        if !DUMP.lock().inited {
            return Err(Error::new(
                ACL_ERROR_DUMP_NOT_RUN,
                "dump is not initialized: call aclmdlInitDump first",
            ));
        }
        non_null(dumpCfgPath, "dumpCfgPath")?;
        // SAFETY: non-null, NUL-terminated per the ACL contract.
        let p = unsafe { CStr::from_ptr(dumpCfgPath) }
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&p).map_err(|e| {
            Error::new(
                ACL_ERROR_INVALID_FILE,
                format!("cannot read the dump config file dumpCfgPath = {p:?}: {e}"),
            )
        })?;
        if text.trim().is_empty() {
            return Ok(());
        }
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                ACL_ERROR_PARSE_FILE,
                format!("dump config file {p:?} is not valid JSON: {e}"),
            )
        })?;
        let cfg = check_config(&json, &p)?;
        if let Some(c) = &cfg {
            warn_once(c);
        }
        DUMP.lock().set = cfg;
        Ok(())
    })
}

/// `aclError aclmdlFinalizeDump()`
#[no_mangle]
pub extern "C" fn aclmdlFinalizeDump() -> i32 {
    boundary("aclmdlFinalizeDump", || {
        require_init()?;
        let mut d = DUMP.lock();
        if !d.inited {
            return Err(Error::new(
                ACL_ERROR_DUMP_NOT_RUN,
                "dump is not initialized: call aclmdlInitDump first",
            ));
        }
        d.inited = false;
        d.set = None;
        Ok(())
    })
}

/// `aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *, int32_t), int32_t flag)`
#[no_mangle]
pub unsafe extern "C" fn acldumpRegCallback(messageCallback: *const c_void, flag: i32) -> i32 {
    boundary("acldumpRegCallback", || {
        non_null(messageCallback, "messageCallback")?;
        if flag != 0 {
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!("flag = {flag} is invalid: only 0 (no dump files besides the callback) is supported"),
            ));
        }
        DUMP.lock().callback = Some(messageCallback as usize);
        Ok(())
    })
}

/// `void acldumpUnregCallback()`
#[no_mangle]
pub extern "C" fn acldumpUnregCallback() {
    DUMP.lock().callback = None;
}

/// `const char *acldumpGetPath(acldumpType dumpType)`
#[no_mangle]
pub extern "C" fn acldumpGetPath(dumpType: i32) -> *const c_char {
    boundary_value("acldumpGetPath", std::ptr::null(), || {
        let mut d = DUMP.lock();
        let cfg = d.set.clone().or_else(|| d.from_init.clone());
        let Some(cfg) = cfg else {
            return Ok(std::ptr::null());
        };
        let scene = cfg.scene.as_deref().unwrap_or("");
        let on = match dumpType {
            1 => matches!(scene, "lite_exception" | "aic_err_brief_dump"),
            2 => scene == "aic_err_norm_dump",
            3 => scene == "aic_err_detail_dump",
            4 => cfg.data,
            5 => cfg.overflow,
            t => {
                return Err(Error::invalid(format!(
                "dumpType = {t} is invalid: expected AIC_ERR_BRIEF_DUMP (1) .. OVERFLOW_DUMP (5)"
            )))
            }
        };
        let Some(path) = cfg.path.filter(|_| on) else {
            return Ok(std::ptr::null());
        };
        let c = CString::new(path).unwrap_or_default();
        let p = c.as_ptr();
        d.paths.push(c);
        Ok(p)
    })
}

/// The object behind an `aclGraphDumpOption *` (no option is defined yet), a handle of
/// [`GRAPH_DUMP_OPTS`].
pub(crate) struct GraphDumpOption {
    _reserved: u64,
}

/// What an `aclGraphDumpOption *` is: a handle of [`GRAPH_DUMP_OPTS`].
pub static GRAPH_DUMP_OPT: HandleKind =
    HandleKind::new(*b"GD", "aclGraphDumpOption", "aclCreateGraphDumpOpt");

/// `aclGraphDumpOption *aclCreateGraphDumpOpt()`
#[no_mangle]
pub extern "C" fn aclCreateGraphDumpOpt() -> *mut c_void {
    boundary_value("aclCreateGraphDumpOpt", std::ptr::null_mut(), || {
        let h = GRAPH_DUMP_OPTS
            .lock()
            .insert(GraphDumpOption { _reserved: 0 });
        Ok(h as *mut c_void)
    })
}

/// `aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt)`
#[no_mangle]
pub unsafe extern "C" fn aclDestroyGraphDumpOpt(graphDumpOpt: *const c_void) -> i32 {
    boundary("aclDestroyGraphDumpOpt", || {
        non_null(graphDumpOpt, "graphDumpOpt")?;
        GRAPH_DUMP_OPTS
            .lock()
            .remove(graphDumpOpt as u64, "graphDumpOpt")?;
        Ok(())
    })
}

/// `ACL_OP_DUMP_OP_AICORE_ARGS`.
const ACL_OP_DUMP_OP_AICORE_ARGS: u32 = 0x1;

fn args_failure(msg: String) -> Error {
    Error::new(npu_emu::codes::ACL_ERROR_FAILURE, msg)
}

/// `aclError aclopStartDumpArgs(uint32_t dumpType, const char *path)`
#[no_mangle]
pub unsafe extern "C" fn aclopStartDumpArgs(dumpType: u32, path: *const c_char) -> i32 {
    boundary("aclopStartDumpArgs", || {
        if dumpType & ACL_OP_DUMP_OP_AICORE_ARGS == 0 {
            return Ok(());
        }
        let mut g = DUMP_ARGS_PATH.lock();
        if let Some(p) = g.as_ref() {
            return Err(args_failure(format!(
                "operator information recording is already started (path {p:?}); stop it with aclopStopDumpArgs first"
            )));
        }
        if path.is_null() {
            return Err(args_failure("path is NULL".into()));
        }
        // SAFETY: non-null, the caller's C string.
        let p = unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        if p.is_empty() {
            return Err(args_failure("path is empty".into()));
        }
        let dir = std::path::Path::new(&p);
        if !dir.exists() {
            std::fs::create_dir_all(dir)
                .map_err(|e| args_failure(format!("cannot create the directory {p:?}: {e}")))?;
        }
        if !dir.is_dir() {
            return Err(args_failure(format!("path {p:?} is not a directory")));
        }
        runtime::log(
            LogLevel::Warning,
            &format!(
                "aclopStartDumpArgs: recording into {p:?}; npu-emu's operators do not report their AI Core arguments, so no records are written"
            ),
        );
        *g = Some(p);
        Ok(())
    })
}

/// `aclError aclopStopDumpArgs(uint32_t dumpType)`
#[no_mangle]
pub extern "C" fn aclopStopDumpArgs(dumpType: u32) -> i32 {
    boundary("aclopStopDumpArgs", || {
        if dumpType & ACL_OP_DUMP_OP_AICORE_ARGS != 0 {
            DUMP_ARGS_PATH.lock().take();
        }
        Ok(())
    })
}
