//! The normalisation + quantisation fused family of large-model inference: GemmaRmsNorm,
//! DeepNorm (and its gradient), and RmsNorm (with or without the residual add) followed by a
//! static quantisation (`round(y / scale + offset)`, one or two outputs) or a dynamic
//! per-row one (through [`quant::dynamic_quant`]); LayerNorm (with the residual and bias adds)
//! followed by a static quantisation; SwiGlu followed by a static or dynamic quantisation
//! (SwiGluQuant, with MoE groups; DequantSwigluQuant, after an INT32 dequantisation); and
//! Quantize. InplaceAddRmsNorm and AddRmsNormCast are [`norm::add_rms_norm`] itself;
//! TransQuantParamV3 is [`quant::trans_quant_param_v3`].
//!
//! Statistics and the normalisation compute in float64 on dense copies; the quantised paths
//! follow the kernels: the sum `x1 + x2` is rounded into `x`'s dtype first, for FLOAT16
//! `x * rstd` and its product with gamma round to half, and the quantised value is rounded
//! half to even and saturated to int8 (NaN → 0).
//!
//! [`norm::add_rms_norm`]: super::norm::add_rms_norm

use super::dtype::DType;
use super::extra::{load, store};
use super::quant::{self, to_i8, Round};
use super::view::View;

fn f64s(v: &View) -> Result<Vec<f64>, String> {
    load(v, DType::F64)
}

fn put(b: Vec<f64>, out: &View) -> Result<(), String> {
    store(b, DType::F64, out)
}

/// `1 / sqrt(mean(row²) + eps)` of each row of `n` elements of `xs`.
fn rstd_rows(xs: &[f64], n: usize, eps: f64) -> Vec<f64> {
    xs.chunks(n.max(1))
        .map(|r| 1.0 / (r.iter().map(|v| v * v).sum::<f64>() / n as f64 + eps).sqrt())
        .collect()
}

/// `v` at the precision of `dt` (FLOAT16 and BFLOAT16 round to nearest even; others as is).
fn round_as(dt: DType, v: f64) -> f64 {
    match dt {
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::BF16 => half::bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

/// aclnnGemmaRmsNorm: `y = x * rstd * (1 + gamma)`, `rstd = 1 / sqrt(mean(x²) + eps)` over
/// gamma's trailing elements of each row.
pub fn gemma_rms_norm(
    x: &View,
    gamma: &View,
    eps: f64,
    y: &View,
    rstd: &View,
) -> Result<(), String> {
    let xs = f64s(x)?;
    let g = f64s(gamma)?;
    let n = g.len().max(1);
    let rs = rstd_rows(&xs, n, eps);
    let out = xs
        .iter()
        .enumerate()
        .map(|(i, v)| v * rs[i / n] * (1.0 + g[i % n]))
        .collect();
    put(out, y)?;
    put(rs, rstd)
}

/// aclnnDeepNorm: `x' = alpha * x + gx`, then per row (gamma's trailing elements) `mean`,
/// `rstd = 1 / sqrt(biased var + eps)` and `y = (x' - mean) * rstd * gamma + beta`.
#[allow(clippy::too_many_arguments)]
pub fn deep_norm(
    x: &View,
    gx: &View,
    beta: &View,
    gamma: &View,
    alpha: f64,
    eps: f64,
    mean: &View,
    rstd: &View,
    y: &View,
) -> Result<(), String> {
    let a = f64s(x)?;
    let b = f64s(gx)?;
    let be = f64s(beta)?;
    let g = f64s(gamma)?;
    let n = g.len().max(1);
    let xs: Vec<f64> = a.iter().zip(&b).map(|(p, q)| alpha * p + q).collect();
    let (mut ms, mut rs, mut out) = (vec![], vec![], vec![0f64; xs.len()]);
    for (r, row) in xs.chunks(n).enumerate() {
        let mu = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + eps).sqrt();
        for (i, v) in row.iter().enumerate() {
            out[r * n + i] = (v - mu) * inv * g[i] + be[i];
        }
        ms.push(mu);
        rs.push(inv);
    }
    put(out, y)?;
    put(ms, mean)?;
    put(rs, rstd)
}

/// aclnnDeepNormGrad from the saved per-row `mean` and `rstd`: with `t1 = dy * gamma` and
/// `t2 = alpha * x + gx - mean`, `dgx = t1 * rstd - mean(t1 * t2) * rstd³ * t2 - mean(t1) *
/// rstd`, `dx = alpha * dgx`, `dbeta = Σ_rows dy`, `dgamma = Σ_rows dy * rstd * t2`.
#[allow(clippy::too_many_arguments)]
pub fn deep_norm_grad(
    dy: &View,
    x: &View,
    gx: &View,
    gamma: &View,
    mean: &View,
    rstd: &View,
    alpha: f64,
    dx: &View,
    dgx: &View,
    dbeta: &View,
    dgamma: &View,
) -> Result<(), String> {
    let d = f64s(dy)?;
    let xs = f64s(x)?;
    let gxs = f64s(gx)?;
    let g = f64s(gamma)?;
    let ms = f64s(mean)?;
    let rs = f64s(rstd)?;
    let n = g.len().max(1);
    let (mut odgx, mut db, mut dg) = (vec![0f64; xs.len()], vec![0f64; n], vec![0f64; n]);
    for r in 0..xs.len() / n {
        let (mu, inv) = (ms[r], rs[r]);
        let row = r * n..(r + 1) * n;
        let t1: Vec<f64> = d[row.clone()].iter().zip(&g).map(|(a, b)| a * b).collect();
        let t2: Vec<f64> = row.clone().map(|i| alpha * xs[i] + gxs[i] - mu).collect();
        let dvar = -(0..n).map(|i| t1[i] * t2[i]).sum::<f64>() / n as f64 * inv.powi(3);
        let dmean = -t1.iter().sum::<f64>() / n as f64 * inv;
        for i in 0..n {
            odgx[r * n + i] = t1[i] * inv + dvar * t2[i] + dmean;
            db[i] += d[r * n + i];
            dg[i] += d[r * n + i] * inv * t2[i];
        }
    }
    put(odgx.iter().map(|v| alpha * v).collect(), dx)?;
    put(odgx, dgx)?;
    put(db, dbeta)?;
    put(dg, dgamma)
}

/// One static quantisation of the normalised `y`: `round(y / scale + offset)` (`y * scale`
/// when `div` is false); `scale` and `offset` hold one value or one per column.
pub struct StaticQuant<'a> {
    pub scale: &'a View,
    pub offset: Option<&'a View>,
    pub div: bool,
    pub out: &'a View,
}

/// One dynamic (per-row symmetric) quantisation of the normalised `y`, smoothed by `smooth`.
pub struct DynamicQuant<'a> {
    pub smooth: Option<&'a View>,
    pub out: &'a View,
    pub scale: &'a View,
}

/// The normalisation every RmsNorm+quant operator shares.
pub struct RmsNormIn<'a> {
    pub x1: &'a View,
    /// The residual: `x = x1 + x2`, rounded into `x_out` (which must then be given).
    pub x2: Option<&'a View>,
    pub x_out: Option<&'a View>,
    pub gamma: &'a View,
    pub beta: Option<&'a View>,
    pub eps: f64,
    /// Gets `x * rstd * gamma` (without beta).
    pub rms_out: Option<&'a View>,
}

/// `y = x * rstd * gamma + beta` for each row (gamma's trailing elements), as float64, with
/// the kernels' rounding (see the module doc).
fn rms_norm_rows(p: &RmsNormIn) -> Result<(Vec<f64>, usize), String> {
    let dt = p.x1.dtype;
    let xs = match (p.x2, p.x_out) {
        (Some(x2), Some(xo)) => {
            let a = f64s(p.x1)?;
            let b = f64s(x2)?;
            put(a.iter().zip(&b).map(|(p, q)| p + q).collect(), xo)?;
            f64s(xo)?
        }
        (Some(x2), None) => {
            let a = f64s(p.x1)?;
            let b = f64s(x2)?;
            a.iter().zip(&b).map(|(p, q)| round_as(dt, p + q)).collect()
        }
        _ => f64s(p.x1)?,
    };
    let g = f64s(p.gamma)?;
    let n = g.len().max(1);
    let rs = rstd_rows(&xs, n, p.eps);
    let half = dt == DType::F16;
    let normed: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let t = v * rs[i / n];
            if half {
                round_as(dt, round_as(dt, t) * g[i % n])
            } else {
                t * g[i % n]
            }
        })
        .collect();
    if let Some(o) = p.rms_out {
        put(normed.clone(), o)?;
    }
    let y = match p.beta {
        Some(b) => {
            let be = f64s(b)?;
            normed
                .iter()
                .enumerate()
                .map(|(i, v)| v + be[i % n])
                .collect()
        }
        None => normed,
    };
    Ok((y, n))
}

/// RmsNormQuant, AddRmsNormQuant(V2): the normalisation of `p`, then each of `quants`.
pub fn rms_norm_quant(p: &RmsNormIn, quants: &[StaticQuant]) -> Result<(), String> {
    let (y, n) = rms_norm_rows(p)?;
    static_quant(&y, n, quants)
}

/// Each of `quants` applied to `y` (rows of `n`; per-column parameters index by column).
fn static_quant(y: &[f64], n: usize, quants: &[StaticQuant]) -> Result<(), String> {
    for q in quants {
        let s: Vec<f32> = load(q.scale, DType::F32)?;
        let o: Vec<f32> = match q.offset {
            Some(o) => load(o, DType::F32)?,
            None => vec![0.0],
        };
        let at = |v: &[f32], i: usize| if v.len() == 1 { v[0] } else { v[i % n] };
        let out: Vec<f64> = y
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (v, sc) = (v as f32, at(&s, i));
                let t = if q.div { v / sc } else { v * sc };
                to_i8(t + at(&o, i), Round::Even)
            })
            .collect();
        store(out, DType::F64, q.out)?;
    }
    Ok(())
}

/// LayerNormQuant, AddLayerNormQuantV2 (static): `x = x1 (+ x2) (+ bias)` (bias shaped like
/// gamma or like x1; the sum rounded into `x_out`'s dtype when given), then per row
/// `y = (x - mean) / sqrt(biased var + eps) * gamma + beta` into `ln_out`, then `quants`.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_quant(
    x1: &View,
    x2: Option<&View>,
    bias: Option<&View>,
    gamma: &View,
    beta: &View,
    eps: f64,
    x_out: Option<&View>,
    ln_out: Option<&View>,
    quants: &[StaticQuant],
) -> Result<(), String> {
    let mut xs = f64s(x1)?;
    let g = f64s(gamma)?;
    let be = f64s(beta)?;
    let n = g.len().max(1);
    if let Some(x2) = x2 {
        xs.iter_mut().zip(f64s(x2)?).for_each(|(a, b)| *a += b);
    }
    if let Some(b) = bias {
        let b = f64s(b)?;
        let full = b.len() == xs.len();
        xs.iter_mut()
            .enumerate()
            .for_each(|(i, a)| *a += b[if full { i } else { i % n }]);
    }
    if let Some(o) = x_out {
        put(xs.clone(), o)?;
    }
    let mut y = vec![0f64; xs.len()];
    for (r, row) in xs.chunks(n).enumerate() {
        let mu = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + eps).sqrt();
        for (i, v) in row.iter().enumerate() {
            y[r * n + i] = (v - mu) * inv * g[i] + be[i];
        }
    }
    if let Some(o) = ln_out {
        put(y.clone(), o)?;
    }
    static_quant(&y, n, quants)
}

/// RmsNormDynamicQuant, AddRmsNormDynamicQuant(V2): the normalisation of `p` (as float32),
/// then each of `quants` by [`quant::dynamic_quant`] (the outputs may be
/// any shape with the same element count).
pub fn rms_norm_dynamic_quant(p: &RmsNormIn, quants: &[DynamicQuant]) -> Result<(), String> {
    let (y, n) = rms_norm_rows(p)?;
    let mut buf: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    let rows = buf.len() / n.max(1);
    let yv = View::of_slice(&mut buf, DType::F32, &[rows, n]);
    for q in quants {
        quant::dynamic_quant(&yv, q.smooth, q.out, q.scale, None)?;
    }
    Ok(())
}

/// aclnnQuantize: `out = round(x / scales + zero_points)` (half to even, in float32),
/// saturated to `out`'s integer type (INT8, UINT8 or INT32; NaN → 0); `scales` and
/// `zero_points` hold one value or one per index of x's `axis`.
pub fn quantize(
    x: &View,
    scales: &View,
    zero_points: Option<&View>,
    axis: usize,
    out: &View,
) -> Result<(), String> {
    let (lo, hi) = match out.dtype {
        DType::I8 => (-128.0, 127.0),
        DType::U8 => (0.0, 255.0),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        d => {
            return Err(format!(
                "quantize: out must be INT8, UINT8 or INT32, not {d}"
            ))
        }
    };
    let xs: Vec<f32> = load(x, DType::F32)?;
    let s: Vec<f32> = load(scales, DType::F32)?;
    let z: Vec<f32> = match zero_points {
        Some(z) => load(z, DType::F32)?,
        None => vec![0.0],
    };
    let is = quant::axis_index(&x.shape, axis, s.len());
    let iz = quant::axis_index(&x.shape, axis, z.len());
    let q: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let t = v / s[is(i)] + z[iz(i)];
            if t.is_nan() {
                0.0
            } else {
                (t.round_ties_even() as f64).clamp(lo, hi)
            }
        })
        .collect();
    store(q, DType::F64, out)
}

/// `swish(a) * b` of one row (a and b its halves; a the left one when `activate_left`), in
/// float32 as the kernels compute it.
fn swiglu_row(row: &[f32], activate_left: bool) -> Vec<f32> {
    let n = row.len() / 2;
    let (a, b) = if activate_left {
        (&row[..n], &row[n..])
    } else {
        (&row[n..], &row[..n])
    };
    (0..n)
        .map(|c| a[c] / (1.0 + (-a[c]).exp()) * b[c])
        .collect()
}

/// How SwiGluQuant quantises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwiGluQuantMode {
    /// Per row: `scale = 127 / max|y|` into `scale`, `q = rint(y * scale)`.
    Dynamic,
    /// `q = rint(y * smooth + offset)` (smooth and offset one value or one per column per
    /// group); `scale` is not written.
    Static,
}

/// aclnnSwiGluQuant(V2): `act = swish(a) * b` (a, b the halves of each row of `x`, a the left
/// one when `activate_left`; float32), then row r uses group `i`, the first whose end is
/// beyond r (`group` holds the ends, or with `count` each group's row count; one group when
/// `group` is None; rows past the last end
/// use none: no smoothing, no offset): `y = act * smooth[i]`, quantised by `mode` into the
/// int8 `out` (saturated; NaN → 0). `smooth` and `offsets` are `[G, N]` or `[G]`.
#[allow(clippy::too_many_arguments)]
pub fn swiglu_quant(
    x: &View,
    smooth: Option<&View>,
    offsets: Option<&View>,
    group: Option<(&View, bool)>,
    activate_left: bool,
    mode: SwiGluQuantMode,
    out: &View,
    scale: &View,
) -> Result<(), String> {
    let xs: Vec<f32> = load(x, DType::F32)?;
    let w = x.shape.last().copied().unwrap_or(0);
    let n = w / 2;
    let rows = xs.len().checked_div(w).unwrap_or(0);
    let ends: Option<Vec<i64>> = match group {
        Some((g, count)) => {
            let mut e: Vec<i64> = load(g, DType::I64)?;
            if count {
                for i in 1..e.len() {
                    e[i] += e[i - 1];
                }
            }
            Some(e)
        }
        None => None,
    };
    let sm: Option<Vec<f32>> = smooth.map(|s| load(s, DType::F32)).transpose()?;
    let of: Option<Vec<f32>> = offsets.map(|s| load(s, DType::F32)).transpose()?;
    // one value per group ([G]) or one per column ([G, N])
    let param = |v: &Option<Vec<f32>>, g: Option<usize>, c: usize, none: f32| match (v, g) {
        (Some(v), Some(g)) if v.len() % n.max(1) == 0 && v.len() >= (g + 1) * n => v[g * n + c],
        (Some(v), Some(g)) => v[g],
        _ => none,
    };
    let mut q = vec![0f64; rows * n];
    let mut scales = vec![0f32; rows];
    for r in 0..rows {
        let g = match &ends {
            None => Some(0),
            Some(e) => e.iter().position(|&end| end > r as i64),
        };
        let y: Vec<f32> = swiglu_row(&xs[r * w..(r + 1) * w], activate_left)
            .iter()
            .enumerate()
            .map(|(c, v)| v * param(&sm, g, c, 1.0))
            .collect();
        match mode {
            SwiGluQuantMode::Dynamic => {
                let m = y.iter().fold(0f32, |m, v| m.max(v.abs()));
                let s = 127.0 / m;
                scales[r] = s;
                for c in 0..n {
                    q[r * n + c] = to_i8(y[c] * s, Round::Even);
                }
            }
            SwiGluQuantMode::Static => {
                for c in 0..n {
                    q[r * n + c] = to_i8(y[c] + param(&of, g, c, 0.0), Round::Even);
                }
            }
        }
    }
    store(q, DType::F64, out)?;
    if mode == SwiGluQuantMode::Dynamic {
        store(scales, DType::F32, scale)?;
    }
    Ok(())
}

/// aclnnDequantSwigluQuant (no groups): per row `d = (x + bias_int) * weight_scale *
/// activation_scale[row] + bias_float` (each when given; float32), `act = swish(a) * b` of `d`'s
/// halves, then dynamic: `t = act * quant_scale`, `scale = max|t| / 127` into `scale_out`,
/// `y = rint(t / scale)`; static: `y = rint(act / quant_scale + quant_offset)`. `quant_scale`
/// and `quant_offset` hold one value or one per output column; int8 saturated.
#[allow(clippy::too_many_arguments)]
pub fn dequant_swiglu_quant(
    x: &View,
    weight_scale: Option<&View>,
    activation_scale: Option<&View>,
    bias: Option<&View>,
    quant_scale: Option<&View>,
    quant_offset: Option<&View>,
    activate_left: bool,
    mode: SwiGluQuantMode,
    out: &View,
    scale_out: &View,
) -> Result<(), String> {
    let f32s = |v: Option<&View>| v.map(|v| load::<f32>(v, DType::F32)).transpose();
    let xs: Vec<f64> = f64s(x)?;
    let (ws, acts, qs, qo) = (
        f32s(weight_scale)?,
        f32s(activation_scale)?,
        f32s(quant_scale)?,
        f32s(quant_offset)?,
    );
    let bias_int = bias.is_some_and(|b| b.dtype == DType::I32);
    let bs: Option<Vec<f64>> = bias.map(f64s).transpose()?;
    let w = x.shape.last().copied().unwrap_or(0);
    let n = w / 2;
    let rows = xs.len().checked_div(w).unwrap_or(0);
    let at = |v: &Option<Vec<f32>>, c: usize, none: f32| match v {
        Some(v) if v.len() == 1 => v[0],
        Some(v) => v[c],
        None => none,
    };
    let mut q = vec![0f64; rows * n];
    let mut scales = vec![0f32; rows];
    for r in 0..rows {
        let d: Vec<f32> = (0..w)
            .map(|c| {
                let mut v = xs[r * w + c];
                if let (true, Some(b)) = (bias_int, &bs) {
                    v += b[c];
                }
                let mut v = v as f32 * at(&ws, c, 1.0) * at(&acts, r, 1.0);
                if let (false, Some(b)) = (bias_int, &bs) {
                    v += b[c] as f32;
                }
                v
            })
            .collect();
        let act = swiglu_row(&d, activate_left);
        match mode {
            SwiGluQuantMode::Dynamic => {
                let t: Vec<f32> = act
                    .iter()
                    .enumerate()
                    .map(|(c, v)| v * at(&qs, c, 1.0))
                    .collect();
                let s = t.iter().fold(0f32, |m, v| m.max(v.abs())) / 127.0;
                scales[r] = s;
                for c in 0..n {
                    q[r * n + c] = to_i8(t[c] * (1.0 / s), Round::Even);
                }
            }
            SwiGluQuantMode::Static => {
                for c in 0..n {
                    let v = act[c] / at(&qs, c, 1.0) + at(&qo, c, 0.0);
                    q[r * n + c] = to_i8(v, Round::Even);
                }
            }
        }
    }
    store(q, DType::F64, out)?;
    if mode == SwiGluQuantMode::Dynamic {
        store(scales, DType::F32, scale_out)?;
    }
    Ok(())
}
