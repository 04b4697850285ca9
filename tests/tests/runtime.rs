//! Runtime core: init/finalize, devices, contexts, streams, events, callbacks — C and C++
//! programs from `tests/c/rt_*` compiled against `headers/` and linked with `-lascendcl`.

use npu_emu_tests::{command, compile, node_dir, run, scratch, Run};
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
    let r = run(cmd);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r
}

#[test]
fn lifecycle_versions_and_errors() {
    let r = run_prog("rt_lifecycle.c", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rt_lifecycle passed"));
    // aclAppLog prints through the runtime logger (ERROR level is on by default).
    assert!(r.stderr.contains("app log line"), "{}", r.all());
}
