//! GroupedMatmulV4 / V5 in the A8W8 mode on Atlas A2/A3 (INT8 x and weight), the mode MoE
//! W8A8 inference uses (torch_npu's `npu_grouped_matmul(x=[int8], weight=[int8], ...,
//! scale=[...], per_token_scale=[...], group_list=..., split_item=3, group_type=0, ...)`).
//!
//! Provided, with the checks of CANN's `CheckFunctionQuantParams` / `CheckQuantParamsDtype`
//! (ops-transformer `gmm/grouped_matmul/op_host/op_api/aclnn_grouped_matmul.cpp`) and the
//! combinations of the aclnnGroupedMatmulV4 page: split along M (groupType 0, splitItem 2/3)
//! with one 2-D x `[M, K]`, one weight `[E, K, N]` (ND of any strides, so its transpose too,
//! or FRACTAL_NZ: the INT8 NZ storage `[E, N/32, K/16, 16, 32]` as `aclnnNpuFormatCast` /
//! `npu_format_cast(w, 29)` leave it, K a multiple of 16 and N of 32, converted to ND by the
//! task with the NZ reader every matmul weight goes through, `args::weight` /
//! `matmul::weight_view`), one y `[M, N]` and an INT64 groupList of E entries (cumulative or
//! counts); optional INT32 bias `[E, N]`; and
//!
//! - y BFLOAT16: scale BFLOAT16 `[E, N]`, perTokenScale FLOAT `[M]` optional;
//! - y FLOAT16: scale FLOAT `[E, N]`, perTokenScale FLOAT `[M]` optional;
//! - y INT8: scale UINT64/INT64 `[E, N]` (TransQuantParamV2's parameter), no perTokenScale;
//!   ND weight only (the V5 page's A8W8 table: INT8 (ND) for this row, ND/NZ for the others);
//! - y INT32: no scale, no perTokenScale.
//!
//! aclnnGroupedMatmulWeightNz (ND or FRACTAL_NZ weight, as its page lists) takes only the
//! two quantised rows its A2/A3 page documents: BFLOAT16 y with BFLOAT16 scale, FLOAT16 y
//! with FLOAT scale, perTokenScale absent or FLOAT.
//!
//! actType 1 relu, 2 gelu_tanh, 4 fast_gelu, 5 silu with a FLOAT16/BFLOAT16 y (applied in
//! f32 after the per-token scale, as the kernel's `ComputeDequantAndActivate`); 3 and values
//! outside 0-5 refused, as every GroupedMatmul mode refuses them.
//!
//! Not provided (refused with a message saying so): the multi-tensor forms (groupType -1,
//! lists of x/weight/y), a BFLOAT16 bias, the A8W4 mode (INT8 x with an int4 weight).

use super::args::{self as a, T};
use super::quant31::{first_of, opt_list, GmmArgs};
use crate::objects::{self, Object};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::gmm_extra as gmm_engine;
use npu_emu::ops::quant31::{self as engine, GmmAct};
use std::ffi::c_void;

fn not_provided(what: impl std::fmt::Display) -> NnError {
    NnError::invalid(format!(
        "GMM A8W8: {what} is not provided by npu-emu (it runs the A8W8 mode split along M \
         with one x [M, K], one weight [E, K, N] and one out [M, N])"
    ))
}

/// The activation of `act_type` for an output of type `y`: 1, 2, 4 and 5 with a FLOAT16 or
/// BFLOAT16 out; 0 is none; the rest (3, out of range, an activation with an integer out)
/// gets `gmm_act_type`'s refusal.
fn activation(act_type: i64, y: DType) -> NnResult<GmmAct> {
    let float_out = matches!(y, DType::F16 | DType::BF16);
    match act_type {
        1 if float_out => Ok(GmmAct::Relu),
        2 if float_out => Ok(GmmAct::GeluTanh),
        4 if float_out => Ok(GmmAct::FastGelu),
        5 if float_out => Ok(GmmAct::Silu),
        _ => super::quant::gmm_act_type(act_type, &format!("the A8W8 mode with {y} output"))
            .map(|()| GmmAct::None),
    }
}

/// Checks the A8W8 arguments and builds the task (`x[0]` is INT8).
pub(super) fn build(api: &'static str, g: &GmmArgs) -> NnResult<super::launch::Built> {
    let xs = a::tensor_list(g.x, "x")?;
    if g.weight.is_null() {
        return Err(NnError::nullptr("weight is nullptr"));
    }
    if g.out.is_null() {
        return Err(NnError::nullptr("out is nullptr"));
    }
    let w0 = first_of(g.weight).ok_or_else(|| NnError::invalid("weight must not be empty"))?;
    if w0.dtype != 2 {
        let name = npu_emu::formats::dtype_name(w0.dtype);
        return Err(if w0.dtype == 3 || w0.dtype == 29 {
            not_provided(format!(
                "x INT8 with weight {name} (the A8W4 mode, an int4 weight)"
            ))
        } else {
            NnError::invalid(format!(
                "GMM: x is INT8, so weight must be INT8 (the A8W8 mode), not {name}"
            ))
        });
    }
    // The weight's handles: each read by args::weight, ND or FRACTAL_NZ.
    let wh = objects::with(g.weight as usize, "aclTensorList", "weight", |o| match o {
        Object::TensorList(v) => Ok(v.clone()),
        _ => unreachable!(),
    })?;
    let ys = a::tensor_list(g.out, "out")?;
    match g.group_type {
        0 => {}
        2 => {
            return Err(NnError::invalid(
                "GMM: quant cases do not support splited axis is K (groupType 2)",
            ))
        }
        -1 => return Err(not_provided("groupType -1 (no grouping, lists of tensors)")),
        t => {
            return Err(NnError::invalid(format!(
                "groupType {t} must be -1 (none), 0 (M) or 2 (K)"
            )))
        }
    }
    if !(0..=3).contains(&g.split_item) {
        return Err(NnError::invalid(format!(
            "splitItem {} must be 0, 1, 2 or 3",
            g.split_item
        )));
    }
    if g.group_list_type != 0 && g.group_list_type != 1 {
        return Err(NnError::invalid(format!(
            "groupListType {} must be 0 (cumulative) or 1 (counts)",
            g.group_list_type
        )));
    }
    if xs.len() != 1 || wh.len() != 1 || ys.len() != 1 {
        return Err(not_provided(format!(
            "{} x, {} weight and {} out tensors",
            xs.len(),
            wh.len(),
            ys.len()
        )));
    }
    if g.split_item < 2 {
        return Err(NnError::invalid(format!(
            "When y is not separated, splitItem should be 2/3, but current splitItem is {}.",
            g.split_item
        )));
    }
    if wh[0] == 0 {
        return Err(NnError::nullptr("weight[0] is nullptr"));
    }
    let wt = a::weight(wh[0] as *const c_void, "weight")?;
    let nz = wt.nz.is_some();
    let (x, w, y) = (&xs[0], &wt.logical, &ys[0]);
    a::dtype_in(x, &[DType::I8])?;
    if x.ndim() != 2 {
        return Err(NnError::invalid(format!(
            "x must be 2-D [M, K], not {:?}",
            x.shape()
        )));
    }
    if w.ndim() != 3 {
        return Err(NnError::invalid(format!(
            "weight must be one 3-D [E, K, N] tensor, not {:?}",
            w.shape()
        )));
    }
    let (m, k) = (x.shape()[0], x.shape()[1]);
    let (e, kw, n) = (w.shape()[0], w.shape()[1], w.shape()[2]);
    if kw != k {
        return Err(NnError::invalid(format!(
            "x [{m}, {k}] and weight [{e}, {kw}, {n}] disagree on K"
        )));
    }
    let yd = y.dtype();
    if !matches!(yd, DType::I8 | DType::BF16 | DType::F16 | DType::I32) {
        return Err(NnError::invalid(format!(
            "out has data type {yd}; the A8W8 mode's out is INT8, INT32, FLOAT16 or BFLOAT16"
        )));
    }
    a::same_shape(y, &[m, n]).map_err(|e| e.with_suffix(" (out)"))?;
    if g.weight_nz_api && !matches!(yd, DType::BF16 | DType::F16) {
        return Err(NnError::invalid(format!(
            "out has data type {yd}; aclnnGroupedMatmulWeightNz's A8W8 mode (Atlas A2/A3) \
             writes BFLOAT16 (scale BFLOAT16) or FLOAT16 (scale FLOAT) only"
        )));
    }
    if nz {
        if yd == DType::I8 {
            return Err(NnError::invalid(
                "out INT8 (scale UINT64/INT64) takes an ND weight; a FRACTAL_NZ INT8 weight \
                 goes with BFLOAT16, FLOAT16 or INT32 out",
            ));
        }
        if k % 16 != 0 || n % 32 != 0 {
            return Err(NnError::invalid(format!(
                "When weight(INT8) format is FRACTAL_NZ, weight'shape(k[{k}], n[{n}]) should be \
                 divisible by the following shape: INT8:[16, 32],BF16/FP16[16, 16],INT4[16, 64])."
            )));
        }
    }
    if !opt_list(g.offset, "offsetOptional")?.is_empty() {
        return Err(NnError::invalid(
            "GMM: offset must be nullptr in quant, but now is not nullptr.",
        ));
    }
    g.quantised_nulls("")?;
    let act = activation(g.act_type, yd)?;
    // groupList: INT64 [E], required
    let gl = a::opt_tensor(g.group_list, "groupListOptional")?.ok_or_else(|| {
        NnError::invalid("groupListOptional is nullptr; groupType 0 (split along M) needs it")
    })?;
    if gl.dtype() != DType::I64 || gl.ndim() != 1 {
        return Err(NnError::invalid(format!(
            "groupListOptional must be a 1-D INT64 tensor, not {} {:?}",
            gl.dtype(),
            gl.shape()
        )));
    }
    if gl.numel() > 1024 || (e > 1 && gl.numel() != e) || gl.numel() == 0 {
        return Err(NnError::invalid(format!(
            "groupListOptional has {} entries; it must have one per expert of weight [{e}, {k}, \
             {n}] (at most 1024)",
            gl.numel()
        )));
    }
    let per_expert = |t: &T, arg: &str| -> NnResult<()> {
        if t.shape() != [e, n] {
            return Err(NnError::invalid(format!(
                "{arg} has shape {:?}; for weight [{e}, {k}, {n}] it must be [{e}, {n}]",
                t.shape()
            )));
        }
        Ok(())
    };
    let bs = opt_list(g.bias, "biasOptional")?;
    let bias = match bs.as_slice() {
        [] => None,
        [b] => {
            match b.dtype() {
                DType::I32 => {}
                DType::BF16 => return Err(not_provided("a BFLOAT16 biasOptional")),
                d => {
                    return Err(NnError::invalid(format!(
                        "biasOptional has data type {d}; the A8W8 mode takes an INT32 bias"
                    )))
                }
            }
            per_expert(b, "biasOptional")?;
            Some(b.clone())
        }
        _ => {
            return Err(NnError::invalid(format!(
                "biasOptional has {} tensors; with one weight it must be one [{e}, {n}]",
                bs.len()
            )))
        }
    };
    let ss = opt_list(g.scale, "scaleOptional")?;
    let pts = opt_list(g.per_token, "perTokenScaleOptional")?;
    if ss.len() > 1 || pts.len() > 1 {
        return Err(NnError::invalid(format!(
            "scaleOptional ({}) and perTokenScaleOptional ({}) must hold one tensor each with \
             one x, weight and out",
            ss.len(),
            pts.len()
        )));
    }
    let scale = ss.first().cloned();
    let per_token = pts.first().cloned();
    if yd == DType::I32 {
        if scale.is_some() || per_token.is_some() {
            return Err(NnError::invalid(
                "out INT32 takes no scaleOptional and no perTokenScaleOptional (the A8W8 mode \
                 with INT32 out is `x @ weight + bias`)",
            ));
        }
    } else {
        let Some(s) = &scale else {
            return Err(NnError::invalid(
                "GMM: scale must not be nullptr in quant, but now is nullptr.",
            ));
        };
        let sd = s.dtype();
        if let Some(p) = &per_token {
            let ok =
                (sd == DType::BF16 && yd == DType::BF16) || (sd == DType::F32 && yd == DType::F16);
            if !ok {
                return Err(NnError::invalid(format!(
                    "scaleOptional has data type {sd} with out {yd}: the per-token quant case \
                     only supports scale BFLOAT16 with out BFLOAT16, or scale FLOAT with out \
                     FLOAT16"
                )));
            }
            if p.dtype() != DType::F32 {
                return Err(NnError::invalid(format!(
                    "perTokenScaleOptional has data type {}; the per-token quant case takes \
                     FLOAT",
                    p.dtype()
                )));
            }
            if p.shape() != [m] {
                return Err(NnError::invalid(format!(
                    "perTokenScaleOptional has shape {:?}; it must be [{m}] (one per row of x)",
                    p.shape()
                )));
            }
        } else {
            let ok = (matches!(sd, DType::I64 | DType::U64) && yd == DType::I8)
                || (sd == DType::BF16 && yd == DType::BF16)
                || (sd == DType::F32 && yd == DType::F16);
            if !ok {
                return Err(NnError::invalid(format!(
                    "scaleOptional has data type {sd} with out {yd}: the per-channel quant case \
                     only supports scale INT64/UINT64 with out INT8, BFLOAT16 with out \
                     BFLOAT16, or FLOAT with out FLOAT16"
                )));
            }
        }
        per_expert(s, "scaleOptional")?;
    }
    let mut l = super::launch::Launch::new(api);
    let xi = l.input(x);
    let wi = xi + 1; // add_weight adds one input (the tensor or its NZ storage)
    let wnz = super::matmul::add_weight(&mut l, &wt);
    let wshape = vec![e, k, n];
    let bi = bias.as_ref().map(|b| l.input(b));
    let si = scale.as_ref().map(|s| l.input(s));
    let pi = per_token.as_ref().map(|p| l.input(p));
    let gi = l.input(&gl);
    let yi = l.output(y);
    let counts = g.group_list_type == 1;
    l.finish(move |v, _| {
        // an NZ weight as a dense [E, K, N] scratch for the duration of the task
        let (wv, _keep) = super::matmul::weight_view(&v[wi], &wnz, &wshape)?;
        let ends = gmm_engine::group_ends(&v[gi], counts)?;
        engine::grouped_matmul_a8w8(
            &v[xi],
            &wv,
            bi.map(|i| &v[i]),
            si.map(|i| &v[i]),
            pi.map(|i| &v[i]),
            &ends,
            act,
            &v[yi],
        )
    })
}
