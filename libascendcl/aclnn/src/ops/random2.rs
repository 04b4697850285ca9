//! More random operators: `aclnn_random.h`'s InplaceRandomTensor, `aclnn_random_without_from_to.h`
//! (InplaceRandomWithoutFromTo and its Tensor form), `aclnn_multinomial_tensor.h` and
//! `aclnn_stateless_exponential_tensor.h`.
//!
//! torch_npu calls the `…Tensor` forms while an NPU graph is being captured (`Tensor.random_`,
//! `torch.multinomial`), reading the generator's seed and offset from device tensors when the
//! task runs (offset = the tensor's value plus the `offset` argument), and the
//! WithoutFromTo forms on Ascend 950 (`Tensor.random_()`). The values are the engine's
//! Philox stream, so a Tensor form draws exactly what its plain form draws for the same seed
//! and offset. WithoutFromTo draws integers in `[0, DTYPE_MAX_VALUE]` (2^24 for FLOAT, 2^11
//! FLOAT16, 2^8 BFLOAT16, the maximum for integer types; for INT64 the last value 2^63 - 1 is
//! never drawn); the exponential is `-ln(1 - u) / lambd`.

use super::args::{self as a, FLOATS};
use super::launch::{phase1, Launch};
use super::random::{one_elem, read_i64, value_range, RANDOM_TYPES};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::{random, random2};
use std::ffi::c_void;

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRandomTensorGetWorkspaceSize(
    selfRef: *const c_void,
    from: i64,
    to: i64,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceRandomTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let s = a::tensor(seedTensor, "seedTensor")?;
            let o = a::tensor(offsetTensor, "offsetTensor")?;
            a::dtype_in(&x, RANDOM_TYPES)?;
            one_elem(&s)?;
            one_elem(&o)?;
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
            let mut l = Launch::new("aclnnInplaceRandomTensor");
            l.input(&s);
            l.input(&o);
            l.output(&x);
            l.finish(move |v, _| {
                let (sd, off) = (read_i64(&v[0]), read_i64(&v[1]).wrapping_add(offset));
                random::random_int(&v[2], from, to, sd as u64, off as u64);
                Ok(())
            })
        },
    )
}

const WITHOUT_TYPES: &[DType] = &[
    DType::BF16,
    DType::F16,
    DType::F32,
    DType::I32,
    DType::I64,
    DType::I16,
    DType::I8,
    DType::U8,
    DType::Bool,
];

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRandomWithoutFromToGetWorkspaceSize(
    selfRef: *const c_void,
    seed: i64,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceRandomWithoutFromToGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            a::dtype_in(&x, WITHOUT_TYPES)?;
            a::max_dims(&x, 8)?;
            let mut l = Launch::new("aclnnInplaceRandomWithoutFromTo");
            l.output(&x);
            l.finish(move |v, _| {
                random2::random_without_from_to(&v[0], seed as u64, offset as u64);
                Ok(())
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRandomWithoutFromToTensorGetWorkspaceSize(
    selfRef: *const c_void,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceRandomWithoutFromToTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let s = a::tensor(seedTensor, "seedTensor")?;
            let o = a::tensor(offsetTensor, "offsetTensor")?;
            a::dtype_in(&x, WITHOUT_TYPES)?;
            a::max_dims(&x, 8)?;
            one_elem(&s)?;
            one_elem(&o)?;
            let mut l = Launch::new("aclnnInplaceRandomWithoutFromToTensor");
            l.input(&s);
            l.input(&o);
            l.output(&x);
            l.finish(move |v, _| {
                let (sd, off) = (read_i64(&v[0]), read_i64(&v[1]).wrapping_add(offset));
                random2::random_without_from_to(&v[2], sd as u64, off as u64);
                Ok(())
            })
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnMultinomialTensorGetWorkspaceSize(
    self_: *const c_void,
    numsamples: i64,
    replacement: bool,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMultinomialTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let s = a::tensor(seedTensor, "seedTensor")?;
            let so = a::tensor(offsetTensor, "offsetTensor")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&o, &[DType::I64])?;
            one_elem(&s)?;
            one_elem(&so)?;
            if x.ndim() != 1 && x.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "self must be 1-D [C] or 2-D [N, C], but its shape is {:?}",
                    x.shape()
                )));
            }
            let c = *x.shape().last().unwrap_or(&0);
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
            if let Some(last) = want.last_mut() {
                *last = numsamples as usize;
            }
            a::same_shape(&o, &want)?;
            let n = numsamples as usize;
            let mut l = Launch::new("aclnnMultinomialTensor");
            l.input(&x);
            l.input(&s);
            l.input(&so);
            l.output(&o);
            l.finish(move |v, _| {
                let (sd, off) = (read_i64(&v[1]), read_i64(&v[2]).wrapping_add(offset));
                random::multinomial(&v[0], n, replacement, sd as u64, off as u64, &v[3])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnStatelessExponentialTensorGetWorkspaceSize(
    self_: *mut c_void,
    seedTensor: *const c_void,
    offsetTensor: *const c_void,
    offset: i64,
    lambd: f64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnStatelessExponentialTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let s = a::tensor(seedTensor, "seedTensor")?;
            let o = a::tensor(offsetTensor, "offsetTensor")?;
            a::dtype_in(&x, FLOATS)?;
            one_elem(&s)?;
            one_elem(&o)?;
            if lambd.is_nan() || lambd <= 0.0 {
                return Err(NnError::invalid(format!("lambd {lambd} must be > 0")));
            }
            let mut l = Launch::new("aclnnStatelessExponentialTensor");
            l.input(&s);
            l.input(&o);
            l.output(&x);
            l.finish(move |v, _| {
                let (sd, off) = (read_i64(&v[0]), read_i64(&v[1]).wrapping_add(offset));
                random2::exponential(&v[2], lambd, sd as u64, off as u64)
            })
        },
    )
}

crate::phase2!(
    aclnnInplaceRandomTensor,
    aclnnInplaceRandomWithoutFromTo,
    aclnnInplaceRandomWithoutFromToTensor,
    aclnnMultinomialTensor,
    aclnnStatelessExponentialTensor
);
