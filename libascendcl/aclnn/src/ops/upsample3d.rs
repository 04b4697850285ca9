//! `aclnn_upsample_trilinear_3d.h`, `aclnn_upsample_trilinear_3d_backward.h`: PyTorch's
//! `upsample_trilinear3d` (what torch_npu's `F.interpolate(..., mode="trilinear")` calls) and
//! its backward, on the engine's N-D linear interpolation (`npu_emu::ops::extra::
//! upsample_linear`, the same as the 1-D/2-D linear operators). `self` / `gradOut` are 5-D
//! NCDHW (FLOAT, FLOAT16, BFLOAT16, DOUBLE, any strides); `outputSize` is (D, H, W) and
//! `inputSize` (N, C, D, H, W), each > 0; a scale > 0 is used as PyTorch uses `scales_*`
//! (`1 / scale` without `alignCorners`), 0 means none.
//!
//! Also `aclnn_upsample_bicubic_2d[_backward].h` (`F.interpolate(..., mode="bicubic")`):
//! 4-D NCHW, FLOAT, FLOAT16, BFLOAT16; PyTorch's bicubic convolution (A = -0.75) with the
//! taps clamped to the border (`npu_emu::ops::grid_sampler::upsample_bicubic2d`).

use super::args as a;
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::{extra, grid_sampler};
use std::ffi::c_void;

const TYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::F64];

fn positive(v: &[i64], n: usize, arg: &str) -> NnResult<Vec<usize>> {
    if v.len() != n || v.iter().any(|&s| s <= 0) {
        return Err(NnError::invalid(format!(
            "{arg} must have {n} elements, each > 0, but it is {v:?}"
        )));
    }
    Ok(v.iter().map(|&s| s as usize).collect())
}

fn same_dtype(o: &a::T, x: &a::T) -> NnResult<()> {
    if o.dtype() != x.dtype() {
        return Err(NnError::invalid(format!(
            "{} data type {} must be the same as {}'s {}",
            o.arg,
            o.dtype(),
            x.arg,
            x.dtype()
        )));
    }
    Ok(())
}

fn scales(s: [f64; 3]) -> Vec<Option<f64>> {
    s.iter().map(|&v| (v > 0.0).then_some(v)).collect()
}

fn trilinear(
    self_: *const c_void,
    output_size: *const c_void,
    align: bool,
    sc: [f64; 3],
    out: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(self_, "self")?;
    let os = a::int_array(output_size, "outputSize")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, TYPES)?;
    same_dtype(&o, &x)?;
    if x.ndim() != 5 || x.shape()[2..].contains(&0) {
        return Err(NnError::invalid(format!(
            "self must be 5-D (N, C, D, H, W) with non-empty D, H, W, but its shape is {:?}",
            x.shape()
        )));
    }
    let os = positive(&os, 3, "outputSize")?;
    let mut want = x.shape()[..2].to_vec();
    want.extend(&os);
    a::same_shape(&o, &want)?;
    let sc = scales(sc);
    let mut l = Launch::new("aclnnUpsampleTrilinear3d");
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| extra::upsample_linear(&v[0], &sc, align, &v[1]))
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleTrilinear3dGetWorkspaceSize(
    self_: *const c_void,
    outputSize: *const c_void,
    alignCorners: bool,
    scalesD: f64,
    scalesH: f64,
    scalesW: f64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleTrilinear3dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            trilinear(
                self_,
                outputSize,
                alignCorners,
                [scalesD, scalesH, scalesW],
                out,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleTrilinear3dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    alignCorners: bool,
    scalesD: f64,
    scalesH: f64,
    scalesW: f64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleTrilinear3dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let os = a::int_array(outputSize, "outputSize")?;
            let is = a::int_array(inputSize, "inputSize")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            a::dtype_in(&g, TYPES)?;
            same_dtype(&gi, &g)?;
            let os = positive(&os, 3, "outputSize")?;
            let is = positive(&is, 5, "inputSize")?;
            let mut gwant = is[..2].to_vec();
            gwant.extend(&os);
            a::same_shape(&g, &gwant)?;
            a::same_shape(&gi, &is)?;
            let sc = scales([scalesD, scalesH, scalesW]);
            let mut l = Launch::new("aclnnUpsampleTrilinear3dBackward");
            l.input(&g);
            l.output(&gi);
            l.finish(move |v, _| extra::upsample_linear_backward(&v[0], &sc, alignCorners, &v[1]))
        },
    )
}

// ---- UpsampleBicubic2d ----

const BICUBIC_TYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16];

fn opt(s: f64) -> Option<f64> {
    (s > 0.0).then_some(s)
}

/// `out = upsample_bicubic2d(self)`: `self` 4-D NCHW (FLOAT, FLOAT16, BFLOAT16), `outputSize`
/// (H, W) > 0.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleBicubic2dGetWorkspaceSize(
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
        "aclnnUpsampleBicubic2dGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let os = a::int_array(outputSize, "outputSize")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, BICUBIC_TYPES)?;
            same_dtype(&o, &x)?;
            if x.ndim() != 4 || x.shape()[2..].contains(&0) {
                return Err(NnError::invalid(format!(
                    "self must be 4-D (N, C, H, W) with non-empty H, W, but its shape is {:?}",
                    x.shape()
                )));
            }
            let os = positive(&os, 2, "outputSize")?;
            let mut want = x.shape()[..2].to_vec();
            want.extend(&os);
            a::same_shape(&o, &want)?;
            let sc = [opt(scalesH), opt(scalesW)];
            let mut l = Launch::new("aclnnUpsampleBicubic2d");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| grid_sampler::upsample_bicubic2d(&v[0], sc, alignCorners, &v[1]))
        },
    )
}

/// `gradInput` (`inputSize`, 4 values > 0) = the gradient of [`aclnnUpsampleBicubic2dGetWorkspaceSize`].
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn aclnnUpsampleBicubic2dBackwardGetWorkspaceSize(
    gradOut: *const c_void,
    outputSize: *const c_void,
    inputSize: *const c_void,
    alignCorners: bool,
    scalesH: f64,
    scalesW: f64,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnUpsampleBicubic2dBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let g = a::tensor(gradOut, "gradOut")?;
            let os = a::int_array(outputSize, "outputSize")?;
            let is = a::int_array(inputSize, "inputSize")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            a::dtype_in(&g, BICUBIC_TYPES)?;
            same_dtype(&gi, &g)?;
            let os = positive(&os, 2, "outputSize")?;
            let is = positive(&is, 4, "inputSize")?;
            let mut gwant = is[..2].to_vec();
            gwant.extend(&os);
            a::same_shape(&g, &gwant)?;
            a::same_shape(&gi, &is)?;
            let sc = [opt(scalesH), opt(scalesW)];
            let mut l = Launch::new("aclnnUpsampleBicubic2dBackward");
            l.input(&g);
            l.output(&gi);
            l.finish(move |v, _| {
                grid_sampler::upsample_bicubic2d_backward(&v[0], sc, alignCorners, &v[1])
            })
        },
    )
}

crate::phase2!(
    aclnnUpsampleTrilinear3d,
    aclnnUpsampleTrilinear3dBackward,
    aclnnUpsampleBicubic2d,
    aclnnUpsampleBicubic2dBackward
);
