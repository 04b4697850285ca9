//! The int4 paths of existing operators (hooks called from `quant.rs` and `gmm_extra.rs`):
//!
//! - AscendQuant / AscendQuantV3 with `x` in FRACTAL_NZ (3-D FLOAT `[E, K, N]`, dstType 3, roundMode
//!   "round", axis -1): `y` INT32 in FRACTAL_NZ, written in CANN's int4 NZ layout (what
//!   `torch_npu.npu_quantize(npu_format_cast(w, 29), ..., torch.quint4x2, ...)` returns and
//!   GroupedMatmul's NZ int4 weights hold);
//! - GroupedMatmulV4 / V5 / WeightNz in the A4W4 mode: `x` and `weight` int4 as INT32 words of
//!   eight (CANN unpacks them to INT4 first), `scale` UINT64 (INT64 taken as UINT64) `[E, N]`
//!   or `[E, G, N]`, optional FLOAT `perTokenScale` `[M]`, split along M into one FLOAT16 /
//!   BFLOAT16 `y`, with the checks of CANN's `CheckA4W4QuantParams`.
//!
//! - GroupedMatmulV4 / V5 / WeightNz in the A8W8 mode (INT8 x): `gmm_a8w8.rs`;
//! - GroupedMatmulSwigluQuantV2 / WeightNzV2 (A8W8), QuantMatmulReduceSumWeightNz and
//!   RotateQuant (their Atlas A2/A3 forms);
//! - TransposeQuantBatchMatMul(+WeightNz), DynamicDualLevelMxQuant and GroupedDynamicBlockQuant,
//!   Ascend 950-only operators: exported, and refused as CANN refuses them on other SoCs.
//!
//! The computation is `npu_emu::ops::quant31`.

use super::args::{self as a, T};
use super::launch::{only_on_ascend950, phase1, Launch};
use crate::objects::{self, Object};
use crate::status::{NnError, NnResult};
use npu_emu::formats::FORMAT_FRACTAL_NZ;
use npu_emu::ops::dtype::DType;
use npu_emu::ops::gmm_extra as gmm_engine;
use npu_emu::ops::quant::Round;
use npu_emu::ops::quant31 as engine;
use npu_emu::ops::Layout;
use std::ffi::c_void;

/// Whether the live tensor `h` is stored in FRACTAL_NZ (false for NULL or a dead handle: the
/// callers' own checks report those).
pub(super) fn is_nz(h: *const c_void) -> bool {
    if h.is_null() {
        return false;
    }
    objects::tensor(h as usize, "")
        .map(|t| t.format == FORMAT_FRACTAL_NZ || t.storage_format == FORMAT_FRACTAL_NZ)
        .unwrap_or(false)
}

/// The logical view of an INT32 tensor in FRACTAL_NZ (its view shape, contiguous) and its
/// storage as a flat INT32 tensor of `words` words (which must fit in the storage shape the
/// caller declared).
fn int4_nz_tensor(h: *const c_void, arg: &'static str, words: usize) -> NnResult<T> {
    let t = objects::tensor(h as usize, arg)?;
    if t.dtype != 3 {
        return Err(NnError::invalid(format!(
            "{arg} has data type {}; an int4 FRACTAL_NZ tensor is INT32 (eight int4 values a \
             word)",
            npu_emu::formats::dtype_name(t.dtype)
        )));
    }
    let declared: i64 = t.storage_shape.iter().product();
    if declared < words as i64 {
        return Err(NnError::invalid(format!(
            "{arg} has storage shape {:?} ({declared} INT32 words); its int4 FRACTAL_NZ \
             layout of view shape {:?} needs {words}",
            t.storage_shape, t.view_shape
        )));
    }
    Ok(T {
        arg,
        layout: Layout {
            dtype: DType::I32,
            shape: vec![words],
            strides: vec![1],
            offset: t.offset as isize,
        },
        addr: t.addr,
        format: npu_emu::formats::FORMAT_ND,
    })
}

/// AscendQuantV3 with `x` in FRACTAL_NZ (the caller saw `is_nz(x)`).
#[allow(clippy::too_many_arguments)]
pub(super) fn ascend_quant_nz(
    api: &'static str,
    x: *const c_void,
    scale: &T,
    offset: Option<&T>,
    sqrt_mode: bool,
    mode: Round,
    dst: i64,
    axis: i64,
    y: *const c_void,
) -> NnResult<super::launch::Built> {
    let xw = a::weight(x, "x")?;
    let xl = &xw.logical;
    if xl.dtype() != DType::F32 {
        return Err(NnError::invalid(format!(
            "x in FRACTAL_NZ has data type {}; on Atlas A2/A3 an NZ x must be FLOAT",
            xl.dtype()
        )));
    }
    if xl.ndim() != 3 || xl.shape()[2] % 8 != 0 {
        return Err(NnError::invalid(format!(
            "x in FRACTAL_NZ must be 3-D with a last dimension divisible by 8, but its shape \
             is {:?}",
            xl.shape()
        )));
    }
    if dst != 3 {
        return Err(NnError::invalid(format!(
            "dstType {dst}: with x in FRACTAL_NZ only 3 (INT32) is supported"
        )));
    }
    if mode != Round::Even {
        return Err(NnError::invalid(
            "roundMode: with x in FRACTAL_NZ only \"round\" is supported",
        ));
    }
    if axis != -1 && axis != 2 {
        return Err(NnError::invalid(format!(
            "axis {axis}: with x in FRACTAL_NZ it must be -1"
        )));
    }
    if y.is_null() {
        return Err(NnError::nullptr("y is nullptr"));
    }
    if !is_nz(y) {
        return Err(NnError::invalid(
            "y must be in FRACTAL_NZ when x is (int4 values in CANN's NZ layout)",
        ));
    }
    for p in std::iter::once(scale).chain(offset) {
        if p.dtype() != DType::F32 {
            return Err(NnError::invalid(format!(
                "{} has data type {}; with x in FRACTAL_NZ it must be FLOAT like x",
                p.arg,
                p.dtype()
            )));
        }
        let n = xl.shape()[2];
        if p.numel() != 1 && p.numel() != n {
            return Err(NnError::invalid(format!(
                "{} of shape {:?} must hold 1 or {n} elements for x of shape {:?}",
                p.arg,
                p.shape(),
                xl.shape()
            )));
        }
    }
    let (e, k, n) = (xl.shape()[0], xl.shape()[1], xl.shape()[2]);
    let yt = objects::tensor(y as usize, "y")?;
    let want = vec![e as i64, k as i64, (n / 8) as i64];
    if yt.view_shape != want {
        return Err(NnError::invalid(format!(
            "y has shape {:?}; for x {:?} it must be {want:?} (INT32, eight int4 values a word)",
            yt.view_shape,
            xl.shape()
        )));
    }
    let ys = int4_nz_tensor(y, "y", engine::nz_int4_words(e, k, n))?;
    let mut l = Launch::new(api);
    let nz = super::matmul::add_weight(&mut l, &xw);
    l.input(scale);
    let has_o = offset.is_some();
    if let Some(o) = offset {
        l.input(o);
    }
    l.output(&ys);
    let shape = xl.shape().to_vec();
    l.finish(move |v, _| {
        let (xv, _keep) = super::matmul::weight_view(&v[0], &nz, &shape)?;
        let (off, yv) = if has_o {
            (Some(&v[2]), &v[3])
        } else {
            (None, &v[2])
        };
        engine::ascend_quant_int4_nz(&xv, &v[1], off, sqrt_mode, mode, yv)
    })
}

/// The tensors of an optional `aclTensorList*` with elements (nullptr or empty lists, and
/// lists of empty tensors, are absent, as CANN's `ResetEmptyTensor` makes them).
pub(super) fn opt_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<T>> {
    if h.is_null() {
        return Ok(Vec::new());
    }
    let v = a::tensor_list(h, arg)?;
    Ok(if v.iter().all(|t| t.numel() == 0) {
        Vec::new()
    } else {
        v
    })
}

/// The first tensor of an `aclTensorList*`, if the list is live and not empty.
pub(super) fn first_of(h: *const c_void) -> Option<objects::Tensor> {
    if h.is_null() {
        return None;
    }
    let items = objects::with(h as usize, "aclTensorList", "", |o| match o {
        Object::TensorList(v) => Ok(v.clone()),
        _ => unreachable!(),
    })
    .ok()?;
    let first = *items.first()?;
    objects::tensor(first, "").ok()
}

/// GroupedMatmul's pointer arguments, as V4/V5/WeightNz pass them.
pub(super) struct GmmArgs {
    pub x: *const c_void,
    pub weight: *const c_void,
    pub bias: *const c_void,
    pub scale: *const c_void,
    pub offset: *const c_void,
    pub antiquant_scale: *const c_void,
    pub antiquant_offset: *const c_void,
    pub per_token: *const c_void,
    pub group_list: *const c_void,
    pub activation: [*const c_void; 5],
    pub split_item: i64,
    pub group_type: i64,
    pub group_list_type: i64,
    pub act_type: i64,
    pub out: *const c_void,
    pub weight_nz_api: bool,
}

impl GmmArgs {
    /// The checks both quantised modes share: no antiquant scale or offset (a quantised call
    /// is not a weight-only one), and nullptr for the five activation lists (CANN takes
    /// only nullptr there). `mode` starts the messages (`"GMM A4W4: "`).
    pub(super) fn quantised_nulls(&self, mode: &str) -> NnResult<()> {
        if !opt_list(self.antiquant_scale, "antiquantScaleOptional")?.is_empty()
            || !opt_list(self.antiquant_offset, "antiquantOffsetOptional")?.is_empty()
        {
            return Err(NnError::invalid(format!(
                "{mode}Detected quant, but antiquant inputs is not empty!"
            )));
        }
        for (h, arg) in self.activation.iter().zip([
            "activationInputOptional",
            "activationQuantScaleOptional",
            "activationQuantOffsetOptional",
            "activationFeatureOutOptional",
            "dynQuantScaleOutOptional",
        ]) {
            if !opt_list(*h, arg)?.is_empty() {
                return Err(NnError::invalid(format!(
                    "{mode}{arg} must be nullptr (CANN takes only nullptr here)"
                )));
            }
        }
        Ok(())
    }
}

/// GroupedMatmul's quantised modes: A4W4 when `x[0]` is INT32 (int4 words), A8W8 when it is
/// INT8 (`gmm_a8w8.rs`); None otherwise, and the caller continues with its own forms.
pub(super) unsafe fn gmm_quantised(
    name: &'static str,
    api: &'static str,
    g: GmmArgs,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> Option<i32> {
    let x0 = first_of(g.x)?;
    match x0.dtype {
        2 => Some(phase1(name, workspace_size, executor, || {
            super::gmm_a8w8::build(api, &g)
        })),
        3 => Some(phase1(name, workspace_size, executor, || {
            build_a4w4(api, &g)
        })),
        _ => None,
    }
}

fn build_a4w4(api: &'static str, g: &GmmArgs) -> NnResult<super::launch::Built> {
    let xs = a::tensor_list(g.x, "x")?;
    if g.weight.is_null() {
        return Err(NnError::nullptr("weight is nullptr"));
    }
    if g.out.is_null() {
        return Err(NnError::nullptr("out is nullptr"));
    }
    if g.group_type == 2 && g.weight_nz_api {
        return Err(NnError::invalid(
            "Not support split k dim now, groupType can not be 2.",
        ));
    }
    if !(0..=3).contains(&g.split_item) {
        return Err(NnError::invalid(format!(
            "splitItem {} must be 0, 1, 2 or 3",
            g.split_item
        )));
    }
    if g.group_list_type != 0 && g.group_list_type != 1 {
        return Err(NnError::invalid(format!(
            "GMM A4W4: groupListType only support 0 or 1, but now is {}.",
            g.group_list_type
        )));
    }
    let ys = a::tensor_list(g.out, "out")?;
    if let Some(y) = ys.first() {
        if !matches!(y.dtype(), DType::F16 | DType::BF16) {
            return Err(NnError::invalid(format!(
                "GMM A4W4: output y dtype should be float16 or bfloat16, current dtype is {}.",
                y.dtype()
            )));
        }
    }
    if !opt_list(g.offset, "offsetOptional")?.is_empty() {
        return Err(NnError::invalid("GMM A4W4: offset must be null."));
    }
    if !opt_list(g.bias, "biasOptional")?.is_empty() {
        return Err(NnError::invalid("GMM A4W4: bias must be null."));
    }
    let scales = opt_list(g.scale, "scaleOptional")?;
    let Some(scale) = scales.first() else {
        return Err(NnError::invalid("GMM A4W4: scale must not be null."));
    };
    if !matches!(scale.dtype(), DType::U64 | DType::I64) {
        return Err(NnError::invalid(format!(
            "GMM A4W4: scale dtype does not match with required dtype uint64, current dtype is \
             {}.",
            scale.dtype()
        )));
    }
    let pts = opt_list(g.per_token, "perTokenScaleOptional")?;
    if let Some(p) = pts.first() {
        if p.dtype() != DType::F32 {
            return Err(NnError::invalid(format!(
                "GMM A4W4: perTokenScale dtype does not match with required dtype float32, \
                 current dtype is {}.",
                p.dtype()
            )));
        }
    }
    g.quantised_nulls("GMM A4W4: ")?;
    super::quant::gmm_act_type(g.act_type, "the A4W4 mode")?;
    // The weight: one INT32 tensor, ND [E, K, N/8] or FRACTAL_NZ of that view shape.
    let w0 = first_of(g.weight).ok_or_else(|| NnError::invalid("weight must not be empty"))?;
    let wn = objects::with(g.weight as usize, "aclTensorList", "weight", |o| match o {
        Object::TensorList(v) => Ok(v.len()),
        _ => unreachable!(),
    })?;
    if g.group_type != 0 || xs.len() != 1 || wn != 1 || ys.len() != 1 {
        return Err(NnError::invalid(
            "A4W4 only support split m, single x, single weight, single y.",
        ));
    }
    if w0.dtype != 3 {
        return Err(NnError::invalid(format!(
            "The dtypes of x[INT4]-weight[{}] do not match with required dtype; the A4W4 case \
             takes an int4 weight (INT32, eight values a word)",
            npu_emu::formats::dtype_name(w0.dtype)
        )));
    }
    let x = &xs[0];
    let y = &ys[0];
    if x.ndim() != 2 {
        return Err(NnError::invalid(format!(
            "x must be 2-D [M, K/8] (INT32 words of eight int4), not {:?}",
            x.shape()
        )));
    }
    let (m, k) = (x.shape()[0], x.shape()[1] * 8);
    if w0.view_shape.len() != 3 {
        return Err(NnError::invalid(format!(
            "weight must be one 3-D [E, K, N/8] tensor, not {:?}",
            w0.view_shape
        )));
    }
    let (e, kw, n) = (
        w0.view_shape[0] as usize,
        w0.view_shape[1] as usize,
        w0.view_shape[2] as usize * 8,
    );
    if kw != k {
        return Err(NnError::invalid(format!(
            "x [{m}, {k}] (int4) and weight [{e}, {kw}, {n}] (int4) disagree on K"
        )));
    }
    // aclnnGroupedMatmulWeightNz treats its weight as FRACTAL_NZ whatever it says.
    let nz =
        g.weight_nz_api || w0.format == FORMAT_FRACTAL_NZ || w0.storage_format == FORMAT_FRACTAL_NZ;
    if nz && (k % 16 != 0 || n % 64 != 0) {
        return Err(NnError::invalid(format!(
            "When weight(INT4) format is FRACTAL_NZ, weight'shape(k[{k}], n[{n}]) should be \
             divisible by the following shape: INT8:[16, 32],BF16/FP16[16, 16],INT4[16, 64])."
        )));
    }
    // scale: [E, N] per channel or [E, G, N] per K group.
    let sd = scale.ndim();
    if sd != 2 && sd != 3 {
        return Err(NnError::invalid(format!(
            "GMM A4W4: scale dim only support 2/3 for perchannel/pergroup, but now is {sd}."
        )));
    }
    let sn = scale.shape()[sd - 1];
    if sn % 8 != 0 {
        return Err(NnError::invalid(format!(
            "A4W4 n axis should align with 16, but now is {sn}"
        )));
    }
    if sd == 3 {
        let kg = scale.shape()[1];
        if kg == 0 || k % kg != 0 {
            return Err(NnError::invalid(format!(
                "Pergroup A4W4: while scale shape is [e, G, n], x shape is [m,k], k needs to be \
                 divisible by G,but now k is {k}, G is {kg}."
            )));
        }
        if (k / kg) % 2 != 0 {
            return Err(NnError::invalid(format!(
                "Pergroup A4W4: while scale shape is [e, G, n], x shape is [m,k],pergroup \
                 num(k/G) needs to be divisible by 2, but now pergroupNum is {}.",
                k / kg
            )));
        }
    }
    if scale.shape()[0] != e || sn != n {
        return Err(NnError::invalid(format!(
            "scaleOptional has shape {:?}; for weight [{e}, {k}, {n}] it must be [{e}, {n}] or \
             [{e}, G, {n}]",
            scale.shape()
        )));
    }
    if let Some(p) = pts.first() {
        if p.shape() != [m] {
            return Err(NnError::invalid(format!(
                "perTokenScaleOptional has shape {:?}; it must be [{m}] (one per row of x)",
                p.shape()
            )));
        }
    }
    let gl = a::opt_tensor(g.group_list, "groupListOptional")?
        .ok_or_else(|| NnError::invalid("groupListOptional is nullptr; A4W4 splits x along M"))?;
    if gl.dtype() != DType::I64 || gl.ndim() != 1 {
        return Err(NnError::invalid(format!(
            "groupListOptional must be a 1-D INT64 tensor, not {} {:?}",
            gl.dtype(),
            gl.shape()
        )));
    }
    if gl.numel() == 0 || gl.numel() > e {
        return Err(NnError::invalid(format!(
            "groupListOptional has {} entries for a weight of {e} experts",
            gl.numel()
        )));
    }
    a::same_shape(y, &[m, n])?;
    let wt = if nz {
        int4_nz_tensor(g.weight_first(), "weight", engine::nz_int4_words(e, k, n))?
    } else {
        a::tensor(g.weight_first(), "weight")?
    };
    let mut l = Launch::new(api);
    let xi = l.input(x);
    let wi = l.input(&wt);
    let si = l.input(scale);
    let pi = pts.first().map(|p| l.input(p));
    let gi = l.input(&gl);
    let yi = l.output(y);
    let counts = g.group_list_type == 1;
    l.finish(move |v, _| {
        let ends = gmm_engine::group_ends(&v[gi], counts)?;
        let w = if nz {
            engine::Int4Weight::Nz {
                storage: &v[wi],
                e,
                k,
                n,
            }
        } else {
            engine::Int4Weight::Nd(&v[wi])
        };
        engine::grouped_matmul_a4w4(&v[xi], &w, &v[si], pi.map(|i| &v[i]), &ends, &v[yi])
    })
}

impl GmmArgs {
    /// The handle of `weight[0]` (the list was checked to hold one tensor).
    fn weight_first(&self) -> *const c_void {
        objects::with(
            self.weight as usize,
            "aclTensorList",
            "weight",
            |o| match o {
                Object::TensorList(v) => Ok(v[0]),
                _ => unreachable!(),
            },
        )
        .map(|h| h as *const c_void)
        .unwrap_or(std::ptr::null())
    }
}

// ---------------------------------------------------------------- GroupedMatmulSwigluQuantV2

/// `aclnnGroupedMatmulSwigluQuantV2` / `...WeightNzV2` on Atlas A2/A3: the A8W8 mode (INT8 x
/// `[M, K]` and weight `[E, K, N]`, per-channel weightScale `[E, N]` FLOAT/FLOAT16/BFLOAT16,
/// per-token xScale `[M]`, INT64 groupList of at most E entries, cumulative or counts; INT8
/// output `[M, N/2]` and FLOAT outputScale `[M]`), with the checks of CANN's A8W8 path
/// (N even and at most 10240, K below 65536). dequantMode and quantMode 0 only (the MX and
/// per-group modes are Ascend 950's); bias, smoothScale and weightAssistMatrix (the A8W4 and
/// 950 forms) must be absent.
#[allow(clippy::too_many_arguments)]
unsafe fn gmm_swiglu_quant_v2(
    name: &'static str,
    api: &'static str,
    nz_api: bool,
    x: *const c_void,
    weight: *const c_void,
    weight_scale: *const c_void,
    weight_assist: *const c_void,
    bias: *const c_void,
    x_scale: *const c_void,
    smooth_scale: *const c_void,
    group_list: *const c_void,
    dequant_mode: i64,
    dequant_dtype: i64,
    quant_mode: i64,
    group_list_type: i64,
    tuning: *const c_void,
    output: *const c_void,
    output_scale: *const c_void,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        for (h, arg) in [
            (x, "x"),
            (weight, "weight"),
            (weight_scale, "weightScale"),
            (x_scale, "xScale"),
            (group_list, "groupList"),
            (output, "output"),
            (output_scale, "outputScale"),
        ] {
            if h.is_null() {
                return Err(NnError::nullptr(format!("{arg} is nullptr")));
            }
        }
        let x = a::tensor(x, "x")?;
        let wh = objects::with(weight as usize, "aclTensorList", "weight", |o| match o {
            Object::TensorList(v) => Ok(v.clone()),
            _ => unreachable!(),
        })?;
        if wh.len() != 1 {
            return Err(NnError::invalid(format!(
                "The size of weight should be 1, current size is {}",
                wh.len()
            )));
        }
        let ws = a::tensor_list(weight_scale, "weightScale")?;
        if ws.len() != 1 {
            return Err(NnError::invalid(format!(
                "The size of weightScale should be 1, current size is {}",
                ws.len()
            )));
        }
        let ws = ws.into_iter().next().expect("one tensor");
        let w = a::weight(wh[0] as *const c_void, "weight")?;
        let xs = a::tensor(x_scale, "xScale")?;
        let gl = a::tensor(group_list, "groupList")?;
        let out = a::tensor(output, "output")?;
        let os = a::tensor(output_scale, "outputScale")?;
        if !opt_list(weight_assist, "weightAssistMatrix")?.is_empty() {
            return Err(NnError::invalid(
                "weightAssistMatrix must be absent: the A8W8 mode of Atlas A2/A3 takes none",
            ));
        }
        for (h, arg) in [(bias, "bias"), (smooth_scale, "smoothScale")] {
            if let Some(t) = a::opt_tensor(h, arg)? {
                if t.numel() != 0 {
                    return Err(NnError::invalid(format!(
                        "{arg} must be absent: the A8W8 mode of Atlas A2/A3 takes none"
                    )));
                }
            }
        }
        if !tuning.is_null() {
            a::int_array(tuning, "tuningConfigOptional")?;
        }
        if dequant_mode != 0 {
            return Err(NnError::invalid(format!(
                "dequantMode {dequant_mode} is not supported on this SoC: Atlas A2/A3 take 0 \
                 (per-channel weightScale, per-token xScale)"
            )));
        }
        if quant_mode != 0 {
            return Err(NnError::invalid(format!(
                "quantMode {quant_mode} is not supported on this SoC: Atlas A2/A3 take 0 \
                 (per-token dynamic INT8)"
            )));
        }
        if ![0, 1, 27].contains(&dequant_dtype) {
            return Err(NnError::invalid(format!(
                "dequantDtype {dequant_dtype} must be 0 (FLOAT), 1 (FLOAT16) or 27 (BFLOAT16)"
            )));
        }
        if group_list_type != 0 && group_list_type != 1 {
            return Err(NnError::invalid(format!(
                "groupListType {group_list_type} must be 0 (cumsum) or 1 (count)"
            )));
        }
        if nz_api && w.nz.is_none() {
            return Err(NnError::invalid(
                "weight must be in FRACTAL_NZ for aclnnGroupedMatmulSwigluQuantWeightNzV2 (cast \
                 it with aclnnNpuFormatCast / npu_format_cast(w, 29))",
            ));
        }
        swiglu_quant_a8w8(api, x, w, ws, xs, gl, out, os, group_list_type == 1)
    })
}

/// The A8W8 GroupedMatmulSwigluQuant of V1 and V2 once the arguments are read: the dtype,
/// shape and size checks of CANN's A8W8 path, then the launch.
#[allow(clippy::too_many_arguments)]
pub(super) fn swiglu_quant_a8w8(
    api: &'static str,
    x: T,
    w: a::Weight,
    ws: T,
    xs: T,
    gl: T,
    out: T,
    os: T,
    counts: bool,
) -> NnResult<super::launch::Built> {
    a::dtype_in(&x, &[DType::I8])?;
    a::dtype_in(&w.logical, &[DType::I8])?;
    a::dtype_in(&ws, &[DType::F32, DType::F16, DType::BF16])?;
    a::dtype_in(&xs, &[DType::F32, DType::F16, DType::BF16])?;
    a::dtype_in(&gl, &[DType::I64])?;
    a::dtype_in(&out, &[DType::I8])?;
    a::dtype_in(&os, &[DType::F32])?;
    if x.ndim() != 2 {
        return Err(NnError::invalid(format!(
            "x must be 2-D [M, K], but its shape is {:?}",
            x.shape()
        )));
    }
    let ls = w.logical.shape().to_vec();
    if ls.len() != 3 {
        return Err(NnError::invalid(format!(
            "weight must be [E, K, N], but its shape is {ls:?}"
        )));
    }
    if ws.ndim() != 2 {
        return Err(NnError::invalid(format!(
            "weightScale must be 2-D [E, N], but its shape is {:?}",
            ws.shape()
        )));
    }
    let (m, k) = (x.shape()[0], x.shape()[1]);
    let (e, n) = (ls[0], ws.shape()[1]);
    if n % 2 != 0 {
        return Err(NnError::invalid(format!(
            "aclnnGroupedMatmulSwiGluQuant, N is {n} , not an even number."
        )));
    }
    a::same_shape(&w.logical, &[e, k, n])?;
    a::same_shape(&ws, &[e, n])?;
    a::same_shape(&xs, &[m])?;
    a::same_shape(&out, &[m, n / 2])?;
    a::same_shape(&os, &[m])?;
    if gl.ndim() != 1 || gl.numel() == 0 || gl.numel() > e {
        return Err(NnError::invalid(format!(
            "aclnnGroupedMatmulSwiGluQuant A8W8, Length of 'groupList' out of range \
             (expected to be in range of [1, {e}], but got {:?})",
            gl.shape()
        )));
    }
    if n > 10240 {
        return Err(NnError::invalid(format!(
            "aclnnGroupedMatmulSwiGluQuant A8W8: The current version does not support the \
             scenario that N({n}) is greater than 10240."
        )));
    }
    if k >= 65536 {
        return Err(NnError::invalid(format!(
            "aclnnGroupedMatmulSwiGluQuant A8W8, the tail axis dimension of input0(x) is \
             {k}, which need lower than 65536."
        )));
    }
    let mut l = Launch::new(api);
    let xi = l.input(&x);
    let wi = xi + 1; // add_weight adds one input (the tensor or its NZ storage)
    let nz = super::matmul::add_weight(&mut l, &w);
    let wsi = l.input(&ws);
    let xsi = l.input(&xs);
    let gi = l.input(&gl);
    let oi = l.output(&out);
    let osi = l.output(&os);
    l.finish(move |v, _| {
        let (wv, _keep) = super::matmul::weight_view(&v[wi], &nz, &ls)?;
        let ends = gmm_engine::group_ends(&v[gi], counts)?;
        engine::gmm_swiglu_quant_a8w8(&v[xi], &wv, &v[wsi], &v[xsi], &ends, &v[oi], &v[osi])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulSwigluQuantV2GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    weightScale: *const c_void,
    weightAssistMatrix: *const c_void,
    bias: *const c_void,
    xScale: *const c_void,
    smoothScale: *const c_void,
    groupList: *const c_void,
    dequantMode: i64,
    dequantDtype: i64,
    quantMode: i64,
    groupListType: i64,
    tuningConfigOptional: *const c_void,
    output: *mut c_void,
    outputScale: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    gmm_swiglu_quant_v2(
        "aclnnGroupedMatmulSwigluQuantV2GetWorkspaceSize",
        "aclnnGroupedMatmulSwigluQuantV2",
        false,
        x,
        weight,
        weightScale,
        weightAssistMatrix,
        bias,
        xScale,
        smoothScale,
        groupList,
        dequantMode,
        dequantDtype,
        quantMode,
        groupListType,
        tuningConfigOptional,
        output,
        outputScale,
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedMatmulSwigluQuantWeightNzV2GetWorkspaceSize(
    x: *const c_void,
    weight: *const c_void,
    weightScale: *const c_void,
    weightAssistMatrix: *const c_void,
    bias: *const c_void,
    xScale: *const c_void,
    smoothScale: *const c_void,
    groupList: *const c_void,
    dequantMode: i64,
    dequantDtype: i64,
    quantMode: i64,
    groupListType: i64,
    tuningConfigOptional: *const c_void,
    output: *mut c_void,
    outputScale: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    gmm_swiglu_quant_v2(
        "aclnnGroupedMatmulSwigluQuantWeightNzV2GetWorkspaceSize",
        "aclnnGroupedMatmulSwigluQuantWeightNzV2",
        true,
        x,
        weight,
        weightScale,
        weightAssistMatrix,
        bias,
        xScale,
        smoothScale,
        groupList,
        dequantMode,
        dequantDtype,
        quantMode,
        groupListType,
        tuningConfigOptional,
        output,
        outputScale,
        workspaceSize,
        executor,
    )
}

crate::phase2!(
    aclnnGroupedMatmulSwigluQuantV2,
    aclnnGroupedMatmulSwigluQuantWeightNzV2
);

// ---------------------------------------------------------------- QuantMatmulReduceSumWeightNz

/// `aclnnQuantMatmulReduceSumWeightNz` (`torch_npu.npu_quant_matmul_reduce_sum`): INT8 x1
/// `(B, M, K)` ND, INT8 x2 in FRACTAL_NZ of logical `(B, K, N)`, FLOAT x1Scale `(B, M)`,
/// BFLOAT16 x2Scale `(N)`, BFLOAT16 out `(M, N)`; `out = sum_b (x1_b @ x2_b) * x1Scale *
/// x2Scale`. As CANN's op_api checks: the reserved arguments (yScale, the offsets, bias) must
/// be nullptr or empty, the transposes and keepDims false, groupSize not positive; dims must
/// not be nullptr but is not read (the page says `[0]`; torch_npu's array is stale).
#[no_mangle]
pub unsafe extern "C" fn aclnnQuantMatmulReduceSumWeightNzGetWorkspaceSize(
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
    dims: *const c_void,
    keepDims: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnQuantMatmulReduceSumWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            for (h, arg) in [
                (x1, "x1"),
                (x2, "x2"),
                (x1Scale, "x1Scale"),
                (x2Scale, "x2Scale"),
                (out as *const c_void, "out"),
            ] {
                if h.is_null() {
                    return Err(NnError::nullptr(format!("{arg} is nullptr")));
                }
            }
            let a1 = a::tensor(x1, "x1")?;
            let w = a::weight(x2, "x2")?;
            let s1 = a::tensor(x1Scale, "x1Scale")?;
            let s2 = a::tensor(x2Scale, "x2Scale")?;
            let o = a::tensor(out, "out")?;
            if dims.is_null() {
                return Err(NnError::nullptr("dims is nullptr"));
            }
            // dims is not read: CANN reduces over the batch whatever it holds (torch_npu
            // passes an array whose storage is already gone).
            for (h, arg) in [
                (yScale, "yScale"),
                (x1Offset, "x1Offset"),
                (x2Offset, "x2Offset"),
                (yOffset, "yOffset"),
                (bias, "bias"),
            ] {
                if let Some(t) = a::opt_tensor(h, arg)? {
                    if t.numel() != 0 {
                        return Err(NnError::invalid(format!(
                            "Do not support {arg} now, {arg} should be empty tensor or nullptr."
                        )));
                    }
                }
            }
            if transposeX1 {
                return Err(NnError::invalid("Do not support transposeX1 = True now."));
            }
            if transposeX2 {
                return Err(NnError::invalid("Do not support transposeX2 = True now."));
            }
            if groupSize > 0 {
                return Err(NnError::invalid("Do not support groupSize > 0 now."));
            }
            if keepDims {
                return Err(NnError::invalid("Do not support keepDims = True now."));
            }
            if w.nz.is_none() {
                return Err(NnError::invalid(
                    "x2 must be in FRACTAL_NZ (convert it with aclnnTransMatmulWeight or \
                     aclnnNpuFormatCast)",
                ));
            }
            a::dtype_in(&a1, &[DType::I8])?;
            a::dtype_in(&w.logical, &[DType::I8])?;
            a::dtype_in(&s1, &[DType::F32])?;
            a::dtype_in(&s2, &[DType::BF16])?;
            a::dtype_in(&o, &[DType::BF16])?;
            if a1.ndim() != 3 || w.logical.ndim() != 3 {
                return Err(NnError::invalid(format!(
                    "x1 must be (batch, m, k) and x2 (batch, k, n), but their shapes are {:?} \
                     and {:?}",
                    a1.shape(),
                    w.logical.shape()
                )));
            }
            let (b, m, k) = (a1.shape()[0], a1.shape()[1], a1.shape()[2]);
            let n = w.logical.shape()[2];
            a::same_shape(&w.logical, &[b, k, n])?;
            a::same_shape(&s1, &[b, m])?;
            a::same_shape(&s2, &[n])?;
            a::same_shape(&o, &[m, n])?;
            for t in [&a1, &w.logical, &s1, &s2, &o] {
                if t.numel() == 0 {
                    return Err(NnError::invalid(format!(
                        "{} is an empty tensor {:?}; empty tensors are not supported",
                        t.arg,
                        t.shape()
                    )));
                }
            }
            let ls = w.logical.shape().to_vec();
            let mut l = Launch::new("aclnnQuantMatmulReduceSumWeightNz");
            let ai = l.input(&a1);
            let wi = ai + 1; // add_weight adds one input (the NZ storage)
            let nz = super::matmul::add_weight(&mut l, &w);
            let si = l.input(&s1);
            let ti = l.input(&s2);
            let oi = l.output(&o);
            l.finish(move |v, _| {
                let (wv, _keep) = super::matmul::weight_view(&v[wi], &nz, &ls)?;
                engine::quant_matmul_reduce_sum(&v[ai], &wv, &v[si], &v[ti], &v[oi])
            })
        },
    )
}

crate::phase2!(aclnnQuantMatmulReduceSumWeightNz);

// ---------------------------------------------------------------- RotateQuant

/// `aclnnRotateQuant` (`torch_npu.npu_rotate_quant`) with the Atlas A2/A3 constraints of its
/// page: x `(M, N)` FLOAT16/BFLOAT16, rotation `(K, K)` of x's type, N a multiple of K and of
/// 8, N in [128, 16000], K in [16, 1024]; yOut INT8 `(M, N)` or INT32 `(M, N/8)` (int4),
/// scaleOut FLOAT `(M)`; alpha nullptr, axis -1 or 1, roundMode "rint"/"round"/"floor" (the
/// A2 kernel rounds half to even whichever is named), scaleAlg 0, dstTypeMax 0.0, trans false.
/// The FLOAT8/FLOAT4 (MX) outputs are Ascend 950's and refused.
#[no_mangle]
pub unsafe extern "C" fn aclnnRotateQuantGetWorkspaceSize(
    x: *const c_void,
    rotation: *const c_void,
    alpha: *const c_void,
    axis: i64,
    roundMode: *const std::ffi::c_char,
    scaleAlg: i64,
    dstTypeMax: f64,
    trans: bool,
    yOut: *mut c_void,
    scaleOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnRotateQuantGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            for (h, arg) in [
                (x, "x"),
                (rotation, "rotation"),
                (yOut as *const c_void, "yOut"),
                (scaleOut as *const c_void, "scaleOut"),
            ] {
                if h.is_null() {
                    return Err(NnError::nullptr(format!("{arg} is nullptr")));
                }
            }
            let yt = objects::tensor(yOut as usize, "yOut")?;
            // FLOAT8_E5M2 35, FLOAT8_E4M3FN 36, FLOAT4_E2M1 40: the MX outputs of Ascend 950
            if [35, 36, 40].contains(&yt.dtype) {
                return Err(NnError::invalid(format!(
                    "yOut has data type {}: the MX quantisation outputs (FLOAT8/FLOAT4) are \
                 supported on Ascend 950 only; Atlas A2/A3 take INT8 or INT32 (int4)",
                    npu_emu::formats::dtype_name(yt.dtype)
                )));
            }
            let x = a::tensor(x, "x")?;
            let r = a::tensor(rotation, "rotation")?;
            let y = a::tensor(yOut, "yOut")?;
            let s = a::tensor(scaleOut, "scaleOut")?;
            if !alpha.is_null() {
                return Err(NnError::invalid(
                    "alpha must be nullptr on Atlas A2/A3 (the clamp is Ascend 950's)",
                ));
            }
            a::dtype_in(&x, &[DType::F16, DType::BF16])?;
            if r.dtype() != x.dtype() {
                return Err(NnError::invalid(format!(
                    "rotation has data type {}, but x has {}; they must be the same",
                    r.dtype(),
                    x.dtype()
                )));
            }
            a::dtype_in(&y, &[DType::I8, DType::I32])?;
            a::dtype_in(&s, &[DType::F32])?;
            if x.ndim() != 2 {
                return Err(NnError::invalid(format!(
                    "x must be (M, N) on Atlas A2/A3, but its shape is {:?}",
                    x.shape()
                )));
            }
            if r.ndim() != 2 || r.shape()[0] != r.shape()[1] {
                return Err(NnError::invalid(format!(
                    "rotation must be a square (K, K) matrix, but its shape is {:?}",
                    r.shape()
                )));
            }
            let (m, n) = (x.shape()[0], x.shape()[1]);
            let k = r.shape()[0];
            if axis != -1 && axis != 1 {
                return Err(NnError::invalid(format!(
                    "axis {axis} is not supported: only -1 or 1"
                )));
            }
            if !roundMode.is_null() {
                // SAFETY: a non-null roundMode is a NUL-terminated C string, as the prototype says.
                let rm = std::ffi::CStr::from_ptr(roundMode).to_string_lossy();
                if !["rint", "round", "floor"].contains(&rm.as_ref()) {
                    return Err(NnError::invalid(format!(
                        "roundMode \"{rm}\" must be \"rint\", \"round\" or \"floor\""
                    )));
                }
            }
            if scaleAlg != 0 {
                return Err(NnError::invalid(format!(
                    "scaleAlg {scaleAlg} is not supported on Atlas A2/A3: only 0"
                )));
            }
            if dstTypeMax != 0.0 {
                return Err(NnError::invalid(format!(
                    "dstTypeMax {dstTypeMax} is not supported on Atlas A2/A3: only 0.0"
                )));
            }
            if trans {
                return Err(NnError::invalid("trans must be false in this version"));
            }
            if k == 0 || n % k != 0 || n % 8 != 0 {
                return Err(NnError::invalid(format!(
                    "x's N {n} must be a multiple of rotation's K {k} and of 8"
                )));
            }
            if !(128..=16000).contains(&n) {
                return Err(NnError::invalid(format!(
                    "x's N {n} must be in [128, 16000]"
                )));
            }
            if !(16..=1024).contains(&k) {
                return Err(NnError::invalid(format!(
                    "rotation's K {k} must be in [16, 1024]"
                )));
            }
            if y.dtype() == DType::I8 {
                a::same_shape(&y, &[m, n])?;
            } else {
                a::same_shape(&y, &[m, n / 8])?;
            }
            a::same_shape(&s, &[m])?;
            let mut l = Launch::new("aclnnRotateQuant");
            l.input(&x);
            l.input(&r);
            l.output(&y);
            l.output(&s);
            l.finish(move |v, _| engine::rotate_quant(&v[0], &v[1], &v[2], &v[3]))
        },
    )
}

crate::phase2!(aclnnRotateQuant);

// ---------------------------------------------------------------- TransposeQuantBatchMatMul

/// `aclnnTransposeQuantBatchMatMul` / `...WeightNz` (`torch_npu.npu_transpose_quant_batchmatmul`):
/// the operator reference lists Ascend 950 only (FLOAT8/HIFLOAT8 inputs, K-C, MX and T-C
/// modes); CANN's first phase refuses every other platform with ACLNN_ERR_PARAM_INVALID
/// ("The value of platform can only be DAV_3510"), which is what these return on the
/// Atlas A2/A3 SoCs npu-emu emulates by default. On an emulated Ascend 950 the FP8 modes are
/// not implemented by npu-emu and are refused with the same code and a message saying so.
unsafe fn transpose_quant_bmm(
    name: &'static str,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        name,
        "the FLOAT8/HIFLOAT8 transpose quant batch matmul",
        workspace_size,
        executor,
    )
}

/// The first phase of an operator CANN's reference lists for Ascend 950 only
/// ([`only_on_ascend950`]), with its out-pointers checked first.
pub(super) unsafe fn ascend950_only(
    name: &'static str,
    what: &'static str,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(name, workspace_size, executor, || {
        Err(only_on_ascend950(what))
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTransposeQuantBatchMatMulGetWorkspaceSize(
    _x1: *const c_void,
    _x2: *const c_void,
    _bias: *const c_void,
    _x1Scale: *const c_void,
    _x2Scale: *const c_void,
    _dtype: i32,
    _groupSize: i64,
    _permX1: *const c_void,
    _permX2: *const c_void,
    _permY: *const c_void,
    _batchSplitFactor: i32,
    _out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    transpose_quant_bmm(
        "aclnnTransposeQuantBatchMatMulGetWorkspaceSize",
        workspaceSize,
        executor,
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnTransposeQuantBatchMatMulWeightNzGetWorkspaceSize(
    _x1: *const c_void,
    _x2: *const c_void,
    _bias: *const c_void,
    _x1Scale: *const c_void,
    _x2Scale: *const c_void,
    _dtype: i32,
    _groupSize: i64,
    _permX1: *const c_void,
    _permX2: *const c_void,
    _permY: *const c_void,
    _batchSplitFactor: i32,
    _out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    transpose_quant_bmm(
        "aclnnTransposeQuantBatchMatMulWeightNzGetWorkspaceSize",
        workspaceSize,
        executor,
    )
}

crate::phase2!(
    aclnnTransposeQuantBatchMatMul,
    aclnnTransposeQuantBatchMatMulWeightNz
);

// ---------------------------------------------------------------- Ascend 950-only MX/block quant

/// `aclnnDynamicDualLevelMxQuant` (`torch_npu.npu_dynamic_dual_level_mx_quant`): Ascend 950
/// only in the operator reference (FLOAT4/FLOAT8 outputs with FLOAT8_E8M0 scales).
#[no_mangle]
pub unsafe extern "C" fn aclnnDynamicDualLevelMxQuantGetWorkspaceSize(
    _x: *const c_void,
    _smoothScaleOptional: *const c_void,
    _roundModeOptional: *const std::ffi::c_char,
    _level0BlockSize: i64,
    _level1BlockSize: i64,
    _yOut: *const c_void,
    _level0ScaleOut: *const c_void,
    _level1ScaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        "aclnnDynamicDualLevelMxQuantGetWorkspaceSize",
        "the dual-level MX quantisation",
        workspaceSize,
        executor,
    )
}

/// `aclnnGroupedDynamicBlockQuant` (`torch_npu.npu_grouped_dynamic_block_quant`): Ascend 950
/// only in the operator reference (FLOAT8/HIFLOAT8 outputs).
#[no_mangle]
pub unsafe extern "C" fn aclnnGroupedDynamicBlockQuantGetWorkspaceSize(
    _x: *const c_void,
    _groupList: *const c_void,
    _minScale: f64,
    _roundModeOptional: *const std::ffi::c_char,
    _dstType: i64,
    _rowBlockSize: i64,
    _colBlockSize: i64,
    _groupListType: i64,
    _yOut: *const c_void,
    _scaleOut: *const c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        "aclnnGroupedDynamicBlockQuantGetWorkspaceSize",
        "the grouped FLOAT8/HIFLOAT8 block quantisation",
        workspaceSize,
        executor,
    )
}

crate::phase2!(aclnnDynamicDualLevelMxQuant, aclnnGroupedDynamicBlockQuant);
