//! Data movement: concatenation, constant padding, ranges, slices of views.

use super::dtype::Class;
use super::iter;
use super::view::View;

/// The sub-view `[start, start+len)` of dimension `dim`.
pub fn narrow(v: &View, dim: usize, start: usize, len: usize) -> View {
    let mut r = v.clone();
    r.ptr = v
        .ptr
        .wrapping_offset(start as isize * v.strides[dim] * v.esize() as isize);
    r.shape[dim] = len;
    r
}

/// `out = cat(inputs, dim)`; inputs that are 1-D and empty are skipped (PyTorch's legacy
/// rule). Each input is copied (with dtype conversion) into its slice of `out`.
pub fn cat(inputs: &[View], dim: usize, out: &View) -> Result<(), String> {
    let mut at = 0usize;
    for v in inputs {
        if v.ndim() == 1 && v.shape[0] == 0 && out.ndim() != 1 {
            continue;
        }
        let len = v.shape[dim];
        let dst = narrow(out, dim, at, len);
        iter::copy(v, &dst)?;
        at += len;
    }
    Ok(())
}

/// Constant padding: `pad` holds (before, after) pairs starting from the last dimension;
/// negative values crop. `out` is filled with `value`, then the input's kept part is copied.
pub fn constant_pad(x: &View, pad: &[i64], value: f64, out: &View) -> Result<(), String> {
    match out.dtype.class() {
        Class::Int => iter::fill::<i64>(out, value as i64)?,
        _ => iter::fill::<f64>(out, value)?,
    }
    let mut src = x.clone();
    let mut dst = out.clone();
    let nd = x.ndim();
    for (k, pair) in pad.chunks(2).enumerate() {
        let d = nd - 1 - k;
        let (lo, hi) = (pair[0], pair.get(1).copied().unwrap_or(0));
        let crop_lo = (-lo).max(0) as usize;
        let crop_hi = (-hi).max(0) as usize;
        let keep = x.shape[d].saturating_sub(crop_lo + crop_hi);
        src = narrow(&src, d, crop_lo.min(x.shape[d]), keep);
        dst = narrow(&dst, d, lo.max(0) as usize, keep);
    }
    if src.numel() == 0 {
        return Ok(());
    }
    iter::copy(&src, &dst)
}

/// `out[i] = start + i * step` (floats in f64, integers in i64).
pub fn arange(start: f64, step: f64, istart: i64, istep: i64, out: &View) -> Result<(), String> {
    let n = out.numel();
    let es = out.esize() as isize;
    let st = if out.ndim() == 0 { 0 } else { out.strides[0] };
    for i in 0..n {
        let p = out.ptr.wrapping_offset(i as isize * st * es);
        // SAFETY: element i of the checked 1-D output.
        unsafe {
            if out.dtype.is_float() {
                super::elem::write(out.dtype, p, start + i as f64 * step)
            } else {
                super::elem::write(
                    out.dtype,
                    p,
                    istart.wrapping_add((i as i64).wrapping_mul(istep)),
                )
            }
        }
    }
    Ok(())
}

/// Element offset (in elements) of row-major index `i` of a view.
fn offset_of(v: &View, mut i: usize) -> isize {
    let mut off = 0isize;
    for d in (0..v.ndim()).rev() {
        off += (i % v.shape[d]) as isize * v.strides[d];
        i /= v.shape[d];
    }
    off
}

fn read_index(v: &View, i: usize) -> i64 {
    let p = v.ptr.wrapping_offset(offset_of(v, i) * v.esize() as isize);
    // SAFETY: element i of the checked index view.
    unsafe { super::elem::read_i64(v.dtype, p) }
}

/// `out = x.index_select(dim, index)` (`index` 1-D or 0-d; out has `x`'s shape with
/// `out.shape[dim] = index.numel()`). An index outside `[-n, n)` is an error.
pub fn index_select(x: &View, dim: usize, index: &View, out: &View) -> Result<(), String> {
    let n = x.shape[dim] as i64;
    for k in 0..index.numel() {
        let mut t = read_index(index, k);
        if t < -n || t >= n {
            return Err(format!(
                "index {t} at position {k} is out of range for dimension {dim} of size {n}"
            ));
        }
        if t < 0 {
            t += n;
        }
        let src = narrow(x, dim, t as usize, 1);
        let dst = narrow(out, dim, k, 1);
        iter::copy(&src, &dst)?;
    }
    Ok(())
}

/// `out[i][j]… = x[…index[i][j]… along dim…]` (`torch.gather`): `out` has `index`'s shape.
pub fn gather(x: &View, dim: usize, index: &View, out: &View) -> Result<(), String> {
    let n = x.shape[dim] as i64;
    let es = x.esize() as isize;
    let oes = out.esize() as isize;
    for i in 0..index.numel() {
        let mut t = read_index(index, i);
        if t < -n || t >= n {
            return Err(format!(
                "index {t} at position {i} is out of range for dimension {dim} of size {n}"
            ));
        }
        if t < 0 {
            t += n;
        }
        // the same position in x, with the gathered coordinate along dim
        let mut rem = i;
        let mut off = 0isize;
        for d in (0..index.ndim()).rev() {
            let c = rem % index.shape[d];
            rem /= index.shape[d];
            off += if d == dim { t as isize } else { c as isize } * x.strides[d];
        }
        let src = View {
            ptr: x.ptr.wrapping_offset(off * es),
            dtype: x.dtype,
            shape: vec![],
            strides: vec![],
        };
        let dst = View {
            ptr: out.ptr.wrapping_offset(offset_of(out, i) * oes),
            dtype: out.dtype,
            shape: vec![],
            strides: vec![],
        };
        iter::copy(&src, &dst)?;
    }
    Ok(())
}
