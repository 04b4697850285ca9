//! Probes written from CANN's documented behaviour (API reference pages and their example
//! programs), not from this project's code, built against an install tree the way a CANN
//! user builds (`-I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lascendcl
//! -lnnopbase -lopapi`). Programs in `tests/c/format_probes/`.
//!
//! - `nz_sample.cpp`: the documented two-phase aclnnNpuFormatCast flow (ND fp16 -> NZ and
//!   back, int32 NCDHW -> NDC1HWC0 with `additionalDtype` -1, fp16 NCDHW -> FRACTAL_Z_3D),
//!   with the storage shapes and every element checked; and two pairs of the newer
//!   reference's A2/A3 table (fp32 NCHW <-> NC1HWC0 with C0 8, int8 HWCN <-> FRACTAL_Z);
//!   and the reference A2 example's destination sized by the logical shape instead of the
//!   padded storage shape: refused at the execute call, the message naming the storage shape;
//! - `cast_errors.cpp`: the reference's return-code table for the first-phase calls (161001
//!   NULL tensors; 161002 a dtype or format outside its lists, a view shape outside [2, 6],
//!   an empty or non-contiguous tensor; 361001 a conversion it does not offer), each with a
//!   message naming the function;
//! - `nz950.cpp` (Ascend 950): FLOAT ND -> FRACTAL_NZ_C0_16 with additionalDtype FLOAT16,
//!   and FRACTAL_NZ_C0_16 / FRACTAL_NZ_C0_4 back to ND (the reference's 950 table);
//! - `transdata_probe.cpp`: TransData through `aclopCompileAndExecute(ACL_ENGINE_SYS,
//!   ACL_COMPILE_SYS, NULL)` and `aclopExecuteV2`, the private descriptor built three
//!   documented ways, and the documented argument errors.

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{command, node_dir, npu_emu_bin, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Install the tree into `work/inst`; build each `tests/c/format_probes/<src>` against it.
fn build(work: &Path, srcs: &[&str]) -> (Vec<PathBuf>, PathBuf) {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    let lib64 = prefix.join("lib64");
    let dir = npu_emu_tests::root().join("tests/c/format_probes");
    let exes = srcs
        .iter()
        .map(|src| {
            let exe = work.join(src.trim_end_matches(".cpp"));
            let o = Command::new("g++")
                .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"])
                .arg(format!("-I{}", prefix.join("include").display()))
                .arg(dir.join(src))
                .arg("-o")
                .arg(&exe)
                .arg(format!("-L{}", lib64.display()))
                .args(["-lascendcl", "-lnnopbase", "-lopapi"])
                .output()
                .expect("run g++");
            assert!(
                o.status.success(),
                "compiling {src} failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            exe
        })
        .collect();
    (exes, lib64)
}

fn run_on(exe: &Path, lib64: &Path, work: &Path, args: &[&str]) -> Run {
    run_env(exe, lib64, work, args, &[])
}

fn run_env(exe: &Path, lib64: &Path, work: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = command(exe, work);
    c.env("LD_LIBRARY_PATH", lib64).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    run(c)
}

#[test]
fn documented_format_cast_flow() {
    let work = scratch("probe-nz-sample");
    let _node = NodeGuard(node_dir(&work));
    let (exes, lib64) = build(&work, &["nz_sample.cpp"]);
    for mode in [
        "nd2nz",
        "ndc1hwc0",
        "fz3d",
        "nchw5hd",
        "hwcnfz",
        "undersized",
    ] {
        let r = run_on(&exes[0], &lib64, &work, &[mode]);
        r.assert_ok();
        assert!(r.stdout.contains(&format!("{mode} ok")), "{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn documented_format_cast_return_codes() {
    let work = scratch("probe-cast-errors");
    let _node = NodeGuard(node_dir(&work));
    let (exes, lib64) = build(&work, &["cast_errors.cpp"]);
    let r = run_on(&exes[0], &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("cast errors ok"), "{}", r.all());
    // The errors are logged under CANN's OP module.
    assert!(r.stderr.contains("[ERROR] OP("), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn ascend950_nz_formats_back_to_nd() {
    let work = scratch("probe-nz950");
    let _node = NodeGuard(node_dir(&work));
    let (exes, lib64) = build(&work, &["nz950.cpp"]);
    let r = run_env(
        &exes[0],
        &lib64,
        &work,
        &[],
        &[("NPU_EMU_SOC", "Ascend950PR")],
    );
    r.assert_ok();
    assert!(r.stdout.contains("nz950 ok"), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn documented_transdata_flow() {
    let work = scratch("probe-transdata");
    let _node = NodeGuard(node_dir(&work));
    let (exes, lib64) = build(&work, &["transdata_probe.cpp"]);
    let r = run_on(&exes[0], &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("transdata probe ok"), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}
