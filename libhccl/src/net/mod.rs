//! Messages between ranks: the transport interface the network algorithms are written
//! against (gloo's pairs, NCCL's `transport/net`), and its implementations:
//! - [`tcp`]: TCP between servers (the emulated RoCE path): an authenticated connection per
//!   pair of ranks on different servers, a reader thread per connection that matches
//!   incoming frames with posted receives, heartbeats, and failure notices;
//! - [`inproc`]: ranks as threads of one process, for unit tests of the algorithms.
//!
//! Ranks on the same server do not use these: they read each other's device memory through
//! the shared-memory control block (`crate::shm`, `crate::algo`).
//!
//! [`frame`] is the wire format, [`endpoint`] the choice of host address and ports.

pub mod endpoint;
pub mod frame;
pub mod inproc;
pub mod tcp;
pub mod whitelist;

use crate::errors::HResult;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// What a message is for. A receive matches a message by (communicator, peer, tag); the
/// algorithms build tags with [`tag`] so two messages of one pair never share one.
pub type Tag = u64;

/// Kinds of messages, the top byte of a [`Tag`].
pub mod kind {
    /// Data of a collective.
    pub const COLL: u8 = 1;
    /// A rank's call fingerprint (the call-time rendezvous).
    pub const FP: u8 = 2;
    /// Point-to-point: the receiver's "posted" notice (count, dtype).
    pub const P2P_POSTED: u8 = 3;
    /// Point-to-point: the data (or the sender's mismatch status).
    pub const P2P_DATA: u8 = 4;
    /// Barrier tokens.
    pub const BARRIER: u8 = 5;
}

/// A tag: `kind` (4 bits) | `seq` (low 20 bits of the operation's sequence number) |
/// `phase` (4 bits) | `a` (12 bits) | `b` (12 bits) | `seg` (12 bits). Algorithms choose
/// `phase`, `a`, `b` (a lane, a block, a chunk …) and `seg` (the segment of a pipelined
/// message) so that no two messages between one pair of ranks in one operation share one.
pub fn tag(kind: u8, seq: u64, phase: u8, a: u32, b: u32, seg: u32) -> Tag {
    debug_assert!(a < 4096 && b < 4096 && seg < 4096 && phase < 16 && kind < 16);
    ((kind as u64 & 0xf) << 60)
        | ((seq & 0xf_ffff) << 40)
        | ((phase as u64 & 0xf) << 36)
        | ((a as u64 & 0xfff) << 24)
        | ((b as u64 & 0xfff) << 12)
        | (seg as u64 & 0xfff)
}

/// Most segments one message may be cut into (see [`tag`]).
pub const MAX_SEGMENTS: u64 = 4096;

/// A posted receive as both sides of a transport see it.
pub struct RecvSlot {
    buf: usize,
    len: usize,
    state: AtomicU32,
    err: parking_lot::Mutex<Option<crate::errors::HcclError>>,
}

pub const POSTED: u32 = 0;
pub const FILLING: u32 = 1;
pub const DONE: u32 = 2;
pub const FAILED: u32 = 3;
pub const CANCELLED: u32 = 4;

impl RecvSlot {
    pub fn new(buf: *mut u8, len: usize) -> RecvSlot {
        RecvSlot {
            buf: buf as usize,
            len,
            state: AtomicU32::new(POSTED),
            err: parking_lot::Mutex::new(None),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn state(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }

    /// Finished (filled or failed).
    pub fn finished(&self) -> bool {
        matches!(self.state(), DONE | FAILED)
    }

    /// Claim the slot for filling; false if it was cancelled.
    pub fn begin_fill(&self) -> bool {
        self.state
            .compare_exchange(POSTED, FILLING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The destination (valid between [`Self::begin_fill`] and [`Self::complete`]).
    pub fn ptr(&self) -> *mut u8 {
        self.buf as *mut u8
    }

    pub fn complete(&self) {
        self.state.store(DONE, Ordering::Release);
    }

    /// Fail a posted or filling receive with `e` (no effect on a finished or cancelled one).
    pub fn fail(&self, e: crate::errors::HcclError) {
        let s = self.state();
        if s == POSTED || s == FILLING {
            *self.err.lock() = Some(e);
            self.state.store(FAILED, Ordering::Release);
        }
    }

    pub fn error(&self) -> Option<crate::errors::HcclError> {
        self.err.lock().clone()
    }

    /// Copy `data` in and complete (an eager message that arrived before the receive).
    pub fn fill_from(&self, data: &[u8]) -> bool {
        if !self.begin_fill() {
            return false;
        }
        if data.len() != self.len {
            self.fail(size_mismatch(data.len(), self.len));
            return true;
        }
        // SAFETY: the poster guarantees `buf` holds `len` bytes until the receive is waited
        // for or cancelled, and FILLING keeps a cancel waiting until we are done.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr(), data.len()) };
        self.complete();
        true
    }
}

pub fn size_mismatch(got: usize, want: usize) -> crate::errors::HcclError {
    crate::errors::HcclError::para(format!(
        "message of {got} bytes for a receive of {want} bytes: the ranks disagree about a count"
    ))
}

/// A posted receive. Dropping it before it finished cancels it (waiting for a transfer in
/// progress into its buffer to end first), so the buffer is never written afterwards.
pub struct Recv {
    pub slot: std::sync::Arc<RecvSlot>,
    pub peer: u32,
    pub tag: Tag,
}

impl Drop for Recv {
    fn drop(&mut self) {
        let s = &self.slot;
        if s.state
            .compare_exchange(POSTED, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
        // Being filled: the transport finishes or fails it promptly (its reads time out).
        while s.state() == FILLING {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

/// Moving bytes between the ranks of one communicator.
pub trait Net: Send + Sync {
    /// This rank and the rank count.
    fn rank(&self) -> u32;
    fn size(&self) -> u32;

    /// Send `len` bytes at `buf` to `peer` under `tag`; returns when the bytes may be reused.
    ///
    /// # Safety
    /// `buf` holds `len` readable bytes.
    unsafe fn send(
        &self,
        peer: u32,
        tag: Tag,
        buf: *const u8,
        len: usize,
        deadline: Option<Instant>,
    ) -> HResult<()>;

    /// Post a receive of exactly `len` bytes from `peer` under `tag` into `buf`.
    ///
    /// # Safety
    /// `buf` holds `len` writable bytes until the returned [`Recv`] is waited for or dropped.
    unsafe fn irecv(&self, peer: u32, tag: Tag, buf: *mut u8, len: usize) -> HResult<Recv>;

    /// Wait until `r` is filled; fails if the deadline passes, the peer is gone or failed,
    /// or any rank of the communicator announced a failure.
    fn wait(&self, r: &Recv, deadline: Option<Instant>) -> HResult<()>;

    /// Describe rank `p` for messages ("rank 3 (host h2, 10.0.0.2, pid 812)").
    fn who(&self, p: u32) -> String {
        format!("rank {p}")
    }
}

/// Receive `len` bytes from `peer` (post, then wait).
///
/// # Safety
/// `buf` holds `len` writable bytes.
pub unsafe fn recv(
    net: &dyn Net,
    peer: u32,
    tag: Tag,
    buf: *mut u8,
    len: usize,
    deadline: Option<Instant>,
) -> HResult<()> {
    // SAFETY: forwarded from the caller.
    let r = unsafe { net.irecv(peer, tag, buf, len)? };
    net.wait(&r, deadline)
}
