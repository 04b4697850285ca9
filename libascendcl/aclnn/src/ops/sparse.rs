//! Sparse COO: `aclnn_coalesce_sparse.h` (`aclnnCoalesceSparse`, what torch_npu's
//! `SparseTensor.coalesce()` calls after finding the unique flattened indices itself).
//! The interface is the one CANN generates from the operator's definition (hicann/ops-math
//! `conversion/coalesce_sparse`): null tensors 161001; data types outside the definition's
//! combinations and shapes that do not fit 161002. The computation is
//! `npu_emu::ops::sparse`.

use super::args::{self as a, INDEX};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::sparse;
use std::ffi::c_void;

/// `aclnn_coalesce_sparse.h`: `uniqueLen` and `uniqueIndices` INT32 or INT64 (the same),
/// `indices` `[n, m]` INT32 or INT64 with `newIndices` `[u, m]` of its type, `values` `[n,
/// ...]` FLOAT, FLOAT16 or INT32 with `newValues` `[u, ...]` of its type; `uniqueIndices`
/// `[n]` gives each entry's row among the `u` unique ones. `uniqueLen`'s contents are not
/// read (CANN's own example passes a one-element tensor), the row count is the outputs'.
/// `newValues` is added into, as the reference's kernel does (it asks the caller to zero
/// it). A row outside `[0, u)` fails the launch.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnCoalesceSparseGetWorkspaceSize(
    uniqueLen: *const c_void,
    uniqueIndices: *const c_void,
    indices: *const c_void,
    values: *const c_void,
    newIndices: *const c_void,
    newValues: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCoalesceSparseGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let ul = a::tensor(uniqueLen, "uniqueLen")?;
            let ui = a::tensor(uniqueIndices, "uniqueIndices")?;
            let ix = a::tensor(indices, "indices")?;
            let v = a::tensor(values, "values")?;
            let ni = a::tensor(newIndices, "newIndices")?;
            let nv = a::tensor(newValues, "newValues")?;
            a::dtype_in(&ul, INDEX)?;
            a::same_dtype(&ui, &ul)?;
            a::dtype_in(&ix, INDEX)?;
            a::same_dtype(&ni, &ix)?;
            a::dtype_in(&v, &[DType::F32, DType::F16, DType::I32])?;
            a::same_dtype(&nv, &v)?;
            if ul.ndim() != 1 || ui.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "uniqueLen {:?} and uniqueIndices {:?} must be 1-D",
                    ul.shape(),
                    ui.shape()
                )));
            }
            let n = ui.shape()[0];
            if ix.ndim() != 2 || ix.shape()[0] != n {
                return Err(NnError::invalid(format!(
                    "indices {:?} must be 2-D [n, m] with n = {n}, the length of uniqueIndices \
                     (torch_npu passes the transposed COO indices)",
                    ix.shape()
                )));
            }
            if !(1..=8).contains(&v.ndim()) || v.shape()[0] != n {
                return Err(NnError::invalid(format!(
                    "values {:?} must have 1 to 8 dimensions, the first {n} (one row per entry)",
                    v.shape()
                )));
            }
            let u = nv.shape().first().copied().unwrap_or(0);
            let mut want_v = v.shape().to_vec();
            want_v[0] = u;
            if nv.shape() != want_v.as_slice() || ni.shape() != [u, ix.shape()[1]] {
                return Err(NnError::invalid(format!(
                    "newIndices {:?} must be [u, {}] and newValues {:?} [u{}] with the same u",
                    ni.shape(),
                    ix.shape()[1],
                    nv.shape(),
                    v.shape()[1..]
                        .iter()
                        .map(|d| format!(", {d}"))
                        .collect::<String>()
                )));
            }
            let mut l = Launch::new("aclnnCoalesceSparse");
            l.input(&ui);
            l.input(&ix);
            l.input(&v);
            let oi = l.output(&ni);
            let ov = l.output(&nv);
            l.finish(move |v, _| {
                if v[0].shape[0] == 0 {
                    return Ok(());
                }
                sparse::coalesce_sparse(&v[0], &v[1], &v[2], &v[oi], &v[ov])
            })
        },
    )
}

crate::phase2!(aclnnCoalesceSparse);
