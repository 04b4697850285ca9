//! The ACL fp16 helpers (`aclFloatToFloat16`, `aclFloat16ToFloat`) with CANN's quirks
//! (abi.md §1.3, CANN `types/fp16_impl.cpp`):
//!
//! - float → half rounds to nearest, ties to even, and produces denormals; but overflow,
//!   ±Inf and NaN all **saturate** to ±65504 (`0x7BFF` / `0xFBFF`): no Inf or NaN is ever
//!   produced. The sign of the input is kept (also for zero and NaN).
//! - half → float treats exponent 31 as an ordinary exponent: `0x7C00` (+Inf in IEEE) gives
//!   65536.0, `0x7E00` (a NaN) gives 98304.0. Denormals convert exactly; signed zero is kept.
//!
//! These differ from IEEE 754 only in those saturating and exponent-31 cases, so the IEEE
//! part is the `half` crate's conversion and only the quirks are written here; the unit tests
//! check both the agreement and the differences.

use half::f16;

/// Largest finite half (65504), positive.
pub const FP16_MAX: u16 = 0x7BFF;

/// CANN's `aclFloatToFloat16`.
pub fn float_to_fp16(value: f32) -> u16 {
    let h = f16::from_f32(value);
    if h.is_finite() {
        h.to_bits()
    } else {
        // Overflow, ±Inf and NaN saturate to ±65504, keeping the input's sign.
        ((value.to_bits() >> 16) as u16 & 0x8000) | FP16_MAX
    }
}

/// CANN's `aclFloat16ToFloat`.
pub fn fp16_to_float(value: u16) -> f32 {
    if value & 0x7C00 != 0x7C00 {
        return f16::from_bits(value).to_f32();
    }
    // Exponent 31 is not special here (CANN quirk): 0x7C00 → 2^16, the mantissa as usual.
    let magnitude = (1.0 + (value & 0x3FF) as f32 / 1024.0) * 65536.0;
    if value & 0x8000 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quirks_from_abi_md() {
        assert_eq!(fp16_to_float(0x7C00), 65536.0);
        assert_eq!(fp16_to_float(0x7E00), 98304.0);
        assert_eq!(fp16_to_float(0xFC00), -65536.0);
        assert_eq!(fp16_to_float(0x7FFF), 131008.0);
        assert_eq!(float_to_fp16(f32::INFINITY), 0x7BFF);
        assert_eq!(float_to_fp16(f32::NEG_INFINITY), 0xFBFF);
        assert_eq!(float_to_fp16(f32::NAN), 0x7BFF);
        assert_eq!(float_to_fp16(-f32::NAN), 0xFBFF);
        assert_eq!(float_to_fp16(1e10), 0x7BFF);
        assert_eq!(float_to_fp16(-1e10), 0xFBFF);
        assert_eq!(float_to_fp16(f32::MAX), 0x7BFF);
    }

    #[test]
    // The literals are the exact decimal values of the floats meant (e.g. 1 + 2^-10).
    #[allow(clippy::excessive_precision)]
    fn selected_floats() {
        let cases: &[(f32, u16)] = &[
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3C00),
            (-2.0, 0xC000),
            (0.5, 0x3800),
            (65504.0, 0x7BFF),
            (65519.99, 0x7BFF),     // rounds down to the max
            (65520.0, 0x7BFF),      // IEEE: +Inf; CANN: saturate
            (65536.0, 0x7BFF),      // exponent 0x8F
            (6.1035156e-5, 0x0400), // smallest normal 2^-14
            (5.9604645e-8, 0x0001), // smallest denormal 2^-24
            (2.9802322e-8, 0x0000), // 2^-25: tie → even zero
            (2.9802326e-8, 0x0001), // just above 2^-25
            (-2.9802326e-8, 0x8001),
            (1e-30, 0x0000),
            (-1e-30, 0x8000),
            (f32::from_bits(1), 0x0000), // float denormal
            (1.0009765625, 0x3C01),      // 1 + 2^-10
            (1.00048828125, 0x3C00),     // 1 + 2^-11: tie → even (down)
            (1.00146484375, 0x3C02),     // 1 + 3*2^-11: tie → even (up)
            (0.333333333, 0x3555),
            (std::f32::consts::PI, 0x4248),
            (6.097555e-5, 0x03FF), // largest denormal
            (6.1032e-5, 0x0400),   // rounds up into the smallest normal
        ];
        for &(f, h) in cases {
            assert_eq!(float_to_fp16(f), h, "float_to_fp16({f:e})");
        }
        // 2047.5 lies between 2047 (0x67FF, odd mantissa) and 2048 (0x6800): tie → even.
        assert_eq!(float_to_fp16(2047.5), 0x6800);
        assert_eq!(float_to_fp16(2046.5), 0x67FE);
    }

    #[test]
    fn every_half_converts_and_round_trips() {
        for h in 0..=u16::MAX {
            let f = fp16_to_float(h);
            let exp = (h >> 10) & 0x1F;
            if exp == 31 {
                let expect = (1.0 + (h & 0x3FF) as f32 / 1024.0) * 65536.0;
                let expect = if h & 0x8000 != 0 { -expect } else { expect };
                assert_eq!(f, expect, "fp16_to_float({h:#06x})");
                assert_eq!(float_to_fp16(f), (h & 0x8000) | FP16_MAX, "{h:#06x}");
            } else {
                // Identical to IEEE for every other half, bit for bit (signed zero too).
                assert_eq!(
                    f.to_bits(),
                    f16::from_bits(h).to_f32().to_bits(),
                    "{h:#06x}"
                );
                assert_eq!(float_to_fp16(f), h, "round trip of {h:#06x}");
            }
        }
    }

    #[test]
    fn midpoints_between_halves_round_to_even() {
        // Every midpoint between two adjacent positive finite halves.
        for h in 0..0x7BFFu16 {
            let lo = fp16_to_float(h) as f64;
            let hi = fp16_to_float(h + 1) as f64;
            let mid = ((lo + hi) / 2.0) as f32; // exact in f32
            assert_eq!(mid as f64, (lo + hi) / 2.0);
            let want = if h & 1 == 0 { h } else { h + 1 };
            assert_eq!(float_to_fp16(mid), want, "midpoint after {h:#06x}");
            assert_eq!(float_to_fp16(-mid), want | 0x8000);
            // Just below and above the midpoint.
            let below = f32::from_bits(mid.to_bits() - 1);
            let above = f32::from_bits(mid.to_bits() + 1);
            assert_eq!(float_to_fp16(below), h);
            assert_eq!(float_to_fp16(above), h + 1);
        }
    }

    #[test]
    fn agrees_with_ieee_except_saturation() {
        // A stride through all float bit patterns (about 16.7 million values).
        let mut bits: u32 = 0;
        loop {
            let f = f32::from_bits(bits);
            let ours = float_to_fp16(f);
            let ieee = f16::from_f32(f);
            if ieee.is_infinite() || ieee.is_nan() {
                let sign = if f.is_sign_negative() { 0x8000 } else { 0 };
                assert_eq!(ours, sign | FP16_MAX, "{bits:#010x}");
            } else {
                assert_eq!(ours, ieee.to_bits(), "{bits:#010x} = {f:e}");
            }
            match bits.checked_add(251) {
                Some(b) => bits = b,
                None => break,
            }
        }
    }
}
