//! Runtime core: init/finalize, devices, contexts, streams, events, callbacks — C and C++
//! programs from `tests/c/rt_*` compiled against `headers/` and linked with `-lascendcl`.

use npu_emu_tests::{command, compile, node_dir, scratch, Run};
use std::path::PathBuf;

/// Compile `src` and run it in a fresh scratch directory on a private node, with `env`.
fn run_prog(src: &str, env: &[(&str, &str)], args: &[&str]) -> Run {
    let work = scratch(src.split('.').next().unwrap());
    let exe: PathBuf = work.join("prog");
    compile(
        &[src],
        &exe,
        &["ascendcl"],
        &["-Wno-deprecated-declarations"],
    );
    let mut cmd = command(&exe, &work);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args);
    let r = run_bounded(cmd, src);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r
}

/// Like `run`, but a program that hangs (a deadlock is a bug) is killed after two minutes
/// and the test fails, instead of hanging the whole test run.
fn run_bounded(mut cmd: std::process::Command, what: &str) -> Run {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn test program");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let r = Run {
        code: status.and_then(|s| s.code()),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    };
    assert!(
        status.is_some(),
        "{what} hung for 120 s and was killed:\n{}",
        r.all()
    );
    r
}

#[test]
fn lifecycle_versions_and_errors() {
    let r = run_prog("rt_lifecycle.c", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_lifecycle passed"));
    // A repeated aclInit returns 100002 but is not logged as an error (CANN logs it at INFO).
    assert!(!r.stderr.contains("already initialized"), "{}", r.stderr);
    // aclAppLog prints through the runtime logger (ERROR level is on by default).
    assert!(
        r.stderr.contains("app log line 42 str 1.5 -5 0x10"),
        "{}",
        r.all()
    );
    assert!(
        r.stderr
            .contains("many 1 2 3 4 5 6 7 8 9 10 0.500000 0.25 end"),
        "{}",
        r.all()
    );
}

#[test]
fn devices_and_contexts() {
    let r = run_prog("rt_device.c", &[], &["8", "7"]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_device passed"));
}

#[test]
fn visible_devices_are_renumbered() {
    // Two visible devices: logical 1 is physical 5.
    let r = run_prog(
        "rt_device.c",
        &[("ASCEND_RT_VISIBLE_DEVICES", "2,5")],
        &["2", "5"],
    );
    r.assert_ok();
    // CANN's parsing stops at the first bad token: "1, 2,3" leaves only device 1.
    let r = run_prog(
        "rt_device.c",
        &[("ASCEND_RT_VISIBLE_DEVICES", "1, 2,3")],
        &["1", "1"],
    );
    r.assert_ok();
    // An id out of range stops parsing too: "1,3,8" on 8 devices leaves {1, 3}.
    let r = run_prog(
        "rt_device.c",
        &[("ASCEND_RT_VISIBLE_DEVICES", "1,3,8")],
        &["2", "3"],
    );
    r.assert_ok();
}

#[test]
fn streams_events_ordering_and_timeouts() {
    let r = run_prog("rt_stream.c", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_stream passed"));
    // A poll (timeout 0) is logged at INFO only; a real timeout is an error.
    assert!(!r.stderr.contains("within 0 ms"), "{}", r.stderr);
    assert!(r.stderr.contains("within 20 ms"), "{}", r.stderr);
}

#[test]
fn host_callbacks_and_report_thread() {
    let r = run_prog("rt_callback.c", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_callback passed"));
    // Report waits that time out are expected in a report loop: not logged as errors.
    assert!(!r.stderr.contains("no callback arrived"), "{}", r.stderr);
    assert!(r.stderr.contains("[ERROR]") && r.stderr.contains("already subscribed"));
}

#[test]
fn cpp_threads_devices_and_cross_thread_events() {
    let r = run_prog("rt_threads.cpp", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_threads passed"));
}

#[test]
fn a_joined_node_keeps_its_device_count() {
    // A live process created the node with 4 devices; a later process asking for the
    // default 8 joins it and sees 4 (with a warning): every process of a node must agree.
    use std::io::BufRead;
    use std::process::Stdio;
    let work = scratch("rt_join");
    let holder = work.join("hold");
    compile(&["rt_hold.c"], &holder, &["ascendcl"], &[]);
    let exe = work.join("prog");
    compile(
        &["rt_device.c"],
        &exe,
        &["ascendcl"],
        &["-Wno-deprecated-declarations"],
    );
    let mut c = command(&holder, &work);
    c.env("NPU_EMU_DEVICES", "4")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut c = command(&exe, &work);
    c.env("ASCEND_GLOBAL_LOG_LEVEL", "2").args(["4", "3"]);
    let second = run_bounded(c, "rt_device.c (joining)");
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    let _ = std::fs::remove_dir_all(node_dir(&work));
    assert_eq!(line.trim(), "held");
    assert!(status.success());
    second.assert_ok();
    assert!(
        second.stderr.contains("NPU_EMU_DEVICES"),
        "{}",
        second.all()
    );
}

#[test]
fn a_forked_child_gets_an_error_not_a_hang() {
    let r = run_prog("rt_fork.c", &[], &[]);
    r.assert_ok();
    assert!(
        r.stdout.contains("child ok") && r.stdout.contains("rt_fork passed"),
        "{}",
        r.all()
    );
}

#[test]
fn documented_combinations_from_a_strangers_program() {
    // Written from CANN's documentation alone: contexts moved between threads, process-level
    // error messages, a stream of device 1 waiting on an event of device 0, callbacks on the
    // default stream, aclrtGetMemInfo, aclrtMemcpy2d data.
    let r = run_prog("rt_stranger.cpp", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_stranger passed"), "{}", r.all());
}
