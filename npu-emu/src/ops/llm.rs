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

/// The routed (token, expert) pairs of a `[tokens, experts]` routing map (nonzero = routed),
/// token-major: each token's experts in ascending order.
fn routed_pairs(routing_map: &View) -> Result<Vec<(usize, usize)>, String> {
    let (t, e) = (routing_map.shape[0], routing_map.shape[1]);
    let rm: Vec<i64> = load(routing_map, DType::I64)?;
    Ok((0..t * e)
        .filter(|&i| rm[i] != 0)
        .map(|i| (i / e, i % e))
        .collect())
}

/// `probs[t, e]` of each pair, in the pairs' order.
fn probs_of(probs: &View, pairs: &[(usize, usize)]) -> Result<Vec<f32>, String> {
    let e = probs.shape[1];
    let p: Vec<f32> = load(probs, DType::F32)?;
    Ok(pairs.iter().map(|&(t, x)| p[t * e + x]).collect())
}

/// The drop-and-pad slots: for each expert `e`, `capacity` tokens: those it is routed to in
/// token order, then (padding) the others in token order, as a stable descending argsort
/// of the expert's column of the routing map does.
fn padded_slots(routing_map: &View, capacity: usize) -> Result<Vec<usize>, String> {
    let (t, e) = (routing_map.shape[0], routing_map.shape[1]);
    let rm: Vec<i64> = load(routing_map, DType::I64)?;
    let mut slots = Vec::with_capacity(e * capacity);
    for x in 0..e {
        let routed = (0..t).filter(|&i| rm[i * e + x] != 0);
        let others = (0..t).filter(|&i| rm[i * e + x] == 0);
        slots.extend(routed.chain(others).take(capacity));
    }
    Ok(slots)
}

/// A token index of an index tensor, checked against `rows`.
fn index_at(v: &[i64], j: usize, rows: usize, what: &str) -> Result<usize, String> {
    match usize::try_from(v[j]) {
        Ok(r) if r < rows => Ok(r),
        _ => Err(format!("{what}[{j}] = {} is outside [0, {rows})", v[j])),
    }
}

/// MoeTokenPermuteWithRoutingMap. Without `drop_pad`: the routed pairs sorted by expert
/// (stably, so each expert's tokens in order) give the rows of `permuted` (`tokens[t]`) and
/// `permuted_probs` (`probs[t, e]`); `sorted[i]` is the row of the `i`-th pair in token
/// order, as [`moe_token_permute`] computes for the experts of each token. The map must route
/// as many pairs as `permuted` has rows (every token to `topK` experts). With `drop_pad`:
/// expert `e` takes `capacity = rows / experts` slots ([`padded_slots`]): `sorted[e * capacity +
/// j]` is the token, `permuted` its row and `permuted_probs` `probs[token, e]`.
pub fn moe_permute_with_routing_map(
    tokens: &View,
    routing_map: &View,
    probs: Option<&View>,
    drop_pad: bool,
    permuted: &View,
    permuted_probs: Option<&View>,
    sorted: &View,
) -> Result<(), String> {
    let (t, e) = (routing_map.shape[0], routing_map.shape[1]);
    let rows = permuted.shape[0];
    let pr: Option<Vec<f32>> = opt_load(probs)?;
    let (slots, prob_rows): (Vec<usize>, Vec<f32>) = if drop_pad {
        let cap = rows / e;
        let slots = padded_slots(routing_map, cap)?;
        let pp = match &pr {
            Some(p) => (0..slots.len())
                .map(|j| p[slots[j] * e + j / cap])
                .collect(),
            None => vec![],
        };
        store(
            slots.iter().map(|&s| s as i64).collect(),
            DType::I64,
            sorted,
        )?;
        (slots, pp)
    } else {
        let pairs = routed_pairs(routing_map)?;
        if pairs.len() != rows {
            return Err(format!(
                "routingMap routes {} (token, expert) pairs, but numOutTokens gives {rows} \
                 output rows (topK * {t} tokens): each token must go to topK experts",
                pairs.len()
            ));
        }
        let k = rows.checked_div(t).unwrap_or(0);
        let mut experts: Vec<i32> = pairs.iter().map(|&(_, x)| x as i32).collect();
        let mut tok: Vec<f32> = load(tokens, DType::F32)?;
        let h = tokens.shape[1];
        let mut order: Vec<usize> = (0..rows).collect();
        order.sort_by_key(|&i| (pairs[i].1, pairs[i].0));
        let mut inv = vec![0i32; rows];
        let mut perm = vec![0f32; rows * h];
        moe_token_permute(
            &View::of_slice(&mut tok, DType::F32, &tokens.shape),
            &View::of_slice(&mut experts, DType::I32, &[t, k]),
            &View::of_slice(&mut perm, DType::F32, &[rows, h]),
            &View::of_slice(&mut inv, DType::I32, &[rows]),
        )?;
        store(inv.iter().map(|&s| s as i64).collect(), DType::I64, sorted)?;
        let by_expert: Vec<(usize, usize)> = order.iter().map(|&i| pairs[i]).collect();
        let pp = match probs {
            Some(p) => probs_of(p, &by_expert)?,
            None => vec![],
        };
        (by_expert.iter().map(|&(t, _)| t).collect(), pp)
    };
    let h = tokens.shape[1];
    let x: Vec<f64> = load(tokens, DType::F64)?;
    let mut out = Vec::with_capacity(rows * h);
    for &s in slots.iter().take(rows) {
        out.extend_from_slice(&x[s * h..(s + 1) * h]);
    }
    store(out, DType::F64, permuted)?;
    match permuted_probs {
        Some(v) if probs.is_some() => store(prob_rows, DType::F32, v),
        _ => Ok(()),
    }
}

/// MoeTokenPermuteWithRoutingMapGrad. Without `drop_pad` (`topK = sorted.len() /
/// tokens`): `tokens_grad[i / topK] = sum of grad[sorted[i]]`, and `probs_grad` takes
/// `permuted_probs_grad` back to the routed pairs in expert-major order (the transposed
/// masked scatter of the reference), zero elsewhere. With `drop_pad` (`capacity = rows /
/// experts`): `tokens_grad[sorted[i]] += grad[i]` and `probs_grad[sorted[i], i / capacity] =
/// permuted_probs_grad[i]`. Sums in f32.
#[allow(clippy::too_many_arguments)]
pub fn moe_permute_with_routing_map_grad(
    grad: &View,
    permuted_probs_grad: Option<&View>,
    sorted_indices: &View,
    routing_map: Option<&View>,
    experts: usize,
    drop_pad: bool,
    tokens_grad: &View,
    probs_grad: Option<&View>,
) -> Result<(), String> {
    let (t, h) = (tokens_grad.shape[0], tokens_grad.shape[1]);
    let rows = grad.shape[0];
    let g: Vec<f32> = load(grad, DType::F32)?;
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    let mut tg = vec![0f32; t * h];
    let mut pg = vec![0f32; t * experts];
    let ppg = opt_load(permuted_probs_grad)?;
    if drop_pad {
        let cap = (rows / experts).max(1);
        for i in 0..s.len().min(rows) {
            let tok = index_at(&s, i, t, "sortedIndices")?;
            for (d, v) in tg[tok * h..(tok + 1) * h].iter_mut().zip(&g[i * h..]) {
                *d += v;
            }
            if let Some(p) = &ppg {
                if i / cap < experts {
                    pg[tok * experts + i / cap] = p[i];
                }
            }
        }
    } else {
        let k = s.len().checked_div(t).unwrap_or(0);
        for i in 0..t * k {
            let r = index_at(&s, i, rows, "sortedIndices")?;
            for (d, v) in tg[(i / k) * h..(i / k + 1) * h]
                .iter_mut()
                .zip(&g[r * h..(r + 1) * h])
            {
                *d += v;
            }
        }
        if let (Some(p), Some(rm)) = (&ppg, routing_map) {
            let mut pairs = routed_pairs(rm)?;
            pairs.sort_by_key(|&(t, x)| (x, t));
            for (j, &(tok, x)) in pairs.iter().enumerate().take(p.len()) {
                pg[tok * experts + x] = p[j];
            }
        }
    }
    store(tg, DType::F32, tokens_grad)?;
    match probs_grad {
        Some(v) if permuted_probs_grad.is_some() => store(pg, DType::F32, v),
        _ => Ok(()),
    }
}

/// MoeTokenUnpermuteWithRoutingMap. With `padded`: `capacity = sorted.len() / experts`, slot
/// `j` (expert `j / capacity`, token `sorted[j]`) weighs `permuted[j]` by `probs[sorted[j], j
/// / capacity]` (written to `permute_probs`) and adds it into `out[sorted[j]]`;
/// `out_index` is the stable ascending argsort of `sorted` and `token_id` the sorted values.
/// Without it (`topK = sorted.len() / tokens`): `out[i / topK] += permuted[sorted[i]] *
/// probs_i`, `probs_i` the probabilities of the routed pairs in token order (those go to
/// `permute_probs`, as the reference's golden has them); `out_index` and `token_id` are not
/// written (the reference's non-padded path leaves them). Sums in f32.
#[allow(clippy::too_many_arguments)]
pub fn moe_unpermute_with_routing_map(
    permuted: &View,
    sorted_indices: &View,
    routing_map: Option<&View>,
    probs: Option<&View>,
    padded: bool,
    out: &View,
    out_index: Option<&View>,
    token_id: Option<&View>,
    permute_probs: Option<&View>,
) -> Result<(), String> {
    let (t, h) = (out.shape[0], out.shape[1]);
    let rows = permuted.shape[0];
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    if padded {
        let x: Vec<f32> = load(permuted, DType::F32)?;
        let mut o = vec![0f32; t * h];
        let mut pp = vec![1f32; s.len()];
        if let Some(p) = probs {
            let e = p.shape[1];
            let cap = (s.len() / e.max(1)).max(1);
            let pv: Vec<f32> = load(p, DType::F32)?;
            for (j, w) in pp.iter_mut().enumerate() {
                let tok = index_at(&s, j, t, "sortedIndices")?;
                *w = if j / cap < e {
                    pv[tok * e + j / cap]
                } else {
                    0.0
                };
            }
        }
        for j in 0..s.len().min(rows) {
            let tok = index_at(&s, j, t, "sortedIndices")?;
            for (d, v) in o[tok * h..(tok + 1) * h].iter_mut().zip(&x[j * h..]) {
                *d += v * pp[j];
            }
        }
        let mut order: Vec<usize> = (0..s.len()).collect();
        order.sort_by_key(|&j| s[j]);
        if let Some(v) = out_index {
            store(order.iter().map(|&j| j as i64).collect(), DType::I64, v)?;
        }
        if let Some(v) = token_id {
            store(order.iter().map(|&j| s[j]).collect(), DType::I64, v)?;
        }
        store(o, DType::F32, out)?;
        return match (permute_probs, probs) {
            (Some(v), Some(_)) => store(pp, DType::F32, v),
            _ => Ok(()),
        };
    }
    let k = s.len().checked_div(t).unwrap_or(0);
    let mut pr = match (probs, routing_map) {
        (Some(p), Some(rm)) => {
            let pairs = routed_pairs(rm)?;
            if pairs.len() != t * k {
                return Err(format!(
                    "routingMap routes {} (token, expert) pairs, but sortedIndices has {} \
                     entries ({t} tokens times topK {k})",
                    pairs.len(),
                    t * k
                ));
            }
            Some(probs_of(p, &pairs)?)
        }
        _ => None,
    };
    let mut si: Vec<i32> = s.iter().map(|&v| v as i32).collect();
    let mut x: Vec<f32> = load(permuted, DType::F32)?;
    let mut o = vec![0f32; t * h];
    let pv = pr
        .as_mut()
        .map(|p| View::of_slice(p.as_mut_slice(), DType::F32, &[t, k]));
    moe_token_unpermute(
        &View::of_slice(&mut x, DType::F32, &permuted.shape),
        &View::of_slice(&mut si[..t * k], DType::I32, &[t * k]),
        pv.as_ref(),
        k,
        &View::of_slice(&mut o, DType::F32, &[t, h]),
    )?;
    store(o, DType::F32, out)?;
    match (permute_probs, pr) {
        (Some(v), Some(p)) => store(p, DType::F32, v),
        _ => Ok(()),
    }
}

/// MoeTokenUnpermuteWithRoutingMapGrad: the gradient of
/// [`moe_unpermute_with_routing_map`]. With `padded` the forward's sorted indices are
/// `sorted[out_index[i]] = token_id[i]` and `capacity = sorted.len() / experts`: slot `j`
/// gets `grad[sorted[j]] * probs[sorted[j], j / capacity]` and `probs_grad[sorted[j], j /
/// capacity] = grad[sorted[j]] . permuted[j]`. Without it (`out_index` the forward's sorted
/// indices, `topK = its length / tokens`): row `sorted[i]` gets `grad[i / topK] * probs_i` and
/// the pair's probability gradient `grad[i / topK] . permuted[sorted[i]]`, scattered back to
/// the routed pairs in token order ([`moe_token_unpermute_grad`]). Rows no slot reaches are
/// zero. Sums in f32.
#[allow(clippy::too_many_arguments)]
pub fn moe_unpermute_with_routing_map_grad(
    grad: &View,
    out_index: &View,
    token_id: &View,
    routing_map: Option<&View>,
    permuted: Option<&View>,
    probs: Option<&View>,
    padded: bool,
    permuted_grad: &View,
    probs_grad: Option<&View>,
) -> Result<(), String> {
    let (t, h) = (grad.shape[0], grad.shape[1]);
    let rows = permuted_grad.shape[0];
    let oi: Vec<i64> = load(out_index, DType::I64)?;
    let g: Vec<f32> = load(grad, DType::F32)?;
    let x = opt_load(permuted)?;
    let n = oi.len();
    if padded {
        let ti: Vec<i64> = load(token_id, DType::I64)?;
        let mut s = vec![0usize; n];
        for i in 0..n.min(ti.len()) {
            let j = index_at(&oi, i, n, "outIndex")?;
            s[j] = index_at(&ti, i, t, "permuteTokenId")?;
        }
        let mut gx = vec![0f32; rows * h];
        let (e, pv) = match probs {
            Some(p) => (p.shape[1], Some(load::<f32>(p, DType::F32)?)),
            None => (1, None),
        };
        let cap = (n / e.max(1)).max(1);
        let mut gp = vec![0f32; t * e];
        for (j, &tok) in s.iter().enumerate().take(rows) {
            let w = match &pv {
                Some(p) if j / cap < e => p[tok * e + j / cap],
                Some(_) => 0.0,
                None => 1.0,
            };
            let src = &g[tok * h..(tok + 1) * h];
            for (d, v) in gx[j * h..(j + 1) * h].iter_mut().zip(src) {
                *d = v * w;
            }
            if let (Some(x), true) = (&x, j / cap < e && pv.is_some()) {
                gp[tok * e + j / cap] = x[j * h..(j + 1) * h]
                    .iter()
                    .zip(src)
                    .map(|(a, b)| a * b)
                    .sum();
            }
        }
        store(gx, DType::F32, permuted_grad)?;
        return match probs_grad {
            Some(v) if probs.is_some() => store(gp, DType::F32, v),
            _ => Ok(()),
        };
    }
    let k = n.checked_div(t).unwrap_or(0);
    let (pairs, mut pr) = match (probs, routing_map) {
        (Some(p), Some(rm)) => {
            let pairs = routed_pairs(rm)?;
            if pairs.len() != t * k {
                return Err(format!(
                    "routingMap routes {} (token, expert) pairs, but outIndex has {} entries \
                     ({t} tokens times topK {k})",
                    pairs.len(),
                    t * k
                ));
            }
            let pr = probs_of(p, &pairs)?;
            (pairs, Some(pr))
        }
        _ => (vec![], None),
    };
    let mut si: Vec<i32> = oi[..t * k].iter().map(|&v| v as i32).collect();
    let mut gg = g.clone();
    let mut xx = x.clone().unwrap_or_default();
    let mut gx = vec![0f32; rows * h];
    let mut gpr = vec![0f32; t * k];
    // weight 1 without probs: the helper reads topK from the probabilities' shape
    let mut ones = vec![1f32; t * k];
    let pv = View::of_slice(
        pr.as_mut().unwrap_or(&mut ones).as_mut_slice(),
        DType::F32,
        &[t, k],
    );
    let xv = x
        .as_ref()
        .map(|_| View::of_slice(xx.as_mut_slice(), DType::F32, &[rows, h]));
    let gprv = View::of_slice(gpr.as_mut_slice(), DType::F32, &[t * k]);
    moe_token_unpermute_grad(
        xv.as_ref(),
        &View::of_slice(&mut gg, DType::F32, &[t, h]),
        &View::of_slice(&mut si, DType::I32, &[t * k]),
        Some(&pv),
        &View::of_slice(&mut gx, DType::F32, &[rows, h]),
        Some(&gprv),
    )?;
    store(gx, DType::F32, permuted_grad)?;
    match (probs_grad, probs) {
        (Some(v), Some(p)) => {
            let e = p.shape[1];
            let mut gp = vec![0f32; t * e];
            for (j, &(tok, x)) in pairs.iter().enumerate() {
                gp[tok * e + x] = gpr[j];
            }
            store(gp, DType::F32, v)
        }
        _ => Ok(()),
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
