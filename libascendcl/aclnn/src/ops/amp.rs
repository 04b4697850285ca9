//! Dynamic loss scaling for mixed-precision training (`torch.amp.GradScaler` through
//! torch_npu): `aclnn_foreach_non_finite_check_and_unscale.h` and `aclnn_amp_update_scale.h`.
//! The engine is `npu_emu::ops::amp`.

use super::args::{self as a, T};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::amp::{self, SCALE_TYPES};
use npu_emu::ops::dtype::DType;
use std::ffi::c_void;

/// The reference's longest `scaledGrads` list (torch_npu splits longer ones).
const MAX_LIST: usize = 256;

/// A tensor of one element (shape `[1]` or 0-d, as PyTorch's scaler keeps them).
fn one_element(t: &T) -> NnResult<()> {
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
pub unsafe extern "C" fn aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(
    scaledGrads: *const c_void,
    foundInf: *const c_void,
    invScale: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let grads = a::tensor_list(scaledGrads, "scaledGrads")?;
            let found = a::tensor(foundInf, "foundInf")?;
            let inv = a::tensor(invScale, "invScale")?;
            if grads.len() > MAX_LIST {
                return Err(NnError::invalid(format!(
                    "scaledGrads has {} tensors; at most {MAX_LIST} are supported",
                    grads.len()
                )));
            }
            for g in &grads {
                a::dtype_in(g, SCALE_TYPES)?;
                a::same_dtype(g, &grads[0])?;
            }
            for t in [&found, &inv] {
                a::dtype_in(t, &[DType::F32])?;
                one_element(t)?;
            }
            let mut l = Launch::new("aclnnForeachNonFiniteCheckAndUnscale");
            l.input(&inv);
            l.outputs(&grads);
            l.output(&found);
            let n = grads.len();
            l.finish(move |v, _| amp::non_finite_check_and_unscale(&v[1..=n], &v[n + 1], &v[0]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnAmpUpdateScaleGetWorkspaceSize(
    currentScale: *const c_void,
    growthTracker: *const c_void,
    foundInf: *const c_void,
    growthFactor: f64,
    backoffFactor: f64,
    growthInterval: i64,
    updatedScale: *const c_void,
    updatedGrowthTracker: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAmpUpdateScaleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let scale = a::tensor(currentScale, "currentScale")?;
            let tracker = a::tensor(growthTracker, "growthTracker")?;
            let found = a::tensor(foundInf, "foundInf")?;
            let out_scale = a::tensor(updatedScale, "updatedScale")?;
            let out_tracker = a::tensor(updatedGrowthTracker, "updatedGrowthTracker")?;
            a::dtype_in(&scale, SCALE_TYPES)?;
            a::same_dtype(&found, &scale)?;
            a::same_dtype(&out_scale, &scale)?;
            a::dtype_in(&tracker, &[DType::I32])?;
            a::dtype_in(&out_tracker, &[DType::I32])?;
            for t in [&scale, &tracker, &found, &out_scale, &out_tracker] {
                one_element(t)?;
            }
            if !(1..=i32::MAX as i64).contains(&growthInterval) {
                return Err(NnError::invalid(format!(
                    "growthInterval is {growthInterval}; it must be in [1, {}]",
                    i32::MAX
                )));
            }
            let mut l = Launch::new("aclnnAmpUpdateScale");
            l.input(&scale);
            l.input(&tracker);
            l.input(&found);
            l.output(&out_scale);
            l.output(&out_tracker);
            l.finish(move |v, _| {
                amp::update_scale(
                    &v[0],
                    &v[1],
                    &v[2],
                    growthFactor,
                    backoffFactor,
                    growthInterval,
                    &v[3],
                    &v[4],
                )
            })
        },
    )
}

crate::phase2!(aclnnForeachNonFiniteCheckAndUnscale, aclnnAmpUpdateScale);
