//! The ABI test: the headers, the machine-readable list (`abi/*.tsv`) and the built libraries
//! agree with each other.
//!
//! - every enum value, struct size/alignment/offset and constant of the list is checked by
//!   static assertions in a program generated here from the TSVs, compiled as C99/C11 and as
//!   C++11/14/17 (constants that C cannot use in a constant expression are checked at run
//!   time in the C build);
//! - every header compiles on its own in each of those languages;
//! - the headers declare exactly the listed functions, with the listed return types and
//!   parameter lists;
//! - the built `libascendcl.so` / `libhccl.so` export every listed function and nothing
//!   outside the vendor prefixes;
//! - the Rust definitions of the exports take and return what the C declarations say
//!   (parameter count and ABI class of every parameter and of the return value);
//! - a function that is still a stub really returns the "not supported" code, says so in
//!   `aclGetRecentErrMsg`, and logs once.

use npu_emu_tests as t;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Rows of `abi/NAME` (header line dropped), split on tabs.
fn tsv(name: &str) -> Vec<Vec<String>> {
    let path = t::root().join("abi").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header line").split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let r: Vec<String> = l.split('\t').map(|c| c.trim().to_string()).collect();
            assert_eq!(r.len(), head.len(), "abi/{name}: bad row {l:?}");
            r
        })
        .collect()
}

/// One listed function.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Func {
    ret: String,
    name: String,
    params: String,
    header: String,
}

fn functions(which: &str) -> Vec<Func> {
    tsv(&format!("{which}_functions.tsv"))
        .into_iter()
        .map(|r| Func {
            ret: r[0].clone(),
            name: r[1].clone(),
            params: r[2].clone(),
            // aclnn rows name the full path (their headers live in aclnn/ and aclnnop/).
            header: if r[3].contains('/') {
                r[3].clone()
            } else {
                format!("{which}/{}", r[3])
            },
        })
        .collect()
}

/// C spelling normalised for comparison: single spaces, no space next to `*`, `(`, `)`, `[`,
/// `]` or before `,`.
fn norm(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = if i > 0 { chars[i - 1] } else { ' ' };
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            if "*([".contains(prev) || "*)],[".contains(next) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// A C/C++ compiler run: `lang` is a `-std=` value; returns (success, stderr).
fn cc(lang: &str, args: &[&str]) -> (bool, String) {
    let cxx = lang.starts_with("c++");
    let mut cmd = Command::new(if cxx { "g++" } else { "gcc" });
    cmd.arg(format!("-std={lang}"))
        .args(["-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", t::include_dir().display()))
        .args(args);
    let o = cmd.output().expect("run the C compiler");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const C_STDS: &[&str] = &["c99", "c11"];
/// Headers that are C++ only, as CANN's are (`<cstdint>`, `constexpr`, `bool`): the aclnn
/// headers of libnnopbase/libopapi (`aclnn/` and the operator headers under `aclnnop/`).
fn cxx_only(h: &str) -> bool {
    (h.starts_with("aclnn/") && h != "aclnn/opdev/op_errno.h")
        || (h.starts_with("aclnnop/") && h != "aclnnop/aclnn_util.h")
}
const CXX_STDS: &[&str] = &["c++11", "c++14", "c++17"];

/// Every header under headers/include, relative (`acl/acl_rt.h`).
fn all_headers() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![t::include_dir()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "h") {
                out.push(
                    p.strip_prefix(t::include_dir())
                        .unwrap()
                        .display()
                        .to_string(),
                );
            }
        }
    }
    out.sort();
    out
}

const INCLUDES: &str =
    "#include \"acl/acl.h\"\n#include \"acl/acl_prof.h\"\n#include \"acl/acl_tdt.h\"\n#include \"acl/acl_tdt_queue.h\"\n\
#include \"acl/acl_op_compiler.h\"\n#include \"hccl/hccl.h\"\n";

/// Run-time checks of `HcclCommConfigInit` (C and C++), inside `main` of the layout program.
const CONFIG_INIT_CHECKS: &str = r#"    {
        HcclCommConfig cfg;
        size_t size;
        uint32_t magic, version;
        uint64_t reserved;
        memset(&cfg, 0x5a, sizeof(cfg));
        HcclCommConfigInit(&cfg);
        memcpy(&size, cfg.reserved, 8);
        memcpy(&magic, cfg.reserved + 8, 4);
        memcpy(&version, cfg.reserved + 12, 4);
        memcpy(&reserved, cfg.reserved + 16, 8);
        if (size != 2104 || magic != 0xf0f0f0f0u || version != 8 || reserved != 0 ||
            cfg.hcclBufferSize != 0xffffffffu || cfg.hcclDeterministic != 0xffffffffu ||
            cfg.hcclCommName[0] != 0 || cfg.hcclUdi[0] != 0 || cfg.hcclOpExpansionMode != 0 ||
            cfg.hcclRdmaTrafficClass != 0xffffffffu || cfg.hcclRdmaServiceLevel != 0xffffffffu ||
            cfg.hcclWorldRankID != 0 || cfg.hcclJobID != 0 || cfg.aclGraphZeroCopyEnable != 0 ||
            cfg.hcclExecTimeOut != -1 || cfg.hcclAlgo[0] != 0 || cfg.hcclRetryEnable[0] != 0 ||
            cfg.hcclRetryParams[0] != 0) {
            printf("FAILED: HcclCommConfigInit header/defaults (size %zu magic %x version %u)\n",
                   size, magic, version);
            bad++;
        }
    }
"#;

/// The layout/value check program generated from the TSVs. `broken` adds one false assertion
/// (to prove the check can fail).
fn layout_program(broken: bool) -> (String, usize) {
    let mut s = String::new();
    let mut n = 0;
    s.push_str(INCLUDES);
    s.push_str(
        "#include <stddef.h>\n#include <stdio.h>\n#include <string.h>\n\
         #ifdef __cplusplus\n#define SA(c, m) static_assert(c, m)\n#define RT(c, m) SA(c, m)\n\
         #else\n/* glibc maps _Static_assert to a bit-field trick before C11; gcc has the keyword. */\n\
         #ifdef _Static_assert\n#undef _Static_assert\n#endif\n#define SA(c, m) _Static_assert(c, m)\n\
         #define RT(c, m) do { if (!(c)) { printf(\"FAILED: %s\\n\", m); bad++; } } while (0)\n#endif\n",
    );
    let mut rt = String::new();
    let mut enum_types = BTreeSet::new();
    for r in tsv("enums.tsv") {
        let (e, name, value) = (&r[0], &r[1], &r[2]);
        writeln!(s, "SA({name} == {value}, \"{e}::{name} == {value}\");").unwrap();
        n += 1;
        if enum_types.insert(e.clone()) {
            writeln!(s, "SA(sizeof(enum {e}) == 4, \"sizeof(enum {e}) == 4\");").unwrap();
            n += 1;
        }
    }
    let mut sized = BTreeSet::new();
    for r in tsv("structs.tsv") {
        let (st, size, align, field, off) = (&r[0], &r[1], &r[2], &r[3], &r[4]);
        if sized.insert(st.clone()) {
            writeln!(s, "SA(sizeof({st}) == {size}, \"sizeof({st}) == {size}\");").unwrap();
            writeln!(
                s,
                "SA(__alignof__({st}) == {align}, \"alignof({st}) == {align}\");"
            )
            .unwrap();
            n += 2;
        }
        if field != "-" {
            writeln!(
                s,
                "SA(offsetof({st}, {field}) == {off}, \"offsetof({st}, {field}) == {off}\");"
            )
            .unwrap();
            n += 1;
        }
    }
    for r in tsv("constants.tsv") {
        let (name, value, kind) = (&r[0], &r[1], &r[2]);
        let cond = format!("(long long)({name}) == (long long)({value})");
        let msg = format!("{name} == {value}");
        if kind.starts_with("static_const") {
            // `static const` objects are constant expressions in C++ only.
            writeln!(rt, "    RT({cond}, \"{msg}\");").unwrap();
        } else {
            writeln!(s, "SA({cond}, \"{msg}\");").unwrap();
        }
        n += 1;
    }
    if broken {
        s.push_str("SA(ACL_FLOAT16 == 2, \"deliberately false\");\n");
    }
    // The inline HcclCommConfigInit writes the 24-byte header and the v8 defaults (abi.md 2.6).
    rt.push_str(CONFIG_INIT_CHECKS);
    n += 1;
    write!(
        s,
        "int main(void)\n{{\n    int bad = 0;\n{rt}    if (bad == 0) printf(\"abi ok: {n} checks\\n\");\n    return bad;\n}}\n"
    )
    .unwrap();
    (s, n)
}

#[test]
fn list_has_the_cann_85_function_sets() {
    let acl = functions("acl");
    let runtime_headers = [
        "acl/acl_rt.h",
        "acl/acl_base_rt.h",
        "acl/acl_rt_allocator.h",
        "acl/acl_base_mdl.h",
    ];
    // Declared after 8.5 (hicann/runtime master), listed for the programs that use them.
    let later = ["aclrtRecordEventWithFlag", "aclrtStreamWaitEventWithFlag"];
    let core = acl
        .iter()
        .filter(|f| runtime_headers.contains(&f.header.as_str()))
        .filter(|f| !later.contains(&f.name.as_str()))
        .count();
    assert_eq!(
        core, 355,
        "the CANN 8.5 runtime headers declare 355 functions"
    );
    // CANN 8.1's acl_mdl.h declares 97 functions: 83 stay there (GE), 14 moved to acl_rt.h.
    let mdl = acl.iter().filter(|f| f.header == "acl/acl_mdl.h").count();
    assert_eq!(
        mdl, 83,
        "acl_mdl.h keeps the 83 offline-model functions of CANN 8.1"
    );
    let hccl = functions("hccl");
    // The CANN 8.5 list (38), the five torch_npu looks up, hcomm's three symmetric-window
    // functions and HcclCommGetHandleWithName (abi/tools/extra_hccl_functions.tsv).
    assert_eq!(hccl.len(), 47);
    let mut names = BTreeSet::new();
    for f in acl.iter().chain(&hccl) {
        assert!(names.insert(f.name.clone()), "{} listed twice", f.name);
        assert!(!f.params.is_empty() && !f.ret.is_empty(), "{f:?}");
    }
    // Spot checks against abi.md.
    let find = |n: &str| {
        acl.iter()
            .chain(&hccl)
            .find(|f| f.name == n)
            .unwrap()
            .clone()
    };
    assert_eq!(
        norm(&find("aclrtMemcpyAsync").params),
        norm("void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream")
    );
    assert_eq!(find("aclrtGetSocName").ret, "const char *");
    assert_eq!(find("HcclGetCommConfigCapability").params, "void");
    assert_eq!(find("HcclBatchSendRecv").header, "hccl/hccl.h");
    assert_eq!(find("HcclGetRootInfo").header, "hccl/hccl_comm.h");
}

fn run_layout(lang: &str) {
    let work = t::scratch(&format!("abi-layout-{}", lang.replace('+', "x")));
    let ext = if lang.starts_with("c++") { "cpp" } else { "c" };
    let (src, n) = layout_program(false);
    assert!(n > 900, "only {n} checks generated");
    let file = work.join(format!("abi_check.{ext}"));
    std::fs::write(&file, src).unwrap();
    let exe = work.join("abi_check");
    let (ok, err) = cc(lang, &[file.to_str().unwrap(), "-o", exe.to_str().unwrap()]);
    assert!(ok, "ABI check program fails to compile as {lang}:\n{err}");
    let o = Command::new(&exe).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "ABI check as {lang} failed:\n{out}");
    assert!(out.contains(&format!("abi ok: {n} checks")), "{out}");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn layout_and_values_as_c() {
    for lang in C_STDS {
        run_layout(lang);
    }
}

#[test]
fn layout_and_values_as_cxx() {
    for lang in CXX_STDS {
        run_layout(lang);
    }
}

#[test]
fn layout_check_catches_a_wrong_value() {
    let work = t::scratch("abi-layout-broken");
    let (src, _) = layout_program(true);
    for (lang, ext) in [("c11", "c"), ("c++17", "cpp")] {
        let file = work.join(format!("broken.{ext}"));
        std::fs::write(&file, &src).unwrap();
        let (ok, err) = cc(lang, &["-fsyntax-only", file.to_str().unwrap()]);
        assert!(!ok, "a false assertion compiled as {lang}");
        assert!(err.contains("deliberately false"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn each_header_compiles_alone() {
    let headers = all_headers();
    assert!(headers.len() >= 14, "{headers:?}");
    let work = t::scratch("abi-headers-alone");
    let mut failures = Vec::new();
    for h in &headers {
        for lang in C_STDS.iter().chain(CXX_STDS) {
            if cxx_only(h) && !lang.starts_with("c++") {
                continue;
            }
            let ext = if lang.starts_with("c++") { "cpp" } else { "c" };
            let file = work.join(format!("only.{ext}"));
            std::fs::write(
                &file,
                format!("#include \"{h}\"\nint npu_emu_header_test;\n"),
            )
            .unwrap();
            // Users build with strict warnings too: the headers stay quiet under them.
            let strict: &[&str] = if lang.starts_with("c++") {
                &["-Wold-style-cast", "-Wzero-as-null-pointer-constant"]
            } else {
                &["-Wstrict-prototypes", "-Wmissing-prototypes"]
            };
            let mut args = vec![
                "-pedantic",
                "-Wconversion",
                "-Wsign-conversion",
                "-Wshadow",
                "-Wundef",
                "-Wcast-qual",
                "-fsyntax-only",
            ];
            args.extend_from_slice(strict);
            args.push(file.to_str().unwrap());
            let (ok, err) = cc(lang, &args);
            if !ok {
                failures.push(format!("{h} as {lang}:\n{err}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&work);
}

/// Function declarations written in the headers: name -> (return, params, header), parsed
/// from the text (`ACL_FUNC_VISIBILITY ...;` and `extern ...;` statements).
fn parse_declarations() -> BTreeMap<String, (String, String, String)> {
    let mut out = BTreeMap::new();
    for h in all_headers() {
        let raw = std::fs::read_to_string(t::include_dir().join(&h)).unwrap();
        // Drop comments and preprocessor lines.
        let mut text = String::new();
        let mut rest = raw.as_str();
        while let Some(i) = rest.find("/*") {
            text.push_str(&rest[..i]);
            let end = rest[i..].find("*/").expect("unterminated comment") + i + 2;
            rest = &rest[end..];
        }
        text.push_str(rest);
        let text: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for stmt in text.split([';', '{', '}']) {
            let s = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
            let s = s.trim_start_matches(['{', '}', ' ']);
            let body = if let Some(b) = s.strip_prefix("ACL_FUNC_VISIBILITY ") {
                b
            } else if let Some(b) = s.strip_prefix("ACLNN_API ") {
                b
            } else if let Some(b) = s.strip_prefix("extern ") {
                if b.starts_with("\"C\"") {
                    continue;
                }
                b
            } else {
                continue;
            };
            let body = match body.strip_prefix("ACL_DEPRECATED_MESSAGE(") {
                Some(b) => b[b.find(")").unwrap() + 1..].trim(),
                None => body,
            };
            let open = body
                .find('(')
                .unwrap_or_else(|| panic!("{h}: not a function: {body}"));
            let close = body.rfind(')').unwrap();
            let head = body[..open].trim_end();
            let name_start = head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let name = head[name_start..].to_string();
            let ret = head[..name_start].trim().to_string();
            let params = body[open + 1..close].to_string();
            let prev = out.insert(name.clone(), (norm(&ret), norm(&params), h.clone()));
            assert!(prev.is_none(), "{name} declared twice");
        }
    }
    out
}

/// Every function the C compiler sees declared in our headers (`gcc -aux-info`): an
/// independent check that no declaration escapes the text parser.
fn compiler_declared() -> BTreeSet<String> {
    let work = t::scratch("abi-aux-info");
    let src = work.join("all.c");
    std::fs::write(&src, INCLUDES).unwrap();
    let aux = work.join("aux.txt");
    let (ok, err) = cc(
        "c99",
        &[
            "-fsyntax-only",
            "-aux-info",
            aux.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    let inc = t::include_dir().display().to_string();
    let mut names = BTreeSet::new();
    for line in std::fs::read_to_string(&aux).unwrap().lines() {
        if !line.contains(&inc) {
            continue;
        }
        let decl = &line[line.find("*/").unwrap() + 2..];
        let head = decl[..decl.find('(').unwrap()].trim_end();
        let name = head
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap();
        names.insert(name.to_string());
    }
    let _ = std::fs::remove_dir_all(&work);
    names
}

#[test]
fn headers_declare_exactly_the_listed_functions() {
    let decls = parse_declarations();
    let listed: Vec<Func> = functions("acl")
        .into_iter()
        .chain(functions("hccl"))
        .chain(functions("aclnn"))
        .collect();
    let mut problems = Vec::new();
    for f in &listed {
        match decls.get(&f.name) {
            None => problems.push(format!("{} is listed but not declared", f.name)),
            Some((ret, params, h)) => {
                if *ret != norm(&f.ret) {
                    problems.push(format!(
                        "{}: header returns `{ret}`, list says `{}`",
                        f.name, f.ret
                    ));
                }
                if *params != norm(&f.params) {
                    problems.push(format!(
                        "{}: header takes `({params})`, list says `({})`",
                        f.name, f.params
                    ));
                }
                if *h != f.header {
                    problems.push(format!(
                        "{}: declared in {h}, list says {}",
                        f.name, f.header
                    ));
                }
            }
        }
    }
    let names: BTreeSet<String> = listed.iter().map(|f| f.name.clone()).collect();
    for n in decls.keys() {
        if !names.contains(n) {
            problems.push(format!("{n} is declared but not listed"));
        }
    }
    // The compiler's view: everything declared is listed, except the inline config helper.
    let mut seen = compiler_declared();
    assert!(
        seen.remove("HcclCommConfigInit"),
        "HcclCommConfigInit missing"
    );
    // (The C compile sees the acl/ and hccl/ headers; the aclnn ones are C++ only.)
    let c_names: BTreeSet<String> = listed
        .iter()
        .filter(|f| f.header.starts_with("acl/") || f.header.starts_with("hccl/"))
        .map(|f| f.name.clone())
        .collect();
    let diff: Vec<_> = seen.symmetric_difference(&c_names).collect();
    if !diff.is_empty() {
        problems.push(format!(
            "compiler-declared vs listed functions differ: {diff:?}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Defined dynamic symbols of a built library: name -> nm type letter.
fn exports(lib: &Path) -> BTreeMap<String, String> {
    assert!(
        lib.exists(),
        "{} is not built (run cargo build --release)",
        lib.display()
    );
    let o = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .expect("run nm");
    assert!(o.status.success());
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3).then(|| {
                (
                    f[2].split('@').next().unwrap().to_string(),
                    f[1].to_string(),
                )
            })
        })
        .collect()
}

fn check_exports(lib: &str, which: &str, prefixes: &[&str]) {
    let path = t::lib_dir().join(lib);
    let krate = match which {
        "acl" => "libascendcl",
        "aclnn" => "libascendcl/aclnn",
        _ => "libhccl",
    };
    let done = implemented(krate);
    let listed = functions(which);
    let real = listed.iter().filter(|f| done.contains(&f.name)).count();
    eprintln!(
        "{lib}: {real} of {} listed functions implemented, {} generated stubs",
        listed.len(),
        listed.len() - real
    );
    let syms = exports(&path);
    let mut problems = Vec::new();
    let mut listed = functions(which);
    if which == "acl" {
        // CANN libruntime.so / libprofapi.so functions torch_npu links (no public header).
        listed.extend(functions("compat"));
    }
    for f in listed {
        match syms.get(&f.name).map(String::as_str) {
            Some("T") => {}
            Some(k) => problems.push(format!("{} is exported as `{k}`, not a function", f.name)),
            None => problems.push(format!("{} is not exported", f.name)),
        }
    }
    for s in syms.keys() {
        if !prefixes.iter().any(|p| s.starts_with(p)) {
            problems.push(format!("{s} is exported but outside {prefixes:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        path.display(),
        problems.join("\n")
    );
    let o = Command::new("readelf")
        .arg("-d")
        .arg(&path)
        .output()
        .expect("run readelf");
    let dynamic = String::from_utf8_lossy(&o.stdout);
    assert!(
        dynamic.contains(&format!("Library soname: [{lib}]")),
        "SONAME of {lib}:\n{dynamic}"
    );
}

#[test]
fn libascendcl_exports_the_listed_functions_only() {
    check_exports(
        "libascendcl.so",
        "acl",
        &[
            "acl",
            "npuemu_",
            "rtGetC2cCtrlAddr",
            "rtKernelLaunch",
            "rtDevBinaryRegister",
            "rtDevBinaryUnRegister",
            "rtFunctionRegister",
            "Msprof",
        ],
    );
}

#[test]
fn libhccl_exports_the_listed_functions_only() {
    check_exports("libhccl.so", "hccl", &["Hccl", "Hcom"]);
}

#[test]
fn libnnopbase_exports_the_listed_functions_only() {
    check_exports("libnnopbase.so", "aclnn", &["acl", "Acl", "npuemu_aclnn_"]);
}

/// Names of `pub [unsafe] extern "C" fn` definitions under `crate_dir/src` (as build.rs sees
/// them), so the stub tests pick a function that is still a stub.
fn implemented(crate_dir: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![t::root().join(crate_dir).join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                for line in std::fs::read_to_string(&p).unwrap_or_default().lines() {
                    for pat in ["pub extern \"C\" fn ", "pub unsafe extern \"C\" fn "] {
                        if let Some(i) = line.find(pat) {
                            let n: String = line[i + pat.len()..]
                                .chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                                .collect();
                            names.insert(n);
                        }
                    }
                }
            }
        }
    }
    names
}

fn stub_program(work: &Path) -> PathBuf {
    t::compile(
        &[t::root().join("tests/abi/stub_call.c").to_str().unwrap()],
        &work.join("stub_call"),
        &["hccl", "ascendcl", "dl"],
        // The program reaches the HCCL stub only through dlsym: keep libhccl.so loaded.
        &["-Wl,--no-as-needed"],
    )
}

#[test]
fn an_acl_stub_returns_not_supported_and_names_itself() {
    let mut done = implemented("libascendcl");
    // Stubs kept on purpose return their own code (tested below).
    done.extend(kept_stubs().into_keys());
    // Prefer a function nobody is expected to implement; else any remaining aclError stub.
    let pick = [
        "aclmdlRIBuildBegin",
        "aclrtGetDeviceUtilizationRate",
        "aclrtSnapShotProcessLock",
    ]
    .into_iter()
    .map(String::from)
    .chain(
        functions("acl")
            .into_iter()
            .filter(|f| f.ret == "aclError")
            .map(|f| f.name),
    )
    .find(|n| !done.contains(n));
    let Some(name) = pick else {
        eprintln!("every aclError function is implemented: no stub left to test");
        return;
    };
    let work = t::scratch("abi-stub-acl");
    let exe = stub_program(&work);
    let mut cmd = t::command(&exe, &work);
    cmd.args(["acl", &name])
        .env("ASCEND_GLOBAL_LOG_LEVEL", "1")
        .env_remove("ASCEND_SLOG_PRINT_TO_STDOUT");
    let r = t::run(cmd);
    let _ = std::fs::remove_dir_all(t::node_dir(&work));
    r.assert_ok();
    assert!(
        r.stdout.contains(&format!("{name} returned 200001 200001")),
        "{}",
        r.all()
    );
    // Logged once for two calls, naming the function.
    let lines = r
        .stderr
        .lines()
        .filter(|l| l.contains(&name) && l.contains("not supported"))
        .count();
    assert_eq!(
        lines,
        1,
        "expected one log line naming {name}:\n{}",
        r.all()
    );
    if done.contains("aclGetRecentErrMsg") {
        assert!(
            r.stdout
                .contains(&format!("message: {name} is not supported")),
            "aclGetRecentErrMsg does not name {name}:\n{}",
            r.all()
        );
    } else {
        eprintln!("aclGetRecentErrMsg is still a stub: message not checked");
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// `abi/acl_stubs.tsv`: name -> (code, reason).
/// Issue 12's bound: at most 40 `libascendcl` functions stay stubs, each with a reason in
/// `abi/acl_stubs.tsv`; `libhccl` has none.
#[test]
fn every_remaining_stub_is_listed_with_a_reason() {
    let done = implemented("libascendcl");
    let kept = kept_stubs();
    let stubs: Vec<String> = functions("acl")
        .into_iter()
        .map(|f| f.name)
        .filter(|n| !done.contains(n))
        .collect();
    let unlisted: Vec<&String> = stubs.iter().filter(|n| !kept.contains_key(*n)).collect();
    assert!(
        unlisted.is_empty(),
        "libascendcl stubs without a reason in abi/acl_stubs.tsv: {unlisted:?}"
    );
    assert!(
        stubs.len() <= 40,
        "{} libascendcl stubs: {stubs:?}",
        stubs.len()
    );
    for (name, (_, why)) in &kept {
        assert!(!why.trim().is_empty(), "{name}: empty reason");
    }
    let hccl_done = implemented("libhccl");
    let hccl_stubs: Vec<String> = functions("hccl")
        .into_iter()
        .map(|f| f.name)
        .filter(|n| !hccl_done.contains(n))
        .collect();
    assert!(hccl_stubs.is_empty(), "libhccl stubs: {hccl_stubs:?}");
}

fn kept_stubs() -> std::collections::BTreeMap<String, (i32, String)> {
    let text = std::fs::read_to_string(t::root().join("abi/acl_stubs.tsv")).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 3, "abi/acl_stubs.tsv: bad row {l:?}");
            (c[0].to_string(), (c[1].parse().unwrap(), c[2].to_string()))
        })
        .collect()
}

#[test]
fn a_kept_acl_stub_returns_its_code_and_reason() {
    let done = implemented("libascendcl");
    let all: BTreeSet<String> = functions("acl")
        .into_iter()
        .filter(|f| f.ret == "aclError")
        .map(|f| f.name)
        .collect();
    let kept = kept_stubs();
    // Listed stubs are real functions of the list, and not implemented.
    for name in kept.keys() {
        assert!(
            !done.contains(name),
            "{name} is in abi/acl_stubs.tsv but implemented"
        );
    }
    let Some((name, (code, why))) = kept
        .iter()
        .find(|(n, _)| all.contains(*n) && !n.starts_with("aclop"))
    else {
        eprintln!("no aclError stub kept on purpose");
        return;
    };
    let work = t::scratch("abi-kept-stub-acl");
    let exe = stub_program(&work);
    let mut cmd = t::command(&exe, &work);
    cmd.args(["acl", name])
        .env_remove("ASCEND_GLOBAL_LOG_LEVEL")
        .env_remove("ASCEND_SLOG_PRINT_TO_STDOUT");
    let r = t::run(cmd);
    let _ = std::fs::remove_dir_all(t::node_dir(&work));
    r.assert_ok();
    assert!(
        r.stdout.contains(&format!("{name} returned {code} {code}")),
        "{}",
        r.all()
    );
    // At the default log level, once, with the reason.
    let lines = r
        .stderr
        .lines()
        .filter(|l| l.contains(name.as_str()) && l.contains(why.as_str()))
        .count();
    assert_eq!(
        lines,
        1,
        "expected one log line with the reason:\n{}",
        r.all()
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn an_hccl_stub_returns_not_supported() {
    let done = implemented("libhccl");
    let pick = [
        "HcclCommWorkingDevNicSet",
        "HcclCommSuspend",
        "HcclCommResume",
    ]
    .into_iter()
    .map(String::from)
    .chain(
        functions("hccl")
            .into_iter()
            .filter(|f| f.ret == "HcclResult")
            .map(|f| f.name),
    )
    .find(|n| !done.contains(n));
    let Some(name) = pick else {
        eprintln!("every HcclResult function is implemented: no stub left to test");
        return;
    };
    let work = t::scratch("abi-stub-hccl");
    let exe = stub_program(&work);
    let mut cmd = t::command(&exe, &work);
    cmd.args(["hccl", &name])
        .env("ASCEND_GLOBAL_LOG_LEVEL", "1")
        .env_remove("ASCEND_SLOG_PRINT_TO_STDOUT");
    let r = t::run(cmd);
    let _ = std::fs::remove_dir_all(t::node_dir(&work));
    r.assert_ok();
    assert!(
        r.stdout.contains(&format!("{name} returned 5 5")),
        "{}",
        r.all()
    );
    assert!(
        r.all().contains(&name),
        "no message names {name}:\n{}",
        r.all()
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn headers_link_into_several_translation_units() {
    // Constants, inline helpers and static data in the headers must not collide when two
    // files include them (C: static inline/#define; C++: inline/internal-linkage const).
    let work = t::scratch("abi-two-tu");
    for (lang, ext) in [
        ("c99", "c"),
        ("c11", "c"),
        ("c++11", "cpp"),
        ("c++17", "cpp"),
    ] {
        let a = work.join(format!("a.{ext}"));
        let b = work.join(format!("b.{ext}"));
        let common = format!("{INCLUDES}#include <acl/acl_base.h>\n");
        std::fs::write(
            &a,
            format!(
                "{common}int size_b(void);\nint main(void)\n{{\n    HcclCommConfig c;\n    \
                 HcclCommConfigInit(&c);\n    return (size_b() == (int)sizeof(HcclRootInfo) && \
                 c.hcclBufferSize == HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET) ? 0 : 1;\n}}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            &b,
            format!(
                "{common}int size_b(void)\n{{\n    HcclCommConfig c;\n    HcclCommConfigInit(&c);\n    \
                 return (int)HCCL_ROOT_INFO_BYTES + (c.hcclExecTimeOut == -1 ? 0 : 1) + \
                 (ACL_ERROR_NONE != 0);\n}}\n"
            ),
        )
        .unwrap();
        let exe = work.join(format!("two-{ext}-{lang}").replace('+', "x"));
        let (ok, err) = cc(
            lang,
            &[
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "-o",
                exe.to_str().unwrap(),
            ],
        );
        assert!(ok, "two translation units as {lang}:\n{err}");
        let st = Command::new(&exe).status().unwrap();
        assert!(
            st.success(),
            "two translation units as {lang}: wrong values"
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn deprecated_functions_warn_as_in_cann() {
    let work = t::scratch("abi-deprecated");
    let file = work.join("dep.c");
    std::fs::write(
        &file,
        "#include \"acl/acl.h\"\nint f(aclrtEvent e)\n{\n    aclrtEventStatus s;\n    \
         return aclrtQueryEvent(e, &s);\n}\n",
    )
    .unwrap();
    let (ok, err) = cc("c11", &["-fsyntax-only", file.to_str().unwrap()]);
    assert!(!ok && err.contains("aclrtQueryEventStatus"), "{err}");
    let (ok, err) = cc(
        "c11",
        &[
            "-fsyntax-only",
            "-Wno-deprecated-declarations",
            file.to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    let _ = std::fs::remove_dir_all(&work);
}

/// ABI class of a parameter or return type: what must agree between the C declaration and
/// the Rust definition of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Void,
    Ptr,
    I8,
    U8,
    U16,
    I32,
    U32,
    /// A C enum: `i32` or `u32` in Rust.
    Enum,
    I64,
    U64,
    F32,
    Bool,
    /// By-value struct, or a Rust type this test does not know: not compared.
    Other,
}

fn c_class(ty: &str, ptr_typedefs: &BTreeSet<String>, enums: &BTreeSet<String>) -> Class {
    let t = norm(ty);
    if t.contains('*') || t.contains('[') {
        return Class::Ptr;
    }
    let base = t
        .split(' ')
        .filter(|w| *w != "const" && *w != "enum" && *w != "union" && *w != "struct")
        .collect::<Vec<_>>()
        .join(" ");
    match base.as_str() {
        "void" => Class::Void,
        "int8_t" | "char" => Class::I8,
        "uint8_t" => Class::U8,
        "uint16_t" | "aclFloat16" => Class::U16,
        "int" | "int32_t" | "aclError" | "aclnnStatus" => Class::I32,
        "uint32_t" => Class::U32,
        "int64_t" => Class::I64,
        "uint64_t" | "size_t" => Class::U64,
        "float" => Class::F32,
        "bool" => Class::Bool,
        b if enums.contains(b) => Class::Enum,
        b if ptr_typedefs.contains(b) || b.ends_with("Func") || b.ends_with("Callback") => {
            Class::Ptr
        }
        _ => Class::Other,
    }
}

fn rust_class(ty: &str) -> Class {
    let t = ty.trim();
    if t.is_empty() || t == "()" {
        return Class::Void;
    }
    if t.starts_with("*const")
        || t.starts_with("*mut")
        || t.starts_with('&')
        || t.starts_with("extern")
        || t.starts_with("unsafe extern")
        || (t.starts_with("Option<") && t.contains("fn("))
        || t.starts_with("NonNull")
    {
        return Class::Ptr;
    }
    match t.rsplit("::").next().unwrap() {
        "i8" | "c_char" | "c_schar" => Class::I8,
        "u8" | "c_uchar" => Class::U8,
        "u16" | "c_ushort" => Class::U16,
        "i32" | "c_int" | "aclError" => Class::I32,
        "u32" | "c_uint" => Class::U32,
        "i64" | "isize" | "c_long" | "c_longlong" => Class::I64,
        "u64" | "usize" | "size_t" | "c_ulong" | "c_ulonglong" => Class::U64,
        "f32" | "c_float" => Class::F32,
        "bool" => Class::Bool,
        _ => Class::Other,
    }
}

fn classes_agree(c: Class, r: Class) -> bool {
    c == r
        || c == Class::Other
        || r == Class::Other
        || (c == Class::Enum && (r == Class::I32 || r == Class::U32))
}

/// Split at top-level commas (outside (), <>, []).
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut prev = ' ';
    for c in s.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '>' if prev != '-' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                prev = c;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        prev = c;
    }
    out.push(cur);
    out.into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Rust definitions `pub [unsafe] extern "C" fn NAME(params) [-> ret]` under `crate_dir/src`:
/// name -> (param types, return type, file).
fn rust_exports(crate_dir: &str) -> BTreeMap<String, (Vec<String>, String, String)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![t::root().join(crate_dir).join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let file = p.strip_prefix(t::root()).unwrap().display().to_string();
            let mut rest = text.as_str();
            while let Some(i) = rest.find("extern \"C\" fn ") {
                let line_start = rest[..i].rfind('\n').map_or(0, |j| j + 1);
                let is_pub = rest[line_start..i].trim_start().starts_with("pub");
                let after = &rest[i + "extern \"C\" fn ".len()..];
                rest = after;
                let Some(open) = after.find('(') else { break };
                let name = after[..open].trim().to_string();
                if !is_pub || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    continue;
                }
                let mut depth = 0;
                let mut close = None;
                for (k, c) in after[open..].char_indices() {
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                close = Some(open + k);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(close) = close else { break };
                let params = split_top(&after[open + 1..close])
                    .into_iter()
                    .map(|p| {
                        p.split_once(':')
                            .map_or(p.clone(), |(_, t)| t.trim().to_string())
                    })
                    .collect();
                let tail = &after[close + 1..];
                let end = tail.find(['{', ';']).unwrap_or(tail.len());
                let ret = tail[..end]
                    .trim()
                    .strip_prefix("->")
                    .map_or(String::new(), |r| {
                        r.split(" where").next().unwrap().trim().to_string()
                    });
                out.insert(name, (params, ret, file.clone()));
            }
        }
    }
    out
}

#[test]
fn rust_exports_match_the_c_declarations() {
    let ptr_typedefs: BTreeSet<String> = tsv("structs.tsv")
        .into_iter()
        .filter(|r| r[1] == "8" && r[3] == "-")
        .map(|r| r[0].clone())
        .collect();
    let enums: BTreeSet<String> = tsv("enums.tsv").into_iter().map(|r| r[0].clone()).collect();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (krate, which) in [
        ("libascendcl", "acl"),
        ("libascendcl", "compat"),
        ("libhccl", "hccl"),
        ("libascendcl/aclnn", "aclnn"),
    ] {
        let defs = rust_exports(krate);
        for f in functions(which) {
            let Some((rparams, rret, file)) = defs.get(&f.name) else {
                continue;
            };
            checked += 1;
            let cparams: Vec<String> = if f.params.trim() == "void" {
                Vec::new()
            } else {
                split_top(&f.params)
                    .into_iter()
                    .filter(|p| p != "...")
                    .map(|p| {
                        // Drop the parameter name (keep array brackets as a pointer marker).
                        let arr = p.contains('[');
                        let base = p.split('[').next().unwrap().trim_end().to_string();
                        let cut = base
                            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .map_or(0, |k| k + 1);
                        let ty = base[..cut].trim().to_string();
                        if arr {
                            format!("{ty} *")
                        } else {
                            ty
                        }
                    })
                    .collect()
            };
            if cparams.len() != rparams.len() {
                problems.push(format!(
                    "{} ({file}): {} parameters in Rust, {} in C ({})",
                    f.name,
                    rparams.len(),
                    cparams.len(),
                    f.params
                ));
                continue;
            }
            for (k, (c, r)) in cparams.iter().zip(rparams).enumerate() {
                let (cc_, rc) = (c_class(c, &ptr_typedefs, &enums), rust_class(r));
                if !classes_agree(cc_, rc) {
                    problems.push(format!(
                        "{} ({file}): parameter {} is `{r}` in Rust but `{c}` in C",
                        f.name,
                        k + 1
                    ));
                }
            }
            let (cc_, rc) = (c_class(&f.ret, &ptr_typedefs, &enums), rust_class(rret));
            if !classes_agree(cc_, rc) {
                problems.push(format!(
                    "{} ({file}): returns `{rret}` in Rust but `{}` in C",
                    f.name, f.ret
                ));
            }
        }
    }
    eprintln!("compared {checked} Rust exports with their C declarations");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
