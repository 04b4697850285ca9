//! Emulated servers on one machine, for tests of HCCL across hosts: each host is a network
//! namespace with its own address (`10.201.0.<i+1>/24` on `eth0`), its own host name
//! (`npuemu-h<i>`, in a private UTS namespace) and its own npu-emu node directory; the hosts
//! are joined by veth links to a bridge in one more namespace, like servers on a switch.
//! Everything is removed when the [`Hosts`] value is dropped (processes still running in the
//! namespaces are killed first).
//!
//! Creating namespaces needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2's `ip`.
//! CI runs as root; where that is missing, [`Hosts::create`] panics with a message saying
//! so: a test that needs hosts fails loudly rather than skip silently.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A set of emulated hosts.
pub struct Hosts {
    tag: String,
    n: usize,
    /// Node directory of each host.
    nodes: Vec<PathBuf>,
}

fn ip_cmd(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip` (iproute2): {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(())
}

/// Namespaces left by earlier test processes that are gone (a killed test run).
fn remove_stale() {
    let Ok(o) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix("npuemu-") else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        // SAFETY: plain syscall probing a pid.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            kill_in(name);
            let _ = ip_cmd(&["netns", "del", name]);
        }
    }
}

/// Kill every process inside namespace `ns`.
fn kill_in(ns: &str) {
    if let Ok(o) = Command::new("ip").args(["netns", "pids", ns]).output() {
        for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
            if let Ok(p) = pid.parse::<i32>() {
                // SAFETY: plain syscall.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
    }
}

impl Hosts {
    /// Create `n` hosts for the test whose scratch directory is `work`. Panics, saying what
    /// is missing, when namespaces cannot be made.
    pub fn create(n: usize, work: &Path) -> Hosts {
        match Self::try_create(n, work) {
            Ok(h) => h,
            Err(e) => panic!(
                "this test needs emulated hosts (network namespaces joined by veth links), and they \
                 cannot be created here: {e}\nRun the tests as root (CI does), or with \
                 CAP_NET_ADMIN and CAP_SYS_ADMIN, with iproute2 installed."
            ),
        }
    }

    fn try_create(n: usize, work: &Path) -> Result<Hosts, String> {
        static K: AtomicU32 = AtomicU32::new(0);
        remove_stale();
        let tag = format!(
            "npuemu-{}-{}",
            std::process::id(),
            K.fetch_add(1, Ordering::Relaxed)
        );
        let wname = work.file_name().unwrap().to_string_lossy().to_string();
        let h = Hosts {
            tag,
            n,
            nodes: (0..n)
                .map(|i| PathBuf::from(format!("/dev/shm/npu-emu-test-{wname}-h{i}")))
                .collect(),
        };
        // From here on, Drop cleans up whatever was made.
        let br = h.bridge_ns();
        ip_cmd(&["netns", "add", &br])?;
        ip_cmd(&["-n", &br, "link", "set", "lo", "up"])?;
        ip_cmd(&["-n", &br, "link", "add", "br0", "type", "bridge"])?;
        ip_cmd(&["-n", &br, "link", "set", "br0", "up"])?;
        for i in 0..n {
            let ns = h.ns(i);
            ip_cmd(&["netns", "add", &ns])?;
            ip_cmd(&["-n", &ns, "link", "set", "lo", "up"])?;
            let v = format!("v{i}");
            ip_cmd(&[
                "-n", &br, "link", "add", &v, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            ip_cmd(&["-n", &br, "link", "set", &v, "master", "br0"])?;
            ip_cmd(&["-n", &br, "link", "set", &v, "up"])?;
            ip_cmd(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", h.ip(i)),
                "dev",
                "eth0",
            ])?;
            ip_cmd(&["-n", &ns, "link", "set", "eth0", "up"])?;
            let _ = std::fs::remove_dir_all(&h.nodes[i]);
        }
        Ok(h)
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn bridge_ns(&self) -> String {
        format!("{}-br", self.tag)
    }

    /// The network namespace of host `i`.
    pub fn ns(&self, i: usize) -> String {
        format!("{}-h{i}", self.tag)
    }

    /// Host `i`'s host name.
    pub fn name(&self, i: usize) -> String {
        format!("npuemu-h{i}")
    }

    /// Host `i`'s address.
    pub fn ip(&self, i: usize) -> String {
        format!("10.201.0.{}", i + 1)
    }

    /// Host `i`'s npu-emu node directory.
    pub fn node_dir(&self, i: usize) -> &Path {
        &self.nodes[i]
    }

    /// A command running `prog` on host `i` (its namespace and host name, its node
    /// directory), in `work`, with the built libraries on `LD_LIBRARY_PATH`.
    pub fn command(&self, i: usize, prog: &Path, work: &Path) -> Command {
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.ns(i),
            "unshare",
            "--uts",
            "--",
            "sh",
            "-c",
        ])
        .arg("hostname \"$0\" && exec \"$@\"")
        .arg(self.name(i))
        .arg(prog)
        .env("NPU_EMU_NODE_DIR", self.node_dir(i))
        .env("LD_LIBRARY_PATH", crate::lib_dir())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .current_dir(work);
        c
    }

    /// Kill every process running on host `i` (SIGKILL), as if the host went away.
    pub fn kill_all(&self, i: usize) {
        kill_in(&self.ns(i));
    }

    /// Take host `i`'s link to the switch down (`up` false) or up again.
    pub fn link(&self, i: usize, up: bool) {
        ip_cmd(&[
            "-n",
            &self.bridge_ns(),
            "link",
            "set",
            &format!("v{i}"),
            if up { "up" } else { "down" },
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    }

    /// A script usable as OpenMPI's `plm_rsh_agent` (its "ssh"): it runs the command it is
    /// given on the host named by its first argument (an address or a host name), with that
    /// host's node directory in `NPU_EMU_NODE_DIR`.
    pub fn rsh_agent(&self, dir: &Path) -> PathBuf {
        let mut cases = String::new();
        for i in 0..self.n {
            cases.push_str(&format!(
                "  {}|{}) ns={}; name={}; export NPU_EMU_NODE_DIR={} ;;\n",
                self.ip(i),
                self.name(i),
                self.ns(i),
                self.name(i),
                self.node_dir(i).display()
            ));
        }
        let script = format!(
            "#!/bin/sh\n# mpirun's \"ssh\" to an emulated host: run the command in its namespace.\n\
             host=$1; shift\ncase \"$host\" in\n{cases}  *) echo \"no emulated host $host\" >&2; exit 255 ;;\nesac\n\
             exec ip netns exec \"$ns\" unshare --uts -- sh -c 'hostname \"$0\" && exec sh -c \"$1\"' \"$name\" \"$*\"\n"
        );
        let p = dir.join("rsh-agent.sh");
        std::fs::write(&p, script).unwrap();
        let _ = Command::new("chmod").arg("+x").arg(&p).status();
        p
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for i in 0..self.n {
            kill_in(&self.ns(i));
        }
        for i in 0..self.n {
            let _ = ip_cmd(&["netns", "del", &self.ns(i)]);
            let _ = std::fs::remove_dir_all(&self.nodes[i]);
        }
        let _ = ip_cmd(&["netns", "del", &self.bridge_ns()]);
    }
}
