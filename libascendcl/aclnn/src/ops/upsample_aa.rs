//! `aclnn_upsample_nearest_exact3d.h`, `aclnn_upsample_nearest_exact3d_backward.h`,
//! `aclnn_upsample_bilinear2d_aa.h`, `aclnn_upsample_bilinear2d_aa_backward.h`,
//! `aclnn_upsample_bicubic2d_aa.h` and `aclnn_upsample_bicubic2d_aa_grad.h`: what torch_npu
//! calls for `F.interpolate(mode="nearest-exact")` on 5-D input and for
//! `F.interpolate(mode="bilinear" / "bicubic", antialias=True)`, and their gradients.
//!
//! NearestExact3d reuses the nearest engine of `npu_emu::ops::extra` (source index
//! `min(floor((o + 0.5) r), in - 1)`, `r = 1 / scale` for a scale > 0, else `in / out`);
//! the anti-aliased modes are `npu_emu::ops::upsample_aa` (PyTorch's separable filter).
//! Shapes: `self` `[N, C, *in]`, `outputSize` the output's spatial sizes, `inputSize`
//! (backward) the full shape of the gradient produced.

use super::args::{self as a, FLOATS, FLOATS3};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::extra;
use npu_emu::ops::upsample_aa::{self as engine, Filter};
use std::ffi::c_void;

/// NearestExact3d forward types (FLOAT, FLOAT16, BFLOAT16, DOUBLE, UINT8).
const EXACT_TYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::F64, DType::U8];

/// `v` must have `k` entries, each > 0.
fn positive(v: &[i64], k: usize, arg: &str) -> NnResult<Vec<usize>> {
    if v.len() != k || v.iter().any(|&s| s <= 0) {
        return Err(NnError::invalid(format!(
            "{arg} must have {k} elements, each > 0, but it is {v:?}"
        )));
    }
    Ok(v.iter().map(|&s| s as usize).collect())
}

fn given(scale: f64) -> Option<f64> {
    (scale > 0.0).then_some(scale)
}

/// Shared forward checks: `self` `[N, C, *spatial]` (k spatial, none empty), `out` of
/// self's type and shape `[N, C, *outputSize]`.
fn forward_io(
    self_: *const c_void,
    output_size: *const c_void,
    out: *mut c_void,
    k: usize,
    types: &[DType],
) -> NnResult<(a::T, a::T, Vec<usize>)> {
    let x = a::tensor(self_, "self")?;
    let os = a::int_array(output_size, "outputSize")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, types)?;
    a::same_dtype(&o, &x)?;
    if x.ndim() != k + 2 || x.shape()[2..].contains(&0) {
        return Err(NnError::invalid(format!(
            "self must be {}-D with non-empty spatial dimensions, but its shape is {:?}",
            k + 2,
            x.shape()
        )));
    }
    let os = positive(&os, k, "outputSize")?;
    let mut want = x.shape()[..2].to_vec();
    want.extend(&os);
    a::same_shape(&o, &want)?;
    Ok((x, o, os))
}

/// Shared backward checks: `inputSize` `[N, C, *spatial]`, `gradOutput` `[N, C,
/// *outputSize]`, the result of gradOutput's type and shape `inputSize`.
#[allow(clippy::too_many_arguments)]
fn backward_io(
    grad_out: *const c_void,
    g_arg: &'static str,
    output_size: *const c_void,
    input_size: *const c_void,
    grad_in: *mut c_void,
    gi_arg: &'static str,
    k: usize,
    types: &[DType],
) -> NnResult<(a::T, a::T, Vec<usize>, Vec<usize>)> {
    let g = a::tensor(grad_out, g_arg)?;
    let os = a::int_array(output_size, "outputSize")?;
    let is = a::int_array(input_size, "inputSize")?;
    let gi = a::tensor(grad_in, gi_arg)?;
    a::dtype_in(&g, types)?;
    a::same_dtype(&gi, &g)?;
    let os = positive(&os, k, "outputSize")?;
    if is.len() != k + 2 || is.iter().any(|&s| s < 0) || is[2..].contains(&0) {
        return Err(NnError::invalid(format!(
            "inputSize must have {} elements (N, C and the spatial sizes > 0), but it is {is:?}",
            k + 2
        )));
    }
    let is: Vec<usize> = is.iter().map(|&s| s as usize).collect();
    let mut gwant = is[..2].to_vec();
    gwant.extend(&os);
    a::same_shape(&g, &gwant)?;
    a::same_shape(&gi, &is)?;
    Ok((g, gi, os, is))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearestExact3dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    scalesD: f64,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearestExact3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (x, o, os) = forward_io(self_, outputSize, out, 3, EXACT_TYPES)?;
            let s = [scalesD, scalesH, scalesW];
            let r: Vec<f64> = (0..3)
                .map(|j| extra::nearest_scale(x.shape()[2 + j], os[j], given(s[j])))
                .collect();
            let mut l = Launch::new("aclnnUpsampleNearestExact3d");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| extra::upsample_nearest_mode(&v[0], &r, true, &v[1]))
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearestExact3dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    scalesD: f64,
    scalesH: f64,
    scalesW: f64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearestExact3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let (g, gi, os, is) = backward_io(
                gradOut,
                "gradOut",
                outputSize,
                inputSize,
                gradInput,
                "gradInput",
                3,
                FLOATS,
            )?;
            let s = [scalesD, scalesH, scalesW];
            let r: Vec<f64> = (0..3)
                .map(|j| extra::nearest_scale(is[2 + j], os[j], given(s[j])))
                .collect();
            let mut l = Launch::new("aclnnUpsampleNearestExact3dBackward");
            l.input(&g);
            l.output(&gi);
            l.finish(move |v, _| extra::upsample_nearest_backward_mode(&v[0], &r, true, &v[1]))
        },
    )
}

fn aa_forward(
    api: &'static str,
    f: Filter,
    self_: *const c_void,
    output_size: *const c_void,
    align_corners: bool,
    scales: [f64; 2],
    out: *mut c_void,
) -> NnResult<Built> {
    let (x, o, os) = forward_io(self_, output_size, out, 2, FLOATS3)?;
    let r =
        [0, 1].map(|j| engine::aa_scale(x.shape()[2 + j], os[j], align_corners, given(scales[j])));
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| engine::upsample_aa2d(&v[0], f, r, &v[1]))
}

#[allow(clippy::too_many_arguments)]
fn aa_backward(
    api: &'static str,
    f: Filter,
    grad_out: *const c_void,
    output_size: *const c_void,
    input_size: *const c_void,
    align_corners: bool,
    scales: [f64; 2],
    out: *mut c_void,
) -> NnResult<Built> {
    let (g, gi, os, is) = backward_io(
        grad_out,
        "gradOutput",
        output_size,
        input_size,
        out,
        "out",
        2,
        FLOATS3,
    )?;
    let r = [0, 1].map(|j| engine::aa_scale(is[2 + j], os[j], align_corners, given(scales[j])));
    let mut l = Launch::new(api);
    l.input(&g);
    l.output(&gi);
    l.finish(move |v, _| engine::upsample_aa2d_backward(&v[0], f, r, &v[1]))
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleBilinear2dAAGetWorkspaceSize(
    input: *const c_void,
    outputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBilinear2dAAGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            aa_forward(
                "aclnnUpsampleBilinear2dAA",
                Filter::Bilinear,
                input,
                outputSize,
                alignCorners,
                [scalesH, scalesW],
                out,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleBilinear2dAABackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBilinear2dAABackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            aa_backward(
                "aclnnUpsampleBilinear2dAABackward",
                Filter::Bilinear,
                gradOutput,
                outputSize,
                inputSize,
                alignCorners,
                [scalesH, scalesW],
                out,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleBicubic2dAAGetWorkspaceSize(
    x: *const c_void,
    outputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBicubic2dAAGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            aa_forward(
                "aclnnUpsampleBicubic2dAA",
                Filter::Bicubic,
                x,
                outputSize,
                alignCorners,
                [scalesH, scalesW],
                out,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleBicubic2dAAGradGetWorkspaceSize(
    gradOutput: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBicubic2dAAGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            aa_backward(
                "aclnnUpsampleBicubic2dAAGrad",
                Filter::Bicubic,
                gradOutput,
                outputSize,
                inputSize,
                alignCorners,
                [scalesH, scalesW],
                out,
            )
        },
    )
}

crate::phase2!(
    aclnnUpsampleNearestExact3d,
    aclnnUpsampleNearestExact3dBackward,
    aclnnUpsampleBilinear2dAA,
    aclnnUpsampleBilinear2dAABackward,
    aclnnUpsampleBicubic2dAA,
    aclnnUpsampleBicubic2dAAGrad
);
