//! Native sparse attention, the selected-attention branch: `aclnnNsaSelectedAttention` and
//! `aclnnNsaSelectedAttentionGrad` (torch_npu's `npu_nsa_select_attention(_grad)`), layout TND,
//! on the engine of [`npu_emu::ops::attention_nsa`].
#![allow(non_snake_case)]

use super::args::{self as a, T};
use super::fused::same_dtype;
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::attention_nsa::{self as engine, Mask, NsaInfer, NsaSelect};
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
/// D_qk = 192 and D_v = 128 (the gradient: each 192 or 128), N_q = headNum a multiple of N_kv with G ≤ 32, N ≤ 128;
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
    grad: bool,
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
    // The forward page fixes D_qk = 192, D_v = 128; the gradient's allows 192 or 128 for
    // each, key and value may differ (its example runs D = 192 for all three).
    let dv = v.shape()[2];
    let dims_ok = if grad {
        [192, 128].contains(&dqk) && [192, 128].contains(&dv)
    } else {
        dqk == 192 && dv == 128
    };
    if k.shape()[2] != dqk || !dims_ok {
        return Err(NnError::invalid(format!(
            "head dims query {dqk}, key {}, value {dv}: CANN supports {}",
            k.shape()[2],
            if grad {
                "D_q = D_k and each of D_qk, D_v 192 or 128"
            } else {
                "D_qk = 192, D_v = 128"
            }
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
                    false,
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
                    true,
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

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

/// CANN's constraints of the inference form: layout BSND (default), BSH or TND; query
/// FLOAT16/BFLOAT16 with D = 192 (S ≤ 4 per batch), numHeads its N, a multiple of
/// numKeyValueHeads with G ≤ 16; key/value paged caches `[blocks, pageBlockSize, N_kv, D]` or
/// `[blocks, pageBlockSize, N_kv·D]` of the query's dtype, D_k = 192, D_v = 128,
/// pageBlockSize 64 or 128; topkIndices INT32 `[B, S, N_kv, count]` (TND `[T, N_kv, count]`);
/// blockTableOptional INT32 `[B, blocks per batch]` (required: only paged attention);
/// actualKvSeqLenOptional one length per batch (required), within its table;
/// actualQSeqLenOptional cumulative ends for TND (required there); selectBlockSize a multiple of
/// 16 up to 128, selectBlockCount ≥ 1. The mask and sparseMode are reserved by CANN (unread).
#[allow(clippy::too_many_arguments)]
unsafe fn infer_check(
    q: &T,
    k: &T,
    v: &T,
    topk: &T,
    table: Option<&T>,
    seq_q: *const c_void,
    seq_kv: *const c_void,
    layout: *const c_char,
    num_heads: i64,
    num_kv_heads: i64,
    block: i64,
    count: i64,
    page: i64,
    scale: f64,
    out: &T,
) -> NnResult<NsaInfer> {
    let l = if layout.is_null() {
        "BSND".to_string()
    } else {
        // SAFETY: a NUL-terminated C string from the caller.
        unsafe { std::ffi::CStr::from_ptr(layout) }
            .to_string_lossy()
            .into_owned()
    };
    a::dtype_in(q, &[DType::F16, DType::BF16])?;
    same_dtype(k, q)?;
    same_dtype(v, q)?;
    same_dtype(out, q)?;
    if num_heads <= 0
        || num_kv_heads <= 0
        || num_heads % num_kv_heads != 0
        || num_heads / num_kv_heads > 16
    {
        return Err(bad(format!(
            "numHeads {num_heads}, numKeyValueHeads {num_kv_heads}: numHeads must be a multiple \
             of numKeyValueHeads with a group of at most 16"
        )));
    }
    let (nq, nkv) = (num_heads as usize, num_kv_heads as usize);
    // (batches, query rows per batch or None for TND, rows, D_q)
    let (b, s, dq) = match (l.as_str(), q.shape()) {
        ("BSND", &[b, s, n, d]) if n == nq => (b, Some(s), d),
        ("BSH", &[b, s, h]) if h % nq == 0 => (b, Some(s), h / nq),
        ("TND", &[_, n, d]) if n == nq => (0, None, d),
        ("BSND" | "BSH" | "TND", sh) => {
            return Err(bad(format!(
                "query has shape {sh:?}, which does not fit layout {l} with numHeads {nq}"
            )))
        }
        _ => {
            return Err(bad(format!(
                "inputLayoutOptional \"{l}\" is not supported; BSH, BSND and TND are"
            )))
        }
    };
    let cache = |t: &T, want_d: usize| -> NnResult<(usize, usize)> {
        let ok = match *t.shape() {
            [nb, pb, n, d] => (n == nkv && d == want_d).then_some((nb, pb)),
            [nb, pb, h] => (h == nkv * want_d).then_some((nb, pb)),
            _ => None,
        };
        ok.ok_or_else(|| {
            bad(format!(
                "{} has shape {:?}; it takes [blocks, pageBlockSize, {nkv}, {want_d}] or \
                 [blocks, pageBlockSize, {}] (CANN supports D_qk = 192, D_v = 128)",
                t.arg,
                t.shape(),
                nkv * want_d
            ))
        })
    };
    if dq != 192 {
        return Err(bad(format!("query head dim {dq}: CANN supports 192")));
    }
    let (nb, pb) = cache(k, 192)?;
    if cache(v, 128)? != (nb, pb) {
        return Err(bad(format!(
            "value has shape {:?}, key {:?}: their blocks must agree",
            v.shape(),
            k.shape()
        )));
    }
    if page != pb as i64 || (page != 64 && page != 128) {
        return Err(bad(format!(
            "pageBlockSize {page} (the caches' block {pb}) must be 64 or 128 and match the caches"
        )));
    }
    if !(16..=128).contains(&block) || block % 16 != 0 {
        return Err(bad(format!(
            "selectBlockSize {block} must be a multiple of 16 from 16 to 128"
        )));
    }
    if count < 1 {
        return Err(bad(format!("selectBlockCount {count} must be positive")));
    }
    let Some(table) = table else {
        return Err(NnError::nullptr(
            "blockTableOptional is nullptr; only paged attention is supported",
        ));
    };
    a::dtype_in(table, &[DType::I32])?;
    a::dtype_in(topk, &[DType::I32])?;
    let (row_batch, nbatch) = match s {
        Some(s) => {
            if s > 4 {
                return Err(bad(format!("query S {s}: at most 4 tokens per batch")));
            }
            a::same_shape(topk, &[b, s, nkv, count as usize])?;
            ((0..b * s).map(|r| r / s).collect::<Vec<_>>(), b)
        }
        None => {
            let t = q.shape()[0];
            a::same_shape(topk, &[t, nkv, count as usize])?;
            let ends = ends(seq_q, "actualQSeqLenOptional", t)?;
            let mut rb = Vec::with_capacity(t);
            let mut prev = 0;
            for (i, &e) in ends.iter().enumerate() {
                if e - prev > 4 {
                    return Err(bad(format!(
                        "query sequence {i} has {} rows: at most 4 tokens per batch",
                        e - prev
                    )));
                }
                rb.extend(std::iter::repeat_n(i, e - prev));
                prev = e;
            }
            (rb, ends.len())
        }
    };
    if table.ndim() != 2 || table.shape()[0] != nbatch {
        return Err(bad(format!(
            "blockTableOptional has shape {:?}; it takes [{nbatch}, blocks per batch]",
            table.shape()
        )));
    }
    let cols = table.shape()[1];
    let Some(kv) = a::opt_int_array(seq_kv, "actualKvSeqLenOptional")? else {
        return Err(NnError::nullptr(
            "actualKvSeqLenOptional is nullptr; the key/value lengths are required",
        ));
    };
    if kv.len() != nbatch || kv.iter().any(|&x| x < 0 || x as usize > cols * pb) {
        return Err(bad(format!(
            "actualKvSeqLenOptional {kv:?} must hold {nbatch} lengths of 0 to blocks per batch · \
             pageBlockSize = {}",
            cols * pb
        )));
    }
    // The page's "selectBlockCount · selectBlockSize ≤ max(actualKvSeqLen)" is not enforced:
    // its own example selects one 64-row block of a 48-row sequence. A selected block is cut
    // at the batch's length; one that starts past it fails at launch.
    let mut want = q.shape().to_vec();
    let last = want.len() - 1;
    want[last] = if l == "BSH" { nq * 128 } else { 128 };
    a::same_shape(out, &want)?;
    Ok(NsaInfer {
        row_batch,
        kv_lens: kv.iter().map(|&x| x as usize).collect(),
        nq,
        nkv,
        scale,
        block: block as usize,
        count: count as usize,
        page: pb,
        table_cols: cols,
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNsaSelectedAttentionInferGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    topkIndices: *const c_void,
    attenMaskOptional: *const c_void,
    blockTableOptional: *const c_void,
    actualQSeqLenOptional: *const c_void,
    actualKvSeqLenOptional: *const c_void,
    layoutOptional: *mut c_char,
    numHeads: i64,
    numKeyValueHeads: i64,
    selectBlockSize: i64,
    selectBlockCount: i64,
    pageBlockSize: i64,
    scaleValue: f64,
    sparseMode: i64,
    output: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = sparseMode; // reserved by CANN
    phase1(
        "aclnnNsaSelectedAttentionInferGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k = a::tensor(key, "key")?;
            let v = a::tensor(value, "value")?;
            let tk = a::tensor(topkIndices, "topkIndices")?;
            let _mask = a::opt_tensor(attenMaskOptional, "attenMaskOptional")?; // reserved
            let tb = a::opt_tensor(blockTableOptional, "blockTableOptional")?;
            let out = a::tensor(output, "output")?;
            // SAFETY: layoutOptional is null or the caller's C string.
            let p = unsafe {
                infer_check(
                    &q,
                    &k,
                    &v,
                    &tk,
                    tb.as_ref(),
                    actualQSeqLenOptional,
                    actualKvSeqLenOptional,
                    layoutOptional,
                    numHeads,
                    numKeyValueHeads,
                    selectBlockSize,
                    selectBlockCount,
                    pageBlockSize,
                    scaleValue,
                    &out,
                )
            }?;
            let tb = tb.expect("checked");
            let mut l = Launch::new("aclnnNsaSelectedAttentionInfer");
            for t in [&q, &k, &v, &tk, &tb] {
                l.input(t);
            }
            l.output(&out);
            l.finish(move |vs, _| {
                engine::nsa_select_attention_infer(
                    &vs[0], &vs[1], &vs[2], &vs[3], &vs[4], &p, &vs[5],
                )
            })
        },
    )
}

crate::phase2!(
    aclnnNsaSelectedAttention,
    aclnnNsaSelectedAttentionGrad,
    aclnnNsaSelectedAttentionInfer
);
