//! LLM token sampling: `aclnn_top_k_top_p_sample_v2.h` (`torch_npu.npu_top_k_top_p_sample`;
//! the V1 operator is in [`super::llm_infer`]) and `aclnn_sim_thread_exponential.h`
//! (`torch_npu.npu_sim_exponential_`, `Tensor.exponential_` of op-plugin's fast path). The
//! checks are those of the operator reference (hicann/ops-nn `index/top_k_top_p_sample[_v2]`,
//! ops-math `random/sim_thread_exponential`): null required tensors 161001, data types,
//! ranks and sizes 161002, a `q` of another rank 561002 (the tiling's). The computation is
//! `npu_emu::ops::topk_sample`; the exponential draws come from the Philox stream, so the same
//! (seed, offset) gives the same values on every run.

use super::args::{self as a, FLOATS3, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::topk_sample::{self as ts, TopKTopPAttrs, TopKTopPOut};
use std::ffi::c_void;

/// `ACLNN_ERR_INNER_TILING_ERROR`: the tiling's shape rules.
const TILING: i32 = 561002;
/// The largest vocabulary the reference accepts (2^20).
const MAX_VOC: usize = 1 << 20;

fn invalid_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::invalid(msg()))
    } else {
        Ok(())
    }
}

/// A per-batch parameter: `batch` elements along its first dimension (`[batch]`, or the
/// `[batch, 1]` the reference allows for a skipped stage).
fn per_batch(t: &T, batch: usize) -> NnResult<()> {
    invalid_if(
        t.ndim() == 0 || t.ndim() > 2 || t.shape()[0] != batch || t.numel() != batch,
        || {
            format!(
                "{} {:?} must hold one element per batch ({batch}) along its first dimension",
                t.arg,
                t.shape()
            )
        },
    )
}

struct Args {
    logits: T,
    top_k: T,
    top_p: T,
    q: Option<T>,
    min_ps: Option<T>,
    select_idx: Option<T>,
    top_kp_select: Option<T>,
    logits_idx: Option<T>,
    sort_masked: Option<T>,
}

fn top_k_top_p(api: &'static str, x: Args, attrs: TopKTopPAttrs) -> NnResult<Built> {
    let lg = &x.logits;
    a::dtype_in(lg, FLOATS3)?;
    a::dtype_in(&x.top_k, &[DType::I32])?;
    a::dtype_in(&x.top_p, FLOATS3)?;
    a::same_dtype(&x.top_p, lg)?;
    invalid_if(lg.ndim() != 2, || {
        format!("logits must be 2-D [batch, vocSize], got {:?}", lg.shape())
    })?;
    let (batch, voc) = (lg.shape()[0], lg.shape()[1]);
    invalid_if(batch == 0 || voc == 0 || voc > MAX_VOC, || {
        format!(
            "logits {:?} must be non-empty with 0 < vocSize <= 2^20",
            lg.shape()
        )
    })?;
    per_batch(&x.top_k, batch)?;
    per_batch(&x.top_p, batch)?;
    if let Some(m) = &x.min_ps {
        a::dtype_in(m, FLOATS3)?;
        a::same_dtype(m, lg)?;
        per_batch(m, batch)?;
    }
    if let Some(q) = &x.q {
        a::dtype_in(q, &[DType::F32])?;
        if q.ndim() != 2 {
            return Err(NnError::new(
                TILING,
                format!("q {:?} must have logits' 2 dimensions", q.shape()),
            ));
        }
        a::same_shape(q, lg.shape())?;
    }
    invalid_if(attrs.ks_max < 1, || {
        format!("ksMax {} must be a positive integer", attrs.ks_max)
    })?;
    let need = |t: &Option<T>, name: &str, why: &str| -> NnResult<()> {
        if t.is_none() {
            return Err(NnError::nullptr(format!("{name} is nullptr ({why})")));
        }
        Ok(())
    };
    if attrs.is_need_sample_result {
        need(&x.logits_idx, "logitsIdx", "isNeedSampleResult")?;
        need(&x.sort_masked, "logitsSortMasked", "isNeedSampleResult")?;
    } else {
        need(&x.select_idx, "logitsSelectIdx", "the sampled index")?;
    }
    if attrs.is_need_logits {
        need(&x.top_kp_select, "logitsTopKPSelect", "isNeedLogits")?;
    }
    if let Some(o) = &x.select_idx {
        a::dtype_in(o, &[DType::I64])?;
        per_batch(o, batch)?;
    }
    for (o, dt) in [
        (&x.top_kp_select, DType::F32),
        (&x.logits_idx, DType::I64),
        (&x.sort_masked, DType::F32),
    ] {
        if let Some(o) = o {
            a::dtype_in(o, &[dt])?;
            a::same_shape(o, lg.shape())?;
        }
    }
    let mut l = Launch::new(api);
    let il = l.input(lg);
    let ik = l.input(&x.top_k);
    let ip = l.input(&x.top_p);
    let iq = x.q.as_ref().map(|t| l.input(t));
    let im = x.min_ps.as_ref().map(|t| l.input(t));
    let mut out = |t: &Option<T>| t.as_ref().map(|t| l.output(t));
    let os = out(&x.select_idx);
    let ok = out(&x.top_kp_select);
    let oi = out(&x.logits_idx);
    let om = out(&x.sort_masked);
    l.finish(move |v, _| {
        ts::top_k_top_p_sample(
            &v[il],
            &v[ik],
            &v[ip],
            iq.map(|i| &v[i]),
            im.map(|i| &v[i]),
            attrs,
            TopKTopPOut {
                select_idx: os.map(|i| &v[i]),
                top_kp_select: ok.map(|i| &v[i]),
                logits_idx: oi.map(|i| &v[i]),
                sort_masked: om.map(|i| &v[i]),
            },
        )
    })
}

/// `aclnnTopKTopPSampleV2`: top-k / top-p / min-p filtering of `logits [batch, V]`
/// (FLOAT16/BFLOAT16/FLOAT; topK INT32 and topP, minPs of logits' type, one per batch; q
/// FLOAT `[batch, V]` optional) and either the sampled index (logitsSelectIdx INT64
/// `[batch]`) or, with isNeedSampleResult, the kept probabilities and their indices
/// (logitsSortMasked FLOAT, logitsIdx INT64, `[batch, V]`); logitsTopKPSelect FLOAT `[batch,
/// V]` with isNeedLogits.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnTopKTopPSampleV2GetWorkspaceSize(
    logits: *const c_void,
    topK: *const c_void,
    topP: *const c_void,
    q: *const c_void,
    minPs: *const c_void,
    eps: f64,
    isNeedLogits: bool,
    topKGuess: i64,
    ksMax: i64,
    inputIsLogits: bool,
    isNeedSampleResult: bool,
    logitsSelectIdx: *const c_void,
    logitsTopKPSelect: *const c_void,
    logitsIdx: *const c_void,
    logitsSortMasked: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    // topKGuess only sizes the kernel's first top-p attempt; the result does not depend on it
    let _ = topKGuess;
    phase1(
        "aclnnTopKTopPSampleV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = Args {
                logits: a::tensor(logits, "logits")?,
                top_k: a::tensor(topK, "topK")?,
                top_p: a::tensor(topP, "topP")?,
                q: a::opt_tensor(q, "q")?,
                min_ps: a::opt_tensor(minPs, "minPs")?,
                select_idx: a::opt_tensor(logitsSelectIdx, "logitsSelectIdx")?,
                top_kp_select: a::opt_tensor(logitsTopKPSelect, "logitsTopKPSelect")?,
                logits_idx: a::opt_tensor(logitsIdx, "logitsIdx")?,
                sort_masked: a::opt_tensor(logitsSortMasked, "logitsSortMasked")?,
            };
            top_k_top_p(
                "aclnnTopKTopPSampleV2",
                x,
                TopKTopPAttrs {
                    eps,
                    is_need_logits: isNeedLogits,
                    ks_max: ksMax,
                    input_is_logits: inputIsLogits,
                    is_need_sample_result: isNeedSampleResult,
                },
            )
        },
    )
}

/// `aclnnSimThreadExponential`: the first `count` elements of selfRef (FLOAT16/BFLOAT16/
/// FLOAT, at most 8-D) become exponential draws of rate `lambda` (> 0) at (seed, offset).
#[no_mangle]
pub unsafe extern "C" fn aclnnSimThreadExponentialGetWorkspaceSize(
    selfRef: *const c_void,
    count: i64,
    lambda: f64,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSimThreadExponentialGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(selfRef, "selfRef")?;
            a::dtype_in(&s, FLOATS3)?;
            a::max_dims(&s, 8)?;
            invalid_if(lambda.is_nan() || lambda <= 0.0, || {
                format!("lambda {lambda} must be > 0")
            })?;
            invalid_if(count < 0, || format!("count {count} must be >= 0"))?;
            let mut l = Launch::new("aclnnSimThreadExponential");
            let o = l.output(&s);
            let n = count as usize;
            l.finish(move |v, _| {
                ts::sim_thread_exponential(&v[o], n, lambda, seed as u64, offset as u64)
            })
        },
    )
}

crate::phase2!(aclnnTopKTopPSampleV2, aclnnSimThreadExponential);
