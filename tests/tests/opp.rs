//! Custom operator projects, as CANN's "project-based operator development" and "single-operator
//! API (aclnn) invocation" documents describe them: `msopgen gen` makes a project from an
//! operator description (`tests/c/opp/ops.json`), the operators' own op_host / op_kernel files
//! (`tests/c/opp/op_host`, `op_kernel`: AddCustom, and ScaleAddCustom with two data-type columns,
//! an optional input, a float and a list attribute and four tiling keys) replace the skeletons, `./build.sh`
//! makes `build_out/custom_opp_<os>_<arch>.run`, the package installs with `--install-path` (and
//! into `$ASCEND_OPP_PATH` with `vendors/config.ini`), and an AclNNInvocation-style program
//! (`tests/c/opp/host`, CMake, linking cust_opapi) checks results and the generated API's error
//! codes (161001, 161002, a failing tiling function).

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{installed_bash, node_dir, npu_emu_bin, root, run, scratch};
use std::path::Path;
use std::process::Command;

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn custom_operator_project_builds_installs_and_runs_through_aclnn() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test");
    }
    let work = scratch("opp");
    let _node = NodeGuard(node_dir(&work));
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    // The custom-operator tools, as `make install` adds them.
    let mut c = Command::new("sh");
    c.arg(root().join("tools/opp/install.sh")).arg(&prefix);
    run(c).assert_ok();
    let src = root().join("tests/c/opp");
    copy(&src, &work.join("src"));
    let script = format!(
        "msopgen gen -i src/ops.json -c ai_core-Ascend910B1 -lan cpp -out Proj\n\
         grep -q '\"value\": \"{prefix}\"' Proj/CMakePresets.json\n\
         test -f Proj/op_host/scale_add_custom.cpp -a -f Proj/op_kernel/add_custom.cpp\n\
         cp -r src/op_host src/op_kernel Proj/\n\
         (cd Proj && ./build.sh)\n\
         run=$(ls Proj/build_out/custom_opp_*_$(uname -m).run)\n\
         $run --quiet --install-path=$PWD/opp\n\
         test -f opp/vendors/customize/op_api/include/aclnn_scale_add_custom.h\n\
         source opp/vendors/customize/bin/set_env.bash\n\
         cmake -S src/host -B hb -DCUST_PKG_PATH=$PWD/opp/vendors/customize/op_api\n\
         cmake --build hb\n\
         ./hb/execute_op\n\
         mkdir -p opp2/vendors && printf 'load_priority=other\\n' > opp2/vendors/config.ini\n\
         ASCEND_OPP_PATH=$PWD/opp2 $run --quiet\n\
         cat opp2/vendors/config.ini\n\
         test -f opp2/vendors/customize/op_api/lib/libcust_opapi.so\n",
        prefix = prefix.display()
    );
    let mut c = installed_bash(&prefix, &work, &script);
    c.env_remove("CMAKE_PREFIX_PATH");
    let r = run(c);
    r.assert_ok();
    for line in [
        "PASS AddCustom result",
        "PASS AddCustom float x: 161002",
        "PASS AddCustom null x: 161001",
        "PASS AddCustom tiling failure: 561000",
        "PASS AddCustom executor used twice: 161002",
        "PASS AddCustom transposed x: 161002",
        "PASS ScaleAddCustom float bias 64x192 alpha 2.5",
        "PASS ScaleAddCustom float no-bias 64x192 alpha -1.5 shift 3",
        "PASS ScaleAddCustom float bias 1x64 alpha 1 shift -1",
        "PASS ScaleAddCustom half bias 16x128 alpha 0.5",
        "PASS ScaleAddCustom half no-bias 3x128 alpha 3",
        "PASS ScaleAddCustom float x with half bias: 161002",
        "0 failure(s)",
        "load_priority=customize,other",
    ] {
        assert!(r.stdout.contains(line), "missing {line:?} in\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
}
