//! The data-movement and activation operators of the single-operator API that torch_npu's
//! own APIs reach by design (op-plugin implements them only as aclop calls):
//! `npu_transpose` → `Transpose`, `npu_broadcast` → `BroadcastTo`, `npu_slice` → `Slice`,
//! `npu_pad` → `Pad`, `fill_` / `npu_nms_v4` / `npu_one_hot` → `Fill`, `npu_silu` → `Swish` / `SwishGrad`, `npu_mish` → `Mish` / `MishGrad`,
//! `npu_max` / `npu_min` → `ArgMaxWithValue` / `ArgMinWithValue`, and their gradient's
//! `npu_scatter` → `ArgMaxGrad` (the same computation as `ScatterElements`), and the 2-D
//! convolutions torch_npu runs as aclop (`Conv2D`, `Conv2DBackpropInput`,
//! `Conv2DBackpropFilter`: a filter in FRACTAL_Z, `npu_conv2d`). Each is a thin mapping onto the aclnn engines
//! ([`crate::ops`]); [`TensorOp::check`] is what the operator's shape inference refuses.

use crate::ops::act::{self, Act, ActGrad};
use crate::ops::conv::{self, Geo};
use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::matmul::matmul;
use crate::ops::shape::{self, ScatterReduce, ScatterSrc};
use crate::ops::view::contiguous_strides;
use crate::ops::{iter, nn, nn18, reduce, sort, View};

/// One operator call, its attributes and integer-list inputs read.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorOp {
    /// `y = x.permute(perm)`.
    Transpose { perm: Vec<usize> },
    /// `y = x` broadcast to `y`'s shape (numpy rules, leading dimensions added).
    BroadcastTo,
    /// `y = x[offsets[d] .. offsets[d] + y.shape[d]]` in every dimension.
    Slice { offsets: Vec<usize> },
    /// `y = x[plan]`: TensorFlow's strided slice resolved by
    /// [`crate::ops::nn_more::slice_plan`] (one entry per input axis; the result's axes).
    StridedSlice {
        axes: Vec<crate::ops::nn_more::Axis>,
        map: Vec<crate::ops::nn_more::OutAxis>,
    },
    /// `y = softmax(scale * x)` over the last dimension with masked places left out (inputs
    /// x, mask; `triu`: the mask is the fixed upper triangle, `j > i`, and the input unread);
    /// `Grad`: from (dy, y, mask), `scale * (dy * y - sum(dy * y) * y)`, 0 where masked.
    ScaledMaskedSoftmax { scale: f64, triu: bool, grad: bool },
    /// `overlap[j, i]` = [`crate::ops::cv19::iou`] of `bboxes[i]` and `gtboxes[j]`: IoU, or
    /// (`iof`) the intersection over the ground-truth box's area; boxes `[x0, y0, x1, y1]`
    /// with `eps` added to widths and heights (inputs bboxes `[N, 4]`, gtboxes `[M, 4]`).
    Iou { iof: bool, eps: f64 },
    /// outputs (index INT32 `[count, rank]`, mask BOOL `[count]`): the positions of the true
    /// elements of the BOOL `x`, in a random order from `seed` (Philox), the first `count` of
    /// them; rows past the number of true elements are zero with mask false.
    RandomChoiceWithMask { count: usize, seed: u64 },
    /// TensorFlow's NonMaxSuppressionV4 (inputs boxes `[N, 4]` as two opposite corners,
    /// scores `[N]`, then one-element max_output_size, iou_threshold, score_threshold):
    /// outputs the kept indices (INT32, greedy by descending score, the lower index first on a
    /// tie; only scores above the threshold; a box overlapping a kept one by IoU above the
    /// threshold is dropped), zero past the last, and their number.
    NmsV4,
    /// `y` = `x` with `(before, after)` zeros in each dimension.
    Pad { pads: Vec<(usize, usize)> },
    /// `y = x * sigmoid(scale * x)`.
    Swish { scale: f32 },
    /// `dx` from (`dy`, `x`, `y`).
    SwishGrad { scale: f32 },
    /// `y = x * tanh(softplus(x))`.
    Mish,
    /// `dx` from (`dy`, `x`).
    MishGrad,
    /// `y` = the one value everywhere: given (a host scalar, as f64 and i64 for integer
    /// outputs), or None: the one element of the input tensor, broadcast.
    Fill { value: Option<(f64, i64)> },
    /// `y = op(x1) @ op(x2) (+ bias)`, `op` transposing the last two dimensions when asked;
    /// batch dimensions broadcast.
    BatchMatMul { adj1: bool, adj2: bool },
    /// `y = x.permute(perm).reshape(shape)` (`transpose_first`) or
    /// `x.reshape(shape).permute(perm)`.
    ConfusionTranspose {
        perm: Vec<usize>,
        shape: Vec<usize>,
        transpose_first: bool,
    },
    /// `y` = `x` sorted along `axis` (values only).
    Sort { axis: usize, descending: bool },
    /// Layer norm over the dimensions from `begin`: outputs y, mean, rstd.
    LayerNorm { begin: usize, eps: f64 },
    /// Rows of logits `[N, C]` and label distributions: outputs the loss `[N]` and its
    /// gradient `softmax(x) - labels` `[N, C]`.
    SoftmaxCrossEntropy,
    /// `y` = `on` where the index equals the position along the new `axis` (of `depth`),
    /// else `off` (inputs: indices, on `[1]`, off `[1]`).
    OneHot { axis: usize, depth: usize },
    /// `Conv2D` (x, filter, bias?), `Conv2DBackpropInput` (filter, dy: the input's gradient)
    /// or `Conv2DBackpropFilter` (x, dy: the filter's gradient), NCHW.
    Conv { kind: ConvKind, geo: Geo },
    /// `y` = the sum of `x` over `axes` (sorted, unique; none: every dimension), keeping
    /// them as size 1 when `keep_dims`.
    ReduceSum { axes: Vec<usize>, keep_dims: bool },
    /// `LpNormReduceV2` (torch_npu's `norm` / `linalg_vector_norm` for a `p` other than 0, 1,
    /// 2, 3 and +-inf before CANN 9.0): `y = sum(|x|^p)` over `axes` (as ReduceSum); for
    /// `p` +-inf (+-`INT_MAX`, as torch_npu passes them) the max (min) of `|x|`, for `p` 0 the
    /// count of nonzeros. `LpNormUpdateV2` takes the root.
    LpNormReduce {
        p: f64,
        axes: Vec<usize>,
        keep_dims: bool,
    },
    /// `LpNormUpdateV2`: `y = max(x^(1/p), epsilon)` elementwise (`y = max(x, epsilon)` for
    /// `p` 0 and +-inf, whose reduction is already the norm).
    LpNormUpdate { p: f64, eps: f64 },
    /// outputs (indices INT32, values): the first extreme along `dim`.
    ArgWithValue {
        max: bool,
        dim: usize,
        keep_dims: bool,
    },
    /// `y = data`, then `y[idx with idx[axis] = indices[idx]] = updates[idx]`; indices of one
    /// dimension less than the data (torch_npu's `npu_max_backward`) index along `axis`.
    ScatterElements { axis: usize },
    /// `y = op(x1, x2)` elementwise with numpy broadcasting (`Add`, `Mul`, `LessEqual`, ...),
    /// computed in the inputs' type; comparisons and logical operators write BOOL. `host`:
    /// input `k` is a scalar given in host memory (not among the views `run` gets).
    Binary {
        op: crate::ops::math::Binary,
        host: Option<(usize, crate::ops::Scalar)>,
    },
}

/// Which of the 2-D convolution operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvKind {
    Forward,
    BackpropInput,
    BackpropFilter,
}

/// The geometry of a 2-D convolution from the NCHW shapes of its input, filter and output
/// and CANN's 4-element attrs (`strides` and `dilations` over N, C, H, W; `pads` top, bottom,
/// left, right), checked: the output's spatial size, the channel and group counts.
#[allow(clippy::too_many_arguments)]
pub fn conv2d_geo(
    x: &[usize],
    w: &[usize],
    y: &[usize],
    strides: &[i64],
    pads: &[i64],
    dilations: &[i64],
    groups: i64,
) -> Result<Geo, String> {
    let four = |v: &[i64], what: &str| -> Result<[usize; 4], String> {
        match v {
            [a, b, c, d] if v.iter().all(|&e| e >= 0) => {
                Ok([*a as usize, *b as usize, *c as usize, *d as usize])
            }
            _ => bad(format!("{what} {v:?} must be 4 non-negative values")),
        }
    };
    let (s, p, d) = (
        four(strides, "strides")?,
        four(pads, "pads")?,
        four(dilations, "dilations")?,
    );
    if p[0] != p[1] || p[2] != p[3] {
        return bad(format!(
            "pads {pads:?} (top, bottom, left, right) are not symmetric, which is not modelled"
        ));
    }
    if s[2] == 0 || s[3] == 0 || d[2] == 0 || d[3] == 0 || groups < 1 {
        return bad(format!(
            "strides {strides:?}, dilations {dilations:?} and groups {groups} must be positive"
        ));
    }
    if x.len() != 4 || w.len() != 4 || y.len() != 4 {
        return bad(format!(
            "x {x:?}, filter {w:?} and y {y:?} must be 4-D (NCHW)"
        ));
    }
    let g = groups as usize;
    if x[1] != w[1] * g || !w[0].is_multiple_of(g) || y[1] != w[0] || y[0] != x[0] {
        return bad(format!(
            "x {x:?}, filter {w:?} (groups {groups}) and y {y:?} do not fit: x's channels must \
             be the filter's times the groups, y's the filter's count"
        ));
    }
    for k in 0..2 {
        let want = conv::out_len(x[2 + k], w[2 + k], s[2 + k], p[2 * k], d[2 + k]);
        if want != Some(y[2 + k]) {
            return bad(format!(
                "y {y:?}: spatial dimension {k} of x {x:?} with filter {w:?}, stride {}, pad {} \
                 and dilation {} gives {want:?}",
                s[2 + k],
                p[2 * k],
                d[2 + k]
            ));
        }
    }
    Ok(Geo {
        n: x[0],
        cin: x[1],
        isz: [1, x[2], x[3]],
        cout: w[0],
        ksz: [1, w[2], w[3]],
        osz: [1, y[2], y[3]],
        stride: [1, s[2], s[3]],
        pad: [0, p[0], p[2]],
        dil: [1, d[2], d[3]],
        groups: g,
    })
}

fn bad<R>(msg: String) -> Result<R, String> {
    Err(msg)
}

impl TensorOp {
    /// Check the call's shapes (inputs as the operator takes them, integer lists excluded);
    /// the message names what does not fit.
    pub fn check(&self, ins: &[&[usize]], outs: &[&[usize]]) -> Result<(), String> {
        let x = ins[0];
        let y = outs[0];
        match self {
            TensorOp::Transpose { perm } => {
                let mut seen = vec![false; x.len()];
                if perm.len() != x.len()
                    || perm
                        .iter()
                        .any(|&p| p >= x.len() || std::mem::replace(&mut seen[p], true))
                {
                    return bad(format!(
                        "perm {perm:?} is not a permutation of the {} dimensions of x {x:?}",
                        x.len()
                    ));
                }
                let want: Vec<usize> = perm.iter().map(|&p| x[p]).collect();
                if y != want.as_slice() {
                    return bad(format!(
                        "y must be x {x:?} permuted by {perm:?} = {want:?}, got {y:?}"
                    ));
                }
            }
            TensorOp::BroadcastTo => {
                let ok = x.len() <= y.len()
                    && x.iter()
                        .rev()
                        .zip(y.iter().rev())
                        .all(|(&a, &b)| a == b || a == 1);
                if !ok {
                    return bad(format!("x {x:?} does not broadcast to the shape {y:?}"));
                }
            }
            TensorOp::Slice { offsets } => {
                if offsets.len() != x.len() || y.len() != x.len() {
                    return bad(format!(
                        "offsets {offsets:?} and y {y:?} must have one entry per dimension of x {x:?}"
                    ));
                }
                if let Some(d) = (0..x.len()).find(|&d| offsets[d] + y[d] > x[d]) {
                    return bad(format!(
                        "dimension {d}: offset {} + size {} is past x's {} (x {x:?})",
                        offsets[d], y[d], x[d]
                    ));
                }
            }
            TensorOp::StridedSlice { axes, map } => {
                let want: Vec<usize> = map
                    .iter()
                    .map(|m| match *m {
                        crate::ops::nn_more::OutAxis::Input(d) => axes[d].len,
                        crate::ops::nn_more::OutAxis::New => 1,
                    })
                    .collect();
                if axes.len() != x.len() || y != want.as_slice() {
                    return bad(format!(
                        "the slice of x {x:?} has shape {want:?}, but y is {y:?}"
                    ));
                }
            }
            TensorOp::Pad { pads } => {
                let want: Vec<usize> = x.iter().zip(pads).map(|(&d, &(a, b))| d + a + b).collect();
                if pads.len() != x.len() || y != want.as_slice() {
                    return bad(format!(
                        "paddings {pads:?} on x {x:?} give {want:?}, but y is {y:?} (one (before, \
                         after) pair per dimension)"
                    ));
                }
            }
            TensorOp::Swish { .. } | TensorOp::Mish => same(x, y, "y", "x")?,
            TensorOp::Binary { .. } => {
                let b = ins[1];
                let want = crate::ops::view::broadcast_shapes(x, b)
                    .ok_or_else(|| format!("x1 {x:?} and x2 {b:?} do not broadcast"))?;
                same(y, &want, "y", "the broadcast shape of x1 and x2")?;
            }
            TensorOp::Fill { value } => {
                if value.is_none() && x.iter().product::<usize>() != 1 {
                    return bad(format!(
                        "value must hold one element, but its shape is {x:?}"
                    ));
                }
            }
            TensorOp::NmsV4 => {
                if x.len() != 2 || x[1] != 4 || ins[1] != [x[0]] {
                    return bad(format!(
                        "boxes {x:?} must be [n, 4] and scores {:?} [n]",
                        ins[1]
                    ));
                }
                if let Some(k) = (2..5).find(|&k| ins[k].iter().product::<usize>() != 1) {
                    return bad(format!("input {k} {:?} must hold one value", ins[k]));
                }
                if y.len() != 1 || outs[1].iter().product::<usize>() != 1 {
                    return bad(format!(
                        "selected_indices {y:?} must be 1-D and valid_outputs {:?} one value",
                        outs[1]
                    ));
                }
            }
            TensorOp::RandomChoiceWithMask { count, .. } => {
                if x.is_empty() || x.len() > 5 {
                    return bad(format!("x {x:?} must have 1 to 5 dimensions"));
                }
                same(y, &[*count, x.len()], "index", "[count, rank of x]")?;
                same(outs[1], &[*count], "mask", "[count]")?;
            }
            TensorOp::Iou { .. } => {
                let g = ins[1];
                if x.len() != 2 || x[1] != 4 || g.len() != 2 || g[1] != 4 {
                    return bad(format!("bboxes {x:?} and gtboxes {g:?} must be [n, 4]"));
                }
                same(y, &[g[0], x[0]], "overlap", "[gtboxes rows, bboxes rows]")?;
            }
            TensorOp::ScaledMaskedSoftmax { triu, grad, .. } => {
                let mask = ins[if *grad { 2 } else { 1 }];
                if *grad {
                    same(ins[1], x, "y", "the gradient")?;
                }
                same(y, x, "the output", "the input")?;
                if !triu && crate::ops::view::broadcast_shapes(x, mask).as_deref() != Some(x) {
                    return bad(format!("mask {mask:?} does not broadcast to {x:?}"));
                }
            }
            TensorOp::SwishGrad { .. } | TensorOp::MishGrad => {
                same(ins[1], x, "x", "the gradient")?;
                same(y, x, "the output", "the gradient")?;
            }
            TensorOp::BatchMatMul { adj1, adj2 } => {
                let b = ins[1];
                if x.len() < 2 || b.len() < 2 {
                    return bad(format!("x1 {x:?} and x2 {b:?} need 2 or more dimensions"));
                }
                let mm = |v: &[usize], t: bool| {
                    let n = v.len();
                    if t {
                        (v[n - 1], v[n - 2])
                    } else {
                        (v[n - 2], v[n - 1])
                    }
                };
                let ((m, k1), (k2, n)) = (mm(x, *adj1), mm(b, *adj2));
                if k1 != k2 || y.len() < 2 || y[y.len() - 2..] != [m, n] {
                    return bad(format!(
                        "x1 {x:?} (adj_x1 {adj1}) times x2 {b:?} (adj_x2 {adj2}) gives [.., {m}, \
                         {n}] with inner sizes {k1} and {k2}, but y is {y:?}"
                    ));
                }
            }
            TensorOp::ConfusionTranspose {
                perm,
                shape,
                transpose_first,
            } => {
                let n: usize = x.iter().product();
                let valid = |p: &[usize], rank: usize| {
                    let mut seen = vec![false; rank];
                    p.len() == rank
                        && p.iter()
                            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
                };
                let permuted_rank = if *transpose_first {
                    x.len()
                } else {
                    shape.len()
                };
                if shape.iter().product::<usize>() != n || !valid(perm, permuted_rank) {
                    return bad(format!(
                        "perm {perm:?} and shape {shape:?} do not fit x {x:?} (transpose_first \
                         {transpose_first})"
                    ));
                }
                let want: Vec<usize> = if *transpose_first {
                    shape.clone()
                } else {
                    perm.iter().map(|&p| shape[p]).collect()
                };
                same(y, &want, "y", "the result")?;
            }
            TensorOp::Sort { axis, .. } => {
                if *axis >= x.len().max(1) {
                    return bad(format!("axis {axis} is out of range for x {x:?}"));
                }
                same(y, x, "y", "x")?;
            }
            TensorOp::LayerNorm { begin, .. } => {
                if *begin >= x.len() {
                    return bad(format!(
                        "begin_norm_axis {begin} is out of range for x {x:?}"
                    ));
                }
                same(y, x, "y", "x")?;
                for (k, name) in [(1, "gamma"), (2, "beta")] {
                    if ins[k] != &x[*begin..] {
                        return bad(format!(
                            "{name} {:?} must have x's normalized shape {:?}",
                            ins[k],
                            &x[*begin..]
                        ));
                    }
                }
            }
            TensorOp::SoftmaxCrossEntropy => {
                if x.len() != 2 || ins[1] != x || outs[0] != [x[0]] || outs[1] != x {
                    return bad(format!(
                        "features {x:?} and labels {:?} must be one [N, C] shape, loss [N] and \
                         backprop [N, C]; got {:?} and {:?}",
                        ins[1], outs[0], outs[1]
                    ));
                }
            }
            TensorOp::OneHot { axis, depth } => {
                let mut want = x.to_vec();
                if *axis > x.len() {
                    return bad(format!("axis {axis} is out of range for indices {x:?}"));
                }
                want.insert(*axis, *depth);
                same(y, &want, "y", "indices with the depth inserted")?;
            }
            TensorOp::LpNormUpdate { .. } => same(x, y, "y", "x")?,
            TensorOp::ReduceSum { axes, keep_dims }
            | TensorOp::LpNormReduce {
                axes, keep_dims, ..
            } => {
                let want: Vec<usize> = (0..x.len())
                    .filter_map(|d| match (axes.contains(&d), keep_dims) {
                        (false, _) => Some(x[d]),
                        (true, true) => Some(1),
                        (true, false) => None,
                    })
                    .collect();
                same(y, &want, "y", "x reduced")?;
            }
            TensorOp::Conv { kind, geo } => {
                if *kind == ConvKind::Forward {
                    if let Some(b) = ins.get(2) {
                        if *b != [geo.cout] {
                            return bad(format!("bias {b:?} must be [{}]", geo.cout));
                        }
                    }
                }
            }
            TensorOp::ArgWithValue { dim, keep_dims, .. } => {
                if *dim >= x.len().max(1) {
                    return bad(format!("dimension {dim} is out of range for x {x:?}"));
                }
                let mut want = x.to_vec();
                if x.is_empty() {
                    want.clear();
                } else if *keep_dims {
                    want[*dim] = 1;
                } else {
                    want.remove(*dim);
                }
                for (k, name) in ["indice", "values"].iter().enumerate() {
                    if outs[k] != want.as_slice() {
                        return bad(format!(
                            "{name} must be x {x:?} reduced over dimension {dim} = {want:?}, got \
                             {:?}",
                            outs[k]
                        ));
                    }
                }
            }
            TensorOp::ScatterElements { axis } => {
                let (idx, upd) = (ins[1], ins[2]);
                if *axis >= x.len() {
                    return bad(format!("axis {axis} is out of range for data {x:?}"));
                }
                if idx != upd {
                    return bad(format!(
                        "indices {idx:?} and updates {upd:?} must have one shape"
                    ));
                }
                if !(idx.len() == x.len() || idx.len() + 1 == x.len()) {
                    return bad(format!(
                        "indices {idx:?} must have the rank of data {x:?} (or one less)"
                    ));
                }
                same(y, x, "y", "data")?;
            }
        }
        Ok(())
    }

    /// Run on the views (inputs as the operator takes them, integer lists excluded).
    pub fn run(&self, ins: &[&View], outs: &[View]) -> Result<(), String> {
        let (x, y) = (ins[0], &outs[0]);
        match self {
            TensorOp::Transpose { perm } => iter::copy(&x.permute(perm), y),
            TensorOp::BroadcastTo => {
                let e = x
                    .expand(&y.shape)
                    .ok_or_else(|| format!("{:?} does not broadcast to {:?}", x.shape, y.shape))?;
                iter::copy(&e, y)
            }
            TensorOp::Slice { offsets } => {
                let mut v = x.clone();
                for (d, &o) in offsets.iter().enumerate() {
                    v = shape::narrow(&v, d, o, y.shape[d]);
                }
                iter::copy(&v, y)
            }
            TensorOp::StridedSlice { axes, map } => {
                crate::ops::nn_more::strided_slice(x, axes, map, y)
            }
            TensorOp::Pad { pads } => {
                // constant_pad takes (before, after) pairs from the last dimension
                let flat: Vec<i64> = pads
                    .iter()
                    .rev()
                    .flat_map(|&(a, b)| [a as i64, b as i64])
                    .collect();
                shape::constant_pad(x, &flat, 0.0, y)
            }
            TensorOp::Swish { scale } => nn18::swish(x, *scale, y),
            TensorOp::Binary { op, host } => {
                let mut buf = [0u64; 1];
                let (a, b) = match host {
                    None => (x.clone(), ins[1].clone()),
                    Some((k, s)) => {
                        let sv = crate::ops::math::scalar_view(*s, x.dtype, &mut buf);
                        if *k == 0 {
                            (sv, x.clone())
                        } else {
                            (x.clone(), sv)
                        }
                    }
                };
                crate::ops::math::binary(*op, &a, &b, y, x.dtype)
            }
            TensorOp::Fill {
                value: Some((f, i)),
            } => match y.dtype.class() {
                crate::ops::dtype::Class::Int => iter::fill::<i64>(y, *i),
                _ => iter::fill::<f64>(y, *f),
            },
            TensorOp::Fill { value: None } => {
                let one = x.reshaped(&[]);
                let e = one
                    .expand(&y.shape)
                    .ok_or_else(|| "the value does not broadcast".to_string())?;
                iter::copy(&e, y)
            }
            TensorOp::SwishGrad { scale } => nn18::swish_backward(x, ins[1], *scale, y),
            TensorOp::NmsV4 => nms_v4(ins, y, &outs[1]),
            TensorOp::RandomChoiceWithMask { count, seed } => {
                random_choice_with_mask(x, *count, *seed, y, &outs[1])
            }
            TensorOp::Iou { iof, eps } => {
                crate::ops::cv19::iou(x, ins[1], *iof, *eps, false, &y.permute(&[1, 0]))
            }
            TensorOp::ScaledMaskedSoftmax { scale, triu, grad } => {
                let mask = (!triu).then(|| ins[if *grad { 2 } else { 1 }]);
                if *grad {
                    nn18::scaled_masked_softmax_backward_triu(x, ins[1], mask, *scale, y)
                } else {
                    nn18::scaled_masked_softmax_triu(x, mask, *scale, y)
                }
            }
            TensorOp::Mish => act::forward(Act::Mish, x, y),
            TensorOp::MishGrad => act::backward(ActGrad::Mish, x, ins[1], y),
            TensorOp::BatchMatMul { adj1, adj2 } => {
                let t = |v: &View, adj: bool| {
                    if !adj {
                        return v.clone();
                    }
                    let mut p: Vec<usize> = (0..v.ndim()).collect();
                    p.swap(v.ndim() - 2, v.ndim() - 1);
                    v.permute(&p)
                };
                let bias = ins.get(2).map(|b| (*b, 1.0));
                matmul(&t(x, *adj1), &t(ins[1], *adj2), y, 1.0, bias)
            }
            TensorOp::ConfusionTranspose {
                perm,
                shape,
                transpose_first,
            } => {
                if *transpose_first {
                    let p = x.permute(perm);
                    let dst = View {
                        strides: contiguous_strides(&p.shape),
                        shape: p.shape.clone(),
                        ..y.clone()
                    };
                    iter::copy(&p, &dst)
                } else {
                    let r = View {
                        strides: contiguous_strides(shape),
                        shape: shape.clone(),
                        ..x.clone()
                    };
                    iter::copy(&r.permute(perm), y)
                }
            }
            TensorOp::Sort { axis, descending } => {
                let mut idx = vec![0i64; y.numel()];
                let iv = View::of_slice(&mut idx, DType::I64, &y.shape);
                sort::sort(x, *axis, *descending, None, y, &iv)
            }
            TensorOp::LayerNorm { begin, eps } => nn::layer_norm(
                x,
                x.ndim() - begin,
                Some(ins[1]),
                Some(ins[2]),
                *eps,
                y,
                outs.get(1),
                outs.get(2),
            ),
            TensorOp::SoftmaxCrossEntropy => {
                let (n, c) = (x.shape[0], x.shape[1]);
                let (logits, labels) = (
                    load::<f64>(x, DType::F64)?,
                    load::<f64>(ins[1], DType::F64)?,
                );
                let (mut loss, mut grad) = (vec![0f64; n], vec![0f64; n * c]);
                for r in 0..n {
                    let row = &logits[r * c..(r + 1) * c];
                    let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let lse = mx + row.iter().map(|v| (v - mx).exp()).sum::<f64>().ln();
                    for j in 0..c {
                        let (lp, l) = (row[j] - lse, labels[r * c + j]);
                        loss[r] -= l * lp;
                        grad[r * c + j] = lp.exp() - l;
                    }
                }
                store(loss, DType::F64, &outs[0])?;
                store(grad, DType::F64, &outs[1])
            }
            TensorOp::OneHot { axis, depth } => {
                let idx = load::<i64>(x, DType::I64)?;
                let (on, off) = (
                    load::<f64>(ins[1], DType::F64)?,
                    load::<f64>(ins[2], DType::F64)?,
                );
                let (on, off) = (
                    on.first().copied().unwrap_or(1.0),
                    off.first().copied().unwrap_or(0.0),
                );
                let inner: usize = x.shape[*axis..].iter().product();
                let mut out = vec![off; idx.len() * depth];
                for (k, &v) in idx.iter().enumerate() {
                    if v >= 0 && (v as usize) < *depth {
                        let (o, i) = (k / inner.max(1), k % inner.max(1));
                        out[(o * depth + v as usize) * inner + i] = on;
                    }
                }
                store(out, DType::F64, y)
            }
            TensorOp::LpNormReduce { p, axes, .. } => match lp_special(*p) {
                Some(q) => reduce::reduce(reduce::Reduce::Norm(q), x, axes, y, false),
                None => {
                    let pw = crate::ops::view::Scratch::new(DType::F64, &x.shape);
                    let p = *p;
                    iter::map1::<f64, f64>(x, &pw.view, move |v| v.abs().powf(p))?;
                    reduce::reduce(reduce::Reduce::Sum, &pw.view, axes, y, false)
                }
            },
            TensorOp::LpNormUpdate { p, eps } => {
                let (root, eps) = (lp_special(*p).is_none(), *eps);
                let inv = 1.0 / *p;
                iter::map1::<f64, f64>(x, y, move |v| {
                    let r = if root { v.powf(inv) } else { v };
                    if r < eps {
                        eps
                    } else {
                        r
                    }
                })
            }
            TensorOp::ReduceSum { axes, .. } => {
                let int_acc = y.dtype.class() == crate::ops::dtype::Class::Int;
                reduce::reduce(reduce::Reduce::Sum, x, axes, y, int_acc)
            }
            TensorOp::Conv { kind, geo } => match kind {
                ConvKind::Forward => {
                    conv::conv_forward(x, ins[1], ins.get(2).copied(), y, geo, false)
                }
                // (the unused view argument is the gradient itself)
                ConvKind::BackpropInput => {
                    conv::conv_backward(ins[1], ins[1], x, geo, false, Some(y), None, None)
                }
                ConvKind::BackpropFilter => {
                    conv::conv_backward(ins[1], x, ins[1], geo, false, None, Some(y), None)
                }
            },
            TensorOp::ArgWithValue { max, dim, .. } => {
                reduce::reduce_arg(x, *dim, *max, Some(&outs[1]), Some(&outs[0]))
            }
            TensorOp::ScatterElements { axis } => {
                let (mut idx, mut upd) = (ins[1].clone(), ins[2].clone());
                if idx.ndim() + 1 == x.ndim() {
                    for v in [&mut idx, &mut upd] {
                        v.shape.insert(*axis, 1);
                        v.strides.insert(*axis, 0);
                    }
                }
                shape::scatter(
                    x,
                    *axis,
                    &idx,
                    ScatterSrc::Tensor(&upd),
                    ScatterReduce::None,
                    y,
                )
            }
        }
    }
}

/// The `p` of an LpNorm operator whose reduction is the norm itself: 0 (count of nonzeros)
/// and +-inf, which torch_npu passes as +-`INT_MAX` (as a float) or as infinities.
fn lp_special(p: f64) -> Option<f64> {
    const INT_MAX: f64 = i32::MAX as f64;
    if p == 0.0 {
        Some(0.0)
    } else if p >= INT_MAX {
        Some(f64::INFINITY)
    } else if p <= -INT_MAX {
        Some(f64::NEG_INFINITY)
    } else {
        None
    }
}

fn same(a: &[usize], b: &[usize], an: &str, bn: &str) -> Result<(), String> {
    if a != b {
        return bad(format!("{an} {a:?} must have {bn}'s shape {b:?}"));
    }
    Ok(())
}

/// [`TensorOp::NmsV4`].
fn nms_v4(ins: &[&View], selected: &View, valid: &View) -> Result<(), String> {
    use crate::ops::extra::{load, store};
    let boxes: Vec<f64> = load(ins[0], DType::F64)?;
    let scores: Vec<f64> = load(ins[1], DType::F64)?;
    let one = |k: usize| -> Result<f64, String> { Ok(load::<f64>(ins[k], DType::F64)?[0]) };
    let (max_out, iou_t, score_t) = (one(2)?, one(3)?, one(4)?);
    if max_out < 0.0 {
        return Err(format!("max_output_size {max_out} must not be negative"));
    }
    let cap = (max_out as usize).min(selected.shape[0]);
    let corners = |i: usize| {
        let b = &boxes[i * 4..i * 4 + 4];
        (
            b[0].min(b[2]),
            b[1].min(b[3]),
            b[0].max(b[2]),
            b[1].max(b[3]),
        )
    };
    let iou = |i: usize, j: usize| {
        let (a, b) = (corners(i), corners(j));
        let area = |c: (f64, f64, f64, f64)| (c.2 - c.0) * (c.3 - c.1);
        let ih = (a.2.min(b.2) - a.0.max(b.0)).max(0.0);
        let iw = (a.3.min(b.3) - a.1.max(b.1)).max(0.0);
        let inter = ih * iw;
        let union = area(a) + area(b) - inter;
        if union <= 0.0 {
            0.0
        } else {
            inter / union
        }
    };
    let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > score_t).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        if kept.len() == cap {
            break;
        }
        if kept.iter().all(|&k| iou(k, i) <= iou_t) {
            kept.push(i);
        }
    }
    let mut out = vec![0i64; selected.shape[0]];
    for (o, &k) in out.iter_mut().zip(&kept) {
        *o = k as i64;
    }
    store(out, DType::I64, selected)?;
    store(vec![kept.len() as i64], DType::I64, valid)
}

/// [`TensorOp::RandomChoiceWithMask`]: the true positions of `x` (row-major), shuffled by a
/// Fisher-Yates pass drawing from Philox(`seed`), then written as coordinates.
fn random_choice_with_mask(
    x: &View,
    count: usize,
    seed: u64,
    index: &View,
    mask: &View,
) -> Result<(), String> {
    let v: Vec<f64> = crate::ops::extra::load(x, DType::F64)?;
    let mut hits: Vec<usize> = (0..v.len()).filter(|&i| v[i] != 0.0).collect();
    for i in (1..hits.len()).rev() {
        let r = crate::ops::random::uniform01(seed, 0, i, true);
        let j = ((r * (i + 1) as f64) as usize).min(i);
        hits.swap(i, j);
    }
    let rank = x.shape.len();
    let mut idx = vec![0i64; count * rank];
    let mut m = vec![0i64; count];
    for (k, &p) in hits.iter().take(count).enumerate() {
        let mut rem = p;
        for d in (0..rank).rev() {
            idx[k * rank + d] = (rem % x.shape[d]) as i64;
            rem /= x.shape[d];
        }
        m[k] = 1;
    }
    crate::ops::extra::store(idx, DType::I64, index)?;
    crate::ops::extra::store(m, DType::I64, mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::DType;

    fn f32v(v: &mut [f32], shape: &[usize]) -> View {
        View::of_slice(v, DType::F32, shape)
    }

    #[test]
    fn transpose_slice_pad_and_broadcast_move_the_right_elements() {
        let mut x: Vec<f32> = (0..6).map(|v| v as f32).collect();
        let xv = f32v(&mut x, &[2, 3]);
        let mut y = vec![0f32; 6];
        let t = TensorOp::Transpose { perm: vec![1, 0] };
        t.check(&[&[2, 3]], &[&[3, 2]]).unwrap();
        assert!(t
            .check(&[&[2, 3]], &[&[2, 3]])
            .unwrap_err()
            .contains("permuted"));
        t.run(&[&xv], &[f32v(&mut y, &[3, 2])]).unwrap();
        assert_eq!(y, [0., 3., 1., 4., 2., 5.]);

        let mut s = vec![0f32; 2];
        let sl = TensorOp::Slice {
            offsets: vec![1, 1],
        };
        sl.check(&[&[2, 3]], &[&[1, 2]]).unwrap();
        assert!(sl
            .check(&[&[2, 3]], &[&[1, 3]])
            .unwrap_err()
            .contains("past"));
        sl.run(&[&xv], &[f32v(&mut s, &[1, 2])]).unwrap();
        assert_eq!(s, [4., 5.]);

        let mut p = vec![9f32; 12];
        let pd = TensorOp::Pad {
            pads: vec![(1, 0), (0, 1)],
        };
        pd.check(&[&[2, 3]], &[&[3, 4]]).unwrap();
        pd.run(&[&xv], &[f32v(&mut p, &[3, 4])]).unwrap();
        assert_eq!(p, [0., 0., 0., 0., 0., 1., 2., 0., 3., 4., 5., 0.]);

        let mut b = vec![0f32; 12];
        TensorOp::BroadcastTo
            .check(&[&[2, 3]], &[&[2, 2, 3]])
            .unwrap();
        assert!(TensorOp::BroadcastTo.check(&[&[2, 3]], &[&[3, 3]]).is_err());
        TensorOp::BroadcastTo
            .run(&[&xv], &[f32v(&mut b, &[2, 2, 3])])
            .unwrap();
        assert_eq!(&b[6..], &x[..]);
    }

    #[test]
    fn arg_with_value_and_the_scatter_of_its_gradient() {
        let mut x = vec![1f32, 7., 3., 9., 2., 9.];
        let xv = f32v(&mut x, &[2, 3]);
        let (mut idx, mut val) = (vec![0i32; 2], vec![0f32; 2]);
        let op = TensorOp::ArgWithValue {
            max: true,
            dim: 1,
            keep_dims: false,
        };
        op.check(&[&[2, 3]], &[&[2], &[2]]).unwrap();
        op.run(
            &[&xv],
            &[
                View::of_slice(&mut idx, DType::I32, &[2]),
                f32v(&mut val, &[2]),
            ],
        )
        .unwrap();
        assert_eq!((idx.clone(), val.clone()), (vec![1, 0], vec![7., 9.]));
        // npu_max_backward: zeros scattered with the gradient at the indices
        let mut z = vec![0f32; 6];
        let mut g = vec![10f32, 20.];
        let mut out = vec![5f32; 6];
        let sc = TensorOp::ScatterElements { axis: 1 };
        sc.check(&[&[2, 3], &[2], &[2]], &[&[2, 3]]).unwrap();
        sc.run(
            &[
                &f32v(&mut z, &[2, 3]),
                &View::of_slice(&mut idx, DType::I32, &[2]),
                &f32v(&mut g, &[2]),
            ],
            &[f32v(&mut out, &[2, 3])],
        )
        .unwrap();
        assert_eq!(out, [0., 10., 0., 20., 0., 0.]);
    }
}
