//! `npu-emu install --prefix DIR`: a CANN-like tree (abi.md §4.2, DESIGN §4).
//!
//! ```text
//! DIR/include/{acl,hccl,aclnn,aclnnop}/… headers (copied)
//! DIR/lib64/libascendcl.so            libraries (copied)
//! DIR/lib64/libhccl.so
//! DIR/lib64/libacl_rt.so -> libascendcl.so   CANN 8.5 second names (symlinks: one object)
//! DIR/lib64/libhcomm.so  -> libhccl.so
//! DIR/lib64/libnnopbase.so, libopapi.so -> libnnopbase.so   aclnn (nnopbase + FormatCast)
//! DIR/lib64/libopapi_{math,nn,cv,transformer}.so -> libnnopbase.so   the operator packages
//! DIR/lib64/stub/*.so -> ../*.so      link-time libraries, as CANN's runtime/lib64/stub
//! DIR/bin/npu-emu                     this tool (copied)
//! DIR/set_env.sh                      see `npu-emu env` (also DIR/bin/setenv.bash)
//! DIR/compiler/tikcpp/tikcfw/         Ascend C kernel headers (kernel_operator.h, tikicpulib.h)
//! DIR/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake     ascendc_library() for CMake
//! DIR/tools/tikcpp/{tikcfw,ascendc_kernel_cmake} -> ../../compiler/tikcpp/…
//! DIR/tools/tikicpulib/lib/cmake/tikicpulib/tikicpulibConfig.cmake   find_package(tikicpulib)
//! DIR/compat/include/hccl/hccl.h     opt-in HCCL dialect layer of the seed samples
//! DIR/python/site-packages/hccl.abi3.so   `import hccl` (libhccl/python, with hccl.pyi), on
//!                                     set_env.sh's PYTHONPATH
//! DIR/runtime/include -> ../include   compatibility paths used by vendor build files
//! DIR/runtime/lib64   -> ../lib64
//! DIR/<arch>-linux/include -> ../include
//! DIR/<arch>-linux/lib64   -> ../lib64
//! DIR/<arch>-linux/tikcpp  -> ../compiler/tikcpp   (<arch>-linux/tikcpp/ascendc_kernel_cmake)
//! DIR/lib64/libacl_op_compiler.so, libge_runner.so, libgraph.so, libacl_tdt_channel.so,
//!   libacl_tdt_queue.so, libmsprofiler.so -> libascendcl.so
//! DIR/opp/, DIR/share/info/*/version.info, DIR/ascend_toolkit_install.info   (install_cann_files)
//! ```
//!
//! Installing again over the same prefix updates it in place (files are written to a
//! temporary name and renamed, so a running `npu-emu` or a loaded library is not corrupted).

use crate::args::{failure, usage_error, CliResult};
use crate::paths::{self, LIBS, LIB_ALIASES};
use std::fs;
use std::path::{Path, PathBuf};

/// Options of `npu-emu install`.
#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// The directory to install into (created if needed; an existing install is updated).
    #[arg(long, value_name = "DIR")]
    pub prefix: Option<PathBuf>,
    /// Print nothing when done.
    #[arg(short, long)]
    pub quiet: bool,
}

/// What `install` accepts, for an unknown-option message.
pub const OPTIONS: &str = "--prefix DIR or --quiet";

pub fn main(args: InstallArgs) -> CliResult<()> {
    let quiet = args.quiet;
    let prefix = args
        .prefix
        .ok_or_else(|| usage_error("missing --prefix DIR"))?;
    let prefix = paths::absolute(&prefix)?;
    install(&prefix)?;
    if !quiet {
        println!("npu-emu installed in {}", prefix.display());
        println!(
            "Set up a shell with:  source {}/set_env.sh",
            prefix.display()
        );
    }
    Ok(())
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> crate::args::CliError {
    failure(format!("cannot {what} {}: {e}", path.display()))
}

fn mkdir(p: &Path) -> CliResult<()> {
    fs::create_dir_all(p).map_err(|e| io_err("create directory", p, e))
}

/// Copy `src` to `dst` through a temporary file and a rename. Copying a file onto itself
/// (installing into the tree the tool runs from) is a no-op.
fn copy_file(src: &Path, dst: &Path) -> CliResult<()> {
    if let (Ok(a), Ok(b)) = (src.canonicalize(), dst.canonicalize()) {
        if a == b {
            return Ok(());
        }
    }
    let name = dst
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dst.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    fs::copy(src, &tmp).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        failure(format!(
            "cannot copy {} to {}: {e}",
            src.display(),
            dst.display()
        ))
    })?;
    fs::rename(&tmp, dst).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err("replace", dst, e)
    })
}

/// Copy a directory tree (files and directories; symlinks are followed).
fn copy_tree(src: &Path, dst: &Path) -> CliResult<()> {
    mkdir(dst)?;
    let entries = fs::read_dir(src).map_err(|e| io_err("read directory", src, e))?;
    for ent in entries {
        let ent = ent.map_err(|e| io_err("read directory", src, e))?;
        let from = ent.path();
        let to = dst.join(ent.file_name());
        if from.is_dir() {
            copy_tree(&from, &to)?;
        } else {
            copy_file(&from, &to)?;
        }
    }
    Ok(())
}

/// Create (or replace) the symlink `link -> target`. Something other than a symlink in the
/// way is an error: the install never deletes real files or directories.
fn symlink(target: &str, link: &Path) -> CliResult<()> {
    match fs::symlink_metadata(link) {
        Ok(m) if m.file_type().is_symlink() => {
            if fs::read_link(link).is_ok_and(|t| t == Path::new(target)) {
                return Ok(());
            }
            fs::remove_file(link).map_err(|e| io_err("replace symlink", link, e))?;
        }
        Ok(_) => {
            return Err(failure(format!(
                "cannot create symlink {} -> {target}: a file or directory is in the way; \
                 remove it or install into another prefix",
                link.display()
            )))
        }
        Err(_) => {}
    }
    std::os::unix::fs::symlink(target, link).map_err(|e| io_err("create symlink", link, e))
}

/// Lay out the tree in `prefix` (absolute).
pub fn install(prefix: &Path) -> CliResult<()> {
    let src = paths::sources()?;
    mkdir(prefix)?;

    // Headers.
    copy_tree(&src.include, &prefix.join("include"))?;

    // Libraries and their second names.
    let lib64 = prefix.join("lib64");
    mkdir(&lib64)?;
    for l in LIBS {
        copy_file(&src.lib_dir.join(l), &lib64.join(l))?;
    }
    for (alias, target) in LIB_ALIASES {
        symlink(target, &lib64.join(alias))?;
    }
    // Link-time libraries (CANN's runtime/lib64/stub): the real ones, linked.
    let stub = lib64.join("stub");
    mkdir(&stub)?;
    for l in LIBS {
        symlink(&format!("../{l}"), &stub.join(l))?;
    }
    for (alias, _) in LIB_ALIASES {
        symlink(&format!("../{alias}"), &stub.join(alias))?;
    }

    // The tool itself.
    let bin = prefix.join("bin");
    mkdir(&bin)?;
    copy_file(&src.exe, &bin.join("npu-emu"))?;

    // Compatibility paths.
    let runtime = prefix.join("runtime");
    mkdir(&runtime)?;
    symlink("../include", &runtime.join("include"))?;
    symlink("../lib64", &runtime.join("lib64"))?;
    let arch = prefix.join(format!("{}-linux", std::env::consts::ARCH));
    mkdir(&arch)?;
    symlink("../include", &arch.join("include"))?;
    symlink("../lib64", &arch.join("lib64"))?;
    // Vendor CMake files find ascendc_kernel_cmake under <arch>-linux/tikcpp.
    symlink("../compiler/tikcpp", &arch.join("tikcpp"))?;

    install_ascendc(&src, prefix)?;
    install_cann_files(prefix)?;
    install_python(&src.lib_dir, prefix)?;

    // The seed samples' opt-in dialect layer (headers/compat), never on the default include path.
    if let Some(compat) = &src.compat {
        let dst = prefix.join(paths::COMPAT_DIR);
        if compat.canonicalize().ok() != dst.canonicalize().ok() {
            copy_tree(compat, &dst)?;
        }
    }

    // Environment script (also as bin/setenv.bash, which the vendor samples' run.sh sources).
    let script = crate::env::set_env_script(prefix);
    write_atomic(&prefix.join("set_env.sh"), &script)?;
    write_atomic(&bin.join("setenv.bash"), &script)?;
    Ok(())
}

/// The Python module `hccl` (built as `libhccl_python.so` next to the libraries, or already
/// installed in `python/site-packages`), where CANN keeps its Python packages.
fn install_python(lib_dir: &Path, prefix: &Path) -> CliResult<()> {
    let built = lib_dir.join("libhccl_python.so");
    let installed = lib_dir.join("../python/site-packages/hccl.abi3.so");
    let Some(from) = [built, installed].into_iter().find(|p| p.is_file()) else {
        return Ok(()); // a build without the Python module
    };
    let dir = prefix.join("python/site-packages");
    mkdir(&dir)?;
    copy_file(&from, &dir.join("hccl.abi3.so"))?;
    // Its type stubs, from the source tree or the installed tree.
    for stub in [
        "../../libhccl/python/hccl.pyi",
        "../python/site-packages/hccl.pyi",
    ] {
        if lib_dir.join(stub).is_file() {
            return copy_file(&lib_dir.join(stub), &dir.join("hccl.pyi"));
        }
    }
    Ok(())
}

fn write_atomic(path: &Path, text: &str) -> CliResult<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    fs::write(&tmp, text).map_err(|e| io_err("write", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| io_err("replace", path, e))
}

/// The Ascend C pieces, where CANN keeps them:
/// ```text
/// DIR/compiler/tikcpp/tikcfw/                      kernel headers (kernel_operator.h, tikicpulib.h, npuemu/)
/// DIR/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake
/// DIR/tools/tikcpp/{tikcfw,ascendc_kernel_cmake} -> ../../compiler/tikcpp/...
/// DIR/tools/tikicpulib/lib/cmake/tikicpulib/tikicpulibConfig.cmake
/// DIR/compiler/tikcpp/ascendc_kernel_cmake/{asc_modules,cce_modules}/   CMake ASC / CCE languages
/// DIR/lib64/cmake/{asc,cce}-config.cmake                    find_package(ASC) / find_package(CCE)
/// DIR/include/{tiling,register,kernel_tiling}/               host tiling headers (copies)
/// DIR/bin/{ccec,bisheng} -> npu-emu                          the compiler drivers (cc.rs)
/// DIR/compiler/ccec_compiler/bin/{ccec,bisheng} -> ../../../bin/npu-emu
/// DIR/{tools,<arch>-linux}/ccec_compiler -> ../compiler/ccec_compiler
/// ```
fn install_ascendc(src: &paths::Sources, prefix: &Path) -> CliResult<()> {
    if let Some(hdr) = &src.ascendc {
        let dst = prefix.join(paths::TIKCFW_DIR);
        if hdr.canonicalize().ok() != dst.canonicalize().ok() {
            copy_tree(hdr, &dst)?;
        }
    }
    if let Some((ascendc, tikicpulib)) = &src.cmake {
        let d = prefix.join(paths::ASCENDC_CMAKE_DIR);
        mkdir(&d)?;
        copy_file(ascendc, &d.join("ascendc.cmake"))?;
        let t = prefix.join(paths::TIKICPULIB_CMAKE_DIR);
        mkdir(&t)?;
        copy_file(tikicpulib, &t.join("tikicpulibConfig.cmake"))?;
        // The ASC and CCE languages (next to ascendc.cmake in both layouts).
        if let Some(cm) = ascendc.parent() {
            if cm.canonicalize().ok() != d.canonicalize().ok() {
                for sub in ["asc_modules", "cce_modules"] {
                    if cm.join(sub).is_dir() {
                        copy_tree(&cm.join(sub), &d.join(sub))?;
                    }
                }
                for f in ["asc-config.cmake", "cce-config.cmake"] {
                    if cm.join(f).is_file() {
                        copy_file(&cm.join(f), &d.join(f))?;
                    }
                }
            }
            let lc = prefix.join("lib64/cmake");
            mkdir(&lc)?;
            for f in ["asc-config.cmake", "cce-config.cmake"] {
                if d.join(f).is_file() {
                    copy_file(&d.join(f), &lc.join(f))?;
                }
            }
        }
    }
    // Host tiling headers where CANN has them (include/tiling/tiling_api.h, ...).
    let tikcfw = prefix.join(paths::TIKCFW_DIR);
    for sub in ["tiling", "register", "kernel_tiling", "graph"] {
        if tikcfw.join(sub).is_dir() {
            copy_tree(&tikcfw.join(sub), &prefix.join("include").join(sub))?;
        }
    }
    // The compiler drivers: this tool under the names ccec and bisheng, also where CANN keeps
    // its compilers (vendor CMake modules look in <arch>-linux/ccec_compiler/bin).
    let bin = prefix.join("bin");
    let ccec_bin = prefix.join("compiler/ccec_compiler/bin");
    mkdir(&ccec_bin)?;
    for tool in ["ccec", "bisheng"] {
        symlink("npu-emu", &bin.join(tool))?;
        symlink("../../../bin/npu-emu", &ccec_bin.join(tool))?;
    }
    mkdir(&prefix.join("tools"))?;
    symlink(
        "../compiler/ccec_compiler",
        &prefix.join("tools/ccec_compiler"),
    )?;
    symlink(
        "../compiler/ccec_compiler",
        &prefix
            .join(format!("{}-linux", std::env::consts::ARCH))
            .join("ccec_compiler"),
    )?;
    let tools = prefix.join("tools/tikcpp");
    mkdir(&tools)?;
    for sub in ["tikcfw", "ascendc_kernel_cmake"] {
        if prefix.join("compiler/tikcpp").join(sub).is_dir() {
            symlink(&format!("../../compiler/tikcpp/{sub}"), &tools.join(sub))?;
        }
    }
    Ok(())
}

/// The CANN version the libraries report (`aclsysGetVersionStr`, libascendcl's
/// `api/version.rs`).
const CANN_VERSION: &str = "8.5.0";

/// Files CANN installs that frameworks read at start-up (torch_npu checks that
/// `$ASCEND_OPP_PATH` exists and reads `vendors/config.ini` and `ascend_*_install.info`
/// when present; CANN's runtime reads `share/info/runtime/version.info`):
/// ```text
/// DIR/opp/version.info, DIR/opp/vendors/         operator package (no operators: aclnn is in lib64)
/// DIR/share/info/<pkg>/version.info              Version=8.5.0 for runtime, compiler, opp, hccl
/// DIR/ascend_toolkit_install.info                version=8.5.0
/// ```
fn install_cann_files(prefix: &Path) -> CliResult<()> {
    let version = format!("Version={CANN_VERSION}\n");
    mkdir(&prefix.join("opp/vendors"))?;
    write_atomic(&prefix.join("opp/version.info"), &version)?;
    for pkg in ["runtime", "compiler", "opp", "hccl"] {
        let d = prefix.join("share/info").join(pkg);
        mkdir(&d)?;
        write_atomic(&d.join("version.info"), &version)?;
    }
    write_atomic(
        &prefix.join("ascend_toolkit_install.info"),
        &format!(
            "package_name=Ascend-cann-toolkit\nversion={CANN_VERSION}\ninnerversion=npu-emu {}\narch={}\nos=linux\npath={}\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::ARCH,
            prefix.display()
        ),
    )
}
