//! Index-driven updates and order statistics: `aclnn_index_add.h` (IndexAdd),
//! `aclnn_index_fill_tensor.h` (IndexFillTensor, InplaceIndexFillTensor), `aclnn_index_fill.h`
//! (IndexFill, InplaceIndexFill: the indices in a device tensor), `aclnn_take.h`
//! (Take), `aclnn_put.h` (InplacePut), `aclnn_kthvalue.h` (Kthvalue), `aclnn_median.h` (Median, MedianDim, NanMedian,
//! NanMedianDim). The engine is `npu_emu::ops::{select, sort}`.

use super::args::{self as a, ALL_NUM, INDEX};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::sort::{self, Pick};
use npu_emu::ops::{select, View};
use std::ffi::c_void;

fn same_dtype(t: &a::T, d: DType) -> NnResult<()> {
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

/// dim of self (a 0-d self takes dim 0 or -1).
fn dim_of(x: &a::T, dim: i64) -> NnResult<usize> {
    a::dim(dim, x.ndim(), "dim")
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexAddGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    source: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexAddGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(source, "source")?;
            let al = a::scalar(alpha, "alpha")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&i, INDEX)?;
            a::max_dims(&x, 8)?;
            let d = dim_of(&x, dim)?;
            if i.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "index must be 1-D or 0-d, but its shape is {:?}",
                    i.shape()
                )));
            }
            same_dtype(&s, x.dtype())?;
            let mut want = x.shape().to_vec();
            if !want.is_empty() {
                want[d] = i.numel();
            }
            if s.shape() != want.as_slice() && !(x.ndim() == 0 && s.numel() == 1) {
                return Err(NnError::invalid(format!(
                "source has shape {:?}, expected {want:?} (self's shape with dimension {d} the \
                 length of index)",
                s.shape()
            )));
            }
            same_dtype(&o, x.dtype())?;
            a::same_shape(&o, x.shape())?;
            let av = (al.to_f64(), al.to_i64());
            let mut l = Launch::new("aclnnIndexAdd");
            l.input(&x);
            l.input(&i);
            l.input(&s);
            l.output(&o);
            l.finish(move |v, _| select::index_add(&v[0], d, &v[1], &v[2], av, &v[3]))
        },
    )
}

fn index_fill(
    api: &'static str,
    x: a::T,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    o: a::T,
) -> NnResult<Built> {
    let idx = a::int_array(index, "index")?;
    let val = a::scalar(value, "value")?;
    a::dtype_in(&x, ALL_NUM)?;
    a::max_dims(&x, 8)?;
    let d = dim_of(&x, dim)?;
    same_dtype(&o, x.dtype())?;
    a::same_shape(&o, x.shape())?;
    let n = if x.ndim() == 0 { 1 } else { x.shape()[d] } as i64;
    if let Some(t) = idx.iter().find(|&&t| t < -n || t >= n) {
        return Err(NnError::invalid(format!(
            "index {t} is out of range for dimension {d} of size {n}"
        )));
    }
    let vv = (val.to_f64(), val.to_i64());
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| select::index_fill(&v[0], d, &idx, vv, &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexFillTensorGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexFillTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            index_fill("aclnnIndexFillTensor", x, dim, index, value, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceIndexFillTensorGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceIndexFillTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            index_fill(
                "aclnnInplaceIndexFillTensor",
                x.clone(),
                dim,
                index,
                value,
                x,
            )
        },
    )
}

/// `aclnnIndexFill` / `aclnnInplaceIndexFill`: IndexFillTensor with the indices in a device
/// tensor (INT32 or INT64, at most 1-D), read by the task; out-of-range indices are skipped.
fn index_fill_t(
    api: &'static str,
    x: a::T,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    o: a::T,
) -> NnResult<Built> {
    let i = a::tensor(index, "index")?;
    let val = a::scalar(value, "value")?;
    a::dtype_in(&x, ALL_NUM)?;
    a::dtype_in(&i, INDEX)?;
    a::max_dims(&x, 8)?;
    let d = dim_of(&x, dim)?;
    if i.ndim() > 1 {
        return Err(NnError::invalid(format!(
            "index must be 1-D or 0-d, but its shape is {:?}",
            i.shape()
        )));
    }
    same_dtype(&o, x.dtype())?;
    a::same_shape(&o, x.shape())?;
    let vv = (val.to_f64(), val.to_i64());
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&i);
    l.output(&o);
    l.finish(move |v, _| select::index_fill_indices(&v[0], d, &v[1], vv, &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexFillGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexFillGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            index_fill_t("aclnnIndexFill", x, dim, index, value, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceIndexFillGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceIndexFillGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            index_fill_t("aclnnInplaceIndexFill", x.clone(), dim, index, value, x)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTakeGetWorkspaceSize(
    self_: *const c_void,
    index: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnTakeGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let i = a::tensor(index, "index")?;
        let o = a::tensor(out, "out")?;
        a::dtype_in(&x, ALL_NUM)?;
        a::dtype_in(&i, INDEX)?;
        same_dtype(&o, x.dtype())?;
        a::same_shape(&o, i.shape())?;
        if x.numel() == 0 && i.numel() > 0 {
            return Err(NnError::invalid(
                "self is empty, so no index can be taken from it".to_string(),
            ));
        }
        let mut l = Launch::new("aclnnTake");
        l.input(&x);
        l.input(&i);
        l.output(&o);
        l.finish(|v, _| select::take(&v[0], &v[1], &v[2]))
    })
}

/// The engine's view of a reduced output: dimension `dim` of size 1 put back (keepdim).
fn keep(v: &View, dim: usize, keepdim: bool, x_ndim: usize) -> View {
    if keepdim || x_ndim == 0 {
        return v.clone();
    }
    let mut r = v.clone();
    r.shape.insert(dim, 1);
    r.strides.insert(dim, 0);
    r
}

const ORDERED: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
];

#[allow(clippy::too_many_arguments)]
fn order_stat(
    api: &'static str,
    self_: *const c_void,
    dim: i64,
    keepdim: bool,
    pick: Pick,
    k: Option<i64>,
    values: *mut c_void,
    indices: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let v = a::tensor(values, "valuesOut")?;
    let i = a::tensor(indices, "indicesOut")?;
    a::dtype_in(&x, ORDERED)?;
    a::max_dims(&x, 8)?;
    let d = dim_of(&x, dim)?;
    let n = if x.ndim() == 0 { 1 } else { x.shape()[d] };
    let pick = match k {
        Some(k) if k < 1 || k as usize > n => {
            return Err(NnError::invalid(format!(
                "k {k} is out of range [1, {n}] (the size of dimension {d})"
            )))
        }
        Some(k) => Pick::Kth(k as usize),
        None => pick,
    };
    if n == 0 {
        return Err(NnError::invalid(format!(
            "dimension {d} of self {:?} is empty",
            x.shape()
        )));
    }
    let mut want = x.shape().to_vec();
    if !want.is_empty() {
        if keepdim {
            want[d] = 1;
        } else {
            want.remove(d);
        }
    }
    same_dtype(&v, x.dtype())?;
    a::dtype_in(&i, &[DType::I64])?;
    a::same_shape(&v, &want)?;
    a::same_shape(&i, &want)?;
    let xn = x.ndim();
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&v);
    l.output(&i);
    l.finish(move |vw, _| {
        let (vo, io) = (keep(&vw[1], d, keepdim, xn), keep(&vw[2], d, keepdim, xn));
        sort::select(&vw[0], d, pick, &vo, &io)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnKthvalueGetWorkspaceSize(
    self_: *const c_void,
    k: i64,
    dim: i64,
    keepdim: bool,
    valuesOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnKthvalueGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            order_stat(
                "aclnnKthvalue",
                self_,
                dim,
                keepdim,
                Pick::Median,
                Some(k),
                valuesOut,
                indicesOut,
            )
        },
    )
}

macro_rules! median_dim {
    ($get:ident, $api:literal, $pick:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: i64,
            keepDim: bool,
            valuesOut: *mut c_void,
            indicesOut: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                order_stat(
                    $api, self_, dim, keepDim, $pick, None, valuesOut, indicesOut,
                )
            })
        }
    };
}
median_dim!(
    aclnnMedianDimGetWorkspaceSize,
    "aclnnMedianDim",
    Pick::Median
);
median_dim!(
    aclnnNanMedianDimGetWorkspaceSize,
    "aclnnNanMedianDim",
    Pick::NanMedian
);

macro_rules! median_all {
    ($get:ident, $api:literal, $nan:expr, $out:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            $out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor($out, stringify!($out))?;
                a::dtype_in(&x, ORDERED)?;
                same_dtype(&o, x.dtype())?;
                if o.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "{} must hold one element, but its shape is {:?}",
                        stringify!($out),
                        o.shape()
                    )));
                }
                let mut l = Launch::new($api);
                l.input(&x);
                l.output(&o);
                l.finish(|v, _| {
                    let o = View {
                        shape: vec![],
                        strides: vec![],
                        ..v[1].clone()
                    };
                    sort::median_all(&v[0], $nan, &o)
                })
            })
        }
    };
}
median_all!(aclnnMedianGetWorkspaceSize, "aclnnMedian", false, valuesOut);
median_all!(aclnnNanMedianGetWorkspaceSize, "aclnnNanMedian", true, out);

#[no_mangle]
pub unsafe extern "C" fn aclnnInplacePutGetWorkspaceSize(
    selfRef: *mut c_void,
    index: *const c_void,
    source: *const c_void,
    accumulate: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplacePutGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(source, "source")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&i, INDEX)?;
            same_dtype(&s, x.dtype())?;
            if s.numel() != i.numel() {
                return Err(NnError::invalid(format!(
                    "source has {} elements and index {}; they must be equal",
                    s.numel(),
                    i.numel()
                )));
            }
            if x.numel() == 0 && i.numel() > 0 {
                return Err(NnError::invalid(
                    "selfRef is empty, so nothing can be put into it".to_string(),
                ));
            }
            let mut l = Launch::new("aclnnInplacePut");
            l.input(&i);
            l.input(&s);
            l.output(&x);
            l.finish(move |v, _| select::put(&v[2], &v[0], &v[1], accumulate))
        },
    )
}

crate::phase2!(
    aclnnInplacePut,
    aclnnIndexAdd,
    aclnnIndexFillTensor,
    aclnnInplaceIndexFillTensor,
    aclnnIndexFill,
    aclnnInplaceIndexFill,
    aclnnTake,
    aclnnKthvalue,
    aclnnMedian,
    aclnnMedianDim,
    aclnnNanMedian,
    aclnnNanMedianDim
);

/// `aclnn_roll.h`: `out = torch.roll(self, shifts, dims)`; `dims` empty rolls the flattened
/// tensor by the single shift.
#[no_mangle]
pub unsafe extern "C" fn aclnnRollGetWorkspaceSize(
    x: *const c_void,
    shifts: *const c_void,
    dims: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnRollGetWorkspaceSize", workspaceSize, executor, || {
        let t = a::tensor(x, "x")?;
        let sh = a::int_array(shifts, "shifts")?;
        let ds = a::int_array(dims, "dims")?;
        let o = a::tensor(out, "out")?;
        a::dtype_in(&t, ALL_NUM)?;
        a::max_dims(&t, 8)?;
        same_dtype(&o, t.dtype())?;
        a::same_shape(&o, t.shape())?;
        if ds.is_empty() && sh.len() != 1 {
            return Err(NnError::invalid(format!(
                "shifts {sh:?} must hold one value when dims is empty"
            )));
        }
        if !ds.is_empty() && ds.len() != sh.len() {
            return Err(NnError::invalid(format!(
                "shifts {sh:?} and dims {ds:?} must have the same length"
            )));
        }
        let mut d = Vec::with_capacity(ds.len());
        for &v in &ds {
            d.push(a::dim(v, t.ndim(), "dims")?);
        }
        let mut l = Launch::new("aclnnRoll");
        l.input(&t);
        l.output(&o);
        l.finish(move |v, _| select::roll(&v[0], &sh, &d, &v[1]))
    })
}

crate::phase2!(aclnnRoll);
