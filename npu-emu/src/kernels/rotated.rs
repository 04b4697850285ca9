//! Rotated boxes: the intersection of two rotated rectangles, and the aclop operators over
//! it: `RotatedNMS` (`torch_npu.npu_nms_rotated`), `RotatedIou` (`npu_rotated_iou`) and
//! `RotatedOverlaps` (`npu_rotated_overlaps`).
//!
//! A box is `(x_center, y_center, width, height, angle)`, the angle in degrees,
//! counter-clockwise: the convention of torch_npu's own CPU reference for npu_nms_rotated
//! (op-plugin `test_nms_rotated.py`), and the one that reproduces the values the hardware gave
//! in op-plugin's `test_rotated_iou.py` / `test_rotated_overlaps.py`. The corner form
//! (`(x1, y1, x2, y2, angle)`: torch_npu's `mode` 1, the `trans` attr) becomes
//! `((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, -angle)`, as that reference converts it.
//! A box whose `w * h` is below 1e-14 (also a negative one) overlaps nothing. The
//! intersection is one rectangle clipped by the other's four edges (Sutherland-Hodgman), its
//! area by the shoelace formula, all in f64.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::View;

/// A box's corners, counter-clockwise, from `(cx, cy, w, h, angle in degrees)`.
fn corners(b: [f64; 5]) -> [(f64, f64); 4] {
    let [cx, cy, w, h, deg] = b;
    let (s, c) = deg.to_radians().sin_cos();
    let (dx, dy) = (w / 2.0, h / 2.0);
    [(-dx, -dy), (dx, -dy), (dx, dy), (-dx, dy)]
        .map(|(x, y)| (cx + x * c - y * s, cy + x * s + y * c))
}

/// The area of a simple polygon (absolute shoelace).
fn area(p: &[(f64, f64)]) -> f64 {
    let n = p.len();
    let twice: f64 = (0..n)
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % n]);
            a.0 * b.1 - a.1 * b.0
        })
        .sum();
    twice.abs() / 2.0
}

/// Below this a box's `w * h` counts as empty (the reference's EPS).
const EPS: f64 = 1e-14;

/// A box in the centre form, from the centre form or (`corner_form`) the corner form.
pub fn centre_form(b: &[f64], corner_form: bool) -> [f64; 5] {
    if corner_form {
        [
            (b[0] + b[2]) / 2.0,
            (b[1] + b[3]) / 2.0,
            b[2] - b[0],
            b[3] - b[1],
            -b[4],
        ]
    } else {
        [b[0], b[1], b[2], b[3], b[4]]
    }
}

/// The area of the intersection of two rotated boxes.
pub fn intersection(a: [f64; 5], b: [f64; 5]) -> f64 {
    // w and h both negative: the same rectangle turned half a turn (still counter-clockwise)
    if a[2] * a[3] < EPS || b[2] * b[3] < EPS {
        return 0.0;
    }
    let clip = corners(b);
    let mut poly: Vec<(f64, f64)> = corners(a).to_vec();
    for k in 0..4 {
        let (p, q) = (clip[k], clip[(k + 1) % 4]);
        // inside: on the left of p -> q (the clip polygon is counter-clockwise)
        let side = |v: (f64, f64)| (q.0 - p.0) * (v.1 - p.1) - (q.1 - p.1) * (v.0 - p.0);
        let mut out = Vec::with_capacity(poly.len() + 2);
        for i in 0..poly.len() {
            let (cur, next) = (poly[i], poly[(i + 1) % poly.len()]);
            let (sc, sn) = (side(cur), side(next));
            if sc >= 0.0 {
                out.push(cur);
            }
            if (sc >= 0.0) != (sn >= 0.0) {
                let t = sc / (sc - sn);
                out.push((cur.0 + t * (next.0 - cur.0), cur.1 + t * (next.1 - cur.1)));
            }
        }
        poly = out;
        if poly.len() < 3 {
            return 0.0;
        }
    }
    area(&poly)
}

/// Intersection over union of two rotated boxes (0 when the union is empty).
pub fn iou(a: [f64; 5], b: [f64; 5]) -> f64 {
    let inter = intersection(a, b);
    let union = a[2] * a[3] + b[2] * b[3] - inter;
    if union <= 0.0 {
        0.0
    } else {
        inter / union
    }
}

/// The attributes of RotatedNMS.
#[derive(Clone, Copy, Debug)]
pub struct RotatedNms {
    pub iou_threshold: f64,
    /// Boxes scoring at or below it are dropped first (torch_npu's default 0).
    pub score_threshold: f64,
    /// At most this many boxes are kept (negative: no limit).
    pub max_output: i64,
    /// torch_npu's `mode`: false for the centre form, true for the corner form.
    pub corners: bool,
}

/// RotatedNMS: boxes `[N, 5]`, scores `[N]`, labels (`[N]`: a box only suppresses boxes of
/// its label; any other shape: one class). Greedy by descending score (the lower index first
/// on a tie; scores at or below `score_threshold` are left out first): a box whose IoU with a
/// kept one exceeds the threshold is dropped. Writes the
/// kept boxes (as given) to the first rows of `selected` `[N, 5]` and their indices to
/// `keep` `[N]`, zeros after them, and returns how many were kept.
pub fn rotated_nms(
    boxes: &View,
    scores: &View,
    labels: Option<&View>,
    p: &RotatedNms,
    selected: &View,
    keep: &View,
) -> Result<usize, String> {
    let n = boxes.shape[0];
    let bx: Vec<f64> = load(boxes, DType::F64)?;
    let sc: Vec<f64> = load(scores, DType::F64)?;
    let lab: Option<Vec<i64>> = match labels {
        Some(l) if l.numel() == n && n > 0 => Some(load(l, DType::I64)?),
        _ => None,
    };
    let geo = |i: usize| centre_form(&bx[i * 5..i * 5 + 5], p.corners);
    let mut order: Vec<usize> = (0..n).filter(|&i| sc[i] > p.score_threshold).collect();
    order.sort_by(|&a, &b| sc[b].total_cmp(&sc[a]).then(a.cmp(&b)));
    let cap = if p.max_output < 0 {
        n
    } else {
        (p.max_output as usize).min(n)
    };
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        if kept.len() == cap {
            break;
        }
        let same = |k: usize| lab.as_ref().is_none_or(|l| l[k] == l[i]);
        if kept
            .iter()
            .all(|&k| !same(k) || iou(geo(k), geo(i)) <= p.iou_threshold)
        {
            kept.push(i);
        }
    }
    let mut out = vec![0f64; n * 5];
    let mut idx = vec![0i64; n];
    for (r, &k) in kept.iter().enumerate() {
        out[r * 5..r * 5 + 5].copy_from_slice(&bx[k * 5..k * 5 + 5]);
        idx[r] = k as i64;
    }
    store(out, DType::F64, selected)?;
    store(idx, DType::I64, keep)?;
    Ok(kept.len())
}

/// RotatedIou / RotatedOverlaps: `boxes [B, 5, N]` and `query [B, 5, K]` (coordinates along
/// dimension 1, as torch_npu permutes them), `out [B, N, K]`: the intersection area
/// (`ratio` None), its ratio to the union (`Some(false)`, IoU) or to the area of `boxes`' box
/// (`Some(true)`, IoF). `corner_form`: the `trans` attr.
pub fn rotated_pairs(
    boxes: &View,
    query: &View,
    corner_form: bool,
    ratio: Option<bool>,
    out: &View,
) -> Result<(), String> {
    let (b, n, k) = (boxes.shape[0], boxes.shape[2], query.shape[2]);
    let x: Vec<f64> = load(boxes, DType::F64)?;
    let q: Vec<f64> = load(query, DType::F64)?;
    let get = |v: &[f64], m: usize, bi: usize, i: usize| -> [f64; 5] {
        let c: Vec<f64> = (0..5).map(|c| v[(bi * 5 + c) * m + i]).collect();
        centre_form(&c, corner_form)
    };
    let mut o = vec![0f64; b * n * k];
    for bi in 0..b {
        for i in 0..n {
            let bx = get(&x, n, bi, i);
            for j in 0..k {
                let qx = get(&q, k, bi, j);
                let inter = intersection(bx, qx);
                o[(bi * n + i) * k + j] = match ratio {
                    None => inter,
                    Some(iof) => {
                        let den = if iof {
                            bx[2] * bx[3]
                        } else {
                            bx[2] * bx[3] + qx[2] * qx[3] - inter
                        };
                        if inter <= 0.0 || den <= 0.0 {
                            0.0
                        } else {
                            inter / den
                        }
                    }
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
    fn overlaps_of_known_shapes() {
        let sq = [0.0, 0.0, 2.0, 2.0, 0.0];
        assert!((iou(sq, sq) - 1.0).abs() < 1e-12);
        // the same square turned 90 degrees is itself
        assert!((iou(sq, [0.0, 0.0, 2.0, 2.0, 90.0]) - 1.0).abs() < 1e-12);
        // turned 45 degrees: a regular octagon of area 8 (sqrt 2 - 1)
        let oct = 8.0 * (2f64.sqrt() - 1.0);
        let got = intersection(sq, [0.0, 0.0, 2.0, 2.0, 45.0]);
        assert!((got - oct).abs() < 1e-9, "{got}");
        // axis aligned, half overlapping: 2 / (4 + 4 - 2)
        assert!((iou(sq, [1.0, 0.0, 2.0, 2.0, 0.0]) - 2.0 / 6.0).abs() < 1e-12);
        // apart
        assert_eq!(iou(sq, [5.0, 5.0, 1.0, 1.0, 30.0]), 0.0);
        // a box of negative area overlaps nothing; both sides negative is the same box
        assert_eq!(intersection(sq, [0.0, 0.0, -2.0, 2.0, 0.0]), 0.0);
        assert!((iou(sq, [0.0, 0.0, -2.0, -2.0, 0.0]) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn values_the_hardware_gave() {
        // op-plugin's test_rotated_overlaps.py (fp32 expectation 10.289731) and
        // test_rotated_iou.py (0.10504241): numpy's seed-1234 boxes
        let a = [35.745582580566406, 48.66326141357422, 12.0, 13.0, 66.0];
        let b = [38.72185516357422, 37.3918342590332, 10.0, 12.0, -177.0];
        assert!((intersection(a, b) - 10.289731).abs() < 1e-4);
        let a = [34.31269073486328, 40.0398063659668, 12.0, 17.0, -99.0];
        let b = [37.2060546875, 50.58123016357422, 8.0, 18.0, -8.0];
        assert!((iou(a, b) - 0.10504241).abs() < 1e-6);
    }
}
