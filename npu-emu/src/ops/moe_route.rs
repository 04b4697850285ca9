//! MoE routing: `moe_init_routing_v2` (`aclnnMoeInitRoutingV2`: tokens sorted by expert,
//! either drop-less (the first `active_num` sorted rows gathered) or drop/pad (each expert
//! keeps its first `capacity` tokens in an `[E, C, H]` block, the rest zero));
//! `moe_re_routing` (`aclnnMoeReRouting`: tokens received rank-major after the all-to-all
//! reordered expert-major).

use super::dtype::DType;
use super::extra::{load, store};
use super::view::View;

/// Parameters of [`moe_init_routing_v2`].
#[derive(Clone, Copy, Debug)]
pub struct InitRoutingV2 {
    /// Drop-less: rows gathered into `expanded_x` (`min(n * k, active_num)`, 0 = all).
    pub active_num: usize,
    /// Drop/pad: the capacity per expert and the number of experts (`expanded_x` is `[E, C, H]`).
    pub capacity: usize,
    pub expert_num: usize,
    pub drop_pad: bool,
    /// Drop-less token counts: 0 none, 1 cumulative sum, 2 count per expert.
    pub count_flag: i64,
}

/// MoeInitRoutingV2: the flattened `expert_idx` (`[n, k]`, source `j = row * k + slot`)
/// sorted stably by expert. Drop-less: `expanded_row_idx[j]` is the sorted position of `j`
/// and `expanded_x[i] = x[source_i / k]` for the first `active_num` positions; `tokens`
/// gets the per-expert count (or its running sum) over `[0, expert_num)`. Drop/pad: the
/// `c`-th token of expert `e` goes to `expanded_x[e, c]` (`expanded_row_idx[j] = e * C + c`)
/// when `c < C`, else it is dropped (`-1`); unfilled slots are zero; `before_capacity[e]`
/// counts the tokens of expert `e` before dropping. Experts outside `[0, expert_num)` are
/// dropped in drop/pad mode.
pub fn moe_init_routing_v2(
    x: &View,
    expert_idx: &View,
    p: InitRoutingV2,
    expanded_x: &View,
    expanded_row_idx: &View,
    tokens: Option<&View>,
    before_capacity: Option<&View>,
) -> Result<(), String> {
    let (n, h) = (x.shape[0], x.shape[1]);
    let experts: Vec<i64> = load(expert_idx, DType::I64)?;
    let r = route_v2(&experts, n, p);
    let xs: Vec<f64> = load(x, DType::F64)?;
    let mut ex = vec![0f64; r.out_rows * h];
    for g in &r.gathers {
        ex[g.dst * h..(g.dst + 1) * h].copy_from_slice(&xs[g.src * h..(g.src + 1) * h]);
    }
    store(ex, DType::F64, expanded_x)?;
    if p.drop_pad {
        if let Some(b) = before_capacity {
            store(r.count.clone(), DType::I64, b)?;
        }
    } else if let Some(t) = tokens {
        store(r.tokens(p.count_flag), DType::I64, t)?;
    }
    store(r.row_idx, DType::I64, expanded_row_idx)
}

/// One row of an expanded output: `out[dst] = x[src]`, routed to `expert`.
#[derive(Clone, Copy, Debug)]
pub struct Gather {
    pub dst: usize,
    pub src: usize,
    pub expert: i64,
}

/// The routing of MoeInitRoutingV2 (and its quantized and gradient forms).
#[derive(Clone, Debug)]
pub struct Routing {
    /// `expanded_row_idx`: the output row of each source pair (`-1` when dropped).
    pub row_idx: Vec<i64>,
    /// The rows of the expanded output that are filled (the others are zero).
    pub gathers: Vec<Gather>,
    /// Rows of the expanded output (`min(n·k, active)` or `E·C`).
    pub out_rows: usize,
    /// Tokens per expert over `[0, expert_num)` before any drop.
    pub count: Vec<i64>,
}

impl Routing {
    /// The per-expert counts (flag 2) or their running sum (flag 1).
    pub fn tokens(&self, flag: i64) -> Vec<i64> {
        let mut v = self.count.clone();
        if flag == 1 {
            let mut s = 0;
            for c in v.iter_mut() {
                s += *c;
                *c = s;
            }
        }
        v
    }
}

/// MoeInitRoutingV2's routing of the flattened `experts` (`[n, k]`, pair `j = row·k + slot`):
/// a stable sort by expert, then drop-less (`row_idx[j]` the sorted position, the first
/// `active` positions gathered) or drop/pad (the `c`-th pair of expert `e` at `e·C + c`
/// when `c < C`, experts outside `[0, E)` and overflow dropped).
pub fn route_v2(experts: &[i64], n: usize, p: InitRoutingV2) -> Routing {
    let k = experts.len().checked_div(n).unwrap_or(0).max(1);
    let mut order: Vec<usize> = (0..experts.len()).collect();
    order.sort_by_key(|&j| experts[j]);
    let mut row_idx = vec![-1i64; experts.len()];
    let mut count = vec![0i64; p.expert_num];
    for &e in experts {
        if let Some(c) = usize::try_from(e).ok().and_then(|e| count.get_mut(e)) {
            *c += 1;
        }
    }
    let mut gathers = Vec::new();
    let out_rows;
    if p.drop_pad {
        let (e_n, cap) = (p.expert_num, p.capacity);
        out_rows = e_n * cap;
        let mut fill = vec![0usize; e_n];
        for &j in &order {
            let Some(e) = usize::try_from(experts[j]).ok().filter(|&e| e < e_n) else {
                continue;
            };
            if fill[e] < cap {
                let slot = e * cap + fill[e];
                fill[e] += 1;
                row_idx[j] = slot as i64;
                gathers.push(Gather {
                    dst: slot,
                    src: j / k,
                    expert: experts[j],
                });
            }
        }
    } else {
        out_rows = if p.active_num == 0 {
            order.len()
        } else {
            p.active_num.min(order.len())
        };
        for (i, &j) in order.iter().enumerate() {
            row_idx[j] = i as i64;
            if i < out_rows {
                gathers.push(Gather {
                    dst: i,
                    src: j / k,
                    expert: experts[j],
                });
            }
        }
    }
    Routing {
        row_idx,
        gathers,
        out_rows,
        count,
    }
}

/// MoeReRouting: `tokens` (`[A, H]`) hold, rank by rank, the tokens of each of the rank's
/// `E` experts (`counts` `[N, E]`, row-major); the output lists expert by expert, rank by
/// rank, the same blocks: `permute_tokens[dst] = tokens[src]`, `permute_idx[dst] = src`
/// (gather index), `scales` moved alike, `expert_token_num[e] = sum_r counts[r, e]`.
/// Negative counts or blocks running past `A` are an error.
pub fn moe_re_routing(
    tokens: &View,
    counts: &View,
    scales: Option<&View>,
    permute_tokens: &View,
    permute_scales: Option<&View>,
    permute_idx: &View,
    expert_token_num: &View,
) -> Result<(), String> {
    let (a, h) = (tokens.shape[0], tokens.shape[1]);
    let (n, e) = (counts.shape[0], counts.shape[1]);
    let c: Vec<i64> = load(counts, DType::I64)?;
    if let Some(v) = c.iter().find(|v| **v < 0) {
        return Err(format!(
            "expert_token_num_per_rank holds a negative count {v}"
        ));
    }
    let total: i64 = c.iter().sum();
    if total as usize > a {
        return Err(format!(
            "expert_token_num_per_rank sums to {total} but tokens has only {a} rows"
        ));
    }
    // source offset of each (rank, expert) block
    let mut src_off = vec![0usize; n * e];
    let mut o = 0usize;
    for (i, v) in c.iter().enumerate() {
        src_off[i] = o;
        o += *v as usize;
    }
    let xs: Vec<f64> = load(tokens, DType::F64)?;
    let mut out: Vec<f64> = load(permute_tokens, DType::F64)?;
    let mut idx: Vec<i64> = load(permute_idx, DType::I64)?;
    let (sc, sw): (Vec<f64>, usize) = match scales {
        Some(s) => {
            let v: Vec<f64> = load(s, DType::F64)?;
            let w = v.len().checked_div(a).unwrap_or(0);
            (v, w)
        }
        None => (Vec::new(), 0),
    };
    let mut ps: Vec<f64> = match (scales, permute_scales) {
        (Some(_), Some(p)) => load(p, DType::F64)?,
        _ => Vec::new(),
    };
    let mut dst = 0usize;
    for ex in 0..e {
        for r in 0..n {
            let (s0, len) = (src_off[r * e + ex], c[r * e + ex] as usize);
            for t in 0..len {
                let (src, d) = (s0 + t, dst + t);
                out[d * h..(d + 1) * h].copy_from_slice(&xs[src * h..(src + 1) * h]);
                idx[d] = src as i64;
                if !ps.is_empty() {
                    ps[d * sw..(d + 1) * sw].copy_from_slice(&sc[src * sw..(src + 1) * sw]);
                }
            }
            dst += len;
        }
    }
    store(out, DType::F64, permute_tokens)?;
    store(idx, DType::I64, permute_idx)?;
    if let (false, Some(p)) = (ps.is_empty(), permute_scales) {
        store(ps, DType::F64, p)?;
    }
    let num: Vec<i64> = (0..e)
        .map(|ex| (0..n).map(|r| c[r * e + ex]).sum())
        .collect();
    store(num, DType::I64, expert_token_num)
}
