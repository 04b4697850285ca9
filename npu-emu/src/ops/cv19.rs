//! Vision operators of CANN's ops-cv documentation: RoiAlign (ONNX opset 10 and torchvision
//! forms, with the torchvision backward), IoU / IoF of box sets, CIoU, ONNX
//! NonMaxSuppression and Resize (TensorFlow's legacy nearest and bilinear resizing, no
//! half-pixel centres). Everything is computed in float64 over dense copies of the inputs
//! and rounded once into the outputs.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// How RoiAlign pools the samples of a bin.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pool {
    Avg,
    Max,
}

/// The geometry of a RoiAlign call.
#[derive(Clone, Copy, Debug)]
pub struct Roi {
    pub pooled_h: usize,
    pub pooled_w: usize,
    pub scale: f64,
    pub sampling: usize,
    pub aligned: bool,
}

/// Four (flat index, weight) pairs of one bilinear sample.
pub(crate) type Taps = [(usize, f64); 4];

/// The bilinear taps of point (y, x) in an `h` x `w` map: four (index, weight) pairs, none
/// outside `[-1, h] x [-1, w]` (torchvision's rule).
pub(crate) fn taps(y: f64, x: f64, h: usize, w: usize) -> Option<Taps> {
    if y < -1.0 || y > h as f64 || x < -1.0 || x > w as f64 {
        return None;
    }
    let (mut y, mut x) = (y.max(0.0), x.max(0.0));
    let mut y0 = y.floor() as usize;
    let mut x0 = x.floor() as usize;
    let y1;
    let x1;
    if y0 >= h - 1 {
        y0 = h - 1;
        y1 = h - 1;
        y = y0 as f64;
    } else {
        y1 = y0 + 1;
    }
    if x0 >= w - 1 {
        x0 = w - 1;
        x1 = w - 1;
        x = x0 as f64;
    } else {
        x1 = x0 + 1;
    }
    let (ly, lx) = (y - y0 as f64, x - x0 as f64);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    Some([
        (y0 * w + x0, hy * hx),
        (y0 * w + x1, hy * lx),
        (y1 * w + x0, ly * hx),
        (y1 * w + x1, ly * lx),
    ])
}

/// Visit every sample of every bin of one RoI: `f(bin, taps, count)` with the bin index
/// `ph * pooled_w + pw` and the number of samples of that bin.
fn each_sample(
    g: &Roi,
    bx: [f64; 4],
    h: usize,
    w: usize,
    f: &mut dyn FnMut(usize, Option<Taps>, usize),
) {
    let off = if g.aligned { 0.5 } else { 0.0 };
    let x1 = bx[0] * g.scale - off;
    let y1 = bx[1] * g.scale - off;
    let x2 = bx[2] * g.scale - off;
    let y2 = bx[3] * g.scale - off;
    let (mut rw, mut rh) = (x2 - x1, y2 - y1);
    if !g.aligned {
        rw = rw.max(1.0);
        rh = rh.max(1.0);
    }
    let bh = rh / g.pooled_h as f64;
    let bw = rw / g.pooled_w as f64;
    let gh = if g.sampling > 0 {
        g.sampling
    } else {
        (rh / g.pooled_h as f64).ceil().max(0.0) as usize
    };
    let gw = if g.sampling > 0 {
        g.sampling
    } else {
        (rw / g.pooled_w as f64).ceil().max(0.0) as usize
    };
    let count = (gh * gw).max(1);
    for ph in 0..g.pooled_h {
        for pw in 0..g.pooled_w {
            let bin = ph * g.pooled_w + pw;
            for iy in 0..gh {
                let y = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gh as f64;
                for ix in 0..gw {
                    let x = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gw as f64;
                    f(bin, taps(y, x, h, w), count);
                }
            }
        }
    }
}

/// RoiAlign forward: `x` `[N, C, H, W]`, `boxes[k]` the (x1, y1, x2, y2) of RoI k on image
/// `batch[k]`; `out` `[K, C, pooled_h, pooled_w]`. Average pooling divides by the sample
/// count (samples outside the map count as 0); max pooling takes the largest interpolated
/// sample (0 for a bin without samples).
pub fn roi_align(
    x: &View,
    boxes: &[[f64; 4]],
    batch: &[i64],
    g: Roi,
    mode: Pool,
    out: &View,
) -> Result<(), String> {
    let xs: Vec<f64> = load(x, DType::F64)?;
    let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let bins = g.pooled_h * g.pooled_w;
    let mut o = vec![0f64; boxes.len() * c * bins];
    for (k, bx) in boxes.iter().enumerate() {
        let b = batch[k];
        if b < 0 || b as usize >= n {
            return Err(format!("RoI {k} names image {b}, outside the batch of {n}"));
        }
        for ch in 0..c {
            let plane = &xs[((b as usize) * c + ch) * h * w..][..h * w];
            let dst = &mut o[(k * c + ch) * bins..][..bins];
            let mut best = vec![f64::NEG_INFINITY; bins];
            each_sample(&g, *bx, h, w, &mut |bin, t, count| {
                let v = t.map_or(0.0, |t| t.iter().map(|&(i, wt)| plane[i] * wt).sum());
                match mode {
                    Pool::Avg => dst[bin] += v / count as f64,
                    Pool::Max => best[bin] = best[bin].max(v),
                }
            });
            if mode == Pool::Max {
                for (d, b) in dst.iter_mut().zip(best) {
                    *d = if b == f64::NEG_INFINITY { 0.0 } else { b };
                }
            }
        }
    }
    store(o, DType::F64, out)
}

/// The gradient of average [`roi_align`] with respect to its input: each sample spreads
/// `grad / count` over its four taps. `grad_input` is `[N, C, H, W]`.
pub fn roi_align_backward(
    grad: &View,
    boxes: &[[f64; 4]],
    batch: &[i64],
    g: Roi,
    grad_input: &View,
) -> Result<(), String> {
    let gs: Vec<f64> = load(grad, DType::F64)?;
    let s = &grad_input.shape;
    let (n, c, h, w) = (s[0], s[1], s[2], s[3]);
    let bins = g.pooled_h * g.pooled_w;
    let mut gi = vec![0f64; n * c * h * w];
    for (k, bx) in boxes.iter().enumerate() {
        let b = batch[k];
        if b < 0 || b as usize >= n {
            return Err(format!("RoI {k} names image {b}, outside the batch of {n}"));
        }
        for ch in 0..c {
            let src = &gs[(k * c + ch) * bins..][..bins];
            let plane = &mut gi[((b as usize) * c + ch) * h * w..][..h * w];
            each_sample(&g, *bx, h, w, &mut |bin, t, count| {
                if let Some(t) = t {
                    for (i, wt) in t {
                        plane[i] += src[bin] * wt / count as f64;
                    }
                }
            });
        }
    }
    store(gi, DType::F64, grad_input)
}

/// IoU (or IoF: intersection over the ground-truth area) of boxes `[x0, y0, x1, y1]`; every
/// side length gets `eps`.
fn overlap(a: &[f64], b: &[f64], eps: f64, iof: bool) -> f64 {
    let area = |q: &[f64]| (q[2] - q[0] + eps) * (q[3] - q[1] + eps);
    let iw = (a[2].min(b[2]) - a[0].max(b[0]) + eps).max(0.0);
    let ih = (a[3].min(b[3]) - a[1].max(b[1]) + eps).max(0.0);
    let inter = iw * ih;
    if iof {
        inter / area(b)
    } else {
        inter / (area(a) + area(b) - inter)
    }
}

/// aclnnIou: `b` `[m, 4]`, `g` `[n, 4]`; `out` `[m, n]` (every pair) or `[m, 1]` (aligned:
/// row i with row i).
pub fn iou(
    b: &View,
    g: &View,
    iof: bool,
    eps: f64,
    aligned: bool,
    out: &View,
) -> Result<(), String> {
    let bs: Vec<f64> = load(b, DType::F64)?;
    let gs: Vec<f64> = load(g, DType::F64)?;
    let (m, n) = (b.shape[0], g.shape[0]);
    let o: Vec<f64> = if aligned {
        (0..m)
            .map(|i| overlap(&bs[i * 4..i * 4 + 4], &gs[i * 4..i * 4 + 4], eps, iof))
            .collect()
    } else {
        (0..m * n)
            .map(|p| {
                let (i, j) = (p / n, p % n);
                overlap(&bs[i * 4..i * 4 + 4], &gs[j * 4..j * 4 + 4], eps, iof)
            })
            .collect()
    };
    store(o, DType::F64, out)
}

/// CIoU of column `i` of `b` and of `g` (`[4, n]` each, `[x, y, w, h]` with `trans`, else
/// `[x0, y0, x1, y1]`): `IoU - ρ²/c² - α v` with `v = 4/π² (atan(wg/hg) - atan(wp/hp))²`,
/// `α = v / (1 - IoU + v)`; `atan_sub` receives `atan(wg/hg) - atan(wp/hp)`. A tiny epsilon
/// keeps the divisions finite for degenerate boxes.
pub fn ciou(
    b: &View,
    g: &View,
    trans: bool,
    iof: bool,
    out: &View,
    atan_sub: &View,
) -> Result<(), String> {
    const EPS: f64 = 1e-9;
    let bs: Vec<f64> = load(b, DType::F64)?;
    let gs: Vec<f64> = load(g, DType::F64)?;
    let n = b.shape[1];
    let corners = |v: &[f64], i: usize| -> [f64; 4] {
        let c = [v[i], v[n + i], v[2 * n + i], v[3 * n + i]];
        if trans {
            [
                c[0] - c[2] / 2.0,
                c[1] - c[3] / 2.0,
                c[0] + c[2] / 2.0,
                c[1] + c[3] / 2.0,
            ]
        } else {
            c
        }
    };
    let (mut o, mut at) = (vec![0f64; n], vec![0f64; n]);
    for i in 0..n {
        let p = corners(&bs, i);
        let q = corners(&gs, i);
        let (wp, hp) = (p[2] - p[0], p[3] - p[1]);
        let (wg, hg) = (q[2] - q[0], q[3] - q[1]);
        let iw = (p[2].min(q[2]) - p[0].max(q[0])).max(0.0);
        let ih = (p[3].min(q[3]) - p[1].max(q[1])).max(0.0);
        let inter = iw * ih;
        let iou = if iof {
            inter / (wg * hg + EPS)
        } else {
            inter / (wp * hp + wg * hg - inter + EPS)
        };
        let cw = p[2].max(q[2]) - p[0].min(q[0]);
        let ch = p[3].max(q[3]) - p[1].min(q[1]);
        let c2 = cw * cw + ch * ch + EPS;
        let rho2 =
            ((q[0] + q[2] - p[0] - p[2]).powi(2) + (q[1] + q[3] - p[1] - p[3]).powi(2)) / 4.0;
        let d = (wg / (hg + EPS)).atan() - (wp / (hp + EPS)).atan();
        let v = 4.0 / (std::f64::consts::PI * std::f64::consts::PI) * d * d;
        let alpha = v / (1.0 - iou + v + EPS);
        o[i] = iou - rho2 / c2 - alpha * v;
        at[i] = d;
    }
    store(o, DType::F64, out)?;
    store(at, DType::F64, atan_sub)
}

/// ONNX NonMaxSuppression: for each batch and class, boxes by descending score (ties by
/// index), skipping those at or below `score_thr` and those whose IoU with a kept box
/// exceeds `iou_thr`, at most `max_per_class`. Rows `[batch, class, box]` go to `out`
/// (`[rows, 3]`) in (batch, class, rank) order; the rows left over are -1.
pub fn nms(
    boxes: &View,
    scores: &View,
    max_per_class: usize,
    iou_thr: f64,
    score_thr: f64,
    center: bool,
    out: &View,
) -> Result<(), String> {
    let bs: Vec<f64> = load(boxes, DType::F64)?;
    let ss: Vec<f64> = load(scores, DType::F64)?;
    let (nb, nc, ns) = (scores.shape[0], scores.shape[1], scores.shape[2]);
    let rows = out.shape[0];
    let mut o = vec![-1i64; rows * 3];
    let mut r = 0usize;
    let corner = |k: usize, i: usize| -> [f64; 4] {
        let v = &bs[(k * ns + i) * 4..][..4];
        if center {
            [
                v[0] - v[2] / 2.0,
                v[1] - v[3] / 2.0,
                v[0] + v[2] / 2.0,
                v[1] + v[3] / 2.0,
            ]
        } else {
            // (y1, x1, y2, x2), either corner order
            [
                v[1].min(v[3]),
                v[0].min(v[2]),
                v[1].max(v[3]),
                v[0].max(v[2]),
            ]
        }
    };
    for k in 0..nb {
        for c in 0..nc {
            let sc = &ss[(k * nc + c) * ns..][..ns];
            let mut order: Vec<usize> = (0..ns).filter(|&i| sc[i] > score_thr).collect();
            order.sort_by(|&a, &b| sc[b].total_cmp(&sc[a]).then(a.cmp(&b)));
            let mut kept: Vec<usize> = Vec::new();
            for i in order {
                if kept.len() >= max_per_class {
                    break;
                }
                let bi = corner(k, i);
                if kept
                    .iter()
                    .all(|&j| overlap(&bi, &corner(k, j), 0.0, false) <= iou_thr)
                {
                    kept.push(i);
                }
            }
            for i in kept {
                if r < rows {
                    o[r * 3..r * 3 + 3].copy_from_slice(&[k as i64, c as i64, i as i64]);
                }
                r += 1;
            }
        }
    }
    store(o, DType::I64, out)
}

/// Resize of the last two dimensions of an NCHW tensor, TensorFlow's legacy rule (no
/// half-pixel centres, corners not aligned): output pixel `d` reads source position
/// `d * in / out`; nearest takes its floor, bilinear interpolates between the floor and the
/// next pixel (clamped).
pub fn resize(x: &View, bilinear: bool, out: &View) -> Result<(), String> {
    let xs: Vec<f64> = load(x, DType::F64)?;
    let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let (oh, ow) = (out.shape[2], out.shape[3]);
    let (sy, sx) = (h as f64 / oh as f64, w as f64 / ow as f64);
    let mut o = vec![0f64; n * c * oh * ow];
    for p in 0..n * c {
        let src = &xs[p * h * w..][..h * w];
        let dst = &mut o[p * oh * ow..][..oh * ow];
        for i in 0..oh {
            let fy = i as f64 * sy;
            for j in 0..ow {
                let fx = j as f64 * sx;
                dst[i * ow + j] = if bilinear {
                    let (y0, x0) = (fy.floor() as usize, fx.floor() as usize);
                    let (y0, x0) = (y0.min(h - 1), x0.min(w - 1));
                    let (y1, x1) = ((y0 + 1).min(h - 1), (x0 + 1).min(w - 1));
                    let (ly, lx) = (fy - y0 as f64, fx - x0 as f64);
                    let top = src[y0 * w + x0] * (1.0 - lx) + src[y0 * w + x1] * lx;
                    let bot = src[y1 * w + x0] * (1.0 - lx) + src[y1 * w + x1] * lx;
                    top * (1.0 - ly) + bot * ly
                } else {
                    let y = (fy.floor() as usize).min(h - 1);
                    let xx = (fx.floor() as usize).min(w - 1);
                    src[y * w + xx]
                };
            }
        }
    }
    store(o, DType::F64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_of_boxes() {
        let a = [0.0, 0.0, 2.0, 2.0];
        let b = [1.0, 1.0, 3.0, 3.0];
        assert!((overlap(&a, &b, 0.0, false) - 1.0 / 7.0).abs() < 1e-12);
        assert!((overlap(&a, &b, 0.0, true) - 0.25).abs() < 1e-12);
    }
}
