//! Vision operators of CANN's ops-cv documentation (`objdetect/*`, `image/*`):
//! `aclnn_roi_align.h`, `aclnn_roi_align_v2.h`, `aclnn_roi_align_v2_backward.h`,
//! `aclnn_iou.h`, `aclnn_ciou.h`, `aclnn_non_max_suppression.h` and `aclnn_resize.h`. The
//! engine is `npu_emu::ops::cv19`. Box tensors are read when the task runs.

use super::args::{self as a, T};
use super::launch::{phase1, Launch};
use crate::objects::{self, Object};
use crate::status::{NnError, NnResult};
use npu_emu::ops::cv19::{self as engine, Pool, Roi};
use npu_emu::ops::dtype::DType::{self, *};
use npu_emu::ops::{iter, View};
use std::ffi::{c_char, c_void};

/// A required `aclFloatArray*` argument.
fn float_array(h: *const c_void, arg: &'static str) -> NnResult<Vec<f32>> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    objects::with(h as usize, "aclFloatArray", arg, |o| match o {
        Object::FloatArray(v) => Ok(v.clone()),
        _ => unreachable!(),
    })
}

/// A required C string argument.
pub(super) fn c_str(p: *const c_char, arg: &str) -> NnResult<String> {
    if p.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    Ok(unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned())
}

/// `t` must have `n` dimensions.
fn ndim(t: &T, n: usize) -> NnResult<()> {
    if t.ndim() == n {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} must have {n} dimensions, but its shape is {:?}",
            t.arg,
            t.shape()
        )))
    }
}

/// A dense f64 copy of a small tensor (boxes, indices) at run time.
fn host(v: &View) -> Result<Vec<f64>, String> {
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok(buf)
}

fn roi_geometry(
    pooled_h: i64,
    pooled_w: i64,
    scale: f32,
    sampling: i64,
    aligned: bool,
) -> NnResult<Roi> {
    if pooled_h <= 0 || pooled_w <= 0 {
        return Err(NnError::invalid(format!(
            "the pooled size {pooled_h} x {pooled_w} must be positive"
        )));
    }
    if scale.is_nan() || scale <= 0.0 {
        return Err(NnError::invalid(format!(
            "spatialScale must be greater than 0, but it is {scale}"
        )));
    }
    if sampling < 0 {
        return Err(NnError::invalid(format!(
            "samplingRatio must be at least 0, but it is {sampling}"
        )));
    }
    Ok(Roi {
        pooled_h: pooled_h as usize,
        pooled_w: pooled_w as usize,
        scale: scale as f64,
        sampling: sampling as usize,
        aligned,
    })
}

/// `(image, x1, y1, x2, y2)` rows → boxes and image indices (the image id rounded down).
fn split_boxes(b: &[f64]) -> (Vec<[f64; 4]>, Vec<i64>) {
    b.chunks(5)
        .map(|r| ([r[1], r[2], r[3], r[4]], r[0].floor() as i64))
        .unzip()
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnRoiAlignGetWorkspaceSize(
    self_: *const c_void,
    rois: *const c_void,
    batchIndices: *const c_void,
    mode: *const c_char,
    outputHeight: i32,
    outputWidth: i32,
    samplingRatio: i32,
    spatialScale: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRoiAlignGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let r = a::tensor(rois, "rois")?;
            let bi = a::tensor(batchIndices, "batchIndices")?;
            let o = a::tensor(out, "out")?;
            let m = c_str(mode, "mode")?;
            a::dtype_in(&x, &[F32, F16])?;
            a::same_dtype(&r, &x)?;
            a::same_dtype(&o, &x)?;
            a::dtype_in(&bi, &[I32])?;
            ndim(&x, 4)?;
            ndim(&r, 2)?;
            ndim(&bi, 1)?;
            ndim(&o, 4)?;
            let pool = match m.as_str() {
                "avg" => Pool::Avg,
                "max" => Pool::Max,
                _ => {
                    return Err(NnError::invalid(format!(
                        "mode must be \"avg\" or \"max\", but it is \"{m}\""
                    )))
                }
            };
            let g = roi_geometry(
                outputHeight as i64,
                outputWidth as i64,
                spatialScale,
                samplingRatio as i64,
                false,
            )?;
            let k = r.shape()[0];
            if r.shape()[1] != 4 || bi.shape()[0] != k {
                return Err(NnError::invalid(format!(
                    "rois must be (numRois, 4) and batchIndices (numRois,), but their shapes \
                     are {:?} and {:?}",
                    r.shape(),
                    bi.shape()
                )));
            }
            let (hh, ww) = (x.shape()[2], x.shape()[3]);
            if hh == 0 || ww == 0 {
                return Err(NnError::invalid(format!(
                    "self must have a non-empty H and W, but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&o, &[k, x.shape()[1], g.pooled_h, g.pooled_w])?;
            let mut l = Launch::new("aclnnRoiAlign");
            l.input(&x);
            l.input(&r);
            l.input(&bi);
            l.output(&o);
            l.finish(move |v, _| {
                let b: Vec<[f64; 4]> = host(&v[1])?
                    .chunks(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect();
                let idx: Vec<i64> = host(&v[2])?.iter().map(|&i| i as i64).collect();
                engine::roi_align(&v[0], &b, &idx, g, pool, &v[3])
            })
        },
    )
}

/// The `boxes` argument of the V2 forms: `(K, 5)` of `like`'s dtype.
fn boxes_k5(b: &T, like: &T) -> NnResult<usize> {
    a::same_dtype(b, like)?;
    ndim(b, 2)?;
    if b.shape()[1] != 5 {
        return Err(NnError::invalid(format!(
            "boxes must be (K, 5), but its shape is {:?}",
            b.shape()
        )));
    }
    Ok(b.shape()[0])
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnRoiAlignV2GetWorkspaceSize(
    self_: *const c_void,
    boxes: *const c_void,
    pooledHeight: i64,
    pooledWidth: i64,
    spatialScale: f32,
    samplingRatio: i64,
    aligned: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRoiAlignV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let b = a::tensor(boxes, "boxes")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[F32, F16])?;
            a::same_dtype(&o, &x)?;
            ndim(&x, 4)?;
            ndim(&o, 4)?;
            let k = boxes_k5(&b, &x)?;
            let g = roi_geometry(
                pooledHeight,
                pooledWidth,
                spatialScale,
                samplingRatio,
                aligned,
            )?;
            let s = x.shape();
            if s[0] == 0 || s[2] == 0 || s[3] == 0 {
                return Err(NnError::invalid(format!(
                    "self must have non-empty B, H and W, but its shape is {s:?}"
                )));
            }
            a::same_shape(&o, &[k, s[1], g.pooled_h, g.pooled_w])?;
            let mut l = Launch::new("aclnnRoiAlignV2");
            l.input(&x);
            l.input(&b);
            l.output(&o);
            l.finish(move |v, _| {
                let (bx, idx) = split_boxes(&host(&v[1])?);
                engine::roi_align(&v[0], &bx, &idx, g, Pool::Avg, &v[2])
            })
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnRoiAlignV2BackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    boxes: *const c_void,
    inputShape: *const c_void,
    pooledHeight: i64,
    pooledWidth: i64,
    spatialScale: f32,
    samplingRatio: i64,
    aligned: bool,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRoiAlignV2BackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let gy = a::tensor(gradOutput, "gradOutput")?;
            let b = a::tensor(boxes, "boxes")?;
            let shape = a::int_array(inputShape, "inputShape")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            a::dtype_in(&gy, &[F32])?;
            a::same_dtype(&gi, &gy)?;
            ndim(&gy, 4)?;
            ndim(&gi, 4)?;
            let k = boxes_k5(&b, &gy)?;
            let g = roi_geometry(
                pooledHeight,
                pooledWidth,
                spatialScale,
                samplingRatio,
                aligned,
            )?;
            if shape.len() != 4 || shape.iter().any(|&d| d <= 0) {
                return Err(NnError::invalid(format!(
                    "inputShape must be 4 positive sizes (B, C, H, W), but it is {shape:?}"
                )));
            }
            let s: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
            a::same_shape(&gy, &[k, s[1], g.pooled_h, g.pooled_w])?;
            a::same_shape(&gi, &s)?;
            let mut l = Launch::new("aclnnRoiAlignV2Backward");
            l.input(&gy);
            l.input(&b);
            l.output(&gi);
            l.finish(move |v, _| {
                let (bx, idx) = split_boxes(&host(&v[1])?);
                engine::roi_align_backward(&v[0], &bx, &idx, g, &v[2])
            })
        },
    )
}

fn iou_mode(mode: *const c_char) -> NnResult<bool> {
    let m = c_str(mode, "mode")?;
    match m.as_str() {
        "iou" => Ok(false),
        "iof" => Ok(true),
        _ => Err(NnError::invalid(format!(
            "mode must be \"iou\" or \"iof\", but it is \"{m}\""
        ))),
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnIouGetWorkspaceSize(
    bBoxes: *const c_void,
    gtBoxes: *const c_void,
    mode: *const c_char,
    eps: f32,
    aligned: bool,
    overlap: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnIouGetWorkspaceSize", workspaceSize, executor, || {
        let b = a::tensor(bBoxes, "bBoxes")?;
        let g = a::tensor(gtBoxes, "gtBoxes")?;
        let o = a::tensor(overlap, "overlap")?;
        let iof = iou_mode(mode)?;
        a::dtype_in(&b, &[F32, F16, BF16])?;
        a::same_dtype(&g, &b)?;
        a::same_dtype(&o, &b)?;
        for t in [&b, &g, &o] {
            ndim(t, 2)?;
        }
        for t in [&b, &g] {
            if t.shape()[1] != 4 {
                return Err(NnError::invalid(format!(
                    "{} must be (n, 4), but its shape is {:?}",
                    t.arg,
                    t.shape()
                )));
            }
        }
        if eps.is_nan() || eps < 0.0 {
            return Err(NnError::invalid(format!(
                "eps must be at least 0, but it is {eps}"
            )));
        }
        let (m, n) = (b.shape()[0], g.shape()[0]);
        if aligned {
            if m != n {
                return Err(NnError::invalid(format!(
                    "with aligned, bBoxes and gtBoxes must have the same rows, but they have {m} \
                     and {n}"
                )));
            }
            a::same_shape(&o, &[m, 1])?;
        } else {
            a::same_shape(&o, &[m, n])?;
        }
        let mut l = Launch::new("aclnnIou");
        l.input(&b);
        l.input(&g);
        l.output(&o);
        l.finish(move |v, _| engine::iou(&v[0], &v[1], iof, eps as f64, aligned, &v[2]))
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnCIoUGetWorkspaceSize(
    bBoxes: *const c_void,
    gtBoxes: *const c_void,
    trans: bool,
    isCross: bool,
    mode: *const c_char,
    overlap: *mut c_void,
    atanSub: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnCIoUGetWorkspaceSize", workspaceSize, executor, || {
        let b = a::tensor(bBoxes, "bBoxes")?;
        let g = a::tensor(gtBoxes, "gtBoxes")?;
        let o = a::tensor(overlap, "overlap")?;
        let at = a::tensor(atanSub, "atanSub")?;
        let iof = iou_mode(mode)?;
        a::dtype_in(&b, &[F32, F16])?;
        for t in [&g, &o, &at] {
            a::same_dtype(t, &b)?;
        }
        for t in [&b, &g, &o, &at] {
            ndim(t, 2)?;
        }
        for t in [&b, &g] {
            if t.shape()[0] != 4 || t.shape()[1] % 1024 != 0 {
                return Err(NnError::invalid(format!(
                    "{} must be (4, n) with n a multiple of 1024, but its shape is {:?}",
                    t.arg,
                    t.shape()
                )));
            }
        }
        let n = b.shape()[1];
        if g.shape()[1] != n {
            return Err(NnError::invalid(format!(
                "bBoxes and gtBoxes must hold as many boxes, but their shapes are {:?} and {:?}",
                b.shape(),
                g.shape()
            )));
        }
        if isCross {
            return Err(NnError::invalid("isCross must be false".to_string()));
        }
        a::same_shape(&o, &[1, n])?;
        a::same_shape(&at, &[1, n])?;
        let mut l = Launch::new("aclnnCIoU");
        l.input(&b);
        l.input(&g);
        l.output(&o);
        l.output(&at);
        l.finish(move |v, _| engine::ciou(&v[0], &v[1], trans, iof, &v[2], &v[3]))
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnNonMaxSuppressionGetWorkspaceSize(
    boxes: *const c_void,
    scores: *const c_void,
    maxOutputBoxesPerClass: *const c_void,
    iouThreshold: *const c_void,
    scoreThreshold: *const c_void,
    centerPointBox: i32,
    selectedIndices: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNonMaxSuppressionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let b = a::tensor(boxes, "boxes")?;
            let s = a::tensor(scores, "scores")?;
            let mx = a::int_array(maxOutputBoxesPerClass, "maxOutputBoxesPerClass")?;
            let it = float_array(iouThreshold, "iouThreshold")?;
            let st = float_array(scoreThreshold, "scoreThreshold")?;
            let o = a::tensor(selectedIndices, "selectedIndices")?;
            a::dtype_in(&b, &[F32, F16])?;
            a::same_dtype(&s, &b)?;
            a::dtype_in(&o, &[I32])?;
            ndim(&b, 3)?;
            ndim(&s, 3)?;
            ndim(&o, 2)?;
            let (bs, ss) = (b.shape(), s.shape());
            if bs[0] != ss[0] || bs[1] != ss[2] || bs[2] != 4 {
                return Err(NnError::invalid(format!(
                    "boxes must be [num_batches, spatial_dimension, 4] and scores [num_batches, \
                     num_classes, spatial_dimension], but their shapes are {bs:?} and {ss:?}"
                )));
            }
            if o.shape()[1] != 3 {
                return Err(NnError::invalid(format!(
                    "selectedIndices must be [num_selected_indices, 3], but its shape is {:?}",
                    o.shape()
                )));
            }
            let max = match mx.as_slice() {
                [v] | [v, ..] if (0..=700).contains(v) => *v as usize,
                _ => {
                    return Err(NnError::invalid(format!(
                        "maxOutputBoxesPerClass must hold one value in [0, 700], but it is \
                         {mx:?}"
                    )))
                }
            };
            let thr = |v: &[f32], arg: &str| -> NnResult<f64> {
                match v.first() {
                    Some(&t) if (0.0..=1.0).contains(&t) => Ok(t as f64),
                    _ => Err(NnError::invalid(format!(
                        "{arg} must hold one value in [0, 1], but it is {v:?}"
                    ))),
                }
            };
            let iou = thr(&it, "iouThreshold")?;
            let score = thr(&st, "scoreThreshold")?;
            if !(0..=1).contains(&centerPointBox) {
                return Err(NnError::invalid(format!(
                    "centerPointBox must be 0 or 1, but it is {centerPointBox}"
                )));
            }
            let center = centerPointBox == 1;
            let mut l = Launch::new("aclnnNonMaxSuppression");
            l.input(&b);
            l.input(&s);
            l.output(&o);
            l.finish(move |v, _| engine::nms(&v[0], &v[1], max, iou, score, center, &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnResizeGetWorkspaceSize(
    self_: *const c_void,
    scales: *const c_void,
    mode: *const c_char,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnResizeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let sc = float_array(scales, "scales")?;
            let m = c_str(mode, "mode")?;
            let o = a::tensor(out, "out")?;
            let bilinear = match m.as_str() {
                "nearest" => false,
                "bilinear" => true,
                _ => {
                    return Err(NnError::invalid(format!(
                        "mode must be \"nearest\" or \"bilinear\", but it is \"{m}\""
                    )))
                }
            };
            a::dtype_in(&x, &[F16, F32])?;
            a::same_dtype(&o, &x)?;
            ndim(&x, 4)?;
            ndim(&o, 4)?;
            if x.format == 1 || o.format == 1 {
                return Err(NnError::invalid(
                    "self and out must be NCHW; NHWC is not supported".to_string(),
                ));
            }
            if x.numel() == 0 || o.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "self and out must not be empty, but their shapes are {:?} and {:?}",
                    x.shape(),
                    o.shape()
                )));
            }
            if sc.len() != 4 || sc[0] != 1.0 || sc[1] != 1.0 {
                return Err(NnError::invalid(format!(
                    "scales must hold 4 values with the N and C ones 1, but it is {sc:?}"
                )));
            }
            let s = x.shape();
            let oh = (s[2] as f64 * sc[2] as f64).floor();
            let ow = (s[3] as f64 * sc[3] as f64).floor();
            if oh < 1.0 || ow < 1.0 {
                return Err(NnError::invalid(format!(
                    "scales {sc:?} leave no output pixel for self shape {s:?}"
                )));
            }
            a::same_shape(&o, &[s[0], s[1], oh as usize, ow as usize])?;
            let mut l = Launch::new("aclnnResize");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::resize(&v[0], bilinear, &v[1]))
        },
    )
}

crate::phase2!(
    aclnnRoiAlign,
    aclnnRoiAlignV2,
    aclnnRoiAlignV2Backward,
    aclnnIou,
    aclnnCIoU,
    aclnnNonMaxSuppression,
    aclnnResize
);
