//! Random numbers: a counter-based generator (Philox4x32-10, Salmon et al. 2011, the
//! generator of CANN's and PyTorch's device RNG), so a result depends only on (seed,
//! offset) and the element's position in row-major order — never on threads or timing.
//!
//! Element `i` of a uniform fill uses 32-bit word `i % 4` of block `i / 4` (24-bit floats in
//! [0, 1)); float64 fills use two words per element. Normal values use Box–Muller on one
//! block per pair of elements. The block counter is `(i / per_block, offset)`; the key is
//! the seed.

use super::dtype::DType;
use super::elem;
use super::view::View;

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// One Philox4x32-10 block.
pub fn philox(seed: u64, counter: [u32; 4]) -> [u32; 4] {
    let mut c = counter;
    let mut k = [seed as u32, (seed >> 32) as u32];
    for _ in 0..10 {
        let p0 = (M0 as u64) * (c[0] as u64);
        let p1 = (M1 as u64) * (c[2] as u64);
        c = [
            ((p1 >> 32) as u32) ^ c[1] ^ k[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ c[3] ^ k[1],
            p0 as u32,
        ];
        k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
    }
    c
}

fn block(seed: u64, offset: u64, i: u64) -> [u32; 4] {
    philox(
        seed,
        [
            i as u32,
            (i >> 32) as u32,
            offset as u32,
            (offset >> 32) as u32,
        ],
    )
}

fn u24(w: u32) -> f64 {
    (w >> 8) as f64 * (1.0 / (1u64 << 24) as f64)
}

fn u53(a: u32, b: u32) -> f64 {
    let v = ((a as u64) << 21) ^ (b as u64 >> 11);
    (v & ((1u64 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Write `f(i)` (row-major element index) into every element of `out`.
fn fill_with(out: &View, f: impl Fn(usize) -> f64) {
    let n = out.numel();
    let nd = out.ndim();
    let es = out.esize() as isize;
    let mut idx = vec![0usize; nd];
    for i in 0..n {
        let off: isize = idx
            .iter()
            .zip(&out.strides)
            .map(|(&a, &s)| a as isize * s)
            .sum();
        // SAFETY: the element is inside the checked output view.
        unsafe { elem::write(out.dtype, out.ptr.wrapping_offset(off * es), f(i)) };
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < out.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// A uniform value in [0, 1) for element `i`.
pub fn uniform01(seed: u64, offset: u64, i: usize, wide: bool) -> f64 {
    if wide {
        let b = block(seed, offset, (i / 2) as u64);
        let j = (i % 2) * 2;
        u53(b[j], b[j + 1])
    } else {
        let b = block(seed, offset, (i / 4) as u64);
        u24(b[i % 4])
    }
}

/// Uniform values in `[from, to)`.
pub fn uniform(out: &View, from: f64, to: f64, seed: u64, offset: u64) {
    let wide = out.dtype == DType::F64;
    fill_with(out, |i| {
        let v = from + uniform01(seed, offset, i, wide) * (to - from);
        // rounding can reach `to`; keep the half-open interval
        if v >= to && to > from {
            from.max(to - (to - from) * f64::EPSILON)
        } else {
            v
        }
    });
}

/// Normal values with the given mean and standard deviation.
pub fn normal(out: &View, mean: f64, std: f64, seed: u64, offset: u64) {
    fill_with(out, |i| {
        let b = block(seed, offset, (i / 2) as u64);
        // u1 in (0, 1]: never log(0)
        let u1 = 1.0 - u53(b[0], b[1]);
        let u2 = u53(b[2], b[3]);
        let r = (-2.0 * u1.ln()).sqrt();
        let t = 2.0 * std::f64::consts::PI * u2;
        let z = if i % 2 == 0 { r * t.cos() } else { r * t.sin() };
        mean + std * z
    });
}

/// 64 random bits for element `i` (two words of block `i / 2`).
fn bits64(seed: u64, offset: u64, i: usize) -> u64 {
    let b = block(seed, offset, (i / 2) as u64);
    let j = (i % 2) * 2;
    ((b[j] as u64) << 32) | b[j + 1] as u64
}

/// Integers drawn uniformly from `[from, to)` (`from < to`): 64 random bits per element
/// reduced modulo the range, written exactly into integer outputs and rounded once into
/// floating ones.
pub fn random_int(out: &View, from: i64, to: i64, seed: u64, offset: u64) {
    let range = (to as i128 - from as i128).max(1) as u128;
    let draw = |i: usize| (from as i128 + (bits64(seed, offset, i) as u128 % range) as i128) as i64;
    let n = out.numel();
    let nd = out.ndim();
    let es = out.esize() as isize;
    let mut idx = vec![0usize; nd];
    for i in 0..n {
        let off: isize = idx
            .iter()
            .zip(&out.strides)
            .map(|(&a, &s)| a as isize * s)
            .sum();
        // SAFETY: the element is inside the checked output view.
        unsafe { elem::write(out.dtype, out.ptr.wrapping_offset(off * es), draw(i)) };
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < out.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// A random permutation of `0..n` into the 1-D `out` (Fisher–Yates, step `k` drawing from
/// element `k`'s 64 random bits).
pub fn randperm(n: usize, out: &View, seed: u64, offset: u64) {
    let mut p: Vec<i64> = (0..n as i64).collect();
    for k in (1..n).rev() {
        let j = (bits64(seed, offset, k) % (k as u64 + 1)) as usize;
        p.swap(k, j);
    }
    let es = out.esize() as isize;
    let st = out.strides.first().copied().unwrap_or(1);
    for (i, v) in p.into_iter().enumerate() {
        // SAFETY: element i of the checked 1-D output.
        unsafe { elem::write(out.dtype, out.ptr.wrapping_offset(i as isize * st * es), v) };
    }
}

/// `num` category indices per row of `probs` (1-D `[C]` or 2-D `[N, C]`: non-negative,
/// finite weights with a positive sum per row), drawn with or without replacement into
/// `out` (`[num]` or `[N, num]`). Draw `j` of row `r` uses the uniform value of element
/// `r * num + j`; without replacement each drawn category's weight drops to 0.
pub fn multinomial(
    probs: &View,
    num: usize,
    replacement: bool,
    seed: u64,
    offset: u64,
    out: &View,
) -> Result<(), String> {
    let c = *probs.shape.last().unwrap_or(&1);
    let rows = if probs.ndim() == 2 { probs.shape[0] } else { 1 };
    let mut w = vec![0f64; rows * c];
    if !w.is_empty() {
        super::iter::copy(probs, &View::of_slice(&mut w, DType::F64, &probs.shape))?;
    }
    let es = out.esize() as isize;
    let (rs, cs) = if out.ndim() == 2 {
        (out.strides[0], out.strides[1])
    } else {
        (0, out.strides.first().copied().unwrap_or(1))
    };
    for r in 0..rows {
        let row = &mut w[r * c..(r + 1) * c];
        if let Some(bad) = row.iter().find(|v| !v.is_finite() || **v < 0.0) {
            return Err(format!(
                "row {r} of self holds {bad}: probabilities must be finite and >= 0"
            ));
        }
        let nonzero = row.iter().filter(|v| **v > 0.0).count();
        if nonzero == 0 {
            return Err(format!("row {r} of self sums to 0: it is no distribution"));
        }
        if !replacement && num > nonzero {
            return Err(format!(
                "row {r} of self has {nonzero} categories of nonzero probability, fewer than the {num} samples drawn without replacement"
            ));
        }
        for j in 0..num {
            let total: f64 = row.iter().sum();
            let u = uniform01(seed, offset, r * num + j, true) * total;
            let mut acc = 0.0;
            let mut pick = c - 1;
            for (k, &v) in row.iter().enumerate() {
                acc += v;
                if u < acc && v > 0.0 {
                    pick = k;
                    break;
                }
            }
            // rounding can leave `u` past the last sum: take the last nonzero category
            if row[pick] <= 0.0 {
                pick = row.iter().rposition(|v| *v > 0.0).unwrap_or(pick);
            }
            if !replacement {
                row[pick] = 0.0;
            }
            let off = r as isize * rs + j as isize * cs;
            // SAFETY: element (r, j) of the checked output view.
            unsafe { elem::write(out.dtype, out.ptr.wrapping_offset(off * es), pick as i64) };
        }
    }
    Ok(())
}

/// Bernoulli draws: 1 with probability `p(i)`, else 0.
pub fn bernoulli(out: &View, p: impl Fn(usize) -> f64, seed: u64, offset: u64) {
    fill_with(out, |i| {
        (uniform01(seed, offset, i, false) < p(i)) as u8 as f64
    });
}

/// The packed keep-mask of dropout: bit `i % 8` of byte `i / 8` is 1 when element `i` is
/// kept (probability `1 - p`). `mask` holds at least `ceil(n / 8)` bytes.
pub fn dropout_mask(n: usize, p: f64, seed: u64, offset: u64, mask: &View) {
    let bytes = mask.numel();
    let es = mask.esize() as isize;
    let st = if mask.ndim() == 0 { 0 } else { mask.strides[0] };
    for b in 0..bytes {
        let mut v = 0u8;
        for k in 0..8 {
            let i = b * 8 + k;
            if i < n && uniform01(seed, offset, i, false) >= p {
                v |= 1 << k;
            }
        }
        // SAFETY: byte b of the checked 1-D mask.
        unsafe {
            elem::write(
                mask.dtype,
                mask.ptr.wrapping_offset(b as isize * st * es),
                v as i64,
            )
        };
    }
}

/// `out = x * bit(mask, i) * scale` in row-major element order.
pub fn apply_mask(x: &View, mask: &View, scale: f64, out: &View) -> Result<(), String> {
    let n = x.numel();
    let mut bits = vec![0f32; n];
    let es = mask.esize() as isize;
    let st = if mask.ndim() == 0 { 0 } else { mask.strides[0] };
    for (i, b) in bits.iter_mut().enumerate() {
        // SAFETY: byte i/8 of the checked mask (its size was checked against n).
        let byte = unsafe {
            elem::read_i64(
                mask.dtype,
                mask.ptr.wrapping_offset((i / 8) as isize * st * es),
            )
        };
        *b = ((byte >> (i % 8)) & 1) as f32;
    }
    let bv = View::of_slice(&mut bits, DType::F32, &x.shape);
    if out.dtype == DType::F64 {
        super::iter::map2::<f64, f64>(x, &bv, out, move |a, m| a * m * scale)
    } else {
        let s = scale as f32;
        super::iter::map2::<f32, f32>(x, &bv, out, move |a, m| a * m * s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answer() {
        // Random123's kat_vectors: philox4x32_10, counter 0, key 0.
        assert_eq!(
            philox(0, [0, 0, 0, 0]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
    }

    #[test]
    fn normal_is_reproducible_and_plausible() {
        let mut a = vec![0f32; 4096];
        let mut b = vec![0f32; 4096];
        let va = View::of_slice(&mut a, DType::F32, &[4096]);
        let vb = View::of_slice(&mut b, DType::F32, &[64, 64]);
        normal(&va, 1.0, 2.0, 42, 7);
        normal(&vb, 1.0, 2.0, 42, 7);
        assert_eq!(a, b);
        let mean: f64 = a.iter().map(|&v| v as f64).sum::<f64>() / 4096.0;
        let var: f64 = a.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / 4096.0;
        assert!((mean - 1.0).abs() < 0.15, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.15, "{var}");
        normal(&vb, 1.0, 2.0, 42, 8);
        assert_ne!(a, b);
    }
}
