//! The normalisation operators of the "norm" batch: the SyncBatchNorm family (per-device
//! statistics, their reduction over devices with counts, the elementwise normalisation, and
//! the two halves of the backward), as PyTorch's CUDA kernels define
//! `batch_norm_stats`, `batch_norm_gather_stats_with_counts`, `batch_norm_elemt`,
//! `batch_norm_backward_reduce` and `batch_norm_backward_elemt`; AddRmsNorm; the shrink
//! activations and their gradients.
//!
//! Inputs are `[N, C, *]` with the channels at dimension 1. Everything is computed on dense
//! float64 copies (statistics per channel in float64) and rounded once into the outputs.

use super::dtype::DType;
use super::extra::{load, store};
use super::iter;
use super::view::View;

/// `(N, C, S)` of an `[N, C, *]` tensor (S = product of the trailing dimensions).
fn ncs(x: &View) -> (usize, usize, usize) {
    let (n, c) = (x.shape[0], x.shape[1]);
    (n, c, x.shape[2..].iter().product())
}

fn f64s(v: &View) -> Result<Vec<f64>, String> {
    load(v, DType::F64)
}

fn put(b: Vec<f64>, out: &View) -> Result<(), String> {
    store(b, DType::F64, out)
}

/// The optional per-channel vector, or `fill`.
fn or_fill(v: Option<&View>, c: usize, fill: f64) -> Result<Vec<f64>, String> {
    match v {
        Some(v) => f64s(v),
        None => Ok(vec![fill; c]),
    }
}

/// Visit every element of channel `ch` of a dense `[N, C, S]` buffer by its flat index.
fn each_in_channel(n: usize, c: usize, s: usize, ch: usize, mut f: impl FnMut(usize)) {
    for b in 0..n {
        let base = (b * c + ch) * s;
        for i in base..base + s {
            f(i);
        }
    }
}

/// `aclnnBatchNormStats`: per channel the mean and `1 / sqrt(biased variance + eps)` of
/// `x` (`[N, C, *]`) into `mean` and `invstd` (`[C]`). Two passes in float64. A channel
/// with no elements gives NaN for both (0 / 0), as the formula does.
pub fn batch_norm_stats(x: &View, eps: f64, mean: &View, invstd: &View) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let xs = f64s(x)?;
    let m = (n * s) as f64;
    let (mut mu, mut is) = (vec![0f64; c], vec![0f64; c]);
    for ch in 0..c {
        let mut sum = 0.0;
        each_in_channel(n, c, s, ch, |i| sum += xs[i]);
        let avg = sum / m;
        let mut sq = 0.0;
        each_in_channel(n, c, s, ch, |i| sq += (xs[i] - avg) * (xs[i] - avg));
        mu[ch] = avg;
        is[ch] = 1.0 / (sq / m + eps).sqrt();
    }
    put(mu, mean)?;
    put(is, invstd)
}

/// `aclnnBatchNormGatherStatsWithCounts`: combine the per-device statistics `mean` and
/// `invstd` (`[D, C]`) of `counts[d]` elements each (Chan's parallel update, in float64)
/// into the global `mean_all` and `invstd_all = 1 / sqrt(var + eps)` (`[C]`); when given,
/// the running statistics move by `momentum` (the running variance with the unbiased
/// variance `var_n / (n - 1)`). A device's variance is `1 / invstd^2 - eps`.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_gather_stats_with_counts(
    mean: &View,
    invstd: &View,
    counts: &View,
    running_mean: Option<&View>,
    running_var: Option<&View>,
    momentum: f64,
    eps: f64,
    mean_all: &View,
    invstd_all: &View,
) -> Result<(), String> {
    let (d, c) = (mean.shape[0], mean.shape[1]);
    let ms = f64s(mean)?;
    let is = f64s(invstd)?;
    let cn = f64s(counts)?;
    let mut rm = running_mean.map(f64s).transpose()?;
    let mut rv = running_var.map(f64s).transpose()?;
    let (mut mo, mut io) = (vec![0f64; c], vec![0f64; c]);
    for ch in 0..c {
        let (mut avg, mut var_n, mut n) = (0f64, 0f64, 0f64);
        for j in 0..d {
            let cnt = cn[j];
            let m = ms[j * c + ch];
            let sd = 1.0 / is[j * c + ch];
            let v = (sd * sd - eps) * cnt;
            let factor = 1.0 / (n + cnt);
            var_n += v + (avg - m) * (avg - m) * n * cnt * factor;
            avg = n * factor * avg + cnt * factor * m;
            n += cnt;
        }
        mo[ch] = avg;
        io[ch] = 1.0 / (var_n / n + eps).sqrt();
        if let Some(rm) = rm.as_mut() {
            rm[ch] = (1.0 - momentum) * rm[ch] + momentum * avg;
        }
        if let Some(rv) = rv.as_mut() {
            rv[ch] = (1.0 - momentum) * rv[ch] + momentum * var_n / (n - 1.0);
        }
    }
    if let (Some(b), Some(v)) = (rm, running_mean) {
        put(b, v)?;
    }
    if let (Some(b), Some(v)) = (rv, running_var) {
        put(b, v)?;
    }
    put(mo, mean_all)?;
    put(io, invstd_all)
}

/// `aclnnBatchNormElemt`: `out = (x - mean[c]) * invstd[c] * weight[c] + bias[c]` (weight 1
/// and bias 0 when absent).
pub fn batch_norm_elemt(
    x: &View,
    weight: Option<&View>,
    bias: Option<&View>,
    mean: &View,
    invstd: &View,
    out: &View,
) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let mut xs = f64s(x)?;
    let w = or_fill(weight, c, 1.0)?;
    let b = or_fill(bias, c, 0.0)?;
    let mu = f64s(mean)?;
    let is = f64s(invstd)?;
    for ch in 0..c {
        each_in_channel(n, c, s, ch, |i| {
            xs[i] = (xs[i] - mu[ch]) * is[ch] * w[ch] + b[ch]
        });
    }
    put(xs, out)
}

/// The outputs of [`batch_norm_backward_reduce`], each optional.
pub struct ReduceOuts<'a> {
    pub sum_dy: Option<&'a View>,
    pub sum_dy_xmu: Option<&'a View>,
    pub grad_weight: Option<&'a View>,
    pub grad_bias: Option<&'a View>,
}

/// `aclnnBatchNormReduceBackward`: per channel `sum_dy = Σ dy`, `sum_dy_xmu = Σ dy (x -
/// mean)`, `grad_weight = sum_dy_xmu * invstd`, `grad_bias = sum_dy` (float64 sums).
pub fn batch_norm_backward_reduce(
    dy: &View,
    x: &View,
    mean: &View,
    invstd: &View,
    o: ReduceOuts,
) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let g = f64s(dy)?;
    let xs = f64s(x)?;
    let mu = f64s(mean)?;
    let is = f64s(invstd)?;
    let (mut sd, mut sdx) = (vec![0f64; c], vec![0f64; c]);
    for ch in 0..c {
        each_in_channel(n, c, s, ch, |i| {
            sd[ch] += g[i];
            sdx[ch] += g[i] * (xs[i] - mu[ch]);
        });
    }
    if let Some(v) = o.grad_weight {
        put((0..c).map(|ch| sdx[ch] * is[ch]).collect(), v)?;
    }
    if let Some(v) = o.grad_bias {
        put(sd.clone(), v)?;
    }
    if let Some(v) = o.sum_dy {
        put(sd, v)?;
    }
    if let Some(v) = o.sum_dy_xmu {
        put(sdx, v)?;
    }
    Ok(())
}

/// `aclnnBatchNormElemtBackward`: with `m = Σ counter` (the element counts of every
/// device), `grad_input = (dy - sum_dy / m - (x - mean) * invstd^2 * sum_dy_xmu / m) *
/// invstd * weight` (weight 1 when absent).
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_backward_elemt(
    dy: &View,
    x: &View,
    mean: &View,
    invstd: &View,
    weight: Option<&View>,
    sum_dy: &View,
    sum_dy_xmu: &View,
    counter: &View,
    grad_input: &View,
) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let g = f64s(dy)?;
    let mut xs = f64s(x)?;
    let mu = f64s(mean)?;
    let is = f64s(invstd)?;
    let w = or_fill(weight, c, 1.0)?;
    let sd = f64s(sum_dy)?;
    let sdx = f64s(sum_dy_xmu)?;
    let m: f64 = f64s(counter)?.iter().sum();
    for ch in 0..c {
        let grad_mean = sd[ch] / m;
        let proj = sdx[ch] / m * is[ch] * is[ch];
        let scale = is[ch] * w[ch];
        each_in_channel(n, c, s, ch, |i| {
            xs[i] = (g[i] - grad_mean - (xs[i] - mu[ch]) * proj) * scale
        });
    }
    put(xs, grad_input)
}

/// `aclnnAddRmsNorm`: `x_out = x1 + x2` (rounded once into `x_out`'s dtype), then over the
/// trailing `gamma.numel()` elements of each row of that sum `rstd = 1 / sqrt(mean(x^2) +
/// eps)` and `y = x * rstd * gamma`, in float64.
pub fn add_rms_norm(
    x1: &View,
    x2: &View,
    gamma: &View,
    eps: f64,
    y: &View,
    rstd: &View,
    x_out: &View,
) -> Result<(), String> {
    let a = f64s(x1)?;
    let b = f64s(x2)?;
    put(a.iter().zip(&b).map(|(p, q)| p + q).collect(), x_out)?;
    let xs = f64s(x_out)?;
    let g = f64s(gamma)?;
    let n = g.len().max(1);
    let rows = xs.len() / n;
    let mut out = vec![0f64; xs.len()];
    let mut rs = vec![0f64; rows];
    for r in 0..rows {
        let row = &xs[r * n..(r + 1) * n];
        let inv = 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / n as f64 + eps).sqrt();
        rs[r] = inv;
        for (i, o) in out[r * n..(r + 1) * n].iter_mut().enumerate() {
            *o = row[i] * inv * g[i];
        }
    }
    put(out, y)?;
    put(rs, rstd)
}

/// `aclnnAddLayerNorm`: `x = x1 + x2 (+ bias)` (bias shaped like gamma), then per row of the
/// trailing `gamma.numel()` elements `mean`, `rstd = 1 / sqrt(biased var + eps)` and
/// `y = (x - mean) * rstd * gamma + beta`; `x_out` (when given) gets the sum. Float64
/// throughout, rounded once into each output.
#[allow(clippy::too_many_arguments)]
pub fn add_layer_norm(
    x1: &View,
    x2: &View,
    gamma: &View,
    beta: &View,
    bias: Option<&View>,
    eps: f64,
    y: &View,
    mean: &View,
    rstd: &View,
    x_out: Option<&View>,
) -> Result<(), String> {
    let a = f64s(x1)?;
    let b = f64s(x2)?;
    let g = f64s(gamma)?;
    let be = f64s(beta)?;
    let n = g.len().max(1);
    let bi = or_fill(bias, n, 0.0)?;
    let xs: Vec<f64> = (0..a.len()).map(|i| a[i] + b[i] + bi[i % n]).collect();
    let rows = xs.len() / n;
    let (mut out, mut ms, mut rs) = (vec![0f64; xs.len()], vec![0f64; rows], vec![0f64; rows]);
    for r in 0..rows {
        let row = &xs[r * n..(r + 1) * n];
        let mu = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + eps).sqrt();
        ms[r] = mu;
        rs[r] = inv;
        for i in 0..n {
            out[r * n + i] = (row[i] - mu) * inv * g[i] + be[i];
        }
    }
    if let Some(v) = x_out {
        put(xs, v)?;
    }
    put(out, y)?;
    put(ms, mean)?;
    put(rs, rstd)
}

/// `aclnnAddLayerNormGrad`: with `x = x1 + x2`, the saved per-row `mean` and `rstd`,
/// `xhat = (x - mean) * rstd` and `g = dy * gamma`: `dx = rstd * (g - mean(g) - xhat *
/// mean(g * xhat)) + dsum`, `dgamma = Σ_rows dy * xhat`, `dbeta = Σ_rows dy` (float64).
#[allow(clippy::too_many_arguments)]
pub fn add_layer_norm_grad(
    dy: &View,
    x1: &View,
    x2: &View,
    rstd: &View,
    mean: &View,
    gamma: &View,
    dsum: Option<&View>,
    dx: &View,
    dgamma: &View,
    dbeta: &View,
) -> Result<(), String> {
    let d = f64s(dy)?;
    let a = f64s(x1)?;
    let b = f64s(x2)?;
    let rs = f64s(rstd)?;
    let ms = f64s(mean)?;
    let g = f64s(gamma)?;
    let ds = dsum.map(f64s).transpose()?;
    let n = g.len().max(1);
    let rows = a.len() / n;
    let (mut dxs, mut dg, mut db) = (vec![0f64; a.len()], vec![0f64; n], vec![0f64; n]);
    for r in 0..rows {
        let o = r * n;
        let xhat: Vec<f64> = (0..n)
            .map(|i| (a[o + i] + b[o + i] - ms[r]) * rs[r])
            .collect();
        let gy: Vec<f64> = (0..n).map(|i| d[o + i] * g[i]).collect();
        let m1 = gy.iter().sum::<f64>() / n as f64;
        let m2 = (0..n).map(|i| gy[i] * xhat[i]).sum::<f64>() / n as f64;
        for i in 0..n {
            dxs[o + i] =
                rs[r] * (gy[i] - m1 - xhat[i] * m2) + ds.as_ref().map_or(0.0, |v| v[o + i]);
            dg[i] += d[o + i] * xhat[i];
            db[i] += d[o + i];
        }
    }
    put(dxs, dx)?;
    put(dg, dgamma)?;
    put(db, dbeta)
}

/// `aclnnGroupNormSilu` / `aclnnGroupNormSiluV2`: group normalisation of `x` (`[N, C, *]`,
/// C split into `group` groups; biased variance, as PyTorch's GroupNorm), `gamma`/`beta`
/// per channel (1 and 0 when absent), then `y * sigmoid(y)` when `silu`; `mean` and `rstd`
/// are `[N, group]`. Float64, rounded once.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_silu(
    x: &View,
    gamma: Option<&View>,
    beta: Option<&View>,
    group: usize,
    eps: f64,
    silu: bool,
    out: &View,
    mean: &View,
    rstd: &View,
) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let mut xs = f64s(x)?;
    let g = or_fill(gamma, c, 1.0)?;
    let b = or_fill(beta, c, 0.0)?;
    let cg = c / group.max(1);
    let (mut ms, mut rs) = (vec![0f64; n * group], vec![0f64; n * group]);
    for bi in 0..n {
        for gi in 0..group {
            let lo = (bi * c + gi * cg) * s;
            let hi = lo + cg * s;
            let cnt = (cg * s) as f64;
            let mu = xs[lo..hi].iter().sum::<f64>() / cnt;
            let var = xs[lo..hi].iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / cnt;
            let inv = 1.0 / (var + eps).sqrt();
            ms[bi * group + gi] = mu;
            rs[bi * group + gi] = inv;
            for (k, v) in xs[lo..hi].iter_mut().enumerate() {
                let ch = gi * cg + k / s.max(1);
                let y = (*v - mu) * inv * g[ch] + b[ch];
                *v = if silu { y / (1.0 + (-y).exp()) } else { y };
            }
        }
    }
    put(xs, out)?;
    put(ms, mean)?;
    put(rs, rstd)
}

// ---------------------------------------------------------------- cross entropy

/// The reductions of `aclnnCrossEntropyLoss` (`reductionOptional`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeReduction {
    None,
    Mean,
    Sum,
}

/// Per-sample class, weight of its class (0 when ignored) and the weights, checked.
struct CeTargets {
    cls: Vec<Option<usize>>,
    w: Vec<f64>,
    /// `Σ w[target]` over the samples not ignored: the `mean` divisor.
    total: f64,
}

fn ce_targets(
    target: &View,
    weight: Option<&View>,
    c: usize,
    ignore: i64,
) -> Result<CeTargets, String> {
    let t: Vec<i64> = load(target, DType::I64)?;
    let w = or_fill(weight, c, 1.0)?;
    let mut cls = Vec::with_capacity(t.len());
    let mut total = 0.0;
    for (i, &v) in t.iter().enumerate() {
        if v == ignore {
            cls.push(None);
        } else if v < 0 || v as usize >= c {
            return Err(format!(
                "target {v} of sample {i} is out of range [0, {c}) (ignoreIndex {ignore})"
            ));
        } else {
            total += w[v as usize];
            cls.push(Some(v as usize));
        }
    }
    Ok(CeTargets { cls, w, total })
}

/// `aclnnCrossEntropyLoss` without the z-loss terms: `log_prob = x - logsumexp(x)` per row
/// of the `[N, C]` input; per sample `l = (1 - s) * w[t] * -log_prob[t] + s / C * Σ_c w[c] *
/// -log_prob[c]` (0 for an ignored target), reduced as PyTorch's `F.cross_entropy` with
/// `label_smoothing` does (`mean` divides by `Σ w[t]` of the samples kept). Float64.
#[allow(clippy::too_many_arguments)]
pub fn cross_entropy_loss(
    input: &View,
    target: &View,
    weight: Option<&View>,
    reduction: CeReduction,
    ignore: i64,
    smoothing: f64,
    loss: &View,
    log_prob: &View,
) -> Result<(), String> {
    let (n, c) = (input.shape[0], input.shape[1]);
    let mut xs = f64s(input)?;
    let ct = ce_targets(target, weight, c, ignore)?;
    let mut per = vec![0f64; n];
    for i in 0..n {
        let row = &mut xs[i * c..(i + 1) * c];
        let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = mx + row.iter().map(|v| (v - mx).exp()).sum::<f64>().ln();
        row.iter_mut().for_each(|v| *v -= lse);
        if let Some(t) = ct.cls[i] {
            let smooth: f64 = (0..c).map(|j| -ct.w[j] * row[j]).sum();
            per[i] = (1.0 - smoothing) * ct.w[t] * -row[t] + smoothing / c as f64 * smooth;
        }
    }
    let l = match reduction {
        CeReduction::None => per,
        CeReduction::Sum => vec![per.iter().sum()],
        CeReduction::Mean => vec![per.iter().sum::<f64>() / ct.total],
    };
    put(l, loss)?;
    put(xs, log_prob)
}

/// `aclnnCrossEntropyLossGrad` without the z-loss terms: from the saved `log_prob` (`p =
/// exp(log_prob)`), `dx[i][j] = g_i * ((1 - s) * w[t] * (p - [j = t]) + s / C * (p * Σ w -
/// w[j]))` for a kept sample (0 for an ignored one), where `g_i` is `grad[i]` (`none`),
/// `grad` (`sum`) or `grad / Σ w[t]` (`mean`). Float64.
#[allow(clippy::too_many_arguments)]
pub fn cross_entropy_loss_grad(
    grad: &View,
    log_prob: &View,
    target: &View,
    weight: Option<&View>,
    reduction: CeReduction,
    ignore: i64,
    smoothing: f64,
    x_grad: &View,
) -> Result<(), String> {
    let (n, c) = (log_prob.shape[0], log_prob.shape[1]);
    let lp = f64s(log_prob)?;
    let g = f64s(grad)?;
    let ct = ce_targets(target, weight, c, ignore)?;
    let wsum: f64 = ct.w.iter().sum();
    let mut dx = vec![0f64; n * c];
    for i in 0..n {
        let Some(t) = ct.cls[i] else { continue };
        let gi = match reduction {
            CeReduction::None => g[i],
            CeReduction::Sum => g[0],
            CeReduction::Mean => g[0] / ct.total,
        };
        for j in 0..c {
            let p = lp[i * c + j].exp();
            let hit = if j == t { 1.0 } else { 0.0 };
            dx[i * c + j] = gi
                * ((1.0 - smoothing) * ct.w[t] * (p - hit)
                    + smoothing / c as f64 * (p * wsum - ct.w[j]));
        }
    }
    put(dx, x_grad)
}

// ---------------------------------------------------------------- activations

/// GELU in float64: the erf form (`approximate` 0) or the tanh form (1), and its derivative.
fn gelu(x: f64, tanh: bool) -> (f64, f64) {
    use super::math::Float;
    if tanh {
        let k = (2.0 / std::f64::consts::PI).sqrt();
        let t = (k * (x + 0.044715 * x * x * x)).tanh();
        let d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
        (0.5 * x * (1.0 + t), d)
    } else {
        let cdf = 0.5 * (1.0 + Float::erf(x / std::f64::consts::SQRT_2));
        let pdf = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (x * cdf, cdf + x * pdf)
    }
}

/// `(outer, half, inner)` of `x` split in two halves along `dim`.
fn halves(x: &View, dim: usize) -> (usize, usize, usize) {
    let outer = x.shape[..dim].iter().product();
    let inner = x.shape[dim + 1..].iter().product();
    (outer, x.shape[dim] / 2, inner)
}

/// `aclnnGeGlu` / `aclnnGeGluV3`: `x` split along `dim` into halves A and B; with
/// `activate_left` false `gelu = Gelu(B)`, `out = A * gelu`, else `gelu = Gelu(A)`, `out =
/// gelu * B`. `tanh` picks the GELU form. Float64, rounded once.
pub fn geglu(
    x: &View,
    dim: usize,
    tanh: bool,
    activate_left: bool,
    out: &View,
    out_gelu: &View,
) -> Result<(), String> {
    let xs = f64s(x)?;
    let (outer, h, inner) = halves(x, dim);
    let (mut o, mut g) = (vec![0f64; outer * h * inner], vec![0f64; outer * h * inner]);
    for b in 0..outer {
        for j in 0..h {
            for i in 0..inner {
                let a = xs[(b * 2 * h + j) * inner + i];
                let c = xs[(b * 2 * h + h + j) * inner + i];
                let (act, other) = if activate_left { (a, c) } else { (c, a) };
                let k = (b * h + j) * inner + i;
                g[k] = gelu(act, tanh).0;
                o[k] = other * g[k];
            }
        }
    }
    put(o, out)?;
    put(g, out_gelu)
}

/// `aclnnGeGluBackward` / `aclnnGeGluV3Backward`: with the saved `gelu` of the activated
/// half, the other half's gradient is `dy * gelu` and the activated half's `dy * other *
/// Gelu'(act)`, placed back along `dim` into `grad_input` (float64).
#[allow(clippy::too_many_arguments)]
pub fn geglu_backward(
    dy: &View,
    x: &View,
    gelu_saved: &View,
    dim: usize,
    tanh: bool,
    activate_left: bool,
    grad_input: &View,
) -> Result<(), String> {
    let d = f64s(dy)?;
    let xs = f64s(x)?;
    let gs = f64s(gelu_saved)?;
    let (outer, h, inner) = halves(x, dim);
    let mut gx = vec![0f64; xs.len()];
    for b in 0..outer {
        for j in 0..h {
            for i in 0..inner {
                let ia = (b * 2 * h + j) * inner + i;
                let ic = (b * 2 * h + h + j) * inner + i;
                let (iact, ioth) = if activate_left { (ia, ic) } else { (ic, ia) };
                let k = (b * h + j) * inner + i;
                gx[ioth] = d[k] * gs[k];
                gx[iact] = d[k] * xs[ioth] * gelu(xs[iact], tanh).1;
            }
        }
    }
    put(gx, grad_input)
}

/// `aclnnFastGelu`: `x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))` (that is `x *
/// sigmoid(1.702 x)`, written so that no exponential overflows), in float32.
pub fn fast_gelu(x: &View, out: &View) -> Result<(), String> {
    iter::map1::<f32, f32>(x, out, |v| {
        v / (1.0 + (-1.702 * v.abs()).exp()) * (0.851 * (v - v.abs())).exp()
    })
}

/// `aclnnFastGeluBackward`: with `s = 1 / (1 + exp(-1.702 x))`, `dx = dy * ((s - 1) *
/// -1.702 x + 1) * s`, in float32 (broadcasting `dy` and `x`).
pub fn fast_gelu_backward(dy: &View, x: &View, dx: &View) -> Result<(), String> {
    iter::map2::<f32, f32>(dy, x, dx, |g, v| {
        let s = 1.0 / (1.0 + (-1.702 * v).exp());
        g * ((s - 1.0) * (-1.702 * v) + 1.0) * s
    })
}

/// `aclnnHardshrink`: `x` where `x > lambd` or `x < -lambd`, else 0 (`lambd` already in the
/// compute type; NaN stays NaN).
pub fn hardshrink(x: &View, lambd: f32, out: &View) -> Result<(), String> {
    iter::map1::<f32, f32>(x, out, move |v| {
        if (-lambd..=lambd).contains(&v) {
            0.0
        } else {
            v
        }
    })
}

/// `aclnnSoftshrink`: `x - lambd` above `lambd`, `x + lambd` below `-lambd`, else 0.
pub fn softshrink(x: &View, lambd: f32, out: &View) -> Result<(), String> {
    iter::map1::<f32, f32>(x, out, move |v| {
        if v > lambd {
            v - lambd
        } else if v < -lambd {
            v + lambd
        } else if v.is_nan() {
            v
        } else {
            0.0
        }
    })
}

/// The gradient of both shrink functions: `dy` where `x > lambd` or `x < -lambd`, else 0
/// (broadcasting `dy` and `x`).
pub fn shrink_backward(dy: &View, x: &View, lambd: f32, dx: &View) -> Result<(), String> {
    iter::map2::<f32, f32>(dy, x, dx, move |g, v| {
        if (-lambd..=lambd).contains(&v) {
            0.0
        } else {
            g
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(b: &mut [f64], shape: &[usize]) -> View {
        View::of_slice(b, DType::F64, shape)
    }

    #[test]
    fn sync_batch_norm_family_equals_batch_norm_over_the_union() {
        // two "devices" of [2, 2, 2] each; channel 0 and 1
        let mut x1 = vec![1f64, 2.0, 10.0, 20.0, 3.0, 4.0, 30.0, 40.0];
        let mut x2 = vec![5f64, 6.0, 50.0, 60.0, 7.0, 9.0, 70.0, 90.0];
        let eps = 1e-5;
        let (mut m1, mut i1, mut m2, mut i2) =
            (vec![0.0; 2], vec![0.0; 2], vec![0.0; 2], vec![0.0; 2]);
        batch_norm_stats(
            &v(&mut x1, &[2, 2, 2]),
            eps,
            &v(&mut m1, &[2]),
            &v(&mut i1, &[2]),
        )
        .unwrap();
        batch_norm_stats(
            &v(&mut x2, &[2, 2, 2]),
            eps,
            &v(&mut m2, &[2]),
            &v(&mut i2, &[2]),
        )
        .unwrap();
        assert_eq!(m1, vec![2.5, 25.0]);
        let mut ms: Vec<f64> = m1.iter().chain(&m2).copied().collect();
        let mut is: Vec<f64> = i1.iter().chain(&i2).copied().collect();
        let mut cn = vec![4f64, 4.0];
        let (mut rm, mut rv) = (vec![0f64; 2], vec![1f64; 2]);
        let (mut ma, mut ia) = (vec![0f64; 2], vec![0f64; 2]);
        batch_norm_gather_stats_with_counts(
            &v(&mut ms, &[2, 2]),
            &v(&mut is, &[2, 2]),
            &v(&mut cn, &[2]),
            Some(&v(&mut rm, &[2])),
            Some(&v(&mut rv, &[2])),
            0.1,
            eps,
            &v(&mut ma, &[2]),
            &v(&mut ia, &[2]),
        )
        .unwrap();
        // channel 0 of the union: 1 2 3 4 5 6 7 9
        let all = [1f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0];
        let mean = all.iter().sum::<f64>() / 8.0;
        let var = all.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / 8.0;
        assert!((ma[0] - mean).abs() < 1e-12);
        assert!((ia[0] - 1.0 / (var + eps).sqrt()).abs() < 1e-9);
        assert!((rm[0] - 0.1 * mean).abs() < 1e-12);
        assert!((rv[0] - (0.9 + 0.1 * var * 8.0 / 7.0)).abs() < 1e-9);
        // elemt then backward against the closed form of batch norm's gradient
        let mut y = vec![0f64; 8];
        batch_norm_elemt(
            &v(&mut x1, &[2, 2, 2]),
            None,
            None,
            &v(&mut ma, &[2]),
            &v(&mut ia, &[2]),
            &v(&mut y, &[2, 2, 2]),
        )
        .unwrap();
        assert!((y[0] - (1.0 - mean) * ia[0]).abs() < 1e-12);
        let mut dy = vec![1f64, -1.0, 0.5, 2.0, 0.0, 3.0, 1.0, -2.0];
        let (mut sd, mut sdx) = (vec![0f64; 2], vec![0f64; 2]);
        let mut gb = vec![0f64; 2];
        batch_norm_backward_reduce(
            &v(&mut dy, &[2, 2, 2]),
            &v(&mut x1, &[2, 2, 2]),
            &v(&mut ma, &[2]),
            &v(&mut ia, &[2]),
            ReduceOuts {
                sum_dy: Some(&v(&mut sd, &[2])),
                sum_dy_xmu: Some(&v(&mut sdx, &[2])),
                grad_weight: None,
                grad_bias: Some(&v(&mut gb, &[2])),
            },
        )
        .unwrap();
        assert_eq!(sd, vec![3.0, 1.5]);
        assert_eq!(gb, sd);
        let mut cnt = vec![4f64];
        let mut gx = vec![0f64; 8];
        batch_norm_backward_elemt(
            &v(&mut dy, &[2, 2, 2]),
            &v(&mut x1, &[2, 2, 2]),
            &v(&mut ma, &[2]),
            &v(&mut ia, &[2]),
            None,
            &v(&mut sd, &[2]),
            &v(&mut sdx, &[2]),
            &v(&mut cnt, &[1]),
            &v(&mut gx, &[2, 2, 2]),
        )
        .unwrap();
        let want0 = (1.0 - 3.0 / 4.0 - (1.0 - mean) * ia[0] * ia[0] * sdx[0] / 4.0) * ia[0];
        assert!((gx[0] - want0).abs() < 1e-12);
    }

    #[test]
    fn add_rms_norm_normalises_the_sum() {
        let mut a = vec![1f64, 2.0, 3.0, 4.0];
        let mut b = vec![1f64, 0.0, -1.0, 0.0];
        let mut g = vec![2f64, 0.5];
        let (mut y, mut r, mut x) = (vec![0f64; 4], vec![0f64; 2], vec![0f64; 4]);
        add_rms_norm(
            &v(&mut a, &[2, 2]),
            &v(&mut b, &[2, 2]),
            &v(&mut g, &[2]),
            0.0,
            &v(&mut y, &[2, 2]),
            &v(&mut r, &[2, 1]),
            &v(&mut x, &[2, 2]),
        )
        .unwrap();
        assert_eq!(x, vec![2.0, 2.0, 2.0, 4.0]);
        assert!((r[0] - 0.5).abs() < 1e-15);
        assert!((y[0] - 2.0).abs() < 1e-15 && (y[1] - 0.5).abs() < 1e-15);
        let r1 = 1.0 / 10f64.sqrt();
        assert!((r[1] - r1).abs() < 1e-15 && (y[3] - 4.0 * r1 * 0.5).abs() < 1e-15);
    }

    #[test]
    fn add_layer_norm_and_geglu() {
        // rows [1, 3] + [1, 1] = [2, 4]: mean 3, var 1; gamma 1, beta 0.5
        let (mut a, mut b) = (vec![1f64, 3.0], vec![1f64, 1.0]);
        let (mut g, mut be) = (vec![1f64, 1.0], vec![0.5f64, 0.5]);
        let (mut y, mut m, mut r, mut x) = (vec![0f64; 2], vec![0f64], vec![0f64], vec![0f64; 2]);
        add_layer_norm(
            &v(&mut a, &[1, 2]),
            &v(&mut b, &[1, 2]),
            &v(&mut g, &[2]),
            &v(&mut be, &[2]),
            None,
            0.0,
            &v(&mut y, &[1, 2]),
            &v(&mut m, &[1, 1]),
            &v(&mut r, &[1, 1]),
            Some(&v(&mut x, &[1, 2])),
        )
        .unwrap();
        assert_eq!((x, m[0], r[0]), (vec![2.0, 4.0], 3.0, 1.0));
        assert_eq!(y, vec![-0.5, 1.5]);
        // geglu of [a | b] = [2 | 1] along dim 0: out = 2 * gelu(1)
        let mut s = vec![2f64, 1.0];
        let (mut o, mut gl) = (vec![0f64], vec![0f64]);
        geglu(
            &v(&mut s, &[2]),
            0,
            false,
            false,
            &v(&mut o, &[1]),
            &v(&mut gl, &[1]),
        )
        .unwrap();
        let g1 = gelu(1.0, false).0;
        assert!((g1 - 0.841344746068543).abs() < 1e-12 && (o[0] - 2.0 * g1).abs() < 1e-12);
        let (t, dt) = gelu(0.0, true);
        assert!(t == 0.0 && (dt - 0.5).abs() < 1e-15);
    }
}
