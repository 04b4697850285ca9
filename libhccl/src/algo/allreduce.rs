//! AllReduce and Reduce: the operation is cut into work items ([`Work`]); the rank that
//! does an item reduces that range of every rank's input (in rank order) and writes the
//! result to every destination. Items are disjoint, so in-place is safe.

use super::fabric::Fabric;
use super::{with_scratch, Op, Work};
use crate::errors::HResult;
use crate::reduce::reduce as kernel;

fn reduce_items(c: &dyn Fabric, op: &Op, dsts_ranks: &[u32]) -> HResult<()> {
    let n = c.topo().n;
    let e = op.dt.size() as u64;
    let total = op.count * e;
    if total == 0 {
        return Ok(());
    }
    // Every buffer checked and translated once for the whole operation.
    let mut src_base = Vec::with_capacity(n as usize);
    for p in 0..n {
        src_base.push(c.send_of(p, 0, total)? as *const u8);
    }
    let mut dst_base = Vec::with_capacity(dsts_ranks.len());
    for &p in dsts_ranks {
        dst_base.push(c.recv_of(p, 0, total)?);
    }
    let item = (c.item_bytes() / e).max(1);
    let (mut srcs, mut dsts) = (src_base.clone(), dst_base.clone());
    with_scratch(super::nt_of(c, op), |s| {
        for i in Work::new(c, op.count.div_ceil(item)) {
            let a = i * item;
            let k = item.min(op.count - a);
            let off = (a * e) as usize;
            for (x, b) in srcs.iter_mut().zip(&src_base) {
                // SAFETY: `off` is inside every `total`-byte buffer (a < count).
                *x = unsafe { b.add(off) };
            }
            for (x, b) in dsts.iter_mut().zip(&dst_base) {
                // SAFETY: as above.
                *x = unsafe { b.add(off) };
            }
            // SAFETY: `send_of`/`recv_of` checked every buffer against what its rank published and gave host pointers valid for `total` bytes of the operation's dtype; elements `a..a+k` lie inside.
            unsafe { kernel(op.dt, op.redop, &srcs, &dsts, k as usize, s) };
        }
    });
    Ok(())
}

pub fn all_reduce(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let all: Vec<u32> = (0..c.topo().n).collect();
    reduce_items(c, op, &all)
}

pub fn reduce(c: &dyn Fabric, op: &Op) -> HResult<()> {
    reduce_items(c, op, &[op.root])
}
