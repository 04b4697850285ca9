//! Automatic mixed precision: the two steps of PyTorch's dynamic loss scaling
//! (`torch.amp.GradScaler`), as CANN's `aclnnForeachNonFiniteCheckAndUnscale` and
//! `aclnnAmpUpdateScale` compute them.

use super::dtype::DType;
use super::elem;
use super::iter::map1;
use super::{Scalar, View};
use std::sync::atomic::{AtomicBool, Ordering};

/// Multiply every element of every tensor of `grads` by `inv_scale` (one FLOAT element), in
/// place, and set `found_inf` (one FLOAT element) to 1.0 if any element was infinite or NaN
/// before (otherwise it keeps its value). Half-precision gradients are multiplied in f32 and
/// rounded once, as PyTorch's kernels do.
pub fn non_finite_check_and_unscale(
    grads: &[View],
    found_inf: &View,
    inv_scale: &View,
) -> Result<(), String> {
    // SAFETY: one-element views the executor checked.
    let inv = unsafe { elem::read_f64(inv_scale.dtype, inv_scale.ptr) } as f32;
    let found = AtomicBool::new(false);
    for g in grads {
        map1::<f32, f32>(g, g, |x| {
            if !x.is_finite() {
                found.store(true, Ordering::Relaxed);
            }
            x * inv
        })?;
    }
    if found.load(Ordering::Relaxed) {
        // SAFETY: as above.
        unsafe { elem::write::<f64>(found_inf.dtype, found_inf.ptr, 1.0) };
    }
    Ok(())
}

/// The loss-scale update after a step: with `found_inf` non-zero the scale is multiplied by
/// `backoff` and the tracker reset; otherwise the tracker counts the step, and when it
/// reaches `interval` the scale is multiplied by `growth` (kept if the product is not finite
/// in the scale's type) and the tracker reset. Every input is read before an output is
/// written (PyTorch updates in place: the outputs are the inputs).
#[allow(clippy::too_many_arguments)]
pub fn update_scale(
    scale: &View,
    tracker: &View,
    found_inf: &View,
    growth: f64,
    backoff: f64,
    interval: i64,
    new_scale: &View,
    new_tracker: &View,
) -> Result<(), String> {
    // SAFETY: one-element views the executor checked.
    let (s, t, f) = unsafe {
        (
            elem::read_f64(scale.dtype, scale.ptr) as f32,
            elem::read_i64(tracker.dtype, tracker.ptr),
            elem::read_f64(found_inf.dtype, found_inf.ptr),
        )
    };
    // The scale's own type decides whether a grown scale overflowed.
    let in_type = |v: f32| Scalar::f64(v as f64).rounded_to(new_scale.dtype).to_f64();
    let (s, t) = if f != 0.0 {
        (s * backoff as f32, 0)
    } else if t + 1 == interval {
        let grown = s * growth as f32;
        if in_type(grown).is_finite() {
            (grown, 0)
        } else {
            (s, 0)
        }
    } else {
        (s, t + 1)
    };
    // SAFETY: as above.
    unsafe {
        elem::write::<f64>(new_scale.dtype, new_scale.ptr, s as f64);
        elem::write::<i64>(new_tracker.dtype, new_tracker.ptr, t);
    }
    Ok(())
}

/// The types the scale may have.
pub const SCALE_TYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16];
