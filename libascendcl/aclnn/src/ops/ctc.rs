//! `aclnn_ctc_loss.h` and `aclnn_ctc_loss_backward.h`: what torch_npu calls for
//! `F.ctc_loss` / `nn.CTCLoss` (`_ctc_loss` and `_ctc_loss_backward`; the reductions are
//! composed by PyTorch around them). The engine is `npu_emu::ops::ctc`.
//!
//! Documented choices: logProbs may be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (the union of the
//! 8.1 header and the newer page; computed in f64); logAlpha must be `[N, T, X]` with
//! `X >= 2 * max(targetLengths) + 1` (torch_npu pads X to a multiple of 8); its entries the
//! recursion does not reach are `-inf`.

use super::args::{self as a, FLOATS};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::ctc::{self as engine, Ctc};
use npu_emu::ops::dtype::DType;
use std::ffi::c_void;

const TARGETS: &[DType] = &[DType::I64, DType::I32, DType::Bool, DType::F32, DType::F16];

/// Checks shared by both passes; returns (T, N, C) and the options.
fn common(
    lp: &a::T,
    tg: &a::T,
    il: Vec<i64>,
    tl: Vec<i64>,
    blank: i64,
    zero_infinity: bool,
) -> NnResult<((usize, usize, usize), Ctc)> {
    a::dtype_in(lp, FLOATS)?;
    a::dtype_in(tg, TARGETS)?;
    let (t, n, c) = match lp.shape() {
        [t, n, c] => (*t, *n, *c),
        [t, c] => (*t, 1, *c),
        s => {
            return Err(NnError::invalid(format!(
                "logProbs must be (T, N, C) or (T, C), but its shape is {s:?}"
            )))
        }
    };
    if c == 0 || t == 0 {
        return Err(NnError::invalid(format!(
            "logProbs must not be empty, but its shape is {:?}",
            lp.shape()
        )));
    }
    if blank < 0 || blank as usize >= c {
        return Err(NnError::invalid(format!(
            "blank {blank} must be in [0, {c}) (C, the classes of logProbs)"
        )));
    }
    for (arr, name) in [(&il, "inputLengths"), (&tl, "targetLengths")] {
        if arr.len() != n {
            return Err(NnError::invalid(format!(
                "{name} has {} values; it must have N = {n}",
                arr.len()
            )));
        }
    }
    if let Some(v) = il.iter().find(|&&v| v < 0 || v as usize > t) {
        return Err(NnError::invalid(format!(
            "inputLengths value {v} must be in [0, {t}] (T of logProbs)"
        )));
    }
    if let Some(v) = tl.iter().find(|&&v| v < 0) {
        return Err(NnError::invalid(format!(
            "targetLengths value {v} must not be negative"
        )));
    }
    let max_len = tl.iter().copied().max().unwrap_or(0) as usize;
    match tg.shape() {
        [tn, s] => {
            if *tn != n || *s < max_len {
                return Err(NnError::invalid(format!(
                    "targets of shape {:?} must be (N = {n}, S >= {max_len}) (the longest target)",
                    tg.shape()
                )));
            }
        }
        [s] => {
            let sum: i64 = tl.iter().sum();
            if (*s as i64) < sum {
                return Err(NnError::invalid(format!(
                    "targets (concatenated) has {s} values, fewer than the {sum} of targetLengths"
                )));
            }
        }
        s => {
            return Err(NnError::invalid(format!(
                "targets must be (N, S) or 1-D (concatenated), but its shape is {s:?}"
            )))
        }
    }
    Ok((
        (t, n, c),
        Ctc {
            input_lengths: il,
            target_lengths: tl,
            blank: blank as usize,
            zero_infinity,
        },
    ))
}

/// logAlpha must be (N, T, X) with X >= 2 * max(targetLengths) + 1.
fn check_alpha(la: &a::T, t: usize, n: usize, c: &Ctc) -> NnResult<()> {
    let need = 2 * c.target_lengths.iter().copied().max().unwrap_or(0) as usize + 1;
    match la.shape() {
        [ln, lt, x] if *ln == n && *lt == t && *x >= need => Ok(()),
        s => Err(NnError::invalid(format!(
            "{} must be (N = {n}, T = {t}, X >= {need}), but its shape is {s:?}",
            la.arg
        ))),
    }
}

/// A per-batch-entry vector: `[N]`, or 0-D / `[1]` for an unbatched `[T, C]` logProbs.
fn check_per_entry(v: &a::T, n: usize, batched: bool) -> NnResult<()> {
    let ok = if batched {
        v.shape() == [n]
    } else {
        v.numel() == 1 && v.ndim() <= 1
    };
    if ok {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} must be {}, but its shape is {:?}",
            v.arg,
            if batched {
                format!("[{n}] (N)")
            } else {
                "0-D (logProbs is unbatched)".to_string()
            },
            v.shape()
        )))
    }
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnCtcLossGetWorkspaceSize(
    logProbs: *const c_void,
    targets: *const c_void,
    inputLengths: *const c_void,
    targetLengths: *const c_void,
    blank: i64,
    zeroInfinity: bool,
    negLogLikelihoodOut: *mut c_void,
    logAlphaOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCtcLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let lp = a::tensor(logProbs, "logProbs")?;
            let tg = a::tensor(targets, "targets")?;
            let il = a::int_array(inputLengths, "inputLengths")?;
            let tl = a::int_array(targetLengths, "targetLengths")?;
            let nll = a::tensor(negLogLikelihoodOut, "negLogLikelihoodOut")?;
            let la = a::tensor(logAlphaOut, "logAlphaOut")?;
            let ((t, n, _), c) = common(&lp, &tg, il, tl, blank, zeroInfinity)?;
            a::same_dtype(&nll, &lp)?;
            a::same_dtype(&la, &lp)?;
            check_per_entry(&nll, n, lp.ndim() == 3)?;
            check_alpha(&la, t, n, &c)?;
            let mut l = Launch::new("aclnnCtcLoss");
            l.input(&lp);
            l.input(&tg);
            l.output(&nll);
            l.output(&la);
            l.finish(move |v, _| engine::ctc_loss(&v[0], &v[1], &c, &v[2], &v[3]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnCtcLossBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    logProbs: *const c_void,
    targets: *const c_void,
    inputLengths: *const c_void,
    targetLengths: *const c_void,
    negLogLikelihood: *const c_void,
    logAlpha: *const c_void,
    blank: i64,
    zeroInfinity: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCtcLossBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let lp = a::tensor(logProbs, "logProbs")?;
            let tg = a::tensor(targets, "targets")?;
            let il = a::int_array(inputLengths, "inputLengths")?;
            let tl = a::int_array(targetLengths, "targetLengths")?;
            let nll = a::tensor(negLogLikelihood, "negLogLikelihood")?;
            let la = a::tensor(logAlpha, "logAlpha")?;
            let o = a::tensor(out, "out")?;
            let ((t, n, _), c) = common(&lp, &tg, il, tl, blank, zeroInfinity)?;
            for v in [&g, &nll, &la] {
                a::same_dtype(v, &lp)?;
            }
            a::same_dtype(&o, &g)?;
            let batched = lp.ndim() == 3;
            check_per_entry(&g, n, batched)?;
            check_per_entry(&nll, n, batched)?;
            check_alpha(&la, t, n, &c)?;
            a::same_shape(&o, lp.shape())?;
            let mut l = Launch::new("aclnnCtcLossBackward");
            for v in [&g, &lp, &tg, &nll, &la] {
                l.input(v);
            }
            l.output(&o);
            l.finish(move |v, _| {
                engine::ctc_loss_backward(&v[0], &v[1], &v[2], &v[3], &v[4], &c, &v[5])
            })
        },
    )
}

crate::phase2!(aclnnCtcLoss, aclnnCtcLossBackward);
