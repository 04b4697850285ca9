//! What runs on the stream. An HCCL call checks its arguments and enqueues an [`OpTask`];
//! when the stream reaches it, the task publishes this rank's buffers in the control block,
//! waits until every rank of its server published (barrier 1), runs the algorithm the
//! [`select`]or chose, then marks itself done and waits until every rank of its server is
//! done (barrier 2), so no rank returns while a peer still reads its buffers.
//!
//! On an idle stream (nothing ahead of the operation, so its input is final) a collective
//! gets ready at its call instead ([`stage_at_call`]: a small one stages its input, a large
//! one publishes its buffers, both before the call fingerprint goes out); when every rank
//! did, the call-time rendezvous doubles as barrier 1 and the operation completes on the
//! calling thread ([`complete_at_call`]), with nothing enqueued: one synchronisation for a
//! small operation, two for a large one, and no hand-off to a stream worker. A large one
//! leaves its second (the peers being done with its buffers) to its stream's gate
//! ([`crate::defer::leave_done`]), which the next collective's rendezvous implies.
//!
//! Algorithms see the operation through a [`fabric::Fabric`] (the ranks' places, direct
//! access to the buffers of the ranks on this server, messages to any rank), which [`Coll`]
//! implements over the control block and `crate::net`:
//! - [`direct`] (every rank on one server), one file per family: [`allreduce`] (AllReduce,
//!   Reduce), [`gather`] (AllGather[V], Broadcast, Scatter), [`reduce_scatter`]
//!   (ReduceScatter[V]), [`alltoall`] (AlltoAll, AlltoAllV, AlltoAllVC);
//! - [`small`]: small operations on one server, staged in the control block;
//! - [`hier`]: communicators spanning servers;
//! - [`p2p`]: Send, Recv and BatchSendRecv (mailboxes on a server, messages between servers).

pub mod allreduce;
pub mod alltoall;
pub mod fabric;
pub mod gather;
pub mod hier;
pub mod p2p;
pub mod reduce_scatter;
pub mod select;
pub mod small;
#[cfg(test)]
mod tests;

use crate::comm::CommInner;
use crate::errors::{
    code_name, HResult, HcclError, HCCL_E_INTERNAL, HCCL_E_REMOTE, HCCL_E_TIMEOUT,
};
use crate::fingerprint::{op_name, opcode, Dtype, RedOp};
use crate::history::Status;
use crate::reduce::Scratch;
use npu_emu::rtapi::{RtPhys, RtTask};
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// A device buffer argument, checked on the calling thread (and again when the operation
/// runs: [`recheck`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct BufRef {
    pub phys: RtPhys,
    pub len: u64,
    /// The device address the program passed (0 for a placeholder that moves nothing).
    pub addr: u64,
    /// Serial of the allocation that held it at the call.
    pub serial: u64,
    /// The argument's name, for messages.
    pub what: &'static str,
}

/// When a queued operation finally runs, its buffers must still be the allocations the
/// program passed: memory freed in between (and maybe allocated again at the same address,
/// for something else) is an error, never a silent read of stale memory or a write into the
/// new allocation. Copies do the same check (`aclrtMemcpyAsync`).
pub(crate) fn recheck(c: &CommInner, op: &Op) -> HResult<()> {
    let bufs = op
        .send
        .iter()
        .chain(op.recv.iter())
        .chain(op.p2p.iter().filter_map(|t| t.buf.as_ref()));
    for b in bufs {
        if b.addr == 0 || b.len == 0 {
            continue;
        }
        let gone = |how: String| {
            HcclError::para(format!(
                "{}={:#x} ({} bytes) {how} after {} was called and before it ran on the \
                 stream; device buffers must stay allocated until the stream is synchronized",
                b.what,
                b.addr,
                b.len,
                op.describe()
            ))
        };
        match c.rt.translate_serial(b.addr, b.len, b.what) {
            Ok((phys, serial)) if phys == b.phys && serial == b.serial => {}
            Ok(_) => {
                return Err(gone(
                    "was freed and allocated again (it is another allocation now)".to_string(),
                ))
            }
            Err(e) => {
                // The runtime's description of the address ("it is in freed memory …").
                let why = e
                    .msg
                    .split_once("is not usable device memory: ")
                    .map_or(e.msg.as_str(), |(_, w)| w);
                return Err(gone(format!("was freed ({why})")));
            }
        }
    }
    Ok(())
}

/// One point-to-point transfer.
#[derive(Clone, Copy, Debug)]
pub struct P2p {
    pub send: bool,
    pub peer: u32,
    /// Message number on the pair (1, 2, …).
    pub k: u64,
    pub buf: Option<BufRef>,
    pub count: u64,
    pub dt: Dtype,
}

/// An operation as enqueued.
#[derive(Clone, Debug)]
pub struct Op {
    pub code: u32,
    /// Collective sequence number (0 for point-to-point).
    pub seq: u64,
    /// Description of point-to-point operations (collectives describe their fingerprint).
    pub what: String,
    /// The collective's fingerprint (with its sequence number).
    pub fp: Option<crate::fingerprint::Fp>,
    pub dt: Dtype,
    pub dt2: Dtype,
    pub redop: RedOp,
    pub root: u32,
    pub count: u64,
    pub send: Option<BufRef>,
    pub recv: Option<BufRef>,
    /// Per peer: send count, send displacement, recv count, recv displacement (elements).
    pub arrays: Option<Vec<[u64; 4]>>,
    /// AlltoAllVC's matrix, row-major.
    pub matrix: Option<Vec<u64>>,
    pub p2p: Vec<P2p>,
    /// When the call published its fingerprint, if it left the rendezvous to the stream
    /// task (a peer was late: [`crate::comm::CommInner::meet_late`]).
    pub late: Option<Instant>,
}

impl Op {
    /// Bytes of this rank's buffers the operation touches (its input and output).
    pub fn own_bytes(&self) -> u64 {
        self.send.map_or(0, |b| b.len) + self.recv.map_or(0, |b| b.len)
    }

    /// The call as the user wrote it, with its sequence number.
    pub fn describe(&self) -> String {
        match &self.fp {
            Some(fp) => format!("{} #{}", fp.describe(), fp.seq),
            None => self.what.clone(),
        }
    }

    pub(crate) fn history_what(&self) -> crate::history::What {
        match &self.fp {
            Some(fp) => crate::history::What::Call(*fp),
            None => crate::history::What::Text(self.what.clone()),
        }
    }

    pub fn new(code: u32, what: String) -> Op {
        Op {
            code,
            seq: 0,
            what,
            fp: None,
            dt: Dtype::U8,
            dt2: Dtype::U8,
            redop: RedOp::Sum,
            root: 0,
            count: 0,
            send: None,
            recv: None,
            arrays: None,
            matrix: None,
            p2p: Vec::new(),
            late: None,
        }
    }
}

struct OpTask {
    comm: Arc<CommInner>,
    op: Op,
    hist: u64,
}

/// Run `f` with this thread's reduction scratch buffers; results are written with
/// non-temporal stores when `nt`.
pub fn with_scratch<R>(nt: bool, f: impl FnOnce(&mut Scratch) -> R) -> R {
    crate::globals::SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        s.nt = nt;
        f(&mut s)
    })
}

/// Whether `op` touches so much memory (all ranks' buffers together) that its results
/// should bypass the caches (see [`crate::reduce::NT_FOOTPRINT`]).
pub fn nt_for(c: &CommInner, op: &Op) -> bool {
    op.own_bytes().saturating_mul(c.n as u64) >= crate::reduce::NT_FOOTPRINT
}

/// [`nt_for`] as an algorithm sees it (through its fabric).
pub fn nt_of(f: &dyn fabric::Fabric, op: &Op) -> bool {
    op.own_bytes().saturating_mul(f.topo().n as u64) >= crate::reduce::NT_FOOTPRINT
}

/// The one-shot stream task for `op` (noted in the history as queued).
fn make_task(comm: &Arc<CommInner>, op: Op) -> (RtTask, u64) {
    let hist = comm.history.push(op.seq, op.history_what(), Status::Queued);
    comm.pending.fetch_add(1, Ordering::SeqCst);
    let task = Box::new(OpTask {
        comm: comm.clone(),
        op,
        hist,
    });
    (
        RtTask {
            ctx: Box::into_raw(task) as *mut c_void,
            run: run_task,
            drop: drop_task,
        },
        hist,
    )
}

/// An operation captured into a model (`aclmdlRICaptureBegin`): each execution of the model
/// calls it again on the launching thread, with a fresh sequence number (collectives meet
/// their peers there, as at a call) or fresh message numbers (point-to-point).
struct Captured {
    comm: Arc<CommInner>,
    op: Op,
}

unsafe extern "C" fn captured_instantiate(ctx: *mut c_void, out: *mut RtTask) -> i32 {
    let t = &*(ctx as *const Captured);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> HResult<RtTask> {
        let c = &t.comm;
        if c.destroyed.load(Ordering::SeqCst) {
            return Err(HcclError::new(
                crate::errors::HCCL_E_PARA,
                format!(
                    "{}: the communicator of this captured operation was destroyed (HcclCommDestroy) before the model ran",
                    t.op.describe()
                ),
            ));
        }
        let mut op = t.op.clone();
        if let Some(mut fp) = op.fp {
            fp.seq = 0;
            let seq = c.rendezvous(&mut fp)?;
            op.seq = seq;
            op.fp = Some(fp);
        }
        if !op.p2p.is_empty() {
            crate::api::ops::assign_k(c, &mut op.p2p);
        }
        Ok(make_task(c, op).0)
    }));
    let r = match r {
        Ok(r) => r,
        Err(p) => Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!(
                "internal error: {}",
                npu_emu_ffi::boundary::panic_text(p.as_ref())
            ),
        )),
    };
    match r {
        Ok(task) => {
            out.write(task);
            0
        }
        Err(e) => {
            t.comm.rt.set_error(&format!(
                "{} (captured in a model) failed when the model ran: {} [{}]",
                t.op.describe(),
                e.msg,
                code_name(e.code)
            ));
            acl_code(e.code)
        }
    }
}

unsafe extern "C" fn captured_drop(ctx: *mut c_void) {
    drop(Box::from_raw(ctx as *mut Captured));
}

/// Enqueue `op` on `stream`. On a stream that captures into a model, `op` goes into the
/// model instead: the sequence number its call took is given back at once (the capture
/// never runs it), and each execution of the model calls it anew.
///
/// # Safety
/// `stream` is an `aclrtStream` of this process.
pub unsafe fn enqueue(comm: &Arc<CommInner>, op: Op, stream: *mut c_void) -> HResult<()> {
    let capturing = match comm.rt.capturing(stream) {
        Ok(c) => c,
        Err(e) => {
            // The call took its sequence number at the rendezvous: give it back (the operation
            // will never run), or every later collective of the communicator would wait for it
            // until HCCL_EXEC_TIMEOUT. The peers learn that this rank's operation failed.
            if op.seq != 0 {
                failed_at_call(
                    comm,
                    &op,
                    &e,
                    &format!("bad stream: {}", crate::comm::first_line(&e.msg)),
                );
                comm.finish_turn(op.seq);
            }
            return Err(e);
        }
    };
    if capturing {
        if op.seq != 0 {
            comm.finish_turn(op.seq);
        }
        let what = op.describe();
        let tmpl = npu_emu::rtapi::RtTemplate {
            ctx: Box::into_raw(Box::new(Captured {
                comm: comm.clone(),
                op,
            })) as *mut c_void,
            instantiate: captured_instantiate,
            drop: captured_drop,
        };
        return comm.rt.enqueue_template(stream, tmpl, &what);
    }
    let seq = op.seq;
    let (rt_task, hist) = make_task(comm, op);
    if let Err(e) = comm.rt.enqueue(stream, rt_task) {
        comm.history.set(hist, Status::Failed { code: e.code });
        comm.mark_failed(
            seq,
            e.code,
            &format!("could not enqueue: {}", crate::comm::first_line(&e.msg)),
        );
        return Err(e);
    }
    Ok(())
}

/// At the call of collective `seq` (from the rendezvous, before the fingerprint is
/// published): when `stream_idle` (nothing is ahead of the operation on its stream, so its
/// input is final) and every earlier collective of the communicator finished, get ready to
/// run it at the call: a small operation stages its input ([`small::stage_at_call`]), a
/// direct one publishes its buffers (without posting: the stream path posts if not every
/// rank could do the same). True if this rank did.
pub fn stage_at_call(c: &CommInner, op: &Op, seq: u64, stream_idle: bool) -> bool {
    if op.code == opcode::BARRIER {
        // Nothing to stage: a rank whose stream is idle and whose earlier collectives all
        // finished has reached the barrier at its call; when every rank has, the
        // rendezvous was the barrier.
        return stream_idle && c.topo.single_server() && c.is_turn(seq);
    }
    if !stream_idle || op.count == 0 {
        return false;
    }
    if c.cross.is_some() {
        // Across servers only a small operation gets ready at the call: its input travels
        // with the fingerprint frames ([`crate::cross::Cross::exchange_fps`]).
        return small::stage_at_call(c, op, seq, stream_idle);
    }
    if !c.topo.single_server() {
        return false;
    }
    if small::fits(c, op) {
        return small::stage_at_call(c, op, seq, stream_idle);
    }
    if !c.is_turn(seq) {
        return false;
    }
    if !matches!(
        op.code,
        opcode::ALLREDUCE
            | opcode::REDUCE
            | opcode::BROADCAST
            | opcode::ALLGATHER
            | opcode::ALLGATHER_V
            | opcode::SCATTER
            | opcode::REDUCE_SCATTER
            | opcode::REDUCE_SCATTER_V
            | opcode::ALLTOALL
            | opcode::ALLTOALLV
            | opcode::ALLTOALLVC
    ) {
        return false;
    }
    Coll::new(c, seq, Instant::now())
        .store_publication(op)
        .is_ok()
}

/// Complete a collective on the calling thread after a rendezvous at which every rank got
/// ready at the call ([`stage_at_call`]): the rendezvous was the first synchronisation
/// (fingerprints, and the inputs or published buffers, travelled together). A small
/// operation needs no other; a direct one runs its algorithm and the done barrier. This is
/// what the stream task would have done, on a stream with nothing ahead of it.
pub fn complete_at_call(c: &Arc<CommInner>, op: Op) -> HResult<()> {
    complete_on(c, op, None)
}

/// [`complete_at_call`] from the call on `stream` (`launch_coll`): a direct collective
/// may leave its done barrier to the stream ([`crate::defer::leave_done`]).
///
/// # Safety
/// `stream`, if given, is an `aclrtStream` of this process.
pub unsafe fn complete_at_call_on(c: &Arc<CommInner>, op: Op, stream: *mut c_void) -> HResult<()> {
    complete_on(c, op, Some(stream))
}

fn complete_on(c: &Arc<CommInner>, op: Op, stream: Option<*mut c_void>) -> HResult<()> {
    // A barrier or a small operation finishes within about a µs of the rendezvous (no
    // wait, at most 64 KiB copied): the history says 0 µs for them, and the call saves two
    // clock reads, which count at every call of every rank when ranks outnumber cores.
    let start = (op.code != opcode::BARRIER && !small::fits(c, &op)).then(Instant::now);
    let r = complete_staged(c, &op, stream.map(|s| (c, s)));
    // Done reading the peers' fingerprint entries (a tiny input came in them).
    c.store_read(op.seq);
    c.finish_turn(op.seq);
    match r {
        Ok(()) => {
            c.history.push(
                op.seq,
                op.history_what(),
                Status::Ok {
                    micros: start.map_or(0, |s| s.elapsed().as_micros() as u64),
                },
            );
            Ok(())
        }
        Err(e) => {
            failed_at_call(c, &op, &e, crate::comm::first_line(&e.msg));
            Err(e)
        }
    }
}

/// The work of [`complete_at_call`]: every rank staged collective `op` at its call. With
/// `stream` (the call's), a direct one's wait for the peers to be done may be left there.
fn complete_staged(
    c: &CommInner,
    op: &Op,
    stream: Option<(&Arc<CommInner>, *mut c_void)>,
) -> HResult<()> {
    if op.code == opcode::BARRIER {
        Ok(())
    } else if small::fits(c, op) {
        small::complete_at_call(c, op, op.seq)
    } else {
        let coll = Coll::new(c, op.seq, Instant::now());
        coll.post_only(op.code);
        direct(&coll, op)?;
        coll.post_done()?;
        match stream {
            // SAFETY: the caller's stream (`complete_at_call_on`).
            Some((arc, s)) => unsafe { crate::defer::leave_done(arc, op.seq, s, coll.started) },
            None => coll.wait_done(),
        }
    }
}

/// Collective `op` failed on the calling thread (it never became a stream task): its
/// history entry says so, and the peers learn it with `why`.
fn failed_at_call(c: &CommInner, op: &Op, e: &crate::errors::HcclError, why: &str) {
    c.history
        .push(op.seq, op.history_what(), Status::Failed { code: e.code });
    c.mark_failed(op.seq, e.code, why);
}

/// Run `op` as its stream task would, on the calling thread (a deferred collective whose
/// peer did not stage: [`crate::defer`]). Returns the task's ACL code.
pub(crate) fn run_inline(comm: &Arc<CommInner>, op: Op) -> i32 {
    let (task, _) = make_task(comm, op);
    // SAFETY: a task just made, run once and dropped once, as a stream would.
    unsafe {
        let code = run_task(task.ctx);
        drop_task(task.ctx);
        code
    }
}

/// The stream task of a collective whose call left the rendezvous to it (a peer was late):
/// meet the peers and compare the fingerprints first, then run as at the call: complete
/// from what every rank staged, or take the stream path.
fn run_late(c: &CommInner, op: &Op, posted: Instant, start: Instant) -> HResult<()> {
    let seq = op.seq;
    let met = c.meet_late(seq, op.code, posted);
    let r = match met {
        Ok(true) => {
            let r = recheck(c, op).and_then(|()| complete_staged(c, op, None));
            c.store_read(seq);
            r
        }
        Ok(false) => {
            c.store_read(seq);
            execute(c, op, start)
        }
        Err(e) => Err(e),
    };
    c.release_read(seq);
    c.finish_turn(seq);
    r
}

unsafe extern "C" fn drop_task(ctx: *mut c_void) {
    let t = Box::from_raw(ctx as *mut OpTask);
    // Run or discarded: either way the next collective may go.
    if t.op.seq != 0 {
        if t.op.late.is_some() {
            t.comm.release_read(t.op.seq);
        }
        t.comm.finish_turn(t.op.seq);
    }
    t.comm.task_gone();
}

/// ACL code a failed HCCL task reports to the stream: a timeout is
/// `ACL_ERROR_RT_AICPU_TIMEOUT` (507017), anything else `ACL_ERROR_RT_AICPU_EXCEPTION`
/// (507018); the HCCL code is in the message and in `HcclGetCommAsyncError`.
pub(crate) fn acl_code(hccl: i32) -> i32 {
    if hccl == HCCL_E_TIMEOUT {
        507017
    } else {
        507018
    }
}

unsafe extern "C" fn run_task(ctx: *mut c_void) -> i32 {
    let t = &*(ctx as *const OpTask);
    let c = &t.comm;
    c.history.set(t.hist, Status::Running);
    let start = Instant::now();
    let r = npu_emu_ffi::boundary::catch(|| {
        if t.op.seq != 0 {
            c.wait_turn(t.op.seq, start)?;
        }
        if let Some(posted) = t.op.late {
            return run_late(c, &t.op, posted, start);
        }
        let r = execute(c, &t.op, start);
        if t.op.seq != 0 {
            c.finish_turn(t.op.seq);
        }
        r
    })
    .unwrap_or_else(|p| {
        Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!("internal error: {p}"),
        ))
    });
    match r {
        Ok(()) => {
            c.history.set(
                t.hist,
                Status::Ok {
                    micros: start.elapsed().as_micros() as u64,
                },
            );
            0
        }
        Err(e) => {
            c.mark_failed(t.op.seq, e.code, crate::comm::first_line(&e.msg));
            c.async_error.store(e.code, Ordering::Relaxed);
            c.history.set(t.hist, Status::Failed { code: e.code });
            let msg = format!(
                "{} failed on the stream: {} [{}]",
                t.op.describe(),
                e.msg,
                code_name(e.code)
            );
            c.rt.set_error(&msg);
            c.dump_history();
            acl_code(e.code)
        }
    }
}

/// What a peer published for one operation, after its tag was checked.
#[derive(Clone, Copy)]
struct Published {
    pid: u32,
    send: Option<(RtPhys, u64)>,
    recv: Option<(RtPhys, u64)>,
}

/// Bytes `[start, end)` of a buffer, if any were used.
type Span = Option<(u64, u64)>;

/// The collective protocol around the data movement.
pub struct Coll<'a> {
    pub c: &'a CommInner,
    pub seq: u64,
    pub started: Instant,
    /// Peers' publications, checked once per operation ([`Coll::published`]).
    peers: RefCell<Vec<Option<Published>>>,
    /// Per peer, the span of its send and of its receive buffer this operation touched:
    /// checked again before this rank says it is done ([`Coll::finish`]).
    touched: RefCell<Vec<[Span; 2]>>,
}

impl<'a> Coll<'a> {
    pub fn new(c: &'a CommInner, seq: u64, started: Instant) -> Coll<'a> {
        Coll {
            c,
            seq,
            started,
            peers: RefCell::new(vec![None; c.n as usize]),
            touched: RefCell::new(vec![[None; 2]; c.n as usize]),
        }
    }
}

fn buf_words(b: &crate::shm::Buf) -> [u64; 4] {
    [
        b.valid.load(Ordering::Relaxed) as u64,
        b.device.load(Ordering::Relaxed) as u64,
        b.offset.load(Ordering::Relaxed),
        b.len.load(Ordering::Relaxed),
    ]
}

/// Rank `p`'s publication for operation `seq` as read once from the control block: pid,
/// count, operation code, then the send and receive buffers ([`buf_words`]).
fn publication_words(c: &CommInner, p: u32, seq: u64) -> [u64; 11] {
    let s = c.slot(p);
    let b = &s.bufs[(seq % 2) as usize].0;
    let (sw, rw) = (buf_words(&b.send), buf_words(&b.recv));
    [
        s.ident.0.pid.load(Ordering::Relaxed) as u64,
        b.count.load(Ordering::Relaxed),
        b.code.load(Ordering::Relaxed) as u64,
        sw[0],
        sw[1],
        sw[2],
        sw[3],
        rw[0],
        rw[1],
        rw[2],
        rw[3],
    ]
}

/// Whether publication `words` is of an operation with per-peer arrays (AllGatherV,
/// ReduceScatterV, AlltoAllV), which its tag covers too.
fn has_arrays(words: &[u64; 11]) -> bool {
    matches!(
        words[2] as u32,
        opcode::ALLGATHER_V | opcode::REDUCE_SCATTER_V | opcode::ALLTOALLV
    )
}

/// The tag of rank `p`'s publication `words` for operation `seq`: over the sequence
/// number, rank, pid, count, operation code and both buffers, and the per-peer arrays for
/// the operations that have them (read from the control block as they are now). Keeping
/// the arrays of the others out keeps the tag short at any rank count: every rank checks
/// its peers' publications at every operation, on the critical path.
fn publication_tag(c: &CommInner, p: u32, seq: u64, words: &[u64; 11]) -> u64 {
    let arrays: &[std::sync::atomic::AtomicU64] = if has_arrays(words) {
        c.shm.arrays(c.slot_index(p))
    } else {
        &[]
    };
    crate::shm::tag_of(
        &c.key,
        [seq, p as u64]
            .into_iter()
            .chain(words.iter().copied())
            .chain(arrays.iter().map(|a| a.load(Ordering::Relaxed))),
    )
}

fn store_buf(b: &crate::shm::Buf, v: Option<BufRef>) {
    match v {
        Some(v) => {
            b.device.store(v.phys.device, Ordering::Relaxed);
            b.offset.store(v.phys.offset, Ordering::Relaxed);
            b.len.store(v.len, Ordering::Relaxed);
            b.valid.store(1, Ordering::Relaxed);
        }
        None => b.valid.store(0, Ordering::Relaxed),
    }
}

impl Coll<'_> {
    fn publish(&self, op: &Op) -> HResult<()> {
        self.store_publication(op)?;
        self.c.me().post.0.store_wake(self.seq as u32);
        Ok(())
    }

    /// Store this rank's buffers, count, per-peer arrays and their tag for this operation
    /// (peers trust them once `post`, or the call word of a rendezvous at which every rank
    /// published, says so).
    fn store_publication(&self, op: &Op) -> HResult<()> {
        let me = self.c.me();
        let b = &me.bufs[(self.seq % 2) as usize].0;
        store_buf(&b.send, op.send);
        store_buf(&b.recv, op.recv);
        b.count.store(op.count, Ordering::Relaxed);
        if let Some(arr) = &op.arrays {
            // One set of arrays per rank: peers still in an earlier collective completed at
            // its call may read them.
            crate::defer::settle_done(self.c)?;
            let a = self.c.shm.arrays(self.c.slot_index(self.c.rank));
            for (i, row) in arr.iter().enumerate() {
                for j in 0..4 {
                    a[i * 4 + j].store(row[j], Ordering::Relaxed);
                }
            }
        }
        // The code first: the tag covers it.
        b.code.store(op.code, Ordering::Relaxed);
        me.exec_op.0.store(op.code, Ordering::Relaxed);
        let words = publication_words(self.c, self.c.rank, self.seq);
        b.tag.store(
            publication_tag(self.c, self.c.rank, self.seq, &words),
            Ordering::Relaxed,
        );
        Ok(())
    }

    /// Rank `p`'s publication for this operation, its tag checked (once).
    fn published(&self, p: u32) -> HResult<Published> {
        if let Some(x) = self.peers.borrow()[p as usize] {
            return Ok(x);
        }
        let b = &self.c.slot(p).bufs[(self.seq % 2) as usize].0;
        let tag = b.tag.load(Ordering::Acquire);
        let words = publication_words(self.c, p, self.seq);
        // A publication equal to one this rank checked before (the same buffers, count and
        // operation, as in a training loop) is as safe to use as that one was, whoever wrote
        // it: computing its tag again is n tags per rank per operation on the critical path.
        // The arrays of V operations are not in `words`: those are always checked.
        let mut seen = self.c.pub_seen[p as usize].lock();
        let known = !has_arrays(&words) && *seen == Some(words);
        if !known && tag != publication_tag(self.c, p, self.seq, &words) {
            return Err(HcclError::new(
                HCCL_E_INTERNAL,
                format!(
                    "rank {p}'s buffers for this operation in the control block {} do not carry \
                     its tag: the record was damaged or written by something other than rank {p}; \
                     refusing to read or write memory through it",
                    self.c.shm.path.display()
                ),
            ));
        }
        let one = |x: [u64; 4]| {
            (x[0] != 0).then_some((
                RtPhys {
                    device: x[1] as u32,
                    _pad: 0,
                    offset: x[2],
                },
                x[3],
            ))
        };
        if !known && !has_arrays(&words) {
            *seen = Some(words);
        }
        drop(seen);
        let x = Published {
            pid: words[0] as u32,
            send: one([words[3], words[4], words[5], words[6]]),
            recv: one([words[7], words[8], words[9], words[10]]),
        };
        self.peers.borrow_mut()[p as usize] = Some(x);
        Ok(x)
    }

    fn post_only(&self, code: u32) {
        let me = self.c.me();
        me.exec_op.0.store(code, Ordering::Relaxed);
        me.post.0.store_wake(self.seq as u32);
    }

    fn wait_posted(&self) -> HResult<()> {
        self.c.wait_peers(
            &|s| &s.post.0,
            self.seq,
            &|| "start this operation on their stream".to_string(),
            self.started,
        )
    }

    fn finish(&self) -> HResult<()> {
        self.post_done()?;
        self.wait_done()
    }

    /// Say this rank is through with its peers' buffers (after checking they were still
    /// theirs throughout).
    fn post_done(&self) -> HResult<()> {
        self.recheck_touched()?;
        self.c.me().done.0.store_wake(self.seq as u32);
        Ok(())
    }

    /// Wait until every peer is through with this rank's buffers.
    fn wait_done(&self) -> HResult<()> {
        self.c.wait_peers(
            &|s| &s.done.0,
            self.seq,
            &|| "finish this operation".to_string(),
            self.started,
        )
    }

    fn buf(&self, p: u32, send: bool, off: u64, len: u64) -> HResult<*mut u8> {
        if len == 0 {
            return Ok(std::ptr::NonNull::<u8>::dangling().as_ptr());
        }
        let pb = self.published(p)?;
        let name = if send { "send" } else { "receive" };
        let Some((base, total)) = (if send { pb.send } else { pb.recv }) else {
            return Err(HcclError::new(
                HCCL_E_INTERNAL,
                format!("rank {p} published no {name} buffer"),
            ));
        };
        if off.checked_add(len).is_none_or(|e| e > total) {
            return Err(HcclError::para(format!(
                "rank {p}'s {name} buffer has {total} bytes but bytes {off}..{} are needed",
                off.saturating_add(len)
            )));
        }
        let phys = RtPhys {
            offset: base.offset.saturating_add(off),
            ..base
        };
        if p == self.c.rank {
            return self.c.rt.host(phys, len);
        }
        // A peer's buffer: only inside device memory that peer's process holds.
        let ptr = self.c.rt.peer_host(pb.pid, phys, len).map_err(|e| {
            if !self.c.slot(p).ident.0.alive() {
                return self.peer_gone(p, name);
            }
            HcclError::new(
                e.code,
                format!(
                    "rank {p}'s published {name} buffer cannot be used: {}",
                    e.msg
                ),
            )
        })?;
        let mut t = self.touched.borrow_mut();
        let span = &mut t[p as usize][usize::from(!send)];
        let end = off + len;
        *span = Some(span.map_or((off, end), |(a, b)| (a.min(off), b.max(end))));
        Ok(ptr)
    }

    /// The error for peer `p`, gone while this operation used its `name` buffer.
    fn peer_gone(&self, p: u32, name: &str) -> HcclError {
        let id = &self.c.slot(p).ident.0;
        // It exited and its memory went back to the node: that is the news (or, if it
        // failed first and then exited, its failure is).
        let msg = if id.failed_seq.load(Ordering::Acquire) != 0 {
            format!(
                "rank {p} failed and exited while this operation used its {name} buffer: {}",
                self.c.slot(p).reason()
            )
        } else {
            format!(
                "rank {p} (pid {}) died while this operation used its {name} buffer",
                id.pid.load(Ordering::Relaxed)
            )
        };
        HcclError::new(HCCL_E_REMOTE, msg)
    }

    /// Every peer buffer this operation read or wrote is still held by its process, now
    /// that this rank is through with them. A peer that dies after saying it is done
    /// (while others still read its buffers) has its memory reclaimed: its slabs are
    /// disowned and then punched, so what was read from them may be zeros. Seeing the
    /// owner words intact after the reads proves the reads came before any punching.
    /// Only peers that already said they are done need the look: one that has not will
    /// never say it if it died, and the done barrier then fails this rank.
    fn recheck_touched(&self) -> HResult<()> {
        std::sync::atomic::fence(Ordering::SeqCst);
        let peers = self.peers.borrow();
        for (p, spans) in self.touched.borrow().iter().enumerate() {
            let Some(pb) = peers[p] else { continue };
            let done = self.c.slot(p as u32).done.0.value.load(Ordering::SeqCst);
            if !crate::comm::seq_ge(done, self.seq as u32) {
                continue;
            }
            for (i, span) in spans.iter().enumerate() {
                let (Some((a, b)), Some((base, _))) =
                    (span, if i == 0 { pb.send } else { pb.recv })
                else {
                    continue;
                };
                let phys = RtPhys {
                    offset: base.offset.saturating_add(*a),
                    ..base
                };
                let name = if i == 0 { "send" } else { "receive" };
                if let Err(e) = self.c.rt.peer_host(pb.pid, phys, b - a) {
                    if !self.c.slot(p as u32).ident.0.alive() {
                        return Err(self.peer_gone(p as u32, name));
                    }
                    // Alive, but the memory is no longer its own: freed while in use.
                    return Err(HcclError::new(
                        e.code,
                        format!(
                            "rank {p}'s {name} buffer was released while this operation used                              it (freed before the collective completed?): {}",
                            e.msg
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Host pointer to bytes `off..off+len` of rank `p`'s send buffer.
    pub fn send_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8> {
        self.buf(p, true, off, len)
    }

    /// Host pointer to bytes `off..off+len` of rank `p`'s receive buffer.
    pub fn recv_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8> {
        self.buf(p, false, off, len)
    }

    /// Rank `p`'s published per-peer arrays, row `i`.
    pub fn row(&self, p: u32, i: u32) -> [u64; 4] {
        let a = self.c.shm.arrays(self.c.slot_index(p));
        let i = i as usize * 4;
        [
            a[i].load(Ordering::Relaxed),
            a[i + 1].load(Ordering::Relaxed),
            a[i + 2].load(Ordering::Relaxed),
            a[i + 3].load(Ordering::Relaxed),
        ]
    }
}

impl fabric::Fabric for Coll<'_> {
    fn topo(&self) -> &crate::topo::Topo {
        &self.c.topo
    }
    fn seq(&self) -> u64 {
        self.seq
    }
    fn deadline(&self) -> Option<Instant> {
        self.c.exec_timeout.map(|d| self.started + d)
    }
    fn send_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8> {
        Coll::send_of(self, p, off, len)
    }
    fn recv_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8> {
        Coll::recv_of(self, p, off, len)
    }
    fn row(&self, p: u32, i: u32) -> [u64; 4] {
        Coll::row(self, p, i)
    }
    fn net(&self) -> &dyn crate::net::Net {
        match &self.c.cross {
            Some(x) => &x.net,
            None => &NO_NET,
        }
    }
}

/// The network of a communicator on one server: nobody to talk to.
struct NoNet;
static NO_NET: NoNet = NoNet;

impl crate::net::Net for NoNet {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    unsafe fn send(
        &self,
        peer: u32,
        _: crate::net::Tag,
        _: *const u8,
        _: usize,
        _: Option<Instant>,
    ) -> HResult<()> {
        Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!("no network path to rank {peer}: the communicator is on one server"),
        ))
    }
    unsafe fn irecv(
        &self,
        peer: u32,
        _: crate::net::Tag,
        _: *mut u8,
        _: usize,
    ) -> HResult<crate::net::Recv> {
        Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!("no network path to rank {peer}: the communicator is on one server"),
        ))
    }
    fn wait(&self, _: &crate::net::Recv, _: Option<Instant>) -> HResult<()> {
        Ok(())
    }
}

/// Elements `[start, end)` of `total` that rank `r` of `n` handles.
pub fn part(total: u64, n: u32, r: u32) -> (u64, u64) {
    let s = (total as u128 * r as u128 / n as u128) as u64;
    let e = (total as u128 * (r as u128 + 1) / n as u128) as u64;
    (s, e)
}

/// A collective across servers whose buffers on this rank (input and output together) hold at
/// least this many bytes tells the runtime it waits for the network
/// (`task_waits_for_network`): it lasts milliseconds, so a host thread waiting for its stream
/// sleeps at once instead of polling. Measured at 8 MiB (2 servers x 1, 2, 4 ranks, 2–9%
/// faster); smaller ones keep polling, since a futex wake-up is a larger part of them and a
/// program that synchronizes after each one would wait for it every time.
const NETWORK_TASK_BYTES: u64 = 8 << 20;

fn execute(c: &CommInner, op: &Op, started: Instant) -> HResult<()> {
    if matches!(
        op.code,
        opcode::SEND | opcode::RECEIVE | opcode::BATCH_SEND_RECV
    ) {
        recheck(c, op)?;
        return p2p::run(c, op, started);
    }
    recheck(c, op)?;
    let coll = Coll::new(c, op.seq, started);
    let algo = select::select(c, op);
    if algo == select::Algo::Small {
        return small::run(&coll, op);
    }
    if algo == select::Algo::Hier && op.own_bytes() >= NETWORK_TASK_BYTES {
        // Milliseconds of waiting for other servers: a host thread waiting for this stream
        // sleeps rather than polls (it would take the CPU the transfers need).
        if let Ok(rt) = crate::rt::rt() {
            rt.task_waits_for_network();
        }
    }
    coll.publish(op)?;
    coll.wait_posted()?;
    if algo == select::Algo::Hier {
        hier::run(&coll, op)?;
        return coll.finish();
    }
    if op.code == opcode::BARRIER {
        return Ok(());
    }
    direct(&coll, op)?;
    coll.finish()
}

/// The direct algorithms (every rank on one server reads and writes its peers' buffers),
/// between the publish/wait barrier and the done barrier.
pub fn direct(f: &dyn fabric::Fabric, op: &Op) -> HResult<()> {
    match op.code {
        opcode::ALLREDUCE => allreduce::all_reduce(f, op),
        opcode::REDUCE => allreduce::reduce(f, op),
        opcode::BROADCAST => gather::broadcast(f, op),
        opcode::ALLGATHER => gather::all_gather(f, op),
        opcode::ALLGATHER_V => gather::all_gather_v(f, op),
        opcode::SCATTER => gather::scatter(f, op),
        opcode::REDUCE_SCATTER => reduce_scatter::reduce_scatter(f, op),
        opcode::REDUCE_SCATTER_V => reduce_scatter::reduce_scatter_v(f, op),
        opcode::ALLTOALL => alltoall::all_to_all(f, op),
        opcode::ALLTOALLV => alltoall::all_to_all_v(f, op),
        opcode::ALLTOALLVC => alltoall::all_to_all_vc(f, op),
        opcode::BARRIER => Ok(()),
        other => Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!("no algorithm for {}", op_name(other)),
        )),
    }
}
