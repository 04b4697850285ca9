//! `npu-emu`: the command-line tool of the emulated Ascend NPU machine.
//!
//! ```text
//! npu-emu install --prefix DIR        lay out a CANN-like tree (include/, lib64/, set_env.sh …)
//! npu-emu env [--prefix DIR]          print the set_env.sh lines
//! npu-emu ascendc-stub --out-dir OUT SRC...   aclrtlaunch_<kernel>.h + launch code of
//!                                     Ascend C kernels (see `ascendc.rs`)
//! npu-emu smi                         show devices, memory and processes like `npu-smi info`
//! npu-emu run -n N [--devices LIST] [--timeout SECS] PROGRAM ARGS…
//!                                     launch N ranks with RANK_ID, RANK_SIZE, ASCEND_DEVICE_ID
//!                                     and a rank table (RANK_TABLE_FILE)
//! ```
//!
//! Argument parsing is hand-written (std only); every error names the option and what was
//! expected, and exits with code 2.

mod args;
mod ascendc;
mod cc;
mod env;
mod install;
mod paths;
mod run;
mod smi;

use std::process::ExitCode;

const USAGE: &str = "\
npu-emu: the emulated Ascend NPU machine

Usage:
  npu-emu install --prefix DIR
      Lay out a CANN-like tree in DIR: include/{acl,hccl}, lib64/{libascendcl.so,libhccl.so,
      libacl_rt.so,libhcomm.so}, bin/npu-emu, set_env.sh, and the compatibility paths
      runtime/include, runtime/lib64, runtime/lib64/stub, <arch>-linux/{include,lib64}.
  npu-emu env [--prefix DIR]
      Print the lines of DIR/set_env.sh (default: the tree this binary belongs to).
  npu-emu smi
      Show the node's devices, their memory and the processes using them (like npu-smi info).
  npu-emu run -n N [--devices LIST] [--timeout SECS] PROGRAM [ARGS...]
      Start N ranks of PROGRAM with RANK_ID, RANK_SIZE, ASCEND_DEVICE_ID, RANK_TABLE_FILE and
      NPU_EMU_JOB_ID set; prefix their output with [rank R]; stop all ranks when one fails.
      --devices 4,5,6,7   device of each rank (default: rank i uses device i)
      --timeout SECS      stop the job and fail after SECS seconds
  npu-emu ascendc-stub --out-dir OUT [--include-dir DIR] [-I DIR]... SRC.cpp...
      Generate the launch stubs of the Ascend C kernels defined in each SRC, as CANN's
      build does: DIR/aclrtlaunch_<kernel>.h (default OUT/include) for the host, and
      OUT/<src>.npuemu.cpp, which compiled with g++ -std=c++17 against the tikcfw headers
      gives the kernel library. -I: where to look for quoted includes (tiling structs).
  npu-emu help | --help | -h
      Show this text.
  npu-emu --version
      Show the version.
";

fn main() -> ExitCode {
    // Started as bin/ccec or bin/bisheng: the Ascend C compiler driver (cc.rs).
    if let Some(code) = cc::dispatch() {
        return code;
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = argv.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &argv[1..];
    let result = match cmd.as_str() {
        "install" => install::main(rest),
        "ascendc-stub" => ascendc::main(rest),
        "env" => env::main(rest),
        "smi" => smi::main(rest),
        "run" => return run::main(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        "--version" | "-V" | "version" => {
            println!("npu-emu {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        other => Err(args::usage_error(format!(
            "unknown command {other:?}; expected one of install, env, smi, run, ascendc-stub, help"
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let known = ["install", "env", "smi", "run", "ascendc-stub"].contains(&cmd.as_str());
            let who = if known {
                format!("npu-emu {cmd}")
            } else {
                "npu-emu".to_string()
            };
            eprintln!("{who}: {}", e.msg);
            if e.usage {
                eprintln!("Run `npu-emu --help` for usage.");
            }
            ExitCode::from(e.code)
        }
    }
}
