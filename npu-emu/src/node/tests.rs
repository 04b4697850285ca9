//! Unit tests of the node: each test uses its own node directory under /dev/shm.

use super::*;
use crate::codes::{ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_MEMORY_ALLOCATION};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::AtomicU32;

/// A node directory removed at the end of the test.
pub(crate) struct TempDir(pub PathBuf);

impl TempDir {
    pub(crate) fn new(name: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let d = PathBuf::from(format!(
            "/dev/shm/npu-emu-test-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) fn config(dir: &Path, devices: u32, hbm: &str) -> Config {
    let mut m = HashMap::new();
    m.insert("NPU_EMU_NODE_DIR", dir.to_str().unwrap().to_string());
    m.insert("NPU_EMU_DEVICES", devices.to_string());
    m.insert("NPU_EMU_HBM_SIZE", hbm.to_string());
    m.insert("ASCEND_GLOBAL_LOG_LEVEL", "4".to_string());
    Config::from_lookup(|k| m.get(k).cloned()).unwrap()
}

fn blocks(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks()
}

#[test]
fn alloc_free_and_messages() {
    let t = TempDir::new("basic");
    let node = Node::open(&config(&t.0, 2, "256M")).unwrap();
    assert_eq!(node.devices(), 2);
    assert_eq!(node.hbm_size(), 256 << 20);
    assert_eq!(node.mem_info(1), (256 << 20, 256 << 20));

    let a = node.alloc(1, 96, 50).unwrap();
    assert_eq!(device_of(a.addr), Some(1));
    assert_eq!(a.addr % 32, 0);
    assert_eq!((a.size, a.requested, a.device), (96, 50, 1));
    let b = node.alloc(1, 64, 1).unwrap();
    assert_ne!(a.addr, b.addr);
    assert_eq!(node.mem_info(1), ((256 << 20) - 160, 256 << 20));
    assert_eq!(node.mem_info(0).0, 256 << 20);
    assert_eq!(node.lookup(a.addr + 95), Some(a));
    assert_eq!(
        node.lookup(a.addr + 96).map(|x| x.addr),
        (b.addr == a.addr + 96).then_some(b.addr)
    );

    // Data written through one allocation's alias is seen through the physical alias.
    let p = node.check(a.addr, 96, "dst").unwrap();
    // SAFETY: `check` returned a host pointer to the 96 checked bytes.
    unsafe { std::ptr::write_bytes(p, 0xab, 96) };
    let q = node.phys_to_host(a.phys(), 96).unwrap();
    // SAFETY: `phys_to_host` returned a host pointer to 96 bytes.
    assert_eq!(unsafe { *q.add(95) }, 0xab);
    assert_eq!(
        node.phys(a.addr + 10, 4, "src").unwrap().offset,
        a.phys().offset + 10
    );

    // Bounds.
    assert!(
        node.check(a.addr + 96, 0, "dst").is_ok(),
        "len 0 at the end is fine"
    );
    let e = node.check(a.addr + 90, 7, "dst").unwrap_err();
    assert_eq!(e.code, ACL_ERROR_INVALID_PARAM);
    assert!(
        e.msg.contains("dst") && e.msg.contains("runs past the end"),
        "{}",
        e.msg
    );
    assert!(
        e.msg
            .contains(&format!("0x{:x} (96 bytes) on device 1", a.addr)),
        "{}",
        e.msg
    );
    let e = node.check(a.addr, u64::MAX, "src").unwrap_err();
    assert!(e.msg.contains("runs past the end"), "{}", e.msg);
    let e = node.check(0x1234, 4, "src").unwrap_err();
    assert!(e.msg.contains("not a device address"), "{}", e.msg);
    let e = node.check(device_addr(1, 200 << 20), 4, "src").unwrap_err();
    assert!(e.msg.contains("not allocated"), "{}", e.msg);
    let e = node.check(a.addr + 96 + 64 + 40, 4, "src").unwrap_err();
    assert!(
        e.msg.contains("40 bytes past the end of allocation"),
        "{}",
        e.msg
    );
    let e = node.check(device_addr(5, 0), 4, "src").unwrap_err();
    assert!(e.msg.contains("device 5 does not exist"), "{}", e.msg);

    // Free: interior pointer, double free, foreign pointer.
    let e = node.free(a.addr + 32).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_INVALID_PARAM);
    assert!(
        e.msg.contains(&format!(
            "inside allocation 0x{:x} of 96 bytes on device 1",
            a.addr
        )),
        "{}",
        e.msg
    );
    assert_eq!(node.free(a.addr).unwrap(), a);
    let e = node.free(a.addr).unwrap_err();
    assert!(e.msg.contains("already freed"), "{}", e.msg);
    assert!(e.msg.contains(&format!("0x{:x}", a.addr)), "{}", e.msg);
    let e = node.check(a.addr + 8, 8, "src").unwrap_err();
    assert!(e.msg.contains("freed memory"), "{}", e.msg);
    let e = node.free(0x1000).unwrap_err();
    assert!(e.msg.contains("not a device address"), "{}", e.msg);
    assert_eq!(node.mem_info(1), ((256 << 20) - 64, 256 << 20));

    let us = node.usage();
    let me = us.iter().find(|u| u.pid == std::process::id()).unwrap();
    assert_eq!(me.bytes, vec![0, 64]);
    assert!(!me.name.is_empty());
    node.free(b.addr).unwrap();
    assert_eq!(node.mem_info(1).0, 256 << 20);
    // Every slab went back to the node and its pages were punched.
    assert_eq!(blocks(&t.0.join("hbm.1")), 0);
    for s in 0..node.sh.nslabs {
        assert_eq!(node.sh.slab(1, s).load(Ordering::SeqCst), 0);
    }
}

#[test]
fn large_allocations_and_reuse() {
    let t = TempDir::new("large");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    let slab = node.slab_size();
    assert_eq!(slab, 8 << 20);
    // Larger than a slab: a contiguous run.
    let big = node.alloc(0, 3 * slab + 32, 3 * slab + 1).unwrap();
    let p = node.check(big.addr, big.size, "dst").unwrap();
    // SAFETY: `check` returned a host pointer to the whole allocation.
    unsafe { *p.add(big.size as usize - 1) = 7 };
    // Small allocations fill the tail of the run, then other slabs.
    let mut small = Vec::new();
    for _ in 0..100 {
        small.push(node.alloc(0, 4096, 4000).unwrap());
    }
    for s in &small {
        node.free(s.addr).unwrap();
    }
    node.free(big.addr).unwrap();
    assert_eq!(node.mem_info(0).0, 256 << 20);
    // Exhausted HBM.
    let e = node.alloc(0, 300 << 20, 1).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    let x = node.alloc(0, 200 << 20, 1).unwrap();
    let e = node.alloc(0, 100 << 20, 1).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert!(
        e.msg.contains("device 0") && e.msg.contains("104857600"),
        "{}",
        e.msg
    );
    assert!(e.msg.contains(t.0.to_str().unwrap()), "{}", e.msg);
    node.free(x.addr).unwrap();
    // A long-running loop does not leak.
    for i in 0..2000u64 {
        let a = node.alloc(0, 32 * (1 + i % 50), 1).unwrap();
        node.free(a.addr).unwrap();
    }
    node.settle_frees();
    assert!(node.inner.lock().pools.values().all(|p| p.is_empty()));
}

#[test]
fn large_frees_give_their_pages_back_in_the_background() {
    let t = TempDir::new("punch");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    let hbm = t.0.join("hbm.0");
    let touch = |a: &AllocInfo| {
        let p = node.check(a.addr, a.size, "dst").unwrap();
        // SAFETY: `check` returned a host pointer to the whole allocation.
        unsafe { std::ptr::write_bytes(p, 3, a.size as usize) };
    };
    // The whole device, used, freed and at once allocated again: the second allocation
    // waits for the first one's range instead of failing.
    for _ in 0..3 {
        let a = node.alloc(0, 256 << 20, 256 << 20).unwrap();
        touch(&a);
        node.free(a.addr).unwrap();
        assert_eq!(node.mem_info(0).0, 256 << 20, "counted free at once");
    }
    node.settle_frees();
    assert_eq!(blocks(&hbm), 0);
    for s in 0..node.sh.nslabs {
        assert_eq!(node.sh.slab(0, s).load(Ordering::SeqCst), 0, "slab {s}");
    }
    // Neighbours: a large range freed between two small live ones gives back every page
    // it holds alone, and the pages it shares once the neighbours go too.
    let x = node.alloc(0, 100, 100).unwrap();
    let big = node.alloc(0, (8 << 20) + 96, 1).unwrap();
    let y = node.alloc(0, 100, 100).unwrap();
    for a in [&x, &big, &y] {
        touch(a);
    }
    node.free(big.addr).unwrap();
    node.settle_frees();
    assert!(
        blocks(&hbm) * 512 <= 4 * 4096,
        "{} blocks left",
        blocks(&hbm)
    );
    // Its range is allocatable again and reads back what is written.
    let again = node.alloc(0, 8 << 20, 1).unwrap();
    touch(&again);
    for a in [x, y, again] {
        node.free(a.addr).unwrap();
    }
    node.settle_frees();
    assert_eq!(blocks(&hbm), 0);
    // Dropping the node with a punch pending finishes it.
    let a = node.alloc(0, 64 << 20, 1).unwrap();
    touch(&a);
    node.free(a.addr).unwrap();
    drop(node);
    assert_eq!(blocks(&hbm), 0);
}

#[test]
fn two_nodes_in_one_process() {
    let t = TempDir::new("two");
    let u = TempDir::new("two-other");
    let a = Node::open(&config(&t.0, 2, "128M")).unwrap();
    let b = Node::open(&config(&t.0, 4, "512M")).unwrap();
    // The second join uses the header's values.
    assert_eq!((b.devices(), b.hbm_size()), (2, 128 << 20));
    let c = Node::open(&config(&u.0, 3, "1G")).unwrap();
    assert_eq!(c.devices(), 3);
    let x = a.alloc(0, 64, 64).unwrap();
    let y = b.alloc(0, 64, 64).unwrap();
    assert_ne!(x.addr, y.addr, "two processes' slots never share a slab");
    // SAFETY: `check` returned a host pointer to the checked byte.
    unsafe { *a.check(x.addr, 1, "dst").unwrap() = 42 };
    // Another view of the same node reads the same byte through the physical address.
    // SAFETY: `phys_to_host` returned a host pointer to 1 byte.
    assert_eq!(unsafe { *b.phys_to_host(x.phys(), 1).unwrap() }, 42);
    assert!(b
        .check(x.addr, 1, "src")
        .unwrap_err()
        .msg
        .contains("another process"));
    assert_eq!(a.mem_info(0).0, (128 << 20) - 128);
    assert_eq!(a.usage().len(), 1, "one pid, merged");
    assert_eq!(a.usage()[0].bytes, vec![128, 0]);
    drop(b);
    assert_eq!(
        a.mem_info(0).0,
        (128 << 20) - 64,
        "a dropped node gives its memory back"
    );
    let z = c.alloc(2, 1 << 20, 1).unwrap();
    c.free(z.addr).unwrap();
}

/// Helper for [`dead_process_is_reclaimed`]: run in a child process, allocate and leave
/// without freeing.
#[test]
fn child_allocates_and_exits() {
    let Ok(dir) = std::env::var("NPU_EMU_TEST_CHILD_NODE") else {
        return;
    };
    let node = Node::open(&config(Path::new(&dir), 1, "256M")).unwrap();
    let a = node.alloc(0, 20 << 20, 20 << 20).unwrap();
    // SAFETY: `check` returned a host pointer to the whole 20 MiB allocation.
    unsafe { std::ptr::write_bytes(node.check(a.addr, a.size, "dst").unwrap(), 1, 1 << 20) };
    // SAFETY: _exit ends the (child) process without running anything else.
    unsafe { libc::_exit(0) };
}

#[test]
fn dead_process_is_reclaimed() {
    let t = TempDir::new("dead");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    let st = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "node::tests::child_allocates_and_exits",
            "--nocapture",
        ])
        .env("NPU_EMU_TEST_CHILD_NODE", &t.0)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let hbm = t.0.join("hbm.0");
    assert!(
        blocks(&hbm) >= (20 << 20) / 512,
        "the child reserved its memory"
    );
    // Scanning the table (mem_info) reclaims the dead child's slabs and RAM.
    assert_eq!(node.mem_info(0), (256 << 20, 256 << 20));
    assert_eq!(blocks(&hbm), 0);
    assert_eq!(node.usage().len(), 1);
    // And its slabs can be taken again: the whole device fits.
    let all = node.alloc(0, 256 << 20, 1).unwrap();
    node.free(all.addr).unwrap();
}

#[test]
fn full_shm_is_an_allocation_error() {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("note: full_shm_is_an_allocation_error skipped: mounting a tmpfs needs root");
        return;
    }
    let t = TempDir::new("full");
    std::fs::create_dir_all(&t.0).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&t.0)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("note: full_shm_is_an_allocation_error skipped: mount -t tmpfs failed");
        return;
    }
    struct Umount(PathBuf);
    impl Drop for Umount {
        fn drop(&mut self) {
            // Lazily: a reaper of the test's node may still hold a file there for a moment
            // (a plain umount then fails with EBUSY and leaves the mount behind).
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }
    let _u = Umount(t.0.clone());
    let dir = t.0.join("node");
    let node = Node::open(&config(&dir, 1, "64M")).unwrap();
    let e = node.alloc(0, 16 << 20, 16 << 20).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert!(
        e.msg.contains("device 0") && e.msg.contains("16777216"),
        "{}",
        e.msg
    );
    assert!(e.msg.contains(dir.to_str().unwrap()), "{}", e.msg);
    assert_eq!(node.mem_info(0).0, 64 << 20, "nothing stays counted");
    // What fits is usable to the last byte (no SIGBUS).
    let a = node.alloc(0, 6 << 20, 6 << 20).unwrap();
    let p = node.check(a.addr, a.size, "dst").unwrap();
    // SAFETY: `check` returned a host pointer to the whole allocation.
    unsafe { std::ptr::write_bytes(p, 3, a.size as usize) };
    let e = node.alloc(0, 4 << 20, 1).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    node.free(a.addr).unwrap();
    let b = node.alloc(0, 7 << 20, 1).unwrap();
    // SAFETY: `check` returns a host pointer to the whole allocation.
    unsafe {
        std::ptr::write_bytes(
            node.check(b.addr, b.size, "dst").unwrap(),
            4,
            b.size as usize,
        )
    };
    node.free(b.addr).unwrap();
    // /dev/shm fills up (another process) between a large allocation and its first use:
    // the first use is the error, with the message; once space is back it works.
    let c = node.alloc(0, 6 << 20, 6 << 20).unwrap();
    let filler = t.0.join("filler");
    std::fs::write(&filler, vec![1u8; 4 << 20]).unwrap();
    let e = node.check(c.addr + 4096, 64, "dst").unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert!(
        e.msg.contains("first use") && e.msg.contains(&format!("0x{:x}", c.addr)),
        "{}",
        e.msg
    );
    assert!(node.reserve_pending().is_err());
    std::fs::remove_file(&filler).unwrap();
    let p = node.check(c.addr, c.size, "dst").unwrap();
    // SAFETY: `check` returned a host pointer to the whole allocation.
    unsafe { std::ptr::write_bytes(p, 5, c.size as usize) };
    node.free(c.addr).unwrap();
    drop(node);
}

#[test]
fn large_allocations_are_reserved_at_first_use() {
    let t = TempDir::new("lazy");
    let node = Node::open(&config(&t.0, 1, "1G")).unwrap();
    let hbm = t.0.join("hbm.0");
    // Small: reserved when allocated.
    let small = node.alloc(0, 64 << 10, 64 << 10).unwrap();
    assert!(blocks(&hbm) >= (64 << 10) / 512);
    let before = blocks(&hbm);
    // Large: nothing reserved until the first check of any part of it, then all of it.
    let a = node.alloc(0, 256 << 20, 256 << 20).unwrap();
    let b = node.alloc(0, 128 << 20, 128 << 20).unwrap();
    assert_eq!(blocks(&hbm), before);
    node.check(a.addr + (1 << 20), 1, "src").unwrap();
    assert!(blocks(&hbm) >= before + (256 << 20) / 512);
    assert!(
        blocks(&hbm) < before + (384 << 20) / 512,
        "b is not reserved yet"
    );
    // Before a kernel: everything pending.
    node.reserve_pending().unwrap();
    assert!(blocks(&hbm) >= before + (384 << 20) / 512);
    // Freed before any use: nothing to reserve, nothing left behind.
    let c = node.alloc(0, 64 << 20, 64 << 20).unwrap();
    node.free(c.addr).unwrap();
    for x in [a, b, small] {
        node.free(x.addr).unwrap();
    }
    node.settle_frees();
    assert_eq!(blocks(&hbm), 0);
    // More than the file system can hold is refused when allocated, counting what this
    // process allocated and has not reserved yet.
    let big = Node::open(&config(&t.0.join("big"), 1, "1T")).unwrap();
    let free = big.sh.space_left(0).unwrap();
    let n = (free / 2 + (64 << 20)).next_multiple_of(64 << 20);
    let x = big.alloc(0, n, n).unwrap();
    let e = big.alloc(0, n, n).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert!(e.msg.contains("not reserved yet"), "{}", e.msg);
    big.free(x.addr).unwrap();
}

#[test]
fn virtual_memory() {
    let t = TempDir::new("vmm");
    let node = Node::open(&config(&t.0, 2, "256M")).unwrap();
    let g = node.granularity();
    assert_eq!(g, 2 << 20);
    assert!(node.reserve_va(g + 1, 0).is_err());
    assert!(node.reserve_va(g, 3).is_err());
    let va = node.reserve_va(4 * g, 0).unwrap();
    assert!(va >= VMM_BASE && va.is_multiple_of(g));
    let va2 = node.reserve_va(g, 0).unwrap();
    assert!(va2 >= va + 4 * g);
    let h = node.alloc_physical(1, 2 * g).unwrap();
    assert_eq!(node.mem_info(1).0, (256 << 20) - 2 * g);
    assert!(node
        .check(va, 1, "dst")
        .unwrap_err()
        .msg
        .contains("nothing is mapped"));
    node.map(va + g, g, g, h.id).unwrap();
    let e = node.map(va, 2 * g, 0, h.id).unwrap_err();
    assert!(e.msg.contains("overlaps"), "{}", e.msg);
    assert!(node.map(va, g, 2 * g, h.id).is_err(), "past the handle");
    assert!(
        node.map(va + 3 * g, 2 * g, 0, h.id).is_err(),
        "past the reservation"
    );
    let p = node.check(va + g, g, "dst").unwrap();
    // SAFETY: `check` returned a host pointer to the g checked bytes.
    unsafe { *p.add(5) = 9 };
    let phys = node.phys(va + g + 5, 1, "src").unwrap();
    assert_eq!(
        phys,
        RtPhys {
            device: 1,
            _pad: 0,
            offset: h.phys.offset + g + 5
        }
    );
    // SAFETY: `phys_to_host` returned a host pointer to 1 byte.
    assert_eq!(unsafe { *node.phys_to_host(phys, 1).unwrap() }, 9);
    assert!(node
        .check(va + g, g + 1, "dst")
        .unwrap_err()
        .msg
        .contains("runs past"));
    assert!(node
        .free_physical(h.id)
        .unwrap_err()
        .msg
        .contains("still mapped"));
    assert!(node
        .release_va(va)
        .unwrap_err()
        .msg
        .contains("still has memory mapped"));
    node.unmap(va + g).unwrap();
    assert!(node.unmap(va + g).is_err());
    node.free_physical(h.id).unwrap();
    assert!(node.free_physical(h.id).is_err());
    node.release_va(va).unwrap();
    assert!(node.release_va(va).is_err());
    node.release_va(va2).unwrap();
    assert_eq!(node.mem_info(1).0, 256 << 20);
}

#[test]
fn describe_for_the_fault_handler() {
    let t = TempDir::new("describe");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    let a = node.alloc(0, 1024, 1000).unwrap();
    let d = node.describe_addr(a.addr + 16).unwrap();
    assert_eq!(
        d,
        format!(
            "inside allocation 0x{:x} (1024 bytes) on device 0 at offset 16 (allocated by this process)",
            a.addr
        )
    );
    assert_eq!(node.describe_addr(0x1000), None);
    let held = node.inner.lock();
    assert_eq!(node.describe_addr(a.addr), None, "never blocks");
    drop(held);
    node.free(a.addr).unwrap();
    assert!(node.describe_addr(a.addr).unwrap().contains("freed"));
}

/// Fill `[addr, addr+size)` with `tag` and check it later: allocations never overlap.
fn fill_and_verify(node: &Node, tag: u8, rounds: usize, seed: u64) {
    let mut live: Vec<(AllocInfo, u8)> = Vec::new();
    let mut x = seed;
    for i in 0..rounds {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let size = 32 * (1 + (x >> 33) % 4096);
        let a = node.alloc(0, size, size).unwrap();
        let v = tag.wrapping_add(i as u8);
        // SAFETY: `check` returns a host pointer to the whole allocation.
        unsafe {
            std::ptr::write_bytes(
                node.check(a.addr, a.size, "dst").unwrap(),
                v,
                a.size as usize,
            )
        };
        live.push((a, v));
        if (x >> 20).is_multiple_of(3) {
            let (a, v) = live.swap_remove(((x >> 40) as usize) % live.len());
            let p = node.check(a.addr, a.size, "src").unwrap();
            // SAFETY: `check` returned a host pointer to the whole allocation, not written meanwhile.
            let s = unsafe { std::slice::from_raw_parts(p, a.size as usize) };
            assert!(
                s.iter().all(|&b| b == v),
                "allocation 0x{:x} was overwritten",
                a.addr
            );
            node.free(a.addr).unwrap();
        }
    }
    for (a, v) in live {
        let p = node.check(a.addr, a.size, "src").unwrap();
        // SAFETY: as above.
        let s = unsafe { std::slice::from_raw_parts(p, a.size as usize) };
        assert!(
            s.iter().all(|&b| b == v),
            "allocation 0x{:x} was overwritten",
            a.addr
        );
        node.free(a.addr).unwrap();
    }
}

#[test]
fn threads_share_one_node() {
    let t = TempDir::new("threads");
    let node = Node::open(&config(&t.0, 1, "512M")).unwrap();
    std::thread::scope(|s| {
        for k in 0..6u8 {
            let node = &node;
            s.spawn(move || fill_and_verify(node, k * 40, 400, k as u64));
        }
    });
    assert_eq!(node.mem_info(0).0, 512 << 20);
    assert!(node.inner.lock().pools.values().all(|p| p.is_empty()));
}

/// Child side of [`processes_share_a_device`].
#[test]
fn child_fills_memory() {
    let Ok(dir) = std::env::var("NPU_EMU_TEST_FILL_NODE") else {
        return;
    };
    let tag: u8 = std::env::var("NPU_EMU_TEST_FILL_TAG")
        .unwrap()
        .parse()
        .unwrap();
    let node = Node::open(&config(Path::new(&dir), 1, "512M")).unwrap();
    fill_and_verify(&node, tag, 600, tag as u64);
}

#[test]
fn processes_share_a_device() {
    let t = TempDir::new("procs");
    let node = Node::open(&config(&t.0, 1, "512M")).unwrap();
    let kids: Vec<_> = (0..3)
        .map(|k| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "node::tests::child_fills_memory", "--nocapture"])
                .env("NPU_EMU_TEST_FILL_NODE", &t.0)
                .env("NPU_EMU_TEST_FILL_TAG", (k * 70).to_string())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    fill_and_verify(&node, 250, 600, 99);
    for k in kids {
        let out = k.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(node.mem_info(0).0, 512 << 20);
    assert_eq!(blocks(&t.0.join("hbm.0")), 0);
}

#[test]
fn foreign_pid_namespace_is_never_reclaimed() {
    let t = TempDir::new("pidns");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    // A slot of a process we cannot see: a pid that does not exist here, another namespace.
    let slot = {
        let _g = node.sh.lock().unwrap();
        let slot = (0..shared::MAX_PROCS)
            .find(|&i| node.sh.proc(i).pid.load(Ordering::SeqCst) == 0)
            .unwrap();
        let e = node.sh.proc(slot);
        e.pidns.store(
            node.sh.proc(node.slot).pidns.load(Ordering::SeqCst) ^ 1,
            Ordering::SeqCst,
        );
        e.start_time.store(1, Ordering::SeqCst);
        e.bytes[0].store(4096, Ordering::SeqCst);
        e.pid.store(0x3fff_fff0, Ordering::SeqCst);
        slot
    };
    assert_eq!(
        node.sh.take_slabs_near(0, &[], 1, slot).unwrap(),
        Some((0, 1))
    );
    assert_eq!(node.mem_info(0).0, (256 << 20) - 4096, "still counted");
    assert_eq!(node.sh.slab(0, 0).load(Ordering::SeqCst), slot as u32 + 1);
    // The same slot in our namespace is dead and reclaimed.
    node.sh.proc(slot).pidns.store(0, Ordering::SeqCst);
    assert_eq!(node.mem_info(0).0, 256 << 20);
    assert_eq!(node.sh.slab(0, 0).load(Ordering::SeqCst), 0);
    assert_eq!(node.sh.proc(slot).pid.load(Ordering::SeqCst), 0);
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode_of(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn a_new_node_directory_is_private() {
    let t = TempDir::new("private");
    let node = Node::open(&config(&t.0, 1, "64M")).unwrap();
    assert_eq!(mode_of(&t.0), 0o700);
    for f in ["lock", "header", "procs", "slabs.0", "hbm.0"] {
        assert_eq!(mode_of(&t.0.join(f)), 0o600, "{f}");
    }
    drop(node);
    // A directory of ours that others may only read (mkdir with the usual umask) is
    // tightened; one they may write to is refused.
    chmod(&t.0, 0o755);
    drop(Node::open(&config(&t.0, 1, "64M")).unwrap());
    assert_eq!(mode_of(&t.0), 0o700);
    chmod(&t.0, 0o777);
    let e = Node::open(&config(&t.0, 1, "64M")).err().unwrap();
    assert_eq!(e.code, crate::codes::ACL_ERROR_RT_NO_PERMISSION);
    assert!(
        e.msg.contains("mode 0777") && e.msg.contains("writable by other users"),
        "{}",
        e.msg
    );
    assert!(e.msg.contains("set NPU_EMU_NODE_DIR"), "{}", e.msg);
    chmod(&t.0, 0o700);
    // A node file others may read: they could hold it open, so it is refused.
    chmod(&t.0.join("hbm.0"), 0o644);
    let e = Node::open(&config(&t.0, 1, "64M")).err().unwrap();
    assert!(
        e.msg.contains("hbm.0") && e.msg.contains("mode 0644"),
        "{}",
        e.msg
    );
}

#[test]
fn symbolic_links_in_a_node_are_never_followed() {
    let t = TempDir::new("links");
    let victim = PathBuf::from(format!("{}-victim", t.0.display()));
    std::fs::write(&victim, b"precious").unwrap();
    struct Rm(PathBuf);
    impl Drop for Rm {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _rm = Rm(victim.clone());
    std::fs::create_dir_all(&t.0).unwrap();
    chmod(&t.0, 0o700);
    std::os::unix::fs::symlink(&victim, t.0.join("hbm.0")).unwrap();
    let e = Node::open(&config(&t.0, 1, "64M")).err().unwrap();
    assert!(e.msg.contains("hbm.0 is a symbolic link"), "{}", e.msg);
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        b"precious",
        "not truncated"
    );
    // The node directory itself as a link.
    std::fs::remove_dir_all(&t.0).unwrap();
    let real = PathBuf::from(format!("{}-real", t.0.display()));
    std::fs::create_dir_all(&real).unwrap();
    chmod(&real, 0o700);
    std::os::unix::fs::symlink(&real, &t.0).unwrap();
    let e = Node::open(&config(&t.0, 1, "64M")).err().unwrap();
    assert!(
        e.msg.contains("is a symbolic link or not a directory"),
        "{}",
        e.msg
    );
    std::fs::remove_file(&t.0).unwrap();
    std::fs::remove_dir_all(&real).unwrap();
}

#[test]
fn a_node_directory_of_another_user_is_refused() {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("note: a_node_directory_of_another_user_is_refused skipped: chown needs root");
        return;
    }
    let t = TempDir::new("foreign");
    std::fs::create_dir_all(&t.0).unwrap();
    chmod(&t.0, 0o700);
    std::os::unix::fs::chown(&t.0, Some(54321), Some(54321)).unwrap();
    let e = Node::open(&config(&t.0, 1, "64M")).err().unwrap();
    assert_eq!(e.code, crate::codes::ACL_ERROR_RT_NO_PERMISSION);
    assert!(e.msg.contains("belongs to uid 54321"), "{}", e.msg);
    assert!(
        std::fs::read_dir(&t.0).unwrap().next().is_none(),
        "nothing created in it"
    );
    // A file of another user inside our own directory.
    std::os::unix::fs::chown(&t.0, Some(0), Some(0)).unwrap();
    drop(Node::open(&config(&t.0, 1, "64M")).unwrap());
    std::os::unix::fs::chown(t.0.join("procs"), Some(54321), None).unwrap();
    let e = Node::open(&config(&t.0, 1, "64M")).err().unwrap();
    assert!(e.msg.contains("procs belongs to uid 54321"), "{}", e.msg);
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop (None when not root).
pub(crate) struct SmallTmpfs(pub PathBuf);

impl SmallTmpfs {
    pub(crate) fn new(name: &str, size: &str) -> Option<SmallTmpfs> {
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            println!("note: {name} skipped: mounting a tmpfs needs root");
            return None;
        }
        let t = TempDir::new(name);
        std::fs::create_dir_all(&t.0).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&t.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            println!("note: {name} skipped: mount -t tmpfs failed");
            return None;
        }
        let p = t.0.clone();
        std::mem::forget(t);
        Some(SmallTmpfs(p))
    }

    /// Fill the file system to the last page with a file `fill`.
    pub(crate) fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("fill")).unwrap();
        let block = vec![7u8; 4096];
        while f.write_all(&block).is_ok() {}
    }

    pub(crate) fn unfill(&self) {
        let _ = std::fs::remove_file(self.0.join("fill"));
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        // Lazily, as above: a plain umount fails while anything still holds a file there.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn opening_a_node_on_a_full_file_system_is_an_error() {
    let Some(fs) = SmallTmpfs::new("fullopen", "4m") else {
        return;
    };
    let dir = fs.0.join("node");
    // Fresh node: the small files cannot be backed.
    fs.fill();
    let e = Node::open(&config(&dir, 2, "64M")).err().unwrap();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION, "{}", e.msg);
    assert!(
        e.msg.contains("cannot reserve") && e.msg.contains("is full"),
        "{}",
        e.msg
    );
    // Existing node: opened while there was room, joined when full.
    fs.unfill();
    let a = Node::open(&config(&dir, 2, "64M")).unwrap();
    fs.fill();
    let b = Node::open(&config(&dir, 2, "64M")).unwrap();
    // Every page of the shared files is backed: scanning and registering cannot fault.
    assert_eq!(b.sh.live_slots().unwrap().len(), 2);
    assert_eq!(a.mem_info(1).0, 64 << 20);
    let e = b.alloc(0, 1 << 20, 1).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    drop((a, b));
}

#[test]
fn damaged_slab_owners_are_reclaimed() {
    let t = TempDir::new("damaged");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    let slab = node.slab_size();
    let free_slot = {
        let _g = node.sh.lock().unwrap();
        (0..shared::MAX_PROCS)
            .find(|&i| node.sh.proc(i).pid.load(Ordering::SeqCst) == 0)
            .unwrap()
    };
    node.damage_slab_owner(0, 3 * slab, 0xffff_ffff);
    node.damage_slab_owner(0, 4 * slab, free_slot as u32 + 1);
    node.damage_slab_owner(0, 5 * slab, shared::MAX_PROCS as u32 + 1);
    // Describing an address there (what the fault handler does) never panics.
    let d = node.describe_addr(device_addr(0, 3 * slab + 8)).unwrap();
    assert!(d.contains("not allocated"), "{d}");
    let d = node.describe_addr(device_addr(0, 4 * slab + 8)).unwrap();
    assert!(d.contains("device 0"), "{d}");
    // The next scan gives the capacity back: the whole device fits again.
    assert_eq!(node.mem_info(0).0, 256 << 20);
    for s in 3..6 {
        assert_eq!(node.sh.slab(0, s).load(Ordering::SeqCst), 0, "slab {s}");
    }
    let all = node.alloc(0, 256 << 20, 1).unwrap();
    node.free(all.addr).unwrap();
}

#[test]
fn padded_slab_sized_allocations_use_the_whole_device() {
    // CANN pads every aclrtMalloc by 32 bytes: a slab-sized request needs a slab + 32.
    let t = TempDir::new("usable");
    let node = Node::open(&config(&t.0, 1, "256M")).unwrap();
    let slab = node.slab_size();
    let size = slab + 32;
    let mut got = Vec::new();
    while let Ok(a) = node.alloc(0, size, slab) {
        got.push(a);
    }
    let ideal = (256u64 << 20) / size;
    assert_eq!(
        got.len() as u64,
        ideal,
        "slab {slab}: {} of {ideal} fit",
        got.len()
    );
    let (free, total) = node.mem_info(0);
    assert_eq!(free, total - ideal * size);
    // Freed in any order, everything goes back: the whole device fits in one piece.
    for a in got.iter().step_by(2).chain(got.iter().skip(1).step_by(2)) {
        node.free(a.addr).unwrap();
    }
    node.settle_frees();
    assert!(node.inner.lock().pools.values().all(|p| p.is_empty()));
    assert_eq!(blocks(&t.0.join("hbm.0")), 0);
    let all = node.alloc(0, 256 << 20, 1).unwrap();
    node.free(all.addr).unwrap();
}

#[test]
fn the_last_release_gives_back_pages_nobody_owns() {
    use std::os::unix::fs::FileExt;
    let t = TempDir::new("orphan");
    let cfg = config(&t.0, 2, "256M");
    let (sh, _) = Shared::open(&cfg).unwrap();
    // A store into memory no slab owns any more (a dying rank's last result written into a
    // peer's buffer after the peer's memory was reclaimed) backs pages nobody owns.
    for d in 0..2 {
        sh.hbm[d].write_at(&[7u8; 8192], 3 << 20).unwrap();
        assert!(blocks(&t.0.join(format!("hbm.{d}"))) > 0);
    }
    let g = sh.lock().unwrap();
    assert_eq!(sh.registered(), 0);
    sh.release_tables(&g);
    for d in 0..2 {
        assert_eq!(blocks(&t.0.join(format!("hbm.{d}"))), 0, "device {d}");
    }
}

/// `map_host`: the host pages become the device allocation's pages (writes through the host
/// pointer and the alias are the same bytes); `free` refuses it; `unmap_host` gives the host
/// private pages with the current bytes back; dropping the node restores a range still mapped.
#[test]
fn host_memory_mapped_into_a_device() {
    let t = TempDir::new("hostmap");
    let node = Node::open(&config(&t.0, 1, "64M")).unwrap();
    let layout = std::alloc::Layout::from_size_align(3 * 4096, 4096).unwrap();
    // SAFETY: non-zero size.
    let host = unsafe { std::alloc::alloc(layout) };
    assert!(!host.is_null());
    // SAFETY: `host` is 3 pages we own.
    let h = unsafe { std::slice::from_raw_parts_mut(host, 3 * 4096) };
    h.fill(7);
    assert!(node.map_host(0, host as u64 + 1, 4096).is_err());
    let a = node.map_host(0, host as u64, 2 * 4096).unwrap();
    assert_eq!(a.addr % 4096, 0);
    let p = node.check(a.addr, 2 * 4096, "devPtr").unwrap();
    // SAFETY: `check` gave 2 pages of the alias.
    let d = unsafe { std::slice::from_raw_parts_mut(p, 2 * 4096) };
    assert!(d.iter().all(|&b| b == 7), "contents copied in");
    d[5] = 42;
    assert_eq!(h[5], 42, "device write seen through the host pointer");
    h[8000] = 9;
    assert_eq!(d[8000], 9, "host write seen by the device");
    assert_eq!(
        node.host_mapping(a.addr + 10),
        Some((host as u64, 2 * 4096))
    );
    let e = node.free(a.addr).unwrap_err();
    assert!(e.msg.contains("aclrtHostUnregister"), "{}", e.msg);
    node.unmap_host(a.addr).unwrap();
    assert!(node.check(a.addr, 1, "devPtr").is_err());
    assert_eq!(
        (h[5], h[8000], h[9000]),
        (42, 9, 7),
        "bytes survive unmapping"
    );
    h[5] = 1; // private again: the file page does not change
    assert!(node.unmap_host(a.addr).is_err());
    // A range still mapped when the node goes away is put back too.
    let b = node.map_host(0, host as u64 + 4096, 4096).unwrap();
    let p = node.check(b.addr, 4096, "devPtr").unwrap();
    // SAFETY: one page of the alias.
    unsafe { *p.add(3) = 77 };
    drop(node);
    assert_eq!(h[4096 + 3], 77);
    h[4096 + 3] = 78;
    assert_eq!(h[4096 + 3], 78);
    // SAFETY: allocated above with this layout; the pages are private anonymous again.
    unsafe { std::alloc::dealloc(host, layout) };
}
