//! Private suballocation inside the slabs a process took: a first-fit free list per region.

use std::collections::BTreeMap;

/// Alignment of every suballocation (CANN device pointers are at least 32-byte aligned).
pub const ALIGN: u64 = 32;

/// A run of contiguous slabs owned by this process.
#[derive(Debug)]
pub struct Region {
    pub device: u32,
    pub first_slab: u64,
    pub nslabs: u64,
    /// Physical offset of the first byte in the device's HBM.
    pub start: u64,
    pub len: u64,
    /// Free blocks: physical offset → length. Adjacent blocks are always merged.
    free: BTreeMap<u64, u64>,
    /// Live suballocations in this region.
    pub live: usize,
}

impl Region {
    pub fn new(device: u32, first_slab: u64, nslabs: u64, slab_size: u64) -> Region {
        let start = first_slab * slab_size;
        let len = nslabs * slab_size;
        let mut free = BTreeMap::new();
        free.insert(start, len);
        Region {
            device,
            first_slab,
            nslabs,
            start,
            len,
            free,
            live: 0,
        }
    }

    /// Whether physical offset `off` lies in this region.
    pub fn contains(&self, off: u64) -> bool {
        (self.start..self.start + self.len).contains(&off)
    }

    /// First fit: take `size` bytes (a multiple of [`ALIGN`]) aligned to `align`.
    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        let (&blk, &blen, at) = self.free.iter().find_map(|(b, l)| {
            let at = b.next_multiple_of(align);
            (at + size <= b + l).then_some((b, l, at))
        })?;
        self.free.remove(&blk);
        if at > blk {
            self.free.insert(blk, at - blk);
        }
        if at + size < blk + blen {
            self.free.insert(at + size, blk + blen - at - size);
        }
        self.live += 1;
        Some(at)
    }

    /// Return `[off, off+size)`; gives back the merged free block that now contains it.
    pub fn free(&mut self, off: u64, size: u64) -> (u64, u64) {
        let (mut start, mut len) = (off, size);
        if let Some((&p, &pl)) = self.free.range(..off).next_back() {
            if p + pl == off {
                self.free.remove(&p);
                start = p;
                len += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(off + size)) {
            self.free.remove(&(off + size));
            len += nl;
        }
        self.free.insert(start, len);
        self.live -= 1;
        (start, len)
    }

    /// Bytes free in this region.
    #[cfg(test)]
    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_splits_and_merges() {
        let mut r = Region::new(0, 2, 1, 1024);
        assert_eq!(r.start, 2048);
        let a = r.alloc(64, ALIGN).unwrap();
        let b = r.alloc(128, ALIGN).unwrap();
        let c = r.alloc(32, ALIGN).unwrap();
        assert_eq!((a, b, c), (2048, 2112, 2240));
        assert_eq!(r.free(b, 128), (2112, 128));
        // A hole that fits is reused first.
        assert_eq!(r.alloc(96, ALIGN), Some(2112));
        assert_eq!(r.free(2112, 96), (2112, 128));
        assert_eq!(r.free(a, 64), (2048, 192));
        assert_eq!(r.free(c, 32), (2048, 1024));
        assert_eq!(r.live, 0);
        assert_eq!(r.free_bytes(), 1024);
        assert_eq!(r.alloc(2048, ALIGN), None);
        assert_eq!(r.alloc(1024, ALIGN), Some(2048));
    }

    #[test]
    fn alignment_leaves_a_hole() {
        let mut r = Region::new(0, 0, 1, 1 << 22);
        assert_eq!(r.alloc(32, ALIGN), Some(0));
        assert_eq!(r.alloc(1 << 21, 1 << 21), Some(1 << 21));
        assert_eq!(r.alloc(64, ALIGN), Some(32));
        assert_eq!(r.free_bytes(), (1 << 22) - (1 << 21) - 96);
    }
}
