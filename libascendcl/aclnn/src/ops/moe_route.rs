//! MoE routing: `aclnn_moe_init_routing_v2.h` (`aclnnMoeInitRoutingV2`, token routing by
//! expert, drop-less or drop/pad). Null tensors 161001; data types and shapes 161002 (the
//! operator's checks); attribute values 561002 (the rules of its shape inference and
//! tiling). The computation is `npu_emu::ops::moe_route`.
//!
//! `aclnnMoeReRouting` (no CANN header is published: the prototype is the generated form of
//! the operator's definition, in op-plugin's argument order): tokens rank-major to
//! expert-major. Null tensors 161001; data types and shapes 161002; expertTokenNumType other
//! than 1 (count) and idxType other than 0 (gather), the only values the operator supports,
//! 561002. A count sum past the token rows fails at launch.

use super::args as a;
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::moe_route::{self, InitRoutingV2};
use std::ffi::c_void;

/// `ACLNN_ERR_INNER_TILING_ERROR`: the shape and attribute rules of the tiling.
const TILING: i32 = 561002;

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeInitRoutingV2GetWorkspaceSize(
    x: *const c_void,
    expertIdx: *const c_void,
    activeNumOptional: i64,
    expertCapacityOptional: i64,
    expertNumOptional: i64,
    dropPadModeOptional: i64,
    expertTokensCountOrCumsumFlagOptional: i64,
    expertTokensBeforeCapacityFlagOptional: bool,
    expandedXOut: *const c_void,
    expandedRowIdxOut: *const c_void,
    expertTokensCountOrCumsumOutOptional: *const c_void,
    expertTokensBeforeCapacityOutOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeInitRoutingV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (active_num, capacity, expert_num, mode, flag) = (
                activeNumOptional,
                expertCapacityOptional,
                expertNumOptional,
                dropPadModeOptional,
                expertTokensCountOrCumsumFlagOptional,
            );
            let before_flag = expertTokensBeforeCapacityFlagOptional;
            let x = a::tensor(x, "x")?;
            let ei = a::tensor(expertIdx, "expertIdx")?;
            let ex = a::tensor(expandedXOut, "expandedXOut")?;
            let eri = a::tensor(expandedRowIdxOut, "expandedRowIdxOut")?;
            let tok = a::opt_tensor(
                expertTokensCountOrCumsumOutOptional,
                "expertTokensCountOrCumsumOutOptional",
            )?;
            let bc = a::opt_tensor(
                expertTokensBeforeCapacityOutOptional,
                "expertTokensBeforeCapacityOutOptional",
            )?;
            let tok = (mode == 0 && flag > 0).then_some(tok).flatten();
            let bc = (mode == 1 && before_flag).then_some(bc).flatten();
            if mode == 0 && flag > 0 && tok.is_none() {
                return Err(NnError::nullptr(
                    "expertTokensCountOrCumsumOutOptional must not be null when expertTokensCountOrCumsumFlag > 0",
                ));
            }
            if mode == 1 && before_flag && bc.is_none() {
                return Err(NnError::nullptr(
                    "expertTokensBeforeCapacityOutOptional must not be null when expertTokensBeforeCapacityFlag is true",
                ));
            }
            a::dtype_in(&x, &[DType::F16, DType::BF16, DType::F32])?;
            a::dtype_in(&ei, &[DType::I32])?;
            a::dtype_in(&ex, &[x.dtype()])?;
            a::dtype_in(&eri, &[DType::I32])?;
            for t in tok.iter().chain(bc.iter()) {
                a::dtype_in(t, &[DType::I32])?;
            }
            if x.ndim() != 2 || ei.ndim() != 2 || ei.shape()[0] != x.shape()[0] {
                return Err(NnError::invalid(format!(
                    "x must be (N, H) and expertIdx (N, K), but they are {:?} and {:?}",
                    x.shape(),
                    ei.shape()
                )));
            }
            let (n, h, k) = (x.shape()[0], x.shape()[1], ei.shape()[1]);
            let rules = [
                (active_num >= 0, format!("activeNum {active_num} cannot be less than 0")),
                (capacity >= 0, format!("expertCapacity {capacity} cannot be less than 0")),
                (expert_num >= 0, format!("expertNum {expert_num} cannot be less than 0")),
                (mode == 0 || mode == 1, format!("dropPadMode {mode} must be 0 or 1")),
                (
                    mode == 0 || (capacity >= 1 && expert_num >= 1),
                    format!("expertCapacity {capacity} and expertNum {expert_num} must be > 0 when dropPadMode is 1"),
                ),
                ((0..=2).contains(&flag), format!("expertTokensCountOrCumsumFlag {flag} must be 0, 1 or 2")),
                (
                    flag == 0 || expert_num > 0,
                    format!("expertNum {expert_num} must be > 0 when expertTokensCountOrCumsumFlag is {flag}"),
                ),
                (
                    mode == 0 || capacity <= n as i64,
                    format!("expertCapacity {capacity} cannot exceed the first dim of x ({n}) when dropPadMode is 1"),
                ),
            ];
            if let Some((_, m)) = rules.into_iter().find(|r| !r.0) {
                return Err(NnError::new(TILING, m));
            }
            let nk = n * k;
            let (e_n, cap) = (expert_num as usize, capacity as usize);
            if mode == 1 {
                a::same_shape(&ex, &[e_n, cap, h])?;
            } else {
                let rows = if active_num > 0 {
                    nk.min(active_num as usize)
                } else {
                    nk
                };
                a::same_shape(&ex, &[rows, h])?;
            }
            a::same_shape(&eri, &[nk])?;
            for t in tok.iter().chain(bc.iter()) {
                a::same_shape(t, &[e_n])?;
            }
            let p = InitRoutingV2 {
                active_num: active_num as usize,
                capacity: cap,
                expert_num: e_n,
                drop_pad: mode == 1,
                count_flag: flag,
            };
            let mut l = Launch::new("aclnnMoeInitRoutingV2");
            l.input(&x);
            l.input(&ei);
            let oi = l.output(&ex);
            l.output(&eri);
            let ti = tok.as_ref().map(|t| l.output(t));
            let bi = bc.as_ref().map(|t| l.output(t));
            l.finish(move |v, _| {
                moe_route::moe_init_routing_v2(
                    &v[0],
                    &v[1],
                    p,
                    &v[oi],
                    &v[oi + 1],
                    ti.map(|i| &v[i]),
                    bi.map(|i| &v[i]),
                )
            })
        },
    )
}

crate::phase2!(aclnnMoeInitRoutingV2);

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnMoeReRoutingGetWorkspaceSize(
    tokens: *const c_void,
    expertTokenNumPerRank: *const c_void,
    perTokenScalesOptional: *const c_void,
    expertTokenNumTypeOptional: i64,
    idxTypeOptional: i64,
    permuteTokensOut: *const c_void,
    permutePerTokenScalesOut: *const c_void,
    permuteTokenIdxOut: *const c_void,
    expertTokenNumOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMoeReRoutingGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let t = a::tensor(tokens, "tokens")?;
            let c = a::tensor(expertTokenNumPerRank, "expertTokenNumPerRank")?;
            let s = a::opt_tensor(perTokenScalesOptional, "perTokenScalesOptional")?;
            let pt = a::tensor(permuteTokensOut, "permuteTokensOut")?;
            let ps = a::opt_tensor(permutePerTokenScalesOut, "permutePerTokenScalesOut")?;
            let pi = a::tensor(permuteTokenIdxOut, "permuteTokenIdxOut")?;
            let en = a::tensor(expertTokenNumOut, "expertTokenNumOut")?;
            a::dtype_in(&t, &[DType::F16, DType::BF16, DType::I8])?;
            a::dtype_in(&pt, &[t.dtype()])?;
            a::dtype_in(&c, &[DType::I32, DType::I64])?;
            a::dtype_in(&en, &[c.dtype()])?;
            a::dtype_in(&pi, &[DType::I32])?;
            if t.ndim() != 2 || c.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "tokens must be (A, H) and expertTokenNumPerRank (N, E), but they are {:?} and {:?}",
                    t.shape(),
                    c.shape()
                )));
            }
            let (rows, e) = (t.shape()[0], c.shape()[1]);
            a::same_shape(&pt, t.shape())?;
            a::same_shape(&pi, &[rows])?;
            a::same_shape(&en, &[e])?;
            let ps = match (&s, ps) {
                (Some(s), None) => {
                    return Err(NnError::nullptr(format!(
                        "permutePerTokenScalesOut must not be null when perTokenScalesOptional {:?} is given",
                        s.shape()
                    )))
                }
                (Some(s), Some(p)) => {
                    a::dtype_in(s, &[DType::F32])?;
                    a::dtype_in(&p, &[DType::F32])?;
                    if s.shape() != [rows] {
                        return Err(NnError::invalid(format!(
                            "perTokenScalesOptional must be (A) = [{rows}], but it is {:?}",
                            s.shape()
                        )));
                    }
                    a::same_shape(&p, s.shape())?;
                    Some(p)
                }
                (None, _) => None,
            };
            if expertTokenNumTypeOptional != 1 {
                return Err(NnError::new(
                    TILING,
                    format!("expertTokenNumType {expertTokenNumTypeOptional} is not supported; only 1 (count)"),
                ));
            }
            if idxTypeOptional != 0 {
                return Err(NnError::new(
                    TILING,
                    format!("idxType {idxTypeOptional} is not supported; only 0 (gather index)"),
                ));
            }
            let mut l = Launch::new("aclnnMoeReRouting");
            l.input(&t);
            l.input(&c);
            let si = s.as_ref().map(|s| l.input(s));
            let oi = l.output(&pt);
            let psi = ps.as_ref().map(|p| l.output(p));
            let ii = l.output(&pi);
            let ei = l.output(&en);
            l.finish(move |v, _| {
                moe_route::moe_re_routing(
                    &v[0],
                    &v[1],
                    si.map(|i| &v[i]),
                    &v[oi],
                    psi.map(|i| &v[i]),
                    &v[ii],
                    &v[ei],
                )
            })
        },
    )
}

crate::phase2!(aclnnMoeReRouting);
