//! Convolution (1-D, 2-D, 3-D; strided, padded, dilated, grouped, transposed) and its
//! backward forms, as im2col + `matrixmultiply`'s sgemm; and [`unfold`] (`Im2col`, torch's
//! `F.unfold`) as an operator of its own, copying values exactly.
//!
//! Operands of any dtype/strides are first copied into dense float32 buffers (fp16/bf16
//! widen exactly; the device's cube unit also accumulates in float32), the products run in
//! float32, and results are rounded once into the outputs. Work is split across threads by
//! (batch, group); the weight gradient sums per-thread partial products.
//!
//! Every geometry is described as the plain (non-transposed) convolution [`Geo`]: `input`
//! is the larger image `[N, Cin, D, H, W]`, `output` the convolution's result
//! `[N, Cout, oD, oH, oW]`, weight `[Cout, Cin/groups, kD, kH, kW]`. A transposed
//! convolution is the input-gradient of the plain one (and its backward the plain forward
//! and weight gradient), which is how [`conv_forward`] and [`conv_backward`] use it.
//! Tests: relative 1e-4 against a float64 host reference (sums of up to a few thousand
//! float32 products).

use super::dtype::DType;
use super::iter::{self, parallel_ranges, threads_for};
use super::view::View;

/// One plain convolution's geometry, spatial dimensions padded to 3 (leading 1s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geo {
    pub n: usize,
    pub cin: usize,
    pub isz: [usize; 3],
    pub cout: usize,
    pub ksz: [usize; 3],
    pub osz: [usize; 3],
    pub stride: [usize; 3],
    pub pad: [usize; 3],
    pub dil: [usize; 3],
    pub groups: usize,
}

impl Geo {
    fn ivol(&self) -> usize {
        self.isz.iter().product()
    }
    fn ovol(&self) -> usize {
        self.osz.iter().product()
    }
    fn kvol(&self) -> usize {
        self.ksz.iter().product()
    }
    fn cinpg(&self) -> usize {
        self.cin / self.groups
    }
    fn coutpg(&self) -> usize {
        self.cout / self.groups
    }
    /// Rows of one group's column matrix (`Cin/g × kvol`).
    fn krows(&self) -> usize {
        self.cinpg() * self.kvol()
    }
}

/// Output length of one spatial dimension of a plain convolution (None when the window
/// does not fit).
pub fn out_len(i: usize, k: usize, s: usize, p: usize, d: usize) -> Option<usize> {
    let span = d * (k.max(1) - 1) + 1;
    let padded = i + 2 * p;
    if padded < span || s == 0 {
        return None;
    }
    Some((padded - span) / s + 1)
}

/// Input length of one spatial dimension of a transposed convolution.
pub fn transposed_len(
    i: usize,
    k: usize,
    s: usize,
    p: usize,
    d: usize,
    op: usize,
) -> Option<usize> {
    let v = (i as i64 - 1) * s as i64 - 2 * p as i64 + (d * (k.max(1) - 1)) as i64 + op as i64 + 1;
    (v > 0).then_some(v as usize)
}

/// Dense float32 copy of a view (row-major).
fn load(v: &View) -> Result<Vec<f32>, String> {
    let mut buf = vec![0f32; v.numel()];
    if !buf.is_empty() {
        let dst = View::of_slice(&mut buf, DType::F32, &v.shape);
        iter::copy(v, &dst)?;
    }
    Ok(buf)
}

/// Store a dense float32 buffer (row-major, `out`'s shape) into `out`.
fn store(mut buf: Vec<f32>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, DType::F32, &out.shape);
    iter::copy(&src, out)
}

/// For an output position and kernel offset along one dimension, the input index (None
/// when it falls in the padding).
#[inline]
fn in_index(o: usize, k: usize, g: &Geo, d: usize) -> Option<usize> {
    let i = (o * g.stride[d] + k * g.dil[d]) as isize - g.pad[d] as isize;
    (i >= 0 && (i as usize) < g.isz[d]).then_some(i as usize)
}

/// The column matrix `[Cin/g × kvol, ovol]` of image `x` (one batch item, one group's
/// channels, dense `[Cin/g, D, H, W]`).
fn im2col(x: &[f32], g: &Geo, col: &mut [f32]) {
    let (ovol, ivol) = (g.ovol(), g.ivol());
    let [kd, kh, kw] = g.ksz;
    let [od, oh, ow] = g.osz;
    let [_, ih, iw] = g.isz;
    let mut row = 0;
    for c in 0..g.cinpg() {
        let xc = &x[c * ivol..(c + 1) * ivol];
        for a in 0..kd {
            for b in 0..kh {
                for e in 0..kw {
                    let dst = &mut col[row * ovol..(row + 1) * ovol];
                    let mut p = 0;
                    for zo in 0..od {
                        let zi = in_index(zo, a, g, 0);
                        for yo in 0..oh {
                            let yi = in_index(yo, b, g, 1);
                            for xo in 0..ow {
                                dst[p] = match (zi, yi, in_index(xo, e, g, 2)) {
                                    (Some(z), Some(y), Some(xx)) => xc[(z * ih + y) * iw + xx],
                                    _ => 0.0,
                                };
                                p += 1;
                            }
                        }
                    }
                    row += 1;
                }
            }
        }
    }
}

/// The adjoint of [`im2col`]: add the column matrix back into image `x`.
fn col2im(col: &[f32], g: &Geo, x: &mut [f32]) {
    let (ovol, ivol) = (g.ovol(), g.ivol());
    let [kd, kh, kw] = g.ksz;
    let [od, oh, ow] = g.osz;
    let [_, ih, iw] = g.isz;
    let mut row = 0;
    for c in 0..g.cinpg() {
        let xc = &mut x[c * ivol..(c + 1) * ivol];
        for a in 0..kd {
            for b in 0..kh {
                for e in 0..kw {
                    let src = &col[row * ovol..(row + 1) * ovol];
                    let mut p = 0;
                    for zo in 0..od {
                        let zi = in_index(zo, a, g, 0);
                        for yo in 0..oh {
                            let yi = in_index(yo, b, g, 1);
                            for xo in 0..ow {
                                if let (Some(z), Some(y), Some(xx)) =
                                    (zi, yi, in_index(xo, e, g, 2))
                                {
                                    xc[(z * ih + y) * iw + xx] += src[p];
                                }
                                p += 1;
                            }
                        }
                    }
                    row += 1;
                }
            }
        }
    }
}

/// `c[m×n] = alpha·c + a[m×k] @ b[k×n]` with explicit strides (row/col) for a and b.
#[allow(clippy::too_many_arguments)]
fn gemm(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    (ars, acs): (isize, isize),
    b: &[f32],
    (brs, bcs): (isize, isize),
    beta: f32,
    c: &mut [f32],
) {
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the slices hold the m×k, k×n and m×n matrices the strides describe (callers
    // pass dense buffers of exactly those sizes).
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            ars,
            acs,
            b.as_ptr(),
            brs,
            bcs,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}

/// Plain convolution: `y[N, Cout, o…] = conv(x[N, Cin, i…], w)` (dense buffers), no bias.
fn plain_forward(g: &Geo, x: &[f32], w: &[f32]) -> Vec<f32> {
    let (ovol, ivol, kr) = (g.ovol(), g.ivol(), g.krows());
    let (cinpg, coutpg) = (g.cinpg(), g.coutpg());
    let mut y = vec![0f32; g.n * g.cout * ovol];
    let jobs = g.n * g.groups;
    let yp = y.as_mut_ptr() as usize;
    let work = |r: std::ops::Range<usize>| {
        let mut col = vec![0f32; kr * ovol];
        for j in r {
            let (b, gr) = (j / g.groups, j % g.groups);
            let xs = &x[(b * g.cin + gr * cinpg) * ivol..][..cinpg * ivol];
            im2col(xs, g, &mut col);
            let wg = &w[gr * coutpg * kr..][..coutpg * kr];
            // SAFETY: each job writes its own disjoint [coutpg, ovol] block of y.
            let yb = unsafe {
                std::slice::from_raw_parts_mut(
                    (yp as *mut f32).add((b * g.cout + gr * coutpg) * ovol),
                    coutpg * ovol,
                )
            };
            gemm(
                coutpg,
                kr,
                ovol,
                wg,
                (kr as isize, 1),
                &col,
                (ovol as isize, 1),
                0.0,
                yb,
            );
        }
    };
    parallel_ranges(jobs, threads_for(jobs * kr * ovol).min(jobs), &work);
    y
}

/// Input gradient of the plain convolution: `gx = conv^T(gy, w)`.
fn plain_grad_input(g: &Geo, gy: &[f32], w: &[f32]) -> Vec<f32> {
    let (ovol, ivol, kr) = (g.ovol(), g.ivol(), g.krows());
    let (cinpg, coutpg) = (g.cinpg(), g.coutpg());
    let mut gx = vec![0f32; g.n * g.cin * ivol];
    let jobs = g.n * g.groups;
    let gp = gx.as_mut_ptr() as usize;
    let work = |r: std::ops::Range<usize>| {
        let mut col = vec![0f32; kr * ovol];
        for j in r {
            let (b, gr) = (j / g.groups, j % g.groups);
            let wg = &w[gr * coutpg * kr..][..coutpg * kr];
            let gyb = &gy[(b * g.cout + gr * coutpg) * ovol..][..coutpg * ovol];
            // col[kr, ovol] = wg^T [kr, coutpg] @ gy [coutpg, ovol]
            gemm(
                kr,
                coutpg,
                ovol,
                wg,
                (1, kr as isize),
                gyb,
                (ovol as isize, 1),
                0.0,
                &mut col,
            );
            // SAFETY: each job adds into its own disjoint [cinpg, ivol] block of gx.
            let xb = unsafe {
                std::slice::from_raw_parts_mut(
                    (gp as *mut f32).add((b * g.cin + gr * cinpg) * ivol),
                    cinpg * ivol,
                )
            };
            col2im(&col, g, xb);
        }
    };
    parallel_ranges(jobs, threads_for(jobs * kr * ovol).min(jobs), &work);
    gx
}

/// Weight gradient of the plain convolution: `gw[Cout, Cin/g, k…] = Σ_n gy ⊗ x`.
fn plain_grad_weight(g: &Geo, x: &[f32], gy: &[f32]) -> Vec<f32> {
    let (ovol, ivol, kr) = (g.ovol(), g.ivol(), g.krows());
    let (cinpg, coutpg) = (g.cinpg(), g.coutpg());
    let wlen = g.cout * kr;
    let threads = threads_for(g.n * g.groups * kr * ovol).min(g.n.max(1));
    let parts = std::sync::Mutex::new(Vec::<Vec<f32>>::new());
    let work = |r: std::ops::Range<usize>| {
        let mut acc = vec![0f32; wlen];
        let mut col = vec![0f32; kr * ovol];
        for b in r {
            for gr in 0..g.groups {
                let xs = &x[(b * g.cin + gr * cinpg) * ivol..][..cinpg * ivol];
                im2col(xs, g, &mut col);
                let gyb = &gy[(b * g.cout + gr * coutpg) * ovol..][..coutpg * ovol];
                // acc_g[coutpg, kr] += gy [coutpg, ovol] @ col^T [ovol, kr]
                gemm(
                    coutpg,
                    ovol,
                    kr,
                    gyb,
                    (ovol as isize, 1),
                    &col,
                    (1, ovol as isize),
                    1.0,
                    &mut acc[gr * coutpg * kr..][..coutpg * kr],
                );
            }
        }
        parts.lock().unwrap_or_else(|e| e.into_inner()).push(acc);
    };
    parallel_ranges(g.n, threads, &work);
    let parts = parts.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut gw = vec![0f32; wlen];
    for p in parts {
        for (a, b) in gw.iter_mut().zip(p) {
            *a += b;
        }
    }
    gw
}

/// Per-channel sums (in float64) of a dense `[N, C, vol]` buffer.
fn per_channel_sum(t: &[f32], n: usize, c: usize, vol: usize) -> Vec<f32> {
    let mut s = vec![0f64; c];
    for b in 0..n {
        for (ch, acc) in s.iter_mut().enumerate() {
            *acc += t[(b * c + ch) * vol..][..vol]
                .iter()
                .map(|&v| v as f64)
                .sum::<f64>();
        }
    }
    s.into_iter().map(|v| v as f32).collect()
}

/// The view with spatial dimensions padded to 3 at the front (`[N, C, s…]` → 5-D).
fn as5(v: &View) -> View {
    let mut shape = v.shape[..2].to_vec();
    let mut strides = v.strides[..2].to_vec();
    for _ in v.ndim()..5 {
        shape.push(1);
        strides.push(0);
    }
    shape.extend_from_slice(&v.shape[2..]);
    strides.extend_from_slice(&v.strides[2..]);
    View {
        shape,
        strides,
        ..v.clone()
    }
}

/// `aclnnConvolution`: `output = conv(input, weight) + bias` (plain) or the transposed
/// convolution. `geo` is the plain geometry (for `transposed`, its image is `output`).
pub fn conv_forward(
    input: &View,
    weight: &View,
    bias: Option<&View>,
    output: &View,
    geo: &Geo,
    transposed: bool,
) -> Result<(), String> {
    let x = load(&as5(input))?;
    let w = load(&as5(weight))?;
    let (mut y, c, vol) = if transposed {
        (plain_grad_input(geo, &x, &w), geo.cin, geo.ivol())
    } else {
        (plain_forward(geo, &x, &w), geo.cout, geo.ovol())
    };
    if let Some(b) = bias {
        let b = load(b)?;
        for (i, chunk) in y.chunks_mut(vol.max(1)).enumerate() {
            let bv = b[i % c];
            chunk.iter_mut().for_each(|v| *v += bv);
        }
    }
    store(y, &as5(output))
}

/// `aclnnConvolutionBackward`: any of the three gradients (None = not asked for).
#[allow(clippy::too_many_arguments)]
pub fn conv_backward(
    grad_output: &View,
    input: &View,
    weight: &View,
    geo: &Geo,
    transposed: bool,
    grad_input: Option<&View>,
    grad_weight: Option<&View>,
    grad_bias: Option<&View>,
) -> Result<(), String> {
    let gy = load(&as5(grad_output))?;
    if let Some(gi) = grad_input {
        let w = load(&as5(weight))?;
        let gx = if transposed {
            plain_forward(geo, &gy, &w)
        } else {
            plain_grad_input(geo, &gy, &w)
        };
        store(gx, &as5(gi))?;
    }
    if let Some(gw) = grad_weight {
        let x = load(&as5(input))?;
        let r = if transposed {
            plain_grad_weight(geo, &gy, &x)
        } else {
            plain_grad_weight(geo, &x, &gy)
        };
        store(r, &as5(gw))?;
    }
    if let Some(gb) = grad_bias {
        let (c, vol) = if transposed {
            (geo.cin, geo.ivol())
        } else {
            (geo.cout, geo.ovol())
        };
        store(per_channel_sum(&gy, geo.n, c, vol), gb)?;
    }
    Ok(())
}

/// `torch.nn.functional.unfold`: `x` is `[N, C, H, W]` (or `[C, H, W]`), `out` is
/// `[N, C * kH * kW, L]` (or `[C * kH * kW, L]`) with `L = oH * oW`; row `c * kH * kW +
/// i * kW + j`, column `oy * oW + ox` holds `x[c, oy * sH - pH + i * dH, ox * sW - pW + j *
/// dW]`, or 0 in the padding. `k`, `d`, `p`, `s` are (H, W) pairs. Values are copied
/// exactly.
pub fn unfold(
    x: &View,
    k: [usize; 2],
    d: [usize; 2],
    p: [usize; 2],
    s: [usize; 2],
    out: &View,
) -> Result<(), String> {
    // floats move through f64, integers and bools through i64: both exact
    if x.dtype.is_float() {
        unfold_as::<f64>(x, k, d, p, s, out, DType::F64)
    } else {
        unfold_as::<i64>(x, k, d, p, s, out, DType::I64)
    }
}

fn unfold_as<T: Default + Copy>(
    x: &View,
    k: [usize; 2],
    d: [usize; 2],
    p: [usize; 2],
    s: [usize; 2],
    out: &View,
    as_dt: DType,
) -> Result<(), String> {
    let nd = x.ndim();
    let (c, h, w) = (x.shape[nd - 3], x.shape[nd - 2], x.shape[nd - 1]);
    let n: usize = x.shape[..nd - 3].iter().product();
    let oh = out_len(h, k[0], s[0], p[0], d[0]).ok_or("the kernel does not fit in H")?;
    let ow = out_len(w, k[1], s[1], p[1], d[1]).ok_or("the kernel does not fit in W")?;
    if out.numel() == 0 {
        return Ok(());
    }
    let xs: Vec<T> = super::extra::load(x, as_dt)?;
    let (rows, l) = (c * k[0] * k[1], oh * ow);
    let mut y = vec![T::default(); n * rows * l];
    for b in 0..n {
        for ci in 0..c {
            for i in 0..k[0] {
                for j in 0..k[1] {
                    let row = (b * rows + (ci * k[0] + i) * k[1] + j) * l;
                    for oy in 0..oh {
                        let iy = (oy * s[0] + i * d[0]) as isize - p[0] as isize;
                        if iy < 0 || iy >= h as isize {
                            continue;
                        }
                        for ox in 0..ow {
                            let ix = (ox * s[1] + j * d[1]) as isize - p[1] as isize;
                            if ix < 0 || ix >= w as isize {
                                continue;
                            }
                            y[row + oy * ow + ox] =
                                xs[((b * c + ci) * h + iy as usize) * w + ix as usize];
                        }
                    }
                }
            }
        }
    }
    super::extra::store(y, as_dt, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(g: &Geo, x: &[f32], w: &[f32]) -> Vec<f64> {
        let mut y = vec![0f64; g.n * g.cout * g.ovol()];
        let (cinpg, coutpg) = (g.cinpg(), g.coutpg());
        for b in 0..g.n {
            for co in 0..g.cout {
                let gr = co / coutpg;
                for oy in 0..g.osz[1] {
                    for ox in 0..g.osz[2] {
                        let mut s = 0f64;
                        for ci in 0..cinpg {
                            for ky in 0..g.ksz[1] {
                                for kx in 0..g.ksz[2] {
                                    if let (Some(iy), Some(ix)) =
                                        (in_index(oy, ky, g, 1), in_index(ox, kx, g, 2))
                                    {
                                        let xv = x[((b * g.cin + gr * cinpg + ci) * g.isz[1] + iy)
                                            * g.isz[2]
                                            + ix]
                                            as f64;
                                        let wv = w
                                            [((co * cinpg + ci) * g.ksz[1] + ky) * g.ksz[2] + kx]
                                            as f64;
                                        s += xv * wv;
                                    }
                                }
                            }
                        }
                        y[((b * g.cout + co) * g.osz[1] + oy) * g.osz[2] + ox] = s;
                    }
                }
            }
        }
        y
    }

    #[test]
    fn forward_and_adjoints_match_a_direct_sum() {
        let g = Geo {
            n: 2,
            cin: 4,
            isz: [1, 7, 6],
            cout: 6,
            ksz: [1, 3, 2],
            osz: [1, 3, 3],
            stride: [1, 2, 2],
            pad: [0, 1, 1],
            dil: [1, 2, 1],
            groups: 2,
        };
        assert_eq!(out_len(7, 3, 2, 1, 2), Some(3));
        assert_eq!(out_len(6, 2, 2, 1, 1), Some(4));
        let g = Geo {
            osz: [1, 3, 4],
            ..g
        };
        let x: Vec<f32> = (0..g.n * g.cin * g.ivol())
            .map(|i| ((i * 37 % 17) as f32 - 8.0) / 7.0)
            .collect();
        let w: Vec<f32> = (0..g.cout * g.krows())
            .map(|i| ((i * 11 % 13) as f32 - 6.0) / 5.0)
            .collect();
        let y = plain_forward(&g, &x, &w);
        let r = naive(&g, &x, &w);
        for (a, b) in y.iter().zip(&r) {
            assert!((*a as f64 - b).abs() < 1e-4, "{a} vs {b}");
        }
        // <conv(x), gy> == <x, gx(gy)> == <w, gw(x, gy)>
        let gy: Vec<f32> = (0..y.len())
            .map(|i| ((i * 5 % 9) as f32 - 4.0) / 3.0)
            .collect();
        let lhs: f64 = y.iter().zip(&gy).map(|(a, b)| *a as f64 * *b as f64).sum();
        let gx = plain_grad_input(&g, &gy, &w);
        let mid: f64 = x.iter().zip(&gx).map(|(a, b)| *a as f64 * *b as f64).sum();
        let gw = plain_grad_weight(&g, &x, &gy);
        let rhs: f64 = w.iter().zip(&gw).map(|(a, b)| *a as f64 * *b as f64).sum();
        assert!((lhs - mid).abs() < 1e-3 * lhs.abs().max(1.0), "{lhs} {mid}");
        assert!((lhs - rhs).abs() < 1e-3 * lhs.abs().max(1.0), "{lhs} {rhs}");
    }

    #[test]
    fn unfold_with_padding_and_stride() {
        // one 3x3 channel, kernel 2, padding 1, stride 2 -> 2x2 windows
        let mut x: Vec<f64> = (1..=9).map(f64::from).collect();
        let mut o = vec![-1f64; 4 * 4];
        let vx = View::of_slice(&mut x, DType::F64, &[1, 1, 3, 3]);
        let vo = View::of_slice(&mut o, DType::F64, &[1, 4, 4]);
        unfold(&vx, [2, 2], [1, 1], [1, 1], [2, 2], &vo).unwrap();
        // rows: kernel (0,0), (0,1), (1,0), (1,1); columns: windows at (-1,-1), (-1,1), (1,-1), (1,1)
        assert_eq!(
            o,
            vec![
                0.0, 0.0, 0.0, 5.0, //
                0.0, 0.0, 4.0, 6.0, //
                0.0, 2.0, 0.0, 8.0, //
                1.0, 3.0, 7.0, 9.0
            ]
        );
    }
}
