//! TCP between ranks on different servers: the emulated RoCE path.
//!
//! One authenticated connection per pair of ranks ([`connect`] / [`accept`], see
//! [`super::frame`] for the handshake). Each connection ([`Conn`]) has a reader thread that
//! reads frames as they come: a data frame goes straight into the buffer of the receive
//! posted for its (communicator, tag), or, when none is posted yet, into memory until one
//! is ("unexpected" messages). Senders write frames themselves, one at a time per
//! connection. The reader never stops reading while the connection is healthy, so two ranks
//! sending to each other at once cannot deadlock.
//!
//! Failure detection: every connection carries a heartbeat every 0.5 s when it has nothing
//! else to send; a peer silent for [`PEER_TIMEOUT`] is unreachable (a link down, a host
//! gone, a stopped process). A closed connection means the peer's process ended (or it
//! destroyed the communicator, which it says first with a `Bye` frame). A rank that fails an
//! operation tells every peer with a `Fail` frame. Malformed or truncated frames break the
//! connection with a message naming the peer; nothing in a frame is trusted before its
//! header checked out.

use super::frame::{self, Challenge, Header, Hello, Kind, HEADER_BYTES};
use super::{Net, Recv, RecvSlot, Tag};
use crate::errors::{
    HResult, HcclError, HCCL_E_INTERNAL, HCCL_E_REMOTE, HCCL_E_TCP_CONNECT, HCCL_E_TCP_TRANSFER,
    HCCL_E_TIMEOUT,
};
use npu_emu::wait::{wait_until, Policy, WaitError, Word, NET_YIELD, NET_YIELD_MAX_BYTES};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A peer silent this long is unreachable.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection with nothing to send sends a heartbeat this often.
pub const HEARTBEAT_EVERY: Duration = Duration::from_millis(500);
/// Socket reads and writes return at least this often, so timers are looked at.
const IO_SLICE: Duration = Duration::from_millis(200);
/// How long a handshake may take once connected.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Most bytes of messages nobody has asked for yet, per connection.
const UNEXPECTED_LIMIT: u64 = 8 << 30;
/// Most bytes of spare buffers a connection keeps for messages that come before their
/// receive is posted (reused, so such a message costs no allocation and no page faults).
const SPARE_LIMIT: usize = 64 << 20;

/// Bytes a connection reads ahead: the frames of small messages that came together (a
/// fingerprint and the input behind it) are read with one system call.
const RX_AHEAD: usize = 64 << 10;
/// Reads of at least this many bytes go from the socket straight to their destination.
const RX_DIRECT: usize = 16 << 10;

/// The reading side of a connection: its socket and the bytes read ahead of the frame being
/// read. Between holders it holds no bytes (who reads stops only once it is empty).
struct Rx {
    sock: TcpStream,
    ahead: Box<[u8]>,
    pos: usize,
    end: usize,
}

impl Rx {
    fn new(sock: TcpStream) -> Rx {
        Rx {
            sock,
            ahead: vec![0u8; RX_AHEAD].into_boxed_slice(),
            pos: 0,
            end: 0,
        }
    }

    fn buffered(&self) -> usize {
        self.end - self.pos
    }

    fn fd(&self) -> std::os::unix::io::RawFd {
        self.sock.as_raw_fd()
    }

    /// Whether there is something to read now: bytes ahead, or on the socket.
    fn ready(&self) -> bool {
        self.buffered() > 0 || readable(self.fd(), 0)
    }
}

fn clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Who is at the other end of a connection, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerId {
    pub rank: u32,
    pub host: String,
    pub addr: SocketAddr,
    pub pid: u32,
}

impl std::fmt::Display for PeerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rank {} (host {}, {}, pid {})",
            self.rank,
            if self.host.is_empty() {
                "?"
            } else {
                &self.host
            },
            self.addr.ip(),
            self.pid
        )
    }
}

#[derive(Default)]
struct Match {
    posted: HashMap<(u64, u64), Arc<RecvSlot>>,
    unexpected: HashMap<(u64, u64), Vec<u8>>,
    unexpected_bytes: u64,
    /// `Fail` frames: communicator → (HCCL code, reason).
    failed: HashMap<u64, (i32, String)>,
    /// `Bye` frames: communicators the peer destroyed.
    bye: HashSet<u64>,
}

/// One connection to a peer on another server.
pub struct Conn {
    pub peer: PeerId,
    sock: TcpStream,
    wlock: Mutex<()>,
    /// The reading side: whoever holds it reads whole frames from the socket. The reader
    /// thread takes it when the socket has data; a thread waiting for a receive takes it
    /// when it is free ([`Conn::progress`]), and so gets its message without waiting for
    /// the reader thread to be woken and scheduled (MPI's progress in the waiting call).
    rx: Mutex<Rx>,
    m: Mutex<Match>,
    /// Buffers of messages that came before their receive, kept for the next such message.
    spare: Mutex<Vec<Vec<u8>>>,
    broken: Mutex<Option<HcclError>>,
    is_broken: AtomicBool,
    closing: AtomicBool,
    last_rx: AtomicU64,
    last_tx: AtomicU64,
    /// Bumped when a receive completes or the connection's state changes.
    pub word: Word,
}

enum Stop {
    /// We are closing the connection.
    Closing,
    Err(HcclError),
}

impl From<HcclError> for Stop {
    fn from(e: HcclError) -> Stop {
        Stop::Err(e)
    }
}

fn new_word() -> Word {
    Word {
        value: AtomicU32::new(0),
        sleepers: AtomicU32::new(0),
    }
}

/// What a failed socket call says about the peer.
fn gone_why(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ECONNRESET) | Some(libc::EPIPE) => {
            format!("closed the connection: its process exited or was killed ({e})")
        }
        Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) | Some(libc::ETIMEDOUT) => {
            format!("is unreachable ({e})")
        }
        _ => format!("dropped the connection: {e}"),
    }
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

impl Conn {
    /// Take over an authenticated socket and start its reader thread.
    pub fn start(sock: TcpStream, peer: PeerId) -> HResult<Arc<Conn>> {
        let setup = |s: &TcpStream| -> std::io::Result<()> {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(IO_SLICE))?;
            s.set_write_timeout(Some(IO_SLICE))
        };
        setup(&sock).map_err(|e| {
            HcclError::new(
                HCCL_E_TCP_CONNECT,
                format!("setting up the connection to {peer}: {e}"),
            )
        })?;
        let rd = sock.try_clone().map_err(|e| {
            HcclError::new(
                HCCL_E_TCP_CONNECT,
                format!("setting up the connection to {peer}: {e}"),
            )
        })?;
        let now = clock();
        let c = Arc::new(Conn {
            peer,
            sock,
            wlock: Mutex::new(()),
            rx: Mutex::new(Rx::new(rd)),
            m: Mutex::new(Match::default()),
            spare: Mutex::new(Vec::new()),
            broken: Mutex::new(None),
            is_broken: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            last_rx: AtomicU64::new(now),
            last_tx: AtomicU64::new(now),
            word: new_word(),
        });
        let c2 = c.clone();
        std::thread::Builder::new()
            .name(format!("hccl-net-r{}", c.peer.rank))
            .spawn(move || reader_main(c2))
            .map_err(|e| {
                HcclError::new(
                    HCCL_E_INTERNAL,
                    format!(
                        "cannot start the reader thread of the connection to {}: {e}",
                        c.peer
                    ),
                )
            })?;
        Ok(c)
    }

    /// Read the frames that have arrived, if no other thread is reading: a waiting thread
    /// calls this as it polls. Returns whether it read any.
    pub fn progress(&self) -> bool {
        if self.is_broken.load(Ordering::Relaxed) {
            return false;
        }
        let Some(mut rd) = self.rx.try_lock() else {
            return false;
        };
        let mut any = false;
        while rd.ready() {
            match read_frame(self, &mut rd) {
                Ok(()) => any = true,
                Err(Stop::Closing) => break,
                Err(Stop::Err(e)) => {
                    self.break_with(e);
                    break;
                }
            }
        }
        any
    }

    /// The error that broke the connection, if it is broken.
    pub fn broken(&self) -> Option<HcclError> {
        if !self.is_broken.load(Ordering::Acquire) {
            return None;
        }
        self.broken.lock().clone()
    }

    /// Break the connection with `e` (the first error wins): every posted receive fails.
    pub fn break_with(&self, e: HcclError) {
        {
            let mut b = self.broken.lock();
            if b.is_none() {
                *b = Some(e.clone());
            }
        }
        self.is_broken.store(true, Ordering::Release);
        let posted: Vec<Arc<RecvSlot>> = self.m.lock().posted.drain().map(|(_, s)| s).collect();
        let e = self.broken.lock().clone().unwrap_or(e);
        for s in posted {
            s.fail(e.clone());
        }
        self.word.bump_wake();
        let _ = self.sock.shutdown(Shutdown::Both);
    }

    /// Close our side (no error is reported for it).
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        let _ = self.sock.shutdown(Shutdown::Both);
        self.word.bump_wake();
    }

    /// Whether the peer announced a failure of communicator `comm`, and which.
    pub fn failed(&self, comm: u64) -> Option<(i32, String)> {
        self.m.lock().failed.get(&comm).cloned()
    }

    /// Whether the peer destroyed communicator `comm`.
    pub fn said_bye(&self, comm: u64) -> bool {
        self.m.lock().bye.contains(&comm)
    }

    /// Seconds since something was last heard from the peer.
    pub fn silence(&self) -> f64 {
        clock().saturating_sub(self.last_rx.load(Ordering::Relaxed)) as f64 / 1000.0
    }

    fn transfer_error(&self, what: String) -> HcclError {
        HcclError::new(HCCL_E_TCP_TRANSFER, format!("{}: {what}", self.peer))
    }

    fn lost(&self, what: String) -> HcclError {
        HcclError::new(HCCL_E_REMOTE, format!("{} {what}", self.peer))
    }

    fn unreachable(&self) -> HcclError {
        self.lost(format!(
            "is unreachable: nothing heard from it for {:.1} s (a link down, its host gone, or its process stopped)",
            self.silence()
        ))
    }

    /// Heartbeat and silence check, between socket reads and writes.
    fn tick(&self, writing: bool) -> Result<(), Stop> {
        if self.closing.load(Ordering::Acquire) {
            return Err(Stop::Closing);
        }
        if let Some(e) = self.broken() {
            return Err(Stop::Err(e));
        }
        let now = clock();
        if now.saturating_sub(self.last_rx.load(Ordering::Relaxed))
            >= PEER_TIMEOUT.as_millis() as u64
        {
            return Err(Stop::Err(self.unreachable()));
        }
        if !writing
            && now.saturating_sub(self.last_tx.load(Ordering::Relaxed))
                >= HEARTBEAT_EVERY.as_millis() as u64
        {
            if let Some(_g) = self.wlock.try_lock() {
                let h = Header::new(Kind::Heartbeat, 0, 0, 0).encode();
                self.send_now(&h);
            }
        }
        Ok(())
    }

    /// Write a small frame without blocking (heartbeats): all of it, or nothing when the
    /// socket buffer is full (the peer is then busy reading our data anyway). Called with
    /// the write lock held.
    fn send_now(&self, b: &[u8]) {
        // SAFETY: the pointer and length describe `b`; the descriptor is our socket.
        let r = unsafe {
            libc::send(
                self.sock.as_raw_fd(),
                b.as_ptr() as *const libc::c_void,
                b.len(),
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        if r > 0 {
            self.last_tx.store(clock(), Ordering::Relaxed);
            if (r as usize) < b.len() {
                // A partial frame must be finished, or the stream is garbage for the peer.
                if let Err(e) = self.write_all(&b[r as usize..], None) {
                    self.break_with(e);
                }
            }
        }
    }

    /// Write all of `b` (the write lock held).
    fn write_all(&self, b: &[u8], deadline: Option<Instant>) -> HResult<()> {
        self.write_all2(b, &[], deadline)
    }

    /// Write all of `head` then all of `body` (the write lock held), with one system call
    /// for both while they fit the socket buffer: a frame's header does not go out as a
    /// packet of its own, and the payload is never copied into a frame buffer first.
    fn write_all2(&self, head: &[u8], body: &[u8], deadline: Option<Instant>) -> HResult<()> {
        self.write_all_v(&[head, body], deadline)
    }

    /// Write all of `parts`, in order (the write lock held), with as few system calls as
    /// the socket buffer allows.
    fn write_all_v(&self, parts: &[&[u8]], deadline: Option<Instant>) -> HResult<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut off = 0;
        while off < total {
            // The parts from `off` on, at most 8 MiB per call, so timers are looked at
            // between calls.
            let mut iov = [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; 4];
            let mut k = 0;
            let (mut skip, mut room) = (off, 8usize << 20);
            for p in parts {
                if skip >= p.len() {
                    skip -= p.len();
                    continue;
                }
                if room == 0 || k == iov.len() {
                    break;
                }
                let b = &p[skip..];
                skip = 0;
                let b = &b[..b.len().min(room)];
                if b.is_empty() {
                    continue;
                }
                iov[k] = libc::iovec {
                    iov_base: b.as_ptr() as *mut libc::c_void,
                    iov_len: b.len(),
                };
                k += 1;
                room -= b.len();
            }
            // SAFETY: an all-zero msghdr is valid (no address, no control data).
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = iov.as_mut_ptr();
            msg.msg_iovlen = k as _;
            // SAFETY: the iovecs describe readable slices that outlive the call; the
            // descriptor is our socket.
            let r = unsafe { libc::sendmsg(self.sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
            if r > 0 {
                off += r as usize;
                self.last_tx.store(clock(), Ordering::Relaxed);
                continue;
            }
            let e = std::io::Error::last_os_error();
            if r < 0 && would_block(&e) {
                match self.tick(true) {
                    Ok(()) => {}
                    Err(Stop::Closing) => {
                        return Err(self.lost(
                            "was being disconnected (this communicator was destroyed)".into(),
                        ))
                    }
                    Err(Stop::Err(e)) => return Err(e),
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    let e = HcclError::new(
                        HCCL_E_TIMEOUT,
                        format!(
                            "timed out sending to {} ({} of {} bytes sent; it is not reading)",
                            self.peer, off, total
                        ),
                    );
                    if off > 0 {
                        // Half a frame is on the wire: the connection cannot be used again.
                        self.break_with(e.clone());
                    }
                    return Err(e);
                }
                continue;
            }
            let e = self.lost(gone_why(&e));
            self.break_with(e.clone());
            // The connection may have been broken first for another reason (the reader
            // found the peer silent and shut the socket, which is what made this write
            // fail): that first reason is the news.
            return Err(self.broken().unwrap_or(e));
        }
        Ok(())
    }

    /// Send one frame.
    pub fn send_frame(
        &self,
        kind: Kind,
        comm: u64,
        tag: u64,
        payload: &[u8],
        deadline: Option<Instant>,
    ) -> HResult<()> {
        let h = Header::new(kind, comm, tag, payload.len() as u64).encode();
        let _g = self.wlock.lock();
        if let Some(e) = self.broken() {
            return Err(e);
        }
        // A failure after the first byte breaks the connection (half a frame may be on the
        // wire; `write_all2` does that), one before it leaves the connection usable.
        self.write_all2(&h, payload, deadline)
    }

    /// Send two data frames with one system call (a fingerprint and the input that goes
    /// with it): `(tag, payload)` each, for communicator `comm`.
    pub fn send_two(
        &self,
        comm: u64,
        a: (u64, &[u8]),
        b: (u64, &[u8]),
        deadline: Option<Instant>,
    ) -> HResult<()> {
        let ha = Header::new(Kind::Data, comm, a.0, a.1.len() as u64).encode();
        let hb = Header::new(Kind::Data, comm, b.0, b.1.len() as u64).encode();
        let _g = self.wlock.lock();
        if let Some(e) = self.broken() {
            return Err(e);
        }
        self.write_all_v(&[&ha, a.1, &hb, b.1], deadline)
    }

    /// Post a receive for (comm, tag); a message that already arrived completes it at once.
    pub fn post(&self, comm: u64, tag: u64, slot: Arc<RecvSlot>) -> HResult<()> {
        let mut m = self.m.lock();
        // A message that came before the connection closed is still good: a peer that
        // sent its last messages, destroyed the communicator and exited is done, not dead.
        if let Some(v) = m.unexpected.remove(&(comm, tag)) {
            m.unexpected_bytes -= v.len() as u64;
            drop(m);
            self.fill_early(&slot, &v);
            self.give_spare(v);
            return Ok(());
        }
        if let Some(e) = self.broken() {
            return Err(e);
        }
        m.posted.retain(|_, s| s.state() != super::CANCELLED);
        m.posted.insert((comm, tag), slot);
        Ok(())
    }

    /// Complete `slot` with a message that came before it was posted; a message of the
    /// wrong size fails it with an error naming the peer.
    fn fill_early(&self, slot: &RecvSlot, v: &[u8]) {
        if v.len() == slot.len() {
            slot.fill_from(v);
        } else if slot.begin_fill() {
            slot.fail(self.size_error(v.len(), slot.len()));
        }
    }

    /// An empty buffer for a message of `len` bytes: a spare one with room for it if there
    /// is one, else a new one.
    fn take_spare(&self, len: usize) -> Vec<u8> {
        let mut sp = self.spare.lock();
        match sp.iter().position(|v| v.capacity() >= len) {
            Some(i) => {
                let mut v = sp.swap_remove(i);
                v.clear();
                v
            }
            None => Vec::new(),
        }
    }

    /// Keep `v` for a later early message, within [`SPARE_LIMIT`] (the smallest buffers
    /// go first).
    fn give_spare(&self, v: Vec<u8>) {
        let mut sp = self.spare.lock();
        let kept: usize = sp.iter().map(|b| b.capacity()).sum();
        if kept + v.capacity() <= SPARE_LIMIT {
            sp.push(v);
        } else if let Some(i) = (0..sp.len()).min_by_key(|&i| sp[i].capacity()) {
            if sp[i].capacity() < v.capacity()
                && kept - sp[i].capacity() + v.capacity() <= SPARE_LIMIT
            {
                sp[i] = v;
            }
        }
    }

    fn size_error(&self, got: usize, want: usize) -> HcclError {
        HcclError::para(format!(
            "{} sent a message of {got} bytes for a receive of {want} bytes: the ranks disagree about a count",
            self.peer
        ))
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

enum Got {
    Full,
    /// The peer closed the connection cleanly between frames.
    Eof,
}

fn read_full(
    c: &Conn,
    rd: &mut Rx,
    buf: &mut [u8],
    at_start: bool,
    what: &str,
) -> Result<Got, Stop> {
    // SAFETY: `buf` is writable for its length.
    unsafe { read_full_raw(c, rd, buf.as_mut_ptr(), buf.len(), at_start, what) }
}

/// [`read_full`] into `len` bytes at `buf`, which need not be initialised.
///
/// # Safety
/// `buf` is valid for `len` bytes of writes.
unsafe fn read_full_raw(
    c: &Conn,
    rd: &mut Rx,
    buf: *mut u8,
    len: usize,
    at_start: bool,
    what: &str,
) -> Result<Got, Stop> {
    // What was read ahead comes first.
    let mut off = rd.buffered().min(len);
    // SAFETY: `buf` holds `len >= off` bytes (the caller's promise); `ahead[pos..pos+off]` is
    // inside the read-ahead buffer.
    unsafe { std::ptr::copy_nonoverlapping(rd.ahead.as_ptr().add(rd.pos), buf, off) };
    rd.pos += off;
    if rd.pos == rd.end {
        (rd.pos, rd.end) = (0, 0);
    }
    while off < len {
        // The read-ahead buffer is empty here. A big remainder goes straight to `buf`; a small
        // one through the buffer, which takes what follows it too.
        let direct = len - off >= RX_DIRECT;
        let (to, room) = if direct {
            // SAFETY: `buf + off` is valid for `len - off` bytes (the caller's promise).
            (unsafe { buf.add(off) }, len - off)
        } else {
            (rd.ahead.as_mut_ptr(), rd.ahead.len())
        };
        // SAFETY: `to` is valid for `room` bytes of writes; the descriptor is the
        // connection's socket.
        let r = unsafe { libc::recv(rd.fd(), to as *mut libc::c_void, room, 0) };
        if r > 0 && !direct {
            let k = (r as usize).min(len - off);
            // SAFETY: `buf + off` holds `len - off >= k` bytes; the buffer holds `r >= k`.
            unsafe { std::ptr::copy_nonoverlapping(rd.ahead.as_ptr(), buf.add(off), k) };
            (rd.pos, rd.end) = if k == r as usize {
                (0, 0)
            } else {
                (k, r as usize)
            };
            off += k;
            c.last_rx.store(clock(), Ordering::Relaxed);
            if at_start && off < len {
                c.tick(false)?;
            }
            continue;
        }
        let res = if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r as usize)
        };
        match res {
            Ok(0) => {
                if c.closing.load(Ordering::Acquire) {
                    return Err(Stop::Closing);
                }
                if off == 0 && at_start {
                    return Ok(Got::Eof);
                }
                return Err(Stop::Err(c.transfer_error(format!(
                    "the connection closed in the middle of {what} (got {off} of {len} bytes): a truncated frame"
                ))));
            }
            Ok(k) => {
                off += k;
                c.last_rx.store(clock(), Ordering::Relaxed);
                if at_start && off < len {
                    // Between reads of a frame, still keep our heartbeats going.
                    c.tick(false)?;
                }
            }
            Err(e) if would_block(&e) => c.tick(false)?,
            Err(e) => {
                if c.closing.load(Ordering::Acquire) {
                    return Err(Stop::Closing);
                }
                return Err(Stop::Err(c.lost(gone_why(&e))));
            }
        }
    }
    Ok(Got::Full)
}

/// Whether socket `fd` has something to read (data, or the end of the stream) within `ms`
/// milliseconds.
fn readable(fd: std::os::unix::io::RawFd, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, ms) };
    r > 0 && p.revents != 0
}

fn reader_main(c: Arc<Conn>) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_loop(&c)));
    let e = match r {
        Ok(Ok(())) | Ok(Err(Stop::Closing)) => None,
        Ok(Err(Stop::Err(e))) => Some(e),
        Err(p) => Some(HcclError::new(
            HCCL_E_INTERNAL,
            format!(
                "the reader of the connection to {} failed: {}",
                c.peer,
                npu_emu_ffi::boundary::panic_text(&*p)
            ),
        )),
    };
    match e {
        Some(e) => c.break_with(e),
        None => {
            let e = c.lost("was disconnected: this side closed the connection".into());
            c.break_with(e);
        }
    }
}

/// The reader thread: wait (without holding the reading side) until the socket has data,
/// then read the frames that came, unless a waiting thread is doing it; heartbeats and the
/// silence check in between.
fn read_loop(c: &Conn) -> Result<(), Stop> {
    // The descriptor stays open as long as the connection (this thread holds it).
    let fd = c.rx.lock().fd();
    let slice = IO_SLICE.as_millis() as i32;
    loop {
        if let Some(e) = c.broken() {
            return Err(Stop::Err(e));
        }
        // Not under the lock: a waiting thread may take the reading side meanwhile.
        if !readable(fd, slice) {
            c.tick(false)?;
            continue;
        }
        let mut rd = c.rx.lock();
        while rd.ready() {
            read_frame(c, &mut rd)?;
        }
        drop(rd);
        c.tick(false)?;
    }
}

/// Read one frame (its header is there or coming) and act on it.
fn read_frame(c: &Conn, rd: &mut Rx) -> Result<(), Stop> {
    let mut hb = [0u8; HEADER_BYTES];
    match read_full(c, rd, &mut hb, true, "a frame header")? {
        Got::Full => {}
        Got::Eof => {
            if c.closing.load(Ordering::Acquire) {
                return Err(Stop::Closing);
            }
            let byes = !c.m.lock().bye.is_empty();
            return Err(Stop::Err(if byes {
                c.lost("destroyed its communicator and closed the connection".into())
            } else {
                c.lost("closed the connection: its process exited or was killed".into())
            }));
        }
    }
    let h = Header::decode(&hb).map_err(|m| Stop::Err(c.transfer_error(m)))?;
    match h.kind {
        Kind::Heartbeat => {}
        Kind::Data => read_data(c, rd, &h)?,
        Kind::Fail => {
            let mut p = vec![0u8; h.len as usize];
            read_full(c, rd, &mut p, false, "a failure notice")?;
            let mut r = frame::Reader::new(&p);
            let parsed = (|| -> Result<(i32, String), String> {
                let code = r.u32("code")?;
                let why = r.str("reason")?;
                r.done()?;
                Ok((code as i32, why))
            })();
            let (code, why) = parsed.map_err(|m| {
                Stop::Err(c.transfer_error(format!("malformed failure notice: {m}")))
            })?;
            c.m.lock().failed.entry(h.comm).or_insert((code, why));
        }
        Kind::Bye => {
            c.m.lock().bye.insert(h.comm);
        }
        other => {
            return Err(Stop::Err(c.transfer_error(format!(
                "malformed frame: a {other:?} frame on a data connection"
            ))))
        }
    }
    c.word.bump_wake();
    Ok(())
}

fn read_data(c: &Conn, rd: &mut Rx, h: &Header) -> Result<(), Stop> {
    let key = (h.comm, h.tag);
    let len = h.len as usize;
    let slot = c.m.lock().posted.remove(&key);
    if let Some(s) = slot {
        if s.len() == len && s.begin_fill() {
            // SAFETY: the receive's buffer holds `len` bytes while it is FILLING (its
            // owner waits for us before letting it go).
            let dst = unsafe { std::slice::from_raw_parts_mut(s.ptr(), len) };
            match read_full(c, rd, dst, false, "a message") {
                Ok(_) => {
                    s.complete();
                    return Ok(());
                }
                Err(Stop::Closing) => {
                    s.fail(c.lost("was disconnected".into()));
                    return Err(Stop::Closing);
                }
                Err(Stop::Err(e)) => {
                    s.fail(e.clone());
                    return Err(Stop::Err(e));
                }
            }
        }
        if s.len() != len {
            s.fail(c.size_error(len, s.len()));
        }
        // Mismatched or cancelled: read the bytes and drop them.
        discard(c, rd, len)?;
        return Ok(());
    }
    // Nobody asked yet: keep it.
    {
        let m = c.m.lock();
        if m.unexpected_bytes + h.len > UNEXPECTED_LIMIT {
            drop(m);
            return Err(Stop::Err(c.transfer_error(format!(
                "sent {} bytes that no receive asked for (more than {} GiB in flight)",
                h.len,
                UNEXPECTED_LIMIT >> 30
            ))));
        }
    }
    // Into a spare buffer when one is big enough (no allocation, no page faults), never
    // zeroed first; memory grows with what arrives, not with what the header claims.
    let mut v = c.take_spare(len);
    v.reserve_exact(len.min(64 << 20));
    while v.len() < len {
        let k = (len - v.len()).min(4 << 20);
        let old = v.len();
        v.reserve(k);
        // SAFETY: `reserve` made room for `k` more bytes after `old`.
        unsafe { read_full_raw(c, rd, v.as_mut_ptr().add(old), k, false, "a message")? };
        // SAFETY: those `k` bytes are now written.
        unsafe { v.set_len(old + k) };
    }
    let mut m = c.m.lock();
    if let Some(s) = m.posted.remove(&key) {
        drop(m);
        c.fill_early(&s, &v);
        c.give_spare(v);
    } else if m.unexpected.contains_key(&key) {
        drop(m);
        return Err(Stop::Err(c.transfer_error(format!(
            "malformed stream: two messages for one receive (communicator {:#x}, tag {:#x})",
            h.comm, h.tag
        ))));
    } else {
        m.unexpected_bytes += v.len() as u64;
        m.unexpected.insert(key, v);
    }
    Ok(())
}

fn discard(c: &Conn, rd: &mut Rx, mut len: usize) -> Result<(), Stop> {
    let mut buf = vec![0u8; len.min(1 << 20)];
    while len > 0 {
        let k = len.min(buf.len());
        read_full(c, rd, &mut buf[..k], false, "a message")?;
        len -= k;
    }
    Ok(())
}

// ---- connecting ----

fn io_err(code: i32, what: String) -> HcclError {
    HcclError::new(code, what)
}

fn read_exact_timeout(s: &mut TcpStream, buf: &mut [u8], until: Instant) -> std::io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "timed out",
            ));
        }
        s.set_read_timeout(Some(left.min(IO_SLICE)))?;
        match s.read(&mut buf[off..]) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the connection was closed",
                ))
            }
            Ok(k) => off += k,
            Err(e) if would_block(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Run the server side of the handshake on an accepted socket. `expect` checks the Hello
/// (who connects to whom). Errors say why the connection was refused.
pub fn server_handshake(
    s: &mut TcpStream,
    key: &[u8; 32],
    expect: &dyn Fn(&Hello) -> Result<(), String>,
) -> Result<Hello, String> {
    let until = Instant::now() + HANDSHAKE_TIMEOUT;
    let ch = Challenge {
        nonce: frame::nonce(),
    };
    s.set_write_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    s.write_all(&ch.encode()).map_err(|e| e.to_string())?;
    let mut b = [0u8; Hello::BYTES];
    read_exact_timeout(s, &mut b, until).map_err(|e| match e.kind() {
        std::io::ErrorKind::TimedOut => "it sent no hello within 5 s".to_string(),
        _ => format!("reading its hello: {e}"),
    })?;
    let h = Hello::decode(&b)?;
    if !h.verify(key, &ch) {
        return Err("it did not present this communicator's id".to_string());
    }
    expect(&h)?;
    s.write_all(&frame::welcome(key, &ch, &h))
        .map_err(|e| e.to_string())?;
    Ok(h)
}

/// Run the client side of the handshake. `who` names the endpoint for messages.
pub fn client_handshake(
    s: &mut TcpStream,
    key: &[u8; 32],
    from: u32,
    to: u32,
    who: &str,
) -> HResult<()> {
    let until = Instant::now() + HANDSHAKE_TIMEOUT;
    let fail = |m: String| io_err(HCCL_E_TCP_CONNECT, format!("connecting to {who}: {m}"));
    let mut cb = [0u8; Challenge::BYTES];
    read_exact_timeout(s, &mut cb, until).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            " (it turned this connection away before the handshake: is this host's address in the IP whitelist, HCCL_WHITELIST_FILE, where HCCL_WHITELIST_DISABLE=0?)"
        } else {
            ""
        };
        fail(format!("no greeting: {e}{hint}"))
    })?;
    let ch = Challenge::decode(&cb).map_err(&fail)?;
    let h = Hello::new(key, &ch, frame::nonce(), from, to);
    s.set_write_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(|e| fail(e.to_string()))?;
    s.write_all(&h.encode()).map_err(|e| fail(e.to_string()))?;
    let mut w = [0u8; 32];
    read_exact_timeout(s, &mut w, until).map_err(|e| {
        fail(format!(
            "it refused us ({e}): it belongs to another communicator or job, or does not expect this rank"
        ))
    })?;
    if w != frame::welcome(key, &ch, &h) {
        return Err(fail(
            "it does not hold this communicator's id (another job's endpoint?)".to_string(),
        ));
    }
    Ok(())
}

/// Connect to `addr` and authenticate as `from` → `to`, retrying refused connections
/// until `deadline` (the peer may not listen yet).
pub fn connect(
    addr: SocketAddr,
    key: &[u8; 32],
    from: u32,
    to: u32,
    deadline: Instant,
    who: &str,
) -> HResult<TcpStream> {
    let mut last = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io_err(
                HCCL_E_TCP_CONNECT,
                format!("cannot connect to {who} at {addr}: {last}"),
            ));
        }
        match TcpStream::connect_timeout(&addr, left.min(Duration::from_secs(2))) {
            Ok(mut s) => {
                client_handshake(&mut s, key, from, to, &format!("{who} at {addr}"))?;
                return Ok(s);
            }
            Err(e) => {
                last = e.to_string();
                std::thread::sleep(Duration::from_millis(50).min(left));
            }
        }
    }
}

/// Accept one connection that authenticates and passes `expect`, until `deadline`.
/// Connections that fail the handshake (strangers, other jobs) are dropped with a warning
/// naming where they came from.
pub fn accept(
    l: &TcpListener,
    key: &[u8; 32],
    expect: &dyn Fn(&Hello) -> Result<(), String>,
    deadline: Instant,
    what: &str,
) -> HResult<(TcpStream, Hello)> {
    l.set_nonblocking(true)
        .map_err(|e| io_err(HCCL_E_TCP_CONNECT, format!("{what}: {e}")))?;
    let mut refused = std::collections::HashSet::new();
    loop {
        match l.accept() {
            Ok((mut s, from)) => {
                if let Err(why) = crate::net::whitelist::check(from) {
                    // Once per address: a turned-away peer keeps retrying until its timeout.
                    if !refused.insert(from.ip()) {
                        continue;
                    }
                    crate::log(
                        npu_emu::config::LogLevel::Warning,
                        &format!("{what}: dropped a connection from {from}: {why}"),
                    );
                    continue;
                }
                let _ = s.set_nonblocking(false);
                match server_handshake(&mut s, key, expect) {
                    Ok(h) => return Ok((s, h)),
                    Err(why) => {
                        crate::log(
                            npu_emu::config::LogLevel::Warning,
                            &format!("{what}: dropped a connection from {from}: {why}"),
                        );
                    }
                }
            }
            Err(e) if would_block(&e) => {
                if Instant::now() >= deadline {
                    return Err(io_err(HCCL_E_TIMEOUT, format!("{what}: timed out")));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                return Err(io_err(
                    HCCL_E_TCP_CONNECT,
                    format!("{what}: accepting a connection failed: {e}"),
                ))
            }
        }
    }
}

// ---- a communicator's view ----

/// The connections of a communicator to ranks on other servers, shared with its
/// sub-communicators. Dropping the last reference closes them.
pub struct Mesh {
    /// Indexed by the rank in the communicator that built the mesh; `None` for ranks on
    /// this server (and this rank).
    pub conns: Vec<Option<Arc<Conn>>>,
}

impl Drop for Mesh {
    fn drop(&mut self) {
        for c in self.conns.iter().flatten() {
            c.close();
        }
    }
}

impl Mesh {
    /// Tell every peer that this rank failed an operation of `comm` (best effort: a peer
    /// that is itself gone is skipped).
    pub fn announce_failure(&self, comm: u64, code: i32, reason: &str) {
        let mut w = frame::Writer::default();
        w.u32(code as u32).str(reason);
        let deadline = Some(Instant::now() + Duration::from_secs(1));
        for c in self.conns.iter().flatten() {
            if c.broken().is_none() {
                let _ = c.send_frame(Kind::Fail, comm, 0, &w.0, deadline);
            }
        }
    }

    /// Tell every peer that this rank destroyed `comm`.
    pub fn say_bye(&self, comm: u64) {
        let deadline = Some(Instant::now() + Duration::from_secs(1));
        for c in self.conns.iter().flatten() {
            if c.broken().is_none() {
                let _ = c.send_frame(Kind::Bye, comm, 0, &[], deadline);
            }
        }
    }
}

/// A communicator's [`Net`] over a [`Mesh`].
pub struct TcpNet {
    pub comm: u64,
    pub rank: u32,
    /// Communicator rank → index in the mesh.
    pub map: Vec<u32>,
    pub mesh: Arc<Mesh>,
    pub policy: Policy,
}

impl TcpNet {
    pub fn new(comm: u64, rank: u32, map: Vec<u32>, mesh: Arc<Mesh>) -> TcpNet {
        TcpNet {
            comm,
            rank,
            map,
            mesh,
            policy: Policy {
                yield_for: NET_YIELD,
                ..Policy::for_participants(u32::MAX)
            },
        }
    }

    pub fn conn(&self, peer: u32) -> HResult<&Arc<Conn>> {
        self.map
            .get(peer as usize)
            .and_then(|&i| self.mesh.conns.get(i as usize))
            .and_then(|c| c.as_ref())
            .ok_or_else(|| {
                HcclError::new(
                    HCCL_E_INTERNAL,
                    format!("no network connection to rank {peer} (it is on this server)"),
                )
            })
    }

    /// A failure any peer announced for this communicator (`Fail` frames): the operations of
    /// the communicator cannot complete, whichever peer they wait for.
    pub fn peer_failed(&self) -> HResult<()> {
        for &i in self.map.iter() {
            let Some(Some(c)) = self.mesh.conns.get(i as usize) else {
                continue;
            };
            if let Some((code, why)) = c.failed(self.comm) {
                return Err(HcclError::new(
                    HCCL_E_REMOTE,
                    format!(
                        "{} failed ({}): {why}",
                        c.peer,
                        crate::errors::code_name(code)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Why a receive from the peer at the other end of `c` can no longer complete: the
    /// connection broke, the peer destroyed the communicator (its `Bye` came, so everything
    /// it sent before is already in), or any peer announced a failure. A peer other than
    /// the sender that destroyed its communicator is no reason: it finished its part (a
    /// rank destroys only after its queued operations ran) and the sender may still be on
    /// its way.
    fn trouble(&self, c: &Conn) -> HResult<()> {
        if let Some(e) = c.broken() {
            return Err(e);
        }
        if c.said_bye(self.comm) {
            return Err(HcclError::new(
                HCCL_E_REMOTE,
                format!(
                    "{} destroyed its communicator without sending this message",
                    c.peer
                ),
            ));
        }
        self.peer_failed()
    }
}

impl Net for TcpNet {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.map.len() as u32
    }

    unsafe fn send(
        &self,
        peer: u32,
        tag: Tag,
        buf: *const u8,
        len: usize,
        deadline: Option<Instant>,
    ) -> HResult<()> {
        let c = self.conn(peer)?;
        let payload: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: the caller guarantees `len` readable bytes at `buf`.
            unsafe { std::slice::from_raw_parts(buf, len) }
        };
        c.send_frame(Kind::Data, self.comm, tag, payload, deadline)
    }

    unsafe fn irecv(&self, peer: u32, tag: Tag, buf: *mut u8, len: usize) -> HResult<Recv> {
        let c = self.conn(peer)?;
        let slot = Arc::new(RecvSlot::new(buf, len));
        c.post(self.comm, tag, slot.clone())?;
        Ok(Recv { slot, peer, tag })
    }

    fn wait(&self, r: &Recv, deadline: Option<Instant>) -> HResult<()> {
        let c = self.conn(r.peer)?;
        // A big message is far away: sleep until the reader has it (see NET_YIELD_MAX_BYTES).
        let big = self.policy.without_polling();
        let res = wait_until(
            if r.slot.len() > NET_YIELD_MAX_BYTES {
                &big
            } else {
                &self.policy
            },
            &c.word,
            || r.slot.finished() || (c.progress() && r.slot.finished()),
            deadline,
            || match self.trouble(c) {
                // The reader records trouble after the frames that came before it, so a
                // receive finished by then is seen finished now: the next look takes it.
                Err(_) if r.slot.finished() => Ok(()),
                t => t,
            },
        );
        match res {
            Ok(()) => {}
            Err(WaitError::TimedOut) => {
                return Err(HcclError::new(
                    HCCL_E_TIMEOUT,
                    format!(
                        "timed out waiting for a message from {} (last heard from {:.1} s ago)",
                        c.peer,
                        c.silence()
                    ),
                ))
            }
            Err(WaitError::Check(e)) => return Err(e),
        }
        match r.slot.state() {
            super::DONE => Ok(()),
            _ => Err(r.slot.error().unwrap_or_else(|| {
                HcclError::new(HCCL_E_INTERNAL, "a receive ended without data or error")
            })),
        }
    }

    fn who(&self, p: u32) -> String {
        match self.conn(p) {
            Ok(c) => c.peer.to_string(),
            Err(_) => format!("rank {p}"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A connected, authenticated pair of connections over loopback.
    pub(crate) fn pair(key: &[u8; 32]) -> (Arc<Conn>, Arc<Conn>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let k2 = *key;
        let t = std::thread::spawn(move || {
            let s = connect(
                addr,
                &k2,
                0,
                1,
                Instant::now() + Duration::from_secs(10),
                "rank 1",
            )
            .unwrap();
            Conn::start(
                s,
                PeerId {
                    rank: 1,
                    host: "b".into(),
                    addr,
                    pid: 2,
                },
            )
            .unwrap()
        });
        let (s, h) = accept(
            &l,
            key,
            &|_| Ok(()),
            Instant::now() + Duration::from_secs(10),
            "test",
        )
        .unwrap();
        assert_eq!((h.from, h.to), (0, 1));
        let a = Conn::start(
            s,
            PeerId {
                rank: 0,
                host: "a".into(),
                addr,
                pid: 1,
            },
        )
        .unwrap();
        (a, t.join().unwrap())
    }

    /// An authenticated connection between ranks `x` and `y` over loopback: (x's end, whose
    /// peer is y; y's end, whose peer is x).
    fn link(key: &[u8; 32], x: u32, y: u32) -> (Arc<Conn>, Arc<Conn>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let k2 = *key;
        let t = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(10);
            let s = connect(addr, &k2, y, x, deadline, "x").unwrap();
            let peer = PeerId {
                rank: x,
                host: format!("h{x}"),
                addr,
                pid: 100 + x,
            };
            Conn::start(s, peer).unwrap()
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        let (s, _) = accept(&l, key, &|_| Ok(()), deadline, "test").unwrap();
        let peer = PeerId {
            rank: y,
            host: format!("h{y}"),
            addr,
            pid: 100 + y,
        };
        (Conn::start(s, peer).unwrap(), t.join().unwrap())
    }

    /// A rank that destroyed the communicator fails the receives from it, never those from
    /// other ranks: it finished its part, and the sender of a pending message may still be
    /// on its way (a slow rank of a point-to-point pair while a third rank is done).
    #[test]
    fn a_goodbye_fails_only_the_receives_from_that_rank() {
        let k = frame::key(&[12u8; 16]);
        let (to1, at1) = link(&k, 0, 1);
        let (to2, at2) = link(&k, 0, 2);
        let ranks = vec![0, 1, 2];
        let n0 = TcpNet::new(
            7,
            0,
            ranks.clone(),
            Arc::new(Mesh {
                conns: vec![None, Some(to1.clone()), Some(to2.clone())],
            }),
        );
        let n1 = TcpNet::new(
            7,
            1,
            ranks.clone(),
            Arc::new(Mesh {
                conns: vec![Some(at1), None, None],
            }),
        );
        let n2 = TcpNet::new(
            7,
            2,
            ranks,
            Arc::new(Mesh {
                conns: vec![Some(at2), None, None],
            }),
        );
        let deadline = || Some(Instant::now() + Duration::from_secs(10));
        let (mut from1, mut early, mut never) = ([0u8; 4], [0u8; 4], [0u8; 4]);
        // SAFETY: the buffers outlive the receives (waited for, or dropped first).
        let (r1, r_early, r_never) = unsafe {
            (
                n0.irecv(1, 3, from1.as_mut_ptr(), 4).unwrap(),
                n0.irecv(2, 4, early.as_mut_ptr(), 4).unwrap(),
                n0.irecv(2, 5, never.as_mut_ptr(), 4).unwrap(),
            )
        };
        // Rank 2 sends one message, then destroys the communicator (another communicator's
        // goodbye on the same connection changes nothing).
        // SAFETY: 4 bytes of a literal.
        unsafe { n2.send(0, 4, b"2222".as_ptr(), 4, None).unwrap() };
        n2.mesh.say_bye(8);
        n2.mesh.say_bye(7);
        let t0 = Instant::now();
        while !to2.said_bye(7) {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the goodbye never came"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // What rank 2 sent before its goodbye is there; what it never sent fails, naming it.
        n0.wait(&r_early, deadline()).unwrap();
        assert_eq!(&early, b"2222");
        let e = n0.wait(&r_never, deadline()).unwrap_err();
        assert_eq!(e.code, HCCL_E_REMOTE, "{}", e.msg);
        assert!(
            e.msg.contains(
                "rank 2 (host h2, 127.0.0.1, pid 102) destroyed its communicator without sending this message"
            ),
            "{}",
            e.msg
        );
        // Waiting for rank 1, which has not sent yet, is no failure: the wait runs its
        // checks (every 200 ms) until its deadline and times out, rank 2's goodbye ignored.
        let e = n0
            .wait(&r1, Some(Instant::now() + Duration::from_secs(1)))
            .unwrap_err();
        assert_eq!(e.code, HCCL_E_TIMEOUT, "{}", e.msg);
        assert!(e.msg.contains("from rank 1 (host h1"), "{}", e.msg);
        // Rank 1, slower, still gets its message through.
        // SAFETY: 4 bytes of a literal.
        unsafe { n1.send(0, 3, b"1111".as_ptr(), 4, None).unwrap() };
        n0.wait(&r1, deadline()).unwrap();
        assert_eq!(&from1, b"1111");
        // A new receive from rank 1 after the goodbye works too.
        // SAFETY: as above.
        let r = unsafe { n0.irecv(1, 6, from1.as_mut_ptr(), 4).unwrap() };
        // SAFETY: as above.
        unsafe { n1.send(0, 6, b"1112".as_ptr(), 4, None).unwrap() };
        n0.wait(&r, deadline()).unwrap();
        assert_eq!(&from1, b"1112");
        // A failure rank 2 announces still fails every wait of the communicator.
        n2.mesh.announce_failure(7, 4, "boom");
        // SAFETY: as above.
        let r = unsafe { n0.irecv(1, 7, from1.as_mut_ptr(), 4).unwrap() };
        let e = n0.wait(&r, deadline()).unwrap_err();
        assert!(
            e.msg.contains("failed (HCCL_E_INTERNAL): boom"),
            "{}",
            e.msg
        );
    }

    pub(crate) fn net(c: Arc<Conn>, rank: u32) -> TcpNet {
        let mut conns = vec![None, None];
        conns[1 - rank as usize] = Some(c);
        TcpNet::new(7, rank, vec![0, 1], Arc::new(Mesh { conns }))
    }

    /// Frames of every size back to back (small ones come in together through the
    /// read-ahead, big ones partly from it and then straight from the socket), some posted
    /// before they come and some after, arrive whole and in their receives.
    #[test]
    fn frames_of_mixed_sizes_back_to_back_arrive_whole() {
        let k = frame::key(&[5u8; 16]);
        let (a, b) = pair(&k);
        let n1 = net(a, 1);
        let n0 = net(b, 0);
        let sizes = [
            1usize,
            40,
            17_000,
            3,
            (64 << 10) + 5,
            0,
            100,
            1 << 20,
            7,
            16 << 10,
        ];
        let msg = |i: usize, len: usize| -> Vec<u8> {
            (0..len).map(|j| (i * 31 + j * 7 % 253) as u8).collect()
        };
        let mut bufs: Vec<Vec<u8>> = sizes.iter().map(|&l| vec![0u8; l]).collect();
        // The even ones posted first.
        let mut recvs = Vec::new();
        for (i, b) in bufs.iter_mut().enumerate() {
            if i % 2 == 0 {
                // SAFETY: `bufs` outlives the waits below.
                recvs.push((
                    i,
                    unsafe { n1.irecv(0, 100 + i as u64, b.as_mut_ptr(), b.len()) }.unwrap(),
                ));
            }
        }
        let c = n0.conn(1).unwrap().clone();
        let mut i = 0;
        while i < sizes.len() {
            let (x, y) = (msg(i, sizes[i]), msg(i + 1, sizes[i + 1]));
            c.send_two(7, (100 + i as u64, &x), (101 + i as u64, &y), None)
                .unwrap();
            i += 2;
        }
        std::thread::sleep(Duration::from_millis(50));
        for (i, b) in bufs.iter_mut().enumerate() {
            if i % 2 == 1 {
                // SAFETY: `bufs` outlives the waits below.
                recvs.push((
                    i,
                    unsafe { n1.irecv(0, 100 + i as u64, b.as_mut_ptr(), b.len()) }.unwrap(),
                ));
            }
        }
        for (_, r) in &recvs {
            n1.wait(r, Some(Instant::now() + Duration::from_secs(10)))
                .unwrap();
        }
        drop(recvs);
        for (i, b) in bufs.iter().enumerate() {
            assert!(*b == msg(i, sizes[i]), "message {i} of {} bytes", sizes[i]);
        }
    }

    #[test]
    fn messages_both_ways_posted_or_not() {
        let k = frame::key(&[3u8; 16]);
        let (a, b) = pair(&k);
        // a is the server side (its peer is rank 0... names only); build nets: rank 1 = a.
        let n1 = net(a, 1);
        let n0 = net(b, 0);
        let big: Vec<u8> = (0..(3 << 20)).map(|i| (i * 7 % 251) as u8).collect();
        let mut got = vec![0u8; big.len()];
        // Posted before the data arrives.
        // SAFETY: buffers outlive the waits below.
        let r = unsafe { n1.irecv(0, 5, got.as_mut_ptr(), got.len()).unwrap() };
        // SAFETY: test buffers outlive the transfers and waits that use them.
        unsafe { n0.send(1, 5, big.as_ptr(), big.len(), None).unwrap() };
        n1.wait(&r, Some(Instant::now() + Duration::from_secs(10)))
            .unwrap();
        assert!(got == big);
        // Arrives before the receive is posted.
        let small = b"hello".to_vec();
        // SAFETY: test buffers outlive the transfers and waits that use them.
        unsafe { n1.send(0, 9, small.as_ptr(), small.len(), None).unwrap() };
        std::thread::sleep(Duration::from_millis(50));
        let mut g2 = [0u8; 5];
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { n0.irecv(1, 9, g2.as_mut_ptr(), 5).unwrap() };
        n0.wait(&r, None).unwrap();
        assert_eq!(&g2, b"hello");
        // Wrong size: an error naming the peer and the sizes.
        let mut g3 = [0u8; 4];
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { n0.irecv(1, 10, g3.as_mut_ptr(), 4).unwrap() };
        // SAFETY: test buffers outlive the transfers and waits that use them.
        unsafe { n1.send(0, 10, small.as_ptr(), 5, None).unwrap() };
        let e = n0
            .wait(&r, Some(Instant::now() + Duration::from_secs(10)))
            .unwrap_err();
        assert!(
            e.msg
                .contains("message of 5 bytes for a receive of 4 bytes"),
            "{}",
            e.msg
        );
        // The connection still works after that.
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { n0.irecv(1, 11, g3.as_mut_ptr(), 4).unwrap() };
        // SAFETY: test buffers outlive the transfers and waits that use them.
        unsafe { n1.send(0, 11, small.as_ptr(), 4, None).unwrap() };
        n0.wait(&r, None).unwrap();
        // A failure notice fails the peer's waits for this communicator.
        n1.mesh.announce_failure(7, 4, "boom");
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { n0.irecv(1, 12, g3.as_mut_ptr(), 4).unwrap() };
        let e = n0
            .wait(&r, Some(Instant::now() + Duration::from_secs(10)))
            .unwrap_err();
        assert!(
            e.msg.contains("failed (HCCL_E_INTERNAL): boom"),
            "{}",
            e.msg
        );
    }

    /// Messages that come before their receive (a peer running ahead) are kept whole and
    /// in order of tags, and the buffers that held them serve later ones: the data is right
    /// whatever the buffer held before, and a wrong size still names the peer.
    #[test]
    fn early_messages_reuse_their_buffers() {
        let k = frame::key(&[9u8; 16]);
        let (a, b) = pair(&k);
        let n1 = net(a, 1);
        let n0 = net(b, 0);
        let d = || Some(Instant::now() + Duration::from_secs(10));
        for round in 0..3u32 {
            let msgs: Vec<Vec<u8>> = (0..4u32)
                .map(|m| {
                    let len = (1 << 20) + (m as usize) * 4099 - round as usize * 7;
                    (0..len)
                        .map(|i| (i as u32 * 31 + m + round) as u8)
                        .collect()
                })
                .collect();
            for (m, v) in msgs.iter().enumerate() {
                // SAFETY: the message outlives the call.
                unsafe {
                    n0.send(1, 100 + m as u64, v.as_ptr(), v.len(), d())
                        .unwrap()
                };
            }
            // Every message is in before any receive is posted.
            let t0 = Instant::now();
            while n1.conn(0).unwrap().m.lock().unexpected.len() < msgs.len() {
                assert!(
                    t0.elapsed() < Duration::from_secs(10),
                    "messages never came"
                );
                std::thread::sleep(Duration::from_millis(2));
            }
            // Posted in reverse order of arrival.
            for (m, v) in msgs.iter().enumerate().rev() {
                let mut got = vec![0xeeu8; v.len()];
                // SAFETY: `got` outlives the wait.
                let r =
                    unsafe { n1.irecv(0, 100 + m as u64, got.as_mut_ptr(), got.len()) }.unwrap();
                n1.wait(&r, d()).unwrap();
                assert!(got == *v, "round {round} message {m}");
            }
            assert!(!n1.conn(0).unwrap().spare.lock().is_empty());
        }
        // An early message of the wrong size, into a reused buffer.
        let v = vec![7u8; 1000];
        // SAFETY: `v` outlives the call.
        unsafe { n0.send(1, 200, v.as_ptr(), v.len(), d()).unwrap() };
        std::thread::sleep(Duration::from_millis(50));
        let mut got = vec![0u8; 999];
        // SAFETY: `got` outlives the wait.
        let r = unsafe { n1.irecv(0, 200, got.as_mut_ptr(), got.len()) }.unwrap();
        let e = n1.wait(&r, d()).unwrap_err();
        assert!(
            e.msg.contains(
                "rank 0 (host a, 127.0.0.1, pid 1) sent a message of 1000 bytes for a receive of 999 bytes"
            ),
            "{}",
            e.msg
        );
    }

    #[test]
    fn a_closed_peer_is_reported() {
        let k = frame::key(&[4u8; 16]);
        let (a, b) = pair(&k);
        let n0 = net(b, 0);
        let mut g = [0u8; 4];
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { n0.irecv(1, 1, g.as_mut_ptr(), 4).unwrap() };
        // The peer's process "exits": its socket closes without a goodbye.
        drop(a.sock.shutdown(Shutdown::Both));
        let e = n0
            .wait(&r, Some(Instant::now() + Duration::from_secs(10)))
            .unwrap_err();
        assert_eq!(e.code, HCCL_E_REMOTE, "{}", e.msg);
        assert!(e.msg.contains("closed the connection"), "{}", e.msg);
        assert!(
            e.msg.contains("rank 1 (host b, 127.0.0.1, pid 2)"),
            "{}",
            e.msg
        );
    }

    /// A peer that sends, says goodbye and exits before this side asks for the message
    /// (a rank that finished its last collective first): the message is still delivered,
    /// and only a receive for something it never sent fails.
    #[test]
    fn messages_that_came_before_the_peer_left_are_delivered() {
        let k = frame::key(&[6u8; 16]);
        let (a, b) = pair(&k);
        let (n1, n0) = (net(a.clone(), 1), net(b.clone(), 0));
        // SAFETY: 4 bytes of a literal.
        unsafe { n1.send(0, 9, b"last".as_ptr(), 4, None).unwrap() };
        n1.mesh.say_bye(7);
        drop(a.sock.shutdown(Shutdown::Both));
        let t0 = Instant::now();
        while b.broken().is_none() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the close never came"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let deadline = Some(Instant::now() + Duration::from_secs(10));
        let mut g = [0u8; 4];
        // SAFETY: `g` outlives the receive (waited for below).
        let r = unsafe { n0.irecv(1, 9, g.as_mut_ptr(), 4).unwrap() };
        n0.wait(&r, deadline).unwrap();
        assert_eq!(&g, b"last");
        // SAFETY: as above.
        let Err(e) = (unsafe { n0.irecv(1, 10, g.as_mut_ptr(), 4) }) else {
            panic!("a receive from a peer that left was posted");
        };
        assert_eq!(e.code, HCCL_E_REMOTE, "{}", e.msg);
        assert!(
            e.msg
                .contains("rank 1 (host b, 127.0.0.1, pid 2) destroyed its communicator"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn strangers_and_garbage() {
        let k = frame::key(&[5u8; 16]);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        // A stranger with the wrong id is refused, then the right rank gets in.
        let t = std::thread::spawn(move || {
            let wrong = frame::key(&[6u8; 16]);
            let e = connect(
                addr,
                &wrong,
                0,
                1,
                Instant::now() + Duration::from_secs(10),
                "r1",
            )
            .unwrap_err();
            assert!(e.msg.contains("refused"), "{}", e.msg);
            // Plain garbage instead of a hello.
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(&[0x55u8; 100]).unwrap();
            let mut buf = [0u8; 64];
            let _ = s.read(&mut buf);
            let s = connect(
                addr,
                &k,
                0,
                1,
                Instant::now() + Duration::from_secs(10),
                "r1",
            )
            .unwrap();
            // After the handshake: a garbage frame.
            let mut s2 = s.try_clone().unwrap();
            s2.write_all(&[0xabu8; 40]).unwrap();
            std::thread::sleep(Duration::from_millis(500));
        });
        let (s, _) = accept(
            &l,
            &k,
            &|_| Ok(()),
            Instant::now() + Duration::from_secs(20),
            "test",
        )
        .unwrap();
        let c = Conn::start(
            s,
            PeerId {
                rank: 0,
                host: "x".into(),
                addr,
                pid: 9,
            },
        )
        .unwrap();
        let n = net(c, 1);
        let mut g = [0u8; 4];
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { n.irecv(0, 1, g.as_mut_ptr(), 4).unwrap() };
        let e = n
            .wait(&r, Some(Instant::now() + Duration::from_secs(10)))
            .unwrap_err();
        assert_eq!(e.code, HCCL_E_TCP_TRANSFER, "{}", e.msg);
        assert!(e.msg.contains("rank 0 (host x"), "{}", e.msg);
        assert!(e.msg.contains("malformed frame: bad magic"), "{}", e.msg);
        t.join().unwrap();
    }

    #[test]
    fn a_truncated_frame_is_reported() {
        let k = frame::key(&[8u8; 16]);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let mut s = connect(
                addr,
                &k,
                0,
                1,
                Instant::now() + Duration::from_secs(10),
                "r1",
            )
            .unwrap();
            let h = Header::new(Kind::Data, 7, 1, 1000).encode();
            s.write_all(&h).unwrap();
            s.write_all(&[1u8; 10]).unwrap();
            // exits: the frame is cut short
        });
        let (s, _) = accept(
            &l,
            &k,
            &|_| Ok(()),
            Instant::now() + Duration::from_secs(20),
            "test",
        )
        .unwrap();
        let c = Conn::start(
            s,
            PeerId {
                rank: 0,
                host: "x".into(),
                addr,
                pid: 9,
            },
        )
        .unwrap();
        let n = net(c, 1);
        let mut g = vec![0u8; 1000];
        // The peer may be gone before the receive is posted: then posting fails.
        // SAFETY: `g` outlives the wait.
        let e = match unsafe { n.irecv(0, 1, g.as_mut_ptr(), 1000) } {
            Err(e) => e,
            Ok(r) => n
                .wait(&r, Some(Instant::now() + Duration::from_secs(10)))
                .unwrap_err(),
        };
        t.join().unwrap();
        assert!(e.msg.contains("truncated frame"), "{}", e.msg);
        assert!(e.msg.contains("got 10 of 1000 bytes"), "{}", e.msg);
    }
}
