//! AllReduce and Reduce: rank r reduces slice r of every rank's input (in rank order) and
//! writes the result to every destination. Slices are disjoint, so in-place is safe.

use super::fabric::Fabric;
use super::{part, with_scratch, Op};
use crate::errors::HResult;
use crate::reduce::reduce as kernel;

fn reduce_slice(c: &dyn Fabric, op: &Op, dsts_ranks: &[u32]) -> HResult<()> {
    let cc = c.topo();
    let (a, b) = part(op.count, cc.n, cc.rank);
    if b <= a {
        return Ok(());
    }
    let e = op.dt.size() as u64;
    let (off, len) = (a * e, (b - a) * e);
    let mut srcs = Vec::with_capacity(cc.n as usize);
    for p in 0..cc.n {
        srcs.push(c.send_of(p, off, len)? as *const u8);
    }
    let mut dsts = Vec::with_capacity(dsts_ranks.len());
    for &p in dsts_ranks {
        dsts.push(c.recv_of(p, off, len)?);
    }
    // SAFETY: `send_of`/`recv_of` checked every range against the buffer its rank published and gave host pointers valid for `len` bytes each, of the operation's dtype.
    with_scratch(super::nt_of(c, op), |s| unsafe {
        kernel(op.dt, op.redop, &srcs, &dsts, (b - a) as usize, s)
    });
    Ok(())
}

pub fn all_reduce(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let all: Vec<u32> = (0..c.topo().n).collect();
    reduce_slice(c, op, &all)
}

pub fn reduce(c: &dyn Fabric, op: &Op) -> HResult<()> {
    reduce_slice(c, op, &[op.root])
}
