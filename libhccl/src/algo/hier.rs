//! Algorithms for communicators that span servers: inside a server, ranks read and write
//! each other's buffers directly (as the single-server algorithms do); between servers they
//! exchange messages. With one rank per server this is purely the network algorithm (a ring
//! for AllReduce, a chain for Broadcast, direct exchanges for the rest).
//!
//! | op | inside each server | between servers |
//! |---|---|---|
//! | AllReduce | lane `j`'s handler folds lane `j` of its server's inputs into the ring as it goes, and writes each final segment to every local output | ring AllReduce of each lane among the lane's handlers, pipelined by segment |
//! | Reduce | as AllReduce | each server's partial goes to the root server's handler, reduced in server order into the root's output |
//! | Broadcast | the handler writes its lane to every local buffer | a chain through the servers from the root's, pipelined |
//! | AllGather[V] | each rank writes its block to every local output | each block goes once to each other server (to the handler of its sender's local index), which writes it to every local output |
//! | ReduceScatter[V] | a handler reduces its server's share of a remote rank's block | the partial goes to that rank, which reduces the servers' partials in server order |
//! | Scatter | local ranks copy their block from the root | the root server's handlers send remote ranks their blocks |
//! | AlltoAll[V,VC] | local pulls | every rank sends its blocks to remote ranks directly |
//! | Barrier | (the surrounding barriers) | a token to and from every remote rank |
//!
//! Determinism: every element of a reduced result is computed by one rank and copied to the
//! others, so all ranks get identical bits.
//!
//! The surrounding protocol (`super::execute`: publish, wait until the server's ranks
//! published, run, mark done, wait until they are done) keeps every buffer alive while a
//! local peer may read it; messages only ever go into the receiver's own buffers, so no
//! cross-server barrier is needed.

use super::fabric::Fabric;
use super::{part, with_scratch, Op};
use crate::errors::{HResult, HcclError, HCCL_E_INTERNAL};
use crate::fingerprint::opcode;
use crate::net::{self, kind, Recv, Tag, MAX_SEGMENTS};
use crate::reduce::{copy_nt, fan_out as fan_out_to, reduce as kernel};
use std::cell::RefCell;

thread_local! {
    static BYTES: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` with `len` bytes of this thread's scratch memory (8-byte aligned, contents
/// undefined).
fn with_bytes<R>(len: u64, f: impl FnOnce(*mut u8) -> R) -> R {
    BYTES.with(|b| {
        let mut b = b.borrow_mut();
        let words = (len as usize).div_ceil(8).max(1);
        if b.len() < words {
            b.resize(words, 0);
        }
        f(b.as_mut_ptr() as *mut u8)
    })
}

/// Phases of the tags (`net::tag`'s `phase`).
mod ph {
    pub const RING_RS: u8 = 1;
    pub const RING_AG: u8 = 2;
    pub const REDUCE: u8 = 3;
    pub const BCAST: u8 = 4;
    pub const GATHER: u8 = 5;
    pub const RSCAT: u8 = 6;
    pub const SCATTER: u8 = 7;
    pub const A2A: u8 = 8;
    pub const BARRIER: u8 = 9;
}

fn tg(f: &dyn Fabric, phase: u8, a: u32, b: u32, seg: u32) -> Tag {
    net::tag(kind::COLL, f.seq(), phase, a, b, seg)
}

/// Segments of a `len`-byte message of `e`-byte elements: (offset, length) pairs, at most
/// [`MAX_SEGMENTS`], each a whole number of elements (so each can be reduced on arrival).
fn segments(f: &dyn Fabric, len: u64, e: u64) -> Vec<(u64, u64)> {
    if len == 0 {
        return vec![(0, 0)];
    }
    let seg = f
        .segment()
        .max(len.div_ceil(MAX_SEGMENTS))
        .max(1)
        .next_multiple_of(e.max(1));
    (0..len.div_ceil(seg))
        .map(|i| (i * seg, seg.min(len - i * seg)))
        .collect()
}

/// Send `len` bytes at `p` to `peer` in segments under (phase, a, b).
#[allow(clippy::too_many_arguments)]
fn send_segs(
    f: &dyn Fabric,
    peer: u32,
    phase: u8,
    a: u32,
    b: u32,
    p: *const u8,
    len: u64,
    e: u64,
) -> HResult<()> {
    for (i, (o, l)) in segments(f, len, e).into_iter().enumerate() {
        // SAFETY: `p` holds `len` bytes (the caller's buffer), so `p + o` holds `l`.
        unsafe {
            f.net().send(
                peer,
                tg(f, phase, a, b, i as u32),
                p.add(o as usize),
                l as usize,
                f.deadline(),
            )?
        };
    }
    Ok(())
}

/// Post receives of `len` bytes from `peer` into `p`, in segments under (phase, a, b).
#[allow(clippy::too_many_arguments)]
fn post_segs(
    f: &dyn Fabric,
    peer: u32,
    phase: u8,
    a: u32,
    b: u32,
    p: *mut u8,
    len: u64,
    e: u64,
) -> HResult<Vec<(Recv, u64, u64)>> {
    let mut v = Vec::new();
    for (i, (o, l)) in segments(f, len, e).into_iter().enumerate() {
        // SAFETY: `p` holds `len` bytes until the receives are waited for (callers keep
        // them alive; dropping a receive cancels it before the buffer goes).
        let r = unsafe {
            f.net().irecv(
                peer,
                tg(f, phase, a, b, i as u32),
                p.add(o as usize),
                l as usize,
            )?
        };
        v.push((r, o, l));
    }
    Ok(v)
}

fn wait(f: &dyn Fabric, r: &Recv) -> HResult<()> {
    f.net().wait(r, f.deadline())
}

/// Run one operation on a communicator that spans servers.
pub fn run(f: &dyn Fabric, op: &Op) -> HResult<()> {
    match op.code {
        opcode::ALLREDUCE => all_reduce(f, op),
        opcode::REDUCE => reduce(f, op),
        opcode::BROADCAST => broadcast(f, op),
        opcode::ALLGATHER | opcode::ALLGATHER_V => all_gather(f, op),
        opcode::REDUCE_SCATTER | opcode::REDUCE_SCATTER_V => reduce_scatter(f, op),
        opcode::SCATTER => scatter(f, op),
        opcode::ALLTOALL | opcode::ALLTOALLV | opcode::ALLTOALLVC => all_to_all(f, op),
        opcode::BARRIER => barrier(f),
        other => Err(HcclError::new(
            HCCL_E_INTERNAL,
            format!(
                "no cross-server algorithm for {}",
                crate::fingerprint::op_name(other)
            ),
        )),
    }
}

/// Lane `j` of `count` elements of `e` bytes: (first element, elements).
fn lane(count: u64, lanes: u32, j: u32) -> (u64, u64) {
    let (a, b) = part(count, lanes, j);
    (a, b - a)
}

/// `dst = srcs[0] op srcs[1] op …` over `elems` elements.
fn reduce_into(f: &dyn Fabric, op: &Op, srcs: &[*const u8], dst: *mut u8, elems: u64) {
    with_scratch(super::nt_of(f, op), |s| {
        // SAFETY: every pointer holds `elems` elements (the callers' ranges).
        unsafe { kernel(op.dt, op.redop, srcs, &[dst], elems as usize, s) }
    });
}

/// The local ranks' send buffers at `off..off+len`.
fn local_sends(f: &dyn Fabric, off: u64, len: u64) -> HResult<Vec<*const u8>> {
    f.topo()
        .local()
        .iter()
        .map(|&p| f.send_of(p, off, len).map(|x| x as *const u8))
        .collect()
}

/// Copy `len` bytes at `src` to `off` of every other local rank's receive (or, with
/// `send_side`, send) buffer.
fn fan_out(
    f: &dyn Fabric,
    op: &Op,
    src: *const u8,
    off: u64,
    len: u64,
    send_side: bool,
) -> HResult<()> {
    let t = f.topo();
    for &p in t.local() {
        if p == t.rank {
            continue;
        }
        let dst = if send_side {
            f.send_of(p, off, len)?
        } else {
            f.recv_of(p, off, len)?
        };
        // SAFETY: both ranges hold `len` bytes (checked by the fabric).
        unsafe { copy_nt(src, dst, len as usize, super::nt_of(f, op)) };
    }
    Ok(())
}

fn all_reduce(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let e = op.dt.size() as u64;
    let lanes = t.lanes();
    for j in t.my_lanes() {
        let (a, cnt) = lane(op.count, lanes, j);
        if cnt == 0 {
            continue;
        }
        let (off, len) = (a * e, cnt * e);
        let work = f.recv_of(t.rank, off, len)?;
        let outs = t
            .local()
            .iter()
            .filter(|&&p| p != t.rank)
            .map(|&p| f.recv_of(p, off, len))
            .collect::<HResult<Vec<_>>>()?;
        let group: Vec<u32> = (0..t.servers.len() as u32)
            .map(|s| t.handler(s, j))
            .collect();
        let lane = Lane {
            srcs: local_sends(f, off, len)?,
            buf: work,
            outs,
        };
        ring_all_reduce(f, op, &group, t.my_server() as usize, &lane, cnt, j)?;
    }
    Ok(())
}

/// One lane of an AllReduce as its handler sees it: the server's contributions (every local
/// rank's send buffer at the lane), where the result goes first (the handler's receive
/// buffer) and the other local ranks' receive buffers it is copied to.
struct Lane {
    srcs: Vec<*const u8>,
    buf: *mut u8,
    outs: Vec<*mut u8>,
}

impl Lane {
    /// `x + at` for every pointer of `v`.
    fn at(v: &[*const u8], at: u64) -> Vec<*const u8> {
        v.iter()
            .map(|&p| {
                // SAFETY: `at` lies inside the lane (the callers' offsets), which every
                // pointer holds.
                unsafe { p.add(at as usize) }
            })
            .collect()
    }

    /// Every destination of the final value at `at`: the handler's buffer first.
    fn finals(&self, at: u64) -> Vec<*mut u8> {
        std::iter::once(self.buf)
            .chain(self.outs.iter().copied())
            .map(|p| {
                // SAFETY: as in `at`.
                unsafe { p.add(at as usize) }
            })
            .collect()
    }

    /// Copy the final value of `len` bytes at `at` of the handler's buffer to the other
    /// local ranks.
    fn fan_out(&self, at: u64, len: u64, nt: bool) {
        let f = self.finals(at);
        // SAFETY: every range lies inside the lane of its buffer (`at + len` ≤ the lane's
        // length, the callers' ranges).
        unsafe { fan_out_to(f[0], &f[1..], len as usize, nt) };
    }
}

/// Ring AllReduce of `cnt` elements among `group` (this rank is `group[me]`) for the lane
/// `l` describes. Reduce-scatter then all-gather, each step pipelined by segment, the
/// server's part folded in as it goes: a chunk's local contributions are reduced together
/// with what came for it from the ring (one pass, no local sum kept first), except the
/// chunk this rank starts the ring with, which is reduced segment by segment just before
/// each segment is sent (or sent straight from the send buffer when this rank is alone on
/// its server). A segment is copied to the other local ranks as soon as its final value
/// exists. Every receive of the all-gather is posted before anything is sent, so its data
/// goes straight into `buf` (a peer may run ahead: a message nobody asked for yet costs a
/// copy); the all-gather's first step forwards each segment as soon as the reduce-scatter
/// completed it.
fn ring_all_reduce(
    f: &dyn Fabric,
    op: &Op,
    group: &[u32],
    me: usize,
    l: &Lane,
    cnt: u64,
    lane_id: u32,
) -> HResult<()> {
    let g = group.len();
    let e = op.dt.size() as u64;
    let nt = super::nt_of(f, op);
    let reduce_nt = |srcs: &[*const u8], dsts: &[*mut u8], bytes: u64, nt: bool| {
        with_scratch(nt, |s| {
            // SAFETY: every pointer holds `bytes` bytes (the callers' ranges).
            unsafe { kernel(op.dt, op.redop, srcs, dsts, (bytes / e) as usize, s) }
        });
    };
    let reduce =
        |srcs: &[*const u8], dsts: &[*mut u8], bytes: u64| reduce_nt(srcs, dsts, bytes, nt);
    if g == 1 {
        reduce(&l.srcs, &l.finals(0), cnt * e);
        return Ok(());
    }
    let buf = l.buf;
    let next = group[(me + 1) % g];
    let prev = group[(me + g - 1) % g];
    let chunk = |c: usize| {
        let (a, b) = part(cnt, g as u32, c as u32);
        (a * e, (b - a) * e)
    };
    let max_chunk = (0..g).map(|c| chunk(c).1).max().unwrap_or(0);
    // All-gather: at step s, send chunk me+1-s (complete), receive chunk me-s. A chunk's
    // final value exists only after this rank's part in it was sent, so receiving it into
    // `buf` cannot overwrite anything this rank still reads (`buf` may be this rank's send
    // buffer: in place).
    let mut ag: Vec<Vec<(Recv, u64, u64)>> = Vec::with_capacity(g - 1);
    for s in 0..g - 1 {
        let rc = (me + g - s) % g;
        let (ro, rl) = chunk(rc);
        // SAFETY: chunk `rc` lies inside `buf`.
        ag.push(post_segs(
            f,
            prev,
            ph::RING_AG,
            lane_id,
            rc as u32,
            unsafe { buf.add(ro as usize) },
            rl,
            e,
        )?);
    }
    // The scratch: the chunk received at a step, then one segment of the server's part.
    let max_seg = segments(f, max_chunk, e)[0].1;
    with_bytes(max_chunk + max_seg, |scratch| -> HResult<()> {
        // SAFETY: the scratch holds `max_chunk + max_seg` bytes.
        let part = unsafe { scratch.add(max_chunk as usize) };
        // Reduce-scatter: at step s, send chunk me-s (the server's part at step 0, then
        // the chunk reduced at the step before), receive chunk me-s-1 and reduce it with
        // the server's part into `buf`.
        for s in 0..g - 1 {
            let sc = (me + g - s) % g;
            let rc = (me + 2 * g - s - 1) % g;
            let (so, sl) = chunk(sc);
            let (ro, rl) = chunk(rc);
            let recvs = post_segs(f, prev, ph::RING_RS, lane_id, rc as u32, scratch, rl, e)?;
            // Reduce segment k of the received chunk; at the last step its value is final:
            // it goes to every local rank, and the all-gather's first step sends it on.
            let absorb = |k: usize| -> HResult<()> {
                let (r, o2, l2) = &recvs[k];
                wait(f, r)?;
                let at = ro + o2;
                let mut srcs = Lane::at(&l.srcs, at);
                // SAFETY: the scratch holds the received chunk.
                srcs.push(unsafe { scratch.add(*o2 as usize) });
                if s == g - 2 {
                    reduce(&srcs, &l.finals(at), *l2);
                    // SAFETY: `buf + at` holds `l2` bytes of the lane.
                    unsafe {
                        f.net().send(
                            next,
                            tg(f, ph::RING_AG, lane_id, rc as u32, k as u32),
                            buf.add(at as usize),
                            *l2 as usize,
                            f.deadline(),
                        )?
                    };
                } else {
                    // SAFETY: as above.
                    reduce(&srcs, &[unsafe { buf.add(at as usize) }], *l2);
                }
                Ok(())
            };
            let mut k = 0;
            for (i, (o, len)) in segments(f, sl, e).into_iter().enumerate() {
                let at = so + o;
                let from: *const u8 = if s > 0 {
                    // SAFETY: chunk `sc` lies inside `buf`.
                    unsafe { buf.add(at as usize) }
                } else if l.srcs.len() == 1 {
                    // Alone on its server: the send buffer is the server's part as it is.
                    Lane::at(&l.srcs, at)[0]
                } else {
                    // Into the scratch, with ordinary stores: the socket reads it at once,
                    // from the cache.
                    reduce_nt(&Lane::at(&l.srcs, at), &[part], len, false);
                    part
                };
                // SAFETY: `from` holds `len` bytes of the lane.
                unsafe {
                    f.net().send(
                        next,
                        tg(f, ph::RING_RS, lane_id, sc as u32, i as u32),
                        from,
                        len as usize,
                        f.deadline(),
                    )?
                };
                // Reduce what arrived meanwhile.
                while k < recvs.len() && recvs[k].0.slot.finished() {
                    absorb(k)?;
                    k += 1;
                }
            }
            for k in k..recvs.len() {
                absorb(k)?;
            }
        }
        Ok(())
    })?;
    // The rest of the all-gather: forward what the step before received, segment by
    // segment as it arrives, and copy each to the other local ranks.
    for s in 1..g - 1 {
        let sc = (me + 1 + g - s) % g;
        let (so, sl) = chunk(sc);
        for (i, (o, len)) in segments(f, sl, e).into_iter().enumerate() {
            if let Some((r, _, _)) = ag[s - 1].get(i) {
                wait(f, r)?;
            }
            // SAFETY: chunk `sc` lies inside `buf`.
            unsafe {
                f.net().send(
                    next,
                    tg(f, ph::RING_AG, lane_id, sc as u32, i as u32),
                    buf.add((so + o) as usize),
                    len as usize,
                    f.deadline(),
                )?
            };
            l.fan_out(so + o, len, nt);
        }
    }
    // The last step's chunk is not forwarded.
    let (lo, _) = chunk((me + 2) % g);
    for (r, o, len) in &ag[g - 2] {
        wait(f, r)?;
        l.fan_out(lo + o, *len, nt);
    }
    Ok(())
}

fn reduce(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let e = op.dt.size() as u64;
    let lanes = t.lanes();
    let root = op.root;
    let rs = t.server_of[root as usize];
    let ms = t.my_server();
    let ns = t.servers.len();
    for j in t.my_lanes() {
        let (a, cnt) = lane(op.count, lanes, j);
        if cnt == 0 {
            continue;
        }
        let (off, len) = (a * e, cnt * e);
        let srcs = local_sends(f, off, len)?;
        if ms == rs {
            let dst = f.recv_of(root, off, len)?;
            // One slot per server: its partial, reduced in server order into the root.
            with_bytes(len * ns as u64, |slots| -> HResult<()> {
                // SAFETY: slot s of `len` bytes lies inside the scratch.
                let slot = |s: usize| unsafe { slots.add(s * len as usize) };
                let mut recvs = Vec::new();
                for s in 0..ns {
                    if s as u32 != ms {
                        let from = t.handler(s as u32, j);
                        recvs.extend(post_segs(
                            f,
                            from,
                            ph::REDUCE,
                            j,
                            s as u32,
                            slot(s),
                            len,
                            e,
                        )?);
                    }
                }
                reduce_into(f, op, &srcs, slot(ms as usize), cnt);
                for (r, _, _) in &recvs {
                    wait(f, r)?;
                }
                let all: Vec<*const u8> = (0..ns).map(|s| slot(s) as *const u8).collect();
                reduce_into(f, op, &all, dst, cnt);
                Ok(())
            })?;
        } else {
            with_bytes(len, |part| -> HResult<()> {
                reduce_into(f, op, &srcs, part, cnt);
                send_segs(f, t.handler(rs, j), ph::REDUCE, j, ms, part, len, e)
            })?;
        }
    }
    Ok(())
}

fn broadcast(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let e = op.dt.size() as u64;
    let lanes = t.lanes();
    let root = op.root;
    let rs = t.server_of[root as usize] as usize;
    let ms = t.my_server() as usize;
    let ns = t.servers.len();
    // The chain of servers, starting at the root's.
    let pos = (ms + ns - rs) % ns;
    let at = |k: usize| ((rs + k) % ns) as u32;
    for j in t.my_lanes() {
        let (a, cnt) = lane(op.count, lanes, j);
        if cnt == 0 {
            continue;
        }
        let (off, len) = (a * e, cnt * e);
        let next = (pos + 1 < ns).then(|| t.handler(at(pos + 1), j));
        if pos == 0 {
            let src = f.send_of(root, off, len)?;
            if let Some(nx) = next {
                send_segs(f, nx, ph::BCAST, j, 0, src, len, e)?;
            }
            // Every local rank but the root gets the lane (the root has it).
            for &p in t.local() {
                if p != root {
                    let dst = f.send_of(p, off, len)?;
                    // SAFETY: both ranges hold `len` bytes.
                    unsafe { copy_nt(src, dst, len as usize, super::nt_of(f, op)) };
                }
            }
        } else {
            let prev = t.handler(at(pos - 1), j);
            let dst = f.send_of(t.rank, off, len)?;
            let recvs = post_segs(f, prev, ph::BCAST, j, 0, dst, len, e)?;
            for (i, (r, o, l)) in recvs.iter().enumerate() {
                wait(f, r)?;
                if let Some(nx) = next {
                    // SAFETY: segment `i` lies inside `dst`.
                    unsafe {
                        f.net().send(
                            nx,
                            tg(f, ph::BCAST, j, 0, i as u32),
                            dst.add(*o as usize),
                            *l as usize,
                            f.deadline(),
                        )?
                    };
                }
            }
            fan_out(f, op, dst, off, len, true)?;
        }
    }
    Ok(())
}

/// (count, displacement) in elements of block `q` in rank `p`'s output: AllGather blocks
/// follow each other; AllGatherV's are at the receiver's `recvDispls` (its arrays).
fn gather_block(f: &dyn Fabric, op: &Op, p: u32, q: u32) -> (u64, u64) {
    if op.code == opcode::ALLGATHER_V {
        let row = if p == f.topo().rank {
            op.arrays
                .as_ref()
                .map(|a| a[q as usize])
                .unwrap_or_default()
        } else {
            f.row(p, q)
        };
        (row[2], row[3])
    } else {
        (op.count, q as u64 * op.count)
    }
}

fn all_gather(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let e = op.dt.size() as u64;
    let me = t.rank;
    let ms = t.my_server();
    // Blocks of remote ranks this rank receives for its server.
    let mut mine = Vec::new();
    for q in t.remote() {
        if t.handler(ms, t.local_index[q as usize]) == me {
            let (c, d) = gather_block(f, op, me, q);
            let dst = f.recv_of(me, d * e, c * e)?;
            mine.push((q, dst, post_segs(f, q, ph::GATHER, q, 0, dst, c * e, e)?));
        }
    }
    // This rank's block: to each other server once, and to every local output, segment
    // by segment (each segment is copied while the socket takes the next).
    let bytes = op.count * e;
    let src = f.send_of(me, 0, bytes)?;
    let mut outs = Vec::with_capacity(t.local().len());
    for &p in t.local() {
        let (c, d) = gather_block(f, op, p, me);
        if c * e != bytes {
            return Err(HcclError::para(format!(
                "rank {p} expects {c} elements from rank {me} (its recvCounts[{me}]) but rank {me} sends {}",
                op.count
            )));
        }
        outs.push(f.recv_of(p, d * e, bytes)?);
    }
    let to: Vec<u32> = (0..t.servers.len() as u32)
        .filter(|&s| s != ms)
        .map(|s| t.handler(s, t.local_index[me as usize]))
        .collect();
    for (i, (o, l)) in segments(f, bytes, e).into_iter().enumerate() {
        // SAFETY: `src` holds `bytes` bytes, so `src + o` holds `l`.
        let p = unsafe { src.add(o as usize) };
        for &q in &to {
            // SAFETY: as above.
            unsafe {
                f.net().send(
                    q,
                    tg(f, ph::GATHER, me, 0, i as u32),
                    p,
                    l as usize,
                    f.deadline(),
                )?
            };
        }
        let dsts: Vec<*mut u8> = outs.iter().map(|&d| d.wrapping_add(o as usize)).collect();
        // SAFETY: every output holds `bytes` bytes at its displacement, so `o + l` of them.
        unsafe { fan_out_to(p, &dsts, l as usize, super::nt_of(f, op)) };
    }
    // Remote blocks as they arrive, to every other local output.
    for (q, dst, recvs) in &mine {
        for (r, o, l) in recvs {
            wait(f, r)?;
            for &p in t.local() {
                if p != me {
                    let (_, d) = gather_block(f, op, p, *q);
                    let to = f.recv_of(p, d * e + o, *l)?;
                    // SAFETY: both ranges hold `l` bytes.
                    unsafe { copy_nt(dst.add(*o as usize), to, *l as usize, super::nt_of(f, op)) };
                }
            }
        }
    }
    Ok(())
}

/// (count, displacement) in elements of block `q` in rank `p`'s input of ReduceScatter[V].
fn scatter_block(f: &dyn Fabric, op: &Op, p: u32, q: u32) -> (u64, u64) {
    if op.code == opcode::REDUCE_SCATTER_V {
        let row = if p == f.topo().rank {
            op.arrays
                .as_ref()
                .map(|a| a[q as usize])
                .unwrap_or_default()
        } else {
            f.row(p, q)
        };
        (row[0], row[1])
    } else {
        (op.count, q as u64 * op.count)
    }
}

/// This server's partial of block `q`: reduce the local ranks' inputs into `dst`.
fn local_partial(f: &dyn Fabric, op: &Op, q: u32, dst: *mut u8) -> HResult<u64> {
    let e = op.dt.size() as u64;
    let t = f.topo();
    let (c, _) = scatter_block(f, op, t.rank, q);
    let mut srcs = Vec::new();
    for &p in t.local() {
        let (cp, d) = scatter_block(f, op, p, q);
        if cp != c {
            return Err(HcclError::para(format!(
                "ranks {} and {p} disagree about the size of block {q} ({c} and {cp} elements)",
                t.rank
            )));
        }
        srcs.push(f.send_of(p, d * e, c * e)? as *const u8);
    }
    reduce_into(f, op, &srcs, dst, c);
    Ok(c)
}

fn reduce_scatter(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let e = op.dt.size() as u64;
    let me = t.rank;
    let ms = t.my_server();
    let ns = t.servers.len();
    let bytes = op.count * e;
    // Slots: one per server (partials of this rank's block), then one for the partials this
    // rank makes for others (ReduceScatterV blocks differ in size: the largest).
    let out_bytes = (0..t.n)
        .map(|q| scatter_block(f, op, me, q).0 * e)
        .max()
        .unwrap_or(0);
    with_bytes(bytes * ns as u64 + out_bytes, |sc| -> HResult<()> {
        // SAFETY: slot s (s < ns) of `bytes` bytes, then `out_bytes`, lie in the scratch.
        let slot = |s: usize| unsafe { sc.add(s * bytes as usize) };
        // The other servers' partials of this rank's block.
        let mut recvs = Vec::new();
        for s in 0..ns as u32 {
            if s != ms {
                let from = t.handler(s, t.local_index[me as usize]);
                recvs.extend(post_segs(
                    f,
                    from,
                    ph::RSCAT,
                    me,
                    s,
                    slot(s as usize),
                    bytes,
                    e,
                )?);
            }
        }
        // Partials this rank makes for remote ranks' blocks.
        for q in t.remote() {
            if t.handler(ms, t.local_index[q as usize]) == me {
                let out = slot(ns);
                let c = local_partial(f, op, q, out)?;
                send_segs(f, q, ph::RSCAT, q, ms, out, c * e, e)?;
            }
        }
        local_partial(f, op, me, slot(ms as usize))?;
        for (r, _, _) in &recvs {
            wait(f, r)?;
        }
        let all: Vec<*const u8> = (0..ns).map(|s| slot(s) as *const u8).collect();
        let dst = f.recv_of(me, 0, bytes)?;
        reduce_into(f, op, &all, dst, op.count);
        Ok(())
    })
}

fn scatter(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let e = op.dt.size() as u64;
    let me = t.rank;
    let bytes = op.count * e;
    let root = op.root;
    let rs = t.server_of[root as usize];
    if t.my_server() == rs {
        let src = f.send_of(root, me as u64 * bytes, bytes)?;
        let dst = f.recv_of(me, 0, bytes)?;
        // SAFETY: both ranges hold `bytes` bytes.
        unsafe { copy_nt(src, dst, bytes as usize, super::nt_of(f, op)) };
        for q in t.remote() {
            if t.handler(rs, t.local_index[q as usize]) == me {
                let src = f.send_of(root, q as u64 * bytes, bytes)?;
                send_segs(f, q, ph::SCATTER, q, 0, src, bytes, e)?;
            }
        }
    } else {
        let from = t.handler(rs, t.local_index[me as usize]);
        let dst = f.recv_of(me, 0, bytes)?;
        for (r, _, _) in post_segs(f, from, ph::SCATTER, me, 0, dst, bytes, e)? {
            wait(f, &r)?;
        }
    }
    Ok(())
}

/// Block `p → q` of an AlltoAll[V,VC]: (bytes, offset in `p`'s input, offset in `q`'s
/// output). Only the rank that knows the numbers asks: the sender for its input side,
/// the receiver for its output side.
fn a2a_send(op: &Op, n: u32, p: u32, q: u32) -> (u64, u64) {
    let e = op.dt.size() as u64;
    match op.code {
        opcode::ALLTOALL => (op.count * e, q as u64 * op.count * e),
        opcode::ALLTOALLV => {
            let row = op
                .arrays
                .as_ref()
                .map(|a| a[q as usize])
                .unwrap_or_default();
            (row[0] * e, row[1] * e)
        }
        _ => {
            let m = op.matrix.as_deref().unwrap_or(&[]);
            let n = n as usize;
            let (p, q) = (p as usize, q as usize);
            (
                m[p * n + q] * e,
                m[p * n..p * n + q].iter().sum::<u64>() * e,
            )
        }
    }
}

fn a2a_recv(op: &Op, n: u32, p: u32, q: u32) -> (u64, u64) {
    let e = op.dt2.size() as u64;
    match op.code {
        opcode::ALLTOALL => (op.count * e, p as u64 * op.count * e),
        opcode::ALLTOALLV => {
            let row = op
                .arrays
                .as_ref()
                .map(|a| a[p as usize])
                .unwrap_or_default();
            (row[2] * e, row[3] * e)
        }
        _ => {
            let m = op.matrix.as_deref().unwrap_or(&[]);
            let n = n as usize;
            let (p, q) = (p as usize, q as usize);
            (
                m[p * n + q] * e,
                (0..p).map(|x| m[x * n + q]).sum::<u64>() * e,
            )
        }
    }
}

fn all_to_all(f: &dyn Fabric, op: &Op) -> HResult<()> {
    let t = f.topo();
    let me = t.rank;
    let n = t.n;
    let e = op.dt.size() as u64;
    let v = op.code == opcode::ALLTOALLV;
    let remote = t.remote();
    // AlltoAllV: each side's counts are its own arguments, so the sender says how many
    // bytes it sends first and the receiver checks before trusting the data.
    let mut lens = vec![0u64; n as usize];
    let mut len_recvs = Vec::new();
    let mut recvs = Vec::new();
    for &p in &remote {
        if v {
            // SAFETY: `lens[p]` holds 8 bytes and outlives the wait below.
            len_recvs.push((p, unsafe {
                f.net().irecv(
                    p,
                    tg(f, ph::A2A, p, 1, 0),
                    &mut lens[p as usize] as *mut u64 as *mut u8,
                    8,
                )?
            }));
        }
        let (len, off) = a2a_recv(op, n, p, me);
        let dst = f.recv_of(me, off, len)?;
        recvs.extend(post_segs(f, p, ph::A2A, p, 0, dst, len, e)?);
    }
    // Send to the remote ranks starting after this one, so not everyone hits rank 0 first.
    let mut order = remote.clone();
    order.sort_by_key(|&q| (q + n - me) % n);
    for &q in &order {
        let (len, off) = a2a_send(op, n, me, q);
        if v {
            // SAFETY: 8 bytes of a local.
            unsafe {
                f.net().send(
                    q,
                    tg(f, ph::A2A, me, 1, 0),
                    &len as *const u64 as *const u8,
                    8,
                    f.deadline(),
                )?
            };
        }
        let src = f.send_of(me, off, len)?;
        send_segs(f, q, ph::A2A, me, 0, src, len, e)?;
    }
    for (p, r) in &len_recvs {
        wait(f, r)?;
        let sent = lens[*p as usize];
        let want = a2a_recv(op, n, *p, me).0;
        if sent != want {
            return Err(HcclError::para(format!(
                "{} sends {} elements to rank {me} (its sendCounts[{me}]) but rank {me} expects {} from rank {p} (its recvCounts[{p}])",
                f.net().who(*p),
                sent / e,
                want / e
            )));
        }
    }
    // Local blocks: pull from each local rank what it addresses to this one.
    for &p in t.local() {
        let (len, roff) = a2a_recv(op, n, p, me);
        let soff = if p == me {
            a2a_send(op, n, me, me).1
        } else if v {
            let [sent, sdispl, _, _] = f.row(p, me);
            if sent * e != len {
                return Err(HcclError::para(format!(
                    "rank {p} sends {sent} elements to rank {me} (its sendCounts[{me}]) but rank {me} expects {} from rank {p} (its recvCounts[{p}])",
                    len / e
                )));
            }
            sdispl * e
        } else {
            a2a_send(op, n, p, me).1
        };
        let src = f.send_of(p, soff, len)?;
        let dst = f.recv_of(me, roff, len)?;
        // SAFETY: both ranges hold `len` bytes.
        unsafe { copy_nt(src, dst, len as usize, super::nt_of(f, op)) };
    }
    for (r, _, _) in &recvs {
        wait(f, r)?;
    }
    Ok(())
}

fn barrier(f: &dyn Fabric) -> HResult<()> {
    let t = f.topo();
    let remote = t.remote();
    let mut recvs = Vec::new();
    for &q in &remote {
        // SAFETY: zero bytes.
        recvs.push(unsafe {
            f.net().irecv(
                q,
                tg(f, ph::BARRIER, q, 0, 0),
                std::ptr::NonNull::dangling().as_ptr(),
                0,
            )?
        });
    }
    for &q in &remote {
        // SAFETY: zero bytes.
        unsafe {
            f.net().send(
                q,
                tg(f, ph::BARRIER, t.rank, 0, 0),
                std::ptr::NonNull::dangling().as_ptr(),
                0,
                f.deadline(),
            )?
        };
    }
    for r in &recvs {
        wait(f, r)?;
    }
    Ok(())
}
