//! The mHC (manifold-constrained hyper-connections) operators of ops-transformer's `mhc/`:
//!
//! - `aclnn_mhc_post.h` (`torch_npu.npu_mhc_post`) and `aclnn_mhc_post_backward.h`: CANN's
//!   operator reference lists Atlas A2/A3 for both, so they compute here (the engine's
//!   `npu_emu::ops::mhc`). `hRes` may be NULL in the forward (torch_npu's `h_res=None`, the
//!   "no Res mapping" form `x + hOut ⊗ hPost`); the gradient needs it, as its page says.
//!   torch_npu 2.9 refuses `npu_mhc_post_backward` (and so the autograd of `npu_mhc_post`)
//!   below CANN 9.0, and npu-emu reports 8.5, so the gradient is reached from C.
//! - `aclnn_mhc_sinkhorn.h` and `aclnn_mhc_sinkhorn_backward.h` (`npu_mhc_sinkhorn`): Ascend
//!   950 only in the reference; exported and refused (161002) on the A2/A3 SoCs npu-emu
//!   emulates, as [`ascend950_only`] describes.
//!
//! The checks are those of the reference pages and op_api: NULL tensors 161001, data types,
//! dimension counts and shapes 161002, and the A2/A3 limits of the gradient (n = 4, D a
//! multiple of 128 up to 100000) 161002.

use super::args::{self as a, T};
use super::launch::{only_on_ascend950, phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::mhc as engine;
use std::ffi::c_void;

fn invalid_if(bad: bool, msg: impl FnOnce() -> String) -> NnResult<()> {
    if bad {
        Err(NnError::invalid(msg()))
    } else {
        Ok(())
    }
}

/// The first phase of an operator CANN's reference lists for Ascend 950PR/950DT only
/// ([`only_on_ascend950`]). The out-pointers are neither read nor written, so a caller built
/// against another revision of the prototype (torch_npu passes more arguments to some of
/// these) still gets the refusal instead of a misplaced NULL check.
pub(super) fn ascend950_only(name: &'static str, op: &str) -> i32 {
    crate::status::boundary(name, || Err(only_on_ascend950(op)))
}

/// `x`'s layout: `[B, S, n, D]` (4-D) or `[T, n, D]` (3-D); returns (lead dims, n, D).
fn x_layout(x: &T) -> NnResult<(Vec<usize>, usize, usize)> {
    let nd = x.ndim();
    invalid_if(nd != 3 && nd != 4, || {
        format!(
            "{} dim should be 3 (TND format) or 4 (BSND format), but got {nd} ({:?})",
            x.arg,
            x.shape()
        )
    })?;
    let s = x.shape();
    Ok((s[..nd - 2].to_vec(), s[nd - 2], s[nd - 1]))
}

fn with(lead: &[usize], tail: &[usize]) -> Vec<usize> {
    let mut v = lead.to_vec();
    v.extend_from_slice(tail);
    v
}

fn dims_are(t: &T, n: usize) -> NnResult<()> {
    invalid_if(t.ndim() != n, || {
        format!(
            "{} dim num should be {n}, but got {} ({:?})",
            t.arg,
            t.ndim(),
            t.shape()
        )
    })
}

// ---------------------------------------------------------------------------------- MhcPost

unsafe fn mhc_post(
    x: *const c_void,
    h_res: *const c_void,
    h_out: *const c_void,
    h_post: *const c_void,
    out: *const c_void,
) -> NnResult<Built> {
    let x = a::tensor(x, "x")?;
    let hr = a::opt_tensor(h_res, "hRes")?;
    let ho = a::tensor(h_out, "hOut")?;
    let hp = a::tensor(h_post, "hPost")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&x, &[DType::F16, DType::BF16])?;
    if let Some(h) = &hr {
        a::dtype_in(h, &[DType::F32])?;
    }
    a::same_dtype(&ho, &x)?;
    a::dtype_in(&hp, &[DType::F32])?;
    a::same_dtype(&o, &x)?;
    let (lead, n, d) = x_layout(&x)?;
    let nd = x.ndim();
    if let Some(h) = &hr {
        dims_are(h, nd)?;
        a::same_shape(h, &with(&lead, &[n, n]))?;
    }
    dims_are(&ho, nd - 1)?;
    a::same_shape(&ho, &with(&lead, &[d]))?;
    dims_are(&hp, nd - 1)?;
    a::same_shape(&hp, &with(&lead, &[n]))?;
    dims_are(&o, nd)?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new("aclnnMhcPost");
    let ix = l.input(&x);
    let ih = hr.as_ref().map(|h| l.input(h));
    let io = l.input(&ho);
    let ip = l.input(&hp);
    let oo = l.output(&o);
    l.finish(move |v, _| engine::mhc_post(&v[ix], ih.map(|i| &v[i]), &v[io], &v[ip], &v[oo]))
}

/// `aclnnMhcPostGetWorkspaceSize(x, hRes, hOut, hPost, out, ...)`.
#[no_mangle]
pub unsafe extern "C" fn aclnnMhcPostGetWorkspaceSize(
    x: *const c_void,
    hRes: *const c_void,
    hOut: *const c_void,
    hPost: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMhcPostGetWorkspaceSize",
        workspaceSize,
        executor,
        || mhc_post(x, hRes, hOut, hPost, out),
    )
}

// -------------------------------------------------------------------------- MhcPostBackward

/// The A2/A3 limits of the gradient kernel (the page's 约束说明).
const A2_N: usize = 4;
const A2_D_ALIGN: usize = 128;
const A2_D_MAX: usize = 100_000;

#[allow(clippy::too_many_arguments)]
unsafe fn mhc_post_backward(
    grad_output: *const c_void,
    x: *const c_void,
    h_res: *const c_void,
    h_out: *const c_void,
    h_post: *const c_void,
    grad_x: *const c_void,
    grad_h_res: *const c_void,
    grad_h_out: *const c_void,
    grad_h_post: *const c_void,
) -> NnResult<Built> {
    let g = a::tensor(grad_output, "gradOutput")?;
    let x = a::tensor(x, "x")?;
    let hr = a::tensor(h_res, "hRes")?;
    let ho = a::tensor(h_out, "hOut")?;
    let hp = a::tensor(h_post, "hPost")?;
    let gx = a::tensor(grad_x, "gradX")?;
    let ghr = a::tensor(grad_h_res, "gradHRes")?;
    let gho = a::tensor(grad_h_out, "gradHOut")?;
    let ghp = a::tensor(grad_h_post, "gradHPost")?;
    a::dtype_in(&g, &[DType::F16, DType::BF16])?;
    a::same_dtype(&x, &g)?;
    a::dtype_in(&hr, &[DType::F32])?;
    a::same_dtype(&ho, &g)?;
    a::same_dtype(&hp, &hr)?;
    a::same_dtype(&gx, &g)?;
    a::same_dtype(&ghr, &hr)?;
    a::same_dtype(&gho, &ho)?;
    a::same_dtype(&ghp, &hp)?;
    for t in [&g, &x, &hr, &ho, &hp] {
        invalid_if(t.numel() == 0, || format!("{} must not be empty", t.arg))?;
    }
    let (lead, n, d) = x_layout(&x)?;
    let nd = x.ndim();
    dims_are(&g, nd)?;
    a::same_shape(&g, x.shape())?;
    dims_are(&hr, nd)?;
    a::same_shape(&hr, &with(&lead, &[n, n]))?;
    dims_are(&ho, nd - 1)?;
    a::same_shape(&ho, &with(&lead, &[d]))?;
    dims_are(&hp, nd - 1)?;
    a::same_shape(&hp, &with(&lead, &[n]))?;
    a::same_shape(&gx, x.shape())?;
    a::same_shape(&ghr, hr.shape())?;
    a::same_shape(&gho, ho.shape())?;
    a::same_shape(&ghp, hp.shape())?;
    invalid_if(n != A2_N, || {
        format!(
            "n (x dim {}) must be {A2_N} on Atlas A2/A3, but got {n}",
            nd - 2
        )
    })?;
    invalid_if(d % A2_D_ALIGN != 0 || d > A2_D_MAX, || {
        format!(
            "D (x dim {}) must be a multiple of {A2_D_ALIGN} in [1, {A2_D_MAX}] on Atlas \
             A2/A3, but got {d}",
            nd - 1
        )
    })?;
    let mut l = Launch::new("aclnnMhcPostBackward");
    let ig = l.input(&g);
    let ix = l.input(&x);
    let ih = l.input(&hr);
    let io = l.input(&ho);
    let ip = l.input(&hp);
    let ogx = l.output(&gx);
    let ogr = l.output(&ghr);
    let ogo = l.output(&gho);
    let ogp = l.output(&ghp);
    l.finish(move |v, _| {
        engine::mhc_post_backward(
            &v[ig],
            &v[ix],
            &v[ih],
            &v[io],
            &v[ip],
            engine::MhcPostGrads {
                x: &v[ogx],
                h_res: &v[ogr],
                h_out: &v[ogo],
                h_post: &v[ogp],
            },
        )
    })
}

/// `aclnnMhcPostBackwardGetWorkspaceSize(gradOutput, x, hRes, hOut, hPost, gradX, gradHRes,
/// gradHOut, gradHPost, ...)`.
#[no_mangle]
pub unsafe extern "C" fn aclnnMhcPostBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    x: *const c_void,
    hRes: *const c_void,
    hOut: *const c_void,
    hPost: *const c_void,
    gradX: *mut c_void,
    gradHRes: *mut c_void,
    gradHOut: *mut c_void,
    gradHPost: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMhcPostBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            mhc_post_backward(
                gradOutput, x, hRes, hOut, hPost, gradX, gradHRes, gradHOut, gradHPost,
            )
        },
    )
}

crate::phase2!(aclnnMhcPost, aclnnMhcPostBackward);

// ------------------------------------------------------------ MhcSinkhorn (Ascend 950 only)

/// `aclnnMhcSinkhornGetWorkspaceSize(x, eps, numIters, output, normOut, sumOut, ...)`
/// (`torch_npu.npu_mhc_sinkhorn`): Ascend 950 only in the operator reference.
#[no_mangle]
pub unsafe extern "C" fn aclnnMhcSinkhornGetWorkspaceSize(
    _x: *const c_void,
    _eps: f32,
    _numIters: i64,
    _output: *mut c_void,
    _normOut: *mut c_void,
    _sumOut: *mut c_void,
    _workspaceSize: *mut u64,
    _executor: *mut *mut c_void,
) -> i32 {
    ascend950_only("aclnnMhcSinkhornGetWorkspaceSize", "aclnnMhcSinkhorn")
}

/// `aclnnMhcSinkhornBackwardGetWorkspaceSize(gradOutput, normOut, sumOut, out, ...)` (the
/// autograd of `npu_mhc_sinkhorn`): Ascend 950 only in the operator reference.
#[no_mangle]
pub unsafe extern "C" fn aclnnMhcSinkhornBackwardGetWorkspaceSize(
    _gradOutput: *const c_void,
    _normOut: *const c_void,
    _sumOut: *const c_void,
    _out: *mut c_void,
    _workspaceSize: *mut u64,
    _executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        "aclnnMhcSinkhornBackwardGetWorkspaceSize",
        "aclnnMhcSinkhornBackward",
    )
}

crate::phase2!(aclnnMhcSinkhorn, aclnnMhcSinkhornBackward);
