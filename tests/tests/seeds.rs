//! The seed documents' host programs (`samples/distributed_add`, document 000, and
//! `samples/distributed_training`, document 003) and the opt-in compatibility layer for their
//! HCCL dialect (`headers/compat`).
//!
//! - Each sample is copied to a scratch tree laid out like the repository (`samples/<name>`,
//!   with `headers/` linked to the repository's), built with its own Makefile after
//!   `source set_env.sh` of a fresh install, and run through `npu-emu run` at 2 and 8 ranks;
//!   the tests check the exit codes and every rank's verdict, and that a deliberately wrong
//!   input (`--wrong-rank`) makes the job fail.
//! - The documents' code compiled against the REAL headers alone fails, naming the dialect's
//!   names (hcclInit, hcclAllReduce, hcclBroadcast, get_data_type_size, HCCL_SUM), as it does
//!   against CANN's; with the layer ahead of them it compiles.
//! - `hcclInit`: bad arguments (rank >= size, ...), no job id, ranks disagreeing on the size,
//!   two groups at once and a group formed again, a stale rendezvous file of an exited process.

use npu_emu_tests::{
    include_dir, installed_bash, lib_dir, node_dir, npu_emu_bin, root, run, scratch, Run,
};
use std::path::{Path, PathBuf};
use std::process::Command;

fn compat_dir() -> PathBuf {
    root().join("headers/compat/include")
}

/// A scratch tree with an install in `inst/`, `headers` linked to the repository's, and copies
/// of the given samples under `samples/`.
struct Tree {
    work: PathBuf,
    prefix: PathBuf,
}

impl Tree {
    fn new(name: &str, samples: &[&str]) -> Tree {
        let work = scratch(name);
        let prefix = work.join("inst");
        let mut c = Command::new(npu_emu_bin());
        c.args(["install", "--quiet", "--prefix"]).arg(&prefix);
        run(c).assert_ok();
        std::os::unix::fs::symlink(root().join("headers"), work.join("headers")).unwrap();
        for s in samples {
            let src = root().join("samples").join(s);
            let dst = work.join("samples").join(s);
            std::fs::create_dir_all(&dst).unwrap();
            for e in std::fs::read_dir(&src).unwrap() {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                let source = [".cpp", ".h", ".inc", ".md"]
                    .iter()
                    .any(|x| name.ends_with(x))
                    || name == "Makefile";
                if p.is_file() && source {
                    std::fs::copy(&p, dst.join(&name)).unwrap();
                }
            }
        }
        Tree { work, prefix }
    }

    /// Run a bash script after `source set_env.sh`, in the scratch tree, on a private node,
    /// with nothing of the caller's NPU environment.
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

/// Every rank's lines of a launcher run, in order.
fn rank_lines(r: &Run, rank: usize) -> Vec<&str> {
    let prefix = format!("[rank {rank}] ");
    r.stdout
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect()
}

#[test]
fn distributed_training_sample_passes_at_2_and_8_ranks() {
    let t = Tree::new("seed-training", &["distributed_training"]);
    let r = t.bash("make -C samples/distributed_training");
    r.assert_ok();
    for (n, args, root_rank, elems) in [(2, "", 0, 65536), (8, "--root 5 --count 5000", 5, 5000)] {
        let r = t.bash(&format!(
            "npu-emu run -n {n} samples/distributed_training/distributed_training {args}"
        ));
        r.assert_ok();
        for rank in 0..n {
            let lines = rank_lines(&r, rank);
            // The document's own log lines, in the document's order.
            let init = format!("Device {rank} (Rank {rank}) distributed environment initialized.");
            let order = [
                init.as_str(),
                "Gradient AllReduce completed.",
                "Model parallel data transfer completed.",
            ];
            let pos: Vec<Option<usize>> = order
                .iter()
                .map(|w| lines.iter().position(|l| l == w))
                .collect();
            assert!(
                pos.iter().all(|p| p.is_some()) && pos.windows(2).all(|w| w[0] < w[1]),
                "rank {rank}: {order:?} not all printed in order:\n{}",
                r.all()
            );
            // The sum over ranks r of (r + 1) * (1 + i % 16), and the root's pattern.
            let s = n * (n + 1) / 2;
            let grad = format!(
                "rank {rank}: gradient AllReduce (sum over ranks, fp16, in place): ok [{} {} {} {} ...]",
                s,
                2 * s,
                3 * s,
                4 * s
            );
            assert!(lines.contains(&grad.as_str()), "{grad}\n{}", r.all());
            let b = root_rank * 64;
            let bcast = format!(
                "rank {rank}: broadcast from rank {root_rank} (recvBuffer): ok [{} {} {} {} ...]",
                b,
                b + 1,
                b + 2,
                b + 3
            );
            assert!(lines.contains(&bcast.as_str()), "{bcast}\n{}", r.all());
            let pass = format!(
                "rank {rank}: PASS ({n} ranks, {elems} fp16 elements: gradient AllReduce and broadcast from rank {root_rank})"
            );
            assert!(lines.contains(&pass.as_str()), "{pass}\n{}", r.all());
        }
        assert!(!r.all().contains("FAIL"), "{}", r.all());
    }
    // Its own `make run`.
    let r = t.bash("make -C samples/distributed_training run RANKS=3");
    r.assert_ok();
    assert_eq!(count(&r.stdout, ": PASS (3 ranks"), 3, "{}", r.all());
}

#[test]
fn distributed_training_sample_fails_on_a_wrong_gradient() {
    let t = Tree::new("seed-training-wrong", &["distributed_training"]);
    let r = t.bash(
        "make -C samples/distributed_training\n\
         npu-emu run -n 2 samples/distributed_training/distributed_training --count 100 --wrong-rank 1",
    );
    assert_ne!(r.code, Some(0), "{}", r.all());
    // Rank 1's extra 1 in element 50 shows on every rank: 3 * (1 + 50 % 16) + 1 = 10. The
    // launcher stops the other rank as soon as one fails, so only the first surely reports.
    let fails: Vec<usize> = (0..2)
        .filter(|rank| {
            r.stdout.contains(&format!(
                "[rank {rank}] rank {rank}: gradient AllReduce (sum over ranks, fp16, in place): FAIL: 1 of 100 elements wrong; element 50 is 10, expected 9"
            ))
        })
        .collect();
    assert!(!fails.is_empty(), "{}", r.all());
    assert_eq!(
        count(&r.stdout, "in place): FAIL"),
        fails.len(),
        "{}",
        r.all()
    );
    assert!(r.stderr.contains("npu-emu run: job failed"), "{}", r.all());
    assert!(!r.stdout.contains(": PASS"), "{}", r.all());
}

/// g++ with the given include directories (in order), `-fsyntax-only`.
fn syntax_check(src: &Path, includes: &[PathBuf]) -> Run {
    let mut c = Command::new("g++");
    c.env("LC_ALL", "C").args(["-std=c++17", "-fsyntax-only"]);
    for i in includes {
        c.arg(format!("-I{}", i.display()));
    }
    c.arg(src);
    run(c)
}

#[test]
fn seed_sources_are_rejected_by_the_real_headers_and_accepted_with_the_compat_layer() {
    // Document 003: the sample's main.cpp, which includes the document's code.
    let training = root().join("samples/distributed_training/main.cpp");
    let r = syntax_check(&training, &[include_dir()]);
    assert_ne!(r.code, Some(0), "{}", r.all());
    for name in [
        "'hcclInit' was not declared",
        "'hcclAllReduce' was not declared",
        "'hcclBroadcast' was not declared",
        "'get_data_type_size' was not declared",
    ] {
        assert!(r.stderr.contains(name), "{name}:\n{}", r.stderr);
    }
    syntax_check(&training, &[compat_dir(), include_dir()]).assert_ok();

    // Document 000: RunDistributedFlow with the declarations it assumes.
    let flow = root().join("tests/c/seeds/flow_000.cpp");
    let sample = root().join("samples/distributed_add");
    let r = syntax_check(&flow, &[include_dir(), sample.clone()]);
    assert_ne!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains("'HCCL_SUM' was not declared"),
        "{}",
        r.stderr
    );
    // The real name is the only error: HcclAllReduce itself is real CANN.
    assert_eq!(count(&r.stderr, "error:"), 1, "{}", r.stderr);
    syntax_check(&flow, &[compat_dir(), include_dir(), sample]).assert_ok();

    // The layer refuses C with a message, rather than half-working.
    let work = scratch("seed-compat-c");
    let c_src = work.join("c.c");
    std::fs::write(
        &c_src,
        "#include \"hccl/hccl.h\"\nint main(void) { return 0; }\n",
    )
    .unwrap();
    let mut c = Command::new("gcc");
    c.env("LC_ALL", "C")
        .arg("-fsyntax-only")
        .arg(format!("-I{}", compat_dir().display()))
        .arg(format!("-I{}", include_dir().display()))
        .arg(&c_src);
    let r = run(c);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("is C++ only"), "{}", r.stderr);
}

/// Builds tests/c/seeds/dialect_init.cpp with the layer ahead of the real headers.
fn dialect_program(work: &Path) -> PathBuf {
    let out = work.join("dialect_init");
    let mut c = Command::new("g++");
    c.args(["-std=c++17", "-g", "-O1", "-Wall", "-Werror", "-pthread"])
        .arg(format!("-I{}", compat_dir().display()))
        .arg(format!("-I{}", include_dir().display()))
        .arg(root().join("tests/c/seeds/dialect_init.cpp"))
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", lib_dir().display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
        .args(["-lhccl", "-lascendcl"]);
    let o = c.output().expect("run g++");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// `prog args` on the scratch node, without any launcher variables.
fn direct(prog: &Path, work: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(prog);
    c.args(args)
        .env("NPU_EMU_NODE_DIR", node_dir(work))
        .env("LD_LIBRARY_PATH", lib_dir())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .env_remove("RANK_ID")
        .env_remove("RANK_SIZE")
        .env_remove("RANK_TABLE_FILE")
        .env_remove("ASCEND_DEVICE_ID")
        .env_remove("NPU_EMU_JOB_ID")
        .current_dir(work);
    c
}

/// `npu-emu run -n N prog args` on the scratch node.
fn launch(prog: &Path, work: &Path, n: usize, args: &[&str]) -> Run {
    let mut c = direct(&npu_emu_bin(), work, &["run", "-n", &n.to_string()]);
    c.arg(prog).args(args);
    run(c)
}

struct Node(PathBuf);
impl Drop for Node {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(node_dir(&self.0));
    }
}

#[test]
fn hcclinit_rejects_bad_arguments_with_hccl_e_para() {
    let work = scratch("seed-init-args");
    let _node = Node(work.clone());
    let prog = dialect_program(&work);
    let r = run(direct(&prog, &work, &["bad-args"]));
    r.assert_ok();
    for msg in [
        "hcclInit: rank 2 is out of range for size 2: expected 0..1",
        "hcclInit: rank -1 is out of range for size 2: expected 0..1",
        "hcclInit: size 0 is invalid",
        "hcclInit: comm is NULL",
        "hcclInit: group is NULL",
        "hcclInit: group name \"a/b\" is invalid",
        "hcclInit: group name \"\" is invalid",
        "hcclInit: NPU_EMU_JOB_ID \"bad/id\" is invalid",
        "hcclInit: HCCL_CONNECT_TIMEOUT \"soon\" is invalid: expected seconds from 1 to 7200",
    ] {
        assert!(r.stderr.contains(msg), "{msg}:\n{}", r.all());
    }
    // The codes: HCCL_E_PARA = 1, HCCL_E_PTR = 2.
    assert!(
        r.stdout.contains("rank 2 size 2: 1 (expected 1)"),
        "{}",
        r.all()
    );
    assert!(
        r.stdout.contains("NULL comm: 2 (expected 2)"),
        "{}",
        r.all()
    );

    // Outside the launcher a group of 2 needs a job id; a group of 1 does not.
    let r = run(direct(&prog, &work, &["no-job"]));
    r.assert_ok();
    assert!(
        r.stderr.contains(
            "hcclInit: rank 0 of group \"g\" (size 2) cannot find its peers: NPU_EMU_JOB_ID is not set"
        ),
        "{}",
        r.all()
    );
    assert!(
        r.stdout.contains("solo: rank 0/1 allreduce ok"),
        "{}",
        r.all()
    );
    for msg in [
        "hcclBroadcast: sendBuf is NULL on the root (rank 0)",
        "hcclAllReduce: dataType 13 (aclDataType) has no HCCL equivalent",
        "hcclBroadcast: dataType 12 (aclDataType) has no HCCL equivalent",
        "get_data_type_size: dataType 13 has no size in bytes",
    ] {
        assert!(r.stderr.contains(msg), "{msg}:\n{}", r.all());
    }
    assert!(r.stdout.contains("dialect_init: ok"), "{}", r.all());
}

#[test]
fn hcclinit_forms_a_group_of_threads_in_one_process() {
    let work = scratch("seed-init-threads");
    let _node = Node(work.clone());
    let prog = dialect_program(&work);
    let mut c = direct(&prog, &work, &["threads"]);
    c.env("NPU_EMU_JOB_ID", "threads-job");
    let r = run(c);
    r.assert_ok();
    assert_eq!(
        count(&r.stdout, "allreduce ok (element 0 = 3, expected 3)"),
        2,
        "{}",
        r.all()
    );
    assert!(r.stdout.contains("dialect_init: ok"), "{}", r.all());
}

#[test]
fn hcclinit_times_out_when_rank_0_never_comes() {
    let work = scratch("seed-init-noroot");
    let _node = Node(work.clone());
    let prog = dialect_program(&work);
    let mut c = direct(&npu_emu_bin(), &work, &["run", "-n", "2"]);
    c.arg(&prog).arg("no-root").env("HCCL_CONNECT_TIMEOUT", "1");
    let r = run(c);
    r.assert_ok();
    // HCCL_E_TIMEOUT = 9.
    assert!(
        r.stdout
            .contains("[rank 1] hcclInit without rank 0: 9 (expected 9)"),
        "{}",
        r.all()
    );
    assert!(
        r.stderr.contains("hcclInit: rank 1 of group \"g\" (size 2) timed out after 1 s (HCCL_CONNECT_TIMEOUT) waiting for rank 0"),
        "{}",
        r.all()
    );
}

#[test]
fn hcclinit_reports_ranks_that_disagree_on_the_size() {
    let work = scratch("seed-init-mismatch");
    let _node = Node(work.clone());
    let prog = dialect_program(&work);
    let r = launch(&prog, &work, 2, &["mismatch"]);
    assert_ne!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stdout
            .contains("[rank 1] rank 1: size mismatch reported as HCCL_E_PARA"),
        "{}",
        r.all()
    );
    assert!(
        r.stderr
            .contains("hcclInit: rank 1 of group \"g\" was called with size 3, but rank 0 (pid ")
            && r.stderr
                .contains(") with size 2: every rank of a group must pass the same size"),
        "{}",
        r.all()
    );
}

#[test]
fn hcclinit_forms_groups_by_name_again_and_again() {
    let work = scratch("seed-init-groups");
    let _node = Node(work.clone());
    let prog = dialect_program(&work);
    for n in [2, 4] {
        let r = launch(&prog, &work, n, &["groups"]);
        r.assert_ok();
        assert_eq!(count(&r.stdout, "dialect_init: ok"), n, "{}", r.all());
        let sum = n * (n + 1) / 2;
        for (group, salt) in [("group_a", 0), ("group_b", 10), ("group_a again", 100)] {
            let line = format!(
                "{group}: rank 0/{n} allreduce ok (element 0 = {}, expected",
                sum + n * salt
            );
            assert!(r.stdout.contains(&line), "{line}\n{}", r.all());
        }
    }
    // The launcher removed the job directories (and the rendezvous files with them).
    let jobs = node_dir(&work).join("jobs");
    assert!(
        !jobs.exists() || std::fs::read_dir(&jobs).unwrap().next().is_none(),
        "left over: {:?}",
        std::fs::read_dir(&jobs).map(|d| d.count())
    );
}

#[test]
fn hcclinit_ignores_a_stale_file_of_an_exited_process() {
    // Ranks started by hand with the same NPU_EMU_JOB_ID (as under mpirun), after a record
    // left by a dead process of an earlier job that used the same id.
    let work = scratch("seed-init-stale");
    let _node = Node(work.clone());
    let prog = dialect_program(&work);
    let dir = node_dir(&work).join("jobs/reused-id");
    std::fs::create_dir_all(&dir).unwrap();
    run(direct(&prog, &work, &["plant", dir.to_str().unwrap()])).assert_ok();
    let mut children = Vec::new();
    for rank in [1, 0] {
        let mut c = direct(&prog, &work, &["stale"]);
        c.env("RANK_ID", rank.to_string())
            .env("RANK_SIZE", "2")
            .env("NPU_EMU_JOB_ID", "reused-id");
        children.push(std::thread::spawn(move || run(c)));
    }
    for h in children {
        let r = h.join().unwrap();
        r.assert_ok();
        assert!(r.stdout.contains("g: rank "), "{}", r.all());
        assert!(
            r.stdout
                .contains("allreduce ok (element 0 = 3, expected 3)"),
            "{}",
            r.all()
        );
    }
    assert!(!dir.join("hcclInit.g.0").exists());
}

#[test]
fn distributed_add_sample_passes_at_2_and_8_ranks() {
    let t = Tree::new("seed-add", &["distributed_add"]);
    let r = t.bash("make -C samples/distributed_add");
    r.assert_ok();
    // The launch header the generator wrote, as CANN's build writes it.
    let h = std::fs::read_to_string(
        t.work
            .join("samples/distributed_add/build/include/aclrtlaunch_add_custom.h"),
    )
    .unwrap();
    assert!(h.contains("aclrtlaunch_add_custom("), "{h}");
    for n in [2, 8] {
        let r = t.bash(&format!(
            "npu-emu run -n {n} samples/distributed_add/distributed_add"
        ));
        r.assert_ok();
        // sum over r of 2(r + 1) = n(n + 1): 6 at 2 ranks, 72 at 8.
        let v = n * (n + 1);
        for rank in 0..n {
            let lines = rank_lines(&r, rank);
            let z = format!("rankId: {rank}, z: [ {v} {v} {v} {v} {v} {v} {v} {v} ... ]");
            assert!(lines.contains(&z.as_str()), "{z}\n{}", r.all());
            let pass = format!(
                "rank {rank}: PASS (add_custom on 8 AI cores, then HcclAllReduce sum of 16384 fp16 over {n} ranks: every element is {v})"
            );
            assert!(lines.contains(&pass.as_str()), "{pass}\n{}", r.all());
        }
        assert!(!r.all().contains("FAIL"), "{}", r.all());
    }
    // Its own `make run` (2 ranks by default).
    let r = t.bash("make -C samples/distributed_add run");
    r.assert_ok();
    assert_eq!(count(&r.stdout, "every element is 6)"), 2, "{}", r.all());
}

#[test]
fn distributed_add_sample_fails_when_one_rank_adds_wrong_data() {
    let t = Tree::new("seed-add-wrong", &["distributed_add"]);
    let r = t.bash(
        "make -C samples/distributed_add\n\
         npu-emu run -n 2 samples/distributed_add/distributed_add --wrong-rank 1",
    );
    assert_ne!(r.code, Some(0), "{}", r.all());
    // Rank 1 adds 3 + 2 instead of 2 + 2: every element is 7 on both ranks. The launcher stops
    // the other rank as soon as one fails, so only the first to finish surely reports.
    let fails: Vec<usize> = (0..2)
        .filter(|rank| {
            r.stdout.contains(&format!(
                "[rank {rank}] rank {rank}: FAIL: 16384 of 16384 elements wrong; element 0 is 7, expected 6"
            ))
        })
        .collect();
    assert!(!fails.is_empty(), "{}", r.all());
    assert_eq!(count(&r.stdout, ": FAIL"), fails.len(), "{}", r.all());
    assert!(r.stderr.contains("npu-emu run: job failed"), "{}", r.all());
    assert!(!r.stdout.contains(": PASS"), "{}", r.all());
}

/// True when `extracted` is `restored` with some whitespace deleted, i.e. `restored` only adds
/// whitespace (line breaks, indentation, spaces) to the text as extracted.
fn only_whitespace_added(extracted: &str, restored: &str) -> Result<(), String> {
    let want: Vec<char> = extracted.trim_end().chars().collect();
    let mut i = 0;
    for (at, c) in restored.trim_end().char_indices() {
        if i < want.len() && c == want[i] {
            i += 1;
        } else if !c.is_whitespace() {
            return Err(format!(
                "restored text differs at byte {at}: {:?}",
                &restored[at..(at + 60).min(restored.len())]
            ));
        }
    }
    if i == want.len() {
        Ok(())
    } else {
        Err(format!(
            "extracted text not all present: missing from {:?}",
            want[i..].iter().take(60).collect::<String>()
        ))
    }
}

#[test]
fn seed_code_in_the_samples_is_the_documents_text_with_only_whitespace_restored() {
    // tests/c/seeds/*_as_extracted.txt are the documents' code lines exactly as extracted
    // (line breaks and spaces lost); the samples' .inc files must differ only in whitespace.
    // (That the restored line breaks end each `//` comment where it should is checked by the
    // samples compiling and passing.)
    for (extracted, restored) in [
        (
            "tests/c/seeds/seed_000_as_extracted.txt",
            "samples/distributed_add/seed_000_run_distributed_flow.inc",
        ),
        (
            "tests/c/seeds/seed_003_as_extracted.txt",
            "samples/distributed_training/seed_003_distributed_training.inc",
        ),
    ] {
        let e = std::fs::read_to_string(root().join(extracted)).unwrap();
        let r = std::fs::read_to_string(root().join(restored)).unwrap();
        if let Err(why) = only_whitespace_added(&e, &r) {
            panic!("{restored}: {why}");
        }
    }
    // The check itself: a changed character or a dropped space is caught.
    assert!(only_whitespace_added("int a=1;", "int a = 1;").is_ok());
    assert!(only_whitespace_added("int a=1;", "int a = 2;").is_err());
    assert!(only_whitespace_added("// x y", "// xy").is_err());
}
