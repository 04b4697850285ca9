//! Nearest-neighbour upsampling over `npu_emu::ops::extra`: `aclnn_upsample_nearest_1d.h`,
//! `aclnn_upsample_nearest_1d_v2.h`, `aclnn_upsample_nearest_1d_backward.h`,
//! `aclnn_upsample_nearest_2d.h`, `aclnn_upsample_nearest_2d_v2.h`,
//! `aclnn_upsample_nearest_2d_backward.h`, `aclnn_upsample_nearest_3d.h`,
//! `aclnn_upsample_nearest_3d_backward.h`, `aclnn_upsample_nearest_exact1d.h`,
//! `aclnn_upsample_nearest_exact2d.h` and their backward forms.
//!
//! `self` is `[N, C, L]` (1-D), `[N, C, H, W]` (2-D, NCHW) or `[N, C, D, H, W]` (3-D; NCDHW
//! or ND, or `[N, D, H, W, C]` in format NDHWC, read as NCDHW); `outputSize` gives the output's
//! spatial sizes (each > 0); `out` is `[N, C, *outputSize]` with `self`'s data type. The
//! source of output index `o` is `min(floor(o * r), in - 1)` (exact: `floor((o + 0.5) * r)`),
//! where `r` is `1 / scale` when a scale > 0 is given (torch_npu passes PyTorch's
//! `scale_factor`, or -1 / 0 for none) and `in / out` otherwise. The backward forms take
//! `gradOut` (`[N, C, *outputSize]`), `outputSize`, `inputSize` (`[N, C, *spatial]`, the
//! shape of the gradient produced) and sum the output gradients into the input positions
//! they were read from.
//!
//! Linear modes (`aclnn_upsample_linear_1d.h`, `aclnn_upsample_linear_1d_backward.h`,
//! `aclnn_upsample_bilinear_2d.h`, `aclnn_upsample_bilinear_2d_backward.h`): FLOAT,
//! FLOAT16 or BFLOAT16, PyTorch's source positions (`alignCorners` maps the corner pixels
//! onto each other; otherwise pixel centres, with the scale `1 / scales` when a scale > 0 is
//! given, else `in / out`), each output the weighted sum of its two (four) neighbours.

use super::args::{self as a, FLOATS, FLOATS3};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::extra;
use std::ffi::c_void;

/// Forward data types (FLOAT, BFLOAT16, FLOAT16, DOUBLE, UINT8).
const FWD_TYPES: &[DType] = &[DType::F32, DType::BF16, DType::F16, DType::F64, DType::U8];

/// `sizes` must have `k` entries, each > 0.
fn sizes(v: &[i64], k: usize, arg: &str) -> NnResult<Vec<usize>> {
    if v.len() != k || v.iter().any(|&s| s <= 0) {
        return Err(NnError::invalid(format!(
            "{arg} must have {k} element(s), each > 0, but it is {v:?}"
        )));
    }
    Ok(v.iter().map(|&s| s as usize).collect())
}

fn same_dtype(o: &a::T, x: &a::T) -> NnResult<()> {
    if o.dtype() != x.dtype() {
        return Err(NnError::invalid(format!(
            "{} data type {} must be {}'s {}",
            o.arg,
            o.dtype(),
            x.arg,
            x.dtype()
        )));
    }
    Ok(())
}

/// A 5-D tensor in format NDHWC (`ACL_FORMAT_NDHWC`, 27) seen as NCDHW (its dimensions
/// permuted, the memory unchanged); every other tensor as it is (ND means NCDHW).
fn channels_first(mut t: a::T) -> a::T {
    if t.format == 27 && t.ndim() == 5 {
        let l = &mut t.layout;
        l.shape = [0, 4, 1, 2, 3].iter().map(|&d| l.shape[d]).collect();
        l.strides = [0, 4, 1, 2, 3].iter().map(|&d| l.strides[d]).collect();
    }
    t
}

/// `scale` as given to a V2/exact call: `Some` when > 0.
fn given(scale: f64) -> Option<f64> {
    (scale > 0.0).then_some(scale)
}

fn nearest(
    api: &'static str,
    self_: *const c_void,
    output_size: *const c_void,
    scales: &[f64],
    exact: bool,
    out: *mut c_void,
) -> NnResult<Built> {
    let k = scales.len();
    let x = channels_first(a::tensor(self_, "self")?);
    let os = a::int_array(output_size, "outputSize")?;
    let o = channels_first(a::tensor(out, "out")?);
    a::dtype_in(&x, FWD_TYPES)?;
    same_dtype(&o, &x)?;
    if x.ndim() != k + 2 {
        return Err(NnError::invalid(format!(
            "self must be {}-D, but its shape is {:?}",
            k + 2,
            x.shape()
        )));
    }
    if x.shape()[2..].contains(&0) {
        return Err(NnError::invalid(format!(
            "self {:?} has an empty spatial dimension",
            x.shape()
        )));
    }
    let os = sizes(&os, k, "outputSize")?;
    let mut want = x.shape()[..2].to_vec();
    want.extend(&os);
    a::same_shape(&o, &want)?;
    let r: Vec<f64> = (0..k)
        .map(|j| extra::nearest_scale(x.shape()[2 + j], os[j], given(scales[j])))
        .collect();
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| extra::upsample_nearest_mode(&v[0], &r, exact, &v[1]))
}

#[allow(clippy::too_many_arguments)]
fn nearest_backward(
    api: &'static str,
    grad_out: *const c_void,
    output_size: *const c_void,
    input_size: *const c_void,
    scales: &[f64],
    exact: bool,
    types: &[DType],
    grad_input: *mut c_void,
    out_arg: &'static str,
) -> NnResult<Built> {
    let k = scales.len();
    let g = channels_first(a::tensor(
        grad_out,
        if out_arg == "out" {
            "gradOutput"
        } else {
            "gradOut"
        },
    )?);
    let os = a::int_array(output_size, "outputSize")?;
    let is = a::int_array(input_size, "inputSize")?;
    let o = channels_first(a::tensor(grad_input, out_arg)?);
    a::dtype_in(&g, types)?;
    same_dtype(&o, &g)?;
    let os = sizes(&os, k, "outputSize")?;
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
    a::same_shape(&o, &is)?;
    let r: Vec<f64> = (0..k)
        .map(|j| extra::nearest_scale(is[2 + j], os[j], given(scales[j])))
        .collect();
    let mut l = Launch::new(api);
    l.input(&g);
    l.output(&o);
    l.finish(move |v, _| extra::upsample_nearest_backward_mode(&v[0], &r, exact, &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearest1dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearest1dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            nearest(
                "aclnnUpsampleNearest1d",
                self_,
                outputSize,
                &[0.0],
                false,
                out,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearest1dV2GetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    scaleL: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearest1dV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [scaleL as f64];
            nearest(
                "aclnnUpsampleNearest1dV2",
                self_,
                outputSize,
                &s,
                false,
                out,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearest1dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    scales: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearest1dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            nearest_backward(
                "aclnnUpsampleNearest1dBackward",
                gradOut,
                outputSize,
                inputSize,
                &[scales],
                false,
                FLOATS,
                out,
                "gradInput",
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearest2dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearest2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [0.0, 0.0];
            nearest("aclnnUpsampleNearest2d", self_, outputSize, &s, false, out)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearest2dV2GetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    scalesH: f32,
    scalesW: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearest2dV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [scalesH as f64, scalesW as f64];
            nearest(
                "aclnnUpsampleNearest2dV2",
                self_,
                outputSize,
                &s,
                false,
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleNearest2dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    scalesH: f64,
    scalesW: f64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearest2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            nearest_backward(
                "aclnnUpsampleNearest2dBackward",
                gradOut,
                outputSize,
                inputSize,
                &[scalesH, scalesW],
                false,
                FLOATS3,
                gradInput,
                "gradInput",
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearestExact1dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    scales: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearestExact1dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [scales];
            nearest(
                "aclnnUpsampleNearestExact1d",
                self_,
                outputSize,
                &s,
                true,
                out,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    scales: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            nearest_backward(
                "aclnnUpsampleNearestExact1dBackward",
                gradOutput,
                outputSize,
                inputSize,
                &[scales],
                true,
                FLOATS,
                out,
                "out",
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleNearestExact2dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearestExact2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [scalesH, scalesW];
            nearest(
                "aclnnUpsampleNearestExact2d",
                self_,
                outputSize,
                &s,
                true,
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleNearestExact2dBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleNearestExact2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            nearest_backward(
                "aclnnUpsampleNearestExact2dBackward",
                gradOutput,
                outputSize,
                inputSize,
                &[scalesH, scalesW],
                true,
                FLOATS3,
                out,
                "out",
            )
        },
    )
}

fn linear(
    api: &'static str,
    self_: *const c_void,
    output_size: *const c_void,
    align: bool,
    scales: &[f64],
    out: *mut c_void,
) -> NnResult<Built> {
    let k = scales.len();
    let x = a::tensor(self_, "self")?;
    let os = a::int_array(output_size, "outputSize")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, FLOATS3)?;
    same_dtype(&o, &x)?;
    if x.ndim() != k + 2 || x.shape()[2..].contains(&0) {
        return Err(NnError::invalid(format!(
            "self must be {}-D with non-empty spatial dimensions, but its shape is {:?}",
            k + 2,
            x.shape()
        )));
    }
    let os = sizes(&os, k, "outputSize")?;
    let mut want = x.shape()[..2].to_vec();
    want.extend(&os);
    a::same_shape(&o, &want)?;
    let sc: Vec<Option<f64>> = scales.iter().map(|&s| given(s)).collect();
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| extra::upsample_linear(&v[0], &sc, align, &v[1]))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn linear_backward(
    api: &'static str,
    grad_out: *const c_void,
    output_size: *const c_void,
    input_size: *const c_void,
    align: bool,
    scales: &[f64],
    out: *mut c_void,
) -> NnResult<Built> {
    let k = scales.len();
    let g = a::tensor(grad_out, "gradOut")?;
    let os = a::int_array(output_size, "outputSize")?;
    let is = a::int_array(input_size, "inputSize")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&g, FLOATS3)?;
    same_dtype(&o, &g)?;
    let os = sizes(&os, k, "outputSize")?;
    let is = sizes(&is, k + 2, "inputSize")?;
    let mut gwant = is[..2].to_vec();
    gwant.extend(&os);
    a::same_shape(&g, &gwant)?;
    a::same_shape(&o, &is)?;
    let sc: Vec<Option<f64>> = scales.iter().map(|&s| given(s)).collect();
    let mut l = Launch::new(api);
    l.input(&g);
    l.output(&o);
    l.finish(move |v, _| extra::upsample_linear_backward(&v[0], &sc, align, &v[1]))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleLinear1dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    alignCorners: bool,
    scales: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleLinear1dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [scales];
            linear(
                "aclnnUpsampleLinear1d",
                self_,
                outputSize,
                alignCorners,
                &s,
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleLinear1dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    alignCorners: bool,
    scales: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleLinear1dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            linear_backward(
                "aclnnUpsampleLinear1dBackward",
                gradOut,
                outputSize,
                inputSize,
                alignCorners,
                &[scales],
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleBilinear2dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBilinear2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let s = [scalesH, scalesW];
            linear(
                "aclnnUpsampleBilinear2d",
                self_,
                outputSize,
                alignCorners,
                &s,
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleBilinear2dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
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
        "aclnnUpsampleBilinear2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            linear_backward(
                "aclnnUpsampleBilinear2dBackward",
                gradOut,
                outputSize,
                inputSize,
                alignCorners,
                &[scalesH, scalesW],
                out,
            )
        },
    )
}

crate::phase2!(
    aclnnUpsampleLinear1d,
    aclnnUpsampleLinear1dBackward,
    aclnnUpsampleBilinear2d,
    aclnnUpsampleBilinear2dBackward,
);

crate::phase2!(
    aclnnUpsampleNearest1d,
    aclnnUpsampleNearest1dV2,
    aclnnUpsampleNearest1dBackward,
    aclnnUpsampleNearest2d,
    aclnnUpsampleNearest2dV2,
    aclnnUpsampleNearest2dBackward,
    aclnnUpsampleNearestExact1d,
    aclnnUpsampleNearestExact1dBackward,
    aclnnUpsampleNearestExact2d,
    aclnnUpsampleNearestExact2dBackward,
);

// ---- UpsampleNearest3d ----

/// The 3-D forms' data type check (FLOAT, FLOAT16, BFLOAT16, DOUBLE).
fn floats(h: *const c_void, arg: &'static str) -> NnResult<()> {
    a::dtype_in(&a::tensor(h, arg)?, FLOATS)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleNearest3dGetWorkspaceSize(
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
        "aclnnUpsampleNearest3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            floats(self_, "self")?;
            nearest(
                "aclnnUpsampleNearest3d",
                self_,
                outputSize,
                &[scalesD, scalesH, scalesW],
                false,
                out,
            )
        },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnUpsampleNearest3dBackwardGetWorkspaceSize(
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
        "aclnnUpsampleNearest3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            floats(gradOut, "gradOut")?;
            nearest_backward(
                "aclnnUpsampleNearest3dBackward",
                gradOut,
                outputSize,
                inputSize,
                &[scalesD, scalesH, scalesW],
                false,
                FLOATS,
                gradInput,
                "gradInput",
            )
        },
    )
}

crate::phase2!(aclnnUpsampleNearest3d, aclnnUpsampleNearest3dBackward);
