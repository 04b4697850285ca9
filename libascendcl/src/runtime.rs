//! The one runtime instance of the process. PLACEHOLDER: owned by the helper building
//! devices/contexts/streams/events; keep the public functions below (others rely on them).

use npu_emu::config::{Config, LogLevel};
use npu_emu::log::Logger;

/// Log one line through the runtime's logger (works before `aclInit`: the environment is
/// read on first use).
pub fn log(level: LogLevel, msg: &str) {
    let logger = match Config::from_env() {
        Ok(c) => Logger::new(&c),
        Err(_) => Logger { level: LogLevel::Error, to_stdout: false },
    };
    logger.log(level, "ASCENDCL", msg);
}
