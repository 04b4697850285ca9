//! Kernel probes: programs written from CANN's documented Ascend C behaviour (the API
//! reference and the KernelLaunch samples' layout), not from npu-emu's code, built and run
//! the way the documentation says.
//!
//! - `tests/c/kernel_probes/vec_project/`: a KernelLaunch-layout CMake project (CMakeLists.txt,
//!   cmake/npu_lib.cmake with a STATIC `ascendc_library`, cmake/cpu_lib.cmake, data_utils.h,
//!   main.cpp with both the ACLRT_LAUNCH_KERNEL and the ICPU_RUN_KF branch) with four kernels:
//!   LeakyRelu with BUFFER_NUM = 2 and its tiling read from `GM_ADDR tiling` through a
//!   GlobalTensor (CopyTiling), |x - y| * s with a TBuf and a tiling struct by value, Abs over
//!   rows that are not 32-byte multiples with DataCopyPad, and Cast/Exp/Adds through a float
//!   TBuf. Built after `source set_env.sh` with `-DASCEND_CANN_PACKAGE_PATH`, in RUN_MODE npu
//!   (SOC_VERSION Ascend310P3), cpu (Ascend910B1) and sim (Ascend910B4, linking the
//!   simulator runtime_camodel as sim link lines do); main.cpp checks every element and
//!   prints the `__NPU_ARCH__` the kernel was compiled with (2002 for the 310P3, 2201 else).
//! - `tests/c/kernel_probes/kernels.cpp` + `probe_host.cpp`, through `npu-emu ascendc-stub` and
//!   g++: a kernel without `extern "C"` taking `__gm__ float *`, TPipe passed by pointer, UB
//!   and GM scalar access and printf; a nullptr workspace on the default stream; a 2-D
//!   DataCopyPad with a padding value; former/tail blocks of different lengths with the 16-bit
//!   DataCopyPad parameter forms; launch arguments that are not device memory (host,
//!   stack, freed) and blockDim out of range (107000, messages naming the argument); and the
//!   kernel mistakes a CI user expects to be caught (507015 at the synchronize with a message
//!   naming kernel, block and API), after which the stream still works.
//! - `tests/c/kernel_probes/hello_world/`: the HelloWorld layout (a parameterless kernel,
//!   unqualified printf, `hello_world<<<blockDim, nullptr, stream>>>()` in a host wrapper, a
//!   STATIC ascendc_library as the executable's only link), one line per block.
//! - `tests/c/kernel_probes/split_layout/`: op_kernel/ + include/ + host/, the tiling header
//!   reachable only through `ascendc_include_directories` (called after `ascendc_library`):
//!   the generated header still declares the struct parameter as a pointer.
//! - `tests/c/kernel_probes/icpu_host.cpp`: the CPU-debug path (ICPU_RUN_KF, GmAlloc, a nullptr
//!   workspace), and a tiling buffer from ordinary host memory reported with a GmAlloc hint.

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{command, installed_bash, node_dir, npu_emu_bin, root, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn probes_dir() -> PathBuf {
    root().join("tests/c/kernel_probes")
}

/// `npu-emu install --prefix work/inst`.
fn install(work: &Path) -> PathBuf {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    prefix
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn vector_kernel_project_npu_and_cpu() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test (.ci/run installs it from Debian's packages)");
    }
    let work = scratch("kp-vec");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    for (mode, soc, arch) in [
        ("npu", "Ascend310P3", 2002),
        ("cpu", "Ascend910B1", 2201),
        ("sim", "Ascend910B4", 2201),
    ] {
        let proj = work.join(format!("vec-{mode}"));
        copy_dir(&probes_dir().join("vec_project"), &proj);
        // As the KernelLaunch samples' run.sh builds and runs.
        let script = format!(
            "cd '{}'\n\
             cmake -B build -DRUN_MODE={mode} -DSOC_VERSION={soc} \
             -DASCEND_CANN_PACKAGE_PATH=$ASCEND_HOME_PATH >/dev/null\n\
             cmake --build build -j2 >/dev/null\n\
             cmake --install build >/dev/null\n\
             export LD_LIBRARY_PATH=$(pwd)/out/lib:$(pwd)/out/lib64:$LD_LIBRARY_PATH\n\
             ./out/bin/ascendc_kernels_bbit\n",
            proj.display()
        );
        let r = run(installed_bash(&prefix, &work, &script));
        assert_eq!(r.code, Some(0), "RUN_MODE={mode}:\n{}", r.all());
        for k in [
            "leakyrelu_custom done",
            "sub_muls_custom done",
            "abs_pad_custom done",
            "cast_exp_custom done",
            "PASS",
        ] {
            assert!(
                r.stdout.contains(k),
                "RUN_MODE={mode}: no {k:?}:\n{}",
                r.all()
            );
        }
        // The SoC's device-code macro, as CANN's kernel compiler predefines it.
        let a = format!("kernel __NPU_ARCH__ {arch}");
        assert!(
            r.stdout.contains(&a),
            "RUN_MODE={mode}: no {a:?}:\n{}",
            r.all()
        );
    }
}

/// The probe kernel library and host program, built once for the tests below.
fn probe_host() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let work = scratch("kp-build");
        let gen = work.join("gen");
        let mut c = Command::new(npu_emu_bin());
        c.args(["ascendc-stub", "--out-dir"])
            .arg(&gen)
            .arg(probes_dir().join("kernels.cpp"));
        run(c).assert_ok();
        let lib = work.join("libprobes.so");
        let inc = root().join("headers/include");
        let o = Command::new("g++")
            .args([
                "-std=c++17",
                "-O1",
                "-fPIC",
                "-shared",
                "-pthread",
                "-Wall",
                "-Werror",
            ])
            .arg(format!("-I{}", root().join("headers/ascendc").display()))
            .arg(format!("-I{}", inc.display()))
            .arg(gen.join("kernels.npuemu.cpp"))
            .arg("-o")
            .arg(&lib)
            .arg(format!("-L{}", npu_emu_tests::lib_dir().display()))
            .arg("-lascendcl")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "kernel library:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let exe = work.join("probe_host");
        let o = Command::new("g++")
            .args(["-std=c++17", "-O1", "-Wall", "-Werror"])
            .arg(format!("-I{}", inc.display()))
            .arg(format!("-I{}", gen.join("include").display()))
            .arg(probes_dir().join("probe_host.cpp"))
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", work.display()))
            .arg("-lprobes")
            .arg(format!("-Wl,-rpath,{}", work.display()))
            .arg(format!("-L{}", npu_emu_tests::lib_dir().display()))
            .arg("-lascendcl")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "host program:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        exe
    })
}

fn probe(work: &Path, args: &[&str]) -> Run {
    let mut c = command(probe_host(), work);
    c.args(args);
    run(c)
}

#[test]
fn documented_kernel_forms_compute_right() {
    let work = scratch("kp-forms");
    let _node = NodeGuard(node_dir(&work));
    for case in ["misc", "ws", "pad2d", "uneven"] {
        let r = probe(&work, &[case]);
        assert_eq!(r.code, Some(0), "{case}:\n{}", r.all());
        assert!(r.stdout.contains("PASS"), "{case}:\n{}", r.all());
        assert!(!r.stdout.contains("pad2d: row"), "{case}:\n{}", r.all());
    }
    let r = probe(&work, &["misc"]);
    assert!(
        r.stdout.contains("block 0 of 3 n=64 v=-9.000000"),
        "printf from the kernel:\n{}",
        r.all()
    );
    // DumpTensor in the documented form: c[n] is 512 bytes into the UB (after the 256-byte queue
    // buffer and n = 64 floats of the TBuf).
    assert!(
        r.stdout.contains(
            "DumpTensor: desc=3, addr=512, data_type=float32, position=UB, dump_size=4\n\
             [996.000000, 996.000000, 996.000000, 996.000000]\n"
        ),
        "DumpTensor from the kernel:\n{}",
        r.all()
    );
}

#[test]
fn launch_arguments_that_are_not_device_memory() {
    let work = scratch("kp-args");
    let _node = NodeGuard(node_dir(&work));
    let r = probe(&work, &["args"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for want in [
        "host: 107000 [aclrtlaunch_ws_kernel: argument tiling = 0x",
        "is host memory from aclrtMallocHost, not device memory",
        "stack: 107000 [aclrtlaunch_ws_kernel: argument tiling = 0x",
        "is a host address, not device memory",
        "freed: 107000 [aclrtlaunch_ws_kernel: argument tiling = 0x",
        "already freed",
        "blockdim0: 107000 [aclrtlaunch_err_kernel: blockDim = 0 is invalid: expected 1..=65535",
        "blockdim65536: 107000 [aclrtlaunch_err_kernel: blockDim = 65536 is invalid",
        "sync: 0 []",
    ] {
        assert!(r.stdout.contains(want), "no {want:?}:\n{}", r.all());
    }
}

#[test]
fn kernel_mistakes_fail_the_stream_with_a_clear_message() {
    let work = scratch("kp-err");
    let _node = NodeGuard(node_dir(&work));
    let r = probe(&work, &["err", "0"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("sync: 0 []"), "{}", r.all());
    for (mode, block, want) in [
        (
            "1",
            "block 0/2",
            "TQue<VECIN, 1>::AllocTensor: all 1 buffers of the queue are in use",
        ),
        (
            "2",
            "block 0/2",
            "DataCopy GM->UB of 10 half elements (20 bytes): DataCopy moves whole 32-byte blocks",
        ),
        ("3", "block 1/2", "DataCopy GM->UB reads 2080 bytes at 0x"),
        ("4", "block 0/2", "TQue<VECIN, 1>::DeQue on an empty queue"),
        (
            "5",
            "block 0/2",
            "TPipe::InitBuffer(TQue<VECOUT, 1>, num 1, len 204800)",
        ),
        (
            "6",
            "block 0/2",
            "AscendC::Add: calCount 4096 exceeds the dst operand's 2048 half elements",
        ),
        (
            "7",
            "block 0/2",
            "GlobalTensor::SetValue writes 2 bytes at 0x",
        ),
    ] {
        let r = probe(&work, &["err", mode]);
        assert_eq!(r.code, Some(0), "mode {mode}:\n{}", r.all());
        let sync = r
            .stdout
            .lines()
            .find(|l| l.starts_with("sync: "))
            .unwrap_or("");
        assert!(
            sync.starts_with("sync: 507015 [aclrtSynchronizeStream: "),
            "mode {mode}:\n{}",
            r.all()
        );
        let full = format!("kernel err_kernel {block}: {want}");
        assert!(
            sync.contains(&full),
            "mode {mode}: no {full:?}:\n{}",
            r.all()
        );
        if mode == "3" {
            assert!(
                sync.contains(", outside every buffer passed to the kernel (x: 0x")
                    && sync
                        .ends_with("; it starts 2080 bytes into x and runs 32 bytes past its end]"),
                "{}",
                r.all()
            );
        }
        // The failure is logged when it happens, and the stream runs the next kernel.
        assert!(r.stderr.contains(&full), "mode {mode}:\n{}", r.all());
        assert!(
            r.stdout.contains("launch: 0 []"),
            "mode {mode}:\n{}",
            r.all()
        );
        assert!(
            r.stdout.contains("again: 0 []"),
            "mode {mode}:\n{}",
            r.all()
        );
        assert!(
            r.stdout.contains("sync2: 0 []"),
            "mode {mode}:\n{}",
            r.all()
        );
    }
}

#[test]
fn hello_world_kernel_call_operator_project() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test (.ci/run installs it from Debian's packages)");
    }
    let work = scratch("kp-hello");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    let proj = work.join("hello");
    copy_dir(&probes_dir().join("hello_world"), &proj);
    let script = format!(
        "cd '{}'\n\
         cmake -B build -DASCEND_CANN_PACKAGE_PATH=$ASCEND_HOME_PATH >/dev/null\n\
         cmake --build build -j2 >/dev/null\n\
         ./build/main\n",
        proj.display()
    );
    let r = run(installed_bash(&prefix, &work, &script));
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("synchronize: 0"), "{}", r.all());
    for b in 0..8 {
        let line = format!("Hello World!!! block {b} of 8\n");
        assert_eq!(r.stdout.matches(&line).count(), 1, "{line:?}:\n{}", r.all());
    }
    assert_eq!(
        r.stdout.matches("Hello World!!!\n").count(),
        8,
        "{}",
        r.all()
    );
}

#[test]
fn tiling_header_from_ascendc_include_directories() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required for this test (.ci/run installs it from Debian's packages)");
    }
    let work = scratch("kp-split");
    let _node = NodeGuard(node_dir(&work));
    let prefix = install(&work);
    let proj = work.join("split");
    copy_dir(&probes_dir().join("split_layout"), &proj);
    let script = format!(
        "cd '{}'\n\
         cmake -B build -DASCEND_CANN_PACKAGE_PATH=$ASCEND_HOME_PATH >/dev/null\n\
         cmake --build build -j2 >/dev/null\n\
         ./build/main\n\
         grep aclrtlaunch_scale_custom build/include/kernels/aclrtlaunch_scale_custom.h\n",
        proj.display()
    );
    let r = run(installed_bash(&prefix, &work, &script));
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stdout.contains("launch 0, synchronize 0, 0 wrong\nPASS"),
        "{}",
        r.all()
    );
    // The struct parameter becomes a pointer, as CANN's generator declares it.
    assert!(
        r.stdout.contains(
            "uint32_t aclrtlaunch_scale_custom(uint32_t blockDim, aclrtStream stream, void* x, void* y, ScaleTiling* tiling);"
        ),
        "{}",
        r.all()
    );
}

#[test]
fn cpu_debug_path_with_a_buffer_not_from_gmalloc() {
    let work = scratch("kp-icpu");
    let exe = work.join("icpu_host");
    let o = Command::new("g++")
        .args(["-std=c++17", "-O1", "-pthread", "-Wall", "-Werror"])
        .args(["-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1"])
        .arg(format!("-I{}", root().join("headers/ascendc").display()))
        .arg(format!("-I{}", root().join("headers/include").display()))
        .arg(probes_dir().join("kernels.cpp"))
        .arg(probes_dir().join("icpu_host.cpp"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", npu_emu_tests::lib_dir().display()))
        .arg("-lascendcl")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = run(command(&exe, &work));
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    let mut c = command(&exe, &work);
    c.arg("host");
    let r = run(c);
    assert_eq!(r.code, Some(1), "{}", r.all());
    for want in [
        "kernel ws_kernel block 0/4: GlobalTensor::GetValue reads 4 bytes at 0x",
        ", outside every buffer passed to the kernel (GmAlloc#1: 0x",
        "; under ICPU_RUN_KF every buffer a kernel reads or writes must come from AscendC::GmAlloc",
    ] {
        assert!(r.stderr.contains(want), "no {want:?}:\n{}", r.all());
    }
}
