//! Indexing: `aclnn_index_select.h`, `aclnn_gather.h`. Indices are INT64 or INT32; negative
//! ones count from the end; one out of range fails the task (at the next synchronisation).

use super::args::{self as a, INDEX};
use super::launch::{phase1, Launch};
use crate::status::NnError;
use npu_emu::ops::shape;
use std::ffi::c_void;

#[no_mangle]
pub unsafe extern "C" fn aclnnIndexSelectGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnIndexSelectGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&i, INDEX)?;
            if i.ndim() > 1 {
                return Err(NnError::invalid(format!(
                    "index must be 1-D, but its shape is {:?}",
                    i.shape()
                )));
            }
            // A 0-d self is a one-element 1-D tensor (CANN unsqueezes it), and its out is 0-d.
            let scalar = x.ndim() == 0;
            let d = a::dim(dim, x.ndim().max(1), "dim")?;
            if scalar {
                if o.ndim() != 0 || i.numel() != 1 {
                    return Err(NnError::invalid(format!(
                        "self is a scalar, so index {:?} must have one element and out {:?} be a scalar",
                        i.shape(),
                        o.shape()
                    )));
                }
            } else {
                let mut want = x.shape().to_vec();
                want[d] = i.numel();
                a::same_shape(&o, &want)?;
            }
            if o.dtype() != x.dtype() {
                return Err(NnError::invalid(format!(
                    "out data type {} must be self's {}",
                    o.dtype(),
                    x.dtype()
                )));
            }
            let mut l = Launch::new("aclnnIndexSelect");
            l.input(&x);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| {
                if scalar {
                    let (x1, o1) = (v[0].reshaped(&[1]), v[2].reshaped(&[1]));
                    shape::index_select(&x1, 0, &v[1], &o1)
                } else {
                    shape::index_select(&v[0], d, &v[1], &v[2])
                }
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGatherGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    index: *const c_void,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGatherGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let i = a::tensor(index, "index")?;
            let o = a::tensor(out, "out")?;
            a::dtype_in(&i, INDEX)?;
            if i.ndim() != x.ndim() {
                return Err(NnError::invalid(format!(
                    "index {:?} must have as many dimensions as self {:?}",
                    i.shape(),
                    x.shape()
                )));
            }
            let d = a::dim(dim, x.ndim(), "dim")?;
            for k in 0..x.ndim() {
                if k != d && i.shape()[k] > x.shape()[k] {
                    return Err(NnError::invalid(format!(
                        "index {:?} is larger than self {:?} in dimension {k}",
                        i.shape(),
                        x.shape()
                    )));
                }
            }
            a::same_shape(&o, i.shape())?;
            if o.dtype() != x.dtype() {
                return Err(NnError::invalid(format!(
                    "out data type {} must be self's {}",
                    o.dtype(),
                    x.dtype()
                )));
            }
            let mut l = Launch::new("aclnnGather");
            l.input(&x);
            l.input(&i);
            l.output(&o);
            l.finish(move |v, _| shape::gather(&v[0], d, &v[1], &v[2]))
        },
    )
}

crate::phase2!(aclnnIndexSelect, aclnnGather);
