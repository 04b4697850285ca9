//! `npu-emu smi`: the node's devices, memory and processes, laid out like `npu-smi info`.
//!
//! Read through the machine's own accounting ([`Node::usage`], [`Node::mem_info`]), so what it
//! shows is what `aclrtGetMemInfo` reports to programs. This process joins the node to read
//! it but is left out of the process table.

use crate::args::{failure, CliResult};
use npu_emu::config::Config;
use npu_emu::node::{Node, ProcessUsage};

const MB: u64 = 1 << 20;

/// Options of `npu-emu smi` (none).
#[derive(clap::Args, Debug)]
pub struct SmiArgs {}

/// What `smi` accepts, for an unknown-option message.
pub const OPTIONS: &str = "no options";

pub fn main(_args: SmiArgs) -> CliResult<()> {
    let cfg = Config::from_env().map_err(|e| failure(e.msg))?;
    let node = Node::open(&cfg).map_err(|e| {
        failure(format!(
            "cannot open the node {}: {}",
            cfg.node_dir.display(),
            e.msg
        ))
    })?;
    let me = std::process::id();
    let procs: Vec<ProcessUsage> = node.usage().into_iter().filter(|p| p.pid != me).collect();
    let devices: Vec<Device> = (0..node.devices())
        .map(|d| {
            let (free, total) = node.mem_info(d);
            Device {
                id: d,
                used: total.saturating_sub(free),
                total,
            }
        })
        .collect();
    print!(
        "{}",
        render(
            &cfg.soc_name,
            &cfg.node_dir.display().to_string(),
            &devices,
            &procs
        )
    );
    Ok(())
}

/// One device's memory, in bytes.
pub struct Device {
    pub id: u32,
    pub used: u64,
    pub total: u64,
}

/// Bytes in MB (MiB), rounded to the nearest; anything in use shows as at least 1.
fn mb(bytes: u64) -> u64 {
    match (bytes + MB / 2) / MB {
        0 if bytes > 0 => 1,
        n => n,
    }
}

/// The table, memory in MB (MiB).
pub fn render(soc: &str, node_dir: &str, devices: &[Device], procs: &[ProcessUsage]) -> String {
    const W: [usize; 4] = [7, 22, 9, 36];
    let line = |ch: char| {
        let mut s = String::from("+");
        for w in W {
            s.push_str(&ch.to_string().repeat(w + 2));
            s.push('+');
        }
        s.push('\n');
        s
    };
    let row = |cells: [&str; 4]| {
        let mut s = String::from("|");
        for (c, w) in cells.iter().zip(W) {
            s.push_str(&format!(" {c:<w$} |"));
        }
        s.push('\n');
        s
    };
    let total_w: usize = W.iter().map(|w| w + 3).sum::<usize>() - 1;
    let mut out = String::new();
    out.push_str(&format!("+{}+\n", "-".repeat(total_w)));
    let title = format!(
        "npu-emu smi {}    node: {node_dir}",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(&format!("| {title:<w$} |\n", w = total_w - 2));
    out.push_str(&line('-'));
    out.push_str(&row(["NPU", "Name", "Health", "HBM-Usage(MB)"]));
    out.push_str(&line('='));
    for d in devices {
        out.push_str(&row([
            &d.id.to_string(),
            soc,
            "OK",
            &format!("{} / {}", mb(d.used), d.total / MB),
        ]));
    }
    out.push_str(&line('-'));
    out.push_str(&row(["NPU", "Process id", "Memory", "Process name"]));
    out.push_str(&row(["", "", "(MB)", ""]));
    out.push_str(&line('='));
    let mut any = false;
    for d in devices {
        for p in procs {
            let bytes = p.bytes.get(d.id as usize).copied().unwrap_or(0);
            if bytes == 0 {
                continue;
            }
            any = true;
            out.push_str(&row([
                &d.id.to_string(),
                &p.pid.to_string(),
                &mb(bytes).to_string(),
                &p.name,
            ]));
        }
    }
    if !any {
        let msg = "No running processes found on any NPU";
        out.push_str(&format!("| {msg:<w$} |\n", w = total_w - 2));
    }
    out.push_str(&line('-'));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_devices_and_processes() {
        let devs = [
            Device {
                id: 0,
                used: 3 * MB,
                total: 64 << 30,
            },
            Device {
                id: 1,
                used: 0,
                total: 64 << 30,
            },
        ];
        let procs = [ProcessUsage {
            pid: 42,
            name: "prog".into(),
            bytes: vec![3 * MB - 5, 0],
        }];
        let t = render("Ascend910B1", "/dev/shm/x", &devs, &procs);
        assert!(
            t.contains("| 0       | Ascend910B1            | OK        | 3 / 65536"),
            "{t}"
        );
        assert!(
            t.contains("| 0       | 42                     | 3         | prog"),
            "{t}"
        );
        assert!(!t.contains("No running"), "{t}");
        let t = render("Ascend910B1", "/dev/shm/x", &devs, &[]);
        assert!(t.contains("No running processes"), "{t}");
    }
}
