//! Host scalars (`aclScalar`): a value with its dtype, read from the bytes the caller gave.

use super::dtype::DType;
use half::{bf16, f16};

/// A scalar argument. Floats are held as f64 (every engine float converts exactly), integers
/// as i64 (uint64 above `i64::MAX` wraps), bools as bool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scalar {
    pub dtype: DType,
    pub value: Value,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    F(f64),
    I(i64),
    B(bool),
}

impl Scalar {
    pub fn f64(v: f64) -> Scalar {
        Scalar {
            dtype: DType::F64,
            value: Value::F(v),
        }
    }

    pub fn f32(v: f32) -> Scalar {
        Scalar {
            dtype: DType::F32,
            value: Value::F(v as f64),
        }
    }

    pub fn i64(v: i64) -> Scalar {
        Scalar {
            dtype: DType::I64,
            value: Value::I(v),
        }
    }

    pub fn bool(v: bool) -> Scalar {
        Scalar {
            dtype: DType::Bool,
            value: Value::B(v),
        }
    }

    /// Decode one element of `dtype` from its bytes (native endianness); None if short.
    pub fn from_bytes(dtype: DType, b: &[u8]) -> Option<Scalar> {
        if b.len() < dtype.size() {
            return None;
        }
        let a2 = || [b[0], b[1]];
        let a4 = || [b[0], b[1], b[2], b[3]];
        let a8 = || [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
        let value = match dtype {
            DType::F32 => Value::F(f32::from_ne_bytes(a4()) as f64),
            DType::F64 => Value::F(f64::from_ne_bytes(a8())),
            DType::F16 => Value::F(f16::from_bits(u16::from_ne_bytes(a2())).to_f64()),
            DType::BF16 => Value::F(bf16::from_bits(u16::from_ne_bytes(a2())).to_f64()),
            DType::I8 => Value::I(b[0] as i8 as i64),
            DType::U8 => Value::I(b[0] as i64),
            DType::I16 => Value::I(i16::from_ne_bytes(a2()) as i64),
            DType::U16 => Value::I(u16::from_ne_bytes(a2()) as i64),
            DType::I32 => Value::I(i32::from_ne_bytes(a4()) as i64),
            DType::U32 => Value::I(u32::from_ne_bytes(a4()) as i64),
            DType::I64 => Value::I(i64::from_ne_bytes(a8())),
            DType::U64 => Value::I(u64::from_ne_bytes(a8()) as i64),
            DType::Bool => Value::B(b[0] != 0),
        };
        Some(Scalar { dtype, value })
    }

    pub fn to_f64(self) -> f64 {
        match self.value {
            Value::F(v) => v,
            Value::I(v) => v as f64,
            Value::B(v) => v as u8 as f64,
        }
    }

    /// As f32 (CANN's `ToFloat`).
    pub fn to_f32(self) -> f32 {
        match self.value {
            Value::F(v) => v as f32,
            Value::I(v) => v as f32,
            Value::B(v) => v as u8 as f32,
        }
    }

    pub fn to_i64(self) -> i64 {
        match self.value {
            Value::F(v) => v as i64,
            Value::I(v) => v,
            Value::B(v) => v as i64,
        }
    }

    pub fn to_bool(self) -> bool {
        match self.value {
            Value::F(v) => v != 0.0,
            Value::I(v) => v != 0,
            Value::B(v) => v,
        }
    }

    /// The value as the compute type `C` (floats through f64, so an f32 compute type gets
    /// the value rounded once).
    pub fn get<C: super::elem::Compute>(self) -> C {
        match self.value {
            Value::F(v) => C::from_f64(v),
            Value::I(v) => C::from_i64(v),
            Value::B(v) => C::from_i64(v as i64),
        }
    }

    /// The value rounded to `dtype` and back (CANN converts a scalar to the compute dtype
    /// before the kernel sees it: an fp16 computation uses the fp16 value of the scalar).
    pub fn rounded_to(self, dtype: DType) -> Scalar {
        let value = match dtype {
            DType::F32 => Value::F(self.to_f64() as f32 as f64),
            DType::F16 => Value::F(f16::from_f64(self.to_f64()).to_f64()),
            DType::BF16 => Value::F(bf16::from_f64(self.to_f64()).to_f64()),
            DType::F64 => Value::F(self.to_f64()),
            DType::Bool => Value::B(self.to_bool()),
            d => {
                let v = self.to_i64();
                Value::I(match d {
                    DType::I8 => v as i8 as i64,
                    DType::U8 => v as u8 as i64,
                    DType::I16 => v as i16 as i64,
                    DType::U16 => v as u16 as i64,
                    DType::I32 => v as i32 as i64,
                    DType::U32 => v as u32 as i64,
                    _ => v,
                })
            }
        };
        Scalar { dtype, value }
    }
}
