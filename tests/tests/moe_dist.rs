//! Expert-parallel MoE over HCCL: `aclnnMoeDistributeDispatch` / `aclnnMoeDistributeCombine`
//! from a C++ program built against an install tree (`-lopapi -lnnopbase -lhccl
//! -lascendcl`), `tests/c/aclnn/aclnn_moe_dist.cpp` run as a job of 2 and 4 ranks
//! (`npu-emu run -n N`, rank table): the dispatched rows, counts and indices against a host
//! reference knowing every rank's tokens and routing, dynamic int8 quantisation, dispatch →
//! expert → combine, DispatchV2/CombineV2 (xActiveMask, assistInfoForCombine, sharedExpertX),
//! CombineAddRmsNorm,
//! and the documented argument errors;
//! - `tests/python/dist_moe_dist.py` on 2 ranks: the real torch_npu's
//!   `npu_moe_distribute_dispatch` / `npu_moe_distribute_combine`, their `_v2` forms and
//!   `npu_moe_distribute_combine_add_rms_norm` against CPU torch.

use npu_emu_tests::{build_aclnn_hccl, NodeGuard};
use npu_emu_tests::{command, installed_bash, node_dir, npu_emu_bin, root, run, scratch};
use std::path::PathBuf;
use std::process::Command;

fn check_job(n: u32) {
    let work = scratch(&format!("aclnn-moe-dist-{n}"));
    let _node = NodeGuard(node_dir(&work));
    let (exe, lib64) = build_aclnn_hccl(&work, "tests/c/aclnn/aclnn_moe_dist.cpp");
    let mut c = command(&npu_emu_bin(), &work);
    c.env("LD_LIBRARY_PATH", &lib64)
        .args(["run", "-n", &n.to_string(), "--timeout", "300"])
        .arg(&exe);
    let r = run(c);
    r.assert_ok();
    for i in 0..n {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!("aclnn_moe_dist rank {i}/{n} passed")))
            .unwrap_or_else(|| panic!("rank {i} did not pass:\n{}", r.all()));
        let checks: usize = line
            .rsplit('(')
            .next()
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        assert!(checks >= 40, "rank {i}: only {checks} checks:\n{}", r.all());
    }
    for section in [
        "ok f16 equal bs",
        "ok bf16 unequal bs",
        "ok f16 one expert per rank",
        "ok quant\n",
        "ok quant smooth",
        "ok v2 f16",
        "ok v2 bf16",
        "ok add rms norm",
        "ok errors",
    ] {
        assert_eq!(
            r.stdout.matches(section).count(),
            n as usize,
            "{section:?} on every rank:\n{}",
            r.all()
        );
    }
    for msg in [
        "sharedExpertRankNum 1 is not supported",
        "quantMode 1 (static, per-group or MX quantisation) is not supported",
        "H = 33 must be in (0, 7168] and a multiple of 32",
        "commQuantMode 2 is not supported",
        "commAlg \"ring\" is not supported",
        "group \"no_such_group\" names no live HCCL communicator of this process",
    ] {
        assert!(r.stdout.contains(msg), "missing {msg:?}:\n{}", r.stdout);
    }
}

#[test]
fn moe_distribute_dispatch_combine_on_2_ranks() {
    check_job(2);
}

#[test]
fn moe_distribute_dispatch_combine_on_4_ranks() {
    check_job(4);
}

/// The venv with torch_npu (`target/venv` or `$NPU_EMU_VENV`), or `None` after a loud
/// message (a failure under CI), as the torch_npu tests do.
fn venv() -> Option<PathBuf> {
    let dir = std::env::var_os("NPU_EMU_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/venv"));
    let has_npu = dir.join("bin/python").exists()
        && std::fs::read_dir(dir.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().join("site-packages/torch_npu").is_dir());
    if has_npu {
        return Some(dir);
    }
    let msg = format!(
        "the Python environment {} with torch + torch_npu is missing: create it with \
         tests/python/setup_venv.sh (or point NPU_EMU_VENV at one)",
        dir.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("\n*** SKIPPED: {msg} ***\n");
    None
}

#[test]
fn torch_npu_moe_distribute_dispatch_combine_2_ranks() {
    let Some(venv) = venv() else { return };
    let work = scratch("torch-moe-dist-2");
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
    run(c).assert_ok();
    let mut c = installed_bash(
        &prefix,
        &work,
        &format!(
            "npu-emu run -n 2 --timeout 600 '{}' '{}'",
            venv.join("bin/python").display(),
            root().join("tests/python/dist_moe_dist.py").display()
        ),
    );
    c.env("PYTHONWARNINGS", "ignore")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("HCCL_CONNECT_TIMEOUT", "120");
    let r = run(c);
    let _ = std::fs::remove_dir_all(node_dir(&work));
    r.assert_ok();
    for i in 0..2 {
        assert!(
            r.stdout
                .contains(&format!("dist_moe_dist rank {i}/2 passed (6 checks)")),
            "{}",
            r.all()
        );
    }
}
