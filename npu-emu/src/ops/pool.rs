//! 2-D pooling over `[N, C, H, W]` (or `[C, H, W]`) with PyTorch's window rules: max pooling
//! with indices (flat `h * W + w` per plane, NaN wins) or with a mask, average pooling
//! (padding, `ceil_mode`, `count_include_pad`, `divisor_override`), adaptive average and max
//! pooling, and the backward form of each. Values are read and written through float64
//! (exact for every input dtype) and rounded once; planes are split across threads.
//!
//! The mask of `aclnnMaxPool2dWithMask` is this engine's own encoding inside CANN's documented
//! shape `[N, C, kH*kW, (ceil(oH*oW/16)+1)*32]` (int8): byte `[k, p]` is 1 when kernel
//! offset `k` holds output `p`'s maximum. Only the matching backward reads it.

use super::dtype::DType;
use super::iter::{self, parallel_ranges, threads_for};
use super::view::View;

/// Window parameters of one pooling call (2-D; index 0 is H, 1 is W).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool2d {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub pad: [usize; 2],
    pub dil: [usize; 2],
    pub ceil: bool,
}

/// PyTorch's `pooling_output_shape`: None when the window does not fit.
pub fn pool_out_len(i: usize, k: usize, s: usize, p: usize, d: usize, ceil: bool) -> Option<usize> {
    let span = (d * (k.max(1) - 1) + 1) as i64;
    let num = i as i64 + 2 * p as i64 - span + if ceil { s as i64 - 1 } else { 0 };
    if s == 0 || num < 0 {
        return None;
    }
    let mut o = num / s as i64 + 1;
    if ceil && (o - 1) * s as i64 >= i as i64 + p as i64 {
        o -= 1;
    }
    (o > 0).then_some(o as usize)
}

/// The input seen as `[planes, H, W]`, dense float64.
fn load_planes(v: &View) -> Result<(Vec<f64>, usize, usize, usize), String> {
    let nd = v.ndim();
    let (h, w) = (v.shape[nd - 2], v.shape[nd - 1]);
    let planes = v.numel() / (h * w).max(1);
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        let dst = View::of_slice(&mut buf, DType::F64, &v.shape);
        iter::copy(v, &dst)?;
    }
    Ok((buf, planes, h, w))
}

fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, DType::F64, &out.shape);
    iter::copy(&src, out)
}

fn hw(v: &View) -> (usize, usize) {
    (v.shape[v.ndim() - 2], v.shape[v.ndim() - 1])
}

/// Run `f(plane, out_chunk)` for every plane, split across threads; `per` output values per
/// plane.
fn per_plane(
    planes: usize,
    per: usize,
    work: usize,
    f: &(dyn Fn(usize, &mut [f64]) + Sync),
) -> Vec<f64> {
    let mut out = vec![0f64; planes * per];
    let op = out.as_mut_ptr() as usize;
    parallel_ranges(planes, threads_for(work).min(planes.max(1)), &|r| {
        for p in r {
            // SAFETY: each plane owns its disjoint `per`-long block of `out`.
            let chunk =
                unsafe { std::slice::from_raw_parts_mut((op as *mut f64).add(p * per), per) };
            f(p, chunk);
        }
    });
    out
}

/// The winning flat input index (`h * W + w`) of every output of one plane, -1 when the
/// window holds only padding.
#[allow(clippy::too_many_arguments)]
fn argmax_plane(
    x: &[f64],
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    p: &Pool2d,
    out: &mut [f64],
    idx: &mut [i64],
) {
    for y in 0..oh {
        for xo in 0..ow {
            let mut best = f64::NEG_INFINITY;
            let mut bi = -1i64;
            for a in 0..p.kernel[0] {
                let iy = (y * p.stride[0] + a * p.dil[0]) as isize - p.pad[0] as isize;
                if iy < 0 || iy as usize >= h {
                    continue;
                }
                for b in 0..p.kernel[1] {
                    let ix = (xo * p.stride[1] + b * p.dil[1]) as isize - p.pad[1] as isize;
                    if ix < 0 || ix as usize >= w {
                        continue;
                    }
                    let v = x[iy as usize * w + ix as usize];
                    if bi < 0 || v > best || v.is_nan() && !best.is_nan() {
                        best = v;
                        bi = (iy as usize * w + ix as usize) as i64;
                    }
                }
            }
            out[y * ow + xo] = best;
            idx[y * ow + xo] = bi;
        }
    }
}

/// Max pooling: values into `out`, and either flat indices into `indices` (int32/int64) or
/// ([`max_pool2d`]`(.., mask = true)`) the mask described in the module documentation.
pub fn max_pool2d(
    x: &View,
    p: &Pool2d,
    out: &View,
    indices: &View,
    mask: bool,
) -> Result<(), String> {
    let (xb, planes, h, w) = load_planes(x)?;
    let (oh, ow) = hw(out);
    let per = oh * ow;
    let idx = std::sync::Mutex::new(vec![0i64; planes * per]);
    let vals = per_plane(
        planes,
        per,
        planes * per * p.kernel[0] * p.kernel[1],
        &|pl, o| {
            let mut ix = vec![0i64; per];
            argmax_plane(&xb[pl * h * w..][..h * w], h, w, oh, ow, p, o, &mut ix);
            idx.lock().unwrap_or_else(|e| e.into_inner())[pl * per..][..per].copy_from_slice(&ix);
        },
    );
    let idx = idx.into_inner().unwrap_or_else(|e| e.into_inner());
    store(vals, out)?;
    if mask {
        let kk = p.kernel[0] * p.kernel[1];
        let row = indices.shape[indices.ndim() - 1];
        let mut m = vec![0f64; indices.numel()];
        for pl in 0..planes {
            for q in 0..per {
                let i = idx[pl * per + q];
                if i < 0 {
                    continue;
                }
                // the kernel offset of flat input index i for output q
                let (iy, ix) = (i as usize / w, i as usize % w);
                let (y, xo) = (q / ow, q % ow);
                let a = (iy + p.pad[0] - y * p.stride[0]) / p.dil[0];
                let b = (ix + p.pad[1] - xo * p.stride[1]) / p.dil[1];
                m[(pl * kk + a * p.kernel[1] + b) * row + q] = 1.0;
            }
        }
        store(m, indices)
    } else {
        store(idx.into_iter().map(|v| v as f64).collect(), indices)
    }
}

/// Backward of max pooling: `grad_input[argmax] += grad_output`. The argmax comes from
/// flat `indices`, or (`mask`) from the mask of [`max_pool2d`].
pub fn max_pool2d_backward(
    gy: &View,
    indices: &View,
    p: &Pool2d,
    gx: &View,
    mask: bool,
) -> Result<(), String> {
    let (g, planes, oh, ow) = load_planes(gy)?;
    let (h, w) = hw(gx);
    let per = oh * ow;
    let ib = {
        let mut b = vec![0f64; indices.numel()];
        if !b.is_empty() {
            iter::copy(indices, &View::of_slice(&mut b, DType::F64, &indices.shape))?;
        }
        b
    };
    let kk = p.kernel[0] * p.kernel[1];
    let row = if mask {
        indices.shape[indices.ndim() - 1]
    } else {
        0
    };
    let r = per_plane(planes, h * w, planes * per, &|pl, o| {
        for q in 0..per {
            let gv = g[pl * per + q];
            if mask {
                let (y, xo) = (q / ow, q % ow);
                for k in 0..kk {
                    if ib[(pl * kk + k) * row + q] != 0.0 {
                        let (a, b) = (k / p.kernel[1], k % p.kernel[1]);
                        let iy = (y * p.stride[0] + a * p.dil[0]) as isize - p.pad[0] as isize;
                        let ix = (xo * p.stride[1] + b * p.dil[1]) as isize - p.pad[1] as isize;
                        if iy >= 0 && (iy as usize) < h && ix >= 0 && (ix as usize) < w {
                            o[iy as usize * w + ix as usize] += gv;
                        }
                        break;
                    }
                }
            } else {
                let i = ib[pl * per + q];
                if i >= 0.0 && (i as usize) < h * w {
                    o[i as usize] += gv;
                }
            }
        }
    });
    store(r, gx)
}

/// Average pooling window of output `o` along one dimension: the clipped `[start, end)` and
/// the window length counting padding.
fn avg_window(o: usize, k: usize, s: usize, p: usize, i: usize) -> (usize, usize, usize) {
    let start = o as isize * s as isize - p as isize;
    let end = (start + k as isize).min((i + p) as isize);
    let with_pad = (end - start) as usize;
    let (a, b) = (start.max(0) as usize, end.min(i as isize).max(0) as usize);
    (a, b.max(a), with_pad)
}

fn avg_divisor(
    (hs, he, hp): (usize, usize, usize),
    (ws, we, wp): (usize, usize, usize),
    count_include_pad: bool,
    divisor: i64,
) -> f64 {
    if divisor != 0 {
        divisor as f64
    } else if count_include_pad {
        (hp * wp) as f64
    } else {
        ((he - hs) * (we - ws)) as f64
    }
}

/// Average pooling (`aclnnAvgPool2d`); `divisor` 0 means none.
pub fn avg_pool2d(
    x: &View,
    p: &Pool2d,
    count_include_pad: bool,
    divisor: i64,
    out: &View,
) -> Result<(), String> {
    let (xb, planes, h, w) = load_planes(x)?;
    let (oh, ow) = hw(out);
    let r = per_plane(
        planes,
        oh * ow,
        planes * oh * ow * p.kernel[0] * p.kernel[1],
        &|pl, o| {
            let xp = &xb[pl * h * w..][..h * w];
            for y in 0..oh {
                let hwin = avg_window(y, p.kernel[0], p.stride[0], p.pad[0], h);
                for xo in 0..ow {
                    let wwin = avg_window(xo, p.kernel[1], p.stride[1], p.pad[1], w);
                    let mut s = 0.0;
                    for iy in hwin.0..hwin.1 {
                        for ix in wwin.0..wwin.1 {
                            s += xp[iy * w + ix];
                        }
                    }
                    o[y * ow + xo] = s / avg_divisor(hwin, wwin, count_include_pad, divisor);
                }
            }
        },
    );
    store(r, out)
}

/// Backward of [`avg_pool2d`].
pub fn avg_pool2d_backward(
    gy: &View,
    p: &Pool2d,
    count_include_pad: bool,
    divisor: i64,
    gx: &View,
) -> Result<(), String> {
    let (g, planes, oh, ow) = load_planes(gy)?;
    let (h, w) = hw(gx);
    let r = per_plane(
        planes,
        h * w,
        planes * oh * ow * p.kernel[0] * p.kernel[1],
        &|pl, o| {
            for y in 0..oh {
                let hwin = avg_window(y, p.kernel[0], p.stride[0], p.pad[0], h);
                for xo in 0..ow {
                    let wwin = avg_window(xo, p.kernel[1], p.stride[1], p.pad[1], w);
                    let v = g[pl * oh * ow + y * ow + xo]
                        / avg_divisor(hwin, wwin, count_include_pad, divisor);
                    for iy in hwin.0..hwin.1 {
                        for ix in wwin.0..wwin.1 {
                            o[iy * w + ix] += v;
                        }
                    }
                }
            }
        },
    );
    store(r, gx)
}

/// Adaptive window `[floor(o*i/n), ceil((o+1)*i/n))`.
fn adaptive(o: usize, n: usize, i: usize) -> (usize, usize) {
    (o * i / n, ((o + 1) * i).div_ceil(n))
}

/// Adaptive average pooling to `out`'s trailing two dimensions.
pub fn adaptive_avg_pool2d(x: &View, out: &View) -> Result<(), String> {
    let (xb, planes, h, w) = load_planes(x)?;
    let (oh, ow) = hw(out);
    let r = per_plane(planes, oh * ow, planes * h * w, &|pl, o| {
        let xp = &xb[pl * h * w..][..h * w];
        for y in 0..oh {
            let (h0, h1) = adaptive(y, oh, h);
            for xo in 0..ow {
                let (w0, w1) = adaptive(xo, ow, w);
                let mut s = 0.0;
                for iy in h0..h1 {
                    for ix in w0..w1 {
                        s += xp[iy * w + ix];
                    }
                }
                o[y * ow + xo] = s / ((h1 - h0) * (w1 - w0)) as f64;
            }
        }
    });
    store(r, out)
}

/// Backward of [`adaptive_avg_pool2d`].
pub fn adaptive_avg_pool2d_backward(gy: &View, gx: &View) -> Result<(), String> {
    let (g, planes, oh, ow) = load_planes(gy)?;
    let (h, w) = hw(gx);
    let r = per_plane(planes, h * w, planes * h * w, &|pl, o| {
        for y in 0..oh {
            let (h0, h1) = adaptive(y, oh, h);
            for xo in 0..ow {
                let (w0, w1) = adaptive(xo, ow, w);
                let v = g[pl * oh * ow + y * ow + xo] / ((h1 - h0) * (w1 - w0)) as f64;
                for iy in h0..h1 {
                    for ix in w0..w1 {
                        o[iy * w + ix] += v;
                    }
                }
            }
        }
    });
    store(r, gx)
}

/// Adaptive max pooling: values and flat (`h * W + w`) indices.
pub fn adaptive_max_pool2d(x: &View, out: &View, indices: &View) -> Result<(), String> {
    let (xb, planes, h, w) = load_planes(x)?;
    let (oh, ow) = hw(out);
    let per = oh * ow;
    let idx = std::sync::Mutex::new(vec![0f64; planes * per]);
    let vals = per_plane(planes, per, planes * h * w, &|pl, o| {
        let xp = &xb[pl * h * w..][..h * w];
        let mut ix = vec![0f64; per];
        for y in 0..oh {
            let (h0, h1) = adaptive(y, oh, h);
            for xo in 0..ow {
                let (w0, w1) = adaptive(xo, ow, w);
                let (mut best, mut bi) = (f64::NEG_INFINITY, -1i64);
                for iy in h0..h1 {
                    for xx in w0..w1 {
                        let v = xp[iy * w + xx];
                        if bi < 0 || v > best || v.is_nan() && !best.is_nan() {
                            best = v;
                            bi = (iy * w + xx) as i64;
                        }
                    }
                }
                o[y * ow + xo] = best;
                ix[y * ow + xo] = bi as f64;
            }
        }
        idx.lock().unwrap_or_else(|e| e.into_inner())[pl * per..][..per].copy_from_slice(&ix);
    });
    store(vals, out)?;
    store(idx.into_inner().unwrap_or_else(|e| e.into_inner()), indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lengths_follow_pytorch() {
        assert_eq!(pool_out_len(8, 2, 2, 0, 1, false), Some(4));
        assert_eq!(pool_out_len(8, 3, 2, 1, 1, false), Some(4));
        assert_eq!(pool_out_len(7, 2, 2, 0, 1, true), Some(4));
        assert_eq!(pool_out_len(6, 3, 2, 1, 1, true), Some(4));
        assert_eq!(pool_out_len(5, 2, 2, 1, 1, true), Some(3));
        assert_eq!(pool_out_len(1, 3, 1, 0, 1, false), None);
        assert_eq!(adaptive(1, 3, 8), (2, 6));
    }

    #[test]
    fn max_pool_mask_round_trips() {
        let mut x: Vec<f32> = (0..2 * 5 * 5).map(|i| ((i * 7) % 11) as f32).collect();
        let xv = View::of_slice(&mut x, DType::F32, &[2, 5, 5]);
        let p = Pool2d {
            kernel: [3, 3],
            stride: [2, 2],
            pad: [1, 1],
            dil: [1, 1],
            ceil: false,
        };
        let mut o = vec![0f32; 2 * 9];
        let ov = View::of_slice(&mut o, DType::F32, &[2, 3, 3]);
        let mut m = vec![0i8; 2 * 9 * 64];
        let mv = View::of_slice(&mut m, DType::I8, &[2, 9, 64]);
        max_pool2d(&xv, &p, &ov, &mv, true).unwrap();
        let mut i = vec![0i64; 18];
        let iv = View::of_slice(&mut i, DType::I64, &[2, 3, 3]);
        max_pool2d(&xv, &p, &ov, &iv, false).unwrap();
        let mut g = vec![1f32; 18];
        let gv = View::of_slice(&mut g, DType::F32, &[2, 3, 3]);
        let mut a = vec![0f32; 50];
        let mut b = vec![0f32; 50];
        let av = View::of_slice(&mut a, DType::F32, &[2, 5, 5]);
        let bv = View::of_slice(&mut b, DType::F32, &[2, 5, 5]);
        max_pool2d_backward(&gv, &mv, &p, &av, true).unwrap();
        max_pool2d_backward(&gv, &iv, &p, &bv, false).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.iter().sum::<f32>(), 18.0);
    }
}
