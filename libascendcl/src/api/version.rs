//! Versions: `aclrtGetVersion` (the 8.5 header macros, 1.16.0), `aclsysGetCANNVersion`,
//! `aclsysGetVersionStr`, `aclsysGetVersionNum`.
//!
//! npu-emu reports itself as CANN 8.5.0 for every CANN package (runtime, compiler, hccl,
//! toolkit, opp, …). There is no driver or firmware package: asking for them gives
//! `ACL_ERROR_INVALID_FILE` (what CANN returns when a package's version file is missing). That
//! answer is expected (torch_npu asks for the driver's version at start-up and, without one,
//! leaves off the features gated on a driver version), so it is logged at INFO, not ERROR.

use crate::api::errors;
use crate::ffi::{self, out};
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use std::ffi::CStr;
use std::os::raw::c_char;

/// The CANN version npu-emu stands in for.
pub const CANN_VERSION: &str = "8.5.0";
/// `aclsysGetVersionNum` of 8.5.0 (major·10⁷ + minor·10⁵ + patch·10³, as CANN computes it).
pub const CANN_VERSION_NUM: i32 = 8 * 10_000_000 + 5 * 100_000;

/// `aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetVersion(
    majorVersion: *mut i32,
    minorVersion: *mut i32,
    patchVersion: *mut i32,
) -> i32 {
    errors::boundary("aclrtGetVersion", || {
        ffi::non_null(majorVersion, "majorVersion")?;
        ffi::non_null(minorVersion, "minorVersion")?;
        ffi::non_null(patchVersion, "patchVersion")?;
        out(majorVersion, "majorVersion", 1)?;
        out(minorVersion, "minorVersion", 16)?;
        out(patchVersion, "patchVersion", 0)
    })
}

/// `aclCANNPackageVersion` (abi.md §1.6, 512 bytes).
#[repr(C)]
pub struct aclCANNPackageVersion {
    pub version: [c_char; 128],
    pub majorVersion: [c_char; 64],
    pub minorVersion: [c_char; 64],
    pub releaseVersion: [c_char; 64],
    pub patchVersion: [c_char; 64],
    pub reserved: [c_char; 128],
}

fn put(dst: &mut [c_char], s: &str) {
    for (d, b) in dst.iter_mut().zip(s.bytes().chain(std::iter::once(0))) {
        *d = b as c_char;
    }
}

/// `aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)`
#[no_mangle]
pub unsafe extern "C" fn aclsysGetCANNVersion(
    name: i32,
    version: *mut aclCANNPackageVersion,
) -> i32 {
    errors::boundary_quiet("aclsysGetCANNVersion", &[ACL_ERROR_INVALID_FILE], || {
        ffi::non_null(version, "version")?;
        match name {
            0..=6 => {}
            7 => {
                return Err(Error::new(
                    ACL_ERROR_INVALID_FILE,
                    "name = ACL_PKG_NAME_DRIVER (7): npu-emu has no driver package (no NPU driver is installed)",
                ))
            }
            _ => {
                return Err(Error::invalid(format!(
                    "name = {name} is invalid: expected an aclCANNPackageName from ACL_PKG_NAME_CANN (0) to ACL_PKG_NAME_DRIVER (7)"
                )))
            }
        }
        // SAFETY: non-null, caller provides the 512-byte struct.
        let v = unsafe { &mut *version };
        // SAFETY: all-zero bytes are a valid value of the struct.
        unsafe { std::ptr::write_bytes(version, 0, 1) };
        put(&mut v.version, CANN_VERSION);
        put(&mut v.majorVersion, "8");
        put(&mut v.minorVersion, "5");
        put(&mut v.releaseVersion, "0");
        put(&mut v.patchVersion, "0");
        Ok(())
    })
}

/// Package names `aclsysGetVersionStr`/`Num` know (CANN's, with `-`/`_` spellings: torch_npu
/// asks for `ops_math`, `ops_nn`, `ops_cv`, `ops_transformer`, `ops_legacy`).
fn known_package(p: &str) -> Result<()> {
    const CANN_PKGS: &[&str] = &[
        "runtime",
        "cann",
        "bisheng-compiler",
        "compiler",
        "hccl",
        "hcomm",
        "oam-tools",
        "toolkit",
        "ops-legacy",
        "opp",
        "opp_kernel",
        "ops-math",
        "ops-nn",
        // Their operators are in libopapi.so too (libopapi_cv.so / libopapi_transformer.so in
        // the install tree); torch_npu asks for both by name.
        "ops-cv",
        "ops-transformer",
        "ge",
        "metadef",
    ];
    let norm = p.replace('_', "-");
    if CANN_PKGS.iter().any(|k| k.replace('_', "-") == norm) {
        return Ok(());
    }
    if norm == "driver" || norm == "firmware" {
        return Err(Error::new(
            ACL_ERROR_INVALID_FILE,
            format!("pkgName = {p:?}: npu-emu has no {norm} package (no NPU driver is installed)"),
        ));
    }
    Err(Error::new(
        ACL_ERROR_INVALID_FILE,
        format!(
            "pkgName = {p:?} is not an installed package (known: {})",
            CANN_PKGS.join(", ")
        ),
    ))
}

unsafe fn pkg(pkgName: *const c_char) -> Result<String> {
    ffi::non_null(pkgName, "pkgName")?;
    // SAFETY: non-null NUL-terminated string per the ACL contract.
    let p = unsafe { CStr::from_ptr(pkgName) }
        .to_string_lossy()
        .into_owned();
    known_package(&p)?;
    Ok(p)
}

/// `aclError aclsysGetVersionStr(char *pkgName, char *versionStr)`: writes "8.5.0"
/// (a package that is not installed is `ACL_ERROR_INVALID_FILE`, an expected answer:
/// logged at INFO, not ERROR)
/// (`versionStr` must hold `ACL_PKG_VERSION_MAX_SIZE` = 128 bytes).
#[no_mangle]
pub unsafe extern "C" fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) -> i32 {
    errors::boundary_quiet("aclsysGetVersionStr", &[ACL_ERROR_INVALID_FILE], || {
        ffi::non_null(versionStr, "versionStr")?;
        // SAFETY: `pkgName` is NULL or the caller's NUL-terminated string (the ACL contract).
        unsafe { pkg(pkgName) }?;
        let bytes = CANN_VERSION.as_bytes();
        // SAFETY: caller provides ACL_PKG_VERSION_MAX_SIZE bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, versionStr, bytes.len());
            *versionStr.add(bytes.len()) = 0;
        }
        Ok(())
    })
}

/// `aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)`: 80500000 for 8.5.0.
#[no_mangle]
pub unsafe extern "C" fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) -> i32 {
    errors::boundary_quiet("aclsysGetVersionNum", &[ACL_ERROR_INVALID_FILE], || {
        ffi::non_null(versionNum, "versionNum")?;
        // SAFETY: as above.
        unsafe { pkg(pkgName) }?;
        out(versionNum, "versionNum", CANN_VERSION_NUM)
    })
}
