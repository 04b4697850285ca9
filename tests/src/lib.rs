//! Test harness: compile C/C++ programs against `headers/` and the built libraries, run
//! them on a private emulated node, and capture what they print.
//!
//! The libraries must be built first (`cargo build --release`, done by `make test`).
//! `NPU_EMU_LIB_DIR` overrides where they are looked for (default `target/release`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

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

/// Run and capture.
pub fn run(mut cmd: Command) -> Run {
    let o: Output = cmd.output().expect("spawn test program");
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}
