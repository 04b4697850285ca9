//! Native sparse attention, the selected-attention branch: `aclnnNsaSelectedAttention` and
//! `aclnnNsaSelectedAttentionGrad` (torch_npu's `npu_nsa_select_attention(_grad)`), layout TND,
//! on the engine of [`npu_emu::ops::attention_nsa`].
#![allow(non_snake_case)]

use super::args::{self as a, T};
use super::fused::same_dtype;
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::attention_nsa::{self as engine, Mask, NsaSelect};
use npu_emu::ops::dtype::DType;
use std::ffi::{c_char, c_void};

/// The checked attributes of a selected-attention call, and whether a mask is read.
struct Sel {
    p: NsaSelect,
    explicit_mask: bool,
}

/// Cumulative sequence ends of `arg`: required for TND, non-decreasing, ending at `t`.
fn ends(h: *const c_void, arg: &'static str, t: usize) -> NnResult<Vec<usize>> {
    let v = a::opt_int_array(h, arg)?.unwrap_or_default();
    if v.is_empty() {
        return Err(NnError::nullptr(format!(
            "{arg} is nullptr or empty; layout TND needs the cumulative sequence lengths"
        )));
    }
    if v[0] < 0 || v.windows(2).any(|p| p[1] < p[0]) || v.last() != Some(&(t as i64)) {
        return Err(NnError::invalid(format!(
            "{arg} {v:?} must be cumulative (non-negative, non-decreasing) and end at T = {t}"
        )));
    }
    Ok(v.iter().map(|&e| e as usize).collect())
}

/// CANN's constraints: query/key/value FLOAT16/BFLOAT16 of layout TND (`[T, N, D]`),
/// D_qk = 192 and D_v = 128, N_q = headNum a multiple of N_kv with G ≤ 32, N ≤ 128;
/// topkIndices INT32 `[T_q, N_kv, selectedBlockCount]`; selectedBlockSize a multiple of 16
/// up to 128, selectedBlockCount 1-32; sparseMode 0 or 2; each key/value sequence a
/// multiple of selectedBlockSize and at least selectedBlockSize · selectedBlockCount long;
/// the optional mask BOOL/UINT8, 2-D.
#[allow(clippy::too_many_arguments)]
unsafe fn sel_check(
    q: &T,
    k: &T,
    v: &T,
    topk: &T,
    mask: Option<&T>,
    seq_q: *const c_void,
    seq_kv: *const c_void,
    scale: f64,
    head_num: i64,
    layout: *const c_char,
    sparse: i64,
    block: i64,
    count: i64,
) -> NnResult<Sel> {
    a::dtype_in(q, &[DType::F16, DType::BF16])?;
    same_dtype(k, q)?;
    same_dtype(v, q)?;
    if layout.is_null() {
        return Err(NnError::nullptr("inputLayout is nullptr"));
    }
    // SAFETY: a NUL-terminated C string from the caller.
    let l = unsafe { std::ffi::CStr::from_ptr(layout) }.to_string_lossy();
    if l != "TND" {
        return Err(NnError::invalid(format!(
            "inputLayout \"{l}\" is not supported; only TND is"
        )));
    }
    for t in [q, k, v] {
        if t.ndim() != 3 || t.numel() == 0 {
            return Err(NnError::invalid(format!(
                "{} has shape {:?}; layout TND takes a non-empty [T, N, D]",
                t.arg,
                t.shape()
            )));
        }
    }
    let (tq, nq, dqk) = (q.shape()[0], q.shape()[1], q.shape()[2]);
    let (tkv, nkv) = (k.shape()[0], k.shape()[1]);
    if v.shape()[..2] != [tkv, nkv] {
        return Err(NnError::invalid(format!(
            "value has shape {:?}; key's is {:?}: T and N must agree",
            v.shape(),
            k.shape()
        )));
    }
    if k.shape()[2] != dqk || dqk != 192 || v.shape()[2] != 128 {
        return Err(NnError::invalid(format!(
            "head dims query {dqk}, key {}, value {}: CANN supports D_qk = 192, D_v = 128",
            k.shape()[2],
            v.shape()[2]
        )));
    }
    if head_num != nq as i64 {
        return Err(NnError::invalid(format!(
            "headNum {head_num} differs from query's N = {nq}"
        )));
    }
    if nq > 128 || !nq.is_multiple_of(nkv) || nq / nkv > 32 {
        return Err(NnError::invalid(format!(
            "query N {nq}, key/value N {nkv}: N must be at most 128 and N_q / N_kv a whole \
             number from 1 to 32"
        )));
    }
    if !(16..=128).contains(&block) || block % 16 != 0 {
        return Err(NnError::invalid(format!(
            "selectedBlockSize {block} must be a multiple of 16 from 16 to 128"
        )));
    }
    if !(1..=32).contains(&count) {
        return Err(NnError::invalid(format!(
            "selectedBlockCount {count} must be from 1 to 32"
        )));
    }
    if sparse != 0 && sparse != 2 {
        return Err(NnError::invalid(format!(
            "sparseMode {sparse} is not supported; only 0 and 2 are"
        )));
    }
    a::dtype_in(topk, &[DType::I32])?;
    a::same_shape(topk, &[tq, nkv, count as usize])?;
    if let Some(m) = mask {
        a::dtype_in(m, &[DType::Bool, DType::U8])?;
        if m.ndim() != 2 {
            return Err(NnError::invalid(format!(
                "attenMaskOptional has shape {:?}; it takes 2 dimensions",
                m.shape()
            )));
        }
    }
    let q_ends = ends(seq_q, "actualSeqQLenOptional", tq)?;
    let kv_ends = ends(seq_kv, "actualSeqKvLenOptional", tkv)?;
    if q_ends.len() != kv_ends.len() {
        return Err(NnError::invalid(format!(
            "actualSeqQLenOptional holds {} sequences, actualSeqKvLenOptional {}; they must agree",
            q_ends.len(),
            kv_ends.len()
        )));
    }
    let (block, count) = (block as usize, count as usize);
    let mut prev = 0;
    for &e in &kv_ends {
        let s = e - prev;
        prev = e;
        if s % block != 0 || s < block * count {
            return Err(NnError::invalid(format!(
                "a key/value sequence of {s} rows: it must be a multiple of selectedBlockSize \
                 {block} and at least selectedBlockSize * selectedBlockCount = {}",
                block * count
            )));
        }
    }
    Ok(Sel {
        p: NsaSelect {
            q_ends,
            kv_ends,
            scale,
            block,
            count,
            causal: mask.is_some() && sparse == 2,
        },
        explicit_mask: mask.is_some() && sparse == 0,
    })
}

/// A softmax statistic: FLOAT `[T_q, N_q, 8]`.
fn check_stat(t: &T, q: &T) -> NnResult<()> {
    a::dtype_in(t, &[DType::F32])?;
    a::same_shape(t, &[q.shape()[0], q.shape()[1], 8])
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNsaSelectedAttentionGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    topkIndices: *const c_void,
    attenMaskOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    scaleValue: f64,
    headNum: i64,
    inputLayout: *mut c_char,
    sparseMode: i64,
    selectedBlockSize: i64,
    selectedBlockCount: i64,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNsaSelectedAttentionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k = a::tensor(key, "key")?;
            let v = a::tensor(value, "value")?;
            let tk = a::tensor(topkIndices, "topkIndices")?;
            let m = a::opt_tensor(attenMaskOptional, "attenMaskOptional")?;
            let smax = a::tensor(softmaxMaxOut, "softmaxMaxOut")?;
            let ssum = a::tensor(softmaxSumOut, "softmaxSumOut")?;
            let out = a::tensor(attentionOut, "attentionOut")?;
            // SAFETY: inputLayout is the caller's C string (checked for null).
            let s = unsafe {
                sel_check(
                    &q,
                    &k,
                    &v,
                    &tk,
                    m.as_ref(),
                    actualSeqQLenOptional,
                    actualSeqKvLenOptional,
                    scaleValue,
                    headNum,
                    inputLayout,
                    sparseMode,
                    selectedBlockSize,
                    selectedBlockCount,
                )
            }?;
            check_stat(&smax, &q)?;
            check_stat(&ssum, &q)?;
            same_dtype(&out, &q)?;
            a::same_shape(&out, &[q.shape()[0], q.shape()[1], v.shape()[2]])?;
            let mut l = Launch::new("aclnnNsaSelectedAttention");
            l.input(&q);
            l.input(&k);
            l.input(&v);
            l.input(&tk);
            let im = match (&m, s.explicit_mask) {
                (Some(m), true) => Some(l.input(m)),
                _ => None,
            };
            let o = l.output(&smax);
            l.output(&ssum);
            l.output(&out);
            let p = s.p;
            l.finish(move |vs, _| {
                engine::nsa_select_attention(
                    &vs[0],
                    &vs[1],
                    &vs[2],
                    &vs[3],
                    im.map(|i| Mask { view: &vs[i] }),
                    &p,
                    &vs[o],
                    &vs[o + 1],
                    &vs[o + 2],
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNsaSelectedAttentionGradGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    attentionOut: *const c_void,
    attentionOutGrad: *const c_void,
    softmaxMax: *const c_void,
    softmaxSum: *const c_void,
    topkIndices: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    attenMaskOptional: *const c_void,
    scaleValue: f64,
    selectedBlockSize: i64,
    selectedBlockCount: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    sparseMode: i64,
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNsaSelectedAttentionGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k = a::tensor(key, "key")?;
            let v = a::tensor(value, "value")?;
            let o = a::tensor(attentionOut, "attentionOut")?;
            let g = a::tensor(attentionOutGrad, "attentionOutGrad")?;
            let smax = a::tensor(softmaxMax, "softmaxMax")?;
            let ssum = a::tensor(softmaxSum, "softmaxSum")?;
            let tk = a::tensor(topkIndices, "topkIndices")?;
            let m = a::opt_tensor(attenMaskOptional, "attenMaskOptional")?;
            let dq = a::tensor(dqOut, "dqOut")?;
            let dk = a::tensor(dkOut, "dkOut")?;
            let dv = a::tensor(dvOut, "dvOut")?;
            // SAFETY: inputLayout is the caller's C string (checked for null).
            let s = unsafe {
                sel_check(
                    &q,
                    &k,
                    &v,
                    &tk,
                    m.as_ref(),
                    actualSeqQLenOptional,
                    actualSeqKvLenOptional,
                    scaleValue,
                    headNum,
                    inputLayout,
                    sparseMode,
                    selectedBlockSize,
                    selectedBlockCount,
                )
            }?;
            let oshape = [q.shape()[0], q.shape()[1], v.shape()[2]];
            for t in [&o, &g] {
                same_dtype(t, &q)?;
                a::same_shape(t, &oshape)?;
            }
            check_stat(&smax, &q)?;
            check_stat(&ssum, &q)?;
            for (d, x) in [(&dq, &q), (&dk, &k), (&dv, &v)] {
                same_dtype(d, x)?;
                a::same_shape(d, x.shape())?;
            }
            let mut l = Launch::new("aclnnNsaSelectedAttentionGrad");
            for t in [&q, &k, &v, &o, &g, &smax, &ssum, &tk] {
                l.input(t);
            }
            let im = match (&m, s.explicit_mask) {
                (Some(m), true) => Some(l.input(m)),
                _ => None,
            };
            let od = l.output(&dq);
            l.output(&dk);
            l.output(&dv);
            let p = s.p;
            l.finish(move |vs, _| {
                engine::nsa_select_attention_grad(
                    [&vs[0], &vs[1], &vs[2]],
                    &vs[3],
                    &vs[4],
                    &vs[5],
                    &vs[6],
                    &vs[7],
                    im.map(|i| Mask { view: &vs[i] }),
                    &p,
                    [&vs[od], &vs[od + 1], &vs[od + 2]],
                )
            })
        },
    )
}

crate::phase2!(aclnnNsaSelectedAttention, aclnnNsaSelectedAttentionGrad);
