//! Grid sampling (`aclnnGridSampler2D` and its backward), PyTorch's CPU `grid_sampler_2d`:
//! input `[N, C, H, W]`, grid `[N, Ho, Wo, 2]` of normalised (x, y) in [-1, 1], output
//! `[N, C, Ho, Wo]`. Interpolation 0 bilinear, 1 nearest (round half to even), 2 bicubic
//! (A = -0.75); padding 0 zeros, 1 border, 2 reflection; `align_corners` maps -1 and 1 to
//! the centres (true) or the outer edges (false) of the corner pixels. The backward gives the
//! input gradient (scatter of the interpolation weights) and the grid gradient (the
//! derivative of the interpolation through the unnormalisation, clipping and reflection),
//! for bilinear and nearest (whose grid gradient is 0). Also the affine grid
//! (`aclnnAffineGrid`, `F.affine_grid`) and 3-D grid sampling (`aclnnGridSampler3D` and its
//! backward: trilinear or nearest, `[N, C, D, H, W]` at a `[N, Do, Ho, Wo, 3]` grid).
//! Also bicubic upsampling (`aclnnUpsampleBicubic2d` and its backward), which shares the
//! cubic convolution weights. Everything computes in float64.

use super::dtype::DType;
use super::iter;
use super::view::View;

fn load(v: &View) -> Result<Vec<f64>, String> {
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok(buf)
}

fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, DType::F64, &out.shape);
    iter::copy(&src, out)
}

/// Normalised coordinate to pixel space, with d(pixel)/d(coord).
fn unnormalize(c: f64, size: usize, align: bool) -> (f64, f64) {
    let s = size as f64;
    if align {
        ((c + 1.0) / 2.0 * (s - 1.0), (s - 1.0) / 2.0)
    } else {
        (((c + 1.0) * s - 1.0) / 2.0, s / 2.0)
    }
}

/// Clip to `[0, size - 1]`, with the derivative (0 where clipped).
fn clip(c: f64, size: usize) -> (f64, f64) {
    let max = size as f64 - 1.0;
    if c <= 0.0 {
        (0.0, 0.0)
    } else if c >= max {
        (max, 0.0)
    } else {
        (c, 1.0)
    }
}

/// Reflect into `[twice_low / 2, twice_high / 2]`, with the derivative (+1 or -1).
fn reflect(c: f64, twice_low: i64, twice_high: i64) -> (f64, f64) {
    if twice_low == twice_high {
        return (0.0, 0.0);
    }
    let min = twice_low as f64 / 2.0;
    let span = (twice_high - twice_low) as f64 / 2.0;
    let mut x = c - min;
    let mut sign = 1.0;
    if x < 0.0 {
        sign = -1.0;
        x = -x;
    }
    let extra = x % span;
    let flips = (x / span).floor() as i64;
    if flips % 2 == 0 {
        (extra + min, sign)
    } else {
        (span - extra + min, -sign)
    }
}

/// Apply the padding mode to a pixel coordinate, with the derivative.
fn pad_coord(c: f64, size: usize, padding: i64, align: bool) -> (f64, f64) {
    match padding {
        1 => clip(c, size),
        2 => {
            let (r, gr) = if align {
                reflect(c, 0, 2 * (size as i64 - 1))
            } else {
                reflect(c, -1, 2 * size as i64 - 1)
            };
            let (v, gc) = clip(r, size);
            (v, gr * gc)
        }
        _ => (c, 1.0),
    }
}

/// The source pixel coordinate of a grid value, with d(pixel)/d(grid value).
fn source(c: f64, size: usize, padding: i64, align: bool) -> (f64, f64) {
    let (u, gu) = unnormalize(c, size, align);
    let (v, gp) = pad_coord(u, size, padding, align);
    (v, gu * gp)
}

fn inside(x: i64, y: i64, w: usize, h: usize) -> bool {
    x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h
}

fn cubic1(x: f64, a: f64) -> f64 {
    ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
}

fn cubic2(x: f64, a: f64) -> f64 {
    ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
}

fn cubic_coeffs(t: f64) -> [f64; 4] {
    let a = -0.75;
    [
        cubic2(t + 1.0, a),
        cubic1(t, a),
        cubic1(1.0 - t, a),
        cubic2(2.0 - t, a),
    ]
}

/// Geometry of one call: (N, C, H, W) of the input and (Ho, Wo) of the grid.
struct Geo {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    ho: usize,
    wo: usize,
}

fn geo(input: &View, grid: &View) -> Geo {
    Geo {
        n: input.shape[0],
        c: input.shape[1],
        h: input.shape[2],
        w: input.shape[3],
        ho: grid.shape[1],
        wo: grid.shape[2],
    }
}

/// `out = grid_sampler_2d(input, grid)`.
pub fn grid_sampler_2d(
    input: &View,
    grid: &View,
    interpolation: i64,
    padding: i64,
    align: bool,
    out: &View,
) -> Result<(), String> {
    let g = geo(input, grid);
    let x = load(input)?;
    let gr = load(grid)?;
    let mut y = vec![0f64; out.numel()];
    let plane = g.h * g.w;
    let at = |n: usize, c: usize, xi: i64, yi: i64| -> f64 {
        if inside(xi, yi, g.w, g.h) {
            x[(n * g.c + c) * plane + yi as usize * g.w + xi as usize]
        } else {
            0.0
        }
    };
    for n in 0..g.n {
        for oh in 0..g.ho {
            for ow in 0..g.wo {
                let gi = ((n * g.ho + oh) * g.wo + ow) * 2;
                let (gx, gy) = (gr[gi], gr[gi + 1]);
                let oidx = |c: usize| ((n * g.c + c) * g.ho + oh) * g.wo + ow;
                match interpolation {
                    0 => {
                        let (ix, _) = source(gx, g.w, padding, align);
                        let (iy, _) = source(gy, g.h, padding, align);
                        let (x0, y0) = (ix.floor(), iy.floor());
                        let (x1, y1) = (x0 + 1.0, y0 + 1.0);
                        let w_nw = (x1 - ix) * (y1 - iy);
                        let w_ne = (ix - x0) * (y1 - iy);
                        let w_sw = (x1 - ix) * (iy - y0);
                        let w_se = (ix - x0) * (iy - y0);
                        let (x0, y0) = (x0 as i64, y0 as i64);
                        for c in 0..g.c {
                            y[oidx(c)] = at(n, c, x0, y0) * w_nw
                                + at(n, c, x0 + 1, y0) * w_ne
                                + at(n, c, x0, y0 + 1) * w_sw
                                + at(n, c, x0 + 1, y0 + 1) * w_se;
                        }
                    }
                    1 => {
                        let (ix, _) = source(gx, g.w, padding, align);
                        let (iy, _) = source(gy, g.h, padding, align);
                        let (xn, yn) = (ix.round_ties_even() as i64, iy.round_ties_even() as i64);
                        for c in 0..g.c {
                            y[oidx(c)] = at(n, c, xn, yn);
                        }
                    }
                    _ => {
                        // bicubic: the taps are padded one by one
                        let (ix, _) = unnormalize(gx, g.w, align);
                        let (iy, _) = unnormalize(gy, g.h, align);
                        let (x0, y0) = (ix.floor(), iy.floor());
                        let (cx, cy) = (cubic_coeffs(ix - x0), cubic_coeffs(iy - y0));
                        let tap = |n: usize, c: usize, xi: f64, yi: f64| -> f64 {
                            let (xp, _) = pad_coord(xi, g.w, padding, align);
                            let (yp, _) = pad_coord(yi, g.h, padding, align);
                            at(n, c, xp as i64, yp as i64)
                        };
                        for c in 0..g.c {
                            let mut s = 0.0;
                            for (j, wy) in cy.iter().enumerate() {
                                let mut row = 0.0;
                                for (i, wx) in cx.iter().enumerate() {
                                    row += tap(n, c, x0 - 1.0 + i as f64, y0 - 1.0 + j as f64) * wx;
                                }
                                s += row * wy;
                            }
                            y[oidx(c)] = s;
                        }
                    }
                }
            }
        }
    }
    store(y, out)
}

/// Backward of [`grid_sampler_2d`] for bilinear (0) and nearest (1) interpolation:
/// `input_grad` and `grid_grad` (either may be absent).
#[allow(clippy::too_many_arguments)]
pub fn grid_sampler_2d_backward(
    grad_output: &View,
    input: &View,
    grid: &View,
    interpolation: i64,
    padding: i64,
    align: bool,
    input_grad: Option<&View>,
    grid_grad: Option<&View>,
) -> Result<(), String> {
    let g = geo(input, grid);
    let x = load(input)?;
    let gr = load(grid)?;
    let go = load(grad_output)?;
    let plane = g.h * g.w;
    let mut gin = vec![0f64; input.numel()];
    let mut ggrid = vec![0f64; grid.numel()];
    for n in 0..g.n {
        for oh in 0..g.ho {
            for ow in 0..g.wo {
                let gi = ((n * g.ho + oh) * g.wo + ow) * 2;
                let (ix, mx) = source(gr[gi], g.w, padding, align);
                let (iy, my) = source(gr[gi + 1], g.h, padding, align);
                let goi = |c: usize| go[((n * g.c + c) * g.ho + oh) * g.wo + ow];
                if interpolation == 1 {
                    let (xn, yn) = (ix.round_ties_even() as i64, iy.round_ties_even() as i64);
                    if inside(xn, yn, g.w, g.h) {
                        for c in 0..g.c {
                            gin[(n * g.c + c) * plane + yn as usize * g.w + xn as usize] += goi(c);
                        }
                    }
                    continue;
                }
                let (fx0, fy0) = (ix.floor(), iy.floor());
                let (fx1, fy1) = (fx0 + 1.0, fy0 + 1.0);
                let taps = [
                    (fx0, fy0, (fx1 - ix) * (fy1 - iy)),
                    (fx1, fy0, (ix - fx0) * (fy1 - iy)),
                    (fx0, fy1, (fx1 - ix) * (iy - fy0)),
                    (fx1, fy1, (ix - fx0) * (iy - fy0)),
                ];
                // d(weight)/d(ix), d(weight)/d(iy) of nw, ne, sw, se
                let dw = [
                    (-(fy1 - iy), -(fx1 - ix)),
                    (fy1 - iy, -(ix - fx0)),
                    (-(iy - fy0), fx1 - ix),
                    (iy - fy0, ix - fx0),
                ];
                let (mut gx, mut gy) = (0.0, 0.0);
                for c in 0..g.c {
                    let gv = goi(c);
                    for (k, &(tx, ty, wgt)) in taps.iter().enumerate() {
                        let (xi, yi) = (tx as i64, ty as i64);
                        if !inside(xi, yi, g.w, g.h) {
                            continue;
                        }
                        let idx = (n * g.c + c) * plane + yi as usize * g.w + xi as usize;
                        gin[idx] += wgt * gv;
                        gx += x[idx] * dw[k].0 * gv;
                        gy += x[idx] * dw[k].1 * gv;
                    }
                }
                ggrid[gi] = mx * gx;
                ggrid[gi + 1] = my * gy;
            }
        }
    }
    if let Some(v) = input_grad {
        store(gin, v)?;
    }
    if let Some(v) = grid_grad {
        store(ggrid, v)?;
    }
    Ok(())
}

/// `grid_sampler_3d` (`aclnnGridSampler3D`): input `[N, C, D, H, W]`, grid `[N, Do, Ho, Wo,
/// 3]` of (x, y, z), output `[N, C, Do, Ho, Wo]`; interpolation 0 trilinear or 1 nearest.
/// With `grads` = (grad_output, input_grad, grid_grad) it is the backward instead: `out`
/// is unused, the gradients requested are written.
#[allow(clippy::too_many_arguments)]
fn sample_3d(
    input: &View,
    grid: &View,
    interpolation: i64,
    padding: i64,
    align: bool,
    out: Option<&View>,
    grads: Option<(&View, Option<&View>, Option<&View>)>,
) -> Result<(), String> {
    let (n_, c_) = (input.shape[0], input.shape[1]);
    let size = [input.shape[4], input.shape[3], input.shape[2]]; // W, H, D (x, y, z)
    let opts: usize = grid.shape[1] * grid.shape[2] * grid.shape[3];
    let vol = size[0] * size[1] * size[2];
    let x = load(input)?;
    let gr = load(grid)?;
    let go = match grads {
        Some((g, _, _)) => load(g)?,
        None => Vec::new(),
    };
    let mut y = vec![0f64; if grads.is_none() { n_ * c_ * opts } else { 0 }];
    let mut gin = vec![0f64; if grads.is_some() { x.len() } else { 0 }];
    let mut ggrid = vec![0f64; if grads.is_some() { gr.len() } else { 0 }];
    let flat = |p: [i64; 3]| -> Option<usize> {
        (0..3)
            .all(|d| p[d] >= 0 && (p[d] as usize) < size[d])
            .then(|| (p[2] as usize * size[1] + p[1] as usize) * size[0] + p[0] as usize)
    };
    for n in 0..n_ {
        for o in 0..opts {
            let gi = (n * opts + o) * 3;
            let mut pix = [0f64; 3];
            let mut mult = [0f64; 3];
            for d in 0..3 {
                let (v, m) = source(gr[gi + d], size[d], padding, align);
                pix[d] = v;
                mult[d] = m;
            }
            if interpolation == 1 {
                let p = [0, 1, 2].map(|d| pix[d].round_ties_even() as i64);
                if let Some(f) = flat(p) {
                    for c in 0..c_ {
                        let oi = (n * c_ + c) * opts + o;
                        if grads.is_some() {
                            gin[(n * c_ + c) * vol + f] += go[oi];
                        } else {
                            y[oi] = x[(n * c_ + c) * vol + f];
                        }
                    }
                }
                continue;
            }
            let base = pix.map(f64::floor);
            let frac = [0, 1, 2].map(|d| pix[d] - base[d]);
            let mut dg = [0f64; 3];
            for corner in 0..8usize {
                let bit = |d: usize| (corner >> d) & 1 == 1;
                let p = [0, 1, 2].map(|d| base[d] as i64 + bit(d) as i64);
                let Some(f) = flat(p) else { continue };
                let wd = |d: usize| if bit(d) { frac[d] } else { 1.0 - frac[d] };
                let w = wd(0) * wd(1) * wd(2);
                // d(weight)/d(pixel coordinate d)
                let dw = [0, 1, 2].map(|d| {
                    let s = if bit(d) { 1.0 } else { -1.0 };
                    s * (0..3).filter(|&e| e != d).map(wd).product::<f64>()
                });
                for c in 0..c_ {
                    let oi = (n * c_ + c) * opts + o;
                    let xi = (n * c_ + c) * vol + f;
                    if grads.is_some() {
                        gin[xi] += w * go[oi];
                        for d in 0..3 {
                            dg[d] += x[xi] * dw[d] * go[oi];
                        }
                    } else {
                        y[oi] += w * x[xi];
                    }
                }
            }
            if grads.is_some() {
                for d in 0..3 {
                    ggrid[gi + d] = mult[d] * dg[d];
                }
            }
        }
    }
    match grads {
        None => store(y, out.ok_or("grid_sampler_3d: no output")?),
        Some((_, ig, gg)) => {
            if let Some(v) = ig {
                store(gin, v)?;
            }
            if let Some(v) = gg {
                store(ggrid, v)?;
            }
            Ok(())
        }
    }
}

/// `out = grid_sampler_3d(input, grid)` (trilinear or nearest).
pub fn grid_sampler_3d(
    input: &View,
    grid: &View,
    interpolation: i64,
    padding: i64,
    align: bool,
    out: &View,
) -> Result<(), String> {
    sample_3d(input, grid, interpolation, padding, align, Some(out), None)
}

/// Backward of [`grid_sampler_3d`]: `input_grad` and `grid_grad` (either may be absent).
#[allow(clippy::too_many_arguments)]
pub fn grid_sampler_3d_backward(
    grad_output: &View,
    input: &View,
    grid: &View,
    interpolation: i64,
    padding: i64,
    align: bool,
    input_grad: Option<&View>,
    grid_grad: Option<&View>,
) -> Result<(), String> {
    sample_3d(
        input,
        grid,
        interpolation,
        padding,
        align,
        None,
        Some((grad_output, input_grad, grid_grad)),
    )
}

/// PyTorch's bicubic source coordinate of output `o` (`area_pixel_compute_source_index`
/// with `cubic`: no clamping at 0): the base index and the fraction.
fn bicubic_src(o: usize, n_in: usize, n_out: usize, scale: Option<f64>, align: bool) -> (i64, f64) {
    let r = if align {
        if n_out > 1 {
            (n_in as f64 - 1.0) / (n_out as f64 - 1.0)
        } else {
            0.0
        }
    } else {
        match scale {
            Some(s) => 1.0 / s,
            None => n_in as f64 / n_out as f64,
        }
    };
    let src = if align {
        r * o as f64
    } else {
        r * (o as f64 + 0.5) - 0.5
    };
    let f = src.floor();
    (f as i64, src - f)
}

/// The 16 (input flat index, weight) terms of every output position of a bicubic resize of
/// an `[h, w]` plane to `[oh, ow]` (taps clamped to the border, as PyTorch's
/// `upsample_get_value_bounded`).
fn bicubic_plan(
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
    scales: [Option<f64>; 2],
    align: bool,
) -> Vec<[(usize, f64); 16]> {
    let clamp = |v: i64, n: usize| v.clamp(0, n as i64 - 1) as usize;
    let mut plan = Vec::with_capacity(oh * ow);
    for y in 0..oh {
        let (y0, ty) = bicubic_src(y, h, oh, scales[0], align);
        let cy = cubic_coeffs(ty);
        for x in 0..ow {
            let (x0, tx) = bicubic_src(x, w, ow, scales[1], align);
            let cx = cubic_coeffs(tx);
            let mut t = [(0usize, 0f64); 16];
            for j in 0..4 {
                for i in 0..4 {
                    let yy = clamp(y0 - 1 + j as i64, h);
                    let xx = clamp(x0 - 1 + i as i64, w);
                    t[j * 4 + i] = (yy * w + xx, cy[j] * cx[i]);
                }
            }
            plan.push(t);
        }
    }
    plan
}

/// `aclnnUpsampleBicubic2d`: `x` `[N, C, H, W]` resized to `out` `[N, C, OH, OW]` with
/// PyTorch's bicubic convolution (A = -0.75); `scales` (H, W) are used when given and
/// `align` is false.
pub fn upsample_bicubic2d(
    x: &View,
    scales: [Option<f64>; 2],
    align: bool,
    out: &View,
) -> Result<(), String> {
    let (h, w) = (x.shape[2], x.shape[3]);
    let (oh, ow) = (out.shape[2], out.shape[3]);
    let plan = bicubic_plan((h, w), (oh, ow), scales, align);
    let xs = load(x)?;
    let planes = x.shape[0] * x.shape[1];
    let mut y = vec![0f64; planes * oh * ow];
    for p in 0..planes {
        let src = &xs[p * h * w..][..h * w];
        for (o, t) in plan.iter().enumerate() {
            y[p * oh * ow + o] = t.iter().map(|&(i, wt)| wt * src[i]).sum();
        }
    }
    store(y, out)
}

/// Backward of [`upsample_bicubic2d`]: each output gradient spread over its 16 (clamped)
/// taps with the interpolation weights.
pub fn upsample_bicubic2d_backward(
    dy: &View,
    scales: [Option<f64>; 2],
    align: bool,
    dx: &View,
) -> Result<(), String> {
    let (h, w) = (dx.shape[2], dx.shape[3]);
    let (oh, ow) = (dy.shape[2], dy.shape[3]);
    let plan = bicubic_plan((h, w), (oh, ow), scales, align);
    let g = load(dy)?;
    let planes = dx.shape[0] * dx.shape[1];
    let mut r = vec![0f64; planes * h * w];
    for p in 0..planes {
        let dst = &mut r[p * h * w..][..h * w];
        for (o, t) in plan.iter().enumerate() {
            let v = g[p * oh * ow + o];
            for &(i, wt) in t {
                dst[i] += wt * v;
            }
        }
    }
    store(r, dx)
}

/// PyTorch's `linspace_from_neg_one`: `steps` points from -1 to 1, scaled by
/// `(steps - 1) / steps` without `align_corners`; a single step is 0.
fn base_coords(steps: usize, align: bool) -> Vec<f64> {
    if steps <= 1 {
        return vec![0.0; steps];
    }
    let s = steps as f64;
    (0..steps)
        .map(|i| {
            let v = -1.0 + 2.0 * i as f64 / (s - 1.0);
            if align {
                v
            } else {
                v * (s - 1.0) / s
            }
        })
        .collect()
}

/// `aclnnAffineGrid`: `theta` `[N, 2, 3]` (2-D, `size` = N, C, H, W; out `[N, H, W, 2]`) or
/// `[N, 3, 4]` (3-D, `size` = N, C, D, H, W; out `[N, D, H, W, 3]`): every output point is
/// `theta @ (x, y[, z], 1)` of its base coordinates.
pub fn affine_grid(theta: &View, size: &[usize], align: bool, out: &View) -> Result<(), String> {
    let th = load(theta)?;
    let k = size.len() - 2; // spatial dimensions
    let n = size[0];
    // the base coordinates, innermost (x = W) first
    let axes: Vec<Vec<f64>> = (0..k)
        .map(|j| base_coords(size[size.len() - 1 - j], align))
        .collect();
    let points: usize = size[2..].iter().product();
    let mut y = vec![0f64; out.numel()];
    for b in 0..n {
        let t = &th[b * k * (k + 1)..][..k * (k + 1)];
        for p in 0..points {
            let mut rem = p;
            let mut base = vec![1.0; k + 1];
            for (j, ax) in axes.iter().enumerate() {
                let len = size[size.len() - 1 - j];
                base[j] = ax[rem % len];
                rem /= len;
            }
            for i in 0..k {
                y[(b * points + p) * k + i] = (0..=k).map(|j| t[i * (k + 1) + j] * base[j]).sum();
            }
        }
    }
    store(y, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_grid_reproduces_the_input() {
        // align_corners with a grid on the pixel centres samples each pixel exactly
        let mut x: Vec<f64> = (0..6).map(|v| v as f64).collect();
        let xv = View::of_slice(&mut x, DType::F64, &[1, 1, 2, 3]);
        let mut grid = Vec::new();
        for yy in [-1.0, 1.0] {
            for xx in [-1.0, 0.0, 1.0] {
                grid.extend([xx, yy]);
            }
        }
        let gv = View::of_slice(&mut grid, DType::F64, &[1, 2, 3, 2]);
        for mode in 0..3 {
            let mut o = vec![0f64; 6];
            let ov = View::of_slice(&mut o, DType::F64, &[1, 1, 2, 3]);
            grid_sampler_2d(&xv, &gv, mode, 0, true, &ov).unwrap();
            for (a, b) in o.iter().zip(0..6) {
                assert!((a - b as f64).abs() < 1e-12, "mode {mode}: {o:?}");
            }
        }
    }

    #[test]
    fn reflection_folds_back() {
        assert_eq!(reflect(-0.5, -1, 5).0, -0.5);
        assert_eq!(reflect(3.0, -1, 5).0, 2.0);
        // inside the first fold the derivative is -1; at the fold point PyTorch's rule gives +1
        assert_eq!(reflect(-1.5, 0, 4), (1.5, -1.0));
        assert_eq!(reflect(-2.0, 0, 4), (2.0, 1.0));
        assert_eq!(reflect(5.0, 0, 4), (1.0, 1.0));
    }
}
