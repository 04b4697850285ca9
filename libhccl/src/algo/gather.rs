//! AllGather[V], Broadcast and Scatter: pure copies straight between ranks' buffers.

use super::fabric::Fabric;
use super::{part, Op};
use crate::errors::HResult;
use crate::reduce::{copy, fan_out};

/// AllGather: rank r writes its block into block r of every rank's output.
pub fn all_gather(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let bytes = op.count * op.dt.size() as u64;
    let src = c.send_of(cc.rank, 0, bytes)?;
    let mut dsts = Vec::new();
    for p in 0..cc.n {
        dsts.push(c.recv_of(p, cc.rank as u64 * bytes, bytes)?);
    }
    // SAFETY: `send_of`/`recv_of` checked every range against the buffer its rank published and gave host pointers valid for `bytes` bytes each.
    unsafe { fan_out(src, &dsts, bytes as usize, super::nt_of(c, op)) };
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

/// Broadcast: rank r copies slice r of the root's buffer to every other rank.
pub fn broadcast(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let e = op.dt.size() as u64;
    let (a, b) = part(op.count, cc.n, cc.rank);
    if b <= a {
        return Ok(());
    }
    let (off, len) = (a * e, (b - a) * e);
    let src = c.send_of(op.root, off, len)?;
    let mut dsts = Vec::new();
    for p in (0..cc.n).filter(|&p| p != op.root) {
        dsts.push(c.send_of(p, off, len)?);
    }
    // SAFETY: as above: every pointer is valid for `len` bytes.
    unsafe { fan_out(src, &dsts, len as usize, super::nt_of(c, op)) };
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
