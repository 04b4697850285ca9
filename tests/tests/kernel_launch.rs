//! Ascend C kernel launches on emulated streams: `npu-emu ascendc-stub` generates
//! `aclrtlaunch_<kernel>.h` and the launch code for the AddCustom kernels of `tests/c/ascendc`
//! (and the rule-breaking kernels of `tests/c/kernel_launch/raw_deref.cpp`); the generated code
//! is compiled with g++ into a kernel library, and host programs (`tests/c/kernel_launch/`)
//! launch with `ACLRT_LAUNCH_KERNEL(k)(blockDim, stream, ...)`: results against an fp16
//! reference at several blockDim values and lengths, two streams, stream order with async
//! copies, argument errors (codes and messages), an out-of-bounds kernel (507015 at
//! synchronize, naming block and address), a raw GM dereference (SIGSEGV naming kernel and
//! block). Finally a CMake project laid out like the vendor KernelLaunch AddCustom sample
//! builds against `npu-emu install` in RUN_MODE npu and cpu and passes its own check.
//!
//! The kernel-call operator (`tests/c/kernel_launch/invocation/`, AddKernelInvocation style:
//! `add_custom_do` calls `add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z)`): through the
//! generator and g++, and through the vendor CMake layout (npu; cpu, where ASCENDC_CPU_DEBUG
//! compiles the calls out), against the host-computed sum; multi-line, struct-by-value,
//! template-kernel and cross-source calls; calls in comments and strings left alone;
//! `__LINE__` and compiler messages naming the user's file and line; a failed call recorded
//! and reported at the next synchronize; generator errors naming file:line. The AI-core
//! count per SoC: what the runtime reports for each `NPU_EMU_SOC`, and a 200-block launch.

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{command, compile, lib_dir, node_dir, npu_emu_bin, root, run, scratch, Run};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn ascendc_dir() -> PathBuf {
    root().join("headers/ascendc")
}

/// Generate the stubs of `srcs` into `work/gen` and compile them into `work/lib<name>.so`.
fn kernel_lib(work: &Path, name: &str, srcs: &[PathBuf]) -> PathBuf {
    let gen = work.join(format!("gen-{name}"));
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub", "--out-dir"]).arg(&gen).args(srcs);
    run(c).assert_ok();
    let mut cpps: Vec<PathBuf> = std::fs::read_dir(&gen)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".npuemu.cpp"))
        .collect();
    cpps.sort();
    assert_eq!(cpps.len(), srcs.len(), "one .npuemu.cpp per source");
    let lib = work.join(format!("lib{name}.so"));
    let o = Command::new("g++")
        .args([
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-pthread",
            "-Wall",
            "-Werror",
        ])
        .arg(format!("-I{}", ascendc_dir().display()))
        .arg(format!("-I{}", root().join("headers/include").display()))
        .args(&cpps)
        .arg("-o")
        .arg(&lib)
        .arg(format!("-L{}", lib_dir().display()))
        .arg("-lascendcl")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "compiling the kernel library failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    gen
}

/// The AddCustom host program, built once per test against a fresh kernel library.
fn add_program(work: &Path) -> PathBuf {
    let c = root().join("tests/c/ascendc");
    let gen = kernel_lib(
        work,
        "addk",
        &[c.join("add_custom.cpp"), c.join("add_custom_tiling.cpp")],
    );
    compile(
        &["kernel_launch/launch_add.cpp"],
        &work.join("launch_add"),
        &["addk", "ascendcl"],
        &[
            &format!("-I{}", gen.join("include").display()),
            &format!("-I{}", c.display()),
            &format!("-L{}", work.display()),
            &format!("-Wl,-rpath,{}", work.display()),
        ],
    )
}

fn run_mode(exe: &Path, work: &Path, mode: &str) -> Run {
    let mut c = command(exe, work);
    c.arg(mode);
    run(c)
}

#[test]
fn add_custom_blockdims_and_lengths() {
    let work = scratch("kl-sweep");
    let _node = NodeGuard(node_dir(&work));
    let exe = add_program(&work);
    let r = run_mode(&exe, &work, "sweep");
    r.assert_ok();
    for bd in [1, 3, 8, 48] {
        for n in [1000, 4097, 16389] {
            let line = format!("add_custom_tiling blockDim {bd} length {n}: ok");
            assert!(r.stdout.contains(&line), "missing {line:?}:\n{}", r.all());
        }
    }
    for n in [4097, 16389] {
        let line = format!("add_custom_tiling blockDim 200 length {n}: ok");
        assert!(r.stdout.contains(&line), "missing {line:?}:\n{}", r.all());
    }
    assert!(r.stdout.contains("add_custom blockDim 8 length 16384: ok"));
    assert!(r.stdout.ends_with("PASS\n"), "{}", r.all());
}

#[test]
fn two_streams_and_stream_order() {
    let work = scratch("kl-streams");
    let _node = NodeGuard(node_dir(&work));
    let exe = add_program(&work);
    let r = run_mode(&exe, &work, "streams");
    r.assert_ok();
    assert!(r.stdout.contains("two streams: ok"), "{}", r.all());
    let r = run_mode(&exe, &work, "order");
    r.assert_ok();
    assert!(r.stdout.contains("stream order: ok"), "{}", r.all());
}

#[test]
fn bad_arguments_are_rejected_at_the_launch() {
    let work = scratch("kl-errors");
    let _node = NodeGuard(node_dir(&work));
    let exe = add_program(&work);
    let r = run_mode(&exe, &work, "errors");
    r.assert_ok();
    assert!(r.stdout.contains("errors: ok"), "{}", r.all());
    // The rejections are logged too (ASCEND_GLOBAL_LOG_LEVEL 3 by default).
    assert!(
        r.stderr.contains("[ERROR] ASCENDCL(")
            && r.stderr
                .contains("aclrtlaunch_add_custom_tiling: blockDim = 0 is invalid"),
        "{}",
        r.all()
    );
}

#[test]
fn out_of_bounds_kernel_fails_the_stream_with_507015() {
    let work = scratch("kl-oob");
    let _node = NodeGuard(node_dir(&work));
    let exe = add_program(&work);
    let r = run_mode(&exe, &work, "oob");
    r.assert_ok();
    assert!(r.stdout.contains("synchronize: 507015"), "{}", r.all());
    // aclrtSetExceptionInfoCallback saw the failed task with the same code.
    assert!(
        r.stdout.contains("exception callback: 507015"),
        "{}",
        r.all()
    );
    let msg = r
        .stdout
        .lines()
        .find(|l| l.starts_with("message: "))
        .unwrap_or_default();
    assert!(
        msg.contains("aclrtSynchronizeStream: an asynchronous task on stream"),
        "{msg}"
    );
    // The blocks of the upper half (2 and 3 of 4) read past the 4096-element buffers; the
    // lowest failing block is reported, with the address.
    assert!(
        msg.contains("kernel add_custom_tiling block 2/4"),
        "{msg}\n{}",
        r.all()
    );
    assert!(msg.contains("0x"), "{msg}");
    assert!(r.stdout.contains("recovered: ok"), "{}", r.all());
    // Logged when it happened, too.
    assert!(
        r.stderr.contains("AI-core exception on stream"),
        "{}",
        r.all()
    );
}

fn rules_program(work: &Path) -> PathBuf {
    let gen = kernel_lib(
        work,
        "rules",
        &[root().join("tests/c/kernel_launch/raw_deref.cpp")],
    );
    compile(
        &["kernel_launch/launch_rules.cpp"],
        &work.join("launch_rules"),
        &["rules", "ascendcl"],
        &[
            &format!("-I{}", gen.join("include").display()),
            &format!("-L{}", work.display()),
            &format!("-Wl,-rpath,{}", work.display()),
        ],
    )
}

#[test]
fn scalar_parameters_and_raw_gm_dereference() {
    let work = scratch("kl-rules");
    let _node = NodeGuard(node_dir(&work));
    let exe = rules_program(&work);
    let r = run_mode(&exe, &work, "scalar");
    r.assert_ok();
    // A raw dereference of a GM pointer in kernel code: SIGSEGV, message names kernel+block.
    let mut c = command(&exe, &work);
    c.arg("raw");
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGSEGV), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("kernel raw_deref"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("kernel raw_deref block 0/1") && line.contains("device memory at 0x"),
        "{line}"
    );
    assert!(line.contains("at offset 3"), "{line}");
    assert!(line.contains("through GlobalTensor"), "{line}");
    // Any other crash of kernel code names the block too.
    let mut c = command(&exe, &work);
    c.arg("null");
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGSEGV), "{err}");
    assert!(
        err.contains("kernel null_deref block 1/2 crashed: SIGSEGV at address 0x0"),
        "{err}"
    );
}

#[test]
fn stub_generator_output_and_errors() {
    let work = scratch("kl-gen");
    let gen = work.join("out");
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub", "--out-dir"])
        .arg(&gen)
        .arg(root().join("tests/c/ascendc/add_custom.cpp"))
        .arg(root().join("tests/c/ascendc/add_custom_tiling.cpp"));
    run(c).assert_ok();
    let h = std::fs::read_to_string(gen.join("include/aclrtlaunch_add_custom.h")).unwrap();
    assert_eq!(
        h,
        "#ifndef HEADER_ACLRTLAUNCH_ADD_CUSTOM_H\n#define HEADER_ACLRTLAUNCH_ADD_CUSTOM_H\n\
         #include \"acl/acl_base.h\"\n\n#ifndef ACLRT_LAUNCH_KERNEL\n\
         #define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n#endif\n\n\
         extern \"C\" uint32_t aclrtlaunch_add_custom(uint32_t blockDim, aclrtStream stream, \
         void* x, void* y, void* z);\n#endif\n"
    );
    // The tiling struct (defined in the included add_custom_tiling.h) becomes a pointer,
    // as CANN's generator makes it.
    let h = std::fs::read_to_string(gen.join("include/aclrtlaunch_add_custom_tiling.h")).unwrap();
    assert!(
        h.contains(
            "extern \"C\" uint32_t aclrtlaunch_add_custom_tiling(uint32_t blockDim, aclrtStream \
             stream, void* x, void* y, void* z, AddCustomTilingData* tiling);"
        ),
        "{h}"
    );
    assert!(gen.join("add_custom.npuemu.cpp").is_file());
    // A source without a kernel definition.
    let src = work.join("host_only.cpp");
    std::fs::write(
        &src,
        "// extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {}\n\
         extern \"C\" __global__ __aicore__ void add_custom(GM_ADDR x);\nint main() { return 0; }\n",
    )
    .unwrap();
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub", "--out-dir"]).arg(&gen).arg(&src);
    let r = run(c);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr.contains("host_only.cpp: no kernel found"),
        "{}",
        r.all()
    );
    // Missing --out-dir is a usage error.
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub"]).arg(&src);
    let r = run(c);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("missing --out-dir"), "{}", r.all());
}

/// `n` fp16 inputs and their sum, as the vendor sample's gen_data.py writes them
/// (input/input_x.bin, input/input_y.bin, output/golden.bin), computed here in Rust:
/// values are multiples of 1/8 in [-64, 64), so every sum is exact in fp16.
fn write_inputs(dir: &Path, n: usize) {
    let f16 = |v: f64| -> u16 {
        // Exact for these values: sign, exponent and 10-bit fraction of a multiple of 1/8.
        if v == 0.0 {
            return 0;
        }
        let s = if v < 0.0 { 0x8000u16 } else { 0 };
        let a = v.abs();
        let e = a.log2().floor() as i32;
        let frac = ((a / 2f64.powi(e) - 1.0) * 1024.0).round() as u16;
        s | (((e + 15) as u16) << 10) | frac
    };
    let mut seed = 12345u32;
    let mut next = || {
        seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
        ((seed >> 8) % 1024) as f64 / 8.0 - 64.0
    };
    let (mut x, mut y, mut g) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let (a, b) = (next(), next());
        x.extend_from_slice(&f16(a).to_le_bytes());
        y.extend_from_slice(&f16(b).to_le_bytes());
        g.extend_from_slice(&f16(a + b).to_le_bytes());
    }
    std::fs::create_dir_all(dir.join("input")).unwrap();
    std::fs::create_dir_all(dir.join("output")).unwrap();
    std::fs::write(dir.join("input/input_x.bin"), x).unwrap();
    std::fs::write(dir.join("input/input_y.bin"), y).unwrap();
    std::fs::write(dir.join("output/golden.bin"), g).unwrap();
}

/// Lay out a KernelLaunch project in `work/<name>` from `tests/c/kernel_launch/vendor_add`
/// (with `main` as its main.cpp and `kernel` from `tests/c/ascendc` as the kernel), build it
/// against the install in `prefix` in RUN_MODE `mode` as the vendor run.sh does, run it, and
/// return what it printed.
fn vendor_project(
    work: &Path,
    prefix: &Path,
    name: &str,
    main: &str,
    kernel: &str,
    mode: &str,
) -> Run {
    vendor_project_from(
        work,
        prefix,
        name,
        &root().join("tests/c/kernel_launch/vendor_add").join(main),
        &root().join("tests/c/ascendc"),
        &[kernel, "add_custom_tiling.h"],
        mode,
    )
}

/// As [`vendor_project`], with the host program `main` and the kernel source (the first of
/// `files`, all copied from `kernel_dir`) given explicitly.
fn vendor_project_from(
    work: &Path,
    prefix: &Path,
    name: &str,
    main: &Path,
    kernel_dir: &Path,
    files: &[&str],
    mode: &str,
) -> Run {
    let proj = work.join(name);
    let src = root().join("tests/c/kernel_launch/vendor_add");
    std::fs::create_dir_all(proj.join("cmake")).unwrap();
    for f in ["data_utils.h", "cmake/npu_lib.cmake", "cmake/cpu_lib.cmake"] {
        std::fs::copy(src.join(f), proj.join(f)).unwrap();
    }
    std::fs::copy(main, proj.join("main.cpp")).unwrap();
    let kernel = files[0];
    let cml = std::fs::read_to_string(src.join("CMakeLists.txt"))
        .unwrap()
        .replace("add_custom.cpp", kernel);
    std::fs::write(proj.join("CMakeLists.txt"), cml).unwrap();
    for f in files {
        std::fs::copy(kernel_dir.join(f), proj.join(f)).unwrap();
    }
    let script = format!(
        "set -euo pipefail\n\
         source '{p}/bin/setenv.bash'\n\
         rm -rf build out output/output_z.bin\n\
         cmake -B build -DRUN_MODE={mode} -DSOC_VERSION=Ascend910B1 \
         -DCMAKE_BUILD_TYPE=Debug -DASCEND_CANN_PACKAGE_PATH='{p}' >/dev/null\n\
         cmake --build build -j2\n\
         cmake --install build >/dev/null\n\
         export LD_LIBRARY_PATH=$(pwd)/out/lib:$(pwd)/out/lib64:$LD_LIBRARY_PATH\n\
         ./out/bin/ascendc_kernels_bbit\n\
         test -s output/output_z.bin\n\
         ls build/include/ascendc_kernels_{mode}/ 2>/dev/null || true\n",
        p = prefix.display()
    );
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(script)
        .current_dir(&proj)
        .env("NPU_EMU_NODE_DIR", node_dir(work))
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("CMAKE_PREFIX_PATH")
        .env_remove("ASCEND_HOME_PATH");
    run(c)
}

#[test]
fn vendor_layout_cmake_projects_npu_and_cpu() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test (.ci/run installs it from Debian's packages)");
    }
    let work = scratch("kl-cmake");
    let _node = NodeGuard(node_dir(&work));
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    for (name, main, kernel, n) in [
        (
            "AddKernelInvocationNeo",
            "main.cpp",
            "add_custom.cpp",
            8 * 2048,
        ),
        (
            "AddKernelInvocationTilingNeo",
            "main_tiling.cpp",
            "add_custom_tiling.cpp",
            10007,
        ),
    ] {
        write_inputs(&work.join(name), n);
        for mode in ["npu", "cpu"] {
            let r = vendor_project(&work, &prefix, name, main, kernel, mode);
            assert_eq!(r.code, Some(0), "{name} RUN_MODE={mode}:\n{}", r.all());
            assert!(
                r.stdout.contains("PASS"),
                "{name} RUN_MODE={mode}:\n{}",
                r.all()
            );
            if mode == "npu" {
                // The generated header where CANN puts it: build/include/<target>/.
                let h = format!("aclrtlaunch_{}.h", kernel.trim_end_matches(".cpp"));
                assert!(r.stdout.contains(&h), "{name}:\n{}", r.all());
            }
        }
    }
}

#[test]
fn install_tree_has_the_ascendc_pieces_where_cann_keeps_them() {
    let work = scratch("kl-inst");
    let p = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&p);
    run(c).assert_ok();
    for f in [
        "compiler/tikcpp/tikcfw/kernel_operator.h",
        "compiler/tikcpp/tikcfw/tikicpulib.h",
        "compiler/tikcpp/tikcfw/npuemu/launch.h",
        "compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake",
        "tools/tikcpp/tikcfw/kernel_operator.h",
        "tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake",
        "tools/tikicpulib/lib/cmake/tikicpulib/tikicpulibConfig.cmake",
        "bin/setenv.bash",
        // the compiler drivers, where CANN and vendor CMake modules look for them
        "bin/ccec",
        "bin/bisheng",
        "compiler/ccec_compiler/bin/ccec",
        "compiler/ccec_compiler/bin/bisheng",
        "tools/ccec_compiler/bin/ccec",
        &format!("{}-linux/ccec_compiler/bin/ccec", std::env::consts::ARCH),
        // find_package(ASC) / find_package(CCE) and the language modules
        "lib64/cmake/asc-config.cmake",
        "lib64/cmake/cce-config.cmake",
        "compiler/tikcpp/ascendc_kernel_cmake/asc_modules/CMakeDetermineASCCompiler.cmake",
        "compiler/tikcpp/ascendc_kernel_cmake/asc_modules/CMakeASCInformation.cmake",
        "compiler/tikcpp/ascendc_kernel_cmake/asc_modules/FindASC.cmake",
        "compiler/tikcpp/ascendc_kernel_cmake/cce_modules/CMakeCCEInformation.cmake",
        // host tiling headers where CANN has them
        "include/tiling/tiling_api.h",
        "include/tiling/platform/platform_ascendc.h",
        "include/register/tilingdata_base.h",
        "include/kernel_tiling/kernel_tiling.h",
    ] {
        assert!(p.join(f).is_file(), "{f} is missing from the install");
    }
    // The drivers are npu-emu under another name.
    let mut c = Command::new(p.join("bin/bisheng"));
    c.arg("--version");
    let r = run(c);
    r.assert_ok();
    assert!(
        r.stdout.starts_with("bisheng (npu-emu ")
            && r.stdout.contains("the Ascend C compiler driver of npu-emu"),
        "{}",
        r.all()
    );
    for l in ["tools/tikcpp/tikcfw", "tools/tikcpp/ascendc_kernel_cmake"] {
        let m = std::fs::symlink_metadata(p.join(l)).unwrap();
        assert!(m.file_type().is_symlink(), "{l} should be a symlink");
    }
    // set_env.sh puts find_package(tikicpulib)'s directory on CMAKE_PREFIX_PATH, after
    // lib64/cmake (CANN 8.5's order).
    let mut c = Command::new("bash");
    c.arg("-c").arg(format!(
        "unset CMAKE_PREFIX_PATH; source '{}/set_env.sh'; echo \"$CMAKE_PREFIX_PATH\"",
        p.display()
    ));
    let r = run(c);
    r.assert_ok();
    assert_eq!(
        r.stdout.trim(),
        format!(
            "{0}/lib64/cmake:{0}/tools/tikicpulib/lib/cmake",
            p.display()
        )
    );
    // Installing again over the same tree works (symlinks and files replaced in place), and
    // the installed tool lays out a complete tree from its own.
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&p);
    run(c).assert_ok();
    let p2 = work.join("inst2");
    let mut c = Command::new(p.join("bin/npu-emu"));
    c.args(["install", "--quiet", "--prefix"]).arg(&p2);
    run(c).assert_ok();
    for f in [
        "compiler/tikcpp/tikcfw/kernel_operator.h",
        "compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake",
        "tools/tikicpulib/lib/cmake/tikicpulib/tikicpulibConfig.cmake",
        "lib64/cmake/asc-config.cmake",
        "compiler/tikcpp/ascendc_kernel_cmake/asc_modules/CMakeASCInformation.cmake",
        "bin/ccec",
    ] {
        assert!(
            p2.join(f).is_file(),
            "{f} is missing from an install made by an install"
        );
    }
}

/// The AddKernelInvocation-style source: kernels plus host functions that launch them with
/// the kernel-call operator `<<<blockDim, l2ctrl, stream>>>`.
fn invocation_dir() -> PathBuf {
    root().join("tests/c/kernel_launch/invocation")
}

/// What the invocation host program prints in RUN_MODE npu besides PASS.
fn check_invocation_output(r: &Run, what: &str) {
    assert_eq!(r.code, Some(0), "{what}:\n{}", r.all());
    for line in [
        "usage string: add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z)\n",
        // The generated file keeps the source's lines (#line): __LINE__ as in the source.
        "line of add_custom_line: 128\n",
        "multi-line call: ok\n",
        "template kernel: ok\n",
        "struct argument: ok\n",
        // A failed launch through <<<>>> returns nothing: recorded at once, and the next
        // synchronize of the stream fails with the launch's code (107000), then recovers.
        "synchronize after blockDim 0: 107000\n",
        "next synchronize: 0\n",
        "PASS\n",
    ] {
        assert!(
            r.stdout.contains(line),
            "{what}: missing {line:?}:\n{}",
            r.all()
        );
    }
    let recent = r
        .stdout
        .lines()
        .find(|l| l.starts_with("recent after blockDim 0: "))
        .unwrap_or_default();
    assert!(
        recent.contains("aclrtlaunch_add_custom: blockDim = 0 is invalid"),
        "{what}: {}",
        r.all()
    );
    let recent = r
        .stdout
        .lines()
        .find(|l| l.starts_with("recent after synchronize: "))
        .unwrap_or_default();
    assert!(
        recent.contains("add_custom<<<...>>>: the kernel was not launched")
            && recent.contains("blockDim = 0"),
        "{what}: {}",
        r.all()
    );
}

#[test]
fn kernel_call_operator_through_the_generator() {
    let work = scratch("kl-chevron");
    let _node = NodeGuard(node_dir(&work));
    let gen = kernel_lib(
        &work,
        "inv",
        &[
            invocation_dir().join("add_custom.cpp"),
            invocation_dir().join("launch_elsewhere.cpp"),
        ],
    );
    // The generated file carries the source, its calls rewritten; the header is CANN's.
    let cpp = std::fs::read_to_string(gen.join("add_custom.npuemu.cpp")).unwrap();
    assert!(cpp.contains(&format!(
        "#line 1 \"{}\"",
        invocation_dir().join("add_custom.cpp").display()
    )));
    assert!(!cpp.contains("add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z);\n"));
    assert!(cpp.contains("::npuemu_chevron_add_custom_t{blockDim, l2ctrl, stream}(x, y, z);"));
    // Comments and strings are left as written.
    assert!(cpp.contains("// call of kernel function; a call in a comment is left alone: add_custom<<<1, nullptr, s>>>(a, b, c);"));
    assert!(cpp.contains("not_a_kernel<<<1, nullptr, s>>>(a)"));
    assert!(cpp.contains("return \"add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z)\";"));
    let h = std::fs::read_to_string(gen.join("include/aclrtlaunch_muls_custom.h")).unwrap();
    assert!(
        h.contains("aclrtlaunch_muls_custom(uint32_t blockDim, aclrtStream stream, void* x, void* z, MulsShape* shape);"),
        "{h}"
    );
    let exe = compile(
        &["kernel_launch/invocation/main.cpp"],
        &work.join("invocation"),
        &["inv", "ascendcl"],
        &[
            &format!(
                "-I{}",
                root().join("tests/c/kernel_launch/vendor_add").display()
            ),
            &format!("-L{}", work.display()),
            &format!("-Wl,-rpath,{}", work.display()),
            "-DINVOCATION_ELSEWHERE",
        ],
    );
    write_inputs(&work, 8 * 2048);
    let r = run(command(&exe, &work));
    check_invocation_output(&r, "generator + g++");
    assert!(
        r.stdout.contains("call from another source: ok\n"),
        "{}",
        r.all()
    );
    // The declaring source defines no aclrtlaunch_add_custom of its own.
    let other = std::fs::read_to_string(gen.join("launch_elsewhere.npuemu.cpp")).unwrap();
    assert!(other.contains("(defined in another source)"), "{other}");
}

#[test]
fn kernel_call_operator_errors_name_file_and_line() {
    let work = scratch("kl-chevron-err");
    let gen = work.join("out");
    let kernel = "#include \"kernel_operator.h\"\n\
                  extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {}\n";
    let cases = [
        (
            "void f(void *s, uint8_t *x)\n{\n    other<<<8, nullptr, s>>>(x);\n}\n",
            ":6: `other<<<...>>>` launches other, which is not a kernel defined or declared in this file (expected one of: k)",
        ),
        (
            "void f(void *s, uint8_t *x)\n{\n\n    k<<<8, s>>>(x);\n}\n",
            ":7: kernel call k<<<8, s>>> has 2 execution-configuration arguments; expected 3",
        ),
        (
            "void f(void *s, uint8_t *x)\n{\n    k<<<8, nullptr, s>>>;\n}\n",
            ":6: kernel call k<<<...>>> is not followed by its argument list",
        ),
        (
            "template <class T> __global__ __aicore__ void u(GM_ADDR x) {}\n\
             void f(void *s, uint8_t *x)\n{\n    t<half><<<8, nullptr, s>>>(x);\n}\n",
            ":7: `t<half><<<...>>>` launches t<half>, but t is not a template kernel defined or declared in this file (template kernels here: u)",
        ),
    ];
    for (n, (host, want)) in cases.iter().enumerate() {
        let src = work.join(format!("bad{n}.cpp"));
        std::fs::write(&src, format!("{kernel}// host\n{host}")).unwrap();
        let mut c = Command::new(npu_emu_bin());
        c.args(["ascendc-stub", "--out-dir"]).arg(&gen).arg(&src);
        let r = run(c);
        assert_eq!(r.code, Some(1), "case {n}:\n{}", r.all());
        let want = format!("{}{want}", src.display());
        assert!(
            r.stderr.contains(&want),
            "case {n}: want {want:?}:\n{}",
            r.all()
        );
    }
    // A compile error in the carried source names the user's file and line.
    let src = work.join("typo.cpp");
    std::fs::write(
        &src,
        format!("{kernel}void f(void *s, uint8_t *x)\n{{\n    k<<<8, nullptr, s>>>(x);\n    undeclared_thing(x);\n}}\n"),
    )
    .unwrap();
    let mut c = Command::new(npu_emu_bin());
    c.args(["ascendc-stub", "--out-dir"]).arg(&gen).arg(&src);
    run(c).assert_ok();
    let o = Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only"])
        .arg(format!("-I{}", ascendc_dir().display()))
        .arg(format!("-I{}", root().join("headers/include").display()))
        .arg(gen.join("typo.npuemu.cpp"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains(&format!("{}:6:", src.display())) && err.contains("undeclared_thing"),
        "{err}"
    );
}

#[test]
fn kernel_call_operator_vendor_cmake_project_npu_and_cpu() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test (.ci/run installs it from Debian's packages)");
    }
    let work = scratch("kl-chevron-cmake");
    let _node = NodeGuard(node_dir(&work));
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    let name = "AddKernelInvocation";
    write_inputs(&work.join(name), 8 * 2048);
    for mode in ["npu", "cpu"] {
        let r = vendor_project_from(
            &work,
            &prefix,
            name,
            &invocation_dir().join("main.cpp"),
            &invocation_dir(),
            &["add_custom.cpp", "invocation_shape.h"],
            mode,
        );
        if mode == "npu" {
            check_invocation_output(&r, "RUN_MODE npu");
        } else {
            // ASCENDC_CPU_DEBUG: the kernel calls are compiled out; ICPU_RUN_KF runs it.
            assert_eq!(r.code, Some(0), "RUN_MODE cpu:\n{}", r.all());
            assert!(r.stdout.contains("PASS"), "RUN_MODE cpu:\n{}", r.all());
            assert!(!r.stdout.contains("multi-line call"), "{}", r.all());
        }
    }
}

#[test]
fn core_counts_follow_the_emulated_soc() {
    let work = scratch("kl-soc");
    let _node = NodeGuard(node_dir(&work));
    let exe = add_program(&work);
    // (SoC, AI cores, vector cores): CANN's platform files (`[SoCInfo]` of <SoC>.ini).
    for (soc, aic, vec) in [
        ("Ascend910B1", 24, 48),
        ("Ascend910B2", 24, 48),
        ("Ascend910B3", 20, 40),
        ("Ascend910B4", 20, 40),
        ("Ascend910_9392", 24, 48),
        ("Ascend310P3", 8, 7),
    ] {
        // A node keeps the SoC it was created with: one node per SoC.
        let w = work.join(format!(
            "{}-{soc}",
            work.file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&w).unwrap();
        let _n = NodeGuard(node_dir(&w));
        let mut c = command(&exe, &w);
        c.arg("soc").env("NPU_EMU_SOC", soc);
        let r = run(c);
        r.assert_ok();
        let want = format!(
            "soc {soc}: aicore {aic} cube {aic} vector {vec}; capability aicore {aic} vector {vec}\n"
        );
        assert!(
            r.stdout.contains(&want),
            "{soc}: want {want:?}:\n{}",
            r.all()
        );
        assert!(r.stdout.contains("blockDim 200: ok"), "{soc}:\n{}", r.all());
    }
}
