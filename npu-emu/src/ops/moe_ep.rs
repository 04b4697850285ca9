//! MoE token permutation for expert parallelism: MoeTokenPermute/Unpermute and their
//! gradients where this rank keeps only the sorted positions `[r0, r1)` (`range`): sorted
//! position `p` of a (token, slot) pair is permuted row `p - r0` when `r0 <= p < r1`; pairs
//! outside the range belong to other ranks and are skipped.

use super::dtype::DType;
use super::extra::{load, store};
use super::view::View;

/// The local row of sorted position `p` (`None` outside `[r0, r1)`); a negative position
/// fails the task.
fn local(p: i64, j: usize, r0: i64, r1: i64) -> Result<Option<usize>, String> {
    if p < 0 {
        return Err(format!("sortedIndices[{j}] = {p} is negative"));
    }
    Ok((p >= r0 && p < r1).then_some((p - r0) as usize))
}

/// MoeTokenPermuteWithEp (not padded): the `t·k` pairs of `indices` sorted by expert
/// (stable); `sorted[j]` the position of pair `j`; `permuted[sorted[j] - r0] = tokens[j / k]`
/// and `permuted_probs[sorted[j] - r0] = probs[j]` for positions in `[r0, r1)`.
pub fn moe_token_permute_with_ep(
    tokens: &View,
    indices: &View,
    probs: Option<&View>,
    r0: i64,
    permuted: &View,
    sorted_indices: &View,
    permuted_probs: Option<&View>,
) -> Result<(), String> {
    let h = tokens.shape[1];
    let experts: Vec<i64> = load(indices, DType::I64)?;
    let k = experts
        .len()
        .checked_div(tokens.shape[0])
        .unwrap_or(1)
        .max(1);
    let mut order: Vec<usize> = (0..experts.len()).collect();
    order.sort_by_key(|&j| experts[j]);
    let mut inv = vec![0i64; order.len()];
    for (pos, &j) in order.iter().enumerate() {
        inv[j] = pos as i64;
    }
    let rows = permuted.shape[0];
    let r1 = r0 + rows as i64;
    let x: Vec<f64> = load(tokens, DType::F64)?;
    let pr: Option<Vec<f64>> = probs.map(|p| load(p, DType::F64)).transpose()?;
    let mut out = vec![0f64; rows * h];
    let mut po = vec![0f64; rows];
    for (j, &p) in inv.iter().enumerate() {
        if let Some(r) = local(p, j, r0, r1)? {
            let t = j / k;
            out[r * h..(r + 1) * h].copy_from_slice(&x[t * h..(t + 1) * h]);
            if let Some(pv) = &pr {
                po[r] = pv[j];
            }
        }
    }
    store(out, DType::F64, permuted)?;
    if let Some(v) = permuted_probs {
        store(po, DType::F64, v)?;
    }
    store(inv, DType::I64, sorted_indices)
}

/// MoeTokenPermuteWithEpGrad: `token_grad[t] = Σ_s grad[sorted[t·k + s] - r0]` over the
/// positions in `[r0, r0 + rows)`, and `probs_grad[j] = probs_out_grad[sorted[j] - r0]` (0
/// outside), f64 sums.
pub fn moe_token_permute_with_ep_grad(
    grad: &View,
    sorted_indices: &View,
    probs_out_grad: Option<&View>,
    k: usize,
    r0: i64,
    token_grad: &View,
    probs_grad: Option<&View>,
) -> Result<(), String> {
    let (rows, h) = (grad.shape[0], grad.shape[1]);
    let r1 = r0 + rows as i64;
    let g: Vec<f64> = load(grad, DType::F64)?;
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    let pg: Option<Vec<f64>> = probs_out_grad.map(|p| load(p, DType::F64)).transpose()?;
    let t = token_grad.shape[0];
    let mut o = vec![0f64; t * h];
    let mut po = vec![0f64; t * k];
    for j in 0..(t * k).min(s.len()) {
        if let Some(r) = local(s[j], j, r0, r1)? {
            let dst = &mut o[(j / k) * h..(j / k + 1) * h];
            for (d, v) in dst.iter_mut().zip(&g[r * h..(r + 1) * h]) {
                *d += v;
            }
            if let Some(p) = &pg {
                po[j] = p[r];
            }
        }
    }
    store(o, DType::F64, token_grad)?;
    if let Some(v) = probs_grad {
        store(po, DType::F64, v)?;
    }
    Ok(())
}

/// MoeTokenUnpermuteWithEp: `out[t] = Σ_s permuted[sorted[t·k + s] - r0] · probs[t, s]`
/// (weight 1 without probs) over the positions in `[r0, r0 + rows)`, f64 sums.
pub fn moe_token_unpermute_with_ep(
    permuted: &View,
    sorted_indices: &View,
    probs: Option<&View>,
    k: usize,
    r0: i64,
    out: &View,
) -> Result<(), String> {
    let (rows, h) = (permuted.shape[0], permuted.shape[1]);
    let r1 = r0 + rows as i64;
    let x: Vec<f64> = load(permuted, DType::F64)?;
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    let pr: Option<Vec<f64>> = probs.map(|p| load(p, DType::F64)).transpose()?;
    let t = out.shape[0];
    let mut o = vec![0f64; t * h];
    for j in 0..(t * k).min(s.len()) {
        if let Some(r) = local(s[j], j, r0, r1)? {
            let w = pr.as_ref().map_or(1.0, |p| p[j]);
            let dst = &mut o[(j / k) * h..(j / k + 1) * h];
            for (d, v) in dst.iter_mut().zip(&x[r * h..(r + 1) * h]) {
                *d += v * w;
            }
        }
    }
    store(o, DType::F64, out)
}

/// MoeTokenUnpermuteWithEpGrad: `permuted_grad[sorted[j] - r0] = grad[j / k] · probs[j]`
/// (rows no pair reaches 0) and `probs_grad[j] = Σ_h permuted[sorted[j] - r0, h] · grad[j / k,
/// h]` (0 outside `[r0, r0 + rows)`), f64.
#[allow(clippy::too_many_arguments)]
pub fn moe_token_unpermute_with_ep_grad(
    grad: &View,
    sorted_indices: &View,
    permuted: Option<&View>,
    probs: Option<&View>,
    k: usize,
    r0: i64,
    permuted_grad: &View,
    probs_grad: Option<&View>,
) -> Result<(), String> {
    let (rows, h) = (permuted_grad.shape[0], permuted_grad.shape[1]);
    let r1 = r0 + rows as i64;
    let g: Vec<f64> = load(grad, DType::F64)?;
    let s: Vec<i64> = load(sorted_indices, DType::I64)?;
    let pr: Option<Vec<f64>> = probs.map(|p| load(p, DType::F64)).transpose()?;
    let x: Option<Vec<f64>> = permuted.map(|p| load(p, DType::F64)).transpose()?;
    let t = grad.shape[0];
    let mut gp = vec![0f64; rows * h];
    let mut gpr = vec![0f64; s.len()];
    for j in 0..(t * k).min(s.len()) {
        let Some(r) = local(s[j], j, r0, r1)? else {
            continue;
        };
        let w = pr.as_ref().map_or(1.0, |p| p[j]);
        let src = &g[(j / k) * h..(j / k + 1) * h];
        for (d, v) in gp[r * h..(r + 1) * h].iter_mut().zip(src) {
            *d = v * w;
        }
        if let Some(x) = &x {
            gpr[j] = x[r * h..(r + 1) * h]
                .iter()
                .zip(src)
                .map(|(a, b)| a * b)
                .sum();
        }
    }
    store(gp, DType::F64, permuted_grad)?;
    if let Some(v) = probs_grad {
        store(gpr, DType::F64, v)?;
    }
    Ok(())
}
