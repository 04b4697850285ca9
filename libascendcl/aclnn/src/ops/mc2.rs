//! The fused matmul + collective operators (CANN's "MC2" family, ops-transformer `mc2/`):
//! `aclnn_matmul_all_reduce.h` (+V2), `aclnn_matmul_all_reduce_add_rms_norm.h`,
//! `aclnn_inplace_matmul_all_reduce_add_rms_norm.h`, `aclnn_all_gather_matmul.h` and
//! `aclnn_matmul_reduce_scatter.h`, `aclnn_quant_matmul_all_reduce.h` (+V2), `aclnn_weight_quant_matmul_all_reduce.h`: what torch_npu calls for `npu_mm_all_reduce_base`,
//! `npu_all_gather_base_mm` and `npu_mm_reduce_scatter_base`.
//!
//! The communicator is named by `group` (the string `HcclGetCommName` gives); phase 1 finds
//! it (its rank count decides shapes) and phase 2 enqueues, in order on the caller's stream,
//! the engine steps (matmul, add + RMS norm) and libhccl's collective
//! ([`crate::collective`]), with the intermediates in the workspace. The computation is not
//! overlapped with the communication as CANN's kernels do; the result is the same.
//!
//! Documented choices:
//! - `output = allreduce(x1 @ x2 + bias (+ x3))`, `output = reducescatter(x1 @ x2 + bias)` as
//!   the operator pages write them and CANN's kernels compute them: every rank adds its bias
//!   and its x3 to its own product before the reduction.
//! - Each rank's product is rounded once to the output dtype (FLOAT16/BFLOAT16, accumulated
//!   in f32), then reduced by HCCL; the add + RMS norm is computed in f64 from the reduced
//!   product and rounded once.
//! - A `group` that names no live communicator of this process (or a process without
//!   libhccl) is `ACLNN_ERR_PARAM_INVALID` naming the group.
//! - Rank counts of the Atlas A2 pages: AllReduce forms 1, 2, 4, 8; AllGather and
//!   ReduceScatter 2, 4, 8.
//! - `aclnnAllGatherMatmul`'s `gatherOut` may be NULL or hold no elements (torch_npu passes
//!   an empty tensor when `gather_output=False`): then the gathered x1 is not written.

use super::args::{self as a};
use super::launch::{phase1, Launch, StepSpec};
use crate::collective::{self, Collective, Kind};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::{iter, matmul, norm, quant, Layout, View};
use std::ffi::{c_char, c_void, CStr};

const DTYPES: &[DType] = &[DType::F16, DType::BF16];
/// Alignment of the workspace buffers (bytes).
const ALIGN: usize = 512;

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// A `const char*` argument (NULL → ACLNN_ERR_PARAM_NULLPTR naming it).
fn c_str(p: *const c_char, arg: &str) -> NnResult<String> {
    if p.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `reduceOp` ("sum" only), `commTurn` (0 only), `streamMode` (1 only).
fn attrs(reduce_op: Option<*const c_char>, comm_turn: i64, stream_mode: i64) -> NnResult<()> {
    if let Some(p) = reduce_op {
        let r = c_str(p, "reduceOp")?;
        if r != "sum" {
            return Err(bad(format!(
                "reduceOp \"{r}\" is not supported: only \"sum\" is"
            )));
        }
    }
    if comm_turn != 0 {
        return Err(bad(format!(
            "commTurn {comm_turn} is not supported: only 0 is"
        )));
    }
    if stream_mode != 1 {
        return Err(bad(format!(
            "streamMode {stream_mode} is not supported: only 1 (ACL_STOP_ON_FAILURE) is"
        )));
    }
    Ok(())
}

/// The communicator named `group` and its rank count, which must be one of `allowed`.
fn group_ranks(group: *const c_char, allowed: &[u32]) -> NnResult<(String, u32)> {
    let g = c_str(group, "group")?;
    let c = collective::comm(&g)?;
    if !allowed.contains(&c.ranks) {
        return Err(bad(format!(
            "group \"{g}\" has {} ranks: this operator supports {allowed:?}",
            c.ranks
        )));
    }
    Ok((g, c.ranks))
}

/// `t` must have `dt` (the dtype of x1).
fn dtype_like(t: &a::T, x1: &a::T) -> NnResult<()> {
    if t.dtype() != x1.dtype() {
        return Err(bad(format!(
            "{} has dtype {:?}, but it must have x1's dtype {:?}",
            t.arg,
            t.dtype(),
            x1.dtype()
        )));
    }
    Ok(())
}

/// x1 `[.., k]` (2-D, or 3-D when `three`), x2 `[k, n]`; returns (m, k, n).
fn mm_shapes(x1: &a::T, x2: &a::T, three: bool) -> NnResult<(usize, usize, usize)> {
    mm_shapes_of(x1, x2, three, DTYPES)
}

/// [`mm_shapes`] for a FLOAT16/BFLOAT16 x1 and an INT8 x2 (the weight-quant form).
fn mm_shapes_w8(x1: &a::T, x2: &a::T) -> NnResult<(usize, usize, usize)> {
    a::dtype_in(x2, &[DType::I8])?;
    let mut x2f = x2.clone();
    x2f.layout.dtype = x1.dtype();
    mm_shapes_of(x1, &x2f, true, DTYPES)
}

/// The weight-quant form's antiquant parameters (WeightQuantMatmulAllReduce).
struct WeightQuant {
    scale: a::T,
    offset: Option<a::T>,
    layout: quant::AntiquantLayout,
}

/// The antiquant layout of `scale` (`[1]`; `[n]` / `[1, n]`; `[ceil(k / group), n]`) with its
/// checks: the scale and offset of x1's dtype, the offset shaped like the scale, the group
/// size 0 or a multiple of 32 in [32, k - 1].
fn weight_quant_layout(
    scale: &a::T,
    offset: Option<&a::T>,
    group: i64,
    dt: DType,
    k: usize,
    n: usize,
) -> NnResult<quant::AntiquantLayout> {
    dtype_is(scale, dt)?;
    if let Some(o) = offset {
        dtype_is(o, dt)?;
        a::same_shape(o, scale.shape())?;
    }
    let sh = scale.shape();
    if group != 0 {
        if group < 32 || group % 32 != 0 || group as usize >= k {
            return Err(bad(format!(
                "antiquantGroupSize {group} must be 0 or a multiple of 32 in [32, k - 1 = {}]",
                k.saturating_sub(1)
            )));
        }
        let g = group as usize;
        a::same_shape(scale, &[k.div_ceil(g), n])?;
        return Ok(quant::AntiquantLayout::GroupKn(g));
    }
    if sh == [1] {
        Ok(quant::AntiquantLayout::Tensor)
    } else if sh == [n] || sh == [1, n] {
        Ok(quant::AntiquantLayout::Channel)
    } else {
        Err(bad(format!(
            "antiquantScale must have shape [1], [{n}] or [1, {n}] (or [ceil(k / antiquantGroupSize), n] per group), but its shape is {sh:?}"
        )))
    }
}

/// [`mm_shapes`] for x1 of one of `dtypes`.
fn mm_shapes_of(
    x1: &a::T,
    x2: &a::T,
    three: bool,
    dtypes: &[DType],
) -> NnResult<(usize, usize, usize)> {
    a::dtype_in(x1, dtypes)?;
    dtype_like(x2, x1)?;
    let ok1 = x1.ndim() == 2 || (three && x1.ndim() == 3);
    if !ok1 {
        return Err(bad(format!(
            "x1 must be {}, but its shape is {:?}",
            if three { "2-D or 3-D" } else { "2-D" },
            x1.shape()
        )));
    }
    if x2.ndim() != 2 {
        return Err(bad(format!(
            "x2 must be 2-D, but its shape is {:?}",
            x2.shape()
        )));
    }
    let k = x1.shape()[x1.ndim() - 1];
    if x2.shape()[0] != k {
        return Err(bad(format!(
            "the k axis of x1 {:?} and x2 {:?} differ",
            x1.shape(),
            x2.shape()
        )));
    }
    let m: usize = x1.shape()[..x1.ndim() - 1].iter().product();
    let n = x2.shape()[1];
    for (v, what) in [(m, "m (the rows of x1)"), (k, "k"), (n, "n")] {
        if v > i32::MAX as usize {
            return Err(bad(format!("{what} = {v} exceeds INT32_MAX")));
        }
    }
    Ok((m, k, n))
}

/// `t` must have the operator's dtype `dt` (x1's, or the output's for the quant forms).
fn dtype_is(t: &a::T, dt: DType) -> NnResult<()> {
    if t.dtype() != dt {
        return Err(bad(format!(
            "{} has dtype {:?}, but it must have the operator's dtype {dt:?}",
            t.arg,
            t.dtype()
        )));
    }
    Ok(())
}

/// The quant forms' `dequantScale` and `pertokenScale` (QuantMatmulAllReduce, V2).
struct Quant {
    dequant: a::T,
    pertoken: Option<a::T>,
}

/// Check the quant scales against the output dtype `dt`, n and m (the page's rules).
fn quant_checks(q: &Quant, dt: DType, m: usize, n: usize) -> NnResult<()> {
    let d = q.dequant.dtype();
    let ok = match (dt, q.pertoken.is_some()) {
        (DType::BF16, _) => d == DType::BF16,
        (_, false) => matches!(d, DType::I64 | DType::U64),
        (_, true) => d == DType::F32,
    };
    if !ok {
        return Err(bad(format!(
            "dequantScale has dtype {d:?}: with a {dt:?} output{} it must be {}",
            if q.pertoken.is_some() {
                " and pertokenScale"
            } else {
                ""
            },
            match (dt, q.pertoken.is_some()) {
                (DType::BF16, _) => "BF16",
                (_, false) => "INT64 or UINT64 (aclnnTransQuantParamV2's parameters)",
                (_, true) => "FLOAT",
            }
        )));
    }
    let sh = q.dequant.shape();
    if !(sh == [1] || sh == [n] || sh == [1, n]) {
        return Err(bad(format!(
            "dequantScale must have shape [1], [{n}] or [1, {n}], but its shape is {sh:?}"
        )));
    }
    if let Some(p) = &q.pertoken {
        a::dtype_in(p, &[DType::F32])?;
        a::same_shape(p, &[m])?;
    }
    Ok(())
}

/// x1 `[b, s, k]` or `[m, k]` as a 2-D `[m, k]` view (its first two strides must merge,
/// checked in phase 1 by [`mergeable`]).
fn flat2(v: &View, m: usize) -> View {
    let n = v.shape.len();
    let mut w = v.clone();
    w.shape = vec![m, v.shape[n - 1]];
    w.strides = vec![v.strides[n - 2], v.strides[n - 1]];
    w
}

fn mergeable(t: &a::T) -> NnResult<()> {
    let (sh, st) = (&t.layout.shape, &t.layout.strides);
    if sh.len() == 3 && sh[0] > 1 && st[0] != st[1] * sh[1] as isize {
        return Err(bad(format!(
            "{} must be contiguous in its leading dimensions (shape {sh:?}, strides {st:?})",
            t.arg
        )));
    }
    Ok(())
}

/// k in [256, 65535) (AllGather and ReduceScatter forms).
fn k_range(k: usize) -> NnResult<()> {
    if !(256..65535).contains(&k) {
        return Err(bad(format!(
            "k = {k} is out of the supported range [256, 65535)"
        )));
    }
    Ok(())
}

/// A contiguous view of the workspace at byte `off`.
fn ws_view(ws: &mut [u8], off: usize, dt: DType, shape: &[usize]) -> View {
    // The offsets are within the workspace size asked for in phase 1.
    Layout::contiguous(dt, shape).view_at(ws.as_mut_ptr().wrapping_add(off))
}

/// What follows the AllReduce of `x1 @ x2 + bias`.
enum Tail {
    /// `output` (+ `x3`, aclnnMatmulAllReduceV2).
    Out { x3: Option<a::T>, output: a::T },
    /// `y = mm + residual`, `normOut = rmsnorm(y) * gamma`; `y` is None in the in-place form
    /// (written over residual).
    AddRmsNorm {
        residual: a::T,
        gamma: a::T,
        epsilon: f64,
        y: Option<a::T>,
        norm_out: a::T,
    },
}

#[allow(clippy::too_many_arguments)]
unsafe fn matmul_all_reduce(
    api: &'static str,
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    group: *const c_char,
    reduce_op: *const c_char,
    comm_turn: i64,
    stream_mode: i64,
    quant: Option<(*const c_void, *const c_void)>,
    weight: Option<(*const c_void, *const c_void, i64)>,
    tail: impl FnOnce() -> NnResult<Tail>,
) -> NnResult<super::launch::Built> {
    let t1 = a::tensor(x1, "x1")?;
    let t2 = a::tensor(x2, "x2")?;
    let tb = a::opt_tensor(bias, "bias")?;
    let quant = match quant {
        Some((d, p)) => Some(Quant {
            dequant: a::tensor(d, "dequantScale")?,
            pertoken: a::opt_tensor(p, "pertokenScale")?,
        }),
        None => None,
    };
    let wts = match weight {
        Some((sc, of, g)) => Some((
            a::tensor(sc, "antiquantScale")?,
            a::opt_tensor(of, "antiquantOffset")?,
            g,
        )),
        None => None,
    };
    let tail = tail()?;
    let (m, k, n) = if quant.is_some() {
        mm_shapes_of(&t1, &t2, true, &[DType::I8])?
    } else if wts.is_some() {
        mm_shapes_w8(&t1, &t2)?
    } else {
        mm_shapes(&t1, &t2, true)?
    };
    // The operator's dtype: x1's, or for the quant forms the output's (FLOAT16/BFLOAT16).
    let dt = match (&quant, &tail) {
        (None, _) => t1.dtype(),
        (Some(_), Tail::Out { output, .. }) => output.dtype(),
        (Some(_), Tail::AddRmsNorm { residual, .. }) => residual.dtype(),
    };
    if let Some(q) = &quant {
        let out = match &tail {
            Tail::Out { output, .. } => output,
            Tail::AddRmsNorm { residual, .. } => residual,
        };
        a::dtype_in(out, DTYPES)?;
        quant_checks(q, dt, m, n)?;
        mergeable(&t1)?;
        if k > 65535 || n > 65535 {
            return Err(bad(format!("k = {k} and n = {n} must not exceed 65535")));
        }
    }
    let wq = match wts {
        Some((scale, offset, g)) => {
            mergeable(&t1)?;
            let layout = weight_quant_layout(&scale, offset.as_ref(), g, dt, k, n)?;
            Some(WeightQuant {
                scale,
                offset,
                layout,
            })
        }
        None => None,
    };
    if let Some(b) = &tb {
        if quant.is_some() {
            a::dtype_in(b, &[DType::I32])?;
        } else if wq.is_some() && b.dtype() == DType::F32 {
            // a FLOAT bias is accepted with a BFLOAT16 x1 too (the page's table)
        } else {
            dtype_is(b, dt)?;
        }
        a::same_shape(b, &[n])?;
    }
    let mut mm_shape = t1.shape().to_vec();
    *mm_shape.last_mut().unwrap() = n;
    match &tail {
        Tail::Out { x3, output } => {
            dtype_is(output, dt)?;
            a::same_shape(output, &mm_shape)?;
            if let Some(x3) = x3 {
                dtype_is(x3, dt)?;
                a::same_shape(x3, &mm_shape)?;
            }
        }
        Tail::AddRmsNorm {
            residual,
            gamma,
            epsilon,
            y,
            norm_out,
        } => {
            if k == 0 {
                return Err(bad("k (the last dimension of x1) is 0".into()));
            }
            for t in [residual, gamma, norm_out].into_iter().chain(y.as_ref()) {
                dtype_is(t, dt)?;
            }
            if residual.ndim() != 3
                || residual.shape()[0] * residual.shape()[1] != m
                || residual.shape()[2] != n
            {
                return Err(bad(format!(
                    "residual must be 3-D (b, s, n) with b*s = {m} (the rows of x1) and n = {n}, but its shape is {:?}",
                    residual.shape()
                )));
            }
            a::same_shape(gamma, &[n])?;
            for t in [norm_out].into_iter().chain(y.as_ref()) {
                a::same_shape(t, residual.shape())?;
            }
            if !epsilon.is_finite() || *epsilon < 0.0 {
                return Err(bad(format!(
                    "epsilon must be finite and not negative, but it is {epsilon}"
                )));
            }
        }
    }
    attrs(Some(reduce_op), comm_turn, stream_mode)?;
    let (g, _) = group_ranks(group, &[1, 2, 4, 8])?;
    let count = m * n;
    let mm_bytes = align(count * dt.size());
    let mut l = Launch::new(api);
    let i1 = l.input(&t1);
    let i2 = l.input(&t2);
    let ib = tb.as_ref().map(|b| l.input(b));
    let iq = quant
        .as_ref()
        .map(|q| (l.input(&q.dequant), q.pertoken.as_ref().map(|p| l.input(p))));
    let iw = wq.as_ref().map(|w| {
        (
            l.input(&w.scale),
            w.offset.as_ref().map(|o| l.input(o)),
            w.layout,
        )
    });
    let mut steps = Vec::new();
    // x3 (V2) is added on every rank before the reduction, as the page's formula and CANN's
    // kernel (MatmulAllReduceAddX3 on each tile before its AllReduce) do.
    let i3 = match &tail {
        Tail::Out { x3: Some(t), .. } => Some(l.input(t)),
        _ => None,
    };
    let mm_shape2 = mm_shape.clone();
    steps.push(StepSpec::kernel(move |v, ws| {
        let o = ws_view(ws, 0, dt, &mm_shape2);
        match (iq, iw) {
            (None, Some((is, io, layout))) => quant::weight_quant_matmul(
                &flat2(&v[i1], m),
                &v[i2],
                &v[is],
                io.map(|i| &v[i]),
                None,
                None,
                ib.map(|i| &v[i]),
                layout,
                &ws_view(ws, 0, dt, &[m, n]),
            )?,
            (None, None) => matmul::matmul(&v[i1], &v[i2], &o, 1.0, ib.map(|i| (&v[i], 1.0)))?,
            (Some((id, ip)), _) => quant::quant_matmul(
                &flat2(&v[i1], m),
                &v[i2],
                ip.map(|i| &v[i]),
                &v[id],
                None,
                ib.map(|i| &v[i]),
                false,
                false,
                &ws_view(ws, 0, dt, &[m, n]),
            )?,
        }
        match i3 {
            Some(i3) => iter::map2::<f32, f32>(&o, &v[i3], &o, |p, q| p + q),
            None => Ok(()),
        }
    }));
    if count > 0 {
        steps.push(StepSpec::Collective(Collective {
            kind: Kind::AllReduce,
            send: 0,
            recv: 0,
            count: count as u64,
            dtype: dt,
            group: g,
        }));
    }
    match tail {
        Tail::Out { output, .. } => {
            let io = l.output(&output);
            l.workspace(mm_bytes as u64);
            steps.push(StepSpec::kernel(move |v, ws| {
                iter::copy(&ws_view(ws, 0, dt, &mm_shape), &v[io])
            }));
        }
        Tail::AddRmsNorm {
            residual,
            gamma,
            epsilon,
            y,
            norm_out,
        } => {
            let ir = l.input(&residual);
            let ig = l.input(&gamma);
            let iy = y.as_ref().map(|t| l.output(t));
            let inorm = l.output(&norm_out);
            let rshape = residual.shape().to_vec();
            let mut stat = rshape[..2].to_vec();
            stat.push(1);
            l.workspace((mm_bytes + align(m * 4)) as u64);
            steps.push(StepSpec::kernel(move |v, ws| {
                let r = ws_view(ws, 0, dt, &rshape);
                let rstd = ws_view(ws, mm_bytes, DType::F32, &stat);
                let y = iy.map_or(&v[ir], |i| &v[i]);
                norm::add_rms_norm(&r, &v[ir], &v[ig], epsilon, &v[inorm], &rstd, y)
            }));
        }
    }
    l.finish_steps(steps)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMatmulAllReduceGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMatmulAllReduceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnMatmulAllReduce",
                x1,
                x2,
                bias,
                group,
                reduceOp,
                commTurn,
                streamMode,
                None,
                None,
                || {
                    Ok(Tail::Out {
                        x3: None,
                        output: a::tensor(output, "output")?,
                    })
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMatmulAllReduceV2GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    x3: *const c_void,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMatmulAllReduceV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnMatmulAllReduceV2",
                x1,
                x2,
                bias,
                group,
                reduceOp,
                commTurn,
                streamMode,
                None,
                None,
                || {
                    Ok(Tail::Out {
                        x3: a::opt_tensor(x3, "x3")?,
                        output: a::tensor(output, "output")?,
                    })
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMatmulAllReduceAddRmsNormGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    residual: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    y: *const c_void,
    normOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMatmulAllReduceAddRmsNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnMatmulAllReduceAddRmsNorm",
                x1,
                x2,
                bias,
                group,
                reduceOp,
                commTurn,
                streamMode,
                None,
                None,
                || {
                    Ok(Tail::AddRmsNorm {
                        residual: a::tensor(residual, "residual")?,
                        gamma: a::tensor(gamma, "gamma")?,
                        epsilon,
                        y: Some(a::tensor(y, "y")?),
                        norm_out: a::tensor(normOut, "normOut")?,
                    })
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceMatmulAllReduceAddRmsNormGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    residual: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    normOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceMatmulAllReduceAddRmsNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnInplaceMatmulAllReduceAddRmsNorm",
                x1,
                x2,
                bias,
                group,
                reduceOp,
                commTurn,
                streamMode,
                None,
                None,
                || {
                    Ok(Tail::AddRmsNorm {
                        residual: a::tensor(residual, "residual")?,
                        gamma: a::tensor(gamma, "gamma")?,
                        epsilon,
                        y: None,
                        norm_out: a::tensor(normOut, "normOut")?,
                    })
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulAllReduceGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    x3: *const c_void,
    dequantScale: *const c_void,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnQuantMatmulAllReduceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnQuantMatmulAllReduce",
                x1,
                x2,
                bias,
                group,
                reduceOp,
                commTurn,
                streamMode,
                Some((dequantScale, std::ptr::null())),
                None,
                || {
                    Ok(Tail::Out {
                        x3: a::opt_tensor(x3, "x3")?,
                        output: a::tensor(output, "output")?,
                    })
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulAllReduceV2GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    biasOptional: *const c_void,
    x3Optional: *const c_void,
    dequantScale: *const c_void,
    pertokenScaleOptional: *const c_void,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnQuantMatmulAllReduceV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnQuantMatmulAllReduceV2",
                x1,
                x2,
                biasOptional,
                group,
                reduceOp,
                commTurn,
                streamMode,
                Some((dequantScale, pertokenScaleOptional)),
                None,
                || {
                    Ok(Tail::Out {
                        x3: a::opt_tensor(x3Optional, "x3Optional")?,
                        output: a::tensor(output, "output")?,
                    })
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnWeightQuantMatmulAllReduceGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    antiquantScale: *const c_void,
    antiquantOffset: *const c_void,
    x3: *const c_void,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    antiquantGroupSize: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnWeightQuantMatmulAllReduceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            matmul_all_reduce(
                "aclnnWeightQuantMatmulAllReduce",
                x1,
                x2,
                bias,
                group,
                reduceOp,
                commTurn,
                streamMode,
                None,
                Some((antiquantScale, antiquantOffset, antiquantGroupSize)),
                || {
                    Ok(Tail::Out {
                        x3: a::opt_tensor(x3, "x3")?,
                        output: a::tensor(output, "output")?,
                    })
                },
            )
        },
    )
}

/// bias of the AllGather / ReduceScatter forms: "not supported yet" unless NULL.
fn no_bias(bias: *const c_void) -> NnResult<()> {
    if !bias.is_null() {
        return Err(bad(
            "bias is not supported by this operator yet (pass nullptr)".into(),
        ));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAllGatherMatmulGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    group: *const c_char,
    gatherIndex: i64,
    commTurn: i64,
    streamMode: i64,
    output: *const c_void,
    gatherOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAllGatherMatmulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let t1 = a::tensor(x1, "x1")?;
            let t2 = a::tensor(x2, "x2")?;
            let to = a::tensor(output, "output")?;
            let tg = a::opt_tensor(gatherOut, "gatherOut")?.filter(|t| t.numel() > 0);
            let (m, k, n) = mm_shapes(&t1, &t2, false)?;
            no_bias(bias)?;
            k_range(k)?;
            if gatherIndex != 0 {
                return Err(bad(format!(
                    "gatherIndex {gatherIndex} is not supported: only 0 (gather x1) is"
                )));
            }
            attrs(None, commTurn, streamMode)?;
            let (g, ranks) = group_ranks(group, &[2, 4, 8])?;
            let r = ranks as usize;
            let dt = t1.dtype();
            dtype_like(&to, &t1)?;
            a::same_shape(&to, &[m * r, n])?;
            if let Some(tg) = &tg {
                dtype_like(tg, &t1)?;
                a::same_shape(tg, &[m * r, k])?;
            }
            let send = m * k;
            let a_bytes = align(send * dt.size());
            let mut l = Launch::new("aclnnAllGatherMatmul");
            let i1 = l.input(&t1);
            let i2 = l.input(&t2);
            let io = l.output(&to);
            let ig = tg.as_ref().map(|t| l.output(t));
            l.workspace((a_bytes + align(r * send * dt.size())) as u64);
            let mut steps = vec![StepSpec::kernel(move |v, ws| {
                iter::copy(&v[i1], &ws_view(ws, 0, dt, &[m, k]))
            })];
            if send > 0 {
                steps.push(StepSpec::Collective(Collective {
                    kind: Kind::AllGather,
                    send: 0,
                    recv: a_bytes,
                    count: send as u64,
                    dtype: dt,
                    group: g,
                }));
            }
            steps.push(StepSpec::kernel(move |v, ws| {
                let gathered = ws_view(ws, a_bytes, dt, &[m * r, k]);
                if let Some(ig) = ig {
                    iter::copy(&gathered, &v[ig])?;
                }
                matmul::matmul(&gathered, &v[i2], &v[io], 1.0, None)
            }));
            l.finish_steps(steps)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMatmulReduceScatterGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    group: *const c_char,
    reduceOp: *const c_char,
    commTurn: i64,
    streamMode: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMatmulReduceScatterGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let t1 = a::tensor(x1, "x1")?;
            let t2 = a::tensor(x2, "x2")?;
            let to = a::tensor(output, "output")?;
            let (m, k, n) = mm_shapes(&t1, &t2, false)?;
            no_bias(bias)?;
            k_range(k)?;
            attrs(Some(reduceOp), commTurn, streamMode)?;
            let (g, ranks) = group_ranks(group, &[2, 4, 8])?;
            let r = ranks as usize;
            if m % r != 0 {
                return Err(bad(format!(
                    "m = {m} (the rows of x1) must be a multiple of the {r} ranks of group \"{g}\""
                )));
            }
            let dt = t1.dtype();
            dtype_like(&to, &t1)?;
            a::same_shape(&to, &[m / r, n])?;
            let a_bytes = align(m * n * dt.size());
            let mut l = Launch::new("aclnnMatmulReduceScatter");
            let i1 = l.input(&t1);
            let i2 = l.input(&t2);
            let io = l.output(&to);
            l.workspace((a_bytes + align(m / r * n * dt.size())) as u64);
            let mut steps = vec![StepSpec::kernel(move |v, ws| {
                matmul::matmul(&v[i1], &v[i2], &ws_view(ws, 0, dt, &[m, n]), 1.0, None)
            })];
            if m * n > 0 {
                steps.push(StepSpec::Collective(Collective {
                    kind: Kind::ReduceScatter,
                    send: 0,
                    recv: a_bytes,
                    count: (m / r * n) as u64,
                    dtype: dt,
                    group: g,
                }));
            }
            steps.push(StepSpec::kernel(move |v, ws| {
                iter::copy(&ws_view(ws, a_bytes, dt, &[m / r, n]), &v[io])
            }));
            l.finish_steps(steps)
        },
    )
}

crate::phase2!(
    aclnnMatmulAllReduce,
    aclnnMatmulAllReduceV2,
    aclnnMatmulAllReduceAddRmsNorm,
    aclnnInplaceMatmulAllReduceAddRmsNorm,
    aclnnAllGatherMatmul,
    aclnnMatmulReduceScatter,
    aclnnQuantMatmulAllReduce,
    aclnnQuantMatmulAllReduceV2,
    aclnnWeightQuantMatmulAllReduce,
);
