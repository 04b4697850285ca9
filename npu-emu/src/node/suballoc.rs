//! Private suballocation inside the slabs a process took from one device: one first-fit free
//! list over all of them.
//!
//! Slabs that are next to each other in the device's HBM are next to each other in the
//! free list too, so an allocation may span a slab boundary. That is what keeps the device
//! usable for sizes just above a slab multiple: CANN pads every `aclrtMalloc` by 32 bytes,
//! so a 64 MiB allocation needs 64 MiB + 32 bytes. Kept per slab run, each such allocation
//! took two 64 MiB slabs and half the device was lost; here the second allocation starts
//! in the tail of the first one's last slab and takes one more slab after it
//! ([`Pool::growth`]).
//!
//! A slab that holds no live byte any more goes back to the node ([`Pool::release_free`]).

use std::collections::BTreeMap;

/// Alignment of every suballocation (CANN device pointers are at least 32-byte aligned).
pub const ALIGN: u64 = 32;

/// The slabs a process holds on one device, and the free space in them.
#[derive(Debug)]
pub struct Pool {
    slab: u64,
    /// Owned slabs: first slab of a run → number of slabs. Adjacent runs are merged.
    owned: BTreeMap<u64, u64>,
    /// Free blocks: physical offset → length. Adjacent blocks are always merged (also
    /// across the boundary of two owned slabs).
    free: BTreeMap<u64, u64>,
}

impl Pool {
    pub fn new(slab: u64) -> Pool {
        Pool {
            slab,
            owned: BTreeMap::new(),
            free: BTreeMap::new(),
        }
    }

    /// Whether the process holds no slab of this device.
    pub fn is_empty(&self) -> bool {
        self.owned.is_empty()
    }

    /// Whether slab `s` is held.
    fn owns(&self, s: u64) -> bool {
        self.owned
            .range(..=s)
            .next_back()
            .is_some_and(|(&f, &n)| s < f + n)
    }

    /// First fit: take `size` bytes (a multiple of [`ALIGN`]) aligned to `align`.
    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        let (blk, blen, at) = self.free.iter().find_map(|(&b, &l)| {
            let at = b.next_multiple_of(align);
            (at.checked_add(size)? <= b + l).then_some((b, l, at))
        })?;
        self.free.remove(&blk);
        if at > blk {
            self.free.insert(blk, at - blk);
        }
        if at + size < blk + blen {
            self.free.insert(at + size, blk + blen - at - size);
        }
        Some(at)
    }

    /// Insert a free block, merging it with its neighbours; returns the merged block.
    fn insert_free(&mut self, off: u64, len: u64) -> (u64, u64) {
        let (mut start, mut len) = (off, len);
        if let Some((&p, &pl)) = self.free.range(..off).next_back() {
            if p + pl == off {
                self.free.remove(&p);
                start = p;
                len += pl;
            }
        }
        if let Some(nl) = self.free.remove(&(start + len)) {
            len += nl;
        }
        self.free.insert(start, len);
        (start, len)
    }

    /// Runs of free slabs `(first, n)` that, once taken, would let an allocation of `size`
    /// bytes fit by joining free space at the edge of a run this process already holds,
    /// fewest new slabs first. `nslabs` is the number of slabs of the device.
    pub fn growth(&self, size: u64, align: u64, nslabs: u64) -> Vec<(u64, u64)> {
        let slab = self.slab;
        let mut out = Vec::new();
        for (&b, &l) in &self.free {
            let e = b + l;
            // A free tail at the end of a held run: take slabs after it.
            if e % slab == 0 && !self.owns(e / slab) {
                let at = b.next_multiple_of(align);
                if let Some(need) = at.checked_add(size).map(|x| x.saturating_sub(e)) {
                    let k = need.div_ceil(slab);
                    if k > 0 && e / slab + k <= nslabs {
                        out.push((e / slab, k));
                    }
                }
            }
            // A free head at the start of a held run: take slabs before it.
            if b % slab == 0 && b > 0 && !self.owns(b / slab - 1) && size > l {
                let k = (size - l).div_ceil(slab);
                if k <= b / slab {
                    out.push((b / slab - k, k));
                }
            }
        }
        out.sort_by_key(|&(_, k)| k);
        out
    }

    /// Hold slabs `[first, first+n)` (just taken from the node): their space becomes free.
    pub fn add(&mut self, first: u64, n: u64) {
        let (mut f, mut c) = (first, n);
        if let Some((&p, &pn)) = self.owned.range(..first).next_back() {
            if p + pn == first {
                self.owned.remove(&p);
                f = p;
                c += pn;
            }
        }
        if let Some(nn) = self.owned.remove(&(f + c)) {
            c += nn;
        }
        self.owned.insert(f, c);
        self.insert_free(first * self.slab, n * self.slab);
    }

    /// Return `[off, off+size)`; gives the merged free block that now contains it.
    pub fn free(&mut self, off: u64, size: u64) -> (u64, u64) {
        self.insert_free(off, size)
    }

    /// Give up every held slab wholly inside the free block `[start, start+len)`: they leave
    /// the pool and are returned as runs `(first, n)` for the node.
    pub fn release_free(&mut self, start: u64, len: u64) -> Vec<(u64, u64)> {
        let slab = self.slab;
        let first = start.div_ceil(slab);
        let end = (start + len) / slab;
        if end <= first {
            return Vec::new();
        }
        // Cut [first*slab, end*slab) out of the free block.
        self.free.remove(&start);
        if first * slab > start {
            self.free.insert(start, first * slab - start);
        }
        if start + len > end * slab {
            self.free.insert(end * slab, start + len - end * slab);
        }
        // And out of the held runs (the block lies in held slabs, so each piece does).
        let mut out = Vec::new();
        let runs: Vec<(u64, u64)> = self
            .owned
            .range(..end)
            .filter(|(&f, &n)| f + n > first)
            .map(|(&f, &n)| (f, n))
            .collect();
        for (f, n) in runs {
            self.owned.remove(&f);
            let (a, b) = (f.max(first), (f + n).min(end));
            if f < a {
                self.owned.insert(f, a - f);
            }
            if b < f + n {
                self.owned.insert(b, f + n - b);
            }
            out.push((a, b - a));
        }
        out
    }

    /// Bytes free in the pool.
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
        let mut p = Pool::new(1024);
        p.add(2, 1);
        let a = p.alloc(64, ALIGN).unwrap();
        let b = p.alloc(128, ALIGN).unwrap();
        let c = p.alloc(32, ALIGN).unwrap();
        assert_eq!((a, b, c), (2048, 2112, 2240));
        assert_eq!(p.free(b, 128), (2112, 128));
        // A hole that fits is reused first.
        assert_eq!(p.alloc(96, ALIGN), Some(2112));
        assert_eq!(p.free(2112, 96), (2112, 128));
        assert_eq!(p.free(a, 64), (2048, 192));
        assert_eq!(p.free(c, 32), (2048, 1024));
        assert_eq!(p.free_bytes(), 1024);
        assert_eq!(p.alloc(2048, ALIGN), None);
        assert_eq!(p.alloc(1024, ALIGN), Some(2048));
    }

    #[test]
    fn alignment_leaves_a_hole() {
        let mut p = Pool::new(1 << 22);
        p.add(0, 1);
        assert_eq!(p.alloc(32, ALIGN), Some(0));
        assert_eq!(p.alloc(1 << 21, 1 << 21), Some(1 << 21));
        assert_eq!(p.alloc(64, ALIGN), Some(32));
        assert_eq!(p.free_bytes(), (1 << 22) - (1 << 21) - 96);
    }

    #[test]
    fn padded_slab_sized_allocations_share_slabs() {
        let slab = 1024;
        let size = slab + 32;
        let mut p = Pool::new(slab);
        p.add(0, 2);
        assert_eq!(p.alloc(size, ALIGN), Some(0));
        assert_eq!(p.alloc(size, ALIGN), None);
        // The tail of slab 1 plus slab 2 holds the next one.
        assert_eq!(p.growth(size, ALIGN, 16), vec![(2, 1)]);
        p.add(2, 1);
        assert_eq!(p.alloc(size, ALIGN), Some(size));
        // 16 slabs hold 15 such allocations (not 8).
        let mut n = 2;
        while let Some(&(f, k)) = p.growth(size, ALIGN, 16).first() {
            p.add(f, k);
            assert!(p.alloc(size, ALIGN).is_some());
            n += 1;
        }
        assert_eq!(n, 15);
        // A head at the start of a run grows backwards.
        let mut q = Pool::new(slab);
        q.add(4, 1);
        assert_eq!(q.alloc(512, ALIGN), Some(4 * slab));
        assert_eq!(q.alloc(512, ALIGN), Some(4 * slab + 512));
        q.free(4 * slab, 512);
        assert_eq!(q.growth(3 * slab, ALIGN, 8), vec![(1, 3)]);
        q.add(1, 3);
        assert_eq!(q.alloc(3 * slab, ALIGN), Some(slab));
    }

    #[test]
    fn wholly_free_slabs_go_back() {
        let slab = 1024;
        let mut p = Pool::new(slab);
        p.add(3, 3);
        let a = p.alloc(slab + 32, ALIGN).unwrap();
        let b = p.alloc(64, ALIGN).unwrap();
        assert_eq!((a, b), (3 * slab, 4 * slab + 32));
        // Slab 5 is wholly free, but it is not released before its block is freed into.
        let (s, l) = p.free(a, slab + 32);
        assert_eq!((s, l), (3 * slab, slab + 32));
        assert_eq!(p.release_free(s, l), vec![(3, 1)]);
        assert!(!p.owns(3) && p.owns(4) && p.owns(5));
        let (s, l) = p.free(b, 64);
        assert_eq!((s, l), (4 * slab, 2 * slab));
        assert_eq!(p.release_free(s, l), vec![(4, 2)]);
        assert!(p.is_empty());
        assert_eq!(p.free_bytes(), 0);
    }
}
