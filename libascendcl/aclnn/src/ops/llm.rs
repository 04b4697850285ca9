//! Utilities of large-model code: `aclnn_scatter_update.h` (`aclnnInplaceScatterUpdate`, the
//! KV-cache update of `torch_npu.scatter_update`), `aclnn_apply_top_k_top_p.h`
//! (`aclnnApplyTopKTopP`, `torch_npu.npu_top_k_top_p`) and the MoE token permutation of MoE
//! training: `aclnn_moe_token_permute.h`, `aclnn_moe_token_permute_grad.h`,
//! `aclnn_moe_token_unpermute.h`, `aclnn_moe_token_unpermute_grad.h`
//! (`torch_npu.npu_moe_token_permute` / `npu_moe_token_unpermute` and their backward). The
//! checks follow CANN's operator reference (the Atlas A2 lists); the computation is
//! `npu_emu::ops::llm`.
//!
//! Not provided: `paddedMode` true of the MoE operators (the reference does not support it
//! either), the FLOAT8/HIFLOAT8 data of ScatterUpdate (Ascend 950 only).

use super::args::{self as a, FLOATS3, T};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::llm;
use std::ffi::c_void;

fn invalid_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::invalid(msg()))
    } else {
        Ok(())
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceScatterUpdateGetWorkspaceSize(
    data: *mut c_void,
    indices: *const c_void,
    updates: *const c_void,
    axis: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceScatterUpdateGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let d = a::tensor(data, "data")?;
            let i = a::tensor(indices, "indices")?;
            let u = a::tensor(updates, "updates")?;
            use DType::*;
            a::dtype_in(&d, &[I8, F16, F32, BF16, I32])?;
            a::dtype_in(&i, &[I32, I64])?;
            a::same_dtype(&u, &d)?;
            invalid_if(d.numel() == 0 || u.numel() == 0 || i.numel() == 0, || {
                format!(
                    "data {:?}, indices {:?} and updates {:?} must not be empty",
                    d.shape(),
                    i.shape(),
                    u.shape()
                )
            })?;
            invalid_if(d.ndim() != u.ndim() || d.ndim() < 2 || d.ndim() > 8, || {
                format!(
                    "data {:?} and updates {:?} must have the same number of dimensions, 2 to 8",
                    d.shape(),
                    u.shape()
                )
            })?;
            let rank = d.ndim() as i64;
            invalid_if(axis == 0 || axis <= -rank || axis >= rank, || {
                format!("axis {axis} must be in (-{rank}, {rank}) and not 0")
            })?;
            let ax = if axis < 0 { axis + rank } else { axis } as usize;
            let (ds, us, is) = (d.shape(), u.shape(), i.shape());
            let rows_ok = match i.ndim() {
                0 => us[0] == 1,
                1 => is[0] == us[0],
                2 => is[0] == us[0] && is[1] == 2,
                _ => false,
            };
            invalid_if(!rows_ok, || {
                format!(
                    "indices {is:?} must be 0-D (updates' dimension 0 is 1), [u0] or [u0, 2] with \
                     u0 = updates' dimension 0 ({})",
                    us[0]
                )
            })?;
            let fits = us[0] <= ds[0]
                && (1..ds.len()).all(|k| {
                    if k == ax {
                        us[k] <= ds[k]
                    } else {
                        us[k] == ds[k]
                    }
                });
            invalid_if(!fits, || {
                format!(
                    "updates {us:?} must match data {ds:?} outside dimension 0 and axis {axis}, \
                     and be no larger there"
                )
            })?;
            let mut l = Launch::new("aclnnInplaceScatterUpdate");
            l.input(&i);
            l.input(&u);
            let di = l.output(&d);
            l.finish(move |v, _| llm::scatter_update(&v[di], &v[0], &v[1], ax))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnApplyTopKTopPGetWorkspaceSize(
    logits: *const c_void,
    p: *const c_void,
    k: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyTopKTopPGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(logits, "logits")?;
            let o = a::tensor(out, "out")?;
            let p = a::opt_tensor(p, "p")?;
            let k = a::opt_tensor(k, "k")?;
            if p.is_none() && k.is_none() {
                return Err(NnError::nullptr(
                    "p and k are both nullptr; give at least one",
                ));
            }
            a::dtype_in(&x, FLOATS3)?;
            a::same_dtype(&o, &x)?;
            if let Some(p) = &p {
                a::same_dtype(p, &x)?;
            }
            if let Some(k) = &k {
                a::dtype_in(k, &[DType::I32])?;
            }
            invalid_if(x.ndim() != 2, || {
                format!("logits must be 2-D, but its shape is {:?}", x.shape())
            })?;
            a::same_shape(&o, x.shape())?;
            for t in p.iter().chain(&k) {
                a::same_shape(t, &[x.shape()[0]])?;
            }
            let mut l = Launch::new("aclnnApplyTopKTopP");
            l.input(&x);
            let pi = p.as_ref().map(|t| l.input(t));
            let ki = k.as_ref().map(|t| l.input(t));
            let yi = l.output(&o);
            l.finish(move |v, _| {
                llm::apply_top_k_top_p(&v[0], pi.map(|i| &v[i]), ki.map(|i| &v[i]), &v[yi])
            })
        },
    )
}

// ---------------------------------------------------------------- MoE token permutation

/// The largest top-k of the MoE token operators (Atlas A2/A3).
const MAX_TOPK: usize = 512;

fn not_padded(padded: bool) -> NnResult<()> {
    invalid_if(padded, || {
        "paddedMode true is not supported (by the reference either); pass false".to_string()
    })
}

fn rows_by_hidden(t: &T) -> NnResult<(usize, usize)> {
    invalid_if(t.ndim() != 2, || {
        format!("{} must be 2-D [rows, hidden], not {:?}", t.arg, t.shape())
    })?;
    Ok((t.shape()[0], t.shape()[1]))
}

fn topk(k: usize, arg: &str) -> NnResult<()> {
    invalid_if(k == 0 || k > MAX_TOPK, || {
        format!("{arg} is {k}; the top-k must be in [1, {MAX_TOPK}]")
    })
}

/// `sortedIndices`: INT32, 1-D, `tk` elements.
fn sorted_indices(t: &T, tk: usize) -> NnResult<()> {
    a::dtype_in(t, &[DType::I32])?;
    a::same_shape(t, &[tk])
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeTokenPermuteGetWorkspaceSize(
    tokens: *const c_void,
    indices: *const c_void,
    numOutTokens: i64,
    paddedMode: bool,
    permuteTokensOut: *const c_void,
    sortedIndicesOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenPermuteGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(tokens, "tokens")?;
            let idx = a::tensor(indices, "indices")?;
            let po = a::tensor(permuteTokensOut, "permuteTokensOut")?;
            let so = a::tensor(sortedIndicesOut, "sortedIndicesOut")?;
            not_padded(paddedMode)?;
            use DType::*;
            a::dtype_in(&x, &[F16, BF16, F32, I8])?;
            a::dtype_in(&idx, &[I32, I64])?;
            a::same_dtype(&po, &x)?;
            let (t, h) = rows_by_hidden(&x)?;
            let k = match idx.ndim() {
                1 => 1,
                2 => idx.shape()[1],
                _ => 0,
            };
            invalid_if(
                !(1..=2).contains(&idx.ndim()) || idx.shape()[0] != t,
                || {
                    format!(
                        "indices {:?} must be [{t}] or [{t}, topK] for tokens {:?}",
                        idx.shape(),
                        x.shape()
                    )
                },
            )?;
            topk(k, "indices' dimension 1")?;
            let flat = t * k;
            invalid_if(flat >= 16_777_215, || {
                format!("indices has {flat} elements; at most 16777214 are supported")
            })?;
            // 0 keeps every token; a negative count slices from the end, as Python does
            let n = numOutTokens;
            let rows = if n == 0 {
                flat as i64
            } else if n > 0 {
                n.min(flat as i64)
            } else {
                n + flat as i64
            };
            invalid_if(rows < 0, || {
                format!("numOutTokens {n} leaves a negative count of the {flat} tokens")
            })?;
            a::same_shape(&po, &[rows as usize, h])?;
            sorted_indices(&so, flat)?;
            let mut l = Launch::new("aclnnMoeTokenPermute");
            l.input(&x);
            l.input(&idx);
            let yi = l.output(&po);
            l.output(&so);
            l.finish(move |v, _| llm::moe_token_permute(&v[0], &v[1], &v[yi], &v[yi + 1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeTokenPermuteGradGetWorkspaceSize(
    permutedOutputGrad: *const c_void,
    sortedIndices: *const c_void,
    numTopk: i64,
    paddedMode: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenPermuteGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(permutedOutputGrad, "permutedOutputGrad")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let o = a::tensor(out, "out")?;
            not_padded(paddedMode)?;
            a::dtype_in(&g, FLOATS3)?;
            a::same_dtype(&o, &g)?;
            let (_, h) = rows_by_hidden(&g)?;
            topk(numTopk.clamp(0, i64::MAX) as usize, "numTopk")?;
            let k = numTopk as usize;
            invalid_if(s.ndim() != 1 || s.numel() % k != 0, || {
                format!(
                    "sortedIndices {:?} must be 1-D with a multiple of numTopk ({k}) elements",
                    s.shape()
                )
            })?;
            sorted_indices(&s, s.numel())?;
            a::same_shape(&o, &[s.numel() / k, h])?;
            let mut l = Launch::new("aclnnMoeTokenPermuteGrad");
            l.input(&g);
            l.input(&s);
            let yi = l.output(&o);
            l.finish(move |v, _| llm::moe_token_permute_grad(&v[0], &v[1], k, &v[yi]))
        },
    )
}

/// The optional probabilities of the unpermute operators: `[tokens, topK]`, floating; the
/// top-k is 1 without them.
fn probs_topk(p: Option<&T>, tk: usize) -> NnResult<usize> {
    let Some(p) = p else { return Ok(1) };
    a::dtype_in(p, FLOATS3)?;
    invalid_if(p.ndim() != 2 || p.numel() != tk, || {
        format!(
            "probsOptional {:?} must be [tokens, topK] with tokens * topK = {tk} (sortedIndices' \
             length)",
            p.shape()
        )
    })?;
    let k = p.shape()[1];
    topk(k, "probsOptional's dimension 1")?;
    Ok(k)
}

/// `restoreShapeOptional`: read when given (to check the handle); the reference ignores it.
fn restore_shape(h: *const c_void) -> NnResult<()> {
    a::opt_int_array(h, "restoreShapeOptional").map(|_| ())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeTokenUnpermuteGetWorkspaceSize(
    permutedTokens: *const c_void,
    sortedIndices: *const c_void,
    probsOptional: *const c_void,
    paddedMode: bool,
    restoreShapeOptional: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenUnpermuteGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(permutedTokens, "permutedTokens")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let o = a::tensor(out, "out")?;
            let p = a::opt_tensor(probsOptional, "probsOptional")?;
            not_padded(paddedMode)?;
            restore_shape(restoreShapeOptional)?;
            a::dtype_in(&x, FLOATS3)?;
            a::same_dtype(&o, &x)?;
            let (_, h) = rows_by_hidden(&x)?;
            sorted_indices(&s, s.numel())?;
            let k = probs_topk(p.as_ref(), s.numel())?;
            a::same_shape(&o, &[s.numel() / k, h])?;
            let mut l = Launch::new("aclnnMoeTokenUnpermute");
            l.input(&x);
            l.input(&s);
            let pi = p.as_ref().map(|t| l.input(t));
            let yi = l.output(&o);
            l.finish(move |v, _| {
                llm::moe_token_unpermute(&v[0], &v[1], pi.map(|i| &v[i]), k, &v[yi])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeTokenUnpermuteGradGetWorkspaceSize(
    permuteTokens: *const c_void,
    unpermutedTokensGrad: *const c_void,
    sortedIndices: *const c_void,
    probsOptional: *const c_void,
    paddedMode: bool,
    restoreShapeOptional: *const c_void,
    permutedTokensGradOut: *mut c_void,
    probsGradOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenUnpermuteGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(unpermutedTokensGrad, "unpermutedTokensGrad")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let go = a::tensor(permutedTokensGradOut, "permutedTokensGradOut")?;
            let p = a::opt_tensor(probsOptional, "probsOptional")?;
            // permuteTokens only enters the probabilities' gradient (torch_npu's
            // npu_moe_token_unpermute_grad_v2 leaves it out without probs)
            let x = if p.is_some() {
                Some(a::tensor(permuteTokens, "permuteTokens")?)
            } else {
                a::opt_tensor(permuteTokens, "permuteTokens")?
            };
            let gp = match &p {
                Some(_) => Some(a::tensor(probsGradOut, "probsGradOut")?),
                None => None,
            };
            not_padded(paddedMode)?;
            restore_shape(restoreShapeOptional)?;
            a::dtype_in(&g, FLOATS3)?;
            a::dtype_in(&go, FLOATS3)?;
            let (rows, h) = rows_by_hidden(&go)?;
            if let Some(x) = &x {
                a::dtype_in(x, FLOATS3)?;
                a::same_shape(x, &[rows, h])?;
            }
            sorted_indices(&s, s.numel())?;
            let k = probs_topk(p.as_ref(), s.numel())?;
            a::same_shape(&g, &[s.numel() / k, h])?;
            if let (Some(gp), Some(p)) = (&gp, &p) {
                a::same_dtype(gp, p)?;
                a::same_shape(gp, p.shape())?;
            }
            let mut l = Launch::new("aclnnMoeTokenUnpermuteGrad");
            l.input(&g);
            l.input(&s);
            let pi = p.as_ref().map(|t| l.input(t));
            let xi = x.as_ref().map(|t| l.input(t));
            let yi = l.output(&go);
            let gpi = gp.as_ref().map(|t| l.output(t));
            l.finish(move |v, _| {
                llm::moe_token_unpermute_grad(
                    xi.map(|i| &v[i]),
                    &v[0],
                    &v[1],
                    pi.map(|i| &v[i]),
                    &v[yi],
                    gpi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(
    aclnnInplaceScatterUpdate,
    aclnnApplyTopKTopP,
    aclnnMoeTokenPermute,
    aclnnMoeTokenPermuteGrad,
    aclnnMoeTokenUnpermute,
    aclnnMoeTokenUnpermuteGrad
);
