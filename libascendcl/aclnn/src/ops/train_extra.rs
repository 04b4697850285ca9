//! Experimental Atlas A2 operators of ops-nn / ops-math that C programs written from their
//! pages call: `aclnn_silu_mul.h` (SiluMul: `silu(x) * y`), `aclnn_sort_with_index.h`
//! (SortWithIndex: a last-axis sort that carries an INT32 index along),
//! `aclnn_as_strided.h` (AsStrided: `torch.as_strided` over the input's elements) and
//! `aclnn_fused_mul_add_n.h` (FusedMulAddN: `x1 * x3[0] + x2`). The engine is
//! `npu_emu::ops::train_extra`.

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::train_extra as engine;
use std::ffi::c_void;

#[no_mangle]
pub unsafe extern "C" fn aclnnSiluMulGetWorkspaceSize(
    x: *const c_void,
    y: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSiluMulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let y = a::tensor(y, "y")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS3)?;
            a::same_dtype(&y, &x)?;
            a::same_dtype(&o, &x)?;
            if x.ndim() < 2 || x.ndim() > 8 {
                return Err(NnError::invalid(format!(
                    "x must have 2 to 8 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&y, x.shape())?;
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnSiluMul");
            l.input(&x);
            l.input(&y);
            l.output(&o);
            l.finish(|v, _| engine::silu_mul(&v[0], &v[1], &v[2]))
        },
    )
}

/// The value types of SortWithIndex's `x` on Atlas A2.
const SORT_TYPES: &[DType] = &[DType::F16, DType::F32, DType::BF16, DType::I32];

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnSortWithIndexGetWorkspaceSize(
    x: *const c_void,
    index: *const c_void,
    axis: i64,
    descending: bool,
    stable: bool,
    valuesOut: *mut c_void,
    indicesOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSortWithIndexGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let _ = stable; // the A2 kernel is stable either way
            let x = a::tensor(x, "x")?;
            let i = a::tensor(index, "index")?;
            let v = a::tensor(valuesOut, "valuesOut")?;
            let io = a::tensor(indicesOut, "indicesOut")?;
            a::dtype_in(&x, SORT_TYPES)?;
            a::dtype_in(&i, &[DType::I32])?;
            a::same_dtype(&v, &x)?;
            a::dtype_in(&io, &[DType::I32])?;
            a::max_dims(&x, 8)?;
            a::same_shape(&i, x.shape())?;
            a::same_shape(&v, x.shape())?;
            a::same_shape(&io, x.shape())?;
            let rank = x.ndim() as i64;
            if axis != -1 && axis != rank - 1 {
                return Err(NnError::invalid(format!(
                    "axis {axis} is not supported; only the last axis (-1 or {}) is",
                    rank - 1
                )));
            }
            let mut l = Launch::new("aclnnSortWithIndex");
            l.input(&x);
            l.input(&i);
            l.output(&v);
            l.output(&io);
            l.finish(move |v, _| engine::sort_with_index(&v[0], &v[1], descending, &v[2], &v[3]))
        },
    )
}

/// AsStrided's non-negative entries of `arg` as `usize`.
fn non_negative(v: &[i64], arg: &str) -> NnResult<Vec<usize>> {
    v.iter()
        .map(|&s| {
            usize::try_from(s).map_err(|_| {
                NnError::invalid(format!("{arg} {v:?} must hold non-negative integers"))
            })
        })
        .collect()
}

#[no_mangle]
pub unsafe extern "C" fn aclnnAsStridedGetWorkspaceSize(
    x: *const c_void,
    size: *const c_void,
    stride: *const c_void,
    storageOffset: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAsStridedGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let sz = a::int_array(size, "size")?;
            let st = a::int_array(stride, "stride")?;
            let off = a::int_array(storageOffset, "storageOffset")?;
            let o = a::tensor(out, "out")?;
            a::same_dtype(&o, &x)?;
            if sz.is_empty() || sz.len() > 8 || st.len() != sz.len() {
                return Err(NnError::invalid(format!(
                    "size {sz:?} and stride {st:?} must have the same length, 1 to 8"
                )));
            }
            if off.len() != 1 {
                return Err(NnError::invalid(format!(
                    "storageOffset {off:?} must hold exactly one value"
                )));
            }
            let sz = non_negative(&sz, "size")?;
            let st = non_negative(&st, "stride")?;
            let off = non_negative(&off, "storageOffset")?[0];
            a::same_shape(&o, &sz)?;
            if sz.iter().all(|&s| s > 0) {
                let last = off
                    + sz.iter()
                        .zip(&st)
                        .map(|(&n, &s)| (n - 1) * s)
                        .sum::<usize>();
                if last >= x.numel() {
                    return Err(NnError::invalid(format!(
                        "size {sz:?}, stride {st:?} and storageOffset {off} reach element {last}, \
                     but x has {} elements",
                        x.numel()
                    )));
                }
            }
            let mut l = Launch::new("aclnnAsStrided");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::as_strided(&v[0], &st, off, &v[1]))
        },
    )
}

/// The data dtypes of ViewCopy.
const VIEW_COPY_TYPES: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::BF16,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::Bool,
    DType::I64,
];

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnViewCopyGetWorkspaceSize(
    dst: *const c_void,
    dst_size: *const c_void,
    dst_stride: *const c_void,
    dst_storage_offset: *const c_void,
    src: *const c_void,
    src_size: *const c_void,
    src_stride: *const c_void,
    src_storage_offset: *const c_void,
    dst_out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnViewCopyGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let d = a::tensor(dst, "dst")?;
            let meta = [
                a::tensor(dst_size, "dst_size")?,
                a::tensor(dst_stride, "dst_stride")?,
                a::tensor(dst_storage_offset, "dst_storage_offset")?,
            ];
            let s = a::tensor(src, "src")?;
            let meta2 = [
                a::tensor(src_size, "src_size")?,
                a::tensor(src_stride, "src_stride")?,
                a::tensor(src_storage_offset, "src_storage_offset")?,
            ];
            let o = a::tensor(dst_out, "dst_out")?;
            a::dtype_in(&d, VIEW_COPY_TYPES)?;
            a::same_dtype(&s, &d)?;
            a::same_dtype(&o, &d)?;
            for t in [&d, &s, &o] {
                a::max_dims(t, 8)?;
            }
            a::same_shape(&o, d.shape())?;
            let rank = meta[0].numel();
            if rank == 0 || rank > 8 {
                return Err(NnError::invalid(format!(
                    "ViewCopy rank (dst_size's element count) must be in [1, 8], but is {rank}"
                )));
            }
            for (k, m) in meta.iter().chain(&meta2).enumerate() {
                a::dtype_in(m, a::INDEX)?;
                a::same_dtype(m, &meta[0])?;
                let want = if k % 3 == 2 { 1 } else { rank };
                if m.numel() != want {
                    return Err(NnError::invalid(format!(
                        "{} must hold {want} elements, but its shape is {:?}",
                        m.arg,
                        m.shape()
                    )));
                }
            }
            let mut l = Launch::new("aclnnViewCopy");
            l.input(&d);
            for m in meta.iter().chain(&meta2) {
                l.input(m);
            }
            l.input(&s);
            l.output(&o);
            l.finish(|v, _| engine::view_copy(&v[0], &v[1..7], &v[7], &v[8]))
        },
    )
}

/// Each of `ts` is a one-element tensor of `of`'s dtype (at most `max_dims` dimensions).
fn one_element(ts: &[a::T], of: &a::T, max_dims: usize) -> NnResult<()> {
    for t in ts {
        a::same_dtype(t, of)?;
        if t.numel() != 1 || t.ndim() > max_dims {
            return Err(NnError::invalid(format!(
                "{} must be a tensor of one element, but its shape is {:?}",
                t.arg,
                t.shape()
            )));
        }
    }
    Ok(())
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnApplyAdamDGetWorkspaceSize(
    var: *const c_void,
    m: *const c_void,
    v: *const c_void,
    beta1Power: *const c_void,
    beta2Power: *const c_void,
    lr: *const c_void,
    beta1: *const c_void,
    beta2: *const c_void,
    epsilon: *const c_void,
    grad: *const c_void,
    useLocking: bool,
    useNesterov: bool,
    varOut: *mut c_void,
    mOut: *mut c_void,
    vOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyAdamDGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let _ = useLocking; // does not change the arithmetic
            let p = a::tensor(var, "var")?;
            let m = a::tensor(m, "m")?;
            let v = a::tensor(v, "v")?;
            let s = [
                a::tensor(beta1Power, "beta1Power")?,
                a::tensor(beta2Power, "beta2Power")?,
                a::tensor(lr, "lr")?,
                a::tensor(beta1, "beta1")?,
                a::tensor(beta2, "beta2")?,
                a::tensor(epsilon, "epsilon")?,
            ];
            let g = a::tensor(grad, "grad")?;
            let outs = [
                a::tensor(varOut, "varOut")?,
                a::tensor(mOut, "mOut")?,
                a::tensor(vOut, "vOut")?,
            ];
            a::dtype_in(&p, FLOATS3)?;
            a::max_dims(&p, 8)?;
            for t in [&m, &v, &g].into_iter().chain(&outs) {
                a::same_dtype(t, &p)?;
                a::same_shape(t, p.shape())?;
            }
            one_element(&s, &p, 8)?;
            let mut l = Launch::new("aclnnApplyAdamD");
            for t in [&p, &m, &v].into_iter().chain(&s).chain([&g]) {
                l.input(t);
            }
            for t in &outs {
                l.output(t);
            }
            l.finish(move |x, _| {
                engine::apply_adam_d(
                    &x[0],
                    &x[1],
                    &x[2],
                    &x[3..9],
                    &x[9],
                    useNesterov,
                    &x[10],
                    &x[11],
                    &x[12],
                )
            })
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnApplyFtrlGetWorkspaceSize(
    varRef: *mut c_void,
    accumRef: *mut c_void,
    linearRef: *mut c_void,
    grad: *const c_void,
    lr: *const c_void,
    l1: *const c_void,
    l2: *const c_void,
    lrPower: *const c_void,
    useLocking: bool,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyFtrlGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let p = a::tensor(varRef, "varRef")?;
            let acc = a::tensor(accumRef, "accumRef")?;
            let lin = a::tensor(linearRef, "linearRef")?;
            let g = a::tensor(grad, "grad")?;
            let s = [
                a::tensor(lr, "lr")?,
                a::tensor(l1, "l1")?,
                a::tensor(l2, "l2")?,
                a::tensor(lrPower, "lrPower")?,
            ];
            if useLocking {
                return Err(NnError::invalid("useLocking must be false"));
            }
            a::dtype_in(&p, FLOATS3)?;
            a::max_dims(&p, 8)?;
            for t in [&acc, &lin, &g] {
                a::same_dtype(t, &p)?;
                a::same_shape(t, p.shape())?;
            }
            one_element(&s, &p, 1)?;
            let mut l = Launch::new("aclnnApplyFtrl");
            l.input(&g);
            for t in &s {
                l.input(t);
            }
            l.output(&p);
            l.output(&acc);
            l.output(&lin);
            l.finish(|x, _| engine::apply_ftrl(&x[5], &x[6], &x[7], &x[0], &x[1..5]))
        },
    )
}

/// The dtypes of FusedMulAddN on Atlas A2.
const FMA_TYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32, DType::I16];

#[no_mangle]
pub unsafe extern "C" fn aclnnFusedMulAddNGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    x3: *const c_void,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFusedMulAddNGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x1 = a::tensor(x1, "x1")?;
            let x2 = a::tensor(x2, "x2")?;
            let x3 = a::tensor(x3, "x3")?;
            let y = a::tensor(y, "y")?;
            a::dtype_in(&x1, FMA_TYPES)?;
            for t in [&x2, &x3, &y] {
                a::same_dtype(t, &x1)?;
                a::max_dims(t, 8)?;
            }
            a::max_dims(&x1, 8)?;
            a::same_shape(&x2, x1.shape())?;
            a::same_shape(&y, x1.shape())?;
            if x3.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "x3 must hold one element, but its shape is {:?}",
                    x3.shape()
                )));
            }
            let mut l = Launch::new("aclnnFusedMulAddN");
            l.input(&x1);
            l.input(&x2);
            l.input(&x3);
            l.output(&y);
            l.finish(|v, _| engine::fused_mul_add_n(&v[0], &v[1], &v[2], &v[3]))
        },
    )
}

crate::phase2!(
    aclnnSiluMul,
    aclnnSortWithIndex,
    aclnnAsStrided,
    aclnnViewCopy,
    aclnnFusedMulAddN,
    aclnnApplyAdamD,
    aclnnApplyFtrl
);
