//! Reductions: `aclnn_reduce_sum.h`, `aclnn_mean.h` (Mean, MeanV2), `aclnn_amax.h`,
//! `aclnn_amin.h`, `aclnn_max.h`, `aclnn_min.h`, `aclnn_max_dim.h`, `aclnn_min_dim.h`,
//! `aclnn_argmax.h`, `aclnn_argmin.h`, `aclnn_linalg_vector_norm.h`, `aclnn_any.h`,
//! `aclnn_all.h`, `aclnn_prod.h`, `aclnn_cumsum.h` (Cumsum, CumsumV2 with exclusive/reverse),
//! `aclnn_var.h` (Var, VarCorrection), `aclnn_var_mean.h`, `aclnn_std.h`,
//! `aclnn_std_mean_correction.h` (two passes in f64: mean, then squared deviations).
//!
//! `dim` lists may be negative; an empty list reduces every dimension. `out` has the kept
//! shape, or the input rank with 1 for each reduced dimension when `keepDim`. The `dtype`
//! argument (ReduceSum, Mean, LinalgVectorNorm) must be `out`'s data type.

use super::args::{self as a, ALL_NUM, FLOATS, T};
use super::launch::{phase1, Built, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::reduce::{self, Reduce};
use std::ffi::c_void;

fn reduced_shape(x: &T, dims: &[usize], keep: bool) -> Vec<usize> {
    let mut s = Vec::new();
    for (d, &n) in x.shape().iter().enumerate() {
        if dims.contains(&d) {
            if keep {
                s.push(1);
            }
        } else {
            s.push(n);
        }
    }
    s
}

pub(crate) fn out_shape_ok(o: &T, x: &T, dims: &[usize], keep: bool) -> NnResult<()> {
    let want = reduced_shape(x, dims, keep);
    // a full reduction may also be written to a 1-element tensor of rank 1
    if o.shape() == want.as_slice() || (want.is_empty() && o.numel() == 1 && o.ndim() <= 1) {
        Ok(())
    } else {
        Err(NnError::invalid(format!(
            "out has shape {:?}; reducing {} {:?} over {dims:?} (keepDim {keep}) gives {want:?}",
            o.shape(),
            x.arg,
            x.shape()
        )))
    }
}

#[allow(clippy::too_many_arguments)]
fn reduce_op(
    api: &'static str,
    x: T,
    dims: Vec<i64>,
    keep: bool,
    dtype: Option<i32>,
    o: T,
    op: Reduce,
    dtypes: &[DType],
) -> NnResult<Built> {
    a::dtype_in(&x, dtypes)?;
    a::max_dims(&x, 8)?;
    if let Some(d) = dtype {
        let d = a::dtype(d, "dtype")?;
        if d != o.dtype() {
            return Err(NnError::invalid(format!(
                "dtype is {d} but out has data type {}; they must be the same",
                o.dtype()
            )));
        }
    }
    let ds = a::dims(&dims, x.ndim(), "dim")?;
    out_shape_ok(&o, &x, &ds, keep)?;
    let int_acc = !o.dtype().is_float();
    if matches!(op, Reduce::Max | Reduce::Min) && ds.iter().any(|&d| x.shape()[d] == 0) {
        return Err(NnError::invalid(format!(
            "{} {:?} is empty along a reduced dimension: max/min have no identity",
            x.arg,
            x.shape()
        )));
    }
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| {
        // a full reduction written to a [1] tensor: view it as 0-d
        let mut out = v[1].clone();
        if ds.len() == v[0].ndim() && !keep && out.ndim() == 1 && v[0].ndim() != 1 {
            out.shape.clear();
            out.strides.clear();
        }
        reduce::reduce(op, &v[0], &ds, &out, int_acc)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnReduceSumGetWorkspaceSize(
    self_: *const c_void,
    dims: *const c_void,
    keepDims: bool,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnReduceSumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor_cx(self_, "self")?;
            let d = a::int_array(dims, "dims")?;
            let o = a::tensor_cx(out, "out")?;
            if let Some(r) = super::complex::reduce("aclnnReduceSum", &x, &d, keepDims, false, &o) {
                return r;
            }
            let (x, o) = (x.0, o.0);
            reduce_op(
                "aclnnReduceSum",
                x,
                d,
                keepDims,
                Some(dtype),
                o,
                Reduce::Sum,
                ALL_NUM,
            )
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMeanGetWorkspaceSize(
    self_: *const c_void,
    dim: *const c_void,
    keepDim: bool,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnMeanGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor_cx(self_, "self")?;
        let d = a::int_array(dim, "dim")?;
        let o = a::tensor_cx(out, "out")?;
        if let Some(r) = super::complex::reduce("aclnnMean", &x, &d, keepDim, true, &o) {
            return r;
        }
        let (x, o) = (x.0, o.0);
        a::dtype_in(&o, FLOATS)?;
        reduce_op(
            "aclnnMean",
            x,
            d,
            keepDim,
            Some(dtype),
            o,
            Reduce::Mean,
            ALL_NUM,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnMeanV2GetWorkspaceSize(
    self_: *const c_void,
    dim: *const c_void,
    keepDim: bool,
    noopWithEmptyAxes: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnMeanV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let d = a::opt_int_array(dim, "dim")?.unwrap_or_default();
            let o = a::tensor(out, "out")?;
            a::dtype_in(&o, FLOATS)?;
            if d.is_empty() && noopWithEmptyAxes {
                // no axes and the no-op flag: out = self
                a::same_shape(&o, x.shape())?;
                let mut l = Launch::new("aclnnMeanV2");
                l.input(&x);
                l.output(&o);
                return l.finish(|v, _| npu_emu::ops::iter::copy(&v[0], &v[1]));
            }
            reduce_op("aclnnMeanV2", x, d, keepDim, None, o, Reduce::Mean, ALL_NUM)
        },
    )
}

macro_rules! amax {
    ($get:ident, $api:literal, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: *const c_void,
            keepDim: bool,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let d = a::int_array(dim, "dim")?;
                let o = a::tensor(out, "out")?;
                if o.dtype() != x.dtype() {
                    return Err(NnError::invalid(format!(
                        "out data type {} must be self's {}",
                        o.dtype(),
                        x.dtype()
                    )));
                }
                reduce_op($api, x, d, keepDim, None, o, $op, ALL_NUM)
            })
        }
    };
}
amax!(aclnnAmaxGetWorkspaceSize, "aclnnAmax", Reduce::Max);
amax!(aclnnAminGetWorkspaceSize, "aclnnAmin", Reduce::Min);

macro_rules! full {
    ($get:ident, $api:literal, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                reduce_op($api, x, vec![], false, None, o, $op, ALL_NUM)
            })
        }
    };
}
full!(aclnnMaxGetWorkspaceSize, "aclnnMax", Reduce::Max);
full!(aclnnMinGetWorkspaceSize, "aclnnMin", Reduce::Min);

fn arg_op(
    api: &'static str,
    x: T,
    dim: i64,
    keep: bool,
    vals: Option<T>,
    idx: Option<T>,
    is_max: bool,
) -> NnResult<Built> {
    a::dtype_in(&x, ALL_NUM)?;
    let d = a::dim(dim, x.ndim(), "dim")?;
    let ds = if x.ndim() == 0 { vec![] } else { vec![d] };
    if x.ndim() > 0 && x.shape()[d] == 0 {
        return Err(NnError::invalid(format!(
            "self {:?} is empty along dim {d}",
            x.shape()
        )));
    }
    if let Some(v) = &vals {
        out_shape_ok(v, &x, &ds, keep)?;
        if v.dtype() != x.dtype() {
            return Err(NnError::invalid(format!(
                "out data type {} must be self's {}",
                v.dtype(),
                x.dtype()
            )));
        }
    }
    if let Some(i) = &idx {
        out_shape_ok(i, &x, &ds, keep)?;
        a::dtype_in(i, &[DType::I64, DType::I32])?;
    }
    let mut l = Launch::new(api);
    l.input(&x);
    let has_v = vals.is_some();
    if let Some(v) = &vals {
        l.output(v);
    }
    if let Some(i) = &idx {
        l.output(i);
    }
    l.finish(move |v, _| {
        if v[0].ndim() == 0 {
            // a 0-d input: the value itself, index 0
            if has_v {
                npu_emu::ops::iter::copy(&v[0], &v[1])?;
            }
            let last = v.len() - 1;
            if v.len() > 1 + has_v as usize {
                npu_emu::ops::iter::fill::<i64>(&v[last], 0)?;
            }
            return Ok(());
        }
        let (vv, iv) = if has_v {
            (Some(&v[1]), v.get(2))
        } else {
            (None, v.get(1))
        };
        reduce::reduce_arg(&v[0], d, is_max, vv, iv)
    })
}

macro_rules! max_dim {
    ($get:ident, $api:literal, $max:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: i64,
            keepdim: bool,
            out: *mut c_void,
            indices: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                let i = a::tensor(indices, "indices")?;
                arg_op($api, x, dim, keepdim, Some(o), Some(i), $max)
            })
        }
    };
}
max_dim!(aclnnMaxDimGetWorkspaceSize, "aclnnMaxDim", true);
max_dim!(aclnnMinDimGetWorkspaceSize, "aclnnMinDim", false);

macro_rules! arg_max {
    ($get:ident, $api:literal, $max:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: i64,
            keepdim: bool,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                arg_op($api, x, dim, keepdim, None, Some(o), $max)
            })
        }
    };
}
arg_max!(aclnnArgMaxGetWorkspaceSize, "aclnnArgMax", true);
arg_max!(aclnnArgMinGetWorkspaceSize, "aclnnArgMin", false);

#[no_mangle]
pub unsafe extern "C" fn aclnnLinalgVectorNormGetWorkspaceSize(
    self_: *const c_void,
    ord: *const c_void,
    dims: *const c_void,
    keepDims: bool,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLinalgVectorNormGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let p = a::scalar(ord, "ord")?.to_f64();
            let d = a::opt_int_array(dims, "dims")?.unwrap_or_default();
            let o = a::tensor(out, "out")?;
            a::dtype_in(&o, FLOATS)?;
            reduce_op(
                "aclnnLinalgVectorNorm",
                x,
                d,
                keepDims,
                Some(dtype),
                o,
                Reduce::Norm(p),
                FLOATS,
            )
        },
    )
}

macro_rules! any_all {
    ($get:ident, $api:literal, $op:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: *const c_void,
            keepdim: bool,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let d = a::int_array(dim, "dim")?;
                let o = a::tensor(out, "out")?;
                a::dtype_in(&o, &[DType::Bool, DType::U8])?;
                reduce_op($api, x, d, keepdim, None, o, $op, ALL_NUM)
            })
        }
    };
}
any_all!(aclnnAnyGetWorkspaceSize, "aclnnAny", Reduce::Any);
any_all!(aclnnAllGetWorkspaceSize, "aclnnAll", Reduce::All);

#[no_mangle]
pub unsafe extern "C" fn aclnnProdGetWorkspaceSize(
    self_: *const c_void,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnProdGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        reduce_op(
            "aclnnProd",
            x,
            vec![],
            false,
            Some(dtype),
            o,
            Reduce::Prod,
            ALL_NUM,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnProdDimGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    keepDim: bool,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnProdDimGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            if x.ndim() == 0 {
                return reduce_op(
                    "aclnnProdDim",
                    x,
                    vec![],
                    keepDim,
                    Some(dtype),
                    o,
                    Reduce::Prod,
                    ALL_NUM,
                );
            }
            reduce_op(
                "aclnnProdDim",
                x,
                vec![dim],
                keepDim,
                Some(dtype),
                o,
                Reduce::Prod,
                ALL_NUM,
            )
        },
    )
}

fn cumsum_op(
    api: &'static str,
    x: T,
    dim: i64,
    dtype: Option<i32>,
    exclusive: bool,
    reverse: bool,
    o: T,
) -> NnResult<Built> {
    a::dtype_in(&x, ALL_NUM)?;
    if let Some(d) = dtype {
        let d = a::dtype(d, "dtype")?;
        if d != o.dtype() {
            return Err(NnError::invalid(format!(
                "dtype is {d} but out has data type {}; they must be the same",
                o.dtype()
            )));
        }
    }
    let d = a::dim(dim, x.ndim(), "dim")?;
    a::same_shape(&o, x.shape())?;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    l.finish(move |v, _| {
        if v[0].ndim() == 0 {
            return npu_emu::ops::iter::copy(&v[0], &v[1]);
        }
        reduce::cumsum(&v[0], d, exclusive, reverse, &v[1])
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCumsumGetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    dtype: i32,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCumsumGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            cumsum_op("aclnnCumsum", x, dim, Some(dtype), false, false, o)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnCumsumV2GetWorkspaceSize(
    self_: *const c_void,
    dim: i64,
    exclusive: bool,
    reverse: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnCumsumV2GetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(self_, "self")?;
            let o = a::tensor(out, "out")?;
            cumsum_op("aclnnCumsumV2", x, dim, None, exclusive, reverse, o)
        },
    )
}

crate::phase2!(
    aclnnAny,
    aclnnAll,
    aclnnProd,
    aclnnProdDim,
    aclnnCumsum,
    aclnnCumsumV2
);

crate::phase2!(
    aclnnReduceSum,
    aclnnMean,
    aclnnMeanV2,
    aclnnAmax,
    aclnnAmin,
    aclnnMax,
    aclnnMin,
    aclnnMaxDim,
    aclnnMinDim,
    aclnnArgMax,
    aclnnArgMin,
    aclnnLinalgVectorNorm
);

/// Var/Std (with their mean): `self` floating, `dim` (empty: every dimension),
/// `correction` (Bessel's is 1), the outputs floating with the reduced shape.
#[allow(clippy::too_many_arguments)]
fn var_op(
    api: &'static str,
    x: T,
    dim: *const c_void,
    correction: i64,
    keep: bool,
    o: T,
    mean: Option<T>,
    std: bool,
) -> NnResult<Built> {
    // nullptr or [] reduces every dimension
    let d = a::opt_int_array(dim, "dim")?.unwrap_or_default();
    a::dtype_in(&x, FLOATS)?;
    a::max_dims(&x, 8)?;
    let ds = a::dims(&d, x.ndim(), "dim")?;
    for t in std::iter::once(&o).chain(mean.as_ref()) {
        a::dtype_in(t, FLOATS)?;
        out_shape_ok(t, &x, &ds, keep)?;
    }
    let op = if std {
        Reduce::Std(correction as f64)
    } else {
        Reduce::Var(correction as f64)
    };
    let full = ds.len() == x.ndim() && !keep;
    let mut l = Launch::new(api);
    l.input(&x);
    l.output(&o);
    if let Some(m) = &mean {
        l.output(m);
    }
    l.finish(move |v, _| {
        let fix = |o: &npu_emu::ops::View| {
            let mut o = o.clone();
            if full && o.ndim() == 1 && v[0].ndim() != 1 {
                o.shape.clear();
                o.strides.clear();
            }
            o
        };
        reduce::reduce(op, &v[0], &ds, &fix(&v[1]), false)?;
        if v.len() > 2 {
            reduce::reduce(Reduce::Mean, &v[0], &ds, &fix(&v[2]), false)?;
        }
        Ok(())
    })
}

macro_rules! var_fn {
    ($get:ident, $api:literal, $std:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: *const c_void,
            correction: i64,
            keepdim: bool,
            out: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(out, "out")?;
                var_op($api, x, dim, correction, keepdim, o, None, $std)
            })
        }
    };
}

var_fn!(
    aclnnVarCorrectionGetWorkspaceSize,
    "aclnnVarCorrection",
    false
);
var_fn!(aclnnStdGetWorkspaceSize, "aclnnStd", true);

/// `aclnnVar(self, dim, unbiased, keepdim, out)`: correction 1 when `unbiased`, else 0.
#[no_mangle]
pub unsafe extern "C" fn aclnnVarGetWorkspaceSize(
    self_: *const c_void,
    dim: *const c_void,
    unbiased: bool,
    keepdim: bool,
    out: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnVarGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(self_, "self")?;
        let o = a::tensor(out, "out")?;
        var_op("aclnnVar", x, dim, unbiased as i64, keepdim, o, None, false)
    })
}

macro_rules! var_mean_fn {
    ($get:ident, $api:literal, $first:literal, $std:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            self_: *const c_void,
            dim: *const c_void,
            correction: i64,
            keepdim: bool,
            first: *mut c_void,
            meanOut: *mut c_void,
            workspaceSize: *mut u64,
            executor: *mut *mut c_void,
        ) -> i32 {
            phase1(stringify!($get), workspaceSize, executor, || {
                let x = a::tensor(self_, "self")?;
                let o = a::tensor(first, $first)?;
                let m = a::tensor(meanOut, "meanOut")?;
                var_op($api, x, dim, correction, keepdim, o, Some(m), $std)
            })
        }
    };
}

var_mean_fn!(
    aclnnVarMeanGetWorkspaceSize,
    "aclnnVarMean",
    "varOut",
    false
);
var_mean_fn!(
    aclnnStdMeanCorrectionGetWorkspaceSize,
    "aclnnStdMeanCorrection",
    "stdOut",
    true
);

crate::phase2!(
    aclnnVarCorrection,
    aclnnStd,
    aclnnVar,
    aclnnVarMean,
    aclnnStdMeanCorrection
);
