//! Conversion operators of CANN's ops-math documentation (`conversion/*`): Slice and SliceV2
//! (strided views copied out), StridedSliceAssignV2 (a strided view written in place),
//! Flatten (an ONNX reshape to 2-D), ChunkCat (`torch._chunk_cat`) and ConfusionTranspose
//! (reshape + transpose in either order). Dtype conversions go through [`iter::copy`].

use super::iter::copy;
use super::view::{contiguous_strides, Scratch};
use super::View;

/// One sliced dimension: `(dim, start, step)` with `start` already in `[0, N]`.
pub type Cut = (usize, usize, usize);

/// The view of `x` keeping, along each cut dimension, `len` elements from `start` every
/// `step`; `shape` gives the sliced sizes.
pub fn sliced(x: &View, cuts: &[Cut], shape: &[usize]) -> View {
    let mut v = x.clone();
    let es = x.esize() as isize;
    for &(d, start, step) in cuts {
        if shape[d] > 0 {
            v.ptr = v.ptr.wrapping_offset(start as isize * x.strides[d] * es);
        }
        v.strides[d] = x.strides[d] * step as isize;
    }
    v.shape = shape.to_vec();
    v
}

/// `out = x[cuts]` (Slice, SliceV2); `out` has the sliced shape.
pub fn slice(x: &View, cuts: &[Cut], out: &View) -> Result<(), String> {
    copy(&sliced(x, cuts, &out.shape), out)
}

/// `var[cuts] = value` in place (StridedSliceAssignV2); `value` has the sliced shape. The
/// value is staged first, so it may overlap `var`.
pub fn slice_assign(var: &View, value: &View, cuts: &[Cut]) -> Result<(), String> {
    let s = Scratch::new(value.dtype, &value.shape);
    copy(value, &s.view)?;
    copy(&s.view, &sliced(var, cuts, &value.shape))
}

/// `out = x` with another shape of the same element count, in row-major order (Flatten).
pub fn reshape(x: &View, out: &View) -> Result<(), String> {
    let (_buf, d) = dense(x)?;
    copy(&d.reshaped(&out.shape), out)
}

/// A dense row-major copy of `x` (its own dtype) and a view over it with `shape`.
fn dense(x: &View) -> Result<(Vec<u64>, View), String> {
    let bytes = x.numel() * x.esize();
    let mut buf = vec![0u64; bytes.div_ceil(8).max(1)];
    let v = View {
        ptr: buf.as_mut_ptr() as *mut u8,
        dtype: x.dtype,
        shape: x.shape.clone(),
        strides: contiguous_strides(&x.shape),
    };
    copy(x, &v)?;
    Ok((buf, v))
}

/// ConfusionTranspose: `transpose(reshape(x, shape), perm)`, or with `transpose_first`
/// `reshape(transpose(x, perm), shape)`.
pub fn confusion_transpose(
    x: &View,
    perm: &[usize],
    shape: &[usize],
    transpose_first: bool,
    out: &View,
) -> Result<(), String> {
    if transpose_first {
        let t = x.permute(perm);
        let (_buf, d) = dense(&t)?;
        copy(&d.reshaped(&out.shape), out)
    } else {
        let (_buf, d) = dense(x)?;
        copy(&d.reshaped(shape).permute(perm), out)
    }
}

/// `torch._chunk_cat` along dimension 0: each tensor (`[d0, rest…]`) is padded with zeros to
/// `num_chunks * ceil(d0 / num_chunks)` rows and seen as
/// `[num_chunks, ceil(d0 / num_chunks) * prod(rest)]`; `out` (`[num_chunks, Σ]`) is their
/// concatenation along dimension 1, converted to its dtype.
pub fn chunk_cat(xs: &[View], num_chunks: usize, out: &View) -> Result<(), String> {
    // zero the padding first
    super::iter::fill::<f64>(out, 0.0)?;
    let mut col = 0usize;
    let es = out.esize() as isize;
    for x in xs {
        let d0 = x.shape[0];
        let rest: usize = x.shape[1..].iter().product();
        let per = d0.div_ceil(num_chunks);
        let (_buf, dv) = dense(x)?;
        for c in 0..num_chunks {
            let rows = per.min(d0.saturating_sub(c * per));
            let n = rows * rest;
            if n == 0 {
                continue;
            }
            let src = View {
                ptr: dv.ptr.wrapping_add(c * per * rest * x.esize()),
                dtype: x.dtype,
                shape: vec![n],
                strides: vec![1],
            };
            let dst = View {
                ptr: out.ptr.wrapping_offset(
                    (c as isize * out.strides[0] + col as isize * out.strides[1]) * es,
                ),
                dtype: out.dtype,
                shape: vec![n],
                strides: vec![out.strides[1]],
            };
            copy(&src, &dst)?;
        }
        col += per * rest;
    }
    Ok(())
}
