//! Clamping: `aclnn_clamp.h` (Clamp, ClampMin, ClampMax with scalar bounds, ClampTensor,
//! ClampMinTensor, ClampMaxTensor with tensor bounds, and the in-place forms CANN declares),
//! `aclnn_hardtanh.h`. A NULL scalar bound of Clamp is no bound (at least one is needed);
//! tensor bounds broadcast to `self`. A NaN input stays NaN.

use super::args::{self as a, ALL_NUM, T};
use super::arith::{inplace_shape, tensor_tensor, Typing};
use super::launch::{phase1, Built, Launch};
use super::unary::unary;
use crate::status::{NnError, NnResult};
use npu_emu::ops::math::{self, Binary, Unary};
use npu_emu::ops::Scalar;
use std::ffi::c_void;

fn clamp(api: &'static str, x: T, o: T, lo: Option<Scalar>, hi: Option<Scalar>) -> NnResult<Built> {
    if lo.is_none() && hi.is_none() {
        return Err(NnError::nullptr(
            "clipValueMin and clipValueMax are both nullptr; at least one is needed",
        ));
    }
    unary(
        api,
        x,
        o,
        ALL_NUM,
        Unary::Clamp(lo.map(|s| s.to_f64()), hi.map(|s| s.to_f64())),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnClampGetWorkspaceSize(
    self_: *const c_void,
    clipValueMin: *const c_void,
    clipValueMax: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnClampGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            clamp(
                "aclnnClamp",
                x,
                o,
                a::opt_scalar(clipValueMin, "clipValueMin")?,
                a::opt_scalar(clipValueMax, "clipValueMax")?,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnClampMinGetWorkspaceSize(
    self_: *const c_void,
    clipValueMin: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnClampMinGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            clamp(
                "aclnnClampMin",
                x,
                o,
                Some(a::scalar(clipValueMin, "clipValueMin")?),
                None,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnClampMaxGetWorkspaceSize(
    self_: *const c_void,
    clipValueMax: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnClampMaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            clamp(
                "aclnnClampMax",
                x,
                o,
                None,
                Some(a::scalar(clipValueMax, "clipValueMax")?),
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceClampMaxGetWorkspaceSize(
    selfRef: *const c_void,
    clipValueMax: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceClampMaxGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            clamp(
                "aclnnInplaceClampMax",
                x.clone(),
                x,
                None,
                Some(a::scalar(clipValueMax, "clipValueMax")?),
            )
        },
    )
}

/// out = min(max(self, lo), hi) with tensor bounds (either may be absent).
fn clamp_tensor(api: &'static str, x: T, o: T, lo: Option<T>, hi: Option<T>) -> NnResult<Built> {
    if lo.is_none() && hi.is_none() {
        return Err(NnError::nullptr(
            "clipValueMin and clipValueMax are both nullptr; at least one is needed",
        ));
    }
    a::dtype_in(&x, ALL_NUM)?;
    let mut p = x.dtype();
    // out has the broadcast shape of self and the bounds (CANN's table)
    let mut shape = x.shape().to_vec();
    for b in [&lo, &hi].into_iter().flatten() {
        a::dtype_in(b, ALL_NUM)?;
        p = a::promote(p, x.arg, b.dtype(), b.arg)?;
        shape = npu_emu::ops::view::broadcast_shapes(&shape, b.shape()).ok_or_else(|| {
            NnError::invalid(format!(
                "{} shape {:?} and {} shape {:?} do not broadcast",
                x.arg,
                x.shape(),
                b.arg,
                b.shape()
            ))
        })?;
    }
    a::castable(p, &o)?;
    a::same_shape(&o, &shape)?;
    let mut l = Launch::new(api);
    l.input(&x);
    let (hl, hh) = (lo.is_some(), hi.is_some());
    for b in [&lo, &hi].into_iter().flatten() {
        l.input(b);
    }
    l.output(&o);
    l.finish(move |v, _| {
        let out = &v[v.len() - 1];
        let mut src = &v[0];
        let mut i = 1;
        if hl {
            math::binary(Binary::Maximum, src, &v[i], out, p)?;
            src = out;
            i += 1;
        }
        if hh {
            math::binary(Binary::Minimum, src, &v[i], out, p)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnClampTensorGetWorkspaceSize(
    self_: *const c_void,
    clipValueMin: *const c_void,
    clipValueMax: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnClampTensorGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            clamp_tensor(
                "aclnnClampTensor",
                x,
                o,
                a::opt_tensor(clipValueMin, "clipValueMin")?,
                a::opt_tensor(clipValueMax, "clipValueMax")?,
            )
        },
    )
}

macro_rules! one_bound {
    ($get:ident, $api:literal, $arg:literal, $min:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            bound: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let b = a::tensor(bound, $arg)?;
                let o = a::tensor(out, "out")?;
                let op = if $min {
                    Binary::Maximum
                } else {
                    Binary::Minimum
                };
                // out has the broadcast shape of self and the bound (CANN's table)
                tensor_tensor($api, x, b, o, ALL_NUM, op, None, Typing::Promoted)
            })
        }
    };
}
one_bound!(
    aclnnClampMinTensorGetWorkspaceSize,
    "aclnnClampMinTensor",
    "clipValueMin",
    true
);
one_bound!(
    aclnnClampMaxTensorGetWorkspaceSize,
    "aclnnClampMaxTensor",
    "max",
    false
);

macro_rules! one_bound_inplace {
    ($get:ident, $api:literal, $arg:literal, $min:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            selfRef: *mut c_void,
            bound: *const c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(selfRef, "selfRef")?;
                let b = a::tensor(bound, $arg)?;
                let op = if $min {
                    Binary::Maximum
                } else {
                    Binary::Minimum
                };
                inplace_shape(&x, &b)?;
                tensor_tensor($api, x.clone(), b, x, ALL_NUM, op, None, Typing::Promoted)
            })
        }
    };
}
one_bound_inplace!(
    aclnnInplaceClampMinTensorGetWorkspaceSize,
    "aclnnInplaceClampMinTensor",
    "clipValueMin",
    true
);
one_bound_inplace!(
    aclnnInplaceClampMaxTensorGetWorkspaceSize,
    "aclnnInplaceClampMaxTensor",
    "max",
    false
);

#[no_mangle]
pub unsafe extern "C" fn aclnnHardtanhGetWorkspaceSize(
    self_: *const c_void,
    clipValueMin: *const c_void,
    clipValueMax: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHardtanhGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            clamp(
                "aclnnHardtanh",
                x,
                o,
                Some(a::scalar(clipValueMin, "clipValueMin")?),
                Some(a::scalar(clipValueMax, "clipValueMax")?),
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceHardtanhGetWorkspaceSize(
    selfRef: *mut c_void,
    clipValueMin: *const c_void,
    clipValueMax: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceHardtanhGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            clamp(
                "aclnnInplaceHardtanh",
                x.clone(),
                x,
                Some(a::scalar(clipValueMin, "clipValueMin")?),
                Some(a::scalar(clipValueMax, "clipValueMax")?),
            )
        },
    )
}

crate::phase2!(
    aclnnClamp,
    aclnnClampMin,
    aclnnClampMax,
    aclnnInplaceClampMax,
    aclnnClampTensor,
    aclnnClampMinTensor,
    aclnnClampMaxTensor,
    aclnnInplaceClampMinTensor,
    aclnnInplaceClampMaxTensor,
    aclnnHardtanh,
    aclnnInplaceHardtanh
);
