//! Random numbers: `aclnn_normal.h` (InplaceNormal, InplaceNormalTensor),
//! `aclnn_uniform.h`, `aclnn_random.h` (InplaceRandom: integers uniform in `[from, to)`,
//! `from` and `to - 1` inside `selfRef`'s type), `aclnn_randperm.h` (a permutation of
//! `0..n`), `aclnn_multinomial.h` (indices drawn from each row of weights; an invalid row
//! fails the task), `aclnn_bernoulli.h`, `aclnn_dropout.h`, `aclnn_dropout_backward.h`,
//! `aclnn_dropout_gen_mask.h`, `aclnn_dropout_gen_mask_v2.h` and
//! `aclnn_dropout_do_mask.h`: the pair torch_npu's dropout runs (the mask is one bit per
//! element, bit `i % 8` of byte `i / 8`, 1 = kept, in `align(numel, 128) / 8` UINT8 bytes;
//! DoMask multiplies kept elements by `1 / (1 - prob)` and zeroes the others).
//!
//! Values come from the engine's Philox generator: the same (seed, offset) and shape give
//! the same numbers on every run, device and thread count. The `…Tensor` forms read the
//! seed and offset from device tensors when the task runs (offset = the tensor's value plus
//! the `offset` argument).

use super::args::{self as a, FLOATS};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::{elem, iter, random, View};
use std::ffi::c_void;

/// The value of a checked one-element seed or offset tensor.
pub(super) fn read_i64(v: &View) -> i64 {
    // SAFETY: a checked one-element view.
    unsafe { elem::read_i64(v.dtype, v.ptr) }
}

/// A seed or offset tensor: one INT64 (or INT32 / UINT64) element.
pub(super) fn one_elem(t: &a::T) -> Result<(), NnError> {
    a::dtype_in(t, &[DType::I64, DType::I32, DType::U64])?;
    if t.numel() != 1 {
        return Err(NnError::invalid(format!(
            "{} must hold one element, but its shape is {:?}",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceNormalGetWorkspaceSize(
    selfRef: *const c_void,
    mean: f32,
    std: f32,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceNormalGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            a::dtype_in(&x, FLOATS)?;
            if std.is_nan() || std < 0.0 {
                return Err(NnError::invalid(format!("std {std} must be >= 0")));
            }
            let mut l = Launch::new("aclnnInplaceNormal");
            l.output(&x);
            l.finish(move |v, _| {
                random::normal(&v[0], mean as f64, std as f64, seed as u64, offset as u64);
                Ok(())
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceNormalTensorGetWorkspaceSize(
    selfRef: *const c_void,
    mean: f32,
    std: f32,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceNormalTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let s = a::tensor(seedTensor, "seedTensor")?;
            let o = a::tensor(offsetTensor, "offsetTensor")?;
            a::dtype_in(&x, FLOATS)?;
            one_elem(&s)?;
            one_elem(&o)?;
            if std.is_nan() || std < 0.0 {
                return Err(NnError::invalid(format!("std {std} must be >= 0")));
            }
            let mut l = Launch::new("aclnnInplaceNormalTensor");
            l.input(&s);
            l.input(&o);
            l.output(&x);
            l.finish(move |v, _| {
                let (sd, off) = (read_i64(&v[0]), read_i64(&v[1]).wrapping_add(offset));
                random::normal(&v[2], mean as f64, std as f64, sd as u64, off as u64);
                Ok(())
            })
        },
    )
}

fn check_range(from: f64, to: f64) -> Result<(), NnError> {
    if from > to || !from.is_finite() || !to.is_finite() {
        return Err(NnError::invalid(format!(
            "from {from} and to {to} must be finite with from <= to"
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceUniformGetWorkspaceSize(
    selfRef: *const c_void,
    from: f64,
    to: f64,
    seed: u64,
    offset: u64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceUniformGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            a::dtype_in(&x, FLOATS)?;
            check_range(from, to)?;
            let mut l = Launch::new("aclnnInplaceUniform");
            l.output(&x);
            l.finish(move |v, _| {
                random::uniform(&v[0], from, to, seed, offset);
                Ok(())
            })
        },
    )
}

/// The data types of InplaceRandom's `selfRef`.
pub(super) const RANDOM_TYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::F64,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::I16,
    DType::I8,
    DType::U8,
    DType::Bool,
];

/// The range of values `d` holds, as InplaceRandom checks `from` and `to - 1` against it.
pub(super) fn value_range(d: DType) -> (i128, i128) {
    match d {
        DType::Bool => (0, 1),
        DType::U8 => (0, u8::MAX as i128),
        DType::I8 => (i8::MIN as i128, i8::MAX as i128),
        DType::I16 => (i16::MIN as i128, i16::MAX as i128),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::F16 => (-65504, 65504),
        _ => (i64::MIN as i128, i64::MAX as i128),
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRandomGetWorkspaceSize(
    selfRef: *const c_void,
    from: i64,
    to: i64,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceRandomGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            a::dtype_in(&x, RANDOM_TYPES)?;
            if from >= to {
                return Err(NnError::invalid(format!(
                    "from {from} must be less than to {to}"
                )));
            }
            let (lo, hi) = value_range(x.dtype());
            let (f, l) = (from as i128, to as i128 - 1);
            if f < lo || f > hi || l < lo || l > hi {
                return Err(NnError::invalid(format!(
                    "from {from} and to - 1 ({l}) must lie in [{lo}, {hi}] for selfRef's data type {}",
                    x.dtype()
                )));
            }
            let mut l = Launch::new("aclnnInplaceRandom");
            l.output(&x);
            l.finish(move |v, _| {
                random::random_int(&v[0], from, to, seed as u64, offset as u64);
                Ok(())
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRandpermGetWorkspaceSize(
    n: i64,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRandpermGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let o = a::tensor(out, "out")?;
            a::dtype_in(
                &o,
                &[
                    DType::I64,
                    DType::I32,
                    DType::I16,
                    DType::U8,
                    DType::I8,
                    DType::F32,
                    DType::F16,
                    DType::F64,
                    DType::BF16,
                ],
            )?;
            if n < 0 {
                return Err(NnError::invalid(format!("n {n} must be >= 0")));
            }
            a::same_shape(&o, &[n as usize])?;
            let n = n as usize;
            let mut l = Launch::new("aclnnRandperm");
            l.output(&o);
            l.finish(move |v, _| {
                random::randperm(n, &v[0], seed as u64, offset as u64);
                Ok(())
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMultinomialGetWorkspaceSize(
    self_: *const c_void,
    numsamples: i64,
    replacement: bool,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMultinomialGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&o, &[DType::I64])?;
            if x.ndim() != 1 && x.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "self must be 1-D [C] or 2-D [N, C], but its shape is {:?}",
                    x.shape()
                )));
            }
            let c = *x.shape().last().unwrap();
            if numsamples <= 0 {
                return Err(NnError::invalid(format!(
                    "numsamples {numsamples} must be > 0"
                )));
            }
            if !replacement && numsamples as usize > c {
                return Err(NnError::invalid(format!(
                    "numsamples {numsamples} exceeds the {c} categories of self without replacement"
                )));
            }
            let mut want = x.shape().to_vec();
            *want.last_mut().unwrap() = numsamples as usize;
            a::same_shape(&o, &want)?;
            let n = numsamples as usize;
            let mut l = Launch::new("aclnnMultinomial");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                random::multinomial(&v[0], n, replacement, seed as u64, offset as u64, &v[1])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceUniformTensorGetWorkspaceSize(
    selfRef: *const c_void,
    from: f64,
    to: f64,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: u64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceUniformTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let s = a::tensor(seedTensor, "seedTensor")?;
            let o = a::tensor(offsetTensor, "offsetTensor")?;
            a::dtype_in(&x, FLOATS)?;
            one_elem(&s)?;
            one_elem(&o)?;
            check_range(from, to)?;
            let mut l = Launch::new("aclnnInplaceUniformTensor");
            l.input(&s);
            l.input(&o);
            l.output(&x);
            l.finish(move |v, _| {
                let (sd, off) = (
                    read_i64(&v[0]),
                    (read_i64(&v[1]) as u64).wrapping_add(offset),
                );
                random::uniform(&v[2], from, to, sd as u64, off);
                Ok(())
            })
        },
    )
}

fn prob(p: f64) -> Result<f64, NnError> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(NnError::invalid(format!("prob {p} must be in [0, 1]")))
    }
}

const BERN_TYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::Bool,
];

fn bern_scalar(
    api: &'static str,
    x: &a::T,
    p: f64,
    seed: i64,
    offset: i64,
    o: &a::T,
) -> Result<super::launch::Built, NnError> {
    a::dtype_in(x, BERN_TYPES)?;
    a::dtype_in(o, BERN_TYPES)?;
    a::same_shape(o, x.shape())?;
    let p = prob(p)?;
    let mut l = Launch::new(api);
    l.output(o);
    l.finish(move |v, _| {
        random::bernoulli(&v[0], |_| p, seed as u64, offset as u64);
        Ok(())
    })
}

fn bern_tensor(
    api: &'static str,
    x: &a::T,
    pt: &a::T,
    seed: i64,
    offset: i64,
    o: &a::T,
) -> Result<super::launch::Built, NnError> {
    a::dtype_in(x, BERN_TYPES)?;
    a::dtype_in(o, BERN_TYPES)?;
    a::dtype_in(pt, FLOATS)?;
    a::same_shape(o, x.shape())?;
    let sh = a::broadcast(x, pt)?;
    if sh != x.shape() {
        return Err(NnError::invalid(format!(
            "prob shape {:?} cannot be broadcast to {:?}",
            pt.shape(),
            x.shape()
        )));
    }
    let mut l = Launch::new(api);
    l.input(pt);
    l.output(o);
    l.finish(move |v, _| {
        // probabilities in row-major order of the output
        let n = v[1].numel();
        let s = npu_emu::ops::view::Scratch::new(DType::F64, &v[1].shape);
        iter::copy(&v[0], &s.view)?;
        // SAFETY: the scratch holds n f64 values.
        let ps = unsafe { std::slice::from_raw_parts(s.view.ptr as *const f64, n) };
        random::bernoulli(&v[1], |i| ps[i], seed as u64, offset as u64);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBernoulliGetWorkspaceSize(
    self_: *const c_void,
    prob_: *const c_void,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBernoulliGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let p = a::scalar(prob_, "prob")?.to_f64();
            let o = a::tensor(out, "out")?;
            bern_scalar("aclnnBernoulli", &x, p, seed, offset, &o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBernoulliTensorGetWorkspaceSize(
    self_: *const c_void,
    prob_: *const c_void,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBernoulliTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let p = a::tensor(prob_, "prob")?;
            let o = a::tensor(out, "out")?;
            bern_tensor("aclnnBernoulliTensor", &x, &p, seed, offset, &o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceBernoulliGetWorkspaceSize(
    selfRef: *const c_void,
    prob_: *const c_void,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceBernoulliGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let p = a::scalar(prob_, "prob")?.to_f64();
            bern_scalar("aclnnInplaceBernoulli", &x, p, seed, offset, &x)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceBernoulliTensorGetWorkspaceSize(
    selfRef: *const c_void,
    prob_: *const c_void,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceBernoulliTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let p = a::tensor(prob_, "prob")?;
            bern_tensor("aclnnInplaceBernoulliTensor", &x, &p, seed, offset, &x)
        },
    )
}

fn mask_bytes(n: usize) -> usize {
    n.div_ceil(128) * 128 / 8
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDropoutGetWorkspaceSize(
    input: *const c_void,
    p: f64,
    train: bool,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    maskOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let o = a::tensor(out, "out")?;
            let m = a::tensor(maskOut, "maskOut")?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&o, FLOATS)?;
            a::dtype_in(&m, &[DType::U8])?;
            a::same_shape(&o, x.shape())?;
            let p = prob(p)?;
            let nb = mask_bytes(x.numel());
            if m.shape() != [nb] {
                return Err(NnError::invalid(format!(
                "maskOut must have shape [{nb}] (align(numel, 128) / 8 bytes of bits), but it is {:?}",
                m.shape()
            )));
            }
            let n = x.numel();
            let mut l = Launch::new("aclnnDropout");
            l.input(&x);
            l.output(&o);
            l.output(&m);
            l.finish(move |v, _| {
                if !train || p == 0.0 {
                    return iter::copy(&v[0], &v[1]);
                }
                if p == 1.0 {
                    return iter::fill::<f64>(&v[1], 0.0);
                }
                random::dropout_mask(n, p, seed as u64, offset as u64, &v[2]);
                random::apply_mask(&v[0], &v[2], 1.0 / (1.0 - p), &v[1])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDropoutBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    mask: *const c_void,
    scale: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let m = a::tensor(mask, "mask")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&g, FLOATS)?;
            a::dtype_in(&o, FLOATS)?;
            a::dtype_in(&m, &[DType::U8])?;
            a::same_shape(&o, g.shape())?;
            let nb = mask_bytes(g.numel());
            if m.numel() < nb.min(g.numel().div_ceil(8)) {
                return Err(NnError::invalid(format!(
                    "mask has {} bytes; {} elements need {nb}",
                    m.numel(),
                    g.numel()
                )));
            }
            let mut l = Launch::new("aclnnDropoutBackward");
            l.input(&g);
            l.input(&m);
            l.output(&o);
            l.finish(move |v, _| random::apply_mask(&v[0], &v[1], scale, &v[2]))
        },
    )
}

fn gen_mask(
    api: &'static str,
    shape: *const c_void,
    p: f64,
    seed: i64,
    offset: i64,
    out: *mut c_void,
) -> Result<super::launch::Built, NnError> {
    let shape = a::int_array(shape, "shape")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&o, &[DType::U8])?;
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(NnError::invalid(format!(
            "shape {shape:?} has a negative size {d}"
        )));
    }
    let p = prob(p)?;
    let n: usize = shape.iter().map(|&d| d as usize).product();
    let nb = mask_bytes(n);
    if o.shape() != [nb] {
        return Err(NnError::invalid(format!(
            "out must have shape [{nb}] (align({n}, 128) / 8 bytes of bits), but it is {:?}",
            o.shape()
        )));
    }
    let mut l = Launch::new(api);
    l.output(&o);
    l.finish(move |v, _| {
        random::dropout_mask(n, p, seed as u64, offset as u64, &v[0]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDropoutGenMaskGetWorkspaceSize(
    shape: *const c_void,
    prob: f64,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutGenMaskGetWorkspaceSize",
        workspaceSize,
        executor,
        || gen_mask("aclnnDropoutGenMask", shape, prob, seed, offset, out),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDropoutGenMaskV2GetWorkspaceSize(
    shape: *const c_void,
    prob: f64,
    seed: i64,
    offset: i64,
    probDataType: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutGenMaskV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let pt = a::dtype(probDataType, "probDataType")?;
            a::dtype_of(pt, "probDataType", &[DType::F32, DType::F16, DType::BF16])?;
            gen_mask("aclnnDropoutGenMaskV2", shape, prob, seed, offset, out)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDropoutDoMaskGetWorkspaceSize(
    self_: *const c_void,
    mask: *const c_void,
    prob: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDropoutDoMaskGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let m = a::tensor(mask, "mask")?;
            let o = a::tensor(out, "out")?;
            let types = [DType::F32, DType::F16, DType::BF16];
            a::dtype_in(&x, &types)?;
            a::dtype_in(&o, &types)?;
            a::dtype_in(&m, &[DType::U8])?;
            a::same_shape(&o, x.shape())?;
            let p = self::prob(prob)?;
            let nb = mask_bytes(x.numel());
            if m.shape() != [nb] {
                return Err(NnError::invalid(format!(
                    "mask must have shape [{nb}] (align({}, 128) / 8 bytes of bits), but it is {:?}",
                    x.numel(),
                    m.shape()
                )));
            }
            let mut l = Launch::new("aclnnDropoutDoMask");
            l.input(&x);
            l.input(&m);
            l.output(&o);
            l.finish(move |v, _| {
                if p == 1.0 {
                    return iter::fill::<f64>(&v[2], 0.0);
                }
                random::apply_mask(&v[0], &v[1], 1.0 / (1.0 - p), &v[2])
            })
        },
    )
}

crate::phase2!(
    aclnnMultinomial,
    aclnnInplaceRandom,
    aclnnRandperm,
    aclnnInplaceNormal,
    aclnnInplaceNormalTensor,
    aclnnInplaceUniform,
    aclnnInplaceUniformTensor,
    aclnnBernoulli,
    aclnnBernoulliTensor,
    aclnnInplaceBernoulli,
    aclnnInplaceBernoulliTensor,
    aclnnDropout,
    aclnnDropoutBackward,
    aclnnDropoutGenMask,
    aclnnDropoutGenMaskV2,
    aclnnDropoutDoMask
);
