//! DeepSeek-V3.2 sparse attention: `aclnnLightningIndexer` (torch_npu's
//! `npu_lightning_indexer`) and `aclnnSparseFlashAttention` / `…V2`
//! (`npu_sparse_flash_attention`), and `aclnnBlockSparseAttention`
//! (`npu_block_sparse_attention`), `aclnnFusedFloydAttention` / `…Grad`
//! (`npu_fused_floyd_attention` / `_backward`), with CANN's Atlas A2/A3 checks, on the engine of
//! [`npu_emu::ops::sparse_attention`].
#![allow(non_snake_case)]

use super::args::{self as a, T};
use super::fused::same_dtype;
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::sparse_attention::{
    self as engine, Bsa, BsaLayout, KvLayout, QLayout, Seqs, Sfa,
};
use std::ffi::{c_char, c_void, CStr};

/// The only preTokens/nextTokens CANN accepts.
const INF_TOKENS: i64 = i64::MAX;

/// A layout string argument; `default` when the pointer is NULL (the `…Optional` ones).
///
/// # Safety
/// `p` is NULL or a NUL-terminated C string.
unsafe fn layout_str(p: *const c_char, arg: &str, default: Option<&str>) -> NnResult<String> {
    if p.is_null() {
        return default
            .map(str::to_owned)
            .ok_or_else(|| NnError::nullptr(format!("{arg} is nullptr")));
    }
    // SAFETY: the caller's NUL-terminated string (see the function's contract).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn q_layout(s: &str, arg: &str) -> NnResult<QLayout> {
    QLayout::parse(s).ok_or_else(|| {
        NnError::invalid(format!(
            "{arg} \"{s}\" is not supported; supported: BSND, TND"
        ))
    })
}

fn kv_layout(s: &str, arg: &str) -> NnResult<KvLayout> {
    KvLayout::parse(s).ok_or_else(|| {
        NnError::invalid(format!(
            "{arg} \"{s}\" is not supported; supported: BSND, TND, PA_BSND"
        ))
    })
}

fn rank(t: &T, n: usize, what: &str) -> NnResult<()> {
    if t.ndim() != n || t.numel() == 0 {
        return Err(NnError::invalid(format!(
            "{} has shape {:?}; {what} takes a non-empty {n}-D tensor",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

/// The shared checks of the query/key geometry: ranks by layout, BSND key with the query's
/// batch, the actual lengths (INT32 `[B]`, required for TND and PA_BSND) and the block table
/// (INT32 `[B, ≥ 1]`, PA_BSND only). Returns (B, N1, D, N2).
#[allow(clippy::too_many_arguments)]
fn geometry(
    q: &T,
    k: &T,
    ql: QLayout,
    kl: KvLayout,
    act_q: Option<&T>,
    act_kv: Option<&T>,
    table: Option<&T>,
    names: [&str; 2],
) -> NnResult<(usize, usize, usize, usize)> {
    rank(
        q,
        if ql == QLayout::Tnd { 3 } else { 4 },
        "the query's layout",
    )?;
    rank(
        k,
        if kl == KvLayout::Tnd { 3 } else { 4 },
        "the key's layout",
    )?;
    let qs = q.shape();
    let (n1, d) = (qs[qs.len() - 2], qs[qs.len() - 1]);
    let ks = k.shape();
    let n2 = ks[ks.len() - 2];
    if kl != KvLayout::PaBsnd && (kl == KvLayout::Tnd) != (ql == QLayout::Tnd) {
        return Err(NnError::invalid(
            "the query's and key's layouts must agree (BSND with BSND, TND with TND) unless \
             the key is PA_BSND",
        ));
    }
    for t in [act_q, act_kv].into_iter().flatten() {
        a::dtype_in(t, &[DType::I32])?;
        rank(t, 1, "an actual-length tensor")?;
    }
    let b = match ql {
        QLayout::Bsnd => qs[0],
        QLayout::Tnd => match act_q {
            Some(t) => t.shape()[0],
            None => {
                return Err(NnError::nullptr(format!(
                    "{} is nullptr; layout TND needs the cumulative query lengths",
                    names[0]
                )))
            }
        },
    };
    if kl == KvLayout::Bsnd && ks[0] != b {
        return Err(NnError::invalid(format!(
            "key has batch {} but the query {b}",
            ks[0]
        )));
    }
    if let Some(t) = act_q {
        if t.shape()[0] != b {
            return Err(NnError::invalid(format!(
                "{} has {} entries; the batch is {b}",
                names[0],
                t.shape()[0]
            )));
        }
    }
    match act_kv {
        Some(t) if t.shape()[0] != b => {
            return Err(NnError::invalid(format!(
                "{} has {} entries; the batch is {b}",
                names[1],
                t.shape()[0]
            )))
        }
        None if kl != KvLayout::Bsnd => {
            return Err(NnError::nullptr(format!(
                "{} is nullptr; layout TND and PA_BSND need the key lengths",
                names[1]
            )))
        }
        _ => {}
    }
    match (kl, table) {
        (KvLayout::PaBsnd, None) => {
            return Err(NnError::nullptr(
                "blockTable is nullptr; layout PA_BSND needs the block table",
            ))
        }
        (KvLayout::PaBsnd, Some(t)) => {
            a::dtype_in(t, &[DType::I32])?;
            rank(t, 2, "the block table")?;
            if t.shape()[0] != b {
                return Err(NnError::invalid(format!(
                    "blockTable has shape {:?}; its first dimension must be the batch {b}",
                    t.shape()
                )));
            }
            let bs = ks[1];
            if !bs.is_multiple_of(16) || bs > 1024 {
                return Err(NnError::invalid(format!(
                    "the cache's block size {bs} must be a multiple of 16 up to 1024"
                )));
            }
        }
        _ => {}
    }
    Ok((b, n1, d, n2))
}

fn tokens(pre: i64, next: i64) -> NnResult<()> {
    if pre != INF_TOKENS || next != INF_TOKENS {
        return Err(NnError::invalid(format!(
            "preTokens {pre} / nextTokens {next}: only the default 2^63-1 is supported"
        )));
    }
    Ok(())
}

fn sparse_mode(m: i64) -> NnResult<()> {
    if m != 0 && m != 3 {
        return Err(NnError::invalid(format!(
            "sparseMode {m} is not supported; supported: 0 (all) and 3 (right-down causal)"
        )));
    }
    Ok(())
}

/// The leading dimensions of a per-token output: `[B, S1]` (BSND) or `[T1]` (TND).
fn lead(q: &T) -> Vec<usize> {
    q.shape()[..q.ndim() - 2].to_vec()
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLightningIndexerGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    weights: *const c_void,
    actualSeqLengthsQueryOptional: *const c_void,
    actualSeqLengthsKeyOptional: *const c_void,
    blockTableOptional: *const c_void,
    layoutQueryOptional: *mut c_char,
    layoutKeyOptional: *mut c_char,
    sparseCount: i64,
    sparseMode: i64,
    preTokens: i64,
    nextTokens: i64,
    returnValues: bool,
    sparseIndicesOut: *const c_void,
    sparseValuesOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLightningIndexerGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k = a::tensor(key, "key")?;
            let w = a::tensor(weights, "weights")?;
            let aq = a::opt_tensor(
                actualSeqLengthsQueryOptional,
                "actualSeqLengthsQueryOptional",
            )?;
            let ak = a::opt_tensor(actualSeqLengthsKeyOptional, "actualSeqLengthsKeyOptional")?;
            let tb = a::opt_tensor(blockTableOptional, "blockTableOptional")?;
            let idx = a::tensor(sparseIndicesOut, "sparseIndicesOut")?;
            let val = a::opt_tensor(sparseValuesOut, "sparseValuesOut")?;
            // SAFETY: the caller's C strings or NULL.
            let (lq, lk) = unsafe {
                (
                    layout_str(layoutQueryOptional, "layoutQueryOptional", Some("BSND"))?,
                    layout_str(layoutKeyOptional, "layoutKeyOptional", Some("BSND"))?,
                )
            };
            let ql = q_layout(&lq, "layoutQueryOptional")?;
            let kl = kv_layout(&lk, "layoutKeyOptional")?;
            a::dtype_in(&q, &[DType::F16, DType::BF16])?;
            same_dtype(&k, &q)?;
            a::dtype_in(&w, &[DType::F16, DType::BF16, DType::F32])?;
            if w.dtype() != DType::F32 {
                same_dtype(&w, &q)?;
            }
            let (_, n1, d, n2) = geometry(
                &q,
                &k,
                ql,
                kl,
                aq.as_ref(),
                ak.as_ref(),
                tb.as_ref(),
                [
                    "actualSeqLengthsQueryOptional",
                    "actualSeqLengthsKeyOptional",
                ],
            )?;
            if n2 != 1 {
                return Err(NnError::invalid(format!(
                    "key has N = {n2}; LightningIndexer supports N2 = 1"
                )));
            }
            if n1 > 64 {
                return Err(NnError::invalid(format!(
                    "query has N = {n1}; Atlas A2/A3 support N1 up to 64"
                )));
            }
            if d != 128 || k.shape()[k.ndim() - 1] != 128 {
                return Err(NnError::invalid(format!(
                    "head dims query {d}, key {}: LightningIndexer supports D = 128",
                    k.shape()[k.ndim() - 1]
                )));
            }
            let mut wshape = lead(&q);
            wshape.push(n1);
            a::same_shape(&w, &wshape)?;
            if !((1..=2048).contains(&sparseCount)
                || [3072, 4096, 5120, 6144, 7168, 8192].contains(&sparseCount))
            {
                return Err(NnError::invalid(format!(
                    "sparseCount {sparseCount} is not supported; supported: 1-2048, 3072, \
                     4096, 5120, 6144, 7168, 8192"
                )));
            }
            sparse_mode(sparseMode)?;
            tokens(preTokens, nextTokens)?;
            let mut oshape = lead(&q);
            oshape.extend([n2, sparseCount as usize]);
            a::dtype_in(&idx, &[DType::I32])?;
            a::same_shape(&idx, &oshape)?;
            let val = match (returnValues, val) {
                (false, _) => None,
                (true, None) => {
                    return Err(NnError::nullptr(
                        "sparseValuesOut is nullptr but returnValues is true",
                    ))
                }
                (true, Some(v)) => {
                    if kl == KvLayout::PaBsnd {
                        return Err(NnError::invalid(
                            "returnValues is supported only when layoutKeyOptional is not PA_BSND",
                        ));
                    }
                    same_dtype(&v, &q)?;
                    a::same_shape(&v, &oshape)?;
                    Some(v)
                }
            };
            let mut l = Launch::new("aclnnLightningIndexer");
            l.input(&q);
            l.input(&k);
            l.input(&w);
            let iq = aq.as_ref().map(|t| l.input(t));
            let ik = ak.as_ref().map(|t| l.input(t));
            let it = match kl {
                KvLayout::PaBsnd => tb.as_ref().map(|t| l.input(t)),
                _ => None,
            };
            let o = l.output(&idx);
            let ov = val.as_ref().map(|t| l.output(t));
            let count = sparseCount as usize;
            l.finish(move |vs, _| {
                let seqs = Seqs {
                    q_layout: ql,
                    kv_layout: kl,
                    act_q: iq.map(|i| &vs[i]),
                    act_kv: ik.map(|i| &vs[i]),
                    table: it.map(|i| &vs[i]),
                };
                engine::lightning_indexer(
                    &vs[0],
                    &vs[1],
                    &vs[2],
                    &seqs,
                    count,
                    sparseMode,
                    &vs[o],
                    ov.map(|i| &vs[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnLightningIndexer);

/// The checks and launch of SparseFlashAttention (V1, and V2 without sinks).
#[allow(clippy::too_many_arguments)]
unsafe fn sfa(
    api: &'static str,
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    sparseIndices: *const c_void,
    blockTable: *const c_void,
    actualSeqLengthsQuery: *const c_void,
    actualSeqLengthsKv: *const c_void,
    queryRope: *const c_void,
    keyRope: *const c_void,
    sinks: Option<*const c_void>,
    scaleValue: f64,
    sparseBlockSize: i64,
    layoutQuery: *mut c_char,
    layoutKv: *mut c_char,
    sparseMode: i64,
    preTokens: i64,
    nextTokens: i64,
    attentionMode: i64,
    returnSoftmaxLse: bool,
    attentionOut: *const c_void,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
) -> NnResult<super::launch::Built> {
    let q = a::tensor(query, "query")?;
    let k = a::tensor(key, "key")?;
    // A NULL value is the key (MLA-absorb: key and value share one tensor), as CANN does.
    let v = if value.is_null() {
        a::tensor(key, "key")?
    } else {
        a::tensor(value, "value")?
    };
    let ix = a::tensor(sparseIndices, "sparseIndices")?;
    let tb = a::opt_tensor(blockTable, "blockTable")?;
    let aq = a::opt_tensor(actualSeqLengthsQuery, "actualSeqLengthsQuery")?;
    let ak = a::opt_tensor(actualSeqLengthsKv, "actualSeqLengthsKv")?;
    let qr = a::opt_tensor(queryRope, "queryRope")?;
    let kr = a::opt_tensor(keyRope, "keyRope")?;
    let out = a::tensor(attentionOut, "attentionOut")?;
    if let Some(s) = sinks {
        if !s.is_null() {
            let soc = crate::rt::rt()?.soc_name();
            return Err(NnError::runtime(format!(
                "The sinks input of aclnnSparseFlashAttentionV2 is only supported on \
                 Ascend950 (the emulated SoC is {soc})"
            )));
        }
    }
    // SAFETY: the caller's C strings or NULL.
    let (lq, lk) = unsafe {
        (
            layout_str(layoutQuery, "layoutQuery", None)?,
            layout_str(layoutKv, "layoutKv", None)?,
        )
    };
    let ql = q_layout(&lq, "layoutQuery")?;
    let kl = kv_layout(&lk, "layoutKv")?;
    a::dtype_in(&q, &[DType::F16, DType::BF16])?;
    same_dtype(&k, &q)?;
    same_dtype(&v, &q)?;
    let (_, n1, d, n2) = geometry(
        &q,
        &k,
        ql,
        kl,
        aq.as_ref(),
        ak.as_ref(),
        tb.as_ref(),
        ["actualSeqLengthsQuery", "actualSeqLengthsKv"],
    )?;
    a::same_shape(&v, k.shape())?;
    if n2 != 1 {
        return Err(NnError::invalid(format!(
            "key has N = {n2}; SparseFlashAttention supports KV_N = 1"
        )));
    }
    if ![1, 2, 4, 8, 16, 32, 64, 128].contains(&n1) {
        return Err(NnError::invalid(format!(
            "query has N = {n1}; Atlas A2/A3 support N1 of 1, 2, 4, 8, 16, 32, 64, 128"
        )));
    }
    if d != 512 || k.shape()[k.ndim() - 1] != 512 {
        return Err(NnError::invalid(format!(
            "head dims query {d}, key {}: SparseFlashAttention supports D = 512",
            k.shape()[k.ndim() - 1]
        )));
    }
    let rope = match (&qr, &kr) {
        (Some(a_), Some(b_)) => {
            same_dtype(a_, &q)?;
            same_dtype(b_, &q)?;
            let mut s = q.shape().to_vec();
            *s.last_mut().unwrap() = 64;
            a::same_shape(a_, &s)?;
            let mut s = k.shape().to_vec();
            *s.last_mut().unwrap() = 64;
            a::same_shape(b_, &s)?;
            true
        }
        (None, None) => false,
        _ => {
            return Err(NnError::invalid(
                "queryRope and keyRope must be given together (D_rope = 64)",
            ))
        }
    };
    if attentionMode != 2 {
        return Err(NnError::invalid(format!(
            "attentionMode {attentionMode} is not supported; only 2 (MLA-absorb) is"
        )));
    }
    if !(1..=128).contains(&sparseBlockSize) || !(sparseBlockSize as u64).is_power_of_two() {
        return Err(NnError::invalid(format!(
            "sparseBlockSize {sparseBlockSize} must be a power of two from 1 to 128"
        )));
    }
    if kl == KvLayout::PaBsnd && !k.shape()[1].is_multiple_of(sparseBlockSize as usize) {
        return Err(NnError::invalid(format!(
            "sparseBlockSize {sparseBlockSize} must divide the cache's block size {}",
            k.shape()[1]
        )));
    }
    sparse_mode(sparseMode)?;
    tokens(preTokens, nextTokens)?;
    a::dtype_in(&ix, &[DType::I32])?;
    let mut ishape = lead(&q);
    ishape.push(n2);
    if ix.ndim() != ishape.len() + 1 || ix.shape()[..ishape.len()] != ishape[..] || ix.numel() == 0
    {
        return Err(NnError::invalid(format!(
            "sparseIndices has shape {:?}; expected {ishape:?} + [sparse_size > 0]",
            ix.shape()
        )));
    }
    same_dtype(&out, &q)?;
    a::same_shape(&out, q.shape())?;
    let stats = if returnSoftmaxLse {
        if kl == KvLayout::PaBsnd {
            return Err(NnError::invalid(
                "returnSoftmaxLse is supported only when layoutKv is not PA_BSND",
            ));
        }
        let smax = a::tensor(softmaxMaxOut, "softmaxMaxOut")?;
        let ssum = a::tensor(softmaxSumOut, "softmaxSumOut")?;
        let g = n1 / n2;
        let sshape = match ql {
            QLayout::Bsnd => vec![q.shape()[0], n2, q.shape()[1], g],
            QLayout::Tnd => vec![n2, q.shape()[0], g],
        };
        for t in [&smax, &ssum] {
            a::dtype_in(t, &[DType::F32])?;
            a::same_shape(t, &sshape)?;
        }
        Some((smax, ssum))
    } else {
        None
    };
    let mut l = Launch::new(api);
    l.input(&q);
    l.input(&k);
    l.input(&v);
    l.input(&ix);
    let ir = if rope {
        let i = l.input(qr.as_ref().unwrap());
        l.input(kr.as_ref().unwrap());
        Some(i)
    } else {
        None
    };
    let iq = aq.as_ref().map(|t| l.input(t));
    let ik = ak.as_ref().map(|t| l.input(t));
    let it = match kl {
        KvLayout::PaBsnd => tb.as_ref().map(|t| l.input(t)),
        _ => None,
    };
    let o = l.output(&out);
    let os = stats.as_ref().map(|(m, s)| {
        let i = l.output(m);
        l.output(s);
        i
    });
    let p = Sfa {
        scale: scaleValue,
        sparse_block: sparseBlockSize as usize,
        sparse_mode: sparseMode,
    };
    l.finish(move |vs, _| {
        let seqs = Seqs {
            q_layout: ql,
            kv_layout: kl,
            act_q: iq.map(|i| &vs[i]),
            act_kv: ik.map(|i| &vs[i]),
            table: it.map(|i| &vs[i]),
        };
        engine::sparse_flash_attention(
            &vs[0],
            &vs[1],
            &vs[2],
            &vs[3],
            ir.map(|i| (&vs[i], &vs[i + 1])),
            &seqs,
            &p,
            &vs[o],
            os.map(|i| (&vs[i], &vs[i + 1])),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSparseFlashAttentionGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    sparseIndices: *const c_void,
    blockTable: *const c_void,
    actualSeqLengthsQuery: *const c_void,
    actualSeqLengthsKv: *const c_void,
    queryRope: *const c_void,
    keyRope: *const c_void,
    scaleValue: f64,
    sparseBlockSize: i64,
    layoutQuery: *mut c_char,
    layoutKv: *mut c_char,
    sparseMode: i64,
    preTokens: i64,
    nextTokens: i64,
    attentionMode: i64,
    returnSoftmaxLse: bool,
    attentionOut: *const c_void,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSparseFlashAttentionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            // SAFETY: the caller's arguments, passed through.
            unsafe {
                sfa(
                    "aclnnSparseFlashAttention",
                    query,
                    key,
                    value,
                    sparseIndices,
                    blockTable,
                    actualSeqLengthsQuery,
                    actualSeqLengthsKv,
                    queryRope,
                    keyRope,
                    None,
                    scaleValue,
                    sparseBlockSize,
                    layoutQuery,
                    layoutKv,
                    sparseMode,
                    preTokens,
                    nextTokens,
                    attentionMode,
                    returnSoftmaxLse,
                    attentionOut,
                    softmaxMaxOut,
                    softmaxSumOut,
                )
            }
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSparseFlashAttentionV2GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    sparseIndices: *const c_void,
    blockTable: *const c_void,
    actualSeqLengthsQuery: *const c_void,
    actualSeqLengthsKv: *const c_void,
    queryRope: *const c_void,
    keyRope: *const c_void,
    sinks: *const c_void,
    scaleValue: f64,
    sparseBlockSize: i64,
    layoutQuery: *mut c_char,
    layoutKv: *mut c_char,
    sparseMode: i64,
    preTokens: i64,
    nextTokens: i64,
    attentionMode: i64,
    returnSoftmaxLse: bool,
    attentionOut: *const c_void,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSparseFlashAttentionV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            // SAFETY: the caller's arguments, passed through.
            unsafe {
                sfa(
                    "aclnnSparseFlashAttentionV2",
                    query,
                    key,
                    value,
                    sparseIndices,
                    blockTable,
                    actualSeqLengthsQuery,
                    actualSeqLengthsKv,
                    queryRope,
                    keyRope,
                    Some(sinks),
                    scaleValue,
                    sparseBlockSize,
                    layoutQuery,
                    layoutKv,
                    sparseMode,
                    preTokens,
                    nextTokens,
                    attentionMode,
                    returnSoftmaxLse,
                    attentionOut,
                    softmaxMaxOut,
                    softmaxSumOut,
                )
            }
        },
    )
}

crate::phase2!(aclnnSparseFlashAttention);
crate::phase2!(aclnnSparseFlashAttentionV2);

/// BlockSparseAttention's only preTokens/nextTokens (no sliding window).
const BSA_TOKENS: i64 = 2147483647;

#[no_mangle]
pub unsafe extern "C" fn aclnnBlockSparseAttentionGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    blockSparseMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    blockShapeOptional: *const c_void,
    actualSeqLengthsOptional: *const c_void,
    actualSeqLengthsKvOptional: *const c_void,
    blockTableOptional: *const c_void,
    qInputLayout: *mut c_char,
    kvInputLayout: *mut c_char,
    numKeyValueHeads: i64,
    maskType: i64,
    scaleValue: f64,
    innerPrecise: i64,
    blockSize: i64,
    preTokens: i64,
    nextTokens: i64,
    softmaxLseFlag: i64,
    attentionOut: *const c_void,
    softmaxLseOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBlockSparseAttentionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k = a::tensor(key, "key")?;
            let v = a::tensor(value, "value")?;
            let mask = a::opt_tensor(blockSparseMaskOptional, "blockSparseMaskOptional")?
                .ok_or_else(|| {
                    NnError::nullptr(
                        "blockSparseMaskOptional is nullptr; the current version requires it",
                    )
                })?;
            if !attenMaskOptional.is_null() {
                return Err(NnError::invalid(
                    "attenMaskOptional is not supported; it must be nullptr",
                ));
            }
            if !blockTableOptional.is_null() {
                return Err(NnError::invalid(
                    "blockTableOptional (PagedAttention) is not supported; it must be nullptr",
                ));
            }
            let out = a::tensor(attentionOut, "attentionOut")?;
            // SAFETY: the caller's C strings or NULL.
            let (lq, lk) = unsafe {
                (
                    layout_str(qInputLayout, "qInputLayout", None)?,
                    layout_str(kvInputLayout, "kvInputLayout", None)?,
                )
            };
            let layout = BsaLayout::parse(&lq).ok_or_else(|| {
                NnError::invalid(format!(
                    "qInputLayout \"{lq}\" is not supported; supported: TND, BNSD, BSND"
                ))
            })?;
            if lk != lq {
                return Err(NnError::invalid(format!(
                    "kvInputLayout \"{lk}\" must equal qInputLayout \"{lq}\""
                )));
            }
            a::dtype_in(&q, &[DType::F16, DType::BF16])?;
            same_dtype(&k, &q)?;
            same_dtype(&v, &q)?;
            let want = if layout == BsaLayout::Tnd { 3 } else { 4 };
            for t in [&q, &k, &v] {
                rank(t, want, "the layout")?;
            }
            let (b, s1, n1, d) = layout.dims(q.shape());
            let (bk, s2, n2, dk) = layout.dims(k.shape());
            a::same_shape(&v, k.shape())?;
            if bk != b {
                return Err(NnError::invalid(format!(
                    "key has batch {bk}, query {b}; they must agree"
                )));
            }
            if d != dk || (d != 64 && d != 128) {
                return Err(NnError::invalid(format!(
                    "head dims query {d}, key {dk}: D must be 64 or 128 for both"
                )));
            }
            if numKeyValueHeads != n2 as i64 {
                return Err(NnError::invalid(format!(
                    "numKeyValueHeads {numKeyValueHeads} differs from key's N = {n2}"
                )));
            }
            if n1 < n2 || !n1.is_multiple_of(n2) {
                return Err(NnError::invalid(format!(
                    "query N {n1}, key/value N {n2}: N1 >= N2 and N1 % N2 == 0 are required"
                )));
            }
            let shape = a::opt_int_array(blockShapeOptional, "blockShapeOptional")?
                .unwrap_or_else(|| vec![128, 128]);
            if shape.len() < 2 || shape[0] <= 0 || shape[1] <= 0 {
                return Err(NnError::invalid(format!(
                    "blockShapeOptional {shape:?} must hold [blockShapeX, blockShapeY], both > 0"
                )));
            }
            if shape[1] % 128 != 0 {
                return Err(NnError::invalid(format!(
                    "blockShapeY {} must be a multiple of 128 on Atlas A2/A3",
                    shape[1]
                )));
            }
            let aq = a::opt_int_array(actualSeqLengthsOptional, "actualSeqLengthsOptional")?;
            let ak = a::opt_int_array(actualSeqLengthsKvOptional, "actualSeqLengthsKvOptional")?;
            if aq.is_some() != ak.is_some() {
                return Err(NnError::invalid(
                    "actualSeqLengthsOptional and actualSeqLengthsKvOptional must be given \
                     together or both be nullptr",
                ));
            }
            let lens = |v: Option<Vec<i64>>, arg: &str, s: usize| -> NnResult<Vec<usize>> {
                let v = match v {
                    Some(v) => v,
                    None if layout == BsaLayout::Tnd => {
                        return Err(NnError::nullptr(format!(
                            "{arg} is nullptr; layout TND requires it"
                        )))
                    }
                    None => vec![s as i64; b],
                };
                let total: i64 = v.iter().sum();
                let bad = v.iter().any(|&x| x < 0)
                    || match layout {
                        BsaLayout::Tnd => total > s as i64,
                        _ => v.len() != b || v.iter().any(|&x| x > s as i64),
                    };
                if bad || v.is_empty() {
                    return Err(NnError::invalid(format!(
                        "{arg} {v:?}: one non-negative length per batch, each at most S = {s} \
                         (TND: summing to at most T = {s})"
                    )));
                }
                Ok(v.iter().map(|&x| x as usize).collect())
            };
            let q_lens = lens(aq, "actualSeqLengthsOptional", s1)?;
            let kv_lens = lens(ak, "actualSeqLengthsKvOptional", s2)?;
            if q_lens.len() != kv_lens.len() {
                return Err(NnError::invalid(format!(
                    "actualSeqLengthsOptional has {} entries, actualSeqLengthsKvOptional {}",
                    q_lens.len(),
                    kv_lens.len()
                )));
            }
            let (bx, by) = (shape[0] as usize, shape[1] as usize);
            let nb = q_lens.len();
            let need_q = q_lens.iter().max().copied().unwrap_or(0).div_ceil(bx);
            let need_k = kv_lens.iter().max().copied().unwrap_or(0).div_ceil(by);
            a::dtype_in(&mask, &[DType::I8])?;
            let ms = mask.shape();
            if mask.ndim() != 4 || ms[0] != nb || ms[1] != n1 || ms[2] < need_q || ms[3] < need_k {
                return Err(NnError::invalid(format!(
                    "blockSparseMaskOptional has shape {ms:?}; expected [{nb}, {n1}, \
                     {need_q}, {need_k}] (batch, headNum, ceilDiv(qSeq, blockShapeX), \
                     ceilDiv(kvSeq, blockShapeY))"
                )));
            }
            if maskType != 0 {
                return Err(NnError::invalid(format!(
                    "maskType {maskType} is not supported; only 0 is"
                )));
            }
            match innerPrecise {
                0 => {}
                1 if q.dtype() == DType::F16 => {}
                1 => {
                    return Err(NnError::invalid(
                        "innerPrecise 1 needs FLOAT16 query/key/value; BFLOAT16 supports only 0",
                    ))
                }
                _ => {
                    return Err(NnError::invalid(format!(
                        "innerPrecise {innerPrecise} is not supported on Atlas A2/A3; \
                         supported: 0, 1"
                    )))
                }
            }
            if blockSize != 0 {
                return Err(NnError::invalid(format!(
                    "blockSize {blockSize} is not supported; only 0 (no paged cache) is"
                )));
            }
            if preTokens != BSA_TOKENS || nextTokens != BSA_TOKENS {
                return Err(NnError::invalid(format!(
                    "preTokens {preTokens} / nextTokens {nextTokens}: only 2147483647 is \
                     supported"
                )));
            }
            if softmaxLseFlag != 0 && softmaxLseFlag != 1 {
                return Err(NnError::invalid(format!(
                    "softmaxLseFlag {softmaxLseFlag} must be 0 or 1"
                )));
            }
            same_dtype(&out, &q)?;
            a::same_shape(&out, q.shape())?;
            let lse = if softmaxLseFlag == 1 {
                let t =
                    a::opt_tensor(softmaxLseOptional, "softmaxLseOptional")?.ok_or_else(|| {
                        NnError::nullptr("softmaxLseOptional is nullptr but softmaxLseFlag is 1")
                    })?;
                a::dtype_in(&t, &[DType::F32])?;
                let mut s = q.shape().to_vec();
                *s.last_mut().unwrap() = 1;
                a::same_shape(&t, &s)?;
                Some(t)
            } else {
                None
            };
            let mut l = Launch::new("aclnnBlockSparseAttention");
            for t in [&q, &k, &v, &mask] {
                l.input(t);
            }
            let o = l.output(&out);
            let ol = lse.as_ref().map(|t| l.output(t));
            let p = Bsa {
                layout,
                q_lens,
                kv_lens,
                block_x: bx,
                block_y: by,
                scale: scaleValue,
            };
            l.finish(move |vs, _| {
                engine::block_sparse_attention(
                    &vs[0],
                    &vs[1],
                    &vs[2],
                    &vs[3],
                    &p,
                    &vs[o],
                    ol.map(|i| &vs[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnBlockSparseAttention);

/// ACLNN_ERR_INNER_TILING_ERROR: FusedFloydAttention's shape constraints, as its page lists.
const TILING: i32 = 561002;

/// FusedFloydAttention's checks: FLOAT16/BFLOAT16, query `[B, H, N, M, D]`, key1/value1
/// `[B, H, N, K, D]`, key2/value2 `[B, H, K, M, D]`, the mask BOOL/UINT8 `[B, 1|H, N, 1|M, K]`;
/// the page's ranges (B ≤ 2048, H ≤ 256, N a multiple of 16, M and K multiples of 128,
/// D 32/64/128) give 561002.
fn floyd_check(q: &T, k1: &T, v1: &T, k2: &T, v2: &T, mask: Option<&T>) -> NnResult<()> {
    a::dtype_in(q, &[DType::F16, DType::BF16])?;
    for t in [k1, v1, k2, v2] {
        same_dtype(t, q)?;
    }
    for t in [q, k1, v1, k2, v2] {
        if t.ndim() != 5 {
            return Err(NnError::invalid(format!(
                "{} has shape {:?}; it takes 5 dimensions",
                t.arg,
                t.shape()
            )));
        }
    }
    let qs = q.shape();
    let (b, h, n, m, d) = (qs[0], qs[1], qs[2], qs[3], qs[4]);
    let k = k1.shape()[3];
    a::same_shape(k1, &[b, h, n, k, d])?;
    a::same_shape(v1, k1.shape())?;
    a::same_shape(k2, &[b, h, k, m, d])?;
    a::same_shape(v2, k2.shape())?;
    if let Some(mk) = mask {
        a::dtype_in(mk, &[DType::Bool, DType::U8])?;
        let s = mk.shape();
        if s.len() != 5
            || s[0] != b
            || (s[1] != 1 && s[1] != h)
            || s[2] != n
            || (s[3] != 1 && s[3] != m)
            || s[4] != k
        {
            return Err(NnError::invalid(format!(
                "attenMaskOptional has shape {s:?}; expected [{b}, 1, {n}, 1, {k}] \
                 ([B, H, N, M, K] also accepted)"
            )));
        }
    }
    let ok = (1..=2048).contains(&b)
        && (1..=256).contains(&h)
        && n >= 16
        && n.is_multiple_of(16)
        && m >= 128
        && m.is_multiple_of(128)
        && k >= 128
        && k.is_multiple_of(128)
        && [32, 64, 128].contains(&d);
    if !ok {
        return Err(NnError::new(
            TILING,
            format!(
                "B {b}, H {h}, N {n}, M {m}, K {k}, D {d}: FusedFloydAttention needs B 1-2048, \
                 H 1-256, N a multiple of 16, M and K multiples of 128, D 32/64/128"
            ),
        ));
    }
    Ok(())
}

fn floyd_stat(t: &T, q: &T) -> NnResult<()> {
    a::dtype_in(t, &[DType::F32])?;
    let mut s = q.shape()[..4].to_vec();
    s.push(8);
    a::same_shape(t, &s)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedFloydAttentionGetWorkspaceSize(
    query: *const c_void,
    key1: *const c_void,
    value1: *const c_void,
    key2: *const c_void,
    value2: *const c_void,
    attenMaskOptional: *const c_void,
    scaleValueOptional: f64,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    attentionOutOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedFloydAttentionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k1 = a::tensor(key1, "key1")?;
            let v1 = a::tensor(value1, "value1")?;
            let k2 = a::tensor(key2, "key2")?;
            let v2 = a::tensor(value2, "value2")?;
            let mk = a::opt_tensor(attenMaskOptional, "attenMaskOptional")?;
            let smax = a::tensor(softmaxMaxOut, "softmaxMaxOut")?;
            let ssum = a::tensor(softmaxSumOut, "softmaxSumOut")?;
            let out = a::tensor(attentionOutOut, "attentionOutOut")?;
            floyd_check(&q, &k1, &v1, &k2, &v2, mk.as_ref())?;
            floyd_stat(&smax, &q)?;
            floyd_stat(&ssum, &q)?;
            same_dtype(&out, &q)?;
            a::same_shape(&out, q.shape())?;
            let mut l = Launch::new("aclnnFusedFloydAttention");
            for t in [&q, &k1, &v1, &k2, &v2] {
                l.input(t);
            }
            let im = mk.as_ref().map(|t| l.input(t));
            let o = l.output(&smax);
            l.output(&ssum);
            l.output(&out);
            l.finish(move |vs, _| {
                engine::fused_floyd_attention(
                    &vs[0],
                    &vs[1],
                    &vs[2],
                    &vs[3],
                    &vs[4],
                    im.map(|i| &vs[i]),
                    scaleValueOptional,
                    &vs[o],
                    &vs[o + 1],
                    &vs[o + 2],
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedFloydAttentionGradGetWorkspaceSize(
    query: *const c_void,
    key1: *const c_void,
    value1: *const c_void,
    key2: *const c_void,
    value2: *const c_void,
    dy: *const c_void,
    attenMaskOptional: *const c_void,
    softmaxMax: *const c_void,
    softmaxSum: *const c_void,
    attentionIn: *const c_void,
    scaleValueOptional: f64,
    dqOut: *const c_void,
    dk1Out: *const c_void,
    dv1Out: *const c_void,
    dk2Out: *const c_void,
    dv2Out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedFloydAttentionGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(query, "query")?;
            let k1 = a::tensor(key1, "key1")?;
            let v1 = a::tensor(value1, "value1")?;
            let k2 = a::tensor(key2, "key2")?;
            let v2 = a::tensor(value2, "value2")?;
            let g = a::tensor(dy, "dy")?;
            let mk = a::opt_tensor(attenMaskOptional, "attenMaskOptional")?;
            let smax = a::tensor(softmaxMax, "softmaxMax")?;
            let ssum = a::tensor(softmaxSum, "softmaxSum")?;
            let o = a::tensor(attentionIn, "attentionIn")?;
            let grads = [
                a::tensor(dqOut, "dqOut")?,
                a::tensor(dk1Out, "dk1Out")?,
                a::tensor(dv1Out, "dv1Out")?,
                a::tensor(dk2Out, "dk2Out")?,
                a::tensor(dv2Out, "dv2Out")?,
            ];
            floyd_check(&q, &k1, &v1, &k2, &v2, mk.as_ref())?;
            floyd_stat(&smax, &q)?;
            floyd_stat(&ssum, &q)?;
            for t in [&g, &o] {
                same_dtype(t, &q)?;
                a::same_shape(t, q.shape())?;
            }
            for (d, x) in grads.iter().zip([&q, &k1, &v1, &k2, &v2]) {
                same_dtype(d, x)?;
                a::same_shape(d, x.shape())?;
            }
            let mut l = Launch::new("aclnnFusedFloydAttentionGrad");
            for t in [&q, &k1, &v1, &k2, &v2, &g, &o] {
                l.input(t);
            }
            let im = mk.as_ref().map(|t| l.input(t));
            let go = l.output(&grads[0]);
            for t in &grads[1..] {
                l.output(t);
            }
            l.finish(move |vs, _| {
                engine::fused_floyd_attention_grad(
                    &vs[0],
                    &vs[1],
                    &vs[2],
                    &vs[3],
                    &vs[4],
                    &vs[5],
                    im.map(|i| &vs[i]),
                    &vs[6],
                    scaleValueOptional,
                    [&vs[go], &vs[go + 1], &vs[go + 2], &vs[go + 3], &vs[go + 4]],
                )
            })
        },
    )
}

crate::phase2!(aclnnFusedFloydAttention, aclnnFusedFloydAttentionGrad);
