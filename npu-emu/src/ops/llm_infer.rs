//! The inference helpers of large-model serving that torch_npu calls (engine of
//! `libascendcl/aclnn/src/ops/llm_infer.rs`): rotary embedding with a rotation matrix
//! (`aclnnRotaryPositionEmbeddingV2`), rotary embedding from a cos/sin cache gathered by
//! position, in RoPE and multimodal MRoPE forms (`aclnnRopeWithSinCosCache`, `…V2`).
//!
//! Every kernel reads dense f64 copies (one conversion, no rounding on the way) and stores
//! each result with one rounding into the output's dtype.

use super::dtype::DType;
use super::iter;
use super::view::View;

/// Dense row-major copy of `v` as `T` (of dtype `dt`).
fn load_t<T: Default + Clone>(v: &View, dt: DType) -> Result<Vec<T>, String> {
    let mut buf = vec![T::default(); v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, dt, &v.shape))?;
    }
    Ok(buf)
}

fn load(v: &View) -> Result<Vec<f64>, String> {
    load_t(v, DType::F64)
}

fn load_i64(v: &View) -> Result<Vec<i64>, String> {
    load_t(v, DType::I64)
}

/// `v` expanded to `shape` and copied densely.
fn load_as(v: &View, shape: &[usize]) -> Result<Vec<f64>, String> {
    let e = v
        .expand(shape)
        .ok_or_else(|| format!("shape {:?} does not broadcast to {shape:?}", v.shape))?;
    load(&e)
}

/// Store the dense row-major `buf` (the shape of `out`) into `out`, rounding once.
fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let shape = out.shape.clone();
    iter::copy(&View::of_slice(&mut buf, DType::F64, &shape), out)
}

// ---------------------------------------------------------------- rotary embedding

/// `out = x·cos + (x @ rotate)·sin` over the last dimension D (`rotate` is [D, D]), cos/sin
/// broadcast to x (`aclnnRotaryPositionEmbeddingV2` with a rotation matrix).
pub fn rope_rotate(
    x: &View,
    cos: &View,
    sin: &View,
    rotate: &View,
    out: &View,
) -> Result<(), String> {
    let xs = load(x)?;
    let c = load_as(cos, &x.shape)?;
    let s = load_as(sin, &x.shape)?;
    let r = load(rotate)?;
    let d = *x.shape.last().unwrap_or(&1);
    if d == 0 || xs.is_empty() {
        return Ok(());
    }
    let mut y = vec![0f64; xs.len()];
    for row in 0..xs.len() / d {
        let o = row * d;
        let xr = &xs[o..o + d];
        for j in 0..d {
            let rot: f64 = (0..d).map(|k| xr[k] * r[k * d + j]).sum();
            y[o + j] = xr[j] * c[o + j] + rot * s[o + j];
        }
    }
    store(y, out)
}

/// The arguments of [`rope_with_sin_cos_cache`].
#[derive(Clone, Debug)]
pub struct SinCosCache {
    /// Elements of each head.
    pub head_size: usize,
    /// The rotated prefix of each head (the cache's last dimension).
    pub rotary_dim: usize,
    /// GPT-NeoX (rotate-half) form; otherwise GPT-J (interleaved).
    pub neox: bool,
    /// MRoPE sections (positions has one row per section); empty for RoPE.
    pub sections: Vec<usize>,
    /// 0: cos/sin of each section from its own position row; 1: interleaved (Qwen3-VL):
    /// element j takes row 1 when j % 3 == 1 and j < 3·sections[1], row 2 when j % 3 == 2
    /// and j < 3·sections[2], row 0 otherwise.
    pub cache_mode: i64,
}

/// Which position row element `j` of the half rotary dimension takes its cos/sin from.
fn mrope_row(p: &SinCosCache, j: usize) -> usize {
    if p.sections.is_empty() {
        return 0;
    }
    if p.cache_mode == 1 {
        for t in 1..p.sections.len().min(3) {
            if j % 3 == t && j < 3 * p.sections[t] {
                return t;
            }
        }
        return 0;
    }
    let mut acc = 0;
    for (t, &n) in p.sections.iter().enumerate() {
        acc += n;
        if j < acc {
            return t;
        }
    }
    p.sections.len() - 1
}

/// Rotate one tensor ([tokens, heads·head_size]) in place in `buf`, with the gathered
/// `cos`/`sin` ([tokens, rotary_dim / 2]).
fn rotate_heads(p: &SinCosCache, buf: &mut [f64], width: usize, cos: &[f64], sin: &[f64]) {
    let half = p.rotary_dim / 2;
    let tokens = buf.len().checked_div(width).unwrap_or(0);
    for t in 0..tokens {
        let (c, s) = (
            &cos[t * half..(t + 1) * half],
            &sin[t * half..(t + 1) * half],
        );
        for h in 0..width / p.head_size {
            let base = t * width + h * p.head_size;
            let x = &mut buf[base..base + p.rotary_dim];
            for i in 0..half {
                let (a, b) = if p.neox {
                    (i, i + half)
                } else {
                    (2 * i, 2 * i + 1)
                };
                let (x1, x2) = (x[a], x[b]);
                x[a] = x1 * c[i] - x2 * s[i];
                x[b] = x2 * c[i] + x1 * s[i];
            }
        }
    }
}

/// `aclnnRopeWithSinCosCache`(V2): cos and sin of each token gathered from `cache`
/// ([maxSeqLen, rotary_dim], cos in the first half of a row and sin in the second) at its
/// position (`positions` [tokens], or [sections, tokens] for MRoPE), then the first
/// `rotary_dim` elements of every head of `query` and `key` rotated; the rest pass through.
#[allow(clippy::too_many_arguments)]
pub fn rope_with_sin_cos_cache(
    positions: &View,
    query: &View,
    key: &View,
    cache: &View,
    p: &SinCosCache,
    qout: &View,
    kout: &View,
) -> Result<(), String> {
    let pos = load_i64(positions)?;
    let cs = load(cache)?;
    let max_seq = cache.shape[0];
    let rd = p.rotary_dim;
    let half = rd / 2;
    let tokens = query.shape[0];
    let (mut cos, mut sin) = (vec![0f64; tokens * half], vec![0f64; tokens * half]);
    for t in 0..tokens {
        for j in 0..half {
            let row = mrope_row(p, j);
            let at = pos[row * tokens + t];
            if at < 0 || at as usize >= max_seq {
                return Err(format!(
                    "positions[{row}, {t}] = {at} is outside the cache's {max_seq} rows"
                ));
            }
            let c = at as usize * rd;
            cos[t * half + j] = cs[c + j];
            sin[t * half + j] = cs[c + half + j];
        }
    }
    for (x, o) in [(query, qout), (key, kout)] {
        let mut buf = load(x)?;
        rotate_heads(p, &mut buf, x.shape[1], &cos, &sin);
        store(buf, o)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- paged KV caches

/// Where token slot `(block, pos)` element `e` (of `width` per token) lives in a paged cache
/// of shape `cache`: "Norm" `[blocks, block_size, …]` holds a token's elements together;
/// "PA_NZ" `[blocks, width / last, block_size, last]` holds them in `last`-wide columns.
fn pa_index(cache: &[usize], nz: bool, block: usize, pos: usize, e: usize, width: usize) -> usize {
    let bs = if nz { cache[2] } else { cache[1] };
    if nz {
        let last = cache[3];
        let cols = cache[1];
        ((block * cols + e / last) * bs + pos) * last + e % last
    } else {
        (block * bs + pos) * width + e
    }
}

/// `aclnnScatterPaKvCache` for one tensor: token `i` of `x` ([tokens, …]) written to slot
/// `slots[i]` (block `slot / block_size`, position `slot % block_size`) of `cache`.
pub fn scatter_pa(x: &View, slots: &View, cache: &View, nz: bool) -> Result<(), String> {
    let xs = load(x)?;
    let sl = load_i64(slots)?;
    let mut c = load(cache)?;
    let tokens = x.shape[0];
    let width = xs.len().checked_div(tokens).unwrap_or(0);
    let bs = if nz { cache.shape[2] } else { cache.shape[1] };
    let total = cache.shape[0] * bs;
    for (i, &s) in sl.iter().enumerate().take(tokens) {
        if s < 0 || s as usize >= total {
            return Err(format!(
                "slotMapping[{i}] = {s} is outside the cache's {total} slots"
            ));
        }
        let (b, p) = (s as usize / bs, s as usize % bs);
        for e in 0..width {
            c[pa_index(&cache.shape, nz, b, p, e, width)] = xs[i * width + e];
        }
    }
    store(c, cache)
}

/// `aclnnGatherPaKvCache` for one tensor: the tokens of every batch gathered from the
/// blocks `block_tables[b]` lists (starting `seq_offset[b] / block_size` blocks in) into
/// consecutive rows of `out`. `seq_lens` holds lengths, or their running sum from 0 when
/// `cumsum`.
pub fn gather_pa(
    cache: &View,
    block_tables: &View,
    seq_lens: &View,
    seq_offset: Option<&View>,
    cumsum: bool,
    nz: bool,
    out: &View,
) -> Result<(), String> {
    let c = load(cache)?;
    let bt = load_i64(block_tables)?;
    let sl = load_i64(seq_lens)?;
    let off = match seq_offset {
        Some(v) => Some(load_i64(v)?),
        None => None,
    };
    let mut o = load(out)?;
    let rows = out.shape[0];
    let width = o.len().checked_div(rows).unwrap_or(0);
    let bs = if nz { cache.shape[2] } else { cache.shape[1] };
    let (batch, per) = (block_tables.shape[0], block_tables.shape[1]);
    let mut row = 0usize;
    for b in 0..batch {
        let len = if cumsum { sl[b + 1] - sl[b] } else { sl[b] };
        if len < 0 {
            return Err(format!("seqLens gives batch {b} a negative length {len}"));
        }
        let first = off.as_ref().map_or(0, |o| o[b].max(0) as usize / bs);
        for t in 0..len as usize {
            let j = first + t / bs;
            if j >= per {
                return Err(format!(
                    "batch {b} token {t} needs blockTables[{b}][{j}], past its {per} entries"
                ));
            }
            let blk = bt[b * per + j];
            if blk < 0 || blk as usize >= cache.shape[0] {
                return Err(format!(
                    "blockTables[{b}][{j}] = {blk} is outside the cache's {} blocks",
                    cache.shape[0]
                ));
            }
            if row >= rows {
                return Err(format!(
                    "seqLens holds more tokens than the output's {rows} rows"
                ));
            }
            for e in 0..width {
                o[row * width + e] = c[pa_index(&cache.shape, nz, blk as usize, t % bs, e, width)];
            }
            row += 1;
        }
    }
    store(o, out)
}

// ---------------------------------------------------------------- sampling

/// `aclnnTopKTopPSample` row by row of `logits` [batch, V]: the top `top_k[b]` logits
/// (stable: ties to the lower index; skipped unless 1 ≤ k ≤ min(V, 1024)), then top-p over
/// their softmax in descending order (a token is dropped when the probability before it
/// exceeds `top_p[b]`; skipped when p ≥ 1), then the sample: with `q`, the argmax of
/// `softmax(kept) / (q + eps)`, otherwise the largest kept logit. `select` gets the index;
/// `kept` (when given) the kept logits in place and -inf elsewhere.
pub fn top_k_top_p_sample(
    logits: &View,
    top_k: &View,
    top_p: &View,
    q: Option<&View>,
    eps: f64,
    select: &View,
    kept: Option<&View>,
) -> Result<(), String> {
    let x = load(logits)?;
    let ks = load_i64(top_k)?;
    let ps = load(top_p)?;
    let qs = match q {
        Some(v) => Some(load(v)?),
        None => None,
    };
    let (batch, v) = (logits.shape[0], logits.shape[1]);
    let mut sel = vec![0i64; batch];
    let mut out = vec![f64::NEG_INFINITY; batch * v];
    for b in 0..batch {
        let row = &x[b * v..(b + 1) * v];
        let mut order: Vec<usize> = (0..v).collect();
        order.sort_by(|&i, &j| row[j].total_cmp(&row[i]).then(i.cmp(&j)));
        let k = ks[b];
        if k >= 1 && k as usize <= v.min(1024) {
            order.truncate(k as usize);
        }
        let p = ps[b];
        if p < 1.0 {
            let m = row[order[0]];
            let e: Vec<f64> = order.iter().map(|&i| (row[i] - m).exp()).collect();
            let sum: f64 = e.iter().sum();
            let mut before = 0.0;
            let mut n = 0;
            for ei in &e {
                if before > p {
                    break;
                }
                before += ei / sum;
                n += 1;
            }
            order.truncate(n.max(1));
        }
        let pick = match &qs {
            Some(qv) => {
                let m = row[order[0]];
                let sum: f64 = order.iter().map(|&i| (row[i] - m).exp()).sum();
                let mut best = (f64::NEG_INFINITY, order[0]);
                for &i in &order {
                    let s = (row[i] - m).exp() / sum / (qv[b * v + i] + eps);
                    if s > best.0 {
                        best = (s, i);
                    }
                }
                best.1
            }
            None => order[0],
        };
        sel[b] = pick as i64;
        for &i in &order {
            out[b * v + i] = row[i];
        }
    }
    let mut s = sel;
    iter::copy(&View::of_slice(&mut s, DType::I64, &select.shape), select)?;
    if let Some(k) = kept {
        store(out, k)?;
    }
    Ok(())
}
