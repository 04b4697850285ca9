//! The inference helpers of large-model serving that torch_npu 2.9 calls:
//! `aclnn_rotary_position_embedding.h` (`aclnnRotaryPositionEmbeddingV2`, with the rotation
//! matrix), `aclnn_interleave_rope.h`, `aclnn_rope_with_sin_cos_cache.h` and `…_v2.h`. The
//! checks follow CANN's operator reference (ops-transformer); the computation is
//! `npu_emu::ops::llm_infer` and, for the plain rotations, `npu_emu::ops::fused::rope`.

use super::args::{self as a, FLOATS3, T};
use super::fused::{check_cos_sin, rope_last_dim, rope_mode, same_dtype, tiling};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::fused::{self, RopeMode};
use npu_emu::ops::llm_infer::{self as engine, SinCosCache};
use std::ffi::{c_char, c_void, CStr};

// ---------------------------------------------------------------- RotaryPositionEmbeddingV2

#[no_mangle]
pub unsafe extern "C" fn aclnnRotaryPositionEmbeddingV2GetWorkspaceSize(
    x: *const c_void,
    cos: *const c_void,
    sin: *const c_void,
    mode: i64,
    rotate: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRotaryPositionEmbeddingV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let c = a::tensor(cos, "cos")?;
            let s = a::tensor(sin, "sin")?;
            let r = a::opt_tensor(rotate, "rotate")?;
            let o = a::tensor(out, "out")?;
            for t in [&x, &c, &s, &o] {
                a::dtype_in(t, FLOATS3)?;
            }
            same_dtype(&o, &x)?;
            if let Some(r) = &r {
                a::dtype_in(r, FLOATS3)?;
                same_dtype(r, &x)?;
            }
            if !(3..=4).contains(&x.ndim()) {
                return Err(NnError::invalid(format!(
                    "x has {} dimensions; it must have 3 or 4 (BNSD, BSND, SBND or TND)",
                    x.ndim()
                )));
            }
            let m = rope_mode(mode)?;
            check_cos_sin(&x, &c, &s)?;
            rope_last_dim(&x, m)?;
            if o.shape() != x.shape() {
                return Err(tiling(format!(
                    "out has shape {:?}; it must equal x {:?}",
                    o.shape(),
                    x.shape()
                )));
            }
            let d = x.shape()[x.ndim() - 1];
            if let Some(r) = &r {
                if r.shape() != [d, d] {
                    return Err(tiling(format!(
                        "rotate has shape {:?}; it must be [D, D] = [{d}, {d}] for x {:?}",
                        r.shape(),
                        x.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnRotaryPositionEmbeddingV2");
            l.input(&x);
            l.input(&c);
            l.input(&s);
            if let Some(r) = &r {
                l.input(r);
                l.output(&o);
                l.finish(move |v, _| engine::rope_rotate(&v[0], &v[1], &v[2], &v[3], &v[4]))
            } else {
                l.output(&o);
                l.finish(move |v, _| fused::rope(&v[0], &v[1], &v[2], m, &v[3]))
            }
        },
    )
}

// ---------------------------------------------------------------- InterleaveRope

#[no_mangle]
pub unsafe extern "C" fn aclnnInterleaveRopeGetWorkspaceSize(
    x: *const c_void,
    cos: *const c_void,
    sin: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInterleaveRopeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let c = a::tensor(cos, "cos")?;
            let s = a::tensor(sin, "sin")?;
            let o = a::tensor(out, "out")?;
            for t in [&x, &c, &s, &o] {
                a::dtype_in(t, &[DType::F16, DType::BF16])?;
            }
            for t in [&c, &s, &o] {
                same_dtype(t, &x)?;
            }
            // the tiling's rules: (B, N, S, D) with D = 64; cos/sin (B, 1, S or 1, D)
            if x.ndim() != 4 {
                return Err(tiling(format!(
                    "x has shape {:?}; it must be (B, N, S, D)",
                    x.shape()
                )));
            }
            let xs = x.shape();
            if xs.contains(&0) {
                return Err(tiling(format!(
                    "x has shape {xs:?}; every dimension must be greater than 0"
                )));
            }
            if xs[3] != 64 {
                return Err(tiling(format!(
                    "the last dimension D of x {xs:?} must be 64"
                )));
            }
            if c.shape() != s.shape() {
                return Err(tiling(format!(
                    "cos {:?} and sin {:?} must have the same shape",
                    c.shape(),
                    s.shape()
                )));
            }
            let cs = c.shape();
            let ok = cs.len() == 4
                && cs[0] == xs[0]
                && cs[1] == 1
                && (cs[2] == 1 || cs[2] == xs[2])
                && cs[3] == xs[3];
            if !ok {
                return Err(tiling(format!(
                    "cos/sin have shape {cs:?}; for x {xs:?} they must be (B, 1, S, D) or \
                     (B, 1, 1, D) = ({}, 1, {} or 1, 64)",
                    xs[0], xs[2]
                )));
            }
            if o.shape() != xs {
                return Err(tiling(format!(
                    "out has shape {:?}; it must equal x {xs:?}",
                    o.shape()
                )));
            }
            let mut l = Launch::new("aclnnInterleaveRope");
            l.input(&x);
            l.input(&c);
            l.input(&s);
            l.output(&o);
            l.finish(move |v, _| fused::rope(&v[0], &v[1], &v[2], RopeMode::InterleaveHalf, &v[3]))
        },
    )
}

// ---------------------------------------------------------------- RopeWithSinCosCache

#[allow(clippy::too_many_arguments)]
fn rope_cache(
    api: &'static str,
    positions: *const c_void,
    query: *const c_void,
    key: *const c_void,
    cache: *const c_void,
    section: *const c_void,
    head_size: i64,
    neox: bool,
    cache_mode: i64,
    query_out: *mut c_void,
    key_out: *mut c_void,
    v2: bool,
) -> NnResult<super::launch::Built> {
    let p = a::tensor(positions, "positions")?;
    let q = a::tensor(query, "queryIn")?;
    let k = a::tensor(key, "keyIn")?;
    let cc = a::tensor(cache, "cosSinCache")?;
    let sections = a::opt_int_array(section, "mropeSection")?;
    let qo = a::tensor(query_out, "queryOut")?;
    let ko = a::tensor(key_out, "keyOut")?;
    // the reference lists INT32 and INT64 for V1, INT64 for V2
    let pos_types: &[DType] = if v2 {
        &[DType::I64]
    } else {
        &[DType::I32, DType::I64]
    };
    a::dtype_in(&p, pos_types)?;
    for t in [&q, &k, &cc, &qo, &ko] {
        a::dtype_in(t, FLOATS3)?;
    }
    for t in [&k, &cc, &qo, &ko] {
        same_dtype(t, &q)?;
    }
    for t in [&q, &k, &cc] {
        if t.ndim() != 2 || t.numel() == 0 {
            return Err(tiling(format!(
                "{} has shape {:?}; it must be a non-empty 2-D tensor",
                t.arg,
                t.shape()
            )));
        }
    }
    if !(1..=2).contains(&p.ndim()) || p.numel() == 0 {
        return Err(tiling(format!(
            "positions has shape {:?}; it must be (numTokens) or (sections, numTokens)",
            p.shape()
        )));
    }
    let tokens = q.shape()[0];
    if *p.shape().last().unwrap() != tokens || k.shape()[0] != tokens {
        return Err(tiling(format!(
            "positions {:?}, queryIn {:?} and keyIn {:?} must agree on numTokens",
            p.shape(),
            q.shape(),
            k.shape()
        )));
    }
    let align: i64 = if q.dtype() == DType::F32 { 16 } else { 32 };
    let rd = cc.shape()[1];
    if head_size <= 0 || head_size % align != 0 {
        return Err(tiling(format!(
            "headSize {head_size} must be a positive multiple of {align} for {}",
            q.dtype()
        )));
    }
    let hs = head_size as usize;
    if rd == 0 || rd % align as usize != 0 || rd > hs {
        return Err(tiling(format!(
            "the rotary dimension {rd} (cosSinCache's last dimension) must be a positive \
             multiple of {align} no greater than headSize {hs}"
        )));
    }
    for t in [&q, &k] {
        if t.shape()[1] % hs != 0 {
            return Err(tiling(format!(
                "{} has {} columns; they must be whole heads of headSize {hs}",
                t.arg,
                t.shape()[1]
            )));
        }
    }
    for (o, like) in [(&qo, &q), (&ko, &k)] {
        if o.shape() != like.shape() {
            return Err(tiling(format!(
                "{} has shape {:?}; it must equal {} {:?}",
                o.arg,
                o.shape(),
                like.arg,
                like.shape()
            )));
        }
    }
    if !(0..=1).contains(&cache_mode) {
        return Err(NnError::invalid(format!(
            "cacheMode {cache_mode} is not 0 (segmented) or 1 (interleaved)"
        )));
    }
    let mut secs = Vec::new();
    if p.ndim() == 2 {
        let rows = p.shape()[0];
        let given = sections.unwrap_or_default();
        let max_rows = if v2 { 4 } else { 3 };
        if !(3..=max_rows).contains(&rows)
            || given.len() != rows
            || given.iter().any(|&n| n < 0)
            || given.iter().sum::<i64>() as usize != rd / 2
        {
            return Err(tiling(format!(
                "MRoPE: positions {:?} needs mropeSection of {} non-negative entries \
                 summing to half the rotary dimension ({}), not {given:?}",
                p.shape(),
                if v2 { "3 or 4" } else { "3" },
                rd / 2
            )));
        }
        if cache_mode == 1 && rows != 3 {
            return Err(tiling(format!(
                "cacheMode 1 (interleaved) takes 3 MRoPE sections, not {given:?}"
            )));
        }
        secs = given.iter().map(|&n| n as usize).collect();
    }
    let params = SinCosCache {
        head_size: hs,
        rotary_dim: rd,
        neox,
        sections: secs,
        cache_mode,
    };
    let mut l = Launch::new(api);
    l.input(&p);
    l.input(&q);
    l.input(&k);
    l.input(&cc);
    l.output(&qo);
    l.output(&ko);
    l.finish(move |v, _| {
        engine::rope_with_sin_cos_cache(&v[0], &v[1], &v[2], &v[3], &params, &v[4], &v[5])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRopeWithSinCosCacheGetWorkspaceSize(
    positions: *const c_void,
    queryIn: *const c_void,
    keyIn: *const c_void,
    cosSinCache: *const c_void,
    mropeSection: *const c_void,
    headSize: i64,
    isNeoxStyle: bool,
    queryOut: *mut c_void,
    keyOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRopeWithSinCosCacheGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            rope_cache(
                "aclnnRopeWithSinCosCache",
                positions,
                queryIn,
                keyIn,
                cosSinCache,
                mropeSection,
                headSize,
                isNeoxStyle,
                0,
                queryOut,
                keyOut,
                false,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRopeWithSinCosCacheV2GetWorkspaceSize(
    positions: *const c_void,
    queryIn: *const c_void,
    keyIn: *const c_void,
    cosSinCache: *const c_void,
    mropeSection: *const c_void,
    headSize: i64,
    isNeoxStyle: bool,
    cacheMode: i64,
    queryOut: *mut c_void,
    keyOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRopeWithSinCosCacheV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            rope_cache(
                "aclnnRopeWithSinCosCacheV2",
                positions,
                queryIn,
                keyIn,
                cosSinCache,
                mropeSection,
                headSize,
                isNeoxStyle,
                cacheMode,
                queryOut,
                keyOut,
                true,
            )
        },
    )
}

// ---------------------------------------------------------------- paged KV caches

/// The A2/A3 cache element types (FLOAT and the other wide types are 950-only).
const CACHE_TYPES: &[DType] = &[DType::F16, DType::BF16, DType::I8];

/// A C string argument (`None` for NULL).
fn c_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: a NUL-terminated C string from the caller.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// `"Norm"` (false) or `"PA_NZ"` (true).
fn cache_layout(mode: Option<String>, arg: &str) -> NnResult<bool> {
    match mode.as_deref() {
        None | Some("Norm") => Ok(false),
        Some("PA_NZ") => Ok(true),
        Some(other) => Err(NnError::invalid(format!(
            "{arg} \"{other}\" is not \"Norm\" or \"PA_NZ\""
        ))),
    }
}

/// A paged cache against the tokens it stores (`x` [tokens, heads, size] for Norm, or the
/// flattened [tokens, heads·size] for PA_NZ's gather): Norm `[blocks, block_size, heads,
/// size]`, PA_NZ `[blocks, heads·size / last, block_size, last]`.
fn check_pa_cache(c: &T, x: &T, nz: bool, err: fn(String) -> NnError) -> NnResult<()> {
    let width: usize = x.shape()[1..].iter().product();
    let cs = c.shape();
    let ok = cs.len() == 4
        && if nz {
            cs[1] * cs[3] == width
        } else {
            cs[2..] == x.shape()[1..]
        };
    if !ok {
        return Err(err(format!(
            "{} has shape {cs:?}; for {} {:?} it must be {}",
            c.arg,
            x.arg,
            x.shape(),
            if nz {
                "[num_blocks, num_heads * head_size // last, block_size, last] (PA_NZ)"
            } else {
                "[num_blocks, block_size, num_heads, head_size] (Norm)"
            }
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnScatterPaKvCacheGetWorkspaceSize(
    key: *const c_void,
    keyCacheRef: *mut c_void,
    slotMapping: *const c_void,
    value: *const c_void,
    valueCacheRef: *mut c_void,
    compressLensOptional: *const c_void,
    compressSeqOffsetOptional: *const c_void,
    seqLensOptional: *const c_void,
    cacheModeOptional: *mut c_char,
    scatterModeOptional: *mut c_char,
    stridesOptional: *const c_void,
    offsetsOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterPaKvCacheGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let k = a::tensor(key, "key")?;
            let kc = a::tensor(keyCacheRef, "keyCacheRef")?;
            let sm = a::tensor(slotMapping, "slotMapping")?;
            let v = a::tensor(value, "value")?;
            let vc = a::tensor(valueCacheRef, "valueCacheRef")?;
            let opts = [
                a::opt_tensor(compressLensOptional, "compressLensOptional")?,
                a::opt_tensor(compressSeqOffsetOptional, "compressSeqOffsetOptional")?,
                a::opt_tensor(seqLensOptional, "seqLensOptional")?,
            ];
            let _ = a::opt_int_array(stridesOptional, "stridesOptional")?;
            let _ = a::opt_int_array(offsetsOptional, "offsetsOptional")?;
            a::dtype_in(&k, CACHE_TYPES)?;
            for t in [&kc, &v, &vc] {
                same_dtype(t, &k)?;
            }
            a::dtype_in(&sm, &[DType::I32, DType::I64])?;
            for t in opts.iter().flatten() {
                same_dtype(t, &sm)?;
            }
            let nz = cache_layout(c_str(cacheModeOptional), "cacheModeOptional")?;
            match c_str(scatterModeOptional).as_deref() {
                None | Some("None") => {}
                Some(m @ ("Alibi" | "Rope" | "Omni" | "Nct")) => {
                    return Err(NnError::invalid(format!(
                        "scatterModeOptional \"{m}\" (compressed or non-contiguous key/value) \
                         is not provided by npu-emu; only \"None\" is"
                    )))
                }
                Some(m) => {
                    return Err(NnError::invalid(format!(
                        "scatterModeOptional \"{m}\" is not one of \"None\", \"Alibi\", \
                         \"Rope\", \"Omni\", \"Nct\""
                    )))
                }
            }
            if let Some(t) = opts.iter().flatten().next() {
                return Err(NnError::invalid(format!(
                    "{} is given, but the compressed scenarios (3-5) are not provided by \
                     npu-emu; scatter mode \"None\" takes no compression tensors",
                    t.arg
                )));
            }
            if k.ndim() != 3 {
                return Err(tiling(format!(
                    "key has shape {:?}; it must be [tokens, num_head, k_head_size] (the \
                     4-D compressed form is not provided)",
                    k.shape()
                )));
            }
            let has_value = v.ndim() != 0;
            if has_value && (v.ndim() != 3 || v.shape()[..2] != k.shape()[..2]) {
                return Err(tiling(format!(
                    "value has shape {:?}; it must be 0-D or [tokens, num_head, v_head_size] \
                     with key's first two dimensions {:?}",
                    v.shape(),
                    &k.shape()[..2]
                )));
            }
            check_pa_cache(&kc, &k, nz, tiling)?;
            if has_value {
                check_pa_cache(&vc, &v, nz, tiling)?;
                let bs = |c: &T| if nz { c.shape()[2] } else { c.shape()[1] };
                if vc.shape()[0] != kc.shape()[0] || bs(&vc) != bs(&kc) {
                    return Err(tiling(format!(
                        "valueCacheRef {:?} and keyCacheRef {:?} must have the same blocks",
                        vc.shape(),
                        kc.shape()
                    )));
                }
            } else if vc.ndim() != 0 {
                return Err(tiling(format!(
                    "valueCacheRef has shape {:?}; with a 0-D value it must be 0-D",
                    vc.shape()
                )));
            }
            if sm.shape() != [k.shape()[0]] {
                return Err(tiling(format!(
                    "slotMapping has shape {:?}; it must be [{}], one slot per token",
                    sm.shape(),
                    k.shape()[0]
                )));
            }
            let mut l = Launch::new("aclnnScatterPaKvCache");
            l.input(&k);
            l.input(&sm);
            l.input(&kc);
            if has_value {
                l.input(&v);
                l.input(&vc);
            }
            l.output(&kc);
            if has_value {
                l.output(&vc);
            }
            l.finish(move |x, _| {
                if has_value {
                    engine::scatter_pa(&x[0], &x[1], &x[5], nz)?;
                    engine::scatter_pa(&x[3], &x[1], &x[6], nz)
                } else {
                    engine::scatter_pa(&x[0], &x[1], &x[3], nz)
                }
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGatherPaKvCacheGetWorkspaceSize(
    keyCache: *const c_void,
    valueCache: *const c_void,
    blockTables: *const c_void,
    seqLens: *const c_void,
    keyRef: *mut c_void,
    valueRef: *mut c_void,
    seqOffsetOptional: *const c_void,
    cacheMode: *mut c_char,
    isSeqLensCumsum: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGatherPaKvCacheGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let kc = a::tensor(keyCache, "keyCache")?;
            let vc = a::tensor(valueCache, "valueCache")?;
            let bt = a::tensor(blockTables, "blockTables")?;
            let sl = a::tensor(seqLens, "seqLens")?;
            let k = a::tensor(keyRef, "keyRef")?;
            let v = a::tensor(valueRef, "valueRef")?;
            let so = a::opt_tensor(seqOffsetOptional, "seqOffsetOptional")?;
            if cacheMode.is_null() {
                return Err(NnError::new(161001, "cacheMode is nullptr".to_string()));
            }
            a::dtype_in(&kc, CACHE_TYPES)?;
            for t in [&vc, &k, &v] {
                same_dtype(t, &kc)?;
            }
            // INT64 indices are 950-only
            a::dtype_in(&bt, &[DType::I32])?;
            same_dtype(&sl, &bt)?;
            if let Some(t) = &so {
                same_dtype(t, &bt)?;
            }
            let nz = cache_layout(c_str(cacheMode), "cacheMode")?;
            let rank = if nz { 2 } else { 3 };
            for t in [&k, &v] {
                if t.ndim() != rank {
                    return Err(NnError::invalid(format!(
                        "{} has shape {:?}; with cacheMode {} it must have {rank} dimensions",
                        t.arg,
                        t.shape(),
                        if nz { "PA_NZ" } else { "Norm" }
                    )));
                }
            }
            check_pa_cache(&kc, &k, nz, NnError::invalid)?;
            check_pa_cache(&vc, &v, nz, NnError::invalid)?;
            let bs = |c: &T| if nz { c.shape()[2] } else { c.shape()[1] };
            if vc.shape()[0] != kc.shape()[0] || bs(&vc) != bs(&kc) || v.shape()[0] != k.shape()[0]
            {
                return Err(NnError::invalid(format!(
                    "keyCache {:?} / valueCache {:?} must share blocks and keyRef {:?} / \
                     valueRef {:?} their tokens",
                    kc.shape(),
                    vc.shape(),
                    k.shape(),
                    v.shape()
                )));
            }
            if bt.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "blockTables has shape {:?}; it must be [batch, block_indices]",
                    bt.shape()
                )));
            }
            let batch = bt.shape()[0];
            let want = if isSeqLensCumsum { batch + 1 } else { batch };
            if sl.shape() != [want] {
                return Err(NnError::invalid(format!(
                    "seqLens has shape {:?}; it must be [{want}] (batch {batch}{})",
                    sl.shape(),
                    if isSeqLensCumsum {
                        " + 1, a running sum"
                    } else {
                        ""
                    }
                )));
            }
            if let Some(t) = &so {
                if t.shape() != [batch] {
                    return Err(NnError::invalid(format!(
                        "seqOffsetOptional has shape {:?}; it must be [{batch}]",
                        t.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnGatherPaKvCache");
            l.input(&kc);
            l.input(&vc);
            l.input(&bt);
            l.input(&sl);
            let has_off = so.is_some();
            if let Some(t) = &so {
                l.input(t);
            }
            l.output(&k);
            l.output(&v);
            let cumsum = isSeqLensCumsum;
            l.finish(move |x, _| {
                let (off, o) = if has_off { (Some(&x[4]), 5) } else { (None, 4) };
                engine::gather_pa(&x[0], &x[2], &x[3], off, cumsum, nz, &x[o])?;
                engine::gather_pa(&x[1], &x[2], &x[3], off, cumsum, nz, &x[o + 1])
            })
        },
    )
}

// ---------------------------------------------------------------- TopKTopPSample

#[no_mangle]
pub unsafe extern "C" fn aclnnTopKTopPSampleGetWorkspaceSize(
    logits: *const c_void,
    topK: *const c_void,
    topP: *const c_void,
    q: *const c_void,
    eps: f64,
    isNeedLogits: bool,
    topKGuess: i64,
    logitsSelectIdx: *const c_void,
    logitsTopKPSelect: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTopKTopPSampleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(logits, "logits")?;
            let k = a::tensor(topK, "topK")?;
            let p = a::tensor(topP, "topP")?;
            let q = a::opt_tensor(q, "q")?;
            let sel = a::tensor(logitsSelectIdx, "logitsSelectIdx")?;
            let kept = a::tensor(logitsTopKPSelect, "logitsTopKPSelect")?;
            a::dtype_in(&x, &[DType::F16, DType::BF16])?;
            a::dtype_in(&k, &[DType::I32])?;
            same_dtype(&p, &x)?;
            if let Some(q) = &q {
                a::dtype_in(q, &[DType::F32])?;
            }
            a::dtype_in(&sel, &[DType::I64])?;
            a::dtype_in(&kept, &[DType::F32])?;
            if x.ndim() != 2 || x.numel() == 0 || x.shape()[1] > 1 << 20 {
                return Err(NnError::invalid(format!(
                    "logits has shape {:?}; it must be a non-empty [batch, vocSize] with \
                     vocSize ≤ 2^20",
                    x.shape()
                )));
            }
            let batch = x.shape()[0];
            for t in [&k, &p, &sel] {
                if t.shape() != [batch] {
                    return Err(NnError::invalid(format!(
                        "{} has shape {:?}; it must be [{batch}], logits' leading dimension",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            if let Some(q) = &q {
                a::same_shape(q, x.shape())?;
            }
            a::same_shape(&kept, x.shape())?;
            if topKGuess <= 0 {
                return Err(NnError::invalid(format!(
                    "topKGuess {topKGuess} must be a positive integer"
                )));
            }
            if !eps.is_finite() || eps < 0.0 {
                return Err(NnError::invalid(format!(
                    "eps {eps} must be finite and ≥ 0"
                )));
            }
            let mut l = Launch::new("aclnnTopKTopPSample");
            l.input(&x);
            l.input(&k);
            l.input(&p);
            let has_q = q.is_some();
            if let Some(q) = &q {
                l.input(q);
            }
            l.output(&sel);
            l.output(&kept);
            let need = isNeedLogits;
            l.finish(move |v, _| {
                let (qv, o) = if has_q { (Some(&v[3]), 4) } else { (None, 3) };
                let kv = if need { Some(&v[o + 1]) } else { None };
                engine::top_k_top_p_sample(&v[0], &v[1], &v[2], qv, eps, &v[o], kv)
            })
        },
    )
}

crate::phase2!(
    aclnnRotaryPositionEmbeddingV2,
    aclnnInterleaveRope,
    aclnnRopeWithSinCosCache,
    aclnnRopeWithSinCosCacheV2,
    aclnnScatterPaKvCache,
    aclnnGatherPaKvCache,
    aclnnTopKTopPSample
);
