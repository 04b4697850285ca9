//! CANN-style logging: one line format, `[LEVEL] MODULE(pid,tid): message`.
//!
//! The level comes from `ASCEND_GLOBAL_LOG_LEVEL` (see [`crate::config`]); lines go to stderr,
//! or stdout with `ASCEND_SLOG_PRINT_TO_STDOUT=1`. A [`Logger`] is a value the runtime owns.

use crate::config::{Config, LogLevel};
use std::io::Write;

/// Where and how much to log.
#[derive(Clone, Copy, Debug)]
pub struct Logger {
    pub level: LogLevel,
    pub to_stdout: bool,
}

impl Logger {
    /// A logger configured from `cfg`.
    pub fn new(cfg: &Config) -> Logger {
        Logger {
            level: cfg.log_level,
            to_stdout: cfg.log_to_stdout,
        }
    }

    /// Whether lines at `level` are printed.
    pub fn enabled(&self, level: LogLevel) -> bool {
        level != LogLevel::Off && level >= self.level
    }

    /// Print one line if `level` is enabled. Never fails.
    pub fn log(&self, level: LogLevel, module: &str, msg: &str) {
        if !self.enabled(level) {
            return;
        }
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
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    format!("[{tag}] {module}({pid},{tid}): {msg}\n")
}
