//! Quantisation and MoE routing of large-model inference: `aclnn_ascend_quant.h`
//! (`aclnnAscendQuant`), `aclnn_ascend_quant_v3.h` (`aclnnAscendQuantV3`),
//! `aclnn_dynamic_quant.h` (`aclnnDynamicQuant`), `aclnn_dynamic_quant_v2.h`
//! (`aclnnDynamicQuantV2`), `aclnn_moe_gating_top_k_softmax.h`
//! (`aclnnMoeGatingTopKSoftmax`), the first quantised matmuls `aclnn_quant_matmul.h`
//! (`aclnnQuantMatmul`, `aclnnQuantMatmulV2`) and `aclnn_weight_quant_batch_matmul.h`
//! (`aclnnWeightQuantBatchMatmul`), `aclnn_ascend_anti_quant.h` (`aclnnAscendAntiQuant`)
//! and `aclnn_trans_quant_param.h` (`aclnnTransQuantParam`, on the host). The checks follow
//! CANN's operator reference (the Atlas A2 dtype lists, on every emulated SoC); the
//! computation is `npu_emu::ops::quant`.
//!
//! QuantMatmulV3/V4/V5 take int4 x1/x2 as INT32 words of eight; V5 also computes its G-B
//! (pergroup-perblock) and A8W4 (INT8 x1, int4 x2, per channel or K-G) modes.
//!
//! DynamicQuantV2 takes `groupIndexOptional` (per-expert smoothScales) and writes int4
//! (`dstType` 3, INT32 words of eight).
//!
//! AscendQuant(V3) with `dstType` 3 (int4 packed eight to an INT32 word) and its FRACTAL_NZ
//! form, and GroupedMatmulV4/V5's A4W4 mode, go to `quant31.rs`.
//!
//! Not provided: ACL_INT4-typed tensors (`dstType` 29) and the FLOAT8/HIFLOAT8 outputs
//! (refused with `ACLNN_ERR_PARAM_INVALID` naming the type).

use super::args::{self as a, FLOATS3, T};
use super::launch::{phase1, Launch};
use crate::status::{boundary, non_null, out, NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::llm;
use npu_emu::ops::quant::{self, Round};
use std::ffi::{c_char, c_void};

/// `ACL_INT8`, the one quantised output type npu-emu computes.
const ACL_INT8: i64 = 2;

pub(super) fn dst_int8(dst: i64) -> NnResult<()> {
    match dst {
        ACL_INT8 => Ok(()),
        3 | 29 | 34 | 35 | 36 => Err(NnError::invalid(format!(
            "dstType {dst} ({}) is not supported by npu-emu; use 2 (INT8)",
            npu_emu::formats::dtype_name(dst as i32)
        ))),
        _ => Err(NnError::invalid(format!(
            "dstType {dst} is not a quantised output type (2 INT8, 3 INT32, 29 INT4)"
        ))),
    }
}

pub(super) fn out_int8(y: &T) -> NnResult<()> {
    if y.dtype() != DType::I8 {
        return Err(NnError::invalid(format!(
            "{} has data type {}; the quantised output must be INT8",
            y.arg,
            y.dtype()
        )));
    }
    Ok(())
}

fn same_dtype(t: &T, like: &T) -> NnResult<()> {
    if t.dtype() == like.dtype() {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has data type {}, but {} has {}; they must be the same",
            t.arg,
            t.dtype(),
            like.arg,
            like.dtype()
        )))
    }
}

fn round_mode(s: *const c_char) -> NnResult<Round> {
    if s.is_null() {
        return Err(NnError::nullptr("roundMode is nullptr"));
    }
    // SAFETY: a non-null roundMode is a NUL-terminated C string, as the prototype requires.
    let m = unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy();
    Round::parse(&m).ok_or_else(|| {
        NnError::invalid(format!(
            "roundMode \"{m}\" must be one of \"round\", \"floor\", \"ceil\", \"trunc\""
        ))
    })
}

/// A per-axis parameter (`scale`, `offset`) of x's `axis`: 1-D of `x.shape[axis]` or 1
/// elements, or of x's rank with that dimension (or 1) at `axis` and 1 elsewhere.
fn axis_param(p: &T, x: &T, axis: usize) -> NnResult<()> {
    let n = x.shape()[axis];
    let ok =
        if p.ndim() == 1 {
            p.shape()[0] == n || p.shape()[0] == 1
        } else {
            p.ndim() == x.ndim()
                && p.shape().iter().enumerate().all(|(d, &s)| {
                    if d == axis {
                        s == n || s == 1
                    } else {
                        s == 1
                    }
                })
        };
    if ok {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} shape {:?} must be [{n}] or [1] (or x's rank with {n} or 1 at dimension \
             {axis} and 1 elsewhere) for x of shape {:?}",
            p.arg,
            p.shape(),
            x.shape()
        )))
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn ascend_quant(
    name: &'static str,
    api: &'static str,
    x: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    sqrt_mode: bool,
    round: *const c_char,
    dst: i64,
    axis: Option<i64>,
    y: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        if x.is_null() {
            return Err(NnError::nullptr("x is nullptr"));
        }
        if super::quant31::is_nz(x) {
            // The FRACTAL_NZ form (int4 weights for GroupedMatmul): quant31.rs.
            let s = a::tensor(scale, "scale")?;
            let o = a::opt_tensor(offset, "offset")?;
            let mode = round_mode(round)?;
            return super::quant31::ascend_quant_nz(
                api,
                x,
                &s,
                o.as_ref(),
                sqrt_mode,
                mode,
                dst,
                axis.unwrap_or(-1),
                y,
            );
        }
        let x = a::tensor(x, "x")?;
        let s = a::tensor(scale, "scale")?;
        let o = a::opt_tensor(offset, "offset")?;
        let y = a::tensor(y, "y")?;
        let mode = round_mode(round)?;
        a::dtype_in(&x, FLOATS3)?;
        a::dtype_in(&s, FLOATS3)?;
        if x.dtype() != DType::F32 {
            same_dtype(&s, &x)?;
        }
        if let Some(o) = &o {
            same_dtype(o, &s)?;
        }
        // dstType 3: INT32 y of eight int4 values a word along the last axis.
        let int4 = dst == 3;
        if int4 {
            if y.dtype() != DType::I32 {
                return Err(NnError::invalid(format!(
                    "y has data type {}; dstType 3 writes INT32 (eight int4 values a word)",
                    y.dtype()
                )));
            }
        } else {
            dst_int8(dst)?;
            out_int8(&y)?;
        }
        if x.ndim() == 0 || x.ndim() > 8 {
            return Err(NnError::invalid(format!(
                "x must have 1 to 8 dimensions, but its shape is {:?}",
                x.shape()
            )));
        }
        let nd = x.ndim() as i64;
        let ax = match axis {
            None => nd - 1,
            Some(v) => {
                let d = if v < 0 { v + nd } else { v };
                if d != nd - 1 && d != nd - 2 || d < 0 {
                    return Err(NnError::invalid(format!(
                        "axis {v} must name one of x's last two dimensions (x has {nd})"
                    )));
                }
                d
            }
        } as usize;
        axis_param(&s, &x, ax)?;
        if let Some(o) = &o {
            axis_param(o, &x, ax)?;
        }
        if int4 {
            let last = x.shape()[x.ndim() - 1];
            if last % 8 != 0 {
                return Err(NnError::invalid(format!(
                    "x's last dimension {last} must be divisible by 8 for dstType 3 (INT32)"
                )));
            }
            let mut ys = x.shape().to_vec();
            *ys.last_mut().expect("1 or more dimensions") /= 8;
            a::same_shape(&y, &ys)?;
        } else {
            a::same_shape(&y, x.shape())?;
        }
        let mut l = Launch::new(api);
        l.input(&x);
        l.input(&s);
        let has_o = o.is_some();
        if let Some(o) = &o {
            l.input(o);
        }
        l.output(&y);
        l.finish(move |v, _| {
            let (off, yv) = if has_o {
                (Some(&v[2]), &v[3])
            } else {
                (None, &v[2])
            };
            if int4 {
                return npu_emu::ops::quant31::ascend_quant_int4(
                    &v[0], &v[1], off, ax, sqrt_mode, mode, yv,
                );
            }
            quant::ascend_quant(&v[0], &v[1], off, ax, sqrt_mode, mode, yv)
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAscendQuantGetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    sqrtMode: bool,
    roundMode: *const c_char,
    dstType: i32,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    ascend_quant(
        "aclnnAscendQuantGetWorkspaceSize",
        "aclnnAscendQuant",
        x,
        scale,
        offset,
        sqrtMode,
        roundMode,
        dstType as i64,
        None,
        y,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAscendQuantV3GetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    sqrtMode: bool,
    roundMode: *const c_char,
    dstType: i32,
    axis: i32,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    ascend_quant(
        "aclnnAscendQuantV3GetWorkspaceSize",
        "aclnnAscendQuantV3",
        x,
        scale,
        offset,
        sqrtMode,
        roundMode,
        dstType as i64,
        Some(axis as i64),
        y,
        workspaceSize,
        executor,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn dynamic_quant(
    name: &'static str,
    api: &'static str,
    x: *const c_void,
    smooth: *const c_void,
    group: *const c_void,
    dst: i64,
    y: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let x = a::tensor(x, "x")?;
        let sm = a::opt_tensor(smooth, "smoothScalesOptional")?;
        let g = a::opt_tensor(group, "groupIndexOptional")?;
        let y = a::tensor(y, "yOut")?;
        let s = a::tensor(scale, "scaleOut")?;
        let o = a::opt_tensor(offset, "offsetOut")?;
        a::dtype_in(&x, &[DType::F16, DType::BF16])?;
        if x.ndim() < 2 || x.ndim() > 8 {
            return Err(NnError::invalid(format!(
                "x must have 2 to 8 dimensions, but its shape is {:?}",
                x.shape()
            )));
        }
        let h = x.shape()[x.ndim() - 1];
        // groupIndexOptional: INT32 cumulative row ends, one per expert (an empty tensor is
        // absent)
        let g = g.filter(|t| t.numel() != 0);
        if let Some(g) = &g {
            if g.dtype() != DType::I32 {
                return Err(NnError::invalid(format!(
                    "groupIndexOptional has data type {}; it must be INT32",
                    g.dtype()
                )));
            }
            if g.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "groupIndexOptional must be 1-D, but its shape is {:?}",
                    g.shape()
                )));
            }
            let sm = sm.as_ref().ok_or_else(|| {
                NnError::invalid(
                    "groupIndexOptional is given but smoothScalesOptional is nullptr; the \
                     groups select rows of smoothScalesOptional",
                )
            })?;
            if g.shape()[0] > 1024 {
                return Err(NnError::invalid(format!(
                    "groupIndexOptional has {} experts; at most 1024",
                    g.shape()[0]
                )));
            }
            same_dtype(sm, &x)?;
            a::same_shape(sm, &[g.shape()[0], h])?;
        } else if let Some(sm) = &sm {
            same_dtype(sm, &x)?;
            a::same_shape(sm, &[h])?;
        }
        // dstType 2: INT8 y of x's shape; 3: INT32 y holding eight int4 values a word
        let int4 = match dst {
            ACL_INT8 => false,
            3 => true,
            _ => {
                dst_int8(dst)?;
                false
            }
        };
        if int4 {
            if y.dtype() != DType::I32 {
                return Err(NnError::invalid(format!(
                    "yOut has data type {}; dstType 3 writes INT32 (eight int4 values a word)",
                    y.dtype()
                )));
            }
            if h % 8 != 0 {
                return Err(NnError::invalid(format!(
                    "x's last dimension {h} must be divisible by 8 for an INT32 (int4) yOut"
                )));
            }
            let mut ys = x.shape().to_vec();
            *ys.last_mut().expect("2 or more dimensions") /= 8;
            a::same_shape(&y, &ys)?;
        } else {
            out_int8(&y)?;
            a::same_shape(&y, x.shape())?;
        }
        let rows = &x.shape()[..x.ndim() - 1];
        for t in std::iter::once(&s).chain(o.as_ref()) {
            if t.dtype() != DType::F32 {
                return Err(NnError::invalid(format!(
                    "{} has data type {}; it must be FLOAT",
                    t.arg,
                    t.dtype()
                )));
            }
            a::same_shape(t, rows)?;
        }
        let mut l = Launch::new(api);
        l.input(&x);
        let si = sm.as_ref().map(|t| l.input(t));
        let gi = g.as_ref().map(|t| l.input(t));
        let yi = l.output(&y);
        l.output(&s);
        let has_o = o.is_some();
        if let Some(o) = &o {
            l.output(o);
        }
        l.finish(move |v, _| {
            let ov = if has_o { Some(&v[yi + 2]) } else { None };
            quant::dynamic_quant_v2(
                &v[0],
                si.map(|i| &v[i]),
                gi.map(|i| &v[i]),
                &v[yi],
                &v[yi + 1],
                ov,
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDynamicQuantGetWorkspaceSize(
    x: *const c_void,
    smoothScalesOptional: *const c_void,
    yOut: *const c_void,
    scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    dynamic_quant(
        "aclnnDynamicQuantGetWorkspaceSize",
        "aclnnDynamicQuant",
        x,
        smoothScalesOptional,
        std::ptr::null(),
        ACL_INT8,
        yOut,
        scaleOut,
        std::ptr::null(),
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDynamicQuantV2GetWorkspaceSize(
    x: *const c_void,
    smoothScalesOptional: *const c_void,
    groupIndexOptional: *const c_void,
    dstType: i64,
    yOut: *const c_void,
    scaleOut: *const c_void,
    offsetOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    dynamic_quant(
        "aclnnDynamicQuantV2GetWorkspaceSize",
        "aclnnDynamicQuantV2",
        x,
        smoothScalesOptional,
        groupIndexOptional,
        dstType,
        yOut,
        scaleOut,
        offsetOut,
        workspaceSize,
        executor,
    )
}

/// The gating operators (V1: rowIdxOut; V2: renorm and the optional softmax output).
#[allow(clippy::too_many_arguments)]
unsafe fn gating(
    name: &'static str,
    api: &'static str,
    x: *const c_void,
    finished: *const c_void,
    k: i64,
    renorm: Option<i64>,
    softmax_flag: bool,
    y: *const c_void,
    expert_idx: *const c_void,
    row_idx: Option<*const c_void>,
    softmax: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let x = a::tensor(x, "x")?;
        let f = a::opt_tensor(finished, "finishedOptional")?;
        let y = a::tensor(y, "yOut")?;
        let e = a::tensor(expert_idx, "expertIdxOut")?;
        let r = match row_idx {
            Some(h) => Some(a::tensor(h, "rowIdxOut")?),
            None => None,
        };
        a::dtype_in(&x, FLOATS3)?;
        if x.ndim() != 2 && x.ndim() != 3 {
            return Err(NnError::invalid(format!(
                "x must be 2-D or 3-D, but its shape is {:?}",
                x.shape()
            )));
        }
        let experts = x.shape()[x.ndim() - 1];
        let lead = &x.shape()[..x.ndim() - 1];
        if k < 0 || k as usize > experts || k > 1024 {
            return Err(NnError::invalid(format!(
                "k {k} must be in [0, {}] (x's last dimension, at most 1024)",
                experts.min(1024)
            )));
        }
        let renorm = renorm.unwrap_or(0);
        if renorm != 0 && renorm != 1 {
            return Err(NnError::invalid(format!(
                "renorm {renorm} must be 0 (softmax, then top k) or 1 (top k, then softmax)"
            )));
        }
        if let Some(f) = &f {
            if f.dtype() != DType::Bool {
                return Err(NnError::invalid(format!(
                    "finishedOptional has data type {}; it must be BOOL",
                    f.dtype()
                )));
            }
            a::same_shape(f, lead)?;
        }
        same_dtype(&y, &x)?;
        for t in std::iter::once(&e).chain(r.as_ref()) {
            int32(t)?;
        }
        let mut os = lead.to_vec();
        os.push(k as usize);
        for t in [&y, &e].into_iter().chain(r.as_ref()) {
            a::same_shape(t, &os)?;
        }
        // The softmax output exists when renorm is 0 and the flag is set (the reference:
        // "when renorm = 1 the flag has no effect").
        let sm = if renorm == 0 && softmax_flag {
            let t = a::tensor(softmax, "softmaxResultOutOptional")?;
            if t.dtype() != DType::F32 {
                return Err(NnError::invalid(format!(
                    "softmaxResultOutOptional has data type {}; it must be FLOAT",
                    t.dtype()
                )));
            }
            a::same_shape(&t, x.shape())?;
            Some(t)
        } else {
            None
        };
        let mut l = Launch::new(api);
        l.input(&x);
        let has_f = f.is_some();
        if let Some(f) = &f {
            l.input(f);
        }
        let yi = l.output(&y);
        l.output(&e);
        let ri = r.as_ref().map(|r| l.output(r));
        let si = sm.as_ref().map(|s| l.output(s));
        let k = k as usize;
        l.finish(move |v, _| {
            let fv = if has_f { Some(&v[1]) } else { None };
            quant::moe_gating_topk_softmax(
                &v[0],
                fv,
                k,
                renorm == 1,
                &v[yi],
                &v[yi + 1],
                ri.map(|i| &v[i]),
                si.map(|i| &v[i]),
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(
    x: *const c_void,
    finishedOptional: *const c_void,
    k: i64,
    yOut: *const c_void,
    expertIdxOut: *const c_void,
    rowIdxOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    gating(
        "aclnnMoeGatingTopKSoftmaxGetWorkspaceSize",
        "aclnnMoeGatingTopKSoftmax",
        x,
        finishedOptional,
        k,
        None,
        false,
        yOut,
        expertIdxOut,
        Some(rowIdxOut),
        std::ptr::null(),
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeGatingTopKSoftmaxV2GetWorkspaceSize(
    x: *const c_void,
    finishedOptional: *const c_void,
    k: i64,
    renorm: i64,
    outputSoftmaxResultFlag: bool,
    yOut: *const c_void,
    expertIdxOut: *const c_void,
    softmaxResultOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    gating(
        "aclnnMoeGatingTopKSoftmaxV2GetWorkspaceSize",
        "aclnnMoeGatingTopKSoftmaxV2",
        x,
        finishedOptional,
        k,
        Some(renorm),
        outputSoftmaxResultFlag,
        yOut,
        expertIdxOut,
        None,
        softmaxResultOutOptional,
        workspaceSize,
        executor,
    )
}

crate::phase2!(
    aclnnAscendQuant,
    aclnnAscendQuantV3,
    aclnnDynamicQuant,
    aclnnDynamicQuantV2,
    aclnnMoeGatingTopKSoftmax,
    aclnnMoeGatingTopKSoftmaxV2
);

// ---------------------------------------------------------------- quantised matmul

const QPARAM: &[DType] = &[DType::U64, DType::I64];

/// A tensor of 1 or `n` elements (1-D), or absent.
fn per_column(t: &T, n: usize) -> NnResult<()> {
    if t.ndim() == 1 && (t.shape()[0] == 1 || t.shape()[0] == n) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} shape {:?} must be [1] or [{n}]",
            t.arg,
            t.shape()
        )))
    }
}

/// An argument npu-emu does not compute with: nullptr, or an empty tensor as torch_npu
/// passes for x1Offset and yOffset.
fn absent(h: *const c_void, arg: &'static str) -> NnResult<()> {
    if let Some(t) = a::opt_tensor(h, arg)? {
        if t.numel() != 0 {
            return Err(NnError::invalid(format!(
                "{arg} is not supported in this quantisation mode; pass nullptr"
            )));
        }
    }
    Ok(())
}

fn dtype_name(t: Option<&T>) -> String {
    t.map_or("null".to_string(), |t| t.dtype().to_string())
}

/// QuantMatmulV5's own arguments: yOffset (the A8W4 modes) and groupSize.
pub(crate) struct V5 {
    y_offset: *const c_void,
    group_size: i64,
}

/// `groupSize` as (groupSizeM, groupSizeN, groupSizeK): `k | n << 16 | m << 32`, the top
/// 16 bits ignored.
fn split_group(g: i64) -> (usize, usize, usize) {
    let g = g as u64;
    (
        ((g >> 32) & 0xFFFF) as usize,
        ((g >> 16) & 0xFFFF) as usize,
        (g & 0xFFFF) as usize,
    )
}

/// The logical shape of x1/x2: INT32 packs eight int4 values a word along its contiguous
/// axis ([`quant::packed_axis`]), which is eight times longer; other types as they are.
fn logical_shape(t: &T) -> NnResult<(Vec<usize>, Option<usize>)> {
    if t.dtype() != DType::I32 {
        return Ok((t.shape().to_vec(), None));
    }
    let ax = quant::packed_axis(t.shape(), &t.layout.strides).ok_or_else(|| {
        NnError::invalid(format!(
            "{} (INT32, int4 packed eight to a word) of shape {:?} and strides {:?} must be \
             contiguous along one of its last two dimensions",
            t.arg,
            t.shape(),
            t.layout.strides
        ))
    })?;
    let mut s = t.shape().to_vec();
    s[ax] *= 8;
    Ok((s, Some(ax)))
}

fn float32(t: &T) -> NnResult<()> {
    if t.dtype() == DType::F32 {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has data type {}; it must be FLOAT",
            t.arg,
            t.dtype()
        )))
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn quant_matmul(
    name: &'static str,
    api: &'static str,
    x1: *const c_void,
    x2: *const c_void,
    x1_scale: *const c_void,
    x2_scale: *const c_void,
    x2_offset: *const c_void,
    bias: *const c_void,
    trans_x1: bool,
    trans_x2: bool,
    out: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
    scale_arg: &'static str,
    pertoken_arg: &'static str,
    offset_arg: &'static str,
    v5: Option<V5>,
    pre: impl FnOnce() -> NnResult<()>,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        pre()?;
        let x1 = a::tensor(x1, "x1")?;
        // x2 may be stored in FRACTAL_NZ, as aclnnTransMatmulWeight leaves it
        let w2 = a::weight(x2, "x2")?;
        let x2 = w2.logical.clone();
        let ps = a::opt_tensor(x1_scale, pertoken_arg)?;
        let s = a::tensor(x2_scale, scale_arg)?;
        let off = a::opt_tensor(x2_offset, offset_arg)?;
        let b = a::opt_tensor(bias, "bias")?;
        let o = a::tensor(out, "out")?;
        // yOffset: nullptr or an empty tensor (torch_npu's placeholder) is absent
        let yo = match &v5 {
            Some(v) => a::opt_tensor(v.y_offset, "yOffset")?.filter(|t| t.numel() != 0),
            None => None,
        };
        let (g_m, g_n, g_k) = split_group(v5.as_ref().map_or(0, |v| v.group_size));
        for t in [&x1, &x2] {
            if !matches!(t.dtype(), DType::I8 | DType::I32) {
                return Err(NnError::invalid(format!(
                    "{} has data type {}; it must be INT8 or INT32 (int4 packed eight to a \
                     word)",
                    t.arg,
                    t.dtype()
                )));
            }
        }
        let (p1, p2) = (x1.dtype() == DType::I32, x2.dtype() == DType::I32);
        if p1 && !p2 {
            return Err(NnError::invalid(
                "x1 is INT32 (int4) but x2 is INT8; int4 x1 needs int4 (INT32) x2",
            ));
        }
        if p2 && w2.nz.is_some() {
            return Err(NnError::invalid(
                "x2 is INT32 (int4) in FRACTAL_NZ; packed int4 x2 must be ND",
            ));
        }
        for t in [&x1, &x2, &o] {
            if t.ndim() < 2 || t.ndim() > 6 {
                return Err(NnError::invalid(format!(
                    "{} must have 2 to 6 dimensions, but its shape is {:?}",
                    t.arg,
                    t.shape()
                )));
            }
            if t.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "{} is empty (shape {:?}); the reference does not support empty tensors",
                    t.arg,
                    t.shape()
                )));
            }
        }
        let (x1s, ax1) = logical_shape(&x1)?;
        let (x2s, ax2) = logical_shape(&x2)?;
        let (n1, n2) = (x1s.len(), x2s.len());
        let (m, k1) = if trans_x1 {
            (x1s[n1 - 1], x1s[n1 - 2])
        } else {
            (x1s[n1 - 2], x1s[n1 - 1])
        };
        let (k2, n) = if trans_x2 {
            (x2s[n2 - 1], x2s[n2 - 2])
        } else {
            (x2s[n2 - 2], x2s[n2 - 1])
        };
        if k1 != k2 {
            return Err(NnError::invalid(format!(
                "x1 {:?} (transposeX1 {trans_x1}) and x2 {:?} (transposeX2 {trans_x2}) have \
                 different k: {k1} and {k2}{}",
                x1.shape(),
                x2.shape(),
                if p1 || p2 {
                    " (INT32 holds eight int4 values a word)"
                } else {
                    ""
                }
            )));
        }
        let k = k1;
        if (p1 || p2) && (n1 != 2 || n2 != 2) {
            return Err(NnError::invalid(format!(
                "int4 (INT32) x1/x2 must be 2-D (x1 {:?}, x2 {:?})",
                x1.shape(),
                x2.shape()
            )));
        }
        let batch = npu_emu::ops::view::broadcast_shapes(&x1s[..n1 - 2], &x2s[..n2 - 2])
            .ok_or_else(|| {
                NnError::invalid(format!(
                    "the batch dimensions of x1 {:?} and x2 {:?} do not broadcast",
                    x1.shape(),
                    x2.shape()
                ))
            })?;
        let mut os = batch.clone();
        os.extend([m, n]);
        a::same_shape(&o, &os)?;
        let grouped_scales = ps.as_ref().is_some_and(|p| p.ndim() == 2) && s.ndim() == 2;

        // ---- G-B (pergroup-perblock): INT8 x1, x2, 2-D float scales, [1, 128, 128]
        if !p1 && !p2 && grouped_scales && s.dtype() == DType::F32 {
            let ps = ps.expect("checked: x1Scale present");
            if v5.is_none() {
                return Err(NnError::invalid(format!(
                    "{pertoken_arg} {:?} and {scale_arg} {:?} are 2-D: the pergroup-perblock \
                     mode is aclnnQuantMatmulV5's (with groupSize)",
                    ps.shape(),
                    s.shape()
                )));
            }
            let gs = (g_m, g_n, g_k);
            if gs != (1, 128, 128) && gs != (0, 0, 0) {
                return Err(NnError::invalid(format!(
                    "groupSize [{g_m}, {g_n}, {g_k}] (M, N, K): the G-B mode of INT8 x1 and \
                     x2 takes [1, 128, 128] (or 0 to infer it from the scales)"
                )));
            }
            if o.ndim() != 2 || w2.nz.is_some() {
                return Err(NnError::invalid("the G-B mode takes 2-D ND x1, x2 and out"));
            }
            float32(&ps)?;
            let (kb, nb) = (k.div_ceil(128), n.div_ceil(128));
            let want1 = if trans_x1 { [kb, m] } else { [m, kb] };
            let want2 = if trans_x2 { [nb, kb] } else { [kb, nb] };
            a::same_shape(&ps, &want1)?;
            a::same_shape(&s, &want2)?;
            if k % 512 != 0 || n % 256 != 0 {
                return Err(NnError::invalid(format!(
                    "the G-B mode needs k a multiple of 4 * 128 and n a multiple of 256 \
                     (k {k}, n {n})"
                )));
            }
            if let Some(t) = &off {
                return Err(NnError::invalid(format!(
                    "{} is not supported in the G-B mode; pass nullptr",
                    t.arg
                )));
            }
            if yo.is_some() {
                return Err(NnError::invalid(
                    "yOffset is not supported in the G-B mode; pass nullptr",
                ));
            }
            if let Some(bt) = &b {
                float32(bt)?;
                a::same_shape(bt, &[n])?;
            }
            if o.dtype() != DType::BF16 {
                return Err(NnError::invalid(format!(
                    "out has data type {}; the G-B mode writes BFLOAT16",
                    o.dtype()
                )));
            }
            let mut l = Launch::new(api);
            l.input(&x1);
            l.input(&x2);
            l.input(&ps);
            l.input(&s);
            let bi = b.as_ref().map(|t| l.input(t));
            let yi = l.output(&o);
            return l.finish(move |v, _| {
                quant::quant_matmul_blocks(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    bi.map(|i| &v[i]),
                    trans_x1,
                    trans_x2,
                    (1, 128, 128),
                    &v[yi],
                )
            });
        }

        // ---- A8W4: INT8 x1, int4 x2 (INT32), per channel or K-G (groups of 256 along k)
        if !p1 && p2 {
            if v5.is_none() {
                return Err(NnError::invalid(
                    "INT8 x1 with INT32 (int4) x2 is aclnnQuantMatmulV5's A8W4 mode",
                ));
            }
            if trans_x1 || trans_x2 || ax1.is_some() || ax2 != Some(1) {
                return Err(NnError::invalid(
                    "the A8W4 mode (INT8 x1, INT32 x2) takes x1 (m, k) and x2 (k, n / 8) \
                     untransposed",
                ));
            }
            let ps = ps.ok_or_else(|| {
                NnError::invalid(format!(
                    "{pertoken_arg} is required in the A8W4 mode (INT8 x1, INT32 x2)"
                ))
            })?;
            float32(&ps)?;
            if !(ps.shape() == [m, 1] || ps.shape() == [m]) {
                return Err(NnError::invalid(format!(
                    "{} shape {:?} must be [{m}, 1]",
                    ps.arg,
                    ps.shape()
                )));
            }
            a::dtype_in(&s, QPARAM)?;
            let group = if s.ndim() == 2 {
                if !(g_k == 256 || (g_m, g_n, g_k) == (0, 0, 0)) || g_m != 0 || g_n != 0 {
                    return Err(NnError::invalid(format!(
                        "groupSize [{g_m}, {g_n}, {g_k}] (M, N, K): the K-G mode takes \
                         [0, 0, 256]"
                    )));
                }
                if k % 256 != 0 {
                    return Err(NnError::invalid(format!(
                        "the K-G mode needs k a multiple of 256 (k {k})"
                    )));
                }
                a::same_shape(&s, &[k / 256, n])?;
                256
            } else {
                if (g_m, g_n, g_k) != (0, 0, 0) {
                    return Err(NnError::invalid(format!(
                        "groupSize {}: a 1-D {scale_arg} (per channel) takes groupSize 0",
                        v5.as_ref().map_or(0, |v| v.group_size)
                    )));
                }
                a::same_shape(&s, &[n])?;
                k
            };
            if let Some(t) = &off {
                return Err(NnError::invalid(format!(
                    "{} is not supported in the A8W4 mode; pass nullptr",
                    t.arg
                )));
            }
            if b.is_some() {
                return Err(NnError::invalid(
                    "bias is not supported in the A8W4 mode; pass nullptr",
                ));
            }
            let yo = yo.ok_or_else(|| {
                NnError::invalid("yOffset (FLOAT, [n]) is required in the A8W4 mode")
            })?;
            float32(&yo)?;
            a::same_shape(&yo, &[n])?;
            if !matches!(o.dtype(), DType::F16 | DType::BF16) {
                return Err(NnError::invalid(format!(
                    "out has data type {}; the A8W4 mode writes FLOAT16 or BFLOAT16",
                    o.dtype()
                )));
            }
            let mut l = Launch::new(api);
            l.input(&x1);
            l.input(&x2);
            l.input(&ps);
            l.input(&s);
            l.input(&yo);
            let yi = l.output(&o);
            return l.finish(move |v, _| {
                let w = quant::unpack_int4(&v[1], 1)?;
                quant::quant_matmul_a8w4(&v[0], &w.view, &v[2], &v[3], group, Some(&v[4]), &v[yi])
            });
        }

        if let Some(v) = &v5 {
            if v.group_size != 0 {
                return Err(NnError::invalid(format!(
                    "groupSize [{g_m}, {g_n}, {g_k}] (M, N, K) applies to the G-B mode (INT8 \
                     x1 and x2 with 2-D x1Scale and x2Scale) and the K-G mode (INT8 x1, INT32 \
                     x2); pass 0 for per-tensor and per-channel scales"
                )));
            }
        }
        if yo.is_some() {
            return Err(NnError::invalid(
                "yOffset applies to the A8W4 mode (INT8 x1, INT32 x2) only; pass nullptr",
            ));
        }
        a::dtype_in(&s, &[DType::U64, DType::I64, DType::F32, DType::BF16])?;
        per_column(&s, n)?;
        if let Some(p) = &ps {
            float32(p)?;
            a::same_shape(p, &[m])?;
        }
        if let Some(t) = &off {
            float32(t)?;
            per_column(t, n)?;
        }
        if let Some(bt) = &b {
            let ok = bt.shape() == [n]
                || (!p1 && bt.ndim() == 3 && o.ndim() == 3 && bt.shape() == [batch[0], 1, n]);
            if !ok {
                return Err(NnError::invalid(format!(
                    "bias shape {:?} must be [{n}]{}",
                    bt.shape(),
                    if p1 {
                        " for int4 x1 and x2"
                    } else {
                        " (or [batch, 1, n] for a 3-D out)"
                    }
                )));
            }
        }
        // The reference's dtype combinations (Atlas A2/A3; int4 x1 and x2 share those of
        // FLOAT16 and BFLOAT16 outputs).
        let sd = s.dtype();
        let bd = b.as_ref().map(|t| t.dtype());
        let int_bias = matches!(bd, None | Some(DType::I32));
        let ok = match o.dtype() {
            DType::F16 => {
                (QPARAM.contains(&sd) && ps.is_none() && int_bias)
                    || (sd == DType::F32
                        && ps.is_some()
                        && matches!(bd, None | Some(DType::I32 | DType::F16 | DType::F32)))
            }
            DType::BF16 => {
                matches!(sd, DType::F32 | DType::BF16)
                    && (ps.is_some() || !p1)
                    && matches!(bd, None | Some(DType::I32 | DType::BF16 | DType::F32))
            }
            DType::I8 => !p1 && QPARAM.contains(&sd) && ps.is_none() && int_bias,
            DType::I32 => !p1 && matches!(sd, DType::F32 | DType::BF16) && ps.is_none() && int_bias,
            _ => false,
        } && (off.is_none() || o.dtype() == DType::I8);
        if !ok {
            return Err(NnError::invalid(format!(
                "the combination {scale_arg} {sd}, {pertoken_arg} {}, {offset_arg} {}, bias \
                 {}, out {} is not one the reference supports for {} x1 and x2",
                dtype_name(ps.as_ref()),
                dtype_name(off.as_ref()),
                dtype_name(b.as_ref()),
                o.dtype(),
                if p1 { "int4 (INT32)" } else { "INT8" }
            )));
        }
        let mut l = Launch::new(api);
        l.input(&x1);
        let nz = super::matmul::add_weight(&mut l, &w2);
        let x2_shape = x2.shape().to_vec();
        l.input(&s);
        let mut next = 3;
        let mut slot = |t: &Option<T>, l: &mut Launch| {
            t.as_ref().map(|t| {
                l.input(t);
                next += 1;
                next - 1
            })
        };
        let pi = slot(&ps, &mut l);
        let oi = slot(&off, &mut l);
        let bi = slot(&b, &mut l);
        let yi = l.output(&o);
        l.finish(move |v, _| {
            let u1 = ax1.map(|ax| quant::unpack_int4(&v[0], ax)).transpose()?;
            let u2 = ax2.map(|ax| quant::unpack_int4(&v[1], ax)).transpose()?;
            let (x2v, _keep) = match &u2 {
                Some(u) => (u.view.clone(), None),
                None => super::matmul::weight_view(&v[1], &nz, &x2_shape)?,
            };
            quant::quant_matmul(
                u1.as_ref().map_or(&v[0], |u| &u.view),
                &x2v,
                pi.map(|i| &v[i]),
                &v[2],
                oi.map(|i| &v[i]),
                bi.map(|i| &v[i]),
                trans_x1,
                trans_x2,
                &v[yi],
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulV3GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    bias: *const c_void,
    transposeX1: bool,
    transposeX2: bool,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    quant_matmul(
        "aclnnQuantMatmulV3GetWorkspaceSize",
        "aclnnQuantMatmulV3",
        x1,
        x2,
        std::ptr::null(),
        scale,
        offset,
        bias,
        transposeX1,
        transposeX2,
        out,
        workspaceSize,
        executor,
        "scale",
        "pertokenScaleOptional",
        "offset",
        None,
        || Ok(()),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulV4GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    pertokenScaleOptional: *const c_void,
    bias: *const c_void,
    transposeX1: bool,
    transposeX2: bool,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    quant_matmul(
        "aclnnQuantMatmulV4GetWorkspaceSize",
        "aclnnQuantMatmulV4",
        x1,
        x2,
        pertokenScaleOptional,
        scale,
        offset,
        bias,
        transposeX1,
        transposeX2,
        out,
        workspaceSize,
        executor,
        "scale",
        "pertokenScaleOptional",
        "offset",
        None,
        || Ok(()),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulV5GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    x1Scale: *const c_void,
    x2Scale: *const c_void,
    yScale: *const c_void,
    x1Offset: *const c_void,
    x2Offset: *const c_void,
    yOffset: *const c_void,
    bias: *const c_void,
    transposeX1: bool,
    transposeX2: bool,
    groupSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    quant_matmul(
        "aclnnQuantMatmulV5GetWorkspaceSize",
        "aclnnQuantMatmulV5",
        x1,
        x2,
        x1Scale,
        x2Scale,
        x2Offset,
        bias,
        transposeX1,
        transposeX2,
        out,
        workspaceSize,
        executor,
        "x2Scale",
        "x1Scale",
        "x2Offset",
        Some(V5 {
            y_offset: yOffset,
            group_size: groupSize,
        }),
        // yScale is the T-CG mode (Ascend 950 only); x1Offset is reserved
        || {
            if !yScale.is_null() {
                return Err(NnError::invalid(
                    "yScale (the T-CG mode) is documented for Ascend 950 only, not for the \
                     Atlas A2/A3 npu-emu emulates; pass nullptr",
                ));
            }
            absent(x1Offset, "x1Offset")
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTransQuantParamV2GetWorkspaceSize(
    scale: *const c_void,
    offset: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    trans_quant_param(
        [
            "aclnnTransQuantParamV2GetWorkspaceSize",
            "aclnnTransQuantParamV2",
        ],
        scale,
        offset,
        0,
        out,
        workspaceSize,
        executor,
    )
}

/// TransQuantParamV2 and V3 (`roundMode` 0 truncates the scale to FP19 as V2 does, 1 rounds).
pub(super) unsafe fn trans_quant_param(
    [name, api]: [&'static str; 2],
    scale: *const c_void,
    offset: *const c_void,
    round: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspaceSize, executor, || {
        if round != 0 && round != 1 {
            return Err(NnError::invalid(format!(
                "roundMode {round} must be 0 (truncate, as V2) or 1 (round)"
            )));
        }
        let s = a::tensor(scale, "scale")?;
        let off = a::opt_tensor(offset, "offset")?;
        let o = a::tensor(out, "out")?;
        for t in std::iter::once(&s).chain(off.as_ref()) {
            if t.dtype() != DType::F32 {
                return Err(NnError::invalid(format!(
                    "{} has data type {}; it must be FLOAT",
                    t.arg,
                    t.dtype()
                )));
            }
            let ok = t.ndim() == 1 || (t.ndim() == 2 && t.shape()[0] == 1);
            if !ok || t.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "{} shape {:?} must be (t,) or (1, n), not empty",
                    t.arg,
                    t.shape()
                )));
            }
        }
        a::dtype_in(&o, QPARAM)?;
        let want: Vec<usize> = if s.ndim() == 1 {
            let t = off.as_ref().map_or(s.numel(), |f| f.numel().max(s.numel()));
            vec![t]
        } else {
            s.shape().to_vec()
        };
        let len = want.iter().product::<usize>();
        for t in std::iter::once(&s).chain(off.as_ref()) {
            if t.numel() != 1 && t.numel() != len {
                return Err(NnError::invalid(format!(
                    "{} has {} elements; scale and offset must have 1 or {len}",
                    t.arg,
                    t.numel()
                )));
            }
        }
        a::same_shape(&o, &want)?;
        let mut l = Launch::new(api);
        l.input(&s);
        let has_o = off.is_some();
        if let Some(f) = &off {
            l.input(f);
        }
        let yi = l.output(&o);
        l.finish(move |v, _| {
            let off = if has_o { Some(&v[1]) } else { None };
            quant::trans_quant_param_v3(&v[0], off, round == 1, &v[yi])
        })
    })
}

crate::phase2!(
    aclnnQuantMatmulV3,
    aclnnQuantMatmulV4,
    aclnnQuantMatmulV5,
    aclnnTransQuantParamV2
);

// ---------------------------------------------------------------- weight-quantised matmul

#[allow(clippy::too_many_arguments)]
unsafe fn weight_quant_matmul(
    name: &'static str,
    api: &'static str,
    x: *const c_void,
    weight: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    quant_scale: *const c_void,
    quant_offset: *const c_void,
    bias: *const c_void,
    group: i32,
    inner_precise: Option<i32>,
    y: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let x = a::tensor(x, "x")?;
        let w = a::tensor(weight, "weight")?;
        let s = a::tensor(scale, "antiquantScale")?;
        let off = a::opt_tensor(offset, "antiquantOffsetOptional")?;
        let qs = a::opt_tensor(quant_scale, "quantScaleOptional")?;
        let qo = a::opt_tensor(quant_offset, "quantOffsetOptional")?;
        let b = a::opt_tensor(bias, "biasOptional")?;
        let y = a::tensor(y, "y")?;
        if let Some(p) = inner_precise {
            if p != 0 && p != 1 {
                return Err(NnError::invalid(format!(
                    "innerPrecise {p} must be 0 (high precision) or 1 (high performance)"
                )));
            }
        }
        a::dtype_in(&x, &[DType::F16, DType::BF16])?;
        if !matches!(w.dtype(), DType::I8 | DType::I32) {
            return Err(NnError::invalid(format!(
                "weight has data type {}; it must be INT8, or INT32 holding int4 values eight \
                 to a word",
                w.dtype()
            )));
        }
        for t in [&x, &w] {
            if t.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "{} must be 2-D, but its shape is {:?}",
                    t.arg,
                    t.shape()
                )));
            }
        }
        // INT32: int4 values packed eight a word along the weight's contiguous axis
        let (w_shape, packed) = logical_shape(&w)?;
        let (m, k) = (x.shape()[0], x.shape()[1]);
        let n = w_shape[1];
        if w_shape[0] != k {
            return Err(NnError::invalid(format!(
                "x {:?} and weight {:?} have different k",
                x.shape(),
                w.shape()
            )));
        }
        if x.numel() == 0 || w.numel() == 0 {
            return Err(NnError::invalid(format!(
                "x {:?} and weight {:?} must not be empty",
                x.shape(),
                w.shape()
            )));
        }
        same_dtype(&s, &x)?;
        if let Some(o) = &off {
            same_dtype(o, &s)?;
            a::same_shape(o, s.shape())?;
        }
        let transposed = match packed {
            Some(ax) => ax == 0,
            None => w.layout.strides[0] == 1 && n > 1 && w.layout.strides[1] > 1,
        };
        let sh = s.shape();
        let layout = if group == 0 {
            if s.numel() == 1 && sh.len() <= 2 {
                quant::AntiquantLayout::Tensor
            } else if sh == [n] || sh == [1, n] || sh == [n, 1] {
                quant::AntiquantLayout::Channel
            } else {
                return Err(NnError::invalid(format!(
                    "antiquantScale shape {sh:?} must be [1] (per tensor) or [{n}], [1, {n}], \
                     [{n}, 1] (per channel) when antiquantGroupSize is 0"
                )));
            }
        } else {
            let gs = group as usize;
            if group < 32 || group % 32 != 0 || gs >= k {
                return Err(NnError::invalid(format!(
                    "antiquantGroupSize {group} must be 0 or a multiple of 32 in [32, k - 1] \
                     (k = {k})"
                )));
            }
            let g = k.div_ceil(gs);
            if sh == [g, n] && !(transposed && g == n) {
                quant::AntiquantLayout::GroupKn(gs)
            } else if sh == [n, g] {
                quant::AntiquantLayout::GroupNk(gs)
            } else {
                return Err(NnError::invalid(format!(
                    "antiquantScale shape {sh:?} must be [{g}, {n}] (or [{n}, {g}] for a \
                     transposed weight) for antiquantGroupSize {group} and k = {k}"
                )));
            }
        };
        let col_shape = |t: &T| t.shape() == [1] || t.shape() == [n] || t.shape() == [1, n];
        if let Some(q) = &qs {
            a::dtype_in(q, QPARAM)?;
            if !col_shape(q) {
                return Err(NnError::invalid(format!(
                    "quantScaleOptional shape {:?} must be [1], [{n}] or [1, {n}]",
                    q.shape()
                )));
            }
            out_int8(&y)?;
        } else {
            if qo.is_some() {
                return Err(NnError::invalid(
                    "quantOffsetOptional needs quantScaleOptional",
                ));
            }
            same_dtype(&y, &x)?;
        }
        if let Some(o) = &qo {
            if o.dtype() != DType::F32 || !col_shape(o) {
                return Err(NnError::invalid(format!(
                    "quantOffsetOptional ({} {:?}) must be FLOAT of [1], [{n}] or [1, {n}]",
                    o.dtype(),
                    o.shape()
                )));
            }
        }
        if let Some(bt) = &b {
            let ok = match x.dtype() {
                DType::F16 => bt.dtype() == DType::F16,
                _ => matches!(bt.dtype(), DType::F32 | DType::BF16),
            };
            if !ok {
                return Err(NnError::invalid(format!(
                    "biasOptional has data type {}; x {} takes {}",
                    bt.dtype(),
                    x.dtype(),
                    if x.dtype() == DType::F16 {
                        "FLOAT16"
                    } else {
                        "FLOAT or BFLOAT16"
                    }
                )));
            }
            if bt.shape() != [n] && bt.shape() != [1, n] {
                return Err(NnError::invalid(format!(
                    "biasOptional shape {:?} must be [{n}] or [1, {n}]",
                    bt.shape()
                )));
            }
        }
        a::same_shape(&y, &[m, n])?;
        let mut l = Launch::new(api);
        l.input(&x);
        l.input(&w);
        l.input(&s);
        let mut next = 3;
        let mut slot = |t: &Option<T>, l: &mut Launch| {
            t.as_ref().map(|t| {
                l.input(t);
                next += 1;
                next - 1
            })
        };
        let oi = slot(&off, &mut l);
        let qsi = slot(&qs, &mut l);
        let qoi = slot(&qo, &mut l);
        let bi = slot(&b, &mut l);
        let yi = l.output(&y);
        l.finish(move |v, _| {
            let unpacked = match packed {
                Some(ax) => Some(quant::unpack_int4(&v[1], ax)?),
                None => None,
            };
            quant::weight_quant_matmul(
                &v[0],
                unpacked.as_ref().map_or(&v[1], |u| &u.view),
                &v[2],
                oi.map(|i| &v[i]),
                qsi.map(|i| &v[i]),
                qoi.map(|i| &v[i]),
                bi.map(|i| &v[i]),
                layout,
                &v[yi],
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    antiquantScale: *const c_void,
    antiquantOffsetOptional: *const c_void,
    quantScaleOptional: *const c_void,
    quantOffsetOptional: *const c_void,
    biasOptional: *const c_void,
    antiquantGroupSize: i32,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    weight_quant_matmul(
        "aclnnWeightQuantBatchMatmulV2GetWorkspaceSize",
        "aclnnWeightQuantBatchMatmulV2",
        x,
        weight,
        antiquantScale,
        antiquantOffsetOptional,
        quantScaleOptional,
        quantOffsetOptional,
        biasOptional,
        antiquantGroupSize,
        None,
        y,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnWeightQuantBatchMatmulV3GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    antiquantScale: *const c_void,
    antiquantOffsetOptional: *const c_void,
    quantScaleOptional: *const c_void,
    quantOffsetOptional: *const c_void,
    biasOptional: *const c_void,
    antiquantGroupSize: i32,
    innerPrecise: i32,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    weight_quant_matmul(
        "aclnnWeightQuantBatchMatmulV3GetWorkspaceSize",
        "aclnnWeightQuantBatchMatmulV3",
        x,
        weight,
        antiquantScale,
        antiquantOffsetOptional,
        quantScaleOptional,
        quantOffsetOptional,
        biasOptional,
        antiquantGroupSize,
        Some(innerPrecise),
        y,
        workspaceSize,
        executor,
    )
}

crate::phase2!(aclnnWeightQuantBatchMatmulV2, aclnnWeightQuantBatchMatmulV3);

// ---------------------------------------------------------------- grouped matmul

/// An optional `aclTensorList*`: nullptr or an empty list is absent (CANN's
/// `ResetEmptyTensor`; torch_npu passes empty lists).
fn opt_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<T>> {
    if h.is_null() {
        Ok(Vec::new())
    } else {
        a::tensor_list(h, arg)
    }
}

fn unsupported_list(h: *const c_void, arg: &'static str) -> NnResult<()> {
    if opt_list(h, arg)?.iter().any(|t| t.numel() != 0) {
        return Err(NnError::invalid(format!(
            "{arg} (quantised or activation-fused GroupedMatmul) is not supported by npu-emu; \
             pass nullptr"
        )));
    }
    Ok(())
}

/// GroupedMatmul's `actType` (CANN's `GMMActType`: 0 none, 1 relu, 2 gelu_tanh, 3
/// gelu_err_func, 4 fast_gelu, 5 silu) in a mode `mode` that computes no activation.
///
/// CANN computes the fused activation only in the A8W8 quantised modes with a FLOAT16 or
/// BFLOAT16 output (per-channel dequantisation or per-token quantisation; the
/// aclnnGroupedMatmulV4 constraints: only the per-token quantised and the dequantised cases
/// support the activation); its non-quantised, weight-only (antiquant) and A4W4 modes take 0,
/// and it refuses 3 (GELU_ERR_FUNC) and anything outside 0..=5 in every mode. The A8W8 mode
/// (`gmm_a8w8.rs`) takes 1, 2, 4, 5 with a float output and calls this for the rest; the
/// message names which rule a value breaks.
pub(super) fn gmm_act_type(act_type: i64, mode: &str) -> NnResult<()> {
    let name = match act_type {
        0 => return Ok(()),
        1 => "GMM_ACT_TYPE_RELU",
        2 => "GMM_ACT_TYPE_GELU_TANH",
        3 => {
            return Err(NnError::invalid(
                "actType 3 (GMM_ACT_TYPE_GELU_ERR_FUNC) is not supported by GroupedMatmul; \
                 the activations are 1 (relu), 2 (gelu_tanh), 4 (fast_gelu) and 5 (silu)",
            ))
        }
        4 => "GMM_ACT_TYPE_FAST_GELU",
        5 => "GMM_ACT_TYPE_SILU",
        _ => {
            return Err(NnError::invalid(format!(
                "actType {act_type} is out of range: GMMActType takes 0 (none), 1 (relu), 2 \
                 (gelu_tanh), 3 (gelu_err_func, not supported), 4 (fast_gelu) or 5 (silu)"
            )))
        }
    };
    Err(NnError::invalid(format!(
        "actType {act_type} ({name}): GroupedMatmul computes a fused activation only in the A8W8 \
         quantised modes with FLOAT16/BFLOAT16 output (per-channel dequantisation or per-token \
         quantisation); {mode} takes actType 0"
    )))
}

#[allow(clippy::too_many_arguments)]
unsafe fn grouped_matmul(
    name: &'static str,
    api: &'static str,
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    quant: [(*const c_void, &'static str); 8],
    group_list: *const c_void,
    split_item: i64,
    group_type: i64,
    group_list_type: i64,
    act_type: i64,
    out: *const c_void,
    extra_outs: [(*const c_void, &'static str); 2],
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
    pre: impl FnOnce() -> NnResult<()>,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        pre()?;
        let xs = a::tensor_list(x, "x")?;
        let ws = a::tensor_list(weight, "weight")?;
        let bs = opt_list(bias, "biasOptional")?;
        let ys = a::tensor_list(out, "out")?;
        for (h, arg) in quant.into_iter().chain(extra_outs) {
            unsupported_list(h, arg)?;
        }
        let gl = a::opt_tensor(group_list, "groupListOptional")?;
        gmm_act_type(act_type, "the non-quantised mode")?;
        if !(0..=3).contains(&split_item) {
            return Err(NnError::invalid(format!(
                "splitItem {split_item} must be 0, 1, 2 or 3"
            )));
        }
        if group_list_type != 0 && group_list_type != 1 {
            return Err(NnError::invalid(format!(
                "groupListType {group_list_type} must be 0 (cumulative) or 1 (counts)"
            )));
        }
        if xs.is_empty() || ws.is_empty() || ys.is_empty() {
            return Err(NnError::invalid(
                "x, weight and out must not be empty lists",
            ));
        }
        let dt = xs[0].dtype();
        a::dtype_in(&xs[0], &[DType::F16, DType::BF16, DType::F32])?;
        for t in xs.iter().chain(&ws).chain(&ys) {
            if t.dtype() != dt {
                return Err(NnError::invalid(format!(
                    "{} has data type {}, but x has {dt}; without quantisation x, weight and \
                     out share one floating type",
                    t.arg,
                    t.dtype()
                )));
            }
        }
        float_bias(&bs, dt)?;
        let matrix = |w: &T| -> NnResult<(usize, usize)> {
            if w.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "weight must be a list of [K, N] tensors or one [E, K, N], but one has \
                     shape {:?}",
                    w.shape()
                )));
            }
            Ok((w.shape()[0], w.shape()[1]))
        };
        match group_type {
            -1 => {
                if gl.is_some() {
                    return Err(NnError::invalid(
                        "groupListOptional must be nullptr when groupType is -1 (no grouping)",
                    ));
                }
                if split_item > 1 || ws.len() != xs.len() || ys.len() != xs.len() {
                    return Err(NnError::invalid(format!(
                        "groupType -1 takes splitItem 0 or 1 and as many weights and outputs as \
                         x tensors ({} x, {} weight, {} out, splitItem {split_item})",
                        xs.len(),
                        ws.len(),
                        ys.len()
                    )));
                }
                if !bs.is_empty() && bs.len() != xs.len() {
                    return Err(NnError::invalid(format!(
                        "biasOptional has {} tensors for {} groups",
                        bs.len(),
                        xs.len()
                    )));
                }
                for (i, (xi, wi)) in xs.iter().zip(&ws).enumerate() {
                    let (k, n) = matrix(wi)?;
                    if xi.ndim() < 2 || xi.ndim() > 6 || xi.shape()[xi.ndim() - 1] != k {
                        return Err(NnError::invalid(format!(
                            "x[{i}] shape {:?} must be [..., {k}] (2 to 6 dimensions) for weight \
                             [{k}, {n}]",
                            xi.shape()
                        )));
                    }
                    let mut os = xi.shape().to_vec();
                    *os.last_mut().unwrap() = n;
                    a::same_shape(&ys[i], &os)
                        .map_err(|e| e.with_suffix(format!(" (out[{i}])")))?;
                    if let Some(b) = bs.get(i) {
                        a::same_shape(b, &[n])?;
                    }
                }
            }
            0 => {
                let Some(g) = &gl else {
                    return Err(NnError::nullptr(
                        "groupListOptional is nullptr; groupType 0 (split along M) needs it",
                    ));
                };
                if g.dtype() != DType::I64 || g.ndim() != 1 {
                    return Err(NnError::invalid(format!(
                        "groupListOptional must be a 1-D INT64 tensor, not {} {:?}",
                        g.dtype(),
                        g.shape()
                    )));
                }
                let e = g.numel();
                if xs.len() != 1 || xs[0].ndim() != 2 {
                    return Err(NnError::invalid(
                        "groupType 0 takes one 2-D x [M, K], cut into groups by groupListOptional",
                    ));
                }
                let (m, k) = (xs[0].shape()[0], xs[0].shape()[1]);
                let kn: Vec<(usize, usize)> = if ws.len() == 1 && ws[0].ndim() == 3 {
                    if ws[0].shape()[0] != e {
                        return Err(NnError::invalid(format!(
                            "weight {:?} has {} experts, groupListOptional {e}",
                            ws[0].shape(),
                            ws[0].shape()[0]
                        )));
                    }
                    vec![(ws[0].shape()[1], ws[0].shape()[2]); e]
                } else if ws.len() == e {
                    ws.iter().map(matrix).collect::<NnResult<_>>()?
                } else {
                    return Err(NnError::invalid(format!(
                        "weight has {} tensors for {e} groups",
                        ws.len()
                    )));
                };
                let n = kn[0].1;
                if kn.iter().any(|&(kk, nn)| kk != k || nn != n) {
                    return Err(NnError::invalid(format!(
                        "every weight must be [{k}, {n}] for x [{m}, {k}]"
                    )));
                }
                if !bs.is_empty() {
                    let ok = (bs.len() == 1 && bs[0].shape() == [e, n])
                        || (bs.len() == e && bs.iter().all(|b| b.shape() == [n]));
                    if !ok {
                        return Err(NnError::invalid(format!(
                            "biasOptional must be {e} tensors [{n}] or one [{e}, {n}]"
                        )));
                    }
                }
                if split_item >= 2 {
                    if ys.len() != 1 {
                        return Err(NnError::invalid(format!(
                            "splitItem {split_item} writes one output, but out has {}",
                            ys.len()
                        )));
                    }
                    a::same_shape(&ys[0], &[m, n])?;
                } else {
                    if ys.len() != e {
                        return Err(NnError::invalid(format!(
                            "splitItem {split_item} writes one output per group ({e}), but out \
                             has {}",
                            ys.len()
                        )));
                    }
                    for y in &ys {
                        if y.ndim() != 2 || y.shape()[1] != n {
                            return Err(NnError::invalid(format!(
                                "every out tensor must be [rows, {n}], not {:?}",
                                y.shape()
                            )));
                        }
                    }
                }
            }
            2 => {
                return Err(NnError::invalid(
                    "groupType 2 (split along K) is not supported by npu-emu",
                ))
            }
            _ => {
                return Err(NnError::invalid(format!(
                    "groupType {group_type} must be -1 (none), 0 (M) or 2 (K)"
                )))
            }
        }
        let mut l = Launch::new(api);
        let xi = l.inputs(&xs);
        let wi = l.inputs(&ws);
        let nx = xs.len();
        let nw = ws.len();
        let nb = bs.len();
        let bi = if nb > 0 { l.inputs(&bs) } else { 0 };
        let gi = gl.as_ref().map(|g| l.input(g));
        let yi = l.outputs(&ys);
        let ny = ys.len();
        let counts = group_list_type == 1;
        l.finish(move |v, _| {
            quant::grouped_matmul(
                &v[xi..xi + nx],
                &v[wi..wi + nw],
                &v[bi..bi + nb],
                gi.map(|i| &v[i]),
                counts,
                &v[yi..yi + ny],
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulV4GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    biasOptional: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    perTokenScaleOptional: *const c_void,
    groupListOptional: *const c_void,
    activationInputOptional: *const c_void,
    activationQuantScaleOptional: *const c_void,
    activationQuantOffsetOptional: *const c_void,
    splitItem: i64,
    groupType: i64,
    groupListType: i64,
    actType: i64,
    out: *mut c_void,
    activationFeatureOutOptional: *mut c_void,
    dynQuantScaleOutOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    if let Some(r) = super::quant31::gmm_quantised(
        "aclnnGroupedMatmulV4GetWorkspaceSize",
        "aclnnGroupedMatmulV4",
        super::quant31::GmmArgs {
            x,
            weight,
            bias: biasOptional,
            scale: scaleOptional,
            offset: offsetOptional,
            antiquant_scale: antiquantScaleOptional,
            antiquant_offset: antiquantOffsetOptional,
            per_token: perTokenScaleOptional,
            group_list: groupListOptional,
            activation: [
                activationInputOptional,
                activationQuantScaleOptional,
                activationQuantOffsetOptional,
                activationFeatureOutOptional as *const c_void,
                dynQuantScaleOutOptional as *const c_void,
            ],
            split_item: splitItem,
            group_type: groupType,
            group_list_type: groupListType,
            act_type: actType,
            out: out as *const c_void,
            weight_nz_api: false,
        },
        workspaceSize,
        executor,
    ) {
        return r;
    }
    grouped_matmul(
        "aclnnGroupedMatmulV4GetWorkspaceSize",
        "aclnnGroupedMatmulV4",
        x,
        weight,
        biasOptional,
        [
            (scaleOptional, "scaleOptional"),
            (offsetOptional, "offsetOptional"),
            (antiquantScaleOptional, "antiquantScaleOptional"),
            (antiquantOffsetOptional, "antiquantOffsetOptional"),
            (perTokenScaleOptional, "perTokenScaleOptional"),
            (activationInputOptional, "activationInputOptional"),
            (activationQuantScaleOptional, "activationQuantScaleOptional"),
            (
                activationQuantOffsetOptional,
                "activationQuantOffsetOptional",
            ),
        ],
        groupListOptional,
        splitItem,
        groupType,
        groupListType,
        actType,
        out,
        [
            (activationFeatureOutOptional, "activationFeatureOutOptional"),
            (dynQuantScaleOutOptional, "dynQuantScaleOutOptional"),
        ],
        workspaceSize,
        executor,
        || Ok(()),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulV5GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    biasOptional: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    perTokenScaleOptional: *const c_void,
    groupListOptional: *const c_void,
    activationInputOptional: *const c_void,
    activationQuantScaleOptional: *const c_void,
    activationQuantOffsetOptional: *const c_void,
    splitItem: i64,
    groupType: i64,
    groupListType: i64,
    actType: i64,
    tuningConfigOptional: *const c_void,
    out: *mut c_void,
    activationFeatureOutOptional: *mut c_void,
    dynQuantScaleOutOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    if let Some(r) = super::quant31::gmm_quantised(
        "aclnnGroupedMatmulV5GetWorkspaceSize",
        "aclnnGroupedMatmulV5",
        super::quant31::GmmArgs {
            x,
            weight,
            bias: biasOptional,
            scale: scaleOptional,
            offset: offsetOptional,
            antiquant_scale: antiquantScaleOptional,
            antiquant_offset: antiquantOffsetOptional,
            per_token: perTokenScaleOptional,
            group_list: groupListOptional,
            activation: [
                activationInputOptional,
                activationQuantScaleOptional,
                activationQuantOffsetOptional,
                activationFeatureOutOptional as *const c_void,
                dynQuantScaleOutOptional as *const c_void,
            ],
            split_item: splitItem,
            group_type: groupType,
            group_list_type: groupListType,
            act_type: actType,
            out: out as *const c_void,
            weight_nz_api: false,
        },
        workspaceSize,
        executor,
    ) {
        return r;
    }
    grouped_matmul(
        "aclnnGroupedMatmulV5GetWorkspaceSize",
        "aclnnGroupedMatmulV5",
        x,
        weight,
        biasOptional,
        [
            (scaleOptional, "scaleOptional"),
            (offsetOptional, "offsetOptional"),
            (antiquantScaleOptional, "antiquantScaleOptional"),
            (antiquantOffsetOptional, "antiquantOffsetOptional"),
            (perTokenScaleOptional, "perTokenScaleOptional"),
            (activationInputOptional, "activationInputOptional"),
            (activationQuantScaleOptional, "activationQuantScaleOptional"),
            (
                activationQuantOffsetOptional,
                "activationQuantOffsetOptional",
            ),
        ],
        groupListOptional,
        splitItem,
        groupType,
        groupListType,
        actType,
        out,
        [
            (activationFeatureOutOptional, "activationFeatureOutOptional"),
            (dynQuantScaleOutOptional, "dynQuantScaleOutOptional"),
        ],
        workspaceSize,
        executor,
        // tuningConfigOptional only tunes the kernel's tiling: read, to check the handle.
        || {
            if !tuningConfigOptional.is_null() {
                a::int_array(tuningConfigOptional, "tuningConfigOptional")?;
            }
            Ok(())
        },
    )
}

crate::phase2!(aclnnGroupedMatmulV4, aclnnGroupedMatmulV5);

// ---------------------------------------------------------------- MoE routing

fn int32(t: &T) -> NnResult<()> {
    if t.dtype() == DType::I32 {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has data type {}; it must be INT32",
            t.arg,
            t.dtype()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeInitRoutingGetWorkspaceSize(
    x: *const c_void,
    rowIdx: *const c_void,
    expertIdx: *const c_void,
    activeNum: i64,
    expandedXOut: *const c_void,
    expandedRowIdxOut: *const c_void,
    expandedExpertIdxOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeInitRoutingGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let r = a::tensor(rowIdx, "rowIdx")?;
            let e = a::tensor(expertIdx, "expertIdx")?;
            let ex = a::tensor(expandedXOut, "expandedXOut")?;
            let er = a::tensor(expandedRowIdxOut, "expandedRowIdxOut")?;
            let ee = a::tensor(expandedExpertIdxOut, "expandedExpertIdxOut")?;
            a::dtype_in(&x, FLOATS3)?;
            for t in [&r, &e, &er, &ee] {
                int32(t)?;
            }
            if x.ndim() != 2 || e.ndim() != 2 || e.shape()[0] != x.shape()[0] {
                return Err(NnError::invalid(format!(
                    "x must be [NUM_ROWS, H] and expertIdx [NUM_ROWS, K], not {:?} and {:?}",
                    x.shape(),
                    e.shape()
                )));
            }
            a::same_shape(&r, e.shape())?;
            if activeNum < 0 {
                return Err(NnError::invalid(format!(
                    "activeNum {activeNum} must be at least 0"
                )));
            }
            let (n, h, k) = (x.shape()[0], x.shape()[1], e.shape()[1]);
            same_dtype(&ex, &x)?;
            a::same_shape(&ex, &[n.min(activeNum as usize) * k, h])?;
            a::same_shape(&er, &[n * k])?;
            a::same_shape(&ee, &[n * k])?;
            let mut l = Launch::new("aclnnMoeInitRouting");
            l.input(&x);
            l.input(&r);
            l.input(&e);
            let yi = l.output(&ex);
            l.output(&er);
            l.output(&ee);
            l.finish(move |v, _| {
                quant::moe_init_routing(&v[0], &v[1], &v[2], &v[yi], &v[yi + 1], &v[yi + 2])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeComputeExpertTokensGetWorkspaceSize(
    sortedExperts: *const c_void,
    numExperts: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeComputeExpertTokensGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(sortedExperts, "sortedExperts")?;
            let o = a::tensor(out, "out")?;
            int32(&s)?;
            same_dtype(&o, &s)?;
            if s.ndim() != 1 || s.numel() >= 1 << 24 {
                return Err(NnError::invalid(format!(
                    "sortedExperts must be 1-D with fewer than 2**24 elements, not {:?}",
                    s.shape()
                )));
            }
            if numExperts <= 0 || numExperts > 2048 {
                return Err(NnError::invalid(format!(
                    "numExperts {numExperts} must be in [1, 2048]"
                )));
            }
            a::same_shape(&o, &[numExperts as usize])?;
            let mut l = Launch::new("aclnnMoeComputeExpertTokens");
            l.input(&s);
            l.output(&o);
            l.finish(move |v, _| quant::moe_compute_expert_tokens(&v[0], &v[1]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn moe_finalize(
    name: &'static str,
    api: &'static str,
    names: [&'static str; 7],
    args: [*const c_void; 7],
    required: [bool; 7],
    drop_pad_mode: i64,
    out: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let mut t: Vec<Option<T>> = Vec::with_capacity(7);
        for i in 0..7 {
            t.push(if required[i] {
                Some(a::tensor(args[i], names[i])?)
            } else {
                a::opt_tensor(args[i], names[i])?
            });
        }
        let o = a::tensor(out, "out")?;
        let [ex, idx, x1, x2, bias, scales, eidx] =
            <[Option<T>; 7]>::try_from(t).map_err(|_| NnError::invalid("arguments"))?;
        let (ex, idx) = (ex.unwrap(), idx.unwrap());
        if drop_pad_mode != 0 {
            return Err(NnError::invalid(format!(
                "dropPadMode {drop_pad_mode}: only 0 (drop-less, column-major expandedRowIdx) is \
                 supported by npu-emu"
            )));
        }
        a::dtype_in(&ex, FLOATS3)?;
        int32(&idx)?;
        same_dtype(&o, &ex)?;
        if ex.ndim() != 2 || o.ndim() != 2 || idx.ndim() != 1 {
            return Err(NnError::invalid(format!(
                "{} must be [NUM_ROWS * K, H], {} [NUM_ROWS * K] and out [NUM_ROWS, H], not \
                 {:?}, {:?} and {:?}",
                ex.arg,
                idx.arg,
                ex.shape(),
                idx.shape(),
                o.shape()
            )));
        }
        let (n, h) = (o.shape()[0], o.shape()[1]);
        if ex.shape()[1] != h
            || (n == 0 && idx.numel() != 0)
            || (n > 0 && idx.numel() % n != 0)
            || ex.shape()[0] != idx.numel()
        {
            return Err(NnError::invalid(format!(
                "{} {:?} and {} {:?} do not fit out {:?} (NUM_ROWS * K rows of H)",
                ex.arg,
                ex.shape(),
                idx.arg,
                idx.shape(),
                o.shape()
            )));
        }
        let k = idx.numel().checked_div(n).unwrap_or(0);
        if x2.is_some() && x1.is_none() {
            return Err(NnError::invalid(format!("{} needs {}", names[3], names[2])));
        }
        for s in [&x1, &x2].into_iter().flatten() {
            same_dtype(s, &ex)?;
            a::same_shape(s, &[n, h])?;
        }
        if let Some(s) = &scales {
            same_dtype(s, &ex)?;
            a::same_shape(s, &[n, k])?;
        }
        if let Some(b) = &bias {
            same_dtype(b, &ex)?;
            if b.ndim() != 2 || b.shape()[1] != h {
                return Err(NnError::invalid(format!(
                    "{} shape {:?} must be [E, {h}]",
                    b.arg,
                    b.shape()
                )));
            }
            if eidx.is_none() {
                return Err(NnError::invalid(format!("{} needs {}", names[4], names[6])));
            }
        }
        if let Some(e) = &eidx {
            int32(e)?;
            a::same_shape(e, &[n, k])?;
        }
        let mut l = Launch::new(api);
        l.input(&ex);
        l.input(&idx);
        let mut slots = [None; 5];
        let mut next = 2;
        for (i, t) in [&x1, &x2, &bias, &scales, &eidx].into_iter().enumerate() {
            if let Some(t) = t {
                l.input(t);
                slots[i] = Some(next);
                next += 1;
            }
        }
        let yi = l.output(&o);
        l.finish(move |v, _| {
            let g = |i: usize| slots[i].map(|s| &v[s]);
            quant::moe_finalize_routing(&v[0], &v[1], g(0), g(1), g(2), g(3), g(4), &v[yi])
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeFinalizeRoutingGetWorkspaceSize(
    expandedPermutedRows: *const c_void,
    skip1: *const c_void,
    skip2Optional: *const c_void,
    bias: *const c_void,
    scales: *const c_void,
    expandedSrcToDstRow: *const c_void,
    expertForSourceRow: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    moe_finalize(
        "aclnnMoeFinalizeRoutingGetWorkspaceSize",
        "aclnnMoeFinalizeRouting",
        [
            "expandedPermutedRows",
            "expandedSrcToDstRow",
            "skip1",
            "skip2Optional",
            "bias",
            "scales",
            "expertForSourceRow",
        ],
        [
            expandedPermutedRows,
            expandedSrcToDstRow,
            skip1,
            skip2Optional,
            bias,
            scales,
            expertForSourceRow,
        ],
        [true, true, true, false, true, true, true],
        0,
        out,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeFinalizeRoutingV2GetWorkspaceSize(
    expandedX: *const c_void,
    expandedRowIdx: *const c_void,
    x1Optional: *const c_void,
    x2Optional: *const c_void,
    biasOptional: *const c_void,
    scalesOptional: *const c_void,
    expertIdxOptional: *const c_void,
    dropPadMode: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    moe_finalize(
        "aclnnMoeFinalizeRoutingV2GetWorkspaceSize",
        "aclnnMoeFinalizeRoutingV2",
        [
            "expandedX",
            "expandedRowIdx",
            "x1Optional",
            "x2Optional",
            "biasOptional",
            "scalesOptional",
            "expertIdxOptional",
        ],
        [
            expandedX,
            expandedRowIdx,
            x1Optional,
            x2Optional,
            biasOptional,
            scalesOptional,
            expertIdxOptional,
        ],
        [true, true, false, false, false, false, false],
        dropPadMode,
        out,
        workspaceSize,
        executor,
    )
}

crate::phase2!(
    aclnnMoeInitRouting,
    aclnnMoeComputeExpertTokens,
    aclnnMoeFinalizeRouting,
    aclnnMoeFinalizeRoutingV2
);

// ---------------------------------------------------------------- the first quantised matmuls

/// A tensor of `dtype`, or the reference's "data type not supported" error.
fn dtype_is(t: &T, dtype: DType) -> NnResult<()> {
    a::dtype_in(t, &[dtype])
}

/// QuantMatmul (V1, a float deqScale) and V2 (a UINT64 deqScale of `align(n, 16)`):
/// `out = (x1 @ x2 + bias) * deqScale` for INT8 x1 and x2 of 2 or 3 dimensions, an INT32
/// bias `[n]`, FLOAT16 out. V1 takes x1 and x2 of one rank with equal batches; V2 lets a 2-D
/// operand broadcast against the other's batch.
#[allow(clippy::too_many_arguments)]
unsafe fn quant_matmul_legacy(
    name: &'static str,
    api: &'static str,
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    deq_scale: Result<f32, *const c_void>,
    trans: (bool, bool),
    out: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        let x1 = a::tensor(x1, "x1")?;
        let x2 = a::tensor(x2, "x2")?;
        let ds = match deq_scale {
            Ok(_) => None,
            Err(h) => Some(a::tensor(h, "deqScale")?),
        };
        let o = a::tensor(out, "out")?;
        let b = a::opt_tensor(bias, "bias")?;
        dtype_is(&x1, DType::I8)?;
        dtype_is(&x2, DType::I8)?;
        if let Some(b) = &b {
            dtype_is(b, DType::I32)?;
        }
        if let Some(d) = &ds {
            dtype_is(d, DType::U64)?;
        }
        dtype_is(&o, DType::F16)?;
        for t in [&x1, &x2] {
            if t.ndim() < 2 || t.ndim() > 3 {
                return Err(NnError::invalid(format!(
                    "{} must have 2 or 3 dimensions, but its shape is {:?}",
                    t.arg,
                    t.shape()
                )));
            }
        }
        let (n1, n2) = (x1.ndim(), x2.ndim());
        if deq_scale.is_ok() && n1 != n2 {
            return Err(NnError::invalid(format!(
                "x1 {:?} and x2 {:?} must have the same number of dimensions (no broadcast)",
                x1.shape(),
                x2.shape()
            )));
        }
        if n1 == 3 && n2 == 3 && x1.shape()[0] != x2.shape()[0] {
            return Err(NnError::invalid(format!(
                "x1 {:?} and x2 {:?} have different batches",
                x1.shape(),
                x2.shape()
            )));
        }
        let pick = |t: &T, tr: bool| {
            let s = &t.shape()[t.ndim() - 2..];
            if tr {
                (s[1], s[0])
            } else {
                (s[0], s[1])
            }
        };
        let (m, k1) = pick(&x1, trans.0);
        let (k2, n) = pick(&x2, trans.1);
        if k1 != k2 {
            return Err(NnError::invalid(format!(
                "x1 {:?} and x2 {:?} have different k: {k1} and {k2}",
                x1.shape(),
                x2.shape()
            )));
        }
        if let Some(b) = &b {
            if b.ndim() != 1 || b.shape()[0] != n {
                return Err(NnError::invalid(format!(
                    "bias shape {:?} must be [{n}] (x2's n)",
                    b.shape()
                )));
            }
            if k1 == 0 && m != 0 && n != 0 {
                return Err(NnError::invalid(
                    "k is 0 (x1 or x2 empty) while bias is given; the reference refuses this",
                ));
            }
        }
        if let Some(d) = &ds {
            let t = n.div_ceil(16) * 16;
            if d.ndim() != 1 || d.shape()[0] != t {
                return Err(NnError::invalid(format!(
                    "deqScale shape {:?} must be [{t}] (x2's n = {n} rounded up to 16)",
                    d.shape()
                )));
            }
        }
        let mut os: Vec<usize> = if n1 == 3 {
            vec![x1.shape()[0]]
        } else if n2 == 3 {
            vec![x2.shape()[0]]
        } else {
            vec![]
        };
        os.extend([m, n]);
        a::same_shape(&o, &os)?;
        let mut l = Launch::new(api);
        l.input(&x1);
        l.input(&x2);
        let di = ds.as_ref().map(|d| l.input(d));
        let bi = b.as_ref().map(|b| l.input(b));
        let yi = l.output(&o);
        // V1's float scale is the 64-bit parameter aclnnTransQuantParam would make of it
        let param = deq_scale.map_or(0, |s| (s.to_bits() & 0xFFFF_E000) as u64);
        l.finish(move |v, _| {
            let mut q = [param];
            let host = npu_emu::ops::View::of_slice(&mut q, DType::U64, &[1]);
            let scale = di.map_or(&host, |i| &v[i]);
            let bias = bi.map(|i| &v[i]);
            quant::quant_matmul(
                &v[0], &v[1], None, scale, None, bias, trans.0, trans.1, &v[yi],
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    deqScale: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    quant_matmul_legacy(
        "aclnnQuantMatmulGetWorkspaceSize",
        "aclnnQuantMatmul",
        x1,
        x2,
        bias,
        Ok(deqScale),
        (false, false),
        out,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulV2GetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    bias: *const c_void,
    deqScale: *const c_void,
    adjX1: bool,
    adjX2: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    quant_matmul_legacy(
        "aclnnQuantMatmulV2GetWorkspaceSize",
        "aclnnQuantMatmulV2",
        x1,
        x2,
        bias,
        Err(deqScale),
        (adjX1, adjX2),
        out,
        workspaceSize,
        executor,
    )
}

/// A per-column parameter of WeightQuantBatchMatmul (V1): 1-D of 1 or `n` elements (only 1
/// when `trans_x2`), or a matrix whose last (`trans_x2`: second-to-last) dimension is 1 or `n`.
fn wqbmm_param(t: &T, trans_x2: bool, n: usize) -> NnResult<()> {
    let ok = match t.ndim() {
        0 => true,
        1 => t.shape()[0] == 1 || (!trans_x2 && t.shape()[0] == n),
        d => {
            let s = t.shape()[if trans_x2 { d - 2 } else { d - 1 }];
            (s == 1 || s == n) && t.numel() == s
        }
    };
    if ok {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} shape {:?} must be 1, [{n}], (1, 1), (1, {n}) or ({n}, 1) for x2's n = {n}",
            t.arg,
            t.shape()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnWeightQuantBatchMatmulGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    diagonalMatrix: *const c_void,
    deqOffset: *const c_void,
    deqScale: *const c_void,
    addOffset: *const c_void,
    mulScale: *const c_void,
    bias: *const c_void,
    transposeX1: bool,
    transposeX2: bool,
    antiquantScale: f32,
    antiquantOffset: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnWeightQuantBatchMatmulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x1 = a::tensor(x1, "x1")?;
            let x2 = a::tensor(x2, "x2")?;
            let o = a::tensor(out, "out")?;
            for t in [&x1, &x2] {
                if t.ndim() != 2 {
                    return Err(NnError::invalid(format!(
                        "{} must be 2-D (no batch), but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let pick = |t: &T, tr: bool| {
                let s = t.shape();
                if tr {
                    (s[1], s[0])
                } else {
                    (s[0], s[1])
                }
            };
            let (m, k1) = pick(&x1, transposeX1);
            let (k2, n) = pick(&x2, transposeX2);
            // m <= 64 takes the fix-pipe path, which needs its three tensors
            let fixpipe = m <= 64;
            let fp = if fixpipe {
                Some((
                    a::tensor(diagonalMatrix, "diagonalMatrix")?,
                    a::tensor(deqOffset, "deqOffset")?,
                    a::tensor(deqScale, "deqScale")?,
                ))
            } else {
                None
            };
            let add = a::opt_tensor(addOffset, "addOffset")?;
            let mul = a::opt_tensor(mulScale, "mulScale")?;
            let b = a::opt_tensor(bias, "bias")?;
            dtype_is(&x1, DType::F16)?;
            dtype_is(&x2, DType::I8)?;
            if let Some(b) = &b {
                dtype_is(b, DType::F32)?;
            }
            if let Some((d, off, s)) = &fp {
                dtype_is(d, DType::I8)?;
                dtype_is(off, DType::I32)?;
                dtype_is(s, DType::U64)?;
            } else {
                for t in add.iter().chain(&mul) {
                    dtype_is(t, DType::F16)?;
                }
            }
            dtype_is(&o, DType::F16)?;
            if let Some((d, off, s)) = &fp {
                wqbmm_param(off, false, n)?;
                wqbmm_param(s, false, n)?;
                if d.shape() != [32, 32] {
                    return Err(NnError::invalid(format!(
                        "diagonalMatrix shape {:?} must be [32, 32]",
                        d.shape()
                    )));
                }
            } else {
                for t in add.iter().chain(&mul) {
                    wqbmm_param(t, transposeX2, n)?;
                }
            }
            if let Some(b) = &b {
                let last = b.shape().last().copied().unwrap_or(1);
                if b.numel() != last || (last != 1 && last != n) {
                    return Err(NnError::invalid(format!(
                        "bias shape {:?} must be [{n}] (or [1])",
                        b.shape()
                    )));
                }
            }
            if k1 != k2 {
                return Err(NnError::invalid(format!(
                    "x1 {:?} and x2 {:?} have different k: {k1} and {k2}",
                    x1.shape(),
                    x2.shape()
                )));
            }
            a::same_shape(&o, &[m, n])?;
            let mut l = Launch::new("aclnnWeightQuantBatchMatmul");
            l.input(&x1);
            l.input(&x2);
            let fi = fp.as_ref().map(|(_, off, s)| (l.input(off), l.input(s)));
            let ai = add.as_ref().filter(|_| !fixpipe).map(|t| l.input(t));
            let mi = mul.as_ref().filter(|_| !fixpipe).map(|t| l.input(t));
            let bi = b.as_ref().map(|t| l.input(t));
            let yi = l.output(&o);
            let trans = (transposeX1, transposeX2);
            let aq = (antiquantScale, antiquantOffset);
            l.finish(move |v, _| {
                let dequant = match fi {
                    Some((oi, si)) => llm::WeightDequant::Fixpipe {
                        offset: &v[oi],
                        scale: &v[si],
                    },
                    None => llm::WeightDequant::Vector {
                        antiquant: aq,
                        add_offset: ai.map(|i| &v[i]),
                        mul_scale: mi.map(|i| &v[i]),
                    },
                };
                llm::weight_quant_matmul_v1(&v[0], &v[1], trans, dequant, bi.map(|i| &v[i]), &v[yi])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAscendAntiQuantGetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    offset: *const c_void,
    dstType: i64,
    sqrtMode: bool,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAscendAntiQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let s = a::tensor(scale, "scale")?;
            let y = a::tensor(y, "y")?;
            let o = a::opt_tensor(offset, "offset")?;
            a::dtype_in(&x, &[DType::I8, DType::I32])?;
            a::dtype_in(&s, &[DType::F32, DType::BF16])?;
            if let Some(o) = &o {
                same_dtype(o, &s)?;
                a::same_shape(o, s.shape())?;
            }
            let dst = match dstType {
                1 => DType::F16,
                27 => DType::BF16,
                _ => {
                    return Err(NnError::invalid(format!(
                        "dstType {dstType} must be 1 (FLOAT16) or 27 (BFLOAT16)"
                    )))
                }
            };
            dtype_is(&y, dst)?;
            let mut ys = x.shape().to_vec();
            if x.dtype() == DType::I32 {
                match ys.last_mut() {
                    Some(l) => *l *= 8,
                    None => {
                        return Err(NnError::invalid(
                            "x is an INT32 scalar; packed int4 needs at least one dimension",
                        ))
                    }
                }
            }
            a::same_shape(&y, &ys)?;
            let last = ys.last().copied().unwrap_or(1);
            if s.ndim() != 1 || (s.shape()[0] != 1 && s.shape()[0] != last) || s.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "scale shape {:?} must be [1] or [{last}] (y's last dimension)",
                    s.shape()
                )));
            }
            let mut l = Launch::new("aclnnAscendAntiQuant");
            l.input(&x);
            l.input(&s);
            let oi = o.as_ref().map(|o| l.input(o));
            let yi = l.output(&y);
            l.finish(move |v, _| llm::anti_quant(&v[0], &v[1], oi.map(|i| &v[i]), sqrtMode, &v[yi]))
        },
    )
}

crate::phase2!(
    aclnnQuantMatmul,
    aclnnQuantMatmulV2,
    aclnnWeightQuantBatchMatmul,
    aclnnAscendAntiQuant
);

/// `aclnnStatus aclnnTransQuantParam(const float *scaleArray, uint64_t scaleSize, const float
/// *offsetArray, uint64_t offsetSize, uint64_t **quantParam, uint64_t *quantParamSize)`: the
/// host form of TransQuantParam. `*quantParam` is allocated with `calloc` (the caller
/// `free`s it). As CANN's implementation, a bad scale or offset argument returns
/// `ACLNN_ERR_PARAM_INVALID` (also a null `scaleArray`), a null output pointer
/// `ACLNN_ERR_PARAM_NULLPTR`.
#[no_mangle]
pub unsafe extern "C" fn aclnnTransQuantParam(
    scaleArray: *const f32,
    scaleSize: u64,
    offsetArray: *const f32,
    offsetSize: u64,
    quantParam: *mut *mut u64,
    quantParamSize: *mut u64,
) -> i32 {
    boundary("aclnnTransQuantParam", || {
        const MOST: u64 = 1 << 32;
        if scaleArray.is_null() {
            return Err(NnError::invalid("scaleArray is nullptr"));
        }
        if scaleSize == 0 || scaleSize > MOST {
            return Err(NnError::invalid(format!(
                "scaleSize is {scaleSize}; it must be in [1, {MOST}]"
            )));
        }
        if offsetArray.is_null() && offsetSize != 0 {
            return Err(NnError::invalid(format!(
                "offsetArray is nullptr, so offsetSize must be 0, but it is {offsetSize}"
            )));
        }
        if !offsetArray.is_null() && (offsetSize == 0 || offsetSize > MOST) {
            return Err(NnError::invalid(format!(
                "offsetSize is {offsetSize}; with an offsetArray it must be in [1, {MOST}]"
            )));
        }
        non_null(quantParam, "quantParam")?;
        non_null(quantParamSize, "quantParamSize")?;
        // SAFETY: the caller passes arrays of the sizes it gives (checked non-null above).
        let scale = std::slice::from_raw_parts(scaleArray, scaleSize as usize);
        let offset = if offsetArray.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(offsetArray, offsetSize as usize)
        };
        let q = quant::trans_quant_param_host(scale, offset);
        // SAFETY: calloc of q.len() u64 values; the caller frees it with free().
        let p = libc::calloc(q.len(), std::mem::size_of::<u64>()) as *mut u64;
        if p.is_null() {
            return Err(NnError::new(
                crate::executor::ACLNN_ERR_INNER_NULLPTR,
                format!("cannot allocate {} quantisation parameters", q.len()),
            ));
        }
        // SAFETY: `p` holds q.len() values.
        std::ptr::copy_nonoverlapping(q.as_ptr(), p, q.len());
        out(quantParamSize, "quantParamSize", q.len() as u64)?;
        out(quantParam, "quantParam", p)
    })
}

// ---------------------------------------------------------------- ConvertWeightToINT4Pack

/// `aclnn_convert_weight_to_int4_pack.h`: an INT32 weight holding one int4 value an element
/// (2-3 dimensions, the last a multiple of 8) packed eight to an INT32 word (low nibble first,
/// the value's low 4 bits) into an ND INT32 `weightInt4Pack` of the last dimension / 8, the
/// Atlas A2 ND form. The ACL_INT4-typed and FRACTAL_NZ outputs are refused (npu-emu keeps
/// no sub-byte tensors).
#[no_mangle]
pub unsafe extern "C" fn aclnnConvertWeightToINT4PackGetWorkspaceSize(
    weight: *const c_void,
    weightInt4Pack: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConvertWeightToINT4PackGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let w = a::tensor(weight, "weight")?;
            let o = a::tensor(weightInt4Pack, "weightInt4Pack")?;
            a::dtype_in(&w, &[DType::I32])?;
            if o.dtype() != DType::I32 {
                return Err(NnError::invalid(format!(
                    "weightInt4Pack has data type {}; it must be INT32 (eight int4 values a word)",
                    o.dtype()
                )));
            }
            if w.ndim() < 2 || w.ndim() > 3 || w.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "weight must be a non-empty tensor of 2 or 3 dimensions, but its shape is {:?}",
                    w.shape()
                )));
            }
            let last = w.shape()[w.ndim() - 1];
            if last % 8 != 0 {
                return Err(NnError::invalid(format!(
                    "weight's last dimension {last} must be a multiple of 8 for an INT32 \
                     weightInt4Pack"
                )));
            }
            let mut os = w.shape().to_vec();
            *os.last_mut().expect("2 or 3 dimensions") /= 8;
            a::same_shape(&o, &os)?;
            let mut l = Launch::new("aclnnConvertWeightToINT4Pack");
            l.input(&w);
            let yi = l.output(&o);
            l.finish(move |v, _| quant::pack_int4(&v[0], &v[yi]))
        },
    )
}

crate::phase2!(aclnnConvertWeightToINT4Pack);

// ---------------------------------------------------------------- GroupQuant

/// `aclnn_group_quant.h`: `y = round(x * scale[group] + offset)` with each row of x
/// (`[S, H]`, FLOAT/FLOAT16/BFLOAT16) in the group its cumulative row ends (groupIndex
/// INT32/INT64 `[E]`) put it in; scale `[E, H]`, offsetOptional one value of scale's type;
/// dstType 2 (INT8 y `[S, H]`) or 3 (INT32 y `[S, H/8]`, int4 values eight a word). dstType 29
/// (ACL_INT4 tensors) is refused: npu-emu keeps no sub-byte tensors. A groupIndex that is not
/// non-decreasing from 0 to S fails at launch (the reference leaves it unchecked).
#[no_mangle]
pub unsafe extern "C" fn aclnnGroupQuantGetWorkspaceSize(
    x: *const c_void,
    scale: *const c_void,
    groupIndex: *const c_void,
    offsetOptional: *const c_void,
    dstType: i32,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let s = a::tensor(scale, "scale")?;
            let g = a::tensor(groupIndex, "groupIndex")?;
            let o = a::opt_tensor(offsetOptional, "offsetOptional")?;
            let y = a::tensor(y, "y")?;
            let floats = [DType::F32, DType::F16, DType::BF16];
            a::dtype_in(&x, &floats)?;
            a::dtype_in(&s, &floats)?;
            a::dtype_in(&g, &[DType::I32, DType::I64])?;
            if let Some(o) = &o {
                same_dtype(o, &s)?;
                if o.numel() != 1 || o.ndim() > 1 {
                    return Err(NnError::invalid(format!(
                        "offsetOptional has shape {:?}; it must be one value ([1] or a scalar)",
                        o.shape()
                    )));
                }
            }
            if x.ndim() != 2 || s.ndim() != 2 || g.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "x {:?} and scale {:?} must be 2-D and groupIndex {:?} 1-D",
                    x.shape(),
                    s.shape(),
                    g.shape()
                )));
            }
            let (rows, h) = (x.shape()[0], x.shape()[1]);
            if s.shape()[1] != h || s.shape()[0] == 0 || g.shape()[0] != s.shape()[0] {
                return Err(NnError::invalid(format!(
                    "scale {:?} must be [E > 0, {h}] and groupIndex {:?} [E]",
                    s.shape(),
                    g.shape()
                )));
            }
            let int4 =
                match dstType {
                    2 => {
                        a::dtype_in(&y, &[DType::I8])?;
                        a::same_shape(&y, &[rows, h])?;
                        false
                    }
                    3 => {
                        a::dtype_in(&y, &[DType::I32])?;
                        if h % 8 != 0 {
                            return Err(NnError::invalid(format!(
                        "dstType 3 (INT32) packs eight int4 values a word: x's last dimension \
                         {h} must be a multiple of 8"
                    )));
                        }
                        a::same_shape(&y, &[rows, h / 8])?;
                        true
                    }
                    29 => return Err(NnError::invalid(
                        "dstType 29 (INT4 tensors) is not supported: npu-emu keeps no sub-byte \
                     tensors; use dstType 3 (INT32, eight int4 values a word)",
                    )),
                    d => {
                        return Err(NnError::invalid(format!(
                            "dstType {d} must be 2 (INT8), 3 (INT32) or 29 (INT4)"
                        )))
                    }
                };
            let mut l = Launch::new("aclnnGroupQuant");
            l.input(&x);
            l.input(&s);
            l.input(&g);
            let oi = o.as_ref().map(|t| l.input(t));
            let yi = l.output(&y);
            l.finish(move |v, _| {
                quant::group_quant(&v[0], &v[1], &v[2], oi.map(|i| &v[i]), int4, &v[yi])
            })
        },
    )
}

crate::phase2!(aclnnGroupQuant);

// ---------------------------------------------------------------- InplaceQuantScatter

/// `aclnn_quant_scatter.h`: updates (FLOAT16 with FLOAT scales and INT32 zero points, or
/// BFLOAT16 with BFLOAT16 both) quantised along their last axis, `round(updates / scale +
/// zeroPoint)` saturated to INT8, then written into the INT8 selfRef (3-8 dimensions) along
/// `axis` (not the first or the last) at the offsets of indices (INT32/INT64, `[B]` per row or
/// `[B, 2]` (row, offset)); reduction 1 (update) only. A block past selfRef fails at launch
/// (the reference does not check).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnInplaceQuantScatterGetWorkspaceSize(
    selfRef: *mut c_void,
    indices: *const c_void,
    updates: *const c_void,
    quantScales: *const c_void,
    quantZeroPoints: *const c_void,
    axis: i64,
    quantAxis: i64,
    reduction: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceQuantScatterGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(selfRef, "selfRef")?;
            let ix = a::tensor(indices, "indices")?;
            let u = a::tensor(updates, "updates")?;
            let sc = a::tensor(quantScales, "quantScales")?;
            let zp = a::opt_tensor(quantZeroPoints, "quantZeroPoints")?;
            a::dtype_in(&s, &[DType::I8])?;
            a::dtype_in(&ix, &[DType::I32, DType::I64])?;
            a::dtype_in(&u, &[DType::F16, DType::BF16])?;
            a::dtype_in(&sc, &[DType::F32, DType::BF16])?;
            let combo = matches!(
                (u.dtype(), sc.dtype(), zp.as_ref().map(|z| z.dtype())),
                (DType::F16, DType::F32, None | Some(DType::I32))
                    | (DType::BF16, DType::BF16, None | Some(DType::BF16))
            );
            if !combo {
                return Err(NnError::invalid(format!(
                    "(updates, quantScales, quantZeroPoints) must be (FLOAT16, FLOAT, INT32) or \
                     (BFLOAT16, BFLOAT16, BFLOAT16), but they are ({}, {}, {})",
                    u.dtype(),
                    sc.dtype(),
                    zp.as_ref()
                        .map_or("none".to_string(), |z| z.dtype().to_string())
                )));
            }
            let n = s.ndim();
            if !(3..=8).contains(&n) || u.ndim() != n {
                return Err(NnError::invalid(format!(
                    "selfRef {:?} must have 3 to 8 dimensions and updates {:?} as many",
                    s.shape(),
                    u.shape()
                )));
            }
            let ni = n as i64;
            let ax = if axis < 0 { axis + ni } else { axis };
            if ax < 1 || ax >= ni - 1 {
                return Err(NnError::invalid(format!(
                    "axis {axis} must name a dimension of updates other than the first and \
                     the last"
                )));
            }
            if quantAxis != -1 && quantAxis != ni - 1 {
                return Err(NnError::invalid(format!(
                    "quantAxis {quantAxis} must be the last dimension (-1 or {})",
                    ni - 1
                )));
            }
            if reduction != 1 {
                return Err(NnError::invalid(format!(
                    "reduction {reduction} is not supported; only 1 (update)"
                )));
            }
            let ax = ax as usize;
            let (ss, us) = (s.shape(), u.shape());
            let bad = (0..n).find(|&d| match d {
                0 => us[0] > ss[0],
                d if d == ax => us[d] > ss[d],
                d => us[d] != ss[d],
            });
            if let Some(d) = bad {
                return Err(NnError::invalid(format!(
                    "updates {us:?} does not fit selfRef {ss:?} in dimension {d} (axis {ax}: \
                     at most as long; dimension 0: at most as long; others equal)"
                )));
            }
            let rows_ok = match ix.shape() {
                [b] => *b == us[0],
                [b, 2] => *b == us[0],
                _ => false,
            };
            if !rows_ok {
                return Err(NnError::invalid(format!(
                    "indices {:?} must be [{}] or [{}, 2] (one entry per row of updates)",
                    ix.shape(),
                    us[0],
                    us[0]
                )));
            }
            let last = us[n - 1];
            for t in std::iter::once(&sc).chain(zp.iter()) {
                if t.numel() != last {
                    return Err(NnError::invalid(format!(
                        "{} {:?} must hold one value per element of updates' last dimension \
                         ({last})",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnInplaceQuantScatter");
            l.input(&ix);
            l.input(&u);
            l.input(&sc);
            let zi = zp.as_ref().map(|z| l.input(z));
            let si = l.output(&s);
            l.finish(move |v, _| {
                quant::quant_scatter(&v[si], &v[0], &v[1], &v[2], zi.map(|i| &v[i]), ax)
            })
        },
    )
}

crate::phase2!(aclnnInplaceQuantScatter);

/// The biases of an unquantised grouped matmul: FLOAT16 for a FLOAT16 x, FLOAT otherwise.
pub(crate) fn float_bias(bs: &[T], dt: DType) -> NnResult<()> {
    let bias_dt = if dt == DType::F16 {
        DType::F16
    } else {
        DType::F32
    };
    for b in bs {
        if b.dtype() != bias_dt {
            return Err(NnError::invalid(format!(
                "biasOptional has data type {}; x {dt} takes {bias_dt}",
                b.dtype()
            )));
        }
    }
    Ok(())
}
