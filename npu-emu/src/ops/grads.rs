//! Gradients torch_npu's autograd asks for by name: `col2im` (the backward of
//! `F.unfold`, and `F.fold` itself) and the backward of `repeat_interleave` with a tensor of
//! repeats. Both accumulate in f64 and round once into the output's type.

use super::conv::out_len;
use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// `col2im`: `grad` is `[N, C * kH * kW, L]` (or `[C * kH * kW, L]`), `out` is `[N, C, H, W]`
/// (or `[C, H, W]`) with `(H, W) = size`; every column entry is added to the input position
/// it was read from by `F.unfold` with the same kernel, dilation, padding and stride
/// (padding positions are dropped). `k`, `d`, `p`, `s` are (H, W) pairs.
pub fn fold(
    grad: &View,
    size: [usize; 2],
    k: [usize; 2],
    d: [usize; 2],
    p: [usize; 2],
    s: [usize; 2],
    out: &View,
) -> Result<(), String> {
    let nd = out.ndim();
    let (c, h, w) = (out.shape[nd - 3], size[0], size[1]);
    let n: usize = out.shape[..nd - 3].iter().product();
    let oh = out_len(h, k[0], s[0], p[0], d[0]).ok_or("the kernel does not fit in H")?;
    let ow = out_len(w, k[1], s[1], p[1], d[1]).ok_or("the kernel does not fit in W")?;
    if out.numel() == 0 {
        return Ok(());
    }
    let g: Vec<f64> = load(grad, DType::F64)?;
    let (rows, l) = (c * k[0] * k[1], oh * ow);
    let mut y = vec![0f64; n * c * h * w];
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
                            y[((b * c + ci) * h + iy as usize) * w + ix as usize] +=
                                g[row + oy * ow + ox];
                        }
                    }
                }
            }
        }
    }
    store(y, DType::F64, out)
}

/// The backward of `repeat_interleave(x, repeats, axis)`: `out` (the shape of `x`, any
/// layout of its element count) gets, at position `i` along `axis`, the sum of the
/// `repeats[i]` consecutive slices of `grad` that position was repeated into. `repeats` has
/// one count per position, or one count for all.
pub fn repeat_interleave_grad(
    grad: &View,
    repeats: &[i64],
    axis: usize,
    out: &View,
) -> Result<(), String> {
    let outer: usize = grad.shape[..axis].iter().product();
    let len = grad.shape[axis];
    let inner: usize = grad.shape[axis + 1..].iter().product();
    let positions = if repeats.len() == 1 {
        len / (repeats[0].max(1) as usize)
    } else {
        repeats.len()
    };
    let count = |i: usize| {
        if repeats.len() == 1 {
            repeats[0] as usize
        } else {
            repeats[i] as usize
        }
    };
    let g: Vec<f64> = load(grad, DType::F64)?;
    let mut y = vec![0f64; outer * positions * inner];
    for o in 0..outer {
        let mut src = 0;
        for i in 0..positions {
            let dst = (o * positions + i) * inner;
            for _ in 0..count(i) {
                let from = (o * len + src) * inner;
                for e in 0..inner {
                    y[dst + e] += g[from + e];
                }
                src += 1;
            }
        }
    }
    store(y, DType::F64, out)
}
