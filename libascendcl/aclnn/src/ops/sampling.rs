//! Random sampling of the aclnn reference beyond the in-place fills of [`super::random`]:
//! `aclnn_normal_out.h` (NormalTensorTensor, NormalTensorFloat, NormalFloatTensor,
//! NormalFloatFloat) (Randperm and Multinomial are in [`super::random`]). The engine is
//! `npu_emu::ops::sampling` over the same Philox stream: the same (seed, offset) and shape
//! give the same values on every run. A negative deviation in a `std` tensor fails the task
//! at the next synchronisation.

use super::args::{self as a, FLOATS, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::scalar_view;
use npu_emu::ops::{sampling, Scalar};
use std::ffi::c_void;

/// Where a normal draw takes its mean or deviation from.
#[derive(Clone, Copy)]
enum Param {
    /// the launch input at this index
    Tensor(usize),
    Value(f64),
}

/// The shared part of the four Normal variants: `out = mean + std * z`.
fn normal(
    api: &'static str,
    mean: Result<T, f64>,
    std: Result<T, f64>,
    seed: i64,
    offset: i64,
    o: T,
) -> NnResult<Built> {
    a::dtype_in(&o, FLOATS)?;
    a::max_dims(&o, 8)?;
    let mut l = Launch::new(api);
    let mut shape: Vec<usize> = vec![];
    let mut param = |p: &Result<T, f64>, l: &mut Launch| -> NnResult<Param> {
        Ok(match p {
            Ok(t) => {
                a::dtype_in(t, FLOATS)?;
                a::max_dims(t, 8)?;
                a::castable(t.dtype(), &o)?;
                shape =
                    npu_emu::ops::view::broadcast_shapes(&shape, t.shape()).ok_or_else(|| {
                        NnError::invalid(format!(
                            "{} {:?} does not broadcast with the other parameter",
                            t.arg,
                            t.shape()
                        ))
                    })?;
                Param::Tensor(l.input(t))
            }
            Err(v) => Param::Value(*v),
        })
    };
    let pm = param(&mean, &mut l)?;
    let ps = param(&std, &mut l)?;
    if let Param::Value(s) = ps {
        if s.is_nan() || s < 0.0 {
            return Err(NnError::invalid(format!("std {s} must be >= 0")));
        }
    }
    if matches!(pm, Param::Tensor(_)) || matches!(ps, Param::Tensor(_)) {
        a::same_shape(&o, &shape)?;
    }
    let out_index = l.output(&o);
    l.finish(move |v, _| {
        let mut bm = [0u64; 1];
        let mut bs = [0u64; 1];
        let view = |p: Param, buf: &mut [u64; 1]| match p {
            Param::Tensor(i) => v[i].clone(),
            Param::Value(x) => scalar_view(Scalar::f64(x), DType::F64, buf),
        };
        let (m, s) = (view(pm, &mut bm), view(ps, &mut bs));
        sampling::normal(&m, &s, &v[out_index], seed as u64, offset as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNormalTensorTensorGetWorkspaceSize(
    mean: *const c_void,
    std: *const c_void,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNormalTensorTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let m = a::tensor(mean, "mean")?;
            let s = a::tensor(std, "std")?;
            let o = a::tensor(out, "out")?;
            normal("aclnnNormalTensorTensor", Ok(m), Ok(s), seed, offset, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNormalTensorFloatGetWorkspaceSize(
    mean: *const c_void,
    std: f32,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNormalTensorFloatGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let m = a::tensor(mean, "mean")?;
            let o = a::tensor(out, "out")?;
            normal(
                "aclnnNormalTensorFloat",
                Ok(m),
                Err(std as f64),
                seed,
                offset,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNormalFloatTensorGetWorkspaceSize(
    mean: f32,
    std: *const c_void,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNormalFloatTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(std, "std")?;
            let o = a::tensor(out, "out")?;
            if s.numel() == 0 {
                return Err(NnError::invalid("std must not be an empty tensor"));
            }
            normal(
                "aclnnNormalFloatTensor",
                Err(mean as f64),
                Ok(s),
                seed,
                offset,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNormalFloatFloatGetWorkspaceSize(
    mean: f32,
    std: f32,
    seed: i64,
    offset: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNormalFloatFloatGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let o = a::tensor(out, "out")?;
            normal(
                "aclnnNormalFloatFloat",
                Err(mean as f64),
                Err(std as f64),
                seed,
                offset,
                o,
            )
        },
    )
}

crate::phase2!(
    aclnnNormalTensorTensor,
    aclnnNormalTensorFloat,
    aclnnNormalFloatTensor,
    aclnnNormalFloatFloat
);
