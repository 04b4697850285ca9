//! Parametrised activations: `aclnn_elu.h` (Elu, InplaceElu), `aclnn_elu_backward.h`,
//! `aclnn_softplus.h`, `aclnn_softplus_backward.h`, `aclnn_hardsigmoid.h` (+Inplace),
//! `aclnn_hardsigmoid_backward.h`, `aclnn_hardswish.h` (+Inplace),
//! `aclnn_hardswish_backward.h`, `aclnn_mish.h` (+Inplace), `aclnn_mish_backward.h`,
//! `aclnn_logsigmoid.h`, `aclnn_logsigmoid_forward.h`, `aclnn_logsigmoid_backward.h`,
//! `aclnn_hardtanh_backward.h`, `aclnn_leaky_relu_backward.h`. The engine is
//! `npu_emu::ops::act`; inputs and outputs are FLOAT, FLOAT16 or BFLOAT16 of one shape.

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::act::{self, Act, ActGrad};
use std::ffi::c_void;

pub(super) fn fwd(api: &'static str, x: a::T, o: a::T, f: Act) -> NnResult<Built> {
    a::dtype_in(&x, FLOATS3)?;
    a::dtype_in(&o, FLOATS3)?;
    a::max_dims(&x, 8)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| act::forward(f, &v[0], &v[1]))
}

fn bwd(api: &'static str, g: a::T, x: a::T, o: a::T, f: ActGrad) -> NnResult<Built> {
    for t in [&g, &x, &o] {
        a::dtype_in(t, FLOATS3)?;
    }
    a::max_dims(&x, 8)?;
    a::same_shape(&g, x.shape())?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&g);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| act::backward(f, &v[0], &v[1], &v[2]))
}

fn sc(h: *const c_void, arg: &'static str) -> NnResult<f64> {
    Ok(a::scalar(h, arg)?.to_f64())
}

pub(super) fn elu_params(
    alpha: *const c_void,
    scale: *const c_void,
    input_scale: *const c_void,
) -> NnResult<(f64, f64, f64)> {
    Ok((
        sc(alpha, "alpha")?,
        sc(scale, "scale")?,
        sc(input_scale, "inputScale")?,
    ))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnEluGetWorkspaceSize(
    self_: *const c_void,
    alpha: *const c_void,
    scale: *const c_void,
    inputScale: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnEluGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let (alpha, scale, input_scale) = elu_params(alpha, scale, inputScale)?;
        let o = a::tensor(out, "out")?;
        fwd(
            "aclnnElu",
            x,
            o,
            Act::Elu {
                alpha,
                scale,
                input_scale,
            },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnInplaceEluGetWorkspaceSize(
    selfRef: *mut c_void,
    alpha: *const c_void,
    scale: *const c_void,
    inputScale: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInplaceEluGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(selfRef, "selfRef")?;
            let (alpha, scale, input_scale) = elu_params(alpha, scale, inputScale)?;
            fwd(
                "aclnnInplaceElu",
                x.clone(),
                x,
                Act::Elu {
                    alpha,
                    scale,
                    input_scale,
                },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnEluBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    alpha: *const c_void,
    scale: *const c_void,
    inputScale: *const c_void,
    isResult: bool,
    selfOrResult: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let (alpha, scale, input_scale) = elu_params(alpha, scale, inputScale)?;
            let x = a::tensor(selfOrResult, "selfOrResult")?;
            let o = a::tensor(gradInput, "gradInput")?;
            if isResult && alpha < 0.0 {
                return Err(NnError::invalid(format!(
                    "alpha {alpha} must not be negative when isResult is true"
                )));
            }
            let f = if isResult {
                ActGrad::EluFromResult {
                    alpha,
                    scale,
                    input_scale,
                }
            } else {
                ActGrad::Elu {
                    alpha,
                    scale,
                    input_scale,
                }
            };
            bwd("aclnnEluBackward", g, x, o, f)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftplusGetWorkspaceSize(
    self_: *const c_void,
    beta: *const c_void,
    threshold: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftplusGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let (beta, threshold) = (sc(beta, "beta")?, sc(threshold, "threshold")?);
            let o = a::tensor(out, "out")?;
            fwd("aclnnSoftplus", x, o, Act::Softplus { beta, threshold })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSoftplusBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    beta: *const c_void,
    threshold: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSoftplusBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let (beta, threshold) = (sc(beta, "beta")?, sc(threshold, "threshold")?);
            let o = a::tensor(gradInput, "gradInput")?;
            bwd(
                "aclnnSoftplusBackward",
                g,
                x,
                o,
                ActGrad::Softplus { beta, threshold },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnHardtanhBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    min: *const c_void,
    max: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHardtanhBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let (min, max) = (sc(min, "min")?, sc(max, "max")?);
            let o = a::tensor(out, "out")?;
            bwd(
                "aclnnHardtanhBackward",
                g,
                x,
                o,
                ActGrad::Hardtanh { min, max },
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLeakyReluBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    negativeSlope: *const c_void,
    selfIsResult: bool,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLeakyReluBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let slope = sc(negativeSlope, "negativeSlope")?;
            let o = a::tensor(gradInput, "gradInput")?;
            if selfIsResult && slope < 0.0 {
                return Err(NnError::invalid(format!(
                    "negativeSlope {slope} must not be negative when selfIsResult is true"
                )));
            }
            bwd(
                "aclnnLeakyReluBackward",
                g,
                x,
                o,
                ActGrad::LeakyRelu { slope },
            )
        },
    )
}

macro_rules! plain_act {
    ($get:ident, $api:literal, $inget:ident, $inapi:literal, $bget:ident, $bapi:literal, $f:expr, $g:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                fwd($api, x, o, $f)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $inget(
            selfRef: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($inget), workspaceSize, executor, || {
                let x = a::tensor(selfRef, "selfRef")?;
                fwd($inapi, x.clone(), x, $f)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $bget(
            gradOutput: *const c_void,
            self_: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($bget), workspaceSize, executor, || {
                let g = a::tensor(gradOutput, "gradOutput")?;
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                bwd($bapi, g, x, o, $g)
            })
        }
    };
}
plain_act!(
    aclnnHardsigmoidGetWorkspaceSize,
    "aclnnHardsigmoid",
    aclnnInplaceHardsigmoidGetWorkspaceSize,
    "aclnnInplaceHardsigmoid",
    aclnnHardsigmoidBackwardGetWorkspaceSize,
    "aclnnHardsigmoidBackward",
    Act::Hardsigmoid,
    ActGrad::Hardsigmoid
);
plain_act!(
    aclnnHardswishGetWorkspaceSize,
    "aclnnHardswish",
    aclnnInplaceHardswishGetWorkspaceSize,
    "aclnnInplaceHardswish",
    aclnnHardswishBackwardGetWorkspaceSize,
    "aclnnHardswishBackward",
    Act::Hardswish,
    ActGrad::Hardswish
);
plain_act!(
    aclnnMishGetWorkspaceSize,
    "aclnnMish",
    aclnnInplaceMishGetWorkspaceSize,
    "aclnnInplaceMish",
    aclnnMishBackwardGetWorkspaceSize,
    "aclnnMishBackward",
    Act::Mish,
    ActGrad::Mish
);

#[no_mangle]
pub unsafe extern "C" fn aclnnLogSigmoidGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogSigmoidGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            fwd("aclnnLogSigmoid", x, o, Act::LogSigmoid)
        },
    )
}

/// `buffer` is PyTorch's CPU-side scratch; the backward here does not read it, so it may
/// be empty (as torch_npu passes it) and is left untouched.
#[no_mangle]
pub unsafe extern "C" fn aclnnLogSigmoidForwardGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    buffer: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogSigmoidForwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            let _ = a::tensor(buffer, "buffer")?;
            fwd("aclnnLogSigmoidForward", x, o, Act::LogSigmoid)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLogSigmoidBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    buffer: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLogSigmoidBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(self_, "self")?;
            let _ = a::tensor(buffer, "buffer")?;
            let o = a::tensor(gradInput, "gradInput")?;
            bwd("aclnnLogSigmoidBackward", g, x, o, ActGrad::LogSigmoid)
        },
    )
}

crate::phase2!(
    aclnnElu,
    aclnnInplaceElu,
    aclnnEluBackward,
    aclnnSoftplus,
    aclnnSoftplusBackward,
    aclnnHardtanhBackward,
    aclnnLeakyReluBackward,
    aclnnHardsigmoid,
    aclnnInplaceHardsigmoid,
    aclnnHardsigmoidBackward,
    aclnnHardswish,
    aclnnInplaceHardswish,
    aclnnHardswishBackward,
    aclnnMish,
    aclnnInplaceMish,
    aclnnMishBackward,
    aclnnLogSigmoid,
    aclnnLogSigmoidForward,
    aclnnLogSigmoidBackward
);
