//! `aclnn/acl_meta.h` (hand-written; abi.md §5.5 names only `aclCreateTensor`): creating,
//! inspecting and destroying the aclnn argument objects, and `aclnn/aclnn_base.h`
//! (`aclnnInit`, `aclnnFinalize`). Semantics follow CANN's nnopbase (`acl_op_api.cpp`):
//! creators return NULL on bad arguments, destroying NULL is a no-op that succeeds, getters
//! return `ACLNN_ERR_PARAM_NULLPTR` for a NULL argument, and the shape/stride getters
//! return arrays the caller frees with `delete[]`.

use crate::cxx::new_i64_array;
use crate::objects::{self, Object, Scalar, Tensor};
use crate::status::{boundary, boundary_value, non_null, out, NnError, NnResult, ACLNN_ERR_INNER};
use std::ffi::{c_char, c_void};

/// `gert::Shape`'s dimension limit (`kMaxDimNum`).
pub const MAX_DIMS: u64 = 25;

/// Element size in bytes of an aclDataType (None for sub-byte or unknown types).
pub fn dtype_size(dtype: i32) -> Option<usize> {
    npu_emu::formats::dtype_size(dtype)
}

/// Row-major strides of `shape`.
pub fn contiguous_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1);
    }
    s
}

/// `n` values from a C array (NULL with `n > 0` is an error naming `arg`).
fn read_array<T: Copy>(p: *const T, n: u64, arg: &str, limit: u64) -> NnResult<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(NnError::nullptr(format!(
            "{arg} is nullptr but its size is {n}"
        )));
    }
    if n > limit {
        return Err(NnError::invalid(format!(
            "{arg} has {n} elements; at most {limit} are supported"
        )));
    }
    // SAFETY: the caller passes n readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec())
}

fn handle<T>(h: *const T) -> usize {
    h as usize
}

#[allow(clippy::too_many_arguments)]
fn build_tensor(
    view_dims: *const i64,
    view_dims_num: u64,
    data_type: i32,
    stride: *const i64,
    offset: i64,
    format: i32,
    storage_dims: *const i64,
    storage_dims_num: u64,
    data: *mut c_void,
) -> NnResult<Tensor> {
    let view_shape = read_array(view_dims, view_dims_num, "viewDims", MAX_DIMS)?;
    let storage_shape = read_array(storage_dims, storage_dims_num, "storageDims", MAX_DIMS)?;
    let strides = if stride.is_null() {
        contiguous_strides(&view_shape)
    } else {
        read_array(stride, view_dims_num, "stride", MAX_DIMS)?
    };
    Ok(Tensor {
        view_shape,
        strides,
        offset,
        format,
        dtype: data_type,
        storage_shape,
        storage_format: format,
        addr: data as usize,
    })
}

/// `aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType
/// dataType, const int64_t *stride, int64_t offset, aclFormat format, const int64_t
/// *storageDims, uint64_t storageDimsNum, void *tensorData)`
#[no_mangle]
pub unsafe extern "C" fn aclCreateTensor(
    viewDims: *const i64,
    viewDimsNum: u64,
    dataType: i32,
    stride: *const i64,
    offset: i64,
    format: i32,
    storageDims: *const i64,
    storageDimsNum: u64,
    tensorData: *mut c_void,
) -> *mut c_void {
    boundary_value("aclCreateTensor", std::ptr::null_mut(), || {
        let t = build_tensor(
            viewDims,
            viewDimsNum,
            dataType,
            stride,
            offset,
            format,
            storageDims,
            storageDimsNum,
            tensorData,
        )?;
        Ok(objects::insert(Object::Tensor(t)) as *mut c_void)
    })
}

/// `aclnnStatus aclInitTensor(aclTensor *tensor, ...)`: re-initialise a tensor in place
/// (a NULL `viewDims`/`storageDims`/`tensorDataAddr` keeps the current value).
#[no_mangle]
pub unsafe extern "C" fn aclInitTensor(
    tensor: *mut c_void,
    viewDims: *const i64,
    viewDimsNum: u64,
    dataType: i32,
    stride: *const i64,
    offset: i64,
    format: i32,
    storageDims: *const i64,
    storageDimsNum: u64,
    tensorDataAddr: *mut c_void,
) -> i32 {
    boundary("aclInitTensor", || {
        non_null(tensor, "tensor")?;
        let view = if !viewDims.is_null() && viewDimsNum > 0 {
            Some(read_array(viewDims, viewDimsNum, "viewDims", MAX_DIMS)?)
        } else {
            None
        };
        let storage = if !storageDims.is_null() && storageDimsNum > 0 {
            Some(read_array(
                storageDims,
                storageDimsNum,
                "storageDims",
                MAX_DIMS,
            )?)
        } else {
            None
        };
        let strides = if stride.is_null() {
            None
        } else {
            Some(read_array(stride, viewDimsNum, "stride", MAX_DIMS)?)
        };
        objects::tensor_mut(handle(tensor), "tensor", |t| {
            if let Some(v) = view {
                t.view_shape = v;
            }
            t.strides = strides.unwrap_or_else(|| contiguous_strides(&t.view_shape));
            t.offset = offset;
            t.format = format;
            t.storage_format = format;
            t.dtype = dataType;
            if let Some(s) = storage {
                t.storage_shape = s;
            }
            if !tensorDataAddr.is_null() {
                t.addr = tensorDataAddr as usize;
            }
        })
    })
}

/// Destroy `h` if it is a live object of kind `kind` (NULL: nothing to do).
fn destroy(h: usize, kind: &'static str, arg: &str) -> NnResult<()> {
    if h == 0 {
        return Ok(());
    }
    objects::with(h, kind, arg, |_| Ok(()))?;
    match objects::remove(h) {
        Some(Object::TensorList(items)) | Some(Object::ScalarList(items)) => {
            for i in items {
                objects::remove(i);
            }
        }
        _ => {}
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyTensor(tensor: *const c_void) -> i32 {
    boundary("aclDestroyTensor", || {
        destroy(handle(tensor), "aclTensor", "tensor")
    })
}

/// `aclScalar *aclCreateScalar(void *value, aclDataType dataType)`: copies the value.
#[no_mangle]
pub unsafe extern "C" fn aclCreateScalar(value: *mut c_void, dataType: i32) -> *mut c_void {
    boundary_value("aclCreateScalar", std::ptr::null_mut(), || {
        non_null(value, "value")?;
        let size = dtype_size(dataType).ok_or_else(|| {
            NnError::invalid(format!("dataType {dataType} is not supported for a scalar"))
        })?;
        // SAFETY: value points at one element of dataType.
        let bytes = unsafe { std::slice::from_raw_parts(value as *const u8, size) }.to_vec();
        Ok(objects::insert(Object::Scalar(Scalar {
            dtype: dataType,
            bytes,
        })) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyScalar(scalar: *const c_void) -> i32 {
    boundary("aclDestroyScalar", || {
        destroy(handle(scalar), "aclScalar", "scalar")
    })
}

/// Arrays are limited to what fits comfortably in host memory.
const MAX_ARRAY: u64 = 1 << 28;

#[no_mangle]
pub unsafe extern "C" fn aclCreateIntArray(value: *const i64, size: u64) -> *mut c_void {
    boundary_value("aclCreateIntArray", std::ptr::null_mut(), || {
        let v = read_array(value, size, "value", MAX_ARRAY)?;
        Ok(objects::insert(Object::IntArray(v)) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclCreateFloatArray(value: *const f32, size: u64) -> *mut c_void {
    boundary_value("aclCreateFloatArray", std::ptr::null_mut(), || {
        let v = read_array(value, size, "value", MAX_ARRAY)?;
        Ok(objects::insert(Object::FloatArray(v)) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclCreateBoolArray(value: *const bool, size: u64) -> *mut c_void {
    boundary_value("aclCreateBoolArray", std::ptr::null_mut(), || {
        // Read as bytes: any nonzero byte is true (C++ bool is one byte).
        let v = read_array(value as *const u8, size, "value", MAX_ARRAY)?;
        Ok(
            objects::insert(Object::BoolArray(v.into_iter().map(|b| b != 0).collect()))
                as *mut c_void,
        )
    })
}

/// Handles of a C array of object pointers, each NULL or a live object of `kind`.
fn read_handles(p: *const *const c_void, size: u64, kind: &str) -> NnResult<Vec<usize>> {
    let v = read_array(p, size, "value", MAX_ARRAY)?;
    let mut out = Vec::with_capacity(v.len());
    for (i, h) in v.into_iter().enumerate() {
        let h = h as usize;
        if h != 0 && !objects::is_live(h, kind) {
            return Err(NnError::invalid(format!(
                "value[{i}] ({h:#x}) is not a live {kind}"
            )));
        }
        out.push(h);
    }
    Ok(out)
}

/// `aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)`: the
/// list owns the tensors (`aclDestroyTensorList` destroys them).
#[no_mangle]
pub unsafe extern "C" fn aclCreateTensorList(
    value: *const *const c_void,
    size: u64,
) -> *mut c_void {
    boundary_value("aclCreateTensorList", std::ptr::null_mut(), || {
        let v = read_handles(value, size, "aclTensor")?;
        Ok(objects::insert(Object::TensorList(v)) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclCreateScalarList(
    value: *const *const c_void,
    size: u64,
) -> *mut c_void {
    boundary_value("aclCreateScalarList", std::ptr::null_mut(), || {
        let v = read_handles(value, size, "aclScalar")?;
        Ok(objects::insert(Object::ScalarList(v)) as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyIntArray(array: *const c_void) -> i32 {
    boundary("aclDestroyIntArray", || {
        destroy(handle(array), "aclIntArray", "array")
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyFloatArray(array: *const c_void) -> i32 {
    boundary("aclDestroyFloatArray", || {
        destroy(handle(array), "aclFloatArray", "array")
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyBoolArray(array: *const c_void) -> i32 {
    boundary("aclDestroyBoolArray", || {
        destroy(handle(array), "aclBoolArray", "array")
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyTensorList(array: *const c_void) -> i32 {
    boundary("aclDestroyTensorList", || {
        destroy(handle(array), "aclTensorList", "array")
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclDestroyScalarList(array: *const c_void) -> i32 {
    boundary("aclDestroyScalarList", || {
        destroy(handle(array), "aclScalarList", "array")
    })
}

/// Hand `v` to the caller as a `new[]` array plus its length.
fn give_array(v: &[i64], dims: *mut *mut i64, num: *mut u64) -> NnResult<()> {
    let p = new_i64_array(v);
    if p.is_null() {
        return Err(NnError::new(
            ACLNN_ERR_INNER,
            format!("cannot allocate {} int64_t values", v.len()),
        ));
    }
    out(num, "size", v.len() as u64)?;
    out(dims, "array", p)
}

fn tensor_arg(tensor: *const c_void) -> NnResult<Tensor> {
    non_null(tensor, "tensor")?;
    objects::tensor(handle(tensor), "tensor")
}

#[no_mangle]
pub unsafe extern "C" fn aclGetViewShape(
    tensor: *const c_void,
    viewDims: *mut *mut i64,
    viewDimsNum: *mut u64,
) -> i32 {
    boundary("aclGetViewShape", || {
        non_null(viewDims, "viewDims")?;
        non_null(viewDimsNum, "viewDimsNum")?;
        let t = tensor_arg(tensor)?;
        give_array(&t.view_shape, viewDims, viewDimsNum)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetStorageShape(
    tensor: *const c_void,
    storageDims: *mut *mut i64,
    storageDimsNum: *mut u64,
) -> i32 {
    boundary("aclGetStorageShape", || {
        non_null(storageDims, "storageDims")?;
        non_null(storageDimsNum, "storageDimsNum")?;
        let t = tensor_arg(tensor)?;
        give_array(&t.storage_shape, storageDims, storageDimsNum)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetViewStrides(
    tensor: *const c_void,
    stridesValue: *mut *mut i64,
    stridesNum: *mut u64,
) -> i32 {
    boundary("aclGetViewStrides", || {
        non_null(stridesValue, "stridesValue")?;
        non_null(stridesNum, "stridesNum")?;
        let t = tensor_arg(tensor)?;
        give_array(&t.strides, stridesValue, stridesNum)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetViewOffset(tensor: *const c_void, offset: *mut i64) -> i32 {
    boundary("aclGetViewOffset", || {
        non_null(offset, "offset")?;
        let t = tensor_arg(tensor)?;
        out(offset, "offset", t.offset)
    })
}

/// The view format (CANN: `tensor->GetViewFormat()`).
#[no_mangle]
pub unsafe extern "C" fn aclGetFormat(tensor: *const c_void, format: *mut i32) -> i32 {
    boundary("aclGetFormat", || {
        non_null(format, "format")?;
        let t = tensor_arg(tensor)?;
        out(format, "format", t.format)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetDataType(tensor: *const c_void, dataType: *mut i32) -> i32 {
    boundary("aclGetDataType", || {
        non_null(dataType, "dataType")?;
        let t = tensor_arg(tensor)?;
        out(dataType, "dataType", t.dtype)
    })
}

/// The element count of a live array/list object.
fn size_of(h: *const c_void, kind: &'static str, size: *mut u64) -> NnResult<()> {
    non_null(h, "array")?;
    non_null(size, "size")?;
    let n = objects::with(handle(h), kind, "array", |o| {
        Ok(match o {
            Object::IntArray(v) => v.len(),
            Object::FloatArray(v) => v.len(),
            Object::BoolArray(v) => v.len(),
            Object::TensorList(v) | Object::ScalarList(v) => v.len(),
            _ => 0,
        })
    })?;
    out(size, "size", n as u64)
}

#[no_mangle]
pub unsafe extern "C" fn aclGetIntArraySize(array: *const c_void, size: *mut u64) -> i32 {
    boundary("aclGetIntArraySize", || size_of(array, "aclIntArray", size))
}

#[no_mangle]
pub unsafe extern "C" fn aclGetFloatArraySize(array: *const c_void, size: *mut u64) -> i32 {
    boundary("aclGetFloatArraySize", || {
        size_of(array, "aclFloatArray", size)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetBoolArraySize(array: *const c_void, size: *mut u64) -> i32 {
    boundary("aclGetBoolArraySize", || {
        size_of(array, "aclBoolArray", size)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetTensorListSize(tensorList: *const c_void, size: *mut u64) -> i32 {
    boundary("aclGetTensorListSize", || {
        size_of(tensorList, "aclTensorList", size)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetScalarListSize(scalarList: *const c_void, size: *mut u64) -> i32 {
    boundary("aclGetScalarListSize", || {
        size_of(scalarList, "aclScalarList", size)
    })
}

/// `aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)`: the storage address.
#[no_mangle]
pub unsafe extern "C" fn aclSetRawTensorAddr(tensor: *mut c_void, addr: *mut c_void) -> i32 {
    boundary("aclSetRawTensorAddr", || {
        non_null(tensor, "tensor")?;
        objects::tensor_mut(handle(tensor), "tensor", |t| t.addr = addr as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclGetRawTensorAddr(tensor: *const c_void, addr: *mut *mut c_void) -> i32 {
    boundary("aclGetRawTensorAddr", || {
        non_null(addr, "addr")?;
        let t = tensor_arg(tensor)?;
        out(addr, "addr", t.addr as *mut c_void)
    })
}

/// `aclnnStatus aclnnInit(const char *configPath)`: loads the runtime interface this library
/// works through (the aclnn resources); the debug configuration CANN reads from the JSON
/// file (`op_debug_config.enable_debug_kernel`) has no effect in the emulator.
#[no_mangle]
pub unsafe extern "C" fn aclnnInit(configPath: *const c_char) -> i32 {
    let _ = configPath;
    boundary("aclnnInit", || crate::rt::rt().map(|_| ()))
}

/// `aclnnStatus aclnnFinalize()`: nothing is held between calls.
#[no_mangle]
pub extern "C" fn aclnnFinalize() -> i32 {
    boundary("aclnnFinalize", || Ok(()))
}
