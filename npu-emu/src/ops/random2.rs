//! More random operators over the Philox stream of [`super::random`]: the exponential
//! distribution (`Tensor.exponential_`, aclnnStatelessExponentialTensor) and integers over a
//! type's whole exactly representable range (`Tensor.random_()` without bounds,
//! aclnnInplaceRandomWithoutFromTo).

use super::dtype::DType;
use super::extra::store;
use super::random::{random_int, uniform01};
use super::View;

/// `-ln(1 - u) / lambd` per element, `u` uniform in [0, 1) (53-bit for DOUBLE, 24-bit
/// otherwise, as the uniform operator draws), so the value is finite and >= 0.
pub fn exponential(out: &View, lambd: f64, seed: u64, offset: u64) -> Result<(), String> {
    let wide = out.dtype == DType::F64;
    let v: Vec<f64> = (0..out.numel())
        .map(|i| -(-uniform01(seed, offset, i, wide)).ln_1p() / lambd)
        .collect();
    store(v, DType::F64, out)
}

/// The largest integer `d` holds exactly with all smaller non-negative ones (2^24 for FLOAT,
/// 2^11 for FLOAT16, 2^8 for BFLOAT16, 2^53 for DOUBLE, the type's maximum for integers).
pub fn dtype_max_value(d: DType) -> i64 {
    match d {
        DType::F32 => 1 << 24,
        DType::F16 => 1 << 11,
        DType::BF16 => 1 << 8,
        DType::F64 => 1 << 53,
        DType::I32 => i32::MAX as i64,
        DType::I16 => i16::MAX as i64,
        DType::I8 => i8::MAX as i64,
        DType::U8 => u8::MAX as i64,
        DType::Bool => 1,
        _ => i64::MAX,
    }
}

/// Integers uniform in `[0, dtype_max_value]` (for INT64 `[0, 2^63 - 2]`: the draw's
/// exclusive bound is an INT64 too).
pub fn random_without_from_to(out: &View, seed: u64, offset: u64) {
    let m = dtype_max_value(out.dtype);
    random_int(out, 0, m.saturating_add(1), seed, offset);
}
