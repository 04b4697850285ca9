//! AllGather[V], Broadcast and Scatter: pure copies straight between ranks' buffers.
//! AllGather and Broadcast are cut into work items that whichever rank runs may copy
//! ([`Work`]).

use super::fabric::Fabric;
use super::{Op, Work};
use crate::errors::HResult;
use crate::reduce::{copy, fan_out};

/// AllGather: block r (rank r's input) goes into block r of every rank's output, cut into
/// work items ([`Work`]) that any rank may copy.
pub fn all_gather(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let n = c.topo().n;
    let bytes = op.count * op.dt.size() as u64;
    if bytes == 0 {
        return Ok(());
    }
    // Every buffer checked and translated once for the whole operation.
    let mut src = Vec::with_capacity(n as usize);
    let mut out = Vec::with_capacity(n as usize);
    for p in 0..n {
        src.push(c.send_of(p, 0, bytes)? as *const u8);
        out.push(c.recv_of(p, 0, n as u64 * bytes)?);
    }
    let item = c.item_bytes();
    let per = bytes.div_ceil(item);
    let nt = super::nt_of(c, op);
    let mut dsts = out.clone();
    for i in Work::new(c, per * n as u64) {
        let (r, off) = (i / per, (i % per) * item);
        let len = item.min(bytes - off);
        let at = (r * bytes + off) as usize;
        for (d, o) in dsts.iter_mut().zip(&out) {
            // SAFETY: block r of every output holds `bytes` bytes, `off < bytes`.
            *d = unsafe { o.add(at) };
        }
        // SAFETY: `send_of`/`recv_of` checked every buffer against what its rank published; bytes `off..off+len` of rank r's input and of block r of every output lie inside.
        unsafe { fan_out(src[r as usize].add(off as usize), &dsts, len as usize, nt) };
    }
    Ok(())
}

/// AllGatherV: rank r writes its block at each rank p's `recvDispls[r]`.
pub fn all_gather_v(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let e = op.dt.size() as u64;
    let bytes = op.count * e;
    let src = c.send_of(cc.rank, 0, bytes)?;
    let mut dsts = Vec::new();
    for p in 0..cc.n {
        let row = c.row(p, cc.rank);
        dsts.push(c.recv_of(p, row[3] * e, bytes)?);
    }
    // SAFETY: as above: every pointer is valid for `bytes` bytes.
    unsafe { fan_out(src, &dsts, bytes as usize, super::nt_of(c, op)) };
    Ok(())
}

/// Broadcast: the root's buffer goes to every other rank's, cut into work items
/// ([`Work`]) that any rank may copy.
pub fn broadcast(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let n = c.topo().n;
    let bytes = op.count * op.dt.size() as u64;
    if bytes == 0 {
        return Ok(());
    }
    let src = c.send_of(op.root, 0, bytes)? as *const u8;
    let mut to = Vec::with_capacity(n as usize);
    for p in (0..n).filter(|&p| p != op.root) {
        to.push(c.send_of(p, 0, bytes)?);
    }
    let item = c.item_bytes();
    let nt = super::nt_of(c, op);
    let mut dsts = to.clone();
    for i in Work::new(c, bytes.div_ceil(item)) {
        let off = i * item;
        let len = item.min(bytes - off);
        for (d, t) in dsts.iter_mut().zip(&to) {
            // SAFETY: every buffer holds `bytes` bytes, `off < bytes`.
            *d = unsafe { t.add(off as usize) };
        }
        // SAFETY: as above: bytes `off..off+len` of every buffer lie inside.
        unsafe { fan_out(src.add(off as usize), &dsts, len as usize, nt) };
    }
    Ok(())
}

/// Scatter: rank r copies block r of the root's send buffer into its own output.
pub fn scatter(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let bytes = op.count * op.dt.size() as u64;
    let src = c.send_of(op.root, cc.rank as u64 * bytes, bytes)?;
    let dst = c.recv_of(cc.rank, 0, bytes)?;
    // SAFETY: as above: both pointers are valid for `bytes` bytes.
    unsafe { copy(src, dst, bytes as usize) };
    Ok(())
}
