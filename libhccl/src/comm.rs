//! Communicators: handles, joining the control block, waiting for peers with useful
//! timeouts, the call-time rendezvous that catches mismatched calls, and destroy.
//!
//! A communicator's ranks on this rank's server meet in the control block (its slots are
//! those ranks, by their index on the server); ranks on other servers are reached through
//! `cross` (connections, fingerprints and failure notices over TCP). A communicator on one
//! server has no `cross`, and its slots are its ranks.

use crate::config::CommCfg;
use crate::errors::{HResult, HcclError, HCCL_E_PARA, HCCL_E_REMOTE, HCCL_E_TIMEOUT};
use crate::fingerprint::{check_all, op_name, Fp};
use crate::globals::{COMMS, INCARNATIONS};
use crate::history::History;
use crate::rt::Rt;
use crate::shm::{self, Shm, Slot, FP_RING, STATE_DESTROYED, STATE_EMPTY, STATE_JOINED};
use npu_emu::wait::{wait_until, Policy, WaitError, Word};
use npu_emu_ffi::handles::HandleKind;
use npu_emu_ffi::os;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub type HcclComm = *mut c_void;

/// One rank's communicator, shared with the stream tasks it enqueued.
pub struct CommInner {
    pub id: [u8; 16],
    /// Key of the tags on what this rank publishes ([`shm::tag_key`]).
    pub key: [u8; 32],
    pub name: String,
    pub rank: u32,
    pub n: u32,
    /// Which server each rank is on.
    pub topo: crate::topo::Topo,
    /// The ranks on other servers, if any.
    pub cross: Option<crate::cross::Cross>,
    pub device_logical: i32,
    pub device_phys: u32,
    pub shm: Arc<Shm>,
    pub rt: &'static Rt,
    pub exec_timeout: Option<Duration>,
    /// How this rank waits for its peers: [`Policy::for_participants`] of the ranks on its
    /// server, [`Policy::across_servers`] when the communicator spans servers.
    pub policy: Policy,
    pub deterministic: u32,
    /// Host-side sequence number of the last collective called.
    pub seq: AtomicU64,
    /// Point-to-point message counters per peer (host side).
    pub send_k: Mutex<Vec<u64>>,
    pub recv_k: Mutex<Vec<u64>>,
    pub history: History,
    pub async_error: AtomicI32,
    /// Which collective may run next on a stream (they run in call order even when a
    /// program spreads one communicator over several streams).
    turn: Mutex<Turn>,
    /// Notified when `turn` moves on (stream workers of this process sleep on it).
    turn_word: Word,
    /// Nanoseconds spent spinning for peers that shared our CPU since we last found every
    /// awaited peer on another CPU (see [`CommInner::wait_peers_with`]).
    colocated_ns: AtomicU64,
    /// When (`since_start_ns`) the spin budget ran out, 0 while it has not.
    colocated_out_at: AtomicU64,
    /// When (`since_start_ns`) this rank last stepped off a peer's CPU, 0 if never.
    stepped_at: AtomicU64,
    /// When (`since_start_ns`) this rank last looked at how the ranks are spread over the
    /// CPUs ([`CommInner::balance_cpus`]), 0 if never.
    balanced_at: AtomicU64,
    pub destroyed: std::sync::atomic::AtomicBool,
    destroy_requested: std::sync::atomic::AtomicBool,
    /// Operations enqueued and not yet run (or discarded).
    pub pending: AtomicU64,
    /// The rank table this communicator was made from (its derived key), if any.
    pub origin: Mutex<Option<[u8; 16]>>,
    /// Per inline buffer (sequence parity): the last collective whose input this rank staged
    /// there and its peers read (0: none). Before staging again, every peer's `done` word
    /// must have reached it ([`crate::algo::small`]).
    pub inline_last: [AtomicU64; 2],
    /// Small collectives published at their call and not finished yet, with their stream
    /// ([`crate::defer`]); `ndeferred` mirrors their number for a lock-free look.
    pub deferred: Mutex<crate::defer::Deferred>,
    pub ndeferred: AtomicU64,
    /// The last collective completed at its call whose peers were not all done with this
    /// rank's buffers yet, and the stream whose gate waits for them
    /// ([`crate::defer::leave_done`]); `done_gated` mirrors the stream (0: none).
    pub done_gate: Mutex<Option<crate::defer::DoneGate>>,
    pub done_gated: std::sync::atomic::AtomicUsize,
    /// Per rank: the last publication of it whose tag this rank checked (see
    /// `algo::Coll::published`).
    pub pub_seen: Vec<Mutex<Option<[u64; 11]>>>,
    /// A collective every peer's `read` word had reached when last looked at (see
    /// [`CommInner::ring_room`]).
    read_floor: AtomicU64,
    /// Collectives whose rendezvous was left to their stream task (a peer was late at the
    /// call, see [`CommInner::hold_read`]): this rank has not read their fingerprint
    /// entries yet, so its `read` word stays below the oldest. `nheld` mirrors their
    /// number for a lock-free look.
    read_held: Mutex<ReadHold>,
    nheld: AtomicU64,
}

/// `a >= b` for 32-bit sequence words that may wrap.
pub fn seq_ge(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// What an `HcclComm` is: a handle of [`COMMS`].
pub static COMM: HandleKind = HandleKind::new(*b"CC", "communicator", "HcclCommInit*");

/// Register a communicator and give its handle.
pub fn register(inner: Arc<CommInner>) -> HcclComm {
    COMMS.lock().insert(inner) as HcclComm
}

/// The communicator behind a handle, or a message saying why there is none.
pub fn get(h: HcclComm) -> HResult<Arc<CommInner>> {
    Ok(COMMS.lock().get(h as u64, "comm")?.clone())
}

/// Remove a handle; the communicator lives on while queued operations use it.
pub fn unregister(h: HcclComm) -> HResult<Arc<CommInner>> {
    Ok(COMMS.lock().remove(h as u64, "comm")?)
}

/// Whether this process has a live communicator made from rank table `key` as `rank`.
pub fn live_from_table(key: &[u8; 16], rank: u32) -> bool {
    COMMS
        .lock()
        .values()
        .any(|c| c.rank == rank && c.origin.lock().as_ref() == Some(key))
}

/// Handle of a live communicator (for printing history on failures), if `h` is one.
pub fn peek(h: HcclComm) -> Option<Arc<CommInner>> {
    COMMS.lock().peek(h as u64).cloned()
}

/// How many times this process made a communicator with a given derived id and rank, so
/// re-creating the same communicator (same table, same sub-communicator) gets a new id
/// that every rank derives identically.
pub fn incarnation(key: &[u8; 16], rank: u32) -> u64 {
    let mut g = INCARNATIONS.lock();
    let c = g.entry((*key, rank)).or_insert(0);
    *c += 1;
    *c
}

/// 128-bit hash of some byte strings (two differently seeded FNV-1a).
pub fn hash128(parts: &[&[u8]]) -> [u8; 16] {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for p in parts {
        for &x in p.iter().chain(&(p.len() as u64).to_le_bytes()) {
            a = (a ^ x as u64).wrapping_mul(0x100_0000_01b3);
            b = (b ^ x as u64)
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a.to_le_bytes());
    out[8..].copy_from_slice(&b.to_le_bytes());
    out
}

/// Where a rank is, for [`join`].
#[derive(Clone, Copy, Debug)]
pub struct Member {
    pub rank: u32,
    pub device_logical: i32,
    pub device_phys: u32,
}

/// Where the control block of communicator `id` lives ([`shm::block_name`]).
pub fn block_path(node_dir: &Path, id: &[u8; 16]) -> PathBuf {
    node_dir.join(shm::block_name(id))
}

/// A short public name for communicator `id` (in default communicator names), which does not
/// give the id away.
pub fn public_id(id: &[u8; 16]) -> String {
    shm::digest(&[b"npu-emu hccl public name", id])[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A control block that still holds ranks of a process that is gone (an earlier job that
/// crashed or never destroyed its communicator).
fn stale(shm: &Shm) -> bool {
    (0..shm.n()).any(|r| {
        let s = &shm.slot(r).ident.0;
        match s.state.load(Ordering::Acquire) {
            STATE_EMPTY => false,
            STATE_DESTROYED => true,
            _ => !s.alive(),
        }
    })
}

/// A control block no live process uses any more (every rank that joined is gone or
/// destroyed its communicator).
fn abandoned(shm: &Shm) -> bool {
    let mut joined = false;
    for r in 0..shm.n() {
        let s = &shm.slot(r).ident.0;
        match s.state.load(Ordering::Acquire) {
            STATE_EMPTY => {}
            STATE_DESTROYED => joined = true,
            _ => {
                if s.alive() {
                    return false;
                }
                joined = true;
            }
        }
    }
    joined
}

/// Remove control blocks of communicators whose ranks are all gone (jobs that crashed or
/// never destroyed their communicators), so the node directory does not fill up.
fn collect_garbage(node_dir: &Path) {
    let Ok(dir) = std::fs::read_dir(node_dir) else {
        return;
    };
    for e in dir.filter_map(|e| e.ok()).take(4096) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with("hccl-") || name.len() != 5 + 32 {
            continue;
        }
        let path = e.path();
        let Some(n) = shm::peek_nranks(&path) else {
            continue;
        };
        if let Ok(s) = Shm::open_existing(&path, n) {
            if abandoned(&s) {
                s.unlink();
            }
        }
    }
}

fn attach(shm: &Shm, n: u32, m: &Member) -> HResult<()> {
    let h = shm.header();
    match h
        .magic
        .compare_exchange(0, shm::MAGIC, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => {}
        Err(v) if v == shm::MAGIC => {}
        Err(v) => {
            return Err(HcclError::new(
                crate::errors::HCCL_E_INTERNAL,
                format!(
                    "control block {} is corrupt (magic {v:#x})",
                    shm.path.display()
                ),
            ))
        }
    }
    match h
        .nranks
        .compare_exchange(0, n, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => {}
        Err(v) if v == n => {}
        Err(v) => {
            return Err(HcclError::para(format!(
                "nRanks={n} on rank {} but the ranks that joined before passed nRanks={v}",
                m.rank
            )))
        }
    }
    let s = &shm.slot(m.rank).ident.0;
    if s.state.load(Ordering::Acquire) != STATE_EMPTY {
        return Err(HcclError::para(format!(
            "rank {} is already taken in this communicator by pid {} (device {}); every rank must pass a different rank",
            m.rank,
            s.pid.load(Ordering::Relaxed),
            s.device.load(Ordering::Relaxed)
        )));
    }
    s.set_process();
    s.tid.store(os::gettid() as u32, Ordering::Relaxed);
    s.device.store(m.device_phys, Ordering::Relaxed);
    if s.state
        .compare_exchange(
            STATE_EMPTY,
            STATE_JOINED,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_err()
    {
        return Err(HcclError::para(format!(
            "rank {} joined twice at the same time (pid {}); every rank must pass a different rank",
            m.rank,
            s.pid.load(Ordering::Relaxed)
        )));
    }
    h.refs.fetch_add(1, Ordering::AcqRel);
    h.joined.bump_wake();
    Ok(())
}

fn joined_ranks(shm: &Shm) -> Vec<bool> {
    (0..shm.n())
        .map(|r| shm.slot(r).ident.0.state.load(Ordering::Acquire) != STATE_EMPTY)
        .collect()
}

enum InitWait {
    Restart,
    Fail(HcclError),
}

/// Where a member is in a communicator that may span servers.
pub struct Placement {
    pub topo: crate::topo::Topo,
    pub cross: Option<crate::cross::Cross>,
}

/// Join the communicator `id` as each of `members` (one for processes, several for
/// `HcclCommInitAll`) and wait until all `n` ranks joined, at most `connect_timeout`. Every
/// rank is on this server.
#[allow(clippy::too_many_arguments)]
pub fn join(
    id: [u8; 16],
    node_dir: &Path,
    n: u32,
    members: &[Member],
    name: &str,
    cfg: &CommCfg,
    rt: &'static Rt,
) -> HResult<Vec<Arc<CommInner>>> {
    if n == 0 || n > shm::MAX_RANKS {
        return Err(HcclError::para(format!(
            "nRanks={n}; expected 1 to {}",
            shm::MAX_RANKS
        )));
    }
    let placed: Vec<(Member, Placement)> = members
        .iter()
        .map(|m| {
            (
                *m,
                Placement {
                    topo: crate::topo::Topo::single(m.rank, n),
                    cross: None,
                },
            )
        })
        .collect();
    join_placed(id, node_dir, placed, name, cfg, rt)
}

/// [`join`] for members placed by a bootstrap: the control block holds the communicator's
/// ranks on this server (all members are on it), the others are reached through `cross`.
pub fn join_placed(
    id: [u8; 16],
    node_dir: &Path,
    placed: Vec<(Member, Placement)>,
    name: &str,
    cfg: &CommCfg,
    rt: &'static Rt,
) -> HResult<Vec<Arc<CommInner>>> {
    let conf = crate::config()?;
    let topo0 = placed[0].1.topo.clone();
    let world = topo0.n;
    let local: Vec<u32> = topo0.local().to_vec();
    let n = local.len() as u32;
    if world == 0 || world > shm::MAX_RANKS {
        return Err(HcclError::para(format!(
            "nRanks={world}; expected 1 to {}",
            shm::MAX_RANKS
        )));
    }
    // Slots of the control block are the ranks' indices on this server.
    let members: Vec<Member> = placed
        .iter()
        .map(|(m, p)| Member {
            rank: p.topo.local_index[m.rank as usize],
            ..*m
        })
        .collect();
    let members = &members[..];
    let glob = |slot: u32| local[slot as usize];
    // One control block per server: the servers of a communicator may share a node.
    let block_id = if topo0.single_server() {
        id
    } else {
        hash128(&[b"server", &id, &topo0.my_server().to_le_bytes()])
    };
    collect_garbage(node_dir);
    let path = block_path(node_dir, &block_id);
    let mut placed = Some(placed);
    let deadline = Instant::now() + conf.connect_timeout;
    let policy = Policy::for_participants(n);
    'again: loop {
        let shm = Shm::open_rows(&path, n, world)?;
        if stale(&shm) {
            shm.unlink();
            continue;
        }
        for m in members {
            attach(&shm, n, m)?;
        }
        // Wait for everyone.
        let h = shm.header();
        let r = wait_until(
            &policy,
            &h.joined,
            || joined_ranks(&shm).iter().all(|&j| j),
            Some(deadline),
            || {
                if shm.current_ino() != Some(shm.ino) {
                    return Err(InitWait::Restart);
                }
                for r in 0..n {
                    let s = &shm.slot(r).ident.0;
                    if s.state.load(Ordering::Acquire) == STATE_JOINED && !s.alive() {
                        return Err(InitWait::Fail(HcclError::new(
                            HCCL_E_REMOTE,
                            format!(
                                "rank {} (pid {}) joined communicator {name} and then died",
                                glob(r),
                                s.pid.load(Ordering::Relaxed)
                            ),
                        )));
                    }
                }
                Ok(())
            },
        );
        match r {
            Ok(()) => {}
            Err(WaitError::Check(InitWait::Restart)) => {
                // Our block was replaced (it was stale for someone); join the new one.
                for m in members {
                    shm.slot(m.rank)
                        .ident
                        .0
                        .state
                        .store(STATE_DESTROYED, Ordering::Release);
                }
                continue 'again;
            }
            Err(WaitError::Check(InitWait::Fail(e))) => {
                leave(&shm, members);
                return Err(e);
            }
            Err(WaitError::TimedOut) => {
                let joined = joined_ranks(&shm);
                let missing: Vec<u32> = (0..n).filter(|&r| !joined[r as usize]).map(glob).collect();
                let mut msg = format!(
                    "timed out after {} s (HCCL_CONNECT_TIMEOUT) waiting for ranks {missing:?} of {n} to join communicator {name}; joined:",
                    conf.connect_timeout.as_secs()
                );
                for r in (0..n).filter(|&r| joined[r as usize]) {
                    let s = &shm.slot(r).ident.0;
                    let pid = s.pid.load(Ordering::Relaxed);
                    let alive = s.alive();
                    msg.push_str(&format!(
                        "\n    rank {}: pid {pid} ({}), device {}",
                        glob(r),
                        if alive { "alive" } else { "dead" },
                        s.device.load(Ordering::Relaxed)
                    ));
                }
                leave(&shm, members);
                return Err(HcclError::new(HCCL_E_TIMEOUT, msg));
            }
        }
        let shm = Arc::new(shm);
        let mut out = Vec::new();
        let mut placed_iter = placed.take().unwrap_or_default().into_iter();
        for m in members {
            let Some((orig, place)) = placed_iter.next() else {
                break;
            };
            let policy = if place.cross.is_some() {
                policy.across_servers()
            } else {
                policy
            };
            out.push(Arc::new(CommInner {
                id,
                key: shm::tag_key(&id),
                name: name.to_string(),
                rank: orig.rank,
                n: world,
                topo: place.topo,
                cross: place.cross,
                device_logical: m.device_logical,
                device_phys: m.device_phys,
                shm: shm.clone(),
                rt,
                exec_timeout: match cfg.exec_timeout {
                    Some(0) => None,
                    Some(s) => Some(Duration::from_secs(s as u64)),
                    None => conf.exec_timeout,
                },
                policy,
                deterministic: cfg.deterministic.unwrap_or(0),
                seq: AtomicU64::new(0),
                send_k: Mutex::new(vec![0; world as usize]),
                recv_k: Mutex::new(vec![0; world as usize]),
                history: History::default(),
                async_error: AtomicI32::new(0),
                turn: Mutex::new(Turn {
                    next: 1,
                    skipped: Default::default(),
                }),
                turn_word: Word::new(),
                colocated_ns: AtomicU64::new(0),
                colocated_out_at: AtomicU64::new(0),
                stepped_at: AtomicU64::new(0),
                balanced_at: AtomicU64::new(0),
                destroyed: Default::default(),
                destroy_requested: Default::default(),
                pending: AtomicU64::new(0),
                origin: Mutex::new(None),
                inline_last: [AtomicU64::new(0), AtomicU64::new(0)],
                deferred: Mutex::new(Default::default()),
                ndeferred: AtomicU64::new(0),
                done_gate: Mutex::new(None),
                done_gated: Default::default(),
                pub_seen: (0..world).map(|_| Mutex::new(None)).collect(),
                read_floor: AtomicU64::new(0),
                read_held: Mutex::new(ReadHold::default()),
                nheld: AtomicU64::new(0),
            }));
        }
        return Ok(out);
    }
}

fn leave(shm: &Shm, members: &[Member]) {
    for m in members {
        shm.slot(m.rank)
            .ident
            .0
            .state
            .store(STATE_DESTROYED, Ordering::Release);
    }
    if shm
        .header()
        .refs
        .fetch_sub(members.len() as u32, Ordering::AcqRel) as usize
        == members.len()
    {
        shm.unlink();
    }
}

struct Turn {
    next: u64,
    skipped: std::collections::BTreeSet<u64>,
}

/// Why a wait for peers ended early.
enum PeerWait {
    Dead(u32),
    Failed(u32),
    Destroyed(u32),
}

impl CommInner {
    /// Rank `r`'s slot in the control block (`r` on this server).
    pub fn slot(&self, r: u32) -> &Slot {
        debug_assert!(self.topo.same_server(r, self.rank));
        self.shm.slot(self.topo.local_index[r as usize])
    }

    /// Rank `r`'s index on this server (its slot in the control block).
    pub fn slot_index(&self, r: u32) -> u32 {
        self.topo.local_index[r as usize]
    }

    /// The ranks on this server (all of them on one server), ascending.
    pub fn local_ranks(&self) -> impl Iterator<Item = u32> + '_ {
        self.topo.local().iter().copied()
    }

    /// Ranks on other servers.
    pub fn remote_ranks(&self) -> Vec<u32> {
        if self.cross.is_some() {
            self.topo.remote()
        } else {
            Vec::new()
        }
    }

    pub fn me(&self) -> &Slot {
        self.slot(self.rank)
    }

    /// `"comm NAME rank R/N"` for messages.
    pub fn who(&self) -> String {
        format!("communicator {} rank {}/{}", self.name, self.rank, self.n)
    }

    /// What rank `p` is doing, for timeout and failure messages.
    pub fn describe_rank(&self, p: u32) -> String {
        if !self.topo.same_server(p, self.rank) {
            return match &self.cross {
                Some(x) => x.describe(p),
                None => format!("rank {p}"),
            };
        }
        let s = self.slot(p);
        let id = &s.ident.0;
        let pid = id.pid.load(Ordering::Relaxed);
        let state = match id.state.load(Ordering::Acquire) {
            STATE_DESTROYED => "destroyed its communicator".to_string(),
            _ => {
                if !id.alive() {
                    "DEAD".to_string()
                } else if npu_emu_ffi::os::process_stopped(pid) {
                    "alive but STOPPED (state T in /proc: SIGSTOP, Ctrl-Z or a debugger); it \
                     makes no progress until it gets SIGCONT"
                        .to_string()
                } else {
                    "alive".to_string()
                }
            }
        };
        let call = s.call.0.word.value.load(Ordering::Acquire);
        let call_op = s.call.0.op.load(Ordering::Relaxed);
        let post = s.post.0.value.load(Ordering::Acquire);
        let done = s.done.0.value.load(Ordering::Acquire);
        let exec_op = s.exec_op.0.load(Ordering::Relaxed);
        let mut m = format!(
            "rank {p} (pid {pid}, device {}, {state}): ",
            id.device.load(Ordering::Relaxed)
        );
        if call == 0 {
            m.push_str("has called no collective yet");
        } else {
            m.push_str(&format!("last called {} #{call}", op_name(call_op)));
        }
        if post != 0 {
            m.push_str(&format!(
                "; its stream reached {} #{post} ({})",
                op_name(exec_op),
                if seq_ge(done, post) {
                    "finished"
                } else {
                    "in progress"
                }
            ));
        }
        let pk = id.p2p_k.load(Ordering::Relaxed);
        if pk != 0 {
            let op = id.p2p_op.load(Ordering::Relaxed);
            let peer = id.p2p_peer.load(Ordering::Relaxed);
            m.push_str(&format!(
                "; last point-to-point: {} {} rank {peer} (message #{pk} of that pair)",
                op_name(op),
                if op == crate::fingerprint::opcode::SEND {
                    "to"
                } else {
                    "from"
                }
            ));
        }
        let fs = id.failed_seq.load(Ordering::Acquire);
        if fs != 0 {
            m.push_str(&format!("; FAILED: {}", s.reason()));
        }
        m
    }

    /// Note a failure in the shared slot, so peers waiting on this rank fail fast.
    pub fn mark_failed(&self, seq: u64, code: i32, reason: &str) {
        let id = &self.me().ident.0;
        if id.failed_seq.load(Ordering::Acquire) != 0 {
            return;
        }
        if let Some(x) = &self.cross {
            x.announce_failure(code, reason);
        }
        self.me().set_reason(reason);
        id.failed_code.store(code as u32, Ordering::Relaxed);
        id.failed_seq.store(seq + 1, Ordering::Release);
        // Wake anyone sleeping on our words so they notice.
        self.me().call.0.word.nudge();
        self.me().post.0.nudge();
        self.me().done.0.nudge();
    }

    /// After 10 s of waiting for ranks that live in this very process (`HcclCommInitAll`),
    /// say once on stderr what is probably wrong, long before the timeout.
    fn hint_same_process(
        &self,
        word: &dyn Fn(&Slot) -> &Word,
        target: u32,
        started: Instant,
        warned: &std::cell::Cell<bool>,
        phase: &dyn Fn() -> String,
    ) {
        if warned.get() || started.elapsed() < Duration::from_secs(10) {
            return;
        }
        let me = std::process::id();
        let local: Vec<u32> = self
            .local_ranks()
            .filter(|&q| {
                q != self.rank
                    && self.slot(q).ident.0.pid.load(Ordering::Relaxed) == me
                    && !seq_ge(word(self.slot(q)).value.load(Ordering::Acquire), target)
            })
            .collect();
        if local.is_empty() {
            return;
        }
        warned.set(true);
        crate::log_always(
            npu_emu::config::LogLevel::Warning,
            &format!(
                "{}: still waiting after 10 s for ranks {local:?}, which are in this process, to {}; each rank's calls must come from its own thread (a call waits until every rank made it)",
                self.who(),
                phase()
            ),
        );
    }

    /// How long a wait makes no progress before [`CommInner::hint_stalled`] speaks: a
    /// minute, or half of `HCCL_EXEC_TIMEOUT` when that is shorter.
    pub fn stall_hint_after(&self) -> Duration {
        let minute = Duration::from_secs(60);
        self.exec_timeout.map_or(minute, |t| minute.min(t / 2))
    }

    /// After [`CommInner::stall_hint_after`] without progress, say once on stderr which
    /// ranks this one waits for and what they are doing (a stopped process, a rank that
    /// never called), long before `HCCL_EXEC_TIMEOUT` (CANN's default is 1836 s).
    pub fn hint_stalled(
        &self,
        stuck: &[u32],
        started: Instant,
        warned: &std::cell::Cell<bool>,
        waiting_for: &dyn Fn() -> String,
    ) {
        if warned.get() || stuck.is_empty() || started.elapsed() < self.stall_hint_after() {
            return;
        }
        warned.set(true);
        let mut m = format!(
            "{}: no progress for {} s waiting for {}; still waiting{}:",
            self.who(),
            started.elapsed().as_secs(),
            waiting_for(),
            match self.exec_timeout {
                Some(t) => format!(" until HCCL_EXEC_TIMEOUT ({} s)", t.as_secs()),
                None => " (HCCL_EXEC_TIMEOUT=0: forever)".to_string(),
            }
        );
        for &q in stuck {
            m.push_str(&format!("\n    {}", self.describe_rank(q)));
        }
        crate::log_always(npu_emu::config::LogLevel::Warning, &m);
    }

    /// Peers that have not reached `target` and are dead (reported first) or failed.
    fn check_peers(&self, word: &dyn Fn(&Slot) -> &Word, target: u32) -> Result<(), PeerWait> {
        let mut failed = None;
        for p in self.local_ranks() {
            if p == self.rank || seq_ge(word(self.slot(p)).value.load(Ordering::Acquire), target) {
                continue;
            }
            let id = &self.slot(p).ident.0;
            if !id.alive() {
                // A rank that failed and then exited: its failure is the news.
                if id.failed_seq.load(Ordering::Acquire) != 0 {
                    return Err(PeerWait::Failed(p));
                }
                return Err(PeerWait::Dead(p));
            }
            if id.state.load(Ordering::Acquire) == STATE_DESTROYED {
                return Err(PeerWait::Destroyed(p));
            }
            if failed.is_none() && id.failed_seq.load(Ordering::Acquire) != 0 {
                failed = Some(p);
            }
        }
        failed.map_or(Ok(()), |p| Err(PeerWait::Failed(p)))
    }

    /// Wait until every peer's `word` reached `target`; `phase` says what for, in messages
    /// ("call collective #5", "finish this operation", …).
    pub fn wait_peers(
        &self,
        word: &dyn Fn(&Slot) -> &Word,
        target: u64,
        phase: &dyn Fn() -> String,
        started: Instant,
    ) -> HResult<()> {
        self.wait_peers_with(&self.policy, word, target, &|_| false, phase, started)
    }

    /// [`CommInner::wait_peers`] with another wait policy, and `arrived(p)`: another sign
    /// that peer `p` is there, which a spinning or polling waiter checks besides the word
    /// (a sleeper is woken through the word, which the peer changes after that sign).
    pub fn wait_peers_with(
        &self,
        policy: &Policy,
        word: &dyn Fn(&Slot) -> &Word,
        target: u64,
        arrived: &dyn Fn(u32) -> bool,
        phase: &dyn Fn() -> String,
        started: Instant,
    ) -> HResult<()> {
        self.wait_peers_until(policy, word, target, arrived, phase, started, None)
            .map(|_| ())
    }

    /// [`CommInner::wait_peers_with`] that gives up at `soft` (if given) without an error:
    /// `Ok(false)` then.
    #[allow(clippy::too_many_arguments)]
    pub fn wait_peers_until(
        &self,
        policy: &Policy,
        word: &dyn Fn(&Slot) -> &Word,
        target: u64,
        arrived: &dyn Fn(u32) -> bool,
        phase: &dyn Fn() -> String,
        started: Instant,
        soft: Option<Instant>,
    ) -> HResult<bool> {
        let t = target as u32;
        let hard = self.exec_timeout.map(|d| started + d);
        let deadline = match (hard, soft) {
            (Some(h), Some(s)) => Some(h.min(s)),
            (h, s) => h.or(s),
        };
        let mine = if policy.spin.is_zero() { 0 } else { cpu_tag() };
        for p in self.local_ranks() {
            if p == self.rank {
                continue;
            }
            let w = word(self.slot(p));
            // A peer last seen on our CPU cannot arrive while we spin there. Spinning still
            // makes the two of us a busy CPU beside an idle one, which the scheduler's
            // balancing pulls apart within a tick or two, after which both spin on their
            // own CPU (a sleeping pair that wakes each other is kept together instead). But
            // when the other CPUs are busy nothing moves us, and every operation would cost
            // the spin: once the spins spent beside a peer pass COLOCATED_SPIN_BUDGET_NS, sleep
            // at once instead (a futex hand-off per operation, a few µs).
            let mut same_cpu = mine != 0 && self.slot(p).call.0.cpu.load(Ordering::Relaxed) == mine;
            // Every rank may have a core of its own here (we spin), so rather than wait for
            // the scheduler to pull the pair apart (which it may not do for a pair that
            // sleeps and wakes by turns), the higher rank steps off the shared CPU at once,
            // at most every COLOCATED_STEP_NS. Measured on 2 vCPUs: 2-rank 8-byte AllReduce
            // runs that started co-located took 2.4-8 µs per operation for the whole run.
            if same_cpu && self.rank > p && self.step_off((mine - 1) as i32) {
                same_cpu = false;
            }
            if !same_cpu && mine != 0 {
                self.colocated_ns.store(0, Ordering::Relaxed);
                self.colocated_out_at.store(0, Ordering::Relaxed);
            }
            let mut spun_beside =
                same_cpu && self.colocated_ns.load(Ordering::Relaxed) < COLOCATED_SPIN_BUDGET_NS;
            if same_cpu && !spun_beside {
                // The budget is spent. The other CPUs were busy then; they may not be now,
                // and a pair that only ever sleeps for each other stays together for good
                // (measured: 9 µs per 2-rank AllReduce instead of 0.8 for a whole run).
                // So the budget comes back once a second: spinning costs at most 2% then.
                let now = since_start_ns();
                let out_at = self.colocated_out_at.load(Ordering::Relaxed);
                if out_at == 0 {
                    self.colocated_out_at.store(now, Ordering::Relaxed);
                } else if now.saturating_sub(out_at) >= COLOCATED_RETRY_NS {
                    self.colocated_out_at.store(0, Ordering::Relaxed);
                    self.colocated_ns.store(0, Ordering::Relaxed);
                    spun_beside = true;
                }
            }
            let policy = &if same_cpu && !spun_beside {
                policy.sleep_at_once()
            } else {
                *policy
            };
            let t0 = spun_beside.then(Instant::now);
            let warned = std::cell::Cell::new(false);
            let stalled = std::cell::Cell::new(false);
            let r = wait_until(
                policy,
                w,
                || arrived(p) || seq_ge(w.value.load(Ordering::Acquire), t),
                deadline,
                || {
                    self.check_peers(word, t)?;
                    self.hint_same_process(word, t, started, &warned, phase);
                    let stuck: Vec<u32> = (0..self.n)
                        .filter(|&q| {
                            q != self.rank
                                && !seq_ge(word(self.slot(q)).value.load(Ordering::Acquire), t)
                        })
                        .collect();
                    self.hint_stalled(&stuck, started, &stalled, &|| {
                        format!("ranks {stuck:?} to {}", phase())
                    });
                    Ok(())
                },
            );
            if let Some(t0) = t0 {
                let spent = t0.elapsed().as_nanos().min(u64::MAX as u128) as u64;
                self.colocated_ns.fetch_add(spent, Ordering::Relaxed);
            }
            match r {
                Ok(()) => {}
                Err(WaitError::TimedOut)
                    if soft.is_some_and(|s| Instant::now() >= s)
                        && hard.is_none_or(|h| Instant::now() < h) =>
                {
                    return Ok(false);
                }
                Err(WaitError::TimedOut) => {
                    let missing: Vec<u32> = self
                        .local_ranks()
                        .filter(|&q| {
                            q != self.rank
                                && !seq_ge(word(self.slot(q)).value.load(Ordering::Acquire), t)
                        })
                        .collect();
                    let stopped: Vec<u32> = missing
                        .iter()
                        .copied()
                        .filter(|&q| {
                            npu_emu_ffi::os::process_stopped(
                                self.slot(q).ident.0.pid.load(Ordering::Relaxed),
                            )
                        })
                        .collect();
                    let mut msg = format!(
                        "{}: timed out after {} s (HCCL_EXEC_TIMEOUT) waiting for ranks {missing:?} to {}{}:",
                        self.who(),
                        self.exec_timeout.map(|d| d.as_secs()).unwrap_or(0),
                        phase(),
                        if stopped.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "; the processes of ranks {stopped:?} are stopped (SIGSTOP, Ctrl-Z or a debugger)"
                            )
                        }
                    );
                    for q in 0..self.n {
                        msg.push_str(&format!("\n    {}", self.describe_rank(q)));
                    }
                    let me = std::process::id();
                    if missing
                        .iter()
                        .any(|&q| self.slot(q).ident.0.pid.load(Ordering::Relaxed) == me)
                    {
                        msg.push_str(
                            "\n    (some of these ranks are in this process, as with HcclCommInitAll: every call waits until all ranks made it, so each rank's calls must come from its own thread)",
                        );
                    }
                    return Err(HcclError::new(HCCL_E_TIMEOUT, msg));
                }
                Err(WaitError::Check(PeerWait::Dead(q))) => {
                    let mut msg = format!(
                        "{}: rank {q} (pid {}) died before it could {}:",
                        self.who(),
                        self.slot(q).ident.0.pid.load(Ordering::Relaxed),
                        phase(),
                    );
                    for q in 0..self.n {
                        msg.push_str(&format!("\n    {}", self.describe_rank(q)));
                    }
                    return Err(HcclError::new(HCCL_E_REMOTE, msg));
                }
                Err(WaitError::Check(PeerWait::Destroyed(q))) => {
                    let mut msg = format!(
                        "{}: rank {q} destroyed its communicator before it could {}:",
                        self.who(),
                        phase()
                    );
                    for q in 0..self.n {
                        msg.push_str(&format!("\n    {}", self.describe_rank(q)));
                    }
                    return Err(HcclError::new(HCCL_E_REMOTE, msg));
                }
                Err(WaitError::Check(PeerWait::Failed(q))) => {
                    let msg = format!(
                        "{}: rank {q} failed before it could {}: {}",
                        self.who(),
                        phase(),
                        self.slot(q).reason()
                    );
                    return Err(HcclError::new(HCCL_E_REMOTE, msg));
                }
            }
        }
        Ok(true)
    }

    /// The call-time rendezvous of a collective: publish `fp`, wait until every rank called
    /// its collective of the same sequence number, and compare. Returns the sequence number.
    pub fn rendezvous(&self, fp: &mut Fp) -> HResult<u64> {
        self.rendezvous_staged(fp, &mut |_| false)
            .map(|(seq, _)| seq)
    }

    /// [`CommInner::rendezvous`] where the data may travel with the fingerprint: `stage`
    /// runs once the sequence number is known and before the fingerprint is published; it
    /// says whether this rank staged its input (in its inline buffer). Returns the sequence
    /// number and whether every rank staged (then the operation can complete at once: the
    /// rendezvous was its one synchronisation).
    pub fn rendezvous_staged(
        &self,
        fp: &mut Fp,
        stage: &mut dyn FnMut(u64) -> bool,
    ) -> HResult<(u64, bool)> {
        self.rendezvous_deferrable(fp, stage, false, &|| false)
            .map(|(seq, all, _)| (seq, all))
    }

    /// [`CommInner::rendezvous_staged`] for a collective that may finish after its call
    /// (`may_defer`, see [`crate::defer`]): a rank that staged its input and finds a peer
    /// not there yet returns at once with the third value true; the rest of the rendezvous
    /// (wait, check) happens when the deferred operation is finished. When `may_be_late`
    /// says the operation can go to its stream without the rendezvous, a peer later than
    /// [`LATE_AFTER`] also ends the wait with the third value true: the stream task meets
    /// the peers ([`CommInner::meet_late`]), as on CANN, where the call only queues.
    pub fn rendezvous_deferrable(
        &self,
        fp: &mut Fp,
        stage: &mut dyn FnMut(u64) -> bool,
        may_defer: bool,
        may_be_late: &dyn Fn() -> bool,
    ) -> HResult<(u64, bool, bool)> {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        let r = self.rendezvous_at(seq, fp, stage, may_defer, may_be_late);
        if r.is_err() {
            self.finish_turn(seq);
        }
        r
    }

    /// Move this thread off `cpu`, which a peer it waits for runs on, unless it did so less
    /// than [`COLOCATED_STEP_NS`] ago ([`os::step_off_cpu`]: the affinity is restored at
    /// once, so nothing stays pinned).
    fn step_off(&self, cpu: i32) -> bool {
        let now = since_start_ns();
        let last = self.stepped_at.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < COLOCATED_STEP_NS {
            return false;
        }
        self.stepped_at.store(now, Ordering::Relaxed);
        os::step_off_cpu(cpu)
    }

    /// With ranks outnumbering CPUs, spread this server's ranks evenly over the CPUs they
    /// may use. Waiting ranks yield rather than sleep (a sleep and a wake-up per operation
    /// cost more), so every CPU looks busy to the scheduler, and ranks that call each
    /// other every few µs always look cache-hot: it leaves 5 ranks on one CPU and 3 on the
    /// other for a whole run as readily as 4 and 4. Every operation then waits for the
    /// crowded CPU (8 ranks on 2 CPUs, 64 KiB AllReduce: ~55 µs per operation against ~35
    /// in the even runs). So each rank starts on the CPU of its slot's turn, and at most
    /// every [`BALANCE_EVERY_NS`] it looks at the CPUs its peers last called from; if its
    /// own holds more than its share, the highest rank there moves itself to the least
    /// crowded CPU ([`os::move_to_cpu`]: nothing stays pinned, the scheduler may move it
    /// again).
    fn balance_cpus(&self) {
        if !self.policy.spin.is_zero() || self.cross.is_some() {
            return;
        }
        let now = since_start_ns();
        let last = self.balanced_at.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < BALANCE_EVERY_NS {
            return;
        }
        self.balanced_at.store(now, Ordering::Relaxed);
        // The CPU a rank last called from, as its call line says (this rank's was just
        // written).
        let cpu_of = |p: u32| self.slot(p).call.0.cpu.load(Ordering::Relaxed) as i32 - 1;
        let mine = cpu_of(self.rank);
        let cpus = os::allowed_cpus();
        if mine < 0 || cpus.len() < 2 {
            return;
        }
        // The first look of the process, at its first collective: the peers' CPUs are not
        // known yet (and a new job's processes sit where they were started), so each rank
        // goes to the CPU of its slot's turn. Once per thread (a rank's, also with
        // `HcclCommInitAll`'s ranks in one process): the slots of a later communicator (a
        // subgroup) need not agree with the first one's.
        thread_local!(static SPREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
        if last == 0 && !SPREAD.with(|s| s.replace(true)) {
            let at = cpus[self.slot_index(self.rank) as usize % cpus.len()];
            if at != mine {
                os::move_to_cpu(at);
            }
            return;
        }
        let ranks: Vec<(u32, i32)> = self.local_ranks().map(|p| (p, cpu_of(p))).collect();
        let share = ranks.len().div_ceil(cpus.len());
        let on = |c: i32| ranks.iter().filter(|&&(_, x)| x == c).count();
        if on(mine) <= share || ranks.iter().any(|&(p, c)| c == mine && p > self.rank) {
            return;
        }
        let Some(&to) = cpus.iter().min_by_key(|&&c| on(c)) else {
            return;
        };
        if on(to) < share {
            os::move_to_cpu(to);
        }
    }

    /// Whether a rank whose peers `arrived` not all should defer its collective rather
    /// than wait (see [`crate::defer`]): when its ranks do not spin (they outnumber cores,
    /// or the communicator spans servers), or a missing peer last ran on this rank's core.
    /// With a core each, ranks that meet at every call spin a fraction of a µs for each
    /// other on their own cores; letting one run ahead would turn that into a pair that
    /// sleeps and wakes by turns, which the scheduler keeps on one core (measured: 2 ranks,
    /// 0.8 µs per 8-byte AllReduce in step, 5 µs deferred). A pair kept on one core by busy
    /// other cores is such a pair anyway: there, running ahead saves a switch per
    /// operation.
    fn defer_worth(&self, arrived: &dyn Fn(u32) -> bool) -> bool {
        if self.policy.spin.is_zero() {
            return true;
        }
        // Beside a peer, only once spinning did not get the two of us apart (the spin
        // budget of `wait_peers_with` is spent: the other cores are busy). Before that,
        // the spin is what makes the scheduler move one of us to an idle core; a pair
        // that sleeps and wakes by turns would never be moved.
        if self.colocated_ns.load(Ordering::Relaxed) < COLOCATED_SPIN_BUDGET_NS {
            return false;
        }
        let mine = cpu_tag();
        mine != 0
            && self.local_ranks().any(|p| {
                p != self.rank
                    && !arrived(p)
                    && self.slot(p).call.0.cpu.load(Ordering::Relaxed) == mine
            })
    }

    /// The policy of waits for deferred collectives: with ranks outnumbering cores the
    /// ordinary one (yield, then sleep); otherwise a rank defers only beside a peer on its
    /// core ([`CommInner::defer_worth`]), where polling would keep that peer off the core.
    fn defer_policy(&self) -> Policy {
        if self.policy.spin.is_zero() {
            self.policy
        } else {
            self.policy.sleep_at_once()
        }
    }

    /// Whether peer `p` published its fingerprint of collective `seq`: the entry's `seq` is
    /// written last, after the fingerprint, `staged` and a tiny input, and the call word
    /// after it.
    fn arrived_at(&self, p: u32, seq: u64) -> bool {
        self.slot(p).fp[(seq % FP_RING as u64) as usize]
            .seq
            .load(Ordering::Acquire)
            == seq
    }

    /// Whether every peer on this server published its fingerprint of collective `seq`.
    pub fn all_arrived(&self, seq: u64) -> bool {
        self.local_ranks()
            .all(|p| p == self.rank || self.arrived_at(p, seq))
    }

    /// This rank has read every peer's fingerprint entry up to collective `seq`, except
    /// those of collectives whose rendezvous its stream tasks have still to do
    /// ([`CommInner::hold_read`]): the word says so only below the oldest of those.
    pub fn store_read(&self, seq: u64) {
        if self.nheld.load(Ordering::Acquire) == 0 {
            self.me().read.0.store_wake(seq as u32);
            return;
        }
        let mut h = self.read_held.lock();
        h.max = h.max.max(seq);
        self.publish_read(&h);
    }

    /// Collective `seq` left its rendezvous to its stream task (a peer was late at the
    /// call): until that task read the peers' fingerprint entries ([`CommInner::release_read`]),
    /// this rank's `read` word must not pass `seq - 1`, or a peer far enough ahead could
    /// overwrite an entry still to be read. Called at the call, before any later
    /// collective's rendezvous.
    pub fn hold_read(&self, seq: u64) {
        let mut h = self.read_held.lock();
        if h.seqs.insert(seq) {
            self.nheld.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Whether collective `seq`'s rendezvous was left to its stream task
    /// ([`CommInner::hold_read`]).
    pub fn holds_read(&self, seq: u64) -> bool {
        self.nheld.load(Ordering::Acquire) != 0 && self.read_held.lock().seqs.contains(&seq)
    }

    /// The stream task of collective `seq` read the peers' fingerprint entries (or never
    /// will: it failed or was discarded). Idempotent.
    pub fn release_read(&self, seq: u64) {
        if self.nheld.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut h = self.read_held.lock();
        if h.seqs.remove(&seq) {
            self.nheld.fetch_sub(1, Ordering::AcqRel);
            h.max = h.max.max(seq);
            self.publish_read(&h);
        }
    }

    fn publish_read(&self, h: &ReadHold) {
        let upto = match h.seqs.first() {
            Some(&oldest) => h.max.min(oldest - 1),
            None => h.max,
        };
        let word = &self.me().read.0;
        // Only forward (`read` only grows; the ring's arithmetic is on the low 32 bits).
        let cur = word.value.load(Ordering::Acquire);
        if (upto as u32).wrapping_sub(cur) as i32 > 0 {
            word.store_wake(upto as u32);
        }
    }

    /// Before this rank writes its fingerprint entry of collective `seq` (which held
    /// `seq - FP_RING`'s): wait until every peer read that one. Peers read at their call,
    /// or, for a collective they deferred, when they finished it, which may be later; a
    /// rank waiting here finishes its own deferred collectives as it can, since its peers
    /// may wait for them in turn.
    fn ring_room(&self, seq: u64) -> HResult<()> {
        let ring = FP_RING as u64;
        if seq <= ring {
            return Ok(());
        }
        let need = seq - ring;
        // Our own part first: the entry we are about to write is read by our own deferred
        // collective `need` too, and the peers may wait for our `read` as we wait for
        // theirs (the waits below sleep on their words, not on the posts that let us finish).
        crate::defer::finish_through(self, need);
        if self.read_floor.load(Ordering::Relaxed) >= need {
            return Ok(());
        }
        // The lowest collective every peer has read through (a peer's word holds the low
        // 32 bits; none is more than FP_RING behind `seq`).
        let floor = || {
            self.local_ranks()
                .filter(|&p| p != self.rank)
                .map(|p| {
                    let w = self.slot(p).read.0.value.load(Ordering::Acquire);
                    seq.saturating_sub((seq as u32).wrapping_sub(w) as u64)
                })
                .min()
                .unwrap_or(seq)
        };
        let f = floor();
        if f >= need {
            self.read_floor.store(f, Ordering::Relaxed);
            return Ok(());
        }
        let arrived = |p: u32| {
            crate::defer::try_finish(self);
            seq_ge(
                self.slot(p).read.0.value.load(Ordering::Acquire),
                need as u32,
            )
        };
        let phase = || format!("finish collective #{need}");
        self.wait_peers_with(
            &self.defer_policy(),
            &|s| &s.read.0,
            need,
            &arrived,
            &phase,
            Instant::now(),
        )?;
        self.read_floor.store(need, Ordering::Relaxed);
        Ok(())
    }

    /// Wait (when `block`) until every peer published collective `seq`'s fingerprint, then
    /// compare them all, as the rendezvous does: for a collective this rank deferred,
    /// published at `posted`. `Ok(None)`: not every peer is there (`block` false);
    /// `Ok(Some(all_staged))` otherwise.
    pub fn meet_deferred(
        &self,
        seq: u64,
        op: u32,
        posted: Instant,
        block: bool,
    ) -> HResult<Option<bool>> {
        self.meet_with(&self.defer_policy(), seq, op, posted, block)
    }

    /// [`CommInner::meet_deferred`] for a collective whose call left its rendezvous to
    /// its stream task (a peer was late, see [`crate::algo::enqueue`]): on the stream
    /// worker, with the ordinary waiting policy. Returns whether every rank staged.
    pub fn meet_late(&self, seq: u64, op: u32, posted: Instant) -> HResult<bool> {
        self.meet_with(&self.policy, seq, op, posted, true)
            .map(|all| all.unwrap_or(false))
    }

    fn meet_with(
        &self,
        policy: &Policy,
        seq: u64,
        op: u32,
        posted: Instant,
        block: bool,
    ) -> HResult<Option<bool>> {
        if !self.all_arrived(seq) {
            if !block {
                return Ok(None);
            }
            let arrived = |p: u32| self.arrived_at(p, seq);
            let phase = || format!("call collective #{seq}");
            self.wait_peers_with(policy, &|s| &s.call.0.word, seq, &arrived, &phase, posted)
                .inspect_err(|e| {
                    self.mark_failed(
                        seq,
                        e.code,
                        &format!("{} #{seq}: {}", op_name(op), first_line(&e.msg)),
                    )
                })?;
        }
        self.check_fps(seq, op).map(Some)
    }

    /// Whether every collective called before `seq` has finished (or will never run): the
    /// stream-order condition for running collective `seq` now.
    pub fn is_turn(&self, seq: u64) -> bool {
        self.turn.lock().next >= seq
    }

    fn rendezvous_at(
        &self,
        seq: u64,
        fp: &mut Fp,
        stage: &mut dyn FnMut(u64) -> bool,
        may_defer: bool,
        may_be_late: &dyn Fn() -> bool,
    ) -> HResult<(u64, bool, bool)> {
        fp.seq = seq;
        self.ring_room(seq)?;
        let staged = stage(seq);
        let me = self.me();
        let ring = (seq % FP_RING as u64) as usize;
        let entry = &me.fp[ring];
        entry.staged.store(staged as u32, Ordering::Relaxed);
        fp.store(entry);
        me.call.0.op.store(fp.op, Ordering::Relaxed);
        me.call.0.cpu.store(cpu_tag(), Ordering::Relaxed);
        me.call.0.word.store_wake(seq as u32);
        self.balance_cpus();
        let what = || format!("{} #{seq}", op_name(fp.op));
        let phase = || format!("call collective #{seq}");
        // A rank that staged has an idle stream: no worker of ours wants the CPU, so it may
        // spin longer for peers that are about to arrive. (Never across servers: that
        // policy does not spin, `Policy::across_servers`, so `idle_stream` keeps it.)
        let policy = if staged {
            self.policy.idle_stream()
        } else {
            self.policy
        };
        let word: &dyn Fn(&Slot) -> &Word = &|s| &s.call.0.word;
        // A peer is there once its fingerprint entry for `seq` is. Looking at the entry
        // rather than the call word saves a cache miss per peer (the entry is read next
        // anyway, and it is one line); the call word is what sleepers are woken through.
        let arrived = |p: u32| self.arrived_at(p, seq);
        // The last rank to arrive finds every peer there: no wait, so no clock read (with
        // ranks outnumbering cores most calls of most ranks end this way or after a yield).
        let all_called = self.local_ranks().all(|p| p == self.rank || arrived(p));
        let deferrable = may_defer && staged;
        if !all_called && deferrable && self.defer_worth(&arrived) {
            return Ok((seq, false, true));
        }
        // A collective that may be deferred waits at most DEFER_AFTER, one whose rendezvous
        // its stream task may do (`may_be_late`) at most LATE_AFTER: a peer that late may be waiting for
        // this rank elsewhere (two communicators used in opposite orders, a host-side
        // handshake after the call), which a stream task (as on CANN) would not block.
        let waited = if all_called {
            Ok(true)
        } else {
            let now = Instant::now();
            let soft = if deferrable {
                Some(now + DEFER_AFTER)
            } else if may_be_late() {
                Some(now + LATE_AFTER)
            } else {
                None
            };
            match self.wait_peers_until(&policy, word, seq, &arrived, &phase, now, soft) {
                // A missing peer that is dead, failed or gone is news for this call, not for
                // a stream task (whose failure a program may only see much later): wait on,
                // which reports it now.
                Ok(false) if !deferrable && self.check_peers(word, seq as u32).is_err() => {
                    self.wait_peers_until(&policy, word, seq, &arrived, &phase, now, None)
                }
                w => w,
            }
        };
        match waited {
            Ok(true) => {}
            Ok(false) => {
                if !deferrable {
                    // Its stream task meets the peers ([`CommInner::meet_late`]).
                    self.hold_read(seq);
                }
                return Ok((seq, false, true));
            }
            Err(e) => {
                self.mark_failed(seq, e.code, &format!("{}: {}", what(), first_line(&e.msg)));
                return Err(e);
            }
        }
        // Collectives this rank deferred come first (every peer is past them now): this
        // one's fingerprints are read after theirs (`read` only grows).
        crate::defer::finish_all(self);
        with_fps(self.n, |fps| {
            let mut remote_staged = true;
            if let Some(x) = &self.cross {
                let deadline = self.exec_timeout.map(|d| Instant::now() + d);
                // A small collective staged at the call sends its input with the
                // fingerprint (`algo::small::stage_at_call`).
                let data: &[u8] = match *x.mine.lock() {
                    (s, len) if staged && s == seq && len > 0 => {
                        let p = self.shm.inline(self.slot_index(self.rank), seq % 2);
                        // SAFETY: the inline buffer holds INLINE_BYTES >= `len` bytes, staged
                        // for this collective; nothing writes it before collective seq + 2.
                        unsafe { std::slice::from_raw_parts(p, len) }
                    }
                    _ => &[],
                };
                match x.exchange_fps(&self.topo.remote(), fp, staged, data, deadline) {
                    Ok(got) => {
                        let mut inputs = Vec::with_capacity(got.len());
                        for r in got {
                            if r.fp.seq != seq {
                                return Err(HcclError::new(
                                    crate::errors::HCCL_E_INTERNAL,
                                    format!(
                                        "{}: {}'s fingerprint has sequence number {} (expected {seq})",
                                        what(),
                                        crate::net::Net::who(&x.net, r.rank),
                                        r.fp.seq
                                    ),
                                ));
                            }
                            fps[r.rank as usize] = r.fp;
                            remote_staged &= r.staged;
                            inputs.push((r.rank, r.data));
                        }
                        *x.inputs.lock() = (staged && remote_staged).then_some((seq, inputs));
                    }
                    Err(e) => {
                        let e = HcclError::new(
                            e.code,
                            format!(
                                "{}: waiting for the ranks on other servers to {}: {}",
                                self.who(),
                                phase(),
                                e.msg
                            ),
                        );
                        self.mark_failed(
                            seq,
                            e.code,
                            &format!("{}: {}", what(), first_line(&e.msg)),
                        );
                        return Err(e);
                    }
                }
            }
            let all_staged = self.check_local(seq, staged, fps, &what)? && remote_staged;
            if !all_staged {
                // Nothing reads the entries later (a collective every rank staged reads tiny
                // inputs from them: it says so when it is done, `algo::complete_at_call`).
                self.store_read(seq);
            }
            Ok((seq, all_staged, false))
        })
    }

    /// Read the fingerprints of collective `seq` of the ranks on this server into `fps`
    /// (whose other entries hold the other servers' ranks), and compare them all. Returns
    /// whether every rank here staged its input (`staged`: this one did).
    fn check_local(
        &self,
        seq: u64,
        staged: bool,
        fps: &mut [Fp],
        what: &dyn Fn() -> String,
    ) -> HResult<bool> {
        let mut all_staged = staged;
        for p in self.local_ranks() {
            let e = &self.slot(p).fp[(seq % FP_RING as u64) as usize];
            let f = Fp::load(e);
            all_staged &= e.staged.load(Ordering::Relaxed) != 0;
            if f.seq != seq {
                return Err(HcclError::new(
                    crate::errors::HCCL_E_INTERNAL,
                    format!(
                        "{}: rank {p}'s fingerprint has sequence number {} (expected {seq})",
                        what(),
                        f.seq
                    ),
                ));
            }
            fps[p as usize] = f;
        }
        if let Some(msg) = check_all(fps) {
            return Err(HcclError::new(
                HCCL_E_PARA,
                format!("{}: {msg}", self.who()),
            ));
        }
        Ok(all_staged)
    }

    /// [`CommInner::check_local`] for a collective this rank deferred (on one server).
    fn check_fps(&self, seq: u64, op: u32) -> HResult<bool> {
        let what = || format!("{} #{seq}", op_name(op));
        with_fps(self.n, |fps| self.check_local(seq, true, fps, &what))
    }

    /// Collective `seq` is finished on its stream, or will never run (failed at the call,
    /// count 0): the next one may run.
    pub fn finish_turn(&self, seq: u64) {
        let mut t = self.turn.lock();
        if seq < t.next {
            return;
        }
        if seq == t.next {
            t.next += 1;
            loop {
                let n = t.next;
                if !t.skipped.remove(&n) {
                    break;
                }
                t.next += 1;
            }
        } else {
            t.skipped.insert(seq);
        }
        drop(t);
        self.turn_word.notify();
    }

    /// Wait (on a stream worker) until collective `seq` may run: every earlier collective of
    /// this communicator finished. Immediate when the communicator uses one stream.
    pub fn wait_turn(&self, seq: u64, started: Instant) -> HResult<()> {
        let deadline = self.exec_timeout.map(|d| started + d);
        let my_turn = || self.turn.lock().next >= seq;
        match wait_until(&self.policy, &self.turn_word, my_turn, deadline, || {
            Ok::<(), ()>(())
        }) {
            Ok(()) => Ok(()),
            Err(_) => {
                let next = self.turn.lock().next;
                Err(HcclError::new(
                    HCCL_E_TIMEOUT,
                    format!(
                        "{}: collective #{seq} waited {} s (HCCL_EXEC_TIMEOUT) for collective #{next} of the same communicator, which was called earlier but has not run (is it on another stream that waits for this one?)",
                        self.who(),
                        self.exec_timeout.map(|d| d.as_secs()).unwrap_or(0)
                    ),
                ))
            }
        }
    }

    /// Leave the communicator: the last rank removes the control block.
    /// (Leaving waits until this rank's operations still queued on streams have run, so
    /// `HcclCommDestroy` before `aclrtSynchronizeStream` does not fail the peers.)
    pub fn destroy(&self) {
        self.destroy_requested.store(true, Ordering::SeqCst);
        if self.pending.load(Ordering::SeqCst) == 0 {
            self.leave_now();
        }
    }

    /// An enqueued operation ran or was discarded.
    pub fn task_gone(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1
            && self.destroy_requested.load(Ordering::SeqCst)
        {
            self.leave_now();
        }
    }

    fn leave_now(&self) {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(x) = &self.cross {
            x.say_bye();
        }
        self.me()
            .ident
            .0
            .state
            .store(STATE_DESTROYED, Ordering::Release);
        if self.shm.header().refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shm.unlink();
        }
    }

    /// Print this rank's history (with a title naming the communicator).
    pub fn dump_history(&self) {
        crate::log(
            npu_emu::config::LogLevel::Error,
            &self.history.render(&format!("history of {}", self.who())),
        );
    }
}

/// Run `f` with room for `n` fingerprints: on the stack for the usual sizes (this runs at
/// every collective's call).
fn with_fps<R>(n: u32, f: impl FnOnce(&mut [Fp]) -> R) -> R {
    let mut on_stack = [Fp::default(); 16];
    if n as usize <= on_stack.len() {
        f(&mut on_stack[..n as usize])
    } else {
        f(&mut vec![Fp::default(); n as usize])
    }
}

pub fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// How long a rank spins, in all, for peers that share its CPU before it sleeps at once
/// for them instead (see [`CommInner::wait_peers_with`]): 5 scheduler ticks at 250 Hz, time
/// for an idle CPU's balancing to take one of the two.
const COLOCATED_SPIN_BUDGET_NS: u64 = 20_000_000;

/// How long a collective that may leave its rendezvous to its stream task waits for its
/// peers at the call first. Long enough that peers merely scheduled apart on a loaded
/// machine still meet at the call (where a mismatch is reported to every rank at once),
/// short enough that a program whose peer waits for this rank elsewhere (two communicators
/// in opposite orders, one thread driving every rank) goes on quickly.
const LATE_AFTER: Duration = Duration::from_millis(20);

/// Collectives whose fingerprint entries this rank reads late ([`CommInner::hold_read`]),
/// and the highest collective read otherwise.
#[derive(Default)]
struct ReadHold {
    seqs: std::collections::BTreeSet<u64>,
    max: u64,
}

/// How long a collective that may be deferred waits for its peers at the call before it is
/// ([`crate::defer`]).
const DEFER_AFTER: Duration = Duration::from_millis(2);

/// How long after the budget ran out it is given again.
const COLOCATED_RETRY_NS: u64 = 1_000_000_000;

/// Least time between two looks at how this server's ranks are spread over the CPUs
/// ([`CommInner::balance_cpus`]): a look reads every peer's call line, a move is two
/// system calls and a migration.
const BALANCE_EVERY_NS: u64 = 5_000_000;

/// Least time between two steps off a peer's CPU (a step is two system calls and a
/// migration, a few µs; the scheduler may bring the pair back together meanwhile).
const COLOCATED_STEP_NS: u64 = 10_000_000;

/// Nanoseconds since this process first asked (never 0 after the first call).
fn since_start_ns() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    (start.elapsed().as_nanos() as u64).max(1)
}

/// One more than the CPU the calling thread runs on (0 if unknown), as [`shm::Call::cpu`]
/// holds it.
fn cpu_tag() -> u32 {
    u32::try_from(os::current_cpu() + 1).unwrap_or(0)
}
