//! AlltoAll, AlltoAllV, AlltoAllVC: rank r pulls, from every rank p, the block p addressed
//! to r, into its own output.

use super::fabric::Fabric;
use super::Op;
use crate::errors::{HResult, HcclError};
use crate::reduce::copy_nt;

pub fn all_to_all(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let nt = super::nt_of(c, op);
    let bytes = op.count * op.dt.size() as u64;
    for p in 0..cc.n {
        let src = c.send_of(p, cc.rank as u64 * bytes, bytes)?;
        let dst = c.recv_of(cc.rank, p as u64 * bytes, bytes)?;
        // SAFETY: `send_of`/`recv_of` checked both ranges against the buffers their ranks published and gave host pointers valid for `bytes` bytes.
        unsafe { copy_nt(src, dst, bytes as usize, nt) };
    }
    Ok(())
}

pub fn all_to_all_v(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let nt = super::nt_of(c, op);
    // Every rank checks the whole matrix, so all fail alike on a mismatch.
    for i in 0..cc.n {
        for j in 0..cc.n {
            let sent = c.row(i, j)[0];
            let recvd = c.row(j, i)[2];
            if sent != recvd {
                return Err(HcclError::para(format!(
                    "rank {i} sends {sent} elements to rank {j} (its sendCounts[{j}]) but rank {j} expects {recvd} from rank {i} (its recvCounts[{i}])"
                )));
            }
        }
    }
    let es = op.dt.size() as u64;
    let er = op.dt2.size() as u64;
    for p in 0..cc.n {
        let prow = c.row(p, cc.rank);
        let mine = c.row(cc.rank, p);
        let bytes = prow[0] * es;
        let src = c.send_of(p, prow[1] * es, bytes)?;
        let dst = c.recv_of(cc.rank, mine[3] * er, bytes)?;
        // SAFETY: as above: both pointers are valid for `bytes` bytes.
        unsafe { copy_nt(src, dst, bytes as usize, nt) };
    }
    Ok(())
}

pub fn all_to_all_vc(c: &dyn Fabric, op: &Op) -> HResult<()> {
    let cc = c.topo();
    let nt = super::nt_of(c, op);
    let n = cc.n as usize;
    let m = op.matrix.as_ref().expect("matrix");
    let e = op.dt.size() as u64;
    let r = cc.rank as usize;
    let mut rdispl = 0u64;
    for p in 0..n {
        let cnt = m[p * n + r];
        let sdispl: u64 = m[p * n..p * n + r].iter().sum();
        let bytes = cnt * e;
        let src = c.send_of(p as u32, sdispl * e, bytes)?;
        let dst = c.recv_of(cc.rank, rdispl * e, bytes)?;
        // SAFETY: as above: both pointers are valid for `bytes` bytes.
        unsafe { copy_nt(src, dst, bytes as usize, nt) };
        rdispl += cnt;
    }
    Ok(())
}
