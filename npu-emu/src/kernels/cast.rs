//! The "Cast" operator's kernel (`aclopCast`, op type "Cast"): element-wise data type
//! conversion.
//!
//! Element rules (IEEE, as the hardware converts): float → narrower float rounds to nearest
//! even (overflow gives ±Inf, NaN stays NaN); float → integer rounds toward zero and
//! saturates, NaN gives 0; integer → integer keeps the low bits (two's complement
//! wrap-around); anything → bool is 1 when non-zero; bool → anything is 0 or 1. The 16-bit
//! floats convert through the `half` crate (IEEE round to nearest even from `f64`).

/// One element in a lossless intermediate form.
#[derive(Clone, Copy)]
enum Num {
    F(f64),
    I(i128),
}

/// Element size of a data type Cast handles (`aclDataType` value), `None` for the others.
pub fn element_size(dt: i32) -> Option<usize> {
    Some(match dt {
        0 | 3 | 8 => 4,      // FLOAT, INT32, UINT32
        1 | 6 | 7 | 27 => 2, // FLOAT16, INT16, UINT16, BF16
        2 | 4 | 12 => 1,     // INT8, UINT8, BOOL
        9..=11 => 8,         // INT64, UINT64, DOUBLE
        _ => return None,
    })
}

fn load(dt: i32, b: &[u8]) -> Num {
    let a2 = || [b[0], b[1]];
    let a4 = || [b[0], b[1], b[2], b[3]];
    let a8 = || [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
    match dt {
        0 => Num::F(f32::from_le_bytes(a4()) as f64),
        1 => Num::F(half::f16::from_le_bytes(a2()).to_f64()),
        27 => Num::F(half::bf16::from_le_bytes(a2()).to_f64()),
        11 => Num::F(f64::from_le_bytes(a8())),
        2 => Num::I(b[0] as i8 as i128),
        4 => Num::I(b[0] as i128),
        12 => Num::I((b[0] != 0) as i128),
        6 => Num::I(i16::from_le_bytes(a2()) as i128),
        7 => Num::I(u16::from_le_bytes(a2()) as i128),
        3 => Num::I(i32::from_le_bytes(a4()) as i128),
        8 => Num::I(u32::from_le_bytes(a4()) as i128),
        9 => Num::I(i64::from_le_bytes(a8()) as i128),
        _ => Num::I(u64::from_le_bytes(a8()) as i128),
    }
}

fn store(dt: i32, v: Num, out: &mut [u8]) {
    // Integer targets: floats truncate toward zero and saturate (Rust `as`), integers wrap.
    let int = |bits: u32, signed: bool| -> i128 {
        match v {
            Num::F(f) => {
                if signed {
                    match bits {
                        8 => f as i8 as i128,
                        16 => f as i16 as i128,
                        32 => f as i32 as i128,
                        _ => f as i64 as i128,
                    }
                } else {
                    match bits {
                        8 => f as u8 as i128,
                        16 => f as u16 as i128,
                        32 => f as u32 as i128,
                        _ => f as u64 as i128,
                    }
                }
            }
            Num::I(i) => i,
        }
    };
    let f64v = || match v {
        Num::F(f) => f,
        Num::I(i) => i as f64,
    };
    match dt {
        0 => {
            let x = match v {
                Num::F(f) => f as f32,
                Num::I(i) => i as f32,
            };
            out.copy_from_slice(&x.to_le_bytes())
        }
        1 => out.copy_from_slice(&half::f16::from_f64(f64v()).to_le_bytes()),
        27 => out.copy_from_slice(&half::bf16::from_f64(f64v()).to_le_bytes()),
        11 => out.copy_from_slice(&f64v().to_le_bytes()),
        12 => {
            out[0] = match v {
                Num::F(f) => (f != 0.0) as u8,
                Num::I(i) => (i != 0) as u8,
            }
        }
        2 => out[0] = int(8, true) as i8 as u8,
        4 => out[0] = int(8, false) as u8,
        6 => out.copy_from_slice(&(int(16, true) as i16).to_le_bytes()),
        7 => out.copy_from_slice(&(int(16, false) as u16).to_le_bytes()),
        3 => out.copy_from_slice(&(int(32, true) as i32).to_le_bytes()),
        8 => out.copy_from_slice(&(int(32, false) as u32).to_le_bytes()),
        9 => out.copy_from_slice(&(int(64, true) as i64).to_le_bytes()),
        _ => out.copy_from_slice(&(int(64, false) as u64).to_le_bytes()),
    }
}

/// Convert `n` elements of data type `sdt` in `src` to `ddt` in `dst` (both types
/// supported by [`element_size`]; `src` and `dst` hold at least `n` elements).
pub fn convert(sdt: i32, ddt: i32, n: usize, src: &[u8], dst: &mut [u8]) {
    let (ss, ds) = (
        element_size(sdt).unwrap_or(1),
        element_size(ddt).unwrap_or(1),
    );
    if sdt == ddt {
        dst[..n * ds].copy_from_slice(&src[..n * ss]);
        return;
    }
    for (i, o) in src[..n * ss]
        .chunks_exact(ss)
        .zip(dst[..n * ds].chunks_exact_mut(ds))
    {
        store(ddt, load(sdt, i), o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast1(sdt: i32, ddt: i32, src: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; element_size(ddt).unwrap()];
        convert(sdt, ddt, 1, src, &mut out);
        out
    }

    #[test]
    fn cast_rules() {
        // fp32 -> fp16: round to nearest even, overflow to +Inf.
        assert_eq!(cast1(0, 1, &1.0f32.to_le_bytes()), 0x3C00u16.to_le_bytes());
        assert_eq!(cast1(0, 1, &1e6f32.to_le_bytes()), 0x7C00u16.to_le_bytes());
        // fp32 -> int32: toward zero, saturating, NaN -> 0.
        assert_eq!(cast1(0, 3, &(-2.7f32).to_le_bytes()), (-2i32).to_le_bytes());
        assert_eq!(cast1(0, 3, &3e10f32.to_le_bytes()), i32::MAX.to_le_bytes());
        assert_eq!(cast1(0, 3, &f32::NAN.to_le_bytes()), 0i32.to_le_bytes());
        // int32 -> int8 wraps; -> uint8 wraps; -> bool.
        assert_eq!(cast1(3, 2, &300i32.to_le_bytes()), [44u8]);
        assert_eq!(cast1(3, 4, &(-1i32).to_le_bytes()), [255u8]);
        assert_eq!(cast1(3, 12, &(-5i32).to_le_bytes()), [1u8]);
        // bf16 -> fp32 exact; int64 -> double.
        assert_eq!(cast1(27, 0, &0x3F80u16.to_le_bytes()), 1.0f32.to_le_bytes());
        assert_eq!(
            cast1(9, 11, &(-7i64).to_le_bytes()),
            (-7.0f64).to_le_bytes()
        );
    }
}
