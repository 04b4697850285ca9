//! Layer norm and embedding: `aclnn_layer_norm.h` (LayerNorm, FastLayerNorm,
//! LayerNormWithImplMode), `aclnn_layer_norm_backward.h`, `aclnn_embedding.h`,
//! `aclnn_embedding_dense_backward.h`, `aclnn_instance_norm.h` (InstanceNorm: the reference
//! lists it for the Atlas inference series only; npu-emu offers it on every SoC).
//!
//! LayerNorm normalises over the trailing `normalizedShape` dimensions, in float64 per row;
//! `meanOut`/`rstdOut` (optional) have the leading dimensions followed by ones.

use super::args::{self as a, FLOATS, INDEX};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::nn;
use std::ffi::c_void;

fn norm_dims(x: &a::T, ns: &[i64]) -> NnResult<usize> {
    let k = ns.len();
    if k == 0 || k > x.ndim() {
        return Err(NnError::invalid(format!(
            "normalizedShape {ns:?} must have 1 to {} dimensions",
            x.ndim()
        )));
    }
    let tail: Vec<i64> = x.shape()[x.ndim() - k..]
        .iter()
        .map(|&d| d as i64)
        .collect();
    if tail != ns {
        return Err(NnError::invalid(format!(
            "normalizedShape {ns:?} must be the trailing dimensions of input {:?}",
            x.shape()
        )));
    }
    Ok(k)
}

fn stat_shape(x: &a::T, k: usize) -> Vec<usize> {
    let mut s = x.shape()[..x.ndim() - k].to_vec();
    s.extend(std::iter::repeat_n(1, k));
    s
}

#[allow(clippy::too_many_arguments)]
fn layer_norm(
    api: &'static str,
    input: *const c_void,
    ns: *const c_void,
    w: *const c_void,
    b: *const c_void,
    eps: f64,
    out: *mut c_void,
    mean: *mut c_void,
    rstd: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(input, "input")?;
    let ns = a::int_array(ns, "normalizedShape")?;
    let w = a::opt_tensor(w, "weightOptional")?;
    let b = a::opt_tensor(b, "biasOptional")?;
    let o = a::tensor(out, "out")?;
    let m = a::opt_tensor(mean, "meanOutOptional")?;
    let r = a::opt_tensor(rstd, "rstdOutOptional")?;
    a::dtype_in(&x, FLOATS)?;
    a::dtype_in(&o, FLOATS)?;
    let k = norm_dims(&x, &ns)?;
    let nshape: Vec<usize> = x.shape()[x.ndim() - k..].to_vec();
    for t in [&w, &b].into_iter().flatten() {
        a::dtype_in(t, FLOATS)?;
        a::same_shape(t, &nshape)?;
    }
    a::same_shape(&o, x.shape())?;
    let ss = stat_shape(&x, k);
    for t in [&m, &r].into_iter().flatten() {
        a::dtype_in(t, FLOATS)?;
        // CANN checks these shapes only on Ascend 950, and takes an empty one there too
        // (torch_npu passes shape [0] for an empty input)
        if t.numel() > 0 || x.numel() > 0 {
            a::same_shape(t, &ss)?;
        }
    }
    let mut l = Launch::new(api);
    l.input(&x);
    let (hw, hb) = (w.is_some(), b.is_some());
    for t in [&w, &b].into_iter().flatten() {
        l.input(t);
    }
    l.output(&o);
    let (hm, hr) = (m.is_some(), r.is_some());
    for t in [&m, &r].into_iter().flatten() {
        l.output(t);
    }
    l.finish(move |v, _| {
        let mut i = 1;
        let wv = if hw {
            i += 1;
            Some(&v[i - 1])
        } else {
            None
        };
        let bv = if hb {
            i += 1;
            Some(&v[i - 1])
        } else {
            None
        };
        let ov = &v[i];
        i += 1;
        let mv = if hm {
            i += 1;
            Some(&v[i - 1])
        } else {
            None
        };
        let rv = if hr { Some(&v[i]) } else { None };
        nn::layer_norm(&v[0], k, wv, bv, eps, ov, mv, rv)
    })
}

macro_rules! ln {
    ($get:ident, $api:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            input: *const c_void,
            normalizedShape: *const c_void,
            weightOptional: *const c_void,
            biasOptional: *const c_void,
            eps: f64,
            out: *mut c_void,
            meanOutOptional: *mut c_void,
            rstdOutOptional: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                layer_norm(
                    $api,
                    input,
                    normalizedShape,
                    weightOptional,
                    biasOptional,
                    eps,
                    out,
                    meanOutOptional,
                    rstdOutOptional,
                )
            })
        }
    };
}
ln!(aclnnLayerNormGetWorkspaceSize, "aclnnLayerNorm");
ln!(aclnnFastLayerNormGetWorkspaceSize, "aclnnFastLayerNorm");

#[no_mangle]
pub unsafe extern "C" fn aclnnLayerNormWithImplModeGetWorkspaceSize(
    input: *const c_void,
    normalizedShape: *const c_void,
    weightOptional: *const c_void,
    biasOptional: *const c_void,
    eps: f64,
    out: *mut c_void,
    meanOutOptional: *mut c_void,
    rstdOutOptional: *mut c_void,
    implMode: i32,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLayerNormWithImplModeGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            if !(0..=2).contains(&implMode) {
                return Err(NnError::invalid(format!(
                "implMode {implMode} is not supported; 0 (high precision), 1 (high performance) or 2 (keep fp16)"
            )));
            }
            layer_norm(
                "aclnnLayerNormWithImplMode",
                input,
                normalizedShape,
                weightOptional,
                biasOptional,
                eps,
                out,
                meanOutOptional,
                rstdOutOptional,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLayerNormBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    input: *const c_void,
    normalizedShape: *const c_void,
    mean: *const c_void,
    rstd: *const c_void,
    weightOptional: *const c_void,
    biasOptional: *const c_void,
    outputMask: *const c_void,
    gradInputOut: *mut c_void,
    gradWeightOut: *mut c_void,
    gradBiasOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLayerNormBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let x = a::tensor(input, "input")?;
            let ns = a::int_array(normalizedShape, "normalizedShape")?;
            let m = a::tensor(mean, "mean")?;
            let r = a::tensor(rstd, "rstd")?;
            let w = a::opt_tensor(weightOptional, "weightOptional")?;
            let _b = a::opt_tensor(biasOptional, "biasOptional")?;
            let mask = a::bool_array(outputMask, "outputMask")?;
            if mask.len() != 3 {
                return Err(NnError::invalid(format!(
                    "outputMask must have 3 values, it has {}",
                    mask.len()
                )));
            }
            let gx = if mask[0] {
                Some(a::tensor(gradInputOut, "gradInputOut")?)
            } else {
                a::opt_tensor(gradInputOut, "gradInputOut")?.filter(|_| false)
            };
            let gw = if mask[1] {
                Some(a::tensor(gradWeightOut, "gradWeightOut")?)
            } else {
                None
            };
            let gb = if mask[2] {
                Some(a::tensor(gradBiasOut, "gradBiasOut")?)
            } else {
                None
            };
            a::dtype_in(&x, FLOATS)?;
            a::dtype_in(&g, FLOATS)?;
            let k = norm_dims(&x, &ns)?;
            a::same_shape(&g, x.shape())?;
            let ss = stat_shape(&x, k);
            if m.numel() != ss.iter().product::<usize>() || r.numel() != m.numel() {
                return Err(NnError::invalid(format!(
                    "mean and rstd must have shape {ss:?}"
                )));
            }
            let nshape: Vec<usize> = x.shape()[x.ndim() - k..].to_vec();
            if let Some(t) = &gx {
                a::same_shape(t, x.shape())?;
            }
            for t in [&gw, &gb, &w].into_iter().flatten() {
                a::same_shape(t, &nshape)?;
            }
            let mut l = Launch::new("aclnnLayerNormBackward");
            l.input(&g);
            l.input(&x);
            l.input(&m);
            l.input(&r);
            let hw = w.is_some();
            if let Some(w) = &w {
                l.input(w);
            }
            let (hx, hgw, hgb) = (gx.is_some(), gw.is_some(), gb.is_some());
            for t in [&gx, &gw, &gb].into_iter().flatten() {
                l.output(t);
            }
            l.finish(move |v, _| {
                let mut i = 4;
                let wv = if hw {
                    i += 1;
                    Some(&v[i - 1])
                } else {
                    None
                };
                let gxv = if hx {
                    i += 1;
                    Some(&v[i - 1])
                } else {
                    None
                };
                let gwv = if hgw {
                    i += 1;
                    Some(&v[i - 1])
                } else {
                    None
                };
                let gbv = if hgb { Some(&v[i]) } else { None };
                let flat = |t: &npu_emu::ops::View| npu_emu::ops::View {
                    shape: vec![t.numel(), 1],
                    strides: vec![1, 1],
                    ..t.clone()
                };
                // mean/rstd may be any shape of the right size: read them as [rows, 1]
                let (mf, rf) = (flat(&v[2]), flat(&v[3]));
                nn::layer_norm_backward(&v[0], &v[1], k, &mf, &rf, wv, gxv, gwv, gbv)
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnEmbeddingGetWorkspaceSize(
    weight: *const c_void,
    indices: *const c_void,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEmbeddingGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let w = a::tensor(weight, "weight")?;
            let i = a::tensor(indices, "indices")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&i, INDEX)?;
            if w.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "weight must be 2-D, but its shape is {:?}",
                    w.shape()
                )));
            }
            let mut want = i.shape().to_vec();
            want.push(w.shape()[1]);
            a::same_shape(&o, &want)?;
            if o.dtype() != w.dtype() {
                return Err(NnError::invalid(format!(
                    "out data type {} must be weight's {}",
                    o.dtype(),
                    w.dtype()
                )));
            }
            let mut l = Launch::new("aclnnEmbedding");
            l.input(&w);
            l.input(&i);
            l.output(&o);
            l.finish(|v, _| nn::embedding(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnEmbeddingDenseBackwardGetWorkspaceSize(
    grad: *const c_void,
    indices: *const c_void,
    numWeights: u64,
    paddingIdx: u64,
    scaleGradByFreq: bool,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnEmbeddingDenseBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(grad, "grad")?;
            let i = a::tensor(indices, "indices")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&g, FLOATS)?;
            a::dtype_in(&i, INDEX)?;
            a::dtype_in(&o, FLOATS)?;
            let d = *g.shape().last().unwrap_or(&0);
            if g.ndim() != i.ndim() + 1 || g.shape()[..i.ndim()] != *i.shape() {
                return Err(NnError::invalid(format!(
                    "grad shape {:?} must be indices shape {:?} plus one dimension",
                    g.shape(),
                    i.shape()
                )));
            }
            a::same_shape(&o, &[numWeights as usize, d])?;
            let pad = paddingIdx as i64;
            let mut l = Launch::new("aclnnEmbeddingDenseBackward");
            l.input(&g);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| {
                nn::embedding_dense_backward(&v[0], &v[1], pad, scaleGradByFreq, &v[2])
            })
        },
    )
}

crate::phase2!(
    aclnnLayerNorm,
    aclnnFastLayerNorm,
    aclnnLayerNormWithImplMode,
    aclnnLayerNormBackward,
    aclnnEmbedding,
    aclnnEmbeddingDenseBackward
);

// ---- InstanceNorm ----

/// `y = (x - mean) / sqrt(variance + eps) * gamma + beta` per (n, c) plane of a 4-D `x`
/// laid out as `dataFormat` ("NCHW" or "NHWC"); `gamma`, `beta` are `[C]`; `mean` and
/// `variance` (the biased variance) are `[N, C, 1, 1]` (NHWC: `[N, 1, 1, C]`). FLOAT or
/// FLOAT16, all of one data type.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnInstanceNormGetWorkspaceSize(
    x: *const c_void,
    gamma: *const c_void,
    beta: *const c_void,
    dataFormat: *const std::ffi::c_char,
    eps: f64,
    y: *mut c_void,
    mean: *mut c_void,
    variance: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnInstanceNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let g = a::tensor(gamma, "gamma")?;
            let b = a::tensor(beta, "beta")?;
            if dataFormat.is_null() {
                return Err(NnError::nullptr("dataFormat is nullptr"));
            }
            // SAFETY: a NUL-terminated string from the caller (checked non-null).
            let fmt = unsafe { std::ffi::CStr::from_ptr(dataFormat) }.to_string_lossy();
            let yt = a::tensor(y, "y")?;
            let m = a::tensor(mean, "mean")?;
            let v = a::tensor(variance, "variance")?;
            let nhwc = match fmt.as_ref() {
                "NCHW" => false,
                "NHWC" => true,
                f => {
                    return Err(NnError::invalid(format!(
                        "dataFormat {f:?} is not supported; supported: \"NCHW\", \"NHWC\""
                    )))
                }
            };
            a::dtype_in(&xt, &[npu_emu::ops::DType::F32, npu_emu::ops::DType::F16])?;
            for t in [&g, &b, &yt, &m, &v] {
                if t.dtype() != xt.dtype() {
                    return Err(NnError::invalid(format!(
                        "{} data type {} must be x's {}",
                        t.arg,
                        t.dtype(),
                        xt.dtype()
                    )));
                }
            }
            if xt.ndim() != 4 {
                return Err(NnError::invalid(format!(
                    "x must be 4-D, but its shape is {:?}",
                    xt.shape()
                )));
            }
            let s = xt.shape();
            let (n, c) = (s[0], if nhwc { s[3] } else { s[1] });
            a::same_shape(&g, &[c])?;
            a::same_shape(&b, &[c])?;
            a::same_shape(&yt, s)?;
            let stat = if nhwc { [n, 1, 1, c] } else { [n, c, 1, 1] };
            a::same_shape(&m, &stat)?;
            a::same_shape(&v, &stat)?;
            if eps.is_nan() || eps < 0.0 {
                return Err(NnError::invalid(format!("eps {eps} must be >= 0")));
            }
            let mut l = Launch::new("aclnnInstanceNorm");
            l.input(&xt);
            l.input(&g);
            l.input(&b);
            l.output(&yt);
            l.output(&m);
            l.output(&v);
            l.finish(move |w, _| {
                nn::instance_norm(&w[0], &w[1], &w[2], nhwc, eps, &w[3], &w[4], &w[5])
            })
        },
    )
}

crate::phase2!(aclnnInstanceNorm);
