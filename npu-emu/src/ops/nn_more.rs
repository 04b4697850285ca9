//! Engines of `aclnnStridedSlice` (a TensorFlow-style strided slice with masks, resolved by
//! the interface layer into a per-axis plan) and the helpers of the other operators in
//! `libascendcl/aclnn/src/ops/nn_more.rs` that do not reuse an existing engine directly.

use super::dtype::DType;
use super::iter::copy;
use super::view::Scratch;
use super::View;

/// One input axis of a strided slice: the first index taken, the step (negative walks
/// backwards) and how many elements are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    pub start: usize,
    pub step: isize,
    pub len: usize,
}

/// One axis of the result: an input axis (by index) or a new axis of size 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutAxis {
    Input(usize),
    New,
}

/// A resolved strided slice: one [`Axis`] per input dimension, the result's axes, the
/// result's shape.
pub type SlicePlan = (Vec<Axis>, Vec<OutAxis>, Vec<usize>);

/// The slice plan of TensorFlow's StridedSlice (which CANN's operator follows): the sparse
/// specification (`begin`/`end`/`strides` with the five masks) expanded over `shape`.
/// `masks` are (begin, end, ellipsis, new axis, shrink axis). Returns the per-input-axis
/// plan, the result's axes and the result's shape; a specification that does not fit is an
/// error naming the argument.
pub fn slice_plan(
    shape: &[usize],
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    masks: [i64; 5],
) -> Result<SlicePlan, String> {
    let [begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask] = masks;
    let n = begin.len();
    if end.len() != n || strides.len() != n {
        return Err(format!(
            "begin, end and strides must have the same length, but they have {}, {} and {}",
            n,
            end.len(),
            strides.len()
        ));
    }
    if let Some(i) = strides.iter().position(|&s| s == 0) {
        return Err(format!("strides must not contain 0, but strides[{i}] is 0"));
    }
    if ellipsis_mask.count_ones() > 1 || ellipsis_mask < 0 {
        return Err(format!(
            "ellipsisMask {ellipsis_mask:#x} may have at most one bit set"
        ));
    }
    // Without an ellipsis, an implicit one follows the given entries.
    let (sparse, ellipsis) = if ellipsis_mask == 0 {
        (n + 1, n)
    } else {
        (n, ellipsis_mask.trailing_zeros() as usize)
    };
    if ellipsis_mask != 0 && ellipsis >= n {
        return Err(format!(
            "ellipsisMask {ellipsis_mask:#x} names entry {ellipsis}, but begin has {n} entries"
        ));
    }
    let new_after = (ellipsis + 1..n).filter(|&i| bit(new_axis_mask, i)).count();
    let dense = shape.len();
    let mut axes: Vec<Option<Axis>> = vec![None; dense];
    let mut map = Vec::new();
    let mut full = 0usize;
    for i in 0..sparse {
        if i == ellipsis {
            let next = (dense + new_after + 1)
                .saturating_sub(sparse - i)
                .min(dense)
                .max(full);
            for (d, ax) in axes.iter_mut().enumerate().take(next).skip(full) {
                *ax = Some(Axis {
                    start: 0,
                    step: 1,
                    len: shape[d],
                });
                map.push(OutAxis::Input(d));
            }
            full = next;
            continue;
        }
        if bit(new_axis_mask, i) {
            map.push(OutAxis::New);
            continue;
        }
        if full >= dense {
            return Err(format!(
                "the slice names more axes than self has ({dense}, shape {shape:?})"
            ));
        }
        let nd = shape[full] as i64;
        let s = strides[i];
        let ax = if bit(shrink_mask, i) {
            if s < 0 {
                return Err(format!(
                    "strides[{i}] is {s}, but a shrunk axis (shrinkAxisMask bit {i}) needs a positive stride"
                ));
            }
            let x = if begin[i] < 0 {
                begin[i] + nd
            } else {
                begin[i]
            };
            if x < 0 || x >= nd {
                return Err(format!(
                    "begin[{i}] = {} is out of range for axis {full} of size {nd} (shrinkAxisMask)",
                    begin[i]
                ));
            }
            Axis {
                start: x as usize,
                step: 1,
                len: 1,
            }
        } else {
            let (lo, hi) = if s > 0 { (0, nd) } else { (-1, nd - 1) };
            let canon = |x: i64| (if x < 0 { x + nd } else { x }).clamp(lo, hi);
            let b = if bit(begin_mask, i) {
                if s > 0 {
                    0
                } else {
                    nd - 1
                }
            } else {
                canon(begin[i])
            };
            let e = if bit(end_mask, i) {
                if s > 0 {
                    nd
                } else {
                    -1
                }
            } else {
                canon(end[i])
            };
            let span = e - b;
            let len = if span == 0 || (span < 0) != (s < 0) {
                0
            } else {
                span / s + i64::from(span % s != 0)
            };
            map.push(OutAxis::Input(full));
            Axis {
                start: if len == 0 { 0 } else { b as usize },
                step: s as isize,
                len: len as usize,
            }
        };
        axes[full] = Some(ax);
        full += 1;
    }
    let axes: Vec<Axis> = axes
        .into_iter()
        .enumerate()
        .map(|(d, ax)| {
            ax.unwrap_or(Axis {
                start: 0,
                step: 1,
                len: shape[d],
            })
        })
        .collect();
    let out_shape = map
        .iter()
        .map(|m| match *m {
            OutAxis::Input(d) => axes[d].len,
            OutAxis::New => 1,
        })
        .collect();
    Ok((axes, map, out_shape))
}

fn bit(mask: i64, i: usize) -> bool {
    i < 64 && (mask >> i) & 1 == 1
}

/// `out = x[plan]`: `axes` has one entry per input dimension; `map` lists the result's
/// axes (input axes left out of it were shrunk and must have `len == 1`).
pub fn strided_slice(x: &View, axes: &[Axis], map: &[OutAxis], out: &View) -> Result<(), String> {
    if axes.len() != x.ndim() {
        return Err(format!(
            "internal: {} slice axes for a {}-D input",
            axes.len(),
            x.ndim()
        ));
    }
    let empty = axes.iter().any(|a| a.len == 0);
    let es = x.esize() as isize;
    let mut ptr = x.ptr;
    if !empty {
        for (d, a) in axes.iter().enumerate() {
            ptr = ptr.wrapping_offset(a.start as isize * x.strides[d] * es);
        }
    }
    let mut shape = Vec::with_capacity(map.len());
    let mut strides = Vec::with_capacity(map.len());
    for m in map {
        match *m {
            OutAxis::Input(d) => {
                shape.push(axes[d].len);
                strides.push(x.strides[d] * axes[d].step);
            }
            OutAxis::New => {
                shape.push(1);
                strides.push(0);
            }
        }
    }
    if shape != out.shape {
        return Err(format!(
            "internal: the slice has shape {shape:?}, out has {:?}",
            out.shape
        ));
    }
    if empty {
        return Ok(());
    }
    let v = View {
        ptr,
        dtype: x.dtype,
        shape,
        strides,
    };
    copy(&v, out)
}

/// The reduction groups of `aclnnDynamicQuantV3/V4`: one per row (all dimensions but the
/// last), one for the whole tensor, or one per column (all dimensions but the second to
/// last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantMode {
    PerToken,
    PerTensor,
    PerChannel,
}

/// Round half to even into int8's range.
fn to_i8(v: f32) -> f64 {
    if v.is_nan() {
        return 0.0;
    }
    (v.round_ties_even() as f64).clamp(-128.0, 127.0)
}

/// Dynamic int8 quantization (`aclnnDynamicQuantV3/V4`): `input = x * smooth` (smooth
/// along the last axis, or along the second to last for `PerChannel`), then per group
/// symmetric `scale = max|input| / 127`, `y = round(input / scale)`, or (with `offset`)
/// asymmetric `scale = (max - min) / 255`, `offset = 127 - max / scale`,
/// `y = round(input / scale + offset)`; float32 arithmetic, ties to even, saturated.
/// `scale` and `offset` hold one value per group in row-major group order. `group` (per
/// token only) holds the cumulative row ends of the experts whose rows of `smooth` apply.
pub fn dynamic_quant_modes(
    x: &View,
    smooth: Option<&View>,
    group: Option<&View>,
    mode: QuantMode,
    y: &View,
    scale: &View,
    offset: Option<&View>,
) -> Result<(), String> {
    let n = x.ndim();
    if n < 2 {
        return Err(format!("internal: dynamic quant of a {n}-D x"));
    }
    let h = x.shape[n - 1];
    let r = x.shape[n - 2];
    let lead: usize = x.shape[..n - 2].iter().product();
    let xs = Scratch::new(DType::F32, &x.shape);
    copy(x, &xs.view)?;
    // SAFETY: the scratch holds numel f32 values.
    let xv = unsafe { std::slice::from_raw_parts(xs.view.ptr as *const f32, x.numel()) };
    let sm: Option<Vec<f32>> = match smooth {
        Some(s) => {
            let ss = Scratch::new(DType::F32, &s.shape);
            copy(s, &ss.view)?;
            // SAFETY: as above.
            Some(
                unsafe { std::slice::from_raw_parts(ss.view.ptr as *const f32, s.numel()) }
                    .to_vec(),
            )
        }
        None => None,
    };
    // With group ends (MoE, per token): row `t` takes smooth row `e`, the first expert with
    // `t < ends[e]` (rows past the last end take the last expert).
    let ends: Option<Vec<i64>> = match group {
        Some(g) => {
            let gs = Scratch::new(DType::I64, &g.shape);
            copy(g, &gs.view)?;
            // SAFETY: the scratch holds numel i64 values.
            Some(
                unsafe { std::slice::from_raw_parts(gs.view.ptr as *const i64, g.numel()) }
                    .to_vec(),
            )
        }
        None => None,
    };
    let expert_of = |t: usize| -> usize {
        ends.as_ref().map_or(0, |e| {
            e.iter()
                .position(|&end| (t as i64) < end)
                .unwrap_or(e.len().saturating_sub(1))
        })
    };
    let groups = match mode {
        QuantMode::PerToken => lead * r,
        QuantMode::PerTensor => 1,
        QuantMode::PerChannel => lead * h,
    };
    let group = |b: usize, i: usize, j: usize| match mode {
        QuantMode::PerToken => b * r + i,
        QuantMode::PerTensor => 0,
        QuantMode::PerChannel => b * h + j,
    };
    let mut input = vec![0f32; x.numel()];
    let mut mx = vec![f32::NEG_INFINITY; groups];
    let mut mn = vec![f32::INFINITY; groups];
    let mut amax = vec![0f32; groups];
    for b in 0..lead {
        for i in 0..r {
            for j in 0..h {
                let k = (b * r + i) * h + j;
                let f = sm.as_ref().map_or(1.0, |s| {
                    if mode == QuantMode::PerChannel {
                        s[i]
                    } else {
                        s[expert_of(b * r + i) * h + j]
                    }
                });
                let v = xv[k] * f;
                input[k] = v;
                let g = group(b, i, j);
                mx[g] = mx[g].max(v);
                mn[g] = mn[g].min(v);
                amax[g] = amax[g].max(v.abs());
            }
        }
    }
    let asym = offset.is_some();
    let (sc, off): (Vec<f32>, Vec<f32>) = (0..groups)
        .map(|g| {
            if asym {
                let s = (mx[g] - mn[g]) / 255.0;
                (s, if s == 0.0 { 0.0 } else { 127.0 - mx[g] / s })
            } else {
                (amax[g] / 127.0, 0.0)
            }
        })
        .unzip();
    let mut out = vec![0f64; x.numel()];
    for b in 0..lead {
        for i in 0..r {
            for j in 0..h {
                let k = (b * r + i) * h + j;
                let g = group(b, i, j);
                let q = if sc[g] == 0.0 {
                    off[g]
                } else {
                    input[k] / sc[g] + off[g]
                };
                out[k] = to_i8(q);
            }
        }
    }
    let mut sc = sc;
    copy(&View::of_slice(&mut out, DType::F64, &y.shape), y)?;
    copy(&View::of_slice(&mut sc, DType::F32, &scale.shape), scale)?;
    if let Some(o) = offset {
        let mut off = off;
        copy(&View::of_slice(&mut off, DType::F32, &o.shape), o)?;
    }
    Ok(())
}

/// `aclnnReluV3`: `y = max(x, 0)` (NaN stays NaN) and the bit mask of `x > 0`, packed
/// along the last axis: bit `k` of `mask[..., j]` is element `8 j + k` of that row.
pub fn relu_v3(x: &View, y: &View, mask: &View) -> Result<(), String> {
    super::iter::map1::<f64, f64>(x, y, |v| if v > 0.0 || v.is_nan() { v } else { 0.0 })?;
    let xs = Scratch::new(DType::F64, &x.shape);
    copy(x, &xs.view)?;
    // SAFETY: the scratch holds numel f64 values.
    let xv = unsafe { std::slice::from_raw_parts(xs.view.ptr as *const f64, x.numel()) };
    let c = x.shape.last().copied().unwrap_or(1);
    let cb = mask.shape.last().copied().unwrap_or(1);
    let rows = x.numel().checked_div(c).unwrap_or(0);
    let mut bits = vec![0u8; rows * cb];
    for r in 0..rows {
        for j in 0..c {
            if xv[r * c + j] > 0.0 {
                bits[r * cb + j / 8] |= 1 << (j % 8);
            }
        }
    }
    copy(&View::of_slice(&mut bits, DType::U8, &mask.shape), mask)
}

/// `aclnnHardShrink`: `x` where `|x| > lambd`, else 0 (NaN stays NaN, as aclnnHardshrink).
pub fn hard_shrink(x: &View, lambd: f64, out: &View) -> Result<(), String> {
    if x.dtype == DType::F64 {
        super::iter::map1::<f64, f64>(x, out, move |v| if v.abs() <= lambd { 0.0 } else { v })
    } else {
        let l = lambd as f32;
        super::iter::map1::<f32, f32>(x, out, move |v| if v.abs() <= l { 0.0 } else { v })
    }
}

/// `aclnnXlog1py`: `z = x * log1p(y)`, 0 where `x == 0` unless `y` is NaN (then NaN);
/// float32 arithmetic, broadcasting.
pub fn xlog1py(x: &View, y: &View, z: &View) -> Result<(), String> {
    super::iter::map2::<f32, f32>(x, y, z, |a, b| {
        if b.is_nan() {
            b
        } else if a == 0.0 {
            0.0
        } else {
            a * b.ln_1p()
        }
    })
}

/// `aclnnSqrtBackward`: `t = 0.5 dy`, `z = t != 0 ? t / y : 0`, in float32.
pub fn sqrt_backward(y: &View, dy: &View, z: &View) -> Result<(), String> {
    super::iter::map2::<f32, f32>(y, dy, z, |y, g| {
        let t = 0.5 * g;
        if t != 0.0 {
            t / y
        } else {
            0.0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_and_shrunk() {
        let mut x: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let xv = View::of_slice(&mut x, DType::F32, &[3, 4]);
        let mut o = vec![0f32; 2];
        let ov = View::of_slice(&mut o, DType::F32, &[1, 2]);
        // x[1, 3:0:-2] with a new leading axis
        let axes = [
            Axis {
                start: 1,
                step: 1,
                len: 1,
            },
            Axis {
                start: 3,
                step: -2,
                len: 2,
            },
        ];
        strided_slice(&xv, &axes, &[OutAxis::New, OutAxis::Input(1)], &ov).unwrap();
        assert_eq!(o, vec![7.0, 5.0]);
    }
}
