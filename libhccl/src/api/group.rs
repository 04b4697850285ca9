//! Group calls: `HcclGroupStart` / `HcclGroupEnd` (hccl.h; HCCL API reference "HcclGroupStart").
//!
//! "Multiple functions called between HcclGroupStart and HcclGroupEnd are executed as a
//! whole." A group is per calling thread and may nest; the outermost `HcclGroupEnd`
//! launches it. The three documented kinds, which one group may not mix:
//!
//! - **Point-to-point** (`HcclSend`/`HcclRecv`): checked at the call (bad arguments fail
//!   there), held, and launched by `HcclGroupEnd` as one batched transfer per communicator
//!   and stream, so a rank may send to and receive from the same peer in one group (the
//!   order inside the group does not matter: nothing waits for the matching call of a peer
//!   until the batch runs). `HcclBatchSendRecv` inside a group is `HCCL_E_NOT_SUPPORT`, as
//!   the reference states.
//! - **Collectives**: checked at the call, held, and launched by `HcclGroupEnd` in issue
//!   order per communicator, different communicators from their own threads, so one thread
//!   may drive the ranks of several devices (a collective otherwise waits at its call until
//!   every rank made it).
//! - **Communicator init** by root info (`HcclCommInitRootInfo[Config]`): held, and joined
//!   by `HcclGroupEnd` together, so one thread can create the communicators of several
//!   devices ("managing NPUs in a single process with multiple threads"), each with the
//!   device that was current at its call. Other management calls run at once.
//!
//! `HcclGroupEnd` without a matching start is `HCCL_E_PARA`.

use super::entry;
use crate::algo::{self, Op, P2p};
use crate::comm::{CommInner, HcclComm, Member};
use crate::config::CommCfg;
use crate::errors::{HResult, HcclError, HCCL_E_NOT_SUPPORT};
use crate::fingerprint::{opcode, Fp};
use crate::globals::GROUP;
use std::ffi::c_void;
use std::sync::Arc;

/// What a group holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    P2p,
    Collective,
    Init,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::P2p => "point-to-point calls (HcclSend/HcclRecv)",
            Kind::Collective => "collective calls",
            Kind::Init => "communicator initialisation",
        }
    }
}

/// Point-to-point items held for one (communicator, stream).
struct HeldP2p {
    comm: Arc<CommInner>,
    stream: usize,
    items: Vec<P2p>,
    what: Vec<String>,
}

/// A communicator init by root info held until `HcclGroupEnd`, with the device that was
/// current at its call.
pub struct HeldInit {
    /// Root id of the communicator: inits with the same id are joined together.
    pub id: [u8; 16],
    /// Where the root listens.
    pub root: std::net::SocketAddr,
    pub n: u32,
    pub member: Member,
    pub name: String,
    pub cfg: CommCfg,
    /// Where the communicator handle goes (the caller's `HcclComm *`).
    pub out: *mut HcclComm,
}

/// A collective held until `HcclGroupEnd`: checked, not yet met with its peers.
struct HeldColl {
    comm: Arc<CommInner>,
    fp: Fp,
    op: Op,
    stream: usize,
    empty: bool,
}

/// The calling thread's open group ([`GROUP`]).
#[derive(Default)]
pub(crate) struct Group {
    depth: u32,
    kind: Option<Kind>,
    p2p: Vec<HeldP2p>,
    colls: Vec<HeldColl>,
    inits: Vec<HeldInit>,
}

/// Whether the calling thread is inside a group.
pub fn active() -> bool {
    GROUP.with(|g| g.borrow().depth > 0)
}

/// Note that a call of `kind` is made inside the current group (if any): mixing kinds is
/// `HCCL_E_PARA`. Returns whether a group is active.
pub fn note(kind: Kind, call: &str) -> HResult<bool> {
    GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.depth == 0 {
            return Ok(false);
        }
        match g.kind {
            Some(k) if k != kind => Err(HcclError::para(format!(
                "{call} inside a group that holds {}: one HcclGroupStart/HcclGroupEnd group may not mix communicator management, collective and point-to-point calls",
                k.name()
            ))),
            _ => {
                g.kind = Some(kind);
                Ok(true)
            }
        }
    })
}

/// Hold a point-to-point item of `comm` on `stream` until `HcclGroupEnd`.
pub fn hold_p2p(comm: &Arc<CommInner>, stream: *mut c_void, item: P2p, what: String) {
    GROUP.with(|g| {
        let mut g = g.borrow_mut();
        let s = stream as usize;
        match g
            .p2p
            .iter_mut()
            .find(|h| Arc::ptr_eq(&h.comm, comm) && h.stream == s)
        {
            Some(h) => {
                h.items.push(item);
                h.what.push(what);
            }
            None => g.p2p.push(HeldP2p {
                comm: comm.clone(),
                stream: s,
                items: vec![item],
                what: vec![what],
            }),
        }
    })
}

/// Hold a checked collective until `HcclGroupEnd`.
pub fn hold_collective(comm: &Arc<CommInner>, fp: Fp, op: Op, stream: *mut c_void, empty: bool) {
    GROUP.with(|g| {
        g.borrow_mut().colls.push(HeldColl {
            comm: comm.clone(),
            fp,
            op,
            stream: stream as usize,
            empty,
        })
    })
}

/// Launch held collectives: each communicator's in issue order, different communicators
/// on their own threads, so one thread may drive the ranks of several devices (each call
/// meets its peers before it is enqueued).
fn launch_collectives(colls: Vec<HeldColl>) -> HResult<()> {
    let mut per_comm: Vec<Vec<HeldColl>> = Vec::new();
    for h in colls {
        match per_comm
            .iter_mut()
            .find(|v| Arc::ptr_eq(&v[0].comm, &h.comm))
        {
            Some(v) => v.push(h),
            None => per_comm.push(vec![h]),
        }
    }
    let run = |list: Vec<HeldColl>| -> HResult<()> {
        for h in list {
            // SAFETY: the stream was checked at the call; launch_coll only enqueues on it.
            unsafe {
                super::ops::launch_coll(&h.comm, h.fp, h.op, h.stream as *mut c_void, h.empty)?
            };
        }
        Ok(())
    };
    if per_comm.len() == 1 {
        return run(per_comm.pop().unwrap_or_default());
    }
    let results: Vec<HResult<()>> = std::thread::scope(|s| {
        let hs: Vec<_> = per_comm
            .into_iter()
            .map(|list| s.spawn(move || run(list)))
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(HcclError::para("a grouped collective panicked")))
            })
            .collect()
    });
    results.into_iter().find(|r| r.is_err()).unwrap_or(Ok(()))
}

/// Hold a communicator init until `HcclGroupEnd`.
pub fn hold_init(init: HeldInit) {
    GROUP.with(|g| g.borrow_mut().inits.push(init))
}

/// `HcclBatchSendRecv` is not supported inside a group (HCCL API reference).
pub fn refuse_batch() -> HResult<()> {
    if active() {
        return Err(HcclError::new(
            HCCL_E_NOT_SUPPORT,
            "HcclBatchSendRecv cannot be used inside HcclGroupStart/HcclGroupEnd; use HcclSend/HcclRecv in the group, or call HcclBatchSendRecv outside it",
        ));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn HcclGroupStart() -> i32 {
    entry("HcclGroupStart", std::ptr::null_mut(), String::new, || {
        GROUP.with(|g| g.borrow_mut().depth += 1);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn HcclGroupEnd() -> i32 {
    entry("HcclGroupEnd", std::ptr::null_mut(), String::new, || {
        let (p2p, colls, inits) = GROUP.with(|g| {
            let mut g = g.borrow_mut();
            if g.depth == 0 {
                return Err(HcclError::para(
                    "HcclGroupEnd without a matching HcclGroupStart on this thread",
                ));
            }
            g.depth -= 1;
            if g.depth > 0 {
                return Ok((Vec::new(), Vec::new(), Vec::new()));
            }
            g.kind = None;
            Ok((
                std::mem::take(&mut g.p2p),
                std::mem::take(&mut g.colls),
                std::mem::take(&mut g.inits),
            ))
        })?;
        if !inits.is_empty() {
            launch_inits(inits)?;
        }
        if !colls.is_empty() {
            launch_collectives(colls)?;
        }
        let mut first_err = None;
        for h in p2p {
            let n = h.items.len();
            let mut o = Op::new(
                opcode::BATCH_SEND_RECV,
                format!("group of {n} point-to-point calls: {}", h.what.join(", ")),
            );
            o.p2p = h.items;
            // SAFETY: the stream was checked when the first item was held.
            if let Err(e) = unsafe { algo::enqueue(&h.comm, o, h.stream as *mut c_void) } {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

/// Join the held inits: those with the same root id with one `join` of all their members
/// (as `HcclCommInitAll` does), so one thread can create a communicator spanning several of
/// its devices.
fn launch_inits(inits: Vec<HeldInit>) -> HResult<()> {
    let mut groups: Vec<Vec<HeldInit>> = Vec::new();
    for i in inits {
        match groups.iter_mut().find(|g| g[0].id == i.id) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    for g in groups {
        let members: Vec<Member> = g.iter().map(|h| h.member).collect();
        let comms = super::comm::join_root_info(
            &g[0].id, g[0].root, g[0].n, &members, &g[0].name, &g[0].cfg,
        )?;
        for (h, c) in g.iter().zip(comms) {
            // SAFETY: `out` was checked non-NULL at the call; the caller keeps it valid until
            // HcclGroupEnd returns (the group-call contract).
            unsafe { *h.out = crate::comm::register(c) };
        }
    }
    Ok(())
}
