//! Advanced indexing: `aclnn_nonzero.h`, `aclnn_nonzero_v2.h`, `aclnn_index.h`,
//! `aclnn_index_put_impl.h`, `aclnn_flip.h` (the engine is `npu_emu::ops::advindex`).
//!
//! - Nonzero writes the coordinates of `self`'s nonzero elements (row-major order) to the
//!   front of the contiguous INT64 `out`, which the caller allocates for the worst case
//!   (every element nonzero: `[numel, ndim]`, V2 `[ndim, numel]`, as CANN's reference asks;
//!   a smaller `out`, as the reference's own example passes, works while the coordinates fit
//!   and fails the task when they do not);
//!   after the task `out`'s view shape is `[count, ndim]` (V2: `[ndim, count]`), read with
//!   `aclGetViewShape` after synchronising, as torch_npu does.
//! - Index / IndexPutImpl take `indices` as torch_npu passes them: one INT32/INT64 tensor per
//!   leading dimension of `self`, where a zero-element tensor (torch_npu passes an empty
//!   tensor of `self`'s dtype) stands for a dimension taken whole. A real empty index tensor
//!   therefore reads as "whole" too; Index accepts an empty `out` then and does nothing. Masks (BOOL/UINT8 indices) must be turned into coordinates first (torch_npu does
//!   this with aclnnNonzeroV2); they are refused with 161002.
//! - `unsafe` of IndexPutImpl only lets CANN skip checks; every index is checked here.

use super::args::{self as a, ALL_NUM, INDEX, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::advindex;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::view::Scratch;
use std::ffi::c_void;

fn nonzero(api: &'static str, self_: *const c_void, out: *mut c_void, v2: bool) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, ALL_NUM)?;
    a::max_dims(&x, 8)?;
    a::dtype_of(o.dtype(), "out", &[DType::I64])?;
    let (n, nd) = (x.numel(), x.ndim());
    // CANN asks for room for every element being nonzero, but its own example sizes `out` for
    // the nonzero count it expects; a smaller `out` is accepted here and the task fails if the
    // coordinates do not fit (the engine checks), rather than writing past it.
    let coord_dim = if v2 { 0 } else { 1 };
    if o.ndim() != 2 || (nd > 0 && o.shape()[coord_dim] != nd) {
        let want = if v2 { [nd, n] } else { [n, nd] };
        return Err(NnError::invalid(format!(
            "out must be 2-D with {nd} coordinates per nonzero element in dimension \
             {coord_dim} (room for every element being nonzero is {want:?}), but its shape \
             is {:?}",
            o.shape()
        )));
    }
    if o.numel() > 1 && o.layout.strides != npu_emu::ops::view::contiguous_strides(o.shape()) {
        return Err(NnError::invalid("out must be contiguous"));
    }
    let handle = out as usize;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| {
        let k = advindex::nonzero(&v[0], &v[1], v2)? as i64;
        let nd = nd as i64;
        // the caller may have destroyed out already: then nobody reads its shape
        let _ = crate::objects::tensor_mut(handle, "out", |t| {
            if v2 {
                t.view_shape = vec![nd, k];
                t.strides = vec![k.max(1), 1];
            } else {
                t.view_shape = vec![k, nd];
                t.strides = vec![nd.max(1), 1];
            }
        });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNonzeroGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNonzeroGetWorkspaceSize",
        workspaceSize,
        executor,
        || nonzero("aclnnNonzero", self_, out, false),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnNonzeroV2GetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnNonzeroV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || nonzero("aclnnNonzeroV2", self_, out, true),
    )
}

/// The index list: `Some(tensor)` per indexed dimension, `None` for a placeholder.
fn index_list(x: &T, indices: *const c_void) -> Result<Vec<Option<T>>, NnError> {
    let ts = a::tensor_list(indices, "indices")?;
    if ts.len() > x.ndim().max(1) {
        return Err(NnError::invalid(format!(
            "indices has {} tensors, more than self's {} dimensions",
            ts.len(),
            x.ndim()
        )));
    }
    let mut r = Vec::new();
    for (k, t) in ts.into_iter().enumerate() {
        if t.numel() == 0 {
            r.push(None);
            continue;
        }
        if matches!(t.dtype(), DType::Bool | DType::U8) {
            return Err(NnError::invalid(format!(
                "indices[{k}] is an {} mask: turn it into coordinates first (aclnnNonzeroV2)",
                t.dtype()
            )));
        }
        a::dtype_of(t.dtype(), "indices", INDEX)?;
        r.push(Some(t));
    }
    Ok(r)
}

fn result_shape(x: &T, idx: &[Option<T>]) -> Result<Vec<usize>, NnError> {
    let shapes: Vec<Option<Vec<usize>>> = idx
        .iter()
        .map(|t| t.as_ref().map(|t| t.shape().to_vec()))
        .collect();
    advindex::index_shape(x.shape(), &shapes)
        .map(|(s, _)| s)
        .ok_or_else(|| {
            NnError::invalid(format!(
                "the index tensors' shapes {:?} do not broadcast together",
                shapes.iter().flatten().collect::<Vec<_>>()
            ))
        })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexGetWorkspaceSize(
    self_: *const c_void,
    indices: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::max_dims(&x, 8)?;
            if o.dtype() != x.dtype() {
                return Err(NnError::invalid(format!(
                    "out data type {} must be self's {}",
                    o.dtype(),
                    x.dtype()
                )));
            }
            let idx = index_list(&x, indices)?;
            let want = result_shape(&x, &idx)?;
            if o.numel() == 0 && o.shape() != want.as_slice() {
                // x[empty index]: nothing to gather
                let mut l = Launch::new("aclnnIndex");
                l.output(&o);
                return l.finish(|_, _| Ok(()));
            }
            a::same_shape(&o, &want)?;
            let defined: Vec<bool> = idx.iter().map(|t| t.is_some()).collect();
            let ts: Vec<T> = idx.into_iter().flatten().collect();
            let mut l = Launch::new("aclnnIndex");
            l.input(&x);
            let k = ts.len();
            l.inputs(&ts);
            l.output(&o);
            l.finish(move |v, _| {
                let list = spread(&defined, &v[1..1 + k]);
                advindex::index(&v[0], &list, &v[1 + k])
            })
        },
    )
}

/// Place the defined index views back at their dimensions.
fn spread(defined: &[bool], views: &[npu_emu::ops::View]) -> Vec<Option<npu_emu::ops::View>> {
    let mut it = views.iter();
    defined
        .iter()
        .map(|&d| if d { it.next().cloned() } else { None })
        .collect()
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexPutImplGetWorkspaceSize(
    selfRef: *mut c_void,
    indices: *const c_void,
    values: *const c_void,
    accumulate: bool,
    unsafe_: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = unsafe_;
    phase1(
        "aclnnIndexPutImplGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let val = a::tensor(values, "values")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::max_dims(&x, 8)?;
            if val.dtype() != x.dtype() {
                return Err(NnError::invalid(format!(
                    "values data type {} must be selfRef's {}",
                    val.dtype(),
                    x.dtype()
                )));
            }
            let idx = index_list(&x, indices)?;
            let want = result_shape(&x, &idx)?;
            if npu_emu::ops::view::broadcast_shapes(val.shape(), &want).as_deref()
                != Some(&want[..])
            {
                return Err(NnError::invalid(format!(
                    "values {:?} do not broadcast to the indexing result {want:?}",
                    val.shape()
                )));
            }
            let defined: Vec<bool> = idx.iter().map(|t| t.is_some()).collect();
            let ts: Vec<T> = idx.into_iter().flatten().collect();
            let mut l = Launch::new("aclnnIndexPutImpl");
            l.input(&val);
            let k = ts.len();
            l.inputs(&ts);
            l.output(&x);
            l.finish(move |v, _| {
                let list = spread(&defined, &v[1..1 + k]);
                if v[0].overlaps(&v[1 + k]) {
                    let s = Scratch::new(v[0].dtype, &v[0].shape);
                    npu_emu::ops::iter::copy(&v[0], &s.view)?;
                    return advindex::index_put(&v[1 + k], &list, &s.view, accumulate);
                }
                advindex::index_put(&v[1 + k], &list, &v[0], accumulate)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlipGetWorkspaceSize(
    self_: *const c_void,
    dims: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnFlipGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        let ds = a::int_array(dims, "dims")?;
        a::dtype_in(&x, ALL_NUM)?;
        a::max_dims(&x, 8)?;
        if o.dtype() != x.dtype() {
            return Err(NnError::invalid(format!(
                "out data type {} must be self's {}",
                o.dtype(),
                x.dtype()
            )));
        }
        a::same_shape(&o, x.shape())?;
        // no dims flips nothing (a::dims reads an empty list as "every dimension")
        let ds = if ds.is_empty() {
            Vec::new()
        } else {
            a::dims(&ds, x.ndim().max(1), "dims")?
        };
        let ds: Vec<usize> = ds.into_iter().filter(|&d| d < x.ndim()).collect();
        let mut l = Launch::new("aclnnFlip");
        l.input(&x);
        l.output(&o);
        l.finish(move |v, _| {
            if v[0].overlaps(&v[1]) {
                let s = Scratch::new(v[0].dtype, &v[0].shape);
                npu_emu::ops::iter::copy(&v[0], &s.view)?;
                return advindex::flip(&s.view, &ds, &v[1]);
            }
            advindex::flip(&v[0], &ds, &v[1])
        })
    })
}

crate::phase2!(
    aclnnNonzero,
    aclnnNonzeroV2,
    aclnnIndex,
    aclnnIndexPutImpl,
    aclnnFlip
);
