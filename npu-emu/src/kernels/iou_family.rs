//! The generalized / distance / complete IoU of axis-aligned boxes: the aclop operators
//! `GIoU`, `DIoU`, `CIoU` (`torch_npu.npu_giou`, `npu_diou`, `npu_ciou` and the contrib
//! functions of the same names) and the gradients `GIoUGrad`, `DIoUGrad`, `CIoUGrad`.
//!
//! Boxes are laid out coordinate-major, `[4, n]`: `(x1, y1, x2, y2)` per column, or with
//! `trans` `(x_center, y_center, w, h)`. A tensor of more rows is read by its first four
//! (its other rows get a zero gradient), as torch_npu's `npu_giou` example passes `[10, 4]`. Box `i` of `bboxes` pairs with box `i` of `gtboxes`
//! (`is_cross` false: the output is `[1, n]`) or with every box of `gtboxes` (`is_cross`
//! true: `[m, n]`, row `j` for gtbox `j`). With eps = 1e-9, the formulas op-plugin's tests
//! check the hardware against:
//! - GIoU = inter / union - (C - union) / C, union = area1 + area2 - inter, C the area of
//!   the smallest box enclosing both;
//! - DIoU = iou - rho² / c², with `h += eps`, union `+= eps`, rho the distance between the
//!   centres and c² the enclosing box's squared diagonal (+ eps);
//! - CIoU = DIoU - v * alpha, v = 4 / pi² (atan(w2 / h2) - atan(w1 / h1))², alpha = v / (1 +
//!   eps - iou + v); its second output (`atan_sub`) is atan(w2 / h2) - atan(w1 / h1).
//!
//! The gradients are the exact derivatives of those formulas with respect to the eight input
//! coordinates (CIoU's with alpha held constant, as the CIoU paper and the usual
//! implementations do; the hardware's CIoU gradient was not published against values) (forward-mode dual numbers; a max / min passes its derivative to the larger /
//! smaller operand, the first on a tie; a clamp at 0 passes none below 0), which is what the
//! hardware gave in op-plugin's `test_npu_giou_backward.py`.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::View;
use std::ops::{Add, Div, Mul, Sub};

/// Which IoU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    G,
    D,
    C,
}

/// A value and its derivatives with respect to the eight coordinates of a box pair.
#[derive(Clone, Copy, Debug)]
struct Dual {
    v: f64,
    d: [f64; 8],
}

impl Dual {
    fn c(v: f64) -> Dual {
        Dual { v, d: [0.0; 8] }
    }
    fn var(v: f64, k: usize) -> Dual {
        let mut d = [0.0; 8];
        d[k] = 1.0;
        Dual { v, d }
    }
    fn map(self, v: f64, f: f64) -> Dual {
        Dual {
            v,
            d: self.d.map(|x| x * f),
        }
    }
    fn max(self, o: Dual) -> Dual {
        if self.v >= o.v {
            self
        } else {
            o
        }
    }
    fn min(self, o: Dual) -> Dual {
        if self.v <= o.v {
            self
        } else {
            o
        }
    }
    fn clamp0(self) -> Dual {
        if self.v > 0.0 {
            self
        } else {
            Dual::c(0.0)
        }
    }
    fn sq(self) -> Dual {
        self * self
    }
    fn atan(self) -> Dual {
        self.map(self.v.atan(), 1.0 / (1.0 + self.v * self.v))
    }
}

impl Add for Dual {
    type Output = Dual;
    fn add(self, o: Dual) -> Dual {
        let mut d = self.d;
        d.iter_mut().zip(o.d).for_each(|(a, b)| *a += b);
        Dual { v: self.v + o.v, d }
    }
}

impl Sub for Dual {
    type Output = Dual;
    fn sub(self, o: Dual) -> Dual {
        let mut d = self.d;
        d.iter_mut().zip(o.d).for_each(|(a, b)| *a -= b);
        Dual { v: self.v - o.v, d }
    }
}

impl Mul for Dual {
    type Output = Dual;
    fn mul(self, o: Dual) -> Dual {
        let mut d = [0.0; 8];
        for (k, x) in d.iter_mut().enumerate() {
            *x = self.d[k] * o.v + o.d[k] * self.v;
        }
        Dual { v: self.v * o.v, d }
    }
}

impl Div for Dual {
    type Output = Dual;
    fn div(self, o: Dual) -> Dual {
        let mut d = [0.0; 8];
        for (k, x) in d.iter_mut().enumerate() {
            *x = (self.d[k] * o.v - o.d[k] * self.v) / (o.v * o.v);
        }
        Dual { v: self.v / o.v, d }
    }
}

const EPS: f64 = 1e-9;

/// (x1, y1, x2, y2) of a box's four raw coordinates (variables `base..base + 4`).
fn corners(raw: [f64; 4], base: usize, trans: bool) -> [Dual; 4] {
    let r: [Dual; 4] = std::array::from_fn(|k| Dual::var(raw[k], base + k));
    if trans {
        let half = Dual::c(0.5);
        [
            r[0] - r[2] * half,
            r[1] - r[3] * half,
            r[0] + r[2] * half,
            r[1] + r[3] * half,
        ]
    } else {
        r
    }
}

/// The IoU of `kind` of one pair, and (CIoU) the atan difference.
fn pair(kind: Kind, a: [f64; 4], b: [f64; 4], trans: bool) -> (Dual, Dual) {
    let [ax1, ay1, ax2, ay2] = corners(a, 0, trans);
    let [bx1, by1, bx2, by2] = corners(b, 4, trans);
    let inter = (ax2.min(bx2) - ax1.max(bx1)).clamp0() * (ay2.min(by2) - ay1.max(by1)).clamp0();
    let (cw, ch) = (ax2.max(bx2) - ax1.min(bx1), ay2.max(by2) - ay1.min(by1));
    if kind == Kind::G {
        let union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter;
        let outer = cw * ch;
        return (inter / union - (outer - union) / outer, Dual::c(0.0));
    }
    let e = Dual::c(EPS);
    let (w1, h1) = (ax2 - ax1, ay2 - ay1 + e);
    let (w2, h2) = (bx2 - bx1, by2 - by1 + e);
    let iou = inter / (w1 * h1 + w2 * h2 - inter + e);
    let c2 = cw.sq() + ch.sq() + e;
    let rho2 = ((bx1 + bx2 - ax1 - ax2).sq() + (by1 + by2 - ay1 - ay2).sq()) * Dual::c(0.25);
    let diou = iou - rho2 / c2;
    if kind == Kind::D {
        return (diou, Dual::c(0.0));
    }
    let atan_sub = (w2 / h2).atan() - (w1 / h1).atan();
    let v = atan_sub.sq() * Dual::c(4.0 / (std::f64::consts::PI * std::f64::consts::PI));
    let alpha = Dual::c((v / (Dual::c(1.0 + EPS) - iou + v)).v);
    (diou - v * alpha, atan_sub)
}

fn column(v: &[f64], n: usize, i: usize) -> [f64; 4] {
    std::array::from_fn(|k| v[k * n + i])
}

/// Check `[4, n]` boxes and `[4, m]` gtboxes; (n, m).
fn sizes(boxes: &View, gt: &View, cross: bool) -> Result<(usize, usize), String> {
    if boxes.shape.len() != 2 || gt.shape.len() != 2 || boxes.shape[0] < 4 || gt.shape[0] < 4 {
        return Err(format!(
            "bboxes {:?} and gtboxes {:?} must be [4, n] and [4, m] (rows past the fourth are \
             not read)",
            boxes.shape, gt.shape
        ));
    }
    let (n, m) = (boxes.shape[1], gt.shape[1]);
    if !cross && n != m {
        return Err(format!(
            "is_cross false pairs box i with gtbox i: bboxes {:?} and gtboxes {:?} must hold as many",
            boxes.shape, gt.shape
        ));
    }
    Ok((n, m))
}

/// GIoU / DIoU / CIoU: `out` [1, n] (or [m, n] with `cross`), `atan_sub` (CIoU) alike.
pub fn iou_family(
    kind: Kind,
    boxes: &View,
    gt: &View,
    trans: bool,
    cross: bool,
    out: &View,
    atan_sub: Option<&View>,
) -> Result<(), String> {
    let (n, m) = sizes(boxes, gt, cross)?;
    let a: Vec<f64> = load(boxes, DType::F64)?;
    let b: Vec<f64> = load(gt, DType::F64)?;
    let rows = if cross { m } else { 1 };
    let (mut o, mut s) = (vec![0f64; rows * n], vec![0f64; rows * n]);
    for r in 0..rows {
        for i in 0..n {
            let j = if cross { r } else { i };
            let (v, t) = pair(kind, column(&a, n, i), column(&b, m, j), trans);
            o[r * n + i] = v.v;
            s[r * n + i] = t.v;
        }
    }
    store(o, DType::F64, out)?;
    match atan_sub {
        Some(t) => store(s, DType::F64, t),
        None => Ok(()),
    }
}

/// GIoUGrad / DIoUGrad / CIoUGrad (one-to-one pairs): `dy` [n] (or [1, n]) -> `dboxes`, `dgt` [4, n].
pub fn iou_family_grad(
    kind: Kind,
    dy: &View,
    boxes: &View,
    gt: &View,
    trans: bool,
    dboxes: &View,
    dgt: &View,
) -> Result<(), String> {
    let (n, _) = sizes(boxes, gt, false)?;
    if dy.numel() != n {
        return Err(format!(
            "dy {:?} must hold the {n} pairs' gradients",
            dy.shape
        ));
    }
    let g: Vec<f64> = load(&dy.reshaped(&[n]), DType::F64)?;
    let a: Vec<f64> = load(boxes, DType::F64)?;
    let b: Vec<f64> = load(gt, DType::F64)?;
    let (mut da, mut db) = (vec![0f64; boxes.numel()], vec![0f64; gt.numel()]);
    for i in 0..n {
        let (v, _) = pair(kind, column(&a, n, i), column(&b, n, i), trans);
        for k in 0..4 {
            da[k * n + i] = g[i] * v.d[k];
            db[k * n + i] = g[i] * v.d[4 + k];
        }
    }
    store(da, DType::F64, dboxes)?;
    store(db, DType::F64, dgt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn giou_gradient_is_what_the_hardware_gave() {
        // op-plugin test_npu_giou_backward.py (np.random.seed(1234) boxes, trans)
        let a = [0.095_759_73, 0.311_054_38, 0.781_136_16, 0.607_320_67];
        let b = [0.389_987_92, 0.136_296_3, 0.861_767_9, 0.599_063_87];
        let (v, _) = pair(Kind::G, a, b, true);
        let want = [
            1.021_824_1,
            -1.418_193_1,
            0.186_316_15,
            0.174_772_5,
            -1.021_824_1,
            1.418_193_1,
            0.179_991_86,
            0.236_532_18,
        ];
        for (k, w) in want.iter().enumerate() {
            assert!(
                (v.d[k] - w).abs() < 1e-5 * w.abs().max(1.0),
                "{k}: {} vs {w}",
                v.d[k]
            );
        }
        assert!((v.v - 0.1765).abs() < 1e-3);
    }
}
