//! `aclnn_attention_update.h` (`torch_npu.npu_attention_update`), `aclnn_kv_rms_norm_rope_cache.h`
//! (`npu_kv_rmsnorm_rope_cache`), and the vocabulary-parallel cross entropy of
//! `aclnn_fused_linear_online_max_sum.h`, `aclnn_fused_cross_entropy_loss_with_max_sum.h` and
//! `aclnn_fused_linear_cross_entropy_loss_grad.h` (`npu_fused_linear_online_max_sum`,
//! `npu_fused_cross_entropy_loss_with_max_sum`,
//! `npu_fused_linear_cross_entropy_loss_with_max_sum_backward`).
//!
//! Checks follow the reference pages and the op_api sources: null tensors 161001; data
//! types, shapes and attributes 161002, except KvRmsNormRopeCache whose shape rules are its
//! tiling's (561002, ACLNN_ERR_INNER_TILING_ERROR, as its page lists). The computation is
//! `npu_emu::ops::llm31`.

use super::args::{self as a, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::llm31 as engine;
use std::ffi::c_void;

/// `ACLNN_ERR_INNER_TILING_ERROR`: KvRmsNormRopeCache's code for shapes its tiling rejects.
const TILING: i32 = 561002;

fn invalid_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::invalid(msg()))
    } else {
        Ok(())
    }
}

fn tiling_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::new(TILING, msg()))
    } else {
        Ok(())
    }
}

fn dims_are(t: &T, n: usize) -> NnResult<()> {
    invalid_if(t.ndim() != n, || {
        format!("{} must be {n}-D, but it is {:?}", t.arg, t.shape())
    })
}

// ---------------------------------------------------------------------------------------------
// AttentionUpdate

/// The largest sequence-parallel degree the reference page allows.
const SP_MAX: usize = 16;

unsafe fn attention_update(
    lse: *const c_void,
    local_out: *const c_void,
    update_type: i64,
    out: *const c_void,
    lse_out: *const c_void,
) -> NnResult<Built> {
    if update_type == 0 && !lse_out.is_null() {
        return Err(NnError::invalid(
            "lseOut should be nullptr when updateType is 0",
        ));
    }
    if update_type == 1 && lse_out.is_null() {
        return Err(NnError::invalid(
            "lseOut should not be nullptr when updateType is 1",
        ));
    }
    invalid_if(update_type != 0 && update_type != 1, || {
        format!("updateType should be 0 or 1 but got {update_type}")
    })?;
    let ls = a::tensor_list(lse, "lse")?;
    let os = a::tensor_list(local_out, "localOut")?;
    let o = a::tensor(out, "out")?;
    let lo = a::opt_tensor(lse_out, "lseOut")?;
    for t in &ls {
        if t.numel() != 0 {
            a::dtype_in(t, &[DType::F32])?;
        }
    }
    for t in &os {
        if t.numel() != 0 {
            a::dtype_in(t, &[DType::F32, DType::F16, DType::BF16])?;
        }
    }
    a::dtype_in(&o, &[DType::F32, DType::F16, DType::BF16])?;
    if let Some(l) = &lo {
        a::dtype_in(l, &[DType::F32])?;
    }
    let sp = ls.len();
    invalid_if(sp == 0 || sp > SP_MAX, || {
        format!("Size of lse must be in [1, {SP_MAX}], but it is {sp}")
    })?;
    invalid_if(os.len() != sp, || {
        format!(
            "Size of lse: {sp} must equal to size of localOut: {}",
            os.len()
        )
    })?;
    dims_are(&ls[0], 1)?;
    dims_are(&os[0], 2)?;
    for i in 1..sp {
        invalid_if(ls[i].shape() != ls[0].shape(), || {
            "The shape of every tensor of lse must be same".into()
        })?;
        invalid_if(os[i].shape() != os[0].shape(), || {
            "The shape of every tensor of localOut must be same".into()
        })?;
    }
    let rows = ls[0].shape()[0];
    let hd = os[0].shape()[1];
    invalid_if(hd == 0 || hd % 8 != 0 || hd > 512, || {
        format!("headDim (localOut dim 1) must be a multiple of 8 in [8, 512], but it is {hd}")
    })?;
    invalid_if(os[0].shape()[0] != rows, || {
        format!(
            "Size of lse[0]: {rows} must equal to size of localOut[0]: {}",
            os[0].shape()[0]
        )
    })?;
    a::same_shape(&o, &[rows, hd])?;
    if let Some(l) = &lo {
        a::same_shape(l, &[rows])?;
    }
    let mut l = Launch::new("aclnnAttentionUpdate");
    let il = l.inputs(&ls);
    let io = l.inputs(&os);
    let oo = l.output(&o);
    let ol = lo.as_ref().map(|t| l.output(t));
    l.finish(move |v, _| {
        engine::attention_update(&v[il..il + sp], &v[io..io + sp], &v[oo], ol.map(|i| &v[i]))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAttentionUpdateGetWorkspaceSize(
    lse: *const c_void,
    localOut: *const c_void,
    updateType: i64,
    out: *const c_void,
    lseOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAttentionUpdateGetWorkspaceSize",
        workspaceSize,
        executor,
        || attention_update(lse, localOut, updateType, out, lseOut),
    )
}

// ---------------------------------------------------------------------------------------------
// KvRmsNormRopeCache

fn cache_mode(p: *const i8) -> NnResult<engine::CacheMode> {
    use engine::CacheMode as M;
    let s = if p.is_null() {
        "Norm".to_string()
    } else {
        // SAFETY: cacheModeOptional is a NUL-terminated C string by the API contract.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    };
    Ok(match s.as_str() {
        "Norm" | "" => M::Norm,
        "PA" | "PA_BNSD" => M::Pa,
        "PA_NZ" => M::PaNz,
        "PA_BLK_BNSD" => M::PaBlk,
        "PA_BLK_NZ" => M::PaBlkNz,
        _ => {
            return Err(NnError::invalid(format!(
                "cacheModeOptional '{s}' is not one of Norm, PA, PA_BNSD, PA_NZ, PA_BLK_BNSD, PA_BLK_NZ"
            )))
        }
    })
}

/// A quantization scale/offset: FLOAT `[1]`, `[D]` or `[N, D]`.
fn quant_shape(t: &T, n: usize, d: usize) -> NnResult<()> {
    a::dtype_in(t, &[DType::F32])?;
    let s = t.shape();
    tiling_if(!(s == [1] || s == [d] || s == [n, d]), || {
        format!("{} {:?} must be [1], [{d}] or [{n}, {d}]", t.arg, s)
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn kv_rms_norm_rope_cache(
    h: [*const c_void; 7],
    q: [*const c_void; 4],
    epsilon: f64,
    mode: *const i8,
    is_output_kv: bool,
    k_rope: *const c_void,
    c_kv: *const c_void,
) -> NnResult<Built> {
    let names = [
        "kv",
        "gamma",
        "cos",
        "sin",
        "index",
        "kCacheRef",
        "ckvCacheRef",
    ];
    let mut ts: Vec<T> = Vec::new();
    for (p, n) in h.iter().zip(names) {
        ts.push(a::tensor(*p, n)?);
    }
    let qn = [
        "kRopeScaleOptional",
        "ckvScaleOptional",
        "kRopeOffsetOptional",
        "cKvOffsetOptional",
    ];
    let mut qs: Vec<Option<T>> = Vec::new();
    for (p, n) in q.iter().zip(qn) {
        qs.push(a::opt_tensor(*p, n)?);
    }
    let kr = a::opt_tensor(k_rope, "kRopeOut")?;
    let ck = a::opt_tensor(c_kv, "cKvOut")?;
    if is_output_kv {
        invalid_if(kr.is_none() || ck.is_none(), || {
            "kRopeOut and cKvOut are required when isOutputKv is true".into()
        })?;
    }
    let m = cache_mode(mode)?;
    let [kv, gamma, cos, sin, index, kc, vc] = &ts[..] else {
        unreachable!()
    };
    let halfs = [DType::F16, DType::BF16];
    a::dtype_in(kv, &halfs)?;
    for t in [gamma, cos, sin] {
        a::same_dtype(t, kv)?;
    }
    a::dtype_in(index, &[DType::I64])?;
    for c in [kc, vc] {
        invalid_if(c.dtype() != kv.dtype() && c.dtype() != DType::I8, || {
            format!(
                "{} has data type {:?}; it must be kv's ({:?}) or INT8",
                c.arg,
                c.dtype(),
                kv.dtype()
            )
        })?;
    }
    for t in kr.iter().chain(ck.iter()) {
        a::same_dtype(t, kv)?;
    }
    // shapes (the tiling's rules)
    let t4 = |t: &T| {
        tiling_if(t.ndim() != 4, || {
            format!("{} must be 4-D, but it is {:?}", t.arg, t.shape())
        })
    };
    for t in [kv, cos, sin, kc, vc] {
        t4(t)?;
    }
    tiling_if(gamma.ndim() != 1, || {
        format!("gamma must be 1-D, but it is {:?}", gamma.shape())
    })?;
    let s = kv.shape();
    let (b, n, sq, d) = (s[0], s[1], s[2], s[3]);
    let dv = gamma.shape()[0];
    let dk = cos.shape()[3];
    tiling_if(dv + dk != d || dk % 2 != 0 || dk == 0, || {
        format!("gamma [Dv = {dv}] and cos [.., Dk = {dk}] must split kv's last dimension {d} (Dk even)")
    })?;
    let cs = cos.shape();
    tiling_if(
        cs[0] != b || cs[1] != 1 || (cs[2] != sq && cs[2] != 1),
        || format!("cos {cs:?} must be [{b}, 1, {sq}, {dk}] or [{b}, 1, 1, {dk}]"),
    )?;
    tiling_if(sin.shape() != cs, || {
        format!("sin {:?} must have cos's shape {cs:?}", sin.shape())
    })?;
    let (ks, vs) = (kc.shape(), vc.shape());
    tiling_if(ks[3] != dk || vs[3] != dv, || {
        format!("kCacheRef {ks:?} must end in Dk = {dk} and ckvCacheRef {vs:?} in Dv = {dv}")
    })?;
    use engine::CacheMode as M;
    match m {
        M::Norm => {
            tiling_if(
                ks[1] != n || vs[1] != n || ks[0] != vs[0] || ks[2] != vs[2],
                || {
                    format!("in Norm mode kCacheRef {ks:?} and ckvCacheRef {vs:?} must be [Bcache, {n}, Scache, D]")
                },
            )?;
            tiling_if(index.shape() != [b, sq], || {
                format!("index {:?} must be [{b}, {sq}] in Norm mode", index.shape())
            })?;
        }
        _ => {
            tiling_if(
                ks[2] != n || vs[2] != n || ks[0] != vs[0] || ks[1] != vs[1],
                || {
                    format!("in PA modes kCacheRef {ks:?} and ckvCacheRef {vs:?} must be [BlockNum, BlockSize, {n}, D]")
                },
            )?;
            let bs = ks[1];
            let align = |c: &T| if c.dtype() == DType::I8 { 32 } else { 16 };
            tiling_if(bs % align(kc) != 0 || bs % align(vc) != 0, || {
                format!("BlockSize {bs} must be 32-byte aligned for the caches' data types")
            })?;
            if matches!(m, M::PaNz | M::PaBlkNz) {
                tiling_if(dk % align(kc) != 0 || dv % align(vc) != 0, || {
                    format!("in NZ modes Dk {dk} and Dv {dv} must be 32-byte aligned for the caches' data types")
                })?;
            }
            let want = if matches!(m, M::PaBlk | M::PaBlkNz) {
                b * sq.div_ceil(bs)
            } else {
                b * sq
            };
            tiling_if(index.shape() != [want], || {
                format!(
                    "index {:?} must be [{want}] in this cache mode",
                    index.shape()
                )
            })?;
        }
    }
    let [ksc, vsc, kof, vof] = &qs[..] else {
        unreachable!()
    };
    for (c, sc, of, dd) in [(kc, ksc, kof, dk), (vc, vsc, vof, dv)] {
        if c.dtype() == DType::I8 {
            invalid_if(sc.is_none(), || {
                format!("{} is INT8, so its scale is required", c.arg)
            })?;
        }
        if let Some(t) = sc {
            quant_shape(t, n, dd)?;
        }
        if let Some(t) = of {
            quant_shape(t, n, dd)?;
        }
    }
    if let Some(t) = &kr {
        a::same_shape(t, &[b, n, sq, dk])?;
    }
    if let Some(t) = &ck {
        a::same_shape(t, &[b, n, sq, dv])?;
    }
    let mut l = Launch::new("aclnnKvRmsNormRopeCache");
    let iv: Vec<usize> = [kv, gamma, cos, sin, index]
        .iter()
        .map(|t| l.input(t))
        .collect();
    let quant_in = |t: &Option<T>, c: &T, l: &mut Launch| {
        if c.dtype() == DType::I8 {
            t.as_ref().map(|t| l.input(t))
        } else {
            None
        }
    };
    let iks = quant_in(ksc, kc, &mut l);
    let ivs = quant_in(vsc, vc, &mut l);
    let iko = if iks.is_some() {
        kof.as_ref().map(|t| l.input(t))
    } else {
        None
    };
    let ivo = if ivs.is_some() {
        vof.as_ref().map(|t| l.input(t))
    } else {
        None
    };
    let okc = l.output(kc);
    let ovc = l.output(vc);
    let (okr, ock) = if is_output_kv {
        (
            kr.as_ref().map(|t| l.output(t)),
            ck.as_ref().map(|t| l.output(t)),
        )
    } else {
        (None, None)
    };
    l.finish(move |v, _| {
        let kq = iks.map(|i| engine::Quant {
            scale: &v[i],
            offset: iko.map(|j| &v[j]),
        });
        let vq = ivs.map(|i| engine::Quant {
            scale: &v[i],
            offset: ivo.map(|j| &v[j]),
        });
        engine::kv_rms_norm_rope_cache(
            &v[iv[0]],
            &v[iv[1]],
            &v[iv[2]],
            &v[iv[3]],
            &v[iv[4]],
            &v[okc],
            &v[ovc],
            kq,
            vq,
            epsilon,
            m,
            okr.map(|i| &v[i]),
            ock.map(|i| &v[i]),
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnKvRmsNormRopeCacheGetWorkspaceSize(
    kv: *const c_void,
    gamma: *const c_void,
    cos: *const c_void,
    sin: *const c_void,
    index: *const c_void,
    kCacheRef: *const c_void,
    ckvCacheRef: *const c_void,
    kRopeScaleOptional: *const c_void,
    ckvScaleOptional: *const c_void,
    kRopeOffsetOptional: *const c_void,
    cKvOffsetOptional: *const c_void,
    epsilon: f64,
    cacheModeOptional: *const i8,
    isOutputKv: bool,
    kRopeOut: *const c_void,
    cKvOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnKvRmsNormRopeCacheGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            kv_rms_norm_rope_cache(
                [kv, gamma, cos, sin, index, kCacheRef, ckvCacheRef],
                [
                    kRopeScaleOptional,
                    ckvScaleOptional,
                    kRopeOffsetOptional,
                    cKvOffsetOptional,
                ],
                epsilon,
                cacheModeOptional,
                isOutputKv,
                kRopeOut,
                cKvOut,
            )
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Vocabulary-parallel cross entropy

#[allow(clippy::too_many_arguments)]
unsafe fn online_max_sum(
    input: *const c_void,
    weight: *const c_void,
    target: *const c_void,
    start: i64,
    end: i64,
    outs: [*const c_void; 5],
    logits: *const c_void,
) -> NnResult<Built> {
    let x = a::tensor(input, "input")?;
    let w = a::tensor(weight, "weight")?;
    let t = a::tensor(target, "target")?;
    let on = [
        "logitsMaxLocalOut",
        "sumExpLogitsLocalOut",
        "predictedLogitsLocalOut",
        "targetMaskOut",
        "maskedTargetOut",
    ];
    let mut os: Vec<T> = Vec::new();
    for (p, n) in outs.iter().zip(on) {
        os.push(a::tensor(*p, n)?);
    }
    let lg = a::opt_tensor(logits, "vocabParallelLogitsOutOptional")?;
    a::dtype_in(&x, &[DType::F16, DType::BF16])?;
    a::dtype_in(&w, &[DType::F16, DType::BF16])?;
    a::dtype_in(&t, &[DType::I32, DType::I64])?;
    a::same_dtype(&w, &x)?;
    for o in &os[..3] {
        a::dtype_in(o, &[DType::F32])?;
    }
    a::dtype_in(&os[3], &[DType::U8])?;
    a::same_dtype(&os[4], &t)?;
    if let Some(g) = &lg {
        a::same_dtype(g, &x)?;
    }
    dims_are(&x, 2)?;
    dims_are(&w, 2)?;
    dims_are(&t, 1)?;
    for o in &os {
        dims_are(o, 1)?;
    }
    let (m, k) = (x.shape()[0], x.shape()[1]);
    let v = w.shape()[0];
    invalid_if(v == 0, || "weight.size(0) should be greater than 0".into())?;
    invalid_if(k > 65534, || {
        format!("input.size(1) should be less than or equal to 65534, but got {k}")
    })?;
    invalid_if(w.shape()[1] != k, || {
        format!(
            "weight.size(1) should be equal to input.size(1), but got weight {:?}, input {:?}",
            w.shape(),
            x.shape()
        )
    })?;
    a::same_shape(&t, &[m])?;
    for (i, o) in os.iter().enumerate() {
        a::same_shape(o, &[if i == 3 { m.div_ceil(8) } else { m }])?;
    }
    if let Some(g) = &lg {
        dims_are(g, 2)?;
        a::same_shape(g, &[m, v])?;
    }
    invalid_if(start < 0, || {
        format!("vocabStartIndex should be greater than or equal to 0, but got {start}")
    })?;
    invalid_if(end < start, || {
        format!("vocabEndIndex should be greater than or equal to vocabStartIndex, but got vocabEndIndex {end}, vocabStartIndex {start}")
    })?;
    let mut l = Launch::new("aclnnFusedLinearOnlineMaxSum");
    let ix = l.input(&x);
    let iw = l.input(&w);
    let it = l.input(&t);
    let o0 = l.outputs(&os);
    let og = lg.as_ref().map(|g| l.output(g));
    l.finish(move |vw, _| {
        engine::fused_linear_online_max_sum(
            &vw[ix],
            &vw[iw],
            &vw[it],
            start,
            end,
            &vw[o0],
            &vw[o0 + 1],
            &vw[o0 + 2],
            &vw[o0 + 3],
            &vw[o0 + 4],
            og.map(|i| &vw[i]),
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnFusedLinearOnlineMaxSumGetWorkspaceSize(
    input: *const c_void,
    weight: *const c_void,
    target: *const c_void,
    vocabStartIndex: i64,
    vocabEndIndex: i64,
    logitsMaxLocalOut: *const c_void,
    sumExpLogitsLocalOut: *const c_void,
    predictedLogitsLocalOut: *const c_void,
    targetMaskOut: *const c_void,
    maskedTargetOut: *const c_void,
    vocabParallelLogitsOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedLinearOnlineMaxSumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            online_max_sum(
                input,
                weight,
                target,
                vocabStartIndex,
                vocabEndIndex,
                [
                    logitsMaxLocalOut,
                    sumExpLogitsLocalOut,
                    predictedLogitsLocalOut,
                    targetMaskOut,
                    maskedTargetOut,
                ],
                vocabParallelLogitsOutOptional,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn ce_with_max_sum(
    logits_max: *const c_void,
    sum_exp: *const c_void,
    predicted: *const c_void,
    label_smoothing: f32,
    input: *const c_void,
    weight: *const c_void,
    logits: *const c_void,
    loss: *const c_void,
    softmax: *const c_void,
) -> NnResult<Built> {
    let mx = a::tensor(logits_max, "logitsMax")?;
    let se = a::tensor(sum_exp, "sumExpLogits")?;
    let pr = a::tensor(predicted, "predictedLogits")?;
    let lo = a::tensor(loss, "lossOut")?;
    let lg = a::opt_tensor(logits, "vocabParallelLogitsOptional")?;
    let sm = a::opt_tensor(softmax, "softMaxOutOptional")?;
    if lg.is_some() && sm.is_none() {
        return Err(NnError::nullptr(
            "softMaxOutOptional is nullptr while vocabParallelLogitsOptional is given",
        ));
    }
    for t in [&mx, &se, &pr, &lo] {
        a::dtype_in(t, &[DType::F32])?;
    }
    if let (Some(g), Some(s)) = (&lg, &sm) {
        a::dtype_in(g, &[DType::F32, DType::F16, DType::BF16])?;
        a::dtype_in(s, &[DType::F32])?;
    }
    dims_are(&mx, 1)?;
    for t in [&se, &pr, &lo] {
        a::same_shape(t, mx.shape())?;
    }
    if let (Some(g), Some(s)) = (&lg, &sm) {
        dims_are(g, 2)?;
        invalid_if(g.shape()[0] != mx.shape()[0], || {
            format!(
                "vocabParallelLogitsOptional {:?} must have logitsMax's {} rows",
                g.shape(),
                mx.shape()[0]
            )
        })?;
        a::same_shape(s, g.shape())?;
    }
    invalid_if(label_smoothing != 0.0, || {
        "Currently, only labelSmoothing=0 are supported.".into()
    })?;
    invalid_if(!input.is_null() || !weight.is_null(), || {
        "inputOptional and weightOptional must be nullptr (only the given logits are supported)"
            .into()
    })?;
    let mut l = Launch::new("aclnnFusedCrossEntropyLossWithMaxSum");
    let (imx, ise, ipr) = (l.input(&mx), l.input(&se), l.input(&pr));
    let ig = match (&lg, &sm) {
        (Some(g), Some(_)) => Some(l.input(g)),
        _ => None,
    };
    let ol = l.output(&lo);
    let os = match (&lg, &sm) {
        (Some(_), Some(s)) => Some(l.output(s)),
        _ => None,
    };
    l.finish(move |v, _| {
        engine::fused_cross_entropy_loss_with_max_sum(
            &v[imx],
            &v[ise],
            &v[ipr],
            ig.map(|i| &v[i]),
            &v[ol],
            os.map(|i| &v[i]),
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnFusedCrossEntropyLossWithMaxSumGetWorkspaceSize(
    logitsMax: *const c_void,
    sumExpLogits: *const c_void,
    predictedLogits: *const c_void,
    labelSmoothing: f32,
    inputOptional: *const c_void,
    weightOptional: *const c_void,
    vocabParallelLogitsOptional: *const c_void,
    lossOut: *const c_void,
    softMaxOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedCrossEntropyLossWithMaxSumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            ce_with_max_sum(
                logitsMax,
                sumExpLogits,
                predictedLogits,
                labelSmoothing,
                inputOptional,
                weightOptional,
                vocabParallelLogitsOptional,
                lossOut,
                softMaxOutOptional,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn linear_ce_grad(
    grad: *const c_void,
    input: *const c_void,
    weight: *const c_void,
    target_mask: *const c_void,
    masked_target: *const c_void,
    label_smoothing: f32,
    opt: [*const c_void; 3],
    input_grad: *const c_void,
    weight_grad: *const c_void,
) -> NnResult<Built> {
    if opt[2].is_null() && (opt[0].is_null() || opt[1].is_null()) {
        return Err(NnError::nullptr(
            "softmaxOptional can not be nullptr when logitsMaxOptional or sumExpLogitsOptional is nullptr",
        ));
    }
    let g = a::tensor(grad, "grad")?;
    let x = a::tensor(input, "input")?;
    let w = a::tensor(weight, "weight")?;
    let tm = a::tensor(target_mask, "targetMask")?;
    let mt = a::tensor(masked_target, "maskedTarget")?;
    let gi = a::tensor(input_grad, "inputGradOut")?;
    let gw = a::tensor(weight_grad, "weightGradOut")?;
    let mx = a::opt_tensor(opt[0], "logitsMaxOptional")?;
    let se = a::opt_tensor(opt[1], "sumExpLogitsOptional")?;
    let sm = a::opt_tensor(opt[2], "softmaxOptional")?;
    a::dtype_in(&g, &[DType::F32])?;
    a::dtype_in(&x, &[DType::F16, DType::BF16])?;
    a::dtype_in(&w, &[DType::F16, DType::BF16])?;
    a::dtype_in(&tm, &[DType::Bool, DType::U8])?;
    a::dtype_in(&mt, &[DType::I32, DType::I64])?;
    if let Some(s) = &sm {
        a::dtype_in(s, &[DType::F32])?;
    } else {
        for t in mx.iter().chain(se.iter()) {
            a::dtype_in(t, &[DType::F32])?;
        }
    }
    a::same_dtype(&w, &x)?;
    a::same_dtype(&gi, &x)?;
    a::same_dtype(&gw, &x)?;
    invalid_if(label_smoothing != 0.0, || {
        "aclnnFusedLinearCrossEntropyLossGrad currently only support labelSmoothing equals 0."
            .into()
    })?;
    dims_are(&g, 1)?;
    dims_are(&x, 2)?;
    dims_are(&w, 2)?;
    dims_are(&tm, 1)?;
    dims_are(&mt, 1)?;
    let bt = g.shape()[0];
    let (h, v) = (x.shape()[1], w.shape()[0]);
    invalid_if(x.shape()[0] != bt, || {
        "input.size(0) should be equal to grad.size(0)".into()
    })?;
    invalid_if(v < 128, || "weight.size(0) < 128 is not supported".into())?;
    invalid_if(w.shape()[1] != h, || {
        "weight.size(1) should be equal to input.size(1)".into()
    })?;
    if tm.dtype() == DType::Bool {
        invalid_if(tm.shape()[0] != bt, || {
            "targetMask.size(0) should be equal to grad.size(0) when targetMask is in BOOL".into()
        })?;
    } else {
        invalid_if(tm.shape()[0] * 8 < bt, || {
            "targetMask.size(0) * 8 should not be less than grad.size(0) when targetMask is in UINT8"
                .into()
        })?;
    }
    invalid_if(mt.shape()[0] != bt, || {
        "maskedTarget.size(0) should be equal to grad.size(0)".into()
    })?;
    if let Some(s) = &sm {
        dims_are(s, 2)?;
        a::same_shape(s, &[bt, v])?;
    } else {
        for t in mx.iter().chain(se.iter()) {
            dims_are(t, 1)?;
            a::same_shape(t, &[bt])?;
        }
    }
    a::same_shape(&gi, &[bt, h])?;
    a::same_shape(&gw, &[v, h])?;
    let mut l = Launch::new("aclnnFusedLinearCrossEntropyLossGrad");
    let (ig, ix, iw, itm, imt) = (
        l.input(&g),
        l.input(&x),
        l.input(&w),
        l.input(&tm),
        l.input(&mt),
    );
    let (ism, imx, ise) = match &sm {
        Some(s) => (Some(l.input(s)), None, None),
        None => (
            None,
            mx.as_ref().map(|t| l.input(t)),
            se.as_ref().map(|t| l.input(t)),
        ),
    };
    let ogi = l.output(&gi);
    let ogw = l.output(&gw);
    l.finish(move |v, _| {
        engine::fused_linear_cross_entropy_loss_grad(
            &v[ig],
            &v[ix],
            &v[iw],
            &v[itm],
            &v[imt],
            imx.map(|i| &v[i]),
            ise.map(|i| &v[i]),
            ism.map(|i| &v[i]),
            &v[ogi],
            &v[ogw],
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnFusedLinearCrossEntropyLossGradGetWorkspaceSize(
    grad: *const c_void,
    input: *const c_void,
    weight: *const c_void,
    targetMask: *const c_void,
    maskedTarget: *const c_void,
    labelSmoothing: f32,
    logitsMaxOptional: *const c_void,
    sumExpLogitsOptional: *const c_void,
    softmaxOptional: *const c_void,
    inputGradOut: *const c_void,
    weightGradOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedLinearCrossEntropyLossGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            linear_ce_grad(
                grad,
                input,
                weight,
                targetMask,
                maskedTarget,
                labelSmoothing,
                [logitsMaxOptional, sumExpLogitsOptional, softmaxOptional],
                inputGradOut,
                weightGradOut,
            )
        },
    )
}

// ---------------------------------------------------------------------------------------------
// RecurrentGatedDeltaRule

#[allow(clippy::too_many_arguments)]
unsafe fn recurrent_gdr(
    h: [*const c_void; 7],
    g: *const c_void,
    gk: *const c_void,
    accepted: *const c_void,
    scale: f32,
    out: *const c_void,
) -> NnResult<Built> {
    let names = [
        "query",
        "key",
        "value",
        "beta",
        "stateRef",
        "actualSeqLengths",
        "ssmStateIndices",
    ];
    // the op_api reports its missing required tensors as 161002
    for (p, n) in h.iter().zip(names) {
        invalid_if(p.is_null(), || format!("{n} is nullptr"))?;
    }
    invalid_if(out.is_null(), || "out is nullptr".into())?;
    invalid_if(!gk.is_null(), || {
        "gk parameter is not supported in the current version".into()
    })?;
    let mut ts: Vec<T> = Vec::new();
    for (p, n) in h.iter().zip(names) {
        ts.push(a::tensor(*p, n)?);
    }
    let gg = a::opt_tensor(g, "g")?;
    let ac = a::opt_tensor(accepted, "numAcceptedTokens")?;
    let o = a::tensor(out, "out")?;
    let [q, k, v, b, st, sl, ssm] = &ts[..] else {
        unreachable!()
    };
    for t in [q, k, v, st, b, &o] {
        a::dtype_in(t, &[DType::BF16])?;
    }
    a::dtype_in(sl, &[DType::I32])?;
    a::dtype_in(ssm, &[DType::I32])?;
    if let Some(t) = &gg {
        a::dtype_in(t, &[DType::F32])?;
    }
    if let Some(t) = &ac {
        a::dtype_in(t, &[DType::I32])?;
    }
    // shapes (the tiling's rules)
    let shape_if = |bad: bool, msg: String| tiling_if(bad, || msg);
    shape_if(
        q.ndim() != 3 || k.ndim() != 3 || v.ndim() != 3,
        format!(
            "query {:?}, key {:?} and value {:?} must be 3-D [T, N, D]",
            q.shape(),
            k.shape(),
            v.shape()
        ),
    )?;
    let (t, nk, dk) = (q.shape()[0], q.shape()[1], q.shape()[2]);
    let (nv, dv) = (v.shape()[1], v.shape()[2]);
    shape_if(
        k.shape() != q.shape(),
        format!(
            "key {:?} must have query's shape {:?}",
            k.shape(),
            q.shape()
        ),
    )?;
    shape_if(
        v.shape()[0] != t,
        format!("value {:?} must have query's T = {t}", v.shape()),
    )?;
    shape_if(
        !(1..=256).contains(&nk) || !(1..=256).contains(&nv) || nv % nk != 0,
        format!("head numbers Nk {nk} and Nv {nv} must be in [1, 256] with Nv a multiple of Nk"),
    )?;
    shape_if(
        !(1..=512).contains(&dk) || !(1..=512).contains(&dv),
        format!("Dk {dk} and Dv {dv} must be in [1, 512]"),
    )?;
    shape_if(
        b.shape() != [t, nv],
        format!("beta {:?} must be [{t}, {nv}]", b.shape()),
    )?;
    shape_if(
        st.ndim() != 4 || st.shape()[1..] != [nv, dv, dk],
        format!(
            "stateRef {:?} must be [BlockNum, {nv}, {dv}, {dk}]",
            st.shape()
        ),
    )?;
    shape_if(
        sl.ndim() != 1,
        format!("actualSeqLengths {:?} must be [B]", sl.shape()),
    )?;
    let bsz = sl.shape()[0];
    shape_if(
        ssm.shape() != [t],
        format!("ssmStateIndices {:?} must be [{t}]", ssm.shape()),
    )?;
    if let Some(x) = &gg {
        shape_if(
            x.shape() != [t, nv],
            format!("g {:?} must be [{t}, {nv}]", x.shape()),
        )?;
    }
    if let Some(x) = &ac {
        shape_if(
            x.shape() != [bsz],
            format!("numAcceptedTokens {:?} must be [{bsz}]", x.shape()),
        )?;
    }
    a::same_shape(&o, &[t, nv, dv])?;
    let mut l = Launch::new("aclnnRecurrentGatedDeltaRule");
    let iv: Vec<usize> = [q, k, v, b, sl, ssm].iter().map(|x| l.input(x)).collect();
    let ig = gg.as_ref().map(|x| l.input(x));
    let ia = ac.as_ref().map(|x| l.input(x));
    let ost = l.output(st);
    let oo = l.output(&o);
    l.finish(move |w, _| {
        engine::recurrent_gated_delta_rule(
            &w[iv[0]],
            &w[iv[1]],
            &w[iv[2]],
            &w[iv[3]],
            &w[ost],
            &w[iv[4]],
            &w[iv[5]],
            ig.map(|i| &w[i]),
            ia.map(|i| &w[i]),
            scale,
            &w[oo],
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnRecurrentGatedDeltaRuleGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    beta: *const c_void,
    stateRef: *const c_void,
    actualSeqLengths: *const c_void,
    ssmStateIndices: *const c_void,
    g: *const c_void,
    gk: *const c_void,
    numAcceptedTokens: *const c_void,
    scaleValue: f32,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRecurrentGatedDeltaRuleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            recurrent_gdr(
                [
                    query,
                    key,
                    value,
                    beta,
                    stateRef,
                    actualSeqLengths,
                    ssmStateIndices,
                ],
                g,
                gk,
                numAcceptedTokens,
                scaleValue,
                out,
            )
        },
    )
}

// ---------------------------------------------------------------------------------------------
// ChunkGatedDeltaRule

#[allow(clippy::too_many_arguments)]
unsafe fn chunk_gdr(
    h: [*const c_void; 6],
    scale: f32,
    g: *const c_void,
    out: *const c_void,
    final_state: *const c_void,
) -> NnResult<Built> {
    let names = [
        "query",
        "key",
        "value",
        "beta",
        "initialState",
        "actualSeqLengths",
    ];
    let mut ts: Vec<T> = Vec::new();
    for (p, n) in h.iter().zip(names) {
        ts.push(a::tensor(*p, n)?);
    }
    let gg = a::opt_tensor(g, "g")?;
    let o = a::tensor(out, "out")?;
    let fs = a::tensor(final_state, "finalState")?;
    let [q, k, v, b, st, sl] = &ts[..] else {
        unreachable!()
    };
    for t in [q, k, v, b, st, &o, &fs] {
        a::dtype_in(t, &[DType::BF16])?;
    }
    a::dtype_in(sl, &[DType::I32])?;
    if let Some(t) = &gg {
        a::dtype_in(t, &[DType::F32])?;
    }
    for t in [q, k, v] {
        dims_are(t, 3)?;
        invalid_if(t.numel() == 0, || format!("{} must not be empty", t.arg))?;
    }
    let (t, nk, dk) = (q.shape()[0], q.shape()[1], q.shape()[2]);
    let (nv, dv) = (v.shape()[1], v.shape()[2]);
    a::same_shape(k, q.shape())?;
    invalid_if(v.shape()[0] != t, || {
        format!("value {:?} must have query's T = {t}", v.shape())
    })?;
    invalid_if(nk > 64 || nv > 64 || nv % nk != 0, || {
        format!("head numbers Nk {nk} and Nv {nv} must be in (0, 64] with Nv a multiple of Nk")
    })?;
    invalid_if(dk > 128 || dv > 128, || {
        format!("Dk {dk} and Dv {dv} must be in (0, 128]")
    })?;
    a::same_shape(b, &[t, nv])?;
    dims_are(sl, 1)?;
    let bsz = sl.shape()[0];
    invalid_if(bsz == 0, || "actualSeqLengths must not be empty".into())?;
    a::same_shape(st, &[bsz, nv, dv, dk])?;
    a::same_shape(&fs, &[bsz, nv, dv, dk])?;
    if let Some(x) = &gg {
        a::same_shape(x, &[t, nv])?;
    }
    a::same_shape(&o, &[t, nv, dv])?;
    let mut l = Launch::new("aclnnChunkGatedDeltaRule");
    let iv: Vec<usize> = [q, k, v, b, st, sl].iter().map(|x| l.input(x)).collect();
    let ig = gg.as_ref().map(|x| l.input(x));
    let oo = l.output(&o);
    let of = l.output(&fs);
    l.finish(move |w, _| {
        engine::chunk_gated_delta_rule(
            &w[iv[0]],
            &w[iv[1]],
            &w[iv[2]],
            &w[iv[3]],
            &w[iv[4]],
            &w[iv[5]],
            scale,
            ig.map(|i| &w[i]),
            &w[oo],
            &w[of],
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnChunkGatedDeltaRuleGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    beta: *const c_void,
    initialState: *const c_void,
    actualSeqLengths: *const c_void,
    scaleValue: f32,
    g: *const c_void,
    out: *const c_void,
    finalState: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnChunkGatedDeltaRuleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            chunk_gdr(
                [query, key, value, beta, initialState, actualSeqLengths],
                scaleValue,
                g,
                out,
                finalState,
            )
        },
    )
}

crate::phase2!(
    aclnnAttentionUpdate,
    aclnnKvRmsNormRopeCache,
    aclnnFusedLinearOnlineMaxSum,
    aclnnFusedCrossEntropyLossWithMaxSum,
    aclnnFusedLinearCrossEntropyLossGrad,
    aclnnRecurrentGatedDeltaRule,
    aclnnChunkGatedDeltaRule
);
