//! HCCL across emulated hosts: network namespaces joined by veth links through a bridge,
//! each with its own host name and node directory (`npu_emu_tests::hosts`). Ranks on one
//! host share memory; ranks on different hosts talk over TCP.
//!
//! - every collective × dtype × reduce op (`tests/c/hccl_ops.cpp`) at 2 hosts × 2 ranks,
//!   2 × 4 and 3 + 1, through a multi-server rank table, root info, `mpirun` across the
//!   hosts and `npu-emu run --nnodes 2`;
//! - faults: a host's ranks killed mid-operation, the link to a host taken down, a stranger
//!   at the root with a wrong id, a peer sending garbage.
//!
//! Creating hosts needs root (CI runs as root); without it these tests fail and say so.

use npu_emu_tests::hosts::Hosts;
use npu_emu_tests::{compile, npu_emu_bin, run, scratch};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn exe(src: &str) -> PathBuf {
    static BUILT: OnceLock<std::sync::Mutex<std::collections::HashMap<String, PathBuf>>> =
        OnceLock::new();
    let m = BUILT.get_or_init(Default::default);
    let mut m = m.lock().unwrap();
    if let Some(p) = m.get(src) {
        return p.clone();
    }
    let dir = scratch(&format!("build-{}", src.split('.').next().unwrap()));
    let out = dir.join("prog");
    compile(&[src], &out, &["hccl", "ascendcl"], &[]);
    m.insert(src.to_string(), out.clone());
    out
}

/// The smoke test of the harness: two hosts with their own names and addresses reach each
/// other.
#[test]
fn hosts_reach_each_other() {
    let work = scratch("hosts-smoke");
    let h = Hosts::create(2, &work);
    let py = "import socket,sys\n\
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
if sys.argv[1]=='serve':\n    s.bind(('0.0.0.0', 45000)); s.listen(1); c,_=s.accept(); c.sendall(socket.gethostname().encode()); c.close()\n\
else:\n    import time\n    for i in range(100):\n        try:\n            s.connect((sys.argv[2], 45000)); break\n        except OSError:\n            time.sleep(0.05)\n    print(socket.gethostname(), 'got', s.recv(100).decode())\n";
    let mut server = h.command(1, "python3".as_ref(), &work);
    server.args(["-c", py, "serve"]);
    let mut srv = server.spawn().unwrap();
    let mut client = h.command(0, "python3".as_ref(), &work);
    client.args(["-c", py, "connect", &h.ip(1)]);
    let r = run(client);
    let _ = srv.wait();
    r.assert_ok();
    assert!(r.stdout.contains("npuemu-h0 got npuemu-h1"), "{}", r.all());
}

/// One started process of a job (a rank, or a launcher).
struct Proc {
    child: Child,
    log: PathBuf,
    what: String,
}

/// What one process did.
struct Done {
    code: Option<i32>,
    out: String,
    what: String,
}

fn spawn(mut c: Command, work: &Path, what: &str) -> Proc {
    let log = work.join(format!("{}.log", what.replace(' ', "-")));
    let f = std::fs::File::create(&log).unwrap();
    c.stdout(Stdio::from(f.try_clone().unwrap()))
        .stderr(Stdio::from(f))
        .stdin(Stdio::null());
    Proc {
        child: c.spawn().expect("spawn"),
        log,
        what: what.to_string(),
    }
}

/// A process's log, as text. Lossy: ranks under mpirun write through its I/O forwarding,
/// which may interleave two ranks' writes inside a multi-byte character (HCCL's lines hold
/// an em dash); strict UTF-8 decoding then lost the whole log, and a job whose ranks all
/// passed failed as "rank 0 did not pass" with nothing to show.
fn read_log(p: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned()
}

/// Wait for every process, at most `limit` (then kill them all and fail).
fn wait_all(mut ps: Vec<Proc>, limit: Duration) -> Vec<Done> {
    let start = Instant::now();
    let mut codes: Vec<Option<Option<i32>>> = vec![None; ps.len()];
    while codes.iter().any(|c| c.is_none()) {
        for (i, p) in ps.iter_mut().enumerate() {
            if codes[i].is_none() {
                if let Some(st) = p.child.try_wait().unwrap() {
                    codes[i] = Some(st.code());
                }
            }
        }
        if start.elapsed() > limit {
            for p in ps.iter_mut() {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
            let outs: Vec<String> = ps
                .iter()
                .map(|p| format!("== {}\n{}", p.what, read_log(&p.log)))
                .collect();
            panic!(
                "still running after {limit:?} (killed):\n{}",
                outs.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ps.iter()
        .zip(codes)
        .map(|(p, c)| Done {
            code: c.unwrap(),
            out: read_log(&p.log),
            what: p.what.clone(),
        })
        .collect()
}

fn all_ok(done: &[Done]) {
    for d in done {
        assert_eq!(d.code, Some(0), "{} failed:\n{}", d.what, d.out);
    }
}

/// (host, index on the host) of each global rank of `layout` (ranks per host).
fn places(layout: &[usize]) -> Vec<(usize, usize)> {
    layout
        .iter()
        .enumerate()
        .flat_map(|(h, &k)| (0..k).map(move |i| (h, i)))
        .collect()
}

/// A version 1.0 rank table with one server per host (`server_id` and `host_ip` = its
/// address, `device_ip` too), devices 0.. on each.
fn rank_table(h: &Hosts, layout: &[usize], path: &Path) {
    let mut rank = 0;
    let servers: Vec<String> = layout
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let devs: Vec<String> = (0..k)
                .map(|d| {
                    rank += 1;
                    format!(
                        r#"{{"device_id": "{d}", "device_ip": "{}", "rank_id": "{}"}}"#,
                        h.ip(i),
                        rank - 1
                    )
                })
                .collect();
            format!(
                r#"{{"server_id": "{}", "host_ip": "{}", "device": [{}]}}"#,
                h.ip(i),
                h.ip(i),
                devs.join(", ")
            )
        })
        .collect();
    let t = format!(
        r#"{{"status": "completed", "version": "1.0", "server_count": "{}", "server_list": [{}]}}"#,
        layout.len(),
        servers.join(", ")
    );
    std::fs::write(path, t).unwrap();
}

#[derive(Clone, Copy, Debug)]
enum Launch {
    RankTable,
    RootInfo,
    Mpirun,
    NpuEmuRun,
    /// What `srun` sets (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`, `SLURM_JOB_ID` …)
    /// and a rank table listing both servers.
    Slurm,
}

/// Run `prog args` as a job over `h` with `layout` ranks per host, started the `how` way.
fn job(
    h: &Hosts,
    work: &Path,
    layout: &[usize],
    how: Launch,
    prog: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Vec<Proc> {
    let n: usize = layout.iter().sum();
    let mut ps = Vec::new();
    match how {
        Launch::RankTable | Launch::RootInfo => {
            let table = work.join("rank_table.json");
            if matches!(how, Launch::RankTable) {
                rank_table(h, layout, &table);
            }
            for (r, (host, local)) in places(layout).into_iter().enumerate() {
                let mut c = h.command(host, prog, work);
                c.args(args)
                    .env("RANK_ID", r.to_string())
                    .env("RANK_SIZE", n.to_string())
                    .env("ASCEND_DEVICE_ID", local.to_string())
                    .env("HCCL_CONNECT_TIMEOUT", "60")
                    .env_remove("RANK_TABLE_FILE");
                if matches!(how, Launch::RankTable) {
                    c.env("RANK_TABLE_FILE", &table)
                        .env("JOB_ID", work.file_name().unwrap());
                }
                for (k, v) in env {
                    c.env(k, v);
                }
                ps.push(spawn(c, work, &format!("rank {r}")));
            }
        }
        Launch::Slurm => {
            let table = work.join("rank_table.json");
            rank_table(h, layout, &table);
            let jobid = (std::process::id() % 100000).to_string();
            for (r, (host, local)) in places(layout).into_iter().enumerate() {
                let mut c = h.command(host, prog, work);
                c.args(args)
                    .env("SLURM_PROCID", r.to_string())
                    .env("SLURM_NTASKS", n.to_string())
                    .env("SLURM_LOCALID", local.to_string())
                    .env("SLURM_NODEID", host.to_string())
                    .env("SLURM_JOB_ID", &jobid)
                    .env("SLURM_STEP_ID", "0")
                    .env("RANK_TABLE_FILE", &table)
                    .env("HCCL_CONNECT_TIMEOUT", "60")
                    .env_remove("RANK_ID")
                    .env_remove("RANK_SIZE")
                    .env_remove("JOB_ID")
                    .env_remove("ASCEND_DEVICE_ID");
                for (k, v) in env {
                    c.env(k, v);
                }
                ps.push(spawn(c, work, &format!("rank {r}")));
            }
        }
        Launch::Mpirun => {
            let agent = h.rsh_agent(work);
            let hostlist: Vec<String> = layout
                .iter()
                .enumerate()
                .map(|(i, k)| format!("{}:{k}", h.ip(i)))
                .collect();
            let mut c = h.command(0, "mpirun".as_ref(), work);
            c.args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "none",
            ])
            .args(["--mca", "plm_rsh_agent"])
            .arg(&agent)
            .args(["--mca", "plm_rsh_no_tree_spawn", "1"])
            .args(["--mca", "oob_tcp_if_include", "10.201.0.0/24"])
            .args(["--mca", "btl_tcp_if_include", "10.201.0.0/24"])
            .args(["--mca", "mpi_yield_when_idle", "1"])
            .args(["-x", "LD_LIBRARY_PATH", "-x", "HCCL_CONNECT_TIMEOUT"])
            .args(["--host", &hostlist.join(","), "-np", &n.to_string()])
            .arg(prog)
            .args(args)
            .env("HCCL_CONNECT_TIMEOUT", "60")
            .env_remove("RANK_TABLE_FILE")
            .env_remove("RANK_ID")
            .env_remove("RANK_SIZE");
            for (k, v) in env {
                c.args(["-x", k]).env(k, v);
            }
            ps.push(spawn(c, work, "mpirun"));
        }
        Launch::NpuEmuRun => {
            let port = free_port();
            for (i, &k) in layout.iter().enumerate() {
                let mut c = h.command(i, &npu_emu_bin(), work);
                c.args([
                    "run",
                    "--nnodes",
                    &layout.len().to_string(),
                    "--node-rank",
                    &i.to_string(),
                ])
                .args([
                    "--master-addr",
                    &h.ip(0),
                    "--master-port",
                    &port.to_string(),
                ])
                .args(["-n", &k.to_string()])
                .arg(prog)
                .args(args)
                .env("HCCL_CONNECT_TIMEOUT", "60");
                for (k, v) in env {
                    c.env(k, v);
                }
                ps.push(spawn(c, work, &format!("node {i}")));
            }
        }
    }
    ps
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `hccl_ops` (every op × dtype × reduce op) over `layout`, started `how`.
fn ops(layout: &[usize], how: Launch, extra: &[&str]) {
    let work = scratch(&format!("hosts-ops-{how:?}"));
    let h = Hosts::create(layout.len(), &work);
    let prog = exe("hccl_ops.cpp");
    let root_file = work.join("root.info");
    let mut args = vec![root_file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let done = wait_all(
        job(&h, &work, layout, how, &prog, &args, &[]),
        Duration::from_secs(600),
    );
    all_ok(&done);
    for i in 0..layout.len() {
        assert!(
            h.node_dir(i).exists(),
            "nothing ran on host {i} (its node directory {} was never made)",
            h.node_dir(i).display()
        );
    }
    let all: String = done.iter().map(|d| d.out.as_str()).collect();
    let n: usize = layout.iter().sum();
    for r in 0..n {
        assert!(
            all.contains(&format!("hccl_ops rank {r}/{n} passed")),
            "rank {r} did not pass:\n{all}"
        );
    }
}

#[test]
fn ops_rank_table_2x2_2x4_3p1() {
    ops(&[2, 2], Launch::RankTable, &[]);
    ops(&[4, 4], Launch::RankTable, &["--quick"]);
    ops(&[3, 1], Launch::RankTable, &[]);
}

#[test]
fn ops_root_info_2x2_2x4_3p1() {
    ops(&[2, 2], Launch::RootInfo, &[]);
    ops(&[4, 4], Launch::RootInfo, &["--quick"]);
    ops(&[3, 1], Launch::RootInfo, &[]);
}

#[test]
fn ops_mpirun_2x2_2x4_3p1() {
    ops(&[2, 2], Launch::Mpirun, &[]);
    ops(&[4, 4], Launch::Mpirun, &["--quick"]);
    ops(&[3, 1], Launch::Mpirun, &[]);
}

#[test]
fn ops_npu_emu_run_nnodes_2x2_2x4_3p1() {
    ops(&[2, 2], Launch::NpuEmuRun, &[]);
    ops(&[4, 4], Launch::NpuEmuRun, &["--quick"]);
    ops(&[3, 1], Launch::NpuEmuRun, &[]);
}

/// Wait until `log` contains `text` (at most `limit`).
fn wait_for(log: &Path, text: &str, limit: Duration) {
    let t0 = Instant::now();
    while !read_log(log).contains(text) {
        assert!(
            t0.elapsed() < limit,
            "{} never printed {text:?}:\n{}",
            log.display(),
            read_log(log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The AllReduce loop of `hccl_hosts` on 2 hosts × 2 ranks by root info, running.
fn looping(name: &str) -> (PathBuf, Hosts, Vec<Proc>) {
    looping_with(name, &[])
}

fn looping_with(name: &str, env: &[(&str, &str)]) -> (PathBuf, Hosts, Vec<Proc>) {
    let work = scratch(name);
    let h = Hosts::create(2, &work);
    let prog = exe("hccl_hosts.cpp");
    let root_file = work.join("root.info");
    let ps = job(
        &h,
        &work,
        &[2, 2],
        Launch::RootInfo,
        &prog,
        &["loop", root_file.to_str().unwrap()],
        env,
    );
    for p in &ps {
        wait_for(&p.log, "iteration 3 ok", Duration::from_secs(120));
    }
    (work, h, ps)
}

/// Kill host 1's ranks while the loop runs (with `env`): host 0's ranks must fail within
/// seconds, naming a dead rank and saying `why`.
fn kill_host_1_mid_loop(name: &str, env: &[(&str, &str)], why: &[&str]) {
    let (_work, h, ps) = looping_with(name, env);
    let t0 = Instant::now();
    h.kill_all(1);
    let done = wait_all(ps, Duration::from_secs(60));
    let took = t0.elapsed();
    for d in &done[..2] {
        assert_eq!(d.code, Some(3), "{}:\n{}", d.what, d.out);
        assert!(
            d.out.contains("rank 2 (host npuemu-h1, 10.201.0.2")
                || d.out.contains("rank 3 (host npuemu-h1, 10.201.0.2"),
            "{}:\n{}",
            d.what,
            d.out
        );
        assert!(
            why.iter().any(|w| d.out.contains(w)),
            "{}:\n{}",
            d.what,
            d.out
        );
    }
    assert!(
        took < Duration::from_secs(15),
        "the survivors took {took:?} to fail"
    );
}

#[test]
fn a_hosts_ranks_killed_mid_operation_fail_the_others_naming_them() {
    kill_host_1_mid_loop("hosts-kill", &[], &["its process exited or was killed"]);
}

/// The same with small AllReduces, which complete at the call (their inputs travel with the
/// fingerprints): the survivors' calls fail within seconds naming the dead ranks.
#[test]
fn a_hosts_ranks_killed_amid_small_collectives_fail_the_others_naming_them() {
    kill_host_1_mid_loop(
        "hosts-kill-small",
        &[("LOOP_COUNT", "6")],
        &["HcclAllReduce", "aclrtSynchronizeStream"],
    );
}

#[test]
fn a_link_taken_down_fails_both_sides_within_seconds() {
    let (_work, h, ps) = looping("hosts-link");
    let t0 = Instant::now();
    h.link(1, false);
    let done = wait_all(ps, Duration::from_secs(90));
    let took = t0.elapsed();
    for (i, d) in done.iter().enumerate() {
        assert_eq!(d.code, Some(3), "{}:\n{}", d.what, d.out);
        let other = if i < 2 { "npuemu-h1" } else { "npuemu-h0" };
        assert!(
            d.out.contains(&format!("(host {other}")),
            "{}:\n{}",
            d.what,
            d.out
        );
        assert!(d.out.contains("is unreachable"), "{}:\n{}", d.what, d.out);
    }
    assert!(
        took < Duration::from_secs(30),
        "the ranks took {took:?} to fail"
    );
}

/// A rank that finished and destroyed its communicator does not fail the others' pending
/// operations with other ranks: rank 0 (host 0) waits in `HcclRecv` for rank 1 (host 1),
/// which sends only a second after rank 2 (host 1) destroyed its communicator (so rank 0 has
/// heard rank 2's goodbye while it waits). This is what torch_npu's `batch_isend_irecv`
/// ring on two hosts met when one rank was slow: the receive failed on the stream, the
/// event after it still completed, and the program read a buffer that never got its data.
#[test]
fn a_rank_leaving_early_does_not_fail_a_slower_pair() {
    for how in [Launch::RootInfo, Launch::RankTable] {
        let work = scratch(&format!("hosts-late-send-{how:?}"));
        let h = Hosts::create(2, &work);
        let prog = exe("hccl_hosts.cpp");
        let root_file = work.join("root.info");
        let done = wait_all(
            job(
                &h,
                &work,
                &[1, 2],
                how,
                &prog,
                &["late-send", root_file.to_str().unwrap()],
                &[],
            ),
            Duration::from_secs(180),
        );
        all_ok(&done);
        assert!(
            done[0]
                .out
                .contains("rank 0: received from rank 1 after rank 2 left: ok"),
            "{how:?}: {}",
            done[0].out
        );
        assert!(
            done[2].out.contains("rank 2: destroyed its communicator"),
            "{how:?}: {}",
            done[2].out
        );
    }
}

/// A rank that comes after the root-info root gave up (HCCL_CONNECT_TIMEOUT passed with a
/// rank missing) gets `HCCL_E_TIMEOUT` (9, what HCCL's root-info exchange returns on a
/// timeout) and a message saying the root gave up, naming the root's communicator, its
/// address and the late rank: from the root itself while its process lives, and from the
/// refused connection (after the late rank's own timeout) once that process ended.
#[test]
fn a_rank_coming_after_the_root_gave_up_is_told_so() {
    let work = scratch("hosts-late-rank");
    let h = Hosts::create(2, &work);
    let prog = exe("hccl_hosts.cpp");
    let root_file = work.join("root.info");
    let rank = |r: usize, host: usize, timeout: &str, hold: &str, tag: &str| {
        let mut c = h.command(host, &prog, &work);
        c.args(["loop", root_file.to_str().unwrap()])
            .env("RANK_ID", r.to_string())
            .env("RANK_SIZE", "2")
            .env("ASCEND_DEVICE_ID", "0")
            .env("LOOP_ITERS", "1")
            .env("HCCL_CONNECT_TIMEOUT", timeout)
            .env("HOLD_AFTER_FAILURE", hold);
        spawn(c, &work, &format!("rank {r} {tag}"))
    };
    // Rank 0 (host 0, the root's process) alone: its root gives up after 3 s; the process
    // stays up a minute after its init failed.
    let root = rank(0, 0, "3", "60", "root");
    wait_for(
        &root.log,
        "HcclCommInitRootInfo(n, &ri, rank_, &comm) -> 9: ",
        Duration::from_secs(60),
    );
    // Rank 1 (host 1) comes late: told at once, not after its own 30 s.
    let t0 = Instant::now();
    let late = wait_all(vec![rank(1, 1, "30", "0", "late")], Duration::from_secs(60));
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    let out = &late[0].out;
    assert_eq!(late[0].code, Some(3), "{out}");
    for want in [
        "HcclCommInitRootInfo(n, &ri, rank_, &comm) -> 9: ",
        "rank 1 (host npuemu-h1, pid ",
        ") came too late, ",
        " s after the root of communicator hccl_root_",
        " at 10.201.0.1:",
        " gave up: timed out after 3 s (HCCL_CONNECT_TIMEOUT) waiting for ranks [1] of 2 to join; joined:",
        "rank 0 (host npuemu-h0, 10.201.0.1, pid ",
    ] {
        assert!(out.contains(want), "{want:?} not in:\n{out}");
    }
    // The root's process ends; a rank coming now finds nothing listening and says what
    // that means when its own timeout (3 s) passes.
    h.kill_all(0);
    let root = wait_all(vec![root], Duration::from_secs(30));
    assert!(
        root[0].out.contains(" gave up: timed out after 3 s (HCCL_CONNECT_TIMEOUT) waiting for ranks [1] of 2 to join"),
        "{}",
        root[0].out
    );
    let later = wait_all(vec![rank(1, 1, "3", "0", "later")], Duration::from_secs(60));
    let out = &later[0].out;
    assert_eq!(later[0].code, Some(3), "{out}");
    for want in [
        "HcclCommInitRootInfo(n, &ri, rank_, &comm) -> 9: ",
        "rank 1 timed out (HCCL_CONNECT_TIMEOUT) and cannot reach the communicator's root at 10.201.0.1:",
        "(nothing listens there any more: the root's process has ended;",
        "Connection refused",
    ] {
        assert!(out.contains(want), "{want:?} not in:\n{out}");
    }
}

#[test]
fn a_stranger_with_a_wrong_id_is_dropped_and_the_job_goes_on() {
    let work = scratch("hosts-stranger");
    let h = Hosts::create(2, &work);
    let prog = exe("hccl_hosts.cpp");
    let root_file = work.join("root.info");
    let args = ["loop", root_file.to_str().unwrap()];
    let env = [("LOOP_ITERS", "2"), ("ASCEND_GLOBAL_LOG_LEVEL", "2")];
    let rank = |r: usize, host: usize, local: usize| {
        let mut c = h.command(host, &prog, &work);
        c.args(args)
            .env("RANK_ID", r.to_string())
            .env("RANK_SIZE", "4")
            .env("ASCEND_DEVICE_ID", local.to_string())
            .env("HCCL_CONNECT_TIMEOUT", "60")
            .envs(env);
        spawn(c, &work, &format!("rank {r}"))
    };
    // Rank 3 starts only after the stranger was turned away, so the root still listens.
    let mut ps = vec![rank(0, 0, 0), rank(1, 0, 1), rank(2, 1, 0)];
    let mut py = h.command(1, "python3".as_ref(), &work);
    py.arg(npu_emu_tests::root().join("tests/python/hccl_net_peer.py"))
        .args(["stranger", root_file.to_str().unwrap()]);
    let r = run(py);
    assert!(r.stdout.contains("dropped"), "{}", r.all());
    ps.push(rank(3, 1, 1));
    let done = wait_all(ps, Duration::from_secs(120));
    all_ok(&done);
    assert!(
        done[0].out.contains("dropped a connection from 10.201.0.2")
            && done[0]
                .out
                .contains("it did not present this communicator's id"),
        "{}",
        done[0].out
    );
}

#[test]
fn a_peer_sending_garbage_is_named_and_nothing_hangs() {
    let work = scratch("hosts-garbage");
    let h = Hosts::create(2, &work);
    let prog = exe("hccl_hosts.cpp");
    let root_file = work.join("root.info");
    let mut ps = Vec::new();
    for r in 0..2 {
        let mut c = h.command(0, &prog, &work);
        c.args(["loop", root_file.to_str().unwrap()])
            .env("RANK_ID", r.to_string())
            .env("RANK_SIZE", "3")
            .env("ASCEND_DEVICE_ID", r.to_string())
            .env("HCCL_CONNECT_TIMEOUT", "60");
        ps.push(spawn(c, &work, &format!("rank {r}")));
    }
    let mut py = h.command(1, "python3".as_ref(), &work);
    py.arg(npu_emu_tests::root().join("tests/python/hccl_net_peer.py"))
        .args(["garbage", root_file.to_str().unwrap(), "2", "3"]);
    let fake = spawn(py, &work, "fake rank 2");
    let t0 = Instant::now();
    let done = wait_all(ps, Duration::from_secs(120));
    let took = t0.elapsed();
    for d in &done {
        assert_eq!(d.code, Some(3), "{}:\n{}", d.what, d.out);
        assert!(
            d.out.contains("rank 2 (host npuemu-h1, 10.201.0.2"),
            "{}:\n{}",
            d.what,
            d.out
        );
        assert!(d.out.contains("malformed frame"), "{}:\n{}", d.what, d.out);
    }
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let f = wait_all(vec![fake], Duration::from_secs(60));
    assert!(f[0].out.contains("sent garbage to rank 0"), "{}", f[0].out);
}

#[test]
fn ops_slurm_variables_2x2_3p1() {
    ops(&[2, 2], Launch::Slurm, &[]);
    ops(&[3, 1], Launch::Slurm, &["--quick"]);
}

/// The (local, peer) ports of a host's established TCP connections (`ss` in its namespace).
fn connections(h: &Hosts, i: usize) -> Vec<(u16, u16)> {
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            &h.ns(i),
            "ss",
            "-Htn",
            "state",
            "established",
        ])
        .output()
        .expect("run ss (iproute2)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let port = |a: &str| a.rsplit(':').next()?.parse::<u16>().ok();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((port(f.get(2)?)?, port(f.get(3)?)?))
        })
        .collect()
}

#[test]
fn port_range_variables_place_the_root_and_the_ranks_listeners() {
    let (work, h, ps) = looping_with(
        "hosts-ports",
        &[
            ("HCCL_IF_BASE_PORT", "43000"),
            ("HCCL_HOST_SOCKET_PORT_RANGE", "41000-41003"),
            ("HCCL_NPU_SOCKET_PORT_RANGE", "42100,42000-42001,42200"),
        ],
    );
    let info = std::fs::read(work.join("root.info")).unwrap();
    let root_port = u16::from_le_bytes([info[40], info[41]]);
    assert!(
        (41000..=41003).contains(&root_port),
        "the root info names port {root_port}, not one of HCCL_HOST_SOCKET_PORT_RANGE"
    );
    // Ranks 0 and 1 (host 0) connect to ranks 2 and 3 (host 1), which listen on the first
    // two free ports of HCCL_NPU_SOCKET_PORT_RANGE in the order written: 42100, 42000.
    let c1 = connections(&h, 1);
    let c0 = connections(&h, 0);
    let mut served: Vec<u16> = c1.iter().map(|c| c.0).collect();
    served.sort_unstable();
    served.dedup();
    assert_eq!(served, vec![42000, 42100], "host 1's connections: {c1:?}");
    let mut reached: Vec<u16> = c0.iter().map(|c| c.1).collect();
    reached.sort_unstable();
    reached.dedup();
    assert_eq!(reached, vec![42000, 42100], "host 0's connections: {c0:?}");
    assert_eq!(c0.len(), 4, "host 0's connections: {c0:?}");
    drop(h);
    wait_all(ps, Duration::from_secs(30));
}

#[test]
fn the_ip_whitelist_admits_the_listed_hosts_and_drops_the_others() {
    let work = scratch("hosts-whitelist");
    let h = Hosts::create(2, &work);
    let prog = exe("hccl_hosts.cpp");
    let both = work.join("both.json");
    let only0 = work.join("only0.json");
    std::fs::write(
        &both,
        format!(
            r#"{{"host_ip": ["{}", "{}"], "device_ip": []}}"#,
            h.ip(0),
            h.ip(1)
        ),
    )
    .unwrap();
    std::fs::write(&only0, format!(r#"{{"host_ip": ["{}"]}}"#, h.ip(0))).unwrap();
    let go = |name: &str, file: &Path, timeout: &str| {
        let root_file = work.join(format!("{name}.info"));
        job(
            &h,
            &work,
            &[1, 1],
            Launch::RootInfo,
            &prog,
            &["loop", root_file.to_str().unwrap()],
            &[
                ("LOOP_ITERS", "2"),
                ("ASCEND_GLOBAL_LOG_LEVEL", "2"),
                ("HCCL_WHITELIST_DISABLE", "0"),
                ("HCCL_WHITELIST_FILE", file.to_str().unwrap()),
                ("HCCL_CONNECT_TIMEOUT", timeout),
            ],
        )
    };
    // Both hosts listed: the job runs.
    let done = wait_all(go("both", &both, "60"), Duration::from_secs(120));
    all_ok(&done);
    assert!(done[1].out.contains("rank 1: done"), "{}", done[1].out);
    // Host 1 not listed: the root drops its rank, saying why, and init fails on both.
    let done = wait_all(go("only0", &only0, "5"), Duration::from_secs(120));
    for d in &done {
        assert_eq!(d.code, Some(3), "{}:\n{}", d.what, d.out);
    }
    assert!(
        done[0].out.contains("dropped a connection from 10.201.0.2")
            && done[0]
                .out
                .contains("10.201.0.2 is not in the IP whitelist (HCCL_WHITELIST_FILE="),
        "{}",
        done[0].out
    );
    assert!(
        done[1].out.contains("cannot reach the communicator's root")
            && done[1].out.contains("IP whitelist"),
        "{}",
        done[1].out
    );
    // On without a file: HcclGetRootInfo fails naming both variables.
    let mut c = h.command(0, &prog, &work);
    c.args(["loop", work.join("none.info").to_str().unwrap()])
        .env("RANK_ID", "0")
        .env("RANK_SIZE", "2")
        .env("HCCL_WHITELIST_DISABLE", "0")
        .env_remove("HCCL_WHITELIST_FILE");
    let done = wait_all(vec![spawn(c, &work, "rank 0")], Duration::from_secs(60));
    assert_eq!(done[0].code, Some(3), "{}", done[0].out);
    assert!(
        done[0].out.contains("HcclGetRootInfo")
            && done[0].out.contains("HCCL_WHITELIST_DISABLE=0")
            && done[0].out.contains("HCCL_WHITELIST_FILE does not name"),
        "{}",
        done[0].out
    );
}

#[test]
fn npu_emu_run_nnodes_jobs_outlast_the_launchers_silence_limit() {
    // The launchers' control connections carry heartbeats: a job quiet for longer than
    // their 10 s silence limit is not mistaken for a vanished node.
    let work = scratch("hosts-quiet");
    let h = Hosts::create(2, &work);
    let done = wait_all(
        job(
            &h,
            &work,
            &[1, 1],
            Launch::NpuEmuRun,
            "sleep".as_ref(),
            &["13"],
            &[],
        ),
        Duration::from_secs(120),
    );
    all_ok(&done);
}
