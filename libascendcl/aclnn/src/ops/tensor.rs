//! Tensor manipulation beyond copies: `aclnn_triu.h`, `aclnn_tril.h` (with the in-place
//! forms), `aclnn_stack.h`, `aclnn_expand.h`, `aclnn_masked_select.h`, `aclnn_scatter.h`
//! (Scatter, InplaceScatter), `aclnn_scatter_value.h` (ScatterValue, InplaceScatterValue),
//! `aclnn_masked_scatter.h` (InplaceMaskedScatter, the backward of masked_select).
//!
//! - Triu/Tril keep the upper/lower triangle of the last two dimensions (`diagonal` shifts
//!   it: positive to the upper right); `self` has 2 to 8 dimensions; `out` has its dtype and
//!   shape.
//! - Stack joins same-shape tensors along a new dimension `dim` in `[-(n+1), n]`; the
//!   result type is the promotion of the inputs (castable to `out`).
//! - Expand broadcasts `self` to `size` (`-1` keeps a dimension; new leading dimensions
//!   need a size).
//! - MaskedSelect writes the selected elements of `self` (where the broadcast `mask`, BOOL
//!   or UINT8, is nonzero) to the front of the 1-D `out` (as many elements as the broadcast
//!   shape; contiguous), and after the task has run `out`'s view shape is `[count]`: the
//!   caller reads it with `aclGetViewShape` after synchronising (as torch_npu does).
//! - Scatter: `out = self`, then `out[… index[p] at dim …] (reduce)= src[p]` for every
//!   position `p` of `index` (`reduce` 0 replaces, 1 adds, 2 multiplies); `self`, `index`
//!   and `src` have the same number of dimensions, `index` is no larger than `src`, nor than
//!   `self` outside `dim`. An index out of range fails the task (at the next
//!   synchronisation).

use super::args::{self as a, ALL_NUM, INDEX, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::shape::{self, ScatterReduce, ScatterSrc};
use std::ffi::c_void;

fn same_dtype(o: &T, x: &T) -> NnResult<()> {
    if o.dtype() != x.dtype() {
        return Err(NnError::invalid(format!(
            "{} data type {} must be {}'s {}",
            o.arg,
            o.dtype(),
            x.arg,
            x.dtype()
        )));
    }
    Ok(())
}

fn triangle(api: &'static str, x: T, o: T, diagonal: i64, upper: bool) -> NnResult<Built> {
    a::dtype_in(&x, ALL_NUM)?;
    if x.ndim() < 2 || x.ndim() > 8 {
        return Err(NnError::invalid(format!(
            "{} must have 2 to 8 dimensions, but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    same_dtype(&o, &x)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| shape::triangle(&v[0], diagonal, upper, &v[1]))
}

macro_rules! triangle_ops {
    ($get:ident, $api:literal, $ip_get:ident, $ip_api:literal, $upper:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            diagonal: i64,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                triangle($api, x, o, diagonal, $upper)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $ip_get(
            selfRef: *mut c_void,
            diagonal: i64,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($ip_get), workspaceSize, executor, || {
                let x = a::tensor(selfRef, "selfRef")?;
                triangle($ip_api, x.clone(), x, diagonal, $upper)
            })
        }
    };
}

triangle_ops!(
    aclnnTriuGetWorkspaceSize,
    "aclnnTriu",
    aclnnInplaceTriuGetWorkspaceSize,
    "aclnnInplaceTriu",
    true
);
triangle_ops!(
    aclnnTrilGetWorkspaceSize,
    "aclnnTril",
    aclnnInplaceTrilGetWorkspaceSize,
    "aclnnInplaceTril",
    false
);

#[no_mangle]
pub unsafe extern "C" fn aclnnStackGetWorkspaceSize(
    tensors: *const c_void,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnStackGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let ts = a::tensor_list(tensors, "tensors")?;
            let o = a::tensor(out, "out")?;
            let Some(first) = ts.first() else {
                return Err(NnError::invalid("tensors is an empty list"));
            };
            let nd = first.ndim();
            if nd >= 8 {
                return Err(NnError::invalid(format!(
                    "tensors have {nd} dimensions; the result may have at most 8"
                )));
            }
            let d = a::dim(dim, nd + 1, "dim")?;
            let mut p = first.dtype();
            for (i, t) in ts.iter().enumerate() {
                a::dtype_in(t, ALL_NUM)?;
                p = a::promote(p, "tensors", t.dtype(), "tensors")?;
                if t.shape() != first.shape() {
                    return Err(NnError::invalid(format!(
                    "tensors[{i}] has shape {:?}, tensors[0] has {:?}: stack needs equal shapes",
                    t.shape(),
                    first.shape()
                )));
                }
            }
            a::castable(p, &o)?;
            let mut want = first.shape().to_vec();
            want.insert(d, ts.len());
            a::same_shape(&o, &want)?;
            let n = ts.len();
            let mut l = Launch::new("aclnnStack");
            l.inputs(&ts);
            l.output(&o);
            l.finish(move |v, _| shape::stack(&v[..n], d, &v[n]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnExpandGetWorkspaceSize(
    self_: *const c_void,
    size: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnExpandGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let size = a::int_array(size, "size")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            if size.len() < x.ndim() || size.len() > 8 {
                return Err(NnError::invalid(format!(
                    "size {size:?} must have between self's {} and 8 dimensions",
                    x.ndim()
                )));
            }
            let lead = size.len() - x.ndim();
            let mut want = Vec::with_capacity(size.len());
            for (i, &s) in size.iter().enumerate() {
                let have = if i >= lead {
                    Some(x.shape()[i - lead])
                } else {
                    None
                };
                let w = match (s, have) {
                    (-1, Some(h)) => h,
                    (s, _) if s >= 0 => s as usize,
                    _ => {
                        return Err(NnError::invalid(format!(
                            "size {size:?}: {s} at position {i} is not a size (-1 keeps an \
                         existing dimension only)"
                        )))
                    }
                };
                if let Some(h) = have {
                    if h != w && h != 1 {
                        return Err(NnError::invalid(format!(
                            "self {:?} cannot expand to {size:?}: dimension {} of size {h} is \
                         not 1",
                            x.shape(),
                            i - lead
                        )));
                    }
                }
                want.push(w);
            }
            same_dtype(&o, &x)?;
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnExpand");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                let src = v[0]
                    .expand(&v[1].shape)
                    .ok_or_else(|| "self does not broadcast to out".to_string())?;
                npu_emu::ops::iter::copy(&src, &v[1])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMaskedSelectGetWorkspaceSize(
    self_: *const c_void,
    mask: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaskedSelectGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let m = a::tensor(mask, "mask")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&m, &[DType::Bool, DType::U8])?;
            a::dtype_in(&o, ALL_NUM)?;
            a::max_dims(&x, 8)?;
            a::max_dims(&m, 8)?;
            let shape = a::broadcast(&x, &m)?;
            let n: usize = shape.iter().product();
            if o.ndim() != 1 || o.numel() != n {
                return Err(NnError::invalid(format!(
                    "out must be 1-D with {n} elements (self and mask broadcast to {shape:?}), \
                     but its shape is {:?}",
                    o.shape()
                )));
            }
            if o.numel() > 1 && o.layout.strides[0] != 1 {
                return Err(NnError::invalid("out must be contiguous"));
            }
            a::castable(x.dtype(), &o)?;
            // the tensor whose view shape becomes [count] once the task has run
            let handle = out as usize;
            let mut l = Launch::new("aclnnMaskedSelect");
            l.input(&x);
            l.input(&m);
            l.output(&o);
            l.finish(move |v, _| {
                let k = shape::masked_select(&v[0], &v[1], &shape, &v[2])?;
                // the caller may have destroyed out already: then nobody reads its shape
                let _ = crate::objects::tensor_mut(handle, "out", |t| {
                    t.view_shape = vec![k as i64];
                    t.strides = vec![1];
                });
                Ok(())
            })
        },
    )
}

fn reduce_of(r: i64) -> NnResult<ScatterReduce> {
    match r {
        0 => Ok(ScatterReduce::None),
        1 => Ok(ScatterReduce::Add),
        2 => Ok(ScatterReduce::Mul),
        _ => Err(NnError::invalid(format!(
            "reduce must be 0 (none), 1 (add) or 2 (multiply), but it is {r}"
        ))),
    }
}

/// The checks of every scatter form; `src` is None for the value forms.
fn scatter_checks(x: &T, dim: i64, i: &T, src: Option<&T>, o: &T) -> NnResult<usize> {
    a::dtype_in(x, ALL_NUM)?;
    a::dtype_in(i, INDEX)?;
    a::max_dims(x, 8)?;
    let nd = x.ndim().max(1);
    let d = a::dim(dim, nd, "dim")?;
    if i.ndim() != x.ndim() {
        return Err(NnError::invalid(format!(
            "index {:?} must have as many dimensions as self {:?}",
            i.shape(),
            x.shape()
        )));
    }
    for k in 0..x.ndim() {
        if k != d && i.shape()[k] > x.shape()[k] {
            return Err(NnError::invalid(format!(
                "index {:?} is larger than self {:?} in dimension {k}",
                i.shape(),
                x.shape()
            )));
        }
    }
    if let Some(s) = src {
        same_dtype(s, x)?;
        if s.ndim() != x.ndim() {
            return Err(NnError::invalid(format!(
                "src {:?} must have as many dimensions as self {:?}",
                s.shape(),
                x.shape()
            )));
        }
        for k in 0..x.ndim() {
            if i.shape()[k] > s.shape()[k] {
                return Err(NnError::invalid(format!(
                    "index {:?} is larger than src {:?} in dimension {k}",
                    i.shape(),
                    s.shape()
                )));
            }
        }
    }
    same_dtype(o, x)?;
    a::same_shape(o, x.shape())?;
    Ok(d)
}

fn scatter_tensor(
    api: &'static str,
    x: T,
    dim: i64,
    i: T,
    s: T,
    reduce: i64,
    o: T,
) -> NnResult<Built> {
    let d = scatter_checks(&x, dim, &i, Some(&s), &o)?;
    let r = reduce_of(reduce)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&i);
    l.input(&s);
    l.output(&o);
    l.finish(move |v, _| shape::scatter(&v[0], d, &v[1], ScatterSrc::Tensor(&v[2]), r, &v[3]))
}

fn scatter_value(
    api: &'static str,
    x: T,
    dim: i64,
    i: T,
    value: npu_emu::ops::Scalar,
    reduce: i64,
    o: T,
) -> NnResult<Built> {
    let d = scatter_checks(&x, dim, &i, None, &o)?;
    let r = reduce_of(reduce)?;
    let (vf, vi) = (value.to_f64(), value.to_i64());
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&i);
    l.output(&o);
    l.finish(move |v, _| shape::scatter(&v[0], d, &v[1], ScatterSrc::Value(vf, vi), r, &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnScatterGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    src: *const c_void,
    reduce: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(src, "src")?;
            let o = a::tensor(out, "out")?;
            scatter_tensor("aclnnScatter", x, dim, i, s, reduce, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceScatterGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    src: *const c_void,
    reduce: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceScatterGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(src, "src")?;
            scatter_tensor("aclnnInplaceScatter", x.clone(), dim, i, s, reduce, x)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnScatterValueGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    reduce: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterValueGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let v = a::scalar(value, "value")?;
            let o = a::tensor(out, "out")?;
            scatter_value("aclnnScatterValue", x, dim, i, v, reduce, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceScatterValueGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    value: *const c_void,
    reduce: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceScatterValueGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(index, "index")?;
            let v = a::scalar(value, "value")?;
            scatter_value("aclnnInplaceScatterValue", x.clone(), dim, i, v, reduce, x)
        },
    )
}

/// `aclnnScatterAdd(self, dim, index, src, out)`: `out = self`, then
/// `out[… index[p] …] += src[p]` (`torch.scatter_add`).
#[no_mangle]
pub unsafe extern "C" fn aclnnScatterAddGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    src: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterAddGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(src, "src")?;
            let o = a::tensor(out, "out")?;
            scatter_tensor("aclnnScatterAdd", x, dim, i, s, 1, o)
        },
    )
}

crate::phase2!(
    aclnnTriu,
    aclnnInplaceTriu,
    aclnnTril,
    aclnnInplaceTril,
    aclnnStack,
    aclnnExpand,
    aclnnMaskedSelect,
    aclnnScatter,
    aclnnInplaceScatter,
    aclnnScatterValue,
    aclnnInplaceScatterValue,
    aclnnScatterAdd
);

/// `aclnnInplaceMaskedScatter(selfRef, mask, source)`: `selfRef`'s elements where the
/// broadcast `mask` (BOOL or UINT8) is nonzero take `source`'s elements in order (same
/// dtype; at least as many as are selected, else the task fails).
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceMaskedScatterGetWorkspaceSize(
    selfRef: *mut c_void,
    mask: *const c_void,
    source: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceMaskedScatterGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let m = a::tensor(mask, "mask")?;
            let s = a::tensor(source, "source")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&m, &[DType::Bool, DType::U8])?;
            same_dtype(&s, &x)?;
            a::max_dims(&x, 8)?;
            if m.layout.shape.len() > x.ndim() || a::broadcast(&x, &m)?.as_slice() != x.shape() {
                return Err(NnError::invalid(format!(
                    "mask {:?} does not broadcast to selfRef {:?}",
                    m.shape(),
                    x.shape()
                )));
            }
            let mut l = Launch::new("aclnnInplaceMaskedScatter");
            l.input(&m);
            l.input(&s);
            l.output(&x);
            l.finish(move |v, _| shape::masked_scatter(&v[2], &v[0], &v[1]))
        },
    )
}

crate::phase2!(aclnnInplaceMaskedScatter);
