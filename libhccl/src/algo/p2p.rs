//! Send, Recv and BatchSendRecv through per-pair mailboxes in the control block. The
//! receiver posts its buffer; the sender waits for it (so `HcclSend` blocks its stream until
//! the matching `HcclRecv` is posted, as in CANN), copies straight into it and marks the
//! message done; the receiver waits for that.

use super::{Op, P2p};
use crate::comm::{seq_ge, CommInner};
use crate::errors::{
    HResult, HcclError, HCCL_E_INTERNAL, HCCL_E_PARA, HCCL_E_REMOTE, HCCL_E_TIMEOUT,
};
use crate::fingerprint::dtype_name;
use crate::reduce::copy;
use crate::shm::{self, Mbox, MBOX_DEPTH};
use npu_emu::rtapi::RtPhys;
use npu_emu::wait::{wait_until, WaitError, Word};
use std::sync::atomic::Ordering;
use std::time::Instant;

enum Why {
    Dead,
    Failed,
    Destroyed,
}

/// Wait until `w` reaches `k`, watching `peer`.
fn wait_word(
    c: &CommInner,
    w: &Word,
    k: u64,
    peer: u32,
    started: Instant,
    waiting_for: &dyn Fn() -> String,
) -> HResult<()> {
    let t = k as u32;
    let deadline = c.exec_timeout.map(|d| started + d);
    let stalled = std::cell::Cell::new(false);
    let r = wait_until(
        &c.policy,
        w,
        || seq_ge(w.value.load(Ordering::Acquire), t),
        deadline,
        || {
            c.hint_stalled(&[peer], started, &stalled, waiting_for);
            let id = &c.slot(peer).ident.0;
            if id.failed_seq.load(Ordering::Acquire) != 0 {
                return Err(Why::Failed);
            }
            if !id.alive() {
                return Err(Why::Dead);
            }
            if id.state.load(Ordering::Acquire) == shm::STATE_DESTROYED {
                return Err(Why::Destroyed);
            }
            Ok(())
        },
    );
    match r {
        Ok(()) => Ok(()),
        Err(WaitError::TimedOut) => Err(HcclError::new(
            HCCL_E_TIMEOUT,
            format!(
                "timed out after {} s (HCCL_EXEC_TIMEOUT) waiting for {}; {}",
                c.exec_timeout.map(|d| d.as_secs()).unwrap_or(0),
                waiting_for(),
                c.describe_rank(peer)
            ),
        )),
        Err(WaitError::Check(Why::Dead)) => Err(HcclError::new(
            HCCL_E_REMOTE,
            format!(
                "rank {peer} died while we waited for {}; {}",
                waiting_for(),
                c.describe_rank(peer)
            ),
        )),
        Err(WaitError::Check(Why::Destroyed)) => Err(HcclError::new(
            HCCL_E_REMOTE,
            format!(
                "rank {peer} destroyed its communicator while we waited for {}",
                waiting_for()
            ),
        )),
        Err(WaitError::Check(Why::Failed)) => Err(HcclError::new(
            HCCL_E_REMOTE,
            format!(
                "rank {peer} failed while we waited for {}: {}",
                waiting_for(),
                c.slot(peer).reason()
            ),
        )),
    }
}

fn post_recv(c: &CommInner, it: &P2p, started: Instant) -> HResult<()> {
    let e: &Mbox = c.shm.mbox(it.peer, c.rank, it.k);
    if it.k > MBOX_DEPTH {
        wait_word(c, &e.done, it.k - MBOX_DEPTH, it.peer, started, &|| {
            format!("rank {} to consume an earlier message", it.peer)
        })?;
    }
    let b = it.buf.unwrap_or_default();
    e.device.store(b.phys.device, Ordering::Relaxed);
    e.offset.store(b.phys.offset, Ordering::Relaxed);
    e.count.store(it.count, Ordering::Relaxed);
    e.dtype.store(it.dt as u32, Ordering::Relaxed);
    e.status.store(0, Ordering::Relaxed);
    e.tag.store(
        shm::tag(&c.key, &mbox_words(c, e, it.peer, c.rank, it.k)),
        Ordering::Relaxed,
    );
    e.posted.store_wake(it.k as u32);
    Ok(())
}

/// What the tag of a posted receive covers: the pair, the message number, the receiver's
/// pid, and the buffer, count and type it posted.
fn mbox_words(c: &CommInner, e: &Mbox, src: u32, dst: u32, k: u64) -> [u64; 8] {
    [
        src as u64,
        dst as u64,
        k,
        c.slot(dst).ident.0.pid.load(Ordering::Relaxed) as u64,
        e.device.load(Ordering::Relaxed) as u64,
        e.offset.load(Ordering::Relaxed),
        e.count.load(Ordering::Relaxed),
        e.dtype.load(Ordering::Relaxed) as u64,
    ]
}

fn finish_recv(c: &CommInner, it: &P2p, started: Instant) -> HResult<()> {
    let e = c.shm.mbox(it.peer, c.rank, it.k);
    wait_word(c, &e.done, it.k, it.peer, started, &|| {
        format!(
            "rank {} to post the HcclSend matching this HcclRecv (message #{} from rank {})",
            it.peer, it.k, it.peer
        )
    })?;
    let st = e.status.load(Ordering::Acquire);
    if st != 0 {
        // The sender only ever writes HCCL_E_PARA here; anything else is a damaged record.
        let code = if st as i32 == HCCL_E_PARA {
            HCCL_E_PARA
        } else {
            HCCL_E_INTERNAL
        };
        return Err(HcclError::new(
            code,
            format!(
                "HcclRecv from rank {} (count={}, dataType={}) does not match its HcclSend (count={}, dataType={})",
                it.peer,
                it.count,
                it.dt.name(),
                e.scount.load(Ordering::Relaxed),
                dtype_name(e.sdtype.load(Ordering::Relaxed) as i32)
            ),
        ));
    }
    Ok(())
}

fn do_send(c: &CommInner, it: &P2p, started: Instant) -> HResult<()> {
    let e = c.shm.mbox(c.rank, it.peer, it.k);
    wait_word(c, &e.posted, it.k, it.peer, started, &|| {
        format!(
            "rank {} to post the HcclRecv matching this HcclSend (message #{} from rank {} to rank {})",
            it.peer, it.k, c.rank, it.peer
        )
    })?;
    if e.tag.load(Ordering::Relaxed) != shm::tag(&c.key, &mbox_words(c, e, c.rank, it.peer, it.k)) {
        return Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!(
                "the receive buffer rank {} posted for message #{} in the control block {} does not carry its tag: the record was damaged or written by something other than rank {}; refusing to write through it",
                it.peer,
                it.k,
                c.shm.path.display(),
                it.peer
            ),
        ));
    }
    let rcount = e.count.load(Ordering::Relaxed);
    let rdt = e.dtype.load(Ordering::Relaxed);
    if rcount != it.count || rdt != it.dt as u32 {
        e.scount.store(it.count, Ordering::Relaxed);
        e.sdtype.store(it.dt as u32, Ordering::Relaxed);
        e.status.store(HCCL_E_PARA as u32, Ordering::Relaxed);
        e.done.store_wake(it.k as u32);
        return Err(HcclError::para(format!(
            "HcclSend to rank {} (count={}, dataType={}) does not match the HcclRecv rank {} posted (count={rcount}, dataType={})",
            it.peer,
            it.count,
            it.dt.name(),
            it.peer,
            dtype_name(rdt as i32)
        )));
    }
    let bytes = it.count * it.dt.size() as u64;
    if bytes > 0 {
        let b = it.buf.unwrap_or_default();
        let src = c.rt.host(b.phys, bytes)?;
        let dphys = RtPhys {
            device: e.device.load(Ordering::Relaxed),
            _pad: 0,
            offset: e.offset.load(Ordering::Relaxed),
        };
        let rpid = c.slot(it.peer).ident.0.pid.load(Ordering::Relaxed);
        let dst = c.rt.peer_host(rpid, dphys, bytes).map_err(|e| {
            HcclError::new(
                e.code,
                format!(
                    "the receive buffer rank {} posted cannot be used: {}",
                    it.peer, e.msg
                ),
            )
        })?;
        // SAFETY: the runtime gave host pointers to `bytes` bytes of the sender's checked send
        // buffer and of the range the receiver posted (its tag checked above, and the range
        // checked by peer_host to lie in device memory the receiver's process holds).
        unsafe { copy(src, dst, bytes as usize) };
    }
    e.status.store(0, Ordering::Relaxed);
    e.done.store_wake(it.k as u32);
    Ok(())
}

/// Run the transfers of `op`: post every receive, do every send (in order), then wait for
/// every receive to complete.
pub fn run(c: &CommInner, op: &Op, started: Instant) -> HResult<()> {
    for it in op.p2p.iter().filter(|i| !i.send) {
        post_recv(c, it, started)?;
    }
    for it in op.p2p.iter().filter(|i| i.send) {
        do_send(c, it, started)?;
    }
    for it in op.p2p.iter().filter(|i| !i.send) {
        finish_recv(c, it, started)?;
    }
    Ok(())
}
