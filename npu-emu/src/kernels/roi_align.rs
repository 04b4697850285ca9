//! Region-of-interest alignment: the aclop operators `ROIAlign` (`torch_npu.npu_roi_align`,
//! `torch_npu.contrib.module.ROIAlign`) and `ROIAlignGrad` (`npu_roi_alignbk`, the
//! module's backward).
//!
//! A roi is `(batch index, x1, y1, x2, y2)` in image coordinates; output cell `(ph, pw)` of
//! roi `r` and channel `c` averages (pool mode "avg") or takes the largest of (pool mode
//! "max") `sy * sx` bilinear samples of `features[batch, c]`, taken at the centres of a
//! regular `sy x sx` grid over the cell (Mask R-CNN). The roi in feature coordinates, by
//! `roi_end_mode` (CANN's operator specification):
//! - 0 (align = False, every framework): `x1 * scale .. x2 * scale`;
//! - 1 (align = True for TensorFlow: the end shifted by one pixel): `x1 * scale ..
//!   (x2 + 1) * scale`;
//!   in both a roi is at least 1 x 1;
//! - 2 (align = True for PyTorch) and 3 (align = True for MMDetection, what torch_npu's
//!   `ROIAlign(aligned=True)` passes): both ends shifted by half a pixel,
//!   `x1 * scale - 0.5 .. x2 * scale - 0.5`, no minimum size.
//!
//! `sample_num` > 0 is the grid's size per axis; 0 takes `ceil(roi size / pooled size)`
//! samples. A sample more than one pixel outside the map contributes 0; one within a pixel
//! of the border is clamped to it (the usual RoIAlign bilinear rule). The gradient scatters
//! each output gradient back through the same samples and weights (average mode).

use crate::ops::cv19::{taps, Taps};
use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::View;

/// The attributes of ROIAlign / ROIAlignGrad.
#[derive(Clone, Copy, Debug)]
pub struct RoiAlign {
    pub spatial_scale: f64,
    pub pooled_h: usize,
    pub pooled_w: usize,
    pub sample_num: usize,
    pub roi_end_mode: i64,
    pub max_pool: bool,
}

/// One bilinear sample: four (flat `y * W + x` offset, weight) taps (torchvision's rule,
/// as aclnnRoiAlign's, [`crate::ops::cv19::taps`]).
type Sample = Taps;

impl RoiAlign {
    /// For roi `roi` (its 5 values) over an `h x w` map: the batch index and, per output
    /// cell, its samples (None: outside the map) and the sample count.
    fn cells(&self, roi: &[f64], n: usize, h: usize, w: usize) -> Result<RoiCells, String> {
        let b = roi[0];
        if !(b >= 0.0 && (b as usize) < n) || b.fract() != 0.0 {
            return Err(format!(
                "roi {roi:?}: batch index {b} is not an image of the {n} in features"
            ));
        }
        let s = self.spatial_scale;
        let (off, end_shift, min1) = match self.roi_end_mode {
            0 => (0.0, 0.0, true),
            1 => (0.0, 1.0, true),
            _ => (0.5, 0.0, false),
        };
        let (x1, y1) = (roi[1] * s - off, roi[2] * s - off);
        let (x2, y2) = (
            (roi[3] + end_shift) * s - off,
            (roi[4] + end_shift) * s - off,
        );
        let (mut rw, mut rh) = (x2 - x1, y2 - y1);
        if min1 {
            rw = rw.max(1.0);
            rh = rh.max(1.0);
        }
        let (bw, bh) = (rw / self.pooled_w as f64, rh / self.pooled_h as f64);
        let (gy, gx) = if self.sample_num > 0 {
            (self.sample_num, self.sample_num)
        } else {
            (bh.ceil().max(1.0) as usize, bw.ceil().max(1.0) as usize)
        };
        let mut cells = Vec::with_capacity(self.pooled_h * self.pooled_w);
        for ph in 0..self.pooled_h {
            for pw in 0..self.pooled_w {
                let mut v = Vec::with_capacity(gy * gx);
                for iy in 0..gy {
                    let y = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gy as f64;
                    for ix in 0..gx {
                        let x = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gx as f64;
                        v.push(taps(y, x, h, w));
                    }
                }
                cells.push(v);
            }
        }
        Ok(RoiCells {
            batch: b as usize,
            cells,
            count: (gy * gx) as f64,
        })
    }
}

struct RoiCells {
    batch: usize,
    cells: Vec<Vec<Option<Sample>>>,
    count: f64,
}

/// Check `rois` is `[K, 5]` and return its rows.
fn roi_rows(rois: &View) -> Result<Vec<f64>, String> {
    if rois.shape.len() != 2 || rois.shape[1] != 5 {
        return Err(format!("rois {:?} must be [K, 5]", rois.shape));
    }
    load(rois, DType::F64)
}

/// `ROIAlign`: `features` [N, C, H, W], `rois` [K, 5] -> `y` [K, C, pooled_h, pooled_w].
pub fn roi_align(p: &RoiAlign, features: &View, rois: &View, y: &View) -> Result<(), String> {
    let [n, c, h, w] = features.shape[..] else {
        return Err(format!(
            "features {:?} must be [N, C, H, W]",
            features.shape
        ));
    };
    let f: Vec<f64> = load(features, DType::F64)?;
    let r = roi_rows(rois)?;
    let k = rois.shape[0];
    let (ph, pw) = (p.pooled_h, p.pooled_w);
    let mut out = vec![0f64; k * c * ph * pw];
    if h == 0 || w == 0 {
        return store(out, DType::F64, y);
    }
    for ri in 0..k {
        let rc = p.cells(&r[ri * 5..ri * 5 + 5], n, h, w)?;
        for ci in 0..c {
            let plane = &f[(rc.batch * c + ci) * h * w..][..h * w];
            for (cell, samples) in rc.cells.iter().enumerate() {
                let vals = samples.iter().map(|s| {
                    s.map_or(0.0, |t| t.iter().map(|&(o, wt)| plane[o] * wt).sum::<f64>())
                });
                out[(ri * c + ci) * ph * pw + cell] = if p.max_pool {
                    vals.fold(f64::NEG_INFINITY, f64::max)
                } else {
                    vals.sum::<f64>() / rc.count
                };
            }
        }
    }
    store(out, DType::F64, y)
}

/// `ROIAlignGrad`: `ydiff` [K, C, pooled_h, pooled_w], `rois` [K, 5] -> `xdiff` [N, C, H, W]
/// (average pooling's gradient).
pub fn roi_align_grad(p: &RoiAlign, ydiff: &View, rois: &View, xdiff: &View) -> Result<(), String> {
    let [n, c, h, w] = xdiff.shape[..] else {
        return Err(format!("xdiff {:?} must be [N, C, H, W]", xdiff.shape));
    };
    let g: Vec<f64> = load(ydiff, DType::F64)?;
    let r = roi_rows(rois)?;
    let k = rois.shape[0];
    let (ph, pw) = (p.pooled_h, p.pooled_w);
    let mut dx = vec![0f64; n * c * h * w];
    if h > 0 && w > 0 {
        for ri in 0..k {
            let rc = p.cells(&r[ri * 5..ri * 5 + 5], n, h, w)?;
            for ci in 0..c {
                let plane = &mut dx[(rc.batch * c + ci) * h * w..][..h * w];
                for (cell, samples) in rc.cells.iter().enumerate() {
                    let gv = g[(ri * c + ci) * ph * pw + cell] / rc.count;
                    for t in samples.iter().flatten() {
                        for &(o, wt) in t {
                            plane[o] += gv * wt;
                        }
                    }
                }
            }
        }
    }
    store(dx, DType::F64, xdiff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_plugin_golden_and_gradient_sums() {
        // op-plugin test_roi_align.py: the values the hardware gave
        let mut f: Vec<f32> = (1..=36).map(|v| v as f32).collect();
        let mut roi = vec![0f32, -2.0, -2.0, 22.0, 22.0];
        let mut y = vec![0f32; 9];
        let p = RoiAlign {
            spatial_scale: 0.25,
            pooled_h: 3,
            pooled_w: 3,
            sample_num: 2,
            roi_end_mode: 0,
            max_pool: false,
        };
        let fv = View::of_slice(&mut f, DType::F32, &[1, 1, 6, 6]);
        let rv = View::of_slice(&mut roi, DType::F32, &[1, 5]);
        roi_align(
            &p,
            &fv,
            &rv,
            &View::of_slice(&mut y, DType::F32, &[1, 1, 3, 3]),
        )
        .unwrap();
        assert_eq!(y, [4.5, 6.5, 8.5, 16.5, 18.5, 20.5, 28.5, 30.5, 32.5]);
        // every sample is inside the map: the gradient keeps the total
        let mut g = vec![1f32; 9];
        let mut dx = vec![0f32; 36];
        roi_align_grad(
            &p,
            &View::of_slice(&mut g, DType::F32, &[1, 1, 3, 3]),
            &rv,
            &View::of_slice(&mut dx, DType::F32, &[1, 1, 6, 6]),
        )
        .unwrap();
        assert!((dx.iter().sum::<f32>() - 9.0).abs() < 1e-5);
    }
}
