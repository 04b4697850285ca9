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
    for s in sources {
        c.arg(c_dir().join(s));
    }
    c.args(extra).arg("-o").arg(&exe);
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
    for sub in [
        "",
        "npuemu",
        "interface",
        "lib",
        "kernel_tiling",
        "tiling",
        "tiling/platform",
        "register",
        "utils/debug",
        "basic_api",
        "graph",
    ] {
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
        // The high-level API needs C++17, as CANN's (it says so in an #error).
        let stds: &[&str] = if h.starts_with("lib") {
            &["c++17"]
        } else {
            &["c++17", "c++14"]
        };
        for std in stds {
            let src = work.join("one.cpp");
            std::fs::write(&src, format!("#include \"{}\"\n", h.display())).unwrap();
            // The op_host headers of a custom operator project (register/) see the runtime's
            // headers too, as op_build compiles them.
            let o = gxx(std)
                .args(["-fsyntax-only"])
                .arg(format!("-I{}", npu_emu_tests::include_dir().display()))
                .arg(&src)
                .output()
                .unwrap();
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
            "loaddata_transpose",
            "",
            "AscendC::LoadDataWithTranspose(a, b, 1)",
            "AscendC::LoadDataWithTranspose is not supported",
        ),
        (
            "scatter",
            "",
            "AscendC::Scatter(a, b, f, 0, 128)",
            "AscendC::Scatter is not supported on Atlas A2 / A3",
        ),
        (
            "transpose_ext",
            "",
            "AscendC::Transpose(a, b, buf.Get<uint8_t>(), 0)",
            "AscendC::Transpose with TransposeParamsExt is not supported",
        ),
        (
            "proposal_concat",
            "",
            "AscendC::ProposalConcat(a, b, 2, 4)",
            "AscendC::ProposalConcat is not supported on Atlas A2 / A3",
        ),
        (
            "rpsort16",
            "",
            "AscendC::RpSort16(a, b, 2)",
            "AscendC::RpSort16 is not supported on Atlas A2 / A3",
        ),
        (
            "gatherb_half",
            "",
            "AscendC::Gatherb(a, b, buf.Get<uint32_t>(), 1, AscendC::GatherRepeatParams(1, 8))",
            "AscendC::Gatherb supports uint16_t and uint32_t elements only",
        ),
        (
            "select_reg_scalar_mode",
            "",
            "AscendC::Select<half, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE>(a, a, b, 1, AscendC::BinaryRepeatParams())",
            "Select<T, VSEL_TENSOR_SCALAR_MODE> takes selMask",
        ),
        (
            "cross_core",
            "",
            "AscendC::CrossCoreSetFlag<0, PIPE_FIX>(3)",
            "AscendC::CrossCoreSetFlag is not supported",
        ),
        (
            "cast_pair",
            "",
            "AscendC::Cast(a, a, AscendC::RoundMode::CAST_NONE, 64)",
            "AscendC::Cast does not convert between these element types",
        ),
        (
            "div_int",
            "",
            "AscendC::LocalTensor<int32_t> i = buf.Get<int32_t>(); AscendC::Div(i, i, i, 8)",
            "AscendC::Div supports half and float",
        ),
        (
            "atomic_type",
            "",
            "AscendC::SetAtomicAdd<uint64_t>()",
            "atomic operations support float, half, bfloat16_t, int32_t, int16_t and int8_t",
        ),
        ("unknown", "", "AscendC::NoSuchApi(a)", "NoSuchApi"),
    ];
    for (name, prelude, stmt, expect) in cases {
        assert_compile_error(&work, name, prelude, stmt, expect);
    }
}

/// The `x=0x.. y=0x..` line icpu_faults prints first.
fn gm_addrs(r: &Run) -> (u64, u64) {
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("x=0x"))
        .unwrap_or_else(|| panic!("no address line:\n{}", r.all()));
    let mut it = line
        .split_whitespace()
        .map(|w| u64::from_str_radix(&w[4..], 16).unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

#[test]
fn violations_are_kernel_faults_naming_block_api_and_values() {
    let work = scratch("asc-faults");
    let exe = build(
        &work,
        "icpu_faults",
        &["icpu_faults.cpp", "faults.cpp"],
        &[],
    );
    // (case number in faults.cpp, expected message parts; "{x+N}" / "{y+N}" become addresses)
    let cases: &[(u32, &[&str])] = &[
        (0, &["TQue<VECIN, 1>::DeQue on an empty queue", "waits forever"]),
        (1, &["TQue<VECIN, 1>::EnQue: the queue already holds 1 tensors, its depth is 1"]),
        (2, &["TQue<VECIN, 1>::AllocTensor: all 2 buffers of the queue are in use (2 allocated"]),
        (3, &["TQue<VECIN, 1>::FreeTensor of a tensor at UB offset 0x200 that is not a buffer of this queue (its buffers are at 0x0, 0x100)"]),
        (4, &["TQue<VECIN, 1>::FreeTensor of a tensor whose buffer (UB offset 0x0) was already freed"]),
        (5, &["TQue<VECIN, 1>::FreeTensor of a tensor (UB offset 0x0) that is still in the queue"]),
        (6, &["TPipe::InitBuffer(TQue<VECOUT, 2>, num 2, len 32769): 65600 bytes", "131072 already in use exceed the Unified Buffer of 196608 bytes"]),
        (7, &["DataCopy GM->UB of 100 half elements (200 bytes)", "multiple of 32 bytes (use DataCopyPad"]),
        (8, &["DataCopy GM->UB: the destination LocalTensor starts at UB offset 0x6, which is not 32-byte aligned"]),
        (9, &["DataCopy GM->UB: touches 512 bytes of the destination LocalTensor, which holds 128 half elements"]),
        (10, &["AscendC::Add: calCount 200 exceeds the dst operand's 128 half elements"]),
        (11, &["AscendC::Muls: the dst operand starts at UB offset 0x10, which is not 32-byte aligned"]),
        (12, &["DataCopy GM->UB reads 512 bytes at {x+1792}, outside every buffer passed to the kernel ("]),
        (13, &["DataCopy UB->GM writes 32 bytes at {y+2048}, outside every buffer"]),
        (14, &["GlobalTensor::SetValue writes 2 bytes at {y+2048}, outside every buffer"]),
        (15, &["GlobalTensor::GetValue reads 4 bytes at 0x1000, outside every buffer"]),
        (16, &["DataCopyPad GM->UB reads 20 bytes at {x+2038}, outside every buffer"]),
        (17, &["LocalTensor::GetValue(128) on a tensor of 128 half elements"]),
        (18, &["a second TPipe was created while another is alive"]),
        (21, &["TQue<VECIN, 1>::EnQue of a tensor at UB offset 0x100 that is not a buffer of this queue"]),
        (22, &["TBuf<VECCALC>::Get<float>(65): 260 bytes, the buffer has 256"]),
        (23, &["AscendC::Add: mask 200 is outside [1, 128] (elements of half per repeat)"]),
        (24, &["AscendC::Exp: 5 repeats (block stride 1, repeat stride 8) reach byte 1280 of the dst operand, which holds 256 float elements (1024 bytes)"]),
        (25, &["AscendC::Add: dst (UB 0x20..0xa0) and src0 (UB 0x0..0x80) overlap at different offsets"]),
        (26, &["AscendC::Cast: in place between float and half, whose sizes differ"]),
        (28, &["[ASSERT] ", "faults.cpp:", "Assertion `tiles == 0 && \"tile num can not be zero!\"' failed"]),
    ];
    for (case, parts) in cases {
        let r = exec(&exe, &[&case.to_string(), "1"]);
        assert_eq!(r.code, Some(1), "case {case} should fault:\n{}", r.all());
        assert!(!r.stdout.contains("completed"), "case {case}:\n{}", r.all());
        let (x, y) = gm_addrs(&r);
        let regions = format!("(GmAlloc#1: 0x{x:x}+2048, GmAlloc#2: 0x{y:x}+2048)");
        for p in *parts {
            let mut want = p.to_string();
            for (name, base) in [("x", x), ("y", y)] {
                for off in [1792u64, 2038, 2048] {
                    want =
                        want.replace(&format!("{{{name}+{off}}}"), &format!("0x{:x}", base + off));
                }
            }
            let full = if Some(p) == parts.first() {
                format!("kernel faults block 0/1: {want}")
            } else {
                want.clone()
            };
            assert!(
                r.stderr.contains(&full),
                "case {case}: expected {full:?} in:\n{}",
                r.all()
            );
            if want.contains("outside every buffer") {
                assert!(
                    r.stderr.contains(&regions),
                    "case {case}: {regions} in:\n{}",
                    r.all()
                );
            }
        }
    }
    // Only block 5 of 8 reads past x: the fault names that block and the address.
    let r = exec(&exe, &["19", "8"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let (x, _) = gm_addrs(&r);
    let want = format!(
        "kernel faults block 5/8: GlobalTensor::GetValue reads 2 bytes at 0x{:x}, outside every buffer",
        x + 2052
    );
    assert!(r.stderr.contains(&want), "{want:?} in:\n{}", r.all());
    // Not a fault: two tensors come out of a depth-2 queue in the order they went in, and the
    // queue's state queries agree.
    let r = exec(&exe, &["20", "1"]);
    r.assert_ok();
    assert!(r.stdout.contains("y[0..4] = 1 2 0 0"), "{}", r.all());
    // Not a fault: a view (operator[]) enqueued or freed stands for its whole buffer.
    let r = exec(&exe, &["27", "1"]);
    r.assert_ok();
    assert!(r.stdout.contains("y[0..4] = 5 32 1 0"), "{}", r.all());
}

#[test]
fn half_and_bfloat16_match_ieee_rounding() {
    let work = scratch("asc-half");
    let exe = build(&work, "half_types", &["half_types.cpp"], &[]);
    let r = exec(&exe, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("half/bfloat16_t: PASS"), "{}", r.all());
}

/// Every vector operation and Cast against a host reference computed independently of the
/// headers (icpu_vec.cpp): one PASS line per (operation, type).
#[test]
fn vector_operations_and_cast_match_host_reference() {
    let work = scratch("asc-vec");
    let exe = build(&work, "icpu_vec", &["icpu_vec.cpp", "vec_ops.cpp"], &[]);
    let r = exec(&exe, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("0 failures"), "{}", r.all());
    for op in [
        "Add",
        "Sub",
        "Mul",
        "Max",
        "Min",
        "Adds",
        "Muls",
        "Maxs",
        "Mins",
        "Duplicate",
    ] {
        for ty in ["half", "float", "int32_t", "int16_t"] {
            let line = format!("PASS {op} {ty}\n");
            assert!(r.stdout.contains(&line), "{line:?} missing:\n{}", r.all());
        }
    }
    for op in [
        "Div",
        "Exp",
        "Ln",
        "Abs",
        "Sqrt",
        "Relu",
        "Rsqrt",
        "Reciprocal",
        "LeakyRelu",
    ] {
        for ty in ["half", "float"] {
            let line = format!("PASS {op} {ty}\n");
            assert!(r.stdout.contains(&line), "{line:?} missing:\n{}", r.all());
        }
    }
    for line in [
        "PASS Relu int32_t\n",
        "PASS And int16_t\n",
        "PASS Or int16_t\n",
        "PASS Not int16_t\n",
        "PASS Cast half->float mode 0\n",
        "PASS level0 case 0\n",
        "PASS level0 case 1\n",
        "PASS level0 case 2\n",
        "PASS level0 case 3\n",
        "PASS level0 case 4\n",
        "PASS level0 case 5\n",
        "PASS atomic case 0\n",
        "PASS atomic case 1\n",
        "PASS atomic case 2\n",
        "PASS cmpsel case 0\n",
        "PASS cmpsel case 1\n",
        "PASS Cast int32_t->float mode 3\n",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing:\n{}", r.all());
    }
    for mode in 0..=6 {
        for pair in [
            "float->half",
            "float->bfloat16_t",
            "float->int32_t",
            "float->float",
        ] {
            let line = format!("PASS Cast {pair} mode {mode}\n");
            assert!(r.stdout.contains(&line), "{line:?} missing:\n{}", r.all());
        }
    }
}

/// run_block as generated launch code calls it, with canonical addresses != host alias.
#[test]
fn run_block_translates_canonical_addresses_and_reports_faults() {
    let work = scratch("asc-runblock");
    let exe = build(
        &work,
        "run_block",
        &["run_block.cpp", "add_custom_tiling.cpp"],
        &[],
    );
    let r = exec(&exe, &[]);
    r.assert_ok();
    for line in [
        "computed through the alias: ok\n",
        "fault rc=1: kernel oob block 2/4: GlobalTensor::GetValue reads 2 bytes at 0x12340101772, outside every buffer passed to the kernel (x: 0x12340000000+6000, y: 0x12340100000+6000, z: 0x12340200000+6000)\n",
        "truncated rc=1: [kernel oob block 0/1: G] len 23\n",
        "exception rc=1: kernel thrower block 1/2: C++ exception escaped the kernel: boom\n",
        "after the block: npu-emu: outside a kernel launch: AscendC::GetBlockIdx() was called\n",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing:\n{}", r.all());
    }
}

#[test]
fn printf_formats_by_argument_type() {
    let work = scratch("asc-print");
    let exe = build(&work, "icpu_print", &["icpu_print.cpp"], &[]);
    let r = exec(&exe, &[]);
    r.assert_ok();
    for b in 0..2 {
        let line = format!("block {b} of 2: 1099511627776 200 1.500000 ff str 1%\n");
        assert!(r.stdout.contains(&line), "{line:?} missing:\n{}", r.all());
    }
    assert_eq!(r.stdout.matches(" 3.14|7   |\n").count(), 2, "{}", r.all());
    // -DASCENDC_DUMP=0 silences both in a launched kernel
    let quiet = build(
        &work,
        "icpu_print_quiet",
        &["icpu_print.cpp"],
        &["-DASCENDC_DUMP=0"],
    );
    let r = exec(&quiet, &[]);
    r.assert_ok();
    assert_eq!(r.stdout, "", "{}", r.all());
}

/// The vendor CPU-mode layout: kernels in a shared library (here built with
/// -fvisibility=hidden), ICPU_RUN_KF in the executable; block context and faults cross over.
#[test]
fn kernel_library_split_from_the_executable() {
    let work = scratch("asc-split");
    let lib = work.join("libkernels.so");
    let o = gxx("c++17")
        .args([
            "-fPIC",
            "-shared",
            "-fvisibility=hidden",
            "-fvisibility-inlines-hidden",
        ])
        .arg(c_dir().join("add_custom_tiling.cpp"))
        .arg("-o")
        .arg(&lib)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let exe = build(
        &work,
        "split",
        &["icpu_add_tiling.cpp"],
        &[
            &format!("-L{}", work.display()),
            "-lkernels",
            &format!("-Wl,-rpath,{}", work.display()),
        ],
    );
    exec(&exe, &["1000", "7", "64"]).assert_ok();
    let r = exec(&exe, &["1000", "4", "100"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr.contains(
            "kernel add_custom_tiling block 0/4: DataCopy GM->UB of 100 half elements (200 bytes)"
        ),
        "{}",
        r.all()
    );
}

/// Every reduction (WholeReduce*, BlockReduce*, PairReduceSum, RepeatReduceSum, ReduceSum /
/// ReduceMax / ReduceMin in both forms, ReduceRepeat) and the mask registers (SetVectorMask
/// normal and counter mode with isSetMask = false) against host references written from the
/// reference's instruction semantics (icpu_reduce.cpp), bit for bit, in half and float.
#[test]
fn reductions_and_mask_registers_match_host_reference() {
    let work = scratch("asc-reduce");
    let exe = build(&work, "icpu_reduce", &["icpu_reduce.cpp"], &[]);
    let r = exec(&exe, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("\n0 failures"), "{}", r.all());
    let passes = r.stdout.lines().filter(|l| l.starts_with("PASS ")).count();
    assert_eq!(passes, 42, "{}", r.all());
    for case in [
        "WholeReduceSum(bit mask)",
        "WholeReduceMin(ONLY_INDEX)",
        "BlockReduceSum",
        "PairReduceSum",
        "ReduceSum(count)",
        "ReduceSum(mask, repeat)",
        "ReduceMax(count, index)",
        "SetVectorMask(counter)+Add",
    ] {
        for ty in ["half", "float"] {
            let line = format!("PASS {case} {ty}\n");
            assert!(r.stdout.contains(&line), "{line:?} missing:\n{}", r.all());
        }
    }
}

/// The cube path of the basic API (icpu_cube.cpp): DataCopy Nd2Nz to L1, LoadData to L0A / L0B,
/// Mmad (also accumulating), Fixpipe to ND in fp32 and through F322F16, exact against a host
/// product; the products are computed in libascendcl, so the program links it.
#[test]
fn cube_basic_api_products_are_exact() {
    let work = scratch("asc-cube");
    let lib = npu_emu_tests::lib_dir();
    let exe = build(
        &work,
        "icpu_cube",
        &["icpu_cube.cpp"],
        &[
            &format!("-L{}", lib.display()),
            "-lascendcl",
            &format!("-Wl,-rpath,{}", lib.display()),
        ],
    );
    let r = exec(&exe, &[]);
    r.assert_ok();
    for case in [
        "PASS Mmad fp16 x fp16 -> fp32, Fixpipe ND",
        "PASS Mmad fp16 -> fp32, Fixpipe F322F16, 2 blocks",
        "PASS Mmad accumulating K in two steps",
    ] {
        assert!(r.stdout.contains(case), "{case:?} missing:\n{}", r.all());
    }
}

/// Op-project tiling in kernel code (icpu_tiling.cpp): GET_TILING_DATA of the struct registered
/// with REGISTER_TILING_DATA_CLASS, the _WITH_STRUCT and _MEMBER forms, TILING_KEY_IS /
/// TILING_KEY_LIST with the key of ICPU_SET_TILING_KEY. Built with tikicpulib's definitions
/// (__CCE_AICORE__ marks kernel code, as CANN's CPU-debug build does).
#[test]
fn tiling_data_and_tiling_keys_in_kernel_code() {
    let work = scratch("asc-tiling");
    let exe = build(
        &work,
        "icpu_tiling",
        &["icpu_tiling.cpp"],
        &["-D__CCE_AICORE__=220"],
    );
    let r = exec(&exe, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("\n0 failures"), "{}", r.all());
    assert_eq!(
        r.stdout.lines().filter(|l| l.starts_with("PASS ")).count(),
        6,
        "{}",
        r.all()
    );
}

/// Kernels written from the API reference pages (icpu_api_probe.cpp): TQueBind, strided DataCopy,
/// DataCopyPad with padding, level-0 masks and counter mode, Brcb, Gather, GatherMask, CreateVecIndex,
/// Compare + Select, Cast round modes, the unary chain and Axpy, Transpose, atomics with SyncAll,
/// AddRelu / SubRelu / MulAddDst / FusedMulAdd / shifts / Copy, InitGlobalMemory and the high-level
/// element-wise math, each output element against a host reference; also as C++14.
#[test]
fn api_reference_kernels_match_host_reference() {
    let work = scratch("asc-api-probe");
    let exe = build(&work, "icpu_api_probe", &["icpu_api_probe.cpp"], &[]);
    let r = exec(&exe, &[]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for case in [
        "TQueBind+TBuf",
        "DataCopy(DataCopyParams strides)",
        "DataCopyPad(DataCopyExtParams, right padding)",
        "level-0 Duplicate/Adds + counter-mode Mul",
        "Brcb",
        "Gather(count, mask/repeat)",
        "GatherMask(built-in 1..7, user pattern)",
        "CreateVecIndex",
        "Compare+Select",
        "Cast(float->int32, ROUND/FLOOR/CEIL/TRUNC)",
        "Exp/Ln/Sqrt/Relu/Muls/Adds + Axpy",
        "Transpose(16x16 half)",
        "SetAtomicAdd + SyncAll + GetBlockNum",
        "AddRelu/SubRelu/MulAddDst/FusedMulAdd/Copy/ShiftLeft/ShiftRight",
        "InitGlobalMemory + SyncAll + SetAtomicAdd",
        "Sigmoid/Tanh/Sin/Cos/Erf/Floor",
        "Sort/Sort32/MrgSort/Extract",
        "DataCopyPad(strides, left padding) + UB->UB DataCopy",
        "scalar bit operations + TRACE_START/STOP",
        "SoftMax/SimpleSoftMax + SoftMaxTilingFunc",
        "LayerNorm + GetLayerNormNDTilingInfo",
    ] {
        assert!(
            r.stdout.contains(&format!("PASS {case}\n")),
            "no PASS {case}:\n{}",
            r.all()
        );
    }
    let exe14 = work.join("icpu_api_probe14");
    let o = gxx("c++14")
        .arg(c_dir().join("icpu_api_probe.cpp"))
        .arg("-o")
        .arg(&exe14)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exec(&exe14, &[]).assert_ok();
    // Documented constraint violations of the new calls are kernel faults naming the API.
    for (case, msg) in [
        (
            "misuse0",
            "AscendC::Gather: srcOffset[0] = 240 (+ srcBaseAddr 16) bytes is past the src operand's 64 float",
        ),
        (
            "misuse1",
            "AscendC::GatherMask: built-in src1Pattern 9 is outside [1, 7]",
        ),
        ("misuse2", "AscendC::Brcb: src0 and dst are the same tensor"),
        ("misuse3", "AscendC::MrgSort: validBit 5 is not 3"),
    ] {
        let r = exec(&exe, &[case]);
        assert_eq!(r.code, Some(1), "{case}:\n{}", r.all());
        assert!(
            r.stderr.contains("kernel misuse_kernel block 0/1: ") && r.stderr.contains(msg),
            "{case}:\n{}",
            r.all()
        );
    }
}

/// More kernels written from the API reference pages (icpu_api_probe2.cpp): TBufPool (pools from
/// TPipe and from pools, shared pools, Reset between stages and in a loop), level-0 Compare /
/// CompareScalar and the CmpMask register (GetCmpMask / SetCmpMask), level-0 Select in the three
/// SELMODEs and its register forms, Gatherb, Concat + Sort, Silu / Swish / Gelu / FasterGelu, the
/// high-level inverse / hyperbolic trigonometry, Frac, logarithms, Power, Sum, Mean,
/// ArithProgression and ClampMax / ClampMin, each against a host reference;
/// also as
/// C++14; and their documented misuses as kernel faults naming the API.
#[test]
fn api_reference_kernels_2_match_host_reference() {
    let work = scratch("asc-api-probe2");
    let exe = build(&work, "icpu_api_probe2", &["icpu_api_probe2.cpp"], &[]);
    let r = exec(&exe, &[]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for case in [
        "TBufPool (InitBufPool, nested, shared, Reset)",
        "Compare/CompareScalar level 0 + GetCmpMask",
        "Select level 0 (3 modes) + SetCmpMask register forms",
        "Gatherb",
        "Concat + Sort",
        "Silu/Swish/Gelu/FasterGelu",
        "Tan/Asin/Acos/Atan/Sinh/Cosh/Asinh/Acosh/Atanh/Frac/Log/Log2/Log10",
        "Power (tensor/tensor, tensor/scalar, scalar/tensor, int32)",
        "Sum/Mean + ArithProgression + ClampMax/ClampMin",
    ] {
        assert!(
            r.stdout.contains(&format!("PASS {case}\n")),
            "no PASS {case}:\n{}",
            r.all()
        );
    }
    let exe14 = work.join("icpu_api_probe2_14");
    let o = gxx("c++14")
        .arg(c_dir().join("icpu_api_probe2.cpp"))
        .arg("-o")
        .arg(&exe14)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exec(&exe14, &[]).assert_ok();
    for (case, msg) in [
        (
            "misuse0",
            "TBufPool<VECCALC, 4>::InitBuffer(TQue<VECIN, 1>, num 1, len 32): 32 bytes (rounded up to 32-byte blocks) on top of the 1024 already in use exceed the pool's 1024 bytes",
        ),
        (
            "misuse1",
            "TBufPool<VECCALC, 2>::InitBuffer(TQue<VECIN, 1>, num 1, len 64): 1 buffers on top of the 2 already handed out exceed the pool's bufIDSize 2",
        ),
        (
            "misuse2",
            "TPipe::InitBufPool(TBufPool<VECCALC, 4>, 2048, shareBuf TBufPool<VECCALC, 4>): the length is larger than the 1024 bytes of the reused pool",
        ),
        (
            "misuse3",
            "TBufPool<VECCALC, 4>::InitBuffer(TQue<A1, 1>, num 1, len 512): the queue lies in L1, the pool in UB",
        ),
        (
            "misuse4",
            "AscendC::Gatherb: offset[0] = 16 bytes is not a multiple of 32",
        ),
        (
            "misuse5",
            "AscendC::Compare: 256 bits need 32 bytes of dst, which holds 16",
        ),
        (
            "misuse6",
            "AscendC::Silu: src (UB 0x",
        ),
    ] {
        let r = exec(&exe, &[case]);
        assert_eq!(r.code, Some(1), "{case}:\n{}", r.all());
        assert!(
            r.stderr.contains("kernel misuse2_kernel block 0/1: ") && r.stderr.contains(msg),
            "{case}:\n{}",
            r.all()
        );
    }
}
