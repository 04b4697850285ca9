//! The newer attention operator versions: the attention sink of `aclnnFlashAttentionScoreV3`,
//! `…GradV3`, `aclnnFlashAttentionVarLenScoreV5` and `…UnpaddingScoreGradV5` (torch_npu's
//! `npu_fusion_attention(…, sink=…)`), on top of the flash-attention engine of
//! [`super::fused`].
//!
//! A sink is one learnable logit per query head: each softmax row gets the extra term
//! `e^(sink - m)` with `m = max(sink, max_j s_ij)`, a column that holds no value, so the
//! attention out is `Σ_j e^(s_ij - m) v_j / (Σ_j e^(s_ij - m) + e^(sink - m))`. Its
//! gradient is `dsink = -Σ_{b,i} p_sink(b,i) · D(b,i)` with `p_sink = e^(sink - m) / sum`
//! and `D = rowsum(dO ⊙ O)` (the sink's `dP` is 0, so its `dS = p_sink · (0 - D)`).

use super::dtype::DType;
use super::fused::{self, FaDims, FaLayout, FaParams, FaSaved};
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

/// `p` with the sink logits of `sink` (`[N1]`, or `None` for no sink).
pub fn with_sink(p: &FaParams, sink: Option<&View>) -> Result<FaParams, String> {
    let mut p = p.clone();
    p.sink = match sink {
        Some(s) => {
            let v = load(s)?;
            if v.len() != p.head_num {
                return Err(format!(
                    "sink holds {} values; it takes one per head ({})",
                    v.len(),
                    p.head_num
                ));
            }
            Some(v)
        }
        None => None,
    };
    Ok(p)
}

/// [`fused::flash_attention`] with an optional attention sink.
#[allow(clippy::too_many_arguments)]
pub fn flash_attention_sink(
    q: &View,
    k: &View,
    v: &View,
    pse: Option<&View>,
    drop_mask: Option<&View>,
    atten_mask: Option<&View>,
    sink: Option<&View>,
    p: &FaParams,
    softmax_max: &View,
    softmax_sum: &View,
    out: &View,
) -> Result<(), String> {
    let p = with_sink(p, sink)?;
    fused::flash_attention(
        q,
        k,
        v,
        pse,
        drop_mask,
        atten_mask,
        &p,
        softmax_max,
        softmax_sum,
        out,
    )
}

/// The optional inputs of the backward: pse, dropout mask, attention mask, sink.
pub struct SinkGradOpt<'a> {
    pub pse: Option<&'a View>,
    pub drop_mask: Option<&'a View>,
    pub atten_mask: Option<&'a View>,
    pub sink: Option<&'a View>,
}

/// [`fused::flash_attention_grad`] with an optional attention sink; with `dsink` (`[N1]`,
/// float32) also the sink's gradient, from a forward recomputed with the same inputs.
#[allow(clippy::too_many_arguments)]
pub fn flash_attention_sink_grad(
    qkvg: [&View; 4],
    opt: &SinkGradOpt,
    saved: &FaSaved,
    p: &FaParams,
    grads: [&View; 3],
    dpse: Option<&View>,
    dsink: Option<&View>,
) -> Result<(), String> {
    let [q, k, v, dy] = qkvg;
    let p = with_sink(p, opt.sink)?;
    let [dq, dk, dv] = grads;
    fused::flash_attention_grad(
        q,
        k,
        v,
        dy,
        opt.pse,
        opt.drop_mask,
        opt.atten_mask,
        saved,
        &p,
        dq,
        dk,
        dv,
        dpse,
    )?;
    let (Some(ds), Some(sk)) = (dsink, p.sink.as_ref()) else {
        if let Some(ds) = dsink {
            // no sink: its gradient is 0
            store(vec![0.0; ds.numel()], ds)?;
        }
        return Ok(());
    };
    let n1 = p.head_num;
    // The forward again: the output and each row's max and sum (with the sink).
    let mut o = vec![0f64; dy.numel()];
    let ov = View::of_slice(&mut o, DType::F64, &dy.shape);
    let (rows, stat_shape): (usize, Vec<usize>) = match &p.varlen {
        Some(_) => {
            let t = q.shape[0];
            (t * n1, vec![n1, t, 8])
        }
        None => {
            let dm = FaDims::of(&p, &q.shape, &k.shape, &v.shape)?;
            (dm.b * n1 * dm.s1, vec![dm.b, n1, dm.s1, 8])
        }
    };
    let (mut mx, mut sm) = (vec![0f64; rows * 8], vec![0f64; rows * 8]);
    {
        let mv = View::of_slice(&mut mx, DType::F64, &stat_shape);
        let sv = View::of_slice(&mut sm, DType::F64, &stat_shape);
        fused::flash_attention(
            q,
            k,
            v,
            opt.pse,
            opt.drop_mask,
            opt.atten_mask,
            &p,
            &mv,
            &sv,
            &ov,
        )?;
    }
    let g = load(dy)?;
    let mut acc = vec![0f64; n1];
    // (offset of the row in O/dO, index of its statistics, head)
    let mut add = |orow: usize, srow: usize, n: usize, dv: usize| {
        let d: f64 = (0..dv).map(|c| o[orow + c] * g[orow + c]).sum();
        let (m, s) = (mx[srow * 8], sm[srow * 8]);
        if s > 0.0 {
            acc[n] -= (sk[n] - m).exp() / s * d;
        }
    };
    match &p.varlen {
        Some(vl) => {
            let t = q.shape[0];
            let dv = dy.shape[2];
            for r in 0..t {
                for n in 0..n1 {
                    let srow = if vl.stats_tnd { r * n1 + n } else { n * t + r };
                    add((r * n1 + n) * dv, srow, n, dv);
                }
            }
        }
        None => {
            let dm = FaDims::of(&p, &q.shape, &k.shape, &v.shape)?;
            let od = (dm.b, dm.s1, dm.n1, dm.dv);
            let l: FaLayout = p.layout;
            for b in 0..dm.b {
                for n in 0..n1 {
                    for i in 0..dm.s1 {
                        add(l.off(od, b, n, i), (b * n1 + n) * dm.s1 + i, n, dm.dv);
                    }
                }
            }
        }
    }
    store(acc, ds)
}

// ---------------------------------------------------------------- NSA compress

/// `(start, length)` of each packed sequence from cumulative ends.
fn spans(ends: &[usize]) -> Vec<(usize, usize)> {
    let mut prev = 0;
    ends.iter()
        .map(|&e| {
            let s = (prev, e - prev);
            prev = e;
            s
        })
        .collect()
}

/// Compressed blocks of a sequence of `len` rows: `(len - block) / stride + 1` when it
/// holds one block, else none.
pub fn nsa_blocks(len: usize, block: usize, stride: usize) -> usize {
    if len >= block {
        (len - block) / stride + 1
    } else {
        0
    }
}

/// `aclnnNsaCompress`: `out[o_b + i, n, :] = Σ_l weight[l, n] · input[s_b + i·stride + l, n, :]`
/// for every block `i` of every sequence `b` (`input [T, N, D]`, `weight [block, N]`,
/// `out [Σ blocks, N, D]`), accumulated in f64.
pub fn nsa_compress(
    input: &View,
    weight: &View,
    ends: &[usize],
    block: usize,
    stride: usize,
    out: &View,
) -> Result<(), String> {
    let (n, d) = (input.shape[1], input.shape[2]);
    let x = load(input)?;
    let w = load(weight)?;
    let mut o = vec![0f64; out.numel()];
    let mut row = 0;
    for (s, len) in spans(ends) {
        for i in 0..nsa_blocks(len, block, stride) {
            for l in 0..block {
                let src = s + i * stride + l;
                for h in 0..n {
                    let wl = w[l * n + h];
                    let (xo, oo) = ((src * n + h) * d, (row * n + h) * d);
                    for c in 0..d {
                        o[oo + c] += wl * x[xo + c];
                    }
                }
            }
            row += 1;
        }
    }
    store(o, out)
}

/// `aclnnNsaCompressGrad`: `inputGrad[s_b + i·stride + l, n, :] += weight[l, n] · g[o_b + i, n, :]`
/// and `weightGrad[l, n] = Σ_{b, i, d} g[o_b + i, n, d] · input[s_b + i·stride + l, n, d]`.
#[allow(clippy::too_many_arguments)]
pub fn nsa_compress_grad(
    grad: &View,
    input: &View,
    weight: &View,
    ends: &[usize],
    block: usize,
    stride: usize,
    input_grad: &View,
    weight_grad: &View,
) -> Result<(), String> {
    let (n, d) = (input.shape[1], input.shape[2]);
    let g = load(grad)?;
    let x = load(input)?;
    let w = load(weight)?;
    let mut dx = vec![0f64; x.len()];
    let mut dw = vec![0f64; w.len()];
    let mut row = 0;
    for (s, len) in spans(ends) {
        for i in 0..nsa_blocks(len, block, stride) {
            for l in 0..block {
                let src = s + i * stride + l;
                for h in 0..n {
                    let (xo, go) = ((src * n + h) * d, (row * n + h) * d);
                    let wl = w[l * n + h];
                    let mut acc = 0.0;
                    for c in 0..d {
                        dx[xo + c] += wl * g[go + c];
                        acc += g[go + c] * x[xo + c];
                    }
                    dw[l * n + h] += acc;
                }
            }
            row += 1;
        }
    }
    store(dx, input_grad)?;
    store(dw, weight_grad)
}

/// `x` with `rope` appended to each head row: both hold whole rows of one head (`d` and
/// `dr` values each, in the same layout, BSH's `N·d` rows counting as `N` of them), so the
/// result is the tensor of head dim `d + dr` in that layout, and its shape.
pub(crate) fn with_rope(
    x: &View,
    rope: &View,
    d: usize,
    dr: usize,
) -> Result<(Vec<f64>, Vec<usize>), String> {
    let (a, r) = (load(x)?, load(rope)?);
    let rows = a.len() / d.max(1);
    if d == 0 || a.len() != rows * d || r.len() != rows * dr {
        return Err(format!(
            "rope {:?} does not hold a {dr}-value row for each {d}-value head row of {:?}",
            rope.shape, x.shape
        ));
    }
    let mut out = Vec::with_capacity(rows * (d + dr));
    for i in 0..rows {
        out.extend_from_slice(&a[i * d..(i + 1) * d]);
        out.extend_from_slice(&r[i * dr..(i + 1) * dr]);
    }
    let mut shape = x.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = *last / d * (d + dr);
    }
    Ok((out, shape))
}

/// The inference attention of `aclnnFusedInferAttentionScore` V3+ with its MLA parts and
/// sink: `rope` (queryRope, keyRope, head dims `d`/`dr`) adds `q_rope·k_ropeᵀ` to every
/// score before scaling (`softmax(scale·(q·kᵀ + q_r·k_rᵀ))`, as attention over the
/// concatenated heads), and `sink` (`[N1]`, learnableSink) is a logit per head as in
/// [`flash_attention_sink`]. The rest is [`fused::inference_attention`].
#[allow(clippy::too_many_arguments)]
pub fn inference_attention_ext(
    q: &View,
    k: &View,
    v: &View,
    rope: Option<(&View, &View, usize, usize)>,
    sink: Option<&View>,
    pse: Option<&View>,
    atten_mask: Option<&View>,
    p: &FaParams,
    out: &View,
    lse: Option<&View>,
) -> Result<(), String> {
    let p = with_sink(p, sink)?;
    roped(q, k, rope, |q, k| {
        fused::inference_attention(q, k, v, pse, atten_mask, &p, out, lse)
    })
}

/// `f` of the query and key, with the MLA `rope` parts (queryRope, keyRope, head dims `d`
/// and `dr`) appended to every head row when given ([`with_rope`]).
fn roped<R>(
    q: &View,
    k: &View,
    rope: Option<(&View, &View, usize, usize)>,
    f: impl FnOnce(&View, &View) -> Result<R, String>,
) -> Result<R, String> {
    let Some((qr, kr, d, dr)) = rope else {
        return f(q, k);
    };
    let (mut qb, qs) = with_rope(q, qr, d, dr)?;
    let (mut kb, ks) = with_rope(k, kr, d, dr)?;
    f(
        &View::of_slice(&mut qb, DType::F64, &qs),
        &View::of_slice(&mut kb, DType::F64, &ks),
    )
}

/// The inference attention of `aclnnFusedInferAttentionScore` V3+ in layout TND: `p`
/// carries the packed sequences (`p.varlen`, statistics `[N1, T, 8]`); each sequence is
/// attended alone ([`fused::flash_attention`]), with the MLA `rope` parts and the `sink` as
/// in [`inference_attention_ext`]. `lse` (`[T, N1, 1]`) gets each row's log-sum-exp.
#[allow(clippy::too_many_arguments)]
pub fn inference_attention_tnd(
    q: &View,
    k: &View,
    v: &View,
    rope: Option<(&View, &View, usize, usize)>,
    sink: Option<&View>,
    atten_mask: Option<&View>,
    p: &FaParams,
    out: &View,
    lse: Option<&View>,
) -> Result<(), String> {
    let p = with_sink(p, sink)?;
    let (t, n1) = (q.shape[0], q.shape[1]);
    let mut stats = [vec![0f64; t * n1 * 8], vec![0f64; t * n1 * 8]];
    let sh = [n1, t, 8];
    let [mx, sm] = &mut stats;
    let (mv, sv) = (
        View::of_slice(mx, DType::F64, &sh),
        View::of_slice(sm, DType::F64, &sh),
    );
    roped(q, k, rope, |q, k| {
        fused::flash_attention(q, k, v, None, None, atten_mask, &p, &mv, &sv, out)
    })?;
    if let Some(l) = lse {
        // Rows of sequences with no key have a zero sum: their log-sum-exp is -inf.
        let vals: Vec<f64> = (0..t * n1)
            .map(|i| {
                let (row, n) = (i / n1, i % n1);
                let at = (n * t + row) * 8;
                stats[0][at] + stats[1][at].ln()
            })
            .collect();
        store(vals, l)?;
    }
    Ok(())
}
