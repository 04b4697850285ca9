//! Data movement: the three kinds of tiled moves every conversion is made of, and the runner
//! that splits a conversion's units across threads.
//!
//! A layout describes a conversion as a walk over *units* (disjoint pieces of both the plain and
//! the private buffer) that emits [`Move`]s in element offsets. The same walk serves the forward
//! (plain → private) and the inverse (private → plain) direction; only the copy direction flips,
//! and padding moves are applied forward only.

use super::{Geometry, Plan};
use std::ops::Range;
use std::sync::OnceLock;

/// One tiled move, in elements.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Move {
    /// `rows` runs of `len` contiguous elements: plain `plain + r·plain_rs` ↔ private
    /// `private + r·private_rs`.
    Rows {
        plain: usize,
        plain_rs: usize,
        private: usize,
        private_rs: usize,
        rows: usize,
        len: usize,
    },
    /// A transposed block: `private[j·private_rs + i] ↔ plain[i·plain_rs + j]` for `i < rows`,
    /// `j < cols`.
    Transpose {
        plain: usize,
        plain_rs: usize,
        private: usize,
        private_rs: usize,
        rows: usize,
        cols: usize,
    },
    /// Zero padding of the private layout (forward only): `rows` runs of `len` elements at
    /// `private + r·rs`.
    Pad {
        private: usize,
        rs: usize,
        rows: usize,
        len: usize,
    },
}

/// A layout that can be walked unit by unit.
pub(crate) trait Walk {
    /// Number of units; units are independent (disjoint destinations in both directions).
    fn units(&self) -> usize;
    /// Emit the moves of `units`.
    fn walk(&self, units: Range<usize>, f: &mut impl FnMut(Move));
}

/// Threads available to one conversion.
fn max_threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
    })
}

/// Bytes of destination below which a conversion stays on the calling thread.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

fn thread_count(bytes: usize, units: usize) -> usize {
    if bytes < PARALLEL_MIN_BYTES {
        return 1;
    }
    max_threads()
        .min(units)
        .min(bytes / (PARALLEL_MIN_BYTES / 2))
        .max(1)
}

/// Run `plan` on checked buffers. Returns false if a move fell outside the buffers (a bug).
pub(crate) fn execute(plan: &Plan, src: &[u8], dst: &mut [u8]) -> bool {
    match &plan.geometry {
        Geometry::Copy => {
            parallel_bytes(dst, |off, chunk| {
                chunk.copy_from_slice(&src[off..off + chunk.len()])
            });
            true
        }
        Geometry::C1C0(g) => run_walk(plan, g, src, dst),
        Geometry::Fz(g) => run_walk(plan, g, src, dst),
        Geometry::Nz(g) => run_walk(plan, g, src, dst),
    }
}

/// Apply `f(offset, chunk)` to `dst` split in per-thread chunks.
fn parallel_bytes(dst: &mut [u8], f: impl Fn(usize, &mut [u8]) + Sync) {
    let n = thread_count(dst.len(), usize::MAX);
    if n <= 1 {
        f(0, dst);
        return;
    }
    let chunk = dst.len().div_ceil(n).next_multiple_of(64);
    std::thread::scope(|s| {
        let f = &f;
        for (i, piece) in dst.chunks_mut(chunk).enumerate() {
            s.spawn(move || f(i * chunk, piece));
        }
    });
}

/// Raw view of both buffers for the movers (shared by threads that write disjoint parts).
#[derive(Clone, Copy)]
struct Bufs {
    src: usize,
    src_len: usize,
    dst: usize,
    dst_len: usize,
    elem: usize,
    forward: bool,
}

fn run_walk<W: Walk + Sync>(plan: &Plan, w: &W, src: &[u8], dst: &mut [u8]) -> bool {
    if plan.forward && plan.prefill {
        parallel_bytes(dst, |_, chunk| chunk.fill(0));
    }
    let bufs = Bufs {
        src: src.as_ptr() as usize,
        src_len: src.len() / plan.elem,
        dst: dst.as_mut_ptr() as usize,
        dst_len: dst.len() / plan.elem,
        elem: plan.elem,
        forward: plan.forward,
    };
    let units = w.units();
    let n = thread_count(plan.dst_bytes, units);
    let run = |range: Range<usize>| -> bool {
        let mut ok = true;
        w.walk(range, &mut |m| {
            // SAFETY: `bufs` describes `src`/`dst`, alive for this call; `apply` checks every
            // move against the buffer lengths; units write disjoint parts of `dst`.
            ok &= unsafe { apply(&bufs, m) };
        });
        ok
    };
    if n <= 1 {
        return run(0..units);
    }
    let per = units.div_ceil(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|t| {
                let r = (t * per).min(units)..((t + 1) * per).min(units);
                let run = &run;
                s.spawn(move || run(r))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(false))
            .fold(true, |a, b| a & b)
    })
}

/// Last element index + 1 touched by `rows` runs of `len` at `off + r·rs` (0 if empty).
fn extent(off: usize, rs: usize, rows: usize, len: usize) -> Option<usize> {
    if rows == 0 || len == 0 {
        return Some(0);
    }
    (rows - 1)
        .checked_mul(rs)?
        .checked_add(off)?
        .checked_add(len)
}

fn within(off: usize, rs: usize, rows: usize, len: usize, limit: usize) -> bool {
    matches!(extent(off, rs, rows, len), Some(e) if e <= limit)
}

/// Apply one move. Returns false (and does nothing) if it would leave the buffers.
///
/// # Safety
/// `b` must describe live buffers (`src` readable, `dst` writable for their lengths) with no
/// other writer to the parts this move writes.
unsafe fn apply(b: &Bufs, m: Move) -> bool {
    let (plain_len, private_len) = if b.forward {
        (b.src_len, b.dst_len)
    } else {
        (b.dst_len, b.src_len)
    };
    let e = b.elem;
    match m {
        Move::Rows {
            plain,
            plain_rs,
            private,
            private_rs,
            rows,
            len,
        } => {
            if !within(plain, plain_rs, rows, len, plain_len)
                || !within(private, private_rs, rows, len, private_len)
            {
                return false;
            }
            if rows == 0 || len == 0 {
                return true;
            }
            let (s, srs, d, drs) = if b.forward {
                (plain, plain_rs, private, private_rs)
            } else {
                (private, private_rs, plain, plain_rs)
            };
            copy_rows(
                (b.src as *const u8).add(s * e),
                srs * e,
                (b.dst as *mut u8).add(d * e),
                drs * e,
                rows,
                len * e,
            );
            true
        }
        Move::Transpose {
            plain,
            plain_rs,
            private,
            private_rs,
            rows,
            cols,
        } => {
            if !within(plain, plain_rs, rows, cols, plain_len)
                || !within(private, private_rs, cols, rows, private_len)
            {
                return false;
            }
            if rows == 0 || cols == 0 {
                return true;
            }
            let (s, srs, d, drs, r, c) = if b.forward {
                (plain, plain_rs, private, private_rs, rows, cols)
            } else {
                (private, private_rs, plain, plain_rs, cols, rows)
            };
            let sp = (b.src as *const u8).add(s * e);
            let dp = (b.dst as *mut u8).add(d * e);
            match e {
                1 => transpose::<u8>(sp.cast(), srs, dp.cast(), drs, r, c),
                2 => transpose::<u16>(sp.cast(), srs, dp.cast(), drs, r, c),
                4 => transpose::<u32>(sp.cast(), srs, dp.cast(), drs, r, c),
                8 => transpose::<u64>(sp.cast(), srs, dp.cast(), drs, r, c),
                _ => transpose_bytes(sp, srs, dp, drs, r, c, e),
            }
            true
        }
        Move::Pad {
            private,
            rs,
            rows,
            len,
        } => {
            if !b.forward {
                return true;
            }
            if !within(private, rs, rows, len, private_len) {
                return false;
            }
            let d = (b.dst as *mut u8).add(private * e);
            for r in 0..rows {
                std::ptr::write_bytes(d.add(r * rs * e), 0, len * e);
            }
            true
        }
    }
}

/// `rows` runs of `len` bytes; fixed-size copies for the common run lengths (C0 · element size).
unsafe fn copy_rows(s: *const u8, srs: usize, d: *mut u8, drs: usize, rows: usize, len: usize) {
    #[inline(always)]
    unsafe fn fixed<const L: usize>(s: *const u8, srs: usize, d: *mut u8, drs: usize, rows: usize) {
        for r in 0..rows {
            std::ptr::copy_nonoverlapping(s.add(r * srs), d.add(r * drs), L);
        }
    }
    match len {
        8 => fixed::<8>(s, srs, d, drs, rows),
        16 => fixed::<16>(s, srs, d, drs, rows),
        32 => fixed::<32>(s, srs, d, drs, rows),
        64 => fixed::<64>(s, srs, d, drs, rows),
        128 => fixed::<128>(s, srs, d, drs, rows),
        _ => {
            for r in 0..rows {
                std::ptr::copy_nonoverlapping(s.add(r * srs), d.add(r * drs), len);
            }
        }
    }
}

/// Tile edge of the transposes (elements).
const TB: usize = 16;

/// `dst[j·drs + i] = src[i·srs + j]` for `i < rows`, `j < cols`, in TB×TB tiles.
unsafe fn transpose<T: Copy>(
    src: *const T,
    srs: usize,
    dst: *mut T,
    drs: usize,
    rows: usize,
    cols: usize,
) {
    let mut i0 = 0;
    while i0 < rows {
        let i1 = (i0 + TB).min(rows);
        let mut j0 = 0;
        while j0 < cols {
            let j1 = (j0 + TB).min(cols);
            for j in j0..j1 {
                let d = dst.add(j * drs);
                for i in i0..i1 {
                    *d.add(i) = *src.add(i * srs + j);
                }
            }
            j0 = j1;
        }
        i0 = i1;
    }
}

/// [`transpose`] for element sizes without a primitive type (16-byte complex).
unsafe fn transpose_bytes(
    src: *const u8,
    srs: usize,
    dst: *mut u8,
    drs: usize,
    rows: usize,
    cols: usize,
    e: usize,
) {
    for i in 0..rows {
        for j in 0..cols {
            std::ptr::copy_nonoverlapping(
                src.add((i * srs + j) * e),
                dst.add((j * drs + i) * e),
                e,
            );
        }
    }
}
