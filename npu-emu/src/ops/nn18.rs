//! Operators of the operator reference that the documentation examples (and torch_npu) reach
//! by name: the activations SELU's gradient, Shrink, Swish (+ gradient), SquaredRelu,
//! Softsign (+ gradient) and the split-and-multiply fusions GeluMul and FatreluMul; the
//! softmax losses SoftmaxCrossEntropyWithLogits and ScaledMaskedSoftmax (+ backward); the
//! batch-norm pieces BatchNormReduce and SyncBatchNormGatherStats; GroupNormSwish (+ grad);
//! ChamferDistanceBackward; ForeachRoundOffNumber's rounding; Gemm and
//! TransposeBatchMatMul over the matmul engine.
//!
//! Non-elementwise kernels work on dense f64 host copies and round once into the outputs.
//! Floating inputs compute in f32 (f16/bf16 widened, one rounding when stored); integer
//! inputs (SeluBackward's INT8/INT32) compute in f64 and are stored with the engine's
//! float-to-integer conversion.

use super::dtype::{Class, DType};
use super::elem;
use super::extra::{load, store};
use super::iter::{map1, map2};
use super::math::Float;
use super::matmul::matmul;
use super::View;

/// SELU's constants (PyTorch's `selu`): `alpha` and `scale`.
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
pub const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

/// `aclnnSeluBackward`: from the forward result `y = selu(x)`, `dx = g * scale` where `y > 0`
/// and `g * (y + alpha * scale)` elsewhere (PyTorch's `elu_backward` with `is_result`).
pub fn selu_backward(g: &View, y: &View, out: &View) -> Result<(), String> {
    let f = |gv: f64, yv: f64| {
        if yv > 0.0 {
            gv * SELU_SCALE
        } else {
            gv * (yv + SELU_ALPHA * SELU_SCALE)
        }
    };
    if out.dtype.class() == Class::Int {
        map2::<f64, f64>(g, y, out, f)
    } else {
        map2::<f32, f32>(g, y, out, move |a, b| f(a as f64, b as f64) as f32)
    }
}

/// `aclnnShrink`: `x - bias` above `lambd`, `x + bias` below `-lambd`, else 0 (NaN stays NaN).
pub fn shrink(x: &View, lambd: f32, bias: f32, out: &View) -> Result<(), String> {
    map1::<f32, f32>(x, out, move |v| {
        if v > lambd {
            v - bias
        } else if v < -lambd {
            v + bias
        } else if v.is_nan() {
            v
        } else {
            0.0
        }
    })
}

fn sigmoid(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}

/// `aclnnSwish`: `x * sigmoid(beta * x)`.
pub fn swish(x: &View, beta: f32, out: &View) -> Result<(), String> {
    map1::<f32, f32>(x, out, move |v| v * sigmoid(beta * v))
}

/// `aclnnSwishBackward`: `g * sigmoid(beta x) * (1 + beta x (1 - sigmoid(beta x)))`.
pub fn swish_backward(g: &View, x: &View, beta: f32, out: &View) -> Result<(), String> {
    map2::<f32, f32>(g, x, out, move |gv, v| {
        let s = sigmoid(beta * v);
        gv * s * (1.0 + beta * v * (1.0 - s))
    })
}

/// `aclnnSquaredRelu`: `max(0, x)^2` (NaN stays NaN).
pub fn squared_relu(x: &View, out: &View) -> Result<(), String> {
    map1::<f32, f32>(x, out, |v| {
        let r = if v > 0.0 || v.is_nan() { v } else { 0.0 };
        r * r
    })
}

/// `aclnnSoftsign`: `x / (1 + |x|)`.
pub fn softsign(x: &View, out: &View) -> Result<(), String> {
    map1::<f32, f32>(x, out, |v| v / (1.0 + v.abs()))
}

/// `aclnnSoftsignBackward`: `g / (1 + |x|)^2`.
pub fn softsign_backward(g: &View, x: &View, out: &View) -> Result<(), String> {
    map2::<f32, f32>(g, x, out, |gv, v| {
        let d = 1.0 + v.abs();
        gv / (d * d)
    })
}

/// The halves `[..., :d]` and `[..., d:]` of `x` along its last dimension (of length 2d).
pub fn halves(x: &View) -> (View, View) {
    let nd = x.ndim();
    let d = x.shape[nd - 1] / 2;
    let mut shape = x.shape.clone();
    shape[nd - 1] = d;
    let left = View {
        ptr: x.ptr,
        dtype: x.dtype,
        shape: shape.clone(),
        strides: x.strides.clone(),
    };
    let off = d as isize * x.strides[nd - 1] * x.dtype.size() as isize;
    let right = View {
        ptr: x.ptr.wrapping_offset(off),
        dtype: x.dtype,
        shape,
        strides: x.strides.clone(),
    };
    (left, right)
}

/// `aclnnGeluMul`: `gelu(x1) * x2` for the halves of the last dimension; `tanh` selects
/// the tanh approximation, else the erf form.
pub fn gelu_mul(x: &View, tanh: bool, out: &View) -> Result<(), String> {
    let (x1, x2) = halves(x);
    map2::<f32, f32>(&x1, &x2, out, move |a, b| {
        let g = if tanh {
            let k = (2.0f32 / std::f32::consts::PI).sqrt();
            0.5 * a * (1.0 + (k * (a + 0.044715 * a * a * a)).tanh())
        } else {
            0.5 * a * (1.0 + Float::erf(a / std::f32::consts::SQRT_2))
        };
        g * b
    })
}

/// `aclnnFatreluMul`: `(x1 if x1 >= threshold else 0) * x2` for the halves of the last
/// dimension; `threshold` is a one-element tensor, read when the task runs.
pub fn fatrelu_mul(x: &View, threshold: &View, out: &View) -> Result<(), String> {
    // SAFETY: a one-element view the executor checked.
    let t = unsafe { elem::read_f64(threshold.dtype, threshold.ptr) } as f32;
    let (x1, x2) = halves(x);
    map2::<f32, f32>(&x1, &x2, out, move |a, b| if a >= t { a * b } else { 0.0 })
}

// ---------------------------------------------------------------- losses and softmax

/// Dense f64 copy of a view.
fn f64s(v: &View) -> Result<Vec<f64>, String> {
    load(v, DType::F64)
}

fn put(b: Vec<f64>, out: &View) -> Result<(), String> {
    store(b, DType::F64, out)
}

/// `aclnnSoftmaxCrossEntropyWithLogits`: per row of the `[N, C]` features,
/// `loss = -Σ labels * log_softmax(features)` and `backprop = softmax(features) - labels`.
/// Float64, rounded once.
pub fn softmax_cross_entropy_with_logits(
    features: &View,
    labels: &View,
    loss: &View,
    backprop: &View,
) -> Result<(), String> {
    let (n, c) = (features.shape[0], features.shape[1]);
    let x = f64s(features)?;
    let y = f64s(labels)?;
    let mut l = vec![0f64; n];
    let mut bp = vec![0f64; n * c];
    for r in 0..n {
        let row = &x[r * c..(r + 1) * c];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + row.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
        for j in 0..c {
            let logp = row[j] - lse;
            let yv = y[r * c + j];
            l[r] -= yv * logp;
            bp[r * c + j] = logp.exp() - yv;
        }
    }
    put(l, loss)?;
    put(bp, backprop)
}

/// The value masked positions take before the softmax (CANN's kernel constant).
pub const SOFTMAX_MASK_VALUE: f64 = -10000.0;

/// `aclnnScaledMaskedSoftmax`: softmax along the last dimension of `scale * x`, where
/// positions with a true `mask` (broadcast to x) take -10000 first. Float64 per row.
pub fn scaled_masked_softmax(x: &View, mask: &View, scale: f64, y: &View) -> Result<(), String> {
    scaled_masked_softmax_triu(x, Some(mask), scale, y)
}

/// The mask of the scaled masked softmax operators: `mask` broadcast to `shape`, or (None)
/// the fixed upper-triangular one, true where the column is past the row (`j > i` of the
/// last two dimensions).
fn smx_mask(mask: Option<&View>, shape: &[usize]) -> Result<Vec<f64>, String> {
    match mask {
        Some(m) => f64s(&m.expand(shape).ok_or("mask does not broadcast to x")?),
        None => {
            let n = shape.len();
            let (s1, s2) = (
                if n >= 2 { shape[n - 2] } else { 1 },
                *shape.last().unwrap_or(&1),
            );
            let total: usize = shape.iter().product();
            Ok((0..total)
                .map(|i| f64::from(u8::from(i % s2 > (i / s2) % s1.max(1))))
                .collect())
        }
    }
}

/// [`scaled_masked_softmax`] with `mask` None: the aclop operator's `fixed_triu_mask`.
pub fn scaled_masked_softmax_triu(
    x: &View,
    mask: Option<&View>,
    scale: f64,
    y: &View,
) -> Result<(), String> {
    let s2 = *x.shape.last().unwrap_or(&1);
    let xs = f64s(x)?;
    let mk = smx_mask(mask, &x.shape)?;
    let mut out = vec![0f64; xs.len()];
    for r in 0..xs.len() / s2.max(1) {
        let row: Vec<f64> = (r * s2..(r + 1) * s2)
            .map(|i| {
                if mk[i] != 0.0 {
                    SOFTMAX_MASK_VALUE
                } else {
                    scale * xs[i]
                }
            })
            .collect();
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        for (j, v) in e.iter().enumerate() {
            out[r * s2 + j] = v / s;
        }
    }
    put(out, y)
}

/// `aclnnScaledMaskedSoftmaxBackward`: per row of the last dimension,
/// `out = scale * (g * y - Σ(g * y) * y)`, and 0 where `mask` (broadcast) is true.
pub fn scaled_masked_softmax_backward(
    g: &View,
    y: &View,
    mask: &View,
    scale: f64,
    out: &View,
) -> Result<(), String> {
    scaled_masked_softmax_backward_triu(g, y, Some(mask), scale, out)
}

/// [`scaled_masked_softmax_backward`] with `mask` None: the fixed upper-triangular mask.
pub fn scaled_masked_softmax_backward_triu(
    g: &View,
    y: &View,
    mask: Option<&View>,
    scale: f64,
    out: &View,
) -> Result<(), String> {
    let s2 = *y.shape.last().unwrap_or(&1);
    let gs = f64s(g)?;
    let ys = f64s(y)?;
    let mk = smx_mask(mask, &y.shape)?;
    let mut o = vec![0f64; ys.len()];
    for r in 0..ys.len() / s2.max(1) {
        let rng = r * s2..(r + 1) * s2;
        let dot: f64 = rng.clone().map(|i| gs[i] * ys[i]).sum();
        for i in rng {
            o[i] = if mk[i] != 0.0 {
                0.0
            } else {
                scale * (gs[i] * ys[i] - dot * ys[i])
            };
        }
    }
    put(o, out)
}

// ---------------------------------------------------------------- batch and group norm

/// `[N, C, *]` as (N, C, the product of the rest).
fn ncs(x: &View) -> (usize, usize, usize) {
    (x.shape[0], x.shape[1], x.shape[2..].iter().product())
}

/// `aclnnBatchNormReduce`: per channel of `[N, C, H, W]`, the sum and the sum of squares
/// over N, H and W (float64, rounded once into the FLOAT outputs).
pub fn batch_norm_reduce(x: &View, sum: &View, square_sum: &View) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let xs = f64s(x)?;
    let (mut a, mut b) = (vec![0f64; c], vec![0f64; c]);
    for bi in 0..n {
        for ch in 0..c {
            for v in &xs[(bi * c + ch) * s..][..s] {
                a[ch] += v;
                b[ch] += v * v;
            }
        }
    }
    put(a, sum)?;
    put(b, square_sum)
}

/// `aclnnSyncBatchNormGatherStats`: from the per-device `[D, C]` sums and sums of squares
/// and the `[D]` counts, `batchMean = Σsum / Σcount`, `batchVar = Σsq / Σcount - mean²`,
/// `batchInvstd = 1 / sqrt(batchVar + eps)`; the running `mean` and `var` (updated in place)
/// move by `momentum` towards the batch mean and the unbiased batch variance.
#[allow(clippy::too_many_arguments)]
pub fn sync_batch_norm_gather_stats(
    total_sum: &View,
    total_sq: &View,
    count: &View,
    running_mean: &View,
    running_var: &View,
    momentum: f64,
    eps: f64,
    batch_mean: &View,
    batch_invstd: &View,
) -> Result<(), String> {
    let (d, c) = (total_sum.shape[0], total_sum.shape[1]);
    let s = f64s(total_sum)?;
    let q = f64s(total_sq)?;
    let n: f64 = f64s(count)?.iter().sum();
    let mut rm = f64s(running_mean)?;
    let mut rv = f64s(running_var)?;
    let (mut bm, mut bi) = (vec![0f64; c], vec![0f64; c]);
    for ch in 0..c {
        let sum: f64 = (0..d).map(|i| s[i * c + ch]).sum();
        let sq: f64 = (0..d).map(|i| q[i * c + ch]).sum();
        let mean = sum / n;
        let var = (sq / n - mean * mean).max(0.0);
        bm[ch] = mean;
        bi[ch] = 1.0 / (var + eps).sqrt();
        if rm.len() == c {
            rm[ch] = rm[ch] * (1.0 - momentum) + momentum * mean;
        }
        if rv.len() == c {
            let unbiased = if n > 1.0 { var * n / (n - 1.0) } else { var };
            rv[ch] = rv[ch] * (1.0 - momentum) + momentum * unbiased;
        }
    }
    put(bm, batch_mean)?;
    put(bi, batch_invstd)?;
    if running_mean.numel() == c {
        put(rm, running_mean)?;
    }
    if running_var.numel() == c {
        put(rv, running_var)?;
    }
    Ok(())
}

/// `aclnnGroupNormSwish`: group normalisation of `x` (`[N, C, *]`, biased variance), scaled
/// by `gamma` and shifted by `beta` per channel, then `y * sigmoid(scale * y)` when `swish`;
/// `mean` and `rstd` are `[N, group]`. Float64, rounded once.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_swish(
    x: &View,
    gamma: &View,
    beta: &View,
    group: usize,
    eps: f64,
    swish: bool,
    scale: f64,
    out: &View,
    mean: &View,
    rstd: &View,
) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let mut xs = f64s(x)?;
    let g = f64s(gamma)?;
    let b = f64s(beta)?;
    let cg = c / group;
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
                *v = if swish {
                    y / (1.0 + (-scale * y).exp())
                } else {
                    y
                };
            }
        }
    }
    put(xs, out)?;
    put(ms, mean)?;
    put(rs, rstd)
}

/// `aclnnGroupNormSwishGrad`: the gradient of [`group_norm_swish`] (with swish) from the
/// saved `mean` and `rstd`: `dy` goes through the swish derivative at `y = x̂ γ + β`, then
/// the group-norm gradient: `dx = rstd (γ dŷ - mean_g(γ dŷ) - x̂ mean_g(γ dŷ x̂))`,
/// `dγ = Σ dŷ x̂`, `dβ = Σ dŷ` per channel. Float64.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_swish_grad(
    dy: &View,
    mean: &View,
    rstd: &View,
    x: &View,
    gamma: &View,
    beta: &View,
    group: usize,
    scale: f64,
    dx: &View,
    dgamma: Option<&View>,
    dbeta: Option<&View>,
) -> Result<(), String> {
    let (n, c, s) = ncs(x);
    let xs = f64s(x)?;
    let d = f64s(dy)?;
    let ms = f64s(mean)?;
    let rs = f64s(rstd)?;
    let g = f64s(gamma)?;
    let b = f64s(beta)?;
    let cg = c / group;
    let mut dxs = vec![0f64; xs.len()];
    let (mut dg, mut db) = (vec![0f64; c], vec![0f64; c]);
    for bi in 0..n {
        for gi in 0..group {
            let lo = (bi * c + gi * cg) * s;
            let cnt = (cg * s) as f64;
            let (mu, r) = (ms[bi * group + gi], rs[bi * group + gi]);
            let mut xh = vec![0f64; cg * s];
            let mut gd = vec![0f64; cg * s];
            for k in 0..cg * s {
                let ch = gi * cg + k / s.max(1);
                let xhat = (xs[lo + k] - mu) * r;
                let y = xhat * g[ch] + b[ch];
                let sg = 1.0 / (1.0 + (-scale * y).exp());
                let dyn_ = d[lo + k] * sg * (1.0 + scale * y * (1.0 - sg));
                dg[ch] += dyn_ * xhat;
                db[ch] += dyn_;
                xh[k] = xhat;
                gd[k] = g[ch] * dyn_;
            }
            let m1 = gd.iter().sum::<f64>() / cnt;
            let m2 = gd.iter().zip(&xh).map(|(a, b)| a * b).sum::<f64>() / cnt;
            for k in 0..cg * s {
                dxs[lo + k] = r * (gd[k] - m1 - xh[k] * m2);
            }
        }
    }
    put(dxs, dx)?;
    if let Some(v) = dgamma {
        put(dg, v)?;
    }
    if let Some(v) = dbeta {
        put(db, v)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- chamfer distance

/// `aclnnChamferDistanceBackward`: for each point i of `xyz1` (`[B, N, 2]`) and its nearest
/// point j = idx1[b, i] of `xyz2`, `d = 2 g1 (p1_i - p2_j)` is added to gradXyz1[i] and
/// subtracted from gradXyz2[j]; symmetrically for `idx2` and `gradDist2`. Float64.
#[allow(clippy::too_many_arguments)]
pub fn chamfer_distance_backward(
    xyz1: &View,
    xyz2: &View,
    idx1: &View,
    idx2: &View,
    g1: &View,
    g2: &View,
    gx1: &View,
    gx2: &View,
) -> Result<(), String> {
    let (b, n, m) = (xyz1.shape[0], xyz1.shape[1], xyz2.shape[1]);
    let p1 = f64s(xyz1)?;
    let p2 = f64s(xyz2)?;
    let i1: Vec<i64> = load(idx1, DType::I64)?;
    let i2: Vec<i64> = load(idx2, DType::I64)?;
    let d1 = f64s(g1)?;
    let d2 = f64s(g2)?;
    let (mut o1, mut o2) = (vec![0f64; b * n * 2], vec![0f64; b * m * 2]);
    let pick = |t: i64, len: usize, what: &str| -> Result<usize, String> {
        if t < 0 || t as usize >= len {
            Err(format!("{what} holds {t}, outside [0, {len})"))
        } else {
            Ok(t as usize)
        }
    };
    for bi in 0..b {
        for i in 0..n {
            let j = pick(i1[bi * n + i], m, "idx1")?;
            for k in 0..2 {
                let d =
                    2.0 * d1[bi * n + i] * (p1[(bi * n + i) * 2 + k] - p2[(bi * m + j) * 2 + k]);
                o1[(bi * n + i) * 2 + k] += d;
                o2[(bi * m + j) * 2 + k] -= d;
            }
        }
        for j in 0..m {
            let i = pick(i2[bi * m + j], n, "idx2")?;
            for k in 0..2 {
                let d =
                    2.0 * d2[bi * m + j] * (p2[(bi * m + j) * 2 + k] - p1[(bi * n + i) * 2 + k]);
                o2[(bi * m + j) * 2 + k] += d;
                o1[(bi * n + i) * 2 + k] -= d;
            }
        }
    }
    put(o1, gx1)?;
    put(o2, gx2)
}

// ---------------------------------------------------------------- rounding

/// `aclnnForeachRoundOffNumber(V2)` on one tensor: floating values rounded to an integral
/// value by `mode` (1 half to even, 2 floor, 3 ceil, 4 half away from zero, 5 toward zero,
/// 6 half to even as CANN's kernel does for floats, 7 the fractional part `x - trunc(x)`,
/// anything else unchanged); INT16 values are unchanged (0 for mode 7).
pub fn round_off_number(x: &View, mode: i64, out: &View) -> Result<(), String> {
    if x.dtype.class() == Class::Int {
        return if mode == 7 {
            map1::<i64, i64>(x, out, |_| 0)
        } else {
            map1::<i64, i64>(x, out, |v| v)
        };
    }
    map1::<f32, f32>(x, out, move |v| match mode {
        1 | 6 => v.round_ties_even(),
        2 => v.floor(),
        3 => v.ceil(),
        4 => v.round(),
        5 => v.trunc(),
        7 => v - v.trunc(),
        _ => v,
    })
}

// ---------------------------------------------------------------- matrix products

fn transposed(v: &View) -> View {
    v.permute(&[1, 0])
}

/// `aclnnGemm`: `out = alpha * op(A) @ op(B) + beta * C` (`op` transposes when the flag is
/// set; C broadcast to out).
#[allow(clippy::too_many_arguments)]
pub fn gemm(
    a: &View,
    b: &View,
    c: &View,
    alpha: f64,
    beta: f64,
    trans_a: bool,
    trans_b: bool,
    out: &View,
) -> Result<(), String> {
    let a = if trans_a { transposed(a) } else { a.clone() };
    let b = if trans_b { transposed(b) } else { b.clone() };
    matmul(&a, &b, out, alpha, Some((c, beta)))
}

/// `aclnnTransposeBatchMatMul`: `x1` and `x2` are seen through `perm1` / `perm2` as
/// `[B, M, K]` and `[B, K, N]`; the product `[B, M, N]` is written as `[M, B, N]` (`out` of
/// that shape), or with `split > 1` as `[split, M, B / split * N]` (batch group s, member
/// b', at columns `b' * N ..`).
pub fn transpose_batch_matmul(
    x1: &View,
    x2: &View,
    perm1: &[usize],
    perm2: &[usize],
    split: usize,
    out: &View,
) -> Result<(), String> {
    let a = x1.permute(perm1);
    let b = x2.permute(perm2);
    let (bt, m, n) = (a.shape[0], a.shape[1], b.shape[2]);
    let per = bt / split;
    for s in 0..split {
        // out block s seen as [per, M, N]
        let base = if split == 1 {
            out.clone()
        } else {
            super::index18::select(out, 0, s)
        };
        let (rs, cs) = if split == 1 {
            (base.strides[0], base.strides[2])
        } else {
            (base.strides[0], base.strides[1])
        };
        let bstride = if split == 1 {
            base.strides[1]
        } else {
            n as isize * cs
        };
        let o = View {
            ptr: base.ptr,
            dtype: out.dtype,
            shape: vec![per, m, n],
            strides: vec![bstride, rs, cs],
        };
        let lo = s * per;
        matmul(
            &super::shape::narrow(&a, 0, lo, per),
            &super::shape::narrow(&b, 0, lo, per),
            &o,
            1.0,
            None,
        )?;
    }
    Ok(())
}
