//! The 4108-byte `HcclRootInfo`. Applications copy it between processes (MPI, a file, a
//! pipe), so it is self-contained: magic, a random 128-bit communicator id (unguessable, so
//! no other job can join), the node directory, the creator's pid and host name.

use crate::errors::{HResult, HcclError, HCCL_E_NOT_SUPPORT, HCCL_E_SYSCALL};

pub const ROOT_INFO_BYTES: usize = 4108;
const MAGIC: &[u8; 16] = b"NPUEMU-HCCLROOT\0";
const VERSION: u32 = 1;
const NODE_OFF: usize = 116;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootInfo {
    pub id: [u8; 16],
    pub creator_pid: u32,
    pub host: String,
    pub node_dir: String,
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
        b[112..116].copy_from_slice(&(n.len() as u32).to_le_bytes());
        b[NODE_OFF..NODE_OFF + n.len()].copy_from_slice(n);
        Ok(b)
    }

    pub fn decode(b: &[u8]) -> HResult<RootInfo> {
        if &b[0..16] != MAGIC {
            return Err(HcclError::para(
                "rootInfo was not filled by HcclGetRootInfo of npu-emu (bad magic); copy all 4108 bytes from the root rank",
            ));
        }
        let ver = u32::from_le_bytes(b[16..20].try_into().unwrap());
        if ver != VERSION {
            return Err(HcclError::para(format!(
                "rootInfo version {ver} is not supported (expected {VERSION})"
            )));
        }
        let mut id = [0u8; 16];
        id.copy_from_slice(&b[20..36]);
        let creator_pid = u32::from_le_bytes(b[36..40].try_into().unwrap());
        let hend = b[48..112].iter().position(|&x| x == 0).unwrap_or(64);
        let host = String::from_utf8_lossy(&b[48..48 + hend]).into_owned();
        let nl = u32::from_le_bytes(b[112..116].try_into().unwrap()) as usize;
        if nl > ROOT_INFO_BYTES - NODE_OFF {
            return Err(HcclError::para("rootInfo is corrupt (node path length)"));
        }
        let node_dir = String::from_utf8_lossy(&b[NODE_OFF..NODE_OFF + nl]).into_owned();
        Ok(RootInfo {
            id,
            creator_pid,
            host,
            node_dir,
        })
    }

    /// Check this process can join: same host and node.
    pub fn check_local(&self, node_dir: &str) -> HResult<()> {
        let me = hostname();
        if !self.host.is_empty() && self.host != me {
            return Err(HcclError::new(
                HCCL_E_NOT_SUPPORT,
                format!(
                    "rootInfo comes from host {:?} but this is host {me:?}; ranks on other hosts are not supported yet",
                    self.host
                ),
            ));
        }
        if self.node_dir != node_dir {
            return Err(HcclError::para(format!(
                "rootInfo was created on node {:?} (NPU_EMU_NODE_DIR) but this process uses node {node_dir:?}; all ranks must use the same node",
                self.node_dir
            )));
        }
        Ok(())
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
        let r = RootInfo {
            id: random_id().unwrap(),
            creator_pid: 7,
            host: hostname(),
            node_dir: "/dev/shm/x".into(),
        };
        let b = r.encode().unwrap();
        assert_eq!(RootInfo::decode(&b).unwrap(), r);
        assert_ne!(random_id().unwrap(), random_id().unwrap());
        let mut bad = b;
        bad[0] = 0;
        assert!(RootInfo::decode(&bad).is_err());
    }
}
