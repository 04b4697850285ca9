//! The samples and the performance tool, built exactly as a user would: copied out of the
//! repository, `source set_env.sh` of a fresh install, `make` with their own Makefiles, then
//! run (the HCCL sample through `npu-emu run`, through its own `make test`, and as threads).
//! Each verifies its own results; the tests check the verdicts and exit codes.

use npu_emu_tests::{installed_bash, node_dir, npu_emu_bin, root, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory with an install in `inst/` and copies of the given source
/// directories (relative to the repository root), each under its last path component.
struct Tree {
    work: PathBuf,
    prefix: PathBuf,
}

impl Tree {
    fn new(name: &str, dirs: &[&str]) -> Tree {
        let work = scratch(name);
        let prefix = work.join("inst");
        let mut c = Command::new(npu_emu_bin());
        c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
        run(c).assert_ok();
        for d in dirs {
            let src = root().join(d);
            let dst = work.join(Path::new(d).file_name().unwrap());
            std::fs::create_dir_all(&dst).unwrap();
            for f in [
                "main.cpp",
                "hccl_perf.cpp",
                "Makefile",
                "README.md",
                "compare.sh",
            ] {
                if src.join(f).is_file() {
                    std::fs::copy(src.join(f), dst.join(f)).unwrap();
                }
            }
        }
        Tree { work, prefix }
    }

    /// Run a bash script after `source set_env.sh`, in the scratch directory, on a private
    /// node, with nothing of the caller's NPU environment.
    fn bash(&self, script: &str) -> Run {
        run(installed_bash(&self.prefix, &self.work, script))
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(node_dir(&self.work));
    }
}

fn count(text: &str, pat: &str) -> usize {
    text.matches(pat).count()
}

#[test]
fn acl_memcpy_sample_builds_with_its_makefile_and_passes() {
    let t = Tree::new("sample-acl", &["samples/acl_memcpy"]);
    let r = t.bash("make -C acl_memcpy\n./acl_memcpy/acl_memcpy");
    r.assert_ok();
    assert!(r.stdout.contains("sync H2D -> D2D -> D2H"), "{}", r.all());
    assert!(
        r.stdout.contains("async H2D | event | D2D, memset, D2H"),
        "{}",
        r.all()
    );
    assert_eq!(r.stdout.lines().last(), Some("PASS"), "{}", r.all());
    // The Makefile refuses to build without set_env.sh, naming the variable.
    let mut c = Command::new("make");
    c.arg("-C")
        .arg(t.work.join("acl_memcpy"))
        .env_remove("ASCEND_HOME_PATH");
    let r = run(c);
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr.contains("ASCEND_HOME_PATH is not set"),
        "{}",
        r.all()
    );
}

#[test]
fn hccl_sample_passes_through_the_launcher_and_as_threads() {
    let t = Tree::new("sample-hccl", &["samples/hccl_allreduce"]);
    let r = t.bash("make -C hccl_allreduce\nnpu-emu run -n 4 ./hccl_allreduce/hccl_allreduce");
    r.assert_ok();
    for rank in 0..4 {
        let pass =
            format!("[rank {rank}] rank {rank}: PASS (allreduce sum of 1048576 fp32 over 4 ranks)");
        assert!(r.stdout.contains(&pass), "{}", r.all());
        // 4 ranks: x = (i % 1000) + r summed gives 4 (i % 1000) + 6.
        let out = format!("[rank {rank}] rankId: {rank}, output: [ 6 10 14 18 22 26 30 34 ... ]");
        assert!(r.stdout.contains(&out), "{}", r.all());
    }
    // Its own `make test` (npu-emu from PATH), with another rank count.
    let r = t.bash("make -C hccl_allreduce test RANKS=3");
    r.assert_ok();
    assert_eq!(
        count(
            &r.stdout,
            ": PASS (allreduce sum of 1048576 fp32 over 3 ranks)"
        ),
        3,
        "{}",
        r.all()
    );
    // One process, one thread per device, root info.
    let r = t.bash("./hccl_allreduce/hccl_allreduce 3");
    r.assert_ok();
    assert_eq!(
        count(
            &r.stdout,
            ": PASS (allreduce sum of 1048576 fp32 over 3 ranks)"
        ),
        3,
        "{}",
        r.all()
    );
    assert!(!r.stdout.contains("FAIL"), "{}", r.all());
}

#[test]
fn hccl_perf_checks_every_collective_through_the_launcher() {
    let t = Tree::new("perf-launcher", &["tests/perf"]);
    let r = t.bash("make -C perf hccl-perf");
    r.assert_ok();
    for (dtype, red) in [
        ("fp32", "sum"),
        ("int8", "max"),
        ("bf16", "sum"),
        ("fp16", "prod"),
        ("int64", "min"),
    ] {
        let r = t.bash(&format!(
            "npu-emu run -n 3 ./perf/hccl-perf -o allreduce,allgather,reducescatter,broadcast,alltoall \
             -d {dtype} -r {red} -b 1 -e 300K -f 17 -w 1 -n 2 -c 1"
        ));
        r.assert_ok();
        assert!(
            r.stdout.contains("[rank 0] # total #wrong: 0"),
            "{dtype} {red}:\n{}",
            r.all()
        );
        for op in [
            "allreduce",
            "allgather",
            "reducescatter",
            "broadcast",
            "alltoall",
        ] {
            assert!(
                r.stdout.contains(&format!("[rank 0] # {op}\n")),
                "{}",
                r.all()
            );
        }
        // Only rank 0 prints the table.
        assert!(!r.stdout.contains("[rank 1] #"), "{}", r.all());
    }
    // A bad option is named.
    let r = t.bash("npu-emu run -n 1 ./perf/hccl-perf -o allsum");
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr.contains("unknown operation \"allsum\""),
        "{}",
        r.all()
    );
}
