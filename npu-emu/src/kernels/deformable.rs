//! `DeformableOffsets` and `DeformableOffsetsGrad`: the sampling half of a deformable
//! convolution (v2, modulated), which torch_npu's `npu_deformable_conv2d` /
//! `npu_deformable_conv2dbk` run through aclop and follow with a plain convolution of stride
//! `ksize` (`Conv2D`, `Conv2DBackpropInput` / `Filter`).
//!
//! Tensors are NHWC: `x` `[N, H, W, C]`, `offsets` `[N, Ho, Wo, 3 * G * KH * KW]` whose last
//! axis is `(kind, group, kh, kw)` with kind 0 the x (width) offset, 1 the y (height) offset
//! and 2 the modulation mask (the layout op-plugin's `test_deformable_conv2d.py` checks the
//! hardware with), `y` `[N, Ho * KH, Wo * KW, C]`. The tap `(kh, kw)` of output `(ho, wo)`
//! samples `x` bilinearly at `(ho * sh - pad_top + kh * dh + oy,
//! wo * sw - pad_left + kw * dw + ox)`, each of the four neighbours outside the image
//! counting 0, times the mask; channel
//! `c` uses the offsets of group `c / (C / G)`. The gradient is the exact derivative of that
//! sum: `grad_x` scattered to the four neighbours, the x / y offsets' from the bilinear
//! weights' slopes and the mask's the sampled value.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::View;

/// The geometry of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub ksize: (usize, usize),
    pub strides: (usize, usize),
    /// (top, left)
    pub pads: (i64, i64),
    /// (bottom, right)
    pub pads_end: (i64, i64),
    pub dilations: (usize, usize),
    pub groups: usize,
}

/// The output extent of a convolution window along one axis: `(in + pads - ((k - 1) *
/// dilation + 1)) / stride + 1`, `None` when the window does not fit.
fn out_extent(
    input: usize,
    pads: (i64, i64),
    k: usize,
    dilation: usize,
    stride: usize,
) -> Option<usize> {
    let span = (k as i64 - 1) * dilation as i64 + 1;
    let room = input as i64 + pads.0 + pads.1 - span;
    (room >= 0 && stride > 0).then(|| (room / stride as i64) as usize + 1)
}

/// The shapes: (N, H, W, C, Ho, Wo), checked against `x` and `offsets`: offsets' Ho and Wo
/// are the convolution's output extent.
pub fn sizes(x: &[usize], offsets: &[usize], g: &Geometry) -> Result<[usize; 6], String> {
    let (kh, kw) = g.ksize;
    if x.len() != 4 || offsets.len() != 4 {
        return Err(format!(
            "x {x:?} and offsets {offsets:?} must be 4-D (NHWC)"
        ));
    }
    let taps = g
        .groups
        .checked_mul(kh)
        .and_then(|v| v.checked_mul(kw))
        .and_then(|v| v.checked_mul(3))
        .ok_or_else(|| {
            format!(
                "3 * deformable_groups {} * ksize {:?} overflows",
                g.groups, g.ksize
            )
        })?;
    let ho = out_extent(
        x[1],
        (g.pads.0, g.pads_end.0),
        kh,
        g.dilations.0,
        g.strides.0,
    );
    let wo = out_extent(
        x[2],
        (g.pads.1, g.pads_end.1),
        kw,
        g.dilations.1,
        g.strides.1,
    );
    let (Some(ho), Some(wo)) = (ho, wo) else {
        return Err(format!(
            "the window (ksize {:?}, dilations {:?}) does not fit x {x:?} with pads (top, left) \
             {:?}, (bottom, right) {:?}",
            g.ksize, g.dilations, g.pads, g.pads_end
        ));
    };
    if (offsets[1], offsets[2]) != (ho, wo) {
        return Err(format!(
            "offsets {offsets:?} must be [N, Ho, Wo, …] with the output extent Ho = {ho}, Wo = \
             {wo} of x {x:?} (ksize {:?}, strides {:?}, dilations {:?}, pads (top, left) {:?}, \
             (bottom, right) {:?})",
            g.ksize, g.strides, g.dilations, g.pads, g.pads_end
        ));
    }
    if offsets[0] != x[0] || offsets[3] != taps {
        return Err(format!(
            "offsets {offsets:?} must be [N, Ho, Wo, 3 * deformable_groups * kh * kw] = [{}, Ho, \
             Wo, {taps}] for x {x:?}",
            x[0]
        ));
    }
    if g.groups == 0 || !x[3].is_multiple_of(g.groups) {
        return Err(format!(
            "x's channels {} are not a multiple of deformable_groups {}",
            x[3], g.groups
        ));
    }
    Ok([x[0], x[1], x[2], x[3], offsets[1], offsets[2]])
}

/// One tap's sampling: the four neighbours (h, w, weight, d weight / d y, d weight / d x).
fn taps(ph: f64, pw: f64) -> [(f64, f64, f64, f64, f64); 4] {
    let (h0, w0) = (ph.floor(), pw.floor());
    let (lh, lw) = (ph - h0, pw - w0);
    [
        (h0, w0, (1.0 - lh) * (1.0 - lw), -(1.0 - lw), -(1.0 - lh)),
        (h0 + 1.0, w0, lh * (1.0 - lw), 1.0 - lw, -lh),
        (h0, w0 + 1.0, (1.0 - lh) * lw, -lw, 1.0 - lh),
        (h0 + 1.0, w0 + 1.0, lh * lw, lw, lh),
    ]
}

/// Visit every (n, ho, wo, group, kh, kw) tap: `f(n, ho, wo, i, j, group, ph, pw, [ox, oy,
/// mask] offset indices)`.
fn each_tap(
    d: [usize; 6],
    g: &Geometry,
    mut f: impl FnMut(usize, usize, usize, usize, usize, usize, f64, f64, [usize; 3]),
) {
    let [n, _, _, _, ho, wo] = d;
    let (kh, kw) = g.ksize;
    let gk = g.groups * kh * kw;
    for b in 0..n {
        for oh in 0..ho {
            for ow in 0..wo {
                let base = ((b * ho + oh) * wo + ow) * 3 * gk;
                for grp in 0..g.groups {
                    for i in 0..kh {
                        for j in 0..kw {
                            let k = grp * kh * kw + i * kw + j;
                            let ph = (oh * g.strides.0) as f64 - g.pads.0 as f64
                                + (i * g.dilations.0) as f64;
                            let pw = (ow * g.strides.1) as f64 - g.pads.1 as f64
                                + (j * g.dilations.1) as f64;
                            f(
                                b,
                                oh,
                                ow,
                                i,
                                j,
                                grp,
                                ph,
                                pw,
                                [base + k, base + gk + k, base + 2 * gk + k],
                            );
                        }
                    }
                }
            }
        }
    }
}

fn inside(h: f64, w: f64, hh: usize, ww: usize) -> Option<(usize, usize)> {
    (h >= 0.0 && w >= 0.0 && h < hh as f64 && w < ww as f64).then_some((h as usize, w as usize))
}

/// DeformableOffsets: `x`, `offsets` -> `y` `[N, Ho * KH, Wo * KW, C]`.
pub fn deformable_offsets(x: &View, offsets: &View, g: &Geometry, y: &View) -> Result<(), String> {
    let d = sizes(&x.shape, &offsets.shape, g)?;
    let [_, h, w, c, ho, wo] = d;
    let (kh, kw) = g.ksize;
    let want = [d[0], ho * kh, wo * kw, c];
    if y.shape != want {
        return Err(format!("y {:?} must be {want:?}", y.shape));
    }
    let xs: Vec<f64> = load(x, DType::F64)?;
    let off: Vec<f64> = load(offsets, DType::F64)?;
    let cg = c / g.groups;
    let mut out = vec![0f64; y.numel()];
    each_tap(d, g, |b, oh, ow, i, j, grp, ph, pw, k| {
        let (sy, sx) = (ph + off[k[1]], pw + off[k[0]]);
        let mask = off[k[2]];
        let o = ((b * ho * kh + oh * kh + i) * wo * kw + ow * kw + j) * c + grp * cg;
        for (th, tw, wt, _, _) in taps(sy, sx) {
            if let Some((hi, wi)) = inside(th, tw, h, w) {
                let src = ((b * h + hi) * w + wi) * c + grp * cg;
                for ch in 0..cg {
                    out[o + ch] += mask * wt * xs[src + ch];
                }
            }
        }
    });
    store(out, DType::F64, y)
}

/// DeformableOffsetsGrad: `grad` (y's shape), `x`, `offsets` -> `grad_x`, `grad_offsets`.
pub fn deformable_offsets_grad(
    grad: &View,
    x: &View,
    offsets: &View,
    g: &Geometry,
    grad_x: &View,
    grad_offsets: &View,
) -> Result<(), String> {
    let d = sizes(&x.shape, &offsets.shape, g)?;
    let [_, h, w, c, ho, wo] = d;
    let (kh, kw) = g.ksize;
    let want = [d[0], ho * kh, wo * kw, c];
    if grad.shape != want || grad_x.shape != x.shape || grad_offsets.shape != offsets.shape {
        return Err(format!(
            "grad {:?} must be {want:?}, grad_X {:?} x's shape {:?} and grad_offsets {:?} \
             offsets' shape {:?}",
            grad.shape, grad_x.shape, x.shape, grad_offsets.shape, offsets.shape
        ));
    }
    let gy: Vec<f64> = load(grad, DType::F64)?;
    let xs: Vec<f64> = load(x, DType::F64)?;
    let off: Vec<f64> = load(offsets, DType::F64)?;
    let cg = c / g.groups;
    let mut gx = vec![0f64; xs.len()];
    let mut go = vec![0f64; off.len()];
    each_tap(d, g, |b, oh, ow, i, j, grp, ph, pw, k| {
        let (sy, sx) = (ph + off[k[1]], pw + off[k[0]]);
        let mask = off[k[2]];
        let o = ((b * ho * kh + oh * kh + i) * wo * kw + ow * kw + j) * c + grp * cg;
        let (mut dval_y, mut dval_x, mut val) = (0.0, 0.0, 0.0);
        for (th, tw, wt, dwy, dwx) in taps(sy, sx) {
            if let Some((hi, wi)) = inside(th, tw, h, w) {
                let src = ((b * h + hi) * w + wi) * c + grp * cg;
                for ch in 0..cg {
                    let gyv = gy[o + ch];
                    gx[src + ch] += gyv * mask * wt;
                    val += gyv * wt * xs[src + ch];
                    dval_y += gyv * dwy * xs[src + ch];
                    dval_x += gyv * dwx * xs[src + ch];
                }
            }
        }
        go[k[0]] += mask * dval_x;
        go[k[1]] += mask * dval_y;
        go[k[2]] += val;
    });
    store(gx, DType::F64, grad_x)?;
    store(go, DType::F64, grad_offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(v: &mut [f64], shape: &[usize]) -> View {
        View::of_slice(v, DType::F64, shape)
    }

    /// A zero offset and a unit mask samples the plain im2col patches; the gradient matches
    /// central finite differences of the forward sum.
    #[test]
    fn offsets_forward_and_gradient_agree() {
        let g = Geometry {
            ksize: (2, 2),
            strides: (1, 1),
            pads: (0, 0),
            pads_end: (0, 0),
            dilations: (1, 1),
            groups: 1,
        };
        let mut x: Vec<f64> = (0..18).map(|v| v as f64 * 0.37 - 2.0).collect(); // [1, 3, 3, 2]
        let mut off = vec![0f64; 4 * 12]; // [1, 2, 2, 12]
        for t in 0..4 {
            for k in 0..4 {
                off[t * 12 + 8 + k] = 1.0;
            }
        }
        let mut y = vec![0f64; 32];
        deformable_offsets(
            &view(&mut x, &[1, 3, 3, 2]),
            &view(&mut off, &[1, 2, 2, 12]),
            &g,
            &view(&mut y, &[1, 4, 4, 2]),
        )
        .unwrap();
        // output (ho 1, wo 0) tap (1, 1) = x[2, 1]
        assert_eq!(y[(3 * 4 + 1) * 2], x[(2 * 3 + 1) * 2]);
        // perturb: fractional offsets, a mask below 1, taps falling outside
        for (k, v) in off.iter_mut().enumerate() {
            *v = if k % 12 >= 8 {
                0.3 + 0.05 * (k % 5) as f64
            } else {
                ((k * 7) % 11) as f64 * 0.23 - 1.1
            };
        }
        let gy: Vec<f64> = (0..32).map(|v| ((v * 5) % 7) as f64 * 0.1 - 0.3).collect();
        let loss = |x: &mut Vec<f64>, off: &mut Vec<f64>| {
            let mut y = vec![0f64; 32];
            deformable_offsets(
                &view(x, &[1, 3, 3, 2]),
                &view(off, &[1, 2, 2, 12]),
                &g,
                &view(&mut y, &[1, 4, 4, 2]),
            )
            .unwrap();
            y.iter().zip(&gy).map(|(a, b)| a * b).sum::<f64>()
        };
        let (mut gx, mut go) = (vec![0f64; 18], vec![0f64; 48]);
        deformable_offsets_grad(
            &view(&mut gy.clone(), &[1, 4, 4, 2]),
            &view(&mut x, &[1, 3, 3, 2]),
            &view(&mut off, &[1, 2, 2, 12]),
            &g,
            &view(&mut gx, &[1, 3, 3, 2]),
            &view(&mut go, &[1, 2, 2, 12]),
        )
        .unwrap();
        let e = 1e-6;
        for k in 0..18 {
            let (mut a, mut b) = (x.clone(), x.clone());
            a[k] += e;
            b[k] -= e;
            let fd = (loss(&mut a, &mut off.clone()) - loss(&mut b, &mut off.clone())) / (2.0 * e);
            assert!((fd - gx[k]).abs() < 1e-5, "x {k}: {fd} vs {}", gx[k]);
        }
        for k in 0..48 {
            let (mut a, mut b) = (off.clone(), off.clone());
            a[k] += e;
            b[k] -= e;
            let fd = (loss(&mut x.clone(), &mut a) - loss(&mut x.clone(), &mut b)) / (2.0 * e);
            assert!((fd - go[k]).abs() < 1e-5, "offset {k}: {fd} vs {}", go[k]);
        }
    }
}
