//! Small AllReduce, Reduce, Broadcast, AllGather and ReduceScatter: each rank copies its
//! input into its inline buffer in the control block (one of two, by sequence parity),
//! signals, waits until every rank did, and computes its output from the peers' inline
//! copies. Nobody reads a peer's own buffers, so no second barrier is needed.
//!
//! Two ways to get there, both with ONE synchronisation per operation:
//! - at the call ([`stage_at_call`], [`complete_at_call`]): when the stream is idle (so the
//!   input is final and nothing is ahead of the operation) and every earlier collective of
//!   the communicator finished, the rank stages its input before it publishes its call
//!   fingerprint. If every rank did, the call-time rendezvous, which checks the fingerprints,
//!   was also the data exchange: each rank computes its output on the calling thread and
//!   nothing is enqueued (`aclrtSynchronizeStream` afterwards has nothing to wait for);
//! - on the stream ([`run`]), otherwise: stage, post, wait for every rank's post, compute.
//!
//! An input of at most [`TINY_BYTES`] staged at the call does not go to the inline buffer:
//! it travels in the same cache line as the rank's fingerprint (`FpEntry::data`), which
//! every peer reads at the rendezvous anyway. An 8-byte AllReduce then touches one line per
//! peer besides its call word, instead of three (fingerprint, inline buffer, and the `done`
//! word that guards the inline buffer's reuse): with ranks outnumbering cores every rank
//! runs once per operation after a context switch, and each line is a cache (and often a
//! TLB) miss. A rank writes the entry of collective `seq` again only at collective `seq +
//! FP_RING`, after the rendezvous of `seq + FP_RING - 1`, which every peer reached after
//! computing `seq` on its calling thread. The stream path never uses it (the host may be
//! several calls ahead of the stream, with that entry rewritten).
//!
//! Reuse of an inline buffer: a rank stages into buffer `seq % 2` again only once every
//! peer's `done` word reached the last operation that read it (`inline_last`); each rank
//! stores `done` after computing. In steady state this holds already (the peers finished
//! that operation before the one in between could complete) and costs n loads.

use super::{with_scratch, Coll, Op};
use crate::comm::{seq_ge, CommInner};
use crate::errors::HResult;
use crate::fingerprint::opcode;
use crate::reduce::{copy, reduce as kernel};
use crate::shm::{FP_RING, INLINE_BYTES};
use std::sync::atomic::Ordering;

/// Most bytes a rank reads from its peers' inline copies in one small operation.
/// 128 KiB: every rank reads n inputs here (instead of a 1/n share of them on the large
/// path); below this the one barrier saved (several µs with ranks > cores) outweighs the
/// extra reads (128 KiB from L2 at ~50 GB/s: ~3 µs).
const SMALL_READS: u64 = 128 * 1024;

/// Per-rank input from which a Broadcast or AllGather goes direct when every rank can have
/// its own core. Staging puts two copies of the data in a row on the critical path (the
/// input into the control block, then out of it on every rank), while the direct path
/// copies each byte once, split over the ranks, for one more synchronisation: a spin of
/// well under a µs when no rank waits for a core. With ranks outnumbering cores that
/// synchronisation costs several µs of scheduling, so the small path stays.
const COPY_DIRECT_FROM: u64 = 16 * 1024;

/// Whether `op` takes the small path. Depends only on values every rank agreed on at the
/// call-time rendezvous (and on the server's core count), so all ranks decide alike.
pub fn fits(c: &CommInner, op: &Op) -> bool {
    let bytes = op.count.saturating_mul(op.dt.size() as u64);
    let n = c.n as u64;
    let limit = INLINE_BYTES as u64;
    let reads = bytes.saturating_mul(n) <= SMALL_READS;
    // Across servers the direct path does not exist: the alternative is messages on the
    // stream, so the one exchange at the call wins at every size it holds.
    let copy_direct =
        c.cross.is_none() && bytes >= COPY_DIRECT_FROM && c.n <= npu_emu_ffi::os::online_cpus();
    match op.code {
        opcode::ALLREDUCE | opcode::REDUCE => bytes <= limit && reads,
        opcode::ALLGATHER => bytes <= limit && reads && !copy_direct,
        opcode::BROADCAST => bytes <= limit && !copy_direct,
        opcode::REDUCE_SCATTER => bytes.saturating_mul(n) <= limit,
        _ => false,
    }
}

/// Inputs up to this size staged at the call travel with the fingerprint (see the module
/// documentation).
const TINY_BYTES: u64 = 8;

/// Whether `op` takes the small path with its input in its fingerprint entry (when staged
/// at the call): it may then be deferred ([`crate::defer`]).
pub fn tiny_fits(c: &CommInner, op: &Op) -> bool {
    fits(c, op) && tiny(c, op)
}

/// Whether this operation's input, staged at the call, travels with the fingerprint.
fn tiny(c: &CommInner, op: &Op) -> bool {
    in_bytes(c, op) <= TINY_BYTES
}

/// Bytes of this rank's input (what it stages).
fn in_bytes(c: &CommInner, op: &Op) -> u64 {
    let bytes = op.count * op.dt.size() as u64;
    if op.code == opcode::REDUCE_SCATTER {
        bytes * c.n as u64
    } else {
        bytes
    }
}

/// Whether every peer finished reading what this rank last staged in inline buffer
/// `seq % 2`.
fn inline_free(c: &CommInner, seq: u64) -> bool {
    let last = c.inline_last[(seq % 2) as usize].load(Ordering::Acquire);
    last == 0
        || c.local_ranks().all(|p| {
            p == c.rank || seq_ge(c.slot(p).done.0.value.load(Ordering::Acquire), last as u32)
        })
}

/// Copy this rank's input into its inline buffer for `seq`.
fn stage(c: &CommInner, op: &Op, seq: u64) -> HResult<()> {
    if op.code == opcode::BROADCAST && c.rank != op.root {
        return Ok(());
    }
    let len = in_bytes(c, op);
    let b = op.send.expect("input buffer");
    let src = c.rt.host(b.phys, len)?;
    // SAFETY: `src` is valid for `len` bytes (the runtime checked the range); the inline buffer holds INLINE_BYTES >= len (`fits` chose this path).
    unsafe {
        copy(
            src,
            c.shm.inline(c.slot_index(c.rank), seq % 2),
            len as usize,
        )
    };
    if let Some(x) = &c.cross {
        // Sent to the other servers with the fingerprint (`CommInner::rendezvous_at`).
        *x.mine.lock() = (seq, len as usize);
    }
    Ok(())
}

/// Copy this rank's input (at most [`TINY_BYTES`]) into its fingerprint entry for `seq`.
fn stage_tiny(c: &CommInner, op: &Op, seq: u64) -> HResult<()> {
    if op.code == opcode::BROADCAST && c.rank != op.root {
        return Ok(());
    }
    let len = in_bytes(c, op) as usize;
    let b = op.send.expect("input buffer");
    let src = c.rt.host(b.phys, len as u64)?;
    let mut v = [0u8; TINY_BYTES as usize];
    // SAFETY: `src` is valid for `len` bytes (the runtime checked the range) and `len` <= TINY_BYTES (`tiny` chose this path).
    unsafe { std::ptr::copy_nonoverlapping(src, v.as_mut_ptr(), len) };
    c.me().fp[(seq % FP_RING as u64) as usize]
        .data
        .store(u64::from_ne_bytes(v), Ordering::Relaxed);
    Ok(())
}

/// At the call of collective `seq` (from the rendezvous, before the fingerprint is
/// published): stage the input now if that is the same as staging it on the stream, that
/// is if `stream_idle` (the caller asked the runtime), every earlier collective finished,
/// and the peers are done with the inline buffer. False: the stream path will do it.
pub fn stage_at_call(c: &CommInner, op: &Op, seq: u64, stream_idle: bool) -> bool {
    if let Some(x) = &c.cross {
        // Across servers the input goes to the other servers' ranks in a message, and to
        // this server's from the inline buffer (never in the fingerprint entry).
        *x.mine.lock() = (0, 0);
        return stream_idle
            && op.count > 0
            && fits(c, op)
            && c.is_turn(seq)
            && inline_free(c, seq)
            && stage(c, op, seq).is_ok();
    }
    stream_idle
        && c.topo.single_server()
        && op.count > 0
        && fits(c, op)
        && (c.is_turn(seq) || crate::defer::turn_after_deferred(c, seq))
        && if tiny(c, op) {
            stage_tiny(c, op, seq).is_ok()
        } else {
            inline_free(c, seq) && stage(c, op, seq).is_ok()
        }
}

/// Complete collective `seq` on the calling thread after a rendezvous at which every rank
/// staged its input.
pub fn complete_at_call(c: &CommInner, op: &Op, seq: u64) -> HResult<()> {
    let me = c.me();
    me.exec_op.0.store(op.code, Ordering::Relaxed);
    me.post.0.store_wake(seq as u32);
    match &c.cross {
        None => compute(c, op, seq, Inputs::Local { in_fp: tiny(c, op) }),
        Some(x) => {
            let got = x.inputs.lock().take();
            match got {
                Some((s, remote)) if s == seq => compute(c, op, seq, Inputs::Cross(&remote)),
                _ => Err(crate::errors::HcclError::new(
                    crate::errors::HCCL_E_INTERNAL,
                    format!(
                        "{}: the inputs of collective #{seq} from the other servers are missing",
                        c.who()
                    ),
                )),
            }
        }
    }
}

/// Where [`compute`] finds every rank's staged input.
enum Inputs<'a> {
    /// Every rank is on this server: in the fingerprint entries (`in_fp`) or the inline
    /// buffers.
    Local { in_fp: bool },
    /// This server's ranks' in their inline buffers, the others' as they came with their
    /// fingerprints: (rank, input) pairs.
    Cross(&'a [(u32, Vec<u8>)]),
}

/// The stream path: stage, post, wait for every rank, compute.
pub fn run(co: &Coll, op: &Op) -> HResult<()> {
    let c = co.c;
    let seq = co.seq;
    let last = c.inline_last[(seq % 2) as usize].load(Ordering::Acquire);
    if last != 0 && !inline_free(c, seq) {
        c.wait_peers(
            &|s| &s.done.0,
            last,
            &|| format!("finish reading this rank's input of collective #{last}"),
            co.started,
        )?;
    }
    stage(c, op, seq)?;
    co.post_only(op.code);
    co.wait_posted()?;
    compute(c, op, seq, Inputs::Local { in_fp: false })
}

/// Compute this rank's output of collective `seq` from every rank's staged input (in the
/// fingerprint entries when `in_fp`, else in the inline buffers), then say so (`done`: the
/// peers may stage into their inline buffer of this parity again).
fn compute(cc: &CommInner, op: &Op, seq: u64, inputs: Inputs) -> HResult<()> {
    let (n, r) = (cc.n, cc.rank);
    let e = op.dt.size() as u64;
    let bytes = op.count * e;
    let parity = seq % 2;
    let entry = (seq % FP_RING as u64) as usize;
    let in_fp = matches!(inputs, Inputs::Local { in_fp: true });
    // Each input must hold what this rank reads of it: a remote one is checked here (its
    // length came over the network); local ones were staged by this library.
    let need = if op.code == opcode::REDUCE_SCATTER {
        bytes * n as u64
    } else {
        bytes
    };
    if let Inputs::Cross(remote) = inputs {
        let others = cc.topo.remote();
        if remote.len() != others.len()
            || others.iter().any(|p| !remote.iter().any(|(q, _)| q == p))
        {
            return Err(crate::errors::HcclError::new(
                crate::errors::HCCL_E_INTERNAL,
                format!(
                    "{}: collective #{seq} is missing inputs from the other servers",
                    cc.who()
                ),
            ));
        }
        for (q, d) in remote {
            let wanted = if op.code == opcode::BROADCAST && *q != op.root {
                0
            } else {
                need
            };
            if d.len() as u64 != wanted {
                return Err(crate::errors::HcclError::para(format!(
                    "{}: rank {q} sent {} bytes of input for collective #{seq}, this rank expects {wanted}: the ranks disagree about a count",
                    cc.who(),
                    d.len()
                )));
            }
        }
    }
    let inl = |p: u32| -> *const u8 {
        match inputs {
            Inputs::Local { in_fp: true } => cc.slot(p).fp[entry].data.as_ptr() as *const u8,
            Inputs::Cross(remote) if !cc.topo.same_server(p, r) => remote
                .iter()
                .find(|(q, _)| *q == p)
                .map_or(std::ptr::null(), |(_, d)| d.as_ptr()),
            _ => cc.shm.inline(cc.slot_index(p), parity) as *const u8,
        }
    };
    let out = |len: u64| -> HResult<*mut u8> {
        let b = if op.code == opcode::BROADCAST {
            op.send
        } else {
            op.recv
        }
        .expect("output buffer");
        cc.rt.host(b.phys, len)
    };
    let mut srcs = [std::ptr::null::<u8>(); 16];
    let mut many = Vec::new();
    let srcs: &mut [*const u8] = if n as usize <= srcs.len() {
        &mut srcs[..n as usize]
    } else {
        many.resize(n as usize, std::ptr::null());
        &mut many
    };
    match op.code {
        opcode::ALLREDUCE | opcode::REDUCE => {
            if op.code == opcode::ALLREDUCE || r == op.root {
                for (p, s) in srcs.iter_mut().enumerate() {
                    *s = inl(p as u32);
                }
                let dst = out(bytes)?;
                // SAFETY: every rank's inline buffer (or fingerprint entry, `in_fp`: 8 bytes >= its input) holds its `bytes` of input, staged before the synchronisation that preceded this; `out` gave a host pointer valid for `bytes`.
                with_scratch(false, |s| unsafe {
                    kernel(op.dt, op.redop, srcs, &[dst], op.count as usize, s)
                });
            }
        }
        opcode::BROADCAST => {
            if r != op.root {
                // SAFETY: the root's inline buffer (or fingerprint entry) holds `bytes` bytes of input; `out` is valid for `bytes`.
                unsafe { copy(inl(op.root), out(bytes)?, bytes as usize) };
            }
        }
        opcode::ALLGATHER => {
            let dst = out(bytes * n as u64)?;
            for p in 0..n {
                // SAFETY: each inline buffer (or fingerprint entry) holds `bytes` bytes; `dst` is valid for `bytes * n`, so block `p` fits.
                unsafe { copy(inl(p), dst.add((p as u64 * bytes) as usize), bytes as usize) };
            }
        }
        opcode::REDUCE_SCATTER => {
            for (p, s) in srcs.iter_mut().enumerate() {
                // SAFETY: every inline buffer (or fingerprint entry) holds `bytes * n` bytes for a reduce-scatter, so block `r` is inside it.
                *s = unsafe { inl(p as u32).add((r as u64 * bytes) as usize) };
            }
            let dst = out(bytes)?;
            // SAFETY: as above: every source is valid for `bytes`, `out` gave `dst` valid for `bytes`.
            with_scratch(false, |s| unsafe {
                kernel(op.dt, op.redop, srcs, &[dst], op.count as usize, s)
            });
        }
        _ => unreachable!(),
    }
    if !in_fp {
        cc.inline_last[parity as usize].store(seq, Ordering::Release);
    }
    cc.me().done.0.store_wake(seq as u32);
    Ok(())
}
