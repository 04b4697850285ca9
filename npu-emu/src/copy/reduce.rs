//! SDMA inline reduce (`aclrtReduceAsync`): `dst[i] = dst[i] op src[i]` over `count` bytes
//! of one data type, as the DMA engine folds the source into the destination while copying.
//! Both ranges are device memory of one device; floating-point types are reduced in `f32`
//! (fp16/bf16 rounded back to nearest even); integers wrap.

use super::translate;
use crate::memory::Space;
use crate::{Error, Result};
use half::{bf16, f16};

/// The reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

/// Element types of the reduce engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceType {
    I8,
    I16,
    I32,
    F16,
    Bf16,
    F32,
}

impl ReduceType {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            ReduceType::I8 => 1,
            ReduceType::I16 | ReduceType::F16 | ReduceType::Bf16 => 2,
            ReduceType::I32 | ReduceType::F32 => 4,
        }
    }
}

fn fold<T: Copy + PartialOrd>(op: ReduceOp, a: T, b: T, add: impl Fn(T, T) -> T) -> T {
    match op {
        ReduceOp::Sum => add(a, b),
        ReduceOp::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
        ReduceOp::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
    }
}

/// Reduce `src` into `dst` (byte slices of whole elements of `ty`).
pub fn reduce_slices(op: ReduceOp, ty: ReduceType, dst: &mut [u8], src: &[u8]) {
    let n = ty.size() as usize;
    for (d, s) in dst.chunks_exact_mut(n).zip(src.chunks_exact(n)) {
        match ty {
            ReduceType::I8 => {
                let r = fold(op, d[0] as i8, s[0] as i8, i8::wrapping_add);
                d[0] = r as u8;
            }
            ReduceType::I16 => {
                let a = i16::from_le_bytes([d[0], d[1]]);
                let b = i16::from_le_bytes([s[0], s[1]]);
                d.copy_from_slice(&fold(op, a, b, i16::wrapping_add).to_le_bytes());
            }
            ReduceType::I32 => {
                let a = i32::from_le_bytes([d[0], d[1], d[2], d[3]]);
                let b = i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                d.copy_from_slice(&fold(op, a, b, i32::wrapping_add).to_le_bytes());
            }
            ReduceType::F32 => {
                let a = f32::from_le_bytes([d[0], d[1], d[2], d[3]]);
                let b = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                d.copy_from_slice(&fold(op, a, b, |x, y| x + y).to_le_bytes());
            }
            ReduceType::F16 => {
                let a = f16::from_le_bytes([d[0], d[1]]).to_f32();
                let b = f16::from_le_bytes([s[0], s[1]]).to_f32();
                let r = f16::from_f32(fold(op, a, b, |x, y| x + y));
                d.copy_from_slice(&r.to_le_bytes());
            }
            ReduceType::Bf16 => {
                let a = bf16::from_le_bytes([d[0], d[1]]).to_f32();
                let b = bf16::from_le_bytes([s[0], s[1]]).to_f32();
                let r = bf16::from_f32(fold(op, a, b, |x, y| x + y));
                d.copy_from_slice(&r.to_le_bytes());
            }
        }
    }
}

/// Check a reduce of `count` bytes from `src` into `dst` on physical device `device`: both
/// device memory of that device, `count` a whole number of elements, ranges not overlapping.
pub fn check<S: Space + ?Sized>(
    space: &S,
    dst: u64,
    src: u64,
    count: u64,
    ty: ReduceType,
    device: u32,
) -> Result<()> {
    if !count.is_multiple_of(ty.size()) {
        return Err(Error::new(
            crate::codes::ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "count {count} is not a whole number of {}-byte {ty:?} elements",
                ty.size()
            ),
        ));
    }
    for (addr, what) in [(dst, "dst"), (src, "src")] {
        let p = space.node().phys(addr, count, what)?;
        if p.device != device {
            return Err(Error::new(
                crate::codes::ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "{what} {addr:#x} is memory of device {}, not of the stream's device {device}: dst and src must be on the stream's device",
                    p.device
                ),
            ));
        }
    }
    if dst < src + count && src < dst + count {
        return Err(Error::invalid(format!(
            "dst {dst:#x} and src {src:#x} overlap over {count} bytes"
        )));
    }
    Ok(())
}

/// Run the reduce (re-checking both ranges).
pub fn run<S: Space + ?Sized>(
    space: &S,
    op: ReduceOp,
    ty: ReduceType,
    dst: u64,
    src: u64,
    count: u64,
) -> Result<()> {
    let d = translate(space, dst, count, true, "dst")?;
    let s = translate(space, src, count, true, "src")?;
    // SAFETY: both ranges were just checked to lie in live device allocations and do not
    // overlap (checked at enqueue; allocations do not move).
    let (d, s) = unsafe {
        (
            std::slice::from_raw_parts_mut(d, count as usize),
            std::slice::from_raw_parts(s as *const u8, count as usize),
        )
    };
    reduce_slices(op, ty, d, s);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_each_type() {
        let mut d: Vec<u8> = [1.5f32, -2.0, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let s: Vec<u8> = [0.5f32, 5.0, -1.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        reduce_slices(ReduceOp::Sum, ReduceType::F32, &mut d, &s);
        let r: Vec<f32> = d
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(r, [2.0, 3.0, 2.0]);
        let mut d = vec![5u8, 250];
        reduce_slices(ReduceOp::Max, ReduceType::I8, &mut d, &[7, 3]);
        assert_eq!(d, [7, 3]); // 250 is -6 as i8
        let mut d: Vec<u8> = [f16::from_f32(1.0), f16::from_f32(4.0)]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let s: Vec<u8> = [f16::from_f32(2.0), f16::from_f32(-4.0)]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        reduce_slices(ReduceOp::Min, ReduceType::F16, &mut d, &s);
        assert_eq!(f16::from_le_bytes([d[0], d[1]]).to_f32(), 1.0);
        assert_eq!(f16::from_le_bytes([d[2], d[3]]).to_f32(), -4.0);
        let mut d = i32::MAX.to_le_bytes().to_vec();
        reduce_slices(ReduceOp::Sum, ReduceType::I32, &mut d, &1i32.to_le_bytes());
        assert_eq!(i32::from_le_bytes(d.try_into().unwrap()), i32::MIN);
    }
}
