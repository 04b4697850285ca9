//! What an algorithm sees of one operation on one rank ([`Fabric`]): where the ranks are
//! ([`Topo`]), direct access to the buffers of the ranks on its own server (the shared-memory
//! transport: peers' device memory, checked against what they published), and messages to
//! any rank ([`Net`]: TCP to other servers; in unit tests, in-process).
//!
//! The algorithms never know which transport is behind it, so the same code runs over shared
//! memory and TCP in a job, and over the in-process transport in unit tests.

use crate::errors::HResult;
use crate::net::Net;
use crate::topo::Topo;
use std::time::Instant;

/// Default segment of a pipelined message: big enough that per-message costs vanish,
/// small enough that reducing one segment overlaps receiving the next.
pub const SEGMENT: u64 = 1 << 20;

pub trait Fabric {
    fn topo(&self) -> &Topo;
    /// The operation's sequence number (the same on every rank).
    fn seq(&self) -> u64;
    /// When the operation times out (`HCCL_EXEC_TIMEOUT`).
    fn deadline(&self) -> Option<Instant>;
    /// Bytes `off..off+len` of rank `p`'s send buffer (`p` on this server).
    fn send_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8>;
    /// Bytes `off..off+len` of rank `p`'s receive buffer (`p` on this server).
    fn recv_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8>;
    /// Row `i` of rank `p`'s per-peer arrays (send count, send displacement, receive count,
    /// receive displacement), `p` on this server.
    fn row(&self, p: u32, i: u32) -> [u64; 4];
    /// Messages to and from any rank.
    fn net(&self) -> &dyn Net;
    /// Segment size of pipelined messages (tests make it tiny to reach multi-segment paths
    /// with small buffers).
    fn segment(&self) -> u64 {
        SEGMENT
    }
}
