//! Fills (`aclrtMemset`, `aclrtMemsetAsync`): device memory, or host memory from
//! `aclrtMallocHost` / `aclrtHostRegister` (anything else is undefined in CANN and an error
//! here). Every range is checked, so filling is safe.

use super::enqueue;
use crate::memory::{is_canonical, Space};
use crate::stream::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// Check a fill target of `n` bytes at `addr` and return the pointer to write.
pub fn target<S: Space + ?Sized>(space: &S, addr: u64, n: u64) -> Result<*mut u8> {
    if is_canonical(addr) {
        return space.node().check(addr, n, "devPtr");
    }
    match space.host_range(addr) {
        Some((s, size)) if addr.checked_add(n).is_some_and(|e| e <= s + size) => {
            Ok(addr as *mut u8)
        }
        Some((s, size)) => Err(Error::invalid(format!(
            "devPtr {addr:#x} + count {n} runs past the end of the host allocation {s:#x} \
             ({size} bytes) by {} bytes",
            addr.saturating_add(n) - (s + size)
        ))),
        None => Err(Error::invalid(format!(
            "devPtr {addr:#x} is neither device memory nor host memory from aclrtMallocHost \
             (CANN: undefined behaviour)"
        ))),
    }
}

/// Fill `n` bytes at `addr` with `value`, now.
pub fn fill<S: Space + ?Sized>(space: &S, addr: u64, value: u8, n: u64) -> Result<()> {
    let _hold = space.hold_host();
    let p = target(space, addr, n)?;
    // SAFETY: `target` checked that n bytes at p lie in a live device allocation or in ACL
    // host memory, which `_hold` keeps from being freed until the write is done.
    unsafe { std::ptr::write_bytes(p, value, n as usize) };
    Ok(())
}

/// Fill on `stream`: checked now and again when the stream runs it.
pub fn fill_async<S>(
    space: &Arc<S>,
    stream: &Stream,
    api: &'static str,
    addr: u64,
    value: u8,
    n: u64,
) -> Result<()>
where
    S: Space + Send + Sync + 'static,
{
    target(&**space, addr, n)?;
    enqueue(space, stream, api, move |space| fill(space, addr, value, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::testing::TestSpace;

    #[test]
    fn device_and_acl_host_memory_only() {
        let sp = TestSpace::new("memset", 1);
        let d = sp.alloc(0, 64);
        fill(&*sp, d + 8, 0xAB, 16).unwrap();
        let got = sp.read(d, 32);
        assert_eq!(&got[8..24], &[0xABu8; 16]);
        assert_eq!(&got[..8], &[0u8; 8]);
        let e = fill(&*sp, d + 60, 1, 8).unwrap_err();
        assert!(e.msg.contains("runs past the end"), "{}", e.msg);

        let mut pageable = vec![0u8; 16];
        let e = fill(&*sp, pageable.as_mut_ptr() as u64, 1, 16).unwrap_err();
        assert!(e.msg.contains("neither device memory"), "{}", e.msg);
        let mut pinned = vec![0u8; 16];
        let h = sp.pin(&mut pinned);
        let e = fill(&*sp, h + 8, 1, 16).unwrap_err();
        assert!(e.msg.contains("by 8 bytes"), "{}", e.msg);
        fill(&*sp, h, 3, 16).unwrap();
        assert_eq!(pinned, vec![3u8; 16]);
    }

    #[test]
    fn async_fill_is_rechecked_on_the_stream() {
        let sp = TestSpace::new("memset-async", 1);
        let d = sp.alloc(0, 64);
        let s = Stream::new("memset-test").unwrap();
        fill_async(&sp, &s, "test", d, 7, 64).unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(sp.read(d, 64), vec![7u8; 64]);
    }
}
