//! The part of a communicator that spans servers: how its ranks meet (a root-info root, or
//! rank 0 of a rank table listing several servers), where each rank is ([`Topo`]), the
//! connections to the ranks of other servers ([`TcpNet`]), and what goes over them besides
//! operation data: the call-time fingerprints and failure and destroy notices.
//!
//! A communicator whose ranks are all on one server has no `Cross` at all: it is exactly
//! the shared-memory communicator.

use crate::bootstrap::{self, Record};
use crate::errors::{HResult, HcclError, HCCL_E_INTERNAL, HCCL_E_PARA};
use crate::fingerprint::Fp;
use crate::net::frame::{self, Reader, Writer};
use crate::net::tcp::{Mesh, TcpNet};
use crate::net::{kind, tag, Net};
use crate::shm::INLINE_BYTES;
use crate::topo::Topo;
use parking_lot::Mutex;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A communicator's connections to the ranks on other servers.
pub struct Cross {
    pub net: TcpNet,
    /// Every rank's record (host, pid, address), for messages.
    pub roster: Arc<Vec<Record>>,
    /// The inputs the ranks on other servers sent with their fingerprints for the small
    /// collective every rank staged at its call ([`Cross::exchange_fps`]), until it is
    /// computed on the calling thread: (sequence number, (rank, input) pairs).
    pub inputs: Mutex<Option<(u64, RemoteInputs)>>,
    /// What this rank staged at its call for the other servers: (sequence number, bytes of
    /// its inline buffer to send).
    pub mine: Mutex<(u64, usize)>,
}

/// Inputs of ranks on other servers: (rank, input) pairs.
pub type RemoteInputs = Vec<(u32, Vec<u8>)>;

/// What a rank on another server sent at the call-time rendezvous.
pub struct Remote {
    pub rank: u32,
    pub fp: Fp,
    /// It staged its input at its call (a small collective on an idle stream).
    pub staged: bool,
    /// That input, when it sent one (a Broadcast's non-root ranks send none).
    pub data: Vec<u8>,
}

/// What a rank brings to the bootstrap (its address is filled in by the bootstrap).
pub struct Me {
    pub rank: u32,
    pub device: u32,
    pub node_dir: String,
    /// Which server (equal keys share memory).
    pub server: [u8; 32],
    /// Which node this process runs on ([`bootstrap::node_key`]).
    pub node: [u8; 32],
    pub server_name: String,
    /// The root listened before this rank learnt its address (root info; see
    /// [`bootstrap::join`]).
    pub root_listened: bool,
}

/// Where everyone is, and (when the communicator spans servers) the connections.
pub struct Setup {
    pub topo: Topo,
    pub roster: Arc<Vec<Record>>,
    pub cross: Option<Cross>,
}

/// Meet the other `n` ranks of communicator `id` at `roots`, then connect to the ranks on
/// other servers. `check` may refuse the roster (a rank table's consistency checks).
pub fn setup(
    id: &[u8; 16],
    roots: &[SocketAddr],
    n: u32,
    me: Me,
    deadline: Instant,
    name: &str,
    check: &dyn Fn(&[Record]) -> HResult<()>,
) -> HResult<Setup> {
    let key = frame::key(id);
    let rec = Record {
        rank: me.rank,
        pid: std::process::id(),
        device: me.device,
        host: crate::rootinfo::hostname(),
        node_dir: me.node_dir,
        server: me.server,
        node: me.node,
        server_name: me.server_name,
        addr: SocketAddr::from(([0, 0, 0, 0], 0)),
    };
    let j = bootstrap::join(roots, &key, n, rec, deadline, me.root_listened)?;
    check(&j.roster)?;
    let keys: Vec<[u8; 32]> = j.roster.iter().map(|r| r.server).collect();
    let topo = Topo::from_keys(me.rank, &keys);
    let roster = Arc::new(j.roster);
    if topo.single_server() {
        return Ok(Setup {
            topo,
            roster,
            cross: None,
        });
    }
    let mine = keys[me.rank as usize];
    let mesh = bootstrap::build_mesh(
        &roster,
        me.rank,
        j.listener,
        &key,
        &|q| keys[q as usize] != mine,
        deadline,
        name,
    )?;
    let net = TcpNet::new(
        frame::comm_tag(id),
        me.rank,
        (0..n).collect(),
        Arc::new(mesh),
    );
    Ok(Setup {
        topo,
        roster: roster.clone(),
        cross: Some(Cross {
            net,
            roster,
            inputs: Mutex::new(None),
            mine: Mutex::new((0, 0)),
        }),
    })
}

impl Cross {
    /// The view of a sub-communicator: its ranks are `parent_ranks` (ascending) of this
    /// communicator, over the same connections.
    pub fn sub(&self, sub_id: &[u8; 16], me: u32, parent_ranks: &[u32]) -> Cross {
        let map: Vec<u32> = parent_ranks
            .iter()
            .map(|&p| self.net.map[p as usize])
            .collect();
        let roster: Vec<Record> = parent_ranks
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let mut r = self.roster[p as usize].clone();
                r.rank = i as u32;
                r
            })
            .collect();
        Cross {
            net: TcpNet::new(frame::comm_tag(sub_id), me, map, self.net.mesh.clone()),
            roster: Arc::new(roster),
            inputs: Mutex::new(None),
            mine: Mutex::new((0, 0)),
        }
    }

    pub fn mesh(&self) -> &Arc<Mesh> {
        &self.net.mesh
    }

    /// The call-time rendezvous across servers: send this rank's fingerprint to every rank
    /// on another server and receive theirs.
    ///
    /// A rank that staged a small collective's input at its call (`staged`, see
    /// [`crate::algo::small`]) says so in its fingerprint frame and sends the input (`data`)
    /// right behind it: when every rank staged, the rendezvous was also the data exchange
    /// and the collective completes on the calling thread, one message per pair of ranks
    /// instead of a round of fingerprints and then the algorithm's steps on the stream.
    /// Inputs that came are always received (so none is left behind unread when not every
    /// rank staged); each frame says its input's length, checked against [`INLINE_BYTES`].
    pub fn exchange_fps(
        &self,
        remote: &[u32],
        fp: &Fp,
        staged: bool,
        data: &[u8],
        deadline: Option<Instant>,
    ) -> HResult<Vec<Remote>> {
        let me = self.net.rank;
        let mut mine = [0u8; FP_FRAME];
        mine[..FP_BYTES].copy_from_slice(&encode_fp(fp));
        let word = if staged {
            STAGED | data.len() as u64
        } else {
            0
        };
        mine[FP_BYTES..].copy_from_slice(&word.to_le_bytes());
        let mut bufs: Vec<[u8; FP_FRAME]> = vec![[0u8; FP_FRAME]; remote.len()];
        let mut recvs = Vec::with_capacity(remote.len());
        for (i, &q) in remote.iter().enumerate() {
            // SAFETY: `bufs[i]` holds FP_FRAME and outlives the waits (the receives are
            // waited for or dropped, which cancels them, before `bufs` goes).
            recvs.push(unsafe {
                self.net.irecv(
                    q,
                    tag(kind::FP, fp.seq, 0, q, 0, 0),
                    bufs[i].as_mut_ptr(),
                    FP_FRAME,
                )?
            });
        }
        for &q in remote {
            if staged && !data.is_empty() {
                // Both frames in one system call.
                self.net.conn(q)?.send_two(
                    self.net.comm,
                    (tag(kind::FP, fp.seq, 0, me, 0, 0), &mine),
                    (tag(kind::FP, fp.seq, 1, me, 0, 0), data),
                    deadline,
                )?;
            } else {
                // SAFETY: `mine` holds FP_FRAME bytes.
                unsafe {
                    self.net.send(
                        q,
                        tag(kind::FP, fp.seq, 0, me, 0, 0),
                        mine.as_ptr(),
                        FP_FRAME,
                        deadline,
                    )?
                };
            }
        }
        let mut out = Vec::with_capacity(remote.len());
        for (i, r) in recvs.iter().enumerate() {
            let q = remote[i];
            self.net.wait(r, deadline)?;
            let malformed = |m: String| {
                HcclError::new(
                    HCCL_E_INTERNAL,
                    format!("{}'s call fingerprint is malformed: {m}", self.net.who(q)),
                )
            };
            let f = decode_fp(&bufs[i][..FP_BYTES]).map_err(malformed)?;
            let mut w = [0u8; 8];
            w.copy_from_slice(&bufs[i][FP_BYTES..]);
            let w = u64::from_le_bytes(w);
            let len = w & !STAGED;
            if len > INLINE_BYTES as u64 || (w & STAGED == 0 && len != 0) {
                return Err(malformed(format!(
                    "it announces {len} bytes of staged input (at most {INLINE_BYTES})"
                )));
            }
            let mut data = vec![0u8; len as usize];
            if len > 0 {
                // SAFETY: `data` holds `len` bytes and lives until the receive is waited
                // for (or dropped, which cancels it).
                let r = unsafe {
                    self.net.irecv(
                        q,
                        tag(kind::FP, fp.seq, 1, q, 0, 0),
                        data.as_mut_ptr(),
                        data.len(),
                    )?
                };
                self.net.wait(&r, deadline)?;
            }
            out.push(Remote {
                rank: q,
                fp: f,
                staged: w & STAGED != 0,
                data,
            });
        }
        Ok(out)
    }

    /// Tell every rank on another server that this rank failed (so they fail at once).
    pub fn announce_failure(&self, code: i32, reason: &str) {
        self.net.mesh.announce_failure(self.net.comm, code, reason);
    }

    /// Tell every rank on another server that this rank destroyed the communicator.
    pub fn say_bye(&self) {
        self.net.mesh.say_bye(self.net.comm);
    }

    /// "rank 3 (host h2, 10.0.0.2, pid 812): connected, heard from 0.1 s ago".
    pub fn describe(&self, q: u32) -> String {
        match self.net.conn(q) {
            Ok(c) => match c.broken() {
                Some(e) => format!("{}: connection lost: {}", c.peer, e.msg),
                None => format!(
                    "{}: connected, last heard from {:.1} s ago",
                    c.peer,
                    c.silence()
                ),
            },
            Err(_) => format!("rank {q}"),
        }
    }
}

const FP_BYTES: usize = 52;
/// A fingerprint frame: the fingerprint, then a word with [`STAGED`] and the length of the
/// staged input that follows in a frame of its own.
const FP_FRAME: usize = FP_BYTES + 8;
const STAGED: u64 = 1 << 63;

fn encode_fp(f: &Fp) -> [u8; FP_BYTES] {
    let mut w = Writer::default();
    w.u64(f.seq)
        .u32(f.op)
        .u64(f.count)
        .u32(f.dtype)
        .u32(f.redop)
        .u32(f.root)
        .u64(f.count2)
        .u32(f.dtype2)
        .u64(f.extra);
    let mut b = [0u8; FP_BYTES];
    b.copy_from_slice(&w.0);
    b
}

fn decode_fp(b: &[u8]) -> Result<Fp, String> {
    let mut r = Reader::new(b);
    let f = Fp {
        seq: r.u64("seq")?,
        op: r.u32("op")?,
        count: r.u64("count")?,
        dtype: r.u32("dtype")?,
        redop: r.u32("redop")?,
        root: r.u32("root")?,
        count2: r.u64("count2")?,
        dtype2: r.u32("dtype2")?,
        extra: r.u64("extra")?,
    };
    r.done()?;
    Ok(f)
}

/// The server key of a rank table's `server_id`.
pub fn server_key(server_id: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"npu-emu rank table server v1");
    h.update(server_id.as_bytes());
    h.finalize().into()
}

/// A rank table's servers must be real: ranks the table puts on one server must share
/// memory (one machine, one node directory), else the table does not describe where the
/// ranks run.
pub fn check_table_servers(roster: &[Record]) -> HResult<()> {
    for a in 0..roster.len() {
        for b in a + 1..roster.len() {
            if roster[a].server == roster[b].server && roster[a].node != roster[b].node {
                return Err(HcclError::new(
                    HCCL_E_PARA,
                    format!(
                        "the rank table puts ranks {a} and {b} on server {:?}, but they run on different nodes (rank {a}: host {} node {}; rank {b}: host {} node {}); ranks of one server must share a node",
                        roster[a].server_name, roster[a].host, roster[a].node_dir, roster[b].host, roster[b].node_dir
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `HcclGetRootInfo`'s root: listen on the address `HCCL_IF_IP` / `HCCL_SOCKET_IFNAME` /
/// the interface order chooses, on the first free port from `HCCL_IF_BASE_PORT`, and
/// collect the ranks of communicator `id` there. Returns the endpoint for the root info.
pub fn start_root_service(id: &[u8; 16]) -> HResult<SocketAddr> {
    let conf = crate::config()?;
    let (ip, _how) =
        crate::net::endpoint::choose(&conf.host_net, &crate::net::endpoint::interfaces())?;
    let l = crate::net::endpoint::listen_root(&conf.host_net, ip)?;
    let (all, idle) = root_patience(conf.connect_timeout);
    bootstrap::start_root(
        l,
        frame::key(id),
        format!("hccl_root_{}", &crate::rootinfo::hex(id)[..16]),
        all,
        idle,
    )
}

/// Place `members` (ranks of this process, on this node) in communicator `id` of `n` ranks
/// meeting at `roots`: each runs the bootstrap (at once, on threads of its own when there
/// are several: the root answers only when every rank joined). `server` gives a member's
/// server key and name (the node itself for root info; a rank table's `server_id`).
/// `root_listened`: the roots come from a root info (see [`bootstrap::join`]).
#[allow(clippy::too_many_arguments)]
pub fn place(
    id: &[u8; 16],
    roots: &[SocketAddr],
    root_listened: bool,
    n: u32,
    members: &[crate::comm::Member],
    server: &(dyn Fn(u32) -> ([u8; 32], String) + Sync),
    name: &str,
    check: &(dyn Fn(&[Record]) -> HResult<()> + Sync),
) -> HResult<Vec<(crate::comm::Member, crate::comm::Placement)>> {
    let conf = crate::config()?;
    let node_dir = conf.node_dir.to_string_lossy().into_owned();
    let node = bootstrap::node_key(&conf.node_dir);
    let deadline = Instant::now() + conf.connect_timeout;
    let one = |m: &crate::comm::Member| -> HResult<(crate::comm::Member, crate::comm::Placement)> {
        let (server, server_name) = server(m.rank);
        let me = Me {
            rank: m.rank,
            device: m.device_phys,
            node_dir: node_dir.clone(),
            server,
            node,
            server_name,
            root_listened,
        };
        let s = setup(id, roots, n, me, deadline, name, check)?;
        Ok((
            *m,
            crate::comm::Placement {
                topo: s.topo,
                cross: s.cross,
            },
        ))
    };
    if members.len() == 1 {
        return Ok(vec![one(&members[0])?]);
    }
    std::thread::scope(|sc| {
        let hs: Vec<_> = members.iter().map(|m| sc.spawn(move || one(m))).collect();
        hs.into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(HcclError::new(HCCL_E_INTERNAL, "a bootstrap thread failed"))
                })
            })
            .collect()
    })
}

/// How long a root waits: for every rank after the first joined (`HCCL_CONNECT_TIMEOUT`;
/// the ranks wait a little longer, so the root's message naming the missing ranks reaches
/// them), and for the first rank at all (a program may take its time between
/// `HcclGetRootInfo` and its init calls).
pub fn root_patience(connect: Duration) -> (Duration, Duration) {
    (connect, (connect * 5).max(Duration::from_secs(600)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_round_trip() {
        let mut f = Fp::new(crate::fingerprint::opcode::ALLREDUCE);
        f.seq = 9;
        f.count = 77;
        f.extra = u64::MAX;
        assert_eq!(decode_fp(&encode_fp(&f)).unwrap(), f);
        assert!(decode_fp(&[0u8; 10]).is_err());
    }

    #[test]
    fn two_servers_exchange_fingerprints_and_notices() {
        let id = [42u8; 16];
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let root = bootstrap::start_root(
            l,
            frame::key(&id),
            "x".into(),
            Duration::from_secs(20),
            Duration::from_secs(30),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let hs: Vec<_> = (0..3u32)
            .map(|r| {
                std::thread::spawn(move || {
                    let me = Me {
                        rank: r,
                        device: r,
                        node_dir: "/n".into(),
                        server: [(r == 2) as u8; 32],
                        node: [(r == 2) as u8; 32],
                        server_name: format!("s{}", (r == 2) as u8),
                        root_listened: true,
                    };
                    let s = setup(&id, &[root], 3, me, deadline, "x", &|_| Ok(())).unwrap();
                    assert_eq!(s.topo.servers, vec![vec![0, 1], vec![2]]);
                    let c = s.cross.unwrap();
                    let remote = s.topo.remote();
                    let mut fp = Fp::new(crate::fingerprint::opcode::ALLREDUCE);
                    fp.seq = 1;
                    fp.count = 10 + r as u64;
                    // Rank 1 did not stage; ranks 0 and 2 send inputs of their own lengths
                    // (rank 2's: none, as a Broadcast's non-root would).
                    let input = vec![r as u8 + 1; [5, 0, 0][r as usize]];
                    let got = c
                        .exchange_fps(&remote, &fp, r != 1, &input, Some(deadline))
                        .unwrap();
                    for g in &got {
                        assert_eq!(g.fp.count, 10 + g.rank as u64);
                        assert_eq!(g.staged, g.rank != 1);
                        let want = vec![g.rank as u8 + 1; [5, 0, 0][g.rank as usize]];
                        assert_eq!(g.data, want);
                    }
                    assert_eq!(got.len(), remote.len());
                    // The next one: everybody staged 3 bytes.
                    fp.seq = 2;
                    let got = c
                        .exchange_fps(&remote, &fp, true, &[r as u8; 3], Some(deadline))
                        .unwrap();
                    for g in &got {
                        assert!(g.staged);
                        assert_eq!(g.data, vec![g.rank as u8; 3]);
                    }
                    if r == 2 {
                        c.announce_failure(4, "test failure");
                    }
                    // Everyone on server 0 hears of it when it waits for rank 2.
                    if r != 2 {
                        let mut b = [0u8; 4];
                        // SAFETY: `b` outlives the wait.
                        let rv = unsafe { c.net.irecv(2, 99, b.as_mut_ptr(), 4).unwrap() };
                        let e = c.net.wait(&rv, Some(deadline)).unwrap_err();
                        assert!(e.msg.contains("test failure"), "{}", e.msg);
                        assert!(e.msg.contains("rank 2 (host"), "{}", e.msg);
                    }
                    c
                })
            })
            .collect();
        let cs: Vec<Cross> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        drop(cs);
    }

    /// A fingerprint frame announcing more staged input than a small collective can have
    /// is refused with a message naming the peer; a well-formed one is taken as it came.
    #[test]
    fn staged_inputs_travel_with_fingerprints_and_bad_lengths_are_refused() {
        use crate::net::tcp::tests::{net, pair};
        let (a, b) = pair(&frame::key(&[9u8; 16]));
        let cross = |c, r| Cross {
            net: net(c, r),
            roster: Arc::new(Vec::new()),
            inputs: Mutex::new(None),
            mine: Mutex::new((0, 0)),
        };
        let (x0, x1) = (cross(b, 0), cross(a, 1));
        let deadline = Some(Instant::now() + Duration::from_secs(10));
        let mut fp = Fp::new(crate::fingerprint::opcode::ALLGATHER);
        fp.seq = 5;
        let t = std::thread::spawn(move || {
            let got = x1
                .exchange_fps(&[0], &fp, true, &[7u8; 12], deadline)
                .unwrap();
            assert!(got[0].staged);
            assert_eq!(got[0].data, vec![1u8; 12]);
            // Then a hostile frame: staged, with 1 MiB of input announced.
            let mut f = [0u8; FP_FRAME];
            fp.seq = 6;
            f[..FP_BYTES].copy_from_slice(&encode_fp(&fp));
            f[FP_BYTES..].copy_from_slice(&(STAGED | (1 << 20)).to_le_bytes());
            // SAFETY: `f` holds FP_FRAME bytes.
            unsafe {
                x1.net.send(
                    0,
                    tag(kind::FP, 6, 0, 1, 0, 0),
                    f.as_ptr(),
                    FP_FRAME,
                    deadline,
                )
            }
            .unwrap();
            x1
        });
        let got = x0
            .exchange_fps(&[1], &fp, true, &[1u8; 12], deadline)
            .unwrap();
        assert_eq!(got[0].data, vec![7u8; 12]);
        fp.seq = 6;
        let e = x0
            .exchange_fps(&[1], &fp, false, &[], deadline)
            .err()
            .expect("a frame announcing 1 MiB of staged input");
        assert!(
            e.msg.contains("malformed") && e.msg.contains("rank 1"),
            "{}",
            e.msg
        );
        drop(t.join().unwrap());
    }
}
