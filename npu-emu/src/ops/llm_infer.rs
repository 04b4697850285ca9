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
    let tokens = if width == 0 { 0 } else { buf.len() / width };
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
