//! Device address layout and device memory (DESIGN §2 "Device memory and addresses"), CANN's
//! allocation size rule, and [`Space`]: what the copy engines ([`crate::copy`]) and operator
//! kernels ([`crate::kernels`]) need to know about the memory of one process.
//!
//! Every process of a node maps device `d`'s HBM at the same canonical address
//! `ADDR_BASE + d * DEVICE_STRIDE`, without access rights, so a device pointer means the
//! same in every process and a host dereference faults (see [`crate::fault`]). The
//! emulator itself reads and writes through a second read-write alias of the same pages,
//! placed by the kernel but 17 pages further from an 8 MiB boundary per device, so that
//! the same offset in two devices is never the same address modulo a large power of two
//! (HCCL reads every rank's buffer at one offset at once: see `Mapping::map_placed`).

use crate::node::Node;
use crate::rtapi::RtPhys;

// Where the canonical ranges sit (x86-64 and aarch64, 47/48-bit user address space):
//
//   0x1000_7fff_7fff  end of AddressSanitizer's high shadow (x86-64)
//   0x1100_0000_0000  ADDR_BASE: device 0 .. device 63, 1 TiB apart (up to 0x5100_0000_0000)
//   0x5555_....       PIE executables and their brk heap (ASLR range)
//   0x6000_0000_0000  AddressSanitizer / LeakSanitizer allocator (4 TiB)
//   0x6800_0000_0000  VMM_BASE: aclrtReserveMemAddress range, 16 TiB
//   0x7e.._....       mmap area (shared libraries, thread stacks), top-down
//
// So programs built with -fsanitize=address still get their device memory at the canonical
// addresses, and a wild host pointer into the executable or heap is never mistaken for a
// device address by the fault handler.

/// Canonical address of device 0's HBM.
pub const ADDR_BASE: u64 = 0x1100_0000_0000;
/// Distance between two devices' canonical ranges (and the largest HBM size).
pub const DEVICE_STRIDE: u64 = 1 << 40;
/// Most devices a node can have.
pub const MAX_DEVICES: u32 = 64;
/// End of the devices' canonical ranges.
pub const DEVICES_END: u64 = ADDR_BASE + MAX_DEVICES as u64 * DEVICE_STRIDE;
/// Canonical range for `aclrtReserveMemAddress` (above the devices' ranges, clear of
/// executables and sanitizer regions).
pub const VMM_BASE: u64 = 0x6800_0000_0000;
/// Size of the canonical range handed out by `aclrtReserveMemAddress` (16 TiB, shared by
/// every process of a node through a counter in the node header; never reused).
pub const VMM_SIZE: u64 = 16 << 40;
/// Allocation granularity of the virtual-memory (VMM) family
/// (`aclrtMemGetAllocationGranularity`): 2 MiB, as on Ascend hardware.
pub const VMM_GRANULARITY: u64 = 2 << 20;

/// Whether `addr` lies in a canonical range the emulator owns: a device's HBM range or the
/// VMM range. Host dereferences there are device-memory accesses.
pub fn is_canonical(addr: u64) -> bool {
    (ADDR_BASE..DEVICES_END).contains(&addr) || (VMM_BASE..VMM_BASE + VMM_SIZE).contains(&addr)
}

/// Canonical address of byte `offset` of physical device `device`'s HBM.
pub fn device_addr(device: u32, offset: u64) -> u64 {
    ADDR_BASE + device as u64 * DEVICE_STRIDE + offset
}

/// The physical device whose canonical range contains `addr` (by range only).
pub fn device_of(addr: u64) -> Option<u32> {
    if (ADDR_BASE..DEVICES_END).contains(&addr) {
        Some(((addr - ADDR_BASE) / DEVICE_STRIDE) as u32)
    } else {
        None
    }
}

/// See [`Space::hold_host`].
pub type HostHold<'a> = Option<parking_lot::RwLockReadGuard<'a, ()>>;

/// The memory one process addresses, as the copy engines and kernels see it: the node's
/// device memory, plus what the runtime knows about host memory and device numbering.
/// `libascendcl`'s runtime implements it (`libascendcl/src/mem.rs`).
pub trait Space {
    /// The node: device memory and its range checks ([`Node::check`], [`Node::phys`]).
    fn node(&self) -> &Node;
    /// The host memory the runtime knows (`aclrtMallocHost`, `aclrtHostRegister[V2]`)
    /// containing `addr`: `(start, size)`.
    fn host_range(&self, addr: u64) -> Option<(u64, u64)>;
    /// Keep the host memory the runtime knows from being freed while the hold lives
    /// (`aclrtFreeHost` and `aclrtHostUnregister` wait for it). A copy or fill takes it
    /// before it checks an ACL host range and drops it after the bytes are moved, so a
    /// concurrent free makes the check fail instead of the write fault. `None`: nothing to
    /// hold (no runtime host memory).
    fn hold_host(&self) -> HostHold<'_> {
        None
    }
    /// Logical device id (as the program numbers devices) of physical device `phys`.
    fn logical_of(&self, phys: u32) -> i32;
    /// Whether peer access is enabled between logical devices `a` and `b`, in either
    /// direction (`aclrtDeviceEnablePeerAccess`).
    fn peer_access(&self, a: i32, b: i32) -> bool;
}

/// `aclrtMemMallocPolicy` `ACL_MEM_MALLOC_HUGE1G_ONLY` (low byte of the policy).
pub const ACL_MEM_MALLOC_HUGE1G_ONLY: i32 = 6;
/// `aclrtMemMallocPolicy` `ACL_MEM_MALLOC_HUGE1G_ONLY_P2P`.
pub const ACL_MEM_MALLOC_HUGE1G_ONLY_P2P: i32 = 7;

/// How `aclrtMalloc` sizes an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Multiple of 32 plus 32 bytes of padding (`aclrtMalloc`, `aclrtMallocCached`).
    Padded,
    /// Multiple of 32 (`aclrtMallocAlign32`).
    Align32,
}

/// The size CANN really allocates for `size` bytes under `policy` (abi.md §1.3): a multiple
/// of 32 plus 32 bytes of padding; no padding for `Align32` and the HUGE1G policies. Unknown
/// policy values behave as the default. `None` on overflow.
pub fn rounded_size(size: u64, policy: i32, rounding: Rounding) -> Option<u64> {
    let aligned = size.checked_add(31)? & !31;
    let base = policy & 0xFF;
    let huge1g = base == ACL_MEM_MALLOC_HUGE1G_ONLY || base == ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
    if rounding == Rounding::Align32 || huge1g {
        Some(aligned)
    } else {
        aligned.checked_add(32)
    }
}

/// One live device allocation of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocInfo {
    /// Canonical start address (what `aclrtMalloc` returned).
    pub addr: u64,
    /// Usable bytes (the size after CANN's rounding and padding).
    pub size: u64,
    /// Bytes the program asked for.
    pub requested: u64,
    /// Physical device id.
    pub device: u32,
    /// Which allocation this is: never the same twice in a `Node`, so memory freed and
    /// allocated again at the same address is told from the memory a queued operation
    /// was given ([`crate::node::Node::phys_serial`]).
    pub serial: u64,
}

impl AllocInfo {
    /// Physical location of the allocation's first byte.
    pub fn phys(&self) -> RtPhys {
        RtPhys {
            device: self.device,
            _pad: 0,
            offset: self.addr - device_addr(self.device, 0),
        }
    }
}

/// A physical allocation of the VMM family (`aclrtMallocPhysical`): HBM reserved like an
/// `aclrtMalloc` allocation but not mapped at any device address until
/// [`crate::node::Node::map`] maps (part of) it into a range from
/// [`crate::node::Node::reserve_va`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhysHandleInfo {
    /// Identity of the handle in this process (never 0, never reused by this `Node`).
    pub id: u64,
    /// Physical device id.
    pub device: u32,
    /// Bytes (a multiple of [`VMM_GRANULARITY`]).
    pub size: u64,
    /// Physical location of the first byte.
    pub phys: RtPhys,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cann_rounding() {
        assert_eq!(rounded_size(1, 0, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(32, 0, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(33, 0, Rounding::Padded), Some(96));
        assert_eq!(rounded_size(33, 2, Rounding::Align32), Some(64));
        assert_eq!(rounded_size(33, 6, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(33, 7 | 0x1000, Rounding::Padded), Some(64));
        assert_eq!(rounded_size(33, 0x55, Rounding::Padded), Some(96));
        assert_eq!(rounded_size(u64::MAX - 3, 0, Rounding::Padded), None);
    }

    #[test]
    fn layout_fits_the_user_address_space() {
        assert_eq!(device_of(device_addr(3, 17)), Some(3));
        assert_eq!(device_of(VMM_BASE), None);
        assert_eq!(device_of(DEVICES_END), None);
        assert!(!is_canonical(DEVICES_END));
        assert!(
            !is_canonical(0x5555_5555_4000),
            "PIE executables are host memory"
        );
        assert!(
            !is_canonical(0x1000_7fff_7000),
            "ASan shadow is host memory"
        );
        const { assert!(DEVICES_END <= 0x5555_0000_0000 && VMM_BASE >= 0x6400_0000_0000) };
        assert!(is_canonical(device_addr(63, DEVICE_STRIDE - 1)));
        assert!(is_canonical(VMM_BASE + VMM_SIZE - 1));
        assert!(!is_canonical(VMM_BASE + VMM_SIZE));
        // x86-64 and aarch64 (48-bit VA) user space ends at 1 << 47.
        const { assert!(VMM_BASE + VMM_SIZE <= 1 << 47) };
        let a = AllocInfo {
            addr: device_addr(2, 4096),
            size: 64,
            requested: 10,
            device: 2,
            serial: 1,
        };
        assert_eq!(
            a.phys(),
            RtPhys {
                device: 2,
                _pad: 0,
                offset: 4096
            }
        );
    }
}
