//! Softmax family: `aclnn_softmax.h`, `aclnn_softmax_backward.h`, `aclnn_logsoftmax.h`,
//! `aclnn_logsoftmax_backward.h`, `aclnn_log_softmax_v2.h`. Rows along `dim` compute in float64 and round once.

use super::args::{self as a, FLOATS};
use super::launch::phase1;
use super::launch::Launch;
use npu_emu::ops::nn;
use std::ffi::c_void;

macro_rules! forward {
    ($get:ident, $api:literal, $log:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: i64,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                a::dtype_in(&x, FLOATS)?;
                a::dtype_in(&o, FLOATS)?;
                a::max_dims(&x, 8)?;
                let d = a::dim(dim, x.ndim(), "dim")?;
                a::same_shape(&o, x.shape())?;
                let mut l = Launch::new($api);
                l.input(&x);
                l.output(&o);
                l.finish(move |v, _| {
                    if v[0].ndim() == 0 {
                        let one = npu_emu::ops::View {
                            shape: vec![1],
                            strides: vec![1],
                            ..v[0].clone()
                        };
                        let oo = npu_emu::ops::View {
                            shape: vec![1],
                            strides: vec![1],
                            ..v[1].clone()
                        };
                        return nn::softmax(&one, 0, &oo, $log);
                    }
                    nn::softmax(&v[0], d, &v[1], $log)
                })
            })
        }
    };
}

macro_rules! backward {
    ($get:ident, $api:literal, $log:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            gradOutput: *const c_void,
            output: *const c_void,
            dim: i64,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let g = a::tensor(gradOutput, "gradOutput")?;
                let y = a::tensor(output, "output")?;
                let o = a::tensor(out, "out")?;
                a::dtype_in(&g, FLOATS)?;
                a::dtype_in(&y, FLOATS)?;
                a::dtype_in(&o, FLOATS)?;
                let d = a::dim(dim, y.ndim(), "dim")?;
                a::same_shape(&g, y.shape())?;
                a::same_shape(&o, y.shape())?;
                let mut l = Launch::new($api);
                l.input(&g);
                l.input(&y);
                l.output(&o);
                l.finish(move |v, _| {
                    if v[1].ndim() == 0 {
                        let f = |x: &npu_emu::ops::View| npu_emu::ops::View {
                            shape: vec![1],
                            strides: vec![1],
                            ..x.clone()
                        };
                        return nn::softmax_backward(&f(&v[0]), &f(&v[1]), 0, &f(&v[2]), $log);
                    }
                    nn::softmax_backward(&v[0], &v[1], d, &v[2], $log)
                })
            })
        }
    };
}

forward!(aclnnSoftmaxGetWorkspaceSize, "aclnnSoftmax", false);
forward!(aclnnLogSoftmaxGetWorkspaceSize, "aclnnLogSoftmax", true);
// `aclnn_log_softmax_v2.h` (the experimental set): the same operator under a new name
forward!(aclnnLogSoftmaxV2GetWorkspaceSize, "aclnnLogSoftmaxV2", true);
backward!(
    aclnnSoftmaxBackwardGetWorkspaceSize,
    "aclnnSoftmaxBackward",
    false
);
backward!(
    aclnnLogSoftmaxBackwardGetWorkspaceSize,
    "aclnnLogSoftmaxBackward",
    true
);

crate::phase2!(
    aclnnSoftmax,
    aclnnLogSoftmax,
    aclnnLogSoftmaxV2,
    aclnnSoftmaxBackward,
    aclnnLogSoftmaxBackward
);
