//! Configuration: the one place that reads environment variables.
//!
//! | Variable | Meaning | Default |
//! |---|---|---|
//! | `NPU_EMU_DEVICES` | devices on the emulated node (1..=64) | 8 |
//! | `NPU_EMU_HBM_SIZE` | HBM per device; bytes, or with a `K`/`M`/`G` suffix (≥ 64M) | `64G` |
//! | `NPU_EMU_SOC` | SoC name reported by `aclrtGetSocName` | `Ascend910B1` |
//! | `NPU_EMU_NODE_DIR` | shared-memory directory of the node | `/dev/shm/npu-emu-<uid>` |
//! | `NPU_EMU_HOST_ACCESS_CHECK` | `1`: host dereference of a device pointer stops the process with a message; `0`: off | 1 |
//! | `ASCEND_RT_VISIBLE_DEVICES` | visible devices, CANN's parsing rules (stops at the first bad token) | all |
//! | `ASCEND_GLOBAL_LOG_LEVEL` | 0 debug, 1 info, 2 warning, 3 error, 4 off | 3 |
//! | `ASCEND_MODULE_LOG_LEVEL` | per-module levels overriding the global one, `HCCL=4:ASCENDCL=1`; any error ignores the whole setting ([`crate::log::parse_module_levels`]) | unset |
//! | `ASCEND_SLOG_PRINT_TO_STDOUT`, `ASCEND_LOG_PRINT_TO_STDOUT` | `1`: log lines go to stdout instead of stderr | 0 |
//! | `HCCL_CONNECT_TIMEOUT` | seconds a communicator init waits for its peers (values below CANN's 120 are accepted, so CI can fail fast) | 120 |
//! | `HCCL_EXEC_TIMEOUT` | seconds an operation waits for its peers; 0 = never | 1836 |
//! | `HCCL_ENTRY_LOG_ENABLE` | `1`: log every HCCL call with its arguments and duration | 0 |
//! | `HCCL_BUFFSIZE` | accepted and validated (MB, ≥ 1); the emulator needs no staging buffer | 200 |
//!
//! Unlike CANN, the log goes to the terminal rather than to `$HOME/ascend/log`: errors are
//! printed to stderr by default, because a CI user needs to see them.

use crate::codes::ACL_ERROR_INVALID_PARAM;
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Log levels, numbered as `ASCEND_GLOBAL_LOG_LEVEL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug = 0,
    Info = 1,
    Warning = 2,
    Error = 3,
    Off = 4,
}

/// Every setting of the machine, read once from the environment.
#[derive(Clone, Debug)]
pub struct Config {
    pub devices: u32,
    pub hbm_size: u64,
    pub soc_name: String,
    pub node_dir: PathBuf,
    pub host_access_check: bool,
    /// Physical device ids visible to this process, in logical order.
    pub visible_devices: Vec<u32>,
    pub log_level: LogLevel,
    /// `ASCEND_MODULE_LOG_LEVEL` (empty if unset or invalid).
    pub module_log_levels: crate::log::ModuleLevels,
    pub log_to_stdout: bool,
    pub connect_timeout: Duration,
    /// `None` = never time out.
    pub exec_timeout: Option<Duration>,
    pub entry_log: bool,
    pub buffsize_mb: u32,
}

/// The smallest HBM size accepted.
pub const MIN_HBM_SIZE: u64 = 64 << 20;
/// The largest HBM size accepted (the per-device stride of the address space).
pub const MAX_HBM_SIZE: u64 = 1 << 40;

impl Config {
    /// Read the configuration from the process environment.
    pub fn from_env() -> Result<Config> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Read the configuration through `get` (tests pass a map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let bad = |var: &str, val: &str, want: &str| {
            Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!("environment variable {var}={val:?} is invalid: expected {want}"),
            )
        };
        let devices = match get("NPU_EMU_DEVICES") {
            None => 8,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if (1..=64).contains(&n) => n,
                _ => return Err(bad("NPU_EMU_DEVICES", &v, "an integer from 1 to 64")),
            },
        };
        let hbm_size = match get("NPU_EMU_HBM_SIZE") {
            None => 64 << 30,
            Some(v) => match parse_size(&v) {
                Some(n) if (MIN_HBM_SIZE..=MAX_HBM_SIZE).contains(&n) => n,
                _ => {
                    return Err(bad(
                        "NPU_EMU_HBM_SIZE",
                        &v,
                        "a size from 64M to 1024G, such as 16G or 1073741824",
                    ))
                }
            },
        };
        let soc_name = get("NPU_EMU_SOC")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "Ascend910B1".to_string());
        let node_dir = match get("NPU_EMU_NODE_DIR").filter(|s| !s.is_empty()) {
            Some(d) => PathBuf::from(d),
            // SAFETY: getuid has no arguments and cannot fail.
            None => PathBuf::from(format!("/dev/shm/npu-emu-{}", unsafe { libc::getuid() })),
        };
        let host_access_check = match get("NPU_EMU_HOST_ACCESS_CHECK").as_deref() {
            None | Some("1") | Some("") => true,
            Some("0") => false,
            Some(v) => return Err(bad("NPU_EMU_HOST_ACCESS_CHECK", v, "0 or 1")),
        };
        let visible_devices = match get("ASCEND_RT_VISIBLE_DEVICES") {
            None => (0..devices).collect(),
            Some(v) => parse_visible_devices(&v, devices),
        };
        // CANN: an invalid or empty level falls back to the default.
        let log_level = match get("ASCEND_GLOBAL_LOG_LEVEL").as_deref().map(str::trim) {
            Some("0") => LogLevel::Debug,
            Some("1") => LogLevel::Info,
            Some("2") => LogLevel::Warning,
            Some("4") => LogLevel::Off,
            _ => LogLevel::Error,
        };
        let module_log_levels = get("ASCEND_MODULE_LOG_LEVEL")
            .and_then(|v| crate::log::parse_module_levels(&v))
            .unwrap_or_default();
        let log_to_stdout = match get("ASCEND_LOG_PRINT_TO_STDOUT") {
            Some(v) => v.trim() == "1",
            None => get("ASCEND_SLOG_PRINT_TO_STDOUT").is_some_and(|v| v.trim() == "1"),
        };
        let connect_timeout = match get("HCCL_CONNECT_TIMEOUT") {
            None => Duration::from_secs(120),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if (1..=7200).contains(&n) => Duration::from_secs(n),
                _ => return Err(bad("HCCL_CONNECT_TIMEOUT", &v, "seconds from 1 to 7200")),
            },
        };
        let exec_timeout = match get("HCCL_EXEC_TIMEOUT") {
            None => Some(Duration::from_secs(1836)),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(0) => None,
                Ok(n) if n <= 2147483647 => Some(Duration::from_secs(n)),
                _ => {
                    return Err(bad(
                        "HCCL_EXEC_TIMEOUT",
                        &v,
                        "seconds from 0 (never) to 2147483647",
                    ))
                }
            },
        };
        let entry_log = get("HCCL_ENTRY_LOG_ENABLE").is_some_and(|v| v.trim() == "1");
        let buffsize_mb = match get("HCCL_BUFFSIZE") {
            None => 200,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(bad("HCCL_BUFFSIZE", &v, "megabytes, at least 1")),
            },
        };
        Ok(Config {
            devices,
            hbm_size,
            soc_name,
            node_dir,
            host_access_check,
            visible_devices,
            log_level,
            module_log_levels,
            log_to_stdout,
            connect_timeout,
            exec_timeout,
            entry_log,
            buffsize_mb,
        })
    }

    /// Number of devices this process sees (`aclrtGetDeviceCount`).
    pub fn visible_count(&self) -> u32 {
        self.visible_devices.len() as u32
    }

    /// Physical device id of logical device `logical`, if visible.
    pub fn physical(&self, logical: i32) -> Option<u32> {
        usize::try_from(logical)
            .ok()
            .and_then(|i| self.visible_devices.get(i).copied())
    }

    /// Logical id of physical device `phys` in this process, if visible.
    pub fn logical(&self, phys: u32) -> Option<i32> {
        self.visible_devices
            .iter()
            .position(|&p| p == phys)
            .map(|i| i as i32)
    }
}

/// Largest configuration file read (`aclInit`'s JSON, a rank table): 16 MiB, far above any
/// real one (a rank table of 4096 devices is under 1 MiB).
pub const MAX_CONFIG_FILE_BYTES: u64 = 16 << 20;

/// Why [`read_config_file`] could not read a file.
#[derive(Debug)]
pub enum FileError {
    /// It cannot be opened or read.
    Io(std::io::Error),
    /// It is not a regular file: a device (`/dev/zero`), a FIFO, a directory, a socket.
    NotRegular(&'static str),
    /// It is larger than the limit (its size, or `None` when it kept growing while read).
    TooBig { size: Option<u64>, limit: u64 },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io(e) => write!(f, "{e}"),
            FileError::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            FileError::TooBig {
                size: Some(s),
                limit,
            } => write!(f, "it has {s} bytes, more than the {limit} bytes allowed"),
            FileError::TooBig { size: None, limit } => {
                write!(f, "it grew past the {limit} bytes allowed while being read")
            }
        }
    }
}

/// Read a configuration file of at most `limit` bytes. Only a regular file is read: a
/// device such as `/dev/zero`, a FIFO (opened without blocking) or a directory is refused
/// before anything is read, and no more than `limit + 1` bytes are ever read.
pub fn read_config_file(
    path: &std::path::Path,
    limit: u64,
) -> std::result::Result<Vec<u8>, FileError> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(FileError::Io)?;
    let meta = f.metadata().map_err(FileError::Io)?;
    let t = meta.file_type();
    if !t.is_file() {
        return Err(FileError::NotRegular(if t.is_dir() {
            "a directory"
        } else if t.is_char_device() {
            "a character device"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a special file"
        }));
    }
    if meta.len() > limit {
        return Err(FileError::TooBig {
            size: Some(meta.len()),
            limit,
        });
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(limit + 1)
        .read_to_end(&mut out)
        .map_err(FileError::Io)?;
    if out.len() as u64 > limit {
        return Err(FileError::TooBig { size: None, limit });
    }
    Ok(out)
}

/// `ASCEND_RT_VISIBLE_DEVICES` as CANN parses it: comma-separated ids, ascending; parsing
/// stops at the first invalid token (a space, a non-digit, an id out of range, or an id not
/// above the previous one).
pub fn parse_visible_devices(v: &str, devices: u32) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for tok in v.split(',') {
        if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        match tok.parse::<u32>() {
            Ok(id) if id < devices && out.last().is_none_or(|&l| id > l) => out.push(id),
            _ => break,
        }
    }
    out
}

/// Parse `123`, `64K`, `512M`, `16G` (also `KB`/`MB`/`GB`/`KiB`…, case-insensitive).
pub fn parse_size(v: &str) -> Option<u64> {
    let s = v.trim().to_ascii_uppercase();
    let s = s.trim_end_matches("IB").trim_end_matches('B');
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Config> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn visible_devices_follow_cann_rules() {
        assert_eq!(parse_visible_devices("1, 2,3", 8), vec![1]);
        assert_eq!(parse_visible_devices("1,3,8", 8), vec![1, 3]);
        assert_eq!(parse_visible_devices("0,2,4", 8), vec![0, 2, 4]);
        assert_eq!(parse_visible_devices("3,1", 8), vec![3]);
        assert_eq!(parse_visible_devices("", 8), Vec::<u32>::new());
        assert_eq!(parse_visible_devices("x", 8), Vec::<u32>::new());
    }

    #[test]
    fn config_files_are_capped_and_regular() {
        let p = std::path::Path::new("/dev/zero");
        let e = read_config_file(p, 1024).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a character device, not a regular file"
        );
        let e = read_config_file(std::path::Path::new("/"), 1024).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("npu-emu-cfgfile-{}", std::process::id()));
        std::fs::write(&dir, vec![b' '; 2000]).unwrap();
        let e = read_config_file(&dir, 1024).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it has 2000 bytes, more than the 1024 bytes allowed"
        );
        assert_eq!(read_config_file(&dir, 2000).unwrap().len(), 2000);
        std::fs::remove_file(&dir).unwrap();
        // A FIFO with no writer: refused at once, never waited on.
        let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a NUL-terminated path, valid for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_config_file(&dir, 1024).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn defaults_and_bad_values() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.devices, 8);
        assert_eq!(c.hbm_size, 64 << 30);
        assert_eq!(c.visible_count(), 8);
        let e = cfg(&[("NPU_EMU_DEVICES", "0")]).unwrap_err();
        assert!(e.msg.contains("NPU_EMU_DEVICES"), "{}", e.msg);
        let e = cfg(&[("HCCL_EXEC_TIMEOUT", "soon")]).unwrap_err();
        assert!(e.msg.contains("HCCL_EXEC_TIMEOUT"), "{}", e.msg);
        assert_eq!(
            cfg(&[("HCCL_EXEC_TIMEOUT", "0")]).unwrap().exec_timeout,
            None
        );
        assert_eq!(
            cfg(&[("NPU_EMU_HBM_SIZE", "1G")]).unwrap().hbm_size,
            1 << 30
        );
        assert!(cfg(&[("NPU_EMU_HBM_SIZE", "1K")]).is_err());
        let c = cfg(&[("ASCEND_RT_VISIBLE_DEVICES", "2,5")]).unwrap();
        assert_eq!(c.physical(1), Some(5));
        assert_eq!(c.logical(2), Some(0));
        assert_eq!(c.physical(2), None);
    }
}
