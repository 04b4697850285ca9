//! Native sparse attention, the selected-attention branch: `aclnnNsaSelectedAttention` and
//! `…Grad` (torch_npu's `npu_nsa_select_attention(_grad)`), layout TND.
//!
//! Query row `i` of sequence `b`, head `n` (key/value head `n / G`) attends to the
//! `count` blocks of `block` keys that `topk[i, n / G, :]` names (block `c` holds the
//! sequence's key rows `c·block .. (c+1)·block`), in order: with `s_j = scale · q·k_j`,
//! `out = Σ_j e^(s_j - m) v_j / Σ_j e^(s_j - m)`. The statistics are `m` and the sum per
//! row, 8 equal copies each (`[T_q, N_q, 8]`, float32), as the flash-attention kernels
//! store them. With the causal mask (sparse mode 2) a key row `p > i` of the sequence takes no part,
//! with an explicit one (sparse mode 0) each `p` that `mask[i, p]` marks (or that lies outside it); a row
//! with no key left gets out 0, max -inf and sum 0. Everything is accumulated in f64.

use super::dtype::DType;
use super::iter;
use super::view::View;

fn load(v: &View) -> Result<Vec<f64>, String> {
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok(buf)
}

fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let shape = out.shape.clone();
    iter::copy(&View::of_slice(&mut buf, DType::F64, &shape), out)
}

/// The attributes of a selected-attention call.
#[derive(Clone, Debug)]
pub struct NsaSelect {
    /// Cumulative query ends, one per sequence.
    pub q_ends: Vec<usize>,
    /// Cumulative key/value ends, one per sequence.
    pub kv_ends: Vec<usize>,
    pub scale: f64,
    pub block: usize,
    pub count: usize,
    /// The causal mask (`p > i` excluded) is on (sparse mode 2 with a mask).
    pub causal: bool,
}

/// An explicit mask (sparse mode 0): `true` excludes key row `p` from query row `i` of every
/// sequence, read at `[i, p]` of a `[rows, cols]` matrix.
#[derive(Clone, Copy)]
pub struct Mask<'a> {
    pub view: &'a View,
}

/// Dimensions: query heads, key/value heads, query/key head dim, value head dim.
struct Dims {
    nq: usize,
    nkv: usize,
    dk: usize,
    dv: usize,
}

/// Each query row's selected key rows (absolute in key/value), by `(row, query head)`.
fn selected(
    p: &NsaSelect,
    topk: &[f64],
    mask: Option<Mask>,
    d: &Dims,
) -> Result<Vec<Vec<usize>>, String> {
    let mask = match mask {
        Some(m) => Some((load(m.view)?, m.view.shape[0], m.view.shape[1])),
        None => None,
    };
    let g = d.nq / d.nkv;
    let mut rows = Vec::new();
    let (mut q0, mut k0) = (0, 0);
    for (&qe, &ke) in p.q_ends.iter().zip(&p.kv_ends) {
        let skv = ke - k0;
        for i in 0..qe - q0 {
            let t = q0 + i;
            for n in 0..d.nq {
                let mut keys = Vec::with_capacity(p.count * p.block);
                for c in 0..p.count {
                    let idx = topk[(t * d.nkv + n / g) * p.count + c];
                    if idx < 0.0 || (idx as usize + 1) * p.block > skv {
                        return Err(format!(
                            "topkIndices[{t}, {}, {c}] = {idx} names no block of the \
                             sequence's {skv} key rows (block size {})",
                            n / g,
                            p.block
                        ));
                    }
                    for j in 0..p.block {
                        let pos = idx as usize * p.block + j;
                        let masked = match &mask {
                            Some((mv, mr, mc)) => i >= *mr || pos >= *mc || mv[i * mc + pos] != 0.0,
                            None => p.causal && pos > i,
                        };
                        if !masked {
                            keys.push(k0 + pos);
                        }
                    }
                }
                rows.push(keys);
            }
        }
        (q0, k0) = (qe, ke);
    }
    Ok(rows)
}

fn dims(q: &View, k: &View, v: &View) -> Dims {
    Dims {
        nq: q.shape[1],
        nkv: k.shape[1],
        dk: q.shape[2],
        dv: v.shape[2],
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `aclnnNsaSelectedAttention`: q `[T_q, N_q, D]`, k `[T_kv, N_kv, D]`, v `[T_kv, N_kv, D_v]`,
/// topk `[T_q, N_kv, count]` (int32); writes softmax max/sum `[T_q, N_q, 8]` and out
/// `[T_q, N_q, D_v]`.
#[allow(clippy::too_many_arguments)]
pub fn nsa_select_attention(
    q: &View,
    k: &View,
    v: &View,
    topk: &View,
    mask: Option<Mask>,
    p: &NsaSelect,
    smax: &View,
    ssum: &View,
    out: &View,
) -> Result<(), String> {
    let d = dims(q, k, v);
    let (qs, ks, vs, tk) = (load(q)?, load(k)?, load(v)?, load(topk)?);
    let sel = selected(p, &tk, mask, &d)?;
    let mut o = vec![0f64; out.numel()];
    let (mut mx, mut sm) = (vec![0f64; smax.numel()], vec![0f64; ssum.numel()]);
    for (r, keys) in sel.iter().enumerate() {
        let (t, n) = (r / d.nq, r % d.nq);
        let kh = n / (d.nq / d.nkv);
        let qr = &qs[r * d.dk..(r + 1) * d.dk];
        let s: Vec<f64> = keys
            .iter()
            .map(|&j| p.scale * dot(qr, &ks[(j * d.nkv + kh) * d.dk..][..d.dk]))
            .collect();
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut sum = 0.0;
        let orow = &mut o[(t * d.nq + n) * d.dv..][..d.dv];
        for (&j, &sj) in keys.iter().zip(&s) {
            let e = (sj - m).exp();
            sum += e;
            let vr = &vs[(j * d.nkv + kh) * d.dv..][..d.dv];
            for (oc, vc) in orow.iter_mut().zip(vr) {
                *oc += e * vc;
            }
        }
        if sum > 0.0 {
            orow.iter_mut().for_each(|x| *x /= sum);
        }
        mx[r * 8..r * 8 + 8].fill(m);
        sm[r * 8..r * 8 + 8].fill(sum);
    }
    store(mx, smax)?;
    store(sm, ssum)?;
    store(o, out)
}

/// `aclnnNsaSelectedAttentionGrad`: from the saved out and statistics,
/// `P = e^(s - max) / sum`, `D = rowsum(dO ⊙ O)`, `dS = P (dO·v - D)`;
/// `dq = scale Σ dS k`, `dk += scale dS q`, `dv += P dO` over every selection.
#[allow(clippy::too_many_arguments)]
pub fn nsa_select_attention_grad(
    qkv: [&View; 3],
    out: &View,
    dout: &View,
    smax: &View,
    ssum: &View,
    topk: &View,
    mask: Option<Mask>,
    p: &NsaSelect,
    grads: [&View; 3],
) -> Result<(), String> {
    let [q, k, v] = qkv;
    let d = dims(q, k, v);
    let (qs, ks, vs, tk) = (load(q)?, load(k)?, load(v)?, load(topk)?);
    let (o, g, mx, sm) = (load(out)?, load(dout)?, load(smax)?, load(ssum)?);
    let sel = selected(p, &tk, mask, &d)?;
    let (mut dq, mut dk, mut dv) = (
        vec![0f64; qs.len()],
        vec![0f64; ks.len()],
        vec![0f64; vs.len()],
    );
    for (r, keys) in sel.iter().enumerate() {
        let (m, sum) = (mx[r * 8], sm[r * 8]);
        if sum <= 0.0 || keys.is_empty() {
            continue;
        }
        let kh = (r % d.nq) / (d.nq / d.nkv);
        let qr = &qs[r * d.dk..(r + 1) * d.dk];
        let gr = &g[r * d.dv..(r + 1) * d.dv];
        let dd = dot(gr, &o[r * d.dv..(r + 1) * d.dv]);
        for &j in keys {
            let ko = (j * d.nkv + kh) * d.dk;
            let vo = (j * d.nkv + kh) * d.dv;
            let pj = (p.scale * dot(qr, &ks[ko..ko + d.dk]) - m).exp() / sum;
            let dp = dot(gr, &vs[vo..vo + d.dv]);
            let ds = pj * (dp - dd) * p.scale;
            for c in 0..d.dk {
                dq[r * d.dk + c] += ds * ks[ko + c];
                dk[ko + c] += ds * qr[c];
            }
            for c in 0..d.dv {
                dv[vo + c] += pj * gr[c];
            }
        }
    }
    let [gq, gk, gv] = grads;
    store(dq, gq)?;
    store(dk, gk)?;
    store(dv, gv)
}

// ---------------------------------------------------------------- inference (paged)

/// The attributes of `aclnnNsaSelectedAttentionInfer`, every layout flattened: query and
/// output as `[rows, N_q, D]` (BSND/BSH: row `b·S + s`; TND: the packed row), topk as
/// `[rows, N_kv, count]`, key/value caches as `[blocks · pageBlockSize, N_kv, D]`.
#[derive(Clone, Debug)]
pub struct NsaInfer {
    /// The batch of each query row.
    pub row_batch: Vec<usize>,
    /// Key/value length of each batch.
    pub kv_lens: Vec<usize>,
    pub nq: usize,
    pub nkv: usize,
    pub scale: f64,
    pub block: usize,
    pub count: usize,
    pub page: usize,
    /// Block-table columns (blocks a batch may hold).
    pub table_cols: usize,
}

/// `aclnnNsaSelectedAttentionInfer`: row `r` (batch `b`), head `n` attends to the key rows
/// `c·block .. min((c+1)·block, kv_len[b])` of each block index `c ≥ 0` of
/// `topk[r, n / G, :]` (-1 pads), key row `p` read from cache block `table[b, p / page]`,
/// row `p % page`; `out = softmax(scale · q·kᵀ) v`, 0 for a row without keys.
#[allow(clippy::too_many_arguments)]
pub fn nsa_select_attention_infer(
    q: &View,
    k: &View,
    v: &View,
    topk: &View,
    table: &View,
    p: &NsaInfer,
    out: &View,
) -> Result<(), String> {
    let (qs, ks, vs, tk, tb) = (load(q)?, load(k)?, load(v)?, load(topk)?, load(table)?);
    let rows = p.row_batch.len();
    let dk = qs.len() / (rows * p.nq).max(1);
    let dv = out.numel() / (rows * p.nq).max(1);
    let cache_rows = ks.len() / (p.nkv * dk).max(1);
    let g = p.nq / p.nkv;
    let mut o = vec![0f64; out.numel()];
    for (r, &b) in p.row_batch.iter().enumerate() {
        let len = p.kv_lens[b];
        for n in 0..p.nq {
            let h = n / g;
            let mut keys = Vec::new();
            for c in 0..p.count {
                let idx = tk[(r * p.nkv + h) * p.count + c];
                if idx < 0.0 {
                    continue;
                }
                let idx = idx as usize;
                if idx * p.block >= len {
                    return Err(format!(
                        "topkIndices of row {r}, kv head {h} names block {idx}; batch {b} holds \
                         {len} key rows (select block size {})",
                        p.block
                    ));
                }
                for pos in idx * p.block..((idx + 1) * p.block).min(len) {
                    let col = pos / p.page;
                    let blk = tb[b * p.table_cols + col];
                    let row = blk as usize * p.page + pos % p.page;
                    if blk < 0.0 || row >= cache_rows {
                        return Err(format!(
                            "blockTableOptional[{b}, {col}] = {blk} names no block of the \
                             key/value cache"
                        ));
                    }
                    keys.push(row);
                }
            }
            let qr = &qs[(r * p.nq + n) * dk..][..dk];
            let s: Vec<f64> = keys
                .iter()
                .map(|&j| p.scale * dot(qr, &ks[(j * p.nkv + h) * dk..][..dk]))
                .collect();
            let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let orow = &mut o[(r * p.nq + n) * dv..][..dv];
            let mut sum = 0.0;
            for (&j, &sj) in keys.iter().zip(&s) {
                let e = (sj - m).exp();
                sum += e;
                for (oc, vc) in orow.iter_mut().zip(&vs[(j * p.nkv + h) * dv..][..dv]) {
                    *oc += e * vc;
                }
            }
            if sum > 0.0 {
                orow.iter_mut().for_each(|x| *x /= sum);
            }
        }
    }
    store(o, out)
}
