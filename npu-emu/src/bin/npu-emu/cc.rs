//! `ccec` and `bisheng`: the Ascend C compiler drivers of an npu-emu install.
//!
//! `<prefix>/bin/ccec` and `<prefix>/bin/bisheng` are links to `npu-emu`, which runs this module
//! when started under one of those names. The driver takes the command lines CANN's kernel
//! compilers take (vendor build files, `bisheng x.asc --npu-arch=dav-2201 -o demo`, CMake's
//! `CCE` and `ASC` languages) and builds for the CPU with `g++` (`NPUEMU_CXX` to use another
//! GNU C++ compiler):
//!
//! - A C++ source (`.cpp`, `.cc`, `.cxx`, `.c++`, `.C`, `.cce`, `.asc`, or any file after
//!   `-x cce` / `-xcce` / `-x asc`) that defines Ascend C kernels (`__global__ __aicore__`, also
//!   `__vector__` / `__cube__`), launches them with `K<<<blockDim, l2ctrl, stream>>>(args)` or
//!   holds `asm("trap")` goes through `npu-emu ascendc-stub`'s generator first (the kernel's
//!   launch code, its entry in the binary's kernel table, the chevrons rewritten), and the
//!   generated file is compiled instead; it sits next to the object (`OBJ.npuemu/`) so make's
//!   dependency files stay valid, or in a temporary directory when there is no object file.
//!   Such a translation unit is compiled as kernel code: `__CCE_AICORE__`, `__NPU_ARCH__` and
//!   `__DAV_*__` of the architecture, and the instrumentation that checks every load and store
//!   of kernel code against the launch's buffers (`npuemu/raw_access.h`; not with a user
//!   `-fsanitize=`).
//! - Other sources are compiled as they are (host code), with the install's include
//!   directories (`include/` and the kernel headers `compiler/tikcpp/tikcfw/`) added.
//! - Linking (no `-c`, `-S`, `-E`) adds `-L<prefix>/lib64 -Wl,-rpath,<prefix>/lib64
//!   -lascendcl -pthread`; `-shared` builds a kernel binary `aclrtBinaryLoadFromFile` loads.
//!
//! Options: the GNU ones are passed on. The kernel compiler's own have no meaning for the CPU
//! build and are dropped: `--cce-*` (`--cce-aicore-arch=dav-…` also picks the architecture),
//! `--npu-arch[=]dav-…` (the architecture), `-mllvm X`, `--aicore-only`, `--asc-aicore-lang`,
//! `--enable-simt`, `-Xaicore-start`/`-end`, `-Xhost-start`/`-end`,
//! `-forward-options-to-host-compiler`; `-l` of CANN libraries npu-emu does not ship
//! (`runtime`, `tiling_api`, `register`, `platform`, …) too. Defaults: `-std=c++17` and `-O2`
//! unless given. `NPUEMU_CC_VERBOSE=1` (or `-v`) prints each command run.
//!
//! Architectures (`--npu-arch`, `--cce-aicore-arch`): dav-2201 / dav-c220(-vec|-cube)
//! (Atlas A2/A3, the default), dav-2002 / dav-m200(-vec), dav-1001 / dav-c100, dav-3002 /
//! dav-m300, dav-3510; anything else is an error naming the value.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The names this module answers to.
const TOOLS: [&str; 2] = ["ccec", "bisheng"];

/// CANN libraries that link lines name but npu-emu does not ship (nothing of them is
/// emulated); their `-l` is dropped.
const ABSENT_LIBS: [&str; 20] = [
    "runtime",
    "tiling_api",
    "register",
    "platform",
    "ascendalog",
    "alog",
    "error_manager",
    "profapi",
    "ge_common_base",
    "unified_dlog",
    "mmpa",
    "ascend_dump",
    "c_sec",
    "ascendc_runtime",
    "runtime_camodel",
    "npu_drv",
    "npu_drv_camodel",
    "pam_davinci",
    "graph",
    "graph_base",
];

/// Options that take the next argument as their value (passed on together).
const WITH_VALUE: [&str; 22] = [
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-isysroot",
    "-MF",
    "-MT",
    "-MQ",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-T",
    "-u",
    "-z",
    "--param",
    "-B",
];

/// When started as `ccec` or `bisheng`: run the driver and return its exit code.
pub fn dispatch() -> Option<ExitCode> {
    let mut args = std::env::args();
    let argv0 = args.next()?;
    let tool = Path::new(&argv0).file_name()?.to_string_lossy().to_string();
    if !TOOLS.contains(&tool.as_str()) {
        return None;
    }
    let rest: Vec<String> = args.collect();
    Some(match main(&tool, &rest) {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            eprintln!("{tool}: error: {msg}");
            ExitCode::from(1)
        }
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lang {
    /// Decided by the file name.
    Auto,
    /// `-x cce` / `-x asc`: Ascend C (C++ with kernels).
    Kernel,
    /// Another `-x` language, passed on to g++.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Link,
    /// `-c`
    Compile,
    /// `-S`
    Assemble,
    /// `-E`, `-M`, `-MM`, `-fsyntax-only`: g++ produces the output itself.
    Preprocess,
}

#[derive(Clone, Debug)]
enum Item {
    /// A compiler or linker option (one or two arguments), `link`: only for the link step.
    Flag { args: Vec<String>, link: bool },
    /// A source to compile, with the `-x` language in force (`x` as given).
    Source {
        path: String,
        lang: Lang,
        x: Option<String>,
    },
    /// An object, archive or shared library (linked as given).
    LinkInput(String),
}

/// The NPU architecture's predefined macros.
fn arch_defs(arch: &str) -> Result<Vec<String>, String> {
    let a = arch.trim().to_ascii_lowercase();
    let defs: &[&str] = match a.as_str() {
        "dav-2201" | "dav-c220" | "dav-c220-vec" | "dav-c220-cube" => {
            &["__CCE_AICORE__=220", "__DAV_C220__", "__NPU_ARCH__=2201"]
        }
        "dav-2002" | "dav-m200" | "dav-m200-vec" => {
            &["__CCE_AICORE__=200", "__DAV_M200__", "__NPU_ARCH__=2002"]
        }
        "dav-1001" | "dav-c100" => &["__CCE_AICORE__=100", "__DAV_C100__", "__NPU_ARCH__=1001"],
        "dav-3002" | "dav-m300" => &["__CCE_AICORE__=300", "__DAV_M300__", "__NPU_ARCH__=3002"],
        "dav-3510" => &["__NPU_ARCH__=3510"],
        _ => {
            return Err(format!(
                "unknown NPU architecture {arch:?}: expected dav-2201 (Atlas A2/A3; also dav-c220, dav-c220-vec, dav-c220-cube), dav-2002 (dav-m200), dav-1001 (dav-c100), dav-3002 (dav-m300) or dav-3510"
            ))
        }
    };
    let mut v: Vec<String> = defs.iter().map(|d| format!("-D{d}")).collect();
    if a.ends_with("-vec") {
        v.push("-D__DAV_C220_VEC__".into());
    } else if a.ends_with("-cube") {
        v.push("-D__DAV_C220_CUBE__".into());
    }
    Ok(v)
}

fn is_link_input(path: &str) -> bool {
    let name = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    name.ends_with(".o")
        || name.ends_with(".a")
        || name.ends_with(".so")
        || name.ends_with(".obj")
        || name.contains(".so.")
}

fn is_kernel_ext(path: &str) -> bool {
    path.ends_with(".cce") || path.ends_with(".asc")
}

fn is_cxx_ext(path: &str) -> bool {
    [".cpp", ".cc", ".cxx", ".c++", ".C", ".cp", ".CPP"]
        .iter()
        .any(|e| path.ends_with(e))
        || is_kernel_ext(path)
}

/// The parsed command line.
struct Cli {
    items: Vec<Item>,
    out: Option<String>,
    mode: Mode,
    shared: bool,
    arch: Option<String>,
    has_std: bool,
    has_opt: bool,
    sanitize: bool,
    save_temps: bool,
    verbose: bool,
    /// `-I` directories (for the generator's tiling-struct lookup).
    inc_dirs: Vec<PathBuf>,
    dropped: Vec<String>,
}

fn parse(tool: &str, argv: &[String]) -> Result<Cli, String> {
    let mut c = Cli {
        items: Vec::new(),
        out: None,
        mode: Mode::Link,
        shared: false,
        arch: None,
        has_std: false,
        has_opt: false,
        sanitize: false,
        save_temps: false,
        verbose: std::env::var("NPUEMU_CC_VERBOSE").is_ok_and(|v| v == "1"),
        inc_dirs: Vec::new(),
        dropped: Vec::new(),
    };
    let mut lang = Lang::Auto;
    let mut x: Option<String> = None;
    let mut i = 0;
    let flag = |c: &mut Cli, args: Vec<String>, link: bool| c.items.push(Item::Flag { args, link });
    while i < argv.len() {
        let a = argv[i].clone();
        let next = |i: &mut usize| -> Result<String, String> {
            *i += 1;
            argv.get(*i)
                .cloned()
                .ok_or_else(|| format!("option {a} needs a value"))
        };
        if !a.starts_with('-') || a == "-" {
            if is_link_input(&a) {
                c.items.push(Item::LinkInput(a));
            } else {
                c.items.push(Item::Source {
                    path: a,
                    lang,
                    x: x.clone(),
                });
            }
            i += 1;
            continue;
        }
        // The kernel compiler's options.
        if let Some(v) = a
            .strip_prefix("--npu-arch=")
            .or_else(|| a.strip_prefix("--cce-aicore-arch="))
        {
            c.arch = Some(v.to_string());
        } else if a == "--npu-arch" || a == "--cce-aicore-arch" {
            c.arch = Some(next(&mut i)?);
        } else if a == "-mllvm" {
            let v = next(&mut i)?;
            c.dropped.push(format!("-mllvm {v}"));
        } else if a.starts_with("--cce-")
            || a.starts_with("-fcce-")
            || matches!(
                a.as_str(),
                "--aicore-only"
                    | "--asc-aicore-lang"
                    | "--enable-simt"
                    | "-Xaicore-start"
                    | "-Xaicore-end"
                    | "-Xhost-start"
                    | "-Xhost-end"
                    | "-forward-options-to-host-compiler"
            )
        {
            c.dropped.push(a.clone());
        } else if a == "-x" || (a.starts_with("-x") && a.len() > 2) {
            let v = if a == "-x" {
                next(&mut i)?
            } else {
                a[2..].to_string()
            };
            match v.as_str() {
                "cce" | "asc" | "aicore" => {
                    lang = Lang::Kernel;
                    x = None;
                }
                "none" => {
                    lang = Lang::Auto;
                    x = None;
                }
                other => {
                    lang = Lang::Other;
                    x = Some(other.to_string());
                }
            }
        } else if a == "-o" {
            c.out = Some(next(&mut i)?);
        } else if let Some(o) = a.strip_prefix("-o") {
            c.out = Some(o.to_string());
        } else if a == "-c" {
            c.mode = Mode::Compile;
        } else if a == "-S" {
            c.mode = Mode::Assemble;
        } else if matches!(a.as_str(), "-E" | "-M" | "-MM" | "-fsyntax-only") {
            c.mode = Mode::Preprocess;
            flag(&mut c, vec![a.clone()], false);
        } else if a == "--version" || a == "-dumpversion" || a == "--help" {
            println!(
                "{tool} (npu-emu {}): the Ascend C compiler driver of npu-emu; it builds kernels for the CPU with {}",
                env!("CARGO_PKG_VERSION"),
                cxx()
            );
            return Err(String::new());
        } else if a == "-v" {
            c.verbose = true;
            flag(&mut c, vec![a.clone()], false);
        } else if a == "-shared" {
            c.shared = true;
            flag(&mut c, vec![a.clone()], true);
        } else if let Some(attached) = a.strip_prefix("-l") {
            let name = if attached.is_empty() {
                next(&mut i)?
            } else {
                attached.to_string()
            };
            if ABSENT_LIBS.contains(&name.as_str()) {
                c.dropped.push(format!("-l{name}"));
            } else {
                flag(&mut c, vec![format!("-l{name}")], true);
            }
        } else if a.starts_with("-L")
            || a.starts_with("-Wl,")
            || matches!(
                a.as_str(),
                "-static" | "-rdynamic" | "-pie" | "-no-pie" | "-s" | "-nostdlib"
            )
        {
            if a == "-L" {
                let v = next(&mut i)?;
                flag(&mut c, vec![a.clone(), v], true);
            } else {
                flag(&mut c, vec![a.clone()], true);
            }
        } else if matches!(a.as_str(), "-Xlinker" | "-T" | "-u" | "-z") {
            let v = next(&mut i)?;
            flag(&mut c, vec![a.clone(), v], true);
        } else if WITH_VALUE.contains(&a.as_str()) {
            let v = next(&mut i)?;
            if a == "-I" {
                c.inc_dirs.push(PathBuf::from(&v));
            }
            flag(&mut c, vec![a.clone(), v], false);
        } else {
            if let Some(d) = a.strip_prefix("-I") {
                c.inc_dirs.push(PathBuf::from(d));
            }
            if a.starts_with("-std=") {
                c.has_std = true;
            }
            if a.starts_with("-O") {
                c.has_opt = true;
            }
            if a.starts_with("-fsanitize=") {
                c.sanitize = true;
            }
            if a == "-save-temps" || a.starts_with("-save-temps=") || a == "--save-temps" {
                c.save_temps = true;
                i += 1;
                continue;
            }
            flag(&mut c, vec![a.clone()], false);
        }
        i += 1;
    }
    Ok(c)
}

fn cxx() -> String {
    std::env::var("NPUEMU_CXX")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "g++".to_string())
}

/// Where the install's pieces are.
struct Install {
    include: PathBuf,
    tikcfw: PathBuf,
    lib_dir: PathBuf,
}

fn install() -> Result<Install, String> {
    let s = crate::paths::sources().map_err(|e| e.msg)?;
    let tikcfw = s.ascendc.ok_or_else(|| {
        "this npu-emu has no Ascend C kernel headers (compiler/tikcpp/tikcfw): reinstall it with `npu-emu install --prefix DIR`".to_string()
    })?;
    Ok(Install {
        include: s.include,
        tikcfw,
        lib_dir: s.lib_dir,
    })
}

/// Whether `text` needs the generator: it defines kernels, launches them with `<<<>>>` or
/// holds `asm("trap")` next to a kernel.
fn needs_generation(text: &str) -> bool {
    let parsed = match crate::ascendc::parse_kernels(text, &Default::default()) {
        Ok(p) => p,
        // Let the generator report it, naming the file.
        Err(_) => return true,
    };
    if !parsed.kernels.is_empty() {
        return true;
    }
    let mut callable = parsed.declared.clone();
    callable.extend(parsed.kernels.iter().cloned());
    !crate::ascendc::find_chevrons(text, &callable, &parsed.templates)
        .map(|c| c.is_empty())
        .unwrap_or(false)
}

fn run(cmd: &mut Command, verbose: bool) -> Result<u8, String> {
    if verbose {
        let mut line = cmd.get_program().to_string_lossy().to_string();
        for a in cmd.get_args() {
            line.push(' ');
            line.push_str(&a.to_string_lossy());
        }
        eprintln!("{line}");
    }
    let st = cmd.status().map_err(|e| {
        format!(
            "cannot run {}: {e} (set NPUEMU_CXX to a GNU C++ compiler)",
            cmd.get_program().to_string_lossy()
        )
    })?;
    Ok(st.code().map(|c| c.clamp(0, 255) as u8).unwrap_or(1))
}

/// A directory for generated files, removed when dropped (unless kept).
struct Scratch {
    dir: PathBuf,
    keep: bool,
}

impl Scratch {
    fn new(keep: bool) -> Result<Scratch, String> {
        let base = std::env::temp_dir();
        for n in 0..1000 {
            let dir = base.join(format!("npuemu-cc-{}-{n}", std::process::id()));
            if std::fs::create_dir(&dir).is_ok() {
                return Ok(Scratch { dir, keep });
            }
        }
        Err(format!(
            "cannot create a temporary directory in {}",
            base.display()
        ))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("npu-emu: generated files kept in {}", self.dir.display());
        }
    }
}

fn main(tool: &str, argv: &[String]) -> Result<u8, String> {
    let c = match parse(tool, argv) {
        Ok(c) => c,
        Err(e) if e.is_empty() => return Ok(0),
        Err(e) => return Err(e),
    };
    let sources: Vec<&Item> = c
        .items
        .iter()
        .filter(|i| matches!(i, Item::Source { .. }))
        .collect();
    let links = c.items.iter().any(|i| matches!(i, Item::LinkInput(_)));
    if sources.is_empty() && !links {
        return Err(format!(
            "no input files (usage: {tool} [options] file.asc|file.cpp|file.o ... ; {tool} --help)"
        ));
    }
    if c.mode != Mode::Link && c.out.is_some() && sources.len() > 1 {
        return Err("cannot specify -o with -c, -S or -E with multiple source files".into());
    }
    let inst = install()?;
    let arch_defs = arch_defs(c.arch.as_deref().unwrap_or("dav-2201"))?;
    if c.verbose && !c.dropped.is_empty() {
        eprintln!(
            "{tool}: options of the kernel compiler without meaning for the CPU build, ignored: {}",
            c.dropped.join(" ")
        );
    }
    let gnu = !cxx().contains("clang");
    let mut scratch: Option<Scratch> = None;
    let mut objects: Vec<(usize, String)> = Vec::new();
    for (idx, item) in c.items.iter().enumerate() {
        let Item::Source { path, lang, x } = item else {
            continue;
        };
        let cxx_src = match lang {
            Lang::Kernel => true,
            Lang::Other => false,
            Lang::Auto => is_cxx_ext(path),
        };
        let kernel_lang = *lang == Lang::Kernel || is_kernel_ext(path);
        let text = if cxx_src && path != "-" {
            Some(std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?)
        } else {
            None
        };
        let generate = text.as_deref().is_some_and(needs_generation);
        let kernel_tu = generate || kernel_lang;
        // The object (or other output) of this source.
        let out = match c.mode {
            Mode::Link => {
                let s = match &scratch {
                    Some(s) => s,
                    None => scratch.insert(Scratch::new(c.save_temps)?),
                };
                let stem = Path::new(path)
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "src".into());
                Some(s.dir.join(format!("{idx}-{stem}.o")).display().to_string())
            }
            Mode::Compile | Mode::Assemble => Some(c.out.clone().unwrap_or_else(|| {
                let stem = Path::new(path)
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "src".into());
                format!("{stem}.{}", if c.mode == Mode::Compile { "o" } else { "s" })
            })),
            Mode::Preprocess => c.out.clone(),
        };
        // The file g++ compiles.
        let mut input = PathBuf::from(path);
        if generate {
            let gen_dir = match (&out, c.mode) {
                (Some(o), Mode::Compile | Mode::Assemble) => PathBuf::from(format!("{o}.npuemu")),
                _ => {
                    let s = match &scratch {
                        Some(s) => s,
                        None => scratch.insert(Scratch::new(c.save_temps)?),
                    };
                    s.dir.join(format!("gen{idx}"))
                }
            };
            let gen_dir = crate::paths::absolute(&gen_dir).map_err(|e| e.msg)?;
            let src_abs = crate::paths::absolute(Path::new(path)).map_err(|e| e.msg)?;
            crate::ascendc::generate(
                &gen_dir,
                &gen_dir.join("include"),
                &c.inc_dirs,
                std::slice::from_ref(&src_abs),
            )
            .map_err(|e| e.msg)?;
            let stem = src_abs
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "kernel".into());
            input = gen_dir.join(format!("{stem}.npuemu.cpp"));
        }
        let mut cmd = Command::new(cxx());
        if !c.has_std {
            cmd.arg("-std=c++17");
        }
        if !c.has_opt {
            cmd.arg("-O2");
        }
        if c.shared {
            cmd.arg("-fPIC");
        }
        cmd.arg("-I").arg(&inst.tikcfw).arg("-I").arg(&inst.include);
        if kernel_tu {
            cmd.args(&arch_defs);
            if gnu && !c.sanitize {
                cmd.args([
                    "-fsanitize=kernel-address",
                    "--param=asan-instrumentation-with-call-threshold=0",
                    "--param=asan-stack=0",
                    "--param=asan-globals=0",
                    "-D__NPUEMU_GM_CHECK__=1",
                ]);
            }
        }
        for it in &c.items {
            if let Item::Flag { args, link: false } = it {
                cmd.args(args);
            }
        }
        match c.mode {
            Mode::Link | Mode::Compile => {
                cmd.arg("-c");
            }
            Mode::Assemble => {
                cmd.arg("-S");
            }
            Mode::Preprocess => {}
        }
        if let Some(o) = &out {
            cmd.arg("-o").arg(o);
        }
        if generate || kernel_lang {
            cmd.arg("-x").arg("c++");
        } else if let Some(x) = x {
            cmd.arg("-x").arg(x);
        }
        cmd.arg(&input);
        let code = run(&mut cmd, c.verbose)?;
        if code != 0 {
            return Ok(code);
        }
        if let Some(o) = out {
            objects.push((idx, o));
        }
    }
    if c.mode != Mode::Link {
        return Ok(0);
    }
    // The link step: the inputs in their order, sources replaced by their objects.
    let mut cmd = Command::new(cxx());
    for (idx, it) in c.items.iter().enumerate() {
        match it {
            Item::Flag { args, .. } => {
                cmd.args(args);
            }
            Item::LinkInput(p) => {
                cmd.arg(p);
            }
            Item::Source { .. } => {
                if let Some((_, o)) = objects.iter().find(|(i, _)| *i == idx) {
                    cmd.arg(o);
                }
            }
        }
    }
    if c.shared {
        cmd.arg("-fPIC");
    }
    cmd.arg("-o").arg(c.out.as_deref().unwrap_or("a.out"));
    cmd.arg("-L")
        .arg(&inst.lib_dir)
        .arg(format!("-Wl,-rpath,{}", inst.lib_dir.display()))
        .arg("-lascendcl")
        .arg("-pthread");
    run(&mut cmd, c.verbose)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn kernel_compiler_options_are_dropped_and_arch_kept() {
        let c = parse(
            "ccec",
            &args("-xcce --cce-auto-sync -mllvm -cce-aicore-stack-size=16000 --cce-aicore-arch=dav-c220-vec -O2 -I inc -DX=1 -c k.cpp -o k.o"),
        )
        .unwrap();
        assert_eq!(c.arch.as_deref(), Some("dav-c220-vec"));
        assert_eq!(c.mode, Mode::Compile);
        assert_eq!(c.out.as_deref(), Some("k.o"));
        assert!(c.has_opt);
        assert_eq!(c.inc_dirs, vec![PathBuf::from("inc")]);
        assert!(c
            .dropped
            .contains(&"-mllvm -cce-aicore-stack-size=16000".to_string()));
        let srcs: Vec<_> = c
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Source { path, lang, .. } => Some((path.clone(), *lang)),
                _ => None,
            })
            .collect();
        assert_eq!(srcs, vec![("k.cpp".to_string(), Lang::Kernel)]);
        let defs = arch_defs("dav-c220-vec").unwrap();
        assert!(defs.contains(&"-D__NPU_ARCH__=2201".to_string()));
        assert!(defs.contains(&"-D__DAV_C220_VEC__".to_string()));
        assert!(arch_defs("dav-9999").unwrap_err().contains("dav-9999"));
    }

    #[test]
    fn link_inputs_and_absent_libraries() {
        let c = parse(
            "bisheng",
            &args("main.o k.o -L/x -ltiling_api -lregister -lm -o demo --npu-arch dav-2002"),
        )
        .unwrap();
        assert_eq!(c.arch.as_deref(), Some("dav-2002"));
        assert!(c.dropped.contains(&"-ltiling_api".to_string()));
        let n_inputs = c
            .items
            .iter()
            .filter(|i| matches!(i, Item::LinkInput(_)))
            .count();
        assert_eq!(n_inputs, 2);
        assert!(c.items.iter().any(
            |i| matches!(i, Item::Flag { args, link: true } if args == &vec!["-lm".to_string()])
        ));
    }

    #[test]
    fn generation_is_needed_for_kernels_and_chevrons_only() {
        assert!(needs_generation(
            "extern \"C\" __global__ __aicore__ void k(GM_ADDR x) { }"
        ));
        assert!(needs_generation(
            "__global__ __vector__ void hello() { printf(\"hi\\n\"); }\nint main() { hello<<<8, nullptr, s>>>(); }"
        ));
        assert!(!needs_generation(
            "#include \"acl/acl.h\"\nint main() { return 0; }"
        ));
    }
}
