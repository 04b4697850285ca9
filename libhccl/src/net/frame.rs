//! The wire format between ranks on different servers (the emulated RoCE path).
//!
//! A connection starts with a handshake that proves both ends know the communicator's
//! secret id without sending it ([`Challenge`], [`Hello`], [`Welcome`]: SHA-256 over the key
//! derived from the id and both sides' nonces). A connection that does not present it is
//! dropped before anything else is read.
//!
//! After the handshake, everything is a frame: a 40-byte [`Header`] then `len` payload bytes.
//!
//! | offset | field | |
//! |---|---|---|
//! | 0 | `u32` magic | `HFR1` |
//! | 4 | `u8` kind | [`Kind`] |
//! | 5 | 3 bytes | zero |
//! | 8 | `u64` comm | which communicator (a hash of its id; one connection serves a communicator and its sub-communicators) |
//! | 16 | `u64` tag | what the payload is for ([`super::Tag`]) |
//! | 24 | `u64` len | payload bytes |
//! | 32 | `u64` check | FNV-1a of bytes 0..32: a garbled header is caught before its length is believed |
//!
//! All integers are little-endian. Every decoding error says what was wrong, and the
//! connection that carried it names the peer.

use sha2::{Digest, Sha256};

pub const MAGIC: u32 = u32::from_le_bytes(*b"HFR1");
pub const HEADER_BYTES: usize = 40;
/// Largest payload of a frame that is not [`Kind::Data`] (records, rosters, reasons).
pub const MAX_CONTROL: u64 = 16 << 20;
/// Largest data payload (one message of one operation).
pub const MAX_DATA: u64 = 1 << 40;

/// What a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bytes of an operation, matched by (comm, tag) with a posted receive.
    Data = 1,
    /// Nothing: the sender is alive.
    Heartbeat = 2,
    /// The sender's rank failed an operation of `comm`: `u32` HCCL code, then the reason.
    Fail = 3,
    /// The sender destroyed communicator `comm`.
    Bye = 4,
    /// Bootstrap: a rank joins (`tag` = rank, payload = `u32` rank count + its record).
    Join = 5,
    /// Bootstrap: every rank's record, in rank order.
    Roster = 6,
    /// Bootstrap: the join was refused; the payload says why.
    Refused = 7,
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Data,
            2 => Kind::Heartbeat,
            3 => Kind::Fail,
            4 => Kind::Bye,
            5 => Kind::Join,
            6 => Kind::Roster,
            7 => Kind::Refused,
            _ => return None,
        })
    }
}

/// A frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub comm: u64,
    pub tag: u64,
    pub len: u64,
}

fn fnv(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

impl Header {
    pub fn new(kind: Kind, comm: u64, tag: u64, len: u64) -> Header {
        Header {
            kind,
            comm,
            tag,
            len,
        }
    }

    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4] = self.kind as u8;
        b[8..16].copy_from_slice(&self.comm.to_le_bytes());
        b[16..24].copy_from_slice(&self.tag.to_le_bytes());
        b[24..32].copy_from_slice(&self.len.to_le_bytes());
        let c = fnv(&b[0..32]);
        b[32..40].copy_from_slice(&c.to_le_bytes());
        b
    }

    /// Decode and check a header; the error says what is wrong with it.
    pub fn decode(b: &[u8; HEADER_BYTES]) -> Result<Header, String> {
        let u64_at = |o: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(w)
        };
        let magic = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if magic != MAGIC {
            return Err(format!(
                "malformed frame: bad magic {magic:#010x} (expected {MAGIC:#010x}); the bytes were {}",
                preview(b)
            ));
        }
        if u64_at(32) != fnv(&b[0..32]) {
            return Err(format!(
                "malformed frame: header checksum mismatch; the bytes were {}",
                preview(b)
            ));
        }
        let kind =
            Kind::from_u8(b[4]).ok_or_else(|| format!("malformed frame: unknown kind {}", b[4]))?;
        if b[5..8] != [0, 0, 0] {
            return Err("malformed frame: reserved header bytes are not zero".to_string());
        }
        let len = u64_at(24);
        let limit = match kind {
            Kind::Data => MAX_DATA,
            Kind::Heartbeat | Kind::Bye => 0,
            _ => MAX_CONTROL,
        };
        if len > limit {
            return Err(format!(
                "malformed frame: a {kind:?} frame of {len} bytes (at most {limit})"
            ));
        }
        Ok(Header {
            kind,
            comm: u64_at(8),
            tag: u64_at(16),
            len,
        })
    }
}

/// The first bytes of something received, in hex, for messages.
pub fn preview(b: &[u8]) -> String {
    let mut s: String = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
    if b.len() > 16 {
        s.push('…');
    }
    s
}

/// The key both ends of a connection prove they hold: derived from the communicator's
/// secret id (never sent).
pub fn key(id: &[u8; 16]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"npu-emu hccl network key v1");
    h.update(id);
    h.finalize().into()
}

/// The short communicator discriminator carried in every frame.
pub fn comm_tag(id: &[u8; 16]) -> u64 {
    let mut h = Sha256::new();
    h.update(b"npu-emu hccl comm tag v1");
    h.update(id);
    let d: [u8; 32] = h.finalize().into();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

fn mac(key: &[u8; 32], what: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(key);
    h.update(what);
    for p in parts {
        h.update((p.len() as u32).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

pub const HANDSHAKE_MAGIC: [u8; 8] = *b"NPUHCCL1";

/// Server → client, first thing on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub nonce: [u8; 16],
}

impl Challenge {
    pub const BYTES: usize = 24;
    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0..8].copy_from_slice(&HANDSHAKE_MAGIC);
        b[8..24].copy_from_slice(&self.nonce);
        b
    }
    pub fn decode(b: &[u8; Self::BYTES]) -> Result<Challenge, String> {
        if b[0..8] != HANDSHAKE_MAGIC {
            return Err(format!(
                "it is not an npu-emu HCCL endpoint (it sent {})",
                preview(b)
            ));
        }
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&b[8..24]);
        Ok(Challenge { nonce })
    }
}

/// Client → server: who it is and whom it wants, with the proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    pub nonce: [u8; 16],
    pub from: u32,
    pub to: u32,
    pub mac: [u8; 32],
}

/// `to` of a connection to a bootstrap root.
pub const TO_ROOT: u32 = u32::MAX;

impl Hello {
    pub const BYTES: usize = 64;

    pub fn new(
        key: &[u8; 32],
        challenge: &Challenge,
        nonce: [u8; 16],
        from: u32,
        to: u32,
    ) -> Hello {
        let m = mac(
            key,
            b"hello",
            &[
                &challenge.nonce,
                &nonce,
                &from.to_le_bytes(),
                &to.to_le_bytes(),
            ],
        );
        Hello {
            nonce,
            from,
            to,
            mac: m,
        }
    }

    /// Whether the proof is right for `key` and the server's `challenge`.
    pub fn verify(&self, key: &[u8; 32], challenge: &Challenge) -> bool {
        let want = mac(
            key,
            b"hello",
            &[
                &challenge.nonce,
                &self.nonce,
                &self.from.to_le_bytes(),
                &self.to.to_le_bytes(),
            ],
        );
        // Not secret-dependent timing that matters here, but compare all bytes anyway.
        want.iter()
            .zip(self.mac.iter())
            .fold(0u8, |a, (x, y)| a | (x ^ y))
            == 0
    }

    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0..8].copy_from_slice(&HANDSHAKE_MAGIC);
        b[8..24].copy_from_slice(&self.nonce);
        b[24..28].copy_from_slice(&self.from.to_le_bytes());
        b[28..32].copy_from_slice(&self.to.to_le_bytes());
        b[32..64].copy_from_slice(&self.mac);
        b
    }

    pub fn decode(b: &[u8; Self::BYTES]) -> Result<Hello, String> {
        if b[0..8] != HANDSHAKE_MAGIC {
            return Err(format!(
                "it did not open with an npu-emu HCCL hello (it sent {})",
                preview(b)
            ));
        }
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&b[8..24]);
        let mut m = [0u8; 32];
        m.copy_from_slice(&b[32..64]);
        Ok(Hello {
            nonce,
            from: u32::from_le_bytes([b[24], b[25], b[26], b[27]]),
            to: u32::from_le_bytes([b[28], b[29], b[30], b[31]]),
            mac: m,
        })
    }
}

/// Server → client: the server's proof (so a client never talks to an impostor).
pub fn welcome(key: &[u8; 32], challenge: &Challenge, hello: &Hello) -> [u8; 32] {
    mac(
        key,
        b"welcome",
        &[
            &hello.nonce,
            &challenge.nonce,
            &hello.to.to_le_bytes(),
            &hello.from.to_le_bytes(),
        ],
    )
}

/// 16 random bytes (getrandom).
pub fn nonce() -> [u8; 16] {
    let mut b = [0u8; 16];
    let mut got = 0;
    while got < b.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `b`.
        let r = unsafe {
            libc::getrandom(b[got..].as_mut_ptr() as *mut libc::c_void, b.len() - got, 0)
        };
        if r > 0 {
            got += r as usize;
        } else if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // No randomness at all (ancient kernel): the time and pid still differ per call.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let x = t ^ ((std::process::id() as u128) << 64);
            return x.to_le_bytes();
        }
    }
    b
}

/// Little-endian record writer/reader for payloads (records, rosters, reasons).
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
        self
    }
    pub fn str(&mut self, v: &str) -> &mut Self {
        self.bytes(v.as_bytes())
    }
}

/// Reads what [`Writer`] wrote; every read past the end is an error naming the field.
pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0 }
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.b.len() - self.at < n {
            return Err(format!(
                "truncated record: {what} needs {n} bytes at offset {} of {}",
                self.at,
                self.b.len()
            ));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    pub fn u64(&mut self, what: &str) -> Result<u64, String> {
        let s = self.take(8, what)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        Ok(u64::from_le_bytes(w))
    }
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], String> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
    pub fn str(&mut self, what: &str) -> Result<String, String> {
        let b = self.bytes(what)?;
        String::from_utf8(b.to_vec()).map_err(|_| format!("{what} is not UTF-8"))
    }
    pub fn done(&self) -> Result<(), String> {
        if self.at != self.b.len() {
            return Err(format!(
                "record has {} bytes after its end",
                self.b.len() - self.at
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_checks() {
        let h = Header::new(Kind::Data, 7, 9, 1234);
        let b = h.encode();
        assert_eq!(Header::decode(&b).unwrap(), h);
        let mut bad = b;
        bad[0] ^= 1;
        assert!(Header::decode(&bad).unwrap_err().contains("bad magic"));
        let mut bad = b;
        bad[20] ^= 1;
        assert!(Header::decode(&bad).unwrap_err().contains("checksum"));
        // A control frame claiming an absurd size is refused before anything is allocated.
        let mut h2 = Header::new(Kind::Fail, 1, 1, MAX_CONTROL + 1).encode();
        assert!(Header::decode(&h2).unwrap_err().contains("at most"));
        h2 = Header::new(Kind::Heartbeat, 0, 0, 1).encode();
        assert!(Header::decode(&h2).is_err());
        // Random garbage is malformed, whatever it is.
        let mut x: u64 = 0x1234_5678_9abc_def0;
        for _ in 0..1000 {
            let mut g = [0u8; HEADER_BYTES];
            for v in g.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = x as u8;
            }
            assert!(Header::decode(&g).is_err());
        }
    }

    #[test]
    fn handshake_proofs() {
        let k = key(&[1u8; 16]);
        let other = key(&[2u8; 16]);
        let ch = Challenge { nonce: nonce() };
        assert_eq!(Challenge::decode(&ch.encode()).unwrap(), ch);
        let h = Hello::new(&k, &ch, nonce(), 3, 5);
        let h2 = Hello::decode(&h.encode()).unwrap();
        assert_eq!(h, h2);
        assert!(h2.verify(&k, &ch));
        assert!(!h2.verify(&other, &ch));
        let ch2 = Challenge { nonce: nonce() };
        assert!(
            !h2.verify(&k, &ch2),
            "a replayed hello fails a new challenge"
        );
        let mut forged = h2;
        forged.from = 4;
        assert!(!forged.verify(&k, &ch));
        assert_ne!(welcome(&k, &ch, &h), welcome(&other, &ch, &h));
        assert!(Hello::decode(&[0u8; 64]).is_err());
        assert!(Challenge::decode(&[b'x'; 24]).is_err());
        assert_ne!(comm_tag(&[1u8; 16]), comm_tag(&[2u8; 16]));
    }

    #[test]
    fn records() {
        let mut w = Writer::default();
        w.u32(5).u64(6).str("host");
        let mut r = Reader::new(&w.0);
        assert_eq!(r.u32("a").unwrap(), 5);
        assert_eq!(r.u64("b").unwrap(), 6);
        assert_eq!(r.str("c").unwrap(), "host");
        r.done().unwrap();
        let mut r = Reader::new(&w.0[..10]);
        r.u32("a").unwrap();
        assert!(r.u64("b").unwrap_err().contains("truncated record: b"));
    }
}
