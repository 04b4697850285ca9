//! Send, Recv and BatchSendRecv through per-pair mailboxes in the control block. The
//! receiver posts its buffer; the sender waits for it (so `HcclSend` blocks its stream until
//! the matching `HcclRecv` is posted, as in CANN), copies straight into it and marks the
//! message done; the receiver waits for that.
//!
//! Between servers the same protocol runs over messages ([`remote`]): the receiver posts its
//! receive and sends a "posted" notice with its count and type; the sender waits for the
//! notice, checks it, and sends a status (then the data when they match).

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
    let e: &Mbox = c
        .shm
        .mbox(c.slot_index(it.peer), c.slot_index(c.rank), it.k);
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
    let e = c
        .shm
        .mbox(c.slot_index(it.peer), c.slot_index(c.rank), it.k);
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
    let e = c
        .shm
        .mbox(c.slot_index(c.rank), c.slot_index(it.peer), it.k);
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
    let local = |it: &&P2p| c.topo.same_server(it.peer, c.rank);
    let remote = |it: &&P2p| !c.topo.same_server(it.peer, c.rank);
    let far = remote::post(c, op.p2p.iter().filter(remote))?;
    for it in op.p2p.iter().filter(|i| !i.send).filter(local) {
        post_recv(c, it, started)?;
    }
    for it in op.p2p.iter().filter(|i| i.send) {
        if local(&it) {
            do_send(c, it, started)?;
        } else {
            remote::send(c, &far, it, started)?;
        }
    }
    for it in op.p2p.iter().filter(|i| !i.send).filter(local) {
        finish_recv(c, it, started)?;
    }
    remote::finish(c, &far, started)
}

/// Point-to-point with ranks on other servers.
mod remote {
    use super::P2p;
    use crate::comm::CommInner;
    use crate::errors::{HResult, HcclError, HCCL_E_INTERNAL, HCCL_E_PARA};
    use crate::fingerprint::dtype_name;
    use crate::net::{kind, tag, Net, Recv};
    use std::time::Instant;

    /// A notice: count (u64) and dtype (u32) from the receiver; code (u32), count and dtype
    /// from the sender as its status.
    type Notice = [u8; 16];

    fn notice(a: u32, count: u64) -> Notice {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&a.to_le_bytes());
        b[8..16].copy_from_slice(&count.to_le_bytes());
        b
    }

    fn read(b: &Notice) -> (u32, u32, u64) {
        let a = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let d = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let mut c = [0u8; 8];
        c.copy_from_slice(&b[8..16]);
        (a, d, u64::from_le_bytes(c))
    }

    /// One item as `post` set it up: the item, its notice buffer, and its receives (the
    /// notice for a send; the status and the data for a receive).
    type Posted = (P2p, Box<Notice>, Option<Recv>, Option<Recv>);

    /// What `post` set up.
    pub struct Far {
        items: Vec<Posted>,
    }

    fn net(c: &CommInner) -> HResult<&crate::net::tcp::TcpNet> {
        c.cross
            .as_ref()
            .map(|x| &x.net)
            .ok_or_else(|| HcclError::new(HCCL_E_INTERNAL, "no connections to other servers"))
    }

    /// Post every receive (data and the sender's status) and send its "posted" notice; post
    /// the receives of the notices this rank's sends wait for.
    pub fn post<'a>(c: &CommInner, items: impl Iterator<Item = &'a P2p>) -> HResult<Far> {
        let mut far = Far { items: Vec::new() };
        for it in items {
            let n = net(c)?;
            let mut b = Box::new([0u8; 16]);
            if it.send {
                // SAFETY: the box outlives the receive (both live in `far`, the receive is
                // dropped first or waited for).
                let r = unsafe {
                    n.irecv(
                        it.peer,
                        tag(kind::P2P_POSTED, it.k, 0, 0, 0, 0),
                        b.as_mut_ptr(),
                        16,
                    )?
                };
                far.items.push((*it, b, Some(r), None));
            } else {
                let len = (it.count * it.dt.size() as u64) as usize;
                let dst = match it.buf {
                    Some(buf) if len > 0 => c.rt.host(buf.phys, len as u64)?,
                    _ => std::ptr::NonNull::dangling().as_ptr(),
                };
                // SAFETY: as above for the status; `dst` is the receive buffer of the
                // operation (alive until the stream finishes it).
                let st = unsafe {
                    n.irecv(
                        it.peer,
                        tag(kind::P2P_DATA, it.k, 1, 0, 0, 0),
                        b.as_mut_ptr(),
                        16,
                    )?
                };
                // SAFETY: `dst` is the operation's receive buffer (`len` bytes), alive until
                // the stream finishes the operation, which waits for or cancels the receive.
                let data =
                    unsafe { n.irecv(it.peer, tag(kind::P2P_DATA, it.k, 0, 0, 0, 0), dst, len)? };
                let mut msg = notice(it.dt as u32, it.count);
                msg[4..8].copy_from_slice(&0u32.to_le_bytes());
                // SAFETY: 16 bytes of a local.
                unsafe {
                    n.send(
                        it.peer,
                        tag(kind::P2P_POSTED, it.k, 0, 0, 0, 0),
                        msg.as_ptr(),
                        16,
                        None,
                    )?
                };
                far.items.push((*it, b, Some(st), Some(data)));
            }
        }
        Ok(far)
    }

    fn deadline(c: &CommInner, started: Instant) -> Option<Instant> {
        c.exec_timeout.map(|d| started + d)
    }

    /// Send `it`: wait for the receiver's notice, compare, send the status and the data.
    pub fn send(c: &CommInner, far: &Far, it: &P2p, started: Instant) -> HResult<()> {
        let n = net(c)?;
        let Some((_, b, Some(r), _)) = far
            .items
            .iter()
            .find(|(x, ..)| x.send && x.peer == it.peer && x.k == it.k)
        else {
            return Err(HcclError::new(HCCL_E_INTERNAL, "a send without its notice"));
        };
        n.wait(r, deadline(c, started)).map_err(|e| {
            HcclError::new(
                e.code,
                format!(
                    "waiting for {} to post the HcclRecv matching this HcclSend (message #{}): {}",
                    n.who(it.peer),
                    it.k,
                    e.msg
                ),
            )
        })?;
        let (rdt, _, rcount) = read(b);
        let mismatch = rcount != it.count || rdt != it.dt as u32;
        let mut st = notice(if mismatch { HCCL_E_PARA as u32 } else { 0 }, it.count);
        st[4..8].copy_from_slice(&(it.dt as u32).to_le_bytes());
        // SAFETY: 16 bytes of a local.
        unsafe {
            n.send(
                it.peer,
                tag(kind::P2P_DATA, it.k, 1, 0, 0, 0),
                st.as_ptr(),
                16,
                deadline(c, started),
            )?
        };
        if mismatch {
            return Err(HcclError::para(format!(
                "HcclSend to rank {} (count={}, dataType={}) does not match the HcclRecv rank {} posted (count={rcount}, dataType={})",
                it.peer,
                it.count,
                it.dt.name(),
                it.peer,
                dtype_name(rdt as i32)
            )));
        }
        let len = (it.count * it.dt.size() as u64) as usize;
        let src = match it.buf {
            Some(buf) if len > 0 => c.rt.host(buf.phys, len as u64)?,
            _ => std::ptr::NonNull::dangling().as_ptr(),
        };
        // SAFETY: `src` is the send buffer of the operation, `len` bytes.
        unsafe {
            n.send(
                it.peer,
                tag(kind::P2P_DATA, it.k, 0, 0, 0, 0),
                src,
                len,
                deadline(c, started),
            )
        }
    }

    /// Wait for every receive: the sender's status, then its data.
    pub fn finish(c: &CommInner, far: &Far, started: Instant) -> HResult<()> {
        for (it, b, st, data) in &far.items {
            if it.send {
                continue;
            }
            let n = net(c)?;
            let (Some(st), Some(data)) = (st, data) else {
                continue;
            };
            let what = || {
                format!(
                    "{} to post the HcclSend matching this HcclRecv (message #{} from rank {})",
                    n.who(it.peer),
                    it.k,
                    it.peer
                )
            };
            n.wait(st, deadline(c, started)).map_err(|e| {
                HcclError::new(e.code, format!("waiting for {}: {}", what(), e.msg))
            })?;
            let (code, sdt, scount) = read(b);
            if code != 0 {
                return Err(HcclError::new(
                    HCCL_E_PARA,
                    format!(
                        "HcclRecv from rank {} (count={}, dataType={}) does not match its HcclSend (count={scount}, dataType={})",
                        it.peer,
                        it.count,
                        it.dt.name(),
                        dtype_name(sdt as i32)
                    ),
                ));
            }
            n.wait(data, deadline(c, started)).map_err(|e| {
                HcclError::new(
                    e.code,
                    format!("receiving from {}: {}", n.who(it.peer), e.msg),
                )
            })?;
        }
        Ok(())
    }
}
