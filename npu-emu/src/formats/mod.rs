//! Private data formats (abi.md §5): NC1HWC0, NC1HWC0_C04, NDC1HWC0, FRACTAL_Z (with groups),
//! FRACTAL_Z_3D, FRACTAL_NZ and FRACTAL_NZ_C0_{2,4,8,16,32}, forward (plain → private) and
//! inverse (private → plain).
//!
//! The entry points (tensor descriptors, `TransData`, `aclnnNpuFormatCast`) live in the C ABI
//! crates; this module holds the shape rules and the data movement:
//! - [`format_name`] / [`format_from_name`], [`dtype_size`], [`c0`]: names and the C0 rule (§5.1);
//! - [`storage_shape`]: the stored shape of a logical tensor in a private format (§5.2);
//! - [`plan`] + [`Plan::run`]: one conversion, checked once, then run as tiled copies;
//!   [`pair_supported`]: whether a conversion between two formats exists at all.
//!
//! Decisions (where CANN's own helpers disagree, abi.md §5):
//! - C0 ([`C0Rule::Ge`]): an explicit `_C0_x` format or the packed C0 bits of the format value
//!   win; otherwise 32 for INT8/UINT8 and 16 for every other dtype (the `[DtypeMKN]` K0 column:
//!   FLOAT, BF16, BOOL and the 8-bit float types included). [`C0Rule::Aclnn`] uses
//!   32 / sizeof(dtype) for FRACTAL_NZ, NDC1HWC0 and FRACTAL_Z_3D (fp32 → 8), as
//!   `aclnnNpuFormatCast` does, and the GE rule elsewhere.
//! - 1-D FRACTAL_NZ: `[N]` is stored as the column `[N, 1]` → `[1, ceil(N/16), 16, C0]`, the rule
//!   of GE's shape helper (transformer) and torch_npu, so storage shapes agree with
//!   `aclTransTensorDescFormat`.
//! - FRACTAL_Z with `groups > 1`: the origin is the weight `[Cout, Cin/groups, H, W]` (NCHW; HWCN
//!   and NHWC likewise) and the layout is GE's `TransFormatHwcnToFzWithGroups`; the group count
//!   comes from `groups` or from the sub-format bits of the format value. FRACTAL_Z_3D with
//!   groups uses the same layout with D inside the group block (`[g_dim, D, C1, H, W]` rows).
//! - FRACTAL_Z_C04 (13, GE-only, TransData `NCHW -> FRACTAL_Z_C04`): C ≤ 4 padded to 4, then
//!   `K = H·W·4` (k = (h·W + w)·4 + c) stored as `[ceil(K/C0), ceil(N/16), 16, C0]` with C0 by the
//!   dtype rule (abi.md §5.2).
//! - A 2-D ND origin of FRACTAL_Z is the matrix `[K, N]` (`[ceil(K/C0), N1, 16, C0]`); a 4-D ND
//!   origin is read as NCHW.
//! - Sub-byte dtypes (INT4, UINT1, FLOAT4/6 …) and STRING are refused.
//!
//! Supported pairs (each both ways): NCHW/NHWC ↔ NC1HWC0 and NC1HWC0_C04; NCDHW/NDHWC ↔
//! NDC1HWC0; NCHW/NHWC/HWCN/ND ↔ FRACTAL_Z; NCHW ↔ FRACTAL_Z_C04; NCDHW/NDHWC/DHWCN ↔
//! FRACTAL_Z_3D; any plain format of rank ≥ 1 ↔ FRACTAL_NZ(_C0_x); equal formats copy.
//!
//! Speed (`kernels`): every conversion is a walk of independent units emitting three kinds of
//! moves — runs of rows (`copy_nonoverlapping`, fixed sizes for C0-wide runs), transposed blocks
//! (SSE2 register transposes of 16×16 bytes, 8×8 u16 and 4×4 u32 inside 64×64 super-tiles) and
//! zero fills. Destinations of 1 MiB and more are split across `available_parallelism` threads;
//! from 16 MiB, moves whose destination is contiguous use non-temporal stores. Measure with
//! `cargo run --release -p npu-emu --example formats_bench [MiB] [reps] [fp16|fp32|int8]`.

mod fractal_nz;
mod fractal_z;
mod kernels;
mod nc1hwc0;
mod shape;
#[cfg(test)]
mod tests;

use std::fmt;

pub use shape::storage_shape;

// ---- aclFormat values (abi.md §1.4; GE `Format` numbers) ----
pub const FORMAT_UNDEFINED: i32 = -1;
pub const FORMAT_NCHW: i32 = 0;
pub const FORMAT_NHWC: i32 = 1;
pub const FORMAT_ND: i32 = 2;
pub const FORMAT_NC1HWC0: i32 = 3;
pub const FORMAT_FRACTAL_Z: i32 = 4;
pub const FORMAT_NC1HWC0_C04: i32 = 12;
pub const FORMAT_FRACTAL_Z_C04: i32 = 13;
pub const FORMAT_CHWN: i32 = 14;
pub const FORMAT_HWCN: i32 = 16;
pub const FORMAT_NDHWC: i32 = 27;
pub const FORMAT_FRACTAL_NZ: i32 = 29;
pub const FORMAT_NCDHW: i32 = 30;
pub const FORMAT_DHWCN: i32 = 31;
pub const FORMAT_NDC1HWC0: i32 = 32;
pub const FORMAT_FRACTAL_Z_3D: i32 = 33;
pub const FORMAT_CN: i32 = 34;
pub const FORMAT_NC: i32 = 35;
pub const FORMAT_DHWNC: i32 = 36;
pub const FORMAT_NCL: i32 = 47;
pub const FORMAT_FRACTAL_NZ_C0_16: i32 = 50;
pub const FORMAT_FRACTAL_NZ_C0_32: i32 = 51;
pub const FORMAT_FRACTAL_NZ_C0_2: i32 = 52;
pub const FORMAT_FRACTAL_NZ_C0_4: i32 = 53;
pub const FORMAT_FRACTAL_NZ_C0_8: i32 = 54;

// ---- aclDataType values (abi.md §1.4) ----
pub const DT_FLOAT: i32 = 0;
pub const DT_FLOAT16: i32 = 1;
pub const DT_INT8: i32 = 2;
pub const DT_INT32: i32 = 3;
pub const DT_UINT8: i32 = 4;
pub const DT_INT16: i32 = 6;
pub const DT_UINT16: i32 = 7;
pub const DT_UINT32: i32 = 8;
pub const DT_INT64: i32 = 9;
pub const DT_UINT64: i32 = 10;
pub const DT_DOUBLE: i32 = 11;
pub const DT_BOOL: i32 = 12;
pub const DT_STRING: i32 = 13;
pub const DT_COMPLEX64: i32 = 16;
pub const DT_COMPLEX128: i32 = 17;
pub const DT_BF16: i32 = 27;
pub const DT_INT4: i32 = 29;
pub const DT_UINT1: i32 = 30;
pub const DT_COMPLEX32: i32 = 33;
pub const DT_HIFLOAT8: i32 = 34;
pub const DT_FLOAT8_E5M2: i32 = 35;
pub const DT_FLOAT8_E4M3FN: i32 = 36;
pub const DT_FLOAT8_E8M0: i32 = 37;
pub const DT_FLOAT6_E3M2: i32 = 38;
pub const DT_FLOAT6_E2M3: i32 = 39;
pub const DT_FLOAT4_E2M1: i32 = 40;
pub const DT_FLOAT4_E1M2: i32 = 41;

/// Which C0 rule applies (abi.md §5.1). `Ge`: GE/transformer rule (explicit `_C0_x` formats and
/// packed C0 bits win; else K0 from `[DtypeMKN]`: 16 for fp16/fp32/bf16/int32…, 32 for
/// int8/uint8). `Aclnn`: aclnnNpuFormatCast's 32-byte rule (C0 = 32 / sizeof(dtype): fp32 → 8)
/// for FRACTAL_NZ, NDC1HWC0 and FRACTAL_Z_3D; the GE rule for the other formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum C0Rule {
    Ge,
    Aclnn,
}

/// A failed check; `message` is a full sentence naming the format(s), dtype and shape at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub message: String,
}

impl FormatError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        FormatError {
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::formats::FormatError::new(format!($($arg)*)))
    };
}
pub(crate) use fail;

/// The primary format of a (possibly packed) format value: bits 0–7 (abi.md §1.4).
pub fn primary_format(format: i32) -> i32 {
    if format < 0 {
        format
    } else {
        format & 0xFF
    }
}

/// The sub-format field of a packed format value (bits 8–23; the group count of FRACTAL_Z).
pub fn sub_format(format: i32) -> i64 {
    if format < 0 {
        0
    } else {
        i64::from((format >> 8) & 0xFFFF)
    }
}

/// The C0 carried in the packed "C0 format" bits 24–27 (C0 = 2^(c−1)), if any.
pub fn packed_c0(format: i32) -> Option<usize> {
    if format < 0 {
        return None;
    }
    let c = (format >> 24) & 0xF;
    if c == 0 {
        None
    } else {
        Some(1usize << (c - 1))
    }
}

const FORMAT_NAMES: &[(i32, &str)] = &[
    (0, "NCHW"),
    (1, "NHWC"),
    (2, "ND"),
    (3, "NC1HWC0"),
    (4, "FRACTAL_Z"),
    (5, "NC1C0HWPAD"),
    (6, "NHWC1C0"),
    (7, "FSR_NCHW"),
    (8, "FRACTAL_DECONV"),
    (9, "C1HWNC0"),
    (10, "FRACTAL_DECONV_TRANSPOSE"),
    (11, "FRACTAL_DECONV_SP_STRIDE_TRANS"),
    (12, "NC1HWC0_C04"),
    (13, "FRACTAL_Z_C04"),
    (14, "CHWN"),
    (15, "DECONV_SP_STRIDE8_TRANS"),
    (16, "HWCN"),
    (17, "NC1KHKWHWC0"),
    (18, "BN_WEIGHT"),
    (19, "FILTER_HWCK"),
    (20, "LOOKUP_LOOKUPS"),
    (21, "LOOKUP_KEYS"),
    (22, "LOOKUP_VALUE"),
    (23, "LOOKUP_OUTPUT"),
    (24, "LOOKUP_HITS"),
    (25, "C1HWNCoC0"),
    (26, "MD"),
    (27, "NDHWC"),
    (28, "FRACTAL_ZZ"),
    (29, "FRACTAL_NZ"),
    (30, "NCDHW"),
    (31, "DHWCN"),
    (32, "NDC1HWC0"),
    (33, "FRACTAL_Z_3D"),
    (34, "CN"),
    (35, "NC"),
    (36, "DHWNC"),
    (37, "FRACTAL_Z_3D_TRANSPOSE"),
    (38, "FRACTAL_ZN_LSTM"),
    (39, "FRACTAL_Z_G"),
    (40, "RESERVED"),
    (41, "ALL"),
    (42, "NULL"),
    (43, "ND_RNN_BIAS"),
    (44, "FRACTAL_ZN_RNN"),
    (45, "NYUV"),
    (46, "NYUV_A"),
    (47, "NCL"),
    (48, "FRACTAL_Z_WINO"),
    (49, "C1HWC0"),
    (50, "FRACTAL_NZ_C0_16"),
    (51, "FRACTAL_NZ_C0_32"),
    (52, "FRACTAL_NZ_C0_2"),
    (53, "FRACTAL_NZ_C0_4"),
    (54, "FRACTAL_NZ_C0_8"),
];

/// aclFormat value ↔ CANN's name ("NCHW", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ", "ND", …), as the
/// TransData attrs `src_format`/`dst_format` spell them. A packed value names its primary format.
pub fn format_name(format: i32) -> Option<&'static str> {
    let p = primary_format(format);
    FORMAT_NAMES
        .iter()
        .find(|(v, _)| *v == p)
        .map(|(_, name)| *name)
}

/// The aclFormat value of a format name (exact GE spelling, case-insensitive; "FRACTAL_Zn" and
/// "FRACTAL_ZN" are accepted for FRACTAL_Z as TBE spells it, "FORMAT_" prefixes are ignored).
pub fn format_from_name(name: &str) -> Option<i32> {
    let n = name.trim();
    let n = n
        .strip_prefix("ACL_FORMAT_")
        .or_else(|| n.strip_prefix("FORMAT_"))
        .unwrap_or(n);
    if n.eq_ignore_ascii_case("FRACTAL_Zn") {
        return Some(FORMAT_FRACTAL_Z);
    }
    FORMAT_NAMES
        .iter()
        .find(|(_, s)| s.eq_ignore_ascii_case(n))
        .map(|(v, _)| *v)
}

/// A format value for messages: its name, plus the packed fields when present.
pub(crate) fn fmt_format(format: i32) -> String {
    let base = match format_name(format) {
        Some(n) => n.to_string(),
        None => format!("format {}", primary_format(format)),
    };
    let mut extra = Vec::new();
    if sub_format(format) != 0 {
        extra.push(format!("sub-format {}", sub_format(format)));
    }
    if let Some(c0) = packed_c0(format) {
        extra.push(format!("C0 {c0}"));
    }
    if extra.is_empty() {
        base
    } else {
        format!("{base} ({}, value {format:#x})", extra.join(", "))
    }
}

/// ACL name of a dtype, for messages.
pub fn dtype_name(dtype: i32) -> String {
    let s = match dtype {
        DT_FLOAT => "ACL_FLOAT",
        DT_FLOAT16 => "ACL_FLOAT16",
        DT_INT8 => "ACL_INT8",
        DT_INT32 => "ACL_INT32",
        DT_UINT8 => "ACL_UINT8",
        DT_INT16 => "ACL_INT16",
        DT_UINT16 => "ACL_UINT16",
        DT_UINT32 => "ACL_UINT32",
        DT_INT64 => "ACL_INT64",
        DT_UINT64 => "ACL_UINT64",
        DT_DOUBLE => "ACL_DOUBLE",
        DT_BOOL => "ACL_BOOL",
        DT_STRING => "ACL_STRING",
        DT_COMPLEX64 => "ACL_COMPLEX64",
        DT_COMPLEX128 => "ACL_COMPLEX128",
        DT_BF16 => "ACL_BF16",
        DT_INT4 => "ACL_INT4",
        DT_UINT1 => "ACL_UINT1",
        DT_COMPLEX32 => "ACL_COMPLEX32",
        DT_HIFLOAT8 => "ACL_HIFLOAT8",
        DT_FLOAT8_E5M2 => "ACL_FLOAT8_E5M2",
        DT_FLOAT8_E4M3FN => "ACL_FLOAT8_E4M3FN",
        DT_FLOAT8_E8M0 => "ACL_FLOAT8_E8M0",
        DT_FLOAT6_E3M2 => "ACL_FLOAT6_E3M2",
        DT_FLOAT6_E2M3 => "ACL_FLOAT6_E2M3",
        DT_FLOAT4_E2M1 => "ACL_FLOAT4_E2M1",
        DT_FLOAT4_E1M2 => "ACL_FLOAT4_E1M2",
        -1 => "ACL_DT_UNDEFINED",
        _ => return format!("dtype {dtype}"),
    };
    s.to_string()
}

/// Bytes per element of an aclDataType (None for sub-byte, STRING or unknown types).
pub fn dtype_size(dtype: i32) -> Option<usize> {
    Some(match dtype {
        DT_INT8 | DT_UINT8 | DT_BOOL | DT_HIFLOAT8 | DT_FLOAT8_E5M2 | DT_FLOAT8_E4M3FN
        | DT_FLOAT8_E8M0 => 1,
        DT_FLOAT16 | DT_BF16 | DT_INT16 | DT_UINT16 => 2,
        DT_FLOAT | DT_INT32 | DT_UINT32 | DT_COMPLEX32 => 4,
        DT_INT64 | DT_UINT64 | DT_DOUBLE | DT_COMPLEX64 => 8,
        DT_COMPLEX128 => 16,
        _ => return None,
    })
}

/// The element size of `dtype`, or an error naming why it cannot be converted.
pub(crate) fn element_size(dtype: i32, what: &str) -> Result<usize, FormatError> {
    match dtype_size(dtype) {
        Some(s) => Ok(s),
        None => match dtype {
            DT_INT4 | DT_UINT1 | DT_FLOAT6_E3M2 | DT_FLOAT6_E2M3 | DT_FLOAT4_E2M1
            | DT_FLOAT4_E1M2 | 31 | 32 => fail!(
                "{what}: dtype {} is a sub-byte type; private format conversion supports \
                 whole-byte element types only",
                dtype_name(dtype)
            ),
            _ => fail!(
                "{what}: dtype {} has no element size usable for a format conversion",
                dtype_name(dtype)
            ),
        },
    }
}

/// True for the formats whose C0 follows the Aclnn 32-byte rule. The aclnnNpuFormatCast
/// reference gives one rule, C0 = 32 B / element size, for every private format it produces
/// on A2/A3: FRACTAL_NZ, NDC1HWC0 and FRACTAL_Z_3D, and (in its newer pair table)
/// NC1HWC0 and FRACTAL_Z.
fn aclnn_32_byte_format(p: i32) -> bool {
    matches!(
        p,
        FORMAT_FRACTAL_NZ
            | FORMAT_NDC1HWC0
            | FORMAT_FRACTAL_Z_3D
            | FORMAT_NC1HWC0
            | FORMAT_FRACTAL_Z
    )
}

/// C0 for (dtype, format) under `rule` (abi.md §5.1).
pub fn c0(dtype: i32, format: i32, rule: C0Rule) -> Result<usize, FormatError> {
    let size = element_size(dtype, &format!("C0 of {}", fmt_format(format)))?;
    let p = primary_format(format);
    match p {
        FORMAT_NC1HWC0_C04 | FORMAT_FRACTAL_NZ_C0_4 => return Ok(4),
        FORMAT_FRACTAL_NZ_C0_2 => return Ok(2),
        FORMAT_FRACTAL_NZ_C0_8 => return Ok(8),
        FORMAT_FRACTAL_NZ_C0_16 => return Ok(16),
        FORMAT_FRACTAL_NZ_C0_32 => return Ok(32),
        _ => {}
    }
    if let Some(c) = packed_c0(format) {
        if c > 256 {
            fail!(
                "C0 of {}: the packed C0 {c} exceeds 256, the largest C0 of any dtype",
                fmt_format(format)
            );
        }
        return Ok(c);
    }
    if rule == C0Rule::Aclnn && aclnn_32_byte_format(p) {
        return Ok((32 / size).max(1));
    }
    Ok(match dtype {
        DT_INT8 | DT_UINT8 => 32,
        _ => 16,
    })
}

/// One data conversion. Forward (plain → private): `dst_shape` may be None (derived) or Some
/// (checked). Inverse (private → plain): `dst_shape` is required (the logical shape; the private
/// shape loses C/N/H/W padding), and `src_shape` is checked against
/// `storage_shape(dst_format, dst_shape, src_format, …)`.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub src_format: i32,
    pub src_shape: &'a [i64],
    pub dst_format: i32,
    pub dst_shape: Option<&'a [i64]>,
    pub dtype: i32,
    pub groups: i64,
    pub rule: C0Rule,
}

/// A checked conversion, ready to run on any buffers of the right size.
#[derive(Clone, Debug)]
pub struct Plan {
    src_bytes: usize,
    dst_bytes: usize,
    dst_shape: Vec<i64>,
    c0: usize,
    elem: usize,
    /// plain → private (true) or private → plain.
    forward: bool,
    /// Zero the whole destination first (layouts whose padding is scattered).
    prefill: bool,
    geometry: Geometry,
    what: String,
}

/// The index space of one conversion (the private layout and its plain origin).
#[derive(Clone, Debug)]
pub(crate) enum Geometry {
    /// Same layout on both sides: one copy.
    Copy,
    C1C0(nc1hwc0::C1C0),
    Fz(fractal_z::Fz),
    FzC04(fractal_z::FzC04),
    Nz(fractal_nz::Nz),
}

/// Check a request and compute everything a conversion needs.
pub fn plan(req: &Request) -> Result<Plan, FormatError> {
    shape::plan(req)
}

/// A small valid logical shape for a plain format, to ask `formats` whether a conversion
/// between two formats exists at all (so failures can be told apart: no such conversion
/// versus a shape that does not fit).
fn canonical_shape(format: i32, groups: i64) -> Option<Vec<i64>> {
    let g = groups.max(1);
    Some(match format_name(format)? {
        "NCHW" | "NHWC" | "HWCN" | "CHWN" => {
            let mut s = vec![1, 1, 1, 1];
            // N (output channels) must split into the groups.
            let n = match format_name(format)? {
                "NCHW" | "NHWC" => 0,
                "HWCN" => 3,
                _ => 3,
            };
            s[n] = g;
            s
        }
        "NCDHW" | "NDHWC" | "DHWCN" => {
            let mut s = vec![1, 1, 1, 1, 1];
            let n = if format_name(format)? == "DHWCN" {
                4
            } else {
                0
            };
            s[n] = g;
            s
        }
        "ND" | "NC" | "NCL" => vec![1, 1],
        _ => return None,
    })
}

/// Whether a conversion between formats `src` and `dst` exists at all for `dtype` and
/// `groups` (either direction of a plain ↔ private pair), whatever the shape: so a refused
/// [`plan`] can be told apart as "no such conversion" or "a shape that does not fit".
pub fn pair_supported(src: i32, dst: i32, dtype: i32, groups: i64) -> bool {
    let try_fwd = || -> Option<()> {
        let logical = canonical_shape(src, groups)?;
        plan(&Request {
            src_format: src,
            src_shape: &logical,
            dst_format: dst,
            dst_shape: None,
            dtype,
            groups,
            rule: C0Rule::Ge,
        })
        .ok()
        .map(|_| ())
    };
    let try_inv = || -> Option<()> {
        let logical = canonical_shape(dst, groups)?;
        let stored = storage_shape(dst, &logical, src, dtype, groups, C0Rule::Ge).ok()?;
        plan(&Request {
            src_format: src,
            src_shape: &stored,
            dst_format: dst,
            dst_shape: Some(&logical),
            dtype,
            groups,
            rule: C0Rule::Ge,
        })
        .ok()
        .map(|_| ())
    };
    try_fwd().is_some() || try_inv().is_some()
}

impl Plan {
    /// Bytes the source buffer must hold.
    pub fn src_bytes(&self) -> usize {
        self.src_bytes
    }
    /// Bytes the conversion writes.
    pub fn dst_bytes(&self) -> usize {
        self.dst_bytes
    }
    /// The destination shape (storage shape when forward, logical shape when inverse).
    pub fn dst_shape(&self) -> &[i64] {
        &self.dst_shape
    }
    /// C0 of the private side (1 for a same-format copy).
    pub fn c0(&self) -> usize {
        self.c0
    }
    /// Element size in bytes.
    pub fn element_size(&self) -> usize {
        self.elem
    }

    /// Convert. `src.len() >= src_bytes()`, `dst.len() >= dst_bytes()` else error. Writes zero
    /// to every padding element of dst. Runs as tiled copies, split across threads for large
    /// tensors.
    pub fn run(&self, src: &[u8], dst: &mut [u8]) -> Result<(), FormatError> {
        if src.len() < self.src_bytes {
            fail!(
                "{}: the source buffer holds {} bytes but {} bytes are needed",
                self.what,
                src.len(),
                self.src_bytes
            );
        }
        if dst.len() < self.dst_bytes {
            fail!(
                "{}: the destination buffer holds {} bytes but {} bytes are needed",
                self.what,
                dst.len(),
                self.dst_bytes
            );
        }
        let src = &src[..self.src_bytes];
        let dst = &mut dst[..self.dst_bytes];
        if kernels::execute(self, src, dst) {
            Ok(())
        } else {
            fail!(
                "{}: internal error: an index fell outside the buffers (a bug in npu-emu)",
                self.what
            )
        }
    }
}
