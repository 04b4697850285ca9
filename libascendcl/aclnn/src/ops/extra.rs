//! Operators torch_npu calls for common PyTorch functions beyond the core families, over
//! `npu_emu::ops::{extra, reduce, matmul}`:
//! `aclnn_repeat.h` (`Tensor.repeat`, `tile`), `aclnn_repeat_interleave.h`, `aclnn_reduce_nansum.h`, `aclnn_aminmax.h`,
//! `aclnn_aminmax_all.h`, `aclnn_aminmax_dim.h`, `aclnn_logsumexp.h`, `aclnn_norm.h`, `aclnn_cumprod.h`
//! (+ in place), `aclnn_isclose.h`, `aclnn_linspace.h`, `aclnn_one_hot.h`, `aclnn_mv.h`, `aclnn_trace.h`, `aclnn_group_norm.h`,
//! `aclnn_group_norm_backward.h`, `aclnn_reflection_pad{1,2}d.h`, `aclnn_replication_pad{1,2}d.h`
//! (forward only), `aclnn_cummax.h`, `aclnn_cummin.h` (running extreme and where it was last
//! seen, INT32 or INT64 indices), `aclnn_logspace.h` (`base` to the linspace exponents;
//! FLOAT, FLOAT16 or BFLOAT16 `result`), `aclnn_eye.h` (an `[n, m]` identity),
//! `aclnn_histc.h` (`bins` equal bins over `[min, max]`; `min == max` takes the data's
//! range), `aclnn_bincount.h` (`out` must have `max(self) + 1` or `minlength` elements,
//! whichever is larger: the data decide, so a wrong length or a negative value fails the
//! task at the next synchronisation).

use super::args::{self as a, ALL_NUM, FLOATS, T};
use super::launch::{phase1, Built, Launch};
use super::reduce::out_shape_ok;
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{self, Binary};
use npu_emu::ops::reduce::{self, Reduce};
use npu_emu::ops::{extra, iter, matmul, View};
use std::ffi::c_void;

/// Integer and floating types (no bool): what the reference lists for most of these.
const NUMS: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
];

fn same_dtype(t: &T, d: DType, what: &str) -> NnResult<()> {
    if t.dtype() == d {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} has data type {}; it must be {what}'s {d}",
            t.arg,
            t.dtype()
        )))
    }
}

/// A full reduction may be written to a 1-element tensor of rank 1: view it as 0-d.
fn as_kept(out: &View, x: &View, ndims: usize, keep: bool) -> View {
    let mut o = out.clone();
    if ndims == x.ndim() && !keep && o.ndim() == 1 && x.ndim() != 1 {
        o.shape.clear();
        o.strides.clear();
    }
    o
}

// ---- Repeat ----

#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatGetWorkspaceSize(
    self_: *const c_void,
    repeats: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let r = a::int_array(repeats, "repeats")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::max_dims(&x, 8)?;
            same_dtype(&o, x.dtype(), "self")?;
            if r.len() > 8 {
                return Err(NnError::invalid(format!(
                    "repeats has {} entries; at most 8 are supported",
                    r.len()
                )));
            }
            if r.len() < x.ndim() {
                return Err(NnError::invalid(format!(
                    "repeats {r:?} has fewer entries than self has dimensions ({})",
                    x.ndim()
                )));
            }
            if let Some(n) = r.iter().find(|&&n| n < 0) {
                return Err(NnError::invalid(format!(
                    "repeats {r:?} holds {n}; every repeat count must be >= 0"
                )));
            }
            let reps: Vec<usize> = r.iter().map(|&n| n as usize).collect();
            let pad = reps.len() - x.ndim();
            let want: Vec<usize> = reps
                .iter()
                .enumerate()
                .map(|(d, &n)| n * if d < pad { 1 } else { x.shape()[d - pad] })
                .collect();
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnRepeat");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| extra::repeat(&v[0], &reps, &v[1]))
        },
    )
}

// ---- RepeatInterleave ----

/// The repeat counts: a device tensor (read by the task) or one host count.
enum Counts {
    Tensor,
    Int(i64),
}

#[allow(clippy::too_many_arguments)]
fn repeat_interleave(
    api: &'static str,
    x: T,
    reps: Option<T>,
    count: i64,
    dim: Option<i64>,
    output_size: i64,
    o: T,
) -> NnResult<Built> {
    a::dtype_in(&x, ALL_NUM)?;
    a::max_dims(&x, 8)?;
    same_dtype(&o, x.dtype(), "self")?;
    let counts = match &reps {
        Some(r) => {
            a::dtype_in(r, a::INDEX)?;
            if r.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "repeats must be 0-D or 1-D, but its shape is {:?}",
                    r.shape()
                )));
            }
            Counts::Tensor
        }
        None => {
            if count < 0 {
                return Err(NnError::invalid(format!("repeats {count} must be >= 0")));
            }
            Counts::Int(count)
        }
    };
    let d = match dim {
        Some(d) => {
            if x.ndim() == 0 {
                return Err(NnError::invalid(
                    "self is 0-D: it has no dimension to repeat along",
                ));
            }
            Some(a::dim(d, x.ndim(), "dim")?)
        }
        None => None,
    };
    let n = match d {
        Some(d) => x.shape()[d],
        None => x.numel(),
    };
    if let Some(r) = &reps {
        if r.numel() != 1 && r.numel() != n {
            return Err(NnError::invalid(format!(
                "repeats has {} counts; it must have 1 or {n} (the size of the repeated \
                 dimension)",
                r.numel()
            )));
        }
    }
    if let Counts::Int(c) = counts {
        if output_size != c * n as i64 {
            return Err(NnError::invalid(format!(
                "outputSize {output_size} must be repeats * {n} = {}",
                c * n as i64
            )));
        }
    }
    if output_size < 0 {
        return Err(NnError::invalid(format!(
            "outputSize {output_size} must be >= 0"
        )));
    }
    let want = match d {
        Some(d) => {
            let mut s = x.shape().to_vec();
            s[d] = output_size as usize;
            s
        }
        None => vec![output_size as usize],
    };
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&x);
    if let Some(r) = &reps {
        l.input(r);
    }
    let k = l.output(&o);
    l.finish(move |v, _| {
        let counts: Vec<i64> = match counts {
            Counts::Int(c) => vec![c],
            Counts::Tensor => {
                let mut b = vec![0i64; v[1].numel()];
                iter::copy(&v[1], &View::of_slice(&mut b, DType::I64, &v[1].shape))?;
                b
            }
        };
        extra::repeat_interleave(&v[0], &counts, d, &v[k])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatInterleaveGetWorkspaceSize(
    self_: *const c_void,
    repeats: *const c_void,
    outputSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatInterleaveGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let r = a::tensor(repeats, "repeats")?;
            let o = a::tensor(out, "out")?;
            repeat_interleave("aclnnRepeatInterleave", x, Some(r), 0, None, outputSize, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatInterleaveWithDimGetWorkspaceSize(
    self_: *const c_void,
    repeats: *const c_void,
    dim: i64,
    outputSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatInterleaveWithDimGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let r = a::tensor(repeats, "repeats")?;
            let o = a::tensor(out, "out")?;
            repeat_interleave(
                "aclnnRepeatInterleaveWithDim",
                x,
                Some(r),
                0,
                Some(dim),
                outputSize,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatInterleaveIntGetWorkspaceSize(
    self_: *const c_void,
    repeats: i64,
    outputSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatInterleaveIntGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            repeat_interleave(
                "aclnnRepeatInterleaveInt",
                x,
                None,
                repeats,
                None,
                outputSize,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatInterleaveIntWithDimGetWorkspaceSize(
    self_: *const c_void,
    repeats: i64,
    dim: i64,
    outputSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatInterleaveIntWithDimGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            repeat_interleave(
                "aclnnRepeatInterleaveIntWithDim",
                x,
                None,
                repeats,
                Some(dim),
                outputSize,
                o,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatInterleaveTensorGetWorkspaceSize(
    repeats: *const c_void,
    outputSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatInterleaveTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let r = a::tensor(repeats, "repeats")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&r, a::INDEX)?;
            same_dtype(&o, r.dtype(), "repeats")?;
            if r.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "repeats must be 1-D, but its shape is {:?}",
                    r.shape()
                )));
            }
            if outputSize < 0 {
                return Err(NnError::invalid(format!(
                    "outputSize {outputSize} must be >= 0"
                )));
            }
            a::same_shape(&o, &[outputSize as usize])?;
            let mut l = Launch::new("aclnnRepeatInterleaveTensor");
            l.input(&r);
            l.output(&o);
            l.finish(move |v, _| {
                let mut b = vec![0i64; v[0].numel()];
                iter::copy(&v[0], &View::of_slice(&mut b, DType::I64, &v[0].shape))?;
                extra::repeat_index(&b, &v[1])
            })
        },
    )
}

// ---- ReduceNansum ----

#[no_mangle]
pub unsafe extern "C" fn aclnnReduceNansumGetWorkspaceSize(
    self_: *const c_void,
    dim: *const c_void,
    keepDim: bool,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnReduceNansumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let d = a::int_array(dim, "dim")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&o, ALL_NUM)?;
            a::max_dims(&x, 8)?;
            let dt = a::dtype(dtype, "dtype")?;
            if dt != o.dtype() {
                return Err(NnError::invalid(format!(
                    "dtype is {dt} but out has data type {}; they must be the same",
                    o.dtype()
                )));
            }
            let ds = a::dims(&d, x.ndim(), "dim")?;
            out_shape_ok(&o, &x, &ds, keepDim)?;
            let mut l = Launch::new("aclnnReduceNansum");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                let out = as_kept(&v[1], &v[0], ds.len(), keepDim);
                extra::nansum(&v[0], &ds, &out)
            })
        },
    )
}

// ---- Aminmax ----

fn aminmax(api: &'static str, x: T, ds: Vec<usize>, keep: bool, mn: T, mx: T) -> NnResult<Built> {
    // CANN's Aminmax table also has BOOL (min is "all", max is "any")
    if x.dtype() != DType::Bool {
        a::dtype_in(&x, NUMS)?;
    }
    a::max_dims(&x, 8)?;
    same_dtype(&mn, x.dtype(), "self")?;
    same_dtype(&mx, x.dtype(), "self")?;
    out_shape_ok(&mn, &x, &ds, keep)?;
    out_shape_ok(&mx, &x, &ds, keep)?;
    if x.numel() == 0 {
        return Err(NnError::invalid(format!(
            "self {:?} is empty: min and max have no identity",
            x.shape()
        )));
    }
    let int = !x.dtype().is_float();
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&mn);
    l.output(&mx);
    l.finish(move |v, _| {
        let (lo, hi) = (
            as_kept(&v[1], &v[0], ds.len(), keep),
            as_kept(&v[2], &v[0], ds.len(), keep),
        );
        reduce::reduce(Reduce::Min, &v[0], &ds, &lo, int)?;
        reduce::reduce(Reduce::Max, &v[0], &ds, &hi, int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAminmaxGetWorkspaceSize(
    self_: *const c_void,
    dim: *const c_void,
    keepDim: bool,
    minOut: *mut c_void,
    maxOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAminmaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let d = a::int_array(dim, "dim")?;
            let mn = a::tensor(minOut, "minOut")?;
            let mx = a::tensor(maxOut, "maxOut")?;
            let ds = a::dims(&d, x.ndim(), "dim")?;
            aminmax("aclnnAminmax", x, ds, keepDim, mn, mx)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAminmaxAllGetWorkspaceSize(
    self_: *const c_void,
    minOut: *mut c_void,
    maxOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAminmaxAllGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let mn = a::tensor(minOut, "minOut")?;
            let mx = a::tensor(maxOut, "maxOut")?;
            let ds: Vec<usize> = (0..x.ndim()).collect();
            aminmax("aclnnAminmaxAll", x, ds, false, mn, mx)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAminmaxDimGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    keepDim: bool,
    minOut: *mut c_void,
    maxOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAminmaxDimGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let mn = a::tensor(minOut, "minOut")?;
            let mx = a::tensor(maxOut, "maxOut")?;
            let d = a::dim(dim, x.ndim(), "dim")?;
            let ds = if x.ndim() == 0 { vec![] } else { vec![d] };
            aminmax("aclnnAminmaxDim", x, ds, keepDim, mn, mx)
        },
    )
}

// ---- LogSumExp ----

#[no_mangle]
pub unsafe extern "C" fn aclnnLogSumExpGetWorkspaceSize(
    self_: *const c_void,
    dim: *const c_void,
    keepDim: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogSumExpGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let d = a::int_array(dim, "dim")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            a::dtype_in(&o, FLOATS)?;
            a::max_dims(&x, 8)?;
            let ds = a::dims(&d, x.ndim(), "dim")?;
            out_shape_ok(&o, &x, &ds, keepDim)?;
            let mut l = Launch::new("aclnnLogSumExp");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| {
                let out = as_kept(&v[1], &v[0], ds.len(), keepDim);
                reduce::reduce(Reduce::LogSumExp, &v[0], &ds, &out, false)
            })
        },
    )
}

// ---- Norm ----

#[no_mangle]
pub unsafe extern "C" fn aclnnNormGetWorkspaceSize(
    self_: *const c_void,
    pScalar: *const c_void,
    dim: *const c_void,
    keepdim: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnNormGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let p = a::scalar(pScalar, "pScalar")?;
        let d = a::int_array(dim, "dim")?;
        let o = a::tensor(out, "out")?;
        a::dtype_in(&x, FLOATS)?;
        a::dtype_in(&o, FLOATS)?;
        a::max_dims(&x, 8)?;
        let p = p.to_f64();
        if p.is_nan() {
            return Err(NnError::invalid("pScalar is NaN"));
        }
        let ds = a::dims(&d, x.ndim(), "dim")?;
        out_shape_ok(&o, &x, &ds, keepdim)?;
        let mut l = Launch::new("aclnnNorm");
        l.input(&x);
        l.output(&o);
        l.finish(move |v, _| {
            let out = as_kept(&v[1], &v[0], ds.len(), keepdim);
            reduce::reduce(Reduce::Norm(p), &v[0], &ds, &out, false)
        })
    })
}

// ---- Cumprod ----

fn cumprod(api: &'static str, x: T, dim: npu_emu::ops::Scalar, o: T) -> NnResult<Built> {
    a::dtype_in(&x, NUMS)?;
    a::dtype_in(&o, NUMS)?;
    a::max_dims(&x, 8)?;
    if dim.dtype.is_float() || dim.dtype == DType::Bool {
        return Err(NnError::invalid(format!(
            "dim must be an integer scalar, but its data type is {}",
            dim.dtype
        )));
    }
    let d = a::dim(dim.to_i64(), x.ndim(), "dim")?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| {
        if v[0].ndim() == 0 {
            return iter::copy(&v[0], &v[1]);
        }
        extra::cumprod(&v[0], d, &v[1])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCumprodGetWorkspaceSize(
    input: *const c_void,
    dim: *const c_void,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCumprodGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let d = a::scalar(dim, "dim")?;
            let o = a::tensor(out, "out")?;
            let dt = a::dtype(dtype, "dtype")?;
            if dt != o.dtype() {
                return Err(NnError::invalid(format!(
                    "dtype is {dt} but out has data type {}; they must be the same",
                    o.dtype()
                )));
            }
            cumprod("aclnnCumprod", x, d, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceCumprodGetWorkspaceSize(
    input: *mut c_void,
    dim: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceCumprodGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let d = a::scalar(dim, "dim")?;
            cumprod("aclnnInplaceCumprod", x.clone(), d, x)
        },
    )
}

// ---- Cummax / Cummin ----

/// The data types of Cummax's and Cummin's `self` and `valuesOut`.
const CUM_TYPES: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::F64,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::Bool,
    DType::BF16,
];

fn cum_extreme(
    api: &'static str,
    max: bool,
    self_: *const c_void,
    dim: i64,
    values_out: *mut c_void,
    indices_out: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let v = a::tensor(values_out, "valuesOut")?;
    let i = a::tensor(indices_out, "indicesOut")?;
    a::dtype_in(&x, CUM_TYPES)?;
    a::max_dims(&x, 8)?;
    a::dtype_in(&v, CUM_TYPES)?;
    a::castable(x.dtype(), &v)?;
    a::dtype_in(&i, &[DType::I32, DType::I64])?;
    let d = a::dim(dim, x.ndim(), "dim")?;
    a::same_shape(&v, x.shape())?;
    a::same_shape(&i, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&v);
    l.output(&i);
    l.finish(move |v, _| extra::cum_extreme(&v[0], d, max, &v[1], &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCummaxGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    valuesOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCummaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || cum_extreme("aclnnCummax", true, self_, dim, valuesOut, indicesOut),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCumminGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    valuesOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCumminGetWorkspaceSize",
        workspaceSize,
        executor,
        || cum_extreme("aclnnCummin", false, self_, dim, valuesOut, indicesOut),
    )
}

// ---- IsClose ----

#[no_mangle]
pub unsafe extern "C" fn aclnnIsCloseGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    rtol: f64,
    atol: f64,
    equalNan: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIsCloseGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL_NUM)?;
            same_dtype(&y, x.dtype(), "self")?;
            a::dtype_in(&o, &[DType::Bool])?;
            a::max_dims(&x, 8)?;
            a::max_dims(&y, 8)?;
            if rtol.is_nan() || rtol < 0.0 {
                return Err(NnError::invalid(format!("rtol {rtol} must be >= 0")));
            }
            if atol.is_nan() || atol < 0.0 {
                return Err(NnError::invalid(format!("atol {atol} must be >= 0")));
            }
            let shape = a::broadcast(&x, &y)?;
            a::same_shape(&o, &shape)?;
            let ct = if x.dtype().is_float() {
                x.dtype()
            } else {
                DType::F64
            };
            let op = Binary::IsClose(rtol, atol, equalNan);
            let mut l = Launch::new("aclnnIsClose");
            l.input(&x);
            l.input(&y);
            l.output(&o);
            l.finish(move |v, _| math::binary(op, &v[0], &v[1], &v[2], ct))
        },
    )
}

// ---- Linspace ----

#[no_mangle]
pub unsafe extern "C" fn aclnnLinspaceGetWorkspaceSize(
    start: *const c_void,
    end: *const c_void,
    steps: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLinspaceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(start, "start")?;
            let e = a::scalar(end, "end")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&o, NUMS)?;
            if steps < 0 {
                return Err(NnError::invalid(format!("steps {steps} must be >= 0")));
            }
            if o.ndim() != 1 || o.numel() != steps as usize {
                return Err(NnError::invalid(format!(
                    "out must be 1-D with steps ({steps}) elements, but its shape is {:?}",
                    o.shape()
                )));
            }
            let (s, e) = (s.to_f64(), e.to_f64());
            let mut l = Launch::new("aclnnLinspace");
            l.output(&o);
            l.finish(move |v, _| extra::linspace(s, e, &v[0]))
        },
    )
}

// ---- LogSpace ----

#[no_mangle]
pub unsafe extern "C" fn aclnnLogSpaceGetWorkspaceSize(
    start: *const c_void,
    end: *const c_void,
    steps: i64,
    base: f64,
    result: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogSpaceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::scalar(start, "start")?;
            let e = a::scalar(end, "end")?;
            let o = a::tensor(result, "result")?;
            a::dtype_in(&o, &[DType::F32, DType::F16, DType::BF16])?;
            if steps < 0 {
                return Err(NnError::invalid(format!("steps {steps} must be >= 0")));
            }
            if o.ndim() != 1 || o.numel() != steps as usize {
                return Err(NnError::invalid(format!(
                    "result must be 1-D with steps ({steps}) elements, but its shape is {:?}",
                    o.shape()
                )));
            }
            let (s, e) = (s.to_f64(), e.to_f64());
            let mut l = Launch::new("aclnnLogSpace");
            l.output(&o);
            l.finish(move |v, _| extra::logspace(s, e, base, &v[0]))
        },
    )
}

// ---- Eye ----

#[no_mangle]
pub unsafe extern "C" fn aclnnEyeGetWorkspaceSize(
    n: i64,
    m: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnEyeGetWorkspaceSize", workspaceSize, executor, || {
        let o = a::tensor(out, "out")?;
        a::dtype_in(
            &o,
            &[
                DType::F16,
                DType::F32,
                DType::I32,
                DType::I16,
                DType::I8,
                DType::U8,
                DType::I64,
                DType::Bool,
                DType::BF16,
            ],
        )?;
        if n < 0 || m < 0 {
            return Err(NnError::invalid(format!("n {n} and m {m} must be >= 0")));
        }
        a::same_shape(&o, &[n as usize, m as usize])?;
        let mut l = Launch::new("aclnnEye");
        l.output(&o);
        l.finish(move |v, _| extra::eye(&v[0]))
    })
}

// ---- Histc / Bincount ----

const HISTC_TYPES: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::I32,
    DType::I64,
    DType::I16,
    DType::I8,
    DType::U8,
];

#[no_mangle]
pub unsafe extern "C" fn aclnnHistcGetWorkspaceSize(
    self_: *const c_void,
    bins: i64,
    min: *const c_void,
    max: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHistcGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let lo = a::scalar(min, "min")?.to_f64();
            let hi = a::scalar(max, "max")?.to_f64();
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, HISTC_TYPES)?;
            a::dtype_in(&o, HISTC_TYPES)?;
            a::max_dims(&x, 8)?;
            if bins <= 0 {
                return Err(NnError::invalid(format!("bins {bins} must be > 0")));
            }
            if lo.is_nan() || hi.is_nan() || lo > hi {
                return Err(NnError::invalid(format!(
                    "min {lo} must not be larger than max {hi}"
                )));
            }
            a::same_shape(&o, &[bins as usize])?;
            let mut l = Launch::new("aclnnHistc");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| extra::histc(&v[0], lo, hi, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBincountGetWorkspaceSize(
    self_: *const c_void,
    weights: *const c_void,
    minlength: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBincountGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let w = a::opt_tensor(weights, "weights")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(
                &x,
                &[DType::I8, DType::I16, DType::I32, DType::I64, DType::U8],
            )?;
            a::dtype_in(&o, &[DType::I32, DType::I64, DType::F32, DType::F64])?;
            if x.ndim() != 1 || o.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "self and out must be 1-D, but their shapes are {:?} and {:?}",
                    x.shape(),
                    o.shape()
                )));
            }
            if let Some(w) = &w {
                a::dtype_in(
                    w,
                    &[
                        DType::F32,
                        DType::F16,
                        DType::F64,
                        DType::I8,
                        DType::I16,
                        DType::I32,
                        DType::I64,
                        DType::U8,
                        DType::Bool,
                    ],
                )?;
                a::same_shape(w, x.shape())?;
            }
            if minlength < 0 {
                return Err(NnError::invalid(format!(
                    "minlength {minlength} must be >= 0"
                )));
            }
            let m = minlength as usize;
            let hw = w.is_some();
            let mut l = Launch::new("aclnnBincount");
            l.input(&x);
            if let Some(w) = &w {
                l.input(w);
            }
            l.output(&o);
            l.finish(move |v, _| {
                let wv = hw.then_some(&v[1]);
                extra::bincount(&v[0], wv, m, &v[v.len() - 1])
            })
        },
    )
}

// ---- OneHot ----

#[no_mangle]
pub unsafe extern "C" fn aclnnOneHotGetWorkspaceSize(
    self_: *const c_void,
    numClasses: i32,
    onValue: *const c_void,
    offValue: *const c_void,
    axis: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnOneHotGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let on = a::tensor(onValue, "onValue")?;
            let off = a::tensor(offValue, "offValue")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[DType::I32, DType::I64, DType::U8])?;
            a::dtype_in(&o, NUMS)?;
            same_dtype(&on, o.dtype(), "out")?;
            same_dtype(&off, o.dtype(), "out")?;
            a::max_dims(&x, 7)?;
            if numClasses < 0 {
                return Err(NnError::invalid(format!(
                    "numClasses {numClasses} must be >= 0"
                )));
            }
            for t in [&on, &off] {
                if t.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "{} must hold exactly one element, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let nd = x.ndim() as i64;
            if axis < -1 || axis > nd {
                return Err(NnError::invalid(format!(
                    "axis {axis} is out of range [-1, {nd}]"
                )));
            }
            let ax = if axis == -1 {
                nd as usize
            } else {
                axis as usize
            };
            let mut want = x.shape().to_vec();
            want.insert(ax, numClasses as usize);
            a::same_shape(&o, &want)?;
            let depth = numClasses as usize;
            let mut l = Launch::new("aclnnOneHot");
            l.input(&x);
            l.input(&on);
            l.input(&off);
            l.output(&o);
            l.finish(move |v, _| {
                let one = |t: &View| -> Result<f64, String> {
                    let mut b = [0f64];
                    iter::copy(
                        &super::loss::zero_view(t),
                        &View::of_slice(&mut b, DType::F64, &[]),
                    )?;
                    Ok(b[0])
                };
                extra::one_hot(&v[0], depth, one(&v[1])?, one(&v[2])?, ax, &v[3])
            })
        },
    )
}

// ---- Trace ----

#[no_mangle]
pub unsafe extern "C" fn aclnnTraceGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTraceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, NUMS)?;
            a::dtype_in(&o, NUMS)?;
            if x.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "self must be 2-D, but its shape is {:?}",
                    x.shape()
                )));
            }
            let want = if x.dtype().is_float() {
                x.dtype()
            } else {
                DType::I64
            };
            same_dtype(&o, want, "the result type")?;
            if o.numel() != 1 || o.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "out must be 0-D, but its shape is {:?}",
                    o.shape()
                )));
            }
            let mut l = Launch::new("aclnnTrace");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| extra::trace(&v[0], &super::loss::zero_view(&v[1])))
        },
    )
}

// ---- Mv ----

#[no_mangle]
pub unsafe extern "C" fn aclnnMvGetWorkspaceSize(
    self_: *const c_void,
    vec: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnMvGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let w = a::tensor(vec, "vec")?;
        let o = a::tensor(out, "out")?;
        super::matmul::cube(cubeMathType)?;
        a::dtype_in(&x, FLOATS)?;
        a::dtype_in(&w, FLOATS)?;
        a::dtype_in(&o, FLOATS)?;
        let p = a::promote(x.dtype(), x.arg, w.dtype(), w.arg)?;
        a::castable(p, &o)?;
        if x.ndim() != 2 || w.ndim() != 1 {
            return Err(NnError::invalid(format!(
                "self must be 2-D and vec 1-D, but their shapes are {:?} and {:?}",
                x.shape(),
                w.shape()
            )));
        }
        if x.shape()[1] != w.shape()[0] {
            return Err(NnError::invalid(format!(
                "self {:?} and vec {:?} cannot be multiplied ({} != {})",
                x.shape(),
                w.shape(),
                x.shape()[1],
                w.shape()[0]
            )));
        }
        a::same_shape(&o, &[x.shape()[0]])?;
        let mut l = Launch::new("aclnnMv");
        l.input(&x);
        l.input(&w);
        l.output(&o);
        l.finish(move |v, _| {
            // vec as a [K, 1] matrix, out as [M, 1]
            let col = |t: &View| View {
                shape: vec![t.shape[0], 1],
                strides: vec![t.strides[0], 1],
                ..t.clone()
            };
            matmul::matmul(&v[0], &col(&v[1]), &col(&v[2]), 1.0, None)
        })
    })
}

// ---- ReflectionPad / ReplicationPad (1-D and 2-D) ----

/// The shape of `self` (`k + 1` or `k + 2` dimensions) padded on its last `k` by `padding`
/// ((left, right) for the last, then (top, bottom)); reflection needs each pad below the size.
fn mirror_padded(x: &T, padding: &[i64], k: usize, mode: extra::PadMode) -> NnResult<Vec<usize>> {
    if x.ndim() != k + 1 && x.ndim() != k + 2 {
        return Err(NnError::invalid(format!(
            "self must have {} or {} dimensions, but its shape is {:?}",
            k + 1,
            k + 2,
            x.shape()
        )));
    }
    if padding.len() != 2 * k {
        return Err(NnError::invalid(format!(
            "padding {padding:?} must hold {} values",
            2 * k
        )));
    }
    let nd = x.ndim();
    let mut want = x.shape().to_vec();
    for j in 0..k {
        let d = nd - 1 - j;
        let (lo, hi) = (padding[2 * j], padding[2 * j + 1]);
        let n = x.shape()[d] as i64;
        let bad = match mode {
            extra::PadMode::Reflect => lo < 0 || hi < 0 || lo >= n || hi >= n,
            extra::PadMode::Replicate => lo < 0 || hi < 0 || n == 0,
        };
        if bad {
            return Err(NnError::invalid(format!(
                "padding ({lo}, {hi}) of dimension {d} (size {n}) is out of range{}",
                if mode == extra::PadMode::Reflect {
                    ": each must be in [0, size)"
                } else {
                    ": each must be >= 0 and the dimension non-empty"
                }
            )));
        }
        want[d] = (n + lo + hi) as usize;
    }
    Ok(want)
}

fn mirror_pad(
    api: &'static str,
    x: T,
    padding: Vec<i64>,
    k: usize,
    mode: extra::PadMode,
    o: T,
) -> NnResult<Built> {
    a::dtype_in(&x, NUMS)?;
    same_dtype(&o, x.dtype(), "self")?;
    let want = mirror_padded(&x, &padding, k, mode)?;
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| extra::pad(&v[0], &padding, mode, &v[1]))
}

/// The backward of [`mirror_pad`]: `gradInput` (`self`'s shape) gets the sum of the
/// gradients of the padded positions that read each element (floating types).
fn mirror_pad_backward(
    api: &'static str,
    dy: T,
    x: T,
    padding: Vec<i64>,
    k: usize,
    mode: extra::PadMode,
    dx: T,
) -> NnResult<Built> {
    a::dtype_in(&dy, FLOATS)?;
    same_dtype(&x, dy.dtype(), "gradOutput")?;
    same_dtype(&dx, dy.dtype(), "gradOutput")?;
    let want = mirror_padded(&x, &padding, k, mode)?;
    a::same_shape(&dy, &want)?;
    a::same_shape(&dx, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&dy);
    l.output(&dx);
    l.finish(move |v, _| extra::pad_backward(&v[0], &padding, mode, &v[1]))
}

macro_rules! mirror_pad_backward_op {
    ($get:ident, $api:literal, $k:expr, $mode:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            gradOutput: *const c_void,
            self_: *const c_void,
            padding: *const c_void,
            gradInput: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let dy = a::tensor(gradOutput, "gradOutput")?;
                let x = a::tensor(self_, "self")?;
                let p = a::int_array(padding, "padding")?;
                let dx = a::tensor(gradInput, "gradInput")?;
                mirror_pad_backward($api, dy, x, p, $k, $mode, dx)
            })
        }
    };
}

mirror_pad_backward_op!(
    aclnnReflectionPad1dBackwardGetWorkspaceSize,
    "aclnnReflectionPad1dBackward",
    1,
    extra::PadMode::Reflect
);
mirror_pad_backward_op!(
    aclnnReflectionPad2dBackwardGetWorkspaceSize,
    "aclnnReflectionPad2dBackward",
    2,
    extra::PadMode::Reflect
);
mirror_pad_backward_op!(
    aclnnReplicationPad1dBackwardGetWorkspaceSize,
    "aclnnReplicationPad1dBackward",
    1,
    extra::PadMode::Replicate
);
mirror_pad_backward_op!(
    aclnnReplicationPad2dBackwardGetWorkspaceSize,
    "aclnnReplicationPad2dBackward",
    2,
    extra::PadMode::Replicate
);

macro_rules! mirror_pad_op {
    ($get:ident, $api:literal, $k:expr, $mode:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            padding: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let p = a::int_array(padding, "padding")?;
                let o = a::tensor(out, "out")?;
                mirror_pad($api, x, p, $k, $mode, o)
            })
        }
    };
}

mirror_pad_op!(
    aclnnReflectionPad1dGetWorkspaceSize,
    "aclnnReflectionPad1d",
    1,
    extra::PadMode::Reflect
);
mirror_pad_op!(
    aclnnReflectionPad2dGetWorkspaceSize,
    "aclnnReflectionPad2d",
    2,
    extra::PadMode::Reflect
);
mirror_pad_op!(
    aclnnReplicationPad1dGetWorkspaceSize,
    "aclnnReplicationPad1d",
    1,
    extra::PadMode::Replicate
);
mirror_pad_op!(
    aclnnReplicationPad2dGetWorkspaceSize,
    "aclnnReplicationPad2d",
    2,
    extra::PadMode::Replicate
);

crate::phase2!(
    aclnnReflectionPad1d,
    aclnnReflectionPad2d,
    aclnnReplicationPad1d,
    aclnnReplicationPad2d,
    aclnnReflectionPad1dBackward,
    aclnnReflectionPad2dBackward,
    aclnnReplicationPad1dBackward,
    aclnnReplicationPad2dBackward
);

// ---- GroupNorm ----

/// The shape checks of GroupNorm: `x` is `[N, C, *]` with `N`, `C` and `HxW` (the product
/// of the rest) as given, `group` divides `C`.
fn group_checks(x: &T, n: i64, c: i64, hxw: i64, group: i64) -> NnResult<()> {
    if x.ndim() < 2 {
        return Err(NnError::invalid(format!(
            "{} must have at least 2 dimensions [N, C, *], but its shape is {:?}",
            x.arg,
            x.shape()
        )));
    }
    let s = x.shape();
    let rest: usize = s[2..].iter().product();
    if n < 0 || c < 0 || hxw < 0 || s[0] as i64 != n || s[1] as i64 != c || rest as i64 != hxw {
        return Err(NnError::invalid(format!(
            "N {n}, C {c} and HxW {hxw} do not describe {} {:?}",
            x.arg, s
        )));
    }
    if group <= 0 || c % group != 0 {
        return Err(NnError::invalid(format!(
            "group {group} must be positive and divide C ({c})"
        )));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupNormGetWorkspaceSize(
    self_: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    N: i64,
    C: i64,
    HxW: i64,
    group: i64,
    eps: f64,
    out: *mut c_void,
    meanOut: *mut c_void,
    rstdOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let g = a::opt_tensor(gamma, "gamma")?;
            let b = a::opt_tensor(beta, "beta")?;
            let o = a::tensor(out, "out")?;
            let m = a::tensor(meanOut, "meanOut")?;
            let r = a::tensor(rstdOut, "rstdOut")?;
            a::dtype_in(&x, FLOATS)?;
            a::max_dims(&x, 8)?;
            group_checks(&x, N, C, HxW, group)?;
            for t in [&g, &b].into_iter().flatten() {
                same_dtype(t, x.dtype(), "self")?;
                a::same_shape(t, &[C as usize])?;
            }
            same_dtype(&o, x.dtype(), "self")?;
            a::same_shape(&o, x.shape())?;
            for t in [&m, &r] {
                same_dtype(t, x.dtype(), "self")?;
                a::same_shape(t, &[N as usize, group as usize])?;
            }
            if eps.is_nan() || eps < 0.0 {
                return Err(NnError::invalid(format!("eps {eps} must be >= 0")));
            }
            let (hg, hb) = (g.is_some(), b.is_some());
            let groups = group as usize;
            let mut l = Launch::new("aclnnGroupNorm");
            l.input(&x);
            if let Some(g) = &g {
                l.input(g);
            }
            if let Some(b) = &b {
                l.input(b);
            }
            let k = l.output(&o);
            l.output(&m);
            l.output(&r);
            l.finish(move |v, _| {
                let gv = hg.then(|| &v[1]);
                let bv = hb.then(|| &v[1 + hg as usize]);
                extra::group_norm(
                    &v[0],
                    gv,
                    bv,
                    groups,
                    eps,
                    &v[k],
                    Some(&v[k + 1]),
                    Some(&v[k + 2]),
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupNormBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    input: *const c_void,
    mean: *const c_void,
    rstd: *const c_void,
    gamma: *const c_void,
    N: i64,
    C: i64,
    HxW: i64,
    group: i64,
    outputMask: *const c_void,
    gradInput: *mut c_void,
    gradGammaOut: *mut c_void,
    gradBetaOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupNormBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let dy = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(input, "input")?;
            let m = a::tensor(mean, "mean")?;
            let r = a::tensor(rstd, "rstd")?;
            let g = a::opt_tensor(gamma, "gamma")?;
            let mask = a::bool_array(outputMask, "outputMask")?;
            if mask.len() != 3 {
                return Err(NnError::invalid(format!(
                    "outputMask must hold 3 values, but it holds {}",
                    mask.len()
                )));
            }
            a::dtype_in(&x, FLOATS)?;
            group_checks(&x, N, C, HxW, group)?;
            same_dtype(&dy, x.dtype(), "input")?;
            a::same_shape(&dy, x.shape())?;
            for t in [&m, &r] {
                same_dtype(t, x.dtype(), "input")?;
                if t.numel() != (N * group) as usize {
                    return Err(NnError::invalid(format!(
                        "{} must hold N * group = {} values, but its shape is {:?}",
                        t.arg,
                        N * group,
                        t.shape()
                    )));
                }
            }
            if let Some(g) = &g {
                same_dtype(g, x.dtype(), "input")?;
                a::same_shape(g, &[C as usize])?;
            }
            let names = ["gradInput", "gradGammaOut", "gradBetaOut"];
            let handles = [gradInput, gradGammaOut, gradBetaOut];
            let mut outs: Vec<Option<T>> = Vec::new();
            for i in 0..3 {
                if !mask[i] {
                    outs.push(None);
                    continue;
                }
                let t = a::tensor(handles[i], names[i])?;
                same_dtype(&t, x.dtype(), "input")?;
                if i == 0 {
                    a::same_shape(&t, x.shape())?;
                } else {
                    a::same_shape(&t, &[C as usize])?;
                }
                outs.push(Some(t));
            }
            let groups = group as usize;
            let hg = g.is_some();
            let mut l = Launch::new("aclnnGroupNormBackward");
            l.input(&dy);
            l.input(&x);
            l.input(&m);
            l.input(&r);
            if let Some(g) = &g {
                l.input(g);
            }
            let mut slots = [None; 3];
            for (i, t) in outs.iter().enumerate() {
                if let Some(t) = t {
                    slots[i] = Some(l.output(t));
                }
            }
            l.finish(move |v, _| {
                extra::group_norm_backward(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    hg.then(|| &v[4]),
                    groups,
                    slots[0].map(|k| &v[k]),
                    slots[1].map(|k| &v[k]),
                    slots[2].map(|k| &v[k]),
                )
            })
        },
    )
}

crate::phase2!(aclnnGroupNorm, aclnnGroupNormBackward);

/// `aclnn_repeat_interleave_grad.h`: the backward of `repeat_interleave` along `axis`:
/// `out` (any shape of the right element count) gets, per position, the sum of the slices of
/// `yGrad` it was repeated into. `repeats` (INT32/INT64, 0-D or 1-D, read when the task runs)
/// holds one count per position, or one count for all; a count that does not tile `yGrad`'s
/// `axis` fails the task with a message.
#[no_mangle]
pub unsafe extern "C" fn aclnnRepeatInterleaveGradGetWorkspaceSize(
    yGrad: *const c_void,
    repeats: *const c_void,
    axis: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRepeatInterleaveGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(yGrad, "yGrad")?;
            let r = a::tensor(repeats, "repeats")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&g, a::FLOATS3)?;
            a::dtype_in(&r, a::INDEX)?;
            same_dtype(&o, g.dtype(), "yGrad")?;
            a::max_dims(&g, 8)?;
            if r.ndim() > 1 || r.numel() == 0 {
                return Err(NnError::invalid(format!(
                    "repeats must be a non-empty 0-D or 1-D tensor, but its shape is {:?}",
                    r.shape()
                )));
            }
            if g.ndim() == 0 {
                return Err(NnError::invalid("yGrad is 0-D: it has no axis to reduce"));
            }
            let ax = a::dim(axis, g.ndim(), "axis")?;
            let len = g.shape()[ax];
            let others = g.numel() / len.max(1);
            let positions = r.numel();
            if positions > 1 && o.numel() != others * positions {
                return Err(NnError::invalid(format!(
                    "out has {} elements; yGrad {:?} reduced along axis {ax} into the {positions} \
                     positions of repeats has {}",
                    o.numel(),
                    g.shape(),
                    others * positions
                )));
            }
            let mut l = Launch::new("aclnnRepeatInterleaveGrad");
            l.input(&g);
            l.input(&r);
            l.output(&o);
            let out_numel = o.numel();
            l.finish(move |v, _| {
                let mut counts = vec![0i64; v[1].numel()];
                iter::copy(&v[1], &View::of_slice(&mut counts, DType::I64, &v[1].shape))?;
                if let Some(c) = counts.iter().find(|&&c| c < 0) {
                    return Err(format!("repeats holds {c}; counts must be >= 0"));
                }
                let tiles = if counts.len() == 1 {
                    counts[0] > 0
                        && len % counts[0] as usize == 0
                        && out_numel == others * (len / counts[0] as usize)
                } else {
                    counts.iter().sum::<i64>() == len as i64
                };
                if !tiles {
                    return Err(format!(
                        "repeats {counts:?} does not tile yGrad's axis {ax} of size {len} into out's {out_numel} elements"
                    ));
                }
                npu_emu::ops::grads::repeat_interleave_grad(&v[0], &counts, ax, &v[2])
            })
        },
    )
}

crate::phase2!(aclnnRepeatInterleaveGrad);

crate::phase2!(
    aclnnRepeatInterleave,
    aclnnRepeatInterleaveWithDim,
    aclnnRepeatInterleaveInt,
    aclnnRepeatInterleaveIntWithDim,
    aclnnRepeatInterleaveTensor
);

crate::phase2!(
    aclnnRepeat,
    aclnnReduceNansum,
    aclnnAminmax,
    aclnnAminmaxAll,
    aclnnAminmaxDim,
    aclnnLogSumExp,
    aclnnNorm,
    aclnnCumprod,
    aclnnInplaceCumprod,
    aclnnIsClose,
    aclnnLinspace,
    aclnnOneHot,
    aclnnMv,
    aclnnTrace
);

crate::phase2!(
    aclnnCummax,
    aclnnCummin,
    aclnnLogSpace,
    aclnnEye,
    aclnnHistc,
    aclnnBincount
);
