//! Operators of CANN 8.5's ops-nn examples that had no entry in npu-emu yet and need math of
//! their own: `BinaryCrossEntropyGradV2` (ops-nn `experimental/loss`), whose formula is not the
//! one of `aclnnBinaryCrossEntropyBackward`; `DequantBias`, `QuantizedBatchNorm` and
//! `ExpandIntoJaggedPermute`; `MaskedSoftmaxWithRelPosBias`; `FlatQuant`; `DynamicBlockQuant`'s
//! Atlas A2 form; `ApplyFusedEmaAdam`; `AdaLayerNormQuant` (on `model_ops::ada_layer_norm`);
//! `BatchMatmulQuant`.
//!
//! Float elements are read as `f64`, computed in `f64` and rounded once into the output's
//! type; integer elements are computed in `i64` and wrap to the output's width.

use super::dtype::DType;
use super::extra::{load, store};
use super::view::View;

/// How `BinaryCrossEntropyGradV2` uses `grad` (its `reduction` attribute: 0 none, 1 sum,
/// 2 mean, in the operator's numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BceGradMode {
    /// `grad` has the shape of `logits`, read element by element.
    None,
    /// `grad`'s first element scales every element.
    Sum,
    /// `grad`'s first element divided by the element count scales every element.
    Mean,
}

/// `z = weight * g * (logits - labels)` element by element, where `g` is `grad`'s element
/// (`None`) or its first element (`Sum`), divided by `logits`' element count (`Mean`), as
/// the ops-nn kernel computes it. All tensors share one type; `weight`, `labels` and `z`
/// have `logits`' shape.
pub fn bce_grad_v2(
    grad: &View,
    logits: &View,
    labels: &View,
    weight: &View,
    mode: BceGradMode,
    z: &View,
) -> Result<(), String> {
    let n = logits.numel();
    if n == 0 {
        return Ok(());
    }
    if z.dtype.is_float() {
        let g: Vec<f64> = load(grad, DType::F64)?;
        let x: Vec<f64> = load(logits, DType::F64)?;
        let y: Vec<f64> = load(labels, DType::F64)?;
        let w: Vec<f64> = load(weight, DType::F64)?;
        let s = match mode {
            BceGradMode::None => None,
            BceGradMode::Sum => Some(g[0]),
            BceGradMode::Mean => Some(g[0] / n as f64),
        };
        let out = (0..n)
            .map(|i| w[i] * s.unwrap_or_else(|| g[i]) * (x[i] - y[i]))
            .collect();
        store::<f64>(out, DType::F64, z)
    } else {
        let g: Vec<i64> = load(grad, DType::I64)?;
        let x: Vec<i64> = load(logits, DType::I64)?;
        let y: Vec<i64> = load(labels, DType::I64)?;
        let w: Vec<i64> = load(weight, DType::I64)?;
        // the kernel divides in float and converts back to the integer type (truncation)
        let s = match mode {
            BceGradMode::None => None,
            BceGradMode::Sum => Some(g[0]),
            BceGradMode::Mean => Some((g[0] as f64 / n as f64) as i64),
        };
        let out = (0..n)
            .map(|i| {
                x[i].wrapping_sub(y[i])
                    .wrapping_mul(s.unwrap_or_else(|| g[i]))
                    .wrapping_mul(w[i])
            })
            .collect();
        store::<i64>(out, DType::I64, z)
    }
}

/// The `bias` of [`dequant_bias`]: INT32 is added to `x` before the scales, a float one after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequantBiasKind {
    /// No bias.
    None,
    /// `(x + bias) · weightScale · activateScale`.
    Int,
    /// `x · weightScale · activateScale + bias`.
    Float,
}

/// `DequantBias` over `x` INT32 `[M, N]`: per row `m` and column `n`,
/// `y = x · ws[n] · as[m]` with the bias added before (INT32, integer addition) or after
/// (float) the scales, in float32 in the kernel's order and rounded once into `y`.
pub fn dequant_bias(
    x: &View,
    weight_scale: &View,
    activate_scale: Option<&View>,
    bias: Option<&View>,
    kind: DequantBiasKind,
    y: &View,
) -> Result<(), String> {
    let (m, n) = (x.shape[0], x.shape[1]);
    if m * n == 0 {
        return Ok(());
    }
    let xs: Vec<i64> = load(x, DType::I64)?;
    let ws: Vec<f32> = load(weight_scale, DType::F32)?;
    let act: Option<Vec<f32>> = activate_scale.map(|a| load(a, DType::F32)).transpose()?;
    let bi: Option<Vec<i64>> = match (bias, kind) {
        (Some(b), DequantBiasKind::Int) => Some(load(b, DType::I64)?),
        _ => None,
    };
    let bf: Option<Vec<f32>> = match (bias, kind) {
        (Some(b), DequantBiasKind::Float) => Some(load(b, DType::F32)?),
        _ => None,
    };
    let mut out = vec![0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            let mut a = xs[r * n + c];
            if let Some(b) = &bi {
                a = (a as i32).wrapping_add(b[c] as i32) as i64;
            }
            let mut v = a as f32 * ws[c];
            if let Some(s) = &act {
                v *= s[r];
            }
            if let Some(b) = &bf {
                v += b[c];
            }
            out[r * n + c] = v;
        }
    }
    store(out, DType::F32, y)
}

/// `QuantizedBatchNorm` over `input` `[N, C, H, W]` (INT8, UINT8 or INT32): per channel `c`,
/// `x' = (x − izp) · is`, `y = (x' − mean[c]) / sqrt(var[c] + eps) · weight[c] + bias[c]`,
/// `out = round_half_even(y / os + ozp)` saturated to the output's type; float32 arithmetic.
#[allow(clippy::too_many_arguments)]
pub fn quantized_batch_norm(
    input: &View,
    mean: &View,
    var: &View,
    weight: Option<&View>,
    bias: Option<&View>,
    scales: [f32; 2],
    zero_points: [i32; 2],
    eps: f32,
    out: &View,
) -> Result<(), String> {
    let total = input.numel();
    if total == 0 {
        return Ok(());
    }
    let c = input.shape[1];
    let inner: usize = input.shape[2..].iter().product();
    let x: Vec<i64> = load(input, DType::I64)?;
    let mu: Vec<f32> = load(mean, DType::F32)?;
    let va: Vec<f32> = load(var, DType::F32)?;
    let w: Vec<f32> = match weight {
        Some(w) => load(w, DType::F32)?,
        None => vec![1.0; c],
    };
    let b: Vec<f32> = match bias {
        Some(b) => load(b, DType::F32)?,
        None => vec![0.0; c],
    };
    let (lo, hi) = match out.dtype {
        DType::I8 => (-128.0, 127.0),
        DType::U8 => (0.0, 255.0),
        _ => (i32::MIN as f64, i32::MAX as f64),
    };
    let [is, os] = scales;
    let [izp, ozp] = zero_points;
    let res: Vec<i64> = (0..total)
        .map(|i| {
            let ch = (i / inner) % c;
            let xp = (x[i] - izp as i64) as f32 * is;
            let y = (xp - mu[ch]) / (va[ch] + eps).sqrt() * w[ch] + b[ch];
            let q = (y / os + ozp as f32) as f64;
            q.round_ties_even().clamp(lo, hi) as i64
        })
        .collect();
    store(res, DType::I64, out)
}

/// `ExpandIntoJaggedPermute`: for each output table `i`, the `len = outputOffset[i+1] −
/// outputOffset[i]` positions from `outputOffset[i]` receive
/// `inputOffset[permute[i]] + 0 .. len`. Fails naming the entry when a permute value or an
/// offset falls outside the tensors.
pub fn expand_into_jagged_permute(
    permute: &View,
    input_offset: &View,
    output_offset: &View,
    out: &View,
) -> Result<(), String> {
    let p: Vec<i64> = load(permute, DType::I64)?;
    let io: Vec<i64> = load(input_offset, DType::I64)?;
    let oo: Vec<i64> = load(output_offset, DType::I64)?;
    let size = out.numel() as i64;
    let mut res = vec![0i64; out.numel()];
    for (i, &t) in p.iter().enumerate() {
        if t < 0 || t as usize >= p.len() {
            return Err(format!("permute[{i}] is {t}, outside [0, {})", p.len()));
        }
        let (s, e) = (oo[i], oo[i + 1]);
        if s < 0 || e < s || e > size {
            return Err(format!(
                "outputOffset[{i}..{}] is [{s}, {e}], not increasing within the output of {size}",
                i + 1
            ));
        }
        let base = io[t as usize];
        for (j, r) in res[s as usize..e as usize].iter_mut().enumerate() {
            *r = base + j as i64;
        }
    }
    store(res, DType::I64, out)
}

/// `MaskedSoftmaxWithRelPosBias` (Swin Transformer's window attention): `x` viewed as
/// `[B, W, N, S1, S2]`, `mask` `[W, S1, S2]` (optional), `bias` `[N, S1, S2]`;
/// `out = softmax(scale · x + mask + bias)` over S2, in `f64`, rounded once.
pub fn masked_softmax_rel_pos_bias(
    x: &View,
    mask: Option<&View>,
    bias: &View,
    scale: f64,
    dims: [usize; 5],
    out: &View,
) -> Result<(), String> {
    let [b, w, n, s1, s2] = dims;
    let total = b * w * n * s1 * s2;
    if total == 0 {
        return Ok(());
    }
    let xs: Vec<f64> = load(x, DType::F64)?;
    let ms: Option<Vec<f64>> = mask.map(|m| load(m, DType::F64)).transpose()?;
    let bs: Vec<f64> = load(bias, DType::F64)?;
    let mut res = vec![0f64; total];
    let plane = s1 * s2;
    for row in 0..b * w * n * s1 {
        let i = row % s1;
        let h = (row / s1) % n;
        let win = (row / (s1 * n)) % w;
        let base = row * s2;
        let r = &mut res[base..base + s2];
        for (j, v) in r.iter_mut().enumerate() {
            let mut t = scale * xs[base + j] + bs[h * plane + i * s2 + j];
            if let Some(m) = &ms {
                t += m[win * plane + i * s2 + j];
            }
            *v = t;
        }
        let mx = r.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut sum = 0.0;
        for v in r.iter_mut() {
            *v = if mx == f64::NEG_INFINITY {
                0.0
            } else {
                (*v - mx).exp()
            };
            sum += *v;
        }
        for v in r.iter_mut() {
            *v /= sum;
        }
    }
    store(res, DType::F64, out)
}

/// `v` rounded to the float type `dt` (f16/bf16), kept as f32.
fn round_to(v: f32, dt: DType) -> f32 {
    match dt {
        DType::F16 => half::f16::from_f32(v).to_f32(),
        DType::BF16 => half::bf16::from_f32(v).to_f32(),
        _ => v,
    }
}

/// `FlatQuant` over `x` `[K, M, N]` (FLOAT16/BFLOAT16): per slice `k`,
/// `x'' = P1 @ (x[k] @ P2)` (each product summed exactly, rounded to x's type, as the cube
/// unit stores it), `quantScale[k] = max|x''| · clip / 7`, and the INT4 values
/// `rint(x'' · (7 / clip) / max|x''|)` (saturated to [-8, 7]; a zero slice uses the factor 7),
/// packed eight to an INT32 word of `out` `[K, M, N/8]`, low nibble first.
pub fn flat_quant(
    x: &View,
    p1: &View,
    p2: &View,
    clip: f32,
    out: &View,
    quant_scale: &View,
) -> Result<(), String> {
    let (k, m, n) = (x.shape[0], x.shape[1], x.shape[2]);
    let dt = x.dtype;
    let xs: Vec<f64> = load(x, DType::F64)?;
    let a: Vec<f64> = load(p1, DType::F64)?;
    let b: Vec<f64> = load(p2, DType::F64)?;
    let mut words = Vec::with_capacity(k * m * n / 8);
    let mut scales = Vec::with_capacity(k);
    let mut t1 = vec![0f32; m * n];
    let mut t2 = vec![0f32; m * n];
    for s in 0..k {
        let xk = &xs[s * m * n..(s + 1) * m * n];
        for i in 0..m {
            for j in 0..n {
                let acc: f64 = (0..n).map(|l| xk[i * n + l] * b[l * n + j]).sum();
                t1[i * n + j] = round_to(acc as f32, dt);
            }
        }
        for i in 0..m {
            for j in 0..n {
                let acc: f64 = (0..m).map(|l| a[i * m + l] * t1[l * n + j] as f64).sum();
                t2[i * n + j] = round_to(acc as f32, dt);
            }
        }
        let mx = t2.iter().fold(0f32, |acc, v| acc.max(v.abs()));
        scales.push(mx * clip / 7.0);
        let mult = if mx != 0.0 { (7.0 / clip) / mx } else { 7.0 };
        for row in t2.chunks(8) {
            let w = row.iter().enumerate().fold(0u32, |acc, (i, &v)| {
                let q = round_to(v * mult, dt).round_ties_even().clamp(-8.0, 7.0) as i32;
                acc | ((q as u32 & 0xF) << (4 * i))
            });
            words.push(w as i32 as i64);
        }
    }
    store(words, DType::I64, out)?;
    store(scales, DType::F32, quant_scale)
}

/// `DynamicBlockQuant` as Atlas A2 runs it (one-row blocks, INT8): `x` viewed as `[R, N]`,
/// each row split into blocks of `col_block` columns; per block `max = max|x|`, the scale
/// `min(max / 127, 1 / min_scale)` into `scale` `[R, ceil(N / col_block)]` and
/// `y = rint(x · max(127 / max, min_scale))` saturated to INT8 (`min_scale` 0: no bounds;
/// an all-zero block gives scale 0 and zeros). float32 arithmetic.
pub fn dynamic_block_quant_rows(
    x: &View,
    min_scale: f32,
    col_block: usize,
    y: &View,
    scale: &View,
) -> Result<(), String> {
    let n = *x.shape.last().unwrap_or(&1);
    let total = x.numel();
    if total == 0 || n == 0 {
        return Ok(());
    }
    let xs: Vec<f32> = load(x, DType::F32)?;
    let mut ys = vec![0i64; total];
    let mut ss = Vec::with_capacity(total / n * n.div_ceil(col_block));
    for (row, yrow) in xs.chunks(n).zip(ys.chunks_mut(n)) {
        for (blk, yb) in row.chunks(col_block).zip(yrow.chunks_mut(col_block)) {
            let mx = blk.iter().fold(0f32, |acc, v| acc.max(v.abs()));
            let mut s = mx * (1.0 / 127.0);
            let mut q = if mx > 0.0 { 1.0 / mx * 127.0 } else { 0.0 };
            if min_scale > 0.0 {
                s = s.min(1.0 / min_scale);
                if mx > 0.0 {
                    q = q.max(min_scale);
                }
            }
            ss.push(s);
            for (v, o) in blk.iter().zip(yb.iter_mut()) {
                *o = (v * q).round_ties_even().clamp(-128.0, 127.0) as i64;
            }
        }
    }
    store(ys, DType::I64, y)?;
    store(ss, DType::F32, scale)
}

/// The hyper-parameters of [`fused_ema_adam`].
#[derive(Clone, Copy, Debug)]
pub struct EmaAdam {
    pub lr: f32,
    pub ema_decay: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    /// 0: L2 (`grad += weightDecay · var`), 1: AdamW (`update += weightDecay · var`).
    pub mode: i64,
    pub bias_correction: bool,
    pub weight_decay: f32,
}

/// `ApplyFusedEmaAdam`: one Adam(W) step of `var`, `m`, `v` (in place, float32 arithmetic)
/// followed by the EMA `s = emaDecay · s + (1 − emaDecay) · var`; `step` the INT64 step count
/// (its first element) for the bias correction.
pub fn fused_ema_adam(
    grad: &View,
    step: &View,
    p: EmaAdam,
    var: &View,
    m: &View,
    v: &View,
    s: &View,
) -> Result<(), String> {
    let n = var.numel();
    if n == 0 {
        return Ok(());
    }
    let st: Vec<i64> = load(step, DType::I64)?;
    let step = *st.first().ok_or("step is empty")?;
    let g: Vec<f32> = load(grad, DType::F32)?;
    let mut w: Vec<f32> = load(var, DType::F32)?;
    let mut mm: Vec<f32> = load(m, DType::F32)?;
    let mut vv: Vec<f32> = load(v, DType::F32)?;
    let mut ss: Vec<f32> = load(s, DType::F32)?;
    let (c1, c2) = if p.bias_correction {
        (
            1.0 - p.beta1.powf(step as f32),
            1.0 - p.beta2.powf(step as f32),
        )
    } else {
        (1.0, 1.0)
    };
    for i in 0..n {
        let mut gi = g[i];
        if p.mode == 0 {
            gi += p.weight_decay * w[i];
        }
        mm[i] = p.beta1 * mm[i] + (1.0 - p.beta1) * gi;
        vv[i] = p.beta2 * vv[i] + (1.0 - p.beta2) * gi * gi;
        let denom = (vv[i] / c2).sqrt() + p.eps;
        let mut update = (mm[i] / c1) / denom;
        if p.mode == 1 {
            update += p.weight_decay * w[i];
        }
        w[i] -= p.lr * update;
        ss[i] = p.ema_decay * ss[i] + (1.0 - p.ema_decay) * w[i];
    }
    store(w, DType::F32, var)?;
    store(mm, DType::F32, m)?;
    store(vv, DType::F32, v)?;
    store(ss, DType::F32, s)
}

/// `AdaLayerNormQuant` (quantMode "dynamic"): `y = AdaLayerNorm(x)` (model_ops'
/// engine, in `f64`), times `smooth` `[H]` when given, then per row `scale = max|y| / 127`
/// and `out = round_half_even(y / scale)` saturated to INT8 (an all-zero row: scale 0,
/// zeros). `quant_scale` has the rows' shape `[B…, S]`.
#[allow(clippy::too_many_arguments)]
pub fn ada_layer_norm_quant(
    x: &View,
    scale: &View,
    shift: &View,
    w: Option<&View>,
    b: Option<&View>,
    smooth: Option<&View>,
    eps: f64,
    out: &View,
    quant_scale: &View,
) -> Result<(), String> {
    let h = *x.shape.last().unwrap_or(&1);
    let mut y = vec![0f64; x.numel()];
    if y.is_empty() || h == 0 {
        return Ok(());
    }
    super::model_ops::ada_layer_norm(
        x,
        scale,
        shift,
        w,
        b,
        eps,
        &View::of_slice(&mut y, DType::F64, &x.shape),
        None,
        None,
    )?;
    let sm: Option<Vec<f64>> = smooth.map(|t| load(t, DType::F64)).transpose()?;
    let mut q = vec![0i64; y.len()];
    let mut scales = Vec::with_capacity(y.len() / h);
    for (row, qr) in y.chunks_mut(h).zip(q.chunks_mut(h)) {
        if let Some(sm) = &sm {
            for (v, s) in row.iter_mut().zip(sm) {
                *v *= s;
            }
        }
        let mx = row.iter().fold(0f64, |acc, v| acc.max(v.abs()));
        let s = (mx / 127.0) as f32;
        scales.push(s);
        if s > 0.0 {
            for (v, o) in row.iter().zip(qr.iter_mut()) {
                *o = (*v / s as f64).round_ties_even().clamp(-128.0, 127.0) as i64;
            }
        }
    }
    store(q, DType::I64, out)?;
    store(scales, DType::F32, quant_scale)
}

/// `BatchMatmulQuant`: FLOAT16 `x1` `[…, M, K]` (`[…, K, M]` with `trans1`) times `x2`
/// `[…, K, N]` (`[…, N, K]` with `trans2`), batches equal; each product summed exactly and
/// rounded to float32, plus the FLOAT16 `bias` `[N]`, then the fix-pipe requantisation
/// `int8(round_half_even(acc · scale_j + offset_j))` saturated, `(scale, offset)` decoded from
/// the UINT64 `quant_param` (one for all columns, or one per column of the 16-aligned list).
pub fn batch_matmul_quant(
    x1: &View,
    x2: &View,
    quant_param: &View,
    bias: Option<&View>,
    trans1: bool,
    trans2: bool,
    out: &View,
) -> Result<(), String> {
    let a = if trans1 {
        super::quant::swap_last2(x1)
    } else {
        x1.clone()
    };
    let b = if trans2 {
        super::quant::swap_last2(x2)
    } else {
        x2.clone()
    };
    let nd = a.shape.len();
    let (m, k, n) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
    let batch: usize = a.shape[..nd - 2].iter().product();
    if batch * m * n == 0 {
        return Ok(());
    }
    let av: Vec<f64> = load(&a, DType::F64)?;
    let bv: Vec<f64> = load(&b, DType::F64)?;
    let qp: Vec<u64> = load(quant_param, DType::U64)?;
    let params: Vec<(f32, f32)> = qp
        .iter()
        .map(|&q| super::quant::decode_quant_param(q))
        .collect();
    let bias: Option<Vec<f32>> = bias.map(|t| load(t, DType::F32)).transpose()?;
    let mut res = vec![0i64; batch * m * n];
    for bi in 0..batch {
        let (ao, bo) = (bi * m * k, bi * k * n);
        for i in 0..m {
            for j in 0..n {
                let acc: f64 = (0..k)
                    .map(|l| av[ao + i * k + l] * bv[bo + l * n + j])
                    .sum();
                let mut acc = acc as f32;
                if let Some(bs) = &bias {
                    acc += bs[j];
                }
                let (sc, off) = if params.len() == 1 {
                    params[0]
                } else {
                    params[j]
                };
                res[(bi * m + i) * n + j] =
                    (acc * sc + off).round_ties_even().clamp(-128.0, 127.0) as i64;
            }
        }
    }
    store(res, DType::I64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bce_grad_v2_modes() {
        let mut g = vec![0.5f32, 1.0, 2.0, 4.0];
        let mut x = vec![1.0f32, 2.0, 3.0, 4.0];
        let mut y = vec![0.0f32, 1.0, 1.0, 2.0];
        let mut w = vec![1.0f32, 1.0, 2.0, 0.5];
        let mut z = vec![0.0f32; 4];
        let s = [4usize];
        let gv = View::of_slice(&mut g, DType::F32, &s);
        let xv = View::of_slice(&mut x, DType::F32, &s);
        let yv = View::of_slice(&mut y, DType::F32, &s);
        let wv = View::of_slice(&mut w, DType::F32, &s);
        let zv = View::of_slice(&mut z, DType::F32, &s);
        bce_grad_v2(&gv, &xv, &yv, &wv, BceGradMode::None, &zv).unwrap();
        assert_eq!(z, vec![0.5, 1.0, 8.0, 4.0]);
        let zv = View::of_slice(&mut z, DType::F32, &s);
        bce_grad_v2(&gv, &xv, &yv, &wv, BceGradMode::Mean, &zv).unwrap();
        assert_eq!(z, vec![0.125, 0.125, 0.5, 0.125]);
    }
}
