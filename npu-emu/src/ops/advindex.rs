//! Advanced indexing: nonzero (`aclnnNonzero`, `aclnnNonzeroV2`), indexing with index
//! tensors (`aclnnIndex`), writing through them (`aclnnIndexPutImpl`) and flipping
//! (`aclnnFlip`).
//!
//! Index tensors follow PyTorch's advanced indexing: the given (defined) index tensors
//! broadcast together to a shape `B`; dimensions without an index are taken whole. When the
//! indexed dimensions are adjacent, `B` replaces them in place in the result's shape,
//! otherwise `B` comes first. Negative indices count from the end; one outside `[-n, n)` is
//! an error (the task fails at the next synchronisation).

use super::dtype::DType;
use super::elem;
use super::view::View;

fn offset_of(v: &View, mut i: usize) -> isize {
    let mut off = 0isize;
    for d in (0..v.ndim()).rev() {
        off += (i % v.shape[d]) as isize * v.strides[d];
        i /= v.shape[d];
    }
    off
}

fn elem_ptr(v: &View, i: usize) -> *mut u8 {
    v.ptr.wrapping_offset(offset_of(v, i) * v.esize() as isize)
}

/// Writes the coordinates of `x`'s nonzero elements (NaN counts as nonzero, -0.0 does not),
/// in row-major order, to the front of the contiguous INT64 `out`: `[count, ndim]` row-major,
/// or `[ndim, count]` when `transpose`. Returns `count`.
pub fn nonzero(x: &View, out: &View, transpose: bool) -> Result<usize, String> {
    if out.dtype != DType::I64 {
        return Err(format!("out must be INT64, not {:?}", out.dtype));
    }
    let nd = x.ndim();
    let mut coords: Vec<usize> = Vec::new();
    let mut count = 0usize;
    for i in 0..x.numel() {
        let p = elem_ptr(x, i);
        // SAFETY: element i of the checked input view (NaN != 0 holds: it counts).
        let nz = unsafe {
            if x.dtype.is_float() {
                elem::read_f64(x.dtype, p) != 0.0
            } else {
                elem::read_i64(x.dtype, p) != 0
            }
        };
        if nz {
            let mut rem = i;
            let start = coords.len();
            coords.resize(start + nd, 0);
            for d in (0..nd).rev() {
                coords[start + d] = rem % x.shape[d];
                rem /= x.shape[d];
            }
            count += 1;
        }
    }
    if count * nd > out.numel() {
        return Err(format!(
            "{count} nonzero elements of {nd} coordinates do not fit in out ({} elements)",
            out.numel()
        ));
    }
    let base = out.ptr as *mut i64;
    for k in 0..count {
        for d in 0..nd {
            let at = if transpose { d * count + k } else { k * nd + d };
            // SAFETY: out is contiguous with at least count * nd INT64 elements (checked).
            unsafe { base.add(at).write_unaligned(coords[k * nd + d] as i64) };
        }
    }
    Ok(count)
}

/// The shape of `x[indices]`: `indices[d]` is `None` for a dimension taken whole (missing
/// trailing entries too). `None` when the defined indices do not broadcast.
pub fn index_shape(
    x: &[usize],
    indices: &[Option<Vec<usize>>],
) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut b: Vec<usize> = Vec::new();
    let mut first = true;
    for s in indices.iter().flatten() {
        b = if first {
            s.clone()
        } else {
            super::view::broadcast_shapes(&b, s)?
        };
        first = false;
    }
    let defined: Vec<usize> = (0..indices.len())
        .filter(|&d| indices[d].is_some())
        .collect();
    if defined.is_empty() {
        return Some((x.to_vec(), b));
    }
    let adjacent = defined.windows(2).all(|w| w[1] == w[0] + 1);
    let rest: Vec<usize> = (0..x.len())
        .filter(|d| !defined.contains(d))
        .map(|d| x[d])
        .collect();
    let out = if adjacent {
        let f = defined[0];
        let mut o = x[..f].to_vec();
        o.extend_from_slice(&b);
        o.extend(((f + defined.len())..x.len()).map(|d| x[d]));
        o
    } else {
        let mut o = b.clone();
        o.extend(rest);
        o
    };
    Some((out, b))
}

/// For every element `r` (row-major) of the indexing result, the byte offset into `x`.
fn visit(
    x: &View,
    indices: &[Option<View>],
    f: &mut dyn FnMut(usize, *mut u8) -> Result<(), String>,
) -> Result<(), String> {
    let shapes: Vec<Option<Vec<usize>>> = indices
        .iter()
        .map(|i| i.as_ref().map(|v| v.shape.clone()))
        .collect();
    let (rshape, b) = index_shape(&x.shape, &shapes)
        .ok_or_else(|| "the index tensors do not broadcast together".to_string())?;
    let defined: Vec<usize> = (0..indices.len())
        .filter(|&d| indices[d].is_some())
        .collect();
    let expanded: Vec<Option<View>> = indices
        .iter()
        .map(|i| i.as_ref().and_then(|v| v.expand(&b)))
        .collect();
    let adjacent = defined.windows(2).all(|w| w[1] == w[0] + 1);
    // where B starts in the result's dimensions
    let bstart = if defined.is_empty() || !adjacent {
        0
    } else {
        defined[0]
    };
    let bn: usize = b.iter().product();
    let n: usize = rshape.iter().product();
    let es = x.esize() as isize;
    let mut coord = vec![0usize; rshape.len()];
    for r in 0..n {
        let mut rem = r;
        for d in (0..rshape.len()).rev() {
            coord[d] = rem % rshape[d];
            rem /= rshape[d];
        }
        // position in B
        let mut bi = 0usize;
        if !defined.is_empty() {
            for (k, &s) in b.iter().enumerate() {
                bi = bi * s + coord[bstart + k];
            }
        }
        debug_assert!(bi < bn.max(1));
        // the remaining result coordinates, in order, go to the dimensions without an index
        let mut rest = (0..rshape.len())
            .filter(|&d| defined.is_empty() || d < bstart || d >= bstart + b.len());
        let mut off = 0isize;
        for d in 0..x.ndim() {
            let c = match expanded.get(d).and_then(|e| e.as_ref()) {
                Some(iv) => {
                    let len = x.shape[d] as i64;
                    // SAFETY: element bi of the checked (expanded) index view.
                    let mut t = unsafe { elem::read_i64(iv.dtype, elem_ptr(iv, bi)) };
                    if t < -len || t >= len {
                        return Err(format!(
                            "index {t} is out of range for dimension {d} of size {len}"
                        ));
                    }
                    if t < 0 {
                        t += len;
                    }
                    t as usize
                }
                None => {
                    coord[rest
                        .next()
                        .expect("a result coordinate per whole dimension")]
                }
            };
            off += c as isize * x.strides[d];
        }
        f(r, x.ptr.wrapping_offset(off * es))?;
    }
    Ok(())
}

/// `out = x[indices]` (`out` has [`index_shape`]'s shape and `x`'s dtype).
pub fn index(x: &View, indices: &[Option<View>], out: &View) -> Result<(), String> {
    let es = x.esize();
    visit(x, indices, &mut |r, src| {
        // SAFETY: one element of x (in range, checked by visit) and element r of out.
        unsafe { std::ptr::copy(src, elem_ptr(out, r), es) };
        Ok(())
    })
}

/// `x[indices] = values` (broadcast to the indexing result's shape), or `+=` when
/// `accumulate` (repeated indices add up). `values` has `x`'s dtype.
pub fn index_put(
    x: &View,
    indices: &[Option<View>],
    values: &View,
    accumulate: bool,
) -> Result<(), String> {
    let shapes: Vec<Option<Vec<usize>>> = indices
        .iter()
        .map(|i| i.as_ref().map(|v| v.shape.clone()))
        .collect();
    let (rshape, _) = index_shape(&x.shape, &shapes)
        .ok_or_else(|| "the index tensors do not broadcast together".to_string())?;
    let v = values.expand(&rshape).ok_or_else(|| {
        format!(
            "values {:?} do not broadcast to the indexing result {rshape:?}",
            values.shape
        )
    })?;
    let es = x.esize();
    let dt = x.dtype;
    visit(x, indices, &mut |r, dst| {
        let src = elem_ptr(&v, r);
        // SAFETY: one element of x (in range, checked by visit) and element r of values.
        unsafe {
            if !accumulate {
                std::ptr::copy(src, dst, es);
            } else if dt.is_float() {
                let s = elem::read_f64(dt, dst) + elem::read_f64(dt, src);
                elem::write(dt, dst, s);
            } else if dt == DType::Bool {
                let s = elem::read_i64(dt, dst) != 0 || elem::read_i64(dt, src) != 0;
                elem::write(dt, dst, s);
            } else {
                let s = elem::read_i64(dt, dst).wrapping_add(elem::read_i64(dt, src));
                elem::write(dt, dst, s);
            }
        }
        Ok(())
    })
}

/// `out = x.flip(dims)` (`out` has `x`'s shape and dtype, and does not overlap `x`).
pub fn flip(x: &View, dims: &[usize], out: &View) -> Result<(), String> {
    let nd = x.ndim();
    let es = x.esize();
    let mut coord = vec![0usize; nd];
    for i in 0..x.numel() {
        let mut rem = i;
        for d in (0..nd).rev() {
            coord[d] = rem % x.shape[d];
            rem /= x.shape[d];
        }
        let mut off = 0isize;
        for (d, &c) in coord.iter().enumerate() {
            let c = if dims.contains(&d) {
                x.shape[d] - 1 - c
            } else {
                c
            };
            off += c as isize * x.strides[d];
        }
        let src = x.ptr.wrapping_offset(off * es as isize);
        // SAFETY: one element of x and element i of out, which do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, elem_ptr(out, i), es) };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonzero_both_layouts() {
        let mut x = [0f32, 1.0, 0.0, f32::NAN, -0.0, 2.0];
        let xv = View::of_slice(&mut x, DType::F32, &[2, 3]);
        let mut o = [0i64; 12];
        let ov = View::of_slice(&mut o, DType::I64, &[6, 2]);
        assert_eq!(nonzero(&xv, &ov, false).unwrap(), 3);
        assert_eq!(&o[..6], &[0, 1, 1, 0, 1, 2]);
        assert_eq!(nonzero(&xv, &ov, true).unwrap(), 3);
        assert_eq!(&o[..6], &[0, 1, 1, 1, 0, 2]);
    }

    #[test]
    fn index_adjacent_and_split() {
        assert_eq!(
            index_shape(&[5, 6, 7], &[None, Some(vec![2, 3])])
                .unwrap()
                .0,
            vec![5, 2, 3, 7]
        );
        assert_eq!(
            index_shape(&[5, 6, 7], &[Some(vec![4]), None, Some(vec![1])])
                .unwrap()
                .0,
            vec![4, 6]
        );
        let mut x: Vec<f32> = (0..12).map(|v| v as f32).collect();
        let xv = View::of_slice(&mut x, DType::F32, &[3, 4]);
        let mut i = [2i64, -3];
        let iv = View::of_slice(&mut i, DType::I64, &[2]);
        let mut o = [0f32; 8];
        let ov = View::of_slice(&mut o, DType::F32, &[3, 2]);
        index(&xv, &[None, Some(iv.clone())], &ov).unwrap();
        assert_eq!(&o[..6], &[2.0, 1.0, 6.0, 5.0, 10.0, 9.0]);
        let mut v = [10f32];
        let vv = View::of_slice(&mut v, DType::F32, &[1]);
        index_put(&xv, &[Some(iv.clone()), Some(iv)], &vv, true).unwrap();
        assert_eq!(x[2 * 4 + 2], 20.0); // (2, 2)
        assert_eq!(x[1], 11.0); // (-3, -3) is (0, 1)
        let mut bad = [4i64];
        let bv = View::of_slice(&mut bad, DType::I64, &[1]);
        let xv = View::of_slice(&mut x, DType::F32, &[3, 4]);
        assert!(index(&xv, &[Some(bv)], &ov).is_err());
    }

    #[test]
    fn flip_dims() {
        let mut x: Vec<i32> = (0..6).collect();
        let xv = View::of_slice(&mut x, DType::I32, &[2, 3]);
        let mut o = [0i32; 6];
        let ov = View::of_slice(&mut o, DType::I32, &[2, 3]);
        flip(&xv, &[1], &ov).unwrap();
        assert_eq!(o, [2, 1, 0, 5, 4, 3]);
        flip(&xv, &[0, 1], &ov).unwrap();
        assert_eq!(o, [5, 4, 3, 2, 1, 0]);
    }
}
