//! Activations and their backward forms: `aclnn_relu.h`, `aclnn_threshold_backward.h`,
//! `aclnn_gelu.h`, `aclnn_gelu_backward.h`, `aclnn_silu.h`, `aclnn_silu_backward.h`,
//! `aclnn_sigmoid.h`, `aclnn_sigmoid_backward.h`, `aclnn_tanh_backward.h`, `aclnn_leaky_relu.h`,
//! `aclnn_gelu_v2.h` and `aclnn_gelu_backward_v2.h` (GELU exact, `approximate` 0 / "none", or
//! with the tanh approximation, 1 / "tanh")
//! (Tanh itself is in
//! `unary`).
//!
//! A backward operator is `gradInput = f(gradOutput, x)` elementwise, with `x` the forward
//! input (`self`: ThresholdBackward, GeluBackward, SiluBackward) or output (`output`:
//! SigmoidBackward, TanhBackward); the two broadcast and promote.

use super::args::{self as a, FLOATS, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use crate::unary_ops;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::math::{self, Binary, Unary};
use std::ffi::c_void;

use DType::*;
const RELU_TYPES: &[DType] = &[F32, F16, BF16, F64, I8, I32, U8, I64, I16];
/// Backward inputs: floats, and integers that promote (the output must be floating).
const GRAD_TYPES: &[DType] = &[F32, F16, BF16, F64, I8, I16, I32, I64, U8];

unary_ops!(
    aclnnReluGetWorkspaceSize,
    "aclnnRelu",
    aclnnInplaceReluGetWorkspaceSize,
    "aclnnInplaceRelu",
    RELU_TYPES,
    Unary::Relu
);
// CANN documents aclnnGelu as the tanh approximation, and aclnnGeluBackward's reference
// (ops-nn's golden) is gelu_backward(approximate="tanh"): torch_npu's F.gelu runs them.
unary_ops!(
    aclnnGeluGetWorkspaceSize,
    "aclnnGelu",
    FLOATS,
    Unary::GeluTanh
);
unary_ops!(aclnnSiluGetWorkspaceSize, "aclnnSilu", FLOATS, Unary::Silu);
unary_ops!(
    aclnnSigmoidGetWorkspaceSize,
    "aclnnSigmoid",
    aclnnInplaceSigmoidGetWorkspaceSize,
    "aclnnInplaceSigmoid",
    FLOATS,
    Unary::Sigmoid
);

/// `out = op(grad, x)` with broadcasting.
pub(crate) fn backward(
    api: &'static str,
    g: T,
    x: T,
    out: T,
    dtypes: &[DType],
    op: Binary,
) -> NnResult<Built> {
    // CANN's own GeluBackward example passes an INT32 gradOutput: integer gradients promote.
    a::dtype_in(&g, dtypes)?;
    a::dtype_in(&x, dtypes)?;
    let p = a::promote(g.dtype(), g.arg, x.dtype(), x.arg)?;
    let ct = if p.is_float() { p } else { F32 };
    a::castable(ct, &out)?;
    let shape = a::broadcast(&g, &x)?;
    a::same_shape(&out, &shape)?;
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&x);
    l.output(&out);
    l.finish(move |v, _| math::binary(op, &v[0], &v[1], &v[2], ct))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnThresholdBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    threshold: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnThresholdBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let t = a::scalar(threshold, "threshold")?;
            let o = a::tensor(out, "out")?;
            backward(
                "aclnnThresholdBackward",
                g,
                x,
                o,
                RELU_TYPES,
                Binary::ThresholdBackward(t.to_f64()),
            )
        },
    )
}

macro_rules! grad_op {
    ($get:ident, $api:literal, $x:literal, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            gradOutput: *const c_void,
            x: *const c_void,
            gradInput: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let g = a::tensor(gradOutput, "gradOutput")?;
                let x = a::tensor(x, $x)?;
                let o = a::tensor(gradInput, "gradInput")?;
                backward($api, g, x, o, GRAD_TYPES, $op)
            })
        }
    };
}

grad_op!(
    aclnnGeluBackwardGetWorkspaceSize,
    "aclnnGeluBackward",
    "self",
    Binary::GeluTanhBackward
);
grad_op!(
    aclnnSiluBackwardGetWorkspaceSize,
    "aclnnSiluBackward",
    "self",
    Binary::SiluBackward
);
grad_op!(
    aclnnSigmoidBackwardGetWorkspaceSize,
    "aclnnSigmoidBackward",
    "output",
    Binary::SigmoidBackward
);
grad_op!(
    aclnnTanhBackwardGetWorkspaceSize,
    "aclnnTanhBackward",
    "output",
    Binary::TanhBackward
);

/// `aclnnLeakyRelu(self, negativeSlope, out)` and its in-place form.
#[no_mangle]
pub unsafe extern "C" fn aclnnLeakyReluGetWorkspaceSize(
    self_: *const c_void,
    negativeSlope: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLeakyReluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let s = a::scalar(negativeSlope, "negativeSlope")?;
            let o = a::tensor(out, "out")?;
            super::unary::unary("aclnnLeakyRelu", x, o, FLOATS, Unary::LeakyRelu(s.to_f64()))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceLeakyReluGetWorkspaceSize(
    selfRef: *mut c_void,
    negativeSlope: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceLeakyReluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let s = a::scalar(negativeSlope, "negativeSlope")?;
            super::unary::unary(
                "aclnnInplaceLeakyRelu",
                x.clone(),
                x,
                FLOATS,
                Unary::LeakyRelu(s.to_f64()),
            )
        },
    )
}

/// `aclnnGeluV2(x, approximate, y)`: 0 is the exact GELU, 1 the tanh approximation; `y` has
/// `x`'s dtype and shape.
#[no_mangle]
pub unsafe extern "C" fn aclnnGeluV2GetWorkspaceSize(
    x: *const c_void,
    approximate: i64,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeluV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let yt = a::tensor(y, "y")?;
            let op = match approximate {
                0 => Unary::Gelu,
                1 => Unary::GeluTanh,
                v => {
                    return Err(NnError::invalid(format!(
                        "approximate must be 0 (none) or 1 (tanh), but it is {v}"
                    )))
                }
            };
            a::dtype_in(&xt, FLOATS)?;
            if yt.dtype() != xt.dtype() {
                return Err(NnError::invalid(format!(
                    "y data type {} must be x's {}",
                    yt.dtype(),
                    xt.dtype()
                )));
            }
            super::unary::unary("aclnnGeluV2", xt, yt, FLOATS, op)
        },
    )
}

/// `aclnnGeluBackwardV2(gradOutput, self, approximate, gradInput)` with `approximate` the
/// C string "none" or "tanh".
#[no_mangle]
pub unsafe extern "C" fn aclnnGeluBackwardV2GetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    approximate: *const std::ffi::c_char,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGeluBackwardV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            if approximate.is_null() {
                return Err(NnError::nullptr("approximate is nullptr"));
            }
            // SAFETY: a non-NULL C string from the caller.
            let s = unsafe { std::ffi::CStr::from_ptr(approximate) }.to_string_lossy();
            let op = match s.as_ref() {
                "none" => Binary::GeluBackward,
                "tanh" => Binary::GeluTanhBackward,
                v => {
                    return Err(NnError::invalid(format!(
                        "approximate must be \"none\" or \"tanh\", but it is \"{v}\""
                    )))
                }
            };
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(gradInput, "gradInput")?;
            backward("aclnnGeluBackwardV2", g, x, o, GRAD_TYPES, op)
        },
    )
}

crate::phase2!(aclnnGeluV2, aclnnGeluBackwardV2);

crate::phase2!(aclnnLeakyRelu, aclnnInplaceLeakyRelu);

crate::phase2!(
    aclnnRelu,
    aclnnInplaceRelu,
    aclnnThresholdBackward,
    aclnnGelu,
    aclnnGeluBackward,
    aclnnSilu,
    aclnnSiluBackward,
    aclnnSigmoid,
    aclnnInplaceSigmoid,
    aclnnSigmoidBackward,
    aclnnTanhBackward
);
