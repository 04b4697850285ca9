//! ReduceScatter[V]: rank r reduces block r of every rank's input into its own output.

use super::fabric::Fabric;
use super::{with_scratch, Op};
use crate::errors::HResult;
use crate::reduce::reduce as kernel;

pub fn reduce_scatter(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let e = op.dt.size() as u64;
    let bytes = op.count * e;
    let mut srcs = Vec::new();
    for p in 0..cc.n {
        srcs.push(c.send_of(p, cc.rank as u64 * bytes, bytes)? as *const u8);
    }
    let dst = c.recv_of(cc.rank, 0, bytes)?;
    // SAFETY: `send_of`/`recv_of` checked every range against the buffer its rank published and gave host pointers valid for `bytes` bytes each, of the operation's dtype.
    with_scratch(super::nt_of(c, op), |s| unsafe {
        kernel(op.dt, op.redop, &srcs, &[dst], op.count as usize, s)
    });
    Ok(())
}

pub fn reduce_scatter_v(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let e = op.dt.size() as u64;
    let bytes = op.count * e;
    let mut srcs = Vec::new();
    for p in 0..cc.n {
        let row = c.row(p, cc.rank);
        srcs.push(c.send_of(p, row[1] * e, bytes)? as *const u8);
    }
    let dst = c.recv_of(cc.rank, 0, bytes)?;
    // SAFETY: as above: every pointer is valid for `bytes` bytes.
    with_scratch(super::nt_of(c, op), |s| unsafe {
        kernel(op.dt, op.redop, &srcs, &[dst], op.count as usize, s)
    });
    Ok(())
}
