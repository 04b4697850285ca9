//! The fused operators of large-model code (CANN's `ops-transformer` family, what
//! torch_npu's `npu_rms_norm`, `npu_rotary_mul`, `npu_apply_rotary_pos_emb`, `npu_swiglu`
//! and `npu_fusion_attention` call): RMS norm, rotary position embedding, SwiGLU and flash
//! attention, each with its backward.
//!
//! Every kernel works on dense host copies in f64 (read with one conversion, no rounding
//! on the way) and stores each result with one rounding into the output's dtype, so fp16
//! and bf16 results are the correctly rounded values of the exact formula. Reductions
//! (norm sums, softmax sums, matrix products) accumulate in f64.

use super::dtype::DType;
use super::iter;
use super::view::View;

/// Dense row-major f64 copy of `v` (broadcast views are materialised).
fn load(v: &View) -> Result<Vec<f64>, String> {
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok(buf)
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

/// Sum the dense `full` (of shape `full_shape`) over the dimensions where `target` (same
/// rank after left-padding with ones) is 1: the gradient of a broadcast input.
fn reduce_to(full: &[f64], full_shape: &[usize], target: &[usize]) -> Vec<f64> {
    let nd = full_shape.len();
    let mut t = vec![1usize; nd.saturating_sub(target.len())];
    t.extend_from_slice(target);
    let mut tstride = vec![0usize; nd];
    let mut acc = 1usize;
    for d in (0..nd).rev() {
        tstride[d] = if t[d] == 1 && full_shape[d] != 1 {
            0
        } else {
            acc
        };
        acc *= t[d];
    }
    let mut out = vec![0f64; t.iter().product()];
    let mut idx = vec![0usize; nd];
    for &v in full {
        let o: usize = idx.iter().zip(&tstride).map(|(i, s)| i * s).sum();
        out[o] += v;
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < full_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

// ---------------------------------------------------------------- RMS norm

/// `y = x / sqrt(mean(x², over gamma's dims) + eps) * gamma`; `rstd` holds
/// `1 / sqrt(mean + eps)` per row (rows = `x.numel() / gamma.numel()`).
pub fn rms_norm(x: &View, gamma: &View, eps: f64, y: &View, rstd: &View) -> Result<(), String> {
    let xs = load(x)?;
    let g = load(gamma)?;
    let n = g.len().max(1);
    let rows = xs.len() / n;
    let mut out = vec![0f64; xs.len()];
    let mut rs = vec![0f64; rows];
    for r in 0..rows {
        let row = &xs[r * n..(r + 1) * n];
        let ms = row.iter().map(|v| v * v).sum::<f64>() / n as f64;
        let inv = 1.0 / (ms + eps).sqrt();
        rs[r] = inv;
        for (i, o) in out[r * n..(r + 1) * n].iter_mut().enumerate() {
            *o = row[i] * inv * g[i];
        }
    }
    store(out, y)?;
    store(rs, rstd)
}

/// The backward of [`rms_norm`] from the saved `rstd`: `dx = (dy·g - x·rstd·mean(dy·g·x·rstd))
/// · rstd`, `dgamma = Σ_rows dy · x · rstd`.
pub fn rms_norm_grad(
    dy: &View,
    x: &View,
    rstd: &View,
    gamma: &View,
    dx: &View,
    dgamma: &View,
) -> Result<(), String> {
    let d = load(dy)?;
    let xs = load(x)?;
    let rs = load(rstd)?;
    let g = load(gamma)?;
    let n = g.len().max(1);
    let rows = xs.len() / n;
    let mut dxs = vec![0f64; xs.len()];
    let mut dg = vec![0f64; n];
    for r in 0..rows {
        let inv = rs[r];
        let (xr, dr) = (&xs[r * n..(r + 1) * n], &d[r * n..(r + 1) * n]);
        let mean = (0..n).map(|i| dr[i] * g[i] * xr[i] * inv).sum::<f64>() / n as f64;
        for i in 0..n {
            dxs[r * n + i] = (dr[i] * g[i] - xr[i] * inv * mean) * inv;
            dg[i] += dr[i] * xr[i] * inv;
        }
    }
    store(dxs, dx)?;
    store(dg, dgamma)
}

// ---------------------------------------------------------------- rotary embedding

/// The rotation modes of `aclnnRotaryPositionEmbedding` (`mode`): 0 half, 1 interleave,
/// 2 quarter, 3 interleave-half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeMode {
    Half,
    Interleave,
    Quarter,
    InterleaveHalf,
}

impl RopeMode {
    pub fn from_i64(v: i64) -> Option<RopeMode> {
        Some(match v {
            0 => RopeMode::Half,
            1 => RopeMode::Interleave,
            2 => RopeMode::Quarter,
            3 => RopeMode::InterleaveHalf,
            _ => return None,
        })
    }

    /// The divisor the last dimension must be a multiple of.
    pub fn granule(self) -> usize {
        match self {
            RopeMode::Quarter => 4,
            _ => 2,
        }
    }
}

/// `(a, b)` = the two vectors the row is multiplied by cos and sin: `y = a·cos + b·sin`.
/// Half: a = x, b = cat(-x2, x1). Interleave: a = x, b[2k] = -x[2k+1], b[2k+1] = x[2k].
/// Quarter: a = x, b = cat(-x2, x1, -x4, x3). Interleave-half: a = cat(x[::2], x[1::2]),
/// b = cat(-x[1::2], x[::2]).
fn rope_parts(mode: RopeMode, x: &[f64], a: &mut [f64], b: &mut [f64]) {
    let d = x.len();
    match mode {
        RopeMode::Half => {
            let h = d / 2;
            a.copy_from_slice(x);
            for i in 0..h {
                b[i] = -x[i + h];
                b[i + h] = x[i];
            }
        }
        RopeMode::Interleave => {
            a.copy_from_slice(x);
            for k in 0..d / 2 {
                b[2 * k] = -x[2 * k + 1];
                b[2 * k + 1] = x[2 * k];
            }
        }
        RopeMode::Quarter => {
            let q = d / 4;
            a.copy_from_slice(x);
            for i in 0..q {
                b[i] = -x[i + q];
                b[i + q] = x[i];
                b[i + 2 * q] = -x[i + 3 * q];
                b[i + 3 * q] = x[i + 2 * q];
            }
        }
        RopeMode::InterleaveHalf => {
            let h = d / 2;
            for k in 0..h {
                a[k] = x[2 * k];
                a[k + h] = x[2 * k + 1];
                b[k] = -x[2 * k + 1];
                b[k + h] = x[2 * k];
            }
        }
    }
}

/// The transpose of [`rope_parts`]: `dx` from `gc = dy·cos` (the `a` part) and `gs = dy·sin`
/// (the `b` part).
fn rope_parts_t(mode: RopeMode, gc: &[f64], gs: &[f64], dx: &mut [f64]) {
    let d = dx.len();
    match mode {
        RopeMode::Half => {
            let h = d / 2;
            for i in 0..h {
                dx[i] = gc[i] + gs[i + h];
                dx[i + h] = gc[i + h] - gs[i];
            }
        }
        RopeMode::Interleave => {
            for k in 0..d / 2 {
                dx[2 * k] = gc[2 * k] + gs[2 * k + 1];
                dx[2 * k + 1] = gc[2 * k + 1] - gs[2 * k];
            }
        }
        RopeMode::Quarter => {
            let q = d / 4;
            for i in 0..q {
                dx[i] = gc[i] + gs[i + q];
                dx[i + q] = gc[i + q] - gs[i];
                dx[i + 2 * q] = gc[i + 2 * q] + gs[i + 3 * q];
                dx[i + 3 * q] = gc[i + 3 * q] - gs[i + 2 * q];
            }
        }
        RopeMode::InterleaveHalf => {
            let h = d / 2;
            for k in 0..h {
                dx[2 * k] = gc[k] + gs[k + h];
                dx[2 * k + 1] = gc[k + h] - gs[k];
            }
        }
    }
}

/// `out = a(x)·cos + b(x)·sin` with `cos`/`sin` broadcast to `x` (see [`rope_parts`]).
/// `out` may be `x` itself (the in-place `ApplyRotaryPosEmb`).
pub fn rope(x: &View, cos: &View, sin: &View, mode: RopeMode, out: &View) -> Result<(), String> {
    let xs = load(x)?;
    let c = load_as(cos, &x.shape)?;
    let s = load_as(sin, &x.shape)?;
    let d = *x.shape.last().unwrap_or(&1);
    if d == 0 {
        return Ok(());
    }
    let mut y = vec![0f64; xs.len()];
    let (mut a, mut b) = (vec![0f64; d], vec![0f64; d]);
    for r in 0..xs.len() / d {
        let sl = r * d..(r + 1) * d;
        rope_parts(mode, &xs[sl.clone()], &mut a, &mut b);
        for i in 0..d {
            y[r * d + i] = a[i] * c[r * d + i] + b[i] * s[r * d + i];
        }
    }
    store(y, out)
}

/// The backward of [`rope`]: `dx`, and when `x` is given `dcos = Σ dy·a(x)` and
/// `dsin = Σ dy·b(x)` over the dimensions `cos`/`sin` were broadcast along (zero without
/// `x`).
#[allow(clippy::too_many_arguments)]
pub fn rope_grad(
    dy: &View,
    cos: &View,
    sin: &View,
    x: Option<&View>,
    mode: RopeMode,
    dx: &View,
    dcos: &View,
    dsin: &View,
) -> Result<(), String> {
    let g = load(dy)?;
    let shape = dy.shape.clone();
    let c = load_as(cos, &shape)?;
    let s = load_as(sin, &shape)?;
    let d = *shape.last().unwrap_or(&1);
    if d == 0 {
        return Ok(());
    }
    let xs = match x {
        Some(v) => Some(load(v)?),
        None => None,
    };
    let n = g.len();
    let mut dxs = vec![0f64; n];
    let (mut dc, mut ds) = (vec![0f64; n], vec![0f64; n]);
    let (mut gc, mut gs) = (vec![0f64; d], vec![0f64; d]);
    let (mut a, mut b) = (vec![0f64; d], vec![0f64; d]);
    for r in 0..n / d {
        let o = r * d;
        for i in 0..d {
            gc[i] = g[o + i] * c[o + i];
            gs[i] = g[o + i] * s[o + i];
        }
        rope_parts_t(mode, &gc, &gs, &mut dxs[o..o + d]);
        if let Some(xs) = &xs {
            rope_parts(mode, &xs[o..o + d], &mut a, &mut b);
            for i in 0..d {
                dc[o + i] = g[o + i] * a[i];
                ds[o + i] = g[o + i] * b[i];
            }
        }
    }
    store(dxs, dx)?;
    if xs.is_none() {
        // without x the reference computes neither (its example passes empty tensors)
        return Ok(());
    }
    store(reduce_to(&dc, &shape, &dcos.shape), dcos)?;
    store(reduce_to(&ds, &shape, &dsin.shape), dsin)
}

// ---------------------------------------------------------------- SwiGLU

/// Split `shape` at `dim` into (outer, half of dim, inner).
fn halves(shape: &[usize], dim: usize) -> (usize, usize, usize) {
    let outer: usize = shape[..dim].iter().product();
    let inner: usize = shape[dim + 1..].iter().product();
    (outer, shape[dim] / 2, inner)
}

fn sigmoid(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

/// `out = silu(A) · B`, A and B the two halves of `x` along `dim`.
pub fn swiglu(x: &View, dim: usize, out: &View) -> Result<(), String> {
    let xs = load(x)?;
    let (outer, h, inner) = halves(&x.shape, dim);
    let mut y = vec![0f64; outer * h * inner];
    for o in 0..outer {
        for i in 0..h * inner {
            let a = xs[o * 2 * h * inner + i];
            let b = xs[o * 2 * h * inner + h * inner + i];
            y[o * h * inner + i] = a * sigmoid(a) * b;
        }
    }
    store(y, out)
}

/// The backward of [`swiglu`]: `dA = dy·B·(σ(A) + σ(A)(1-σ(A))A)`, `dB = dy·σ(A)·A`.
pub fn swiglu_grad(dy: &View, x: &View, dim: usize, out: &View) -> Result<(), String> {
    let g = load(dy)?;
    let xs = load(x)?;
    let (outer, h, inner) = halves(&x.shape, dim);
    let mut dx = vec![0f64; xs.len()];
    for o in 0..outer {
        for i in 0..h * inner {
            let ia = o * 2 * h * inner + i;
            let ib = ia + h * inner;
            let (a, b, d) = (xs[ia], xs[ib], g[o * h * inner + i]);
            let sg = sigmoid(a);
            dx[ia] = d * b * (sg + sg * (1.0 - sg) * a);
            dx[ib] = d * sg * a;
        }
    }
    store(dx, out)
}

// ---------------------------------------------------------------- flash attention

/// `inputLayout` of the flash-attention operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaLayout {
    Bsh,
    Sbh,
    Bsnd,
    Bnsd,
    /// The variable-length layout: `[T, N, D]`, the sequences packed one after another
    /// (their ends in [`VarLen`]).
    Tnd,
}

impl FaLayout {
    pub fn parse(s: &str) -> Option<FaLayout> {
        Some(match s {
            "BSH" => FaLayout::Bsh,
            "SBH" => FaLayout::Sbh,
            "BSND" => FaLayout::Bsnd,
            "BNSD" => FaLayout::Bnsd,
            "TND" => FaLayout::Tnd,
            _ => return None,
        })
    }

    /// `(batch, sequence, heads·dim or heads, dim)` positions, and the tensor rank.
    pub fn rank(self) -> usize {
        match self {
            FaLayout::Bsh | FaLayout::Sbh | FaLayout::Tnd => 3,
            _ => 4,
        }
    }

    /// (B, S, N, D) of a tensor of this layout with `n` heads (3-D layouts split H by `n`).
    pub fn dims(self, shape: &[usize], n: usize) -> (usize, usize, usize, usize) {
        match self {
            FaLayout::Bsh => (shape[0], shape[1], n, shape[2] / n.max(1)),
            FaLayout::Sbh => (shape[1], shape[0], n, shape[2] / n.max(1)),
            FaLayout::Bsnd => (shape[0], shape[1], shape[2], shape[3]),
            FaLayout::Bnsd => (shape[0], shape[2], shape[1], shape[3]),
            FaLayout::Tnd => (1, shape[0], shape[1], shape[2]),
        }
    }

    /// Offset of element (b, n, s, d) in a dense tensor of this layout with dims (B, S, N, D).
    pub(crate) fn off(
        self,
        dims: (usize, usize, usize, usize),
        b: usize,
        n: usize,
        s: usize,
    ) -> usize {
        let (bb, ss, nn, dd) = dims;
        match self {
            FaLayout::Bsh | FaLayout::Bsnd | FaLayout::Tnd => ((b * ss + s) * nn + n) * dd,
            FaLayout::Sbh => ((s * bb + b) * nn + n) * dd,
            FaLayout::Bnsd => ((b * nn + n) * ss + s) * dd,
        }
    }
}

/// The attributes of `aclnnFlashAttentionScore`/`…Grad`.
#[derive(Clone, Debug)]
pub struct FaParams {
    pub layout: FaLayout,
    pub head_num: usize,
    pub scale: f64,
    pub keep_prob: f64,
    pub pre_tokens: i64,
    pub next_tokens: i64,
    pub sparse_mode: i64,
    /// The layout of the output (the inference operators' `BNSD_BSND` writes BSND).
    pub out_layout: FaLayout,
    /// Valid query rows per batch (`actualSeqLengths` of the inference operators): later
    /// rows get zeros.
    pub q_lens: Option<Vec<usize>>,
    /// Valid keys per batch (`actualSeqLengthsKv`): later keys are masked out.
    pub kv_lens: Option<Vec<usize>>,
    /// `scale·q·kᵀ + pse` (the inference operators' `pseShift`, FlashAttentionScoreV2's
    /// pseType other than 1) instead of `scale·(q·kᵀ + pse)`.
    pub pse_after_scale: bool,
    /// The packed sequences of layout TND (`None` for the other layouts).
    pub varlen: Option<VarLen>,
    /// Bit of the dropout keep-mask where this call's scores start (a TND sequence's).
    pub drop_offset: usize,
    /// One attention-sink logit per query head (FlashAttentionScoreV3's `sinkOptional`):
    /// each row's softmax gets the extra term `e^(sink - m)`, `m = max(sink, max_j s_ij)`,
    /// whose column has no value (it only takes probability away from the keys).
    pub sink: Option<Vec<f64>>,
    /// Each batch's prefix length N of sparse modes 5 and 6: a query row sees the keys of the
    /// right-down causal pattern and the first N keys.
    pub prefix: Option<Vec<usize>>,
    /// The inference operators' full quantization of an INT8 query, key and value:
    /// `[dequantScale1, quantScale1, dequantScale2]` (see [`FullQuant`]).
    pub full_quant: Option<FullQuant>,
}

/// PromptFlashAttention's / FusedInferAttentionScore's full quantization (INT8 query, key
/// and value), per tensor, as the kernel computes it: the scores are `scale·deq1·(q·kᵀ)`
/// (+ pse); each row's exponentials `e = exp(s - max)` (in [0, 1]) are quantized to INT8 as
/// `round_half_even(e·qs1)` saturated; the output is `deq2·(e_q · v) / Σ e` (the sum of the
/// unquantized exponentials).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FullQuant {
    pub deq1: f64,
    pub qs1: f64,
    pub deq2: f64,
}

impl FullQuant {
    /// The three per-tensor factors from device memory: a dequant scale is FLOAT32, or
    /// UINT64/INT64 in aclnnTransQuantParam's layout (the float32 bits in bits 0-31).
    pub fn read(deq1: &View, qs1: &View, deq2: &View) -> Result<FullQuant, String> {
        let deq = |v: &View| -> Result<f64, String> {
            if matches!(v.dtype, DType::U64 | DType::I64) {
                let q: Vec<i64> = super::extra::load(v, DType::I64)?;
                Ok(super::quant::decode_quant_param(q[0] as u64).0 as f64)
            } else {
                Ok(load(v)?[0])
            }
        };
        Ok(FullQuant {
            deq1: deq(deq1)?,
            qs1: load(qs1)?[0],
            deq2: deq(deq2)?,
        })
    }
}

/// The sequences of a TND call: cumulative query and key/value ends
/// (`actualSeqQLen`/`actualSeqKvLen`), and whether softmaxMax/softmaxSum are laid out
/// `[T, N, 8]` (`same_as_input`) rather than `[N, T, 8]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarLen {
    pub q_ends: Vec<usize>,
    pub kv_ends: Vec<usize>,
    pub stats_tnd: bool,
}

impl VarLen {
    /// `(query start, query length, key start, key length)` of each sequence.
    pub fn seqs(&self) -> Vec<(usize, usize, usize, usize)> {
        let mut out = Vec::with_capacity(self.q_ends.len());
        let (mut q0, mut k0) = (0, 0);
        for (&q1, &k1) in self.q_ends.iter().zip(&self.kv_ends) {
            out.push((q0, q1 - q0, k0, k1 - k0));
            (q0, k0) = (q1, k1);
        }
        out
    }
}

impl FaParams {
    /// The training operator's attributes (same output layout, all rows and keys valid).
    pub fn training(
        layout: FaLayout,
        head_num: usize,
        scale: f64,
        keep_prob: f64,
        pre_tokens: i64,
        next_tokens: i64,
        sparse_mode: i64,
    ) -> FaParams {
        FaParams {
            layout,
            head_num,
            scale,
            keep_prob,
            pre_tokens,
            next_tokens,
            sparse_mode,
            out_layout: layout,
            q_lens: None,
            kv_lens: None,
            pse_after_scale: false,
            varlen: None,
            drop_offset: 0,
            sink: None,
            prefix: None,
            full_quant: None,
        }
    }
}

/// The shapes of one call: batch, query heads, key/value heads, query and key lengths, the
/// query/key head dim and the value head dim.
#[derive(Clone, Copy, Debug)]
pub struct FaDims {
    pub b: usize,
    pub n1: usize,
    pub n2: usize,
    pub s1: usize,
    pub s2: usize,
    pub d: usize,
    pub dv: usize,
}

impl FaDims {
    /// The dims from the shapes of query, key and value (checked by the caller's layout
    /// rules); `None` when they do not fit together.
    pub fn of(p: &FaParams, q: &[usize], k: &[usize], v: &[usize]) -> Result<FaDims, String> {
        let l = p.layout;
        let n1 = p.head_num;
        let (b, s1, qn, d) = l.dims(q, n1);
        if qn != n1 {
            return Err(format!(
                "query has {qn} heads in layout {l:?} but headNum is {n1}"
            ));
        }
        if d == 0 {
            return Err(format!("query {q:?} has head dim 0 with headNum {n1}"));
        }
        let (n2, kd) = match l {
            FaLayout::Bsh | FaLayout::Sbh => (k[2] / d, d),
            _ => {
                let (_, _, n, kd) = l.dims(k, 0);
                (n, kd)
            }
        };
        let (kb, s2, _, _) = l.dims(k, n2.max(1));
        if kd != d
            || n2 == 0
            || (matches!(l, FaLayout::Bsh | FaLayout::Sbh) && !k[2].is_multiple_of(d))
        {
            return Err(format!(
                "key {k:?} does not hold whole heads of dim {d} (query {q:?}, headNum {n1})"
            ));
        }
        if !n1.is_multiple_of(n2) {
            return Err(format!(
                "query heads {n1} are not a multiple of key heads {n2}"
            ));
        }
        let (vb, vs, vn, dv) = match l {
            FaLayout::Bsh | FaLayout::Sbh => {
                if !v[2].is_multiple_of(n2) {
                    return Err(format!("value {v:?} does not split into {n2} heads"));
                }
                l.dims(v, n2)
            }
            _ => l.dims(v, 0),
        };
        if kb != b || vb != b || vs != s2 || vn != n2 {
            return Err(format!(
                "query {q:?}, key {k:?} and value {v:?} do not agree on batch, key length \
                 or key heads in layout {l:?}"
            ));
        }
        Ok(FaDims {
            b,
            n1,
            n2,
            s1,
            s2,
            d,
            dv,
        })
    }

    /// The shape of a tensor in layout `l` with `n` heads of dim `d` and length `s`.
    pub fn shape(l: FaLayout, b: usize, s: usize, n: usize, d: usize) -> Vec<usize> {
        match l {
            FaLayout::Bsh => vec![b, s, n * d],
            FaLayout::Sbh => vec![s, b, n * d],
            FaLayout::Bsnd => vec![b, s, n, d],
            FaLayout::Bnsd => vec![b, n, s, d],
            // the batches are packed into T = s
            FaLayout::Tnd => vec![s, n, d],
        }
    }
}

/// Which (query i, key j) pairs are masked out for batch b, head n.
struct Masker {
    mask: Option<(Vec<f64>, [usize; 4])>,
    mode: i64,
    pre: i64,
    next: i64,
    s1: usize,
    s2: usize,
    q_lens: Option<Vec<usize>>,
    kv_lens: Option<Vec<usize>>,
    prefix: Option<Vec<usize>>,
}

impl Masker {
    fn new(atten_mask: Option<&View>, p: &FaParams, dims: &FaDims) -> Result<Masker, String> {
        // Modes 2-4 take the compressed 2048x2048 mask and build the pattern themselves.
        let mask = match atten_mask {
            Some(m) if matches!(p.sparse_mode, 0 | 1) => {
                let sh = &m.shape;
                let full: [usize; 4] = if sh.len() == 2 {
                    [1, 1, sh[0], sh[1]]
                } else {
                    [sh[0], sh[1], sh[2], sh[3]]
                };
                let m4 = View {
                    shape: full.to_vec(),
                    strides: if sh.len() == 2 {
                        vec![0, 0, m.strides[0], m.strides[1]]
                    } else {
                        m.strides.clone()
                    },
                    ..m.clone()
                };
                Some((load(&m4)?, full))
            }
            _ => None,
        };
        Ok(Masker {
            mask,
            mode: p.sparse_mode,
            pre: p.pre_tokens,
            next: p.next_tokens,
            s1: dims.s1,
            s2: dims.s2,
            q_lens: p.q_lens.clone(),
            kv_lens: p.kv_lens.clone(),
            prefix: p.prefix.clone(),
        })
    }

    fn masked(&self, b: usize, n: usize, i: usize, j: usize) -> bool {
        let beyond = |l: &Option<Vec<usize>>, x: usize| l.as_ref().is_some_and(|l| x >= l[b]);
        if beyond(&self.q_lens, i) || beyond(&self.kv_lens, j) {
            return true;
        }
        let (i, j) = (i as i64, j as i64);
        // The right-down corner is at the batch's actual lengths where they are given (the
        // inference operators' actualSeqLengths/Kv), else at the tensors' S1 and S2.
        let len = |l: &Option<Vec<usize>>, full: usize| l.as_ref().map_or(full, |l| l[b]) as i64;
        let shift = len(&self.kv_lens, self.s2) - len(&self.q_lens, self.s1);
        let by_mask = |me: &Masker| match &me.mask {
            Some((m, sh)) => {
                let bi = if sh[0] == 1 { 0 } else { b };
                let ni = if sh[1] == 1 { 0 } else { n };
                m[((bi * sh[1] + ni) * sh[2] + i as usize) * sh[3] + j as usize] != 0.0
            }
            None => false,
        };
        match self.mode {
            0 => {
                if self.mask.is_none() {
                    return false;
                }
                by_mask(self) || i - j > self.pre || j - i > self.next
            }
            1 => by_mask(self),
            2 => j > i,
            3 => j > i + shift,
            4 => {
                let ii = i + shift;
                j - ii > self.next || ii - j > self.pre
            }
            // Prefix: the right-down causal pattern plus the first N keys of the batch.
            5 | 6 => {
                let n = self.prefix.as_ref().map_or(0, |p| p[b]) as i64;
                j > i + shift && j >= n
            }
            _ => false,
        }
    }
}

/// Bit `i` of the packed keep-mask (1 keeps the element).
fn keep_bit(mask: &[f64], i: usize) -> f64 {
    ((mask[i / 8] as i64 >> (i % 8)) & 1) as f64
}

/// `c[m×n] = a[m×k] · b (k×n, or n×k when `bt`)`, all dense row-major f64.
fn gemm(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], bt: bool, c: &mut [f64]) {
    if m == 0 || n == 0 {
        return;
    }
    let (rsb, csb) = if bt { (1, k as isize) } else { (n as isize, 1) };
    // SAFETY: a, b and c are dense slices of exactly m·k, k·n and m·n elements, addressed
    // with the row/column strides given here.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            rsb,
            csb,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// `cᵀ`-style product: `c[m×n] = aᵀ · b` with `a` k×m and `b` k×n (dense row-major).
fn gemm_tn(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: as in `gemm`; `a` is read transposed through its strides.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            1,
            m as isize,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// Gather head (b, n) of a dense tensor in layout `l` (dims (B, S, N, D)) into `[S, D]`.
fn head(
    l: FaLayout,
    buf: &[f64],
    dims: (usize, usize, usize, usize),
    b: usize,
    n: usize,
) -> Vec<f64> {
    let (_, s, _, d) = dims;
    let mut out = vec![0f64; s * d];
    for i in 0..s {
        let o = l.off(dims, b, n, i);
        out[i * d..(i + 1) * d].copy_from_slice(&buf[o..o + d]);
    }
    out
}

/// Add `[S, D]` into head (b, n) of a dense tensor in layout `l`.
fn add_head(
    l: FaLayout,
    buf: &mut [f64],
    dims: (usize, usize, usize, usize),
    b: usize,
    n: usize,
    h: &[f64],
) {
    let (_, s, _, d) = dims;
    for i in 0..s {
        let o = l.off(dims, b, n, i);
        for (t, v) in buf[o..o + d].iter_mut().zip(&h[i * d..(i + 1) * d]) {
            *t += v;
        }
    }
}

/// The probabilities of one head: `p[i][j] = exp(s_ij - max_i) / sum_i` over the unmasked
/// `s = scale·(q·kᵀ + pse)`, with the row max and sum (a fully masked row has max -inf,
/// sum 0 and probabilities 0). With `stats`, the given max/sum are used instead of the
/// row's own (the backward from the forward's saved statistics).
#[allow(clippy::too_many_arguments)]
fn probs(
    dm: &FaDims,
    qh: &[f64],
    kh: &[f64],
    pse: Option<&[f64]>,
    scale: (f64, bool),
    masker: &Masker,
    b: usize,
    n: usize,
    stats: Option<(&[f64], &[f64])>,
    sink: Option<f64>,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (scale, after) = scale;
    let (s1, s2, d) = (dm.s1, dm.s2, dm.d);
    let mut sc = vec![0f64; s1 * s2];
    gemm(s1, d, s2, qh, kh, true, &mut sc);
    let mut mx = vec![f64::NEG_INFINITY; s1];
    let mut sm = vec![0f64; s1];
    for i in 0..s1 {
        let row = &mut sc[i * s2..(i + 1) * s2];
        for (j, v) in row.iter_mut().enumerate() {
            if masker.masked(b, n, i, j) {
                *v = f64::NAN;
                continue;
            }
            let ps = pse.map_or(0.0, |p| p[i * s2 + j]);
            *v = if after {
                scale * *v + ps
            } else {
                scale * (*v + ps)
            };
            if *v > mx[i] {
                mx[i] = *v;
            }
        }
        if let Some((m, s)) = stats {
            mx[i] = m[i];
            sm[i] = s[i];
        } else {
            if let Some(sk) = sink {
                mx[i] = mx[i].max(sk);
            }
            sm[i] = row
                .iter()
                .filter(|v| !v.is_nan())
                .map(|v| (v - mx[i]).exp())
                .sum::<f64>()
                + sink.map_or(0.0, |sk| (sk - mx[i]).exp());
        }
        for v in row.iter_mut() {
            *v = if v.is_nan() || sm[i] == 0.0 {
                0.0
            } else {
                (*v - mx[i]).exp() / sm[i]
            };
        }
    }
    (sc, mx, sm)
}

/// Per-call inputs shared by the forward and the backward.
struct FaInputs {
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    pse: Option<Vec<f64>>,
    drop: Option<Vec<f64>>,
    masker: Masker,
    qd: (usize, usize, usize, usize),
    kd: (usize, usize, usize, usize),
    vd: (usize, usize, usize, usize),
}

impl FaInputs {
    #[allow(clippy::too_many_arguments)]
    fn new(
        q: &View,
        k: &View,
        v: &View,
        pse: Option<&View>,
        drop_mask: Option<&View>,
        atten_mask: Option<&View>,
        p: &FaParams,
        dm: &FaDims,
    ) -> Result<FaInputs, String> {
        let pse = match pse {
            Some(x) => Some(load_as(x, &[dm.b, dm.n1, dm.s1, dm.s2])?),
            None => None,
        };
        let drop = match drop_mask {
            Some(m) if p.keep_prob < 1.0 => Some(load(m)?),
            _ => None,
        };
        Ok(FaInputs {
            q: load(q)?,
            k: load(k)?,
            v: load(v)?,
            pse,
            drop,
            masker: Masker::new(atten_mask, p, dm)?,
            qd: (dm.b, dm.s1, dm.n1, dm.d),
            kd: (dm.b, dm.s2, dm.n2, dm.d),
            vd: (dm.b, dm.s2, dm.n2, dm.dv),
        })
    }

    fn pse_head(&self, dm: &FaDims, b: usize, n: usize) -> Option<&[f64]> {
        let sz = dm.s1 * dm.s2;
        let o = (b * dm.n1 + n) * sz;
        self.pse.as_ref().map(|p| &p[o..o + sz])
    }

    /// Apply dropout to the probabilities of head (b, n) in place (scaled by 1/keep_prob).
    fn dropout(&self, dm: &FaDims, p: &FaParams, b: usize, n: usize, pr: &mut [f64]) {
        if p.keep_prob <= 0.0 {
            pr.fill(0.0);
        } else if let Some(m) = &self.drop {
            let base = p.drop_offset + (b * dm.n1 + n) * dm.s1 * dm.s2;
            for (i, v) in pr.iter_mut().enumerate() {
                *v *= keep_bit(m, base + i) / p.keep_prob;
            }
        }
    }
}

/// `attention_out = Dropout(Softmax(Mask(scale·(q·kᵀ + pse))), keep_prob) · v` per head, key
/// heads shared by `n1 / n2` query heads; `softmax_max`/`softmax_sum` `[B, N1, S1, 8]` get
/// each row's max and sum of exponentials (repeated 8 times, as CANN stores them).
#[allow(clippy::too_many_arguments)]
pub fn flash_attention(
    q: &View,
    k: &View,
    v: &View,
    pse: Option<&View>,
    drop_mask: Option<&View>,
    atten_mask: Option<&View>,
    p: &FaParams,
    softmax_max: &View,
    softmax_sum: &View,
    out: &View,
) -> Result<(), String> {
    if let Some(vl) = &p.varlen {
        let opt = [pse, drop_mask, atten_mask];
        return varlen_forward(vl, [q, k, v], opt, p, [softmax_max, softmax_sum, out]);
    }
    let dm = FaDims::of(p, &q.shape, &k.shape, &v.shape)?;
    let inp = FaInputs::new(q, k, v, pse, drop_mask, atten_mask, p, &dm)?;
    let od = (dm.b, dm.s1, dm.n1, dm.dv);
    let mut o = vec![0f64; dm.b * dm.s1 * dm.n1 * dm.dv];
    let ol = p.out_layout;
    let stat_len = dm.b * dm.n1 * dm.s1 * 8;
    let mut smax = vec![0f64; stat_len];
    let mut ssum = vec![0f64; stat_len];
    let group = dm.n1 / dm.n2;
    for b in 0..dm.b {
        for n in 0..dm.n1 {
            let mut qh = head(p.layout, &inp.q, inp.qd, b, n);
            if let Some(fq) = p.full_quant {
                qh.iter_mut().for_each(|x| *x *= fq.deq1);
            }
            let kh = head(p.layout, &inp.k, inp.kd, b, n / group);
            let vh = head(p.layout, &inp.v, inp.vd, b, n / group);
            let (mut pr, mx, sm) = probs(
                &dm,
                &qh,
                &kh,
                inp.pse_head(&dm, b, n),
                (p.scale, p.pse_after_scale),
                &inp.masker,
                b,
                n,
                None,
                p.sink.as_ref().map(|s| s[n]),
            );
            inp.dropout(&dm, p, b, n, &mut pr);
            if let Some(fq) = p.full_quant {
                for (i, row) in pr.chunks_mut(dm.s2.max(1)).enumerate() {
                    for x in row.iter_mut().filter(|x| **x != 0.0) {
                        let e = *x * sm[i];
                        *x = (e * fq.qs1).round_ties_even().clamp(-128.0, 127.0) * fq.deq2 / sm[i];
                    }
                }
            }
            let mut oh = vec![0f64; dm.s1 * dm.dv];
            gemm(dm.s1, dm.s2, dm.dv, &pr, &vh, false, &mut oh);
            add_head(ol, &mut o, od, b, n, &oh);
            for i in 0..dm.s1 {
                let base = ((b * dm.n1 + n) * dm.s1 + i) * 8;
                smax[base..base + 8].fill(mx[i]);
                ssum[base..base + 8].fill(sm[i]);
            }
        }
    }
    store(o, out)?;
    if softmax_max.numel() == stat_len {
        store(smax, softmax_max)?;
    }
    if softmax_sum.numel() == stat_len {
        store(ssum, softmax_sum)?;
    }
    Ok(())
}

/// The inference operators (`PromptFlashAttention`, `IncreFlashAttention`,
/// `FusedInferAttentionScore`): the forward of [`flash_attention`] without dropout; with
/// `lse` (`[B, N1, S1, 1]`), each row's log-sum-exp `max + ln(sum)` of the scaled scores.
#[allow(clippy::too_many_arguments)]
pub fn inference_attention(
    q: &View,
    k: &View,
    v: &View,
    pse: Option<&View>,
    atten_mask: Option<&View>,
    p: &FaParams,
    out: &View,
    lse: Option<&View>,
) -> Result<(), String> {
    let dm = FaDims::of(p, &q.shape, &k.shape, &v.shape)?;
    let n = dm.b * dm.n1 * dm.s1 * 8;
    let (mut mx, mut sm) = (vec![0f64; n], vec![0f64; n]);
    let shape = [dm.b, dm.n1, dm.s1, 8];
    let (mv, sv) = (
        View::of_slice(&mut mx, DType::F64, &shape),
        View::of_slice(&mut sm, DType::F64, &shape),
    );
    flash_attention(q, k, v, pse, None, atten_mask, p, &mv, &sv, out)?;
    if let Some(l) = lse {
        let vals: Vec<f64> = (0..n / 8).map(|r| mx[r * 8] + sm[r * 8].ln()).collect();
        store(vals, l)?;
    }
    Ok(())
}

/// A key or value of the inference operators as stored: a tensor of the query's layout or
/// a paged cache, holding the compute dtype or INT8 with an antiquant scale (and offset).
pub struct KvCache<'a> {
    /// The tensor: the query's layout, or (paged) `[blockNum, blockSize, N2·D]`,
    /// `[blockNum, N2, blockSize, D]` or NZ `[blockNum, N2, D/c0, blockSize, c0]`.
    pub data: &'a View,
    /// The per-batch tensors of a key/value list (`[1, S_b, …]` each, in the query's
    /// layout); empty for one tensor.
    pub batches: &'a [View],
    /// The paged cache's block table `[B, maxBlocks]` (INT32) and block size.
    pub paged: Option<(&'a View, usize)>,
    /// The antiquant scale and offset: `[N2, D]` (per-channel, per-tensor and per-head as
    /// broadcast views) or, with `per_token`, `[B, S]` (one per batch and key position).
    pub scale: Option<&'a View>,
    pub offset: Option<&'a View>,
    pub per_token: bool,
}

/// The logical `[B, S2, N2, D]` key or value of `c`, dense in `layout` (BSH, BSND or BNSD),
/// antiquantized as `(x + offset)·scale`. Positions at or past a batch's `lens` entry are
/// read as zeros (they are masked out), so their table entries and scales are not used.
pub fn kv_dense(
    c: &KvCache,
    layout: FaLayout,
    [b, s2, n2, d]: [usize; 4],
    lens: Option<&[usize]>,
) -> Result<Vec<f64>, String> {
    let list: Vec<Vec<f64>> = c.batches.iter().map(load).collect::<Result<_, _>>()?;
    let raw = if list.is_empty() {
        load(c.data)?
    } else {
        Vec::new()
    };
    let dims = (b, s2, n2, d);
    let sc = c.scale.map(load).transpose()?;
    let of = c.offset.map(load).transpose()?;
    let s_cols = c.scale.map(|v| v.shape[1]).unwrap_or(0);
    let mut out = vec![0f64; b * s2 * n2 * d];
    let table = match c.paged {
        Some((t, bs)) => Some((load(t)?, t.shape[1], bs)),
        None => None,
    };
    let bsz = table.as_ref().map_or(0, |t| t.2);
    let heads_first = c.data.shape.len() >= 4;
    // NZ: element e of a token row is at (e / c0)·blockSize·c0 + e % c0 from the row.
    let nz = (c.paged.is_some() && c.data.shape.len() == 5).then(|| c.data.shape[4]);
    let blocks = c.data.shape[0];
    for bi in 0..b {
        let valid = lens.map_or(s2, |l| l[bi].min(s2));
        for s in 0..valid {
            for n in 0..n2 {
                let src = match &table {
                    None if !list.is_empty() => {
                        let sb = layout.dims(&c.batches[bi].shape, n2).1;
                        layout.off((1, sb, n2, d), 0, n, s)
                    }
                    None => layout.off(dims, bi, n, s),
                    Some((t, cols, bs)) => {
                        let blk = t[bi * cols + s / bs];
                        if blk < 0.0 || blk as usize >= blocks {
                            return Err(format!(
                                "blockTable[{bi}][{}] = {blk} is not a block of the cache \
                                 (it has {blocks})",
                                s / bs
                            ));
                        }
                        let (blk, w) = (blk as usize, s % bs);
                        if let Some(c0) = nz {
                            (blk * n2 + n) * bs * d + w * c0
                        } else if heads_first {
                            ((blk * n2 + n) * bs + w) * d
                        } else {
                            (blk * bs + w) * n2 * d + n * d
                        }
                    }
                };
                let dst = layout.off(dims, bi, n, s);
                for e in 0..d {
                    let at = src + nz.map_or(e, |c0| (e / c0) * bsz * c0 + e % c0);
                    let mut x = if list.is_empty() {
                        raw[at]
                    } else {
                        list[bi][at]
                    };
                    if let Some(sc) = &sc {
                        let i = if c.per_token {
                            if s >= s_cols {
                                return Err(format!(
                                    "the per-token antiquant scale has {s_cols} positions; key \
                                     position {s} has none"
                                ));
                            }
                            bi * s_cols + s
                        } else {
                            n * d + e
                        };
                        x = (x + of.as_ref().map_or(0.0, |o| o[i])) * sc[i];
                    }
                    out[dst + e] = x;
                }
            }
        }
    }
    Ok(out)
}

/// A key or value with the shared prefix before it: the data, its shape and each batch's
/// valid length.
pub type Prefixed = (Vec<f64>, Vec<usize>, Vec<usize>);

/// FusedInferAttentionScore's shared prefix (`keySharedPrefix`/`valueSharedPrefix`): the
/// dense key or value `x` (`[B, S2, …]` in `layout`, `n2` heads) with the first `sp_len`
/// positions of `prefix` (`[1, Sp, …]`, same layout) before each batch's valid positions
/// (`lens[b]`, or all S2). Returns the `[B, Sp + S2, …]` data (positions after a batch's
/// valid ones are zeros), its shape, and each batch's valid length `sp_len + lens[b]`.
pub fn with_shared_prefix(
    x: &View,
    prefix: &View,
    sp_len: usize,
    layout: FaLayout,
    n2: usize,
    lens: Option<&[usize]>,
) -> Result<Prefixed, String> {
    let (b, s2, n, d) = layout.dims(&x.shape, n2);
    let (_, sp, _, _) = layout.dims(&prefix.shape, n2);
    if sp_len > sp {
        return Err(format!(
            "actualSharedPrefixLen {sp_len} is more than the shared prefix's {sp} positions"
        ));
    }
    let (xv, pv) = (load(x)?, load(prefix)?);
    let st = sp + s2;
    let shape = FaDims::shape(layout, b, st, n, d);
    let mut out = vec![0f64; b * st * n * d];
    let mut valid = Vec::with_capacity(b);
    for bi in 0..b {
        let len = lens.map_or(s2, |l| l[bi].min(s2));
        for h in 0..n {
            for s in 0..sp_len + len {
                let src = if s < sp_len {
                    &pv[layout.off((1, sp, n, d), 0, h, s)..][..d]
                } else {
                    &xv[layout.off((b, s2, n, d), bi, h, s - sp_len)..][..d]
                };
                let at = layout.off((b, st, n, d), bi, h, s);
                out[at..at + d].copy_from_slice(src);
            }
        }
        valid.push(sp_len + len);
    }
    Ok((out, shape, valid))
}

/// [`inference_attention`] over stored key/value ([`KvCache`]): `kv_dims` are the logical
/// `[B, S2, N2, D]` of the key and of the value (the value's D may differ). With `post`
/// (`quantScale2` and `quantOffset2` as `[N1, Dv]` views) the output is INT8:
/// `round_half_even(attention·scale + offset)` saturated to [-128, 127], from the unrounded
/// attention.
#[allow(clippy::too_many_arguments)]
pub fn inference_attention_cached(
    q: &View,
    k: &KvCache,
    v: &KvCache,
    kv_dims: [[usize; 4]; 2],
    pse: Option<&View>,
    atten_mask: Option<&View>,
    p: &FaParams,
    out: &View,
    lse: Option<&View>,
    post: Option<(&View, Option<&View>)>,
    rope: Option<(&View, &KvCache, usize, usize)>,
) -> Result<(), String> {
    let lens = p.kv_lens.as_deref();
    let (mut kb, mut vb) = match (k.paged, k.scale, v.paged, v.scale) {
        (None, None, None, None) if k.batches.is_empty() => (load(k.data)?, load(v.data)?),
        _ => (
            kv_dense(k, p.layout, kv_dims[0], lens)?,
            kv_dense(v, p.layout, kv_dims[1], lens)?,
        ),
    };
    let shape = |[b, s, n, d]: [usize; 4]| FaDims::shape(p.layout, b, s, n, d);
    let (ks, vs) = (shape(kv_dims[0]), shape(kv_dims[1]));
    let kview = View::of_slice(&mut kb, DType::F64, &ks);
    let vview = View::of_slice(&mut vb, DType::F64, &vs);
    // MLA: the rope parts (the key's read through the same cache) appended to every head
    // row of the query and the key, as the dense path does.
    // The buffers behind the roped views (declared here so they outlive them).
    let (mut qrb, mut krb): (Vec<f64>, Vec<f64>);
    let (qv, kview) = match rope {
        None => (q.clone(), kview),
        Some((qr, kr, d, dr)) => {
            let [b, s2, n2, _] = kv_dims[0];
            let mut kd = kv_dense(kr, p.layout, [b, s2, n2, dr], lens)?;
            let krv = View::of_slice(&mut kd, DType::F64, &shape([b, s2, n2, dr]));
            let (qx, qxs) = super::attention_new::with_rope(q, qr, d, dr)?;
            let (kx, kxs) = super::attention_new::with_rope(&kview, &krv, d, dr)?;
            (qrb, krb) = (qx, kx);
            (
                View::of_slice(&mut qrb, DType::F64, &qxs),
                View::of_slice(&mut krb, DType::F64, &kxs),
            )
        }
    };
    let q = &qv;
    let Some((qs, qo)) = post else {
        return inference_attention(q, &kview, &vview, pse, atten_mask, p, out, lse);
    };
    let mut ob = vec![0f64; out.numel()];
    let oview = View::of_slice(&mut ob, DType::F64, &out.shape);
    inference_attention(q, &kview, &vview, pse, atten_mask, p, &oview, lse)?;
    let sc = load(qs)?;
    let of = qo.map(load).transpose()?;
    let dv = kv_dims[1][3];
    let (b, n1) = (kv_dims[0][0], p.head_num);
    let s1 = ob.len() / (b * n1 * dv).max(1);
    let dims = (b, s1, n1, dv);
    let mut res = vec![0f64; ob.len()];
    for bi in 0..b {
        for n in 0..n1 {
            for s in 0..s1 {
                let at = p.out_layout.off(dims, bi, n, s);
                for e in 0..dv {
                    let c = n * dv + e;
                    let x = ob[at + e] * sc[c] + of.as_ref().map_or(0.0, |o| o[c]);
                    res[at + e] = x.round_ties_even().clamp(-128.0, 127.0);
                }
            }
        }
    }
    store(res, out)
}

/// The saved statistics and forward output the backward may be given.
pub struct FaSaved<'a> {
    pub softmax_max: Option<&'a View>,
    pub softmax_sum: Option<&'a View>,
    pub attention_in: Option<&'a View>,
}

/// The backward of [`flash_attention`]: `dq`, `dk`, `dv` (layouts of q, k, v) and, with a
/// `pse`, `dpse` (its shape, summed over broadcast dimensions). The probabilities come from
/// the saved `softmax_max`/`softmax_sum` when given (recomputed otherwise), `D = rowsum(dy ·
/// attention_in)` from the saved output when given.
#[allow(clippy::too_many_arguments)]
pub fn flash_attention_grad(
    q: &View,
    k: &View,
    v: &View,
    dy: &View,
    pse: Option<&View>,
    drop_mask: Option<&View>,
    atten_mask: Option<&View>,
    saved: &FaSaved,
    p: &FaParams,
    dq: &View,
    dk: &View,
    dv: &View,
    dpse: Option<&View>,
) -> Result<(), String> {
    if let Some(vl) = &p.varlen {
        let ins = [q, k, v, dy];
        return varlen_grad(
            vl,
            ins,
            [pse, drop_mask, atten_mask],
            saved,
            p,
            [dq, dk, dv],
            dpse,
        );
    }
    let dm = FaDims::of(p, &q.shape, &k.shape, &v.shape)?;
    let inp = FaInputs::new(q, k, v, pse, drop_mask, atten_mask, p, &dm)?;
    let od = (dm.b, dm.s1, dm.n1, dm.dv);
    let g = load(dy)?;
    let stat_len = dm.b * dm.n1 * dm.s1 * 8;
    let stat = |v: Option<&View>| -> Result<Option<Vec<f64>>, String> {
        match v {
            Some(v) if v.numel() == stat_len => Ok(Some(load(v)?)),
            _ => Ok(None),
        }
    };
    let smax = stat(saved.softmax_max)?;
    let ssum = stat(saved.softmax_sum)?;
    let o_saved = match saved.attention_in {
        Some(a) if a.numel() == g.len() => Some(load(a)?),
        _ => None,
    };
    let mut dqs = vec![0f64; inp.q.len()];
    let mut dks = vec![0f64; inp.k.len()];
    let mut dvs = vec![0f64; inp.v.len()];
    let mut dpses = inp.pse.as_ref().map(|x| vec![0f64; x.len()]);
    let group = dm.n1 / dm.n2;
    let (s1, s2) = (dm.s1, dm.s2);
    for b in 0..dm.b {
        for n in 0..dm.n1 {
            let qh = head(p.layout, &inp.q, inp.qd, b, n);
            let kh = head(p.layout, &inp.k, inp.kd, b, n / group);
            let vh = head(p.layout, &inp.v, inp.vd, b, n / group);
            let gh = head(p.layout, &g, od, b, n);
            let stats: Option<(Vec<f64>, Vec<f64>)> = match (&smax, &ssum) {
                (Some(m), Some(s)) => {
                    let base = (b * dm.n1 + n) * s1 * 8;
                    Some((
                        (0..s1).map(|i| m[base + i * 8]).collect(),
                        (0..s1).map(|i| s[base + i * 8]).collect(),
                    ))
                }
                _ => None,
            };
            let (pr, _, _) = probs(
                &dm,
                &qh,
                &kh,
                inp.pse_head(&dm, b, n),
                (p.scale, p.pse_after_scale),
                &inp.masker,
                b,
                n,
                stats.as_ref().map(|(m, s)| (m.as_slice(), s.as_slice())),
                p.sink.as_ref().map(|s| s[n]),
            );
            let mut pd = pr.clone();
            inp.dropout(&dm, p, b, n, &mut pd);
            // dV += P_dropᵀ · dO
            let mut dvh = vec![0f64; s2 * dm.dv];
            gemm_tn(s2, s1, dm.dv, &pd, &gh, &mut dvh);
            add_head(p.layout, &mut dvs, inp.vd, b, n / group, &dvh);
            // dP = (dO · Vᵀ) ⊙ dropout
            let mut dp = vec![0f64; s1 * s2];
            gemm(s1, dm.dv, s2, &gh, &vh, true, &mut dp);
            if p.keep_prob <= 0.0 {
                dp.fill(0.0);
            } else if let Some(m) = &inp.drop {
                let base = p.drop_offset + (b * dm.n1 + n) * s1 * s2;
                for (i, x) in dp.iter_mut().enumerate() {
                    *x *= keep_bit(m, base + i) / p.keep_prob;
                }
            }
            // D_i = Σ_j P_ij dP_ij (= rowsum(dO ⊙ O))
            let dsum: Vec<f64> = match &o_saved {
                Some(o) => {
                    let oh = head(p.layout, o, od, b, n);
                    (0..s1)
                        .map(|i| {
                            (0..dm.dv)
                                .map(|c| oh[i * dm.dv + c] * gh[i * dm.dv + c])
                                .sum()
                        })
                        .collect()
                }
                None => (0..s1)
                    .map(|i| (0..s2).map(|j| pr[i * s2 + j] * dp[i * s2 + j]).sum())
                    .collect(),
            };
            // dS = P ⊙ (dP - D)
            let mut ds = vec![0f64; s1 * s2];
            for i in 0..s1 {
                for j in 0..s2 {
                    ds[i * s2 + j] = pr[i * s2 + j] * (dp[i * s2 + j] - dsum[i]);
                }
            }
            if let Some(dp_all) = dpses.as_mut() {
                // d(scale·(qkᵀ + pse))/dpse = scale; d(scale·qkᵀ + pse)/dpse = 1
                let k = if p.pse_after_scale { 1.0 } else { p.scale };
                let o = (b * dm.n1 + n) * s1 * s2;
                for (t, x) in dp_all[o..o + s1 * s2].iter_mut().zip(&ds) {
                    *t += k * x;
                }
            }
            // dQ = scale · dS · K, dK += scale · dSᵀ · Q
            let mut dqh = vec![0f64; s1 * dm.d];
            gemm(s1, s2, dm.d, &ds, &kh, false, &mut dqh);
            dqh.iter_mut().for_each(|x| *x *= p.scale);
            add_head(p.layout, &mut dqs, inp.qd, b, n, &dqh);
            let mut dkh = vec![0f64; s2 * dm.d];
            gemm_tn(s2, s1, dm.d, &ds, &qh, &mut dkh);
            dkh.iter_mut().for_each(|x| *x *= p.scale);
            add_head(p.layout, &mut dks, inp.kd, b, n / group, &dkh);
        }
    }
    store(dqs, dq)?;
    store(dks, dk)?;
    store(dvs, dv)?;
    if let (Some(full), Some(out)) = (dpses, dpse) {
        if out.numel() > 0 {
            let red = reduce_to(&full, &[dm.b, dm.n1, dm.s1, dm.s2], &out.shape);
            store(red, out)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- variable length (TND)

/// Rows `start..start + len` of a `[T, N, D]` tensor, seen as BSND `[1, len, N, D]`.
fn rows(t: &View, start: usize, len: usize) -> View {
    let st = &t.strides;
    View {
        ptr: t
            .ptr
            .wrapping_offset(start as isize * st[0] * t.esize() as isize),
        shape: vec![1, len, t.shape[1], t.shape[2]],
        strides: vec![0, st[0], st[1], st[2]],
        ..t.clone()
    }
}

/// Batch `b` of a 4-D `[B|1, ...]` tensor as `[1, ...]`, its last two dims cut to `s1`×`s2`
/// (the top-left block; `None` keeps them).
fn batch_of(t: &View, b: usize, cut: Option<(usize, usize)>) -> View {
    let st = &t.strides;
    let bi = if t.shape[0] == 1 { 0 } else { b };
    let (s1, s2) = cut.unwrap_or((t.shape[2], t.shape[3]));
    View {
        ptr: t
            .ptr
            .wrapping_offset(bi as isize * st[0] * t.esize() as isize),
        shape: vec![1, t.shape[1], s1, s2],
        strides: vec![0, st[1], st[2], st[3]],
        ..t.clone()
    }
}

/// The attention mask of sequence `b` (`s1`×`s2`): the top-left block of a full mask
/// (`[S1, S2]` or `[B|1, N|1, S1, S2]`); the compressed mask of the modes 2-8 as it is.
fn seq_mask(m: &View, b: usize, s1: usize, s2: usize, sparse: i64) -> View {
    if sparse >= 2 {
        return m.clone();
    }
    if m.shape.len() == 2 {
        View {
            shape: vec![s1, s2],
            ..m.clone()
        }
    } else {
        batch_of(m, b, Some((s1, s2)))
    }
}

/// The attributes of sequence `i` run alone as BSND: sparse mode 7 (8) is band (mode 4) for
/// the last (first) sequence that is not empty and right-down (left-up) causal for the
/// others; its dropout bits start after the earlier sequences' `n1·s1·s2`.
fn seq_params(
    p: &FaParams,
    seqs: &[(usize, usize, usize, usize)],
    i: usize,
    n1: usize,
) -> FaParams {
    let full: Vec<usize> = (0..seqs.len())
        .filter(|&j| seqs[j].1 > 0 && seqs[j].3 > 0)
        .collect();
    let sparse_mode = match p.sparse_mode {
        7 if full.last() == Some(&i) => 4,
        7 => 3,
        8 if full.first() == Some(&i) => 4,
        8 => 2,
        m => m,
    };
    let before: usize = seqs[..i].iter().map(|s| n1 * s.1 * s.3).sum();
    FaParams {
        layout: FaLayout::Bsnd,
        out_layout: FaLayout::Bsnd,
        sparse_mode,
        varlen: None,
        drop_offset: p.drop_offset + before,
        ..p.clone()
    }
}

/// Index of softmaxMax/softmaxSum row `row`, head `n` in `[N, T, 8]` (or `[T, N, 8]`).
fn stat_at(vl: &VarLen, t: usize, n1: usize, n: usize, row: usize) -> usize {
    if vl.stats_tnd {
        (row * n1 + n) * 8
    } else {
        (n * t + row) * 8
    }
}

/// [`flash_attention`] of layout TND: each sequence alone, as one BSND batch.
fn varlen_forward(
    vl: &VarLen,
    qkv: [&View; 3],
    opt: [Option<&View>; 3],
    p: &FaParams,
    outs: [&View; 3],
) -> Result<(), String> {
    let [q, k, v] = qkv;
    let [pse, drop, mask] = opt;
    let [smax, ssum, out] = outs;
    let (t, n1) = (q.shape[0], q.shape[1]);
    let mut stats = [vec![0f64; t * n1 * 8], vec![0f64; t * n1 * 8]];
    let seqs = vl.seqs();
    for (b, &(q0, s1, k0, s2)) in seqs.iter().enumerate() {
        let ps = seq_params(p, &seqs, b, n1);
        let mut part = [vec![0f64; n1 * s1 * 8], vec![0f64; n1 * s1 * 8]];
        let sh = [1, n1, s1, 8];
        let mv = View::of_slice(&mut part[0], DType::F64, &sh);
        let sv = View::of_slice(&mut part[1], DType::F64, &sh);
        flash_attention(
            &rows(q, q0, s1),
            &rows(k, k0, s2),
            &rows(v, k0, s2),
            pse.map(|x| batch_of(x, b, None)).as_ref(),
            drop,
            mask.map(|m| seq_mask(m, b, s1, s2, p.sparse_mode)).as_ref(),
            &ps,
            &mv,
            &sv,
            &rows(out, q0, s1),
        )?;
        for (full, part) in stats.iter_mut().zip(&part) {
            for n in 0..n1 {
                for i in 0..s1 {
                    let at = stat_at(vl, t, n1, n, q0 + i);
                    let from = (n * s1 + i) * 8;
                    full[at..at + 8].copy_from_slice(&part[from..from + 8]);
                }
            }
        }
    }
    for (full, v) in stats.into_iter().zip([smax, ssum]) {
        if v.numel() == full.len() {
            store(full, v)?;
        }
    }
    Ok(())
}

/// [`flash_attention_grad`] of layout TND: each sequence alone, as one BSND batch; a
/// broadcast pse's gradient sums over the sequences.
fn varlen_grad(
    vl: &VarLen,
    qkvg: [&View; 4],
    opt: [Option<&View>; 3],
    saved: &FaSaved,
    p: &FaParams,
    outs: [&View; 3],
    dpse: Option<&View>,
) -> Result<(), String> {
    let [q, k, v, dy] = qkvg;
    let [pse, drop, mask] = opt;
    let [dq, dk, dv] = outs;
    let (t, n1) = (q.shape[0], q.shape[1]);
    let stat = |v: Option<&View>| -> Result<Option<Vec<f64>>, String> {
        match v {
            Some(v) if v.numel() == t * n1 * 8 => Ok(Some(load(v)?)),
            _ => Ok(None),
        }
    };
    let (smax, ssum) = (stat(saved.softmax_max)?, stat(saved.softmax_sum)?);
    let dpse = dpse.filter(|d| d.numel() > 0 && pse.is_some());
    let mut dpse_all = dpse.map(|d| vec![0f64; d.numel()]);
    let seqs = vl.seqs();
    for (b, &(q0, s1, k0, s2)) in seqs.iter().enumerate() {
        let ps = seq_params(p, &seqs, b, n1);
        let sh = [1, n1, s1, 8];
        let mut part: Vec<Vec<f64>> = [&smax, &ssum]
            .iter()
            .map(|full| match full {
                Some(full) => (0..n1 * s1 * 8)
                    .map(|x| {
                        let (n, i, c) = (x / (s1 * 8), x / 8 % s1, x % 8);
                        full[stat_at(vl, t, n1, n, q0 + i) + c]
                    })
                    .collect(),
                None => Vec::new(),
            })
            .collect();
        let views: Vec<View> = part
            .iter_mut()
            .map(|x| {
                let shape: &[usize] = if x.is_empty() { &[0] } else { &sh };
                View::of_slice(x, DType::F64, shape)
            })
            .collect();
        let pick = |i: usize| (!part[i].is_empty()).then(|| &views[i]);
        let ain = saved.attention_in.map(|a| rows(a, q0, s1));
        let seq_saved = FaSaved {
            softmax_max: pick(0),
            softmax_sum: pick(1),
            attention_in: ain.as_ref(),
        };
        let pse_b = pse.map(|x| batch_of(x, b, None));
        let mut dpse_b = pse_b.as_ref().map(|x| vec![0f64; x.numel()]);
        let dpse_v = dpse_b
            .as_mut()
            .filter(|_| dpse.is_some())
            .map(|x| View::of_slice(x, DType::F64, &pse_b.as_ref().unwrap().shape));
        flash_attention_grad(
            &rows(q, q0, s1),
            &rows(k, k0, s2),
            &rows(v, k0, s2),
            &rows(dy, q0, s1),
            pse_b.as_ref(),
            drop,
            mask.map(|m| seq_mask(m, b, s1, s2, p.sparse_mode)).as_ref(),
            &seq_saved,
            &ps,
            &rows(dq, q0, s1),
            &rows(dk, k0, s2),
            &rows(dv, k0, s2),
            dpse_v.as_ref(),
        )?;
        if let (Some(all), Some(d), Some(part)) = (dpse_all.as_mut(), dpse, dpse_b) {
            let base = if d.shape[0] == 1 { 0 } else { b * part.len() };
            for (x, y) in all[base..base + part.len()].iter_mut().zip(&part) {
                *x += y;
            }
        }
    }
    if let (Some(all), Some(d)) = (dpse_all, dpse) {
        store(all, d)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_to_sums_broadcast_dims() {
        let full: Vec<f64> = (0..12).map(|v| v as f64).collect();
        assert_eq!(
            reduce_to(&full, &[2, 3, 2], &[1, 3, 1]),
            vec![14.0, 22.0, 30.0]
        );
        assert_eq!(reduce_to(&full, &[2, 3, 2], &[2]), vec![30.0, 36.0]);
    }

    #[test]
    fn rope_parts_transpose() {
        // <b(x), g> == <x, bᵀ(g)> for every mode.
        let x: Vec<f64> = (0..8).map(|v| v as f64 + 1.0).collect();
        let g: Vec<f64> = (0..8).map(|v| (v as f64) * 0.5 - 1.0).collect();
        for mode in [
            RopeMode::Half,
            RopeMode::Interleave,
            RopeMode::Quarter,
            RopeMode::InterleaveHalf,
        ] {
            let (mut a, mut b) = (vec![0.0; 8], vec![0.0; 8]);
            rope_parts(mode, &x, &mut a, &mut b);
            let zero = vec![0.0; 8];
            let (mut ta, mut tb) = (vec![0.0; 8], vec![0.0; 8]);
            rope_parts_t(mode, &g, &zero, &mut ta);
            rope_parts_t(mode, &zero, &g, &mut tb);
            let dot = |u: &[f64], w: &[f64]| u.iter().zip(w).map(|(p, q)| p * q).sum::<f64>();
            assert_eq!(dot(&a, &g), dot(&x, &ta), "{mode:?} a");
            assert_eq!(dot(&b, &g), dot(&x, &tb), "{mode:?} b");
        }
    }
}
