//! Where the pieces of an installation come from, found relative to this executable.
//!
//! Two layouts are recognised:
//! - the build tree: `<repo>/target/release/npu-emu`, with the libraries next to it and the
//!   headers in `<repo>/headers/include` (two levels up);
//! - an installed tree: `<prefix>/bin/npu-emu`, with `<prefix>/lib64` and `<prefix>/include`.

use crate::args::{failure, CliResult};
use std::path::{Path, PathBuf};

/// The libraries every install ships (and links its second names to).
pub const LIBS: [&str; 3] = ["libascendcl.so", "libhccl.so", "libnnopbase.so"];
/// Second names of the libraries (CANN 8.5 split; aclnn's libopapi.so): `(link, target)`.
/// `libacl_op_compiler.so` holds `acl_op_compiler.h`, which libascendcl implements. The GE
/// graph libraries (`libge_runner.so`, `libgraph.so`) are not emulated: they name libascendcl
/// so that programs linked against them (torch_npu binds no symbol from them in eager mode)
/// load. The TDT channel and queue libraries (`libacl_tdt_channel.so`, `libacl_tdt_queue.so`)
/// hold `acl_tdt.h` / `acl_tdt_queue.h`, which libascendcl implements.
/// The operator packages of CANN's open operator sources (hicann ops-math, ops-nn, ops-cv,
/// ops-transformer) each build their own `libopapi_<pkg>.so`, and their build pages link
/// them by path; here they are all the one aclnn library.
pub const LIB_ALIASES: [(&str, &str); 13] = [
    ("libacl_rt.so", "libascendcl.so"),
    ("libhcomm.so", "libhccl.so"),
    ("libopapi.so", "libnnopbase.so"),
    ("libopapi_math.so", "libnnopbase.so"),
    ("libopapi_nn.so", "libnnopbase.so"),
    ("libopapi_cv.so", "libnnopbase.so"),
    ("libopapi_transformer.so", "libnnopbase.so"),
    ("libacl_op_compiler.so", "libascendcl.so"),
    ("libge_runner.so", "libascendcl.so"),
    ("libgraph.so", "libascendcl.so"),
    ("libacl_tdt_channel.so", "libascendcl.so"),
    ("libacl_tdt_queue.so", "libascendcl.so"),
    // aclprof* (acl_prof.h) live in CANN's libmsprofiler.so; programs link -lmsprofiler.
    ("libmsprofiler.so", "libascendcl.so"),
];

/// What an install copies.
pub struct Sources {
    /// This executable.
    pub exe: PathBuf,
    /// Directory holding `acl/` and `hccl/`.
    pub include: PathBuf,
    /// Directory holding `libascendcl.so` and `libhccl.so`.
    pub lib_dir: PathBuf,
    /// The Ascend C kernel headers (`kernel_operator.h`, `tikicpulib.h`, `npuemu/`), if this
    /// tree has them: `headers/ascendc` (build tree) or `compiler/tikcpp/tikcfw` (installed).
    pub ascendc: Option<PathBuf>,
    /// `ascendc.cmake` and `tikicpulibConfig.cmake`, if this tree has them: `npu-emu/cmake`
    /// (build tree) or where an install put them.
    pub cmake: Option<(PathBuf, PathBuf)>,
    /// The opt-in HCCL dialect layer of the seed samples (`hccl/hccl.h`), if this tree has it:
    /// `headers/compat/include` (build tree) or `compat/include` (installed).
    pub compat: Option<PathBuf>,
}

/// Where an install puts the Ascend C pieces, relative to the prefix (CANN's places).
pub const TIKCFW_DIR: &str = "compiler/tikcpp/tikcfw";
pub const ASCENDC_CMAKE_DIR: &str = "compiler/tikcpp/ascendc_kernel_cmake";
pub const TIKICPULIB_CMAKE_DIR: &str = "tools/tikicpulib/lib/cmake/tikicpulib";
/// Where an install puts the opt-in compatibility headers, relative to the prefix.
pub const COMPAT_DIR: &str = "compat/include";

/// The compatibility headers next to `dir` (the executable's directory).
fn compat_sources(dir: &Path) -> Option<PathBuf> {
    let build = dir.join("../../headers/compat/include");
    let inst = dir.join("..").join(COMPAT_DIR);
    [build, inst]
        .into_iter()
        .find(|d| d.join("hccl/hccl.h").is_file())
        .map(|d| clean(&d))
}

/// The Ascend C headers and CMake modules next to `dir` (the executable's directory).
fn ascendc_sources(dir: &Path) -> (Option<PathBuf>, Option<(PathBuf, PathBuf)>) {
    let build_hdr = dir.join("../../headers/ascendc");
    let inst_hdr = dir.join("..").join(TIKCFW_DIR);
    let hdr = [&build_hdr, &inst_hdr]
        .into_iter()
        .find(|d| d.join("kernel_operator.h").is_file())
        .map(|d| clean(d));
    let build_cm = dir.join("../../npu-emu/cmake");
    let cmake = if build_cm.join("ascendc.cmake").is_file() {
        Some((
            clean(&build_cm.join("ascendc.cmake")),
            clean(&build_cm.join("tikicpulibConfig.cmake")),
        ))
    } else {
        let a = dir.join("..").join(ASCENDC_CMAKE_DIR).join("ascendc.cmake");
        let t = dir
            .join("..")
            .join(TIKICPULIB_CMAKE_DIR)
            .join("tikicpulibConfig.cmake");
        (a.is_file() && t.is_file()).then(|| (clean(&a), clean(&t)))
    };
    (hdr, cmake)
}

fn exe_dir() -> CliResult<(PathBuf, PathBuf)> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| failure(format!("cannot locate the npu-emu executable: {e}")))?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok((exe, dir))
}

/// Find the headers and libraries this executable belongs to.
pub fn sources() -> CliResult<Sources> {
    let (exe, dir) = exe_dir()?;
    let build_inc = dir.join("../../headers/include");
    let inst_inc = dir.join("../include");
    let include = [&build_inc, &inst_inc]
        .into_iter()
        .find(|d| d.join("acl/acl.h").is_file() && d.join("hccl/hccl.h").is_file())
        .ok_or_else(|| {
            failure(format!(
                "cannot find the headers (acl/acl.h and hccl/hccl.h): looked in {} (build tree) \
                 and {} (installed tree)",
                clean(&build_inc).display(),
                clean(&inst_inc).display()
            ))
        })?;
    let inst_lib = dir.join("../lib64");
    let lib_dir = [&dir, &inst_lib]
        .into_iter()
        .find(|d| LIBS.iter().all(|l| d.join(l).is_file()))
        .ok_or_else(|| {
            failure(format!(
                "cannot find {} and {}: looked in {} (build tree) and {} (installed tree); \
                 build them with `cargo build --release --workspace`",
                LIBS[0],
                LIBS[1],
                dir.display(),
                clean(&inst_lib).display()
            ))
        })?;
    let (ascendc, cmake) = ascendc_sources(&dir);
    Ok(Sources {
        exe,
        include: clean(include),
        lib_dir: clean(lib_dir),
        ascendc,
        cmake,
        compat: compat_sources(&dir),
    })
}

/// The install tree this executable belongs to, for `npu-emu env` without `--prefix`:
/// `<prefix>` when it runs from `<prefix>/bin`, or `target/npu-emu` (the tree `make`
/// leaves) when it runs from `target/release`.
pub fn default_prefix() -> CliResult<PathBuf> {
    let (_, dir) = exe_dir()?;
    let installed = dir.join("..");
    let built = dir.join("../npu-emu");
    for p in [&installed, &built] {
        if p.join("set_env.sh").is_file() && p.join("lib64").is_dir() {
            return Ok(clean(p));
        }
    }
    Err(failure(format!(
        "no install tree found ({} and {} have no set_env.sh); run `npu-emu install --prefix DIR` \
         first or pass --prefix DIR",
        clean(&installed).display(),
        clean(&built).display()
    )))
}

/// `path` with `.` and `..` resolved (canonical if it exists).
pub fn clean(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Make `p` absolute (relative to the current directory) and clean.
pub fn absolute(p: &Path) -> CliResult<PathBuf> {
    if p.is_absolute() {
        return Ok(clean(p));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| failure(format!("cannot read the current directory: {e}")))?;
    Ok(clean(&cwd.join(p)))
}
