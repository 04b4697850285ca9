//! Large-model operators torch_npu documents for Atlas A2/A3 that sit outside the older
//! families: the sequence-parallel attention merge (`aclnnAttentionUpdate`), DeepSeek's MLA
//! cache update (`aclnnKvRmsNormRopeCache`) and the vocabulary-parallel cross entropy
//! (`aclnnFusedLinearOnlineMaxSum`, `aclnnFusedCrossEntropyLossWithMaxSum`,
//! `aclnnFusedLinearCrossEntropyLossGrad`).
//!
//! Every kernel loads its operands in f64 (the device computes in f32; one rounding at the
//! store keeps the results within an f32 ulp of it) and writes each output once.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

fn f64s(v: &View) -> Result<Vec<f64>, String> {
    load(v, DType::F64)
}

fn i64s(v: &View) -> Result<Vec<i64>, String> {
    load(v, DType::I64)
}

/// `aclnnAttentionUpdate`: merge the `sp` partial attention outputs of sequence parallelism.
/// Per row r: `m = max_i lse_i[r]`, `lse_m = m + ln Σ_i exp(lse_i[r] - m)`,
/// `out[r, :] = Σ_i local_out_i[r, :] · exp(lse_i[r] - lse_m)`; `lse_out = lse_m` when asked.
pub fn attention_update(
    lse: &[View],
    local_out: &[View],
    out: &View,
    lse_out: Option<&View>,
) -> Result<(), String> {
    let rows = out.shape[0];
    let hd = out.shape[1];
    let ls: Vec<Vec<f64>> = lse.iter().map(f64s).collect::<Result<_, _>>()?;
    let os: Vec<Vec<f64>> = local_out.iter().map(f64s).collect::<Result<_, _>>()?;
    let mut res = vec![0f64; rows * hd];
    let mut lm = vec![0f64; rows];
    for r in 0..rows {
        let m = ls.iter().map(|l| l[r]).fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = ls.iter().map(|l| (l[r] - m).exp()).sum();
        let lse_m = m + s.ln();
        lm[r] = lse_m;
        let row = &mut res[r * hd..(r + 1) * hd];
        for (l, o) in ls.iter().zip(&os) {
            let w = (l[r] - lse_m).exp();
            for (d, x) in row.iter_mut().zip(&o[r * hd..(r + 1) * hd]) {
                *d += x * w;
            }
        }
    }
    store(res, DType::F64, out)?;
    if let Some(v) = lse_out {
        store(lm, DType::F64, v)?;
    }
    Ok(())
}

/// The cache layouts of `aclnnKvRmsNormRopeCache` (its `cacheMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// `[Bcache, N, Scache, D]`, index `[Bkv, Skv]`: the position inside the batch's cache.
    Norm,
    /// `PA`/`PA_BNSD`: `[BlockNum, BlockSize, N, D]`, index `[Bkv·Skv]`: a global token slot.
    Pa,
    /// `PA_NZ`: as `Pa`, the block stored FRACTAL_NZ `[BlockNum, N, D/c0, BlockSize, c0]`.
    PaNz,
    /// `PA_BLK_BNSD`: index `[Bkv·ceil(Skv/BlockSize)]`, each the slot that starts a block.
    PaBlk,
    /// `PA_BLK_NZ`: `PaBlk` over the NZ block layout.
    PaBlkNz,
}

/// The quantization of one cache: `q = clamp(round_half_even(y·scale + offset), -128, 127)`,
/// `scale`/`offset` broadcast over `[N, D]` (`[1]`, `[D]` or `[N, D]`).
pub struct Quant<'a> {
    pub scale: &'a View,
    pub offset: Option<&'a View>,
}

fn quant_params(q: &Quant, n: usize, d: usize) -> Result<(Vec<f64>, Vec<f64>), String> {
    let expand = |v: Vec<f64>| -> Vec<f64> {
        if v.len() == 1 {
            vec![v[0]; n * d]
        } else if v.len() == d {
            (0..n * d).map(|i| v[i % d]).collect()
        } else {
            v
        }
    };
    let s = expand(f64s(q.scale)?);
    let o = match q.offset {
        Some(v) => expand(f64s(v)?),
        None => vec![0.0; n * d],
    };
    Ok((s, o))
}

/// Write the `[Bkv, N, Skv, D]` values `src` (already quantized or rounded by the store) into
/// `cache` at the token slots the mode gives.
fn scatter_cache(
    src: &[f64],
    (bkv, n, skv, d): (usize, usize, usize, usize),
    index: &[i64],
    cache: &View,
    mode: CacheMode,
) -> Result<(), String> {
    let mut c = f64s(cache)?;
    let cs = &cache.shape;
    let c0 = if cache.dtype == DType::I8 { 32 } else { 16 };
    // the element (slot, head, e) of a paged cache
    let paged = |blk: usize, off: usize, h: usize, e: usize, nz: bool| -> usize {
        let bs = cs[1];
        if nz {
            (((blk * n + h) * (d / c0) + e / c0) * bs + off) * c0 + e % c0
        } else {
            ((blk * bs + off) * n + h) * d + e
        }
    };
    let row = |b: usize, h: usize, s: usize| ((b * n + h) * skv + s) * d;
    match mode {
        CacheMode::Norm => {
            let scache = cs[2];
            for b in 0..bkv {
                for s in 0..skv {
                    let p = index[b * skv + s];
                    if p < 0 {
                        continue;
                    }
                    let p = p as usize;
                    if p >= scache || b >= cs[0] {
                        return Err(format!(
                            "index[{b}, {s}] = {p} is outside the cache of {} x {scache} rows",
                            cs[0]
                        ));
                    }
                    for h in 0..n {
                        let at = ((b * n + h) * scache + p) * d;
                        c[at..at + d].copy_from_slice(&src[row(b, h, s)..row(b, h, s) + d]);
                    }
                }
            }
        }
        CacheMode::Pa | CacheMode::PaNz => {
            let nz = mode == CacheMode::PaNz;
            let slots = cs[0] * cs[1];
            for (t, &p) in index.iter().enumerate().take(bkv * skv) {
                if p < 0 {
                    continue;
                }
                let p = p as usize;
                if p >= slots {
                    return Err(format!(
                        "index[{t}] = {p} is outside the {slots} cache slots"
                    ));
                }
                let (b, s) = (t / skv, t % skv);
                for h in 0..n {
                    for e in 0..d {
                        c[paged(p / cs[1], p % cs[1], h, e, nz)] = src[row(b, h, s) + e];
                    }
                }
            }
        }
        CacheMode::PaBlk | CacheMode::PaBlkNz => {
            let nz = mode == CacheMode::PaBlkNz;
            let bs = cs[1];
            let per = skv.div_ceil(bs);
            for b in 0..bkv {
                for j in 0..per {
                    let p = index[b * per + j];
                    if p < 0 {
                        continue;
                    }
                    let blk = p as usize / bs;
                    if blk >= cs[0] {
                        return Err(format!(
                            "index[{}] = {p} is outside the {} cache blocks",
                            b * per + j,
                            cs[0]
                        ));
                    }
                    let len = (skv - j * bs).min(bs);
                    for off in 0..len {
                        let s = j * bs + off;
                        for h in 0..n {
                            for e in 0..d {
                                c[paged(blk, off, h, e, nz)] = src[row(b, h, s) + e];
                            }
                        }
                    }
                }
            }
        }
    }
    store(c, DType::F64, cache)
}

/// Quantize (int8 cache with its scale) or pass the f32 values for the store's rounding.
fn for_cache(y: &[f64], n: usize, d: usize, q: Option<&Quant>) -> Result<Vec<f64>, String> {
    let Some(q) = q else {
        return Ok(y.to_vec());
    };
    let (s, o) = quant_params(q, n, d)?;
    Ok(y.iter()
        .enumerate()
        .map(|(i, &v)| {
            let j = i % (n * d);
            let x = (v as f32 * s[j] as f32 + o[j] as f32) as f64;
            x.round_ties_even().clamp(-128.0, 127.0)
        })
        .collect())
}

/// `aclnnKvRmsNormRopeCache`: kv `[Bkv, N, Skv, Dv + Dk]`; the first `Dv` channels are
/// RMS-normalized (`x / sqrt(mean(x²) + eps) · gamma`) into `ckv_cache`, the last `Dk` are
/// de-interleaved (`[x0, x2, …, x1, x3, …]`) and rotated
/// (`y = x·cos + rotate_half(x)·sin`, cos/sin `[Bkv, 1, Skv or 1, Dk]`) into `k_cache`;
/// `k_rope_out` / `c_kv_out` get the unquantized values when given.
#[allow(clippy::too_many_arguments)]
pub fn kv_rms_norm_rope_cache(
    kv: &View,
    gamma: &View,
    cos: &View,
    sin: &View,
    index: &View,
    k_cache: &View,
    ckv_cache: &View,
    k_quant: Option<Quant>,
    ckv_quant: Option<Quant>,
    epsilon: f64,
    mode: CacheMode,
    k_rope_out: Option<&View>,
    c_kv_out: Option<&View>,
) -> Result<(), String> {
    let (bkv, n, skv, dd) = (kv.shape[0], kv.shape[1], kv.shape[2], kv.shape[3]);
    let dv = gamma.shape[0];
    let dk = dd - dv;
    let x = f64s(kv)?;
    let g = f64s(gamma)?;
    let cs = f64s(cos)?;
    let sn = f64s(sin)?;
    let idx = i64s(index)?;
    let cos_s = cos.shape[2];
    let mut v = vec![0f64; bkv * n * skv * dv];
    let mut k = vec![0f64; bkv * n * skv * dk];
    let half = dk / 2;
    for b in 0..bkv {
        for h in 0..n {
            for s in 0..skv {
                let t = (b * n + h) * skv + s;
                let xr = &x[t * dd..(t + 1) * dd];
                // the kernel works in f32
                let ms: f64 =
                    xr[..dv].iter().map(|a| a * a).sum::<f64>() / dv as f64 + epsilon as f32 as f64;
                let inv = 1.0 / ms.sqrt();
                for e in 0..dv {
                    v[t * dv + e] = (xr[e] * inv) as f32 as f64 * g[e];
                }
                let rope = &xr[dv..];
                let deint: Vec<f64> = (0..dk)
                    .map(|e| {
                        if e < half {
                            rope[2 * e]
                        } else {
                            rope[2 * (e - half) + 1]
                        }
                    })
                    .collect();
                let cr = (b * cos_s + s.min(cos_s - 1)) * dk;
                for e in 0..dk {
                    let rot = if e < half {
                        -deint[e + half]
                    } else {
                        deint[e - half]
                    };
                    k[t * dk + e] = deint[e] * cs[cr + e] + rot * sn[cr + e];
                }
            }
        }
    }
    let kc = for_cache(&k, n, dk, k_quant.as_ref())?;
    let vc = for_cache(&v, n, dv, ckv_quant.as_ref())?;
    scatter_cache(&kc, (bkv, n, skv, dk), &idx, k_cache, mode)?;
    scatter_cache(&vc, (bkv, n, skv, dv), &idx, ckv_cache, mode)?;
    if let Some(o) = k_rope_out {
        store(k, DType::F64, o)?;
    }
    if let Some(o) = c_kv_out {
        store(v, DType::F64, o)?;
    }
    Ok(())
}

/// `logits = input · weightᵀ` (`[M, K]` by `[V, K]`), f64 sums rounded to f32 as the cube
/// unit's f32 accumulator leaves them.
fn logits(x: &[f64], w: &[f64], m: usize, v: usize, k: usize) -> Vec<f64> {
    let mut out = vec![0f64; m * v];
    for i in 0..m {
        let xr = &x[i * k..(i + 1) * k];
        for j in 0..v {
            let wr = &w[j * k..(j + 1) * k];
            let s: f64 = xr.iter().zip(wr).map(|(a, b)| a * b).sum();
            out[i * v + j] = s as f32 as f64;
        }
    }
    out
}

/// `aclnnFusedLinearOnlineMaxSum`: the local half of Megatron's vocabulary-parallel cross
/// entropy. `target` outside `[start, end)` is masked (masked_target 0, predicted 0);
/// `target_mask` packs the mask bits little-endian per byte (bit k of byte j is row
/// `8j + k`; rows past the end count as target 0, as the kernel pads them).
#[allow(clippy::too_many_arguments)]
pub fn fused_linear_online_max_sum(
    input: &View,
    weight: &View,
    target: &View,
    start: i64,
    end: i64,
    logits_max: &View,
    sum_exp: &View,
    predicted: &View,
    target_mask: &View,
    masked_target: &View,
    logits_out: Option<&View>,
) -> Result<(), String> {
    let (m, k) = (input.shape[0], input.shape[1]);
    let v = weight.shape[0];
    let lg = logits(&f64s(input)?, &f64s(weight)?, m, v, k);
    let t = i64s(target)?;
    let masked = |x: i64| x < start || x >= end;
    let mut mx = vec![0f64; m];
    let mut se = vec![0f64; m];
    let mut pr = vec![0f64; m];
    let mut mt = vec![0i64; m];
    for i in 0..m {
        let row = &lg[i * v..(i + 1) * v];
        let mm = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        mx[i] = mm;
        se[i] = row.iter().map(|x| (x - mm).exp()).sum();
        if !masked(t[i]) {
            let local = t[i] - start;
            mt[i] = local;
            pr[i] = match row.get(local as usize) {
                Some(x) => x - mm,
                None => {
                    return Err(format!(
                        "target[{i}] = {} maps to column {local}, past the {v} local vocabulary entries",
                        t[i]
                    ))
                }
            };
        }
    }
    let bytes = target_mask.shape[0];
    let mut tm = vec![0i64; bytes];
    for (j, byte) in tm.iter_mut().enumerate() {
        for bit in 0..8 {
            let r = 8 * j + bit;
            let tv = if r < m { t[r] } else { 0 };
            if masked(tv) {
                *byte |= 1 << bit;
            }
        }
    }
    store(mx, DType::F64, logits_max)?;
    store(se, DType::F64, sum_exp)?;
    store(pr, DType::F64, predicted)?;
    store(tm, DType::I64, target_mask)?;
    store(mt, DType::I64, masked_target)?;
    if let Some(o) = logits_out {
        store(lg, DType::F64, o)?;
    }
    Ok(())
}

/// `aclnnFusedCrossEntropyLossWithMaxSum`: `loss = ln(sum_exp) - predicted`; the softmax
/// `exp(logits - max) / sum_exp` when the logits are given.
pub fn fused_cross_entropy_loss_with_max_sum(
    logits_max: &View,
    sum_exp: &View,
    predicted: &View,
    logits: Option<&View>,
    loss: &View,
    softmax: Option<&View>,
) -> Result<(), String> {
    let mx = f64s(logits_max)?;
    let se = f64s(sum_exp)?;
    let pr = f64s(predicted)?;
    let l: Vec<f64> = se.iter().zip(&pr).map(|(s, p)| s.ln() - p).collect();
    store(l, DType::F64, loss)?;
    if let (Some(lv), Some(sm)) = (logits, softmax) {
        let x = f64s(lv)?;
        let v = lv.shape[1];
        let out: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, a)| (a - mx[i / v]).exp() / se[i / v])
            .collect();
        store(out, DType::F64, sm)?;
    }
    Ok(())
}

/// `aclnnFusedLinearCrossEntropyLossGrad`: `g = softmax` (given, or recomputed from
/// `input · weightᵀ`, `logits_max`, `sum_exp`), `g[r, masked_target[r]] -= 1` for the rows
/// whose mask is clear (uint8 bits as [`fused_linear_online_max_sum`] packs them, or one
/// bool per row), `g *= grad[r]`; `input_grad = g · weight`, `weight_grad = gᵀ · input`.
#[allow(clippy::too_many_arguments)]
pub fn fused_linear_cross_entropy_loss_grad(
    grad: &View,
    input: &View,
    weight: &View,
    target_mask: &View,
    masked_target: &View,
    logits_max: Option<&View>,
    sum_exp: Option<&View>,
    softmax: Option<&View>,
    input_grad: &View,
    weight_grad: &View,
) -> Result<(), String> {
    let (m, k) = (input.shape[0], input.shape[1]);
    let v = weight.shape[0];
    let x = f64s(input)?;
    let w = f64s(weight)?;
    let gr = f64s(grad)?;
    let mut g = match (softmax, logits_max, sum_exp) {
        (Some(s), _, _) => f64s(s)?,
        (None, Some(mx), Some(se)) => {
            let mx = f64s(mx)?;
            let se = f64s(se)?;
            let mut lg = logits(&x, &w, m, v, k);
            for (i, a) in lg.iter_mut().enumerate() {
                *a = (*a - mx[i / v]).exp() / se[i / v];
            }
            lg
        }
        _ => return Err("softmax or logitsMax and sumExpLogits are required".into()),
    };
    let tm = i64s(target_mask)?;
    let bool_mask = target_mask.dtype == DType::Bool;
    let mt = i64s(masked_target)?;
    for r in 0..m {
        let bit = if bool_mask {
            tm[r] != 0
        } else {
            (tm[r / 8] >> (r % 8)) & 1 != 0
        };
        if !bit {
            let c = mt[r];
            if c < 0 || c as usize >= v {
                return Err(format!(
                    "maskedTarget[{r}] = {c} is outside the {v} vocabulary columns"
                ));
            }
            g[r * v + c as usize] -= 1.0;
        }
        for a in &mut g[r * v..(r + 1) * v] {
            *a *= gr[r];
        }
    }
    let mut gi = vec![0f64; m * k];
    let mut gw = vec![0f64; v * k];
    for r in 0..m {
        for c in 0..v {
            let a = g[r * v + c];
            if a == 0.0 {
                continue;
            }
            let (wr, xr) = (&w[c * k..(c + 1) * k], &x[r * k..(r + 1) * k]);
            for (d, b) in gi[r * k..(r + 1) * k].iter_mut().zip(wr) {
                *d += a * b;
            }
            for (d, b) in gw[c * k..(c + 1) * k].iter_mut().zip(xr) {
                *d += a * b;
            }
        }
    }
    store(gi, DType::F64, input_grad)?;
    store(gw, DType::F64, weight_grad)
}

/// `aclnnRecurrentGatedDeltaRule` (`npu_recurrent_gated_delta_rule`, the decode / MTP form of
/// the gated delta rule, f32 arithmetic as the kernel). Sequence i covers tokens
/// `[start_i, start_i + L_i)`; its state starts from `state[ssm[start_i + acc_i - 1]]`
/// (`acc_i` = numAcceptedTokens[i], 1 without it) and per token t and value head h
/// (key head `h / (Nv / Nk)`): `S ← S·e^{g[t,h]}`, `S ← S + β[t,h]·(v - S·k)·kᵀ`,
/// `state[ssm[t]][h] = S`, `out[t,h] = S·(scale·q)`.
#[allow(clippy::too_many_arguments)]
pub fn recurrent_gated_delta_rule(
    query: &View,
    key: &View,
    value: &View,
    beta: &View,
    state: &View,
    seq_lens: &View,
    ssm: &View,
    g: Option<&View>,
    accepted: Option<&View>,
    scale: f32,
    out: &View,
) -> Result<(), String> {
    let (t_all, nk, dk) = (query.shape[0], query.shape[1], query.shape[2]);
    let (nv, dv) = (value.shape[1], value.shape[2]);
    let blocks = state.shape[0];
    let q: Vec<f32> = load(query, DType::F32)?;
    let k: Vec<f32> = load(key, DType::F32)?;
    let v: Vec<f32> = load(value, DType::F32)?;
    let b: Vec<f32> = load(beta, DType::F32)?;
    let mut st: Vec<f32> = load(state, DType::F32)?;
    let lens = i64s(seq_lens)?;
    let idx = i64s(ssm)?;
    let gg: Option<Vec<f32>> = g.map(|x| load(x, DType::F32)).transpose()?;
    let acc = accepted.map(i64s).transpose()?;
    let mut o = vec![0f32; t_all * nv * dv];
    let per = dv * dk;
    let group = nv / nk;
    let slot = |t: usize| -> Result<usize, String> {
        let s = idx[t];
        if s < 0 || s as usize >= blocks {
            return Err(format!(
                "ssmStateIndices[{t}] = {s} is outside the {blocks} state blocks"
            ));
        }
        Ok(s as usize)
    };
    let mut start = 0usize;
    for (i, &len) in lens.iter().enumerate() {
        let len = len as usize;
        if start + len > t_all {
            return Err(format!(
                "actualSeqLengths sum past the {t_all} tokens at sequence {i}"
            ));
        }
        if len == 0 {
            continue;
        }
        let a = acc.as_ref().map(|a| a[i]).unwrap_or(1);
        if a < 1 || a as usize > len {
            return Err(format!(
                "numAcceptedTokens[{i}] = {a} must be in [1, {len}]"
            ));
        }
        let init = slot(start + a as usize - 1)?;
        for h in 0..nv {
            let kh = h / group;
            let mut s: Vec<f32> = st[(init * nv + h) * per..(init * nv + h + 1) * per].to_vec();
            for t in start..start + len {
                let kv = &k[(t * nk + kh) * dk..(t * nk + kh + 1) * dk];
                let qv = &q[(t * nk + kh) * dk..(t * nk + kh + 1) * dk];
                let vv = &v[(t * nv + h) * dv..(t * nv + h + 1) * dv];
                let alpha = gg.as_ref().map(|gg| gg[t * nv + h].exp());
                gdr_step(&mut s, kv, vv, b[t * nv + h], alpha);
                let dst = slot(t)?;
                st[(dst * nv + h) * per..(dst * nv + h + 1) * per].copy_from_slice(&s);
                gdr_out(
                    &s,
                    qv,
                    scale,
                    &mut o[(t * nv + h) * dv..(t * nv + h + 1) * dv],
                );
            }
        }
        start += len;
    }
    store(st, DType::F32, state)?;
    store(o, DType::F32, out)
}

/// One gated delta rule step on the `[Dv, Dk]` state: `S ← α·S`, `S ← S + β·(v - S·k)·kᵀ`.
fn gdr_step(s: &mut [f32], k: &[f32], v: &[f32], beta: f32, alpha: Option<f32>) {
    if let Some(al) = alpha {
        for x in s.iter_mut() {
            *x *= al;
        }
    }
    let dk = k.len();
    for (r, vr) in v.iter().enumerate() {
        let row = &mut s[r * dk..(r + 1) * dk];
        let x: f32 = row.iter().zip(k).map(|(a, c)| a * c).sum();
        let y = (vr - x) * beta;
        for (e, c) in row.iter_mut().zip(k) {
            *e += y * c;
        }
    }
}

/// `o = S·(scale·q)`.
fn gdr_out(s: &[f32], q: &[f32], scale: f32, o: &mut [f32]) {
    let dk = q.len();
    for (r, d) in o.iter_mut().enumerate() {
        *d = s[r * dk..(r + 1) * dk]
            .iter()
            .zip(q)
            .map(|(a, c)| a * (c * scale))
            .sum();
    }
}

/// `aclnnChunkGatedDeltaRule` (`npu_chunk_gated_delta_rule`, the prefill form): sequence i
/// (`[start_i, start_i + L_i)`) runs the gated delta rule from `initial_state[i]`; its last
/// state is `final_state[i]`. The chunked kernel computes the same recurrence blockwise;
/// here it runs token by token in f32.
#[allow(clippy::too_many_arguments)]
pub fn chunk_gated_delta_rule(
    query: &View,
    key: &View,
    value: &View,
    beta: &View,
    initial_state: &View,
    seq_lens: &View,
    scale: f32,
    g: Option<&View>,
    out: &View,
    final_state: &View,
) -> Result<(), String> {
    let (t_all, nk, dk) = (query.shape[0], query.shape[1], query.shape[2]);
    let (nv, dv) = (value.shape[1], value.shape[2]);
    let q: Vec<f32> = load(query, DType::F32)?;
    let k: Vec<f32> = load(key, DType::F32)?;
    let v: Vec<f32> = load(value, DType::F32)?;
    let b: Vec<f32> = load(beta, DType::F32)?;
    let mut st: Vec<f32> = load(initial_state, DType::F32)?;
    let lens = i64s(seq_lens)?;
    let gg: Option<Vec<f32>> = g.map(|x| load(x, DType::F32)).transpose()?;
    let mut o = vec![0f32; t_all * nv * dv];
    let per = dv * dk;
    let group = nv / nk;
    let mut start = 0usize;
    for (i, &len) in lens.iter().enumerate() {
        if len < 0 || start + len as usize > t_all {
            return Err(format!(
                "actualSeqLengths[{i}] = {len} runs past the {t_all} tokens"
            ));
        }
        let len = len as usize;
        for h in 0..nv {
            let kh = h / group;
            let s = &mut st[(i * nv + h) * per..(i * nv + h + 1) * per];
            for t in start..start + len {
                let kv = &k[(t * nk + kh) * dk..(t * nk + kh + 1) * dk];
                let qv = &q[(t * nk + kh) * dk..(t * nk + kh + 1) * dk];
                let vv = &v[(t * nv + h) * dv..(t * nv + h + 1) * dv];
                let alpha = gg.as_ref().map(|gg| gg[t * nv + h].exp());
                gdr_step(s, kv, vv, b[t * nv + h], alpha);
                gdr_out(
                    s,
                    qv,
                    scale,
                    &mut o[(t * nv + h) * dv..(t * nv + h + 1) * dv],
                );
            }
        }
        start += len;
    }
    store(st, DType::F32, final_state)?;
    store(o, DType::F32, out)
}
