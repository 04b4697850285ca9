//! `aclnn_channel_shuffle.h`, `aclnn_soft_margin_loss.h`, `aclnn_soft_margin_loss_backward.h`
//! and `aclnn_embedding_renorm.h`: what torch_npu calls for `F.channel_shuffle`,
//! `F.soft_margin_loss` (and its gradient) and `F.embedding(..., max_norm=…)`. The engine is
//! `npu_emu::ops::nn_extra`.

use super::args::{self as a, ALL_NUM, FLOATS};
use super::launch::{phase1, Launch};
use super::loss::{reduction, zero_d};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::nn::Reduction;
use npu_emu::ops::nn_extra as engine;
use npu_emu::ops::{iter, View};
use std::ffi::c_void;

#[no_mangle]
pub unsafe extern "C" fn aclnnChannelShuffleGetWorkspaceSize(
    self_: *const c_void,
    groups: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnChannelShuffleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            if x.ndim() < 3 {
                return Err(NnError::invalid(format!(
                    "self must have at least 3 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            let c = x.shape()[1] as i64;
            if groups <= 0 || c % groups != 0 {
                return Err(NnError::invalid(format!(
                    "groups {groups} must be positive and divide the {c} channels of self"
                )));
            }
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnChannelShuffle");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::channel_shuffle(&v[0], groups as usize, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftMarginLossGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftMarginLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_)?;
            for v in [&x, &t, &o] {
                a::dtype_in(v, FLOATS)?;
            }
            let shape = a::broadcast(&x, &t)?;
            if r == Reduction::None {
                a::same_shape(&o, &shape)?;
            } else {
                zero_d(&o)?;
            }
            let mut l = Launch::new("aclnnSoftMarginLoss");
            l.input(&x);
            l.input(&t);
            l.output(&o);
            l.finish(move |v, _| {
                let mut out = v[2].clone();
                if r != Reduction::None {
                    out.shape.clear();
                    out.strides.clear();
                }
                engine::soft_margin_loss(&v[0], &v[1], r, &out)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftMarginLossBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftMarginLossBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_)?;
            for v in [&g, &x, &t, &o] {
                a::dtype_in(v, FLOATS)?;
            }
            let shape = a::broadcast_all(&[&g, &x, &t])?;
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnSoftMarginLossBackward");
            l.input(&g);
            l.input(&x);
            l.input(&t);
            l.output(&o);
            l.finish(move |v, _| engine::soft_margin_loss_backward(&v[0], &v[1], &v[2], r, &v[3]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnEmbeddingRenormGetWorkspaceSize(
    selfRef: *mut c_void,
    indices: *const c_void,
    maxNorm: f64,
    normType: f64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEmbeddingRenormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let w = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(indices, "indices")?;
            a::dtype_in(&w, &[DType::F32, DType::F16, DType::BF16, DType::F64])?;
            a::dtype_in(&i, a::INDEX)?;
            a::max_dims(&i, 8)?;
            if w.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "selfRef must be 2-D, but its shape is {:?}",
                    w.shape()
                )));
            }
            if maxNorm.is_nan() || maxNorm < 0.0 || normType.is_nan() || normType < 0.0 {
                return Err(NnError::invalid(format!(
                    "maxNorm {maxNorm} and normType {normType} must be non-negative"
                )));
            }
            let mut l = Launch::new("aclnnEmbeddingRenorm");
            l.input(&i);
            l.output(&w);
            l.finish(move |v, _| {
                let mut idx = vec![0i64; v[0].numel()];
                iter::copy(&v[0], &View::of_slice(&mut idx, DType::I64, &v[0].shape))?;
                engine::embedding_renorm(&v[1], &idx, maxNorm, normType)
            })
        },
    )
}

crate::phase2!(
    aclnnChannelShuffle,
    aclnnSoftMarginLoss,
    aclnnSoftMarginLossBackward,
    aclnnEmbeddingRenorm
);

/// Shared checks of RReluWithNoise and its in-place form: FLOAT, FLOAT16, BFLOAT16; `noise`
/// of self's type with at least as many elements.
#[allow(clippy::too_many_arguments)]
fn rrelu(
    api: &'static str,
    x: a::T,
    noise: a::T,
    lower: *const c_void,
    upper: *const c_void,
    training: bool,
    seed: i64,
    offset: i64,
    o: a::T,
) -> NnResult<super::launch::Built> {
    let lo = a::scalar(lower, "lower")?.to_f64();
    let hi = a::scalar(upper, "upper")?.to_f64();
    a::dtype_in(&x, &[DType::F32, DType::F16, DType::BF16])?;
    a::same_dtype(&noise, &x)?;
    a::same_dtype(&o, &x)?;
    a::same_shape(&o, x.shape())?;
    if noise.numel() < x.numel() {
        return Err(NnError::invalid(format!(
            "noise has {} elements, fewer than self's {}",
            noise.numel(),
            x.numel()
        )));
    }
    // Views: [self, noise, out] (out separate) or [self, noise] (in place: self is written).
    let mut l = Launch::new(api);
    let same = o.same_as(&x);
    if same {
        l.output(&x);
    } else {
        l.input(&x);
    }
    l.output(&noise);
    if !same {
        l.output(&o);
    }
    l.finish(move |v, _| {
        let out = if same { &v[0] } else { &v[2] };
        engine::rrelu_with_noise(
            &v[0],
            &v[1],
            lo,
            hi,
            training,
            seed as u64,
            offset as u64,
            out,
        )
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnRReluWithNoiseGetWorkspaceSize(
    self_: *const c_void,
    noise: *const c_void,
    lower: *const c_void,
    upper: *const c_void,
    training: bool,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRReluWithNoiseGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let n = a::tensor(noise, "noise")?;
            let o = a::tensor(out, "out")?;
            rrelu(
                "aclnnRReluWithNoise",
                x,
                n,
                lower,
                upper,
                training,
                seed,
                offset,
                o,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRReluWithNoiseGetWorkspaceSize(
    self_: *mut c_void,
    noise: *const c_void,
    lower: *const c_void,
    upper: *const c_void,
    training: bool,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceRReluWithNoiseGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let n = a::tensor(noise, "noise")?;
            rrelu(
                "aclnnInplaceRReluWithNoise",
                x.clone(),
                n,
                lower,
                upper,
                training,
                seed,
                offset,
                x,
            )
        },
    )
}

crate::phase2!(aclnnRReluWithNoise, aclnnInplaceRReluWithNoise);
