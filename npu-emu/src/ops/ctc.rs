//! Connectionist temporal classification: `F.ctc_loss` through torch_npu's `_ctc_loss` and
//! `_ctc_loss_backward` (aclnnCtcLoss, aclnnCtcLossBackward).
//!
//! The log-space forward (alpha) and backward (beta) recursions of Graves et al. over the
//! extended label sequence `l'` (blanks around and between the target labels), in f64 for
//! every floating type. `log_probs` is `[T, N, C]` (or `[T, C]`, one batch entry); targets are
//! padded `[N, S]` or the concatenation of all targets (1-D). The alpha table is `[N, T, X]`
//! with `X >= 2 * max(target_lengths) + 1`; entries outside a batch entry's `t < input_length`,
//! `s < 2 * target_length + 1` are `-inf`.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// The lengths and options shared by the forward and backward passes.
#[derive(Clone, Debug)]
pub struct Ctc {
    pub input_lengths: Vec<i64>,
    pub target_lengths: Vec<i64>,
    pub blank: usize,
    pub zero_infinity: bool,
}

fn lse2(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp()).ln()
}

fn lse3(a: f64, b: f64, c: f64) -> f64 {
    let m = a.max(b).max(c);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp() + (c - m).exp()).ln()
}

/// Sizes of `log_probs`: (T, N, C).
fn dims(lp: &View) -> (usize, usize, usize) {
    if lp.shape.len() == 3 {
        (lp.shape[0], lp.shape[1], lp.shape[2])
    } else {
        (lp.shape[0], 1, lp.shape[1])
    }
}

/// Per batch entry, its target labels.
fn targets_of(targets: &View, c: &Ctc, n: usize) -> Result<Vec<Vec<i64>>, String> {
    let tg: Vec<i64> = load(targets, DType::I64)?;
    let mut out = Vec::with_capacity(n);
    let mut off = 0usize;
    for b in 0..n {
        let l = c.target_lengths[b] as usize;
        let start = if targets.shape.len() == 2 {
            b * targets.shape[1]
        } else {
            let s = off;
            off += l;
            s
        };
        out.push(tg[start..start + l].to_vec());
    }
    Ok(out)
}

/// Label of extended position `s`.
fn label(tgt: &[i64], blank: usize, s: usize) -> usize {
    if s.is_multiple_of(2) {
        blank
    } else {
        tgt[s / 2] as usize
    }
}

fn check_labels(tgt: &[i64], b: usize, classes: usize) -> Result<(), String> {
    for &v in tgt {
        if v < 0 || v as usize >= classes {
            return Err(format!(
                "target label {v} of batch entry {b} is outside [0, {classes})"
            ));
        }
    }
    Ok(())
}

/// `F.ctc_loss` per batch entry (reduction none): `nll[b] = -log p(target_b | x_b)`, and the
/// alpha table.
pub fn ctc_loss(
    lp: &View,
    targets: &View,
    c: &Ctc,
    nll: &View,
    log_alpha: &View,
) -> Result<(), String> {
    let (t_max, n, classes) = dims(lp);
    let x = log_alpha.shape[2];
    let p: Vec<f64> = load(lp, DType::F64)?;
    let at = |t: usize, b: usize, k: usize| p[(t * n + b) * classes + k];
    let tg = targets_of(targets, c, n)?;
    let mut alpha = vec![f64::NEG_INFINITY; n * t_max * x];
    let mut loss = vec![0f64; n];
    for b in 0..n {
        let tgt = &tg[b];
        check_labels(tgt, b, classes)?;
        let tl = c.input_lengths[b] as usize;
        let sl = 2 * tgt.len() + 1;
        let la = &mut alpha[b * t_max * x..(b + 1) * t_max * x];
        if tl == 0 {
            loss[b] = if tgt.is_empty() { 0.0 } else { f64::INFINITY };
        } else {
            la[0] = at(0, b, c.blank);
            if sl > 1 {
                la[1] = at(0, b, label(tgt, c.blank, 1));
            }
            for t in 1..tl {
                for s in 0..sl {
                    let k = label(tgt, c.blank, s);
                    let prev = &la[(t - 1) * x..];
                    let a = prev[s];
                    let bb = if s > 0 {
                        prev[s - 1]
                    } else {
                        f64::NEG_INFINITY
                    };
                    let cc = if s > 1 && label(tgt, c.blank, s - 2) != k {
                        prev[s - 2]
                    } else {
                        f64::NEG_INFINITY
                    };
                    la[t * x + s] = lse3(a, bb, cc) + at(t, b, k);
                }
            }
            let last = &la[(tl - 1) * x..];
            let end = if sl > 1 {
                lse2(last[sl - 1], last[sl - 2])
            } else {
                last[0]
            };
            loss[b] = -end;
        }
        if c.zero_infinity && loss[b] == f64::INFINITY {
            loss[b] = 0.0;
        }
    }
    store(loss, DType::F64, nll)?;
    store(alpha, DType::F64, log_alpha)
}

/// The gradient of [`ctc_loss`] with respect to `log_probs`, scaled per batch entry by
/// `grad[b]`: `(exp(lp) - exp(log sum_{s: l'_s = k} alpha beta + nll - lp)) * grad[b]` for
/// `t < input_length`, zero after it, and zero for the whole entry when `zero_infinity`
/// and its loss is infinite.
pub fn ctc_loss_backward(
    grad: &View,
    lp: &View,
    targets: &View,
    nll: &View,
    log_alpha: &View,
    c: &Ctc,
    out: &View,
) -> Result<(), String> {
    let (t_max, n, classes) = dims(lp);
    let x = log_alpha.shape[2];
    let p: Vec<f64> = load(lp, DType::F64)?;
    let g: Vec<f64> = load(grad, DType::F64)?;
    let nl: Vec<f64> = load(nll, DType::F64)?;
    let alpha: Vec<f64> = load(log_alpha, DType::F64)?;
    let tg = targets_of(targets, c, n)?;
    let idx = |t: usize, b: usize, k: usize| (t * n + b) * classes + k;
    let mut res = vec![0f64; p.len()];
    for b in 0..n {
        let tgt = &tg[b];
        check_labels(tgt, b, classes)?;
        let tl = c.input_lengths[b] as usize;
        let nllb = nl[b];
        let sl = 2 * tgt.len() + 1;
        let la = &alpha[b * t_max * x..(b + 1) * t_max * x];
        if tl == 0 {
            continue;
        }
        // The forward zeroes an infinite loss under zero_infinity, so the alpha table (no
        // alignment reaches the end) tells an impossible target too.
        let last = &la[(tl - 1) * x..];
        let end = if sl > 1 {
            lse2(last[sl - 1], last[sl - 2])
        } else {
            last[0]
        };
        if c.zero_infinity && (nllb == f64::INFINITY || end == f64::NEG_INFINITY) {
            continue;
        }
        let gb = if g.len() == 1 { g[0] } else { g[b] };
        let mut beta = vec![f64::NEG_INFINITY; tl * sl];
        beta[(tl - 1) * sl + sl - 1] = p[idx(tl - 1, b, label(tgt, c.blank, sl - 1))];
        if sl > 1 {
            beta[(tl - 1) * sl + sl - 2] = p[idx(tl - 1, b, label(tgt, c.blank, sl - 2))];
        }
        for t in (0..tl - 1).rev() {
            for s in 0..sl {
                let k = label(tgt, c.blank, s);
                let nx = &beta[(t + 1) * sl..(t + 2) * sl];
                let a = nx[s];
                let bb = if s + 1 < sl {
                    nx[s + 1]
                } else {
                    f64::NEG_INFINITY
                };
                let cc = if s + 2 < sl && label(tgt, c.blank, s + 2) != k {
                    nx[s + 2]
                } else {
                    f64::NEG_INFINITY
                };
                beta[t * sl + s] = lse3(a, bb, cc) + p[idx(t, b, k)];
            }
        }
        let mut acc = vec![f64::NEG_INFINITY; classes];
        for t in 0..tl {
            acc.iter_mut().for_each(|v| *v = f64::NEG_INFINITY);
            for s in 0..sl {
                let k = label(tgt, c.blank, s);
                acc[k] = lse2(acc[k], la[t * x + s] + beta[t * sl + s]);
            }
            for (k, &lcab) in acc.iter().enumerate() {
                let lpv = p[idx(t, b, k)];
                res[idx(t, b, k)] = (lpv.exp() - (lcab + nllb - lpv).exp()) * gb;
            }
        }
    }
    store(res, DType::F64, out)
}
