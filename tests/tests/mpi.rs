//! HCCL with ranks started by `mpirun` instead of our launcher (OpenMPI; `.ci/run` installs
//! it). Ranks started by MPI need nothing from `npu-emu run`: a wrapper maps
//! `OMPI_COMM_WORLD_RANK`/`SIZE` to `RANK_ID`/`RANK_SIZE` and points `RANK_TABLE_FILE` at a
//! table the test writes, or the program bootstraps through MPI itself (`hccl-perf-mpi`
//! broadcasts `HcclRootInfo` with `MPI_Bcast`).
//!
//! Without `mpirun` on PATH the tests print why they are skipped and pass; CI always has it.

use npu_emu_tests::{compile, lib_dir, node_dir, root, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `None` (after printing why) when mpirun is missing.
fn mpirun_or_skip(test: &str) -> Option<()> {
    if have("mpirun") {
        return Some(());
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !ci,
        "{test}: mpirun is missing in CI; .ci/run should have installed openmpi-bin"
    );
    eprintln!("SKIPPED {test}: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)");
    None
}

/// `mpirun -np N` with the flags a 2-core CI runner needs, on `work`'s private node.
fn mpirun(work: &Path, n: usize, prog: &[&str]) -> Run {
    let mut c = Command::new("mpirun");
    c.arg("-np")
        .arg(n.to_string())
        .args(["--oversubscribe", "--bind-to", "none"]);
    // SAFETY: plain getter.
    if unsafe { libc::geteuid() } == 0 {
        c.arg("--allow-run-as-root");
    }
    if n > std::thread::available_parallelism().map_or(1, |p| p.get()) {
        // Busy-polling MPI ranks starve each other when they outnumber cores.
        c.args(["--mca", "mpi_yield_when_idle", "1"]);
    }
    c.args([
        "-x",
        "NPU_EMU_NODE_DIR",
        "-x",
        "LD_LIBRARY_PATH",
        "-x",
        "HCCL_CONNECT_TIMEOUT",
    ])
    .args(prog)
    .env("NPU_EMU_NODE_DIR", node_dir(work))
    .env("LD_LIBRARY_PATH", lib_dir())
    .env("HCCL_CONNECT_TIMEOUT", "60")
    .env_remove("RANK_TABLE_FILE")
    .env_remove("RANK_ID")
    .env_remove("RANK_SIZE")
    .env_remove("ASCEND_DEVICE_ID")
    .current_dir(work);
    run(c)
}

/// A version "1.0" rank table for ranks 0..n on devices 0..n.
fn rank_table(path: &Path, n: usize) {
    let devs: Vec<String> = (0..n)
        .map(|r| format!("{{\"device_id\": \"{r}\", \"device_ip\": \"192.168.1.{r}\", \"rank_id\": \"{r}\"}}"))
        .collect();
    let t = format!(
        "{{\"status\": \"completed\", \"version\": \"1.0\", \"server_count\": \"1\", \"server_list\": \
         [{{\"server_id\": \"127.0.0.1\", \"device\": [{}]}}]}}\n",
        devs.join(", ")
    );
    std::fs::write(path, t).unwrap();
}

/// The wrapper real users write: MPI's rank variables to the Ascend ones (and the rank
/// table, if any), then exec.
fn wrapper(work: &Path, table: Option<&Path>) -> PathBuf {
    let w = work.join(if table.is_some() {
        "as_rank_table.sh"
    } else {
        "as_rank.sh"
    });
    let table = match table {
        Some(t) => format!("export RANK_TABLE_FILE='{}'\n", t.display()),
        None => String::new(),
    };
    std::fs::write(
        &w,
        format!(
            "#!/bin/sh\nexport RANK_ID=$OMPI_COMM_WORLD_RANK RANK_SIZE=$OMPI_COMM_WORLD_SIZE\n\
             export ASCEND_DEVICE_ID=$RANK_ID\n{table}exec \"$@\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&w, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    w
}

struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(node_dir(&self.0));
    }
}

#[test]
fn hccl_sample_under_mpirun_with_a_rank_table() {
    let Some(()) = mpirun_or_skip("hccl_sample_under_mpirun_with_a_rank_table") else {
        return;
    };
    let work = scratch("mpi-sample");
    let _c = Cleanup(work.clone());
    let exe = compile(
        &[root()
            .join("samples/hccl_allreduce/main.cpp")
            .to_str()
            .unwrap()],
        &work.join("hccl_allreduce"),
        &["hccl", "ascendcl"],
        &[],
    );
    for n in [2usize, 4] {
        let table = work.join(format!("table{n}.json"));
        rank_table(&table, n);
        let w = wrapper(&work, Some(&table));
        let r = mpirun(&work, n, &[w.to_str().unwrap(), exe.to_str().unwrap()]);
        r.assert_ok();
        for rank in 0..n {
            let pass = format!("rank {rank}: PASS (allreduce sum of 1048576 fp32 over {n} ranks)");
            assert!(r.stdout.contains(&pass), "{n} ranks:\n{}", r.all());
        }
    }
}

#[test]
fn hccl_ops_under_mpirun_with_a_rank_table_and_with_root_info() {
    let Some(()) = mpirun_or_skip("hccl_ops_under_mpirun_with_a_rank_table_and_with_root_info")
    else {
        return;
    };
    let work = scratch("mpi-ops");
    let _c = Cleanup(work.clone());
    let exe = compile(
        &["hccl_ops.cpp"],
        &work.join("hccl_ops"),
        &["hccl", "ascendcl"],
        &[],
    );
    let exe = exe.to_str().unwrap();
    for n in [2usize, 3] {
        // Rank table.
        let table = work.join(format!("table{n}.json"));
        rank_table(&table, n);
        let w = wrapper(&work, Some(&table));
        let r = mpirun(&work, n, &[w.to_str().unwrap(), exe, "--quick"]);
        r.assert_ok();
        for rank in 0..n {
            assert!(
                r.stdout
                    .contains(&format!("hccl_ops rank {rank}/{n} passed")),
                "{}",
                r.all()
            );
        }
        // Root info, handed from rank 0 to the others through a file.
        let root_file = work.join(format!("root{n}.bin"));
        let w = wrapper(&work, None);
        let r = mpirun(
            &work,
            n,
            &[
                w.to_str().unwrap(),
                exe,
                root_file.to_str().unwrap(),
                "--quick",
            ],
        );
        r.assert_ok();
        for rank in 0..n {
            assert!(
                r.stdout
                    .contains(&format!("hccl_ops rank {rank}/{n} passed")),
                "{}",
                r.all()
            );
        }
    }
}

#[test]
fn hccl_perf_mpi_bootstraps_through_mpi_and_matches_mpi() {
    let Some(()) = mpirun_or_skip("hccl_perf_mpi_bootstraps_through_mpi_and_matches_mpi") else {
        return;
    };
    if !have("mpicxx") {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "mpicxx missing in CI"
        );
        eprintln!("SKIPPED: mpicxx not found (apt-get install libopenmpi-dev)");
        return;
    }
    let work = scratch("mpi-perf");
    let _c = Cleanup(work.clone());
    let exe = work.join("hccl-perf-mpi");
    let mut c = Command::new("mpicxx");
    c.args([
        "-DHAVE_MPI",
        "-std=c++17",
        "-O2",
        "-Wall",
        "-Wextra",
        "-Werror",
    ])
    .arg(root().join("tests/perf/hccl_perf.cpp"))
    .arg(format!("-I{}", root().join("headers/include").display()))
    .arg(format!("-L{}", lib_dir().display()))
    .args(["-lhccl", "-lascendcl", "-o"])
    .arg(&exe);
    run(c).assert_ok();
    for (n, dtype, red) in [
        (2usize, "fp32", "sum"),
        (3, "int32", "max"),
        (4, "fp64", "prod"),
    ] {
        let r = mpirun(
            &work,
            n,
            &[
                exe.to_str().unwrap(),
                "--mpi",
                "-o",
                "allreduce,allgather,reducescatter,broadcast,alltoall",
                "-d",
                dtype,
                "-r",
                red,
                "-b",
                "4",
                "-e",
                "1M",
                "-f",
                "32",
                "-w",
                "1",
                "-n",
                "2",
            ],
        );
        r.assert_ok();
        assert!(
            r.stdout.contains("# total #wrong: 0"),
            "{n} ranks {dtype} {red}:\n{}",
            r.all()
        );
        assert!(
            r.stdout.contains(&format!(
                "# hccl-perf: {n} ranks, type {dtype}, redop {red}"
            )),
            "{}",
            r.all()
        );
        // HCCL and MPI columns on every row.
        let rows: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains('|'))
            .collect();
        assert_eq!(rows.len(), 5 * 4, "{}", r.all());
        for row in rows {
            assert!(!row.contains("n/a"), "{row}");
        }
    }
}
