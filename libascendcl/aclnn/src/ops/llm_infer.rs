//! The inference helpers of large-model serving that torch_npu 2.9 calls:
//! `aclnn_rotary_position_embedding.h` (`aclnnRotaryPositionEmbeddingV2`, with the rotation
//! matrix), `aclnn_interleave_rope.h`, `aclnn_rope_with_sin_cos_cache.h` and `…_v2.h`. The
//! checks follow CANN's operator reference (ops-transformer); the computation is
//! `npu_emu::ops::llm_infer` and, for the plain rotations, `npu_emu::ops::fused::rope`.

use super::args::{self as a, FLOATS3};
use super::fused::{check_cos_sin, rope_last_dim, rope_mode, same_dtype, tiling};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::fused::{self, RopeMode};
use npu_emu::ops::llm_infer::{self as engine, SinCosCache};
use std::ffi::c_void;

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
            if xs.iter().any(|&n| n == 0) {
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

crate::phase2!(
    aclnnRotaryPositionEmbeddingV2,
    aclnnInterleaveRope,
    aclnnRopeWithSinCosCache,
    aclnnRopeWithSinCosCacheV2
);
