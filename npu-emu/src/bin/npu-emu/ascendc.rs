//! `npu-emu ascendc-stub --out-dir OUT [--include-dir DIR] [-I DIR]... SRC...`: the launch
//! stubs of Ascend C kernels, as CANN's build generates them (contract: issue 4,
//! `notes/kernel_contract.md` §1 and §3).
//!
//! For every kernel *definition* (`extern "C" __global__ __aicore__ void K(...) { ... }`,
//! also without `extern "C"`, `__aicore__`/`__vector__` before or after `__global__`) in
//! each SRC it writes
//! - `INCLUDE_DIR/aclrtlaunch_K.h` (default `OUT/include`), the header CANN generates:
//!   `extern "C" uint32_t aclrtlaunch_K(uint32_t blockDim, aclrtStream stream, <params>);`
//!   where a global-memory pointer (`GM_ADDR p`, `__gm__ T *p`, any `T *p`) becomes
//!   `void* p`, a parameter whose type is a `struct` defined in SRC or a header it includes
//!   with `#include "…"` (a tiling struct) becomes a pointer to it (the host passes the
//!   struct's address; it is copied at the launch, as CANN does), and any other parameter
//!   keeps its type;
//! - `OUT/<stem>.npuemu.cpp`, which includes SRC and defines each `aclrtlaunch_K` over
//!   `npuemu_kernel_launch` (libascendcl) and `npuemu::run_block` (`npuemu/launch.h`).
//!
//! The source is read as text (no preprocessor): comments, string literals and preprocessor
//! lines are blanked first, so a kernel hidden behind a macro is not seen. Template kernels
//! are skipped with a note (CANN launches them through `<<<>>>` only).
//!
//! The kernel-call operator: when SRC itself launches kernels with
//! `K<<<blockDim, l2ctrl, stream>>>(args)` (the vendor AddKernelInvocation samples'
//! `add_custom_do`), which g++ cannot parse, `<stem>.npuemu.cpp` carries the text of SRC
//! instead of including it: after `#line 1 "SRC"` (diagnostics and `__LINE__` name the
//! user's file and lines), each such call outside comments, strings and preprocessor lines
//! rewritten in place to a launch through `aclrtlaunch_K` (blockDim and stream used, l2ctrl
//! evaluated and ignored: CANN reserves it, "暂时设置为固定值nullptr"; a template kernel
//! `K<T><<<...>>>` gets a launch generic over the instantiation), and `#include "x"`
//! lines whose x exists next to SRC made absolute. The call is a statement with no value,
//! as in CANN; a launch error is recorded for `aclGetRecentErrMsg` and fails the stream's
//! next synchronize (`npuemu_kernel_launch_async_error`). K must be a kernel defined in
//! SRC, or (non-template) declared in SRC and defined in another source generated for the
//! same library (its `aclrtlaunch_K` is then the other file's), or a template kernel
//! defined or declared in SRC; anything else is an error naming SRC:line.

use crate::args::{failure, usage_error, CliError, CliResult};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Options of `npu-emu ascendc-stub`.
#[derive(clap::Args, Debug)]
pub struct StubArgs {
    /// Where the launch code goes.
    #[arg(short = 'o', long = "out-dir", value_name = "OUT")]
    pub out_dir: Option<PathBuf>,
    /// Where the aclrtlaunch_<kernel>.h headers go (default OUT/include).
    #[arg(long = "include-dir", value_name = "DIR")]
    pub include_dir: Option<PathBuf>,
    /// Also look here for headers included with quotes (to find tiling structs).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// The Ascend C sources.
    #[arg(value_name = "SRC.cpp")]
    pub srcs: Vec<PathBuf>,
}

/// What `ascendc-stub` accepts, for an unknown-option message.
pub const OPTIONS: &str = "--out-dir DIR, --include-dir DIR or -I DIR";

pub fn main(args: StubArgs) -> CliResult<()> {
    let StubArgs {
        out_dir: out,
        include_dir: inc_out,
        include: inc_dirs,
        srcs,
    } = args;
    let out = out.ok_or_else(|| usage_error("missing --out-dir DIR"))?;
    if srcs.is_empty() {
        return Err(usage_error(
            "no kernel source given: expected one or more Ascend C files (SRC.cpp ...)",
        ));
    }
    let out = crate::paths::absolute(&out)?;
    let inc_out = match inc_out {
        Some(d) => crate::paths::absolute(&d)?,
        None => out.join("include"),
    };
    generate(&out, &inc_out, &inc_dirs, &srcs)
}

fn io_err(what: &str, p: &Path, e: std::io::Error) -> CliError {
    failure(format!("cannot {what} {}: {e}", p.display()))
}

/// Generate the stubs of `srcs`; returns the kernels found, per source.
pub fn generate(
    out: &Path,
    inc_out: &Path,
    inc_dirs: &[PathBuf],
    srcs: &[PathBuf],
) -> CliResult<()> {
    fs::create_dir_all(out).map_err(|e| io_err("create directory", out, e))?;
    fs::create_dir_all(inc_out).map_err(|e| io_err("create directory", inc_out, e))?;
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut stems: BTreeSet<String> = BTreeSet::new();
    for src in srcs {
        let src = crate::paths::absolute(src)?;
        let text = fs::read_to_string(&src).map_err(|e| io_err("read", &src, e))?;
        let structs = struct_names(&src, &text, inc_dirs);
        let parsed = parse_kernels(&text, &structs)
            .map_err(|e| failure(format!("{}: {e}", src.display())))?;
        // Kernel calls may launch the kernels defined here, or declared here and defined in
        // another source (whose generated file defines aclrtlaunch_K).
        let mut callable = parsed.kernels.clone();
        for d in &parsed.declared {
            if !callable.iter().any(|k| k.name == d.name) {
                callable.push(d.clone());
            }
        }
        let chevrons = find_chevrons(&text, &callable, &parsed.templates).map_err(|e| {
            failure(format!(
                "{}:{}",
                src.display(),
                e.trim_start_matches("line ")
            ))
        })?;
        let mut chevrons = chevrons;
        for c in &mut chevrons {
            c.cube = parsed.cube_templates.contains(&c.name);
        }
        for note in &parsed.notes {
            // (a template kernel launched here with <<<>>> needs no note)
            let launched_here = chevrons
                .iter()
                .any(|c| note.starts_with(&format!("template kernel {}:", c.name)));
            if !launched_here {
                eprintln!("npu-emu ascendc-stub: {}: note: {note}", src.display());
            }
        }
        let traps = find_asm_traps(&text);
        if parsed.kernels.is_empty() && chevrons.is_empty() {
            return Err(failure(format!(
                "{}: no kernel found: expected a definition like `extern \"C\" __global__ \
                 __aicore__ void my_kernel(GM_ADDR x, GM_ADDR y) {{ ... }}` (declarations \
                 without a body do not count)",
                src.display()
            )));
        }
        let stem = src
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "kernel".into());
        let mut unique = stem.clone();
        let mut n = 2;
        while !stems.insert(unique.clone()) {
            unique = format!("{stem}_{n}");
            n += 1;
        }
        let cpp_path = out.join(format!("{unique}.npuemu.cpp"));
        let mut cpp = format!(
            "// Generated by npu-emu ascendc-stub from {}: do not edit.\n\
             // Compile this file (not the kernel source) with the Ascend C headers of npu-emu.\n",
            src.display()
        );
        let launched: BTreeSet<String> = chevrons
            .iter()
            .filter(|c| c.template.is_none())
            .map(|c| c.name.clone())
            .collect();
        let templated = chevrons.iter().any(|c| c.template.is_some());
        if chevrons.is_empty() && traps.is_empty() {
            cpp.push_str(&format!(
                "#include \"{}\"\n",
                c_escape(&src.display().to_string())
            ));
        } else {
            // The source itself, its kernel calls rewritten (see `find_chevrons`).
            cpp.push_str(&format!(
                "// {} kernel call{} `<<<...>>>` rewritten to launches through aclrtlaunch_<kernel>, {} asm(\"trap\") to ::trap().\n",
                chevrons.len(),
                if chevrons.len() == 1 { "" } else { "s" },
                traps.len()
            ));
            cpp.push_str(&chevron_decls(&launched));
            if templated {
                cpp.push_str(TEMPLATE_CHEVRON_DECL);
            }
            cpp.push_str(&format!(
                "#line 1 \"{}\"\n",
                c_escape(&src.display().to_string())
            ));
            let dir = src.parent().map(Path::to_path_buf).unwrap_or_default();
            // A UTF-8 byte-order mark is only allowed at the start of a file: drop it.
            cpp.push_str(
                rewrite_source(&text, &chevrons, &traps, &dir).trim_start_matches('\u{feff}'),
            );
            let next = cpp.matches('\n').count() + 2;
            cpp.push_str(&format!(
                "#line {next} \"{}\"\n",
                c_escape(&cpp_path.display().to_string())
            ));
        }
        cpp.push_str(
            "#include \"npuemu/launch.h\"\n\
             #include \"acl/acl_base.h\"\n\
             #include <cstdio>\n\n\
             extern \"C\" uint32_t npuemu_kernel_launch_null_arg(const char *kernel_name, const char *arg);\n\
             extern \"C\" void npuemu_kernel_launch_async_error(const char *kernel_name, uint32_t code, void *stream);\n",
        );
        for k in &parsed.kernels {
            if let Some(prev) = seen.insert(k.name.clone(), src.clone()) {
                return Err(failure(format!(
                    "kernel {} is defined twice: in {} and in {}; aclrtlaunch_{} can only \
                     launch one of them",
                    k.name,
                    prev.display(),
                    src.display(),
                    k.name
                )));
            }
            let header = inc_out.join(format!("aclrtlaunch_{}.h", k.name));
            write_file(&header, &header_text(k))?;
            cpp.push_str(&launch_text(k, &header));
            if launched.contains(&k.name) {
                cpp.push_str(&chevron_impl(k));
            }
        }
        for k in callable[parsed.kernels.len()..]
            .iter()
            .filter(|k| launched.contains(&k.name))
        {
            // Declared here, defined (and its aclrtlaunch_K generated) in another source.
            cpp.push_str(&format!(
                "\n// ---- kernel {} (defined in another source) ----\nextern \"C\" {};\n",
                k.name,
                signature(k)
            ));
            cpp.push_str(&chevron_impl(k));
        }
        if templated {
            cpp.push_str(TEMPLATE_CHEVRON_IMPL);
        }
        cpp.push_str(&fatbin_table(&parsed.kernels));
        // Always written: it is the output build tools compare with the source's time.
        fs::write(&cpp_path, &cpp).map_err(|e| io_err("write", &cpp_path, e))?;
    }
    Ok(())
}

/// Write `text` to `path` unless it already holds exactly that (a regenerated header that
/// did not change does not make build tools recompile the host code that includes it).
fn write_file(path: &Path, text: &str) -> CliResult<()> {
    if fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|e| io_err("write", path, e))
}

fn c_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Name in the kernel (generated as `argN` when the source has none).
    pub name: String,
    /// Type as written (for the cast back to the kernel's type).
    pub ty: String,
    pub kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Global-memory pointer: `void*` in the launch function.
    Pointer,
    /// A struct defined in the sources (tiling data): `T*` in the launch function, copied.
    Struct,
    /// Anything else: passed by value with its own type.
    Value,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// `Some("ns::")` when declared in a namespace.
    pub scope: String,
    pub params: Vec<Param>,
    /// Declared `__cube__`: its blocks take the AIC branch (`ASCEND_IS_AIC`).
    pub cube: bool,
}

#[derive(Debug, Default)]
pub struct Parsed {
    pub kernels: Vec<Kernel>,
    /// Kernels only declared here (`__global__ __aicore__ void k(...);`, non-template), for
    /// kernel calls `k<<<...>>>` of a kernel defined in another source of the library.
    pub declared: Vec<Kernel>,
    /// Template kernels defined or declared here (launched through `K<T><<<...>>>` only).
    pub templates: Vec<String>,
    /// The template kernels among them declared `__cube__`.
    pub cube_templates: Vec<String>,
    pub notes: Vec<String>,
}

/// Blank comments, string and character literals (kept as `""` / `' '`) and, when
/// `directives` is false, preprocessor lines. Line structure is kept.
fn strip(src: &str, directives: bool) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if line_start && !directives {
            // A preprocessor line (with continuations) is dropped.
            let mut j = i;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            if j < b.len() && b[j] == b'#' {
                while j < b.len() && b[j] != b'\n' {
                    if b[j] == b'\\' && j + 2 < b.len() && b[j + 1] == b'\r' && b[j + 2] == b'\n' {
                        // CRLF continuation
                        out.push('\n');
                        j += 2;
                    } else if b[j] == b'\\' && j + 1 < b.len() && b[j + 1] == b'\n' {
                        out.push('\n');
                        j += 1;
                    } else if b[j] == b'/' && j + 1 < b.len() && b[j + 1] == b'*' {
                        // a block comment inside a directive: skip it whole
                        j += 2;
                        while j + 1 < b.len() && !(b[j] == b'*' && b[j + 1] == b'/') {
                            if b[j] == b'\n' {
                                out.push('\n');
                            }
                            j += 1;
                        }
                        j += 1;
                    }
                    j += 1;
                }
                i = j;
                continue;
            }
        }
        line_start = false;
        match c {
            b'\n' => {
                out.push('\n');
                line_start = true;
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 2;
                out.push(' ');
            }
            b'R' if b.get(i + 1) == Some(&b'"')
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // Raw string R"delim( ... )delim"
                let open = i + 2;
                let paren = b[open..].iter().position(|&x| x == b'(').map(|p| open + p);
                if let Some(p) = paren {
                    let delim = &src[open..p];
                    let end = format!("){delim}\"");
                    if let Some(e) = src[p..].find(&end) {
                        for ch in src[i..p + e + end.len()].chars() {
                            if ch == '\n' {
                                out.push('\n');
                            }
                        }
                        out.push_str("\"\"");
                        i = p + e + end.len();
                        continue;
                    }
                }
                out.push('R');
                i += 1;
            }
            b'"' | b'\'' => {
                let q = c;
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                if directives && q == b'"' {
                    // keep string contents on directive lines (#include "x.h")
                    out.push('"');
                } else {
                    out.push_str(if q == b'"' { "\"\"" } else { "' '" });
                }
            }
            _ => {
                // Copy one UTF-8 character.
                let ch = src[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// `#include "file"` targets of `src` (comments removed).
fn quoted_includes(src: &str) -> Vec<String> {
    // Strings are needed here: a light pass that removes comments only.
    let mut v = Vec::new();
    for line in strip_comments_only(src).lines() {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(rest) = rest.strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix('"') {
            if let Some(end) = r.find('"') {
                v.push(r[..end].to_string());
            }
        }
    }
    v
}

fn strip_comments_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str(&src[s..i.min(src.len())]);
        } else {
            let ch = src[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Names of the structs defined (`struct NAME {`) in `path` and the headers it includes
/// with quotes, found next to the including file or in `inc_dirs` (CANN's generator sees
/// the preprocessed source; these are the structs it would see).
fn struct_names(path: &Path, text: &str, inc_dirs: &[PathBuf]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut visited = BTreeSet::new();
    let mut stack = vec![(path.to_path_buf(), text.to_string())];
    while let Some((p, t)) = stack.pop() {
        if !visited.insert(p.clone()) || visited.len() > 256 {
            continue;
        }
        let toks = tokens(&strip(&t, false));
        // CANN matches `struct NAME {` (not classes, not `typedef struct {...} NAME`).
        for w in toks.windows(3) {
            if w[0] == "struct" && is_ident(&w[1]) && w[2] == "{" {
                names.insert(w[1].clone());
            }
        }
        let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
        for inc in quoted_includes(&t) {
            let cands =
                std::iter::once(dir.join(&inc)).chain(inc_dirs.iter().map(|d| d.join(&inc)));
            for c in cands {
                if let Ok(s) = fs::read_to_string(&c) {
                    stack.push((crate::paths::clean(&c), s));
                    break;
                }
            }
        }
    }
    names
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Split stripped source into identifiers/numbers and punctuation (`::` is one token).
fn tokens(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            let s0 = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            v.push(s[s0..i].to_string());
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            v.push("::".into());
            i += 2;
        } else if c == b'"' && b.get(i + 1) == Some(&b'"') {
            v.push("\"\"".into());
            i += 2;
        } else {
            v.push((c as char).to_string());
            i += 1;
        }
    }
    v
}

/// Remove GNU attribute groups (`__attribute__((noinline))`) and C++ attributes (`[[...]]`),
/// which may sit among a kernel's qualifiers and say nothing about its launch signature.
fn drop_attributes(t: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        let gnu = t[i] == "__attribute__" && t.get(i + 1).is_some_and(|x| x == "(");
        let cxx = t[i] == "[" && t.get(i + 1).is_some_and(|x| x == "[");
        if gnu || cxx {
            let (open, close) = if gnu { ("(", ")") } else { ("[", "]") };
            let mut depth = 0i32;
            let mut j = if gnu { i + 1 } else { i };
            while j < t.len() {
                if t[j] == open {
                    depth += 1;
                } else if t[j] == close {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            i = j + 1;
            continue;
        }
        out.push(t[i].clone());
        i += 1;
    }
    out
}

enum Scope {
    Namespace(String),
    ExternC,
    Other,
}

/// Find the kernel definitions of a source text. `structs`: struct names visible to it.
pub fn parse_kernels(src: &str, structs: &BTreeSet<String>) -> Result<Parsed, String> {
    let t = drop_attributes(tokens(&strip(src, false)));
    let mut parsed = Parsed::default();
    let mut stack: Vec<Scope> = Vec::new();
    let mut stmt_start = 0usize;
    let mut i = 0usize;
    let at_ns = |stack: &Vec<Scope>| stack.iter().all(|s| !matches!(s, Scope::Other));
    while i < t.len() {
        let tok = t[i].as_str();
        match tok {
            "{" => {
                let stmt = &t[stmt_start..i];
                let scope = if !at_ns(&stack) {
                    Scope::Other
                } else if stmt.iter().any(|x| x == "namespace") {
                    let pos = stmt.iter().rposition(|x| x == "namespace").unwrap_or(0);
                    Scope::Namespace(stmt[pos + 1..].concat())
                } else if stmt.len() == 2 && stmt[0] == "extern" && stmt[1] == "\"\"" {
                    Scope::ExternC
                } else {
                    Scope::Other
                };
                stack.push(scope);
                i += 1;
                stmt_start = i;
            }
            "}" => {
                stack.pop();
                i += 1;
                stmt_start = i;
            }
            ";" => {
                i += 1;
                stmt_start = i;
            }
            "__global__" if at_ns(&stack) => {
                let Some(open) = (i..t.len()).find(|&j| t[j] == "(") else {
                    break;
                };
                let head = &t[stmt_start..open];
                if head.iter().any(|x| x == ";" || x == "{" || x == "}") {
                    i += 1;
                    continue;
                }
                let Some(name) = head.last().filter(|n| is_ident(n)).cloned() else {
                    i += 1;
                    continue;
                };
                // Matching ')'.
                let mut depth = 0i32;
                let mut close = None;
                for (j, tk) in t.iter().enumerate().skip(open) {
                    if tk == "(" {
                        depth += 1;
                    } else if tk == ")" {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(j);
                            break;
                        }
                    }
                }
                let Some(close) = close else {
                    return Err(format!(
                        "kernel {name}: unbalanced parentheses in its parameter list"
                    ));
                };
                // Body or declaration?
                let mut k = close + 1;
                while k < t.len() && t[k] != "{" && t[k] != ";" {
                    k += 1;
                }
                let is_def = k < t.len() && t[k] == "{";
                if head.iter().any(|x| x == "template") && !parsed.templates.contains(&name) {
                    parsed.templates.push(name.clone());
                    if head.iter().any(|x| x == "__cube__") {
                        parsed.cube_templates.push(name.clone());
                    }
                }
                if is_def {
                    if head.iter().any(|x| x == "template") {
                        parsed.notes.push(format!(
                            "template kernel {name}: no aclrtlaunch_{name} (CANN generates them for non-template kernels only); launch it with {name}<T><<<blockDim, l2ctrl, stream>>>(...)"
                        ));
                    } else if !head.iter().any(|x| x == "void") {
                        return Err(format!(
                            "kernel {name} does not return void: a __global__ kernel must be declared `void {name}(...)`"
                        ));
                    } else {
                        let params = parse_params(&name, &t[open + 1..close], structs)?;
                        let scope: String = stack
                            .iter()
                            .filter_map(|s| match s {
                                Scope::Namespace(n) if !n.is_empty() => Some(format!("{n}::")),
                                _ => None,
                            })
                            .collect();
                        parsed.kernels.push(Kernel {
                            name: name.clone(),
                            scope,
                            params,
                            cube: head.iter().any(|x| x == "__cube__"),
                        });
                    }
                } else if !head.iter().any(|x| x == "template") && head.iter().any(|x| x == "void")
                {
                    // A declaration: kept only if its parameters are usable.
                    if let Ok(params) = parse_params(&name, &t[open + 1..close], structs) {
                        let scope: String = stack
                            .iter()
                            .filter_map(|s| match s {
                                Scope::Namespace(n) if !n.is_empty() => Some(format!("{n}::")),
                                _ => None,
                            })
                            .collect();
                        parsed.declared.push(Kernel {
                            name: name.clone(),
                            scope,
                            params,
                            cube: head.iter().any(|x| x == "__cube__"),
                        });
                    }
                }
                // Continue after the parameter list; the body's '{' opens an Other scope.
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    Ok(parsed)
}

const SCALAR_WORDS: &[&str] = &[
    "int",
    "char",
    "short",
    "long",
    "unsigned",
    "signed",
    "float",
    "double",
    "bool",
    "void",
    "half",
    "bfloat16_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
];

/// Join type tokens back into C++ text.
fn join(toks: &[String]) -> String {
    let mut s = String::new();
    for (n, tk) in toks.iter().enumerate() {
        if n > 0 {
            let prev = &toks[n - 1];
            let glue =
                prev == "::" || tk == "::" || tk == "<" || prev == "<" || tk == ">" || tk == ",";
            if !glue {
                s.push(' ');
            }
        }
        s.push_str(tk);
    }
    s
}

fn parse_params(
    kernel: &str,
    toks: &[String],
    structs: &BTreeSet<String>,
) -> Result<Vec<Param>, String> {
    // Split on top-level commas.
    let mut parts: Vec<Vec<String>> = vec![Vec::new()];
    let mut depth = 0i32;
    for tk in toks {
        match tk.as_str() {
            "(" | "<" | "[" | "{" => depth += 1,
            ")" | ">" | "]" | "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(Vec::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().expect("non-empty").push(tk.clone());
    }
    if parts.len() == 1 && (parts[0].is_empty() || parts[0] == ["void"]) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (n, raw) in parts.into_iter().enumerate() {
        // Drop a default value and attributes.
        let mut p: Vec<String> = Vec::new();
        let mut k = 0;
        while k < raw.len() {
            let tk = &raw[k];
            if tk == "=" {
                break;
            }
            if tk == "__attribute__" {
                // skip the parenthesised group
                let mut d = 0;
                k += 1;
                while k < raw.len() {
                    if raw[k] == "(" {
                        d += 1;
                    } else if raw[k] == ")" {
                        d -= 1;
                        if d == 0 {
                            break;
                        }
                    }
                    k += 1;
                }
                k += 1;
                continue;
            }
            if ["__restrict__", "__restrict", "restrict"].contains(&tk.as_str()) {
                k += 1;
                continue;
            }
            p.push(tk.clone());
            k += 1;
        }
        if p.is_empty() {
            return Err(format!("kernel {kernel}: parameter {} is empty", n + 1));
        }
        if p.iter().any(|x| x == "&") {
            return Err(format!(
                "kernel {kernel}: parameter {} (`{}`) is a reference; kernel parameters are passed by value",
                n + 1,
                join(&p)
            ));
        }
        let mut is_array = false;
        if p.last().is_some_and(|x| x == "]") {
            // `T name[]` / `T name[N]`: a pointer
            if let Some(b) = p.iter().rposition(|x| x == "[") {
                p.truncate(b);
                is_array = true;
            }
        }
        let last = p.last().cloned().unwrap_or_default();
        let named = p.len() >= 2
            && is_ident(&last)
            && !SCALAR_WORDS.contains(&last.as_str())
            && !["const", "volatile", "__gm__", "GM_ADDR"].contains(&last.as_str())
            && p[p.len() - 2] != "::";
        let (name, ty_toks) = if named {
            (last.clone(), p[..p.len() - 1].to_vec())
        } else {
            (format!("arg{n}"), p.clone())
        };
        let ty = join(&ty_toks);
        let pointer = is_array
            || ty_toks
                .iter()
                .any(|x| x == "*" || x == "GM_ADDR" || x == "__gm__");
        let base = ty_toks
            .iter()
            .rev()
            .find(|x| {
                is_ident(x) && *x != "const" && *x != "volatile" && *x != "struct" && *x != "class"
            })
            .cloned()
            .unwrap_or_default();
        let kind = if pointer {
            Kind::Pointer
        } else if structs.contains(&base) {
            Kind::Struct
        } else {
            Kind::Value
        };
        let ty = if is_array { format!("{ty} *") } else { ty };
        out.push(Param { name, ty, kind });
    }
    let mut names = BTreeSet::new();
    for p in &out {
        if !names.insert(p.name.clone()) {
            return Err(format!(
                "kernel {kernel}: two parameters are named {}",
                p.name
            ));
        }
    }
    Ok(out)
}

/// The parameter list of `aclrtlaunch_K` after `blockDim, stream`, as CANN writes it.
fn launch_params(k: &Kernel) -> Vec<String> {
    k.params
        .iter()
        .map(|p| match p.kind {
            Kind::Pointer => format!("void* {}", p.name),
            Kind::Struct => format!("{}* {}", strip_struct_kw(&p.ty), p.name),
            Kind::Value => format!("{} {}", p.ty, p.name),
        })
        .collect()
}

fn strip_struct_kw(ty: &str) -> String {
    ty.split(' ')
        .filter(|w| *w != "struct" && *w != "class")
        .collect::<Vec<_>>()
        .join(" ")
}

/// Names of the `blockDim` and `stream` parameters (renamed if the kernel uses them).
fn fixed_names(k: &Kernel) -> (&'static str, &'static str) {
    let has = |n: &str| k.params.iter().any(|p| p.name == n);
    (
        if has("blockDim") {
            "_blockDim"
        } else {
            "blockDim"
        },
        if has("stream") { "_stream" } else { "stream" },
    )
}

fn signature(k: &Kernel) -> String {
    let (bd, st) = fixed_names(k);
    let mut ps = vec![format!("uint32_t {bd}"), format!("aclrtStream {st}")];
    ps.extend(launch_params(k));
    format!("uint32_t aclrtlaunch_{}({})", k.name, ps.join(", "))
}

/// `aclrtlaunch_K.h`, exactly in the form CANN's build generates.
pub fn header_text(k: &Kernel) -> String {
    let guard = format!("HEADER_ACLRTLAUNCH_{}_H", k.name.to_uppercase());
    format!(
        "#ifndef {guard}\n#define {guard}\n#include \"acl/acl_base.h\"\n\n\
         #ifndef ACLRT_LAUNCH_KERNEL\n#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n#endif\n\n\
         extern \"C\" {};\n#endif\n",
        signature(k)
    )
}

/// The block function and `aclrtlaunch_K` of one kernel, for the `.npuemu.cpp` file.
fn launch_text(k: &Kernel, header: &Path) -> String {
    let n = &k.name;
    let (bd, st) = fixed_names(k);
    let mut s = format!(
        "\n// ---- kernel {n} ----\n#include \"{}\"\n\nnamespace {{\nstruct npuemu_args_{n} {{\n",
        c_escape(&header.display().to_string())
    );
    for p in &k.params {
        match p.kind {
            Kind::Pointer => s.push_str(&format!("    void *{};\n", p.name)),
            Kind::Struct => s.push_str(&format!("    {} {};\n", strip_struct_kw(&p.ty), p.name)),
            Kind::Value => s.push_str(&format!("    {} {};\n", p.ty, p.name)),
        }
    }
    if k.params.is_empty() {
        s.push_str("    char unused;\n");
    }
    s.push_str("};\n}  // namespace\n\n");
    // Local names carry an npuemu_ prefix: the kernel source's own names (a type `r`, a
    // parameter `a`) must not be shadowed in the generated code. Pointer arguments become the
    // kernel's view of device memory (npuemu::kernel_pointer, npuemu/launch.h).
    let call_args: Vec<String> = k
        .params
        .iter()
        .map(|p| match p.kind {
            Kind::Pointer => format!("({})npuemu::kernel_pointer(npuemu_p->{})", p.ty, p.name),
            _ => format!("npuemu_p->{}", p.name),
        })
        .collect();
    let mut setup = String::new();
    if k.cube {
        setup.push_str("npuemu::ctx().core_type = AscendC::AIC; ");
    }
    if let Some(w) = k
        .params
        .iter()
        .find(|p| p.kind == Kind::Pointer && p.name == "workspace")
    {
        setup.push_str(&format!(
            "npuemu::ctx().sys_workspace = (void *)npuemu::kernel_pointer(npuemu_p->{}); ",
            w.name
        ));
    }
    s.push_str(&format!(
        "static int npuemu_block_{n}(const void *npuemu_a, const npuemu_block_info *npuemu_info)\n{{\n\
         \x20   const npuemu_args_{n} *npuemu_p = static_cast<const npuemu_args_{n} *>(npuemu_a);\n\
         \x20   (void)npuemu_p;\n\
         \x20   try {{\n\
         \x20       return npuemu::run_block(\"{n}\", npuemu_info, [&] {{ {setup}{}{n}({}); }});\n\
         \x20   }} catch (...) {{\n\
         \x20       std::snprintf(npuemu_info->err, npuemu_info->errlen,\n\
         \x20                     \"kernel {n} block %u/%u: a C++ exception escaped the kernel\", npuemu_info->block_idx,\n\
         \x20                     npuemu_info->block_num);\n\
         \x20       return 1;\n\
         \x20   }}\n}}\n\n",
        k.scope,
        call_args.join(", ")
    ));
    s.push_str(&format!("extern \"C\" {}\n{{\n", signature(k)));
    for p in k.params.iter().filter(|p| p.kind == Kind::Struct) {
        s.push_str(&format!(
            "    if ({0} == nullptr) {{\n        return npuemu_kernel_launch_null_arg(\"{n}\", \"{0}\");\n    }}\n",
            p.name
        ));
    }
    let init: Vec<String> = k
        .params
        .iter()
        .map(|p| match p.kind {
            Kind::Struct => format!("*{}", p.name),
            _ => p.name.clone(),
        })
        .collect();
    if k.params.is_empty() {
        s.push_str(&format!("    npuemu_args_{n} npuemu_args{{0}};\n"));
    } else {
        s.push_str(&format!(
            "    npuemu_args_{n} npuemu_args{{{}}};\n",
            init.join(", ")
        ));
    }
    let ptrs: Vec<String> = k
        .params
        .iter()
        .filter(|p| p.kind == Kind::Pointer)
        .map(|p| format!("{{\"{0}\", {0}}}", p.name))
        .collect();
    if ptrs.is_empty() {
        s.push_str(&format!(
            "    return npuemu_kernel_launch(\"{n}\", {bd}, {st}, npuemu_block_{n}, &npuemu_args, sizeof npuemu_args, nullptr, 0);\n}}\n"
        ));
    } else {
        s.push_str(&format!(
            "    const npuemu_kernel_ptr_arg npuemu_ptrs[] = {{{}}};\n    return npuemu_kernel_launch(\"{n}\", {bd}, {st}, npuemu_block_{n}, &npuemu_args, sizeof npuemu_args, npuemu_ptrs, {});\n}}\n",
            ptrs.join(", "),
            ptrs.len()
        ));
    }
    s
}

/// The kernel table of the file (`npuemu/fatbin.h`): every kernel's block function and the
/// layout of its argument block, registered when the library is loaded, so a kernel binary
/// built from these files can be loaded and launched by name (aclrtBinaryLoadFromFile, ...).
fn fatbin_table(kernels: &[Kernel]) -> String {
    if kernels.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n// ---- the kernel table of this file (npuemu/fatbin.h) ----\n\
         #include \"npuemu/fatbin.h\"\n#include <cstddef>\nnamespace {\n",
    );
    for k in kernels {
        let n = &k.name;
        if k.params.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "const npuemu_fatbin_param npuemu_fb_params_{n}[] = {{\n"
        ));
        for p in &k.params {
            let kind = if p.kind == Kind::Pointer { 0 } else { 1 };
            s.push_str(&format!(
                "    {{\"{0}\", {kind}, static_cast<uint32_t>(offsetof(npuemu_args_{n}, {0})), static_cast<uint32_t>(sizeof(static_cast<npuemu_args_{n} *>(nullptr)->{0})), 0}},\n",
                p.name
            ));
        }
        s.push_str("};\n");
    }
    s.push_str("const npuemu_fatbin_kernel npuemu_fb_kernels[] = {\n");
    for k in kernels {
        let n = &k.name;
        let ty = if k.cube { 1 } else { 2 };
        if k.params.is_empty() {
            s.push_str(&format!(
                "    {{\"{n}\", npuemu_block_{n}, 0, 0, nullptr, {ty}, 0}},\n"
            ));
        } else {
            s.push_str(&format!(
                "    {{\"{n}\", npuemu_block_{n}, {}, static_cast<uint32_t>(sizeof(npuemu_args_{n})), npuemu_fb_params_{n}, {ty}, 0}},\n",
                k.params.len()
            ));
        }
    }
    s.push_str(&format!(
        "}};\nconst npuemu::FatbinRegistration npuemu_fb_registration(npuemu_fb_kernels, {});\n}}  // namespace\n",
        kernels.len()
    ));
    s
}

// ---------------------------------------------------------------------------------------
// The kernel-call operator `K<<<blockDim, l2ctrl, stream>>>(args)`.
//
// g++ cannot parse `<<<`, so a source that uses it is carried into the generated file as
// text (after `#line 1 "SRC"`, so diagnostics name the user's file and line), with each
// chevron outside comments, strings and preprocessor lines rewritten in place (same lines)
// to `::npuemu_chevron_K_t{blockDim, l2ctrl, stream}(args)`: an object whose call enqueues
// the launch through `aclrtlaunch_K` (l2ctrl is evaluated and ignored, as CANN reserves it).
// `#include "x"` lines whose file exists next to SRC are rewritten to its absolute path, so
// quote-includes resolve as they would from SRC itself.

/// One `K<<<a, b, c>>>` in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chevron {
    /// Byte offset of the kernel name (qualified name included).
    pub start: usize,
    /// Byte offset just past `>>>`.
    pub end: usize,
    /// The kernel name without its namespace qualification.
    pub name: String,
    /// The three execution-configuration expressions, as written.
    pub config: Vec<String>,
    /// 1-based line of the kernel name.
    pub line: usize,
    /// `Some("K<half>")`: a template kernel with its template arguments, as written.
    pub template: Option<String>,
    /// The template kernel is declared `__cube__`.
    pub cube: bool,
}

/// For each byte of `src`: whether it is code (not inside a comment, a string or character
/// literal, or a preprocessor line).
fn code_mask(src: &str) -> Vec<bool> {
    let b = src.as_bytes();
    let mut m = vec![true; b.len()];
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        if line_start {
            let mut j = i;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            if j < b.len() && b[j] == b'#' {
                // A directive, with its continuations and comments.
                while j < b.len() && b[j] != b'\n' {
                    if b[j] == b'\\' && b.get(j + 1) == Some(&b'\n') {
                        j += 1;
                    } else if b[j] == b'\\'
                        && b.get(j + 1) == Some(&b'\r')
                        && b.get(j + 2) == Some(&b'\n')
                    {
                        j += 2;
                    } else if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        j += 2;
                        while j + 1 < b.len() && !(b[j] == b'*' && b[j + 1] == b'/') {
                            j += 1;
                        }
                        j += 1;
                    }
                    j += 1;
                }
                let j = j.min(b.len());
                m[i..j].iter_mut().for_each(|x| *x = false);
                i = j;
                continue;
            }
        }
        line_start = false;
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let s = i;
            // A line comment ends at an unescaped newline.
            while i < b.len() && b[i] != b'\n' {
                if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                i += 1;
            }
            m[s..i].iter_mut().for_each(|x| *x = false);
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let s = i;
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(b.len());
            m[s..i].iter_mut().for_each(|x| *x = false);
        } else if c == b'R'
            && b.get(i + 1) == Some(&b'"')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let open = i + 2;
            let paren = b[open..].iter().position(|&x| x == b'(').map(|p| open + p);
            let end = paren.and_then(|p| {
                let delim = &src[open..p];
                let close = format!("){delim}\"");
                src[p..].find(&close).map(|e| p + e + close.len())
            });
            match end {
                Some(e) => {
                    m[i..e].iter_mut().for_each(|x| *x = false);
                    i = e;
                }
                None => i += 1,
            }
        } else if c == b'"' || c == b'\'' {
            // A digit separator (1'000) is not a character literal.
            if c == b'\'' && i > 0 && b[i - 1].is_ascii_hexdigit() {
                let mut k = i;
                while k > 0 && (b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'\'') {
                    k -= 1;
                }
                if b[k].is_ascii_digit() {
                    i += 1;
                    continue;
                }
            }
            let s = i;
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            m[s..i].iter_mut().for_each(|x| *x = false);
        } else {
            i += 1;
        }
    }
    m
}

fn line_of(src: &str, pos: usize) -> usize {
    src.as_bytes()[..pos]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

/// Find the chevron calls of `src`. `kernels`: the kernels defined in it. Errors name the
/// line (`line N: ...`).
pub fn find_chevrons(
    src: &str,
    kernels: &[Kernel],
    templates: &[String],
) -> Result<Vec<Chevron>, String> {
    let b = src.as_bytes();
    let m = code_mask(src);
    let code = |i: usize| i < b.len() && m[i];
    let is_id = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        if !(code(i) && code(i + 1) && code(i + 2) && &b[i..i + 3] == b"<<<") {
            i += 1;
            continue;
        }
        let line = line_of(src, i);
        // The name before `<<<`: an identifier, possibly qualified (ns::k).
        let mut s = i;
        while s > 0 && (b[s - 1] == b' ' || b[s - 1] == b'\t') {
            s -= 1;
        }
        let mut name_end = s;
        // K<T, 2><<<...>>>: the template arguments, back to their matching '<'.
        let mut targs = None;
        if s > 0 && b[s - 1] == b'>' && m[s - 1] {
            let mut d = 0i32;
            let mut paren = 0i32;
            let mut k = s;
            while k > 0 {
                k -= 1;
                if !m[k] {
                    continue;
                }
                match b[k] {
                    // `>` / `<` inside parentheses are comparisons.
                    b')' => paren += 1,
                    b'(' => paren -= 1,
                    _ if paren > 0 => {}
                    b'>' => d += 1,
                    b'<' => {
                        d -= 1;
                        if d == 0 {
                            break;
                        }
                    }
                    b';' | b'{' | b'}' => break,
                    _ => {}
                }
            }
            if d == 0 && b[k] == b'<' {
                targs = Some(src[k..s].to_string());
                s = k;
                while s > 0 && (b[s - 1] == b' ' || b[s - 1] == b'\t') {
                    s -= 1;
                }
                name_end = s;
            }
        }
        loop {
            while s > 0 && is_id(b[s - 1]) && m[s - 1] {
                s -= 1;
            }
            if s >= 2 && &b[s - 2..s] == b"::" && m[s - 2] {
                s -= 2;
                continue;
            }
            break;
        }
        let qualified = &src[s..name_end];
        if qualified == "operator" || qualified.ends_with("::operator") {
            // operator<< <T>(...) written without a space: not a kernel call.
            i += 3;
            continue;
        }
        let name = qualified.rsplit("::").next().unwrap_or("").to_string();
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return Err(format!(
                "line {line}: kernel call: `<<<` is not preceded by a kernel name; expected `kernel_name<<<blockDim, l2ctrl, stream>>>(args)`"
            ));
        }
        // The execution configuration up to `>>>` at bracket depth 0.
        let mut depth = 0i32;
        let mut j = i + 3;
        let mut parts = vec![String::new()];
        let mut part_start = j;
        let mut end = None;
        while j < b.len() {
            if !m[j] {
                j += 1;
                continue;
            }
            match b[j] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    *parts.last_mut().expect("non-empty") = src[part_start..j].to_string();
                    parts.push(String::new());
                    part_start = j + 1;
                }
                b'>' if depth == 0 && code(j + 1) && code(j + 2) && &b[j..j + 3] == b">>>" => {
                    *parts.last_mut().expect("non-empty") = src[part_start..j].to_string();
                    end = Some(j + 3);
                    break;
                }
                b';' if depth <= 0 => break,
                _ => {}
            }
            if depth < 0 {
                break;
            }
            j += 1;
        }
        let Some(end) = end else {
            return Err(format!(
                "line {line}: kernel call {name}<<<...: no matching `>>>`; expected `{name}<<<blockDim, l2ctrl, stream>>>(args)`"
            ));
        };
        if parts.len() != 3 || parts.iter().any(|p| p.trim().is_empty()) {
            return Err(format!(
                "line {line}: kernel call {name}<<<{}>>> has {} execution-configuration argument{}; expected 3: `<<<blockDim, l2ctrl, stream>>>` (l2ctrl is reserved: pass nullptr)",
                parts.join(",").trim(),
                parts.len(),
                if parts.len() == 1 { "" } else { "s" }
            ));
        }
        // The argument list must follow.
        let mut k = end;
        while k < b.len() && (b[k].is_ascii_whitespace() || !m[k]) {
            k += 1;
        }
        if k >= b.len() || b[k] != b'(' {
            return Err(format!(
                "line {line}: kernel call {name}<<<...>>> is not followed by its argument list `(...)`"
            ));
        }
        if let Some(t) = &targs {
            if !templates.contains(&name) {
                return Err(format!(
                    "line {line}: `{qualified}{t}<<<...>>>` launches {name}{t}, but {name} is not a template kernel defined or declared in this file (template kernels here: {})",
                    if templates.is_empty() { "none".to_string() } else { templates.join(", ") }
                ));
            }
        } else if !kernels.iter().any(|kn| kn.name == name) {
            let known: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
            return Err(format!(
                "line {line}: `{qualified}<<<...>>>` launches {name}, which is not a kernel defined or declared in this file (expected one of: {}); a kernel call needs a non-template `__global__ __aicore__ void {name}(...)` defined in this source, or declared here and defined in another source of the library",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ));
        }
        out.push(Chevron {
            start: s,
            end,
            template: targs.map(|t| format!("{qualified}{t}")),
            name,
            config: parts,
            line,
            cube: false,
        });
        i = end;
    }
    Ok(out)
}

/// `asm("trap")` (also `__asm__`, `__asm`, with `volatile`) in code: the kernel compiler's
/// trap instruction, which stops the kernel with an AI-core exception. g++ cannot assemble it
/// for the CPU, so the generated file calls `::trap()` (kernel_common.h) instead. Byte ranges.
pub fn find_asm_traps(src: &str) -> Vec<(usize, usize)> {
    let b = src.as_bytes();
    let m = code_mask(src);
    let is_id = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !m[i] || !(b[i] == b'a' || b[i] == b'_') || (i > 0 && is_id(b[i - 1])) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && is_id(b[j]) && m[j] {
            j += 1;
        }
        let word = &src[i..j];
        if !matches!(word, "asm" | "__asm__" | "__asm") {
            i = j.max(i + 1);
            continue;
        }
        let skip_ws = |mut k: usize| {
            while k < b.len() && (b[k].is_ascii_whitespace() || !m[k] && b[k] != b'"') {
                k += 1;
            }
            k
        };
        let mut k = skip_ws(j);
        // optional volatile qualifier
        let mut w = k;
        while w < b.len() && is_id(b[w]) {
            w += 1;
        }
        if matches!(&src[k..w], "volatile" | "__volatile__" | "__volatile") {
            k = skip_ws(w);
        }
        if k < b.len() && b[k] == b'(' {
            let rest = &src[k + 1..];
            let t = rest.trim_start();
            let lead = rest.len() - t.len();
            if let Some(after) = t.strip_prefix("\"trap\"") {
                let a2 = after.trim_start();
                if a2.starts_with(')') {
                    let end = k + 1 + lead + 6 + (after.len() - a2.len()) + 1;
                    out.push((i, end));
                    i = end;
                    continue;
                }
            }
        }
        i = j;
    }
    out
}

/// `src` with every chevron and `asm("trap")` rewritten (line structure kept) and
/// quote-includes of files next to the source made absolute.
fn rewrite_source(
    src: &str,
    chevrons: &[Chevron],
    traps: &[(usize, usize)],
    src_dir: &Path,
) -> String {
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for c in chevrons {
        let text = match &c.template {
            Some(t) => format!(
                "::npuemu_chevron_tpl(&{t}, \"{}\", {},{},{},{})",
                c_escape(&t.split_whitespace().collect::<Vec<_>>().join(" ")),
                c.cube,
                c.config[0],
                c.config[1],
                c.config[2]
            ),
            None => format!(
                "::npuemu_chevron_{}_t{{{},{},{}}}",
                c.name, c.config[0], c.config[1], c.config[2]
            ),
        };
        edits.push((c.start, c.end, text));
    }
    for &(a, b) in traps {
        let newlines = src[a..b].matches('\n').count();
        edits.push((a, b, format!("::trap(){}", "\n".repeat(newlines))));
    }
    edits.sort_by_key(|e| e.0);
    let mut s = String::with_capacity(src.len() + 64 * edits.len());
    let mut at = 0;
    for (a, b, text) in edits {
        s.push_str(&src[at..a]);
        s.push_str(&text);
        at = b;
    }
    s.push_str(&src[at..]);
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        out.push_str(&absolute_quote_include(line, src_dir).unwrap_or_else(|| line.to_string()));
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `#include "x"` with x found next to the source → `#include "/abs/dir/x"`.
fn absolute_quote_include(line: &str, dir: &Path) -> Option<String> {
    let t = line.trim_start();
    let rest = t.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim_start();
    let r = rest.strip_prefix('"')?;
    let end = r.find('"')?;
    let inc = &r[..end];
    if inc.starts_with('/') {
        return None;
    }
    let p = dir.join(inc);
    if !p.is_file() {
        return None;
    }
    let indent = &line[..line.len() - t.len()];
    Some(format!(
        "{indent}#include \"{}\"{}",
        c_escape(&crate::paths::clean(&p).display().to_string()),
        &r[end + 1..]
    ))
}

/// Before the source text when it launches a template kernel `K<T><<<a, l2, s>>>(args)`,
/// rewritten to `::npuemu_chevron_tpl(&K<T>, "K<T>", a, l2, s)(args)`: the launch is generic
/// over the instantiation's parameter types (pointers are its global-memory buffers, named
/// arg0, arg1, ... in fault messages).
const TEMPLATE_CHEVRON_DECL: &str = "\
#include <tuple>
#include <type_traits>
template <class... P> struct npuemu_chevron_tpl_t {
    void (*npuemu_fn)(P...);
    const char *npuemu_name;
    bool npuemu_cube;
    uint32_t npuemu_bd;
    void *npuemu_st;
    template <class... A> void operator()(A &&...npuemu_a) const;
};
template <class... P, class B, class L, class S>
npuemu_chevron_tpl_t<P...> npuemu_chevron_tpl(void (*fn)(P...), const char *name, bool cube, B b, L, S s)
{
    return npuemu_chevron_tpl_t<P...>{fn, name, cube, static_cast<uint32_t>(b), (void *)(s)};
}
";

/// After the source text (and `npuemu/launch.h`): the generic launch of template kernels.
const TEMPLATE_CHEVRON_IMPL: &str = "
// ---- template kernels launched with K<T><<<...>>>(args) ----
template <class... P> struct npuemu_tpl_args {
    void (*fn)(P...);
    const char *name;
    bool cube;
    // Copied byte-wise into the launch (kernel parameters are pointers and plain values).
    std::tuple<std::decay_t<P>...> a;
};
template <class T>
static T npuemu_tpl_arg(const T &v)
{
    if constexpr (std::is_pointer<T>::value) {
        return npuemu::kernel_pointer(v);
    } else {
        return v;
    }
}
template <class... P>
static int npuemu_tpl_block(const void *npuemu_a, const npuemu_block_info *npuemu_info)
{
    const npuemu_tpl_args<P...> *p = static_cast<const npuemu_tpl_args<P...> *>(npuemu_a);
    try {
        return npuemu::run_block(p->name, npuemu_info, [&] {
            if (p->cube) {
                npuemu::ctx().core_type = AscendC::AIC;
            }
            std::apply([&](const auto &...v) { p->fn(npuemu_tpl_arg(v)...); }, p->a);
        });
    } catch (...) {
        std::snprintf(npuemu_info->err, npuemu_info->errlen, \"kernel %s block %u/%u: a C++ exception escaped the kernel\",
                      p->name, npuemu_info->block_idx, npuemu_info->block_num);
        return 1;
    }
}
template <class T>
static void npuemu_tpl_ptr(npuemu_kernel_ptr_arg *ptrs, char (*names)[16], size_t &n, size_t &i, const T &v)
{
    if constexpr (std::is_pointer<T>::value) {
        std::snprintf(names[n], sizeof names[n], \"arg%zu\", i);
        ptrs[n] = npuemu_kernel_ptr_arg{names[n], (const void *)v};
        n++;
    }
    i++;
}
template <class... P> template <class... A>
void npuemu_chevron_tpl_t<P...>::operator()(A &&...npuemu_a) const
{
    static_assert(sizeof...(A) == sizeof...(P), \"wrong number of kernel arguments in K<T><<<...>>>(args)\");
    npuemu_tpl_args<P...> args{npuemu_fn, npuemu_name, npuemu_cube, std::tuple<std::decay_t<P>...>(std::forward<A>(npuemu_a)...)};
    npuemu_kernel_ptr_arg ptrs[sizeof...(P) + 1];
    char names[sizeof...(P) + 1][16];
    size_t n = 0, i = 0;
    std::apply([&](const auto &...v) { (npuemu_tpl_ptr(ptrs, names, n, i, v), ...); }, args.a);
    uint32_t rc = npuemu_kernel_launch(npuemu_name, npuemu_bd, npuemu_st, npuemu_tpl_block<P...>, &args, sizeof args,
                                       n ? ptrs : nullptr, n);
    if (rc != 0) {
        npuemu_kernel_launch_async_error(npuemu_name, rc, npuemu_st);
    }
}
";

/// Declarations put before the source text: one launcher type per chevron-launched kernel.
fn chevron_decls(names: &BTreeSet<String>) -> String {
    let mut s = String::from("#include <cstdint>\n#include <utility>\n");
    for n in names {
        s.push_str(&format!(
            "struct npuemu_chevron_{n}_t {{\n\
             \x20   uint32_t npuemu_bd;\n\
             \x20   void *npuemu_st;\n\
             \x20   template <class B, class L, class S>\n\
             \x20   npuemu_chevron_{n}_t(B b, L, S s) : npuemu_bd(static_cast<uint32_t>(b)), npuemu_st((void *)(s)) {{}}\n\
             \x20   template <class... A> void operator()(A &&...npuemu_a) const;\n\
             }};\n"
        ));
    }
    s
}

/// The launch behind `K<<<...>>>(args)`, after the kernel's `aclrtlaunch_K`.
fn chevron_impl(k: &Kernel) -> String {
    let n = &k.name;
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| format!("{} {}", p.ty, p.name))
        .collect();
    let mut args = vec!["npuemu_bd".to_string(), "npuemu_st".to_string()];
    for p in &k.params {
        args.push(match p.kind {
            Kind::Pointer => format!("(void *){}", p.name),
            Kind::Struct => format!("&{}", p.name),
            Kind::Value => p.name.clone(),
        });
    }
    let mut all = vec![
        "uint32_t npuemu_bd".to_string(),
        "void *npuemu_st".to_string(),
    ];
    all.extend(params);
    format!(
        "\n// {n}<<<blockDim, l2ctrl, stream>>>(args): returns nothing; a launch error is recorded\n\
         // (aclGetRecentErrMsg) and fails the stream's next synchronize.\n\
         static void npuemu_chevron_impl_{n}({})\n{{\n\
         \x20   uint32_t npuemu_rc = aclrtlaunch_{n}({});\n\
         \x20   if (npuemu_rc != 0) {{\n\
         \x20       npuemu_kernel_launch_async_error(\"{n}\", npuemu_rc, npuemu_st);\n\
         \x20   }}\n}}\n\
         template <class... A> void npuemu_chevron_{n}_t::operator()(A &&...npuemu_a) const\n{{\n\
         \x20   npuemu_chevron_impl_{n}(npuemu_bd, npuemu_st, std::forward<A>(npuemu_a)...);\n}}\n",
        all.join(", "),
        args.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernels(src: &str, structs: &[&str]) -> Vec<Kernel> {
        let s: BTreeSet<String> = structs.iter().map(|x| x.to_string()).collect();
        parse_kernels(src, &s).unwrap().kernels
    }

    #[test]
    fn add_custom_forms() {
        let src = r#"
#include "kernel_operator.h"
// extern "C" __global__ __aicore__ void commented(GM_ADDR x) {}
/* __global__ void alsocommented() {} */
const char *s = "__global__ __aicore__ void in_string(GM_ADDR x) {}";
class KernelAdd { public: __aicore__ inline void Init(GM_ADDR x) { int a = 1; } };
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KernelAdd op;
}
__aicore__ __global__ void other(__gm__ uint8_t* a, uint8_t *b, uint32_t n, AddCustomTilingData tiling) { }
extern "C" __global__ __aicore__ void decl_only(GM_ADDR x);
extern "C" { __global__ __vector__ void in_block(GM_ADDR x) {} }
namespace ns { __global__ __aicore__ void nsk(void) {} }
template <typename T> __global__ __aicore__ void tk(GM_ADDR x) {}
"#;
        let ks = kernels(src, &["AddCustomTilingData"]);
        let names: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["add_custom", "other", "in_block", "nsk"]);
        assert_eq!(
            header_text(&ks[0]),
            "#ifndef HEADER_ACLRTLAUNCH_ADD_CUSTOM_H\n#define HEADER_ACLRTLAUNCH_ADD_CUSTOM_H\n\
             #include \"acl/acl_base.h\"\n\n#ifndef ACLRT_LAUNCH_KERNEL\n\
             #define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n#endif\n\n\
             extern \"C\" uint32_t aclrtlaunch_add_custom(uint32_t blockDim, aclrtStream stream, \
             void* x, void* y, void* z);\n#endif\n"
        );
        assert_eq!(
            signature(&ks[1]),
            "uint32_t aclrtlaunch_other(uint32_t blockDim, aclrtStream stream, void* a, void* b, \
             uint32_t n, AddCustomTilingData* tiling)"
        );
        assert_eq!(ks[1].params[0].ty, "__gm__ uint8_t *");
        assert_eq!(ks[3].scope, "ns::");
        assert!(ks[3].params.is_empty());
    }

    #[test]
    fn attributes_among_the_qualifiers_are_ignored() {
        let ks = kernels(
            "extern \"C\" __global__ __aicore__ __attribute__((noinline)) [[maybe_unused]] void k(GM_ADDR x, int a[[maybe_unused]]) { int v[2]; v[0] = 1; }",
            &[],
        );
        assert_eq!(
            signature(&ks[0]),
            "uint32_t aclrtlaunch_k(uint32_t blockDim, aclrtStream stream, void* x, int a)"
        );
    }

    #[test]
    fn struct_without_definition_is_a_value_and_renames() {
        let ks = kernels(
            "__global__ __aicore__ void k(GM_ADDR stream, Opaque o, float alpha = 1.0f, int blockDim) {}",
            &[],
        );
        assert_eq!(
            signature(&ks[0]),
            "uint32_t aclrtlaunch_k(uint32_t _blockDim, aclrtStream _stream, void* stream, \
             Opaque o, float alpha, int blockDim)"
        );
    }

    #[test]
    fn errors() {
        let s = BTreeSet::new();
        let e = parse_kernels("__global__ __aicore__ void k(Foo &f) {}", &s).unwrap_err();
        assert!(e.contains("reference"), "{e}");
        let e = parse_kernels("__global__ __aicore__ int k(GM_ADDR x) {}", &s).unwrap_err();
        assert!(e.contains("does not return void"), "{e}");
        assert!(parse_kernels("int main() { return 0; }", &s)
            .unwrap()
            .kernels
            .is_empty());
    }

    #[test]
    fn chevrons_outside_comments_and_strings() {
        let src = "__global__ __aicore__ void k(GM_ADDR x, int n) {}\n\
                   // k<<<1, nullptr, s>>>(x, 1);\n\
                   const char *t = \"k<<<1, nullptr, s>>>(x)\"; char c = '<';\n\
                   #define L(s) k<<<1, nullptr, s>>>(0, 0)\n\
                   std::ostream &f(std::ostream &o) { return operator<<<char>(o, 'x'); }\n\
                   void h(void *s) { ns::k <<< f(1, 2), nullptr,\n s >>> (nullptr, 1'000); }\n";
        let ks = kernels(src, &[]);
        let cs = find_chevrons(src, &ks, &[]).unwrap();
        assert_eq!(cs.len(), 1, "{cs:?}");
        assert_eq!(cs[0].name, "k");
        assert_eq!(cs[0].line, 6);
        assert_eq!(cs[0].config[0].trim(), "f(1, 2)");
        assert_eq!(cs[0].config[2].trim(), "s");
        let out = rewrite_source(src, &cs, &[], Path::new("/nonexistent"));
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains("void h(void *s) { ::npuemu_chevron_k_t{ f(1, 2), nullptr,\n s } (nullptr, 1'000); }"), "{out}");
        assert!(out.contains("// k<<<1, nullptr, s>>>(x, 1);"));
        let t = "template <class T, int N> __global__ __aicore__ void tk(GM_ADDR x) {}\n\
                 void g(void *s) { tk<half, (3 > 2)><<<8, nullptr, s>>>(nullptr); }\n";
        let p = parse_kernels(t, &BTreeSet::new()).unwrap();
        assert_eq!(p.templates, ["tk"]);
        let cs = find_chevrons(t, &p.kernels, &p.templates).unwrap();
        assert_eq!(cs[0].template.as_deref(), Some("tk<half, (3 > 2)>"));
        let out = rewrite_source(t, &cs, &[], Path::new("/nonexistent"));
        assert!(
            out.contains("::npuemu_chevron_tpl(&tk<half, (3 > 2)>, \"tk<half, (3 > 2)>\", false,8, nullptr, s)(nullptr)"),
            "{out}"
        );
        let e = find_chevrons("void f() { k<<<1, nullptr, s>>>(); }", &ks[..0], &[]).unwrap_err();
        assert!(
            e.starts_with("line 1: `k<<<...>>>` launches k, which is not a kernel"),
            "{e}"
        );
    }

    #[test]
    fn crlf_sources() {
        let src = "#define GM_ADDR \\\r\n  __gm__ uint8_t *\r\nextern \"C\" __global__ __aicore__ void k(GM_ADDR x)\r\n{\r\n}\r\n";
        let ks = kernels(src, &[]);
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].params[0].kind, Kind::Pointer);
    }

    #[test]
    fn strip_keeps_lines() {
        let s = strip(
            "a /* x\ny */ b // c\n#define X \\\n 1\nd \"s\\\"t\" 'c'",
            false,
        );
        assert_eq!(s.lines().count(), 5, "{s:?}");
        assert!(!s.contains('x') && !s.contains("define"), "{s:?}");
        assert!(s.contains("\"\"") && s.contains("' '"), "{s:?}");
    }
}
