//! Linear algebra of the aclnn reference beyond the plain products: `aclnn_addmv.h`,
//! `aclnn_ger.h`, `aclnn_addbmm.h` (Addbmm, InplaceAddbmm), `aclnn_inverse.h`. The engine is
//! `npu_emu::ops::linalg`; `cubeMathType` is checked as for the other products
//! ([`super::matmul`]) and otherwise ignored. A singular matrix fails the Inverse task (at
//! the next synchronisation) with a message naming it.
//!
//! `aclnn_linalg_cross.h` (`torch.linalg.cross`, op type Cross): self, other and out of one
//! data type, self and other broadcast to out's shape, whose `dim` has size 3 (complex types
//! are not supported: the engine has none). `aclnn_einsum.h`: the reference lists two
//! equations ("abcd,abced->abce", "a,b->ab"); npu-emu takes any equation of letters, commas
//! and one "->" (or none: the labels that appear once, sorted), over any number of operands
//! of one data type, without ellipsis; torch_npu does not call it (torch.einsum becomes
//! products).
//!
//! `aclnn_renorm.h` (Renorm, InplaceRenorm), `aclnn_pdist.h`, `aclnn_slogdet.h` and
//! `aclnn_linalg_qr.h` (real types only) compute in float64 through
//! `linalg::{renorm, pdist, slogdet, qr}`.

use super::args::{self as a, FLOATS, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::linalg;
use npu_emu::ops::view::broadcast_shapes;
use std::ffi::c_void;

/// The dtypes the products here take (floats, integers and bool; products of integers are
/// computed in float32).
const PROD: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::F64,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::I16,
    DType::I8,
    DType::U8,
    DType::Bool,
];

/// The promoted dtype of the tensors, which must be storable in `out`.
fn promoted(ts: &[&T], o: &T) -> NnResult<DType> {
    let mut r = ts[0].dtype();
    for t in &ts[1..] {
        r = a::promote(r, "the inputs", t.dtype(), t.arg)?;
    }
    a::castable(r, o)?;
    Ok(r)
}

fn scalar_f64(h: *const c_void, arg: &'static str) -> NnResult<f64> {
    Ok(a::scalar(h, arg)?.to_f64())
}

// ---- Addmv ----

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnAddmvGetWorkspaceSize(
    self_: *const c_void,
    mat: *const c_void,
    vec: *const c_void,
    alpha: *const c_void,
    beta: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddmvGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(self_, "self")?;
            let m = a::tensor(mat, "mat")?;
            let v = a::tensor(vec, "vec")?;
            let al = scalar_f64(alpha, "alpha")?;
            let be = scalar_f64(beta, "beta")?;
            let o = a::tensor(out, "out")?;
            super::matmul::cube(cubeMathType)?;
            for t in [&s, &m, &v, &o] {
                a::dtype_in(t, PROD)?;
            }
            promoted(&[&s, &m, &v], &o)?;
            if m.ndim() != 2 || v.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "mat must be 2-D and vec 1-D, but their shapes are {:?} and {:?}",
                    m.shape(),
                    v.shape()
                )));
            }
            if m.shape()[1] != v.shape()[0] {
                return Err(NnError::invalid(format!(
                    "mat {:?} and vec {:?} cannot be multiplied ({} != {})",
                    m.shape(),
                    v.shape(),
                    m.shape()[1],
                    v.shape()[0]
                )));
            }
            let rows = m.shape()[0];
            if s.ndim() > 1 || broadcast_shapes(s.shape(), &[rows]).as_deref() != Some(&[rows][..])
            {
                return Err(NnError::invalid(format!(
                    "self {:?} must broadcast to the product's shape [{rows}]",
                    s.shape()
                )));
            }
            a::same_shape(&o, &[rows])?;
            let mut l = Launch::new("aclnnAddmv");
            l.input(&s);
            l.input(&m);
            l.input(&v);
            l.output(&o);
            l.finish(move |x, _| linalg::addmv(&x[0], &x[1], &x[2], be, al, &x[3]))
        },
    )
}

// ---- Ger ----

#[no_mangle]
pub unsafe extern "C" fn aclnnGerGetWorkspaceSize(
    self_: *const c_void,
    vec2: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnGerGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let y = a::tensor(vec2, "vec2")?;
        let o = a::tensor(out, "out")?;
        for t in [&x, &y, &o] {
            a::dtype_in(t, PROD)?;
        }
        let ct = promoted(&[&x, &y], &o)?;
        if x.ndim() != 1 || y.ndim() != 1 {
            return Err(NnError::invalid(format!(
                "self and vec2 must be 1-D, but their shapes are {:?} and {:?}",
                x.shape(),
                y.shape()
            )));
        }
        a::same_shape(&o, &[x.shape()[0], y.shape()[0]])?;
        let mut l = Launch::new("aclnnGer");
        l.input(&x);
        l.input(&y);
        l.output(&o);
        l.finish(move |v, _| linalg::ger(&v[0], &v[1], &v[2], ct))
    })
}

// ---- Addbmm / InplaceAddbmm ----

#[allow(clippy::too_many_arguments)]
fn addbmm(
    api: &'static str,
    s: T,
    b1: T,
    b2: T,
    beta: f64,
    alpha: f64,
    o: T,
    ct: i8,
) -> NnResult<Built> {
    super::matmul::cube(ct)?;
    for t in [&s, &b1, &b2, &o] {
        a::dtype_in(t, FLOATS)?;
    }
    promoted(&[&s, &b1, &b2], &o)?;
    if b1.ndim() != 3 || b2.ndim() != 3 {
        return Err(NnError::invalid(format!(
            "batch1 and batch2 must be 3-D, but their shapes are {:?} and {:?}",
            b1.shape(),
            b2.shape()
        )));
    }
    let (p, q) = (b1.shape(), b2.shape());
    if p[0] != q[0] || p[2] != q[1] {
        return Err(NnError::invalid(format!(
            "batch1 {p:?} and batch2 {q:?} cannot be multiplied batch by batch (batches {} and \
             {}, inner sizes {} and {})",
            p[0], q[0], p[2], q[1]
        )));
    }
    let want = [p[1], q[2]];
    if broadcast_shapes(s.shape(), &want).as_deref() != Some(&want[..]) {
        return Err(NnError::invalid(format!(
            "{} {:?} must broadcast to the product's shape {want:?}",
            s.arg,
            s.shape()
        )));
    }
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&s);
    l.input(&b1);
    l.input(&b2);
    l.output(&o);
    l.finish(move |v, _| linalg::addbmm(&v[0], &v[1], &v[2], beta, alpha, &v[3]))
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnAddbmmGetWorkspaceSize(
    self_: *const c_void,
    batch1: *const c_void,
    batch2: *const c_void,
    beta: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddbmmGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(self_, "self")?;
            let b1 = a::tensor(batch1, "batch1")?;
            let b2 = a::tensor(batch2, "batch2")?;
            let be = scalar_f64(beta, "beta")?;
            let al = scalar_f64(alpha, "alpha")?;
            let o = a::tensor(out, "out")?;
            addbmm("aclnnAddbmm", s, b1, b2, be, al, o, cubeMathType)
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceAddbmmGetWorkspaceSize(
    selfRef: *mut c_void,
    batch1: *const c_void,
    batch2: *const c_void,
    beta: *const c_void,
    alpha: *const c_void,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceAddbmmGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = a::tensor(selfRef, "selfRef")?;
            let b1 = a::tensor(batch1, "batch1")?;
            let b2 = a::tensor(batch2, "batch2")?;
            let be = scalar_f64(beta, "beta")?;
            let al = scalar_f64(alpha, "alpha")?;
            addbmm(
                "aclnnInplaceAddbmm",
                s.clone(),
                b1,
                b2,
                be,
                al,
                s,
                cubeMathType,
            )
        },
    )
}

// ---- Inverse ----

#[no_mangle]
pub unsafe extern "C" fn aclnnInverseGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInverseGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, &[DType::F32, DType::F64, DType::F16])?;
            a::dtype_in(&o, FLOATS)?;
            a::castable(x.dtype(), &o)?;
            a::max_dims(&x, 8)?;
            let nd = x.ndim();
            if nd < 2 || x.shape()[nd - 1] != x.shape()[nd - 2] {
                return Err(NnError::invalid(format!(
                    "self must be a batch of square matrices (at least 2-D, the last two sizes \
                 equal), but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&o, x.shape())?;
            let mut l = Launch::new("aclnnInverse");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| linalg::inverse(&v[0], &v[1]))
        },
    )
}

crate::phase2!(
    aclnnAddmv,
    aclnnGer,
    aclnnAddbmm,
    aclnnInplaceAddbmm,
    aclnnInverse
);

// ---- LinalgCross ----

/// LinalgCross's data types (the reference's list without the complex ones, which the
/// engine has no type for).
const CROSS: &[DType] = &[
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
];

#[no_mangle]
pub unsafe extern "C" fn aclnnLinalgCrossGetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    dim: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLinalgCrossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let o = a::tensor(out, "out")?;
            for t in [&x, &y, &o] {
                a::dtype_in(t, CROSS)?;
                a::max_dims(t, 8)?;
            }
            for t in [&y, &o] {
                if t.dtype() != x.dtype() {
                    return Err(NnError::invalid(format!(
                        "{} data type {} must be self's {}",
                        t.arg,
                        t.dtype(),
                        x.dtype()
                    )));
                }
            }
            let shape = a::broadcast(&x, &y)?;
            let d = a::dim(dim, shape.len(), "dim")?;
            if shape.get(d) != Some(&3) {
                return Err(NnError::invalid(format!(
                    "dimension {d} of the broadcast shape {shape:?} of self {:?} and other {:?} \
                     must have size 3",
                    x.shape(),
                    y.shape()
                )));
            }
            a::same_shape(&o, &shape)?;
            let mut l = Launch::new("aclnnLinalgCross");
            l.input(&x);
            l.input(&y);
            l.output(&o);
            l.finish(move |v, _| linalg::cross(&v[0], &v[1], d, &v[2]))
        },
    )
}

// ---- Einsum ----

/// Einsum's data types (Atlas A2).
const EINSUM: &[DType] = &[
    DType::F16,
    DType::F32,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U64,
];

#[no_mangle]
pub unsafe extern "C" fn aclnnEinsumGetWorkspaceSize(
    tensors: *const c_void,
    equation: *const std::ffi::c_char,
    output: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEinsumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(tensors, "tensors")?;
            if equation.is_null() {
                return Err(NnError::nullptr("equation is nullptr"));
            }
            // SAFETY: a NUL-terminated string from the caller (checked non-null).
            let eq = unsafe { std::ffi::CStr::from_ptr(equation) }.to_string_lossy();
            let o = a::tensor(output, "output")?;
            if xs.is_empty() {
                return Err(NnError::invalid("tensors holds no tensor"));
            }
            for t in xs.iter().chain([&o]) {
                a::dtype_in(t, EINSUM)?;
                a::max_dims(t, 8)?;
                if t.dtype() != xs[0].dtype() {
                    return Err(NnError::invalid(format!(
                        "{} data type {} must be the first tensor's {}",
                        t.arg,
                        t.dtype(),
                        xs[0].dtype()
                    )));
                }
                if t.numel() == 0 {
                    return Err(NnError::invalid(format!(
                        "{} {:?} is empty; empty tensors are not supported",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let shapes: Vec<Vec<usize>> = xs.iter().map(|t| t.shape().to_vec()).collect();
            let e = linalg::Einsum::parse(&eq, &shapes).map_err(NnError::invalid)?;
            a::same_shape(&o, &e.out_shape())?;
            let n = xs.len();
            let mut l = Launch::new("aclnnEinsum");
            l.inputs(&xs);
            l.output(&o);
            l.finish(move |v, _| linalg::einsum(&e, &v[..n], &v[n]))
        },
    )
}

crate::phase2!(aclnnLinalgCross, aclnnEinsum);

// ---- Renorm ----

/// Renorm's data types (FLOAT, FLOAT16, and BFLOAT16 on A2/A3).
const RENORM: &[DType] = &[DType::F32, DType::F16, DType::BF16];

fn renorm(
    api: &'static str,
    x: T,
    p: *const c_void,
    dim: i64,
    max_norm: *const c_void,
    o: T,
) -> NnResult<Built> {
    let pv = scalar_f64(p, "p")?;
    let mv = scalar_f64(max_norm, "maxNorm")?;
    a::dtype_in(&x, RENORM)?;
    a::max_dims(&x, 8)?;
    if o.dtype() != x.dtype() {
        return Err(NnError::invalid(format!(
            "out data type {} must be self's {}",
            o.dtype(),
            x.dtype()
        )));
    }
    a::same_shape(&o, x.shape())?;
    let d = a::dim(dim, x.ndim(), "dim")?;
    if pv.is_nan() || pv <= 0.0 {
        return Err(NnError::invalid(format!(
            "p must be positive, but it is {pv}"
        )));
    }
    if mv.is_nan() || mv < 0.0 {
        return Err(NnError::invalid(format!(
            "maxNorm must not be negative, but it is {mv}"
        )));
    }
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| linalg::renorm(&v[0], pv, d, mv, &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnRenormGetWorkspaceSize(
    self_: *const c_void,
    p: *const c_void,
    dim: i64,
    maxNorm: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRenormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            renorm("aclnnRenorm", x, p, dim, maxNorm, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceRenormGetWorkspaceSize(
    selfRef: *mut c_void,
    p: *const c_void,
    dim: i64,
    maxNorm: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceRenormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            renorm("aclnnInplaceRenorm", x.clone(), p, dim, maxNorm, x)
        },
    )
}

// ---- Pdist ----

/// The pairwise p-norm distances of `self`'s rows (`aclnnPdist`, and `aclnnPdistForward`
/// with `p` as a scalar): FLOAT/FLOAT16, `out` `[n(n-1)/2]` of self's dtype, `p` in [0, inf].
pub(crate) fn pdist(
    api: &'static str,
    self_: *const c_void,
    pv: f64,
    out: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, &[DType::F32, DType::F16])?;
    if o.dtype() != x.dtype() {
        return Err(NnError::invalid(format!(
            "out data type {} must be self's {}",
            o.dtype(),
            x.dtype()
        )));
    }
    if x.ndim() != 2 {
        return Err(NnError::invalid(format!(
            "self must be 2-D, but its shape is {:?}",
            x.shape()
        )));
    }
    let n = x.shape()[0];
    a::same_shape(&o, &[n * n.saturating_sub(1) / 2])?;
    if pv.is_nan() || pv < 0.0 {
        return Err(NnError::invalid(format!(
            "p must be in [0, inf], but it is {pv}"
        )));
    }
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| linalg::pdist(&v[0], pv, &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnPdistGetWorkspaceSize(
    self_: *const c_void,
    p: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnPdistGetWorkspaceSize",
        workspaceSize,
        executor,
        || pdist("aclnnPdist", self_, p as f64, out),
    )
}

// ---- Slogdet ----

#[no_mangle]
pub unsafe extern "C" fn aclnnSlogdetGetWorkspaceSize(
    self_: *const c_void,
    signOut: *mut c_void,
    logOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSlogdetGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let s = a::tensor(signOut, "signOut")?;
            let lo = a::tensor(logOut, "logOut")?;
            let real = &[DType::F32, DType::F64];
            a::dtype_in(&x, real)?;
            a::dtype_in(&s, real)?;
            a::dtype_in(&lo, real)?;
            a::castable(x.dtype(), &s)?;
            a::castable(x.dtype(), &lo)?;
            a::max_dims(&x, 8)?;
            let nd = x.ndim();
            if nd < 2 || x.shape()[nd - 1] != x.shape()[nd - 2] || x.shape()[nd - 1] == 0 {
                return Err(NnError::invalid(format!(
                    "self must be a batch of square matrices (*, n, n) with n > 0, but its shape \
                 is {:?}",
                    x.shape()
                )));
            }
            let batch = &x.shape()[..nd - 2];
            a::same_shape(&s, batch)?;
            a::same_shape(&lo, batch)?;
            let mut l = Launch::new("aclnnSlogdet");
            l.input(&x);
            l.output(&s);
            l.output(&lo);
            l.finish(move |v, _| linalg::slogdet(&v[0], &v[1], &v[2]))
        },
    )
}

crate::phase2!(aclnnRenorm, aclnnInplaceRenorm, aclnnPdist, aclnnSlogdet);

// ---- LinalgQr ----

fn same_dtype_as_self(t: &T, x: &T) -> NnResult<()> {
    if t.dtype() == x.dtype() {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} data type {} must be self's {}",
            t.arg,
            t.dtype(),
            x.dtype()
        )))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLinalgQrGetWorkspaceSize(
    self_: *const c_void,
    mode: i64,
    Q: *mut c_void,
    R: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLinalgQrGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let q = a::tensor(Q, "Q")?;
            let r = a::tensor(R, "R")?;
            a::dtype_in(&x, &[DType::F32, DType::F16, DType::F64])?;
            same_dtype_as_self(&q, &x)?;
            same_dtype_as_self(&r, &x)?;
            let nd = x.ndim();
            if !(2..=8).contains(&nd) {
                return Err(NnError::invalid(format!(
                    "self must have 2 to 8 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            let (m, n) = (x.shape()[nd - 2], x.shape()[nd - 1]);
            let k = m.min(n);
            let (qc, rr) = match mode {
                0 => (Some(k), k),
                1 => (Some(m), m),
                2 => (None, k),
                _ => {
                    return Err(NnError::invalid(format!(
                        "mode must be 0 (reduced), 1 (complete) or 2 (r), but it is {mode}"
                    )))
                }
            };
            let batch = &x.shape()[..nd - 2];
            let shape = |last: [usize; 2]| [batch, &last[..]].concat();
            a::same_shape(&r, &shape([rr, n]))?;
            let mut l = Launch::new("aclnnLinalgQr");
            l.input(&x);
            l.output(&r);
            match qc {
                Some(c) => {
                    a::same_shape(&q, &shape([m, c]))?;
                    l.output(&q);
                    l.finish(move |v, _| linalg::qr(&v[0], Some(&v[2]), &v[1]))
                }
                None => {
                    if q.numel() != 0 {
                        return Err(NnError::invalid(format!(
                            "Q must be empty for mode 2 (r), but its shape is {:?}",
                            q.shape()
                        )));
                    }
                    l.finish(move |v, _| linalg::qr(&v[0], None, &v[1]))
                }
            }
        },
    )
}

crate::phase2!(aclnnLinalgQr);
