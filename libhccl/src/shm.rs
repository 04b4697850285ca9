//! The communicator control block: a file `<node>/hccl-<id>` mapped by every rank
//! (processes or threads alike). All-zero is the valid initial state, so ranks may create
//! it in any order. Layout (every part cache-line aligned):
//!
//! | part | size | content |
//! |---|---|---|
//! | [`Header`] | 256 B | magic, rank count, join counter (futex word), references |
//! | [`Slot`] × n | 13 + [`FP_RING`] lines each | per rank: identity (pid, start time, device), state, failure, host-call word + fingerprint ring, stream post/done words, published buffers, reason text |
//! | arrays | n × N × 32 B | per rank, per peer of the communicator (N ranks, n of them on this server): (send count, send displ, recv count, recv displ) for the V operations |
//! | mailboxes | n × n × [`MBOX_DEPTH`] lines | point-to-point: entry `k % depth` of pair (src → dst) |
//! | inline | n × 2 × [`INLINE_BYTES`] | per rank, by sequence parity: inputs of small operations |

use crate::errors::{HResult, HcclError, HCCL_E_MEMORY, HCCL_E_SYSCALL};
use npu_emu::wait::Word;
use npu_emu_ffi::os::{self, Mapping};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

pub const MAGIC: u64 = 0x4e50_5545_4d48_4343; // "NPUEMHCC"
pub const MAX_RANKS: u32 = 1024;
/// Fingerprint entries per rank. A small collective may run ahead of its peers by fewer
/// than this many collectives ([`crate::defer`]).
pub const FP_RING: usize = 32;
pub const MBOX_DEPTH: u64 = 8;
pub const REASON_BYTES: usize = 384;

pub const STATE_EMPTY: u32 = 0;
pub const STATE_JOINED: u32 = 1;
pub const STATE_DESTROYED: u32 = 2;

#[repr(C, align(64))]
pub struct Header {
    pub magic: AtomicU64,
    pub nranks: AtomicU32,
    pub refs: AtomicU32,
    pub joined: Word,
}

/// One fingerprint: what a rank called (see [`crate::fingerprint`]). `seq` is written last.
#[repr(C, align(64))]
#[derive(Default)]
pub struct FpEntry {
    pub seq: AtomicU64,
    pub op: AtomicU32,
    pub dtype: AtomicU32,
    pub redop: AtomicU32,
    pub root: AtomicU32,
    pub count: AtomicU64,
    pub count2: AtomicU64,
    pub extra: AtomicU64,
    pub dtype2: AtomicU32,
    /// 1 when the rank staged its input at the call (written before `seq`): if every rank
    /// did, the operation completes at the rendezvous.
    pub staged: AtomicU32,
    /// An input of at most 8 bytes staged at the call (written before `seq`): it travels in
    /// the fingerprint's own cache line ([`crate::algo::small`]).
    pub data: AtomicU64,
}

#[repr(C, align(64))]
pub struct Line<T>(pub T);

#[repr(C)]
pub struct Ident {
    pub pid: AtomicU32,
    pub tid: AtomicU32,
    pub start_time: AtomicU64,
    /// The process's pid namespace (0 unknown): see [`Ident::alive`].
    pub pidns: AtomicU32,
    pub device: AtomicU32,
    pub state: AtomicU32,
    /// Sequence number + 1 of the operation that failed on this rank (0 = none).
    pub failed_seq: AtomicU64,
    pub failed_code: AtomicU32,
    /// Last point-to-point call: op, peer, pair sequence number.
    pub p2p_op: AtomicU32,
    pub p2p_peer: AtomicU32,
    pub p2p_k: AtomicU64,
}

#[repr(C)]
pub struct Call {
    /// Host call sequence number (low 32 bits) of the last collective this rank called.
    pub word: Word,
    pub op: AtomicU32,
    /// One more than the CPU this rank ran on when it last called (`sched_getcpu`; 0:
    /// unknown, as in a fresh block): a peer waiting for it on the same CPU spins only for a
    /// bounded total, then sleeps for it (`CommInner::wait_peers_with`), since spinning there
    /// keeps it from running until the next scheduler tick.
    pub cpu: AtomicU32,
}

/// A published buffer: physical device, offset, length in bytes.
#[repr(C)]
#[derive(Default)]
pub struct Buf {
    pub device: AtomicU32,
    pub valid: AtomicU32,
    pub offset: AtomicU64,
    pub len: AtomicU64,
}

/// A rank's publication for one collective: its buffers, count and operation code. Two
/// per rank, by sequence parity: a collective completed at its call returns once this
/// rank's own part is done (`algo::complete_at_call`), while peers may still read its
/// publication of that collective; its next one goes to the other record.
#[repr(C)]
pub struct Bufs {
    pub send: Buf,
    pub recv: Buf,
    pub count: AtomicU64,
    /// [`tag`] of the buffers, count, operation code, per-peer arrays, sequence number and
    /// publisher.
    pub tag: AtomicU64,
    /// The operation code (`fingerprint::opcode`).
    pub code: AtomicU32,
}

#[repr(C, align(64))]
pub struct Slot {
    pub ident: Line<Ident>,
    pub call: Line<Call>,
    pub post: Line<Word>,
    pub done: Line<Word>,
    pub exec_op: Line<AtomicU32>,
    /// Publications by sequence parity (see [`Bufs`]).
    pub bufs: [Line<Bufs>; 2],
    pub fp: [FpEntry; FP_RING],
    pub reason: [Line<[AtomicU64; 8]>; 6],
    /// The last collective (low 32 bits) through which this rank has read every peer's
    /// fingerprint entry: a rank writes its entry of collective `s` only once every peer's
    /// `read` reached `s - FP_RING` ([`crate::defer`]).
    pub read: Line<Word>,
}

/// A point-to-point mailbox entry, written by the receiver (buffer) and the sender (done).
#[repr(C, align(64))]
pub struct Mbox {
    pub posted: Word,
    pub done: Word,
    pub device: AtomicU32,
    pub dtype: AtomicU32,
    pub offset: AtomicU64,
    pub count: AtomicU64,
    /// Set by the sender on mismatch: HCCL code, and its own count/dtype for the message.
    pub status: AtomicU32,
    pub sdtype: AtomicU32,
    pub scount: AtomicU64,
    /// [`tag`] of the receive buffer the receiver posted.
    pub tag: AtomicU64,
}

const HEADER_SIZE: usize = 256;

/// Byte size of the control block for `n` ranks.
pub fn block_size(n: u32) -> usize {
    block_size_rows(n, n)
}

/// Byte size of the control block for `n` ranks of a communicator of `rows` ranks.
pub fn block_size_rows(n: u32, rows: u32) -> usize {
    let n = n as usize;
    inline_base(n, rows as usize) + n * 2 * INLINE_BYTES
}

fn inline_base(n: usize, rows: usize) -> usize {
    HEADER_SIZE + n * std::mem::size_of::<Slot>() + n * rows * 32 + n * n * MBOX_DEPTH as usize * 64
}

/// Bytes of each of a rank's two inline buffers (small operations stage their input there,
/// which saves the second barrier).
pub const INLINE_BYTES: usize = 64 * 1024;

/// A mapped control block.
pub struct Shm {
    map: Mapping,
    n: u32,
    /// Ranks of the communicator (rows of the per-peer arrays).
    rows: u32,
    pub path: PathBuf,
    pub ino: u64,
}

impl Shm {
    /// Create or open the control block at `path` for `n` ranks and map it.
    pub fn open(path: &Path, n: u32) -> HResult<Shm> {
        Self::open_flags(path, n, n, true)
    }

    /// [`Shm::open`] for the `n` ranks on this server of a communicator of `rows` ranks.
    pub fn open_rows(path: &Path, n: u32, rows: u32) -> HResult<Shm> {
        Self::open_flags(path, n, rows, true)
    }

    fn open_flags(path: &Path, n: u32, rows: u32, create: bool) -> HResult<Shm> {
        use std::os::unix::fs::OpenOptionsExt;
        use std::os::unix::io::AsRawFd;
        let sys = |what: &str, e: std::io::Error| {
            HcclError::new(HCCL_E_SYSCALL, format!("{what} {}: {e}", path.display()))
        };
        // Never through a symbolic link (nor blocking on a FIFO); the file must be ours and
        // private (the node directory was checked the same way when the runtime opened it).
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| sys("cannot create the communicator control block", e))?;
        let dir = path.parent().unwrap_or(Path::new("/"));
        npu_emu::node::check_file(file.as_raw_fd(), path, dir)
            .map_err(|e| HcclError::new(HCCL_E_SYSCALL, e.msg))?;
        let len = block_size_rows(n, rows);
        let meta = file.metadata().map_err(|e| sys("cannot stat", e))?;
        // Every page backed now: a full /dev/shm is an error here, not a SIGBUS later.
        if let Err(e) = npu_emu::node::reserve_file(&file, len as u64, path) {
            if meta.len() == 0 {
                // Ours and still empty: leave nothing behind (a peer that opened it too
                // sees the name go and starts over on a new file).
                let now = std::fs::symlink_metadata(path).map(|m| m.ino());
                if now.ok() == Some(meta.ino()) {
                    let _ = std::fs::remove_file(path);
                }
            }
            return Err(HcclError::new(HCCL_E_MEMORY, e.msg));
        }
        let map = Mapping::map(&file, len).map_err(|e| sys("cannot map", e))?;
        Ok(Shm {
            map,
            n,
            rows,
            path: path.to_path_buf(),
            ino: meta.ino(),
        })
    }

    /// Map an existing control block for `n` ranks (no creation, no resizing).
    pub fn open_existing(path: &Path, n: u32) -> HResult<Shm> {
        let len = block_size(n);
        let meta =
            std::fs::metadata(path).map_err(|e| HcclError::new(HCCL_E_SYSCALL, e.to_string()))?;
        if (meta.len() as usize) < len {
            return Err(HcclError::new(HCCL_E_SYSCALL, "control block too small"));
        }
        Shm::open_flags(path, n, n, false)
    }

    /// The inode `path` names now (None if it is gone): a change means the block was
    /// replaced (a stale block of an earlier job was removed).
    pub fn current_ino(&self) -> Option<u64> {
        std::fs::metadata(&self.path)
            .ok()
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
    }

    pub fn n(&self) -> u32 {
        self.n
    }

    pub fn header(&self) -> &Header {
        // SAFETY: the mapping is `block_size(n)` bytes, starting with the (cache-line aligned) Header, whose fields are atomics: shared references are fine while the Shm lives.
        unsafe { &*(self.map.ptr() as *const Header) }
    }

    pub fn slot(&self, r: u32) -> &Slot {
        assert!(r < self.n);
        // SAFETY: slot `r < n` lies inside the mapping (see `block_size`), aligned, all atomics.
        unsafe {
            &*(self
                .map
                .ptr()
                .add(HEADER_SIZE + r as usize * std::mem::size_of::<Slot>())
                as *const Slot)
        }
    }

    /// Rank `r`'s published arrays: 4 words per peer (send count, send displ, recv count, recv displ).
    pub fn arrays(&self, r: u32) -> &[AtomicU64] {
        let n = self.n as usize;
        let rows = self.rows as usize;
        let off = HEADER_SIZE + n * std::mem::size_of::<Slot>() + r as usize * rows * 32;
        // SAFETY: rank `r`'s rows * 4 words lie inside the mapping (see `block_size_rows`), 8-byte aligned.
        unsafe { std::slice::from_raw_parts(self.map.ptr().add(off) as *const AtomicU64, rows * 4) }
    }

    /// Mailbox entry for the `k`-th message from `src` to `dst`.
    pub fn mbox(&self, src: u32, dst: u32, k: u64) -> &Mbox {
        let n = self.n as usize;
        let base = HEADER_SIZE + n * std::mem::size_of::<Slot>() + n * self.rows as usize * 32;
        let pair = dst as usize * n + src as usize;
        let off = base + (pair * MBOX_DEPTH as usize + (k % MBOX_DEPTH) as usize) * 64;
        // SAFETY: entry `k % MBOX_DEPTH` of pair (src, dst) lies inside the mapping (see `block_size`), 64-byte aligned, all atomics.
        unsafe { &*(self.map.ptr().add(off) as *const Mbox) }
    }

    /// Rank `r`'s inline buffer for operations with sequence number parity `parity`.
    pub fn inline(&self, r: u32, parity: u64) -> *mut u8 {
        assert!(r < self.n);
        let off = inline_base(self.n as usize, self.rows as usize)
            + (r as usize * 2 + (parity % 2) as usize) * INLINE_BYTES;
        // SAFETY: rank `r`'s two inline buffers lie inside the mapping (see `block_size_rows`).
        unsafe { self.map.ptr().add(off) }
    }

    /// Unlink the file if it is still the one we mapped.
    pub fn unlink(&self) {
        if self.current_ino() == Some(self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Slot {
    /// Store a failure reason (truncated to [`REASON_BYTES`]).
    pub fn set_reason(&self, s: &str) {
        let b = s.as_bytes();
        let mut buf = [0u8; REASON_BYTES];
        let l = b.len().min(REASON_BYTES - 1);
        buf[..l].copy_from_slice(&b[..l]);
        for (i, w) in buf.chunks(8).enumerate() {
            let v = u64::from_le_bytes(w.try_into().unwrap());
            self.reason[i / 8].0[i % 8].store(v, Ordering::Relaxed);
        }
    }
    pub fn reason(&self) -> String {
        let mut buf = Vec::with_capacity(REASON_BYTES);
        for i in 0..REASON_BYTES / 8 {
            buf.extend_from_slice(
                &self.reason[i / 8].0[i % 8]
                    .load(Ordering::Relaxed)
                    .to_le_bytes(),
            );
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }
}

/// SHA-256 of `parts`, each prefixed with its length (so no two lists collide).
pub fn digest(parts: &[&[u8]]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

/// File name of the control block of communicator `id` in the node directory. A one-way
/// function of the id: the id is the secret a root info carries, and a directory listing
/// must not give it away (whoever knows it can make a root info and join).
pub fn block_name(id: &[u8; 16]) -> String {
    let d = digest(&[b"npu-emu hccl control block", id]);
    let hex: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("hccl-{hex}")
}

/// The key a communicator's ranks tag what they publish with (see [`tag`]). Derived from
/// the id, which only the ranks know; never stored in the control block.
pub fn tag_key(id: &[u8; 16]) -> [u8; 32] {
    digest(&[b"npu-emu hccl publication key", id])
}

/// Tag of a published record (`words`): peers recompute it before they trust an offset in
/// the control block, so a damaged or forged record is an error, not a write into somebody
/// else's memory. Never 0 (0 means "nothing published").
pub fn tag(key: &[u8; 32], words: &[u64]) -> u64 {
    tag_of(key, words.iter().copied())
}

/// [`tag`] of the words `words` yields (no buffer to gather them in): SipHash-2-4 keyed
/// with the first 128 bits of `key`. SipHash is a PRF made for short inputs (MACs of
/// hash-table keys); every rank computes a tag per peer per operation on the critical path,
/// where three SHA-256 blocks per tag cost ~10% of the CPU of a 64 KiB AllReduce at 8 ranks
/// on 2 cores. A forgery still has to guess a 64-bit tag under a 128-bit key.
pub fn tag_of(key: &[u8; 32], words: impl Iterator<Item = u64>) -> u64 {
    use std::hash::Hasher;
    let mut k = [0u8; 16];
    k.copy_from_slice(&key[..16]);
    let mut h = siphasher::sip::SipHasher24::new_with_key(&k);
    for w in words {
        h.write_u64(w);
    }
    h.finish().max(1)
}

/// The rank count in the header of the control block at `path`, if it has one.
pub fn peek_nranks(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut b = [0u8; 12];
    f.read_exact(&mut b).ok()?;
    let magic = u64::from_ne_bytes(b[0..8].try_into().unwrap());
    let n = u32::from_ne_bytes(b[8..12].try_into().unwrap());
    (magic == MAGIC && (1..=MAX_RANKS).contains(&n)).then_some(n)
}

impl Ident {
    /// Record the calling process as this rank's process.
    pub fn set_process(&self) {
        let pid = std::process::id();
        self.pid.store(pid, Ordering::Relaxed);
        self.start_time
            .store(os::process_start_time(pid).unwrap_or(0), Ordering::Relaxed);
        self.pidns.store(os::pid_namespace(), Ordering::Relaxed);
    }

    /// Whether this rank's process still runs (see [`os::process_alive`]: a process in
    /// another pid namespace is taken for alive; a gone, zombie or reused pid is dead).
    pub fn alive(&self) -> bool {
        os::process_alive(
            self.pid.load(Ordering::Relaxed),
            self.start_time.load(Ordering::Relaxed),
            self.pidns.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_and_tags_give_nothing_away() {
        let id = [7u8; 16];
        let name = block_name(&id);
        assert_eq!(name.len(), 5 + 32);
        assert!(!name.contains(&crate::rootinfo::hex(&id)));
        assert_ne!(block_name(&id), block_name(&[8u8; 16]));
        let key = tag_key(&id);
        assert_ne!(&key[..16], &id[..]);
        let t = tag(&key, &[1, 2, 3]);
        assert_ne!(t, 0);
        assert_eq!(t, tag(&key, &[1, 2, 3]));
        assert_ne!(t, tag(&key, &[1, 2, 4]));
        assert_ne!(t, tag(&tag_key(&[8u8; 16]), &[1, 2, 3]));
    }

    #[test]
    fn layout() {
        assert_eq!(std::mem::size_of::<Slot>(), (16 + FP_RING) * 64);
        assert_eq!(std::mem::size_of::<FpEntry>(), 64);
        assert_eq!(std::mem::size_of::<Mbox>(), 64);
        assert_eq!(std::mem::size_of::<Line<Bufs>>(), 128);
        assert!(std::mem::size_of::<Header>() <= HEADER_SIZE);
        // SAFETY: Ident is all atomics: all-zero is a valid value.
        let id: Ident = unsafe { std::mem::zeroed() };
        assert!(!id.alive());
        id.set_process();
        assert!(id.alive());
        id.pid.store(
            std::process::id().wrapping_add(4_000_000),
            Ordering::Relaxed,
        );
        assert!(!id.alive());
    }
}
