//! Pointwise combinations: `aclnn_addcmul.h`, `aclnn_addcdiv.h`, `aclnn_lerp_tensor.h`,
//! `aclnn_lerp_scalar.h`, with the in-place forms (the optimizers' update steps).
//!
//! `self`, `tensor1`, `tensor2` (or `end`, `weight`) broadcast and promote; `value` is
//! converted to the computation type. Addcdiv and Lerp compute in float.

use super::args::{self as a, ALL_NUM, FLOATS};
use super::launch::{phase1, Built, Launch};
use crate::status::NnResult;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{self, Ternary};
use npu_emu::ops::Scalar;
use std::ffi::c_void;

#[allow(clippy::too_many_arguments)]
fn three(
    api: &'static str,
    x: a::T,
    t1: a::T,
    t2: a::T,
    o: a::T,
    op: Ternary,
    dtypes: &[DType],
    inplace: bool,
) -> NnResult<Built> {
    for t in [&x, &t1, &t2] {
        a::dtype_in(t, dtypes)?;
    }
    let p = a::promote(x.dtype(), x.arg, t1.dtype(), t1.arg)?;
    let p = a::promote(p, x.arg, t2.dtype(), t2.arg)?;
    let ct = if matches!(op, Ternary::Addcdiv(_) | Ternary::Lerp) && !p.is_float() {
        DType::F32
    } else {
        p
    };
    a::castable(ct, &o)?;
    let shape = a::broadcast_all(&[&x, &t1, &t2])?;
    if inplace && shape != x.shape() {
        return Err(crate::status::NnError::invalid(format!(
            "the inputs broadcast to {shape:?}; in place the result must keep selfRef's shape {:?}",
            x.shape()
        )));
    }
    a::same_shape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&t1);
    l.input(&t2);
    l.output(&o);
    l.finish(move |v, _| math::ternary(op, &v[0], &v[1], &v[2], &v[3], ct))
}

macro_rules! addc {
    ($get:ident, $api:literal, $ip:ident, $ip_api:literal, $mk:expr, $dt:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            tensor1: *const c_void,
            tensor2: *const c_void,
            value: *const c_void,
            out: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let t1 = a::tensor(tensor1, "tensor1")?;
                let t2 = a::tensor(tensor2, "tensor2")?;
                let v = a::scalar(value, "value")?;
                let o = a::tensor(out, "out")?;
                three($api, x, t1, t2, o, $mk(v), $dt, false)
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $ip(
            selfRef: *const c_void,
            tensor1: *const c_void,
            tensor2: *const c_void,
            value: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($ip), workspaceSize, executor, || {
                let x = a::tensor(selfRef, "selfRef")?;
                let t1 = a::tensor(tensor1, "tensor1")?;
                let t2 = a::tensor(tensor2, "tensor2")?;
                let v = a::scalar(value, "value")?;
                three($ip_api, x.clone(), t1, t2, x, $mk(v), $dt, true)
            })
        }
    };
}
addc!(
    aclnnAddcmulGetWorkspaceSize,
    "aclnnAddcmul",
    aclnnInplaceAddcmulGetWorkspaceSize,
    "aclnnInplaceAddcmul",
    Ternary::Addcmul,
    ALL_NUM
);
addc!(
    aclnnAddcdivGetWorkspaceSize,
    "aclnnAddcdiv",
    aclnnInplaceAddcdivGetWorkspaceSize,
    "aclnnInplaceAddcdiv",
    Ternary::Addcdiv,
    FLOATS
);

#[no_mangle]
pub unsafe extern "C" fn aclnnLerpGetWorkspaceSize(
    self_: *const c_void,
    end: *const c_void,
    weight: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnLerpGetWorkspaceSize", workspaceSize, executor, || {
        let (x, e, w, o) = (
            a::tensor(self_, "self")?,
            a::tensor(end, "end")?,
            a::tensor(weight, "weight")?,
            a::tensor(out, "out")?,
        );
        three("aclnnLerp", x, e, w, o, Ternary::Lerp, FLOATS, false)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceLerpGetWorkspaceSize(
    selfRef: *mut c_void,
    end: *const c_void,
    weight: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceLerpGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (x, e, w) = (
                a::tensor(selfRef, "selfRef")?,
                a::tensor(end, "end")?,
                a::tensor(weight, "weight")?,
            );
            three(
                "aclnnInplaceLerp",
                x.clone(),
                e,
                w,
                x,
                Ternary::Lerp,
                FLOATS,
                true,
            )
        },
    )
}

fn lerps(
    api: &'static str,
    x: a::T,
    e: a::T,
    w: Scalar,
    o: a::T,
    inplace: bool,
) -> NnResult<Built> {
    a::dtype_in(&x, FLOATS)?;
    a::dtype_in(&e, FLOATS)?;
    let p = a::promote(x.dtype(), x.arg, e.dtype(), e.arg)?;
    a::castable(p, &o)?;
    let shape = a::broadcast(&x, &e)?;
    if inplace && shape != x.shape() {
        return Err(crate::status::NnError::invalid(format!(
            "selfRef {:?} and end {:?} broadcast to {shape:?}; in place the result must keep selfRef's shape",
            x.shape(),
            e.shape()
        )));
    }
    a::same_shape(&o, &shape)?;
    let wv = w.rounded_to(p).to_f64();
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&e);
    l.output(&o);
    l.finish(move |v, _| math::lerp_scalar(&v[0], &v[1], wv, &v[2], p))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLerpsGetWorkspaceSize(
    self_: *const c_void,
    end: *const c_void,
    weight: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLerpsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (x, e, w, o) = (
                a::tensor(self_, "self")?,
                a::tensor(end, "end")?,
                a::scalar(weight, "weight")?,
                a::tensor(out, "out")?,
            );
            lerps("aclnnLerps", x, e, w, o, false)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceLerpsGetWorkspaceSize(
    selfRef: *mut c_void,
    end: *const c_void,
    weight: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceLerpsGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (x, e, w) = (
                a::tensor(selfRef, "selfRef")?,
                a::tensor(end, "end")?,
                a::scalar(weight, "weight")?,
            );
            lerps("aclnnInplaceLerps", x.clone(), e, w, x, true)
        },
    )
}

crate::phase2!(
    aclnnAddcmul,
    aclnnInplaceAddcmul,
    aclnnAddcdiv,
    aclnnInplaceAddcdiv,
    aclnnLerp,
    aclnnInplaceLerp,
    aclnnLerps,
    aclnnInplaceLerps
);
