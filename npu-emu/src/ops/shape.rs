//! Data movement: concatenation, stacking, constant padding, ranges, slices of views,
//! triangles, masked selection, scatter.

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

/// Fill `v` with zeros of its dtype.
fn zero(v: &View) -> Result<(), String> {
    if v.numel() == 0 {
        return Ok(());
    }
    match v.dtype.class() {
        Class::Int => iter::fill::<i64>(v, 0),
        Class::F64 => iter::fill::<f64>(v, 0.0),
        Class::F32 => iter::fill::<f32>(v, 0.0),
    }
}

/// Whether two views are the same memory with the same layout (an in-place call).
fn same_view(a: &View, b: &View) -> bool {
    a.ptr == b.ptr && a.dtype == b.dtype && a.shape == b.shape && a.strides == b.strides
}

/// `torch.triu` (`upper`) / `torch.tril` over the last two dimensions: element (i, j) is kept
/// when `j - i >= diagonal` (triu) or `j - i <= diagonal` (tril), else zero. `x` may be
/// `out` itself.
pub fn triangle(x: &View, diagonal: i64, upper: bool, out: &View) -> Result<(), String> {
    let nd = out.ndim();
    if nd < 2 {
        return Err(format!(
            "triu/tril need at least 2 dimensions, the tensor has {nd}"
        ));
    }
    if !same_view(x, out) {
        iter::copy(x, out)?;
    }
    let (rows, cols) = (out.shape[nd - 2] as i64, out.shape[nd - 1] as i64);
    for i in 0..rows {
        // the columns to clear in row i: [lo, hi)
        let (lo, hi) = if upper {
            (0, (i + diagonal).clamp(0, cols))
        } else {
            ((i + diagonal + 1).clamp(0, cols), cols)
        };
        if lo >= hi {
            continue;
        }
        let row = narrow(out, nd - 2, i as usize, 1);
        zero(&narrow(&row, nd - 1, lo as usize, (hi - lo) as usize))?;
    }
    Ok(())
}

/// `out = torch.stack(inputs, dim)`: input k is copied (with dtype conversion) into
/// `out.select(dim, k)`.
pub fn stack(inputs: &[View], dim: usize, out: &View) -> Result<(), String> {
    for (k, v) in inputs.iter().enumerate() {
        let slot = narrow(out, dim, k, 1);
        let mut dst = slot.clone();
        dst.shape.remove(dim);
        dst.strides.remove(dim);
        iter::copy(v, &dst)?;
    }
    Ok(())
}

/// `torch.masked_select`: the elements of `x` where `mask` (bool or uint8) is nonzero, both
/// broadcast to `shape`, in row-major order, written to the front of the 1-D `out`. Returns
/// how many were selected.
pub fn masked_select(x: &View, mask: &View, shape: &[usize], out: &View) -> Result<usize, String> {
    let n: usize = shape.iter().product();
    let xe = x
        .expand(shape)
        .ok_or_else(|| format!("self {:?} does not broadcast to {shape:?}", x.shape))?;
    let me = mask
        .expand(shape)
        .ok_or_else(|| format!("mask {:?} does not broadcast to {shape:?}", mask.shape))?;
    let xs = super::view::Scratch::new(x.dtype, shape);
    iter::copy(&xe, &xs.view)?;
    let ms = super::view::Scratch::new(super::dtype::DType::U8, shape);
    let mut mview = me.clone();
    mview.dtype = super::dtype::DType::U8; // bool and uint8 are both one byte
    iter::copy(&mview, &ms.view)?;
    let es = x.esize();
    // SAFETY: both scratch buffers hold n elements of their dtype.
    let (xb, mb) = unsafe {
        (
            std::slice::from_raw_parts_mut(xs.view.ptr, n * es),
            std::slice::from_raw_parts(ms.view.ptr as *const u8, n),
        )
    };
    let mut k = 0usize;
    for (i, &m) in mb.iter().enumerate() {
        if m != 0 {
            if k != i {
                xb.copy_within(i * es..(i + 1) * es, k * es);
            }
            k += 1;
        }
    }
    if k > out.numel() {
        return Err(format!(
            "{k} elements are selected but out holds only {}",
            out.numel()
        ));
    }
    if k > 0 {
        let src = View {
            ptr: xs.view.ptr,
            dtype: x.dtype,
            shape: vec![k],
            strides: vec![1],
        };
        iter::copy(&src, &narrow(out, 0, 0, k))?;
    }
    Ok(k)
}

/// How `scatter` combines: replace (0), add (1), multiply (2), as aclnnScatter's `reduce`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    None,
    Add,
    Mul,
}

/// What `scatter` writes: element `p` of a tensor (`src`, at index `p` of `index`'s shape) or
/// one value.
pub enum ScatterSrc<'a> {
    Tensor(&'a View),
    Value(f64, i64),
}

/// `torch.scatter`: `out = self`, then for every position `p` of `index`,
/// `out[p with p[dim] = index[p]] (op)= src[p]`. `self` may be `out` itself. An index
/// outside `[0, out.shape[dim])` is an error.
pub fn scatter(
    x: &View,
    dim: usize,
    index: &View,
    src: ScatterSrc,
    reduce: ScatterReduce,
    out: &View,
) -> Result<(), String> {
    if out.ndim() == 0 {
        // a 0-d self (index and src are 0-d too) is a one-element 1-D tensor, as in torch
        let one = |v: &View| View {
            shape: vec![1],
            strides: vec![1],
            ..v.clone()
        };
        let s1 = match &src {
            ScatterSrc::Tensor(s) => Some(one(s)),
            ScatterSrc::Value(..) => None,
        };
        let src = match (&s1, src) {
            (Some(s), _) => ScatterSrc::Tensor(s),
            (None, v) => v,
        };
        return scatter(&one(x), 0, &one(index), src, reduce, &one(out));
    }
    if !same_view(x, out) {
        iter::copy(x, out)?;
    }
    let n = out.shape[dim] as i64;
    let oes = out.esize() as isize;
    let float = out.dtype.is_float();
    let nd = index.ndim();
    let mut coord = vec![0usize; nd];
    for i in 0..index.numel() {
        // row-major coordinates of position i of index
        let mut rem = i;
        for d in (0..nd).rev() {
            coord[d] = rem % index.shape[d];
            rem /= index.shape[d];
        }
        let t = read_index(index, i);
        if t < 0 || t >= n {
            return Err(format!(
                "index {t} at position {coord:?} is out of range for dimension {dim} of size {n}"
            ));
        }
        let mut off = 0isize;
        for (d, &cd) in coord.iter().enumerate() {
            let c = if d == dim { t as isize } else { cd as isize };
            off += c * out.strides[d];
        }
        let dst = out.ptr.wrapping_offset(off * oes);
        let (vf, vi) = match &src {
            ScatterSrc::Value(f, i) => (*f, *i),
            ScatterSrc::Tensor(s) => {
                let p = s.at(&coord);
                // SAFETY: position coord lies inside src (index.shape <= src.shape, checked).
                unsafe {
                    (
                        super::elem::read_f64(s.dtype, p),
                        super::elem::read_i64(s.dtype, p),
                    )
                }
            }
        };
        // SAFETY: dst is an element of the checked output (coordinates within its shape).
        unsafe {
            if float {
                let old = super::elem::read_f64(out.dtype, dst);
                let v = match reduce {
                    ScatterReduce::None => vf,
                    ScatterReduce::Add => old + vf,
                    ScatterReduce::Mul => old * vf,
                };
                super::elem::write(out.dtype, dst, v);
            } else {
                let old = super::elem::read_i64(out.dtype, dst);
                let v = match reduce {
                    ScatterReduce::None => vi,
                    ScatterReduce::Add => old.wrapping_add(vi),
                    ScatterReduce::Mul => old.wrapping_mul(vi),
                };
                super::elem::write(out.dtype, dst, v);
            }
        }
    }
    Ok(())
}

/// `torch.Tensor.masked_scatter_`: the elements of `out` where `mask` (bool or uint8,
/// broadcast to `out`'s shape) is nonzero take the elements of `source` (same dtype), in
/// row-major order of both. Fewer source elements than selected positions is an error.
pub fn masked_scatter(out: &View, mask: &View, source: &View) -> Result<(), String> {
    let shape = out.shape.clone();
    let n = out.numel();
    let me = mask
        .expand(&shape)
        .ok_or_else(|| format!("mask {:?} does not broadcast to {shape:?}", mask.shape))?;
    let ms = super::view::Scratch::new(super::dtype::DType::U8, &shape);
    let mut mview = me;
    mview.dtype = super::dtype::DType::U8; // bool and uint8 are both one byte
    iter::copy(&mview, &ms.view)?;
    // SAFETY: the scratch holds n bytes.
    let mb = unsafe { std::slice::from_raw_parts(ms.view.ptr as *const u8, n) };
    let count = mb.iter().filter(|&&b| b != 0).count();
    if count > source.numel() {
        return Err(format!(
            "mask selects {count} elements but source has only {}",
            source.numel()
        ));
    }
    let ss = super::view::Scratch::new(out.dtype, &source.shape);
    iter::copy(source, &ss.view)?;
    let es = out.esize();
    let mut k = 0usize;
    for (i, &b) in mb.iter().enumerate() {
        if b == 0 {
            continue;
        }
        let dst = out.ptr.wrapping_offset(offset_of(out, i) * es as isize);
        // SAFETY: element i of the checked output and element k (< count <= numel) of the
        // contiguous scratch copy of source; the two never overlap.
        unsafe { std::ptr::copy_nonoverlapping(ss.view.ptr.add(k * es), dst, es) };
        k += 1;
    }
    Ok(())
}
