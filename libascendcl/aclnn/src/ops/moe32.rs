//! MoE routing, quantized and backward (the ops-transformer operators MoeInitRoutingQuantV2,
//! MoeInitRoutingV2Grad, MoeFinalizeRoutingV2Grad). Null required tensors 161001; data
//! types and ranks 161002; the shape and attribute rules of the operators' shape inference
//! and tiling (optional inputs a mode needs included) 561002, as `aclnnMoeInitRoutingV2`.
//! The computation is `npu_emu::ops::moe32`.

use super::args as a;
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::moe32::{self as engine, Quant};
use npu_emu::ops::moe_route::InitRoutingV2;
use std::ffi::c_void;

/// `ACLNN_ERR_INNER_TILING_ERROR`: the shape and attribute rules of the tiling.
const TILING: i32 = 561002;

/// `ACL_INT4` (abi.md §aclDataType).
const ACL_INT4: i32 = 29;

const FLOATS: &[DType] = &[DType::F16, DType::BF16, DType::F32];

fn tiling(ok: bool, msg: impl FnOnce() -> String) -> Result<(), NnError> {
    if ok {
        Ok(())
    } else {
        Err(NnError::new(TILING, msg()))
    }
}

// ---------------------------------------------------------------- MoeInitRoutingQuantV2

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeInitRoutingQuantV2GetWorkspaceSize(
    x: *const c_void,
    expertIdx: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    activeNum: i64,
    expertCapacity: i64,
    expertNum: i64,
    dropPadMode: i64,
    expertTokensCountOrCumsumFlag: i64,
    expertTokensBeforeCapacityFlag: bool,
    quantMode: i64,
    expandedXOut: *const c_void,
    expandedRowIdxOut: *const c_void,
    expertTokensCountOrCumsumOutOptional: *const c_void,
    expertTokensBeforeCapacityOutOptional: *const c_void,
    dynamicQuantScaleOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeInitRoutingQuantV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (active_num, capacity, expert_num, mode, flag) = (
                activeNum,
                expertCapacity,
                expertNum,
                dropPadMode,
                expertTokensCountOrCumsumFlag,
            );
            let x = a::tensor(x, "x")?;
            let ei = a::tensor(expertIdx, "expertIdx")?;
            let scale = a::opt_tensor(scaleOptional, "scaleOptional")?;
            let offset = a::opt_tensor(offsetOptional, "offsetOptional")?;
            let ex = a::tensor(expandedXOut, "expandedXOut")?;
            let eri = a::tensor(expandedRowIdxOut, "expandedRowIdxOut")?;
            let tok = a::opt_tensor(
                expertTokensCountOrCumsumOutOptional,
                "expertTokensCountOrCumsumOutOptional",
            )?;
            let bc = a::opt_tensor(
                expertTokensBeforeCapacityOutOptional,
                "expertTokensBeforeCapacityOutOptional",
            )?;
            let dq = a::opt_tensor(dynamicQuantScaleOutOptional, "dynamicQuantScaleOutOptional")?;
            let tok = (mode == 0 && flag > 0).then_some(tok).flatten();
            let bc = (mode == 1 && expertTokensBeforeCapacityFlag)
                .then_some(bc)
                .flatten();
            let dq = (quantMode == 1).then_some(dq).flatten();
            if mode == 0 && flag > 0 && tok.is_none() {
                return Err(NnError::nullptr(
                    "expertTokensCountOrCumsumOutOptional must not be null when expertTokensCountOrCumsumFlag > 0",
                ));
            }
            if mode == 1 && expertTokensBeforeCapacityFlag && bc.is_none() {
                return Err(NnError::nullptr(
                    "expertTokensBeforeCapacityOutOptional must not be null when expertTokensBeforeCapacityFlag is true",
                ));
            }
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&ei, &[DType::I32])?;
            for t in scale.iter().chain(offset.iter()).chain(dq.iter()) {
                a::dtype_in(t, &[DType::F32])?;
            }
            a::dtype_in(&ex, &[DType::I8])?;
            a::dtype_in(&eri, &[DType::I32])?;
            for t in tok.iter().chain(bc.iter()) {
                a::dtype_in(t, &[DType::I32])?;
            }
            if x.ndim() != 2 || ei.ndim() != 2 || ei.shape()[0] != x.shape()[0] {
                return Err(NnError::invalid(format!(
                    "x must be (N, H) and expertIdx (N, K), but they are {:?} and {:?}",
                    x.shape(),
                    ei.shape()
                )));
            }
            let (n, h, k) = (x.shape()[0], x.shape()[1], ei.shape()[1]);
            let rules = [
                (active_num >= 0, "activeNum cannot be less than 0.".to_string()),
                (capacity >= 0, "The expertCapacity cannot be less than 0.".into()),
                (expert_num >= 0, "The expertNum cannot be less than 0.".into()),
                (mode == 0 || mode == 1, format!("The dropPadMode should be 0 or 1, but it is {mode}.")),
                (
                    mode == 0 || (capacity >= 1 && expert_num >= 1),
                    "The expertCapacity and expertNum should be greater 0 when dropPadMode is 1".into(),
                ),
                (
                    (0..=2).contains(&flag),
                    format!("The expertTokensCountOrCumsumFlag should be 0, 1 or 2, but it is {flag}."),
                ),
                (
                    flag == 0 || expert_num > 0,
                    "The expertNum should be greater than 0 when expertTokensCountOrCumsumFlag > 0".into(),
                ),
                (
                    mode == 0 || capacity <= n as i64,
                    format!("The first dim of x ({n}) cannot be less than expertCapacity ({capacity}) when dropPadMode is 1"),
                ),
                (quantMode == 0 || quantMode == 1, format!("The quantMode should be 0 or 1, but it is {quantMode}.")),
            ];
            if let Some((_, m)) = rules.into_iter().find(|r| !r.0) {
                return Err(NnError::new(TILING, m));
            }
            let (e_n, cap) = (expert_num as usize, capacity as usize);
            let nk = n * k;
            let rows = if mode == 1 {
                e_n * cap
            } else if active_num > 0 {
                nk.min(active_num as usize)
            } else {
                nk
            };
            if quantMode == 0 {
                let (Some(s), Some(o)) = (&scale, &offset) else {
                    return Err(NnError::new(
                        TILING,
                        "scaleOptional and offsetOptional must not be null when quantMode is 0 (static quant)",
                    ));
                };
                for t in [s, o] {
                    tiling(t.shape() == [1], || {
                        format!(
                            "{} must have shape [1] when quantMode is 0, but it is {:?}",
                            t.arg,
                            t.shape()
                        )
                    })?;
                }
            } else {
                if let Some(s) = &scale {
                    tiling(
                        s.ndim() == 2
                            && (s.shape()[0] == 1 || s.shape()[0] == e_n)
                            && s.shape()[1] == h,
                        || {
                            format!("scaleOptional must be [1, {h}] or [expertNum = {e_n}, {h}] when quantMode is 1, but it is {:?}", s.shape())
                        },
                    )?;
                }
                let Some(d) = &dq else {
                    return Err(NnError::new(
                        TILING,
                        "dynamicQuantScaleOutOptional must not be null when quantMode is 1 (dynamic quant)",
                    ));
                };
                tiling(d.shape() == [rows], || {
                    format!(
                        "dynamicQuantScaleOutOptional must have shape [{rows}], but it is {:?}",
                        d.shape()
                    )
                })?;
            }
            if mode == 1 {
                a::same_shape(&ex, &[e_n, cap, h])?;
            } else {
                a::same_shape(&ex, &[rows, h])?;
            }
            a::same_shape(&eri, &[nk])?;
            for t in tok.iter().chain(bc.iter()) {
                a::same_shape(t, &[e_n])?;
            }
            let p = InitRoutingV2 {
                active_num: active_num as usize,
                capacity: cap,
                expert_num: e_n,
                drop_pad: mode == 1,
                count_flag: flag,
            };
            let dynamic = quantMode == 1;
            let mut l = Launch::new("aclnnMoeInitRoutingQuantV2");
            l.input(&x);
            l.input(&ei);
            let si = scale.as_ref().map(|t| l.input(t));
            let oi = offset.as_ref().filter(|_| !dynamic).map(|t| l.input(t));
            let xo = l.output(&ex);
            l.output(&eri);
            let ti = tok.as_ref().map(|t| l.output(t));
            let bi = bc.as_ref().map(|t| l.output(t));
            let di = dq.as_ref().map(|t| l.output(t));
            l.finish(move |v, _| {
                let (quant, smooth) = if dynamic {
                    (Quant::Dynamic, si.map(|i| &v[i]))
                } else {
                    let one = |i: Option<usize>| -> Result<f32, String> {
                        let i = i.ok_or("static quant without its scale/offset")?;
                        engine::first_f32(&v[i])
                    };
                    (
                        Quant::Static {
                            scale: one(si)?,
                            offset: one(oi)?,
                        },
                        None,
                    )
                };
                engine::moe_init_routing_quant_v2(
                    &v[0],
                    &v[1],
                    smooth,
                    quant,
                    p,
                    &v[xo],
                    &v[xo + 1],
                    ti.map(|i| &v[i]),
                    bi.map(|i| &v[i]),
                    di.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnMoeInitRoutingQuantV2);

// ---------------------------------------------------------------- MoeInitRoutingV2Grad

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeInitRoutingV2GradGetWorkspaceSize(
    gradExpandedX: *const c_void,
    expandedRowIdx: *const c_void,
    topK: i64,
    dropPadMode: i64,
    activeNum: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeInitRoutingV2GradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let ge = a::tensor(gradExpandedX, "gradExpandedX")?;
            let ri = a::tensor(expandedRowIdx, "expandedRowIdx")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&ge, FLOATS)?;
            a::dtype_in(&ri, &[DType::I32])?;
            a::dtype_in(&o, &[ge.dtype()])?;
            tiling((0..=1).contains(&dropPadMode), || {
                format!("Attr drop_pad_mode should in range [0, 1], but it is {dropPadMode}.")
            })?;
            tiling(topK > 0, || {
                format!("Attr top_k must be larger than zero, but it is {topK}.")
            })?;
            tiling(activeNum >= 0, || {
                format!("Attr active_num should larger than or equal zero, but it is {activeNum}.")
            })?;
            tiling(ri.ndim() == 1, || {
                format!("expandedRowIdx must be 1-D, but it is {:?}", ri.shape())
            })?;
            tiling(ge.ndim() == 2 || ge.ndim() == 3, || {
                "The dim number of grad_expanded_x should be 2 or 3.".into()
            })?;
            tiling(dropPadMode == 0 || ge.ndim() == 3, || {
                "GradExpandedX input shape must be 3D under Drop/Pad mode.".into()
            })?;
            let bsk = ri.shape()[0];
            if dropPadMode == 0 {
                tiling(ge.ndim() == 2, || {
                    "GradExpandedX input shape must be 2D under dropless mode.".into()
                })?;
                tiling(activeNum != 0 || ge.shape()[0] == bsk, || {
                    "All inputs Dim 0 size should be same under dropless mode.".into()
                })?;
                tiling(activeNum == 0 || ge.shape()[0] as i64 == activeNum, || {
                    "Dim 0 size of GradExpandedX should be equal active_num under active scene."
                        .into()
                })?;
            }
            tiling(o.ndim() == 2, || {
                "The dim number of grad_x should be 2.".into()
            })?;
            let h = *ge.shape().last().unwrap();
            tiling(o.shape()[1] == h, || {
                "Tail dim size of input and output should be same.".into()
            })?;
            let k = topK as usize;
            tiling(bsk % k == 0, || {
                "expanded_row_idx shape or top_k val invalid".into()
            })?;
            tiling(o.shape()[0] == bsk / k, || {
                "output shape invalid, dim 0 of output gradX should be equal to the division of expandedRowIdx dim 0 and topK.".into()
            })?;
            let (drop, active) = (dropPadMode == 1, activeNum as usize);
            let mut l = Launch::new("aclnnMoeInitRoutingV2Grad");
            l.input(&ge);
            l.input(&ri);
            l.output(&o);
            l.finish(move |v, _| {
                engine::moe_init_routing_v2_grad(&v[0], &v[1], k, drop, active, &v[2])
            })
        },
    )
}

crate::phase2!(aclnnMoeInitRoutingV2Grad);

// ---------------------------------------------------------------- MoeFinalizeRoutingV2Grad

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeFinalizeRoutingV2GradGetWorkspaceSize(
    gradY: *const c_void,
    expandedRowIdx: *const c_void,
    expandedXOptional: *const c_void,
    scalesOptional: *const c_void,
    expertIdxOptional: *const c_void,
    biasOptional: *const c_void,
    dropPadMode: i64,
    activeNum: i64,
    expertNum: i64,
    expertCapacity: i64,
    gradExpandedXOut: *const c_void,
    gradScalesOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeFinalizeRoutingV2GradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let gy = a::tensor(gradY, "gradY")?;
            let ri = a::tensor(expandedRowIdx, "expandedRowIdx")?;
            let ex = a::opt_tensor(expandedXOptional, "expandedXOptional")?;
            let sc = a::opt_tensor(scalesOptional, "scalesOptional")?;
            let ei = a::opt_tensor(expertIdxOptional, "expertIdxOptional")?;
            let bias = a::opt_tensor(biasOptional, "biasOptional")?;
            let gex = a::tensor(gradExpandedXOut, "gradExpandedXOut")?;
            let gs = a::opt_tensor(gradScalesOut, "gradScalesOut")?;
            a::dtype_in(&gy, FLOATS)?;
            a::dtype_in(&ri, &[DType::I32])?;
            for t in ex.iter().chain(sc.iter()).chain(bias.iter()) {
                a::dtype_in(t, &[gy.dtype()])?;
            }
            if let Some(e) = &ei {
                a::dtype_in(e, &[DType::I32])?;
            }
            a::dtype_in(&gex, &[gy.dtype()])?;
            tiling(dropPadMode == 0 || dropPadMode == 1, || {
                format!("drop_pad_mode must be 0 or 1, but got {dropPadMode}.")
            })?;
            tiling(
                dropPadMode == 0 || (expertNum > 0 && expertCapacity > 0),
                || {
                    "if drop_pad_mod is 1, expert_num and expert_capacity must be greater than 0."
                        .into()
                },
            )?;
            tiling(activeNum >= 0, || {
                format!("active_num must be >= 0, but got {activeNum}.")
            })?;
            tiling(gy.ndim() == 2, || {
                format!("grad_y dimnum must be 2, but got {}.", gy.ndim())
            })?;
            tiling(ri.ndim() == 1, || {
                format!("expanded_row_idx dimnum must be 1, but got {}.", ri.ndim())
            })?;
            let (r_n, h, nk) = (gy.shape()[0], gy.shape()[1], ri.shape()[0]);
            tiling(r_n > 0 && nk % r_n == 0, || {
                format!("expanded_row_idx size {nk} must be a multiple of grad_y dim0 {r_n}")
            })?;
            let (dim_n, dim0) = if dropPadMode == 1 {
                (3, (expertNum * expertCapacity) as usize)
            } else if activeNum > 0 && (activeNum as usize) < nk {
                (2, activeNum as usize)
            } else {
                (2, nk)
            };
            let rows_of = |t: &a::T| -> usize {
                if t.ndim() == 3 {
                    t.shape()[0] * t.shape()[1]
                } else {
                    t.shape()[0]
                }
            };
            if let Some(s) = &sc {
                let Some(x) = &ex else {
                    return Err(NnError::new(
                        TILING,
                        "expandedXOptional can't be null when scalesOptional is not null.",
                    ));
                };
                tiling(x.ndim() == dim_n, || {
                    format!(
                        "expanded_x dimnum error. dropMode = {dropPadMode}, got expandedXdim {}",
                        x.ndim()
                    )
                })?;
                tiling(s.ndim() == 2, || {
                    format!("scales dimnum must be 2, but got {}.", s.ndim())
                })?;
                tiling(rows_of(x) == dim0, || {
                    format!(
                        "expanded_x rows must be equal to {dim0}, but got {:?}.",
                        x.shape()
                    )
                })?;
                tiling(x.shape()[dim_n - 1] == h, || {
                    format!(
                        "expanded_x last dim and grad_y dim1 must be same, but got {}, {h}.",
                        x.shape()[dim_n - 1]
                    )
                })?;
                tiling(s.shape()[0] == r_n && s.numel() == nk, || {
                    format!(
                        "scales must be [{r_n}, {}], but it is {:?}.",
                        nk / r_n,
                        s.shape()
                    )
                })?;
                if let Some(b) = &bias {
                    let Some(e) = &ei else {
                        return Err(NnError::new(
                            TILING,
                            "expertIdxOptional can't be null when biasOptional is not null.",
                        ));
                    };
                    tiling(e.shape()[0] == r_n && e.numel() == nk, || {
                        format!(
                            "expert_idx must be [{r_n}, {}], but it is {:?}.",
                            nk / r_n,
                            e.shape()
                        )
                    })?;
                    tiling(
                        b.ndim() == 2 && b.shape()[0] > 0 && b.shape()[1] == h,
                        || format!("bias must be [E, {h}], but it is {:?}.", b.shape()),
                    )?;
                    tiling(dropPadMode == 0 || b.shape()[0] as i64 == expertNum, || {
                        format!(
                            "bias dim0 must be equal to {expertNum}, but got {}.",
                            b.shape()[0]
                        )
                    })?;
                }
                let Some(g) = &gs else {
                    return Err(NnError::nullptr(
                        "gradScalesOut must not be null when scalesOptional is given",
                    ));
                };
                a::dtype_in(g, &[gy.dtype()])?;
                tiling(
                    g.ndim() == 2 && g.shape()[0] == r_n && g.numel() == nk,
                    || {
                        format!(
                            "grad_scales must be [{r_n}, {}], but it is {:?}.",
                            nk / r_n,
                            g.shape()
                        )
                    },
                )?;
            }
            tiling(
                gex.ndim() == dim_n && rows_of(&gex) == dim0 && gex.shape()[dim_n - 1] == h,
                || {
                    format!(
                        "grad_expanded_x must be {} with {dim0} rows of {h}, but it is {:?}.",
                        if dim_n == 3 {
                            "[expertNum, expertCapacity, H]"
                        } else {
                            "[rows, H]"
                        },
                        gex.shape()
                    )
                },
            )?;
            let with_scales = sc.is_some();
            let with_bias = with_scales && bias.is_some();
            let (drop, active) = (dropPadMode == 1, activeNum as usize);
            let mut l = Launch::new("aclnnMoeFinalizeRoutingV2Grad");
            l.input(&gy);
            l.input(&ri);
            let xi = ex.as_ref().filter(|_| with_scales).map(|t| l.input(t));
            let si = sc.as_ref().map(|t| l.input(t));
            let ei_i = ei.as_ref().filter(|_| with_bias).map(|t| l.input(t));
            let bi = bias.as_ref().filter(|_| with_bias).map(|t| l.input(t));
            let go = l.output(&gex);
            let gsi = gs.as_ref().filter(|_| with_scales).map(|t| l.output(t));
            l.finish(move |v, _| {
                engine::moe_finalize_routing_v2_grad(
                    &v[0],
                    &v[1],
                    xi.map(|i| &v[i]),
                    si.map(|i| &v[i]),
                    ei_i.map(|i| &v[i]),
                    bi.map(|i| &v[i]),
                    drop,
                    active,
                    &v[go],
                    gsi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnMoeFinalizeRoutingV2Grad);

// ---------------------------------------------------------------- GroupedMatmulSwigluQuant (V1)

/// `aclnnGroupedMatmulSwigluQuant` / `...WeightNZ` on Atlas A2/A3: the A8W8 form (INT8 x and
/// weight `[E, K, N]`, per-channel weightScale `[E, N]`, per-token xScale `[M]`, cumulative
/// INT64 groupList; INT8 output `[M, N/2]` and FLOAT outputScale `[M]`), computed as V2's
/// A8W8 mode. bias with an INT8 weight is refused as CANN refuses it; offset and
/// outputOffset belong to the asymmetric quantization the page marks unsupported and are not
/// read or written. The A8W4 form (INT4 weight, UINT64 weightScale) is not provided.
#[allow(clippy::too_many_arguments)]
unsafe fn gmm_swiglu_quant_v1(
    name: &'static str,
    api: &'static str,
    nz_api: bool,
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    weight_scale: *const c_void,
    x_scale: *const c_void,
    group_list: *const c_void,
    output: *const c_void,
    output_scale: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        for (h, arg) in [
            (x, "x"),
            (weight, "weight"),
            (weight_scale, "weightScale"),
            (x_scale, "xScale"),
            (group_list, "groupList"),
            (output, "output"),
            (output_scale, "outputScale"),
        ] {
            if h.is_null() {
                return Err(NnError::nullptr(format!("{arg} is nullptr")));
            }
        }
        let xt = a::tensor(x, "x")?;
        if crate::objects::tensor(weight as usize, "weight")?.dtype == ACL_INT4 {
            return Err(NnError::invalid(
                "weight is INT4: the A8W4 form of GroupedMatmulSwigluQuant is not provided by \
                 npu-emu (INT8 weights only)",
            ));
        }
        let w = {
            // CANN's example passes the NZ weight as its own 5-D view [E, N/32, K/16, 16, 32]
            // (the storage shape): restate it as the [E, K, N] matrix the storage holds.
            let mut t = crate::objects::tensor(weight as usize, "weight")?;
            let v = t.view_shape.clone();
            if t.format == npu_emu::formats::FORMAT_FRACTAL_NZ && v.len() == 5 {
                t.view_shape = vec![v[0], v[2] * v[3], v[1] * v[4]];
                t.strides = crate::meta::contiguous_strides(&t.view_shape);
            }
            a::weight_of(t, "weight")?
        };
        if xt.dtype() == DType::I8 && w.logical.dtype() == DType::I8 && !bias.is_null() {
            return Err(NnError::invalid(
                "bias must be nullptr when x and weight are INT8 (A8W8 takes no bias)",
            ));
        }
        if nz_api && w.nz.is_none() {
            return Err(NnError::invalid(
                "weight must be in FRACTAL_NZ for aclnnGroupedMatmulSwigluQuantWeightNZ (cast it \
                 with aclnnNpuFormatCast / npu_format_cast(w, 29))",
            ));
        }
        let ws = a::tensor(weight_scale, "weightScale")?;
        let xs = a::tensor(x_scale, "xScale")?;
        let gl = a::tensor(group_list, "groupList")?;
        let out = a::tensor(output, "output")?;
        let os = a::tensor(output_scale, "outputScale")?;
        super::quant31::swiglu_quant_a8w8(api, xt, w, ws, xs, gl, out, os, false)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnGroupedMatmulSwigluQuantGetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    _offset: *const c_void,
    weightScale: *const c_void,
    xScale: *const c_void,
    groupList: *const c_void,
    output: *const c_void,
    outputScale: *const c_void,
    _outputOffset: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    gmm_swiglu_quant_v1(
        "aclnnGroupedMatmulSwigluQuantGetWorkspaceSize",
        "aclnnGroupedMatmulSwigluQuant",
        false,
        x,
        weight,
        bias,
        weightScale,
        xScale,
        groupList,
        output,
        outputScale,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnGroupedMatmulSwigluQuantWeightNZGetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    _offset: *const c_void,
    weightScale: *const c_void,
    xScale: *const c_void,
    groupList: *const c_void,
    output: *const c_void,
    outputScale: *const c_void,
    _outputOffset: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    gmm_swiglu_quant_v1(
        "aclnnGroupedMatmulSwigluQuantWeightNZGetWorkspaceSize",
        "aclnnGroupedMatmulSwigluQuantWeightNZ",
        true,
        x,
        weight,
        bias,
        weightScale,
        xScale,
        groupList,
        output,
        outputScale,
        workspaceSize,
        executor,
    )
}

crate::phase2!(
    aclnnGroupedMatmulSwigluQuant,
    aclnnGroupedMatmulSwigluQuantWeightNZ
);
