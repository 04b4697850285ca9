//! The shared-memory node: one emulated server (DESIGN §2 "Node").
//!
//! API SURFACE FIXED BY THE LEAD; bodies are filled in by the memory helper.
//!
//! A directory (`/dev/shm/npu-emu-<uid>` by default, [`crate::config`]) holding a header
//! (device count, SoC, HBM size), a process table (pid, start time, bytes in use per
//! device — read by `npu-emu smi` and `aclrtGetMemInfo`), per-device slab tables, and one
//! sparse HBM backing file per device. Any process of the user that opens the node joins
//! it; slabs of dead processes are reclaimed.

use crate::config::Config;
use crate::error::Result;
use crate::memory::AllocInfo;
use crate::rtapi::RtPhys;

/// What one live process uses (for `smi`).
#[derive(Clone, Debug)]
pub struct ProcessUsage {
    pub pid: u32,
    /// Command name (`/proc/<pid>/comm`).
    pub name: String,
    /// Bytes in use per physical device.
    pub bytes: Vec<u64>,
}

/// This process's view of the node: mappings, its own allocations, its process-table slot.
pub struct Node {
    _private: (),
}

impl Node {
    /// Create or join the node described by `cfg`; map every device's HBM (canonical
    /// range without access, plus the read-write alias); register this process.
    pub fn open(cfg: &Config) -> Result<Node> {
        let _ = cfg;
        todo!("memory helper")
    }
    /// Devices on the node (from the node header, which the first process wrote).
    pub fn devices(&self) -> u32 {
        todo!()
    }
    /// HBM bytes per device.
    pub fn hbm_size(&self) -> u64 {
        todo!()
    }
    /// Allocate `size` bytes (already rounded by the caller) on physical device `device`.
    /// Backing space is reserved now: a full `/dev/shm` or exhausted HBM gives
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` with a message, never a later SIGBUS.
    pub fn alloc(&self, device: u32, size: u64, requested: u64) -> Result<AllocInfo> {
        let _ = (device, size, requested);
        todo!()
    }
    /// Free the allocation starting at `addr`. Freeing an address that is not the start of
    /// a live allocation of this process (double free, interior pointer, foreign pointer)
    /// is an error naming the address.
    pub fn free(&self, addr: u64) -> Result<AllocInfo> {
        let _ = addr;
        todo!()
    }
    /// The live allocation of this process containing `addr`, if any.
    pub fn lookup(&self, addr: u64) -> Option<AllocInfo> {
        let _ = addr;
        todo!()
    }
    /// Check that `[addr, addr+len)` lies inside one live allocation of this process (or a
    /// mapped VMM range) and return the alias pointer to its first byte. `what` names the
    /// argument in the message ("dst", "src", "devPtr"). Out of bounds, freed or unknown
    /// memory is `ACL_ERROR_INVALID_PARAM` with the address, the allocation and its size.
    pub fn check(&self, addr: u64, len: u64, what: &str) -> Result<*mut u8> {
        let _ = (addr, len, what);
        todo!()
    }
    /// Like [`Node::check`], giving the physical location instead.
    pub fn phys(&self, addr: u64, len: u64, what: &str) -> Result<RtPhys> {
        let _ = (addr, len, what);
        todo!()
    }
    /// Alias pointer for a physical range (any process's memory; HCCL peers). `None` if
    /// the range leaves the device's HBM.
    pub fn phys_to_host(&self, phys: RtPhys, len: u64) -> Option<*mut u8> {
        let _ = (phys, len);
        todo!()
    }
    /// `(free, total)` bytes of physical device `device`, counting every live process.
    pub fn mem_info(&self, device: u32) -> (u64, u64) {
        let _ = device;
        todo!()
    }
    /// Usage of every live process on the node (dead ones are reclaimed first).
    pub fn usage(&self) -> Vec<ProcessUsage> {
        todo!()
    }
}
