//! MoE token permutation for expert parallelism (ops-transformer's MoeTokenPermuteWithEp,
//! MoeTokenUnpermuteWithEp and their gradients; the prototypes are the generated form of the
//! operators' definitions, in the order CANN's examples call them). `rangeOptional` `[r0, r1)`
//! selects the sorted positions this rank holds (absent: all the permuted rows, from 0); the
//! permuted tensors have `r1 - r0` rows. Null required tensors 161001; data types, shapes and
//! a range that disagrees with the permuted rows 161002. paddedMode (drop-and-pad) is not
//! provided: 161002 naming it. The computation is `npu_emu::ops::moe_ep`.

use super::args as a;
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::moe_ep as engine;
use std::ffi::c_void;

const FLOATS: &[DType] = &[DType::F16, DType::BF16, DType::F32];

/// `[r0, r1)` from rangeOptional (absent or `[0, 0]`: `[0, rows)`), which must span `rows`.
fn range(h: *const c_void, rows: usize) -> Result<i64, NnError> {
    let r = a::opt_int_array(h, "rangeOptional")?;
    match r.as_deref() {
        None | Some([0, 0]) | Some([-1, -1]) => Ok(0),
        Some(&[r0, r1]) if r0 >= 0 && r1 - r0 == rows as i64 => Ok(r0),
        Some(v) => Err(NnError::invalid(format!(
            "rangeOptional {v:?} must be [start, end) with 0 <= start and end - start = {rows}, \
             the rows of the permuted tensor"
        ))),
    }
}

fn no_padded(padded: bool) -> Result<(), NnError> {
    if padded {
        Err(NnError::invalid(
            "paddedMode true (drop-and-pad) is not provided by npu-emu; only paddedMode false is",
        ))
    } else {
        Ok(())
    }
}

fn two_d(t: &a::T) -> Result<(), NnError> {
    if t.ndim() != 2 {
        return Err(NnError::invalid(format!(
            "{} must be 2-D, but its shape is {:?}",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenPermuteWithEpGetWorkspaceSize(
    tokens: *const c_void,
    indices: *const c_void,
    probsOptional: *const c_void,
    rangeOptional: *const c_void,
    numOutTokens: i64,
    paddedMode: bool,
    permuteTokensOut: *const c_void,
    sortedIndicesOut: *const c_void,
    permuteProbsOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenPermuteWithEpGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let tk = a::tensor(tokens, "tokens")?;
            let ix = a::tensor(indices, "indices")?;
            let pr = a::opt_tensor(probsOptional, "probsOptional")?;
            let po = a::tensor(permuteTokensOut, "permuteTokensOut")?;
            let so = a::tensor(sortedIndicesOut, "sortedIndicesOut")?;
            let ppo = a::opt_tensor(permuteProbsOutOptional, "permuteProbsOutOptional")?;
            if pr.is_some() && ppo.is_none() {
                return Err(NnError::nullptr(
                    "permuteProbsOutOptional must not be null when probsOptional is given",
                ));
            }
            no_padded(paddedMode)?;
            a::dtype_in(&tk, FLOATS)?;
            a::dtype_in(&ix, &[DType::I32, DType::I64])?;
            a::dtype_in(&po, &[tk.dtype()])?;
            a::dtype_in(&so, &[DType::I32])?;
            two_d(&tk)?;
            let t = tk.shape()[0];
            if ix.shape()[0] != t || ix.ndim() > 2 {
                return Err(NnError::invalid(format!(
                    "indices must be [{t}] or [{t}, topK], but its shape is {:?}",
                    ix.shape()
                )));
            }
            let nk = ix.numel();
            if numOutTokens < 0 {
                return Err(NnError::invalid(format!(
                    "numOutTokens {numOutTokens} must not be negative"
                )));
            }
            two_d(&po)?;
            let rows = po.shape()[0];
            if po.shape()[1] != tk.shape()[1] || rows > nk {
                return Err(NnError::invalid(format!(
                    "permuteTokensOut must be [rows <= {nk}, {}], but its shape is {:?}",
                    tk.shape()[1],
                    po.shape()
                )));
            }
            let r0 = range(rangeOptional, rows)?;
            a::same_shape(&so, &[nk])?;
            let with_probs = pr.is_some();
            if let (Some(p), Some(o)) = (&pr, &ppo) {
                a::dtype_in(p, &[tk.dtype()])?;
                a::dtype_in(o, &[tk.dtype()])?;
                a::same_shape(p, ix.shape())?;
                a::same_shape(o, &[rows])?;
            }
            let mut l = Launch::new("aclnnMoeTokenPermuteWithEp");
            l.input(&tk);
            l.input(&ix);
            let pi = pr.as_ref().map(|p| l.input(p));
            let oi = l.output(&po);
            l.output(&so);
            let ppi = ppo.as_ref().filter(|_| with_probs).map(|p| l.output(p));
            l.finish(move |v, _| {
                engine::moe_token_permute_with_ep(
                    &v[0],
                    &v[1],
                    pi.map(|i| &v[i]),
                    r0,
                    &v[oi],
                    &v[oi + 1],
                    ppi.map(|i| &v[i]),
                )
            })
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenPermuteWithEpGradGetWorkspaceSize(
    permutedTokensOutputGrad: *const c_void,
    sortedIndices: *const c_void,
    permutedProbsOutputGradOptional: *const c_void,
    numTopk: i64,
    rangeOptional: *const c_void,
    paddedMode: bool,
    tokenGradOut: *const c_void,
    probsGradOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenPermuteWithEpGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(permutedTokensOutputGrad, "permutedTokensOutputGrad")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let pg = a::opt_tensor(
                permutedProbsOutputGradOptional,
                "permutedProbsOutputGradOptional",
            )?;
            let tg = a::tensor(tokenGradOut, "tokenGradOut")?;
            let pgo = a::opt_tensor(probsGradOutOptional, "probsGradOutOptional")?;
            if pg.is_some() && pgo.is_none() {
                return Err(NnError::nullptr(
                    "probsGradOutOptional must not be null when permutedProbsOutputGradOptional is given",
                ));
            }
            no_padded(paddedMode)?;
            a::dtype_in(&g, FLOATS)?;
            a::dtype_in(&s, &[DType::I32])?;
            a::dtype_in(&tg, &[g.dtype()])?;
            two_d(&g)?;
            two_d(&tg)?;
            if numTopk <= 0 {
                return Err(NnError::invalid(format!(
                    "numTopk {numTopk} must be positive"
                )));
            }
            let k = numTopk as usize;
            let t = tg.shape()[0];
            a::same_shape(&s, &[t * k])?;
            a::same_shape(&tg, &[t, g.shape()[1]])?;
            let rows = g.shape()[0];
            let r0 = range(rangeOptional, rows)?;
            let with_probs = pg.is_some();
            if let (Some(p), Some(o)) = (&pg, &pgo) {
                a::dtype_in(p, &[g.dtype()])?;
                a::dtype_in(o, &[g.dtype()])?;
                a::same_shape(p, &[rows])?;
                a::same_shape(o, &[t, k])?;
            }
            let mut l = Launch::new("aclnnMoeTokenPermuteWithEpGrad");
            l.input(&g);
            l.input(&s);
            let pi = pg.as_ref().map(|p| l.input(p));
            let oi = l.output(&tg);
            let poi = pgo.as_ref().filter(|_| with_probs).map(|p| l.output(p));
            l.finish(move |v, _| {
                engine::moe_token_permute_with_ep_grad(
                    &v[0],
                    &v[1],
                    pi.map(|i| &v[i]),
                    k,
                    r0,
                    &v[oi],
                    poi.map(|i| &v[i]),
                )
            })
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenUnpermuteWithEpGetWorkspaceSize(
    permutedTokens: *const c_void,
    sortedIndices: *const c_void,
    probsOptional: *const c_void,
    numTopk: i64,
    rangeOptional: *const c_void,
    paddedMode: bool,
    restoreShapeOptional: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenUnpermuteWithEpGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(permutedTokens, "permutedTokens")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let pr = a::opt_tensor(probsOptional, "probsOptional")?;
            let o = a::tensor(out, "out")?;
            let _ = a::opt_int_array(restoreShapeOptional, "restoreShapeOptional")?;
            no_padded(paddedMode)?;
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&s, &[DType::I32])?;
            a::dtype_in(&o, &[x.dtype()])?;
            two_d(&x)?;
            two_d(&o)?;
            let k = match &pr {
                Some(p) => {
                    a::dtype_in(p, &[x.dtype()])?;
                    two_d(p)?;
                    p.shape()[1]
                }
                None if numTopk > 0 => numTopk as usize,
                None => {
                    return Err(NnError::invalid(format!(
                        "numTopk {numTopk} must be positive"
                    )))
                }
            };
            let t = o.shape()[0];
            a::same_shape(&s, &[t * k])?;
            a::same_shape(&o, &[t, x.shape()[1]])?;
            if let Some(p) = &pr {
                a::same_shape(p, &[t, k])?;
            }
            let r0 = range(rangeOptional, x.shape()[0])?;
            let mut l = Launch::new("aclnnMoeTokenUnpermuteWithEp");
            l.input(&x);
            l.input(&s);
            let pi = pr.as_ref().map(|p| l.input(p));
            let oi = l.output(&o);
            l.finish(move |v, _| {
                engine::moe_token_unpermute_with_ep(&v[0], &v[1], pi.map(|i| &v[i]), k, r0, &v[oi])
            })
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenUnpermuteWithEpGradGetWorkspaceSize(
    unpermutedTokensGrad: *const c_void,
    sortedIndices: *const c_void,
    permutedTokensOptional: *const c_void,
    probsOptional: *const c_void,
    paddedMode: bool,
    restoreShapeOptional: *const c_void,
    rangeOptional: *const c_void,
    topkNum: i64,
    permutedTokensGradOut: *const c_void,
    probsGradOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenUnpermuteWithEpGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(unpermutedTokensGrad, "unpermutedTokensGrad")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let x = a::opt_tensor(permutedTokensOptional, "permutedTokensOptional")?;
            let pr = a::opt_tensor(probsOptional, "probsOptional")?;
            let gp = a::tensor(permutedTokensGradOut, "permutedTokensGradOut")?;
            let gpr = a::opt_tensor(probsGradOutOptional, "probsGradOutOptional")?;
            let _ = a::opt_int_array(restoreShapeOptional, "restoreShapeOptional")?;
            no_padded(paddedMode)?;
            if pr.is_some() && (x.is_none() || gpr.is_none()) {
                return Err(NnError::nullptr(
                    "permutedTokensOptional and probsGradOutOptional must not be null when probsOptional is given",
                ));
            }
            a::dtype_in(&g, FLOATS)?;
            a::dtype_in(&s, &[DType::I32])?;
            a::dtype_in(&gp, &[g.dtype()])?;
            two_d(&g)?;
            two_d(&gp)?;
            let k = match &pr {
                Some(p) => {
                    two_d(p)?;
                    p.shape()[1]
                }
                None if topkNum > 0 => topkNum as usize,
                None => {
                    return Err(NnError::invalid(format!(
                        "topkNum {topkNum} must be positive"
                    )))
                }
            };
            let t = g.shape()[0];
            a::same_shape(&s, &[t * k])?;
            if gp.shape()[1] != g.shape()[1] {
                return Err(NnError::invalid(format!(
                    "permutedTokensGradOut must have {} columns, but its shape is {:?}",
                    g.shape()[1],
                    gp.shape()
                )));
            }
            let with_probs = pr.is_some();
            if with_probs {
                for t_ in [&pr, &gpr].into_iter().flatten() {
                    a::dtype_in(t_, &[g.dtype()])?;
                    a::same_shape(t_, &[t, k])?;
                }
                if let Some(xx) = &x {
                    a::dtype_in(xx, &[g.dtype()])?;
                    a::same_shape(xx, gp.shape())?;
                }
            }
            let r0 = range(rangeOptional, gp.shape()[0])?;
            let mut l = Launch::new("aclnnMoeTokenUnpermuteWithEpGrad");
            l.input(&g);
            l.input(&s);
            let xi = x.as_ref().filter(|_| with_probs).map(|p| l.input(p));
            let pi = pr.as_ref().map(|p| l.input(p));
            let oi = l.output(&gp);
            let poi = gpr.as_ref().filter(|_| with_probs).map(|p| l.output(p));
            l.finish(move |v, _| {
                engine::moe_token_unpermute_with_ep_grad(
                    &v[0],
                    &v[1],
                    xi.map(|i| &v[i]),
                    pi.map(|i| &v[i]),
                    k,
                    r0,
                    &v[oi],
                    poi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(
    aclnnMoeTokenPermuteWithEp,
    aclnnMoeTokenPermuteWithEpGrad,
    aclnnMoeTokenUnpermuteWithEp,
    aclnnMoeTokenUnpermuteWithEpGrad
);
