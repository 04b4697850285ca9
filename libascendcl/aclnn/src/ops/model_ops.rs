//! Operators that model code reaches through torch_npu and CANN's documented examples:
//! `aclnn_transform_bias_rescale_qkv.h` (nn.MultiheadAttention's fast path),
//! `aclnn_upsample_bilinear_2d_backward_v2.h`,
//! `aclnn_binary_cross_entropy_with_logits_target_backward.h`, `aclnn_modulate.h`,
//! `aclnn_modulate_backward.h`, `aclnn_ada_layer_norm.h` (and `_v2`, `_backward`),
//! `aclnn_clipped_swiglu.h` (and `_grad`), `aclnn_pdist_forward.h`,
//! `aclnn_multi_scale_deformable_attn_function.h`,
//! `aclnn_multi_scale_deformable_attention_grad.h` and `aclnn_sinkhorn.h`. The checks follow
//! CANN's operator reference; the computation is `npu_emu::ops::model_ops` (and the existing
//! upsampling, loss and pdist paths for the V2/target/forward forms).

use super::args::{self as a, FLOATS3, INDEX, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::loss::{Kind, Wrt};
use npu_emu::ops::model_ops::{self as mo, AdaLnGrads, ClippedSwiglu};
use std::ffi::c_void;

/// `ACLNN_ERR_INNER_TILING_ERROR`: aclnnClippedSwigluGrad's code for shapes that do not
/// match and attributes out of range.
const ACLNN_ERR_INNER_TILING_ERROR: i32 = 561002;

/// Each tensor is one of FLOAT, FLOAT16, BFLOAT16 and has `like`'s dtype.
fn floats_like(ts: &[&T], like: &T) -> NnResult<()> {
    for t in ts {
        a::dtype_in(t, FLOATS3)?;
        a::same_dtype(t, like)?;
    }
    Ok(())
}

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

// ---------------------------------------------------------------- TransformBiasRescaleQkv

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnTransformBiasRescaleQkvGetWorkspaceSize(
    qkv: *const c_void,
    qkvBias: *const c_void,
    numHeads: i64,
    qOut: *const c_void,
    kOut: *const c_void,
    vOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTransformBiasRescaleQkvGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(qkv, "qkv")?;
            let b = a::tensor(qkvBias, "qkvBias")?;
            let q = a::tensor(qOut, "qOut")?;
            let k = a::tensor(kOut, "kOut")?;
            let v = a::tensor(vOut, "vOut")?;
            floats_like(&[&x, &b, &q, &k, &v], &x)?;
            if x.ndim() != 3 || b.ndim() != 1 {
                return Err(bad(format!(
                    "qkv must be 3-D [B, T, 3·D] and qkvBias 1-D [3·D], got {:?} and {:?}",
                    x.shape(),
                    b.shape()
                )));
            }
            let three_d = x.shape()[2];
            if numHeads <= 0 || b.shape()[0] != three_d || b.numel() == 0 {
                return Err(bad(format!(
                    "numHeads {numHeads} must be positive and qkvBias {:?} a non-empty [{three_d}]",
                    b.shape()
                )));
            }
            let heads = numHeads as usize;
            if !three_d.is_multiple_of(3 * heads) {
                return Err(bad(format!(
                    "qkv's last dimension {three_d} is not 3 × numHeads ({heads}) × dim_per_head"
                )));
            }
            let want = [x.shape()[0], heads, x.shape()[1], three_d / 3 / heads];
            for t in [&q, &k, &v] {
                a::same_shape(t, &want)?;
            }
            let mut l = Launch::new("aclnnTransformBiasRescaleQkv");
            l.input(&x);
            l.input(&b);
            l.output(&q);
            l.output(&k);
            l.output(&v);
            l.finish(move |v, _| {
                mo::transform_bias_rescale_qkv(&v[0], &v[1], heads, &v[2], &v[3], &v[4])
            })
        },
    )
}

// ---------------------------------------------------------------- UpsampleBilinear2dBackwardV2

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleBilinear2dBackwardV2GetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBilinear2dBackwardV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            for (h, arg) in [(gradOut, "gradOut"), (out as *const c_void, "out")] {
                if a::tensor(h, arg)?.numel() == 0 {
                    return Err(bad(format!("{arg} must not be empty")));
                }
            }
            super::upsample::linear_backward(
                "aclnnUpsampleBilinear2dBackwardV2",
                gradOut,
                outputSize,
                inputSize,
                alignCorners,
                &[scalesH, scalesW],
                out,
            )
        },
    )
}

// ---------------------------------------------------------------- BCE with logits, target gradient

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    weightOptional: *const c_void,
    posWeightOptional: *const c_void,
    reduction: i64,
    gradTarget: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let p = a::opt_tensor(posWeightOptional, "posWeightOptional")?;
            let o = a::tensor(gradTarget, "gradTarget")?;
            for v in [&g, &x, &t].into_iter().chain(w.as_ref()).chain(p.as_ref()) {
                a::dtype_in(v, FLOATS3)?;
            }
            a::same_shape(&o, x.shape())?;
            super::loss::pointwise_loss_grad(
                "aclnnBinaryCrossEntropyWithLogitsTargetBackward",
                Kind::BceWithLogits,
                Wrt::Target,
                g,
                x,
                t,
                w,
                p,
                reduction,
                o,
            )
        },
    )
}

// ---------------------------------------------------------------- Modulate

/// A scale or shift of `x` `[B, L, D]`: `[B, D]` or `[B, 1, D]`.
fn modulation_shape(t: &T, x: &T) -> NnResult<()> {
    let (b, d) = (x.shape()[0], x.shape()[2]);
    if t.shape() == [b, d] || t.shape() == [b, 1, d] {
        Ok(())
    } else {
        Err(bad(format!(
            "{} has shape {:?}; for {} {:?} it must be [{b}, {d}] or [{b}, 1, {d}]",
            t.arg,
            t.shape(),
            x.arg,
            x.shape()
        )))
    }
}

/// x must be 3-D `[B, L, D]`.
fn three_d(x: &T) -> NnResult<()> {
    if x.ndim() == 3 {
        Ok(())
    } else {
        Err(bad(format!(
            "{} must be 3-D [batch, seq_len, hidden], but its shape is {:?}",
            x.arg,
            x.shape()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnModulateGetWorkspaceSize(
    self_: *const c_void,
    scaleOptional: *const c_void,
    shiftOptional: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnModulateGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let sc = a::opt_tensor(scaleOptional, "scaleOptional")?;
            let sh = a::opt_tensor(shiftOptional, "shiftOptional")?;
            let o = a::tensor(out, "out")?;
            let opt: Vec<&T> = sc.iter().chain(sh.iter()).collect();
            floats_like(&[&[&x, &o][..], &opt].concat(), &x)?;
            three_d(&x)?;
            a::same_shape(&o, x.shape())?;
            for t in &opt {
                modulation_shape(t, &x)?;
                if x.numel() == 0 && t.numel() != 0 {
                    return Err(bad(format!("self is empty but {} is not", t.arg)));
                }
            }
            let mut l = Launch::new("aclnnModulate");
            l.input(&x);
            let si = sc.as_ref().map(|t| l.input(t));
            let hi = sh.as_ref().map(|t| l.input(t));
            let oi = l.output(&o);
            l.finish(move |v, _| mo::modulate(&v[0], si.map(|i| &v[i]), hi.map(|i| &v[i]), &v[oi]))
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnModulateBackwardGetWorkspaceSize(
    grad_output: *const c_void,
    input: *const c_void,
    scale: *const c_void,
    shift: *const c_void,
    grad_input: *const c_void,
    grad_scale: *const c_void,
    grad_shift: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnModulateBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(grad_output, "grad_output")?;
            let x = a::tensor(input, "input")?;
            let gi = a::tensor(grad_input, "grad_input")?;
            let sc = a::opt_tensor(scale, "scale")?;
            let sh = a::opt_tensor(shift, "shift")?;
            let gsc = a::opt_tensor(grad_scale, "grad_scale")?;
            let gsh = a::opt_tensor(grad_shift, "grad_shift")?;
            let opt: Vec<&T> = [&sc, &sh, &gsc, &gsh]
                .into_iter()
                .filter_map(|t| t.as_ref())
                .collect();
            floats_like(&[&[&g, &x, &gi][..], &opt].concat(), &g)?;
            three_d(&g)?;
            three_d(&x)?;
            a::same_shape(&x, g.shape())?;
            a::same_shape(&gi, g.shape())?;
            let (b, d) = (g.shape()[0], g.shape()[2]);
            for (t, grad) in [(&sc, &gsc), (&sh, &gsh)] {
                if let Some(t) = t {
                    a::same_shape(t, &[b, d])?;
                    if let Some(gt) = grad {
                        a::same_shape(gt, &[b, d])?;
                    }
                }
            }
            // a gradient is written when its parameter and its output are both given
            let gsc = gsc.filter(|_| sc.is_some());
            let gsh = gsh.filter(|_| sh.is_some());
            let mut l = Launch::new("aclnnModulateBackward");
            l.input(&g);
            l.input(&x);
            let si = sc.as_ref().map(|t| l.input(t));
            let gii = l.output(&gi);
            let gsci = gsc.as_ref().map(|t| l.output(t));
            let gshi = gsh.as_ref().map(|t| l.output(t));
            l.finish(move |v, _| {
                mo::modulate_backward(
                    &v[0],
                    &v[1],
                    si.map(|i| &v[i]),
                    &v[gii],
                    gsci.map(|i| &v[i]),
                    gshi.map(|i| &v[i]),
                )
            })
        },
    )
}

// ---------------------------------------------------------------- AdaLayerNorm

/// x `[B…, S, H]` (2-8 dimensions, non-empty); scale/shift `[B…, H]` or `[B…, 1, H]`;
/// weight/bias `[H]`.
pub(super) fn ada_shapes(x: &T, mods: &[&T], affine: &[&T]) -> NnResult<()> {
    let nd = x.ndim();
    if !(2..=8).contains(&nd) || x.numel() == 0 {
        return Err(bad(format!(
            "{} must be non-empty with 2 to 8 dimensions [B…, S, H], but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    let (lead, h) = (&x.shape()[..nd - 2], x.shape()[nd - 1]);
    let a1 = [lead, &[h][..]].concat();
    let a2 = [lead, &[1, h][..]].concat();
    for t in mods {
        if t.shape() != a1 && t.shape() != a2 {
            return Err(bad(format!(
                "{} has shape {:?}; for {} {:?} it must be {a1:?} or {a2:?}",
                t.arg,
                t.shape(),
                x.arg,
                x.shape()
            )));
        }
    }
    for t in affine {
        a::same_shape(t, &[h])?;
    }
    Ok(())
}

/// `[B…, S, 1]`: the shape of mean and rstd.
fn row_stat_shape(x: &T) -> Vec<usize> {
    let mut s = x.shape().to_vec();
    *s.last_mut().unwrap() = 1;
    s
}

/// The shared path of aclnnAdaLayerNorm and its V2 (which adds the mean and rstd outputs and
/// lets weight and bias be FLOAT with a half-precision x).
#[allow(clippy::too_many_arguments)]
unsafe fn ada_layer_norm(
    api: &'static str,
    v2: bool,
    x: *const c_void,
    scale: *const c_void,
    shift: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    eps: f64,
    out: *mut c_void,
    mean: *mut c_void,
    rstd: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(x, "x")?;
    let sc = a::tensor(scale, "scale")?;
    let sh = a::tensor(shift, "shift")?;
    let w = a::opt_tensor(weight, "weightOptional")?;
    let b = a::opt_tensor(bias, "biasOptional")?;
    let o = a::tensor(out, "out")?;
    let m = a::opt_tensor(mean, "meanOutOptional")?;
    let r = a::opt_tensor(rstd, "rstdOutOptional")?;
    let stats: Vec<&T> = m.iter().chain(r.iter()).collect();
    floats_like(&[&[&x, &sc, &sh, &o][..], &stats].concat(), &x)?;
    let affine: Vec<&T> = w.iter().chain(b.iter()).collect();
    for t in &affine {
        a::dtype_in(t, FLOATS3)?;
        if !(v2 && t.dtype() == DType::F32) {
            a::same_dtype(t, &x)?;
        }
    }
    if let (Some(w), Some(b)) = (&w, &b) {
        a::same_dtype(b, w)?;
    }
    ada_shapes(&x, &[&sc, &sh], &affine)?;
    a::same_shape(&o, x.shape())?;
    for t in &stats {
        a::same_shape(t, &row_stat_shape(&x))?;
    }
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&sc);
    l.input(&sh);
    let wi = w.as_ref().map(|t| l.input(t));
    let bi = b.as_ref().map(|t| l.input(t));
    let oi = l.output(&o);
    let mi = m.as_ref().map(|t| l.output(t));
    let ri = r.as_ref().map(|t| l.output(t));
    l.finish(move |v, _| {
        let at = |i: Option<usize>| i.map(|i| &v[i]);
        mo::ada_layer_norm(
            &v[0],
            &v[1],
            &v[2],
            at(wi),
            at(bi),
            eps,
            &v[oi],
            at(mi),
            at(ri),
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnAdaLayerNormGetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    shift: *const c_void,
    weightOptional: *const c_void,
    biasOptional: *const c_void,
    epsilon: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaLayerNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            ada_layer_norm(
                "aclnnAdaLayerNorm",
                false,
                x,
                scale,
                shift,
                weightOptional,
                biasOptional,
                epsilon,
                out,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnAdaLayerNormV2GetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    shift: *const c_void,
    weightOptional: *const c_void,
    biasOptional: *const c_void,
    epsilon: f64,
    out: *mut c_void,
    meanOutOptional: *mut c_void,
    rstdOutOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaLayerNormV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            ada_layer_norm(
                "aclnnAdaLayerNormV2",
                true,
                x,
                scale,
                shift,
                weightOptional,
                biasOptional,
                epsilon,
                out,
                meanOutOptional,
                rstdOutOptional,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnAdaLayerNormBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    input: *const c_void,
    normalizedShape: *const c_void,
    rstd: *const c_void,
    mean: *const c_void,
    scale: *const c_void,
    shift: *const c_void,
    weightOptional: *const c_void,
    biasOptional: *const c_void,
    gradInputOut: *mut c_void,
    gradScaleOut: *mut c_void,
    gradShiftOut: *mut c_void,
    gradWeightOut: *mut c_void,
    gradBiasOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdaLayerNormBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(input, "input")?;
            let ns = a::int_array(normalizedShape, "normalizedShape")?;
            let rs = a::tensor(rstd, "rstd")?;
            let mu = a::tensor(mean, "mean")?;
            let sc = a::tensor(scale, "scale")?;
            let sh = a::tensor(shift, "shift")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let b = a::opt_tensor(biasOptional, "biasOptional")?;
            let gx = a::opt_tensor(gradInputOut, "gradInputOut")?;
            let gsc = a::opt_tensor(gradScaleOut, "gradScaleOut")?;
            let gsh = a::opt_tensor(gradShiftOut, "gradShiftOut")?;
            let gw = a::opt_tensor(gradWeightOut, "gradWeightOut")?;
            let gb = a::opt_tensor(gradBiasOut, "gradBiasOut")?;
            let like_x: Vec<&T> = [&gx, &gsc, &gsh].into_iter().flatten().collect();
            floats_like(&[&[&g, &x, &rs, &mu, &sc, &sh][..], &like_x].concat(), &g)?;
            let affine: Vec<&T> = w.iter().chain(b.iter()).collect();
            for t in &affine {
                a::dtype_in(t, FLOATS3)?;
                if t.dtype() != DType::F32 {
                    a::same_dtype(t, &x)?;
                }
            }
            if let (Some(w), Some(b)) = (&w, &b) {
                a::same_dtype(b, w)?;
            }
            let wdt = w.as_ref().map_or(x.dtype(), |w| w.dtype());
            for t in gw.iter().chain(gb.iter()) {
                if t.dtype() != wdt {
                    return Err(bad(format!(
                        "{} data type {} must be weightOptional's {wdt}",
                        t.arg,
                        t.dtype()
                    )));
                }
            }
            ada_shapes(&x, &[&sc, &sh], &affine)?;
            let h = x.shape()[x.ndim() - 1];
            if ns.len() != 1 || ns[0] != h as i64 {
                return Err(bad(format!(
                    "normalizedShape must be [{h}] (input's last dimension), got {ns:?}"
                )));
            }
            a::same_shape(&g, x.shape())?;
            for t in [&rs, &mu] {
                a::same_shape(t, &row_stat_shape(&x))?;
            }
            if let Some(t) = &gx {
                a::same_shape(t, x.shape())?;
            }
            if let Some(t) = &gsc {
                a::same_shape(t, sc.shape())?;
            }
            if let Some(t) = &gsh {
                a::same_shape(t, sh.shape())?;
            }
            for t in gw.iter().chain(gb.iter()) {
                a::same_shape(t, &[h])?;
            }
            let mut l = Launch::new("aclnnAdaLayerNormBackward");
            l.input(&g);
            l.input(&x);
            l.input(&rs);
            l.input(&mu);
            l.input(&sc);
            let wi = w.as_ref().map(|t| l.input(t));
            let bi = b.as_ref().map(|t| l.input(t));
            let outs: Vec<Option<usize>> = [&gx, &gsc, &gsh, &gw, &gb]
                .into_iter()
                .map(|t| t.as_ref().map(|t| l.output(t)))
                .collect();
            l.finish(move |v, _| {
                let at = |i: Option<usize>| i.map(|i| &v[i]);
                mo::ada_layer_norm_backward(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    &v[4],
                    at(wi),
                    at(bi),
                    AdaLnGrads {
                        input: at(outs[0]),
                        scale: at(outs[1]),
                        shift: at(outs[2]),
                        weight: at(outs[3]),
                        bias: at(outs[4]),
                    },
                )
            })
        },
    )
}

// ---------------------------------------------------------------- ClippedSwiglu

/// The checked attributes of the clipped SwiGLU: x non-scalar, at most 8-D and even along
/// `dim`; `limit` positive; groupIndex a 1-D INT64 tensor. `err` makes the error (CANN gives
/// 161002 for the forward and 561002 for the gradient).
#[allow(clippy::too_many_arguments)]
fn clipped_attrs(
    x: &T,
    group: Option<&T>,
    dim: i64,
    alpha: f64,
    limit: f64,
    bias: f64,
    interleaved: bool,
    err: fn(String) -> NnError,
) -> NnResult<ClippedSwiglu> {
    a::max_dims(x, 8)?;
    let n = x.ndim() as i64;
    if n == 0 || dim < -n || dim >= n {
        return Err(err(format!(
            "dim {dim} is out of range for x of shape {:?}",
            x.shape()
        )));
    }
    let d = if dim < 0 { dim + n } else { dim } as usize;
    if !x.shape()[d].is_multiple_of(2) {
        return Err(err(format!(
            "x {:?} must be even along dim {dim}",
            x.shape()
        )));
    }
    if limit.is_nan() || limit <= 0.0 {
        return Err(err(format!("limit must be positive, got {limit}")));
    }
    if let Some(g) = group {
        a::dtype_in(g, &[DType::I64])?;
        if g.ndim() != 1 {
            return Err(err(format!(
                "groupIndexOptional must be 1-D, but its shape is {:?}",
                g.shape()
            )));
        }
    }
    Ok(ClippedSwiglu {
        dim: d,
        alpha,
        limit,
        bias,
        interleaved,
    })
}

/// x's shape halved along `dim`.
fn halved(x: &T, dim: usize) -> Vec<usize> {
    let mut s = x.shape().to_vec();
    s[dim] /= 2;
    s
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnClippedSwigluGetWorkspaceSize(
    x: *const c_void,
    groupIndexOptional: *const c_void,
    dim: i64,
    alpha: f64,
    limit: f64,
    bias: f64,
    interleaved: bool,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnClippedSwigluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let g = a::opt_tensor(groupIndexOptional, "groupIndexOptional")?;
            let o = a::tensor(out, "out")?;
            floats_like(&[&x, &o], &x)?;
            let p = clipped_attrs(
                &x,
                g.as_ref(),
                dim,
                alpha,
                limit,
                bias,
                interleaved,
                NnError::invalid,
            )?;
            a::same_shape(&o, &halved(&x, p.dim))?;
            let mut l = Launch::new("aclnnClippedSwiglu");
            l.input(&x);
            let gi = g.as_ref().map(|t| l.input(t));
            let oi = l.output(&o);
            l.finish(move |v, _| mo::clipped_swiglu(&v[0], gi.map(|i| &v[i]), p, &v[oi]))
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnClippedSwigluGradGetWorkspaceSize(
    gradY: *const c_void,
    x: *const c_void,
    groupIndexOptional: *const c_void,
    dim: i64,
    alpha: f64,
    limit: f64,
    bias: f64,
    interleaved: bool,
    gradXOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnClippedSwigluGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let gy = a::tensor(gradY, "gradY")?;
            let x = a::tensor(x, "x")?;
            let g = a::opt_tensor(groupIndexOptional, "groupIndexOptional")?;
            let o = a::tensor(gradXOut, "gradXOut")?;
            floats_like(&[&gy, &x, &o], &x)?;
            let tiling = |m: String| NnError::new(ACLNN_ERR_INNER_TILING_ERROR, m);
            let p = clipped_attrs(&x, g.as_ref(), dim, alpha, limit, bias, interleaved, |m| {
                NnError::new(ACLNN_ERR_INNER_TILING_ERROR, m)
            })?;
            let want = halved(&x, p.dim);
            if gy.shape() != want || o.shape() != x.shape() {
                return Err(tiling(format!(
                    "gradY {:?} must be x {:?} halved along dim {dim} ({want:?}) and gradXOut \
                     {:?} must be x's shape",
                    gy.shape(),
                    x.shape(),
                    o.shape()
                )));
            }
            let mut l = Launch::new("aclnnClippedSwigluGrad");
            l.input(&gy);
            l.input(&x);
            let gi = g.as_ref().map(|t| l.input(t));
            let oi = l.output(&o);
            l.finish(move |v, _| {
                mo::clipped_swiglu_grad(&v[0], &v[1], gi.map(|i| &v[i]), p, &v[oi])
            })
        },
    )
}

// ---------------------------------------------------------------- PdistForward

#[no_mangle]
pub unsafe extern "C" fn aclnnPdistForwardGetWorkspaceSize(
    self_: *const c_void,
    pScalar: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPdistForwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            a::tensor(self_, "self")?;
            let p = a::scalar(pScalar, "pScalar")?.to_f64();
            a::tensor(out, "out")?;
            super::linalg::pdist("aclnnPdistForward", self_, p, out)
        },
    )
}

// ---------------------------------------------------------------- multi-scale deformable attention

/// The checked tensors of a multi-scale deformable attention call (the reference's limits:
/// channels a multiple of 8 up to 256, at least 32 queries, at most 16 heads, levels and
/// points).
struct Msda {
    value: T,
    shapes: T,
    starts: T,
    loc: T,
    attn: T,
}

fn msda_check(
    value: *const c_void,
    spatial: *const c_void,
    starts: *const c_void,
    loc: *const c_void,
    attn: *const c_void,
) -> NnResult<Msda> {
    let m = Msda {
        value: a::tensor(value, "value")?,
        shapes: a::tensor(spatial, "spatialShape")?,
        starts: a::tensor(starts, "levelStartIndex")?,
        loc: a::tensor(loc, "location")?,
        attn: a::tensor(attn, "attnWeight")?,
    };
    floats_like(&[&m.value, &m.loc, &m.attn], &m.value)?;
    a::dtype_in(&m.shapes, INDEX)?;
    a::dtype_in(&m.starts, INDEX)?;
    for (t, n) in [
        (&m.value, 4),
        (&m.shapes, 2),
        (&m.starts, 1),
        (&m.loc, 6),
        (&m.attn, 5),
    ] {
        if t.ndim() != n {
            return Err(bad(format!(
                "{} must be {n}-D, but its shape is {:?}",
                t.arg,
                t.shape()
            )));
        }
    }
    let (vs, ls) = (m.value.shape(), m.loc.shape());
    if m.shapes.shape()[1] != 2 || ls[5] != 2 {
        return Err(bad(format!(
            "the last axis of spatialShape {:?} and of location {:?} must be 2",
            m.shapes.shape(),
            ls
        )));
    }
    let (bs, heads, ch) = (vs[0], vs[2], vs[3]);
    let (nq, nl, np) = (ls[1], ls[3], ls[4]);
    if ls[0] != bs || ls[2] != heads || m.shapes.shape()[0] != nl || m.starts.shape()[0] != nl {
        return Err(bad(format!(
            "location {ls:?} must be [{bs}, queries, {heads}, levels, points, 2] with levels \
             matching spatialShape {:?} and levelStartIndex {:?}",
            m.shapes.shape(),
            m.starts.shape()
        )));
    }
    a::same_shape(&m.attn, &ls[..5])?;
    if !ch.is_multiple_of(8) || ch > 256 || nq < 32 || heads > 16 || nl > 16 || np > 16 {
        return Err(bad(format!(
            "channels {ch} must be a multiple of 8 up to 256, queries {nq} at least 32, and \
             heads {heads}, levels {nl}, points {np} at most 16"
        )));
    }
    Ok(m)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMultiScaleDeformableAttnFunctionGetWorkspaceSize(
    value: *const c_void,
    spatialShape: *const c_void,
    levelStartIndex: *const c_void,
    location: *const c_void,
    attnWeight: *const c_void,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMultiScaleDeformableAttnFunctionGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let m = msda_check(value, spatialShape, levelStartIndex, location, attnWeight)?;
            let o = a::tensor(output, "output")?;
            floats_like(&[&o], &m.value)?;
            let (vs, ls) = (m.value.shape(), m.loc.shape());
            a::same_shape(&o, &[vs[0], ls[1], vs[2] * vs[3]])?;
            let mut l = Launch::new("aclnnMultiScaleDeformableAttnFunction");
            for t in [&m.value, &m.shapes, &m.starts, &m.loc, &m.attn] {
                l.input(t);
            }
            l.output(&o);
            l.finish(move |v, _| mo::msda(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]))
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMultiScaleDeformableAttentionGradGetWorkspaceSize(
    value: *const c_void,
    spatialShape: *const c_void,
    levelStartIndex: *const c_void,
    location: *const c_void,
    attnWeight: *const c_void,
    gradOutput: *const c_void,
    gradValue: *mut c_void,
    gradLocation: *mut c_void,
    gradAttnWeight: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMultiScaleDeformableAttentionGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let m = msda_check(value, spatialShape, levelStartIndex, location, attnWeight)?;
            let go = a::tensor(gradOutput, "gradOutput")?;
            let gv = a::tensor(gradValue, "gradValue")?;
            let gl = a::tensor(gradLocation, "gradLocation")?;
            let ga = a::tensor(gradAttnWeight, "gradAttnWeight")?;
            floats_like(&[&go, &gv, &gl, &ga], &m.value)?;
            let (vs, ls) = (m.value.shape(), m.loc.shape());
            a::same_shape(&go, &[vs[0], ls[1], vs[2] * vs[3]])?;
            a::same_shape(&gv, vs)?;
            a::same_shape(&gl, ls)?;
            a::same_shape(&ga, m.attn.shape())?;
            let mut l = Launch::new("aclnnMultiScaleDeformableAttentionGrad");
            for t in [&m.value, &m.shapes, &m.starts, &m.loc, &m.attn, &go] {
                l.input(t);
            }
            for t in [&gv, &gl, &ga] {
                l.output(t);
            }
            l.finish(move |v, _| {
                mo::msda_grad(
                    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
                )
            })
        },
    )
}

// ---------------------------------------------------------------- Sinkhorn

/// `tol` when the caller passes none (the reference's default).
const SINKHORN_TOL: f64 = 0.0001;

#[no_mangle]
pub unsafe extern "C" fn aclnnSinkhornGetWorkspaceSize(
    cost: *const c_void,
    tol: *const c_void,
    p: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSinkhornGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let c = a::tensor(cost, "cost")?;
            let o = a::tensor(p, "p")?;
            let tol = a::opt_scalar(tol, "tol")?.map_or(SINKHORN_TOL, |s| s.to_f64());
            floats_like(&[&c, &o], &c)?;
            if c.ndim() != 2 {
                return Err(bad(format!(
                    "cost must be a 2-D matrix, but its shape is {:?}",
                    c.shape()
                )));
            }
            a::same_shape(&o, c.shape())?;
            let mut l = Launch::new("aclnnSinkhorn");
            l.input(&c);
            l.output(&o);
            l.finish(move |v, _| mo::sinkhorn(&v[0], tol, &v[1]))
        },
    )
}

crate::phase2!(
    aclnnTransformBiasRescaleQkv,
    aclnnUpsampleBilinear2dBackwardV2,
    aclnnBinaryCrossEntropyWithLogitsTargetBackward,
    aclnnModulate,
    aclnnModulateBackward,
    aclnnAdaLayerNorm,
    aclnnAdaLayerNormV2,
    aclnnAdaLayerNormBackward,
    aclnnClippedSwiglu,
    aclnnClippedSwigluGrad,
    aclnnPdistForward,
    aclnnMultiScaleDeformableAttnFunction,
    aclnnMultiScaleDeformableAttentionGrad,
    aclnnSinkhorn,
);
