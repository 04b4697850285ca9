//! Private data formats through the real entry points (issue 5): the tensor-descriptor API
//! and the `TransData` operator of `libascendcl.so`, from C++ programs in `tests/c/formats/`
//! compiled against `headers/`. TransData results are copied back from the device and
//! compared with a host reference the C++ program computes from abi.md §5.2.

use npu_emu_tests::NodeGuard;
use npu_emu_tests::{command, compile, node_dir, run, scratch, Run};
use std::path::Path;

/// Compile `tests/c/formats/<src>` and run it with `args` on a private node.
fn run_prog(src: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let work = scratch(&format!("formats-{}", src.split('.').next().unwrap()));
    let _node = NodeGuard(node_dir(&work));
    let exe = work.join("prog");
    compile(
        &[&format!("formats/{src}")],
        &exe,
        &["ascendcl"],
        &["-Wno-deprecated-declarations"],
    );
    let mut c = command(Path::new(&exe), &work);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    run(c)
}

fn trans_group(group: &str) {
    let r = run_prog("transdata.cpp", &[group], &[]);
    r.assert_ok();
    assert!(r.stdout.contains(&format!("PASS {group}")), "{}", r.all());
}

#[test]
fn descriptor_api_values_sizes_and_errors() {
    let r = run_prog("desc.cpp", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("PASS"), "{}", r.all());
    // The messages users see name the function and the argument.
    assert!(
        r.stdout
            .contains("aclGetTensorDescDimV2: index = 4 is out of range"),
        "{}",
        r.all()
    );
}

#[test]
fn descriptor_shapes_of_every_private_format() {
    let r = run_prog("desc.cpp", &[], &[("DESC_ALL_FORMATS", "1")]);
    r.assert_ok();
    assert!(r.stdout.contains("ok trans 1 -> 3"), "{}", r.all());
}

#[test]
fn transdata_nchw_nhwc_nc1hwc0() {
    trans_group("nc1hwc0");
}

#[test]
fn transdata_nc1hwc0_c04() {
    trans_group("c04");
}

#[test]
fn transdata_ndc1hwc0() {
    trans_group("ndc1hwc0");
}

#[test]
fn transdata_fractal_z() {
    trans_group("fz");
}

#[test]
fn transdata_fractal_z_groups() {
    trans_group("fzgroups");
}

#[test]
fn transdata_fractal_z_3d() {
    trans_group("fz3d");
}

#[test]
fn transdata_fractal_nz() {
    trans_group("nz");
}

#[test]
fn transdata_fractal_nz_explicit_c0() {
    trans_group("nzc0");
}

#[test]
fn transdata_every_entry_point_and_storage_descriptors() {
    trans_group("apis");
}

#[test]
fn transdata_bad_input_codes_and_messages() {
    let r = run_prog("transdata_errors.cpp", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("all bad-input cases ok"), "{}", r.all());
    assert!(
        r.stdout.contains("op type \"Conv2DFoo\" is not supported"),
        "{}",
        r.all()
    );
}

#[test]
fn format_benchmark_builds_and_runs() {
    // Figures are printed, not checked (tests must not depend on timing): a small size.
    let work = scratch("formats-bench");
    let _node = NodeGuard(node_dir(&work));
    let exe = work.join("format_bench");
    compile(
        &[npu_emu_tests::root()
            .join("tests/bench/format_bench.c")
            .to_str()
            .unwrap()],
        &exe,
        &["ascendcl"],
        &[],
    );
    let mut c = command(&exe, &work);
    c.args(["1", "2"]);
    let r = run(c);
    r.assert_ok();
    assert!(r.stdout.contains("NCHW->NC1HWC0"), "{}", r.all());
    assert!(r.stdout.contains("ND->FRACTAL_NZ"), "{}", r.all());
}

#[test]
fn cast_through_aclopcast_and_the_cast_op() {
    let r = run_prog("cast.cpp", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("ok cast aclopCast"), "{}", r.all());
    assert!(r.stdout.contains("PASS"), "{}", r.all());
}

/// `dynamic_rnn.cpp`: the LSTM operators of the single-operator API from CANN's op
/// prototypes: DynamicRNN with lengths, initial state and forget_bias against a host LSTM,
/// REDIRECTIONAL without optional inputs, DynamicRNNGrad against finite differences,
/// DynamicRNNV2 with PyTorch's gate order, and the error codes.
#[test]
fn dynamic_rnn_family_matches_a_host_lstm_and_its_finite_differences() {
    let r = run_prog("dynamic_rnn.cpp", &[], &[]);
    r.assert_ok();
    for line in [
        "ok DynamicRNN output_h (state kept past the length)",
        "ok REDIRECTIONAL output_h (final state at step 0)",
        "ok DynamicRNNGrad dw",
        "ok DynamicRNNV2 y",
        "-> 100021",
        "-> 100023",
        "-> 100022",
        "PASS dynamic_rnn",
    ] {
        assert!(r.stdout.contains(line), "missing {line:?}: {}", r.all());
    }
}

/// `identity_fill.cpp`: "Identity" converts between storage formats exactly as TransData
/// does (and back), refuses a data type change; "Fill" writes a device or host value into the
/// shape its constant dims give, and refuses dims that are not the output's shape.
#[test]
fn identity_converts_like_transdata_and_fill_fills() {
    let r = run_prog("identity_fill.cpp", &[], &[]);
    r.assert_ok();
    for line in [
        "ok Identity ND -> FRACTAL_NZ is TransData's layout",
        "ok Identity FRACTAL_NZ -> ND gives the input again",
        "ok Fill with a device value",
        "ok Fill with a host value",
        "PASS identity_fill",
    ] {
        assert!(r.stdout.contains(line), "missing {line:?}: {}", r.all());
    }
}

/// `strided_slice.cpp`: "StridedSlice" (torch_npu's npu_indexing) with constant host lists:
/// steps, negative begins and strides, begin/end masks, a shrunk axis, an ellipsis and a new
/// axis, element by element; a wrong output shape and a zero stride are refused.
#[test]
fn strided_slice_follows_the_tensorflow_rules() {
    let r = run_prog("strided_slice.cpp", &[], &[]);
    r.assert_ok();
    for line in [
        "ok steps",
        "ok negative begin and strides, an implicit last axis",
        "ok begin/end masks and a shrunk axis",
        "ok ellipsis and a new axis",
        "PASS strided_slice",
    ] {
        assert!(r.stdout.contains(line), "missing {line:?}: {}", r.all());
    }
}

#[test]
fn transdata_runs_in_stream_order_and_rechecks_memory_when_it_runs() {
    let r = run_prog("stream_order.cpp", &[], &[]);
    r.assert_ok();
    assert!(r.stdout.contains("ok stream order"), "{}", r.all());
    assert!(r.stdout.contains("ok freed input"), "{}", r.all());
}

#[test]
fn list_and_data_type_attrs_store_check_input_and_leave_transdata_working() {
    let r = run_prog("attr_lists.cpp", &[], &[]);
    r.assert_ok();
    for want in [
        "ok setters",
        "ok transdata with extra attrs",
        "ok compile-and-execute with extra attrs",
        "ok typed storage",
        "PASS attr lists",
    ] {
        assert!(r.stdout.contains(want), "{want}: {}", r.all());
    }
    // What users see for a negative count.
    assert!(
        r.stdout.contains(
            "aclopSetAttrListInt: argument numValues = -1 is invalid: expected 0 or more"
        ),
        "{}",
        r.all()
    );
}
