//! Command-line errors shared by the subcommands, and the translation of `clap`'s parse
//! errors into the tool's own wording (every message names the option and what was
//! expected; a bad command line exits with code 2).

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// A failed command: the message printed after `npu-emu <cmd>: `, and the exit code.
#[derive(Debug)]
pub struct CliError {
    pub msg: String,
    pub code: u8,
    /// Print the `--help` hint (bad command line rather than a failure while working).
    pub usage: bool,
}

pub type CliResult<T> = Result<T, CliError>;

/// A bad command line (exit code 2).
pub fn usage_error(msg: impl Into<String>) -> CliError {
    CliError {
        msg: msg.into(),
        code: 2,
        usage: true,
    }
}

/// A failure while doing the work (exit code 1).
pub fn failure(msg: impl Into<String>) -> CliError {
    CliError {
        msg: msg.into(),
        code: 1,
        usage: false,
    }
}

/// An unknown option.
pub fn unknown_option(name: &str, known: &str) -> CliError {
    usage_error(format!("unknown option {name:?}; expected {known}"))
}

/// The subcommands, as `unknown command` lists them.
pub const COMMANDS: &str = "install, env, smi, run, ascendc-stub, help";

/// What the value of an option is, by the option's value name (`--prefix DIR`).
fn value_what(value_name: &str) -> &str {
    match value_name {
        "DIR" | "OUT" => "a directory",
        "N" => "the number of ranks",
        "LIST" => "a comma-separated list of device ids",
        "SECS" => "seconds",
        other => other,
    }
}

fn context(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => v.first().cloned(),
        _ => None,
    }
}

/// A `clap` parse error in the tool's wording. `options` lists what the subcommand accepts
/// ("--prefix DIR or --quiet"); `None` when no subcommand was recognised.
pub fn from_clap(e: &clap::Error, options: Option<&str>) -> CliError {
    let arg = context(e, ContextKind::InvalidArg);
    match (e.kind(), options, arg) {
        (ErrorKind::InvalidSubcommand, _, _) | (ErrorKind::UnknownArgument, None, _) => {
            let what = context(e, ContextKind::InvalidSubcommand)
                .or_else(|| context(e, ContextKind::InvalidArg))
                .unwrap_or_default();
            usage_error(format!(
                "unknown command {what:?}; expected one of {COMMANDS}"
            ))
        }
        (ErrorKind::UnknownArgument, Some(known), Some(a)) if a.starts_with('-') && a != "-" => {
            let name = match a.split_once('=') {
                Some((n, _)) if a.starts_with("--") => n,
                _ => &a,
            };
            unknown_option(name, known)
        }
        (ErrorKind::UnknownArgument, Some(_), Some(a)) => {
            usage_error(format!("unexpected argument {a:?}"))
        }
        // A missing value: clap names the option as "--prefix <DIR>".
        (ErrorKind::InvalidValue, _, Some(a))
            if context(e, ContextKind::InvalidValue).is_none_or(|v| v.is_empty()) =>
        {
            let (name, value) = a.split_once(' ').unwrap_or((&a, ""));
            let value = value.trim_matches(|c| c == '<' || c == '>');
            usage_error(format!(
                "option {name} needs a value ({})",
                value_what(value)
            ))
        }
        _ => {
            // Anything else: clap's own sentence, without its "error: " and hints.
            let r = e.render().to_string();
            let first = r.lines().next().unwrap_or_default();
            usage_error(first.trim_start_matches("error: "))
        }
    }
}
