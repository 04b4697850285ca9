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
//! Arguments are parsed by `clap` (derive): each subcommand's options are a struct beside
//! its code (`install::InstallArgs`, `run::RunArgs` …) and every subcommand answers `--help`.
//! `clap`'s parse errors are reworded in [`args::from_clap`] so every error names the option
//! and what was expected; a bad command line exits with code 2.

mod args;
mod ascendc;
mod cc;
mod env;
mod install;
mod nodes;
mod paths;
mod run;
mod smi;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// The overview `npu-emu --help` starts with: every subcommand's command line.
const USAGE: &str = "\
npu-emu install --prefix DIR
       npu-emu env [--prefix DIR]
       npu-emu smi
       npu-emu run -n N [--devices LIST] [--timeout SECS] PROGRAM [ARGS...]
       npu-emu ascendc-stub --out-dir OUT [--include-dir DIR] [-I DIR]... SRC.cpp...
       npu-emu help [COMMAND] | --help | --version";

/// npu-emu: the emulated Ascend NPU machine
#[derive(Parser, Debug)]
#[command(
    name = "npu-emu",
    version,
    override_usage = USAGE,
    after_help = "Run `npu-emu COMMAND --help` for the options of a command."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Lay out a CANN-like tree in DIR.
    ///
    /// DIR gets include/{acl,hccl,aclnn,aclnnop}, lib64/{libascendcl.so,libhccl.so,libacl_rt.so,
    /// libhcomm.so,...}, bin/npu-emu, set_env.sh, the Ascend C kernel headers, and the
    /// compatibility paths runtime/include, runtime/lib64, runtime/lib64/stub and
    /// <arch>-linux/{include,lib64}. Installing again updates the tree in place.
    #[command(args_override_self = true)]
    Install(install::InstallArgs),
    /// Print the lines of DIR/set_env.sh.
    ///
    /// DIR is --prefix, by default the tree this binary belongs to.
    #[command(args_override_self = true)]
    Env(env::EnvArgs),
    /// Show the node's devices, their memory and the processes using them (like npu-smi
    /// info).
    Smi(smi::SmiArgs),
    /// Start N ranks of PROGRAM on emulated NPUs.
    ///
    /// Each rank gets RANK_ID, RANK_SIZE, ASCEND_DEVICE_ID, RANK_TABLE_FILE and NPU_EMU_JOB_ID;
    /// its output lines are prefixed with [rank R]; when one rank fails the others are
    /// stopped. Everything after PROGRAM is passed to it untouched.
    Run(run::RunArgs),
    /// Generate the launch stubs of Ascend C kernels, as CANN's build does.
    ///
    /// For every kernel defined in each SRC (extern "C" __global__ __aicore__ void K(...)
    /// { ... }): DIR/aclrtlaunch_K.h (default OUT/include), the header CANN's build
    /// generates, and OUT/<src>.npuemu.cpp, the launch code: compile it with g++ -std=c++17
    /// -I<install>/compiler/tikcpp/tikcfw -I<install>/include and link -lascendcl. A source
    /// that launches its kernels with K<<<blockDim, l2ctrl, stream>>>(args) is carried into
    /// OUT/<src>.npuemu.cpp with those calls rewritten (#line keeps its file and lines).
    #[command(name = "ascendc-stub", args_override_self = true)]
    AscendcStub(ascendc::StubArgs),
    /// Show the version.
    #[command(hide = true)]
    Version,
    /// Become the reaper of the node in NPU_EMU_NODE_DIR (started by the runtime).
    #[command(hide = true)]
    Reap,
}

/// What the subcommand `name` accepts, for an unknown-option message; `None` if `name` is
/// no subcommand.
fn options_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "install" => install::OPTIONS,
        "env" => env::OPTIONS,
        "smi" => smi::OPTIONS,
        "run" => run::OPTIONS,
        "ascendc-stub" => ascendc::OPTIONS,
        _ => return None,
    })
}

fn main() -> ExitCode {
    // Started as bin/ccec or bin/bisheng: the Ascend C compiler driver (cc.rs).
    if let Some(code) = cc::dispatch() {
        return code;
    }
    let mut argv: Vec<String> = std::env::args().collect();
    let sub = argv.get(1).cloned().unwrap_or_default();
    if sub == "run" {
        run::normalize(&mut argv[2..]);
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let options = options_of(&sub);
            return report(options.map(|_| sub.as_str()), args::from_clap(&e, options));
        }
    };
    let result = match cli.cmd {
        None => {
            eprint!("{}", Cli::command().render_help());
            return ExitCode::from(2);
        }
        Some(Cmd::Install(a)) => install::main(a),
        Some(Cmd::AscendcStub(a)) => ascendc::main(a),
        Some(Cmd::Env(a)) => env::main(a),
        Some(Cmd::Smi(a)) => smi::main(a),
        Some(Cmd::Run(a)) => return run::main(a),
        Some(Cmd::Version) => {
            println!("npu-emu {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Some(Cmd::Reap) => match npu_emu::config::Config::from_env() {
            Ok(cfg) => {
                npu_emu::node::reaper::reap_main(&cfg);
                Ok(())
            }
            Err(_) => return ExitCode::from(2),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(Some(&sub), e),
    }
}

/// Print a failed command's message (`npu-emu <cmd>: …`) and give its exit code.
fn report(cmd: Option<&str>, e: args::CliError) -> ExitCode {
    let who = match cmd {
        Some(c) => format!("npu-emu {c}"),
        None => "npu-emu".to_string(),
    };
    eprintln!("{who}: {}", e.msg);
    if e.usage {
        eprintln!("Run `npu-emu --help` for usage.");
    }
    ExitCode::from(e.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Cli, args::CliError> {
        let mut argv: Vec<String> = std::iter::once("npu-emu")
            .chain(a.iter().copied())
            .map(String::from)
            .collect();
        if a.first() == Some(&"run") {
            run::normalize(&mut argv[2..]);
        }
        Cli::try_parse_from(argv).map_err(|e| args::from_clap(&e, options_of(a[0])))
    }

    #[test]
    fn options_and_values() {
        let Some(Cmd::Install(i)) = parse(&["install", "--prefix=/x", "-q"]).unwrap().cmd else {
            panic!("not install")
        };
        assert_eq!(i.prefix, Some("/x".into()));
        assert!(i.quiet);
        // Options end at PROGRAM; its arguments pass untouched, `--` included.
        let Some(Cmd::Run(r)) = parse(&["run", "-n", "4", "prog", "-n", "--", "x"])
            .unwrap()
            .cmd
        else {
            panic!("not run")
        };
        assert_eq!(r.ranks.as_deref(), Some("4"));
        assert_eq!(r.command, ["prog", "-n", "--", "x"]);
        let Some(Cmd::Run(r)) = parse(&["run", "-np", "2", "--", "-x"]).unwrap().cmd else {
            panic!("not run")
        };
        assert_eq!(
            (r.ranks.as_deref(), &r.command[..]),
            (Some("2"), &["-x".to_string()][..])
        );
        let e = parse(&["install", "--prefix"]).unwrap_err();
        assert_eq!(e.msg, "option --prefix needs a value (a directory)");
        let e = parse(&["env", "--frob=1"]).unwrap_err();
        assert_eq!(e.msg, "unknown option \"--frob\"; expected --prefix DIR");
        assert_eq!(e.code, 2);
        let e = parse(&["frob"]).unwrap_err();
        assert!(e.msg.starts_with("unknown command \"frob\""), "{}", e.msg);
    }

    #[test]
    fn every_subcommand_answers_help() {
        for sub in ["install", "env", "smi", "run", "ascendc-stub"] {
            let e = Cli::try_parse_from(["npu-emu", sub, "--help"]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{sub}");
        }
        Cli::command().debug_assert();
    }
}
