//! The fused operators of large-model code: `aclnn_rms_norm.h`, `aclnn_rms_norm_grad.h`,
//! `aclnn_rotary_position_embedding.h`, `aclnn_rotary_position_embedding_grad.h`,
//! `aclnn_apply_rotary_pos_emb.h`, `aclnn_apply_rotary_pos_emb_v2.h`, `aclnn_swi_glu.h`,
//! `aclnn_swi_glu_grad.h`, `aclnn_flash_attention_score.h` (`aclnnFlashAttentionScore`,
//! `…V2`), `aclnn_flash_attention_score_grad.h` (`aclnnFlashAttentionScoreGrad`, `…V2`) and
//! the inference attention, each version in its own header: `aclnn_prompt_flash_attention.h`
//! (and `_v2`, `_v3`), `aclnn_incre_flash_attention.h` (to `_v4`),
//! `aclnn_fused_infer_attention_score.h` (to `_v4`). Each family has one checked path; an
//! older version passes the defaults of what it lacks. The checks follow CANN's operator
//! reference; the computation is `npu_emu::ops::fused`.

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::attention_new;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::fused::{self, FaDims, FaLayout, FaParams, FaSaved, RopeMode, VarLen};
use npu_emu::ops::view::broadcast_shapes;
use std::ffi::{c_char, c_void};

/// `ACLNN_ERR_INNER_TILING_ERROR`: what CANN's reference gives for rotary-embedding shapes
/// that do not match and for a `mode` outside 0-3 (aclnnRotaryPositionEmbedding, "Returns").
const ACLNN_ERR_INNER_TILING_ERROR: i32 = 561002;

pub(super) fn tiling(msg: String) -> NnError {
    NnError::new(ACLNN_ERR_INNER_TILING_ERROR, msg)
}

pub(super) fn same_dtype(t: &T, like: &T) -> NnResult<()> {
    if t.dtype() == like.dtype() {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has data type {}, but {} has {}; they must be the same",
            t.arg,
            t.dtype(),
            like.arg,
            like.dtype()
        )))
    }
}

use super::args::T;

// ---------------------------------------------------------------- RMS norm

/// gamma's rank, checked to be a suffix of x's shape (`gamma_shape = x_shape[n:]`).
pub(super) fn gamma_suffix(x: &T, g: &T) -> NnResult<usize> {
    let (xn, gn) = (x.ndim(), g.ndim());
    if gn == 0 || gn > xn || x.shape()[xn - gn..] != *g.shape() {
        return Err(NnError::invalid(format!(
            "gamma shape {:?} must equal the last dimensions of x {:?} (gamma_shape = \
             x_shape[n:])",
            g.shape(),
            x.shape()
        )));
    }
    Ok(gn)
}

/// rstd must hold one value per row: x's leading dimensions, the normalised ones as 1.
pub(super) fn check_rstd(r: &T, x: &T, gn: usize) -> NnResult<()> {
    let lead = &x.shape()[..x.ndim() - gn];
    let mut expect = lead.to_vec();
    expect.extend(std::iter::repeat_n(1, gn));
    let rows: usize = lead.iter().product();
    // rstd_shape = x_shape[0:n] (the reference's words): a prefix of x's shape holding every
    // row, e.g. [2] for x [2, 1, 16] and gamma [16], as its example passes
    let prefix = !r.shape().is_empty()
        && r.ndim() <= lead.len()
        && r.shape() == &lead[..r.ndim()]
        && r.numel() == rows;
    if r.shape() == expect.as_slice() || prefix {
        return Ok(());
    }
    Err(NnError::invalid(format!(
        "{} has shape {:?}; expected {expect:?} ({rows} rows, rstd_shape * gamma_shape = \
         x_shape)",
        r.arg,
        r.shape()
    )))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRmsNormGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    yOut: *mut c_void,
    rstdOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRmsNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let y = a::tensor(yOut, "yOut")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            for t in [&x, &g, &y] {
                a::dtype_in(t, FLOATS3)?;
                a::max_dims(t, 8)?;
            }
            a::dtype_in(&r, &[DType::F32])?;
            same_dtype(&y, &x)?;
            if x.ndim() == 0 {
                return Err(NnError::invalid("x must have 1 to 8 dimensions, not 0"));
            }
            let gn = gamma_suffix(&x, &g)?;
            a::same_shape(&y, x.shape())?;
            check_rstd(&r, &x, gn)?;
            if !epsilon.is_finite() {
                return Err(NnError::invalid(format!("epsilon {epsilon} is not finite")));
            }
            let mut l = Launch::new("aclnnRmsNorm");
            l.input(&x);
            l.input(&g);
            l.output(&y);
            l.output(&r);
            l.finish(move |v, _| fused::rms_norm(&v[0], &v[1], epsilon, &v[2], &v[3]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRmsNormGradGetWorkspaceSize(
    dy: *const c_void,
    x: *const c_void,
    rstd: *const c_void,
    gamma: *const c_void,
    dxOut: *mut c_void,
    dgammaOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRmsNormGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let dy = a::tensor(dy, "dy")?;
            let x = a::tensor(x, "x")?;
            let r = a::tensor(rstd, "rstd")?;
            let g = a::tensor(gamma, "gamma")?;
            let dx = a::tensor(dxOut, "dxOut")?;
            let dg = a::tensor(dgammaOut, "dgammaOut")?;
            for t in [&dy, &x, &g, &dx] {
                a::dtype_in(t, FLOATS3)?;
                a::max_dims(t, 8)?;
            }
            a::dtype_in(&r, &[DType::F32])?;
            a::dtype_in(&dg, &[DType::F32, DType::F16, DType::BF16])?;
            same_dtype(&dy, &x)?;
            same_dtype(&dx, &x)?;
            if x.ndim() == 0 {
                return Err(NnError::invalid("x must have 1 to 8 dimensions, not 0"));
            }
            let gn = gamma_suffix(&x, &g)?;
            a::same_shape(&dy, x.shape())?;
            a::same_shape(&dx, x.shape())?;
            a::same_shape(&dg, g.shape())?;
            check_rstd(&r, &x, gn)?;
            let mut l = Launch::new("aclnnRmsNormGrad");
            l.input(&dy);
            l.input(&x);
            l.input(&r);
            l.input(&g);
            l.output(&dx);
            l.output(&dg);
            l.finish(move |v, _| fused::rms_norm_grad(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]))
        },
    )
}

// ---------------------------------------------------------------- rotary embedding

/// cos/sin against x: same dtype, same shape as each other, last dimension D, and
/// broadcastable to x.
pub(super) fn check_cos_sin(x: &T, c: &T, s: &T) -> NnResult<()> {
    same_dtype(c, x)?;
    same_dtype(s, x)?;
    if c.shape() != s.shape() {
        return Err(tiling(format!(
            "cos {:?} and sin {:?} must have the same shape",
            c.shape(),
            s.shape()
        )));
    }
    let ok = c.ndim() == x.ndim()
        && c.shape().last() == x.shape().last()
        && broadcast_shapes(c.shape(), x.shape()).as_deref() == Some(x.shape());
    if !ok {
        return Err(tiling(format!(
            "cos/sin shape {:?} does not fit {} {:?}: it must have the same rank and last \
             dimension and broadcast to it (for BNSD: 11SD, B1SD or BNSD; BSND: 1S1D, BS1D \
             or BSND; SBND: S11D, SB1D or SBND)",
            c.shape(),
            x.arg,
            x.shape()
        )));
    }
    Ok(())
}

pub(super) fn rope_mode(mode: i64) -> NnResult<RopeMode> {
    RopeMode::from_i64(mode).ok_or_else(|| {
        tiling(format!(
            "mode {mode} is not one of 0 (half), 1 (interleave), 2 (quarter), 3 \
             (interleave-half)"
        ))
    })
}

pub(super) fn rope_last_dim(x: &T, m: RopeMode) -> NnResult<()> {
    let d = *x.shape().last().unwrap_or(&0);
    if d == 0 || !d.is_multiple_of(m.granule()) {
        return Err(tiling(format!(
            "the last dimension D = {d} of {} must be a positive multiple of {} for mode \
             {m:?}",
            x.arg,
            m.granule()
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRotaryPositionEmbeddingGetWorkspaceSize(
    x: *const c_void,
    cos: *const c_void,
    sin: *const c_void,
    mode: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRotaryPositionEmbeddingGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let c = a::tensor(cos, "cos")?;
            let s = a::tensor(sin, "sin")?;
            let o = a::tensor(out, "out")?;
            for t in [&x, &c, &s, &o] {
                a::dtype_in(t, FLOATS3)?;
            }
            same_dtype(&o, &x)?;
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
            let mut l = Launch::new("aclnnRotaryPositionEmbedding");
            l.input(&x);
            l.input(&c);
            l.input(&s);
            l.output(&o);
            l.finish(move |v, _| fused::rope(&v[0], &v[1], &v[2], m, &v[3]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRotaryPositionEmbeddingGradGetWorkspaceSize(
    dy: *const c_void,
    cos: *const c_void,
    sin: *const c_void,
    xOptional: *const c_void,
    mode: i64,
    dxOut: *const c_void,
    dcosOut: *const c_void,
    dsinOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRotaryPositionEmbeddingGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let dy = a::tensor(dy, "dy")?;
            let c = a::tensor(cos, "cos")?;
            let s = a::tensor(sin, "sin")?;
            let x = a::opt_tensor(xOptional, "xOptional")?;
            let dx = a::tensor(dxOut, "dxOut")?;
            let dc = a::tensor(dcosOut, "dcosOut")?;
            let ds = a::tensor(dsinOut, "dsinOut")?;
            for t in [&dy, &c, &s, &dx, &dc, &ds] {
                a::dtype_in(t, FLOATS3)?;
            }
            for t in [&dx, &dc, &ds] {
                same_dtype(t, &dy)?;
            }
            if !(3..=4).contains(&dy.ndim()) {
                return Err(NnError::invalid(format!(
                    "dy has {} dimensions; it must have 3 or 4",
                    dy.ndim()
                )));
            }
            let m = rope_mode(mode)?;
            check_cos_sin(&dy, &c, &s)?;
            rope_last_dim(&dy, m)?;
            if let Some(x) = &x {
                same_dtype(x, &dy)?;
                if x.shape() != dy.shape() {
                    return Err(tiling(format!(
                        "xOptional has shape {:?}; it must equal dy {:?}",
                        x.shape(),
                        dy.shape()
                    )));
                }
            }
            // without xOptional dcosOut and dsinOut are not computed (the reference's
            // example passes empty tensors for them), so their shapes are not checked
            let outs: &[(&T, &T)] = if x.is_some() {
                &[(&dx, &dy), (&dc, &c), (&ds, &s)]
            } else {
                &[(&dx, &dy)]
            };
            for &(t, like) in outs {
                if t.shape() != like.shape() {
                    return Err(tiling(format!(
                        "{} has shape {:?}; it must equal {} {:?}",
                        t.arg,
                        t.shape(),
                        like.arg,
                        like.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnRotaryPositionEmbeddingGrad");
            l.input(&dy);
            l.input(&c);
            l.input(&s);
            let has_x = x.is_some();
            if let Some(x) = &x {
                l.input(x);
            }
            l.output(&dx);
            l.output(&dc);
            l.output(&ds);
            l.finish(move |v, _| {
                let (xv, o) = if has_x { (Some(&v[3]), 4) } else { (None, 3) };
                fused::rope_grad(&v[0], &v[1], &v[2], xv, m, &v[o], &v[o + 1], &v[o + 2])
            })
        },
    )
}

/// `aclnnApplyRotaryPosEmb`(V2): query and key rotated in place with shared cos/sin.
fn apply_rope(
    api: &'static str,
    query: *mut c_void,
    key: *mut c_void,
    cos: *const c_void,
    sin: *const c_void,
    layout: i64,
    mode: RopeMode,
) -> NnResult<Built> {
    let q = a::tensor(query, "queryRef")?;
    let k = a::tensor(key, "keyRef")?;
    let c = a::tensor(cos, "cos")?;
    let s = a::tensor(sin, "sin")?;
    for t in [&q, &k, &c, &s] {
        a::dtype_in(t, FLOATS3)?;
    }
    same_dtype(&k, &q)?;
    let rank = match layout {
        1..=3 => 4,
        4 => 3,
        _ => {
            return Err(NnError::invalid(format!(
                "layout {layout} is not one of 1 (BSND), 2 (SBND), 3 (BNSD), 4 (TND)"
            )))
        }
    };
    for t in [&q, &k] {
        if t.ndim() != rank {
            return Err(NnError::invalid(format!(
                "{} has {} dimensions; layout {layout} takes {rank}",
                t.arg,
                t.ndim()
            )));
        }
    }
    let (qs, ks) = (q.shape(), k.shape());
    // Every dimension but the heads (N) and D must agree between query and key.
    let n_dim = match layout {
        1 | 2 => 2,
        3 => 1,
        _ => 1,
    };
    let agree = (0..rank).all(|d| d == n_dim || qs[d] == ks[d]);
    if !agree {
        return Err(NnError::invalid(format!(
            "queryRef {qs:?} and keyRef {ks:?} differ outside the heads dimension"
        )));
    }
    check_cos_sin(&q, &c, &s).map_err(|e| NnError::invalid(e.msg))?;
    check_cos_sin(&k, &c, &s).map_err(|e| NnError::invalid(e.msg))?;
    rope_last_dim(&q, mode).map_err(|e| NnError::invalid(e.msg))?;
    let mut l = Launch::new(api);
    l.input(&q);
    l.input(&k);
    l.input(&c);
    l.input(&s);
    l.output(&q);
    l.output(&k);
    l.finish(move |v, _| {
        fused::rope(&v[0], &v[2], &v[3], mode, &v[4])?;
        fused::rope(&v[1], &v[2], &v[3], mode, &v[5])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnApplyRotaryPosEmbGetWorkspaceSize(
    queryRef: *mut c_void,
    keyRef: *mut c_void,
    cos: *const c_void,
    sin: *const c_void,
    layout: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyRotaryPosEmbGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            apply_rope(
                "aclnnApplyRotaryPosEmb",
                queryRef,
                keyRef,
                cos,
                sin,
                layout,
                RopeMode::Half,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnApplyRotaryPosEmbV2GetWorkspaceSize(
    queryRef: *mut c_void,
    keyRef: *mut c_void,
    cos: *const c_void,
    sin: *const c_void,
    layout: i64,
    rotaryMode: *mut c_char,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyRotaryPosEmbV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let mode = if rotaryMode.is_null() {
                RopeMode::Half
            } else {
                // SAFETY: a NUL-terminated C string from the caller.
                let s = unsafe { std::ffi::CStr::from_ptr(rotaryMode) }.to_string_lossy();
                match s.as_ref() {
                    "half" => RopeMode::Half,
                    "interleave" => RopeMode::Interleave,
                    "quarter" => RopeMode::Quarter,
                    other => {
                        return Err(NnError::invalid(format!(
                            "rotaryMode \"{other}\" is not one of \"half\", \"interleave\", \
                             \"quarter\""
                        )))
                    }
                }
            };
            apply_rope(
                "aclnnApplyRotaryPosEmbV2",
                queryRef,
                keyRef,
                cos,
                sin,
                layout,
                mode,
            )
        },
    )
}

// ---------------------------------------------------------------- SwiGLU

fn swiglu_dim(x: &T, dim: i64) -> NnResult<usize> {
    if x.ndim() == 0 {
        return Err(NnError::invalid("x must have at least 1 dimension"));
    }
    let n = x.ndim() as i64;
    if dim < -n || dim >= n {
        return Err(NnError::invalid(format!(
            "dim {dim} is out of range [{}, {}] for x {:?}",
            -n,
            n - 1,
            x.shape()
        )));
    }
    let d = if dim < 0 { dim + n } else { dim } as usize;
    if !x.shape()[d].is_multiple_of(2) || x.numel() == 0 {
        return Err(NnError::invalid(format!(
            "x {:?} must be non-empty and even along dim {dim}",
            x.shape()
        )));
    }
    Ok(d)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSwiGluGetWorkspaceSize(
    x: *const c_void,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSwiGluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS3)?;
            a::dtype_in(&o, FLOATS3)?;
            same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let d = swiglu_dim(&x, dim)?;
            let mut half = x.shape().to_vec();
            half[d] /= 2;
            a::same_shape(&o, &half)?;
            let mut l = Launch::new("aclnnSwiGlu");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| fused::swiglu(&v[0], d, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSwiGluGradGetWorkspaceSize(
    yGrad: *const c_void,
    x: *const c_void,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSwiGluGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(yGrad, "yGrad")?;
            let x = a::tensor(x, "x")?;
            let o = a::tensor(out, "out")?;
            for t in [&g, &x, &o] {
                a::dtype_in(t, FLOATS3)?;
            }
            same_dtype(&g, &x)?;
            same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let d = swiglu_dim(&x, dim)?;
            let mut half = x.shape().to_vec();
            half[d] /= 2;
            a::same_shape(&g, &half)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnSwiGluGrad");
            l.input(&g);
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| fused::swiglu_grad(&v[0], &v[1], d, &v[2]))
        },
    )
}

// ---------------------------------------------------------------- flash attention

/// The attributes and shapes of a flash-attention call, checked.
pub(super) struct Fa {
    pub(super) p: FaParams,
    pub(super) dims: FaDims,
}

/// The scalar attributes of `aclnnFlashAttentionScore`/`…Grad` (and their V2, whose
/// `pseType` the first versions fix at 1: `scale·(q·kᵀ + pse)`).
pub(super) struct FaAttrs {
    pub(super) scale: f64,
    pub(super) keep_prob: f64,
    pub(super) pre: i64,
    pub(super) next: i64,
    pub(super) head_num: i64,
    pub(super) layout: *const c_char,
    pub(super) sparse: i64,
    pub(super) pse_type: i64,
    /// `prefixOptional` (sparse modes 5 and 6; NULL where the version has none).
    pub(super) prefix: *const c_void,
}

/// `prefixOptional` of sparse modes 5 and 6: each batch's prefix N (one entry for every
/// batch, or one per batch), within `[0, S2]` when S1 > S2 and `[S2 - S1, S2]` otherwise.
fn prefix_arg(h: *const c_void, dims: &FaDims) -> NnResult<Vec<usize>> {
    let Some(v) = a::opt_int_array(h, "prefixOptional")?.filter(|v| !v.is_empty()) else {
        return Err(NnError::invalid(
            "sparseMode 5 and 6 need prefixOptional (each batch's prefix length N)",
        ));
    };
    if v.len() != dims.b && v.len() != 1 {
        return Err(NnError::invalid(format!(
            "prefixOptional has {} entries; it takes one per batch ({})",
            v.len(),
            dims.b
        )));
    }
    let lo = dims.s2.saturating_sub(dims.s1) as i64;
    if let Some(x) = v.iter().find(|&&x| x < lo || x > dims.s2 as i64) {
        return Err(NnError::invalid(format!(
            "prefixOptional {v:?} has {x}, outside [{lo}, {}]",
            dims.s2
        )));
    }
    Ok((0..dims.b)
        .map(|b| v[if v.len() == 1 { 0 } else { b }] as usize)
        .collect())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn fa_check(
    q: &T,
    k: &T,
    v: &T,
    pse: Option<&T>,
    drop: Option<&T>,
    mask: Option<&T>,
    at: &FaAttrs,
    vl: Option<VarLen>,
) -> NnResult<Fa> {
    let FaAttrs {
        scale,
        keep_prob,
        pre,
        next,
        head_num,
        layout,
        sparse,
        pse_type,
        prefix,
    } = *at;
    for t in [q, k, v] {
        a::dtype_in(t, FLOATS3)?;
    }
    same_dtype(k, q)?;
    same_dtype(v, q)?;
    if layout.is_null() {
        return Err(NnError::nullptr("inputLayout is nullptr"));
    }
    // SAFETY: a NUL-terminated C string from the caller.
    let ls = unsafe { std::ffi::CStr::from_ptr(layout) }.to_string_lossy();
    let want_tnd = vl.is_some();
    let l = FaLayout::parse(&ls)
        .filter(|l| (*l == FaLayout::Tnd) == want_tnd)
        .ok_or_else(|| {
            NnError::invalid(match (want_tnd, &*ls) {
                (true, _) => format!(
                    "inputLayout \"{ls}\" is not TND (the only layout of the variable-length \
                     operators)"
                ),
                (false, "TND") => "inputLayout \"TND\" is the layout of \
                                   aclnnFlashAttentionVarLenScore/UnpaddingScoreGrad"
                    .to_string(),
                _ => format!("inputLayout \"{ls}\" is not one of BSH, SBH, BSND, BNSD"),
            })
        })?;
    for t in [q, k, v] {
        if t.ndim() != l.rank() {
            return Err(NnError::invalid(format!(
                "{} has {} dimensions; layout {ls} takes {}",
                t.arg,
                t.ndim(),
                l.rank()
            )));
        }
    }
    if head_num <= 0 {
        return Err(NnError::invalid(format!(
            "headNum {head_num} must be positive"
        )));
    }
    if matches!(l, FaLayout::Bsh | FaLayout::Sbh) && !q.shape()[2].is_multiple_of(head_num as usize)
    {
        return Err(NnError::invalid(format!(
            "query H = {} is not a multiple of headNum {head_num}",
            q.shape()[2]
        )));
    }
    if !(0.0..=1.0).contains(&keep_prob) {
        return Err(NnError::invalid(format!(
            "keepProb {keep_prob} is outside [0, 1]"
        )));
    }
    if !scale.is_finite() {
        return Err(NnError::invalid(format!(
            "scaleValue {scale} is not finite"
        )));
    }
    if !(0..=8).contains(&sparse) {
        return Err(NnError::invalid(format!(
            "sparseMode {sparse} is not one of 0-8"
        )));
    }
    match sparse {
        7 | 8 if want_tnd => {}
        5 if want_tnd => {
            return Err(NnError::invalid(
                "sparseMode 5 (prefix, not compressed) is not supported with variable lengths",
            ))
        }
        5 | 6 if !want_tnd => {}
        5..=8 => {
            return Err(NnError::invalid(format!(
                "sparseMode {sparse} (prefix / variable-length modes) is not supported by \
                 npu-emu's {}; modes 0-4{} are",
                if want_tnd {
                    "aclnnFlashAttentionVarLenScore"
                } else {
                    "aclnnFlashAttentionScore"
                },
                if want_tnd { ", 7 and 8" } else { ", 5 and 6" }
            )))
        }
        _ => {}
    }
    let mut p = FaParams::training(l, head_num as usize, scale, keep_prob, pre, next, sparse);
    p.varlen = vl;
    match pse_type {
        1 => {}
        0 => p.pse_after_scale = true,
        // 2 and 3 generate an ALiBi pse from slopes; without a pse tensor there is none
        2 | 3 if pse.is_none() => {}
        2 | 3 => {
            return Err(NnError::invalid(format!(
                "pseType {pse_type} (a pse generated inside from the slopes in the pse \
                 argument) is not supported by npu-emu; pseType 0 and 1 take a full pse"
            )))
        }
        _ => {
            return Err(NnError::invalid(format!(
                "pseType {pse_type} is not one of 0-3"
            )))
        }
    }
    let mut dims = FaDims::of(&p, q.shape(), k.shape(), v.shape()).map_err(NnError::invalid)?;
    let mut scores = dims.b * dims.n1 * dims.s1 * dims.s2;
    if let Some(vl) = &p.varlen {
        // B, S1 and S2 of the masks: the sequences and their longest lengths
        let seqs = vl.seqs();
        for (ends, t, arg) in [
            (&vl.q_ends, dims.s1, "actualSeqQLenOptional"),
            (&vl.kv_ends, dims.s2, "actualSeqKvLenOptional"),
        ] {
            if ends.last() != Some(&t) {
                return Err(NnError::invalid(format!(
                    "{arg} {ends:?} must end at T = {t} (the {} rows)",
                    if arg == "actualSeqQLenOptional" {
                        "query"
                    } else {
                        "key/value"
                    }
                )));
            }
        }
        dims.b = seqs.len();
        dims.s1 = seqs.iter().map(|s| s.1).max().unwrap_or(0);
        dims.s2 = seqs.iter().map(|s| s.3).max().unwrap_or(0);
        scores = seqs.iter().map(|s| dims.n1 * s.1 * s.3).sum();
        if pse.is_some() && seqs.iter().any(|s| (s.1, s.3) != (dims.s1, dims.s2)) {
            return Err(NnError::invalid(
                "realShiftOptional/pseShiftOptional with layout TND needs sequences of equal \
                 lengths in npu-emu (its [B, N, S1, S2] rows are then each sequence's)",
            ));
        }
    }
    let full = [dims.b, dims.n1, dims.s1, dims.s2];
    if let Some(m) = mask {
        a::dtype_in(m, &[DType::Bool, DType::U8])?;
        let ok = if sparse == 6 {
            m.shape() == [3072, 2048]
        } else if sparse >= 2 && sparse != 5 {
            m.shape() == [2048, 2048]
        } else {
            match m.ndim() {
                2 => m.shape() == [dims.s1, dims.s2],
                4 => (0..4).all(|d| m.shape()[d] == full[d] || (d < 2 && m.shape()[d] == 1)),
                _ => false,
            }
        };
        if !ok {
            let want = if sparse == 6 {
                "[3072, 2048] (the compressed prefix mask of sparseMode 6)".to_string()
            } else if sparse >= 2 && sparse != 5 {
                "[2048, 2048] (the compressed mask of sparseMode 2-4)".to_string()
            } else {
                format!(
                    "[S1, S2] = [{}, {}] or [B|1, N|1, S1, S2] = [{}|1, {}|1, {}, {}]",
                    dims.s1, dims.s2, dims.b, dims.n1, dims.s1, dims.s2
                )
            };
            return Err(NnError::invalid(format!(
                "attenMaskOptional has shape {:?}; sparseMode {sparse} takes {want}",
                m.shape()
            )));
        }
    } else if sparse >= 2 {
        // Modes 2-4 (and 6) build their pattern from the compressed mask, mode 5 takes the
        // whole one; mode 1 (allMask) without a mask masks nothing (torch_npu's documented
        // example calls it so).
        return Err(NnError::invalid(format!(
            "sparseMode {sparse} needs attenMaskOptional ({})",
            match sparse {
                5 => "the whole [B|1, N|1, S1, S2] mask",
                6 => "the compressed [3072, 2048] prefix mask",
                _ => "the compressed [2048, 2048] mask",
            }
        )));
    }
    if matches!(sparse, 5 | 6) && !want_tnd {
        p.prefix = Some(prefix_arg(prefix, &dims)?);
    }
    if let Some(ps) = pse {
        same_dtype(ps, q)?;
        let ok =
            ps.ndim() == 4 && broadcast_shapes(ps.shape(), &full).as_deref() == Some(&full[..]);
        if !ok {
            return Err(NnError::invalid(format!(
                "pse has shape {:?}; it must broadcast to [B, N, S1, S2] = {full:?}",
                ps.shape()
            )));
        }
    }
    if keep_prob < 1.0 && keep_prob > 0.0 {
        let numel = scores;
        match drop {
            None => {
                return Err(NnError::invalid(format!(
                    "keepProb {keep_prob} < 1 needs dropMaskOptional (the keep bits of the \
                     {numel} scores, from aclnnDropoutGenMaskV2)"
                )))
            }
            Some(d) => {
                a::dtype_in(d, &[DType::U8, DType::Bool])?;
                if d.numel() < numel.div_ceil(8) {
                    return Err(NnError::invalid(format!(
                        "dropMaskOptional holds {} bytes; {numel} scores need at least {}",
                        d.numel(),
                        numel.div_ceil(8)
                    )));
                }
            }
        }
    }
    Ok(Fa { p, dims })
}

/// softmaxMax/softmaxSum: float32 `[B, N1, S1, 8]`; with TND `[N1, T, 8]` (or `[T, N1, 8]`:
/// torch_npu allocates that shape whichever layout the values take).
pub(super) fn check_stat(t: &T, fa: &Fa) -> NnResult<()> {
    a::dtype_in(t, &[DType::F32])?;
    let dims = &fa.dims;
    match &fa.p.varlen {
        Some(vl) => {
            let rows = *vl.q_ends.last().unwrap_or(&0);
            let (a, b) = ([dims.n1, rows, 8], [rows, dims.n1, 8]);
            if t.shape() != a && t.shape() != b {
                return Err(NnError::invalid(format!(
                    "{} has shape {:?}; layout TND takes [N, T, 8] = {a:?} (or {b:?})",
                    t.arg,
                    t.shape()
                )));
            }
            Ok(())
        }
        None => a::same_shape(t, &[dims.b, dims.n1, dims.s1, 8]),
    }
}

/// The shape of attentionOut/dy: the layout's, with all T rows for TND.
pub(super) fn out_shape(fa: &Fa) -> Vec<usize> {
    let dm = &fa.dims;
    let s = match &fa.p.varlen {
        Some(vl) => *vl.q_ends.last().unwrap_or(&0),
        None => dm.s1,
    };
    FaDims::shape(fa.p.layout, dm.b, s, dm.n1, dm.dv)
}

/// `aclnnFlashAttentionScore` and `…V2`: query, key, value, the optional pse, dropout mask
/// and attention mask (`ins`), and softmaxMax, softmaxSum, softmaxOut and attentionOut
/// (`outs`). V2's qStartIdx/kvStartIdx only place the pse of pseType 2/3, which npu-emu
/// rejects, so they are read and not used.
unsafe fn fa_forward(
    api: &'static str,
    ins: [*const c_void; 6],
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
    let mut next = 3;
    let mut opt = |t: &Option<T>, l: &mut Launch| {
        t.as_ref().map(|t| {
            l.input(t);
            next += 1;
            next - 1
        })
    };
    let ip = opt(&pse, &mut l);
    let id = opt(&drop, &mut l);
    let im = opt(&mask, &mut l);
    let o = l.output(&smax);
    l.output(&ssum);
    l.output(&out);
    let p = fa.p;
    l.finish(move |vs, _| {
        fused::flash_attention(
            &vs[0],
            &vs[1],
            &vs[2],
            ip.map(|i| &vs[i]),
            id.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            &p,
            &vs[o],
            &vs[o + 1],
            &vs[o + 2],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    prefixOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
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
        pse_type: 1,
        prefix: prefixOptional,
    };
    phase1(
        "aclnnFlashAttentionScoreGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            fa_forward(
                "aclnnFlashAttentionScore",
                [
                    query,
                    key,
                    value,
                    realShiftOptional,
                    dropMaskOptional,
                    attenMaskOptional,
                ],
                &at,
                None,
                [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreV2GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
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
        "aclnnFlashAttentionScoreV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            a::opt_int_array(qStartIdxOptional, "qStartIdxOptional")?;
            a::opt_int_array(kvStartIdxOptional, "kvStartIdxOptional")?;
            fa_forward(
                "aclnnFlashAttentionScoreV2",
                [
                    query,
                    key,
                    value,
                    realShiftOptional,
                    dropMaskOptional,
                    attenMaskOptional,
                ],
                &at,
                None,
                [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
            )
        },
    )
}

/// `aclnnFlashAttentionScoreGrad` and `…V2`: query, keyIn, value, dy, the optional pse,
/// dropout mask, attention mask, saved softmaxMax/softmaxSum and attentionIn (`ins`), and
/// dqOut, dkOut, dvOut, dpseOut (`outs`).
unsafe fn fa_backward(
    api: &'static str,
    ins: [*const c_void; 10],
    at: &FaAttrs,
    vl: Option<VarLen>,
    outs: [*const c_void; 4],
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
    let dq = a::tensor(outs[0], "dqOut")?;
    let dk = a::tensor(outs[1], "dkOut")?;
    let dv = a::tensor(outs[2], "dvOut")?;
    let dpse = a::opt_tensor(outs[3], "dpseOut")?;
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
    // Saved statistics that are empty (torch_npu passes `at::empty({0})` for the
    // unused ones) count as absent; any other shape must be the forward's.
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
    let dpse = dpse.filter(|t| t.numel() > 0);
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
    let mut l = Launch::new(api);
    l.input(&q);
    l.input(&k);
    l.input(&v);
    l.input(&g);
    let mut next = 4;
    let mut opt = |t: &Option<T>, l: &mut Launch| {
        t.as_ref().map(|t| {
            l.input(t);
            next += 1;
            next - 1
        })
    };
    let ip = opt(&pse, &mut l);
    let id = opt(&drop, &mut l);
    let im = opt(&mask, &mut l);
    let imx = opt(&smax, &mut l);
    let ism = opt(&ssum, &mut l);
    let iai = opt(&ain, &mut l);
    let o = l.output(&dq);
    l.output(&dk);
    l.output(&dv);
    let idp = dpse.as_ref().map(|t| l.output(t));
    let p = fa.p;
    l.finish(move |vs, _| {
        let saved = FaSaved {
            softmax_max: imx.map(|i| &vs[i]),
            softmax_sum: ism.map(|i| &vs[i]),
            attention_in: iai.map(|i| &vs[i]),
        };
        fused::flash_attention_grad(
            &vs[0],
            &vs[1],
            &vs[2],
            &vs[3],
            ip.map(|i| &vs[i]),
            id.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            &saved,
            &p,
            &vs[o],
            &vs[o + 1],
            &vs[o + 2],
            idp.map(|i| &vs[i]),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreGradGetWorkspaceSize(
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
    prefixOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    dpseOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (
        paddingMaskOptional,
        prefixOptional,
        innerPrecise,
        softmaxInOptional,
    );
    let at = FaAttrs {
        scale: scaleValue,
        keep_prob: keepProb,
        pre: preTokens,
        next: nextTokens,
        head_num: headNum,
        layout: inputLayout,
        sparse: sparseMode,
        pse_type: 1,
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
        "aclnnFlashAttentionScoreGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            fa_backward(
                "aclnnFlashAttentionScoreGrad",
                ins,
                &at,
                None,
                [dqOut, dkOut, dvOut, dpseOut],
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionScoreGradV2GetWorkspaceSize(
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
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (
        paddingMaskOptional,
        prefixOptional,
        innerPrecise,
        softmaxInOptional,
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
        "aclnnFlashAttentionScoreGradV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            a::opt_int_array(qStartIdxOptional, "qStartIdxOptional")?;
            a::opt_int_array(kvStartIdxOptional, "kvStartIdxOptional")?;
            fa_backward(
                "aclnnFlashAttentionScoreGradV2",
                ins,
                &at,
                None,
                [dqOut, dkOut, dvOut, dpseOut],
            )
        },
    )
}

// ---------------------------------------------------------------- variable length (TND)

/// `actualSeqQLenOptional`/`actualSeqKvLenOptional`: the cumulative ends of the packed
/// sequences (`[2, 4, 4, 6]` for lengths 2, 2, 0, 2), one per sequence (1 to 2048 of them);
/// `softmax_layout` is V4's softmaxOutLayout/softmaxInLayout.
fn varlen(q: *const c_void, kv: *const c_void, softmax_layout: *const c_char) -> NnResult<VarLen> {
    let mut ends = Vec::with_capacity(2);
    for (h, arg) in [(q, "actualSeqQLenOptional"), (kv, "actualSeqKvLenOptional")] {
        let Some(v) = a::opt_int_array(h, arg)? else {
            return Err(NnError::invalid(format!(
                "{arg} is required: layout TND takes each sequence's cumulative length"
            )));
        };
        if v.is_empty() || v.len() > 2048 {
            return Err(NnError::invalid(format!(
                "{arg} has {} entries; it takes one per sequence, 1 to 2048",
                v.len()
            )));
        }
        if v[0] < 0 || v.windows(2).any(|w| w[1] < w[0]) {
            return Err(NnError::invalid(format!(
                "{arg} {v:?} is not cumulative (non-negative and non-decreasing)"
            )));
        }
        ends.push(v.into_iter().map(|x| x as usize).collect::<Vec<_>>());
    }
    let kv_ends = ends.pop().unwrap_or_default();
    let q_ends = ends.pop().unwrap_or_default();
    if q_ends.len() != kv_ends.len() {
        return Err(NnError::invalid(format!(
            "actualSeqQLenOptional has {} entries and actualSeqKvLenOptional {}; they must match",
            q_ends.len(),
            kv_ends.len()
        )));
    }
    let stats_tnd = if softmax_layout.is_null() {
        false
    } else {
        // SAFETY: a NUL-terminated C string from the caller.
        match unsafe { std::ffi::CStr::from_ptr(softmax_layout) }.to_bytes() {
            b"" => false,
            b"same_as_input" => true,
            s => {
                return Err(NnError::invalid(format!(
                    "softmax layout \"{}\" is not \"\" or \"same_as_input\"",
                    String::from_utf8_lossy(s)
                )))
            }
        }
    };
    Ok(VarLen {
        q_ends,
        kv_ends,
        stats_tnd,
    })
}

/// V3's queryRope/keyRope (and keyInRope): npu-emu computes without them.
fn no_rope(args: &[(*const c_void, &'static str)]) -> NnResult<()> {
    for &(h, arg) in args {
        if a::opt_tensor(h, arg)?.is_some_and(|t| t.numel() > 0) {
            return Err(NnError::invalid(format!(
                "{arg} (the rope part of query/key) is not supported by npu-emu; pass nullptr"
            )));
        }
    }
    Ok(())
}

/// The host arguments only the TND operators take: prefixOptional, actualSeqQLenOptional,
/// actualSeqKvLenOptional, qStartIdxOptional, kvStartIdxOptional (V2, V3; null otherwise)
/// and V4's softmax layout string.
pub(super) struct VarLenArgs {
    pub(super) prefix: *const c_void,
    pub(super) q_lens: *const c_void,
    pub(super) kv_lens: *const c_void,
    pub(super) q_start: *const c_void,
    pub(super) kv_start: *const c_void,
    pub(super) softmax_layout: *const c_char,
    /// V3's queryRope and keyRope/keyInRope (null otherwise).
    pub(super) rope: [(*const c_void, &'static str); 2],
}

impl VarLenArgs {
    /// The sequences, after reading the arguments npu-emu does not use: prefix (sparse mode
    /// 6, rejected) and the start indices (which place the generated pse of pseType 2/3).
    pub(super) fn read(&self) -> NnResult<VarLen> {
        a::opt_int_array(self.prefix, "prefixOptional")?;
        a::opt_int_array(self.q_start, "qStartIdxOptional")?;
        a::opt_int_array(self.kv_start, "kvStartIdxOptional")?;
        no_rope(&self.rope)?;
        varlen(self.q_lens, self.kv_lens, self.softmax_layout)
    }
}

/// aclnnFlashAttentionVarLenScore V1-V4: the TND path of [`fa_forward`].
unsafe fn varlen_forward(
    names: [&'static str; 2],
    ins: [*const c_void; 6],
    va: VarLenArgs,
    at: &FaAttrs,
    outs: [*const c_void; 4],
    ws: (*mut u64, *mut *mut c_void),
) -> i32 {
    phase1(names[0], ws.0, ws.1, || {
        fa_forward(names[1], ins, at, Some(va.read()?), outs)
    })
}

/// aclnnFlashAttentionUnpaddingScoreGrad V1-V4: the TND path of [`fa_backward`].
unsafe fn varlen_backward(
    names: [&'static str; 2],
    ins: [*const c_void; 10],
    va: VarLenArgs,
    at: &FaAttrs,
    outs: [*const c_void; 4],
    ws: (*mut u64, *mut *mut c_void),
) -> i32 {
    phase1(names[0], ws.0, ws.1, || {
        fa_backward(names[1], ins, at, Some(va.read()?), outs)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    prefixOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
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
        pse_type: 1,
        prefix: prefixOptional,
    };
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: std::ptr::null(),
        kv_start: std::ptr::null(),
        softmax_layout: std::ptr::null(),
        rope: [(std::ptr::null(), ""); 2],
    };
    varlen_forward(
        [
            "aclnnFlashAttentionVarLenScoreGetWorkspaceSize",
            "aclnnFlashAttentionVarLenScore",
        ],
        [
            query,
            key,
            value,
            realShiftOptional,
            dropMaskOptional,
            attenMaskOptional,
        ],
        va,
        &at,
        [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionVarLenScoreV2GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
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
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: qStartIdxOptional,
        kv_start: kvStartIdxOptional,
        softmax_layout: std::ptr::null(),
        rope: [(std::ptr::null(), ""); 2],
    };
    varlen_forward(
        [
            "aclnnFlashAttentionVarLenScoreV2GetWorkspaceSize",
            "aclnnFlashAttentionVarLenScoreV2",
        ],
        [
            query,
            key,
            value,
            realShiftOptional,
            dropMaskOptional,
            attenMaskOptional,
        ],
        va,
        &at,
        [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionVarLenScoreV3GetWorkspaceSize(
    query: *const c_void,
    queryRope: *const c_void,
    key: *const c_void,
    keyRope: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
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
    softmaxMaxOut: *const c_void,
    softmaxSumOut: *const c_void,
    softmaxOutOut: *const c_void,
    attentionOutOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (paddingMaskOptional, innerPrecise);
    let rope = [(queryRope, "queryRope"), (keyRope, "keyRope")];
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
        softmax_layout: std::ptr::null(),
        rope,
    };
    varlen_forward(
        [
            "aclnnFlashAttentionVarLenScoreV3GetWorkspaceSize",
            "aclnnFlashAttentionVarLenScoreV3",
        ],
        [
            query,
            key,
            value,
            realShiftOptional,
            dropMaskOptional,
            attenMaskOptional,
        ],
        va,
        &at,
        [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionVarLenScoreV4GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    realShiftOptional: *const c_void,
    dropMaskOptional: *const c_void,
    paddingMaskOptional: *const c_void,
    attenMaskOptional: *const c_void,
    prefixOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
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
        pse_type: 1,
        prefix: prefixOptional,
    };
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: std::ptr::null(),
        kv_start: std::ptr::null(),
        softmax_layout: softmaxOutLayout,
        rope: [(std::ptr::null(), ""); 2],
    };
    varlen_forward(
        [
            "aclnnFlashAttentionVarLenScoreV4GetWorkspaceSize",
            "aclnnFlashAttentionVarLenScoreV4",
        ],
        [
            query,
            key,
            value,
            realShiftOptional,
            dropMaskOptional,
            attenMaskOptional,
        ],
        va,
        &at,
        [softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionUnpaddingScoreGradGetWorkspaceSize(
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
    prefixOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    dpseOut: *const c_void,
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
        pse_type: 1,
        prefix: prefixOptional,
    };
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: std::ptr::null(),
        kv_start: std::ptr::null(),
        softmax_layout: std::ptr::null(),
        rope: [(std::ptr::null(), ""); 2],
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
    varlen_backward(
        [
            "aclnnFlashAttentionUnpaddingScoreGradGetWorkspaceSize",
            "aclnnFlashAttentionUnpaddingScoreGrad",
        ],
        ins,
        va,
        &at,
        [dqOut, dkOut, dvOut, dpseOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionUnpaddingScoreGradV2GetWorkspaceSize(
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
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    dpseOut: *const c_void,
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
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: qStartIdxOptional,
        kv_start: kvStartIdxOptional,
        softmax_layout: std::ptr::null(),
        rope: [(std::ptr::null(), ""); 2],
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
    varlen_backward(
        [
            "aclnnFlashAttentionUnpaddingScoreGradV2GetWorkspaceSize",
            "aclnnFlashAttentionUnpaddingScoreGradV2",
        ],
        ins,
        va,
        &at,
        [dqOut, dkOut, dvOut, dpseOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionUnpaddingScoreGradV3GetWorkspaceSize(
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
    dqOut: *const c_void,
    dqRopeOut: *const c_void,
    dkOut: *const c_void,
    dkRopeOut: *const c_void,
    dvOut: *const c_void,
    dpseOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (
        paddingMaskOptional,
        innerPrecise,
        softmaxInOptional,
        dqRopeOut,
        dkRopeOut,
    );
    let rope = [(queryRope, "queryRope"), (keyInRope, "keyInRope")];
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
        softmax_layout: std::ptr::null(),
        rope,
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
    varlen_backward(
        [
            "aclnnFlashAttentionUnpaddingScoreGradV3GetWorkspaceSize",
            "aclnnFlashAttentionUnpaddingScoreGradV3",
        ],
        ins,
        va,
        &at,
        [dqOut, dkOut, dvOut, dpseOut],
        (workspaceSize, executor),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlashAttentionUnpaddingScoreGradV4GetWorkspaceSize(
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
    prefixOptional: *const c_void,
    actualSeqQLenOptional: *const c_void,
    actualSeqKvLenOptional: *const c_void,
    scaleValue: f64,
    keepProb: f64,
    preTokens: i64,
    nextTokens: i64,
    headNum: i64,
    inputLayout: *mut c_char,
    innerPrecise: i64,
    sparseMode: i64,
    dqOut: *const c_void,
    dkOut: *const c_void,
    dvOut: *const c_void,
    dpseOut: *const c_void,
    softmaxInLayout: *mut c_char,
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
        pse_type: 1,
        prefix: prefixOptional,
    };
    let va = VarLenArgs {
        prefix: prefixOptional,
        q_lens: actualSeqQLenOptional,
        kv_lens: actualSeqKvLenOptional,
        q_start: std::ptr::null(),
        kv_start: std::ptr::null(),
        softmax_layout: softmaxInLayout,
        rope: [(std::ptr::null(), ""); 2],
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
    varlen_backward(
        [
            "aclnnFlashAttentionUnpaddingScoreGradV4GetWorkspaceSize",
            "aclnnFlashAttentionUnpaddingScoreGradV4",
        ],
        ins,
        va,
        &at,
        [dqOut, dkOut, dvOut, dpseOut],
        (workspaceSize, executor),
    )
}

// ---------------------------------------------------------------- inference attention

/// `t` seen as 4-D `[B|1, N|1, S1, S2]` from the mask shapes the inference operators take:
/// `[S1, S2]`, `[B|1, S1, S2]`, `[B|1, N|1, S1, S2]`, and for a single query row (`s1 == 1`)
/// also `[B, S2]`.
fn mask4(m: &T, dims: &FaDims, sparse: i64) -> NnResult<T> {
    a::dtype_in(m, &[DType::Bool, DType::U8, DType::I8])?;
    if sparse >= 2 {
        if m.shape().iter().product::<usize>() != 2048 * 2048
            || m.shape().iter().rev().take(2).any(|&d| d != 2048)
        {
            return Err(NnError::invalid(format!(
                "attenMask has shape {:?}; sparseMode {sparse} takes the compressed [2048, 2048] \
                 mask ([1, 2048, 2048] and [1, 1, 2048, 2048] too)",
                m.shape()
            )));
        }
        return Ok(m.clone());
    }
    let (sh, st) = (m.shape().to_vec(), m.layout.strides.clone());
    let (b, n, s1, s2) = (dims.b, dims.n1, dims.s1, dims.s2);
    let (shape, strides): (Vec<usize>, Vec<isize>) = match sh.len() {
        2 if dims.s1 == 1 && sh == [b, s2] => (vec![b, 1, 1, s2], vec![st[0], 0, 0, st[1]]),
        2 => (vec![1, 1, sh[0], sh[1]], vec![0, 0, st[0], st[1]]),
        3 => (vec![sh[0], 1, sh[1], sh[2]], vec![st[0], 0, st[1], st[2]]),
        4 => (sh.clone(), st),
        _ => (vec![], vec![]),
    };
    let ok = shape.len() == 4
        && (shape[0] == b || shape[0] == 1)
        && (shape[1] == n || shape[1] == 1)
        && shape[2] == s1
        && shape[3] == s2;
    if !ok {
        return Err(NnError::invalid(format!(
            "attenMask has shape {sh:?}; it must be [S1, S2], [B|1, S1, S2] or [B|1, N|1, S1, S2] \
             with B = {b}, N = {n}, S1 = {s1}, S2 = {s2}{}",
            if s1 == 1 { " (or [B, S2])" } else { "" }
        )));
    }
    let mut t = m.clone();
    t.layout.shape = shape;
    t.layout.strides = strides;
    Ok(t)
}

/// Per-batch lengths (`actualSeqLengths`/`actualSeqLengthsKv`): one per batch (or one for
/// all), each at most `max`.
fn lens(h: *const c_void, arg: &'static str, b: usize, max: usize) -> NnResult<Option<Vec<usize>>> {
    let Some(v) = a::opt_int_array(h, arg)? else {
        return Ok(None);
    };
    if v.is_empty() {
        return Ok(None);
    }
    // As the reference says: one entry is every batch's; with at least B entries the first B
    // are used; other lengths are not supported.
    if v.len() < b && v.len() != 1 {
        return Err(NnError::invalid(format!(
            "{arg} has {} entries; it takes one, or one per batch ({b})",
            v.len()
        )));
    }
    let v = &v[..v.len().min(b)];
    if let Some(&x) = v.iter().find(|&&x| x < 0 || x as usize > max) {
        return Err(NnError::invalid(format!(
            "{arg} {v:?} has {x}, outside [0, {max}]"
        )));
    }
    let mut out: Vec<usize> = v.iter().map(|&x| x as usize).collect();
    if out.len() == 1 {
        out = vec![out[0]; b];
    }
    Ok(Some(out))
}

/// Inputs the emulator does not model (full quantization, padding sizes, shared prefixes,
/// split rope, sinks): each must be NULL.
fn no_quant(args: &[(*const c_void, &str)]) -> NnResult<()> {
    for (h, name) in args {
        if !h.is_null() {
            return Err(NnError::invalid(format!(
                "{name} is not supported by npu-emu (it models attention over one key and one \
                 value tensor, paged or not, antiquantized or not); pass nullptr"
            )));
        }
    }
    Ok(())
}

/// The full quantization of PromptFlashAttentionV2/V3 and FusedInferAttentionScore
/// (`dequantScale1`, `quantScale1`, `dequantScale2`, [`fused::FullQuant`]): with an INT8
/// query, key and value all three are required (dequant scales UINT64 (or INT64, as
/// aclnnTransQuantParam makes them) or FLOAT32, quantScale1 FLOAT32, one element each);
/// with a FLOAT16/BFLOAT16 query all three must be NULL. npu-emu models it over one dense
/// key and value tensor.
fn full_quant_in(
    q: &T,
    k: &T,
    v: &T,
    h: [(*const c_void, &'static str); 3],
) -> NnResult<Option<[T; 3]>> {
    let [d1, s1, d2] = [
        a::opt_tensor(h[0].0, h[0].1)?,
        a::opt_tensor(h[1].0, h[1].1)?,
        a::opt_tensor(h[2].0, h[2].1)?,
    ];
    if q.dtype() != DType::I8 {
        if let Some(t) = [&d1, &s1, &d2].into_iter().flatten().next() {
            return Err(NnError::invalid(format!(
                "{} is given but query is {:?}; full quantization takes an INT8 query, key and \
                 value (pass nullptr)",
                t.arg,
                q.dtype()
            )));
        }
        return Ok(None);
    }
    for t in [k, v] {
        if t.dtype() != DType::I8 {
            return Err(NnError::invalid(format!(
                "query is INT8 (full quantization) but {} is {:?}; it must be INT8 too",
                t.arg,
                t.dtype()
            )));
        }
    }
    let (Some(d1), Some(s1), Some(d2)) = (d1, s1, d2) else {
        let missing: Vec<&str> = h.iter().filter(|x| x.0.is_null()).map(|x| x.1).collect();
        return Err(NnError::invalid(format!(
            "query is INT8 but {} is nullptr; full quantization needs {}, {} and {}",
            missing.join(", "),
            h[0].1,
            h[1].1,
            h[2].1
        )));
    };
    for d in [&d1, &d2] {
        a::dtype_in(d, &[DType::U64, DType::I64, DType::F32])?;
    }
    a::dtype_in(&s1, &[DType::F32])?;
    for t in [&d1, &s1, &d2] {
        if t.shape().iter().product::<usize>() != 1 {
            return Err(NnError::invalid(format!(
                "{} has shape {:?}; it is per-tensor (one element)",
                t.arg,
                t.shape()
            )));
        }
    }
    Ok(Some([d1, s1, d2]))
}

/// `t` labelled with another dtype, for the shape and layout checks of the float path.
fn as_dtype(t: &T, dt: DType) -> T {
    let mut x = t.clone();
    x.layout.dtype = dt;
    x
}

/// The input layout and output layout of an inference-attention `inputLayout`.
fn infer_layout(
    layout: *const c_char,
    allow_bnsd_bsnd: bool,
) -> NnResult<(FaLayout, FaLayout, String)> {
    if layout.is_null() {
        return Err(NnError::nullptr("inputLayout is nullptr"));
    }
    // SAFETY: a NUL-terminated C string from the caller.
    let ls = unsafe { std::ffi::CStr::from_ptr(layout) }
        .to_string_lossy()
        .to_string();
    let (i, o) = match ls.as_str() {
        "BSH" => (FaLayout::Bsh, FaLayout::Bsh),
        "BSND" => (FaLayout::Bsnd, FaLayout::Bsnd),
        "BNSD" => (FaLayout::Bnsd, FaLayout::Bnsd),
        "BNSD_BSND" if allow_bnsd_bsnd => (FaLayout::Bnsd, FaLayout::Bsnd),
        _ => {
            return Err(NnError::invalid(format!(
                "inputLayout \"{ls}\" is not one of BSH, BSND, BNSD{} (TND is not supported by \
                 npu-emu)",
                if allow_bnsd_bsnd { ", BNSD_BSND" } else { "" }
            )))
        }
    };
    Ok((i, o, ls))
}

/// Checks shared by the two inference operators; returns the parameters and dims.
#[allow(clippy::too_many_arguments)]
fn infer_check(
    q: &T,
    k: &T,
    v: &T,
    num_heads: i64,
    num_kv_heads: i64,
    scale: f64,
    layout: *const c_char,
    allow_bnsd_bsnd: bool,
    pre: i64,
    next: i64,
    sparse: i64,
) -> NnResult<(FaParams, FaDims)> {
    for t in [q, k, v] {
        a::dtype_in(t, FLOATS3)?;
    }
    same_dtype(k, q)?;
    same_dtype(v, q)?;
    let (l, ol, ls) = infer_layout(layout, allow_bnsd_bsnd)?;
    for t in [q, k, v] {
        if t.ndim() != l.rank() {
            return Err(NnError::invalid(format!(
                "{} has {} dimensions; layout {ls} takes {}",
                t.arg,
                t.ndim(),
                l.rank()
            )));
        }
    }
    if num_heads <= 0 {
        return Err(NnError::invalid(format!(
            "numHeads {num_heads} must be positive"
        )));
    }
    if l == FaLayout::Bsh && !q.shape()[2].is_multiple_of(num_heads as usize) {
        return Err(NnError::invalid(format!(
            "query H = {} is not a multiple of numHeads {num_heads}",
            q.shape()[2]
        )));
    }
    if !scale.is_finite() {
        return Err(NnError::invalid(format!(
            "scaleValue {scale} is not finite"
        )));
    }
    if !(0..=4).contains(&sparse) {
        return Err(NnError::invalid(format!(
            "sparseMode {sparse} is not one of 0-4"
        )));
    }
    let mut p = FaParams::training(l, num_heads as usize, scale, 1.0, pre, next, sparse);
    p.out_layout = ol;
    p.pse_after_scale = true;
    let dims = FaDims::of(&p, q.shape(), k.shape(), v.shape()).map_err(NnError::invalid)?;
    let kvh = if num_kv_heads == 0 {
        num_heads
    } else {
        num_kv_heads
    };
    if kvh < 0 || dims.n2 != kvh as usize {
        return Err(NnError::invalid(format!(
            "numKeyValueHeads {num_kv_heads} does not match key's {} heads (0 means numHeads)",
            dims.n2
        )));
    }
    Ok((p, dims))
}

/// The inference launch: query, key, value, optional pse and mask, the output.
#[allow(clippy::too_many_arguments)]
fn infer_launch(
    api: &'static str,
    q: &T,
    k: &T,
    v: &T,
    pse: Option<T>,
    mask: Option<T>,
    p: FaParams,
    out: &T,
    lse: Option<&T>,
    ext: InferExt,
) -> NnResult<Built> {
    let mut l = Launch::new(api);
    l.input(q);
    l.input(k);
    l.input(v);
    let ip = pse.as_ref().map(|t| l.input(t));
    let im = mask.as_ref().map(|t| l.input(t));
    let ir = ext
        .rope
        .as_ref()
        .map(|(qr, kr, d, dr)| (l.input(qr), l.input(kr), *d, *dr));
    let is = ext.sink.as_ref().map(|t| l.input(t));
    let o = l.output(out);
    let il = lse.map(|t| l.output(t));
    l.finish(move |vs, _| {
        attention_new::inference_attention_ext(
            &vs[0],
            &vs[1],
            &vs[2],
            ir.map(|(q, k, d, dr)| (&vs[q], &vs[k], d, dr)),
            is.map(|i| &vs[i]),
            ip.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            &p,
            &vs[o],
            il.map(|i| &vs[i]),
        )
    })
}

/// What FusedInferAttentionScore V3+ adds to the inference attention: the MLA rope parts
/// (queryRope, keyRope, the head dims `d` of query/key and `dr` of the rope parts) and the
/// learnable sink (`[N1]`).
#[derive(Default)]
struct InferExt {
    rope: Option<(T, T, usize, usize)>,
    sink: Option<T>,
    /// The full quantization's dequantScale1, quantScale1, dequantScale2 ([`full_quant_in`]).
    full_quant: Option<[T; 3]>,
}

/// FusedInferAttentionScore's queryRope/keyRope (both or neither; the query's/key's shape
/// and dtype but for the head dim) and learnableSink (`[N1]`, FLOAT32/FLOAT16/BFLOAT16).
fn infer_ext(
    q: &T,
    k: &T,
    dm: &FaDims,
    [(qr, qn), (kr, kn), (sk, sn)]: [(*const c_void, &'static str); 3],
) -> NnResult<InferExt> {
    let qr = a::opt_tensor(qr, qn)?.filter(|t| t.numel() > 0);
    let kr = a::opt_tensor(kr, kn)?.filter(|t| t.numel() > 0);
    let rope = match (qr, kr) {
        (None, None) => None,
        (Some(qr), Some(kr)) => {
            let (qs, ks) = (q.shape(), k.shape());
            let (qrs, krs) = (qr.shape(), kr.shape());
            let last = |s: &[usize]| s.last().copied().unwrap_or(0);
            // Rows of one head: D values in the query, D·(rope/query) in the rope part.
            let heads = last(qs) / dm.d.max(1);
            let dr = if heads > 0 && last(qrs) % heads == 0 {
                last(qrs) / heads
            } else {
                0
            };
            let k_heads = last(ks) / dm.d.max(1);
            let fits = |s: &[usize], r: &[usize], h: usize| {
                dr > 0
                    && s.len() == r.len()
                    && s[..s.len() - 1] == r[..r.len() - 1]
                    && last(r) == h * dr
            };
            // A 5-D NZ paged key [blockNum, N2, D/c0, blockSize, c0] takes its keyRope in
            // the same layout: [blockNum, N2, Dr/c0, blockSize, c0].
            let nz_fits = ks.len() == 5
                && krs.len() == 5
                && [0, 1, 3, 4].iter().all(|&i| ks[i] == krs[i])
                && dr > 0
                && krs[2] * krs[4] == dr;
            if !fits(qs, qrs, heads) || !(nz_fits || fits(ks, krs, k_heads)) {
                return Err(NnError::invalid(format!(
                    "{qn} {qrs:?} and {kn} {krs:?} must have the shapes of query {qs:?} and \
                     key {ks:?} with another head dim (the same for both)"
                )));
            }
            a::dtype_in(&qr, &[q.dtype()])?;
            a::dtype_in(&kr, &[k.dtype()])?;
            Some((qr, kr, dm.d, dr))
        }
        _ => {
            return Err(NnError::invalid(format!(
                "{qn} and {kn} must be given together (MLA) or both be nullptr"
            )))
        }
    };
    let sink = a::opt_tensor(sk, sn)?.filter(|t| t.numel() > 0);
    if let Some(t) = &sink {
        a::dtype_in(t, &[DType::F32, DType::F16, DType::BF16])?;
        if t.shape() != [dm.n1] {
            return Err(NnError::invalid(format!(
                "{sn} has shape {:?}; it takes one logit per query head: [{}]",
                t.shape(),
                dm.n1
            )));
        }
    }
    Ok(InferExt {
        rope,
        sink,
        full_quant: None,
    })
}

/// Whether the C string `layout` is `want`.
fn layout_is(layout: *const c_char, want: &str) -> bool {
    // SAFETY: NULL or a NUL-terminated C string from the caller.
    !layout.is_null() && unsafe { std::ffi::CStr::from_ptr(layout) }.to_bytes() == want.as_bytes()
}

/// FusedInferAttentionScore's arguments in layout TND: key/value lists, the actual-length
/// arrays (cumulative ends, with their names), query/key heads, scale, pre/next tokens and
/// the sparse mode.
struct InferTnd {
    kv: (Vec<T>, Vec<T>),
    lens: [(*const c_void, &'static str); 2],
    heads: [i64; 2],
    scale: f64,
    tokens: [i64; 2],
    sparse: i64,
}

/// FusedInferAttentionScore V3/V4 in layout TND (query `[T1, N1, D]`, key `[T2, N2, D]`,
/// value `[T2, N2, Dv]`, packed sequences given by the cumulative `actualSeqLengths` and
/// `actualSeqLengthsKv`): each sequence is attended alone, sparse mode 0 (no mask) or 3
/// (causal, the compressed `[2048, 2048]` mask), with the MLA rope parts and the learnable
/// sink; softmaxLse is `[T1, N1, 1]`. Paged or quantized key/value, pse and the output
/// quantization are not modelled in this layout.
#[allow(clippy::too_many_arguments)]
fn fused_infer_tnd(
    api: &'static str,
    q: &T,
    tnd: InferTnd,
    pse: Option<T>,
    mask: Option<T>,
    unmodelled: &[(*const c_void, &'static str)],
    ext: [(*const c_void, &'static str); 3],
    out: &T,
    lse: Option<T>,
    lse_flag: bool,
) -> NnResult<Built> {
    for &(h, name) in unmodelled {
        if a::opt_tensor(h, name)?.is_some_and(|t| t.numel() > 0) {
            return Err(NnError::invalid(format!(
                "{name} is not supported by npu-emu with inputLayout TND (it models dense \
                 key/value sequences there); pass nullptr"
            )));
        }
    }
    if pse.as_ref().is_some_and(|t| t.numel() > 0) {
        return Err(NnError::invalid(
            "pseShift is not supported with inputLayout TND; pass nullptr",
        ));
    }
    let (ks, vs) = tnd.kv;
    let (k, v) = one_kv(ks, vs)?;
    a::dtype_in(q, &[DType::F16, DType::BF16, DType::F32])?;
    same_dtype(&k, q)?;
    same_dtype(&v, q)?;
    let [num_heads, num_kv_heads] = tnd.heads;
    let (qs, kss, vss) = (q.shape(), k.shape(), v.shape());
    let n1 = usize::try_from(num_heads).unwrap_or(0);
    let n2 = if num_kv_heads == 0 {
        n1
    } else {
        usize::try_from(num_kv_heads).unwrap_or(0)
    };
    if qs.len() != 3 || kss.len() != 3 || vss.len() != 3 {
        return Err(NnError::invalid(format!(
            "inputLayout TND takes 3-D query, key and value [T, N, D]; got {qs:?}, {kss:?}, {vss:?}"
        )));
    }
    if n1 == 0 || qs[1] != n1 || n2 == 0 || kss[1] != n2 || vss[1] != n2 || n1 % n2 != 0 {
        return Err(NnError::invalid(format!(
            "query {qs:?}, key {kss:?}, value {vss:?} do not have numHeads = {num_heads} query \
             heads and numKeyValueHeads = {num_kv_heads} key/value heads (a divisor of numHeads)"
        )));
    }
    if kss[2] != qs[2] || kss[0] != vss[0] || qs[2] == 0 {
        return Err(NnError::invalid(format!(
            "key {kss:?} must have query's head dim ({}) and value {vss:?} key's T",
            qs[2]
        )));
    }
    let mut ends = Vec::with_capacity(2);
    for ((h, name), total) in tnd.lens.into_iter().zip([qs[0], kss[0]]) {
        let Some(v) = a::opt_int_array(h, name)?.filter(|v| !v.is_empty()) else {
            return Err(NnError::invalid(format!(
                "{name} is required with inputLayout TND: each sequence's cumulative length"
            )));
        };
        if v[0] < 0
            || v.windows(2).any(|w| w[1] < w[0])
            || *v.last().unwrap_or(&0) as usize != total
        {
            return Err(NnError::invalid(format!(
                "{name} {v:?} must be cumulative (non-negative, non-decreasing) and end at T = {total}"
            )));
        }
        ends.push(v.into_iter().map(|x| x as usize).collect::<Vec<_>>());
    }
    let kv_ends = ends.pop().unwrap_or_default();
    let q_ends = ends.pop().unwrap_or_default();
    if q_ends.len() != kv_ends.len() {
        return Err(NnError::invalid(format!(
            "{} has {} sequences and {} {}; they must match",
            tnd.lens[0].1,
            q_ends.len(),
            tnd.lens[1].1,
            kv_ends.len()
        )));
    }
    let mask = match (tnd.sparse, mask.filter(|m| m.numel() > 0)) {
        (0, None) => None,
        (3, Some(m)) => {
            a::dtype_in(&m, &[DType::Bool, DType::U8, DType::I8])?;
            if m.shape().iter().rev().take(2).any(|&d| d != 2048) || m.numel() != 2048 * 2048 {
                return Err(NnError::invalid(format!(
                    "attenMask has shape {:?}; sparseMode 3 takes the compressed [2048, 2048] mask",
                    m.shape()
                )));
            }
            Some(m)
        }
        (sp, m) => {
            return Err(NnError::invalid(format!(
                "sparseMode {sp} {} with inputLayout TND is not supported by npu-emu (mode 0 \
                 without attenMask and mode 3 with the compressed mask are)",
                if m.is_some() {
                    "with attenMask"
                } else {
                    "without attenMask"
                }
            )))
        }
    };
    let dm = FaDims {
        b: 1,
        n1,
        n2,
        s1: qs[0],
        s2: kss[0],
        d: qs[2],
        dv: vss[2],
    };
    let e = infer_ext(q, &k, &dm, ext)?;
    same_dtype(out, q)?;
    a::same_shape(out, &[qs[0], n1, vss[2]])?;
    let lse = if lse_flag {
        let Some(t) = lse else {
            return Err(NnError::nullptr(
                "softmaxLse is nullptr with softmaxLseFlag true",
            ));
        };
        a::dtype_in(&t, &[DType::F32])?;
        a::same_shape(&t, &[qs[0], n1, 1])?;
        Some(t)
    } else {
        None
    };
    let mut p = FaParams::training(
        FaLayout::Tnd,
        n1,
        tnd.scale,
        1.0,
        tnd.tokens[0],
        tnd.tokens[1],
        tnd.sparse,
    );
    p.varlen = Some(VarLen {
        q_ends,
        kv_ends,
        stats_tnd: false,
    });
    let mut l = Launch::new(api);
    l.input(q);
    l.input(&k);
    l.input(&v);
    let im = mask.as_ref().map(|t| l.input(t));
    let ir = e
        .rope
        .as_ref()
        .map(|(qr, kr, d, dr)| (l.input(qr), l.input(kr), *d, *dr));
    let is = e.sink.as_ref().map(|t| l.input(t));
    let o = l.output(out);
    let il = lse.as_ref().map(|t| l.output(t));
    l.finish(move |vs, _| {
        attention_new::inference_attention_tnd(
            &vs[0],
            &vs[1],
            &vs[2],
            ir.map(|(q, k, d, dr)| (&vs[q], &vs[k], d, dr)),
            is.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            &p,
            &vs[o],
            il.map(|i| &vs[i]),
        )
    })
}

/// `attenMask` resolved for sparse mode `sparse` (modes 2-4 need the compressed mask).
fn infer_mask(mask: &Option<T>, dm: &FaDims, sparse: i64) -> NnResult<Option<T>> {
    match mask {
        Some(m) => Ok(Some(mask4(m, dm, sparse)?)),
        None if sparse >= 2 => Err(NnError::invalid(format!(
            "sparseMode {sparse} needs attenMask (the compressed [2048, 2048] mask)"
        ))),
        None => Ok(None),
    }
}

/// `pseShift`: the query's dtype, broadcasting to `[B, N, S1, S2]` (S1 = 1 when incremental).
fn infer_pse(ps: &T, q: &T, dm: &FaDims) -> NnResult<()> {
    same_dtype(ps, q)?;
    let full = [dm.b, dm.n1, dm.s1, dm.s2];
    if ps.ndim() != 4 || broadcast_shapes(ps.shape(), &full).as_deref() != Some(&full[..]) {
        return Err(NnError::invalid(format!(
            "{} has shape {:?}; it must broadcast to [B, N, Q_S, KV_S] = {full:?}",
            ps.arg,
            ps.shape()
        )));
    }
    Ok(())
}

/// The one key and one value tensor of a key/value list.
fn one_kv(ks: Vec<T>, vs: Vec<T>) -> NnResult<(T, T)> {
    if ks.len() != 1 || vs.len() != 1 {
        return Err(NnError::invalid(format!(
            "key and value lists hold {} and {} tensors; this operator takes one tensor each \
             (all batches in one tensor)",
            ks.len(),
            vs.len()
        )));
    }
    Ok((
        ks.into_iter().next().unwrap(),
        vs.into_iter().next().unwrap(),
    ))
}

/// The first key and value tensors, the per-batch key and value lists and their lengths.
type KvLists = (T, T, Vec<T>, Vec<T>, Vec<usize>);

/// The key/value of the inference operators: one tensor each, or (the non-contiguous form)
/// one tensor per batch, `[1, S_b, …]` in the query's layout, equal but for S_b. Returns the
/// first tensors, the per-batch lists (empty for one tensor) and the S_b.
fn kv_lists(
    q: &T,
    ks: Vec<T>,
    vs: Vec<T>,
    layout: *const c_char,
    num_heads: i64,
) -> NnResult<KvLists> {
    if ks.len() == 1 && vs.len() == 1 {
        let (k, v) = one_kv(ks, vs)?;
        return Ok((k, v, vec![], vec![], vec![]));
    }
    let (l, _, _) = infer_layout(layout, true)?;
    let qb = if q.ndim() == l.rank() {
        l.dims(q.shape(), num_heads.max(1) as usize).0
    } else {
        0
    };
    if ks.len() != qb || vs.len() != qb {
        return Err(NnError::invalid(format!(
            "key and value lists hold {} and {} tensors; the per-batch form takes one per \
             batch ({qb})",
            ks.len(),
            vs.len()
        )));
    }
    let sdim = if l == FaLayout::Bnsd { 2 } else { 1 };
    let mut sb = Vec::with_capacity(qb);
    for (k, v) in ks.iter().zip(&vs) {
        let same = |a: &T, b: &T| {
            a.ndim() == l.rank()
                && b.ndim() == l.rank()
                && a.dtype() == b.dtype()
                && (0..a.ndim()).all(|i| i == sdim || a.shape()[i] == b.shape()[i])
        };
        if !same(k, &ks[0])
            || !same(v, &vs[0])
            || k.shape()[0] != 1
            || k.shape()[sdim] != v.shape()[sdim]
        {
            return Err(NnError::invalid(format!(
                "key {:?} / value {:?} of the per-batch lists: each must be [1, S_b, ...] in layout \
                 {l:?}, equal to the first ({:?}, {:?}) but for S_b",
                k.shape(),
                v.shape(),
                ks[0].shape(),
                vs[0].shape()
            )));
        }
        sb.push(k.shape()[sdim]);
    }
    Ok((ks[0].clone(), vs[0].clone(), ks, vs, sb))
}

/// `t` with dimension 0 fixed at `i` (the key or value half of a `(2, …)` antiquant tensor).
fn select0(t: &T, i: usize) -> T {
    let mut o = t.clone();
    o.layout.offset += i as isize * t.layout.strides[0];
    o.layout.shape.remove(0);
    o.layout.strides.remove(0);
    o
}

/// `t` as a view of `shape` with `strides` (same storage).
fn restrided(t: &T, shape: Vec<usize>, strides: Vec<isize>) -> T {
    let mut o = t.clone();
    o.layout.shape = shape;
    o.layout.strides = strides;
    o
}

/// A per-channel (`numel` N2·D, any shape whose non-unit dimensions are row-major
/// contiguous among themselves), per-tensor (one element) or, with `per_head`, per-head
/// (N2 elements) antiquant tensor viewed as `[N2, D]`.
fn per_channel(t: &T, n2: usize, d: usize, per_head: bool) -> NnResult<T> {
    let dims: Vec<(usize, isize)> = t
        .shape()
        .iter()
        .zip(&t.layout.strides)
        .filter(|(&n, _)| n != 1)
        .map(|(&n, &s)| (n, s))
        .collect();
    let last = dims.last().map_or(0, |x| x.1);
    let rowmajor = dims.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
    let numel = t.numel();
    let strides = if numel == 1 {
        vec![0, 0]
    } else if per_head && numel == n2 && rowmajor {
        vec![last, 0]
    } else if !per_head && numel == n2 * d && rowmajor {
        vec![last * d as isize, last]
    } else {
        return Err(NnError::invalid(format!(
            "{} has shape {:?}; per-{} antiquant takes {} elements ({} key/value heads{})",
            t.arg,
            t.shape(),
            if per_head { "head" } else { "channel" },
            if per_head { n2 } else { n2 * d },
            n2,
            if per_head {
                String::new()
            } else {
                format!(" of dim {d}, e.g. [N, D], [N, 1, D] or [H]; or 1 for per-tensor")
            }
        )));
    };
    Ok(restrided(t, vec![n2, d], strides))
}

/// A per-token antiquant tensor (`[B, S]`, or `[1, B, S]`) as `[B, S]`, covering `s2`
/// key positions.
fn per_token(t: &T, b: usize, s2: usize) -> NnResult<T> {
    let mut v = t.clone();
    if v.ndim() == 3 && v.shape()[0] == 1 {
        v = select0(&v, 0);
    }
    if v.ndim() != 2 || v.shape()[0] != b || v.shape()[1] < s2 {
        return Err(NnError::invalid(format!(
            "{} has shape {:?}; per-token antiquant takes [B, S] or [1, B, S] with B = {b} and \
             S at least the key length {s2}",
            t.arg,
            t.shape()
        )));
    }
    Ok(v)
}

/// How one of key/value is antiquantized: scale and offset (`[N2, D]` or per-token
/// `[B, S]`).
type Anti = (T, Option<T>, bool);

/// The key and value as the inference operators take them, resolved: the stored tensors,
/// their logical forms in the query's layout and dtype (for the shape checks), the paged
/// cache's block table and block size, and the antiquant of each.
struct KvIn {
    k: T,
    v: T,
    kl: T,
    vl: T,
    table: Option<(T, usize)>,
    anti: [Option<Anti>; 2],
    /// The per-batch key and value tensors (empty for one tensor each).
    lists: [Vec<T>; 2],
}

/// The antiquant inputs of one call: `kv` the non-separated `antiquantScale`/`Offset`
/// (`(2, …)`, index 0 the key's) with its mode, `sep` the separate key and value
/// scale/offset with their modes (which win when given).
struct AntiIn {
    kv: Option<(T, Option<T>, i64)>,
    sep: [Option<(T, Option<T>, i64)>; 2],
}

fn anti_in(
    [scale, offset]: [(*const c_void, &'static str); 2],
    mode: i64,
) -> NnResult<Option<(T, Option<T>, i64)>> {
    let s = a::opt_tensor(scale.0, scale.1)?;
    let o = a::opt_tensor(offset.0, offset.1)?;
    match (s, o) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(NnError::invalid(format!(
            "{} is given without {}",
            offset.1, scale.1
        ))),
        (Some(s), o) => {
            a::dtype_in(&s, FLOATS3)?;
            if let Some(o) = &o {
                same_dtype(o, &s)?;
                a::same_shape(o, s.shape())?;
            }
            Ok(Some((s, o, mode)))
        }
    }
}

/// Resolves key/value: `blocktable` with `block_size` (a paged cache: `[blockNum, blockSize,
/// N2·D]`, or `[blockNum, N2, blockSize, D]` with layout BNSD) and INT8 key/value with
/// their antiquant scales (`(x + offset)·scale`; modes 0 per-channel/per-tensor, 1
/// per-token, 2 per-head).
#[allow(clippy::too_many_arguments)]
fn kv_in(
    q: &T,
    k: T,
    v: T,
    layout: *const c_char,
    num_heads: i64,
    num_kv_heads: i64,
    blocktable: (*const c_void, &'static str),
    block_size: i64,
    anti: AntiIn,
) -> NnResult<KvIn> {
    let (l, _, ls) = infer_layout(layout, true)?;
    let table = a::opt_tensor(blocktable.0, blocktable.1)?;
    let quant = k.dtype() == DType::I8 || v.dtype() == DType::I8;
    if quant {
        a::dtype_in(&k, &[DType::I8])?;
        a::dtype_in(&v, &[DType::I8])?;
    }
    let n1 = num_heads.max(1) as usize;
    let n2 = if num_kv_heads > 0 {
        num_kv_heads as usize
    } else {
        n1
    };
    let qd = q.ndim() == l.rank();
    let (qb, _, _, d) = if qd {
        l.dims(q.shape(), n1)
    } else {
        (0, 0, 0, 0)
    };
    let mut kl = k.clone();
    let mut vl = v.clone();
    let mut paged = None;
    if let Some(t) = table {
        a::dtype_in(&t, &[DType::I32])?;
        if !(1..=512).contains(&block_size) {
            return Err(NnError::invalid(format!(
                "blockSize {block_size} must be in [1, 512] with a blockTable"
            )));
        }
        let bs = block_size as usize;
        if !qd || t.ndim() != 2 || t.shape()[0] != qb {
            return Err(NnError::invalid(format!(
                "{} has shape {:?}; it must be [B, maxBlockNumPerSeq] with B = {qb}",
                t.arg,
                t.shape()
            )));
        }
        let s2 = t.shape()[1] * bs;
        let nd = k.ndim();
        let four = nd == 4 && l == FaLayout::Bnsd;
        // The NZ cache [blockNum, N, D/c0, blockSize, c0]: c0 elements make 32 bytes.
        let five = nd == 5;
        if !(nd == 3 || four || five) || v.ndim() != nd || k.shape()[0] != v.shape()[0] {
            return Err(NnError::invalid(format!(
                "the paged key {:?} and value {:?} must both be [blockNum, blockSize, H]{}, or \
                 NZ [blockNum, N, D/c0, blockSize, c0] (c0 = 32 bytes of elements), with the \
                 same blockNum",
                k.shape(),
                v.shape(),
                if l == FaLayout::Bnsd {
                    ", [blockNum, N, blockSize, D]"
                } else {
                    " (layout BSH/BSND)"
                }
            )));
        }
        let bdim = match nd {
            5 => 3,
            4 => 2,
            _ => 1,
        };
        let per_head = |x: &T| -> NnResult<usize> {
            if x.shape()[bdim] != bs {
                return Err(NnError::invalid(format!(
                    "the paged {} {:?} has block size {}; blockSize is {bs}",
                    x.arg,
                    x.shape(),
                    x.shape()[bdim]
                )));
            }
            if (four || five) && x.shape()[1] != n2 {
                return Err(NnError::invalid(format!(
                    "the paged {} {:?} has {} heads; numKeyValueHeads is {n2}",
                    x.arg,
                    x.shape(),
                    x.shape()[1]
                )));
            }
            if five {
                let c0 = 32 / x.dtype().size();
                if x.shape()[4] != c0 {
                    return Err(NnError::invalid(format!(
                        "the NZ paged {} {:?} ({:?}) must end in {c0} (32 bytes); it ends in {}",
                        x.arg,
                        x.shape(),
                        x.dtype(),
                        x.shape()[4]
                    )));
                }
                Ok(x.shape()[2] * c0)
            } else if four {
                Ok(x.shape()[3])
            } else if !x.shape()[2].is_multiple_of(n2) {
                Err(NnError::invalid(format!(
                    "the paged {} {:?} has H = {}, not a multiple of numKeyValueHeads {n2}",
                    x.arg,
                    x.shape(),
                    x.shape()[2]
                )))
            } else {
                Ok(x.shape()[2] / n2)
            }
        };
        let (kd, vd) = (per_head(&k)?, per_head(&v)?);
        kl.layout =
            npu_emu::ops::view::Layout::contiguous(k.dtype(), &FaDims::shape(l, qb, s2, n2, kd));
        vl.layout =
            npu_emu::ops::view::Layout::contiguous(v.dtype(), &FaDims::shape(l, qb, s2, n2, vd));
        paged = Some((t, bs));
    }
    let mut res = [None, None];
    let given = anti.sep[0].is_some() || anti.sep[1].is_some() || anti.kv.is_some();
    if quant {
        let (b, s2) = if qd && kl.ndim() == l.rank() {
            let (b, s, _, _) = l.dims(kl.shape(), n2);
            (b, s)
        } else {
            (0, 0)
        };
        let dv = if vl.ndim() == l.rank() {
            l.dims(vl.shape(), n2).3
        } else {
            0
        };
        for (i, dd) in [(0, d), (1, dv)] {
            let (s, o, mode) = match (&anti.sep[i], &anti.kv) {
                (Some((s, o, m)), _) => (s.clone(), o.clone(), *m),
                (None, Some((s, o, m))) => {
                    if s.ndim() == 0 || s.shape()[0] != 2 {
                        return Err(NnError::invalid(format!(
                            "{} has shape {:?}; its first dimension (key, value) must be 2",
                            s.arg,
                            s.shape()
                        )));
                    }
                    (select0(s, i), o.as_ref().map(|o| select0(o, i)), *m)
                }
                (None, None) => {
                    return Err(NnError::invalid(format!(
                        "{} is INT8 but no antiquant scale is given for it (npu-emu models INT8 \
                         key/value through antiquant only)",
                        if i == 0 { "key" } else { "value" }
                    )))
                }
            };
            let fix = |t: &T| -> NnResult<T> {
                match mode {
                    0 => per_channel(t, n2, dd, false),
                    1 => per_token(t, b, s2),
                    2 => per_channel(t, n2, dd, true),
                    _ => Err(NnError::invalid(format!(
                        "antiquant mode {mode} is not supported by npu-emu (it takes 0 \
                         per-channel/per-tensor, 1 per-token and 2 per-head)"
                    ))),
                }
            };
            let s2v = fix(&s)?;
            let o2v = o.as_ref().map(fix).transpose()?;
            if mode == 1 {
                a::dtype_in(&s, &[DType::F32])?;
            }
            res[i] = Some((s2v, o2v, mode == 1));
        }
        kl.layout.dtype = q.dtype();
        vl.layout.dtype = q.dtype();
    } else if given {
        return Err(NnError::invalid(format!(
            "antiquant scales are given but key/value are {:?}, not INT8 (layout {ls})",
            k.dtype()
        )));
    }
    Ok(KvIn {
        k,
        v,
        kl,
        vl,
        table: paged,
        anti: res,
        lists: [vec![], vec![]],
    })
}

/// With per-batch key/value lists (`sb` their lengths): the logical key/value become
/// `[B, max S_b, …]` and the lists are kept for the launch. A paged cache takes no lists.
fn list_logical(
    kv: &mut KvIn,
    kls: Vec<T>,
    vls: Vec<T>,
    sb: &[usize],
    layout: *const c_char,
) -> NnResult<()> {
    if sb.is_empty() {
        return Ok(());
    }
    if kv.table.is_some() {
        return Err(NnError::invalid(
            "a paged cache (blockTable) takes one key and one value tensor, not per-batch lists",
        ));
    }
    let (l, _, _) = infer_layout(layout, true)?;
    let sdim = if l == FaLayout::Bnsd { 2 } else { 1 };
    let smax = sb.iter().copied().max().unwrap_or(0);
    for t in [&mut kv.kl, &mut kv.vl] {
        let mut shape = t.shape().to_vec();
        shape[0] = sb.len();
        shape[sdim] = smax;
        t.layout = npu_emu::ops::view::Layout::contiguous(t.dtype(), &shape);
    }
    kv.lists = [kls, vls];
    Ok(())
}

/// The valid keys per batch with per-batch lists: the actual lengths (each at most its
/// tensor's S_b) or S_b.
fn list_lens(l: Option<Vec<usize>>, sb: &[usize], arg: &str) -> NnResult<Option<Vec<usize>>> {
    if sb.is_empty() {
        return Ok(l);
    }
    match l {
        None => Ok(Some(sb.to_vec())),
        Some(v) => {
            if let Some(b) = (0..sb.len()).find(|&b| v[b] > sb[b]) {
                return Err(NnError::invalid(format!(
                    "{arg} {v:?} gives batch {b} {} keys; its key tensor has {}",
                    v[b], sb[b]
                )));
            }
            Ok(Some(v))
        }
    }
}

/// The inference launch over [`KvIn`] (paged or antiquantized key/value); `kv_dims` are the
/// logical `[B, S2, N2, D]` of key and value.
#[allow(clippy::too_many_arguments)]
fn infer_launch_kv(
    api: &'static str,
    q: &T,
    kv: KvIn,
    dm: &FaDims,
    pse: Option<T>,
    mask: Option<T>,
    p: FaParams,
    out: &T,
    lse: Option<&T>,
    post: Option<(T, Option<T>)>,
    ext: InferExt,
) -> NnResult<Built> {
    if kv.table.is_none()
        && kv.anti.iter().all(Option::is_none)
        && post.is_none()
        && kv.lists[0].is_empty()
        && ext.full_quant.is_none()
    {
        return infer_launch(api, q, &kv.k, &kv.v, pse, mask, p, out, lse, ext);
    }
    if ext.rope.is_some()
        && (!kv.lists[0].is_empty()
            || kv.anti.iter().any(Option::is_some)
            || post.is_some()
            || ext.full_quant.is_some())
    {
        return Err(NnError::invalid(
            "queryRope/keyRope (MLA) do not take per-batch key/value lists, antiquantized \
             INT8 key/value or an INT8 attentionOut (the MLA constraints exclude tensor lists, \
             pseudo-, full and post-quantization)",
        ));
    }
    let kv_dims = [[dm.b, dm.s2, dm.n2, dm.d], [dm.b, dm.s2, dm.n2, dm.dv]];
    let mut l = Launch::new(api);
    l.input(q);
    let nb = kv.lists[0].len();
    let (ik, iv) = if nb == 0 {
        (l.input(&kv.k), l.input(&kv.v))
    } else {
        (l.inputs(&kv.lists[0]), l.inputs(&kv.lists[1]))
    };
    let it = kv.table.as_ref().map(|(t, bs)| (l.input(t), *bs));
    let ia: Vec<Option<(usize, Option<usize>, bool)>> = kv
        .anti
        .iter()
        .map(|x| {
            x.as_ref()
                .map(|(s, o, pt)| (l.input(s), o.as_ref().map(|o| l.input(o)), *pt))
        })
        .collect();
    let ip = pse.as_ref().map(|t| l.input(t));
    let im = mask.as_ref().map(|t| l.input(t));
    let iq = post
        .as_ref()
        .map(|(s, o)| (l.input(s), o.as_ref().map(|o| l.input(o))));
    let is = ext.sink.as_ref().map(|t| l.input(t));
    let ifq = ext
        .full_quant
        .as_ref()
        .map(|f| f.each_ref().map(|t| l.input(t)));
    let ir = ext
        .rope
        .as_ref()
        .map(|(qr, kr, d, dr)| (l.input(qr), l.input(kr), *d, *dr));
    let o = l.output(out);
    let il = lse.map(|t| l.output(t));
    l.finish(move |vs, _| {
        let mut p = attention_new::with_sink(&p, is.map(|i| &vs[i]))?;
        if let Some([d1, s1, d2]) = ifq {
            p.full_quant = Some(fused::FullQuant::read(&vs[d1], &vs[s1], &vs[d2])?);
        }
        let cache = |data: usize, a: Option<(usize, Option<usize>, bool)>| fused::KvCache {
            data: &vs[data],
            batches: &vs[data..data + nb],
            paged: it.map(|(i, bs)| (&vs[i], bs)),
            scale: a.map(|x| &vs[x.0]),
            offset: a.and_then(|x| x.1.map(|i| &vs[i])),
            per_token: a.is_some_and(|x| x.2),
        };
        // keyRope is read through the key's block table (MLA over a paged cache)
        let rope = ir.map(|(q, k, d, dr)| (q, cache(k, None), d, dr));
        fused::inference_attention_cached(
            &vs[0],
            &cache(ik, ia[0]),
            &cache(iv, ia[1]),
            kv_dims,
            ip.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            &p,
            &vs[o],
            il.map(|i| &vs[i]),
            iq.map(|(s, o)| (&vs[s], o.map(|i| &vs[i]))),
            rope.as_ref().map(|(q, c, d, dr)| (&vs[*q], c, *d, *dr)),
        )
    })
}

/// The output post-quantization (`quantScale2`, `quantOffset2`): with an INT8
/// `attentionOut` from a FLOAT16/BFLOAT16 query, `quantScale2` (FLOAT32, or BFLOAT16 with a
/// BFLOAT16 query; per-tensor or per-channel with N·Dv elements) is required, viewed as
/// `[N1, Dv]`; otherwise both must be NULL and the output takes the query's dtype.
fn post_quant(
    q: &T,
    out: &T,
    [scale, offset]: [(*const c_void, &'static str); 2],
    dm: &FaDims,
) -> NnResult<Option<(T, Option<T>)>> {
    let s = a::opt_tensor(scale.0, scale.1)?;
    let o = a::opt_tensor(offset.0, offset.1)?;
    if out.dtype() != DType::I8 {
        if let Some(t) = s.as_ref().or(o.as_ref()) {
            return Err(NnError::invalid(format!(
                "{} is given but attentionOut is {:?}; post-quantization writes an INT8 \
                 attentionOut",
                t.arg,
                out.dtype()
            )));
        }
        if q.dtype() == DType::I8 {
            // full quantization: FLOAT16 out (INT8 with quantScale2)
            a::dtype_in(out, &[DType::F16, DType::I8])?;
        } else {
            same_dtype(out, q)?;
        }
        return Ok(None);
    }
    a::dtype_in(q, &[DType::F16, DType::BF16, DType::I8])?;
    let Some(s) = s else {
        return Err(NnError::invalid(format!(
            "attentionOut is INT8 but {} is nullptr (it is required for an INT8 output)",
            scale.1
        )));
    };
    if q.dtype() == DType::BF16 {
        a::dtype_in(&s, &[DType::F32, DType::BF16])?;
    } else {
        a::dtype_in(&s, &[DType::F32])?;
    }
    if let Some(o) = &o {
        same_dtype(o, &s)?;
        a::same_shape(o, s.shape())?;
    }
    let sv = per_channel(&s, dm.n1, dm.dv, false)?;
    let ov = o
        .as_ref()
        .map(|o| per_channel(o, dm.n1, dm.dv, false))
        .transpose()?;
    Ok(Some((sv, ov)))
}

/// `aclnnPromptFlashAttention`, `…V2` and `…V3`: the later versions add
/// `actualSeqLengthsKv`, the quantization inputs (`unmodelled`), `sparseMode` and
/// `innerPrecise`; the first passes none of them (sparse mode 0, every key valid).
#[allow(clippy::too_many_arguments)]
fn prompt_fa(
    api: &'static str,
    [query, key, value, pse_shift, atten_mask]: [*const c_void; 5],
    actual_seq: *const c_void,
    actual_seq_kv: *const c_void,
    unmodelled: &[(*const c_void, &'static str)],
    num_heads: i64,
    scale: f64,
    [pre, next]: [i64; 2],
    layout: *const c_char,
    num_kv_heads: i64,
    sparse: i64,
    attention_out: *const c_void,
) -> NnResult<Built> {
    let q = a::tensor(query, "query")?;
    let k = a::tensor(key, "key")?;
    let v = a::tensor(value, "value")?;
    let pse = a::opt_tensor(pse_shift, "pseShift")?;
    let mask = a::opt_tensor(atten_mask, "attenMask")?;
    let out = a::tensor(attention_out, "attentionOut")?;
    let modelled = |i: usize| {
        unmodelled
            .get(i)
            .map(|&(h, n)| (h, n))
            .unwrap_or((std::ptr::null(), "quantScale2"))
    };
    let fq = full_quant_in(&q, &k, &v, [modelled(0), modelled(1), modelled(2)])?;
    // The shape checks of the float path; an INT8 query's output is FLOAT16 (or INT8).
    let cd = |t: &T| {
        if fq.is_some() {
            as_dtype(t, DType::F16)
        } else {
            t.clone()
        }
    };
    let (mut p, dm) = infer_check(
        &cd(&q),
        &cd(&k),
        &cd(&v),
        num_heads,
        num_kv_heads,
        scale,
        layout,
        true,
        pre,
        next,
        sparse,
    )?;
    p.q_lens = lens(actual_seq, "actualSeqLengths", dm.b, dm.s1)?;
    p.kv_lens = lens(actual_seq_kv, "actualSeqLengthsKv", dm.b, dm.s2)?;
    let mask = infer_mask(&mask, &dm, sparse)?;
    if let Some(ps) = &pse {
        infer_pse(ps, &q, &dm)?;
    }
    let post = post_quant(&q, &out, [modelled(3), modelled(4)], &dm)?;
    a::same_shape(
        &out,
        &FaDims::shape(p.out_layout, dm.b, dm.s1, dm.n1, dm.dv),
    )?;
    let ext = InferExt {
        full_quant: fq,
        ..InferExt::default()
    };
    let kv = KvIn {
        kl: k.clone(),
        vl: v.clone(),
        k,
        v,
        table: None,
        anti: [None, None],
        lists: [vec![], vec![]],
    };
    infer_launch_kv(api, &q, kv, &dm, pse, mask, p, &out, None, post, ext)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPromptFlashAttentionGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    preTokens: i64,
    nextTokens: i64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPromptFlashAttentionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            prompt_fa(
                "aclnnPromptFlashAttention",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                std::ptr::null(),
                &[],
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                0,
                attentionOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPromptFlashAttentionV2GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    actualSeqLengthsKv: *const c_void,
    deqScale1: *const c_void,
    quantScale1: *const c_void,
    deqScale2: *const c_void,
    quantScale2: *const c_void,
    quantOffset2: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    preTokens: i64,
    nextTokens: i64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    sparseMode: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPromptFlashAttentionV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            prompt_fa(
                "aclnnPromptFlashAttentionV2",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                actualSeqLengthsKv,
                &pfa_quant([deqScale1, quantScale1, deqScale2, quantScale2, quantOffset2]),
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                sparseMode,
                attentionOut,
            )
        },
    )
}

/// The quantization inputs of PromptFlashAttentionV2/V3, named.
fn pfa_quant(h: [*const c_void; 5]) -> [(*const c_void, &'static str); 5] {
    let names = [
        "deqScale1",
        "quantScale1",
        "deqScale2",
        "quantScale2",
        "quantOffset2",
    ];
    std::array::from_fn(|i| (h[i], names[i]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPromptFlashAttentionV3GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    actualSeqLengthsKv: *const c_void,
    deqScale1: *const c_void,
    quantScale1: *const c_void,
    deqScale2: *const c_void,
    quantScale2: *const c_void,
    quantOffset2: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    preTokens: i64,
    nextTokens: i64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    sparseMode: i64,
    innerPrecise: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = innerPrecise;
    phase1(
        "aclnnPromptFlashAttentionV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            prompt_fa(
                "aclnnPromptFlashAttentionV3",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                actualSeqLengthsKv,
                &pfa_quant([deqScale1, quantScale1, deqScale2, quantScale2, quantOffset2]),
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                sparseMode,
                attentionOut,
            )
        },
    )
}

/// The quantization inputs IncreFlashAttentionV2-V4 add, in header order (V2 has the first
/// five, V3 also the antiquant pair, V4 also kvPaddingSize); the ones npu-emu does not model
/// (all but the antiquant pair) must be NULL.
const IFA_QUANT: [&str; 8] = [
    "dequantScale1",
    "quantScale1",
    "dequantScale2",
    "quantScale2",
    "quantOffset2",
    "antiquantScale",
    "antiquantOffset",
    "kvPaddingSize",
];

/// `aclnnIncreFlashAttention`, `…V2`, `…V3` and `…V4`: one query row per batch and head,
/// one key and one value tensor (or V3/V4's paged cache, `blocktable` with `block_size`);
/// `quant` holds the version's quantization inputs (a prefix of [`IFA_QUANT`]): the
/// antiquant pair dequantizes an INT8 key/value, the others must be NULL.
#[allow(clippy::too_many_arguments)]
fn incre_fa(
    api: &'static str,
    [query, key, value, pse_shift, atten_mask]: [*const c_void; 5],
    actual_seq: *const c_void,
    quant: &[*const c_void],
    blocktable: *const c_void,
    block_size: i64,
    num_heads: i64,
    scale: f64,
    layout: *const c_char,
    num_kv_heads: i64,
    attention_out: *const c_void,
) -> NnResult<Built> {
    let q = a::tensor(query, "query")?;
    let ks = a::tensor_list(key, "key")?;
    let vs = a::tensor_list(value, "value")?;
    let pse = a::opt_tensor(pse_shift, "pseShift")?;
    let mask = a::opt_tensor(atten_mask, "attenMask")?;
    let out = a::tensor(attention_out, "attentionOut")?;
    let named: Vec<_> = quant
        .iter()
        .copied()
        .zip(IFA_QUANT)
        .enumerate()
        .filter(|(i, _)| ![3, 4, 5, 6].contains(i))
        .map(|(_, x)| x)
        .collect();
    no_quant(&named)?;
    let at = |i: usize| quant.get(i).copied().unwrap_or(std::ptr::null());
    let anti = AntiIn {
        kv: anti_in([(at(5), "antiquantScale"), (at(6), "antiquantOffset")], 0)?,
        sep: [None, None],
    };
    let (k, v, kls, vls, sb) = kv_lists(&q, ks, vs, layout, num_heads)?;
    let mut kv = kv_in(
        &q,
        k,
        v,
        layout,
        num_heads,
        num_kv_heads,
        (blocktable, "blocktable"),
        block_size,
        anti,
    )?;
    list_logical(&mut kv, kls, vls, &sb, layout)?;
    let (mut p, dm) = infer_check(
        &q,
        &kv.kl,
        &kv.vl,
        num_heads,
        num_kv_heads,
        scale,
        layout,
        false,
        i64::MAX,
        i64::MAX,
        0,
    )?;
    if dm.s1 != 1 {
        return Err(NnError::invalid(format!(
            "query {:?} has sequence length {}; incremental attention takes 1",
            q.shape(),
            dm.s1
        )));
    }
    p.kv_lens = list_lens(
        lens(actual_seq, "actualSeqLengths", dm.b, dm.s2)?,
        &sb,
        "actualSeqLengths",
    )?;
    if kv.table.is_some() && p.kv_lens.is_none() {
        return Err(NnError::invalid(
            "actualSeqLengths is required with a blocktable (paged key/value cache)",
        ));
    }
    let mask = infer_mask(&mask, &dm, 0)?;
    if let Some(ps) = &pse {
        infer_pse(ps, &q, &dm)?;
    }
    let post = post_quant(
        &q,
        &out,
        [(at(3), "quantScale2"), (at(4), "quantOffset2")],
        &dm,
    )?;
    a::same_shape(&out, q.shape())?;
    infer_launch_kv(
        api,
        &q,
        kv,
        &dm,
        pse,
        mask,
        p,
        &out,
        None,
        post,
        InferExt::default(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIncreFlashAttentionGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIncreFlashAttentionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            incre_fa(
                "aclnnIncreFlashAttention",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                &[],
                std::ptr::null(),
                0,
                numHeads,
                scaleValue,
                inputLayout,
                numKeyValueHeads,
                attentionOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIncreFlashAttentionV2GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    dequantScale1: *const c_void,
    quantScale1: *const c_void,
    dequantScale2: *const c_void,
    quantScale2: *const c_void,
    quantOffset2: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIncreFlashAttentionV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            incre_fa(
                "aclnnIncreFlashAttentionV2",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                &[
                    dequantScale1,
                    quantScale1,
                    dequantScale2,
                    quantScale2,
                    quantOffset2,
                ],
                std::ptr::null(),
                0,
                numHeads,
                scaleValue,
                inputLayout,
                numKeyValueHeads,
                attentionOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIncreFlashAttentionV3GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    dequantScale1: *const c_void,
    quantScale1: *const c_void,
    dequantScale2: *const c_void,
    quantScale2: *const c_void,
    quantOffset2: *const c_void,
    antiquantScale: *const c_void,
    antiquantOffset: *const c_void,
    blocktable: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    blockSize: i64,
    innerPrecise: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = innerPrecise;
    phase1(
        "aclnnIncreFlashAttentionV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            incre_fa(
                "aclnnIncreFlashAttentionV3",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                &[
                    dequantScale1,
                    quantScale1,
                    dequantScale2,
                    quantScale2,
                    quantOffset2,
                    antiquantScale,
                    antiquantOffset,
                ],
                blocktable,
                blockSize,
                numHeads,
                scaleValue,
                inputLayout,
                numKeyValueHeads,
                attentionOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIncreFlashAttentionV4GetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    dequantScale1: *const c_void,
    quantScale1: *const c_void,
    dequantScale2: *const c_void,
    quantScale2: *const c_void,
    quantOffset2: *const c_void,
    antiquantScale: *const c_void,
    antiquantOffset: *const c_void,
    blocktable: *const c_void,
    kvPaddingSize: *const c_void,
    numHeads: i64,
    scaleValue: f64,
    inputLayout: *mut c_char,
    numKeyValueHeads: i64,
    blockSize: i64,
    innerPrecise: i64,
    attentionOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = innerPrecise;
    phase1(
        "aclnnIncreFlashAttentionV4GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            incre_fa(
                "aclnnIncreFlashAttentionV4",
                [query, key, value, pseShift, attenMask],
                actualSeqLengths,
                &[
                    dequantScale1,
                    quantScale1,
                    dequantScale2,
                    quantScale2,
                    quantOffset2,
                    antiquantScale,
                    antiquantOffset,
                    kvPaddingSize,
                ],
                blocktable,
                blockSize,
                numHeads,
                scaleValue,
                inputLayout,
                numKeyValueHeads,
                attentionOut,
            )
        },
    )
}

/// The inputs FusedInferAttentionScore adds after `actualSeqLengthsKv`, in header order;
/// each version takes a prefix (V1 the first 10, V2 17, V3 20, V4 all 22). V1 spells them
/// without the `Optional` suffix. npu-emu models those of [`FIA_MODELLED`]; the others must
/// be NULL.
const FIA_UNMODELLED: [&str; 22] = [
    "deqScale1Optional",
    "quantScale1Optional",
    "deqScale2Optional",
    "quantScale2Optional",
    "quantOffset2Optional",
    "antiquantScaleOptional",
    "antiquantOffsetOptional",
    "blockTableOptional",
    "queryPaddingSizeOptional",
    "kvPaddingSizeOptional",
    "keyAntiquantScaleOptional",
    "keyAntiquantOffsetOptional",
    "valueAntiquantScaleOptional",
    "valueAntiquantOffsetOptional",
    "keySharedPrefixOptional",
    "valueSharedPrefixOptional",
    "actualSharedPrefixLenOptional",
    "queryRopeOptional",
    "keyRopeOptional",
    "keyRopeAntiquantScaleOptional",
    "dequantScaleQueryOptional",
    "learnableSinkOptional",
];

/// The entries of [`FIA_UNMODELLED`] npu-emu does model: the full quantization, the output
/// post-quantization, the antiquant scales/offsets, the paged cache's block table, the shared
/// prefix, the MLA rope parts and the learnable sink.
const FIA_MODELLED: [usize; 18] = [
    0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 21,
];

/// `aclnnFusedInferAttentionScore` (V1-V4): prompt (Q_S > 1) or incremental (Q_S = 1)
/// attention with one key and one value tensor, optional pse, mask and actual lengths, and
/// with `softmaxLseFlag` the log-sum-exp `[B, N, Q_S, 1]`. `unmodelled` is the version's
/// prefix of [`FIA_UNMODELLED`]; `v1` names the arguments without `Optional`.
#[allow(clippy::too_many_arguments)]
unsafe fn fused_infer(
    api: &'static str,
    v1: bool,
    [query, key, value, pse_shift, atten_mask]: [*const c_void; 5],
    [actual_seq, actual_seq_kv]: [*const c_void; 2],
    unmodelled: &[*const c_void],
    [block_size, anti_mode, key_mode, value_mode]: [i64; 4],
    num_heads: i64,
    scale: f64,
    [pre, next]: [i64; 2],
    layout: *const c_char,
    num_kv_heads: i64,
    sparse: i64,
    lse_flag: bool,
    attention_out: *const c_void,
    softmax_lse: *const c_void,
) -> NnResult<Built> {
    let nm = |s: &'static str| {
        if v1 {
            s.strip_suffix("Optional").unwrap_or(s)
        } else {
            s
        }
    };
    let q = a::tensor(query, "query")?;
    let ks = a::tensor_list(key, "key")?;
    let vs = a::tensor_list(value, "value")?;
    let pse = a::opt_tensor(pse_shift, nm("pseShiftOptional"))?;
    let mask = a::opt_tensor(atten_mask, nm("attenMaskOptional"))?;
    let out = a::tensor(attention_out, "attentionOut")?;
    let lse = a::opt_tensor(softmax_lse, "softmaxLse")?;
    let named: Vec<_> = unmodelled
        .iter()
        .copied()
        .zip(FIA_UNMODELLED.map(nm))
        .enumerate()
        .filter(|(i, _)| !FIA_MODELLED.contains(i))
        .map(|(_, x)| x)
        .collect();
    no_quant(&named)?;
    let at = |i: usize| {
        (
            unmodelled.get(i).copied().unwrap_or(std::ptr::null()),
            nm(FIA_UNMODELLED[i]),
        )
    };
    let anti = AntiIn {
        kv: anti_in([at(5), at(6)], anti_mode)?,
        sep: [
            anti_in([at(10), at(11)], key_mode)?,
            anti_in([at(12), at(13)], value_mode)?,
        ],
    };
    if anti.sep[0].is_some() != anti.sep[1].is_some() {
        return Err(NnError::invalid(
            "keyAntiquantScaleOptional and valueAntiquantScaleOptional must both be given or \
             both be nullptr",
        ));
    }
    if layout_is(layout, "TND") {
        let modelled_null = [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15].map(at);
        let tnd = InferTnd {
            kv: (ks, vs),
            lens: [
                (actual_seq, nm("actualSeqLengthsOptional")),
                (actual_seq_kv, nm("actualSeqLengthsKvOptional")),
            ],
            heads: [num_heads, num_kv_heads],
            scale,
            tokens: [pre, next],
            sparse,
        };
        return fused_infer_tnd(
            api,
            &q,
            tnd,
            pse,
            mask,
            &modelled_null,
            [at(17), at(18), at(21)],
            &out,
            lse_flag.then_some(lse).flatten(),
            lse_flag,
        );
    }
    let fq = match (ks.first(), vs.first()) {
        (Some(k0), Some(v0)) => full_quant_in(&q, k0, v0, [at(0), at(1), at(2)])?,
        _ => None,
    };
    if fq.is_some() {
        let paged_or_more = [7, 5, 6, 10, 11, 12, 13, 14, 15, 17, 18].map(at);
        if let Some((_, name)) = paged_or_more.iter().find(|x| !x.0.is_null()) {
            return Err(NnError::invalid(format!(
                "{name} with an INT8 query (full quantization) is not supported by npu-emu (it \
                 models full quantization over one dense key and value tensor)"
            )));
        }
        if ks.len() != 1 || vs.len() != 1 {
            return Err(NnError::invalid(
                "an INT8 query (full quantization) takes one key and one value tensor, not \
                 per-batch lists",
            ));
        }
    }
    let (k, v, kls, vls, sb) = kv_lists(&q, ks, vs, layout, num_heads)?;
    let mut kv = if fq.is_some() {
        KvIn {
            kl: as_dtype(&k, DType::F16),
            vl: as_dtype(&v, DType::F16),
            k,
            v,
            table: None,
            anti: [None, None],
            lists: [vec![], vec![]],
        }
    } else {
        kv_in(
            &q,
            k,
            v,
            layout,
            num_heads,
            num_kv_heads,
            at(7),
            block_size,
            anti,
        )?
    };
    list_logical(&mut kv, kls, vls, &sb, layout)?;
    // An INT8 query (full quantization) is checked as the float path's.
    let qc = if fq.is_some() {
        as_dtype(&q, DType::F16)
    } else {
        q.clone()
    };
    let (mut p, dm) = infer_check(
        &qc,
        &kv.kl,
        &kv.vl,
        num_heads,
        num_kv_heads,
        scale,
        layout,
        true,
        pre,
        next,
        sparse,
    )?;
    // With one query row (incremental) the query lengths do not apply: the reference says
    // the argument is ignored then for every layout but TND (which npu-emu does not model).
    p.q_lens = if dm.s1 == 1 {
        None
    } else {
        lens(actual_seq, nm("actualSeqLengthsOptional"), dm.b, dm.s1)?
    };
    p.kv_lens = list_lens(
        lens(actual_seq_kv, nm("actualSeqLengthsKvOptional"), dm.b, dm.s2)?,
        &sb,
        nm("actualSeqLengthsKvOptional"),
    )?;
    if kv.table.is_some() && p.kv_lens.is_none() {
        return Err(NnError::invalid(format!(
            "{} is required with {} (paged key/value cache)",
            nm("actualSeqLengthsKvOptional"),
            nm("blockTableOptional")
        )));
    }
    if dm.s1 == 1 {
        // Incremental: one query row sees every valid key; sparse modes do not apply.
        p.sparse_mode = 0;
        p.pre_tokens = i64::MAX;
        p.next_tokens = i64::MAX;
    }
    let prefix = shared_prefix(&kv, &dm, layout, [at(14), at(15)], at(16))?;
    // With a shared prefix the mask and pse cover its Sp positions before the key's S2.
    let dm_kv = FaDims {
        s2: dm.s2 + prefix.as_ref().map_or(0, |x| x.2),
        ..dm
    };
    let mask = infer_mask(&mask, &dm_kv, p.sparse_mode)?;
    if let Some(ps) = &pse {
        infer_pse(ps, &q, &dm_kv)?;
    }
    let post = post_quant(&q, &out, [at(3), at(4)], &dm)?;
    a::same_shape(
        &out,
        &FaDims::shape(p.out_layout, dm.b, dm.s1, dm.n1, dm.dv),
    )?;
    let lse = if lse_flag {
        let Some(t) = lse.as_ref() else {
            return Err(NnError::nullptr(
                "softmaxLse is nullptr with softmaxLseFlag true",
            ));
        };
        a::dtype_in(t, &[DType::F32])?;
        a::same_shape(t, &[dm.b, dm.n1, dm.s1, 1])?;
        Some(t)
    } else {
        None
    };
    let mut ext = infer_ext(&q, &kv.k, &dm, [at(17), at(18), at(21)])?;
    ext.full_quant = fq;
    if let Some(sp) = prefix {
        if ext.rope.is_some() || post.is_some() {
            return Err(NnError::invalid(format!(
                "{} with queryRope/keyRope or an INT8 attentionOut is not supported by npu-emu",
                nm("keySharedPrefixOptional")
            )));
        }
        return infer_launch_prefix(api, &q, kv, sp, dm.n2, pse, mask, p, &out, lse, ext);
    }
    infer_launch_kv(api, &q, kv, &dm, pse, mask, p, &out, lse, post, ext)
}

/// The shared prefix: keySharedPrefix, valueSharedPrefix, its S and the valid length.
type SharedPrefix = (T, T, usize, usize);

/// FusedInferAttentionScore's `keySharedPrefix`/`valueSharedPrefix` (both or neither; the
/// key's dtype and rank, batch 1, the key's N and D (H with BSH), the same S for both) and
/// `actualSharedPrefixLen` (`[1]`, at most that S; all of it when absent). npu-emu models
/// the prefix over one dense key and value tensor.
fn shared_prefix(
    kv: &KvIn,
    dm: &FaDims,
    layout: *const c_char,
    [(kp, kn), (vp, vn)]: [(*const c_void, &'static str); 2],
    (len, ln): (*const c_void, &'static str),
) -> NnResult<Option<SharedPrefix>> {
    let kp = a::opt_tensor(kp, kn)?;
    let vp = a::opt_tensor(vp, vn)?;
    let (kp, vp) = match (kp, vp) {
        (None, None) => {
            if !len.is_null() {
                return Err(NnError::invalid(format!("{ln} is given without {kn}/{vn}")));
            }
            return Ok(None);
        }
        (Some(k), Some(v)) => (k, v),
        _ => {
            return Err(NnError::invalid(format!(
                "{kn} and {vn} must both be given or both be nullptr"
            )))
        }
    };
    if kv.table.is_some() || !kv.lists[0].is_empty() || kv.anti.iter().any(Option::is_some) {
        return Err(NnError::invalid(format!(
            "{kn} with a paged, listed or antiquantized key/value is not supported by npu-emu \
             (the shared prefix is modelled over one dense key and value tensor)"
        )));
    }
    let (l, _, _) = infer_layout(layout, true)?;
    let mut sp = [0usize; 2];
    for (i, (x, full)) in [(&kp, &kv.k), (&vp, &kv.v)].into_iter().enumerate() {
        a::dtype_in(x, &[full.dtype()])?;
        let ok = x.ndim() == full.ndim() && x.ndim() == l.rank() && {
            let (b, s, n, d) = l.dims(x.shape(), dm.n2);
            let (_, _, fn_, fd) = l.dims(full.shape(), dm.n2);
            sp[i] = s;
            b == 1 && n == fn_ && d == fd && x.shape().last() == full.shape().last()
        };
        if !ok {
            return Err(NnError::invalid(format!(
                "{} has shape {:?}; it must be {:?}'s shape with batch 1 and its own S",
                x.arg,
                x.shape(),
                full.shape()
            )));
        }
    }
    if sp[0] != sp[1] {
        return Err(NnError::invalid(format!(
            "{kn} has S = {} and {vn} S = {}; they must be equal",
            sp[0], sp[1]
        )));
    }
    let valid = match a::opt_int_array(len, ln)? {
        None => sp[0],
        Some(v) => {
            if v.len() != 1 || v[0] < 0 || v[0] as usize > sp[0] {
                return Err(NnError::invalid(format!(
                    "{ln} is {v:?}; it takes one length in [0, {}] (the prefix's S)",
                    sp[0]
                )));
            }
            v[0] as usize
        }
    };
    Ok(Some((kp, vp, sp[0], valid)))
}

/// The inference attention with a shared prefix before every batch's key and value
/// ([`fused::with_shared_prefix`]): the valid key lengths become prefix + key.
#[allow(clippy::too_many_arguments)]
fn infer_launch_prefix(
    api: &'static str,
    q: &T,
    kv: KvIn,
    (kp, vp, _, sp_len): SharedPrefix,
    n2: usize,
    pse: Option<T>,
    mask: Option<T>,
    p: FaParams,
    out: &T,
    lse: Option<&T>,
    ext: InferExt,
) -> NnResult<Built> {
    let mut l = Launch::new(api);
    l.input(q);
    let (ik, iv) = (l.input(&kv.k), l.input(&kv.v));
    let (ikp, ivp) = (l.input(&kp), l.input(&vp));
    let ip = pse.as_ref().map(|t| l.input(t));
    let im = mask.as_ref().map(|t| l.input(t));
    let is = ext.sink.as_ref().map(|t| l.input(t));
    let o = l.output(out);
    let il = lse.map(|t| l.output(t));
    l.finish(move |vs, _| {
        let lens = p.kv_lens.as_deref();
        let (mut kb, ks, valid) =
            fused::with_shared_prefix(&vs[ik], &vs[ikp], sp_len, p.layout, n2, lens)?;
        let (mut vb, vsh, _) =
            fused::with_shared_prefix(&vs[iv], &vs[ivp], sp_len, p.layout, n2, lens)?;
        let mut p = attention_new::with_sink(&p, is.map(|i| &vs[i]))?;
        p.kv_lens = Some(valid);
        fused::inference_attention(
            &vs[0],
            &npu_emu::ops::view::View::of_slice(&mut kb, DType::F64, &ks),
            &npu_emu::ops::view::View::of_slice(&mut vb, DType::F64, &vsh),
            ip.map(|i| &vs[i]),
            im.map(|i| &vs[i]),
            &p,
            &vs[o],
            il.map(|i| &vs[i]),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedInferAttentionScoreGetWorkspaceSize(
    query: *const c_void,
    key: *const c_void,
    value: *const c_void,
    pseShift: *const c_void,
    attenMask: *const c_void,
    actualSeqLengths: *const c_void,
    actualSeqLengthsKv: *const c_void,
    deqScale1: *const c_void,
    quantScale1: *const c_void,
    deqScale2: *const c_void,
    quantScale2: *const c_void,
    quantOffset2: *const c_void,
    antiquantScale: *const c_void,
    antiquantOffset: *const c_void,
    blockTable: *const c_void,
    queryPaddingSize: *const c_void,
    kvPaddingSize: *const c_void,
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
    attentionOut: *const c_void,
    softmaxLse: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = innerPrecise;
    phase1(
        "aclnnFusedInferAttentionScoreGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            fused_infer(
                "aclnnFusedInferAttentionScore",
                true,
                [query, key, value, pseShift, attenMask],
                [actualSeqLengths, actualSeqLengthsKv],
                &[
                    deqScale1,
                    quantScale1,
                    deqScale2,
                    quantScale2,
                    quantOffset2,
                    antiquantScale,
                    antiquantOffset,
                    blockTable,
                    queryPaddingSize,
                    kvPaddingSize,
                ],
                [blockSize, antiquantMode, 0, 0],
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                sparseMode,
                softmaxLseFlag,
                attentionOut,
                softmaxLse,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedInferAttentionScoreV2GetWorkspaceSize(
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
    let _ = innerPrecise;
    phase1(
        "aclnnFusedInferAttentionScoreV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            fused_infer(
                "aclnnFusedInferAttentionScoreV2",
                false,
                [query, key, value, pseShiftOptional, attenMaskOptional],
                [actualSeqLengthsOptional, actualSeqLengthsKvOptional],
                &[
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
                ],
                [
                    blockSize,
                    antiquantMode,
                    keyAntiquantMode,
                    valueAntiquantMode,
                ],
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                sparseMode,
                softmaxLseFlag,
                attentionOut,
                softmaxLse,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedInferAttentionScoreV3GetWorkspaceSize(
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
    let _ = innerPrecise;
    phase1(
        "aclnnFusedInferAttentionScoreV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            fused_infer(
                "aclnnFusedInferAttentionScoreV3",
                false,
                [query, key, value, pseShiftOptional, attenMaskOptional],
                [actualSeqLengthsOptional, actualSeqLengthsKvOptional],
                &[
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
                ],
                [
                    blockSize,
                    antiquantMode,
                    keyAntiquantMode,
                    valueAntiquantMode,
                ],
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                sparseMode,
                softmaxLseFlag,
                attentionOut,
                softmaxLse,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
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
    let _ = (innerPrecise, queryQuantMode);
    phase1(
        "aclnnFusedInferAttentionScoreV4GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            fused_infer(
                "aclnnFusedInferAttentionScoreV4",
                false,
                [query, key, value, pseShiftOptional, attenMaskOptional],
                [actualSeqLengthsOptional, actualSeqLengthsKvOptional],
                &[
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
                ],
                [
                    blockSize,
                    antiquantMode,
                    keyAntiquantMode,
                    valueAntiquantMode,
                ],
                numHeads,
                scaleValue,
                [preTokens, nextTokens],
                inputLayout,
                numKeyValueHeads,
                sparseMode,
                softmaxLseFlag,
                attentionOut,
                softmaxLse,
            )
        },
    )
}

crate::phase2!(
    aclnnRmsNorm,
    aclnnRmsNormGrad,
    aclnnRotaryPositionEmbedding,
    aclnnRotaryPositionEmbeddingGrad,
    aclnnApplyRotaryPosEmb,
    aclnnApplyRotaryPosEmbV2,
    aclnnSwiGlu,
    aclnnSwiGluGrad,
    aclnnFlashAttentionScore,
    aclnnFlashAttentionScoreV2,
    aclnnFlashAttentionScoreGrad,
    aclnnFlashAttentionScoreGradV2,
    aclnnFlashAttentionVarLenScore,
    aclnnFlashAttentionVarLenScoreV2,
    aclnnFlashAttentionVarLenScoreV3,
    aclnnFlashAttentionVarLenScoreV4,
    aclnnFlashAttentionUnpaddingScoreGrad,
    aclnnFlashAttentionUnpaddingScoreGradV2,
    aclnnFlashAttentionUnpaddingScoreGradV3,
    aclnnFlashAttentionUnpaddingScoreGradV4,
    aclnnPromptFlashAttention,
    aclnnPromptFlashAttentionV2,
    aclnnPromptFlashAttentionV3,
    aclnnIncreFlashAttention,
    aclnnIncreFlashAttentionV2,
    aclnnIncreFlashAttentionV3,
    aclnnIncreFlashAttentionV4,
    aclnnFusedInferAttentionScore,
    aclnnFusedInferAttentionScoreV2,
    aclnnFusedInferAttentionScoreV3,
    aclnnFusedInferAttentionScoreV4
);
