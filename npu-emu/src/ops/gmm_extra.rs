//! Grouped matmul forms beyond `quant::grouped_matmul` (V4/V5): the layouts of
//! GroupedMatmul V1/V2/V3 and WeightNz, where x and y are each either one tensor per group
//! or one tensor whose rows hold the groups one after another, and the K-split form
//! (groupType 2).
//!
//! Products accumulate in f32 and round once (the engine's matmul); an FRACTAL_NZ weight
//! reaches these functions already converted to ND by the caller.

use super::dtype::DType;
use super::extra::load;
use super::view::View;

/// `len` elements of `v` from `start` along dimension `dim`.
pub fn narrow(v: &View, dim: usize, start: usize, len: usize) -> View {
    let mut t = v.clone();
    if len > 0 {
        t.ptr = v
            .ptr
            .wrapping_offset(start as isize * v.strides[dim] * v.esize() as isize);
    }
    t.shape[dim] = len;
    t
}

/// Element `e` of `v` along dimension 0, that dimension dropped.
fn select0(v: &View, e: usize) -> View {
    let t = narrow(v, 0, e, 1);
    View {
        ptr: t.ptr,
        dtype: t.dtype,
        shape: t.shape[1..].to_vec(),
        strides: t.strides[1..].to_vec(),
    }
}

/// The per-group views of a weight or bias argument: a list as given, or one tensor with
/// the groups along its first dimension (`[E, K, N]`, `[E, N]`) split.
pub fn per_group(vs: &[View], stacked_rank: usize) -> Vec<View> {
    if vs.len() == 1 && vs[0].ndim() == stacked_rank {
        (0..vs[0].shape[0]).map(|e| select0(&vs[0], e)).collect()
    } else {
        vs.to_vec()
    }
}

/// The cumulative ends of an INT64 group list tensor (`counts`: the tensor holds sizes).
pub fn group_ends(gl: &View, counts: bool) -> Result<Vec<i64>, String> {
    let g: Vec<i64> = load(gl, DType::I64)?;
    if !counts {
        return Ok(g);
    }
    let mut acc = 0i64;
    Ok(g.iter()
        .map(|&c| {
            acc += c;
            acc
        })
        .collect())
}

/// Check that `ends` (cumulative) cut `total` items into groups: non-decreasing,
/// non-negative, at most `total`. Returns the `(start, len)` of each group.
fn spans(ends: &[i64], total: usize, what: &str) -> Result<Vec<(usize, usize)>, String> {
    let mut start = 0i64;
    let mut out = Vec::with_capacity(ends.len());
    for (e, &end) in ends.iter().enumerate() {
        if end < start || end > total as i64 {
            return Err(format!(
                "groupList {ends:?} (as cumulative ends) does not cut the {total} {what} into \
                 groups: group {e} would end at {end} after starting at {start}"
            ));
        }
        out.push((start as usize, (end - start) as usize));
        start = end;
    }
    Ok(out)
}

/// GroupedMatmul split along M: `y_i = x_i @ w_i + b_i` for each group i, where
/// - `ws` is a list of `[K, N]` (one per group) or one `[E, K, N]`, `bs` likewise `[N]` /
///   `[E, N]` (or empty);
/// - `xs` is one tensor per group (`[..., K]`), or one `[M, K]` whose rows are cut by the
///   cumulative `ends` (one group covering all rows when `ends` is None and there is one
///   group);
/// - `ys` is one tensor per group, or one `[M', N]` that receives the groups' rows one after
///   another (rows past the last group untouched).
pub fn grouped_matmul_m(
    xs: &[View],
    ws: &[View],
    bs: &[View],
    ends: Option<&[i64]>,
    ys: &[View],
) -> Result<(), String> {
    let ws = per_group(ws, 3);
    let bs = per_group(bs, 2);
    let g = ws.len();
    let xg: Vec<View> = if xs.len() == g && (g > 1 || ends.is_none()) {
        xs.to_vec()
    } else if xs.len() == 1 {
        let m = xs[0].shape[0];
        let all = [m as i64];
        let ends = ends.unwrap_or(&all);
        if ends.len() != g {
            return Err(format!(
                "groupList has {} entries for {g} weight groups",
                ends.len()
            ));
        }
        spans(ends, m, "rows of x")?
            .into_iter()
            .map(|(s, l)| narrow(&xs[0], 0, s, l))
            .collect()
    } else {
        return Err(format!("x has {} tensors for {g} groups", xs.len()));
    };
    let mut row = 0usize;
    for (i, (x, w)) in xg.iter().zip(&ws).enumerate() {
        let out = if ys.len() == g {
            ys[i].clone()
        } else if ys.len() == 1 && x.ndim() == 2 {
            let rows = x.shape[0];
            let y = &ys[0];
            if row + rows > y.shape[0] {
                return Err(format!(
                    "y has {} rows, fewer than the groups' {}",
                    y.shape[0],
                    row + rows
                ));
            }
            let o = narrow(y, 0, row, rows);
            row += rows;
            o
        } else {
            return Err(format!("y has {} tensors for {g} groups", ys.len()));
        };
        if out.numel() == 0 {
            continue;
        }
        super::matmul::matmul(x, w, &out, 1.0, bs.get(i).map(|b| (b, 1.0)))?;
    }
    Ok(())
}

/// GroupedMatmul split along K (groupType 2): x `[M, K]` and the single weight `[K, N]`
/// are cut along K by the cumulative `ends`; `y[e] = x[:, k_e] @ w[k_e, :]` into
/// y `[E, M, N]` (an empty group writes zeros).
pub fn grouped_matmul_k(x: &View, w: &View, ends: &[i64], y: &View) -> Result<(), String> {
    let k = x.shape[1];
    for (e, (s, l)) in spans(ends, k, "columns of x (K)")?.into_iter().enumerate() {
        let xe = narrow(x, 1, s, l);
        let we = narrow(w, 0, s, l);
        let ye = select0(y, e);
        if l == 0 {
            super::extra::store(vec![0f64; ye.numel()], DType::F64, &ye)?;
            continue;
        }
        super::matmul::matmul(&xe, &we, &ye, 1.0, None)?;
    }
    Ok(())
}

/// The shared expert's part of GroupedMatmulFinalizeRouting: `rows` (`[s, N]`) times
/// `weight`, added at row `offset` of the output.
pub struct Shared<'a> {
    pub rows: &'a View,
    pub weight: f32,
    pub offset: usize,
}

/// GroupedMatmulFinalizeRouting (A8W8): for each row i of the INT8 `x` (`[M, K]`) in group
/// g (the groups cut by the cumulative `ends`; rows past the last group are not computed),
/// `v = f32(x_i @ w_g) * scale[g] * pertoken[i]` (per-channel `scale` `[E, N]`, `pertoken`
/// `[M]`, absent = 1), then `out[row_index[i]] += logit[i] * v` (absent logit = 1, absent
/// row_index = i). `out` (`[BS, N]`, FLOAT32) starts at zero, plus `shared.weight *
/// shared.rows` at rows `shared.offset..`. The int8 products sum exactly; the scaling and the
/// accumulation are float32, rows added in order.
#[allow(clippy::too_many_arguments)]
pub fn gmm_finalize_routing(
    x: &View,
    ws: &[View],
    scale: &View,
    pertoken: Option<&View>,
    ends: &[i64],
    shared: Option<Shared>,
    logit: Option<&View>,
    row_index: Option<&View>,
    out: &View,
) -> Result<(), String> {
    let (m, k) = (x.shape[0], x.shape[1]);
    let (bs, n) = (out.shape[0], out.shape[1]);
    let xs: Vec<i64> = load(x, DType::I64)?;
    let sc: Vec<f32> = load(scale, DType::F32)?;
    let pt: Option<Vec<f32>> = pertoken.map(|p| load(p, DType::F32)).transpose()?;
    let lg: Option<Vec<f32>> = logit.map(|p| load(p, DType::F32)).transpose()?;
    let ri: Option<Vec<i64>> = row_index.map(|p| load(p, DType::I64)).transpose()?;
    let mut acc = vec![0f32; bs * n];
    if let Some(s) = &shared {
        let rows: Vec<f32> = load(s.rows, DType::F32)?;
        let r = s.rows.shape[0];
        if s.offset + r > bs {
            return Err(format!(
                "sharedInput's {r} rows at sharedInputOffset {} pass the output's {bs} rows",
                s.offset
            ));
        }
        for (i, v) in rows.iter().enumerate() {
            acc[s.offset * n + i] = v * s.weight;
        }
    }
    let groups = spans(ends, m, "rows of x")?;
    for (g, (start, len)) in groups.into_iter().enumerate() {
        let w = ws
            .get(g)
            .ok_or_else(|| format!("group {g} has no weight ({} given)", ws.len()))?;
        let wv: Vec<i64> = load(w, DType::I64)?;
        for i in start..start + len {
            let dst = match &ri {
                Some(r) => r[i],
                None => i as i64,
            };
            if dst < 0 || dst as usize >= bs {
                return Err(format!(
                    "rowIndex[{i}] = {dst} is outside the output's {bs} rows"
                ));
            }
            let dst = dst as usize;
            let p = pt.as_ref().map_or(1.0, |p| p[i]);
            let l = lg.as_ref().map_or(1.0, |l| l[i]);
            let xr = &xs[i * k..(i + 1) * k];
            for j in 0..n {
                let dot: i64 = (0..k).map(|q| xr[q] * wv[q * n + j]).sum();
                let v = dot as f32 * sc[g * n + j] * p;
                acc[dst * n + j] += l * v;
            }
        }
    }
    super::extra::store(acc, DType::F32, out)
}

/// GroupedMatmulAdd (groupType 2, x transposed): x `[K, M]` and weight `[K, N]` are cut along
/// K by the cumulative `ends`; `y[e] += x[k_e, :]^T @ w[k_e, :]` into y `[E, M, N]`
/// (FLOAT32). The product accumulates in f32 and is added to y in f32; an empty group leaves
/// its block unchanged.
pub fn grouped_matmul_add(x: &View, w: &View, ends: &[i64], y: &View) -> Result<(), String> {
    let (k, m) = (x.shape[0], x.shape[1]);
    let n = w.shape[1];
    for (e, (s, l)) in spans(ends, k, "rows of x (K)")?.into_iter().enumerate() {
        if l == 0 {
            continue;
        }
        let xe = narrow(x, 0, s, l);
        let xt = View {
            ptr: xe.ptr,
            dtype: xe.dtype,
            shape: vec![m, l],
            strides: vec![xe.strides[1], xe.strides[0]],
        };
        let we = narrow(w, 0, s, l);
        let prod = super::view::Scratch::new(DType::F32, &[m, n]);
        super::matmul::matmul(&xt, &we, &prod.view, 1.0, None)?;
        let ye = select0(y, e);
        let p: Vec<f32> = load(&prod.view, DType::F32)?;
        let mut acc: Vec<f32> = load(&ye, DType::F32)?;
        for (a, b) in acc.iter_mut().zip(&p) {
            *a += b;
        }
        super::extra::store(acc, DType::F32, &ye)?;
    }
    Ok(())
}
