//! Hand-written argument parsing shared by the subcommands.

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

/// Options of a subcommand, read left to right. `--opt value` and `--opt=value` are both
/// accepted.
pub struct Args<'a> {
    args: &'a [String],
    pos: usize,
}

impl<'a> Args<'a> {
    pub fn new(args: &'a [String]) -> Self {
        Args { args, pos: 0 }
    }

    /// The next argument, if any, without consuming it.
    pub fn peek(&self) -> Option<&'a str> {
        self.args.get(self.pos).map(String::as_str)
    }

    /// Everything not consumed yet.
    pub fn rest(&self) -> &'a [String] {
        &self.args[self.pos..]
    }

    /// Consume the next argument, if it is an option: returns `(name, inline value)`;
    /// `--prefix=/x` gives `("--prefix", Some("/x"))`. `--` and non-options are not
    /// consumed (a lone `--` is consumed and ends the options: returns `None`).
    pub fn next_option(&mut self) -> Option<(&'a str, Option<&'a str>)> {
        let a = self.peek()?;
        if a == "--" {
            self.pos += 1;
            return None;
        }
        if !a.starts_with('-') || a == "-" {
            return None;
        }
        self.pos += 1;
        match a.split_once('=') {
            Some((name, v)) if a.starts_with("--") => Some((name, Some(v))),
            _ => Some((a, None)),
        }
    }

    /// The value of option `name`: the inline value or the next argument.
    pub fn value(&mut self, name: &str, inline: Option<&'a str>, what: &str) -> CliResult<&'a str> {
        if let Some(v) = inline {
            return Ok(v);
        }
        match self.args.get(self.pos) {
            Some(v) => {
                self.pos += 1;
                Ok(v)
            }
            None => Err(usage_error(format!("option {name} needs a value ({what})"))),
        }
    }

    /// Fail if anything is left.
    pub fn finish(&self) -> CliResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(a) => Err(usage_error(format!("unexpected argument {a:?}"))),
        }
    }
}

/// An unknown option.
pub fn unknown_option(name: &str, known: &str) -> CliError {
    usage_error(format!("unknown option {name:?}; expected {known}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_and_values() {
        let a = v(&["--prefix=/x", "-n", "4", "prog", "-n"]);
        let mut p = Args::new(&a);
        assert_eq!(p.next_option(), Some(("--prefix", Some("/x"))));
        assert_eq!(p.next_option(), Some(("-n", None)));
        assert_eq!(p.value("-n", None, "ranks").unwrap(), "4");
        assert_eq!(p.next_option(), None);
        assert_eq!(p.rest(), &v(&["prog", "-n"])[..]);
        let a = v(&["--", "-x"]);
        let mut p = Args::new(&a);
        assert_eq!(p.next_option(), None);
        assert_eq!(p.rest(), &v(&["-x"])[..]);
        let a = v(&["--prefix"]);
        let mut p = Args::new(&a);
        let (n, i) = p.next_option().unwrap();
        assert!(p
            .value(n, i, "a directory")
            .unwrap_err()
            .msg
            .contains("--prefix"));
    }
}
