//! Engines of `aclnnStridedSlice` (a TensorFlow-style strided slice with masks, resolved by
//! the interface layer into a per-axis plan) and the helpers of the other operators in
//! `libascendcl/aclnn/src/ops/nn_more.rs` that do not reuse an existing engine directly.

use super::iter::copy;
use super::View;

/// One input axis of a strided slice: the first index taken, the step (negative walks
/// backwards) and how many elements are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    pub start: usize,
    pub step: isize,
    pub len: usize,
}

/// One axis of the result: an input axis (by index) or a new axis of size 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutAxis {
    Input(usize),
    New,
}

/// `out = x[plan]`: `axes` has one entry per input dimension; `map` lists the result's
/// axes (input axes left out of it were shrunk and must have `len == 1`).
pub fn strided_slice(x: &View, axes: &[Axis], map: &[OutAxis], out: &View) -> Result<(), String> {
    if axes.len() != x.ndim() {
        return Err(format!(
            "internal: {} slice axes for a {}-D input",
            axes.len(),
            x.ndim()
        ));
    }
    let empty = axes.iter().any(|a| a.len == 0);
    let es = x.esize() as isize;
    let mut ptr = x.ptr;
    if !empty {
        for (d, a) in axes.iter().enumerate() {
            ptr = ptr.wrapping_offset(a.start as isize * x.strides[d] * es);
        }
    }
    let mut shape = Vec::with_capacity(map.len());
    let mut strides = Vec::with_capacity(map.len());
    for m in map {
        match *m {
            OutAxis::Input(d) => {
                shape.push(axes[d].len);
                strides.push(x.strides[d] * axes[d].step);
            }
            OutAxis::New => {
                shape.push(1);
                strides.push(0);
            }
        }
    }
    if shape != out.shape {
        return Err(format!(
            "internal: the slice has shape {shape:?}, out has {:?}",
            out.shape
        ));
    }
    if empty {
        return Ok(());
    }
    let v = View {
        ptr,
        dtype: x.dtype,
        shape,
        strides,
    };
    copy(&v, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::dtype::DType;

    #[test]
    fn reversed_and_shrunk() {
        let mut x: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let xv = View::of_slice(&mut x, DType::F32, &[3, 4]);
        let mut o = vec![0f32; 2];
        let ov = View::of_slice(&mut o, DType::F32, &[1, 2]);
        // x[1, 3:0:-2] with a new leading axis
        let axes = [
            Axis {
                start: 1,
                step: 1,
                len: 1,
            },
            Axis {
                start: 3,
                step: -2,
                len: 2,
            },
        ];
        strided_slice(&xv, &axes, &[OutAxis::New, OutAxis::Input(1)], &ov).unwrap();
        assert_eq!(o, vec![7.0, 5.0]);
    }
}
