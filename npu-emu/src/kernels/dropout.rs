//! Dropout with a byte mask: the aclop operators `DropOutGenMaskV3` (draw the mask) and
//! `DropOutDoMaskV3` (apply it), which torch_npu's `dropout_with_byte_mask`
//! (`torch_npu.contrib.function.dropout_with_byte_mask`, `contrib.module.DropoutWithByteMask`)
//! and its backward run (op-plugin `DropoutWithByteMaskKernelNpu.cpp`).
//!
//! The mask holds one byte per element (torch_npu allocates it with the input's shape, or
//! the element count rounded up to 128 for `npu_dropout_with_add_softmax`): 1 keeps the
//! element, 0 drops it. Byte `i` is 1 when a uniform draw `u_i` in [0, 1) is below the keep
//! probability. The draws are "stateless": a pure function of the 128-bit seed
//! (`seed2` << 64 | `seed`, as op-plugin documents the operator's seed) and the byte's
//! position — the 32-bit word `i % 4` of the Philox4x32-10 block keyed by `seed` at counter
//! `(i / 4, seed2)`, its top 24 bits as the fraction. Bytes past the last element are drawn
//! the same way. The hardware's bit stream is not published; this one is reproducible for a
//! seed, and every draw is independent.
//!
//! `DropOutDoMaskV3`: `y_i = x_i / keep_prob` where mask byte `i` is non-zero, else 0;
//! `keep_prob` 0 gives all zeros.
//!
//! The fused pair behind `torch_npu.npu_dropout_with_add_softmax`
//! (`contrib.function.fuse_add_softmax_dropout`), with the same byte mask:
//! - `AxpyWithSoftmaxAndDropOutDoMask(x1, x2, mask)`: `y1 = softmax(x1 + alpha * x2)` along
//!   `axis`, `y2 = y1 * mask / input_keep_prob`;
//! - `DropoutWithMulsAndSoftmaxGrad(y_grad, mask, softmax_output)`: with
//!   `g = y_grad * mask / input_keep_prob`, `x_grad = alpha * s * (g - sum(g * s))` (the sum
//!   along `axes`), the gradient of `y2` with respect to `x2`.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::random::philox;
use crate::ops::View;

/// Uniform draw `i` of the mask stream of (`seed`, `seed2`), in [0, 1).
fn draw(seed: u64, seed2: u64, i: usize) -> f64 {
    let b = (i / 4) as u64;
    let w = philox(
        seed,
        [
            b as u32,
            (b >> 32) as u32,
            seed2 as u32,
            (seed2 >> 32) as u32,
        ],
    )[i % 4];
    (w >> 8) as f64 / (1u64 << 24) as f64
}

/// Whether a keep probability is a probability.
fn check_keep(keep: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&keep) {
        return Err(format!("keep_prob = {keep} is not within [0, 1]"));
    }
    Ok(())
}

/// `DropOutGenMaskV3`: every byte of `mask` (UINT8 / BOOL), 1 with probability `keep`.
pub fn gen_byte_mask(seed: u64, seed2: u64, keep: f64, mask: &View) -> Result<(), String> {
    check_keep(keep)?;
    let m: Vec<u8> = (0..mask.numel())
        .map(|i| u8::from(draw(seed, seed2, i) < keep))
        .collect();
    store(m, DType::U8, mask)
}

/// `DropOutDoMaskV3`: `y = x * mask / keep` (element `i` of `x` with mask byte `i`; the mask
/// may be longer than `x`).
pub fn do_byte_mask(x: &View, mask: &View, keep: f64, y: &View) -> Result<(), String> {
    check_keep(keep)?;
    let n = x.numel();
    if mask.numel() < n {
        return Err(format!(
            "the mask holds {} bytes, fewer than x's {n} elements",
            mask.numel()
        ));
    }
    let xs: Vec<f64> = load(x, DType::F64)?;
    let ms: Vec<u8> = load(&mask.reshaped(&[mask.numel()]), DType::U8)?;
    let scale = if keep > 0.0 { 1.0 / keep } else { 0.0 };
    let out: Vec<f64> = xs
        .iter()
        .zip(&ms)
        .map(|(&v, &m)| if m != 0 { v * scale } else { 0.0 })
        .collect();
    store(out, DType::F64, y)
}

/// A keep probability given as a one-element tensor (in device memory).
pub fn read_keep(v: &View) -> Result<f64, String> {
    if v.numel() != 1 {
        return Err(format!("keep_prob {:?} must hold one value", v.shape));
    }
    Ok(load::<f64>(&v.reshaped(&[1]), DType::F64)?[0])
}

/// `[outer, len, inner]` of `shape` around `axis`.
fn around(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

/// The mask bytes of the first `n` elements, as 0 / 1 factors over `keep`.
fn mask_scale(mask: &View, n: usize, keep: f64) -> Result<Vec<f64>, String> {
    check_keep(keep)?;
    if mask.numel() < n {
        return Err(format!(
            "the mask holds {} bytes, fewer than the {n} elements",
            mask.numel()
        ));
    }
    let ms: Vec<u8> = load(&mask.reshaped(&[mask.numel()]), DType::U8)?;
    let scale = if keep > 0.0 { 1.0 / keep } else { 0.0 };
    Ok(ms[..n]
        .iter()
        .map(|&m| if m != 0 { scale } else { 0.0 })
        .collect())
}

/// `AxpyWithSoftmaxAndDropOutDoMask`: `y1 = softmax(x1 + alpha * x2)` along `axis`,
/// `y2 = y1 * mask / keep`.
#[allow(clippy::too_many_arguments)]
pub fn axpy_softmax_do_mask(
    x1: &View,
    x2: &View,
    mask: &View,
    alpha: f64,
    keep: f64,
    axis: usize,
    y1: &View,
    y2: &View,
) -> Result<(), String> {
    let n = x1.numel();
    let m = mask_scale(mask, n, keep)?;
    let a: Vec<f64> = load(x1, DType::F64)?;
    let b: Vec<f64> = load(x2, DType::F64)?;
    let mut s: Vec<f64> = a.iter().zip(&b).map(|(p, q)| p + alpha * q).collect();
    let (outer, len, inner) = around(&x1.shape, axis);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let top = (0..len).map(|k| s[at(k)]).fold(f64::NEG_INFINITY, f64::max);
            let mut sum = 0.0;
            for k in 0..len {
                let e = (s[at(k)] - top).exp();
                s[at(k)] = e;
                sum += e;
            }
            for k in 0..len {
                s[at(k)] /= sum;
            }
        }
    }
    let d: Vec<f64> = s.iter().zip(&m).map(|(v, f)| v * f).collect();
    store(s, DType::F64, y1)?;
    store(d, DType::F64, y2)
}

/// `DropoutWithMulsAndSoftmaxGrad`: `alpha * s * (g - sum(g * s))` along `axis`, with
/// `g = y_grad * mask / keep` and `s` the softmax output.
pub fn dropout_muls_softmax_grad(
    y_grad: &View,
    mask: &View,
    softmax: &View,
    alpha: f64,
    keep: f64,
    axis: usize,
    x_grad: &View,
) -> Result<(), String> {
    let n = y_grad.numel();
    let m = mask_scale(mask, n, keep)?;
    let g: Vec<f64> = load(y_grad, DType::F64)?;
    let s: Vec<f64> = load(softmax, DType::F64)?;
    let g: Vec<f64> = g.iter().zip(&m).map(|(v, f)| v * f).collect();
    let mut out = vec![0f64; n];
    let (outer, len, inner) = around(&y_grad.shape, axis);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let dot: f64 = (0..len).map(|k| g[at(k)] * s[at(k)]).sum();
            for k in 0..len {
                out[at(k)] = alpha * s[at(k)] * (g[at(k)] - dot);
            }
        }
    }
    store(out, DType::F64, x_grad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_keeps_about_keep_and_is_reproducible() {
        let n = 40_000;
        let mut a = vec![0u8; n];
        let mut b = vec![0u8; n];
        gen_byte_mask(7, 0, 0.8, &View::of_slice(&mut a, DType::U8, &[n])).unwrap();
        gen_byte_mask(7, 0, 0.8, &View::of_slice(&mut b, DType::U8, &[n])).unwrap();
        assert_eq!(a, b);
        let kept = a.iter().filter(|&&m| m == 1).count() as f64 / n as f64;
        assert!((kept - 0.8).abs() < 0.01, "{kept}");
        assert!(a.iter().all(|&m| m <= 1));
        gen_byte_mask(8, 0, 0.8, &View::of_slice(&mut b, DType::U8, &[n])).unwrap();
        assert_ne!(a, b);
        let mut x = vec![2.0f32; 8];
        let mut m = vec![1u8, 0, 1, 0, 0, 1, 1, 1, 9];
        let mut y = vec![0f32; 8];
        do_byte_mask(
            &View::of_slice(&mut x, DType::F32, &[2, 4]),
            &View::of_slice(&mut m, DType::U8, &[9]),
            0.5,
            &View::of_slice(&mut y, DType::F32, &[2, 4]),
        )
        .unwrap();
        assert_eq!(y, [4.0, 0.0, 4.0, 0.0, 0.0, 4.0, 4.0, 4.0]);
    }
}
