//! Profiling (`acl/acl_prof.h`): `aclprofInit`, `aclprofCreateConfig`, `aclprofStart`,
//! `aclprofStop`, `aclprofDestroyConfig`, `aclprofFinalize`.
//!
//! This is not msprof. Between `aclprofStart` and `aclprofStop` the library counts the ACL
//! calls that pass through [`count`] (the memory, copy, helper and stream-ordered calls of
//! `api/memory.rs`, `api/vmm.rs`, `api/helpers.rs`); `aclprofFinalize` writes
//! `npu_emu_profile_<pid>.json` into the directory given to `aclprofInit`, saying plainly
//! what it is.
//!
//! Codes (decisions where CANN's are not documented): bad arguments → 100000;
//! `aclprofInit` twice → `ACL_ERROR_REPEAT_INITIALIZE` (100002); start/stop/finalize
//! before `aclprofInit` → `ACL_ERROR_PROF_NOT_RUN` (100043); `aclprofStart` with a config
//! that is already running, or naming a device a running session profiles →
//! `ACL_ERROR_PROF_ALREADY_RUN` (100042) (sessions on different devices run together, as
//! CANN documents); `aclprofStop` with no session or a config not running → 100043 /
//! 100000. `aclprofFinalize` during sessions stops them first. Calls are counted while any
//! session runs.

use crate::ffi::{boundary, boundary_value};
use crate::globals::{COUNTING, PROF};
use npu_emu::codes::{
    ACL_ERROR_PROF_ALREADY_RUN, ACL_ERROR_PROF_NOT_RUN, ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_WRITE_FILE,
};
use npu_emu::Error;
use npu_emu_ffi::handles::{HandleKind, HandleTable};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Longest `profilerResultPath` CANN accepts.
pub const MAX_PATH: usize = 4096;

/// The object behind an `aclprofConfig *`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfConfig {
    pub devices: Vec<u32>,
    pub aicore_metrics: i32,
    pub data_type_config: u64,
}

/// The profiler's state: the result directory, sessions, live configs, call counts.
pub struct Prof {
    /// Result directory from `aclprofInit`.
    dir: Option<PathBuf>,
    /// Running sessions: config handle → start time. Sessions on different devices may
    /// run together.
    running: Vec<(usize, Instant)>,
    /// Seconds counted over finished sessions.
    elapsed: f64,
    sessions: u32,
    configs: HandleTable<ProfConfig>,
    /// Configs used by sessions (for the summary).
    used: Vec<ProfConfig>,
    counts: BTreeMap<&'static str, u64>,
    /// msproftx events (`aclprofMark`, ranges, …) recorded during sessions that collect
    /// `ACL_PROF_MSPROFTX` (see `api/prof_tx.rs`).
    tx: Vec<serde_json::Value>,
    /// `aclprofSetConfig` values by `aclprofConfigType`.
    settings: BTreeMap<i32, String>,
}

/// `ACL_PROF_MSPROFTX`.
const ACL_PROF_MSPROFTX: u64 = 0x0080;

/// Record msproftx event `ev` (a JSON object; its time is added) if a running session
/// collects `ACL_PROF_MSPROFTX`; whether it was recorded.
pub fn record_tx(mut ev: serde_json::Value) -> bool {
    let mut g = PROF.lock();
    let Some(p) = g.as_mut() else {
        return false;
    };
    let on = p.running.iter().any(|(c, _)| {
        p.configs
            .peek(*c as u64)
            .is_some_and(|cfg| cfg.data_type_config & ACL_PROF_MSPROFTX != 0)
    });
    if !on {
        return false;
    }
    if let Some(o) = ev.as_object_mut() {
        o.insert(
            "time_ns".into(),
            serde_json::json!(npu_emu::event::now_ns()),
        );
    }
    p.tx.push(ev);
    true
}

/// Keep an `aclprofSetConfig` value (type already checked).
pub fn set_config(ty: i32, value: String) {
    PROF.lock()
        .get_or_insert_with(Prof::default)
        .settings
        .insert(ty, value);
}

/// What an `aclprofConfig *` is: a handle of [`Prof`]'s table.
pub static CONFIG: HandleKind = HandleKind::new(*b"PC", "aclprofConfig", "aclprofCreateConfig");

impl Default for Prof {
    fn default() -> Prof {
        Prof {
            dir: None,
            running: Vec::new(),
            elapsed: 0.0,
            sessions: 0,
            configs: HandleTable::new(&CONFIG),
            used: Vec::new(),
            counts: BTreeMap::new(),
            tx: Vec::new(),
            settings: BTreeMap::new(),
        }
    }
}

/// Count one call of `name` if a profiling session is running. Cheap when none is. The
/// profiler's own `aclprof*` control calls are not counted.
pub fn count(name: &'static str) {
    if !COUNTING.load(Ordering::Relaxed) || name.starts_with("aclprof") {
        return;
    }
    if let Some(p) = PROF.lock().as_mut() {
        if !p.running.is_empty() {
            *p.counts.entry(name).or_insert(0) += 1;
        }
    }
}

fn not_init(f: &str) -> Error {
    Error::new(
        ACL_ERROR_PROF_NOT_RUN,
        format!("profiling is not initialised: call aclprofInit before {f}"),
    )
}

/// `aclprofInit`.
#[no_mangle]
pub unsafe extern "C" fn aclprofInit(
    profilerResultPath: *const libc::c_char,
    length: usize,
) -> i32 {
    boundary("aclprofInit", || {
        if profilerResultPath.is_null() {
            return Err(Error::invalid("argument profilerResultPath is NULL"));
        }
        if length == 0 || length > MAX_PATH {
            return Err(Error::invalid(format!(
                "length {length} is out of range (expected 1..={MAX_PATH})"
            )));
        }
        // SAFETY: a C string of at most `length` bytes; strnlen stops at its NUL, so a
        // `length` larger than the string never reads past it.
        let n = unsafe { libc::strnlen(profilerResultPath, length) };
        // SAFETY: strnlen found `n` readable bytes before the NUL (or `length`).
        let bytes = unsafe { std::slice::from_raw_parts(profilerResultPath as *const u8, n) };
        if bytes.is_empty() {
            return Err(Error::invalid("profilerResultPath is an empty string"));
        }
        use std::os::unix::ffi::OsStrExt;
        let dir = PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
        let mut g = PROF.lock();
        if g.as_ref().is_some_and(|p| p.dir.is_some()) {
            return Err(Error::new(
                ACL_ERROR_REPEAT_INITIALIZE,
                "profiling is already initialised (aclprofInit called twice without aclprofFinalize)",
            ));
        }
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::invalid(format!(
                "profilerResultPath {}: cannot create the directory: {e}",
                dir.display()
            ))
        })?;
        if !dir.is_dir() {
            return Err(Error::invalid(format!(
                "profilerResultPath {} is not a directory",
                dir.display()
            )));
        }
        let p = g.get_or_insert_with(Prof::default);
        *p = Prof {
            configs: std::mem::replace(&mut p.configs, HandleTable::new(&CONFIG)),
            settings: std::mem::take(&mut p.settings),
            ..Prof::default()
        };
        p.dir = Some(dir);
        Ok(())
    })
}

/// `aclprofCreateConfig`: NULL (with a message) on bad arguments.
#[no_mangle]
pub unsafe extern "C" fn aclprofCreateConfig(
    deviceIdList: *mut u32,
    deviceNums: u32,
    aicoreMetrics: i32,
    aicoreEvents: *const libc::c_void,
    dataTypeConfig: u64,
) -> *mut ProfConfig {
    let _ = aicoreEvents;
    boundary_value("aclprofCreateConfig", std::ptr::null_mut(), || {
        if deviceNums > 0 && deviceIdList.is_null() {
            return Err(Error::invalid(format!(
                "deviceIdList is NULL but deviceNums is {deviceNums}"
            )));
        }
        if deviceNums > npu_emu::memory::MAX_DEVICES {
            return Err(Error::invalid(format!(
                "deviceNums {deviceNums} is larger than the device limit {}",
                npu_emu::memory::MAX_DEVICES
            )));
        }
        // SAFETY: deviceNums entries by the API contract.
        let devices: Vec<u32> = (0..deviceNums as usize)
            .map(|i| unsafe { deviceIdList.add(i).read_unaligned() })
            .collect();
        if let Ok(rt) = crate::runtime::get() {
            for &d in &devices {
                rt.physical_device(d as i32)?;
            }
        }
        let mut seen = HashSet::new();
        if let Some(d) = devices.iter().find(|d| !seen.insert(**d)) {
            return Err(Error::invalid(format!(
                "deviceIdList names device {d} twice"
            )));
        }
        let cfg = ProfConfig {
            devices,
            aicore_metrics: aicoreMetrics,
            data_type_config: dataTypeConfig,
        };
        let h = PROF
            .lock()
            .get_or_insert_with(Prof::default)
            .configs
            .insert(cfg);
        Ok(h as *mut ProfConfig)
    })
}

fn live_config(p: &Prof, cfg: *const ProfConfig) -> Result<ProfConfig, Error> {
    Ok(p.configs.get(cfg as u64, "profilerConfig")?.clone())
}

/// `aclprofDestroyConfig`.
#[no_mangle]
pub unsafe extern "C" fn aclprofDestroyConfig(profilerConfig: *const ProfConfig) -> i32 {
    boundary("aclprofDestroyConfig", || {
        let mut g = PROF.lock();
        let p = g.get_or_insert_with(Prof::default);
        live_config(p, profilerConfig)?;
        if p.running.iter().any(|(c, _)| *c == profilerConfig as usize) {
            return Err(Error::invalid(
                "profilerConfig is in use by a running session: call aclprofStop first",
            ));
        }
        p.configs.remove(profilerConfig as u64, "profilerConfig")?;
        Ok(())
    })
}

/// `aclprofStart`.
#[no_mangle]
pub unsafe extern "C" fn aclprofStart(profilerConfig: *const ProfConfig) -> i32 {
    boundary("aclprofStart", || {
        let mut g = PROF.lock();
        let p = g.get_or_insert_with(Prof::default);
        let cfg = live_config(p, profilerConfig)?;
        if p.dir.is_none() {
            return Err(not_init("aclprofStart"));
        }
        if p.running.iter().any(|(c, _)| *c == profilerConfig as usize) {
            return Err(Error::new(
                ACL_ERROR_PROF_ALREADY_RUN,
                "a profiling session with this config is already running: call aclprofStop first",
            ));
        }
        for (c, _) in &p.running {
            // Running configs are live (destroy refuses them).
            let Some(other) = p.configs.peek(*c as u64) else {
                continue;
            };
            if let Some(d) = cfg.devices.iter().find(|d| other.devices.contains(d)) {
                return Err(Error::new(
                    ACL_ERROR_PROF_ALREADY_RUN,
                    format!(
                        "device {d} is already being profiled by a running session: call \
                         aclprofStop first"
                    ),
                ));
            }
        }
        p.running.push((profilerConfig as usize, Instant::now()));
        p.sessions += 1;
        p.used.push(cfg);
        COUNTING.store(true, Ordering::SeqCst);
        Ok(())
    })
}

/// End the session of config `cfg` (all sessions for `None`).
fn stop(p: &mut Prof, cfg: Option<usize>) {
    p.running.retain(|(c, t)| {
        let keep = cfg.is_some_and(|x| x != *c);
        if !keep {
            p.elapsed += t.elapsed().as_secs_f64();
        }
        keep
    });
    COUNTING.store(!p.running.is_empty(), Ordering::SeqCst);
}

/// `aclprofStop`: `profilerConfig` must be the one given to `aclprofStart`.
#[no_mangle]
pub unsafe extern "C" fn aclprofStop(profilerConfig: *const ProfConfig) -> i32 {
    boundary("aclprofStop", || {
        let mut g = PROF.lock();
        let p = g.get_or_insert_with(Prof::default);
        live_config(p, profilerConfig)?;
        if p.dir.is_none() {
            return Err(not_init("aclprofStop"));
        }
        if p.running.is_empty() {
            return Err(Error::new(
                ACL_ERROR_PROF_NOT_RUN,
                "no profiling session is running (aclprofStart was not called)",
            ));
        }
        if !p.running.iter().any(|(c, _)| *c == profilerConfig as usize) {
            return Err(Error::invalid(
                "profilerConfig is not the config of a running session (aclprofStop takes the \
                 config given to aclprofStart)",
            ));
        }
        stop(p, Some(profilerConfig as usize));
        Ok(())
    })
}

/// `aclprofFinalize`: write the summary and end profiling.
#[no_mangle]
pub extern "C" fn aclprofFinalize() -> i32 {
    boundary("aclprofFinalize", || {
        let mut g = PROF.lock();
        let p = g.get_or_insert_with(Prof::default);
        let Some(dir) = p.dir.clone() else {
            return Err(not_init("aclprofFinalize"));
        };
        let stopped_by_finalize = !p.running.is_empty();
        if stopped_by_finalize {
            stop(p, None);
        }
        let pid = std::process::id();
        let calls: serde_json::Map<String, serde_json::Value> = p
            .counts
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
            .collect();
        let total: u64 = p.counts.values().sum();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let doc = serde_json::json!({
            "tool": "npu-emu",
            "note": "This is NOT an msprof report. npu-emu counted the ACL API calls made \
                     between aclprofStart and aclprofStop that it can hook cheaply (memory \
                     allocation, copies, memsets, memory info, VMM, data buffers, fp16 \
                     helpers). It recorded no device timeline, kernel or hardware counters.",
            "pid": pid,
            "finished_unix_time": now,
            "sessions": p.sessions,
            "profiled_seconds": p.elapsed,
            "stopped_by_finalize": stopped_by_finalize,
            "configs": p.used.iter().map(|c| serde_json::json!({
                "devices": c.devices,
                "aicore_metrics": c.aicore_metrics,
                "data_type_config": format!("{:#x}", c.data_type_config),
            })).collect::<Vec<_>>(),
            "counted_calls_total": total,
            "api_calls": calls,
            "settings": p.settings.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<String, serde_json::Value>>(),
            "msproftx": p.tx,
        });
        let file = dir.join(format!("npu_emu_profile_{pid}.json"));
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        std::fs::write(&file, text + "\n").map_err(|e| {
            Error::new(
                ACL_ERROR_WRITE_FILE,
                format!("cannot write {}: {e}", file.display()),
            )
        })?;
        let configs = std::mem::replace(&mut p.configs, HandleTable::new(&CONFIG));
        let settings = std::mem::take(&mut p.settings);
        *p = Prof {
            configs,
            settings,
            ..Prof::default()
        };
        Ok(())
    })
}
