//! Rank table files (abi.md §3.2–3.3): versions "1.0" and "1.2" (concise) and the legacy
//! template without `version`. CANN's checks: every scalar is a JSON string, rank ids are
//! exactly 0..N-1, the status is "completed"; each error names the field. Only a regular file
//! of at most 16 MiB is read ([`npu_emu::config::read_config_file`]).

use crate::errors::{HResult, HcclError, HCCL_E_NOT_SUPPORT, HCCL_E_OPEN_FILE_FAILURE};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankEntry {
    pub rank: u32,
    /// Physical device id on its server.
    pub device_id: u32,
    pub server_id: String,
    /// The server's `host_ip`, the device's `device_ip` and `device_port` (where ranks on
    /// other servers reach this one).
    pub host_ip: Option<String>,
    pub device_ip: Option<String>,
    pub device_port: Option<u16>,
}

#[derive(Clone, Debug)]
pub struct RankTable {
    pub version: String,
    /// Indexed by rank.
    pub ranks: Vec<RankEntry>,
    /// Canonical text of the table (sorted keys), for the communicator id.
    pub canonical: String,
}

/// What tells one job from another started with the same rank table (whose ranks must
/// never meet): where it came from and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobIdentity {
    pub source: &'static str,
    pub value: String,
}

impl JobIdentity {
    /// "JOB_ID=7", "login session 1234", … for messages.
    pub fn describe(&self) -> String {
        if self.source == "session" {
            format!("its login session ({})", self.value)
        } else {
            format!("{}={}", self.source, self.value)
        }
    }
}

/// Variables launchers set to the same value in every rank of a job and to different values
/// in different jobs, in order of preference: CANN's `JOB_ID`, our launcher's, Open MPI's
/// (PMIx namespace, then its own job id), Slurm's job and step, torchrun's run id.
const JOB_VARS: &[&str] = &[
    "JOB_ID",
    "NPU_EMU_JOB_ID",
    "PMIX_NAMESPACE",
    "OMPI_MCA_ess_base_jobid",
    "SLURM_JOB_ID",
    "TORCHELASTIC_RUN_ID",
];

/// This process's job, for communicators made from a rank table ([`JOB_VARS`] through
/// `get`). With none of them set, the login session (session id and its leader's start
/// time): ranks started by hand from one shell or script meet, a second job started from
/// another terminal does not.
pub fn job_identity_from(get: impl Fn(&str) -> Option<String>) -> JobIdentity {
    for &v in JOB_VARS {
        let Some(val) = get(v).filter(|s| !s.is_empty() && s != "none") else {
            continue;
        };
        let value = if v == "SLURM_JOB_ID" {
            format!("{val}.{}", get("SLURM_STEP_ID").unwrap_or_default())
        } else {
            val
        };
        return JobIdentity { source: v, value };
    }
    // SAFETY: plain syscall.
    let sid = unsafe { libc::getsid(0) };
    let start = if sid > 0 {
        npu_emu_ffi::os::process_start_time(sid as u32).unwrap_or(0)
    } else {
        0
    };
    JobIdentity {
        source: "session",
        value: format!("session {sid} started at tick {start}"),
    }
}

/// [`job_identity_from`] the process environment.
pub fn job_identity() -> JobIdentity {
    job_identity_from(|k| std::env::var(k).ok())
}

fn bad(msg: String) -> HcclError {
    HcclError::para(format!("rank table: {msg}"))
}

fn get_str<'a>(obj: &'a Value, key: &str, path: &str, required: bool) -> HResult<Option<&'a str>> {
    match obj.get(key) {
        None if required => Err(bad(format!("{path}.{key} is missing"))),
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(bad(format!(
            "{path}.{key} must be a JSON string (e.g. \"{}\"), got {v}",
            v.to_string().trim_matches('"')
        ))),
    }
}

fn get_uint(obj: &Value, key: &str, path: &str) -> HResult<u32> {
    let s = get_str(obj, key, path, true)?.unwrap();
    s.parse::<u32>()
        .map_err(|_| bad(format!("{path}.{key} = {s:?} is not a decimal number")))
}

fn get_array<'a>(obj: &'a Value, key: &str, path: &str) -> HResult<&'a Vec<Value>> {
    match obj.get(key) {
        None => Err(bad(format!("{path}.{key} is missing"))),
        Some(Value::Array(a)) => Ok(a),
        Some(v) => Err(bad(format!("{path}.{key} must be an array, got {v}"))),
    }
}

/// Read and check the table at `path`.
pub fn load(path: &str) -> HResult<RankTable> {
    let limit = npu_emu::config::MAX_CONFIG_FILE_BYTES;
    let bytes =
        npu_emu::config::read_config_file(std::path::Path::new(path), limit).map_err(|e| {
            HcclError::new(
                HCCL_E_OPEN_FILE_FAILURE,
                format!("cannot read rank table file {path:?}: {e}"),
            )
        })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| HcclError::para(format!("rank table file {path:?} is not UTF-8 text: {e}")))?;
    parse(&text).map_err(|e| HcclError::new(e.code, format!("{} (file {path:?})", e.msg)))
}

pub fn parse(text: &str) -> HResult<RankTable> {
    let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(bad("the top level must be a JSON object".into()));
    }
    let status = get_str(&v, "status", "", true)?.unwrap();
    if status != "completed" {
        return Err(bad(format!("status is {status:?}; expected \"completed\"")));
    }
    let version = get_str(&v, "version", "", false)?;
    let mut entries: Vec<RankEntry> = Vec::new();
    match version {
        Some(ver @ ("1.0" | "1.2")) => {
            if ver == "1.0" {
                let sc = get_uint(&v, "server_count", "")?;
                let n = get_array(&v, "server_list", "")?.len();
                if sc as usize != n {
                    return Err(bad(format!("server_count is \"{sc}\" but server_list has {n} entries")));
                }
            } else if v.get("server_count").is_some() {
                get_uint(&v, "server_count", "")?;
            }
            for (i, srv) in get_array(&v, "server_list", "")?.iter().enumerate() {
                let sp = format!("server_list[{i}]");
                let sid = get_str(srv, "server_id", &sp, true)?.unwrap().to_string();
                let host_ip = get_str(srv, "host_ip", &sp, false)?.map(str::to_string);
                for (j, d) in get_array(srv, "device", &sp)?.iter().enumerate() {
                    let dp = format!("{sp}.device[{j}]");
                    let device_id = get_uint(d, "device_id", &dp)?;
                    let rank = get_uint(d, "rank_id", &dp)?;
                    for k in ["host_port", "super_device_id", "backup_device_ip"] {
                        get_str(d, k, &dp, false)?;
                    }
                    let device_ip = get_str(d, "device_ip", &dp, false)?.map(str::to_string);
                    let device_port = match get_str(d, "device_port", &dp, false)? {
                        None => None,
                        Some(p) => match p.parse::<u16>() {
                            Ok(p) if p > 0 => Some(p),
                            _ => {
                                return Err(bad(format!(
                                    "{dp}.device_port = {p:?} is not a port from 1 to 65535"
                                )))
                            }
                        },
                    };
                    entries.push(RankEntry {
                        rank,
                        device_id,
                        server_id: sid.clone(),
                        host_ip: host_ip.clone(),
                        device_ip,
                        device_port,
                    });
                }
            }
        }
        None => {
            // Legacy "Standard" template: ranks in order of appearance.
            let groups = get_array(&v, "group_list", "")?;
            if groups.is_empty() {
                return Err(bad("group_list is empty".into()));
            }
            let g = &groups[0];
            for (i, inst) in get_array(g, "instance_list", "group_list[0]")?.iter().enumerate() {
                let ip = format!("group_list[0].instance_list[{i}]");
                let sid = get_str(inst, "server_id", &ip, true)?.unwrap().to_string();
                for (j, d) in get_array(inst, "devices", &ip)?.iter().enumerate() {
                    let dp = format!("{ip}.devices[{j}]");
                    let device_id = get_uint(d, "device_id", &dp)?;
                    let device_ip = get_str(d, "device_ip", &dp, false)?.map(str::to_string);
                    let rank = entries.len() as u32;
                    entries.push(RankEntry {
                        rank,
                        device_id,
                        server_id: sid.clone(),
                        host_ip: None,
                        device_ip,
                        device_port: None,
                    });
                }
            }
        }
        Some(other) => {
            return Err(HcclError::new(
                HCCL_E_NOT_SUPPORT,
                format!("rank table: version {other:?} is not supported (supported: \"1.0\", \"1.2\", and no version for the legacy template)"),
            ))
        }
    }
    if entries.is_empty() {
        return Err(bad("the table lists no device".into()));
    }
    let n = entries.len();
    let mut ranks: Vec<Option<RankEntry>> = vec![None; n];
    for e in entries {
        let r = e.rank as usize;
        if r >= n {
            return Err(bad(format!(
                "rank_id \"{r}\" is out of range: the table lists {n} devices, so rank ids must be 0..{}",
                n - 1
            )));
        }
        if ranks[r].is_some() {
            return Err(bad(format!(
                "rank_id \"{r}\" is used more than once; rank ids must be 0..{} each once",
                n - 1
            )));
        }
        ranks[r] = Some(e);
    }
    let ranks: Vec<RankEntry> = ranks.into_iter().map(|e| e.unwrap()).collect();
    Ok(RankTable {
        version: version.unwrap_or("legacy").to_string(),
        ranks,
        canonical: v.to_string(),
    })
}

impl RankTable {
    /// Whether the table lists more than one server.
    pub fn multi_server(&self) -> bool {
        self.ranks
            .iter()
            .any(|r| r.server_id != self.ranks[0].server_id)
    }

    /// Where rank 0 (the bootstrap root of a multi-server table) listens: its `device_port`,
    /// else 16666 (the Ascend NIC default) + its device id, since the emulated devices of a
    /// server share the host's address; and the addresses to try, in order: its
    /// `device_ip`, its server's `host_ip`, the `server_id` when it is an address, and
    /// loopback (rank 0 may be on this host).
    pub fn root_endpoints(&self) -> (u16, Vec<std::net::IpAddr>) {
        let r0 = &self.ranks[0];
        let port = r0
            .device_port
            .unwrap_or_else(|| 16666u16.saturating_add(r0.device_id as u16));
        let mut ips: Vec<std::net::IpAddr> = Vec::new();
        for c in [
            r0.device_ip.as_deref(),
            r0.host_ip.as_deref(),
            Some(r0.server_id.as_str()),
        ]
        .into_iter()
        .flatten()
        {
            if let Ok(ip) = c.trim().parse() {
                if !ips.contains(&ip) {
                    ips.push(ip);
                }
            }
        }
        let lo = std::net::IpAddr::from([127, 0, 0, 1]);
        if !ips.contains(&lo) {
            ips.push(lo);
        }
        (port, ips)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const T: &str = r#"{"status":"completed","version":"1.0","server_count":"1","server_list":[
        {"server_id":"127.0.0.1","device":[{"device_id":"3","rank_id":"1"},{"device_id":"2","rank_id":"0"}]}]}"#;
    #[test]
    fn job_identity_prefers_explicit_ids() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let j = job_identity_from(env(&[("PMIX_NAMESPACE", "77"), ("JOB_ID", "9")]));
        assert_eq!((j.source, j.value.as_str()), ("JOB_ID", "9"));
        let j = job_identity_from(env(&[("PMIX_NAMESPACE", "77")]));
        assert_eq!(j.describe(), "PMIX_NAMESPACE=77");
        let j = job_identity_from(env(&[("SLURM_JOB_ID", "5"), ("SLURM_STEP_ID", "2")]));
        assert_eq!(j.value, "5.2");
        let j = job_identity_from(env(&[("TORCHELASTIC_RUN_ID", "none")]));
        assert_eq!(j.source, "session");
        assert_eq!(j, job_identity_from(env(&[])), "same session, same job");
    }

    #[test]
    fn parses_and_checks() {
        let t = parse(T).unwrap();
        assert_eq!(t.ranks[0].device_id, 2);
        assert_eq!(t.ranks[1].device_id, 3);
        let e = parse(&T.replace(r#""rank_id":"1""#, r#""rank_id":1"#)).unwrap_err();
        assert!(
            e.msg
                .contains("server_list[0].device[0].rank_id must be a JSON string"),
            "{}",
            e.msg
        );
        let e = parse(&T.replace(r#""rank_id":"1""#, r#""rank_id":"2""#)).unwrap_err();
        assert!(e.msg.contains("rank_id \"2\" is out of range"), "{}", e.msg);
        let e = parse(&T.replace("1.0", "1.1")).unwrap_err();
        assert_eq!(e.code, HCCL_E_NOT_SUPPORT);
        let legacy = r#"{"status":"completed","group_count":"1","group_list":[{"group_name":"hccl_world_group",
          "instance_list":[{"pod_name":"a","server_id":"s","devices":[{"device_id":"0","device_ip":"1.1.1.1"},{"device_id":"1"}]}]}]}"#;
        let t = parse(legacy).unwrap();
        assert_eq!(t.ranks.len(), 2);
        assert_eq!(t.ranks[1].device_id, 1);
        assert!(!t.multi_server());
    }

    #[test]
    fn servers_and_the_root_endpoint() {
        let two = r#"{"status":"completed","version":"1.0","server_count":"2","server_list":[
            {"server_id":"10.0.0.1","host_ip":"10.0.0.1","device":[{"device_id":"3","device_ip":"192.168.1.3","rank_id":"0"}]},
            {"server_id":"node-b","device":[{"device_id":"0","device_port":"7000","rank_id":"1"}]}]}"#;
        let t = parse(two).unwrap();
        assert!(t.multi_server());
        assert_eq!(t.ranks[1].device_port, Some(7000));
        let (port, ips) = t.root_endpoints();
        assert_eq!(port, 16669);
        let ips: Vec<String> = ips.iter().map(|i| i.to_string()).collect();
        assert_eq!(ips, vec!["192.168.1.3", "10.0.0.1", "127.0.0.1"]);
        let e = parse(&two.replace(r#""device_port":"7000""#, r#""device_port":"0""#)).unwrap_err();
        assert!(e.msg.contains("device_port = \"0\""), "{}", e.msg);
    }
}
