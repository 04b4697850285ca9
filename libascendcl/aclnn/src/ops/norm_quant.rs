//! The normalisation + quantisation fused family of large-model inference:
//! `aclnn_inplace_add_rms_norm.h`, `aclnn_gemma_rms_norm.h`, `aclnn_add_rms_norm_cast.h`,
//! `aclnn_deep_norm.h`, `aclnn_deep_norm_grad.h`, `aclnn_rms_norm_quant.h`,
//! `aclnn_add_rms_norm_quant.h`, `aclnn_add_rms_norm_quant_v2.h`,
//! `aclnn_rms_norm_dynamic_quant.h`, `aclnn_add_rms_norm_dynamic_quant.h`,
//! `aclnn_add_rms_norm_dynamic_quant_v2.h`, `aclnn_layer_norm_quant.h`,
//! `aclnn_add_layer_norm_quant_v2.h`, `aclnn_swi_glu_quant.h` (`aclnnSwiGluQuant`, `…V2`),
//! `aclnn_dequant_swiglu_quant.h`, `aclnn_quantize.h` and `aclnn_trans_quant_param_v3.h` (V2
//! with a rounding mode, through `quant.rs`). The checks follow CANN's operator reference (the
//! Atlas A2 dtype lists; where a page gives `ACLNN_ERR_INNER_TILING_ERROR` for shapes, so do
//! we); the computation is `npu_emu::ops::norm_quant` and `npu_emu::ops::norm`.
//!
//! Not provided: the INT4/INT32-packed, FLOAT8 and HIFLOAT8 quantised outputs (refused,
//! naming the type), as in `quant.rs`; LayerNormQuant's dynamic mode and AddLayerNormQuantV2's
//! dynamic, per-channel and two-output modes (Atlas A2/A3 support only static per-tensor);
//! SwiGluQuant's `dynamic_msd` mode and INT4 output; DequantSwigluQuant's MoE groups.

use super::args::{self as a, FLOATS3, T};
use super::fused::{check_rstd, gamma_suffix};
use super::launch::{phase1, Launch};
use super::norm::{add_rms_norm, row_stat, trailing};
use super::quant::{dst_int8, out_int8};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::norm_quant::{self as nq, DynamicQuant, RmsNormIn, StaticQuant};
use npu_emu::ops::{iter, norm};
use std::ffi::{c_char, c_void, CStr};

/// `ACLNN_ERR_INNER_TILING_ERROR`: the shape errors of the pages that list it.
const TILING: i32 = 561002;

/// A shape error reported as `ACLNN_ERR_INNER_TILING_ERROR`.
fn tiling<R>(r: NnResult<R>) -> NnResult<R> {
    r.map_err(|e| NnError::new(TILING, e.msg))
}

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

/// `t` has `like`'s dtype and shape.
fn like(t: &T, x: &T) -> NnResult<()> {
    a::same_dtype(t, x)?;
    a::same_shape(t, x.shape())
}

fn rank(t: &T, lo: usize, hi: usize) -> NnResult<()> {
    if (lo..=hi).contains(&t.ndim()) {
        Ok(())
    } else {
        Err(bad(format!(
            "{} must have {lo} to {hi} dimensions, but its shape is {:?}",
            t.arg,
            t.shape()
        )))
    }
}

fn epsilon_ok(eps: f64) -> NnResult<()> {
    if eps.is_finite() {
        Ok(())
    } else {
        Err(bad(format!("epsilon {eps} is not finite")))
    }
}

/// Views of the tensors added with `has` (from view `i` on): `Some(&v[k])` for each present.
fn opt_views<'v>(
    v: &'v [npu_emu::ops::View],
    i: &mut usize,
    has: bool,
) -> Option<&'v npu_emu::ops::View> {
    has.then(|| {
        *i += 1;
        &v[*i - 1]
    })
}

/// A C string argument (`quantMode` and the like), or None for a null pointer.
fn opt_str(p: *const c_char) -> Option<String> {
    // SAFETY: a non-null string argument is a NUL-terminated C string, as the prototypes
    // require.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The SwiGlu quantisation mode `"dynamic"` or `"static"` of `quantModeOptional`, `none`
/// when it is a null pointer (an error when `none` is None).
fn swiglu_mode(
    p: *const c_char,
    none: Option<nq::SwiGluQuantMode>,
) -> NnResult<nq::SwiGluQuantMode> {
    match opt_str(p).as_deref() {
        None => none.ok_or_else(|| NnError::nullptr("quantModeOptional is nullptr")),
        Some("dynamic") => Ok(nq::SwiGluQuantMode::Dynamic),
        Some("static") => Ok(nq::SwiGluQuantMode::Static),
        Some(m) => Err(bad(format!(
            "quantModeOptional \"{m}\" must be \"dynamic\" or \"static\" (\"dynamic_msd\" \
             is not supported)"
        ))),
    }
}

// ---------------------------------------------------------------- InplaceAddRmsNorm

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceAddRmsNormGetWorkspaceSize(
    x1Ref: *const c_void,
    x2Ref: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    rstdOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    add_rms_norm(
        [
            "aclnnInplaceAddRmsNormGetWorkspaceSize",
            "aclnnInplaceAddRmsNorm",
        ],
        [
            (x1Ref, "x1Ref"),
            (x2Ref, "x2Ref"),
            (x1Ref, "x1Ref"),
            (x2Ref, "x2Ref"),
        ],
        gamma,
        epsilon,
        rstdOut,
        workspaceSize,
        executor,
    )
}

// ---------------------------------------------------------------- GemmaRmsNorm

#[no_mangle]
pub unsafe extern "C" fn aclnnGemmaRmsNormGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    yOut: *const c_void,
    rstdOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGemmaRmsNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let y = a::tensor(yOut, "yOut")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            for t in [&x, &g, &y] {
                a::dtype_in(t, FLOATS3)?;
            }
            a::dtype_in(&r, &[DType::F32])?;
            a::same_dtype(&g, &x)?;
            a::same_dtype(&y, &x)?;
            tiling((|| {
                for t in [&x, &g, &y, &r] {
                    rank(t, 1, 8)?;
                }
                let gn = gamma_suffix(&x, &g)?;
                a::same_shape(&y, x.shape())?;
                check_rstd(&r, &x, gn)?;
                epsilon_ok(epsilon)
            })())?;
            let mut l = Launch::new("aclnnGemmaRmsNorm");
            l.input(&x);
            l.input(&g);
            l.output(&y);
            l.output(&r);
            l.finish(move |v, _| nq::gemma_rms_norm(&v[0], &v[1], epsilon, &v[2], &v[3]))
        },
    )
}

// ---------------------------------------------------------------- AddRmsNormCast

#[no_mangle]
pub unsafe extern "C" fn aclnnAddRmsNormCastGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    epsilon: f64,
    y1Out: *const c_void,
    y2Out: *const c_void,
    rstdOut: *const c_void,
    xOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddRmsNormCastGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let g = a::tensor(gamma, "gamma")?;
            let y1 = a::tensor(y1Out, "y1Out")?;
            let y2 = a::tensor(y2Out, "y2Out")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            let xo = a::tensor(xOut, "xOut")?;
            let half = &[DType::F16, DType::BF16];
            for t in [&a1, &a2, &g, &y2, &xo] {
                a::dtype_in(t, half)?;
                a::same_dtype(t, &a1)?;
            }
            a::dtype_in(&y1, &[DType::F32])?;
            a::dtype_in(&r, &[DType::F32])?;
            tiling((|| {
                for t in [&a1, &a2, &g, &y1, &y2, &xo, &r] {
                    rank(t, 1, 8)?;
                }
                for t in [&a2, &y1, &y2, &xo] {
                    a::same_shape(t, a1.shape())?;
                }
                let gn = gamma_suffix(&a1, &g)?;
                check_rstd(&r, &a1, gn)?;
                epsilon_ok(epsilon)
            })())?;
            let mut l = Launch::new("aclnnAddRmsNormCast");
            for t in [&a1, &a2, &g] {
                l.input(t);
            }
            for t in [&y1, &y2, &r, &xo] {
                l.output(t);
            }
            l.finish(move |v, _| {
                norm::add_rms_norm(&v[0], &v[1], &v[2], epsilon, &v[3], &v[5], &v[6])?;
                iter::copy(&v[3], &v[4])
            })
        },
    )
}

// ---------------------------------------------------------------- DeepNorm, DeepNormGrad

#[no_mangle]
pub unsafe extern "C" fn aclnnDeepNormGetWorkspaceSize(
    x: *const c_void,
    gx: *const c_void,
    beta: *const c_void,
    gamma: *const c_void,
    alpha: f64,
    epsilon: f64,
    meanOut: *const c_void,
    rstdOut: *const c_void,
    yOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDeepNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let gx = a::tensor(gx, "gx")?;
            let be = a::tensor(beta, "beta")?;
            let g = a::tensor(gamma, "gamma")?;
            let m = a::tensor(meanOut, "meanOut")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            let y = a::tensor(yOut, "yOut")?;
            a::dtype_in(&x, FLOATS3)?;
            rank(&x, 2, 8)?;
            for t in [&gx, &y] {
                like(t, &x)?;
            }
            let gn = trailing(&g, &x)?;
            a::same_dtype(&g, &x)?;
            like(&be, &g)?;
            rank(&g, 1, 7)?;
            row_stat(&m, &x, gn)?;
            row_stat(&r, &x, gn)?;
            epsilon_ok(epsilon)?;
            let mut l = Launch::new("aclnnDeepNorm");
            for t in [&x, &gx, &be, &g] {
                l.input(t);
            }
            for t in [&m, &r, &y] {
                l.output(t);
            }
            l.finish(move |v, _| {
                nq::deep_norm(
                    &v[0], &v[1], &v[2], &v[3], alpha, epsilon, &v[4], &v[5], &v[6],
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDeepNormGradGetWorkspaceSize(
    dy: *const c_void,
    x: *const c_void,
    gx: *const c_void,
    gamma: *const c_void,
    mean: *const c_void,
    rstd: *const c_void,
    alpha: f64,
    dxOut: *const c_void,
    dgxOut: *const c_void,
    dbetaOut: *const c_void,
    dgammaOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDeepNormGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let dy = a::tensor(dy, "dy")?;
            let x = a::tensor(x, "x")?;
            let gx = a::tensor(gx, "gx")?;
            let g = a::tensor(gamma, "gamma")?;
            let m = a::tensor(mean, "mean")?;
            let r = a::tensor(rstd, "rstd")?;
            let dx = a::tensor(dxOut, "dxOut")?;
            let dgx = a::tensor(dgxOut, "dgxOut")?;
            let db = a::tensor(dbetaOut, "dbetaOut")?;
            let dg = a::tensor(dgammaOut, "dgammaOut")?;
            a::dtype_in(&x, FLOATS3)?;
            rank(&x, 2, 8)?;
            for t in [&dy, &gx, &dx, &dgx] {
                like(t, &x)?;
            }
            let gn = trailing(&g, &x)?;
            a::same_dtype(&g, &x)?;
            rank(&g, 1, 7)?;
            row_stat(&m, &x, gn)?;
            a::dtype_in(&r, &[DType::F32])?;
            a::same_shape(&r, m.shape())?;
            for t in [&db, &dg] {
                a::dtype_in(t, &[DType::F32])?;
                a::same_shape(t, g.shape())?;
            }
            let mut l = Launch::new("aclnnDeepNormGrad");
            for t in [&dy, &x, &gx, &g, &m, &r] {
                l.input(t);
            }
            for t in [&dx, &dgx, &db, &dg] {
                l.output(t);
            }
            l.finish(move |v, _| {
                nq::deep_norm_grad(
                    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], alpha, &v[6], &v[7], &v[8], &v[9],
                )
            })
        },
    )
}

// ---------------------------------------------------------------- RmsNorm + static quant

/// A per-row vector of x's last dimension `h`: `[h]`, or `[1, h]` when `two_d`.
fn last_dim_vec(t: &T, h: usize, two_d: bool) -> NnResult<()> {
    let ok = t.shape() == [h] || (two_d && t.shape() == [1, h]);
    if ok {
        Ok(())
    } else {
        let or = if two_d {
            format!(" or [1, {h}]")
        } else {
            String::new()
        };
        Err(bad(format!(
            "{} has shape {:?}; expected [{h}]{or} (x's last dimension)",
            t.arg,
            t.shape()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRmsNormQuantGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    epsilon: f64,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRmsNormQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let be = a::tensor(beta, "beta")?;
            let s = a::tensor(scale, "scale")?;
            let o = a::tensor(offset, "offset")?;
            let y = a::tensor(y, "y")?;
            a::dtype_in(&x, &[DType::F16, DType::BF16])?;
            for t in [&g, &be, &s] {
                a::same_dtype(t, &x)?;
            }
            a::dtype_in(&o, &[DType::I8])?;
            out_int8(&y)?;
            rank(&x, 1, 8)?;
            if x.numel() == 0 {
                return Err(bad(format!(
                    "x must not be empty, but its shape is {:?}",
                    x.shape()
                )));
            }
            let h = x.shape()[x.ndim() - 1];
            last_dim_vec(&g, h, true)?;
            last_dim_vec(&be, h, true)?;
            a::same_shape(&s, &[1])?;
            a::same_shape(&o, &[1])?;
            a::same_shape(&y, x.shape())?;
            epsilon_ok(epsilon)?;
            let mut l = Launch::new("aclnnRmsNormQuant");
            for t in [&x, &g, &be, &s, &o] {
                l.input(t);
            }
            l.output(&y);
            l.finish(move |v, _| {
                let p = RmsNormIn {
                    x1: &v[0],
                    x2: None,
                    x_out: None,
                    gamma: &v[1],
                    beta: Some(&v[2]),
                    eps: epsilon,
                    rms_out: None,
                };
                let q = StaticQuant {
                    scale: &v[3],
                    offset: Some(&v[4]),
                    div: true,
                    out: &v[5],
                };
                nq::rms_norm_quant(&p, &[q])
            })
        },
    )
}

/// AddRmsNormQuant and V2 (`beta`, `rms_out`).
#[allow(clippy::too_many_arguments)]
unsafe fn add_rms_norm_quant(
    [name, api]: [&'static str; 2],
    [x1, x2, gamma, scales1, scales2, zp1, zp2, beta]: [*const c_void; 8],
    epsilon: f64,
    div_mode: bool,
    [y1, y2, x_out, rms_out]: [*const c_void; 4],
    v2: bool,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let a1 = a::tensor(x1, "x1")?;
        let a2 = a::tensor(x2, "x2")?;
        let g = a::tensor(gamma, "gamma")?;
        let s1 = a::tensor(scales1, "scales1")?;
        let s2 = a::opt_tensor(scales2, "scales2Optional")?;
        let z1 = a::opt_tensor(zp1, "zeroPoints1Optional")?;
        let z2 = a::opt_tensor(zp2, "zeroPoints2Optional")?;
        let be = a::opt_tensor(beta, "betaOptional")?;
        let y1 = a::tensor(y1, "y1Out")?;
        let y2 = a::tensor(y2, "y2Out")?;
        let xo = a::tensor(x_out, "xOut")?;
        let rn = if v2 {
            a::opt_tensor(rms_out, "rmsNormOut")?
        } else {
            None
        };
        a::dtype_in(&a1, &[DType::F16, DType::BF16])?;
        rank(&a1, 1, 8)?;
        for t in [&a2, &xo].into_iter().chain(rn.as_ref()) {
            like(t, &a1)?;
        }
        trailing(&g, &a1)?;
        a::same_dtype(&g, &a1)?;
        if let Some(b) = &be {
            like(b, &g)?;
        }
        // The Atlas A2 combinations: FLOAT16 x with FLOAT scales and INT32 zero points,
        // BFLOAT16 x with BFLOAT16 for both.
        let (sd, zd) = if a1.dtype() == DType::F16 {
            (DType::F32, DType::I32)
        } else {
            (DType::BF16, DType::BF16)
        };
        for t in std::iter::once(&s1).chain(s2.as_ref()) {
            a::dtype_in(t, &[sd])?;
            a::same_shape(t, g.shape())?;
        }
        for t in z1.iter().chain(z2.as_ref()) {
            a::dtype_in(t, &[zd])?;
            a::same_shape(t, g.shape())?;
        }
        out_int8(&y1)?;
        out_int8(&y2)?;
        a::same_shape(&y1, a1.shape())?;
        if s2.is_some() {
            a::same_shape(&y2, a1.shape())?;
        }
        if !div_mode {
            return Err(bad(
                "divMode must be true (the Atlas A2 products support only division)".into(),
            ));
        }
        epsilon_ok(epsilon)?;
        let mut l = Launch::new(api);
        for t in [&a1, &a2, &g, &s1] {
            l.input(t);
        }
        let has = [s2.is_some(), z1.is_some(), z2.is_some(), be.is_some()];
        for t in [&s2, &z1, &z2, &be].into_iter().flatten() {
            l.input(t);
        }
        let first_out = l.output(&y1);
        l.output(&y2);
        l.output(&xo);
        let has_rn = rn.is_some();
        if let Some(t) = &rn {
            l.output(t);
        }
        l.finish(move |v, _| {
            let mut i = 4;
            let s2v = opt_views(v, &mut i, has[0]);
            let z1v = opt_views(v, &mut i, has[1]);
            let z2v = opt_views(v, &mut i, has[2]);
            let bev = opt_views(v, &mut i, has[3]);
            let o = first_out;
            let p = RmsNormIn {
                x1: &v[0],
                x2: Some(&v[1]),
                x_out: Some(&v[o + 2]),
                gamma: &v[2],
                beta: bev,
                eps: epsilon,
                rms_out: has_rn.then(|| &v[o + 3]),
            };
            let mut qs = vec![StaticQuant {
                scale: &v[3],
                offset: z1v,
                div: div_mode,
                out: &v[o],
            }];
            if let Some(s) = s2v {
                qs.push(StaticQuant {
                    scale: s,
                    offset: z2v,
                    div: div_mode,
                    out: &v[o + 1],
                });
            }
            nq::rms_norm_quant(&p, &qs)
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddRmsNormQuantGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    scales1: *const c_void,
    scales2Optional: *const c_void,
    zeroPoints1Optional: *const c_void,
    zeroPoints2Optional: *const c_void,
    axis: i64,
    epsilon: f64,
    divMode: bool,
    y1Out: *const c_void,
    y2Out: *const c_void,
    xOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    // axis: "only -1 is supported; other values have no effect"
    let _ = axis;
    add_rms_norm_quant(
        [
            "aclnnAddRmsNormQuantGetWorkspaceSize",
            "aclnnAddRmsNormQuant",
        ],
        [
            x1,
            x2,
            gamma,
            scales1,
            scales2Optional,
            zeroPoints1Optional,
            zeroPoints2Optional,
            std::ptr::null(),
        ],
        epsilon,
        divMode,
        [y1Out, y2Out, xOut, std::ptr::null()],
        false,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddRmsNormQuantV2GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    scales1: *const c_void,
    scales2Optional: *const c_void,
    zeroPoints1Optional: *const c_void,
    zeroPoints2Optional: *const c_void,
    betaOptional: *const c_void,
    axis: i64,
    epsilon: f64,
    divMode: bool,
    y1Out: *const c_void,
    y2Out: *const c_void,
    xOut: *const c_void,
    rmsNormOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = axis;
    add_rms_norm_quant(
        [
            "aclnnAddRmsNormQuantV2GetWorkspaceSize",
            "aclnnAddRmsNormQuantV2",
        ],
        [
            x1,
            x2,
            gamma,
            scales1,
            scales2Optional,
            zeroPoints1Optional,
            zeroPoints2Optional,
            betaOptional,
        ],
        epsilon,
        divMode,
        [y1Out, y2Out, xOut, rmsNormOut],
        true,
        workspaceSize,
        executor,
    )
}

// ---------------------------------------------------------------- RmsNorm + dynamic quant

/// A quantised output of x's shape (or `[rows, h]` when `flat`) and its per-row scale (x's
/// leading dimensions, or `[rows]` when `flat`).
fn dyn_outputs(y: &T, s: &T, x: &T, flat: bool) -> NnResult<()> {
    out_int8(y)?;
    a::dtype_in(s, &[DType::F32])?;
    let lead = &x.shape()[..x.ndim() - 1];
    let rows: usize = lead.iter().product();
    let h = x.shape()[x.ndim() - 1];
    if !(y.shape() == x.shape() || flat && y.shape() == [rows, h]) {
        a::same_shape(y, x.shape())?;
    }
    if !(s.shape() == lead || flat && s.shape() == [rows]) {
        a::same_shape(s, lead)?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRmsNormDynamicQuantGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    smoothScalesOptional: *const c_void,
    betaOptional: *const c_void,
    epsilon: f64,
    dstType: i64,
    yOut: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRmsNormDynamicQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let sm = a::opt_tensor(smoothScalesOptional, "smoothScalesOptional")?;
            let be = a::opt_tensor(betaOptional, "betaOptional")?;
            let y = a::tensor(yOut, "yOut")?;
            let s = a::tensor(scaleOut, "scaleOut")?;
            a::dtype_in(&x, &[DType::F16, DType::BF16])?;
            for t in std::iter::once(&g).chain(sm.as_ref()).chain(be.as_ref()) {
                a::same_dtype(t, &x)?;
            }
            dst_int8(dstType)?;
            out_int8(&y)?;
            a::dtype_in(&s, &[DType::F32])?;
            tiling((|| {
                rank(&x, 2, 8)?;
                if x.numel() == 0 {
                    return Err(bad(format!(
                        "x must not be empty, but its shape is {:?}",
                        x.shape()
                    )));
                }
                let h = x.shape()[x.ndim() - 1];
                for t in std::iter::once(&g).chain(sm.as_ref()).chain(be.as_ref()) {
                    last_dim_vec(t, h, false)?;
                }
                dyn_outputs(&y, &s, &x, false)?;
                epsilon_ok(epsilon)
            })())?;
            let mut l = Launch::new("aclnnRmsNormDynamicQuant");
            l.input(&x);
            l.input(&g);
            let has = [sm.is_some(), be.is_some()];
            for t in [&sm, &be].into_iter().flatten() {
                l.input(t);
            }
            let o = l.output(&y);
            l.output(&s);
            l.finish(move |v, _| {
                let mut i = 2;
                let smv = opt_views(v, &mut i, has[0]);
                let bev = opt_views(v, &mut i, has[1]);
                let p = RmsNormIn {
                    x1: &v[0],
                    x2: None,
                    x_out: None,
                    gamma: &v[1],
                    beta: bev,
                    eps: epsilon,
                    rms_out: None,
                };
                let q = DynamicQuant {
                    smooth: smv,
                    out: &v[o],
                    scale: &v[o + 1],
                };
                nq::rms_norm_dynamic_quant(&p, &[q])
            })
        },
    )
}

/// AddRmsNormDynamicQuant and V2 (`beta`, `outputMask`).
#[allow(clippy::too_many_arguments)]
unsafe fn add_rms_norm_dynamic_quant(
    [name, api]: [&'static str; 2],
    [x1, x2, gamma, smooth1, smooth2, beta]: [*const c_void; 6],
    epsilon: f64,
    mask: Option<*const c_void>,
    [y1, y2, x_out, scale1, scale2]: [*const c_void; 5],
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let a1 = a::tensor(x1, "x1")?;
        let a2 = a::tensor(x2, "x2")?;
        let g = a::tensor(gamma, "gamma")?;
        let sm1 = a::opt_tensor(smooth1, "smoothScale1Optional")?;
        let sm2 = a::opt_tensor(smooth2, "smoothScale2Optional")?;
        let be = a::opt_tensor(beta, "betaOptional")?;
        let y1 = a::tensor(y1, "y1Out")?;
        let y2 = a::tensor(y2, "y2Out")?;
        let xo = a::tensor(x_out, "xOut")?;
        let s1 = a::tensor(scale1, "scale1Out")?;
        let s2 = a::tensor(scale2, "scale2Out")?;
        let mask = match mask {
            Some(h) if !h.is_null() => Some(a::bool_array(h, "outputMaskOptional")?),
            _ => None,
        };
        a::dtype_in(&a1, &[DType::F16, DType::BF16])?;
        rank(&a1, 2, 8)?;
        like(&a2, &a1)?;
        like(&xo, &a1)?;
        let h = a1.shape()[a1.ndim() - 1];
        for t in std::iter::once(&g).chain(&sm1).chain(&sm2).chain(&be) {
            a::same_dtype(t, &a1)?;
            last_dim_vec(t, h, false)?;
        }
        // Which quantised outputs are valid (the reference's "输出约束说明").
        let valid = match &mask {
            None => {
                if sm2.is_some() && sm1.is_none() {
                    return Err(bad(
                        "smoothScale2Optional is given without smoothScale1Optional".into(),
                    ));
                }
                [true, sm2.is_some()]
            }
            Some(m) => {
                if m.len() != 2 {
                    return Err(bad(format!(
                        "outputMaskOptional must have 2 values, not {}",
                        m.len()
                    )));
                }
                if !m[0] && !m[1] {
                    return Err(bad("outputMaskOptional cannot be [false, false]".into()));
                }
                if sm1.is_some() && !m[0] || sm2.is_some() && !m[1] {
                    return Err(bad(format!(
                        "outputMaskOptional {m:?}: a given smoothScale needs its output \
                         enabled"
                    )));
                }
                [m[0], m[1]]
            }
        };
        for (ok, y, s) in [(valid[0], &y1, &s1), (valid[1], &y2, &s2)] {
            if ok {
                dyn_outputs(y, s, &a1, true)?;
            } else {
                out_int8(y)?;
                a::dtype_in(s, &[DType::F32])?;
            }
        }
        epsilon_ok(epsilon)?;
        let mut l = Launch::new(api);
        l.input(&a1);
        l.input(&a2);
        l.input(&g);
        let has = [sm1.is_some(), sm2.is_some(), be.is_some()];
        for t in [&sm1, &sm2, &be].into_iter().flatten() {
            l.input(t);
        }
        let o = l.output(&xo);
        for (ok, y, s) in [(valid[0], &y1, &s1), (valid[1], &y2, &s2)] {
            if ok {
                l.output(y);
                l.output(s);
            }
        }
        l.finish(move |v, _| {
            let mut i = 3;
            let sm1v = opt_views(v, &mut i, has[0]);
            let sm2v = opt_views(v, &mut i, has[1]);
            let bev = opt_views(v, &mut i, has[2]);
            let p = RmsNormIn {
                x1: &v[0],
                x2: Some(&v[1]),
                x_out: Some(&v[o]),
                gamma: &v[2],
                beta: bev,
                eps: epsilon,
                rms_out: None,
            };
            let mut k = o + 1;
            let mut qs = vec![];
            for (ok, smooth) in [(valid[0], sm1v), (valid[1], sm2v)] {
                if ok {
                    qs.push(DynamicQuant {
                        smooth,
                        out: &v[k],
                        scale: &v[k + 1],
                    });
                    k += 2;
                }
            }
            nq::rms_norm_dynamic_quant(&p, &qs)
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddRmsNormDynamicQuantGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    smoothScale1Optional: *const c_void,
    smoothScale2Optional: *const c_void,
    epsilon: f64,
    y1Out: *const c_void,
    y2Out: *const c_void,
    xOut: *const c_void,
    scale1Out: *const c_void,
    scale2Out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    add_rms_norm_dynamic_quant(
        [
            "aclnnAddRmsNormDynamicQuantGetWorkspaceSize",
            "aclnnAddRmsNormDynamicQuant",
        ],
        [
            x1,
            x2,
            gamma,
            smoothScale1Optional,
            smoothScale2Optional,
            std::ptr::null(),
        ],
        epsilon,
        None,
        [y1Out, y2Out, xOut, scale1Out, scale2Out],
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    smoothScale1Optional: *const c_void,
    smoothScale2Optional: *const c_void,
    betaOptional: *const c_void,
    epsilon: f64,
    outputMaskOptional: *const c_void,
    y1Out: *const c_void,
    y2Out: *const c_void,
    xOut: *const c_void,
    scale1Out: *const c_void,
    scale2Out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    add_rms_norm_dynamic_quant(
        [
            "aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize",
            "aclnnAddRmsNormDynamicQuantV2",
        ],
        [
            x1,
            x2,
            gamma,
            smoothScale1Optional,
            smoothScale2Optional,
            betaOptional,
        ],
        epsilon,
        Some(outputMaskOptional),
        [y1Out, y2Out, xOut, scale1Out, scale2Out],
        workspaceSize,
        executor,
    )
}

// ---------------------------------------------------------------- LayerNorm + static quant

/// `[1, h]`: gamma and beta in the per-tensor mode.
fn per_tensor_vec(t: &T, h: usize) -> NnResult<()> {
    a::same_shape(t, &[1, h])
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLayerNormQuantGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    scale: *const c_void,
    zeroPointsOptional: *const c_void,
    quantMode: i32,
    epsilon: f64,
    res: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLayerNormQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let be = a::tensor(beta, "beta")?;
            let s = a::tensor(scale, "scale")?;
            let z = a::opt_tensor(zeroPointsOptional, "zeroPointsOptional")?;
            let y = a::tensor(res, "res")?;
            let so = a::tensor(scaleOut, "scaleOut")?;
            a::dtype_in(&x, &[DType::F16, DType::BF16])?;
            rank(&x, 1, 8)?;
            for t in [&g, &be, &s] {
                a::same_dtype(t, &x)?;
            }
            if quantMode != 0 {
                return Err(bad(format!(
                    "quantMode {quantMode} is not supported; only 0 (static quantisation)"
                )));
            }
            let h = x.shape()[x.ndim() - 1];
            per_tensor_vec(&g, h)?;
            a::same_shape(&be, g.shape())?;
            a::same_shape(&s, &[1])?;
            if let Some(z) = &z {
                a::dtype_in(z, &[DType::I8])?;
                a::same_shape(z, &[1])?;
            }
            out_int8(&y)?;
            a::same_shape(&y, x.shape())?;
            a::dtype_in(&so, &[DType::F32])?;
            a::same_shape(&so, &x.shape()[..x.ndim() - 1])?;
            epsilon_ok(epsilon)?;
            let mut l = Launch::new("aclnnLayerNormQuant");
            for t in [&x, &g, &be, &s] {
                l.input(t);
            }
            let has_z = z.is_some();
            if let Some(z) = &z {
                l.input(z);
            }
            let o = l.output(&y);
            l.finish(move |v, _| {
                let q = StaticQuant {
                    scale: &v[3],
                    offset: has_z.then(|| &v[4]),
                    div: true,
                    out: &v[o],
                };
                nq::layer_norm_quant(&v[0], None, None, &v[1], &v[2], epsilon, None, None, &[q])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAddLayerNormQuantV2GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    biasOptional: *const c_void,
    scales1Optional: *const c_void,
    scales2Optional: *const c_void,
    zeroPoints1Optional: *const c_void,
    zeroPoints2Optional: *const c_void,
    quantMode: *const c_char,
    epsilon: f64,
    additionalOutput: bool,
    divMode: bool,
    y1Out: *const c_void,
    y2Out: *const c_void,
    xOut: *const c_void,
    layernormRes: *const c_void,
    outScales1Out: *const c_void,
    outScales2Out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddLayerNormQuantV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let a1 = a::tensor(x1, "x1")?;
            let a2 = a::tensor(x2, "x2")?;
            let g = a::tensor(gamma, "gamma")?;
            let be = a::tensor(beta, "beta")?;
            let bi = a::opt_tensor(biasOptional, "biasOptional")?;
            let s1 = a::opt_tensor(scales1Optional, "scales1Optional")?;
            let s2 = a::opt_tensor(scales2Optional, "scales2Optional")?;
            let z1 = a::opt_tensor(zeroPoints1Optional, "zeroPoints1Optional")?;
            let z2 = a::opt_tensor(zeroPoints2Optional, "zeroPoints2Optional")?;
            let mode =
                opt_str(quantMode).ok_or_else(|| NnError::nullptr("quantMode is nullptr"))?;
            let y1 = a::tensor(y1Out, "y1Out")?;
            let y2 = a::tensor(y2Out, "y2Out")?;
            let xo = a::tensor(xOut, "xOut")?;
            let ln = a::tensor(layernormRes, "layernormRes")?;
            let os1 = a::tensor(outScales1Out, "outScales1Out")?;
            let os2 = a::tensor(outScales2Out, "outScales2Out")?;
            match mode.as_str() {
                "static" => {}
                "dynamic" => {
                    return Err(bad(
                        "quantMode \"dynamic\" is not supported on Atlas A2/A3; use \"static\""
                            .into(),
                    ))
                }
                m => {
                    return Err(bad(format!(
                        "quantMode \"{m}\" must be \"static\" or \"dynamic\""
                    )))
                }
            }
            // Atlas A2/A3: static, per-tensor, one output, multiplication. (The page also says
            // additionalOutput must be false, but its own example passes true: xOut is written.)
            if divMode {
                return Err(bad(
                    "divMode must be false on Atlas A2/A3 (the scale multiplies)".into(),
                ));
            }
            if s2.is_some() || z2.is_some() {
                return Err(bad(
                    "scales2Optional and zeroPoints2Optional must be nullptr on Atlas A2/A3".into(),
                ));
            }
            let Some(s1) = s1 else {
                return Err(bad(
                    "scales1Optional is required when quantMode is \"static\"".into(),
                ));
            };
            a::dtype_in(&a1, FLOATS3)?;
            rank(&a1, 1, 8)?;
            for t in [&a2, &xo, &ln] {
                like(t, &a1)?;
            }
            let h = a1.shape()[a1.ndim() - 1];
            a::same_dtype(&g, &a1)?;
            per_tensor_vec(&g, h)?;
            like(&be, &g)?;
            if let Some(b) = &bi {
                a::same_dtype(b, &a1)?;
                if b.shape() != g.shape() {
                    a::same_shape(b, a1.shape())?;
                }
            }
            for t in std::iter::once(&s1).chain(&z1) {
                a::same_dtype(t, &a1)?;
                a::same_shape(t, &[1])?;
            }
            out_int8(&y1)?;
            out_int8(&y2)?;
            a::same_shape(&y1, a1.shape())?;
            a::dtype_in(&os1, &[DType::F32])?;
            a::dtype_in(&os2, &[DType::F32])?;
            epsilon_ok(epsilon)?;
            let mut l = Launch::new("aclnnAddLayerNormQuantV2");
            for t in [&a1, &a2, &g, &be, &s1] {
                l.input(t);
            }
            let has = [bi.is_some(), z1.is_some()];
            for t in [&bi, &z1].into_iter().flatten() {
                l.input(t);
            }
            let o = l.output(&y1);
            l.output(&ln);
            if additionalOutput {
                l.output(&xo);
            }
            l.finish(move |v, _| {
                let mut i = 5;
                let biv = opt_views(v, &mut i, has[0]);
                let z1v = opt_views(v, &mut i, has[1]);
                let q = StaticQuant {
                    scale: &v[4],
                    offset: z1v,
                    div: false,
                    out: &v[o],
                };
                nq::layer_norm_quant(
                    &v[0],
                    Some(&v[1]),
                    biv,
                    &v[2],
                    &v[3],
                    epsilon,
                    additionalOutput.then(|| &v[o + 2]),
                    Some(&v[o + 1]),
                    &[q],
                )
            })
        },
    )
}

// ---------------------------------------------------------------- TransQuantParamV3

#[no_mangle]
pub unsafe extern "C" fn aclnnTransQuantParamV3GetWorkspaceSize(
    scale: *const c_void,
    offset: *const c_void,
    roundMode: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    super::quant::trans_quant_param(
        [
            "aclnnTransQuantParamV3GetWorkspaceSize",
            "aclnnTransQuantParamV3",
        ],
        scale,
        offset,
        roundMode,
        out,
        workspaceSize,
        executor,
    )
}

// ---------------------------------------------------------------- Quantize

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantizeGetWorkspaceSize(
    x: *const c_void,
    scales: *const c_void,
    zeroPoints: *const c_void,
    dtype: i32,
    axis: i32,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnQuantizeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let s = a::tensor(scales, "scales")?;
            let z = a::opt_tensor(zeroPoints, "zeroPoints")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS3)?;
            a::dtype_in(&s, FLOATS3)?;
            if x.dtype() != DType::F32 {
                a::same_dtype(&s, &x)?;
            }
            // Atlas A2/A3: zero points INT32, INT8, UINT8 or BFLOAT16 (then x and scales too).
            if let Some(z) = &z {
                a::dtype_in(z, &[DType::I32, DType::I8, DType::U8, DType::BF16])?;
                if z.dtype() == DType::BF16 {
                    a::same_dtype(&x, z)?;
                    a::same_dtype(&s, z)?;
                }
            }
            let want = match dtype {
                2 => DType::I8,
                4 => DType::U8,
                3 => DType::I32,
                34..=36 => {
                    return Err(bad(format!(
                        "dtype {dtype} ({}) is not supported on Atlas A2/A3; use ACL_INT8, \
                     ACL_UINT8 or ACL_INT32",
                        npu_emu::formats::dtype_name(dtype)
                    )))
                }
                _ => {
                    return Err(bad(format!(
                        "dtype {dtype} must be ACL_INT8 (2), ACL_UINT8 (4) or ACL_INT32 (3)"
                    )))
                }
            };
            a::dtype_in(&o, &[want])?;
            rank(&x, 1, 8)?;
            a::same_shape(&o, x.shape())?;
            let ax = a::dim(axis as i64, x.ndim(), "axis")?;
            let n = x.shape()[ax];
            for t in std::iter::once(&s).chain(&z) {
                if t.ndim() != 1 || (t.numel() != 1 && t.numel() != n) {
                    return Err(bad(format!(
                        "{} has shape {:?}; it must be 1-D of 1 or {n} elements (x's dimension \
                     {ax})",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            if let Some(z) = &z {
                if z.numel() != s.numel() {
                    return Err(bad(format!(
                        "zeroPoints has {} elements but scales has {}; they must be equal",
                        z.numel(),
                        s.numel()
                    )));
                }
            }
            let mut l = Launch::new("aclnnQuantize");
            l.input(&x);
            l.input(&s);
            let has_z = z.is_some();
            if let Some(z) = &z {
                l.input(z);
            }
            let oi = l.output(&o);
            l.finish(move |v, _| nq::quantize(&v[0], &v[1], has_z.then(|| &v[2]), ax, &v[oi]))
        },
    )
}

// ---------------------------------------------------------------- SwiGluQuant, V2

/// SwiGluQuant (V1: smooth scales required, cumsum group ends, INT8) and V2.
#[allow(clippy::too_many_arguments)]
unsafe fn swiglu_quant(
    [name, api]: [&'static str; 2],
    [x, smooth, offsets, group]: [*const c_void; 4],
    activate_left: bool,
    quant_mode: *const c_char,
    group_list_type: i64,
    dst: i64,
    v2: bool,
    [y_out, scale_out]: [*const c_void; 2],
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let x = a::tensor(x, "x")?;
        let sm = if v2 {
            a::opt_tensor(smooth, "smoothScalesOptional")?
        } else {
            // "this version does not accept a null pointer"
            Some(a::tensor(smooth, "smoothScalesOptional")?)
        };
        let of = a::opt_tensor(offsets, "offsetsOptional")?;
        let gi = a::opt_tensor(group, "groupIndexOptional")?;
        let y = a::tensor(y_out, "yOut")?;
        let so = a::tensor(scale_out, "scaleOut")?;
        let mode = swiglu_mode(quant_mode, (!v2).then_some(nq::SwiGluQuantMode::Dynamic))?;
        if group_list_type != 0 && group_list_type != 1 {
            return Err(bad(format!(
                "groupListType {group_list_type} must be 0 (cumsum) or 1 (count)"
            )));
        }
        if dst == 29 {
            return Err(bad(
                "dstType 29 (INT4) is not supported by npu-emu; use 2 (INT8)".into(),
            ));
        }
        dst_int8(dst)?;
        a::dtype_in(&x, FLOATS3)?;
        let w = x.shape().last().copied().unwrap_or(0);
        if x.ndim() < 2 || w % 2 != 0 || w > 8192 || x.numel() == 0 {
            return Err(bad(format!(
                "x must have more than 1 dimension, elements, and an even last dimension of at \
                 most 8192, but its shape is {:?}",
                x.shape()
            )));
        }
        let n = w / 2;
        let rows = x.numel() / w;
        let g = match &gi {
            Some(t) => {
                a::dtype_in(t, &[DType::I32])?;
                if t.ndim() != 1 || t.numel() == 0 || t.numel() > rows {
                    return Err(bad(format!(
                        "groupIndexOptional has shape {:?}; it must be [G] with 1 <= G <= {rows} \
                         (x's rows)",
                        t.shape()
                    )));
                }
                t.numel()
            }
            None => 1,
        };
        for t in sm.iter().chain(&of) {
            a::dtype_in(t, &[DType::F32])?;
            if t.shape() != [g, n] && t.shape() != [g] {
                return Err(bad(format!(
                    "{} has shape {:?}; expected [{g}, {n}] or [{g}] (groups, half of x's last \
                     dimension)",
                    t.arg,
                    t.shape()
                )));
            }
        }
        if let (Some(o), Some(s)) = (&of, &sm) {
            if mode == nq::SwiGluQuantMode::Static {
                a::same_shape(o, s.shape())?;
            }
        }
        out_int8(&y)?;
        let mut ys = x.shape().to_vec();
        *ys.last_mut().unwrap() = n;
        a::same_shape(&y, &ys)?;
        a::dtype_in(&so, &[DType::F32])?;
        a::same_shape(&so, &x.shape()[..x.ndim() - 1])?;
        let of = of.filter(|_| mode == nq::SwiGluQuantMode::Static);
        let mut l = Launch::new(api);
        l.input(&x);
        let has = [sm.is_some(), of.is_some(), gi.is_some()];
        for t in [&sm, &of, &gi].into_iter().flatten() {
            l.input(t);
        }
        let o = l.output(&y);
        l.output(&so);
        let count = group_list_type == 1;
        l.finish(move |v, _| {
            let mut i = 1;
            let smv = opt_views(v, &mut i, has[0]);
            let ofv = opt_views(v, &mut i, has[1]);
            let gv = opt_views(v, &mut i, has[2]).map(|g| (g, count));
            nq::swiglu_quant(&v[0], smv, ofv, gv, activate_left, mode, &v[o], &v[o + 1])
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSwiGluQuantGetWorkspaceSize(
    x: *const c_void,
    smoothScalesOptional: *const c_void,
    offsetsOptional: *const c_void,
    groupIndexOptional: *const c_void,
    activateLeft: bool,
    quantModeOptional: *const c_char,
    yOut: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    swiglu_quant(
        ["aclnnSwiGluQuantGetWorkspaceSize", "aclnnSwiGluQuant"],
        [x, smoothScalesOptional, offsetsOptional, groupIndexOptional],
        activateLeft,
        quantModeOptional,
        0,
        2,
        false,
        [yOut, scaleOut],
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSwiGluQuantV2GetWorkspaceSize(
    x: *const c_void,
    smoothScalesOptional: *const c_void,
    offsetsOptional: *const c_void,
    groupIndexOptional: *const c_void,
    activateLeft: bool,
    quantModeOptional: *const c_char,
    groupListType: i64,
    dstType: i64,
    yOut: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    swiglu_quant(
        ["aclnnSwiGluQuantV2GetWorkspaceSize", "aclnnSwiGluQuantV2"],
        [x, smoothScalesOptional, offsetsOptional, groupIndexOptional],
        activateLeft,
        quantModeOptional,
        groupListType,
        dstType,
        true,
        [yOut, scaleOut],
        workspaceSize,
        executor,
    )
}

// ---------------------------------------------------------------- DequantSwigluQuant

#[no_mangle]
pub unsafe extern "C" fn aclnnDequantSwigluQuantGetWorkspaceSize(
    x: *const c_void,
    weightScaleOptional: *const c_void,
    activationScaleOptional: *const c_void,
    biasOptional: *const c_void,
    quantScaleOptional: *const c_void,
    quantOffsetOptional: *const c_void,
    groupIndexOptional: *const c_void,
    activateLeft: bool,
    quantModeOptional: *const c_char,
    yOut: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDequantSwigluQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let ws = a::opt_tensor(weightScaleOptional, "weightScaleOptional")?;
            let acts = a::opt_tensor(activationScaleOptional, "activationScaleOptional")?;
            let bi = a::opt_tensor(biasOptional, "biasOptional")?;
            let qs = a::opt_tensor(quantScaleOptional, "quantScaleOptional")?;
            let qo = a::opt_tensor(quantOffsetOptional, "quantOffsetOptional")?;
            let y = a::tensor(yOut, "yOut")?;
            let so = a::tensor(scaleOut, "scaleOut")?;
            if !groupIndexOptional.is_null() {
                return Err(bad(
                    "groupIndexOptional (MoE groups) is documented for Ascend 950 only, not for \
                     the Atlas A2/A3 npu-emu emulates; pass nullptr"
                        .into(),
                ));
            }
            // a null quantModeOptional means "static" (the reference's Ascend 950 note)
            let mode = swiglu_mode(quantModeOptional, Some(nq::SwiGluQuantMode::Static))?;
            a::dtype_in(&x, &[DType::F16, DType::BF16, DType::I32])?;
            rank(&x, 2, 8)?;
            let h = x.shape()[x.ndim() - 1];
            if h % 2 != 0 {
                return Err(bad(format!(
                    "x's last dimension must be even, but its shape is {:?}",
                    x.shape()
                )));
            }
            let lead = &x.shape()[..x.ndim() - 1];
            if let Some(t) = &ws {
                a::dtype_in(t, &[DType::F32])?;
                a::same_shape(t, &[h])?;
            }
            if let Some(t) = &acts {
                a::dtype_in(t, &[DType::F32])?;
                let mut s = lead.to_vec();
                s.push(1);
                a::same_shape(t, &s)?;
            }
            if let Some(t) = &bi {
                a::dtype_in(t, &[DType::F32, DType::F16, DType::BF16, DType::I32])?;
                a::same_shape(t, &[h])?;
            }
            let qn = if mode == nq::SwiGluQuantMode::Static {
                1
            } else {
                h / 2
            };
            for t in qs.iter().chain(&qo) {
                a::dtype_in(t, &[DType::F32])?;
                a::same_shape(t, &[qn])?;
            }
            out_int8(&y)?;
            let mut ys = lead.to_vec();
            ys.push(h / 2);
            a::same_shape(&y, &ys)?;
            a::dtype_in(&so, &[DType::F32])?;
            a::same_shape(&so, lead)?;
            let qo = qo.filter(|_| mode == nq::SwiGluQuantMode::Static);
            let mut l = Launch::new("aclnnDequantSwigluQuant");
            l.input(&x);
            let has = [
                ws.is_some(),
                acts.is_some(),
                bi.is_some(),
                qs.is_some(),
                qo.is_some(),
            ];
            for t in [&ws, &acts, &bi, &qs, &qo].into_iter().flatten() {
                l.input(t);
            }
            let o = l.output(&y);
            l.output(&so);
            l.finish(move |v, _| {
                let mut i = 1;
                let mut next = |k: usize| opt_views(v, &mut i, has[k]);
                let (wv, av, bv, qv, ov) = (next(0), next(1), next(2), next(3), next(4));
                nq::dequant_swiglu_quant(
                    &v[0],
                    wv,
                    av,
                    bv,
                    qv,
                    ov,
                    activateLeft,
                    mode,
                    &v[o],
                    &v[o + 1],
                )
            })
        },
    )
}

crate::phase2!(
    aclnnInplaceAddRmsNorm,
    aclnnGemmaRmsNorm,
    aclnnAddRmsNormCast,
    aclnnDeepNorm,
    aclnnDeepNormGrad,
    aclnnRmsNormQuant,
    aclnnAddRmsNormQuant,
    aclnnAddRmsNormQuantV2,
    aclnnRmsNormDynamicQuant,
    aclnnAddRmsNormDynamicQuant,
    aclnnAddRmsNormDynamicQuantV2,
    aclnnLayerNormQuant,
    aclnnAddLayerNormQuantV2,
    aclnnTransQuantParamV3,
    aclnnQuantize,
    aclnnSwiGluQuant,
    aclnnSwiGluQuantV2,
    aclnnDequantSwigluQuant,
);
