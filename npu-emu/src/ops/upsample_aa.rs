//! Anti-aliased bilinear and bicubic resampling of `[N, C, H, W]` (`F.interpolate(...,
//! antialias=True)`: aclnnUpsampleBilinear2dAA, aclnnUpsampleBicubic2dAA and their gradients).
//!
//! PyTorch's separable filter: for output index `i` with scale `r` (input / output), the
//! source centre is `r (i + 0.5)`; the filter's support is `k / 2` input pixels (`k` = 2 for
//! the triangle, 4 for the cubic, `a = -0.5`), widened by `r` when downsampling (`r >= 1`),
//! where the filter is also evaluated at `1 / r` of the distance. The taps run from
//! `max(trunc(centre - support + 0.5), 0)` to `min(trunc(centre + support + 0.5), in)` and
//! their weights are normalised to sum to 1. Computed in f64.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// The interpolation filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Bilinear,
    Bicubic,
}

impl Filter {
    fn size(self) -> f64 {
        match self {
            Filter::Bilinear => 2.0,
            Filter::Bicubic => 4.0,
        }
    }

    fn eval(self, x: f64) -> f64 {
        let x = x.abs();
        match self {
            Filter::Bilinear => {
                if x < 1.0 {
                    1.0 - x
                } else {
                    0.0
                }
            }
            Filter::Bicubic => {
                let a = -0.5;
                if x < 1.0 {
                    ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
                } else if x < 2.0 {
                    (((x - 5.0) * x + 8.0) * x - 4.0) * a
                } else {
                    0.0
                }
            }
        }
    }
}

/// PyTorch's `area_pixel_compute_scale`: `(in - 1) / (out - 1)` with align corners (0 for a
/// single output), else `1 / scale` for a given scale > 0, else `in / out`.
pub fn aa_scale(n_in: usize, n_out: usize, align_corners: bool, scale: Option<f64>) -> f64 {
    if align_corners {
        if n_out > 1 {
            (n_in as f64 - 1.0) / (n_out as f64 - 1.0)
        } else {
            0.0
        }
    } else {
        match scale {
            Some(s) if s > 0.0 => 1.0 / s,
            _ => n_in as f64 / n_out as f64,
        }
    }
}

/// Per output index: the first input tap and the normalised weights.
fn taps(n_in: usize, n_out: usize, scale: f64, f: Filter) -> Vec<(usize, Vec<f64>)> {
    let support = if scale >= 1.0 {
        f.size() * 0.5 * scale
    } else {
        f.size() * 0.5
    };
    let inv = if scale >= 1.0 { 1.0 / scale } else { 1.0 };
    (0..n_out)
        .map(|i| {
            let center = scale * (i as f64 + 0.5);
            let lo = ((center - support + 0.5) as i64).max(0) as usize;
            let hi = ((center + support + 0.5) as i64)
                .min(n_in as i64)
                .max(lo as i64) as usize;
            let mut w: Vec<f64> = (lo..hi)
                .map(|j| f.eval((j as f64 - center + 0.5) * inv))
                .collect();
            let total: f64 = w.iter().sum();
            if total != 0.0 {
                w.iter_mut().for_each(|v| *v /= total);
            }
            (lo, w)
        })
        .collect()
}

/// `out[n, c] = Wy x[n, c] Wx^T` for the trailing two dimensions; `scales` are (H, W).
pub fn upsample_aa2d(x: &View, f: Filter, scales: [f64; 2], out: &View) -> Result<(), String> {
    let nd = x.ndim();
    let (h, w) = (x.shape[nd - 2], x.shape[nd - 1]);
    let (oh, ow) = (out.shape[nd - 2], out.shape[nd - 1]);
    let planes: usize = x.shape[..nd - 2].iter().product();
    let xs: Vec<f64> = load(x, DType::F64)?;
    let ty = taps(h, oh, scales[0], f);
    let tx = taps(w, ow, scales[1], f);
    let mut y = vec![0f64; planes * oh * ow];
    let mut rows = vec![0f64; h * ow];
    for p in 0..planes {
        let src = &xs[p * h * w..(p + 1) * h * w];
        // horizontal pass into [h, ow], then vertical into [oh, ow]
        for r in 0..h {
            for (o, (lo, wt)) in tx.iter().enumerate() {
                rows[r * ow + o] = wt
                    .iter()
                    .enumerate()
                    .map(|(k, c)| c * src[r * w + lo + k])
                    .sum();
            }
        }
        let dst = &mut y[p * oh * ow..(p + 1) * oh * ow];
        for (o, (lo, wt)) in ty.iter().enumerate() {
            for c in 0..ow {
                dst[o * ow + c] = wt
                    .iter()
                    .enumerate()
                    .map(|(k, v)| v * rows[(lo + k) * ow + c])
                    .sum();
            }
        }
    }
    store(y, DType::F64, out)
}

/// The gradient of [`upsample_aa2d`]: each output gradient spread back over its taps with
/// the same weights (`dx` has the input's shape).
pub fn upsample_aa2d_backward(
    dy: &View,
    f: Filter,
    scales: [f64; 2],
    dx: &View,
) -> Result<(), String> {
    let nd = dx.ndim();
    let (h, w) = (dx.shape[nd - 2], dx.shape[nd - 1]);
    let (oh, ow) = (dy.shape[nd - 2], dy.shape[nd - 1]);
    let planes: usize = dx.shape[..nd - 2].iter().product();
    let g: Vec<f64> = load(dy, DType::F64)?;
    let ty = taps(h, oh, scales[0], f);
    let tx = taps(w, ow, scales[1], f);
    let mut res = vec![0f64; planes * h * w];
    let mut rows = vec![0f64; h * ow];
    for p in 0..planes {
        let src = &g[p * oh * ow..(p + 1) * oh * ow];
        rows.iter_mut().for_each(|v| *v = 0.0);
        for (o, (lo, wt)) in ty.iter().enumerate() {
            for (k, v) in wt.iter().enumerate() {
                for c in 0..ow {
                    rows[(lo + k) * ow + c] += v * src[o * ow + c];
                }
            }
        }
        let dst = &mut res[p * h * w..(p + 1) * h * w];
        for r in 0..h {
            for (o, (lo, wt)) in tx.iter().enumerate() {
                let gv = rows[r * ow + o];
                for (k, c) in wt.iter().enumerate() {
                    dst[r * w + lo + k] += c * gv;
                }
            }
        }
    }
    store(res, DType::F64, dx)
}
