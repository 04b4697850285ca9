//! Normal draws with tensor means and deviations, beyond the fills of [`super::random`]:
//! every draw comes from the same Philox stream ([`super::random::normal`]), so the same
//! (seed, offset) and shape give the same values on every run.

use super::dtype::DType;
use super::iter::map3;
use super::random;
use super::view::{Scratch, View};

/// `out = mean + std * z` with `z` standard normal; `mean` and `std` broadcast to `out`. A
/// negative or NaN deviation is an error.
pub fn normal(mean: &View, std: &View, out: &View, seed: u64, offset: u64) -> Result<(), String> {
    let z = Scratch::new(DType::F64, &out.shape);
    random::normal(&z.view, 0.0, 1.0, seed, offset);
    let bad = std::sync::atomic::AtomicBool::new(false);
    map3::<f64, f64>(&z.view, mean, std, out, |z, m, s| {
        if s.is_nan() || s < 0.0 {
            bad.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        m + s * z
    })?;
    if bad.load(std::sync::atomic::Ordering::Relaxed) {
        return Err("std holds a negative or NaN element; normal needs std >= 0".into());
    }
    Ok(())
}
