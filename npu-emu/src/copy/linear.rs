//! One contiguous copy (`aclrtMemcpy`, `aclrtMemcpyAsync`): range checks, the peer-access
//! rule between devices, the copy itself and its asynchronous forms.

use super::direction::{pageable_host_end, resolve, Dir};
use super::{enqueue, on_stream, op_kind, translate};
use crate::codes::{ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_NO_PERMISSION};
use crate::memory::Space;
use crate::stream::{Op, Stream};
use crate::{Error, Result};
use std::sync::Arc;

/// Check both ends of a copy of `count` bytes and give the pointers to copy between.
pub fn check<S: Space + ?Sized>(
    space: &S,
    dst: u64,
    src: u64,
    count: u64,
    dir: Dir,
) -> Result<(*mut u8, *const u8)> {
    let d = translate(space, dst, count, dir.dst_dev, "dst")?;
    let s = translate(space, src, count, dir.src_dev, "src")?;
    Ok((d, s))
}

/// A device-to-device copy between two different devices needs peer access between them
/// (`aclrtDeviceEnablePeerAccess`, either direction), as on hardware; else
/// `ACL_ERROR_RT_NO_PERMISSION` (an emulator decision: CANN's code is not documented).
pub fn check_peer<S: Space + ?Sized>(space: &S, dst: u64, src: u64, dir: Dir) -> Result<()> {
    if !(dir.dst_dev && dir.src_dev) {
        return Ok(());
    }
    let node = space.node();
    let d = space.logical_of(node.phys(dst, 1, "dst")?.device);
    let s = space.logical_of(node.phys(src, 1, "src")?.device);
    if d == s || space.peer_access(d, s) {
        return Ok(());
    }
    Err(Error::new(
        ACL_ERROR_RT_NO_PERMISSION,
        format!(
            "copy from device {s} (src {src:#x}) to device {d} (dst {dst:#x}) needs peer \
             access between the two devices: call aclrtDeviceEnablePeerAccess first"
        ),
    ))
}

/// Check and copy `count` bytes (overlap allowed: a device-to-device copy within one
/// allocation). Nothing is touched if a range check fails.
///
/// # Safety
/// A pageable host end (host memory the runtime does not know) must be valid for `count`
/// bytes; device ranges and ACL host memory are checked here.
pub unsafe fn copy<S: Space + ?Sized>(
    space: &S,
    dst: u64,
    src: u64,
    count: u64,
    dir: Dir,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let _hold = space.hold_host();
    let (d, s) = check(space, dst, src, count, dir)?;
    // SAFETY: device ranges and ACL host ranges were just checked; pageable host ranges are
    // valid by this function's contract. `copy` allows overlap.
    unsafe { std::ptr::copy(s, d, count as usize) };
    Ok(())
}

/// `aclrtMemcpy` between two host ranges (no runtime needed: `space` is `None` before
/// `aclInit`; with a runtime, ACL host memory is range-checked).
///
/// # Safety
/// As [`copy`]: pageable host ranges must be valid for `count` bytes.
pub unsafe fn copy_host<S: Space + ?Sized>(
    space: Option<&S>,
    kind: i32,
    dst: u64,
    src: u64,
    count: u64,
) -> Result<()> {
    let dir = resolve(space, kind, dst, src)?;
    if let Some(space) = space {
        // SAFETY: the caller's contract is this function's.
        return unsafe { copy(space, dst, src, count, dir) };
    }
    // SAFETY: both ends are host ranges, valid by this function's contract.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count as usize) };
    Ok(())
}

/// `aclrtMemcpy` with at least one device end: direction, ranges, peer access, then the
/// copy.
///
/// # Safety
/// As [`copy`].
pub unsafe fn copy_sync<S: Space + ?Sized>(
    space: &S,
    kind: i32,
    dst: u64,
    src: u64,
    count: u64,
) -> Result<()> {
    let dir = resolve(Some(space), kind, dst, src)?;
    check(space, dst, src, count, dir)?;
    check_peer(space, dst, src, dir)?;
    // SAFETY: the caller's contract is this function's.
    unsafe { copy(space, dst, src, count, dir) }
}

/// `aclrtMemcpyAsync` once its direction is known: checked now, then run on `stream` in
/// order with its other tasks. With pageable host memory the stream is synchronized and the
/// copy done before returning (CANN). `staged` (`ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE` from a
/// host source) copies the host data into a staging buffer now, so the program may reuse
/// its buffer as soon as the call returns.
///
/// # Safety
/// As [`copy`], and a host range that is not staged must stay valid until the stream has
/// run the copy (the program's contract in CANN).
#[allow(clippy::too_many_arguments)]
pub unsafe fn copy_async<S>(
    space: &Arc<S>,
    stream: &Stream,
    api: &'static str,
    dst: u64,
    src: u64,
    n: u64,
    dir: Dir,
    staged: bool,
) -> Result<()>
where
    S: Space + Send + Sync + 'static,
{
    if n == 0 {
        return Ok(());
    }
    check(&**space, dst, src, n, dir)?;
    check_peer(&**space, dst, src, dir)?;
    if pageable_host_end(&**space, dst, src, dir) {
        stream.synchronize(None)?;
        // SAFETY: the caller's contract is this function's.
        return unsafe { copy(&**space, dst, src, n, dir) };
    }
    if staged && !dir.src_dev {
        let n = usize::try_from(n).map_err(|_| Error::invalid("count too large"))?;
        let mut buf: Vec<u8> = Vec::new();
        buf.try_reserve_exact(n).map_err(|_| {
            Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("out of host memory for a {n}-byte staging buffer"),
            )
        })?;
        buf.resize(n, 0);
        // SAFETY: the host source is valid for n bytes (checked above if it is ACL host
        // memory, else by this function's contract); buf holds n bytes.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, buf.as_mut_ptr(), n) };
        let space = space.clone();
        // The staged data goes with the operation: a model replays the data of the call.
        return stream.enqueue_op(Op::run(op_kind(api), api, move || {
            let _hold = space.hold_host();
            let p = translate(&*space, dst, n as u64, dir.dst_dev, "dst")
                .map_err(|e| on_stream(api, e))?;
            // SAFETY: the destination was just checked (device memory or ACL host memory);
            // buf is our own.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p, n) };
            Ok(())
        }));
    }
    // ACL host memory at either end is the runtime's to check: it must still be there when
    // the stream runs the copy (aclrtFreeHost in between is an error then, as for device
    // memory, never a read or write of freed memory).
    let pinned = |addr: u64, dev: bool| (!dev).then(|| space.host_range(addr)).flatten();
    let (dst_pin, src_pin) = (pinned(dst, dir.dst_dev), pinned(src, dir.src_dev));
    enqueue(space, stream, api, move |space| {
        for (addr, was, what) in [(dst, dst_pin, "dst"), (src, src_pin, "src")] {
            let Some((start, size)) = was else { continue };
            if space.host_range(addr) != Some((start, size)) {
                return Err(Error::invalid(format!(
                    "{what} {addr:#x} lies in host memory from aclrtMallocHost ({start:#x}, \
                     {size} bytes) that was freed after the copy was queued and before the \
                     stream ran it; host memory of an asynchronous copy must stay allocated \
                     until the stream is synchronized"
                )));
            }
        }
        // SAFETY: re-checked by `copy`; ACL host ranges were just found still allocated;
        // pageable host ranges stay valid until the stream ran the copy by this
        // function's contract.
        unsafe { copy(space, dst, src, n, dir) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::{ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID};
    use crate::copy::direction::{
        ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
    };
    use crate::copy::testing::TestSpace;

    #[test]
    fn copies_both_ways_and_checks_ranges_before_touching() {
        let sp = TestSpace::new("copy-linear", 1);
        let d = sp.alloc(0, 64);
        let src: Vec<u8> = (0..64).collect();
        // SAFETY: src and back are live host buffers of 64 bytes.
        unsafe {
            copy_sync(&*sp, ACL_MEMCPY_HOST_TO_DEVICE, d, src.as_ptr() as u64, 64).unwrap();
        }
        assert_eq!(sp.read(d, 64), src);
        let mut back = vec![0u8; 64];
        // SAFETY: as above.
        unsafe {
            copy_sync(
                &*sp,
                ACL_MEMCPY_DEVICE_TO_HOST,
                back.as_mut_ptr() as u64,
                d,
                64,
            )
            .unwrap();
        }
        assert_eq!(back, src);

        // One byte past the allocation: an error naming it, and nothing copied.
        let big = [0xEEu8; 65];
        // SAFETY: big is a live host buffer of 65 bytes.
        let e = unsafe { copy_sync(&*sp, ACL_MEMCPY_HOST_TO_DEVICE, d, big.as_ptr() as u64, 65) }
            .unwrap_err();
        assert_eq!(e.code, ACL_ERROR_INVALID_PARAM);
        assert!(
            e.msg.contains("dst") && e.msg.contains("runs past the end"),
            "{}",
            e.msg
        );
        assert_eq!(sp.read(d, 64), src);

        // Pageable host memory with a kind of the other direction.
        // SAFETY: as above.
        let e = unsafe { copy_sync(&*sp, ACL_MEMCPY_DEVICE_TO_HOST, d, src.as_ptr() as u64, 8) }
            .unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn acl_host_memory_is_checked_against_its_end() {
        let sp = TestSpace::new("copy-pinned", 1);
        let d = sp.alloc(0, 64);
        let mut pinned = vec![7u8; 32];
        let h = sp.pin(&mut pinned);
        // SAFETY: the only host range is pinned and range-checked.
        let e = unsafe { copy_sync(&*sp, ACL_MEMCPY_HOST_TO_DEVICE, d, h, 40) }.unwrap_err();
        assert!(e.msg.contains("src range"), "{}", e.msg);
        assert!(e.msg.contains("by 8 bytes"), "{}", e.msg);
        // With pinned memory the kind is ignored: the pointers decide.
        // SAFETY: as above.
        unsafe { copy_sync(&*sp, ACL_MEMCPY_DEVICE_TO_HOST, d, h, 32) }.unwrap();
        assert_eq!(sp.read(d, 32), vec![7u8; 32]);
    }

    #[test]
    fn devices_need_peer_access() {
        let sp = TestSpace::new("copy-peer", 2);
        let (a, b) = (sp.alloc(0, 64), sp.alloc(1, 64));
        sp.write(a, &[5u8; 64]);
        // SAFETY: device memory only.
        let e =
            unsafe { copy_sync(&*sp, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, b, a, 64) }.unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_NO_PERMISSION);
        assert!(
            e.msg.contains("from device 0") && e.msg.contains("to device 1"),
            "{}",
            e.msg
        );
        assert!(e.msg.contains("needs peer access"), "{}", e.msg);
        sp.peers.lock().insert((1, 0));
        // SAFETY: device memory only.
        unsafe { copy_sync(&*sp, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, b, a, 64) }.unwrap();
        assert_eq!(sp.read(b, 64), vec![5u8; 64]);
    }

    #[test]
    fn async_copies_run_on_the_stream_and_staging_takes_the_data_now() {
        let sp = TestSpace::new("copy-async", 1);
        let d = sp.alloc(0, 64);
        let s = Stream::new("copy-test").unwrap();
        let dir = Dir {
            dst_dev: true,
            src_dev: false,
        };
        let mut host = vec![1u8; 64];
        let h = sp.pin(&mut host);
        // Block the stream so the copies wait until the host buffer has been reused.
        let gate = Arc::new(std::sync::Barrier::new(2));
        let g = gate.clone();
        s.enqueue(Box::new(move || {
            g.wait();
            Ok(())
        }))
        .unwrap();
        // SAFETY: host stays alive until the stream is synchronized below.
        unsafe { copy_async(&sp, &s, "test", d, h, 32, dir, true) }.unwrap();
        // SAFETY: as above.
        unsafe { copy_async(&sp, &s, "test", d + 32, h + 32, 32, dir, false) }.unwrap();
        host.iter_mut().for_each(|b| *b = 2);
        gate.wait();
        s.synchronize(None).unwrap();
        let got = sp.read(d, 64);
        assert_eq!(&got[..32], &[1u8; 32], "staged: the data of the call");
        assert_eq!(
            &got[32..],
            &[2u8; 32],
            "not staged: the data when the stream ran"
        );

        // The staged kind with a device source (the pointers decide the direction) is a
        // plain device copy: nothing is read from device memory on the host.
        let d2 = sp.alloc(0, 64);
        let d2d = Dir {
            dst_dev: true,
            src_dev: true,
        };
        // SAFETY: device memory only.
        unsafe { copy_async(&sp, &s, "test", d2, d, 64, d2d, true) }.unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(sp.read(d2, 64), got);

        // A copy whose memory is freed before the stream runs it fails there, by name.
        let g = gate.clone();
        s.enqueue(Box::new(move || {
            g.wait();
            Ok(())
        }))
        .unwrap();
        // SAFETY: as above.
        unsafe { copy_async(&sp, &s, "test", d, h, 8, dir, false) }.unwrap();
        sp.node.free(d).unwrap();
        gate.wait();
        let e = s.synchronize(None).unwrap_err();
        assert!(
            e.msg.starts_with("test (run on the stream): dst"),
            "{}",
            e.msg
        );

        // ACL host memory freed (aclrtFreeHost) before the stream runs the copy: an error
        // there, in both directions, and nothing read or written.
        let d3 = sp.alloc(0, 64);
        sp.write(d3, &[9u8; 64]);
        for (to_dev, what) in [(true, "src"), (false, "dst")] {
            let g = gate.clone();
            s.enqueue(Box::new(move || {
                g.wait();
                Ok(())
            }))
            .unwrap();
            let dirn = Dir {
                dst_dev: to_dev,
                src_dev: !to_dev,
            };
            let (dst, src) = if to_dev { (d3, h) } else { (h, d3) };
            // SAFETY: host stays alive; the runtime forgets it below (aclrtFreeHost).
            unsafe { copy_async(&sp, &s, "test", dst, src, 64, dirn, false) }.unwrap();
            sp.host.lock().clear();
            gate.wait();
            let e = s.synchronize(None).unwrap_err();
            assert!(
                e.msg.contains(&format!(
                    "{what} {h:#x} lies in host memory from aclrtMallocHost"
                )) && e.msg.contains("was freed after the copy was queued"),
                "{}",
                e.msg
            );
            sp.host.lock().push((h, 64));
        }
        assert_eq!(sp.read(d3, 64), vec![9u8; 64], "nothing copied");
        drop(host);
    }
}
