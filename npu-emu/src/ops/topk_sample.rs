//! LLM-serving token sampling: the fused top-k / top-p / min-p filter of
//! `aclnnTopKTopPSample[V2]` (`torch_npu.npu_top_k_top_p_sample`) and the exponential fill
//! of `aclnnSimThreadExponential` (`torch_npu.npu_sim_exponential_`).
//!
//! Per row `b` of `logits [batch, V]` (all arithmetic in FLOAT, as the kernel works):
//! 1. top-k, when `1 <= topK[b] <= min(align8(ksMax), 1024, V)`: the `topK[b]` largest
//!    logits (a stable descending sort: ties keep the lower index first);
//! 2. the candidates become probabilities: softmax over them when `inputIsLogits`, else the
//!    values themselves;
//! 3. top-p, when `topP[b] < 1`: with `topP[b] > 0` the shortest descending prefix whose sum
//!    reaches `topP[b]` (a candidate stays while the sum before it is `< topP[b]`); with
//!    `topP[b] <= 0` only the largest, whose probability becomes 1 when `inputIsLogits`;
//!    without top-k and top-p (and `minPs[b] < 1`) the row is not sorted: all `V` tokens in
//!    index order with their (softmax) probabilities;
//! 4. min-p: `0 < minPs[b] < 1` keeps the candidates whose probability is at least
//!    `minPs[b] * max`, `minPs[b] >= 1` keeps only the first (largest), `<= 0` skips;
//! 5. the result: with `isNeedSampleResult` the candidates' probabilities and their indices
//!    into `logits`, packed at the row's front (`logitsSortMasked`, zeros after; `logitsIdx`,
//!    zeros after), for a later multinomial draw; otherwise the index into `logits` of the
//!    candidate with the largest `prob / (|q[b, i]| + eps)` (with `q`, the exponential-race
//!    sample) or the largest `prob` (without), first one on ties;
//! 6. with `isNeedLogits`, `logitsTopKPSelect[b]` holds the original logits of the kept tokens
//!    and `-inf` (`inputIsLogits`) or 0 elsewhere.

use super::dtype::DType;
use super::extra::{load, store};
use super::random::uniform01;
use super::View;

/// The attributes of one top-k/top-p sampling call.
#[derive(Clone, Copy, Debug)]
pub struct TopKTopPAttrs {
    pub eps: f64,
    pub is_need_logits: bool,
    pub ks_max: i64,
    pub input_is_logits: bool,
    pub is_need_sample_result: bool,
}

/// The outputs of [`top_k_top_p_sample`]; the ones a mode does not write may be absent.
pub struct TopKTopPOut<'a> {
    pub select_idx: Option<&'a View>,
    pub top_kp_select: Option<&'a View>,
    pub logits_idx: Option<&'a View>,
    pub sort_masked: Option<&'a View>,
}

/// FLOAT softmax of `v` (max-shifted).
fn softmax(v: &[f32]) -> Vec<f32> {
    let m = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = v.iter().map(|x| (x - m).exp()).collect();
    let s: f32 = e.iter().sum();
    e.iter().map(|x| x / s).collect()
}

/// The position of the first largest element (NaN never wins).
fn argmax(v: impl Iterator<Item = f32>) -> usize {
    let mut best: Option<(usize, f32)> = None;
    for (i, x) in v.enumerate() {
        match best {
            None if !x.is_nan() => best = Some((i, x)),
            Some((_, b)) if x > b => best = Some((i, x)),
            _ => {}
        }
    }
    best.map_or(0, |b| b.0)
}

/// The kept candidates of one row: indices into the row and their probabilities.
fn filter_row(
    row: &[f32],
    k: i64,
    p: f32,
    min_p: f32,
    kmax: usize,
    input_is_logits: bool,
) -> (Vec<usize>, Vec<f32>) {
    let v = row.len();
    let use_k = k >= 1 && (k as usize) <= kmax.min(v);
    let use_p = p < 1.0;
    let norm = |x: &[f32]| {
        if input_is_logits {
            softmax(x)
        } else {
            x.to_vec()
        }
    };
    let (mut idx, mut prob): (Vec<usize>, Vec<f32>) = if !use_k && !use_p && min_p < 1.0 {
        ((0..v).collect(), norm(row))
    } else {
        let mut order: Vec<usize> = (0..v).collect();
        // stable: equal logits keep index order
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
        if use_k {
            order.truncate(k as usize);
        }
        let vals: Vec<f32> = order.iter().map(|&i| row[i]).collect();
        let mut prob = norm(&vals);
        if use_p {
            let n = if p > 0.0 {
                let mut before = 0f32;
                let mut n = 0;
                for &q in &prob {
                    if before >= p {
                        break;
                    }
                    before += q;
                    n += 1;
                }
                n.max(1)
            } else {
                1
            };
            order.truncate(n);
            prob.truncate(n);
            if p <= 0.0 && input_is_logits {
                prob[0] = 1.0;
            }
        }
        (order, prob)
    };
    if min_p > 0.0 && min_p < 1.0 {
        let thd = prob.iter().copied().fold(f32::NEG_INFINITY, f32::max) * min_p;
        let keep: Vec<bool> = prob.iter().map(|&x| x >= thd).collect();
        let mut it = keep.iter();
        idx.retain(|_| *it.next().unwrap());
        let mut it = keep.iter();
        prob.retain(|_| *it.next().unwrap());
    } else if min_p >= 1.0 {
        idx.truncate(1);
        prob.truncate(1);
    }
    (idx, prob)
}

/// `logits [batch, V]` (FLOAT16/BFLOAT16/FLOAT), `top_k` INT32 and `top_p` (and `min_ps`)
/// with `batch` elements, `q [batch, V]` FLOAT or absent; see the module documentation.
pub fn top_k_top_p_sample(
    logits: &View,
    top_k: &View,
    top_p: &View,
    q: Option<&View>,
    min_ps: Option<&View>,
    attrs: TopKTopPAttrs,
    out: TopKTopPOut,
) -> Result<(), String> {
    let (batch, v) = (logits.shape[0], logits.shape[1]);
    let x: Vec<f32> = load(logits, DType::F32)?;
    let ks: Vec<i64> = load(top_k, DType::I64)?;
    let ps: Vec<f32> = load(top_p, DType::F32)?;
    let mps: Option<Vec<f32>> = min_ps.map(|m| load(m, DType::F32)).transpose()?;
    let qs: Option<Vec<f32>> = q.map(|m| load(m, DType::F32)).transpose()?;
    let aligned = (attrs.ks_max.clamp(1, 1024) as usize).div_ceil(8) * 8;
    let kmax = aligned.min(1024);
    let def = if attrs.input_is_logits {
        f32::NEG_INFINITY
    } else {
        0.0
    };
    let mut sel = vec![0i64; batch];
    let mut kp = vec![def; batch * v];
    let mut lidx = vec![0i64; batch * v];
    let mut masked = vec![0f32; batch * v];
    for b in 0..batch {
        let row = &x[b * v..(b + 1) * v];
        let min_p = mps.as_ref().map_or(-1.0, |m| m[b]);
        let (idx, prob) = filter_row(row, ks[b], ps[b], min_p, kmax, attrs.input_is_logits);
        if attrs.is_need_sample_result {
            for (j, (&i, &pr)) in idx.iter().zip(&prob).enumerate() {
                lidx[b * v + j] = i as i64;
                masked[b * v + j] = pr;
            }
        } else {
            let pick = match &qs {
                Some(q) => {
                    let qrow = &q[b * v..(b + 1) * v];
                    let eps = attrs.eps as f32;
                    argmax(
                        prob.iter()
                            .zip(qrow)
                            .map(|(&pr, &qv)| pr / (qv.abs() + eps)),
                    )
                }
                None => argmax(prob.iter().copied()),
            };
            sel[b] = idx[pick] as i64;
        }
        if attrs.is_need_logits {
            for &i in &idx {
                kp[b * v + i] = row[i];
            }
        }
    }
    if attrs.is_need_sample_result {
        if let Some(o) = out.logits_idx {
            store(lidx, DType::I64, o)?;
        }
        if let Some(o) = out.sort_masked {
            store(masked, DType::F32, o)?;
        }
    } else if let Some(o) = out.select_idx {
        store(sel, DType::I64, o)?;
    }
    if attrs.is_need_logits {
        if let Some(o) = out.top_kp_select {
            store(kp, DType::F32, o)?;
        }
    }
    Ok(())
}

/// `aclnnSimThreadExponential`: the first `count` elements of `out` (row-major order; all of
/// them when `count` reaches the element count) become `-ln(1 - u) / lambd` with `u`
/// uniform in [0, 1) from the Philox stream at (seed, offset); the others keep their values.
pub fn sim_thread_exponential(
    out: &View,
    count: usize,
    lambd: f64,
    seed: u64,
    offset: u64,
) -> Result<(), String> {
    if lambd.is_nan() || lambd <= 0.0 {
        return Err(format!("lambda {lambd} must be > 0"));
    }
    let n = out.numel();
    let mut v: Vec<f64> = if count >= n {
        vec![0.0; n]
    } else {
        load(out, DType::F64)?
    };
    for (i, e) in v.iter_mut().enumerate().take(count.min(n)) {
        *e = -(-uniform01(seed, offset, i, false)).ln_1p() / lambd;
    }
    store(v, DType::F64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_rules() {
        let row = [1.0f32, 3.0, 2.0, 0.5];
        // top-k 2 of logits, no top-p
        let (i, p) = filter_row(&row, 2, 1.0, -1.0, 1024, true);
        assert_eq!(i, vec![1, 2]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-6);
        // top-p on probabilities: 0.5 + 0.3 reaches 0.7
        let probs = [0.3f32, 0.5, 0.15, 0.05];
        let (i, _) = filter_row(&probs, 0, 0.7, -1.0, 1024, false);
        assert_eq!(i, vec![1, 0]);
        // p <= 0 keeps the largest alone
        let (i, p) = filter_row(&row, 0, 0.0, -1.0, 1024, true);
        assert_eq!((i, p), (vec![1], vec![1.0]));
        // k beyond ksMax's aligned bound skips top-k: every token, unsorted
        let (i, _) = filter_row(&row, 3, 1.0, -1.0, 2, true);
        assert_eq!(i.len(), 4);
        let (i, _) = filter_row(&row, 9, 1.0, -1.0, 8, true);
        assert_eq!(i, vec![0, 1, 2, 3]);
        // min-p keeps probabilities at least min_p * max, in order
        let (i, _) = filter_row(&probs, 0, 1.0, 0.5, 1024, false);
        assert_eq!(i, vec![0, 1]);
        let (i, _) = filter_row(&probs, 4, 1.0, 1.0, 1024, false);
        assert_eq!(i, vec![1]);
    }
}
