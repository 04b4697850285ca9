//! Host access to device memory is caught (DESIGN §2).
//!
//! Device memory is reserved without access rights at its canonical address, so host code
//! that dereferences a device pointer gets SIGSEGV. [`install`] puts a SIGSEGV/SIGBUS
//! handler in front of whatever was installed before: when the faulting address lies in a
//! canonical range ([`crate::memory::is_canonical`]) it prints
//!
//! ```text
//! [ERROR] ASCENDCL(pid,tid): host code read device memory at 0x110000000040: inside
//! allocation 0x110000000000 (1024 bytes) on device 0 at offset 64 (allocated by this
//! process) — device memory is not host-accessible; copy it with aclrtMemcpy
//! ```
//!
//! to stderr (one line, with `write(2)`) and lets the process die of the same signal, so its
//! exit status still says SIGSEGV. Any other fault goes to the previously installed handler
//! (Rust's stack-overflow handler, a sanitizer, a crash reporter) or the default action.
//!
//! On an emulated AI-core thread running a kernel block ([`set_kernel_context`], set by
//! [`crate::aicore`]) the message names the kernel and the block instead ("kernel add_custom
//! block 3/8 read device memory at 0x… through a raw pointer: … — kernels must access global
//! memory through GlobalTensor …").
//!
//! The runtime (`libascendcl`) calls [`install`] at `aclInit` with a function that reaches
//! its node without blocking and calls [`describe`]; the handler calls it only for faults in
//! the canonical ranges, i.e. on the way to dying, so allocating there is acceptable. The
//! statics below are the one piece of process-global state a signal handler needs.

use crate::globals::{DESCRIBE, INSTALLED, KERNEL_CTX, PREV};
use crate::memory::{device_of, is_canonical};
use crate::node::Node;
use std::fmt::{self, Write as _};
use std::sync::atomic::Ordering;

/// What the faulting instruction did, when the CPU tells us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Unknown,
}

/// Describe what a host access at `addr` hit in `node` ("inside allocation 0x… (N bytes)
/// on device D at offset K (allocated by this process)", "in freed memory …", "device
/// memory of device D held by another process …"). Never blocks: `None` when another
/// thread holds the node's state or `addr` is not a device address.
pub fn describe(node: &Node, addr: u64) -> Option<String> {
    node.describe_addr(addr)
}

/// Longest kernel name kept for the fault message (longer names are cut).
pub(crate) const KERNEL_NAME_MAX: usize = 128;

/// The kernel block an emulated AI-core thread is running (see [`crate::aicore`]): a plain
/// `Copy` value in a const-initialised thread-local, so the signal handler reads it without
/// allocating or locking.
#[derive(Clone, Copy)]
pub(crate) struct KernelCtx {
    pub(crate) active: bool,
    pub(crate) name: [u8; KERNEL_NAME_MAX],
    pub(crate) len: usize,
    pub(crate) block_idx: u32,
    pub(crate) block_num: u32,
}

/// Mark the calling thread as running block `block_idx` of `block_num` of kernel `name`
/// (`None`: no kernel). A device-memory fault on this thread is then reported as the
/// kernel's raw access to global memory instead of a host access.
pub fn set_kernel_context(ctx: Option<(&str, u32, u32)>) {
    let mut k = KernelCtx {
        active: false,
        name: [0; KERNEL_NAME_MAX],
        len: 0,
        block_idx: 0,
        block_num: 0,
    };
    if let Some((name, idx, num)) = ctx {
        let mut n = name.len().min(KERNEL_NAME_MAX);
        while !name.is_char_boundary(n) {
            n -= 1;
        }
        k.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        k.len = n;
        k.active = true;
        k.block_idx = idx;
        k.block_num = num;
    }
    let _ = KERNEL_CTX.try_with(|c| c.set(k));
}

fn kernel_context() -> Option<KernelCtx> {
    KERNEL_CTX.try_with(|c| c.get()).ok().filter(|k| k.active)
}

fn write_message(
    w: &mut impl fmt::Write,
    addr: u64,
    access: Access,
    detail: Option<&str>,
    kernel: Option<&KernelCtx>,
) -> fmt::Result {
    let verb = match access {
        Access::Read => "read",
        Access::Write => "wrote",
        Access::Unknown => "accessed",
    };
    match kernel {
        Some(k) => write!(
            w,
            "kernel {} block {}/{} {verb} device memory at 0x{addr:x} through a raw pointer: ",
            std::str::from_utf8(&k.name[..k.len]).unwrap_or("?"),
            k.block_idx,
            k.block_num
        )?,
        None => write!(w, "host code {verb} device memory at 0x{addr:x}: ")?,
    }
    match (detail, device_of(addr)) {
        (Some(d), _) => w.write_str(d)?,
        (None, Some(dev)) => write!(w, "device {dev} (the allocation could not be looked up)")?,
        (None, None) => w.write_str("a reserved device virtual address range")?,
    }
    match kernel {
        Some(_) => w.write_str(
            " — kernels must access global memory through GlobalTensor (DataCopy, GetValue, \
             SetValue), never by dereferencing a GM_ADDR / __gm__ pointer",
        ),
        None => w.write_str(" — device memory is not host-accessible; copy it with aclrtMemcpy"),
    }
}

/// The message the handler prints (without the log prefix), for `addr`, `access` and a
/// [`describe`] result, on a thread that runs no kernel block.
pub fn message(addr: u64, access: Access, detail: Option<&str>) -> String {
    let mut s = String::new();
    let _ = write_message(&mut s, addr, access, detail, None);
    s
}

/// Like [`message`], for a fault on a thread marked by [`set_kernel_context`] (the
/// calling thread's context; the host-code wording if it has none).
pub fn kernel_message(addr: u64, access: Access, detail: Option<&str>) -> String {
    let mut s = String::new();
    let k = kernel_context();
    let _ = write_message(&mut s, addr, access, detail, k.as_ref());
    s
}

/// A fixed buffer that formats without allocating; overlong text is cut.
struct StackBuf {
    buf: [u8; 2048],
    len: usize,
}

impl fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Install the SIGSEGV/SIGBUS handler (once per process; later calls only replace
/// `describe`). `describe(addr)` returns what the address hit, or `None`; it must not block
/// (use `try_lock`).
///
/// # Safety
/// Changes process-wide signal dispositions; call it from normal (non-signal) context.
pub unsafe fn install(describe: fn(u64) -> Option<String>) {
    DESCRIBE.store(describe as usize, Ordering::SeqCst);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let prev = &mut *PREV.0.get();
    for (i, sig) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, prev[i].as_mut_ptr());
    }
}

#[cfg(target_arch = "x86_64")]
unsafe fn access_of(ctx: *mut libc::c_void) -> Access {
    if ctx.is_null() {
        return Access::Unknown;
    }
    let uc = &*(ctx as *const libc::ucontext_t);
    // Page-fault error code: bit 1 set for a write.
    if uc.uc_mcontext.gregs[libc::REG_ERR as usize] & 2 != 0 {
        Access::Write
    } else {
        Access::Read
    }
}

/// aarch64: the kernel's `struct sigcontext` (`uc_mcontext`) has `__reserved[4096]` at byte
/// 288 (after fault_address, regs[31], sp, pc, pstate; 16-byte aligned), holding records
/// `{u32 magic, u32 size, ...}`; the ESR record carries the exception syndrome.
#[cfg(target_arch = "aarch64")]
unsafe fn access_of(ctx: *mut libc::c_void) -> Access {
    if ctx.is_null() {
        return Access::Unknown;
    }
    let uc = ctx as *const libc::ucontext_t;
    let mc = std::ptr::addr_of!((*uc).uc_mcontext) as *const u8;
    esr_access(mc.add(288), 4096)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn access_of(_ctx: *mut libc::c_void) -> Access {
    Access::Unknown
}

/// Read or write, from the aarch64 signal-frame records at `p` (`len` bytes): the ESR
/// record (magic 0x45535201) of a data abort (EC 0x24/0x25) has WnR (bit 6) set for a write.
#[cfg(any(target_arch = "aarch64", test))]
unsafe fn esr_access(mut p: *const u8, len: usize) -> Access {
    const ESR_MAGIC: u32 = 0x4553_5201;
    let end = p.add(len);
    while p.add(8) <= end {
        let magic = (p as *const u32).read_unaligned();
        let size = (p.add(4) as *const u32).read_unaligned() as usize;
        if magic == 0 || size < 8 || p.add(size) > end {
            break;
        }
        if magic == ESR_MAGIC && size >= 16 {
            let esr = (p.add(8) as *const u64).read_unaligned();
            let ec = (esr >> 26) & 0x3f;
            if ec != 0x24 && ec != 0x25 {
                return Access::Unknown;
            }
            return if esr & (1 << 6) != 0 {
                Access::Write
            } else {
                Access::Read
            };
        }
        p = p.add(size);
    }
    Access::Unknown
}

unsafe fn set_default(sig: libc::c_int) {
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = libc::SIG_DFL;
    libc::sigemptyset(&mut sa.sa_mask);
    libc::sigaction(sig, &sa, std::ptr::null_mut());
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and context.
    unsafe {
        let code = (*info).si_code;
        let addr = (*info).si_addr() as u64;
        // si_code > 0: raised by the kernel for a fault (not kill/raise).
        if code > 0 && is_canonical(addr) {
            let access = access_of(ctx);
            let f = DESCRIBE.load(Ordering::SeqCst);
            let detail = if f != 0 {
                let f: fn(u64) -> Option<String> = std::mem::transmute(f);
                // `describe` never panics (it only reads, with checked indices); should a
                // bug make it, the panic stops here instead of aborting in the handler.
                std::panic::catch_unwind(move || f(addr)).ok().flatten()
            } else {
                None
            };
            let mut b = StackBuf {
                buf: [0; 2048],
                len: 0,
            };
            let tid = libc::syscall(libc::SYS_gettid);
            let _ = write!(b, "[ERROR] ASCENDCL({},{}): ", libc::getpid(), tid);
            let kernel = kernel_context();
            let _ = write_message(&mut b, addr, access, detail.as_deref(), kernel.as_ref());
            if b.len == b.buf.len() {
                b.len -= 1;
            }
            b.buf[b.len] = b'\n';
            b.len += 1;
            libc::write(2, b.buf.as_ptr() as *const libc::c_void, b.len);
            // Die of the same signal: default action, then re-raise it unblocked.
            set_default(sig);
            libc::raise(sig);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            return; // re-executing the access faults again with the default action
        }
        if code > 0 {
            if let Some(k) = kernel_context() {
                // Any other fault of kernel code (a wild or null pointer, a stack overflow):
                // say which kernel block it was, then let the previous handler (Rust's
                // stack-overflow report, a sanitizer) or the default action take over.
                let mut b = StackBuf {
                    buf: [0; 2048],
                    len: 0,
                };
                let tid = libc::syscall(libc::SYS_gettid);
                let _ = writeln!(
                    b,
                    "[ERROR] ASCENDCL({},{}): kernel {} block {}/{} crashed: {} at address 0x{addr:x} \
                     (not device memory: a wild or null pointer, or a stack overflow, in kernel code)",
                    libc::getpid(),
                    tid,
                    std::str::from_utf8(&k.name[..k.len]).unwrap_or("?"),
                    k.block_idx,
                    k.block_num,
                    if sig == libc::SIGSEGV { "SIGSEGV" } else { "SIGBUS" }
                );
                libc::write(2, b.buf.as_ptr() as *const libc::c_void, b.len);
            }
        }
        let idx = if sig == libc::SIGSEGV { 0 } else { 1 };
        let prev = (*PREV.0.get())[idx].assume_init_ref();
        let h = prev.sa_sigaction;
        if h == libc::SIG_DFL || h == libc::SIG_IGN {
            set_default(sig);
            if code <= 0 {
                libc::raise(sig);
            }
            // A fault re-executes and dies with the default action.
        } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Node;
    use std::os::unix::process::ExitStatusExt;
    use std::sync::OnceLock;

    static NODE: OnceLock<Node> = OnceLock::new();

    fn describe_test(addr: u64) -> Option<String> {
        NODE.get().and_then(|n| describe(n, addr))
    }

    #[test]
    fn message_text() {
        let m = message(crate::memory::device_addr(2, 64), Access::Write, None);
        assert_eq!(
            m,
            "host code wrote device memory at 0x130000000040: device 2 (the allocation could \
             not be looked up) — device memory is not host-accessible; copy it with aclrtMemcpy"
        );
    }

    #[test]
    fn kernel_message_text() {
        let a = crate::memory::device_addr(0, 16);
        set_kernel_context(Some(("add_custom", 3, 8)));
        let m = kernel_message(a, Access::Read, Some("inside allocation X"));
        set_kernel_context(None);
        assert_eq!(
            m,
            "kernel add_custom block 3/8 read device memory at 0x110000000010 through a raw \
             pointer: inside allocation X — kernels must access global memory through \
             GlobalTensor (DataCopy, GetValue, SetValue), never by dereferencing a GM_ADDR / \
             __gm__ pointer"
        );
        assert!(kernel_message(a, Access::Read, None).starts_with("host code read"));
    }

    #[test]
    fn aarch64_syndrome_records() {
        let mut b = [0u8; 64];
        // A foreign record (FPSIMD, 16 bytes), then ESR, then the terminator.
        b[0..4].copy_from_slice(&0x4650_8001u32.to_le_bytes());
        b[4..8].copy_from_slice(&16u32.to_le_bytes());
        b[16..20].copy_from_slice(&0x4553_5201u32.to_le_bytes());
        b[20..24].copy_from_slice(&16u32.to_le_bytes());
        let esr = |v: u64, b: &mut [u8; 64]| b[24..32].copy_from_slice(&v.to_le_bytes());
        // The pointer and length of every esr_access call below describe a live local array.
        esr((0x24 << 26) | (1 << 6), &mut b);
        // SAFETY: as above.
        assert_eq!(unsafe { esr_access(b.as_ptr(), 64) }, Access::Write);
        esr(0x25 << 26, &mut b);
        // SAFETY: as above.
        assert_eq!(unsafe { esr_access(b.as_ptr(), 64) }, Access::Read);
        esr(0x20 << 26, &mut b);
        // SAFETY: as above.
        assert_eq!(unsafe { esr_access(b.as_ptr(), 64) }, Access::Unknown);
        assert_eq!(
            // SAFETY: as above.
            unsafe { esr_access([0u8; 16].as_ptr(), 16) },
            Access::Unknown
        );
    }

    /// Child side of [`host_access_is_reported`].
    #[test]
    fn fault_child() {
        let Ok(mode) = std::env::var("NPU_EMU_TEST_FAULT") else {
            return;
        };
        let dir = std::env::var("NPU_EMU_TEST_FAULT_DIR").unwrap();
        let cfg = crate::node::tests::config(std::path::Path::new(&dir), 1, "256M");
        let node = NODE.get_or_init(|| Node::open(&cfg).unwrap());
        // SAFETY: a test child process installs the handler from normal context.
        unsafe { install(describe_test) };
        let a = node.alloc(0, 4096, 4000).unwrap();
        let p = a.addr as *mut u8;
        // SAFETY: deliberately faulting accesses, in a child process the test watches: the
        // handler must turn each into its message and end the process.
        unsafe {
            match mode.as_str() {
                "read" => {
                    std::ptr::read_volatile(p.add(100));
                }
                "write" => std::ptr::write_volatile(p.add(8), 1),
                "freed" => {
                    node.free(a.addr).unwrap();
                    std::ptr::read_volatile(p);
                }
                "damaged" => {
                    // A slab nobody allocated in, whose owner word is garbage.
                    let off = node.slab_size() * 5;
                    node.damage_slab_owner(0, off, 0xffff_fff0);
                    std::ptr::read_volatile(crate::memory::device_addr(0, off + 64) as *const u8);
                }
                _ => std::ptr::write_volatile(std::ptr::null_mut::<u8>().add(8), 1),
            }
        }
        // SAFETY: _exit ends the process without running anything else.
        unsafe { libc::_exit(0) };
    }

    fn run_child(mode: &str) -> (std::process::ExitStatus, String) {
        let t = crate::node::tests::TempDir::new("fault");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "fault::tests::fault_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("NPU_EMU_TEST_FAULT", mode)
            .env("NPU_EMU_TEST_FAULT_DIR", &t.0)
            .output()
            .unwrap();
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    #[test]
    fn host_access_is_reported() {
        let (st, err) = run_child("read");
        assert_eq!(st.signal(), Some(libc::SIGSEGV), "{err}");
        let line = err
            .lines()
            .find(|l| l.contains("ASCENDCL"))
            .unwrap_or_else(|| panic!("{err}"));
        assert!(line.starts_with("[ERROR] ASCENDCL("), "{line}");
        #[cfg(target_arch = "x86_64")]
        assert!(
            line.contains("host code read device memory at 0x"),
            "{line}"
        );
        assert!(line.contains("inside allocation 0x"), "{line}");
        assert!(
            line.contains("(4096 bytes) on device 0 at offset 100 (allocated by this process)"),
            "{line}"
        );
        assert!(line.ends_with("copy it with aclrtMemcpy"), "{line}");

        let (st, err) = run_child("write");
        assert_eq!(st.signal(), Some(libc::SIGSEGV), "{err}");
        #[cfg(target_arch = "x86_64")]
        assert!(err.contains("host code wrote device memory"), "{err}");
        assert!(err.contains("at offset 8"), "{err}");

        let (st, err) = run_child("freed");
        assert_eq!(st.signal(), Some(libc::SIGSEGV), "{err}");
        assert!(err.contains("freed memory"), "{err}");

        // A damaged slab table: still the diagnostic and SIGSEGV, never a panic (which
        // would abort inside the handler).
        let (st, err) = run_child("damaged");
        assert_eq!(st.signal(), Some(libc::SIGSEGV), "{err}");
        assert!(err.contains("host code read device memory"), "{err}");
        assert!(!err.contains("panicked"), "{err}");

        // Other faults are not ours: the previous handler / default action.
        let (st, err) = run_child("null");
        assert_eq!(st.signal(), Some(libc::SIGSEGV), "{err}");
        assert!(!err.contains("ASCENDCL"), "{err}");
    }
}
