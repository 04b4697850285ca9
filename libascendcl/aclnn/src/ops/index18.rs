//! `aclnn_max_pool.h`, `aclnn_max_unpool2d_backward.h`, `aclnn_max_unpool3d_backward.h`,
//! `aclnn_gather_v3.h`, `aclnn_scatter_nd_update.h`, `aclnn_tf_scatter_add.h`,
//! `aclnn_scatter_list.h`: indexing and pooling operators of the operator reference. The
//! engine is `npu_emu::ops::index18`.

use super::args::{self as a};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType::{self, *};
use npu_emu::ops::index18 as engine;
use std::ffi::c_void;

fn bad(m: String) -> NnError {
    NnError::invalid(m)
}

/// An int array of one of `lens` lengths.
fn arr_len(v: &[i64], arg: &str, lens: &[usize]) -> NnResult<()> {
    if lens.contains(&v.len()) {
        Ok(())
    } else {
        Err(bad(format!(
            "{arg} has {} values; {lens:?} are accepted",
            v.len()
        )))
    }
}

// ---------------------------------------------------------------- MaxPool

const POOL_TYPES: &[DType] = &[F16, F32, BF16, I32, I64, U8, I16, I8, U16];

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnMaxPoolGetWorkspaceSize(
    self_: *const c_void,
    kernelShape: *const c_void,
    strides: *const c_void,
    autoPad: i64,
    pads: *const c_void,
    dilations: *const c_void,
    ceilMode: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaxPoolGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            let k = a::int_array(kernelShape, "kernelShape")?;
            let s = a::opt_int_array(strides, "strides")?.unwrap_or_default();
            let p = a::opt_int_array(pads, "pads")?.unwrap_or_default();
            let d = a::opt_int_array(dilations, "dilations")?.unwrap_or_default();
            a::dtype_in(&x, POOL_TYPES)?;
            a::same_dtype(&o, &x)?;
            if !(3..=4).contains(&x.ndim()) {
                return Err(bad(format!(
                    "self must be 3-D or 4-D, but its shape is {:?}",
                    x.shape()
                )));
            }
            arr_len(&k, "kernelShape", &[1, 2])?;
            arr_len(&s, "strides", &[0, 1, 2])?;
            arr_len(&p, "pads", &[0, 1, 2, 4])?;
            arr_len(&d, "dilations", &[0, 1, 2, 4])?;
            if k.iter().any(|&v| v <= 0) {
                return Err(bad(format!("kernelShape {k:?} must be positive")));
            }
            if s.iter().any(|&v| v <= 0) {
                return Err(bad(format!("strides {s:?} must be positive")));
            }
            if p.iter().any(|&v| v < 0) {
                return Err(bad(format!("pads {p:?} must not be negative")));
            }
            if d.iter().any(|&v| v != 1) {
                return Err(bad(format!("dilations {d:?} must all be 1")));
            }
            if autoPad != 0 {
                return Err(bad(format!(
                    "autoPad must be 0 (NOTSET), but it is {autoPad}"
                )));
            }
            let two = |v: &[i64], dflt: i64| -> [usize; 2] {
                match v.len() {
                    0 => [dflt as usize; 2],
                    1 => [v[0] as usize; 2],
                    _ => [v[0] as usize, v[1] as usize],
                }
            };
            let kernel = two(&k, 1);
            let stride = two(&s, 1);
            let pads4 = match p.len() {
                0 => [0; 4],
                1 => [p[0] as usize; 4],
                2 => [p[0] as usize, p[1] as usize, p[0] as usize, p[1] as usize],
                _ => [p[0] as usize, p[1] as usize, p[2] as usize, p[3] as usize],
            };
            for ax in 0..2 {
                if pads4[ax] + pads4[ax + 2] > kernel[ax] {
                    return Err(bad(format!(
                        "the pads {:?} of spatial axis {ax} add up to more than its kernel size {}",
                        [pads4[ax], pads4[ax + 2]],
                        kernel[ax]
                    )));
                }
            }
            let geo = engine::MaxPool {
                kernel,
                stride,
                pads: pads4,
                ceil: ceilMode != 0,
            };
            let nd = x.ndim();
            let mut shape = x.shape().to_vec();
            for ax in 0..2 {
                let i = x.shape()[nd - 2 + ax];
                shape[nd - 2 + ax] = geo.out_len(ax, i).ok_or_else(|| {
                    bad(format!(
                        "the window {kernel:?} with pads {pads4:?} does not fit self's shape {:?}",
                        x.shape()
                    ))
                })?;
            }
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnMaxPool");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::max_pool(&v[0], &geo, &v[1]))
        },
    )
}

// ---------------------------------------------------------------- MaxUnpool backward

/// Checks shared by both unpool gradients: `g` (gradOutput), `x` (self), `idx`, `o`;
/// `spatial` trailing dimensions of size `size` in `g`; `lead` dimensions shared.
#[allow(clippy::too_many_arguments)]
fn unpool_checks(
    g: &a::T,
    x: &a::T,
    idx: &a::T,
    o: &a::T,
    size: &[i64],
    spatial: usize,
    ranks: [usize; 2],
    types: &[DType],
) -> NnResult<()> {
    a::dtype_in(g, types)?;
    a::dtype_in(x, types)?;
    a::same_dtype(x, g)?;
    a::dtype_in(o, types)?;
    a::castable(g.dtype(), o)?;
    if !ranks.contains(&x.ndim()) {
        return Err(bad(format!(
            "self must have {} or {} dimensions, but its shape is {:?}",
            ranks[0],
            ranks[1],
            x.shape()
        )));
    }
    if g.ndim() != x.ndim() {
        return Err(bad(format!(
            "gradOutput has shape {:?}, self {:?}: they must have the same number of dimensions",
            g.shape(),
            x.shape()
        )));
    }
    a::same_shape(idx, x.shape())?;
    a::same_shape(o, x.shape())?;
    if size.len() != spatial {
        return Err(bad(format!(
            "outputSize must have {spatial} values, but it has {}",
            size.len()
        )));
    }
    let nd = x.ndim();
    if g.shape()[..nd - spatial] != x.shape()[..nd - spatial] {
        return Err(bad(format!(
            "gradOutput {:?} and self {:?} must agree outside the last {spatial} dimensions",
            g.shape(),
            x.shape()
        )));
    }
    let gs: Vec<i64> = g.shape()[nd - spatial..]
        .iter()
        .map(|&v| v as i64)
        .collect();
    if gs != size {
        return Err(bad(format!(
            "the last {spatial} dimensions of gradOutput {:?} must equal outputSize {size:?}",
            g.shape()
        )));
    }
    if g.numel() == 0 && x.numel() != 0 {
        return Err(bad(
            "gradOutput is empty but self and indices are not".to_string()
        ));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMaxUnpool2dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    indices: *const c_void,
    outputSize: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaxUnpool2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(indices, "indices")?;
            let size = a::int_array(outputSize, "outputSize")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&i, a::INDEX)?;
            let types = [F32, F16, I32, I64, I16, I8, U8, Bool];
            unpool_checks(&g, &x, &i, &o, &size, 2, [3, 4], &types)?;
            let mut l = Launch::new("aclnnMaxUnpool2dBackward");
            l.input(&g);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| engine::max_unpool_backward(&v[0], &v[1], 2, &v[2]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnMaxUnpool3dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    indices: *const c_void,
    outputSize: *const c_void,
    stride: *const c_void,
    padding: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaxUnpool3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(indices, "indices")?;
            let size = a::int_array(outputSize, "outputSize")?;
            let st = a::int_array(stride, "stride")?;
            let pd = a::int_array(padding, "padding")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&i, &[I64])?;
            for (v, n) in [(&size, "outputSize"), (&st, "stride"), (&pd, "padding")] {
                if v.len() != 3 {
                    return Err(bad(format!(
                        "{n} must have 3 values, but it has {}",
                        v.len()
                    )));
                }
            }
            if size.iter().chain(&st).any(|&v| v <= 0) {
                return Err(bad(format!(
                    "outputSize {size:?} and stride {st:?} must be positive"
                )));
            }
            let types = [F32, F16, I16, I32, I64, I8, U8, F64];
            unpool_checks(&g, &x, &i, &o, &size, 3, [4, 5], &types)?;
            a::same_dtype(&o, &g)?;
            let nd = x.ndim();
            if x.shape()[1..].contains(&0) {
                return Err(bad(format!(
                    "self's dimensions other than N must be positive, but its shape is {:?}",
                    x.shape()
                )));
            }
            let vol: i64 = size.iter().product();
            let xin: usize = x.shape()[nd - 3..].iter().product();
            if (vol as usize) < xin {
                return Err(bad(format!(
                    "outputSize {size:?} holds fewer elements than self's D, H, W {:?}",
                    &x.shape()[nd - 3..]
                )));
            }
            if !o.layout.strides.is_empty()
                && o.layout.strides != npu_emu::ops::view::contiguous_strides(o.shape())
                && o.numel() > 1
            {
                return Err(bad("out must be contiguous".to_string()));
            }
            let mut l = Launch::new("aclnnMaxUnpool3dBackward");
            l.input(&g);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| engine::max_unpool_backward(&v[0], &v[1], 3, &v[2]))
        },
    )
}

// ---------------------------------------------------------------- GatherV3

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnGatherV3GetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    batchDims: i64,
    mode: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGatherV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[F32, F16, I64, I32, I16, I8, U8, Bool, F64, BF16])?;
            a::dtype_in(&i, a::INDEX)?;
            a::same_dtype(&o, &x)?;
            a::max_dims(&x, 8)?;
            a::max_dims(&i, 8)?;
            if x.ndim() == 0 {
                return Err(bad("self must have 1 to 8 dimensions, but it is 0-d".into()));
            }
            let d = a::dim(dim, x.ndim(), "dim")?;
            if batchDims < 0 || batchDims as usize > d || batchDims as usize > i.ndim() {
                return Err(bad(format!(
                "batchDims {batchDims} must lie in [0, dim {d}] and not exceed index's {} dimensions",
                i.ndim()
            )));
            }
            if !(0..=2).contains(&mode) {
                return Err(bad(format!("mode must be 0, 1 or 2, but it is {mode}")));
            }
            let b = batchDims as usize;
            if x.shape()[..b] != i.shape()[..b] {
                return Err(bad(format!(
                    "the first {b} (batchDims) dimensions of index {:?} must equal self's {:?}",
                    i.shape(),
                    x.shape()
                )));
            }
            let mut shape = x.shape()[..d].to_vec();
            shape.extend_from_slice(&i.shape()[b..]);
            shape.extend_from_slice(&x.shape()[d + 1..]);
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnGatherV3");
            l.input(&x);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| engine::gather_v3(&v[0], d, &v[1], b, &v[2]))
        },
    )
}

// ---------------------------------------------------------------- scatter family

/// The `updates` shape `scatter_nd` needs: `indices.shape[:-1] + var.shape[K:]`.
fn nd_updates_shape(var: &a::T, idx: &a::T) -> NnResult<Vec<usize>> {
    if idx.ndim() == 0 {
        return Err(bad("indices must have at least 1 dimension".into()));
    }
    let k = idx.shape()[idx.ndim() - 1];
    if k > var.ndim() {
        return Err(bad(format!(
            "the last dimension of indices {:?} exceeds varRef's {} dimensions",
            idx.shape(),
            var.ndim()
        )));
    }
    let mut want = idx.shape()[..idx.ndim() - 1].to_vec();
    want.extend_from_slice(&var.shape()[k..]);
    Ok(want)
}

#[no_mangle]
pub unsafe extern "C" fn aclnnScatterNdUpdateGetWorkspaceSize(
    varRef: *mut c_void,
    indices: *const c_void,
    updates: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterNdUpdateGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let var = a::tensor(varRef, "varRef")?;
            let i = a::tensor(indices, "indices")?;
            let u = a::tensor(updates, "updates")?;
            a::dtype_in(&var, &[F16, BF16, F32, I64, Bool, I8])?;
            a::dtype_in(&i, a::INDEX)?;
            a::same_dtype(&u, &var)?;
            if !(1..=8).contains(&var.ndim()) {
                return Err(bad(format!(
                    "varRef must have 1 to 8 dimensions, but its shape is {:?}",
                    var.shape()
                )));
            }
            let want = nd_updates_shape(&var, &i)?;
            a::same_shape(&u, &want)?;
            let mut l = Launch::new("aclnnScatterNdUpdate");
            l.input(&i);
            l.input(&u);
            l.output(&var);
            l.finish(move |v, _| engine::scatter_nd_update(&v[2], &v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTfScatterAddGetWorkspaceSize(
    varRef: *mut c_void,
    indices: *const c_void,
    updates: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTfScatterAddGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let var = a::tensor(varRef, "varRef")?;
            let i = a::tensor(indices, "indices")?;
            let u = a::tensor(updates, "updates")?;
            a::dtype_in(&var, &[F32, F16, BF16, I32, I8, U8])?;
            a::dtype_in(&i, a::INDEX)?;
            a::same_dtype(&u, &var)?;
            for t in [&var, &i, &u] {
                if !(1..=8).contains(&t.ndim()) {
                    return Err(bad(format!(
                        "{} must have 1 to 8 dimensions, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            if var.numel() == 0 && i.numel() != 0 {
                return Err(bad("varRef is empty but indices is not".into()));
            }
            if !engine::is_row_scatter(var.shape(), i.shape(), u.shape()) {
                let want = nd_updates_shape(&var, &i)?;
                if u.shape() != want {
                    let mut rows = i.shape().to_vec();
                    rows.extend_from_slice(&var.shape()[1..]);
                    return Err(bad(format!(
                        "updates has shape {:?}; expected {rows:?} (indices.shape + \
                         varRef.shape[1:]) or {want:?} (indices.shape[:-1] + \
                         varRef.shape[indices.shape[-1]:])",
                        u.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnTfScatterAdd");
            l.input(&i);
            l.input(&u);
            l.output(&var);
            l.finish(move |v, _| engine::tf_scatter_add(&v[2], &v[0], &v[1]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnScatterListGetWorkspaceSize(
    varRef: *mut c_void,
    indice: *const c_void,
    updates: *const c_void,
    maskOptional: *const c_void,
    reduceOptional: *const std::ffi::c_char,
    axis: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnScatterListGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let vars = a::tensor_list(varRef, "varRef")?;
            let i = a::tensor(indice, "indice")?;
            let u = a::tensor(updates, "updates")?;
            let m = a::opt_tensor(maskOptional, "maskOptional")?;
            if !reduceOptional.is_null() {
                // SAFETY: a non-NULL C string from the caller.
                let s = unsafe { std::ffi::CStr::from_ptr(reduceOptional) }.to_string_lossy();
                if s != "update" {
                    return Err(bad(format!(
                        "reduceOptional must be \"update\", but it is \"{s}\""
                    )));
                }
            }
            let types = [I8, I16, I32, U8, U16, U32, F16, BF16, F32];
            a::dtype_in(&u, &types)?;
            a::dtype_in(&i, a::INDEX)?;
            let nb = vars.len();
            if nb == 0 {
                return Err(bad("varRef holds no tensors".into()));
            }
            for t in &vars {
                a::dtype_in(t, &types)?;
                a::same_dtype(t, &u)?;
                if t.shape() != vars[0].shape() || t.ndim() == 0 {
                    return Err(bad(format!(
                        "the varRef tensors must share one shape of at least 1 dimension; \
                         they have {:?} and {:?}",
                        vars[0].shape(),
                        t.shape()
                    )));
                }
            }
            let vr = vars[0].ndim();
            if u.ndim() != vr + 1 || u.shape()[0] != nb {
                return Err(bad(format!(
                    "updates has shape {:?}; it must be [{nb}] + the varRef shape {:?}",
                    u.shape(),
                    vars[0].shape()
                )));
            }
            let ax = if axis < 0 {
                axis + u.ndim() as i64
            } else {
                axis
            };
            if ax <= 0 || ax >= u.ndim() as i64 {
                return Err(bad(format!(
                    "axis {axis} must name a dimension of updates {:?} other than the first",
                    u.shape()
                )));
            }
            let va = ax as usize - 1;
            for (d, (&us, &vs)) in u.shape()[1..].iter().zip(vars[0].shape()).enumerate() {
                if (d == va && us > vs) || (d != va && us != vs) {
                    return Err(bad(format!(
                        "updates {:?} must equal [{nb}] + varRef {:?} except along axis {axis}, \
                         where it may be smaller",
                        u.shape(),
                        vars[0].shape()
                    )));
                }
            }
            let pairs_ok = i.ndim() == 1 || (i.ndim() == 2 && i.shape()[1] == 2);
            if !pairs_ok || i.shape()[0] != nb {
                return Err(bad(format!(
                    "indice has shape {:?}; it must be [{nb}] or [{nb}, 2]",
                    i.shape()
                )));
            }
            if let Some(m) = &m {
                a::dtype_in(m, &[U8])?;
                if m.shape() != [nb] {
                    return Err(bad(format!(
                        "maskOptional has shape {:?}; it must be [{nb}]",
                        m.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnScatterList");
            l.input(&i);
            l.input(&u);
            if let Some(m) = &m {
                l.input(m);
            }
            let first = l.outputs(&vars);
            let has_mask = m.is_some();
            l.finish(move |v, _| {
                let mask = if has_mask { Some(&v[2]) } else { None };
                engine::scatter_list(&v[first..first + nb], &v[0], &v[1], mask, va)
            })
        },
    )
}

crate::phase2!(
    aclnnMaxPool,
    aclnnMaxUnpool2dBackward,
    aclnnMaxUnpool3dBackward,
    aclnnGatherV3,
    aclnnScatterNdUpdate,
    aclnnTfScatterAdd,
    aclnnScatterList
);
