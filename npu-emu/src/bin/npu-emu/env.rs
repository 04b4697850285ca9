//! `npu-emu env [--prefix DIR]`: the lines of `set_env.sh` (abi.md §4.3, 8.5 flavour).

use crate::args::CliResult;
use crate::paths;
use std::path::{Path, PathBuf};

/// Options of `npu-emu env`.
#[derive(clap::Args, Debug)]
pub struct EnvArgs {
    /// The install tree (default: the tree this binary belongs to).
    #[arg(long, value_name = "DIR")]
    pub prefix: Option<PathBuf>,
}

/// What `env` accepts, for an unknown-option message.
pub const OPTIONS: &str = "--prefix DIR";

pub fn main(args: EnvArgs) -> CliResult<()> {
    let prefix = args.prefix;
    let prefix = match prefix {
        Some(p) => paths::absolute(&p)?,
        None => paths::default_prefix()?,
    };
    print!("{}", set_env_script(&prefix));
    Ok(())
}

/// Quote `s` for a POSIX shell. (Written here: single-quoting is the whole rule, shorter than
/// a dependency such as `shell-escape`.)
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The text of `set_env.sh` for an install in `prefix` (absolute). Sourcing it twice does not
/// add the directories to the search paths twice.
pub fn set_env_script(prefix: &Path) -> String {
    let p = prefix.display().to_string();
    let q = |sub: &str| shell_quote(&format!("{p}{sub}"));
    let mut s = String::new();
    s.push_str(&format!(
        "# npu-emu {} environment, like CANN's set_env.sh. Use: source {}\n",
        env!("CARGO_PKG_VERSION"),
        q("/set_env.sh")
    ));
    for (var, sub) in [
        ("ASCEND_HOME_PATH", ""),
        ("ASCEND_TOOLKIT_HOME", ""),
        ("ASCEND_OPP_PATH", "/opp"),
        ("ASCEND_AICPU_PATH", ""),
        ("TOOLCHAIN_HOME", "/toolkit"),
    ] {
        s.push_str(&format!("export {var}={}\n", q(sub)));
    }
    for (var, sub) in [
        ("LD_LIBRARY_PATH", "/lib64"),
        ("PATH", "/bin"),
        // `import hccl` (CANN's set_env.sh puts python/site-packages there too).
        ("PYTHONPATH", "/python/site-packages"),
        // find_package(tikicpulib) of the Ascend C CPU-debug build (CANN 8.5 has it after
        // lib64/cmake; each line prepends, so it comes first here).
        ("CMAKE_PREFIX_PATH", "/tools/tikicpulib/lib/cmake"),
        ("CMAKE_PREFIX_PATH", "/lib64/cmake"),
    ] {
        let dir = q(sub);
        s.push_str(&format!(
            "case \":${{{var}:-}}:\" in *:{dir}:*) ;; *) export {var}={dir}${{{var}:+\":${var}\"}} ;; esac\n"
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/opt/npu-emu"), "/opt/npu-emu");
        assert_eq!(shell_quote("/a b"), "'/a b'");
        assert_eq!(shell_quote("/it's"), r"'/it'\''s'");
    }

    #[test]
    fn script_lines() {
        let s = set_env_script(Path::new("/opt/x"));
        assert!(s.contains("export ASCEND_HOME_PATH=/opt/x\n"), "{s}");
        assert!(s.contains("export ASCEND_OPP_PATH=/opt/x/opp\n"), "{s}");
        assert!(s.contains("*:/opt/x/lib64:*"), "{s}");
    }
}
