//! Quantisation and MoE routing for large-model inference: `ascend_quant` (static
//! quantisation `round(x * scale + offset)` along one axis), `dynamic_quant` (per-row
//! symmetric or asymmetric quantisation with an optional smoothing vector) and
//! `moe_gating_topk_softmax` (softmax over the experts, then the top k with their indices).
//!
//! Values compute in float32 as the reference's formulas read (`x * scale`, `x / scale`),
//! rounded once to an integer by the chosen mode (`round` is half-to-even, the hardware's
//! `rint` cast) and saturated to the int8 range; a NaN stores 0. Softmax sums in float64.

use super::dtype::DType;
use super::extra::{load, store};
use super::view::{Scratch, View};

/// How a quantised value becomes an integer (`roundMode` of AscendQuant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// Half to even (`rint`).
    Even,
    Floor,
    Ceil,
    Trunc,
}

impl Round {
    /// The reference's names: "round", "floor", "ceil", "trunc".
    pub fn parse(s: &str) -> Option<Round> {
        match s {
            "round" => Some(Round::Even),
            "floor" => Some(Round::Floor),
            "ceil" => Some(Round::Ceil),
            "trunc" => Some(Round::Trunc),
            _ => None,
        }
    }

    fn apply(self, v: f32) -> f32 {
        match self {
            Round::Even => v.round_ties_even(),
            Round::Floor => v.floor(),
            Round::Ceil => v.ceil(),
            Round::Trunc => v.trunc(),
        }
    }
}

/// `v` rounded by `mode` and saturated to int8 (NaN → 0), as f64 for the store.
pub(crate) fn to_i8(v: f32, mode: Round) -> f64 {
    if v.is_nan() {
        return 0.0;
    }
    mode.apply(v).clamp(-128.0, 127.0) as f64
}

/// The index into a per-axis parameter of `n` elements (1 = broadcast) for each element
/// of a row-major tensor of `shape`, along `axis`.
pub(crate) fn axis_index(shape: &[usize], axis: usize, n: usize) -> impl Fn(usize) -> usize {
    let inner: usize = shape[axis + 1..].iter().product();
    let dim = shape[axis];
    move |i| {
        if n == 1 {
            0
        } else {
            (i / inner.max(1)) % dim.max(1)
        }
    }
}

/// `y = round(x * scale + offset)` (`scale * scale` when `sqrt_mode`) into the int8 `y`;
/// `scale` and `offset` hold `x.shape[axis]` or 1 elements (any shape with that many).
pub fn ascend_quant(
    x: &View,
    scale: &View,
    offset: Option<&View>,
    axis: usize,
    sqrt_mode: bool,
    mode: Round,
    y: &View,
) -> Result<(), String> {
    if y.dtype != DType::I8 {
        return Err(format!("ascend_quant: y must be int8, not {}", y.dtype));
    }
    let xs: Vec<f32> = load(x, DType::F32)?;
    let s: Vec<f32> = load(scale, DType::F32)?;
    let o: Vec<f32> = match offset {
        Some(o) => load(o, DType::F32)?,
        None => vec![0.0],
    };
    let is = axis_index(&x.shape, axis, s.len());
    let io = axis_index(&x.shape, axis, o.len());
    let out: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let sc = if sqrt_mode {
                s[is(i)] * s[is(i)]
            } else {
                s[is(i)]
            };
            to_i8(v * sc + o[io(i)], mode)
        })
        .collect();
    store(out, DType::F64, y)
}

/// Per-row dynamic quantisation of `x` (rows along the last dimension) into the int8 `y`:
/// `input = x * smooth` (when given), then symmetric (`offset` None): `scale = max|input| /
/// 127`, `y = round(input / scale)`; asymmetric: `scale = (max - min) / 255`, `offset = 127
/// - max / scale`, `y = round(input / scale + offset)`. A row whose scale is 0 quantises to
/// `offset` rounded (0 when symmetric). `scale` and `offset` get one float per row.
pub fn dynamic_quant(
    x: &View,
    smooth: Option<&View>,
    y: &View,
    scale: &View,
    offset: Option<&View>,
) -> Result<(), String> {
    dynamic_quant_v2(x, smooth, None, y, scale, offset)
}

/// The expert of each of `rows` rows by a cumulative `group_index` (DynamicQuantV2's MoE
/// form): row r takes the first expert whose end exceeds r; rows past the last end keep the
/// last expert (the reference leaves them undefined).
pub(crate) fn expert_of_rows(group_index: &[i64], rows: usize) -> Vec<usize> {
    let last = group_index.len().saturating_sub(1);
    (0..rows)
        .map(|r| {
            group_index
                .iter()
                .position(|&end| end > r as i64)
                .unwrap_or(last)
        })
        .collect()
}

/// DynamicQuantV2: [`dynamic_quant`] with per-expert smoothing (`group_index` INT32 of E
/// cumulative row ends, `smooth` `[E, h]`, [`expert_of_rows`]) and the int4 output: an INT32
/// `y` of h / 8 words a row receives eight int4 values each (low nibble first), with the
/// int4 range: symmetric `scale = max|input| / 7`, saturated to [-8, 7]; asymmetric `scale =
/// (max - min) / 15`, `offset = 7 - max / scale`.
pub fn dynamic_quant_v2(
    x: &View,
    smooth: Option<&View>,
    group_index: Option<&View>,
    y: &View,
    scale: &View,
    offset: Option<&View>,
) -> Result<(), String> {
    let int4 = match y.dtype {
        DType::I8 => false,
        DType::I32 => true,
        d => {
            return Err(format!(
                "dynamic_quant: y must be int8 or int32 (int4), not {d}"
            ))
        }
    };
    let (qmax, qmin) = if int4 {
        (7f32, -8f32)
    } else {
        (127f32, -128f32)
    };
    let xs: Vec<f32> = load(x, DType::F32)?;
    let h = x.shape.last().copied().unwrap_or(1);
    let rows = xs.len().checked_div(h).unwrap_or(0);
    let sm: Option<Vec<f32>> = match smooth {
        Some(s) => Some(load(s, DType::F32)?),
        None => None,
    };
    let experts = match group_index {
        Some(g) => Some(expert_of_rows(&load::<i64>(g, DType::I64)?, rows)),
        None => None,
    };
    let mut out = vec![0i64; xs.len()];
    let mut scales = vec![0f32; rows];
    let mut offsets = vec![0f32; rows];
    let mut row = vec![0f32; h];
    for r in 0..rows {
        let base = experts.as_ref().map_or(0, |e| e[r] * h);
        for (c, v) in row.iter_mut().enumerate() {
            *v = xs[r * h + c] * sm.as_ref().map_or(1.0, |s| s[base + c]);
        }
        let (sc, off) = if offset.is_none() {
            let m = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            (m / qmax, 0.0)
        } else {
            let mx = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let mn = row.iter().fold(f32::INFINITY, |m, &v| m.min(v));
            let sc = (mx - mn) / (qmax - qmin);
            (sc, if sc == 0.0 { 0.0 } else { qmax - mx / sc })
        };
        scales[r] = sc;
        offsets[r] = off;
        for (c, &v) in row.iter().enumerate() {
            let q = if sc == 0.0 { off } else { v / sc + off };
            out[r * h + c] = if q.is_nan() {
                0
            } else {
                q.round_ties_even().clamp(qmin, qmax) as i64
            };
        }
    }
    if int4 {
        store(pack_nibbles(&out), DType::I64, y)?;
    } else {
        store(out, DType::I64, y)?;
    }
    store(scales, DType::F32, scale)?;
    if let Some(o) = offset {
        store(offsets, DType::F32, o)?;
    }
    Ok(())
}

/// MoE gating: for each row of `x` (`[rows, E]` seen row-major over every dimension but the
/// last) the softmax over the E experts, then its `k` largest values (descending; equal
/// values by expert index) into `y` and their experts into `expert_idx`; with `renorm` (the
/// V2 operator's 1) the top k of the raw row first, then the softmax over those k. A row
/// whose `finished` flag is set gets expert E. `row_idx[r][j] = j * rows + r`; `softmax`
/// gets the whole softmax (float32).
#[allow(clippy::too_many_arguments)]
pub fn moe_gating_topk_softmax(
    x: &View,
    finished: Option<&View>,
    k: usize,
    renorm: bool,
    y: &View,
    expert_idx: &View,
    row_idx: Option<&View>,
    softmax: Option<&View>,
) -> Result<(), String> {
    let xs: Vec<f64> = load(x, DType::F64)?;
    let e = x.shape.last().copied().unwrap_or(1);
    let rows = xs.len().checked_div(e).unwrap_or(0);
    let fin: Option<Vec<i64>> = match finished {
        Some(f) => Some(load(f, DType::I64)?),
        None => None,
    };
    let (mut yv, mut ev, mut rv) = (
        Vec::with_capacity(rows * k),
        Vec::with_capacity(rows * k),
        Vec::with_capacity(rows * k),
    );
    let mut sm = Vec::with_capacity(if softmax.is_some() { xs.len() } else { 0 });
    let soft = |v: &[f64]| -> Vec<f64> {
        let m = v.iter().fold(f64::NEG_INFINITY, |m, &a| m.max(a));
        let ex: Vec<f64> = v.iter().map(|&a| (a - m).exp()).collect();
        let sum: f64 = ex.iter().sum();
        ex.iter().map(|&a| a / sum).collect()
    };
    let mut order: Vec<usize> = Vec::with_capacity(e);
    for r in 0..rows {
        let row = &xs[r * e..(r + 1) * e];
        let p = if renorm { row.to_vec() } else { soft(row) };
        if softmax.is_some() {
            sm.extend_from_slice(&p);
        }
        order.clear();
        order.extend(0..e);
        order.sort_by(|&a, &b| p[b].total_cmp(&p[a]).then(a.cmp(&b)));
        order.truncate(k);
        let top: Vec<f64> = order.iter().map(|&i| p[i]).collect();
        let vals = if renorm { soft(&top) } else { top };
        let done = fin.as_ref().is_some_and(|f| f[r] != 0);
        for (j, (&i, v)) in order.iter().zip(vals).enumerate() {
            yv.push(v);
            ev.push(if done { e as i64 } else { i as i64 });
            rv.push((j * rows + r) as i64);
        }
    }
    store(yv, DType::F64, y)?;
    store(ev, DType::I64, expert_idx)?;
    if let Some(ri) = row_idx {
        store(rv, DType::I64, ri)?;
    }
    if let Some(s) = softmax {
        store(sm, DType::F64, s)?;
    }
    Ok(())
}

/// `v` with its last two dimensions swapped (a `transposeX` flag of the matrix products).
pub(crate) fn swap_last2(v: &View) -> View {
    let mut t = v.clone();
    let n = t.shape.len();
    t.shape.swap(n - 2, n - 1);
    t.strides.swap(n - 2, n - 1);
    t
}

/// `v` (`[..., r, c]`) seen with the batch dimensions `batch` (broadcast, stride 0).
fn with_batch(v: &View, batch: &[usize]) -> View {
    let nd = v.shape.len();
    let lead = batch.len() + 2 - nd;
    let mut shape = batch.to_vec();
    shape.extend_from_slice(&v.shape[nd - 2..]);
    let mut strides = vec![0isize; batch.len() + 2];
    for (d, s) in strides.iter_mut().enumerate() {
        if d >= lead {
            let src = d - lead;
            if v.shape[src] == shape[d] {
                *s = v.strides[src];
            }
        }
    }
    View {
        ptr: v.ptr,
        dtype: v.dtype,
        shape,
        strides,
    }
}

/// The float scale and 9-bit offset a `UINT64`/`INT64` quantisation parameter holds
/// (aclnnTransQuantParamV2's layout: the scale's float32 bits with the low 13 cleared in
/// bits 0-31, the offset in bits 37-45, bit 46 set).
pub fn decode_quant_param(q: u64) -> (f32, f32) {
    let scale = f32::from_bits((q & 0xFFFF_E000) as u32);
    let off = ((q >> 37) & 0x1FF) as i32;
    let off = if off >= 256 { off - 512 } else { off };
    (scale, off as f32)
}

/// aclnnTransQuantParamV2: each `(scale, offset)` pair (`scale` and `offset` of `out.numel()`
/// or 1 elements) as the 64-bit parameter [`decode_quant_param`] reads; the offset is
/// rounded half to even and saturated to [-256, 255].
pub fn trans_quant_param(scale: &View, offset: Option<&View>, out: &View) -> Result<(), String> {
    trans_quant_param_v3(scale, offset, false, out)
}

/// aclnnTransQuantParamV3: [`trans_quant_param`], with `fp19_round` (roundMode 1) the
/// scale first rounded to its top 19 bits ([`round_fp19`]) instead of truncated.
pub fn trans_quant_param_v3(
    scale: &View,
    offset: Option<&View>,
    fp19_round: bool,
    out: &View,
) -> Result<(), String> {
    let s: Vec<f32> = load(scale, DType::F32)?;
    let s: Vec<f32> = if fp19_round {
        s.into_iter().map(round_fp19).collect()
    } else {
        s
    };
    let o: Option<Vec<f32>> = match offset {
        Some(o) => Some(load(o, DType::F32)?),
        None => None,
    };
    let n = out.numel();
    let pick = |v: &[f32], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let r: Vec<i64> = (0..n)
        .map(|i| {
            let q = (pick(&s, i).to_bits() & 0xFFFF_E000) as u64 | QUANT_SCALE_BIT;
            match &o {
                Some(o) => with_offset(q, pick(o, i).round_ties_even()) as i64,
                None => q as i64,
            }
        })
        .collect();
    store(r, DType::I64, out)
}

/// `v` rounded to FP19 (sign, 8 exponent bits, 10 mantissa bits: the top 19 bits of its
/// float32) to nearest, ties to even; zeros and denormals become a signed zero, infinities and
/// NaNs are truncated, and a carry past the largest exponent saturates to infinity.
pub fn round_fp19(v: f32) -> f32 {
    let b = v.to_bits();
    let (sign, exp, man) = (b & 0x8000_0000, (b >> 23) & 0xFF, b & 0x7F_FFFF);
    let bits = match exp {
        0 => sign,
        0xFF => b & 0xFFFF_E000,
        _ => {
            let (mut exp, mut m19) = (exp, man >> 13);
            let round = (man >> 12) & 1;
            let sticky = man & 0xFFF;
            if round != 0 && (sticky != 0 || m19 & 1 != 0) {
                m19 += 1;
                if m19 >= 1 << 10 {
                    m19 = 0;
                    exp += 1;
                }
            }
            if exp > 0xFF {
                sign | 0x7F80_0000
            } else {
                sign | (exp << 23) | (m19 << 13)
            }
        }
    };
    f32::from_bits(bits)
}

/// Bit 46 of a quantisation parameter: the scale is present.
const QUANT_SCALE_BIT: u64 = 1 << 46;

/// `q` with the (already rounded) offset saturated to [-256, 255] in bits 37-45.
fn with_offset(q: u64, offset: f32) -> u64 {
    let v = offset.clamp(-256.0, 255.0) as i64;
    (q & 0x4000_FFFF_FFFF) | (((v as u64) & 0x1FF) << 37)
}

/// aclnnTransQuantParam (V1, computed on the host): one parameter per element of the
/// longer of `scale` and `offset`, the count rounded up to a multiple of 16 unless it is 1
/// (the rest zero); each scale's float32 bits whole with bit 46 set, each offset rounded half
/// away from zero and saturated into bits 37-45 (an offset beyond the scales on its own).
pub fn trans_quant_param_host(scale: &[f32], offset: &[f32]) -> Vec<u64> {
    let n = scale.len().max(offset.len());
    let mut q = vec![0u64; if n == 1 { 1 } else { n.next_multiple_of(16) }];
    for (q, s) in q.iter_mut().zip(scale) {
        *q = s.to_bits() as u64 | QUANT_SCALE_BIT;
    }
    for (q, o) in q.iter_mut().zip(offset) {
        *q = with_offset(*q, o.round());
    }
    q
}

/// The quantised matrix product of QuantMatmulV3/V4/V5 for INT8 `x1` (`[..., m, k]`, or
/// `[..., k, m]` with `trans_x1`) and `x2` (`[..., k, n]`, or `[..., n, k]`), batches
/// broadcast into `out` (`[..., m, n]`). The product accumulates exactly (i64); then, by
/// `out`'s type:
/// - INT32: `acc + bias` (an INT32 bias; scales unused);
/// - INT8: `round((acc + bias) * x2Scale + offset)` saturated, the offset from `x2_offset`
///   or else from the 64-bit parameter;
/// - FLOAT16/BFLOAT16/FLOAT: `(acc + bias_int) * x2Scale * x1Scale + bias_float`.
///
/// `x2_scale` is a 64-bit parameter ([`decode_quant_param`]) or a float, of 1 or n
/// elements; `x1_scale` (per token) has m elements; `bias` n or `batch * n`.
#[allow(clippy::too_many_arguments)]
pub fn quant_matmul(
    x1: &View,
    x2: &View,
    x1_scale: Option<&View>,
    x2_scale: &View,
    x2_offset: Option<&View>,
    bias: Option<&View>,
    trans_x1: bool,
    trans_x2: bool,
    out: &View,
) -> Result<(), String> {
    let a = if trans_x1 { swap_last2(x1) } else { x1.clone() };
    let b = if trans_x2 { swap_last2(x2) } else { x2.clone() };
    let nd = out.ndim();
    let (m, n) = (out.shape[nd - 2], out.shape[nd - 1]);
    let k = a.shape[a.ndim() - 1];
    let batch = &out.shape[..nd - 2];
    let nb: usize = batch.iter().product();
    let av: Vec<i64> = load(&with_batch(&a, batch), DType::I64)?;
    let bv: Vec<i64> = load(&with_batch(&b, batch), DType::I64)?;
    let (scale, param_off): (Vec<f32>, Vec<f32>) = match x2_scale.dtype {
        DType::U64 | DType::I64 => load::<i64>(x2_scale, DType::I64)?
            .into_iter()
            .map(|q| decode_quant_param(q as u64))
            .unzip(),
        _ => {
            let s: Vec<f32> = load(x2_scale, DType::F32)?;
            let z = vec![0.0; s.len()];
            (s, z)
        }
    };
    let off: Vec<f32> = match x2_offset {
        Some(o) => load(o, DType::F32)?,
        None => param_off,
    };
    let pt: Option<Vec<f32>> = match x1_scale {
        Some(p) => Some(load(p, DType::F32)?),
        None => None,
    };
    let (bias_i, bias_f): (Option<Vec<i64>>, Option<Vec<f32>>) = match bias {
        Some(bv) if bv.dtype == DType::I32 => (Some(load(bv, DType::I64)?), None),
        Some(bv) => (None, Some(load(bv, DType::F32)?)),
        None => (None, None),
    };
    let col = |v: &[f32], j: usize| if v.len() == 1 { v[0] } else { v[j] };
    let bidx = |len: usize, bi: usize, j: usize| if len == n { j } else { bi * n + j };
    let mut acc = vec![0i64; nb * m * n];
    for bi in 0..nb {
        let (ab, bb) = (&av[bi * m * k..], &bv[bi * k * n..]);
        for i in 0..m {
            let row = &mut acc[(bi * m + i) * n..(bi * m + i + 1) * n];
            for p in 0..k {
                let x = ab[i * k + p];
                if x != 0 {
                    for (j, r) in row.iter_mut().enumerate() {
                        *r += x * bb[p * n + j];
                    }
                }
            }
        }
    }
    let mut ints = Vec::new();
    let mut floats = Vec::new();
    for bi in 0..nb {
        for i in 0..m {
            for j in 0..n {
                let mut v = acc[(bi * m + i) * n + j];
                if let Some(bs) = &bias_i {
                    v += bs[bidx(bs.len(), bi, j)];
                }
                match out.dtype {
                    DType::I32 => ints.push(v),
                    DType::I8 => {
                        let q = v as f32 * col(&scale, j) + col(&off, j);
                        ints.push(to_i8(q, Round::Even) as i64);
                    }
                    _ => {
                        let mut f = v as f32 * col(&scale, j);
                        if let Some(p) = &pt {
                            f *= p[i];
                        }
                        if let Some(bs) = &bias_f {
                            f += bs[bidx(bs.len(), bi, j)];
                        }
                        floats.push(f);
                    }
                }
            }
        }
    }
    if matches!(out.dtype, DType::I32 | DType::I8) {
        store(ints, DType::I64, out)
    } else {
        store(floats, DType::F32, out)
    }
}

/// The axis of an INT32 tensor (`shape`, element `strides`) along which it packs eight int4
/// values a word: the last axis, or the second-to-last when only that one has unit stride
/// (the transpose of a packed matrix, as torch_npu passes `x2.t()`). None for fewer than
/// two dimensions or when neither of the last two axes is contiguous.
pub fn packed_axis(shape: &[usize], strides: &[isize]) -> Option<usize> {
    let nd = shape.len();
    if nd < 2 {
        return None;
    }
    if strides[nd - 1] == 1 || shape[nd - 1] == 1 {
        Some(nd - 1)
    } else if strides[nd - 2] == 1 || shape[nd - 2] == 1 {
        Some(nd - 2)
    } else {
        None
    }
}

/// The int4 value `i` (0 = the low nibble) of the word `w`.
pub(crate) fn nibble(w: i64, i: usize) -> i64 {
    let q = ((w as u32 >> (4 * i)) & 0xF) as i64;
    if q >= 8 {
        q - 16
    } else {
        q
    }
}

/// The int4 values of the INT32 tensor `v` (eight a word, low nibble first, packed along
/// `axis`) as a contiguous INT8 tensor of `v`'s shape with `axis` eight times longer.
pub fn unpack_int4(v: &View, axis: usize) -> Result<Scratch, String> {
    if v.dtype != DType::I32 {
        return Err(format!(
            "unpack_int4: packed int4 must be int32, not {}",
            v.dtype
        ));
    }
    let words: Vec<i64> = load(v, DType::I64)?;
    let mut shape = v.shape.clone();
    shape[axis] *= 8;
    let inner: usize = v.shape[axis + 1..].iter().product();
    let len = v.shape[axis];
    let mut out = vec![0i64; words.len() * 8];
    for (e, &w) in words.iter().enumerate() {
        let (o, r) = (e / (len * inner), e % (len * inner));
        let (a, c) = (r / inner, r % inner);
        for i in 0..8 {
            out[(o * len * 8 + a * 8 + i) * inner + c] = nibble(w, i);
        }
    }
    let s = Scratch::new(DType::I8, &shape);
    store(out, DType::I64, &s.view)?;
    Ok(s)
}

/// ConvertWeightToINT4Pack: the int4 values of `w` (one an element, any integer type, its
/// low 4 bits) packed eight to a word along the last dimension (low nibble first) into the
/// INT32 `out`.
pub fn pack_int4(w: &View, out: &View) -> Result<(), String> {
    let v: Vec<i64> = load(w, DType::I64)?;
    store(pack_nibbles(&v), DType::I64, out)
}

/// The low 4 bits of each of `v`'s values packed eight to an INT32 word (low nibble first).
fn pack_nibbles(v: &[i64]) -> Vec<i64> {
    v.chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u32, |acc, (i, &q)| acc | ((q as u32 & 0xF) << (4 * i))) as i32
                as i64
        })
        .collect()
}

/// `v` (2-D, `[r, c]`) as row-major i64 values of `[rows, cols]`, transposed first when
/// `trans` (so the result is always the logical `[rows, cols]` matrix).
fn matrix_i64(v: &View, trans: bool) -> Result<Vec<i64>, String> {
    let t = if trans { swap_last2(v) } else { v.clone() };
    load(&t, DType::I64)
}

/// QuantMatmulV5's G-B mode (pergroup-perblock): `out[i, j] = sum_b (x1[i, B] . x2[B, j]) *
/// x1Scale[i / gm, b] * x2Scale[b, j / gn] + bias[j]` over the k blocks `B` of `gk` (the last
/// one may be shorter). `x1` is `[m, k]` (`[k, m]` with `trans_x1`, its scale then
/// `[kb, mb]`), `x2` `[k, n]` (`[n, k]` with `trans_x2`, its scale then `[nb, kb]`). Each
/// block's product is exact (integer), scaled in f32 and summed in f32; bias is float32.
#[allow(clippy::too_many_arguments)]
pub fn quant_matmul_blocks(
    x1: &View,
    x2: &View,
    x1_scale: &View,
    x2_scale: &View,
    bias: Option<&View>,
    trans_x1: bool,
    trans_x2: bool,
    group: (usize, usize, usize),
    out: &View,
) -> Result<(), String> {
    let (gm, gn, gk) = group;
    let a = matrix_i64(x1, trans_x1)?;
    let b = matrix_i64(x2, trans_x2)?;
    let (m, n) = (out.shape[0], out.shape[1]);
    let k = a.len() / m.max(1);
    let kb = k.div_ceil(gk);
    let s1: Vec<f32> = load(
        &if trans_x1 {
            swap_last2(x1_scale)
        } else {
            x1_scale.clone()
        },
        DType::F32,
    )?;
    let s2: Vec<f32> = load(
        &if trans_x2 {
            swap_last2(x2_scale)
        } else {
            x2_scale.clone()
        },
        DType::F32,
    )?;
    let nb = n.div_ceil(gn);
    let bias: Option<Vec<f32>> = bias.map(|b| load(b, DType::F32)).transpose()?;
    let mut r = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for blk in 0..kb {
                let mut dot = 0i64;
                for p in blk * gk..((blk + 1) * gk).min(k) {
                    dot += a[i * k + p] * b[p * n + j];
                }
                acc += dot as f32 * (s1[(i / gm) * kb + blk] * s2[blk * nb + j / gn]);
            }
            if let Some(bs) = &bias {
                acc += bs[if bs.len() == 1 { 0 } else { j }];
            }
            r[i * n + j] = acc;
        }
    }
    store(r, DType::F32, out)
}

/// QuantMatmulV5's A8W4 modes (INT8 `x1`, int4 `x2`):
/// `out = ((x1 @ (x2 * x2Scale)) + yOffset) * x1Scale`. `x1` is `[m, k]`, `x2` the unpacked `[k, n]`; `x2_scale` holds 64-bit
/// quantisation parameters ([`decode_quant_param`]'s scale), `[n]` (per channel) or
/// `[ceil(k / group_k), n]` (K-G); `x1_scale` one float per row; `y_offset` one per column
/// (absent: 0). Each group's product is exact, scaled and summed in f64, rounded once.
pub fn quant_matmul_a8w4(
    x1: &View,
    x2: &View,
    x1_scale: &View,
    x2_scale: &View,
    group_k: usize,
    y_offset: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let a = matrix_i64(x1, false)?;
    let b = matrix_i64(x2, false)?;
    let (m, n) = (out.shape[0], out.shape[1]);
    let k = a.len() / m.max(1);
    let s2: Vec<f64> = load::<i64>(x2_scale, DType::I64)?
        .into_iter()
        .map(|q| decode_quant_param(q as u64).0 as f64)
        .collect();
    let s1: Vec<f32> = load(x1_scale, DType::F32)?;
    let yo: Option<Vec<f32>> = y_offset.map(|v| load(v, DType::F32)).transpose()?;
    let g = if s2.len() == n { k.max(1) } else { group_k };
    let mut r = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f64;
            for blk in 0..k.div_ceil(g) {
                let mut dot = 0i64;
                for p in blk * g..((blk + 1) * g).min(k) {
                    dot += a[i * k + p] * b[p * n + j];
                }
                let s = if s2.len() == n {
                    s2[j]
                } else {
                    s2[blk * n + j]
                };
                acc += dot as f64 * s;
            }
            if let Some(y) = &yo {
                acc += y[if y.len() == 1 { 0 } else { j }] as f64;
            }
            r[i * n + j] = acc * s1[if s1.len() == 1 { 0 } else { i }] as f64;
        }
    }
    store(r, DType::F64, out)
}

/// Where a weight element `(p, j)` of a `[k, n]` weight finds its antiquant scale and
/// offset (WeightQuantBatchMatmul).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AntiquantLayout {
    /// One value.
    Tensor,
    /// One per output column (`[n]`, `[1, n]` or `[n, 1]`).
    Channel,
    /// `[ceil(k / group), n]`.
    GroupKn(usize),
    /// `[n, ceil(k / group)]` (the transposed weight's layout).
    GroupNk(usize),
}

/// `v` rounded to the float type `dt` (f16/bf16), kept as f32.
fn round_to(v: f32, dt: DType) -> f32 {
    match dt {
        DType::F16 => half::f16::from_f32(v).to_f32(),
        DType::BF16 => half::bf16::from_f32(v).to_f32(),
        _ => v,
    }
}

/// WeightQuantBatchMatmulV2/V3: `y = x @ ((weight + offset) * scale) + bias` for a float16
/// or bfloat16 `x` (`[m, k]`) and an INT8 `weight` (`[k, n]`, any strides). The antiquant
/// weight is formed in x's type (each step rounded, as the unit does before the cube), the
/// product accumulates in f32 and rounds once into `y`; with `quant_scale` (64-bit
/// parameters, [`decode_quant_param`]) the result is requantised to INT8:
/// `round((x @ W + bias) * quantScale + quantOffset)`.
#[allow(clippy::too_many_arguments)]
pub fn weight_quant_matmul(
    x: &View,
    weight: &View,
    scale: &View,
    offset: Option<&View>,
    quant_scale: Option<&View>,
    quant_offset: Option<&View>,
    bias: Option<&View>,
    layout: AntiquantLayout,
    y: &View,
) -> Result<(), String> {
    let (m, k) = (x.shape[0], x.shape[1]);
    let n = weight.shape[1];
    let dt = x.dtype;
    let xv: Vec<f32> = load(x, DType::F32)?;
    let wv: Vec<f32> = load(weight, DType::F32)?;
    let sv: Vec<f32> = load(scale, DType::F32)?;
    let ov: Option<Vec<f32>> = match offset {
        Some(o) => Some(load(o, DType::F32)?),
        None => None,
    };
    let idx = |p: usize, j: usize| match layout {
        AntiquantLayout::Tensor => 0,
        AntiquantLayout::Channel => j,
        AntiquantLayout::GroupKn(g) => (p / g) * n + j,
        AntiquantLayout::GroupNk(g) => j * k.div_ceil(g) + p / g,
    };
    let mut deq = vec![0f32; k * n];
    for p in 0..k {
        for j in 0..n {
            let i = idx(p, j);
            let w = match &ov {
                Some(o) => round_to(wv[p * n + j] + o[i], dt),
                None => wv[p * n + j],
            };
            deq[p * n + j] = round_to(w * sv[i], dt);
        }
    }
    let bv: Option<Vec<f32>> = match bias {
        Some(b) => Some(load(b, DType::F32)?),
        None => None,
    };
    let acc = matmul_f32(&xv, &deq, (m, k, n), bv.as_deref());
    match quant_scale {
        None => store(acc, DType::F32, y),
        Some(q) => {
            let (qs, qo): (Vec<f32>, Vec<f32>) = load::<i64>(q, DType::I64)?
                .into_iter()
                .map(|v| decode_quant_param(v as u64))
                .unzip();
            let qo: Vec<f32> = match quant_offset {
                Some(o) => load(o, DType::F32)?,
                None => qo,
            };
            let col = |v: &[f32], j: usize| if v.len() == 1 { v[0] } else { v[j] };
            let r: Vec<f64> = acc
                .iter()
                .enumerate()
                .map(|(e, &v)| {
                    let j = e % n;
                    to_i8(v * col(&qs, j) + col(&qo, j), Round::Even)
                })
                .collect();
            store(r, DType::F64, y)
        }
    }
}

/// `x` (`[m, k]`) @ `w` (`[k, n]`), both dense f32, accumulated in f32 in k order, plus
/// `bias` (`n` elements, or 1 broadcast) on every row.
pub(crate) fn matmul_f32(
    x: &[f32],
    w: &[f32],
    (m, k, n): (usize, usize, usize),
    bias: Option<&[f32]>,
) -> Vec<f32> {
    let mut acc = vec![0f32; m * n];
    for i in 0..m {
        let row = &mut acc[i * n..(i + 1) * n];
        for p in 0..k {
            let a = x[i * k + p];
            for (j, r) in row.iter_mut().enumerate() {
                *r += a * w[p * n + j];
            }
        }
        if let Some(b) = bias {
            for (j, r) in row.iter_mut().enumerate() {
                *r += if b.len() == 1 { b[0] } else { b[j] };
            }
        }
    }
    acc
}

/// `len` elements of `v` from `start` along dimension 0.
pub(super) fn narrow0(v: &View, start: usize, len: usize) -> View {
    let mut t = v.clone();
    if len > 0 {
        t.ptr = v
            .ptr
            .wrapping_offset(start as isize * v.strides[0] * v.esize() as isize);
    }
    t.shape[0] = len;
    t
}

/// Element `e` of `v` along dimension 0, that dimension dropped.
pub(super) fn select0(v: &View, e: usize) -> View {
    let t = narrow0(v, e, 1);
    View {
        ptr: t.ptr,
        dtype: t.dtype,
        shape: t.shape[1..].to_vec(),
        strides: t.strides[1..].to_vec(),
    }
}

/// The per-group views of a weight or bias argument: a list as given, or one tensor with
/// the groups along its first dimension (`[E, K, N]`, `[E, N]`) split.
fn per_group(vs: &[View], stacked_rank: usize) -> Vec<View> {
    if vs.len() == 1 && vs[0].ndim() == stacked_rank {
        (0..vs[0].shape[0]).map(|e| select0(&vs[0], e)).collect()
    } else {
        vs.to_vec()
    }
}

/// GroupedMatmul (V4/V5) without quantisation: `y_i = x_i @ w_i + b_i`.
/// - without `group_list`: one product per `(xs[i], ws[i])` into `outs[i]` (`x_i`
///   `[..., K]`);
/// - with `group_list` (split along M): `xs[0]` (`[M, K]`) is cut into row groups by the
///   INT64 `group_list` (cumulative ends when `counts` is false, sizes when true), group e
///   multiplied by weight e; the results go to the rows of a single `outs[0]` (`[M, N]`;
///   rows past the last group untouched) or to `outs[e]`.
///
/// Weights are a list of `[K, N]` or one `[E, K, N]`; biases a list of `[N]` or one `[E, N]`.
/// Products accumulate in f32 and round once (the engine's matmul).
pub fn grouped_matmul(
    xs: &[View],
    ws: &[View],
    bs: &[View],
    group_list: Option<&View>,
    counts: bool,
    outs: &[View],
) -> Result<(), String> {
    let ws = per_group(ws, 3);
    let bs = per_group(bs, 2);
    let one = |x: &View, e: usize, out: &View| -> Result<(), String> {
        let w = ws
            .get(e)
            .ok_or_else(|| format!("group {e} has no weight ({} given)", ws.len()))?;
        if out.numel() == 0 {
            return Ok(());
        }
        super::matmul::matmul(x, w, out, 1.0, bs.get(e).map(|b| (b, 1.0)))
    };
    let Some(gl) = group_list else {
        for (i, (x, out)) in xs.iter().zip(outs).enumerate() {
            one(x, i, out)?;
        }
        return Ok(());
    };
    let g: Vec<i64> = load(gl, DType::I64)?;
    let x = &xs[0];
    let m = x.shape[0];
    let mut start = 0usize;
    for (e, &v) in g.iter().enumerate() {
        let len = if counts { v } else { v - start as i64 };
        if len < 0 || start as i64 + len > m as i64 {
            return Err(format!(
                "groupList {g:?} (groupListType {}) does not cut the {m} rows of x into \
                 groups: group {e} would hold rows {start}..{}",
                counts as i32,
                start as i64 + len
            ));
        }
        let len = len as usize;
        let xe = narrow0(x, start, len);
        if outs.len() == 1 {
            one(&xe, e, &narrow0(&outs[0], start, len))?;
        } else {
            let out = outs
                .get(e)
                .ok_or_else(|| format!("group {e} has no output ({} given)", outs.len()))?;
            if out.shape[0] != len {
                return Err(format!(
                    "y[{e}] has {} rows, but group {e} of groupList {g:?} holds {len}",
                    out.shape[0]
                ));
            }
            one(&xe, e, out)?;
        }
        start += len;
    }
    Ok(())
}

/// MoeInitRouting: the `n * k` (token, slot) pairs of `expert_idx` (`[n, k]`) sorted by
/// expert (stably, in row-major order of the pairs) into `expanded_expert_idx`, their
/// `row_idx` values (`sortedRowIdx`) inverted into `expanded_row_idx`
/// (`expanded_row_idx[sortedRowIdx[i]] = i`), and the first `expanded_x.shape[0]` sorted
/// pairs' token rows `x[sortedRowIdx[i] % n]` gathered into `expanded_x`. A `row_idx` value
/// outside `[0, n * k)` fails the task.
pub fn moe_init_routing(
    x: &View,
    row_idx: &View,
    expert_idx: &View,
    expanded_x: &View,
    expanded_row_idx: &View,
    expanded_expert_idx: &View,
) -> Result<(), String> {
    let n = x.shape[0];
    let h = x.shape[1];
    let rows: Vec<i64> = load(row_idx, DType::I64)?;
    let experts: Vec<i64> = load(expert_idx, DType::I64)?;
    let total = rows.len();
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| experts[i]);
    let sorted_rows: Vec<i64> = order.iter().map(|&i| rows[i]).collect();
    let mut inv = vec![0i64; total];
    for (i, &r) in sorted_rows.iter().enumerate() {
        if r < 0 || r as usize >= total {
            return Err(format!("rowIdx value {r} is outside [0, {total})"));
        }
        inv[r as usize] = i as i64;
    }
    let xs: Vec<f64> = load(x, DType::F64)?;
    let active = expanded_x.shape[0];
    let mut ex = Vec::with_capacity(active * h);
    for &r in sorted_rows.iter().take(active) {
        let t = r as usize % n.max(1);
        ex.extend_from_slice(&xs[t * h..(t + 1) * h]);
    }
    store(ex, DType::F64, expanded_x)?;
    store(inv, DType::I64, expanded_row_idx)?;
    store(
        order.iter().map(|&i| experts[i]).collect::<Vec<_>>(),
        DType::I64,
        expanded_expert_idx,
    )
}

/// MoeComputeExpertTokens: for each expert `e < out.len()`, the number of elements of the
/// ascending `sorted` that are at most `e` (the end of expert e's rows, found by binary
/// search).
pub fn moe_compute_expert_tokens(sorted: &View, out: &View) -> Result<(), String> {
    let s: Vec<i64> = load(sorted, DType::I64)?;
    let r: Vec<i64> = (0..out.numel() as i64)
        .map(|e| s.partition_point(|&v| v <= e) as i64)
        .collect();
    store(r, DType::I64, out)
}

/// MoeFinalizeRouting (V1, V2 drop-less): `out[i] = x1[i] + x2[i] + sum_k scales[i, k] *
/// (expanded_x[expanded_row_idx[i + k * n]] + bias[expert_idx[i, k]])`, in f32, rounded
/// once; an absent `scales` counts 1. An index out of range fails the task.
#[allow(clippy::too_many_arguments)]
pub fn moe_finalize_routing(
    expanded_x: &View,
    expanded_row_idx: &View,
    x1: Option<&View>,
    x2: Option<&View>,
    bias: Option<&View>,
    scales: Option<&View>,
    expert_idx: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let (n, h) = (out.shape[0], out.shape[1]);
    let ex: Vec<f32> = load(expanded_x, DType::F32)?;
    let rows_x = ex.len() / h.max(1);
    let idx: Vec<i64> = load(expanded_row_idx, DType::I64)?;
    let k = idx.len().checked_div(n).unwrap_or(0);
    let opt = |v: Option<&View>| -> Result<Option<Vec<f32>>, String> {
        v.map(|v| load(v, DType::F32)).transpose()
    };
    let (a1, a2, b, sc) = (opt(x1)?, opt(x2)?, opt(bias)?, opt(scales)?);
    let eids: Option<Vec<i64>> = expert_idx.map(|v| load(v, DType::I64)).transpose()?;
    let experts = b.as_ref().map_or(0, |b| b.len() / h.max(1));
    let mut o = vec![0f32; n * h];
    for i in 0..n {
        let row = &mut o[i * h..(i + 1) * h];
        if let Some(a) = &a1 {
            row.copy_from_slice(&a[i * h..(i + 1) * h]);
        }
        if let Some(a) = &a2 {
            for (r, v) in row.iter_mut().zip(&a[i * h..(i + 1) * h]) {
                *r += v;
            }
        }
        for kk in 0..k {
            let src = idx[i + kk * n];
            if src < 0 || src as usize >= rows_x {
                return Err(format!(
                    "expandedRowIdx[{}] = {src} is outside the {rows_x} rows of expandedX",
                    i + kk * n
                ));
            }
            let src = src as usize;
            let s = sc.as_ref().map_or(1.0, |s| s[i * k + kk]);
            let brow = match (&b, &eids) {
                (Some(b), Some(e)) => {
                    let eid = e[i * k + kk];
                    if eid < 0 || eid as usize >= experts {
                        return Err(format!(
                            "expertIdx[{i}, {kk}] = {eid} is outside the {experts} experts of bias"
                        ));
                    }
                    Some(&b[eid as usize * h..(eid as usize + 1) * h])
                }
                _ => None,
            };
            for j in 0..h {
                let v = ex[src * h + j] + brow.map_or(0.0, |b| b[j]);
                row[j] += s * v;
            }
        }
    }
    store(o, DType::F32, out)
}

/// GroupQuant: `y = round(x * scale[g] + offset)` per row of `x` (`[S, H]`), row `r` in
/// the first group `g` whose cumulative end `group_index[g]` exceeds it (`scale` `[E, H]`,
/// `offset` one value), rounded half to even in f32 and saturated to int8, or (`int4`) to
/// [-8, 7] and packed eight to an INT32 word along H (low nibble first). `group_index` must
/// be non-decreasing, non-negative and end at S.
pub fn group_quant(
    x: &View,
    scale: &View,
    group_index: &View,
    offset: Option<&View>,
    int4: bool,
    y: &View,
) -> Result<(), String> {
    let (s, h) = (x.shape[0], x.shape[1]);
    let ends: Vec<i64> = load(group_index, DType::I64)?;
    if ends.first().is_some_and(|&e| e < 0)
        || ends.windows(2).any(|w| w[1] < w[0])
        || ends.last().copied() != Some(s as i64)
    {
        return Err(format!(
            "groupIndex {ends:?} must be non-decreasing cumulative row ends from 0 ending at x's \
             {s} rows"
        ));
    }
    let xs: Vec<f32> = load(x, DType::F32)?;
    let sc: Vec<f32> = load(scale, DType::F32)?;
    let off = match offset {
        Some(o) => load::<f32>(o, DType::F32)?.first().copied().unwrap_or(0.0),
        None => 0.0,
    };
    let (lo, hi) = if int4 { (-8.0, 7.0) } else { (-128.0, 127.0) };
    let mut q = vec![0i64; s * h];
    let mut g = 0usize;
    for r in 0..s {
        while ends[g] as usize <= r {
            g += 1;
        }
        for c in 0..h {
            let v = (xs[r * h + c] * sc[g * h + c] + off).round_ties_even();
            q[r * h + c] = v.clamp(lo, hi) as i64;
        }
    }
    if int4 {
        store(pack_nibbles(&q), DType::I64, y)
    } else {
        store(q, DType::I64, y)
    }
}

/// InplaceQuantScatter: `q = round(updates / scale[c] + zero_point[c])` (f32, half to even,
/// saturated to int8; `c` the position along the last axis) written into `self_` along `axis`:
/// with 1-D `indices` row `i` of `updates` goes to row `i` of `self_` at offset `indices[i]`
/// along `axis`; with `[B, 2]` indices to row `indices[i][0]` at offset `indices[i][1]`. The
/// dimensions between the first and `axis`, and after it, are kept as they are. A block
/// running past `self_` is an error.
pub fn quant_scatter(
    self_: &View,
    indices: &View,
    updates: &View,
    scales: &View,
    zero_points: Option<&View>,
    axis: usize,
) -> Result<(), String> {
    let n = self_.shape.len();
    let mid = |sh: &[usize]| sh[1..axis].iter().product::<usize>();
    let tail = |sh: &[usize]| sh[axis + 1..].iter().product::<usize>();
    let (sd, sm, sa, st) = (
        self_.shape[0],
        mid(&self_.shape),
        self_.shape[axis],
        tail(&self_.shape),
    );
    let (ud, ua) = (updates.shape[0], updates.shape[axis]);
    let last = updates.shape[n - 1];
    let idx: Vec<i64> = load(indices, DType::I64)?;
    let two = indices.shape.len() == 2;
    let upd: Vec<f32> = load(updates, DType::F32)?;
    let sc: Vec<f32> = load(scales, DType::F32)?;
    let zp: Vec<f32> = match zero_points {
        Some(z) => load(z, DType::F32)?,
        None => vec![0.0; last],
    };
    let mut out: Vec<i64> = load(self_, DType::I64)?;
    for i in 0..ud {
        let (row, off) = if two {
            (idx[2 * i], idx[2 * i + 1])
        } else {
            (i as i64, idx[i])
        };
        if row < 0 || row as usize >= sd || off < 0 || off as usize + ua > sa {
            return Err(format!(
                "indices entry {i} ({row}, {off}) puts {ua} rows along axis {axis} outside \
                 selfRef {:?}",
                self_.shape
            ));
        }
        let (row, off) = (row as usize, off as usize);
        for j in 0..sm {
            for k in 0..ua {
                for m in 0..st {
                    let u = ((i * sm + j) * ua + k) * st + m;
                    let c = m % last;
                    let q = (upd[u] / sc[c] + zp[c])
                        .round_ties_even()
                        .clamp(-128.0, 127.0);
                    out[((row * sm + j) * sa + off + k) * st + m] = q as i64;
                }
            }
        }
    }
    store(out, DType::I64, self_)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view<T>(v: &mut [T], dt: DType, shape: &[usize]) -> View {
        View::of_slice(v, dt, shape)
    }

    #[test]
    fn ascend_quant_rounds_half_to_even_and_saturates() {
        let mut x = [0.5f32, 1.5, 2.5, -0.5, 300.0, -300.0];
        let mut s = [1.0f32];
        let mut y = [0i8; 6];
        ascend_quant(
            &view(&mut x, DType::F32, &[6]),
            &view(&mut s, DType::F32, &[1]),
            None,
            0,
            false,
            Round::Even,
            &view(&mut y, DType::I8, &[6]),
        )
        .unwrap();
        assert_eq!(y, [0, 2, 2, 0, 127, -128]);
    }

    #[test]
    fn dynamic_quant_symmetric_row_scale() {
        let mut x = [1.0f32, -2.0, 0.5, 0.0, 0.0, 0.0];
        let mut y = [0i8; 6];
        let mut s = [0f32; 2];
        dynamic_quant(
            &view(&mut x, DType::F32, &[2, 3]),
            None,
            &view(&mut y, DType::I8, &[2, 3]),
            &view(&mut s, DType::F32, &[2]),
            None,
        )
        .unwrap();
        assert_eq!(s, [2.0 / 127.0, 0.0]);
        assert_eq!(y, [64, -127, 32, 0, 0, 0]);
    }

    #[test]
    fn gating_topk_orders_and_marks_finished() {
        let mut x = [0.0f32, 2.0, 1.0, 3.0, 1.0, 2.0];
        let mut f = [false, true];
        let (mut y, mut e, mut r) = ([0f32; 4], [0i32; 4], [0i32; 4]);
        moe_gating_topk_softmax(
            &view(&mut x, DType::F32, &[2, 3]),
            Some(&view(&mut f, DType::Bool, &[2])),
            2,
            false,
            &view(&mut y, DType::F32, &[2, 2]),
            &view(&mut e, DType::I32, &[2, 2]),
            Some(&view(&mut r, DType::I32, &[2, 2])),
            None,
        )
        .unwrap();
        assert_eq!(e, [1, 2, 3, 3]);
        assert_eq!(r, [0, 2, 1, 3]);
        assert!(y[0] > y[1] && (y[2] - y[0]).abs() < 1e-6);
    }

    #[test]
    fn quant_param_round_trips_and_matmul_requantises() {
        let mut sc = [0.5f32, 0.25];
        let mut of = [3.0f32, -4.0];
        let mut q = [0i64; 2];
        trans_quant_param(
            &view(&mut sc, DType::F32, &[2]),
            Some(&view(&mut of, DType::F32, &[2])),
            &view(&mut q, DType::I64, &[2]),
        )
        .unwrap();
        assert_eq!(decode_quant_param(q[0] as u64), (0.5, 3.0));
        assert_eq!(decode_quant_param(q[1] as u64), (0.25, -4.0));
        // [1, 2] @ [2, 2]: acc = [1*1 + 2*3, 1*2 + 2*4] = [7, 10]
        let mut a = [1i8, 2];
        let mut b = [1i8, 2, 3, 4];
        let mut y = [0i8; 2];
        quant_matmul(
            &view(&mut a, DType::I8, &[1, 2]),
            &view(&mut b, DType::I8, &[2, 2]),
            None,
            &view(&mut q, DType::I64, &[2]),
            None,
            None,
            false,
            false,
            &view(&mut y, DType::I8, &[1, 2]),
        )
        .unwrap();
        // 7 * 0.5 + 3 = 6.5 -> 6 (half to even); 10 * 0.25 - 4 = -1.5 -> -2
        assert_eq!(y, [6, -2]);
    }
}
