//! 3-D pooling over `[N, C, D, H, W]` (or `[C, D, H, W]`) with PyTorch's CPU rules: max
//! pooling with flat indices (`(d * H + h) * W + w` per plane; a larger value or any NaN
//! takes the place, so ties keep the first position), average pooling (padding, `ceil_mode`,
//! `count_include_pad`, `divisor_override`), adaptive average and max pooling, and the
//! backward form of each. Values are read and written through float64 (exact for every
//! input dtype) and rounded once; planes are split across threads.
//!
//! Also circular padding of the trailing dimensions (`aclnnCircularPad2d/3d` and their
//! backward forms): output position `o` of a dimension of size `n` padded by `before` reads
//! input `(o - before) mod n`; the backward sums the gradients of every position that read an
//! element. (Reflection and replication padding are `extra::pad`.)

use super::dtype::DType;
use super::iter::{self, parallel_ranges, threads_for};
use super::view::View;

/// Window parameters of one 3-D pooling call (index 0 is D, 1 is H, 2 is W).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool3d {
    pub kernel: [usize; 3],
    pub stride: [usize; 3],
    pub pad: [usize; 3],
    pub dil: [usize; 3],
    pub ceil: bool,
}

/// The trailing three dimensions of `v`.
fn dhw(v: &View) -> [usize; 3] {
    let n = v.ndim();
    [v.shape[n - 3], v.shape[n - 2], v.shape[n - 1]]
}

/// `v` as dense float64 values, with its plane count (elements before the last three
/// dimensions).
fn load(v: &View) -> Result<(Vec<f64>, usize), String> {
    let s = dhw(v);
    let per = s[0] * s[1] * s[2];
    let planes = v.numel().checked_div(per).unwrap_or(0);
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok((buf, planes))
}

fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, DType::F64, &out.shape);
    iter::copy(&src, out)
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
    if out.is_empty() {
        return out;
    }
    let op = out.as_mut_ptr() as usize;
    parallel_ranges(planes, threads_for(work).min(planes.max(1)), &|r| {
        for p in r {
            // SAFETY: each plane owns its disjoint `per`-long block of `out`, which lives
            // until parallel_ranges returns.
            let chunk =
                unsafe { std::slice::from_raw_parts_mut((op as *mut f64).add(p * per), per) };
            f(p, chunk);
        }
    });
    out
}

/// Visit every output position `(od, oh, ow)` of an `o`-shaped grid in order.
fn for_each_out(o: [usize; 3], mut f: impl FnMut(usize, [usize; 3])) {
    let mut q = 0;
    for a in 0..o[0] {
        for b in 0..o[1] {
            for c in 0..o[2] {
                f(q, [a, b, c]);
                q += 1;
            }
        }
    }
}

/// Max pooling over one plane: `out` gets the values, the returned vector the flat indices.
fn max_plane(x: &[f64], i: [usize; 3], o: [usize; 3], p: &Pool3d, out: &mut [f64]) -> Vec<f64> {
    let mut idx = vec![0f64; out.len()];
    for_each_out(o, |q, pos| {
        let (mut best, mut bi) = (f64::NEG_INFINITY, -1i64);
        let tap = |d: usize, k: usize| {
            let v = (pos[d] * p.stride[d] + k * p.dil[d]) as isize - p.pad[d] as isize;
            (v >= 0 && (v as usize) < i[d]).then_some(v as usize)
        };
        for a in 0..p.kernel[0] {
            let Some(z) = tap(0, a) else { continue };
            for b in 0..p.kernel[1] {
                let Some(y) = tap(1, b) else { continue };
                for c in 0..p.kernel[2] {
                    let Some(xx) = tap(2, c) else { continue };
                    let flat = (z * i[1] + y) * i[2] + xx;
                    let v = x[flat];
                    if bi < 0 || v > best || v.is_nan() {
                        best = v;
                        bi = flat as i64;
                    }
                }
            }
        }
        out[q] = best;
        idx[q] = bi as f64;
    });
    idx
}

/// Max pooling: values into `out`, flat per-plane indices (int32/int64) into `indices`.
pub fn max_pool3d(x: &View, p: &Pool3d, out: &View, indices: &View) -> Result<(), String> {
    let (xb, planes) = load(x)?;
    let (i, o) = (dhw(x), dhw(out));
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    let idx = std::sync::Mutex::new(vec![0f64; planes * per]);
    let kk = p.kernel[0] * p.kernel[1] * p.kernel[2];
    let vals = per_plane(planes, per, planes * per * kk, &|pl, ob| {
        let ix = max_plane(&xb[pl * pin..][..pin], i, o, p, ob);
        idx.lock().unwrap_or_else(|e| e.into_inner())[pl * per..][..per].copy_from_slice(&ix);
    });
    store(vals, out)?;
    store(idx.into_inner().unwrap_or_else(|e| e.into_inner()), indices)
}

/// Backward of max pooling (plain and adaptive): `grad_input[plane][indices] +=
/// grad_output`. An index outside the plane is an error.
pub fn max_pool3d_backward(gy: &View, indices: &View, gx: &View) -> Result<(), String> {
    let (g, planes) = load(gy)?;
    let (ib, _) = load(indices)?;
    let i = dhw(gx);
    let o = dhw(gy);
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    if let Some(&bad) = ib.iter().find(|&&v| v < 0.0 || v >= pin as f64) {
        return Err(format!(
            "indices value {bad} is outside the input plane of {pin} elements"
        ));
    }
    let r = per_plane(planes, pin, planes * per, &|pl, ob| {
        for q in 0..per {
            ob[ib[pl * per + q] as usize] += g[pl * per + q];
        }
    });
    store(r, gx)
}

/// Average-pooling window of output `o` along one dimension: the clipped `[start, end)` and
/// the window length counting padding.
fn avg_window(o: usize, k: usize, s: usize, p: usize, i: usize) -> (usize, usize, usize) {
    let start = o as isize * s as isize - p as isize;
    let end = (start + k as isize).min((i + p) as isize);
    let with_pad = (end - start) as usize;
    let (a, b) = (start.max(0) as usize, end.min(i as isize).max(0) as usize);
    (a, b.max(a), with_pad)
}

/// The three windows of one output and its divisor.
fn avg_geo(
    pos: [usize; 3],
    i: [usize; 3],
    p: &Pool3d,
    count_include_pad: bool,
    divisor: i64,
) -> ([(usize, usize); 3], f64) {
    let w: [(usize, usize, usize); 3] =
        std::array::from_fn(|d| avg_window(pos[d], p.kernel[d], p.stride[d], p.pad[d], i[d]));
    let div = if divisor != 0 {
        divisor as f64
    } else if count_include_pad {
        (w[0].2 * w[1].2 * w[2].2) as f64
    } else {
        ((w[0].1 - w[0].0) * (w[1].1 - w[1].0) * (w[2].1 - w[2].0)) as f64
    };
    (std::array::from_fn(|d| (w[d].0, w[d].1)), div)
}

/// Average pooling (`aclnnAvgPool3d`); `divisor` 0 means none.
pub fn avg_pool3d(
    x: &View,
    p: &Pool3d,
    count_include_pad: bool,
    divisor: i64,
    out: &View,
) -> Result<(), String> {
    let (xb, planes) = load(x)?;
    let (i, o) = (dhw(x), dhw(out));
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    let kk = p.kernel[0] * p.kernel[1] * p.kernel[2];
    let r = per_plane(planes, per, planes * per * kk, &|pl, ob| {
        let xp = &xb[pl * pin..][..pin];
        for_each_out(o, |q, pos| {
            let (w, div) = avg_geo(pos, i, p, count_include_pad, divisor);
            let mut s = 0.0;
            for z in w[0].0..w[0].1 {
                for y in w[1].0..w[1].1 {
                    for xx in w[2].0..w[2].1 {
                        s += xp[(z * i[1] + y) * i[2] + xx];
                    }
                }
            }
            ob[q] = s / div;
        });
    });
    store(r, out)
}

/// Backward of [`avg_pool3d`].
pub fn avg_pool3d_backward(
    gy: &View,
    p: &Pool3d,
    count_include_pad: bool,
    divisor: i64,
    gx: &View,
) -> Result<(), String> {
    let (g, planes) = load(gy)?;
    let (i, o) = (dhw(gx), dhw(gy));
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    let kk = p.kernel[0] * p.kernel[1] * p.kernel[2];
    let r = per_plane(planes, pin, planes * per * kk, &|pl, ob| {
        for_each_out(o, |q, pos| {
            let (w, div) = avg_geo(pos, i, p, count_include_pad, divisor);
            let v = g[pl * per + q] / div;
            for z in w[0].0..w[0].1 {
                for y in w[1].0..w[1].1 {
                    for xx in w[2].0..w[2].1 {
                        ob[(z * i[1] + y) * i[2] + xx] += v;
                    }
                }
            }
        });
    });
    store(r, gx)
}

/// Adaptive window `[floor(o*i/n), ceil((o+1)*i/n))` of every dimension.
fn adaptive(pos: [usize; 3], o: [usize; 3], i: [usize; 3]) -> [(usize, usize); 3] {
    std::array::from_fn(|d| (pos[d] * i[d] / o[d], ((pos[d] + 1) * i[d]).div_ceil(o[d])))
}

fn window_len(w: &[(usize, usize); 3]) -> usize {
    w.iter().map(|(a, b)| b - a).product()
}

/// Adaptive average pooling to `out`'s trailing three dimensions.
pub fn adaptive_avg_pool3d(x: &View, out: &View) -> Result<(), String> {
    let (xb, planes) = load(x)?;
    let (i, o) = (dhw(x), dhw(out));
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    let r = per_plane(planes, per, planes * pin.max(per), &|pl, ob| {
        let xp = &xb[pl * pin..][..pin];
        for_each_out(o, |q, pos| {
            let w = adaptive(pos, o, i);
            let mut s = 0.0;
            for z in w[0].0..w[0].1 {
                for y in w[1].0..w[1].1 {
                    for xx in w[2].0..w[2].1 {
                        s += xp[(z * i[1] + y) * i[2] + xx];
                    }
                }
            }
            ob[q] = s / window_len(&w) as f64;
        });
    });
    store(r, out)
}

/// Backward of [`adaptive_avg_pool3d`].
pub fn adaptive_avg_pool3d_backward(gy: &View, gx: &View) -> Result<(), String> {
    let (g, planes) = load(gy)?;
    let (i, o) = (dhw(gx), dhw(gy));
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    let r = per_plane(planes, pin, planes * pin.max(per), &|pl, ob| {
        for_each_out(o, |q, pos| {
            let w = adaptive(pos, o, i);
            let v = g[pl * per + q] / window_len(&w) as f64;
            for z in w[0].0..w[0].1 {
                for y in w[1].0..w[1].1 {
                    for xx in w[2].0..w[2].1 {
                        ob[(z * i[1] + y) * i[2] + xx] += v;
                    }
                }
            }
        });
    });
    store(r, gx)
}

/// Adaptive max pooling: values and flat per-plane indices.
pub fn adaptive_max_pool3d(x: &View, out: &View, indices: &View) -> Result<(), String> {
    let (xb, planes) = load(x)?;
    let (i, o) = (dhw(x), dhw(out));
    let (pin, per) = (i[0] * i[1] * i[2], o[0] * o[1] * o[2]);
    let idx = std::sync::Mutex::new(vec![0f64; planes * per]);
    let vals = per_plane(planes, per, planes * pin.max(per), &|pl, ob| {
        let xp = &xb[pl * pin..][..pin];
        let mut ix = vec![0f64; per];
        for_each_out(o, |q, pos| {
            let w = adaptive(pos, o, i);
            let (mut best, mut bi) = (f64::NEG_INFINITY, -1i64);
            for z in w[0].0..w[0].1 {
                for y in w[1].0..w[1].1 {
                    for xx in w[2].0..w[2].1 {
                        let flat = (z * i[1] + y) * i[2] + xx;
                        let v = xp[flat];
                        if bi < 0 || v > best || v.is_nan() {
                            best = v;
                            bi = flat as i64;
                        }
                    }
                }
            }
            ob[q] = best;
            ix[q] = bi as f64;
        });
        idx.lock().unwrap_or_else(|e| e.into_inner())[pl * per..][..per].copy_from_slice(&ix);
    });
    store(vals, out)?;
    store(idx.into_inner().unwrap_or_else(|e| e.into_inner()), indices)
}

/// For each of the trailing `pad.len() / 2` dimensions, the circular source index of every
/// output position; `pad` holds (before, after) pairs starting from the last dimension.
fn circular_maps(in_shape: &[usize], out_shape: &[usize], pad: &[i64]) -> Vec<Vec<usize>> {
    let k = pad.len() / 2;
    let nd = in_shape.len();
    (0..k)
        .map(|j| {
            let d = nd - k + j;
            let before = pad[2 * (k - 1 - j)];
            let n = in_shape[d].max(1) as i64;
            (0..out_shape[d] as i64)
                .map(|o| (o - before).rem_euclid(n) as usize)
                .collect()
        })
        .collect()
}

/// Visit (output flat index, input flat index) of every output element of a padding whose
/// trailing dimensions map through `maps` (both tensors dense, row-major).
fn for_each_tap(
    in_shape: &[usize],
    out_shape: &[usize],
    maps: &[Vec<usize>],
    mut f: impl FnMut(usize, usize),
) {
    let nd = in_shape.len();
    let lead = nd - maps.len();
    let outer: usize = in_shape[..lead].iter().product();
    let in_inner: usize = in_shape[lead..].iter().product();
    let out_inner: usize = out_shape[lead..].iter().product();
    let mut in_strides = vec![1usize; maps.len()];
    for j in (0..maps.len().saturating_sub(1)).rev() {
        in_strides[j] = in_strides[j + 1] * in_shape[lead + j + 1];
    }
    for o in 0..out_inner {
        let (mut rem, mut src) = (o, 0usize);
        for j in (0..maps.len()).rev() {
            let n = out_shape[lead + j];
            src += maps[j][rem % n] * in_strides[j];
            rem /= n;
        }
        for b in 0..outer {
            f(b * out_inner + o, b * in_inner + src);
        }
    }
}

/// `v` as dense float64 values.
fn load_dense(v: &View) -> Result<Vec<f64>, String> {
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok(buf)
}

/// Circular padding of the trailing `pad.len() / 2` dimensions of `x` into `out`.
pub fn circular_pad(x: &View, pad: &[i64], out: &View) -> Result<(), String> {
    if out.numel() == 0 {
        return Ok(());
    }
    let xs = load_dense(x)?;
    let maps = circular_maps(&x.shape, &out.shape, pad);
    let mut y = vec![0f64; out.numel()];
    for_each_tap(&x.shape, &out.shape, &maps, |o, i| y[o] = xs[i]);
    store(y, out)
}

/// Backward of [`circular_pad`]: `dx` gets the sum of the gradients of every output position
/// that read each element.
pub fn circular_pad_backward(dy: &View, pad: &[i64], dx: &View) -> Result<(), String> {
    let g = load_dense(dy)?;
    let maps = circular_maps(&dx.shape, &dy.shape, pad);
    let mut r = vec![0f64; dx.numel()];
    for_each_tap(&dx.shape, &dy.shape, &maps, |o, i| r[i] += g[o]);
    store(r, dx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(k: usize, s: usize, p: usize) -> Pool3d {
        Pool3d {
            kernel: [k; 3],
            stride: [s; 3],
            pad: [p; 3],
            dil: [1; 3],
            ceil: false,
        }
    }

    #[test]
    fn max_pool_indices_and_backward() {
        // one plane 2x2x2 holding 0..8: the single window's maximum is the last element
        let mut x: Vec<f32> = (0..8).map(|v| v as f32).collect();
        let xv = View::of_slice(&mut x, DType::F32, &[1, 2, 2, 2]);
        let mut o = vec![0f32; 1];
        let ov = View::of_slice(&mut o, DType::F32, &[1, 1, 1, 1]);
        let mut i = vec![0i32; 1];
        let iv = View::of_slice(&mut i, DType::I32, &[1, 1, 1, 1]);
        max_pool3d(&xv, &geo(2, 2, 0), &ov, &iv).unwrap();
        assert_eq!((o[0], i[0]), (7.0, 7));
        let mut g = vec![2.5f32];
        let gv = View::of_slice(&mut g, DType::F32, &[1, 1, 1, 1]);
        let mut gx = vec![0f32; 8];
        let gxv = View::of_slice(&mut gx, DType::F32, &[1, 2, 2, 2]);
        max_pool3d_backward(&gv, &iv, &gxv).unwrap();
        assert_eq!(gx, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5]);
    }

    #[test]
    fn avg_pool_padding_divisors() {
        // 1x1x1 input of 6 with a 3-window and padding 1: including the padding the
        // divisor is 27, without it 1
        let mut x = vec![6f32];
        let xv = View::of_slice(&mut x, DType::F32, &[1, 1, 1, 1]);
        let mut o = vec![0f32];
        let ov = View::of_slice(&mut o, DType::F32, &[1, 1, 1, 1]);
        avg_pool3d(&xv, &geo(3, 1, 1), true, 0, &ov).unwrap();
        assert!((o[0] - 6.0 / 27.0).abs() < 1e-7);
        avg_pool3d(&xv, &geo(3, 1, 1), false, 0, &ov).unwrap();
        assert_eq!(o[0], 6.0);
        avg_pool3d(&xv, &geo(3, 1, 1), true, 2, &ov).unwrap();
        assert_eq!(o[0], 3.0);
    }

    #[test]
    fn adaptive_windows_overlap() {
        // D = 3 into 2 outputs: windows [0, 2) and [1, 3)
        let mut x: Vec<f64> = vec![1.0, 2.0, 4.0];
        let xv = View::of_slice(&mut x, DType::F64, &[1, 3, 1, 1]);
        let mut o = vec![0f64; 2];
        let ov = View::of_slice(&mut o, DType::F64, &[1, 2, 1, 1]);
        adaptive_avg_pool3d(&xv, &ov).unwrap();
        assert_eq!(o, [1.5, 3.0]);
        let mut g = vec![1f64, 1.0];
        let gv = View::of_slice(&mut g, DType::F64, &[1, 2, 1, 1]);
        let mut gx = vec![0f64; 3];
        let gxv = View::of_slice(&mut gx, DType::F64, &[1, 3, 1, 1]);
        adaptive_avg_pool3d_backward(&gv, &gxv).unwrap();
        assert_eq!(gx, [0.5, 1.0, 0.5]);
        let mut i = vec![0i64; 2];
        let iv = View::of_slice(&mut i, DType::I64, &[1, 2, 1, 1]);
        adaptive_max_pool3d(&xv, &ov, &iv).unwrap();
        assert_eq!((o, i), (vec![2.0, 4.0], vec![1, 2]));
    }

    #[test]
    fn circular_pad_wraps_and_sums_back() {
        // the reference's example: a 3x3 plane padded by 1 on every side
        let mut x: Vec<f32> = (0..9).map(|v| v as f32).collect();
        let xv = View::of_slice(&mut x, DType::F32, &[1, 3, 3]);
        let mut o = vec![0f32; 25];
        let ov = View::of_slice(&mut o, DType::F32, &[1, 5, 5]);
        circular_pad(&xv, &[1, 1, 1, 1], &ov).unwrap();
        assert_eq!(&o[..5], &[8.0, 6.0, 7.0, 8.0, 6.0]);
        assert_eq!(&o[5..10], &[2.0, 0.0, 1.0, 2.0, 0.0]);
        let mut g = vec![1f32; 25];
        let gv = View::of_slice(&mut g, DType::F32, &[1, 5, 5]);
        let mut gx = vec![0f32; 9];
        let gxv = View::of_slice(&mut gx, DType::F32, &[1, 3, 3]);
        circular_pad_backward(&gv, &[1, 1, 1, 1], &gxv).unwrap();
        // corners are read 4 times, edges twice, the centre once
        assert_eq!(gx, [4.0, 2.0, 4.0, 2.0, 1.0, 2.0, 4.0, 2.0, 4.0]);
    }
}
