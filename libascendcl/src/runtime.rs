//! The one runtime instance of the process.
//!
//! API SURFACE FIXED BY THE LEAD; bodies are filled in by the runtime-core helper. Other
//! modules (memory API, rtapi table) rely on exactly these functions.

use npu_emu::config::{Config, LogLevel};
use npu_emu::log::Logger;
use npu_emu::node::Node;
use npu_emu::stream::Stream;
use npu_emu::Result;
use std::ffi::c_void;
use std::sync::Arc;

/// The runtime: created by the first `aclInit`, dropped by the last `aclFinalize`.
pub struct Runtime {
    pub cfg: Config,
    pub logger: Logger,
    /// The node this process joined (opened at `aclInit`).
    pub node: Node,
    /// Device and host memory bookkeeping of this process (see [`crate::mem`]).
    pub mem: crate::mem::MemState,
}

/// The initialised runtime, or `ACL_ERROR_UNINITIALIZE` (with a message) before `aclInit`
/// or after the last `aclFinalize`.
pub fn get() -> Result<Arc<Runtime>> {
    todo!("runtime-core helper")
}

impl Runtime {
    /// The calling thread's current device: (logical id, physical id). An error
    /// (`ACL_ERROR_RT_CONTEXT_NULL`) if the thread has no current context/device.
    pub fn current_device(&self) -> Result<(i32, u32)> {
        todo!()
    }
    /// Logical device id → physical id, or `ACL_ERROR_INVALID_DEVICE`-style error naming
    /// the id and the valid range.
    pub fn physical_device(&self, logical: i32) -> Result<u32> {
        let _ = logical;
        todo!()
    }
    /// The stream behind an `aclrtStream` handle; NULL = the current context's default
    /// stream. Destroyed or foreign handles are an error naming the handle.
    pub fn stream(&self, handle: *mut c_void) -> Result<Arc<Stream>> {
        let _ = handle;
        todo!()
    }
}

/// Log one line through the runtime's logger (works before `aclInit`: the environment is
/// read on first use).
pub fn log(level: LogLevel, msg: &str) {
    let logger = match Config::from_env() {
        Ok(c) => Logger::new(&c),
        Err(_) => Logger { level: LogLevel::Error, to_stdout: false },
    };
    logger.log(level, "ASCENDCL", msg);
}
