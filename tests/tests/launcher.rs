//! The launcher, `npu-emu run`: the environment and rank table each rank sees, output
//! prefixes, and what happens when a rank fails, crashes, ignores SIGTERM, the job times out
//! or the user presses Ctrl-C. The ranks are `tests/c/cli_rank.c` (no NPU library needed);
//! a failing rank waits until the others are ready, so no test depends on timing.

use npu_emu_tests::{command, compile, node_dir, npu_emu_bin, run, scratch, Run};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Job {
    work: PathBuf,
    rank: PathBuf,
}

impl Job {
    fn new(name: &str) -> Job {
        let work = scratch(name);
        let rank = compile(&["cli_rank.c"], &work.join("cli_rank"), &[], &[]);
        Job { work, rank }
    }

    /// `npu-emu run ARGS... cli_rank MODE...` on this job's private node.
    fn cmd(&self, run_args: &[&str], mode: &[&str]) -> Command {
        let mut c = command(&npu_emu_bin(), &self.work);
        c.arg("run").args(run_args).arg(&self.rank).args(mode);
        c
    }

    fn run(&self, run_args: &[&str], mode: &[&str]) -> Run {
        run(self.cmd(run_args, mode))
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(node_dir(&self.work));
    }
}

/// Lines of `text` that start with `[rank R] `, without the prefix.
fn rank_lines(text: &str, r: usize) -> Vec<String> {
    let p = format!("[rank {r}] ");
    text.lines()
        .filter_map(|l| l.strip_prefix(&p))
        .map(str::to_string)
        .collect()
}

#[test]
fn ranks_get_rank_env_device_and_rank_table() {
    let job = Job::new("launcher-env");
    let out = job.run(&["--devices", "5,2,7"], &["env"]);
    out.assert_ok();
    let mut job_ids = Vec::new();
    for (r, dev) in [(0usize, 5u32), (1, 2), (2, 7)] {
        let lines = rank_lines(&out.stdout, r);
        assert_eq!(lines.len(), 2, "rank {r}:\n{}", out.all());
        let env = &lines[0];
        assert!(
            env.starts_with(&format!("RANK_ID={r} RANK_SIZE=3 ASCEND_DEVICE_ID={dev} ")),
            "rank {r}: {env}"
        );
        let id = env
            .split("NPU_EMU_JOB_ID=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert_eq!(id.len(), 16, "job id {id:?}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "job id {id:?}");
        job_ids.push(id.to_string());
        let path = env.split("RANK_TABLE_FILE=").nth(1).unwrap();
        assert!(
            Path::new(path).starts_with(node_dir(&job.work).join("jobs").join(id)),
            "rank table {path} is not in the job's directory under the node"
        );
        assert!(
            !Path::new(path).exists(),
            "the rank table {path} was not removed after the job"
        );

        let table: serde_json::Value =
            serde_json::from_str(lines[1].strip_prefix("TABLE ").unwrap()).unwrap();
        assert_eq!(table["version"], "1.0");
        assert_eq!(table["status"], "completed");
        assert_eq!(table["server_count"], "1");
        let servers = table["server_list"].as_array().unwrap();
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0]["server_id"], "127.0.0.1");
        let devs = servers[0]["device"].as_array().unwrap();
        let want: Vec<(String, String)> = [(5, 0), (2, 1), (7, 2)]
            .iter()
            .map(|(d, r)| (d.to_string(), r.to_string()))
            .collect();
        let got: Vec<(String, String)> = devs
            .iter()
            .map(|d| {
                // Values are JSON strings, as CANN's parser requires.
                (
                    d["device_id"]
                        .as_str()
                        .expect("device_id is a string")
                        .to_string(),
                    d["rank_id"]
                        .as_str()
                        .expect("rank_id is a string")
                        .to_string(),
                )
            })
            .collect();
        assert_eq!(got, want);
    }
    assert!(
        job_ids.iter().all(|i| *i == job_ids[0]),
        "ranks saw different job ids: {job_ids:?}"
    );
    // The jobs directory is gone once no job runs.
    assert!(!node_dir(&job.work).join("jobs").exists());

    // Default devices: rank i on device i; a second job gets another id.
    let out = job.run(&["-n", "2"], &["env"]);
    out.assert_ok();
    assert!(rank_lines(&out.stdout, 1)[0].starts_with("RANK_ID=1 RANK_SIZE=2 ASCEND_DEVICE_ID=1 "));
    assert!(!out.stdout.contains(&job_ids[0]), "job ids repeat");
}

#[test]
fn with_visible_devices_ranks_get_logical_ids_and_the_table_physical_ones() {
    let job = Job::new("launcher-visible");
    let mut c = job.cmd(&["-n", "2"], &["env"]);
    c.env("ASCEND_RT_VISIBLE_DEVICES", "2,5,7");
    let out = run(c);
    out.assert_ok();
    for (r, logical, physical) in [(0usize, 0, 2), (1, 1, 5)] {
        let lines = rank_lines(&out.stdout, r);
        assert!(
            lines[0].starts_with(&format!(
                "RANK_ID={r} RANK_SIZE=2 ASCEND_DEVICE_ID={logical} "
            )),
            "{}",
            out.all()
        );
        let table: serde_json::Value =
            serde_json::from_str(lines[1].strip_prefix("TABLE ").unwrap()).unwrap();
        let dev = &table["server_list"][0]["device"][r];
        assert_eq!(dev["device_id"], physical.to_string(), "{table}");
    }
    // Only 3 devices are visible.
    let mut c = job.cmd(&["-n", "4"], &["env"]);
    c.env("ASCEND_RT_VISIBLE_DEVICES", "2,5,7");
    let out = run(c);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("only 3 visible devices"),
        "{}",
        out.all()
    );
}

#[test]
fn every_output_line_is_prefixed_with_its_rank() {
    let job = Job::new("launcher-lines");
    let out = job.run(&["-n", "2"], &["lines"]);
    out.assert_ok();
    for r in 0..2 {
        assert_eq!(
            rank_lines(&out.stdout, r),
            ["out one", "out two", "partial"],
            "{}",
            out.all()
        );
        assert_eq!(rank_lines(&out.stderr, r), ["err one"], "{}", out.all());
    }
    for l in out.stdout.lines().chain(out.stderr.lines()) {
        assert!(l.starts_with("[rank "), "unprefixed line {l:?}");
    }
}

#[test]
fn a_failing_rank_stops_the_others_and_is_named() {
    let job = Job::new("launcher-fail");
    let out = job.run(&["-n", "4", "--timeout", "120"], &["fail", "2", "7"]);
    assert_eq!(
        out.code,
        Some(7),
        "the launcher exits with the failing rank's code\n{}",
        out.all()
    );
    assert!(
        out.stderr
            .contains("npu-emu run: rank 2 exited with code 7; stopping the other ranks"),
        "{}",
        out.all()
    );
    assert!(
        out.stderr
            .contains("job failed: rank 2 exited with code 7 (stopped: rank 0, 1, 3)"),
        "{}",
        out.all()
    );
    for r in [0, 1, 3] {
        assert!(
            out.stdout
                .contains(&format!("[rank {r}] rank {r} got SIGTERM")),
            "{}",
            out.all()
        );
    }
    assert!(!out.stderr.contains("timed out"), "{}", out.all());
}

#[test]
fn a_crashing_rank_is_named_with_its_signal() {
    let job = Job::new("launcher-segv");
    let out = job.run(&["-n", "3", "--timeout", "120"], &["segv", "1"]);
    assert_eq!(out.code, Some(128 + libc::SIGSEGV), "{}", out.all());
    assert!(
        out.stderr.contains("rank 1 was killed by SIGSEGV"),
        "{}",
        out.all()
    );
    assert!(out.stderr.contains("(stopped: rank 0, 2)"), "{}", out.all());
}

#[test]
fn ranks_that_ignore_sigterm_get_sigkill() {
    let job = Job::new("launcher-stubborn");
    let out = job.run(&["-n", "3", "--timeout", "120"], &["stubborn", "0"]);
    assert_eq!(out.code, Some(1), "{}", out.all());
    assert!(
        out.stderr.contains("rank 0 exited with code 1"),
        "{}",
        out.all()
    );
    assert!(
        out.stderr
            .contains("ranks 1, 2 did not stop within 3 s; sending SIGKILL"),
        "{}",
        out.all()
    );
}

#[test]
fn a_job_that_runs_too_long_times_out() {
    let job = Job::new("launcher-timeout");
    // The ranks wait forever; the timeout is the only way out.
    let out = job.run(&["-n", "2", "--timeout", "1"], &["wait"]);
    assert_eq!(out.code, Some(124), "{}", out.all());
    assert!(
        out.stderr
            .contains("timed out after 1 s; ranks still running: 0, 1; stopping them"),
        "{}",
        out.all()
    );
}

#[test]
fn ctrl_c_is_forwarded_to_every_rank() {
    let job = Job::new("launcher-sigint");
    let mut cmd = job.cmd(&["-n", "3", "--timeout", "120"], &["wait"]);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut ready = 0;
    while ready < 3 {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "launcher output ended early:\n{seen}"
        );
        if line.contains(" ready") {
            ready += 1;
        }
        seen.push_str(&line);
    }
    // SAFETY: plain syscall on our child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(128 + libc::SIGINT), "{seen}{rest}{err}");
    for r in 0..3 {
        assert!(
            rest.contains(&format!("[rank {r}] rank {r} got SIGINT")),
            "{seen}{rest}{err}"
        );
    }
    assert!(
        err.contains("received SIGINT; forwarding it to every rank"),
        "{err}"
    );
    assert!(err.contains("interrupted by SIGINT"), "{err}");
}

#[test]
fn bad_command_lines_are_explained() {
    let job = Job::new("launcher-usage");
    let bin = npu_emu_bin();
    let go = |args: &[&str]| {
        let mut c = command(&bin, &job.work);
        c.arg("run").args(args);
        run(c)
    };
    let r = go(&["-n", "9", "true"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("-n 9: this node has only 8 visible devices"),
        "{}",
        r.stderr
    );
    let r = go(&["-n", "2"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("missing PROGRAM"), "{}", r.stderr);
    let r = go(&["-n", "2", "--devices", "0", "true"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("--devices lists 1 devices but -n asks for 2"),
        "{}",
        r.stderr
    );
    let r = go(&["--devices", "0,x", "true"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("\"x\" is not a device id"),
        "{}",
        r.stderr
    );
    let r = go(&["-n", "2", "/no/such/program"]);
    assert_eq!(r.code, Some(127));
    assert!(
        r.stderr
            .contains("cannot start rank 0: /no/such/program: no such program"),
        "{}",
        r.stderr
    );
    // NPU_EMU_DEVICES decides how many devices there are.
    let mut c = command(&bin, &job.work);
    c.env("NPU_EMU_DEVICES", "2")
        .args(["run", "-n", "3", "true"]);
    let r = run(c);
    assert!(r.stderr.contains("only 2 visible devices"), "{}", r.stderr);
    let mut c = command(&bin, &job.work);
    c.env("NPU_EMU_DEVICES", "zero")
        .args(["run", "-n", "1", "true"]);
    let r = run(c);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("NPU_EMU_DEVICES"), "{}", r.stderr);
}
