//! Operation exports (`hccl.h`). Each checks its arguments on the calling thread (NULL
//! pointers → `HCCL_E_PTR`, bad values → `HCCL_E_PARA`, device buffers through the runtime),
//! meets its peers at the call-time rendezvous (which catches mismatched calls), then
//! enqueues the data movement on `stream`. Peers later than 20 ms leave the meeting to the
//! stream task (`CommInner::meet_late`), as a queued call on CANN would not wait for them.

use super::{bytes, dev_buf, entry, group, ptr};
use crate::algo::{self, BufRef, Op, P2p};
use crate::comm::{self as cm, CommInner, HcclComm};
use crate::errors::{non_null, HResult, HcclError};
use crate::fingerprint::{hash_u64s, opcode, parse_dtype, parse_redop, Dtype, Fp};
use crate::history::Status;
use npu_emu::config::LogLevel;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

fn prep(comm: HcclComm, stream: *mut c_void) -> HResult<Arc<CommInner>> {
    let c = cm::get(comm)?;
    super::resilience::check_not_suspended(comm)?;
    non_null(stream, "stream")?;
    Ok(c)
}

/// CANN returns success at once when an operation moves no element (a warning in the log),
/// before it checks anything else: the call is a no-op of the calling rank alone, whatever
/// its peers call (op_base's `count == 0` checks of AllReduce, Broadcast, AllGather,
/// ReduceScatter, Reduce, AlltoAll, Send and Recv; HcclScatter's check does not return, so
/// a Scatter of 0 elements stays a collective of every rank).
fn nothing_to_do(name: &str, what: &str, n: u64) -> bool {
    if n != 0 {
        return false;
    }
    crate::log(
        LogLevel::Warning,
        &format!("{name}: {what} is 0: nothing to do, success"),
    );
    true
}

fn opt_buf(
    c: &CommInner,
    p: *const c_void,
    len: u64,
    what: &str,
    needed: bool,
) -> HResult<Option<BufRef>> {
    if !needed {
        return Ok(None);
    }
    Ok(Some(dev_buf(c, p, len, what)?))
}

/// Rendezvous, then enqueue `op` unless there is nothing to move. Inside a group, held
/// until `HcclGroupEnd` (see [`group`]).
unsafe fn run_coll(
    c: &Arc<CommInner>,
    fp: Fp,
    op: Op,
    stream: *mut c_void,
    empty: bool,
) -> HResult<()> {
    if group::note(group::Kind::Collective, crate::fingerprint::op_name(fp.op))? {
        group::hold_collective(c, fp, op, stream, empty);
        return Ok(());
    }
    launch_coll(c, fp, op, stream, empty)
}

/// [`run_coll`] outside a group: meet the peers, then enqueue.
pub(crate) unsafe fn launch_coll(
    c: &Arc<CommInner>,
    mut fp: Fp,
    mut op: Op,
    stream: *mut c_void,
    empty: bool,
) -> HResult<()> {
    // On an idle stream a collective gets ready with its fingerprint (a small one stages its
    // input, a large one publishes its buffers); when every rank did, it completes at the
    // call and nothing is enqueued (see `algo::stage_at_call`).
    // A tiny one may also run ahead of its peers (`crate::defer`): the stream counts as
    // idle then if all it holds is this communicator's deferred collectives.
    let deferrable = !empty && crate::defer::deferrable(c, &op, stream);
    if deferrable {
        crate::defer::try_finish(c);
    }
    let idleness = if !empty {
        c.rt.stream_idleness(stream).unwrap_or(0)
    } else {
        0
    };
    // A gate is ours when we have deferred collectives: `deferrable` then checked that they
    // are on this stream (set_gate replaces any other gate there by running it first).
    // Or ours when the last collective completed at its call left its wait for the peers
    // there (`crate::defer::leave_done`): this one's rendezvous implies that wait.
    let idle = idleness == 1
        || (idleness == 2
            && ((deferrable && c.ndeferred.load(Ordering::Acquire) != 0)
                || c.done_gated.load(Ordering::Acquire) == stream as usize));
    // Staging and completing at the call read and write device memory on this thread: it
    // stays mapped until then even if another thread calls aclFinalize meanwhile (a stream
    // task needs no hold: aclFinalize stops the stream workers before it unmaps).
    let _hold = idle.then(|| c.rt.hold());
    // With a peer late, the rendezvous may be left to the stream task (as on CANN, where
    // the call only queues): not for a stream that captures into a model (each run of the
    // model meets the peers anew), an operation that moves nothing (it never reaches the
    // stream) or a communicator across servers (its fingerprints travel at the call).
    let may_be_late = || !empty && c.cross.is_none() && matches!(c.rt.capturing(stream), Ok(false));
    let (seq, all_staged, deferred) = c.rendezvous_deferrable(
        &mut fp,
        &mut |seq| algo::stage_at_call(c, &op, seq, idle),
        deferrable && idle,
        &may_be_late,
    )?;
    op.seq = seq;
    op.fp = Some(fp);
    // Left to the stream task (a peer late, this rank's input not staged), or deferred (a
    // tiny staged input that runs ahead).
    if deferred && c.holds_read(seq) {
        op.late = Some(Instant::now());
        return algo::enqueue(c, op, stream);
    }
    if deferred {
        return crate::defer::defer(c, op, stream);
    }
    if all_staged {
        return algo::complete_at_call_on(c, op, stream);
    }
    if empty {
        c.finish_turn(seq);
        c.history.push(
            seq,
            crate::history::What::Call(fp),
            Status::Ok { micros: 0 },
        );
        return Ok(());
    }
    algo::enqueue(c, op, stream)
}

unsafe fn u64s(p: *const c_void, n: u32, what: &str) -> HResult<Vec<u64>> {
    non_null(p, what)?;
    Ok(std::slice::from_raw_parts(p as *const u64, n as usize).to_vec())
}

/// Elements a buffer needs to hold every block `i` at `displs[i]` of `counts[i]` elements:
/// the largest `displs[i] + counts[i]`; an overflow is `HCCL_E_PARA` naming `what`.
fn extent(counts: &[u64], displs: &[u64], what: &str) -> HResult<u64> {
    counts.iter().zip(displs).try_fold(0u64, |end, (&c, &d)| {
        d.checked_add(c)
            .map(|e| end.max(e))
            .ok_or_else(|| HcclError::para(format!("{what} overflow")))
    })
}

fn check_root(root: u32, c: &CommInner) -> HResult<()> {
    if root >= c.n {
        return Err(HcclError::para(format!(
            "root={root} is out of range for a communicator of {} ranks",
            c.n
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn HcclAllReduce(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    count: u64,
    dataType: i32,
    op: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclAllReduce",
        comm,
        || {
            format!(
                "sendBuf={}, recvBuf={}, count={count}, dataType={dataType}, op={op}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            if nothing_to_do("HcclAllReduce", "count", count) {
                return Ok(());
            }
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", true)?;
            let rop = parse_redop(op, dt)?;
            let len = bytes(count, dt, "count")?;
            let mut o = Op::new(opcode::ALLREDUCE, String::new());
            o.send = opt_buf(&c, sendBuf, len, "sendBuf", count > 0)?;
            o.recv = opt_buf(&c, recvBuf, len, "recvBuf", count > 0)?;
            (o.dt, o.redop, o.count) = (dt, rop, count);
            let mut fp = Fp::new(opcode::ALLREDUCE);
            (fp.count, fp.dtype, fp.redop) = (count, dt as u32, rop as u32);
            run_coll(&c, fp, o, stream, count == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclBroadcast(
    buf: *mut c_void,
    count: u64,
    dataType: i32,
    root: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclBroadcast",
        comm,
        || {
            format!(
                "buf={}, count={count}, dataType={dataType}, root={root}, comm={}, stream={}",
                ptr(buf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            if nothing_to_do("HcclBroadcast", "count", count) {
                return Ok(());
            }
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", false)?;
            check_root(root, &c)?;
            let len = bytes(count, dt, "count")?;
            let mut o = Op::new(opcode::BROADCAST, String::new());
            o.send = opt_buf(&c, buf, len, "buf", count > 0)?;
            (o.dt, o.root, o.count) = (dt, root, count);
            let mut fp = Fp::new(opcode::BROADCAST);
            (fp.count, fp.dtype, fp.root) = (count, dt as u32, root);
            run_coll(&c, fp, o, stream, count == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclAllGather(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    sendCount: u64,
    dataType: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclAllGather",
        comm,
        || {
            format!(
                "sendBuf={}, recvBuf={}, sendCount={sendCount}, dataType={dataType}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            if nothing_to_do("HcclAllGather", "sendCount", sendCount) {
                return Ok(());
            }
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", false)?;
            let len = bytes(sendCount, dt, "sendCount")?;
            let total = bytes(
                sendCount.saturating_mul(c.n as u64),
                dt,
                "sendCount × rank size",
            )?;
            let mut o = Op::new(opcode::ALLGATHER, String::new());
            o.send = opt_buf(&c, sendBuf, len, "sendBuf", sendCount > 0)?;
            o.recv = opt_buf(&c, recvBuf, total, "recvBuf", sendCount > 0)?;
            (o.dt, o.count) = (dt, sendCount);
            let mut fp = Fp::new(opcode::ALLGATHER);
            (fp.count, fp.dtype) = (sendCount, dt as u32);
            run_coll(&c, fp, o, stream, sendCount == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclAllGatherV(
    sendBuf: *mut c_void,
    sendCount: u64,
    recvBuf: *mut c_void,
    recvCounts: *const c_void,
    recvDispls: *const c_void,
    dataType: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclAllGatherV",
        comm,
        || {
            format!(
                "sendBuf={}, sendCount={sendCount}, recvBuf={}, recvCounts={}, recvDispls={}, dataType={dataType}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(recvCounts),
                ptr(recvDispls),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", false)?;
            let counts = u64s(recvCounts, c.n, "recvCounts")?;
            let displs = u64s(recvDispls, c.n, "recvDispls")?;
            if counts[c.rank as usize] != sendCount {
                return Err(HcclError::para(format!(
                    "recvCounts[{}]={} must equal this rank's sendCount={sendCount}",
                    c.rank, counts[c.rank as usize]
                )));
            }
            let end = extent(&counts, &displs, "recvDispls + recvCounts")?;
            let total: u64 = counts.iter().sum();
            let mut o = Op::new(opcode::ALLGATHER_V, String::new());
            o.send = opt_buf(
                &c,
                sendBuf,
                bytes(sendCount, dt, "sendCount")?,
                "sendBuf",
                sendCount > 0,
            )?;
            o.recv = opt_buf(
                &c,
                recvBuf,
                bytes(end, dt, "recvDispls + recvCounts")?,
                "recvBuf",
                total > 0,
            )?;
            o.arrays = Some(
                (0..c.n as usize)
                    .map(|i| [0, 0, counts[i], displs[i]])
                    .collect(),
            );
            (o.dt, o.count) = (dt, sendCount);
            let mut fp = Fp::new(opcode::ALLGATHER_V);
            (fp.count, fp.dtype, fp.extra) = (sendCount, dt as u32, hash_u64s(&counts));
            run_coll(&c, fp, o, stream, total == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclReduceScatter(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: i32,
    op: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclReduceScatter",
        comm,
        || {
            format!(
                "sendBuf={}, recvBuf={}, recvCount={recvCount}, dataType={dataType}, op={op}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            if nothing_to_do("HcclReduceScatter", "recvCount", recvCount) {
                return Ok(());
            }
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", true)?;
            let rop = parse_redop(op, dt)?;
            let len = bytes(recvCount, dt, "recvCount")?;
            let total = bytes(
                recvCount.saturating_mul(c.n as u64),
                dt,
                "recvCount × rank size",
            )?;
            let mut o = Op::new(opcode::REDUCE_SCATTER, String::new());
            o.send = opt_buf(&c, sendBuf, total, "sendBuf", recvCount > 0)?;
            o.recv = opt_buf(&c, recvBuf, len, "recvBuf", recvCount > 0)?;
            (o.dt, o.redop, o.count) = (dt, rop, recvCount);
            let mut fp = Fp::new(opcode::REDUCE_SCATTER);
            (fp.count, fp.dtype, fp.redop) = (recvCount, dt as u32, rop as u32);
            run_coll(&c, fp, o, stream, recvCount == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclReduceScatterV(
    sendBuf: *mut c_void,
    sendCounts: *const c_void,
    sendDispls: *const c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: i32,
    op: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclReduceScatterV",
        comm,
        || {
            format!(
                "sendBuf={}, sendCounts={}, sendDispls={}, recvBuf={}, recvCount={recvCount}, dataType={dataType}, op={op}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(sendCounts),
                ptr(sendDispls),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", true)?;
            let rop = parse_redop(op, dt)?;
            let counts = u64s(sendCounts, c.n, "sendCounts")?;
            let displs = u64s(sendDispls, c.n, "sendDispls")?;
            if counts[c.rank as usize] != recvCount {
                return Err(HcclError::para(format!(
                    "recvCount={recvCount} must equal sendCounts[{}]={}",
                    c.rank, counts[c.rank as usize]
                )));
            }
            let end = extent(&counts, &displs, "sendDispls + sendCounts")?;
            let total: u64 = counts.iter().sum();
            let mut o = Op::new(opcode::REDUCE_SCATTER_V, String::new());
            o.send = opt_buf(
                &c,
                sendBuf,
                bytes(end, dt, "sendDispls + sendCounts")?,
                "sendBuf",
                total > 0,
            )?;
            o.recv = opt_buf(
                &c,
                recvBuf,
                bytes(recvCount, dt, "recvCount")?,
                "recvBuf",
                recvCount > 0,
            )?;
            o.arrays = Some(
                (0..c.n as usize)
                    .map(|i| [counts[i], displs[i], 0, 0])
                    .collect(),
            );
            (o.dt, o.redop, o.count) = (dt, rop, recvCount);
            let mut fp = Fp::new(opcode::REDUCE_SCATTER_V);
            (fp.count, fp.dtype, fp.redop, fp.extra) =
                (recvCount, dt as u32, rop as u32, hash_u64s(&counts));
            run_coll(&c, fp, o, stream, total == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclReduce(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    count: u64,
    dataType: i32,
    op: i32,
    root: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclReduce",
        comm,
        || {
            format!(
                "sendBuf={}, recvBuf={}, count={count}, dataType={dataType}, op={op}, root={root}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            if nothing_to_do("HcclReduce", "count", count) {
                return Ok(());
            }
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", true)?;
            let rop = parse_redop(op, dt)?;
            check_root(root, &c)?;
            let len = bytes(count, dt, "count")?;
            let mut o = Op::new(opcode::REDUCE, String::new());
            o.send = opt_buf(&c, sendBuf, len, "sendBuf", count > 0)?;
            o.recv = opt_buf(&c, recvBuf, len, "recvBuf", count > 0 && c.rank == root)?;
            (o.dt, o.redop, o.count, o.root) = (dt, rop, count, root);
            let mut fp = Fp::new(opcode::REDUCE);
            (fp.count, fp.dtype, fp.redop, fp.root) = (count, dt as u32, rop as u32, root);
            run_coll(&c, fp, o, stream, count == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclScatter(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: i32,
    root: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclScatter",
        comm,
        || {
            format!(
                "sendBuf={}, recvBuf={}, recvCount={recvCount}, dataType={dataType}, root={root}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            let c = prep(comm, stream)?;
            let dt = parse_dtype(dataType, "dataType", false)?;
            check_root(root, &c)?;
            let len = bytes(recvCount, dt, "recvCount")?;
            let total = bytes(
                recvCount.saturating_mul(c.n as u64),
                dt,
                "recvCount × rank size",
            )?;
            let mut o = Op::new(opcode::SCATTER, String::new());
            o.send = opt_buf(
                &c,
                sendBuf,
                total,
                "sendBuf",
                recvCount > 0 && c.rank == root,
            )?;
            o.recv = opt_buf(&c, recvBuf, len, "recvBuf", recvCount > 0)?;
            (o.dt, o.count, o.root) = (dt, recvCount, root);
            let mut fp = Fp::new(opcode::SCATTER);
            (fp.count, fp.dtype, fp.root) = (recvCount, dt as u32, root);
            run_coll(&c, fp, o, stream, recvCount == 0)
        },
    )
}

fn same_types(send: Dtype, recv: Dtype) -> HResult<()> {
    if send != recv {
        return Err(HcclError::para(format!(
            "sendType={} and recvType={} differ; they must be the same",
            send.name(),
            recv.name()
        )));
    }
    Ok(())
}

fn overlap(a: &Option<BufRef>, b: &Option<BufRef>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.phys.device == b.phys.device
                && a.phys.offset < b.phys.offset + b.len
                && b.phys.offset < a.phys.offset + a.len
        }
        _ => false,
    }
}

#[no_mangle]
pub unsafe extern "C" fn HcclAlltoAll(
    sendBuf: *const c_void,
    sendCount: u64,
    sendType: i32,
    recvBuf: *const c_void,
    recvCount: u64,
    recvType: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclAlltoAll",
        comm,
        || {
            format!(
                "sendBuf={}, sendCount={sendCount}, sendType={sendType}, recvBuf={}, recvCount={recvCount}, recvType={recvType}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            if nothing_to_do(
                "HcclAlltoAll",
                "sendCount and recvCount",
                sendCount.max(recvCount),
            ) {
                return Ok(());
            }
            let c = prep(comm, stream)?;
            let st = parse_dtype(sendType, "sendType", false)?;
            let rt = parse_dtype(recvType, "recvType", false)?;
            same_types(st, rt)?;
            if sendCount != recvCount {
                return Err(HcclError::para(format!(
                    "sendCount={sendCount} and recvCount={recvCount} differ; every rank sends and receives the same count to and from each peer"
                )));
            }
            let total = bytes(
                sendCount.saturating_mul(c.n as u64),
                st,
                "sendCount × rank size",
            )?;
            let mut o = Op::new(opcode::ALLTOALL, String::new());
            o.send = opt_buf(&c, sendBuf, total, "sendBuf", sendCount > 0)?;
            o.recv = opt_buf(&c, recvBuf, total, "recvBuf", sendCount > 0)?;
            if overlap(&o.send, &o.recv) {
                return Err(HcclError::para(
                    "sendBuf and recvBuf overlap; HcclAlltoAll cannot work in place",
                ));
            }
            (o.dt, o.dt2, o.count) = (st, rt, sendCount);
            let mut fp = Fp::new(opcode::ALLTOALL);
            (fp.count, fp.dtype, fp.count2, fp.dtype2) =
                (sendCount, st as u32, recvCount, rt as u32);
            run_coll(&c, fp, o, stream, sendCount == 0)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclAlltoAllV(
    sendBuf: *const c_void,
    sendCounts: *const c_void,
    sdispls: *const c_void,
    sendType: i32,
    recvBuf: *const c_void,
    recvCounts: *const c_void,
    rdispls: *const c_void,
    recvType: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclAlltoAllV",
        comm,
        || {
            format!(
                "sendBuf={}, sendCounts={}, sdispls={}, sendType={sendType}, recvBuf={}, recvCounts={}, rdispls={}, recvType={recvType}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(sendCounts),
                ptr(sdispls),
                ptr(recvBuf),
                ptr(recvCounts),
                ptr(rdispls),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            let c = prep(comm, stream)?;
            let st = parse_dtype(sendType, "sendType", false)?;
            let rt = parse_dtype(recvType, "recvType", false)?;
            same_types(st, rt)?;
            let sc = u64s(sendCounts, c.n, "sendCounts")?;
            let sd = u64s(sdispls, c.n, "sdispls")?;
            let rc = u64s(recvCounts, c.n, "recvCounts")?;
            let rd = u64s(rdispls, c.n, "rdispls")?;
            let send_end = extent(&sc, &sd, "sdispls + sendCounts")?;
            let recv_end = extent(&rc, &rd, "rdispls + recvCounts")?;
            let mut o = Op::new(opcode::ALLTOALLV, String::new());
            o.send = opt_buf(
                &c,
                sendBuf,
                bytes(send_end, st, "sdispls + sendCounts")?,
                "sendBuf",
                sc.iter().any(|&x| x > 0),
            )?;
            o.recv = opt_buf(
                &c,
                recvBuf,
                bytes(recv_end, rt, "rdispls + recvCounts")?,
                "recvBuf",
                rc.iter().any(|&x| x > 0),
            )?;
            if overlap(&o.send, &o.recv) {
                return Err(HcclError::para(
                    "sendBuf and recvBuf overlap; HcclAlltoAllV cannot work in place",
                ));
            }
            o.arrays = Some(
                (0..c.n as usize)
                    .map(|i| [sc[i], sd[i], rc[i], rd[i]])
                    .collect(),
            );
            (o.dt, o.dt2) = (st, rt);
            // Buffers are published even when this rank moves nothing: peers may still read.
            if o.send.is_none() {
                o.send = Some(BufRef::default());
            }
            let mut fp = Fp::new(opcode::ALLTOALLV);
            (fp.dtype, fp.dtype2) = (st as u32, rt as u32);
            run_coll(&c, fp, o, stream, false)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclAlltoAllVC(
    sendBuf: *const c_void,
    sendCountMatrix: *const c_void,
    sendType: i32,
    recvBuf: *const c_void,
    recvType: i32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclAlltoAllVC",
        comm,
        || {
            format!(
                "sendBuf={}, sendCountMatrix={}, sendType={sendType}, recvBuf={}, recvType={recvType}, comm={}, stream={}",
                ptr(sendBuf),
                ptr(sendCountMatrix),
                ptr(recvBuf),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            let c = prep(comm, stream)?;
            let st = parse_dtype(sendType, "sendType", false)?;
            let rt = parse_dtype(recvType, "recvType", false)?;
            same_types(st, rt)?;
            non_null(sendCountMatrix, "sendCountMatrix")?;
            let n = c.n as usize;
            let m = std::slice::from_raw_parts(sendCountMatrix as *const u64, n * n).to_vec();
            let r = c.rank as usize;
            let mut send_total = 0u64;
            let mut recv_total = 0u64;
            for j in 0..n {
                send_total = send_total
                    .checked_add(m[r * n + j])
                    .ok_or_else(|| HcclError::para("sendCountMatrix overflow"))?;
                recv_total = recv_total
                    .checked_add(m[j * n + r])
                    .ok_or_else(|| HcclError::para("sendCountMatrix overflow"))?;
            }
            let mut o = Op::new(opcode::ALLTOALLVC, String::new());
            o.send = opt_buf(
                &c,
                sendBuf,
                bytes(send_total, st, "sendCountMatrix row sum")?,
                "sendBuf",
                send_total > 0,
            )?;
            o.recv = opt_buf(
                &c,
                recvBuf,
                bytes(recv_total, rt, "sendCountMatrix column sum")?,
                "recvBuf",
                recv_total > 0,
            )?;
            if overlap(&o.send, &o.recv) {
                return Err(HcclError::para(
                    "sendBuf and recvBuf overlap; HcclAlltoAllVC cannot work in place",
                ));
            }
            if o.send.is_none() {
                o.send = Some(BufRef::default());
            }
            let all_zero = m.iter().all(|&x| x == 0);
            (o.dt, o.dt2) = (st, rt);
            let mut fp = Fp::new(opcode::ALLTOALLVC);
            (fp.dtype, fp.dtype2, fp.extra) = (st as u32, rt as u32, hash_u64s(&m));
            o.matrix = Some(m);
            run_coll(&c, fp, o, stream, all_zero)
        },
    )
}

fn note_p2p(c: &CommInner, op: u32, peer: u32, k: u64) {
    let id = &c.me().ident.0;
    id.p2p_op.store(op, Ordering::Relaxed);
    id.p2p_peer.store(peer, Ordering::Relaxed);
    id.p2p_k.store(k, Ordering::Relaxed);
}

fn check_peer(c: &CommInner, peer: u32, what: &str) -> HResult<()> {
    if peer >= c.n {
        return Err(HcclError::para(format!(
            "{what}={peer} is out of range for a communicator of {} ranks",
            c.n
        )));
    }
    if peer == c.rank {
        return Err(HcclError::para(format!(
            "{what}={peer} is this rank itself; send to and receive from other ranks"
        )));
    }
    Ok(())
}

unsafe fn p2p_item(
    c: &CommInner,
    send: bool,
    buf: *mut c_void,
    count: u64,
    dataType: i32,
    peer: u32,
    argn: &str,
) -> HResult<P2p> {
    let dt = parse_dtype(dataType, &format!("{argn}dataType"), false)?;
    check_peer(
        c,
        peer,
        &format!("{argn}{}", if send { "destRank" } else { "srcRank" }),
    )?;
    let len = bytes(count, dt, &format!("{argn}count"))?;
    let b = opt_buf(
        c,
        buf,
        len,
        &format!("{argn}{}", if send { "sendBuf" } else { "recvBuf" }),
        count > 0,
    )?;
    Ok(P2p {
        send,
        peer,
        k: 0,
        buf: b,
        count,
        dt,
    })
}

/// Give each point-to-point item its message number with its peer (at the call, or at
/// each execution of a model that captured it).
pub(crate) fn assign_k(c: &CommInner, items: &mut [P2p]) {
    let mut sk = c.send_k.lock();
    let mut rk = c.recv_k.lock();
    for it in items.iter_mut() {
        let v = if it.send {
            &mut sk[it.peer as usize]
        } else {
            &mut rk[it.peer as usize]
        };
        *v += 1;
        it.k = *v;
    }
    if let Some(last) = items.last() {
        note_p2p(
            c,
            if last.send {
                opcode::SEND
            } else {
                opcode::RECEIVE
            },
            last.peer,
            last.k,
        );
    }
}

/// The body of `HcclSend` (`send`) and `HcclRecv`: one point-to-point item with `peer`,
/// described in the history as `HcclSend(…, destRank=…)` / `HcclRecv(…, srcRank=…)`.
unsafe fn single_p2p(
    send: bool,
    buf: *mut c_void,
    count: u64,
    dataType: i32,
    peer: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> HResult<()> {
    if nothing_to_do(if send { "HcclSend" } else { "HcclRecv" }, "count", count) {
        return Ok(());
    }
    let c = prep(comm, stream)?;
    let (code, name, peer_arg) = if send {
        (opcode::SEND, "HcclSend", "destRank")
    } else {
        (opcode::RECEIVE, "HcclRecv", "srcRank")
    };
    let in_group = group::note(group::Kind::P2p, name)?;
    let mut items = vec![p2p_item(&c, send, buf, count, dataType, peer, "")?];
    // A capturing stream numbers its messages when the model runs.
    if !c.rt.capturing(stream)? {
        assign_k(&c, &mut items);
    }
    if in_group {
        let what = format!(
            "{name}(count={count}, dataType={}, {peer_arg}={peer}) message #{}",
            items[0].dt.name(),
            items[0].k
        );
        group::hold_p2p(&c, stream, items[0], what);
        return Ok(());
    }
    let mut o = Op::new(
        code,
        format!(
            "{name}(count={count}, dataType={}, {peer_arg}={peer}) message #{}",
            items[0].dt.name(),
            items[0].k
        ),
    );
    o.p2p = items;
    algo::enqueue(&c, o, stream)
}

#[no_mangle]
pub unsafe extern "C" fn HcclSend(
    sendBuf: *mut c_void,
    count: u64,
    dataType: i32,
    destRank: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclSend",
        comm,
        || {
            format!("sendBuf={}, count={count}, dataType={dataType}, destRank={destRank}, comm={}, stream={}", ptr(sendBuf), ptr(comm), ptr(stream))
        },
        || single_p2p(true, sendBuf, count, dataType, destRank, comm, stream),
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclRecv(
    recvBuf: *mut c_void,
    count: u64,
    dataType: i32,
    srcRank: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclRecv",
        comm,
        || {
            format!("recvBuf={}, count={count}, dataType={dataType}, srcRank={srcRank}, comm={}, stream={}", ptr(recvBuf), ptr(comm), ptr(stream))
        },
        || single_p2p(false, recvBuf, count, dataType, srcRank, comm, stream),
    )
}

/// `HcclSendRecvItem` (abi.md §2.7).
#[repr(C)]
pub struct HcclSendRecvItem {
    pub sendRecvType: i32,
    pub buf: *mut c_void,
    pub count: u64,
    pub dataType: i32,
    pub remoteRank: u32,
}

#[no_mangle]
pub unsafe extern "C" fn HcclBatchSendRecv(
    sendRecvInfo: *mut HcclSendRecvItem,
    itemNum: u32,
    comm: HcclComm,
    stream: *mut c_void,
) -> i32 {
    entry(
        "HcclBatchSendRecv",
        comm,
        || {
            format!(
                "sendRecvInfo={}, itemNum={itemNum}, comm={}, stream={}",
                ptr(sendRecvInfo),
                ptr(comm),
                ptr(stream)
            )
        },
        || {
            group::refuse_batch()?;
            let c = prep(comm, stream)?;
            non_null(sendRecvInfo, "sendRecvInfo")?;
            // CANN: an empty list is a no-op (a warning, then success).
            if itemNum == 0 {
                crate::log(
                    LogLevel::Warning,
                    "HcclBatchSendRecv: itemNum=0: the task list is empty, nothing to do",
                );
                return Ok(());
            }
            let raw = std::slice::from_raw_parts(sendRecvInfo, itemNum as usize);
            let mut items: Vec<P2p> = Vec::new();
            for (i, it) in raw.iter().enumerate() {
                let send = match it.sendRecvType {
                    0 => true,
                    1 => false,
                    t => {
                        return Err(HcclError::para(format!(
                            "sendRecvInfo[{i}].sendRecvType={t}; expected HCCL_SEND (0) or HCCL_RECV (1)"
                        )))
                    }
                };
                let item = p2p_item(
                    &c,
                    send,
                    it.buf,
                    it.count,
                    it.dataType,
                    it.remoteRank,
                    &format!("sendRecvInfo[{i}]."),
                )?;
                // The HCCL documentation: the list may not hold two send tasks to the same
                // rank, nor two receive tasks from the same rank (CANN returns HCCL_E_PARA).
                if let Some(j) = items
                    .iter()
                    .position(|p| p.send == send && p.peer == it.remoteRank)
                {
                    let (kind, dir) = if send {
                        ("HCCL_SEND", "to")
                    } else {
                        ("HCCL_RECV", "from")
                    };
                    return Err(HcclError::para(format!(
                        "sendRecvInfo[{i}] and sendRecvInfo[{j}] are both {kind} tasks {dir} rank {}; \
                         a task list may hold one send task to and one receive task from each rank",
                        it.remoteRank
                    )));
                }
                items.push(item);
            }
            if !c.rt.capturing(stream)? {
                assign_k(&c, &mut items);
            }
            let mut o = Op::new(
                opcode::BATCH_SEND_RECV,
                format!("HcclBatchSendRecv(itemNum={itemNum})"),
            );
            o.p2p = items;
            algo::enqueue(&c, o, stream)
        },
    )
}
