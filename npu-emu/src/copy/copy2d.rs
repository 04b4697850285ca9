//! Pitched 2-D copies (`aclrtMemcpy2d`, `aclrtMemcpy2dAsync`): `height` rows of `width`
//! bytes, rows `dpitch` / `spitch` bytes apart.

use super::direction::{
    kind_name, pageable_host_end, resolve, Dir, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
};
use super::linear::check_peer;
use super::{enqueue, translate};
use crate::codes::{ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID};
use crate::memory::Space;
use crate::stream::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// Largest 2-D copy height CANN accepts.
pub const MEMCPY2D_MAX_HEIGHT: usize = 5 * 1024 * 1024;
/// Largest 2-D copy width CANN accepts.
pub const MEMCPY2D_MAX_WIDTH: usize = 5_000_000;

/// A 2-D copy after validation.
#[derive(Clone, Copy, Debug)]
pub struct Copy2d {
    dst: u64,
    dpitch: u64,
    src: u64,
    spitch: u64,
    width: u64,
    height: u64,
    dir: Dir,
}

impl Copy2d {
    /// Validate a 2-D copy of non-NULL `dst` and `src` (S1 `CheckMemcpy2dParam`,
    /// `MemCopy2DCheckParam`): pitches smaller than the width are `ACL_ERROR_INVALID_PARAM`;
    /// width above 5000000 or height above 5242880 is `ACL_ERROR_RT_PARAM_INVALID`. The
    /// synchronous copy supports host-to-device and device-to-host; the asynchronous one
    /// (`allow_d2d`) also device-to-device (A2/A3). The caller refuses NULL pointers and
    /// `width == 0 || height == 0` first (`ACL_ERROR_INVALID_PARAM`).
    #[allow(clippy::too_many_arguments)]
    pub fn check<S: Space + ?Sized>(
        space: &S,
        dst: u64,
        dpitch: usize,
        src: u64,
        spitch: usize,
        width: usize,
        height: usize,
        kind: i32,
        allow_d2d: bool,
    ) -> Result<Copy2d> {
        if dpitch < width {
            return Err(Error::invalid(format!(
                "dpitch {dpitch} is smaller than width {width}"
            )));
        }
        if spitch < width {
            return Err(Error::invalid(format!(
                "spitch {spitch} is smaller than width {width}"
            )));
        }
        if width > MEMCPY2D_MAX_WIDTH {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("width {width} is larger than the maximum {MEMCPY2D_MAX_WIDTH}"),
            ));
        }
        if height > MEMCPY2D_MAX_HEIGHT {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("height {height} is larger than the maximum {MEMCPY2D_MAX_HEIGHT}"),
            ));
        }
        let dir = resolve(Some(space), kind, dst, src)?;
        if dir.dst_dev == dir.src_dev && !(allow_d2d && dir.dst_dev) {
            return Err(unsupported(dir, kind, allow_d2d));
        }
        // The last row's end must not overflow the address space.
        for (arg, base, pitch) in [("dst", dst, dpitch as u64), ("src", src, spitch as u64)] {
            (height as u64 - 1)
                .checked_mul(pitch)
                .and_then(|o| o.checked_add(width as u64))
                .and_then(|o| o.checked_add(base))
                .ok_or_else(|| {
                    Error::invalid(format!("{arg} + (height-1)*pitch + width overflows"))
                })?;
        }
        Ok(Copy2d {
            dst,
            dpitch: dpitch as u64,
            src,
            spitch: spitch as u64,
            width: width as u64,
            height: height as u64,
            dir,
        })
    }

    /// Check every row (without copying).
    pub fn check_rows<S: Space + ?Sized>(&self, space: &S) -> Result<()> {
        if self.width == 0 {
            return Ok(());
        }
        for r in 0..self.height {
            let what_d = format!("dst (row {r})");
            let what_s = format!("src (row {r})");
            translate(
                space,
                self.dst + r * self.dpitch,
                self.width,
                self.dir.dst_dev,
                &what_d,
            )?;
            translate(
                space,
                self.src + r * self.spitch,
                self.width,
                self.dir.src_dev,
                &what_s,
            )?;
        }
        Ok(())
    }

    /// Check all rows, then copy them: a bad row copies nothing.
    ///
    /// # Safety
    /// Pageable host rows (host memory the runtime does not know) must be valid; device
    /// rows and ACL host memory are checked here.
    pub unsafe fn run<S: Space + ?Sized>(&self, space: &S) -> Result<()> {
        let _hold = space.hold_host();
        self.check_rows(space)?;
        if self.width == 0 {
            return Ok(());
        }
        for r in 0..self.height {
            let d = translate(
                space,
                self.dst + r * self.dpitch,
                self.width,
                self.dir.dst_dev,
                "dst",
            )?;
            let s = translate(
                space,
                self.src + r * self.spitch,
                self.width,
                self.dir.src_dev,
                "src",
            )?;
            // SAFETY: checked above (device, ACL host memory) or valid by this function's
            // contract (pageable host memory); `copy` allows overlap.
            unsafe { std::ptr::copy(s, d, self.width as usize) };
        }
        Ok(())
    }

    /// `aclrtMemcpy2dAsync` once validated and the stream is known: rows and peer access
    /// checked now, then run on `stream`; with pageable host memory it completes before
    /// returning, as in CANN.
    ///
    /// # Safety
    /// As [`Copy2d::run`], and host rows must stay valid until the stream has run the copy.
    pub unsafe fn submit<S>(self, space: &Arc<S>, stream: &Stream, api: &'static str) -> Result<()>
    where
        S: Space + Send + Sync + 'static,
    {
        self.check_rows(&**space)?;
        check_peer(&**space, self.dst, self.src, self.dir)?;
        if pageable_host_end(&**space, self.dst, self.src, self.dir) {
            stream.synchronize(None)?;
            // SAFETY: the caller's contract is this function's.
            return unsafe { self.run(&**space) };
        }
        enqueue(space, stream, api, move |space| {
            // SAFETY: rows are re-checked by `run`; host rows stay valid until the stream ran
            // the copy by this function's contract.
            unsafe { self.run(space) }
        })
    }
}

/// A host-to-host or (synchronous) device-to-device 2-D copy. CANN's ACL layer refuses a
/// kind outside H2D, D2H, DEFAULT (and D2D when asynchronous) with
/// `ACL_ERROR_INVALID_PARAM`; an accepted kind whose pointers make the copy host-to-host or
/// device-to-device is refused by the runtime (`RT_ERROR_INVALID_VALUE` →
/// `ACL_ERROR_RT_PARAM_INVALID`).
fn unsupported(dir: Dir, kind: i32, allow_d2d: bool) -> Error {
    let accepted = kind == ACL_MEMCPY_HOST_TO_DEVICE
        || kind == ACL_MEMCPY_DEVICE_TO_HOST
        || kind == ACL_MEMCPY_DEFAULT
        || (allow_d2d && kind == ACL_MEMCPY_DEVICE_TO_DEVICE);
    let code = if accepted {
        ACL_ERROR_RT_PARAM_INVALID
    } else {
        ACL_ERROR_INVALID_PARAM
    };
    Error::new(
        code,
        format!(
            "{} copy ({}): CANN supports only ACL_MEMCPY_HOST_TO_DEVICE and \
             ACL_MEMCPY_DEVICE_TO_HOST{} for {} 2-D copies",
            if dir.dst_dev {
                "device-to-device"
            } else {
                "host-to-host"
            },
            kind_name(kind),
            if allow_d2d {
                " (and ACL_MEMCPY_DEVICE_TO_DEVICE)"
            } else {
                ""
            },
            if allow_d2d {
                "asynchronous"
            } else {
                "synchronous"
            },
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::direction::{ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_HOST};
    use crate::copy::testing::TestSpace;

    #[test]
    fn limits_and_directions() {
        let sp = TestSpace::new("copy2d-limits", 1);
        let d = sp.alloc(0, 4096);
        let h = vec![0u8; 4096];
        let hp = h.as_ptr() as u64;
        let check = |dp, sp_, w, ht, kind, d2d| {
            Copy2d::check(&*sp, d, dp, hp, sp_, w, ht, kind, d2d).map(|_| ())
        };
        let e = check(8, 16, 16, 2, ACL_MEMCPY_HOST_TO_DEVICE, false).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_INVALID_PARAM);
        assert!(
            e.msg.contains("dpitch 8 is smaller than width 16"),
            "{}",
            e.msg
        );
        let w = MEMCPY2D_MAX_WIDTH + 1;
        let e = check(w, w, w, 1, ACL_MEMCPY_HOST_TO_DEVICE, false).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        let e = check(16, 16, 16, MEMCPY2D_MAX_HEIGHT + 1, 1, false).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        // Device to device: asynchronous only; the code depends on the kind.
        let d2d = |kind, allow| Copy2d::check(&*sp, d, 16, d + 2048, 16, 16, 2, kind, allow);
        let e = d2d(ACL_MEMCPY_DEVICE_TO_HOST, false).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(e.msg.contains("device-to-device"), "{}", e.msg);
        let e = d2d(ACL_MEMCPY_HOST_TO_HOST, false).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_INVALID_PARAM);
        assert!(d2d(ACL_MEMCPY_DEVICE_TO_DEVICE, true).is_ok());
    }

    #[test]
    fn rows_are_copied_and_a_bad_row_copies_nothing() {
        let sp = TestSpace::new("copy2d-rows", 1);
        let d = sp.alloc(0, 64);
        // 4 rows of 8 bytes, source pitch 10, destination pitch 16.
        let src: Vec<u8> = (0..40).collect();
        let c = Copy2d::check(&*sp, d, 16, src.as_ptr() as u64, 10, 8, 4, 1, false).unwrap();
        // SAFETY: src holds 40 bytes, the pageable source of 4 rows of pitch 10.
        unsafe { c.run(&*sp) }.unwrap();
        let got = sp.read(d, 64);
        for r in 0..4 {
            assert_eq!(
                &got[r * 16..r * 16 + 8],
                &src[r * 10..r * 10 + 8],
                "row {r}"
            );
            assert_eq!(
                &got[r * 16 + 8..r * 16 + 16],
                &[0u8; 8],
                "gap after row {r}"
            );
        }
        // Five rows of pitch 16 need 72 bytes: row 4 is past the end.
        let ones = [1u8; 80];
        let c = Copy2d::check(&*sp, d, 16, ones.as_ptr() as u64, 16, 8, 5, 1, false).unwrap();
        // SAFETY: ones holds 80 bytes.
        let e = unsafe { c.run(&*sp) }.unwrap_err();
        assert!(e.msg.contains("dst (row 4)"), "{}", e.msg);
        assert_eq!(sp.read(d, 64), got, "nothing was copied");
    }
}
