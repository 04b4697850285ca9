//! Matrix products: `aclnn_mm.h`, `aclnn_addmm.h`, `aclnn_matmul.h`, `aclnn_batch_matmul.h`,
//! `aclnn_baddbmm.h`, `aclnn_dot.h`.
//!
//! `cubeMathType` (0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32) is
//! checked and otherwise ignored: products always accumulate in float32 (float64 for
//! double), the most precise of the documented behaviours. The `…WeightNz` forms take the
//! weight in FRACTAL_NZ (as `aclnnTransMatmulWeight` or `aclnnNpuFormatCast` leave it: the
//! kernel converts the storage back to ND in a scratch tensor first) or in ND.

use super::args::{self as a, Weight, FLOATS, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::matmul;
use npu_emu::ops::view::broadcast_shapes;
use npu_emu::ops::view::Scratch;
use npu_emu::ops::View;
use std::ffi::c_void;
use std::sync::Arc;

/// The weight's plan when it is stored in FRACTAL_NZ (its kernel input is then the storage),
/// and whether the argument is the transpose of the ND matrix the plan gives.
pub(crate) type Nz = Option<(Arc<npu_emu::formats::Plan>, bool)>;

fn plain(t: T) -> Weight {
    Weight {
        logical: t,
        nz: None,
    }
}

/// Add the weight to the launch (its storage when NZ) and give what the kernel needs.
pub(crate) fn add_weight(l: &mut Launch, w: &Weight) -> Nz {
    match &w.nz {
        Some(nz) => {
            l.input(&nz.storage);
            Some((nz.plan.clone(), nz.transposed))
        }
        None => {
            l.input(&w.logical);
            None
        }
    }
}

/// The weight as an ND view of `shape` in the kernel: the input itself, or its NZ storage
/// converted into a scratch tensor (kept alive by the returned Scratch; for a transposed
/// weight the scratch holds the ND matrix and the view swaps its last two dimensions).
pub(crate) fn weight_view(
    v: &View,
    nz: &Nz,
    shape: &[usize],
) -> Result<(View, Option<Scratch>), String> {
    match nz {
        None => Ok((v.clone(), None)),
        Some((plan, transposed)) => {
            let n = shape.len();
            let mut nd = shape.to_vec();
            if *transposed {
                nd.swap(n - 2, n - 1);
            }
            let s = Scratch::new(v.dtype, &nd);
            // SAFETY: the input view is the weight's whole storage (plan.src_bytes(), checked
            // against the allocation); the scratch holds the ND tensor.
            let src = unsafe { std::slice::from_raw_parts(v.ptr as *const u8, plan.src_bytes()) };
            // SAFETY: the scratch was made for exactly the ND shape (plan.dst_bytes()).
            let dst = unsafe { std::slice::from_raw_parts_mut(s.view.ptr, plan.dst_bytes()) };
            plan.run(src, dst).map_err(|e| e.message)?;
            let mut view = s.view.clone();
            if *transposed {
                view.shape.swap(n - 2, n - 1);
                view.strides.swap(n - 2, n - 1);
            }
            Ok((view, Some(s)))
        }
    }
}

pub(crate) fn cube(t: i8) -> NnResult<()> {
    if (0..=3).contains(&t) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "cubeMathType {t} is not supported; 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), \
             2 (USE_FP16) or 3 (USE_HF32)"
        )))
    }
}

fn types(ts: &[&T], out: &T) -> NnResult<()> {
    let mut p = ts[0].dtype();
    for t in ts {
        a::dtype_in(t, FLOATS)?;
        p = a::promote(p, ts[0].arg, t.dtype(), t.arg)?;
    }
    a::dtype_in(out, FLOATS)?;
    a::castable(p, out)
}

fn dims_eq(t: &T, n: usize) -> NnResult<()> {
    if t.ndim() == n {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} must have {n} dimensions, but its shape is {:?}",
            t.arg,
            t.shape()
        )))
    }
}

fn inner(x: &T, y: &T) -> NnResult<()> {
    let k1 = x.shape()[x.ndim() - 1];
    let k2 = y.shape()[y.ndim() - 2];
    if k1 != k2 {
        return Err(NnError::invalid(format!(
            "{} {:?} and {} {:?} cannot be multiplied ({k1} != {k2})",
            x.arg,
            x.shape(),
            y.arg,
            y.shape()
        )));
    }
    Ok(())
}

/// out = x @ y for 2-D (Mm) or 3-D (BatchMatMul) operands.
fn mm(api: &'static str, x: T, w: Weight, o: T, rank: usize, ct: i8) -> NnResult<Built> {
    let y = w.logical.clone();
    cube(ct)?;
    dims_eq(&x, rank)?;
    dims_eq(&y, rank)?;
    types(&[&x, &y], &o)?;
    inner(&x, &y)?;
    let mut want = x.shape().to_vec();
    want[rank - 1] = y.shape()[rank - 1];
    if rank == 3 && x.shape()[0] != y.shape()[0] {
        return Err(NnError::invalid(format!(
            "batch sizes of self {:?} and mat2 {:?} differ",
            x.shape(),
            y.shape()
        )));
    }
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&x);
    let nz = add_weight(&mut l, &w);
    let ys = y.shape().to_vec();
    l.output(&o);
    l.finish(move |v, _| {
        let (yv, _keep) = weight_view(&v[1], &nz, &ys)?;
        matmul::matmul(&v[0], &yv, &v[2], 1.0, None)
    })
}

/// out = beta * bias + alpha * (x @ y).
#[allow(clippy::too_many_arguments)]
fn addmm(
    api: &'static str,
    bias: T,
    x: T,
    w: Weight,
    beta: f64,
    alpha: f64,
    o: T,
    rank: usize,
    ct: i8,
) -> NnResult<Built> {
    let y = w.logical.clone();
    cube(ct)?;
    dims_eq(&x, rank)?;
    dims_eq(&y, rank)?;
    types(&[&bias, &x, &y], &o)?;
    inner(&x, &y)?;
    let mut want = x.shape().to_vec();
    want[rank - 1] = y.shape()[rank - 1];
    if broadcast_shapes(bias.shape(), &want).as_deref() != Some(&want[..]) {
        return Err(NnError::invalid(format!(
            "{} shape {:?} cannot be broadcast to the product's shape {want:?}",
            bias.arg,
            bias.shape()
        )));
    }
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&bias);
    l.input(&x);
    let nz = add_weight(&mut l, &w);
    let ys = y.shape().to_vec();
    l.output(&o);
    l.finish(move |v, _| {
        let (yv, _keep) = weight_view(&v[2], &nz, &ys)?;
        matmul::matmul(&v[1], &yv, &v[3], alpha, Some((&v[0], beta)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMmGetWorkspaceSize(
    self_: *const c_void,
    mat2: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnMmGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let y = a::tensor(mat2, "mat2")?;
        let o = a::tensor(out, "out")?;
        mm("aclnnMm", x, plain(y), o, 2, cubeMathType)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchMatMulGetWorkspaceSize(
    self_: *const c_void,
    mat2: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchMatMulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(mat2, "mat2")?;
            let o = a::tensor(out, "out")?;
            mm("aclnnBatchMatMul", x, plain(y), o, 3, cubeMathType)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnBatchMatMulWeightNzGetWorkspaceSize(
    self_: *const c_void,
    mat2: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBatchMatMulWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::weight(mat2, "mat2")?;
            let o = a::tensor(out, "out")?;
            mm("aclnnBatchMatMulWeightNz", x, y, o, 3, cubeMathType)
        },
    )
}

/// torch.matmul's rules: 1-D operands gain and lose a dimension, batch dimensions broadcast.
fn matmul_op(api: &'static str, x: T, w: Weight, o: T, ct: i8) -> NnResult<Built> {
    let y = w.logical.clone();
    cube(ct)?;
    types(&[&x, &y], &o)?;
    if x.ndim() == 0 || y.ndim() == 0 {
        return Err(NnError::invalid(format!(
            "self {:?} and mat2 {:?} must have at least one dimension",
            x.shape(),
            y.shape()
        )));
    }
    let (xs, ys) = (x.shape().to_vec(), y.shape().to_vec());
    let xm: Vec<usize> = if xs.len() == 1 {
        vec![1, xs[0]]
    } else {
        xs.clone()
    };
    let ym: Vec<usize> = if ys.len() == 1 {
        vec![ys[0], 1]
    } else {
        ys.clone()
    };
    let (k1, k2) = (xm[xm.len() - 1], ym[ym.len() - 2]);
    if k1 != k2 {
        return Err(NnError::invalid(format!(
            "self {xs:?} and mat2 {ys:?} cannot be multiplied ({k1} != {k2})"
        )));
    }
    let batch = broadcast_shapes(&xm[..xm.len() - 2], &ym[..ym.len() - 2]).ok_or_else(|| {
        NnError::invalid(format!(
            "the batch dimensions of self {xs:?} and mat2 {ys:?} cannot broadcast"
        ))
    })?;
    let (m, n) = (xm[xm.len() - 2], ym[ym.len() - 1]);
    let mut want = batch.clone();
    if xs.len() > 1 {
        want.push(m);
    }
    if ys.len() > 1 {
        want.push(n);
    }
    a::same_shape(&o, &want)?;
    let (x1, y1) = (xs.len() == 1, ys.len() == 1);
    let mut l = Launch::new(api);
    l.input(&x);
    let nz = add_weight(&mut l, &w);
    l.output(&o);
    l.finish(move |v, _| {
        let (yw, _keep) = weight_view(&v[1], &nz, &ys)?;
        let lift = |v: &View, row: bool| -> View {
            let mut r = v.clone();
            if row {
                r.shape.insert(0, 1);
                r.strides.insert(0, 0);
            } else {
                r.shape.push(1);
                r.strides.push(0);
            }
            r
        };
        let xa = if x1 { lift(&v[0], true) } else { v[0].clone() };
        let ya = if y1 { lift(&yw, false) } else { yw.clone() };
        let mut ov = v[2].clone();
        if x1 {
            let k = ov.ndim() - if y1 { 0 } else { 1 };
            ov.shape.insert(k, 1);
            ov.strides.insert(k, 0);
        }
        if y1 {
            ov.shape.push(1);
            ov.strides.push(0);
        }
        matmul::matmul(&xa, &ya, &ov, 1.0, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMatmulGetWorkspaceSize(
    self_: *const c_void,
    mat2: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMatmulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(mat2, "mat2")?;
            let o = a::tensor(out, "out")?;
            matmul_op("aclnnMatmul", x, plain(y), o, cubeMathType)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMatmulWeightNzGetWorkspaceSize(
    self_: *const c_void,
    mat2: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMatmulWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::weight(mat2, "mat2")?;
            let o = a::tensor(out, "out")?;
            matmul_op("aclnnMatmulWeightNz", x, y, o, cubeMathType)
        },
    )
}

macro_rules! addmm_fns {
    ($get:ident, $api:literal, $ip_get:ident, $ip_api:literal, $rank:expr, $m1:literal, $m2:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            mat1: *const c_void,
            mat2: *const c_void,
            beta: *const c_void,
            alpha: *const c_void,
            out: *mut c_void,
            cubeMathType: i8,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let b = a::tensor(self_, "self")?;
                let x = a::tensor(mat1, $m1)?;
                let y = a::tensor(mat2, $m2)?;
                let be = a::scalar(beta, "beta")?.to_f64();
                let al = a::scalar(alpha, "alpha")?.to_f64();
                let o = a::tensor(out, "out")?;
                addmm($api, b, x, plain(y), be, al, o, $rank, cubeMathType)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $ip_get(
            selfRef: *const c_void,
            mat1: *const c_void,
            mat2: *const c_void,
            beta: *const c_void,
            alpha: *const c_void,
            cubeMathType: i8,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($ip_get), workspaceSize, executor, || {
                let b = a::tensor(selfRef, "selfRef")?;
                let x = a::tensor(mat1, $m1)?;
                let y = a::tensor(mat2, $m2)?;
                let be = a::scalar(beta, "beta")?.to_f64();
                let al = a::scalar(alpha, "alpha")?.to_f64();
                addmm(
                    $ip_api,
                    b.clone(),
                    x,
                    plain(y),
                    be,
                    al,
                    b,
                    $rank,
                    cubeMathType,
                )
            })
        }
    };
}

addmm_fns!(
    aclnnAddmmGetWorkspaceSize,
    "aclnnAddmm",
    aclnnInplaceAddmmGetWorkspaceSize,
    "aclnnInplaceAddmm",
    2,
    "mat1",
    "mat2"
);
addmm_fns!(
    aclnnBaddbmmGetWorkspaceSize,
    "aclnnBaddbmm",
    aclnnInplaceBaddbmmGetWorkspaceSize,
    "aclnnInplaceBaddbmm",
    3,
    "batch1",
    "batch2"
);

#[no_mangle]
pub unsafe extern "C" fn aclnnAddmmWeightNzGetWorkspaceSize(
    self_: *const c_void,
    mat1: *const c_void,
    mat2: *const c_void,
    beta: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddmmWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let b = a::tensor(self_, "self")?;
            let x = a::tensor(mat1, "mat1")?;
            let y = a::weight(mat2, "mat2")?;
            let be = a::scalar(beta, "beta")?.to_f64();
            let al = a::scalar(alpha, "alpha")?.to_f64();
            let o = a::tensor(out, "out")?;
            addmm("aclnnAddmmWeightNz", b, x, y, be, al, o, 2, cubeMathType)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnDotGetWorkspaceSize(
    self_: *const c_void,
    tensor: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnDotGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let y = a::tensor(tensor, "tensor")?;
        let o = a::tensor(out, "out")?;
        dims_eq(&x, 1)?;
        dims_eq(&y, 1)?;
        if x.dtype() != y.dtype() {
            return Err(NnError::invalid(format!(
                "self ({}) and tensor ({}) must have the same data type",
                x.dtype(),
                y.dtype()
            )));
        }
        a::dtype_in(&x, FLOATS)?;
        if x.numel() != y.numel() {
            return Err(NnError::invalid(format!(
                "self has {} elements and tensor {}; they must be equal",
                x.numel(),
                y.numel()
            )));
        }
        if o.numel() != 1 || o.ndim() > 1 {
            return Err(NnError::invalid(format!(
                "out must be 0-d, but its shape is {:?}",
                o.shape()
            )));
        }
        a::castable(x.dtype(), &o)?;
        let mut l = Launch::new("aclnnDot");
        l.input(&x);
        l.input(&y);
        l.output(&o);
        l.finish(|v, _| matmul::dot(&v[0], &v[1], &v[2]))
    })
}

crate::phase2!(
    aclnnMm,
    aclnnBatchMatMul,
    aclnnBatchMatMulWeightNz,
    aclnnMatmul,
    aclnnMatmulWeightNz,
    aclnnAddmm,
    aclnnInplaceAddmm,
    aclnnAddmmWeightNz,
    aclnnBaddbmm,
    aclnnInplaceBaddbmm,
    aclnnDot
);
