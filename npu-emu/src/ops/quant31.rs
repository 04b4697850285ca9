//! The int4 paths of the quantisation operators torch_npu documents on Atlas A2/A3:
//!
//! - [`ascend_quant_int4`]: AscendQuant / AscendQuantV3 with `dstType` 3,
//!   `y = round(x * scale + offset)` saturated to the int4 range [-8, 7] and packed eight to
//!   an INT32 word along the last axis, the first value in the low nibble (the layout
//!   `npu_quantize(..., dtype=torch.quint4x2)` returns, and that DynamicQuantV2 and
//!   QuantMatmul read);
//! - [`ascend_quant_int4_nz`]: V3's FRACTAL_NZ form: a 3-D `[E, K, N]` input, `y` written in
//!   CANN's int4 FRACTAL_NZ layout (`[E, ceil(N / 64), ceil(K / 16), 16, 64]` int4 values,
//!   i.e. `[.., 16, 8]` INT32 words, see [`nz_int4_word`]), as the operator's NZ kernel
//!   stores it for GroupedMatmul's int4 weights;
//! - [`grouped_matmul_a4w4`]: GroupedMatmul's A4W4 mode (int4 x and weight, UINT64 scale per
//!   channel or per K group, optional float per-token scale), split along M;
//! - [`grouped_matmul_a8w8`]: GroupedMatmul's A8W8 mode (INT8 x and weight, split along M,
//!   INT32/INT8/FLOAT16/BFLOAT16 out, per-token scale and the fused activation).
//!
//! Rounding: f32 arithmetic, then the chosen mode (`round` is half to even); NaN stores 0.

use super::dtype::DType;
use super::extra::{load, store};
use super::math::{self, Unary};
use super::norm;
use super::quant::{axis_index, decode_quant_param, narrow0, nibble, quant_matmul, select0, Round};
use super::view::{Scratch, View};

/// `v` rounded by `mode` and saturated to int4 (NaN → 0).
fn to_i4(v: f32, mode: Round) -> i64 {
    if v.is_nan() {
        return 0;
    }
    let r = match mode {
        Round::Even => v.round_ties_even(),
        Round::Floor => v.floor(),
        Round::Ceil => v.ceil(),
        Round::Trunc => v.trunc(),
    };
    r.clamp(-8.0, 7.0) as i64
}

/// The quantised int4 values of `x` (row-major), `round(x * scale + offset)` (`scale * scale`
/// with `sqrt_mode`), `scale`/`offset` indexed along `axis`.
fn quant_values(
    x: &View,
    scale: &View,
    offset: Option<&View>,
    axis: usize,
    sqrt_mode: bool,
    mode: Round,
) -> Result<Vec<i64>, String> {
    let xs: Vec<f32> = load(x, DType::F32)?;
    let s: Vec<f32> = load(scale, DType::F32)?;
    let o: Vec<f32> = match offset {
        Some(o) => load(o, DType::F32)?,
        None => vec![0.0],
    };
    let is = axis_index(&x.shape, axis, s.len());
    let io = axis_index(&x.shape, axis, o.len());
    Ok(xs
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let sc = if sqrt_mode {
                s[is(i)] * s[is(i)]
            } else {
                s[is(i)]
            };
            to_i4(v * sc + o[io(i)], mode)
        })
        .collect())
}

/// Eight int4 values (low nibble first) as one INT32 word.
fn pack8(v: &[i64]) -> i64 {
    v.iter()
        .enumerate()
        .fold(0u32, |acc, (i, &q)| acc | ((q as u32 & 0xF) << (4 * i))) as i32 as i64
}

/// AscendQuant(V3) into an INT32 `y` of x's shape with the last dimension / 8: eight int4
/// values a word along the last axis, the first in the low nibble.
pub fn ascend_quant_int4(
    x: &View,
    scale: &View,
    offset: Option<&View>,
    axis: usize,
    sqrt_mode: bool,
    mode: Round,
    y: &View,
) -> Result<(), String> {
    if y.dtype != DType::I32 {
        return Err(format!(
            "ascend_quant_int4: y must be int32, not {}",
            y.dtype
        ));
    }
    let q = quant_values(x, scale, offset, axis, sqrt_mode, mode)?;
    let words: Vec<i64> = q.chunks(8).map(pack8).collect();
    if words.len() != y.numel() {
        return Err(format!(
            "ascend_quant_int4: {} int4 values do not fill y of shape {:?}",
            q.len(),
            y.shape
        ));
    }
    store(words, DType::I64, y)
}

/// The INT32 word and nibble holding element `(e, k, n)` of an `[E, K, N]` int4 tensor in
/// CANN's int4 FRACTAL_NZ layout: `[E, ceil(N / 64), ceil(K / 16) * 16, 64]` int4 values, each
/// 64-wide row eight words.
pub fn nz_int4_word(k_dim: usize, n_dim: usize, e: usize, k: usize, n: usize) -> (usize, usize) {
    let n1 = n_dim.div_ceil(64);
    let kp = k_dim.div_ceil(16) * 16;
    let word = ((e * n1 + n / 64) * kp + k) * 8 + (n % 64) / 8;
    (word, n % 8)
}

/// The number of INT32 words of an `[E, K, N]` int4 tensor in FRACTAL_NZ ([`nz_int4_word`]).
pub fn nz_int4_words(e_dim: usize, k_dim: usize, n_dim: usize) -> usize {
    e_dim * n_dim.div_ceil(64) * k_dim.div_ceil(16) * 16 * 8
}

/// AscendQuantV3's FRACTAL_NZ form: `x` is the logical `[E, K, N]` FLOAT tensor; the int4
/// results are written into `y_storage` (INT32, at least [`nz_int4_words`] words) in CANN's
/// int4 FRACTAL_NZ layout, padding zero.
#[allow(clippy::too_many_arguments)]
pub fn ascend_quant_int4_nz(
    x: &View,
    scale: &View,
    offset: Option<&View>,
    sqrt_mode: bool,
    mode: Round,
    y_storage: &View,
) -> Result<(), String> {
    if x.ndim() != 3 {
        return Err(format!(
            "ascend_quant_int4_nz: x must be [E, K, N], not {:?}",
            x.shape
        ));
    }
    let (ed, kd, nd) = (x.shape[0], x.shape[1], x.shape[2]);
    let need = nz_int4_words(ed, kd, nd);
    if y_storage.numel() < need {
        return Err(format!(
            "ascend_quant_int4_nz: y's storage holds {} words, the int4 FRACTAL_NZ layout of \
             {:?} needs {need}",
            y_storage.numel(),
            x.shape
        ));
    }
    let q = quant_values(x, scale, offset, 2, sqrt_mode, mode)?;
    let mut words = vec![0u32; y_storage.numel()];
    for e in 0..ed {
        for k in 0..kd {
            for n in 0..nd {
                let (w, i) = nz_int4_word(kd, nd, e, k, n);
                words[w] |= (q[(e * kd + k) * nd + n] as u32 & 0xF) << (4 * i);
            }
        }
    }
    store(
        words.into_iter().map(|w| w as i32 as i64).collect(),
        DType::I64,
        y_storage,
    )
}

/// The int4 weight of GroupedMatmul's A4W4 mode as `[E, K, N]` values: either an ND INT32
/// tensor `[E, K, N / 8]` packed along its last axis, or (`nz`) the INT32 storage of the int4
/// FRACTAL_NZ layout of `[E, K, N]`.
pub enum Int4Weight<'a> {
    Nd(&'a View),
    Nz {
        storage: &'a View,
        e: usize,
        k: usize,
        n: usize,
    },
}

/// The groups of a split along M: `(expert, first row, rows)` for each non-empty group of the
/// cumulative row ends `ends` (GroupedMatmul's groupList), checked to cut `m` rows in order
/// and to name at most `e_dim` experts.
fn m_groups(ends: &[i64], m: usize, e_dim: usize) -> Result<Vec<(usize, usize, usize)>, String> {
    if ends.len() > e_dim {
        return Err(format!(
            "groupList has {} groups, but the weight has {e_dim} experts",
            ends.len()
        ));
    }
    let mut groups = Vec::new();
    let mut start = 0usize;
    for (e, &end) in ends.iter().enumerate() {
        if end < start as i64 || end > m as i64 {
            return Err(format!(
                "groupList {ends:?} does not cut the {m} rows of x into groups: group {e} \
                 would hold rows {start}..{end}"
            ));
        }
        let end = end as usize;
        if end > start {
            groups.push((e, start, end - start));
        }
        start = end;
    }
    Ok(groups)
}

fn weight_values(w: &Int4Weight) -> Result<(Vec<i64>, usize, usize, usize), String> {
    match w {
        Int4Weight::Nd(v) => {
            let (e, k, n8) = (v.shape[0], v.shape[1], v.shape[2]);
            let words: Vec<i64> = load(v, DType::I64)?;
            let mut out = vec![0i64; e * k * n8 * 8];
            for (i, &wd) in words.iter().enumerate() {
                for j in 0..8 {
                    out[i * 8 + j] = nibble(wd, j);
                }
            }
            Ok((out, e, k, n8 * 8))
        }
        Int4Weight::Nz { storage, e, k, n } => {
            let (e, k, n) = (*e, *k, *n);
            let need = nz_int4_words(e, k, n);
            if storage.numel() < need {
                return Err(format!(
                    "grouped_matmul_a4w4: the weight's storage holds {} words, its int4 \
                     FRACTAL_NZ layout needs {need}",
                    storage.numel()
                ));
            }
            let words: Vec<i64> = load(storage, DType::I64)?;
            let mut out = vec![0i64; e * k * n];
            for ee in 0..e {
                for kk in 0..k {
                    for nn in 0..n {
                        let (wd, i) = nz_int4_word(k, n, ee, kk, nn);
                        out[(ee * k + kk) * n + nn] = nibble(words[wd], i);
                    }
                }
            }
            Ok((out, e, k, n))
        }
    }
}

/// GroupedMatmul A4W4, split along M: `x` INT32 `[M, K / 8]` (int4, low nibble first), the
/// weight `[E, K, N]` int4 ([`Int4Weight`]), `scale` `[E, N]` (per channel) or `[E, G, N]`
/// (per K group of K / G) 64-bit parameters ([`decode_quant_param`]'s float scale),
/// `per_token` FLOAT `[M]` or none, `ends` the groups' cumulative row ends. For a row of group
/// e, as the kernel computes it: each K group's exact integer product times its scale is
/// rounded to y's type (the fix-pipe output) and accumulated in y's type; the sum, times the
/// per-token scale in f32, is rounded once more to y's type. Rows past the last group are not
/// written.
pub fn grouped_matmul_a4w4(
    x: &View,
    w: &Int4Weight,
    scale: &View,
    per_token: Option<&View>,
    ends: &[i64],
    y: &View,
) -> Result<(), String> {
    let (wv, e_dim, k, n) = weight_values(w)?;
    let m = x.shape[0];
    if x.shape[1] * 8 != k {
        return Err(format!(
            "grouped_matmul_a4w4: x [{m}, {}] words hold K {}, the weight's K is {k}",
            x.shape[1],
            x.shape[1] * 8
        ));
    }
    let xw: Vec<i64> = load(x, DType::I64)?;
    let xv: Vec<i64> = xw
        .iter()
        .flat_map(|&wd| (0..8).map(move |j| nibble(wd, j)))
        .collect();
    let sc: Vec<f32> = load::<i64>(scale, DType::I64)?
        .into_iter()
        .map(|q| decode_quant_param(q as u64).0)
        .collect();
    let g = if scale.ndim() == 3 { scale.shape[1] } else { 1 };
    if sc.len() != e_dim * g * n || g == 0 || k % g != 0 {
        return Err(format!(
            "grouped_matmul_a4w4: scale of shape {:?} does not fit weight [{e_dim}, {k}, {n}]",
            scale.shape
        ));
    }
    let gk = k / g;
    let pt: Option<Vec<f32>> = match per_token {
        Some(p) => Some(load(p, DType::F32)?),
        None => None,
    };
    let round_y = |v: f32| -> f32 {
        match y.dtype {
            DType::BF16 => half::bf16::from_f32(v).to_f32(),
            _ => half::f16::from_f32(v).to_f32(),
        }
    };
    let mut out_rows: Vec<(usize, Vec<f32>)> = Vec::new();
    for (e, start, rows) in m_groups(ends, m, e_dim)? {
        for r in start..start + rows {
            let xr = &xv[r * k..(r + 1) * k];
            let mut row = vec![0f32; n];
            for (j, o) in row.iter_mut().enumerate() {
                let mut acc = 0f32;
                for gi in 0..g {
                    let mut dot = 0i64;
                    for kk in gi * gk..(gi + 1) * gk {
                        dot += xr[kk] * wv[(e * k + kk) * n + j];
                    }
                    let part = round_y(dot as f32 * sc[(e * g + gi) * n + j]);
                    acc = if gi == 0 { part } else { round_y(acc + part) };
                }
                *o = match &pt {
                    Some(p) => round_y(acc * p[r]),
                    None => acc,
                };
            }
            out_rows.push((r, row));
        }
    }
    for (r, row) in out_rows {
        let dst = View {
            ptr: y.at(&[r, 0]),
            dtype: y.dtype,
            shape: vec![n],
            strides: vec![y.strides[1]],
        };
        store(row, DType::F32, &dst)?;
    }
    Ok(())
}

/// GroupedMatmul's fused activation (CANN's `GMMActType` 1, 2, 4, 5; 0 is `None`), applied in
/// f32 after the dequantisation and the per-token scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GmmAct {
    None,
    Relu,
    GeluTanh,
    FastGelu,
    Silu,
}

/// GroupedMatmul A8W8, split along M: `x` INT8 `[M, K]`, `w` INT8 `[E, K, N]` (logical, any
/// strides), `bias` INT32 `[E, N]`, `scale` `[E, N]` (FLOAT/BFLOAT16 for a FLOAT16/BFLOAT16
/// `y`, the 64-bit parameter of TransQuantParamV2 for an INT8 `y`, none for INT32),
/// `per_token` FLOAT `[M]`, `ends` the groups' cumulative row ends. For a row r of group e,
/// as CANN's kernel computes it: the exact integer product plus the INT32 bias (the matmul's
/// accumulator), then [`quant_matmul`]'s epilogue for `y`'s type: INT32 as is; INT8
/// `round((acc) * scale + offset)` saturated; FLOAT16/BFLOAT16 `f32(acc) * scale[e] *
/// per_token[r]`, then `act` in f32, rounded once to `y`'s type. Rows past the last group
/// are not written.
#[allow(clippy::too_many_arguments)]
pub fn grouped_matmul_a8w8(
    x: &View,
    w: &View,
    bias: Option<&View>,
    scale: Option<&View>,
    per_token: Option<&View>,
    ends: &[i64],
    act: GmmAct,
    y: &View,
) -> Result<(), String> {
    let m = x.shape[0];
    let e_dim = w.shape[0];
    let n = y.shape[1];
    let mut one = [1f32];
    let unit = View::of_slice(&mut one, DType::F32, &[1]);
    for (e, start, len) in m_groups(ends, m, e_dim)? {
        let xe = narrow0(x, start, len);
        let we = select0(w, e);
        let be = bias.map(|b| select0(b, e));
        let se = scale.map(|s| select0(s, e));
        let pe = per_token.map(|p| narrow0(p, start, len));
        let ye = narrow0(y, start, len);
        let se_ref = se.as_ref().unwrap_or(&unit);
        // The activation: a unary of the engine, or FastGelu (norm's).
        let unary = match act {
            GmmAct::None => None,
            GmmAct::Relu => Some(Some(Unary::Relu)),
            GmmAct::GeluTanh => Some(Some(Unary::GeluTanh)),
            GmmAct::Silu => Some(Some(Unary::Silu)),
            GmmAct::FastGelu => Some(None),
        };
        // Without an activation the epilogue writes y; with one it writes the f32 values the
        // activation reads, and y is rounded once from its result.
        let pre = unary.map(|_| Scratch::new(DType::F32, &[len, n]));
        quant_matmul(
            &xe,
            &we,
            pe.as_ref(),
            se_ref,
            None,
            be.as_ref(),
            false,
            false,
            pre.as_ref().map_or(&ye, |p| &p.view),
        )?;
        if let (Some(u), Some(pre)) = (unary, &pre) {
            let post = Scratch::new(DType::F32, &[len, n]);
            match u {
                Some(u) => math::unary(u, &pre.view, &post.view, DType::F32)?,
                None => norm::fast_gelu(&pre.view, &post.view)?,
            }
            let v: Vec<f32> = load(&post.view, DType::F32)?;
            store(v, DType::F32, &ye)?;
        }
    }
    Ok(())
}

/// GroupedMatmulSwigluQuantV2's A8W8 mode (dequantMode 0, quantMode 0): for a row r of group
/// e, as the kernel computes it: `c = f32(x_r . w_e) * x_scale[r] * w_scale[e]` (per channel,
/// f32), `s = gate * swish(act)` over the halves `act = c[..n/2]`, `gate = c[n/2..]`
/// (`swish(a) = a / (1 + e^-a)`), `out_scale[r] = max|s| / 127` and `out[r] = int8(half(s *
/// (1 / out_scale[r])))` (to half, then to int8, both half to even, saturated). `x` INT8
/// `[M, K]`, `w` INT8 `[E, K, N]` (logical, any strides), `w_scale` `[E, N]`, `x_scale` `[M]`,
/// `ends` cumulative; rows past the last group are not written.
pub fn gmm_swiglu_quant_a8w8(
    x: &View,
    w: &View,
    w_scale: &View,
    x_scale: &View,
    ends: &[i64],
    out: &View,
    out_scale: &View,
) -> Result<(), String> {
    let (m, k) = (x.shape[0], x.shape[1]);
    let (e_dim, n) = (w.shape[0], w.shape[2]);
    let half_n = n / 2;
    let xv: Vec<f64> = load(x, DType::F64)?;
    let ws: Vec<f32> = load(w_scale, DType::F32)?;
    let xs: Vec<f32> = load(x_scale, DType::F32)?;
    for (e, start, rows) in m_groups(ends, m, e_dim)? {
        let we = View {
            ptr: w
                .ptr
                .wrapping_offset(e as isize * w.strides[0] * w.dtype.size() as isize),
            dtype: w.dtype,
            shape: vec![k, n],
            strides: vec![w.strides[1], w.strides[2]],
        };
        let wv: Vec<f64> = load(&we, DType::F64)?;
        let mut c = vec![0f64; rows * n];
        // SAFETY: the slices hold rows x k, k x n and rows x n f64 values, row-major; the
        // products of int8 values summed over k stay exact in f64 (|sum| < 2^53).
        unsafe {
            matrixmultiply::dgemm(
                rows,
                k,
                n,
                1.0,
                xv[start * k..].as_ptr(),
                k as isize,
                1,
                wv.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        }
        for i in 0..rows {
            let r = start + i;
            let deq: Vec<f32> = (0..n)
                .map(|j| (c[i * n + j] as i64 as f32) * xs[r] * ws[e * n + j])
                .collect();
            let s: Vec<f32> = (0..half_n)
                .map(|j| {
                    let a = deq[j];
                    deq[half_n + j] * (a / (1.0 + (-a).exp()))
                })
                .collect();
            let mx = s.iter().fold(0f32, |acc, v| acc.max(v.abs()));
            let qs = mx / 127.0;
            let inv = 1.0 / qs;
            let q: Vec<f64> = s
                .iter()
                .map(|&v| {
                    let h = half::f16::from_f32(v * inv).to_f32();
                    if h.is_nan() {
                        0.0
                    } else {
                        h.round_ties_even().clamp(-128.0, 127.0) as f64
                    }
                })
                .collect();
            let row = View {
                ptr: out.at(&[r, 0]),
                dtype: out.dtype,
                shape: vec![half_n],
                strides: vec![out.strides[1]],
            };
            store(q, DType::F64, &row)?;
            let sc = View {
                ptr: out_scale.at(&[r]),
                dtype: out_scale.dtype,
                shape: vec![1],
                strides: vec![1],
            };
            store(vec![qs], DType::F32, &sc)?;
        }
    }
    Ok(())
}

/// QuantMatmulReduceSum: `out[i, j] = sum_b f32(x1[b] @ x2[b])[i, j] * x1_scale[b, i] *
/// x2_scale[j]`: each batch's exact integer product scaled in f32, the batches summed in f32
/// in order, rounded once to `out`'s type. `x1` INT8 `[B, M, K]`, `x2` INT8 `[B, K, N]`
/// (logical, any strides), `x1_scale` `[B, M]`, `x2_scale` `[N]`, `out` `[M, N]`.
pub fn quant_matmul_reduce_sum(
    x1: &View,
    x2: &View,
    x1_scale: &View,
    x2_scale: &View,
    out: &View,
) -> Result<(), String> {
    let (b, m, k) = (x1.shape[0], x1.shape[1], x1.shape[2]);
    let n = x2.shape[2];
    let av: Vec<f64> = load(x1, DType::F64)?;
    let bv: Vec<f64> = load(x2, DType::F64)?;
    let s1: Vec<f32> = load(x1_scale, DType::F32)?;
    let s2: Vec<f32> = load(x2_scale, DType::F32)?;
    let mut acc = vec![0f32; m * n];
    let mut c = vec![0f64; m * n];
    for bi in 0..b {
        // SAFETY: the slices hold m x k, k x n and m x n f64 values, row-major; int8 products
        // summed over k stay exact in f64.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                av[bi * m * k..].as_ptr(),
                k as isize,
                1,
                bv[bi * k * n..].as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        }
        for i in 0..m {
            for j in 0..n {
                acc[i * n + j] += (c[i * n + j] as i64 as f32) * s1[bi * m + i] * s2[j];
            }
        }
    }
    store(acc, DType::F32, out)
}

/// RotateQuant on Atlas A2/A3, as the kernel computes it: `Y = (x.reshape(-1, K) @
/// rotation).reshape(M, N)` accumulated in f32 and stored in x's type (its matmul output);
/// per row `q = 127 / max|Y|` (7 for int4) in f32, `y = rint(Y * q)` saturated,
/// `scale = max|Y| * f32(1 / 127)`. `y` is INT8 `[M, N]` or INT32 `[M, N/8]` (int4 packed
/// eight a word, low nibble first); `scale` FLOAT `[M]`.
pub fn rotate_quant(x: &View, rot: &View, y: &View, scale: &View) -> Result<(), String> {
    let (m, n) = (x.shape[0], x.shape[1]);
    let k = rot.shape[0];
    let int4 = y.dtype == DType::I32;
    let cmax: f32 = if int4 { 7.0 } else { 127.0 };
    let (lo, hi) = if int4 { (-8.0, 7.0) } else { (-128.0, 127.0) };
    let xv: Vec<f64> = load(x, DType::F64)?;
    let rv: Vec<f64> = load(rot, DType::F64)?;
    let rows = m * n / k;
    let mut yv = vec![0f64; rows * k];
    // SAFETY: the slices hold rows x k, k x k and rows x k f64 values, row-major.
    unsafe {
        matrixmultiply::dgemm(
            rows,
            k,
            k,
            1.0,
            xv.as_ptr(),
            k as isize,
            1,
            rv.as_ptr(),
            k as isize,
            1,
            0.0,
            yv.as_mut_ptr(),
            k as isize,
            1,
        );
    }
    // the matmul output in x's type
    let round_x = |v: f64| -> f32 {
        let f = v as f32;
        match x.dtype {
            DType::BF16 => half::bf16::from_f32(f).to_f32(),
            _ => half::f16::from_f32(f).to_f32(),
        }
    };
    let inv = 1.0f32 / cmax;
    let mut q = Vec::with_capacity(m * n);
    let mut sc = Vec::with_capacity(m);
    for r in 0..m {
        let row: Vec<f32> = yv[r * n..(r + 1) * n].iter().map(|&v| round_x(v)).collect();
        let mx = row.iter().fold(0f32, |a, v| a.max(v.abs()));
        let qs = cmax / mx;
        for v in &row {
            let t = v * qs;
            q.push(if t.is_nan() {
                0i64
            } else {
                t.round_ties_even().clamp(lo, hi) as i64
            });
        }
        sc.push(mx * inv);
    }
    store(sc, DType::F32, scale)?;
    if int4 {
        store(q.chunks(8).map(pack8).collect::<Vec<i64>>(), DType::I64, y)
    } else {
        store(q, DType::I64, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::view::Scratch;

    #[test]
    fn int4_quant_packs_low_nibble_first_and_saturates() {
        let mut x: Vec<f32> = vec![0.0, 1.0, -1.0, 2.5, 3.5, 100.0, -100.0, -7.6];
        let xv = View::of_slice(&mut x, DType::F32, &[1, 8]);
        let mut s = vec![1.0f32];
        let sv = View::of_slice(&mut s, DType::F32, &[1]);
        let y = Scratch::new(DType::I32, &[1, 1]);
        ascend_quant_int4(&xv, &sv, None, 1, false, Round::Even, &y.view).unwrap();
        let w: Vec<i64> = load(&y.view, DType::I64).unwrap();
        // 0, 1, -1, 2 (2.5 to even), 4 (3.5 to even), 7, -8, -8
        let want: Vec<i64> = vec![0, 1, -1, 2, 4, 7, -8, -8];
        assert_eq!((0..8).map(|i| nibble(w[0], i)).collect::<Vec<_>>(), want);
        assert_eq!(w[0] as u32 & 0xF, 0);
        assert_eq!((w[0] as u32 >> 4) & 0xF, 1);
    }

    #[test]
    fn nz_word_layout() {
        // [1, 16, 128]: element (0, k, n) lives in block n / 64, row k, word (n % 64) / 8
        assert_eq!(nz_int4_word(16, 128, 0, 3, 70), ((16 + 3) * 8, 6));
        assert_eq!(nz_int4_words(2, 20, 64), 2 * 32 * 8);
    }
}
