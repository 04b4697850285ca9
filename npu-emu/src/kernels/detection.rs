//! Object-detection box operators of the single-operator API, which torch_npu implements with
//! aclop only: `BoundingBoxEncode` / `BoundingBoxDecode` (`torch_npu.npu_bounding_box_encode`
//! / `decode`), `YoloBoxesEncode` (`npu_yolo_boxes_encode`), `AnchorResponseFlags`
//! (`npu_anchor_response_flags`) and `BatchMultiClassNonMaxSuppression` (`npu_batch_nms`).
//!
//! Boxes are rows of four `(x1, y1, x2, y2)` (BatchMultiClassNonMaxSuppression:
//! `(y1, x1, y2, x2)`). The formulas, in f64:
//! - encode (mmdetection's legacy `bbox2delta`, widths counted with `+ 1` as CANN computes:
//!   MindSpore's `BoundingBoxEncode` example gives `[-1, 0.25, 0, 0.4055]` for the anchor
//!   `[2, 2, 2, 3]` and the box `[1, 2, 1, 4]`): `pw = x2 - x1 + 1`, `px = (x1 + x2) / 2`,
//!   `dx = (gx - px) / pw`, `dw = ln|gw / pw|`, each then `(d - mean) / std` (the absolute
//!   value: torch_npu's documented example encodes the inverted box `[7, 8, 9, 6]` against
//!   `[3, 4, 5, 6]` with stds 0.2 to `dh = -5.4922 = ln(1/3) / 0.2`);
//! - decode (legacy `delta2bbox`): `d = delta * std + mean`, `dw`, `dh` clamped to
//!   `±|ln(wh_ratio_clip)|`, `gw = pw e^dw`, `gx = px + pw dx`, the box `(gx - gw/2 + 0.5,
//!   gy - gh/2 + 0.5, gx + gw/2 - 0.5, gy + gh/2 - 0.5)` clipped to `[0, max_shape[1] - 1]`
//!   (x) and `[0, max_shape[0] - 1]` (y) (torch_npu's documented example: `[2.5, 6.5, 9, 9]`);
//! - YOLO encode (mmdetection's `YOLOBBoxCoder.encode`, eps 1e-6): `(clamp((gx - px) /
//!   stride + 0.5, eps, 1 - eps), same for y, ln(max(gw / pw, eps)), ln(max(gh / ph, eps)))`
//!   without the `+ 1`;
//! - anchor response flags (mmdetection's `responsible_flags`, as CANN's golden): the grid
//!   cell `(floor(cx / stride[0]), floor(cy / stride[1]))` of each box's centre, computed in
//!   f32 and clamped into the feature map (a NaN / infinite centre counts as 0), is flagged;
//!   the flags `[H * W]` are repeated for each base anchor (UINT8 `[H * W * A]`);
//! - batch NMS (CANN's `BatchMultiClassNonMaxSuppression`): per batch and class, greedy NMS
//!   over the boxes whose score is strictly above `score_threshold` and whose extent is
//!   positive (`y2 > y1` and `x2 > x1`: an empty or inverted box is never a candidate, as the
//!   operator's reference in CANN's ops-cv has it) (the highest score first, the lower index
//!   on a tie), a box suppressed when its IoU with a kept one is strictly above
//!   `iou_threshold` (IoU = inter / max(area_a + area_b - inter, 1e-12), areas as given), at
//!   most `max_size_per_class` per class; then the kept detections of every class, class by
//!   class, ordered by score (stable), the first `max_total_size` written and the rest zero.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::View;

fn rows4(v: &View, what: &str) -> Result<usize, String> {
    if v.shape.len() != 2 || v.shape[1] != 4 {
        return Err(format!("{what} {:?} must be [n, 4]", v.shape));
    }
    Ok(v.shape[0])
}

/// BoundingBoxEncode: `anchor`, `gt` `[n, 4]` -> `out` `[n, 4]` deltas.
pub fn bbox_encode(
    anchor: &View,
    gt: &View,
    means: [f64; 4],
    stds: [f64; 4],
    out: &View,
) -> Result<(), String> {
    let n = rows4(anchor, "anchor_box")?;
    if rows4(gt, "ground_truth_box")? != n {
        return Err(format!(
            "anchor_box {:?} and ground_truth_box {:?} must hold as many boxes",
            anchor.shape, gt.shape
        ));
    }
    let a: Vec<f64> = load(anchor, DType::F64)?;
    let g: Vec<f64> = load(gt, DType::F64)?;
    let mut o = vec![0f64; 4 * n];
    for i in 0..n {
        let (a, g) = (&a[4 * i..4 * i + 4], &g[4 * i..4 * i + 4]);
        let (pw, ph) = (a[2] - a[0] + 1.0, a[3] - a[1] + 1.0);
        let (px, py) = ((a[0] + a[2]) * 0.5, (a[1] + a[3]) * 0.5);
        let (gw, gh) = (g[2] - g[0] + 1.0, g[3] - g[1] + 1.0);
        let (gx, gy) = ((g[0] + g[2]) * 0.5, (g[1] + g[3]) * 0.5);
        let d = [
            (gx - px) / pw,
            (gy - py) / ph,
            (gw / pw).abs().ln(),
            (gh / ph).abs().ln(),
        ];
        for k in 0..4 {
            o[4 * i + k] = (d[k] - means[k]) / stds[k];
        }
    }
    store(o, DType::F64, out)
}

/// BoundingBoxDecode: `rois`, `deltas` `[n, 4]` -> `out` `[n, 4]` boxes; `max_shape` (h, w)
/// clips them when given.
pub fn bbox_decode(
    rois: &View,
    deltas: &View,
    means: [f64; 4],
    stds: [f64; 4],
    max_shape: Option<(f64, f64)>,
    wh_ratio_clip: f64,
    out: &View,
) -> Result<(), String> {
    let n = rows4(rois, "rois")?;
    if rows4(deltas, "deltas")? != n {
        return Err(format!(
            "rois {:?} and deltas {:?} must hold as many boxes",
            rois.shape, deltas.shape
        ));
    }
    let r: Vec<f64> = load(rois, DType::F64)?;
    let d: Vec<f64> = load(deltas, DType::F64)?;
    let max_ratio = wh_ratio_clip.ln().abs();
    let mut o = vec![0f64; 4 * n];
    for i in 0..n {
        let (r, d) = (&r[4 * i..4 * i + 4], &d[4 * i..4 * i + 4]);
        let dd: [f64; 4] = std::array::from_fn(|k| d[k] * stds[k] + means[k]);
        let (dw, dh) = (
            dd[2].clamp(-max_ratio, max_ratio),
            dd[3].clamp(-max_ratio, max_ratio),
        );
        let (pw, ph) = (r[2] - r[0] + 1.0, r[3] - r[1] + 1.0);
        let (px, py) = ((r[0] + r[2]) * 0.5, (r[1] + r[3]) * 0.5);
        let (gw, gh) = (pw * dw.exp(), ph * dh.exp());
        let (gx, gy) = (px + pw * dd[0], py + ph * dd[1]);
        let mut b = [
            gx - gw * 0.5 + 0.5,
            gy - gh * 0.5 + 0.5,
            gx + gw * 0.5 - 0.5,
            gy + gh * 0.5 - 0.5,
        ];
        if let Some((h, w)) = max_shape {
            for (k, v) in b.iter_mut().enumerate() {
                let hi = if k % 2 == 0 { w - 1.0 } else { h - 1.0 };
                *v = v.max(0.0).min(hi);
            }
        }
        o[4 * i..4 * i + 4].copy_from_slice(&b);
    }
    store(o, DType::F64, out)
}

/// YoloBoxesEncode: `anchors`, `gt` `[n, 4]`, `stride` `[n]` -> `out` `[n, 4]`.
pub fn yolo_encode(anchors: &View, gt: &View, stride: &View, out: &View) -> Result<(), String> {
    const EPS: f64 = 1e-6;
    let n = rows4(anchors, "anchor_boxes")?;
    if rows4(gt, "gt_bboxes")? != n || stride.numel() != n {
        return Err(format!(
            "anchor_boxes {:?}, gt_bboxes {:?} and stride {:?} must hold as many boxes",
            anchors.shape, gt.shape, stride.shape
        ));
    }
    let a: Vec<f64> = load(anchors, DType::F64)?;
    let g: Vec<f64> = load(gt, DType::F64)?;
    let s: Vec<f64> = load(stride, DType::F64)?;
    let mut o = vec![0f64; 4 * n];
    for i in 0..n {
        let (a, g) = (&a[4 * i..4 * i + 4], &g[4 * i..4 * i + 4]);
        let (pw, ph) = (a[2] - a[0], a[3] - a[1]);
        let (px, py) = ((a[0] + a[2]) * 0.5, (a[1] + a[3]) * 0.5);
        let (gw, gh) = (g[2] - g[0], g[3] - g[1]);
        let (gx, gy) = ((g[0] + g[2]) * 0.5, (g[1] + g[3]) * 0.5);
        o[4 * i] = ((gx - px) / s[i] + 0.5).clamp(EPS, 1.0 - EPS);
        o[4 * i + 1] = ((gy - py) / s[i] + 0.5).clamp(EPS, 1.0 - EPS);
        o[4 * i + 2] = (gw / pw).max(EPS).ln();
        o[4 * i + 3] = (gh / ph).max(EPS).ln();
    }
    store(o, DType::F64, out)
}

/// AnchorResponseFlags: `gt` `[n, 4]` -> `out` UINT8 `[h * w * anchors]`.
pub fn anchor_response_flags(
    gt: &View,
    featmap: (usize, usize),
    strides: (f64, f64),
    anchors: usize,
    out: &View,
) -> Result<(), String> {
    let n = rows4(gt, "gt_bboxes")?;
    let (h, w) = featmap;
    if out.numel() != h * w * anchors {
        return Err(format!(
            "the flags {:?} must hold featmap_size h * w * num_base_anchors = {} values",
            out.shape,
            h * w * anchors
        ));
    }
    // in f32, as the operator computes: a centre on a cell border stays on the same side
    let g: Vec<f32> = load(gt, DType::F32)?;
    let mut grid = vec![0u8; h * w];
    let cell = |c: f32, stride: f32, size: usize| -> usize {
        if !c.is_finite() {
            return 0;
        }
        let v = (c / stride).floor();
        if v <= 0.0 || v.is_nan() {
            0
        } else if v >= size as f32 {
            size.saturating_sub(1)
        } else {
            v as usize
        }
    };
    let (sx, sy) = (strides.0 as f32, strides.1 as f32);
    for b in g.chunks(4).take(n) {
        let (cx, cy) = ((b[0] + b[2]) * 0.5, (b[1] + b[3]) * 0.5);
        let (gx, gy) = (cell(cx, sx, w), cell(cy, sy, h));
        if h * w > 0 {
            grid[gy * w + gx] = 1;
        }
    }
    let flags: Vec<f64> = grid
        .iter()
        .flat_map(|&f| std::iter::repeat_n(f64::from(f), anchors))
        .collect();
    store(flags, DType::F64, out)
}

/// The settings of a BatchMultiClassNonMaxSuppression call.
#[derive(Clone, Copy, Debug)]
pub struct BatchNms {
    pub score_threshold: f64,
    pub iou_threshold: f64,
    pub max_per_class: usize,
    pub max_total: usize,
    /// boxes laid out `[B, q, 4, N]` instead of `[B, N, q, 4]`.
    pub transpose_box: bool,
}

fn iou_yxyx(a: &[f64; 4], b: &[f64; 4]) -> f64 {
    let ih = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let iw = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = ih * iw;
    let area = |v: &[f64; 4]| (v[2] - v[0]) * (v[3] - v[1]);
    inter / (area(a) + area(b) - inter).max(1e-12)
}

/// BatchMultiClassNonMaxSuppression: `boxes` `[B, N, q, 4]` (or `[B, q, 4, N]`), `scores`
/// `[B, N, C]`, q 1 or C; outputs `[B, M, 4]`, `[B, M]`, `[B, M]` (classes as floats) and
/// `num` INT32 `[B]`.
pub fn batch_nms(boxes: &View, scores: &View, p: &BatchNms, out: [&View; 4]) -> Result<(), String> {
    let (b, n, c) = (scores.shape[0], scores.shape[1], scores.shape[2]);
    let q = if p.transpose_box {
        boxes.shape[1]
    } else {
        boxes.shape[2]
    };
    let bx: Vec<f64> = load(boxes, DType::F64)?;
    let sc: Vec<f64> = load(scores, DType::F64)?;
    let m = p.max_total;
    let (mut ob, mut os, mut oc) = (vec![0f64; b * m * 4], vec![0f64; b * m], vec![0f64; b * m]);
    let mut on = vec![0f64; b];
    let coord = |bi: usize, i: usize, cls: usize, k: usize| -> f64 {
        let qi = if q == 1 { 0 } else { cls };
        if p.transpose_box {
            bx[((bi * q + qi) * 4 + k) * n + i]
        } else {
            bx[((bi * n + i) * q + qi) * 4 + k]
        }
    };
    for bi in 0..b {
        // (score, class, box) of each class's kept boxes, class by class
        let mut kept: Vec<(f64, usize, [f64; 4])> = Vec::new();
        for cls in 0..c {
            // above the threshold (never NaN) and of positive extent
            let mut cand: Vec<usize> = (0..n)
                .filter(|&i| {
                    sc[(bi * n + i) * c + cls] > p.score_threshold
                        && coord(bi, i, cls, 2) > coord(bi, i, cls, 0)
                        && coord(bi, i, cls, 3) > coord(bi, i, cls, 1)
                })
                .collect();
            // descending score, the lower index first on a tie (a stable sort)
            cand.sort_by(|&x, &y| {
                let (sx, sy) = (sc[(bi * n + x) * c + cls], sc[(bi * n + y) * c + cls]);
                sy.total_cmp(&sx)
            });
            let mut sel: Vec<[f64; 4]> = Vec::new();
            for i in cand {
                if sel.len() >= p.max_per_class {
                    break;
                }
                let bb: [f64; 4] = std::array::from_fn(|k| coord(bi, i, cls, k));
                if sel.iter().all(|s| iou_yxyx(s, &bb) <= p.iou_threshold) {
                    sel.push(bb);
                    kept.push((sc[(bi * n + i) * c + cls], cls, bb));
                }
            }
        }
        kept.sort_by(|x, y| y.0.total_cmp(&x.0));
        let k = kept.len().min(m);
        for (j, (s, cls, bb)) in kept.into_iter().take(k).enumerate() {
            ob[(bi * m + j) * 4..(bi * m + j) * 4 + 4].copy_from_slice(&bb);
            os[bi * m + j] = s;
            oc[bi * m + j] = cls as f64;
        }
        on[bi] = k as f64;
    }
    store(ob, DType::F64, out[0])?;
    store(os, DType::F64, out[1])?;
    store(oc, DType::F64, out[2])?;
    store(on, DType::F64, out[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(v: &mut [f64], shape: &[usize]) -> View {
        View::of_slice(v, DType::F64, shape)
    }

    /// MindSpore's documented BoundingBoxEncode / BoundingBoxDecode examples (the CANN
    /// operators' CPU twins).
    #[test]
    fn bbox_coders_match_the_documented_examples() {
        let mut a = vec![2., 2., 2., 3., 2., 2., 2., 3.];
        let mut g = vec![1., 2., 1., 4., 1., 2., 1., 4.];
        let mut o = vec![0.; 8];
        let (av, gv, ov) = (
            view(&mut a, &[2, 4]),
            view(&mut g, &[2, 4]),
            view(&mut o, &[2, 4]),
        );
        bbox_encode(&av, &gv, [0.; 4], [1.; 4], &ov).unwrap();
        for (x, w) in o[..4].iter().zip([-1.0, 0.25, 0.0, 0.405_465]) {
            assert!((x - w).abs() < 1e-5, "{o:?}");
        }
        let mut r = vec![4., 1., 2., 1., 2., 2., 2., 3.];
        let mut d = vec![3., 1., 2., 2., 1., 2., 1., 4.];
        let (rv, dv) = (view(&mut r, &[2, 4]), view(&mut d, &[2, 4]));
        let ov = view(&mut o, &[2, 4]);
        bbox_decode(&rv, &dv, [0.; 4], [1.; 4], Some((768., 1280.)), 0.016, &ov).unwrap();
        let want = [
            4.194528, 0., 0., 5.194528, 2.140859, 0., 3.859141, 60.598152,
        ];
        for (x, w) in o.iter().zip(want) {
            assert!((x - w).abs() < 1e-4, "{o:?}");
        }
    }

    #[test]
    fn batch_nms_keeps_the_best_per_class_then_merges_by_score() {
        // one batch, four boxes, two classes, shared boxes (q = 1); the last box is
        // inverted (y2 < y1) and, though it scores best, never a candidate
        let mut bx = vec![
            0., 0., 1., 1., 0., 0., 1., 0.9, 2., 2., 3., 3., 3., 3., 2., 4.,
        ];
        let mut sc = vec![0.9, 0.1, 0.8, 0.7, 0.3, 0.95, 0.99, 0.99];
        let (bv, sv) = (view(&mut bx, &[1, 4, 1, 4]), view(&mut sc, &[1, 4, 2]));
        let (mut ob, mut os, mut oc, mut on) = (vec![0.; 16], vec![0.; 4], vec![0.; 4], vec![0.]);
        let outs = [
            view(&mut ob, &[1, 4, 4]),
            view(&mut os, &[1, 4]),
            view(&mut oc, &[1, 4]),
            view(&mut on, &[1]),
        ];
        let p = BatchNms {
            score_threshold: 0.2,
            iou_threshold: 0.5,
            max_per_class: 5,
            max_total: 4,
            transpose_box: false,
        };
        batch_nms(&bv, &sv, &p, [&outs[0], &outs[1], &outs[2], &outs[3]]).unwrap();
        // class 0: box 0 (0.9) suppresses box 1 (0.8), box 2 (0.3) stays; class 1: box 2
        // (0.95), box 1 (0.7); box 0 (0.1) is under the threshold
        assert_eq!(os, vec![0.95, 0.9, 0.7, 0.3]);
        assert_eq!(oc, vec![1.0, 0.0, 1.0, 0.0]);
        assert_eq!(on, vec![4.0]);
        assert_eq!(&ob[..4], &[2., 2., 3., 3.]);
    }
}
