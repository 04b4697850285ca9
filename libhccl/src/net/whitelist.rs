//! The IP whitelist (`HCCL_WHITELIST_DISABLE=0`, `HCCL_WHITELIST_FILE`, abi.md §3.4): when
//! it is on, a rank's listeners (a root's and its own, for its peers on other servers) drop
//! connections from addresses the file does not list, before the handshake, and say so in
//! the log. The file is CANN's: `{"host_ip": ["10.0.0.1", ...], "device_ip": [...]}`
//! (`device_ip` is reserved, as in CANN: accepted, unused).

use crate::errors::{HResult, HcclError, HCCL_E_PARA};
use npu_emu::config::HostNet;
use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;

/// The addresses the whitelist admits, with the file they came from.
#[derive(Debug)]
pub struct Whitelist {
    pub file: String,
    pub hosts: Vec<IpAddr>,
}

/// Parse a whitelist file's text.
pub fn parse(text: &str) -> Result<Vec<IpAddr>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let list = v
        .get("host_ip")
        .ok_or("it has no \"host_ip\" list")?
        .as_array()
        .ok_or("\"host_ip\" is not a list")?;
    let mut out = Vec::new();
    for e in list {
        let s = e
            .as_str()
            .ok_or_else(|| format!("\"host_ip\" entry {e} is not a string"))?;
        let ip: IpAddr = s
            .trim()
            .parse()
            .map_err(|_| format!("\"host_ip\" entry {s:?} is not an IP address"))?;
        out.push(ip.to_canonical());
    }
    if let Some(d) = v.get("device_ip") {
        if !d.is_array() {
            return Err("\"device_ip\" is not a list".into());
        }
    }
    Ok(out)
}

/// The whitelist `cfg` asks for: `None` when it is off.
pub fn load(cfg: &HostNet) -> HResult<Option<Whitelist>> {
    if !cfg.whitelist_on {
        return Ok(None);
    }
    let Some(path) = &cfg.whitelist_file else {
        return Err(HcclError::new(
            HCCL_E_PARA,
            "HCCL_WHITELIST_DISABLE=0 turns the IP whitelist on, but HCCL_WHITELIST_FILE does not name the file listing the addresses allowed to connect",
        ));
    };
    let file = path.display().to_string();
    let bytes = npu_emu::config::read_config_file(path, npu_emu::config::MAX_CONFIG_FILE_BYTES)
        .map_err(|e| {
            HcclError::new(
                HCCL_E_PARA,
                format!("cannot read the IP whitelist HCCL_WHITELIST_FILE={file}: {e}"),
            )
        })?;
    let text = String::from_utf8_lossy(&bytes);
    let hosts = parse(&text).map_err(|why| {
        HcclError::new(
            HCCL_E_PARA,
            format!("the IP whitelist HCCL_WHITELIST_FILE={file} is malformed: {why} (expected {{\"host_ip\": [\"10.0.0.1\", ...]}})"),
        )
    })?;
    Ok(Some(Whitelist { file, hosts }))
}

static THIS: OnceLock<Result<Option<Whitelist>, HcclError>> = OnceLock::new();

/// This process's whitelist, read once (before its first listener opens).
pub fn get() -> HResult<Option<&'static Whitelist>> {
    let r = THIS.get_or_init(|| load(&crate::config()?.host_net));
    match r {
        Ok(w) => Ok(w.as_ref()),
        Err(e) => Err(e.clone()),
    }
}

/// Whether a connection from `from` may go on to the handshake, by this process's whitelist
/// (a whitelist that cannot be read admits no one; the listener's opening reported why).
pub fn check(from: SocketAddr) -> Result<(), String> {
    match get() {
        Ok(w) => admits(w, from),
        Err(e) => Err(e.msg),
    }
}

/// Whether a connection from `from` may go on to the handshake.
pub fn admits(w: Option<&Whitelist>, from: SocketAddr) -> Result<(), String> {
    match w {
        Some(w) if !w.hosts.contains(&from.ip().to_canonical()) => Err(format!(
            "its address {} is not in the IP whitelist (HCCL_WHITELIST_FILE={})",
            from.ip(),
            w.file
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cann_format() {
        let h = parse(r#"{ "host_ip": ["10.0.0.1", " 10.0.0.2"], "device_ip": ["192.168.1.1"] }"#)
            .unwrap();
        assert_eq!(h.len(), 2);
        let w = Whitelist {
            file: "wl".into(),
            hosts: h,
        };
        assert!(admits(Some(&w), "10.0.0.2:5".parse().unwrap()).is_ok());
        assert!(admits(Some(&w), "[::ffff:10.0.0.1]:5".parse().unwrap()).is_ok());
        let e = admits(Some(&w), "10.0.0.3:5".parse().unwrap()).unwrap_err();
        assert!(e.contains("10.0.0.3 is not in the IP whitelist"), "{e}");
        assert!(admits(None, "10.0.0.3:5".parse().unwrap()).is_ok());
        for bad in [
            "",
            "[]",
            r#"{"device_ip": []}"#,
            r#"{"host_ip": "10.0.0.1"}"#,
            r#"{"host_ip": ["10.0.0"]}"#,
            r#"{"host_ip": [1]}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn on_without_a_file_is_an_error_naming_both_variables() {
        let cfg = HostNet {
            whitelist_on: true,
            ..HostNet::default()
        };
        let e = load(&cfg).unwrap_err();
        assert!(
            e.msg.contains("HCCL_WHITELIST_DISABLE=0") && e.msg.contains("HCCL_WHITELIST_FILE"),
            "{}",
            e.msg
        );
        assert!(load(&HostNet::default()).unwrap().is_none());
    }
}
