//! MoE inference routing: `moe_gating_top_k` (the grouped expert selection of
//! `aclnnMoeGatingTopK`: a softmax or sigmoid over the experts, groups ranked by their
//! largest or two largest biased scores, the top k experts of the best `k_group` groups).
//!
//! `moe_init_routing_v3` (drop-less routing of `aclnnMoeInitRoutingV3`: tokens sorted by
//! expert within the active range, gathered or dynamically quantised to int8, and the
//! per-expert token counts).
//!
//! Scores compute in float64; ties rank the lower group or expert first.

use super::dtype::DType;
use super::extra::{load, store};
use super::view::View;

/// Parameters of [`moe_gating_top_k`].
#[derive(Clone, Copy, Debug)]
pub struct GatingTopK {
    pub k: usize,
    pub k_group: usize,
    pub group_count: usize,
    /// 0: a group scores its largest value; 1: the sum of its two largest.
    pub group_select_mode: i64,
    /// 0: softmax; 1: sigmoid (then `y / (sum(y) + eps)`).
    pub norm_type: i64,
    pub routed_scaling_factor: f64,
    pub eps: f64,
}

/// For each row of `x` (`[rows, E]`): `norm = softmax(x)` or `sigmoid(x)`; the selection
/// scores `norm + bias`; the `k_group` best of `group_count` equal groups (by their largest
/// score, or the sum of their two largest); the `k` best experts inside those groups by
/// score into `expert_idx` (descending); `y` their `norm` values (with sigmoid divided by
/// their sum plus `eps`), times `routed_scaling_factor`. `norm_out` gets `norm` (float32).
pub fn moe_gating_top_k(
    x: &View,
    bias: Option<&View>,
    p: GatingTopK,
    y: &View,
    expert_idx: &View,
    norm_out: Option<&View>,
) -> Result<(), String> {
    let xs: Vec<f64> = load(x, DType::F64)?;
    let e = x.shape.last().copied().unwrap_or(1);
    let rows = xs.len().checked_div(e).unwrap_or(0);
    let bs: Vec<f64> = match bias {
        Some(b) => load(b, DType::F64)?,
        None => vec![0.0; e],
    };
    let per = e / p.group_count.max(1);
    let (mut yv, mut ev) = (
        Vec::with_capacity(rows * p.k),
        Vec::with_capacity(rows * p.k),
    );
    let mut nv = Vec::with_capacity(if norm_out.is_some() { xs.len() } else { 0 });
    for r in 0..rows {
        let row = &xs[r * e..(r + 1) * e];
        let norm: Vec<f64> = if p.norm_type == 1 {
            row.iter().map(|&v| 1.0 / (1.0 + (-v).exp())).collect()
        } else {
            let m = row.iter().fold(f64::NEG_INFINITY, |m, &a| m.max(a));
            let ex: Vec<f64> = row.iter().map(|&a| (a - m).exp()).collect();
            let s: f64 = ex.iter().sum();
            ex.iter().map(|&a| a / s).collect()
        };
        let score: Vec<f64> = norm.iter().zip(&bs).map(|(&n, &b)| n + b).collect();
        let desc = |v: &[f64], idx: &mut Vec<usize>| {
            idx.sort_by(|&a, &b| v[b].total_cmp(&v[a]).then(a.cmp(&b)));
        };
        let gscore: Vec<f64> = (0..p.group_count)
            .map(|g| {
                let mut s = score[g * per..(g + 1) * per].to_vec();
                s.sort_by(|a, b| b.total_cmp(a));
                if p.group_select_mode == 1 {
                    s.iter().take(2).sum()
                } else {
                    s[0]
                }
            })
            .collect();
        let mut groups: Vec<usize> = (0..p.group_count).collect();
        desc(&gscore, &mut groups);
        groups.truncate(p.k_group);
        let mut cand: Vec<usize> = groups
            .iter()
            .flat_map(|&g| g * per..(g + 1) * per)
            .collect();
        desc(&score, &mut cand);
        cand.truncate(p.k);
        let mut vals: Vec<f64> = cand.iter().map(|&i| norm[i]).collect();
        if p.norm_type == 1 {
            let s = vals.iter().sum::<f64>() + p.eps;
            vals.iter_mut().for_each(|v| *v /= s);
        }
        yv.extend(vals.iter().map(|v| v * p.routed_scaling_factor));
        ev.extend(cand.iter().map(|&i| i as i64));
        if norm_out.is_some() {
            nv.extend_from_slice(&norm);
        }
    }
    store(yv, DType::F64, y)?;
    store(ev, DType::I64, expert_idx)?;
    if let Some(o) = norm_out {
        store(nv, DType::F64, o)?;
    }
    Ok(())
}

/// Parameters of [`moe_init_routing_v3`].
#[derive(Clone, Copy, Debug)]
pub struct InitRoutingV3 {
    /// The active experts `[start, end)`.
    pub expert_start: i64,
    pub expert_end: i64,
    /// Drop/pad mode: each expert keeps its first `capacity` tokens in an `[E, capacity, H]`
    /// block (zero where it has fewer); None: drop-less.
    pub capacity: Option<usize>,
    /// Drop-less: the expanded rows written (`activeNum`, or all `n * k` when it is 0).
    pub rows: usize,
    /// The token histogram, when asked for: 0 cumsum, 1 count per active expert, 2
    /// `(expert, count)` pairs of the non-empty experts.
    pub tokens_num_type: Option<i64>,
    /// -1: no quantisation; 0: static int8 quantisation `round(x * scale + offset)`; 1:
    /// dynamic int8 quantisation per expanded row.
    pub quant_mode: i64,
    /// 0: `expanded_row_idx[source] = position` (-1 when not kept); 1: `expanded_row_idx[i]
    /// = source` for the first `available` positions.
    pub row_idx_type: i64,
}

/// `v` rounded to float16 toward zero (the kernel's `CAST_TRUNC` to half).
fn f16_toward_zero(v: f32) -> f32 {
    let h = half::f16::from_f32(v);
    if h.is_finite() && h.to_f32().abs() > v.abs() {
        half::f16::from_bits(h.to_bits() - 1).to_f32()
    } else {
        h.to_f32()
    }
}

/// MoeInitRoutingV3: the flattened `expert_idx` (`[n, k]`, source `j = row * k + slot`)
/// sorted stably by expert, keeping the experts in `[start, end)` (`available` of them).
/// Drop-less, sorted entry `i < rows` goes to expanded row `i`; drop/pad, the `c`-th entry of
/// expert `e` goes to row `e * capacity + c` when `c < capacity` (else it is dropped) and
/// rows left empty are zero. The row gets `x[source / k]`: as it is, or statically quantised
/// (`round(x * scale + offset)` saturated to int8; scale and offset one value, one per
/// active expert, or one per expert and column), or dynamically (`v = x * smooth[expert -
/// start]`, `scale = max|v| / 127` into `expanded_scale`, `round(half_trunc(v / scale))`
/// saturated to int8); with a 1-D `scale` and no quantisation `expanded_scale[row] =
/// scale[source / k]`. The expert histogram (before any drop) into `tokens` when asked.
/// Rows and entries not written keep their contents (row indices of type 0 are -1 there).
#[allow(clippy::too_many_arguments)]
pub fn moe_init_routing_v3(
    x: &View,
    expert_idx: &View,
    scale: Option<&View>,
    offset: Option<&View>,
    p: InitRoutingV3,
    expanded_x: &View,
    expanded_row_idx: &View,
    tokens: &View,
    expanded_scale: Option<&View>,
) -> Result<(), String> {
    let (n, h) = (x.shape[0], x.shape[1]);
    let experts: Vec<i64> = load(expert_idx, DType::I64)?;
    let k = experts.len().checked_div(n).unwrap_or(0);
    let mut order: Vec<usize> = (0..experts.len())
        .filter(|&j| (p.expert_start..p.expert_end).contains(&experts[j]))
        .collect();
    order.sort_by_key(|&j| experts[j]);
    // the expanded row of each sorted entry (None: dropped or past the active rows)
    let mut fill = vec![0usize; (p.expert_end - p.expert_start).max(0) as usize];
    let pos: Vec<Option<usize>> = order
        .iter()
        .enumerate()
        .map(|(i, &j)| match p.capacity {
            None => (i < p.rows).then_some(i),
            Some(c) => {
                let e = (experts[j] - p.expert_start) as usize;
                fill[e] += 1;
                (fill[e] <= c).then(|| e * c + fill[e] - 1)
            }
        })
        .collect();
    // row indices
    let mut ri: Vec<i64> = load(expanded_row_idx, DType::I64)?;
    if p.row_idx_type == 0 {
        ri.iter_mut().for_each(|v| *v = -1);
        for (i, &j) in order.iter().enumerate() {
            ri[j] = match p.capacity {
                None => i as i64,
                Some(_) => pos[i].map_or(-1, |r| r as i64),
            };
        }
    } else {
        for (i, &j) in order.iter().enumerate() {
            ri[i] = j as i64;
        }
    }
    store(ri, DType::I64, expanded_row_idx)?;
    // expert histogram
    if let Some(ty) = p.tokens_num_type {
        let range = (p.expert_end - p.expert_start).max(0) as usize;
        let mut count = vec![0i64; range];
        for &j in &order {
            count[(experts[j] - p.expert_start) as usize] += 1;
        }
        let mut tk: Vec<i64> = load(tokens, DType::I64)?;
        match ty {
            2 => {
                let pairs = tokens.shape[0];
                let nz: Vec<(usize, i64)> = count
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|c| c.1 != 0)
                    .collect();
                let written = (nz.len() + 1).min(pairs);
                tk[..written * 2].iter_mut().for_each(|v| *v = 0);
                for (s, &(e, c)) in nz.iter().enumerate().take(pairs) {
                    tk[2 * s] = e as i64 + p.expert_start;
                    tk[2 * s + 1] = c;
                }
            }
            0 => {
                let mut acc = 0;
                for (t, c) in tk.iter_mut().zip(&count) {
                    acc += c;
                    *t = acc;
                }
            }
            _ => tk[..range].copy_from_slice(&count),
        }
        store(tk, DType::I64, tokens)?;
    }
    // gathered (and quantised) rows
    let xs: Vec<f32> = load(x, DType::F32)?;
    let mut ex: Vec<f64> = load(expanded_x, DType::F64)?;
    if p.capacity.is_some() {
        ex.iter_mut().for_each(|v| *v = 0.0);
    }
    let mut es: Vec<f32> = match expanded_scale {
        Some(s) => load(s, DType::F32)?,
        None => Vec::new(),
    };
    let sc: Option<Vec<f32>> = match scale {
        Some(s) => Some(load(s, DType::F32)?),
        None => None,
    };
    let off: Option<Vec<f32>> = match offset {
        Some(s) => Some(load(s, DType::F32)?),
        None => None,
    };
    // a static scale/offset value: one, one per active expert, or per expert and column
    let per = |t: &[f32], e: usize, c: usize| -> f32 {
        match t.len() {
            1 => t[0],
            l if l == fill.len() => t[e],
            _ => t[e * h + c],
        }
    };
    let mut v = vec![0f32; h];
    for (i, &j) in order.iter().enumerate() {
        let Some(r) = pos[i] else { continue };
        let src = j / k.max(1);
        let e = (experts[j] - p.expert_start) as usize;
        let row = &xs[src * h..(src + 1) * h];
        let dst = &mut ex[r * h..(r + 1) * h];
        match p.quant_mode {
            1 => {
                for (c, o) in v.iter_mut().enumerate() {
                    *o = row[c] * sc.as_ref().map_or(1.0, |s| s[e * h + c]);
                }
                let s = v.iter().fold(0f32, |m, a| m.max(a.abs())) / 127.0;
                for (d, &a) in dst.iter_mut().zip(&v) {
                    *d = if s == 0.0 {
                        0.0
                    } else {
                        f16_toward_zero(a / s).round().clamp(-128.0, 127.0) as f64
                    };
                }
                if !es.is_empty() {
                    es[r] = s;
                }
            }
            0 => {
                let s = sc.as_deref().unwrap_or(&[1.0]);
                for (c, d) in dst.iter_mut().enumerate() {
                    let o = off.as_deref().map_or(0.0, |t| per(t, e, c));
                    *d = (row[c] * per(s, e, c) + o)
                        .round_ties_even()
                        .clamp(-128.0, 127.0) as f64;
                }
            }
            _ => {
                for (d, &a) in dst.iter_mut().zip(row) {
                    *d = a as f64;
                }
                if let (Some(s), false) = (&sc, es.is_empty()) {
                    es[r] = s[src];
                }
            }
        }
    }
    store(ex, DType::F64, expanded_x)?;
    if let Some(s) = expanded_scale {
        store(es, DType::F32, s)?;
    }
    Ok(())
}
