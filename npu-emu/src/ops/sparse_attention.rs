//! DeepSeek-V3.2-style sparse attention: `aclnnLightningIndexer` (torch_npu's
//! `npu_lightning_indexer`) picks, for every query token, the `sparseCount` key positions of
//! highest index score, and `aclnnSparseFlashAttention` (`npu_sparse_flash_attention`)
//! attends to exactly those positions (or blocks of `sparseBlockSize` positions).
//!
//! Layouts: the query is BSND `[B, S1, N1, D]` or TND `[T1, N1, D]`; the key (and value)
//! BSND `[B, S2, N2, D]`, TND `[T2, N2, D]` or the paged PA_BSND `[blockNum, blockSize, N2,
//! D]` read through a block table `[B, maxBlocks]`. Actual lengths come from INT32 device
//! tensors read when the task runs: per batch for BSND, cumulative for TND, required for a
//! paged cache (per batch). Every key source is seen as rows `[R, N2, D]`; [`KvRows`] maps a
//! batch's position to its row.
//!
//! Sparse mode 3 is CANN's right-down causal mask: query row `i` of a batch with `s1` valid
//! query rows and `s2` valid keys sees the positions `p ≤ s2 - s1 + i`; mode 0 sees all `s2`.
//! Everything is accumulated in f64 and rounded once into the outputs.

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

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The query's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QLayout {
    Bsnd,
    Tnd,
}

/// The key's (and value's) layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvLayout {
    Bsnd,
    Tnd,
    PaBsnd,
}

impl QLayout {
    pub fn parse(s: &str) -> Option<QLayout> {
        match s {
            "BSND" => Some(QLayout::Bsnd),
            "TND" => Some(QLayout::Tnd),
            _ => None,
        }
    }
}

impl KvLayout {
    pub fn parse(s: &str) -> Option<KvLayout> {
        match s {
            "BSND" => Some(KvLayout::Bsnd),
            "TND" => Some(KvLayout::Tnd),
            "PA_BSND" => Some(KvLayout::PaBsnd),
            _ => None,
        }
    }
}

/// The device tensors that locate each batch's query rows and key positions.
#[derive(Clone, Copy)]
pub struct Seqs<'a> {
    pub q_layout: QLayout,
    pub kv_layout: KvLayout,
    /// `actualSeqLengthsQuery`: INT32 `[B]` (cumulative for TND).
    pub act_q: Option<&'a View>,
    /// `actualSeqLengths{Key,Kv}`: INT32 `[B]` (cumulative for TND).
    pub act_kv: Option<&'a View>,
    /// `blockTable`: INT32 `[B, maxBlocks]` (PA_BSND).
    pub table: Option<&'a View>,
}

/// One batch: its query tokens (flat rows of the query seen as `[rows, N1, D]`) and the key
/// rows of its valid positions (flat rows of the key seen as `[R, N2, D]`).
struct Batch {
    q_rows: Vec<usize>,
    kv_rows: Vec<usize>,
}

/// Resolve the batches of a call. `q_shape` and `kv_shape` are the query's and key's shapes.
fn batches(s: &Seqs, q_shape: &[usize], kv_shape: &[usize]) -> Result<Vec<Batch>, String> {
    let act_q = s.act_q.map(load).transpose()?;
    let act_kv = s.act_kv.map(load).transpose()?;
    let b = match s.q_layout {
        QLayout::Bsnd => q_shape[0],
        QLayout::Tnd => act_q.as_ref().map_or(0, |v| v.len()),
    };
    let mut out = Vec::with_capacity(b);
    let (mut q0, mut k0) = (0usize, 0usize);
    let table = s
        .table
        .map(|t| load(t).map(|v| (v, t.shape[1])))
        .transpose()?;
    for bi in 0..b {
        // Query rows.
        let q_rows: Vec<usize> = match s.q_layout {
            QLayout::Bsnd => {
                let s1 = q_shape[1];
                let n = match &act_q {
                    Some(v) => v.get(bi).copied().unwrap_or(s1 as f64),
                    None => s1 as f64,
                };
                if n < 0.0 || n as usize > s1 {
                    return Err(format!(
                        "actualSeqLengthsQuery[{bi}] = {n} is outside [0, S1 = {s1}]"
                    ));
                }
                (bi * s1..bi * s1 + n as usize).collect()
            }
            QLayout::Tnd => {
                let e = act_q.as_ref().map_or(0.0, |v| v[bi]);
                if e < q0 as f64 || e as usize > q_shape[0] {
                    return Err(format!(
                        "actualSeqLengthsQuery[{bi}] = {e}: the cumulative lengths must not \
                         decrease and stay within T1 = {}",
                        q_shape[0]
                    ));
                }
                let r = (q0..e as usize).collect();
                q0 = e as usize;
                r
            }
        };
        // Key rows.
        let kv_rows: Vec<usize> = match s.kv_layout {
            KvLayout::Bsnd => {
                let s2 = kv_shape[1];
                let n = match &act_kv {
                    Some(v) => v.get(bi).copied().unwrap_or(s2 as f64),
                    None => s2 as f64,
                };
                if n < 0.0 || n as usize > s2 {
                    return Err(format!(
                        "actualSeqLengthsKv[{bi}] = {n} is outside [0, S2 = {s2}]"
                    ));
                }
                (bi * s2..bi * s2 + n as usize).collect()
            }
            KvLayout::Tnd => {
                let e = act_kv
                    .as_ref()
                    .and_then(|v| v.get(bi).copied())
                    .unwrap_or(0.0);
                if e < k0 as f64 || e as usize > kv_shape[0] {
                    return Err(format!(
                        "actualSeqLengthsKv[{bi}] = {e}: the cumulative lengths must not \
                         decrease and stay within T2 = {}",
                        kv_shape[0]
                    ));
                }
                let r = (k0..e as usize).collect();
                k0 = e as usize;
                r
            }
            KvLayout::PaBsnd => {
                let (t, cols) = table.as_ref().ok_or("PA_BSND needs the block table")?;
                let (nblocks, bs) = (kv_shape[0], kv_shape[1]);
                let n = act_kv
                    .as_ref()
                    .and_then(|v| v.get(bi).copied())
                    .unwrap_or(0.0);
                if n < 0.0 || (n as usize).div_ceil(bs) > *cols {
                    return Err(format!(
                        "actualSeqLengthsKv[{bi}] = {n} needs more than the block table's \
                         {cols} blocks of {bs}"
                    ));
                }
                let mut r = Vec::with_capacity(n as usize);
                for p in 0..n as usize {
                    let blk = t[bi * cols + p / bs];
                    if blk < 0.0 || blk as usize >= nblocks {
                        return Err(format!(
                            "blockTable[{bi}, {}] = {blk} names no block of the cache's {nblocks}",
                            p / bs
                        ));
                    }
                    r.push(blk as usize * bs + p % bs);
                }
                r
            }
        };
        out.push(Batch { q_rows, kv_rows });
    }
    Ok(out)
}

/// The highest position query row `i` (of `s1`) may see among `s2` keys, plus one.
fn visible(sparse_mode: i64, s1: usize, s2: usize, i: usize) -> usize {
    if sparse_mode == 3 {
        (s2 as i64 - s1 as i64 + i as i64 + 1).clamp(0, s2 as i64) as usize
    } else {
        s2
    }
}

/// `aclnnLightningIndexer`: query `[.., N1, D]`, key `[.., N2, D]`, weights `[.., N1]`;
/// writes indices (INT32 `[.., N2, count]`) and, when given, the scores at them.
///
/// For query token `t` and key head `h`, the score of position `p` is
/// `Σ_{n in group h} w[t, n] · relu(q[t, n] · k[p, h])`; the `count` visible positions of
/// highest score in descending order (ties to the lower position) fill the row, `-1` (and a
/// value of 0) the rest, and rows past a batch's valid query tokens are all `-1`.
#[allow(clippy::too_many_arguments)]
pub fn lightning_indexer(
    q: &View,
    k: &View,
    w: &View,
    seqs: &Seqs,
    count: usize,
    sparse_mode: i64,
    idx_out: &View,
    val_out: Option<&View>,
) -> Result<(), String> {
    let nd = q.shape.len();
    let (n1, d) = (q.shape[nd - 2], q.shape[nd - 1]);
    let n2 = k.shape[k.shape.len() - 2];
    let g = n1 / n2;
    let bs = batches(seqs, &q.shape, &k.shape)?;
    let (qs, ks, ws) = (load(q)?, load(k)?, load(w)?);
    let rows = q.numel() / (n1 * d);
    let mut idx = vec![-1f64; rows * n2 * count];
    let mut val = vec![0f64; rows * n2 * count];
    for b in &bs {
        let (s1, s2) = (b.q_rows.len(), b.kv_rows.len());
        for (i, &t) in b.q_rows.iter().enumerate() {
            let vis = visible(sparse_mode, s1, s2, i);
            for h in 0..n2 {
                let mut sc: Vec<(f64, usize)> = (0..vis)
                    .map(|p| {
                        let kr = &ks[(b.kv_rows[p] * n2 + h) * d..][..d];
                        let s = (h * g..(h + 1) * g)
                            .map(|n| {
                                ws[t * n1 + n] * dot(&qs[(t * n1 + n) * d..][..d], kr).max(0.0)
                            })
                            .sum();
                        (s, p)
                    })
                    .collect();
                sc.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                let base = (t * n2 + h) * count;
                for (j, &(s, p)) in sc.iter().take(count).enumerate() {
                    idx[base + j] = p as f64;
                    val[base + j] = s;
                }
            }
        }
    }
    store(idx, idx_out)?;
    if let Some(v) = val_out {
        store(val, v)?;
    }
    Ok(())
}

/// The attributes of a sparse flash attention call.
#[derive(Clone, Copy, Debug)]
pub struct Sfa {
    pub scale: f64,
    pub sparse_block: usize,
    pub sparse_mode: i64,
}

/// `aclnnSparseFlashAttention`: query `[.., N1, D]`, key/value `[.., N2, D]`, sparse indices
/// `[.., N2, K]` (INT32), the MLA rope parts `[.., N1, Dr]` / `[.., N2, Dr]` when given.
///
/// Query token `t`, head `n` (key head `h = n / G`) attends to the positions
/// `c·block .. (c+1)·block` for each index `c ≥ 0` of `indices[t, h, :]`, those that are valid
/// (below the batch's key length) and visible (sparse mode 3); with
/// `s_p = scale · (q·k_p + q_rope·k_rope_p)`, `out = Σ_p e^(s_p - m) v_p / Σ_p e^(s_p - m)`.
/// Negative indices are skipped. `stats` receives `m` and the sum in `[B, N2, S1, G]` (BSND)
/// or `[N2, T1, G]` (TND); a row with no position gets out 0, max -inf, sum 0.
#[allow(clippy::too_many_arguments)]
pub fn sparse_flash_attention(
    q: &View,
    k: &View,
    v: &View,
    indices: &View,
    rope: Option<(&View, &View)>,
    seqs: &Seqs,
    p: &Sfa,
    out: &View,
    stats: Option<(&View, &View)>,
) -> Result<(), String> {
    let nd = q.shape.len();
    let (n1, d) = (q.shape[nd - 2], q.shape[nd - 1]);
    let n2 = k.shape[k.shape.len() - 2];
    let dv = v.shape[v.shape.len() - 1];
    let g = n1 / n2;
    let kc = indices.shape[indices.shape.len() - 1];
    let bs = batches(seqs, &q.shape, &k.shape)?;
    let (qs, ks, vs, ix) = (load(q)?, load(k)?, load(v)?, load(indices)?);
    let (qr, kr, dr) = match rope {
        Some((a, b)) => (load(a)?, load(b)?, a.shape[a.shape.len() - 1]),
        None => (Vec::new(), Vec::new(), 0),
    };
    let rows = q.numel() / (n1 * d);
    let mut o = vec![0f64; rows * n1 * dv];
    let mut mx = vec![f64::NEG_INFINITY; rows * n1];
    let mut sm = vec![0f64; rows * n1];
    for b in &bs {
        let (s1, s2) = (b.q_rows.len(), b.kv_rows.len());
        for (i, &t) in b.q_rows.iter().enumerate() {
            let vis = visible(p.sparse_mode, s1, s2, i);
            for h in 0..n2 {
                let mut pos = Vec::new();
                for c in 0..kc {
                    let x = ix[(t * n2 + h) * kc + c];
                    if x < 0.0 {
                        continue;
                    }
                    let start = x as usize * p.sparse_block;
                    for q in start..(start + p.sparse_block).min(vis) {
                        pos.push(b.kv_rows[q]);
                    }
                }
                for n in h * g..(h + 1) * g {
                    let qv = &qs[(t * n1 + n) * d..][..d];
                    let sc: Vec<f64> = pos
                        .iter()
                        .map(|&r| {
                            let mut s = dot(qv, &ks[(r * n2 + h) * d..][..d]);
                            if dr > 0 {
                                s += dot(
                                    &qr[(t * n1 + n) * dr..][..dr],
                                    &kr[(r * n2 + h) * dr..][..dr],
                                );
                            }
                            p.scale * s
                        })
                        .collect();
                    if sc.is_empty() {
                        continue;
                    }
                    let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = sc.iter().map(|s| (s - m).exp()).collect();
                    let sum: f64 = e.iter().sum();
                    let or = &mut o[(t * n1 + n) * dv..][..dv];
                    for (&r, &w) in pos.iter().zip(&e) {
                        let vr = &vs[(r * n2 + h) * dv..][..dv];
                        for (a, &x) in or.iter_mut().zip(vr) {
                            *a += w * x;
                        }
                    }
                    for a in or.iter_mut() {
                        *a /= sum;
                    }
                    mx[t * n1 + n] = m;
                    sm[t * n1 + n] = sum;
                }
            }
        }
    }
    store(o, out)?;
    if let Some((smax, ssum)) = stats {
        // [rows, N2, G] → BSND [B, N2, S1, G] or TND [N2, T1, G].
        let s1 = if q.shape.len() == 4 { q.shape[1] } else { rows };
        let bn = rows / s1;
        let mut pm = vec![0f64; rows * n1];
        let mut ps = vec![0f64; rows * n1];
        for bi in 0..bn {
            for si in 0..s1 {
                let t = bi * s1 + si;
                for h in 0..n2 {
                    for j in 0..g {
                        let dst = ((bi * n2 + h) * s1 + si) * g + j;
                        pm[dst] = mx[t * n1 + h * g + j];
                        ps[dst] = sm[t * n1 + h * g + j];
                    }
                }
            }
        }
        store(pm, smax)?;
        store(ps, ssum)?;
    }
    Ok(())
}

/// The layouts of BlockSparseAttention (query, key and value share one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BsaLayout {
    Tnd,
    Bnsd,
    Bsnd,
}

impl BsaLayout {
    pub fn parse(s: &str) -> Option<BsaLayout> {
        match s {
            "TND" => Some(BsaLayout::Tnd),
            "BNSD" => Some(BsaLayout::Bnsd),
            "BSND" => Some(BsaLayout::Bsnd),
            _ => None,
        }
    }

    /// (batches, S, N, D) of a tensor; TND has one "batch" of T rows.
    pub fn dims(self, shape: &[usize]) -> (usize, usize, usize, usize) {
        match self {
            BsaLayout::Tnd => (1, shape[0], shape[1], shape[2]),
            BsaLayout::Bnsd => (shape[0], shape[2], shape[1], shape[3]),
            BsaLayout::Bsnd => (shape[0], shape[1], shape[2], shape[3]),
        }
    }

    /// The row (in units of D) of batch `b`'s position `s`, head `n`, for a tensor of
    /// (S, N) in this layout; `start` is the batch's first token for TND.
    fn row(self, b: usize, s: usize, n: usize, (sd, nd): (usize, usize), start: usize) -> usize {
        match self {
            BsaLayout::Tnd => (start + s) * nd + n,
            BsaLayout::Bnsd => (b * nd + n) * sd + s,
            BsaLayout::Bsnd => (b * sd + s) * nd + n,
        }
    }
}

/// The attributes of a BlockSparseAttention call.
#[derive(Clone, Debug)]
pub struct Bsa {
    pub layout: BsaLayout,
    /// Per-batch query and key/value lengths (B entries; for TND the batches follow each
    /// other in T).
    pub q_lens: Vec<usize>,
    pub kv_lens: Vec<usize>,
    pub block_x: usize,
    pub block_y: usize,
    pub scale: f64,
}

/// `aclnnBlockSparseAttention`: query row `i` of batch `b`, head `n` (key/value head
/// `n / (N1 / N2)`) attends to the key positions `j < kv_len` whose block
/// `mask[b, n, i / blockX, j / blockY]` is nonzero: `out = softmax(scale·q·kᵀ)·v`; `lse` (when
/// given, shaped like the query with D = 1) is `max + ln Σ e^(s - max)`. A row with no
/// position (or past the batch's length) gets out 0 and lse -inf.
pub fn block_sparse_attention(
    q: &View,
    k: &View,
    v: &View,
    mask: &View,
    p: &Bsa,
    out: &View,
    lse: Option<&View>,
) -> Result<(), String> {
    let (_, s1, n1, d) = p.layout.dims(&q.shape);
    let (_, s2, n2, _) = p.layout.dims(&k.shape);
    let dv = v.shape[v.shape.len() - 1];
    let g = n1 / n2;
    let (mq, mk) = (mask.shape[2], mask.shape[3]);
    let (qs, ks, vs, ms) = (load(q)?, load(k)?, load(v)?, load(mask)?);
    let rows = q.numel() / d;
    let mut o = vec![0f64; rows * dv];
    let mut l = vec![f64::NEG_INFINITY; rows];
    let (mut q0, mut k0) = (0, 0);
    for (b, (&lq, &lk)) in p.q_lens.iter().zip(&p.kv_lens).enumerate() {
        for n in 0..n1 {
            let h = n / g;
            for i in 0..lq {
                let qr = p.layout.row(b, i, n, (s1, n1), q0);
                let qv = &qs[qr * d..][..d];
                let mrow = ((b * n1 + n) * mq + i / p.block_x) * mk;
                let pos: Vec<usize> = (0..lk)
                    .filter(|&j| j / p.block_y < mk && ms[mrow + j / p.block_y] != 0.0)
                    .map(|j| p.layout.row(b, j, h, (s2, n2), k0))
                    .collect();
                if pos.is_empty() {
                    continue;
                }
                let sc: Vec<f64> = pos
                    .iter()
                    .map(|&r| p.scale * dot(qv, &ks[r * d..][..d]))
                    .collect();
                let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = sc.iter().map(|s| (s - m).exp()).collect();
                let sum: f64 = e.iter().sum();
                let or = &mut o[qr * dv..][..dv];
                for (&r, &w) in pos.iter().zip(&e) {
                    for (a, &x) in or.iter_mut().zip(&vs[r * dv..][..dv]) {
                        *a += w * x / sum;
                    }
                }
                l[qr] = m + sum.ln();
            }
        }
        if p.layout == BsaLayout::Tnd {
            q0 += lq;
            k0 += lk;
        }
    }
    store(o, out)?;
    if let Some(lv) = lse {
        store(l, lv)?;
    }
    Ok(())
}

/// FusedFloydAttention's mask: `[B, 1|H, N, 1|M, K]` (BOOL/UINT8, nonzero excludes `k`).
struct FloydMask {
    data: Vec<f64>,
    shape: Vec<usize>,
}

impl FloydMask {
    fn masked(&self, b: usize, h: usize, n: usize, m: usize, k: usize) -> bool {
        let s = &self.shape;
        let (h, m) = (if s[1] == 1 { 0 } else { h }, if s[3] == 1 { 0 } else { m });
        self.data[(((b * s[1] + h) * s[2] + n) * s[3] + m) * s[4] + k] != 0.0
    }
}

/// The Floyd dimensions (B, H, N, M, K, D) of query `[B, H, N, M, D]` and key2 `[B, H, K, M, D]`.
fn floyd_dims(q: &View, k2: &View) -> [usize; 6] {
    let s = &q.shape;
    [s[0], s[1], s[2], s[3], k2.shape[2], s[4]]
}

/// The softmax weights of every `(b, h, n, m)` row over `k`: `scale·(q·k1[n, k] + q·k2[k, m])`
/// with masked `k` excluded; returns the rows' probabilities `[B·H·N·M, K]`, max and sum.
fn floyd_probs(
    qs: &[f64],
    k1: &[f64],
    k2: &[f64],
    mask: Option<&FloydMask>,
    [b, h, n, m, k, d]: [usize; 6],
    scale: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let rows = b * h * n * m;
    let mut p = vec![0f64; rows * k];
    let mut mx = vec![f64::NEG_INFINITY; rows];
    let mut sm = vec![0f64; rows];
    for r in 0..rows {
        let (bh, nn, mm) = (r / (n * m), (r / m) % n, r % m);
        let (bi, hi) = (bh / h, bh % h);
        let qv = &qs[r * d..][..d];
        let row = &mut p[r * k..][..k];
        for (kk, x) in row.iter_mut().enumerate() {
            if mask.is_some_and(|mk| mk.masked(bi, hi, nn, mm, kk)) {
                *x = f64::NEG_INFINITY;
                continue;
            }
            let a = &k1[((bh * n + nn) * k + kk) * d..][..d];
            let c = &k2[((bh * k + kk) * m + mm) * d..][..d];
            *x = scale * (dot(qv, a) + dot(qv, c));
        }
        let mv = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if mv == f64::NEG_INFINITY {
            row.iter_mut().for_each(|x| *x = 0.0);
            continue;
        }
        let mut s = 0.0;
        for x in row.iter_mut() {
            *x = (*x - mv).exp();
            s += *x;
        }
        row.iter_mut().for_each(|x| *x /= s);
        mx[r] = mv;
        sm[r] = s;
    }
    (p, mx, sm)
}

fn floyd_mask(mask: Option<&View>) -> Result<Option<FloydMask>, String> {
    mask.map(|v| {
        load(v).map(|data| FloydMask {
            data,
            shape: v.shape.clone(),
        })
    })
    .transpose()
}

/// `aclnnFusedFloydAttention`: query `[B, H, N, M, D]`, key1/value1 `[B, H, N, K, D]`,
/// key2/value2 `[B, H, K, M, D]`; row `(b, h, n, m)` takes the softmax over `k` of
/// `scale·(q·key1[n, k] + q·key2[k, m])` (masked `k` excluded) and
/// `out = Σ_k w_k (value1[n, k] + value2[k, m])`; softmax max/sum `[B, H, N, M, 8]` (8 equal
/// copies). A row with every `k` masked gets out 0, max -inf, sum 0.
#[allow(clippy::too_many_arguments)]
pub fn fused_floyd_attention(
    q: &View,
    k1: &View,
    v1: &View,
    k2: &View,
    v2: &View,
    mask: Option<&View>,
    scale: f64,
    smax: &View,
    ssum: &View,
    out: &View,
) -> Result<(), String> {
    let dims = floyd_dims(q, k2);
    let [b, h, n, m, k, d] = dims;
    let mk = floyd_mask(mask)?;
    let (qs, k1s, v1s, k2s, v2s) = (load(q)?, load(k1)?, load(v1)?, load(k2)?, load(v2)?);
    let (p, mx, sm) = floyd_probs(&qs, &k1s, &k2s, mk.as_ref(), dims, scale);
    let rows = b * h * n * m;
    let mut o = vec![0f64; rows * d];
    for r in 0..rows {
        let (bh, nn, mm) = (r / (n * m), (r / m) % n, r % m);
        let or = &mut o[r * d..][..d];
        for kk in 0..k {
            let w = p[r * k + kk];
            if w == 0.0 {
                continue;
            }
            let a = &v1s[((bh * n + nn) * k + kk) * d..][..d];
            let c = &v2s[((bh * k + kk) * m + mm) * d..][..d];
            for ((x, &y), &z) in or.iter_mut().zip(a).zip(c) {
                *x += w * (y + z);
            }
        }
    }
    store(o, out)?;
    store(mx.iter().flat_map(|&x| [x; 8]).collect(), smax)?;
    store(sm.iter().flat_map(|&x| [x; 8]).collect(), ssum)
}

/// `aclnnFusedFloydAttentionGrad`: the gradients of [`fused_floyd_attention`] from `dy` and
/// the forward's `out`, with the probabilities recomputed from the inputs (the saved max/sum
/// are checked for shape only): `dS = P ⊙ (dy·(v1 + v2) - rowsum(dy ⊙ out))`,
/// `dq = scale·Σ_k dS (k1 + k2)`, `dk1[n, k] = scale·Σ_m dS q`, `dk2[k, m] = scale·Σ_n dS q`,
/// `dv1[n, k] = Σ_m P dy`, `dv2[k, m] = Σ_n P dy`.
#[allow(clippy::too_many_arguments)]
pub fn fused_floyd_attention_grad(
    q: &View,
    k1: &View,
    v1: &View,
    k2: &View,
    v2: &View,
    dy: &View,
    mask: Option<&View>,
    out: &View,
    scale: f64,
    grads: [&View; 5],
) -> Result<(), String> {
    let dims = floyd_dims(q, k2);
    let [b, h, n, m, k, d] = dims;
    let mk = floyd_mask(mask)?;
    let (qs, k1s, v1s, k2s, v2s) = (load(q)?, load(k1)?, load(v1)?, load(k2)?, load(v2)?);
    let (dys, os) = (load(dy)?, load(out)?);
    let (p, _, _) = floyd_probs(&qs, &k1s, &k2s, mk.as_ref(), dims, scale);
    let rows = b * h * n * m;
    let mut dq = vec![0f64; qs.len()];
    let mut dk1 = vec![0f64; k1s.len()];
    let mut dv1 = vec![0f64; v1s.len()];
    let mut dk2 = vec![0f64; k2s.len()];
    let mut dv2 = vec![0f64; v2s.len()];
    for r in 0..rows {
        let (bh, nn, mm) = (r / (n * m), (r / m) % n, r % m);
        let g = &dys[r * d..][..d];
        let qv = &qs[r * d..][..d];
        let delta = dot(g, &os[r * d..][..d]);
        for kk in 0..k {
            let w = p[r * k + kk];
            if w == 0.0 {
                continue;
            }
            let i1 = ((bh * n + nn) * k + kk) * d;
            let i2 = ((bh * k + kk) * m + mm) * d;
            let dp = dot(g, &v1s[i1..][..d]) + dot(g, &v2s[i2..][..d]);
            let ds = w * (dp - delta) * scale;
            for j in 0..d {
                dq[r * d + j] += ds * (k1s[i1 + j] + k2s[i2 + j]);
                dk1[i1 + j] += ds * qv[j];
                dk2[i2 + j] += ds * qv[j];
                dv1[i1 + j] += w * g[j];
                dv2[i2 + j] += w * g[j];
            }
        }
    }
    for (buf, v) in [dq, dk1, dv1, dk2, dv2].into_iter().zip(grads) {
        store(buf, v)?;
    }
    Ok(())
}
