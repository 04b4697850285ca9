//! Small AllReduce, Reduce, Broadcast, AllGather and ReduceScatter: each rank copies its
//! input into its inline buffer in the control block (one of two, by sequence parity), posts,
//! waits until every rank posted, and computes its output from the peers' inline copies.
//! Nobody reads a peer's own buffers, so the second barrier is not needed: a rank reuses an
//! inline buffer two operations later, when every peer has posted the operation in between
//! and so has finished reading. One barrier instead of two is what small sizes are about.

use super::{with_scratch, Coll, Op};
use crate::comm::CommInner;
use crate::errors::HResult;
use crate::fingerprint::opcode;
use crate::reduce::{copy, reduce as kernel};
use crate::shm::INLINE_BYTES;

/// Whether `op` takes the small path. Depends only on values every rank agreed on at the
/// call-time rendezvous, so all ranks decide alike.
/// Most bytes a rank reads from its peers' inline copies in one small operation.
const SMALL_READS: u64 = 128 * 1024;

pub fn fits(c: &CommInner, op: &Op) -> bool {
    let bytes = op.count.saturating_mul(op.dt.size() as u64);
    let n = c.n as u64;
    let limit = INLINE_BYTES as u64;
    // Every rank reads n inputs here (instead of a 1/n share of them on the large path):
    // worth it while that stays small next to the cost of a second barrier.
    let reads = bytes.saturating_mul(n) <= SMALL_READS;
    match op.code {
        opcode::ALLREDUCE | opcode::REDUCE | opcode::ALLGATHER => bytes <= limit && reads,
        opcode::BROADCAST => bytes <= limit,
        opcode::REDUCE_SCATTER => bytes.saturating_mul(n) <= limit,
        _ => false,
    }
}

pub fn run(c: &Coll, op: &Op) -> HResult<()> {
    let cc = c.c;
    let (n, r) = (cc.n, cc.rank);
    let e = op.dt.size() as u64;
    let bytes = op.count * e;
    let parity = c.seq % 2;
    let in_bytes = if op.code == opcode::REDUCE_SCATTER {
        bytes * n as u64
    } else {
        bytes
    };
    let has_input = op.code != opcode::BROADCAST || r == op.root;
    if has_input {
        let b = op.send.expect("input buffer");
        let src = cc.rt.host(b.phys, in_bytes)?;
        // SAFETY: `src` is valid for `in_bytes` (the runtime checked the range); the inline buffer holds INLINE_BYTES >= in_bytes (`fits` chose this path).
        unsafe { copy(src, cc.shm.inline(r, parity), in_bytes as usize) };
    }
    c.post_only(op.code);
    c.wait_posted()?;
    let inl = |p: u32| cc.shm.inline(p, parity) as *const u8;
    let out = |len: u64| -> HResult<*mut u8> {
        let b = if op.code == opcode::BROADCAST {
            op.send
        } else {
            op.recv
        }
        .expect("output buffer");
        cc.rt.host(b.phys, len)
    };
    match op.code {
        opcode::ALLREDUCE | opcode::REDUCE => {
            if op.code == opcode::ALLREDUCE || r == op.root {
                let srcs: Vec<*const u8> = (0..n).map(inl).collect();
                let dst = out(bytes)?;
                // SAFETY: every rank's inline buffer holds its `bytes` of input (posted before `wait_posted` returned); `out` gave a host pointer valid for `bytes`.
                with_scratch(false, |s| unsafe {
                    kernel(op.dt, op.redop, &srcs, &[dst], op.count as usize, s)
                });
            }
        }
        opcode::BROADCAST => {
            if r != op.root {
                // SAFETY: the root's inline buffer holds `bytes` bytes of input; `out` is valid for `bytes`.
                unsafe { copy(inl(op.root), out(bytes)?, bytes as usize) };
            }
        }
        opcode::ALLGATHER => {
            let dst = out(bytes * n as u64)?;
            for p in 0..n {
                // SAFETY: each inline buffer holds `bytes` bytes; `dst` is valid for `bytes * n`, so block `p` fits.
                unsafe { copy(inl(p), dst.add((p as u64 * bytes) as usize), bytes as usize) };
            }
        }
        opcode::REDUCE_SCATTER => {
            let srcs: Vec<*const u8> = (0..n)
                // SAFETY: every inline buffer holds `bytes * n` bytes for a reduce-scatter, so block `r` is inside it.
                .map(|p| unsafe { inl(p).add((r as u64 * bytes) as usize) })
                .collect();
            let dst = out(bytes)?;
            // SAFETY: as above: every source is valid for `bytes`, `out` gave `dst` valid for `bytes`.
            with_scratch(false, |s| unsafe {
                kernel(op.dt, op.redop, &srcs, &[dst], op.count as usize, s)
            });
        }
        _ => unreachable!(),
    }
    Ok(())
}
