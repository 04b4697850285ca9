//! The fused matmul + collective (MC2) aclnn operators and `HcclCommGetHandleWithName`, from
//! C++ programs built against an install tree (`-lopapi -lnnopbase -lhccl -lascendcl`):
//!
//! - `tests/c/aclnn/aclnn_mc2.cpp` as a job of 2 and 4 ranks (`npu-emu run -n N`, rank
//!   table): every operator against a host reference knowing every rank's inputs, and the
//!   documented argument errors;
//! - `tests/c/aclnn/examples/example_matmul_all_reduce.cpp`, written from the operator
//!   page's example alone: one process, `HcclCommInitAll` over 4 devices, a thread per rank.

use npu_emu_tests::{build_aclnn_hccl, NodeGuard};
use npu_emu_tests::{command, node_dir, npu_emu_bin, run, scratch, Run};

fn job(n: u32) -> Run {
    let work = scratch(&format!("aclnn-mc2-{n}"));
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build_aclnn_hccl(&work, "tests/c/aclnn/aclnn_mc2.cpp");
    let mut c = command(&npu_emu_bin(), &work);
    c.env("LD_LIBRARY_PATH", &lib64)
        .args(["run", "-n", &n.to_string(), "--timeout", "300"])
        .arg(&exe);
    let r = run(c);
    r.assert_ok();
    r
}

fn check_job(n: u32) {
    let r = job(n);
    for i in 0..n {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!("aclnn_mc2 rank {i}/{n} passed")))
            .unwrap_or_else(|| panic!("rank {i} did not pass:\n{}", r.all()));
        let checks: usize = line
            .rsplit('(')
            .next()
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        assert!(checks >= 54, "rank {i}: only {checks} checks:\n{}", r.all());
    }
    for section in [
        "ok by name",
        "ok all reduce f16",
        "ok all reduce bf16",
        "ok add rms norm f16",
        "ok add rms norm bf16",
        "ok all gather f16",
        "ok all gather bf16",
        "ok reduce scatter f16",
        "ok reduce scatter bf16",
        "ok quant 0",
        "ok quant 1",
        "ok quant 2",
        "ok weight quant f16",
        "ok weight quant bf16",
        "ok errors",
    ] {
        assert_eq!(
            r.stdout.matches(section).count(),
            n as usize,
            "{section} on every rank:\n{}",
            r.all()
        );
    }
    for msg in [
        "group \"no_such_group\" names no live HCCL communicator of this process",
        "commName=\"no_such_comm\" names no live communicator of this process",
        "reduceOp \"max\" is not supported: only \"sum\" is",
        "k = 32 is out of the supported range [256, 65535)",
        "must be a multiple of the",
    ] {
        assert!(r.stdout.contains(msg), "missing {msg:?}:\n{}", r.stdout);
    }
}

#[test]
fn mc2_operators_on_2_ranks() {
    check_job(2);
}

#[test]
fn mc2_operators_on_4_ranks() {
    check_job(4);
}

#[test]
fn mc2_documentation_example_with_comm_init_all() {
    let work = scratch("aclnn-mc2-example");
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build_aclnn_hccl(
        &work,
        "tests/c/aclnn/examples/example_matmul_all_reduce.cpp",
    );
    let mut c = command(&exe, &work);
    c.env("LD_LIBRARY_PATH", &lib64);
    let r = run(c);
    r.assert_ok();
    assert!(
        r.stdout.contains("example_matmul_all_reduce passed"),
        "{}",
        r.all()
    );
    assert_eq!(
        r.stdout
            .matches("0 of 4096 elements differ from 260")
            .count(),
        4,
        "{}",
        r.all()
    );
}
