//! The "norm" batch: the SyncBatchNorm family (`aclnn_batch_norm_stats.h`,
//! `aclnn_batch_norm_gather_stats_with_counts.h`, `aclnn_batch_norm_elemt.h`,
//! `aclnn_batch_norm_backward_reduce.h`, `aclnn_batch_norm_elemt_backward.h`), which
//! torch_npu calls for `torch.batch_norm_stats`, `torch.batch_norm_gather_stats_with_counts`,
//! `torch.batch_norm_elemt`, `torch.batch_norm_backward_reduce` and
//! `torch.batch_norm_backward_elemt` (the pieces of `nn.SyncBatchNorm`); `aclnn_add_rms_norm.h`
//! (`torch_npu.npu_add_rms_norm`); `aclnn_add_layer_norm[_grad].h` (`torch_npu.npu_add_layer_norm`
//! and its gradient); `aclnn_fast_gelu[_backward].h` (`torch_npu.npu_fast_gelu`,
//! `torch_npu.fast_gelu` and their gradient); `aclnn_geglu[_backward].h` (`torch_npu.npu_geglu`,
//! through GeGluV3 and GeGluV3Backward); `aclnn_group_norm_silu.h` (`torch_npu.npu_group_norm_silu`);
//! `aclnn_cross_entropy_loss[_grad].h` (`torch_npu.npu_cross_entropy_loss` and its gradient);
//! `aclnn_hardshrink[_backward].h`,
//! `aclnn_softshrink[_backward].h` (`F.hardshrink`, `F.softshrink` and their gradients).
//!
//! The engine is `npu_emu::ops::norm`. Inputs are `[N, C, *]` (2 to 8 dimensions, channels
//! at dimension 1); per-channel tensors are 1-D `[C]`.

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::{norm, View};
use std::ffi::c_void;

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

/// An `[N, C, *]` input of 2 to 8 dimensions with a dtype of `list`; returns C.
fn nc_input(x: &a::T, list: &[DType]) -> NnResult<usize> {
    a::dtype_in(x, list)?;
    if !(2..=8).contains(&x.ndim()) {
        return Err(bad(format!(
            "{} must have 2 to 8 dimensions (channels at dimension 1), but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    Ok(x.shape()[1])
}

/// A per-channel `[c]` tensor with a dtype of `list`.
fn channels(t: &a::T, c: usize, list: &[DType]) -> NnResult<()> {
    a::dtype_in(t, list)?;
    if t.ndim() != 1 || t.shape()[0] != c {
        return Err(bad(format!(
            "{} has shape {:?}, expected [{c}] (the channels of input)",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

fn opt_channels(t: &Option<a::T>, c: usize, list: &[DType]) -> NnResult<()> {
    t.as_ref().map_or(Ok(()), |t| channels(t, c, list))
}

/// `t` must have `x`'s shape and dtype.
fn like(t: &a::T, x: &a::T) -> NnResult<()> {
    if t.dtype() != x.dtype() {
        return Err(bad(format!(
            "{} data type {} must be the same as {}'s {}",
            t.arg,
            t.dtype(),
            x.arg,
            x.dtype()
        )));
    }
    a::same_shape(t, x.shape())
}

/// Views of the optional tensors added in order `has` (starting at view `first`).
fn pick<'v>(v: &'v [View], first: usize, has: &[bool]) -> Vec<Option<&'v View>> {
    let mut i = first;
    has.iter()
        .map(|&h| {
            h.then(|| {
                i += 1;
                &v[i - 1]
            })
        })
        .collect()
}

// ---- BatchNormStats ----

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormStatsGetWorkspaceSize(
    input: *const c_void,
    eps: f64,
    mean: *mut c_void,
    invstd: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormStatsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let m = a::tensor(mean, "mean")?;
            let i = a::tensor(invstd, "invstd")?;
            let c = nc_input(&x, &[DType::F32, DType::F16])?;
            channels(&m, c, &[DType::F32])?;
            channels(&i, c, &[DType::F32])?;
            let mut l = Launch::new("aclnnBatchNormStats");
            l.input(&x);
            l.output(&m);
            l.output(&i);
            l.finish(move |v, _| norm::batch_norm_stats(&v[0], eps, &v[1], &v[2]))
        },
    )
}

// ---- BatchNormGatherStatsWithCounts ----

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize(
    input: *const c_void,
    mean: *const c_void,
    invstd: *const c_void,
    runningMean: *mut c_void,
    runningVar: *mut c_void,
    momentum: f64,
    eps: f64,
    counts: *const c_void,
    meanAll: *mut c_void,
    invstdAll: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let m = a::tensor(mean, "mean")?;
            let i = a::tensor(invstd, "invstd")?;
            let rm = a::opt_tensor(runningMean, "runningMean")?;
            let rv = a::opt_tensor(runningVar, "runningVar")?;
            let cn = a::tensor(counts, "counts")?;
            let mo = a::tensor(meanAll, "meanAll")?;
            let io = a::tensor(invstdAll, "invstdAll")?;
            let c = nc_input(&x, FLOATS3)?;
            a::dtype_in(&m, FLOATS3)?;
            a::dtype_in(&i, FLOATS3)?;
            if m.ndim() != 2 || m.shape()[1] != c {
                return Err(bad(format!(
                    "mean must be [devices, {c}] (one row of channel means per device), but its \
                     shape is {:?}",
                    m.shape()
                )));
            }
            let d = m.shape()[0];
            a::same_shape(&i, m.shape())?;
            a::dtype_in(&cn, &[DType::F32, DType::F16, DType::BF16, DType::I32])?;
            a::same_shape(&cn, &[d])?;
            opt_channels(&rm, c, FLOATS3)?;
            opt_channels(&rv, c, FLOATS3)?;
            channels(&mo, c, FLOATS3)?;
            channels(&io, c, FLOATS3)?;
            let mut l = Launch::new("aclnnBatchNormGatherStatsWithCounts");
            l.input(&m);
            l.input(&i);
            l.input(&cn);
            // the running statistics are read and written: outputs
            let has = [rm.is_some(), rv.is_some()];
            for t in [&rm, &rv].into_iter().flatten() {
                l.output(t);
            }
            let first_out = 3 + has.iter().filter(|&&h| h).count();
            l.output(&mo);
            l.output(&io);
            l.finish(move |v, _| {
                let r = pick(v, 3, &has);
                norm::batch_norm_gather_stats_with_counts(
                    &v[0],
                    &v[1],
                    &v[2],
                    r[0],
                    r[1],
                    momentum,
                    eps,
                    &v[first_out],
                    &v[first_out + 1],
                )
            })
        },
    )
}

// ---- BatchNormElemt ----

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormElemtGetWorkspaceSize(
    input: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    mean: *mut c_void,
    invstd: *mut c_void,
    eps: f64,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormElemtGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let w = a::opt_tensor(weight, "weight")?;
            let b = a::opt_tensor(bias, "bias")?;
            let m = a::tensor(mean, "mean")?;
            let i = a::tensor(invstd, "invstd")?;
            let o = a::tensor(output, "output")?;
            let c = nc_input(&x, FLOATS3)?;
            opt_channels(&w, c, FLOATS3)?;
            opt_channels(&b, c, FLOATS3)?;
            channels(&m, c, FLOATS3)?;
            channels(&i, c, FLOATS3)?;
            a::dtype_in(&o, FLOATS3)?;
            a::same_shape(&o, x.shape())?;
            if eps.is_nan() {
                return Err(bad("eps must be a number, but it is NaN".to_string()));
            }
            let mut l = Launch::new("aclnnBatchNormElemt");
            l.input(&x);
            l.input(&m);
            l.input(&i);
            let has = [w.is_some(), b.is_some()];
            for t in [&w, &b].into_iter().flatten() {
                l.input(t);
            }
            l.output(&o);
            let out = 3 + has.iter().filter(|&&h| h).count();
            // invstd already holds eps: the normalisation does not use it again
            l.finish(move |v, _| {
                let p = pick(v, 3, &has);
                norm::batch_norm_elemt(&v[0], p[0], p[1], &v[1], &v[2], &v[out])
            })
        },
    )
}

// ---- BatchNormReduceBackward ----

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormReduceBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    input: *const c_void,
    mean: *const c_void,
    invstd: *const c_void,
    weight: *const c_void,
    inputG: bool,
    weightG: bool,
    biasG: bool,
    sumDy: *mut c_void,
    sumDyXmu: *mut c_void,
    gradWeight: *mut c_void,
    gradBias: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormReduceBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(input, "input")?;
            let m = a::tensor(mean, "mean")?;
            let i = a::tensor(invstd, "invstd")?;
            let w = a::opt_tensor(weight, "weight")?;
            let req = |on: bool, h: *mut c_void, arg: &'static str| {
                if on {
                    a::tensor(h, arg).map(Some)
                } else {
                    Ok(None)
                }
            };
            let sd = req(inputG, sumDy, "sumDy")?;
            let sdx = req(inputG, sumDyXmu, "sumDyXmu")?;
            let gw = req(weightG, gradWeight, "gradWeight")?;
            let gb = req(biasG, gradBias, "gradBias")?;
            let c = nc_input(&x, FLOATS3)?;
            like(&g, &x)?;
            channels(&m, c, FLOATS3)?;
            channels(&i, c, FLOATS3)?;
            opt_channels(&w, c, FLOATS3)?;
            for t in [&sd, &sdx, &gw, &gb] {
                opt_channels(t, c, FLOATS3)?;
            }
            let mut l = Launch::new("aclnnBatchNormReduceBackward");
            l.input(&g);
            l.input(&x);
            l.input(&m);
            l.input(&i);
            let has = [sd.is_some(), sdx.is_some(), gw.is_some(), gb.is_some()];
            for t in [&sd, &sdx, &gw, &gb].into_iter().flatten() {
                l.output(t);
            }
            l.finish(move |v, _| {
                let o = pick(v, 4, &has);
                norm::batch_norm_backward_reduce(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    norm::ReduceOuts {
                        sum_dy: o[0],
                        sum_dy_xmu: o[1],
                        grad_weight: o[2],
                        grad_bias: o[3],
                    },
                )
            })
        },
    )
}

// ---- BatchNormElemtBackward ----

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchNormElemtBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    input: *const c_void,
    mean: *const c_void,
    invstd: *const c_void,
    weight: *const c_void,
    sumDy: *const c_void,
    sumDyXmu: *const c_void,
    counter: *mut c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchNormElemtBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(input, "input")?;
            let m = a::tensor(mean, "mean")?;
            let i = a::tensor(invstd, "invstd")?;
            let w = a::opt_tensor(weight, "weight")?;
            let sd = a::tensor(sumDy, "sumDy")?;
            let sdx = a::tensor(sumDyXmu, "sumDyXmu")?;
            let cn = a::tensor(counter, "counter")?;
            let gx = a::tensor(gradInput, "gradInput")?;
            let c = nc_input(&x, FLOATS3)?;
            if c == 0 {
                return Err(bad(format!(
                    "input must have channels (dimension 1 not 0), but its shape is {:?}",
                    x.shape()
                )));
            }
            like(&g, &x)?;
            for t in [&m, &i, &sd, &sdx] {
                channels(t, c, FLOATS3)?;
            }
            opt_channels(&w, c, FLOATS3)?;
            // the element counts of every device, in any shape (nn.SyncBatchNorm passes the
            // gathered `[devices, 1]`); they are summed
            a::dtype_in(&cn, &[DType::I32, DType::F32])?;
            like(&gx, &x)?;
            let mut l = Launch::new("aclnnBatchNormElemtBackward");
            for t in [&g, &x, &m, &i, &sd, &sdx, &cn] {
                l.input(t);
            }
            let hw = w.is_some();
            if let Some(t) = &w {
                l.input(t);
            }
            l.output(&gx);
            let out = if hw { 8 } else { 7 };
            l.finish(move |v, _| {
                let wv = hw.then(|| &v[7]);
                norm::batch_norm_backward_elemt(
                    &v[0], &v[1], &v[2], &v[3], wv, &v[4], &v[5], &v[6], &v[out],
                )
            })
        },
    )
}

// ---- AddRmsNorm ----

#[no_mangle]
pub unsafe extern "C" fn aclnnAddRmsNormGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    yOut: *const c_void,
    rstdOut: *const c_void,
    xOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    add_rms_norm(
        ["aclnnAddRmsNormGetWorkspaceSize", "aclnnAddRmsNorm"],
        [(x1, "x1"), (x2, "x2"), (yOut, "yOut"), (xOut, "xOut")],
        gamma,
        epsilon,
        rstdOut,
        workspaceSize,
        executor,
    )
}

/// AddRmsNorm and aclnnInplaceAddRmsNorm (whose `y` is `x1Ref` and `xOut` is `x2Ref`):
/// `[name, api]`, then x1, x2, y and xOut with their argument names.
pub(super) unsafe fn add_rms_norm(
    [name, api]: [&'static str; 2],
    [x1, x2, yOut, xOut]: [(*const c_void, &'static str); 4],
    gamma: *const c_void,
    epsilon: f64,
    rstdOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspaceSize, executor, || {
        let a1 = a::tensor(x1.0, x1.1)?;
        let a2 = a::tensor(x2.0, x2.1)?;
        let g = a::tensor(gamma, "gamma")?;
        let y = a::tensor(yOut.0, yOut.1)?;
        let r = a::tensor(rstdOut, "rstdOut")?;
        let xo = a::tensor(xOut.0, xOut.1)?;
        for t in [&a1, &a2, &g, &y, &xo] {
            a::dtype_in(t, FLOATS3)?;
            a::max_dims(t, 8)?;
        }
        a::dtype_in(&r, &[DType::F32])?;
        if a1.ndim() == 0 || a1.numel() == 0 {
            return Err(bad(format!(
                "{} must have 1 to 8 dimensions and elements, but its shape is {:?}",
                a1.arg,
                a1.shape()
            )));
        }
        like(&a2, &a1)?;
        like(&y, &a1)?;
        like(&xo, &a1)?;
        let (xn, gn) = (a1.ndim(), g.ndim());
        if gn == 0 || gn > xn || a1.shape()[xn - gn..] != *g.shape() {
            return Err(bad(format!(
                "gamma shape {:?} must equal the last dimensions of {} {:?}",
                g.shape(),
                a1.arg,
                a1.shape()
            )));
        }
        let mut rs = a1.shape()[..xn - gn].to_vec();
        rs.extend(std::iter::repeat_n(1, gn));
        a::same_shape(&r, &rs)?;
        if !epsilon.is_finite() || epsilon < 0.0 {
            return Err(bad(format!(
                "epsilon must be finite and not negative, but it is {epsilon}"
            )));
        }
        let mut l = Launch::new(api);
        l.input(&a1);
        l.input(&a2);
        l.input(&g);
        l.output(&y);
        l.output(&r);
        l.output(&xo);
        l.finish(move |v, _| norm::add_rms_norm(&v[0], &v[1], &v[2], epsilon, &v[3], &v[4], &v[5]))
    })
}

// ---- AddLayerNorm, AddLayerNormGrad ----

/// gamma-like `t` must be the trailing dimensions of `x`; returns their count.
pub(super) fn trailing(t: &a::T, x: &a::T) -> NnResult<usize> {
    let (xn, gn) = (x.ndim(), t.ndim());
    if gn == 0 || gn > xn || x.shape()[xn - gn..] != *t.shape() {
        return Err(bad(format!(
            "{} shape {:?} must equal the last dimensions of {} {:?}",
            t.arg,
            t.shape(),
            x.arg,
            x.shape()
        )));
    }
    Ok(gn)
}

/// A per-row statistic of `x` normalised over its last `gn` dimensions: x's leading
/// dimensions then one 1 (torch_npu's shape) or `gn` ones.
pub(super) fn row_stat(t: &a::T, x: &a::T, gn: usize) -> NnResult<()> {
    a::dtype_in(t, &[DType::F32])?;
    let lead = &x.shape()[..x.ndim() - gn];
    let mut one = lead.to_vec();
    one.push(1);
    let mut ones = lead.to_vec();
    ones.extend(std::iter::repeat_n(1, gn));
    if t.shape() == one.as_slice() || t.shape() == ones.as_slice() {
        Ok(())
    } else {
        Err(bad(format!(
            "{} has shape {:?}, expected {one:?} (x1's leading dimensions, then 1)",
            t.arg,
            t.shape()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddLayerNormGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    biasOptional: *const c_void,
    epsilon: f64,
    additionalOutput: bool,
    yOut: *const c_void,
    meanOut: *const c_void,
    rstdOut: *const c_void,
    xOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddLayerNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let g = a::tensor(gamma, "gamma")?;
            let be = a::tensor(beta, "beta")?;
            let bi = a::opt_tensor(biasOptional, "biasOptional")?;
            let y = a::tensor(yOut, "yOut")?;
            let m = a::tensor(meanOut, "meanOut")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            let xo = a::tensor(xOut, "xOut")?;
            for t in [&a1, &a2, &g, &be, &y, &xo] {
                a::dtype_in(t, FLOATS3)?;
                a::max_dims(t, 8)?;
            }
            if a1.ndim() == 0 || a1.shape().contains(&0) {
                return Err(bad(format!(
                    "x1 must have 1 to 8 dimensions, none of size 0, but its shape is {:?}",
                    a1.shape()
                )));
            }
            a::same_shape(&a2, a1.shape())?;
            a::same_shape(&y, a1.shape())?;
            a::same_shape(&xo, a1.shape())?;
            let gn = trailing(&g, &a1)?;
            a::same_shape(&be, g.shape())?;
            if let Some(b) = &bi {
                a::dtype_in(b, FLOATS3)?;
                a::same_shape(b, g.shape())?;
            }
            row_stat(&m, &a1, gn)?;
            row_stat(&r, &a1, gn)?;
            if !epsilon.is_finite() || epsilon < 0.0 {
                return Err(bad(format!(
                    "epsilon must be finite and not negative, but it is {epsilon}"
                )));
            }
            let mut l = Launch::new("aclnnAddLayerNorm");
            for t in [&a1, &a2, &g, &be] {
                l.input(t);
            }
            let hb = bi.is_some();
            if let Some(b) = &bi {
                l.input(b);
            }
            let o = if hb { 5 } else { 4 };
            l.output(&y);
            l.output(&m);
            l.output(&r);
            if additionalOutput {
                l.output(&xo);
            }
            l.finish(move |v, _| {
                norm::add_layer_norm(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    hb.then(|| &v[4]),
                    epsilon,
                    &v[o],
                    &v[o + 1],
                    &v[o + 2],
                    additionalOutput.then(|| &v[o + 3]),
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddLayerNormGradGetWorkspaceSize(
    dy: *const c_void,
    x1: *const c_void,
    x2: *const c_void,
    rstd: *const c_void,
    mean: *const c_void,
    gamma: *const c_void,
    dsumOptional: *const c_void,
    dxOut: *const c_void,
    dgammaOut: *const c_void,
    dbetaOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddLayerNormGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let d = a::tensor(dy, "dy")?;
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let r = a::tensor(rstd, "rstd")?;
            let m = a::tensor(mean, "mean")?;
            let g = a::tensor(gamma, "gamma")?;
            let ds = a::opt_tensor(dsumOptional, "dsumOptional")?;
            let dx = a::tensor(dxOut, "dxOut")?;
            let dg = a::tensor(dgammaOut, "dgammaOut")?;
            let db = a::tensor(dbetaOut, "dbetaOut")?;
            for t in [&d, &a1, &a2, &g, &dx] {
                a::dtype_in(t, FLOATS3)?;
                a::max_dims(t, 8)?;
            }
            if a1.ndim() == 0 || a1.shape().contains(&0) {
                return Err(bad(format!(
                    "x1 must have 1 to 8 dimensions, none of size 0, but its shape is {:?}",
                    a1.shape()
                )));
            }
            for t in [&d, &a2, &dx] {
                a::same_shape(t, a1.shape())?;
            }
            if let Some(t) = &ds {
                a::dtype_in(t, FLOATS3)?;
                a::same_shape(t, a1.shape())?;
            }
            let gn = trailing(&g, &a1)?;
            row_stat(&r, &a1, gn)?;
            row_stat(&m, &a1, gn)?;
            for t in [&dg, &db] {
                a::dtype_in(t, &[DType::F32])?;
                a::same_shape(t, g.shape())?;
            }
            let mut l = Launch::new("aclnnAddLayerNormGrad");
            for t in [&d, &a1, &a2, &r, &m, &g] {
                l.input(t);
            }
            let hs = ds.is_some();
            if let Some(t) = &ds {
                l.input(t);
            }
            let o = if hs { 7 } else { 6 };
            l.output(&dx);
            l.output(&dg);
            l.output(&db);
            l.finish(move |v, _| {
                norm::add_layer_norm_grad(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    &v[4],
                    &v[5],
                    hs.then(|| &v[6]),
                    &v[o],
                    &v[o + 1],
                    &v[o + 2],
                )
            })
        },
    )
}

// ---- FastGelu, Hardshrink, Softshrink and their backward forms ----

/// `self -> out` of one shape and dtype (FLOAT16, FLOAT, BFLOAT16).
fn unary_pair(x: &a::T, o: &a::T) -> NnResult<()> {
    a::dtype_in(x, FLOATS3)?;
    a::max_dims(x, 8)?;
    like(o, x)
}

/// `(gradOutput, self) -> gradInput`: one dtype, gradInput of the broadcast shape.
fn backward_triple(g: &a::T, x: &a::T, o: &a::T) -> NnResult<()> {
    a::dtype_in(x, FLOATS3)?;
    a::max_dims(x, 8)?;
    for t in [g, o] {
        if t.dtype() != x.dtype() {
            return Err(bad(format!(
                "{} data type {} must be the same as self's {}",
                t.arg,
                t.dtype(),
                x.dtype()
            )));
        }
    }
    let shape = a::broadcast(g, x)?;
    a::same_shape(o, &shape)
}

fn lambd_of(h: *const c_void, arg: &'static str, negative_ok: bool) -> NnResult<f32> {
    let v = a::scalar(h, arg)?.to_f64();
    if v.is_nan() || (!negative_ok && v < 0.0) {
        return Err(bad(format!("{arg} must not be negative, but it is {v}")));
    }
    // the reference: a negative lambd of Hardshrink counts as 0
    Ok(v.max(0.0) as f32)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFastGeluGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFastGeluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            unary_pair(&x, &o)?;
            let mut l = Launch::new("aclnnFastGelu");
            l.input(&x);
            l.output(&o);
            l.finish(|v, _| norm::fast_gelu(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFastGeluBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFastGeluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(gradInput, "gradInput")?;
            unary_pair(&x, &o)?;
            like(&g, &x)?;
            let mut l = Launch::new("aclnnFastGeluBackward");
            l.input(&g);
            l.input(&x);
            l.output(&o);
            l.finish(|v, _| norm::fast_gelu_backward(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnHardshrinkGetWorkspaceSize(
    self_: *const c_void,
    lambd: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHardshrinkGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let lv = lambd_of(lambd, "lambd", true)?;
            let o = a::tensor(out, "out")?;
            unary_pair(&x, &o)?;
            let mut l = Launch::new("aclnnHardshrink");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| norm::hardshrink(&v[0], lv, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnHardshrinkBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    lambd: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHardshrinkBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let lv = lambd_of(lambd, "lambd", true)?;
            let o = a::tensor(gradInput, "gradInput")?;
            backward_triple(&g, &x, &o)?;
            let mut l = Launch::new("aclnnHardshrinkBackward");
            l.input(&g);
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| norm::shrink_backward(&v[0], &v[1], lv, &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftshrinkGetWorkspaceSize(
    self_: *const c_void,
    lambd: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftshrinkGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let lv = lambd_of(lambd, "lambd", false)?;
            let o = a::tensor(out, "out")?;
            unary_pair(&x, &o)?;
            let mut l = Launch::new("aclnnSoftshrink");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| norm::softshrink(&v[0], lv, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftshrinkBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    lambda: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftshrinkBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let lv = lambd_of(lambda, "lambda", false)?;
            let o = a::tensor(gradInput, "gradInput")?;
            backward_triple(&g, &x, &o)?;
            let mut l = Launch::new("aclnnSoftshrinkBackward");
            l.input(&g);
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| norm::shrink_backward(&v[0], &v[1], lv, &v[2]))
        },
    )
}

// ---- GeGlu, GeGluV3 and their backward forms ----

/// Checks `self` and `dim` (the halved dimension, even-sized) and `approximate`; returns
/// the non-negative dim and the halved shape.
fn geglu_self(x: &a::T, dim: i64, approximate: i64) -> NnResult<(usize, Vec<usize>)> {
    a::dtype_in(x, FLOATS3)?;
    if x.ndim() == 0 || x.ndim() > 8 {
        return Err(bad(format!(
            "self must have 1 to 8 dimensions, but its shape is {:?}",
            x.shape()
        )));
    }
    let d = a::dim(dim, x.ndim(), "dim")?;
    if !x.shape()[d].is_multiple_of(2) {
        return Err(bad(format!(
            "dimension {dim} of self {:?} must have an even size (it is split in halves)",
            x.shape()
        )));
    }
    if !(0..=1).contains(&approximate) {
        return Err(bad(format!(
            "approximate must be 0 (none) or 1 (tanh), but it is {approximate}"
        )));
    }
    let mut half = x.shape().to_vec();
    half[d] /= 2;
    Ok((d, half))
}

/// `t` must have `x`'s dtype and `shape`.
fn typed_shape(t: &a::T, x: &a::T, shape: &[usize]) -> NnResult<()> {
    if t.dtype() != x.dtype() {
        return Err(bad(format!(
            "{} data type {} must be the same as {}'s {}",
            t.arg,
            t.dtype(),
            x.arg,
            x.dtype()
        )));
    }
    a::same_shape(t, shape)
}

#[allow(clippy::too_many_arguments)]
fn geglu_fwd(
    api: &'static str,
    self_: *const c_void,
    dim: i64,
    approximate: i64,
    left: bool,
    out: *mut c_void,
    outGelu: *mut c_void,
) -> NnResult<super::launch::Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    let g = a::tensor(outGelu, "outGelu")?;
    let (d, half) = geglu_self(&x, dim, approximate)?;
    typed_shape(&o, &x, &half)?;
    typed_shape(&g, &x, &half)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.output(&g);
    l.finish(move |v, _| norm::geglu(&v[0], d, approximate == 1, left, &v[1], &v[2]))
}

#[allow(clippy::too_many_arguments)]
fn geglu_bwd(
    api: &'static str,
    gradOutput: *const c_void,
    self_: *const c_void,
    gelu: *const c_void,
    dim: i64,
    approximate: i64,
    left: bool,
    gradInput: *mut c_void,
) -> NnResult<super::launch::Built> {
    let dy = a::tensor(gradOutput, "gradOutput")?;
    let x = a::tensor(self_, "self")?;
    let g = a::tensor(gelu, "gelu")?;
    let gi = a::tensor(gradInput, "gradInput")?;
    let (d, half) = geglu_self(&x, dim, approximate)?;
    typed_shape(&dy, &x, &half)?;
    typed_shape(&g, &x, &half)?;
    typed_shape(&gi, &x, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&dy);
    l.input(&x);
    l.input(&g);
    l.output(&gi);
    l.finish(move |v, _| {
        norm::geglu_backward(&v[0], &v[1], &v[2], d, approximate == 1, left, &v[3])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGeGluGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    approximate: i64,
    out: *mut c_void,
    outGelu: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeGluGetWorkspaceSize",
        workspaceSize,
        executor,
        || geglu_fwd("aclnnGeGlu", self_, dim, approximate, false, out, outGelu),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGeGluV3GetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    approximate: i64,
    activateLeft: bool,
    out: *mut c_void,
    outGelu: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeGluV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            geglu_fwd(
                "aclnnGeGluV3",
                self_,
                dim,
                approximate,
                activateLeft,
                out,
                outGelu,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGeGluBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    gelu: *const c_void,
    dim: i64,
    approximate: i64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeGluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            geglu_bwd(
                "aclnnGeGluBackward",
                gradOutput,
                self_,
                gelu,
                dim,
                approximate,
                false,
                gradInput,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGeGluV3BackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    gelu: *const c_void,
    dim: i64,
    approximate: i64,
    activateLeft: bool,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeGluV3BackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            geglu_bwd(
                "aclnnGeGluV3Backward",
                gradOutput,
                self_,
                gelu,
                dim,
                approximate,
                activateLeft,
                gradInput,
            )
        },
    )
}

// ---- GroupNormSilu, GroupNormSiluV2 ----

#[allow(clippy::too_many_arguments)]
fn group_norm_silu(
    api: &'static str,
    self_: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    group: i64,
    eps: f64,
    silu: bool,
    out: *mut c_void,
    meanOut: *mut c_void,
    rstdOut: *mut c_void,
) -> NnResult<super::launch::Built> {
    let x = a::tensor(self_, "self")?;
    let g = a::opt_tensor(gamma, "gamma")?;
    let b = a::opt_tensor(beta, "beta")?;
    let o = a::tensor(out, "out")?;
    let m = a::tensor(meanOut, "meanOut")?;
    let r = a::tensor(rstdOut, "rstdOut")?;
    let c = nc_input(&x, FLOATS3)?;
    opt_channels(&g, c, FLOATS3)?;
    opt_channels(&b, c, FLOATS3)?;
    if group <= 0 || c as i64 % group != 0 {
        return Err(bad(format!(
            "group must be positive and divide the {c} channels of self, but it is {group}"
        )));
    }
    let grp = group as usize;
    typed_shape(&o, &x, x.shape())?;
    for t in [&m, &r] {
        a::dtype_in(t, FLOATS3)?;
        a::same_shape(t, &[x.shape()[0], grp])?;
    }
    if !eps.is_finite() || eps < 0.0 {
        return Err(bad(format!(
            "eps must be finite and not negative, but it is {eps}"
        )));
    }
    let mut l = Launch::new(api);
    l.input(&x);
    let has = [g.is_some(), b.is_some()];
    for t in [&g, &b].into_iter().flatten() {
        l.input(t);
    }
    let first = 1 + has.iter().filter(|&&h| h).count();
    l.output(&o);
    l.output(&m);
    l.output(&r);
    l.finish(move |v, _| {
        let p = pick(v, 1, &has);
        norm::group_norm_silu(
            &v[0],
            p[0],
            p[1],
            grp,
            eps,
            silu,
            &v[first],
            &v[first + 1],
            &v[first + 2],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupNormSiluGetWorkspaceSize(
    self_: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    group: i64,
    eps: f64,
    out: *mut c_void,
    meanOut: *mut c_void,
    rstdOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupNormSiluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            group_norm_silu(
                "aclnnGroupNormSilu",
                self_,
                gamma,
                beta,
                group,
                eps,
                true,
                out,
                meanOut,
                rstdOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupNormSiluV2GetWorkspaceSize(
    self_: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    group: i64,
    eps: f64,
    activateSilu: bool,
    out: *mut c_void,
    meanOut: *mut c_void,
    rstdOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupNormSiluV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            group_norm_silu(
                "aclnnGroupNormSiluV2",
                self_,
                gamma,
                beta,
                group,
                eps,
                activateSilu,
                out,
                meanOut,
                rstdOut,
            )
        },
    )
}

// ---- CrossEntropyLoss, CrossEntropyLossGrad ----

/// `reductionOptional`: "mean" (also for NULL), "sum" or "none".
fn ce_reduction(h: *const std::ffi::c_char) -> NnResult<norm::CeReduction> {
    if h.is_null() {
        return Ok(norm::CeReduction::Mean);
    }
    // SAFETY: a non-NULL reductionOptional is a NUL-terminated string, as the reference
    // requires of every `char *` argument.
    let v = unsafe { std::ffi::CStr::from_ptr(h) }.to_string_lossy();
    match v.as_ref() {
        "mean" => Ok(norm::CeReduction::Mean),
        "sum" => Ok(norm::CeReduction::Sum),
        "none" => Ok(norm::CeReduction::None),
        _ => Err(bad(format!(
            "reductionOptional must be \"mean\", \"sum\" or \"none\", but it is {v:?}"
        ))),
    }
}

/// `[N, C]` scores and their `[N]` INT64 targets, the optional `[C]` FLOAT weight.
fn ce_inputs(x: &a::T, t: &a::T, w: &Option<a::T>) -> NnResult<(usize, usize)> {
    a::dtype_in(x, FLOATS3)?;
    if x.ndim() != 2 || x.shape()[1] == 0 {
        return Err(bad(format!(
            "{} must be [N, C] with C > 0, but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    let (n, c) = (x.shape()[0], x.shape()[1]);
    a::dtype_in(t, &[DType::I64])?;
    a::same_shape(t, &[n])?;
    if let Some(w) = w {
        a::dtype_in(w, &[DType::F32])?;
        a::same_shape(w, &[c])?;
    }
    Ok((n, c))
}

/// The loss (or its gradient) shape: `[N]` for "none", a scalar (`[]`, or `[1]` as
/// torch_npu allocates it) otherwise.
fn ce_loss_shape(t: &a::T, red: norm::CeReduction, n: usize) -> NnResult<()> {
    let ok = match red {
        norm::CeReduction::None => t.shape() == [n],
        _ => t.shape().is_empty() || t.shape() == [1],
    };
    if ok {
        Ok(())
    } else {
        Err(bad(format!(
            "{} has shape {:?}; expected {} for this reduction",
            t.arg,
            t.shape(),
            if red == norm::CeReduction::None {
                format!("[{n}]")
            } else {
                "[] (or [1])".to_string()
            }
        )))
    }
}

fn smoothing_ok(v: f64) -> NnResult<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(bad(format!(
            "labelSmoothing must be in [0, 1], but it is {v}"
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCrossEntropyLossGetWorkspaceSize(
    input: *const c_void,
    target: *const c_void,
    weightOptional: *const c_void,
    reductionOptional: *const std::ffi::c_char,
    ignoreIndex: i64,
    labelSmoothing: f64,
    lseSquareScaleForZloss: f64,
    returnZloss: bool,
    lossOut: *const c_void,
    logProbOut: *const c_void,
    zlossOut: *const c_void,
    lseForZlossOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCrossEntropyLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let red = ce_reduction(reductionOptional)?;
            let lo = a::tensor(lossOut, "lossOut")?;
            let lp = a::tensor(logProbOut, "logProbOut")?;
            let (n, _) = ce_inputs(&x, &t, &w)?;
            typed_shape(&lp, &x, x.shape())?;
            if lo.dtype() != x.dtype() {
                return Err(bad(format!(
                    "lossOut data type {} must be the same as input's {}",
                    lo.dtype(),
                    x.dtype()
                )));
            }
            ce_loss_shape(&lo, red, n)?;
            smoothing_ok(labelSmoothing)?;
            // the z-loss outputs are allocated empty by torch_npu when unused
            let _ = (zlossOut, lseForZlossOut);
            if returnZloss || lseSquareScaleForZloss != 0.0 {
                return Err(bad(format!(
                    "the z-loss (returnZloss {returnZloss}, lseSquareScaleForZloss \
                     {lseSquareScaleForZloss}) is not supported: only returnZloss false and \
                     lseSquareScaleForZloss 0"
                )));
            }
            let mut l = Launch::new("aclnnCrossEntropyLoss");
            l.input(&x);
            l.input(&t);
            let hw = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            let o = if hw { 3 } else { 2 };
            l.output(&lo);
            l.output(&lp);
            l.finish(move |v, _| {
                norm::cross_entropy_loss(
                    &v[0],
                    &v[1],
                    hw.then(|| &v[2]),
                    red,
                    ignoreIndex,
                    labelSmoothing,
                    &v[o],
                    &v[o + 1],
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCrossEntropyLossGradGetWorkspaceSize(
    gradLoss: *const c_void,
    logProb: *const c_void,
    target: *const c_void,
    weightOptional: *const c_void,
    gradZlossOptional: *const c_void,
    lseForZlossOptional: *const c_void,
    reductionOptional: *const std::ffi::c_char,
    ignoreIndex: i64,
    labelSmoothing: f64,
    lseSquareScaleForZloss: f64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCrossEntropyLossGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradLoss, "gradLoss")?;
            let lp = a::tensor(logProb, "logProb")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let red = ce_reduction(reductionOptional)?;
            let o = a::tensor(out, "out")?;
            let (n, _) = ce_inputs(&lp, &t, &w)?;
            if g.dtype() != lp.dtype() {
                return Err(bad(format!(
                    "gradLoss data type {} must be the same as logProb's {}",
                    g.dtype(),
                    lp.dtype()
                )));
            }
            ce_loss_shape(&g, red, n)?;
            typed_shape(&o, &lp, lp.shape())?;
            smoothing_ok(labelSmoothing)?;
            // the reference: the z-loss inputs have no effect (not supported yet)
            let _ = (
                gradZlossOptional,
                lseForZlossOptional,
                lseSquareScaleForZloss,
            );
            let mut l = Launch::new("aclnnCrossEntropyLossGrad");
            l.input(&g);
            l.input(&lp);
            l.input(&t);
            let hw = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            let oi = if hw { 4 } else { 3 };
            l.output(&o);
            l.finish(move |v, _| {
                norm::cross_entropy_loss_grad(
                    &v[0],
                    &v[1],
                    &v[2],
                    hw.then(|| &v[3]),
                    red,
                    ignoreIndex,
                    labelSmoothing,
                    &v[oi],
                )
            })
        },
    )
}

crate::phase2!(
    aclnnBatchNormStats,
    aclnnBatchNormGatherStatsWithCounts,
    aclnnBatchNormElemt,
    aclnnBatchNormReduceBackward,
    aclnnBatchNormElemtBackward,
    aclnnAddRmsNorm,
    aclnnAddLayerNorm,
    aclnnAddLayerNormGrad,
    aclnnFastGelu,
    aclnnFastGeluBackward,
    aclnnGeGlu,
    aclnnGeGluV3,
    aclnnGeGluBackward,
    aclnnGeGluV3Backward,
    aclnnGroupNormSilu,
    aclnnGroupNormSiluV2,
    aclnnCrossEntropyLoss,
    aclnnCrossEntropyLossGrad,
    aclnnHardshrink,
    aclnnHardshrinkBackward,
    aclnnSoftshrink,
    aclnnSoftshrinkBackward
);
