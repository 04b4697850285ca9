//! Sorting: `aclnn_sort.h` (Sort) and `aclnn_topk.h` (Topk), over
//! `npu_emu::ops::sort` (stable, NaN largest, as PyTorch orders them); unique:
//! `aclnn_unique.h` (Unique), `aclnn_unique2.h` (Unique2, with counts) and
//! `aclnn_unique_consecutive.h` (UniqueConsecutive) and `aclnn_unique_dim.h` (UniqueDim:
//! sorted distinct slices along a dimension), over `npu_emu::ops::extra`;
//! `aclnn_argsort.h` (the indices of a stable sort) and `aclnn_searchsorted.h`
//! (SearchSorted: insertion positions in the last dimension of `sortedSequence`, INT64 or
//! with `outInt32` INT32).
//!
//! Unique's output length is known only after the computation: `valueOut` (1-D,
//! contiguous, room for every element of `self` as CANN asks; a shorter one works while the
//! result fits, and the task fails when it does not) gets the values at its front and, once
//! the task has run, its view shape becomes `[count]` (`countsOut` too when counts are
//! asked for); the caller synchronises and reads it with `aclGetViewShape`, as torch_npu
//! does. The values come out sorted ascending (`sorted` false allows any order). For
//! UniqueConsecutive a `dim` in `[-ndim, ndim)` collapses equal neighbouring slices along
//! that dimension (`valueOut` then has room for `self`'s elements and becomes `self`'s
//! shape with the count at `dim`, stored contiguously); any other `dim` (torch_npu passes
//! 1000 for none) works on the flattened tensor.

use super::args::{self as a, ALL_NUM};
use super::launch::{phase1, Built, Launch};
use crate::status::NnError;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::extra;
use npu_emu::ops::sort;
use npu_emu::ops::view::contiguous_strides;
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

// ---- Unique ----

/// The data types of unique's `self` and `valueOut`.
const UNIQUE_TYPES: &[DType] = &[
    DType::Bool,
    DType::F32,
    DType::F16,
    DType::F64,
    DType::U8,
    DType::I8,
    DType::U16,
    DType::I16,
    DType::I32,
    DType::U32,
    DType::U64,
    DType::I64,
    DType::BF16,
];

fn contiguous(t: &a::T) -> Result<(), NnError> {
    if t.numel() > 1 && t.layout.strides != contiguous_strides(t.shape()) {
        return Err(NnError::invalid(format!("{} must be contiguous", t.arg)));
    }
    Ok(())
}

/// `t` must be 1-D and contiguous. Its length is checked when the task has run: CANN asks
/// for room for every element of `self`, but its own examples size these outputs for the
/// result they expect, so a shorter output works while the result fits.
fn one_d(t: &a::T) -> Result<(), NnError> {
    if t.ndim() != 1 {
        return Err(NnError::invalid(format!(
            "{} must be 1-D (with room for every element of self), but its shape is {:?}",
            t.arg,
            t.shape()
        )));
    }
    contiguous(t)
}

/// What a unique call asks for.
struct UniqueArgs {
    api: &'static str,
    consecutive: bool,
    inverse: bool,
    counts: bool,
    /// UniqueConsecutive (or, with `sorted_dim`, UniqueDim) along this dimension.
    dim: Option<usize>,
    /// UniqueDim: the distinct slices along `dim`, sorted.
    sorted_dim: bool,
}

#[allow(clippy::too_many_arguments)]
fn unique(
    u: UniqueArgs,
    self_: *const c_void,
    value_out: *mut c_void,
    inverse_out: *mut c_void,
    counts_out: *mut c_void,
) -> Result<Built, NnError> {
    let x = a::tensor(self_, "self")?;
    let v = a::tensor(value_out, "valueOut")?;
    let i = if u.inverse || !inverse_out.is_null() {
        Some(a::tensor(inverse_out, "inverseOut")?)
    } else {
        None
    };
    let c = if counts_out.is_null() && !u.counts {
        None
    } else {
        Some(a::tensor(counts_out, "countsOut")?)
    };
    a::dtype_in(&x, UNIQUE_TYPES)?;
    a::max_dims(&x, 8)?;
    same_dtype(&v, x.dtype())?;
    let dim = u.dim;
    match dim {
        None => one_d(&v)?,
        // the result is stored contiguously in its own shape (x's, with the count at dim)
        Some(_) => contiguous(&v)?,
    }
    // how long inverse/counts must be: every element, or every slice along dim
    let inv_shape = match dim {
        None => x.shape().to_vec(),
        Some(d) => vec![x.shape()[d]],
    };
    if let Some(i) = &i {
        a::dtype_in(i, &[DType::I64])?;
        if u.inverse {
            a::same_shape(i, &inv_shape)?;
        }
    }
    if let Some(c) = &c {
        a::dtype_in(c, &[DType::I64])?;
        if u.counts {
            one_d(c)?;
        }
    }
    let (vh, ch) = (value_out as usize, counts_out as usize);
    // only the outputs asked for take part (the others may be empty placeholders)
    let i = i.filter(|_| u.inverse);
    let c = c.filter(|_| u.counts);
    let (has_i, has_c) = (i.is_some(), c.is_some());
    let xshape = x.shape().to_vec();
    let consecutive = u.consecutive;
    let sorted_dim = u.sorted_dim;
    let mut l = Launch::new(u.api);
    l.input(&x);
    l.output(&v);
    if let Some(i) = &i {
        l.output(i);
    }
    if let Some(c) = &c {
        l.output(c);
    }
    l.finish(move |views, _| {
        let iv = has_i.then(|| &views[2]);
        let cv = has_c.then(|| &views[2 + has_i as usize]);
        let k = match dim {
            None => extra::unique(&views[0], consecutive, &views[1], iv, cv)?.count,
            Some(d) if sorted_dim => extra::unique_dim(&views[0], d, &views[1], iv, cv)?,
            Some(d) => extra::unique_consecutive_dim(&views[0], d, &views[1], iv, cv)?,
        };
        let vshape: Vec<i64> = match dim {
            None => vec![k as i64],
            Some(d) => {
                let mut s: Vec<i64> = xshape.iter().map(|&e| e as i64).collect();
                s[d] = k as i64;
                s
            }
        };
        let vstrides: Vec<i64> = {
            let us: Vec<usize> = vshape.iter().map(|&e| e as usize).collect();
            contiguous_strides(&us).iter().map(|&e| e as i64).collect()
        };
        // the caller may have destroyed the outputs already: then nobody reads their shapes
        let _ = crate::objects::tensor_mut(vh, "valueOut", |t| {
            t.view_shape = vshape;
            t.strides = vstrides;
        });
        if has_c {
            let _ = crate::objects::tensor_mut(ch, "countsOut", |t| {
                t.view_shape = vec![k as i64];
                t.strides = vec![1];
            });
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUniqueGetWorkspaceSize(
    self_: *const c_void,
    sorted: bool,
    returnInverse: bool,
    valueOut: *mut c_void,
    inverseOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUniqueGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let _ = sorted; // the values always come out sorted, which satisfies both
            let u = UniqueArgs {
                api: "aclnnUnique",
                consecutive: false,
                inverse: returnInverse,
                counts: false,
                dim: None,
                sorted_dim: false,
            };
            unique(u, self_, valueOut, inverseOut, std::ptr::null_mut())
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUnique2GetWorkspaceSize(
    self_: *const c_void,
    sorted: bool,
    returnInverse: bool,
    returnCounts: bool,
    valueOut: *mut c_void,
    inverseOut: *mut c_void,
    countsOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUnique2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let _ = sorted; // as for Unique
            let u = UniqueArgs {
                api: "aclnnUnique2",
                consecutive: false,
                inverse: returnInverse,
                counts: returnCounts,
                dim: None,
                sorted_dim: false,
            };
            unique(u, self_, valueOut, inverseOut, countsOut)
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUniqueConsecutiveGetWorkspaceSize(
    self_: *const c_void,
    returnInverse: bool,
    returnCounts: bool,
    dim: i64,
    valueOut: *mut c_void,
    inverseOut: *mut c_void,
    countsOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUniqueConsecutiveGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let nd = x.ndim() as i64;
            // a dim outside [-ndim, ndim) means none (torch_npu passes 1000)
            let d = (nd > 0 && dim >= -nd && dim < nd).then(|| dim.rem_euclid(nd) as usize);
            let u = UniqueArgs {
                api: "aclnnUniqueConsecutive",
                consecutive: true,
                inverse: returnInverse,
                counts: returnCounts,
                dim: d,
                sorted_dim: false,
            };
            unique(u, self_, valueOut, inverseOut, countsOut)
        },
    )
}

/// `aclnn_unique_dim.h`: the distinct slices of `self` along `dim`, sorted (`sorted` is
/// accepted either way: sorted output satisfies both), with `countsOut` always and
/// `inverseOut` when `returnInverse`; `valueOut` has `self`'s shape and, after the task,
/// `self`'s shape with the count at `dim`; `countsOut` (`[self.shape[dim]]`) becomes
/// `[count]`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUniqueDimGetWorkspaceSize(
    self_: *const c_void,
    sorted: bool,
    returnInverse: bool,
    dim: i64,
    valueOut: *mut c_void,
    inverseOut: *mut c_void,
    countsOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUniqueDimGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let _ = sorted; // the slices always come out sorted
            let x = a::tensor(self_, "self")?;
            if x.ndim() == 0 {
                return Err(NnError::invalid(
                    "self is 0-D; UniqueDim needs a dimension to work along",
                ));
            }
            let d = a::dim(dim, x.ndim(), "dim")?;
            let u = UniqueArgs {
                api: "aclnnUniqueDim",
                consecutive: false,
                inverse: returnInverse,
                counts: true,
                dim: Some(d),
                sorted_dim: true,
            };
            unique(u, self_, valueOut, inverseOut, countsOut)
        },
    )
}

// ---- Argsort / SearchSorted ----

#[no_mangle]
pub unsafe extern "C" fn aclnnArgsortGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    descending: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnArgsortGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::max_dims(&x, 8)?;
            let d = a::dim(dim, x.ndim(), "dim")?;
            a::dtype_in(&o, &[DType::I64])?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnArgsort");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                // the sorted values go to a scratch tensor: only the indices are asked for
                let s = npu_emu::ops::view::Scratch::new(v[0].dtype, &v[0].shape);
                sort::sort(&v[0], d, descending, None, &s.view, &v[1])
            })
        },
    )
}

/// The data types of SearchSorted's `sortedSequence` and `self`.
const SEARCH_TYPES: &[DType] = &[
    DType::F64,
    DType::F32,
    DType::F16,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
];

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnSearchSortedGetWorkspaceSize(
    sortedSequence: *const c_void,
    self_: *const c_void,
    outInt32: bool,
    right: bool,
    sorter: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSearchSortedGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let q = a::tensor(sortedSequence, "sortedSequence")?;
            let x = a::tensor(self_, "self")?;
            let s = a::opt_tensor(sorter, "sorter")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&q, SEARCH_TYPES)?;
            a::dtype_in(&x, SEARCH_TYPES)?;
            a::promote(q.dtype(), "sortedSequence", x.dtype(), "self")?;
            a::max_dims(&q, 8)?;
            a::max_dims(&x, 8)?;
            if q.ndim() == 0 {
                return Err(NnError::invalid(
                    "sortedSequence must have at least 1 dimension",
                ));
            }
            if q.ndim() > 1
                && (x.ndim() != q.ndim() || x.shape()[..x.ndim() - 1] != q.shape()[..q.ndim() - 1])
            {
                return Err(NnError::invalid(format!(
                    "sortedSequence {:?} and self {:?} must share all dimensions but the last",
                    q.shape(),
                    x.shape()
                )));
            }
            if let Some(s) = &s {
                a::dtype_in(s, &[DType::I64])?;
                a::same_shape(s, q.shape())?;
            }
            let want = if outInt32 { DType::I32 } else { DType::I64 };
            if o.dtype() != want {
                return Err(NnError::invalid(format!(
                    "out data type {} must be {want} (outInt32 is {outInt32})",
                    o.dtype()
                )));
            }
            a::same_shape(&o, x.shape())?;
            let hs = s.is_some();
            let mut l = Launch::new("aclnnSearchSorted");
            l.input(&q);
            l.input(&x);
            if let Some(s) = &s {
                l.input(s);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let sv = hs.then_some(&v[2]);
                extra::searchsorted(&v[0], &v[1], right, sv, &v[v.len() - 1])
            })
        },
    )
}

crate::phase2!(aclnnArgsort, aclnnSearchSorted);

crate::phase2!(
    aclnnSort,
    aclnnTopk,
    aclnnUnique,
    aclnnUnique2,
    aclnnUniqueConsecutive,
    aclnnUniqueDim
);
