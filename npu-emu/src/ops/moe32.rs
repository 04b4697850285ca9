//! MoE routing, quantized and backward: `moe_init_routing_quant_v2`
//! (`aclnnMoeInitRoutingQuantV2`: MoeInitRoutingV2's routing with the gathered rows quantized
//! to INT8, statically or per row), `moe_init_routing_v2_grad` (`aclnnMoeInitRoutingV2Grad`:
//! each token sums the gradient rows of its `K` routed copies) and
//! `moe_finalize_routing_v2_grad` (`aclnnMoeFinalizeRoutingV2Grad`: the gradients of
//! MoeFinalizeRoutingV2's expanded rows and scales). The routing is
//! [`moe_route::route_v2`](super::moe_route::route_v2).

use super::dtype::DType;
use super::extra::{load, store};
use super::moe_route::{route_v2, InitRoutingV2};
use super::view::View;
use half::f16;

/// The quantization of [`moe_init_routing_quant_v2`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quant {
    /// `round(x·scale + offset)` with one scale and one offset.
    Static { scale: f32, offset: f32 },
    /// Per row: `s = max|x·smooth| / 127`, `round(x·smooth / s)`; `smooth` is none, one row
    /// (`[1, H]`) or one row per expert (`[E, H]`).
    Dynamic,
}

/// Round half to even and saturate to INT8.
fn rint_i8(v: f32) -> i64 {
    if v.is_nan() {
        return 0;
    }
    (v.round_ties_even() as i64).clamp(-128, 127)
}

/// f32 → f16 rounding toward zero (the kernel's CAST_TRUNC).
fn f16_trunc(v: f32) -> f16 {
    let h = f16::from_f32(v);
    if h.is_nan() || v.is_infinite() {
        return h;
    }
    if h.to_f32().abs() > v.abs() {
        f16::from_bits(h.to_bits() - 1)
    } else {
        h
    }
}

/// Static quantization of one element as the kernel computes it: FLOAT in f32, FLOAT16 and
/// BFLOAT16 in f16 (the product and the sum each rounded to f16), then round half to even
/// and saturate.
fn quant_static(x: f32, dt: DType, scale: f32, offset: f32) -> i64 {
    if dt == DType::F32 {
        rint_i8(x * scale + offset)
    } else {
        let h = f16::from_f32(f16::from_f32(x).to_f32() * f16::from_f32(scale).to_f32());
        let h = f16::from_f32(h.to_f32() + f16::from_f32(offset).to_f32());
        rint_i8(h.to_f32())
    }
}

/// MoeInitRoutingQuantV2: the routing of MoeInitRoutingV2 ([`route_v2`]) with each gathered
/// row quantized to INT8 (`expanded_x`, `[rows, H]` or `[E, C, H]`, unfilled rows zero).
/// Static: [`Quant::Static`] per element. Dynamic: per expanded row, `v = x·smooth` (f32,
/// `smooth` the row of the pair's expert when it has `E` rows), `s = max|v| / 127` into
/// `dyn_scale[row]` (0 for unfilled rows), `q = round_half_away(trunc_f16(v / s))`
/// saturated; an all-zero row gives scale 0 and zeros.
#[allow(clippy::too_many_arguments)]
pub fn moe_init_routing_quant_v2(
    x: &View,
    expert_idx: &View,
    smooth: Option<&View>,
    quant: Quant,
    p: InitRoutingV2,
    expanded_x: &View,
    expanded_row_idx: &View,
    tokens: Option<&View>,
    before_capacity: Option<&View>,
    dyn_scale: Option<&View>,
) -> Result<(), String> {
    let (n, h) = (x.shape[0], x.shape[1]);
    let experts: Vec<i64> = load(expert_idx, DType::I64)?;
    let r = route_v2(&experts, n, p);
    let xs: Vec<f32> = load(x, DType::F32)?;
    let sm: Option<Vec<f32>> = smooth.map(|s| load(s, DType::F32)).transpose()?;
    let sm_rows = sm.as_ref().map_or(0, |s| s.len() / h.max(1));
    let mut q = vec![0i64; r.out_rows * h];
    let mut scales = vec![0f32; r.out_rows];
    for g in &r.gathers {
        let src = &xs[g.src * h..(g.src + 1) * h];
        let dst = &mut q[g.dst * h..(g.dst + 1) * h];
        match quant {
            Quant::Static { scale, offset } => {
                for (d, &v) in dst.iter_mut().zip(src) {
                    *d = quant_static(v, x.dtype, scale, offset);
                }
            }
            Quant::Dynamic => {
                let row: Vec<f32> = match &sm {
                    Some(s) => {
                        let e = if sm_rows > 1 {
                            usize::try_from(g.expert)
                                .ok()
                                .filter(|&e| e < sm_rows)
                                .ok_or_else(|| {
                                    format!(
                                        "expert {} has no row in scaleOptional ({sm_rows} rows)",
                                        g.expert
                                    )
                                })?
                        } else {
                            0
                        };
                        src.iter()
                            .zip(&s[e * h..(e + 1) * h])
                            .map(|(a, b)| a * b)
                            .collect()
                    }
                    None => src.to_vec(),
                };
                let m = row.iter().fold(0f32, |m, v| m.max(v.abs()));
                let s = m / 127.0;
                scales[g.dst] = s;
                if s > 0.0 {
                    for (d, v) in dst.iter_mut().zip(&row) {
                        let t = f16_trunc(v / s).to_f32();
                        *d = (t.round() as i64).clamp(-128, 127);
                    }
                }
            }
        }
    }
    store(q, DType::I64, expanded_x)?;
    if let Some(d) = dyn_scale {
        store(scales, DType::F32, d)?;
    }
    if p.drop_pad {
        if let Some(b) = before_capacity {
            store(r.count.clone(), DType::I64, b)?;
        }
    } else if let Some(t) = tokens {
        store(r.tokens(p.count_flag), DType::I64, t)?;
    }
    store(r.row_idx, DType::I64, expanded_row_idx)
}

/// Which expanded rows exist: drop/pad skips `-1` (dropped), drop-less with `active > 0`
/// skips rows past `active`; any other index outside `[0, rows)` is an error.
fn expanded_row(
    idx: i64,
    i: usize,
    rows: usize,
    drop_pad: bool,
    active: usize,
) -> Result<Option<usize>, String> {
    if (drop_pad && idx == -1) || (!drop_pad && active > 0 && idx >= active as i64) {
        return Ok(None);
    }
    usize::try_from(idx)
        .ok()
        .filter(|&r| r < rows)
        .map(Some)
        .ok_or_else(|| format!("expandedRowIdx[{i}] = {idx} is outside [0, {rows})"))
}

/// MoeInitRoutingV2Grad: `grad_x[i] = Σ_t grad_expanded_x[expanded_row_idx[i·K + t]]` over the
/// rows that exist ([`expanded_row`]), f64 sums; `grad_expanded_x` is `[rows, H]` or
/// `[E, C, H]`.
pub fn moe_init_routing_v2_grad(
    grad_expanded_x: &View,
    expanded_row_idx: &View,
    top_k: usize,
    drop_pad: bool,
    active: usize,
    grad_x: &View,
) -> Result<(), String> {
    let h = *grad_x.shape.last().unwrap_or(&0);
    let n = grad_x.shape[0];
    let ge: Vec<f64> = load(grad_expanded_x, DType::F64)?;
    let rows = ge.len().checked_div(h).unwrap_or(0);
    let idx: Vec<i64> = load(expanded_row_idx, DType::I64)?;
    let mut out = vec![0f64; n * h];
    for (j, &v) in idx.iter().enumerate().take(n * top_k) {
        if let Some(r) = expanded_row(v, j, rows, drop_pad, active)? {
            let t = j / top_k;
            for c in 0..h {
                out[t * h + c] += ge[r * h + c];
            }
        }
    }
    store(out, DType::F64, grad_x)
}

/// MoeFinalizeRoutingV2Grad: for each pair `i` (`[R·K]`) whose expanded row `r =
/// expanded_row_idx[i]` exists ([`expanded_row`]): `grad_expanded_x[r] = grad_y[i / K]`
/// (times `scales[i]` when given) and `grad_scales[i] = Σ_j (expanded_x[r, j] + bias[expert[i],
/// j]) · grad_y[i / K, j]` (no bias: `expanded_x` alone); rows no pair reaches are zero, as is
/// the scale gradient of a dropped pair. f64 arithmetic.
#[allow(clippy::too_many_arguments)]
pub fn moe_finalize_routing_v2_grad(
    grad_y: &View,
    expanded_row_idx: &View,
    expanded_x: Option<&View>,
    scales: Option<&View>,
    expert_idx: Option<&View>,
    bias: Option<&View>,
    drop_pad: bool,
    active: usize,
    grad_expanded_x: &View,
    grad_scales: Option<&View>,
) -> Result<(), String> {
    let (r_n, h) = (grad_y.shape[0], grad_y.shape[1]);
    let gy: Vec<f64> = load(grad_y, DType::F64)?;
    let idx: Vec<i64> = load(expanded_row_idx, DType::I64)?;
    let k = idx.len().checked_div(r_n).unwrap_or(0).max(1);
    let rows = grad_expanded_x.numel().checked_div(h).unwrap_or(0);
    let sc: Option<Vec<f64>> = scales.map(|s| load(s, DType::F64)).transpose()?;
    let ex: Option<Vec<f64>> = expanded_x.map(|s| load(s, DType::F64)).transpose()?;
    let ei: Option<Vec<i64>> = expert_idx.map(|s| load(s, DType::I64)).transpose()?;
    let bs: Option<Vec<f64>> = bias.map(|s| load(s, DType::F64)).transpose()?;
    let b_rows = bs.as_ref().map_or(0, |b| b.len() / h.max(1));
    let mut gx = vec![0f64; rows * h];
    let mut gs = vec![0f64; idx.len()];
    for (i, &v) in idx.iter().enumerate() {
        let Some(r) = expanded_row(v, i, rows, drop_pad, active)? else {
            continue;
        };
        let t = i / k;
        let s = sc.as_ref().map_or(1.0, |s| s[i]);
        for c in 0..h {
            gx[r * h + c] = gy[t * h + c] * s;
        }
        if let Some(ex) = &ex {
            let bias_row = match (&bs, &ei) {
                (Some(_), Some(e)) => Some(
                    usize::try_from(e[i])
                        .ok()
                        .filter(|&e| e < b_rows)
                        .ok_or_else(|| {
                            format!(
                                "expertIdxOptional[{i}] = {} is outside the bias rows [0, {b_rows})",
                                e[i]
                            )
                        })?,
                ),
                _ => None,
            };
            let mut acc = 0f64;
            for c in 0..h {
                let b = match (bias_row, &bs) {
                    (Some(e), Some(b)) => b[e * h + c],
                    _ => 0.0,
                };
                acc += (ex[r * h + c] + b) * gy[t * h + c];
            }
            gs[i] = acc;
        }
    }
    store(gx, DType::F64, grad_expanded_x)?;
    if let Some(g) = grad_scales {
        store(gs, DType::F64, g)?;
    }
    Ok(())
}

/// The first element of `v` as f32 (a static quantization scale or offset of shape `[1]`).
pub fn first_f32(v: &View) -> Result<f32, String> {
    load::<f32>(v, DType::F32)?
        .first()
        .copied()
        .ok_or_else(|| "empty scale/offset".to_string())
}
