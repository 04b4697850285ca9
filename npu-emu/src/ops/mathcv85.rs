//! Operators of CANN 8.5's ops-math set that the earlier families did not cover:
//! GroupedBiasAddGrad (V1/V2) and Mamba-2's segment sum, ExpSegsum and its backward. Values
//! are read into dense float64 copies, summed in float64 and rounded once into the outputs.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// How `groupIdx` of GroupedBiasAddGrad(V2) describes the groups.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GroupIdx {
    /// Each value is the end row (exclusive) of its group, non-decreasing, the last = rows.
    Ends,
    /// Each value is the row count of its group; the counts sum to the rows.
    Sizes,
}

/// `out[g, h] = Σ grad[r, h]` over the rows `r` of group `g`. With `idx`, `grad` is
/// `[rows, H]` and the groups are given by `idx` (`[G]`, INT32/INT64); without it `grad` is
/// `[G, C, H]` and group `g` is `grad[g]`. Group values that break the documented rules
/// (negative, decreasing, not ending at `rows`) fail the task, naming the value.
pub fn grouped_bias_add_grad(
    grad: &View,
    idx: Option<(&View, GroupIdx)>,
    out: &View,
) -> Result<(), String> {
    let g: Vec<f64> = load(grad, DType::F64)?;
    let h = *grad.shape.last().unwrap_or(&1);
    let bounds: Vec<(usize, usize)> = match idx {
        None => {
            let c = grad.shape[1];
            (0..grad.shape[0]).map(|i| (i * c, (i + 1) * c)).collect()
        }
        Some((iv, kind)) => {
            let rows = grad.shape[0] as i64;
            let vals: Vec<i64> = load(iv, DType::I64)?;
            let mut b = Vec::with_capacity(vals.len());
            let mut start = 0i64;
            for (j, &v) in vals.iter().enumerate() {
                if v < 0 || v > i32::MAX as i64 {
                    return Err(format!(
                        "groupIdxOptional[{j}] = {v} is negative or above the INT32 maximum"
                    ));
                }
                let end = match kind {
                    GroupIdx::Ends => v,
                    GroupIdx::Sizes => start + v,
                };
                if end < start || end > rows {
                    return Err(format!(
                        "groupIdxOptional[{j}] = {v} gives rows {start}..{end}, which are not \
                         within gradY's {rows} rows after the previous group"
                    ));
                }
                b.push((start as usize, end as usize));
                start = end;
            }
            if start != rows {
                let what = match kind {
                    GroupIdx::Ends => "the last value of groupIdxOptional",
                    GroupIdx::Sizes => "the sum of groupIdxOptional",
                };
                return Err(format!("{what} is {start}, but gradY has {rows} rows"));
            }
            b
        }
    };
    let mut o = vec![0f64; bounds.len() * h];
    for (j, &(s, e)) in bounds.iter().enumerate() {
        let dst = &mut o[j * h..][..h];
        for r in s..e {
            for (d, x) in dst.iter_mut().zip(&g[r * h..][..h]) {
                *d += x;
            }
        }
    }
    store(o, DType::F64, out)
}

/// ExpSegsum: `x` `[..., T]` into `out` `[..., T, T]` with
/// `out[..., i, j] = exp(x[j+1] + … + x[i])` for `j ≤ i` (1 on the diagonal) and 0 above it.
pub fn exp_segsum(x: &View, out: &View) -> Result<(), String> {
    let xs: Vec<f64> = load(x, DType::F64)?;
    let t = *x.shape.last().unwrap_or(&0);
    if t == 0 {
        return Ok(());
    }
    let rows = xs.len() / t;
    let mut o = vec![0f64; rows * t * t];
    for r in 0..rows {
        let xr = &xs[r * t..][..t];
        let or = &mut o[r * t * t..][..t * t];
        for j in 0..t {
            let mut s = 0f64;
            or[j * t + j] = 1.0;
            for i in j + 1..t {
                s += xr[i];
                or[i * t + j] = s.exp();
            }
        }
    }
    store(o, DType::F64, out)
}

/// ExpSegsumBackward: with `go` the gradient of ExpSegsum's output and `y` that output
/// (both `[..., T, T]`), `gi[..., i] = Σ_{j<i} Σ_{k≥i} go[k, j]·y[k, j]` (the documented
/// mask, reversed cumulative sum over rows, mask and row sum).
pub fn exp_segsum_backward(go: &View, y: &View, gi: &View) -> Result<(), String> {
    let g: Vec<f64> = load(go, DType::F64)?;
    let ys: Vec<f64> = load(y, DType::F64)?;
    let t = *gi.shape.last().unwrap_or(&0);
    if t == 0 {
        return Ok(());
    }
    let rows = g.len() / (t * t);
    let mut o = vec![0f64; rows * t];
    for r in 0..rows {
        let base = r * t * t;
        let dst = &mut o[r * t..][..t];
        for j in 0..t {
            // rc = Σ_{k ≥ i} go[k, j]·y[k, j] for the rows k > j, walked from the bottom
            let mut rc = 0f64;
            for i in (j + 1..t).rev() {
                rc += g[base + i * t + j] * ys[base + i * t + j];
                dst[i] += rc;
            }
        }
    }
    store(o, DType::F64, gi)
}

/// The geometry of an AddLora call.
#[derive(Clone, Copy, Debug)]
pub struct Lora {
    pub layer: usize,
    pub scale: f64,
    pub y_offset: usize,
}

/// AddLora: `out = y`, then for each row `b` with `w = indices[b] ≥ 0`
/// `out[b, yOffset + h] += scale · Σ_r z1[r]·weightB[w, layer, h, r]` with
/// `z1 = x[b] · weightA[w, layer]ᵀ` (`[R, H1]`), or `z1 = x[b]` without weightA. A negative
/// index leaves the row as `y` (the kernel's "no adapter" group); an index at or past `W`
/// fails the task. Sums in float64, rounded once.
pub fn add_lora(
    y: &View,
    x: &View,
    wb: &View,
    idx: &View,
    wa: Option<&View>,
    g: Lora,
    out: &View,
) -> Result<(), String> {
    let mut o: Vec<f64> = load(y, DType::F64)?;
    let xs: Vec<f64> = load(x, DType::F64)?;
    let bs: Vec<f64> = load(wb, DType::F64)?;
    let ix: Vec<i64> = load(idx, DType::I64)?;
    let a: Option<Vec<f64>> = wa.map(|v| load(v, DType::F64)).transpose()?;
    let (w, l, h2, r) = (wb.shape[0], wb.shape[1], wb.shape[2], wb.shape[3]);
    let (h1, h3) = (x.shape[1], y.shape[1]);
    for (b, &i) in ix.iter().enumerate() {
        if i < 0 {
            continue;
        }
        if i as usize >= w {
            return Err(format!(
                "indices[{b}] = {i} names no adapter: weightB has {w}"
            ));
        }
        let mat = i as usize * l + g.layer;
        let xr = &xs[b * h1..][..h1];
        let z1: Vec<f64> = match &a {
            Some(a) => (0..r)
                .map(|k| {
                    let ar = &a[(mat * r + k) * h1..][..h1];
                    ar.iter().zip(xr).map(|(p, q)| p * q).sum()
                })
                .collect(),
            None => xr.to_vec(),
        };
        for h in 0..h2 {
            let br = &bs[(mat * h2 + h) * r..][..r];
            let z2: f64 = br.iter().zip(&z1).map(|(p, q)| p * q).sum();
            o[b * h3 + g.y_offset + h] += z2 * g.scale;
        }
    }
    store(o, DType::F64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segsum_forward_and_backward() {
        let mut x = vec![0.5f64, -1.0, 2.0];
        let mut y = vec![0f64; 9];
        let xv = View::of_slice(&mut x, DType::F64, &[1, 3]);
        let yv = View::of_slice(&mut y, DType::F64, &[1, 3, 3]);
        exp_segsum(&xv, &yv).unwrap();
        let e = |v: f64| v.exp();
        let want = [1.0, 0.0, 0.0, e(-1.0), 1.0, 0.0, e(1.0), e(2.0), 1.0];
        for (a, b) in y.iter().zip(want) {
            assert!((a - b).abs() < 1e-12);
        }
        let mut go = vec![1f64; 9];
        let mut gi = vec![0f64; 3];
        let gov = View::of_slice(&mut go, DType::F64, &[1, 3, 3]);
        let yv = View::of_slice(&mut y, DType::F64, &[1, 3, 3]);
        let giv = View::of_slice(&mut gi, DType::F64, &[1, 3]);
        exp_segsum_backward(&gov, &yv, &giv).unwrap();
        // d/dx1: y[1,0] + y[2,0]; d/dx2: y[2,0] + y[2,1]
        assert_eq!(gi[0], 0.0);
        assert!((gi[1] - (e(-1.0) + e(1.0))).abs() < 1e-12);
        assert!((gi[2] - (e(1.0) + e(2.0))).abs() < 1e-12);
    }

    #[test]
    fn grouped_sums() {
        let mut g: Vec<f64> = (0..8).map(|v| v as f64).collect();
        let mut idx = vec![1i64, 3];
        let mut o = vec![0f64; 4];
        let gv = View::of_slice(&mut g, DType::F64, &[4, 2]);
        let iv = View::of_slice(&mut idx, DType::I64, &[2]);
        let ov = View::of_slice(&mut o, DType::F64, &[2, 2]);
        grouped_bias_add_grad(&gv, Some((&iv, GroupIdx::Sizes)), &ov).unwrap();
        assert_eq!(o, vec![0.0, 1.0, 2.0 + 4.0 + 6.0, 3.0 + 5.0 + 7.0]);
    }
}
