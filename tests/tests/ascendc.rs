//! The Ascend C kernel-side headers (`headers/ascendc`), through the CPU-debug path
//! (`tikicpulib.h`: `AscendC::GmAlloc` + `ICPU_RUN_KF`, compiled with g++ directly, no runtime):
//! the AddCustom kernels against an fp16 reference computed with GCC's `_Float16` (independent of
//! the headers' own `half`), every vector operation against a host reference, every queue / UB /
//! alignment / out-of-bounds violation as a fault (exit 1, message naming kernel, block, API and
//! address), every unsupported API as a compile failure naming it, and every header alone.

use npu_emu_tests::{root, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

fn ascendc_include() -> PathBuf {
    root().join("headers/ascendc")
}

fn c_dir() -> PathBuf {
    root().join("tests/c/ascendc")
}

/// g++ with the kernel headers and `tests/c/ascendc` on the include path.
fn gxx(std: &str) -> Command {
    let mut c = Command::new("g++");
    c.arg(format!("-std={std}"))
        .args(["-O1", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(format!("-I{}", ascendc_include().display()))
        .arg(format!("-I{}", c_dir().display()));
    c
}

/// Compile `sources` (in `tests/c/ascendc`) into `work/out`; panics with the compiler output.
fn build(work: &Path, out: &str, sources: &[&str], extra: &[&str]) -> PathBuf {
    let exe = work.join(out);
    let mut c = gxx("c++17");
    c.args(extra);
    for s in sources {
        c.arg(c_dir().join(s));
    }
    c.arg("-o").arg(&exe);
    let o = c.output().expect("run g++");
    assert!(
        o.status.success(),
        "compiling {sources:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

fn exec(exe: &Path, args: &[&str]) -> Run {
    let mut c = Command::new(exe);
    c.args(args);
    run(c)
}

#[test]
fn add_custom_vendor_style_8_blocks() {
    let work = scratch("asc-add");
    let exe = build(&work, "icpu_add", &["icpu_add.cpp", "add_custom.cpp"], &[]);
    let r = exec(&exe, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("add_custom: PASS"), "{}", r.all());
}

#[test]
fn add_custom_tiling_many_shapes() {
    let work = scratch("asc-tiling");
    let exe = build(
        &work,
        "icpu_add_tiling",
        &["icpu_add_tiling.cpp", "add_custom_tiling.cpp"],
        &[],
    );
    // (total, blockDim, tile): even splits, uneven splits, tails shorter than 32 bytes, more
    // blocks than elements, one block, many blocks.
    for (total, blocks, tile) in [
        (16384, 8, 128),
        (8 * 2048, 8, 2048),
        (1000, 7, 128),
        (1001, 3, 64),
        (5, 8, 16),
        (17, 1, 16),
        (100_003, 48, 1024),
        (65536, 40, 4096),
    ] {
        let r = exec(
            &exe,
            &[&total.to_string(), &blocks.to_string(), &tile.to_string()],
        );
        assert_eq!(
            r.code,
            Some(0),
            "total {total} blockDim {blocks} tile {tile}:\n{}",
            r.all()
        );
        assert!(r.stdout.contains("PASS"), "{}", r.all());
    }
}

#[test]
fn add_custom_compiles_as_cxx14() {
    let work = scratch("asc-cxx14");
    let exe = work.join("t14");
    let mut c = gxx("c++14");
    c.arg(c_dir().join("icpu_add_tiling.cpp"))
        .arg(c_dir().join("add_custom_tiling.cpp"))
        .arg("-o")
        .arg(&exe);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exec(&exe, &["999", "3", "64"]).assert_ok();
}

/// Every header compiles on its own (C++17 and C++14; the C ABI header also as C).
#[test]
fn every_header_compiles_alone() {
    let dir = ascendc_include();
    let mut headers = Vec::new();
    for sub in ["", "npuemu", "interface", "lib"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "h") {
                headers.push(p.strip_prefix(&dir).unwrap().to_path_buf());
            }
        }
    }
    assert!(headers.len() >= 10, "{headers:?}");
    let work = scratch("asc-headers");
    for h in &headers {
        for std in ["c++17", "c++14"] {
            let src = work.join("one.cpp");
            std::fs::write(&src, format!("#include \"{}\"\n", h.display())).unwrap();
            let o = gxx(std).args(["-fsyntax-only"]).arg(&src).output().unwrap();
            assert!(
                o.status.success(),
                "{} alone ({std}):\n{}",
                h.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    for h in ["npuemu/regions.h", "npuemu/launch.h"] {
        let src = work.join("one.c");
        std::fs::write(&src, format!("#include \"{h}\"\n")).unwrap();
        let o = Command::new("gcc")
            .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only"])
            .arg(format!("-I{}", dir.display()))
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{h} as C:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// A kernel body calling `stmt` (with a few tensors in scope) must fail to compile, and the
/// compiler's messages must contain `expect`.
fn assert_compile_error(work: &Path, name: &str, prelude: &str, stmt: &str, expect: &str) {
    let src = work.join(format!("{name}.cpp"));
    std::fs::write(
        &src,
        format!(
            "#include \"kernel_operator.h\"\n{prelude}\n\
             extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {{\n\
             AscendC::TPipe pipe;\n\
             AscendC::TBuf<AscendC::TPosition::VECCALC> buf;\n\
             pipe.InitBuffer(buf, 1024);\n\
             AscendC::LocalTensor<half> a = buf.Get<half>(128);\n\
             AscendC::LocalTensor<half> b = buf.Get<half>(128);\n\
             AscendC::LocalTensor<float> f = buf.Get<float>(64);\n\
             AscendC::GlobalTensor<half> g;\n\
             g.SetGlobalBuffer((__gm__ half *)x, 128);\n\
             (void)a; (void)b; (void)f; (void)g;\n\
             {stmt};\n}}\n"
        ),
    )
    .unwrap();
    let o = gxx("c++17")
        .args(["-fsyntax-only"])
        .arg(&src)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{name}: `{stmt}` compiled");
    assert!(
        err.contains(expect),
        "{name}: `{stmt}`: expected {expect:?} in:\n{err}"
    );
}

#[test]
fn unsupported_apis_fail_to_compile_naming_the_api() {
    let work = scratch("asc-unsupported");
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "mmad",
            "",
            "AscendC::Mmad(f, a, b, 1)",
            "AscendC::Mmad is not supported",
        ),
        (
            "loaddata",
            "",
            "AscendC::LoadData(a, b, 1)",
            "AscendC::LoadData is not supported",
        ),
        (
            "reducesum",
            "",
            "AscendC::ReduceSum(a, b, a, 128)",
            "AscendC::ReduceSum is not supported",
        ),
        (
            "gather",
            "",
            "AscendC::Gather(a, b, f, 0, 128)",
            "AscendC::Gather is not supported",
        ),
        (
            "syncall",
            "",
            "AscendC::SyncAll()",
            "AscendC::SyncAll is not supported",
        ),
        (
            "syncall_t",
            "",
            "AscendC::SyncAll<true>()",
            "AscendC::SyncAll is not supported",
        ),
        (
            "cast",
            "",
            "AscendC::Cast(f, a, 0, 64)",
            "AscendC::Cast is not supported",
        ),
        (
            "matmul",
            "#include \"lib/matmul_intf.h\"",
            "matmul::Matmul<int, int, int> mm; (void)mm",
            "AscendC::Matmul (lib/matmul_intf.h) is not supported",
        ),
        (
            "cube_queue",
            "",
            "AscendC::TQue<AscendC::TPosition::A1, 1> q; (void)q",
            "queues at TPosition::GM/A1",
        ),
        (
            "cube_kernel",
            "",
            "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY)",
            "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY): only vector kernels",
        ),
        (
            "div_int",
            "",
            "AscendC::LocalTensor<int32_t> i = buf.Get<int32_t>(); AscendC::Div(i, i, i, 8)",
            "AscendC::Div supports half and float",
        ),
        ("unknown", "", "AscendC::NoSuchApi(a)", "NoSuchApi"),
    ];
    for (name, prelude, stmt, expect) in cases {
        assert_compile_error(&work, name, prelude, stmt, expect);
    }
}
