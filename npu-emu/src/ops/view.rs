//! Strided tensor views over device memory (as `aclCreateTensor` describes them): a pointer
//! to the view's element 0 (storage base + offset, already through the machine's address
//! translation), a dtype, a shape and strides in elements (0 for an expanded dimension).

use super::dtype::DType;

/// A tensor view. The pointer is the host alias of the view's first element; the C side
/// builds it from the checked device range (see [`Layout::extent`]).
#[derive(Clone, Debug)]
pub struct View {
    pub ptr: *mut u8,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
}

// SAFETY: a View is a description of memory the executor checked; the kernels that use it
// from worker threads write disjoint parts (or are serialised on one stream).
unsafe impl Send for View {}
// SAFETY: as for Send: shared use only reads the description; the memory is the kernels'.
unsafe impl Sync for View {}

/// The shape/stride/offset/dtype part of a tensor, without memory (what GetWorkspaceSize
/// checks and keeps in the executor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    /// Offset of element 0 from the storage address, in elements.
    pub offset: isize,
}

impl Layout {
    pub fn contiguous(dtype: DType, shape: &[usize]) -> Layout {
        Layout {
            dtype,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Lowest and one-past-highest element offsets (relative to element 0 of the view) that
    /// the view touches; `(0, 0)` for an empty view.
    pub fn extent(&self) -> (isize, isize) {
        extent(&self.shape, &self.strides)
    }

    /// The view over `base` (the host alias of the storage address).
    pub fn view_at(&self, data: *mut u8) -> View {
        View {
            ptr: data,
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
        }
    }
}

/// Row-major strides of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1) as isize;
    }
    s
}

/// See [`Layout::extent`].
pub fn extent(shape: &[usize], strides: &[isize]) -> (isize, isize) {
    if shape.contains(&0) {
        return (0, 0);
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&d, &s) in shape.iter().zip(strides) {
        let span = s * (d as isize - 1);
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    (lo, hi + 1)
}

/// The broadcast shape of two shapes (numpy rules), or None.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let db = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return None;
        };
    }
    Some(out)
}

impl View {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn esize(&self) -> usize {
        self.dtype.size()
    }

    /// Whether the elements are dense in row-major order.
    pub fn is_contiguous(&self) -> bool {
        let want = contiguous_strides(&self.shape);
        self.shape
            .iter()
            .zip(self.strides.iter().zip(&want))
            .all(|(&d, (&s, &w))| d == 1 || s == w)
    }

    /// Strides of this view expanded to `shape` (trailing-aligned; 0 where broadcast), or
    /// None when it cannot broadcast.
    pub fn broadcast_strides(&self, shape: &[usize]) -> Option<Vec<isize>> {
        if self.shape.len() > shape.len() {
            return None;
        }
        let lead = shape.len() - self.shape.len();
        let mut st = vec![0isize; shape.len()];
        for i in 0..self.shape.len() {
            let (d, want) = (self.shape[i], shape[lead + i]);
            st[lead + i] = if d == want {
                if d == 1 {
                    0
                } else {
                    self.strides[i]
                }
            } else if d == 1 {
                0
            } else {
                return None;
            };
        }
        Some(st)
    }

    /// This view expanded to `shape`.
    pub fn expand(&self, shape: &[usize]) -> Option<View> {
        Some(View {
            ptr: self.ptr,
            dtype: self.dtype,
            shape: shape.to_vec(),
            strides: self.broadcast_strides(shape)?,
        })
    }

    /// The view with dimensions permuted (`perm[i]` is the old dimension of new dim i).
    pub fn permute(&self, perm: &[usize]) -> View {
        View {
            ptr: self.ptr,
            dtype: self.dtype,
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
        }
    }

    /// The same memory seen as another dtype of the same size, or with another shape
    /// (contiguous views only).
    pub fn reshaped(&self, shape: &[usize]) -> View {
        debug_assert!(self.is_contiguous());
        View {
            ptr: self.ptr,
            dtype: self.dtype,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
        }
    }

    /// Byte range `[lo, hi)` of the memory the view touches (absolute addresses).
    pub fn byte_range(&self) -> (usize, usize) {
        let (lo, hi) = extent(&self.shape, &self.strides);
        if lo == hi {
            return (self.ptr as usize, self.ptr as usize);
        }
        let es = self.esize() as isize;
        let base = self.ptr as isize;
        (
            (base + lo * es) as usize,
            (base + (hi - 1) * es + es) as usize,
        )
    }

    /// Whether the two views share any byte.
    pub fn overlaps(&self, other: &View) -> bool {
        let (a0, a1) = self.byte_range();
        let (b0, b1) = other.byte_range();
        a0 < b1 && b0 < a1 && a0 != a1 && b0 != b1
    }

    /// Pointer to the element at `idx`.
    pub fn at(&self, idx: &[usize]) -> *mut u8 {
        let off: isize = idx
            .iter()
            .zip(&self.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        self.ptr.wrapping_offset(off * self.esize() as isize)
    }

    /// A view over a host buffer (tests and scratch).
    pub fn of_slice<T>(v: &mut [T], dtype: DType, shape: &[usize]) -> View {
        debug_assert_eq!(std::mem::size_of::<T>(), dtype.size());
        debug_assert_eq!(v.len(), shape.iter().product::<usize>());
        View {
            ptr: v.as_mut_ptr() as *mut u8,
            dtype,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
        }
    }
}

/// A contiguous scratch tensor on the host (for kernels that need a temporary).
pub struct Scratch {
    buf: Vec<u64>,
    pub view: View,
}

impl Scratch {
    pub fn new(dtype: DType, shape: &[usize]) -> Scratch {
        let bytes = shape.iter().product::<usize>() * dtype.size();
        let mut buf = vec![0u64; bytes.div_ceil(8).max(1)];
        let view = View {
            ptr: buf.as_mut_ptr() as *mut u8,
            dtype,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
        };
        Scratch { buf, view }
    }

    pub fn bytes(&self) -> usize {
        self.buf.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[2, 1, 3], &[4, 1]), Some(vec![2, 4, 3]));
        assert_eq!(broadcast_shapes(&[], &[3]), Some(vec![3]));
        assert_eq!(broadcast_shapes(&[2], &[3]), None);
        let v = View {
            ptr: std::ptr::null_mut(),
            dtype: DType::F32,
            shape: vec![3, 1],
            strides: vec![1, 1],
        };
        assert_eq!(v.broadcast_strides(&[2, 3, 4]), Some(vec![0, 1, 0]));
        assert_eq!(extent(&[2, 3], &[1, 2]), (0, 6));
        assert_eq!(extent(&[3], &[-2]), (-4, 1));
        assert_eq!(extent(&[0, 3], &[3, 1]), (0, 0));
    }
}
