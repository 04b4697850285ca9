//! Reading and writing elements: the compute types ([`Compute`]: f32, f64, i64, bool) and
//! the chunk loaders/storers that convert any stored dtype to a compute type and back.
//!
//! Conversions follow C/PyTorch casts: integer → float rounds to nearest; float → integer
//! truncates toward zero (saturating, NaN → 0) and then wraps to the stored width; anything
//! → bool is `!= 0`; f32/f64 → f16/bf16 round to nearest even once (`half`).

use super::dtype::DType;
use half::{bf16, f16};

/// A type the kernels compute in.
pub trait Compute: Copy + Default + Send + Sync + PartialOrd + 'static {
    /// The stored dtype with exactly this representation (direct slices skip conversion).
    const DT: DType;
    fn from_f32(v: f32) -> Self;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_bool(v: bool) -> Self;
    fn to_f32(self) -> f32;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn to_bool(self) -> bool;
    /// f16 bits of the value, rounded once.
    fn to_f16(self) -> u16 {
        f16::from_f32(self.to_f32()).to_bits()
    }
    /// bf16 bits of the value, rounded once.
    fn to_bf16(self) -> u16 {
        bf16::from_f32(self.to_f32()).to_bits()
    }
}

impl Compute for f32 {
    const DT: DType = DType::F32;
    fn from_f32(v: f32) -> Self {
        v
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn from_i64(v: i64) -> Self {
        v as f32
    }
    fn from_bool(v: bool) -> Self {
        v as u8 as f32
    }
    fn to_f32(self) -> f32 {
        self
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn to_bool(self) -> bool {
        self != 0.0
    }
}

impl Compute for f64 {
    const DT: DType = DType::F64;
    fn from_f32(v: f32) -> Self {
        v as f64
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    fn from_bool(v: bool) -> Self {
        v as u8 as f64
    }
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn to_bool(self) -> bool {
        self != 0.0
    }
    fn to_f16(self) -> u16 {
        f16::from_f64(self).to_bits()
    }
    fn to_bf16(self) -> u16 {
        bf16::from_f64(self).to_bits()
    }
}

impl Compute for i64 {
    const DT: DType = DType::I64;
    fn from_f32(v: f32) -> Self {
        v as i64
    }
    fn from_f64(v: f64) -> Self {
        v as i64
    }
    fn from_i64(v: i64) -> Self {
        v
    }
    fn from_bool(v: bool) -> Self {
        v as i64
    }
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn to_i64(self) -> i64 {
        self
    }
    fn to_bool(self) -> bool {
        self != 0
    }
}

impl Compute for bool {
    const DT: DType = DType::Bool;
    fn from_f32(v: f32) -> Self {
        v != 0.0
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_bool(v: bool) -> Self {
        v
    }
    fn to_f32(self) -> f32 {
        self as u8 as f32
    }
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn to_bool(self) -> bool {
        self
    }
}

/// Read `n` elements of `dt` at `p`, `stride` bytes apart, converted into `buf[..n]`.
///
/// # Safety
/// Every `p + i*stride` (i < n) is readable for one element of `dt`.
pub unsafe fn load<C: Compute>(dt: DType, p: *const u8, stride: isize, n: usize, buf: &mut [C]) {
    let buf = &mut buf[..n];
    macro_rules! go {
        ($t:ty, $conv:expr) => {{
            if stride == std::mem::size_of::<$t>() as isize {
                let mut q = p as *const $t;
                for b in buf.iter_mut() {
                    // SAFETY: inside the range the caller vouches for.
                    *b = $conv(unsafe { q.read_unaligned() });
                    // SAFETY: the next element, still inside the caller's range (or one past
                    // its end after the last).
                    q = unsafe { q.add(1) };
                }
            } else {
                let mut q = p;
                for b in buf.iter_mut() {
                    // SAFETY: inside the range the caller vouches for.
                    *b = $conv(unsafe { (q as *const $t).read_unaligned() });
                    q = q.wrapping_offset(stride);
                }
            }
        }};
    }
    match dt {
        DType::F32 => go!(f32, C::from_f32),
        DType::F64 => go!(f64, C::from_f64),
        DType::F16 => go!(u16, |b| C::from_f32(f16::from_bits(b).to_f32())),
        DType::BF16 => go!(u16, |b| C::from_f32(bf16::from_bits(b).to_f32())),
        DType::I8 => go!(i8, |v: i8| C::from_i64(v as i64)),
        DType::U8 => go!(u8, |v: u8| C::from_i64(v as i64)),
        DType::I16 => go!(i16, |v: i16| C::from_i64(v as i64)),
        DType::U16 => go!(u16, |v: u16| C::from_i64(v as i64)),
        DType::I32 => go!(i32, |v: i32| C::from_i64(v as i64)),
        DType::U32 => go!(u32, |v: u32| C::from_i64(v as i64)),
        DType::I64 => go!(i64, C::from_i64),
        DType::U64 => go!(u64, |v: u64| C::from_i64(v as i64)),
        DType::Bool => go!(u8, |v: u8| C::from_bool(v != 0)),
    }
}

/// Write `buf` as elements of `dt` at `p`, `stride` bytes apart.
///
/// # Safety
/// Every `p + i*stride` (i < buf.len()) is writable for one element of `dt`.
pub unsafe fn store<C: Compute>(dt: DType, p: *mut u8, stride: isize, buf: &[C]) {
    macro_rules! go {
        ($t:ty, $conv:expr) => {{
            let mut q = p;
            for &b in buf.iter() {
                // SAFETY: inside the range the caller vouches for.
                unsafe { (q as *mut $t).write_unaligned($conv(b)) };
                q = q.wrapping_offset(stride);
            }
        }};
    }
    match dt {
        DType::F32 => go!(f32, |v: C| v.to_f32()),
        DType::F64 => go!(f64, |v: C| v.to_f64()),
        DType::F16 => go!(u16, |v: C| v.to_f16()),
        DType::BF16 => go!(u16, |v: C| v.to_bf16()),
        DType::I8 => go!(i8, |v: C| v.to_i64() as i8),
        DType::U8 => go!(u8, |v: C| v.to_i64() as u8),
        DType::I16 => go!(i16, |v: C| v.to_i64() as i16),
        DType::U16 => go!(u16, |v: C| v.to_i64() as u16),
        DType::I32 => go!(i32, |v: C| v.to_i64() as i32),
        DType::U32 => go!(u32, |v: C| v.to_i64() as u32),
        DType::I64 => go!(i64, |v: C| v.to_i64()),
        DType::U64 => go!(u64, |v: C| v.to_i64() as u64),
        DType::Bool => go!(u8, |v: C| v.to_bool() as u8),
    }
}

/// One element of `dt` at `p` as f64 (slow path helpers: indices, single values).
///
/// # Safety
/// `p` is readable for one element of `dt`.
pub unsafe fn read_f64(dt: DType, p: *const u8) -> f64 {
    let mut b = [0f64; 1];
    // SAFETY: forwarded.
    unsafe { load(dt, p, 0, 1, &mut b) };
    b[0]
}

/// One element of `dt` at `p` as i64.
///
/// # Safety
/// `p` is readable for one element of `dt`.
pub unsafe fn read_i64(dt: DType, p: *const u8) -> i64 {
    let mut b = [0i64; 1];
    // SAFETY: forwarded.
    unsafe { load(dt, p, 0, 1, &mut b) };
    b[0]
}

/// Write `v` as one element of `dt` at `p`.
///
/// # Safety
/// `p` is writable for one element of `dt`.
pub unsafe fn write<C: Compute>(dt: DType, p: *mut u8, v: C) {
    // SAFETY: forwarded.
    unsafe { store(dt, p, 0, &[v]) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_once() {
        // 1 + 2^-11 + 2^-24 rounds up to the next f16 only when rounded once from f64.
        let x: f64 = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        assert_eq!(x.to_f16(), f16::from_f64(x).to_bits());
        let mut out = [0u16; 1];
        // SAFETY: one f16 slot.
        unsafe { store(DType::F16, out.as_mut_ptr() as *mut u8, 2, &[x]) };
        assert_eq!(out[0], f16::from_f64(x).to_bits());
        // float -> int truncates, then wraps
        let mut o8 = [0i8; 2];
        // SAFETY: two i8 slots.
        unsafe { store(DType::I8, o8.as_mut_ptr() as *mut u8, 1, &[-3.7f32, 300.0]) };
        assert_eq!(o8, [-3, 300i64 as i8]);
        let src = [1u8, 0, 7];
        let mut b = [0f32; 3];
        // SAFETY: three readable bytes.
        unsafe { load(DType::Bool, src.as_ptr(), 1, 3, &mut b) };
        assert_eq!(b, [1.0, 0.0, 1.0]);
    }
}
