//! `aclnnop/aclnn_npu_format_cast.h`: `aclnnNpuFormatCastCalculateSizeAndFormat`,
//! `aclnnNpuFormatCastGetWorkspaceSize` and `aclnnNpuFormatCast` (abi.md §5.5).
//!
//! Behaviour follows CANN's documentation and `ops-math` implementation (abi.md S9):
//! - Atlas A2/A3 (`Ascend910B*`, `Ascend910_93*`): ND/NCL (and NCHW/NCDHW) → FRACTAL_NZ,
//!   FRACTAL_NZ → ND/NCL/NCHW/NCDHW, NCDHW ↔ NDC1HWC0, NCDHW ↔ FRACTAL_Z_3D, and from the
//!   newer reference's pair table NCHW/NHWC ↔ NC1HWC0, NCHW/HWCN ↔ FRACTAL_Z, NDHWC ↔
//!   NDC1HWC0, DHWCN ↔ FRACTAL_Z_3D, with C0 = 32 bytes / element size (fp32/int32 → 8,
//!   fp16/bf16 → 16, int8/uint8 → 32; abi.md §5.1 exception (a)), `additionalDtype` -1 (or
//!   the source dtype itself);
//! - Ascend 950 (`Ascend950*`, `Ascend910_95*`): ND/NCL → FRACTAL_NZ(_C0_16/_C0_32), C0 from
//!   `additionalDtype`;
//! - any other SoC: `ACLNN_ERR_RUNTIME_ERROR` (161… codes are argument errors).
//!
//! Codes: NULL tensor → `ACLNN_ERR_PARAM_NULLPTR`; unsupported dtype, format, shape rank,
//! empty or non-contiguous tensor, dst shape that is not the computed one →
//! `ACLNN_ERR_PARAM_INVALID`; a format pair `…CalculateSizeAndFormat` cannot convert and an
//! unsupported SoC → `ACLNN_ERR_RUNTIME_ERROR` (as the CANN doc tables say).
//!
//! The conversion needs no workspace (`*workspaceSize` = 0). The execute call checks the
//! tensors' device ranges against this process's allocations, then enqueues one task on the
//! stream through libascendcl's runtime interface; the task runs the `npu_emu::formats`
//! plan on the device memory (zero padding included).

use crate::executor::{self, Executor, Io};
use crate::meta::{contiguous_strides, dtype_size};
use crate::objects::{self, Object, Tensor};
use crate::rt::{self, Rt};
use crate::status::{boundary, non_null, out, NnError, NnResult};
use npu_emu::formats::{self, C0Rule, Request};
use std::ffi::c_void;
use std::sync::Arc;

const ND: i32 = 2;
const NCHW: i32 = 0;
const NHWC: i32 = 1;
const NC1HWC0: i32 = 3;
const FRACTAL_Z: i32 = 4;
const HWCN: i32 = 16;
const NDHWC: i32 = 27;
const DHWCN: i32 = 31;
const FRACTAL_NZ: i32 = 29;
const NCDHW: i32 = 30;
const NDC1HWC0: i32 = 32;
const FRACTAL_Z_3D: i32 = 33;
const NCL: i32 = 47;
const FRACTAL_NZ_C0_16: i32 = 50;
const FRACTAL_NZ_C0_32: i32 = 51;

const ACL_FLOAT: i32 = 0;
const ACL_FLOAT16: i32 = 1;
const ACL_INT8: i32 = 2;
const ACL_INT32: i32 = 3;
const ACL_UINT8: i32 = 4;
const ACL_UINT32: i32 = 8;
const ACL_BF16: i32 = 27;
const ACL_FLOAT8_E4M3FN: i32 = 36;

/// The SoC families aclnnNpuFormatCast knows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Soc {
    /// Atlas A2 / A3 (`Ascend910B*`, `Ascend910_93*`).
    A2A3,
    /// Ascend 950 (register-based; `Ascend950*`, `Ascend910_95*`).
    A5,
}

fn soc(rt: &Rt) -> NnResult<Soc> {
    let n = rt.soc_name();
    if n.starts_with("Ascend910B") || n.starts_with("Ascend910_93") {
        Ok(Soc::A2A3)
    } else if n.starts_with("Ascend950") || n.starts_with("Ascend910_95") {
        Ok(Soc::A5)
    } else {
        Err(NnError::runtime(format!(
            "aclnnNpuFormatCast is supported on Ascend910B (Atlas A2), Ascend910_93 (Atlas A3) \
             and Ascend950 only; the emulated SoC is {n:?} (NPU_EMU_SOC)"
        )))
    }
}

pub(crate) fn dtype_name(d: i32) -> String {
    match d {
        ACL_FLOAT => "FLOAT".into(),
        ACL_FLOAT16 => "FLOAT16".into(),
        ACL_INT8 => "INT8".into(),
        ACL_INT32 => "INT32".into(),
        ACL_UINT8 => "UINT8".into(),
        6 => "INT16".into(),
        7 => "UINT16".into(),
        ACL_UINT32 => "UINT32".into(),
        9 => "INT64".into(),
        10 => "UINT64".into(),
        11 => "DOUBLE".into(),
        12 => "BOOL".into(),
        ACL_BF16 => "BFLOAT16".into(),
        ACL_FLOAT8_E4M3FN => "FLOAT8_E4M3FN".into(),
        _ => format!("dtype {d}"),
    }
}

pub(crate) fn format_name(f: i32) -> String {
    match formats::format_name(f) {
        Some(n) => format!("{n}({f})"),
        None => format!("format {f}"),
    }
}

fn dtypes(soc: Soc) -> &'static [i32] {
    match soc {
        Soc::A2A3 => &[
            ACL_INT8,
            ACL_UINT8,
            ACL_FLOAT,
            ACL_FLOAT16,
            ACL_BF16,
            ACL_INT32,
            ACL_UINT32,
            ACL_FLOAT8_E4M3FN,
        ],
        Soc::A5 => &[
            ACL_INT8,
            ACL_FLOAT,
            ACL_FLOAT16,
            ACL_BF16,
            ACL_INT32,
            ACL_FLOAT8_E4M3FN,
        ],
    }
}

fn check_dtype(soc: Soc, t: &Tensor, arg: &str) -> NnResult<()> {
    let list = dtypes(soc);
    if list.contains(&t.dtype) {
        return Ok(());
    }
    let names: Vec<String> = list.iter().map(|&d| dtype_name(d)).collect();
    Err(NnError::invalid(format!(
        "{arg} has data type {}, which is not supported; supported: {}",
        dtype_name(t.dtype),
        names.join(", ")
    )))
}

fn check_shape(t: &Tensor, arg: &str) -> NnResult<()> {
    if let Some(d) = t.view_shape.iter().find(|&&d| d <= 0) {
        let what = if *d == 0 {
            "an empty tensor"
        } else {
            "a negative dimension"
        };
        return Err(NnError::invalid(format!(
            "{arg} view shape {:?} has {what}; not supported",
            t.view_shape
        )));
    }
    Ok(())
}

/// CANN's `IsContiguous`: the strides are the row-major strides of the view shape
/// (dimensions of size 1 may have any stride).
pub(crate) fn check_contiguous(t: &Tensor, arg: &str) -> NnResult<()> {
    if t.offset < 0 {
        return Err(NnError::invalid(format!(
            "{arg} has offset {}: aclCreateTensor's offset must not be negative",
            t.offset
        )));
    }
    let want = contiguous_strides(&t.view_shape);
    let ok = t.strides.len() == t.view_shape.len()
        && t.view_shape
            .iter()
            .zip(t.strides.iter().zip(&want))
            .all(|(&d, (&s, &w))| d == 1 || s == w);
    if ok {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "only contiguous tensors are supported: {arg} has view shape {:?} with strides {:?} \
             (contiguous: {want:?})",
            t.view_shape, t.strides
        )))
    }
}

pub(crate) fn dims_range(
    shape: &[i64],
    lo: usize,
    hi: usize,
    arg: &str,
    what: &str,
) -> NnResult<()> {
    if (lo..=hi).contains(&shape.len()) {
        Ok(())
    } else if lo == hi {
        Err(NnError::invalid(format!(
            "{arg} {what} must have {lo} dimensions, but it is {shape:?}"
        )))
    } else {
        Err(NnError::invalid(format!(
            "{arg} {what} must have {lo} to {hi} dimensions, but it is {shape:?}"
        )))
    }
}

pub(crate) fn fe(e: formats::FormatError) -> NnError {
    NnError::invalid(e.message)
}

/// The result of `…CalculateSizeAndFormat` for `src` converted to `dst_format`.
fn calculate(
    soc: Soc,
    src: &Tensor,
    dst_format: i32,
    additional: i32,
) -> NnResult<(Vec<i64>, i32)> {
    check_dtype(soc, src, "srcTensor")?;
    let additional = match soc {
        Soc::A2A3 => {
            if additional != -1 && additional != src.dtype {
                return Err(NnError::invalid(format!(
                    "additionalDtype {additional} is not supported on Atlas A2/A3: pass -1 \
                     (C0 then follows the srcTensor data type {})",
                    dtype_name(src.dtype)
                )));
            }
            src.dtype
        }
        Soc::A5 => {
            // CANN's source rejects -1 on Ascend 950 (`additionalDtype != -1 && IsRegBase()`),
            // although the reference's parameter table says -1 means the source data type.
            // Converting back to ND takes any data type (its C0 is in the source format).
            let back_to_nd = A5_NZ_FORMATS.contains(&src.storage_format) && dst_format == ND;
            let known = [ACL_FLOAT16, ACL_BF16, ACL_INT8, ACL_FLOAT8_E4M3FN].contains(&additional)
                || (back_to_nd && additional >= 0);
            if !known {
                return Err(NnError::invalid(format!(
                    "additionalDtype {additional} is not supported on Ascend950; supported: \
                     ACL_FLOAT16(1), ACL_BF16(27), ACL_INT8(2), ACL_FLOAT8_E4M3FN(36)"
                )));
            }
            additional
        }
    };
    check_shape(src, "srcTensor")?;
    check_format_known(soc, src.storage_format, "srcTensor format")?;
    check_format_known(soc, dst_format, "dstFormat")?;
    let sf = src.storage_format;
    let same = additional == src.dtype;
    let to_nz_sources: &[i32] = if same {
        &[ND, NCL, NCHW, NCDHW]
    } else {
        &[ND, NCL]
    };
    if dst_format == FRACTAL_NZ && to_nz_sources.contains(&sf) {
        dims_range(&src.view_shape, 2, 6, "srcTensor", "view shape")?;
        if soc == Soc::A5 {
            check_a5_nz(src, additional)?;
        }
        let actual = match soc {
            Soc::A2A3 => FRACTAL_NZ,
            Soc::A5 if same => FRACTAL_NZ,
            Soc::A5 => match dtype_size(additional) {
                Some(2) => FRACTAL_NZ_C0_16,
                _ => FRACTAL_NZ_C0_32,
            },
        };
        let shape =
            formats::storage_shape(ND, &src.view_shape, actual, src.dtype, 1, C0Rule::Aclnn)
                .map_err(fe)?;
        return Ok((shape, actual));
    }
    if soc == Soc::A5 && A5_NZ_FORMATS.contains(&sf) && dst_format == ND {
        dims_range(&src.view_shape, 2, 6, "srcTensor", "view shape")?;
        return Ok((src.view_shape.clone(), ND));
    }
    if soc == Soc::A2A3 {
        if sf == FRACTAL_NZ && A2_FROM_NZ.contains(&dst_format) {
            dims_range(&src.view_shape, 2, 6, "srcTensor", "view shape")?;
            return Ok((src.view_shape.clone(), dst_format));
        }
        if let Some((plain, private, forward, rank)) = a2_conv_pair(sf, dst_format) {
            let what = format!("view shape ({})", format_name(plain));
            dims_range(&src.view_shape, rank, rank, "srcTensor", &what)?;
            if !forward {
                return Ok((src.view_shape.clone(), plain));
            }
            let shape = formats::storage_shape(
                plain,
                &src.view_shape,
                private,
                src.dtype,
                1,
                C0Rule::Aclnn,
            )
            .map_err(fe)?;
            return Ok((shape, private));
        }
    }
    Err(NnError::runtime(format!(
        "unsupported format transformation: srcTensor {} to dstFormat {}; supported: {}",
        format_name(sf),
        format_name(dst_format),
        supported_pairs(soc)
    )))
}

/// The Ascend 950 cases of ND -> NZ (CANN `Check95NdToNzCalculateSizeAndFormatInputs`):
/// a weight-quant source (INT32 or FLOAT with another `additionalDtype`) is 2-D or 3-D; a
/// FLOAT16/BFLOAT16 matmul weight must not have K (the second-last dimension) = 1.
fn check_a5_nz(src: &Tensor, additional: i32) -> NnResult<()> {
    let n = src.view_shape.len();
    if additional != src.dtype {
        let allowed: &[i32] = match src.dtype {
            ACL_INT32 => &[ACL_FLOAT16, ACL_BF16, ACL_INT8],
            ACL_FLOAT => &[ACL_FLOAT16, ACL_BF16, ACL_FLOAT8_E4M3FN],
            _ => &[],
        };
        if !allowed.contains(&additional) {
            let names: Vec<String> = allowed.iter().map(|&d| dtype_name(d)).collect();
            return Err(NnError::invalid(format!(
                "additionalDtype {} with srcTensor data type {} is not supported{}",
                dtype_name(additional),
                dtype_name(src.dtype),
                if names.is_empty() {
                    ": pass the srcTensor data type".to_string()
                } else {
                    format!("; for {} use {}", dtype_name(src.dtype), names.join(", "))
                }
            )));
        }
        return dims_range(
            &src.view_shape,
            2,
            3,
            "srcTensor",
            "view shape (weight quantization: additionalDtype differs from the data type)",
        );
    }
    if matches!(src.dtype, ACL_FLOAT16 | ACL_BF16) && src.view_shape[n - 2] == 1 {
        return Err(NnError::invalid(format!(
            "srcTensor {:?} of {} has K (the second-last dimension) = 1, which is not supported",
            src.view_shape,
            dtype_name(src.dtype)
        )));
    }
    Ok(())
}

/// The formats the reference lists for `srcTensor` and `dstFormat`: one outside them is
/// `ACLNN_ERR_PARAM_INVALID`; a listed pair that cannot be converted is
/// `ACLNN_ERR_RUNTIME_ERROR`.
fn known_formats(soc: Soc) -> &'static [i32] {
    match soc {
        Soc::A2A3 => &[
            ND,
            FRACTAL_NZ,
            NCL,
            NCHW,
            NHWC,
            HWCN,
            NCDHW,
            NDHWC,
            DHWCN,
            NDC1HWC0,
            FRACTAL_Z_3D,
            NC1HWC0,
            FRACTAL_Z,
        ],
        Soc::A5 => &[
            ND,
            FRACTAL_NZ,
            NCL,
            FRACTAL_NZ_C0_16,
            FRACTAL_NZ_C0_32,
            52,
            53,
            54,
        ],
    }
}

fn check_format_known(soc: Soc, format: i32, what: &str) -> NnResult<()> {
    let known = known_formats(soc);
    if known.contains(&format) {
        return Ok(());
    }
    let list: Vec<String> = known.iter().map(|&f| format_name(f)).collect();
    Err(NnError::invalid(format!(
        "{what} {} is not supported{}; supported: {}",
        format_name(format),
        match soc {
            Soc::A2A3 => " on Atlas A2/A3",
            Soc::A5 => " on Ascend950",
        },
        list.join(", ")
    )))
}

/// The A2/A3 conversions between a plain 4-D/5-D format and NC1HWC0, FRACTAL_Z, NDC1HWC0 or
/// FRACTAL_Z_3D (the reference's pair table for Atlas A2/A3): `(plain, private, rank)`.
const A2_CONV_PAIRS: &[(i32, i32, usize)] = &[
    (NCHW, NC1HWC0, 4),
    (NHWC, NC1HWC0, 4),
    (NCHW, FRACTAL_Z, 4),
    (HWCN, FRACTAL_Z, 4),
    (NCDHW, NDC1HWC0, 5),
    (NDHWC, NDC1HWC0, 5),
    (NCDHW, FRACTAL_Z_3D, 5),
    (DHWCN, FRACTAL_Z_3D, 5),
];

/// `(plain, private, forward, rank)` when `sf -> df` is one of [`A2_CONV_PAIRS`], either way.
fn a2_conv_pair(sf: i32, df: i32) -> Option<(i32, i32, bool, usize)> {
    A2_CONV_PAIRS.iter().find_map(|&(plain, private, rank)| {
        if (sf, df) == (plain, private) {
            Some((plain, private, true, rank))
        } else if (sf, df) == (private, plain) {
            Some((plain, private, false, rank))
        } else {
            None
        }
    })
}

/// The FRACTAL_NZ formats Ascend 950 converts back to ND (the reference's 950 table:
/// FRACTAL_NZ, FRACTAL_NZ_C0_16, _C0_32, _C0_2, _C0_4).
const A5_NZ_FORMATS: &[i32] = &[FRACTAL_NZ, FRACTAL_NZ_C0_16, FRACTAL_NZ_C0_32, 52, 53];

/// The plain formats FRACTAL_NZ converts back to on A2/A3 (the logical shape is kept).
const A2_FROM_NZ: &[i32] = &[ND, NCL, NCHW, NCDHW];

fn supported_pairs(soc: Soc) -> &'static str {
    match soc {
        Soc::A2A3 => {
            "ND/NCL/NCHW/NCDHW -> FRACTAL_NZ(29), FRACTAL_NZ(29) -> ND/NCL/NCHW/NCDHW, \
             NCHW(0)/NHWC(1) <-> NC1HWC0(3), NCHW(0)/HWCN(16) <-> FRACTAL_Z(4), \
             NCDHW(30)/NDHWC(27) <-> NDC1HWC0(32), NCDHW(30)/DHWCN(31) <-> FRACTAL_Z_3D(33)"
        }
        Soc::A5 => {
            "ND/NCL -> FRACTAL_NZ(29), FRACTAL_NZ_C0_16(50), FRACTAL_NZ_C0_32(51); \
             FRACTAL_NZ(29), FRACTAL_NZ_C0_16(50), _C0_32(51), _C0_2(52), _C0_4(53) -> ND(2)"
        }
    }
}

pub(crate) fn tensor_of(p: *const c_void, arg: &str) -> NnResult<Tensor> {
    non_null(p, arg)?;
    objects::tensor(p as usize, arg)
}

/// `aclnnStatus aclnnNpuFormatCastCalculateSizeAndFormat(const aclTensor *srcTensor, const
/// int dstFormat, int additionalDtype, int64_t **dstShape, uint64_t *dstShapeSize, int
/// *actualFormat)`: `*dstShape` is allocated as with `new int64_t[]`; the caller frees it
/// with `delete[]`. Nothing is written on failure.
#[no_mangle]
pub unsafe extern "C" fn aclnnNpuFormatCastCalculateSizeAndFormat(
    srcTensor: *const c_void,
    dstFormat: i32,
    additionalDtype: i32,
    dstShape: *mut *mut i64,
    dstShapeSize: *mut u64,
    actualFormat: *mut i32,
) -> i32 {
    boundary("aclnnNpuFormatCastCalculateSizeAndFormat", || {
        let soc = soc(rt::rt()?)?;
        let src = tensor_of(srcTensor, "srcTensor")?;
        non_null(dstShape, "dstShape")?;
        non_null(dstShapeSize, "dstShapeSize")?;
        non_null(actualFormat, "actualFormat")?;
        let (shape, actual) = calculate(soc, &src, dstFormat, additionalDtype)?;
        let p = crate::cxx::new_i64_array(&shape);
        if p.is_null() {
            return Err(NnError::runtime("failed to allocate memory for dstShape"));
        }
        out(dstShape, "dstShape", p)?;
        out(dstShapeSize, "dstShapeSize", shape.len() as u64)?;
        out(actualFormat, "actualFormat", actual)
    })
}

/// Which way a format pair converts, and the plain (logical) shape.
struct Conversion {
    plain_format: i32,
    private_format: i32,
    forward: bool,
}

fn conversion(soc: Soc, src: &Tensor, dst: &Tensor) -> NnResult<Conversion> {
    let (sf, df) = (src.storage_format, dst.storage_format);
    let nz_dst: &[i32] = match soc {
        Soc::A2A3 => &[FRACTAL_NZ],
        Soc::A5 => &[FRACTAL_NZ, FRACTAL_NZ_C0_16, FRACTAL_NZ_C0_32],
    };
    let nz_src: &[i32] = match soc {
        Soc::A2A3 => &[ND, NCL, NCHW, NCDHW],
        Soc::A5 => &[ND, NCL],
    };
    let c = |plain_format, private_format, forward| Conversion {
        plain_format,
        private_format,
        forward,
    };
    if nz_src.contains(&sf) && nz_dst.contains(&df) {
        return Ok(c(ND, df, true));
    }
    if soc == Soc::A5 && A5_NZ_FORMATS.contains(&sf) && df == ND {
        return Ok(c(ND, sf, false));
    }
    if soc == Soc::A2A3 {
        if sf == FRACTAL_NZ && A2_FROM_NZ.contains(&df) {
            return Ok(c(ND, FRACTAL_NZ, false));
        }
        if let Some((plain, private, forward, _)) = a2_conv_pair(sf, df) {
            return Ok(c(plain, private, forward));
        }
    }
    Err(NnError::invalid(format!(
        "converting srcTensor format {} to dstTensor format {} is not supported; supported: {}",
        format_name(sf),
        format_name(df),
        supported_pairs(soc)
    )))
}

fn build_executor(soc: Soc, src: &Tensor, dst: &Tensor) -> NnResult<Executor> {
    check_dtype(soc, src, "srcTensor")?;
    check_dtype(soc, dst, "dstTensor")?;
    check_contiguous(src, "srcTensor")?;
    check_contiguous(dst, "dstTensor")?;
    if src.dtype != dst.dtype {
        return Err(NnError::invalid(format!(
            "srcTensor data type {} and dstTensor data type {} differ; aclnnNpuFormatCast does \
             not convert data types",
            dtype_name(src.dtype),
            dtype_name(dst.dtype)
        )));
    }
    let conv = conversion(soc, src, dst)?;
    // The logical shape is the plain tensor's view shape; the private tensor's storage
    // shape must be the one aclnnNpuFormatCastCalculateSizeAndFormat gives for it.
    let (plain, plain_arg, private, private_arg) = if conv.forward {
        (src, "srcTensor", dst, "dstTensor")
    } else {
        (dst, "dstTensor", src, "srcTensor")
    };
    check_shape(plain, plain_arg)?;
    if let Some((_, _, _, rank)) = a2_conv_pair(conv.plain_format, conv.private_format) {
        let what = format!("view shape ({})", format_name(conv.plain_format));
        dims_range(&plain.view_shape, rank, rank, plain_arg, &what)?;
    } else {
        dims_range(&plain.view_shape, 2, 6, plain_arg, "view shape")?;
    }
    let want = formats::storage_shape(
        conv.plain_format,
        &plain.view_shape,
        conv.private_format,
        src.dtype,
        1,
        C0Rule::Aclnn,
    )
    .map_err(fe)?;
    if private.storage_shape != want {
        return Err(NnError::invalid(format!(
            "{private_arg} storage shape {:?} does not match {plain_arg} shape {:?}: {} {} in \
             {} is stored as {want:?} (use aclnnNpuFormatCastCalculateSizeAndFormat)",
            private.storage_shape,
            plain.view_shape,
            dtype_name(src.dtype),
            format_name(conv.plain_format),
            format_name(conv.private_format),
        )));
    }
    let req = if conv.forward {
        Request {
            src_format: conv.plain_format,
            src_shape: &plain.view_shape,
            dst_format: conv.private_format,
            dst_shape: Some(&want),
            dtype: src.dtype,
            groups: 1,
            rule: C0Rule::Aclnn,
        }
    } else {
        Request {
            src_format: conv.private_format,
            src_shape: &want,
            dst_format: conv.plain_format,
            dst_shape: Some(&plain.view_shape),
            dtype: src.dtype,
            groups: 1,
            rule: C0Rule::Aclnn,
        }
    };
    let plan = formats::plan(&req).map_err(fe)?;
    let esize = dtype_size(src.dtype).unwrap_or(1) as i64;
    let io = |t: &Tensor| Io {
        addr: t.addr,
        view_bytes: (t.offset * esize) as usize,
    };
    Ok(Executor {
        api: "aclnnNpuFormatCast",
        op: executor::Op::Cast,
        plan: Some(Arc::new(plan)),
        inputs: vec![io(src)],
        outputs: vec![io(dst)],
        workspace_size: 0,
        repeatable: false,
    })
}

/// `aclnnStatus aclnnNpuFormatCastGetWorkspaceSize(const aclTensor *srcTensor, aclTensor
/// *dstTensor, uint64_t *workspaceSize, aclOpExecutor **executor)`
#[no_mangle]
pub unsafe extern "C" fn aclnnNpuFormatCastGetWorkspaceSize(
    srcTensor: *const c_void,
    dstTensor: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    boundary("aclnnNpuFormatCastGetWorkspaceSize", || {
        let soc = soc(rt::rt()?)?;
        let src = tensor_of(srcTensor, "srcTensor")?;
        let dst = tensor_of(dstTensor, "dstTensor")?;
        non_null(workspaceSize, "workspaceSize")?;
        non_null(executor, "executor")?;
        let e = build_executor(soc, &src, &dst)?;
        let ws = e.workspace_size;
        let h = objects::insert(Object::Executor(e));
        out(workspaceSize, "workspaceSize", ws)?;
        out(executor, "executor", h as *mut c_void)
    })
}

/// `aclnnStatus aclnnNpuFormatCast(void *workspace, uint64_t workspaceSize, aclOpExecutor
/// *executor, aclrtStream stream)`: enqueue the conversion on `stream`. The executor is
/// freed (success or not) unless it was made repeatable.
#[no_mangle]
pub unsafe extern "C" fn aclnnNpuFormatCast(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    boundary("aclnnNpuFormatCast", || {
        crate::run::execute(workspace, workspaceSize, executor, stream)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[i64], dtype: i32, format: i32) -> Tensor {
        Tensor {
            view_shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
            format,
            dtype,
            storage_shape: shape.to_vec(),
            storage_format: format,
            addr: 0,
        }
    }

    #[test]
    fn a2_shapes_follow_the_32_byte_c0_rule() {
        let c =
            |shape: &[i64], dtype, src, dst| calculate(Soc::A2A3, &t(shape, dtype, src), dst, -1);
        // fp32: C0 8; fp16: 16; int8: 32 (CANN doc table for A2/A3).
        assert_eq!(
            c(&[33, 20], ACL_FLOAT, ND, FRACTAL_NZ).unwrap(),
            (vec![3, 3, 16, 8], 29)
        );
        assert_eq!(
            c(&[2, 17, 33], ACL_FLOAT16, ND, FRACTAL_NZ).unwrap(),
            (vec![2, 3, 2, 16, 16], 29)
        );
        assert_eq!(
            c(&[17, 70], ACL_INT8, NCL, FRACTAL_NZ).unwrap(),
            (vec![3, 2, 16, 32], 29)
        );
        // The CANN sample: int32 NCDHW [1, 17, 1, 2, 2] -> NDC1HWC0 [1, 1, 3, 2, 2, 8].
        assert_eq!(
            c(&[1, 17, 1, 2, 2], ACL_INT32, NCDHW, NDC1HWC0).unwrap(),
            (vec![1, 1, 3, 2, 2, 8], 32)
        );
        assert_eq!(
            c(&[18, 19, 2, 3, 2], ACL_FLOAT16, NCDHW, FRACTAL_Z_3D).unwrap(),
            (vec![24, 2, 16, 16], 33)
        );
        // Inverse: the view shape, actual format ND / NCDHW.
        assert_eq!(
            c(&[5, 7], ACL_BF16, FRACTAL_NZ, ND).unwrap(),
            (vec![5, 7], 2)
        );
        assert_eq!(
            c(&[2, 3, 4, 5, 6], ACL_UINT8, FRACTAL_Z_3D, NCDHW).unwrap(),
            (vec![2, 3, 4, 5, 6], 30)
        );
        // Errors and their codes.
        let e = c(&[4, 4], ACL_FLOAT16, ND, NDC1HWC0).unwrap_err();
        assert_eq!(e.code, crate::status::ACLNN_ERR_RUNTIME_ERROR);
        let e = c(&[4], ACL_FLOAT16, ND, FRACTAL_NZ).unwrap_err();
        assert_eq!(e.code, crate::status::ACLNN_ERR_PARAM_INVALID);
        let e = calculate(
            Soc::A2A3,
            &t(&[4, 4], ACL_FLOAT, ND),
            FRACTAL_NZ,
            ACL_FLOAT16,
        )
        .unwrap_err();
        assert!(e.msg.contains("additionalDtype 1"), "{}", e.msg);
    }

    #[test]
    fn a5_takes_c0_from_additional_dtype() {
        let c =
            |shape: &[i64], dtype, add| calculate(Soc::A5, &t(shape, dtype, ND), FRACTAL_NZ, add);
        assert_eq!(
            c(&[64, 128], ACL_INT32, ACL_FLOAT16).unwrap(),
            (vec![8, 4, 16, 16], 50)
        );
        assert_eq!(
            c(&[64, 128], ACL_FLOAT, ACL_FLOAT8_E4M3FN).unwrap(),
            (vec![4, 4, 16, 32], 51)
        );
        assert_eq!(
            c(&[64, 128], ACL_INT8, ACL_INT8).unwrap(),
            (vec![4, 4, 16, 32], 29)
        );
        assert!(c(&[64, 128], ACL_INT8, -1).is_err());
        assert!(c(&[2, 2, 64, 128], ACL_FLOAT, ACL_FLOAT16).is_err()); // weight quant: 2-3 dims
        assert!(c(&[1, 128], ACL_FLOAT16, ACL_FLOAT16).is_err()); // K = 1
    }

    #[test]
    fn contiguity_ignores_unit_dimensions() {
        let mut x = t(&[1, 4, 5], ACL_FLOAT16, ND);
        assert!(check_contiguous(&x, "x").is_ok());
        x.strides = vec![999, 5, 1];
        assert!(check_contiguous(&x, "x").is_ok());
        x.strides = vec![20, 1, 4];
        assert!(check_contiguous(&x, "x").is_err());
    }
}
