//! The aclnn operators (issue 10) from C++ programs built against an install tree as a CANN
//! user builds (`-I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lopapi -lnnopbase
//! -lascendcl`):
//!
//! - `aclnn_ops.cpp`: every operator of the MLP training set (and more) × dtypes × a
//!   contiguous, a non-contiguous and a broadcast case against the independent host reference
//!   of `ops_ref.h` (exact for elementwise float32 and once-rounded fp16/bf16; tolerances
//!   stated in the program for reductions, products, softmax and losses);
//! - `aclnn_ops2.cpp`: the other families (comparisons, logical, where/masked fill, pow, div
//!   modes, unary math and activation backward forms, reductions with indices and norms,
//!   batched products, softmax, layer norm, embedding, dropout, bernoulli, uniform, arange);
//! - `aclnn_ops3.cpp`: every remaining export once (in-place and scalar forms, other
//!   reductions, batched and in-place products, layer-norm variants, tensor-seeded random
//!   operators, the whole Foreach family) and the families beyond the issue's list (clamp,
//!   rounding, more math, remainder, floor divide, atan2, any/all/prod/cumsum, equal, fill with
//!   a tensor, index select, gather);
//! - `aclnn_ops4.cpp`: the operators torch_npu 2.9 asks for beyond those (Triu/Tril, Stack,
//!   Expand, MaskedSelect with the out tensor's shape afterwards, Scatter/ScatterValue,
//!   DropoutGenMask(V2) + DropoutDoMask, GeluV2 + GeluBackwardV2, InplaceMaskedScatter,
//!   Var/Std and their means, the bitwise family) and their argument errors;
//! - `aclnn_ops5.cpp`: advanced indexing (Nonzero, NonzeroV2, Index, IndexPutImpl, Flip) and
//!   Erfc, Asinh, Acosh, Atanh, Erfinv, NanToNum;
//! - `aclnn_ops10.cpp`: LinalgCross, Im2col, Einsum, InstanceNorm, ApplyAdamW (V1), Frac,
//!   UpsampleNearest3d (+Backward), UniqueDim and their argument errors;
//! - `aclnn_ops11.cpp`: IndexFillTensor, IndexFill, Renorm (each + in place), Range, Pdist,
//!   Slogdet, LinalgQr and their argument errors;
//! - `aclnn_ops12.cpp`: AvgPool3d, AdaptiveAvgPool3d, MaxPool3dWithArgmax, AdaptiveMaxPool3d,
//!   ReflectionPad3d, ReplicationPad3d, CircularPad2d/3d, GridSampler2D/3D (each + Backward),
//!   AffineGrid, UpsampleTrilinear3d, UpsampleBicubic2d (+Backward) and their argument errors;
//! - `aclnn_ops13.cpp`: the SyncBatchNorm family, AddRmsNorm, AddLayerNorm (+Grad), FastGelu, GeGlu/GeGluV3, GroupNormSilu (+V2), CrossEntropyLoss (+Grad), Hardshrink,
//!   Softshrink (+ backward forms) and their argument errors;
//! - `aclnn_ops14.cpp`: Diag, DiagFlat, Signbit, Gcd, the shifts, IsIn forms, Addr, Cdist,
//!   TriangularSolve, MaxUnpool2d/3d, Svd, GatherNd, ScatterNd, Bucketize;
//! - `aclnn_complex.cpp`: complex tensors through the arithmetic, unary, reduction, copy and
//!   cast operators, and aclStft;
//! - `aclnn_ops16.cpp`: training-path operators (ScatterReduce, InplaceScatterReduce,
//!   SearchSorteds, LinalgCholesky, UnfoldGrad, LogitGrad, HardswishBackwardV2, CdistBackward,
//!   MultilabelMarginLoss, IndexAddV2, AddRelu) against hand-derived values, and their argument errors;
//! - `aclnn_ops15.cpp`: quantisation (AscendQuant, DynamicQuant, QuantMatmul,
//!   WeightQuantBatchMatmul, TransQuantParamV2), GroupedMatmul and the MoE routing operators;
//! - `aclnn_ops18.cpp`: the operators whose ops-nn documentation examples did not build
//!   (activations, softmax losses, MaxPool, unpool gradients, GatherV3, the scatter family,
//!   Gemm, TransposeBatchMatMul, batch/group norm pieces, ForeachRoundOffNumber, Chamfer);
//! - `aclnn_doc_forms.cpp`: the forms the current operator reference uses: ConvTbc,
//!   ConvDepthwise2d, the headers that declare a sibling's functions, RmsNormGrad's rstd as a
//!   prefix of x's shape, RotaryPositionEmbeddingGrad without x, QuantMatmulV3 over an NZ x2;
//! - `aclnn_mlp.cpp`: the calls of a small MLP's training step (Addmm over a transposed weight,
//!   Relu, MseLoss and the backward forms, Mm, ReduceSum, ForeachAddListV2 for SGD), 60 steps
//!   on one stream;
//! - `aclnn_ops_errors.cpp`: the two-phase protocol's error cases, single-use and repeatable
//!   executors, stream order with copies, events and a second stream, a task failure at
//!   synchronize;
//! - `examples/`: programs in the operator reference's example style print the documented
//!   results;
//! - `tests/bench/aclnn_ops_bench.cpp`: the throughput program builds and runs (small sizes;
//!   the figures are measured by hand, never asserted).

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{command, node_dir, npu_emu_bin, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Install into `work/inst`, build `src` (relative to the repository) against it.
fn build(work: &Path, src: &str, extra_inc: &str) -> (PathBuf, PathBuf) {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    let lib64 = prefix.join("lib64");
    let root = npu_emu_tests::root();
    let name = Path::new(src)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let exe = work.join(name);
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
        .arg(format!("-I{}", root.join(extra_inc).display()))
        .arg(root.join(src))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib64.display()))
        .args(["-lopapi", "-lnnopbase", "-lascendcl"])
        .output()
        .expect("run g++");
    assert!(
        o.status.success(),
        "compiling {src} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (exe, lib64)
}

fn run_on(exe: &Path, lib64: &Path, work: &Path, args: &[&str]) -> Run {
    let mut c = command(exe, work);
    c.env("LD_LIBRARY_PATH", lib64).args(args);
    run(c)
}

#[test]
fn operators_match_the_host_reference() {
    let work = scratch("aclnn-ops");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok binary",
        "ok unary",
        "ok copy",
        "ok reduce/matmul",
        "ok losses",
        "ok optimizer",
        "ok random",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    // the count of compared tensors (so a silently skipped section shows)
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 500, "only {n} checks:\n{}", r.stdout);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn the_other_families_match_the_host_reference() {
    let work = scratch("aclnn-ops2");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops2.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok compare",
        "ok arith2",
        "ok math",
        "ok reduce2",
        "ok nn",
        "ok random2",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn every_remaining_operator_matches_the_host_reference() {
    let work = scratch("aclnn-ops3");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops3.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok inplace/scalar forms",
        "ok reductions/products",
        "ok random tensor forms",
        "ok foreach",
        "ok extras",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn the_operators_torch_npu_adds_match_the_host_reference() {
    let work = scratch("aclnn-ops4");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops4.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok triu/tril",
        "ok stack",
        "ok expand",
        "ok masked select",
        "ok scatter",
        "ok dropout",
        "ok gelu v2",
        "ok errors",
        "ok masked scatter",
        "ok var/std",
        "ok bitwise",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 900, "only {n} checks:\n{}", r.stdout);
    // errors name the operator and the argument
    assert!(
        r.stderr.contains(
            "aclnnScatterGetWorkspaceSize: reduce must be 0 (none), 1 (add) or 2 (multiply)"
        ),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// Advanced indexing (Nonzero, NonzeroV2, Index, IndexPutImpl, Flip): what torch_npu runs for
/// boolean masks, integer-array indexing, index_put and flip; and Erfc, Asinh, Acosh, Atanh,
/// Erfinv, NanToNum.
#[test]
fn advanced_indexing_matches_the_host_reference() {
    let work = scratch("aclnn-ops5");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops5.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in ["ok nonzero", "ok index", "ok flip", "ok unary", "ok errors"] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 300, "only {n} checks:\n{}", r.stdout);
    // errors name the operator and the argument; an index out of range fails the task
    for msg in [
        "aclnnFlipGetWorkspaceSize: dims [1, -1] repeats dimension 1",
        "aclnnIndexGetWorkspaceSize: indices[0] is an ACL_BOOL mask",
    ] {
        assert!(r.stderr.contains(msg), "no {msg:?} in\n{}", r.stderr);
    }
    assert!(
        r.stdout
            .contains("index 3 is out of range for dimension 0 of size 3"),
        "{}",
        r.all()
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops6.cpp`: what a CNN needs (Convolution and its backward, BatchNorm
/// and its backward, max/average/adaptive pooling with their backward forms) and ordering
/// (Sort, Topk, MedianDim) plus IndexAdd and Take, against float64 host references; and their
/// argument errors.
#[test]
fn cnn_and_ordering_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops6");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops6.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok conv",
        "ok batch norm",
        "ok pool",
        "ok order",
        "ok errors",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 150, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnConvolutionGetWorkspaceSize: groups 0 must be at least 1",
        "aclnnTopkGetWorkspaceSize: k 6 is out of range [0, 5]",
        "aclnnMaxPool2dWithIndicesGetWorkspaceSize: padding [2, 2] must be at most half of kernelSize [2, 2]",
        "index 9 at position 0 is out of range for self's elements of size 4",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops7.cpp`: the operators torch_npu calls for common PyTorch functions
/// beyond the core families (Repeat, RepeatInterleave, ReduceNansum, Aminmax, LogSumExp,
/// Norm, Cumprod, IsClose, Linspace, OneHot, Mv, XLogY, NLLLoss2d, GroupNorm and their
/// backward forms) against float64 host references, and an argument error of each.
#[test]
fn torch_gap_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops7");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops7.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in ["ok shapes", "ok reductions", "ok pointwise", "ok nn"] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 50, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnRepeatGetWorkspaceSize: repeats [2] has fewer entries than self has dimensions (2)",
        "aclnnRepeatGetWorkspaceSize: repeats is nullptr",
        "aclnnRepeatInterleaveIntWithDimGetWorkspaceSize: outputSize 5 must be repeats * 3 = 6",
        "aclnnGroupNormGetWorkspaceSize: group 4 must be positive and divide C (6)",
        "aclnnNormGetWorkspaceSize: pScalar is nullptr",
        "aclnnMvGetWorkspaceSize: self [5, 4] and vec [5] cannot be multiplied (4 != 5)",
        "target 7 at position 0 is out of bounds [0, 2)",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops8.cpp`: the operators that torch_npu reached through aclop
/// fallbacks before (losses with their backward forms, Cummax/Cummin, LogSpace, Eye, the
/// unique family with its shape read back, Histc, Bincount, nearest/linear interpolation, random integers,
/// permutations and multinomial draws) against float64 host references, and argument
/// errors of each family with their messages.
#[test]
fn sweep_gap_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops8");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops8.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok losses",
        "ok scans",
        "ok uniques",
        "ok interpolation",
        "ok sampling",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 70, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnL1LossGetWorkspaceSize: reduction 3 is not supported",
        "aclnnSmoothL1LossGetWorkspaceSize: beta -1 must be >= 0",
        "aclnnHistcGetWorkspaceSize: bins 0 must be > 0",
        "out has 6 elements, but max(self) + 1 and minlength give 4",
        "all elements of self should be between 0 and 1, found 1.5",
        "aclnnCummaxGetWorkspaceSize: dim 2 is out of range [-2, 1]",
        "aclnnInplaceRandomGetWorkspaceSize: from 0 and to - 1 (299) must lie in [-128, 127]",
        "aclnnMultinomialGetWorkspaceSize: numsamples 5 exceeds the 4 categories of self",
        "aclnnUpsampleNearest2dGetWorkspaceSize: outputSize must have 2 element(s), each > 0",
        "aclnnUpsampleNearest2dGetWorkspaceSize: self must be 4-D, but its shape is [1, 1, 4]",
        "aclnnUnique2GetWorkspaceSize: valueOut must be 1-D (with room for every element of self), but its shape is [3, 3]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The calls torch_npu makes for a small MLP trained with SGD, 60 steps on one stream: the
/// first step matches a host reference and the loss falls.
#[test]
fn an_mlp_trains_through_the_operators() {
    let work = scratch("aclnn-mlp");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_mlp.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    assert!(r.stdout.contains("step 59 loss"), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn two_phase_protocol_errors_and_stream_order() {
    let work = scratch("aclnn-ops-errors");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops_errors.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    assert!(r.stdout.matches("\nok ").count() >= 20, "{}", r.stdout);
    // errors are logged under CANN's OP module with the operator's name
    assert!(
        r.stderr.lines().any(|l| l.starts_with("[ERROR] OP(")
            && l.contains("aclnnAddGetWorkspaceSize: self is nullptr")),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&work);
}

fn example(src: &str, want: &[&str]) {
    let work = scratch("aclnn-example");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(
        &work,
        &format!("tests/c/aclnn/examples/{src}"),
        "tests/c/aclnn/examples",
    );
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    for w in want {
        assert!(r.stdout.contains(w), "missing {w:?} in:\n{}", r.all());
    }
    assert!(!r.all().contains("failed"), "{}", r.all());
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn example_add_prints_the_documented_result() {
    // the reference's aclnnAdd example: self {0..7}, other {1,1,1,2,2,2,3,3}, alpha 1.2
    example(
        "example_add.cpp",
        &[
            "result[0] is: 1.200000",
            "result[1] is: 2.200000",
            "result[2] is: 3.200000",
            "result[3] is: 5.400000",
            "result[4] is: 6.400000",
            "result[5] is: 7.400000",
            "result[6] is: 9.600000",
            "result[7] is: 10.600000",
        ],
    );
}

#[test]
fn example_fp16_t_fills_and_reads_float16_buffers() {
    // aclnn/opdev/fp16_t.h's op::fp16_t as the reference's attention examples use it:
    // {0.5, 1.5, -2.25, 3, 0.1, 60000} + 4 * 0.25 in float16 (0.1 is 0x2e66, so 1.0999756
    // rounds to 0x3c66; 60001 rounds back to 60000)
    example(
        "example_fp16_t.cpp",
        &[
            "result[0] is: 1.500000 (0x3e00)",
            "result[2] is: -1.250000 (0xbd00)",
            "result[4] is: 1.099609 (0x3c66)",
            "result[5] is: 60000.000000 (0x7b53)",
        ],
    );
}

#[test]
fn example_mm_prints_the_documented_result() {
    // ones [16, 32] @ ones [32, 16]: every element is 32
    example(
        "example_mm.cpp",
        &["result[0] is: 32.000000", "result[255] is: 32.000000"],
    );
}

#[test]
fn example_log_softmax_prints_the_documented_result() {
    // each row is x, x+1, x+2: log-softmax -2.407606, -1.407606, -0.407606
    example(
        "example_log_softmax.cpp",
        &[
            "result[0] is: -2.407606",
            "result[1] is: -1.407606",
            "result[2] is: -0.407606",
            "result[11] is: -0.407606",
        ],
    );
}

#[test]
fn example_amp_prints_the_documented_results() {
    // aclnnAmpUpdateScale (the reference's example, growth, back-off, an FLOAT16 scale that
    // would overflow) and aclnnForeachNonFiniteCheckAndUnscale, with argument errors
    example(
        "example_amp.cpp",
        &[
            "documented: updatedScale = 65536.000000, updatedGrowthTracker = 901",
            "grown: updatedScale = 131072.000000, updatedGrowthTracker = 0",
            "backed off: updatedScale = 32768.000000, updatedGrowthTracker = 0",
            "fp16 overflow: updatedScale = fp16 bits 31743.000000, updatedGrowthTracker = 0",
            "unscaled: 0.500000 1.000000 1.500000 | 2.000000 inf, foundInf = 1.000000",
            "finite: 0.250000 0.500000 0.750000, foundInf = 0.000000",
            "interval 0: 161002",
            "null foundInf: 161001",
            "float tracker: 161002",
        ],
    );
}

#[test]
fn example_fused_adam_prints_the_documented_results() {
    // aclnnFusedAdam with the reference's example inputs (step 3 and 4 counted as steps 4 and
    // 5, gradient scale 2, amsgrad), maximize with weight decay, a found-inf of 1 that skips
    // the step, and the documented argument errors (values from a float64 Adam step)
    let mut want: Vec<String> = vec![];
    let rows: [(&str, &[&str]); 10] = [
        ("1 param", &["0.999983", "1.999975", "2.999970", "7.999950"]),
        ("1 grad", &["0.050000", "0.100000", "0.150000", "0.400000"]),
        (
            "1 expAvg",
            &["0.095000", "0.190000", "0.285000", "0.760000"],
        ),
        (
            "1 expAvgSq",
            &["0.099903", "0.199810", "0.299723", "0.799360"],
        ),
        (
            "1 maxExpAvgSq",
            &["1.000000", "2.000000", "3.000000", "8.000000"],
        ),
        (
            "2 param",
            &["9.000148", "10.000214", "11.000263", "12.000305"],
        ),
        ("2 grad", &["0.450000", "0.500000", "0.550000", "0.600000"]),
        (
            "2 expAvg",
            &["-0.855000", "-1.750000", "-2.645000", "-3.540000"],
        ),
        (
            "2 expAvgSq",
            &["0.999202", "1.998250", "2.997303", "3.996360"],
        ),
        (
            "2 maxExpAvgSq",
            &["0.999202", "1.998250", "2.997303", "3.996360"],
        ),
    ];
    for (name, vals) in rows {
        let last = if name.starts_with('1') { 7 } else { 3 };
        for (i, v) in vals.iter().enumerate() {
            let at = if i == 3 { last } else { i };
            want.push(format!("{name}[{at}] is: {v}"));
        }
    }
    for line in [
        "maximize param[0] is: 1.100000",
        "maximize param[1] is: -2.100000",
        "maximize expAvg[0] is: -0.040000",
        "maximize expAvg[1] is: 0.005000",
        "skipped param[0] is: 1.100000",
        "skipped grad[1] is: -0.250000",
        "null params: 161001",
        "short stateSteps: 161002",
        "grad shape: 161002",
        "amsgrad max shape: 161002",
        "int32 params: 161002",
    ] {
        want.push(line.into());
    }
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    example("example_fused_adam.cpp", &want);
}

#[test]
fn example_grads_prints_the_documented_results() {
    // Im2colBackward and RepeatInterleaveGrad with the reference's example inputs, and
    // InplaceFillDiagonal with wrap, then argument errors
    let mut want = vec!["im2col backward[0] is: 9.200000".to_string()];
    for (i, v) in [6, 8, 10, -6, -8, -10].iter().enumerate() {
        want.push(format!("repeat interleave grad[{i}] is: {v}.000000"));
    }
    for (i, v) in [7, 0, 0, 7, 0, 0, 7, 0, 0, 7].iter().enumerate() {
        want.push(format!("fill diagonal[{i}] is: {v}.000000"));
    }
    for (i, v) in [3, 12, 6].iter().enumerate() {
        want.push(format!("reflection pad1d backward[{i}] is: {v}.000000"));
    }
    for (i, v) in [0, 2, 1, 3].iter().enumerate() {
        want.push(format!("channel shuffle[{i}] is: {v}.000000"));
    }
    want.push("soft margin loss[0] is: 1.003204".into());
    for (i, v) in ["-0.200000", "2.000000", "-0.600000", "4.000000"]
        .iter()
        .enumerate()
    {
        want.push(format!("rrelu[{i}] is: {v}"));
    }
    for (i, v) in [4, 3, 2, 1].iter().enumerate() {
        want.push(format!("rrelu noise[{i}] is: {v}.000000"));
    }
    want.push("one-value kernelSize: 161002".into());
    want.push("null repeats: 161001".into());
    want.push("1-D fill diagonal: 161002".into());
    let want: Vec<&str> = want.iter().map(|s| s.as_str()).collect();
    example("example_grads.cpp", &want);
}

#[test]
fn example_triu_prints_the_documented_result() {
    // the reference's matrix [[9, 6, 3], [1, 2, 3], [3, 4, 1]]: triu keeps [[9, 6, 3],
    // [0, 2, 3], [0, 0, 1]]; the in-place form with diagonal 1 then leaves 6, 3 and 3
    let mut want = Vec::new();
    for (i, v) in [9, 6, 3, 0, 2, 3, 0, 0, 1].iter().enumerate() {
        want.push(format!("result[{i}] is: {v}.000000"));
    }
    for (i, v) in [0, 6, 3, 0, 0, 3, 0, 0, 0].iter().enumerate() {
        want.push(format!("result after inplace[{i}] is: {v}.000000"));
    }
    let want: Vec<&str> = want.iter().map(|s| s.as_str()).collect();
    example("example_triu.cpp", &want);
}

#[test]
fn example_group_quant_prints_the_documented_result() {
    // the reference's example: rows 0 | 1 | 2-3 in three groups, scale {1, 2}, offset 2
    let mut want = Vec::new();
    for (i, v) in [2, 4, 4, 8, 6, 12, 8, 16].iter().enumerate() {
        want.push(format!("result[{i}] is: {v}\n"));
    }
    let want: Vec<&str> = want.iter().map(|s| s.as_str()).collect();
    example("example_group_quant.cpp", &want);
}

#[test]
fn example_nsa_selected_attention_infer_runs_the_documented_shapes() {
    // the operator page's example: one 64-row selected block of a 48-row sequence (the page's
    // own rule count · size <= max length would refuse it); value row p holds p, so the
    // output is the mean of 0..47
    example(
        "example_nsa_selected_attention_infer.cpp",
        &["index: 0: 23.500000", "0 of 128 elements differ from 23.5"],
    );
}

#[test]
fn example_lstm_prints_the_documented_result() {
    // aclnnLSTM on the reference's example (every weight and the input 1: y = h =
    // sigmoid(1) * tanh(sigmoid(1) * tanh(1))), a 2-layer bidirectional batch-first LSTM
    // without biases and its aclnnLstmBackward against CPU torch's values, a one-step GRU and
    // the fused LSTM cell by hand, argument errors
    let mut want: Vec<String> = [
        "result[0] is: 0.369606",
        "cy[0] is: 0.556770",
        "tanhc[0] is: 0.505577",
        "null input: 161001",
        "wrong weight_hh shape: 161002",
        "int32 input: 161002",
        "float16 weight_hh with float input: 161002",
        "packed batchSizes with a 3-D input: 161002",
        "gru result[0] is: 0.570642",
        "gru params for two layers: 161002",
        "fused cell hy is: 0.44891, cy is: 0.91011",
        "fused cell 3H gates: 161002",
        "lstm example: 0 mismatches",
    ]
    .map(String::from)
    .to_vec();
    for what in [
        "output",
        "hy",
        "cy",
        "dx",
        "dh0",
        "dc0",
        "dweight_ih_l0",
        "dparams sums",
    ] {
        want.push(format!("PASS two-layer bidirectional {what} (worst"));
    }
    let want: Vec<&str> = want.iter().map(|s| s.as_str()).collect();
    example("example_lstm.cpp", &want);
}

/// The benchmark program builds and runs at small sizes (its figures are not asserted).
#[test]
fn the_operator_bench_program_runs() {
    let work = scratch("aclnn-ops-bench");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/bench/aclnn_ops_bench.cpp", "tests/bench");
    let r = run_on(&exe, &lib64, &work, &["1", "64", "2"]);
    r.assert_ok();
    for w in [
        "memcpy D2D",
        "aclnnAdd fp32",
        "Add / memcpy",
        "aclnnMm fp32 64x64",
    ] {
        assert!(r.stdout.contains(w), "{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops9.cpp`: operators of the aclnn reference beyond the core families
/// (Permute, SplitTensor, SplitWithSize, GatherV2, IndexCopy, Eye, IsInf/IsPosInf/IsNegInf,
/// Prelu and its backward, Threshold, Celu, Selu, Glu and its backward, Logit, LogAddExp and
/// LogAddExp2, Addmv, Ger, Addbmm, Inverse, Sinc, Heaviside) against float64 host references,
/// the random ones (Normal*, Randperm, Multinomial) by reproducibility and sample statistics,
/// ApplyAdamWV2 against a float64 AdamW step (the step tensor counting the steps before) and
/// FusedSgd against a float64 SGD step (momentum, nesterov, weight decay, maximize, a gradient
/// scale written back to the gradients), with their documented argument errors.
#[test]
fn breadth_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops9");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops9.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok shapes",
        "ok pointwise",
        "ok linalg",
        "ok sampling",
        "ok optim",
        "ok fused sgd",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 60, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnPermuteGetWorkspaceSize: dims [0, 0, 1] repeats dimension 0",
        "aclnnPermuteGetWorkspaceSize: dims is nullptr",
        "aclnnSplitTensorGetWorkspaceSize: out holds 2 tensors but splitting dimension 0 of self [5, 2] gives 3",
        "aclnnSplitWithSizeGetWorkspaceSize: splitSize [2, 4] sums to 6, but dimension 1 of self has 5 entries",
        "aclnnGatherV2GetWorkspaceSize: index is nullptr",
        "index 3 at position 1 is out of range for dimension 0 of size 3",
        "aclnnEyeGetWorkspaceSize: n -1 and m 4 must be >= 0",
        "aclnnIsInfGetWorkspaceSize: out has data type ACL_FLOAT, which is not supported; supported: ACL_BOOL",
        "aclnnPreluGetWorkspaceSize: weight [2] must have one element or one per channel of self [2, 3, 2] (3), along one dimension",
        "aclnnCeluGetWorkspaceSize: alpha must not be 0",
        "aclnnGluGetWorkspaceSize: dimension 1 of self [3, 3] has an odd size 3; GLU halves it",
        "aclnnLogAddExpGetWorkspaceSize: the shapes of self [2, 3] and other [4] cannot broadcast",
        "aclnnAddmvGetWorkspaceSize: mat [3, 4] and vec [5] cannot be multiplied (4 != 5)",
        "aclnnAddbmmGetWorkspaceSize: batch1 [4, 3, 2] and batch2 [3, 2, 5] cannot be multiplied",
        "matrix 0 of the batch is singular",
        "aclnnRandpermGetWorkspaceSize: n -1 must be >= 0",
        "aclnnMultinomialGetWorkspaceSize: numsamples 5 exceeds the 4 categories of self without replacement",
        "aclnnMultinomial: row 0 of self sums to 0",
        "std holds a negative or NaN element",
        "aclnnApplyAdamWV2GetWorkspaceSize: maxGradNormOptionalRef is nullptr, but amsgrad is true",
        "aclnnFusedSgdGetWorkspaceSize: momentum is 0.9, but there is no momentumBufferListOptionalRef",
        "aclnnFusedSgdGetWorkspaceSize: gradsRef has 1 tensors, but paramsRef has 2",
        "aclnnFusedSgd: gradScaleOptional is 0; the gradients cannot be unscaled",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops10.cpp`: LinalgCross, Im2col, Einsum, InstanceNorm, ApplyAdamW
/// (V1), Frac / InplaceFrac, UpsampleNearest3d and its backward, UniqueDim against host
/// references (contiguous, transposed, strided and broadcast inputs), with their documented
/// argument errors.
#[test]
fn more_reference_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops10");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops10.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok cross",
        "ok im2col",
        "ok einsum",
        "ok instance norm",
        "ok adamw",
        "ok frac",
        "ok upsample3d",
        "ok unique dim",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 60, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnLinalgCrossGetWorkspaceSize: other is nullptr",
        "aclnnLinalgCrossGetWorkspaceSize: dimension 1 of the broadcast shape [4, 2] of self [4, 2] and other [4, 2] must have size 3",
        "aclnnLinalgCrossGetWorkspaceSize: out data type ACL_INT32 must be self's ACL_FLOAT",
        "aclnnIm2colGetWorkspaceSize: out has shape [2, 18, 6], expected [2, 18, 5]",
        "aclnnIm2colGetWorkspaceSize: self must be 3-D or 4-D, but its shape is [5, 4]",
        "aclnnEinsumGetWorkspaceSize: equation is nullptr",
        "aclnnEinsumGetWorkspaceSize: label 'd' of equation \"abcd,abcde->abce\" has size 4 and 5",
        "aclnnInstanceNormGetWorkspaceSize: dataFormat \"NCDHW\" is not supported",
        "aclnnInstanceNormGetWorkspaceSize: x must be 4-D, but its shape is [2, 3, 4]",
        "aclnnApplyAdamWGetWorkspaceSize: maxGradNormOptional is nullptr, but amsgrad is true",
        "aclnnApplyAdamWGetWorkspaceSize: lr must hold one element, but its shape is [2]",
        "aclnnFracGetWorkspaceSize: out data type ACL_FLOAT16 must be input's ACL_FLOAT",
        "aclnnInplaceFracGetWorkspaceSize: inputRef has data type ACL_DOUBLE, which is not supported",
        "aclnnUpsampleNearest3dGetWorkspaceSize: self must be 5-D, but its shape is [1, 2, 3, 2]",
        "aclnnUpsampleNearest3dBackwardGetWorkspaceSize: inputSize is nullptr",
        "aclnnUniqueDimGetWorkspaceSize: dim 2 is out of range [-2, 1]",
        "aclnnUniqueDimGetWorkspaceSize: inverseOut has data type ACL_INT32, which is not supported",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops11.cpp`: IndexFillTensor / InplaceIndexFillTensor, IndexFill /
/// InplaceIndexFill, Renorm / InplaceRenorm, Range, Pdist, Slogdet and LinalgQr against host
/// references (contiguous, transposed and strided inputs), with their documented argument
/// errors.
#[test]
fn reference_operators_11_match_the_host_reference() {
    let work = scratch("aclnn-ops11");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops11.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok index fill",
        "ok renorm",
        "ok range",
        "ok pdist",
        "ok slogdet",
        "ok linalg qr",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 50, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnIndexFillTensorGetWorkspaceSize: index is nullptr",
        "aclnnIndexFillTensorGetWorkspaceSize: index 4 is out of range for dimension 1 of size 4",
        "aclnnIndexFillGetWorkspaceSize: value is nullptr",
        "aclnnIndexFillGetWorkspaceSize: index must be 1-D or 0-d, but its shape is [1, 2]",
        "aclnnRenormGetWorkspaceSize: maxNorm is nullptr",
        "aclnnRenormGetWorkspaceSize: self has data type ACL_INT32, which is not supported",
        "aclnnRenormGetWorkspaceSize: p must be positive, but it is -1",
        "aclnnInplaceRenormGetWorkspaceSize: dim 2 is out of range [-2, 1]",
        "aclnnRangeGetWorkspaceSize: out must be 1-D with 11 elements for range(0, 5, 0.5); it has shape [10]",
        "aclnnRangeGetWorkspaceSize: step -4 goes away from end 5 (start 0)",
        "aclnnPdistGetWorkspaceSize: out has shape [5], expected [6]",
        "aclnnPdistGetWorkspaceSize: self must be 2-D, but its shape is [2, 2, 3]",
        "aclnnSlogdetGetWorkspaceSize: logOut is nullptr",
        "aclnnSlogdetGetWorkspaceSize: self must be a batch of square matrices (*, n, n) with n > 0, but its shape is [2, 3]",
        "aclnnSlogdetGetWorkspaceSize: signOut has shape [2], expected []",
        "aclnnLinalgQrGetWorkspaceSize: R is nullptr",
        "aclnnLinalgQrGetWorkspaceSize: mode must be 0 (reduced), 1 (complete) or 2 (r), but it is 3",
        "aclnnLinalgQrGetWorkspaceSize: Q has shape [4, 4], expected [4, 3]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_fused.cpp`: the fused operators of large-model code (RmsNorm,
/// RotaryPositionEmbedding, ApplyRotaryPosEmb/V2, SwiGlu, FlashAttentionScore and their
/// backward forms, PromptFlashAttentionV3, IncreFlashAttentionV4) against float64 host references in float32/float16/bfloat16, the attention
/// gradients against finite differences, and the argument errors with CANN's codes.
#[test]
fn fused_llm_operators_match_the_host_reference() {
    let work = scratch("aclnn-fused");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_fused.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok rms_norm",
        "ok rope",
        "ok swiglu",
        "ok attention",
        "ok inference",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 170, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnRmsNormGetWorkspaceSize: gamma shape [3] must equal the last dimensions of x [2, 3, 4]",
        "aclnnRotaryPositionEmbeddingGetWorkspaceSize: mode 7 is not one of 0 (half)",
        "aclnnSwiGluGetWorkspaceSize: x [3, 5] must be non-empty and even along dim -1",
        "aclnnFlashAttentionScoreGetWorkspaceSize: sparseMode 3 needs attenMaskOptional (the compressed",
        "aclnnFlashAttentionScoreGetWorkspaceSize: inputLayout is nullptr",
        "aclnnIncreFlashAttentionV4GetWorkspaceSize: blocktable has data type ACL_UINT8, which is not supported; supported: ACL_INT32",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops13.cpp`: the SyncBatchNorm family (BatchNormStats,
/// BatchNormGatherStatsWithCounts, BatchNormElemt, BatchNormReduceBackward,
/// BatchNormElemtBackward) chained for two "devices" of different batch sizes and dtypes,
/// AddRmsNorm, AddLayerNorm, FastGelu, GeGlu, GeGluV3, GroupNormSilu, CrossEntropyLoss (+Grad), Hardshrink, Softshrink and their backward forms against host
/// references (transposed and strided views), with their argument errors.
#[test]
fn norm_operators_13_match_the_host_reference() {
    let work = scratch("aclnn-ops13");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops13.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok batch norm stats",
        "ok batch norm gather stats",
        "ok batch norm elemt",
        "ok batch norm reduce backward",
        "ok batch norm elemt backward",
        "ok sync batch norm errors",
        "ok add rms norm",
        "ok add layer norm",
        "ok fast gelu",
        "ok geglu",
        "ok group norm silu",
        "ok cross entropy loss",
        "ok shrink",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 80, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnBatchNormStatsGetWorkspaceSize: input is nullptr",
        "aclnnBatchNormStatsGetWorkspaceSize: input must have 2 to 8 dimensions (channels at dimension 1), but its shape is [6]",
        "aclnnBatchNormStatsGetWorkspaceSize: mean has data type",
        "aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize: counts is nullptr",
        "aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize: mean must be [devices, 3]",
        "aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize: counts has shape [3], expected [2]",
        "aclnnBatchNormElemtGetWorkspaceSize: output has shape [2, 3, 5], expected [2, 3, 4]",
        "aclnnBatchNormReduceBackwardGetWorkspaceSize: sumDy is nullptr",
        "aclnnBatchNormElemtBackwardGetWorkspaceSize: counter has data type ACL_INT64",
        "aclnnBatchNormElemtBackwardGetWorkspaceSize: gradInput data type",
        "aclnnAddRmsNormGetWorkspaceSize: rstdOut has shape [3, 2], expected [3, 1, 1]",
        "aclnnAddRmsNormGetWorkspaceSize: gamma shape [3] must equal the last dimensions of x1 [3, 2, 4]",
        "aclnnAddRmsNormGetWorkspaceSize: x1 must have 1 to 8 dimensions and elements, but its shape is [0, 4]",
        "aclnnAddLayerNormGetWorkspaceSize: beta is nullptr",
        "aclnnAddLayerNormGetWorkspaceSize: meanOut has shape [2, 3, 2], expected [2, 3, 1]",
        "aclnnAddLayerNormGradGetWorkspaceSize: dgammaOut has data type ACL_FLOAT16",
        "aclnnFastGeluGetWorkspaceSize: self has data type ACL_DOUBLE",
        "aclnnGeGluV3GetWorkspaceSize: dimension -1 of self [3, 5] must have an even size",
        "aclnnGeGluV3GetWorkspaceSize: approximate must be 0 (none) or 1 (tanh), but it is 2",
        "aclnnGeGluGetWorkspaceSize: out has shape [3, 4], expected [3, 2]",
        "aclnnGroupNormSiluGetWorkspaceSize: group must be positive and divide the 6 channels of self, but it is 4",
        "aclnnGroupNormSiluV2GetWorkspaceSize: meanOut has shape [2, 4], expected [2, 3]",
        "aclnnCrossEntropyLossGetWorkspaceSize: target has data type ACL_INT32",
        "aclnnCrossEntropyLossGetWorkspaceSize: reductionOptional must be \"mean\", \"sum\" or \"none\", but it is \"avg\"",
        "aclnnCrossEntropyLossGetWorkspaceSize: lossOut has shape [5]; expected [] (or [1]) for this reduction",
        "target 9 of sample 0 is out of range [0, 4)",
        "aclnnHardshrinkGetWorkspaceSize: lambd is nullptr",
        "aclnnSoftshrinkGetWorkspaceSize: lambd must not be negative, but it is -0.5",
        "aclnnSoftshrinkBackwardGetWorkspaceSize: gradInput has shape [3, 4], expected [3, 3, 4]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_complex.cpp`: ACL_COMPLEX64 / ACL_COMPLEX128 through Mul (complex x
/// complex, complex x real broadcast, a strided complex view in place, COMPLEX128), Div, Add /
/// Sub with alpha, Muls, Neg, Abs (the real magnitude), Exp, ReduceSum / Mean, InplaceCopy
/// and Cast between real and complex, Complex, Polar, Real, AngleV2, and aclStft (frames, a centred short window, the
/// normalized real (re, im) output, a two-sided batch) against hand-derived values, with the
/// documented argument errors.
#[test]
fn complex_operators_match_hand_derived_values() {
    let work = scratch("aclnn-complex");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_complex.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok arithmetic",
        "ok unary",
        "ok reductions",
        "ok copies",
        "ok construct",
        "ok stft",
    ] {
        assert!(r.stdout.contains(section), "{section}: {}", r.all());
    }
    for err in [
        "error mul complex into a float out",
        "error abs complex128",
        "error stft out shape",
        "error stft self nullptr",
    ] {
        assert!(r.stdout.contains(err), "{err}: {}", r.all());
    }
}

/// `tests/c/aclnn/aclnn_ops14.cpp`: Diag, DiagFlat, Signbit, Gcd, IsInTensorScalar /
/// IsInScalarTensor, Addr / InplaceAddr, Cdist, LeftShift / LeftShifts / RightShift,
/// TriangularSolve, MaxUnpool2d / MaxUnpool3d, Svd, GatherNd, ScatterNd and Bucketize against
/// host references (contiguous,
/// transposed and strided inputs, broadcasting), with their documented argument errors.
#[test]
fn math_operators_14_match_the_host_reference() {
    let work = scratch("aclnn-ops14");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops14.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok diag",
        "ok signbit",
        "ok gcd",
        "ok isin",
        "ok addr",
        "ok cdist",
        "ok shifts",
        "ok triangular solve",
        "ok max unpool",
        "ok svd",
        "ok gather nd",
        "ok scatter nd",
        "ok bucketize",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 200, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnDiagGetWorkspaceSize: self is nullptr",
        "aclnnDiagGetWorkspaceSize: self must be 1-D or 2-D, but its shape is [2, 2, 2]",
        "aclnnDiagFlatGetWorkspaceSize: out has shape [4, 4], expected [5, 5]",
        "aclnnSignbitGetWorkspaceSize: out has shape [3], expected [4]",
        "aclnnGcdGetWorkspaceSize: self has data type ACL_FLOAT, which is not supported",
        "aclnnGcdGetWorkspaceSize: self must have 1 to 8 dimensions, but its shape is []",
        "aclnnIsInTensorScalarGetWorkspaceSize: out has data type ACL_FLOAT; it must be BOOL",
        "aclnnIsInScalarTensorGetWorkspaceSize: out must hold one element",
        "aclnnAddrGetWorkspaceSize: vec1 must be 1-D, but its shape is [2, 2]",
        "aclnnAddrGetWorkspaceSize: betaOptional data type ACL_FLOAT cannot be used with the computation type ACL_INT32",
        "aclnnCdistGetWorkspaceSize: compute_mode must be 2 when p is 2.0, but it is 0",
        "aclnnCdistGetWorkspaceSize: x1 [3, 4] and x2 [5, 3] must have the same last dimension",
        "aclnnRightShiftGetWorkspaceSize: input is nullptr",
        "aclnnLeftShiftsGetWorkspaceSize: shiftBits has data type ACL_FLOAT, which is not supported",
        "aclnnTriangularSolveGetWorkspaceSize: A must be a batch of square matrices, but its shape is [3, 4]",
        "aclnnTriangularSolveGetWorkspaceSize: with unitriangular the data type must be FLOAT",
        "aclnn task: aclnnMaxUnpool2d: index 9 at position 3 is outside the output plane of 9 elements",
        "aclnnMaxUnpool2dGetWorkspaceSize: outputSize [2, 1] holds 2 elements, fewer than self's 4 per plane",
        "aclnnMaxUnpool3dGetWorkspaceSize: padding must hold 3 non-negative values, but it is [0, -1, 0]",
        "aclnnSvdGetWorkspaceSize: input must not be empty, but its shape is [0, 3]",
        "aclnnSvdGetWorkspaceSize: u has shape [3, 3], expected [2, 2]",
        "aclnn task: aclnnGatherNd: index -1 of index tuple 0 is out of range for dimension 1 of size 2 (negativeIndexSupport is false)",
        "aclnnGatherNdGetWorkspaceSize: the last dimension of indices [2, 3] must be in [1, 2]",
        "aclnn task: aclnnScatterNd: index 8 of index tuple 0 is out of range for dimension 0 of size 8",
        "aclnnScatterNdGetWorkspaceSize: updates has shape [3], expected [4]",
        "aclnnBucketizeGetWorkspaceSize: out has data type ACL_INT64, but outInt32 true asks for ACL_INT32",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_gmm_a8w8.cpp`: GroupedMatmulV4/V5 in the A8W8 mode (INT8 x and
/// weight split along M, INT32 bias, per-channel scale and per-token scale, actType 0/1/2/4/5,
/// BFLOAT16/FLOAT16/INT8/INT32 out) against a double-precision host reference, and its
/// refusals; the weight in FRACTAL_NZ (packed by the test) through GroupedMatmulWeightNz and
/// V4/V5 against the same reference, and the NZ refusals.
#[test]
fn grouped_matmul_a8w8_matches_the_host_reference() {
    let work = scratch("aclnn-gmm-a8w8");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_gmm_a8w8.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok grouped matmul a8w8\n",
        "ok grouped matmul a8w8 refusals",
        "ok grouped matmul a8w8 nz weight\n",
        "ok grouped matmul a8w8 nz weight refusals",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    for msg in [
        "aclnnGroupedMatmulV4GetWorkspaceSize: scaleOptional has data type ACL_FLOAT with out \
         ACL_BF16: the per-token quant case only supports",
        "aclnnGroupedMatmulV4GetWorkspaceSize: scaleOptional has data type ACL_INT64 with out \
         ACL_FLOAT16: the per-channel quant case only supports",
        "aclnnGroupedMatmulV4GetWorkspaceSize: actType 3 (GMM_ACT_TYPE_GELU_ERR_FUNC) is not \
         supported by GroupedMatmul",
        "aclnnGroupedMatmulV4GetWorkspaceSize: actType 6 is out of range",
        "aclnnGroupedMatmulV4GetWorkspaceSize: actType 1 (GMM_ACT_TYPE_RELU): GroupedMatmul \
         computes a fused activation only in the A8W8 quantised modes with FLOAT16/BFLOAT16 \
         output",
        "aclnnGroupedMatmulV4GetWorkspaceSize: GMM A8W8: a BFLOAT16 biasOptional is not \
         provided by npu-emu",
        "aclnnGroupedMatmulV4GetWorkspaceSize: perTokenScaleOptional has shape [11]; it must be \
         [10]",
        "aclnnGroupedMatmulV4GetWorkspaceSize: scaleOptional has shape [3, 9]; for weight [3, 16, \
         8] it must be [3, 8]",
        "aclnnGroupedMatmulV4GetWorkspaceSize: GMM: scale must not be nullptr in quant",
        "aclnnGroupedMatmulV4GetWorkspaceSize: GMM: quant cases do not support splited axis is K",
        "aclnnGroupedMatmulV4GetWorkspaceSize: GMM A8W8: groupType -1 (no grouping, lists of \
         tensors) is not provided by npu-emu",
        "aclnnGroupedMatmulV4GetWorkspaceSize: out INT8 (scale UINT64/INT64) takes an ND weight",
        "aclnnGroupedMatmulWeightNzGetWorkspaceSize: out has data type ACL_INT32; \
         aclnnGroupedMatmulWeightNz's A8W8 mode (Atlas A2/A3) writes BFLOAT16",
        "aclnnGroupedMatmulWeightNzGetWorkspaceSize: When weight(INT8) format is FRACTAL_NZ, \
         weight'shape(k[16], n[8]) should be divisible",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops15.cpp`: the quantisation and MoE operators of large-model
/// inference (AscendQuant/V3, DynamicQuant/V2, MoeGatingTopKSoftmax, TransQuantParamV2,
/// QuantMatmulV3/V4/V5, WeightQuantBatchMatmulV2/V3, GroupedMatmulV4/V5, MoeInitRouting,
/// MoeComputeExpertTokens, MoeFinalizeRouting/V2) against host references written from the
/// reference's formulas (round half to even, saturation, the 64-bit quantisation parameter),
/// with transposed and strided views and their documented argument errors.
#[test]
fn quant_and_moe_operators_15_match_the_host_reference() {
    let work = scratch("aclnn-ops15");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops15.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok ascend quant",
        "ok dynamic quant",
        "ok moe gating top k softmax",
        "ok quant matmul",
        "ok weight quant batch matmul",
        "ok grouped matmul",
        "ok moe routing",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    for msg in [
        "aclnnAscendQuantGetWorkspaceSize: roundMode \"nearest\" must be one of",
        "aclnnDynamicQuantV2GetWorkspaceSize: groupIndexOptional is given but smoothScalesOptional \
         is nullptr",
        "aclnnQuantMatmulV5GetWorkspaceSize: groupSize [0, 0, 5] (M, N, K) applies to the G-B mode",
        "aclnnGroupedMatmulV4GetWorkspaceSize: groupType 2 (split along K) is not supported",
        // actType: the activation exists only in CANN's A8W8 FLOAT16/BFLOAT16-out modes
        "aclnnGroupedMatmulV4GetWorkspaceSize: actType 1 (GMM_ACT_TYPE_RELU): GroupedMatmul \
         computes a fused activation only in the A8W8 quantised modes",
        "aclnnGroupedMatmulV5GetWorkspaceSize: actType 5 (GMM_ACT_TYPE_SILU): GroupedMatmul \
         computes a fused activation only in the A8W8 quantised modes",
        "aclnnGroupedMatmulV4GetWorkspaceSize: actType 3 (GMM_ACT_TYPE_GELU_ERR_FUNC) is not \
         supported by GroupedMatmul",
        "aclnnGroupedMatmulV5GetWorkspaceSize: actType -1 is out of range",
        "aclnnGroupedMatmulV4GetWorkspaceSize: actType 6 is out of range",
        "aclnnMoeFinalizeRoutingV2GetWorkspaceSize: dropPadMode 1",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
    // a program in the reference's example style (a UINT64 quant parameter tensor):
    // AscendQuant rounds half to even and saturates; ones [5, 2] @ ones [2, 3] at scale 1 is 2
    let mut want: Vec<String> = [2, 2, 6, 0, 3, -3, 127, -128]
        .iter()
        .enumerate()
        .map(|(i, v)| format!("quant result[{i}] is: {v}\n"))
        .collect();
    want.extend((0..15).map(|i| format!("matmul result[{i}] is: 2.000000\n")));
    let want: Vec<&str> = want.iter().map(|s| s.as_str()).collect();
    example("example_quant.cpp", &want);
}

/// `tests/c/aclnn/aclnn_ops12.cpp`: AvgPool3d, AdaptiveAvgPool3d, MaxPool3dWithArgmax and
/// AdaptiveMaxPool3d, ReflectionPad3d, ReplicationPad3d, CircularPad2d, CircularPad3d,
/// GridSampler2D, GridSampler3D (each + Backward; the samplers' gradients against finite
/// differences)
/// AffineGrid, UpsampleTrilinear3d and UpsampleBicubic2d (+Backward) against host references
/// (float32, float16,
/// bfloat16; contiguous, transposed and strided inputs; padding, ceil mode, dilation, divisor;
/// an empty batch; a NaN window), with their documented argument errors and an out-of-plane
/// index failing the backward task at synchronisation.
#[test]
fn pool3d_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops12");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops12.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok avg pool3d",
        "ok adaptive avg pool3d",
        "ok max pool3d with argmax",
        "ok adaptive max pool3d",
        "ok pads",
        "ok grid sampler",
        "ok grid sampler 3d",
        "ok affine grid",
        "ok upsample trilinear",
        "ok upsample bicubic",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 240, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnAvgPool3dGetWorkspaceSize: kernelSize is nullptr",
        "aclnnAvgPool3dGetWorkspaceSize: kernelSize has 2 values; 1 or 3 are needed for 3-D pooling",
        "aclnnAvgPool3dGetWorkspaceSize: padding [2, 2, 2] must be at most half of kernelSize [2, 2, 2]",
        "aclnnAvgPool3dGetWorkspaceSize: self must be 4-D (CDHW) or 5-D (NCDHW), but its shape is [4, 4, 4]",
        "aclnnAvgPool3dBackwardGetWorkspaceSize: gradOutput has shape [1, 2, 3, 2, 2], expected [1, 2, 2, 2, 2]",
        "aclnnAdaptiveAvgPool3dGetWorkspaceSize: outputSize [2, 2] must be three positive values",
        "aclnnAdaptiveAvgPool3dGetWorkspaceSize: self has data type ACL_DOUBLE, which is not supported",
        "aclnnMaxPool3dWithArgmaxGetWorkspaceSize: dilation is nullptr",
        "aclnnMaxPool3dWithArgmaxGetWorkspaceSize: stride has 2 values; 0, 1 or 3 are needed for 3-D pooling",
        "aclnnMaxPool3dWithArgmaxGetWorkspaceSize: indices has data type ACL_FLOAT, which is not supported",
        "aclnnMaxPool3dWithArgmaxBackward: indices value 64 is outside the input plane of 64 elements",
        "aclnnAdaptiveMaxPool3dGetWorkspaceSize: outputOut is nullptr",
        "aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize: gradInput data type ACL_FLOAT16 must be the same as self's ACL_FLOAT",
        "aclnnReflectionPad3dGetWorkspaceSize: padding (5, 1) of dimension 4 (size 5) is out of range: each must be in [0, size)",
        "aclnnReflectionPad3dGetWorkspaceSize: padding [1, 1, 1, 1] must hold 6 values",
        "aclnnReplicationPad3dGetWorkspaceSize: self has data type ACL_BF16, which is not supported",
        "aclnnCircularPad2dGetWorkspaceSize: self must have 3 or 4 dimensions, but its shape is [1, 2, 3, 4, 5]",
        "aclnnCircularPad3dBackwardGetWorkspaceSize: gradOutput is nullptr",
        "aclnnGridSampler2DGetWorkspaceSize: grid data type ACL_FLOAT16 must be the same as input's ACL_FLOAT",
        "aclnnGridSampler2DGetWorkspaceSize: interpolationMode 3 is not supported",
        "aclnnGridSampler2DBackwardGetWorkspaceSize: outputMask has 3 values; 2 are needed (inputGrad, gridGrad)",
        "aclnnGridSampler2DBackwardGetWorkspaceSize: inputGrad is nullptr",
        "aclnnGridSampler3DGetWorkspaceSize: grid must be [N, Do, Ho, Wo, 3] with input's N 2, but its shape is [2, 2, 3, 2, 2]",
        "aclnnGridSampler3DBackwardGetWorkspaceSize: gridGrad is nullptr",
        "aclnnUpsampleTrilinear3dGetWorkspaceSize: outputSize must have 3 elements, each > 0, but it is [6, 8]",
        "aclnnUpsampleTrilinear3dBackwardGetWorkspaceSize: inputSize must have 5 elements, each > 0, but it is [1, 2, 3, 4]",
        "aclnnUpsampleBicubic2dGetWorkspaceSize: self has data type ACL_DOUBLE, which is not supported",
        "aclnnUpsampleBicubic2dBackwardGetWorkspaceSize: gradOut has shape [1, 2, 4, 5], expected [1, 2, 8, 10]",
        "aclnnAffineGridGetWorkspaceSize: theta must be [2, 2, 3] for size [2, 3, 4, 5], but its shape is [2, 3, 4]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_doc_forms.cpp`: ConvTbc and ConvDepthwise2d against host references,
/// LogSigmoidForward / ScatterValue through the newer headers that declare them, RmsNormGrad
/// with rstd `[2]` for x `[2, 1, 8]`, RotaryPositionEmbeddingGrad without x, QuantMatmulV3
/// with x2 converted in place to FRACTAL_NZ; with their argument errors.
#[test]
fn the_reference_s_newer_forms_work() {
    let work = scratch("aclnn-doc-forms");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_doc_forms.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok conv tbc",
        "ok conv depthwise",
        "ok sibling headers",
        "ok rms norm grad",
        "ok rope grad",
        "ok quant matmul nz",
        "ok fake quant",
    ] {
        assert!(r.stdout.contains(section), "no {section:?} in\n{}", r.all());
    }
    for msg in [
        "aclnnConvTbcGetWorkspaceSize: pad 256 must lie in [0, 255]",
        "aclnnConvDepthwise2dGetWorkspaceSize: kernelSize [3, 3] must be weight's (KH, KW) [3, 2]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops16.cpp`: ScatterReduce / InplaceScatterReduce (every reduce, with
/// and without self, float / float16 / int32), SearchSorteds, LinalgCholesky (lower / upper,
/// batched, one triangle read), UnfoldGrad, LogitGrad, HardswishBackwardV2, CdistBackward
/// (p 0, 1, 2, 3, infinity), MultilabelMarginLoss, IndexAddV2 and AddRelu against hand-derived values,
/// with their documented argument errors.
#[test]
fn training_operators_16_match_hand_derived_values() {
    let work = scratch("aclnn-ops16");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops16.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok scatter reduce",
        "ok searchsorteds",
        "ok cholesky",
        "ok unfold grad",
        "ok elementwise grads",
        "ok cdist backward",
        "ok multilabel margin loss",
        "ok index add v2",
        "ok add relu",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 150, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnScatterReduceGetWorkspaceSize: self is nullptr",
        "aclnnScatterReduceGetWorkspaceSize: reduce 6 is not supported",
        "aclnnSearchSortedsGetWorkspaceSize: sortedSequence must be 1-D for a scalar self",
        "aclnnLinalgCholeskyGetWorkspaceSize: self must be 2-D to 8-D with square last two dimensions",
        "aclnnUnfoldGradGetWorkspaceSize: gradOut has shape [3, 2], expected [4, 2]",
        "aclnnCdistBackwardGetWorkspaceSize: p -2 must be non-negative (or -1 for infinity)",
        "aclnnMultilabelMarginLossGetWorkspaceSize: reduction 3 is not supported",
        "aclnnIndexAddV2GetWorkspaceSize: mode 0 (high performance) needs a 2-D",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops17.cpp`: CtcLoss / CtcLossBackward (padded and concatenated
/// targets, an impossible target with and without zeroInfinity, the alpha table, an unbatched
/// double input with blank 1) and EmbeddingBag (sum / mean / max, empty bags, paddingIdx,
/// perSampleWeights, includeLastOffset, the auxiliary outputs), UpsampleNearestExact3d
/// (+Backward), UpsampleBilinear2dAA (+Backward) and UpsampleBicubic2dAA (+Grad) against
/// hand-derived values; InplaceRandomTensor, InplaceRandomWithoutFromTo (+Tensor),
/// MultinomialTensor and StatelessExponentialTensor by range, mean and variance (about 4
/// standard errors) and bitwise agreement of each Tensor form with its plain form; all with
/// their documented argument errors.
#[test]
fn ctc_embedding_bag_upsample_random_operators_17() {
    let work = scratch("aclnn-ops17");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops17.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok ctc loss",
        "ok embedding bag",
        "ok upsample",
        "ok random",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 100, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnCtcLossGetWorkspaceSize: logProbs is nullptr",
        "aclnnCtcLossGetWorkspaceSize: inputLengths is nullptr",
        "aclnnCtcLossGetWorkspaceSize: logProbs has data type ACL_INT32, which is not supported",
        "aclnnCtcLossGetWorkspaceSize: blank 2 must be in [0, 2)",
        "aclnnCtcLossGetWorkspaceSize: logAlphaOut must be (N = 2, T = 2, X >= 5), but its shape is [2, 2, 4]",
        "aclnnCtcLossGetWorkspaceSize: inputLengths has 3 values; it must have N = 2",
        "aclnnCtcLossGetWorkspaceSize: inputLengths value 3 must be in [0, 2]",
        "aclnnCtcLossGetWorkspaceSize: targets of shape [2, 1] must be (N = 2, S >= 2)",
        "aclnnCtcLossBackwardGetWorkspaceSize: gradOut data type ACL_DOUBLE must be logProbs's ACL_FLOAT",
        "aclnnCtcLossBackwardGetWorkspaceSize: out has shape [2, 2, 3], expected [2, 2, 2]",
        "aclnnEmbeddingBagGetWorkspaceSize: weight is nullptr",
        "aclnnEmbeddingBagGetWorkspaceSize: mode 3 must be 0 (sum), 1 (mean) or 2 (max)",
        "aclnnEmbeddingBagGetWorkspaceSize: output has shape [4, 2], expected [3, 2]",
        "aclnnEmbeddingBagGetWorkspaceSize: perSampleWeights is only supported with mode 0 (sum)",
        "aclnnEmbeddingBagGetWorkspaceSize: indices must be 1-D, but its shape is [5, 1]",
        "aclnnEmbeddingBagGetWorkspaceSize: indices (ACL_INT8) or offsets (ACL_UINT8) must be INT32 or INT64",
        "aclnnEmbeddingBag: index 4 at position 3 is out of range for weight's 4 rows",
        "aclnnUpsampleBilinear2dAAGetWorkspaceSize: self is nullptr",
        "aclnnUpsampleBicubic2dAAGetWorkspaceSize: self has data type ACL_DOUBLE, which is not supported",
        "aclnnUpsampleBicubic2dAAGetWorkspaceSize: out has shape [1, 2, 1, 3], expected [1, 2, 1, 2]",
        "aclnnUpsampleBilinear2dAAGetWorkspaceSize: outputSize must have 2 elements, each > 0, but it is [1, 0]",
        "aclnnUpsampleNearestExact3dBackwardGetWorkspaceSize: gradInput has shape [1, 1, 2, 2, 3], expected [1, 1, 2, 2, 2]",
        "aclnnInplaceRandomTensorGetWorkspaceSize: seedTensor is nullptr",
        "aclnnInplaceRandomTensorGetWorkspaceSize: from 5 must be less than to 5",
        "aclnnInplaceRandomWithoutFromToGetWorkspaceSize: selfRef has data type ACL_DOUBLE, which is not supported",
        "aclnnInplaceRandomWithoutFromToTensorGetWorkspaceSize: offsetTensor must hold one element, but its shape is [2]",
        "aclnnMultinomialTensorGetWorkspaceSize: numsamples 4 exceeds the 3 categories of self without replacement",
        "aclnnStatelessExponentialTensorGetWorkspaceSize: lambd 0 must be > 0",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_ops18.cpp`: the operators whose documentation examples did not build
/// before (SeluBackward, Shrink, Swish (+Backward), SquaredRelu, Softsign (+Backward), GeluMul,
/// FatreluMul, SoftmaxCrossEntropyWithLogits, ScaledMaskedSoftmax (+Backward), MaxPool,
/// MaxUnpool2d/3dBackward, GatherV3, ScatterNdUpdate, TfScatterAdd, ScatterList, Gemm,
/// TransposeBatchMatMul, BatchNormReduce, SyncBatchNormGatherStats, FastBatchNormBackward,
/// GroupNormSwish (+Grad), ForeachRoundOffNumber (+V2), ChamferDistanceBackward) against host
/// references written from the documented formulas, with their argument errors.
#[test]
fn operators_18_match_the_host_reference() {
    let work = scratch("aclnn-ops18");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops18.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok activations",
        "ok softmax",
        "ok max pool",
        "ok max unpool backward",
        "ok gather scatter",
        "ok products",
        "ok norms",
        "ok misc",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 200, "only {n} checks:\n{}", r.stdout);
    for msg in MESSAGES_18 {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// Messages `aclnn_ops18.cpp` must provoke (phase-1 checks naming the argument, and a task
/// failure for an index outside its dimension).
const MESSAGES_18: &[&str] = &[
    "aclnnSeluBackwardGetWorkspaceSize: gradOutput is nullptr",
    "aclnnSeluBackwardGetWorkspaceSize: result data type ACL_FLOAT16 must be gradOutput's ACL_FLOAT",
    "aclnnShrinkGetWorkspaceSize: lambd must be non-negative, but it is -1",
    "aclnnSwishGetWorkspaceSize: self has data type ACL_DOUBLE, which is not supported",
    "aclnnSquaredReluGetWorkspaceSize: input has data type ACL_INT32, which is not supported",
    "aclnnSoftsignBackwardGetWorkspaceSize: features is nullptr",
    "aclnnGeluMulGetWorkspaceSize: approximateOptional must be \"none\" or \"tanh\", but it is \"erf\"",
    "aclnnGeluMulGetWorkspaceSize: the last dimension of input must be even, but input's shape is [2, 5]",
    "aclnnFatreluMulGetWorkspaceSize: threshold must hold exactly one element, but its shape is [2]",
    "aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize: loss has shape [3], expected [2]",
    "aclnnScaledMaskedSoftmaxGetWorkspaceSize: the last dimension of x must lie in (0, 4096], but it is 4097",
    "aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize: fixTriuMask must be false",
    "aclnnMaxPoolGetWorkspaceSize: dilations [2, 2] must all be 1",
    "aclnnMaxPoolGetWorkspaceSize: the pads [3, 0] of spatial axis 0 add up to more than its kernel size 2",
    "aclnnMaxPoolGetWorkspaceSize: out has shape [1, 1, 3, 3], expected [1, 1, 2, 2]",
    "aclnnMaxUnpool2dBackwardGetWorkspaceSize: the last 2 dimensions of gradOutput [2, 3, 3] must equal outputSize [3, 4]",
    "aclnnMaxUnpool2dBackward: indices value 4 is out of range [0, 4)",
    "aclnnMaxUnpool3dBackwardGetWorkspaceSize: stride must have 3 values, but it has 2",
    "aclnnGatherV3GetWorkspaceSize: batchDims 2 must lie in [0, dim 1]",
    "aclnnGatherV3GetWorkspaceSize: mode must be 0, 1 or 2, but it is 3",
    "aclnnScatterNdUpdateGetWorkspaceSize: updates has shape [3, 3], expected [2, 3]",
    "aclnnTfScatterAddGetWorkspaceSize: updates has shape [2]; expected [3, 2, 2]",
    "aclnnScatterListGetWorkspaceSize: reduceOptional must be \"update\", but it is \"add\"",
    "aclnnScatterListGetWorkspaceSize: axis 0 must name a dimension of updates [2, 2, 4] other than the first",
    "aclnnGemmGetWorkspaceSize: A [3, 4] (transA 0) and B [5, 5] (transB 0) do not multiply: inner sizes 4 and 5",
    "aclnnGemmGetWorkspaceSize: cubeMathType 9 is not supported",
    "aclnnTransposeBatchMatMulGetWorkspaceSize: permY [0, 1, 2] must be [1, 0, 2]",
    "aclnnTransposeBatchMatMulGetWorkspaceSize: batchSplitFactor 3 must lie in [1, 4] and divide the batch 4",
    "aclnnBatchNormReduceGetWorkspaceSize: sum must be 1-D with 3 elements, but its shape is [2]",
    "aclnnSyncBatchNormGatherStatsGetWorkspaceSize: batchMean is nullptr",
    "aclnnFastBatchNormBackwardGetWorkspaceSize: version must be 0 or 1, but it is 2",
    "aclnnGroupNormSwishGetWorkspaceSize: numGroups 3 must be positive and divide the 4 channels of x",
    "aclnnGroupNormSwishGradGetWorkspaceSize: dxOut is nullptr",
    "aclnnForeachRoundOffNumberGetWorkspaceSize: roundMode must hold one element, but its shape is [2]",
    "aclnnChamferDistanceBackwardGetWorkspaceSize: idx1 has data type ACL_INT64, which is not supported",
];

/// `tests/c/aclnn/aclnn_ops19.cpp`: operators of CANN's ops-math and ops-cv documentation
/// (Digamma, Lgamma, Logdet, Qr, MaxN, MinN, Sum, AddN, ReduceLogSum, MaxV2, the global pools,
/// Scale, Slice, SliceV2, StridedSliceAssignV2, Flatten, ChunkCat, ConfusionTranspose,
/// RoiAlign, RoiAlignV2 (+Backward), Iou, CIoU, NonMaxSuppression, Resize, SignBitsPack,
/// SignBitsUnpack) against host
/// references, with their documented argument errors.
#[test]
fn doc_operators_19_match_the_host_reference() {
    let work = scratch("aclnn-ops19");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops19.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok gamma",
        "ok logdet",
        "ok qr",
        "ok lists",
        "ok reductions",
        "ok scale",
        "ok conversion",
        "ok roi align",
        "ok boxes",
        "ok sign bits",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 110, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnDigammaGetWorkspaceSize: self is nullptr",
        "aclnnLogdetGetWorkspaceSize: self must be a batch of square matrices (*, n, n) with 2 to 8 dimensions, but its shape is [2, 3]",
        "aclnnQrGetWorkspaceSize: Q has shape [4, 4], expected [4, 3]",
        "aclnnMaxNGetWorkspaceSize: tensors[1] data type ACL_INT32 must be tensors[0]'s ACL_FLOAT",
        "aclnnAddNGetWorkspaceSize: tensors[1] shape [3] must equal tensors[0]'s [2]",
        "aclnnReduceLogSumGetWorkspaceSize: axes [1, -2] repeats dimension 1",
        "aclnnGlobalMaxPoolGetWorkspaceSize: self must have 4 to 8 dimensions, but its shape is [2, 3, 4]",
        "aclnnScaleGetWorkspaceSize: scale has shape [3], expected [3, 4] (x shape [2, 3, 4] from axis 1)",
        "aclnnSliceGetWorkspaceSize: step must be positive, but it is 0",
        "aclnnStridedSliceAssignV2GetWorkspaceSize: the stride of the last dimension of varRef must be 1, but it is 2",
        "aclnnChunkCatGetWorkspaceSize: dim must be 0, but it is 1",
        "aclnnRoiAlignGetWorkspaceSize: mode must be \"avg\" or \"max\", but it is \"sum\"",
        "aclnnIouGetWorkspaceSize: eps must be at least 0, but it is -1",
        "aclnnCIoUGetWorkspaceSize: isCross must be false",
        "aclnnNonMaxSuppressionGetWorkspaceSize: maxOutputBoxesPerClass must hold one value in [0, 700], but it is [701]",
        "aclnnResizeGetWorkspaceSize: mode must be \"nearest\" or \"bilinear\", but it is \"bicubic\"",
        "aclnnSignBitsPackGetWorkspaceSize: size 3 must be positive and divide the 2 packed bytes",
        "aclnnSignBitsUnpackGetWorkspaceSize: out data type ACL_FLOAT16 must be dtype ACL_FLOAT",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The operators of CANN's experimental set (TanhGrad, AsinGrad, AcoshGrad, SoftmaxGrad,
/// LogSoftmaxV2, FloorDiv, RealDiv, TruncateDiv, TruncateMod, ReluGradV3/V4, EluV2, Huber,
/// hinge, hinge-embedding, Lp, MseLossGrad, MseLossOut, Gaussian NLL and its gradient,
/// DiagPart, AssignSub, TensorMove, AxpyV2, BiasAdd, ReduceMinV2, ApplyGradientDescent) against float64 host references on transposed and
/// strided views, with their documented argument errors.
#[test]
fn experimental_operators_match_the_host_reference() {
    let work = scratch("aclnn-ops20");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_ops20.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok gradients",
        "ok divisions",
        "ok activations",
        "ok losses",
        "ok gaussian nll",
        "ok tensors",
        "ok channels",
    ] {
        assert!(r.stdout.contains(section), "no {section:?} in\n{}", r.all());
    }
    for msg in [
        "aclnnHuberLossGetWorkspaceSize: delta must be greater than 0, but it is 0",
        "aclnnReluGradV4GetWorkspaceSize: threshold must be 0, but it is 1",
        "aclnnDiagPartGetWorkspaceSize: x must be a square matrix [N, N], but its shape is [3, 4]",
        "aclnnMseLossOutGetWorkspaceSize: out has shape [], expected [4]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `aclnn_quant_llm.cpp`: the first quantised matmuls (aclnnQuantMatmul with a float
/// deqScale, V2 with a UINT64 one, aclnnWeightQuantBatchMatmul on its fix-pipe and vector
/// paths), aclnnAscendAntiQuant (INT8, packed INT4), aclnnInplaceScatterUpdate,
/// aclnnApplyTopKTopP and the MoE token permute/unpermute family against float64 host
/// references, and their documented argument errors.
#[test]
fn quant_and_llm_utilities_match_the_host_reference() {
    let work = scratch("aclnn-quant-llm");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_quant_llm.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok quant_matmul",
        "ok weight_quant_v1",
        "ok anti_quant",
        "ok scatter_update",
        "ok top_k_top_p",
        "ok moe_token",
        "ok trans_quant_param",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 45, "only {n} checks:\n{}", r.stdout);
}

/// The older and other versions of the attention operators (PromptFlashAttention V1/V2,
/// IncreFlashAttention V1-V3, FusedInferAttentionScore V1/V4, FlashAttentionScoreV2 and
/// FlashAttentionScoreGradV2) against float64 host references and against the newer
/// versions, with their documented argument errors.
#[test]
fn attention_versions_match_the_host_reference() {
    let work = scratch("aclnn-attention-versions");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(
        &work,
        "tests/c/aclnn/aclnn_attention_versions.cpp",
        "tests/c",
    );
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in ["ok prompt", "ok incre", "ok fused infer", "ok flash v2"] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 60, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnPromptFlashAttentionGetWorkspaceSize: query is nullptr",
        "aclnnPromptFlashAttentionGetWorkspaceSize: inputLayout \"SBH\" is not one of BSH, BSND, BNSD, BNSD_BSND",
        "aclnnIncreFlashAttentionV2GetWorkspaceSize: query [2, 4, 2, 8] has sequence length 2; incremental attention takes 1",
        "aclnnIncreFlashAttentionV3GetWorkspaceSize: blocktable has data type ACL_INT8, which is not supported; supported: ACL_INT32",
        "aclnnFusedInferAttentionScoreGetWorkspaceSize: deqScale1 is given but query is",
        "aclnnFusedInferAttentionScoreV4GetWorkspaceSize: learnableSinkOptional has shape [2, 4, 5, 1]; it takes one logit per query head: [4]",
        "aclnnFlashAttentionScoreV2GetWorkspaceSize: pseType 4 is not one of 0-3",
        "aclnnFlashAttentionScoreGradV2GetWorkspaceSize: dqOut is nullptr",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The normalisation + quantisation fused family (InplaceAddRmsNorm, GemmaRmsNorm,
/// AddRmsNormCast, DeepNorm and its gradient, RmsNormQuant, AddRmsNormQuant and V2,
/// RmsNormDynamicQuant, AddRmsNormDynamicQuant and V2, LayerNormQuant, AddLayerNormQuantV2,
/// SwiGluQuant and V2, DequantSwigluQuant, Quantize, TransQuantParamV3) against float64 host
/// references, with their documented argument errors.
#[test]
fn norm_quant_operators_match_the_host_reference() {
    let work = scratch("aclnn-norm-quant");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_norm_quant.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok rms",
        "ok deep norm",
        "ok static quant",
        "ok dynamic quant",
        "ok layer norm quant",
        "ok quantize",
        "ok swiglu quant",
        "ok dequant swiglu quant",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 80, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnInplaceAddRmsNormGetWorkspaceSize: x2Ref is nullptr",
        "aclnnGemmaRmsNormGetWorkspaceSize: gamma shape [8] must equal the last dimensions of x [4, 16]",
        "aclnnAddRmsNormQuantGetWorkspaceSize: divMode must be true",
        "aclnnRmsNormDynamicQuantGetWorkspaceSize: dstType 3 (ACL_INT32) is not supported by npu-emu",
        "aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize: outputMaskOptional must have 2 values, not 3",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The variable-length (TND) flash attention: aclnnFlashAttentionVarLenScore V1-V4 and
/// aclnnFlashAttentionUnpaddingScoreGrad V1-V4 against a float64 host reference (sparse modes
/// 0-4, 7, 8 per sequence, dropout, float16, backward against finite differences), against
/// each sequence run alone through aclnnFlashAttentionScore/Grad, with the documented errors.
#[test]
fn attention_varlen_matches_the_host_reference() {
    let work = scratch("aclnn-attention-varlen");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_attention_varlen.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok each sequence alone",
        "ok versions",
        "ok sparse modes",
        "ok dropout",
        "ok errors",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 70, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnFlashAttentionVarLenScoreGetWorkspaceSize: actualSeqQLenOptional [3, 3, 8, 11] must end at T = 12",
        "aclnnFlashAttentionVarLenScoreGetWorkspaceSize: sparseMode 5 (prefix, not compressed) is not supported",
        "aclnnFlashAttentionVarLenScoreV4GetWorkspaceSize: softmax layout \"TND\" is not",
        "aclnnFlashAttentionUnpaddingScoreGradGetWorkspaceSize: dqOut is nullptr",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_model_ops.cpp`: the operators model code reaches through torch_npu
/// and CANN's documented examples (TransformBiasRescaleQkv, UpsampleBilinear2dBackwardV2,
/// BinaryCrossEntropyWithLogitsTargetBackward, Modulate and its backward, AdaLayerNorm, V2 and
/// backward, ClippedSwiglu and its gradient, PdistForward, multi-scale deformable attention
/// and its gradient, Sinkhorn) against float64 host references, with their documented
/// argument errors.
#[test]
fn model_operators_match_the_host_reference() {
    let work = scratch("aclnn-model-ops");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_model_ops.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok qkv",
        "ok upsample",
        "ok bce target",
        "ok modulate",
        "ok ada layer norm",
        "ok clipped swiglu",
        "ok pdist",
        "ok msda",
        "ok sinkhorn",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 80, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnTransformBiasRescaleQkvGetWorkspaceSize: qkv is nullptr",
        "aclnnModulateGetWorkspaceSize: scaleOptional has shape [2, 5]; for self [2, 3, 4] it must be [2, 4] or [2, 1, 4]",
        "aclnnAdaLayerNormBackwardGetWorkspaceSize: normalizedShape must be [8] (input's last dimension), got [8, 1]",
        "aclnnClippedSwigluGetWorkspaceSize: x [2, 3, 3] must be even along dim 1",
        "aclnnPdistForwardGetWorkspaceSize: p must be in [0, inf], but it is -1",
        "aclnnSinkhornGetWorkspaceSize: cost must be a 2-D matrix, but its shape is [1, 5, 3]",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn moe_routing_operators_match_the_host_reference() {
    let work = scratch("aclnn-moe");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_moe.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in ["ok moe_gating_top_k", "ok moe_init_routing_v3"] {
        assert!(r.stdout.contains(section), "missing {section}: {}", r.all());
    }
}

/// The experimental Atlas A2 operators of `train_extra.rs` (SiluMul, SortWithIndex, AsStrided,
/// ViewCopy, FusedMulAddN, ApplyAdamD, ApplyFtrl) against float64 host references, with their
/// documented argument errors.
#[test]
fn experimental_training_operators_match_the_host_reference() {
    let work = scratch("aclnn-train-extra");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_train_extra.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok silu mul",
        "ok sort with index",
        "ok views",
        "ok fused mul add n",
        "ok apply adam d",
        "ok apply ftrl",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 40, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnSortWithIndexGetWorkspaceSize: axis 0 is not supported; only the last axis (-1 or 1) is",
        "aclnnFusedMulAddNGetWorkspaceSize: x3 must hold one element, but its shape is [2]",
        "aclnnApplyFtrlGetWorkspaceSize: useLocking must be false",
    ] {
        assert!(r.stdout.contains(msg), "missing {msg:?}:\n{}", r.stdout);
    }
}

/// `tests/c/aclnn/aclnn_attention_new.cpp`: the attention sink of aclnnFlashAttentionScoreV3
/// / GradV3 (BSND, sparse modes 0 and 3) and aclnnFlashAttentionVarLenScoreV5 /
/// UnpaddingScoreGradV5 (TND, both softmax layouts) against a float64 host reference, the
/// backward (dq, dk, dv, dsink) against finite differences; V3 without a sink equals V2; the
/// GetMaxWorkspaceSize of VarLenScoreV5, UnpaddingScoreGradV5 and FusedInferAttentionScoreV3/V4
/// give a working executor; aclnnNsaCompress/NsaCompressGrad (float16, bfloat16) against a
/// float64 reference; FlashAttentionScoreV4/GradV4 equal V3/GradV3 and VarLenScoreV5; the
/// documented argument errors.
#[test]
fn attention_sink_versions_match_the_host_reference() {
    let work = scratch("aclnn-attention-new");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_attention_new.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok score v3 sink",
        "ok score v3 without sink",
        "ok score v3 errors",
        "ok varlen v5 sink",
        "ok varlen v5 max workspace",
        "ok fused infer max workspace",
        "ok nsa compress",
        "ok score v4",
        "ok score v4 tnd",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 73, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnNsaCompressGetWorkspaceSize: compressStride 8 must be a positive multiple of 16 no larger than compressBlockSize 32",
        "aclnnFlashAttentionScoreV3GetWorkspaceSize: sinkOptional has shape [5]; it takes one value per head: [headNum] = [4]",
        "aclnnFlashAttentionScoreGradV3GetWorkspaceSize: dsinkOut is given (non-empty) without sinkInOptional",
    ] {
        assert!(r.stdout.contains(msg), "missing {msg:?}:\n{}", r.stdout);
    }
}

/// `aclnn_mhc.cpp`: aclnnMhcPost (with and without hRes, TND/BSND, float16/bfloat16, strided
/// and transposed views) and aclnnMhcPostBackward (the gradient torch_npu 2.9 cannot reach below
/// CANN 9.0) against float64 host loops of the reference formulas, their documented errors, and
/// the Ascend 950-only MhcSinkhorn(+Backward), MaskedCausalConv1d(+Backward) and
/// FusedCausalConv1d refused with 161002 naming the platform.
#[test]
fn mhc_operators_match_the_host_reference() {
    let work = scratch("aclnn-mhc");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_mhc.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok mhc_post f16 contig",
        "ok mhc_post bf16 strided",
        "ok mhc_post f16 transposed no hRes",
        "ok mhc_post_backward f16 contig",
        "ok mhc_post_backward bf16 strided",
        "ok mhc_post_errors",
        "ok ascend950_only",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `aclnn_llm_infer.cpp`: the inference helpers of `llm_infer.rs` (RotaryPositionEmbeddingV2
/// with and without the rotation matrix, InterleaveRope, RopeWithSinCosCache(+V2) in RoPE and
/// MRoPE forms, ScatterPaKvCache, GatherPaKvCache, TopKTopPSample) against float64 host
/// references, with their documented argument errors.
#[test]
fn llm_inference_helpers_match_the_host_reference() {
    let work = scratch("aclnn-llm-infer");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_llm_infer.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok rotary_position_embedding_v2",
        "ok interleave_rope",
        "ok rope_with_sin_cos_cache",
        "ok paged_kv_caches",
        "ok top_k_top_p_sample",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `aclnn_quant_modes.cpp`: aclnnQuantMatmulV5's G-B (pergroup-perblock) and A8W4 (per
/// channel, K-G) modes and int4 (INT32-packed) x1/x2 in the T-C and K-C modes of V4/V5,
/// aclnnDynamicQuantV2's groupIndexOptional and int4 output and aclnnConvertWeightToINT4Pack
/// (INT32 output), against host references
/// written from the documentation's formulas, with the documented argument errors.
#[test]
fn quant_modes_match_the_host_reference() {
    let work = scratch("aclnn-quant-modes");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_quant_modes.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok gb",
        "ok a8w4",
        "ok int4",
        "ok dyn_quant",
        "ok convert_int4",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 30, "only {n} checks:\n{}", r.stdout);
}

/// `tests/c/aclnn/aclnn_attention_gaps.cpp`: the paged key/value cache (blocktable with
/// blockSize, 3-D and 4-D caches) of IncreFlashAttentionV3/V4 and FusedInferAttentionScore
/// (incremental and prompt) against attention over the contiguous cache, INT8 key/value with
/// antiquant (per-channel with offset, per-tensor, per-token, per-head; paged too) against
/// dequantisation by hand, the INT8 output (quantScale2/quantOffset2) of IFA, PFA and FIA,
/// per-batch key/value tensor lists, and the documented argument errors.
#[test]
fn attention_gaps_paged_cache_and_antiquant_match_the_host_reference() {
    let work = scratch("aclnn-attention-gaps");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_attention_gaps.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in ["ok paged", "ok antiquant", "ok post quant", "ok kv list"] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 30, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "actualSeqLengthsKv is required with blockTable (paged key/value cache)",
        "blockSize 0 must be in [1, 512] with a blockTable",
        "the paged key [7, 2, 4, 8] has block size 4; blockSize is 8",
        "blockTable[0][2] = 9 is not a block of the cache (it has 7)",
        "key is INT8 but no antiquant scale is given for it",
        "antiquant mode 6 is not supported by npu-emu",
        "attentionOut is INT8 but quantScale2 is nullptr",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_gmm_extra.cpp`: GroupedMatmul V1 (aclIntArray group list, splitItem
/// 0/2/3, x and y one per group or one for all), V2 (FLOAT32, groupType -1/0 and the K
/// split), V3 (INT64 group list tensor, stacked weight and bias, a group list past x's rows
/// failing the task), WeightNz (FRACTAL_NZ weights written by hand, counts and cumulative
/// group lists) and GroupedMatmulFinalizeRouting V1/V2/V3/WeightNz/WeightNzV2 (A8W8: per-token
/// scale, shared rows, logit, colliding rowIndex; INT8 NZ weight), GroupedMatmulAdd (+V2) and
/// QuantMatmulWeightNz against a host reference, with their argument errors.
#[test]
fn grouped_matmul_v1_v2_v3_and_weight_nz_match_the_host_reference() {
    let work = scratch("aclnn-gmm-extra");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_gmm_extra.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok grouped matmul v1",
        "ok grouped matmul v2",
        "ok grouped matmul v3",
        "ok grouped matmul weight nz",
        "ok grouped matmul finalize routing",
        "ok grouped matmul add",
        "ok quant matmul weight nz",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 64, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnGroupedMatmulGetWorkspaceSize: groupListOptional [3, 2, 7] must be non-decreasing",
        "aclnnGroupedMatmulGetWorkspaceSize: x has data type ACL_FLOAT, which is not supported",
        "aclnnGroupedMatmulWeightNzGetWorkspaceSize: actType 1 (GMM_ACT_TYPE_RELU): GroupedMatmul \
         computes a fused activation only in the A8W8 quantised modes",
        "groupList [3, 9] (as cumulative ends) does not cut the 5 rows of x into groups",
        "aclnnGroupedMatmulFinalizeRoutingWeightNzGetWorkspaceSize: x2 must be in FRACTAL_NZ",
        "rowIndex[4] = 4 is outside the output's 4 rows",
    ] {
        assert!(r.all().contains(msg), "missing {msg:?}:\n{}", r.all());
    }
}

/// `nn_more.rs`: StridedSlice, AddV3 / InplaceAddV3, ApplyAdam, DropoutV3, DropoutV3Grad and
/// DropoutGenMaskV2Tensor, DynamicQuantV3/V4, ReluV3, HardShrink, Xlog1py, Expandv and
/// SqrtBackward against host references, with their documented
/// argument errors.
#[test]
fn nn_more_operators_match_the_host_reference() {
    let work = scratch("aclnn-nn-more");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_nn_more.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok strided slice",
        "ok add v3",
        "ok apply adam",
        "ok dropout v3",
        "ok dynamic quant v3",
        "ok relu v3",
        "ok hard shrink, xlog1py, expandv, sqrt backward",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section}:\n{}",
            r.all()
        );
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 110, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnStridedSliceGetWorkspaceSize: strides must not contain 0, but strides[1] is 0",
        "aclnnDropoutV3GetWorkspaceSize: offset 3 must be a multiple of 4",
        "aclnnApplyAdamGetWorkspaceSize: lr must have shape [1], but its shape is [2]",
    ] {
        assert!(r.stdout.contains(msg), "missing {msg:?}:\n{}", r.stdout);
    }
}

/// `tests/c/aclnn/aclnn_attention_nsa.cpp`: aclnnNsaSelectedAttention / NsaSelectedAttentionGrad
/// (TND, float16 and bfloat16; no mask, sparseMode 2 causal, sparseMode 0 explicit mask) against a
/// float64 host reference (out, softmaxMax, softmaxSum, dq, dk, dv); the documented argument
/// errors, and a block index past the sequence failing at launch. aclnnNsaSelectedAttentionInfer
/// (paged caches through blockTable; BSND with two query tokens, BSH, TND) likewise.
#[test]
fn nsa_selected_attention_matches_the_host_reference() {
    let work = scratch("aclnn-attention-nsa");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_attention_nsa.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    assert!(
        r.stdout.contains("ok nsa selected attention"),
        "{}",
        r.all()
    );
    assert!(
        r.stdout.contains("ok nsa selected attention infer"),
        "{}",
        r.all()
    );
    assert!(!r.stdout.contains("FAIL"), "{}", r.all());
}

/// MoE routing operators of `moe_route.rs` (MoeInitRoutingV2 drop-less and drop/pad;
/// MoeReRouting rank-major to expert-major) against host references, with their documented
/// argument errors and the count errors found at launch.
/// `tests/c/aclnn/aclnn_sparse_moe_map.cpp`: aclnnCoalesceSparse (CANN's own example,
/// duplicates summed, the documented errors, a row past the output failing the launch) and the
/// routing-map MoE permutation (MoeTokenPermute/UnpermuteWithRoutingMap in both modes against
/// host references, their gradients by the adjoint identity, the documented errors).
#[test]
fn sparse_coalesce_and_moe_routing_map_match_the_host_reference() {
    let work = scratch("aclnn-sparse-moe-map");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_sparse_moe_map.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok coalesce_sparse",
        "ok moe_token_permute_with_routing_map",
        "ok moe_routing_map_gradients",
    ] {
        assert!(r.stdout.contains(section), "missing {section}: {}", r.all());
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 39, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnCoalesceSparseGetWorkspaceSize: uniqueIndices is nullptr",
        "aclnnMoeTokenPermuteWithRoutingMapGetWorkspaceSize: numOutTokens should not be greater than 20, but got 21",
        "aclnnMoeTokenPermuteWithRoutingMapGradGetWorkspaceSize: numExperts should be larger than 0",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_moe32.cpp`: MoeInitRoutingQuantV2 (static and dynamic quantization,
/// drop-less and drop/pad), MoeInitRoutingV2Grad, MoeFinalizeRoutingV2Grad,
/// GroupedMatmulSwigluQuant (V1) and MoeToken(Un)PermuteWithEp(+Grad) against host references,
/// with their argument errors.
#[test]
fn moe32_operators_match_the_host_reference() {
    let work = scratch("aclnn-moe32");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_moe32.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok moe_init_routing_quant_v2",
        "ok moe_init_routing_v2_grad",
        "ok moe_finalize_routing_v2_grad",
        "ok grouped_matmul_swiglu_quant",
        "ok moe_token_with_ep",
    ] {
        assert!(r.stdout.contains(section), "missing {section}: {}", r.all());
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 90, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnMoeInitRoutingQuantV2GetWorkspaceSize: scaleOptional and offsetOptional must not be null when quantMode is 0",
        "aclnnMoeInitRoutingV2GradGetWorkspaceSize: Attr top_k must be larger than zero",
        "aclnnMoeFinalizeRoutingV2GradGetWorkspaceSize: expandedXOptional can't be null when scalesOptional is not null",
        "aclnnGroupedMatmulSwigluQuantGetWorkspaceSize: bias must be nullptr when x and weight are INT8",
        "aclnnMoeTokenPermuteWithEpGetWorkspaceSize: paddedMode true (drop-and-pad) is not provided",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn moe_route_operators_match_the_host_reference() {
    let work = scratch("aclnn-moe-route");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_moe_route.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    assert!(r.stdout.contains("ok moe_init_routing_v2"), "{}", r.all());
    assert!(r.stdout.contains("ok moe_re_routing"), "{}", r.all());
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 53, "only {n} checks:\n{}", r.stdout);
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_topk_sample.cpp`: aclnnTopKTopPSampleV2 (CANN's own example; the
/// exponential-race sample over SimThreadExponential draws: picks inside the top-k/top-p set at
/// the renormalised frequencies; isNeedSampleResult with top-k, top-p and min-p against a host
/// reference) and aclnnSimThreadExponential (determinism, Exp(lambda) moments, `count`), with
/// the documented argument errors.
#[test]
fn top_k_top_p_sample_v2_and_sim_exponential_match_the_host_reference() {
    let work = scratch("aclnn-topk-sample");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_topk_sample.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok cann_example",
        "ok q_sample",
        "ok sample_result",
        "ok sim_thread_exponential",
        "ok errors",
    ] {
        assert!(r.stdout.contains(section), "missing {section}: {}", r.all());
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 23, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnTopKTopPSampleV2GetWorkspaceSize: logits is nullptr",
        "aclnnSimThreadExponentialGetWorkspaceSize: lambda 0 must be > 0",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_mla32.cpp`: aclnnMlaProlog, aclnnMlaPrologV2WeightNz and
/// aclnnMlaPrologV3WeightNz (the non-quantized scenario: FRACTAL_NZ and ND weights, (T, He)
/// and (B, S, He) tokens, V3's query/key scale factors) against a float64 host reference of
/// the pages' formulas, and the argument errors (nullptr 161001; cache mode, dtype, Hcq, the
/// quantized scenarios npu-emu does not compute 161002; a cache index past the cache fails
/// the launch).
#[test]
fn mla_prolog_matches_the_host_reference() {
    let work = scratch("aclnn-mla32");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_mla32.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok mla_prolog_v1_nz_bsh",
        "ok mla_prolog_v1_nd_th",
        "ok mla_prolog_v2_nz_th",
        "ok mla_prolog_v3_nz_scales",
        "ok errors",
    ] {
        assert!(r.stdout.contains(section), "missing {section}: {}", r.all());
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 23, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnMlaPrologGetWorkspaceSize: tokenX is nullptr",
        "aclnnMlaPrologV3WeightNzGetWorkspaceSize: weightQuantMode = 1",
        "aclnnMlaProlog: cacheIndex[0] = 1048576 lies outside the cache's 16 rows",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `tests/c/aclnn/aclnn_nn85.cpp`: the operators of CANN 8.5's ops-nn example programs that
/// npu-emu lacked (BinaryCrossEntropyGradV2, GatherElementsV3, MaskedSoftmaxWithRelPosBias,
/// DequantBias, QuantizedBatchNorm, ExpandIntoJaggedPermute, FlatQuant, DynamicBlockQuant and
/// more) against float64/float32 host loops of the documented formulas, the Ascend 950-only
/// ones (GroupedDynamicMxQuant, FusedMatmul) refused as CANN refuses them on Atlas A2, and the
/// documented argument errors.
#[test]
fn nn85_operators_match_the_host_reference() {
    let work = scratch("aclnn-nn85");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_nn85.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok bce_grad_v2",
        "ok gather_elements_v3",
        "ok masked_softmax_rel_pos_bias",
        "ok batch_matmul_quant",
        "ok ada_layer_norm_quant",
        "ok fused_ema_adam",
        "ok flat_quant",
        "ok dynamic_block_quant",
        "ok dequant_bias",
        "ok quantized_batch_norm",
        "ok expand_into_jagged_permute",
        "ok ascend950_only",
        "ok errors",
    ] {
        assert!(r.stdout.contains(section), "missing {section}: {}", r.all());
    }
    let n: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" checks, 0 failed"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(n >= 100, "only {n} checks:\n{}", r.stdout);
    for msg in [
        "aclnnBinaryCrossEntropyGradV2GetWorkspaceSize: grad is nullptr",
        "aclnnGroupedDynamicMxQuantGetWorkspaceSize: platform",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `aclnn_mathcv85.cpp`: CANN 8.5's ops-math headers GroupedBiasAddGrad (V1/V2, ends and
/// sizes), ExpSegsum and ExpSegsumBackward, the experimental SliceV3 and FillV2 against
/// float64 host references, AddLora against its two matrix products, their documented
/// argument errors, TransConvolutionWeight's Ascend 310P only refusal and MaskedScale's Ascend 950
/// only refusal on the emulated Atlas A2.
#[test]
fn mathcv85_operators_match_the_host_reference() {
    let work = scratch("aclnn-mathcv85");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build(&work, "tests/c/aclnn/aclnn_mathcv85.cpp", "tests/c");
    let r = run_on(&exe, &lib64, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    for section in [
        "ok grouped",
        "ok segsum",
        "ok slice fill",
        "ok add lora",
        "ok masked scale",
    ] {
        assert!(r.stdout.contains(section), "no {section:?} in\n{}", r.all());
    }
    for msg in [
        "aclnnGroupedBiasAddGradV2GetWorkspaceSize: groupIdxType must be 0 (group end indices) or 1 (group sizes), but is 2",
        "aclnnGroupedBiasAddGrad: the last value of groupIdxOptional is 9, but gradY has 10 rows",
        "aclnnExpSegsumGetWorkspaceSize: self must have 3 or 4 dimensions, but its shape is [4, 5]",
        "aclnnSliceV3GetWorkspaceSize: begin[0] = 1 and size[0] = 3 do not lie within x's dimension 0 of 3",
        "aclnnFillV2GetWorkspaceSize: fillValue data type",
        "aclnnMaskedScaleGetWorkspaceSize: self dtype",
        "is supported on Ascend 950 only",
        "aclnnTransConvolutionWeightGetWorkspaceSize: only support ascend310P, now soc is Ascend910B",
        "aclnnAddLoraGetWorkspaceSize: layerIdx 1 must lie in [0, 1) (weightB's L)",
        "aclnnAddLora: indices[1] = 1 names no adapter: weightB has 1",
    ] {
        assert!(r.all().contains(msg), "no {msg:?} in\n{}", r.all());
    }
    let _ = std::fs::remove_dir_all(&work);
}
