//! Ascend C builds the way CANN's own examples build, against an install tree: the compiler
//! drivers (`bin/bisheng`, `bin/ccec`) on single-source `.asc` programs, CMake projects in the
//! `ASC` and `CCE` languages, and `ascendc.cmake` projects with simple-style kernels (raw
//! `__gm__` pointers, `block_idx`, `asm("trap")`, `SyncAll`), kernel binaries
//! (`ascendc_fatbin_library`, loaded and launched by name through `aclrtBinary*` /
//! `aclrtLaunchKernel*`, and through the older `rtDevBinaryRegister` / `rtKernelLaunch` path) and a MatmulCustom-style project (the Matmul high-level API, fp16 in,
//! fp32 accumulation) at several shapes. The C/C++ sources are in `tests/c/kernel_launch/`.
//!
//! Each test installs its own tree and builds once; a build's programs are run for every case.

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{installed_bash, node_dir, npu_emu_bin, root, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

fn require_cmake() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test (.ci/run installs it from Debian's packages)");
    }
}

/// `npu-emu install --prefix work/inst`.
fn install(work: &Path) -> PathBuf {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    prefix
}

/// Copy `tests/c/kernel_launch/<name>` (recursively) into `work/<name>`.
fn project(work: &Path, name: &str) -> PathBuf {
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
    let dst = work.join(name);
    copy(&root().join("tests/c/kernel_launch").join(name), &dst);
    dst
}

/// Run `script` in `dir` as a user of the install would (set_env.sh sourced).
fn sh(prefix: &Path, work: &Path, dir: &Path, script: &str) -> Run {
    let mut c = installed_bash(prefix, work, &format!("cd '{}'\n{script}", dir.display()));
    c.env_remove("CMAKE_PREFIX_PATH");
    run(c)
}

#[test]
fn bisheng_single_source_matmul_at_several_shapes() {
    let work = scratch("tc-asc");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    let src = root().join("tests/c/kernel_launch/asc/matmul.asc");
    // As the reference shows it: bisheng x.asc --npu-arch=dav-2201 -o demo.
    let r = sh(
        &prefix,
        &work,
        &work,
        &format!(
            "bisheng '{}' --npu-arch=dav-2201 -o matmul_asc\n\
             for s in '64 64 64 0 1' '128 256 64 1 2' '200 130 70 1 8' '512 384 256 1 8'; do ./matmul_asc $s; done",
            src.display()
        ),
    );
    r.assert_ok();
    for shape in [
        "matmul 64x64x64 bias 0",
        "matmul 128x256x64 bias 1",
        "matmul 200x130x70 bias 1",
        "matmul 512x384x256 bias 1",
    ] {
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with(shape))
            .unwrap_or_else(|| panic!("{shape} missing:\n{}", r.all()));
        assert!(line.ends_with(", 0 wrong"), "{line}");
    }
    assert_eq!(r.stdout.matches("PASS").count(), 4, "{}", r.all());
    // A wrong architecture is named.
    let r = sh(
        &prefix,
        &work,
        &work,
        &format!("bisheng '{}' --npu-arch=dav-9999 -o x", src.display()),
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr
            .contains("bisheng: error: unknown NPU architecture \"dav-9999\""),
        "{}",
        r.all()
    );
}

#[test]
fn cmake_asc_language_project() {
    require_cmake();
    let work = scratch("tc-ascproj");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    let dir = project(&work, "asc_project");
    let r = sh(
        &prefix,
        &work,
        &dir,
        "cmake -B build -DCMAKE_ASC_ARCHITECTURES=dav-2201 >/dev/null\n\
         cmake --build build -j2\n\
         ./build/demo\n\
         ls build/add_fatbin.o\n",
    );
    r.assert_ok();
    assert!(
        r.stdout.contains("Built target demo") && r.stdout.contains("Linking ASC executable demo"),
        "{}",
        r.all()
    );
    assert!(r.stdout.contains("static add: 0 wrong"), "{}", r.all());
    assert!(r.stdout.contains("hello from block 3 of 4"), "{}", r.all());
    assert!(r.stdout.contains("fatbin add: 0 wrong"), "{}", r.all());
}

#[test]
fn cmake_cce_language_project() {
    require_cmake();
    let work = scratch("tc-cce");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    let dir = project(&work, "cce_project");
    let r = sh(
        &prefix,
        &work,
        &dir,
        "cmake -B build >/dev/null\ncmake --build build -j2\n./build/cce_main\n",
    );
    r.assert_ok();
    assert!(
        r.stdout.contains("Building CCE object") && r.stdout.contains("Linking CCE shared library"),
        "{}",
        r.all()
    );
    assert!(
        r.stdout.contains("sync 0, 0 wrong of 32768\nPASS"),
        "{}",
        r.all()
    );
    // The ccec the project's modules found is npu-emu's, in CANN's place.
    let found = std::fs::read_dir(dir.join("build/CMakeFiles"))
        .unwrap()
        .filter_map(|e| e.ok())
        .find_map(|e| std::fs::read_to_string(e.path().join("CMakeCCECompiler.cmake")).ok())
        .unwrap_or_default();
    assert!(found.contains("ccec_compiler/bin/ccec"), "{found}");
}

/// The project of `tests/c/kernel_launch/rt_project` built once with ascendc.cmake.
fn rt_project(work: &Path) -> (PathBuf, PathBuf) {
    require_cmake();
    let prefix = install(work);
    let dir = project(work, "rt_project");
    let r = sh(
        &prefix,
        work,
        &dir,
        &format!(
            "export ASCENDC_CMAKE_DIR='{}/compiler/tikcpp/ascendc_kernel_cmake'\n\
             cmake -B build -DASCEND_CANN_PACKAGE_PATH='{}' >/dev/null\n\
             cmake --build build -j2\ncmake --install build >/dev/null\n\
             ls out/fatbin/two_kernels/two_kernels.o out/fatbin/one_kernel/one_kernel.o\n",
            prefix.display(),
            prefix.display()
        ),
    );
    r.assert_ok();
    (prefix, dir)
}

#[test]
fn simple_style_kernels_builtins_raw_pointers_traps_and_syncall() {
    let work = scratch("tc-simple");
    let _node = NodeGuard(node_dir(&work));
    let (prefix, dir) = rt_project(&work);
    let mode = |m: &str| sh(&prefix, &work, &dir, &format!("./out/bin/simple_main {m}"));
    for m in ["builtins", "bump", "syncall", "printf"] {
        let r = mode(m);
        r.assert_ok();
        assert!(!r.stdout.contains("FAIL"), "{m}:\n{}", r.all());
    }
    let r = mode("printf");
    for b in 0..3 {
        assert!(
            r.stdout.contains(&format!("block {b} says 42\n")),
            "{}",
            r.all()
        );
    }
    // A raw __gm__ write past the buffer: the launch fails with 507015 naming the kernel, the
    // block and the address; writes inside the buffer happened; the device stays usable.
    let r = mode("oob");
    r.assert_ok();
    let msg = r
        .stdout
        .lines()
        .find(|l| l.starts_with("message: "))
        .unwrap_or_default()
        .to_string();
    assert!(
        msg.contains("kernel write_past_end block 3/4: a __gm__ pointer writes 4 bytes at 0x")
            && msg.contains("outside every buffer passed to the kernel (x: 0x"),
        "{}",
        r.all()
    );
    // asm("trap") in kernel code.
    let r = mode("trap");
    r.assert_ok();
    assert!(
        r.stdout
            .contains("kernel stop_here block 1/2: the kernel executed a trap instruction"),
        "{}",
        r.all()
    );
    // Host code still traps on a device pointer.
    let r = mode("host-deref");
    assert_ne!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains("host code wrote device memory at 0x")
            && r.stderr.contains("device memory is not host-accessible"),
        "{}",
        r.all()
    );
    assert!(!r.stdout.contains("did not trap"), "{}", r.all());
}

#[test]
fn kernel_binaries_loaded_and_launched_by_name() {
    let work = scratch("tc-fatbin");
    let _node = NodeGuard(node_dir(&work));
    let (prefix, dir) = rt_project(&work);
    let r = sh(&prefix, &work, &dir, "./out/bin/fatbin_main out/fatbin");
    r.assert_ok();
    assert!(r.stdout.ends_with("PASS\n"), "{}", r.all());
    for ok in [
        "ok aclrtGetFunctionName gives add_tiled",
        "ok aclrtLaunchKernel: scale_add twice in stream order",
        "ok aclrtLaunchKernelWithConfig: add_tiled with placeholder tiling",
        "ok aclrtLaunchKernelWithHostArgs: add_tiled",
        "ok aclrtLaunchKernelWithConfig with a SCHEM_MODE attribute",
        "ok aclrtBinaryGetFunctionByEntry: tiling keys 1 and 2",
    ] {
        assert!(r.stdout.contains(ok), "{ok:?} missing:\n{}", r.all());
    }
    for err in [
        "aclrtBinaryLoadFromFile: cannot read the kernel binary out/fatbin/no_such.o",
        "has no kernel named \"no_such_kernel\" (its kernels: scale_add, add_tiled)",
        "argsData holds 12 bytes, kernel scale_add takes 32 bytes of arguments (x: pointer at offset 0",
        "the argument list is not finalized (aclrtKernelArgsFinalize)",
        "argsHandle was built for kernel add_tiled, funcHandle is kernel scale_add",
        "kernel scale_add block 2/4: a __gm__ pointer writes 4 bytes at",
    ] {
        assert!(r.stdout.contains(err), "{err:?} missing:\n{}", r.all());
    }
    // The older runtime path of registered binaries, on the same binary.
    let r = sh(&prefix, &work, &dir, "./out/bin/rt_main out/fatbin");
    r.assert_ok();
    assert!(r.stdout.ends_with("PASS\n"), "{}", r.all());
    for ok in [
        "ok rtKernelLaunch (0)",
        "ok z = 3 * x + y from the registered kernel",
        "ok the stub goes with the binary (107000)",
        "ok a device object that is not npu-emu's is 100003",
    ] {
        assert!(r.stdout.contains(ok), "{ok:?} missing:\n{}", r.all());
    }
    assert!(
        r.stdout
            .contains("has no kernel named \"no_such\" (its kernels: scale_add, add_tiled)"),
        "{}",
        r.all()
    );
}

#[test]
fn matmul_custom_project_at_several_shapes() {
    require_cmake();
    let work = scratch("tc-matmul");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    let dir = project(&work, "matmul_custom");
    let r = sh(
        &prefix,
        &work,
        &dir,
        "cmake -B build >/dev/null\ncmake --build build -j2 >/dev/null\n\
         ./build/matmul_custom 256 256 256 1 0\n\
         ./build/matmul_custom 1000 500 300 1 0\n\
         ./build/matmul_custom 64 2048 128 0 0 20\n\
         ./build/matmul_custom 512 1024 512 1 1 2 128 256\n\
         ./build/matmul_custom 256 256 128 0 1 1 128 128\n",
    );
    r.assert_ok();
    for case in [
        "matmul_custom 256x256x256 bias 1 mode 0 on ",
        "matmul_custom 1000x500x300 bias 1 mode 0 on 20 cores",
        "matmul_custom 64x2048x128 bias 0 mode 0 on ",
        "matmul_custom 512x1024x512 bias 1 mode 1 on 2 cores",
        "matmul_custom 256x256x128 bias 0 mode 1 on 1 cores",
    ] {
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with(case))
            .unwrap_or_else(|| panic!("{case} missing:\n{}", r.all()));
        assert!(line.ends_with(", 0 wrong"), "{line}");
    }
    assert_eq!(r.stdout.matches("\nPASS").count(), 5, "{}", r.all());
}
