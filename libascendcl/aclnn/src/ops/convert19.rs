//! Conversion operators of CANN's ops-math documentation (`conversion/*/docs/aclnn*.md`):
//! `aclnn_slice.h`, `aclnn_slice_v2.h`, `aclnn_flatten.h`, `aclnn_strided_slice_assign_v2.h`,
//! `aclnn_chunk_cat.h` and `aclnn_confusion_transpose.h`. The engine is
//! `npu_emu::ops::convert19`.

use super::args::{self as a, T};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::convert19::{self as engine, Cut};
use npu_emu::ops::dtype::DType::{self, *};
use std::ffi::c_void;

const SLICE_TYPES: &[DType] = &[F32, F16, BF16, I32, I64, I8, U8, Bool];

/// Slice's `start`/`end` made legal for a dimension of `n` (the formula of aclnnSlice).
fn slice_range(start: i64, end: i64, n: usize) -> (usize, usize) {
    let n = n as i64;
    let s = if start < -n {
        0
    } else if start >= n {
        n
    } else {
        (start + n) % n.max(1)
    };
    let e = if end < -n {
        s
    } else if end >= n {
        n
    } else {
        s.max((end + n) % n.max(1))
    };
    (s as usize, e as usize)
}

/// SliceV2's rule: `start` as Slice; `end` is N at or beyond N, else `(end + N) % N`, but
/// not below `start`.
fn slice_v2_range(start: i64, end: i64, n: usize) -> (usize, usize) {
    let (s, _) = slice_range(start, 0, n);
    let ni = n as i64;
    let e = if end >= ni {
        ni
    } else {
        let r = (end + ni) % ni.max(1);
        if r < s as i64 {
            s as i64
        } else {
            r
        }
    };
    (s, e as usize)
}

fn sliced_len(s: usize, e: usize, step: usize) -> usize {
    if e <= s {
        0
    } else {
        (e - s).div_ceil(step)
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnSliceGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSliceGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, SLICE_TYPES)?;
            a::same_dtype(&o, &x)?;
            if x.ndim() == 0 || x.ndim() > 8 {
                return Err(NnError::invalid(format!(
                    "self must have 1 to 8 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            let d = a::dim(dim, x.ndim(), "dim")?;
            if step <= 0 {
                return Err(NnError::invalid(format!(
                    "step must be positive, but it is {step}"
                )));
            }
            let (s, e) = slice_range(start, end, x.shape()[d]);
            let mut shape = x.shape().to_vec();
            shape[d] = sliced_len(s, e, step as usize);
            a::same_shape(&o, &shape)?;
            let cuts: Vec<Cut> = vec![(d, s, step as usize)];
            let mut l = Launch::new("aclnnSlice");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::slice(&v[0], &cuts, &v[1]))
        },
    )
}

/// The cuts of SliceV2 / StridedSliceAssignV2: one per axis (in range, not repeated), every
/// step positive; `range` makes each (start, end) legal.
fn cuts(
    x: &T,
    starts: &[i64],
    ends: &[i64],
    axes: &[i64],
    steps: &[i64],
    names: [&str; 4],
    range: fn(i64, i64, usize) -> (usize, usize),
) -> NnResult<(Vec<Cut>, Vec<usize>)> {
    let k = starts.len();
    if ends.len() != k || axes.len() != k || steps.len() != k {
        return Err(NnError::invalid(format!(
            "{}, {}, {} and {} must have the same length, but they have {}, {}, {} and {}",
            names[0],
            names[1],
            names[2],
            names[3],
            k,
            ends.len(),
            axes.len(),
            steps.len()
        )));
    }
    let mut shape = x.shape().to_vec();
    let mut out: Vec<Cut> = Vec::with_capacity(k);
    for i in 0..k {
        let d = a::dim(axes[i], x.ndim(), names[2])?;
        if out.iter().any(|c| c.0 == d) {
            return Err(NnError::invalid(format!(
                "{} {axes:?} repeats dimension {d}",
                names[2]
            )));
        }
        if steps[i] <= 0 {
            return Err(NnError::invalid(format!(
                "{} must be positive, but {}[{i}] is {}",
                names[3], names[3], steps[i]
            )));
        }
        let (s, e) = range(starts[i], ends[i], x.shape()[d]);
        shape[d] = sliced_len(s, e, steps[i] as usize);
        out.push((d, s, steps[i] as usize));
    }
    Ok((out, shape))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnSliceV2GetWorkspaceSize(
    self_: *const c_void,
    starts: *const c_void,
    ends: *const c_void,
    axes: *const c_void,
    steps: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSliceV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let st = a::int_array(starts, "starts")?;
            let en = a::int_array(ends, "ends")?;
            let ax = a::int_array(axes, "axes")?;
            let sp = a::int_array(steps, "steps")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, SLICE_TYPES)?;
            a::same_dtype(&o, &x)?;
            if x.ndim() == 0 || x.ndim() > 8 {
                return Err(NnError::invalid(format!(
                    "self must have 1 to 8 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            let names = ["starts", "ends", "axes", "steps"];
            let (c, shape) = cuts(&x, &st, &en, &ax, &sp, names, slice_v2_range)?;
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnSliceV2");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::slice(&v[0], &c, &v[1]))
        },
    )
}

/// StridedSliceAssignV2's rule for begin and end: negative values count from the end, then
/// clamp to `[0, N]`.
fn assign_range(begin: i64, end: i64, n: usize) -> (usize, usize) {
    let n = n as i64;
    let fix = |v: i64| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(0, n) as usize
    };
    (fix(begin), fix(end))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnStridedSliceAssignV2GetWorkspaceSize(
    varRef: *mut c_void,
    inputValue: *const c_void,
    begin: *const c_void,
    end: *const c_void,
    strides: *const c_void,
    axesOptional: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnStridedSliceAssignV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let var = a::tensor(varRef, "varRef")?;
            let val = a::tensor(inputValue, "inputValue")?;
            let b = a::int_array(begin, "begin")?;
            let e = a::int_array(end, "end")?;
            let s = a::int_array(strides, "strides")?;
            let ax = match a::opt_int_array(axesOptional, "axesOptional")? {
                Some(v) => v,
                None => (0..b.len() as i64).collect(),
            };
            a::dtype_in(&var, &[F16, F32, BF16, I32, I64, F64, I8])?;
            a::same_dtype(&val, &var)?;
            if var.ndim() == 0 || var.ndim() > 8 {
                return Err(NnError::invalid(format!(
                    "varRef must have 1 to 8 dimensions, but its shape is {:?}",
                    var.shape()
                )));
            }
            let names = ["begin", "end", "axesOptional", "strides"];
            let (c, shape) = cuts(&var, &b, &e, &ax, &s, names, assign_range)?;
            let last = var.ndim() - 1;
            if let Some(cut) = c.iter().find(|c| c.0 == last && c.2 != 1) {
                return Err(NnError::invalid(format!(
                    "the stride of the last dimension of varRef must be 1, but it is {}",
                    cut.2
                )));
            }
            a::same_shape(&val, &shape)?;
            let mut l = Launch::new("aclnnStridedSliceAssignV2");
            l.input(&val);
            l.output(&var);
            l.finish(move |v, _| engine::slice_assign(&v[1], &v[0], &c))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFlattenGetWorkspaceSize(
    self_: *const c_void,
    axis: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFlattenGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[I8, I16, I32, I64, U8, Bool, BF16, F32, F16])?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            let ax = a::dim(axis, x.ndim(), "axis")?;
            let lead: usize = x.shape()[..ax.min(x.ndim())].iter().product();
            let rest: usize = x.shape()[ax.min(x.ndim())..].iter().product();
            a::same_shape(&o, &[lead, rest])?;
            let mut l = Launch::new("aclnnFlatten");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::reshape(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnChunkCatGetWorkspaceSize(
    tensors: *const c_void,
    dim: i64,
    numChunks: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnChunkCatGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(tensors, "tensors")?;
            let o = a::tensor(out, "out")?;
            if xs.is_empty() {
                return Err(NnError::invalid("tensors is an empty list".to_string()));
            }
            let types = &[F32, F16, BF16];
            for (i, x) in xs.iter().enumerate() {
                a::dtype_in(x, types).map_err(|e| e.with_suffix(format!(" (tensors[{i}])")))?;
                if x.dtype() != xs[0].dtype() {
                    return Err(NnError::invalid(format!(
                        "tensors[{i}] data type {} must be tensors[0]'s {}",
                        x.dtype(),
                        xs[0].dtype()
                    )));
                }
                if x.ndim() == 0 || x.ndim() > 8 {
                    return Err(NnError::invalid(format!(
                        "tensors[{i}] must have 1 to 8 dimensions, but its shape is {:?}",
                        x.shape()
                    )));
                }
            }
            a::dtype_in(&o, types)?;
            let (ie, oe) = (xs[0].dtype().size(), o.dtype().size());
            if oe % ie != 0 {
                return Err(NnError::invalid(format!(
                    "out data type {} must be at least as wide as the tensors' {}",
                    o.dtype(),
                    xs[0].dtype()
                )));
            }
            if dim != 0 {
                return Err(NnError::invalid(format!("dim must be 0, but it is {dim}")));
            }
            if numChunks <= 0 {
                return Err(NnError::invalid(format!(
                    "numChunks must be positive, but it is {numChunks}"
                )));
            }
            let nc = numChunks as usize;
            let cols: usize = xs
                .iter()
                .map(|x| x.shape()[0].div_ceil(nc) * x.shape()[1..].iter().product::<usize>())
                .sum();
            a::same_shape(&o, &[nc, cols])?;
            let n = xs.len();
            let mut l = Launch::new("aclnnChunkCat");
            l.inputs(&xs);
            l.output(&o);
            l.finish(move |v, _| engine::chunk_cat(&v[..n], nc, &v[n]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnConfusionTransposeGetWorkspaceSize(
    x: *const c_void,
    perm: *const c_void,
    shape: *const c_void,
    transposeFirst: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnConfusionTransposeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let p = a::int_array(perm, "perm")?;
            let sh = a::int_array(shape, "shape")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&xt, &[I8, I16, I32, I64, U8, F16, F32, BF16])?;
            a::same_dtype(&o, &xt)?;
            if xt.ndim() == 0 || xt.ndim() > 8 {
                return Err(NnError::invalid(format!(
                    "x must have 1 to 8 dimensions, but its shape is {:?}",
                    xt.shape()
                )));
            }
            if let Some(bad) = sh.iter().find(|&&d| d < 0) {
                return Err(NnError::invalid(format!(
                    "shape {sh:?} has a negative size {bad}"
                )));
            }
            let shape: Vec<usize> = sh.iter().map(|&d| d as usize).collect();
            if shape.iter().product::<usize>() != xt.numel() {
                return Err(NnError::invalid(format!(
                    "shape {shape:?} must hold the {} elements of x (shape {:?})",
                    xt.numel(),
                    xt.shape()
                )));
            }
            let plen = if transposeFirst {
                xt.ndim()
            } else {
                shape.len()
            };
            let mut pu: Vec<usize> = Vec::with_capacity(p.len());
            for &v in &p {
                if v < 0 || v as usize >= plen || pu.contains(&(v as usize)) {
                    return Err(NnError::invalid(format!(
                        "perm {p:?} must be a permutation of 0..{plen}"
                    )));
                }
                pu.push(v as usize);
            }
            if pu.len() != plen {
                return Err(NnError::invalid(format!(
                    "perm {p:?} must have {plen} entries (the dimensions of {})",
                    if transposeFirst { "x" } else { "shape" }
                )));
            }
            let expect: Vec<usize> = if transposeFirst {
                shape.clone()
            } else {
                pu.iter().map(|&i| shape[i]).collect()
            };
            a::same_shape(&o, &expect)?;
            let mut l = Launch::new("aclnnConfusionTranspose");
            l.input(&xt);
            l.output(&o);
            l.finish(move |v, _| {
                engine::confusion_transpose(&v[0], &pu, &shape, transposeFirst, &v[1])
            })
        },
    )
}

crate::phase2!(
    aclnnSlice,
    aclnnSliceV2,
    aclnnStridedSliceAssignV2,
    aclnnFlatten,
    aclnnChunkCat,
    aclnnConfusionTranspose
);
