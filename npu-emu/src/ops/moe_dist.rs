//! Expert-parallel MoE token exchange (`aclnnMoeDistributeDispatch` /
//! `aclnnMoeDistributeCombine`): the local steps around the fixed-size collectives.
//!
//! Dispatch: every rank packs its tokens into a slot of 32-bit words ([`dispatch_pack`]);
//! the slots of all ranks are all-gathered; each rank then selects the tokens routed to its
//! own experts ([`dispatch_select`]). Combine: every rank packs its expert outputs and its
//! receive counts ([`combine_pack`]); after the all-gather each rank gathers the rows of its
//! own tokens and sums them weighted by `expertScales` ([`combine_reduce`]).
//!
//! Order of the rows a rank receives (the operator pages' design note): grouped by local
//! expert, within an expert by source rank, within a source rank in the row-major order of
//! that rank's `expertIds` `[BS, K]`. `expandIdx[i*K + j]` is the number of earlier
//! (row-major) entries of the same source rank routed to the same expert; `epRecvCounts`
//! (`[localExpertNum * epWorldSize]`, expert-major) is the running sum of the counts;
//! `expertTokenNums` is the per-expert count or its running sum.
//!
//! Slots are little-endian 32-bit words: float32 values, int32 values by their bits. Token
//! values travel as float32 (exact for FLOAT16/BFLOAT16). Sums compute in float32 in the
//! order of `k`, rounded once to the output dtype.

use super::dtype::DType;
use super::extra::{load, store};
use super::view::View;

/// The routing of one dispatch/combine pair, the same on every rank.
#[derive(Clone, Copy, Debug)]
pub struct Routing {
    pub world: usize,
    pub rank: usize,
    pub moe_experts: usize,
    /// Experts per rank (`moeExpertNum / epWorldSize`).
    pub local: usize,
    pub h: usize,
    pub k: usize,
    /// Most tokens any rank sends (`globalBs / epWorldSize`).
    pub max_bs: usize,
}

/// Dispatch's slot: `[bs, x (max_bs*h), expertIds (max_bs*k), expertScales (max_bs*k)]`.
pub fn dispatch_slot_words(r: &Routing) -> usize {
    1 + r.max_bs * (r.h + 2 * r.k)
}

fn put(slot: &mut [u8], word: usize, bits: u32) {
    slot[word * 4..word * 4 + 4].copy_from_slice(&bits.to_le_bytes());
}

fn get(slot: &[u8], word: usize) -> u32 {
    u32::from_le_bytes(slot[word * 4..word * 4 + 4].try_into().unwrap())
}

/// Write this rank's tokens `x` `[bs, h]`, `expert_ids` `[bs, k]` and `expert_scales`
/// (1.0 when absent) into `slot`.
pub fn dispatch_pack(
    r: &Routing,
    x: &View,
    expert_ids: &View,
    expert_scales: Option<&View>,
    active: Option<&View>,
    slot: &mut [u8],
) -> Result<(), String> {
    let mut bs = x.shape[0];
    if let Some(m) = active {
        // xActiveMask `[bs]`: the active tokens come first; only they are sent.
        let v: Vec<f32> = load(m, DType::F32)?;
        let n = v.iter().take_while(|&&b| b != 0.0).count();
        if v[n..].iter().any(|&b| b != 0.0) {
            return Err(format!(
                "xActiveMask must have its true entries before its false ones, but entry {n} \
                 is false and a later one is true"
            ));
        }
        bs = n;
    }
    let xs: Vec<f32> = load(x, DType::F32)?;
    let ids: Vec<i32> = load(expert_ids, DType::I32)?;
    for (i, &e) in ids.iter().enumerate() {
        if e < 0 || e as usize >= r.moe_experts {
            return Err(format!(
                "expertIds[{}][{}] = {e} is out of range [0, moeExpertNum = {})",
                i / r.k,
                i % r.k,
                r.moe_experts
            ));
        }
    }
    let sc: Vec<f32> = match expert_scales {
        Some(v) => load(v, DType::F32)?,
        None => vec![1.0; ids.len()],
    };
    put(slot, 0, bs as u32);
    let (xo, io, so) = (1, 1 + r.max_bs * r.h, 1 + r.max_bs * (r.h + r.k));
    for (i, v) in xs[..bs * r.h].iter().enumerate() {
        put(slot, xo + i, v.to_bits());
    }
    for (i, (&e, s)) in ids.iter().zip(&sc).take(bs * r.k).enumerate() {
        put(slot, io + i, e as u32);
        put(slot, so + i, s.to_bits());
    }
    Ok(())
}

/// A rank's tokens read back from its slot.
struct Sent {
    ids: Vec<usize>,
    scales: Vec<f32>,
    x_word: usize,
}

fn sent(r: &Routing, slot: &[u8]) -> Result<Sent, String> {
    let bs = get(slot, 0) as usize;
    if bs > r.max_bs {
        return Err(format!(
            "a rank sent {bs} tokens, more than globalBs / epWorldSize = {}; globalBs must be \
             the same on every rank and at least the largest BS times epWorldSize",
            r.max_bs
        ));
    }
    let (io, so) = (1 + r.max_bs * r.h, 1 + r.max_bs * (r.h + r.k));
    let ids = (0..bs * r.k).map(|i| get(slot, io + i) as usize).collect();
    let scales = (0..bs * r.k)
        .map(|i| f32::from_bits(get(slot, so + i)))
        .collect();
    Ok(Sent {
        ids,
        scales,
        x_word: 1,
    })
}

/// `expandIdx` of one rank's routing: the rank of each entry among the earlier entries with
/// the same expert.
fn expand_idx(ids: &[usize], experts: usize) -> Vec<i32> {
    let mut seen = vec![0i32; experts];
    ids.iter()
        .map(|&e| {
            let n = seen[e];
            seen[e] += 1;
            n
        })
        .collect()
}

/// What [`dispatch_select`] writes.
pub struct DispatchOut<'a> {
    pub expand_x: &'a View,
    /// Per-row dynamic quantisation scales (`quantMode` 2).
    pub dynamic_scales: Option<&'a View>,
    /// `expandIdx` (V1).
    pub expand_idx: Option<&'a View>,
    /// `assistInfoForCombine` (V2): `[source rank, token, k]` of each received row.
    pub assist: Option<&'a View>,
    pub expert_token_nums: &'a View,
    pub ep_recv_counts: &'a View,
    pub expand_scales: Option<&'a View>,
}

/// From the gathered slots (`world` slots of `slot_bytes`), select the tokens routed to this
/// rank's experts. `quant`: `None` copies; `Some(smooth)` quantises each row dynamically to
/// int8 (`x * smooth[expert]` when smooth scales are given: `scale = max|v| / 127`,
/// `q = round_half_even(v / scale)`). `cumsum`: `expertTokenNums` as a running sum.
pub fn dispatch_select(
    r: &Routing,
    gathered: &[u8],
    slot_bytes: usize,
    quant: Option<Option<&View>>,
    cumsum: bool,
    out: DispatchOut,
) -> Result<(), String> {
    let mut sents = Vec::with_capacity(r.world);
    for s in 0..r.world {
        sents.push(sent(r, &gathered[s * slot_bytes..(s + 1) * slot_bytes])?);
    }
    let smooth: Option<Vec<f32>> = match quant {
        Some(Some(v)) => Some(load(v, DType::F32)?),
        _ => None,
    };
    let rows_cap = out.expand_x.shape[0];
    let h = r.h;
    let first = r.rank * r.local;
    let mut rows: Vec<f32> = Vec::new();
    let mut row_scales: Vec<f32> = Vec::new();
    let mut origin: Vec<i32> = Vec::new();
    let mut counts = vec![0i32; r.local * r.world];
    for le in 0..r.local {
        let e = first + le;
        for (src, st) in sents.iter().enumerate() {
            let slot = &gathered[src * slot_bytes..(src + 1) * slot_bytes];
            for (idx, &te) in st.ids.iter().enumerate() {
                if te != e {
                    continue;
                }
                let tok = idx / r.k;
                let w = st.x_word + tok * h;
                rows.extend((0..h).map(|c| f32::from_bits(get(slot, w + c))));
                row_scales.push(st.scales[idx]);
                origin.extend([src as i32, tok as i32, (idx % r.k) as i32]);
                counts[le * r.world + src] += 1;
            }
        }
    }
    let n = row_scales.len();
    if n > rows_cap {
        return Err(format!(
            "this rank receives {n} tokens but expandX has room for {rows_cap} rows"
        ));
    }
    // expandX (and the dynamic scales); rows past the received ones are zero.
    let mut dyn_scales = vec![0f32; rows_cap];
    rows.resize(rows_cap * h, 0.0);
    if quant.is_some() {
        let mut q = vec![0f32; rows_cap * h];
        for i in 0..n {
            let e = first + row_index_expert(&counts, r, i);
            let row = &mut rows[i * h..(i + 1) * h];
            if let Some(sm) = &smooth {
                for (c, v) in row.iter_mut().enumerate() {
                    *v *= sm[e * h + c];
                }
            }
            let amax = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            let scale = amax / 127.0;
            dyn_scales[i] = scale;
            if scale > 0.0 {
                for (c, v) in row.iter().enumerate() {
                    q[i * h + c] = (v / scale).round_ties_even().clamp(-128.0, 127.0);
                }
            }
        }
        store(q, DType::F32, out.expand_x)?;
    } else {
        store(rows, DType::F32, out.expand_x)?;
    }
    if let Some(d) = out.dynamic_scales {
        let len = d.numel();
        dyn_scales.resize(len, 0.0);
        store(dyn_scales, DType::F32, d)?;
    }
    if let Some(es) = out.expand_scales {
        let mut v = row_scales;
        v.resize(es.numel(), 0.0);
        store(v, DType::F32, es)?;
    }
    // expandIdx of this rank's own tokens.
    if let Some(v) = out.expand_idx {
        let mut idx = expand_idx(&sents[r.rank].ids, r.moe_experts);
        idx.resize(v.numel(), 0);
        store(idx, DType::I32, v)?;
    }
    if let Some(v) = out.assist {
        origin.resize(v.numel(), 0);
        store(origin, DType::I32, v)?;
    }
    // epRecvCounts: the running sum, expert-major; entries past local*world are zero.
    let mut run = 0i32;
    let mut ep: Vec<i32> = counts
        .iter()
        .map(|c| {
            run += c;
            run
        })
        .collect();
    ep.resize(out.ep_recv_counts.numel(), 0);
    store(ep, DType::I32, out.ep_recv_counts)?;
    let mut per: Vec<i64> = (0..r.local)
        .map(|le| {
            counts[le * r.world..(le + 1) * r.world]
                .iter()
                .map(|&c| c as i64)
                .sum()
        })
        .collect();
    if cumsum {
        let mut acc = 0;
        for v in per.iter_mut() {
            acc += *v;
            *v = acc;
        }
    }
    store(per, DType::I64, out.expert_token_nums)
}

/// The local expert of received row `i` (rows are expert-major).
fn row_index_expert(counts: &[i32], r: &Routing, i: usize) -> usize {
    let mut acc = 0usize;
    for le in 0..r.local {
        acc += counts[le * r.world..(le + 1) * r.world]
            .iter()
            .map(|&c| c as usize)
            .sum::<usize>();
        if i < acc {
            return le;
        }
    }
    r.local - 1
}

/// The most rows a rank can receive: `globalBs * min(localExpertNum, K)`.
pub fn max_rows(r: &Routing) -> usize {
    r.max_bs * r.world * r.local.min(r.k)
}

/// Combine's slot: `[rows, expandX rows (max_rows*h), epSendCounts (local*world)]`.
pub fn combine_slot_words(r: &Routing) -> usize {
    1 + max_rows(r) * r.h + r.local * r.world
}

/// Write this rank's expert outputs (the first [`max_rows`] rows of `expand_x`, fewer if it
/// has fewer) and its `ep_send_counts` (the dispatch's `epRecvCounts`) into `slot`.
pub fn combine_pack(
    r: &Routing,
    expand_x: &View,
    ep_send_counts: &View,
    slot: &mut [u8],
) -> Result<(), String> {
    let rows = expand_x.shape[0].min(max_rows(r));
    let xs: Vec<f32> = load(expand_x, DType::F32)?;
    let c: Vec<i32> = load(ep_send_counts, DType::I32)?;
    put(slot, 0, rows as u32);
    for (i, v) in xs[..rows * r.h].iter().enumerate() {
        put(slot, 1 + i, v.to_bits());
    }
    let co = 1 + max_rows(r) * r.h;
    for (i, v) in c[..r.local * r.world].iter().enumerate() {
        put(slot, co + i, *v as u32);
    }
    Ok(())
}

/// `x[i] = sum_j expertScales[i][j] * (row of token i at expert expertIds[i][j])`, the rows
/// found in the gathered slots through the owner's `epSendCounts` and `expandIdx`.
pub fn combine_reduce(
    r: &Routing,
    gathered: &[u8],
    slot_bytes: usize,
    expert_ids: &View,
    expand_idx: &View,
    expert_scales: &View,
    x: &View,
) -> Result<(), String> {
    let ids: Vec<i32> = load(expert_ids, DType::I32)?;
    let eidx: Vec<i32> = load(expand_idx, DType::I32)?;
    let sc: Vec<f32> = load(expert_scales, DType::F32)?;
    let bs = x.shape[0];
    let h = r.h;
    let mut out = vec![0f32; bs * h];
    for t in 0..bs {
        for j in 0..r.k {
            let at = t * r.k + j;
            let e = ids[at];
            if e < 0 || e as usize >= r.moe_experts {
                return Err(format!(
                    "expertIds[{t}][{j}] = {e} is out of range [0, moeExpertNum = {})",
                    r.moe_experts
                ));
            }
            let e = e as usize;
            let (owner, le) = (e / r.local, e % r.local);
            let slot = &gathered[owner * slot_bytes..(owner + 1) * slot_bytes];
            let rows = get(slot, 0) as usize;
            let co = 1 + max_rows(r) * h;
            let pos = le * r.world + r.rank;
            let start = if pos == 0 {
                0
            } else {
                get(slot, co + pos - 1) as i32
            };
            let end = get(slot, co + pos) as i32;
            let k = eidx[at];
            if k < 0 || start + k >= end || (start + k) as usize >= rows {
                return Err(format!(
                    "expandIdx[{at}] = {k} does not name a token rank {} sent to expert {e} \
                     (rank {owner} received {} from it): expandIdx and epSendCounts must be \
                     the dispatch's outputs",
                    r.rank,
                    end - start
                ));
            }
            let w = 1 + (start + k) as usize * h;
            let s = sc[at];
            for c in 0..h {
                out[t * h + c] += s * f32::from_bits(get(slot, w + c));
            }
        }
    }
    store(out, DType::F32, x)
}

/// CombineV2's slot: `[rows, expandX rows (max_rows*h), assistInfo triples (max_rows*3)]`.
pub fn combine_v2_slot_words(r: &Routing) -> usize {
    1 + max_rows(r) * (r.h + 3)
}

/// Write this rank's received-row count (the last running sum of `ep_send_counts`), its
/// expert outputs and the `[source rank, token, k]` of each row (`assist`) into `slot`.
pub fn combine_v2_pack(
    r: &Routing,
    expand_x: &View,
    assist: &View,
    ep_send_counts: &View,
    slot: &mut [u8],
) -> Result<(), String> {
    let c: Vec<i32> = load(ep_send_counts, DType::I32)?;
    let rows = c[r.local * r.world - 1].max(0) as usize;
    let cap = expand_x.shape[0].min(max_rows(r));
    if rows > cap {
        return Err(format!(
            "epSendCounts says this rank received {rows} rows, but expandX holds {cap}"
        ));
    }
    let xs: Vec<f32> = load(expand_x, DType::F32)?;
    let info: Vec<i32> = load(assist, DType::I32)?;
    put(slot, 0, rows as u32);
    for (i, v) in xs[..rows * r.h].iter().enumerate() {
        put(slot, 1 + i, v.to_bits());
    }
    let ao = 1 + max_rows(r) * r.h;
    for (i, v) in info[..rows * 3].iter().enumerate() {
        put(slot, ao + i, *v as u32);
    }
    Ok(())
}

/// `x[t] = sum_j expertScales[t][j] * (the row holding token t's j-th entry)` (+
/// `shared[t]`), the rows found through each owner's `[source rank, token, k]` triples;
/// tokens not sent (inactive) get zero (+ `shared`).
pub fn combine_v2_reduce(
    r: &Routing,
    gathered: &[u8],
    slot_bytes: usize,
    expert_scales: &View,
    shared: Option<&View>,
    x: &View,
) -> Result<(), String> {
    let sc: Vec<f32> = load(expert_scales, DType::F32)?;
    let bs = x.shape[0];
    let h = r.h;
    let ao = 1 + max_rows(r) * h;
    // (slot, word of the row) of each (token, k).
    let mut at: Vec<Option<(usize, usize)>> = vec![None; bs * r.k];
    for o in 0..r.world {
        let slot = &gathered[o * slot_bytes..(o + 1) * slot_bytes];
        let rows = get(slot, 0) as usize;
        for i in 0..rows {
            let (src, tok, j) = (
                get(slot, ao + 3 * i) as usize,
                get(slot, ao + 3 * i + 1) as usize,
                get(slot, ao + 3 * i + 2) as usize,
            );
            if src != r.rank {
                continue;
            }
            if tok >= bs || j >= r.k {
                return Err(format!(
                    "assistInfoForCombine of rank {o} names token {tok}, k {j} of this rank, \
                     which has {bs} tokens of K = {}: pass the dispatch's outputs",
                    r.k
                ));
            }
            at[tok * r.k + j] = Some((o, 1 + i * h));
        }
    }
    let mut out: Vec<f32> = match shared {
        Some(v) => load(v, DType::F32)?,
        None => vec![0f32; bs * h],
    };
    let mut acc = vec![0f32; h];
    for t in 0..bs {
        acc.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..r.k {
            if let Some((o, w)) = at[t * r.k + j] {
                let slot = &gathered[o * slot_bytes..(o + 1) * slot_bytes];
                let s = sc[t * r.k + j];
                for (c, a) in acc.iter_mut().enumerate() {
                    *a += s * f32::from_bits(get(slot, w + c));
                }
            }
        }
        for (c, a) in acc.iter().enumerate() {
            out[t * h + c] += a;
        }
    }
    store(out, DType::F32, x)
}
