//! Arguments of the operators: C handles → engine values, and the checks every family
//! repeats. Each reader names the argument in its error, as CANN's messages do; the
//! boundary prefixes the API name.
//!
//! - [`tensor`], [`opt_tensor`], [`tensor_list`]: `aclTensor*` / `aclTensorList*` → [`T`];
//! - [`scalar`], [`opt_scalar`], [`scalar_list`]: `aclScalar*` → [`Scalar`];
//! - [`int_array`], [`bool_array`]: `aclIntArray*` / `aclBoolArray*` → `Vec`;
//! - [`dtype`]: an `aclDataType` argument;
//! - checks: [`dtype_in`], [`broadcast`], [`promote`], [`castable`], [`same_shape`],
//!   [`max_dims`], [`dim`], [`dims`].

use crate::objects::{self, Object};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::{self as dt, DType};
use npu_emu::ops::view::broadcast_shapes;
use npu_emu::ops::{Layout, Scalar};
use std::ffi::c_void;

/// A tensor argument: its layout (dtype, view shape, strides, offset) and storage address.
#[derive(Clone, Debug)]
pub struct T {
    pub arg: &'static str,
    pub layout: Layout,
    pub addr: usize,
    pub format: i32,
}

impl T {
    pub fn dtype(&self) -> DType {
        self.layout.dtype
    }
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }
    pub fn ndim(&self) -> usize {
        self.layout.shape.len()
    }
    pub fn numel(&self) -> usize {
        self.layout.numel()
    }
    /// Same storage and layout (an `Inplace` call passing one tensor twice).
    pub fn same_as(&self, o: &T) -> bool {
        self.addr == o.addr && self.layout == o.layout
    }
}

/// Formats an operator accepts (the plain ones; private formats need aclnnNpuFormatCast).
const PLAIN_FORMATS: &[i32] = &[
    -1, // undefined: treated as ND
    0,  // NCHW
    1,  // NHWC
    2,  // ND
    14, // CHWN
    16, // HWCN
    27, // NDHWC
    30, // NCDHW
    31, // DHWCN
    34, // CN
    35, // NC
    36, // DHWNC
    47, // NCL
];

fn to_t(t: &objects::Tensor, arg: &'static str) -> NnResult<T> {
    let dtype = DType::from_acl(t.dtype).ok_or_else(|| {
        NnError::invalid(format!(
            "{arg} has data type {}, which this operator does not support",
            npu_emu::formats::dtype_name(t.dtype)
        ))
    })?;
    for f in [t.format, t.storage_format] {
        if !PLAIN_FORMATS.contains(&f) {
            return Err(NnError::invalid(format!(
                "{arg} is stored in format {}; this operator takes ND (or another plain \
                 format): convert private formats with aclnnNpuFormatCast first",
                crate::format_cast::format_name(f)
            )));
        }
    }
    if t.strides.len() != t.view_shape.len() {
        return Err(NnError::invalid(format!(
            "{arg} has {} strides for {} dimensions",
            t.strides.len(),
            t.view_shape.len()
        )));
    }
    if let Some(d) = t.view_shape.iter().find(|&&d| d < 0) {
        return Err(NnError::invalid(format!(
            "{arg} view shape {:?} has a negative dimension {d}",
            t.view_shape
        )));
    }
    if t.offset < 0 {
        return Err(NnError::invalid(format!(
            "{arg} has a negative offset {}",
            t.offset
        )));
    }
    if let Some(s) = t.strides.iter().find(|&&s| s < 0) {
        return Err(NnError::invalid(format!(
            "{arg} has a negative stride {s} (strides {:?})",
            t.strides
        )));
    }
    Ok(T {
        arg,
        layout: Layout {
            dtype,
            shape: t.view_shape.iter().map(|&d| d as usize).collect(),
            strides: t.strides.iter().map(|&s| s as isize).collect(),
            offset: t.offset as isize,
        },
        addr: t.addr,
        format: t.format,
    })
}

/// A required `aclTensor*` argument.
pub fn tensor(h: *const c_void, arg: &'static str) -> NnResult<T> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let t = objects::tensor(h as usize, arg)?;
    to_t(&t, arg)
}

/// A tensor argument that may be complex: an ACL_COMPLEX64 (COMPLEX128) tensor comes back as
/// its real view, ACL_FLOAT (ACL_DOUBLE) with one more innermost dimension of 2 (re, im),
/// and `true`; any other tensor as [`tensor`] reads it, and `false`.
pub fn tensor_cx(h: *const c_void, arg: &'static str) -> NnResult<(T, bool)> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let mut t = objects::tensor(h as usize, arg)?;
    let real = match t.dtype {
        npu_emu::formats::DT_COMPLEX64 => 0,
        npu_emu::formats::DT_COMPLEX128 => 11,
        _ => return Ok((to_t(&t, arg)?, false)),
    };
    t.dtype = real;
    t.view_shape.push(2);
    for s in &mut t.strides {
        *s *= 2;
    }
    t.strides.push(1);
    t.offset *= 2;
    Ok((to_t(&t, arg)?, true))
}

/// An optional tensor argument that may be complex (see [`tensor_cx`]).
pub fn opt_tensor_cx(h: *const c_void, arg: &'static str) -> NnResult<Option<(T, bool)>> {
    if h.is_null() {
        Ok(None)
    } else {
        tensor_cx(h, arg).map(Some)
    }
}

/// A weight that may be stored in FRACTAL_NZ (the `…WeightNz` products): the logical view
/// (for the checks), and for an NZ weight the storage as a flat tensor plus the plan that
/// converts it back to ND.
pub struct Weight {
    pub logical: T,
    pub nz: Option<NzWeight>,
}

/// A FRACTAL_NZ weight: its storage as a flat tensor, the plan that converts the storage
/// back to ND, and whether the argument is the transpose of that ND matrix (a view with its
/// last two dimensions swapped, as torch_npu passes `weight.t()` of an NZ `nn.Linear`
/// weight; CANN's matmul reads such a B matrix as transposed).
pub struct NzWeight {
    pub storage: T,
    pub plan: std::sync::Arc<npu_emu::formats::Plan>,
    pub transposed: bool,
}

/// A required weight argument, plain or in FRACTAL_NZ (as `aclnnTransMatmulWeight` or
/// `aclnnNpuFormatCast` leave it: C0 by either rule, the one the storage shape matches).
pub fn weight(h: *const c_void, arg: &'static str) -> NnResult<Weight> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    weight_of(objects::tensor(h as usize, arg)?, arg)
}

/// [`weight`] of a tensor descriptor already read (a caller may first restate its view).
pub fn weight_of(t: objects::Tensor, arg: &'static str) -> NnResult<Weight> {
    use npu_emu::formats::{self, C0Rule, Request, FORMAT_FRACTAL_NZ, FORMAT_ND};
    if t.storage_format != FORMAT_FRACTAL_NZ && t.format != FORMAT_FRACTAL_NZ {
        return Ok(Weight {
            logical: to_t(&t, arg)?,
            nz: None,
        });
    }
    let mut plain = t.clone();
    plain.format = FORMAT_ND;
    plain.storage_format = FORMAT_ND;
    plain.strides = crate::meta::contiguous_strides(&t.view_shape);
    let logical = to_t(&plain, arg)?;
    // The ND matrix the storage holds: the view's shape, or with its last two dimensions
    // swapped when the view is that matrix transposed.
    let n = t.view_shape.len();
    let mut nd_shape = t.view_shape.clone();
    let transposed = n >= 2 && t.strides != plain.strides && {
        nd_shape.swap(n - 2, n - 1);
        let mut st = crate::meta::contiguous_strides(&nd_shape);
        st.swap(n - 2, n - 1);
        st == t.strides
    };
    if !transposed {
        nd_shape = t.view_shape.clone();
    }
    let mut last = String::new();
    for rule in [C0Rule::Ge, C0Rule::Aclnn] {
        match formats::plan(&Request {
            src_format: FORMAT_FRACTAL_NZ,
            src_shape: &t.storage_shape,
            dst_format: FORMAT_ND,
            dst_shape: Some(&nd_shape),
            dtype: t.dtype,
            groups: 1,
            rule,
        }) {
            Ok(plan) => {
                let elems = plan.src_bytes() / logical.dtype().size();
                let storage = T {
                    arg,
                    layout: Layout {
                        dtype: logical.dtype(),
                        shape: vec![elems],
                        strides: vec![1],
                        offset: t.offset as isize,
                    },
                    addr: t.addr,
                    format: FORMAT_ND,
                };
                return Ok(Weight {
                    logical,
                    nz: Some(NzWeight {
                        storage,
                        plan: std::sync::Arc::new(plan),
                        transposed,
                    }),
                });
            }
            Err(e) => last = e.message,
        }
    }
    Err(NnError::invalid(format!(
        "{arg} in FRACTAL_NZ with view shape {:?} and storage shape {:?} is not a layout this \
         operator can read: {last}",
        t.view_shape, t.storage_shape
    )))
}

/// An optional `aclTensor*` argument (NULL is None).
pub fn opt_tensor(h: *const c_void, arg: &'static str) -> NnResult<Option<T>> {
    if h.is_null() {
        Ok(None)
    } else {
        tensor(h, arg).map(Some)
    }
}

/// A required `aclTensorList*` argument; every element must be a live tensor.
pub fn tensor_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<T>> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let items = objects::with(h as usize, "aclTensorList", arg, |o| match o {
        Object::TensorList(v) => Ok(v.clone()),
        _ => unreachable!(),
    })?;
    let mut out = Vec::with_capacity(items.len());
    for (i, h) in items.into_iter().enumerate() {
        if h == 0 {
            return Err(NnError::nullptr(format!("{arg}[{i}] is nullptr")));
        }
        let t = objects::tensor(h, arg).map_err(|e| e.with_suffix(format!(" ({arg}[{i}])")))?;
        out.push(to_t(&t, arg)?);
    }
    Ok(out)
}

fn to_scalar(s: &objects::Scalar, arg: &str) -> NnResult<Scalar> {
    let dtype = DType::from_acl(s.dtype).ok_or_else(|| {
        NnError::invalid(format!(
            "{arg} has data type {}, which this operator does not support",
            npu_emu::formats::dtype_name(s.dtype)
        ))
    })?;
    Scalar::from_bytes(dtype, &s.bytes)
        .ok_or_else(|| NnError::invalid(format!("{arg} holds too few bytes")))
}

/// A required `aclScalar*` argument.
pub fn scalar(h: *const c_void, arg: &'static str) -> NnResult<Scalar> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let s = objects::with(h as usize, "aclScalar", arg, |o| match o {
        Object::Scalar(s) => Ok(s.clone()),
        _ => unreachable!(),
    })?;
    to_scalar(&s, arg)
}

/// An optional `aclScalar*` argument.
pub fn opt_scalar(h: *const c_void, arg: &'static str) -> NnResult<Option<Scalar>> {
    if h.is_null() {
        Ok(None)
    } else {
        scalar(h, arg).map(Some)
    }
}

/// A required `aclScalarList*` argument.
pub fn scalar_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<Scalar>> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let items = objects::with(h as usize, "aclScalarList", arg, |o| match o {
        Object::ScalarList(v) => Ok(v.clone()),
        _ => unreachable!(),
    })?;
    let mut out = Vec::with_capacity(items.len());
    for (i, h) in items.into_iter().enumerate() {
        if h == 0 {
            return Err(NnError::nullptr(format!("{arg}[{i}] is nullptr")));
        }
        let s = objects::with(h, "aclScalar", arg, |o| match o {
            Object::Scalar(s) => Ok(s.clone()),
            _ => unreachable!(),
        })?;
        out.push(to_scalar(&s, arg)?);
    }
    Ok(out)
}

/// A required `aclIntArray*` argument.
pub fn int_array(h: *const c_void, arg: &'static str) -> NnResult<Vec<i64>> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    objects::with(h as usize, "aclIntArray", arg, |o| match o {
        Object::IntArray(v) => Ok(v.clone()),
        _ => unreachable!(),
    })
}

/// An optional `aclIntArray*` argument.
pub fn opt_int_array(h: *const c_void, arg: &'static str) -> NnResult<Option<Vec<i64>>> {
    if h.is_null() {
        Ok(None)
    } else {
        int_array(h, arg).map(Some)
    }
}

/// A required `aclBoolArray*` argument.
pub fn bool_array(h: *const c_void, arg: &'static str) -> NnResult<Vec<bool>> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    objects::with(h as usize, "aclBoolArray", arg, |o| match o {
        Object::BoolArray(v) => Ok(v.clone()),
        _ => unreachable!(),
    })
}

/// An `aclDataType` argument the engine computes on.
pub fn dtype(v: i32, arg: &str) -> NnResult<DType> {
    DType::from_acl(v).ok_or_else(|| {
        NnError::invalid(format!(
            "{arg} {} is not supported",
            npu_emu::formats::dtype_name(v)
        ))
    })
}

// ---- dtype lists of the aclnn reference (Atlas A2/A3) ----

use DType::*;
/// Everything the arithmetic operators accept.
pub const ALL_NUM: &[DType] = &[F32, F16, F64, I32, I64, I16, I8, U8, Bool, BF16];
/// The floating types.
pub const FLOATS: &[DType] = &[F32, F16, F64, BF16];
/// Floating types without double (most activation/NN kernels).
pub const FLOATS3: &[DType] = &[F32, F16, BF16];
/// Integer index types.
pub const INDEX: &[DType] = &[I32, I64];

/// `t`'s dtype must be one of `list`.
pub fn dtype_in(t: &T, list: &[DType]) -> NnResult<()> {
    dtype_of(t.dtype(), t.arg, list)
}

/// `d` (of argument `arg`) must be one of `list`.
pub fn dtype_of(d: DType, arg: &str, list: &[DType]) -> NnResult<()> {
    if list.contains(&d) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{arg} has data type {d}, which is not supported; supported: {}",
            dt::names(list)
        )))
    }
}

/// The broadcast shape of two tensors.
pub fn broadcast(a: &T, b: &T) -> NnResult<Vec<usize>> {
    broadcast_shapes(a.shape(), b.shape()).ok_or_else(|| {
        NnError::invalid(format!(
            "the shapes of {} {:?} and {} {:?} cannot broadcast",
            a.arg,
            a.shape(),
            b.arg,
            b.shape()
        ))
    })
}

/// The broadcast shape of several shapes, naming the arguments.
pub fn broadcast_all(ts: &[&T]) -> NnResult<Vec<usize>> {
    let mut shape: Vec<usize> = vec![];
    for t in ts {
        shape = broadcast_shapes(&shape, t.shape()).ok_or_else(|| {
            let all: Vec<String> = ts
                .iter()
                .map(|t| format!("{} {:?}", t.arg, t.shape()))
                .collect();
            NnError::invalid(format!("the shapes {} cannot broadcast", all.join(", ")))
        })?;
    }
    Ok(shape)
}

/// `PromoteType` of two dtypes, naming the arguments when they do not promote.
pub fn promote(a: DType, an: &str, b: DType, bn: &str) -> NnResult<DType> {
    dt::promote(a, b).ok_or_else(|| {
        NnError::invalid(format!(
            "{an} data type {a} and {bn} data type {b} cannot be promoted to a common type"
        ))
    })
}

/// The result type `from` must be storable in `out` (`CanCast`).
pub fn castable(from: DType, out: &T) -> NnResult<()> {
    if dt::can_cast(from, out.dtype()) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "the result type {from} cannot be cast to the {} data type {}",
            out.arg,
            out.dtype()
        )))
    }
}

/// `t` has the data type of `of` (both named in the error).
pub fn same_dtype(t: &T, of: &T) -> NnResult<()> {
    if t.dtype() != of.dtype() {
        return Err(NnError::invalid(format!(
            "{} data type {} must be {}'s {}",
            t.arg,
            t.dtype(),
            of.arg,
            of.dtype()
        )));
    }
    Ok(())
}

/// `t` must have exactly `shape`.
pub fn same_shape(t: &T, shape: &[usize]) -> NnResult<()> {
    if t.shape() == shape {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has shape {:?}, expected {:?}",
            t.arg,
            t.shape(),
            shape
        )))
    }
}

/// At most `max` dimensions (most aclnn operators allow 8).
pub fn max_dims(t: &T, max: usize) -> NnResult<()> {
    if t.ndim() <= max {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has {} dimensions; at most {max} are supported",
            t.arg,
            t.ndim()
        )))
    }
}

/// A dimension index in `[-n, n)` (n at least 1) made non-negative.
pub fn dim(d: i64, ndim: usize, arg: &str) -> NnResult<usize> {
    let n = ndim.max(1) as i64;
    if d < -n || d >= n {
        return Err(NnError::invalid(format!(
            "{arg} {d} is out of range [{}, {}]",
            -n,
            n - 1
        )));
    }
    Ok(if d < 0 { (d + n) as usize } else { d as usize })
}

/// Dimension indices, sorted, duplicates refused; an empty list means all dimensions.
pub fn dims(ds: &[i64], ndim: usize, arg: &str) -> NnResult<Vec<usize>> {
    if ds.is_empty() {
        return Ok((0..ndim).collect());
    }
    let mut out = Vec::with_capacity(ds.len());
    for &d in ds {
        let v = dim(d, ndim, arg)?;
        if out.contains(&v) {
            return Err(NnError::invalid(format!(
                "{arg} {ds:?} repeats dimension {v}"
            )));
        }
        out.push(v);
    }
    out.sort_unstable();
    if ndim == 0 {
        out.clear();
    }
    Ok(out)
}

/// A required tensor that an operator takes in format NC1HWC0 (3) as its own 5-D view (the
/// view is the stored layout, so elementwise operators read it as it is); its `format` is
/// 3. A tensor in another format is refused.
pub fn tensor_nc1hwc0(h: *const c_void, arg: &'static str) -> NnResult<T> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let mut t = objects::tensor(h as usize, arg)?;
    if t.format != 3 || t.storage_format != 3 {
        return Err(NnError::invalid(format!(
            "{arg} is in format {}; this operator takes ACL_FORMAT_NC1HWC0",
            crate::format_cast::format_name(t.format)
        )));
    }
    t.format = 2;
    t.storage_format = 2;
    let mut r = to_t(&t, arg)?;
    r.format = 3;
    Ok(r)
}
