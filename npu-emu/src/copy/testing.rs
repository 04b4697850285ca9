//! A [`Space`] for the copy engines' unit tests: a real node in its own directory, host
//! ranges the test declares as ACL host memory, logical = physical device ids, and a peer
//! table.

use crate::memory::Space;
use crate::node::tests::{config, TempDir};
use crate::node::Node;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::Arc;

pub(crate) struct TestSpace {
    // Declared before the directory so the node is dropped first.
    pub node: Node,
    _dir: TempDir,
    /// ACL host memory: (start, size).
    pub host: Mutex<Vec<(u64, u64)>>,
    pub peers: Mutex<HashSet<(i32, i32)>>,
}

impl TestSpace {
    /// A node of `devices` devices with 256 MiB each.
    pub fn new(name: &str, devices: u32) -> Arc<TestSpace> {
        let dir = TempDir::new(name);
        let node = Node::open(&config(&dir.0, devices, "256M")).unwrap();
        Arc::new(TestSpace {
            node,
            _dir: dir,
            host: Mutex::new(Vec::new()),
            peers: Mutex::new(HashSet::new()),
        })
    }

    /// Allocate `size` bytes on physical device `device`.
    pub fn alloc(&self, device: u32, size: u64) -> u64 {
        self.node.alloc(device, size, size).unwrap().addr
    }

    /// Declare `buf` ACL host memory (as `aclrtMallocHost` would).
    pub fn pin(&self, buf: &mut [u8]) -> u64 {
        let a = buf.as_mut_ptr() as u64;
        self.host.lock().push((a, buf.len() as u64));
        a
    }

    /// Read `n` bytes of device memory at `addr`.
    pub fn read(&self, addr: u64, n: usize) -> Vec<u8> {
        let p = self.node.check(addr, n as u64, "read").unwrap();
        // SAFETY: n bytes at p were just checked to lie in a live allocation.
        unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
    }

    /// Write `data` to device memory at `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) {
        let p = self.node.check(addr, data.len() as u64, "write").unwrap();
        // SAFETY: data.len() bytes at p were just checked to lie in a live allocation.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    }
}

impl Space for TestSpace {
    fn node(&self) -> &Node {
        &self.node
    }
    fn host_range(&self, addr: u64) -> Option<(u64, u64)> {
        self.host
            .lock()
            .iter()
            .copied()
            .find(|&(s, n)| addr >= s && addr < s + n)
    }
    fn logical_of(&self, phys: u32) -> i32 {
        phys as i32
    }
    fn peer_access(&self, a: i32, b: i32) -> bool {
        let p = self.peers.lock();
        p.contains(&(a, b)) || p.contains(&(b, a))
    }
}
