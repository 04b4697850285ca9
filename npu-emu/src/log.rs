//! CANN-style logging: one line format, `[LEVEL] MODULE(pid,tid): message`.
//!
//! The level comes from `ASCEND_GLOBAL_LOG_LEVEL`, overridden per module by
//! `ASCEND_MODULE_LOG_LEVEL` (see [`crate::config`]); lines go to stderr, or stdout with
//! `ASCEND_SLOG_PRINT_TO_STDOUT=1`. A [`Logger`] is a value the runtime owns.
//!
//! Each library logs under its CANN module name (CANN's `log_types.h` module ids): the ACL
//! runtime as `ASCENDCL`, libhccl as `HCCL`, libnnopbase / libopapi as `OP` (the module
//! `aclnn/opdev/op_log.h` logs under, `OP_ID 63`, with sub-module `NNOP`).

use crate::config::{Config, LogLevel};
use std::io::Write;

/// The module names `ASCEND_MODULE_LOG_LEVEL` accepts: those of CANN's `log_types.h`
/// (8.1 toolkit, plus `SCC` and `CCU` of the newer driver header). A setting naming any other
/// module is ignored as a whole, as in CANN.
pub const MODULES: &[&str] = &[
    "SLOG",
    "IDEDD",
    "SCC",
    "HCCL",
    "FMK",
    "CCU",
    "DVPP",
    "RUNTIME",
    "CCE",
    "HDC",
    "DRV",
    "DEVMM",
    "KERNEL",
    "LIBMEDIA",
    "CCECPU",
    "ROS",
    "HCCP",
    "ROCE",
    "TEFUSION",
    "PROFILING",
    "DP",
    "APP",
    "TS",
    "TSDUMP",
    "AICPU",
    "LP",
    "TDT",
    "FE",
    "MD",
    "MB",
    "ME",
    "IMU",
    "IMP",
    "GE",
    "CAMERA",
    "ASCENDCL",
    "TEEOS",
    "ISP",
    "SIS",
    "HSM",
    "DSS",
    "PROCMGR",
    "BBOX",
    "AIVECTOR",
    "TBE",
    "FV",
    "TUNE",
    "HSS",
    "FFTS",
    "OP",
    "UDF",
    "HICAID",
    "TSYNC",
    "AUDIO",
    "TPRT",
    "ASCENDCKERNEL",
    "ASYS",
    "ATRACE",
    "RTC",
    "SYSMONITOR",
    "AML",
    "ADETECT",
];

const N_MODULES: usize = 62;
const _: () = assert!(MODULES.len() == N_MODULES);

/// Per-module levels from `ASCEND_MODULE_LOG_LEVEL` (none set = every module follows the
/// global level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleLevels {
    levels: [Option<LogLevel>; N_MODULES],
}

impl Default for ModuleLevels {
    fn default() -> Self {
        ModuleLevels {
            levels: [None; N_MODULES],
        }
    }
}

impl ModuleLevels {
    /// The level set for `module`, if any.
    pub fn get(&self, module: &str) -> Option<LogLevel> {
        MODULES
            .iter()
            .position(|m| *m == module)
            .and_then(|i| self.levels[i])
    }

    /// Whether no module has a level of its own.
    pub fn is_empty(&self) -> bool {
        self.levels.iter().all(Option::is_none)
    }
}

/// Parse `ASCEND_MODULE_LOG_LEVEL` as CANN documents it: `MOD=lvl` entries separated by
/// `:`, no spaces, `lvl` 0 (debug) to 4 (off), `MOD` a module of [`MODULES`]. Any error
/// (another character, an unknown module, a bad level, an empty entry) makes the whole
/// setting invalid: `None`, and the global level applies to every module.
pub fn parse_module_levels(v: &str) -> Option<ModuleLevels> {
    if v.is_empty() {
        return None;
    }
    let mut out = ModuleLevels::default();
    for entry in v.split(':') {
        let (name, lvl) = entry.split_once('=')?;
        let i = MODULES.iter().position(|m| *m == name)?;
        out.levels[i] = Some(match lvl {
            "0" => LogLevel::Debug,
            "1" => LogLevel::Info,
            "2" => LogLevel::Warning,
            "3" => LogLevel::Error,
            "4" => LogLevel::Off,
            _ => return None,
        });
    }
    Some(out)
}

/// Where and how much to log.
#[derive(Clone, Copy, Debug)]
pub struct Logger {
    /// The global level (`ASCEND_GLOBAL_LOG_LEVEL`).
    pub level: LogLevel,
    pub to_stdout: bool,
    /// Per-module overrides (`ASCEND_MODULE_LOG_LEVEL`).
    pub modules: ModuleLevels,
}

impl Default for Logger {
    /// CANN's defaults: ERROR and above, to stderr (used when the environment is invalid).
    fn default() -> Self {
        Logger {
            level: LogLevel::Error,
            to_stdout: false,
            modules: ModuleLevels::default(),
        }
    }
}

impl Logger {
    /// A logger configured from `cfg`.
    pub fn new(cfg: &Config) -> Logger {
        Logger {
            level: cfg.log_level,
            to_stdout: cfg.log_to_stdout,
            modules: cfg.module_log_levels,
        }
    }

    /// Whether lines at `level` are printed at the global level.
    pub fn enabled(&self, level: LogLevel) -> bool {
        level != LogLevel::Off && level >= self.level
    }

    /// Whether `module`'s lines at `level` are printed: its own level if
    /// `ASCEND_MODULE_LOG_LEVEL` sets one, else the global level.
    pub fn enabled_for(&self, module: &str, level: LogLevel) -> bool {
        let min = self.modules.get(module).unwrap_or(self.level);
        level != LogLevel::Off && level >= min
    }

    /// Print one line under `module` if `module` logs at `level`. Never fails.
    pub fn log(&self, level: LogLevel, module: &str, msg: &str) {
        if !self.enabled_for(module, level) {
            return;
        }
        self.write(level, module, msg);
    }

    /// Print one line whatever the level (run logs such as `HCCL_ENTRY_LOG_ENABLE`'s, which
    /// CANN's level settings do not filter). Never fails.
    pub fn write(&self, level: LogLevel, module: &str, msg: &str) {
        let line = format_line(level, module, msg);
        if self.to_stdout {
            let _ = std::io::stdout().lock().write_all(line.as_bytes());
        } else {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

/// The text of one log line, newline included.
pub fn format_line(level: LogLevel, module: &str, msg: &str) -> String {
    let tag = match level {
        LogLevel::Debug => "DEBUG",
        LogLevel::Info => "INFO",
        LogLevel::Warning => "WARNING",
        LogLevel::Error | LogLevel::Off => "ERROR",
    };
    let pid = std::process::id();
    let tid = npu_emu_ffi::os::gettid();
    format!("[{tag}] {module}({pid},{tid}): {msg}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_levels_follow_cann_rules() {
        let m = parse_module_levels("HCCL=4:ASCENDCL=1").unwrap();
        assert_eq!(m.get("HCCL"), Some(LogLevel::Off));
        assert_eq!(m.get("ASCENDCL"), Some(LogLevel::Info));
        assert_eq!(m.get("OP"), None);
        // Any syntax error, unknown module or bad level invalidates the whole setting.
        for bad in [
            "",
            "HCCL=4:",
            "HCCL = 4",
            "HCCL=5",
            "HCCL=4:NOPE=1",
            "hccl=4",
            "HCCL=4,OP=1",
            "HCCL",
            "HCCL=",
            "HCCL=04",
        ] {
            assert_eq!(parse_module_levels(bad), None, "{bad:?}");
        }
        let l = Logger {
            level: LogLevel::Error,
            to_stdout: false,
            modules: parse_module_levels("HCCL=4:OP=2").unwrap(),
        };
        assert!(!l.enabled_for("HCCL", LogLevel::Error));
        assert!(l.enabled_for("ASCENDCL", LogLevel::Error));
        assert!(!l.enabled_for("ASCENDCL", LogLevel::Warning));
        assert!(l.enabled_for("OP", LogLevel::Warning));
        assert!(!l.enabled_for("OP", LogLevel::Info));
        let l = Logger {
            level: LogLevel::Off,
            modules: parse_module_levels("HCCL=3").unwrap(),
            ..Logger::default()
        };
        assert!(l.enabled_for("HCCL", LogLevel::Error));
        assert!(!l.enabled_for("ASCENDCL", LogLevel::Error));
    }
}
