//! Sorting: `aclnn_sort.h` (Sort) and `aclnn_topk.h` (Topk), over
//! `npu_emu::ops::sort` (stable, NaN largest, as PyTorch orders them).

use super::args::{self as a, ALL_NUM};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::sort;
use std::ffi::c_void;

fn same_dtype(t: &a::T, d: DType) -> Result<(), NnError> {
    if t.dtype() == d {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} data type {} must be self's {d}",
            t.arg,
            t.dtype()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSortGetWorkspaceSize(
    self_: *const c_void,
    stable: bool,
    dim: i64,
    descending: bool,
    valuesOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnSortGetWorkspaceSize", workspaceSize, executor, || {
        let _ = stable; // every sort here is stable
        let x = a::tensor(self_, "self")?;
        let v = a::tensor(valuesOut, "valuesOut")?;
        let i = a::tensor(indicesOut, "indicesOut")?;
        a::dtype_in(&x, ALL_NUM)?;
        a::max_dims(&x, 8)?;
        let d = a::dim(dim, x.ndim(), "dim")?;
        same_dtype(&v, x.dtype())?;
        a::dtype_in(&i, &[DType::I64])?;
        a::same_shape(&v, x.shape())?;
        a::same_shape(&i, x.shape())?;
        let mut l = Launch::new("aclnnSort");
        l.input(&x);
        l.output(&v);
        l.output(&i);
        l.finish(move |v, _| sort::sort(&v[0], d, descending, None, &v[1], &v[2]))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTopkGetWorkspaceSize(
    self_: *const c_void,
    k: i64,
    dim: i64,
    largest: bool,
    sorted: bool,
    valuesOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnTopkGetWorkspaceSize", workspaceSize, executor, || {
        let _ = sorted; // the k values always come out sorted, which satisfies both
        let x = a::tensor(self_, "self")?;
        let v = a::tensor(valuesOut, "valuesOut")?;
        let i = a::tensor(indicesOut, "indicesOut")?;
        a::dtype_in(&x, ALL_NUM)?;
        a::max_dims(&x, 8)?;
        let d = a::dim(dim, x.ndim(), "dim")?;
        let n = if x.ndim() == 0 { 1 } else { x.shape()[d] };
        if k < 0 || k as usize > n {
            return Err(NnError::invalid(format!(
                "k {k} is out of range [0, {n}] (the size of dimension {d})"
            )));
        }
        let mut want = x.shape().to_vec();
        if !want.is_empty() {
            want[d] = k as usize;
        }
        same_dtype(&v, x.dtype())?;
        a::dtype_in(&i, &[DType::I64])?;
        a::same_shape(&v, &want)?;
        a::same_shape(&i, &want)?;
        let k = k as usize;
        let mut l = Launch::new("aclnnTopk");
        l.input(&x);
        l.output(&v);
        l.output(&i);
        l.finish(move |v, _| sort::sort(&v[0], d, largest, Some(k), &v[1], &v[2]))
    })
}

crate::phase2!(aclnnSort, aclnnTopk);
