//! Data movement: the three kinds of tiled moves every conversion is made of, and the runner
//! that splits a conversion's units across threads.
//!
//! A layout describes a conversion as a walk over *units* (disjoint pieces of both the plain and
//! the private buffer) that emits [`Move`]s in element offsets. The same walk serves the forward
//! (plain → private) and the inverse (private → plain) direction; only the copy direction flips,
//! and padding moves are applied forward only.

use super::{Geometry, Plan};
use std::ops::Range;

/// One tiled move, in elements.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Move {
    /// `rows` runs of `len` contiguous elements: plain `plain + r·plain_rs` ↔ private
    /// `private + r·private_rs`; forward also writes `fill` zeros after each private run.
    Rows {
        plain: usize,
        plain_rs: usize,
        private: usize,
        private_rs: usize,
        rows: usize,
        len: usize,
        fill: usize,
    },
    /// A transposed block: `private[j·private_rs + i] ↔ plain[i·plain_rs + j]` for `i < rows`,
    /// `j < cols`; forward also writes zeros at `rows ≤ i < rows + fill` (padding channels).
    Transpose {
        plain: usize,
        plain_rs: usize,
        private: usize,
        private_rs: usize,
        rows: usize,
        cols: usize,
        fill: usize,
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
    /// Number of units of a direction (`forward`: plain → private); units are independent
    /// (disjoint destinations).
    fn units(&self, forward: bool) -> usize;
    /// Emit the moves of `units`, in an order suited to the direction (`forward`: plain →
    /// private). Both directions must emit the same element pairs.
    fn walk(&self, units: Range<usize>, forward: bool, f: &mut impl FnMut(Move));
}

/// Threads available to one conversion.
fn max_threads() -> usize {
    *crate::globals::CONVERSION_THREADS.get_or_init(|| {
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
        Geometry::FzC04(g) => run_walk(plan, g, src, dst),
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
        let mut pieces = dst.chunks_mut(chunk).enumerate();
        let first = pieces.next();
        for (i, piece) in pieces {
            // A thread that cannot be started leaves its piece to this one.
            let piece_ptr = (piece.as_mut_ptr() as usize, piece.len());
            if std::thread::Builder::new()
                .spawn_scoped(s, move || f(i * chunk, piece))
                .is_err()
            {
                // SAFETY: the closure (and its borrow of the piece) was dropped unrun.
                let piece =
                    unsafe { std::slice::from_raw_parts_mut(piece_ptr.0 as *mut u8, piece_ptr.1) };
                f(i * chunk, piece);
            }
        }
        if let Some((_, piece)) = first {
            f(0, piece);
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
    /// Write the destination with non-temporal stores (large conversions, moves whose
    /// destination is one contiguous range: full cache lines, nothing read back soon).
    nt: bool,
}

/// Destination size from which conversions write with non-temporal stores.
const NT_MIN_BYTES: usize = 16 << 20;

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
        nt: cfg!(target_arch = "x86_64")
            && plan.dst_bytes >= NT_MIN_BYTES
            && (dst.as_ptr() as usize).is_multiple_of(16),
    };
    let units = w.units(plan.forward);
    let n = thread_count(plan.dst_bytes, units);
    let run = |range: Range<usize>| -> bool {
        let mut ok = true;
        w.walk(range, bufs.forward, &mut |m| {
            // SAFETY: `bufs` describes `src`/`dst`, alive for this call; `apply` checks every
            // move against the buffer lengths; units write disjoint parts of `dst`.
            ok &= unsafe { apply(&bufs, m) };
        });
        if bufs.nt {
            store_fence();
        }
        ok
    };
    if n <= 1 {
        return run(0..units);
    }
    let per = units.div_ceil(n);
    let range = |t: usize| (t * per).min(units)..((t + 1) * per).min(units);
    std::thread::scope(|s| {
        let run = &run;
        let mut ok = true;
        let mut handles = Vec::new();
        for t in 1..n {
            // A thread that cannot be started leaves its units to this one.
            match std::thread::Builder::new().spawn_scoped(s, move || run(range(t))) {
                Ok(h) => handles.push(h),
                Err(_) => ok &= run(range(t)),
            }
        }
        ok &= run(range(0));
        for h in handles {
            ok &= h.join().unwrap_or(false);
        }
        ok
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
            fill,
        } => {
            let fill = if b.forward { fill } else { 0 };
            if !within(plain, plain_rs, rows, len, plain_len)
                || !within(private, private_rs, rows, len + fill, private_len)
            {
                return false;
            }
            if rows == 0 || len + fill == 0 {
                return true;
            }
            let (s, srs, d, drs) = if b.forward {
                (plain, plain_rs, private, private_rs)
            } else {
                (private, private_rs, plain, plain_rs)
            };
            let (sp, dp) = (
                (b.src as *const u8).add(s * e),
                (b.dst as *mut u8).add(d * e),
            );
            let nt = b.nt && drs == len + fill && nt_ok(dp, drs * e, (len + fill) * e);
            if fill > 0 {
                copy_rows_fill(sp, srs * e, dp, drs * e, rows, len * e, fill * e, nt);
            } else if nt {
                copy_rows_nt(sp, srs * e, dp, drs * e, rows, len * e);
            } else {
                copy_rows(sp, srs * e, dp, drs * e, rows, len * e);
            }
            true
        }
        Move::Transpose {
            plain,
            plain_rs,
            private,
            private_rs,
            rows,
            cols,
            fill,
        } => {
            let fill = if b.forward { fill } else { 0 };
            if !within(plain, plain_rs, rows, cols, plain_len)
                || !within(private, private_rs, cols, rows + fill, private_len)
            {
                return false;
            }
            if rows + fill == 0 || cols == 0 {
                return true;
            }
            // `r` source rows, then `z` rows of zeros; `c` columns.
            let (s, srs, d, drs, r, c, z) = if b.forward {
                (plain, plain_rs, private, private_rs, rows, cols, fill)
            } else {
                (private, private_rs, plain, plain_rs, cols, rows, 0)
            };
            let sp = (b.src as *const u8).add(s * e);
            let dp = (b.dst as *mut u8).add(d * e);
            // Non-temporal stores: forward when the destination is one contiguous range;
            // inverse when every destination row starts on a cache line (the transpose then
            // fills whole lines, one line per row at a time).
            let nt = b.nt
                && if b.forward {
                    drs == r + z && nt_ok(dp, drs * e, 16)
                } else {
                    (dp as usize).is_multiple_of(64) && (drs * e).is_multiple_of(64)
                };
            let t = r + z;
            match (e, nt) {
                (1, false) => transpose::<u8, false>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                (1, true) => transpose::<u8, true>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                (2, false) => transpose::<u16, false>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                (2, true) => transpose::<u16, true>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                (4, false) => transpose::<u32, false>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                (4, true) => transpose::<u32, true>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                (8, _) => transpose::<u64, false>(sp.cast(), srs, dp.cast(), drs, r, t, c),
                _ => {
                    transpose_bytes(sp, srs, dp, drs, r, c, e);
                    for j in 0..c {
                        std::ptr::write_bytes(dp.add((j * drs + r) * e), 0, z * e);
                    }
                }
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

/// Copy `len ≤ 64` bytes with at most two (overlapping) fixed-size moves per size class.
#[inline(always)]
unsafe fn copy_small(s: *const u8, d: *mut u8, len: usize) {
    #[inline(always)]
    unsafe fn two<const L: usize>(s: *const u8, d: *mut u8, len: usize) {
        std::ptr::copy_nonoverlapping(s, d, L);
        std::ptr::copy_nonoverlapping(s.add(len - L), d.add(len - L), L);
    }
    match len {
        0 => {}
        1..=3 => {
            for k in 0..len {
                *d.add(k) = *s.add(k);
            }
        }
        4..=7 => two::<4>(s, d, len),
        8..=15 => two::<8>(s, d, len),
        16..=31 => two::<16>(s, d, len),
        _ => two::<32>(s, d, len),
    }
}

/// `rows` runs of `len` bytes each followed by `fill` zero bytes (padding channels), written
/// as whole rows of `len + fill` bytes; non-temporal when `nt` (`nt_ok` holds for the rows).
#[allow(clippy::too_many_arguments)]
unsafe fn copy_rows_fill(
    s: *const u8,
    srs: usize,
    d: *mut u8,
    drs: usize,
    rows: usize,
    len: usize,
    fill: usize,
    nt: bool,
) {
    let row = len + fill;
    if row > 64 {
        for r in 0..rows {
            std::ptr::copy_nonoverlapping(s.add(r * srs), d.add(r * drs), len);
            std::ptr::write_bytes(d.add(r * drs + len), 0, fill);
        }
        return;
    }
    // Build each row in a zeroed staging line, then store it whole.
    let mut tmp = [0u8; 64];
    let t = tmp.as_mut_ptr();
    for r in 0..rows {
        copy_small(s.add(r * srs), t, len);
        let dr = d.add(r * drs);
        if nt {
            copy_rows_nt(t, 0, dr, 0, 1, row);
        } else {
            copy_rows(t, 0, dr, 0, 1, row);
        }
    }
}

/// Whether rows of `len` bytes at `d + r·drs` can be written with 16-byte non-temporal stores.
fn nt_ok(d: *mut u8, drs: usize, len: usize) -> bool {
    (d as usize).is_multiple_of(16) && drs.is_multiple_of(16) && len.is_multiple_of(16)
}

/// Order the non-temporal stores of this thread before anything that follows.
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// [`copy_rows`] with 16-byte non-temporal stores (`nt_ok` holds for `d`, `drs`, `len`).
unsafe fn copy_rows_nt(s: *const u8, srs: usize, d: *mut u8, drs: usize, rows: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        for r in 0..rows {
            let (sr, dr) = (s.add(r * srs), d.add(r * drs));
            let mut k = 0;
            while k < len {
                let v = _mm_loadu_si128(sr.add(k) as *const __m128i);
                _mm_stream_si128(dr.add(k) as *mut __m128i, v);
                k += 16;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    copy_rows(s, srs, d, drs, rows, len);
}

/// Edge of the square super-tiles the transposes walk (elements): a 64×64 tile of fp32 is
/// 16 KiB on each side, so both stay in L1 while its small blocks are moved.
const SUPER: usize = 64;

/// An element type with a `B`×`B` block transpose.
trait Block: Copy {
    /// Block edge.
    const B: usize;
    /// `dst[j·drs + i] = src[i·srs + j]` for `i < valid`, zero for `valid ≤ i < B` (those
    /// source rows are not read), `j < B`.
    unsafe fn block(src: *const Self, srs: usize, valid: usize, dst: *mut Self, drs: usize);
    /// [`Block::block`] with non-temporal stores where implemented (every `dst` row 16-byte
    /// aligned).
    #[inline(always)]
    unsafe fn block_nt(src: *const Self, srs: usize, valid: usize, dst: *mut Self, drs: usize) {
        Self::block(src, srs, valid, dst, drs)
    }
}

/// `dst[j·drs + i] = src[i·srs + j]` for `i < rows`, `j < cols`, element by element.
unsafe fn transpose_scalar<T: Copy>(
    src: *const T,
    srs: usize,
    dst: *mut T,
    drs: usize,
    rows: usize,
    cols: usize,
) {
    for j in 0..cols {
        let d = dst.add(j * drs);
        for i in 0..rows {
            *d.add(i) = *src.add(i * srs + j);
        }
    }
}

/// [`transpose_scalar`] of the first `valid` of `rows` rows; the others give zeros.
unsafe fn transpose_scalar_fill<T: Block>(
    src: *const T,
    srs: usize,
    dst: *mut T,
    drs: usize,
    valid: usize,
    rows: usize,
    cols: usize,
) {
    let valid = valid.min(rows);
    if valid > 0 {
        transpose_scalar(src, srs, dst, drs, valid, cols);
    }
    if valid < rows {
        for j in 0..cols {
            std::ptr::write_bytes(dst.add(j * drs + valid), 0, rows - valid);
        }
    }
}

/// `dst[j·drs + i] = src[i·srs + j]` for `i < valid`, zero for `valid ≤ i < rows`, `j < cols`:
/// super-tiles of `SUPER`², each moved as `B`×`B` register blocks (SIMD where the target has
/// it), scalar at the edges. Source rows at or past `valid` are never read.
#[allow(clippy::too_many_arguments)]
unsafe fn transpose<T: Block, const NT: bool>(
    src: *const T,
    srs: usize,
    dst: *mut T,
    drs: usize,
    valid: usize,
    rows: usize,
    cols: usize,
) {
    let b = T::B;
    // Width of a super-tile along the destination rows: with non-temporal stores one cache
    // line, so that each line is complete before the next is started.
    let wide = if NT {
        (64 / std::mem::size_of::<T>()).max(b)
    } else {
        SUPER
    };
    let mut i00 = 0;
    while i00 < rows {
        let i11 = (i00 + wide).min(rows);
        let mut j00 = 0;
        while j00 < cols {
            let j11 = (j00 + SUPER).min(cols);
            // Whole blocks of this super-tile.
            let ib = i00 + (i11 - i00) / b * b;
            let jb = j00 + (j11 - j00) / b * b;
            let mut j0 = j00;
            while j0 < jb {
                let mut i0 = i00;
                while i0 < ib {
                    let v = valid.saturating_sub(i0).min(b);
                    let (s, d) = (src.wrapping_add(i0 * srs + j0), dst.add(j0 * drs + i0));
                    if NT {
                        T::block_nt(s, srs, v, d, drs);
                    } else {
                        T::block(s, srs, v, d, drs);
                    }
                    i0 += b;
                }
                j0 += b;
            }
            // Edges: rows ib..i11 for all columns, then columns jb..j11 for the block rows.
            if ib < i11 {
                transpose_scalar_fill(
                    src.wrapping_add(ib * srs + j00),
                    srs,
                    dst.add(j00 * drs + ib),
                    drs,
                    valid.saturating_sub(ib),
                    i11 - ib,
                    j11 - j00,
                );
            }
            if jb < j11 {
                transpose_scalar_fill(
                    src.wrapping_add(i00 * srs + jb),
                    srs,
                    dst.add(jb * drs + i00),
                    drs,
                    valid.saturating_sub(i00),
                    ib - i00,
                    j11 - jb,
                );
            }
            j00 = j11;
        }
        i00 = i11;
    }
}

macro_rules! scalar_block {
    ($t:ty, $b:expr) => {
        impl Block for $t {
            const B: usize = $b;
            #[inline(always)]
            unsafe fn block(
                src: *const Self,
                srs: usize,
                valid: usize,
                dst: *mut Self,
                drs: usize,
            ) {
                scalar_block::<$t, $b>(src, srs, valid, dst, drs)
            }
        }
    };
}

/// The portable `B`×`B` block (targets without SIMD blocks, and 8-byte elements).
#[inline(always)]
unsafe fn scalar_block<T: Copy + Default, const B: usize>(
    src: *const T,
    srs: usize,
    valid: usize,
    dst: *mut T,
    drs: usize,
) {
    for j in 0..B {
        for i in 0..B {
            *dst.add(j * drs + i) = if i < valid {
                *src.add(i * srs + j)
            } else {
                T::default()
            };
        }
    }
}

scalar_block!(u64, 4);
#[cfg(not(target_arch = "x86_64"))]
scalar_block!(u8, 8);
#[cfg(not(target_arch = "x86_64"))]
scalar_block!(u16, 8);
#[cfg(not(target_arch = "x86_64"))]
scalar_block!(u32, 4);

#[cfg(target_arch = "x86_64")]
mod sse2 {
    //! Register-block transposes with SSE2 (part of the x86-64 baseline, no detection needed).
    use super::Block;
    use std::arch::x86_64::*;

    impl Block for u16 {
        const B: usize = 8;
        #[inline(always)]
        unsafe fn block(src: *const u16, srs: usize, valid: usize, dst: *mut u16, drs: usize) {
            block16::<false>(src, srs, valid, dst, drs)
        }
        #[inline(always)]
        unsafe fn block_nt(src: *const u16, srs: usize, valid: usize, dst: *mut u16, drs: usize) {
            block16::<true>(src, srs, valid, dst, drs)
        }
    }

    /// One 16-byte source row, or zeros for a padding row (not read).
    #[inline(always)]
    unsafe fn load_row(p: *const __m128i, valid: bool) -> __m128i {
        if valid {
            _mm_loadu_si128(p)
        } else {
            _mm_setzero_si128()
        }
    }

    #[inline(always)]
    unsafe fn store<const NT: bool>(p: *mut __m128i, v: __m128i) {
        if NT {
            _mm_stream_si128(p, v)
        } else {
            _mm_storeu_si128(p, v)
        }
    }

    #[inline(always)]
    unsafe fn block16<const NT: bool>(
        src: *const u16,
        srs: usize,
        valid: usize,
        dst: *mut u16,
        drs: usize,
    ) {
        {
            let ld = |i: usize| load_row(src.wrapping_add(i * srs).cast(), i < valid);
            let (a0, a1, a2, a3) = (ld(0), ld(1), ld(2), ld(3));
            let (a4, a5, a6, a7) = (ld(4), ld(5), ld(6), ld(7));
            let t0 = _mm_unpacklo_epi16(a0, a1);
            let t1 = _mm_unpackhi_epi16(a0, a1);
            let t2 = _mm_unpacklo_epi16(a2, a3);
            let t3 = _mm_unpackhi_epi16(a2, a3);
            let t4 = _mm_unpacklo_epi16(a4, a5);
            let t5 = _mm_unpackhi_epi16(a4, a5);
            let t6 = _mm_unpacklo_epi16(a6, a7);
            let t7 = _mm_unpackhi_epi16(a6, a7);
            let u0 = _mm_unpacklo_epi32(t0, t2);
            let u1 = _mm_unpackhi_epi32(t0, t2);
            let u2 = _mm_unpacklo_epi32(t1, t3);
            let u3 = _mm_unpackhi_epi32(t1, t3);
            let u4 = _mm_unpacklo_epi32(t4, t6);
            let u5 = _mm_unpackhi_epi32(t4, t6);
            let u6 = _mm_unpacklo_epi32(t5, t7);
            let u7 = _mm_unpackhi_epi32(t5, t7);
            let st = |j: usize, v: __m128i| store::<NT>(dst.add(j * drs) as *mut __m128i, v);
            st(0, _mm_unpacklo_epi64(u0, u4));
            st(1, _mm_unpackhi_epi64(u0, u4));
            st(2, _mm_unpacklo_epi64(u1, u5));
            st(3, _mm_unpackhi_epi64(u1, u5));
            st(4, _mm_unpacklo_epi64(u2, u6));
            st(5, _mm_unpackhi_epi64(u2, u6));
            st(6, _mm_unpacklo_epi64(u3, u7));
            st(7, _mm_unpackhi_epi64(u3, u7));
        }
    }

    impl Block for u8 {
        const B: usize = 16;
        #[inline(always)]
        unsafe fn block(src: *const u8, srs: usize, valid: usize, dst: *mut u8, drs: usize) {
            block8::<false>(src, srs, valid, dst, drs)
        }
        #[inline(always)]
        unsafe fn block_nt(src: *const u8, srs: usize, valid: usize, dst: *mut u8, drs: usize) {
            block8::<true>(src, srs, valid, dst, drs)
        }
    }

    /// 16×16 bytes: interleave bytes, then 2-, 4- and 8-byte groups of row pairs.
    #[inline(always)]
    unsafe fn block8<const NT: bool>(
        src: *const u8,
        srs: usize,
        valid: usize,
        dst: *mut u8,
        drs: usize,
    ) {
        let a: [__m128i; 16] =
            std::array::from_fn(|i| load_row(src.wrapping_add(i * srs).cast(), i < valid));
        // b[2k], b[2k+1]: rows 2k, 2k+1 interleaved, columns 0..8 and 8..16.
        let mut b = [_mm_setzero_si128(); 16];
        for k in 0..8 {
            b[2 * k] = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]);
            b[2 * k + 1] = _mm_unpackhi_epi8(a[2 * k], a[2 * k + 1]);
        }
        // c[4m+q]: rows 4m..4m+4, columns 4q..4q+4 (one 4-byte group per column).
        let mut c = [_mm_setzero_si128(); 16];
        for m in 0..4 {
            c[4 * m] = _mm_unpacklo_epi16(b[4 * m], b[4 * m + 2]);
            c[4 * m + 1] = _mm_unpackhi_epi16(b[4 * m], b[4 * m + 2]);
            c[4 * m + 2] = _mm_unpacklo_epi16(b[4 * m + 1], b[4 * m + 3]);
            c[4 * m + 3] = _mm_unpackhi_epi16(b[4 * m + 1], b[4 * m + 3]);
        }
        // d[8p+r]: rows 8p..8p+8, columns 2r, 2r+1.
        let mut d = [_mm_setzero_si128(); 16];
        for p in 0..2 {
            for q in 0..4 {
                d[8 * p + 2 * q] = _mm_unpacklo_epi32(c[8 * p + q], c[8 * p + 4 + q]);
                d[8 * p + 2 * q + 1] = _mm_unpackhi_epi32(c[8 * p + q], c[8 * p + 4 + q]);
            }
        }
        for r in 0..8 {
            store::<NT>(
                dst.add(2 * r * drs) as *mut __m128i,
                _mm_unpacklo_epi64(d[r], d[8 + r]),
            );
            store::<NT>(
                dst.add((2 * r + 1) * drs) as *mut __m128i,
                _mm_unpackhi_epi64(d[r], d[8 + r]),
            );
        }
    }

    impl Block for u32 {
        const B: usize = 4;
        #[inline(always)]
        unsafe fn block(src: *const u32, srs: usize, valid: usize, dst: *mut u32, drs: usize) {
            block32::<false>(src, srs, valid, dst, drs)
        }
        #[inline(always)]
        unsafe fn block_nt(src: *const u32, srs: usize, valid: usize, dst: *mut u32, drs: usize) {
            block32::<true>(src, srs, valid, dst, drs)
        }
    }

    #[inline(always)]
    unsafe fn block32<const NT: bool>(
        src: *const u32,
        srs: usize,
        valid: usize,
        dst: *mut u32,
        drs: usize,
    ) {
        {
            let ld = |i: usize| load_row(src.wrapping_add(i * srs).cast(), i < valid);
            let (a0, a1, a2, a3) = (ld(0), ld(1), ld(2), ld(3));
            let t0 = _mm_unpacklo_epi32(a0, a1);
            let t1 = _mm_unpacklo_epi32(a2, a3);
            let t2 = _mm_unpackhi_epi32(a0, a1);
            let t3 = _mm_unpackhi_epi32(a2, a3);
            let st = |j: usize, v: __m128i| store::<NT>(dst.add(j * drs) as *mut __m128i, v);
            st(0, _mm_unpacklo_epi64(t0, t1));
            st(1, _mm_unpackhi_epi64(t0, t1));
            st(2, _mm_unpacklo_epi64(t2, t3));
            st(3, _mm_unpackhi_epi64(t2, t3));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block kernel (plain and non-temporal) against the element-by-element transpose, at
    /// sizes and strides that leave edges on both sides of the super-tiles.
    fn check<T: Block + From<u16> + PartialEq + std::fmt::Debug>() {
        let sizes = [
            (1, 1),
            (3, 70),
            (8, 8),
            (16, 4096),
            (19, 65),
            (64, 64),
            (130, 17),
        ];
        for (rows, cols) in sizes {
            // All rows valid, some zero-filled, all zero-filled.
            for valid in [rows, rows / 2 + 1, rows / 3, 0] {
                for (pad_s, pad_d) in [(0usize, 0usize), (5, 3)] {
                    let label = format!("{rows}x{cols}, {valid} valid, pads {pad_s} {pad_d}");
                    let (srs, drs) = (cols + pad_s, rows + pad_d);
                    // 16-aligned destination rows for the non-temporal variant.
                    let drs = drs.next_multiple_of(16);
                    let src: Vec<T> = (0..valid * srs)
                        .map(|i| T::from((i % 65000) as u16 + 1))
                        .collect();
                    let n = cols * drs;
                    let mut want = vec![T::from(0xEEEE); n];
                    let mut got = vec![T::from(0xEEEE); n + 16];
                    let off = got.as_ptr().align_offset(16);
                    let (sp, total) = (src.as_ptr(), rows);
                    // SAFETY: `src` holds `total` rows of `srs` elements, `want` and `got`
                    // hold `cols` rows of `drs` elements (`got` with 16 spare for `off`).
                    unsafe {
                        transpose_scalar_fill(sp, srs, want.as_mut_ptr(), drs, valid, total, cols);
                        let d = got.as_mut_ptr();
                        transpose::<T, false>(sp, srs, d, drs, valid, total, cols);
                    }
                    assert_eq!(&got[..n], &want[..], "{label}");
                    got.iter_mut().for_each(|x| *x = T::from(0xEEEE));
                    // SAFETY: as above; `off` < 16 keeps the aligned destination inside `got`.
                    unsafe {
                        let d = got.as_mut_ptr().add(off);
                        transpose::<T, true>(sp, srs, d, drs, valid, total, cols);
                    }
                    store_fence();
                    assert_eq!(&got[off..off + n], &want[..], "nt {label}");
                }
            }
        }
    }

    /// The portable block on x86-64 too: a u16 that only has the scalar block.
    #[derive(Clone, Copy, Default, PartialEq, Debug)]
    struct Portable(u16);
    impl From<u16> for Portable {
        fn from(v: u16) -> Self {
            Portable(v)
        }
    }
    impl Block for Portable {
        const B: usize = 8;
        unsafe fn block(src: *const Self, srs: usize, valid: usize, dst: *mut Self, drs: usize) {
            scalar_block::<Self, 8>(src, srs, valid, dst, drs)
        }
    }

    #[test]
    fn formats_block_transposes() {
        check::<Portable>();
        check::<u16>();
        check::<u32>();
        check::<u64>();
    }

    #[test]
    fn formats_block_transposes_u8() {
        for (rows, cols) in [(1usize, 1usize), (3, 70), (32, 4096), (33, 65), (130, 17)] {
            for valid in [rows, rows / 2 + 1, 0] {
                let (srs, drs) = (cols + 3, (rows + 1).next_multiple_of(16));
                let src: Vec<u8> = (0..valid * srs).map(|i| (i % 251) as u8 + 1).collect();
                let n = cols * drs;
                let mut want = vec![0xEEu8; n];
                let mut got = vec![0xEEu8; n + 16];
                let off = got.as_ptr().align_offset(16);
                let sp = src.as_ptr();
                // SAFETY: `src` holds `rows` rows of `srs` bytes, `want` and `got` hold `cols`
                // rows of `drs` bytes (`got` with 16 spare for `off`).
                unsafe {
                    transpose_scalar_fill(sp, srs, want.as_mut_ptr(), drs, valid, rows, cols);
                    transpose::<u8, false>(sp, srs, got.as_mut_ptr(), drs, valid, rows, cols);
                }
                assert_eq!(&got[..n], &want[..], "{rows}x{cols} {valid} valid");
                got.fill(0xEE);
                // SAFETY: as above; `off` < 16 keeps the aligned destination inside `got`.
                unsafe {
                    let d = got.as_mut_ptr().add(off);
                    transpose::<u8, true>(sp, srs, d, drs, valid, rows, cols);
                }
                store_fence();
                assert_eq!(
                    &got[off..off + n],
                    &want[..],
                    "nt {rows}x{cols} {valid} valid"
                );
            }
        }
    }
}
