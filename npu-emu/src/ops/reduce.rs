//! Reductions over dimensions: sum, mean, prod, max/min (values, and with indices), norms,
//! any/all, and the arg forms.
//!
//! Floating inputs accumulate in f64 (sequentially along the reduced elements) and are
//! rounded once into the output; integer and bool inputs accumulate in i64 (wrapping). So a
//! float32 sum is at least as accurate as a float32 pairwise sum: tests compare with a
//! relative tolerance of 1e-5 (f32) and 1e-2 (f16/bf16 outputs: one rounding, 2^-8).
//! Outputs are split across threads when the input is large.

use super::dtype::DType;
use super::elem::{self, Compute};
use super::iter::{parallel_ranges, threads_for, CHUNK};
use super::view::View;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reduce {
    Sum,
    Mean,
    Prod,
    Max,
    Min,
    /// vector p-norm: (sum |x|^p)^(1/p); inf, -inf and 0 as in `torch.linalg.vector_norm`
    Norm(f64),
    Any,
    All,
    /// log(sum(exp(x)))
    LogSumExp,
    /// variance with `correction` (sum of squared deviations / max(0, n - correction)),
    /// two passes in f64
    Var(f64),
    /// the square root of `Var`
    Std(f64),
}

/// The output view reduced to the kept dimensions (keepdim outputs drop their size-1
/// reduced dimensions; others are already that shape).
fn kept_out(x: &View, dims: &[usize], out: &View) -> Result<View, String> {
    let kept: Vec<usize> = (0..x.ndim()).filter(|d| !dims.contains(d)).collect();
    let shape: Vec<usize> = kept.iter().map(|&d| x.shape[d]).collect();
    if out.ndim() == x.ndim() {
        let strides = kept.iter().map(|&d| out.strides[d]).collect();
        let ks: Vec<usize> = kept.iter().map(|&d| out.shape[d]).collect();
        if ks != shape || dims.iter().any(|&d| out.shape[d] != 1) {
            return Err(format!(
                "output shape {:?} does not match the reduced shape",
                out.shape
            ));
        }
        Ok(View {
            ptr: out.ptr,
            dtype: out.dtype,
            shape,
            strides,
        })
    } else if out.shape == shape || (shape.is_empty() && out.numel() == 1) {
        let strides = if out.shape == shape {
            out.strides.clone()
        } else {
            vec![]
        };
        Ok(View {
            ptr: out.ptr,
            dtype: out.dtype,
            shape,
            strides,
        })
    } else {
        Err(format!(
            "output shape {:?} does not match the reduced shape {:?}",
            out.shape, shape
        ))
    }
}

/// Pointers and strides of a reduction: for output element `o` (kept index), walk the
/// reduced index space.
struct Walk {
    kept_shape: Vec<usize>,
    kept_strides: Vec<isize>, // bytes in x
    red_shape: Vec<usize>,
    red_strides: Vec<isize>, // bytes in x
    count: usize,
}

impl Walk {
    fn new(x: &View, dims: &[usize]) -> Walk {
        let es = x.esize() as isize;
        let mut w = Walk {
            kept_shape: vec![],
            kept_strides: vec![],
            red_shape: vec![],
            red_strides: vec![],
            count: 1,
        };
        for d in 0..x.ndim() {
            if dims.contains(&d) {
                w.red_shape.push(x.shape[d]);
                w.red_strides.push(x.strides[d] * es);
                w.count *= x.shape[d];
            } else {
                w.kept_shape.push(x.shape[d]);
                w.kept_strides.push(x.strides[d] * es);
            }
        }
        w
    }

    fn base(&self, x: &View, mut o: usize) -> *const u8 {
        let mut off = 0isize;
        for d in (0..self.kept_shape.len()).rev() {
            off += (o % self.kept_shape[d]) as isize * self.kept_strides[d];
            o /= self.kept_shape[d];
        }
        x.ptr.wrapping_offset(off)
    }

    /// Call `f(chunk)` for the reduced elements from `base`, in row-major order of the
    /// reduced dimensions, as chunks converted to `C`.
    fn each<C: Compute>(&self, dt: DType, base: *const u8, buf: &mut [C], f: &mut dyn FnMut(&[C])) {
        if self.count == 0 {
            return;
        }
        let nr = self.red_shape.len();
        if nr == 0 {
            // SAFETY: base is an element of the checked view.
            unsafe { elem::load(dt, base, 0, 1, buf) };
            f(&buf[..1]);
            return;
        }
        let inner = self.red_shape[nr - 1];
        let istride = self.red_strides[nr - 1];
        let outer: usize = self.red_shape[..nr - 1].iter().product();
        let mut idx = vec![0usize; nr - 1];
        for _ in 0..outer {
            let off: isize = idx
                .iter()
                .zip(&self.red_strides)
                .map(|(&i, &s)| i as isize * s)
                .sum();
            let mut start = 0;
            while start < inner {
                let n = CHUNK.min(inner - start);
                let p = base.wrapping_offset(off + start as isize * istride);
                // SAFETY: inside the checked view.
                unsafe { elem::load(dt, p, istride, n, buf) };
                f(&buf[..n]);
                start += n;
            }
            for d in (0..nr - 1).rev() {
                idx[d] += 1;
                if idx[d] < self.red_shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
}

fn out_ptr(out: &View, mut o: usize) -> *mut u8 {
    let mut off = 0isize;
    for d in (0..out.ndim()).rev() {
        off += (o % out.shape[d]) as isize * out.strides[d];
        o /= out.shape[d];
    }
    out.ptr.wrapping_offset(off * out.esize() as isize)
}

fn reduce_float(op: Reduce, x: &View, w: &Walk, base: *const u8, buf: &mut [f64]) -> f64 {
    let n = w.count as f64;
    match op {
        Reduce::Var(c) | Reduce::Std(c) => {
            let mut sum = 0f64;
            w.each(x.dtype, base, buf, &mut |ch| sum += ch.iter().sum::<f64>());
            let mean = sum / n;
            let mut acc = 0f64;
            w.each(x.dtype, base, buf, &mut |ch| {
                acc += ch.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>()
            });
            let var = acc / (n - c).max(0.0);
            if matches!(op, Reduce::Std(_)) {
                var.sqrt()
            } else {
                var
            }
        }
        Reduce::Sum | Reduce::Mean => {
            let mut acc = 0f64;
            w.each(x.dtype, base, buf, &mut |c| acc += c.iter().sum::<f64>());
            if op == Reduce::Mean {
                acc / n
            } else {
                acc
            }
        }
        Reduce::Prod => {
            let mut acc = 1f64;
            w.each(x.dtype, base, buf, &mut |c| {
                acc *= c.iter().product::<f64>()
            });
            acc
        }
        Reduce::Max | Reduce::Min => {
            let max = op == Reduce::Max;
            let mut acc = if max {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            w.each(x.dtype, base, buf, &mut |c| {
                for &v in c {
                    if v.is_nan() || acc.is_nan() {
                        acc = f64::NAN;
                    } else if (max && v > acc) || (!max && v < acc) {
                        acc = v;
                    }
                }
            });
            acc
        }
        Reduce::Norm(p) => {
            if p.is_infinite() {
                let mut acc = if p > 0.0 { 0f64 } else { f64::INFINITY };
                w.each(x.dtype, base, buf, &mut |c| {
                    for &v in c {
                        let a = v.abs();
                        acc = if p > 0.0 { acc.max(a) } else { acc.min(a) };
                        if v.is_nan() {
                            acc = f64::NAN;
                        }
                    }
                });
                acc
            } else if p == 0.0 {
                let mut acc = 0f64;
                w.each(x.dtype, base, buf, &mut |c| {
                    acc += c.iter().filter(|&&v| v != 0.0).count() as f64
                });
                acc
            } else if p == 2.0 {
                let mut acc = 0f64;
                w.each(x.dtype, base, buf, &mut |c| {
                    acc += c.iter().map(|v| v * v).sum::<f64>()
                });
                acc.sqrt()
            } else if p == 1.0 {
                let mut acc = 0f64;
                w.each(x.dtype, base, buf, &mut |c| {
                    acc += c.iter().map(|v| v.abs()).sum::<f64>()
                });
                acc
            } else {
                let mut acc = 0f64;
                w.each(x.dtype, base, buf, &mut |c| {
                    acc += c.iter().map(|v| v.abs().powf(p)).sum::<f64>()
                });
                acc.powf(1.0 / p)
            }
        }
        Reduce::Any => {
            let mut acc = false;
            w.each(x.dtype, base, buf, &mut |c| {
                acc |= c.iter().any(|&v| v != 0.0)
            });
            acc as u8 as f64
        }
        Reduce::All => {
            let mut acc = true;
            w.each(x.dtype, base, buf, &mut |c| {
                acc &= c.iter().all(|&v| v != 0.0)
            });
            acc as u8 as f64
        }
        Reduce::LogSumExp => {
            let mut m = f64::NEG_INFINITY;
            w.each(x.dtype, base, buf, &mut |c| {
                for &v in c {
                    m = m.max(v)
                }
            });
            if !m.is_finite() {
                return m;
            }
            let mut acc = 0f64;
            w.each(x.dtype, base, buf, &mut |c| {
                acc += c.iter().map(|v| (v - m).exp()).sum::<f64>()
            });
            m + acc.ln()
        }
    }
}

fn reduce_int(op: Reduce, x: &View, w: &Walk, base: *const u8, buf: &mut [i64]) -> Option<i64> {
    Some(match op {
        Reduce::Sum => {
            let mut acc = 0i64;
            w.each(x.dtype, base, buf, &mut |c| {
                acc = c.iter().fold(acc, |a, &v| a.wrapping_add(v))
            });
            acc
        }
        Reduce::Prod => {
            let mut acc = 1i64;
            w.each(x.dtype, base, buf, &mut |c| {
                acc = c.iter().fold(acc, |a, &v| a.wrapping_mul(v))
            });
            acc
        }
        Reduce::Max => {
            let mut acc = i64::MIN;
            w.each(x.dtype, base, buf, &mut |c| {
                acc = c.iter().fold(acc, |a, &v| a.max(v))
            });
            acc
        }
        Reduce::Min => {
            let mut acc = i64::MAX;
            w.each(x.dtype, base, buf, &mut |c| {
                acc = c.iter().fold(acc, |a, &v| a.min(v))
            });
            acc
        }
        Reduce::Any => {
            let mut acc = false;
            w.each(x.dtype, base, buf, &mut |c| {
                acc |= c.iter().any(|&v| v != 0)
            });
            acc as i64
        }
        Reduce::All => {
            let mut acc = true;
            w.each(x.dtype, base, buf, &mut |c| {
                acc &= c.iter().all(|&v| v != 0)
            });
            acc as i64
        }
        _ => return None,
    })
}

/// `out = op(x)` over `dims` (sorted, unique, in range). `out` has the kept shape, or the
/// input rank with size-1 reduced dimensions (keepdim). Integer inputs accumulate in i64
/// for sum/prod/max/min/any/all when `int_acc` (the output is an integer or bool).
pub fn reduce(
    op: Reduce,
    x: &View,
    dims: &[usize],
    out: &View,
    int_acc: bool,
) -> Result<(), String> {
    // a 0-d x reduced over its dimension 0 (or -1) is itself
    let dims: &[usize] = if x.ndim() == 0 { &[] } else { dims };
    let outv = kept_out(x, dims, out)?;
    let w = Walk::new(x, dims);
    let nout = outv.numel();
    if nout == 0 {
        return Ok(());
    }
    if w.count == 0 && matches!(op, Reduce::Max | Reduce::Min) {
        return Err("max/min of an empty dimension has no identity".into());
    }
    let use_int = int_acc
        && !x.dtype.is_float()
        && !matches!(
            op,
            Reduce::Mean | Reduce::Norm(_) | Reduce::LogSumExp | Reduce::Var(_) | Reduce::Std(_)
        );
    let work = |r: std::ops::Range<usize>| {
        let mut fb = vec![0f64; CHUNK];
        let mut ib = vec![0i64; CHUNK];
        for o in r {
            let base = w.base(x, o);
            let p = out_ptr(&outv, o);
            if use_int {
                if let Some(v) = reduce_int(op, x, &w, base, &mut ib) {
                    // SAFETY: p is an element of the checked output.
                    unsafe { elem::write(outv.dtype, p, v) };
                    continue;
                }
            }
            let v = reduce_float(op, x, &w, base, &mut fb);
            // SAFETY: p is an element of the checked output.
            unsafe { elem::write(outv.dtype, p, v) };
        }
    };
    parallel_ranges(nout, threads_for(x.numel()).min(nout), &work);
    Ok(())
}

/// Max or min along `dim` with the index of the first extreme (NaN counts as the extreme,
/// as in PyTorch). `values`/`indices` have the kept shape or keepdim shape.
pub fn reduce_arg(
    x: &View,
    dim: usize,
    is_max: bool,
    values: Option<&View>,
    indices: Option<&View>,
) -> Result<(), String> {
    let one = [dim];
    let dims: &[usize] = if x.ndim() == 0 { &[] } else { &one };
    let vals = values.map(|v| kept_out(x, dims, v)).transpose()?;
    let idxs = indices.map(|v| kept_out(x, dims, v)).transpose()?;
    let w = Walk::new(x, dims);
    let nout: usize = w.kept_shape.iter().product();
    if nout == 0 {
        return Ok(());
    }
    if w.count == 0 {
        return Err("argmax/argmin of an empty dimension is undefined".into());
    }
    let int = !x.dtype.is_float();
    let work = |r: std::ops::Range<usize>| {
        let mut fb = vec![0f64; CHUNK];
        let mut ib = vec![0i64; CHUNK];
        for o in r {
            let base = w.base(x, o);
            let mut k = 0usize;
            let mut best_i = 0usize;
            let (bf, bi);
            if int {
                let mut best = if is_max { i64::MIN } else { i64::MAX };
                let mut first = true;
                w.each(x.dtype, base, &mut ib, &mut |c| {
                    for &v in c {
                        if first || (is_max && v > best) || (!is_max && v < best) {
                            best = v;
                            best_i = k;
                            first = false;
                        }
                        k += 1;
                    }
                });
                bi = best;
                bf = best as f64;
            } else {
                let mut best = f64::NAN;
                let mut first = true;
                w.each(x.dtype, base, &mut fb, &mut |c| {
                    for &v in c {
                        let better = if best.is_nan() && !first {
                            false
                        } else if v.is_nan() {
                            true
                        } else {
                            (is_max && v > best) || (!is_max && v < best)
                        };
                        if first || better {
                            best = v;
                            best_i = k;
                            first = false;
                        }
                        k += 1;
                    }
                });
                bf = best;
                bi = best as i64;
            }
            if let Some(v) = &vals {
                let p = out_ptr(v, o);
                // SAFETY: p is an element of the checked output.
                unsafe {
                    if int {
                        elem::write(v.dtype, p, bi)
                    } else {
                        elem::write(v.dtype, p, bf)
                    }
                };
            }
            if let Some(v) = &idxs {
                // SAFETY: as above.
                unsafe { elem::write(v.dtype, out_ptr(v, o), best_i as i64) };
            }
        }
    };
    parallel_ranges(nout, threads_for(x.numel()).min(nout), &work);
    Ok(())
}

/// Cumulative sum along `dim` (`out` has the shape of `x`), accumulating in f64 or i64;
/// `exclusive` leaves out the element itself, `reverse` sums from the end.
pub fn cumsum(
    x: &View,
    dim: usize,
    exclusive: bool,
    reverse: bool,
    out: &View,
) -> Result<(), String> {
    let n = x.shape[dim];
    let rows = x.numel() / n.max(1);
    if rows == 0 || n == 0 {
        return Ok(());
    }
    let mut outer_shape = x.shape.clone();
    outer_shape.remove(dim);
    let mut xs = x.strides.clone();
    let xd = xs.remove(dim);
    let mut os = out.strides.clone();
    let od = os.remove(dim);
    let int = !out.dtype.is_float();
    for r in 0..rows {
        let mut rem = r;
        let (mut xo, mut oo) = (0isize, 0isize);
        for d in (0..outer_shape.len()).rev() {
            let i = (rem % outer_shape[d]) as isize;
            rem /= outer_shape[d];
            xo += i * xs[d];
            oo += i * os[d];
        }
        let (mut fa, mut ia) = (0f64, 0i64);
        for step in 0..n as isize {
            let k = if reverse { n as isize - 1 - step } else { step };
            let xp = x.ptr.wrapping_offset((xo + k * xd) * x.esize() as isize);
            let op = out
                .ptr
                .wrapping_offset((oo + k * od) * out.esize() as isize);
            // SAFETY: both are elements of the checked views.
            unsafe {
                if int {
                    let v = elem::read_i64(x.dtype, xp);
                    if !exclusive {
                        ia = ia.wrapping_add(v);
                    }
                    elem::write(out.dtype, op, ia);
                    if exclusive {
                        ia = ia.wrapping_add(v);
                    }
                } else {
                    let v = elem::read_f64(x.dtype, xp);
                    if !exclusive {
                        fa += v;
                    }
                    elem::write(out.dtype, op, fa);
                    if exclusive {
                        fa += v;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_over_dims() {
        let mut a: Vec<f32> = (0..24).map(|i| i as f32).collect();
        let x = View::of_slice(&mut a, DType::F32, &[2, 3, 4]);
        let mut o = vec![0f32; 3];
        let vo = View::of_slice(&mut o, DType::F32, &[3]);
        reduce(Reduce::Sum, &x, &[0, 2], &vo, false).unwrap();
        // dim1 = j: sum over i,k of (12i + 4j + k)
        for (j, &got) in o.iter().enumerate() {
            let want: f32 = (0..2)
                .flat_map(|i| (0..4).map(move |k| (12 * i + 4 * j + k) as f32))
                .sum();
            assert_eq!(got, want);
        }
        let mut ok = vec![0f32; 2];
        let vk = View::of_slice(&mut ok, DType::F32, &[2, 1, 1]);
        reduce(Reduce::Max, &x, &[1, 2], &vk, false).unwrap();
        assert_eq!(ok, vec![11.0, 23.0]);
        let mut vi = vec![0i64; 6];
        let vv = View::of_slice(&mut vi, DType::I64, &[2, 3]);
        reduce_arg(&x, 2, false, None, Some(&vv)).unwrap();
        assert_eq!(vi, vec![0; 6]);
    }
}
