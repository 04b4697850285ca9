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
