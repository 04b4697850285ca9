//! aclnn: `libnnopbase.so` / `libopapi.so` and `aclnnNpuFormatCast` (issue 5), from C++
//! programs built against an install tree exactly as a CANN user builds
//! (`-I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lnnopbase -lopapi -lascendcl`).
//!
//! - `aclnn_cast.cpp`: every conversion aclnnNpuFormatCast offers on Atlas A2 (ND <-> NZ for
//!   fp16/fp32/int8/bf16/int32/uint8, NCDHW <-> NDC1HWC0 and <-> FRACTAL_Z_3D) at shapes that
//!   are not multiples of 16 or C0, against a host reference; zero padding; round trips; a
//!   hand-computed fp32 example; repeatable executors; the acl_meta.h getters; `delete[]` of
//!   the returned arrays;
//!   aclnnTransMatmulWeight in place (also of a strided view) with the weight sizes;
//! - `aclnn_errors.cpp`: bad input gives the documented code and a message (a too-small
//!   workspace included);
//! - `aclnn_bench.cpp`: throughput against aclrtMemcpy (run by hand; here only at 1 MiB);
//! - the same checks of an unsupported SoC (`NPU_EMU_SOC=Ascend310P3`), and Ascend 950's
//!   `additionalDtype` rule (`NPU_EMU_SOC=Ascend950PR`).

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{command, node_dir, npu_emu_bin, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Install the tree into `work/inst` and build `tests/c/aclnn/<src>` against it.
fn build(work: &Path, src: &str) -> (PathBuf, PathBuf) {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    let lib64 = prefix.join("lib64");
    assert_eq!(
        std::fs::read_link(lib64.join("libopapi.so")).unwrap(),
        Path::new("libnnopbase.so")
    );
    let root = npu_emu_tests::root();
    let exe = work.join(src.trim_end_matches(".cpp"));
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
        .arg(root.join("tests/c/aclnn").join(src))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib64.display()))
        .args(["-lnnopbase", "-lopapi", "-lascendcl"])
        .output()
        .expect("run g++");
    assert!(
        o.status.success(),
        "compiling {src} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (exe, lib64)
}

fn run_on(exe: &Path, lib64: &Path, work: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = command(exe, work);
    c.env("LD_LIBRARY_PATH", lib64).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    run(c)
}

#[test]
fn format_cast_round_trips_against_a_host_reference() {
    let work = scratch("aclnn-cast");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "aclnn_cast.cpp");
    let r = run_on(&exe, &lib64, &work, &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    // Every conversion and C0 rule ran (fp32 -> C0 8, int8 -> C0 32, fp16 -> 16).
    for line in [
        "ok fp32  ND [33,20] -> format 29  [3,3,16,8] -> back",
        "ok int8  ND [17,70] -> format 29  [3,2,16,32] -> back",
        "ok fp16  ND [3,37,45] -> format 29  [3,3,3,16,16] -> back",
        "ok fp32  NCDHW [1,17,2,3,3] -> format 32  [1,2,3,3,3,8] -> back",
        "ok fp16  NCDHW [18,19,2,3,2] -> format 33  [24,2,16,16] -> back",
        "ok fixed fp32 ND [2,9] -> FRACTAL_NZ [2,1,16,8]",
        "ok repeatable executor",
        "ok acl_meta.h getters",
        "ok TransMatmulWeight fp16 [37,45] -> FRACTAL_NZ [3,3,16,16]",
        "ok TransMatmulWeight int8 [3,20,70] -> FRACTAL_NZ [3,3,2,16,32]",
        "ok TransMatmulWeight fp16 (strided view) [37,45]",
    ] {
        assert!(r.stdout.contains(line), "missing {line:?} in:\n{}", r.all());
    }
    // The program's own operator new[] made the arrays it freed with delete[].
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib64.join("libnnopbase.so"))
        .output()
        .unwrap();
    let syms = String::from_utf8_lossy(&nm.stdout);
    assert!(
        !syms.contains(" _Zna"),
        "libnnopbase.so must not define operator new[]"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// A binary built against the real CANN records `DT_NEEDED libopapi.so` (its own SONAME)
/// besides `libnnopbase.so`. Built here against a stand-in `libopapi.so` with that SONAME, it
/// runs on the install tree: `libopapi.so` there is the symlink to `libnnopbase.so`, one
/// object is loaded for both names (same file, and its SONAME answers the second name), and
/// every aclnn call reaches our library (the stand-in's functions would return -1).
#[test]
fn a_binary_that_needs_libopapi_runs_on_the_symlink() {
    let work = scratch("aclnn-opapi");
    let _node = NodeGuard(node_dir(&work));
    let (_, lib64) = build(&work, "aclnn_cast.cpp");
    let stub = work.join("cann");
    std::fs::create_dir_all(&stub).unwrap();
    let src = stub.join("opapi.cpp");
    std::fs::write(
        &src,
        "#include <cstdint>\n\
         extern \"C\" int aclnnNpuFormatCastCalculateSizeAndFormat(const void *, const int, int, \
         int64_t **, uint64_t *, int *) { return -1; }\n\
         extern \"C\" int aclnnNpuFormatCastGetWorkspaceSize(const void *, void *, uint64_t *, \
         void **) { return -1; }\n\
         extern \"C\" int aclnnNpuFormatCast(void *, uint64_t, void *, void *) { return -1; }\n",
    )
    .unwrap();
    let o = Command::new("g++")
        .args(["-shared", "-fPIC", "-Wl,-soname,libopapi.so", "-o"])
        .arg(stub.join("libopapi.so"))
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let root = npu_emu_tests::root();
    let exe = work.join("cast_cann");
    let o = Command::new("g++")
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Werror",
            "-Wl,--no-as-needed",
        ])
        .arg(format!("-I{}", work.join("inst/include").display()))
        .arg(format!("-I{}", root.join("tests/c").display()))
        .arg(root.join("tests/c/aclnn/aclnn_cast.cpp"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", stub.display()))
        .arg(format!("-L{}", lib64.display()))
        .args(["-lopapi", "-lnnopbase", "-lascendcl"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = Command::new("readelf")
        .arg("-d")
        .arg(&exe)
        .output()
        .unwrap();
    let d = String::from_utf8_lossy(&d.stdout);
    assert!(
        d.contains("[libopapi.so]") && d.contains("[libnnopbase.so]"),
        "{d}"
    );
    let r = run_on(&exe, &lib64, &work, &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn ascend950_takes_c0_from_additional_dtype() {
    let work = scratch("aclnn-950");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "aclnn_cast.cpp");
    let r = run_on(
        &exe,
        &lib64,
        &work,
        &["950"],
        &[("NPU_EMU_SOC", "Ascend950PR")],
    );
    r.assert_ok();
    for line in [
        "ok 950 fp32 additionalDtype 1 -> format 50, C0 16",
        "ok 950 int32 additionalDtype 2 -> format 51, C0 32",
        "ok 950 int8 additionalDtype 2 -> format 29, C0 32",
        "PASS",
    ] {
        assert!(r.stdout.contains(line), "missing {line:?} in:\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The throughput program (`aclnn_bench [MiB] [reps]`, a program, not a timed test) builds and
/// runs; at 1 MiB it only has to finish and print its lines.
#[test]
fn the_bench_program_runs() {
    let work = scratch("aclnn-bench");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "aclnn_bench.cpp");
    let r = run_on(&exe, &lib64, &work, &["1", "2"], &[]);
    r.assert_ok();
    for w in [
        "ND->FRACTAL_NZ fp16",
        "NCDHW->NDC1HWC0 fp16",
        "ratio",
        "PASS",
    ] {
        assert!(r.stdout.contains(w), "{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn bad_input_gives_the_documented_codes_and_messages() {
    let work = scratch("aclnn-errors");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "aclnn_errors.cpp");
    let r = run_on(&exe, &lib64, &work, &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    assert!(r.stdout.matches("\nok ").count() >= 25, "{}", r.stdout);
    // nnopbase's errors are logged under CANN's OP module (aclnn/opdev/op_log.h's OP_ID),
    // not under the runtime's ASCENDCL.
    let what = "aclnnTransMatmulWeightGetWorkspaceSize: mmWeightRef is nullptr";
    assert!(
        r.stderr
            .lines()
            .any(|l| l.starts_with("[ERROR] OP(") && l.contains(what)),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr
            .lines()
            .any(|l| l.contains("ASCENDCL(") && l.contains("aclnn")),
        "{}",
        r.stderr
    );
    // ASCEND_MODULE_LOG_LEVEL=OP=4 silences them; aclGetRecentErrMsg still has every message
    // (the program checks each one).
    let r = run_on(
        &exe,
        &lib64,
        &work,
        &[],
        &[("ASCEND_MODULE_LOG_LEVEL", "OP=4")],
    );
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    assert!(!r.stderr.contains("[ERROR] OP("), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn an_unsupported_soc_is_a_runtime_error() {
    let work = scratch("aclnn-soc");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "aclnn_errors.cpp");
    let r = run_on(
        &exe,
        &lib64,
        &work,
        &["soc"],
        &[("NPU_EMU_SOC", "Ascend310P3")],
    );
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}
