//! Fake quantisation (quantisation-aware training): `torch.fake_quantize_per_tensor_affine`
//! and `torch.fake_quantize_per_channel_affine` through their `…_cachemask` forms. Each element
//! is quantised to the integer grid `qval`, clamped to `[quant_min, quant_max]` and mapped
//! back; `mask` says whether `qval` was inside the range (the gradient passes only there).
//! Computed in f32, as PyTorch's kernels and CANN's formula do.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// One element's `(out, mask)` from its grid value `qval`, `scale` and `zp`.
fn fq(scale: f32, zp: f32, qval: f32, qmin: i64, qmax: i64) -> (f32, bool) {
    let (lo, hi) = (qmin as f32, qmax as f32);
    let out = (qval.max(lo).min(hi) - zp) * scale;
    (out, qval >= lo && qval <= hi)
}

/// Per tensor: `qval = nearbyint(x · (1 / scale)) + zero_point` (PyTorch multiplies by the
/// inverse scale); with `enabled` false `out` is `x` and `mask` all true.
#[allow(clippy::too_many_arguments)]
pub fn per_tensor(
    x: &View,
    scale: &View,
    zero_point: &View,
    enabled: bool,
    qmin: i64,
    qmax: i64,
    out: &View,
    mask: &View,
) -> Result<(), String> {
    let xs: Vec<f32> = load(x, DType::F32)?;
    let n = xs.len();
    if !enabled {
        store(xs, DType::F32, out)?;
        return store(vec![1u8; n], DType::Bool, mask);
    }
    // one-element tensors read when the task runs
    let scale = load::<f32>(scale, DType::F32)?[0];
    let zp = load::<f32>(zero_point, DType::F32)?[0];
    let inv = 1.0f32 / scale;
    let (o, m): (Vec<f32>, Vec<u8>) = xs
        .iter()
        .map(|&v| {
            let q = (v * inv).round_ties_even() + zp;
            let (a, b) = fq(scale, zp, q, qmin, qmax);
            (a, b as u8)
        })
        .unzip();
    store(o, DType::F32, out)?;
    store(m, DType::Bool, mask)
}

/// Per channel along `axis`: channel `c` uses `scale[c]` and `zero_point[c]`; an integer
/// zero point gives `qval = nearbyint(x / scale) + zp`, a floating one
/// `qval = nearbyint(x / scale + zp)` (the reference's two formulas).
#[allow(clippy::too_many_arguments)]
pub fn per_channel(
    x: &View,
    scale: &View,
    zero_point: &View,
    axis: usize,
    qmin: i64,
    qmax: i64,
    out: &View,
    mask: &View,
) -> Result<(), String> {
    let xs: Vec<f32> = load(x, DType::F32)?;
    let sc: Vec<f32> = load(scale, DType::F32)?;
    let zp: Vec<f32> = load(zero_point, DType::F32)?;
    let int_zp = !zero_point.dtype.is_float();
    let c = x.shape[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    let (o, m): (Vec<f32>, Vec<u8>) = xs
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let ch = (i / inner.max(1)) % c.max(1);
            let (s, z) = (sc[ch], zp[ch]);
            let q = if int_zp {
                (v / s).round_ties_even() + z
            } else {
                (v / s + z).round_ties_even()
            };
            let (a, b) = fq(s, z, q, qmin, qmax);
            (a, b as u8)
        })
        .unzip();
    store(o, DType::F32, out)?;
    store(m, DType::Bool, mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tensor_clamps_and_masks() {
        let mut x = [0.26f32, -1.0, 3.0, 0.05];
        let xv = View::of_slice(&mut x, DType::F32, &[4]);
        let (mut o, mut m) = ([0f32; 4], [0u8; 4]);
        let ov = View::of_slice(&mut o, DType::F32, &[4]);
        let mv = View::of_slice(&mut m, DType::Bool, &[4]);
        // scale 0.1, zp 2, range [0, 20]: 0.26 -> 3 + 2 = 5 -> 0.3; -1 -> -10 + 2 = -8 ->
        // clamped 0 -> -0.2 (outside); 3 -> 32 -> 20 -> 1.8 (outside); 0.05 -> 0 (tie to even) + 2
        let (mut sc, mut zp) = ([0.1f32], [2i32]);
        let scv = View::of_slice(&mut sc, DType::F32, &[1]);
        let zpv = View::of_slice(&mut zp, DType::I32, &[1]);
        per_tensor(&xv, &scv, &zpv, true, 0, 20, &ov, &mv).unwrap();
        let want = [0.3f32, -0.2, 1.8, 0.0];
        for (a, b) in o.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{o:?}");
        }
        assert_eq!(m, [1, 0, 0, 1]);
        per_tensor(&xv, &scv, &zpv, false, 0, 20, &ov, &mv).unwrap();
        assert_eq!(o, x);
        assert_eq!(m, [1; 4]);
    }
}
