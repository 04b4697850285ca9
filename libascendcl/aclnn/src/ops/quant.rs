//! Quantisation and MoE routing of large-model inference: `aclnn_ascend_quant.h`
//! (`aclnnAscendQuant`), `aclnn_ascend_quant_v3.h` (`aclnnAscendQuantV3`),
//! `aclnn_dynamic_quant.h` (`aclnnDynamicQuant`), `aclnn_dynamic_quant_v2.h`
//! (`aclnnDynamicQuantV2`) and `aclnn_moe_gating_top_k_softmax.h`
//! (`aclnnMoeGatingTopKSoftmax`). The checks follow CANN's operator reference (the Atlas A2
//! dtype lists, on every emulated SoC); the computation is `npu_emu::ops::quant`.
//!
//! Not provided: the INT4 outputs (`dstType` 3, int4 packed in INT32, and 29) and the
//! FLOAT8/HIFLOAT8 ones (refused with `ACLNN_ERR_PARAM_INVALID` naming the type), and
//! DynamicQuantV2's `groupIndexOptional` (the MoE per-expert smoothing).

use super::args::{self as a, FLOATS3, T};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::quant::{self, Round};
use std::ffi::{c_char, c_void};

/// `ACL_INT8`, the one quantised output type npu-emu computes.
const ACL_INT8: i64 = 2;

fn dst_int8(dst: i64) -> NnResult<()> {
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

fn out_int8(y: &T) -> NnResult<()> {
    if y.dtype() != DType::I8 {
        return Err(NnError::invalid(format!(
            "{} has data type {}, but dstType says INT8",
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
    let ok = if p.ndim() == 1 {
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
        dst_int8(dst)?;
        out_int8(&y)?;
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
        a::same_shape(&y, x.shape())?;
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
        if let Some(sm) = &sm {
            same_dtype(sm, &x)?;
            a::same_shape(sm, &[h])?;
        }
        if g.is_some() {
            return Err(NnError::invalid(
                "groupIndexOptional (per-expert smoothScales) is not supported by npu-emu; \
                 pass nullptr",
            ));
        }
        dst_int8(dst)?;
        out_int8(&y)?;
        a::same_shape(&y, x.shape())?;
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
        let has_sm = sm.is_some();
        if let Some(sm) = &sm {
            l.input(sm);
        }
        let yi = l.output(&y);
        l.output(&s);
        let has_o = o.is_some();
        if let Some(o) = &o {
            l.output(o);
        }
        l.finish(move |v, _| {
            let smv = if has_sm { Some(&v[1]) } else { None };
            let ov = if has_o { Some(&v[yi + 2]) } else { None };
            quant::dynamic_quant(&v[0], smv, &v[yi], &v[yi + 1], ov)
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
    phase1(
        "aclnnMoeGatingTopKSoftmaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let f = a::opt_tensor(finishedOptional, "finishedOptional")?;
            let y = a::tensor(yOut, "yOut")?;
            let e = a::tensor(expertIdxOut, "expertIdxOut")?;
            let r = a::tensor(rowIdxOut, "rowIdxOut")?;
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
            for t in [&e, &r] {
                if t.dtype() != DType::I32 {
                    return Err(NnError::invalid(format!(
                        "{} has data type {}; it must be INT32",
                        t.arg,
                        t.dtype()
                    )));
                }
            }
            let mut os = lead.to_vec();
            os.push(k as usize);
            for t in [&y, &e, &r] {
                a::same_shape(t, &os)?;
            }
            let mut l = Launch::new("aclnnMoeGatingTopKSoftmax");
            l.input(&x);
            let has_f = f.is_some();
            if let Some(f) = &f {
                l.input(f);
            }
            let yi = l.output(&y);
            l.output(&e);
            l.output(&r);
            let k = k as usize;
            l.finish(move |v, _| {
                let fv = if has_f { Some(&v[1]) } else { None };
                quant::moe_gating_topk_softmax(&v[0], fv, k, &v[yi], &v[yi + 1], &v[yi + 2])
            })
        },
    )
}

crate::phase2!(
    aclnnAscendQuant,
    aclnnAscendQuantV3,
    aclnnDynamicQuant,
    aclnnDynamicQuantV2,
    aclnnMoeGatingTopKSoftmax
);
