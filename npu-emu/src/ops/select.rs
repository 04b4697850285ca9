//! Index-driven updates: `index_add` (`aclnnIndexAdd`), `put` (`aclnnInplacePut`), `index_fill`
//! (`aclnnIndexFillTensor`), flat `take` (`aclnnTake`) and `roll` (`aclnnRoll`). Indices may be negative (counted
//! from the end, as PyTorch allows); one outside `[-n, n)` fails the task with a message
//! naming it.

use super::dtype::{Class, DType};
use super::iter;
use super::shape::narrow;
use super::view::View;

fn norm_index(t: i64, n: usize, what: &str, pos: usize) -> Result<usize, String> {
    let n = n as i64;
    if t < -n || t >= n {
        return Err(format!(
            "index {t} at position {pos} is out of range for {what} of size {n}"
        ));
    }
    Ok(if t < 0 { (t + n) as usize } else { t as usize })
}

fn read_i64_at(v: &View, i: usize) -> i64 {
    let mut off = 0isize;
    let mut rem = i;
    for d in (0..v.ndim()).rev() {
        off += (rem % v.shape[d]) as isize * v.strides[d];
        rem /= v.shape[d];
    }
    // SAFETY: element i of a checked view.
    unsafe { super::elem::read_i64(v.dtype, v.ptr.wrapping_offset(off * v.esize() as isize)) }
}

/// Whether two views are the same memory with the same layout (an in-place call).
fn same_view(a: &View, b: &View) -> bool {
    a.ptr == b.ptr && a.dtype == b.dtype && a.shape == b.shape && a.strides == b.strides
}

/// `out = self; out.narrow(dim, index[k], 1) += alpha * source.narrow(dim, k, 1)` for each k,
/// in order (repeated indices accumulate). `alpha` as (float, integer) forms.
pub fn index_add(
    x: &View,
    dim: usize,
    index: &View,
    source: &View,
    alpha: (f64, i64),
    out: &View,
) -> Result<(), String> {
    if !same_view(x, out) {
        iter::copy(x, out)?;
    }
    let n = if out.ndim() == 0 { 1 } else { out.shape[dim] };
    for k in 0..index.numel() {
        let t = norm_index(read_i64_at(index, k), n, "the indexed dimension", k)?;
        let (dst, src) = if out.ndim() == 0 {
            (out.clone(), source.clone())
        } else {
            (narrow(out, dim, t, 1), narrow(source, dim, k, 1))
        };
        match out.dtype.class() {
            Class::Int => {
                let a = alpha.1;
                iter::map2::<i64, i64>(&dst, &src, &dst, move |o, s| {
                    o.wrapping_add(s.wrapping_mul(a))
                })?
            }
            Class::F64 => {
                let a = alpha.0;
                iter::map2::<f64, f64>(&dst, &src, &dst, move |o, s| o + a * s)?
            }
            Class::F32 => {
                let a = alpha.0 as f32;
                iter::map2::<f32, f32>(&dst, &src, &dst, move |o, s| o + a * s)?
            }
        }
    }
    Ok(())
}

/// `out = self` with the slices `index[k]` of dimension `dim` set to `value`.
pub fn index_fill(
    x: &View,
    dim: usize,
    index: &[i64],
    value: (f64, i64),
    out: &View,
) -> Result<(), String> {
    if !same_view(x, out) {
        iter::copy(x, out)?;
    }
    let n = if out.ndim() == 0 { 1 } else { out.shape[dim] };
    for (k, &t) in index.iter().enumerate() {
        let t = norm_index(t, n, "the filled dimension", k)?;
        let dst = if out.ndim() == 0 {
            out.clone()
        } else {
            narrow(out, dim, t, 1)
        };
        match out.dtype.class() {
            Class::Int => iter::fill::<i64>(&dst, value.1)?,
            Class::F64 => iter::fill::<f64>(&dst, value.0)?,
            Class::F32 => iter::fill::<f32>(&dst, value.0 as f32)?,
        }
    }
    Ok(())
}

/// [`index_fill`] with the indices in a device tensor (`aclnnIndexFill`): negative indices
/// count from the end; indices outside `[-n, n)` are skipped, as the reference says.
pub fn index_fill_indices(
    x: &View,
    dim: usize,
    index: &View,
    value: (f64, i64),
    out: &View,
) -> Result<(), String> {
    let n = if out.ndim() == 0 { 1 } else { out.shape[dim] } as i64;
    let idx: Vec<i64> = super::extra::load(index, DType::I64)?;
    let kept: Vec<i64> = idx.into_iter().filter(|&t| t >= -n && t < n).collect();
    index_fill(x, dim, &kept, value, out)
}

/// `torch.take`: `out[i] = self.flatten()[index[i]]` (`out` has `index`'s shape).
pub fn take(x: &View, index: &View, out: &View) -> Result<(), String> {
    let n = x.numel();
    let es = x.esize() as isize;
    let oes = out.esize() as isize;
    let offset = |v: &View, mut i: usize| -> isize {
        let mut off = 0isize;
        for d in (0..v.ndim()).rev() {
            off += (i % v.shape[d]) as isize * v.strides[d];
            i /= v.shape[d];
        }
        off
    };
    for i in 0..index.numel() {
        let t = norm_index(read_i64_at(index, i), n, "self's elements", i)?;
        let src = View {
            ptr: x.ptr.wrapping_offset(offset(x, t) * es),
            dtype: x.dtype,
            shape: vec![],
            strides: vec![],
        };
        let dst = View {
            ptr: out.ptr.wrapping_offset(offset(out, i) * oes),
            dtype: out.dtype,
            shape: vec![],
            strides: vec![],
        };
        iter::copy(&src, &dst)?;
    }
    Ok(())
}

/// `torch.Tensor.put_`: `out.flatten()[index[i]] = source[i]` (or `+=` with `accumulate`),
/// in order; `source` has as many elements as `index`.
pub fn put(out: &View, index: &View, source: &View, accumulate: bool) -> Result<(), String> {
    let n = out.numel();
    let (es, ses) = (out.esize() as isize, source.esize() as isize);
    let offset = |v: &View, mut i: usize| -> isize {
        let mut off = 0isize;
        for d in (0..v.ndim()).rev() {
            off += (i % v.shape[d]) as isize * v.strides[d];
            i /= v.shape[d];
        }
        off
    };
    let float = out.dtype.is_float();
    for i in 0..index.numel() {
        let t = norm_index(read_i64_at(index, i), n, "self's elements", i)?;
        let dst = out.ptr.wrapping_offset(offset(out, t) * es);
        let src = source.ptr.wrapping_offset(offset(source, i) * ses);
        // SAFETY: dst and src are elements of the checked views (indices checked above).
        unsafe {
            if float {
                let v = super::elem::read_f64(source.dtype, src);
                let old = if accumulate {
                    super::elem::read_f64(out.dtype, dst)
                } else {
                    0.0
                };
                super::elem::write(out.dtype, dst, old + v);
            } else {
                let v = super::elem::read_i64(source.dtype, src);
                let old = if accumulate {
                    super::elem::read_i64(out.dtype, dst)
                } else {
                    0
                };
                super::elem::write(out.dtype, dst, old.wrapping_add(v));
            }
        }
    }
    Ok(())
}

/// `torch.roll`: `out` is `x` shifted by `shifts[k]` along `dims[k]` (elements leaving one
/// end come back at the other); with no dims, the flattened tensor is rolled and the shape
/// kept. `dims` are non-negative and as many as `shifts` (the caller checks).
pub fn roll(x: &View, shifts: &[i64], dims: &[usize], out: &View) -> Result<(), String> {
    use super::view::Scratch;
    // work on dense copies so that x may be out itself
    let mut cur = Scratch::new(x.dtype, &x.shape);
    iter::copy(x, &cur.view)?;
    if dims.is_empty() {
        let n = x.numel();
        let flat = |s: &Scratch| View {
            shape: vec![n],
            strides: vec![1],
            ..s.view.clone()
        };
        let next = Scratch::new(x.dtype, &x.shape);
        roll_dim(
            &flat(&cur),
            shifts.first().copied().unwrap_or(0),
            0,
            &flat(&next),
        )?;
        return iter::copy(&next.view, out);
    }
    for (&s, &d) in shifts.iter().zip(dims) {
        let next = Scratch::new(x.dtype, &x.shape);
        roll_dim(&cur.view, s, d, &next.view)?;
        cur = next;
    }
    iter::copy(&cur.view, out)
}

/// One dimension of [`roll`]: two slice copies.
fn roll_dim(x: &View, shift: i64, dim: usize, out: &View) -> Result<(), String> {
    let n = x.shape[dim];
    if n == 0 {
        return Ok(());
    }
    let s = shift.rem_euclid(n as i64) as usize;
    if s == 0 {
        return iter::copy(x, out);
    }
    // out[s..] = x[..n-s]; out[..s] = x[n-s..]
    iter::copy(&narrow(x, dim, 0, n - s), &narrow(out, dim, s, n - s))?;
    iter::copy(&narrow(x, dim, n - s, s), &narrow(out, dim, 0, s))
}
