//! `aclnn_grid_sampler2d.h`, `aclnn_grid_sampler2d_backward.h`: PyTorch's `grid_sampler_2d`
//! (what torch_npu's `F.grid_sample` of a 4-D input calls) and its backward. `input` is
//! `[N, C, H, W]` (H, W > 0), `grid` `[N, Ho, Wo, 2]`, both FLOAT, FLOAT16, DOUBLE or BFLOAT16 of one
//! type, any strides; `interpolationMode` 0 bilinear, 1 nearest, 2 bicubic (the backward: 0
//! or 1, as the reference documents); `paddingMode` 0 zeros, 1 border, 2 reflection. The
//! backward's `outputMask` (2 values) says which of `inputGrad` and `gridGrad` to compute; a
//! gradient that is not asked for may be NULL. `aclnn_grid_sampler3d[_backward].h` are the same
//! for `[N, C, D, H, W]` at a `[N, Do, Ho, Wo, 3]` grid (FLOAT16, FLOAT, DOUBLE, BFLOAT16;
//! interpolation 0 trilinear or 1 nearest). Also `aclnn_affine_grid.h` (`F.affine_grid`).
//! The engine is `npu_emu::ops::grid_sampler`.

use super::args::{self as a};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::grid_sampler;
use std::ffi::c_void;

/// BFLOAT16 too on Atlas A2/A3 (CANN's note excludes it on Atlas training products only).
const TYPES_2D: &[DType] = &[DType::F32, DType::F16, DType::F64, DType::BF16];
const TYPES_3D: &[DType] = &[DType::F16, DType::F32, DType::F64, DType::BF16];

fn bad(msg: String) -> NnError {
    NnError::invalid(msg)
}

/// Input `[N, C, *spatial]` and grid `[N, *out_spatial, k]` of a `k`-D sampler checked
/// against each other: the output shape `[N, C, *out_spatial]`.
fn shapes(x: &a::T, g: &a::T, k: usize) -> NnResult<Vec<usize>> {
    a::dtype_in(x, if k == 2 { TYPES_2D } else { TYPES_3D })?;
    if g.dtype() != x.dtype() {
        return Err(bad(format!(
            "grid data type {} must be the same as input's {}",
            g.dtype(),
            x.dtype()
        )));
    }
    if x.ndim() != k + 2 || x.shape()[2..].contains(&0) {
        return Err(bad(format!(
            "input must be {}-D {} with non-empty spatial dimensions, but its shape is {:?}",
            k + 2,
            if k == 2 {
                "[N, C, H, W]"
            } else {
                "[N, C, D, H, W]"
            },
            x.shape()
        )));
    }
    if g.ndim() != k + 2 || g.shape()[k + 1] != k || g.shape()[0] != x.shape()[0] {
        return Err(bad(format!(
            "grid must be {} with input's N {}, but its shape is {:?}",
            if k == 2 {
                "[N, Ho, Wo, 2]"
            } else {
                "[N, Do, Ho, Wo, 3]"
            },
            x.shape()[0],
            g.shape()
        )));
    }
    let mut s = vec![x.shape()[0], x.shape()[1]];
    s.extend_from_slice(&g.shape()[1..k + 1]);
    Ok(s)
}

fn modes(interpolation: i64, padding: i64, max_interp: i64) -> NnResult<()> {
    if !(0..=max_interp).contains(&interpolation) {
        return Err(bad(format!(
            "interpolationMode {interpolation} is not supported: {}",
            if max_interp == 2 {
                "0 (bilinear), 1 (nearest) or 2 (bicubic)"
            } else {
                "0 (bilinear) or 1 (nearest)"
            }
        )));
    }
    if !(0..=2).contains(&padding) {
        return Err(bad(format!(
            "paddingMode {padding} is not supported: 0 (zeros), 1 (border) or 2 (reflection)"
        )));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn sampler(
    api: &'static str,
    k: usize,
    input: *const c_void,
    grid: *const c_void,
    interpolation: i64,
    padding: i64,
    align: bool,
    out: *mut c_void,
) -> NnResult<Built> {
    let x = a::tensor(input, "input")?;
    let g = a::tensor(grid, "grid")?;
    let o = a::tensor(out, "out")?;
    let want = shapes(&x, &g, k)?;
    modes(interpolation, padding, if k == 2 { 2 } else { 1 })?;
    if o.dtype() != x.dtype() {
        return Err(bad(format!(
            "out data type {} must be the same as input's {}",
            o.dtype(),
            x.dtype()
        )));
    }
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.input(&g);
    l.output(&o);
    l.finish(move |v, _| {
        if k == 2 {
            grid_sampler::grid_sampler_2d(&v[0], &v[1], interpolation, padding, align, &v[2])
        } else {
            grid_sampler::grid_sampler_3d(&v[0], &v[1], interpolation, padding, align, &v[2])
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn sampler_backward(
    api: &'static str,
    k: usize,
    grad_output: *const c_void,
    input: *const c_void,
    grid: *const c_void,
    interpolation: i64,
    padding: i64,
    align: bool,
    output_mask: *const c_void,
    input_grad: *mut c_void,
    grid_grad: *mut c_void,
) -> NnResult<Built> {
    let go = a::tensor(grad_output, "gradOutput")?;
    let x = a::tensor(input, "input")?;
    let g = a::tensor(grid, "grid")?;
    let mask = a::bool_array(output_mask, "outputMask")?;
    if mask.len() != 2 {
        return Err(bad(format!(
            "outputMask has {} values; 2 are needed (inputGrad, gridGrad)",
            mask.len()
        )));
    }
    let want = shapes(&x, &g, k)?;
    modes(interpolation, padding, 1)?;
    if go.dtype() != x.dtype() {
        return Err(bad(format!(
            "gradOutput data type {} must be the same as input's {}",
            go.dtype(),
            x.dtype()
        )));
    }
    a::same_shape(&go, &want)?;
    let mut outs = Vec::new();
    for (on, h, arg, like) in [
        (mask[0], input_grad, "inputGrad", &x),
        (mask[1], grid_grad, "gridGrad", &g),
    ] {
        if !on && h.is_null() {
            continue;
        }
        let t = a::tensor(h, arg)?;
        if t.dtype() != like.dtype() {
            return Err(bad(format!(
                "{arg} data type {} must be the same as {}'s {}",
                t.dtype(),
                like.arg,
                like.dtype()
            )));
        }
        a::same_shape(&t, like.shape())?;
        if on {
            outs.push((arg, t));
        }
    }
    let has_in = outs.iter().any(|(n, _)| *n == "inputGrad");
    let has_grid = outs.iter().any(|(n, _)| *n == "gridGrad");
    let mut l = Launch::new(api);
    l.input(&go);
    l.input(&x);
    l.input(&g);
    for (_, t) in &outs {
        l.output(t);
    }
    l.finish(move |v, _| {
        let ig = has_in.then(|| &v[3]);
        let gg = has_grid.then(|| &v[if has_in { 4 } else { 3 }]);
        let f = if k == 2 {
            grid_sampler::grid_sampler_2d_backward
        } else {
            grid_sampler::grid_sampler_3d_backward
        };
        f(&v[0], &v[1], &v[2], interpolation, padding, align, ig, gg)
    })
}

macro_rules! sampler_ops {
    ($get:ident, $api:literal, $bget:ident, $bapi:literal, $k:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            input: *const c_void,
            grid: *const c_void,
            interpolationMode: i64,
            paddingMode: i64,
            alignCorners: bool,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                sampler(
                    $api,
                    $k,
                    input,
                    grid,
                    interpolationMode,
                    paddingMode,
                    alignCorners,
                    out,
                )
            })
        }

        #[allow(clippy::too_many_arguments)]
        #[no_mangle]
        pub unsafe extern "C" fn $bget(
            gradOutput: *const c_void,
            input: *const c_void,
            grid: *const c_void,
            interpolationMode: i64,
            paddingMode: i64,
            alignCorners: bool,
            outputMask: *const c_void,
            inputGrad: *mut c_void,
            gridGrad: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($bget), workspaceSize, executor, || {
                sampler_backward(
                    $bapi,
                    $k,
                    gradOutput,
                    input,
                    grid,
                    interpolationMode,
                    paddingMode,
                    alignCorners,
                    outputMask,
                    inputGrad,
                    gridGrad,
                )
            })
        }
    };
}

sampler_ops!(
    aclnnGridSampler2DGetWorkspaceSize,
    "aclnnGridSampler2D",
    aclnnGridSampler2DBackwardGetWorkspaceSize,
    "aclnnGridSampler2DBackward",
    2
);
sampler_ops!(
    aclnnGridSampler3DGetWorkspaceSize,
    "aclnnGridSampler3D",
    aclnnGridSampler3DBackwardGetWorkspaceSize,
    "aclnnGridSampler3DBackward",
    3
);

/// `out = affine_grid(theta, size)`: `theta` `[N, 2, 3]` with `size` (N, C, H, W) gives
/// `[N, H, W, 2]`; `[N, 3, 4]` with (N, C, D, H, W) gives `[N, D, H, W, 3]`; FLOAT, FLOAT16,
/// BFLOAT16 (out of theta's type).
#[no_mangle]
pub unsafe extern "C" fn aclnnAffineGridGetWorkspaceSize(
    theta: *const c_void,
    size: *const c_void,
    alignCorners: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAffineGridGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let t = a::tensor(theta, "theta")?;
            let sz = a::int_array(size, "size")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&t, &[DType::F32, DType::F16, DType::BF16])?;
            if (sz.len() != 4 && sz.len() != 5) || sz.iter().any(|&v| v <= 0) {
                return Err(bad(format!(
                    "size {sz:?} must be 4 (N, C, H, W) or 5 (N, C, D, H, W) positive values"
                )));
            }
            let k = sz.len() - 2;
            let sz: Vec<usize> = sz.iter().map(|&v| v as usize).collect();
            if t.shape() != [sz[0], k, k + 1] {
                return Err(bad(format!(
                    "theta must be [{}, {k}, {}] for size {sz:?}, but its shape is {:?}",
                    sz[0],
                    k + 1,
                    t.shape()
                )));
            }
            if o.dtype() != t.dtype() {
                return Err(bad(format!(
                    "out data type {} must be the same as theta's {}",
                    o.dtype(),
                    t.dtype()
                )));
            }
            let mut want = vec![sz[0]];
            want.extend_from_slice(&sz[2..]);
            want.push(k);
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnAffineGrid");
            l.input(&t);
            l.output(&o);
            l.finish(move |v, _| grid_sampler::affine_grid(&v[0], &sz, alignCorners, &v[1]))
        },
    )
}

crate::phase2!(
    aclnnGridSampler2D,
    aclnnGridSampler2DBackward,
    aclnnGridSampler3D,
    aclnnGridSampler3DBackward,
    aclnnAffineGrid
);
