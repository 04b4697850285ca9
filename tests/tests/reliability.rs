//! The reliability campaign of issue 16 as tests: one regression test per defect it found,
//! and the fault suite (kill -9 and SIGSTOP of a rank mid-collective at 4 and 8 ranks, with
//! the time to the error and what is left in `/dev/shm` checked; `/dev/shm` full at every
//! step of a job's life on a small tmpfs; two users attacking each other's node directory).
//!
//! The programs are `tests/c/reliab/rel_proc.c` (one process) and `rel_job.cpp` (one rank of
//! an HCCL job). Tests that need root (mounting a tmpfs, a second uid) say why they are
//! skipped elsewhere; CI runs as root and runs them all.

use npu_emu_tests::{command, compile, node_dir, npu_emu_bin, scratch};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
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
    let stem = Path::new(src)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let out = scratch(&format!("build-{stem}")).join(&stem);
    compile(
        &[&format!("reliab/{src}")],
        &out,
        &["hccl", "ascendcl"],
        &[],
    );
    m.insert(src.to_string(), out.clone());
    out
}

fn is_root() -> bool {
    // SAFETY: plain getter.
    unsafe { libc::geteuid() == 0 }
}

fn skip_unless_root(test: &str) -> bool {
    if is_root() {
        return false;
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{test} needs root, and CI runs as root"
    );
    eprintln!("SKIPPED {test}: needs root");
    true
}

/// Bytes of `/dev/shm` the files of a node directory take (allocated blocks).
fn node_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.blocks() * 512)
                .sum()
        })
        .unwrap_or(0)
}

/// Bytes of device memory (HBM files) a node directory holds.
fn hbm_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("hbm."))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.blocks() * 512)
                .sum()
        })
        .unwrap_or(0)
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Reapers whose working directory is `work` (the processes of a test run there).
fn reapers_of(work: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() != "npu-emu-reaper" {
            continue;
        }
        let st = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if st
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
        {
            continue;
        }
        if std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == work) {
            out.push(pid);
        }
    }
    out
}

/// Wait (at most `limit`) until the node in `work` holds no device memory, no HCCL control
/// block and no job directory, and its reaper has exited; returns how long it took, or
/// panics saying what is left.
fn wait_clean(work: &Path, limit: Duration) -> Duration {
    let node = node_dir(work);
    let t0 = Instant::now();
    loop {
        let hbm = hbm_bytes(&node);
        let names = names_in(&node);
        let blocks: Vec<&String> = names.iter().filter(|n| n.starts_with("hccl-")).collect();
        let jobs = names_in(&node.join("jobs"));
        let reapers = reapers_of(work);
        // Only the 4 KiB header may stay (the tables are given back when nothing is left).
        let bytes = node_bytes(&node);
        if hbm == 0 && blocks.is_empty() && jobs.is_empty() && reapers.is_empty() && bytes <= 4096 {
            return t0.elapsed();
        }
        if t0.elapsed() > limit {
            panic!(
                "after {limit:?} the node {} still holds {hbm} bytes of device memory ({bytes} \
                 in all), control blocks {blocks:?}, jobs {jobs:?}, reapers {reapers:?} (files: \
                 {names:?})",
                node.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A process of a test, its output going to a file (read with [`Proc::out`]).
struct Proc {
    child: Child,
    log: PathBuf,
    code: Option<Option<i32>>,
    signal: Option<i32>,
}

impl Proc {
    fn start(mut cmd: Command, log: PathBuf) -> Proc {
        let f = std::fs::File::create(&log).unwrap();
        cmd.stdout(Stdio::from(f.try_clone().unwrap()))
            .stderr(Stdio::from(f))
            .stdin(Stdio::null());
        Proc {
            child: cmd.spawn().expect("spawn"),
            log,
            code: None,
            signal: None,
        }
    }
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
    fn out(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    fn done(&mut self) -> bool {
        if self.code.is_none() {
            if let Some(st) = self.child.try_wait().unwrap() {
                self.code = Some(st.code());
                self.signal = st.signal();
            }
        }
        self.code.is_some()
    }
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.code.is_none() {
            // SAFETY: plain syscalls on our own child.
            unsafe { libc::kill(self.pid(), libc::SIGCONT) };
            self.kill();
        }
    }
}

/// Start `n` ranks of `rel_job ARGS` in `work` (root info through `work/root.info` unless
/// `env` sets RANK_TABLE_FILE).
fn ranks(work: &Path, n: u32, args: &[&str], env: &[(&str, &str)]) -> Vec<Proc> {
    (0..n).map(|r| rank(work, r, n, args, env)).collect()
}

/// Rank `r` of `n` (see [`ranks`]).
fn rank(work: &Path, r: u32, n: u32, args: &[&str], env: &[(&str, &str)]) -> Proc {
    let mut c = command(&exe("rel_job.cpp"), work);
    c.env("RANK_ID", r.to_string())
        .env("RANK_SIZE", n.to_string())
        .env("ROOT_FILE", work.join("root.info"))
        .env("HCCL_CONNECT_TIMEOUT", "60")
        .env_remove("JOB_ID")
        .env_remove("NPU_EMU_JOB_ID")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    Proc::start(c, work.join(format!("rank{r}.log")))
}

/// Wait until every process is done (at most `limit`, then kill them all and panic).
fn wait_all(ps: &mut [Proc], limit: Duration) {
    let t0 = Instant::now();
    while !ps.iter_mut().all(|p| p.done()) {
        if t0.elapsed() > limit {
            let outs: Vec<String> = ps.iter().map(|p| p.out()).collect();
            for p in ps.iter_mut() {
                p.kill();
            }
            panic!("still running after {limit:?}:\n{}", outs.join("\n---\n"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for(p: &Proc, text: &str, limit: Duration) {
    let t0 = Instant::now();
    while !p.out().contains(text) {
        assert!(
            t0.elapsed() < limit,
            "no {text:?} after {limit:?}:\n{}",
            p.out()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn cleanup(work: &Path) {
    let _ = std::fs::remove_dir_all(node_dir(work));
}

/// Removes a test's node directory when the test ends, passed or failed.
struct NodeGuard(PathBuf);

impl NodeGuard {
    fn new(work: &Path) -> NodeGuard {
        NodeGuard(work.to_path_buf())
    }
}

impl Drop for NodeGuard {
    fn drop(&mut self) {
        cleanup(&self.0);
    }
}

fn rel_proc(work: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut c = command(&exe("rel_proc.c"), work);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let r = npu_emu_tests::run(c);
    (r.code, r.all())
}

// ----- defect 6: dead processes keep their device memory -----

#[test]
fn device_memory_of_an_exited_process_comes_back_at_once() {
    let work = scratch("rel-exit");
    let _node = NodeGuard::new(&work);
    let (code, out) = rel_proc(&work, &["exit", "512"], &[("NPU_EMU_HBM_SIZE", "2G")]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("ready"), "{out}");
    // No other process opens the node: the reaper gives the 512 MiB back by itself.
    let took = wait_clean(&work, Duration::from_secs(10));
    eprintln!(
        "exit() without aclFinalize: 512 MiB back after {took:?}; {} bytes left in the node",
        node_bytes(&node_dir(&work))
    );
    cleanup(&work);
}

#[test]
fn a_killed_launcher_leaves_no_job_directory_and_no_memory() {
    let work = scratch("rel-launcher");
    let _node = NodeGuard::new(&work);
    let mut c = command(&npu_emu_bin(), &work);
    c.args(["run", "-n", "4"])
        .arg(exe("rel_job.cpp"))
        .args(["loop", "0", "65536"])
        .env("NPU_EMU_HBM_SIZE", "1G");
    let mut launcher = Proc::start(c, work.join("launcher.log"));
    wait_for(
        &launcher,
        "[rank 3] rank 3: looping",
        Duration::from_secs(60),
    );
    assert_eq!(names_in(&node_dir(&work).join("jobs")).len(), 1);
    // SAFETY: our own child.
    unsafe { libc::kill(launcher.pid(), libc::SIGKILL) };
    launcher.kill();
    // Its ranks get SIGTERM (they die with it); the reaper clears their memory and the
    // job directory.
    let took = wait_clean(&work, Duration::from_secs(20));
    eprintln!("killed launcher: job directory and memory gone after {took:?}");
    cleanup(&work);
}

// ----- the fault suite: kill -9 / SIGSTOP of a rank mid-collective -----

/// `n` ranks AllReduce in a loop; rank 1 is killed with `sig` once all loop. Returns the
/// survivors' outputs and the time from the signal to the last survivor's exit.
fn fault(n: u32, sig: i32, env: &[(&str, &str)]) -> (Vec<String>, Duration) {
    let work = scratch(&format!("rel-fault-{n}-{sig}"));
    let _node = NodeGuard::new(&work);
    let mut env = env.to_vec();
    env.push(("NPU_EMU_HBM_SIZE", "1G"));
    let mut ps = ranks(&work, n, &["loop", "0", "262144"], &env);
    for p in &ps {
        wait_for(p, "looping", Duration::from_secs(120));
    }
    let mut victim = ps.remove(1);
    // SAFETY: our own child.
    unsafe { libc::kill(victim.pid(), sig) };
    let t0 = Instant::now();
    let mut survivors = ps;
    wait_all(&mut survivors, Duration::from_secs(120));
    let took = t0.elapsed();
    let outs: Vec<String> = survivors.iter().map(|p| p.out()).collect();
    for (i, p) in survivors.iter().enumerate() {
        assert_eq!(p.code, Some(Some(3)), "survivor {i}:\n{}", outs[i]);
    }
    // SAFETY: our own (possibly stopped) child.
    unsafe { libc::kill(victim.pid(), libc::SIGCONT) };
    victim.kill();
    // Everything the job had goes back, with nobody opening the node again.
    let clean = wait_clean(&work, Duration::from_secs(20));
    eprintln!(
        "{n} ranks, rank 1 got signal {sig}: the others failed after {took:?}; the node was \
         clean {clean:?} after the last rank died, {} bytes left",
        node_bytes(&node_dir(&work))
    );
    cleanup(&work);
    (outs, took)
}

#[test]
fn a_rank_killed_mid_collective_fails_the_others_fast_and_leaves_nothing() {
    for n in [4, 8] {
        let (outs, took) = fault(n, libc::SIGKILL, &[]);
        for o in &outs {
            // Directly ("rank 1 (pid …) died"), or through a peer that failed first and
            // whose reason names it.
            assert!(
                o.contains("rank 1 (pid") && (o.contains("died") || o.contains("DEAD")),
                "{o}"
            );
        }
        // Death is noticed by the liveness check (every 200 ms), not HCCL_EXEC_TIMEOUT.
        assert!(took < Duration::from_secs(15), "{n} ranks: {took:?}");
    }
}

#[test]
fn a_stopped_rank_is_named_as_stopped_with_a_hint_before_the_timeout() {
    for n in [4, 8] {
        let (outs, took) = fault(n, libc::SIGSTOP, &[("HCCL_EXEC_TIMEOUT", "8")]);
        for o in &outs {
            assert!(o.contains("timed out after 8 s (HCCL_EXEC_TIMEOUT)"), "{o}");
            assert!(o.contains("the processes of ranks [1] are stopped"), "{o}");
            assert!(o.contains("alive but STOPPED (state T"), "{o}");
            // The hint after half the timeout (a minute by default), naming rank 1.
            assert!(
                o.contains("no progress for 4 s waiting for ranks [1"),
                "{o}"
            );
        }
        assert!(took >= Duration::from_secs(7), "{took:?}");
        assert!(took < Duration::from_secs(40), "{took:?}");
    }
}

#[test]
fn a_whole_job_killed_leaves_nothing() {
    let work = scratch("rel-killall");
    let _node = NodeGuard::new(&work);
    let mut ps = ranks(
        &work,
        4,
        &["loop", "0", "262144"],
        &[("NPU_EMU_HBM_SIZE", "1G")],
    );
    for p in &ps {
        wait_for(p, "looping", Duration::from_secs(120));
    }
    assert!(hbm_bytes(&node_dir(&work)) > 0);
    for p in ps.iter_mut() {
        p.kill();
    }
    let took = wait_clean(&work, Duration::from_secs(20));
    eprintln!(
        "4 ranks killed with SIGKILL: node clean after {took:?}, {} bytes left",
        node_bytes(&node_dir(&work))
    );
    cleanup(&work);
}

// ----- defect 1: /dev/shm full -----

/// A small tmpfs for a node (unmounted on drop).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn new(work: &Path, size: &str) -> Tmpfs {
        let d = node_dir(work);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let st = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(&d)
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs failed");
        Tmpfs(d)
    }
    fn reset(&self) {
        for n in names_in(&self.0) {
            let p = self.0.join(n);
            let _ = std::fs::remove_dir_all(&p);
            let _ = std::fs::remove_file(&p);
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn step_names(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.split("step ").nth(1))
        .filter_map(|l| l.split(" -> ").next())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_full_dev_shm_is_an_error_at_every_step_of_a_process() {
    if skip_unless_root("a_full_dev_shm_is_an_error_at_every_step_of_a_process") {
        return;
    }
    let work = scratch("rel-full");
    let _node = NodeGuard::new(&work);
    let fs = Tmpfs::new(&work, "96m");
    let fill = fs.0.join("fill");
    let fill = fill.to_str().unwrap();
    let env = [("NPU_EMU_HBM_SIZE", "128M"), ("NPU_EMU_DEVICES", "2")];
    let (code, out) = rel_proc(&work, &["steps"], &env);
    assert_eq!(code, Some(0), "{out}");
    let steps = step_names(&out);
    assert!(steps.len() >= 14, "{out}");
    for s in &steps {
        fs.reset();
        let mut e = env.to_vec();
        e.extend([("FILL_AT", s.as_str()), ("FILL_FILE", fill)]);
        let (code, out) = rel_proc(&work, &["steps"], &e);
        assert_eq!(
            code,
            Some(0),
            "full /dev/shm before step {s}: crashed?\n{out}"
        );
        assert!(
            out.contains("filled") && out.contains("steps done"),
            "{s}:\n{out}"
        );
        // What failed says why (the first failure: the file system is full).
        let failed: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("step ") && !l.contains(" -> 0 ") && !l.contains("skipped"))
            .collect();
        for l in &failed {
            assert!(l.len() > 40, "{s}: a failure without a message: {l}");
        }
        if let Some(first) = failed.first() {
            assert!(
                first.contains("is full") || first.contains("No space left"),
                "{s}: the first failure does not say the file system is full: {first}\n{out}"
            );
        }
    }
}

#[test]
fn a_full_dev_shm_is_an_error_at_every_step_of_an_hccl_job() {
    if skip_unless_root("a_full_dev_shm_is_an_error_at_every_step_of_an_hccl_job") {
        return;
    }
    let work = scratch("rel-fulljob");
    let _node = NodeGuard::new(&work);
    let fs = Tmpfs::new(&work, "48m");
    let fill = fs.0.join("fill");
    let fill = fill.to_str().unwrap().to_string();
    let base = [
        ("NPU_EMU_HBM_SIZE", "64M"),
        ("NPU_EMU_DEVICES", "2"),
        ("HCCL_CONNECT_TIMEOUT", "20"),
        ("HCCL_EXEC_TIMEOUT", "20"),
    ];
    let mut ps = ranks(&work, 2, &["steps"], &base);
    wait_all(&mut ps, Duration::from_secs(120));
    let steps = step_names(&ps[0].out());
    assert!(steps.len() >= 13, "{}", ps[0].out());
    for s in &steps {
        fs.reset();
        let _ = std::fs::remove_file(work.join("root.info"));
        let mut e = base.to_vec();
        e.extend([("FILL_AT", s.as_str()), ("FILL_FILE", fill.as_str())]);
        let mut ps = ranks(&work, 2, &["steps"], &e);
        wait_all(&mut ps, Duration::from_secs(120));
        for (r, p) in ps.iter().enumerate() {
            assert_eq!(
                p.code,
                Some(Some(0)),
                "full /dev/shm before step {s}: rank {r} died (signal {:?}):\n{}",
                p.signal,
                p.out()
            );
            assert!(p.out().contains("steps done"), "{s}:\n{}", p.out());
        }
    }
}

// ----- defect 2 (and 9's directory mode): two users -----

/// A command run as the second user (uid/gid 54321; std drops root's supplementary groups).
fn as_other_user(mut c: Command) -> Command {
    c.uid(54321).gid(54321);
    c
}

#[test]
fn two_users_cannot_reach_each_others_node() {
    if skip_unless_root("two_users_cannot_reach_each_others_node") {
        return;
    }
    let work = scratch("rel-users");
    let _node = NodeGuard::new(&work);
    // The test programs must be reachable by the other user.
    let prog = exe("rel_proc.c");
    let node = node_dir(&work);
    let victim_file = work.join("precious");
    std::fs::write(&victim_file, "precious").unwrap();

    // 1. The other user makes the victim's node directory first, open to all, with a link
    //    to a file of the victim where a node file goes.
    let st = as_other_user(Command::new("sh"))
        .arg("-c")
        .arg(format!(
            "mkdir -m 777 {0} && ln -s {1} {0}/hbm.0 && ln -s {1} {0}/procs",
            node.display(),
            victim_file.display()
        ))
        .status()
        .unwrap();
    assert!(st.success());
    let (code, out) = rel_proc(&work, &["exit", "1"], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(&format!(
            "the node directory {} belongs to uid 54321",
            node.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("set NPU_EMU_NODE_DIR to a directory of your own"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&victim_file).unwrap(), "precious");
    std::fs::remove_dir_all(&node).unwrap();

    // 2. The victim's node; the other user tries to use it, read it and list it.
    let mut c = command(&prog, &work);
    c.args(["hold", "16"]);
    let victim = Proc::start(c, work.join("victim.log"));
    wait_for(&victim, "ready", Duration::from_secs(30));
    assert_eq!(std::fs::metadata(&node).unwrap().mode() & 0o777, 0o700);
    let mut c = as_other_user(command(&prog, &work));
    c.args(["exit", "1"]).current_dir("/");
    let r = npu_emu_tests::run(c);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.all().contains("belongs to another user"), "{}", r.all());
    let r = npu_emu_tests::run({
        let mut c = as_other_user(Command::new("sh"));
        c.arg("-c").arg(format!(
            "ls {0}; cat {0}/hbm.0 | head -c 1; cat {0}/procs | head -c 1; echo end",
            node.display()
        ));
        c
    });
    assert!(
        r.stderr.matches("Permission denied").count() >= 3,
        "{}",
        r.all()
    );
    drop(victim);

    // 3. The other user's own node is its own business: it works for it, and the victim
    //    (root) refuses it when pointed at it.
    let theirs = PathBuf::from(format!("{}-other", node.display()));
    let mut c = as_other_user(command(&prog, &work));
    c.args(["exit", "1"])
        .env("NPU_EMU_NODE_DIR", &theirs)
        .current_dir("/");
    let r = npu_emu_tests::run(c);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let (code, out) = rel_proc(
        &work,
        &["exit", "1"],
        &[("NPU_EMU_NODE_DIR", theirs.to_str().unwrap())],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("belongs to uid 54321"), "{out}");
    let _ = std::fs::remove_dir_all(&theirs);
    cleanup(&work);
}

// ----- defect 5: two jobs with the same rank table -----

fn rank_table(devices: u32) -> String {
    let devs: Vec<String> = (0..devices)
        .map(|d| format!(r#"{{"device_id":"{d}","device_ip":"192.168.1.{d}","rank_id":"{d}"}}"#))
        .collect();
    format!(
        r#"{{"status":"completed","version":"1.0","server_count":"1","server_list":[{{"server_id":"127.0.0.1","device":[{}]}}]}}"#,
        devs.join(",")
    )
}

#[test]
fn two_jobs_with_the_same_rank_table_never_meet() {
    let work = scratch("rel-twojobs");
    let _node = NodeGuard::new(&work);
    let table = work.join("rank_table.json");
    std::fs::write(&table, rank_table(2)).unwrap();
    let t = table.to_str().unwrap();
    // Jobs told apart by the launcher's id (Open MPI's PMIx namespace, as mpirun sets it),
    // and by nothing at all but being started from different sessions.
    for round in 0..3 {
        let mut all = Vec::new();
        for job in 1..=2 {
            let ns = format!("{}{round}{job}", std::process::id());
            let tag = job.to_string();
            let mut ps = ranks(
                &work,
                2,
                &["loop", "50", "4096"],
                &[
                    ("RANK_TABLE_FILE", t),
                    ("JOB_TAG", tag.as_str()),
                    ("PMIX_NAMESPACE", ns.as_str()),
                    ("HCCL_CONNECT_TIMEOUT", "30"),
                ],
            );
            for (r, p) in ps.iter_mut().enumerate() {
                p.log = work.join(format!("job{job}-round{round}-rank{r}.log"));
            }
            all.extend(ps);
        }
        wait_all(&mut all, Duration::from_secs(120));
        for p in &all {
            assert_eq!(p.code, Some(Some(0)), "{}", p.out());
        }
    }
    // No launcher at all: two jobs started by hand, each from its own session (a shell
    // script run in two terminals).
    let script = |job: u32| {
        format!(
            "for r in 0 1; do RANK_ID=$r RANK_SIZE=2 JOB_TAG={job} {} loop 50 4096 > {}/bare{job}-$r.log 2>&1 & done; wait",
            exe("rel_job.cpp").display(),
            work.display()
        )
    };
    let mut jobs: Vec<Proc> = (1..=2)
        .map(|job| {
            let mut c = command(Path::new("setsid"), &work);
            c.arg("sh")
                .arg("-c")
                .arg(script(job))
                .env("RANK_TABLE_FILE", t)
                .env("HCCL_CONNECT_TIMEOUT", "30")
                .env_remove("JOB_ID")
                .env_remove("NPU_EMU_JOB_ID")
                .env_remove("PMIX_NAMESPACE")
                .env_remove("OMPI_MCA_ess_base_jobid")
                .env_remove("SLURM_JOB_ID")
                .env_remove("TORCHELASTIC_RUN_ID");
            Proc::start(c, work.join(format!("bare{job}.log")))
        })
        .collect();
    wait_all(&mut jobs, Duration::from_secs(120));
    for job in 1..=2 {
        for r in 0..2 {
            let out = std::fs::read_to_string(work.join(format!("bare{job}-{r}.log"))).unwrap();
            assert!(out.contains("loop done"), "job {job} rank {r}:\n{out}");
            assert!(!out.contains("MIXED"), "{out}");
        }
    }
    cleanup(&work);
}

// ----- defect 8: queued HCCL operations recheck their buffers -----

#[test]
fn a_buffer_freed_before_a_queued_collective_runs_is_an_error() {
    for realloc in [false, true] {
        let work = scratch("rel-freed");
        let _node = NodeGuard::new(&work);
        let env: &[(&str, &str)] = if realloc { &[("REALLOC", "1")] } else { &[] };
        let mut ps = ranks(&work, 2, &["freed"], env);
        wait_all(&mut ps, Duration::from_secs(60));
        let o0 = ps[0].out();
        let want = if realloc {
            "was freed and allocated again (it is another allocation now) after HcclAllReduce"
        } else {
            "was freed (it is in freed memory"
        };
        assert!(o0.contains("rank 0: sync -> 507018"), "{o0}");
        assert!(o0.contains("recvBuf=0x") && o0.contains(want), "{o0}");
        assert!(
            o0.contains("device buffers must stay allocated until the stream is synchronized"),
            "{o0}"
        );
        if realloc {
            assert!(o0.contains("rank 0: new allocation untouched"), "{o0}");
        }
        let o1 = ps[1].out();
        assert!(
            o1.contains("rank 1: sync -> 507018") && o1.contains("rank 0 failed"),
            "{o1}"
        );
        cleanup(&work);
    }
}

// ----- defect 9: control-block contents and ids -----

/// Offset of the published receive buffer's offset in rank `r`'s slot of a control block,
/// for the job's first collective (layout of libhccl/src/shm.rs: a 256-byte header,
/// `SLOT_BYTES` per slot; the publications, two lines each by sequence parity, start at
/// line 5 of a slot, and collective #1 uses the second).
fn recv_offset_field(r: u64) -> u64 {
    256 + r * SLOT_BYTES + (5 + 2) * 64 + 24 + 8
}

/// Bytes of a rank's slot in the control block: 16 lines and the fingerprint ring (32).
const SLOT_BYTES: u64 = (16 + 32) * 64;

#[test]
fn a_forged_published_offset_never_reaches_another_process() {
    let work = scratch("rel-forge-offset");
    let _node = NodeGuard::new(&work);
    // A bystander on device 1 with 16 MiB of 0x5a.
    let mut c = command(&exe("rel_proc.c"), &work);
    c.args(["victim", "1", "16"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut victim = c.spawn().unwrap();
    let mut vin = victim.stdin.take().unwrap();
    let mut vout = BufReader::new(victim.stdout.take().unwrap());
    let mut line = String::new();
    vout.read_line(&mut line).unwrap();
    let vaddr = u64::from_str_radix(line.trim().trim_start_matches("victim at 0x"), 16).unwrap();
    let voff = vaddr - (0x1100_0000_0000u64 + (1u64 << 40));
    // Ranks 0 and 1 publish and wait for rank 2, whose stream is held.
    let go = work.join("go");
    let mut ps = ranks(
        &work,
        3,
        &["held"],
        &[
            ("GO_FILE", go.to_str().unwrap()),
            ("HCCL_EXEC_TIMEOUT", "30"),
        ],
    );
    let node = node_dir(&work);
    let t0 = Instant::now();
    let block = loop {
        let b = names_in(&node).into_iter().find(|n| n.starts_with("hccl-"));
        // Rank 1 posted (its post word, line 2 of its slot, reached 1).
        if let Some(b) = b {
            let data = std::fs::read(node.join(&b)).unwrap_or_default();
            let post = 256 + SLOT_BYTES as usize + 2 * 64;
            if data.len() > post + 4 && data[post] == 1 {
                break node.join(b);
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "rank 1 never published"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Point rank 1's receive buffer at the bystander's memory, and let rank 2 go.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&block)
        .unwrap();
    std::os::unix::fs::FileExt::write_at(&f, &voff.to_le_bytes(), recv_offset_field(1)).unwrap();
    std::fs::write(&go, "").unwrap();
    wait_all(&mut ps, Duration::from_secs(60));
    let outs: Vec<String> = ps.iter().map(|p| p.out()).collect();
    assert!(
        outs.iter().any(|o| o.contains("do not carry its tag")),
        "{}",
        outs.join("\n---\n")
    );
    vin.write_all(b"check\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut vout, &mut rest).unwrap();
    let _ = victim.wait();
    assert!(rest.contains("victim intact"), "{rest}");
    cleanup(&work);
}

#[test]
fn a_directory_listing_gives_no_communicator_away() {
    let work = scratch("rel-forge-root");
    let _node = NodeGuard::new(&work);
    // Rank 0 of a job waits in init for rank 1 (which starts late).
    let r0 = rank(&work, 0, 2, &["loop", "5", "1024"], &[]);
    let node = node_dir(&work);
    let t0 = Instant::now();
    while !work.join("root.info").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "rank 0 never wrote its root info"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Rank 0 now waits in init. Whatever the node directory lists meanwhile (with the TCP
    // bootstrap of root infos: no control block until every rank joined) must not give the
    // communicator's id away.
    std::thread::sleep(Duration::from_secs(2));
    let listed = names_in(&node).into_iter().find(|n| n.starts_with("hccl-"));
    // A process of the same user builds a root info from the listing (as if the id were the
    // file name), or from a guess when nothing is listed, and tries to join as rank 1.
    let ri = std::fs::read(work.join("root.info")).unwrap();
    let mut forged = ri.clone();
    match &listed {
        Some(name) => {
            let hex = &name[5..];
            for i in 0..16 {
                forged[20 + i] = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
            }
        }
        None => {
            for b in &mut forged[20..36] {
                *b ^= 0x5a;
            }
        }
    }
    assert_ne!(forged, ri, "the file name is not the id");
    let fw = scratch("rel-forger");
    std::fs::write(fw.join("root.info"), &forged).unwrap();
    let mut c = command(&exe("rel_job.cpp"), &work);
    c.env("RANK_ID", "1")
        .env("RANK_SIZE", "2")
        .env("ROOT_FILE", fw.join("root.info"))
        .env("HCCL_CONNECT_TIMEOUT", "3")
        .args(["loop", "1", "1024"]);
    let r = npu_emu_tests::run(c);
    assert_eq!(r.code, Some(3), "the forger must not get in:\n{}", r.all());
    // Refused at the root's handshake (TCP bootstrap), or left waiting until the timeout.
    assert!(
        r.all().contains("refused us") || r.all().contains("timed out"),
        "{}",
        r.all()
    );
    // The real rank 1 joins and the job completes with its own data.
    let r1 = rank(&work, 1, 2, &["loop", "5", "1024"], &[]);
    let mut both = [r0, r1];
    wait_all(&mut both, Duration::from_secs(60));
    for p in &both {
        assert_eq!(p.code, Some(Some(0)), "{}", p.out());
    }
    cleanup(&work);
}

// ----- defect 11: config and rank-table files -----

#[test]
fn config_and_rank_table_files_are_capped_and_must_be_regular() {
    let work = scratch("rel-files");
    let _node = NodeGuard::new(&work);
    let big = work.join("big.json");
    std::fs::write(&big, vec![b' '; 17 << 20]).unwrap();
    for (path, code, text) in [
        (
            "/dev/zero",
            "100003",
            "it is a character device, not a regular file",
        ),
        (
            big.to_str().unwrap(),
            "100005",
            "more than the 16777216 bytes allowed",
        ),
    ] {
        let (c, out) = rel_proc(&work, &["config", path], &[]);
        assert_eq!(c, Some(0), "{out}");
        assert!(
            out.contains(&format!("aclInit -> {code}")) && out.contains(text),
            "{out}"
        );
    }
    for path in ["/dev/zero", big.to_str().unwrap()] {
        let mut ps = ranks(&work, 1, &["loop", "1", "16"], &[("RANK_TABLE_FILE", path)]);
        wait_all(&mut ps, Duration::from_secs(30));
        let o = ps[0].out();
        assert_eq!(ps[0].code, Some(Some(3)), "{o}");
        assert!(
            o.contains("-> 10: ") && o.contains("cannot read rank table file"),
            "{o}"
        );
    }
    cleanup(&work);
}

// ----- defect 7: usable device memory -----

#[test]
fn usable_device_memory_for_common_sizes() {
    let work = scratch("rel-usable");
    let _node = NodeGuard::new(&work);
    let hbm: u64 = 2 << 30;
    let mut report = Vec::new();
    for mb in [1u64, 16, 64, 1024] {
        let (code, out) = rel_proc(
            &work,
            &["usable", &mb.to_string()],
            &[("NPU_EMU_HBM_SIZE", "2G"), ("NPU_EMU_DEVICES", "1")],
        );
        assert_eq!(code, Some(0), "{out}");
        let line = out.lines().find(|l| l.starts_with("usable ")).unwrap();
        let field = |k: &str| -> u64 {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{k}=")))
                .unwrap()
                .parse()
                .unwrap()
        };
        let (size, count) = (field("size"), field("count"));
        // CANN pads every allocation by 32 bytes; what fits at best:
        let ideal = hbm / (size + 32);
        assert_eq!(count, ideal, "{mb} MiB: {count} of {ideal} fit\n{out}");
        assert_eq!(field("code"), 207001, "{out}");
        report.push(format!(
            "{mb} MiB: {:.1}%",
            100.0 * (count * size) as f64 / hbm as f64
        ));
        cleanup(&work);
    }
    eprintln!("usable fraction of a 2 GiB device: {}", report.join(", "));
}

// ----- defects 3 and 4: asynchronous copies -----

#[test]
fn staged_copies_from_the_device_and_pinned_memory_freed_under_a_queued_copy() {
    let work = scratch("rel-copies");
    let _node = NodeGuard::new(&work);
    let r = npu_emu_tests::run(command(&exe("rel_copies.c"), &work));
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("copies passed"), "{}", r.all());
    cleanup(&work);
}
