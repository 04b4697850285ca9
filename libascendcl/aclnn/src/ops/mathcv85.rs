//! Operators of CANN 8.5's ops-math set whose headers the earlier families lacked:
//! `aclnn_grouped_bias_add_grad.h` (V1 and V2), `aclnn_segsum.h` (ExpSegsum),
//! `aclnn_exp_segsum_backward.h`, the experimental `aclnn_slice_v3.h` and `aclnn_fill_v2.h`
//! (Atlas A2 only, headers generated from their op definitions), and
//! `aclnn_masked_scale.h`, which CANN documents for Ascend 950 only: on every other SoC its
//! dtype lists are empty, so the first phase returns 161002 as CANN's does.
//! The engine is `npu_emu::ops::mathcv85` (SliceV3 reuses SliceV2's `convert19::slice`).

use super::args::{self as a, FLOATS3};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::convert19::{self as slice_engine, Cut};
use npu_emu::ops::dtype::DType::*;
use npu_emu::ops::iter;
use npu_emu::ops::mathcv85::{self as engine, GroupIdx};
use std::ffi::c_void;

/// GroupedBiasAddGrad(V2)'s checks and launch; `idx_type` 0 (ends) or 1 (sizes).
fn grouped_bias_add_grad(
    api: &'static str,
    grad_y: *const c_void,
    group_idx: *const c_void,
    idx_type: i64,
    out: *mut c_void,
) -> NnResult<super::launch::Built> {
    let g = a::tensor(grad_y, "gradY")?;
    let idx = a::opt_tensor(group_idx, "groupIdxOptional")?;
    let o = a::tensor(out, "out")?;
    a::dtype_in(&g, FLOATS3)?;
    a::dtype_in(&o, FLOATS3)?;
    a::same_dtype(&o, &g)?;
    let kind = match idx_type {
        0 => GroupIdx::Ends,
        1 => GroupIdx::Sizes,
        _ => {
            return Err(NnError::invalid(format!(
                "groupIdxType must be 0 (group end indices) or 1 (group sizes), but is {idx_type}"
            )))
        }
    };
    let want = match &idx {
        Some(i) => {
            a::dtype_in(i, &[I32, I64])?;
            if g.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "gradY must be 2-D (rows, H) with groupIdxOptional, but its shape is {:?}",
                    g.shape()
                )));
            }
            if i.ndim() != 1 {
                return Err(NnError::invalid(format!(
                    "groupIdxOptional must be 1-D, but its shape is {:?}",
                    i.shape()
                )));
            }
            vec![i.shape()[0], g.shape()[1]]
        }
        None => {
            if g.ndim() != 3 {
                return Err(NnError::invalid(format!(
                    "gradY must be 3-D (G, C, H) without groupIdxOptional, but its shape is {:?}",
                    g.shape()
                )));
            }
            vec![g.shape()[0], g.shape()[2]]
        }
    };
    if want[0] > 2048 {
        return Err(NnError::invalid(format!(
            "the group count {} exceeds 2048",
            want[0]
        )));
    }
    a::same_shape(&o, &want)?;
    let mut l = Launch::new(api);
    l.input(&g);
    let has_idx = idx.is_some();
    if let Some(i) = &idx {
        l.input(i);
    }
    l.output(&o);
    l.finish(move |v, _| {
        if has_idx {
            engine::grouped_bias_add_grad(&v[0], Some((&v[1], kind)), &v[2])
        } else {
            engine::grouped_bias_add_grad(&v[0], None, &v[1])
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedBiasAddGradGetWorkspaceSize(
    gradY: *const c_void,
    groupIdxOptional: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedBiasAddGradGetWorkspaceSize",
        workspaceSize,
        executor,
        || grouped_bias_add_grad("aclnnGroupedBiasAddGrad", gradY, groupIdxOptional, 0, out),
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedBiasAddGradV2GetWorkspaceSize(
    gradY: *const c_void,
    groupIdxOptional: *const c_void,
    groupIdxType: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedBiasAddGradV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            grouped_bias_add_grad(
                "aclnnGroupedBiasAddGradV2",
                gradY,
                groupIdxOptional,
                groupIdxType,
                out,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnExpSegsumGetWorkspaceSize(
    self_: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnExpSegsumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&x, FLOATS3)?;
            a::dtype_in(&o, FLOATS3)?;
            a::same_dtype(&o, &x)?;
            if !(3..=4).contains(&x.ndim()) {
                return Err(NnError::invalid(format!(
                    "self must have 3 or 4 dimensions, but its shape is {:?}",
                    x.shape()
                )));
            }
            let mut want = x.shape().to_vec();
            want.push(*want.last().unwrap());
            a::same_shape(&o, &want)?;
            let mut l = Launch::new("aclnnExpSegsum");
            l.input(&x);
            l.output(&o);
            l.finish(move |v, _| engine::exp_segsum(&v[0], &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnExpSegsumBackwardGetWorkspaceSize(
    gradOutput: *const c_void,
    gradSelf: *const c_void,
    gradInput: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnExpSegsumBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let go = a::tensor(gradOutput, "gradOutput")?;
            let y = a::tensor(gradSelf, "gradSelf")?;
            let gi = a::tensor(gradInput, "gradInput")?;
            a::dtype_in(&go, FLOATS3)?;
            a::same_dtype(&y, &go)?;
            a::same_dtype(&gi, &go)?;
            let nd = go.ndim();
            if !(4..=5).contains(&nd) || go.shape()[nd - 1] != go.shape()[nd - 2] {
                return Err(NnError::invalid(format!(
                    "gradOutput must have 4 or 5 dimensions with the last two equal, but its \
                     shape is {:?}",
                    go.shape()
                )));
            }
            a::same_shape(&y, go.shape())?;
            a::same_shape(&gi, &go.shape()[..nd - 1])?;
            let mut l = Launch::new("aclnnExpSegsumBackward");
            l.input(&go);
            l.input(&y);
            l.output(&gi);
            l.finish(move |v, _| engine::exp_segsum_backward(&v[0], &v[1], &v[2]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnSliceV3GetWorkspaceSize(
    x: *const c_void,
    begin: *const c_void,
    size: *const c_void,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnSliceV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xt = a::tensor(x, "x")?;
            let b = a::int_array(begin, "begin")?;
            let s = a::int_array(size, "size")?;
            let yt = a::tensor(y, "y")?;
            a::dtype_in(&xt, &[F16, F32, I16, I32, BF16, I8, U8])?;
            a::same_dtype(&yt, &xt)?;
            a::max_dims(&xt, 8)?;
            let n = xt.ndim();
            for (arr, name) in [(&b, "begin"), (&s, "size")] {
                if arr.len() != n {
                    return Err(NnError::invalid(format!(
                        "{name} has {} values, but x has {n} dimensions",
                        arr.len()
                    )));
                }
            }
            let mut cuts: Vec<Cut> = Vec::with_capacity(n);
            let mut shape = Vec::with_capacity(n);
            for d in 0..n {
                let dim = xt.shape()[d] as i64;
                if b[d] < 0 || s[d] < 0 || b[d] + s[d] > dim {
                    return Err(NnError::invalid(format!(
                        "begin[{d}] = {} and size[{d}] = {} do not lie within x's dimension {d} \
                         of {dim}",
                        b[d], s[d]
                    )));
                }
                cuts.push((d, b[d] as usize, 1));
                shape.push(s[d] as usize);
            }
            a::same_shape(&yt, &shape)?;
            let mut l = Launch::new("aclnnSliceV3");
            l.input(&xt);
            l.output(&yt);
            l.finish(move |v, _| slice_engine::slice(&v[0], &cuts, &v[1]))
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnFillV2GetWorkspaceSize(
    xRef: *mut c_void,
    fillValue: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnFillV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(xRef, "xRef")?;
            let v = a::tensor(fillValue, "fillValue")?;
            a::dtype_in(&x, &[F16, F32, I16, I32, BF16])?;
            a::same_dtype(&v, &x)?;
            if v.numel() != 1 {
                return Err(NnError::invalid(format!(
                    "fillValue must hold one value, but its shape is {:?}",
                    v.shape()
                )));
            }
            let mut l = Launch::new("aclnnFillV2");
            l.input(&v);
            l.output(&x);
            l.finish(move |vs, _| {
                let s = npu_emu::ops::View {
                    shape: vec![],
                    strides: vec![],
                    ..vs[0].clone()
                };
                iter::copy(&s, &vs[1])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMaskedScaleGetWorkspaceSize(
    self_: *const c_void,
    mask: *const c_void,
    _scale: f32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMaskedScaleGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            a::tensor(mask, "mask")?;
            a::tensor(out, "out")?;
            let soc = crate::rt::rt()?.soc_name();
            let what = if soc.starts_with("Ascend950") || soc.starts_with("Ascend910_95") {
                "is not implemented by npu-emu"
            } else {
                "is supported on Ascend 950 only (its dtype support list is empty here)"
            };
            Err(NnError::invalid(format!(
                "self dtype {} should be in dtype support list []: aclnnMaskedScale {what}; \
                 platform {soc}",
                x.dtype()
            )))
        },
    )
}

/// ACLNN_ERR_INNER_TILING_ERROR: AddLora's page lists shape mismatches under it.
const TILING: i32 = 561002;

fn tiling(msg: String) -> NnError {
    NnError::new(TILING, msg)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclnnAddLoraGetWorkspaceSize(
    y: *const c_void,
    x: *const c_void,
    weightB: *const c_void,
    indices: *const c_void,
    weightAOptional: *const c_void,
    layerIdx: i64,
    scale: f64,
    yOffset: i64,
    ySliceSize: i64,
    out: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnAddLoraGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let yt = a::tensor(y, "y")?;
            let xt = a::tensor(x, "x")?;
            let bt = a::tensor(weightB, "weightB")?;
            let it = a::tensor(indices, "indices")?;
            let at = a::opt_tensor(weightAOptional, "weightAOptional")?;
            let ot = a::tensor(out, "out")?;
            for t in [&yt, &xt, &bt, &ot] {
                a::dtype_in(t, &[F16])?;
            }
            if let Some(w) = &at {
                a::dtype_in(w, &[F16])?;
            }
            a::dtype_in(&it, &[I32])?;
            let dims = |t: &a::T, n: usize| -> NnResult<()> {
                if t.ndim() != n || t.numel() == 0 {
                    return Err(tiling(format!(
                        "{} must be a non-empty {n}-D tensor, but its shape is {:?}",
                        t.arg,
                        t.shape()
                    )));
                }
                Ok(())
            };
            dims(&yt, 2)?;
            dims(&xt, 2)?;
            dims(&bt, 4)?;
            dims(&it, 1)?;
            let (bsz, h3, h1) = (yt.shape()[0], yt.shape()[1], xt.shape()[1]);
            let (w, l, h2, r) = (bt.shape()[0], bt.shape()[1], bt.shape()[2], bt.shape()[3]);
            if xt.shape()[0] != bsz || it.shape()[0] != bsz {
                return Err(tiling(format!(
                    "x {:?}, y {:?} and indices {:?} must share the batch B",
                    xt.shape(),
                    yt.shape(),
                    it.shape()
                )));
            }
            for (v, name) in [
                (h1, "x's H1"),
                (h2, "weightB's H2"),
                (h3, "y's H3"),
                (r, "R"),
            ] {
                if v % 16 != 0 {
                    return Err(tiling(format!("{name} = {v} must be a multiple of 16")));
                }
            }
            if r > 128 || h2 > h3 || h3 > 131072 || !(1..=32).contains(&w) || !(1..=32).contains(&l)
            {
                return Err(tiling(format!(
                    "weightB {:?} and y {:?} break the limits: R <= 128, H2 <= H3 <= 131072, \
                 W and L in 1..=32",
                    bt.shape(),
                    yt.shape()
                )));
            }
            match &at {
                Some(wa) => {
                    dims(wa, 4)?;
                    if wa.shape() != [w, l, r, h1] {
                        return Err(tiling(format!(
                            "weightAOptional has shape {:?}, expected [W, L, R, H1] = {:?}",
                            wa.shape(),
                            [w, l, r, h1]
                        )));
                    }
                }
                None if h1 != r => {
                    return Err(tiling(format!(
                        "without weightAOptional x's H1 = {h1} must equal weightB's R = {r}"
                    )))
                }
                None => {}
            }
            if layerIdx < 0 || layerIdx as usize >= l {
                return Err(tiling(format!(
                    "layerIdx {layerIdx} must lie in [0, {l}) (weightB's L)"
                )));
            }
            if yOffset < 0 || ySliceSize != h2 as i64 || yOffset as usize + h2 > h3 {
                return Err(tiling(format!(
                "yOffset {yOffset} and ySliceSize {ySliceSize} must select weightB's H2 = {h2} \
                 columns within y's {h3}"
            )));
            }
            a::same_shape(&ot, yt.shape())?;
            let g = engine::Lora {
                layer: layerIdx as usize,
                scale,
                y_offset: yOffset as usize,
            };
            let mut lc = Launch::new("aclnnAddLora");
            lc.input(&yt);
            lc.input(&xt);
            lc.input(&bt);
            lc.input(&it);
            let has_a = at.is_some();
            if let Some(wa) = &at {
                lc.input(wa);
            }
            lc.output(&ot);
            lc.finish(move |v, _| {
                if has_a {
                    engine::add_lora(&v[0], &v[1], &v[2], &v[3], Some(&v[4]), g, &v[5])
                } else {
                    engine::add_lora(&v[0], &v[1], &v[2], &v[3], None, g, &v[4])
                }
            })
        },
    )
}

/// The error of TransConvolutionWeight's common checks (CANN's `CheckParams`): a 4-D shape, not
/// transposed, groups > 0, and the SoC: CANN converts the weight on Ascend 310P only; on
/// any other SoC the call is 161002 naming it. On an emulated 310P npu-emu does not provide
/// the FRACTAL_Z conversion of convolution weights, and says so with the same code.
fn conv_weight_params(ndim: usize, transposed: bool, groups: i64) -> NnError {
    if ndim != 4 {
        return NnError::invalid(format!(
            "only support 4 dim tensorShape, but got dim {ndim}"
        ));
    }
    if transposed {
        return NnError::invalid("only support nontranspose convolution, now transpose is 1");
    }
    if groups <= 0 {
        return NnError::invalid(format!(
            "only support groups larger than 0, now groups is {groups}"
        ));
    }
    let soc = match crate::rt::rt() {
        Ok(rt) => rt.soc_name(),
        Err(e) => return e,
    };
    if soc.starts_with("Ascend310P") {
        NnError::invalid(format!(
            "the FRACTAL_Z convolution weight of {soc} is not implemented by npu-emu"
        ))
    } else {
        NnError::invalid(format!("only support ascend310P, now soc is {soc}"))
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCalculateConvolutionWeightSize(
    tensorShape: *const c_void,
    transposed: bool,
    groups: i64,
    _dataType: i32,
    weightTensorSize: *mut u64,
) -> i32 {
    crate::status::boundary("aclnnCalculateConvolutionWeightSize", || {
        let shape = a::int_array(tensorShape, "tensorShape")?;
        if weightTensorSize.is_null() {
            return Err(NnError::nullptr(
                "expected a value of type number for argument weightTensorSize but instead \
                 found type null"
                    .to_string(),
            ));
        }
        Err(conv_weight_params(shape.len(), transposed, groups))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTransConvolutionWeightGetWorkspaceSize(
    weightIn: *const c_void,
    transposed: bool,
    groups: i64,
    weightOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnTransConvolutionWeightGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let w = a::tensor(weightIn, "weightIn")?;
            a::tensor(weightOut, "weightOut")?;
            Err(conv_weight_params(w.ndim(), transposed, groups))
        },
    )
}

crate::phase2!(
    aclnnTransConvolutionWeight,
    aclnnAddLora,
    aclnnGroupedBiasAddGrad,
    aclnnGroupedBiasAddGradV2,
    aclnnExpSegsum,
    aclnnExpSegsumBackward,
    aclnnSliceV3,
    aclnnFillV2,
    aclnnMaskedScale,
);
