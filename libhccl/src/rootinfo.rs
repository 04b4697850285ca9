//! The 4108-byte `HcclRootInfo`. Applications copy it between processes and hosts (MPI, a
//! file, a pipe), so it is self-contained: magic, a random 128-bit communicator id
//! (unguessable: a rank proves it holds it before the root talks to it), the root's TCP
//! endpoint (chosen by `HCCL_IF_IP` / `HCCL_SOCKET_IFNAME` / `HCCL_IF_BASE_PORT`, as CANN's
//! root info carries its root's address and port), the creator's pid, host name and node
//! directory.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 16 | magic `NPUEMU-HCCLROOT\0` |
//! | 16 | 4 | version (2) |
//! | 20 | 16 | communicator id |
//! | 36 | 4 | creator pid |
//! | 40 | 2 | root port |
//! | 42 | 1 | root address family (4 or 6) |
//! | 48 | 64 | host name (NUL-padded) |
//! | 112 | 16 | root address (IPv4 in the first 4 bytes) |
//! | 128 | 4 | node directory length, then the path |

use crate::errors::{HResult, HcclError, HCCL_E_SYSCALL};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub const ROOT_INFO_BYTES: usize = 4108;
const MAGIC: &[u8; 16] = b"NPUEMU-HCCLROOT\0";
const VERSION: u32 = 2;
const NODE_OFF: usize = 132;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootInfo {
    pub id: [u8; 16],
    pub creator_pid: u32,
    pub host: String,
    pub node_dir: String,
    /// Where the root listens for the ranks.
    pub root: SocketAddr,
}

pub fn random_id() -> HResult<[u8; 16]> {
    let mut id = [0u8; 16];
    let mut got = 0;
    while got < 16 {
        let r =
            // SAFETY: the pointer and length describe the unfilled tail of `id`.
            unsafe { libc::getrandom(id[got..].as_mut_ptr() as *mut libc::c_void, 16 - got, 0) };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(HcclError::new(
                HCCL_E_SYSCALL,
                format!("getrandom failed: {}", std::io::Error::last_os_error()),
            ));
        }
        got += r as usize;
    }
    Ok(id)
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`.
    if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl RootInfo {
    pub fn encode(&self) -> HResult<[u8; ROOT_INFO_BYTES]> {
        let mut b = [0u8; ROOT_INFO_BYTES];
        b[0..16].copy_from_slice(MAGIC);
        b[16..20].copy_from_slice(&VERSION.to_le_bytes());
        b[20..36].copy_from_slice(&self.id);
        b[36..40].copy_from_slice(&self.creator_pid.to_le_bytes());
        b[40..42].copy_from_slice(&self.root.port().to_le_bytes());
        match self.root.ip() {
            IpAddr::V4(a) => {
                b[42] = 4;
                b[112..116].copy_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                b[42] = 6;
                b[112..128].copy_from_slice(&a.octets());
            }
        }
        let h = self.host.as_bytes();
        let hl = h.len().min(63);
        b[48..48 + hl].copy_from_slice(&h[..hl]);
        let n = self.node_dir.as_bytes();
        if n.len() + 4 > ROOT_INFO_BYTES - NODE_OFF {
            return Err(HcclError::para(format!(
                "node directory path is too long ({} bytes)",
                n.len()
            )));
        }
        b[128..132].copy_from_slice(&(n.len() as u32).to_le_bytes());
        b[NODE_OFF..NODE_OFF + n.len()].copy_from_slice(n);
        Ok(b)
    }

    pub fn decode(b: &[u8]) -> HResult<RootInfo> {
        if b.len() < ROOT_INFO_BYTES || &b[0..16] != MAGIC {
            return Err(HcclError::para(
                "rootInfo was not filled by HcclGetRootInfo of npu-emu (bad magic); copy all 4108 bytes from the root rank",
            ));
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let ver = u32_at(16);
        if ver != VERSION {
            return Err(HcclError::para(format!(
                "rootInfo version {ver} is not supported (expected {VERSION}): it was made by another npu-emu version"
            )));
        }
        let mut id = [0u8; 16];
        id.copy_from_slice(&b[20..36]);
        let creator_pid = u32_at(36);
        let port = u16::from_le_bytes([b[40], b[41]]);
        let ip = match b[42] {
            4 => IpAddr::V4(Ipv4Addr::new(b[112], b[113], b[114], b[115])),
            6 => {
                let mut o = [0u8; 16];
                o.copy_from_slice(&b[112..128]);
                IpAddr::V6(Ipv6Addr::from(o))
            }
            f => {
                return Err(HcclError::para(format!(
                    "rootInfo is corrupt (address family {f})"
                )))
            }
        };
        if port == 0 {
            return Err(HcclError::para("rootInfo is corrupt (root port 0)"));
        }
        let hend = b[48..112].iter().position(|&x| x == 0).unwrap_or(64);
        let host = String::from_utf8_lossy(&b[48..48 + hend]).into_owned();
        let nl = u32_at(128) as usize;
        if nl > ROOT_INFO_BYTES - NODE_OFF {
            return Err(HcclError::para("rootInfo is corrupt (node path length)"));
        }
        let node_dir = String::from_utf8_lossy(&b[NODE_OFF..NODE_OFF + nl]).into_owned();
        Ok(RootInfo {
            id,
            creator_pid,
            host,
            node_dir,
            root: SocketAddr::new(ip, port),
        })
    }
}

pub fn hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trip() {
        for root in ["10.1.2.3:60001", "[fd00::7]:60002"] {
            let r = RootInfo {
                id: random_id().unwrap(),
                creator_pid: 7,
                host: hostname(),
                node_dir: "/dev/shm/x".into(),
                root: root.parse().unwrap(),
            };
            let b = r.encode().unwrap();
            assert_eq!(RootInfo::decode(&b).unwrap(), r);
        }
        assert_ne!(random_id().unwrap(), random_id().unwrap());
        let r = RootInfo {
            id: [1; 16],
            creator_pid: 7,
            host: "h".into(),
            node_dir: "/n".into(),
            root: "10.0.0.1:60000".parse().unwrap(),
        };
        let b = r.encode().unwrap();
        let mut bad = b;
        bad[0] = 0;
        assert!(RootInfo::decode(&bad).is_err());
        let mut bad = b;
        bad[16] = 1;
        assert!(RootInfo::decode(&bad)
            .unwrap_err()
            .msg
            .contains("version 1"));
        let mut bad = b;
        bad[42] = 9;
        assert!(RootInfo::decode(&bad).unwrap_err().msg.contains("corrupt"));
    }
}
