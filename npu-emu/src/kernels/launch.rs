//! One launch of a compiled Ascend C kernel: its copied argument block and the device
//! allocations it may access, re-checked and then run block by block on a device's emulated
//! AI cores ([`AiCorePool`]). The C entry points that build a launch are `npuemu_kernel_launch`
//! (`libascendcl/src/api/kernel.rs`) and the `aclrtLaunchKernel*` family
//! (`libascendcl/src/api/kernel_bin.rs`); the types below are the contract with the generated
//! block functions (`headers/ascendc/npuemu/regions.h`, generator `npu-emu ascendc-stub`).
//!
//! A block gets an [`npuemu_block_info`]: its index and the block count, the regions (the
//! buffers passed to the kernel: every access of kernel code is checked against them), every
//! device's whole memory (canonical range and this process's alias, so that instrumented kernel
//! code can tell a device address outside the regions from host memory), the tiling key
//! (`TILING_KEY_IS`), the number of blocks that run at once, and the launch's `SyncAll`
//! barrier ([`LaunchSync`]).

#![allow(non_camel_case_types)]

use crate::aicore::{AiCorePool, LaunchSync, ACL_ERROR_RT_AICORE_EXCEPTION};
use crate::memory::device_addr;
use crate::node::Node;
use crate::rtapi::RtPhys;
use crate::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `npuemu_gm_region`: one buffer handed to the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct npuemu_gm_region {
    /// Canonical device address of the start of the allocation.
    pub dev_addr: u64,
    /// Bytes of the allocation.
    pub size: u64,
    /// Read-write alias of `dev_addr` in this process.
    pub host: *mut c_void,
    /// The kernel parameter's name.
    pub name: *const c_char,
}

/// `npuemu_mem_range`: one device's whole HBM (canonical range and this process's alias).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct npuemu_mem_range {
    pub dev_addr: u64,
    pub size: u64,
    pub host: *mut c_void,
}

/// `npuemu_block_info`: what a block needs besides the kernel's arguments.
#[repr(C)]
pub struct npuemu_block_info {
    pub block_idx: u32,
    pub block_num: u32,
    pub regions: *const npuemu_gm_region,
    pub nregions: usize,
    pub devmem: *const npuemu_mem_range,
    pub ndevmem: usize,
    pub tiling_key: u64,
    pub cores: u32,
    pub reserved: u32,
    pub launch: *mut c_void,
    pub sync_all: Option<unsafe extern "C" fn(*mut c_void, u32, *mut c_char, usize) -> c_int>,
    pub err: *mut c_char,
    pub errlen: usize,
}

/// `npuemu_block_fn`: runs one block; 0 = ok, else a message in `info->err`.
pub type npuemu_block_fn =
    unsafe extern "C" fn(args: *const c_void, info: *const npuemu_block_info) -> c_int;

/// Bytes of the buffer a block writes its failure message into.
const ERR_LEN: usize = 2048;

thread_local! {
    /// The message buffer of the blocks this thread runs, kept between blocks: clearing a
    /// fresh one for every block costs more than a tiny block itself. Taken while a block
    /// runs (a block that runs another launch's blocks on this thread makes its own).
    static ERR_BUF: std::cell::Cell<Option<Box<[u8; ERR_LEN]>>> = const { std::cell::Cell::new(None) };
}

/// One device allocation the kernel may access, as checked at enqueue.
pub struct Region {
    name: CString,
    dev_addr: u64,
    size: u64,
    host: *mut c_void,
}

impl Region {
    /// The whole allocation `dev_addr` (`size` bytes, alias `host` from [`Node::check`]),
    /// passed as kernel parameter `name`.
    pub fn new(name: &str, dev_addr: u64, size: u64, host: *mut u8) -> Region {
        Region {
            name: CString::new(name.replace('\0', " ")).unwrap_or_default(),
            dev_addr,
            size,
            host: host as *mut c_void,
        }
    }

    /// Canonical address of the allocation.
    pub fn dev_addr(&self) -> u64 {
        self.dev_addr
    }
}

/// A launch as queued on the stream.
pub struct Launch {
    kernel: String,
    block_dim: u32,
    func: npuemu_block_fn,
    /// The argument block, 16-byte aligned.
    args: Vec<u128>,
    regions: Vec<Region>,
    /// `TILING_KEY_IS`: the key of the launched entry.
    tiling_key: u64,
    /// Kept alive while the launch is queued (a loaded kernel binary, device buffers of
    /// placeholder arguments freed when it is dropped): held for its `Drop` only.
    _keep: Option<Box<dyn std::any::Any + Send + Sync>>,
}

// SAFETY: the raw pointers are aliases of device memory (valid while the allocation lives,
// re-checked before use) and the generated block function, which is thread-safe by
// contract (blocks run in parallel).
unsafe impl Send for Launch {}
// SAFETY: as above; a launch is only read while its blocks run.
unsafe impl Sync for Launch {}

/// What the blocks of one run share: the region and device tables and the SyncAll barrier.
struct Shared {
    regions: Vec<npuemu_gm_region>,
    devmem: Vec<npuemu_mem_range>,
    sync: LaunchSync,
    cores: u32,
}
// SAFETY: read-only tables of pointers into `Launch` and the node's mappings, plus a barrier
// that is `Sync`, shared by the blocks of one run.
unsafe impl Sync for Shared {}

/// `sync_all` of `npuemu_block_info`: `launch` is the run's [`Shared`].
unsafe extern "C" fn sync_all_cb(
    launch: *mut c_void,
    block_idx: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int {
    let r = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `launch` points to the `Shared` of the running launch (block_info).
        let shared = unsafe { &*(launch as *const Shared) };
        shared.sync.arrive(block_idx)
    }));
    let msg = match r {
        Ok(Ok(())) => return 0,
        Ok(Err(m)) => m,
        Err(_) => "SyncAll: internal error in the AI-core emulation".to_string(),
    };
    if !err.is_null() && errlen > 0 {
        let n = msg.len().min(errlen - 1);
        // SAFETY: err has errlen writable bytes (the block's message buffer).
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), err as *mut u8, n);
            *err.add(n) = 0;
        }
    }
    1
}

/// Every device's whole memory: its canonical range and this process's alias of it.
pub fn device_memory(node: &Node) -> Vec<npuemu_mem_range> {
    let hbm = node.hbm_size();
    (0..node.devices())
        .filter_map(|d| {
            let host = node.phys_to_host(
                RtPhys {
                    device: d,
                    _pad: 0,
                    offset: 0,
                },
                hbm,
            )?;
            Some(npuemu_mem_range {
                dev_addr: device_addr(d, 0),
                size: hbm,
                host: host as *mut c_void,
            })
        })
        .collect()
}

impl Launch {
    /// A launch of `kernel` with `block_dim` blocks of `func`, the argument block `args`
    /// (copied now) and the `regions` it may access.
    pub fn new(
        kernel: &str,
        block_dim: u32,
        func: npuemu_block_fn,
        args: &[u8],
        regions: Vec<Region>,
    ) -> Launch {
        let mut buf = vec![0u128; args.len().div_ceil(16)];
        // SAFETY: buf holds at least args.len() bytes; the two do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(args.as_ptr(), buf.as_mut_ptr() as *mut u8, args.len())
        };
        Launch {
            kernel: kernel.to_string(),
            block_dim,
            func,
            args: buf,
            regions,
            tiling_key: 0,
            _keep: None,
        }
    }

    /// The launch with tiling key `key` (`TILING_KEY_IS`).
    pub fn with_tiling_key(mut self, key: u64) -> Launch {
        self.tiling_key = key;
        self
    }

    /// The launch keeping `keep` alive until it is dropped (after it ran).
    pub fn keeping(mut self, keep: Box<dyn std::any::Any + Send + Sync>) -> Launch {
        self._keep = Some(keep);
        self
    }

    /// The kernel's name.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// The number of blocks launched.
    pub fn block_dim(&self) -> u32 {
        self.block_dim
    }

    /// Check that every region is still the live allocation it was at enqueue: one freed in
    /// between is `ACL_ERROR_RT_AICORE_EXCEPTION`, not a use-after-free.
    pub fn check(&self, node: &Node) -> Result<()> {
        for r in &self.regions {
            match node.lookup(r.dev_addr) {
                Some(a) if a.addr == r.dev_addr && a.size == r.size => {}
                _ => {
                    return Err(Error::new(
                        ACL_ERROR_RT_AICORE_EXCEPTION,
                        format!(
                            "kernel {}: argument {} (allocation 0x{:x}, {} bytes) was freed before the kernel ran",
                            self.kernel,
                            r.name.to_string_lossy(),
                            r.dev_addr,
                            r.size
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Run the blocks on `pool` (after [`Launch::check`]); `devmem` is every device's memory
    /// ([`device_memory`]), for the blocks' access checks.
    pub fn run(&self, pool: &AiCorePool, devmem: Vec<npuemu_mem_range>) -> Result<()> {
        let cores = pool.cores();
        let shared = Shared {
            regions: self
                .regions
                .iter()
                .map(|r| npuemu_gm_region {
                    dev_addr: r.dev_addr,
                    size: r.size,
                    host: r.host,
                    name: r.name.as_ptr(),
                })
                .collect(),
            devmem,
            sync: LaunchSync::new(self.block_dim, cores),
            cores,
        };
        pool.run(&self.kernel, self.block_dim, &|idx| {
            let r = self.block(&shared, idx);
            shared.sync.done(idx, r.is_ok());
            r
        })
    }

    /// Run block `idx` through the generated block function.
    fn block(&self, shared: &Shared, idx: u32) -> std::result::Result<(), String> {
        let mut err = ERR_BUF
            .try_with(|b| b.take())
            .ok()
            .flatten()
            .unwrap_or_else(|| Box::new([0u8; ERR_LEN]));
        // Only what the block writes is read: up to the first NUL.
        err[0] = 0;
        let r = self.block_with(shared, idx, &mut err);
        let _ = ERR_BUF.try_with(|b| b.set(Some(err)));
        r
    }

    /// [`Launch::block`] with the message buffer `err`.
    fn block_with(
        &self,
        shared: &Shared,
        idx: u32,
        err: &mut [u8; ERR_LEN],
    ) -> std::result::Result<(), String> {
        let info = npuemu_block_info {
            block_idx: idx,
            block_num: self.block_dim,
            regions: if shared.regions.is_empty() {
                std::ptr::null()
            } else {
                shared.regions.as_ptr()
            },
            nregions: shared.regions.len(),
            devmem: shared.devmem.as_ptr(),
            ndevmem: shared.devmem.len(),
            tiling_key: self.tiling_key,
            cores: shared.cores,
            reserved: 0,
            launch: shared as *const Shared as *mut c_void,
            sync_all: Some(sync_all_cb),
            err: err.as_mut_ptr() as *mut c_char,
            errlen: ERR_LEN,
        };
        // SAFETY: the generated block function with the argument block copied at enqueue
        // and the block info (its tables and buffer valid for this call).
        let rc = unsafe { (self.func)(self.args.as_ptr() as *const c_void, &info) };
        if rc == 0 {
            return Ok(());
        }
        err[ERR_LEN - 1] = 0;
        let msg = CStr::from_bytes_until_nul(&err[..])
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        Err(if msg.is_empty() {
            format!(
                "kernel {} block {idx}/{}: the block failed (code {rc}) without a message",
                self.kernel, self.block_dim
            )
        } else {
            msg
        })
    }
}
