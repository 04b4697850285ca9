//! Operators that model code reaches through torch_npu and CANN's documented examples:
//! the attention input transform of `nn.MultiheadAttention`'s fast path
//! (`TransformBiasRescaleQkv`), the adaptive modulation of diffusion transformers (`Modulate`,
//! `AdaLayerNorm` and their backward forms), the clipped SwiGLU of GPT-OSS, multi-scale
//! deformable attention (Deformable DETR) and Sinkhorn routing.
//!
//! Each kernel reads dense f64 copies (one conversion), computes in f64 and stores each result
//! with one rounding into the output's dtype. Layer norm itself is [`nn::layer_norm`] and its
//! backward, on f64 scratch views.

use super::dtype::DType;
use super::extra::{load, store};
use super::nn;
use super::view::View;

fn f64s(v: &View) -> Result<Vec<f64>, String> {
    load::<f64>(v, DType::F64)
}

fn put(buf: Vec<f64>, out: &View) -> Result<(), String> {
    store(buf, DType::F64, out)
}

// ---------------------------------------------------------------- TransformBiasRescaleQkv

/// `qkv` `[B, T, 3·H·E]` plus `bias` `[3·H·E]`, split into `q`, `k`, `v` `[B, H, T, E]`;
/// `q` is divided by `√E`.
pub fn transform_bias_rescale_qkv(
    qkv: &View,
    bias: &View,
    heads: usize,
    q: &View,
    k: &View,
    v: &View,
) -> Result<(), String> {
    let (b, t, three_d) = (qkv.shape[0], qkv.shape[1], qkv.shape[2]);
    let d = three_d / 3;
    let e = d / heads;
    let x = f64s(qkv)?;
    let bs = f64s(bias)?;
    let scale = 1.0 / (e as f64).sqrt();
    for (part, out) in [q, k, v].into_iter().enumerate() {
        let mut r = Vec::with_capacity(b * t * d);
        for bi in 0..b {
            for h in 0..heads {
                for ti in 0..t {
                    for ei in 0..e {
                        let c = part * d + h * e + ei;
                        let val = x[(bi * t + ti) * three_d + c] + bs[c];
                        r.push(if part == 0 { val * scale } else { val });
                    }
                }
            }
        }
        put(r, out)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- modulation

/// `y = y·(1 + scale) + shift` on `y` seen as `[G, rows, D]`, `scale`/`shift` `[G, D]`
/// broadcast over the rows (absent: 0).
fn modulate_rows(
    y: &mut [f64],
    rows: usize,
    d: usize,
    scale: Option<&[f64]>,
    shift: Option<&[f64]>,
) {
    for (r, row) in y.chunks_mut(d.max(1)).enumerate() {
        let g = r / rows.max(1);
        for (i, v) in row.iter_mut().enumerate() {
            if let Some(s) = scale {
                *v *= 1.0 + s[g * d + i];
            }
            if let Some(s) = shift {
                *v += s[g * d + i];
            }
        }
    }
}

fn opt_f64s(v: Option<&View>) -> Result<Option<Vec<f64>>, String> {
    v.map(f64s).transpose()
}

/// `out = x·(1 + scale) + shift` for `x` `[B, L, D]`, `scale`/`shift` `[B, D]` or `[B, 1, D]`.
pub fn modulate(
    x: &View,
    scale: Option<&View>,
    shift: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let (l, d) = (x.shape[1], x.shape[2]);
    let mut y = f64s(x)?;
    let (sc, sh) = (opt_f64s(scale)?, opt_f64s(shift)?);
    modulate_rows(&mut y, l, d, sc.as_deref(), sh.as_deref());
    put(y, out)
}

/// The backward of `x·scale + shift` as CANN's ModulateGrad computes it: `grad_input = g·scale`
/// (`g` when there is no scale), `grad_scale = Σ_L g·x`, `grad_shift = Σ_L g`.
pub fn modulate_backward(
    g: &View,
    x: &View,
    scale: Option<&View>,
    grad_input: &View,
    grad_scale: Option<&View>,
    grad_shift: Option<&View>,
) -> Result<(), String> {
    let (b, l, d) = (x.shape[0], x.shape[1], x.shape[2]);
    let gs = f64s(g)?;
    let xs = f64s(x)?;
    let sc = opt_f64s(scale)?;
    let mut gi = gs.clone();
    if let Some(sc) = &sc {
        for (r, row) in gi.chunks_mut(d.max(1)).enumerate() {
            let bi = r / l.max(1);
            row.iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v *= sc[bi * d + i]);
        }
    }
    put(gi, grad_input)?;
    let sum_l = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
        let mut r = vec![0f64; b * d];
        for bi in 0..b {
            for li in 0..l {
                for i in 0..d {
                    r[bi * d + i] += f((bi * l + li) * d + i);
                }
            }
        }
        r
    };
    if let Some(o) = grad_scale {
        put(sum_l(&|j| gs[j] * xs[j]), o)?;
    }
    if let Some(o) = grad_shift {
        put(sum_l(&|j| gs[j]), o)?;
    }
    Ok(())
}

/// `out = LayerNorm(x)·(1 + scale) + shift` over the last dimension of `x` `[B…, S, H]`,
/// `scale`/`shift` `[B…, H]` (or `[B…, 1, H]`); `mean`/`rstd` `[B…, S, 1]` when asked.
#[allow(clippy::too_many_arguments)]
pub fn ada_layer_norm(
    x: &View,
    scale: &View,
    shift: &View,
    w: Option<&View>,
    b: Option<&View>,
    eps: f64,
    out: &View,
    mean: Option<&View>,
    rstd: Option<&View>,
) -> Result<(), String> {
    let nd = x.ndim();
    let (s, h) = (x.shape[nd - 2], x.shape[nd - 1]);
    let mut y = vec![0f64; x.numel()];
    if y.is_empty() {
        return Ok(());
    }
    nn::layer_norm(
        x,
        1,
        w,
        b,
        eps,
        &View::of_slice(&mut y, DType::F64, &x.shape),
        mean,
        rstd,
    )?;
    let (sc, sh) = (f64s(scale)?, f64s(shift)?);
    modulate_rows(&mut y, s, h, Some(&sc), Some(&sh));
    put(y, out)
}

/// The gradients of [`ada_layer_norm`] from the saved `mean` and `rstd`: layer norm's
/// backward of `g·(1 + scale)` gives the input, weight and bias gradients; `grad_scale =
/// Σ_S g·(x̂·w + b)`, `grad_shift = Σ_S g`. Every output is optional.
pub struct AdaLnGrads<'a> {
    pub input: Option<&'a View>,
    pub scale: Option<&'a View>,
    pub shift: Option<&'a View>,
    pub weight: Option<&'a View>,
    pub bias: Option<&'a View>,
}

#[allow(clippy::too_many_arguments)]
pub fn ada_layer_norm_backward(
    g: &View,
    x: &View,
    rstd: &View,
    mean: &View,
    scale: &View,
    w: Option<&View>,
    b: Option<&View>,
    out: AdaLnGrads,
) -> Result<(), String> {
    let nd = x.ndim();
    let (s, h) = (x.shape[nd - 2], x.shape[nd - 1]);
    let rows = x.numel() / h.max(1);
    let gs = f64s(g)?;
    let sc = f64s(scale)?;
    let mut dyg = gs.clone();
    modulate_rows(&mut dyg, s, h, Some(&sc), None);
    if out.input.is_some() || out.weight.is_some() || out.bias.is_some() {
        nn::layer_norm_backward(
            &View::of_slice(&mut dyg, DType::F64, &x.shape),
            x,
            1,
            mean,
            rstd,
            w,
            out.input,
            out.weight,
            out.bias,
        )?;
    }
    if out.scale.is_none() && out.shift.is_none() {
        return Ok(());
    }
    let (xs, mu, rs) = (f64s(x)?, f64s(mean)?, f64s(rstd)?);
    let wv = opt_f64s(w)?.unwrap_or_else(|| vec![1.0; h]);
    let bv = opt_f64s(b)?.unwrap_or_else(|| vec![0.0; h]);
    let groups = rows / s.max(1);
    let (mut dsc, mut dsh) = (vec![0f64; groups * h], vec![0f64; groups * h]);
    for r in 0..rows {
        let gi = r / s.max(1);
        for i in 0..h {
            let j = r * h + i;
            let z = (xs[j] - mu[r]) * rs[r];
            dsc[gi * h + i] += gs[j] * (z * wv[i] + bv[i]);
            dsh[gi * h + i] += gs[j];
        }
    }
    if let Some(o) = out.scale {
        put(dsc, o)?;
    }
    if let Some(o) = out.shift {
        put(dsh, o)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- clipped SwiGLU

/// The attributes of the clipped SwiGLU (GPT-OSS): `y = A'·σ(α·A')·(B' + bias)`, `A' =
/// min(A, limit)`, `B' = clamp(B, -limit, limit)`; A and B are the halves (or the even and odd
/// elements, `interleaved`) of each row of x seen as `[pre, cut]` at `dim`.
#[derive(Clone, Copy, Debug)]
pub struct ClippedSwiglu {
    pub dim: usize,
    pub alpha: f64,
    pub limit: f64,
    pub bias: f64,
    pub interleaved: bool,
}

impl ClippedSwiglu {
    /// `(pre, half)`: the rows and the half width of x merged at `dim`.
    fn split(&self, x: &View) -> (usize, usize) {
        let pre: usize = x.shape[..self.dim].iter().product();
        let cut = x.numel().checked_div(pre).unwrap_or(0);
        (pre, cut / 2)
    }

    /// The positions of A and B for element `k` of a row.
    fn ab(&self, half: usize, k: usize) -> (usize, usize) {
        if self.interleaved {
            (2 * k, 2 * k + 1)
        } else {
            (k, half + k)
        }
    }
}

/// The rows to process: all of them, or `min(Σ group, pre)`.
fn valid_rows(group: Option<&View>, pre: usize) -> Result<usize, String> {
    Ok(match group {
        None => pre,
        Some(g) => {
            let s: i64 = load::<i64>(g, DType::I64)?.iter().sum();
            (s.max(0) as usize).min(pre)
        }
    })
}

/// The clipped SwiGLU of `x` into `out`; rows beyond `Σ group` are left as they are.
pub fn clipped_swiglu(
    x: &View,
    group: Option<&View>,
    p: ClippedSwiglu,
    out: &View,
) -> Result<(), String> {
    let (pre, half) = p.split(x);
    let rows = valid_rows(group, pre)?;
    let xs = f64s(x)?;
    let mut y = if rows < pre {
        f64s(out)?
    } else {
        vec![0f64; pre * half]
    };
    for r in 0..rows {
        let row = &xs[r * 2 * half..(r + 1) * 2 * half];
        for k in 0..half {
            let (ia, ib) = p.ab(half, k);
            let a = row[ia].min(p.limit);
            let b = row[ib].clamp(-p.limit, p.limit);
            y[r * half + k] = a * sigmoid(p.alpha * a) * (b + p.bias);
        }
    }
    put(y, out)
}

/// The gradient of [`clipped_swiglu`] with respect to x; rows beyond `Σ group` are 0.
pub fn clipped_swiglu_grad(
    gy: &View,
    x: &View,
    group: Option<&View>,
    p: ClippedSwiglu,
    out: &View,
) -> Result<(), String> {
    let (pre, half) = p.split(x);
    let rows = valid_rows(group, pre)?;
    let xs = f64s(x)?;
    let gs = f64s(gy)?;
    let mut dx = vec![0f64; xs.len()];
    for r in 0..rows {
        let base = r * 2 * half;
        for k in 0..half {
            let (ia, ib) = p.ab(half, k);
            let (x0, x1) = (xs[base + ia], xs[base + ib]);
            let a = x0.min(p.limit);
            let b = x1.clamp(-p.limit, p.limit);
            let s = sigmoid(p.alpha * a);
            let g = gs[r * half + k];
            let m0 = if x0 <= p.limit { 1.0 } else { 0.0 };
            let m1 = if (-p.limit..=p.limit).contains(&x1) {
                1.0
            } else {
                0.0
            };
            dx[base + ia] = g * (b + p.bias) * s * (1.0 + p.alpha * a * (1.0 - s)) * m0;
            dx[base + ib] = g * a * s * m1;
        }
    }
    put(dx, out)
}

fn sigmoid(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

// ---------------------------------------------------------------- multi-scale deformable attention

/// The sizes of a multi-scale deformable attention call: `value` `[B, K, H, C]`, `location`
/// `[B, Q, H, L, P, 2]` (x, y normalised to [0, 1]), `attn` `[B, Q, H, L, P]`, `shapes`
/// `[L, 2]` (height, width) and `starts` `[L]` (each level's first key).
struct Msda {
    b: usize,
    k: usize,
    h: usize,
    c: usize,
    q: usize,
    l: usize,
    p: usize,
    shapes: Vec<(i64, i64)>,
    starts: Vec<i64>,
}

impl Msda {
    fn new(value: &View, shapes: &View, starts: &View, loc: &View) -> Result<Msda, String> {
        let sh = load::<i64>(shapes, DType::I64)?;
        let st = load::<i64>(starts, DType::I64)?;
        Ok(Msda {
            b: value.shape[0],
            k: value.shape[1],
            h: value.shape[2],
            c: value.shape[3],
            q: loc.shape[1],
            l: loc.shape[3],
            p: loc.shape[4],
            shapes: sh.chunks(2).map(|v| (v[0], v[1])).collect(),
            starts: st,
        })
    }

    /// Visit each sample point: `f(b, q, h, index of the point in attn, corners)`, the corners
    /// being `(key row of value, weight, d weight/dx, d weight/dy)` of the in-bounds ones. The
    /// level shapes and starts are checked where a corner is read (as the device reads them:
    /// a level whose corners all fall outside its map reads nothing).
    fn each(
        &self,
        loc: &[f64],
        mut f: impl FnMut(usize, usize, usize, usize, &[(usize, f64, f64, f64)]),
    ) -> Result<(), String> {
        let mut corners = Vec::with_capacity(4);
        for b in 0..self.b {
            for q in 0..self.q {
                for h in 0..self.h {
                    for l in 0..self.l {
                        let (hl, wl) = self.shapes[l];
                        for p in 0..self.p {
                            let ai = (((b * self.q + q) * self.h + h) * self.l + l) * self.p + p;
                            let x = loc[ai * 2] * wl as f64 - 0.5;
                            let y = loc[ai * 2 + 1] * hl as f64 - 0.5;
                            let (x0, y0) = (x.floor(), y.floor());
                            let (ax, ay) = (x - x0, y - y0);
                            corners.clear();
                            for (dy, dx, w, gx, gy) in [
                                (0, 0, (1.0 - ay) * (1.0 - ax), -(1.0 - ay), -(1.0 - ax)),
                                (0, 1, (1.0 - ay) * ax, 1.0 - ay, -ax),
                                (1, 0, ay * (1.0 - ax), -ay, 1.0 - ax),
                                (1, 1, ay * ax, ay, ax),
                            ] {
                                let (yy, xx) = (y0 as i64 + dy, x0 as i64 + dx);
                                if yy >= 0 && yy < hl && xx >= 0 && xx < wl {
                                    let key = yy
                                        .checked_mul(wl)
                                        .and_then(|v| v.checked_add(xx + self.starts[l]))
                                        .filter(|&k| (0..self.k as i64).contains(&k))
                                        .ok_or_else(|| {
                                            format!(
                                                "level {l} (spatial shape ({hl}, {wl}), start {}) \
                                                 reads key row {yy}·{wl} + {xx} outside the {} \
                                                 keys of value",
                                                self.starts[l], self.k
                                            )
                                        })?;
                                    let row = (b * self.k + key as usize) * self.h + h;
                                    corners.push((row, w, gx * wl as f64, gy * hl as f64));
                                }
                            }
                            f(b, q, h, ai, &corners);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// `out[b, q, h·C + c] = Σ_{l,p} attn · bilinear(value at level l, location)`, zero outside
/// each level's map.
pub fn msda(
    value: &View,
    shapes: &View,
    starts: &View,
    loc: &View,
    attn: &View,
    out: &View,
) -> Result<(), String> {
    let m = Msda::new(value, shapes, starts, loc)?;
    let (vs, ls, aw) = (f64s(value)?, f64s(loc)?, f64s(attn)?);
    let c = m.c;
    let mut o = vec![0f64; m.b * m.q * m.h * c];
    m.each(&ls, |b, q, h, ai, corners| {
        let base = ((b * m.q + q) * m.h + h) * c;
        for &(row, w, _, _) in corners {
            for ci in 0..c {
                o[base + ci] += aw[ai] * w * vs[row * c + ci];
            }
        }
    })?;
    put(o, out)
}

/// The gradients of [`msda`] with respect to value, location and attn.
#[allow(clippy::too_many_arguments)]
pub fn msda_grad(
    value: &View,
    shapes: &View,
    starts: &View,
    loc: &View,
    attn: &View,
    grad_out: &View,
    grad_value: &View,
    grad_loc: &View,
    grad_attn: &View,
) -> Result<(), String> {
    let m = Msda::new(value, shapes, starts, loc)?;
    let (vs, ls, aw, go) = (f64s(value)?, f64s(loc)?, f64s(attn)?, f64s(grad_out)?);
    let c = m.c;
    let mut gv = vec![0f64; vs.len()];
    let mut gl = vec![0f64; ls.len()];
    let mut ga = vec![0f64; aw.len()];
    m.each(&ls, |b, q, h, ai, corners| {
        let g = &go[((b * m.q + q) * m.h + h) * c..][..c];
        for &(row, w, wx, wy) in corners {
            let v = &vs[row * c..][..c];
            let dot: f64 = g.iter().zip(v).map(|(a, b)| a * b).sum();
            ga[ai] += w * dot;
            gl[ai * 2] += aw[ai] * wx * dot;
            gl[ai * 2 + 1] += aw[ai] * wy * dot;
            for ci in 0..c {
                gv[row * c + ci] += aw[ai] * w * g[ci];
            }
        }
    })?;
    put(gv, grad_value)?;
    put(gl, grad_loc)?;
    put(ga, grad_attn)
}

// ---------------------------------------------------------------- Sinkhorn

/// The iteration cap of [`sinkhorn`] (a NaN cost never converges).
const SINKHORN_MAX_ITERS: usize = 100_000;

/// The Sinkhorn transport plan of `cost` `[R, C]`: with `K = e^cost`, iterate
/// `d0 = 1 / (R·(K·d1 + ε))`, `d1 = 1 / (C·(Kᵀ·d0 + ε))` (ε = 1e-8) until the mean change of
/// `d1` is at most `tol`; `p = d0 ⊗ d1 ∘ K`.
pub fn sinkhorn(cost: &View, tol: f64, p: &View) -> Result<(), String> {
    let (r, c) = (cost.shape[0], cost.shape[1]);
    let k: Vec<f64> = f64s(cost)?.into_iter().map(f64::exp).collect();
    let eps = 1e-8;
    let (mut d0, mut d1) = (vec![1f64; r], vec![1f64; c]);
    for _ in 0..SINKHORN_MAX_ITERS {
        for (i, d) in d0.iter_mut().enumerate() {
            let s: f64 = (0..c).map(|j| d1[j] * k[i * c + j]).sum();
            *d = 1.0 / (r as f64 * (s + eps));
        }
        let mut err = 0.0;
        for (j, d) in d1.iter_mut().enumerate() {
            let s: f64 = (0..r).map(|i| d0[i] * k[i * c + j]).sum();
            let new = 1.0 / (c as f64 * (s + eps));
            err += (*d - new).abs();
            *d = new;
        }
        if err / c.max(1) as f64 <= tol {
            break;
        }
    }
    let out = (0..r * c).map(|i| d1[i % c] * k[i] * d0[i / c]).collect();
    put(out, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinkhorn_rows_and_columns_balance() {
        let mut cost = [0.1f64, 0.5, 0.9, 0.3, 0.7, 0.2];
        let mut p = [0f64; 6];
        let cv = View::of_slice(&mut cost, DType::F64, &[2, 3]);
        sinkhorn(&cv, 1e-12, &View::of_slice(&mut p, DType::F64, &[2, 3])).unwrap();
        for j in 0..3 {
            assert!((p[j] + p[3 + j] - 1.0 / 3.0).abs() < 1e-6);
        }
    }

    #[test]
    fn clipped_swiglu_interleaves_over_the_merged_axis() {
        // x [1, 2, 2] at dim 1: the merged row is [a0, b0, a1, b1] when interleaved
        let mut x = [1.0f64, 2.0, 3.0, 4.0];
        let mut y = [0f64; 2];
        let p = ClippedSwiglu {
            dim: 1,
            alpha: 1.0,
            limit: 10.0,
            bias: 0.0,
            interleaved: true,
        };
        let xv = View::of_slice(&mut x, DType::F64, &[1, 2, 2]);
        clipped_swiglu(
            &xv,
            None,
            p,
            &View::of_slice(&mut y, DType::F64, &[1, 1, 2]),
        )
        .unwrap();
        assert!((y[0] - sigmoid(1.0) * 2.0).abs() < 1e-12);
        assert!((y[1] - 3.0 * sigmoid(3.0) * 4.0).abs() < 1e-12);
    }
}
