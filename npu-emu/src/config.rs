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
//! | `HCCL_IF_IP` | host address a rank advertises to ranks on other servers (and a root listens on) | unset |
//! | `HCCL_SOCKET_IFNAME` | host NIC choice: `eth,enp` (name prefixes), `^eth` (exclude prefixes), `=eth0` (exact), `^=eth0` (exclude exact) | unset: NICs in name order, `docker*` then `lo` last |
//! | `HCCL_IF_BASE_PORT` | first of the 32 ports a root-info root tries (1024..=65520) | 60000 |
//! | `HCCL_SOCKET_FAMILY` | `AF_INET` or `AF_INET6`: which address family is preferred | `AF_INET` |
//! | `HCCL_HOST_SOCKET_PORT_RANGE` | ports a root-info root listens on, before `HCCL_IF_BASE_PORT`: `60000-60050,60100` or `auto` (any) | unset |
//! | `HCCL_WHITELIST_DISABLE` | `0`: only addresses listed in `HCCL_WHITELIST_FILE` may connect to a rank's listeners; `1`: anyone holding the job's id | 1 |
//! | `HCCL_WHITELIST_FILE` | the whitelist, `{"host_ip": ["10.0.0.1", ...], "device_ip": [...]}` (read by libhccl) | unset |
//! | `HCCL_NPU_SOCKET_PORT_RANGE` | ports a rank listens on for its peers on other servers (the emulated RoCE links): same syntax | unset: any |
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
    /// How ranks reach ranks on other servers (`HCCL_IF_IP` and friends).
    pub host_net: HostNet,
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
        let host_net =
            HostNet::from_lookup(&get).map_err(|(var, val, want)| bad(var, &val, want))?;
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
            host_net,
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

/// The host-network settings of HCCL (abi.md §3.4), checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostNet {
    /// `HCCL_IF_IP`.
    pub if_ip: Option<std::net::IpAddr>,
    /// `HCCL_SOCKET_IFNAME`.
    pub ifname: Option<IfnameRule>,
    /// `HCCL_IF_BASE_PORT` (`None`: not set, 60000).
    pub base_port: Option<u16>,
    /// `HCCL_SOCKET_FAMILY=AF_INET6`.
    pub ipv6: bool,
    /// `HCCL_HOST_SOCKET_PORT_RANGE` (`None`: not set).
    pub host_ports: Option<PortRange>,
    /// `HCCL_NPU_SOCKET_PORT_RANGE` (`None`: not set).
    pub npu_ports: Option<PortRange>,
    /// `HCCL_WHITELIST_DISABLE=0`: the IP whitelist is checked.
    pub whitelist_on: bool,
    /// `HCCL_WHITELIST_FILE`.
    pub whitelist_file: Option<PathBuf>,
}

/// A parsed `HCCL_HOST_SOCKET_PORT_RANGE` / `HCCL_NPU_SOCKET_PORT_RANGE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortRange {
    /// `auto`: the operating system picks.
    Auto,
    /// Ports and inclusive ranges, in the order written (they do not overlap).
    Ports(Vec<(u16, u16)>),
}

impl PortRange {
    /// Every port, in the order written (empty for `Auto`).
    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        let r: &[(u16, u16)] = match self {
            PortRange::Auto => &[],
            PortRange::Ports(v) => v,
        };
        r.iter().flat_map(|&(a, b)| a..=b)
    }
}

/// Parse a port-range variable as CANN documents it: `auto`, or ports (1..=65535) and
/// `first-last` ranges separated by commas that do not overlap (`60000,60050-60100`).
pub fn parse_port_range(v: &str) -> Option<PortRange> {
    let t = v.trim();
    if t == "auto" {
        return Some(PortRange::Auto);
    }
    let mut out: Vec<(u16, u16)> = Vec::new();
    for tok in t.split(',') {
        let tok = tok.trim();
        let port = |s: &str| s.trim().parse::<u16>().ok().filter(|&p| p >= 1);
        let (a, b) = match tok.split_once('-') {
            Some((a, b)) => (port(a)?, port(b)?),
            None => (port(tok)?, port(tok)?),
        };
        if a > b || out.iter().any(|&(x, y)| a <= y && x <= b) {
            return None;
        }
        out.push((a, b));
    }
    Some(PortRange::Ports(out))
}

/// A parsed `HCCL_SOCKET_IFNAME` (the syntax NCCL_SOCKET_IFNAME also uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfnameRule {
    /// The value as written, for messages.
    pub text: String,
    /// `^`: the names are excluded.
    pub exclude: bool,
    /// `=`: whole names instead of prefixes.
    pub exact: bool,
    pub names: Vec<String>,
}

/// Parse `HCCL_SOCKET_IFNAME`: `eth,enp`, `^eth`, `=eth0`, `^=eth0`.
pub fn parse_ifname(v: &str) -> Option<IfnameRule> {
    let t = v.trim();
    let (exclude, t) = match t.strip_prefix('^') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let (exact, t) = match t.strip_prefix('=') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let names: Vec<String> = t.split(',').map(|s| s.trim().to_string()).collect();
    if names
        .iter()
        .any(|n| n.is_empty() || n.len() > 15 || n.contains(char::is_whitespace))
    {
        return None;
    }
    Some(IfnameRule {
        text: v.trim().to_string(),
        exclude,
        exact,
        names,
    })
}

impl HostNet {
    /// Read the variables through `get`; an error is (variable, value, what was expected).
    pub fn from_lookup(
        get: &impl Fn(&str) -> Option<String>,
    ) -> std::result::Result<HostNet, (&'static str, String, &'static str)> {
        let mut h = HostNet::default();
        if let Some(v) = get("HCCL_IF_IP").filter(|v| !v.trim().is_empty()) {
            h.if_ip = Some(v.trim().parse().map_err(|_| {
                (
                    "HCCL_IF_IP",
                    v.clone(),
                    "one IPv4 or IPv6 address, such as 10.0.0.5",
                )
            })?);
        }
        if let Some(v) = get("HCCL_SOCKET_IFNAME").filter(|v| !v.trim().is_empty()) {
            h.ifname = Some(parse_ifname(&v).ok_or((
                "HCCL_SOCKET_IFNAME",
                v.clone(),
                "interface names or prefixes separated by commas, optionally after ^ (exclude) and = (exact), such as eth,enp or ^=docker0",
            ))?);
        }
        if let Some(v) = get("HCCL_IF_BASE_PORT").filter(|v| !v.trim().is_empty()) {
            h.base_port = Some(match v.trim().parse::<u16>() {
                Ok(p) if (1024..=65520).contains(&p) => p,
                _ => return Err(("HCCL_IF_BASE_PORT", v, "a port from 1024 to 65520")),
            });
        }
        match get("HCCL_SOCKET_FAMILY").as_deref().map(str::trim) {
            None | Some("") | Some("AF_INET") => {}
            Some("AF_INET6") => h.ipv6 = true,
            Some(v) => return Err(("HCCL_SOCKET_FAMILY", v.to_string(), "AF_INET or AF_INET6")),
        }
        const RANGE: &str = "\"auto\", or ports (1 to 65535) and first-last ranges separated by commas that do not overlap, such as 60000-60050,60100";
        for (var, slot) in [
            ("HCCL_HOST_SOCKET_PORT_RANGE", &mut h.host_ports),
            ("HCCL_NPU_SOCKET_PORT_RANGE", &mut h.npu_ports),
        ] {
            if let Some(v) = get(var).filter(|v| !v.trim().is_empty()) {
                *slot = Some(parse_port_range(&v).ok_or((var, v.clone(), RANGE))?);
            }
        }
        match get("HCCL_WHITELIST_DISABLE").as_deref().map(str::trim) {
            None | Some("") | Some("1") => {}
            Some("0") => h.whitelist_on = true,
            Some(v) => {
                return Err((
                    "HCCL_WHITELIST_DISABLE",
                    v.to_string(),
                    "0 (check the IP whitelist) or 1 (do not)",
                ))
            }
        }
        h.whitelist_file = get("HCCL_WHITELIST_FILE")
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from);
        Ok(h)
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

    #[test]
    fn host_network_variables() {
        let c = cfg(&[
            ("HCCL_IF_IP", "10.1.2.3"),
            ("HCCL_SOCKET_IFNAME", "^=docker0,lo"),
            ("HCCL_IF_BASE_PORT", "61000"),
            ("HCCL_SOCKET_FAMILY", "AF_INET6"),
        ])
        .unwrap();
        let h = &c.host_net;
        assert_eq!(h.if_ip, Some("10.1.2.3".parse().unwrap()));
        let r = h.ifname.as_ref().unwrap();
        assert!(r.exclude && r.exact);
        assert_eq!(r.names, vec!["docker0", "lo"]);
        assert_eq!(h.base_port, Some(61000));
        assert!(h.ipv6);
        assert_eq!(cfg(&[]).unwrap().host_net, HostNet::default());
        let c = cfg(&[
            ("HCCL_HOST_SOCKET_PORT_RANGE", "60000,60050-60052, 60150"),
            ("HCCL_NPU_SOCKET_PORT_RANGE", "auto"),
        ])
        .unwrap();
        let r = c.host_net.host_ports.as_ref().unwrap();
        assert_eq!(
            r.ports().collect::<Vec<_>>(),
            vec![60000, 60050, 60051, 60052, 60150]
        );
        assert_eq!(c.host_net.npu_ports, Some(PortRange::Auto));
        let c = cfg(&[
            ("HCCL_WHITELIST_DISABLE", "0"),
            ("HCCL_WHITELIST_FILE", "/etc/wl.json"),
        ])
        .unwrap();
        assert!(c.host_net.whitelist_on);
        assert_eq!(
            c.host_net.whitelist_file.as_deref(),
            Some(std::path::Path::new("/etc/wl.json"))
        );
        for (k, v) in [
            ("HCCL_IF_IP", "10.1.2"),
            ("HCCL_SOCKET_IFNAME", "eth,,enp"),
            ("HCCL_IF_BASE_PORT", "80"),
            ("HCCL_IF_BASE_PORT", "65521"),
            ("HCCL_SOCKET_FAMILY", "inet"),
            ("HCCL_HOST_SOCKET_PORT_RANGE", "60000-60010,60005"),
            ("HCCL_HOST_SOCKET_PORT_RANGE", "0"),
            ("HCCL_NPU_SOCKET_PORT_RANGE", "61000-"),
            ("HCCL_NPU_SOCKET_PORT_RANGE", "61010-61000"),
            ("HCCL_NPU_SOCKET_PORT_RANGE", "65536"),
            ("HCCL_NPU_SOCKET_PORT_RANGE", "AUTO"),
            ("HCCL_WHITELIST_DISABLE", "yes"),
        ] {
            let e = cfg(&[(k, v)]).unwrap_err();
            assert!(e.msg.contains(k), "{}", e.msg);
        }
    }
}
