//! Test harness: compile C/C++ programs against `headers/` and the built libraries, run
//! them on a private emulated node, and capture what they print.
//!
//! The libraries must be built first (`cargo build --release`, done by `make test`).
//! `NPU_EMU_LIB_DIR` overrides where they are looked for (default `target/release`).

pub mod hosts;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Directory holding the built `libascendcl.so` and `libhccl.so`.
pub fn lib_dir() -> PathBuf {
    match std::env::var_os("NPU_EMU_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => root().join("target/release"),
    }
}

/// `headers/include`.
pub fn include_dir() -> PathBuf {
    root().join("headers/include")
}

/// The `npu-emu` command-line tool.
pub fn npu_emu_bin() -> PathBuf {
    lib_dir().join("npu-emu")
}

/// A fresh scratch directory under `target/test-work/<name>-<pid>-<n>`.
pub fn scratch(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = root().join("target/test-work").join(format!(
        "{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compile `sources` (paths relative to `tests/c/` or absolute) into `out` with gcc (C) or
/// g++ (C++, chosen by the first source's extension), against `headers/include`, linking
/// `libs` (e.g. `["ascendcl"]`) from [`lib_dir`]. Panics with the compiler output on failure.
pub fn compile(sources: &[&str], out: &Path, libs: &[&str], extra: &[&str]) -> PathBuf {
    let srcs: Vec<PathBuf> = sources
        .iter()
        .map(|s| {
            let p = PathBuf::from(s);
            if p.is_absolute() {
                p
            } else {
                root().join("tests/c").join(p)
            }
        })
        .collect();
    let cxx = srcs[0].extension().is_some_and(|e| e == "cpp" || e == "cc");
    let mut cmd = Command::new(if cxx { "g++" } else { "gcc" });
    cmd.args(["-g", "-O1", "-Wall", "-Werror", "-pthread"])
        .arg(format!("-I{}", include_dir().display()))
        .arg(format!("-I{}", root().join("tests/c").display()));
    if cxx {
        cmd.arg("-std=c++17");
    } else {
        cmd.arg("-std=c11");
    }
    cmd.args(extra).args(&srcs).arg("-o").arg(out);
    cmd.arg(format!("-L{}", lib_dir().display()));
    cmd.arg(format!("-Wl,-rpath,{}", lib_dir().display()));
    for l in libs {
        cmd.arg(format!("-l{l}"));
    }
    let o = cmd.output().expect("run the C compiler");
    assert!(
        o.status.success(),
        "compiling {:?} failed:\n{}",
        sources,
        String::from_utf8_lossy(&o.stderr)
    );
    out.to_path_buf()
}

/// A command for `prog` on a private node in `work` (so tests never share device memory
/// or accounting), with the library directory on `LD_LIBRARY_PATH`.
pub fn command(prog: &Path, work: &Path) -> Command {
    let mut c = Command::new(prog);
    c.env("NPU_EMU_NODE_DIR", node_dir(work))
        .env("LD_LIBRARY_PATH", lib_dir())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .current_dir(work);
    c
}

/// A bash script run as a user of an install tree would run it: after `source
/// <prefix>/set_env.sh`, in `work`, on `work`'s private node, and with none of the caller's NPU
/// or launcher environment (library path, rank variables, job id, visible devices).
pub fn installed_bash(prefix: &Path, work: &Path, script: &str) -> Command {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!(
            "set -euo pipefail\nsource '{}/set_env.sh'\n{script}",
            prefix.display()
        ))
        .env("NPU_EMU_NODE_DIR", node_dir(work))
        .current_dir(work);
    for v in [
        "LD_LIBRARY_PATH",
        "ASCEND_HOME_PATH",
        "RANK_TABLE_FILE",
        "RANK_ID",
        "RANK_SIZE",
        "ASCEND_DEVICE_ID",
        "NPU_EMU_JOB_ID",
        "ASCEND_RT_VISIBLE_DEVICES",
    ] {
        c.env_remove(v);
    }
    c
}

/// Removes a directory (a test's private node directory, [`node_dir`]) when dropped, also
/// when the test fails: `let _node = NodeGuard(node_dir(&work));`.
pub struct NodeGuard(pub PathBuf);

impl Drop for NodeGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The private node directory of a test's scratch directory (in `/dev/shm`).
pub fn node_dir(work: &Path) -> PathBuf {
    let name = work.file_name().unwrap().to_string_lossy().to_string();
    PathBuf::from(format!("/dev/shm/npu-emu-test-{name}"))
}

/// Captured result of a run.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout and stderr together, for message checks.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
    /// Panic with everything printed unless the exit code is 0.
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "program failed:\n{}", self.all());
        self
    }
}

/// Longest a test program may run before [`run`] kills it (and its process group):
/// `NPU_EMU_TEST_TIMEOUT` seconds, default 300. A hang then fails one test with a message
/// instead of stalling the whole suite until CI's limit.
pub fn run_timeout() -> Duration {
    let secs = std::env::var("NPU_EMU_TEST_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(300);
    Duration::from_secs(secs)
}

/// Run and capture, killing the program's whole process group if it runs longer than
/// [`run_timeout`] (the result then has `code: None` and says so in `stderr`).
pub fn run(mut cmd: Command) -> Run {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn test program");
    let pgid = child.id() as i32;
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out_pipe.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err_pipe.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + run_timeout();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().expect("wait for test program") {
            Some(st) => break st,
            None if Instant::now() >= deadline => {
                timed_out = true;
                // SAFETY: plain syscall; pgid is the child's own process group.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                break child.wait().expect("wait for killed test program");
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    if timed_out {
        // The group is gone; grandchildren that left it may still hold the pipes open.
        // SAFETY: kill only sends a signal, to the process group the harness started.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap_or_default()).into_owned();
    let mut stderr = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned();
    if timed_out {
        stderr.push_str(&format!(
            "\n[harness] killed after {} s (NPU_EMU_TEST_TIMEOUT)\n",
            run_timeout().as_secs()
        ));
    }
    Run {
        code: if timed_out { None } else { status.code() },
        stdout,
        stderr,
    }
}

/// Install into `work/inst` and build the C++ program `src` (relative to the repository)
/// against it with the aclnn and HCCL libraries (`-lopapi -lnnopbase -lhccl -lascendcl`,
/// `-Werror`); gives the program and the install's `lib64`.
pub fn build_aclnn_hccl(work: &Path, src: &str) -> (PathBuf, PathBuf) {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    let lib64 = prefix.join("lib64");
    let root = root();
    let exe = work.join(Path::new(src).file_stem().unwrap());
    let o = Command::new("g++")
        .args([
            "-std=c++17",
            "-g",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
        ])
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(format!("-I{}", root.join("tests/c").display()))
        .arg(format!("-I{}", root.join("tests/c/aclnn").display()))
        .arg(root.join(src))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib64.display()))
        .args(["-lopapi", "-lnnopbase", "-lhccl", "-lascendcl"])
        .output()
        .expect("run g++");
    assert!(
        o.status.success(),
        "compiling {src} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (exe, lib64)
}
