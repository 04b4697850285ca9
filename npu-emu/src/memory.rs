//! Device address layout and device memory (DESIGN §2 "Device memory and addresses").
//!
//! API SURFACE FIXED BY THE LEAD; bodies are filled in by the memory helper.
//!
//! Every process of a node maps device `d`'s HBM at the same canonical address
//! `ADDR_BASE + d * DEVICE_STRIDE`, without access rights, so a device pointer means the
//! same in every process and a host dereference faults (see [`crate::fault`]). The
//! emulator itself reads and writes through a second read-write alias of the same pages.

use crate::rtapi::RtPhys;

/// Canonical address of device 0's HBM.
pub const ADDR_BASE: u64 = 0x1000_0000_0000;
/// Distance between two devices' canonical ranges (and the largest HBM size).
pub const DEVICE_STRIDE: u64 = 1 << 40;
/// Most devices a node can have.
pub const MAX_DEVICES: u32 = 64;
/// Canonical range for `aclrtReserveMemAddress` (after the devices' ranges).
pub const VMM_BASE: u64 = ADDR_BASE + MAX_DEVICES as u64 * DEVICE_STRIDE;

/// Canonical address of byte `offset` of physical device `device`'s HBM.
pub fn device_addr(device: u32, offset: u64) -> u64 {
    ADDR_BASE + device as u64 * DEVICE_STRIDE + offset
}

/// The physical device whose canonical range contains `addr` (by range only).
pub fn device_of(addr: u64) -> Option<u32> {
    if (ADDR_BASE..VMM_BASE).contains(&addr) {
        Some(((addr - ADDR_BASE) / DEVICE_STRIDE) as u32)
    } else {
        None
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
