//! Operators of CANN's `experimental/` set (hicann ops-math and ops-nn), each documented for
//! Atlas A2: gradients (`aclnn_tanh_grad.h`, `aclnn_asin_grad.h`, `aclnn_acosh_grad.h`,
//! `aclnn_softmax_grad.h`, `aclnn_relu_grad_v3.h`, `aclnn_relu_grad_v4.h`,
//! `aclnn_mse_loss_grad.h`, `aclnn_gaussian_nll_loss_grad.h`), divisions
//! (`aclnn_floor_div.h`, `aclnn_real_div.h`, `aclnn_truncate_div.h`, `aclnn_truncate_mod.h`),
//! losses (`aclnn_huber_loss.h`, `aclnn_mse_loss_out.h`, `aclnn_hinge_loss.h`,
//! `aclnn_hinge_embedding_loss.h`, `aclnn_lp_loss.h`, `aclnn_gaussian_nll_loss.h`) and
//! small tensor operators (`aclnn_elu_v2.h`, `aclnn_diag_part.h`, `aclnn_assign_sub.h`,
//! `aclnn_tensor_move.h`, `aclnn_axpy_v2.h`, `aclnn_bias_add.h`,
//! `aclnn_reduce_min_v2.h`) and the optimiser step `aclnn_apply_gradient_descent.h`. `aclnnLogSoftmaxV2` lives with its twin in `softmax.rs`.
//!
//! Most of these take tensors of one data type and one shape (no broadcasting, no
//! promotion): [`uniform`] checks that. String reductions are "none", "mean" or "sum".
//! The engine is the operator family each one shares (math, nn, loss) or
//! `npu_emu::ops::experimental` for the math found nowhere else.

use super::args::{self as a, FLOATS3, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::experimental as ex;
use npu_emu::ops::math::{self, Binary};
use npu_emu::ops::nn::{self, Reduction};
use npu_emu::ops::View;
use std::ffi::{c_char, c_void};

use DType::{Bool, BF16, F16, F32, F64, I16, I32, I64, I8, U16, U32, U64, U8};

/// Every tensor of `ts` has a type of `dtypes`, at most 8 dimensions, and the type and
/// shape of the first.
fn uniform(ts: &[&T], dtypes: &[DType]) -> NnResult<()> {
    for t in ts {
        a::dtype_in(t, dtypes)?;
        a::max_dims(t, 8)?;
        a::same_dtype(t, ts[0])?;
        a::same_shape(t, ts[0].shape())?;
    }
    Ok(())
}

/// At least one dimension (the "1-8" operators).
fn not_0d(t: &T) -> NnResult<()> {
    if t.ndim() == 0 {
        return Err(NnError::invalid(format!(
            "{} must have 1 to 8 dimensions, but it is 0-d",
            t.arg
        )));
    }
    Ok(())
}

/// The type a float operator computes in: float32 for the 16-bit types.
fn compute(d: DType) -> DType {
    match d {
        F16 | BF16 => F32,
        d => d,
    }
}

/// A string reduction ("none", "mean", "sum"); `None` for a null optional one.
fn reduction(p: *const c_char, arg: &str, default: Option<Reduction>) -> NnResult<Reduction> {
    if p.is_null() {
        if let Some(d) = default {
            return Ok(d);
        }
    }
    match super::cv19::c_str(p, arg)?.as_str() {
        "none" => Ok(Reduction::None),
        "mean" => Ok(Reduction::Mean),
        "sum" => Ok(Reduction::Sum),
        s => Err(NnError::invalid(format!(
            "{arg} \"{s}\" is not supported; \"none\", \"mean\" or \"sum\""
        ))),
    }
}

/// A reduced loss's output: `x`'s shape for none, else a single element.
fn loss_out(o: &T, shape: &[usize], r: Reduction) -> NnResult<()> {
    if r == Reduction::None {
        a::same_shape(o, shape)
    } else if o.numel() == 1 {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "{} must hold one element for a mean or sum reduction, but its shape is {:?}",
            o.arg,
            o.shape()
        )))
    }
}

/// `out = op(x, y)` over tensors of one type and shape.
fn binary(api: &'static str, x: T, y: T, out: T, dtypes: &[DType], op: Binary) -> NnResult<Built> {
    uniform(&[&x, &y, &out], dtypes)?;
    let ct = compute(x.dtype());
    two_in(api, &x, &y, &out, move |v| {
        math::binary(op, &v[0], &v[1], &v[2], ct)
    })
}

/// A launch of two inputs and one output.
fn two_in(
    api: &'static str,
    x: &T,
    y: &T,
    out: &T,
    k: impl Fn(&[View]) -> Result<(), String> + Send + Sync + 'static,
) -> NnResult<Built> {
    let mut l = Launch::new(api);
    l.input(x);
    l.input(y);
    l.output(out);
    l.finish(move |v, _| k(v))
}

macro_rules! three {
    ($get:ident, $a:ident, $b:ident, $c:ident, |$x:ident, $y:ident, $o:ident| $body:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            $a: *const c_void,
            $b: *const c_void,
            $c: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let $x = a::tensor($a, stringify!($a))?;
                let $y = a::tensor($b, stringify!($b))?;
                let $o = a::tensor($c, stringify!($c))?;
                $body
            })
        }
    };
}

// ---- gradients of pointwise functions: (y, dy) -> dx, one type and shape ----

three!(aclnnTanhGradGetWorkspaceSize, y, dy, dx, |y, g, o| {
    uniform(&[&y, &g, &o], FLOATS3)?;
    let ct = compute(y.dtype());
    two_in("aclnnTanhGrad", &g, &y, &o, move |v| {
        math::binary(Binary::TanhBackward, &v[0], &v[1], &v[2], ct)
    })
});
three!(aclnnAsinGradGetWorkspaceSize, y, dy, z, |y, g, o| {
    uniform(&[&y, &g, &o], FLOATS3)?;
    two_in("aclnnAsinGrad", &y, &g, &o, |v| {
        ex::asin_grad(&v[0], &v[1], &v[2])
    })
});
three!(aclnnAcoshGradGetWorkspaceSize, y, dy, dx, |y, g, o| {
    uniform(&[&y, &g, &o], FLOATS3)?;
    if y.numel() == 0 {
        return Err(NnError::invalid("y must not be empty"));
    }
    two_in("aclnnAcoshGrad", &y, &g, &o, |v| {
        ex::acosh_grad(&v[0], &v[1], &v[2])
    })
});
three!(aclnnSoftmaxGradGetWorkspaceSize, y, dy, dx, |y, g, o| {
    uniform(&[&y, &g, &o], FLOATS3)?;
    not_0d(&y)?;
    let d = y.ndim() - 1;
    two_in("aclnnSoftmaxGrad", &g, &y, &o, move |v| {
        nn::softmax_backward(&v[0], &v[1], d, &v[2], false)
    })
});

// ---- divisions over one type and shape ----

three!(
    aclnnFloorDivGetWorkspaceSize,
    self_x,
    self_y,
    out,
    |x, y, o| {
        binary(
            "aclnnFloorDiv",
            x,
            y,
            o,
            &[F32, F16, BF16, I8, I32, U8],
            Binary::DivFloor,
        )
    }
);
three!(aclnnTruncateModGetWorkspaceSize, x1, x2, out, |x, y, o| {
    binary(
        "aclnnTruncateMod",
        x,
        y,
        o,
        &[F16, F32, BF16, I32, I8, U8],
        Binary::Fmod,
    )
});

// RealDiv: `self / other`; bool inputs give a FLOAT result, INT32 divides toward zero.
three!(
    aclnnRealDivGetWorkspaceSize,
    self_,
    other,
    out,
    |x, y, o| {
        let types = &[F32, F16, BF16, I32, Bool];
        uniform(&[&x, &y], types)?;
        a::max_dims(&o, 8)?;
        a::same_shape(&o, x.shape())?;
        let (rt, op) = match x.dtype() {
            Bool => (F32, Binary::Div),
            I32 => (I32, Binary::DivTrunc),
            d => (d, Binary::Div),
        };
        a::dtype_of(o.dtype(), o.arg, &[rt])?;
        let ct = compute(rt);
        two_in("aclnnRealDiv", &x, &y, &o, move |v| {
            math::binary(op, &v[0], &v[1], &v[2], ct)
        })
    }
);

// TruncateDiv: `trunc(x1 / x2)`; inputs of one type give that type, mixed types FLOAT.
three!(aclnnTruncateDivGetWorkspaceSize, x1, x2, out, |x, y, o| {
    let types = &[BF16, F16, F32, I32, U8, I8, I64, I16];
    for t in [&x, &y, &o] {
        a::dtype_in(t, types)?;
        a::max_dims(t, 8)?;
        a::same_shape(t, x.shape())?;
    }
    let rt = if x.dtype() == y.dtype() {
        x.dtype()
    } else {
        F32
    };
    a::dtype_of(o.dtype(), o.arg, &[rt])?;
    let ct = compute(rt);
    two_in("aclnnTruncateDiv", &x, &y, &o, move |v| {
        math::binary(Binary::DivTrunc, &v[0], &v[1], &v[2], ct)
    })
});

// ---- ReLU gradients ----

// ReluGradV3(x, y, z): `z = y` where `x > 0`, else 0; `y` is `x`'s shape or one element.
three!(aclnnReluGradV3GetWorkspaceSize, x, y, z, |x, g, o| {
    let types = &[F32, F16, BF16, I32, U8, I8];
    uniform(&[&x, &o], types)?;
    not_0d(&x)?;
    a::dtype_in(&g, types)?;
    a::same_dtype(&g, &x)?;
    if g.numel() != 1 {
        a::same_shape(&g, x.shape())?;
    }
    two_in("aclnnReluGradV3", &x, &g, &o, |v| {
        let mut g = v[1].clone();
        if g.numel() == 1 {
            g.shape.clear();
            g.strides.clear();
        }
        ex::relu_grad(&v[0], &g, &v[2])
    })
});

#[no_mangle]
pub unsafe extern "C" fn aclnnReluGradV4GetWorkspaceSize(
    gradOutput: *const c_void,
    self_: *const c_void,
    threshold: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnReluGradV4GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let m = a::tensor(self_, "self")?;
            let th = a::scalar(threshold, "threshold")?;
            let o = a::tensor(out, "out")?;
            uniform(&[&g, &o], &[BF16, F16, F32, I8, U8, I32])?;
            a::dtype_in(&m, &[U8])?;
            a::same_shape(&m, g.shape())?;
            if th.to_f64() != 0.0 {
                return Err(NnError::invalid(format!(
                    "threshold must be 0, but it is {}",
                    th.to_f64()
                )));
            }
            two_in("aclnnReluGradV4", &g, &m, &o, |v| {
                ex::masked_grad(&v[0], &v[1], &v[2])
            })
        },
    )
}

/// EluV2: aclnnElu's computation and checks under its own name.
#[no_mangle]
pub unsafe extern "C" fn aclnnEluV2GetWorkspaceSize(
    self_: *const c_void,
    alpha: *const c_void,
    scale: *const c_void,
    inputScale: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEluV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let (alpha, scale, input_scale) = super::act::elu_params(alpha, scale, inputScale)?;
            let o = a::tensor(out, "out")?;
            not_0d(&x)?;
            a::same_dtype(&o, &x)?;
            super::act::fwd(
                "aclnnEluV2",
                x,
                o,
                npu_emu::ops::act::Act::Elu {
                    alpha,
                    scale,
                    input_scale,
                },
            )
        },
    )
}

// ---- losses ----

#[no_mangle]
pub unsafe extern "C" fn aclnnHuberLossGetWorkspaceSize(
    predictions: *const c_void,
    targets: *const c_void,
    delta: f32,
    loss: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHuberLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(predictions, "predictions")?;
            let t = a::tensor(targets, "targets")?;
            let o = a::tensor(loss, "loss")?;
            uniform(&[&x, &t, &o], FLOATS3)?;
            // NaN is refused too
            if delta.is_nan() || delta <= 0.0 {
                return Err(NnError::invalid(format!(
                    "delta must be greater than 0, but it is {delta}"
                )));
            }
            let d = delta as f64;
            two_in("aclnnHuberLoss", &x, &t, &o, move |v| {
                ex::huber(&v[0], &v[1], d, &v[2])
            })
        },
    )
}

three!(
    aclnnHingeLossGetWorkspaceSize,
    predict,
    target,
    loss,
    |x, t, o| {
        uniform(&[&x, &t, &o], FLOATS3)?;
        not_0d(&x)?;
        two_in("aclnnHingeLoss", &x, &t, &o, |v| {
            ex::hinge(&v[0], &v[1], &v[2])
        })
    }
);

#[no_mangle]
pub unsafe extern "C" fn aclnnHingeEmbeddingLossGetWorkspaceSize(
    input: *const c_void,
    target: *const c_void,
    margin: f64,
    reduction_: *const c_char,
    loss: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnHingeEmbeddingLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(loss, "loss")?;
            let r = reduction(reduction_, "reduction", None)?;
            uniform(&[&x, &t], FLOATS3)?;
            a::same_dtype(&o, &x)?;
            loss_out(&o, x.shape(), r)?;
            two_in("aclnnHingeEmbeddingLoss", &x, &t, &o, move |v| {
                ex::hinge_embedding(&v[0], &v[1], margin, r, &v[2])
            })
        },
    )
}

/// LpLoss: `|predict - label|` (only `p` = 1 is supported), reduced.
#[no_mangle]
pub unsafe extern "C" fn aclnnLpLossGetWorkspaceSize(
    predict: *const c_void,
    label: *const c_void,
    p: i64,
    reduction_: *const c_char,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLpLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(predict, "predict")?;
            let t = a::tensor(label, "label")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_, "reduction", None)?;
            uniform(&[&x, &t], FLOATS3)?;
            a::same_dtype(&o, &x)?;
            if p != 1 {
                return Err(NnError::invalid(format!("p must be 1, but it is {p}")));
            }
            if r == Reduction::None {
                a::same_shape(&o, x.shape())?;
            } else {
                super::loss::zero_d(&o)?;
            }
            two_in("aclnnLpLoss", &x, &t, &o, move |v| {
                npu_emu::ops::loss::loss(
                    npu_emu::ops::loss::Kind::L1,
                    &v[0],
                    &v[1],
                    None,
                    None,
                    r,
                    &v[2],
                )
            })
        },
    )
}

/// MseLossGrad(predict, label, dout, reduction, out): the argument order of the operator's
/// definition and of the documented example (the prototype on the page lists the gradient
/// first); `2 (predict - label) dout`, divided by the element count for "mean".
#[no_mangle]
pub unsafe extern "C" fn aclnnMseLossGradGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    gradOutput: *const c_void,
    reduction_: *mut c_char,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMseLossGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let g = a::tensor(gradOutput, "gradOutput")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(reduction_, "reduction", Some(Reduction::Mean))?;
            for v in [&x, &t, &g] {
                a::dtype_in(v, FLOATS3)?;
                a::same_dtype(v, &x)?;
                a::max_dims(v, 8)?;
            }
            a::dtype_in(&o, FLOATS3)?;
            super::loss::mse_backward("aclnnMseLossGrad", g, x, t, o, r)
        },
    )
}

/// MseLossOut: `(self - target)^2` broadcast; mean and sum reduce the first axis only.
#[no_mangle]
pub unsafe extern "C" fn aclnnMseLossOutGetWorkspaceSize(
    self_: *const c_void,
    target: *const c_void,
    reduction_: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMseLossOutGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let t = a::tensor(target, "target")?;
            let o = a::tensor(out, "out")?;
            for v in [&x, &t, &o] {
                a::dtype_in(v, FLOATS3)?;
            }
            a::max_dims(&x, 8)?;
            a::max_dims(&t, 8)?;
            let r = super::loss::reduction(reduction_)?;
            let p = a::promote(x.dtype(), x.arg, t.dtype(), t.arg)?;
            a::castable(p, &o)?;
            let shape = a::broadcast(&x, &t)?;
            let want = if r == Reduction::None || shape.is_empty() {
                shape
            } else {
                shape[1..].to_vec()
            };
            a::same_shape(&o, &want)?;
            two_in("aclnnMseLossOut", &x, &t, &o, move |v| {
                ex::mse_loss_axis0(&v[0], &v[1], r, &v[2])
            })
        },
    )
}

/// Gaussian NLL's shape rules: `target` is `input`'s shape or the same rank with exactly
/// one size-1 dimension where they differ; `var` is `input`'s shape, the same with a last
/// dimension of 1, `input`'s shape without its last dimension, or a single element.
fn gaussian_shapes(x: &T, t: &T, var: &T) -> NnResult<()> {
    let (xs, ts, vs) = (x.shape(), t.shape(), var.shape());
    let differ = xs.iter().zip(ts).filter(|(p, q)| p != q).count();
    let t_ok = ts.len() == xs.len()
        && (differ == 0 || (differ == 1 && xs.iter().zip(ts).any(|(&p, &q)| p != q && q == 1)));
    if !t_ok {
        return Err(NnError::invalid(format!(
            "target shape {ts:?} must equal input's {xs:?} or differ in one dimension of size 1"
        )));
    }
    let n = xs.len();
    let v_ok = vs == xs
        || var.numel() == 1
        || (vs.len() == n && n > 0 && vs[n - 1] == 1 && vs[..n - 1] == xs[..n - 1])
        || (n > 0 && vs == &xs[..n - 1]);
    if !v_ok {
        return Err(NnError::invalid(format!(
            "var shape {vs:?} must equal input's {xs:?}, end in a dimension of 1, lack the \
             last dimension, or hold one element"
        )));
    }
    Ok(())
}

fn positive_eps(eps: f64) -> NnResult<()> {
    if eps.is_finite() && eps > 0.0 {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "eps must be a finite positive number, but it is {eps}"
        )))
    }
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnGaussianNllLossGetWorkspaceSize(
    input: *const c_void,
    target: *const c_void,
    var: *const c_void,
    full: bool,
    eps: f64,
    reductionOptional: *mut c_char,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGaussianNllLossGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let t = a::tensor(target, "target")?;
            let v = a::tensor(var, "var")?;
            let o = a::tensor(out, "out")?;
            let r = reduction(
                reductionOptional,
                "reductionOptional",
                Some(Reduction::Mean),
            )?;
            for u in [&x, &t, &v, &o] {
                a::dtype_in(u, FLOATS3)?;
                a::same_dtype(u, &x)?;
                a::max_dims(u, 8)?;
            }
            gaussian_shapes(&x, &t, &v)?;
            positive_eps(eps)?;
            loss_out(&o, x.shape(), r)?;
            let mut l = Launch::new("aclnnGaussianNllLoss");
            l.input(&x);
            l.input(&t);
            l.input(&v);
            l.output(&o);
            l.finish(move |w, _| ex::gaussian_nll(&w[0], &w[1], &w[2], full, eps, r, &w[3]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnGaussianNllLossGradGetWorkspaceSize(
    gradOutput: *const c_void,
    input: *const c_void,
    target: *const c_void,
    var: *const c_void,
    full: bool,
    eps: f32,
    reduction_: *const c_char,
    gradInput: *mut c_void,
    gradVar: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    let _ = full; // the constant term has no gradient
    phase1(
        "aclnnGaussianNllLossGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOutput, "gradOutput")?;
            let x = a::tensor(input, "input")?;
            let t = a::tensor(target, "target")?;
            let v = a::tensor(var, "var")?;
            let gx = a::tensor(gradInput, "gradInput")?;
            let gv = a::tensor(gradVar, "gradVar")?;
            let r = reduction(reduction_, "reduction", Some(Reduction::Mean))?;
            for u in [&g, &x, &t, &v, &gx, &gv] {
                a::dtype_in(u, FLOATS3)?;
                a::same_dtype(u, &g)?;
                a::max_dims(u, 8)?;
            }
            gaussian_shapes(&x, &t, &v)?;
            positive_eps(eps as f64)?;
            loss_out(&g, x.shape(), r)?;
            a::same_shape(&gx, x.shape())?;
            a::same_shape(&gv, v.shape())?;
            let mut l = Launch::new("aclnnGaussianNllLossGrad");
            l.input(&g);
            l.input(&x);
            l.input(&t);
            l.input(&v);
            l.output(&gx);
            l.output(&gv);
            let e = eps as f64;
            l.finish(move |w, _| {
                ex::gaussian_nll_grad(&w[0], &w[1], &w[2], &w[3], e, r, &w[4], &w[5])
            })
        },
    )
}

// ---- small tensor operators ----

#[no_mangle]
pub unsafe extern "C" fn aclnnDiagPartGetWorkspaceSize(
    x: *const c_void,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnDiagPartGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let y = a::tensor(y, "y")?;
            a::dtype_in(&x, &[F16, F32, I32])?;
            a::same_dtype(&y, &x)?;
            if x.ndim() != 2 || x.shape()[0] != x.shape()[1] {
                return Err(NnError::invalid(format!(
                    "x must be a square matrix [N, N], but its shape is {:?}",
                    x.shape()
                )));
            }
            a::same_shape(&y, &x.shape()[..1])?;
            let mut l = Launch::new("aclnnDiagPart");
            l.input(&x);
            l.output(&y);
            l.finish(|v, _| npu_emu::ops::math_misc::diag(&v[0], 0, &v[1]))
        },
    )
}

three!(
    aclnnAssignSubGetWorkspaceSize,
    var,
    value,
    varOut,
    |x, y, o| {
        binary(
            "aclnnAssignSub",
            x,
            y,
            o,
            &[F16, I8, F32, I32, U8, BF16, I64],
            Binary::Sub(npu_emu::ops::Scalar::f64(1.0)),
        )
    }
);

#[no_mangle]
pub unsafe extern "C" fn aclnnTensorMoveGetWorkspaceSize(
    x: *const c_void,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTensorMoveGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let y = a::tensor(y, "y")?;
            let types = &[
                F32, F16, BF16, F64, U8, I8, U16, I16, U32, I32, U64, I64, Bool,
            ];
            uniform(&[&x, &y], types)?;
            not_0d(&x)?;
            let mut l = Launch::new("aclnnTensorMove");
            l.input(&x);
            l.output(&y);
            l.finish(|v, _| npu_emu::ops::iter::copy(&v[0], &v[1]))
        },
    )
}

/// AxpyV2: `out = self + alpha * other`. The operator's definition and the documented
/// example take `alpha` as an `aclScalar` (the page's prototype says `aclTensor`); it may
/// differ from `self`'s type, and an INT32 `self` with a floating `alpha` computes in float.
#[no_mangle]
pub unsafe extern "C" fn aclnnAxpyV2GetWorkspaceSize(
    self_: *const c_void,
    other: *const c_void,
    alpha: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAxpyV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let y = a::tensor(other, "other")?;
            let al = a::scalar(alpha, "alpha")?;
            let o = a::tensor(out, "out")?;
            let types = &[F32, F16, BF16, I32];
            uniform(&[&x, &y, &o], types)?;
            a::dtype_of(al.dtype, "alpha", types)?;
            let ct = if x.dtype() == I32 && al.dtype.is_float() {
                F32
            } else {
                compute(x.dtype())
            };
            two_in("aclnnAxpyV2", &x, &y, &o, move |v| {
                math::binary(Binary::Add(al), &v[0], &v[1], &v[2], ct)
            })
        },
    )
}

/// BiasAdd: `out = x + bias` along the channel dimension: dimension 0 of a 1-D `x`; else
/// by `x`'s format (NCHW, NCDHW: dimension 1; NHWC, NDHWC: the last), and for ND by
/// `dataFormatOptional` ("NCHW" or "NCDHW": dimension 1; "NHWC" (the default) or "NDHWC":
/// the last).
#[no_mangle]
pub unsafe extern "C" fn aclnnBiasAddGetWorkspaceSize(
    x: *const c_void,
    bias: *const c_void,
    dataFormatOptional: *mut c_char,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnBiasAddGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let b = a::tensor(bias, "bias")?;
            let o = a::tensor(out, "out")?;
            let fmt = if dataFormatOptional.is_null() {
                "NHWC".to_string()
            } else {
                super::cv19::c_str(dataFormatOptional, "dataFormatOptional")?
            };
            let channel_first = match fmt.as_str() {
                "NCHW" | "NCDHW" => true,
                "NHWC" | "NDHWC" => false,
                f => {
                    return Err(NnError::invalid(format!(
                        "dataFormatOptional \"{f}\" is not supported; NCHW, NHWC, NCDHW or NDHWC"
                    )))
                }
            };
            uniform(&[&x, &o], &[F32, F16, BF16, I32])?;
            not_0d(&x)?;
            a::same_dtype(&b, &x)?;
            let nd = x.ndim();
            let c = match x.format {
                _ if nd == 1 => 0,
                0 | 30 => 1,      // NCHW, NCDHW
                1 | 27 => nd - 1, // NHWC, NDHWC
                _ if channel_first => 1,
                _ => nd - 1,
            };
            if b.ndim() != 1 || b.shape()[0] != x.shape()[c] {
                return Err(NnError::invalid(format!(
                    "bias shape {:?} must be [{}], the size of x's channel dimension {c} (x \
                     shape {:?}, data format {fmt})",
                    b.shape(),
                    x.shape()[c],
                    x.shape()
                )));
            }
            let ct = compute(x.dtype());
            two_in("aclnnBiasAdd", &x, &b, &o, move |v| {
                let mut bv = v[1].clone();
                bv.shape = vec![1; nd];
                bv.strides = vec![0; nd];
                bv.shape[c] = v[1].shape[0];
                bv.strides[c] = v[1].strides[0];
                math::binary(
                    Binary::Add(npu_emu::ops::Scalar::f64(1.0)),
                    &v[0],
                    &bv,
                    &v[2],
                    ct,
                )
            })
        },
    )
}

/// ReduceMinV2: the minimum of a 2-D `x` along `axes` (0 or 1), keeping it as size 1 when
/// `keepdims` is 1.
#[no_mangle]
pub unsafe extern "C" fn aclnnReduceMinV2GetWorkspaceSize(
    x: *const c_void,
    axes: i64,
    keepdims: i64,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnReduceMinV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(x, "x")?;
            let y = a::tensor(y, "y")?;
            a::dtype_in(&x, &[F32, F16])?;
            a::same_dtype(&y, &x)?;
            if x.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "x must be 2-D, but its shape is {:?}",
                    x.shape()
                )));
            }
            if !(0..=1).contains(&axes) || !(0..=1).contains(&keepdims) {
                return Err(NnError::invalid(format!(
                    "axes ({axes}) and keepdims ({keepdims}) must each be 0 or 1"
                )));
            }
            let ax = axes as usize;
            let mut want = x.shape().to_vec();
            if keepdims == 1 {
                want[ax] = 1;
            } else {
                want.remove(ax);
            }
            a::same_shape(&y, &want)?;
            if x.shape()[ax] == 0 {
                return Err(NnError::invalid(
                    "x is empty along axes: a minimum has no value",
                ));
            }
            let mut l = Launch::new("aclnnReduceMinV2");
            l.input(&x);
            l.output(&y);
            l.finish(move |v, _| {
                npu_emu::ops::reduce::reduce(
                    npu_emu::ops::reduce::Reduce::Min,
                    &v[0],
                    &[ax],
                    &v[1],
                    false,
                )
            })
        },
    )
}

/// ApplyGradientDescent: `var -= alpha * delta` in place, `alpha` a one-element tensor.
#[no_mangle]
pub unsafe extern "C" fn aclnnApplyGradientDescentGetWorkspaceSize(
    var: *mut c_void,
    alpha: *const c_void,
    delta: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnApplyGradientDescentGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let v = a::tensor(var, "var")?;
            let al = a::tensor(alpha, "alpha")?;
            let d = a::tensor(delta, "delta")?;
            uniform(&[&v, &d], FLOATS3)?;
            not_0d(&v)?;
            a::same_dtype(&al, &v)?;
            if al.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "alpha must hold one element, but its shape is {:?}",
                    al.shape()
                )));
            }
            let mut l = Launch::new("aclnnApplyGradientDescent");
            l.input(&al);
            l.input(&d);
            l.output(&v);
            l.finish(|w, _| {
                let mut al = w[0].clone();
                al.shape.clear();
                al.strides.clear();
                ex::gradient_descent(&w[2], &al, &w[1])
            })
        },
    )
}

crate::phase2!(
    aclnnTanhGrad,
    aclnnAsinGrad,
    aclnnAcoshGrad,
    aclnnSoftmaxGrad,
    aclnnFloorDiv,
    aclnnRealDiv,
    aclnnTruncateDiv,
    aclnnTruncateMod,
    aclnnReluGradV3,
    aclnnReluGradV4,
    aclnnEluV2,
    aclnnHuberLoss,
    aclnnHingeLoss,
    aclnnHingeEmbeddingLoss,
    aclnnLpLoss,
    aclnnMseLossGrad,
    aclnnMseLossOut,
    aclnnGaussianNllLoss,
    aclnnGaussianNllLossGrad,
    aclnnDiagPart,
    aclnnAssignSub,
    aclnnTensorMove,
    aclnnAxpyV2,
    aclnnBiasAdd,
    aclnnReduceMinV2,
    aclnnApplyGradientDescent,
);
