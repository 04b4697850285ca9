//! `import hccl` (libhccl/python), as a user runs it: a fresh install, `source set_env.sh`, then
//! the pytest suites of `tests/python/hccl`: `ranks/` on every rank of `npu-emu run` jobs of 1,
//! 2, 3, 4 and 8 ranks (every call × dtype × reduce op on host arrays and NPU tensors, groups,
//! async handles, argument errors), and `jobs/` in one process (launchers, bootstrap errors,
//! HCCL failures). And the seed document's snippets, `samples/python_hccl`, when torch_npu is
//! there.
//!
//! Python: `NPU_EMU_PYTHON`, else `target/venv/bin/python` (tests/python/setup_venv.sh), else
//! `python3`; it needs numpy and pytest. When it has torch_npu, the NPU-tensor tests must run
//! (`HCCL_TEST_REQUIRE_NPU=1`), not skip.

use npu_emu_tests::{installed_bash, node_dir, npu_emu_bin, root, run, scratch, Run};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("NPU_EMU_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = root().join("target/venv/bin/python");
    if venv.is_file() {
        return venv;
    }
    PathBuf::from("python3")
}

/// Whether `python` imports `modules` (in a plain environment).
fn imports(modules: &str) -> bool {
    Command::new(python())
        .args(["-c", &format!("import {modules}")])
        .env("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

struct Env {
    work: PathBuf,
    prefix: PathBuf,
    npu: bool,
}

/// One install shared by the tests of this file, and what the Python has.
fn env() -> &'static Env {
    static E: OnceLock<Env> = OnceLock::new();
    E.get_or_init(|| {
        assert!(
            imports("numpy, pytest"),
            "{} cannot import numpy and pytest: run tests/python/setup_venv.sh (or set \
             NPU_EMU_PYTHON to a Python that has them)",
            python().display()
        );
        let work = scratch("python-hccl");
        let prefix = work.join("inst");
        let mut c = Command::new(npu_emu_bin());
        c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
        run(c).assert_ok();
        Env {
            work,
            prefix,
            npu: imports("torch, torch_npu"),
        }
    })
}

/// Run `script` after `source set_env.sh` of the install, in its own scratch directory and
/// private node, with `$PY` the Python and `$TESTS` the test directory.
fn bash(name: &str, script: &str) -> Run {
    let e = env();
    let work = scratch(name);
    let mut c = installed_bash(&e.prefix, &work, script);
    c.env("PY", python())
        .env("TESTS", root().join("tests/python/hccl"))
        .env("SAMPLES", root().join("samples/python_hccl"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("HCCL_EXEC_TIMEOUT", "120")
        .env("HCCL_CONNECT_TIMEOUT", "120");
    if e.npu {
        c.env("HCCL_TEST_REQUIRE_NPU", "1");
    }
    let r = run(c);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    let _ = std::fs::remove_dir_all(node_dir(&e.work));
    r
}

/// pytest's summary line of every rank: "N passed" and no failure.
fn all_ranks_passed(r: &Run, ranks: usize) {
    assert_eq!(r.code, Some(0), "{}", r.all());
    for k in 0..ranks {
        let p = format!("[rank {k}] ");
        let summary = r
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&p))
            .find(|l| l.contains(" passed"))
            .unwrap_or_else(|| panic!("rank {k} printed no pytest summary:\n{}", r.all()));
        assert!(
            !summary.contains("failed"),
            "rank {k}: {summary}\n{}",
            r.all()
        );
    }
}

fn ranks(n: usize) {
    let r = bash(
        &format!("python-hccl-ranks{n}"),
        &format!(
            "npu-emu run -n {n} --timeout 900 \"$PY\" -m pytest -q -x -p no:cacheprovider \
             -o cache_dir=/dev/null \"$TESTS/ranks\""
        ),
    );
    all_ranks_passed(&r, n);
}

#[test]
fn ranks_1() {
    ranks(1);
}

#[test]
fn ranks_2() {
    ranks(2);
}

#[test]
fn ranks_3() {
    ranks(3);
}

#[test]
fn ranks_4() {
    ranks(4);
}

#[test]
fn ranks_8() {
    ranks(8);
}

#[test]
fn jobs() {
    let r = bash(
        "python-hccl-jobs",
        "\"$PY\" -m pytest -q -p no:cacheprovider \"$TESTS/jobs\"",
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    let last = r.stdout.lines().rev().find(|l| l.contains(" passed"));
    assert!(last.is_some_and(|l| !l.contains("failed")), "{}", r.all());
}

/// A sample of `samples/python_hccl` at `n` ranks: every rank prints PASS.
fn sample(name: &str, n: usize) {
    if !env().npu {
        eprintln!(
            "samples/python_hccl/{name}.py not run: {} has no torch_npu (run \
             tests/python/setup_venv.sh)",
            python().display()
        );
        return;
    }
    let r = bash(
        &format!("python-hccl-sample-{name}"),
        &format!("npu-emu run -n {n} --timeout 600 \"$PY\" \"$SAMPLES/{name}.py\""),
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    for k in 0..n {
        assert!(
            r.stdout.contains(&format!("[rank {k}] rank {k}: PASS")),
            "rank {k}:\n{}",
            r.all()
        );
    }
}

#[test]
fn sample_allreduce() {
    sample("allreduce", 4);
}

#[test]
fn sample_allgather() {
    sample("allgather", 4);
}

#[test]
fn sample_reduce_scatter() {
    sample("reduce_scatter", 4);
}

#[test]
fn sample_groups() {
    sample("groups", 8);
}

#[test]
fn sample_overlap() {
    sample("overlap", 2);
}
