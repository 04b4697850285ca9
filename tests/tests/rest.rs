//! The rest of the runtime (issue 12): lifecycle and visibility, the model API, stream
//! capture and replay, inter-process sharing, asynchronous memory operations, allocators,
//! callbacks, topology, errors. C and C++ programs from `tests/c/rest/`, written from CANN's
//! API reference, compiled against `headers/` and run on private nodes.

use npu_emu_tests::{command, compile, node_dir, run, scratch, Run};
use std::path::{Path, PathBuf};

/// Compile `src` (under `tests/c/rest/`) with `libs` into a fresh scratch directory.
fn build(src: &str, libs: &[&str]) -> (PathBuf, PathBuf) {
    let stem = Path::new(src)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let work = scratch(&format!("rest-{stem}"));
    let exe = work.join(&stem);
    compile(
        &[&format!("rest/{src}")],
        &exe,
        libs,
        &["-Wno-deprecated-declarations", "-ldl"],
    );
    (work, exe)
}

/// Compile and run `src` once with `env` and `args`; the node is removed afterwards.
fn run_prog(src: &str, libs: &[&str], env: &[(&str, &str)], args: &[&str]) -> Run {
    let (work, exe) = build(src, libs);
    let mut cmd = command(&exe, &work);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args)
        .env_remove("ASCEND_GLOBAL_LOG_LEVEL")
        .env_remove("ASCEND_MODULE_LOG_LEVEL")
        .env_remove("ASCEND_SLOG_PRINT_TO_STDOUT");
    let r = run(cmd);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r
}

/// A function that is still a generated stub (its body takes no arguments), if any.
fn some_stub() -> Option<String> {
    let root = npu_emu_tests::root();
    let out = root.join("target/release/build");
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in std::fs::read_dir(out).ok()?.flatten() {
        let p = e.path().join("out/stubs.rs");
        if e.file_name().to_string_lossy().starts_with("libascendcl-") && p.exists() {
            let t = p.metadata().ok()?.modified().ok()?;
            if newest.as_ref().is_none_or(|(n, _)| t > *n) {
                newest = Some((t, p));
            }
        }
    }
    let text = std::fs::read_to_string(newest?.1).ok()?;
    text.lines()
        .filter_map(|l| l.strip_prefix("pub extern \"C\" fn "))
        .find(|l| l.contains("() -> i32"))
        .map(|l| l.split('(').next().unwrap().to_string())
}

#[test]
fn lifecycle_releases_after_finalize_and_peer_access_survives_reset() {
    let stub = some_stub();
    let args: Vec<&str> = stub.iter().map(String::as_str).collect();
    let r = run_prog("lifecycle.c", &["ascendcl"], &[], &args);
    r.assert_ok();
    assert!(r.stdout.contains("rest_lifecycle passed"), "{}", r.all());
    if let Some(name) = stub {
        // At the default log level (ERROR), once for two calls, naming the function.
        let lines = r
            .stderr
            .lines()
            .filter(|l| l.contains("[ERROR]") && l.contains(&name) && l.contains("not supported"))
            .count();
        assert_eq!(
            lines,
            1,
            "expected one ERROR line naming {name}:\n{}",
            r.all()
        );
    }
}

#[test]
fn model_api_structures_work_and_loading_names_the_file() {
    let r = run_prog("mdl.c", &["ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_mdl passed"), "{}", r.all());
}

#[test]
fn two_processes_share_memory_notifies_events_and_vmm_handles() {
    let r = run_prog("ipc.c", &["ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_ipc parent passed"), "{}", r.all());
    assert!(r.stdout.contains("rest_ipc child passed"), "{}", r.all());
}

/// Generate the launch stub of `tests/c/rest/capture_kernel.cpp` (npu-emu ascendc-stub) and
/// compile it into `work/libcapk.so`; returns the directory with `aclrtlaunch_add_one.h`.
fn capture_kernel(work: &Path) -> PathBuf {
    use npu_emu_tests::{lib_dir, npu_emu_bin};
    use std::process::Command;
    let root = npu_emu_tests::root();
    let gen = work.join("gen");
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub", "--out-dir"])
        .arg(&gen)
        .arg(root.join("tests/c/rest/capture_kernel.cpp"));
    run(c).assert_ok();
    let cpp: Vec<PathBuf> = std::fs::read_dir(&gen)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".npuemu.cpp"))
        .collect();
    let o = Command::new("g++")
        .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-pthread"])
        .arg(format!("-I{}", root.join("headers/ascendc").display()))
        .arg(format!("-I{}", root.join("headers/include").display()))
        .args(&cpp)
        .arg("-o")
        .arg(work.join("libcapk.so"))
        .arg(format!("-L{}", lib_dir().display()))
        .arg("-lascendcl")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "compiling the kernel library failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    gen.join("include")
}

/// Build `tests/c/rest/capture.cpp` with the kernel library; run it with `args`.
fn run_capture(args: &[&str]) -> Run {
    let work = scratch("rest-capture");
    let inc = capture_kernel(&work);
    let exe = work.join("capture");
    let klib = work.join("libcapk.so");
    compile(
        &["rest/capture.cpp", &klib.to_string_lossy()],
        &exe,
        &["ascendcl", "hccl"],
        &[
            &format!("-I{}", inc.display()),
            &format!("-Wl,-rpath,{}", work.display()),
            "-Wno-deprecated-declarations",
        ],
    );
    let mut cmd = command(&exe, &work);
    cmd.args(args).env_remove("ASCEND_GLOBAL_LOG_LEVEL");
    let r = run(cmd);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r
}

#[test]
fn capture_replays_kernel_and_allreduce_three_times() {
    let r = run_capture(&[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_capture passed"), "{}", r.all());
    // The debug print names the model and its tasks.
    assert!(r.stdout.contains("copy_kernel_allreduce"), "{}", r.all());
    assert!(r.stdout.contains("kernel: add_one<<<8>>>"), "{}", r.all());
    assert!(r.stdout.contains("hccl: HcclAllReduce"), "{}", r.all());
}

#[test]
fn callbacks_abort_stop_and_host_function_threads() {
    let r = run_prog("callbacks.c", &["ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_callbacks passed"), "{}", r.all());
}

/// Calls written from the runtime API pages by a stranger: pitched 2-D copies, NULL checks
/// before count 0, zero-sized matrices, reserved peer-access flags, aborting the default
/// stream, the AI CPU count, timed events.
#[test]
fn stranger_copies_peer_flags_abort_and_device_info() {
    let r = run_prog("stranger_rt.c", &["ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("stranger_rt passed"), "{}", r.all());
}

#[test]
fn allocators_ids_limits_buffers_snapshots_dump_and_marks() {
    let r = run_prog("resources.c", &["ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_resources passed"), "{}", r.all());
}

#[test]
fn value_waits_reduce_random_descriptors_and_prefetch() {
    let r = run_prog("mem_async.c", &["ascendcl", "m"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_mem_async passed"), "{}", r.all());
}

#[test]
fn aclnn_operators_that_overflow_set_the_status() {
    let r = run_prog("overflow_aclnn.cpp", &["nnopbase", "ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(
        r.stdout.contains("rest_overflow_aclnn passed"),
        "{}",
        r.all()
    );
}

#[test]
fn overflow_status_is_process_level_and_follows_the_switch() {
    let r = run_prog("overflow.c", &["ascendcl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_overflow passed"), "{}", r.all());
}

#[test]
fn hccl_zero_copy_suspend_nic_and_type_checks() {
    let r = run_prog("hccl_rest.cpp", &["ascendcl", "hccl"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_hccl passed"), "{}", r.all());
}

#[test]
fn tdt_channels_carry_datasets_between_threads() {
    let r = run_prog("tdt.c", &["ascendcl", "pthread"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_tdt passed"), "{}", r.all());
}

#[test]
fn tdt_queues_carry_data_buffers_and_routes() {
    let r = run_prog("tdt_queue.c", &["ascendcl", "pthread"], &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rest_tdt_queue passed"), "{}", r.all());
    // An empty or full queue is an answer to a poll, logged at INFO as CANN does: nothing at
    // the default level (ERROR), while the bad arguments of the same program are logged.
    for l in r.stderr.lines() {
        assert!(
            !(l.contains("is empty and stayed so") || l.contains("is full (")),
            "logged at the default level: {l}\n{}",
            r.all()
        );
    }
    assert!(r.stderr.contains("[ERROR]"), "{}", r.all());
}
