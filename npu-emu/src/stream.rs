//! Streams: an ordered task queue run by one worker thread each (DESIGN §2).
//!
//! API SURFACE FIXED BY THE LEAD; bodies are filled in by the runtime-core helper.
//! Host calls that are asynchronous return at once; a task's error is kept and returned by
//! the next [`Stream::synchronize`] (as on hardware).

use crate::error::Result;
use std::time::Duration;

/// A unit of work on a stream.
pub type Task = Box<dyn FnOnce() -> Result<()> + Send + 'static>;

/// One stream with its worker thread.
pub struct Stream {
    _private: (),
}

impl Stream {
    /// Append `task`; it runs after everything enqueued before it.
    pub fn enqueue(&self, task: Task) -> Result<()> {
        let _ = task;
        todo!("runtime-core helper")
    }
    /// Wait for every task enqueued so far; `None` = forever. Returns the first error of an
    /// asynchronous task since the last synchronize (then clears it), or a timeout error.
    pub fn synchronize(&self, timeout: Option<Duration>) -> Result<()> {
        let _ = timeout;
        todo!()
    }
}
