//! Random numbers of the DSA engine (`aclrtRandomNumAsync`): Philox4x32-10 streams, as
//! CANN's runtime documents the engine ("Philox4_32_10支持…"), turned into dropout bitmasks,
//! uniform, normal and truncated normal values.
//!
//! The engine's exact bit stream is not published; this one is the standard Philox4x32-10
//! (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3") keyed by the 64-bit seed
//! (low word first) and started at the 128-bit counter read from `randomCounterAddr`
//! (little-endian 32-bit words). Values are reproducible for a seed and counter, and
//! independent of how the work is split.
//!
//! - Uniform floats are `min + (max - min) * u`, with `u` in [0, 1) from the top 24 bits of
//!   one 32-bit draw; uniform integers are `min + draw mod (max - min)` (64-bit types use two
//!   draws), `max > min` required.
//! - Normal values use Box-Muller on two draws; truncated normal values redraw until within
//!   two standard deviations of the mean.
//! - A dropout bitmask has one bit per value, least significant bit first, set (keep) with
//!   probability `1 - ratio`.

use half::{bf16, f16};

/// Data types of a random-number task (`aclDataType` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandType {
    F32,
    F16,
    Bf16,
    I32,
    I64,
    U32,
    U64,
}

impl RandType {
    /// From an `aclDataType`: ACL_FLOAT 0, ACL_FLOAT16 1, ACL_INT32 3, ACL_UINT32 8,
    /// ACL_INT64 9, ACL_UINT64 10, ACL_BF16 27.
    pub fn from_acl(t: i32) -> Option<RandType> {
        Some(match t {
            0 => RandType::F32,
            1 => RandType::F16,
            27 => RandType::Bf16,
            3 => RandType::I32,
            9 => RandType::I64,
            8 => RandType::U32,
            10 => RandType::U64,
            _ => return None,
        })
    }
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            RandType::F16 | RandType::Bf16 => 2,
            RandType::F32 | RandType::I32 | RandType::U32 => 4,
            RandType::I64 | RandType::U64 => 8,
        }
    }
    /// Whether the type is a floating-point one.
    pub fn is_float(self) -> bool {
        matches!(self, RandType::F32 | RandType::F16 | RandType::Bf16)
    }
    /// Read a value of this type from its little-endian bytes (zero-extended to 8) as f64
    /// (floats) or as i128 (integers).
    pub fn read_f64(self, b: [u8; 8]) -> f64 {
        match self {
            RandType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            RandType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
            RandType::Bf16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            _ => self.read_int(b) as f64,
        }
    }
    /// See [`RandType::read_f64`].
    pub fn read_int(self, b: [u8; 8]) -> i128 {
        match self {
            RandType::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i128,
            RandType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i128,
            RandType::I64 => i64::from_le_bytes(b) as i128,
            RandType::U64 => u64::from_le_bytes(b) as i128,
            _ => self.read_f64(b) as i128,
        }
    }
    fn write_f64(self, v: f64, out: &mut [u8]) {
        match self {
            RandType::F32 => out.copy_from_slice(&(v as f32).to_le_bytes()),
            RandType::F16 => out.copy_from_slice(&f16::from_f64(v).to_le_bytes()),
            RandType::Bf16 => out.copy_from_slice(&bf16::from_f64(v).to_le_bytes()),
            _ => self.write_int(v as i128, out),
        }
    }
    fn write_int(self, v: i128, out: &mut [u8]) {
        match self {
            RandType::I32 | RandType::U32 => out.copy_from_slice(&(v as u32).to_le_bytes()),
            RandType::I64 | RandType::U64 => out.copy_from_slice(&(v as u64).to_le_bytes()),
            _ => self.write_f64(v as f64, out),
        }
    }
}

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub enum Dist {
    /// Keep bits with probability `1 - ratio`.
    DropoutBitmask {
        ratio: f64,
    },
    /// Floats in [min, max).
    UniformFloat {
        min: f64,
        max: f64,
    },
    /// Integers in [min, max).
    UniformInt {
        min: i128,
        max: i128,
    },
    Normal {
        mean: f64,
        stddev: f64,
    },
    TruncatedNormal {
        mean: f64,
        stddev: f64,
    },
}

/// Philox4x32-10 generator over a counter.
pub struct Philox {
    key: [u32; 2],
    counter: [u32; 4],
    buf: [u32; 4],
    used: usize,
}

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

impl Philox {
    pub fn new(seed: u64, counter: [u32; 4]) -> Philox {
        Philox {
            key: [seed as u32, (seed >> 32) as u32],
            counter,
            buf: [0; 4],
            used: 4,
        }
    }

    fn block(&self) -> [u32; 4] {
        let mut c = self.counter;
        let mut k = self.key;
        for _ in 0..10 {
            let p0 = (M0 as u64) * (c[0] as u64);
            let p1 = (M1 as u64) * (c[2] as u64);
            c = [
                ((p1 >> 32) as u32) ^ c[1] ^ k[0],
                p1 as u32,
                ((p0 >> 32) as u32) ^ c[3] ^ k[1],
                p0 as u32,
            ];
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        c
    }

    fn bump(&mut self) {
        for w in self.counter.iter_mut() {
            *w = w.wrapping_add(1);
            if *w != 0 {
                break;
            }
        }
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.block();
            self.bump();
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }

    /// A float in [0, 1) with 24 random bits.
    fn unit(&mut self) -> f64 {
        (self.next_u32() >> 8) as f64 / (1u64 << 24) as f64
    }

    fn normal(&mut self) -> f64 {
        // Box-Muller; 1 - u keeps the logarithm finite.
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Fill `out` with `n` values (or `n` bits) of `dist` in type `ty`. `out` must hold
/// `result_bytes(dist, ty, n)` bytes.
pub fn generate(dist: Dist, ty: RandType, n: u64, seed: u64, counter: [u32; 4], out: &mut [u8]) {
    let mut g = Philox::new(seed, counter);
    let sz = ty.size();
    match dist {
        Dist::DropoutBitmask { ratio } => {
            out.iter_mut().for_each(|b| *b = 0);
            for i in 0..n as usize {
                if g.unit() >= ratio {
                    out[i / 8] |= 1 << (i % 8);
                }
            }
        }
        Dist::UniformFloat { min, max } => {
            for v in out.chunks_exact_mut(sz).take(n as usize) {
                ty.write_f64(min + (max - min) * g.unit(), v);
            }
        }
        Dist::UniformInt { min, max } => {
            let span = (max - min) as u128;
            for v in out.chunks_exact_mut(sz).take(n as usize) {
                let r = if sz == 8 {
                    ((g.next_u32() as u128) << 32) | g.next_u32() as u128
                } else {
                    g.next_u32() as u128
                };
                ty.write_int(min + (r % span) as i128, v);
            }
        }
        Dist::Normal { mean, stddev } => {
            for v in out.chunks_exact_mut(sz).take(n as usize) {
                ty.write_f64(mean + stddev * g.normal(), v);
            }
        }
        Dist::TruncatedNormal { mean, stddev } => {
            for v in out.chunks_exact_mut(sz).take(n as usize) {
                let x = loop {
                    let x = g.normal();
                    if x.abs() <= 2.0 {
                        break x;
                    }
                };
                ty.write_f64(mean + stddev * x, v);
            }
        }
    }
}

/// Bytes `generate` writes for `n` values of `ty`.
pub fn result_bytes(dist: Dist, ty: RandType, n: u64) -> u64 {
    match dist {
        Dist::DropoutBitmask { .. } => n.div_ceil(8),
        _ => n * ty.size() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answer() {
        // Random123's known-answer vectors for philox4x32_10.
        let g = Philox::new(0, [0; 4]);
        assert_eq!(
            g.block(),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        let g = Philox::new(0xffff_ffff_ffff_ffff, [0xffff_ffff; 4]);
        assert_eq!(
            g.block(),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
    }

    #[test]
    fn distributions_have_their_moments() {
        let n = 20000u64;
        let mut out = vec![0u8; (n * 4) as usize];
        generate(
            Dist::UniformFloat { min: 2.0, max: 4.0 },
            RandType::F32,
            n,
            7,
            [0; 4],
            &mut out,
        );
        let v: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert!(v.iter().all(|&x| (2.0..4.0).contains(&x)));
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        assert!((mean - 3.0).abs() < 0.02, "{mean}");
        generate(
            Dist::Normal {
                mean: 1.0,
                stddev: 2.0,
            },
            RandType::F32,
            n,
            7,
            [0; 4],
            &mut out,
        );
        let v: Vec<f64> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()) as f64)
            .collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(
            (mean - 1.0).abs() < 0.06 && (var.sqrt() - 2.0).abs() < 0.06,
            "{mean} {var}"
        );
        generate(
            Dist::TruncatedNormal {
                mean: 0.0,
                stddev: 1.0,
            },
            RandType::F32,
            n,
            7,
            [0; 4],
            &mut out,
        );
        assert!(out
            .chunks_exact(4)
            .all(|b| f32::from_le_bytes(b.try_into().unwrap()).abs() <= 2.0));
        let mut bits = vec![0u8; (n / 8) as usize];
        generate(
            Dist::DropoutBitmask { ratio: 0.25 },
            RandType::F32,
            n,
            7,
            [0; 4],
            &mut bits,
        );
        let kept: u32 = bits.iter().map(|b| b.count_ones()).sum();
        assert!((kept as f64 / n as f64 - 0.75).abs() < 0.02, "{kept}");
        let mut ints = vec![0u8; (n * 8) as usize];
        generate(
            Dist::UniformInt { min: -5, max: 5 },
            RandType::I64,
            n,
            7,
            [0; 4],
            &mut ints,
        );
        assert!(ints
            .chunks_exact(8)
            .all(|b| (-5..5).contains(&i64::from_le_bytes(b.try_into().unwrap()))));
        // Same seed and counter: same values; another counter: others.
        let mut a = vec![0u8; 64];
        let mut b = vec![0u8; 64];
        generate(
            Dist::UniformFloat { min: 0.0, max: 1.0 },
            RandType::F16,
            32,
            9,
            [1, 0, 0, 0],
            &mut a,
        );
        generate(
            Dist::UniformFloat { min: 0.0, max: 1.0 },
            RandType::F16,
            32,
            9,
            [1, 0, 0, 0],
            &mut b,
        );
        assert_eq!(a, b);
        generate(
            Dist::UniformFloat { min: 0.0, max: 1.0 },
            RandType::F16,
            32,
            9,
            [2, 0, 0, 0],
            &mut b,
        );
        assert_ne!(a, b);
    }
}
