//! Device and host memory state of this process, beyond what [`npu_emu::node::Node`]
//! keeps (host allocations from `aclrtMallocHost`, registered host memory, VMM handles).
//! `MemState::new` is called by `aclInit`. The runtime's [`npu_emu::memory::Space`] (what
//! the machine's copy engines and kernels see of this process's memory) is implemented here.
//!
//! Host allocations are tracked so that `aclrtFreeHost` of a foreign pointer or a second
//! free is an error with a message instead of heap corruption, and so that `aclrtMemset`
//! on host memory can check its range (CANN: host memory not from an ACL allocator is
//! undefined behaviour there).
//!
//! Registered host memory (`aclrtHostRegister`, `aclrtHostRegisterV2`): a range registered
//! as mapped gets a real device address whose pages *are* the host pages
//! ([`npu_emu::node::Node::map_host`], explained in `npu-emu/src/node/host_map.rs`), so
//! kernels, aclnn operators and copies may use the device address and both pointers see
//! the same bytes. Rules kept here: `ptr` must be 4 KiB aligned (the reference page of
//! `aclrtHostRegister`); a range overlapping a registered one is
//! `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`; unregistering anything but the start of a
//! registered range is `ACL_ERROR_HOST_MEMORY_NOT_REGISTERED`; `aclrtFree` of the device
//! address is refused (the node's check); `aclrtFreeHost` of an allocation that still has
//! registered ranges unregisters them first (the bytes stay the program's until the free).
//! `aclrtMallocHost` sizes are rounded up to whole pages so a registered buffer never
//! shares a page with other heap data.

use npu_emu::codes::ACL_ERROR_INVALID_PARAM;
use npu_emu::node::Node;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::{HandleKind, HandleTable};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::alloc::Layout;
use std::collections::BTreeMap;

/// Alignment of `aclrtMallocHost` memory (a page, like pinned host memory).
pub const HOST_ALIGN: usize = 4096;

/// Whether `addr` is a device address (a device's HBM range or the VMM range); everything
/// else is host memory.
pub fn is_device_addr(addr: u64) -> bool {
    npu_emu::memory::is_canonical(addr)
}

/// One registered host range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registered {
    /// Bytes the program registered.
    pub size: usize,
    /// Device address of the first byte, when registered as mapped (`None`: only pinned,
    /// `aclrtHostRegisterV2(ACL_HOST_REG_PINNED)`).
    pub dev: Option<u64>,
}

/// One `aclrtMallocHost` allocation.
#[derive(Clone, Copy, Debug)]
struct HostAlloc {
    size: usize,
    layout: Layout,
}

/// One `aclrtMallocPhysical` handle as the C program sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmmHandle {
    /// The machine's identity of the physical allocation.
    pub id: u64,
    /// Physical device.
    pub device: u32,
    /// Logical device id the program named in `aclrtPhysicalMemProp.location.id`.
    pub logical: i32,
    /// Bytes.
    pub size: u64,
    /// `aclrtPhysicalMemProp.memAttr`, reported back by queries.
    pub mem_attr: i32,
}

/// What an `aclrtDrvMemHandle` is: a handle of [`MemState::handles`].
pub static PHYSICAL: HandleKind =
    HandleKind::new(*b"PM", "physical allocation", "aclrtMallocPhysical")
        .stale_because("it was freed by aclrtFreePhysical, or its runtime was finalized");

/// Memory bookkeeping of this process.
pub struct MemState {
    /// Live `aclrtMallocHost` allocations: start address → allocation.
    host: Mutex<BTreeMap<usize, HostAlloc>>,
    /// `aclrtHostRegister[V2]` ranges: start address → registration.
    registered: Mutex<BTreeMap<usize, Registered>>,
    /// Held (shared) by copies and fills while they touch ACL host memory; a free or
    /// unregister takes it exclusively once, after forgetting the range, so it waits for
    /// the copies that found the range and later ones cannot find it
    /// ([`npu_emu::memory::Space::hold_host`]).
    in_use: RwLock<()>,
    /// `aclrtMallocPhysical` handles (each names the machine's physical allocation).
    /// Reservations and mappings are tracked by the node itself.
    pub handles: Mutex<HandleTable<VmmHandle>>,
}

impl Default for MemState {
    fn default() -> MemState {
        MemState::new()
    }
}

impl MemState {
    /// Fresh state for a new runtime.
    pub fn new() -> MemState {
        MemState {
            host: Mutex::default(),
            registered: Mutex::default(),
            in_use: RwLock::new(()),
            handles: Mutex::new(HandleTable::new(&PHYSICAL)),
        }
    }

    /// Allocate `size` (> 0) bytes of host memory and track it.
    pub fn host_alloc(&self, size: usize) -> Result<*mut u8> {
        // Whole pages: registering the buffer maps whole pages (see the module doc).
        let layout = Layout::from_size_align(size.next_multiple_of(HOST_ALIGN), HOST_ALIGN)
            .map_err(|_| Error::invalid(format!("size {size} is too large for host memory")))?;
        // SAFETY: size > 0 (checked by the caller).
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(Error::new(
                npu_emu::codes::ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("out of host memory allocating {size} bytes"),
            ));
        }
        self.host
            .lock()
            .insert(p as usize, HostAlloc { size, layout });
        Ok(p)
    }

    /// Free a tracked host allocation; `ptr` must be the start of a live one. Ranges of it
    /// still registered are unregistered first (through `node`).
    pub fn host_free(&self, node: Option<&Node>, ptr: usize) -> Result<usize> {
        let mut host = self.host.lock();
        let Some(a) = host.remove(&ptr) else {
            let inside = host
                .range(..=ptr)
                .next_back()
                .filter(|(s, a)| ptr < *s + a.size)
                .map(|(s, a)| (*s, a.size));
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                match inside {
                    Some((s, n)) => format!(
                        "hostPtr {ptr:#x} is inside the host allocation {s:#x} ({n} bytes) \
                         but not its start"
                    ),
                    None => format!(
                        "hostPtr {ptr:#x} is not a live allocation of aclrtMallocHost \
                         (freed twice, or allocated by something else)"
                    ),
                },
            ));
        };
        drop(host);
        if let Some(node) = node {
            // Registered ranges inside the allocation are released with it.
            let inside: Vec<usize> = self
                .registered
                .lock()
                .range(ptr..ptr + a.size)
                .map(|(s, _)| *s)
                .collect();
            for s in inside {
                self.unregister_host(node, s)?;
            }
        }
        self.wait_for_users();
        // SAFETY: allocated by host_alloc with this layout, removed from the registry, and
        // no copy or fill that found it is still running (`wait_for_users`).
        unsafe { std::alloc::dealloc(ptr as *mut u8, a.layout) };
        Ok(a.size)
    }

    /// The tracked host allocation (or registered range) containing `addr`:
    /// `(start, size)`.
    pub fn host_lookup(&self, addr: usize) -> Option<(usize, usize)> {
        let found = self
            .host
            .lock()
            .range(..=addr)
            .next_back()
            .filter(|(s, a)| addr < *s + a.size)
            .map(|(s, a)| (*s, a.size));
        found.or_else(|| {
            self.registered
                .lock()
                .range(..=addr)
                .next_back()
                .filter(|(s, r)| addr < *s + r.size)
                .map(|(s, r)| (*s, r.size))
        })
    }

    /// Register `[ptr, ptr+size)`: as mapped (`device`: the physical device whose address
    /// space gets it; returns its device address) or only pinned (`None`). The start must be
    /// 4 KiB aligned; overlapping a registered range is
    /// `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
    pub fn register_host(
        &self,
        node: &Node,
        device: Option<u32>,
        ptr: usize,
        size: usize,
    ) -> Result<Option<u64>> {
        if !ptr.is_multiple_of(HOST_ALIGN) {
            return Err(Error::invalid(format!(
                "ptr {ptr:#x} is not 4 KiB page aligned (aclrtHostRegister needs a page-aligned \
                 host address)"
            )));
        }
        let len = size
            .checked_next_multiple_of(HOST_ALIGN)
            .filter(|l| ptr.checked_add(*l).is_some())
            .ok_or_else(|| Error::invalid(format!("ptr {ptr:#x} + size {size} overflows")))?;
        let mut r = self.registered.lock();
        if let Some((s, old)) = r.range(..ptr + len).next_back() {
            if *s + old.size > ptr {
                return Err(Error::new(
                    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                    format!(
                        "host range {ptr:#x}+{size} overlaps the registered range {s:#x}+{}",
                        old.size
                    ),
                ));
            }
        }
        let dev = match device {
            Some(d) => Some(node.map_host(d, ptr as u64, len as u64)?.addr),
            None => None,
        };
        r.insert(ptr, Registered { size, dev });
        Ok(dev)
    }

    /// Unregister the range starting at `ptr`: its device address goes away and the host
    /// pages are private again, with their current bytes.
    pub fn unregister_host(&self, node: &Node, ptr: usize) -> Result<()> {
        let mut r = self.registered.lock();
        let Some(reg) = r.remove(&ptr) else {
            let inside = r
                .range(..=ptr)
                .next_back()
                .filter(|(s, g)| ptr < *s + g.size)
                .map(|(s, g)| format!(": it is inside the registered range {s:#x}+{}", g.size))
                .unwrap_or_default();
            return Err(Error::new(
                ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
                format!(
                    "ptr {ptr:#x} is not the start of a range registered by aclrtHostRegister{inside}"
                ),
            ));
        };
        drop(r);
        // The program may free its memory as soon as this returns.
        self.wait_for_users();
        if let Some(dev) = reg.dev {
            if let Err(e) = node.unmap_host(dev) {
                self.registered.lock().insert(ptr, reg);
                return Err(e);
            }
        }
        Ok(())
    }

    /// The registration containing `addr`: (start, registration).
    pub fn registration(&self, addr: usize) -> Option<(usize, Registered)> {
        self.registered
            .lock()
            .range(..=addr)
            .next_back()
            .filter(|(s, r)| addr < *s + r.size)
            .map(|(s, r)| (*s, *r))
    }

    /// Wait until no copy or fill holds host memory (see [`MemState::in_use`]).
    fn wait_for_users(&self) {
        drop(self.in_use.write());
    }

    /// Hold host memory against frees while a copy or fill uses it.
    pub fn hold(&self) -> RwLockReadGuard<'_, ()> {
        // Recursive: a holder may take it again while a free waits, without deadlock.
        self.in_use.read_recursive()
    }

    /// Bytes of live host allocations (for tests and logs).
    pub fn host_bytes(&self) -> usize {
        self.host.lock().values().map(|a| a.size).sum()
    }
}

/// What the machine's copy engines and kernels see of this process's memory.
impl npu_emu::memory::Space for crate::runtime::Runtime {
    fn node(&self) -> &npu_emu::node::Node {
        &self.node
    }
    fn host_range(&self, addr: u64) -> Option<(u64, u64)> {
        self.mem
            .host_lookup(addr as usize)
            .map(|(s, n)| (s as u64, n as u64))
    }
    fn hold_host(&self) -> npu_emu::memory::HostHold<'_> {
        Some(self.mem.hold())
    }
    fn logical_of(&self, phys: u32) -> i32 {
        self.cfg.logical(phys).unwrap_or(phys as i32)
    }
    fn peer_access(&self, a: i32, b: i32) -> bool {
        let reg = self.reg.lock();
        reg.peers.contains(&(a, b)) || reg.peers.contains(&(b, a))
    }
}

/// `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED` (rt_error_codes.h, 8.5).
pub const ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: i32 = 507910;
/// `ACL_ERROR_HOST_MEMORY_NOT_REGISTERED` (rt_error_codes.h, 8.5).
pub const ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: i32 = 507911;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_alloc_free_and_errors() {
        let m = MemState::new();
        let p = m.host_alloc(100).unwrap() as usize;
        assert_eq!(p % HOST_ALIGN, 0);
        assert_eq!(m.host_lookup(p + 99), Some((p, 100)));
        assert_eq!(m.host_lookup(p + 100), None);
        let e = m.host_free(None, p + 1).unwrap_err();
        assert!(e.msg.contains("not its start"), "{}", e.msg);
        assert_eq!(m.host_free(None, p).unwrap(), 100);
        let e = m.host_free(None, p).unwrap_err();
        assert!(e.msg.contains("freed twice"), "{}", e.msg);
        assert_eq!(m.host_bytes(), 0);
    }

    #[test]
    fn free_waits_for_a_copy_that_holds_host_memory() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let m = std::sync::Arc::new(MemState::new());
        let p = m.host_alloc(1 << 20).unwrap() as usize;
        let hold = m.hold();
        let freed = std::sync::Arc::new(AtomicBool::new(false));
        let t = {
            let (m, freed) = (m.clone(), freed.clone());
            std::thread::spawn(move || {
                m.host_free(None, p).unwrap();
                freed.store(true, Ordering::SeqCst);
            })
        };
        // The free forgets the range at once (a new copy fails its check) ...
        while m.host_lookup(p).is_some() {
            std::thread::yield_now();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        // ... but the memory stays until the holder is done with it.
        assert!(!freed.load(Ordering::SeqCst), "freed under a hold");
        // SAFETY: p is still allocated (the free waits for `hold`).
        unsafe { std::ptr::write_bytes(p as *mut u8, 1, 1 << 20) };
        drop(hold);
        t.join().unwrap();
        assert!(freed.load(Ordering::SeqCst));
    }

    #[test]
    fn device_ranges() {
        use npu_emu::memory::{ADDR_BASE, VMM_BASE, VMM_SIZE};
        assert!(is_device_addr(ADDR_BASE));
        assert!(!is_device_addr(ADDR_BASE - 1));
        assert!(is_device_addr(VMM_BASE + VMM_SIZE - 1));
        assert!(!is_device_addr(VMM_BASE + VMM_SIZE));
        assert!(!is_device_addr(0x7fff_0000_0000));
    }
}
