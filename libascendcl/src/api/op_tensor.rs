//! The single-operator API's data-movement and activation operators that torch_npu's own
//! APIs call (`npu_transpose`, `npu_broadcast`, `npu_slice`, `npu_pad`, `npu_silu`,
//! `npu_mish`, `npu_max` / `npu_min` and `npu_scatter`, which their gradient uses), and the
//! elementwise binary operators torch_npu's aclop paths use (a comparison with a CPU scalar as
//! its first operand, arithmetic on tensors in a private format): the descriptors,
//! integer lists and attributes checked here, the computation in
//! `npu_emu::kernels::tensor_ops`.
//!
//! | op type | inputs | attrs | outputs |
//! |---|---|---|---|
//! | Transpose | x, perm (int list) | | y |
//! | BroadcastTo | x, shape (int list) | | y |
//! | Slice | x, offsets, size (int lists; size -1: to the end) | | y |
//! | StridedSlice (`npu_indexing`) | x, begin, end, strides (int lists) | begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask (0) | y |
//! | Pad | x, paddings (int list of (before, after) pairs, [n, 2] or flat) | | y |
//! | Fill | dims (int list), value (one element: host scalar or device tensor) | | y |
//! | ScaledMaskedSoftmax (`npu_scaled_masked_softmax`) | x, mask (BOOL / UINT8, broadcast) | scale (1.0), fixed_triu_mask (false: the mask input; true: `j > i`) | y |
//! | ScaledMaskedSoftmaxGrad | y_grad, y, mask | as ScaledMaskedSoftmax | x_grad |
//! | Iou (`npu_iou`, `npu_ptiou`) | bboxes [N, 4], gtboxes [M, 4] | mode ("iou" / "iof"), eps (1.0) | overlap [M, N] |
//! | NonMaxSuppressionV4 (`npu_nms_v4`) | boxes [N, 4], scores [N], max_output_size, iou_threshold, score_threshold (one value each) | pad_to_max_output_size | selected_indices (INT32), valid_outputs (INT32) |
//! | RotatedNMS (`npu_nms_rotated`) | boxes [N, 5] FLOAT/FLOAT16 (x, y, w, h, angle in degrees; mode 1: x1, y1, x2, y2, angle), scores [N], labels (INT32/INT64: [N] per box, else one class; optional) | iou_threshold (required), score_threshold (-inf), max_output_size (-1: all), mode (0) | selected_detections [N, 5], keep_indices [N] (INT32/INT64): the call waits for the result and shrinks both output descriptors to the M kept rows, as a dynamic-shape operator does |
//! | RotatedIou (`npu_rotated_iou`) | boxes [B, 5, N], query_boxes [B, 5, K] (FLOAT) | trans (false: x, y, w, h, angle in degrees; true: x1, y1, x2, y2, angle), mode ("iou" / "iof": over the box's area), is_cross (true; false is not modelled) | iou [B, N, K] |
//! | RotatedOverlaps (`npu_rotated_overlaps`) | boxes [B, 5, N], query_boxes [B, 5, K] (FLOAT) | trans (false) | overlaps [B, N, K] (intersection areas) |
//! | DropOutGenMaskV3 (`dropout_with_byte_mask`, `npu_dropout_with_add_softmax`) | shape (int list), prob (keep probability, one value of x's float type) | seed, seed2 (0: both zero draws a fresh seed) | y (UINT8 / BOOL, at least the shape's element count: one byte per element, 1 = keep) |
//! | DropOutDoMaskV3 (`dropout_with_byte_mask` and its backward) | x, mask (UINT8 / BOOL, at least x's element count), keep_prob (one value of x's type) | | y = x * mask / keep_prob |
//! | AxpyWithSoftmaxAndDropOutDoMask (`npu_dropout_with_add_softmax`) | x1, x2 (one shape and float type), mask (UINT8 / BOOL, a byte per element) | alpha, input_keep_prob (required), axis (one dimension, [-1]) | y1 = softmax(x1 + alpha * x2), y2 = y1 * mask / input_keep_prob |
//! | DropoutWithMulsAndSoftmaxGrad | y_grad, mask, softmax_output | alpha, input_keep_prob (required), axes (one dimension, [-1]) | x_grad = alpha * softmax'(y_grad * mask / input_keep_prob) |
//! | GIoU, DIoU (`npu_giou`, `npu_diou`) | bboxes [4, n], gtboxes [4, m] (FLOAT / FLOAT16) | trans (false: x1, y1, x2, y2; true: x, y, w, h), is_cross (true: [m, n]; false: pairs, [1, n]), mode ("iou"; "iof" is not modelled) | overlap |
//! | CIoU (`npu_ciou`) | as GIoU | as GIoU, atan_sub_flag (not read: atan_sub is always written) | overlap, atan_sub |
//! | GIoUGrad, DIoUGrad, CIoUGrad | dy [n], bboxes [4, n], gtboxes [4, n] (CIoUGrad: atan_sub, optional, not read) | trans, is_cross (false only), mode ("iou") | dbboxes, dgtboxes [4, n] |
//! | ROIAlign (`npu_roi_align`, `contrib.module.ROIAlign`) | features [N, C, H, W], rois [K, 5] (batch index, x1, y1, x2, y2), rois_n (optional, not read) (FLOAT / FLOAT16, one type) | spatial_scale, pooled_height, pooled_width (required), sample_num (2; 0: adaptive), roi_end_mode (1: 0-3), pool_mode ("avg" / "max") | y [K, C, pooled_height, pooled_width] |
//! | ROIAlignGrad (`npu_roi_alignbk`) | ydiff [K, C, pooled_height, pooled_width], rois [K, 5], rois_n (optional, not read) | xdiff_shape (required: [N, C, H, W]) and ROIAlign's attrs but pool_mode | xdiff [N, C, H, W] |
//! | RandomChoiceWithMask (`npu_random_choice_with_mask`) | x (BOOL, 1-5 dimensions) | count (required), seed, seed2 (0: both zero draws a fresh seed) | index (INT32 [count, rank]), mask (BOOL [count]) |
//! | Swish | x | scale (1.0) | y |
//! | SwishGrad | dy, x, y | scale (1.0) | dx |
//! | Mish | x | | y |
//! | MishGrad | dy, x (, tanhx: not read) | | dx |
//! | ArgMaxWithValue, ArgMinWithValue | x | dimension (required), keep_dims (false) | indice (INT32), values |
//! | ScatterElements | data, indices (INT32 / INT64), updates | axis (0), reduction ("none") | y |
//! | ArgMaxGrad (torch_npu's `npu_scatter`) | var, indices, updates | dimension (required) | y |
//! | BatchMatMul (`npu_bmmV2`) | x1, x2 (, bias) | adj_x1, adj_x2 (false) | y |
//! | ConfusionTransposeD (`npu_confusion_transpose`) | x | perm, shape (list ints), transpose_first | y |
//! | SortV2 (`npu_sort_v2`) | x | axis (-1), descending (false) | y |
//! | LayerNormV3 (`npu_layer_norm_eval`) | x, gamma, beta | begin_norm_axis (0), epsilon (1e-7) | y, mean, rstd |
//! | SoftmaxCrossEntropyWithLogits | features [N, C], labels [N, C] | | loss [N], backprop [N, C] |
//! | OneHotD (`npu_one_hot`) | indices, on_value [1], off_value [1] | axis (-1), depth (required) | y |
//! | ReduceSum | x, axes (int list; empty: all) | keep_dims (false) | y |
//! | LpNormReduceV2 (`torch.norm` / `linalg.vector_norm` with another `p` than 0, 1, 2, 3, +-inf) | x (FLOAT) | p (2.0; +-2147483647: +-inf), axes (list int; empty: all), keepdim (false), epsilon (0) | y = sum(\|x\|^p) (max / min of \|x\| for +-inf, nonzeros for 0) |
//! | LpNormUpdateV2 | x (FLOAT, LpNormReduceV2's y) | p (2.0), epsilon (0) | y = max(x^(1/p), epsilon) |
//! | Conv2D | x, filter (, bias) | strides, pads, dilations ([1,1,1,1]), groups (1), data_format ("NCHW") | y |
//! | Conv2DBackpropInput | input_size (int list), filter, out_backprop | as Conv2D | y (dx) |
//! | Conv2DBackpropFilter | x, filter_size (int list), out_backprop | as Conv2D | y (dw) |
//! | CdistGrad (`torch.cdist` backward, p in [0, 2] or inf) | grad, x1, x2, cdist (one broadcast shape [B…, P, R, M], FLOAT / FLOAT16) | p (required; -1: inf) | y [B…, P, M] |
//! | BoundingBoxEncode (`npu_bounding_box_encode`) | anchor_box, ground_truth_box [N, 4] (FLOAT / FLOAT16) | means, stds (4 floats; [0,0,0,0], [1,1,1,1]) | deltas [N, 4] |
//! | BoundingBoxDecode (`npu_bounding_box_decode`) | rois, deltas [N, 4] | means, stds, max_shape (list int (h, w); empty: no clip), wh_ratio_clip (0.016) | bboxes [N, 4] |
//! | YoloBoxesEncode (`npu_yolo_boxes_encode`) | anchor_boxes, gt_bboxes [N, 4] (FLOAT / FLOAT16), stride [N] (INT32) | performance_mode (not read) | encoded_bboxes [N, 4] |
//! | AnchorResponseFlags (`npu_anchor_response_flags`) | gt_bboxes [N, 4] (FLOAT / FLOAT16) | featmap_size, strides (2 ints each, required), num_base_anchors (required) | flags (UINT8 [h * w * num_base_anchors]) |
//! | BatchMultiClassNonMaxSuppression (`npu_batch_nms`) | boxes [B, N, q, 4] (transpose_box: [B, q, 4, N]), scores [B, N, C] (FLOAT / FLOAT16), clip_window, num_valid_boxes (optional, not modelled: an error) | score_threshold, iou_threshold, max_size_per_class, max_total_size (required), change_coordinate_frame (false; true needs clip_window), transpose_box (false) | nmsed_boxes [B, M, 4], nmsed_scores, nmsed_classes [B, M], nmsed_num (INT32 [B]) |
//! | DeformableOffsets (`npu_deformable_conv2d`) | x [N, H, W, C], offsets [N, Ho, Wo, 3 * G * kh * kw] (NHWC, FLOAT / FLOAT16 / BFLOAT16) | strides, pads, ksize (required), dilations ([1,1,1,1]), data_format ("NHWC" only), deformable_groups (1), modulated (true only) | y [N, Ho * kh, Wo * kw, C] |
//! | DeformableOffsetsGrad | grad (y's shape), x, offsets | as DeformableOffsets | grad_x, grad_offsets |
//! | Add, AddV2, Sub, Mul, RealDiv, Div, FloorDiv, Maximum, Minimum, Pow | x1, x2 (numpy broadcasting, one data type) | | y |
//! | Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual, LogicalAnd, LogicalOr | x1, x2 | | y (BOOL) |
//!
//! Tensors in a private format (FRACTAL_NZ, FRACTAL_Z, NC1HWC0, …) are converted from and to
//! their origin format around the computation.
//!
//! Integer lists may be host, constant or
//! device tensors. Shapes that do not fit are `ACL_ERROR_OP_INPUT_NOT_MATCH` /
//! `ACL_ERROR_OP_OUTPUT_NOT_MATCH` naming what is wrong; a data type an operator does not
//! take is `ACL_ERROR_UNSUPPORTED_DATA_TYPE`.

use super::op::{attrs_of, Call};
use super::op_args::{
    arg, attr_err, enqueue, get_int, get_list, get_num, get_str, host_bytes, input_arg, int_list,
    mismatch, Arg,
};
use npu_emu::kernels::tensor_ops::{conv2d_geo, ConvKind, TensorOp};
use npu_emu::kernels::Tensor;
use npu_emu::ops::math::Binary;
use npu_emu::ops::DType;
use npu_emu::Error;

/// Data types the data-movement operators take: every one the engine knows.
const ANY: &[DType] = npu_emu::ops::dtype::ALL;
const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::BF16];
const INDEX: &[DType] = &[DType::I32, DType::I64];
const ONE_HOT_INDEX: &[DType] = &[DType::I32, DType::I64, DType::U8];
const BOOL: &[DType] = &[DType::Bool];
const MASK: &[DType] = &[DType::Bool, DType::U8];

/// (op type, inputs, outputs): each input is a tensor `T`, an integer list `L` or an
/// optional tensor `o` (which may be left out at the end of the call).
const OPS: [(&str, &str, usize); 72] = [
    ("CdistGrad", "TTTT", 1),
    ("BoundingBoxEncode", "TT", 1),
    ("BoundingBoxDecode", "TT", 1),
    ("YoloBoxesEncode", "TTT", 1),
    ("AnchorResponseFlags", "T", 1),
    ("BatchMultiClassNonMaxSuppression", "TToo", 4),
    ("DeformableOffsets", "TT", 1),
    ("DeformableOffsetsGrad", "TTT", 2),
    ("CIoUGrad", "TTTo", 2),
    ("GIoU", "TT", 1),
    ("DIoU", "TT", 1),
    ("CIoU", "TT", 2),
    ("GIoUGrad", "TTT", 2),
    ("DIoUGrad", "TTT", 2),
    ("AxpyWithSoftmaxAndDropOutDoMask", "TTT", 2),
    ("DropoutWithMulsAndSoftmaxGrad", "TTT", 1),
    ("ROIAlign", "TTo", 1),
    ("ROIAlignGrad", "TTo", 1),
    ("DropOutGenMaskV3", "LT", 1),
    ("DropOutDoMaskV3", "TTT", 1),
    ("Transpose", "TL", 1),
    ("BroadcastTo", "TL", 1),
    ("Slice", "TLL", 1),
    ("StridedSlice", "TLLL", 1),
    ("Pad", "TL", 1),
    ("ScaledMaskedSoftmax", "TT", 1),
    ("ScaledMaskedSoftmaxGrad", "TTT", 1),
    ("Iou", "TT", 1),
    ("RandomChoiceWithMask", "T", 2),
    ("NonMaxSuppressionV4", "TTTTT", 2),
    ("RotatedNMS", "TTo", 2),
    ("RotatedIou", "TT", 1),
    ("RotatedOverlaps", "TT", 1),
    ("Swish", "T", 1),
    ("SwishGrad", "TTT", 1),
    ("Mish", "T", 1),
    ("MishGrad", "TTo", 1),
    ("ArgMaxWithValue", "T", 2),
    ("ArgMinWithValue", "T", 2),
    ("ScatterElements", "TTT", 1),
    ("ArgMaxGrad", "TTT", 1),
    ("Fill", "LT", 1),
    ("BatchMatMul", "TTo", 1),
    ("ConfusionTransposeD", "T", 1),
    ("SortV2", "T", 1),
    ("LayerNormV3", "TTT", 3),
    ("SoftmaxCrossEntropyWithLogits", "TT", 2),
    ("OneHotD", "TTT", 1),
    ("Conv2D", "TTo", 1),
    ("Conv2DBackpropInput", "LTT", 1),
    ("Conv2DBackpropFilter", "TLT", 1),
    ("ReduceSum", "TL", 1),
    ("LpNormReduceV2", "T", 1),
    ("LpNormUpdateV2", "T", 1),
    ("Add", "TT", 1),
    ("AddV2", "TT", 1),
    ("Sub", "TT", 1),
    ("Mul", "TT", 1),
    ("RealDiv", "TT", 1),
    ("Div", "TT", 1),
    ("FloorDiv", "TT", 1),
    ("Maximum", "TT", 1),
    ("Minimum", "TT", 1),
    ("Pow", "TT", 1),
    ("Less", "TT", 1),
    ("LessEqual", "TT", 1),
    ("Greater", "TT", 1),
    ("GreaterEqual", "TT", 1),
    ("Equal", "TT", 1),
    ("NotEqual", "TT", 1),
    ("LogicalAnd", "TT", 1),
    ("LogicalOr", "TT", 1),
];

/// The elementwise binary operators (numpy broadcasting, computed in the inputs' type).
fn binary_of(op: &str) -> Option<Binary> {
    let one = npu_emu::ops::Scalar::i64(1);
    Some(match op {
        "Add" | "AddV2" => Binary::Add(one),
        "Sub" => Binary::Sub(one),
        "Mul" => Binary::Mul,
        "RealDiv" | "Div" => Binary::Div,
        "FloorDiv" => Binary::DivFloor,
        "Maximum" => Binary::Maximum,
        "Minimum" => Binary::Minimum,
        "Pow" => Binary::Pow,
        "Less" => Binary::Lt,
        "LessEqual" => Binary::Le,
        "Greater" => Binary::Gt,
        "GreaterEqual" => Binary::Ge,
        "Equal" => Binary::Eq,
        "NotEqual" => Binary::Ne,
        "LogicalAnd" => Binary::LogicalAnd,
        "LogicalOr" => Binary::LogicalOr,
        _ => return None,
    })
}

/// A binary operator's operand given as one element in host memory (torch_npu passes a CPU
/// scalar so, e.g. `LessEqual(x, 0.5)` for `torch.ge(cpu_scalar, x)`): (its index, value).
/// Both in host memory is an error: one must be the device tensor the output follows.
fn host_scalar(op: &str, ins: &[Arg]) -> Result<Option<(usize, npu_emu::ops::Scalar)>, Error> {
    let mut found = None;
    for (k, a) in ins.iter().enumerate().take(2) {
        let dt = DType::from_acl(a.desc.dtype).ok_or_else(|| {
            Error::new(
                super::op::ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                format!("op type \"{op}\": input {k} has data type {}", a.desc.dtype),
            )
        })?;
        if a.shape().iter().product::<usize>() != 1 {
            continue;
        }
        if let Some(b) = host_bytes(op, a, &format!("input {k}"), dt.size())? {
            let s = npu_emu::ops::Scalar::from_bytes(dt, &b).ok_or_else(|| {
                Error::invalid(format!("op type \"{op}\": input {k} is unreadable"))
            })?;
            if found.is_some() {
                return Err(mismatch(
                    false,
                    format!("op type \"{op}\": both inputs are in host memory; one must be a device tensor"),
                ));
            }
            found = Some((k, s));
        }
    }
    Ok(found)
}

/// Whether `op` writes BOOL (the comparisons and the logical operators).
fn writes_bool(op: &str) -> bool {
    matches!(
        op,
        "Less"
            | "LessEqual"
            | "Greater"
            | "GreaterEqual"
            | "Equal"
            | "NotEqual"
            | "LogicalAnd"
            | "LogicalOr"
    )
}

/// Whether `op` is one of this file's operators.
pub(crate) fn handles(op: &str) -> bool {
    OPS.iter().any(|o| o.0 == op)
}

/// This file's operator types.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    OPS.iter().map(|o| o.0)
}

fn usize_list(op: &str, v: Vec<i64>, what: &str) -> Result<Vec<usize>, Error> {
    v.iter()
        .map(|&x| {
            usize::try_from(x).map_err(|_| {
                mismatch(
                    false,
                    format!("op type \"{op}\": {what} {v:?} holds a negative value"),
                )
            })
        })
        .collect()
}

/// A dimension attr or list entry in `-rank..rank`, made non-negative.
fn dim_of(op: &str, d: i64, rank: usize, what: &str) -> Result<usize, Error> {
    let r = rank.max(1) as i64;
    if d < -r || d >= r {
        return Err(attr_err(
            op,
            format!("{what} = {d} is out of range for a tensor of {rank} dimensions"),
        ));
    }
    Ok(((d + r) % r) as usize)
}

/// Validate one of the operators and enqueue it on the call's stream.
pub(crate) fn execute(api: &'static str, c: &Call) -> Result<(), Error> {
    let op_type = super::op::op_name(c)?;
    let &(op, kinds, no) = OPS
        .iter()
        .find(|o| o.0 == op_type)
        .ok_or_else(|| Error::invalid(format!("{op_type} is not a tensor operator")))?;
    match op {
        "RotatedNMS" => return execute_rotated_nms(api, c),
        "RotatedIou" | "RotatedOverlaps" => return execute_rotated_pairs(api, c, op),
        "DropOutGenMaskV3" | "DropOutDoMaskV3" => return execute_dropout(api, c, op),
        "ROIAlign" | "ROIAlignGrad" => return execute_roi_align(api, c, op),
        "GIoU" | "DIoU" | "CIoU" | "GIoUGrad" | "DIoUGrad" | "CIoUGrad" => {
            return execute_iou_family(api, c, op)
        }
        "AxpyWithSoftmaxAndDropOutDoMask" | "DropoutWithMulsAndSoftmaxGrad" => {
            return execute_softmax_dropout(api, c, op)
        }
        "CdistGrad"
        | "BoundingBoxEncode"
        | "BoundingBoxDecode"
        | "YoloBoxesEncode"
        | "AnchorResponseFlags"
        | "BatchMultiClassNonMaxSuppression"
        | "DeformableOffsets"
        | "DeformableOffsetsGrad" => return execute_detection(api, c, op, kinds, no),
        _ => {}
    }
    let ni = c.num_inputs as usize;
    let required = kinds.trim_end_matches('o').len();
    if ni < required || ni > kinds.len() {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\" has {} inputs{}, but numInputs = {ni}",
                kinds.len(),
                if required < kinds.len() {
                    format!(" (the last {} optional)", kinds.len() - required)
                } else {
                    String::new()
                }
            ),
        ));
    }
    if c.num_outputs as usize != no {
        return Err(mismatch(
            true,
            format!(
                "op type \"{op}\" has {no} output(s), but numOutputs = {}",
                c.num_outputs
            ),
        ));
    }
    // the tensors and the integer lists, each in call order
    let (mut ins, mut lists) = (Vec::new(), Vec::new());
    for (i, kind) in kinds.chars().take(ni).enumerate() {
        let a = input_arg(c, i)?;
        match (kind, a) {
            ('L', Some(a)) => lists.push(a),
            ('o', None) => {}
            (_, Some(a)) => ins.push(a),
            (_, None) => {
                return Err(mismatch(
                    false,
                    format!("op type \"{op}\": input {i} is required"),
                ))
            }
        }
    }
    let nt = ins.len();
    let outs: Vec<Arg> = (0..no)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let a = attrs_of(c.attr)?;
    let x_shape = ins[0].shape();
    let rank = x_shape.len();
    let list = |k: usize, what: &str| int_list(op, &lists[k], what);
    let top = match op {
        "Transpose" => TensorOp::Transpose {
            perm: list(0, "perm")?
                .into_iter()
                .map(|p| dim_of(op, p, rank, "perm entry"))
                .collect::<Result<_, _>>()?,
        },
        "BroadcastTo" => {
            let shape = usize_list(op, list(0, "shape")?, "shape")?;
            if shape != outs[0].shape() {
                return Err(mismatch(
                    true,
                    format!(
                        "op type \"{op}\": y {:?} is not the shape {shape:?} asked for",
                        outs[0].shape()
                    ),
                ));
            }
            TensorOp::BroadcastTo
        }
        "Slice" => {
            let offsets = usize_list(op, list(0, "offsets")?, "offsets")?;
            let size = list(1, "size")?;
            let y = outs[0].shape();
            for (d, &s) in size.iter().enumerate() {
                let want = if s == -1 {
                    x_shape
                        .get(d)
                        .copied()
                        .unwrap_or(0)
                        .saturating_sub(offsets.get(d).copied().unwrap_or(0))
                } else {
                    s.max(0) as usize
                };
                if y.get(d) != Some(&want) {
                    return Err(mismatch(
                        true,
                        format!("op type \"{op}\": y {y:?} is not the size {size:?} asked for"),
                    ));
                }
            }
            TensorOp::Slice { offsets }
        }
        "StridedSlice" => {
            let mut masks = [0i64; 5];
            for (m, key) in masks.iter_mut().zip([
                "begin_mask",
                "end_mask",
                "ellipsis_mask",
                "new_axis_mask",
                "shrink_axis_mask",
            ]) {
                *m = get_int(op, &a, key, Some(0))?;
            }
            let (axes, map, shape) = npu_emu::ops::nn_more::slice_plan(
                &x_shape,
                &list(0, "begin")?,
                &list(1, "end")?,
                &list(2, "strides")?,
                masks,
            )
            .map_err(|m| mismatch(false, format!("op type \"{op}\": {m}")))?;
            if shape != outs[0].shape() {
                return Err(mismatch(
                    true,
                    format!(
                        "op type \"{op}\": y {:?} is not the slice's shape {shape:?}",
                        outs[0].shape()
                    ),
                ));
            }
            TensorOp::StridedSlice { axes, map }
        }
        "Pad" => {
            let p = usize_list(op, list(0, "paddings")?, "paddings")?;
            if p.len() != 2 * rank {
                return Err(mismatch(
                    false,
                    format!(
                        "op type \"{op}\": paddings holds {} values; x {x_shape:?} needs a \
                         (before, after) pair per dimension ({})",
                        p.len(),
                        2 * rank
                    ),
                ));
            }
            TensorOp::Pad {
                pads: p.chunks(2).map(|w| (w[0], w[1])).collect(),
            }
        }
        "ScaledMaskedSoftmax" | "ScaledMaskedSoftmaxGrad" => TensorOp::ScaledMaskedSoftmax {
            scale: get_num(op, &a, "scale", 1.0)?,
            triu: get_int(op, &a, "fixed_triu_mask", Some(0))? != 0,
            grad: op == "ScaledMaskedSoftmaxGrad",
        },
        "NonMaxSuppressionV4" => TensorOp::NmsV4,
        "RandomChoiceWithMask" => {
            let count = get_int(op, &a, "count", None)?;
            if count <= 0 {
                return Err(attr_err(
                    op,
                    format!("attr count = {count} must be positive"),
                ));
            }
            let (s1, s2) = (
                get_int(op, &a, "seed", Some(0))?,
                get_int(op, &a, "seed2", Some(0))?,
            );
            TensorOp::RandomChoiceWithMask {
                count: count as usize,
                seed: if s1 == 0 && s2 == 0 {
                    fresh_seed()
                } else {
                    (s1 as u64) << 32 ^ s2 as u64
                },
            }
        }
        "Iou" => TensorOp::Iou {
            iof: match get_str(&a, "mode", "iou") {
                "iou" => false,
                "iof" => true,
                m => {
                    return Err(attr_err(
                        op,
                        format!("attr mode \"{m}\" is not \"iou\" or \"iof\""),
                    ))
                }
            },
            eps: get_num(op, &a, "eps", 1.0)?,
        },
        "Swish" | "SwishGrad" => {
            let scale = get_num(op, &a, "scale", 1.0)? as f32;
            if op == "Swish" {
                TensorOp::Swish { scale }
            } else {
                TensorOp::SwishGrad { scale }
            }
        }
        "Mish" => TensorOp::Mish,
        _ if binary_of(op).is_some() => TensorOp::Binary {
            op: binary_of(op).expect("checked"),
            host: host_scalar(op, &ins)?,
        },
        "Fill" => {
            let dims = usize_list(op, list(0, "dims")?, "dims")?;
            let y = outs[0].shape();
            let n: usize = dims.iter().product();
            if n != y.iter().product::<usize>() {
                return Err(mismatch(
                    true,
                    format!("op type \"{op}\": y {y:?} is not the shape {dims:?} asked for"),
                ));
            }
            let v = &ins[0];
            let dt = DType::from_acl(v.desc.dtype).ok_or_else(|| {
                Error::new(
                    super::op::ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                    format!("op type \"{op}\": value has data type {}", v.desc.dtype),
                )
            })?;
            let value = host_bytes(op, v, "value", dt.size())?.map(|b| {
                // SAFETY: `b` holds one element of `dt`.
                unsafe {
                    (
                        npu_emu::ops::elem::read_f64(dt, b.as_ptr()),
                        npu_emu::ops::elem::read_i64(dt, b.as_ptr()),
                    )
                }
            });
            if value.is_some() {
                return enqueue_fill(api, c, op, &outs[0], value);
            }
            TensorOp::Fill { value: None }
        }
        "MishGrad" => TensorOp::MishGrad,
        "ArgMaxWithValue" | "ArgMinWithValue" => TensorOp::ArgWithValue {
            max: op == "ArgMaxWithValue",
            dim: dim_of(
                op,
                get_int(op, &a, "dimension", None)?,
                rank,
                "attr dimension",
            )?,
            keep_dims: get_int(op, &a, "keep_dims", Some(0))? != 0,
        },
        "BatchMatMul" => TensorOp::BatchMatMul {
            adj1: get_int(op, &a, "adj_x1", Some(0))? != 0,
            adj2: get_int(op, &a, "adj_x2", Some(0))? != 0,
        },
        "ConfusionTransposeD" => {
            let perm_raw = get_list(op, &a, "perm")?;
            let shape = usize_list(op, get_list(op, &a, "shape")?, "attr shape")?;
            let transpose_first = get_int(op, &a, "transpose_first", Some(0))? != 0;
            let prank = if transpose_first { rank } else { shape.len() };
            TensorOp::ConfusionTranspose {
                perm: perm_raw
                    .into_iter()
                    .map(|p| dim_of(op, p, prank, "attr perm entry"))
                    .collect::<Result<_, _>>()?,
                shape,
                transpose_first,
            }
        }
        "SortV2" => TensorOp::Sort {
            axis: dim_of(op, get_int(op, &a, "axis", Some(-1))?, rank, "attr axis")?,
            descending: get_int(op, &a, "descending", Some(0))? != 0,
        },
        "LayerNormV3" => TensorOp::LayerNorm {
            begin: dim_of(
                op,
                get_int(op, &a, "begin_norm_axis", Some(0))?,
                rank,
                "attr begin_norm_axis",
            )?,
            eps: get_num(op, &a, "epsilon", 1e-7)?,
        },
        "SoftmaxCrossEntropyWithLogits" => TensorOp::SoftmaxCrossEntropy,
        "OneHotD" => {
            let depth = get_int(op, &a, "depth", None)?;
            let depth = usize::try_from(depth)
                .map_err(|_| attr_err(op, format!("attr depth = {depth} must be 0 or more")))?;
            TensorOp::OneHot {
                axis: dim_of(
                    op,
                    get_int(op, &a, "axis", Some(-1))?,
                    rank + 1,
                    "attr axis",
                )?,
                depth,
            }
        }
        "Conv2D" | "Conv2DBackpropInput" | "Conv2DBackpropFilter" => {
            let format = get_str(&a, "data_format", "NCHW");
            if format != "NCHW" {
                return Err(attr_err(
                    op,
                    format!("attr data_format = \"{format}\" is not modelled (only \"NCHW\")"),
                ));
            }
            let dil = match a.get("dilations") {
                None => vec![1, 1, 1, 1],
                Some(_) => get_list(op, &a, "dilations")?,
            };
            let strides = get_list(op, &a, "strides")?;
            let pads = get_list(op, &a, "pads")?;
            let groups = get_int(op, &a, "groups", Some(1))?;
            let y = outs[0].shape();
            let sizes = |k: usize, what: &str| -> Result<Vec<usize>, Error> {
                let v = usize_list(op, list(k, what)?, what)?;
                if v != y {
                    return Err(mismatch(
                        true,
                        format!("op type \"{op}\": y {y:?} is not the {what} {v:?} asked for"),
                    ));
                }
                Ok(v)
            };
            let (kind, xs, ws, ys) = match op {
                "Conv2D" => (
                    ConvKind::Forward,
                    x_shape.clone(),
                    ins[1].shape(),
                    y.clone(),
                ),
                "Conv2DBackpropInput" => (
                    ConvKind::BackpropInput,
                    sizes(0, "input_size")?,
                    x_shape.clone(),
                    ins[1].shape(),
                ),
                _ => (
                    ConvKind::BackpropFilter,
                    x_shape.clone(),
                    sizes(0, "filter_size")?,
                    ins[1].shape(),
                ),
            };
            let geo = conv2d_geo(&xs, &ws, &ys, &strides, &pads, &dil, groups)
                .map_err(|m| mismatch(false, format!("op type \"{op}\": {m}")))?;
            TensorOp::Conv { kind, geo }
        }
        "ReduceSum" => {
            let mut axes: Vec<usize> = list(0, "axes")?
                .into_iter()
                .map(|d| dim_of(op, d, rank, "axes entry"))
                .collect::<Result<_, _>>()?;
            if axes.is_empty() {
                // no axes: every dimension (CANN's noop_with_empty_axes false)
                axes = (0..rank).collect();
            }
            axes.sort_unstable();
            axes.dedup();
            TensorOp::ReduceSum {
                axes,
                keep_dims: get_int(op, &a, "keep_dims", Some(0))? != 0,
            }
        }
        "LpNormReduceV2" => {
            let mut axes: Vec<usize> = match a.get("axes") {
                None => vec![],
                Some(_) => get_list(op, &a, "axes")?,
            }
            .into_iter()
            .map(|d| dim_of(op, d, rank, "attr axes entry"))
            .collect::<Result<_, _>>()?;
            if axes.is_empty() {
                axes = (0..rank).collect();
            }
            axes.sort_unstable();
            axes.dedup();
            TensorOp::LpNormReduce {
                p: get_num(op, &a, "p", 2.0)?,
                axes,
                keep_dims: get_int(op, &a, "keepdim", Some(0))? != 0,
            }
        }
        "LpNormUpdateV2" => TensorOp::LpNormUpdate {
            p: get_num(op, &a, "p", 2.0)?,
            eps: get_num(op, &a, "epsilon", 0.0)?,
        },
        "ArgMaxGrad" => TensorOp::ScatterElements {
            axis: dim_of(
                op,
                get_int(op, &a, "dimension", None)?,
                rank,
                "attr dimension",
            )?,
        },
        _ => {
            let reduction = get_str(&a, "reduction", "none");
            if reduction != "none" {
                return Err(attr_err(
                    op,
                    format!("attr reduction = \"{reduction}\" is not modelled (only \"none\")"),
                ));
            }
            TensorOp::ScatterElements {
                axis: dim_of(op, get_int(op, &a, "axis", Some(0))?, rank, "attr axis")?,
            }
        }
    };
    let in_shapes: Vec<Vec<usize>> = ins[..nt].iter().map(Arg::shape).collect();
    let out_shapes: Vec<Vec<usize>> = outs.iter().map(Arg::shape).collect();
    let ir: Vec<&[usize]> = in_shapes.iter().map(|s| s.as_slice()).collect();
    let or: Vec<&[usize]> = out_shapes.iter().map(|s| s.as_slice()).collect();
    top.check(&ir, &or)
        .map_err(|m| mismatch(false, format!("op type \"{op}\": {m}")))?;
    let host = match &top {
        TensorOp::Binary { host, .. } => host.map(|(k, _)| k),
        _ => None,
    };
    let mut tensors = Vec::with_capacity(nt);
    for (i, t) in ins[..nt].iter().enumerate() {
        let dts = dtype_rule(op, false, i).0;
        tensors.push(if host == Some(i) {
            None
        } else {
            Some(t.tensor(op, format!("input {i}"), false, dts)?)
        });
    }
    let mut out_tensors = Vec::with_capacity(no);
    for (i, t) in outs.iter().enumerate() {
        let dts = dtype_rule(op, true, i).0;
        out_tensors.push(t.tensor(op, format!("output {i}"), true, dts)?);
    }
    same_dtype(op, &tensors, &out_tensors)?;
    let elementwise = matches!(op, "Swish" | "SwishGrad" | "Mish" | "MishGrad");
    // (a binary operator's inputs may broadcast, so they are not converted as one shape)
    enqueue(
        api,
        op,
        c,
        elementwise,
        tensors,
        out_tensors,
        move |i, o| {
            let views: Vec<&npu_emu::ops::View> = i.iter().flatten().copied().collect();
            top.run(&views, o)
        },
    )
}

/// A Fill whose value was a host scalar: only the output is a device tensor.
fn enqueue_fill(
    api: &'static str,
    c: &Call,
    op: &'static str,
    y: &Arg,
    value: Option<(f64, i64)>,
) -> Result<(), Error> {
    let out = y.tensor(op, "output 0".into(), true, ANY)?;
    let top = TensorOp::Fill { value };
    enqueue(api, op, c, false, vec![], vec![out], move |_, o| {
        top.run(&[&o[0]], o)
    })
}

/// The data types tensor `i` of a side may have, and whether it shares the call's one data
/// type with the other such tensors.
fn dtype_rule(op: &str, output: bool, i: usize) -> (&'static [DType], bool) {
    match (op, output, i) {
        (_, true, _) if writes_bool(op) => (BOOL, false),
        ("LogicalAnd" | "LogicalOr", false, _) => (BOOL, true),
        ("ScatterElements" | "ArgMaxGrad", false, 1) => (INDEX, false),
        ("ArgMaxWithValue" | "ArgMinWithValue", true, 0) => (INDEX, false),
        ("OneHotD", false, 0) => (ONE_HOT_INDEX, false),
        ("OneHotD", true, _) => (ANY, false),
        ("RandomChoiceWithMask", false, _) => (BOOL, false),
        ("RotatedNMS", false, 0 | 1) | ("RotatedNMS", true, 0) => (&[DType::F32, DType::F16], true),
        ("RotatedNMS", _, _) => (INDEX, false),
        ("NonMaxSuppressionV4", false, 0 | 1 | 3 | 4) => (FLOATS, false),
        ("NonMaxSuppressionV4", _, _) => (INDEX, false),
        ("RandomChoiceWithMask", true, 0) => (INDEX, false),
        ("RandomChoiceWithMask", true, _) => (BOOL, false),
        ("ScaledMaskedSoftmax", false, 1) | ("ScaledMaskedSoftmaxGrad", false, 2) => (MASK, false),
        ("ScaledMaskedSoftmax" | "ScaledMaskedSoftmaxGrad", _, _) => (FLOATS, false),
        (
            "Swish"
            | "SwishGrad"
            | "Mish"
            | "MishGrad"
            | "BatchMatMul"
            | "LayerNormV3"
            | "SoftmaxCrossEntropyWithLogits"
            | "Iou"
            | "LpNormReduceV2"
            | "LpNormUpdateV2",
            _,
            _,
        ) => (FLOATS, true),
        _ => (ANY, true),
    }
}

/// The data tensors of a call share one data type (indices excepted: [`dtype_rule`]).
fn same_dtype(op: &str, ins: &[Option<Tensor>], outs: &[Tensor]) -> Result<(), Error> {
    let mut first: Option<&Tensor> = None;
    let all = ins
        .iter()
        .enumerate()
        .filter_map(|(k, t)| t.as_ref().map(|t| (false, k, t)))
        .chain(outs.iter().enumerate().map(|(k, t)| (true, k, t)));
    for (output, k, t) in all {
        if !dtype_rule(op, output, k).1 {
            continue;
        }
        match first {
            None => first = Some(t),
            Some(f) if f.dtype != t.dtype => {
                return Err(mismatch(
                    output,
                    format!(
                        "op type \"{op}\": {} is {}, but {} is {}",
                        t.name,
                        t.dtype.name(),
                        f.name,
                        f.dtype.name()
                    ),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// A seed for an operator whose seeds are both 0 ("random"): the clock and a per-process
/// counter, so that two calls draw differently.
fn fresh_seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ CALLS
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// RotatedNMS: the kept count depends on the data, so the call runs the kernel, waits for
/// its stream, and writes the count into both output descriptors' first dimension (what
/// torch_npu's `OpCommand::Sync` reads back to resize its outputs).
fn execute_rotated_nms(api: &'static str, c: &Call) -> Result<(), Error> {
    use npu_emu::kernels::rotated::{rotated_nms, RotatedNms};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let op = "RotatedNMS";
    let ni = c.num_inputs as usize;
    if !(2..=3).contains(&ni) || c.num_outputs != 2 {
        return Err(mismatch(
            ni >= 2,
            format!(
                "op type \"{op}\" has inputs boxes, scores, labels (optional) and outputs \
                 selected_detections, keep_indices, but numInputs = {ni}, numOutputs = {}",
                c.num_outputs
            ),
        ));
    }
    let boxes = input_arg(c, 0)?.ok_or_else(|| {
        mismatch(
            false,
            format!("op type \"{op}\": input 0 (boxes) is required"),
        )
    })?;
    let scores = input_arg(c, 1)?.ok_or_else(|| {
        mismatch(
            false,
            format!("op type \"{op}\": input 1 (scores) is required"),
        )
    })?;
    let labels = if ni == 3 { input_arg(c, 2)? } else { None };
    let outs: Vec<Arg> = (0..2)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let a = attrs_of(c.attr)?;
    if !a.contains_key("iou_threshold") {
        return Err(attr_err(op, "attr iou_threshold is required".into()));
    }
    let mode = get_int(op, &a, "mode", Some(0))?;
    if mode != 0 && mode != 1 {
        return Err(attr_err(
            op,
            format!("attr mode = {mode}: 0 (x, y, w, h, angle) or 1 (x1, y1, x2, y2, angle)"),
        ));
    }
    if get_int(op, &a, "is_angle", Some(1))? == 0 {
        return Err(attr_err(
            op,
            "attr is_angle = false is not modelled: the boxes carry an angle".into(),
        ));
    }
    let p = RotatedNms {
        iou_threshold: get_num(op, &a, "iou_threshold", 0.0)?,
        score_threshold: get_num(op, &a, "score_threshold", f64::NEG_INFINITY)?,
        max_output: get_int(op, &a, "max_output_size", Some(-1))?,
        corners: mode == 1,
    };
    let (bs, ss) = (boxes.shape(), scores.shape());
    let n = bs.first().copied().unwrap_or(0);
    if bs.len() != 2 || bs[1] != 5 || ss != [n] {
        return Err(mismatch(
            false,
            format!("op type \"{op}\": boxes {bs:?} must be [n, 5] and scores {ss:?} [n]"),
        ));
    }
    let (o0, o1) = (outs[0].shape(), outs[1].shape());
    if o0 != [n, 5] || o1 != [n] {
        return Err(mismatch(
            true,
            format!(
                "op type \"{op}\": selected_detections {o0:?} must be [{n}, 5] and keep_indices \
                 {o1:?} [{n}] (the kept rows are fewer: the descriptors are shrunk after the run)"
            ),
        ));
    }
    const BOX: &[DType] = &[DType::F32, DType::F16];
    let mut tensors = vec![
        Some(boxes.tensor(op, "input 0 (boxes)".into(), false, BOX)?),
        Some(scores.tensor(op, "input 1 (scores)".into(), false, BOX)?),
    ];
    if let Some(l) = &labels {
        tensors.push(Some(l.tensor(
            op,
            "input 2 (labels)".into(),
            false,
            INDEX,
        )?));
    }
    let out_tensors = vec![
        outs[0].tensor(op, "output 0 (selected_detections)".into(), true, BOX)?,
        outs[1].tensor(op, "output 1 (keep_indices)".into(), true, INDEX)?,
    ];
    same_dtype(op, &tensors, &out_tensors[..1])?;
    let kept = Arc::new(AtomicUsize::new(0));
    let k2 = kept.clone();
    enqueue(api, op, c, false, tensors, out_tensors, move |i, o| {
        let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
        let m = rotated_nms(
            req(0)?,
            req(1)?,
            i.get(2).copied().flatten(),
            &p,
            &o[0],
            &o[1],
        )?;
        k2.store(m, Ordering::Release);
        Ok(())
    })?;
    crate::runtime::get()?.stream(c.stream)?.synchronize(None)?;
    let m = kept.load(Ordering::Acquire) as i64;
    for (i, dims) in [vec![m, 5], vec![m]].into_iter().enumerate() {
        // SAFETY: `outputDesc` holds `numOutputs` (2) entries, checked non-NULL by `arg`.
        let d = unsafe { c.output_desc.add(i).read_unaligned() };
        super::tensor_desc::with_desc(d, &format!("outputDesc[{i}]"), |t| {
            t.dims = dims.clone();
            if !t.storage_dims.is_empty() {
                t.storage_dims = dims;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// RotatedIou / RotatedOverlaps: every box of `boxes` against every box of `query_boxes`,
/// batch by batch (`npu_emu::kernels::rotated`). RotatedIou's `v_threshold` / `e_threshold`
/// (torch_npu sets both as an attr named `value`) are not read.
fn execute_rotated_pairs(api: &'static str, c: &Call, op: &'static str) -> Result<(), Error> {
    use npu_emu::kernels::rotated::rotated_pairs;
    if c.num_inputs != 2 || c.num_outputs != 1 {
        return Err(mismatch(
            c.num_inputs == 2,
            format!(
                "op type \"{op}\" has inputs boxes, query_boxes and one output, but numInputs = \
                 {}, numOutputs = {}",
                c.num_inputs, c.num_outputs
            ),
        ));
    }
    let need = |i: usize, name: &str| {
        input_arg(c, i)?.ok_or_else(|| {
            mismatch(
                false,
                format!("op type \"{op}\": input {i} ({name}) is required"),
            )
        })
    };
    let (boxes, query) = (need(0, "boxes")?, need(1, "query_boxes")?);
    let out = arg(c, 0, true)?.ok_or_else(|| Error::invalid("outputDesc[0] is NULL"))?;
    let a = attrs_of(c.attr)?;
    let trans = get_int(op, &a, "trans", Some(0))? != 0;
    let ratio = if op == "RotatedIou" {
        if get_int(op, &a, "is_cross", Some(1))? == 0 {
            return Err(attr_err(
                op,
                "attr is_cross = false (one-to-one pairs) is not modelled".into(),
            ));
        }
        Some(match get_str(&a, "mode", "iou") {
            "iou" => false,
            "iof" => true,
            m => {
                return Err(attr_err(
                    op,
                    format!("attr mode = \"{m}\": \"iou\" or \"iof\""),
                ))
            }
        })
    } else {
        None
    };
    let (bs, qs, os) = (boxes.shape(), query.shape(), out.shape());
    if !(bs.len() == 3 && qs.len() == 3 && bs[1] == 5 && qs[1] == 5 && bs[0] == qs[0]) {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\": boxes {bs:?} must be [B, 5, N] and query_boxes {qs:?} \
                 [B, 5, K]"
            ),
        ));
    }
    if os != [bs[0], bs[2], qs[2]] {
        return Err(mismatch(
            true,
            format!(
                "op type \"{op}\": the output {os:?} must be [B, N, K] = [{}, {}, {}]",
                bs[0], bs[2], qs[2]
            ),
        ));
    }
    const F: &[DType] = &[DType::F32];
    let tensors = vec![
        Some(boxes.tensor(op, "input 0 (boxes)".into(), false, F)?),
        Some(query.tensor(op, "input 1 (query_boxes)".into(), false, F)?),
    ];
    let outs = vec![out.tensor(op, "output 0".into(), true, F)?];
    enqueue(api, op, c, false, tensors, outs, move |i, o| {
        let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
        rotated_pairs(req(0)?, req(1)?, trans, ratio, &o[0])
    })
}

/// DropOutGenMaskV3 / DropOutDoMaskV3 (`npu_emu::kernels::dropout`): the keep probability is
/// a host scalar (torch_npu passes it host-compile-dependent) or a one-element device tensor.
fn execute_dropout(api: &'static str, c: &Call, op: &'static str) -> Result<(), Error> {
    use npu_emu::kernels::dropout::{do_byte_mask, gen_byte_mask, read_keep};
    let gen = op == "DropOutGenMaskV3";
    if c.num_inputs != if gen { 2 } else { 3 } || c.num_outputs != 1 {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\" has inputs {} and one output, but numInputs = {}, numOutputs = {}",
                if gen { "shape, prob" } else { "x, mask, keep_prob" },
                c.num_inputs,
                c.num_outputs
            ),
        ));
    }
    let need = |i: usize, name: &str| {
        input_arg(c, i)?.ok_or_else(|| {
            mismatch(
                false,
                format!("op type \"{op}\": input {i} ({name}) is required"),
            )
        })
    };
    let out = arg(c, 0, true)?.ok_or_else(|| Error::invalid("outputDesc[0] is NULL"))?;
    let prob = need(if gen { 1 } else { 2 }, "keep_prob")?;
    let prob_dt = DType::from_acl(prob.desc.dtype)
        .filter(|t| FLOATS.contains(t))
        .ok_or_else(|| {
            Error::new(
                super::op::ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                format!(
                    "op type \"{op}\": the keep probability has data type {} (FLOAT, FLOAT16 or \
                     BFLOAT16)",
                    prob.desc.dtype
                ),
            )
        })?;
    if prob.shape().iter().product::<usize>() != 1 {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\": the keep probability {:?} must hold one value",
                prob.shape()
            ),
        ));
    }
    let host_keep = host_bytes(op, &prob, "keep_prob", prob_dt.size())?.map(|b| {
        // SAFETY: `b` holds one element of `prob_dt`.
        unsafe { npu_emu::ops::elem::read_f64(prob_dt, b.as_ptr()) }
    });
    if let Some(k) = host_keep {
        if !(0.0..=1.0).contains(&k) {
            return Err(mismatch(
                false,
                format!("op type \"{op}\": the keep probability {k} is not within [0, 1]"),
            ));
        }
    }
    let prob_tensor = if host_keep.is_none() {
        Some(prob.tensor(op, "keep_prob".into(), false, FLOATS)?)
    } else {
        None
    };
    const MASK_OUT: &[DType] = &[DType::U8, DType::Bool];
    if gen {
        let shape = usize_list(op, int_list(op, &need(0, "shape")?, "shape")?, "shape")?;
        let n: usize = shape.iter().product();
        let m: usize = out.shape().iter().product();
        if m < n {
            return Err(mismatch(
                true,
                format!(
                    "op type \"{op}\": the mask {:?} holds {m} bytes, but the shape {shape:?} \
                     has {n} elements (one byte each)",
                    out.shape()
                ),
            ));
        }
        let a = attrs_of(c.attr)?;
        let (s1, s2) = (
            get_int(op, &a, "seed", Some(0))?,
            get_int(op, &a, "seed2", Some(0))?,
        );
        let (seed, seed2) = if s1 == 0 && s2 == 0 {
            (fresh_seed(), 0)
        } else {
            (s1 as u64, s2 as u64)
        };
        let y = out.tensor(op, "output 0 (y)".into(), true, MASK_OUT)?;
        return enqueue(
            api,
            op,
            c,
            false,
            vec![prob_tensor],
            vec![y],
            move |i, o| {
                let keep = match host_keep {
                    Some(k) => k,
                    None => read_keep(i[0].ok_or("keep_prob is missing")?)?,
                };
                gen_byte_mask(seed, seed2, keep, &o[0])
            },
        );
    }
    let (x, mask) = (need(0, "x")?, need(1, "mask")?);
    let (xs, ms) = (x.shape(), mask.shape());
    let n: usize = xs.iter().product();
    if ms.iter().product::<usize>() < n {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\": the mask {ms:?} holds fewer bytes than x {xs:?} has elements \
                 (one byte each)"
            ),
        ));
    }
    if out.shape() != xs {
        return Err(mismatch(
            true,
            format!(
                "op type \"{op}\": y {:?} must be x's shape {xs:?}",
                out.shape()
            ),
        ));
    }
    let xt = x.tensor(op, "input 0 (x)".into(), false, FLOATS)?;
    let mt = mask.tensor(op, "input 1 (mask)".into(), false, MASK_OUT)?;
    let yt = out.tensor(op, "output 0 (y)".into(), true, FLOATS)?;
    for (t, name) in [(yt.dtype, "y"), (prob_dt, "keep_prob")] {
        if t != xt.dtype {
            return Err(mismatch(
                name == "y",
                format!(
                    "op type \"{op}\": {name} is {}, but x is {}",
                    t.name(),
                    xt.dtype.name()
                ),
            ));
        }
    }
    enqueue(
        api,
        op,
        c,
        false,
        vec![Some(xt), Some(mt), prob_tensor],
        vec![yt],
        move |i, o| {
            let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
            let keep = match host_keep {
                Some(k) => k,
                None => read_keep(req(2)?)?,
            };
            do_byte_mask(req(0)?, req(1)?, keep, &o[0])
        },
    )
}

/// ROIAlign / ROIAlignGrad (`npu_emu::kernels::roi_align`).
fn execute_roi_align(api: &'static str, c: &Call, op: &'static str) -> Result<(), Error> {
    use npu_emu::kernels::roi_align::{roi_align, roi_align_grad, RoiAlign};
    let grad = op == "ROIAlignGrad";
    let ni = c.num_inputs as usize;
    if !(2..=3).contains(&ni) || c.num_outputs != 1 {
        return Err(mismatch(
            ni >= 2,
            format!(
                "op type \"{op}\" has inputs {}, rois, rois_n (optional) and one output, but \
                 numInputs = {ni}, numOutputs = {}",
                if grad { "ydiff" } else { "features" },
                c.num_outputs
            ),
        ));
    }
    let need = |i: usize, name: &str| {
        input_arg(c, i)?.ok_or_else(|| {
            mismatch(
                false,
                format!("op type \"{op}\": input {i} ({name}) is required"),
            )
        })
    };
    let (x, rois) = (
        need(0, if grad { "ydiff" } else { "features" })?,
        need(1, "rois")?,
    );
    let out = arg(c, 0, true)?.ok_or_else(|| Error::invalid("outputDesc[0] is NULL"))?;
    let a = attrs_of(c.attr)?;
    for key in ["spatial_scale", "pooled_height", "pooled_width"] {
        if !a.contains_key(key) {
            return Err(attr_err(op, format!("attr {key} is required")));
        }
    }
    let positive = |key: &str| -> Result<usize, Error> {
        let v = get_int(op, &a, key, None)?;
        usize::try_from(v)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| attr_err(op, format!("attr {key} = {v} must be positive")))
    };
    let (pooled_h, pooled_w) = (positive("pooled_height")?, positive("pooled_width")?);
    let sample_num = get_int(op, &a, "sample_num", Some(2))?;
    let roi_end_mode = get_int(op, &a, "roi_end_mode", Some(1))?;
    if sample_num < 0 || !(0..=3).contains(&roi_end_mode) {
        return Err(attr_err(
            op,
            format!(
                "attr sample_num = {sample_num} must be 0 or more and roi_end_mode = \
                 {roi_end_mode} one of 0-3"
            ),
        ));
    }
    let max_pool = match get_str(&a, "pool_mode", "avg") {
        "avg" => false,
        "max" if !grad => true,
        m => {
            return Err(attr_err(
                op,
                format!(
                    "attr pool_mode = \"{m}\" is not \"avg\"{}",
                    if grad { "" } else { " or \"max\"" }
                ),
            ))
        }
    };
    let p = RoiAlign {
        spatial_scale: get_num(op, &a, "spatial_scale", 1.0)?,
        pooled_h,
        pooled_w,
        sample_num: sample_num as usize,
        roi_end_mode,
        max_pool,
    };
    let (xs, rs, os) = (x.shape(), rois.shape(), out.shape());
    if rs.len() != 2 || rs[1] != 5 {
        return Err(mismatch(
            false,
            format!("op type \"{op}\": rois {rs:?} must be [K, 5] (batch index, x1, y1, x2, y2)"),
        ));
    }
    let k = rs[0];
    if grad {
        let want = usize_list(op, get_list(op, &a, "xdiff_shape")?, "attr xdiff_shape")?;
        if want.len() != 4 || os != want {
            return Err(mismatch(
                true,
                format!(
                    "op type \"{op}\": xdiff {os:?} must be attr xdiff_shape {want:?} ([N, C, H, W])"
                ),
            ));
        }
        if xs != [k, want[1], pooled_h, pooled_w] {
            return Err(mismatch(
                false,
                format!(
                    "op type \"{op}\": ydiff {xs:?} must be [K, C, pooled_height, pooled_width] \
                     = [{k}, {}, {pooled_h}, {pooled_w}] (are pooled_height and pooled_width \
                     swapped?)",
                    want[1]
                ),
            ));
        }
    } else {
        if xs.len() != 4 {
            return Err(mismatch(
                false,
                format!("op type \"{op}\": features {xs:?} must be [N, C, H, W]"),
            ));
        }
        if os != [k, xs[1], pooled_h, pooled_w] {
            return Err(mismatch(
                true,
                format!(
                    "op type \"{op}\": y {os:?} must be [K, C, pooled_height, pooled_width] = \
                     [{k}, {}, {pooled_h}, {pooled_w}]",
                    xs[1]
                ),
            ));
        }
    }
    const F: &[DType] = &[DType::F32, DType::F16];
    let ins = vec![
        Some(x.tensor(op, "input 0".into(), false, F)?),
        Some(rois.tensor(op, "input 1 (rois)".into(), false, F)?),
    ];
    let outs = vec![out.tensor(op, "output 0".into(), true, F)?];
    same_dtype(op, &ins, &outs)?;
    enqueue(api, op, c, false, ins, outs, move |i, o| {
        let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
        if grad {
            roi_align_grad(&p, req(0)?, req(1)?, &o[0])
        } else {
            roi_align(&p, req(0)?, req(1)?, &o[0])
        }
    })
}

/// AxpyWithSoftmaxAndDropOutDoMask / DropoutWithMulsAndSoftmaxGrad
/// (`npu_emu::kernels::dropout`): two tensors of one shape and float type and a byte mask.
fn execute_softmax_dropout(api: &'static str, c: &Call, op: &'static str) -> Result<(), Error> {
    use npu_emu::kernels::dropout::{axpy_softmax_do_mask, dropout_muls_softmax_grad};
    let fwd = op == "AxpyWithSoftmaxAndDropOutDoMask";
    let names: [&str; 3] = if fwd {
        ["x1", "x2", "mask"]
    } else {
        ["y_grad", "mask", "softmax_output"]
    };
    let no = if fwd { 2 } else { 1 };
    if c.num_inputs != 3 || c.num_outputs != no {
        return Err(mismatch(
            c.num_inputs == 3,
            format!(
                "op type \"{op}\" has inputs {} and {no} output(s), but numInputs = {}, \
                 numOutputs = {}",
                names.join(", "),
                c.num_inputs,
                c.num_outputs
            ),
        ));
    }
    let mut args = Vec::with_capacity(3);
    for (i, name) in names.iter().enumerate() {
        args.push(input_arg(c, i)?.ok_or_else(|| {
            mismatch(
                false,
                format!("op type \"{op}\": input {i} ({name}) is required"),
            )
        })?);
    }
    let outs: Vec<Arg> = (0..no as usize)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let a = attrs_of(c.attr)?;
    for key in ["alpha", "input_keep_prob"] {
        if !a.contains_key(key) {
            return Err(attr_err(op, format!("attr {key} is required")));
        }
    }
    let alpha = get_num(op, &a, "alpha", 1.0)?;
    let keep = get_num(op, &a, "input_keep_prob", 1.0)?;
    if !(0.0..=1.0).contains(&keep) {
        return Err(attr_err(
            op,
            format!("attr input_keep_prob = {keep} is not within [0, 1]"),
        ));
    }
    let mi = if fwd { 2 } else { 1 };
    let data: Vec<usize> = (0..3).filter(|&i| i != mi).collect();
    let shape = args[data[0]].shape();
    for &i in &data[1..] {
        if args[i].shape() != shape {
            return Err(mismatch(
                false,
                format!(
                    "op type \"{op}\": {} {:?} is not {} {shape:?}",
                    names[i],
                    args[i].shape(),
                    names[data[0]]
                ),
            ));
        }
    }
    for (k, o) in outs.iter().enumerate() {
        if o.shape() != shape {
            return Err(mismatch(
                true,
                format!(
                    "op type \"{op}\": output {k} {:?} must be {shape:?}",
                    o.shape()
                ),
            ));
        }
    }
    let n: usize = shape.iter().product();
    if args[mi].shape().iter().product::<usize>() < n {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\": the mask {:?} holds fewer bytes than the {n} elements of \
                 {shape:?} (one byte each)",
                args[mi].shape()
            ),
        ));
    }
    let axes = get_list(op, &a, if fwd { "axis" } else { "axes" })?;
    let [axis] = axes[..] else {
        return Err(attr_err(
            op,
            format!(
                "attr {} = {axes:?}: one dimension is modelled",
                if fwd { "axis" } else { "axes" }
            ),
        ));
    };
    let axis = dim_of(op, axis, shape.len(), "the softmax axis")?;
    let mut ins = Vec::with_capacity(3);
    for (i, t) in args.iter().enumerate() {
        let dts = if i == mi { MASK } else { FLOATS };
        ins.push(Some(t.tensor(
            op,
            format!("input {i} ({})", names[i]),
            false,
            dts,
        )?));
    }
    let out_t: Vec<Tensor> = outs
        .iter()
        .enumerate()
        .map(|(k, o)| o.tensor(op, format!("output {k}"), true, FLOATS))
        .collect::<Result<_, _>>()?;
    let float_ins: Vec<Option<Tensor>> = data.iter().map(|&i| ins[i].clone()).collect();
    same_dtype(op, &float_ins, &out_t)?;
    enqueue(api, op, c, false, ins, out_t, move |i, o| {
        let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
        if fwd {
            axpy_softmax_do_mask(req(0)?, req(1)?, req(2)?, alpha, keep, axis, &o[0], &o[1])
        } else {
            dropout_muls_softmax_grad(req(0)?, req(1)?, req(2)?, alpha, keep, axis, &o[0])
        }
    })
}

/// GIoU / DIoU / CIoU and their gradients (`npu_emu::kernels::iou_family`).
fn execute_iou_family(api: &'static str, c: &Call, op: &'static str) -> Result<(), Error> {
    use npu_emu::kernels::iou_family::{iou_family, iou_family_grad, Kind};
    let grad = op.ends_with("Grad");
    let kind = match &op[..1] {
        "G" => Kind::G,
        "D" => Kind::D,
        _ => Kind::C,
    };
    let names: &[&str] = if grad {
        &["dy", "bboxes", "gtboxes"]
    } else {
        &["bboxes", "gtboxes"]
    };
    let no = if grad || kind == Kind::C { 2 } else { 1 };
    // CIoUGrad's fourth input (atan_sub) is optional and not read: it is recomputed
    let extra = usize::from(op == "CIoUGrad" && c.num_inputs == 4);
    if c.num_inputs as usize != names.len() + extra || c.num_outputs as usize != no {
        return Err(mismatch(
            c.num_inputs as usize == names.len(),
            format!(
                "op type \"{op}\" has inputs {} and {no} output(s), but numInputs = {}, \
                 numOutputs = {}",
                names.join(", "),
                c.num_inputs,
                c.num_outputs
            ),
        ));
    }
    let mut args = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        args.push(input_arg(c, i)?.ok_or_else(|| {
            mismatch(
                false,
                format!("op type \"{op}\": input {i} ({name}) is required"),
            )
        })?);
    }
    let outs: Vec<Arg> = (0..no)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let a = attrs_of(c.attr)?;
    let trans = get_int(op, &a, "trans", Some(0))? != 0;
    let cross = get_int(op, &a, "is_cross", Some(1))? != 0;
    let mode = get_str(&a, "mode", "iou");
    if mode != "iou" {
        return Err(attr_err(
            op,
            format!("attr mode = \"{mode}\" is not modelled (only \"iou\")"),
        ));
    }
    if grad && cross {
        return Err(attr_err(
            op,
            "attr is_cross = true is not modelled for the gradient (one-to-one pairs only)".into(),
        ));
    }
    let (b, g) = if grad { (1, 2) } else { (0, 1) };
    let (bs, gs) = (args[b].shape(), args[g].shape());
    if bs.len() != 2 || gs.len() != 2 || bs[0] < 4 || gs[0] < 4 || (!cross && bs[1] != gs[1]) {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\": bboxes {bs:?} and gtboxes {gs:?} must be [4, n] and [4, m] \
                 (m = n when is_cross is false; rows past the fourth are not read)"
            ),
        ));
    }
    let n = bs[1];
    let want: Vec<Vec<usize>> = if grad {
        if args[0].shape().iter().product::<usize>() != n {
            return Err(mismatch(
                false,
                format!(
                    "op type \"{op}\": dy {:?} must hold the {n} pairs' gradients",
                    args[0].shape()
                ),
            ));
        }
        vec![bs.clone(), gs.clone()]
    } else {
        let rows = if cross { gs[1] } else { 1 };
        vec![vec![rows, n]; no]
    };
    for (k, o) in outs.iter().enumerate() {
        if o.shape() != want[k] {
            return Err(mismatch(
                true,
                format!(
                    "op type \"{op}\": output {k} {:?} must be {:?}",
                    o.shape(),
                    want[k]
                ),
            ));
        }
    }
    const F: &[DType] = &[DType::F32, DType::F16];
    let ins: Vec<Option<Tensor>> = args
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.tensor(op, format!("input {i} ({})", names[i]), false, F)
                .map(Some)
        })
        .collect::<Result<_, _>>()?;
    let out_t: Vec<Tensor> = outs
        .iter()
        .enumerate()
        .map(|(k, o)| o.tensor(op, format!("output {k}"), true, F))
        .collect::<Result<_, _>>()?;
    same_dtype(op, &ins, &out_t)?;
    enqueue(api, op, c, false, ins, out_t, move |i, o| {
        let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
        if grad {
            iou_family_grad(kind, req(0)?, req(1)?, req(2)?, trans, &o[0], &o[1])
        } else {
            iou_family(kind, req(0)?, req(1)?, trans, cross, &o[0], o.get(1))
        }
    })
}

/// A list-of-floats attr, or `default` when it is not set.
fn get_floats(
    op: &str,
    a: &std::collections::BTreeMap<String, super::op::AttrValue>,
    key: &str,
    default: [f64; 4],
) -> Result<[f64; 4], Error> {
    use super::op::AttrValue;
    let v: Vec<f64> = match a.get(key) {
        None => return Ok(default),
        Some(AttrValue::ListFloat(v)) => v.iter().map(|&x| f64::from(x)).collect(),
        Some(AttrValue::ListInt(v)) => v.iter().map(|&x| x as f64).collect(),
        Some(v) => {
            return Err(attr_err(
                op,
                format!(
                    "attr {key} must be a list of 4 floats (aclopSetAttrListFloat), but it was set \
                     as a {}",
                    v.kind()
                ),
            ))
        }
    };
    <[f64; 4]>::try_from(v.as_slice()).map_err(|_| {
        attr_err(
            op,
            format!("attr {key} holds {} values; it must hold 4", v.len()),
        )
    })
}

/// The detection operators, CdistGrad and the deformable-convolution sampling
/// (`npu_emu::kernels::{detection, cdist_grad, deformable}`): their inputs (`kinds` as in
/// [`OPS`]), attributes and output shapes checked here.
fn execute_detection(
    api: &'static str,
    c: &Call,
    op: &'static str,
    kinds: &str,
    no: usize,
) -> Result<(), Error> {
    use npu_emu::kernels::{cdist_grad, deformable, detection};
    let ni = c.num_inputs as usize;
    let required = kinds.trim_end_matches('o').len();
    if ni < required || ni > kinds.len() || c.num_outputs as usize != no {
        return Err(mismatch(
            ni >= required && ni <= kinds.len(),
            format!(
                "op type \"{op}\" has {required} input(s){} and {no} output(s), but numInputs = \
                 {ni}, numOutputs = {}",
                if required < kinds.len() {
                    format!(" (and {} optional)", kinds.len() - required)
                } else {
                    String::new()
                },
                c.num_outputs
            ),
        ));
    }
    let mut ins = Vec::with_capacity(required);
    for i in 0..required {
        ins.push(
            input_arg(c, i)?.ok_or_else(|| {
                mismatch(false, format!("op type \"{op}\": input {i} is required"))
            })?,
        );
    }
    for i in required..ni {
        if input_arg(c, i)?.is_some() {
            return Err(mismatch(
                false,
                format!(
                    "op type \"{op}\": optional input {i} (clip_window / num_valid_boxes) is not \
                     modelled; torch_npu does not pass it"
                ),
            ));
        }
    }
    let outs: Vec<Arg> = (0..no)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let a = attrs_of(c.attr)?;
    let shapes: Vec<Vec<usize>> = ins.iter().map(Arg::shape).collect();
    // the inputs' and outputs' names, as CANN's operator prototypes give them (BoundingBoxEncode's
    // output is spelt "delats" there)
    let (in_names, out_names): (&[&str], &[&str]) = match op {
        "CdistGrad" => (&["grad", "x1", "x2", "cdist"], &["y"]),
        "BoundingBoxEncode" => (&["anchor_box", "ground_truth_box"], &["delats"]),
        "BoundingBoxDecode" => (&["rois", "deltas"], &["bboxes"]),
        "YoloBoxesEncode" => (
            &["anchor_boxes", "gt_bboxes", "stride"],
            &["encoded_bboxes"],
        ),
        "AnchorResponseFlags" => (&["gt_bboxes"], &["flags"]),
        "BatchMultiClassNonMaxSuppression" => (
            &["boxes", "scores"],
            &["nmsed_boxes", "nmsed_scores", "nmsed_classes", "nmsed_num"],
        ),
        "DeformableOffsets" => (&["x", "offsets"], &["y"]),
        _ => (&["grad", "x", "offsets"], &["grad_x", "grad_offsets"]),
    };
    let want_out = |k: usize, want: &[usize]| -> Result<(), Error> {
        if outs[k].shape() != want {
            return Err(mismatch(
                true,
                format!(
                    "op type \"{op}\": output {k} ({}) {:?} must be {want:?}",
                    out_names[k],
                    outs[k].shape()
                ),
            ));
        }
        Ok(())
    };
    let bad_in = |m: String| mismatch(false, format!("op type \"{op}\": {m}"));
    let rows4 = |k: usize| -> Result<usize, Error> {
        match shapes[k].as_slice() {
            [n, 4] => Ok(*n),
            s => Err(bad_in(format!("{} {s:?} must be [n, 4]", in_names[k]))),
        }
    };
    const F: &[DType] = &[DType::F32, DType::F16];
    const I32: &[DType] = &[DType::I32];
    const U8: &[DType] = &[DType::U8];
    // the data types of each input and output
    let (in_dt, out_dt): (Vec<&[DType]>, Vec<&[DType]>) = match op {
        "YoloBoxesEncode" => (vec![F, F, I32], vec![F]),
        "AnchorResponseFlags" => (vec![F], vec![U8]),
        "BatchMultiClassNonMaxSuppression" => (vec![F, F], vec![F, F, F, I32]),
        "DeformableOffsets" | "DeformableOffsetsGrad" => (vec![FLOATS; required], vec![FLOATS; no]),
        _ => (vec![F; required], vec![F; no]),
    };
    let tensors: Vec<Option<Tensor>> = ins
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.tensor(op, format!("input {i} ({})", in_names[i]), false, in_dt[i])
                .map(Some)
        })
        .collect::<Result<_, _>>()?;
    let out_tensors: Vec<Tensor> = outs
        .iter()
        .enumerate()
        .map(|(k, t)| {
            t.tensor(
                op,
                format!("output {k} ({})", out_names[k]),
                true,
                out_dt[k],
            )
        })
        .collect::<Result<_, _>>()?;
    // the float tensors share one data type
    let float_ins: Vec<Option<Tensor>> = tensors
        .iter()
        .zip(&in_dt)
        .map(|(t, d)| t.clone().filter(|_| *d != I32))
        .collect();
    let float_outs: Vec<Tensor> = out_tensors
        .iter()
        .zip(&out_dt)
        .filter(|(_, d)| **d != I32 && **d != U8)
        .map(|(t, _)| t.clone())
        .collect();
    let mut first: Option<&Tensor> = None;
    for (output, t) in float_ins
        .iter()
        .flatten()
        .map(|t| (false, t))
        .chain(float_outs.iter().map(|t| (true, t)))
    {
        match first {
            None => first = Some(t),
            Some(f) if f.dtype != t.dtype => {
                return Err(mismatch(
                    output,
                    format!(
                        "op type \"{op}\": {} is {}, but {} is {}",
                        t.name,
                        t.dtype.name(),
                        f.name,
                        f.dtype.name()
                    ),
                ))
            }
            _ => {}
        }
    }
    type Run =
        Box<dyn FnOnce(&[&npu_emu::ops::View], &[npu_emu::ops::View]) -> Result<(), String> + Send>;
    let run: Run = match op {
        "CdistGrad" => {
            if !a.contains_key("p") {
                return Err(attr_err(op, "attr p is required".into()));
            }
            let p = get_num(op, &a, "p", 2.0)?;
            if !p.is_finite() || (p < 0.0 && p != -1.0) {
                return Err(attr_err(
                    op,
                    format!("attr p = {p} must be 0 or more, or -1 for infinity"),
                ));
            }
            let s = &shapes[1];
            if s.len() < 3 || shapes.iter().any(|t| t != s) {
                return Err(bad_in(format!(
                    "grad {:?}, x1 {:?}, x2 {:?} and cdist {:?} must be one broadcast shape \
                     [B…, P, R, M]",
                    shapes[0], shapes[1], shapes[2], shapes[3]
                )));
            }
            let mut want = s[..s.len() - 2].to_vec();
            want.push(s[s.len() - 1]);
            want_out(0, &want)?;
            Box::new(move |i, o| cdist_grad::cdist_grad(i[0], i[1], i[2], i[3], p, &o[0]))
        }
        "BoundingBoxEncode" | "BoundingBoxDecode" => {
            let n = rows4(0)?;
            if rows4(1)? != n {
                return Err(bad_in(format!(
                    "{} {:?} and {} {:?} must hold as many boxes",
                    in_names[0], shapes[0], in_names[1], shapes[1]
                )));
            }
            want_out(0, &[n, 4])?;
            let means = get_floats(op, &a, "means", [0.0; 4])?;
            let stds = get_floats(op, &a, "stds", [1.0; 4])?;
            if stds.contains(&0.0) && op == "BoundingBoxEncode" {
                return Err(attr_err(op, format!("attr stds {stds:?} holds a 0")));
            }
            if op == "BoundingBoxEncode" {
                Box::new(move |i, o| detection::bbox_encode(i[0], i[1], means, stds, &o[0]))
            } else {
                let ms = match a.get("max_shape") {
                    None => vec![],
                    Some(_) => get_list(op, &a, "max_shape")?,
                };
                let max_shape = match ms.as_slice() {
                    [] => None,
                    &[h, w] if h > 0 && w > 0 => Some((h as f64, w as f64)),
                    _ => {
                        return Err(attr_err(
                            op,
                            format!(
                                "attr max_shape {ms:?} must be (h, w), two positive ints, or \
                                 empty (no clipping)"
                            ),
                        ))
                    }
                };
                let clip = get_num(op, &a, "wh_ratio_clip", 0.016)?;
                if clip <= 0.0 {
                    return Err(attr_err(
                        op,
                        format!("attr wh_ratio_clip = {clip} must be positive"),
                    ));
                }
                Box::new(move |i, o| {
                    detection::bbox_decode(i[0], i[1], means, stds, max_shape, clip, &o[0])
                })
            }
        }
        "YoloBoxesEncode" => {
            let n = rows4(0)?;
            if rows4(1)? != n || shapes[2] != [n] {
                return Err(bad_in(format!(
                    "anchor_boxes {:?}, gt_bboxes {:?} and stride {:?} must be [n, 4], [n, 4] and \
                     [n]",
                    shapes[0], shapes[1], shapes[2]
                )));
            }
            want_out(0, &[n, 4])?;
            Box::new(move |i, o| detection::yolo_encode(i[0], i[1], i[2], &o[0]))
        }
        "AnchorResponseFlags" => {
            rows4(0)?;
            let fm = get_list(op, &a, "featmap_size")?;
            let st = get_list(op, &a, "strides")?;
            let na = get_int(op, &a, "num_base_anchors", None)?;
            if fm.len() != 2 || fm.iter().any(|&v| v <= 0) {
                return Err(attr_err(
                    op,
                    format!("attr featmap_size {fm:?} must be (h, w), two positive ints"),
                ));
            }
            if st.len() != 2 || st.contains(&0) {
                return Err(attr_err(
                    op,
                    format!("attr strides {st:?} must be two nonzero ints"),
                ));
            }
            if na <= 0 {
                return Err(attr_err(
                    op,
                    format!("attr num_base_anchors = {na} must be positive"),
                ));
            }
            let (h, w, na) = (fm[0] as usize, fm[1] as usize, na as usize);
            let total = h
                .checked_mul(w)
                .and_then(|v| v.checked_mul(na))
                .ok_or_else(|| {
                    attr_err(
                        op,
                        format!("featmap_size {fm:?} times num_base_anchors = {na} overflows"),
                    )
                })?;
            want_out(0, &[total])?;
            let strides = (st[0] as f64, st[1] as f64);
            Box::new(move |i, o| detection::anchor_response_flags(i[0], (h, w), strides, na, &o[0]))
        }
        "BatchMultiClassNonMaxSuppression" => {
            for key in ["score_threshold", "iou_threshold"] {
                if !a.contains_key(key) {
                    return Err(attr_err(op, format!("attr {key} is required")));
                }
            }
            let p = detection::BatchNms {
                score_threshold: get_num(op, &a, "score_threshold", 0.0)?,
                iou_threshold: get_num(op, &a, "iou_threshold", 0.0)?,
                max_per_class: get_int(op, &a, "max_size_per_class", None)?.max(0) as usize,
                max_total: get_int(op, &a, "max_total_size", None)?.max(0) as usize,
                transpose_box: get_int(op, &a, "transpose_box", Some(0))? != 0,
            };
            if get_int(op, &a, "change_coordinate_frame", Some(0))? != 0 {
                return Err(attr_err(
                    op,
                    "attr change_coordinate_frame = true needs the clip_window input".into(),
                ));
            }
            if !(0.0..=1.0).contains(&p.iou_threshold) {
                return Err(attr_err(
                    op,
                    format!("attr iou_threshold = {} must be in [0, 1]", p.iou_threshold),
                ));
            }
            if !p.score_threshold.is_finite() {
                return Err(attr_err(
                    op,
                    format!(
                        "attr score_threshold = {} must be finite",
                        p.score_threshold
                    ),
                ));
            }
            if p.max_per_class == 0 || p.max_total == 0 {
                return Err(attr_err(
                    op,
                    "attrs max_size_per_class and max_total_size must be positive".into(),
                ));
            }
            let (bs, ss) = (&shapes[0], &shapes[1]);
            let ok = ss.len() == 3 && bs.len() == 4 && bs[0] == ss[0] && {
                let (q, four, n) = if p.transpose_box {
                    (bs[1], bs[2], bs[3])
                } else {
                    (bs[2], bs[3], bs[1])
                };
                four == 4 && n == ss[1] && (q == 1 || q == ss[2])
            };
            if !ok {
                return Err(bad_in(format!(
                    "boxes {bs:?} must be [B, N, q, 4] ([B, q, 4, N] with transpose_box) and \
                     scores {ss:?} [B, N, C], with q 1 or C"
                )));
            }
            let (b, m) = (ss[0], p.max_total);
            want_out(0, &[b, m, 4])?;
            want_out(1, &[b, m])?;
            want_out(2, &[b, m])?;
            want_out(3, &[b])?;
            Box::new(move |i, o| detection::batch_nms(i[0], i[1], &p, [&o[0], &o[1], &o[2], &o[3]]))
        }
        _ => {
            // DeformableOffsets / DeformableOffsetsGrad
            let fmt = get_str(&a, "data_format", "NHWC");
            if fmt != "NHWC" {
                return Err(attr_err(
                    op,
                    format!("attr data_format = \"{fmt}\": only \"NHWC\" is supported"),
                ));
            }
            if get_int(op, &a, "modulated", Some(1))? == 0 {
                return Err(attr_err(
                    op,
                    "attr modulated = false (v1) is not supported: only true".into(),
                ));
            }
            let ks = get_list(op, &a, "ksize")?;
            let st = get_list(op, &a, "strides")?;
            let pads = get_list(op, &a, "pads")?;
            let dil = match a.get("dilations") {
                None => vec![1, 1, 1, 1],
                Some(_) => get_list(op, &a, "dilations")?,
            };
            let dg = get_int(op, &a, "deformable_groups", Some(1))?;
            let problem = if ks.len() != 2 || ks.iter().any(|&v| v <= 0) {
                Some(format!(
                    "attr ksize {ks:?} must be (kh, kw), two positive ints"
                ))
            } else if st.len() != 4 || st[1..3].iter().any(|&v| v <= 0) {
                Some(format!(
                    "attr strides {st:?} must be 4 ints (NHWC) with positive H and W"
                ))
            } else if dil.len() != 4 || dil[1..3].iter().any(|&v| v <= 0) {
                Some(format!(
                    "attr dilations {dil:?} must be 4 ints (NHWC) with positive H and W"
                ))
            } else if pads.len() != 4 {
                Some(format!(
                    "attr pads {pads:?} must be 4 ints (top, bottom, left, right)"
                ))
            } else if dg <= 0 {
                Some(format!("attr deformable_groups = {dg} must be positive"))
            } else {
                None
            };
            if let Some(m) = problem {
                return Err(attr_err(op, m));
            }
            let g = deformable::Geometry {
                ksize: (ks[0] as usize, ks[1] as usize),
                strides: (st[1] as usize, st[2] as usize),
                pads: (pads[0], pads[2]),
                pads_end: (pads[1], pads[3]),
                dilations: (dil[1] as usize, dil[2] as usize),
                groups: dg as usize,
            };
            let grad = op == "DeformableOffsetsGrad";
            let (xs, os) = if grad {
                (&shapes[1], &shapes[2])
            } else {
                (&shapes[0], &shapes[1])
            };
            let [n, _, _, ch, ho, wo] = deformable::sizes(xs, os, &g).map_err(bad_in)?;
            let y = [n, ho * g.ksize.0, wo * g.ksize.1, ch];
            if grad {
                if shapes[0] != y {
                    return Err(bad_in(format!(
                        "grad {:?} must be DeformableOffsets' output shape {y:?}",
                        shapes[0]
                    )));
                }
                want_out(0, xs)?;
                want_out(1, os)?;
                Box::new(move |i, o| {
                    deformable::deformable_offsets_grad(i[0], i[1], i[2], &g, &o[0], &o[1])
                })
            } else {
                want_out(0, &y)?;
                Box::new(move |i, o| deformable::deformable_offsets(i[0], i[1], &g, &o[0]))
            }
        }
    };
    enqueue(api, op, c, false, tensors, out_tensors, move |i, o| {
        let views: Vec<&npu_emu::ops::View> = i.iter().flatten().copied().collect();
        run(&views, o)
    })
}
