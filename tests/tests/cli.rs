//! The `npu-emu` tool: `install` (the CANN-like tree, `set_env.sh`, building and running a
//! program against it with the plain vendor commands), `env`, and `smi` while other processes
//! hold device memory.

use npu_emu_tests::{command, compile, node_dir, npu_emu_bin, root, run, scratch, Run};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Install into `work/inst` and return the prefix.
fn install(work: &Path) -> PathBuf {
    let prefix = work.join("inst");
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--prefix"]).arg(&prefix);
    let r = run(c);
    r.assert_ok();
    assert!(r.stdout.contains("npu-emu installed in"), "{}", r.all());
    prefix
}

/// Run a bash script with `prefix`'s set_env.sh sourced first, on `work`'s private node.
fn bash(prefix: &Path, work: &Path, script: &str) -> Run {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!(
            "set -euo pipefail\nsource '{}/set_env.sh'\n{script}",
            prefix.display()
        ))
        .env("NPU_EMU_NODE_DIR", node_dir(work))
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("ASCEND_HOME_PATH")
        .current_dir(work);
    run(c)
}

/// Removes a test's private node when the test ends, also when it fails.
struct NodeGuard(PathBuf);

impl Drop for NodeGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(node_dir(&self.0));
    }
}

fn link_target(p: &Path) -> String {
    std::fs::read_link(p)
        .unwrap_or_else(|e| panic!("{} is not a symlink: {e}", p.display()))
        .display()
        .to_string()
}

#[test]
fn install_lays_out_a_cann_like_tree() {
    let work = scratch("cli-install");
    let p = install(&work);
    for f in [
        "include/acl/acl.h",
        "include/acl/acl_rt.h",
        "include/acl/error_codes/rt_error_codes.h",
        "include/hccl/hccl.h",
        "include/hccl/hccl_types.h",
        "set_env.sh",
    ] {
        assert!(p.join(f).is_file(), "missing {f}");
    }
    // The headers are copies of headers/include.
    let ours = std::fs::read(root().join("headers/include/acl/acl_rt.h")).unwrap();
    assert_eq!(std::fs::read(p.join("include/acl/acl_rt.h")).unwrap(), ours);
    // Libraries: real files, the 8.5 second names as symlinks to them (one object each).
    for l in ["libascendcl.so", "libhccl.so"] {
        let m = std::fs::symlink_metadata(p.join("lib64").join(l)).unwrap();
        assert!(
            m.file_type().is_file(),
            "lib64/{l} should be a regular file"
        );
        assert_eq!(
            std::fs::read(p.join("lib64").join(l)).unwrap(),
            std::fs::read(npu_emu_tests::lib_dir().join(l)).unwrap(),
            "lib64/{l} differs from the built library"
        );
    }
    assert_eq!(link_target(&p.join("lib64/libacl_rt.so")), "libascendcl.so");
    assert_eq!(link_target(&p.join("lib64/libhcomm.so")), "libhccl.so");
    // The tool itself.
    let bin = p.join("bin/npu-emu");
    assert!(bin.is_file());
    let mut c = Command::new(&bin);
    c.arg("--version");
    let r = run(c);
    r.assert_ok();
    assert!(r.stdout.starts_with("npu-emu "), "{}", r.stdout);
    // Compatibility paths.
    assert_eq!(link_target(&p.join("runtime/include")), "../include");
    assert_eq!(link_target(&p.join("runtime/lib64")), "../lib64");
    assert!(p.join("runtime/include/acl/acl.h").is_file());
    assert!(p.join("runtime/lib64/stub/libascendcl.so").is_file());
    assert!(p.join("runtime/lib64/stub/libhccl.so").is_file());
    let arch = format!("{}-linux", std::env::consts::ARCH);
    assert_eq!(link_target(&p.join(&arch).join("include")), "../include");
    assert_eq!(link_target(&p.join(&arch).join("lib64")), "../lib64");
    assert!(p.join(&arch).join("lib64/libascendcl.so").is_file());
    assert_eq!(
        link_target(&p.join(&arch).join("tikcpp")),
        "../compiler/tikcpp"
    );
    assert!(p
        .join(&arch)
        .join("tikcpp/ascendc_kernel_cmake/ascendc.cmake")
        .is_file());
    assert!(p.join("lib64/libmsprofiler.so").exists());
    assert!(p.join("lib64/libacl_tdt_queue.so").exists());
    // The operator packages' libraries, which the operator sources' build pages link by path.
    for pkg in ["math", "nn", "cv", "transformer"] {
        let l = p.join(format!("lib64/libopapi_{pkg}.so"));
        assert_eq!(link_target(&l), "libnnopbase.so");
        assert!(l.is_file());
    }
    assert!(p.join("include/acl/acl_tdt_queue.h").is_file());

    // Installing again over the same prefix works, also from the installed copy of the tool.
    install(&work);
    let mut c = Command::new(&bin);
    c.args(["install", "--quiet", "--prefix"]).arg(&p);
    run(c).assert_ok();
    let mut c = Command::new(&bin);
    c.args(["install", "--quiet", "--prefix"])
        .arg(work.join("second"));
    run(c).assert_ok();
    assert!(work.join("second/lib64/libhccl.so").is_file());
    assert!(work.join("second/include/hccl/hccl.h").is_file());

    // Something in the way of a symlink is reported, never deleted.
    let blocked = work.join("blocked");
    std::fs::create_dir_all(blocked.join("runtime/include")).unwrap();
    std::fs::write(blocked.join("runtime/include/keep"), "x").unwrap();
    let mut c = Command::new(npu_emu_bin());
    c.args(["install", "--prefix"]).arg(&blocked);
    let r = run(c);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr
            .contains("runtime/include -> ../include: a file or directory is in the way"),
        "{}",
        r.stderr
    );
    assert!(blocked.join("runtime/include/keep").is_file());

    let r = run({
        let mut c = Command::new(npu_emu_bin());
        c.arg("install");
        c
    });
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("npu-emu install: missing --prefix DIR"),
        "{}",
        r.stderr
    );
}

#[test]
fn set_env_sh_exports_the_cann_variables() {
    let work = scratch("cli-setenv");
    let p = install(&work);
    let ps = p.display().to_string();
    // Sourcing twice (as .bashrc users do) must not repeat the directories.
    let r = bash(
        &p,
        &work,
        &format!(
            "source '{ps}/set_env.sh'\nfor v in ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_OPP_PATH \
             ASCEND_AICPU_PATH TOOLCHAIN_HOME LD_LIBRARY_PATH PATH CMAKE_PREFIX_PATH; do echo \"$v=${{!v}}\"; done\n\
             command -v npu-emu"
        ),
    );
    r.assert_ok();
    let var = |name: &str| {
        r.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("{name} not printed:\n{}", r.stdout))
            .to_string()
    };
    assert_eq!(var("ASCEND_HOME_PATH"), ps);
    assert_eq!(var("ASCEND_TOOLKIT_HOME"), ps);
    assert_eq!(var("ASCEND_AICPU_PATH"), ps);
    assert_eq!(var("ASCEND_OPP_PATH"), format!("{ps}/opp"));
    assert_eq!(var("TOOLCHAIN_HOME"), format!("{ps}/toolkit"));
    assert_eq!(var("LD_LIBRARY_PATH"), format!("{ps}/lib64"));
    let path = var("PATH");
    assert!(path.starts_with(&format!("{ps}/bin:")), "{path}");
    assert_eq!(path.matches(&format!("{ps}/bin")).count(), 1, "{path}");
    assert!(var("CMAKE_PREFIX_PATH").starts_with(&format!("{ps}/lib64/cmake")));
    assert!(
        r.stdout.trim_end().ends_with(&format!("{ps}/bin/npu-emu")),
        "{}",
        r.stdout
    );

    // An existing LD_LIBRARY_PATH is kept after ours.
    let r = bash(&p, &work, "echo $LD_LIBRARY_PATH");
    r.assert_ok();
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!("source '{ps}/set_env.sh'; echo $LD_LIBRARY_PATH"))
        .env("LD_LIBRARY_PATH", "/x/lib");
    let r = run(c);
    assert_eq!(r.stdout.trim(), format!("{ps}/lib64:/x/lib"));
}

#[test]
fn a_program_builds_against_the_install_with_the_vendor_commands_and_runs() {
    let work = scratch("cli-build");
    let _node = NodeGuard(work.clone());
    let p = install(&work);
    let src = root().join("tests/c/cli_install.c");
    let src = src.display();
    // 8.5 style, the classic stub style, and the 8.5 library name.
    let r = bash(
        &p,
        &work,
        &format!(
            "gcc -std=c11 -Wall -Werror {src} -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lascendcl -o a\n\
             gcc -std=c11 -Wall -Werror {src} -I$ASCEND_HOME_PATH/runtime/include -L$ASCEND_HOME_PATH/runtime/lib64/stub -lascendcl -o b\n\
             gcc -std=c11 -Wall -Werror {src} -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lacl_rt -o c\n\
             ./a\n./b\n./c\n\
             ldd ./a | grep libascendcl"
        ),
    );
    r.assert_ok();
    assert_eq!(
        r.stdout
            .matches("install ok: 8 devices, round trip of 65536 bytes")
            .count(),
        3,
        "{}",
        r.all()
    );
    // The program found the installed library through set_env.sh's LD_LIBRARY_PATH.
    let ldd = r.stdout.lines().last().unwrap();
    assert!(
        ldd.contains(&format!("{}/lib64/libascendcl.so", p.display())),
        "{ldd}"
    );

    // (C++ with hccl/hccl.h and -lhccl against the install: tests/tests/samples.rs.)
}

/// A `cli_hold` process holding memory; its stdin keeps it alive.
struct Holder {
    child: Child,
    meminfo: Vec<(u32, u64, u64)>,
}

fn hold(exe: &Path, work: &Path, specs: &[&str]) -> Holder {
    let mut c = command(exe, work);
    c.args(specs)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = c.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut meminfo = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "cli_hold ended before ready"
        );
        if line.trim() == "ready" {
            break;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.first(), Some(&"meminfo"), "cli_hold: {line}");
        meminfo.push((
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        ));
    }
    child.stdout = Some(out.into_inner());
    Holder { child, meminfo }
}

impl Holder {
    fn finish(mut self) {
        drop(self.child.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(self.child.stdout.as_mut().unwrap(), &mut rest).unwrap();
        let st = self.child.wait().unwrap();
        assert!(st.success(), "cli_hold failed: {rest}");
        assert!(rest.contains("done"), "{rest}");
    }
}

/// The tables of `npu-emu smi`: device rows (id, used MB, total MB) and process rows
/// (device, pid, MB, name).
type SmiTables = (Vec<(u32, u64, u64)>, Vec<(u32, u32, u64, String)>);

fn smi(work: &Path) -> SmiTables {
    let mut c = command(&npu_emu_bin(), work);
    c.arg("smi");
    let r = run(c);
    r.assert_ok();
    let mut devices = Vec::new();
    let mut procs = Vec::new();
    let mut in_procs = false;
    for l in r.stdout.lines() {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        if cells.len() < 5 {
            continue;
        }
        if cells[2] == "Process id" {
            in_procs = true;
            continue;
        }
        let Ok(id) = cells[1].parse::<u32>() else {
            continue;
        };
        if in_procs {
            procs.push((
                id,
                cells[2].parse().unwrap(),
                cells[3].parse().unwrap(),
                cells[4].to_string(),
            ));
        } else {
            assert_eq!(cells[2], "Ascend910B1", "{l}");
            assert_eq!(cells[3], "OK", "{l}");
            let (used, total) = cells[4].split_once(" / ").unwrap();
            devices.push((id, used.parse().unwrap(), total.parse().unwrap()));
        }
    }
    assert_eq!(devices.len(), 8, "{}", r.stdout);
    (devices, procs)
}

#[test]
fn smi_shows_the_memory_each_process_holds() {
    let work = scratch("cli-smi");
    let _node = NodeGuard(work.clone());
    let exe = compile(&["cli_hold.c"], &work.join("cli_hold"), &["ascendcl"], &[]);
    let (devs, procs) = smi(&work);
    assert!(procs.is_empty(), "fresh node has processes: {procs:?}");
    assert!(
        devs.iter()
            .all(|&(_, used, total)| used == 0 && total == 65536),
        "{devs:?}"
    );

    let a = hold(&exe, &work, &["0:64", "1:32"]);
    // B starts after A is ready, so its aclrtGetMemInfo sees both.
    let b = hold(&exe, &work, &["0:16"]);
    let (pa, pb) = (a.child.id(), b.child.id());
    let (devs, procs) = smi(&work);
    let mut mine: Vec<(u32, u32, u64)> = procs
        .iter()
        .filter(|p| p.1 == pa || p.1 == pb)
        .map(|p| (p.0, p.1, p.2))
        .collect();
    mine.sort();
    let mut want = vec![(0, pa, 64), (1, pa, 32), (0, pb, 16)];
    want.sort();
    assert_eq!(mine, want, "process table {procs:?}");
    assert!(procs.iter().all(|p| p.3 == "cli_hold"), "{procs:?}");
    assert_eq!(devs[0].1, 80, "device 0 {devs:?}");
    assert_eq!(devs[1].1, 32, "device 1 {devs:?}");
    assert!(devs[2..].iter().all(|d| d.1 == 0), "{devs:?}");
    // The process rows add up to the device totals.
    for d in 0..8u32 {
        let sum: u64 = procs.iter().filter(|p| p.0 == d).map(|p| p.2).sum();
        assert_eq!(sum, devs[d as usize].1, "device {d}: {procs:?} vs {devs:?}");
    }
    // smi reads the same accounting programs see through aclrtGetMemInfo.
    let (dev, used, total) = b.meminfo[0];
    assert_eq!(dev, 0);
    assert_eq!(total, 64 << 30);
    assert_eq!(
        (used + (1 << 19)) >> 20,
        80,
        "B's aclrtGetMemInfo used {used}"
    );

    b.finish();
    let (devs, procs) = smi(&work);
    assert!(procs.iter().all(|p| p.1 != pb), "{procs:?}");
    assert_eq!(devs[0].1, 64, "{devs:?}");
    a.finish();
    let (devs, procs) = smi(&work);
    assert!(procs.is_empty(), "{procs:?}");
    assert!(devs.iter().all(|d| d.1 == 0), "{devs:?}");
}

#[test]
fn env_prints_the_set_env_lines() {
    let work = scratch("cli-env");
    let p = install(&work);
    let mut c = Command::new(npu_emu_bin());
    c.args(["env", "--prefix"]).arg(&p);
    let r = run(c);
    r.assert_ok();
    assert_eq!(
        r.stdout,
        std::fs::read_to_string(p.join("set_env.sh")).unwrap()
    );
    assert!(r
        .stdout
        .contains(&format!("export ASCEND_HOME_PATH={}\n", p.display())));

    // Paths that need quoting are quoted.
    let mut c = Command::new(npu_emu_bin());
    c.args(["env", "--prefix=/opt/my npu"]);
    let r = run(c);
    r.assert_ok();
    assert!(
        r.stdout.contains("export ASCEND_HOME_PATH='/opt/my npu'\n"),
        "{}",
        r.stdout
    );

    // Without --prefix: the tree the tool belongs to.
    let r = run({
        let mut c = Command::new(p.join("bin/npu-emu"));
        c.arg("env");
        c
    });
    r.assert_ok();
    assert!(
        r.stdout
            .contains(&format!("export ASCEND_HOME_PATH={}\n", p.display())),
        "{}",
        r.stdout
    );

    let r = run({
        let mut c = Command::new(npu_emu_bin());
        c.args(["env", "--frob"]);
        c
    });
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("unknown option \"--frob\""),
        "{}",
        r.stderr
    );
}

#[test]
fn unknown_commands_and_help() {
    let r = run({
        let mut c = Command::new(npu_emu_bin());
        c.arg("frob");
        c
    });
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("npu-emu: unknown command \"frob\""),
        "{}",
        r.stderr
    );
    let r = run({
        let mut c = Command::new(npu_emu_bin());
        c.arg("--help");
        c
    });
    r.assert_ok();
    for w in [
        "install --prefix DIR",
        "env [--prefix DIR]",
        "smi",
        "run -n N",
    ] {
        assert!(r.stdout.contains(w), "{}", r.stdout);
    }
    let _ = std::io::stdout().flush();
}
