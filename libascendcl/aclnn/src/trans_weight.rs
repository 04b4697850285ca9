//! `aclnnop/aclnn_trans_matmul_weight.h` (abi.md §5.5): `aclnnCalculateMatmulWeightSize`,
//! `aclnnCalculateMatmulWeightSizeV2`, `aclnnTransMatmulWeightGetWorkspaceSize` and
//! `aclnnTransMatmulWeight`, after CANN's ops-math implementation and doc tables.
//!
//! The matmul weight is converted in place from ND to FRACTAL_NZ: FLOAT16/BFLOAT16 with
//! C0 = 16, INT8 with C0 = 32 (the last dimension aligned to C0, the second-last to 16), so
//! the tensor's memory must hold `aclnnCalculateMatmulWeightSizeV2` elements. The first phase
//! rewrites the tensor's storage shape and format (as CANN does); the second converts the
//! view into the workspace (gathering a strided view first), then copies the result over the
//! tensor. The workspace (the private copy, plus the gathered view for a non-contiguous
//! tensor, each rounded up to 512 bytes) is really used, so a smaller `workspaceSize` is
//! `ACLNN_ERR_PARAM_INVALID`.

use crate::executor::{Executor, Gather, Io, Op};
use crate::format_cast::{dims_range, dtype_name, fe, format_name, tensor_of};
use crate::meta::{contiguous_strides, dtype_size};
use crate::objects::{self, Object};
use crate::rt;
use crate::status::{boundary, non_null, out, NnError, NnResult};
use npu_emu::formats::{self, C0Rule, Request};
use std::ffi::c_void;
use std::sync::Arc;

const ND: i32 = 2;
const FRACTAL_NZ: i32 = 29;
const ACL_FLOAT16: i32 = 1;
const ACL_INT8: i32 = 2;
const ACL_BF16: i32 = 27;

/// Workspace blocks are rounded up to this many bytes.
const WS_ALIGN: usize = 512;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    /// Atlas A2/A3 and Ascend 950.
    A2A3A5,
    /// Atlas inference (Ascend310P).
    P310,
    /// Anything else (Atlas training 910A…): FLOAT16 2-D only, and no V2.
    Other,
}

fn family(soc: &str) -> Family {
    if soc.starts_with("Ascend910B")
        || soc.starts_with("Ascend910_93")
        || soc.starts_with("Ascend950")
        || soc.starts_with("Ascend910_95")
    {
        Family::A2A3A5
    } else if soc.starts_with("Ascend310P") {
        Family::P310
    } else {
        Family::Other
    }
}

fn soc_family() -> NnResult<(Family, String)> {
    let n = rt::rt()?.soc_name();
    Ok((family(&n), n))
}

fn int_array(h: *const c_void, arg: &str) -> NnResult<Vec<i64>> {
    non_null(h, arg)?;
    objects::with(h as usize, "aclIntArray", arg, |o| match o {
        Object::IntArray(v) => Ok(v.clone()),
        _ => unreachable!(),
    })
}

/// Elements of the weight in its private layout: the last dimension aligned to 16 (2-byte
/// types) or 32 (others), the second-last to 16, the batch dimensions as they are.
fn weight_elements(shape: &[i64], dtype: i32) -> u64 {
    let n = shape.len();
    let align = |v: i64, a: i64| (v + a - 1) / a * a;
    let last = if matches!(dtype, ACL_FLOAT16 | ACL_BF16) {
        16
    } else {
        32
    };
    let mut e: i64 = 1;
    for (i, &d) in shape.iter().enumerate() {
        e = e.saturating_mul(if i + 2 < n {
            d
        } else if i + 1 == n {
            align(d, last)
        } else {
            align(d, 16)
        });
    }
    e.max(0) as u64
}

/// The dimension rule of V1 and of non-INT8 weights: 2-3 dimensions on A2/A3/950, else 2.
fn check_dims_v1(fam: Family, shape: &[i64], arg: &str) -> NnResult<()> {
    match fam {
        Family::A2A3A5 => dims_range(shape, 2, 3, arg, "shape"),
        _ => dims_range(shape, 2, 2, arg, "shape"),
    }
}

/// `aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray *tensorShape, uint64_t
/// *weightTensorSize)`: elements of a FLOAT16 weight of that shape in its private layout.
#[no_mangle]
pub unsafe extern "C" fn aclnnCalculateMatmulWeightSize(
    tensorShape: *const c_void,
    weightTensorSize: *mut u64,
) -> i32 {
    boundary("aclnnCalculateMatmulWeightSize", || {
        let shape = int_array(tensorShape, "tensorShape")?;
        non_null(weightTensorSize, "weightTensorSize")?;
        let (fam, _) = soc_family()?;
        check_dims_v1(fam, &shape, "tensorShape")?;
        out(
            weightTensorSize,
            "weightTensorSize",
            weight_elements(&shape, ACL_FLOAT16),
        )
    })
}

/// `aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray *tensorShape, aclDataType
/// dataType, uint64_t *weightTensorSize)`
#[no_mangle]
pub unsafe extern "C" fn aclnnCalculateMatmulWeightSizeV2(
    tensorShape: *const c_void,
    dataType: i32,
    weightTensorSize: *mut u64,
) -> i32 {
    boundary("aclnnCalculateMatmulWeightSizeV2", || {
        let (fam, soc) = soc_family()?;
        if fam == Family::Other {
            return Err(NnError::runtime(format!(
                "aclnnCalculateMatmulWeightSizeV2 is not implemented for {soc:?} (NPU_EMU_SOC); \
                 supported: Ascend310P, Ascend910B, Ascend910_93, Ascend950"
            )));
        }
        let shape = int_array(tensorShape, "tensorShape")?;
        non_null(weightTensorSize, "weightTensorSize")?;
        dims_range(&shape, 2, 6, "tensorShape", "shape")?;
        if shape.iter().any(|&d| d <= 0) {
            return Err(NnError::invalid(format!(
                "tensorShape {shape:?} has a zero or negative dimension"
            )));
        }
        out(
            weightTensorSize,
            "weightTensorSize",
            weight_elements(&shape, dataType),
        )
    })
}

fn build(fam: Family, h: *mut c_void) -> NnResult<Executor> {
    let t = tensor_of(h, "mmWeightRef")?;
    let allowed: &[i32] = match fam {
        Family::A2A3A5 => &[ACL_FLOAT16, ACL_BF16, ACL_INT8],
        Family::P310 => &[ACL_FLOAT16, ACL_INT8],
        Family::Other => &[ACL_FLOAT16],
    };
    if !allowed.contains(&t.dtype) {
        let names: Vec<String> = allowed.iter().map(|&d| dtype_name(d)).collect();
        return Err(NnError::invalid(format!(
            "mmWeightRef has data type {}, which is not supported; supported: {}",
            dtype_name(t.dtype),
            names.join(", ")
        )));
    }
    if t.storage_format != ND {
        return Err(NnError::invalid(format!(
            "the format of mmWeightRef should be ND, but it is {}",
            format_name(t.storage_format)
        )));
    }
    let shape = t.view_shape.clone();
    if shape.len() > 8 {
        return Err(NnError::invalid(format!(
            "mmWeightRef has {} dimensions; at most 8 are supported",
            shape.len()
        )));
    }
    if let Some(d) = shape.iter().find(|&&d| d <= 0) {
        let what = if *d == 0 {
            "an empty tensor, which is not supported"
        } else {
            "a negative dimension"
        };
        return Err(NnError::invalid(format!(
            "mmWeightRef view shape {shape:?} is {what}"
        )));
    }
    if t.dtype == ACL_INT8 {
        dims_range(&shape, 2, 6, "mmWeightRef", "view shape")?;
    } else {
        check_dims_v1(fam, &shape, "mmWeightRef")?;
    }
    if t.strides.len() != shape.len() || t.strides.iter().any(|&s| s < 0) {
        return Err(NnError::invalid(format!(
            "mmWeightRef strides {:?} do not fit its view shape {shape:?}",
            t.strides
        )));
    }
    let private =
        formats::storage_shape(ND, &shape, FRACTAL_NZ, t.dtype, 1, C0Rule::Ge).map_err(fe)?;
    let plan = formats::plan(&Request {
        src_format: ND,
        src_shape: &shape,
        dst_format: FRACTAL_NZ,
        dst_shape: Some(&private),
        dtype: t.dtype,
        groups: 1,
        rule: C0Rule::Ge,
    })
    .map_err(fe)?;
    let es = dtype_size(t.dtype).unwrap_or(1);
    let contiguous = shape
        .iter()
        .zip(t.strides.iter().zip(contiguous_strides(&shape)))
        .all(|(&d, (&s, w))| d == 1 || s == w);
    let view_bytes = plan.src_bytes();
    let extent = shape
        .iter()
        .zip(&t.strides)
        .map(|(&d, &s)| (d - 1) * s)
        .sum::<i64>() as usize
        + 1;
    let private_block = plan.dst_bytes().div_ceil(WS_ALIGN) * WS_ALIGN;
    let (gather, workspace) = if contiguous {
        (None, private_block)
    } else {
        (
            Some(Gather {
                shape: shape.clone(),
                strides: t.strides.clone(),
                esize: es,
            }),
            private_block + view_bytes.div_ceil(WS_ALIGN) * WS_ALIGN,
        )
    };
    // As CANN: the tensor now describes its private layout (the view stays ND).
    objects::tensor_mut(h as usize, "mmWeightRef", |w| {
        w.storage_shape = private.clone();
        w.storage_format = FRACTAL_NZ;
    })?;
    let io = Io {
        addr: t.addr,
        view_bytes: (t.offset * es as i64) as usize,
    };
    Ok(Executor {
        api: "aclnnTransMatmulWeight",
        op: Op::TransWeight {
            gather,
            read_bytes: extent * es,
            gather_offset: private_block,
        },
        plan: Some(Arc::new(plan)),
        inputs: vec![io],
        outputs: vec![io],
        workspace_size: workspace as u64,
        repeatable: false,
    })
}

/// `aclnnStatus aclnnTransMatmulWeightGetWorkspaceSize(aclTensor *mmWeightRef, uint64_t
/// *workspaceSize, aclOpExecutor **executor)`
#[no_mangle]
pub unsafe extern "C" fn aclnnTransMatmulWeightGetWorkspaceSize(
    mmWeightRef: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    boundary("aclnnTransMatmulWeightGetWorkspaceSize", || {
        non_null(mmWeightRef, "mmWeightRef")?;
        non_null(workspaceSize, "workspaceSize")?;
        non_null(executor, "executor")?;
        let (fam, _) = soc_family()?;
        let e = build(fam, mmWeightRef)?;
        let ws = e.workspace_size;
        let h = objects::insert(Object::Executor(e));
        out(workspaceSize, "workspaceSize", ws)?;
        out(executor, "executor", h as *mut c_void)
    })
}

/// `aclnnStatus aclnnTransMatmulWeight(void *workspace, uint64_t workspaceSize, aclOpExecutor
/// *executor, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclnnTransMatmulWeight(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    boundary("aclnnTransMatmulWeight", || {
        crate::run::execute(workspace, workspaceSize, executor, stream)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_sizes_align_the_last_two_dimensions() {
        // CANN sample: fp16 [32, 16] -> 512 elements (already aligned).
        assert_eq!(weight_elements(&[32, 16], ACL_FLOAT16), 512);
        assert_eq!(weight_elements(&[37, 45], ACL_FLOAT16), 48 * 48);
        assert_eq!(weight_elements(&[37, 45], ACL_BF16), 48 * 48);
        // INT8 (and every other type): the last dimension to 32.
        assert_eq!(weight_elements(&[2, 2, 40, 24], ACL_INT8), 2 * 2 * 48 * 32);
        assert_eq!(weight_elements(&[40, 24], 0), 48 * 32);
    }

    #[test]
    fn soc_families() {
        assert_eq!(family("Ascend910B1"), Family::A2A3A5);
        assert_eq!(family("Ascend910_9391"), Family::A2A3A5);
        assert_eq!(family("Ascend310P3"), Family::P310);
        assert_eq!(family("Ascend910A"), Family::Other);
    }
}
