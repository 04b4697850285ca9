//! Batch copies (`aclrtMemcpyBatch`, `aclrtMemcpyBatchAsync`): every copy is validated
//! before any runs. CANN supports only host-to-device and device-to-host copies in a batch,
//! and every copy's attribute must describe its two ends.

use super::direction::{pageable_host_end, resolve, Dir, ACL_MEMCPY_DEFAULT};
use super::{enqueue, linear};
use crate::memory::Space;
use crate::stream::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// `aclrtMemLocationType` `ACL_MEM_LOCATION_TYPE_HOST`.
pub const ACL_MEM_LOCATION_TYPE_HOST: i32 = 0;
/// `aclrtMemLocationType` `ACL_MEM_LOCATION_TYPE_DEVICE`.
pub const ACL_MEM_LOCATION_TYPE_DEVICE: i32 = 1;
/// `aclrtMemLocationType` value 4 (`ACL_MEM_LOCATION_TYPE_HOST_NUMA`), also accepted for a
/// host end.
pub const ACL_MEM_LOCATION_TYPE_HOST_NUMA: i32 = 4;

/// One `aclrtMemLocation`: a location type and, for device memory, the logical device id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub id: u32,
    pub ty: i32,
}

/// One `aclrtMemcpyBatchAttr`: where the two ends of the copies it covers live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub dst: Location,
    pub src: Location,
}

/// One copy of a batch as the program passed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub dst: u64,
    pub dest_max: usize,
    pub src: u64,
    pub size: usize,
}

/// Why a batch failed; `index` is the copy at fault (CANN's `failIndex`), `None` when the
/// batch as a whole is wrong.
#[derive(Debug)]
pub struct Failed {
    pub index: Option<usize>,
    pub error: Error,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed { index: None, error }
    }
}

/// An error about copy `i`.
fn failed(i: usize, e: Error) -> Failed {
    Failed {
        index: Some(i),
        error: Error::new(e.code, format!("copy {i}: {}", e.msg)),
    }
}

/// One validated copy.
#[derive(Clone, Copy, Debug)]
struct Item {
    dst: u64,
    src: u64,
    n: u64,
    dir: Dir,
}

/// A validated batch.
#[derive(Debug)]
pub struct Batch(Vec<Item>);

/// Validate a batch: `attrs[k]` covers the copies from `attrs_indexes[k]` up to the next
/// index. `entries` and `attrs` are not empty and `attrs.len() == attrs_indexes.len() <=
/// entries.len()` (the C side checks the counts).
pub fn check<S: Space + ?Sized>(
    space: &S,
    entries: &[Entry],
    attrs: &[Attr],
    attrs_indexes: &[usize],
) -> std::result::Result<Batch, Failed> {
    let (num, idx) = (entries.len(), attrs_indexes);
    if idx[0] != 0 {
        return Err(Error::invalid(format!("attrsIndexes[0] is {}, expected 0", idx[0])).into());
    }
    for k in 1..idx.len() {
        if idx[k] <= idx[k - 1] || idx[k] >= num {
            return Err(Error::invalid(format!(
                "attrsIndexes[{k}] is {}: entries must increase and stay below numBatches {num}",
                idx[k]
            ))
            .into());
        }
    }
    let mut items = Vec::with_capacity(num);
    let mut k = 0;
    for (i, e) in entries.iter().enumerate() {
        while k + 1 < idx.len() && idx[k + 1] <= i {
            k += 1;
        }
        let item = check_one(space, i, k, e, &attrs[k]).map_err(|e| failed(i, e))?;
        items.push(item);
    }
    Ok(Batch(items))
}

/// Validate copy `i`, described by `attrs[k]`.
fn check_one<S: Space + ?Sized>(
    space: &S,
    i: usize,
    k: usize,
    e: &Entry,
    a: &Attr,
) -> Result<Item> {
    let Entry {
        dst,
        dest_max: max,
        src,
        size: n,
    } = *e;
    if dst == 0 || src == 0 {
        return Err(Error::invalid(format!("dsts[{i}] or srcs[{i}] is NULL")));
    }
    if n > max {
        return Err(Error::invalid(format!(
            "sizes[{i}] {n} is larger than destMaxs[{i}] {max}"
        )));
    }
    let dir = resolve(Some(space), ACL_MEMCPY_DEFAULT, dst, src)?;
    if dir.dst_dev == dir.src_dev {
        return Err(Error::invalid(format!(
            "a {} copy: batch copies support only host-to-device and device-to-host",
            if dir.dst_dev {
                "device-to-device"
            } else {
                "host-to-host"
            }
        )));
    }
    for (arg, addr, dev, loc) in [
        ("dstLoc", dst, dir.dst_dev, a.dst),
        ("srcLoc", src, dir.src_dev, a.src),
    ] {
        let (id, ty) = (loc.id, loc.ty);
        if dev {
            let want = space.logical_of(space.node().phys(addr, 1, arg)?.device);
            if ty != ACL_MEM_LOCATION_TYPE_DEVICE || id as i32 != want {
                return Err(Error::invalid(format!(
                    "attrs[{k}].{arg} is (type {ty}, id {id}) but {addr:#x} is memory of \
                     device {want} (expected type ACL_MEM_LOCATION_TYPE_DEVICE, id {want})"
                )));
            }
        } else if ty != ACL_MEM_LOCATION_TYPE_HOST && ty != ACL_MEM_LOCATION_TYPE_HOST_NUMA {
            return Err(Error::invalid(format!(
                "attrs[{k}].{arg} has type {ty} but {addr:#x} is host memory (expected \
                 ACL_MEM_LOCATION_TYPE_HOST)"
            )));
        }
    }
    if n > 0 {
        linear::check(space, dst, src, n as u64, dir)?;
    }
    Ok(Item {
        dst,
        src,
        n: n as u64,
        dir,
    })
}

impl Batch {
    /// Run every copy in order (each is checked again as it runs).
    ///
    /// # Safety
    /// Pageable host ends must be valid for their sizes (see [`linear::copy`]).
    pub unsafe fn run<S: Space + ?Sized>(&self, space: &S) -> std::result::Result<(), Failed> {
        for (i, it) in self.0.iter().enumerate() {
            // SAFETY: the caller's contract is this function's.
            unsafe { linear::copy(space, it.dst, it.src, it.n, it.dir) }
                .map_err(|e| failed(i, e))?;
        }
        Ok(())
    }

    /// `aclrtMemcpyBatchAsync`: run as one task on `stream`, or completed before returning
    /// when a copy involves pageable host memory (as `aclrtMemcpyAsync` does).
    ///
    /// # Safety
    /// As [`Batch::run`], and host ends must stay valid until the stream has run the batch.
    pub unsafe fn submit<S>(
        self,
        space: &Arc<S>,
        stream: &Stream,
        api: &'static str,
    ) -> std::result::Result<(), Failed>
    where
        S: Space + Send + Sync + 'static,
    {
        if self
            .0
            .iter()
            .any(|it| pageable_host_end(&**space, it.dst, it.src, it.dir))
        {
            stream.synchronize(None)?;
            // SAFETY: the caller's contract is this function's.
            return unsafe { self.run(&**space) };
        }
        Ok(enqueue(space, stream, api, move |space| {
            // SAFETY: every copy is re-checked as it runs; host ends stay valid until the
            // stream ran the batch by this function's contract.
            unsafe { self.run(space) }.map_err(|f| f.error)
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::testing::TestSpace;

    const H2D: Attr = Attr {
        dst: Location {
            id: 0,
            ty: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        src: Location {
            id: 0,
            ty: ACL_MEM_LOCATION_TYPE_HOST,
        },
    };

    fn entry(dst: u64, src: u64, size: usize) -> Entry {
        Entry {
            dst,
            dest_max: size,
            src,
            size,
        }
    }

    #[test]
    fn validated_as_a_whole_with_the_copy_at_fault() {
        let sp = TestSpace::new("copy-batch", 1);
        let d = sp.alloc(0, 64);
        let h = [9u8; 64];
        let hp = h.as_ptr() as u64;
        let ok = entry(d, hp, 32);
        // attrsIndexes must start at 0 and increase below numBatches.
        let f = check(&*sp, &[ok, ok], &[H2D, H2D], &[1, 1]).unwrap_err();
        assert_eq!(f.index, None);
        assert!(
            f.error.msg.contains("attrsIndexes[0] is 1"),
            "{}",
            f.error.msg
        );
        let f = check(&*sp, &[ok, ok], &[H2D, H2D], &[0, 2]).unwrap_err();
        assert!(
            f.error.msg.contains("attrsIndexes[1] is 2"),
            "{}",
            f.error.msg
        );
        // Copy 1 runs past the allocation: failIndex 1, and copy 0 did not run.
        let bad = entry(d + 48, hp, 32);
        let f = check(&*sp, &[ok, bad], &[H2D], &[0]).unwrap_err();
        assert_eq!(f.index, Some(1));
        assert!(f.error.msg.starts_with("copy 1: "), "{}", f.error.msg);
        assert_eq!(sp.read(d, 32), vec![0u8; 32]);
        // An attribute that names the wrong device.
        let mut wrong = H2D;
        wrong.dst.id = 3;
        let f = check(&*sp, &[ok], &[wrong], &[0]).unwrap_err();
        assert_eq!(f.index, Some(0));
        assert!(
            f.error.msg.contains("attrs[0].dstLoc is (type 1, id 3)"),
            "{}",
            f.error.msg
        );
        // Device to device is not a batch copy.
        let f = check(&*sp, &[entry(d, d + 32, 8)], &[H2D], &[0]).unwrap_err();
        assert!(f.error.msg.contains("device-to-device"), "{}", f.error.msg);
        // A good batch runs.
        let b = check(&*sp, &[ok, entry(d + 32, hp, 32)], &[H2D], &[0]).unwrap();
        // SAFETY: h holds 64 bytes.
        unsafe { b.run(&*sp) }.unwrap();
        assert_eq!(sp.read(d, 64), vec![9u8; 64]);
    }
}
