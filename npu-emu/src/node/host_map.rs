//! Host memory mapped into a device's address space (`aclrtHostRegister`,
//! `aclrtHostRegisterV2` with `ACL_HOST_REG_MAPPED`).
//!
//! On Ascend hardware a registered host range gets a device address whose memory *is* the
//! host memory: kernels, operators and copies use the device address, the program keeps
//! using the host pointer, and each sees the other's writes. The emulator's device memory
//! is the node's HBM file of each device, reached through a device address's physical
//! location ([`Node::phys`]); so the same holds here when the host pages themselves become
//! pages of that file:
//!
//! - [`Node::map_host`] takes a page-aligned, page-sized range of the device's HBM (an
//!   allocation of this process like any other, its backing reserved at once), copies the
//!   host bytes into it, then maps that range of the HBM file over the host pages with
//!   `MAP_SHARED | MAP_FIXED` (read-write). From then on the host pointer, the canonical
//!   device address and the emulator's alias are three views of the same pages. The
//!   allocation is marked as host-mapped: `aclrtFree` of it is refused.
//! - [`Node::unmap_host`] copies the current bytes into fresh private anonymous pages and
//!   moves them over the host range with `mremap(MREMAP_FIXED)` (one atomic replacement:
//!   the host range is never unmapped in between), then frees the device range.
//! - When the node is dropped (`aclFinalize`) every range still mapped is put back the same
//!   way before the slabs go back to the node, so host memory never aliases HBM another
//!   process may be given.
//!
//! Limits (documented, not checked): bytes the program writes through the host pointer
//! from another thread *while* the call copies are lost (registration and unregistration
//! are not concurrent with uses of the memory in CANN either); the pages keep read-write
//! protection whatever they had; a `fork()` child shares (instead of copying) the pages
//! registered at the time of the fork; the whole pages covering the range are mapped, so
//! bytes of the last partial page past `size` are shared too (they keep their contents).

use super::{Inner, Node};
use crate::codes::{ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_MEMORY_ALLOCATION};
use crate::error::{Error, Result};
use crate::memory::{device_addr, AllocInfo};
use std::os::fd::AsRawFd;

/// Host pages are 4 KiB (the rule of `aclrtHostRegister`: "Host内存地址需4K页对齐").
pub const HOST_PAGE: u64 = 4096;

/// A host range mapped over device memory (in [`Inner::host_maps`], by device address).
#[derive(Clone, Copy, Debug)]
pub(super) struct HostMap {
    /// Host start address (page-aligned).
    pub host: u64,
    /// Bytes mapped (whole pages).
    pub len: u64,
}

/// Whether every page of `[addr, addr+len)` is mapped in this process.
fn is_mapped(addr: u64, len: u64) -> bool {
    let mut v = vec![0u8; len.div_ceil(HOST_PAGE) as usize];
    // SAFETY: mincore only reads the page tables; `v` has one byte per page.
    unsafe { libc::mincore(addr as *mut libc::c_void, len as usize, v.as_mut_ptr()) == 0 }
}

/// Put private anonymous pages holding the current bytes of `[host, host+len)` in place of
/// the shared mapping there.
fn restore_private(host: u64, len: u64) -> Result<()> {
    // SAFETY: a fresh anonymous mapping chosen by the kernel.
    let tmp = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if tmp == libc::MAP_FAILED {
        return Err(Error::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!(
                "cannot allocate {len} bytes of host memory to take back the registered range \
                 {host:#x}: {}",
                std::io::Error::last_os_error()
            ),
        ));
    }
    // SAFETY: both ranges are `len` readable/writable bytes (the host range is our shared
    // mapping) and distinct mappings.
    unsafe { std::ptr::copy_nonoverlapping(host as *const u8, tmp as *mut u8, len as usize) };
    // SAFETY: moves our fresh mapping over the host range (which this node mapped); the
    // old mapping there is replaced atomically.
    let r = unsafe {
        libc::mremap(
            tmp,
            len as usize,
            len as usize,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            host as *mut libc::c_void,
        )
    };
    if r == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        // SAFETY: our temporary mapping, not moved.
        unsafe { libc::munmap(tmp, len as usize) };
        return Err(Error::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("cannot put private pages back at the registered host range {host:#x}: {e}"),
        ));
    }
    Ok(())
}

impl Node {
    /// Map the host range `[host, host+len)` (page-aligned, `len` a multiple of
    /// [`HOST_PAGE`]) into physical device `device`'s memory (see the module
    /// documentation). Returns the device allocation that now *is* the host memory.
    pub fn map_host(&self, device: u32, host: u64, len: u64) -> Result<AllocInfo> {
        self.check_device(device, "map_host")?;
        self.check_owner()?;
        if !host.is_multiple_of(HOST_PAGE) || !len.is_multiple_of(HOST_PAGE) || len == 0 {
            return Err(Error::invalid(format!(
                "host range {host:#x}+{len} is not whole 4 KiB pages"
            )));
        }
        if len > self.sh.hbm_size {
            return Err(Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "cannot map {len} bytes of host memory into device {device}: more than its \
                     {} bytes of device address space",
                    self.sh.hbm_size
                ),
            ));
        }
        if !is_mapped(host, len) {
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "host range {host:#x}+{len} is not (entirely) memory of this process: \
                     part of it is not mapped"
                ),
            ));
        }
        let mut inner = self.inner.lock();
        let off = match self.take(&mut inner, device, len, HOST_PAGE, false) {
            Err(e) if e.code == ACL_ERROR_RT_MEMORY_ALLOCATION && self.settle(&mut inner) => {
                self.take(&mut inner, device, len, HOST_PAGE, false)?
            }
            r => r?,
        };
        let alias = self.alias_ptr(device, off);
        // SAFETY: the host range is mapped (checked above; the program's memory by the API
        // contract) and the alias range is `len` bytes of the allocation just taken.
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, alias, len as usize) };
        let fd = self.sh.hbm[device as usize].as_raw_fd();
        // SAFETY: replaces the program's pages at `host` (whole pages it registered) with
        // the same bytes in the HBM file; the file range is ours and reserved.
        let p = unsafe {
            libc::mmap(
                host as *mut libc::c_void,
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED || p as u64 != host {
            let e = std::io::Error::last_os_error();
            self.give(&mut inner, device, off, len);
            return Err(Error::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("cannot map device memory over the host range {host:#x}+{len}: {e}"),
            ));
        }
        inner.next_serial += 1;
        let info = AllocInfo {
            addr: device_addr(device, off),
            size: len,
            requested: len,
            device,
            serial: inner.next_serial,
        };
        inner.allocs.insert(info.addr, info);
        inner.host_maps.insert(info.addr, HostMap { host, len });
        self.bytes_add(device, len);
        Ok(info)
    }

    /// Undo [`Node::map_host`] for the mapping at device address `addr`: the host range gets
    /// private pages with the current bytes back and the device range is freed.
    pub fn unmap_host(&self, addr: u64) -> Result<()> {
        self.check_owner()?;
        let mut inner = self.inner.lock();
        let Some(m) = inner.host_maps.get(&addr).copied() else {
            return Err(Error::invalid(format!(
                "device address {addr:#x} is not host memory mapped by aclrtHostRegister"
            )));
        };
        restore_private(m.host, m.len)?;
        inner.host_maps.remove(&addr);
        self.free_locked(&mut inner, addr)?;
        Ok(())
    }

    /// The host range mapped at device allocation `addr`, if it is one: (host, len).
    pub fn host_mapping(&self, addr: u64) -> Option<(u64, u64)> {
        let inner = self.inner.lock();
        let (&start, m) = inner.host_maps.range(..=addr).next_back()?;
        (addr < start + m.len).then_some((m.host, m.len))
    }

    /// Put private pages back at every host range still mapped (the node goes away).
    pub(super) fn unmap_all_hosts(inner: &mut Inner) {
        for m in std::mem::take(&mut inner.host_maps).into_values() {
            // Best effort at teardown: on failure the pages stay the (still open) file's.
            let _ = restore_private(m.host, m.len);
        }
    }
}
