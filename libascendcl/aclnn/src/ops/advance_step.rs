//! `aclnn_advance_step.h` and `aclnn_advance_step_v2.h` (`torch_npu.npu_advance_step_flashattn`,
//! vLLM's advance step): every tensor INT64; inputTokens, inputPositions, seqLens and
//! slotMapping are updated in place. Checks of the reference page: null required tensors
//! 161001; data types, shapes (`[numSeqs]` or, with speculation, `[numSeqs * (1 + specNum)]`;
//! sampledTokenIds `[numQueries, 1]` or `[numSeqs, 1 + specNum]`; blockTables `[numSeqs, *]`)
//! and attributes (positive, numSeqs >= numQueries, equal with speculation) 161002. A position
//! reading past the whole of blockTables fails the launch. The computation is `npu_emu::ops::advance_step`.

use super::args::{self as a, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::advance_step as engine;
use npu_emu::ops::dtype::DType;
use std::ffi::c_void;

fn invalid_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::invalid(msg()))
    } else {
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn build(
    api: &'static str,
    h: [*const c_void; 6],
    spec: *const c_void,
    accepted: *const c_void,
    num_seqs: i64,
    num_queries: i64,
    block_size: i64,
) -> NnResult<Built> {
    let names = [
        "inputTokens",
        "sampledTokenIds",
        "inputPositions",
        "seqLens",
        "slotMapping",
        "blockTables",
    ];
    let mut ts: Vec<T> = Vec::new();
    for (p, n) in h.iter().zip(names) {
        ts.push(a::tensor(*p, n)?);
    }
    let sp = a::opt_tensor(spec, "specToken")?;
    let ac = a::opt_tensor(accepted, "acceptedNum")?;
    for t in ts.iter().chain(sp.iter()).chain(ac.iter()) {
        a::dtype_in(t, &[DType::I64])?;
        invalid_if(t.numel() == 0, || format!("{} must not be empty", t.arg))?;
    }
    invalid_if(num_seqs <= 0 || num_queries <= 0 || block_size <= 0, || {
        format!("numSeqs {num_seqs}, numQueries {num_queries} and blockSize {block_size} must be positive")
    })?;
    let (ns, nq) = (num_seqs as usize, num_queries as usize);
    let speculative = sp.is_some() || ac.is_some();
    let per = match &sp {
        Some(s) => {
            invalid_if(s.ndim() != 2 || s.shape()[0] != ns, || {
                format!("specToken {:?} must be [numSeqs {ns}, specNum]", s.shape())
            })?;
            1 + s.shape()[1]
        }
        None => 1,
    };
    if speculative {
        invalid_if(nq != ns, || {
            format!("with speculation numQueries {nq} must equal numSeqs {ns}")
        })?;
        if let Some(c) = &ac {
            invalid_if(c.ndim() != 1 || c.shape()[0] != ns, || {
                format!("acceptedNum {:?} must be [numSeqs {ns}]", c.shape())
            })?;
        }
    } else {
        invalid_if(nq > ns, || {
            format!("numQueries {nq} must not exceed numSeqs {ns}")
        })?;
    }
    for i in [0, 2, 3, 4] {
        a::same_shape(&ts[i], &[ns * per])?;
    }
    let rows = if speculative { ns } else { nq };
    a::same_shape(&ts[1], &[rows, per])?;
    invalid_if(ts[5].ndim() != 2 || ts[5].shape()[0] != ns, || {
        format!(
            "blockTables {:?} must be [numSeqs {ns}, blocks]",
            ts[5].shape()
        )
    })?;
    let mut l = Launch::new(api);
    let isam = l.input(&ts[1]);
    let ibt = l.input(&ts[5]);
    let isp = sp.as_ref().map(|t| l.input(t));
    let iac = ac.as_ref().map(|t| l.input(t));
    let otk = l.output(&ts[0]);
    let ops = l.output(&ts[2]);
    let osl = l.output(&ts[3]);
    let ost = l.output(&ts[4]);
    l.finish(move |v, _| {
        engine::advance_step(
            &v[otk],
            &v[isam],
            &v[ops],
            &v[osl],
            &v[ost],
            &v[ibt],
            isp.map(|i| &v[i]),
            iac.map(|i| &v[i]),
            ns,
            nq,
            block_size,
        )
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnAdvanceStepGetWorkspaceSize(
    inputTokens: *const c_void,
    sampledTokenIds: *const c_void,
    inputPositions: *const c_void,
    seqLens: *const c_void,
    slotMapping: *const c_void,
    blockTables: *const c_void,
    numSeqs: i64,
    numQueries: i64,
    blockSize: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdvanceStepGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            build(
                "aclnnAdvanceStep",
                [
                    inputTokens,
                    sampledTokenIds,
                    inputPositions,
                    seqLens,
                    slotMapping,
                    blockTables,
                ],
                std::ptr::null(),
                std::ptr::null(),
                numSeqs,
                numQueries,
                blockSize,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnAdvanceStepV2GetWorkspaceSize(
    inputTokens: *const c_void,
    sampledTokenIds: *const c_void,
    inputPositions: *const c_void,
    seqLens: *const c_void,
    slotMapping: *const c_void,
    blockTables: *const c_void,
    specToken: *const c_void,
    acceptedNum: *const c_void,
    numSeqs: i64,
    numQueries: i64,
    blockSize: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAdvanceStepV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            build(
                "aclnnAdvanceStepV2",
                [
                    inputTokens,
                    sampledTokenIds,
                    inputPositions,
                    seqLens,
                    slotMapping,
                    blockTables,
                ],
                specToken,
                acceptedNum,
                numSeqs,
                numQueries,
                blockSize,
            )
        },
    )
}

crate::phase2!(aclnnAdvanceStep, aclnnAdvanceStepV2);
