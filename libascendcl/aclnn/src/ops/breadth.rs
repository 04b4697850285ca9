//! Operators of the aclnn reference beyond the core families, each as its page documents it:
//! `aclnn_permute.h`, `aclnn_split_tensor.h`, `aclnn_split_with_size.h`,
//! `aclnn_gather_v2.h`, `aclnn_index_copy.h` (IndexCopy, InplaceIndexCopy),
//! `aclnn_is_inf.h`, `aclnn_isposinf.h`, `aclnn_isneginf.h`, `aclnn_prelu.h`,
//! `aclnn_prelu_backward.h`, `aclnn_threshold.h` (+Inplace), `aclnn_celu.h` (+Inplace),
//! `aclnn_selu.h` (+Inplace), `aclnn_glu.h`, `aclnn_glu_backward.h`, `aclnn_logit.h`,
//! `aclnn_logaddexp.h`, `aclnn_logaddexp2.h`, `aclnn_sinc.h` (+Inplace), `aclnn_heaviside.h`.
//!
//! The engine is `npu_emu::ops::breadth` (and `act` for CELU/SELU, which are ELUs). Bad
//! arguments fail phase 1 with ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID and a
//! message naming the argument; an index out of range fails the task (at the next
//! synchronisation), as on the device.

use super::args::{self as a, FLOATS, FLOATS3, INDEX, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::act::{self, Act};
use npu_emu::ops::breadth::{self as b, Inf};
use npu_emu::ops::dtype::{DType, ALL};
use std::ffi::c_void;

/// `o` must have `x`'s dtype (the data-movement operators do not convert).
fn same_dtype(o: &T, x: &T) -> NnResult<()> {
    if o.dtype() == x.dtype() {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} data type {} must be the same as {} data type {}",
            o.arg,
            o.dtype(),
            x.arg,
            x.dtype()
        )))
    }
}

// ---- Permute ----

#[no_mangle]
pub unsafe extern "C" fn aclnnPermuteGetWorkspaceSize(
    self_: *const c_void,
    dims: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPermuteGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let ds = a::int_array(dims, "dims")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL)?;
            a::max_dims(&x, 8)?;
            same_dtype(&o, &x)?;
            if ds.len() != x.ndim() {
                return Err(NnError::invalid(format!(
                    "dims {ds:?} has {} entries but self has {} dimensions",
                    ds.len(),
                    x.ndim()
                )));
            }
            let mut perm = Vec::with_capacity(ds.len());
            for &d in &ds {
                let p = a::dim(d, x.ndim(), "dims entry")?;
                if perm.contains(&p) {
                    return Err(NnError::invalid(format!(
                        "dims {ds:?} repeats dimension {p}"
                    )));
                }
                perm.push(p);
            }
            let want: Vec<usize> = perm.iter().map(|&p| x.shape()[p]).collect();
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnPermute");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| b::permute(&v[0], &perm, &v[1]))
        },
    )
}

// ---- SplitTensor / SplitWithSize ----

fn split(api: &'static str, x: T, sizes: Vec<usize>, d: usize, outs: Vec<T>) -> NnResult<Built> {
    if outs.len() != sizes.len() {
        return Err(NnError::invalid(format!(
            "out holds {} tensors but splitting dimension {d} of self {:?} gives {}",
            outs.len(),
            x.shape(),
            sizes.len()
        )));
    }
    for (k, (o, &len)) in outs.iter().zip(&sizes).enumerate() {
        if o.dtype() != x.dtype() {
            return Err(NnError::invalid(format!(
                "out[{k}] data type {} must be the same as self data type {}",
                o.dtype(),
                x.dtype()
            )));
        }
        let mut want = x.shape().to_vec();
        want[d] = len;
        if o.shape() != want.as_slice() {
            return Err(NnError::invalid(format!(
                "out[{k}] has shape {:?}, expected {want:?}",
                o.shape()
            )));
        }
    }
    let mut l = Launch::new(api);
    l.input(&x);
    l.outputs(&outs);
    l.finish(move |v, _| b::split(&v[0], d, &v[1..]))
}

fn split_self(x: &T, dim: i64) -> NnResult<usize> {
    a::dtype_in(x, ALL)?;
    if x.ndim() == 0 {
        return Err(NnError::invalid("self must have at least one dimension"));
    }
    a::max_dims(x, 8)?;
    a::dim(dim, x.ndim(), "dim")
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSplitTensorGetWorkspaceSize(
    self_: *const c_void,
    splitSections: u64,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSplitTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let outs = a::tensor_list(out, "out")?;
            let d = split_self(&x, dim)?;
            let n = x.shape()[d];
            if splitSections == 0 && n > 0 {
                return Err(NnError::invalid(format!(
                    "splitSections is 0 but dimension {d} of self has {n} entries"
                )));
            }
            let s = splitSections.max(1) as usize;
            let mut sizes = vec![s; n / s];
            if !n.is_multiple_of(s) || n == 0 {
                sizes.push(n % s);
            }
            split("aclnnSplitTensor", x, sizes, d, outs)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSplitWithSizeGetWorkspaceSize(
    self_: *const c_void,
    splitSize: *const c_void,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSplitWithSizeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let sz = a::int_array(splitSize, "splitSize")?;
            let outs = a::tensor_list(out, "out")?;
            let d = split_self(&x, dim)?;
            if let Some(v) = sz.iter().find(|&&v| v < 0) {
                return Err(NnError::invalid(format!(
                    "splitSize {sz:?} has a negative entry {v}"
                )));
            }
            let total: i64 = sz.iter().sum();
            if total != x.shape()[d] as i64 {
                return Err(NnError::invalid(format!(
                    "splitSize {sz:?} sums to {total}, but dimension {d} of self has {} entries",
                    x.shape()[d]
                )));
            }
            let sizes = sz.iter().map(|&v| v as usize).collect();
            split("aclnnSplitWithSize", x, sizes, d, outs)
        },
    )
}

// ---- GatherV2 ----

#[no_mangle]
pub unsafe extern "C" fn aclnnGatherV2GetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGatherV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, ALL)?;
            a::dtype_in(&i, INDEX)?;
            if x.ndim() == 0 {
                return Err(NnError::invalid("self must have at least one dimension"));
            }
            a::max_dims(&x, 8)?;
            a::max_dims(&i, 8)?;
            same_dtype(&o, &x)?;
            let d = a::dim(dim, x.ndim(), "dim")?;
            let mut want = x.shape()[..d].to_vec();
            want.extend_from_slice(i.shape());
            want.extend_from_slice(&x.shape()[d + 1..]);
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnGatherV2");
            l.input(&x);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| b::gather_v2(&v[0], d, &v[1], &v[2]))
        },
    )
}

// ---- IndexCopy / InplaceIndexCopy ----

fn index_copy(api: &'static str, x: T, dim: i64, i: T, src: T, o: Option<T>) -> NnResult<Built> {
    a::dtype_in(&x, ALL)?;
    a::dtype_in(&i, INDEX)?;
    a::max_dims(&x, 8)?;
    same_dtype(&src, &x)?;
    if i.ndim() > 1 {
        return Err(NnError::invalid(format!(
            "index must be 0-D or 1-D, but its shape is {:?}",
            i.shape()
        )));
    }
    let d = a::dim(dim, x.ndim(), "dim")?;
    let mut want = x.shape().to_vec();
    if x.ndim() == 0 {
        if i.numel() != 1 || src.numel() != 1 {
            return Err(NnError::invalid(format!(
                "a 0-D self takes one index and one source element (index {:?}, source {:?})",
                i.shape(),
                src.shape()
            )));
        }
    } else {
        want[d] = i.numel();
        if src.shape() != want.as_slice() {
            return Err(NnError::invalid(format!(
                "source has shape {:?}, expected {want:?} (self {:?} with dimension {d} of \
                 index's {} entries)",
                src.shape(),
                x.shape(),
                i.numel()
            )));
        }
    }
    let mut l = Launch::new(api);
    match o {
        Some(o) => {
            same_dtype(&o, &x)?;
            a::same_shape(&o, x.shape())?;
            let copy_first = !o.same_as(&x);
            l.input(&x);
            l.input(&i);
            l.input(&src);
            l.output(&o);
            l.finish(move |v, _| {
                if copy_first {
                    npu_emu::ops::iter::copy(&v[0], &v[3])?;
                }
                b::index_copy(&v[3], d, &v[1], &v[2])
            })
        }
        None => {
            l.input(&i);
            l.input(&src);
            l.output(&x);
            l.finish(move |v, _| b::index_copy(&v[2], d, &v[0], &v[1]))
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexCopyGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    source: *const c_void,
    outRef: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexCopyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(source, "source")?;
            let o = a::tensor(outRef, "outRef")?;
            index_copy("aclnnIndexCopy", x, dim, i, s, Some(o))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceIndexCopyGetWorkspaceSize(
    selfRef: *mut c_void,
    dim: i64,
    index: *const c_void,
    source: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceIndexCopyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let i = a::tensor(index, "index")?;
            let s = a::tensor(source, "source")?;
            index_copy("aclnnInplaceIndexCopy", x, dim, i, s, None)
        },
    )
}

// ---- IsInf / IsPosInf / IsNegInf ----

fn is_inf(api: &'static str, x: T, o: T, which: Inf) -> NnResult<Built> {
    use DType::*;
    a::dtype_in(&x, &[F32, F16, F64, BF16, I8, I16, I32, I64, U8, Bool])?;
    a::dtype_in(&o, &[Bool])?;
    a::max_dims(&x, 8)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| b::is_inf(which, &v[0], &v[1]))
}

macro_rules! is_inf_op {
    ($get:ident, $api:literal, $x:literal, $which:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, $x)?;
                let o = a::tensor(out, "out")?;
                is_inf($api, x, o, $which)
            })
        }
    };
}

is_inf_op!(aclnnIsInfGetWorkspaceSize, "aclnnIsInf", "x", Inf::Any);
is_inf_op!(
    aclnnIsPosInfGetWorkspaceSize,
    "aclnnIsPosInf",
    "self",
    Inf::Pos
);
is_inf_op!(
    aclnnIsNegInfGetWorkspaceSize,
    "aclnnIsNegInf",
    "self",
    Inf::Neg
);

// ---- Prelu / PreluBackward ----

/// The channel count PReLU's weight must match: `self.shape[1]`, or 1 below two dimensions.
/// The weight is `[C]` or any shape of C elements along one dimension (torch's `prelu`
/// reshapes it to `[1, C, 1, ...]`).
fn prelu_weight(x: &T, w: &T) -> NnResult<usize> {
    let channels = if x.ndim() >= 2 { x.shape()[1] } else { 1 };
    let spread = w.shape().iter().filter(|&&d| d > 1).count();
    if w.numel() != 1 && (w.numel() != channels || spread > 1) {
        return Err(NnError::invalid(format!(
            "weight {:?} must have one element or one per channel of self {:?} ({channels}), \
             along one dimension",
            w.shape(),
            x.shape()
        )));
    }
    Ok(w.numel())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPreluGetWorkspaceSize(
    self_: *const c_void,
    weight: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPreluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let w = a::tensor(weight, "weight")?;
            let o = a::tensor(out, "out")?;
            for t in [&x, &w, &o] {
                a::dtype_in(t, FLOATS3)?;
            }
            a::max_dims(&x, 8)?;
            let r = a::promote(x.dtype(), "self", w.dtype(), "weight")?;
            a::castable(r, &o)?;
            a::same_shape(&o, x.shape())?;
            prelu_weight(&x, &w)?;
            let mut l = Launch::new("aclnnPrelu");
            l.input(&x);
            l.input(&w);
            l.output(&o);
            l.finish(move |v, _| b::prelu(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPreluBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    weight: *const c_void,
    gradInput: *mut c_void,
    gradWeight: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPreluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let w = a::tensor(weight, "weight")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            let gw = a::tensor(gradWeight, "gradWeight")?;
            for t in [&g, &x, &w, &gi, &gw] {
                a::dtype_in(t, FLOATS3)?;
            }
            a::max_dims(&x, 8)?;
            same_dtype(&g, &x)?;
            same_dtype(&gi, &x)?;
            same_dtype(&gw, &w)?;
            if a::broadcast(&g, &x)? != x.shape() {
                return Err(NnError::invalid(format!(
                    "gradOutput {:?} must broadcast to self's shape {:?}",
                    g.shape(),
                    x.shape()
                )));
            }
            a::same_shape(&gi, x.shape())?;
            let c = prelu_weight(&x, &w)?;
            if gw.numel() != c || gw.shape().iter().filter(|&&d| d > 1).count() > 1 {
                return Err(NnError::invalid(format!(
                    "gradWeight {:?} must have weight's {c} elements",
                    gw.shape()
                )));
            }
            let mut l = Launch::new("aclnnPreluBackward");
            l.input(&g);
            l.input(&x);
            l.input(&w);
            l.output(&gi);
            l.output(&gw);
            l.finish(move |v, _| b::prelu_backward(&v[0], &v[1], &v[2], &v[3], &v[4]))
        },
    )
}

// ---- Threshold / InplaceThreshold ----

fn threshold(api: &'static str, x: T, th: f64, val: f64, o: T) -> NnResult<Built> {
    use DType::*;
    let list = &[F32, F16, F64, BF16, I32, I8, U8, I16, I64];
    a::dtype_in(&x, list)?;
    a::dtype_in(&o, list)?;
    a::max_dims(&x, 8)?;
    a::castable(x.dtype(), &o)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| b::threshold(&v[0], th, val, &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnThresholdGetWorkspaceSize(
    self_: *const c_void,
    threshold_: *const c_void,
    value: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnThresholdGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let th = a::scalar(threshold_, "threshold")?.to_f64();
            let val = a::scalar(value, "value")?.to_f64();
            let o = a::tensor(out, "out")?;
            threshold("aclnnThreshold", x, th, val, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceThresholdGetWorkspaceSize(
    selfRef: *mut c_void,
    threshold_: *const c_void,
    value: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceThresholdGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let th = a::scalar(threshold_, "threshold")?.to_f64();
            let val = a::scalar(value, "value")?.to_f64();
            threshold("aclnnInplaceThreshold", x.clone(), th, val, x)
        },
    )
}

// ---- Celu / Selu (ELUs) ----

fn elu_like(api: &'static str, x: T, o: T, dtypes: &[DType], f: Act) -> NnResult<Built> {
    a::dtype_in(&x, dtypes)?;
    a::dtype_in(&o, FLOATS3)?;
    a::max_dims(&x, 8)?;
    a::castable(x.dtype(), &o)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| act::forward(f, &v[0], &v[1]))
}

fn celu_act(alpha: *const c_void) -> NnResult<Act> {
    let alpha = a::scalar(alpha, "alpha")?.to_f64();
    if alpha == 0.0 {
        return Err(NnError::invalid("alpha must not be 0"));
    }
    Ok(Act::Elu {
        alpha,
        scale: 1.0,
        input_scale: 1.0 / alpha,
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCeluGetWorkspaceSize(
    self_: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnCeluGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let f = celu_act(alpha)?;
        let o = a::tensor(out, "out")?;
        elu_like("aclnnCelu", x, o, FLOATS3, f)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceCeluGetWorkspaceSize(
    selfRef: *mut c_void,
    alpha: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceCeluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let f = celu_act(alpha)?;
            elu_like("aclnnInplaceCelu", x.clone(), x, FLOATS3, f)
        },
    )
}

/// SELU's constants (Klambauer et al., as PyTorch spells them).
const SELU: Act = Act::Elu {
    alpha: 1.673_263_242_354_377_3,
    scale: 1.050_700_987_355_480_5,
    input_scale: 1.0,
};

/// SELU takes integer inputs too (computed in float; the output must be floating).
const SELU_IN: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32, DType::I8];

#[no_mangle]
pub unsafe extern "C" fn aclnnSeluGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnSeluGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        elu_like("aclnnSelu", x, o, SELU_IN, SELU)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceSeluGetWorkspaceSize(
    selfRef: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceSeluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            elu_like("aclnnInplaceSelu", x.clone(), x, FLOATS3, SELU)
        },
    )
}

// ---- Glu / GluBackward ----

/// The split dimension of GLU and the shape of one half.
fn glu_half(x: &T, dim: i64) -> NnResult<(usize, Vec<usize>)> {
    if x.ndim() == 0 {
        return Err(NnError::invalid("self must have at least one dimension"));
    }
    a::max_dims(x, 8)?;
    let d = a::dim(dim, x.ndim(), "dim")?;
    if !x.shape()[d].is_multiple_of(2) {
        return Err(NnError::invalid(format!(
            "dimension {d} of self {:?} has an odd size {}; GLU halves it",
            x.shape(),
            x.shape()[d]
        )));
    }
    let mut half = x.shape().to_vec();
    half[d] /= 2;
    Ok((d, half))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGluGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnGluGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        a::dtype_in(&x, FLOATS)?;
        a::dtype_in(&o, FLOATS)?;
        a::castable(x.dtype(), &o)?;
        let (d, half) = glu_half(&x, dim)?;
        a::same_shape(&o, &half)?;
        let mut l = Launch::new("aclnnGlu");
        l.input(&x);
        l.output(&o);
        l.finish(move |v, _| b::glu(&v[0], d, &v[1]))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGluBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    self_: *const c_void,
    dim: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS)?;
            same_dtype(&g, &x)?;
            same_dtype(&o, &x)?;
            let (d, half) = glu_half(&x, dim)?;
            a::same_shape(&g, &half)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnGluBackward");
            l.input(&g);
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| b::glu_backward(&v[0], &v[1], d, &v[2]))
        },
    )
}

// ---- Logit ----

#[no_mangle]
pub unsafe extern "C" fn aclnnLogitGetWorkspaceSize(
    input: *const c_void,
    eps: f64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogitGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS3)?;
            a::max_dims(&x, 8)?;
            same_dtype(&o, &x)?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnLogit");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| b::logit(&v[0], eps, &v[1]))
        },
    )
}

// ---- LogAddExp / LogAddExp2 ----

fn log_add_exp(api: &'static str, x: T, y: T, o: T, base2: bool) -> NnResult<Built> {
    use DType::*;
    let ins = &[
        F16, F32, F64, U8, I8, U16, I16, U32, I32, U64, I64, Bool, BF16,
    ];
    a::dtype_in(&x, ins)?;
    a::dtype_in(&y, ins)?;
    a::dtype_in(&o, FLOATS)?;
    a::max_dims(&x, 8)?;
    a::max_dims(&y, 8)?;
    let r = a::promote(x.dtype(), "self", y.dtype(), "other")?;
    a::castable(r, &o)?;
    let shape = a::broadcast(&x, &y)?;
    a::same_shape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&y);
    l.output(&o);
    l.finish(move |v, _| b::log_add_exp(&v[0], &v[1], base2, &v[2]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLogAddExpGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogAddExpGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            log_add_exp("aclnnLogAddExp", x, y, o, false)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLogAddExp2GetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogAddExp2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            log_add_exp("aclnnLogAddExp2", x, y, o, true)
        },
    )
}

// ---- Sinc / InplaceSinc ----

/// Sinc of an integer or bool tensor computes in float (the output must be floating).
fn sinc(api: &'static str, x: T, o: T) -> NnResult<Built> {
    a::dtype_in(&x, a::ALL_NUM)?;
    a::dtype_in(&o, FLOATS)?;
    a::max_dims(&x, 8)?;
    let r = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    a::castable(r, &o)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| b::sinc(&v[0], &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSincGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnSincGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        sinc("aclnnSinc", x, o)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceSincGetWorkspaceSize(
    selfRef: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceSincGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            sinc("aclnnInplaceSinc", x.clone(), x)
        },
    )
}

// ---- Heaviside ----

#[no_mangle]
pub unsafe extern "C" fn aclnnHeavisideGetWorkspaceSize(
    input: *const c_void,
    values: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHeavisideGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let h = a::tensor(values, "values")?;
            let o = a::tensor(out, "out")?;
            for t in [&x, &h, &o] {
                a::dtype_in(t, FLOATS3)?;
                a::max_dims(t, 8)?;
            }
            same_dtype(&o, &x)?;
            let shape = a::broadcast(&x, &h)?;
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnHeaviside");
            l.input(&x);
            l.input(&h);
            l.output(&o);
            l.finish(move |v, _| b::heaviside(&v[0], &v[1], &v[2]))
        },
    )
}

crate::phase2!(aclnnSinc, aclnnInplaceSinc, aclnnHeaviside);

crate::phase2!(
    aclnnPermute,
    aclnnSplitTensor,
    aclnnSplitWithSize,
    aclnnGatherV2,
    aclnnIndexCopy,
    aclnnInplaceIndexCopy,
    aclnnIsInf,
    aclnnIsPosInf,
    aclnnIsNegInf,
    aclnnPrelu,
    aclnnPreluBackward,
    aclnnThreshold,
    aclnnInplaceThreshold,
    aclnnCelu,
    aclnnInplaceCelu,
    aclnnSelu,
    aclnnInplaceSelu,
    aclnnGlu,
    aclnnGluBackward,
    aclnnLogit,
    aclnnLogAddExp,
    aclnnLogAddExp2,
);
