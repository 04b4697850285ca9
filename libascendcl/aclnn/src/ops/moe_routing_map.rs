//! MoE token permutation by routing map (Megatron's `[tokens, experts]` boolean map rather
//! than top-k expert ids): `aclnn_moe_token_permute_with_routing_map.h`,
//! `aclnn_moe_token_permute_with_routing_map_grad.h`,
//! `aclnn_moe_token_unpermute_with_routing_map.h`,
//! `aclnn_moe_token_unpermute_with_routing_map_grad.h` (`torch_npu.npu_moe_token_permute_with_routing_map`,
//! `npu_moe_token_unpermute_with_routing_map` and their autograd backward). The checks are
//! those of CANN's operator API (hicann/ops-transformer `moe/moe_token_*_with_routing_map`):
//! null tensors 161001, data types, ranks and sizes 161002; the shape rules CANN leaves to
//! its kernels (matching row counts and widths) are checked here too, 161002, so a bad call
//! cannot read past a tensor. The computation is `npu_emu::ops::llm`.
//!
//! The unpermute gradient has no published operator API: its checks are the same rules
//! applied to its arguments.

use super::args::{self as a, FLOATS3, T};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::llm;
use std::ffi::c_void;

/// The reference's limit on the token and expert counts (sorting by a float key).
const SORT_LIMIT: usize = 16_777_215;
/// The most experts one token may go to without drop-and-pad.
const MAX_TOPK: usize = 512;
/// Routing-map data types of the permutation and its gradient.
const MAP: &[DType] = &[DType::I8, DType::Bool];
/// Of the unpermutation (the reference lists UINT8 there; torch passes BOOL or INT8).
const MAP_UNPERMUTE: &[DType] = &[DType::I8, DType::U8, DType::Bool];

fn invalid_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::invalid(msg()))
    } else {
        Ok(())
    }
}

fn two_d(t: &T) -> NnResult<(usize, usize)> {
    invalid_if(t.ndim() != 2, || {
        format!(
            "the dimensions of {} should be two, but got {} ({:?})",
            t.arg,
            t.ndim(),
            t.shape()
        )
    })?;
    Ok((t.shape()[0], t.shape()[1]))
}

fn one_d(t: &T) -> NnResult<usize> {
    invalid_if(t.ndim() != 1, || {
        format!(
            "the dimensions of {} should be one, but got {} ({:?})",
            t.arg,
            t.ndim(),
            t.shape()
        )
    })?;
    Ok(t.shape()[0])
}

/// `aclnnMoeTokenPermuteWithRoutingMap`: tokens `[T, H]` and probsOptional `[T, E]`
/// (FLOAT16, BFLOAT16, FLOAT, the same), routingMap `[T, E]` INT8/BOOL; numOutTokens in `[0,
/// T * E]` gives `rows = numOutTokens / align * align` (align E with dropAndPad, else T):
/// permuteTokensOut `[rows, H]`, permuteProbsOutOptional `[rows]` (required with probs),
/// sortedIndicesOut INT32 `[rows]`. Without dropAndPad every token must go to `topK = rows / T`
/// (< 512) experts; a map routing another number of pairs fails the launch.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenPermuteWithRoutingMapGetWorkspaceSize(
    tokens: *const c_void,
    routingMap: *const c_void,
    probsOptional: *const c_void,
    numOutTokens: i64,
    dropAndPad: bool,
    permuteTokensOut: *const c_void,
    permuteProbsOutOptional: *const c_void,
    sortedIndicesOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenPermuteWithRoutingMapGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(tokens, "tokens")?;
            let rm = a::tensor(routingMap, "routingMap")?;
            let pr = a::opt_tensor(probsOptional, "probsOptional")?;
            let po = a::tensor(permuteTokensOut, "permuteTokensOut")?;
            let so = a::tensor(sortedIndicesOut, "sortedIndicesOut")?;
            let ppo = match pr {
                Some(_) => Some(a::tensor(
                    permuteProbsOutOptional,
                    "permuteProbsOutOptional",
                )?),
                None => a::opt_tensor(permuteProbsOutOptional, "permuteProbsOutOptional")?,
            };
            a::dtype_in(&x, FLOATS3)?;
            a::dtype_in(&po, FLOATS3)?;
            a::dtype_in(&rm, MAP)?;
            a::same_dtype(&po, &x)?;
            a::dtype_in(&so, &[DType::I32])?;
            if let Some(p) = &pr {
                a::dtype_in(p, FLOATS3)?;
                a::same_dtype(p, &x)?;
            }
            if let (Some(o), Some(p)) = (&ppo, &pr) {
                a::dtype_in(o, FLOATS3)?;
                a::same_dtype(o, p)?;
            }
            let (t, e) = two_d(&rm)?;
            if let Some(p) = &pr {
                two_d(p)?;
                a::same_shape(p, &[t, e])?;
            }
            let (xt, h) = two_d(&x)?;
            invalid_if(xt != t, || {
                format!("tokens {:?} must have routingMap's {t} rows", x.shape())
            })?;
            let n = numOutTokens;
            invalid_if(n < 0, || {
                format!("numOutTokens should be at least 0, but got {n}")
            })?;
            invalid_if(n as u128 > (t * e) as u128, || {
                format!(
                    "numOutTokens should not be greater than {}, but got {n}",
                    t * e
                )
            })?;
            invalid_if(t >= SORT_LIMIT || e >= SORT_LIMIT, || {
                format!("tokenNum {t} and expertNum {e} should be less than {SORT_LIMIT}")
            })?;
            let align = if dropAndPad { e } else { t }.max(1);
            let rows = n as usize / align * align;
            invalid_if(po.ndim() != 2 || po.shape()[0] != rows, || {
                format!(
                    "permuteTokensOut {:?}: its dim 0 should be {rows} (numOutTokens {n} rounded \
                     down to a multiple of {align})",
                    po.shape()
                )
            })?;
            a::same_shape(&po, &[rows, h])?;
            a::same_shape(&so, &[rows])?;
            if let (Some(o), Some(_)) = (&ppo, &pr) {
                a::same_shape(o, &[rows])?;
            }
            if !dropAndPad {
                let k = rows / t.max(1);
                invalid_if(k >= MAX_TOPK, || {
                    format!(
                        "topK = numOutTokens / tokens = {k}; without dropAndPad it must be less \
                         than {MAX_TOPK}"
                    )
                })?;
            }
            let mut l = Launch::new("aclnnMoeTokenPermuteWithRoutingMap");
            l.input(&x);
            l.input(&rm);
            let pi = pr.as_ref().map(|p| l.input(p));
            let oo = l.output(&po);
            l.output(&so);
            let opp = match (&ppo, &pr) {
                (Some(o), Some(_)) => Some(l.output(o)),
                _ => None,
            };
            l.finish(move |v, _| {
                if v[oo].shape[0] == 0 || v[1].shape.contains(&0) {
                    return Ok(());
                }
                llm::moe_permute_with_routing_map(
                    &v[0],
                    &v[1],
                    pi.map(|i| &v[i]),
                    dropAndPad,
                    &v[oo],
                    opp.map(|i| &v[i]),
                    &v[oo + 1],
                )
            })
        },
    )
}

/// `aclnnMoeTokenPermuteWithRoutingMapGrad`: numExperts and tokensNum positive;
/// permutedTokenOutputGrad `[rows, H]` (FLOAT16, BFLOAT16, FLOAT), sortedIndices INT32
/// `[rows]`, tokensGradOut `[tokensNum, H]` of the gradient's type; with
/// permutedProbsOutputGradOptional (`[rows]`, the same type) routingMapOptional
/// (`[tokensNum, numExperts]` INT8/BOOL) is required and probsGradOutOptional `[tokensNum,
/// numExperts]` is written.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenPermuteWithRoutingMapGradGetWorkspaceSize(
    permutedTokenOutputGrad: *const c_void,
    permutedProbsOutputGradOptional: *const c_void,
    sortedIndices: *const c_void,
    routingMapOptional: *const c_void,
    numExperts: i64,
    tokensNum: i64,
    dropAndPad: bool,
    tokensGradOut: *mut c_void,
    probsGradOutOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenPermuteWithRoutingMapGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            invalid_if(numExperts <= 0, || {
                format!("numExperts should be larger than 0, but current is {numExperts}")
            })?;
            invalid_if(tokensNum <= 0, || {
                format!("tokensNum should be larger than 0, but current is {tokensNum}")
            })?;
            let g = a::tensor(permutedTokenOutputGrad, "permutedTokenOutputGrad")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let tg = a::tensor(tokensGradOut, "tokensGradOut")?;
            let pg = a::opt_tensor(
                permutedProbsOutputGradOptional,
                "permutedProbsOutputGradOptional",
            )?;
            let rm = a::opt_tensor(routingMapOptional, "routingMapOptional")?;
            if rm.is_none() && pg.is_some() {
                return Err(NnError::nullptr(
                    "when routingMapOptional is nullptr, permutedProbsOutputGradOptional \
                     should be nullptr",
                ));
            }
            let pgo = match pg {
                Some(_) => Some(a::tensor(probsGradOutOptional, "probsGradOutOptional")?),
                None => None,
            };
            a::dtype_in(&g, FLOATS3)?;
            if let Some(p) = &pg {
                a::dtype_in(p, FLOATS3)?;
                a::same_dtype(p, &g)?;
            }
            if let Some(r) = &rm {
                a::dtype_in(r, MAP)?;
            }
            a::dtype_in(&s, &[DType::I32])?;
            a::same_dtype(&tg, &g)?;
            let (rows, h) = two_d(&g)?;
            let (t, e) = (tokensNum as usize, numExperts as usize);
            if let Some(r) = &rm {
                two_d(r)?;
                a::same_shape(r, &[t, e])?;
            }
            if let Some(p) = &pg {
                one_d(p)?;
                a::same_shape(p, &[rows])?;
            }
            let n = one_d(&s)?;
            a::same_shape(&tg, &[t, h])?;
            if let Some(o) = &pgo {
                a::dtype_in(o, FLOATS3)?;
                a::same_shape(o, &[t, e])?;
            }
            if dropAndPad {
                a::same_shape(&s, &[rows])?;
            } else {
                invalid_if(n % t != 0 || n / t >= MAX_TOPK, || {
                    format!(
                        "sortedIndices has {n} entries: without dropAndPad it must hold tokensNum \
                         ({t}) times topK (less than {MAX_TOPK})"
                    )
                })?;
            }
            let mut l = Launch::new("aclnnMoeTokenPermuteWithRoutingMapGrad");
            l.input(&g);
            l.input(&s);
            let pgi = pg.as_ref().map(|p| l.input(p));
            let rmi = rm.as_ref().map(|r| l.input(r));
            let oi = l.output(&tg);
            let ppo = pgo.as_ref().map(|o| l.output(o));
            l.finish(move |v, _| {
                llm::moe_permute_with_routing_map_grad(
                    &v[0],
                    pgi.map(|i| &v[i]),
                    &v[1],
                    rmi.map(|i| &v[i]),
                    e,
                    dropAndPad,
                    &v[oi],
                    ppo.map(|i| &v[i]),
                )
            })
        },
    )
}

/// `aclnnMoeTokenUnpermuteWithRoutingMap`: permutedTokens `[P, H]` (FLOAT16, BFLOAT16,
/// FLOAT), sortedIndices INT32 `[S]`, unpermutedTokens `[T, H]` of permutedTokens' type;
/// probsOptional `[T, E]` (FLOAT16, BFLOAT16, FLOAT) and restoreShapeOptional not both null;
/// without paddedMode, probs need routingMapOptional `[T, E]` and S must be T times topK
/// (< 512); with paddedMode, `capacity = S / E`. outIndex and permuteTokenId (INT32 `[S]`)
/// are written in paddedMode; permuteProbs (`[S]`, probs' type) whenever probs are given.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenUnpermuteWithRoutingMapGetWorkspaceSize(
    permutedTokens: *const c_void,
    sortedIndices: *const c_void,
    routingMapOptional: *const c_void,
    probsOptional: *const c_void,
    paddedMode: bool,
    restoreShapeOptional: *const c_void,
    unpermutedTokens: *mut c_void,
    outIndex: *mut c_void,
    permuteTokenId: *mut c_void,
    permuteProbs: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenUnpermuteWithRoutingMapGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(permutedTokens, "permutedTokens")?;
            let s = a::tensor(sortedIndices, "sortedIndices")?;
            let pr = a::opt_tensor(probsOptional, "probsOptional")?;
            let restore = a::opt_int_array(restoreShapeOptional, "restoreShapeOptional")?;
            if pr.is_none() && restore.is_none() {
                return Err(NnError::nullptr(
                    "the probsOptional and restoreShapeOptional should not be nullptr at the \
                     same time",
                ));
            }
            let rm = a::opt_tensor(routingMapOptional, "routingMapOptional")?;
            let out = a::tensor(unpermutedTokens, "unpermutedTokens")?;
            let oi = a::opt_tensor(outIndex, "outIndex")?;
            let ti = a::opt_tensor(permuteTokenId, "permuteTokenId")?;
            let pp = a::opt_tensor(permuteProbs, "permuteProbs")?;
            a::dtype_in(&x, FLOATS3)?;
            a::dtype_in(&s, &[DType::I32])?;
            if let Some(p) = &pr {
                a::dtype_in(p, FLOATS3)?;
                if let Some(o) = &pp {
                    a::same_dtype(o, p)?;
                }
            }
            a::same_dtype(&out, &x)?;
            for o in oi.iter().chain(&ti) {
                a::same_dtype(o, &s)?;
            }
            if let Some(r) = &rm {
                a::dtype_in(r, MAP_UNPERMUTE)?;
            }
            let (_, h) = two_d(&x)?;
            let n = one_d(&s)?;
            let (t, oh) = two_d(&out)?;
            invalid_if(oh != h, || {
                format!(
                    "unpermutedTokens {:?} must be as wide as permutedTokens {:?}",
                    out.shape(),
                    x.shape()
                )
            })?;
            if let Some(rs) = &restore {
                invalid_if(
                    rs.len() != 2 || rs[0] != t as i64 || rs[1] != h as i64,
                    || {
                        format!(
                            "restoreShapeOptional {rs:?} must be unpermutedTokens' shape {:?}",
                            out.shape()
                        )
                    },
                )?;
            }
            let mut e = None;
            if let Some(p) = &pr {
                let (pt, pe) = two_d(p)?;
                invalid_if(pt != t || pe == 0, || {
                    format!(
                        "probsOptional {:?} must be [{t}, experts] (unpermutedTokens has {t} rows)",
                        p.shape()
                    )
                })?;
                e = Some(pe);
            }
            if let Some(r) = &rm {
                two_d(r)?;
                invalid_if(
                    r.shape()[0] != t || e.is_some_and(|e| r.shape()[1] != e),
                    || {
                        format!(
                            "routingMapOptional {:?} must be [{t}, experts] like probsOptional",
                            r.shape()
                        )
                    },
                )?;
            }
            if !paddedMode {
                invalid_if(t == 0 || n % t != 0 || n / t > MAX_TOPK, || {
                    format!(
                        "sortedIndices has {n} entries: without paddedMode it must hold the {t} \
                         tokens times topK (at most {MAX_TOPK})"
                    )
                })?;
                if pr.is_some() && rm.is_none() {
                    return Err(NnError::nullptr(
                        "routingMapOptional is nullptr: without paddedMode the probabilities are \
                         taken from it",
                    ));
                }
            }
            for o in oi
                .iter()
                .chain(&ti)
                .chain(if pr.is_some() { pp.as_ref() } else { None })
            {
                a::same_shape(o, &[n])?;
            }
            let mut l = Launch::new("aclnnMoeTokenUnpermuteWithRoutingMap");
            l.input(&x);
            l.input(&s);
            let rmi = rm.as_ref().map(|r| l.input(r));
            let pri = pr.as_ref().map(|p| l.input(p));
            let o = l.output(&out);
            let ooi = oi.as_ref().map(|t| l.output(t));
            let oti = ti.as_ref().map(|t| l.output(t));
            let opp = match (&pp, &pr) {
                (Some(p), Some(_)) => Some(l.output(p)),
                _ => None,
            };
            l.finish(move |v, _| {
                if v[0].shape.contains(&0) || v[1].shape[0] == 0 {
                    return Ok(());
                }
                llm::moe_unpermute_with_routing_map(
                    &v[0],
                    &v[1],
                    rmi.map(|i| &v[i]),
                    pri.map(|i| &v[i]),
                    paddedMode,
                    &v[o],
                    ooi.map(|i| &v[i]),
                    oti.map(|i| &v[i]),
                    opp.map(|i| &v[i]),
                )
            })
        },
    )
}

/// `aclnnMoeTokenUnpermuteWithRoutingMapGrad`: unpermutedTokensGrad `[T, H]` (FLOAT16,
/// BFLOAT16, FLOAT), outIndex and permuteTokenId INT32 `[S]` (with paddedMode the
/// forward's outputs; without it both are the forward's sortedIndices, as torch_npu passes
/// them), permutedTokensGradOut `[P, H]` of the gradient's type. With probsOptional (`[T,
/// E]`), permutedTokensOptional `[P, H]` and probsGradOutOptional `[T, E]` are required, and
/// without paddedMode routingMapOptional `[T, E]` too.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeTokenUnpermuteWithRoutingMapGradGetWorkspaceSize(
    unpermutedTokensGrad: *const c_void,
    outIndex: *const c_void,
    permuteTokenId: *const c_void,
    routingMapOptional: *const c_void,
    permutedTokensOptional: *const c_void,
    probsOptional: *const c_void,
    paddedMode: bool,
    restoreShapeOptional: *const c_void,
    permutedTokensGradOut: *mut c_void,
    probsGradOutOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeTokenUnpermuteWithRoutingMapGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(unpermutedTokensGrad, "unpermutedTokensGrad")?;
            let oi = a::tensor(outIndex, "outIndex")?;
            let ti = a::tensor(permuteTokenId, "permuteTokenId")?;
            let gx = a::tensor(permutedTokensGradOut, "permutedTokensGradOut")?;
            let rm = a::opt_tensor(routingMapOptional, "routingMapOptional")?;
            let pr = a::opt_tensor(probsOptional, "probsOptional")?;
            let _ = a::opt_int_array(restoreShapeOptional, "restoreShapeOptional")?;
            let (x, gp) = match pr {
                Some(_) => (
                    Some(a::tensor(permutedTokensOptional, "permutedTokensOptional")?),
                    Some(a::tensor(probsGradOutOptional, "probsGradOutOptional")?),
                ),
                None => (None, None),
            };
            a::dtype_in(&g, FLOATS3)?;
            a::dtype_in(&oi, &[DType::I32])?;
            a::dtype_in(&ti, &[DType::I32])?;
            a::same_dtype(&gx, &g)?;
            for t in x.iter().chain(&pr).chain(&gp) {
                a::dtype_in(t, FLOATS3)?;
            }
            if let Some(r) = &rm {
                a::dtype_in(r, MAP_UNPERMUTE)?;
            }
            let (t, h) = two_d(&g)?;
            let n = one_d(&oi)?;
            a::same_shape(&ti, &[n])?;
            let (p, gh) = two_d(&gx)?;
            invalid_if(gh != h, || {
                format!(
                    "permutedTokensGradOut {:?} must be as wide as unpermutedTokensGrad {:?}",
                    gx.shape(),
                    g.shape()
                )
            })?;
            if let Some(x) = &x {
                a::same_shape(x, &[p, h])?;
            }
            if let Some(pr) = &pr {
                let (pt, pe) = two_d(pr)?;
                invalid_if(pt != t || pe == 0, || {
                    format!("probsOptional {:?} must be [{t}, experts]", pr.shape())
                })?;
                if let Some(o) = &gp {
                    a::same_shape(o, &[t, pe])?;
                }
                if let Some(r) = &rm {
                    a::same_shape(r, &[t, pe])?;
                }
            }
            if !paddedMode {
                invalid_if(t == 0 || n % t != 0 || n / t > MAX_TOPK, || {
                    format!(
                        "outIndex has {n} entries: without paddedMode it must hold the {t} tokens \
                         times topK (at most {MAX_TOPK})"
                    )
                })?;
                if pr.is_some() && rm.is_none() {
                    return Err(NnError::nullptr(
                        "routingMapOptional is nullptr: without paddedMode the probabilities are \
                         taken from it",
                    ));
                }
            }
            let mut l = Launch::new("aclnnMoeTokenUnpermuteWithRoutingMapGrad");
            l.input(&g);
            l.input(&oi);
            l.input(&ti);
            let rmi = rm.as_ref().map(|r| l.input(r));
            let xi = x.as_ref().map(|t| l.input(t));
            let pri = pr.as_ref().map(|t| l.input(t));
            let o = l.output(&gx);
            let gpi = gp.as_ref().map(|t| l.output(t));
            l.finish(move |v, _| {
                llm::moe_unpermute_with_routing_map_grad(
                    &v[0],
                    &v[1],
                    &v[2],
                    rmi.map(|i| &v[i]),
                    xi.map(|i| &v[i]),
                    pri.map(|i| &v[i]),
                    paddedMode,
                    &v[o],
                    gpi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(
    aclnnMoeTokenPermuteWithRoutingMap,
    aclnnMoeTokenPermuteWithRoutingMapGrad,
    aclnnMoeTokenUnpermuteWithRoutingMap,
    aclnnMoeTokenUnpermuteWithRoutingMapGrad,
);
