//! Copies and fills between device and host memory: what `aclrtMemcpy*` and `aclrtMemset*`
//! do once the C side (`libascendcl/src/api/memory.rs`) has checked and converted their
//! arguments. Every engine sees the process's memory through [`Space`].
//!
//! Where things live (a new copy variant is a new file here):
//! - [`direction`]: where each end of a copy lives, and the direction CANN derives from the
//!   pointers and the `aclrtMemcpyKind`.
//! - [`linear`]: one contiguous copy (`aclrtMemcpy`, `aclrtMemcpyAsync`), its range and
//!   peer-access checks, and the staged `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE` copy.
//! - [`copy2d`]: pitched 2-D copies (`aclrtMemcpy2d[Async]`) and their limits.
//! - [`batch`]: batch copies (`aclrtMemcpyBatch[Async]`), validated as a whole before any runs.
//! - [`memset`]: fills of device memory and ACL host memory (`aclrtMemset[Async]`).
//! - [`reduce`]: the SDMA inline reduce (`aclrtReduceAsync`).
//!
//! Rules shared by all (CANN's, see the module docs of `libascendcl/src/api/memory.rs`):
//! device ranges are checked against the process's live allocations ([`Node::check`]) and
//! host ranges inside ACL host memory against its end, before anything is touched; an
//! asynchronous copy is checked when it is enqueued and again when the stream runs it; with
//! pageable host memory at one end an asynchronous copy synchronizes the stream and completes
//! before the call returns.
//!
//! [`Node::check`]: crate::node::Node::check

pub mod batch;
pub mod copy2d;
pub mod direction;
pub mod linear;
pub mod memset;
pub mod reduce;

use crate::memory::Space;
use crate::stream::{Op, Stream};
use crate::{Error, Result};
use std::sync::Arc;

/// Translate one end of a copy: device addresses through the node's range check, host
/// addresses as they are. Host ranges inside an `aclrtMallocHost` allocation (or a
/// registered range) are checked against its end too; other host memory is the caller's
/// contract.
pub fn translate<S: Space + ?Sized>(
    space: &S,
    addr: u64,
    len: u64,
    dev: bool,
    what: &str,
) -> Result<*mut u8> {
    if dev {
        return space.node().check(addr, len, what);
    }
    if let Some((start, size)) = space.host_range(addr) {
        let end = start + size;
        if addr.checked_add(len).is_none_or(|e| e > end) {
            return Err(Error::invalid(format!(
                "{what} range {addr:#x}..+{len} runs past the end of the host allocation \
                 {start:#x} ({size} bytes, from aclrtMallocHost or aclrtHostRegister) by {} bytes",
                addr.saturating_add(len) - end
            )));
        }
    }
    Ok(addr as *mut u8)
}

/// Enqueue `task` on `stream`, in order with the stream's other tasks. An error the task
/// meets there is reported as "`api` (run on the stream): …". The task is a stream
/// operation ([`Op`]): a capturing stream hands it to its model, which may run it any number
/// of times (it re-checks its ranges each time).
pub(crate) fn enqueue<S>(
    space: &Arc<S>,
    stream: &Stream,
    api: &'static str,
    task: impl Fn(&S) -> Result<()> + Send + Sync + 'static,
) -> Result<()>
where
    S: Space + Send + Sync + 'static,
{
    let space = space.clone();
    stream.enqueue_op(Op::run(op_kind(api), api, move || {
        task(&space).map_err(|e| on_stream(api, e))
    }))
}

/// The [`Op`] kind of a task of `api`: `"memset"` for the fills, `"memcpy"` for copies.
pub(crate) fn op_kind(api: &str) -> &'static str {
    if api.contains("Memset") {
        "memset"
    } else {
        "memcpy"
    }
}

/// `e`, met while the stream ran a task of `api`.
pub(crate) fn on_stream(api: &str, e: Error) -> Error {
    Error::new(e.code, format!("{api} (run on the stream): {}", e.msg))
}

#[cfg(test)]
pub(crate) mod testing;
