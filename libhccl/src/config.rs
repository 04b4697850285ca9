//! `HcclCommConfig` of any version (abi.md §2.6): check the magic word, read only the
//! fields of versions ≤ the caller's `version` that lie inside the caller's `size`.

use crate::errors::{HResult, HcclError};

pub const MAGIC: u32 = 0xf0f0_f0f0;
/// The newest config version we know (`HCCL_COMM_CONFIG_VERSION` of our header).
pub const OUR_VERSION: u32 = 8;
const NOT_SET: u32 = 0xffff_ffff;

/// The settings a communicator takes from a config.
#[derive(Clone, Debug, Default)]
pub struct CommCfg {
    pub version: u32,
    pub buffer_size_mb: Option<u32>,
    pub deterministic: Option<u32>,
    pub name: Option<String>,
    pub world_rank: Option<u32>,
    pub job_id: Option<u64>,
    /// Seconds; `Some(0)` = never time out.
    pub exec_timeout: Option<u32>,
}

/// Parse the caller's config; NULL gives the defaults.
///
/// # Safety
/// `p` is NULL or points to at least `size` readable bytes as `HcclCommConfigInit` wrote.
pub unsafe fn parse(p: *const u8) -> HResult<CommCfg> {
    if p.is_null() {
        return Ok(CommCfg::default());
    }
    let rd = |off: usize, len: usize| -> Vec<u8> {
        std::slice::from_raw_parts(p.add(off), len).to_vec()
    };
    let u32_at = |off: usize| u32::from_ne_bytes(rd(off, 4).try_into().unwrap());
    let size = u64::from_ne_bytes(rd(0, 8).try_into().unwrap()) as usize;
    let magic = u32_at(8);
    let version = u32_at(12);
    if magic != MAGIC {
        return Err(HcclError::para(format!(
            "config magic word is {magic:#x}, expected {MAGIC:#x}: initialize the config with HcclCommConfigInit"
        )));
    }
    if version == 0 {
        return Err(HcclError::para(
            "config version is 0: initialize the config with HcclCommConfigInit",
        ));
    }
    if size < 24 {
        return Err(HcclError::para(format!(
            "config size is {size}, smaller than its 24-byte header"
        )));
    }
    let v = version.min(OUR_VERSION);
    let has = |field_version: u32, off: usize, len: usize| v >= field_version && off + len <= size;
    let mut c = CommCfg {
        version,
        ..Default::default()
    };
    if has(1, 24, 4) {
        let b = u32_at(24);
        if b != NOT_SET {
            if b == 0 {
                return Err(HcclError::para(
                    "config hcclBufferSize is 0; expected at least 1 (MB)",
                ));
            }
            c.buffer_size_mb = Some(b);
        }
    }
    if has(1, 28, 4) {
        let d = u32_at(28);
        if d != NOT_SET {
            if d > 2 {
                return Err(HcclError::para(format!(
                    "config hcclDeterministic is {d}; expected 0 (off), 1 (on) or 2 (strict)"
                )));
            }
            c.deterministic = Some(d);
        }
    }
    if has(2, 32, 128) {
        let raw = rd(32, 128);
        let end = raw.iter().position(|&b| b == 0).ok_or_else(|| {
            HcclError::para("config hcclCommName is not NUL-terminated within its 128 bytes")
        })?;
        if end > 0 {
            c.name = Some(String::from_utf8_lossy(&raw[..end]).into_owned());
        }
    }
    if has(6, 300, 4) {
        c.world_rank = Some(u32_at(300));
    }
    if has(6, 304, 8) {
        c.job_id = Some(u64::from_ne_bytes(rd(304, 8).try_into().unwrap()));
    }
    if has(8, 316, 4) {
        let t = u32_at(316) as i32;
        if t != -1 {
            if t < 0 {
                return Err(HcclError::para(format!(
                    "config hcclExecTimeOut is {t}; expected seconds ≥ 0 or -1 (not set)"
                )));
            }
            c.exec_timeout = Some(t as u32);
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    fn cfg(size: usize, version: u32) -> Vec<u8> {
        let mut v = vec![0u8; 2248];
        v[0..8].copy_from_slice(&(size as u64).to_ne_bytes());
        v[8..12].copy_from_slice(&MAGIC.to_ne_bytes());
        v[12..16].copy_from_slice(&version.to_ne_bytes());
        v[24..28].copy_from_slice(&NOT_SET.to_ne_bytes());
        v[28..32].copy_from_slice(&1u32.to_ne_bytes());
        v[32..36].copy_from_slice(b"abc\0");
        v[316..320].copy_from_slice(&7i32.to_ne_bytes());
        v
    }
    #[test]
    fn versions() {
        let v = cfg(300, 5);
        // SAFETY: `v` is a 2248-byte config as HcclCommConfigInit writes (every call below alike).
        let c = unsafe { parse(v.as_ptr()) }.unwrap();
        assert_eq!(c.deterministic, Some(1));
        assert_eq!(c.name.as_deref(), Some("abc"));
        assert_eq!(c.exec_timeout, None);
        let v = cfg(2104, 8);
        // SAFETY: as above.
        assert_eq!(unsafe { parse(v.as_ptr()) }.unwrap().exec_timeout, Some(7));
        let v = cfg(2104, 1);
        // SAFETY: as above.
        assert_eq!(unsafe { parse(v.as_ptr()) }.unwrap().name, None);
        let mut v = cfg(300, 5);
        v[8] = 0;
        // SAFETY: as above.
        assert!(unsafe { parse(v.as_ptr()) }
            .unwrap_err()
            .msg
            .contains("magic"));
    }
}
