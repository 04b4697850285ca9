//! What a framework (torch_npu) calls at import and device init, checked from C as CANN's API
//! reference describes it: compile options, CANN attributes, runtime parameters, operator
//! timeouts, saturation mode, stream capture state, versions, the libruntime/libprofapi
//! symbols, and the last-error state (`tests/c/rt_settings.c`).

use npu_emu_tests::{command, compile, node_dir, run, scratch};

#[test]
fn settings_and_capability_queries() {
    let work = scratch("rt_settings");
    let exe = work.join("rt_settings");
    compile(
        &["rt_settings.c"],
        &exe,
        &["ascendcl"],
        &["-Wno-deprecated-declarations"],
    );
    let r = run(command(&exe, &work));
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r.assert_ok();
    assert!(r.stdout.contains("rt_settings passed"), "{}", r.all());
}

/// `aclrtSetOpExecuteTimeOutV2` bounds a kernel launch (`tests/c/op_timeout/`): a kernel that
/// runs past the timeout fails its stream with `ACL_ERROR_RT_AICORE_TIMEOUT`; with no timeout
/// the same launch succeeds.
#[test]
fn operator_execution_timeout_fails_a_long_kernel() {
    use npu_emu_tests::{lib_dir, npu_emu_bin, root};
    use std::process::Command;
    let work = scratch("op-timeout");
    let src = root().join("tests/c/op_timeout");
    let gen = work.join("gen");
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub", "--out-dir"])
        .arg(&gen)
        .arg(src.join("spin_kernel.cpp"));
    run(c).assert_ok();
    let inc = root().join("headers/include");
    let kernel = work.join("spin.o");
    let o = Command::new("g++")
        .args(["-std=c++17", "-O1", "-fPIC", "-c"])
        .arg(format!("-I{}", root().join("headers/ascendc").display()))
        .arg(format!("-I{}", inc.display()))
        .arg(gen.join("spin_kernel.npuemu.cpp"))
        .arg("-o")
        .arg(&kernel)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let exe = work.join("timeout_host");
    let o = Command::new("g++")
        .args(["-std=c++17", "-O1", "-Wall", "-Werror"])
        .arg(format!("-I{}", inc.display()))
        .arg(format!("-I{}", gen.join("include").display()))
        .arg(src.join("timeout_host.cpp"))
        .arg(&kernel)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir().display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
        .arg("-lascendcl")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = run(command(&exe, &work));
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r.assert_ok();
    assert!(r.stdout.contains("op_timeout passed"), "{}", r.all());
    assert!(r.stdout.contains("timeout 1000 us"), "{}", r.all());
}
