//! `npu-emu run --nnodes M --node-rank I --master-addr A --master-port P`: one job over
//! several servers, torchrun-style. Each server runs `npu-emu run` for its own ranks; the
//! launcher of node 0 listens on `A:P`, the others connect to it and say how many ranks they
//! start on which devices. Node 0 then numbers the ranks node by node (node 0's first) and
//! sends every launcher the job: its id, the multi-server rank table (`server_id` and
//! `host_ip` = the node's address, `device_ip` the same, a free `device_port` per device),
//! its first global rank, the world size and a `MASTER_ADDR`/`MASTER_PORT` on node 0 for
//! torch.distributed.
//!
//! The connections stay open as the job's control channel: a launcher whose rank fails tells
//! node 0, which tells every other launcher, and they stop their ranks; a launcher that
//! vanishes is noticed the same way. At the end every launcher reports to node 0, which waits
//! for all of them, so no launcher mistakes node 0's normal end for a failure. Every
//! launcher sends a heartbeat line each [`HEARTBEAT`] on each of its connections; one silent
//! for [`SILENCE`] (its host unreachable, its launcher stopped) counts as gone.
//!
//! Messages are JSON objects, one per line.

use crate::args::{failure, CliResult};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a launcher says it is alive on each connection.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long a connection may stay silent before its launcher counts as gone.
pub const SILENCE: Duration = Duration::from_secs(10);

/// The multi-node options, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeOpts {
    pub nnodes: u32,
    pub node_rank: u32,
    pub master_addr: String,
    pub master_port: u16,
}

/// What this launcher contributes.
pub struct Local {
    pub ranks: usize,
    /// Physical device of each local rank.
    pub physical: Vec<u32>,
    pub host: String,
}

/// What this launcher runs, as node 0 decided.
#[derive(Clone, Debug)]
pub struct Plan {
    pub job_id: String,
    pub rank_table: String,
    pub first_rank: usize,
    pub world: usize,
    /// `MASTER_ADDR`, `MASTER_PORT` for torch.distributed.
    pub master: (String, String),
}

#[derive(Default)]
struct Shared {
    /// A failure elsewhere in the job, in words.
    failed: Option<String>,
    /// Node 0: which workers reported their end.
    done: Vec<bool>,
    /// Set when this launcher is finishing (a closed channel is then expected).
    closing: bool,
}

/// The job's control channel.
pub struct Control {
    node_rank: u32,
    /// Node 0: one per worker (by node rank); a worker: the one to node 0.
    peers: Vec<(u32, Arc<Mutex<TcpStream>>)>,
    sh: Arc<Mutex<Shared>>,
}

fn send(s: &Mutex<TcpStream>, v: &Value) {
    let mut line = v.to_string();
    line.push('\n');
    let _ = s.lock().write_all(line.as_bytes());
}

fn read_line(r: &mut BufReader<TcpStream>) -> Option<Value> {
    let mut line = String::new();
    match r.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => serde_json::from_str(line.trim()).ok(),
    }
}

/// A port that is free on this host now.
fn free_port() -> u16 {
    TcpListener::bind("0.0.0.0:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer and its length are valid.
    if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

pub fn local(ranks: usize, physical: Vec<u32>) -> Local {
    Local {
        ranks,
        physical,
        host: host_name(),
    }
}

/// One node's entry in the hello / the table.
struct NodeInfo {
    node_rank: u32,
    ranks: usize,
    physical: Vec<u32>,
    ports: Vec<u16>,
    host: String,
    addr: IpAddr,
}

fn hello(opts: &NodeOpts, l: &Local, ports: &[u16]) -> Value {
    json!({"hello": {
        "node_rank": opts.node_rank,
        "nnodes": opts.nnodes,
        "ranks": l.ranks,
        "devices": l.physical,
        "ports": ports,
        "host": l.host,
    }})
}

fn parse_hello(v: &Value, addr: IpAddr) -> Result<(u32, NodeInfo), String> {
    let h = v.get("hello").ok_or("it did not say hello")?;
    let num = |k: &str| h.get(k).and_then(Value::as_u64).ok_or(format!("no {k}"));
    let list = |k: &str| -> Result<Vec<u64>, String> {
        h.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .ok_or(format!("no {k}"))
    };
    let info = NodeInfo {
        node_rank: num("node_rank")? as u32,
        ranks: num("ranks")? as usize,
        physical: list("devices")?.into_iter().map(|d| d as u32).collect(),
        ports: list("ports")?.into_iter().map(|p| p as u16).collect(),
        host: h
            .get("host")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        addr,
    };
    if info.physical.len() != info.ranks || info.ports.len() != info.ranks {
        return Err("its device list does not match its rank count".into());
    }
    Ok((num("nnodes")? as u32, info))
}

/// The multi-server rank table (abi.md §3.2, version 1.0): nodes in node-rank order.
fn rank_table(nodes: &[NodeInfo]) -> String {
    let mut rank = 0usize;
    let mut servers = Vec::new();
    for n in nodes {
        let ip = n.addr.to_string();
        let dup = nodes.iter().filter(|m| m.addr == n.addr).count() > 1;
        let sid = if dup {
            format!("{ip}-node{}", n.node_rank)
        } else {
            ip.clone()
        };
        let devs: Vec<Value> = n
            .physical
            .iter()
            .zip(&n.ports)
            .map(|(d, p)| {
                let e = json!({
                    "device_id": d.to_string(),
                    "device_ip": ip,
                    "device_port": p.to_string(),
                    "rank_id": rank.to_string(),
                });
                rank += 1;
                e
            })
            .collect();
        servers.push(json!({"server_id": sid, "host_ip": ip, "device": devs}));
    }
    let t = json!({
        "status": "completed",
        "version": "1.0",
        "server_count": nodes.len().to_string(),
        "server_list": servers,
    });
    let mut s = serde_json::to_string_pretty(&t).unwrap_or_default();
    s.push('\n');
    s
}

fn resolve(addr: &str, port: u16) -> CliResult<Vec<SocketAddr>> {
    let v: Vec<SocketAddr> = (addr, port)
        .to_socket_addrs()
        .map_err(|e| failure(format!("--master-addr {addr}: cannot resolve it: {e}")))?
        .collect();
    if v.is_empty() {
        return Err(failure(format!("--master-addr {addr}: no address")));
    }
    Ok(v)
}

/// Meet the other launchers; returns this node's plan and the control channel.
pub fn rendezvous(
    opts: &NodeOpts,
    l: &Local,
    job_id: String,
    timeout: Duration,
) -> CliResult<(Plan, Control)> {
    let deadline = Instant::now() + timeout;
    let ports: Vec<u16> = (0..l.ranks).map(|_| free_port()).collect();
    if opts.node_rank == 0 {
        master(opts, l, &ports, job_id, deadline, timeout)
    } else {
        worker(opts, l, &ports, deadline, timeout)
    }
}

fn master(
    opts: &NodeOpts,
    l: &Local,
    ports: &[u16],
    job_id: String,
    deadline: Instant,
    timeout: Duration,
) -> CliResult<(Plan, Control)> {
    let bind = SocketAddr::from(([0, 0, 0, 0], opts.master_port));
    let lst = TcpListener::bind(bind).map_err(|e| {
        failure(format!(
            "node 0 cannot listen on port {} (--master-port): {e}",
            opts.master_port
        ))
    })?;
    lst.set_nonblocking(true)
        .map_err(|e| failure(e.to_string()))?;
    let mut nodes: Vec<Option<NodeInfo>> = (0..opts.nnodes).map(|_| None).collect();
    let mut socks: Vec<(u32, TcpStream)> = Vec::new();
    let mut my_addr: Option<IpAddr> = None;
    while socks.len() + 1 < opts.nnodes as usize {
        if Instant::now() >= deadline {
            let missing: Vec<u32> = (1..opts.nnodes)
                .filter(|&i| nodes[i as usize].is_none())
                .collect();
            return Err(failure(format!(
                "node 0 waited {} s (HCCL_CONNECT_TIMEOUT) for nodes {missing:?} of {} to connect to port {}",
                timeout.as_secs(),
                opts.nnodes,
                opts.master_port
            )));
        }
        let (s, from) = match lst.accept() {
            Ok(x) => x,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let _ = s.set_nonblocking(false);
        // Also the silence limit for the rest of the job (the heartbeats keep it quiet).
        let _ = s.set_read_timeout(Some(SILENCE));
        let _ = s.set_write_timeout(Some(SILENCE));
        let mut rd = BufReader::new(match s.try_clone() {
            Ok(c) => c,
            Err(_) => continue,
        });
        let Some(v) = read_line(&mut rd) else {
            eprintln!("npu-emu run: node 0 ignored a connection from {from} that sent no hello");
            continue;
        };
        let (nn, info) = match parse_hello(&v, from.ip()) {
            Ok(x) => x,
            Err(why) => {
                eprintln!("npu-emu run: node 0 ignored a connection from {from}: {why}");
                continue;
            }
        };
        let refuse = |s: &TcpStream, why: String| {
            let _ = (&*s).write_all(format!("{}\n", json!({ "error": why })).as_bytes());
            why
        };
        let k = info.node_rank;
        if nn != opts.nnodes {
            let why = refuse(
                &s,
                format!(
                    "node {k} (host {}) says --nnodes {nn} but node 0 says --nnodes {}",
                    info.host, opts.nnodes
                ),
            );
            return Err(failure(why));
        }
        if k == 0 || k >= opts.nnodes || nodes[k as usize].is_some() {
            let why = refuse(
                &s,
                format!(
                    "node {k} (host {}): --node-rank {k} is out of range or taken; each node needs a different one from 1 to {}",
                    info.host,
                    opts.nnodes - 1
                ),
            );
            eprintln!("npu-emu run: {why}");
            continue;
        }
        my_addr = my_addr.or_else(|| s.local_addr().ok().map(|a| a.ip()));
        nodes[k as usize] = Some(info);
        socks.push((k, s));
    }
    nodes[0] = Some(NodeInfo {
        node_rank: 0,
        ranks: l.ranks,
        physical: l.physical.clone(),
        ports: ports.to_vec(),
        host: l.host.clone(),
        addr: my_addr.unwrap_or(IpAddr::from([127, 0, 0, 1])),
    });
    let nodes: Vec<NodeInfo> = nodes.into_iter().flatten().collect();
    let table = rank_table(&nodes);
    let world: usize = nodes.iter().map(|n| n.ranks).sum();
    let master = (nodes[0].addr.to_string(), free_port().to_string());
    let mut first = Vec::new();
    let mut at = 0;
    for n in &nodes {
        first.push(at);
        at += n.ranks;
    }
    for (k, s) in &socks {
        let v = json!({"job": {
            "job_id": job_id,
            "rank_table": table,
            "first_rank": first[*k as usize],
            "world": world,
            "master_addr": master.0,
            "master_port": master.1,
        }});
        let _ = (&*s).write_all(format!("{v}\n").as_bytes());
    }
    let sh = Arc::new(Mutex::new(Shared {
        done: vec![false; opts.nnodes as usize],
        ..Default::default()
    }));
    let peers: Vec<(u32, Arc<Mutex<TcpStream>>)> = socks
        .into_iter()
        .map(|(k, s)| (k, Arc::new(Mutex::new(s))))
        .collect();
    let ctl = Control {
        node_rank: 0,
        peers,
        sh,
    };
    ctl.listen(&nodes);
    ctl.heartbeat();
    Ok((
        Plan {
            job_id,
            rank_table: table,
            first_rank: 0,
            world,
            master,
        },
        ctl,
    ))
}

fn worker(
    opts: &NodeOpts,
    l: &Local,
    ports: &[u16],
    deadline: Instant,
    timeout: Duration,
) -> CliResult<(Plan, Control)> {
    let addrs = resolve(&opts.master_addr, opts.master_port)?;
    let mut last = String::new();
    let s = loop {
        if Instant::now() >= deadline {
            return Err(failure(format!(
                "node {} could not reach node 0 at {}:{} within {} s (HCCL_CONNECT_TIMEOUT): {last}",
                opts.node_rank,
                opts.master_addr,
                opts.master_port,
                timeout.as_secs()
            )));
        }
        match addrs.iter().find_map(|a| {
            TcpStream::connect_timeout(a, Duration::from_secs(2))
                .map_err(|e| last = e.to_string())
                .ok()
        }) {
            Some(s) => break s,
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let h = hello(opts, l, ports);
    (&s).write_all(format!("{h}\n").as_bytes())
        .map_err(|e| failure(format!("talking to node 0: {e}")))?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_secs(1));
    let _ = s.set_read_timeout(Some(left + Duration::from_secs(5)));
    let mut rd = BufReader::new(s.try_clone().map_err(|e| failure(e.to_string()))?);
    let v = read_line(&mut rd).ok_or_else(|| {
        failure(format!(
            "node {}: node 0 at {}:{} closed the connection or did not answer within {} s",
            opts.node_rank,
            opts.master_addr,
            opts.master_port,
            timeout.as_secs()
        ))
    })?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(failure(format!("node 0 refused this node: {e}")));
    }
    let j = v
        .get("job")
        .ok_or_else(|| failure("node 0 answered without a job"))?;
    let st = |k: &str| j.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let num = |k: &str| j.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
    let plan = Plan {
        job_id: st("job_id"),
        rank_table: st("rank_table"),
        first_rank: num("first_rank"),
        world: num("world"),
        master: (st("master_addr"), st("master_port")),
    };
    let _ = s.set_read_timeout(Some(SILENCE));
    let _ = s.set_write_timeout(Some(SILENCE));
    let ctl = Control {
        node_rank: opts.node_rank,
        peers: vec![(0, Arc::new(Mutex::new(s)))],
        sh: Arc::new(Mutex::new(Shared::default())),
    };
    ctl.listen_worker(rd, &opts.master_addr);
    ctl.heartbeat();
    Ok((plan, ctl))
}

impl Control {
    /// Say "alive" on every connection each [`HEARTBEAT`] until this launcher finishes.
    fn heartbeat(&self) {
        let peers: Vec<Arc<Mutex<TcpStream>>> = self.peers.iter().map(|(_, s)| s.clone()).collect();
        let sh = self.sh.clone();
        let _ = std::thread::Builder::new()
            .name("npu-emu-heartbeat".into())
            .spawn(move || loop {
                std::thread::sleep(HEARTBEAT);
                if sh.lock().closing {
                    return;
                }
                for s in &peers {
                    send(s, &json!({ "alive": true }));
                }
            });
    }

    /// Node 0: read every worker's notices; relay failures to the others.
    fn listen(&self, nodes: &[NodeInfo]) {
        for (k, s) in &self.peers {
            let Ok(rs) = s.lock().try_clone() else {
                continue;
            };
            let (k, sh) = (*k, self.sh.clone());
            let others: Vec<Arc<Mutex<TcpStream>>> = self
                .peers
                .iter()
                .filter(|(j, _)| *j != k)
                .map(|(_, s)| s.clone())
                .collect();
            let who = format!(
                "node {k} (host {}, {})",
                nodes[k as usize].host, nodes[k as usize].addr
            );
            std::thread::spawn(move || {
                let mut rd = BufReader::new(rs);
                loop {
                    match read_line(&mut rd) {
                        Some(v) => {
                            if let Some(f) = v.get("failed").and_then(Value::as_str) {
                                let msg = format!("{who}: {f}");
                                sh.lock().failed.get_or_insert(msg.clone());
                                for o in &others {
                                    send(o, &json!({ "failed": msg }));
                                }
                            }
                            if v.get("done").is_some() {
                                sh.lock().done[k as usize] = true;
                            }
                        }
                        None => {
                            let mut g = sh.lock();
                            if !g.done[k as usize] && !g.closing {
                                let msg = format!(
                                    "{who}: its launcher is gone (killed, or its host unreachable)"
                                );
                                g.failed.get_or_insert(msg.clone());
                                g.done[k as usize] = true;
                                drop(g);
                                for o in &others {
                                    send(o, &json!({ "failed": msg }));
                                }
                            } else {
                                g.done[k as usize] = true;
                            }
                            return;
                        }
                    }
                }
            });
        }
    }

    /// A worker: read node 0's notices.
    fn listen_worker(&self, mut rd: BufReader<TcpStream>, master: &str) {
        let sh = self.sh.clone();
        let master = master.to_string();
        std::thread::spawn(move || loop {
            match read_line(&mut rd) {
                Some(v) => {
                    if let Some(f) = v.get("failed").and_then(Value::as_str) {
                        sh.lock().failed.get_or_insert(f.to_string());
                    }
                }
                None => {
                    let mut g = sh.lock();
                    if !g.closing {
                        g.failed.get_or_insert(format!(
                            "node 0 ({master}): its launcher is gone (killed, or its host unreachable)"
                        ));
                    }
                    return;
                }
            }
        });
    }

    /// A failure elsewhere in the job, if one was reported.
    pub fn failed_elsewhere(&self) -> Option<String> {
        self.sh.lock().failed.clone()
    }

    /// Tell the job that this node failed (`what`: "rank 5 exited with code 1").
    pub fn report_failure(&self, what: &str) {
        let msg = if self.node_rank == 0 {
            format!("node 0 (host {}): {what}", host_name())
        } else {
            what.to_string()
        };
        for (_, s) in &self.peers {
            send(s, &json!({ "failed": msg }));
        }
    }

    /// This node's ranks ended. A worker tells node 0 and leaves; node 0 waits until every
    /// worker ended (or `stop()` says to give up). Returns a failure elsewhere, if any.
    pub fn finish(&self, stop: &dyn Fn() -> bool) -> Option<String> {
        if self.node_rank != 0 {
            self.sh.lock().closing = true;
            for (_, s) in &self.peers {
                send(s, &json!({ "done": true }));
            }
            return self.failed_elsewhere();
        }
        loop {
            {
                let g = self.sh.lock();
                if g.done.iter().skip(1).all(|&d| d) {
                    return g.failed.clone();
                }
            }
            if stop() {
                return self.failed_elsewhere();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        self.sh.lock().closing = true;
        for (_, s) in &self.peers {
            let _ = s.lock().shutdown(std::net::Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_two_nodes() {
        let nodes = vec![
            NodeInfo {
                node_rank: 0,
                ranks: 3,
                physical: vec![0, 1, 2],
                ports: vec![7000, 7001, 7002],
                host: "a".into(),
                addr: "10.0.0.1".parse().unwrap(),
            },
            NodeInfo {
                node_rank: 1,
                ranks: 1,
                physical: vec![5],
                ports: vec![7100],
                host: "b".into(),
                addr: "10.0.0.2".parse().unwrap(),
            },
        ];
        let t: Value = serde_json::from_str(&rank_table(&nodes)).unwrap();
        assert_eq!(t["server_count"], "2");
        assert_eq!(t["server_list"][1]["server_id"], "10.0.0.2");
        assert_eq!(t["server_list"][1]["device"][0]["rank_id"], "3");
        assert_eq!(t["server_list"][1]["device"][0]["device_id"], "5");
        assert_eq!(t["server_list"][0]["device"][2]["device_port"], "7002");
    }

    #[test]
    fn two_launchers_meet_and_relay_failures() {
        let port = free_port();
        let opts = move |k| NodeOpts {
            nnodes: 2,
            node_rank: k,
            master_addr: "127.0.0.1".into(),
            master_port: port,
        };
        let w = std::thread::spawn(move || {
            let (plan, ctl) = rendezvous(
                &opts(1),
                &local(1, vec![3]),
                String::new(),
                Duration::from_secs(20),
            )
            .unwrap();
            assert_eq!((plan.first_rank, plan.world), (2, 3));
            assert_eq!(plan.job_id, "j1");
            ctl.report_failure("rank 2 exited with code 1");
            ctl.finish(&|| false);
        });
        let (plan, ctl) = rendezvous(
            &opts(0),
            &local(2, vec![0, 1]),
            "j1".into(),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!((plan.first_rank, plan.world), (0, 3));
        let t: Value = serde_json::from_str(&plan.rank_table).unwrap();
        assert_eq!(t["server_list"][1]["device"][0]["device_id"], "3");
        w.join().unwrap();
        let f = ctl.finish(&|| false).unwrap();
        assert!(f.contains("node 1 (host"), "{f}");
        assert!(f.contains("rank 2 exited with code 1"), "{f}");
    }
}
