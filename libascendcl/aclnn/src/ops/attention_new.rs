//! The newer attention operator versions: `aclnnFlashAttentionScoreV3` and
//! `aclnnFlashAttentionScoreGradV3` (`aclnn_flash_attention_score.h`,
//! `aclnn_flash_attention_score_grad.h`), `aclnnFlashAttentionVarLenScoreV5` and
//! `aclnnFlashAttentionUnpaddingScoreGradV5` (with their `GetMaxWorkspaceSize`), which add
//! the attention sink (`sinkOptional`/`sinkInOptional`, float32 `[headNum]`; the backward's
//! `dsinkOut`) to V2 and VarLenScoreV3/V4; and the `GetMaxWorkspaceSize` of
//! `aclnnFusedInferAttentionScoreV3`/`V4`. The shared checks are those of
//! [`super::fused`]; the computation is `npu_emu::ops::attention_new`.

use super::args::{self as a, T};
use super::fused::{check_stat, fa_check, out_shape, same_dtype, FaAttrs, VarLenArgs};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::attention_new as engine;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::fused::{FaSaved, VarLen};
use std::ffi::{c_char, c_void};

/// `sinkOptional`/`sinkInOptional`: float32 `[headNum]`; an empty tensor counts as absent
/// (as torch_npu may pass one).
fn sink_arg(h: *const c_void, arg: &'static str, head_num: i64) -> NnResult<Option<T>> {
    let Some(t) = a::opt_tensor(h, arg)?.filter(|t| t.numel() > 0) else {
        return Ok(None);
    };
    a::dtype_in(&t, &[DType::F32])?;
    if t.shape() != [head_num.max(0) as usize] {
        return Err(NnError::invalid(format!(
            "{arg} has shape {:?}; it takes one value per head: [headNum] = [{head_num}]",
            t.shape()
        )));
    }
    Ok(Some(t))
}

/// The forward with a sink: query, key, value, pse, dropout mask and attention mask
/// (`ins`), the sink, and softmaxMax, softmaxSum, softmaxOut and attentionOut (`outs`).
unsafe fn sink_forward(
    api: &'static str,
    ins: [*const c_void; 6],
    sink: *const c_void,
    at: &FaAttrs,
    vl: Option<VarLen>,
    outs: [*const c_void; 4],
) -> NnResult<Built> {
    let [query, key, value, real_shift, drop_mask, atten_mask] = ins;
    let q = a::tensor(query, "query")?;
    let k = a::tensor(key, "key")?;
    let v = a::tensor(value, "value")?;
    let pse = a::opt_tensor(real_shift, "realShiftOptional")?;
    let drop = a::opt_tensor(drop_mask, "dropMaskOptional")?;
    let mask = a::opt_tensor(atten_mask, "attenMaskOptional")?;
    let sk = sink_arg(sink, "sinkOptional", at.head_num)?;
    let smax = a::tensor(outs[0], "softmaxMaxOut")?;
    let ssum = a::tensor(outs[1], "softmaxSumOut")?;
    let _sout = a::opt_tensor(outs[2], "softmaxOutOut")?;
    let out = a::tensor(outs[3], "attentionOutOut")?;
    let fa = fa_check(
        &q,
        &k,
        &v,
        pse.as_ref(),
        drop.as_ref(),
        mask.as_ref(),
        at,
        vl,
    )?;
    check_stat(&smax, &fa)?;
    check_stat(&ssum, &fa)?;
    same_dtype(&out, &q)?;
    a::same_shape(&out, &out_shape(&fa))?;
    let mut l = Launch::new(api);
    l.input(&q);
    l.input(&k);
    l.input(&v);
    let opt = |t: &Option<T>, l: &mut Launch| t.as_ref().map(|t| l.input(t));
    let ip = opt(&pse, &mut l);
    let id = opt(&drop, &mut l);
    let im = opt(&mask, &mut l);
    let is = opt(&sk, &mut l);
    let o = l.output(&smax);
    l.output(&ssum);
    l.output(&out);
    let p = fa.p;
    l.finish(move |vs, _| {
        engine::flash_attention_sink(
            &vs[0],
            &vs[1],
            &vs[2],
            ip.map(|i| &vs[i]),
            id.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            is.map(|i| &vs[i]),
            &p,
            &vs[o],
            &vs[o + 1],
            &vs[o + 2],
        )
    })
}

/// The backward with a sink: query, keyIn, value, dy, pse, dropout mask, attention mask,
/// saved softmaxMax/softmaxSum and attentionIn (`ins`), the sink, and dqOut, dkOut, dvOut,
/// dpseOut, dsinkOut (`outs`).
unsafe fn sink_backward(
    api: &'static str,
    ins: [*const c_void; 10],
    sink: *const c_void,
    at: &FaAttrs,
    vl: Option<VarLen>,
    outs: [*const c_void; 5],
) -> NnResult<Built> {
    let [query, key_in, value, dy, pse_shift, drop_mask, atten_mask, softmax_max, softmax_sum, attention_in] =
        ins;
    let q = a::tensor(query, "query")?;
    let k = a::tensor(key_in, "keyIn")?;
    let v = a::tensor(value, "value")?;
    let g = a::tensor(dy, "dy")?;
    let pse = a::opt_tensor(pse_shift, "pseShiftOptional")?;
    let drop = a::opt_tensor(drop_mask, "dropMaskOptional")?;
    let mask = a::opt_tensor(atten_mask, "attenMaskOptional")?;
    let smax = a::opt_tensor(softmax_max, "softmaxMaxOptional")?;
    let ssum = a::opt_tensor(softmax_sum, "softmaxSumOptional")?;
    let ain = a::opt_tensor(attention_in, "attentionInOptional")?;
    let sk = sink_arg(sink, "sinkInOptional", at.head_num)?;
    let dq = a::tensor(outs[0], "dqOut")?;
    let dk = a::tensor(outs[1], "dkOut")?;
    let dv = a::tensor(outs[2], "dvOut")?;
    let dpse = a::opt_tensor(outs[3], "dpseOut")?.filter(|t| t.numel() > 0);
    let dsink = a::opt_tensor(outs[4], "dsinkOut")?.filter(|t| t.numel() > 0);
    let fa = fa_check(
        &q,
        &k,
        &v,
        pse.as_ref(),
        drop.as_ref(),
        mask.as_ref(),
        at,
        vl,
    )?;
    let oshape = out_shape(&fa);
    same_dtype(&g, &q)?;
    a::same_shape(&g, &oshape)?;
    let present = |t: &Option<T>| t.as_ref().filter(|t| t.numel() > 0).cloned();
    let (smax, ssum, ain) = (present(&smax), present(&ssum), present(&ain));
    if smax.is_some() != ssum.is_some() {
        return Err(NnError::invalid(
            "softmaxMaxOptional and softmaxSumOptional must be given together",
        ));
    }
    for t in [&smax, &ssum].into_iter().flatten() {
        check_stat(t, &fa)?;
    }
    if let Some(t) = &ain {
        same_dtype(t, &q)?;
        a::same_shape(t, &oshape)?;
    }
    for (o, like) in [(&dq, &q), (&dk, &k), (&dv, &v)] {
        same_dtype(o, like)?;
        a::same_shape(o, like.shape())?;
    }
    if let Some(t) = &dpse {
        match &pse {
            Some(ps) => a::same_shape(t, ps.shape())?,
            None => {
                return Err(NnError::invalid(
                    "dpseOut is given (non-empty) without pseShiftOptional",
                ))
            }
        }
    }
    if let Some(t) = &dsink {
        a::dtype_in(t, &[DType::F32])?;
        if sk.is_none() {
            return Err(NnError::invalid(
                "dsinkOut is given (non-empty) without sinkInOptional",
            ));
        }
        a::same_shape(t, &[fa.p.head_num])?;
    }
    let mut l = Launch::new(api);
    l.input(&q);
    l.input(&k);
    l.input(&v);
    l.input(&g);
    let opt = |t: &Option<T>, l: &mut Launch| t.as_ref().map(|t| l.input(t));
    let ip = opt(&pse, &mut l);
    let id = opt(&drop, &mut l);
    let im = opt(&mask, &mut l);
    let imx = opt(&smax, &mut l);
    let ism = opt(&ssum, &mut l);
    let iai = opt(&ain, &mut l);
    let is = opt(&sk, &mut l);
    let o = l.output(&dq);
    l.output(&dk);
    l.output(&dv);
    let idp = dpse.as_ref().map(|t| l.output(t));
    let ids = dsink.as_ref().map(|t| l.output(t));
    let p = fa.p;
    l.finish(move |vs, _| {
        let saved = FaSaved {
            softmax_max: imx.map(|i| &vs[i]),
            softmax_sum: ism.map(|i| &vs[i]),
            attention_in: iai.map(|i| &vs[i]),
        };
        let opt = engine::SinkGradOpt {
            pse: ip.map(|i| &vs[i]),
            drop_mask: id.map(|i| &vs[i]),
            atten_mask: im.map(|i| &vs[i]),
            sink: is.map(|i| &vs[i]),
        };
        engine::flash_attention_sink_grad(
            [&vs[0], &vs[1], &vs[2], &vs[3]],
            &opt,
            &saved,
            &p,
            [&vs[o], &vs[o + 1], &vs[o + 2]],
            idp.map(|i| &vs[i]),
            ids.map(|i| &vs[i]),
        )
    })
}

// ---------------------------------------------------------------- FlashAttentionScoreV3

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreV3GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    sinkOptional: *const c_void,
    prefixOptional: *const c_void,
    qStartIdxOptional: *const c_void,
    kvStartIdxOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    pseType: i64,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    softmaxOutOut: *const c_void,
    attentionOutOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (paddingMaskOptional, innerPrecise);
    let at = FaAttrs {
        scale: scaleValue,
        keep_prob: keepProb,
        pre: preTokens,
        next: nextTokens,
        head_num: headNum,
        layout: inputLayout,
        sparse: sparseMode,
        pse_type: pseType,
        prefix: prefixOptional,
    };
    phase1(
        "aclnnFlashAttentionScoreV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            // prefix: sparse mode 5/6 (rejected by the shared checks); the start indices
            // place the generated pse of pseType 2/3 (rejected there too)
            a::opt_int_array(prefixOptional, "prefixOptional")?;
            a::opt_int_array(qStartIdxOptional, "qStartIdxOptional")?;
            a::opt_int_array(kvStartIdxOptional, "kvStartIdxOptional")?;
            sink_forward(
                "aclnnFlashAttentionScoreV3",
                [
                    query,
                    key,
                    value,
                    realShiftOptional,
                    dropMaskOptional,
                    attenMaskOptional,
                ],
                sinkOptional,
                &at,
                None,
                [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreGradV3GetWorkspaceSize(
    query: *const c_void,
    keyIn: *const c_void,
    value: *const c_void,
    dy: *const c_void,
    pseShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    softmaxMaxOptional: *const c_void,
    softmaxSumOptional: *const c_void,
    softmaxInOptional: *const c_void,
    attentionInOptional: *const c_void,
    sinkInOptional: *const c_void,
    prefixOptional: *const c_void,
    qStartIdxOptional: *const c_void,
    kvStartIdxOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    pseType: i64,
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    dpseOut: *const c_void,
    dsinkOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (paddingMaskOptional, innerPrecise, softmaxInOptional);
    let at = FaAttrs {
        scale: scaleValue,
        keep_prob: keepProb,
        pre: preTokens,
        next: nextTokens,
        head_num: headNum,
        layout: inputLayout,
        sparse: sparseMode,
        pse_type: pseType,
        prefix: prefixOptional,
    };
    let ins = [
        query,
        keyIn,
        value,
        dy,
        pseShiftOptional,
        dropMaskOptional,
        attenMaskOptional,
        softmaxMaxOptional,
        softmaxSumOptional,
        attentionInOptional,
    ];
    phase1(
        "aclnnFlashAttentionScoreGradV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            a::opt_int_array(prefixOptional, "prefixOptional")?;
            a::opt_int_array(qStartIdxOptional, "qStartIdxOptional")?;
            a::opt_int_array(kvStartIdxOptional, "kvStartIdxOptional")?;
            sink_backward(
                "aclnnFlashAttentionScoreGradV3",
                ins,
                sinkInOptional,
                &at,
                None,
                [dqOut, dkOut, dvOut, dpseOut, dsinkOut],
            )
        },
    )
}

// ---------------------------------------------------------------- VarLenScoreV5 (TND)

/// aclnnFlashAttentionVarLenScoreV5 and its GetMaxWorkspaceSize (the same checks: the
/// emulator's workspace does not depend on the sequence lengths).
#[allow(clippy::too_many_arguments)]
unsafe fn varlen_v5(
    name: &'static str,
    ins: [*const c_void; 6],
    rope: [*const c_void; 2],
    sink: *const c_void,
    host: [*const c_void; 5],
    at: &FaAttrs,
    softmax_layout: *const c_char,
    outs: [*const c_void; 4],
    ws: (*mut u64, *mut *mut c_void),
) -> i32 {
    let [prefix, q_lens, kv_lens, q_start, kv_start] = host;
    let va = VarLenArgs {
        prefix,
        q_lens,
        kv_lens,
        q_start,
        kv_start,
        softmax_layout,
        rope: [(rope[0], "queryRope"), (rope[1], "keyRope")],
    };
    phase1(name, ws.0, ws.1, || {
        let vl = va.read()?;
        sink_forward(
            "aclnnFlashAttentionVarLenScoreV5",
            ins,
            sink,
            at,
            Some(vl),
            outs,
        )
    })
}

macro_rules! varlen_v5_fn {
    ($name:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            query: *const c_void,
            queryRope: *const c_void,
            key: *const c_void,
            keyRope: *const c_void,
            value: *const c_void,
            realShiftOptional: *const c_void,
            dropMaskOptional: *const c_void,
            paddingMaskOptional: *const c_void,
            attenMaskOptional: *const c_void,
            sinkOptional: *const c_void,
            prefixOptional: *const c_void,
            actualSeqQLenOptional: *const c_void,
            actualSeqKvLenOptional: *const c_void,
            qStartIdxOptional: *const c_void,
            kvStartIdxOptional: *const c_void,
            scaleValue: f64,
            keepProb: f64,
            preTokens: i64,
            nextTokens: i64,
            headNum: i64,
            inputLayout: *mut c_char,
            innerPrecise: i64,
            sparseMode: i64,
            pseType: i64,
            softmaxOutLayout: *mut c_char,
            softmaxMaxOut: *const c_void,
            softmaxSumOut: *const c_void,
            softmaxOutOut: *const c_void,
            attentionOutOut: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            let _ = (paddingMaskOptional, innerPrecise);
            let at = FaAttrs {
                scale: scaleValue,
                keep_prob: keepProb,
                pre: preTokens,
                next: nextTokens,
                head_num: headNum,
                layout: inputLayout,
                sparse: sparseMode,
                pse_type: pseType,
                prefix: prefixOptional,
            };
            varlen_v5(
                stringify!($name),
                [
                    query,
                    key,
                    value,
                    realShiftOptional,
                    dropMaskOptional,
                    attenMaskOptional,
                ],
                [queryRope, keyRope],
                sinkOptional,
                [
                    prefixOptional,
                    actualSeqQLenOptional,
                    actualSeqKvLenOptional,
                    qStartIdxOptional,
                    kvStartIdxOptional,
                ],
                &at,
                softmaxOutLayout,
                [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
                (workspaceSize, executor),
            )
        }
    };
}

varlen_v5_fn!(aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize);
varlen_v5_fn!(aclnnFlashAttentionVarLenScoreV5GetMaxWorkspaceSize);

/// aclnnFlashAttentionUnpaddingScoreGradV5 and its GetMaxWorkspaceSize.
#[allow(clippy::too_many_arguments)]
unsafe fn unpadding_grad_v5(
    name: &'static str,
    ins: [*const c_void; 10],
    rope: [*const c_void; 2],
    sink: *const c_void,
    host: [*const c_void; 5],
    at: &FaAttrs,
    softmax_layout: *const c_char,
    rope_outs: [*const c_void; 2],
    outs: [*const c_void; 5],
    ws: (*mut u64, *mut *mut c_void),
) -> i32 {
    let [prefix, q_lens, kv_lens, q_start, kv_start] = host;
    let va = VarLenArgs {
        prefix,
        q_lens,
        kv_lens,
        q_start,
        kv_start,
        softmax_layout,
        rope: [(rope[0], "queryRope"), (rope[1], "keyInRope")],
    };
    phase1(name, ws.0, ws.1, || {
        let vl = va.read()?;
        // without rope inputs the rope gradients are empty (torch_npu passes `{0}` tensors)
        for (h, arg) in [(rope_outs[0], "dqRopeOut"), (rope_outs[1], "dkRopeOut")] {
            if a::opt_tensor(h, arg)?.is_some_and(|t| t.numel() > 0) {
                return Err(NnError::invalid(format!(
                    "{arg} is non-empty; npu-emu takes no queryRope/keyInRope, so it must be \
                     empty or nullptr"
                )));
            }
        }
        sink_backward(
            "aclnnFlashAttentionUnpaddingScoreGradV5",
            ins,
            sink,
            at,
            Some(vl),
            outs,
        )
    })
}

macro_rules! unpadding_grad_v5_fn {
    ($name:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            query: *const c_void,
            queryRope: *const c_void,
            keyIn: *const c_void,
            keyInRope: *const c_void,
            value: *const c_void,
            dy: *const c_void,
            pseShiftOptional: *const c_void,
            dropMaskOptional: *const c_void,
            paddingMaskOptional: *const c_void,
            attenMaskOptional: *const c_void,
            softmaxMaxOptional: *const c_void,
            softmaxSumOptional: *const c_void,
            softmaxInOptional: *const c_void,
            attentionInOptional: *const c_void,
            sinkInOptional: *const c_void,
            prefixOptional: *const c_void,
            actualSeqQLenOptional: *const c_void,
            actualSeqKvLenOptional: *const c_void,
            qStartIdxOptional: *const c_void,
            kvStartIdxOptional: *const c_void,
            scaleValue: f64,
            keepProb: f64,
            preTokens: i64,
            nextTokens: i64,
            headNum: i64,
            inputLayout: *mut c_char,
            innerPrecise: i64,
            sparseMode: i64,
            pseType: i64,
            softmaxInLayout: *mut c_char,
            dqOut: *const c_void,
            dqRopeOut: *const c_void,
            dkOut: *const c_void,
            dkRopeOut: *const c_void,
            dvOut: *const c_void,
            dpseOut: *const c_void,
            dsinkOut: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            let _ = (paddingMaskOptional, innerPrecise, softmaxInOptional);
            let at = FaAttrs {
                scale: scaleValue,
                keep_prob: keepProb,
                pre: preTokens,
                next: nextTokens,
                head_num: headNum,
                layout: inputLayout,
                sparse: sparseMode,
                pse_type: pseType,
                prefix: prefixOptional,
            };
            unpadding_grad_v5(
                stringify!($name),
                [
                    query,
                    keyIn,
                    value,
                    dy,
                    pseShiftOptional,
                    dropMaskOptional,
                    attenMaskOptional,
                    softmaxMaxOptional,
                    softmaxSumOptional,
                    attentionInOptional,
                ],
                [queryRope, keyInRope],
                sinkInOptional,
                [
                    prefixOptional,
                    actualSeqQLenOptional,
                    actualSeqKvLenOptional,
                    qStartIdxOptional,
                    kvStartIdxOptional,
                ],
                &at,
                softmaxInLayout,
                [dqRopeOut, dkRopeOut],
                [dqOut, dkOut, dvOut, dpseOut, dsinkOut],
                (workspaceSize, executor),
            )
        }
    };
}

unpadding_grad_v5_fn!(aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize);
unpadding_grad_v5_fn!(aclnnFlashAttentionUnpaddingScoreGradV5GetMaxWorkspaceSize);

crate::phase2!(
    aclnnFlashAttentionScoreV3,
    aclnnFlashAttentionScoreGradV3,
    aclnnFlashAttentionVarLenScoreV5,
    aclnnFlashAttentionUnpaddingScoreGradV5
);

// ---------------------------------------------------------------- FusedInferAttentionScore V3/V4

/// The largest workspace `aclnnFusedInferAttentionScoreV3` may need for these arguments
/// (torch_npu asks it before capturing a graph): npu-emu's does not depend on the actual
/// lengths, so it is the phase-1 call's, with the same checks.
#[no_mangle]
pub unsafe extern "C" fn aclnnFusedInferAttentionScoreV3GetMaxWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShiftOptional: *const c_void,
    attenMaskOptional: *const c_void,
    actualSeqLengthsOptional: *const c_void,
    actualSeqLengthsKvOptional: *const c_void,
    deqScale1Optional: *const c_void,
    quantScale1Optional: *const c_void,
    deqScale2Optional: *const c_void,
    quantScale2Optional: *const c_void,
    quantOffset2Optional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    blockTableOptional: *const c_void,
    queryPaddingSizeOptional: *const c_void,
    kvPaddingSizeOptional: *const c_void,
    keyAntiquantScaleOptional: *const c_void,
    keyAntiquantOffsetOptional: *const c_void,
    valueAntiquantScaleOptional: *const c_void,
    valueAntiquantOffsetOptional: *const c_void,
    keySharedPrefixOptional: *const c_void,
    valueSharedPrefixOptional: *const c_void,
    actualSharedPrefixLenOptional: *const c_void,
    queryRopeOptional: *const c_void,
    keyRopeOptional: *const c_void,
    keyRopeAntiquantScaleOptional: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    preTokens: i64,
    nextTokens: i64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    sparseMode: i64,
    innerPrecise: i64,
    blockSize: i64,
    antiquantMode: i64,
    softmaxLseFlag: bool,
    keyAntiquantMode: i64,
    valueAntiquantMode: i64,
    attentionOut: *const c_void,
    softmaxLse: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    super::fused::aclnnFusedInferAttentionScoreV3GetWorkspaceSize(
        query,
        key,
        value,
        pseShiftOptional,
        attenMaskOptional,
        actualSeqLengthsOptional,
        actualSeqLengthsKvOptional,
        deqScale1Optional,
        quantScale1Optional,
        deqScale2Optional,
        quantScale2Optional,
        quantOffset2Optional,
        antiquantScaleOptional,
        antiquantOffsetOptional,
        blockTableOptional,
        queryPaddingSizeOptional,
        kvPaddingSizeOptional,
        keyAntiquantScaleOptional,
        keyAntiquantOffsetOptional,
        valueAntiquantScaleOptional,
        valueAntiquantOffsetOptional,
        keySharedPrefixOptional,
        valueSharedPrefixOptional,
        actualSharedPrefixLenOptional,
        queryRopeOptional,
        keyRopeOptional,
        keyRopeAntiquantScaleOptional,
        numHeads,
        scaleValue,
        preTokens,
        nextTokens,
        inputLayout,
        numKeyValueHeads,
        sparseMode,
        innerPrecise,
        blockSize,
        antiquantMode,
        softmaxLseFlag,
        keyAntiquantMode,
        valueAntiquantMode,
        attentionOut,
        softmaxLse,
        workspaceSize,
        executor,
    )
}

/// The largest workspace `aclnnFusedInferAttentionScoreV4` may need for these arguments
/// (torch_npu asks it before capturing a graph): npu-emu's does not depend on the actual
/// lengths, so it is the phase-1 call's, with the same checks.
#[no_mangle]
pub unsafe extern "C" fn aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShiftOptional: *const c_void,
    attenMaskOptional: *const c_void,
    actualSeqLengthsOptional: *const c_void,
    actualSeqLengthsKvOptional: *const c_void,
    deqScale1Optional: *const c_void,
    quantScale1Optional: *const c_void,
    deqScale2Optional: *const c_void,
    quantScale2Optional: *const c_void,
    quantOffset2Optional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    blockTableOptional: *const c_void,
    queryPaddingSizeOptional: *const c_void,
    kvPaddingSizeOptional: *const c_void,
    keyAntiquantScaleOptional: *const c_void,
    keyAntiquantOffsetOptional: *const c_void,
    valueAntiquantScaleOptional: *const c_void,
    valueAntiquantOffsetOptional: *const c_void,
    keySharedPrefixOptional: *const c_void,
    valueSharedPrefixOptional: *const c_void,
    actualSharedPrefixLenOptional: *const c_void,
    queryRopeOptional: *const c_void,
    keyRopeOptional: *const c_void,
    keyRopeAntiquantScaleOptional: *const c_void,
    dequantScaleQueryOptional: *const c_void,
    learnableSinkOptional: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    preTokens: i64,
    nextTokens: i64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    sparseMode: i64,
    innerPrecise: i64,
    blockSize: i64,
    antiquantMode: i64,
    softmaxLseFlag: bool,
    keyAntiquantMode: i64,
    valueAntiquantMode: i64,
    queryQuantMode: i64,
    attentionOut: *const c_void,
    softmaxLse: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    super::fused::aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
        query,
        key,
        value,
        pseShiftOptional,
        attenMaskOptional,
        actualSeqLengthsOptional,
        actualSeqLengthsKvOptional,
        deqScale1Optional,
        quantScale1Optional,
        deqScale2Optional,
        quantScale2Optional,
        quantOffset2Optional,
        antiquantScaleOptional,
        antiquantOffsetOptional,
        blockTableOptional,
        queryPaddingSizeOptional,
        kvPaddingSizeOptional,
        keyAntiquantScaleOptional,
        keyAntiquantOffsetOptional,
        valueAntiquantScaleOptional,
        valueAntiquantOffsetOptional,
        keySharedPrefixOptional,
        valueSharedPrefixOptional,
        actualSharedPrefixLenOptional,
        queryRopeOptional,
        keyRopeOptional,
        keyRopeAntiquantScaleOptional,
        dequantScaleQueryOptional,
        learnableSinkOptional,
        numHeads,
        scaleValue,
        preTokens,
        nextTokens,
        inputLayout,
        numKeyValueHeads,
        sparseMode,
        innerPrecise,
        blockSize,
        antiquantMode,
        softmaxLseFlag,
        keyAntiquantMode,
        valueAntiquantMode,
        queryQuantMode,
        attentionOut,
        softmaxLse,
        workspaceSize,
        executor,
    )
}

// ---------------------------------------------------------------- NSA compress

/// The checked shape of an NSA compress call: the sequence ends, block, stride and the
/// compressed row count.
struct Nsa {
    ends: Vec<usize>,
    block: usize,
    stride: usize,
    rows: usize,
}

/// Checks of `aclnnNsaCompress`/`…Grad` (CANN's constraints): input FLOAT16/BFLOAT16
/// `[T, N, D]` (N ≤ 128, D a multiple of 16 up to 256), weight the same dtype `[block, N]`,
/// block a multiple of 16 up to 128, stride a multiple of 16 no larger than block, layout
/// TND (or null), actSeqLenType 0 (cumulative lengths, required, ending at T).
#[allow(clippy::too_many_arguments)]
fn nsa_check(
    x: &T,
    w: &T,
    seq: *const c_void,
    seq_arg: &'static str,
    layout: *const c_char,
    block: i64,
    stride: i64,
    seq_type: i64,
) -> NnResult<Nsa> {
    a::dtype_in(x, &[DType::F16, DType::BF16])?;
    same_dtype(w, x)?;
    if x.ndim() != 3 || x.numel() == 0 {
        return Err(NnError::invalid(format!(
            "input has shape {:?}; it takes a non-empty [T, N, D]",
            x.shape()
        )));
    }
    let (t, n, d) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    if n > 128 || d > 256 || !d.is_multiple_of(16) {
        return Err(NnError::invalid(format!(
            "input [T, N, D] = {:?}: N must be at most 128 and D a multiple of 16 up to 256",
            x.shape()
        )));
    }
    if !layout.is_null() {
        // SAFETY: a NUL-terminated C string from the caller.
        let l = unsafe { std::ffi::CStr::from_ptr(layout) }.to_string_lossy();
        if l != "TND" {
            return Err(NnError::invalid(format!(
                "layout \"{l}\" is not supported; only TND is"
            )));
        }
    }
    if !(16..=128).contains(&block) || block % 16 != 0 {
        return Err(NnError::invalid(format!(
            "compressBlockSize {block} must be a multiple of 16 from 16 to 128"
        )));
    }
    if stride <= 0 || stride % 16 != 0 || stride > block {
        return Err(NnError::invalid(format!(
            "compressStride {stride} must be a positive multiple of 16 no larger than \
             compressBlockSize {block}"
        )));
    }
    if seq_type != 0 {
        return Err(NnError::invalid(format!(
            "actSeqLenType {seq_type} is not supported; only 0 (cumulative lengths) is"
        )));
    }
    if w.shape() != [block as usize, n] {
        return Err(NnError::invalid(format!(
            "weight has shape {:?}; it takes [compressBlockSize, N] = [{block}, {n}]",
            w.shape()
        )));
    }
    let Some(v) = a::opt_int_array(seq, seq_arg)? else {
        return Err(NnError::nullptr(format!(
            "{seq_arg} is nullptr; the cumulative sequence lengths are required"
        )));
    };
    if v.is_empty()
        || v[0] < 0
        || v.windows(2).any(|p| p[1] < p[0])
        || v.last() != Some(&(t as i64))
    {
        return Err(NnError::invalid(format!(
            "{seq_arg} {v:?} must be cumulative (non-negative, non-decreasing) and end at T = {t}"
        )));
    }
    let ends: Vec<usize> = v.iter().map(|&e| e as usize).collect();
    let (block, stride) = (block as usize, stride as usize);
    let mut prev = 0;
    let rows = ends
        .iter()
        .map(|&e| {
            let len = e - prev;
            prev = e;
            engine::nsa_blocks(len, block, stride)
        })
        .sum();
    Ok(Nsa {
        ends,
        block,
        stride,
        rows,
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNsaCompressGetWorkspaceSize(
    input: *const c_void,
    weight: *const c_void,
    actSeqLenOptional: *const c_void,
    layoutOptional: *mut c_char,
    compressBlockSize: i64,
    compressStride: i64,
    actSeqLenType: i64,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNsaCompressGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let w = a::tensor(weight, "weight")?;
            let o = a::tensor(output, "output")?;
            let c = nsa_check(
                &x,
                &w,
                actSeqLenOptional,
                "actSeqLenOptional",
                layoutOptional,
                compressBlockSize,
                compressStride,
                actSeqLenType,
            )?;
            same_dtype(&o, &x)?;
            a::same_shape(&o, &[c.rows, x.shape()[1], x.shape()[2]])?;
            let mut l = Launch::new("aclnnNsaCompress");
            l.input(&x);
            l.input(&w);
            l.output(&o);
            l.finish(move |vs, _| {
                engine::nsa_compress(&vs[0], &vs[1], &c.ends, c.block, c.stride, &vs[2])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNsaCompressGradGetWorkspaceSize(
    outputGrad: *const c_void,
    input: *const c_void,
    weight: *const c_void,
    actSeqLenOptionalOptional: *const c_void,
    compressBlockSize: i64,
    compressStride: i64,
    actSeqLenType: i64,
    layoutOptionalOptional: *mut c_char,
    inputGradOut: *const c_void,
    weightGradOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNsaCompressGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(outputGrad, "outputGrad")?;
            let x = a::tensor(input, "input")?;
            let w = a::tensor(weight, "weight")?;
            let dx = a::tensor(inputGradOut, "inputGradOut")?;
            let dw = a::tensor(weightGradOut, "weightGradOut")?;
            let c = nsa_check(
                &x,
                &w,
                actSeqLenOptionalOptional,
                "actSeqLenOptionalOptional",
                layoutOptionalOptional,
                compressBlockSize,
                compressStride,
                actSeqLenType,
            )?;
            same_dtype(&g, &x)?;
            a::same_shape(&g, &[c.rows, x.shape()[1], x.shape()[2]])?;
            same_dtype(&dx, &x)?;
            a::same_shape(&dx, x.shape())?;
            same_dtype(&dw, &w)?;
            a::same_shape(&dw, w.shape())?;
            let mut l = Launch::new("aclnnNsaCompressGrad");
            l.input(&g);
            l.input(&x);
            l.input(&w);
            l.output(&dx);
            l.output(&dw);
            l.finish(move |vs, _| {
                engine::nsa_compress_grad(
                    &vs[0], &vs[1], &vs[2], &c.ends, c.block, c.stride, &vs[3], &vs[4],
                )
            })
        },
    )
}

crate::phase2!(aclnnNsaCompress, aclnnNsaCompressGrad);

// ---------------------------------------------------------------- FlashAttentionScoreV4

/// The inputs V4/GradV4 add that npu-emu does not model (rope split of query/key, the FP8
/// dequantisation scales): each must be null or empty.
fn v4_unmodelled(args: &[(*const c_void, &'static str)]) -> NnResult<()> {
    for &(h, arg) in args {
        if a::opt_tensor(h, arg)?.is_some_and(|t| t.numel() > 0) {
            return Err(NnError::invalid(format!(
                "{arg} is not supported by npu-emu (no rope split or FP8 scales); pass nullptr"
            )));
        }
    }
    Ok(())
}

/// V4's layout choice: TND reads the sequences (and the softmax layout), every other layout
/// the V2 host arguments.
fn v4_varlen(layout: *const c_char, va: &VarLenArgs) -> NnResult<Option<VarLen>> {
    // SAFETY: a NUL-terminated C string from the caller (null is reported by fa_check).
    let tnd = !layout.is_null() && unsafe { std::ffi::CStr::from_ptr(layout) }.to_bytes() == b"TND";
    if tnd {
        return Ok(Some(va.read()?));
    }
    a::opt_int_array(va.prefix, "prefixOptional")?;
    a::opt_int_array(va.q_start, "qStartIdxOptional")?;
    a::opt_int_array(va.kv_start, "kvStartIdxOptional")?;
    Ok(None)
}

/// `aclnnFlashAttentionScoreV4` (one entry for every layout; TND with the actual lengths):
/// V3/VarLenScoreV5 with the rope and FP8 inputs, `outDtype`, `seed` and `offset` of the
/// Ascend950 kernels. npu-emu takes the dropout from `dropMaskOptional` (seed/offset are read
/// and unused; keepProb < 1 without a mask is rejected), and attentionOut has query's dtype
/// (`outDtype` only selects the FP8 output, not modelled).
#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreV4GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    queryRopeOptional: *const c_void,
    keyRopeOptional: *const c_void,
    dScaleQOptional: *const c_void,
    dScaleKOptional: *const c_void,
    dScaleVOptional: *const c_void,
    sinkOptional: *const c_void,
    prefixOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    qStartIdxOptional: *const c_void,
    kvStartIdxOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    outDtype: i64,
    pseType: i64,
    softmaxOutLayout: *mut c_char,
    seed: i64,
    offset: i64,
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    softmaxOutOut: *const c_void,
    attentionOutOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (paddingMaskOptional, innerPrecise, outDtype, seed, offset);
    let at = FaAttrs {
        scale: scaleValue,
        keep_prob: keepProb,
        pre: preTokens,
        next: nextTokens,
        head_num: headNum,
        layout: inputLayout,
        sparse: sparseMode,
        pse_type: pseType,
        prefix: prefixOptional,
    };
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: qStartIdxOptional,
        kv_start: kvStartIdxOptional,
        softmax_layout: softmaxOutLayout,
        rope: [
            (queryRopeOptional, "queryRopeOptional"),
            (keyRopeOptional, "keyRopeOptional"),
        ],
    };
    phase1(
        "aclnnFlashAttentionScoreV4GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            v4_unmodelled(&[
                (queryRopeOptional, "queryRopeOptional"),
                (keyRopeOptional, "keyRopeOptional"),
                (dScaleQOptional, "dScaleQOptional"),
                (dScaleKOptional, "dScaleKOptional"),
                (dScaleVOptional, "dScaleVOptional"),
            ])?;
            let vl = v4_varlen(inputLayout, &va)?;
            sink_forward(
                "aclnnFlashAttentionScoreV4",
                [
                    query,
                    key,
                    value,
                    realShiftOptional,
                    dropMaskOptional,
                    attenMaskOptional,
                ],
                sinkOptional,
                &at,
                vl,
                [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
            )
        },
    )
}

/// `aclnnFlashAttentionScoreGradV4`: GradV3/UnpaddingScoreGradV5 in one entry, with the
/// unmodelled rope and FP8 inputs null and dqRopeOut/dkRopeOut empty.
#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreGradV4GetWorkspaceSize(
    query: *const c_void,
    keyIn: *const c_void,
    value: *const c_void,
    dy: *const c_void,
    pseShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    softmaxMaxOptional: *const c_void,
    softmaxSumOptional: *const c_void,
    softmaxInOptional: *const c_void,
    attentionInOptional: *const c_void,
    sinkInOptional: *const c_void,
    queryRopeOptional: *const c_void,
    keyRopeOptional: *const c_void,
    dScaleQOptional: *const c_void,
    dScaleKOptional: *const c_void,
    dScaleVOptional: *const c_void,
    dScaleDyOptional: *const c_void,
    dScaleOOptional: *const c_void,
    prefixOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    qStartIdxOptional: *const c_void,
    kvStartIdxOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    softmaxInLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    pseType: i64,
    seed: i64,
    offset: i64,
    outDtype: i64,
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    dqRopeOut: *const c_void,
    dkRopeOut: *const c_void,
    dpseOut: *const c_void,
    dsinkOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (
        paddingMaskOptional,
        innerPrecise,
        softmaxInOptional,
        seed,
        offset,
        outDtype,
    );
    let at = FaAttrs {
        scale: scaleValue,
        keep_prob: keepProb,
        pre: preTokens,
        next: nextTokens,
        head_num: headNum,
        layout: inputLayout,
        sparse: sparseMode,
        pse_type: pseType,
        prefix: prefixOptional,
    };
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: qStartIdxOptional,
        kv_start: kvStartIdxOptional,
        softmax_layout: softmaxInLayout,
        rope: [
            (queryRopeOptional, "queryRopeOptional"),
            (keyRopeOptional, "keyRopeOptional"),
        ],
    };
    let ins = [
        query,
        keyIn,
        value,
        dy,
        pseShiftOptional,
        dropMaskOptional,
        attenMaskOptional,
        softmaxMaxOptional,
        softmaxSumOptional,
        attentionInOptional,
    ];
    phase1(
        "aclnnFlashAttentionScoreGradV4GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            v4_unmodelled(&[
                (queryRopeOptional, "queryRopeOptional"),
                (keyRopeOptional, "keyRopeOptional"),
                (dScaleQOptional, "dScaleQOptional"),
                (dScaleKOptional, "dScaleKOptional"),
                (dScaleVOptional, "dScaleVOptional"),
                (dScaleDyOptional, "dScaleDyOptional"),
                (dScaleOOptional, "dScaleOOptional"),
                (dqRopeOut, "dqRopeOut"),
                (dkRopeOut, "dkRopeOut"),
            ])?;
            let vl = v4_varlen(inputLayout, &va)?;
            sink_backward(
                "aclnnFlashAttentionScoreGradV4",
                ins,
                sinkInOptional,
                &at,
                vl,
                [dqOut, dkOut, dvOut, dpseOut, dsinkOut],
            )
        },
    )
}

crate::phase2!(aclnnFlashAttentionScoreV4, aclnnFlashAttentionScoreGradV4);
