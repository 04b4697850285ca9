//! The `npu-emu` tool: `install` (the CANN-like tree, `set_env.sh`, building and running a
//! program against it with the plain vendor commands), `env`, and `smi` while other processes
//! hold device memory.

use npu_emu_tests::{node_dir, npu_emu_bin, root, run, scratch, Run};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

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
