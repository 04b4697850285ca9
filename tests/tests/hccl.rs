//! HCCL: real C++ programs (`tests/c/hccl_*.cpp`) as multi-process jobs started by hand
//! (RANK_ID/RANK_SIZE, root info shared through a file), by the launcher (`npu-emu run`,
//! rank table), from a hand-written rank table, and as threads
//! of one process; every op × dtype × reduce op × in/out-of-place checked against host
//! results; communicator management; faults checked by their messages with no process left
//! hanging.

use npu_emu_tests::{command, compile, node_dir, npu_emu_bin, run, scratch};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
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

/// What one rank did.
struct RankRun {
    code: Option<i32>,
    out: String,
}

/// Start `n` ranks of `prog` in `work` with RANK_ID/RANK_SIZE, wait at most `limit` (then
/// kill them all and fail), and return each rank's exit code and output.
fn run_ranks(
    prog: &Path,
    work: &Path,
    n: u32,
    args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
) -> Vec<RankRun> {
    let mut kids: Vec<(Child, PathBuf)> = Vec::new();
    for r in 0..n {
        let log = work.join(format!("rank{r}.log"));
        let f = std::fs::File::create(&log).unwrap();
        let mut c = command(prog, work);
        c.env("RANK_ID", r.to_string())
            .env("RANK_SIZE", n.to_string());
        for (k, v) in env {
            c.env(k, v);
        }
        c.args(args)
            .stdout(Stdio::from(f.try_clone().unwrap()))
            .stderr(Stdio::from(f));
        kids.push((c.spawn().expect("spawn rank"), log));
    }
    let start = Instant::now();
    let mut codes: Vec<Option<Option<i32>>> = vec![None; n as usize];
    while codes.iter().any(|c| c.is_none()) {
        for (i, (k, _)) in kids.iter_mut().enumerate() {
            if codes[i].is_none() {
                if let Some(st) = k.try_wait().unwrap() {
                    codes[i] = Some(st.code());
                }
            }
        }
        if start.elapsed() > limit {
            for (k, _) in kids.iter_mut() {
                let _ = k.kill();
                let _ = k.wait();
            }
            let outs: Vec<String> = kids
                .iter()
                .map(|(_, l)| std::fs::read_to_string(l).unwrap_or_default())
                .collect();
            panic!(
                "ranks still running after {limit:?} (killed):\n{}",
                outs.join("\n----\n")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kids.iter()
        .zip(codes)
        .map(|((_, l), c)| RankRun {
            code: c.unwrap(),
            out: std::fs::read_to_string(l).unwrap_or_default(),
        })
        .collect()
}

fn all_ok(runs: &[RankRun]) {
    for (r, x) in runs.iter().enumerate() {
        assert_eq!(x.code, Some(0), "rank {r} failed:\n{}", x.out);
        assert!(x.out.contains("passed"), "rank {r}:\n{}", x.out);
    }
}

fn no_leftover_blocks(work: &Path) {
    let node = node_dir(work);
    let left: Vec<String> = std::fs::read_dir(&node)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let hccl: Vec<&String> = left.iter().filter(|f| f.starts_with("hccl-")).collect();
    assert!(hccl.is_empty(), "control blocks left behind: {hccl:?}");
}

fn ops_processes(n: u32, extra: &[&str]) {
    let prog = exe("hccl_ops.cpp");
    let work = scratch(&format!("hccl-ops-p{n}"));
    let root = work.join("root.info");
    let mut args = vec![root.to_str().unwrap()];
    args.extend_from_slice(extra);
    let runs = run_ranks(&prog, &work, n, &args, &[], Duration::from_secs(240));
    all_ok(&runs);
    no_leftover_blocks(&work);
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

#[test]
fn ops_1_process() {
    ops_processes(1, &[]);
}

#[test]
fn ops_2_processes_with_big_sizes() {
    ops_processes(2, &["--big"]);
}

#[test]
fn ops_3_processes() {
    ops_processes(3, &[]);
}

#[test]
fn ops_4_processes() {
    ops_processes(4, &["--quick"]);
}

#[test]
fn ops_8_processes() {
    ops_processes(8, &["--quick"]);
}

fn ops_threads(n: u32, extra: &[&str]) {
    let prog = exe("hccl_ops.cpp");
    let work = scratch(&format!("hccl-ops-t{n}"));
    let mut c = command(&prog, &work);
    c.args(["--threads", &n.to_string()]).args(extra);
    let r = run(c);
    r.assert_ok();
    for i in 0..n {
        assert!(
            r.stdout.contains(&format!("hccl_ops rank {i}/{n} passed")),
            "{}",
            r.all()
        );
    }
    no_leftover_blocks(&work);
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

#[test]
fn ops_threads_2_3_8() {
    ops_threads(2, &[]);
    ops_threads(3, &[]);
    ops_threads(8, &["--quick"]);
}

/// The op matrix as a job of the launcher: `npu-emu run -n N` sets RANK_ID, RANK_SIZE,
/// ASCEND_DEVICE_ID and RANK_TABLE_FILE, and the program inits from that rank table.
fn ops_launcher(n: u32, extra: &[&str]) {
    let prog = exe("hccl_ops.cpp");
    let work = scratch(&format!("hccl-ops-launcher{n}"));
    let mut c = command(&npu_emu_bin(), &work);
    c.args(["run", "-n", &n.to_string(), "--timeout", "240"])
        .arg(&prog)
        .args(extra);
    let r = run(c);
    r.assert_ok();
    for i in 0..n {
        assert!(
            r.stdout
                .contains(&format!("[rank {i}] hccl_ops rank {i}/{n} passed")),
            "{}",
            r.all()
        );
    }
    no_leftover_blocks(&work);
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

#[test]
fn ops_through_the_launcher_3_and_8_ranks() {
    ops_launcher(3, &[]);
    ops_launcher(8, &["--quick"]);
}

#[test]
fn ops_from_rank_table() {
    let prog = exe("hccl_ops.cpp");
    let work = scratch("hccl-ops-table");
    // Ranks 0..3 on physical devices 3, 1, 0, 2 (ASCEND_DEVICE_ID given per rank below).
    let devs = [3, 1, 0, 2];
    let table = serde_json::json!({
        "status": "completed", "version": "1.0", "server_count": "1",
        "server_list": [{"server_id": "127.0.0.1", "device": devs.iter().enumerate().map(|(r, d)|
            serde_json::json!({"device_id": d.to_string(), "device_ip": format!("192.168.1.{r}"), "rank_id": r.to_string()})
        ).collect::<Vec<_>>()}]
    });
    let tpath = work.join("rank_table.json");
    std::fs::write(&tpath, table.to_string()).unwrap();
    // Each rank sets its own ASCEND_DEVICE_ID: start them one by one.
    let mut kids = Vec::new();
    for (r, d) in devs.iter().enumerate() {
        let log = work.join(format!("rank{r}.log"));
        let f = std::fs::File::create(&log).unwrap();
        let mut c = command(&prog, &work);
        c.env("RANK_ID", r.to_string())
            .env("RANK_SIZE", "4")
            .env("ASCEND_DEVICE_ID", d.to_string())
            .env("RANK_TABLE_FILE", &tpath)
            .arg("--quick")
            .stdout(Stdio::from(f.try_clone().unwrap()))
            .stderr(Stdio::from(f));
        kids.push((c.spawn().unwrap(), log));
    }
    let start = Instant::now();
    for (k, log) in kids.iter_mut() {
        loop {
            if let Some(st) = k.try_wait().unwrap() {
                let out = std::fs::read_to_string(&*log).unwrap();
                assert_eq!(st.code(), Some(0), "{out}");
                assert!(out.contains("passed"), "{out}");
                break;
            }
            if start.elapsed() > Duration::from_secs(120) {
                let _ = k.kill();
                panic!("rank hangs: {}", std::fs::read_to_string(&*log).unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

#[test]
fn communicator_management_and_rank_tables() {
    let prog = exe("hccl_init.cpp");
    let work = scratch("hccl-init");
    let mut c = command(&prog, &work);
    c.arg(&work);
    let r = run(c);
    r.assert_ok();
    assert!(r.stdout.contains("hccl_init passed"), "{}", r.all());
    no_leftover_blocks(&work);
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

fn faults(scenario: &str, n: u32, env: &[(&str, &str)]) -> Vec<RankRun> {
    let prog = exe("hccl_faults.cpp");
    let work = scratch(&format!("hccl-fault-{scenario}"));
    let root = work.join("root.info");
    let runs = run_ranks(
        &prog,
        &work,
        n,
        &[scenario, root.to_str().unwrap()],
        env,
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_dir_all(node_dir(&work));
    runs
}

#[test]
fn mismatched_calls_fail_every_rank_with_both_calls_shown() {
    for (sc, field) in [
        ("mismatch-count", "count"),
        ("mismatch-dtype", "dataType"),
        ("mismatch-op", "operation"),
    ] {
        let runs = faults(sc, 3, &[("HCCL_EXEC_TIMEOUT", "30")]);
        for (r, x) in runs.iter().enumerate() {
            assert_eq!(x.code, Some(3), "{sc} rank {r}:\n{}", x.out);
            assert!(
                x.out.contains(" -> 1: "),
                "{sc} rank {r} should get HCCL_E_PARA:\n{}",
                x.out
            );
            assert!(
                x.out.contains(&format!("differ in {field}")),
                "{sc} rank {r}:\n{}",
                x.out
            );
            assert!(
                x.out
                    .contains("rank 0: HcclAllReduce(count=1024, dataType=HCCL_DATA_TYPE_FP32"),
                "{}",
                x.out
            );
            assert!(
                x.out.contains("history of communicator"),
                "history missing:\n{}",
                x.out
            );
            // Logged under HCCL's own module, as CANN's libhccl logs, not the runtime's.
            assert_logged_under_hccl(&x.out, &format!("differ in {field}"));
        }
        let r1 = &runs[1].out;
        match sc {
            "mismatch-count" => assert!(r1.contains("rank 1: HcclAllReduce(count=512"), "{r1}"),
            "mismatch-dtype" => assert!(
                r1.contains("rank 1: HcclAllReduce(count=1024, dataType=HCCL_DATA_TYPE_INT32"),
                "{r1}"
            ),
            _ => assert!(r1.contains("rank 1: HcclBroadcast(count=1024"), "{r1}"),
        }
    }
}

/// `out` has an `[ERROR] HCCL(pid,tid): ` line containing `what` (and the history dump under
/// HCCL), and no line of the ASCENDCL module mentions it.
fn assert_logged_under_hccl(out: &str, what: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[ERROR] HCCL(") && l.contains(what)),
        "no [ERROR] HCCL( line with {what:?}:\n{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[ERROR] HCCL(") && l.contains("history of communicator")),
        "{out}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("ASCENDCL(") && l.contains(what)),
        "an HCCL error was logged under ASCENDCL:\n{out}"
    );
}

#[test]
fn hccl_errors_follow_the_hccl_module_log_level() {
    // ASCEND_MODULE_LOG_LEVEL=HCCL=4 silences HCCL's lines (the ACL runtime keeps the global
    // level); aclGetRecentErrMsg still returns the message.
    let runs = faults(
        "mismatch-count",
        3,
        &[
            ("HCCL_EXEC_TIMEOUT", "30"),
            ("ASCEND_MODULE_LOG_LEVEL", "HCCL=4"),
        ],
    );
    for (r, x) in runs.iter().enumerate() {
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
        let recent = x
            .out
            .lines()
            .find(|l| l.contains(" -> 1: "))
            .unwrap_or_else(|| panic!("rank {r}: no failure line:\n{}", x.out));
        assert!(recent.contains("differ in count"), "{}", x.out);
        assert!(
            !x.out.contains("[ERROR] HCCL("),
            "HCCL=4 should silence:\n{}",
            x.out
        );
        assert!(!x.out.contains("ASCENDCL("), "{}", x.out);
    }
    // The global level off, HCCL's own level at ERROR: only HCCL's lines are printed.
    let runs = faults(
        "mismatch-count",
        3,
        &[
            ("HCCL_EXEC_TIMEOUT", "30"),
            ("ASCEND_GLOBAL_LOG_LEVEL", "4"),
            ("ASCEND_MODULE_LOG_LEVEL", "HCCL=3"),
        ],
    );
    for (r, x) in runs.iter().enumerate() {
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
        assert_logged_under_hccl(&x.out, "differ in count");
    }
    // An invalid setting (an unknown module) is ignored as a whole: the global level applies.
    let runs = faults(
        "mismatch-count",
        3,
        &[
            ("HCCL_EXEC_TIMEOUT", "30"),
            ("ASCEND_MODULE_LOG_LEVEL", "HCCL=4:NOSUCHMODULE=4"),
        ],
    );
    for x in &runs {
        assert_logged_under_hccl(&x.out, "differ in count");
    }
}

#[test]
fn under_the_launcher_an_hccl_error_is_an_hccl_line_of_its_rank() {
    // As README's "How errors look": each rank's HCCL failure is an `[ERROR] HCCL(` line
    // prefixed with the rank, and the launcher names the failed rank.
    let prog = exe("hccl_faults.cpp");
    let work = scratch("hccl-fault-launcher");
    let root = work.join("root.info");
    let mut c = command(&npu_emu_bin(), &work);
    c.args(["run", "-n", "2", "--timeout", "120"])
        .arg(&prog)
        .arg("mismatch-count")
        .arg(&root)
        .env("HCCL_EXEC_TIMEOUT", "30");
    let r = run(c);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    assert_eq!(r.code, Some(3), "{}", r.all());
    assert!(r.stderr.contains("npu-emu run: job failed"), "{}", r.all());
    for rank in 0..2 {
        let p = format!("[rank {rank}] ");
        let own: Vec<&str> = r
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix(&p))
            .collect();
        // A rank whose peer came more than 20 ms late (a loaded machine) left the meeting to
        // its stream task: it learns of the mismatch at the synchronize, from the task's
        // HCCL line, and the runtime reports the stream's failure under ASCENDCL as well.
        let at_sync = r.stdout.contains(&format!(
            "[rank {rank}] rank {rank}: aclrtSynchronizeStream("
        ));
        assert!(
            own.iter().any(|l| l.starts_with("[ERROR] HCCL(")
                && (l.contains("HcclAllReduce: communicator")
                    || (at_sync && l.contains("failed on the stream: communicator")))),
            "rank {rank}:\n{}",
            r.all()
        );
        assert!(
            at_sync || !own.iter().any(|l| l.contains("ASCENDCL(")),
            "{}",
            r.all()
        );
        assert!(
            at_sync
                || r.stdout
                    .contains(&format!("[rank {rank}] rank {rank}: HcclAllReduce(")),
            "{}",
            r.all()
        );
    }
}

#[test]
fn a_rank_that_never_joins_is_named() {
    let t0 = Instant::now();
    let runs = faults("no-join", 3, &[("HCCL_CONNECT_TIMEOUT", "2")]);
    for r in [0, 2] {
        let x = &runs[r];
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
        assert!(
            x.out.contains(" -> 9: "),
            "HCCL_E_TIMEOUT expected:\n{}",
            x.out
        );
        assert!(x.out.contains("waiting for ranks [1] of 3"), "{}", x.out);
        assert!(x.out.contains("HCCL_CONNECT_TIMEOUT"), "{}", x.out);
    }
    assert!(t0.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_killed_rank_fails_the_others_quickly() {
    let runs = faults(
        "killed",
        3,
        &[("HCCL_EXEC_TIMEOUT", "120"), ("HCCL_CONNECT_TIMEOUT", "30")],
    );
    assert_eq!(
        runs[2].code, None,
        "rank 2 should have been killed:\n{}",
        runs[2].out
    );
    for r in [0, 1] {
        let x = &runs[r];
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
        assert!(x.out.contains("rank 2 (pid"), "{}", x.out);
        assert!(x.out.contains("died"), "{}", x.out);
    }
}

#[test]
fn a_send_without_receive_times_out_naming_the_peer() {
    let runs = faults("send-no-recv", 2, &[("HCCL_EXEC_TIMEOUT", "2")]);
    let x = &runs[0];
    assert_eq!(x.code, Some(3), "{}", x.out);
    assert!(x.out.contains("timed out after 2 s"), "{}", x.out);
    assert!(
        x.out
            .contains("rank 1 to post the HcclRecv matching this HcclSend"),
        "{}",
        x.out
    );
    assert!(x.out.contains("rank 1 (pid"), "{}", x.out);
    assert_eq!(runs[1].code, Some(0), "{}", runs[1].out);
}

#[test]
fn a_send_and_receive_that_disagree_fail_both() {
    let runs = faults("p2p-mismatch", 2, &[("HCCL_EXEC_TIMEOUT", "30")]);
    for (r, x) in runs.iter().enumerate() {
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
        assert!(
            x.out.contains("count=1024") && x.out.contains("count=512"),
            "{}",
            x.out
        );
        assert!(
            x.out.contains(&format!("rank {r}: async error 1")),
            "{}",
            x.out
        );
    }
}

#[test]
fn a_rank_that_destroyed_its_communicator_is_named() {
    let t0 = Instant::now();
    let runs = faults("destroy-early", 2, &[("HCCL_EXEC_TIMEOUT", "100")]);
    let x = &runs[0];
    assert_eq!(x.code, Some(3), "{}", x.out);
    assert!(
        x.out.contains("rank 1 destroyed its communicator"),
        "{}",
        x.out
    );
    assert_eq!(runs[1].code, Some(0), "{}", runs[1].out);
    assert!(t0.elapsed() < Duration::from_secs(30));
}

#[test]
fn destroy_before_synchronize_lets_queued_operations_finish() {
    let runs = faults("destroy-before-sync", 3, &[("HCCL_EXEC_TIMEOUT", "30")]);
    for x in &runs {
        assert_eq!(x.code, Some(0), "{}", x.out);
        assert!(x.out.contains("no failure"), "{}", x.out);
    }
}

#[test]
fn a_collective_refused_for_its_stream_does_not_hold_up_the_next_ones() {
    // The refused call took its turn in the communicator's order at the rendezvous; the next
    // collectives must not wait for it (they did, until HCCL_EXEC_TIMEOUT, then failed).
    for n in [1, 2] {
        let runs = faults("bad-stream", n, &[("HCCL_EXEC_TIMEOUT", "5")]);
        for (r, x) in runs.iter().enumerate() {
            assert_eq!(x.code, Some(0), "{n} ranks, rank {r}:\n{}", x.out);
            assert!(x.out.contains("bad stream refused with"), "{}", x.out);
            // One error for one bad call: the idle-stream query behind it logs nothing.
            assert!(!x.out.contains("stream_idle"), "{}", x.out);
            assert!(x.out.contains("no failure"), "{}", x.out);
        }
    }
}

#[test]
fn entry_log_shows_calls_and_durations() {
    let runs = faults("entry-log", 2, &[("HCCL_ENTRY_LOG_ENABLE", "1")]);
    for x in &runs {
        assert_eq!(x.code, Some(0), "{}", x.out);
        assert!(x.out.contains("HcclAllReduce(sendBuf="), "{}", x.out);
        assert!(
            x.out.contains("dataType=4, op=0") && x.out.contains("-> HCCL_SUCCESS in"),
            "{}",
            x.out
        );
        assert!(x.out.contains("HcclCommInitRootInfo(nRanks=2"), "{}", x.out);
    }
}

#[test]
fn control_blocks_of_dead_jobs_are_collected() {
    let prog = exe("hccl_faults.cpp");
    let work = scratch("hccl-gc");
    let root = work.join("root.info");
    let runs = run_ranks(
        &prog,
        &work,
        3,
        &["killed", root.to_str().unwrap()],
        &[("HCCL_EXEC_TIMEOUT", "120")],
        Duration::from_secs(60),
    );
    assert_eq!(runs[0].code, Some(3), "{}", runs[0].out);
    let left = std::fs::read_dir(node_dir(&work))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("hccl-")
        })
        .count();
    // The failed job leaves its control block, unless the node's reaper (which removes
    // control blocks once no process of the node is left) was quicker; the next job on the
    // node removes it.
    assert!(left <= 1, "{left} control blocks left");
    let ops = exe("hccl_ops.cpp");
    let root2 = work.join("root2.info");
    all_ok(&run_ranks(
        &ops,
        &work,
        1,
        &[root2.to_str().unwrap(), "--quick"],
        &[],
        Duration::from_secs(60),
    ));
    no_leftover_blocks(&work);
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

/// Driving every rank of `HcclCommInitAll` from one thread: calling a collective for each
/// communicator in turn works (as on CANN, where a call only queues) with the data right;
/// calling it for one rank only fails the synchronize at `HCCL_EXEC_TIMEOUT`, with a hint
/// after 10 s that the missing rank is in this process.
#[test]
fn driving_all_ranks_from_one_thread_is_explained() {
    let prog = exe("hccl_init.cpp");
    let work = scratch("hccl-one-thread");
    let mut c = command(&prog, &work);
    c.arg(&work)
        .arg("single-thread")
        .env("HCCL_EXEC_TIMEOUT", "12");
    let r = run(c);
    r.assert_ok();
    assert!(
        r.stdout.contains("one thread drove both ranks"),
        "{}",
        r.all()
    );
    assert!(
        r.stdout.contains("single-thread mistake reported"),
        "{}",
        r.all()
    );
    assert!(
        r.stderr
            .contains("still waiting after 10 s for ranks [1], which are in this process"),
        "{}",
        r.all()
    );
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

/// Group calls (HcclGroupStart/HcclGroupEnd) and user-memory registration, at 2, 3 and 4
/// ranks through the launcher, and one thread creating the communicators of 4 devices
/// inside a group (`tests/c/hccl_group.cpp`).
#[test]
fn group_calls_and_memory_registration() {
    let prog = exe("hccl_group.cpp");
    for n in [2u32, 3, 4] {
        let work = scratch(&format!("hccl-group{n}"));
        let mut c = command(&npu_emu_bin(), &work);
        c.args(["run", "-n", &n.to_string(), "--timeout", "120"])
            .arg(&prog);
        let r = run(c);
        r.assert_ok();
        for i in 0..n {
            assert!(
                r.stdout
                    .contains(&format!("[rank {i}] hccl_group rank {i}/{n} passed")),
                "{}",
                r.all()
            );
        }
        let _ = std::fs::remove_dir_all(node_dir(&work));
    }
    let work = scratch("hccl-group-one-thread");
    let mut c = command(&prog, &work);
    c.args(["--one-thread", "4"]);
    let r = run(c);
    r.assert_ok();
    assert!(
        r.stdout.contains("hccl_group one-thread 4 passed"),
        "{}",
        r.all()
    );
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

/// Small collectives back to back without a synchronize in between (a rank may run ahead of
/// its peers and finish them later): every output right, and what follows on the stream
/// (copy, event, query, stream or communicator destroyed) sees them. 4 and 8 ranks outnumber
/// the cores of a CI runner (where ranks run ahead most); 2 ranks each get one.
fn runahead(n: u32) {
    let prog = exe("hccl_runahead.cpp");
    let work = scratch(&format!("hccl-runahead-{n}"));
    let root = work.join("root.info");
    let runs = run_ranks(
        &prog,
        &work,
        n,
        &[root.to_str().unwrap()],
        &[],
        Duration::from_secs(240),
    );
    all_ok(&runs);
    no_leftover_blocks(&work);
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

#[test]
fn small_collectives_run_ahead_2_ranks() {
    runahead(2);
}

#[test]
fn small_collectives_run_ahead_4_ranks() {
    runahead(4);
}

#[test]
fn small_collectives_run_ahead_8_ranks() {
    runahead(8);
}

#[test]
fn a_mismatch_among_small_collectives_run_ahead_fails_every_rank() {
    let prog = exe("hccl_runahead.cpp");
    let work = scratch("hccl-runahead-mismatch");
    let root = work.join("root.info");
    let runs = run_ranks(
        &prog,
        &work,
        4,
        &[root.to_str().unwrap(), "mismatch"],
        &[("HCCL_EXEC_TIMEOUT", "30")],
        Duration::from_secs(120),
    );
    for (r, x) in runs.iter().enumerate() {
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
    }
    // The ranks that saw the mismatch name both calls; the others learn that a peer failed.
    let all: String = runs.iter().map(|x| x.out.as_str()).collect();
    assert!(all.contains("differ in count"), "{all}");
    assert!(all.contains("HcclAllReduce(count=1"), "{all}");
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

#[test]
fn a_rank_killed_among_small_collectives_run_ahead_fails_the_others() {
    let prog = exe("hccl_runahead.cpp");
    let work = scratch("hccl-runahead-killed");
    let root = work.join("root.info");
    let t0 = Instant::now();
    let runs = run_ranks(
        &prog,
        &work,
        4,
        &[root.to_str().unwrap(), "killed"],
        &[("HCCL_EXEC_TIMEOUT", "60")],
        Duration::from_secs(120),
    );
    // Found by liveness checks, well before HCCL_EXEC_TIMEOUT.
    assert!(t0.elapsed() < Duration::from_secs(45), "{:?}", t0.elapsed());
    assert_eq!(runs[3].code, None, "rank 3 killed itself:\n{}", runs[3].out);
    for (r, x) in runs.iter().enumerate().take(3) {
        assert_eq!(x.code, Some(3), "rank {r}:\n{}", x.out);
        assert!(x.out.contains("rank 3 (pid"), "rank {r}:\n{}", x.out);
        assert!(x.out.contains("died"), "rank {r}:\n{}", x.out);
    }
    let _ = std::fs::remove_dir_all(node_dir(&work));
}

/// Two communicators whose small collectives ranks call in opposite orders, each on its own
/// stream: on CANN the calls only queue on their streams, so the program runs; here a
/// small collective whose peers are late is deferred after a short wait, with a core per
/// rank (2 ranks) as well as with ranks outnumbering cores (4).
#[test]
fn small_collectives_of_two_communicators_in_opposite_orders() {
    for n in [2, 4] {
        let prog = exe("hccl_runahead.cpp");
        let work = scratch(&format!("hccl-runahead-opposite-{n}"));
        let root = work.join("root.info");
        let runs = run_ranks(
            &prog,
            &work,
            n,
            &[root.to_str().unwrap(), "opposite"],
            &[("HCCL_EXEC_TIMEOUT", "60")],
            Duration::from_secs(120),
        );
        all_ok(&runs);
        no_leftover_blocks(&work);
        let _ = std::fs::remove_dir_all(node_dir(&work));
    }
}

/// Two communicators used in opposite orders with collectives of every size (8 B, 2 KiB,
/// 1 MiB): a rank whose peer is late at the call leaves the rendezvous to the stream task,
/// so the program runs as on CANN and the data is right.
#[test]
fn collectives_of_every_size_on_two_communicators_in_opposite_orders() {
    for n in [2, 3] {
        let prog = exe("hccl_runahead.cpp");
        let work = scratch(&format!("hccl-runahead-opposite-sizes-{n}"));
        let root = work.join("root.info");
        let runs = run_ranks(
            &prog,
            &work,
            n,
            &[root.to_str().unwrap(), "opposite-sizes"],
            &[("HCCL_EXEC_TIMEOUT", "60")],
            Duration::from_secs(120),
        );
        all_ok(&runs);
        for (r, x) in runs.iter().enumerate() {
            assert!(x.out.contains("every size"), "rank {r}:\n{}", x.out);
        }
        no_leftover_blocks(&work);
        let _ = std::fs::remove_dir_all(node_dir(&work));
    }
}

/// A small collective that ran ahead finishes into an output buffer the program freed
/// before synchronizing: an error naming the buffer at the synchronize, never a write into
/// freed memory; nothing crashes.
#[test]
fn an_output_freed_before_a_run_ahead_collective_finishes_is_an_error() {
    let prog = exe("hccl_runahead.cpp");
    let work = scratch("hccl-runahead-freed");
    let root = work.join("root.info");
    let runs = run_ranks(
        &prog,
        &work,
        4,
        &[root.to_str().unwrap(), "freed"],
        &[("HCCL_EXEC_TIMEOUT", "60")],
        Duration::from_secs(120),
    );
    for (r, x) in runs.iter().enumerate() {
        match x.code {
            Some(0) => assert!(
                x.out.contains("nothing was pending"),
                "rank {r}:\n{}",
                x.out
            ),
            Some(3) => assert!(
                x.out.contains("recvBuf") && x.out.contains("was freed"),
                "rank {r}:\n{}",
                x.out
            ),
            _ => panic!("rank {r}:\n{}", x.out),
        }
    }
    let _ = std::fs::remove_dir_all(node_dir(&work));
}
