//! The elementwise engine: walk an output shape and its broadcast inputs in chunks along the
//! innermost dimension, convert each chunk of each input to the compute type, apply a
//! kernel, convert back into the output. Dimensions that are contiguous in every operand are
//! merged first, so a dense tensor is one long row. Large tensors are split across threads
//! (`available_parallelism`), each taking a contiguous run of chunks.
//!
//! Direct slices: an input whose dtype is the compute type and whose inner stride is one
//! element is read in place; an output of the result type with unit inner stride is written
//! in place. Everything else goes through a per-thread buffer of [`CHUNK`] elements.
//!
//! Aliasing: an input that is the output (the `Inplace` forms: same memory, same strides)
//! is read into the buffer before the chunk is written. An input that overlaps the output
//! any other way is computed into a scratch tensor, then copied over the output.

use super::dtype::DType;
use super::elem::{self, Compute};
use super::view::{Scratch, View};

/// Elements per chunk (a few KiB of each operand: stays in L1).
pub const CHUNK: usize = 1024;

/// Elements from which work is split across threads.
pub const PARALLEL_MIN: usize = 1 << 16;

/// Threads to use for `work` elements.
pub fn threads_for(work: usize) -> usize {
    if work < PARALLEL_MIN {
        return 1;
    }
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    cores.clamp(1, 16).min(work / (PARALLEL_MIN / 2)).max(1)
}

/// Run `f(i)` for `i` in `0..n` split into contiguous ranges across `threads` threads
/// (`f(range)` per thread). A thread that cannot be started leaves its part to the caller.
pub fn parallel_ranges(n: usize, threads: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)) {
    let threads = threads.clamp(1, n.max(1));
    if threads <= 1 {
        f(0..n);
        return;
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        let mut mine = Vec::new();
        for t in 1..threads {
            let r = (t * per).min(n)..((t + 1) * per).min(n);
            if r.is_empty() {
                continue;
            }
            let rr = r.clone();
            if std::thread::Builder::new()
                .spawn_scoped(s, move || f(rr))
                .is_err()
            {
                mine.push(r);
            }
        }
        f(0..per.min(n));
        for r in mine {
            f(r);
        }
    });
}

/// Merge dimensions that are contiguous across all operands and drop size-1 dimensions.
/// `strides[k]` are operand k's byte strides. Returns at least one dimension.
fn coalesce(shape: &[usize], strides: &[Vec<isize>]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut sh: Vec<usize> = Vec::new();
    let mut st: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for d in 0..shape.len() {
        if shape[d] == 1 {
            continue;
        }
        if let Some(&last) = sh.last() {
            let mergeable = strides.iter().enumerate().all(|(k, s)| {
                let prev = *st[k].last().unwrap();
                prev == s[d] * shape[d] as isize
            });
            if mergeable {
                let n = sh.len() - 1;
                sh[n] = last * shape[d];
                for (k, s) in strides.iter().enumerate() {
                    *st[k].last_mut().unwrap() = s[d];
                }
                continue;
            }
        }
        sh.push(shape[d]);
        for (k, s) in strides.iter().enumerate() {
            st[k].push(s[d]);
        }
    }
    if sh.is_empty() {
        sh.push(1);
        for s in st.iter_mut() {
            s.push(0);
        }
    }
    (sh, st)
}

/// The per-chunk callback of [`for_chunks`]: state, operand pointers, inner byte strides,
/// chunk length.
pub type ChunkFn<'a, S> = dyn Fn(&mut S, &[*mut u8], &[isize], usize) + Sync + 'a;

/// The chunk kernel of [`map_chunks`]: converted inputs, outputs.
pub type MapFn<'a, C, O> = dyn Fn(&[&[C]], &mut [O]) + Sync + 'a;

/// Walk `shape` in chunks: `f(state, ptrs, inner_strides, n)` gets each operand's pointer at
/// the chunk start (byte strides `strides[k]` from `bases[k]`), the operands' inner byte
/// strides and the chunk length. `init` makes one state per thread.
pub fn for_chunks<S>(
    shape: &[usize],
    bases: &[*mut u8],
    strides: &[Vec<isize>],
    init: &(dyn Fn() -> S + Sync),
    f: &ChunkFn<S>,
) {
    let numel: usize = shape.iter().product();
    if numel == 0 {
        return;
    }
    let (sh, st) = coalesce(shape, strides);
    let nd = sh.len();
    let inner = sh[nd - 1];
    let inner_strides: Vec<isize> = st.iter().map(|s| s[nd - 1]).collect();
    let cpr = inner.div_ceil(CHUNK);
    let rows: usize = sh[..nd - 1].iter().product();
    let total = rows * cpr;
    let bases: Vec<usize> = bases.iter().map(|&p| p as usize).collect();
    let work = |range: std::ops::Range<usize>| {
        let mut state = init();
        let mut ptrs = vec![std::ptr::null_mut::<u8>(); bases.len()];
        let mut idx = vec![0usize; nd.saturating_sub(1)];
        let mut last_row = usize::MAX;
        let mut row_off = vec![0isize; bases.len()];
        for c in range {
            let (row, blk) = (c / cpr, c % cpr);
            if row != last_row {
                // unravel the row index over the outer dimensions
                let mut r = row;
                for d in (0..nd - 1).rev() {
                    idx[d] = r % sh[d];
                    r /= sh[d];
                }
                for (k, off) in row_off.iter_mut().enumerate() {
                    *off = (0..nd - 1).map(|d| idx[d] as isize * st[k][d]).sum();
                }
                last_row = row;
            }
            let start = blk * CHUNK;
            let n = CHUNK.min(inner - start);
            for k in 0..bases.len() {
                let off = row_off[k] + start as isize * inner_strides[k];
                ptrs[k] = (bases[k] as *mut u8).wrapping_offset(off);
            }
            f(&mut state, &ptrs, &inner_strides, n);
        }
    };
    parallel_ranges(total, threads_for(numel), &work);
}

/// Outputs of at least this many bytes are written with non-temporal stores (they would
/// only evict the inputs from the caches, and skipping the read-for-ownership of every output
/// line saves a third of the memory traffic of a binary operator).
pub const STREAM_MIN: usize = 8 << 20;

/// Per-thread buffers of the map functions.
struct Bufs<C, O> {
    ins: Vec<Vec<C>>,
    out: Vec<O>,
    streamed: bool,
}

impl<C, O> Drop for Bufs<C, O> {
    fn drop(&mut self) {
        if self.streamed {
            store_fence();
        }
    }
}

/// Order this thread's non-temporal stores before anything that follows.
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Copy `len` bytes to `dst` with 16-byte non-temporal stores for the aligned middle.
///
/// # Safety
/// Both ranges are valid and do not overlap.
unsafe fn stream_copy(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = ((16 - (dst as usize) % 16) % 16).min(len);
        // SAFETY: inside both ranges (the caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, head);
            let mut k = head;
            while k + 16 <= len {
                let v = _mm_loadu_si128(src.add(k) as *const __m128i);
                _mm_stream_si128(dst.add(k) as *mut __m128i, v);
                k += 16;
            }
            std::ptr::copy_nonoverlapping(src.add(k), dst.add(k), len - k);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}

fn aligned(p: *const u8, align: usize) -> bool {
    (p as usize).is_multiple_of(align)
}

/// The generic elementwise map: inputs are broadcast to `out.shape`, converted to `C`,
/// `g(inputs, outputs)` fills one chunk of results of type `O`, which are stored as
/// `out.dtype`.
pub fn map_chunks<C: Compute, O: Compute>(
    ins: &[&View],
    out: &View,
    g: &MapFn<C, O>,
) -> Result<(), String> {
    let shape = out.shape.clone();
    let mut strides = vec![out
        .strides
        .iter()
        .map(|&s| s * out.esize() as isize)
        .collect::<Vec<_>>()];
    let mut buffered = vec![false; ins.len()];
    for (i, v) in ins.iter().enumerate() {
        let st = v.broadcast_strides(&shape).ok_or_else(|| {
            format!(
                "input {i} of shape {:?} does not broadcast to the output shape {:?}",
                v.shape, shape
            )
        })?;
        if v.overlaps(out) {
            let same = v.ptr == out.ptr && v.dtype.size() == out.dtype.size() && {
                let ost = out.broadcast_strides(&shape).unwrap_or_default();
                st == ost && !st.iter().zip(&shape).any(|(&s, &d)| s == 0 && d > 1)
            };
            if !same {
                // Partial overlap: compute aside, then copy over the output.
                let tmp = Scratch::new(out.dtype, &out.shape);
                map_chunks(ins, &tmp.view, g)?;
                copy(&tmp.view, out)?;
                return Ok(());
            }
            buffered[i] = true;
        }
        strides.push(st.iter().map(|&s| s * v.esize() as isize).collect());
    }
    let mut bases = vec![out.ptr];
    bases.extend(ins.iter().map(|v| v.ptr));
    let dts: Vec<DType> = ins.iter().map(|v| v.dtype).collect();
    let odt = out.dtype;
    let csize = std::mem::size_of::<C>() as isize;
    let osize = std::mem::size_of::<O>() as isize;
    let calign = std::mem::align_of::<C>();
    let oalign = std::mem::align_of::<O>();
    let nin = ins.len();
    let stream = out.numel() * out.esize() >= STREAM_MIN && odt == O::DT;
    let init = || Bufs::<C, O> {
        ins: (0..nin).map(|_| vec![C::default(); CHUNK]).collect(),
        out: vec![O::default(); CHUNK],
        streamed: false,
    };
    let f = |b: &mut Bufs<C, O>, ptrs: &[*mut u8], inner: &[isize], n: usize| {
        let mut slices: [&[C]; 4] = [&[]; 4];
        let Bufs {
            ins: ibufs,
            out: obuf,
            streamed,
        } = b;
        let mut ibufs_iter = ibufs.iter_mut();
        for k in 0..nin {
            let p = ptrs[k + 1];
            let buf = ibufs_iter.next().unwrap();
            if !buffered[k] && dts[k] == C::DT && inner[k + 1] == csize && aligned(p, calign) {
                // SAFETY: the chunk lies inside the input view, which the executor checked.
                slices[k] = unsafe { std::slice::from_raw_parts(p as *const C, n) };
            } else if inner[k + 1] == 0 {
                // broadcast along the chunk: one load, repeated
                // SAFETY: as above (one element).
                unsafe { elem::load(dts[k], p, 0, 1, &mut buf[..1]) };
                let v = buf[0];
                buf[..n].fill(v);
                slices[k] = &buf[..n];
            } else {
                // SAFETY: as above.
                unsafe { elem::load(dts[k], p, inner[k + 1], n, buf) };
                slices[k] = &buf[..n];
            }
        }
        let op = ptrs[0];
        if stream && inner[0] == osize {
            g(&slices[..nin], &mut obuf[..n]);
            // SAFETY: the chunk lies inside the output view; the buffer holds n values of
            // the output's own type.
            unsafe { stream_copy(op, obuf.as_ptr() as *const u8, n * osize as usize) };
            *streamed = true;
        } else if odt == O::DT && inner[0] == osize && aligned(op, oalign) {
            // SAFETY: the chunk lies inside the output view; inputs that alias it were
            // copied into buffers above.
            let o = unsafe { std::slice::from_raw_parts_mut(op as *mut O, n) };
            g(&slices[..nin], o);
        } else {
            g(&slices[..nin], &mut obuf[..n]);
            // SAFETY: the chunk lies inside the output view.
            unsafe { elem::store(odt, op, inner[0], &obuf[..n]) };
        }
    };
    if nin > 4 {
        return Err("internal: more than 4 inputs to one elementwise kernel".into());
    }
    for_chunks(&shape, &bases, &strides, &init, &f);
    Ok(())
}

/// `out = f(x)` elementwise.
pub fn map1<C: Compute, O: Compute>(
    x: &View,
    out: &View,
    f: impl Fn(C) -> O + Sync,
) -> Result<(), String> {
    map_chunks::<C, O>(&[x], out, &|i: &[&[C]], o: &mut [O]| {
        for (o, &a) in o.iter_mut().zip(i[0]) {
            *o = f(a);
        }
    })
}

/// `out = f(a, b)` elementwise, with broadcasting.
pub fn map2<C: Compute, O: Compute>(
    a: &View,
    b: &View,
    out: &View,
    f: impl Fn(C, C) -> O + Sync,
) -> Result<(), String> {
    map_chunks::<C, O>(&[a, b], out, &|i: &[&[C]], o: &mut [O]| {
        for ((o, &x), &y) in o.iter_mut().zip(i[0]).zip(i[1]) {
            *o = f(x, y);
        }
    })
}

/// `out = f(a, b, c)` elementwise, with broadcasting.
pub fn map3<C: Compute, O: Compute>(
    a: &View,
    b: &View,
    c: &View,
    out: &View,
    f: impl Fn(C, C, C) -> O + Sync,
) -> Result<(), String> {
    map_chunks::<C, O>(&[a, b, c], out, &|i: &[&[C]], o: &mut [O]| {
        for (((o, &x), &y), &z) in o.iter_mut().zip(i[0]).zip(i[1]).zip(i[2]) {
            *o = f(x, y, z);
        }
    })
}

/// `out = f()` for every element (fills, random numbers use their own walk).
pub fn fill<O: Compute>(out: &View, v: O) -> Result<(), String> {
    map_chunks::<O, O>(&[], out, &|_: &[&[O]], o: &mut [O]| o.fill(v))
}

/// Copy `src` into `dst` (broadcasting `src`), converting the dtype (`InplaceCopy`, `Cast`).
/// Same-dtype copies move raw bytes; conversions go through the widest compute type of the
/// pair, so every value converts with one rounding.
pub fn copy(src: &View, dst: &View) -> Result<(), String> {
    use super::dtype::Class;
    if src.dtype == dst.dtype {
        return copy_raw(src, dst);
    }
    match (src.dtype.class(), dst.dtype.class()) {
        (Class::F64, _) | (_, Class::F64) => map1::<f64, f64>(src, dst, |x| x),
        (Class::Int, Class::Int) => map1::<i64, i64>(src, dst, |x| x),
        _ => map1::<f32, f32>(src, dst, |x| x),
    }
}

/// Same-dtype copy of the element bits (any strides, broadcasting `src`): the views are
/// seen as a same-size type whose load and store keep every bit pattern.
fn copy_raw(src: &View, dst: &View) -> Result<(), String> {
    let (as_dt, float) = match src.dtype.size() {
        8 => (DType::I64, false),
        4 => (DType::F32, true),
        2 => (DType::U16, false),
        _ => (DType::U8, false),
    };
    let mut s = src.clone();
    let mut d = dst.clone();
    s.dtype = as_dt;
    d.dtype = as_dt;
    if float {
        map_chunks::<f32, f32>(&[&s], &d, &|i: &[&[f32]], o: &mut [f32]| {
            o.copy_from_slice(i[0])
        })
    } else {
        map_chunks::<i64, i64>(&[&s], &d, &|i: &[&[i64]], o: &mut [i64]| {
            o.copy_from_slice(i[0])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map2_broadcasts_and_converts() {
        let mut a: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let mut b: Vec<i32> = vec![10, 20, 30];
        let mut o = vec![0u16; 6];
        let va = View::of_slice(&mut a, DType::F32, &[2, 3]);
        let vb = View::of_slice(&mut b, DType::I32, &[3]);
        let vo = View::of_slice(&mut o, DType::F16, &[2, 3]);
        map2::<f32, f32>(&va, &vb, &vo, |x, y| x + y).unwrap();
        let got: Vec<f32> = o
            .iter()
            .map(|&h| half::f16::from_bits(h).to_f32())
            .collect();
        assert_eq!(got, vec![10., 21., 32., 13., 24., 35.]);
    }

    #[test]
    fn transposed_and_inplace() {
        // out = a^T + 1 with a 3x2 transposed view, then in place out += out
        let mut a: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let mut o = vec![0f32; 6];
        let mut va = View::of_slice(&mut a, DType::F32, &[3, 2]);
        va = va.permute(&[1, 0]);
        let vo = View::of_slice(&mut o, DType::F32, &[2, 3]);
        map1::<f32, f32>(&va, &vo, |x| x + 1.0).unwrap();
        assert_eq!(o, vec![1., 3., 5., 2., 4., 6.]);
        let vo2 = vo.clone();
        map2::<f32, f32>(&vo2, &vo, &vo, |x, y| x + y).unwrap();
        assert_eq!(o, vec![2., 6., 10., 4., 8., 12.]);
    }

    #[test]
    fn partial_overlap_goes_through_scratch() {
        // out = reverse view of the same memory: out[i] = in[n-1-i] + 0
        let mut a: Vec<f32> = (0..5).map(|i| i as f32).collect();
        let v = View::of_slice(&mut a, DType::F32, &[5]);
        let rev = View {
            // SAFETY: element 4 of the 5-element buffer.
            ptr: unsafe { v.ptr.add(16) },
            dtype: DType::F32,
            shape: vec![5],
            strides: vec![-1],
        };
        map1::<f32, f32>(&rev, &v, |x| x).unwrap();
        assert_eq!(a, vec![4., 3., 2., 1., 0.]);
    }

    #[test]
    fn streamed_output_at_an_odd_offset() {
        // above STREAM_MIN, output starting 4 bytes past a 16-byte boundary
        let n = STREAM_MIN / 4 + 1001;
        let mut a: Vec<f32> = (0..n).map(|i| (i % 977) as f32).collect();
        let mut o = vec![0f32; n + 1];
        let va = View::of_slice(&mut a, DType::F32, &[n]);
        let vo = View::of_slice(&mut o[1..], DType::F32, &[n]);
        map2::<f32, f32>(&va, &va, &vo, |x, y| x + y).unwrap();
        assert_eq!(o[0], 0.0);
        assert!(o[1..]
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 2.0 * (i % 977) as f32));
    }

    #[test]
    fn large_split_across_threads() {
        let n = 3 * PARALLEL_MIN + 17;
        let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut o = vec![0f32; n];
        let va = View::of_slice(&mut a, DType::F32, &[n]);
        let vo = View::of_slice(&mut o, DType::F32, &[n]);
        map1::<f32, f32>(&va, &vo, |x| x * 2.0).unwrap();
        assert!(o.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32));
    }
}
