//! Fill and copy: `aclnn_zero.h`, `aclnn_ones.h`, `aclnn_fill_scalar.h`, `aclnn_copy.h`,
//! `aclnn_cast.h`, `aclnn_cat.h`, `aclnn_constant_pad_nd.h`, `aclnn_arange.h`, `aclnn_range.h`,
//! `aclnn_fill_tensor.h`.
//!
//! InplaceCopy copies any strides into any strides, broadcasting `src` to `selfRef`, with a
//! dtype conversion (one rounding). Cast is the same with an explicit target type that
//! must be `out`'s. Cat converts every input to `out`'s type.

use super::args::{self as a, ALL_NUM};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::{Class, DType};
use npu_emu::ops::{iter, shape, Scalar};
use std::ffi::c_void;

fn fill_value(v: &npu_emu::ops::View, s: Scalar) -> Result<(), String> {
    match v.dtype.class() {
        Class::Int => iter::fill::<i64>(v, s.rounded_to(v.dtype).to_i64()),
        _ => iter::fill::<f64>(v, s.to_f64()),
    }
}

fn fill_op(api: &'static str, h: *const c_void, s: Scalar) -> NnResult<Built> {
    let x = a::tensor(h, "selfRef")?;
    a::dtype_in(&x, ALL_NUM_ALL)?;
    let mut l = Launch::new(api);
    l.output(&x);
    l.finish(move |v, _| fill_value(&v[0], s))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceZeroGetWorkspaceSize(
    selfRef: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceZeroGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            // a complex tensor (COMPLEX64/128 are in CANN's table) is zeroed as its real view
            let (x, _) = a::tensor_cx(selfRef, "selfRef")?;
            a::dtype_in(&x, ALL_NUM_ALL)?;
            let mut l = Launch::new("aclnnInplaceZero");
            l.output(&x);
            l.finish(move |v, _| fill_value(&v[0], Scalar::i64(0)))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceOneGetWorkspaceSize(
    selfRef: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceOneGetWorkspaceSize",
        workspaceSize,
        executor,
        || fill_op("aclnnInplaceOne", selfRef, Scalar::i64(1)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceFillScalarGetWorkspaceSize(
    selfRef: *mut c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceFillScalarGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(value, "value")?;
            fill_op("aclnnInplaceFillScalar", selfRef, s)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceCopyGetWorkspaceSize(
    selfRef: *mut c_void,
    src: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceCopyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor_cx(selfRef, "selfRef")?;
            let s = a::tensor_cx(src, "src")?;
            if let Some(r) = super::complex::copy("aclnnInplaceCopy", &s, &x) {
                return r;
            }
            let (x, s) = (x.0, s.0);
            a::dtype_in(&x, ALL_NUM_ALL)?;
            a::dtype_in(&s, ALL_NUM_ALL)?;
            let shape = a::broadcast(&x, &s)?;
            if shape != x.shape() {
                return Err(NnError::invalid(format!(
                    "src shape {:?} cannot be broadcast to selfRef shape {:?}",
                    s.shape(),
                    x.shape()
                )));
            }
            let mut l = Launch::new("aclnnInplaceCopy");
            l.input(&s);
            l.output(&x);
            l.finish(move |v, _| iter::copy(&v[0], &v[1]))
        },
    )
}

/// Every dtype the engine moves (copies and casts also take the unsigned types).
const ALL_NUM_ALL: &[DType] = npu_emu::ops::dtype::ALL;

#[no_mangle]
pub unsafe extern "C" fn aclnnCastGetWorkspaceSize(
    self_: *const c_void,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnCastGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor_cx(self_, "self")?;
        let o = a::tensor_cx(out, "out")?;
        if x.1 || o.1 {
            let want = match (o.1, o.0.dtype()) {
                (true, DType::F64) => npu_emu::formats::DT_COMPLEX128,
                (true, _) => npu_emu::formats::DT_COMPLEX64,
                (false, d) => d.acl(),
            };
            if dtype != want {
                return Err(NnError::invalid(format!(
                    "dtype is {} but out has data type {}; they must be the same",
                    npu_emu::formats::dtype_name(dtype),
                    npu_emu::formats::dtype_name(want)
                )));
            }
            if super::complex::lshape(&x) != super::complex::lshape(&o) {
                return Err(NnError::invalid(format!(
                    "out has shape {:?}; self has shape {:?}",
                    super::complex::lshape(&o),
                    super::complex::lshape(&x)
                )));
            }
            if let Some(r) = super::complex::copy("aclnnCast", &x, &o) {
                return r;
            }
        }
        let (x, o) = (x.0, o.0);
        let d = a::dtype(dtype, "dtype")?;
        if o.dtype() != d {
            return Err(NnError::invalid(format!(
                "dtype is {d} but out has data type {}; they must be the same",
                o.dtype()
            )));
        }
        a::same_shape(&o, x.shape())?;
        let mut l = Launch::new("aclnnCast");
        l.input(&x);
        l.output(&o);
        l.finish(move |v, _| iter::copy(&v[0], &v[1]))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCatGetWorkspaceSize(
    tensors: *const c_void,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnCatGetWorkspaceSize", workspaceSize, executor, || {
        let ts = a::tensor_list(tensors, "tensors")?;
        let o = a::tensor(out, "out")?;
        if ts.is_empty() {
            return Err(NnError::invalid("tensors is an empty list"));
        }
        // 1-D empty tensors are skipped (PyTorch's legacy rule).
        let real: Vec<&a::T> = ts
            .iter()
            .filter(|t| !(t.ndim() == 1 && t.numel() == 0))
            .collect();
        let first = real.first().copied().unwrap_or(&ts[0]);
        let nd = first.ndim();
        let d = a::dim(dim, nd, "dim")?;
        let mut p = first.dtype();
        let mut total = 0usize;
        for (i, t) in real.iter().enumerate() {
            a::dtype_in(t, ALL_NUM)?;
            p = a::promote(p, "tensors", t.dtype(), "tensors")?;
            if t.ndim() != nd {
                return Err(NnError::invalid(format!(
                    "tensors[{i}] has {} dimensions, tensors[0] has {nd}",
                    t.ndim()
                )));
            }
            for k in 0..nd {
                if k != d && t.shape()[k] != first.shape()[k] {
                    return Err(NnError::invalid(format!(
                        "tensors[{i}] shape {:?} differs from {:?} outside dim {d}",
                        t.shape(),
                        first.shape()
                    )));
                }
            }
            total += t.shape()[d];
        }
        a::castable(p, &o)?;
        let mut want = first.shape().to_vec();
        if nd > 0 {
            want[d] = total;
        }
        a::same_shape(&o, &want)?;
        let mut l = Launch::new("aclnnCat");
        let n = ts.len();
        l.inputs(&ts);
        l.output(&o);
        l.finish(move |v, _| shape::cat(&v[..n], d, &v[n]))
    })
}

/// The (re, im) of an `aclScalar` that may be complex (COMPLEX64: two f32, COMPLEX128: two
/// f64); a real scalar has im 0.
fn scalar_re_im(h: *const c_void, arg: &'static str) -> NnResult<(f64, f64)> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let raw = crate::objects::with(h as usize, "aclScalar", arg, |o| match o {
        crate::objects::Object::Scalar(s) => Ok(s.clone()),
        _ => unreachable!(),
    })?;
    let f = |b: &[u8], w: usize| -> f64 {
        if w == 4 {
            f32::from_le_bytes(b[..4].try_into().unwrap()) as f64
        } else {
            f64::from_le_bytes(b[..8].try_into().unwrap())
        }
    };
    let w = match raw.dtype {
        npu_emu::formats::DT_COMPLEX64 => 4,
        npu_emu::formats::DT_COMPLEX128 => 8,
        _ => return Ok((a::scalar(h, arg)?.to_f64(), 0.0)),
    };
    if raw.bytes.len() < 2 * w {
        return Err(NnError::invalid(format!("{arg} holds too few bytes")));
    }
    Ok((f(&raw.bytes, w), f(&raw.bytes[w..], w)))
}

/// ConstantPadNd of a complex self (COMPLEX64/128, in CANN's table) into an out of the same
/// type: the real and imaginary planes of the real views are padded with the value's real
/// and imaginary parts.
fn constant_pad_cx(
    x: a::T,
    xc: bool,
    p: Vec<i64>,
    value: *const c_void,
    o: a::T,
    oc: bool,
) -> NnResult<Built> {
    if !(xc && oc) || x.dtype() != o.dtype() {
        return Err(NnError::invalid(format!(
            "out data type must be self's ({} complex: {xc}, out {} complex: {oc})",
            x.dtype(),
            o.dtype()
        )));
    }
    let (vr, vi) = scalar_re_im(value, "value")?;
    let nd = x.ndim() - 1;
    if !p.len().is_multiple_of(2) || p.len() > 2 * nd {
        return Err(NnError::invalid(format!(
            "pad {p:?} must have an even length of at most {} (2 per dimension of self)",
            2 * nd
        )));
    }
    let mut want = x.shape().to_vec();
    for (k, pair) in p.chunks(2).enumerate() {
        let d = nd - 1 - k;
        let n = x.shape()[d] as i64 + pair[0] + pair[1];
        if n < 0 {
            return Err(NnError::invalid(format!(
                "pad {p:?} makes dimension {d} of self {:?} negative",
                &x.shape()[..nd]
            )));
        }
        want[d] = n as usize;
    }
    a::same_shape(&o, &want)?;
    // the (re, im) dimension is innermost and not padded
    let mut pp = vec![0, 0];
    pp.extend_from_slice(&p);
    let mut l = Launch::new("aclnnConstantPadNd");
    l.input(&x);
    l.output(&o);
    l.finish(move |vs, _| {
        for (part, v) in [(0, vr), (1, vi)] {
            let xs = shape::narrow(&vs[0], nd, part, 1);
            let os = shape::narrow(&vs[1], nd, part, 1);
            shape::constant_pad(&xs, &pp, v, &os)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnConstantPadNdGetWorkspaceSize(
    self_: *const c_void,
    pad: *const c_void,
    value: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConstantPadNdGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (x, xc) = a::tensor_cx(self_, "self")?;
            let p = a::int_array(pad, "pad")?;
            let (o, oc) = a::tensor_cx(out, "out")?;
            if xc || oc {
                return constant_pad_cx(x, xc, p, value, o, oc);
            }
            let s = a::scalar(value, "value")?;
            a::dtype_in(&x, ALL_NUM)?;
            if o.dtype() != x.dtype() {
                return Err(NnError::invalid(format!(
                    "out data type {} must be self's {}",
                    o.dtype(),
                    x.dtype()
                )));
            }
            if p.len() % 2 != 0 || p.len() > 2 * x.ndim() {
                return Err(NnError::invalid(format!(
                    "pad {p:?} must have an even length of at most {} (2 per dimension of self)",
                    2 * x.ndim()
                )));
            }
            let mut want = x.shape().to_vec();
            for (k, pair) in p.chunks(2).enumerate() {
                let d = x.ndim() - 1 - k;
                let n = x.shape()[d] as i64 + pair[0] + pair[1];
                if n < 0 {
                    return Err(NnError::invalid(format!(
                        "pad {p:?} makes dimension {d} of self {:?} negative",
                        x.shape()
                    )));
                }
                want[d] = n as usize;
            }
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnConstantPadNd");
            l.input(&x);
            l.output(&o);
            let v = s.to_f64();
            l.finish(move |vs, _| shape::constant_pad(&vs[0], &p, v, &vs[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnArangeGetWorkspaceSize(
    start: *const c_void,
    end: *const c_void,
    step: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnArangeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(start, "start")?;
            let e = a::scalar(end, "end")?;
            let st = a::scalar(step, "step")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(
                &o,
                &[
                    DType::F32,
                    DType::F16,
                    DType::F64,
                    DType::BF16,
                    DType::I32,
                    DType::I64,
                    DType::I8,
                    DType::I16,
                    DType::U8,
                ],
            )?;
            let (fs, fe, fst) = (s.to_f64(), e.to_f64(), st.to_f64());
            if fst == 0.0 || !fst.is_finite() || !fs.is_finite() || !fe.is_finite() {
                return Err(NnError::invalid(format!(
                    "start {fs}, end {fe} and step {fst} must be finite and step nonzero"
                )));
            }
            if (fe - fs) * fst < 0.0 {
                return Err(NnError::invalid(format!(
                    "step {fst} goes away from end {fe} (start {fs})"
                )));
            }
            let n = ((fe - fs) / fst).ceil().max(0.0) as usize;
            if o.ndim() != 1 || o.numel() != n {
                return Err(NnError::invalid(format!(
                "out must be 1-D with {n} elements for arange({fs}, {fe}, {fst}); it has shape {:?}",
                o.shape()
            )));
            }
            let (is, ist) = (s.to_i64(), st.to_i64());
            let mut l = Launch::new("aclnnArange");
            l.output(&o);
            l.finish(move |v, _| shape::arange(fs, fst, is, ist, &v[0]))
        },
    )
}

/// `aclnnRange(start, end, step, out)` (`torch.range`): `floor((end - start) / step) + 1`
/// values `start + i * step`, end included when it is reached (unlike Arange).
#[no_mangle]
pub unsafe extern "C" fn aclnnRangeGetWorkspaceSize(
    start: *const c_void,
    end: *const c_void,
    step: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRangeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(start, "start")?;
            let e = a::scalar(end, "end")?;
            let st = a::scalar(step, "step")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(
                &o,
                &[
                    DType::F16,
                    DType::F32,
                    DType::F64,
                    DType::BF16,
                    DType::I32,
                    DType::I64,
                ],
            )?;
            let (fs, fe, fst) = (s.to_f64(), e.to_f64(), st.to_f64());
            if fst == 0.0 || !fst.is_finite() || !fs.is_finite() || !fe.is_finite() {
                return Err(NnError::invalid(format!(
                    "start {fs}, end {fe} and step {fst} must be finite and step nonzero"
                )));
            }
            if (fe - fs) * fst < 0.0 {
                return Err(NnError::invalid(format!(
                    "step {fst} goes away from end {fe} (start {fs})"
                )));
            }
            let n = ((fe - fs) / fst).floor() as usize + 1;
            if o.ndim() != 1 || o.numel() != n {
                return Err(NnError::invalid(format!(
                "out must be 1-D with {n} elements for range({fs}, {fe}, {fst}); it has shape {:?}",
                o.shape()
            )));
            }
            let (is, ist) = (s.to_i64(), st.to_i64());
            let mut l = Launch::new("aclnnRange");
            l.output(&o);
            l.finish(move |v, _| shape::arange(fs, fst, is, ist, &v[0]))
        },
    )
}

/// `aclnnInplaceFillTensor(selfRef, value)`: fill with a one-element device tensor.
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceFillTensorGetWorkspaceSize(
    selfRef: *mut c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceFillTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let v = a::tensor(value, "value")?;
            a::dtype_in(&x, ALL_NUM_ALL)?;
            a::dtype_in(&v, ALL_NUM_ALL)?;
            if v.numel() != 1 || v.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "value must be a 0-d (or one-element 1-D) tensor, but its shape is {:?}",
                    v.shape()
                )));
            }
            let mut l = Launch::new("aclnnInplaceFillTensor");
            l.input(&v);
            l.output(&x);
            l.finish(move |vs, _| {
                let s = npu_emu::ops::View {
                    shape: vec![],
                    strides: vec![],
                    ..vs[0].clone()
                };
                iter::copy(&s, &vs[1])
            })
        },
    )
}

crate::phase2!(aclnnInplaceFillTensor, aclnnRange);

crate::phase2!(
    aclnnInplaceZero,
    aclnnInplaceOne,
    aclnnInplaceFillScalar,
    aclnnInplaceCopy,
    aclnnCast,
    aclnnCat,
    aclnnConstantPadNd,
    aclnnArange
);

/// `aclnn_fill_diagonal.h` (`Tensor.fill_diagonal_`): the main diagonal of `selfRef` (2-D, or
/// more dimensions all of one size: elements `[i, i, …, i]`) set to `fillValue`; with `wrap`
/// a 2-D tensor taller than wide continues the diagonal below every `cols + 1` rows, as
/// PyTorch does.
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceFillDiagonalGetWorkspaceSize(
    selfRef: *mut c_void,
    fillValue: *const c_void,
    wrap: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceFillDiagonalGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let v = a::scalar(fillValue, "fillValue")?;
            a::dtype_in(&x, ALL_NUM_ALL)?;
            a::max_dims(&x, 8)?;
            let sh = x.shape().to_vec();
            if sh.len() < 2 {
                return Err(NnError::invalid(format!(
                    "selfRef must have at least 2 dimensions, but its shape is {sh:?}"
                )));
            }
            if sh.len() > 2 && sh.iter().any(|&d| d != sh[0]) {
                return Err(NnError::invalid(format!(
                    "selfRef has more than 2 dimensions of different sizes {sh:?}; they must all be equal"
                )));
            }
            let mut l = Launch::new("aclnnInplaceFillDiagonal");
            l.output(&x);
            l.finish(move |views, _| {
                let t = &views[0];
                let (rows, cols) = (t.shape[0], t.shape[1]);
                let step: isize = t.strides.iter().sum();
                let diag = |ptr: *mut u8, n: usize| npu_emu::ops::View {
                    ptr,
                    dtype: t.dtype,
                    shape: vec![n],
                    strides: vec![step],
                };
                fill_value(&diag(t.ptr, rows.min(cols)), v)?;
                if wrap && t.shape.len() == 2 && rows > cols + 1 {
                    let step_rows = cols + 1;
                    let n = t.numel().div_ceil(step_rows) - rows.min(cols);
                    let off = t.strides[0] * step_rows as isize * t.dtype.size() as isize;
                    fill_value(&diag(t.ptr.wrapping_offset(off), n), v)?;
                }
                Ok(())
            })
        },
    )
}

crate::phase2!(aclnnInplaceFillDiagonal);
