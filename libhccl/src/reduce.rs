//! Typed reduction kernels. Integers reduce exactly (wrapping on overflow), floats in rank
//! order; fp16 and bf16 accumulate in f32 in rank order and round once (round to nearest
//! even) when the result is stored. Work is split in chunks that stay in L1.

use crate::fingerprint::{Dtype, RedOp};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// Bytes of accumulator per chunk.
pub const CHUNK_BYTES: usize = 16 * 1024;

/// Scratch buffers (8-byte aligned) reused across chunks.
pub struct Scratch {
    /// Write results with non-temporal stores (large operations, see [`NT_FOOTPRINT`]).
    pub nt: bool,
    acc: Vec<u64>,
    tmp: Vec<u64>,
    tmp2: Vec<u64>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            nt: false,
            acc: vec![0; CHUNK_BYTES / 8],
            tmp: vec![0; CHUNK_BYTES / 8],
            tmp2: vec![0; CHUNK_BYTES / 8],
        }
    }
}

trait Elem: Copy + 'static {
    fn sum(a: Self, b: Self) -> Self;
    fn prod(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            #[inline(always)] fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)] fn prod(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
        }
    )*};
}
int_elem!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            #[inline(always)] fn sum(a: Self, b: Self) -> Self { a + b }
            #[inline(always)] fn prod(a: Self, b: Self) -> Self { a * b }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if b > a || a.is_nan() { b } else { a } }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if b < a || a.is_nan() { b } else { a } }
        }
    )*};
}
float_elem!(f32, f64);

/// `acc[i] = acc[i] op x[i]`, with AVX2 when the CPU has it (checked once).
#[inline]
fn accumulate<T: Elem>(acc: &mut [T], x: &[T], op: RedOp) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: the CPU supports AVX2.
            return unsafe { accumulate_avx2(acc, x, op) };
        }
    }
    accumulate_plain(acc, x, op)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2<T: Elem>(acc: &mut [T], x: &[T], op: RedOp) {
    accumulate_plain(acc, x, op)
}

/// `acc[i] = a[i] op b[i]`, with AVX2 when the CPU has it.
#[inline]
fn combine<T: Elem>(acc: &mut [T], a: &[T], b: &[T], op: RedOp) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: the CPU supports AVX2.
            return unsafe { combine_avx2(acc, a, b, op) };
        }
    }
    combine_plain(acc, a, b, op)
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    *crate::globals::HAS_AVX2.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn combine_avx2<T: Elem>(acc: &mut [T], a: &[T], b: &[T], op: RedOp) {
    combine_plain(acc, a, b, op)
}

#[inline(always)]
fn combine_plain<T: Elem>(acc: &mut [T], a: &[T], b: &[T], op: RedOp) {
    let n = acc.len();
    let (a, b) = (&a[..n], &b[..n]);
    let it = acc.iter_mut().zip(a.iter().zip(b));
    match op {
        RedOp::Sum => it.for_each(|(o, (&x, &y))| *o = T::sum(x, y)),
        RedOp::Prod => it.for_each(|(o, (&x, &y))| *o = T::prod(x, y)),
        RedOp::Max => it.for_each(|(o, (&x, &y))| *o = T::max(x, y)),
        RedOp::Min => it.for_each(|(o, (&x, &y))| *o = T::min(x, y)),
    }
}

#[inline(always)]
fn accumulate_plain<T: Elem>(acc: &mut [T], x: &[T], op: RedOp) {
    let x = &x[..acc.len()];
    match op {
        RedOp::Sum => acc.iter_mut().zip(x).for_each(|(a, &b)| *a = T::sum(*a, b)),
        RedOp::Prod => acc
            .iter_mut()
            .zip(x)
            .for_each(|(a, &b)| *a = T::prod(*a, b)),
        RedOp::Max => acc.iter_mut().zip(x).for_each(|(a, &b)| *a = T::max(*a, b)),
        RedOp::Min => acc.iter_mut().zip(x).for_each(|(a, &b)| *a = T::min(*a, b)),
    }
}

/// The first `k` elements of type `T` of a scratch buffer. `T` is one of the element types
/// the kernels use: a plain number (every bit pattern a value) aligned to at most 8.
fn as_mut<T>(v: &mut [u64], k: usize) -> &mut [T] {
    assert!(k * std::mem::size_of::<T>() <= v.len() * 8 && std::mem::align_of::<T>() <= 8);
    // SAFETY: the buffer holds at least `k` elements of `T` (checked), is aligned for it, and
    // is borrowed mutably for the slice's lifetime; any bit pattern is a `T`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut T, k) }
}

/// `k` elements of `T` at `p` as a slice, copied into `tmp` if `p` is misaligned.
unsafe fn view<T>(p: *const u8, k: usize, tmp: &mut [u64]) -> &[T] {
    if (p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        std::slice::from_raw_parts(p as *const T, k)
    } else {
        std::ptr::copy_nonoverlapping(p, tmp.as_mut_ptr() as *mut u8, k * std::mem::size_of::<T>());
        std::slice::from_raw_parts(tmp.as_ptr() as *const T, k)
    }
}

unsafe fn reduce_native<T: Elem>(
    op: RedOp,
    srcs: &[*const u8],
    dsts: &[*mut u8],
    elems: usize,
    s: &mut Scratch,
) {
    let sz = std::mem::size_of::<T>();
    let per = CHUNK_BYTES / sz;
    let mut start = 0;
    while start < elems {
        let k = per.min(elems - start);
        let off = start * sz;
        let rest = if srcs.len() >= 2 {
            // acc = in0 op in1 in one pass.
            let a: &[T] = view(srcs[0].add(off), k, &mut s.tmp);
            let b: &[T] = view(srcs[1].add(off), k, &mut s.tmp2);
            combine(as_mut(&mut s.acc, k), a, b, op);
            &srcs[2..]
        } else {
            std::ptr::copy_nonoverlapping(srcs[0].add(off), s.acc.as_mut_ptr() as *mut u8, k * sz);
            &srcs[1..]
        };
        let acc: &mut [T] = as_mut(&mut s.acc, k);
        for src in rest {
            let x: &[T] = view(src.add(off), k, &mut s.tmp);
            accumulate(acc, x, op);
        }
        for d in dsts {
            store(s.acc.as_ptr() as *const u8, d.add(off), k * sz, s.nt);
        }
        start += k;
    }
}

trait Half: Copy + 'static {
    fn to_f32s(src: &[Self], dst: &mut [f32]);
    fn from_f32s(dst: &mut [Self], src: &[f32]);
}
impl Half for f16 {
    fn to_f32s(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst)
    }
    fn from_f32s(dst: &mut [Self], src: &[f32]) {
        dst.convert_from_f32_slice(src)
    }
}
impl Half for bf16 {
    fn to_f32s(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst)
    }
    fn from_f32s(dst: &mut [Self], src: &[f32]) {
        dst.convert_from_f32_slice(src)
    }
}

unsafe fn reduce_half<H: Half>(
    op: RedOp,
    srcs: &[*const u8],
    dsts: &[*mut u8],
    elems: usize,
    s: &mut Scratch,
) {
    let per = CHUNK_BYTES / 4;
    let mut start = 0;
    while start < elems {
        let k = per.min(elems - start);
        let off = start * 2;
        {
            let x: &[H] = view(srcs[0].add(off), k, &mut s.tmp2);
            H::to_f32s(x, as_mut(&mut s.acc, k));
        }
        for src in &srcs[1..] {
            let x: &[H] = view(src.add(off), k, &mut s.tmp2);
            let xf: &mut [f32] = as_mut(&mut s.tmp, k);
            H::to_f32s(x, xf);
            let acc: &mut [f32] = as_mut(&mut s.acc, k);
            accumulate(acc, as_mut::<f32>(&mut s.tmp, k), op);
        }
        let acc: &[f32] = as_mut(&mut s.acc, k);
        let out: &mut [H] = as_mut(&mut s.tmp2, k);
        H::from_f32s(out, acc);
        for d in dsts {
            store(s.tmp2.as_ptr() as *const u8, d.add(off), k * 2, s.nt);
        }
        start += k;
    }
}

/// For `i < elems`: every `dsts[j][i]` = `srcs[0][i] op srcs[1][i] op …` (in this order).
/// A destination may alias a source (in-place): each chunk is read fully before written.
///
/// # Safety
/// Every pointer must be valid for `elems` elements of `dt`.
pub unsafe fn reduce(
    dt: Dtype,
    op: RedOp,
    srcs: &[*const u8],
    dsts: &[*mut u8],
    elems: usize,
    s: &mut Scratch,
) {
    if elems == 0 || srcs.is_empty() {
        return;
    }
    match dt {
        Dtype::I8 => reduce_native::<i8>(op, srcs, dsts, elems, s),
        Dtype::I16 => reduce_native::<i16>(op, srcs, dsts, elems, s),
        Dtype::I32 => reduce_native::<i32>(op, srcs, dsts, elems, s),
        Dtype::I64 => reduce_native::<i64>(op, srcs, dsts, elems, s),
        Dtype::U8 => reduce_native::<u8>(op, srcs, dsts, elems, s),
        Dtype::U16 => reduce_native::<u16>(op, srcs, dsts, elems, s),
        Dtype::U32 => reduce_native::<u32>(op, srcs, dsts, elems, s),
        Dtype::U64 => reduce_native::<u64>(op, srcs, dsts, elems, s),
        Dtype::F32 => reduce_native::<f32>(op, srcs, dsts, elems, s),
        Dtype::F64 => reduce_native::<f64>(op, srcs, dsts, elems, s),
        Dtype::F16 => reduce_half::<f16>(op, srcs, dsts, elems, s),
        Dtype::BF16 => reduce_half::<bf16>(op, srcs, dsts, elems, s),
        _ => unreachable!("checked at call time: {dt:?} is not reducible"),
    }
}

/// Footprint (bytes of all ranks' buffers together) from which results are written with
/// non-temporal stores: at the size of the 32 MiB last-level cache (shared with other
/// programs) ordinary stores would first read every destination line (read-for-ownership)
/// only to overwrite it, and evict the inputs. Same-run figures on the 2-core VM against
/// the earlier 64 MiB: Broadcast 8 MiB on 4 ranks (32 MiB) 3.2 → 7.4 GB/s busbw (medians of
/// 4), AllReduce 8 MiB on 2 ranks (32 MiB) 4.1–4.3 → 6.2–8.1 GB/s; below it, AllGather 8 MiB
/// on 2 ranks (24 MiB) is faster with ordinary stores (6.8 vs 6.1 GB/s) and Broadcast 8 MiB
/// on 2 ranks (16 MiB) 2x faster.
pub const NT_FOOTPRINT: u64 = 32 << 20;

/// Copy `len` bytes between non-overlapping ranges, with non-temporal stores if `nt`.
///
/// # Safety
/// Both pointers valid for `len` bytes; the ranges do not overlap.
#[inline]
pub unsafe fn store(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
    if nt {
        nt_copy(src, dst, len)
    } else {
        std::ptr::copy_nonoverlapping(src, dst, len)
    }
}

#[cfg(target_arch = "x86_64")]
unsafe fn nt_copy(src: *const u8, dst: *mut u8, len: usize) {
    if has_avx2() {
        return nt_copy_avx2(src, dst, len);
    }
    nt_copy_sse2(src, dst, len)
}

/// [`nt_copy`] with 32-byte loads and streaming stores, 128 bytes per iteration.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn nt_copy_avx2(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256, _mm_sfence};
    if len < 512 {
        std::ptr::copy_nonoverlapping(src, dst, len);
        return;
    }
    let head = (32 - (dst as usize & 31)) & 31;
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 128 <= len {
        let s = src.add(i) as *const __m256i;
        let d = dst.add(i) as *mut __m256i;
        let a = _mm256_loadu_si256(s);
        let b = _mm256_loadu_si256(s.add(1));
        let c = _mm256_loadu_si256(s.add(2));
        let e = _mm256_loadu_si256(s.add(3));
        _mm256_stream_si256(d, a);
        _mm256_stream_si256(d.add(1), b);
        _mm256_stream_si256(d.add(2), c);
        _mm256_stream_si256(d.add(3), e);
        i += 128;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    // Non-temporal stores are weakly ordered: make them visible before the caller publishes.
    _mm_sfence();
}

#[cfg(target_arch = "x86_64")]
unsafe fn nt_copy_sse2(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    if len < 256 {
        std::ptr::copy_nonoverlapping(src, dst, len);
        return;
    }
    let head = (16 - (dst as usize & 15)) & 15;
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 64 <= len {
        let a = _mm_loadu_si128(src.add(i) as *const __m128i);
        let b = _mm_loadu_si128(src.add(i + 16) as *const __m128i);
        let c = _mm_loadu_si128(src.add(i + 32) as *const __m128i);
        let d = _mm_loadu_si128(src.add(i + 48) as *const __m128i);
        _mm_stream_si128(dst.add(i) as *mut __m128i, a);
        _mm_stream_si128(dst.add(i + 16) as *mut __m128i, b);
        _mm_stream_si128(dst.add(i + 32) as *mut __m128i, c);
        _mm_stream_si128(dst.add(i + 48) as *mut __m128i, d);
        i += 64;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    // Non-temporal stores are weakly ordered: make them visible before the caller publishes.
    _mm_sfence();
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn nt_copy(src: *const u8, dst: *mut u8, len: usize) {
    std::ptr::copy_nonoverlapping(src, dst, len)
}

/// Copy `len` bytes unless source and destination are the same.
///
/// # Safety
/// Both pointers valid for `len` bytes.
pub unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if len == 0 || std::ptr::eq(src, dst) {
        return;
    }
    std::ptr::copy(src, dst, len);
}

/// [`copy`] with non-temporal stores when `nt` (the ranges must then not overlap).
///
/// # Safety
/// Both pointers valid for `len` bytes.
pub unsafe fn copy_nt(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
    if len == 0 || std::ptr::eq(src, dst) {
        return;
    }
    if nt {
        nt_copy(src, dst, len)
    } else {
        std::ptr::copy(src, dst, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ints_wrap_and_order() {
        let a: Vec<i8> = vec![100, -128, 5, 7];
        let b: Vec<i8> = vec![100, -1, -9, 7];
        let mut out = vec![0i8; 4];
        let mut s = Scratch::default();
        // SAFETY: `a`, `b` and `out` hold 4 i8 each.
        unsafe {
            reduce(
                Dtype::I8,
                RedOp::Sum,
                &[a.as_ptr() as _, b.as_ptr() as _],
                &[out.as_mut_ptr() as _],
                4,
                &mut s,
            )
        };
        assert_eq!(out, vec![-56, 127, -4, 14]);
        // SAFETY: as above.
        unsafe {
            reduce(
                Dtype::I8,
                RedOp::Max,
                &[a.as_ptr() as _, b.as_ptr() as _],
                &[out.as_mut_ptr() as _],
                4,
                &mut s,
            )
        };
        assert_eq!(out, vec![100, -1, 5, 7]);
    }

    #[test]
    fn fp16_rounds_once() {
        // 2048 + 1 is not representable in fp16 (spacing 2); 2048+1+1 = 2050 is, if
        // accumulated in f32 and rounded once.
        let v = [
            f16::from_f32(2048.0),
            f16::from_f32(1.0),
            f16::from_f32(1.0),
        ];
        let bufs: Vec<Vec<f16>> = v.iter().map(|&x| vec![x; 5000]).collect();
        let mut out = vec![f16::ZERO; 5000];
        let srcs: Vec<*const u8> = bufs.iter().map(|b| b.as_ptr() as *const u8).collect();
        let mut s = Scratch::default();
        // SAFETY: every source and `out` hold 5000 f16.
        unsafe {
            reduce(
                Dtype::F16,
                RedOp::Sum,
                &srcs,
                &[out.as_mut_ptr() as _],
                5000,
                &mut s,
            )
        };
        assert!(out.iter().all(|&x| x.to_f32() == 2050.0));
        let b: Vec<bf16> = vec![bf16::from_f32(1.5); 9000];
        let mut o = vec![bf16::ZERO; 9000];
        // SAFETY: `b` and `o` hold 9000 bf16.
        unsafe {
            reduce(
                Dtype::BF16,
                RedOp::Prod,
                &[b.as_ptr() as _, b.as_ptr() as _],
                &[o.as_mut_ptr() as _],
                9000,
                &mut s,
            )
        };
        assert!(o.iter().all(|&x| x.to_f32() == 2.25));
    }

    #[test]
    fn non_temporal_stores_write_the_same() {
        for (off, len) in [
            (0usize, 5usize),
            (1, 300),
            (3, 70001),
            (16, 4096),
            (7, 1 << 20),
            (9, 600),
            (31, 513),
            (32, 4096 + 127),
        ] {
            let src: Vec<u8> = (0..len + 64).map(|i| (i * 7 + 3) as u8).collect();
            let mut dst = vec![0u8; len + 64];
            // SAFETY: `src` and `dst` have len + 64 bytes: both ranges are inside.
            unsafe { copy_nt(src.as_ptr().add(5), dst.as_mut_ptr().add(off), len, true) };
            assert_eq!(&dst[off..off + len], &src[5..5 + len]);
            assert!(dst[..off].iter().all(|&b| b == 0) && dst[off + len..].iter().all(|&b| b == 0));
            #[cfg(target_arch = "x86_64")]
            {
                // The SSE2 fallback too (the AVX2 path is taken above when the CPU has it).
                let mut dst = vec![0u8; len + 64];
                // SAFETY: as above.
                unsafe { nt_copy_sse2(src.as_ptr().add(5), dst.as_mut_ptr().add(off), len) };
                assert_eq!(&dst[off..off + len], &src[5..5 + len]);
                assert!(
                    dst[..off].iter().all(|&b| b == 0) && dst[off + len..].iter().all(|&b| b == 0)
                );
            }
        }
        let a: Vec<f32> = (0..100_003).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..100_003).map(|i| 2.0 * i as f32).collect();
        let mut raw = vec![0u8; 4 * 100_003 + 3];
        let mut s = Scratch {
            nt: true,
            ..Scratch::default()
        };
        // SAFETY: `raw` has 3 + 4 * 100_003 bytes.
        let dst = unsafe { raw.as_mut_ptr().add(3) };
        // SAFETY: `a`, `b` and `dst` hold 100_003 f32 each.
        unsafe {
            reduce(
                Dtype::F32,
                RedOp::Sum,
                &[a.as_ptr() as _, b.as_ptr() as _],
                &[dst],
                100_003,
                &mut s,
            )
        };
        for i in 0..100_003 {
            let v = f32::from_ne_bytes(raw[3 + 4 * i..7 + 4 * i].try_into().unwrap());
            assert_eq!(v, 3.0 * i as f32);
        }
    }

    #[test]
    fn misaligned_in_place() {
        let mut raw = vec![0u8; 4 * 3000 + 1];
        let mut other = vec![0u8; 4 * 3000 + 1];
        for i in 0..3000 {
            raw[1 + 4 * i..5 + 4 * i].copy_from_slice(&(i as i32).to_ne_bytes());
            other[1 + 4 * i..5 + 4 * i].copy_from_slice(&(2 * i as i32).to_ne_bytes());
        }
        // SAFETY: `raw` and `other` have 1 + 4 * 3000 bytes.
        let p = unsafe { raw.as_mut_ptr().add(1) };
        // SAFETY: as above.
        let q = unsafe { other.as_ptr().add(1) };
        let mut s = Scratch::default();
        // SAFETY: `p` and `q` point to 3000 (unaligned) i32 each; in place is allowed.
        unsafe { reduce(Dtype::I32, RedOp::Sum, &[p, q], &[p], 3000, &mut s) };
        for i in 0..3000 {
            let v = i32::from_ne_bytes(raw[1 + 4 * i..5 + 4 * i].try_into().unwrap());
            assert_eq!(v, 3 * i as i32);
        }
    }
}

#[cfg(test)]
mod bench {
    use super::*;
    /// `cargo test --release -p libhccl reduce_speed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn reduce_speed() {
        for &(n, elems) in &[(2usize, 1usize << 20), (8, 1 << 18), (2, 1 << 24)] {
            let ins: Vec<Vec<f32>> = (0..n).map(|r| vec![r as f32; elems]).collect();
            let mut outs: Vec<Vec<f32>> = (0..n).map(|_| vec![0f32; elems]).collect();
            let srcs: Vec<*const u8> = ins.iter().map(|v| v.as_ptr() as *const u8).collect();
            let dsts: Vec<*mut u8> = outs.iter_mut().map(|v| v.as_mut_ptr() as *mut u8).collect();
            let mut s = Scratch::default();
            // SAFETY: every source and destination holds `elems` f32.
            unsafe { reduce(Dtype::F32, RedOp::Sum, &srcs, &dsts, elems, &mut s) };
            let t = std::time::Instant::now();
            let reps = 10;
            for _ in 0..reps {
                // SAFETY: as above.
                unsafe { reduce(Dtype::F32, RedOp::Sum, &srcs, &dsts, elems, &mut s) };
            }
            let dt = t.elapsed().as_secs_f64() / reps as f64;
            let bytes = (elems * 4 * n * 2) as f64;
            println!(
                "n={n} elems={elems}: {:.3} ms, {:.2} GB/s r+w",
                dt * 1e3,
                bytes / dt / 1e9
            );
            let t = std::time::Instant::now();
            for _ in 0..reps {
                for (i, d) in dsts.iter().enumerate() {
                    // SAFETY: as above: `elems * 4` bytes each.
                    unsafe { std::ptr::copy_nonoverlapping(srcs[i], *d, elems * 4) };
                }
            }
            let dt = t.elapsed().as_secs_f64() / reps as f64;
            println!(
                "   memcpy same bytes: {:.3} ms, {:.2} GB/s r+w",
                dt * 1e3,
                bytes / dt / 1e9
            );
        }
    }
}
