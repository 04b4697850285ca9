//! Bootstrap of a communicator whose ranks may be on several servers: every rank sends a
//! small record (who it is, which server it is on, where it listens) to a root, which
//! answers each with all of them (the roster) once every rank joined; then the ranks on
//! different servers connect to each other directly (the [`Mesh`]). Ranks on one server
//! meet in the shared-memory control block instead (`crate::comm::join`).
//!
//! The root is a thread of the process that called `HcclGetRootInfo` (its endpoint is in the
//! root info), or of rank 0 of a rank table that lists several servers. It accepts only
//! connections that prove they hold the communicator's id (see `net::frame`), checks that
//! every rank passes the same rank count and a different rank, and tells the ranks that did
//! join which ones never came when it gives up.

use crate::errors::{
    HResult, HcclError, HCCL_E_INTERNAL, HCCL_E_PARA, HCCL_E_TCP_CONNECT, HCCL_E_TCP_TRANSFER,
    HCCL_E_TIMEOUT,
};
use crate::net::frame::{self, Header, Kind, Reader, Writer, HEADER_BYTES, TO_ROOT};
use crate::net::tcp::{self, Conn, Mesh, PeerId};
use parking_lot::Mutex;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a rank tells the others about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub rank: u32,
    pub pid: u32,
    /// Physical device.
    pub device: u32,
    pub host: String,
    pub node_dir: String,
    /// Which server the rank is on: ranks with the same value use shared memory.
    pub server: [u8; 32],
    /// Which emulated node the rank runs on ([`node_key`]): ranks of one server must share
    /// it.
    pub node: [u8; 32],
    /// The server's name for messages (a rank table's `server_id`, else the host name).
    pub server_name: String,
    /// Where the rank accepts connections from ranks on other servers.
    pub addr: SocketAddr,
}

impl Record {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.rank)
            .u32(self.pid)
            .u32(self.device)
            .str(&self.host)
            .str(&self.node_dir)
            .bytes(&self.server)
            .bytes(&self.node)
            .str(&self.server_name)
            .str(&self.addr.to_string());
        w.0
    }

    pub fn decode(r: &mut Reader) -> Result<Record, String> {
        let rank = r.u32("rank")?;
        let pid = r.u32("pid")?;
        let device = r.u32("device")?;
        let host = r.str("host")?;
        let node_dir = r.str("node directory")?;
        let s = r.bytes("server")?;
        if s.len() != 32 {
            return Err(format!("server key of {} bytes", s.len()));
        }
        let mut server = [0u8; 32];
        server.copy_from_slice(s);
        let nd = r.bytes("node")?;
        if nd.len() != 32 {
            return Err(format!("node key of {} bytes", nd.len()));
        }
        let mut node = [0u8; 32];
        node.copy_from_slice(nd);
        let server_name = r.str("server name")?;
        let addr = r
            .str("address")?
            .parse()
            .map_err(|_| "address is not ip:port".to_string())?;
        Ok(Record {
            rank,
            pid,
            device,
            host,
            node_dir,
            server,
            node,
            server_name,
            addr,
        })
    }

    /// "rank 2 (host h2, 10.0.0.2, pid 77)".
    pub fn peer_id(&self) -> PeerId {
        PeerId {
            rank: self.rank,
            host: self.host.clone(),
            addr: self.addr,
            pid: self.pid,
        }
    }
}

/// Identity of this process's emulated node: processes with the same one share device
/// memory (same machine, same node directory).
pub fn node_key(node_dir: &std::path::Path) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::MetadataExt;
    let mut h = Sha256::new();
    h.update(b"npu-emu node v1");
    h.update(
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .unwrap_or_default()
            .trim(),
    );
    if let Ok(m) = std::fs::metadata(node_dir) {
        h.update(m.dev().to_le_bytes());
        h.update(m.ino().to_le_bytes());
    }
    h.update(node_dir.as_os_str().as_encoded_bytes());
    h.finalize().into()
}

/// Why a frame could not be read.
enum ReadErr {
    /// The deadline passed.
    TimedOut,
    /// The other end closed the connection (after `got` of `want` bytes).
    Closed { got: usize, want: usize },
    /// Anything else (a reset connection, a malformed header …).
    Other(String),
}

impl ReadErr {
    fn text(&self, what: &str) -> String {
        match self {
            ReadErr::TimedOut => format!("timed out reading {what}"),
            ReadErr::Closed { got, want } => {
                format!("the connection closed while reading {what} (got {got} of {want} bytes)")
            }
            ReadErr::Other(m) => format!("reading {what}: {m}"),
        }
    }
}

fn read_frame(s: &mut TcpStream, until: Instant) -> Result<(Header, Vec<u8>), ReadErr> {
    let mut hb = [0u8; HEADER_BYTES];
    read_until(s, &mut hb, until)?;
    let h = Header::decode(&hb).map_err(ReadErr::Other)?;
    let mut p = vec![0u8; h.len as usize];
    read_until(s, &mut p, until)?;
    Ok((h, p))
}

fn read_until(s: &mut TcpStream, buf: &mut [u8], until: Instant) -> Result<(), ReadErr> {
    let mut off = 0;
    while off < buf.len() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadErr::TimedOut);
        }
        s.set_read_timeout(Some(left.min(Duration::from_millis(200))))
            .map_err(|e| ReadErr::Other(e.to_string()))?;
        match s.read(&mut buf[off..]) {
            Ok(0) => {
                return Err(ReadErr::Closed {
                    got: off,
                    want: buf.len(),
                })
            }
            Ok(k) => off += k,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
                ) =>
            {
                return Err(ReadErr::Closed {
                    got: off,
                    want: buf.len(),
                })
            }
            Err(e) => return Err(ReadErr::Other(e.to_string())),
        }
    }
    Ok(())
}

fn write_frame(s: &mut TcpStream, kind: Kind, tag: u64, payload: &[u8]) -> std::io::Result<()> {
    let mut b = Header::new(kind, 0, tag, payload.len() as u64)
        .encode()
        .to_vec();
    b.extend_from_slice(payload);
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(&b)
}

// ---- the root ----

struct Arrived {
    rec: Record,
    sock: TcpStream,
}

#[derive(Default)]
struct RootState {
    n: Option<u32>,
    /// Which rank count the first rank passed, and who it was.
    n_from: String,
    joined: Vec<Option<Arrived>>,
    done: bool,
    first_join: Option<Instant>,
    /// Once the root gave up: what it told the ranks that had joined, and when. It keeps
    /// listening a while after, to tell a rank that comes late the same (instead of a
    /// refused or closed connection that says nothing).
    gave_up: Option<(String, Instant)>,
}

/// Start the root of communicator `key` on `listener`: a thread that runs until every rank
/// joined, or gives up `patience` after the first rank joined (then it tells those that did
/// which ranks never came), or `idle` passes without any rank. After giving up it answers
/// ranks that come late with the same message, for `patience` more (or until the process
/// ends).
pub fn start_root(
    listener: TcpListener,
    key: [u8; 32],
    name: String,
    patience: Duration,
    idle: Duration,
) -> HResult<SocketAddr> {
    let addr = listener
        .local_addr()
        .map_err(|e| HcclError::new(HCCL_E_TCP_CONNECT, format!("the root's listener: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| HcclError::new(HCCL_E_TCP_CONNECT, format!("the root's listener: {e}")))?;
    let st = Arc::new(Mutex::new(RootState::default()));
    std::thread::Builder::new()
        .name("hccl-root".into())
        .spawn(move || root_main(listener, key, name, patience, idle, st))
        .map_err(|e| {
            HcclError::new(
                HCCL_E_INTERNAL,
                format!("cannot start the root's thread: {e}"),
            )
        })?;
    Ok(addr)
}

fn root_main(
    l: TcpListener,
    key: [u8; 32],
    name: String,
    patience: Duration,
    idle: Duration,
    st: Arc<Mutex<RootState>>,
) {
    let started = Instant::now();
    let addr = l
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let mut refused = std::collections::HashSet::new();
    loop {
        {
            let mut s = st.lock();
            if let Some((_, at)) = &s.gave_up {
                if at.elapsed() >= patience {
                    return;
                }
            } else if s.done {
                return;
            } else {
                let give_up = match s.first_join {
                    Some(t) => t.elapsed() >= patience,
                    None => started.elapsed() >= idle,
                };
                if give_up {
                    let waited = if s.first_join.is_some() {
                        patience
                    } else {
                        idle
                    };
                    give_up_root(&mut s, &name, &addr, waited);
                    continue;
                }
            }
        }
        match l.accept() {
            Ok((sock, from)) => {
                if let Err(why) = crate::net::whitelist::check(from) {
                    // Once per address: a turned-away rank keeps retrying until its timeout.
                    if !refused.insert(from.ip()) {
                        continue;
                    }
                    crate::log(
                        npu_emu::config::LogLevel::Warning,
                        &format!(
                            "the root of communicator {name} dropped a connection from {from}: {why}"
                        ),
                    );
                    continue;
                }
                let (st, name) = (st.clone(), name.clone());
                let _ = std::thread::Builder::new()
                    .name("hccl-root-join".into())
                    .spawn(move || {
                        if let Err(why) = root_take(sock, &key, &st) {
                            crate::log(
                                npu_emu::config::LogLevel::Warning,
                                &format!(
                                    "the root of communicator {name} dropped a connection from {from}: {why}"
                                ),
                            );
                        }
                    });
            }
            Err(_) => wait_readable(&l, Duration::from_millis(200)),
        }
    }
}

/// Sleep until `l` has a connection to accept or `most` passes. A process may hold many
/// roots at once (one per `HcclGetRootInfo`, each living up to `HCCL_CONNECT_TIMEOUT`), so
/// an idle root must cost no CPU: it sleeps in poll(2) rather than retrying accept on a
/// short timer, and still accepts a rank the moment it connects.
fn wait_readable(l: &TcpListener, most: Duration) {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd {
        fd: l.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for a descriptor the listener owns for the whole call; poll
    // only writes its `revents`.
    let r = unsafe { libc::poll(&mut pfd, 1, most.as_millis() as libc::c_int) };
    if r < 0 {
        // EINTR or a failure of poll itself: do not spin on it.
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn give_up_root(s: &mut RootState, name: &str, addr: &str, waited: Duration) {
    s.done = true;
    let n = s.n.unwrap_or(0);
    let missing: Vec<u32> = (0..n)
        .filter(|&r| s.joined.get(r as usize).is_none_or(|j| j.is_none()))
        .collect();
    let mut msg = if n == 0 {
        format!(
            "the root of communicator {name} at {addr} gave up: no rank joined within {} s",
            waited.as_secs()
        )
    } else {
        format!(
            "the root of communicator {name} at {addr} gave up: timed out after {} s (HCCL_CONNECT_TIMEOUT) waiting for ranks {missing:?} of {n} to join; joined:",
            waited.as_secs()
        )
    };
    for j in s.joined.iter().flatten() {
        msg.push_str(&format!(
            "\n    rank {} (host {}, {}, pid {})",
            j.rec.rank,
            j.rec.host,
            j.rec.addr.ip(),
            j.rec.pid
        ));
    }
    // Ranks of other processes first: a rank of this process that learns it first returns
    // its error, and its program usually exits at once, ending this thread before the others
    // were told (they would see a silent close instead of which ranks never came).
    let me = std::process::id();
    let (mine, others): (Vec<_>, Vec<_>) =
        s.joined.iter_mut().flatten().partition(|j| j.rec.pid == me);
    for j in others.into_iter().chain(mine) {
        let _ = write_frame(
            &mut j.sock,
            Kind::Refused,
            HCCL_E_TIMEOUT as u64,
            msg.as_bytes(),
        );
    }
    s.joined.clear();
    s.gave_up = Some((msg, Instant::now()));
}

fn root_take(mut sock: TcpStream, key: &[u8; 32], st: &Mutex<RootState>) -> Result<(), String> {
    let _ = sock.set_nonblocking(false);
    tcp::server_handshake(&mut sock, key, &|h| {
        if h.to == TO_ROOT {
            Ok(())
        } else {
            Err(format!("it asked for rank {} instead of the root", h.to))
        }
    })?;
    let (h, p) = read_frame(&mut sock, Instant::now() + Duration::from_secs(10))
        .map_err(|e| e.text("a join request"))?;
    if h.kind != Kind::Join {
        return Err(format!(
            "it sent a {:?} frame instead of a join request",
            h.kind
        ));
    }
    let mut r = Reader::new(&p);
    let parsed = (|| -> Result<(u32, Record), String> {
        let n = r.u32("rank count")?;
        let rec = Record::decode(&mut r)?;
        r.done()?;
        Ok((n, rec))
    })();
    let (n, rec) = parsed.map_err(|m| format!("malformed join request: {m}"))?;
    let mut s = st.lock();
    let refuse = |sock: &mut TcpStream, why: String| {
        let _ = write_frame(sock, Kind::Refused, HCCL_E_PARA as u64, why.as_bytes());
        Err(why)
    };
    let who = format!("rank {} (host {}, pid {})", rec.rank, rec.host, rec.pid);
    if let Some((msg, at)) = &s.gave_up {
        let why = format!(
            "{who} came too late, {:.1} s after {msg}",
            at.elapsed().as_secs_f64()
        );
        let _ = write_frame(
            &mut sock,
            Kind::Refused,
            HCCL_E_TIMEOUT as u64,
            why.as_bytes(),
        );
        return Err(why);
    }
    if s.done {
        return refuse(
            &mut sock,
            format!("{who} came after every rank of the communicator already joined"),
        );
    }
    match s.n {
        None => {
            s.n = Some(n);
            s.n_from = who.clone();
            s.joined = (0..n).map(|_| None).collect();
            s.first_join = Some(Instant::now());
        }
        Some(m) if m != n => {
            let why = format!("nRanks={n} on {who} but {} passed nRanks={m}", s.n_from);
            return refuse(&mut sock, why);
        }
        _ => {}
    }
    if rec.rank >= n {
        return refuse(
            &mut sock,
            format!("rank={} is out of range for nRanks={n}", rec.rank),
        );
    }
    if let Some(j) = &s.joined[rec.rank as usize] {
        let why = format!(
            "rank {} joined twice: from host {} pid {} and from host {} pid {}; every rank must pass a different rank",
            rec.rank, j.rec.host, j.rec.pid, rec.host, rec.pid
        );
        return refuse(&mut sock, why);
    }
    let rank = rec.rank;
    s.joined[rank as usize] = Some(Arrived { rec, sock });
    if s.joined.iter().all(|j| j.is_some()) {
        let mut w = Writer::default();
        w.u32(n);
        for j in s.joined.iter().flatten() {
            w.bytes(&j.rec.encode());
        }
        for j in s.joined.iter_mut().flatten() {
            let _ = write_frame(&mut j.sock, Kind::Roster, 0, &w.0);
        }
        s.done = true;
        s.joined.clear();
    }
    Ok(())
}

// ---- a rank ----

/// What [`join`] gives a rank: everyone's record, and the listener its peers on other
/// servers connect to.
pub struct Joined {
    pub roster: Vec<Record>,
    pub listener: TcpListener,
}

/// Join communicator `key` of `n` ranks at the root (trying `roots` in order: the first
/// that authenticates wins). `rec` is this rank's record; its address is filled in here
/// (a fresh listener on the address this host uses to reach the root). `listened`: the
/// root listened before this rank could know its address (root info: `HcclGetRootInfo`
/// starts it), so a refused connection means it is gone, not that it is still starting
/// (rank 0 of a rank table may start after the others).
pub fn join(
    roots: &[SocketAddr],
    key: &[u8; 32],
    n: u32,
    mut rec: Record,
    deadline: Instant,
    listened: bool,
) -> HResult<Joined> {
    let mut sock = None;
    let mut why = Vec::new();
    // Every candidate gets a try before any is retried; refused ones are retried until the
    // deadline (the root may not listen yet).
    while sock.is_none() {
        for a in roots {
            let per = Instant::now() + Duration::from_secs(2);
            match tcp::connect(*a, key, rec.rank, TO_ROOT, per.min(deadline), "the root") {
                Ok(s) => {
                    sock = Some(s);
                    break;
                }
                Err(e) => why.push(e.msg),
            }
        }
        if sock.is_none() && Instant::now() >= deadline {
            why.dedup();
            // Nothing listening where the root info says the root is: the root was there
            // (HcclGetRootInfo starts it before the root info can be handed out), so its
            // process has ended.
            let gone = if listened && why.iter().any(|w| w.contains("refused (os error")) {
                " (nothing listens there any more: the root's process has ended; a root gives up HCCL_CONNECT_TIMEOUT after the first rank joined, when some rank never came, and its program then usually exits, so this rank probably came too late)"
            } else {
                ""
            };
            return Err(HcclError::new(
                HCCL_E_TIMEOUT,
                format!(
                    "rank {} timed out (HCCL_CONNECT_TIMEOUT) and cannot reach the communicator's root at {}{gone}: {}",
                    rec.rank,
                    roots
                        .iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(" or "),
                    why.iter()
                        .rev()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ));
        }
    }
    let mut sock = sock.unwrap_or_else(|| unreachable!());
    let local: IpAddr = sock
        .local_addr()
        .map(|a| a.ip())
        .map_err(|e| HcclError::new(HCCL_E_TCP_CONNECT, e.to_string()))?;
    let listener = crate::net::endpoint::listen_data(&crate::config()?.host_net, local)?;
    rec.addr = listener
        .local_addr()
        .map_err(|e| HcclError::new(HCCL_E_TCP_CONNECT, e.to_string()))?;
    let mut w = Writer::default();
    w.u32(n);
    w.0.extend_from_slice(&rec.encode());
    write_frame(&mut sock, Kind::Join, 0, &w.0).map_err(|e| {
        HcclError::new(HCCL_E_TCP_CONNECT, format!("sending the join request: {e}"))
    })?;
    // A little longer than the root's own patience, so its message (which names the
    // missing ranks) normally arrives first.
    let root = sock.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let (h, p) = read_frame(&mut sock, deadline + Duration::from_secs(5)).map_err(|e| match e {
        ReadErr::TimedOut => HcclError::new(
            HCCL_E_TIMEOUT,
            format!(
                "rank {} timed out (HCCL_CONNECT_TIMEOUT) waiting for the other ranks to join at the root {root}",
                rec.rank
            ),
        ),
        // The root answers every rank that reached it (the roster, or why not) while its
        // process lives: a silent close means the process ended.
        ReadErr::Closed { .. } => HcclError::new(
            HCCL_E_TIMEOUT,
            format!(
                "rank {} joined at the root {root}, but the root's process ended before it answered (its program exited or was killed; a root gives up HCCL_CONNECT_TIMEOUT after the first rank joined, when some rank never came, and its program then usually exits, so this rank probably came too late)",
                rec.rank
            ),
        ),
        e => HcclError::new(
            HCCL_E_TCP_TRANSFER,
            format!(
                "rank {} waiting for the roster from the root {root}: {}",
                rec.rank,
                e.text("the roster")
            ),
        ),
    })?;
    match h.kind {
        Kind::Roster => {}
        Kind::Refused => {
            let code = if h.tag == HCCL_E_TIMEOUT as u64 {
                HCCL_E_TIMEOUT
            } else {
                HCCL_E_PARA
            };
            return Err(HcclError::new(
                code,
                String::from_utf8_lossy(&p).into_owned(),
            ));
        }
        k => {
            return Err(HcclError::new(
                HCCL_E_INTERNAL,
                format!("the root answered with a {k:?} frame"),
            ))
        }
    }
    let mut r = Reader::new(&p);
    let parsed = (|| -> Result<Vec<Record>, String> {
        let m = r.u32("rank count")?;
        if m != n {
            return Err(format!("a roster of {m} ranks for {n}"));
        }
        let mut v = Vec::with_capacity(n as usize);
        for i in 0..n {
            let b = r.bytes("record")?;
            let mut rr = Reader::new(b);
            let rec = Record::decode(&mut rr)?;
            rr.done()?;
            if rec.rank != i {
                return Err(format!("record {i} is rank {}", rec.rank));
            }
            v.push(rec);
        }
        r.done()?;
        Ok(v)
    })();
    let roster = parsed.map_err(|m| {
        HcclError::new(
            HCCL_E_INTERNAL,
            format!("malformed roster from the root: {m}"),
        )
    })?;
    Ok(Joined { roster, listener })
}

/// Connect rank `me` to every rank of `roster` for which `remote(rank)` (ranks on other
/// servers): the lower rank of a pair connects, the higher accepts. Returns the mesh,
/// indexed by rank.
pub fn build_mesh(
    roster: &[Record],
    me: u32,
    listener: TcpListener,
    key: &[u8; 32],
    remote: &dyn Fn(u32) -> bool,
    deadline: Instant,
    name: &str,
) -> HResult<Mesh> {
    let n = roster.len() as u32;
    let lower: Vec<u32> = (0..me).filter(|&q| remote(q)).collect();
    let higher: Vec<u32> = (me + 1..n).filter(|&q| remote(q)).collect();
    let mut conns: Vec<Option<Arc<Conn>>> = (0..n).map(|_| None).collect();
    let accepted: Mutex<Vec<(u32, TcpStream)>> = Mutex::new(Vec::new());
    let what = format!("rank {me} of communicator {name}");
    let res: HResult<()> = std::thread::scope(|sc| {
        let acc = sc.spawn(|| -> HResult<()> {
            let mut want: Vec<u32> = lower.clone();
            while !want.is_empty() {
                let expect = |h: &frame::Hello| {
                    if h.to != me {
                        return Err(format!("it asked for rank {} but this is rank {me}", h.to));
                    }
                    if !accepted.lock().iter().all(|(r, _)| *r != h.from) || !lower.contains(&h.from) {
                        return Err(format!("rank {} is not expected to connect here", h.from));
                    }
                    Ok(())
                };
                let (s, h) = tcp::accept(&listener, key, &expect, deadline, &what).map_err(|e| {
                    HcclError::new(
                        e.code,
                        format!(
                            "{what}: timed out after HCCL_CONNECT_TIMEOUT waiting for ranks {want:?} (on other servers) to connect",
                        ),
                    )
                })?;
                want.retain(|&r| r != h.from);
                accepted.lock().push((h.from, s));
            }
            Ok(())
        });
        let mut out = Ok(());
        for &q in &higher {
            let rq = &roster[q as usize];
            match tcp::connect(rq.addr, key, me, q, deadline, &rq.peer_id().to_string()) {
                Ok(s) => match Conn::start(s, rq.peer_id()) {
                    Ok(c) => conns[q as usize] = Some(c),
                    Err(e) => {
                        out = Err(e);
                        break;
                    }
                },
                Err(e) => {
                    out = Err(e);
                    break;
                }
            }
        }
        let a = acc.join().unwrap_or_else(|_| {
            Err(HcclError::new(
                HCCL_E_INTERNAL,
                "the accepting thread failed",
            ))
        });
        out.and(a)
    });
    res?;
    for (q, s) in accepted.into_inner() {
        conns[q as usize] = Some(Conn::start(s, roster[q as usize].peer_id())?);
    }
    Ok(Mesh { conns })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{tcp::TcpNet, Net};

    fn rec(rank: u32, server: u8) -> Record {
        Record {
            rank,
            pid: 100 + rank,
            device: rank % 2,
            host: format!("h{server}"),
            node_dir: format!("/dev/shm/n{server}"),
            server: [server; 32],
            node: [server; 32],
            server_name: format!("s{server}"),
            addr: "0.0.0.0:0".parse().unwrap(),
        }
    }

    #[test]
    fn four_ranks_on_two_servers_meet_and_talk() {
        let id = [9u8; 16];
        let key = frame::key(&id);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let root = start_root(
            l,
            key,
            "t".into(),
            Duration::from_secs(20),
            Duration::from_secs(30),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let hs: Vec<_> = (0..4u32)
            .map(|r| {
                std::thread::spawn(move || {
                    let j = join(&[root], &key, 4, rec(r, (r / 2) as u8), deadline, true).unwrap();
                    assert_eq!(j.roster.len(), 4);
                    let my = j.roster[r as usize].server;
                    let roster = j.roster.clone();
                    let mesh = build_mesh(
                        &roster,
                        r,
                        j.listener,
                        &key,
                        &|q| roster[q as usize].server != my,
                        deadline,
                        "t",
                    )
                    .unwrap();
                    let net = TcpNet::new(1, r, (0..4).collect(), Arc::new(mesh));
                    // Each rank sends its rank to both ranks of the other server.
                    let peers: Vec<u32> = (0..4).filter(|q| q / 2 != r / 2).collect();
                    let mut got = [0u32; 2];
                    let rs: Vec<_> = peers
                        .iter()
                        .zip(got.iter_mut())
                        // SAFETY: `got` outlives the waits.
                        .map(|(&q, g)| unsafe {
                            net.irecv(q, 1, g as *mut u32 as *mut u8, 4).unwrap()
                        })
                        .collect();
                    for &q in &peers {
                        // SAFETY: test buffers outlive the transfers and waits that use them.
                        unsafe {
                            net.send(q, 1, &r as *const u32 as *const u8, 4, None)
                                .unwrap()
                        };
                    }
                    for x in &rs {
                        net.wait(x, Some(deadline)).unwrap();
                    }
                    drop(rs);
                    assert_eq!(got.to_vec(), peers);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }

    /// A rank that comes after the root gave up is told so (HCCL_E_TIMEOUT, naming the root,
    /// its address and who joined) while the root's process lives; once nothing listens
    /// any more it times out saying the root's process ended.
    #[test]
    fn a_rank_coming_after_the_root_gave_up_is_told_so() {
        let key = frame::key(&[13u8; 16]);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let root = start_root(
            l,
            key,
            "late".into(),
            Duration::from_secs(1),
            Duration::from_secs(30),
        )
        .unwrap();
        let deadline = || Instant::now() + Duration::from_secs(20);
        let e = join(&[root], &key, 2, rec(0, 0), deadline(), true)
            .err()
            .unwrap();
        assert_eq!(e.code, HCCL_E_TIMEOUT, "{}", e.msg);
        assert!(
            e.msg.contains(&format!(
                "the root of communicator late at {root} gave up: timed out after 1 s (HCCL_CONNECT_TIMEOUT) waiting for ranks [1] of 2 to join; joined:\n    rank 0 (host h0"
            )),
            "{}",
            e.msg
        );
        // Late, while the root still listens: the same message, naming the late rank.
        let t0 = Instant::now();
        let e = join(&[root], &key, 2, rec(1, 1), deadline(), true)
            .err()
            .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(e.code, HCCL_E_TIMEOUT, "{}", e.msg);
        assert!(
            e.msg.contains("rank 1 (host h1, pid 101) came too late, ")
                && e.msg.contains(&format!(
                    " s after the root of communicator late at {root} gave up: timed out after 1 s (HCCL_CONNECT_TIMEOUT) waiting for ranks [1] of 2"
                )),
            "{}",
            e.msg
        );
        // After the root stopped listening (1 s more here): refused connections until this
        // rank's own timeout, then the same code and what that means.
        std::thread::sleep(Duration::from_millis(1500));
        let e = join(
            &[root],
            &key,
            2,
            rec(1, 1),
            Instant::now() + Duration::from_secs(2),
            true,
        )
        .err()
        .unwrap();
        assert_eq!(e.code, HCCL_E_TIMEOUT, "{}", e.msg);
        assert!(
            e.msg.contains(&format!(
                "rank 1 timed out (HCCL_CONNECT_TIMEOUT) and cannot reach the communicator's root at {root} (nothing listens there any more: the root's process has ended;"
            )),
            "{}",
            e.msg
        );
    }

    #[test]
    fn mismatched_rank_counts_and_missing_ranks() {
        let key = frame::key(&[10u8; 16]);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let root = start_root(
            l,
            key,
            "t".into(),
            Duration::from_secs(2),
            Duration::from_secs(30),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let a = std::thread::spawn(move || {
            join(&[root], &key, 3, rec(0, 0), deadline, true)
                .err()
                .unwrap()
        });
        std::thread::sleep(Duration::from_millis(300));
        let e = join(&[root], &key, 2, rec(1, 0), deadline, true)
            .err()
            .unwrap();
        assert!(e.msg.contains("nRanks=2 on rank 1 (host h0, pid 101) but rank 0 (host h0, pid 100) passed nRanks=3"), "{}", e.msg);
        let e = a.join().unwrap();
        assert_eq!(e.code, HCCL_E_TIMEOUT, "{}", e.msg);
        assert!(e.msg.contains("waiting for ranks [1, 2] of 3"), "{}", e.msg);
        assert!(e.msg.contains("rank 0 (host h0"), "{}", e.msg);
        // A stranger (another id) never gets to the root.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let root = start_root(
            l,
            key,
            "t".into(),
            Duration::from_secs(5),
            Duration::from_secs(30),
        )
        .unwrap();
        let other = frame::key(&[11u8; 16]);
        let e = join(
            &[root],
            &other,
            1,
            rec(0, 0),
            Instant::now() + Duration::from_secs(3),
            true,
        )
        .err()
        .unwrap();
        assert!(
            e.msg.contains("cannot reach the communicator's root"),
            "{}",
            e.msg
        );
    }
}
