//! DeepSeek's MLA preprocessing: `aclnnMlaProlog`, `aclnnMlaPrologV2WeightNz`,
//! `aclnnMlaPrologV3WeightNz`, the non-quantized scenario of CANN's pages (every tensor
//! BFLOAT16, the cache index INT64), on the engine of [`npu_emu::ops::mla_prolog`].
//! The quantized scenarios (INT8 weights, caches or tokens, any dequant/quant scale) are
//! refused with 161002: npu-emu does not compute them.
#![allow(non_snake_case)]

use super::args::{self as a, T};
use super::launch::{phase1, Built, Launch};
use crate::objects;
use crate::status::{NnError, NnResult};
use npu_emu::formats::{FORMAT_FRACTAL_NZ, FORMAT_ND};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::mla_prolog::{self as engine, MlaProlog};
use npu_emu::ops::Layout;
use std::ffi::{c_char, c_void};

/// A `[K, N]` weight: ND, or FRACTAL_NZ with storage `[N/c0, K/16, 16, c0]` (view that
/// 4-D shape, as CANN's examples create it, or the 2-D `[K, N]`). Returns the tensor the
/// kernel reads (the flat storage for NZ), K, N and the NZ c0.
fn weight(h: *const c_void, arg: &'static str) -> NnResult<(T, usize, usize, Option<usize>)> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let o = objects::tensor(h as usize, arg)?;
    if o.storage_format != FORMAT_FRACTAL_NZ && o.format != FORMAT_FRACTAL_NZ {
        let t = a::tensor(h, arg)?;
        a::dtype_in(&t, &[DType::BF16])?;
        if t.ndim() != 2 {
            return Err(NnError::invalid(format!(
                "{arg} has shape {:?}; it takes 2 dimensions (K, N) or FRACTAL_NZ",
                t.shape()
            )));
        }
        let (k, n) = (t.shape()[0], t.shape()[1]);
        return Ok((t, k, n, None));
    }
    if DType::from_acl(o.dtype) != Some(DType::BF16) {
        return Err(NnError::invalid(format!(
            "{arg} has data type {}: npu-emu computes the non-quantized scenario only, where \
             it is BFLOAT16",
            npu_emu::formats::dtype_name(o.dtype)
        )));
    }
    if o.offset < 0 || o.storage_shape.iter().any(|&d| d < 0) {
        return Err(NnError::invalid(format!(
            "{arg} has a negative offset or dimension"
        )));
    }
    let s: Vec<usize> = o.storage_shape.iter().map(|&x| x as usize).collect();
    let c0 = 16;
    if s.len() != 4 || s[2] != 16 || s[3] != c0 {
        return Err(NnError::invalid(format!(
            "{arg} in FRACTAL_NZ has storage shape {s:?}; it takes [N/{c0}, K/16, 16, {c0}]"
        )));
    }
    let (k, n) = (s[1] * 16, s[0] * c0);
    let view: Vec<usize> = o.view_shape.iter().map(|&x| x as usize).collect();
    if view != s && view != [k, n] {
        return Err(NnError::invalid(format!(
            "{arg} in FRACTAL_NZ has view shape {view:?}; it takes [{k}, {n}] or the storage \
             shape {s:?}"
        )));
    }
    let flat = T {
        arg,
        layout: Layout {
            dtype: DType::BF16,
            shape: vec![s.iter().product()],
            strides: vec![1],
            offset: o.offset as isize,
        },
        addr: o.addr,
        format: FORMAT_ND,
    };
    Ok((flat, k, n, Some(c0)))
}

fn bad(_api: &str, msg: String) -> NnError {
    NnError::invalid(msg)
}

/// The tensors of a call, in the engine's order, and the attributes.
struct Call {
    ts: Vec<T>,
    p: MlaProlog,
}

#[allow(clippy::too_many_arguments)]
unsafe fn check(
    api: &'static str,
    token_x: *const c_void,
    w_dq: *const c_void,
    w_uq_qr: *const c_void,
    w_uk: *const c_void,
    w_dkv_kr: *const c_void,
    g_cq: *const c_void,
    g_ckv: *const c_void,
    sin: *const c_void,
    cos: *const c_void,
    cache_index: *const c_void,
    kv_cache: *const c_void,
    kr_cache: *const c_void,
    quant: &[(*const c_void, &'static str)],
    eps_cq: f64,
    eps_ckv: f64,
    cache_mode: *const c_char,
    query_out: *const c_void,
    query_rope_out: *const c_void,
) -> NnResult<Call> {
    let x = a::tensor(token_x, "tokenX")?;
    let (wdq, he_w, hcq, nz_dq) = weight(w_dq, "weightDq")?;
    let (wuq, hcq_w, nddr, nz_uq) = weight(w_uq_qr, "weightUqQr")?;
    let wuk = a::tensor(w_uk, "weightUk")?;
    let (wkv, he_w2, hckv_dr, nz_kv) = weight(w_dkv_kr, "weightDkvKr")?;
    let gq = a::tensor(g_cq, "rmsnormGammaCq")?;
    let gkv = a::tensor(g_ckv, "rmsnormGammaCkv")?;
    let s = a::tensor(sin, "ropeSin")?;
    let c = a::tensor(cos, "ropeCos")?;
    let Some(idx) = a::opt_tensor(cache_index, "cacheIndex")? else {
        return Err(NnError::nullptr("cacheIndex is nullptr"));
    };
    let kvc = a::tensor(kv_cache, "kvCacheRef")?;
    let krc = a::tensor(kr_cache, "krCacheRef")?;
    let qo = a::tensor(query_out, "queryOut")?;
    let qro = a::tensor(query_rope_out, "queryRopeOut")?;
    for &(h, name) in quant {
        if !h.is_null() {
            return Err(bad(
                api,
                format!(
                    "{name} is given: the quantized scenarios are not implemented by npu-emu \
                     (only the non-quantized one, every tensor BFLOAT16)"
                ),
            ));
        }
    }
    for t in [&x, &wuk, &gq, &gkv, &s, &c, &kvc, &krc, &qo, &qro] {
        if t.dtype() != DType::BF16 {
            return Err(bad(
                api,
                format!(
                    "{} is {:?}: npu-emu computes the non-quantized scenario only, where it is \
                     BFLOAT16",
                    t.arg,
                    t.dtype()
                ),
            ));
        }
    }
    a::dtype_in(&idx, &[DType::I64])?;
    let (t, bs) = match x.shape() {
        [t, _] => (*t, None),
        [b, s, _] => (b * s, Some((*b, *s))),
        sh => {
            return Err(bad(
                api,
                format!("tokenX has shape {sh:?}; it takes (T, He) or (B, S, He)"),
            ))
        }
    };
    let he = *x.shape().last().expect("rank checked");
    if ![6144, 7168, 7680].contains(&he) || (he == 6144 && !api.contains("V3")) {
        return Err(bad(
            api,
            format!("He = {he}; CANN supports 7168 and 7680 (V3 also 6144)"),
        ));
    }
    if he_w != he || he_w2 != he {
        return Err(bad(
            api,
            format!("weightDq has K = {he_w} and weightDkvKr K = {he_w2}; both must be He = {he}"),
        ));
    }
    if hcq != 1536 || hcq_w != hcq {
        return Err(bad(
            api,
            format!("Hcq: weightDq gives {hcq}, weightUqQr {hcq_w}; CANN fixes it at 1536"),
        ));
    }
    let (d, dr, hckv) = (128usize, 64usize, 512usize);
    if hckv_dr != hckv + dr {
        return Err(bad(
            api,
            format!("weightDkvKr has N = {hckv_dr}; it takes Hckv + Dr = 576"),
        ));
    }
    let n = nddr / (d + dr);
    if nddr % (d + dr) != 0 || !n.is_power_of_two() || n > 128 {
        return Err(bad(
            api,
            format!("weightUqQr has N = {nddr}; it takes N·(D + Dr) with N in 1, 2, 4, …, 128"),
        ));
    }
    a::same_shape(&wuk, &[n, d, hckv])?;
    a::same_shape(&gq, &[hcq])?;
    a::same_shape(&gkv, &[hckv])?;
    let lead: Vec<usize> = match bs {
        Some((b, s)) => vec![b, s],
        None => vec![t],
    };
    let with = |last: &[usize]| [lead.as_slice(), last].concat();
    a::same_shape(&s, &with(&[dr]))?;
    a::same_shape(&c, &with(&[dr]))?;
    a::same_shape(&idx, &lead)?;
    a::same_shape(&qo, &with(&[n, hckv]))?;
    a::same_shape(&qro, &with(&[n, dr]))?;
    let mode = if cache_mode.is_null() {
        "PA_BSND".to_string()
    } else {
        // SAFETY: cache_mode is not null, so it is the caller's NUL-terminated C string.
        unsafe { std::ffi::CStr::from_ptr(cache_mode) }
            .to_string_lossy()
            .into_owned()
    };
    let cache_nz = match mode.as_str() {
        "PA_BSND" => false,
        "PA_NZ" => true,
        m => {
            return Err(bad(
                api,
                format!("cacheModeOptional \"{m}\"; it takes \"PA_BSND\" or \"PA_NZ\""),
            ))
        }
    };
    if kvc.ndim() != 4 || kvc.shape()[2] != 1 || kvc.shape()[3] != hckv {
        return Err(bad(
            api,
            format!(
                "kvCacheRef has shape {:?}; it takes (BlockNum, BlockSize, 1, {hckv})",
                kvc.shape()
            ),
        ));
    }
    let block = kvc.shape()[1];
    if block != 16 && block != 128 {
        return Err(bad(
            api,
            format!("BlockSize {block}: CANN supports 16 and 128"),
        ));
    }
    a::same_shape(&krc, &[kvc.shape()[0], block, 1, dr])?;
    Ok(Call {
        ts: vec![x, wdq, wuq, wuk, wkv, gq, gkv, s, c, idx, kvc, krc, qo, qro],
        p: MlaProlog {
            t,
            he,
            hcq,
            n,
            d,
            dr,
            hckv,
            eps_cq,
            eps_ckv,
            nz: [nz_dq, nz_uq, nz_kv],
            block,
            cache_nz,
            q_scale: 1.0,
            kv_scale: 1.0,
        },
    })
}

fn launch(api: &'static str, call: Call) -> NnResult<Built> {
    let mut l = Launch::new(api);
    for t in &call.ts[..10] {
        l.input(t);
    }
    for t in &call.ts[10..] {
        l.output(t);
    }
    let p = call.p;
    l.finish(move |vs, _| engine::mla_prolog(vs, &p))
}

const QUANT: [&str; 7] = [
    "dequantScaleXOptional",
    "dequantScaleWDqOptional",
    "dequantScaleWUqQrOptional",
    "dequantScaleWDkvKrOptional",
    "quantScaleCkvOptional",
    "quantScaleCkrOptional",
    "smoothScalesCqOptional",
];

fn quant(hs: [*const c_void; 7]) -> Vec<(*const c_void, &'static str)> {
    hs.into_iter().zip(QUANT).collect()
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMlaPrologGetWorkspaceSize(
    tokenX: *const c_void,
    weightDq: *const c_void,
    weightUqQr: *const c_void,
    weightUk: *const c_void,
    weightDkvKr: *const c_void,
    rmsnormGammaCq: *const c_void,
    rmsnormGammaCkv: *const c_void,
    ropeSin: *const c_void,
    ropeCos: *const c_void,
    cacheIndex: *const c_void,
    kvCacheRef: *const c_void,
    krCacheRef: *const c_void,
    dequantScaleXOptional: *const c_void,
    dequantScaleWDqOptional: *const c_void,
    dequantScaleWUqQrOptional: *const c_void,
    dequantScaleWDkvKrOptional: *const c_void,
    quantScaleCkvOptional: *const c_void,
    quantScaleCkrOptional: *const c_void,
    smoothScalesCqOptional: *const c_void,
    rmsnormEpsilonCq: f64,
    rmsnormEpsilonCkv: f64,
    cacheModeOptional: *mut c_char,
    queryOut: *const c_void,
    queryRopeOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    const API: &str = "aclnnMlaProlog";
    phase1(
        "aclnnMlaPrologGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = quant([
                dequantScaleXOptional,
                dequantScaleWDqOptional,
                dequantScaleWUqQrOptional,
                dequantScaleWDkvKrOptional,
                quantScaleCkvOptional,
                quantScaleCkrOptional,
                smoothScalesCqOptional,
            ]);
            // SAFETY: the pointers are the caller's handles and C string.
            let call = unsafe {
                check(
                    API,
                    tokenX,
                    weightDq,
                    weightUqQr,
                    weightUk,
                    weightDkvKr,
                    rmsnormGammaCq,
                    rmsnormGammaCkv,
                    ropeSin,
                    ropeCos,
                    cacheIndex,
                    kvCacheRef,
                    krCacheRef,
                    &q,
                    rmsnormEpsilonCq,
                    rmsnormEpsilonCkv,
                    cacheModeOptional,
                    queryOut,
                    queryRopeOut,
                )
            }?;
            launch(API, call)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMlaPrologV2WeightNzGetWorkspaceSize(
    tokenX: *const c_void,
    weightDq: *const c_void,
    weightUqQr: *const c_void,
    weightUk: *const c_void,
    weightDkvKr: *const c_void,
    rmsnormGammaCq: *const c_void,
    rmsnormGammaCkv: *const c_void,
    ropeSin: *const c_void,
    ropeCos: *const c_void,
    cacheIndex: *const c_void,
    kvCacheRef: *const c_void,
    krCacheRef: *const c_void,
    dequantScaleXOptional: *const c_void,
    dequantScaleWDqOptional: *const c_void,
    dequantScaleWUqQrOptional: *const c_void,
    dequantScaleWDkvKrOptional: *const c_void,
    quantScaleCkvOptional: *const c_void,
    quantScaleCkrOptional: *const c_void,
    smoothScalesCqOptional: *const c_void,
    rmsnormEpsilonCq: f64,
    rmsnormEpsilonCkv: f64,
    cacheModeOptional: *mut c_char,
    queryOut: *const c_void,
    queryRopeOut: *const c_void,
    dequantScaleQNopeOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    const API: &str = "aclnnMlaPrologV2WeightNz";
    phase1(
        "aclnnMlaPrologV2WeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let mut q = quant([
                dequantScaleXOptional,
                dequantScaleWDqOptional,
                dequantScaleWUqQrOptional,
                dequantScaleWDkvKrOptional,
                quantScaleCkvOptional,
                quantScaleCkrOptional,
                smoothScalesCqOptional,
            ]);
            q.push((dequantScaleQNopeOutOptional, "dequantScaleQNopeOutOptional"));
            // SAFETY: the pointers are the caller's handles and C string.
            let call = unsafe {
                check(
                    API,
                    tokenX,
                    weightDq,
                    weightUqQr,
                    weightUk,
                    weightDkvKr,
                    rmsnormGammaCq,
                    rmsnormGammaCkv,
                    ropeSin,
                    ropeCos,
                    cacheIndex,
                    kvCacheRef,
                    krCacheRef,
                    &q,
                    rmsnormEpsilonCq,
                    rmsnormEpsilonCkv,
                    cacheModeOptional,
                    queryOut,
                    queryRopeOut,
                )
            }?;
            launch(API, call)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMlaPrologV3WeightNzGetWorkspaceSize(
    tokenX: *const c_void,
    weightDq: *const c_void,
    weightUqQr: *const c_void,
    weightUk: *const c_void,
    weightDkvKr: *const c_void,
    rmsnormGammaCq: *const c_void,
    rmsnormGammaCkv: *const c_void,
    ropeSin: *const c_void,
    ropeCos: *const c_void,
    kvCacheRef: *const c_void,
    krCacheRef: *const c_void,
    cacheIndexOptional: *const c_void,
    dequantScaleXOptional: *const c_void,
    dequantScaleWDqOptional: *const c_void,
    dequantScaleWUqQrOptional: *const c_void,
    dequantScaleWDkvKrOptional: *const c_void,
    quantScaleCkvOptional: *const c_void,
    quantScaleCkrOptional: *const c_void,
    smoothScalesCqOptional: *const c_void,
    actualSeqLenOptional: *const c_void,
    rmsnormEpsilonCq: f64,
    rmsnormEpsilonCkv: f64,
    cacheModeOptional: *mut c_char,
    queryNormFlag: bool,
    weightQuantMode: i64,
    kvCacheQuantMode: i64,
    queryQuantMode: i64,
    ckvkrRepoMode: i64,
    quantScaleRepoMode: i64,
    tileSize: i64,
    kNopeClipAlpha: f64,
    qcQrScale: f64,
    kcScale: f64,
    queryOut: *const c_void,
    queryRopeOut: *const c_void,
    dequantScaleQNopeOutOptional: *const c_void,
    queryNormOutOptional: *const c_void,
    dequantScaleQNormOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    const API: &str = "aclnnMlaPrologV3WeightNz";
    let _ = (tileSize, kNopeClipAlpha); // reserved by CANN
    phase1(
        "aclnnMlaPrologV3WeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let mut q = quant([
                dequantScaleXOptional,
                dequantScaleWDqOptional,
                dequantScaleWUqQrOptional,
                dequantScaleWDkvKrOptional,
                quantScaleCkvOptional,
                quantScaleCkrOptional,
                smoothScalesCqOptional,
            ]);
            q.push((dequantScaleQNopeOutOptional, "dequantScaleQNopeOutOptional"));
            q.push((queryNormOutOptional, "queryNormOutOptional"));
            q.push((dequantScaleQNormOutOptional, "dequantScaleQNormOutOptional"));
            if !actualSeqLenOptional.is_null() {
                return Err(bad(
                    API,
                    "actualSeqLenOptional is reserved; pass nullptr".to_string(),
                ));
            }
            if queryNormFlag {
                return Err(bad(
                    API,
                    "queryNormFlag is reserved; pass false".to_string(),
                ));
            }
            for (v, name) in [
                (weightQuantMode, "weightQuantMode"),
                (kvCacheQuantMode, "kvCacheQuantMode"),
                (queryQuantMode, "queryQuantMode"),
                (ckvkrRepoMode, "ckvkrRepoMode"),
                (quantScaleRepoMode, "quantScaleRepoMode"),
            ] {
                if v != 0 {
                    return Err(bad(
                        API,
                        format!(
                            "{name} = {v}: npu-emu computes the non-quantized scenario only \
                             (0)"
                        ),
                    ));
                }
            }
            if !qcQrScale.is_finite() || !kcScale.is_finite() {
                return Err(bad(
                    API,
                    format!("qcQrScale {qcQrScale} and kcScale {kcScale} must be finite"),
                ));
            }
            // SAFETY: the pointers are the caller's handles and C string.
            let mut call = unsafe {
                check(
                    API,
                    tokenX,
                    weightDq,
                    weightUqQr,
                    weightUk,
                    weightDkvKr,
                    rmsnormGammaCq,
                    rmsnormGammaCkv,
                    ropeSin,
                    ropeCos,
                    cacheIndexOptional,
                    kvCacheRef,
                    krCacheRef,
                    &q,
                    rmsnormEpsilonCq,
                    rmsnormEpsilonCkv,
                    cacheModeOptional,
                    queryOut,
                    queryRopeOut,
                )
            }?;
            call.p.q_scale = qcQrScale;
            call.p.kv_scale = kcScale;
            launch(API, call)
        },
    )
}

crate::phase2!(
    aclnnMlaProlog,
    aclnnMlaPrologV2WeightNz,
    aclnnMlaPrologV3WeightNz
);
