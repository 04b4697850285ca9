//! `aclnn_embedding_bag.h`: what torch_npu calls for `F.embedding_bag` / `nn.EmbeddingBag`
//! (`_embedding_bag`, `_embedding_bag_forward_only`). The engine is
//! `npu_emu::ops::embedding_bag`.
//!
//! Documented choices: indices and offsets are 1-D (PyTorch flattens a 2-D input before it
//! calls `_embedding_bag`); a negative paddingIdx means no padding row (PyTorch passes -1 for
//! none and normalises a negative user value to a row number first); scaleGradByFreq and
//! sparse only matter to a backward pass and are accepted as given. The auxiliary outputs
//! (offset2bag, bagSize, maxIndices) are written when they have their documented sizes;
//! torch_npu hands an empty offset2bag in sum mode without padding.

use super::args::{self as a};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::embedding_bag::{self as engine, Aux, Bag, Mode};
use std::ffi::c_void;

const WEIGHT: &[DType] = &[DType::F32, DType::F16, DType::BF16];
const IDX: &[DType] = &[DType::U8, DType::I8, DType::I16, DType::I32, DType::I64];
const AUX: &[DType] = &[DType::I32, DType::I64];

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnEmbeddingBagGetWorkspaceSize(
    weight: *const c_void,
    indices: *const c_void,
    offsets: *const c_void,
    scaleGradByFreq: bool,
    mode: i64,
    sparse: bool,
    perSampleWeights: *const c_void,
    includeLastOffset: bool,
    paddingIdx: i64,
    output: *mut c_void,
    offset2bag: *mut c_void,
    bagSize: *mut c_void,
    maxIndices: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = (scaleGradByFreq, sparse);
    phase1(
        "aclnnEmbeddingBagGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let w = a::tensor(weight, "weight")?;
            let i = a::tensor(indices, "indices")?;
            let off = a::tensor(offsets, "offsets")?;
            let psw = a::opt_tensor(perSampleWeights, "perSampleWeights")?;
            let o = a::tensor(output, "output")?;
            let o2b = a::tensor(offset2bag, "offset2bag")?;
            let bs = a::tensor(bagSize, "bagSize")?;
            let mi = a::tensor(maxIndices, "maxIndices")?;
            a::dtype_in(&w, WEIGHT)?;
            a::dtype_in(&i, IDX)?;
            a::dtype_in(&off, IDX)?;
            if !AUX.contains(&i.dtype()) && !AUX.contains(&off.dtype()) {
                return Err(NnError::invalid(format!(
                    "indices ({}) or offsets ({}) must be INT32 or INT64",
                    i.dtype(),
                    off.dtype()
                )));
            }
            for v in [&o2b, &bs, &mi] {
                a::dtype_in(v, AUX)?;
            }
            a::same_dtype(&o, &w)?;
            let m = match mode {
                0 => Mode::Sum,
                1 => Mode::Mean,
                2 => Mode::Max,
                _ => {
                    return Err(NnError::invalid(format!(
                        "mode {mode} must be 0 (sum), 1 (mean) or 2 (max)"
                    )))
                }
            };
            if w.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "weight must be 2-D, but its shape is {:?}",
                    w.shape()
                )));
            }
            for v in [&i, &off] {
                if v.ndim() != 1 {
                    return Err(NnError::invalid(format!(
                        "{} must be 1-D, but its shape is {:?}",
                        v.arg,
                        v.shape()
                    )));
                }
            }
            let rows = w.shape()[0] as i64;
            if paddingIdx >= rows {
                return Err(NnError::invalid(format!(
                    "paddingIdx {paddingIdx} must be less than weight's {rows} rows"
                )));
            }
            if let Some(p) = &psw {
                if m != Mode::Sum {
                    return Err(NnError::invalid(format!(
                        "perSampleWeights is only supported with mode 0 (sum), but mode is {mode}"
                    )));
                }
                a::same_dtype(p, &w)?;
                a::same_shape(p, i.shape())?;
            }
            let n_off = off.shape()[0];
            if includeLastOffset && n_off == 0 {
                return Err(NnError::invalid(
                    "offsets must not be empty with includeLastOffset",
                ));
            }
            let bags = if includeLastOffset { n_off - 1 } else { n_off };
            let dim = w.shape()[1];
            a::same_shape(&o, &[bags, dim])?;
            if m == Mode::Max {
                a::same_shape(&mi, &[bags, dim])?;
            }
            let opts = Bag {
                mode: m,
                include_last_offset: includeLastOffset,
                padding_idx: paddingIdx,
            };
            let mut l = Launch::new("aclnnEmbeddingBag");
            l.input(&w);
            l.input(&i);
            l.input(&off);
            if let Some(p) = &psw {
                l.input(p);
            }
            let has_psw = psw.is_some();
            l.output(&o);
            l.output(&o2b);
            l.output(&bs);
            l.output(&mi);
            l.finish(move |v, _| {
                let k = if has_psw { 4 } else { 3 };
                engine::embedding_bag(
                    &v[0],
                    &v[1],
                    &v[2],
                    if has_psw { Some(&v[3]) } else { None },
                    opts,
                    &v[k],
                    Aux {
                        offset2bag: &v[k + 1],
                        bag_size: &v[k + 2],
                        max_indices: &v[k + 3],
                    },
                )
            })
        },
    )
}

crate::phase2!(aclnnEmbeddingBag);
