//! One launch of a compiled Ascend C kernel: its copied argument block and the device
//! allocations it may access, re-checked and then run block by block on a device's emulated
//! AI cores ([`AiCorePool`]). The C entry point that builds a launch is `npuemu_kernel_launch`
//! (`libascendcl/src/api/kernel.rs`); the types below are the contract with the generated
//! block functions (`headers/ascendc/npuemu/launch.h`, generator `npu-emu ascendc-stub`).

#![allow(non_camel_case_types)]

use crate::aicore::{AiCorePool, ACL_ERROR_RT_AICORE_EXCEPTION};
use crate::node::Node;
use crate::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr, CString};

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

/// `npuemu_block_fn`: runs one block; 0 = ok, else a message in `err`.
pub type npuemu_block_fn = unsafe extern "C" fn(
    args: *const c_void,
    regions: *const npuemu_gm_region,
    nregions: usize,
    block_idx: u32,
    block_num: u32,
    err: *mut c_char,
    errlen: usize,
) -> c_int;

/// Bytes of the buffer a block writes its failure message into.
const ERR_LEN: usize = 2048;

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
}

/// A launch as queued on the stream.
pub struct Launch {
    kernel: String,
    block_dim: u32,
    func: npuemu_block_fn,
    /// The argument block, 16-byte aligned.
    args: Vec<u128>,
    regions: Vec<Region>,
}

// SAFETY: the raw pointers are aliases of device memory (valid while the allocation lives,
// re-checked before use) and the generated block function, which is thread-safe by
// contract (blocks run in parallel).
unsafe impl Send for Launch {}
// SAFETY: as above; a launch is only read while its blocks run.
unsafe impl Sync for Launch {}

struct Table(Vec<npuemu_gm_region>);
// SAFETY: read-only table of pointers into `Launch`, shared by the blocks of one run.
unsafe impl Sync for Table {}

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
        }
    }

    /// The kernel's name.
    pub fn kernel(&self) -> &str {
        &self.kernel
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

    /// Run the blocks on `pool` (after [`Launch::check`]).
    pub fn run(&self, pool: &AiCorePool) -> Result<()> {
        let table = Table(
            self.regions
                .iter()
                .map(|r| npuemu_gm_region {
                    dev_addr: r.dev_addr,
                    size: r.size,
                    host: r.host,
                    name: r.name.as_ptr(),
                })
                .collect(),
        );
        pool.run(&self.kernel, self.block_dim, &|idx| self.block(&table, idx))
    }

    /// Run block `idx` through the generated block function.
    fn block(&self, table: &Table, idx: u32) -> std::result::Result<(), String> {
        let mut err = [0u8; ERR_LEN];
        // SAFETY: the generated block function with the argument block copied at enqueue,
        // the region table (valid for this call) and a writable buffer of ERR_LEN bytes.
        let rc = unsafe {
            (self.func)(
                self.args.as_ptr() as *const c_void,
                if table.0.is_empty() {
                    std::ptr::null()
                } else {
                    table.0.as_ptr()
                },
                table.0.len(),
                idx,
                self.block_dim,
                err.as_mut_ptr() as *mut c_char,
                ERR_LEN,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        err[ERR_LEN - 1] = 0;
        let msg = CStr::from_bytes_until_nul(&err)
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
