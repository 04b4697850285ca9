//! Operators of CANN's ops-math documentation (`math/*/docs/aclnn*.md`) that the core families
//! did not cover: `aclnn_digamma.h`, `aclnn_lgamma.h`, `aclnn_logdet.h`, `aclnn_qr.h`,
//! `aclnn_maxn.h`, `aclnn_minn.h`, `aclnn_add_n.h`, `aclnn_sum.h` (the tensor-list sum of
//! AccumulateNV2), `aclnn_reduce_log_sum.h`, `aclnn_max_v2.h`, `aclnn_global_max_pool.h`,
//! `aclnn_global_average_pool.h` and `aclnn_scale.h`. The engine is `npu_emu::ops::math19`
//! (with `linalg::qr` and `reduce::reduce`).

use super::args::{self as a, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType::{self, *};
use npu_emu::ops::math19::{self as engine, ListOp};
use npu_emu::ops::reduce::{reduce, Reduce};
use npu_emu::ops::{iter, linalg};
use std::ffi::c_void;

/// `out` of `x`'s dtype and shape, `x` of one of `list`, at most 8 dimensions.
fn like_self(x: &T, o: &T, list: &[DType]) -> NnResult<()> {
    a::dtype_in(x, list)?;
    a::same_dtype(o, x)?;
    a::max_dims(x, 8)?;
    a::same_shape(o, x.shape())
}

fn unary(
    api: &'static str,
    self_: *const c_void,
    out: *mut c_void,
    f: fn(&npu_emu::ops::View, &npu_emu::ops::View) -> Result<(), String>,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    like_self(&x, &o, &[F32, F16, F64])?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| f(&v[0], &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDigammaGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDigammaGetWorkspaceSize",
        workspaceSize,
        executor,
        || unary("aclnnDigamma", self_, out, engine::digamma_op),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLgammaGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLgammaGetWorkspaceSize",
        workspaceSize,
        executor,
        || unary("aclnnLgamma", self_, out, engine::lgamma_op),
    )
}

/// `x` must be `[*, n, n]` with 2 to 8 dimensions; returns the batch shape.
fn square_batch(x: &T) -> NnResult<Vec<usize>> {
    let nd = x.ndim();
    if !(2..=8).contains(&nd) || x.shape()[nd - 1] != x.shape()[nd - 2] {
        return Err(NnError::invalid(format!(
            "{} must be a batch of square matrices (*, n, n) with 2 to 8 dimensions, but its \
             shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    Ok(x.shape()[..nd - 2].to_vec())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLogdetGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogdetGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[F32, F64])?;
            a::dtype_in(&o, &[F32, F64])?;
            a::same_dtype(&o, &x)?;
            let batch = square_batch(&x)?;
            a::same_shape(&o, &batch)?;
            let mut l = Launch::new("aclnnLogdet");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::logdet(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQrGetWorkspaceSize(
    self_: *const c_void,
    some: bool,
    Q: *mut c_void,
    R: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnQrGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let q = a::tensor(Q, "Q")?;
        let r = a::tensor(R, "R")?;
        a::dtype_in(&x, &[F32, F16, F64])?;
        a::same_dtype(&q, &x)?;
        a::same_dtype(&r, &x)?;
        let nd = x.ndim();
        if !(2..=8).contains(&nd) {
            return Err(NnError::invalid(format!(
                "self must have 2 to 8 dimensions, but its shape is {:?}",
                x.shape()
            )));
        }
        let (m, n) = (x.shape()[nd - 2], x.shape()[nd - 1]);
        // some: Q [*, m, k], R [*, k, n]; otherwise Q [*, m, m], R [*, m, n]
        let c = if some { m.min(n) } else { m };
        let batch = &x.shape()[..nd - 2];
        a::same_shape(&q, &[batch, &[m, c][..]].concat())?;
        a::same_shape(&r, &[batch, &[c, n][..]].concat())?;
        let mut l = Launch::new("aclnnQr");
        l.input(&x);
        l.output(&q);
        l.output(&r);
        l.finish(move |v, _| linalg::qr(&v[0], Some(&v[1]), &v[2]))
    })
}

/// The tensor-list operators: every tensor of `list`'s dtypes and of one dtype, `out` of
/// that dtype; with `same`, every shape equals `out`'s, otherwise they broadcast to it.
fn list_op(
    api: &'static str,
    tensors: *const c_void,
    out: *mut c_void,
    list: &[DType],
    same: bool,
    op: ListOp,
) -> NnResult<Built> {
    let xs = a::tensor_list(tensors, "tensors")?;
    let o = a::tensor(out, "out")?;
    if xs.is_empty() {
        if o.numel() == 0 && op == ListOp::Sum && same {
            let l = Launch::new(api);
            return l.finish(|_, _| Ok(()));
        }
        return Err(NnError::invalid("tensors is an empty list".to_string()));
    }
    for (i, x) in xs.iter().enumerate() {
        a::dtype_in(x, list).map_err(|e| e.with_suffix(format!(" (tensors[{i}])")))?;
        a::max_dims(x, 8).map_err(|e| e.with_suffix(format!(" (tensors[{i}])")))?;
        if x.dtype() != xs[0].dtype() {
            return Err(NnError::invalid(format!(
                "tensors[{i}] data type {} must be tensors[0]'s {}",
                x.dtype(),
                xs[0].dtype()
            )));
        }
        if same && x.shape() != xs[0].shape() {
            return Err(NnError::invalid(format!(
                "tensors[{i}] shape {:?} must equal tensors[0]'s {:?}",
                x.shape(),
                xs[0].shape()
            )));
        }
    }
    a::dtype_in(&o, list)?;
    a::same_dtype(&o, &xs[0])?;
    let refs: Vec<&T> = xs.iter().collect();
    let shape = a::broadcast_all(&refs)?;
    a::same_shape(&o, &shape)?;
    let n = xs.len();
    let mut l = Launch::new(api);
    l.inputs(&xs);
    l.output(&o);
    l.finish(move |v, _| engine::list_reduce(op, &v[..n], &v[n]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMaxNGetWorkspaceSize(
    tensors: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnMaxNGetWorkspaceSize", workspaceSize, executor, || {
        let list = &[F16, F32, I8, I32, I64, BF16];
        list_op("aclnnMaxN", tensors, out, list, false, ListOp::Max)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMinNGetWorkspaceSize(
    tensors: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnMinNGetWorkspaceSize", workspaceSize, executor, || {
        let list = &[F16, F32, I8, U8, I32, I64, BF16];
        list_op("aclnnMinN", tensors, out, list, false, ListOp::Min)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddNGetWorkspaceSize(
    tensors: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnAddNGetWorkspaceSize", workspaceSize, executor, || {
        let list = &[I32, I64, F16, BF16, F32];
        list_op("aclnnAddN", tensors, out, list, true, ListOp::Sum)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSumGetWorkspaceSize(
    tensors: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnSumGetWorkspaceSize", workspaceSize, executor, || {
        let list = &[F16, F32, I8, I32, U8];
        list_op("aclnnSum", tensors, out, list, false, ListOp::Sum)
    })
}

/// The reduced dimensions of an ONNX-style reduction (`dims` empty: all of them, or none
/// with `noop`) and the output shape; `None` dimensions means "copy the input".
fn onnx_dims(
    x: &T,
    ds: &[i64],
    arg: &str,
    keep: bool,
    noop: bool,
) -> NnResult<(Option<Vec<usize>>, Vec<usize>)> {
    if ds.is_empty() && noop {
        return Ok((None, x.shape().to_vec()));
    }
    let dims = a::dims(ds, x.ndim(), arg)?;
    let shape = x
        .shape()
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (dims.contains(&i), keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok((Some(dims), shape))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnReduceLogSumGetWorkspaceSize(
    data: *const c_void,
    axes: *const c_void,
    keepDims: bool,
    noopWithEmptyAxes: bool,
    reduce_: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnReduceLogSumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(data, "data")?;
            let ax = a::int_array(axes, "axes")?;
            let o = a::tensor(reduce_, "reduce")?;
            a::dtype_in(&x, &[F16, F32, BF16])?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let (dims, shape) = onnx_dims(&x, &ax, "axes", keepDims, noopWithEmptyAxes)?;
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnReduceLogSum");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| match &dims {
                Some(d) => engine::reduce_log_sum(&v[0], d, &v[1]),
                None => iter::copy(&v[0], &v[1]),
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMaxV2GetWorkspaceSize(
    self_: *const c_void,
    dims: *const c_void,
    keepDims: bool,
    noopWithEmptyDims: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaxV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let ds = a::int_array(dims, "dims")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, a::ALL_NUM)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let (rd, shape) = onnx_dims(&x, &ds, "dims", keepDims, noopWithEmptyDims)?;
            if let Some(d) = rd.iter().flatten().find(|&&d| x.shape()[d] == 0) {
                return Err(NnError::invalid(format!(
                    "self dimension {d} to reduce has size 0 (shape {:?}); max has no identity",
                    x.shape()
                )));
            }
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnMaxV2");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| match &rd {
                Some(d) => reduce(Reduce::Max, &v[0], d, &v[1], true),
                None => iter::copy(&v[0], &v[1]),
            })
        },
    )
}

/// GlobalMaxPool / GlobalAveragePool: `self` of 4 to 8 dimensions, `out` of its dtype and
/// rank with the first two dimensions of `self` and 1 elsewhere.
fn global_pool(
    api: &'static str,
    self_: *const c_void,
    out: *mut c_void,
    list: &[DType],
    op: Reduce,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, list)?;
    a::same_dtype(&o, &x)?;
    let nd = x.ndim();
    if !(4..=8).contains(&nd) {
        return Err(NnError::invalid(format!(
            "self must have 4 to 8 dimensions, but its shape is {:?}",
            x.shape()
        )));
    }
    if x.format != o.format && x.format >= 0 && o.format >= 0 {
        return Err(NnError::invalid(format!(
            "out format {} must be self's format {}",
            o.format, x.format
        )));
    }
    let dims: Vec<usize> = (2..nd).collect();
    if let Some(&d) = dims.iter().find(|&&d| x.shape()[d] == 0) {
        return Err(NnError::invalid(format!(
            "self dimension {d} has size 0 (shape {:?})",
            x.shape()
        )));
    }
    let mut shape = vec![1usize; nd];
    shape[..2].copy_from_slice(&x.shape()[..2]);
    a::same_shape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| reduce(op, &v[0], &dims, &v[1], false))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGlobalMaxPoolGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGlobalMaxPoolGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let list = &[F32, F16, F64];
            global_pool("aclnnGlobalMaxPool", self_, out, list, Reduce::Max)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGlobalAveragePoolGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGlobalAveragePoolGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let list = &[F32, F16, F64, BF16];
            global_pool("aclnnGlobalAveragePool", self_, out, list, Reduce::Mean)
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnScaleGetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    bias: *const c_void,
    axis: i64,
    numAxes: i64,
    scaleFromBlob: bool,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScaleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let s = a::tensor(scale, "scale")?;
            let b = a::opt_tensor(bias, "bias")?;
            let yt = a::tensor(y, "y")?;
            a::dtype_in(&xt, &[F32, F16, BF16])?;
            a::same_dtype(&s, &xt)?;
            a::same_dtype(&yt, &xt)?;
            a::max_dims(&xt, 8)?;
            a::max_dims(&s, 8)?;
            a::same_shape(&yt, xt.shape())?;
            if let Some(b) = &b {
                a::same_dtype(b, &s)?;
                a::same_shape(b, s.shape())?;
            }
            let rank = xt.ndim();
            let ax = a::dim(axis, rank, "axis")?;
            if numAxes < -1 {
                return Err(NnError::invalid(format!(
                    "numAxes must be at least -1, but it is {numAxes}"
                )));
            }
            let (single, expect) = if scaleFromBlob {
                let len = if numAxes == -1 {
                    rank.saturating_sub(ax)
                } else {
                    numAxes as usize
                };
                if ax + len > rank {
                    return Err(NnError::invalid(format!(
                        "axis {axis} plus numAxes {numAxes} exceeds the {rank} dimensions of x"
                    )));
                }
                if len == 0 {
                    if s.shape() != [1] {
                        return Err(NnError::invalid(format!(
                            "with scaleFromBlob and numAxes 0, scale must have shape [1], but it \
                         is {:?}",
                            s.shape()
                        )));
                    }
                    (true, vec![1])
                } else {
                    (false, xt.shape()[ax..ax + len].to_vec())
                }
            } else {
                let len = s.ndim();
                if ax + len > rank {
                    return Err(NnError::invalid(format!(
                        "axis {axis} plus the {len} dimensions of scale exceed the {rank} \
                     dimensions of x"
                    )));
                }
                (false, xt.shape()[ax..ax + len].to_vec())
            };
            if s.shape() != expect.as_slice() {
                return Err(NnError::invalid(format!(
                    "scale has shape {:?}, expected {:?} (x shape {:?} from axis {ax})",
                    s.shape(),
                    expect,
                    xt.shape()
                )));
            }
            let mut l = Launch::new("aclnnScale");
            l.input(&xt);
            l.input(&s);
            let has_bias = b.is_some();
            if let Some(b) = &b {
                l.input(b);
            }
            l.output(&yt);
            l.finish(move |v, _| {
                let (bv, yv) = if has_bias {
                    (Some(&v[2]), &v[3])
                } else {
                    (None, &v[2])
                };
                engine::scale(&v[0], &v[1], bv, ax, single, yv)
            })
        },
    )
}

crate::phase2!(
    aclnnDigamma,
    aclnnLgamma,
    aclnnLogdet,
    aclnnQr,
    aclnnMaxN,
    aclnnMinN,
    aclnnAddN,
    aclnnSum,
    aclnnReduceLogSum,
    aclnnMaxV2,
    aclnnGlobalMaxPool,
    aclnnGlobalAveragePool,
    aclnnScale
);

#[no_mangle]
pub unsafe extern "C" fn aclnnSignBitsPackGetWorkspaceSize(
    self_: *const c_void,
    size: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSignBitsPackGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[F16, F32])?;
            a::dtype_in(&o, &[U8])?;
            if x.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "self must be 1-D, but its shape is {:?}",
                    x.shape()
                )));
            }
            let total = x.numel().div_ceil(8);
            if size <= 0 || total % size as usize != 0 {
                return Err(NnError::invalid(format!(
                    "size {size} must be positive and divide the {total} packed bytes"
                )));
            }
            let s = size as usize;
            a::same_shape(&o, &[s, total / s])?;
            let mut l = Launch::new("aclnnSignBitsPack");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::sign_bits_pack(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSignBitsUnpackGetWorkspaceSize(
    self_: *const c_void,
    size: i64,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSignBitsUnpackGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            let dt = a::dtype(dtype, "dtype")?;
            a::dtype_of(dt, "dtype", &[F16, F32])?;
            a::dtype_in(&x, &[U8])?;
            if o.dtype() != dt {
                return Err(NnError::invalid(format!(
                    "out data type {} must be dtype {dt}",
                    o.dtype()
                )));
            }
            if x.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "self must be 1-D, but its shape is {:?}",
                    x.shape()
                )));
            }
            let bits = x.numel() * 8;
            if size <= 0 || bits % size as usize != 0 {
                return Err(NnError::invalid(format!(
                    "size {size} must be positive and divide the {bits} unpacked values"
                )));
            }
            let s = size as usize;
            a::same_shape(&o, &[s, bits / s])?;
            let mut l = Launch::new("aclnnSignBitsUnpack");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::sign_bits_unpack(&v[0], &v[1]))
        },
    )
}

crate::phase2!(aclnnSignBitsPack, aclnnSignBitsUnpack);
