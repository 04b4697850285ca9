//! Memory API, small helpers and profiling of `libascendcl.so`, through real C/C++
//! programs (`tests/c/mem_*.c*`, `tests/c/helpers_*.c`, `tests/c/dummy_acl/`).

use npu_emu_tests::{command, compile, node_dir, run, scratch, Run};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Removes a test's private node directory from /dev/shm when dropped (also when the test
/// fails).
struct NodeGuard(PathBuf);

impl NodeGuard {
    fn new(work: &Path) -> NodeGuard {
        NodeGuard(node_dir(work))
    }
}

impl Drop for NodeGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compile `src` (in tests/c) into `work` and link it with libascendcl.
fn build(work: &Path, src: &str) -> PathBuf {
    let exe = work.join(Path::new(src).file_stem().unwrap());
    compile(
        &[src],
        &exe,
        &["ascendcl"],
        &["-Wno-deprecated-declarations"],
    )
}

/// Run `exe args` on the private node of `work`, then remove the node directory.
fn run_on_node(exe: &Path, work: &Path, args: &[&str]) -> Run {
    let mut c = command(exe, work);
    c.args(args);
    let r = run(c);
    let _ = std::fs::remove_dir_all(node_dir(work));
    r
}

#[test]
fn fp16_dtype_sizes_and_data_buffers() {
    let work = scratch("helpers_fp16");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "helpers_fp16.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("helpers ok"), "{}", r.all());
}

#[test]
fn every_copy_kind_2d_memset_and_async_streams() {
    let work = scratch("mem_copy");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_copy.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    for s in [
        "every kind ok",
        "2d ok",
        "memset ok",
        "async ok",
        "attributes ok",
        "mem_copy ok",
    ] {
        assert!(r.stdout.contains(s), "missing {s:?}:\n{}", r.all());
    }
}

/// `aclrtHostRegister`: the device address is real device memory that is the host memory
/// (D2D async copies and aclnn operators on it, writes seen through both pointers, host
/// bytes kept after unregistering), its error cases, and `ACL_RT_MEM_ATTR_VA_FLAG`.
#[test]
fn host_register_maps_host_memory_into_the_device() {
    let work = scratch("mem_host_register");
    let _node = NodeGuard::new(&work);
    let (exe, lib64) = npu_emu_tests::build_aclnn_hccl(&work, "tests/c/mem_host_register.cpp");
    let mut c = command(&exe, &work);
    c.env("LD_LIBRARY_PATH", &lib64);
    let r = run(c);
    r.assert_ok();
    assert!(r.stdout.contains("host register ok"), "{}", r.all());
}

#[test]
fn bad_input_codes_and_messages() {
    let work = scratch("mem_errors");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_errors.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("mem_errors ok"), "{}", r.all());
}

#[test]
fn malloc_rounding_visible_in_mem_info() {
    let work = scratch("mem_rounding");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_rounding.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("rounding ok"), "{}", r.all());
}

#[test]
fn threads_in_cpp() {
    let work = scratch("mem_threads");
    let _node = NodeGuard::new(&work);
    let exe = work.join("mem_threads");
    compile(&["mem_threads.cpp"], &exe, &["ascendcl"], &[]);
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("threads ok"), "{}", r.all());
}

#[test]
fn profiling_writes_an_honest_json_summary() {
    let work = scratch("helpers_prof");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "helpers_prof.c");
    let dir = work.join("prof-out");
    let r = run_on_node(&exe, &work, &[dir.to_str().unwrap()]);
    r.assert_ok();
    assert!(r.stdout.contains("prof ok"), "{}", r.all());
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("npu_emu_profile_") && name.ends_with(".json"),
        "{name}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert!(
        doc["note"]
            .as_str()
            .unwrap()
            .contains("NOT an msprof report"),
        "{doc}"
    );
    let calls = &doc["api_calls"];
    assert_eq!(calls["aclrtMemcpy"], 4, "{doc}");
    assert_eq!(calls["aclrtMemset"], 1, "{doc}");
    assert_eq!(calls["aclFloatToFloat16"], 1, "{doc}");
    // Calls before aclprofStart and after aclprofStop are not counted.
    assert!(calls.get("aclrtMalloc").is_none(), "{doc}");
    assert!(calls.get("aclrtFree").is_none(), "{doc}");
    assert_eq!(doc["sessions"], 2);
    assert_eq!(doc["configs"][1]["devices"][0], 1);
    assert_eq!(doc["configs"][0]["devices"][0], 0);
    assert_eq!(doc["counted_calls_total"], 6);
}

#[test]
fn host_dereference_of_device_memory_stops_the_process() {
    use std::os::unix::process::ExitStatusExt;
    let work = scratch("mem_fault");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_fault.c");
    for mode in ["read", "write"] {
        let out = command(&exe, &work).arg(mode).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let all = format!("{stdout}{stderr}");
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGSEGV),
            "{mode}: {:?}\n{all}",
            out.status
        );
        assert!(!stdout.contains("was not caught"), "{all}");
        let target = stdout
            .lines()
            .find_map(|l| l.strip_prefix("target="))
            .unwrap_or_else(|| panic!("no target line:\n{all}"))
            .trim()
            .to_string();
        let target_num = u64::from_str_radix(target.trim_start_matches("0x"), 16).unwrap();
        let lower = stderr.to_lowercase();
        assert!(
            lower.contains(&target.to_lowercase()),
            "address {target} not named:\n{all}"
        );
        // The allocation: its start address, its device and its size.
        let start = format!("{:#x}", target_num - 100);
        assert!(
            lower.contains(&start),
            "allocation start {start} not named:\n{all}"
        );
        assert!(lower.contains("device 1"), "device not named:\n{all}");
        assert!(
            lower.contains("4096") || lower.contains("4128"),
            "size not named:\n{all}"
        );
        assert!(lower.contains("host"), "{all}");
        assert!(lower.contains("device memory"), "{all}");
    }
}

/// Parse `free=<n> total=<n>`.
fn free_total(r: &Run) -> (u64, u64) {
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("free="))
        .unwrap_or_else(|| panic!("{}", r.all()));
    let mut it = line
        .split_whitespace()
        .map(|kv| kv.split('=').nth(1).unwrap().parse::<u64>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

fn rounded(n: u64) -> u64 {
    n.div_ceil(32) * 32 + 32
}

#[test]
fn two_processes_on_one_node_add_up() {
    let work = scratch("mem_proc");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_proc.c");
    let query = |dev: &str| {
        let mut c = command(&exe, &work);
        c.args(["query", dev]);
        let r = run(c);
        r.assert_ok();
        free_total(&r)
    };
    let (free0, total0) = query("0");
    let (free1, total1) = query("1");
    let holds: [(&str, u64); 3] = [("0", 3_000_001), ("0", 5_000_000), ("1", 7_340_033)];
    let mut children = Vec::new();
    for (dev, size) in holds {
        let mut c = command(&exe, &work);
        c.args(["hold", dev, &size.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "held", "child did not allocate");
        children.push((child, dev, size));
    }
    let (f0, t0) = query("0");
    let (f1, t1) = query("1");
    assert_eq!((t0, t1), (total0, total1));
    assert_eq!(
        free0 - f0,
        rounded(3_000_001) + rounded(5_000_000),
        "device 0"
    );
    assert_eq!(free1 - f1, rounded(7_340_033), "device 1");

    // `npu-emu smi` sees the same processes and bytes (if the CLI is built).
    let smi = npu_emu_tests::npu_emu_bin();
    if smi.exists() {
        let out = Command::new(&smi)
            .arg("smi")
            .env("NPU_EMU_NODE_DIR", node_dir(&work))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Device rows: "used / total" MB, the sum over the processes.
        for (dev, bytes) in [("0", free0 - f0), ("1", free1 - f1)] {
            let row = text
                .lines()
                .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
                .find(|c| c.len() > 4 && c[1] == dev && c[3] == "OK")
                .unwrap_or_else(|| panic!("no smi device row {dev}:\n{text}"));
            let used: u64 = row[4].split('/').next().unwrap().trim().parse().unwrap();
            assert!(
                (used << 20).abs_diff(bytes) < 1 << 20,
                "device {dev}:\n{text}"
            );
        }
        for (child, dev, size) in &children {
            let pid = child.id().to_string();
            let row = text
                .lines()
                .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
                .find(|c| c.len() > 4 && c[1] == *dev && c[2] == pid)
                .unwrap_or_else(|| panic!("no smi row for pid {pid} on device {dev}:\n{text}"));
            // smi shows whole MB (rounded): within 1 MB of the exact bytes.
            let shown: u64 = row[3].parse().unwrap();
            assert!(
                (shown << 20).abs_diff(rounded(*size)) < 1 << 20,
                "pid {pid}: {shown} MB for {} bytes:\n{text}",
                rounded(*size)
            );
        }
    }

    for (mut child, _, _) in children {
        use std::io::Write;
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(query("0").0, free0);
    assert_eq!(query("1").0, free1);
}

#[test]
fn ld_preload_and_ld_library_path_replace_a_dummy_library() {
    let work = scratch("mem_preload");
    let _node = NodeGuard::new(&work);
    let dummy_dir = work.join("dummy");
    std::fs::create_dir_all(&dummy_dir).unwrap();
    let c = npu_emu_tests::root().join("tests/c/dummy_acl");
    let st = Command::new("gcc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libascendcl.so", "-o"])
        .arg(dummy_dir.join("libascendcl.so"))
        .arg(c.join("dummy_acl.c"))
        .status()
        .unwrap();
    assert!(st.success());
    let prog = work.join("preload_prog");
    let o = Command::new("gcc")
        .arg(format!("-I{}", npu_emu_tests::include_dir().display()))
        .arg(c.join("preload_prog.c"))
        .arg("-o")
        .arg(&prog)
        .arg(format!("-L{}", dummy_dir.display()))
        .arg("-lascendcl")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = npu_emu_tests::lib_dir().join("libascendcl.so");

    // Against the dummy alone the program fails: it really is linked to the dummy.
    let mut cmd = command(&prog, &work);
    cmd.env("LD_LIBRARY_PATH", &dummy_dir);
    let r = run(cmd);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stdout.contains("dummy libascendcl.so"), "{}", r.all());

    // Ours in front with LD_PRELOAD.
    let mut cmd = command(&prog, &work);
    cmd.env("LD_LIBRARY_PATH", &dummy_dir)
        .env("LD_PRELOAD", &ours);
    let r = run(cmd);
    r.assert_ok();
    assert!(r.stdout.contains("preload ok"), "{}", r.all());

    // Ours found through LD_LIBRARY_PATH instead of the dummy.
    let r = run(command(&prog, &work)); // command() puts our lib dir on LD_LIBRARY_PATH
    r.assert_ok();
    assert!(r.stdout.contains("preload ok"), "{}", r.all());
}

#[test]
fn virtual_memory_reserve_map_copy_unmap() {
    let work = scratch("mem_vmm");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_vmm.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("vmm ok"), "{}", r.all());
}

#[test]
fn async_copy_into_memory_freed_before_it_runs_fails_at_synchronize() {
    let work = scratch("mem_async_errors");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_async_errors.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("async errors ok"), "{}", r.all());
}

#[test]
fn benchmark_program_builds_and_runs() {
    // The figures are printed, not checked (tests must not depend on timing).
    let work = scratch("mem_bench");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_bench.c");
    let r = run_on_node(&exe, &work, &["1"]);
    r.assert_ok();
    assert!(r.stdout.contains("aclrtMemcpyAsync 64 B"), "{}", r.all());
}

#[test]
fn batch_copies_with_attributes_and_fail_index() {
    let work = scratch("mem_batch");
    let _node = NodeGuard::new(&work);
    let exe = build(&work, "mem_batch.c");
    let r = run_on_node(&exe, &work, &[]);
    r.assert_ok();
    assert!(r.stdout.contains("batch ok"), "{}", r.all());
}
