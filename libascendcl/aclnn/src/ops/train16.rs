//! Operators torch_npu 2.9 looks up on common training paths: `aclnn_scatter_reduce.h`
//! (ScatterReduce, InplaceScatterReduce: `torch.scatter_reduce` / `scatter_reduce_`),
//! `aclnn_searchsorted.h`'s SearchSorteds (`torch.searchsorted` of a scalar),
//! `aclnn_linalg_cholesky.h` (`torch.linalg.cholesky`), `aclnn_unfold_grad.h` (the gradient of
//! `Tensor.unfold`), `aclnn_logit_grad.h` (of `torch.logit`), `aclnn_hardswish_backward_v2.h`
//! (of `F.hardswish`), `aclnn_cdist_backward.h` (of `torch.cdist`),
//! `aclnn_multilabel_margin_loss.h` (`F.multilabel_margin_loss`), `aclnn_index_add_v2.h`
//! (torch_npu's `_npu_index_add`) and `aclnn_add_relu.h` (AddRelu, InplaceAddRelu:
//! `torch._add_relu`). The engine is `npu_emu::ops::train16` (with `extra::searchsorted` and
//! `select::index_add`).

use super::args::{self as a, FLOATS, INDEX};
use super::launch::{phase1, Built, Launch};
use super::loss::{reduction, zero_d};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::nn::Reduction;
use npu_emu::ops::train16::{self as engine, ScatterReduce};
use npu_emu::ops::{extra, select, View};
use std::ffi::c_void;

/// ACLNN_ERR_INNER_TILING_ERROR: UnfoldGrad's shape, dim, size and step errors.
const ACLNN_ERR_INNER_TILING_ERROR: i32 = 561002;

/// The dtypes of ScatterReduce's `self`, `src` and `out` (the documented list but the complex
/// types, which the engine does not compute).
const SCATTER_TYPES: &[DType] = &[
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::Bool,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::BF16,
];

#[allow(clippy::too_many_arguments)]
fn scatter_reduce(
    api: &'static str,
    x: a::T,
    dim: i64,
    i: a::T,
    s: a::T,
    reduce: i64,
    include_self: bool,
    o: a::T,
) -> NnResult<Built> {
    a::dtype_in(&x, SCATTER_TYPES)?;
    a::dtype_in(&i, INDEX)?;
    a::dtype_in(&s, SCATTER_TYPES)?;
    a::same_dtype(&s, &x)?;
    a::same_dtype(&o, &x)?;
    a::max_dims(&x, 8)?;
    if i.ndim() != x.ndim() || s.ndim() != x.ndim() {
        return Err(NnError::invalid(format!(
            "{}, index and src must have the same number of dimensions, but their shapes are \
             {:?}, {:?} and {:?}",
            x.arg,
            x.shape(),
            i.shape(),
            s.shape()
        )));
    }
    a::same_shape(&o, x.shape())?;
    let d = a::dim(dim, x.ndim(), "dim")?;
    for k in 0..i.ndim() {
        if i.shape()[k] > s.shape()[k] || (k != d && i.shape()[k] > x.shape()[k]) {
            return Err(NnError::invalid(format!(
                "index shape {:?} must not exceed src {:?} in any dimension, nor {} {:?} in \
                 any dimension but {d}",
                i.shape(),
                s.shape(),
                x.arg,
                x.shape()
            )));
        }
    }
    let r = ScatterReduce::from_code(reduce).ok_or_else(|| {
        NnError::invalid(format!(
            "reduce {reduce} is not supported; 0 (none), 1 (add), 2 (mul), 3 (max), 4 (min) \
             or 5 (mean)"
        ))
    })?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&i);
    l.input(&s);
    l.output(&o);
    l.finish(move |v, _| engine::scatter_reduce(&v[0], d, &v[1], &v[2], r, include_self, &v[3]))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnScatterReduceGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    src: *const c_void,
    reduce: i64,
    includeSelf: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterReduceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(src, "src")?;
            let o = a::tensor(out, "out")?;
            scatter_reduce("aclnnScatterReduce", x, dim, i, s, reduce, includeSelf, o)
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnInplaceScatterReduceGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    src: *const c_void,
    reduce: i64,
    includeSelf: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceScatterReduceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(src, "src")?;
            scatter_reduce(
                "aclnnInplaceScatterReduce",
                x.clone(),
                dim,
                i,
                s,
                reduce,
                includeSelf,
                x,
            )
        },
    )
}

/// The data types of SearchSorteds' `sortedSequence` (as SearchSorted's).
const SEARCH_TYPES: &[DType] = &[
    DType::F64,
    DType::F32,
    DType::F16,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
];

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnSearchSortedsGetWorkspaceSize(
    sortedSequence: *const c_void,
    self_: *const c_void,
    outInt32: bool,
    right: bool,
    sorter: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSearchSortedsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(sortedSequence, "sortedSequence")?;
            let x = a::scalar(self_, "self")?;
            let s = a::opt_tensor(sorter, "sorter")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&q, SEARCH_TYPES)?;
            a::dtype_of(x.dtype, "self", SEARCH_TYPES)?;
            if q.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "sortedSequence must be 1-D for a scalar self, but its shape is {:?}",
                    q.shape()
                )));
            }
            if let Some(s) = &s {
                a::dtype_in(s, &[DType::I64])?;
                a::same_shape(s, q.shape())?;
            }
            let want = if outInt32 { DType::I32 } else { DType::I64 };
            if o.dtype() != want {
                return Err(NnError::invalid(format!(
                    "out data type {} must be {want} (outInt32 is {outInt32})",
                    o.dtype()
                )));
            }
            zero_d(&o)?;
            let value = x.to_f64();
            let hs = s.is_some();
            let mut l = Launch::new("aclnnSearchSorteds");
            l.input(&q);
            if let Some(s) = &s {
                l.input(s);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let mut one = [value];
                let xv = View::of_slice(&mut one, DType::F64, &[]);
                let sv = hs.then_some(&v[1]);
                let mut out = v[v.len() - 1].clone();
                out.shape.clear();
                out.strides.clear();
                extra::searchsorted(&v[0], &xv, right, sv, &out)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLinalgCholeskyGetWorkspaceSize(
    self_: *const c_void,
    upper: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLinalgCholeskyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[DType::F32, DType::BF16])?;
            a::same_dtype(&o, &x)?;
            if x.ndim() < 2 || x.ndim() > 8 || x.shape()[x.ndim() - 1] != x.shape()[x.ndim() - 2] {
                return Err(NnError::invalid(format!(
                    "self must be 2-D to 8-D with square last two dimensions, but its shape is \
                     {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnLinalgCholesky");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::cholesky(&v[0], upper, &v[1]))
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUnfoldGradGetWorkspaceSize(
    gradOut: *const c_void,
    inputSizes: *const c_void,
    dim: i64,
    size: i64,
    step: i64,
    gradIn: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUnfoldGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let sizes = a::int_array(inputSizes, "inputSizes")?;
            let o = a::tensor(gradIn, "gradIn")?;
            a::dtype_in(&g, &[DType::F32, DType::F16, DType::BF16])?;
            a::same_dtype(&o, &g)?;
            // the shape rules are the tiling's: the reference reports them as 561002
            let tiling = |m: String| NnError::new(ACLNN_ERR_INNER_TILING_ERROR, m);
            if sizes.iter().any(|&s| s < 0) || sizes.len() > 8 || sizes.len() + 1 != g.ndim() {
                return Err(tiling(format!(
                    "inputSizes {sizes:?} must be non-negative, at most 8 entries and one fewer \
                     than gradOut's {} dimensions",
                    g.ndim()
                )));
            }
            if dim < 0 || dim as usize >= sizes.len() {
                return Err(tiling(format!(
                    "dim {dim} must lie in [0, {}) (the entries of inputSizes)",
                    sizes.len()
                )));
            }
            let d = dim as usize;
            if size <= 0 || size > sizes[d] || step <= 0 || size > 100 || step > 100 {
                return Err(tiling(format!(
                    "size {size} and step {step} must be in [1, 100], and size at most \
                     inputSizes[{d}] = {}",
                    sizes[d]
                )));
            }
            let (len, size, step) = (sizes[d], size as usize, step as usize);
            let mut want: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
            want[d] = (len as usize - size) / step + 1;
            want.push(size);
            if g.shape() != want.as_slice() {
                return Err(tiling(format!(
                    "gradOut has shape {:?}, expected {want:?} (inputSizes {sizes:?} unfolded \
                     along {d} by size {size}, step {step})",
                    g.shape()
                )));
            }
            let sizes: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
            a::same_shape(&o, &sizes)?;
            let mut l = Launch::new("aclnnUnfoldGrad");
            l.input(&g);
            l.output(&o);
            l.finish(move |v, _| engine::unfold_grad(&v[0], d, size, step, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLogitGradGetWorkspaceSize(
    x: *const c_void,
    dy: *const c_void,
    eps: f64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogitGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xv = a::tensor(x, "x")?;
            let g = a::tensor(dy, "dy")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&xv, &[DType::F32, DType::F16, DType::BF16])?;
            a::same_dtype(&g, &xv)?;
            a::same_dtype(&o, &xv)?;
            a::max_dims(&xv, 8)?;
            a::same_shape(&g, xv.shape())?;
            a::same_shape(&o, xv.shape())?;
            let mut l = Launch::new("aclnnLogitGrad");
            l.input(&xv);
            l.input(&g);
            l.output(&o);
            l.finish(move |v, _| engine::logit_grad(&v[0], &v[1], eps, &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnHardswishBackwardV2GetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHardswishBackwardV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&g, FLOATS)?;
            a::same_dtype(&x, &g)?;
            a::same_dtype(&o, &g)?;
            a::max_dims(&g, 8)?;
            a::same_shape(&x, g.shape())?;
            a::same_shape(&o, g.shape())?;
            let mut l = Launch::new("aclnnHardswishBackwardV2");
            l.input(&g);
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::hardswish_backward_v2(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnCdistBackwardGetWorkspaceSize(
    grad: *const c_void,
    x1: *const c_void,
    x2: *const c_void,
    cdist: *const c_void,
    p: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCdistBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(grad, "grad")?;
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let d = a::tensor(cdist, "cdist")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&g, &[DType::F32, DType::F16])?;
            for t in [&a1, &a2, &d, &o] {
                a::same_dtype(t, &g)?;
            }
            let nd = g.ndim();
            if !(2..=8).contains(&nd) || [&a1, &a2, &d, &o].iter().any(|t| t.ndim() != nd) {
                return Err(NnError::invalid(format!(
                    "grad, x1, x2, cdist and out must all have the same 2 to 8 dimensions, but \
                     their shapes are {:?}, {:?}, {:?}, {:?} and {:?}",
                    g.shape(),
                    a1.shape(),
                    a2.shape(),
                    d.shape(),
                    o.shape()
                )));
            }
            let (s1, s2) = (a1.shape(), a2.shape());
            let mut want = s1[..nd - 2].to_vec();
            want.extend([s1[nd - 2], s2[nd - 2]]);
            if s1[..nd - 2] != s2[..nd - 2] || s1[nd - 1] != s2[nd - 1] {
                return Err(NnError::invalid(format!(
                    "x1 {s1:?} and x2 {s2:?} must share their batch dimensions and their last \
                     dimension"
                )));
            }
            a::same_shape(&g, &want)?;
            a::same_shape(&d, &want)?;
            a::same_shape(&o, s1)?;
            if p != -1.0 && (p.is_nan() || p < 0.0) {
                return Err(NnError::invalid(format!(
                    "p {p} must be non-negative (or -1 for infinity)"
                )));
            }
            let p = p as f64;
            let mut l = Launch::new("aclnnCdistBackward");
            for t in [&g, &a1, &a2, &d] {
                l.input(t);
            }
            l.output(&o);
            l.finish(move |v, _| engine::cdist_backward(&v[0], &v[1], &v[2], &v[3], p, &v[4]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMultilabelMarginLossGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    isTarget: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMultilabelMarginLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            let it = a::tensor(isTarget, "isTarget")?;
            a::dtype_in(&x, &[DType::F32, DType::F16])?;
            a::dtype_in(&t, INDEX)?;
            a::same_dtype(&o, &x)?;
            a::same_dtype(&it, &x)?;
            let r = reduction(reduction_)?;
            if x.ndim() > 2 || t.shape() != x.shape() {
                return Err(NnError::invalid(format!(
                    "self must be 0-D, 1-D or 2-D and target of its shape, but their shapes are \
                     {:?} and {:?}",
                    x.shape(),
                    t.shape()
                )));
            }
            a::same_shape(&it, t.shape())?;
            if r == Reduction::None && x.ndim() == 2 {
                a::same_shape(&o, &x.shape()[..1])?;
            } else {
                zero_d(&o)?;
            }
            let mut l = Launch::new("aclnnMultilabelMarginLoss");
            l.input(&x);
            l.input(&t);
            l.output(&o);
            l.output(&it);
            l.finish(move |v, _| {
                let mut out = v[2].clone();
                if !(r == Reduction::None && v[0].ndim() == 2) {
                    out.shape.clear();
                    out.strides.clear();
                }
                engine::multilabel_margin_loss(&v[0], &v[1], r, &out, &v[3])
            })
        },
    )
}

/// The dtypes of IndexAddV2's `self`, `source` and `out`.
const INDEX_ADD_TYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::U8,
    DType::F64,
    DType::I64,
    DType::Bool,
    DType::BF16,
];

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnIndexAddV2GetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    source: *const c_void,
    alpha: *const c_void,
    mode: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexAddV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(source, "source")?;
            let al = a::scalar(alpha, "alpha")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, INDEX_ADD_TYPES)?;
            a::dtype_in(&i, INDEX)?;
            a::same_dtype(&s, &x)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let d = a::dim(dim, x.ndim(), "dim")?;
            if i.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "index must be 1-D, but its shape is {:?}",
                    i.shape()
                )));
            }
            let mut want = x.shape().to_vec();
            if !want.is_empty() {
                want[d] = i.numel();
            }
            if s.shape() != want.as_slice() {
                return Err(NnError::invalid(format!(
                    "source has shape {:?}, expected {want:?} (self's shape with dimension {d} \
                     the length of index)",
                    s.shape()
                )));
            }
            a::same_shape(&o, x.shape())?;
            if mode == 0
                && (x.ndim() != 2
                    || d != 0
                    || ![DType::F32, DType::F16, DType::I32, DType::I16, DType::BF16]
                        .contains(&x.dtype()))
            {
                return Err(NnError::invalid(format!(
                    "mode 0 (high performance) needs a 2-D FLOAT, FLOAT16, INT32, INT16 or \
                     BFLOAT16 self and dim 0 or -2, but self is {} {:?} and dim {dim}",
                    x.dtype(),
                    x.shape()
                )));
            }
            // mode 0 leaves alpha out of the computation (the documented non-deterministic
            // high-performance mode)
            let av = if mode == 0 {
                (1.0, 1)
            } else {
                (al.to_f64(), al.to_i64())
            };
            let mut l = Launch::new("aclnnIndexAddV2");
            l.input(&x);
            l.input(&i);
            l.input(&s);
            l.output(&o);
            l.finish(move |v, _| select::index_add(&v[0], d, &v[1], &v[2], av, &v[3]))
        },
    )
}

/// The dtypes of AddRelu's tensors (alpha: any type castable to the promoted one; torch_npu
/// passes a Python float as DOUBLE).
const ADD_RELU_TYPES: &[DType] = &[
    DType::BF16,
    DType::F16,
    DType::F32,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::I32,
    DType::I64,
];

fn add_relu(api: &'static str, x: a::T, y: a::T, alpha: *const c_void, o: a::T) -> NnResult<Built> {
    let al = a::scalar(alpha, "alpha")?;
    a::dtype_in(&x, ADD_RELU_TYPES)?;
    a::dtype_in(&y, ADD_RELU_TYPES)?;
    a::dtype_in(&o, ADD_RELU_TYPES)?;
    let ct = a::promote(x.dtype(), x.arg, y.dtype(), "other")?;
    if !npu_emu::ops::dtype::can_cast(al.dtype, ct) {
        return Err(NnError::invalid(format!(
            "alpha data type {} cannot be cast to the promoted type {ct}",
            al.dtype
        )));
    }
    a::castable(ct, &o)?;
    a::max_dims(&x, 8)?;
    a::max_dims(&y, 8)?;
    let shape = a::broadcast(&x, &y)?;
    a::same_shape(&o, &shape)?;
    let av = (al.to_f64(), al.to_i64());
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&y);
    l.output(&o);
    l.finish(move |v, _| engine::add_relu(&v[0], &v[1], av, ct, &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddReluGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddReluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            add_relu("aclnnAddRelu", x, y, alpha, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceAddReluGetWorkspaceSize(
    selfRef: *mut c_void,
    other: *const c_void,
    alpha: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceAddReluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let y = a::tensor(other, "other")?;
            add_relu("aclnnInplaceAddRelu", x.clone(), y, alpha, x)
        },
    )
}

crate::phase2!(
    aclnnScatterReduce,
    aclnnInplaceScatterReduce,
    aclnnSearchSorteds,
    aclnnLinalgCholesky,
    aclnnUnfoldGrad,
    aclnnLogitGrad,
    aclnnHardswishBackwardV2,
    aclnnCdistBackward,
    aclnnMultilabelMarginLoss,
    aclnnIndexAddV2,
    aclnnAddRelu,
    aclnnInplaceAddRelu
);
