//! Where the two ends of a copy live, and the direction CANN derives from the pointers and
//! the `aclrtMemcpyKind` (S1 `MemcpyKindAutoCorrect`; the docs call `kind` a reserved
//! parameter).

use crate::codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::memory::{device_of, is_canonical, Space};
use crate::{Error, Result};

// aclrtMemcpyKind
pub const ACL_MEMCPY_HOST_TO_HOST: i32 = 0;
pub const ACL_MEMCPY_HOST_TO_DEVICE: i32 = 1;
pub const ACL_MEMCPY_DEVICE_TO_HOST: i32 = 2;
pub const ACL_MEMCPY_DEVICE_TO_DEVICE: i32 = 3;
pub const ACL_MEMCPY_DEFAULT: i32 = 4;
pub const ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: i32 = 5;
pub const ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: i32 = 6;
pub const ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: i32 = 7;

/// The C name of an `aclrtMemcpyKind` value, for messages.
pub fn kind_name(kind: i32) -> &'static str {
    match kind {
        ACL_MEMCPY_HOST_TO_HOST => "ACL_MEMCPY_HOST_TO_HOST",
        ACL_MEMCPY_HOST_TO_DEVICE => "ACL_MEMCPY_HOST_TO_DEVICE",
        ACL_MEMCPY_DEVICE_TO_HOST => "ACL_MEMCPY_DEVICE_TO_HOST",
        ACL_MEMCPY_DEVICE_TO_DEVICE => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        ACL_MEMCPY_DEFAULT => "ACL_MEMCPY_DEFAULT",
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE => "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE",
        ACL_MEMCPY_INTER_DEVICE_TO_DEVICE => "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE",
        _ => "an invalid kind",
    }
}

/// Where the two ends of a copy live: `true` = device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dir {
    pub dst_dev: bool,
    pub src_dev: bool,
}

/// Where one end of a copy lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Device memory (an allocation or a mapped VMM range).
    Device,
    /// Host memory the runtime knows: `aclrtMallocHost` or `aclrtHostRegister[V2]`.
    Pinned,
    /// Other host memory (malloc, stack, …): "pageable" in CANN's terms.
    Pageable,
}

/// Where `addr` lives; without a runtime (`None`) no host memory is pinned.
pub fn locate<S: Space + ?Sized>(space: Option<&S>, addr: u64) -> Loc {
    if is_canonical(addr) {
        Loc::Device
    } else if space.is_some_and(|s| s.host_range(addr).is_some()) {
        Loc::Pinned
    } else {
        Loc::Pageable
    }
}

fn loc_text(loc: Loc, addr: u64) -> String {
    match loc {
        Loc::Device => format!(
            "device memory ({addr:#x}, device {})",
            device_of(addr).map_or("VMM".to_string(), |d| d.to_string())
        ),
        Loc::Pinned => format!("host memory from aclrtMallocHost ({addr:#x})"),
        Loc::Pageable => format!("pageable host memory ({addr:#x}, not from aclrtMallocHost)"),
    }
}

/// CANN's kind handling: the direction comes from the pointers. Device memory and ACL host
/// memory force the kind whatever was passed; with pageable host memory the kind must allow
/// the direction (pageable → device: a host-to-device or device-to-device kind; device →
/// pageable: a device-to-host or device-to-device kind), else `ACL_ERROR_RT_PARAM_INVALID`.
/// Kinds outside `aclrtMemcpyKind` are `ACL_ERROR_INVALID_PARAM`.
pub fn resolve_locs(kind: i32, dst: u64, dl: Loc, src: u64, sl: Loc) -> Result<Dir> {
    if !(0..=7).contains(&kind) {
        return Err(Error::invalid(format!(
            "kind {kind} is not an aclrtMemcpyKind (expected 0..=7)"
        )));
    }
    let dir = Dir {
        dst_dev: dl == Loc::Device,
        src_dev: sl == Loc::Device,
    };
    let (allowed, names): (&[i32], &str) = match (sl, dl) {
        (Loc::Pageable, Loc::Device) => (
            &[1, 3, 4, 5, 6, 7],
            "ACL_MEMCPY_HOST_TO_DEVICE or ACL_MEMCPY_DEFAULT",
        ),
        (Loc::Device, Loc::Pageable) => (
            &[2, 3, 4, 6, 7],
            "ACL_MEMCPY_DEVICE_TO_HOST or ACL_MEMCPY_DEFAULT",
        ),
        _ => return Ok(dir),
    };
    if allowed.contains(&kind) {
        return Ok(dir);
    }
    Err(Error::new(
        ACL_ERROR_RT_PARAM_INVALID,
        format!(
            "kind {} does not fit a copy from {} (src) to {} (dst): with host memory not from \
             aclrtMallocHost the kind must name the direction ({names})",
            kind_name(kind),
            loc_text(sl, src),
            loc_text(dl, dst),
        ),
    ))
}

/// [`resolve_locs`] with the locations looked up (`space` knows the ACL host memory; `None`
/// before `aclInit`).
pub fn resolve<S: Space + ?Sized>(space: Option<&S>, kind: i32, dst: u64, src: u64) -> Result<Dir> {
    resolve_locs(kind, dst, locate(space, dst), src, locate(space, src))
}

/// Whether the host end of a host↔device copy is pageable memory (CANN then runs an async
/// copy synchronously: the stream is synchronized and the copy done before returning).
pub fn pageable_host_end<S: Space + ?Sized>(space: &S, dst: u64, src: u64, dir: Dir) -> bool {
    if dir.dst_dev == dir.src_dev {
        return false;
    }
    let host = if dir.dst_dev { src } else { dst };
    locate(Some(space), host) == Loc::Pageable
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::ACL_ERROR_INVALID_PARAM;

    #[test]
    fn kinds_follow_the_pointers() {
        use Loc::*;
        let dev = crate::memory::device_addr(1, 4096);
        let host = 0x7fff_1234_0000u64;
        let h2d = Dir {
            dst_dev: true,
            src_dev: false,
        };
        let d2d = Dir {
            dst_dev: true,
            src_dev: true,
        };
        // Known locations force the direction whatever the kind.
        assert_eq!(resolve_locs(2, dev, Device, host, Pinned).unwrap(), h2d);
        assert_eq!(resolve_locs(0, dev, Device, dev, Device).unwrap(), d2d);
        // Pageable host memory: the kind must allow the direction.
        assert_eq!(resolve_locs(1, dev, Device, host, Pageable).unwrap(), h2d);
        assert_eq!(resolve_locs(4, dev, Device, host, Pageable).unwrap(), h2d);
        let e = resolve_locs(2, dev, Device, host, Pageable).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(e.msg.contains("pageable host memory"), "{}", e.msg);
        assert!(e.msg.contains("device 1"), "{}", e.msg);
        assert!(resolve_locs(0, host, Pageable, dev, Device).is_err());
        assert!(resolve_locs(2, host, Pageable, dev, Device).is_ok());
        // Host to host: any kind.
        assert!(resolve_locs(1, host, Pageable, host, Pageable).is_ok());
        assert_eq!(
            resolve_locs(8, host, Pageable, host, Pageable)
                .unwrap_err()
                .code,
            ACL_ERROR_INVALID_PARAM
        );
    }
}
