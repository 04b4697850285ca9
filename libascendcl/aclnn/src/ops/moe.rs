//! MoE inference routing: `aclnn_moe_gating_top_k.h` (`aclnnMoeGatingTopK`, the grouped
//! expert selection of DeepSeek-style gating). The checks follow CANN's operator reference
//! (dtype errors 161002; the shape and value rules are the tiling's, reported as 561002 as
//! the page lists); the computation is `npu_emu::ops::moe`.
//!
//! `aclnn_moe_init_routing_v3.h` (`aclnnMoeInitRoutingV3`: drop-less, active (activeNum
//! rows) and drop/pad routing; no, static or dynamic int8 quantisation; cumsum, count or
//! key_value token counts): null tensors 161001, data types and shapes 161002 (the
//! operator's own checks), attribute values 561002 (the tiling's).
//!
//! Not provided: MoeGatingTopK's renorm 1; MoeInitRoutingV3's MXFP8 quantisation (quantMode
//! 2 and 3, Ascend 950 only: 561002).

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::moe::{self, GatingTopK, InitRoutingV3};
use std::ffi::c_void;

/// `ACLNN_ERR_INNER_TILING_ERROR`: the shape and attribute rules of the tiling.
const TILING: i32 = 561002;

fn tiling(msg: String) -> NnError {
    NnError::new(TILING, msg)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeGatingTopKGetWorkspaceSize(
    x: *const c_void,
    biasOptional: *const c_void,
    k: i64,
    kGroup: i64,
    groupCount: i64,
    groupSelectMode: i64,
    renorm: i64,
    normType: i64,
    outFlag: bool,
    routedScalingFactor: f64,
    eps: f64,
    yOut: *const c_void,
    expertIdxOut: *const c_void,
    outOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeGatingTopKGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let bias = a::opt_tensor(biasOptional, "biasOptional")?;
            let y = a::tensor(yOut, "yOut")?;
            let e = a::tensor(expertIdxOut, "expertIdxOut")?;
            let o = if outFlag {
                Some(a::tensor(outOut, "outOut")?)
            } else {
                None
            };
            a::dtype_in(&x, FLOATS3)?;
            if let Some(b) = &bias {
                a::same_dtype(b, &x)?;
            }
            a::same_dtype(&y, &x)?;
            a::dtype_in(&e, &[DType::I32])?;
            if let Some(o) = &o {
                a::dtype_in(o, &[DType::F32])?;
            }
            if x.ndim() != 2 {
                return Err(tiling(format!(
                    "x must be 2-D [rows, experts], but its shape is {:?}",
                    x.shape()
                )));
            }
            let (rows, ex) = (x.shape()[0], x.shape()[1] as i64);
            if let Some(b) = &bias {
                if b.shape() != [ex as usize] {
                    return Err(tiling(format!(
                        "biasOptional has shape {:?}; it must be [{ex}] (x's last dimension)",
                        b.shape()
                    )));
                }
            }
            if ex > 2048 {
                return Err(tiling(format!("x's expert count {ex} exceeds 2048")));
            }
            if groupCount <= 0 || ex % groupCount != 0 {
                return Err(tiling(format!(
                    "groupCount {groupCount} must be positive and divide the expert count {ex}"
                )));
            }
            let per = ex / groupCount;
            if kGroup <= 0 || kGroup > groupCount {
                return Err(tiling(format!(
                    "kGroup {kGroup} must be in [1, groupCount {groupCount}]"
                )));
            }
            if k <= 0 || k > kGroup * per {
                return Err(tiling(format!(
                    "k {k} must be in [1, {}] (kGroup * experts per group)",
                    kGroup * per
                )));
            }
            if groupSelectMode != 0 && groupSelectMode != 1 {
                return Err(tiling(format!(
                    "groupSelectMode {groupSelectMode} must be 0 (max) or 1 (sum of the top 2)"
                )));
            }
            if groupSelectMode == 1 && per < 2 {
                return Err(tiling(format!(
                    "groupSelectMode 1 needs at least 2 experts per group, not {per}"
                )));
            }
            if normType != 0 && normType != 1 {
                return Err(tiling(format!(
                    "normType {normType} must be 0 (softmax) or 1 (sigmoid)"
                )));
            }
            if renorm != 0 {
                return Err(tiling(format!("renorm {renorm} is not supported; only 0")));
            }
            let align = (per + 31) / 32 * 32;
            if groupCount != 1
                && groupCount != ex
                && kGroup != groupCount
                && groupCount * align > 2048
            {
                return Err(tiling(format!(
                    "groupCount * experts per group aligned to 32 ({}) exceeds 2048",
                    groupCount * align
                )));
            }
            let os = [rows, k as usize];
            for t in [&y, &e] {
                a::same_shape(t, &os).map_err(|er| tiling(er.msg))?;
            }
            if let Some(o) = &o {
                a::same_shape(o, x.shape()).map_err(|er| tiling(er.msg))?;
            }
            let p = GatingTopK {
                k: k as usize,
                k_group: kGroup as usize,
                group_count: groupCount as usize,
                group_select_mode: groupSelectMode,
                norm_type: normType,
                routed_scaling_factor: routedScalingFactor,
                eps,
            };
            let mut l = Launch::new("aclnnMoeGatingTopK");
            l.input(&x);
            let bi = bias.as_ref().map(|b| l.input(b));
            let yi = l.output(&y);
            l.output(&e);
            let oi = o.as_ref().map(|o| l.output(o));
            l.finish(move |v, _| {
                moe::moe_gating_top_k(
                    &v[0],
                    bi.map(|i| &v[i]),
                    p,
                    &v[yi],
                    &v[yi + 1],
                    oi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnMoeGatingTopK);

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeInitRoutingV3GetWorkspaceSize(
    x: *const c_void,
    expertIdx: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    activeNum: i64,
    expertCapacity: i64,
    expertNum: i64,
    dropPadMode: i64,
    expertTokensNumType: i64,
    expertTokensNumFlag: bool,
    quantMode: i64,
    activeExpertRangeOptional: *const c_void,
    rowIdxType: i64,
    expandedXOut: *const c_void,
    expandedRowIdxOut: *const c_void,
    expertTokensCountOrCumsumOut: *const c_void,
    expandedScaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeInitRoutingV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let ei = a::tensor(expertIdx, "expertIdx")?;
            let scale = a::opt_tensor(scaleOptional, "scaleOptional")?;
            let offset = a::opt_tensor(offsetOptional, "offsetOptional")?;
            let range = a::opt_int_array(activeExpertRangeOptional, "activeExpertRangeOptional")?;
            let ex = a::tensor(expandedXOut, "expandedXOut")?;
            let eri = a::tensor(expandedRowIdxOut, "expandedRowIdxOut")?;
            let tok = a::tensor(expertTokensCountOrCumsumOut, "expertTokensCountOrCumsumOut")?;
            let es = a::tensor(expandedScaleOut, "expandedScaleOut")?;
            a::dtype_in(&x, &[DType::F16, DType::BF16, DType::F32, DType::I8])?;
            a::dtype_in(&ei, &[DType::I32])?;
            for t in scale.iter().chain(offset.iter()).chain([&es]) {
                a::dtype_in(t, &[DType::F32])?;
            }
            a::dtype_in(&eri, &[DType::I32])?;
            a::dtype_in(&tok, &[DType::I64])?;
            if quantMode == 0 || quantMode == 1 {
                if x.dtype() == DType::I8 {
                    return Err(NnError::invalid(format!(
                        "x INT8 cannot be quantised again (quantMode {quantMode} needs FLOAT16, BFLOAT16 or FLOAT)"
                    )));
                }
                a::dtype_in(&ex, &[DType::I8])?;
            } else {
                a::dtype_in(&ex, &[x.dtype()])?;
            }
            if x.ndim() != 2 || ei.ndim() != 2 || ei.shape()[0] != x.shape()[0] {
                return Err(NnError::invalid(format!(
                    "x must be (NUM_ROWS, H) and expertIdx (NUM_ROWS, K), but they are {:?} and {:?}",
                    x.shape(),
                    ei.shape()
                )));
            }
            let (n, h, k) = (x.shape()[0], x.shape()[1], ei.shape()[1]);
            let nk = n * k;
            let key_value_max = if expertTokensNumType == 2 {
                5120
            } else {
                10240
            };
            let drop = dropPadMode == 1;
            let rules = [
                (activeNum >= 0, format!("activeNum {activeNum} must be >= 0 (0: drop-less)")),
                (
                    !drop || (1..=n as i64).contains(&expertCapacity),
                    format!("expertCapacity {expertCapacity} must be in [1, NUM_ROWS = {n}] when dropPadMode is 1"),
                ),
                (
                    (0..=key_value_max).contains(&expertNum),
                    format!("expertNum {expertNum} must be in [0, {key_value_max}]"),
                ),
                (
                    !drop || expertNum > 0,
                    format!("expertNum {expertNum} must be > 0 when dropPadMode is 1"),
                ),
                (
                    dropPadMode == 0 || drop,
                    format!("dropPadMode {dropPadMode} must be 0 (drop-less) or 1 (drop/pad)"),
                ),
                (
                    (0..=2).contains(&expertTokensNumType),
                    format!("expertTokensNumType {expertTokensNumType} must be 0 (cumsum), 1 (count) or 2 (key_value)"),
                ),
                (
                    !drop || !expertTokensNumFlag || expertTokensNumType == 1,
                    format!("expertTokensNumType {expertTokensNumType}: drop/pad mode counts tokens only as 1 (count)"),
                ),
                (
                    (-1..=1).contains(&quantMode),
                    format!("quantMode {quantMode} is not supported; -1 (none), 0 (static) and 1 (dynamic) are (2 and 3, MXFP8, are Ascend 950's)"),
                ),
                (rowIdxType == 0 || rowIdxType == 1, format!("rowIdxType {rowIdxType} must be 0 or 1")),
            ];
            if let Some((_, m)) = rules.into_iter().find(|r| !r.0) {
                return Err(tiling(m));
            }
            // an empty array (torch_npu's default `active_expert_range=[]`) is every expert
            let (start, end) = match &range {
                None => (0, expertNum),
                Some(r) if r.is_empty() => (0, expertNum),
                Some(r) if r.len() == 2 && 0 <= r[0] && r[0] < r[1] && r[1] <= expertNum => (r[0], r[1]),
                Some(r) => {
                    return Err(tiling(format!(
                        "activeExpertRangeOptional {r:?} must be [expertStart, expertEnd] with 0 <= start < end <= expertNum {expertNum}"
                    )))
                }
            };
            if drop && (start, end) != (0, expertNum) {
                return Err(tiling(format!(
                    "activeExpertRangeOptional [{start}, {end}] must be [0, expertNum {expertNum}] in drop/pad mode"
                )));
            }
            let active = (end - start) as usize;
            let sh = a::same_shape;
            match (&scale, quantMode) {
                (Some(s), 1) => sh(s, &[active, h])?,
                (Some(s), 0) => {
                    let ok = s.numel() == 1
                        || s.shape() == [active]
                        || s.shape() == [active, 1]
                        || s.shape() == [active, h];
                    if !ok {
                        return Err(NnError::invalid(format!(
                            "scaleOptional has shape {:?}; static quantisation takes [1], [{active}], [{active}, 1] or [{active}, {h}]",
                            s.shape()
                        )));
                    }
                }
                (Some(s), _) => sh(s, &[n])?,
                (None, 0) => {
                    return Err(NnError::nullptr(
                        "scaleOptional is nullptr; static quantisation (quantMode 0) needs it",
                    ))
                }
                (None, _) => {}
            }
            let offset = if quantMode == 0 { offset } else { None };
            if let (Some(o), Some(s)) = (&offset, &scale) {
                if o.numel() != 1 && o.shape() != s.shape() {
                    return Err(NnError::invalid(format!(
                        "offsetOptional has shape {:?}; it takes [1] or scaleOptional's {:?}",
                        o.shape(),
                        s.shape()
                    )));
                }
            }
            let rows = if activeNum == 0 {
                nk
            } else {
                nk.min(activeNum as usize)
            };
            let out_rows = if drop {
                sh(&ex, &[expertNum as usize, expertCapacity as usize, h])?;
                (expertNum * expertCapacity) as usize
            } else {
                sh(&ex, &[rows, h])?;
                rows
            };
            sh(&eri, &[nk])?;
            if expertTokensNumFlag {
                if expertTokensNumType == 2 {
                    sh(&tok, &[expertNum as usize, 2])?;
                } else {
                    sh(&tok, &[active])?;
                }
            }
            let write_scale = quantMode == 1 || (quantMode == -1 && scale.is_some());
            // one value per expanded row (torch_npu allocates NUM_ROWS * K, enough drop-less)
            if write_scale && es.numel() < out_rows {
                return Err(NnError::invalid(format!(
                    "expandedScaleOut has shape {:?}; it takes one value per expanded row ({out_rows})",
                    es.shape()
                )));
            }
            let p = InitRoutingV3 {
                expert_start: start,
                expert_end: end,
                capacity: drop.then_some(expertCapacity as usize),
                rows,
                tokens_num_type: expertTokensNumFlag.then_some(expertTokensNumType),
                quant_mode: quantMode,
                row_idx_type: rowIdxType,
            };
            let mut l = Launch::new("aclnnMoeInitRoutingV3");
            l.input(&x);
            l.input(&ei);
            let si = scale.as_ref().map(|s| l.input(s));
            let ofi = offset.as_ref().map(|s| l.input(s));
            let oi = l.output(&ex);
            l.output(&eri);
            l.output(&tok);
            let esi = write_scale.then(|| l.output(&es));
            l.finish(move |v, _| {
                moe::moe_init_routing_v3(
                    &v[0],
                    &v[1],
                    si.map(|i| &v[i]),
                    ofi.map(|i| &v[i]),
                    p,
                    &v[oi],
                    &v[oi + 1],
                    &v[oi + 2],
                    esi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnMoeInitRoutingV3);
