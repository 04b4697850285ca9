//! Small collectives that run ahead of their peers, and the wait of large ones completed at
//! their call for their peers to be done ([`DoneGate`]).
//!
//! A collective whose input travels in its fingerprint's cache line (at most 8 bytes,
//! [`crate::algo::small`]) and whose stream is idle is published at its call: fingerprint
//! and input together. When every peer is there already, it completes at once on the
//! calling thread. When one is not, waiting for it would cost every rank a sleep and a
//! wake-up per operation once ranks outnumber cores (each must run once per operation). So
//! the rank does not wait: the operation is *deferred*, and its second half (wait for the
//! peers, compare the fingerprints, compute the output) runs later, in call order:
//! - at this rank's next collective of the communicator (without waiting, as far as the
//!   peers allow; a collective that cannot join the deferred ones waits for them all);
//! - before anything else touches the stream: the operations are the stream's *gate*
//!   (`RtApi::set_gate`), which the runtime runs on the host thread that enqueues on,
//!   synchronizes, captures or destroys the stream (`aclrtStreamQuery` runs it without
//!   waiting). So the stream still runs everything in order, and `aclrtSynchronizeStream`
//!   returns once the outputs are there, with any error (a mismatch, a dead peer) as the
//!   stream's error, as for an operation queued on the stream;
//! - at `HcclCommDestroy`.
//!
//! A deferred operation's fingerprint entry must stay until every peer has read it: the
//! ring has [`crate::shm::FP_RING`] entries per rank and a rank writes entry `s` only once every peer's
//! `read` word passed `s - FP_RING` ([`CommInner::ring_room`]). Ranks therefore run at most
//! `FP_RING - 1` collectives ahead of each other, and a run of small collectives costs a
//! context switch per rank every few dozen operations instead of one per operation.
//!
//! Which operation may join the deferred ones: another deferrable one on the same stream
//! whose input is not the output of one of them (an in-place chain waits for the previous
//! result). Everything else waits for them first: a collective at its rendezvous (once
//! its peers are there, so they are past the deferred ones too), any other stream work
//! through the gate.

use crate::algo::{self, BufRef, Op};
use crate::comm::CommInner;
use crate::errors::{HResult, HcclError, HCCL_E_INTERNAL};
use crate::history::Status;
use npu_emu::rtapi::RtGate;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// A communicator's deferred collectives, oldest first, all on one stream.
#[derive(Default)]
pub struct Deferred {
    /// The `aclrtStream` they are on.
    stream: usize,
    ops: VecDeque<(Op, Instant)>,
    /// The next blocking pass waits only for the operations up to this collective (0: all).
    block_through: u64,
}

/// Whether `op` may be deferred on `stream`: it is small enough to travel with its
/// fingerprint, every rank is on this server, and it can join the operations deferred
/// already (see the module documentation).
pub fn deferrable(c: &CommInner, op: &Op, stream: *mut c_void) -> bool {
    if op.count == 0
        || c.cross.is_some()
        || !c.topo.single_server()
        || !algo::small::tiny_fits(c, op)
    {
        return false;
    }
    if c.ndeferred.load(Ordering::Acquire) == 0 {
        return true;
    }
    let d = c.deferred.lock();
    d.stream == stream as usize
        && match op.send {
            Some(input) => !d.ops.iter().any(|(o, _)| overlaps(&input, output(o))),
            None => true,
        }
}

/// The buffer `op` writes.
fn output(op: &Op) -> Option<&BufRef> {
    if op.code == crate::fingerprint::opcode::BROADCAST {
        op.send.as_ref()
    } else {
        op.recv.as_ref()
    }
}

fn overlaps(a: &BufRef, b: Option<&BufRef>) -> bool {
    b.is_some_and(|b| {
        a.phys.device == b.phys.device
            && a.phys.offset < b.phys.offset + b.len
            && b.phys.offset < a.phys.offset + a.len
    })
}

/// Whether every collective before `seq` finished or is deferred (then `seq` may be staged
/// at its call, as when [`CommInner::is_turn`]).
pub fn turn_after_deferred(c: &CommInner, seq: u64) -> bool {
    if c.ndeferred.load(Ordering::Acquire) == 0 {
        return false;
    }
    let d = c.deferred.lock();
    match (d.ops.front(), d.ops.back()) {
        (Some((first, _)), Some((last, _))) => last.seq + 1 == seq && c.is_turn(first.seq),
        _ => false,
    }
}

/// Defer `op` (published, a peer missing) on `stream`.
///
/// # Safety
/// `stream` is an `aclrtStream` of this process.
pub unsafe fn defer(c: &Arc<CommInner>, op: Op, stream: *mut c_void) -> HResult<()> {
    let first = {
        let mut d = c.deferred.lock();
        let first = d.ops.is_empty();
        d.stream = stream as usize;
        d.ops.push_back((op, Instant::now()));
        c.ndeferred.fetch_add(1, Ordering::AcqRel);
        first
    };
    if !first {
        return Ok(());
    }
    let gate = RtGate {
        ctx: Box::into_raw(Box::new(c.clone())) as *mut c_void,
        run: gate_run,
        drop: gate_drop,
    };
    if let Err(e) = c.rt.set_gate(stream, gate) {
        // No gate: finish here.
        let _ = finish(c, true);
        return Err(e);
    }
    Ok(())
}

/// Finish the deferred operations whose peers are all there, without waiting (from a
/// collective's call, or while this rank waits for its peers).
pub fn try_finish(c: &CommInner) {
    pass(c, false);
}

/// Finish every deferred operation, waiting for the peers.
pub fn finish_all(c: &CommInner) {
    pass(c, true);
}

/// Finish the deferred operations up to collective `seq`, waiting for the peers, and the
/// later ones whose peers are there. Nothing to do (and no wait) when none is that old.
pub fn finish_through(c: &CommInner, seq: u64) {
    if c.ndeferred.load(Ordering::Acquire) == 0 {
        return;
    }
    {
        let mut d = c.deferred.lock();
        if d.ops.front().is_none_or(|(op, _)| op.seq > seq) {
            return;
        }
        d.block_through = seq;
    }
    pass(c, true);
}

/// Run the gate of the deferred operations' stream through the runtime (which keeps its
/// state: the gate goes when they are done). A failure is the stream's, reported by its
/// next synchronize.
fn pass(c: &CommInner, block: bool) {
    if c.ndeferred.load(Ordering::Acquire) == 0 {
        return;
    }
    let stream = c.deferred.lock().stream as *mut c_void;
    // SAFETY: a stream this rank deferred an operation on, which holds its gate (were it
    // destroyed meanwhile, its gate ran first and the list is empty: the call reports a
    // bad stream, ignored).
    let _ = unsafe { c.rt.pass_gate(stream, block) };
}

/// The gate's work: finish deferred operations in order, waiting for peers when `block`.
/// `Ok(true)`: none is left; `Err`: the ACL code of the one that failed (the later ones
/// never run).
fn finish(c: &Arc<CommInner>, block: bool) -> Result<bool, i32> {
    let mut d = c.deferred.lock();
    let through = std::mem::take(&mut d.block_through);
    while let Some((op, posted)) = d.ops.front() {
        let (seq, code) = (op.seq, op.code);
        let block = block && (through == 0 || seq <= through);
        let met = match c.meet_deferred(seq, code, *posted, block) {
            Ok(None) => return Ok(false),
            Ok(Some(all_staged)) => Ok(all_staged),
            Err(e) => Err(e),
        };
        let Some((op, _)) = d.ops.pop_front() else {
            break;
        };
        c.ndeferred.fetch_sub(1, Ordering::AcqRel);
        // A failure before its computation: the operation is over for this rank.
        let failed = |op: &Op, e: &HcclError| {
            c.store_read(seq);
            c.finish_turn(seq);
            c.history
                .push(seq, op.history_what(), Status::Failed { code: e.code });
            report(c, op, e)
        };
        let code = match met {
            // Every rank staged: compute from the inputs in the fingerprint entries, into
            // an output that must still be the allocation the program passed (as a queued
            // task checks).
            Ok(true) => match algo::recheck(c, &op) {
                Ok(()) => match algo::complete_at_call(c, op.clone()) {
                    Ok(()) => 0,
                    Err(e) => report(c, &op, &e),
                },
                Err(e) => failed(&op, &e),
            },
            // A peer did not (its stream was busy): the stream path, run here as the
            // stream would have.
            Ok(false) => {
                c.store_read(seq);
                algo::run_inline(c, op)
            }
            Err(e) => failed(&op, &e),
        };
        if code != 0 {
            fail_rest(c, &mut d, code);
            return Err(code);
        }
    }
    Ok(true)
}

/// After a deferred operation failed: the later ones never run.
fn fail_rest(c: &CommInner, d: &mut Deferred, code: i32) {
    for (op, _) in d.ops.drain(..) {
        c.ndeferred.fetch_sub(1, Ordering::AcqRel);
        c.finish_turn(op.seq);
        c.store_read(op.seq);
        c.history
            .push(op.seq, op.history_what(), Status::Failed { code });
    }
}

/// Say that deferred `op` failed with `e`, as a failed stream task does; returns the ACL
/// code for the stream.
fn report(c: &CommInner, op: &Op, e: &HcclError) -> i32 {
    c.mark_failed(op.seq, e.code, crate::comm::first_line(&e.msg));
    c.async_error.store(e.code, Ordering::Relaxed);
    let msg = format!(
        "{} failed on the stream: {} [{}]",
        op.describe(),
        e.msg,
        crate::errors::code_name(e.code)
    );
    c.rt.set_error(&msg);
    c.dump_history();
    algo::acl_code(e.code)
}

unsafe extern "C" fn gate_run(ctx: *mut c_void, block: i32) -> i32 {
    // SAFETY: `ctx` is the `Arc` boxed by `defer`, alive until `gate_drop`.
    let c = unsafe { &*(ctx as *const Arc<CommInner>) };
    match npu_emu_ffi::boundary::catch(|| finish(c, block != 0)) {
        Ok(Ok(true)) => 0,
        Ok(Ok(false)) => 1,
        Ok(Err(code)) => code,
        Err(p) => {
            let e = HcclError::new(HCCL_E_INTERNAL, format!("internal error: {p}"));
            c.rt.set_error(&e.msg);
            algo::acl_code(e.code)
        }
    }
}

unsafe extern "C" fn gate_drop(ctx: *mut c_void) {
    // SAFETY: boxed by `defer`, dropped once (the runtime's contract).
    let c = unsafe { Box::from_raw(ctx as *mut Arc<CommInner>) };
    // Dropped before it finished (the stream was aborted or destroyed by force): what is
    // left never runs, as the tasks of such a stream.
    let mut d = c.deferred.lock();
    if !d.ops.is_empty() {
        fail_rest(&c, &mut d, algo::acl_code(HCCL_E_INTERNAL));
    }
}

/// The done barrier of a collective completed at its call (`algo::complete_at_call`),
/// left to the stream. On one server a direct collective's peers read this rank's input
/// and write its output; the rank returns once its own part is done and its `done` word
/// says so, and the wait for the peers' `done` words becomes the stream's gate, as for
/// work queued there: `aclrtSynchronizeStream` (or anything else that touches the
/// stream) returns once the output is whole, with a peer's failure as the stream's error.
/// The next collective's call-time rendezvous implies that wait (a peer calls it only
/// after its own part of this one), so in a run of collectives each rank waits for its
/// peers once per operation instead of twice: with ranks outnumbering cores every wait
/// is a round of sleeps and wake-ups. The next collective publishes its buffers in the
/// record of the other parity (`shm::Bufs`), and the per-peer arrays, of which there is
/// one set, only after the wait ([`settle_done`]).
#[derive(Clone, Copy)]
pub struct DoneGate {
    stream: usize,
    seq: u64,
    started: Instant,
    /// Which gate waits for it (a gate keeps its number while it is made to wait for a
    /// later collective instead, see [`leave_done`]); a gate clears only its own record.
    gen: u64,
}

/// Numbers of the gates [`leave_done`] leaves.
static GATES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Whether every peer said it is done with collective `seq`; an error if one failed it
/// (a rank that failed a collective never says it is done with it, but it may go on and
/// say so of a later one).
fn peers_done(c: &CommInner, seq: u64) -> HResult<bool> {
    let mut all = true;
    for p in c.local_ranks() {
        if p == c.rank {
            continue;
        }
        let s = c.slot(p);
        if s.ident.0.failed_seq.load(Ordering::Acquire) == seq + 1 {
            return Err(HcclError::new(
                crate::errors::HCCL_E_REMOTE,
                format!(
                    "{}: rank {p} failed collective #{seq}, so this rank's output of it is not whole: {}",
                    c.who(),
                    s.reason()
                ),
            ));
        }
        all &= crate::comm::seq_ge(s.done.0.value.load(Ordering::Acquire), seq as u32);
    }
    Ok(all)
}

/// Wait until every peer is done with collective `g.seq`.
fn wait_done(c: &CommInner, g: &DoneGate) -> HResult<()> {
    if peers_done(c, g.seq)? {
        return Ok(());
    }
    let seq = g.seq;
    c.wait_peers(
        &|s| &s.done.0,
        seq,
        &|| format!("finish collective #{seq}"),
        g.started,
    )?;
    // A peer that failed it and went on to say it is done with a later one.
    peers_done(c, seq).map(|_| ())
}

/// After collective `seq`, completed at its call on `stream`, said this rank is done with
/// its peers' buffers: if the peers are not all done with this rank's, leave that wait
/// to the stream's gate (see [`DoneGate`]); else, or if the stream cannot take it, wait
/// here.
///
/// # Safety
/// `stream` is an `aclrtStream` of this process.
pub unsafe fn leave_done(
    c: &Arc<CommInner>,
    seq: u64,
    stream: *mut c_void,
    started: Instant,
) -> HResult<()> {
    if peers_done(c, seq)? {
        return Ok(());
    }
    let mut g = DoneGate {
        stream: stream as usize,
        seq,
        started,
        gen: 0,
    };
    {
        let mut d = c.done_gate.lock();
        if let Some(old) = d.as_mut() {
            // Our gate is on this stream, its collective's wait implied by this one's
            // rendezvous: it waits for this one instead (the record is cleared under this
            // lock when the gate finishes, so while it is here the gate is too).
            if old.stream == g.stream && peers_done(c, old.seq).unwrap_or(false) {
                *old = DoneGate { gen: old.gen, ..g };
                return Ok(());
            }
        }
    }
    // A gate left for an earlier collective runs first (reporting its failure, if any,
    // on its stream).
    settle_gate(c);
    g.gen = GATES.fetch_add(1, Ordering::Relaxed);
    *c.done_gate.lock() = Some(g);
    c.done_gated.store(g.stream, Ordering::Release);
    let gate = RtGate {
        ctx: Box::into_raw(Box::new((c.clone(), g.gen))) as *mut c_void,
        run: done_gate_run,
        drop: done_gate_drop,
    };
    if c.rt.set_gate(stream, gate).is_err() {
        // The gate was dropped (clearing the record): wait here.
        return wait_done(c, &g);
    }
    Ok(())
}

/// Run the gate of a collective completed at its call (waiting for its peers), if this
/// communicator left one; a failure is its stream's.
pub fn settle_gate(c: &CommInner) {
    let stream = c.done_gated.load(Ordering::Acquire);
    if stream == 0 {
        return;
    }
    // SAFETY: a stream this communicator left its gate on (had it been destroyed, the
    // gate would have run and cleared `done_gated`; a stale value gets a bad-stream
    // error, ignored).
    let ran = unsafe { c.rt.pass_gate(stream as *mut c_void, true) };
    if !matches!(ran, Ok(false)) {
        // Not run from here (a stream worker, a gate): wait for the peers directly.
        let g = *c.done_gate.lock();
        if let Some(g) = g {
            let _ = wait_done(c, &g);
        }
    }
}

/// Before this rank writes what its peers may still read for a collective completed at
/// its call (its per-peer arrays): wait until they are done with it.
pub fn settle_done(c: &CommInner) -> HResult<()> {
    if c.done_gated.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let g = *c.done_gate.lock();
    match g {
        Some(g) => wait_done(c, &g),
        None => Ok(()),
    }
}

/// The record gate number `gen` waits for, if it is still its own.
fn record_of(c: &CommInner, gen: u64) -> Option<DoneGate> {
    c.done_gate.lock().filter(|g| g.gen == gen)
}

/// The gate's work: wait (if `block`) until the peers are done with the collective its
/// record names, which may become a later one meanwhile. `Ok(true)`: done, record cleared.
fn run_gate(c: &CommInner, gen: u64, block: bool) -> Result<bool, (u64, HcclError)> {
    loop {
        let Some(g) = record_of(c, gen) else {
            return Ok(true);
        };
        let r = if block {
            wait_done(c, &g).map(|()| true)
        } else {
            peers_done(c, g.seq)
        };
        match r {
            Ok(false) => return Ok(false),
            Ok(true) => {
                let mut d = c.done_gate.lock();
                match *d {
                    // Made to wait for a later collective meanwhile: that one next.
                    Some(x) if x.gen == gen && x.seq != g.seq => continue,
                    Some(x) if x.gen == gen => {
                        *d = None;
                        c.done_gated.store(0, Ordering::Release);
                    }
                    _ => {}
                }
                return Ok(true);
            }
            Err(e) => {
                clear_record(c, gen);
                return Err((g.seq, e));
            }
        }
    }
}

unsafe extern "C" fn done_gate_run(ctx: *mut c_void, block: i32) -> i32 {
    // SAFETY: `ctx` is the pair boxed by `leave_done`, alive until `done_gate_drop`.
    let (c, gen) = unsafe { &*(ctx as *const (Arc<CommInner>, u64)) };
    match npu_emu_ffi::boundary::catch(|| run_gate(c, *gen, block != 0)) {
        Ok(Ok(true)) => 0,
        Ok(Ok(false)) => 1,
        Ok(Err((seq, e))) => {
            c.mark_failed(seq, e.code, crate::comm::first_line(&e.msg));
            c.async_error.store(e.code, Ordering::Relaxed);
            c.rt.set_error(&format!(
                "collective #{seq} failed on the stream: {} [{}]",
                e.msg,
                crate::errors::code_name(e.code)
            ));
            c.dump_history();
            algo::acl_code(e.code)
        }
        Err(p) => {
            let e = HcclError::new(HCCL_E_INTERNAL, format!("internal error: {p}"));
            c.rt.set_error(&e.msg);
            algo::acl_code(e.code)
        }
    }
}

/// Forget the record of gate `gen` (it ran, or went unrun).
fn clear_record(c: &CommInner, gen: u64) {
    let mut d = c.done_gate.lock();
    if d.is_some_and(|g| g.gen == gen) {
        *d = None;
        c.done_gated.store(0, Ordering::Release);
    }
}

unsafe extern "C" fn done_gate_drop(ctx: *mut c_void) {
    // SAFETY: boxed by `leave_done`, dropped once (the runtime's contract).
    let b = unsafe { Box::from_raw(ctx as *mut (Arc<CommInner>, u64)) };
    // Run, or dropped unrun (the stream was destroyed by force): nothing waits any more.
    clear_record(&b.0, b.1);
}
