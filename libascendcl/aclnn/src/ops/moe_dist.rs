//! Expert-parallel MoE over HCCL: `aclnn_moe_distribute_dispatch.h` and
//! `aclnn_moe_distribute_combine.h` (ops-transformer `mc2/`), what torch_npu calls for
//! `npu_moe_distribute_dispatch` / `npu_moe_distribute_combine`.
//!
//! Each operator is an executor of three steps on the caller's stream
//! ([`super::launch::Launch::finish_steps`]): an engine step packs this rank's data into a
//! fixed-size slot of the workspace, libhccl's `HcclAllGather` on the `groupEp`
//! communicator gathers every rank's slot, and an engine step selects what this rank needs
//! ([`npu_emu::ops::moe_dist`]). CANN exchanges only the routed tokens (AllToAllV); the
//! outputs are the same.
//!
//! Documented choices:
//! - The rows a rank receives are ordered by local expert, then source rank, then the
//!   row-major order of the source's `expertIds` (the design note of the operator pages);
//!   `epRecvCounts` is the expert-major running sum of the counts (its first
//!   `localExpertNum * epWorldSize` entries; further entries, which torch_npu allocates for
//!   the A2 layered scheme, are zero); rows of `expandX` past the received ones are zero.
//! - `expandIdx[i*K + j]`: how many earlier entries of this rank's `expertIds` name the same
//!   expert. `expandScales`: the `expertScales` entry of each received row.
//! - Atlas A2 rules: no shared-expert cards (`sharedExpertRankNum` must be 0), no TP
//!   communication (`tpWorldSize` 0 or 1; `tpRecvCounts`/`tpSendCounts` are not written or
//!   read), `moeExpertNum / epWorldSize <= 24`, H in (0, 7168] a multiple of 32,
//!   BS in (0, 256], K in (0, 16]. `epWorldSize` may be any rank count of the group
//!   (the A2 page lists 16, 32, 64; this machine has fewer devices) and must equal it;
//!   `epRankId` must be this process's rank in `groupEp`.
//! - `quantMode` 0 (expandX has x's dtype, `scales` NULL) and 2 (dynamic per-token int8:
//!   `v = x * scales[expert]` when `scales` `[moeExpertNum, H]` is given,
//!   `dynamicScales = max|v| / 127`, `expandX = round_half_even(v / dynamicScales)`);
//!   static (1), per-group (3) and MX (4) quantisation and the FP8 dtypes are
//!   ACLNN_ERR_PARAM_INVALID.
//! - Combine computes `x = sum_j expertScales[i][j] * row_j` in float32 and rounds once;
//!   `commQuantMode` must be 0, `outDtype` and `groupListType` 0; the reserved tensors
//!   (`xActiveMask`, `activationScale`, `weightScale`, `groupList`) must be NULL;
//!   `expandScales` is accepted and not needed.
//! - Bad shapes and values are ACLNN_ERR_INNER_TILING_ERROR (561002), dtypes
//!   ACLNN_ERR_PARAM_INVALID, NULL required tensors ACLNN_ERR_PARAM_NULLPTR, as the pages
//!   list.

use super::args::{self as a};
use super::launch::{phase1, Built, Launch, StepSpec};
use crate::collective::{self, Collective, Kind};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::moe_dist::{self as md, Routing};
use npu_emu::ops::{norm, Layout};
use std::ffi::{c_char, c_void, CStr};

/// `ACLNN_ERR_INNER_TILING_ERROR`: shapes or attribute values out of the supported range.
const TILING: i32 = 561002;
const ALIGN: usize = 512;
const X_DTYPES: &[DType] = &[DType::F16, DType::BF16];

fn tiling(msg: String) -> NnError {
    NnError::new(TILING, msg)
}

fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// A `const char*` argument (NULL → ACLNN_ERR_PARAM_NULLPTR naming it).
fn c_str(p: *const c_char, arg: &str) -> NnResult<String> {
    if p.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `t` must be 1-D with at least `n` elements.
fn vec_at_least(t: &a::T, n: usize) -> NnResult<()> {
    if t.ndim() != 1 || t.numel() < n {
        return Err(tiling(format!(
            "{} must be 1-D with at least {n} elements, but its shape is {:?}",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

fn shape_is(t: &a::T, shape: &[usize]) -> NnResult<()> {
    if t.shape() != shape {
        return Err(tiling(format!(
            "{} must have shape {shape:?}, but its shape is {:?}",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

/// A reserved tensor argument, which must be NULL.
fn reserved(p: *const c_void, arg: &str) -> NnResult<()> {
    if !p.is_null() {
        return Err(NnError::invalid(format!(
            "{arg} is a reserved parameter and must be nullptr"
        )));
    }
    Ok(())
}

/// The attributes shared by dispatch and combine; returns the group name and the routing
/// (without h, k, max_bs).
#[allow(clippy::too_many_arguments)]
fn common(
    group_ep: *const c_char,
    ep_world_size: i64,
    ep_rank_id: i64,
    moe_expert_num: i64,
    group_tp: *const c_char,
    tp_world_size: i64,
    tp_rank_id: i64,
    expert_shard_type: i64,
    shared_expert_num: i64,
    shared_expert_rank_num: i64,
) -> NnResult<(String, Routing)> {
    let g = c_str(group_ep, "groupEp")?;
    if g.is_empty() || g.len() >= 128 {
        return Err(tiling(format!(
            "groupEp \"{g}\" must have a length in [1, 128), but it has {}",
            g.len()
        )));
    }
    if !group_tp.is_null() {
        let tp = c_str(group_tp, "groupTp")?;
        if !tp.is_empty() && tp == g {
            return Err(tiling(format!("groupTp \"{tp}\" must differ from groupEp")));
        }
    }
    if !(0..=1).contains(&tp_world_size) {
        return Err(tiling(format!(
            "tpWorldSize {tp_world_size} is not supported: only 0 or 1 (no TP communication, \
             as on Atlas A2)"
        )));
    }
    if tp_rank_id != 0 {
        return Err(tiling(format!(
            "tpRankId {tp_rank_id} must be 0 without TP communication"
        )));
    }
    if expert_shard_type != 0 {
        return Err(tiling(format!(
            "expertShardType {expert_shard_type} is not supported: only 0"
        )));
    }
    if !(0..=1).contains(&shared_expert_num) {
        return Err(tiling(format!(
            "sharedExpertNum {shared_expert_num} must be in [0, 1]"
        )));
    }
    if shared_expert_rank_num != 0 {
        return Err(tiling(format!(
            "sharedExpertRankNum {shared_expert_rank_num} is not supported: shared-expert \
             cards are not (Atlas A2), pass 0"
        )));
    }
    let c = collective::comm(&g)?;
    if ep_world_size != c.ranks as i64 {
        return Err(tiling(format!(
            "epWorldSize {ep_world_size} differs from the {} ranks of groupEp \"{g}\"",
            c.ranks
        )));
    }
    if ep_world_size < 2 {
        return Err(tiling(format!(
            "epWorldSize {ep_world_size} is not supported: at least 2"
        )));
    }
    if ep_rank_id != c.rank as i64 {
        return Err(tiling(format!(
            "epRankId {ep_rank_id} is not this process's rank {} in groupEp \"{g}\"",
            c.rank
        )));
    }
    if !(1..=512).contains(&moe_expert_num) || moe_expert_num % ep_world_size != 0 {
        return Err(tiling(format!(
            "moeExpertNum {moe_expert_num} must be in (0, 512] and a multiple of \
             epWorldSize - sharedExpertRankNum = {ep_world_size}"
        )));
    }
    let local = (moe_expert_num / ep_world_size) as usize;
    if local > 24 {
        return Err(tiling(format!(
            "moeExpertNum / epWorldSize = {local} exceeds 24"
        )));
    }
    Ok((
        g,
        Routing {
            world: ep_world_size as usize,
            rank: ep_rank_id as usize,
            moe_experts: moe_expert_num as usize,
            local,
            h: 0,
            k: 0,
            max_bs: 0,
        },
    ))
}

/// BS, H and K of `x`-like `[bs, h]` and `expertIds` `[bs, k]`, with the Atlas A2 ranges.
fn bs_h_k(h: usize, ids: &a::T, r: &Routing) -> NnResult<(usize, usize, usize)> {
    a::dtype_in(ids, &[DType::I32])?;
    if ids.ndim() != 2 {
        return Err(tiling(format!(
            "expertIds must be 2-D (BS, K), but its shape is {:?}",
            ids.shape()
        )));
    }
    let (bs, k) = (ids.shape()[0], ids.shape()[1]);
    if !(1..=256).contains(&bs) {
        return Err(tiling(format!("BS = {bs} must be in (0, 256]")));
    }
    if k == 0 || k > 16 || k > r.moe_experts {
        return Err(tiling(format!(
            "K = {k} must be in (0, 16] and at most moeExpertNum = {}",
            r.moe_experts
        )));
    }
    if h == 0 || h > 7168 || !h.is_multiple_of(32) {
        return Err(tiling(format!(
            "H = {h} must be in (0, 7168] and a multiple of 32"
        )));
    }
    Ok((bs, h, k))
}

/// `globalBs` 0 (every rank has BS tokens) or `maxBs * epWorldSize`: returns maxBs.
fn max_bs(global_bs: i64, bs: usize, world: usize) -> NnResult<usize> {
    if global_bs == 0 {
        return Ok(bs);
    }
    if global_bs < 0
        || !(global_bs as usize).is_multiple_of(world)
        || (global_bs as usize) / world < bs
    {
        return Err(tiling(format!(
            "globalBs {global_bs} must be 0 or maxBs * epWorldSize (a multiple of {world} \
             of at least BS * epWorldSize = {})",
            bs * world
        )));
    }
    Ok(global_bs as usize / world)
}

/// The group's AllGather of one slot per rank: the slot at workspace 0, the gathered slots
/// after it.
fn gather(slot: usize, group: String) -> StepSpec {
    StepSpec::Collective(Collective {
        kind: Kind::AllGather,
        send: 0,
        recv: slot,
        count: (slot / 4) as u64,
        dtype: DType::F32,
        group,
    })
}

/// `commAlg` (V2): NULL, "", "fullmesh" or "hierarchy" (all computed alike).
fn comm_alg(p: *const c_char) -> NnResult<()> {
    if p.is_null() {
        return Ok(());
    }
    let s = c_str(p, "commAlg")?;
    if !["", "fullmesh", "hierarchy"].contains(&s.as_str()) {
        return Err(tiling(format!(
            "commAlg \"{s}\" is not supported: nullptr, \"\", \"fullmesh\" or \"hierarchy\""
        )));
    }
    Ok(())
}

/// The form of a dispatch/combine pair.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `expandIdx`; `xActiveMask` reserved.
    V1,
    /// `assistInfoForCombine`, `xActiveMask`, `commAlg`.
    V2(*const c_char),
}

#[allow(clippy::too_many_arguments)]
unsafe fn dispatch(
    form: Form,
    x: *const c_void,
    expert_ids: *const c_void,
    scales: *const c_void,
    x_active_mask: *const c_void,
    expert_scales: *const c_void,
    group_ep: *const c_char,
    ep_world_size: i64,
    ep_rank_id: i64,
    moe_expert_num: i64,
    group_tp: *const c_char,
    tp_world_size: i64,
    tp_rank_id: i64,
    expert_shard_type: i64,
    shared_expert_num: i64,
    shared_expert_rank_num: i64,
    quant_mode: i64,
    global_bs: i64,
    expert_token_nums_type: i64,
    expand_x: *const c_void,
    dynamic_scales: *const c_void,
    expand_idx: *const c_void,
    expert_token_nums: *const c_void,
    ep_recv_counts: *const c_void,
    tp_recv_counts: *const c_void,
    expand_scales: *const c_void,
) -> NnResult<Built> {
    let tx = a::tensor(x, "x")?;
    let tids = a::tensor(expert_ids, "expertIds")?;
    let tsc = a::opt_tensor(scales, "scales")?;
    let tmask = match form {
        Form::V1 => {
            reserved(x_active_mask, "xActiveMask")?;
            None
        }
        Form::V2(alg) => {
            comm_alg(alg)?;
            a::opt_tensor(x_active_mask, "xActiveMask")?
        }
    };
    let tes = a::opt_tensor(expert_scales, "expertScales")?;
    let tex = a::tensor(expand_x, "expandX")?;
    let tdyn = a::opt_tensor(dynamic_scales, "dynamicScales")?;
    let idx_name = if form == Form::V1 {
        "expandIdx"
    } else {
        "assistInfoForCombine"
    };
    let tidx = a::tensor(expand_idx, idx_name)?;
    let tnums = a::tensor(expert_token_nums, "expertTokenNums")?;
    let tep = a::tensor(ep_recv_counts, "epRecvCounts")?;
    let _ttp = a::opt_tensor(tp_recv_counts, "tpRecvCounts")?;
    let tesc = a::opt_tensor(expand_scales, "expandScales")?;
    a::dtype_in(&tx, X_DTYPES)?;
    if let Some(t) = &tsc {
        a::dtype_in(t, &[DType::F32])?;
    }
    if let Some(t) = &tes {
        a::dtype_in(t, &[DType::F32])?;
    }
    match quant_mode {
        0 => a::same_dtype(&tex, &tx)?,
        2 => a::dtype_in(&tex, &[DType::I8])?,
        1 | 3 | 4 => {
            return Err(NnError::invalid(format!(
                "quantMode {quant_mode} (static, per-group or MX quantisation) is not \
                 supported: only 0 (none) and 2 (dynamic per-token int8)"
            )))
        }
        _ => {
            return Err(tiling(format!(
                "quantMode {quant_mode} must be one of 0, 1, 2, 3, 4"
            )))
        }
    }
    if let Some(t) = &tdyn {
        a::dtype_in(t, &[DType::F32])?;
    }
    a::dtype_in(&tidx, &[DType::I32])?;
    a::dtype_in(&tnums, &[DType::I64])?;
    a::dtype_in(&tep, &[DType::I32])?;
    if let Some(t) = &tesc {
        a::dtype_in(t, &[DType::F32])?;
    }
    let (group, mut r) = common(
        group_ep,
        ep_world_size,
        ep_rank_id,
        moe_expert_num,
        group_tp,
        tp_world_size,
        tp_rank_id,
        expert_shard_type,
        shared_expert_num,
        shared_expert_rank_num,
    )?;
    if tx.ndim() != 2 {
        return Err(tiling(format!(
            "x must be 2-D (BS, H), but its shape is {:?}",
            tx.shape()
        )));
    }
    let (bs, h, k) = bs_h_k(tx.shape()[1], &tids, &r)?;
    if tx.shape()[0] != bs {
        return Err(tiling(format!(
            "x {:?} and expertIds {:?} must have the same BS",
            tx.shape(),
            tids.shape()
        )));
    }
    if let Some(t) = &tes {
        shape_is(t, &[bs, k])?;
    }
    if let Some(t) = &tmask {
        a::dtype_in(t, &[DType::Bool])?;
        shape_is(t, &[bs])?;
    }
    r.h = h;
    r.k = k;
    r.max_bs = max_bs(global_bs, bs, r.world)?;
    if !(0..=1).contains(&expert_token_nums_type) {
        return Err(tiling(format!(
            "expertTokenNumsType {expert_token_nums_type} must be 0 (running sum) or 1 (counts)"
        )));
    }
    match (&tsc, quant_mode) {
        (Some(_), 0) => {
            return Err(NnError::invalid(
                "scales must be nullptr when quantMode is 0 and expandX is FLOAT16/BFLOAT16"
                    .to_string(),
            ))
        }
        (Some(t), _) => shape_is(t, &[r.moe_experts, h])?,
        _ => {}
    }
    let rows = md::max_rows(&r);
    if tex.ndim() != 2 || tex.shape()[0] < rows || tex.shape()[1] != h {
        return Err(tiling(format!(
            "expandX must be 2-D (A, H) with H = {h} and A >= globalBs * min(localExpertNum, K) \
             = {rows}, but its shape is {:?}",
            tex.shape()
        )));
    }
    let a_rows = tex.shape()[0];
    match &tdyn {
        Some(t) => vec_at_least(t, a_rows)?,
        None if quant_mode == 2 => {
            return Err(NnError::nullptr(
                "dynamicScales is nullptr, but quantMode 2 writes it".to_string(),
            ))
        }
        None => {}
    }
    if form == Form::V1 {
        if tidx.ndim() != 1 || tidx.numel() != bs * k {
            return Err(tiling(format!(
                "expandIdx must be 1-D (BS * K = {}), but its shape is {:?}",
                bs * k,
                tidx.shape()
            )));
        }
    } else {
        vec_at_least(&tidx, rows * 128)?;
    }
    shape_is(&tnums, &[r.local])?;
    vec_at_least(&tep, r.local * r.world)?;
    if let Some(t) = &tesc {
        vec_at_least(t, rows)?;
    }

    let slot = align(md::dispatch_slot_words(&r) * 4);
    let mut l = Launch::new(if form == Form::V1 {
        "aclnnMoeDistributeDispatch"
    } else {
        "aclnnMoeDistributeDispatchV2"
    });
    let ix = l.input(&tx);
    let iids = l.input(&tids);
    let isc = tsc.as_ref().map(|t| l.input(t));
    let ies = tes.as_ref().map(|t| l.input(t));
    let imask = tmask.as_ref().map(|t| l.input(t));
    let iex = l.output(&tex);
    let idyn = tdyn.as_ref().map(|t| l.output(t));
    let iidx = l.output(&tidx);
    let inums = l.output(&tnums);
    let iep = l.output(&tep);
    let iesc = tesc.as_ref().map(|t| l.output(t));
    l.workspace((slot * (1 + r.world)) as u64);
    let cumsum = expert_token_nums_type == 0;
    let quant = quant_mode == 2;
    let v1 = form == Form::V1;
    let steps = vec![
        StepSpec::kernel(move |v, ws| {
            md::dispatch_pack(
                &r,
                &v[ix],
                &v[iids],
                ies.map(|i| &v[i]),
                imask.map(|i| &v[i]),
                &mut ws[..slot],
            )
        }),
        gather(slot, group),
        StepSpec::kernel(move |v, ws| {
            let q = if quant {
                Some(isc.map(|i| &v[i]))
            } else {
                None
            };
            md::dispatch_select(
                &r,
                &ws[slot..slot * (1 + r.world)],
                slot,
                q,
                cumsum,
                md::DispatchOut {
                    expand_x: &v[iex],
                    dynamic_scales: idyn.map(|i| &v[i]),
                    expand_idx: v1.then(|| &v[iidx]),
                    assist: (!v1).then(|| &v[iidx]),
                    expert_token_nums: &v[inums],
                    ep_recv_counts: &v[iep],
                    expand_scales: iesc.map(|i| &v[i]),
                },
            )
        }),
    ];
    l.finish_steps(steps)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeDistributeDispatchGetWorkspaceSize(
    x: *const c_void,
    expertIds: *const c_void,
    scales: *const c_void,
    xActiveMask: *const c_void,
    expertScales: *const c_void,
    groupEp: *const c_char,
    epWorldSize: i64,
    epRankId: i64,
    moeExpertNum: i64,
    groupTp: *const c_char,
    tpWorldSize: i64,
    tpRankId: i64,
    expertShardType: i64,
    sharedExpertNum: i64,
    sharedExpertRankNum: i64,
    quantMode: i64,
    globalBs: i64,
    expertTokenNumsType: i64,
    expandX: *const c_void,
    dynamicScales: *const c_void,
    expandIdx: *const c_void,
    expertTokenNums: *const c_void,
    epRecvCounts: *const c_void,
    tpRecvCounts: *const c_void,
    expandScales: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeDistributeDispatchGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            dispatch(
                Form::V1,
                x,
                expertIds,
                scales,
                xActiveMask,
                expertScales,
                groupEp,
                epWorldSize,
                epRankId,
                moeExpertNum,
                groupTp,
                tpWorldSize,
                tpRankId,
                expertShardType,
                sharedExpertNum,
                sharedExpertRankNum,
                quantMode,
                globalBs,
                expertTokenNumsType,
                expandX,
                dynamicScales,
                expandIdx,
                expertTokenNums,
                epRecvCounts,
                tpRecvCounts,
                expandScales,
            )
        },
    )
}

/// The Add + RmsNorm after CombineAddRmsNorm's combine: `x = combine + residualX`,
/// `y = x / sqrt(mean(x^2) + normEps) * gamma`, `rstd`.
struct Norm {
    residual: a::T,
    gamma: a::T,
    eps: f64,
    y: a::T,
    rstd: a::T,
}

/// The tensors of aclnnMoeDistributeCombineAddRmsNorm's norm (BFLOAT16 residual `(Bs, 1, H)`,
/// gamma `(H,)`, yOut like residual, rstdOut FLOAT32 `(Bs, 1, 1)`).
unsafe fn norm_args(
    residual: *const c_void,
    gamma: *const c_void,
    eps: f32,
    y: *const c_void,
    rstd: *const c_void,
) -> NnResult<Norm> {
    let n = Norm {
        residual: a::tensor(residual, "residualX")?,
        gamma: a::tensor(gamma, "gamma")?,
        eps: eps as f64,
        y: a::tensor(y, "yOut")?,
        rstd: a::tensor(rstd, "rstdOut")?,
    };
    a::dtype_in(&n.residual, &[DType::BF16])?;
    a::same_dtype(&n.gamma, &n.residual)?;
    a::same_dtype(&n.y, &n.residual)?;
    a::dtype_in(&n.rstd, &[DType::F32])?;
    if !n.eps.is_finite() || n.eps < 0.0 {
        return Err(tiling(format!(
            "normEps must be finite and not negative, but it is {eps}"
        )));
    }
    Ok(n)
}

#[allow(clippy::too_many_arguments)]
unsafe fn combine(
    form: Form,
    norm: Option<Norm>,
    shared_x: *const c_void,
    expand_x: *const c_void,
    expert_ids: *const c_void,
    expand_idx: *const c_void,
    ep_send_counts: *const c_void,
    expert_scales: *const c_void,
    tp_send_counts: *const c_void,
    reserved_in: [(*const c_void, &str); 4],
    expand_scales: *const c_void,
    group_ep: *const c_char,
    ep_world_size: i64,
    ep_rank_id: i64,
    moe_expert_num: i64,
    group_tp: *const c_char,
    tp_world_size: i64,
    tp_rank_id: i64,
    expert_shard_type: i64,
    shared_expert_num: i64,
    shared_expert_rank_num: i64,
    global_bs: i64,
    out_dtype: i64,
    comm_quant_mode: i64,
    group_list_type: i64,
    x: *const c_void,
) -> NnResult<Built> {
    let tex = a::tensor(expand_x, "expandX")?;
    let tids = a::tensor(expert_ids, "expertIds")?;
    let tidx = a::tensor(
        expand_idx,
        if form == Form::V1 {
            "expandIdx"
        } else {
            "assistInfoForCombine"
        },
    )?;
    let tep = a::tensor(ep_send_counts, "epSendCounts")?;
    let tes = a::tensor(expert_scales, "expertScales")?;
    let _ttp = a::opt_tensor(tp_send_counts, "tpSendCounts")?;
    let mut tmask = None;
    for (p, arg) in reserved_in {
        if let (Form::V2(_), "xActiveMask") = (form, arg) {
            tmask = a::opt_tensor(p, "xActiveMask")?;
            continue;
        }
        reserved(p, arg)?;
    }
    let tshared = a::opt_tensor(shared_x, "sharedExpertX")?;
    if let Form::V2(alg) = form {
        comm_alg(alg)?;
    }
    let tesc = a::opt_tensor(expand_scales, "expandScales")?;
    let tx = a::tensor(x, "x")?;
    a::dtype_in(&tex, X_DTYPES)?;
    a::dtype_in(&tidx, &[DType::I32])?;
    a::dtype_in(&tep, &[DType::I32])?;
    a::dtype_in(&tes, &[DType::F32])?;
    if let Some(t) = &tesc {
        a::dtype_in(t, &[DType::F32])?;
    }
    a::same_dtype(&tx, &tex)?;
    if out_dtype != 0 {
        return Err(tiling(format!("outDtype {out_dtype} is reserved: pass 0")));
    }
    if group_list_type != 0 {
        return Err(tiling(format!(
            "groupListType {group_list_type} is reserved: pass 0"
        )));
    }
    if comm_quant_mode != 0 {
        return Err(tiling(format!(
            "commQuantMode {comm_quant_mode} is not supported: only 0 (no communication \
             quantisation)"
        )));
    }
    let (group, mut r) = common(
        group_ep,
        ep_world_size,
        ep_rank_id,
        moe_expert_num,
        group_tp,
        tp_world_size,
        tp_rank_id,
        expert_shard_type,
        shared_expert_num,
        shared_expert_rank_num,
    )?;
    if tex.ndim() != 2 {
        return Err(tiling(format!(
            "expandX must be 2-D (A, H), but its shape is {:?}",
            tex.shape()
        )));
    }
    let (bs, h, k) = bs_h_k(tex.shape()[1], &tids, &r)?;
    r.h = h;
    r.k = k;
    r.max_bs = max_bs(global_bs, bs, r.world)?;
    shape_is(&tes, &[bs, k])?;
    if form == Form::V1 {
        if tidx.ndim() != 1 || tidx.numel() != bs * k {
            return Err(tiling(format!(
                "expandIdx must be 1-D (BS * K = {}), but its shape is {:?}",
                bs * k,
                tidx.shape()
            )));
        }
    } else {
        a::dtype_in(&tidx, &[DType::I32])?;
        vec_at_least(&tidx, md::max_rows(&r) * 128)?;
    }
    vec_at_least(&tep, r.local * r.world)?;
    match &norm {
        None => shape_is(&tx, &[bs, h])?,
        Some(n) => {
            a::same_dtype(&tx, &n.residual)?;
            shape_is(&tx, &[bs, 1, h])?;
            shape_is(&n.residual, &[bs, 1, h])?;
            shape_is(&n.gamma, &[h])?;
            shape_is(&n.y, &[bs, 1, h])?;
            shape_is(&n.rstd, &[bs, 1, 1])?;
            if !shared_x.is_null() {
                return Err(NnError::invalid(
                    "sharedExpertXOptional is not supported by this operator: pass nullptr"
                        .to_string(),
                ));
            }
        }
    }
    if let Some(t) = &tmask {
        a::dtype_in(t, &[DType::Bool])?;
        shape_is(t, &[bs])?;
    }
    if let Some(t) = &tshared {
        a::same_dtype(t, &tex)?;
        let ok = (t.ndim() == 2 && t.shape() == [bs, h])
            || (t.ndim() == 3 && t.shape()[0] * t.shape()[1] == bs && t.shape()[2] == h);
        if !ok {
            return Err(tiling(format!(
                "sharedExpertX must be (BS, H) = ({bs}, {h}) or 3-D with the first two \
                 dimensions multiplying to BS, but its shape is {:?}",
                t.shape()
            )));
        }
    }
    if form != Form::V1 {
        return combine_v2(r, group, tex, tidx, tep, tes, tshared, tx, norm);
    }

    let slot = align(md::combine_slot_words(&r) * 4);
    let mut l = Launch::new("aclnnMoeDistributeCombine");
    let iex = l.input(&tex);
    let iids = l.input(&tids);
    let iidx = l.input(&tidx);
    let iep = l.input(&tep);
    let ies = l.input(&tes);
    let ix = l.output(&tx);
    l.workspace((slot * (1 + r.world)) as u64);
    let steps = vec![
        StepSpec::kernel(move |v, ws| md::combine_pack(&r, &v[iex], &v[iep], &mut ws[..slot])),
        gather(slot, group),
        StepSpec::kernel(move |v, ws| {
            md::combine_reduce(
                &r,
                &ws[slot..slot * (1 + r.world)],
                slot,
                &v[iids],
                &v[iidx],
                &v[ies],
                &v[ix],
            )
        }),
    ];
    l.finish_steps(steps)
}

/// CombineV2's steps: pack (rows, triples), AllGather, reduce by the triples.
#[allow(clippy::too_many_arguments)]
fn combine_v2(
    r: Routing,
    group: String,
    tex: a::T,
    tinfo: a::T,
    tep: a::T,
    tes: a::T,
    tshared: Option<a::T>,
    tx: a::T,
    norm: Option<Norm>,
) -> NnResult<Built> {
    let slot = align(md::combine_v2_slot_words(&r) * 4);
    let mut l = Launch::new(if norm.is_some() {
        "aclnnMoeDistributeCombineAddRmsNorm"
    } else {
        "aclnnMoeDistributeCombineV2"
    });
    let iex = l.input(&tex);
    let iinfo = l.input(&tinfo);
    let iep = l.input(&tep);
    let ies = l.input(&tes);
    let ish = tshared.as_ref().map(|t| l.input(t));
    let inorm = norm
        .as_ref()
        .map(|n| (l.input(&n.residual), l.input(&n.gamma), n.eps));
    let ix = l.output(&tx);
    let iyr = norm.as_ref().map(|n| (l.output(&n.y), l.output(&n.rstd)));
    let bs = tx.shape()[0];
    let gathered = slot * (1 + r.world);
    let comb_bytes = align(bs * r.h * tex.dtype().size());
    l.workspace((gathered + if norm.is_some() { comb_bytes } else { 0 }) as u64);
    let shared_shape = [bs, r.h];
    let dt = tex.dtype();
    let mut steps = vec![
        StepSpec::kernel(move |v, ws| {
            md::combine_v2_pack(&r, &v[iex], &v[iinfo], &v[iep], &mut ws[..slot])
        }),
        gather(slot, group),
        StepSpec::kernel(move |v, ws| {
            let sh = ish.map(|i| v[i].reshaped(&shared_shape));
            // With the norm, the combine (rounded to the dtype) goes to the workspace.
            let (head, tail) = ws.split_at_mut(gathered);
            let out = match inorm {
                Some(_) => Layout::contiguous(dt, &[bs, 1, r.h]).view_at(tail.as_mut_ptr()),
                None => v[ix].clone(),
            };
            md::combine_v2_reduce(&r, &head[slot..], slot, &v[ies], sh.as_ref(), &out)
        }),
    ];
    if let (Some((ir, ig, eps)), Some((iy, irs))) = (inorm, iyr) {
        steps.push(StepSpec::kernel(move |v, ws| {
            let comb = Layout::contiguous(dt, &[bs, 1, r.h]).view_at(ws[gathered..].as_mut_ptr());
            norm::add_rms_norm(&comb, &v[ir], &v[ig], eps, &v[iy], &v[irs], &v[ix])
        }));
    }
    l.finish_steps(steps)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeDistributeCombineGetWorkspaceSize(
    expandX: *const c_void,
    expertIds: *const c_void,
    expandIdx: *const c_void,
    epSendCounts: *const c_void,
    expertScales: *const c_void,
    tpSendCounts: *const c_void,
    xActiveMask: *const c_void,
    activationScale: *const c_void,
    weightScale: *const c_void,
    groupList: *const c_void,
    expandScales: *const c_void,
    groupEp: *const c_char,
    epWorldSize: i64,
    epRankId: i64,
    moeExpertNum: i64,
    groupTp: *const c_char,
    tpWorldSize: i64,
    tpRankId: i64,
    expertShardType: i64,
    sharedExpertNum: i64,
    sharedExpertRankNum: i64,
    globalBs: i64,
    outDtype: i64,
    commQuantMode: i64,
    groupListType: i64,
    x: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeDistributeCombineGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            combine(
                Form::V1,
                None,
                std::ptr::null(),
                expandX,
                expertIds,
                expandIdx,
                epSendCounts,
                expertScales,
                tpSendCounts,
                [
                    (xActiveMask, "xActiveMask"),
                    (activationScale, "activationScale"),
                    (weightScale, "weightScale"),
                    (groupList, "groupList"),
                ],
                expandScales,
                groupEp,
                epWorldSize,
                epRankId,
                moeExpertNum,
                groupTp,
                tpWorldSize,
                tpRankId,
                expertShardType,
                sharedExpertNum,
                sharedExpertRankNum,
                globalBs,
                outDtype,
                commQuantMode,
                groupListType,
                x,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeDistributeDispatchV2GetWorkspaceSize(
    x: *const c_void,
    expertIds: *const c_void,
    scalesOptional: *const c_void,
    xActiveMaskOptional: *const c_void,
    expertScalesOptional: *const c_void,
    groupEp: *const c_char,
    epWorldSize: i64,
    epRankId: i64,
    moeExpertNum: i64,
    groupTp: *const c_char,
    tpWorldSize: i64,
    tpRankId: i64,
    expertShardType: i64,
    sharedExpertNum: i64,
    sharedExpertRankNum: i64,
    quantMode: i64,
    globalBs: i64,
    expertTokenNumsType: i64,
    commAlg: *const c_char,
    expandXOut: *const c_void,
    dynamicScalesOut: *const c_void,
    assistInfoForCombineOut: *const c_void,
    expertTokenNumsOut: *const c_void,
    epRecvCountsOut: *const c_void,
    tpRecvCountsOut: *const c_void,
    expandScalesOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeDistributeDispatchV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            dispatch(
                Form::V2(commAlg),
                x,
                expertIds,
                scalesOptional,
                xActiveMaskOptional,
                expertScalesOptional,
                groupEp,
                epWorldSize,
                epRankId,
                moeExpertNum,
                groupTp,
                tpWorldSize,
                tpRankId,
                expertShardType,
                sharedExpertNum,
                sharedExpertRankNum,
                quantMode,
                globalBs,
                expertTokenNumsType,
                expandXOut,
                dynamicScalesOut,
                assistInfoForCombineOut,
                expertTokenNumsOut,
                epRecvCountsOut,
                tpRecvCountsOut,
                expandScalesOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeDistributeCombineV2GetWorkspaceSize(
    expandX: *const c_void,
    expertIds: *const c_void,
    assistInfoForCombine: *const c_void,
    epSendCounts: *const c_void,
    expertScales: *const c_void,
    tpSendCountsOptional: *const c_void,
    xActiveMaskOptional: *const c_void,
    activationScaleOptional: *const c_void,
    weightScaleOptional: *const c_void,
    groupListOptional: *const c_void,
    expandScalesOptional: *const c_void,
    sharedExpertXOptional: *const c_void,
    groupEp: *const c_char,
    epWorldSize: i64,
    epRankId: i64,
    moeExpertNum: i64,
    groupTp: *const c_char,
    tpWorldSize: i64,
    tpRankId: i64,
    expertShardType: i64,
    sharedExpertNum: i64,
    sharedExpertRankNum: i64,
    globalBs: i64,
    outDtype: i64,
    commQuantMode: i64,
    groupListType: i64,
    commAlg: *const c_char,
    xOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeDistributeCombineV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            combine(
                Form::V2(commAlg),
                None,
                sharedExpertXOptional,
                expandX,
                expertIds,
                assistInfoForCombine,
                epSendCounts,
                expertScales,
                tpSendCountsOptional,
                [
                    (xActiveMaskOptional, "xActiveMask"),
                    (activationScaleOptional, "activationScale"),
                    (weightScaleOptional, "weightScale"),
                    (groupListOptional, "groupList"),
                ],
                expandScalesOptional,
                groupEp,
                epWorldSize,
                epRankId,
                moeExpertNum,
                groupTp,
                tpWorldSize,
                tpRankId,
                expertShardType,
                sharedExpertNum,
                sharedExpertRankNum,
                globalBs,
                outDtype,
                commQuantMode,
                groupListType,
                xOut,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMoeDistributeCombineAddRmsNormGetWorkspaceSize(
    expandX: *const c_void,
    expertIds: *const c_void,
    assistInfoForCombine: *const c_void,
    epSendCounts: *const c_void,
    expertScales: *const c_void,
    residualX: *const c_void,
    gamma: *const c_void,
    tpSendCountsOptional: *const c_void,
    xActiveMaskOptional: *const c_void,
    activationScaleOptional: *const c_void,
    weightScaleOptional: *const c_void,
    groupListOptional: *const c_void,
    expandScalesOptional: *const c_void,
    sharedExpertXOptional: *const c_void,
    groupEp: *const c_char,
    epWorldSize: i64,
    epRankId: i64,
    moeExpertNum: i64,
    groupTp: *const c_char,
    tpWorldSize: i64,
    tpRankId: i64,
    expertShardType: i64,
    sharedExpertNum: i64,
    sharedExpertRankNum: i64,
    globalBs: i64,
    outDtype: i64,
    commQuantMode: i64,
    groupListType: i64,
    commAlg: *const c_char,
    normEps: f32,
    yOut: *const c_void,
    rstdOut: *const c_void,
    xOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeDistributeCombineAddRmsNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let n = norm_args(residualX, gamma, normEps, yOut, rstdOut)?;
            combine(
                Form::V2(commAlg),
                Some(n),
                sharedExpertXOptional,
                expandX,
                expertIds,
                assistInfoForCombine,
                epSendCounts,
                expertScales,
                tpSendCountsOptional,
                [
                    (xActiveMaskOptional, "xActiveMask"),
                    (activationScaleOptional, "activationScale"),
                    (weightScaleOptional, "weightScale"),
                    (groupListOptional, "groupList"),
                ],
                expandScalesOptional,
                groupEp,
                epWorldSize,
                epRankId,
                moeExpertNum,
                groupTp,
                tpWorldSize,
                tpRankId,
                expertShardType,
                sharedExpertNum,
                sharedExpertRankNum,
                globalBs,
                outDtype,
                commQuantMode,
                groupListType,
                xOut,
            )
        },
    )
}

crate::phase2!(
    aclnnMoeDistributeCombineAddRmsNorm,
    aclnnMoeDistributeDispatch,
    aclnnMoeDistributeCombine,
    aclnnMoeDistributeDispatchV2,
    aclnnMoeDistributeCombineV2
);
