//! Utilities of large-model code around quantisation and MoE: `anti_quant` (INT8 or packed
//! INT4 back to float16/bfloat16), `weight_quant_matmul_v1` (the first WeightQuantBatchMatmul,
//! float16 activations against an INT8 weight), `scatter_update` (KV-cache row updates),
//! `apply_top_k_top_p` (sampling filters) and the MoE token permutation of MoE training
//! (`moe_token_permute`, `moe_token_unpermute` and their backward forms).
//!
//! Values compute in f32 and round once into the output, as the reference's vector units
//! do; the permutations copy values exactly and sum in f32.

use super::dtype::DType;
use super::extra::{load, store};
use super::quant::{decode_quant_param, matmul_f32, swap_last2};
use super::view::View;

/// `v[j]`, or `v[0]` for a one-element parameter broadcast over all columns.
fn col(v: &[f32], j: usize) -> f32 {
    if v.len() == 1 {
        v[0]
    } else {
        v[j]
    }
}

fn opt_load(v: Option<&View>) -> Result<Option<Vec<f32>>, String> {
    v.map(|v| load(v, DType::F32)).transpose()
}

/// AscendAntiQuant: `y = (x + offset) * scale` (`* scale` once more with `sqrt_mode`) in f32,
/// rounded once to y's type. `x` is INT8, or INT32 holding eight int4 values a word (low
/// nibble first, y's last dimension eight times x's); `scale` and `offset` have one value
/// or one per element of y's last dimension.
pub fn anti_quant(
    x: &View,
    scale: &View,
    offset: Option<&View>,
    sqrt_mode: bool,
    y: &View,
) -> Result<(), String> {
    let xs: Vec<f32> = if x.dtype == DType::I32 {
        load::<i64>(x, DType::I64)?
            .into_iter()
            .flat_map(|w| {
                (0..8).map(move |i| {
                    let q = ((w as u32 >> (4 * i)) & 0xF) as i32;
                    (if q >= 8 { q - 16 } else { q }) as f32
                })
            })
            .collect()
    } else {
        load(x, DType::F32)?
    };
    let s: Vec<f32> = load(scale, DType::F32)?;
    let o = opt_load(offset)?;
    let last = y.shape.last().copied().unwrap_or(1).max(1);
    let r: Vec<f32> = xs
        .iter()
        .enumerate()
        .map(|(e, &v)| {
            let j = e % last;
            let sc = col(&s, j);
            let v = o.as_ref().map_or(v, |o| v + col(o, j)) * sc;
            if sqrt_mode {
                v * sc
            } else {
                v
            }
        })
        .collect();
    store(r, DType::F32, y)
}

/// How the INT8 weight of WeightQuantBatchMatmul (V1) becomes float16.
pub enum WeightDequant<'a> {
    /// The fix-pipe path (`m <= 64`): `(x2 + deqOffset) * deqScale`, deqScale a 64-bit
    /// quantisation parameter ([`decode_quant_param`]'s scale), one value or one per column.
    Fixpipe { offset: &'a View, scale: &'a View },
    /// The vector path: `((x2 + antiquantOffset) * antiquantScale + addOffset) * mulScale`,
    /// each step rounded to float16.
    Vector {
        antiquant: (f32, f32),
        add_offset: Option<&'a View>,
        mul_scale: Option<&'a View>,
    },
}

/// WeightQuantBatchMatmul (V1): `out = x1 @ W + bias` for float16 `x1` (`[m, k]`, or
/// `[k, m]` with `trans_x1`) and INT8 `x2` (`[k, n]`, or `[n, k]`) dequantised to the
/// float16 `W` by `dequant`; the product accumulates in f32, the bias (FLOAT) is rounded to
/// float16 first, and the sum rounds once into `out`.
pub fn weight_quant_matmul_v1(
    x1: &View,
    x2: &View,
    trans: (bool, bool),
    dequant: WeightDequant,
    bias: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let a = if trans.0 { swap_last2(x1) } else { x1.clone() };
    let b = if trans.1 { swap_last2(x2) } else { x2.clone() };
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    let xv: Vec<f32> = load(&a, DType::F32)?;
    let mut w: Vec<f32> = load(&b, DType::F32)?;
    let f16 = |v: f32| half::f16::from_f32(v).to_f32();
    match dequant {
        WeightDequant::Fixpipe { offset, scale } => {
            let off: Vec<f32> = load(offset, DType::F32)?;
            let sc: Vec<f32> = load::<i64>(scale, DType::I64)?
                .into_iter()
                .map(|q| decode_quant_param(q as u64).0)
                .collect();
            for (e, v) in w.iter_mut().enumerate() {
                let j = e % n;
                *v = f16((*v + col(&off, j)) * col(&sc, j));
            }
        }
        WeightDequant::Vector {
            antiquant: (a_scale, a_off),
            add_offset,
            mul_scale,
        } => {
            let (add, mul) = (opt_load(add_offset)?, opt_load(mul_scale)?);
            for (e, v) in w.iter_mut().enumerate() {
                let j = e % n;
                let mut t = f16((*v + a_off) * a_scale);
                if let Some(add) = &add {
                    t = f16(t + col(add, j));
                }
                if let Some(mul) = &mul {
                    t = f16(t * col(mul, j));
                }
                *v = t;
            }
        }
    }
    let bv = opt_load(bias)?.map(|b| b.into_iter().map(f16).collect::<Vec<_>>());
    store(
        matmul_f32(&xv, &w, (m, k, n), bv.as_deref()),
        DType::F32,
        out,
    )
}

/// The coordinates of row-major element `e` of `shape`.
fn coords(mut e: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = e % shape[d];
        e /= shape[d];
    }
    c
}

/// InplaceScatterUpdate: each slice `i` (along dimension 0) of `updates` is written into
/// `data` at batch row `b` and offset `o` along `axis`: `data[b][..][o + c][..] =
/// updates[i][..][c][..]`. `indices` gives `o` per slice (1-D, `b = i`), one `o` for a single
/// slice (0-D, `b = 0`) or `(b, o)` pairs (`[u0, 2]`). A target outside `data` fails the task.
pub fn scatter_update(
    data: &View,
    indices: &View,
    updates: &View,
    axis: usize,
) -> Result<(), String> {
    let idx: Vec<i64> = load(indices, DType::I64)?;
    let mut d: Vec<f64> = load(data, DType::F64)?;
    let u: Vec<f64> = load(updates, DType::F64)?;
    let (ds, us) = (&data.shape, &updates.shape);
    let slice: usize = us[1..].iter().product();
    for i in 0..us[0] {
        let (b, o) = match indices.shape.len() {
            2 => (idx[2 * i], idx[2 * i + 1]),
            _ => (i as i64, idx[i]),
        };
        for e in 0..slice {
            let mut c = coords(i * slice + e, us);
            c[0] = b as usize;
            let at = c[axis] as i64 + o;
            if b < 0 || b as usize >= ds[0] || o < 0 || at as usize >= ds[axis] {
                return Err(format!(
                    "indices slice {i}: batch {b}, offset {o} is outside data {ds:?} along axis \
                     {axis} (updates {us:?})"
                ));
            }
            c[axis] = at as usize;
            let flat = c.iter().zip(ds).fold(0, |acc, (&ci, &n)| acc * n + ci);
            d[flat] = u[i * slice + e];
        }
    }
    store(d, DType::F64, data)
}

/// ApplyTopKTopP, row by row of `logits` (`[b, v]`): sorted ascending (stably), the values
/// below the `k[b]`-th largest become -inf (no filter when `k[b]` is outside `[1, v)`); then
/// softmax over what is left, and the values whose ascending cumulative probability is at
/// most `1 - p[b]` become -inf too (the largest always stays). Softmax and sums in f32.
pub fn apply_top_k_top_p(
    logits: &View,
    p: Option<&View>,
    k: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let (rows, v) = (logits.shape[0], logits.shape[1]);
    let x: Vec<f32> = load(logits, DType::F32)?;
    let pv = opt_load(p)?;
    let kv: Option<Vec<i64>> = k.map(|k| load(k, DType::I64)).transpose()?;
    let mut o = x.clone();
    for r in 0..rows {
        let row = &x[r * v..(r + 1) * v];
        let mut order: Vec<usize> = (0..v).collect();
        order.sort_by(|&a, &b| row[a].total_cmp(&row[b]));
        let mut sv: Vec<f32> = order.iter().map(|&i| row[i]).collect();
        if let Some(kv) = &kv {
            let kk = kv[r];
            if kk > 0 && (kk as usize) < v {
                let thr = sv[v - kk as usize];
                for s in sv.iter_mut().filter(|s| **s < thr) {
                    *s = f32::NEG_INFINITY;
                }
            }
        }
        if let Some(pv) = &pv {
            let max = sv[v - 1];
            let e: Vec<f32> = sv.iter().map(|&s| (s - max).exp()).collect();
            let sum: f32 = e.iter().sum();
            let mut cum = 0f32;
            for (s, ei) in sv.iter_mut().zip(&e).take(v - 1) {
                cum += ei / sum;
                if cum <= 1.0 - pv[r] {
                    *s = f32::NEG_INFINITY;
                }
            }
        }
        for (pos, &i) in order.iter().enumerate() {
            o[r * v + i] = sv[pos];
        }
    }
    store(o, DType::F32, out)
}

/// MoeTokenPermute: the `t * k` (token, slot) pairs of `indices` (`[t]` or `[t, k]` expert
/// ids) sorted by expert, stably; `sorted_indices[j]` is the sorted position of pair `j`,
/// and row `i` of `permuted` (its first `permuted.shape[0]` positions) is
/// `tokens[order[i] / k]`.
pub fn moe_token_permute(
    tokens: &View,
    indices: &View,
    permuted: &View,
    sorted_indices: &View,
) -> Result<(), String> {
    let h = tokens.shape[1];
    let experts: Vec<i64> = load(indices, DType::I64)?;
    let k = if indices.shape.len() == 2 {
        indices.shape[1]
    } else {
        1
    };
    let mut order: Vec<usize> = (0..experts.len()).collect();
    order.sort_by_key(|&i| experts[i]);
    let mut inv = vec![0i64; order.len()];
    for (pos, &j) in order.iter().enumerate() {
        inv[j] = pos as i64;
    }
    let x: Vec<f64> = load(tokens, DType::F64)?;
    let rows = permuted.shape[0];
    let mut out = Vec::with_capacity(rows * h);
    for &j in order.iter().take(rows) {
        let t = j / k;
        out.extend_from_slice(&x[t * h..(t + 1) * h]);
    }
    store(out, DType::F64, permuted)?;
    store(inv, DType::I64, sorted_indices)
}

/// The permuted row of pair `j` (`sorted[j]`), or `None` for a dropped pair (at or past
/// `rows`, the kept rows); a negative index fails the task.
fn permuted_row(sorted: &[i64], j: usize, rows: usize) -> Result<Option<usize>, String> {
    let s = sorted[j];
    if s < 0 {
        return Err(format!("sortedIndices[{j}] = {s} is negative"));
    }
    Ok(((s as usize) < rows).then_some(s as usize))
}

/// MoeTokenPermuteGrad: `out[t] = sum over slots s of grad[sorted[t * k + s]]` (dropped pairs
/// add nothing), in f32.
pub fn moe_token_permute_grad(
    grad: &View,
    sorted_indices: &View,
    k: usize,
    out: &View,
) -> Result<(), String> {
    moe_token_unpermute(grad, sorted_indices, None, k, out)
}

/// MoeTokenUnpermute: `out[t] = sum over slots s of permuted[sorted[t * k + s]] * probs[t, s]`
/// (`probs` absent: weight 1), in f32; dropped pairs add nothing.
pub fn moe_token_unpermute(
    permuted: &View,
    sorted_indices: &View,
    probs: Option<&View>,
    k: usize,
    out: &View,
) -> Result<(), String> {
    let (rows, h) = (permuted.shape[0], permuted.shape[1]);
    let x: Vec<f32> = load(permuted, DType::F32)?;
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    let pr = opt_load(probs)?;
    let t = out.shape[0];
    let mut o = vec![0f32; t * h];
    for j in 0..t * k {
        if let Some(r) = permuted_row(&s, j, rows)? {
            let w = pr.as_ref().map_or(1.0, |p| p[j]);
            let dst = &mut o[(j / k) * h..(j / k + 1) * h];
            for (d, v) in dst.iter_mut().zip(&x[r * h..(r + 1) * h]) {
                *d += v * w;
            }
        }
    }
    store(o, DType::F32, out)
}

/// MoeTokenUnpermuteGrad: `grad_permuted[sorted[j]] = grad[j / k] * probs[j]` (rows no pair
/// reaches are 0) and, with `probs`, `grad_probs[j] = sum over h of permuted[sorted[j], h] *
/// grad[j / k, h]`, in f32.
pub fn moe_token_unpermute_grad(
    permuted: Option<&View>,
    grad: &View,
    sorted_indices: &View,
    probs: Option<&View>,
    grad_permuted: &View,
    grad_probs: Option<&View>,
) -> Result<(), String> {
    let (rows, h) = (grad_permuted.shape[0], grad_permuted.shape[1]);
    let g: Vec<f32> = load(grad, DType::F32)?;
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    let pr = opt_load(probs)?;
    let x = opt_load(permuted)?;
    let k = probs.map_or(1, |p| p.shape[1]);
    let mut gp = vec![0f32; rows * h];
    let mut gpr = vec![0f32; s.len()];
    for (j, gj) in gpr.iter_mut().enumerate() {
        let Some(r) = permuted_row(&s, j, rows)? else {
            continue;
        };
        let w = pr.as_ref().map_or(1.0, |p| p[j]);
        let src = &g[(j / k) * h..(j / k + 1) * h];
        for (d, v) in gp[r * h..(r + 1) * h].iter_mut().zip(src) {
            *d = v * w;
        }
        if let Some(x) = &x {
            *gj = x[r * h..(r + 1) * h]
                .iter()
                .zip(src)
                .map(|(a, b)| a * b)
                .sum();
        }
    }
    store(gp, DType::F32, grad_permuted)?;
    match grad_probs {
        Some(v) => store(gpr, DType::F32, v),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_then_unpermute_restores_the_tokens() {
        let mut idx = [2i32, 0, 1, 0, 2, 1];
        let mut si = [0i32; 6];
        let mut tok1 = [1f32, 2.0, 3.0];
        let mut perm1 = [0f32; 6];
        moe_token_permute(
            &View::of_slice(&mut tok1, DType::F32, &[3, 1]),
            &View::of_slice(&mut idx, DType::I32, &[3, 2]),
            &View::of_slice(&mut perm1, DType::F32, &[6, 1]),
            &View::of_slice(&mut si, DType::I32, &[6]),
        )
        .unwrap();
        // experts 2 0 | 1 0 | 2 1 sorted stably: pairs 1 3 2 5 0 4
        assert_eq!(si, [4, 0, 2, 1, 5, 3]);
        assert_eq!(perm1, [1.0, 2.0, 2.0, 3.0, 1.0, 3.0]);
        let mut out = [0f32; 3];
        moe_token_unpermute(
            &View::of_slice(&mut perm1, DType::F32, &[6, 1]),
            &View::of_slice(&mut si, DType::I32, &[6]),
            None,
            2,
            &View::of_slice(&mut out, DType::F32, &[3, 1]),
        )
        .unwrap();
        assert_eq!(out, [2.0, 4.0, 6.0]);
    }
}
