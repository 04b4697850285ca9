//! The older and NZ-weight forms of GroupedMatmul: `aclnn_grouped_matmul.h`
//! (`aclnnGroupedMatmul`, an `aclIntArray` group list and `splitItem`),
//! `aclnn_grouped_matmul_v2.h` (adds `groupType`), `aclnn_grouped_matmul_v3.h` (the group
//! list as an INT64 tensor) and `aclnn_grouped_matmul_weight_nz.h` (the V5 parameters plus
//! `quantGroupSize`, weights in FRACTAL_NZ). torch_npu's `npu_grouped_matmul` calls V1 for
//! a `List[int]` group_list and WeightNz for a weight cast to FRACTAL_NZ.
//!
//! npu-emu computes the non-quantised forms (FLOAT16/BFLOAT16, and FLOAT32 from V2 on):
//! `y_i = x_i @ w_i + b_i`, split along M (groupType -1/0) or along K (groupType 2, one x
//! `[M, K]` and one weight `[K, N]` into one y `[E, M, N]`). The quantised and activation
//! arguments must be absent or empty. The engine is `npu_emu::ops::gmm_extra`.

use super::args::{self as a, Weight, T};
use super::launch::{phase1, Launch};
use super::matmul::{add_weight, weight_view, Nz};
use crate::objects::{self, Object};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::gmm_extra as engine;
use std::ffi::c_void;

/// An optional `aclTensorList*`: nullptr or an empty list is absent.
fn opt_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<T>> {
    if h.is_null() {
        Ok(Vec::new())
    } else {
        a::tensor_list(h, arg)
    }
}

/// A quantisation or activation list npu-emu does not compute: absent, or empty tensors.
fn unsupported_list(h: *const c_void, arg: &'static str) -> NnResult<()> {
    if opt_list(h, arg)?.iter().any(|t| t.numel() != 0) {
        return Err(NnError::invalid(format!(
            "{arg}: quantised, dequantised and pseudo-quantised GroupedMatmul are not \
             supported by npu-emu; pass nullptr or an empty list"
        )));
    }
    Ok(())
}

/// The weights of an `aclTensorList*`, each plain or in FRACTAL_NZ.
fn weight_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<Weight>> {
    if h.is_null() {
        return Err(NnError::nullptr(format!("{arg} is nullptr")));
    }
    let items = objects::with(h as usize, "aclTensorList", arg, |o| match o {
        Object::TensorList(v) => Ok(v.clone()),
        _ => unreachable!(),
    })?;
    let mut out = Vec::with_capacity(items.len());
    for (i, h) in items.into_iter().enumerate() {
        if h == 0 {
            return Err(NnError::nullptr(format!("{arg}[{i}] is nullptr")));
        }
        out.push(
            a::weight(h as *const c_void, arg)
                .map_err(|e| e.with_suffix(format!(" ({arg}[{i}])")))?,
        );
    }
    Ok(out)
}

/// The group list as the caller gave it.
enum Groups {
    None,
    /// An `aclIntArray` (V1/V2): cumulative ends, known now.
    Host(Vec<i64>),
    /// An INT64 tensor (V3/WeightNz), read when the task runs; `counts` for groupListType 1.
    Device(T, bool),
}

impl Groups {
    fn len(&self) -> Option<usize> {
        match self {
            Groups::None => None,
            Groups::Host(v) => Some(v.len()),
            Groups::Device(t, _) => Some(t.numel()),
        }
    }
}

struct Gmm {
    api: &'static str,
    xs: Vec<T>,
    ws: Vec<Weight>,
    bs: Vec<T>,
    ys: Vec<T>,
    groups: Groups,
    split_item: i64,
    group_type: i64,
    /// FLOAT32 inputs are accepted (V2 on).
    f32_ok: bool,
}

fn dims_err(msg: String) -> NnError {
    NnError::invalid(msg)
}

impl Gmm {
    fn build(self) -> NnResult<super::launch::Built> {
        let Gmm {
            api,
            xs,
            ws,
            bs,
            ys,
            groups,
            split_item,
            group_type,
            f32_ok,
        } = self;
        if xs.is_empty() || ws.is_empty() || ys.is_empty() {
            return Err(NnError::invalid("x, weight and y must not be empty lists"));
        }
        if !(0..=3).contains(&split_item) {
            return Err(NnError::invalid(format!(
                "splitItem {split_item} must be 0, 1, 2 or 3"
            )));
        }
        // dtypes: one floating type for x, weight and y; bias FLOAT16 for FLOAT16 x, else
        // FLOAT32.
        let dt = xs[0].dtype();
        let allowed: &[DType] = if f32_ok {
            &[DType::F16, DType::BF16, DType::F32]
        } else {
            &[DType::F16, DType::BF16]
        };
        a::dtype_in(&xs[0], allowed)?;
        for t in xs.iter().chain(ws.iter().map(|w| &w.logical)).chain(&ys) {
            if t.dtype() != dt {
                return Err(NnError::invalid(format!(
                    "{} has data type {}, but x has {dt}; without quantisation x, weight and \
                     y share one floating type",
                    t.arg,
                    t.dtype()
                )));
            }
        }
        super::quant::float_bias(&bs, dt)?;
        // The groups' weight matrices [K, N].
        let stacked = ws.len() == 1 && ws[0].logical.ndim() == 3;
        let kn: Vec<(usize, usize)> = if stacked {
            let s = ws[0].logical.shape();
            vec![(s[1], s[2]); s[0]]
        } else {
            ws.iter()
                .map(|w| {
                    let s = w.logical.shape();
                    if s.len() != 2 {
                        return Err(dims_err(format!(
                            "weight must be a list of [K, N] tensors or one [E, K, N], but one \
                             has shape {s:?}"
                        )));
                    }
                    Ok((s[0], s[1]))
                })
                .collect::<NnResult<_>>()?
        };
        let g = kn.len();
        let y_single = split_item >= 2;
        match group_type {
            -1 | 0 => {
                if group_type == -1 && !matches!(groups, Groups::None) {
                    return Err(NnError::invalid(
                        "groupListOptional must be absent when groupType is -1 (no grouping)",
                    ));
                }
                // x: one tensor per group, or one [M, K] cut by the group list.
                let x_single = xs.len() == 1 && (g > 1 || groups.len().is_some());
                let mut rows: Vec<Option<usize>> = Vec::with_capacity(g);
                if x_single {
                    let x = &xs[0];
                    if x.ndim() != 2 {
                        return Err(dims_err(format!(
                            "a single x cut into groups must be [M, K], not {:?}",
                            x.shape()
                        )));
                    }
                    let (m, k) = (x.shape()[0], x.shape()[1]);
                    match &groups {
                        Groups::None => {
                            return Err(NnError::invalid(format!(
                                "x is one tensor for {g} groups; groupListOptional must say \
                                 where the groups' rows end"
                            )))
                        }
                        Groups::Device(t, _) => {
                            if t.dtype() != DType::I64 || t.ndim() != 1 {
                                return Err(NnError::invalid(format!(
                                    "groupListOptional must be a 1-D INT64 tensor, not {} {:?}",
                                    t.dtype(),
                                    t.shape()
                                )));
                            }
                            rows.resize(t.numel(), None);
                        }
                        Groups::Host(v) => {
                            let mut prev = 0i64;
                            for (i, &e) in v.iter().enumerate() {
                                if e < prev || e > m as i64 {
                                    return Err(NnError::invalid(format!(
                                        "groupListOptional {v:?} must be non-decreasing \
                                         cumulative row ends within x's {m} rows (entry {i})"
                                    )));
                                }
                                rows.push(Some((e - prev) as usize));
                                prev = e;
                            }
                        }
                    }
                    if rows.len() != g {
                        return Err(NnError::invalid(format!(
                            "groupListOptional has {} entries, but weight has {g} groups",
                            rows.len()
                        )));
                    }
                    if let Some((i, _)) = kn.iter().enumerate().find(|(_, &(kk, _))| kk != k) {
                        return Err(dims_err(format!(
                            "weight[{i}] is [{}, {}], but x is [{m}, {k}]",
                            kn[i].0, kn[i].1
                        )));
                    }
                } else {
                    if xs.len() != g {
                        return Err(NnError::invalid(format!(
                            "x has {} tensors for {g} weight groups",
                            xs.len()
                        )));
                    }
                    for (i, (x, &(k, n))) in xs.iter().zip(&kn).enumerate() {
                        let nd = x.ndim();
                        if !(2..=6).contains(&nd) || x.shape()[nd - 1] != k {
                            return Err(dims_err(format!(
                                "x[{i}] shape {:?} must be [..., {k}] (2 to 6 dimensions) for \
                                 weight [{k}, {n}]",
                                x.shape()
                            )));
                        }
                        if y_single && nd != 2 {
                            return Err(dims_err(format!(
                                "splitItem {split_item} writes one y, so x[{i}] must be 2-D, \
                                 not {:?}",
                                x.shape()
                            )));
                        }
                        rows.push(Some(x.shape()[0]));
                    }
                }
                // y.
                if y_single {
                    if ys.len() != 1 {
                        return Err(NnError::invalid(format!(
                            "splitItem {split_item} writes one y, but y has {} tensors",
                            ys.len()
                        )));
                    }
                    let n = kn[0].1;
                    if let Some((i, _)) = kn.iter().enumerate().find(|(_, &(_, nn))| nn != n) {
                        return Err(dims_err(format!(
                            "one y needs one N, but weight[{i}] has N {} and weight[0] {n}",
                            kn[i].1
                        )));
                    }
                    let y = &ys[0];
                    let want_m = if x_single {
                        xs[0].shape()[0]
                    } else {
                        rows.iter().map(|r| r.unwrap_or(0)).sum()
                    };
                    a::same_shape(y, &[want_m, n])?;
                } else {
                    if ys.len() != g {
                        return Err(NnError::invalid(format!(
                            "splitItem {split_item} writes one y per group ({g}), but y has {}",
                            ys.len()
                        )));
                    }
                    for (i, (y, &(_, n))) in ys.iter().zip(&kn).enumerate() {
                        let want: Vec<usize> = if x_single {
                            match rows[i] {
                                Some(r) => vec![r, n],
                                None => {
                                    if y.ndim() != 2 || y.shape()[1] != n {
                                        return Err(dims_err(format!(
                                            "y[{i}] must be [rows, {n}], not {:?}",
                                            y.shape()
                                        )));
                                    }
                                    y.shape().to_vec()
                                }
                            }
                        } else {
                            let mut s = xs[i].shape().to_vec();
                            *s.last_mut().unwrap() = n;
                            s
                        };
                        a::same_shape(y, &want).map_err(|e| e.with_suffix(format!(" (y[{i}])")))?;
                    }
                }
            }
            2 => {
                if xs.len() != 1 || xs[0].ndim() != 2 || ws.len() != 1 || stacked {
                    return Err(NnError::invalid(
                        "groupType 2 (split along K) takes one x [M, K] and one weight [K, N]",
                    ));
                }
                if !bs.is_empty() {
                    return Err(NnError::invalid(
                        "groupType 2 (split along K) takes no biasOptional",
                    ));
                }
                let e = groups.len().ok_or_else(|| {
                    NnError::nullptr("groupListOptional is nullptr; groupType 2 needs it")
                })?;
                let (m, k) = (xs[0].shape()[0], xs[0].shape()[1]);
                let (kw, n) = kn[0];
                if kw != k {
                    return Err(dims_err(format!(
                        "x [{m}, {k}] and weight [{kw}, {n}] disagree on K"
                    )));
                }
                if !y_single || ys.len() != 1 {
                    return Err(NnError::invalid(
                        "groupType 2 (split along K) writes one y [E, M, N]: splitItem 2 or 3",
                    ));
                }
                a::same_shape(&ys[0], &[e, m, n])?;
                if let Groups::Device(t, _) = &groups {
                    if t.dtype() != DType::I64 || t.ndim() != 1 {
                        return Err(NnError::invalid(format!(
                            "groupListOptional must be a 1-D INT64 tensor, not {} {:?}",
                            t.dtype(),
                            t.shape()
                        )));
                    }
                }
            }
            _ => {
                return Err(NnError::invalid(format!(
                    "groupType {group_type} must be -1 (none), 0 (M) or 2 (K)"
                )))
            }
        }
        if !bs.is_empty() {
            let ok = if bs.len() == 1 && bs[0].ndim() == 2 {
                bs[0].shape() == [g, kn[0].1] && kn.iter().all(|&(_, n)| n == kn[0].1)
            } else {
                bs.len() == g && bs.iter().zip(&kn).all(|(b, &(_, n))| b.shape() == [n])
            };
            if !ok {
                return Err(dims_err(format!(
                    "biasOptional must be {g} tensors [N_i] or one [{g}, N] (weights {kn:?})"
                )));
            }
        }

        let mut l = Launch::new(api);
        let xi = l.inputs(&xs);
        let nx = xs.len();
        let wi = xs.len();
        let mut nzs: Vec<(Nz, Vec<usize>)> = Vec::new();
        for w in &ws {
            nzs.push((add_weight(&mut l, w), w.logical.shape().to_vec()));
        }
        let nb = bs.len();
        let bi = if nb > 0 { l.inputs(&bs) } else { 0 };
        let (host, gi, counts) = match groups {
            Groups::None => (None, None, false),
            Groups::Host(v) => (Some(v), None, false),
            Groups::Device(t, c) => (None, Some(l.input(&t)), c),
        };
        let yi = l.outputs(&ys);
        let ny = ys.len();
        l.finish(move |v, _| {
            let mut keep = Vec::new();
            let mut wv = Vec::with_capacity(nzs.len());
            for (i, (nz, shape)) in nzs.iter().enumerate() {
                let (view, s) = weight_view(&v[wi + i], nz, shape)?;
                keep.push(s);
                wv.push(view);
            }
            let ends = match (&host, gi) {
                (Some(h), _) => Some(h.clone()),
                (None, Some(i)) => Some(engine::group_ends(&v[i], counts)?),
                _ => None,
            };
            if group_type == 2 {
                return engine::grouped_matmul_k(
                    &v[xi],
                    &wv[0],
                    ends.as_deref().unwrap_or(&[]),
                    &v[yi],
                );
            }
            engine::grouped_matmul_m(
                &v[xi..xi + nx],
                &wv,
                &v[bi..bi + nb],
                ends.as_deref(),
                &v[yi..yi + ny],
            )
        })
    }
}

unsafe fn quant_args(
    scale: *const c_void,
    offset: *const c_void,
    aq_scale: *const c_void,
    aq_offset: *const c_void,
) -> NnResult<()> {
    unsupported_list(scale, "scaleOptional")?;
    unsupported_list(offset, "offsetOptional")?;
    unsupported_list(aq_scale, "antiquantScaleOptional")?;
    unsupported_list(aq_offset, "antiquantOffsetOptional")
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulGetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    biasOptional: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    groupListOptional: *const c_void,
    splitItem: i64,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(x, "x")?;
            let ws = a::tensor_list(weight, "weight")?;
            let bs = opt_list(biasOptional, "biasOptional")?;
            quant_args(
                scaleOptional,
                offsetOptional,
                antiquantScaleOptional,
                antiquantOffsetOptional,
            )?;
            let gl = a::opt_int_array(groupListOptional, "groupListOptional")?;
            let ys = a::tensor_list(y, "y")?;
            Gmm {
                api: "aclnnGroupedMatmul",
                xs,
                ws: ws.into_iter().map(plain).collect(),
                bs,
                ys,
                groups: host_groups(gl),
                split_item: splitItem,
                group_type: 0,
                f32_ok: false,
            }
            .build()
        },
    )
}

fn plain(t: T) -> Weight {
    Weight {
        logical: t,
        nz: None,
    }
}

/// An `aclIntArray` group list: nullptr or empty is absent.
fn host_groups(gl: Option<Vec<i64>>) -> Groups {
    match gl {
        Some(v) if !v.is_empty() => Groups::Host(v),
        _ => Groups::None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulV2GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    biasOptional: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    groupListOptional: *const c_void,
    splitItem: i64,
    groupType: i64,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(x, "x")?;
            let ws = a::tensor_list(weight, "weight")?;
            let bs = opt_list(biasOptional, "biasOptional")?;
            quant_args(
                scaleOptional,
                offsetOptional,
                antiquantScaleOptional,
                antiquantOffsetOptional,
            )?;
            let gl = a::opt_int_array(groupListOptional, "groupListOptional")?;
            let ys = a::tensor_list(y, "y")?;
            Gmm {
                api: "aclnnGroupedMatmulV2",
                xs,
                ws: ws.into_iter().map(plain).collect(),
                bs,
                ys,
                groups: host_groups(gl),
                split_item: splitItem,
                group_type: groupType,
                f32_ok: true,
            }
            .build()
        },
    )
}

/// A group list tensor: nullptr or an empty tensor is absent.
fn device_groups(gl: Option<T>, counts: bool) -> Groups {
    match gl {
        Some(t) if t.numel() > 0 => Groups::Device(t, counts),
        _ => Groups::None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulV3GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    biasOptional: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    groupListOptional: *const c_void,
    splitItem: i64,
    groupType: i64,
    y: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulV3GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(x, "x")?;
            let ws = a::tensor_list(weight, "weight")?;
            let bs = opt_list(biasOptional, "biasOptional")?;
            quant_args(
                scaleOptional,
                offsetOptional,
                antiquantScaleOptional,
                antiquantOffsetOptional,
            )?;
            let gl = a::opt_tensor(groupListOptional, "groupListOptional")?;
            let ys = a::tensor_list(y, "y")?;
            Gmm {
                api: "aclnnGroupedMatmulV3",
                xs,
                ws: ws.into_iter().map(plain).collect(),
                bs,
                ys,
                groups: device_groups(gl, false),
                split_item: splitItem,
                group_type: groupType,
                f32_ok: true,
            }
            .build()
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulWeightNzGetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    biasOptional: *const c_void,
    scaleOptional: *const c_void,
    offsetOptional: *const c_void,
    antiquantScaleOptional: *const c_void,
    antiquantOffsetOptional: *const c_void,
    perTokenScaleOptional: *const c_void,
    groupListOptional: *const c_void,
    activationInputOptional: *const c_void,
    activationQuantScaleOptional: *const c_void,
    activationQuantOffsetOptional: *const c_void,
    splitItem: i64,
    groupType: i64,
    groupListType: i64,
    actType: i64,
    tuningConfigOptional: *const c_void,
    quantGroupSize: i64,
    out: *mut c_void,
    activationFeatureOutOptional: *mut c_void,
    dynQuantScaleOutOptional: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    if let Some(r) = super::quant31::gmm_quantised(
        "aclnnGroupedMatmulWeightNzGetWorkspaceSize",
        "aclnnGroupedMatmulWeightNz",
        super::quant31::GmmArgs {
            x,
            weight,
            bias: biasOptional,
            scale: scaleOptional,
            offset: offsetOptional,
            antiquant_scale: antiquantScaleOptional,
            antiquant_offset: antiquantOffsetOptional,
            per_token: perTokenScaleOptional,
            group_list: groupListOptional,
            activation: [
                activationInputOptional,
                activationQuantScaleOptional,
                activationQuantOffsetOptional,
                activationFeatureOutOptional as *const c_void,
                dynQuantScaleOutOptional as *const c_void,
            ],
            split_item: splitItem,
            group_type: groupType,
            group_list_type: groupListType,
            act_type: actType,
            out: out as *const c_void,
            weight_nz_api: true,
        },
        workspaceSize,
        executor,
    ) {
        return r;
    }
    phase1(
        "aclnnGroupedMatmulWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let xs = a::tensor_list(x, "x")?;
            let ws = weight_list(weight, "weight")?;
            let bs = opt_list(biasOptional, "biasOptional")?;
            quant_args(
                scaleOptional,
                offsetOptional,
                antiquantScaleOptional,
                antiquantOffsetOptional,
            )?;
            for (h, arg) in [
                (perTokenScaleOptional, "perTokenScaleOptional"),
                (activationInputOptional, "activationInputOptional"),
                (activationQuantScaleOptional, "activationQuantScaleOptional"),
                (
                    activationQuantOffsetOptional,
                    "activationQuantOffsetOptional",
                ),
                (
                    activationFeatureOutOptional as *const c_void,
                    "activationFeatureOutOptional",
                ),
                (
                    dynQuantScaleOutOptional as *const c_void,
                    "dynQuantScaleOutOptional",
                ),
            ] {
                unsupported_list(h, arg)?;
            }
            super::quant::gmm_act_type(actType, "the non-quantised mode")?;
            if quantGroupSize < 0 {
                return Err(NnError::invalid(format!(
                    "quantGroupSize {quantGroupSize} must not be negative"
                )));
            }
            if groupListType != 0 && groupListType != 1 {
                return Err(NnError::invalid(format!(
                    "groupListType {groupListType} must be 0 (cumulative) or 1 (counts)"
                )));
            }
            // tuningConfigOptional only tunes the kernel's tiling: read, to check the handle.
            if !tuningConfigOptional.is_null() {
                a::int_array(tuningConfigOptional, "tuningConfigOptional")?;
            }
            let gl = a::opt_tensor(groupListOptional, "groupListOptional")?;
            let ys = a::tensor_list(out, "out")?;
            Gmm {
                api: "aclnnGroupedMatmulWeightNz",
                xs,
                ws,
                bs,
                ys,
                groups: device_groups(gl, groupListType == 1),
                split_item: splitItem,
                group_type: groupType,
                f32_ok: true,
            }
            .build()
        },
    )
}

// ---------------------------------------------------------------- GroupedMatmulFinalizeRouting

/// The pointer arguments of the GroupedMatmulFinalizeRouting forms (nullptr where a form
/// lacks one) and its names for them.
struct Fr {
    x: *const c_void,
    w: *const c_void,
    scale: *const c_void,
    bias: *const c_void,
    offset: *const c_void,
    antiquant_scale: *const c_void,
    antiquant_offset: *const c_void,
    pertoken: *const c_void,
    group_list: *const c_void,
    shared: *const c_void,
    logit: *const c_void,
    row_index: *const c_void,
    tuning: *const c_void,
    out: *const c_void,
    /// (x, w, scale, bias, groupList, sharedInput, logit, rowIndex, out) as the form's
    /// header names them.
    names: [&'static str; 9],
    nz: bool,
}

const FR_NAMES: [&str; 9] = [
    "x",
    "w",
    "scaleOptional",
    "biasOptional",
    "groupListOptional",
    "sharedInputOptional",
    "logitOptional",
    "rowIndexOptional",
    "y",
];
const FR_NAMES_V2: [&str; 9] = [
    "x1",
    "x2",
    "scaleOptional",
    "biasOptional",
    "groupListOptional",
    "sharedInputOptional",
    "logitOptional",
    "rowIndexOptional",
    "out",
];
const FR_NAMES_NZ: [&str; 9] = [
    "x1",
    "x2",
    "scale",
    "bias",
    "groupList",
    "sharedInput",
    "logit",
    "rowIndex",
    "out",
];

/// One 1-D tensor of `len` elements of one of `dts`.
fn vec_of(t: &T, len: usize, dts: &[DType]) -> NnResult<()> {
    a::dtype_in(t, dts)?;
    if t.shape() != [len] {
        return Err(NnError::invalid(format!(
            "{} must be [{len}], not {:?}",
            t.arg,
            t.shape()
        )));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn finalize_routing(
    api: &'static str,
    p: Fr,
    dtype: i64,
    shared_weight: f32,
    shared_offset: i64,
    transpose_x: bool,
    transpose_w: bool,
    group_list_type: i64,
) -> NnResult<super::launch::Built> {
    let [nx, nw, nscale, nbias, ngl, nshared, nlogit, nrow, nout] = p.names;
    let x = a::tensor(p.x, nx)?;
    let w = a::weight(p.w, nw)?;
    let scale = if p.scale.is_null() {
        return Err(NnError::nullptr(format!(
            "{nscale} is nullptr; the INT8 x and weight need their per-channel scale"
        )));
    } else {
        a::tensor(p.scale, nscale)?
    };
    let out = a::tensor(p.out, nout)?;
    for (h, arg) in [
        (p.bias, nbias),
        (p.offset, "offsetOptional"),
        (p.antiquant_scale, "antiquantScaleOptional"),
        (p.antiquant_offset, "antiquantOffsetOptional"),
    ] {
        if !h.is_null() {
            return Err(NnError::invalid(format!(
                "{arg}: npu-emu computes the A8W8 form (INT8 x and weight, FLOAT32 scale), \
                 where it is reserved; pass nullptr"
            )));
        }
    }
    if p.nz && w.nz.is_none() {
        return Err(NnError::invalid(format!(
            "{nw} must be in FRACTAL_NZ for {api} (aclnnTransMatmulWeight converts it)"
        )));
    }
    if !p.tuning.is_null() {
        a::int_array(p.tuning, "tuningConfigOptional")?;
    }
    if dtype != 0 {
        return Err(NnError::invalid(format!(
            "dtype {dtype}: only 0 (FLOAT32 output) is supported"
        )));
    }
    if transpose_x || transpose_w {
        return Err(NnError::invalid(
            "transposeX and transposeW must be false (the only supported layout)",
        ));
    }
    if group_list_type != 0 && group_list_type != 1 {
        return Err(NnError::invalid(format!(
            "groupListType {group_list_type} must be 0 (cumulative) or 1 (counts)"
        )));
    }
    a::dtype_in(&x, &[DType::I8])?;
    a::dtype_in(&w.logical, &[DType::I8]).map_err(|e| {
        e.with_suffix(" (npu-emu computes the A8W8 form; INT4 weights are not supported)")
    })?;
    if x.ndim() != 2 || w.logical.ndim() != 3 {
        return Err(NnError::invalid(format!(
            "{nx} must be [m, k] and {nw} [e, k, n], not {:?} and {:?}",
            x.shape(),
            w.logical.shape()
        )));
    }
    let (m, k) = (x.shape()[0], x.shape()[1]);
    let (e, kw, n) = (
        w.logical.shape()[0],
        w.logical.shape()[1],
        w.logical.shape()[2],
    );
    if kw != k {
        return Err(NnError::invalid(format!(
            "{nx} [{m}, {k}] and {nw} [{e}, {kw}, {n}] disagree on k"
        )));
    }
    if m == 0 || k == 0 || n == 0 || e == 0 {
        return Err(NnError::invalid("empty tensors are not supported"));
    }
    a::dtype_in(&scale, &[DType::F32])?;
    if scale.shape() != [e, n] && scale.shape() != [e, 1, n] {
        return Err(NnError::invalid(format!(
            "{nscale} must be [{e}, {n}], not {:?}",
            scale.shape()
        )));
    }
    let pertoken = a::opt_tensor(p.pertoken, "pertokenScaleOptional")?;
    if let Some(t) = &pertoken {
        vec_of(t, m, &[DType::F32])?;
    }
    let gl = a::opt_tensor(p.group_list, ngl)?;
    match &gl {
        Some(t) => vec_of(t, e, &[DType::I64])?,
        None if e != 1 => {
            return Err(NnError::nullptr(format!(
                "{ngl} is nullptr, but {nw} has {e} experts"
            )))
        }
        None => {}
    }
    let shared = a::opt_tensor(p.shared, nshared)?;
    let logit = a::opt_tensor(p.logit, nlogit)?;
    if shared.is_some() != logit.is_some() {
        return Err(NnError::invalid(format!(
            "{nshared} and {nlogit} are given together or not at all"
        )));
    }
    if let Some(l) = &logit {
        vec_of(l, m, &[DType::F32])?;
    }
    let row_index = a::opt_tensor(p.row_index, nrow)?;
    if let Some(r) = &row_index {
        vec_of(r, m, &[DType::I64, DType::I32])?;
    }
    a::dtype_in(&out, &[DType::F32])?;
    if out.ndim() != 2 || out.shape()[1] != n {
        return Err(NnError::invalid(format!(
            "{nout} must be [batch, {n}], not {:?}",
            out.shape()
        )));
    }
    let bs = out.shape()[0];
    if row_index.is_none() && bs < m {
        return Err(NnError::invalid(format!(
            "without {nrow} row i goes to row i, but {nout} has {bs} rows for {m}"
        )));
    }
    if let Some(s) = &shared {
        a::dtype_in(s, &[DType::BF16])?;
        if s.ndim() != 2 || s.shape()[1] != n {
            return Err(NnError::invalid(format!(
                "{nshared} must be [rows, {n}], not {:?}",
                s.shape()
            )));
        }
        if shared_offset < 0 || shared_offset as usize + s.shape()[0] > bs {
            return Err(NnError::invalid(format!(
                "sharedInputOffset {shared_offset} with {} shared rows does not fit the {bs} \
                 output rows",
                s.shape()[0]
            )));
        }
    }
    let mut l = Launch::new(api);
    let xi = l.input(&x);
    let wi = xi + 1;
    let nz = add_weight(&mut l, &w);
    let wshape = w.logical.shape().to_vec();
    let si = l.input(&scale);
    let pi = pertoken.as_ref().map(|t| l.input(t));
    let gi = gl.as_ref().map(|t| l.input(t));
    let shi = shared.as_ref().map(|t| l.input(t));
    let li = logit.as_ref().map(|t| l.input(t));
    let ri = row_index.as_ref().map(|t| l.input(t));
    let oi = l.output(&out);
    let counts = group_list_type == 1;
    let offset = shared_offset.max(0) as usize;
    l.finish(move |v, _| {
        let (wv, _keep) = weight_view(&v[wi], &nz, &wshape)?;
        let ws = engine::per_group(std::slice::from_ref(&wv), 3);
        let ends = match gi {
            Some(i) => engine::group_ends(&v[i], counts)?,
            None => vec![m as i64],
        };
        engine::gmm_finalize_routing(
            &v[xi],
            &ws,
            &v[si],
            pi.map(|i| &v[i]),
            &ends,
            shi.map(|i| engine::Shared {
                rows: &v[i],
                weight: shared_weight,
                offset,
            }),
            li.map(|i| &v[i]),
            ri.map(|i| &v[i]),
            &v[oi],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(
    x: *const c_void,
    w: *mut c_void,
    scaleOptional: *const c_void,
    biasOptional: *const c_void,
    pertokenScaleOptional: *const c_void,
    groupListOptional: *const c_void,
    sharedInputOptional: *const c_void,
    logitOptional: *const c_void,
    rowIndexOptional: *const c_void,
    dtype: i64,
    sharedInputWeight: f32,
    sharedInputOffset: i64,
    transposeX: bool,
    transposeW: bool,
    groupListType: i64,
    y: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            finalize_routing(
                "aclnnGroupedMatmulFinalizeRouting",
                Fr {
                    x,
                    w,
                    scale: scaleOptional,
                    bias: biasOptional,
                    offset: std::ptr::null(),
                    antiquant_scale: std::ptr::null(),
                    antiquant_offset: std::ptr::null(),
                    pertoken: pertokenScaleOptional,
                    group_list: groupListOptional,
                    shared: sharedInputOptional,
                    logit: logitOptional,
                    row_index: rowIndexOptional,
                    tuning: std::ptr::null(),
                    out: y,
                    names: FR_NAMES,
                    nz: false,
                },
                dtype,
                sharedInputWeight,
                sharedInputOffset,
                transposeX,
                transposeW,
                groupListType,
            )
        },
    )
}

macro_rules! finalize_routing_v2 {
    ($get:ident, $api:literal, tuning: $tuning:tt, names: $names:expr, nz: $nz:expr) => {
        finalize_routing_v2!(@fn $get, $api, $tuning, $names, $nz);
    };
    (@fn $get:ident, $api:literal, yes, $names:expr, $nz:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            x1: *const c_void,
            x2: *mut c_void,
            scale: *const c_void,
            bias: *const c_void,
            offsetOptional: *const c_void,
            antiquantScaleOptional: *const c_void,
            antiquantOffsetOptional: *const c_void,
            pertokenScaleOptional: *const c_void,
            groupList: *const c_void,
            sharedInput: *const c_void,
            logit: *const c_void,
            rowIndex: *const c_void,
            dtype: i64,
            sharedInputWeight: f32,
            sharedInputOffset: i64,
            transposeX1: bool,
            transposeX2: bool,
            groupListType: i64,
            tuningConfigOptional: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            finalize_routing_v2!(@body $get, $api, $names, $nz, x1, x2, scale, bias, offsetOptional,
                antiquantScaleOptional, antiquantOffsetOptional, pertokenScaleOptional, groupList,
                sharedInput, logit, rowIndex, dtype, sharedInputWeight, sharedInputOffset,
                transposeX1, transposeX2, groupListType, tuningConfigOptional, out, workspaceSize,
                executor)
        }
    };
    (@fn $get:ident, $api:literal, no, $names:expr, $nz:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            x1: *const c_void,
            x2: *mut c_void,
            scale: *const c_void,
            bias: *const c_void,
            offsetOptional: *const c_void,
            antiquantScaleOptional: *const c_void,
            antiquantOffsetOptional: *const c_void,
            pertokenScaleOptional: *const c_void,
            groupList: *const c_void,
            sharedInput: *const c_void,
            logit: *const c_void,
            rowIndex: *const c_void,
            dtype: i64,
            sharedInputWeight: f32,
            sharedInputOffset: i64,
            transposeX1: bool,
            transposeX2: bool,
            groupListType: i64,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            finalize_routing_v2!(@body $get, $api, $names, $nz, x1, x2, scale, bias, offsetOptional,
                antiquantScaleOptional, antiquantOffsetOptional, pertokenScaleOptional, groupList,
                sharedInput, logit, rowIndex, dtype, sharedInputWeight, sharedInputOffset,
                transposeX1, transposeX2, groupListType, std::ptr::null(), out, workspaceSize,
                executor)
        }
    };
    (@body $get:ident, $api:literal, $names:expr, $nz:expr, $x1:ident, $x2:ident, $scale:ident,
     $bias:ident, $off:ident, $aqs:ident, $aqo:ident, $pt:ident, $gl:ident, $sh:ident, $lg:ident,
     $ri:ident, $dtype:ident, $sw:ident, $so:ident, $tx:ident, $tw:ident, $glt:ident, $tune:expr,
     $out:ident, $ws:ident, $ex:ident) => {
        phase1(stringify!($get), $ws, $ex, || {
            finalize_routing(
                $api,
                Fr {
                    x: $x1,
                    w: $x2,
                    scale: $scale,
                    bias: $bias,
                    offset: $off,
                    antiquant_scale: $aqs,
                    antiquant_offset: $aqo,
                    pertoken: $pt,
                    group_list: $gl,
                    shared: $sh,
                    logit: $lg,
                    row_index: $ri,
                    tuning: $tune,
                    out: $out,
                    names: $names,
                    nz: $nz,
                },
                $dtype,
                $sw,
                $so,
                $tx,
                $tw,
                $glt,
            )
        })
    };
}

finalize_routing_v2!(aclnnGroupedMatmulFinalizeRoutingV2GetWorkspaceSize, "aclnnGroupedMatmulFinalizeRoutingV2", tuning: no, names: FR_NAMES_V2, nz: false);
finalize_routing_v2!(aclnnGroupedMatmulFinalizeRoutingV3GetWorkspaceSize, "aclnnGroupedMatmulFinalizeRoutingV3", tuning: yes, names: FR_NAMES_V2, nz: false);
finalize_routing_v2!(aclnnGroupedMatmulFinalizeRoutingWeightNzV2GetWorkspaceSize, "aclnnGroupedMatmulFinalizeRoutingWeightNzV2", tuning: yes, names: FR_NAMES_NZ, nz: true);

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulFinalizeRoutingWeightNzGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    scale: *const c_void,
    bias: *const c_void,
    pertokenScaleOptional: *const c_void,
    groupList: *const c_void,
    sharedInput: *const c_void,
    logit: *const c_void,
    rowIndex: *const c_void,
    dtype: i64,
    sharedInputWeight: f32,
    sharedInputOffset: i64,
    transposeX1: bool,
    transposeX2: bool,
    groupListType: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulFinalizeRoutingWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            finalize_routing(
                "aclnnGroupedMatmulFinalizeRoutingWeightNz",
                Fr {
                    x: x1,
                    w: x2,
                    scale,
                    bias,
                    offset: std::ptr::null(),
                    antiquant_scale: std::ptr::null(),
                    antiquant_offset: std::ptr::null(),
                    pertoken: pertokenScaleOptional,
                    group_list: groupList,
                    shared: sharedInput,
                    logit,
                    row_index: rowIndex,
                    tuning: std::ptr::null(),
                    out,
                    names: FR_NAMES_NZ,
                    nz: true,
                },
                dtype,
                sharedInputWeight,
                sharedInputOffset,
                transposeX1,
                transposeX2,
                groupListType,
            )
        },
    )
}

crate::phase2!(
    aclnnGroupedMatmulFinalizeRouting,
    aclnnGroupedMatmulFinalizeRoutingV2,
    aclnnGroupedMatmulFinalizeRoutingV3,
    aclnnGroupedMatmulFinalizeRoutingWeightNz,
    aclnnGroupedMatmulFinalizeRoutingWeightNzV2
);

crate::phase2!(
    aclnnGroupedMatmul,
    aclnnGroupedMatmulV2,
    aclnnGroupedMatmulV3,
    aclnnGroupedMatmulWeightNz
);

// ---------------------------------------------------------------- GroupedMatmulAdd

#[allow(clippy::too_many_arguments)]
fn grouped_matmul_add(
    api: &'static str,
    x: *const c_void,
    weight: *const c_void,
    group_list: *const c_void,
    y_ref: *const c_void,
    transpose_x: bool,
    transpose_weight: bool,
    group_type: i64,
    group_list_type: i64,
) -> NnResult<super::launch::Built> {
    let x = a::tensor(x, "x")?;
    let w = a::tensor(weight, "weight")?;
    let gl = a::tensor(group_list, "groupList")?;
    let y = a::tensor(y_ref, "yRef")?;
    if !transpose_x || transpose_weight {
        return Err(NnError::invalid(
            "transposeX must be true and transposeWeight false (x is [K, M], weight [K, N])",
        ));
    }
    if group_type != 2 {
        return Err(NnError::invalid(format!(
            "groupType {group_type}: only 2 (split along K) is supported"
        )));
    }
    if group_list_type != 0 && group_list_type != 1 {
        return Err(NnError::invalid(format!(
            "groupListType {group_list_type} must be 0 (cumulative) or 1 (counts)"
        )));
    }
    a::dtype_in(&x, &[DType::F16, DType::BF16])?;
    a::same_dtype(&w, &x)?;
    a::dtype_in(&y, &[DType::F32])?;
    if x.ndim() != 2 || w.ndim() != 2 || x.shape()[0] != w.shape()[0] {
        return Err(NnError::invalid(format!(
            "x must be [K, M] and weight [K, N] with one K, not {:?} and {:?}",
            x.shape(),
            w.shape()
        )));
    }
    if x.numel() == 0 || w.numel() == 0 {
        return Err(NnError::invalid("x and weight must not be empty"));
    }
    if gl.dtype() != DType::I64 || gl.ndim() != 1 || gl.numel() == 0 {
        return Err(NnError::invalid(format!(
            "groupList must be a non-empty 1-D INT64 tensor, not {} {:?}",
            gl.dtype(),
            gl.shape()
        )));
    }
    let (e, m, n) = (gl.numel(), x.shape()[1], w.shape()[1]);
    let ok = y.shape() == [e, m, n] || y.shape() == [e * m, n];
    if !ok {
        return Err(NnError::invalid(format!(
            "yRef must be [{e}, {m}, {n}] or [{}, {n}], not {:?}",
            e * m,
            y.shape()
        )));
    }
    let mut l = Launch::new(api);
    let xi = l.input(&x);
    let wi = l.input(&w);
    let gi = l.input(&gl);
    let yi = l.output(&y);
    let counts = group_list_type == 1;
    l.finish(move |v, _| {
        let ends = engine::group_ends(&v[gi], counts)?;
        let yv = &v[yi];
        let y3 = if yv.ndim() == 3 {
            yv.clone()
        } else {
            npu_emu::ops::View {
                ptr: yv.ptr,
                dtype: yv.dtype,
                shape: vec![e, m, n],
                strides: vec![yv.strides[0] * m as isize, yv.strides[0], yv.strides[1]],
            }
        };
        engine::grouped_matmul_add(&v[xi], &v[wi], &ends, &y3)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulAddGetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    groupList: *const c_void,
    yRef: *mut c_void,
    transposeX: bool,
    transposeWeight: bool,
    groupType: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulAddGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            grouped_matmul_add(
                "aclnnGroupedMatmulAdd",
                x,
                weight,
                groupList,
                yRef,
                transposeX,
                transposeWeight,
                groupType,
                0,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulAddV2GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    groupList: *const c_void,
    yRef: *mut c_void,
    transposeX: bool,
    transposeWeight: bool,
    groupType: i64,
    group_list_type: i64,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGroupedMatmulAddV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            grouped_matmul_add(
                "aclnnGroupedMatmulAddV2",
                x,
                weight,
                groupList,
                yRef,
                transposeX,
                transposeWeight,
                groupType,
                group_list_type,
            )
        },
    )
}

crate::phase2!(aclnnGroupedMatmulAdd, aclnnGroupedMatmulAddV2);

// ---------------------------------------------------------------- QuantMatmulWeightNz

/// QuantMatmulWeightNz: QuantMatmulV5's parameters with x2 in FRACTAL_NZ (what torch_npu's
/// `npu_quant_matmul` calls for an NZ weight); the engine and the checks are V5's, in the
/// modes npu-emu computes (no yScale, x1Offset, yOffset or groupSize).
#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulWeightNzGetWorkspaceSize(
    x1: *const c_void,
    x2: *const c_void,
    x1Scale: *const c_void,
    x2Scale: *const c_void,
    yScale: *const c_void,
    x1Offset: *const c_void,
    x2Offset: *const c_void,
    yOffset: *const c_void,
    bias: *const c_void,
    transposeX1: bool,
    transposeX2: bool,
    groupSize: i64,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    super::quant::quant_matmul(
        "aclnnQuantMatmulWeightNzGetWorkspaceSize",
        "aclnnQuantMatmulWeightNz",
        x1,
        x2,
        x1Scale,
        x2Scale,
        x2Offset,
        bias,
        transposeX1,
        transposeX2,
        out,
        workspaceSize,
        executor,
        "x2Scale",
        "x1Scale",
        "x2Offset",
        // The modes of QuantMatmulV5's yOffset and groupSize (A8W4, G-B) read an ND x2;
        // they are refused below.
        None,
        || {
            if a::weight(x2, "x2")?.nz.is_none() {
                return Err(NnError::invalid(
                    "x2 must be in FRACTAL_NZ for aclnnQuantMatmulWeightNz \
                     (aclnnTransMatmulWeight converts it); use aclnnQuantMatmulV5 for ND",
                ));
            }
            for (h, arg) in [
                (yScale, "yScale (the T-CG mode)"),
                (x1Offset, "x1Offset"),
                (yOffset, "yOffset"),
            ] {
                // Absent: nullptr or an empty tensor (torch_npu passes undefined ones).
                if a::opt_tensor(h, arg)?.is_some_and(|t| t.numel() != 0) {
                    return Err(NnError::invalid(format!(
                        "{arg} is not supported by npu-emu; pass nullptr"
                    )));
                }
            }
            if groupSize != 0 {
                return Err(NnError::invalid(format!(
                    "groupSize {groupSize}: the grouped modes (K-G, G-B) are not supported by \
                     npu-emu; pass 0"
                )));
            }
            Ok(())
        },
    )
}

crate::phase2!(aclnnQuantMatmulWeightNz);
