//! The offline-model API (`acl/acl_mdl.h`, the 83 functions CANN 8.1 declares there besides
//! `aclmdlRI*` and the dump switches).
//!
//! npu-emu has no graph engine, so an offline model (`.om`) cannot be loaded: every load
//! returns `ACL_ERROR_API_NOT_SUPPORT` (200001) with a message naming the file (or the
//! memory image) and saying so; a path that does not exist is
//! `ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID` (145002), as GE reports it. Every call that names a
//! model id therefore finds none: `ACL_ERROR_GE_EXEC_MODEL_ID_INVALID` (145003), and a bundle
//! id `ACL_ERROR_INVALID_BUNDLE_MODEL_ID` (148053).
//!
//! The data structures work as CANN's GE code documents them: datasets
//! (`aclmdlCreateDataset`, buffers, per-buffer tensor descriptions copied in), model
//! descriptions (empty until a model is loaded: 0 inputs and outputs), AIPP parameter sets
//! (every setter with GE's ranges and batch checks; `aclmdlGetAippDataSize` is 64 + 96 bytes
//! per batch, the size of GE's dynamic-AIPP block), load and execute config handles (GE's
//! per-attribute value sizes and ranges; `aclmdlLoadWithConfig` checks the handle is
//! complete before refusing to load). Handles are entries of handle tables, so a destroyed or
//! foreign pointer is an error with a message instead of a crash.

use crate::api::helpers::{with_live, DataBuffer};
use crate::api::tensor_desc::{register, snapshot, TensorDesc};
use crate::ffi::{boundary, boundary_value};
use crate::globals::{MDL_AIPPS, MDL_DATASETS, MDL_DESCS, MDL_EXEC_CONFIGS, MDL_LOAD_CONFIGS};
use npu_emu::codes::{ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_INVALID_PARAM};
use npu_emu::Error;
use npu_emu_ffi::handles::{HandleKind, HandleTable};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::ffi::{c_char, c_void, CStr};

/// `ACL_ERROR_GE_PARAM_INVALID` (GE has no record of the thing asked about).
pub const ACL_ERROR_GE_PARAM_INVALID: i32 = 145000;
/// `ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID`.
pub const ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID: i32 = 145002;
/// `ACL_ERROR_GE_EXEC_MODEL_ID_INVALID`.
pub const ACL_ERROR_GE_EXEC_MODEL_ID_INVALID: i32 = 145003;
/// `ACL_ERROR_INVALID_BUNDLE_MODEL_ID`.
pub const ACL_ERROR_INVALID_BUNDLE_MODEL_ID: i32 = 148053;

/// Run `f` on the live object `p` of `table`; NULL or dead handles are
/// `ACL_ERROR_INVALID_PARAM` naming `arg`. The table stays locked during `f`.
fn with<T, R>(
    table: &Mutex<HandleTable<T>>,
    p: *const T,
    arg: &str,
    f: impl FnOnce(&mut T) -> Result<R, Error>,
) -> Result<R, Error> {
    let mut t = table.lock();
    f(t.get_mut(p as u64, arg)?)
}

/// Keep `v` in `table`; its handle.
fn add<T>(table: &Mutex<HandleTable<T>>, v: T) -> *mut T {
    table.lock().insert(v) as *mut T
}

/// Remove and give back the object behind `p` (NULL or dead: `ACL_ERROR_INVALID_PARAM`).
fn remove<T>(table: &Mutex<HandleTable<T>>, p: *const T, arg: &str) -> Result<T, Error> {
    Ok(table.lock().remove(p as u64, arg)?)
}

/// A C string argument (NULL → `ACL_ERROR_INVALID_PARAM` naming `arg`).
fn text(p: *const c_char, arg: &str) -> Result<String, Error> {
    if p.is_null() {
        return Err(Error::invalid(format!("argument {arg} is NULL")));
    }
    // SAFETY: a NUL-terminated string from the caller (ACL contract), checked non-NULL.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn out<T>(p: *mut T, arg: &str, v: T) -> Result<(), Error> {
    crate::ffi::out(p, arg, v)
}

// ---------------------------------------------------------------------------------------
// Loading: refused with the reason.

const NO_GE: &str = "npu-emu has no graph engine to run offline (.om) models: build the computation from aclnn operators or Ascend C kernels on a stream, or capture a stream into a model run instance (aclmdlRICaptureBegin)";

/// The error for loading the model file `path`: missing file, or not supported.
fn refuse_file(path: &str) -> Error {
    match std::fs::metadata(path) {
        Err(e) => Error::new(
            ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
            format!("model file {path} cannot be read: {e}"),
        ),
        Ok(m) if m.is_dir() => Error::new(
            ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
            format!("model file {path} is a directory"),
        ),
        Ok(m) => Error::new(
            ACL_ERROR_API_NOT_SUPPORT,
            format!(
                "loading the offline model {path} ({} bytes) is not supported by npu-emu: {NO_GE}",
                m.len()
            ),
        ),
    }
}

fn refuse_mem(model: *const c_void, size: usize) -> Error {
    if model.is_null() {
        return Error::invalid("argument model is NULL");
    }
    if size == 0 {
        return Error::invalid("modelSize = 0 is invalid: expected the size of the model image");
    }
    Error::new(
        ACL_ERROR_API_NOT_SUPPORT,
        format!(
            "loading an offline model from memory ({model:p}, {size} bytes) is not supported by npu-emu: {NO_GE}"
        ),
    )
}

fn no_model(id: u32) -> Error {
    Error::new(
        ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
        format!(
            "model id {id} is not a loaded model: npu-emu cannot load offline models (aclmdlLoadFromFile returns an error naming the file)"
        ),
    )
}

fn file_load(path: *const c_char, id: *mut u32) -> Result<(), Error> {
    let p = text(path, "modelPath")?;
    crate::ffi::non_null(id, "modelId")?;
    Err(refuse_file(&p))
}

fn mem_load(model: *const c_void, size: usize, id: *mut u32) -> Result<(), Error> {
    crate::ffi::non_null(id, "modelId")?;
    Err(refuse_mem(model, size))
}

/// `aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId)`
#[no_mangle]
pub extern "C" fn aclmdlLoadFromFile(modelPath: *const c_char, modelId: *mut u32) -> i32 {
    boundary("aclmdlLoadFromFile", || file_load(modelPath, modelId))
}

/// `aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId)`
#[no_mangle]
pub extern "C" fn aclmdlLoadFromMem(
    model: *const c_void,
    modelSize: usize,
    modelId: *mut u32,
) -> i32 {
    boundary("aclmdlLoadFromMem", || mem_load(model, modelSize, modelId))
}

/// `aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId, void
/// *workPtr, size_t workSize, void *weightPtr, size_t weightSize)`
#[no_mangle]
pub extern "C" fn aclmdlLoadFromFileWithMem(
    modelPath: *const c_char,
    modelId: *mut u32,
    _workPtr: *mut c_void,
    _workSize: usize,
    _weightPtr: *mut c_void,
    _weightSize: usize,
) -> i32 {
    boundary("aclmdlLoadFromFileWithMem", || {
        file_load(modelPath, modelId)
    })
}

/// `aclError aclmdlLoadFromMemWithMem(const void *model, size_t modelSize, uint32_t *modelId,
/// void *workPtr, size_t workSize, void *weightPtr, size_t weightSize)`
#[no_mangle]
pub extern "C" fn aclmdlLoadFromMemWithMem(
    model: *const c_void,
    modelSize: usize,
    modelId: *mut u32,
    _workPtr: *mut c_void,
    _workSize: usize,
    _weightPtr: *mut c_void,
    _weightSize: usize,
) -> i32 {
    boundary("aclmdlLoadFromMemWithMem", || {
        mem_load(model, modelSize, modelId)
    })
}

/// `aclError aclmdlLoadFromFileWithQ(const char *modelPath, uint32_t *modelId, const uint32_t
/// *inputQ, size_t inputQNum, const uint32_t *outputQ, size_t outputQNum)`
#[no_mangle]
pub extern "C" fn aclmdlLoadFromFileWithQ(
    modelPath: *const c_char,
    modelId: *mut u32,
    inputQ: *const u32,
    _inputQNum: usize,
    outputQ: *const u32,
    _outputQNum: usize,
) -> i32 {
    boundary("aclmdlLoadFromFileWithQ", || {
        crate::ffi::non_null(inputQ, "inputQ")?;
        crate::ffi::non_null(outputQ, "outputQ")?;
        file_load(modelPath, modelId)
    })
}

/// `aclError aclmdlLoadFromMemWithQ(const void *model, size_t modelSize, uint32_t *modelId,
/// const uint32_t *inputQ, size_t inputQNum, const uint32_t *outputQ, size_t outputQNum)`
#[no_mangle]
pub extern "C" fn aclmdlLoadFromMemWithQ(
    model: *const c_void,
    modelSize: usize,
    modelId: *mut u32,
    inputQ: *const u32,
    _inputQNum: usize,
    outputQ: *const u32,
    _outputQNum: usize,
) -> i32 {
    boundary("aclmdlLoadFromMemWithQ", || {
        crate::ffi::non_null(inputQ, "inputQ")?;
        crate::ffi::non_null(outputQ, "outputQ")?;
        mem_load(model, modelSize, modelId)
    })
}

/// `aclError aclmdlBundleLoadFromFile(const char *modelPath, uint32_t *bundleId)`
#[no_mangle]
pub extern "C" fn aclmdlBundleLoadFromFile(modelPath: *const c_char, bundleId: *mut u32) -> i32 {
    boundary("aclmdlBundleLoadFromFile", || {
        let p = text(modelPath, "modelPath")?;
        crate::ffi::non_null(bundleId, "bundleId")?;
        Err(refuse_file(&p))
    })
}

/// `aclError aclmdlBundleLoadFromMem(const void *model, size_t modelSize, uint32_t *bundleId)`
#[no_mangle]
pub extern "C" fn aclmdlBundleLoadFromMem(
    model: *const c_void,
    modelSize: usize,
    bundleId: *mut u32,
) -> i32 {
    boundary("aclmdlBundleLoadFromMem", || {
        crate::ffi::non_null(bundleId, "bundleId")?;
        Err(refuse_mem(model, modelSize))
    })
}

fn no_bundle(id: u32) -> Error {
    Error::new(
        ACL_ERROR_INVALID_BUNDLE_MODEL_ID,
        format!("bundle id {id} is not a loaded bundle: npu-emu cannot load offline models"),
    )
}

/// `aclError aclmdlBundleUnload(uint32_t bundleId)`
#[no_mangle]
pub extern "C" fn aclmdlBundleUnload(bundleId: u32) -> i32 {
    boundary("aclmdlBundleUnload", || Err(no_bundle(bundleId)))
}

/// `aclError aclmdlBundleGetModelNum(uint32_t bundleId, size_t *modelNum)`
#[no_mangle]
pub extern "C" fn aclmdlBundleGetModelNum(bundleId: u32, modelNum: *mut usize) -> i32 {
    boundary("aclmdlBundleGetModelNum", || {
        crate::ffi::non_null(modelNum, "modelNum")?;
        Err(no_bundle(bundleId))
    })
}

/// `aclError aclmdlBundleGetModelId(uint32_t bundleId, size_t index, uint32_t *modelId)`
#[no_mangle]
pub extern "C" fn aclmdlBundleGetModelId(bundleId: u32, _index: usize, modelId: *mut u32) -> i32 {
    boundary("aclmdlBundleGetModelId", || {
        crate::ffi::non_null(modelId, "modelId")?;
        Err(no_bundle(bundleId))
    })
}

/// `aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize)`
#[no_mangle]
pub extern "C" fn aclmdlQuerySize(
    fileName: *const c_char,
    workSize: *mut usize,
    weightSize: *mut usize,
) -> i32 {
    boundary("aclmdlQuerySize", || {
        let p = text(fileName, "fileName")?;
        crate::ffi::non_null(workSize, "workSize")?;
        crate::ffi::non_null(weightSize, "weightSize")?;
        Err(refuse_file(&p))
    })
}

/// `aclError aclmdlQueryExeOMDesc(const char *fileName, aclmdlExeOMDesc *mdlPartitionSize)`
#[no_mangle]
pub extern "C" fn aclmdlQueryExeOMDesc(
    fileName: *const c_char,
    mdlPartitionSize: *mut c_void,
) -> i32 {
    boundary("aclmdlQueryExeOMDesc", || {
        let p = text(fileName, "fileName")?;
        crate::ffi::non_null(mdlPartitionSize, "mdlPartitionSize")?;
        Err(refuse_file(&p))
    })
}

/// `aclError aclmdlQuerySizeFromMem(const void *model, size_t modelSize, size_t *workSize,
/// size_t *weightSize)`
#[no_mangle]
pub extern "C" fn aclmdlQuerySizeFromMem(
    model: *const c_void,
    modelSize: usize,
    workSize: *mut usize,
    weightSize: *mut usize,
) -> i32 {
    boundary("aclmdlQuerySizeFromMem", || {
        crate::ffi::non_null(workSize, "workSize")?;
        crate::ffi::non_null(weightSize, "weightSize")?;
        Err(refuse_mem(model, modelSize))
    })
}

/// `aclError aclmdlUnload(uint32_t modelId)`
#[no_mangle]
pub extern "C" fn aclmdlUnload(modelId: u32) -> i32 {
    boundary("aclmdlUnload", || Err(no_model(modelId)))
}

fn exec(model: u32, input: *const Dataset, output: *const Dataset) -> Result<(), Error> {
    with(&MDL_DATASETS, input, "input", |_| Ok(()))?;
    with(&MDL_DATASETS, output, "output", |_| Ok(()))?;
    Err(no_model(model))
}

/// `aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output)`
#[no_mangle]
pub extern "C" fn aclmdlExecute(modelId: u32, input: *const Dataset, output: *mut Dataset) -> i32 {
    boundary("aclmdlExecute", || exec(modelId, input, output))
}

/// `aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset
/// *output, aclrtStream stream)`
#[no_mangle]
pub extern "C" fn aclmdlExecuteAsync(
    modelId: u32,
    input: *const Dataset,
    output: *mut Dataset,
    _stream: *mut c_void,
) -> i32 {
    boundary("aclmdlExecuteAsync", || exec(modelId, input, output))
}

/// `aclError aclmdlExecuteV2(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset
/// *output, aclrtStream stream, const aclmdlExecConfigHandle *handle)`
#[no_mangle]
pub extern "C" fn aclmdlExecuteV2(
    modelId: u32,
    input: *const Dataset,
    output: *mut Dataset,
    _stream: *mut c_void,
    handle: *const ExecConfig,
) -> i32 {
    boundary("aclmdlExecuteV2", || {
        with(&MDL_EXEC_CONFIGS, handle, "handle", |_| Ok(()))?;
        exec(modelId, input, output)
    })
}

/// `aclError aclmdlExecuteAsyncV2(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset
/// *output, aclrtStream stream, const aclmdlExecConfigHandle *handle)`
#[no_mangle]
pub extern "C" fn aclmdlExecuteAsyncV2(
    modelId: u32,
    input: *const Dataset,
    output: *mut Dataset,
    _stream: *mut c_void,
    handle: *const ExecConfig,
) -> i32 {
    boundary("aclmdlExecuteAsyncV2", || {
        with(&MDL_EXEC_CONFIGS, handle, "handle", |_| Ok(()))?;
        exec(modelId, input, output)
    })
}

/// `aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
/// uint64_t batchSize)`
#[no_mangle]
pub extern "C" fn aclmdlSetDynamicBatchSize(
    modelId: u32,
    dataset: *mut Dataset,
    _index: usize,
    _batchSize: u64,
) -> i32 {
    boundary("aclmdlSetDynamicBatchSize", || {
        with(&MDL_DATASETS, dataset, "dataset", |_| Ok(()))?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
/// uint64_t height, uint64_t width)`
#[no_mangle]
pub extern "C" fn aclmdlSetDynamicHWSize(
    modelId: u32,
    dataset: *mut Dataset,
    _index: usize,
    _height: u64,
    _width: u64,
) -> i32 {
    boundary("aclmdlSetDynamicHWSize", || {
        with(&MDL_DATASETS, dataset, "dataset", |_| Ok(()))?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
/// const aclmdlIODims *dims)`
#[no_mangle]
pub extern "C" fn aclmdlSetInputDynamicDims(
    modelId: u32,
    dataset: *mut Dataset,
    _index: usize,
    dims: *const IoDims,
) -> i32 {
    boundary("aclmdlSetInputDynamicDims", || {
        with(&MDL_DATASETS, dataset, "dataset", |_| Ok(()))?;
        crate::ffi::non_null(dims, "dims")?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset *dataset, size_t index, const
/// aclmdlAIPP *aippParmsSet)`
#[no_mangle]
pub extern "C" fn aclmdlSetInputAIPP(
    modelId: u32,
    dataset: *mut Dataset,
    _index: usize,
    aippParmsSet: *const Aipp,
) -> i32 {
    boundary("aclmdlSetInputAIPP", || {
        with(&MDL_DATASETS, dataset, "dataset", |_| Ok(()))?;
        with(&MDL_AIPPS, aippParmsSet, "aippParmsSet", |_| Ok(()))?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlSetAIPPByInputIndex(uint32_t modelId, aclmdlDataset *dataset, size_t index,
/// const aclmdlAIPP *aippParmsSet)`
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPByInputIndex(
    modelId: u32,
    dataset: *mut Dataset,
    _index: usize,
    aippParmsSet: *const Aipp,
) -> i32 {
    boundary("aclmdlSetAIPPByInputIndex", || {
        with(&MDL_DATASETS, dataset, "dataset", |_| Ok(()))?;
        with(&MDL_AIPPS, aippParmsSet, "aippParmsSet", |_| Ok(()))?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlGetAippType(uint32_t modelId, size_t index, aclmdlInputAippType *type,
/// size_t *dynamicAttachedDataIndex)`
#[no_mangle]
pub extern "C" fn aclmdlGetAippType(
    modelId: u32,
    _index: usize,
    type_: *mut i32,
    dynamicAttachedDataIndex: *mut usize,
) -> i32 {
    boundary("aclmdlGetAippType", || {
        crate::ffi::non_null(type_, "type")?;
        crate::ffi::non_null(dynamicAttachedDataIndex, "dynamicAttachedDataIndex")?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlGetFirstAippInfo(uint32_t modelId, size_t index, aclAippInfo *aippInfo)`
#[no_mangle]
pub extern "C" fn aclmdlGetFirstAippInfo(
    modelId: u32,
    _index: usize,
    aippInfo: *mut c_void,
) -> i32 {
    boundary("aclmdlGetFirstAippInfo", || {
        crate::ffi::non_null(aippInfo, "aippInfo")?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlCreateAndGetOpDesc(uint32_t deviceId, uint32_t streamId, uint32_t taskId,
/// char *opName, size_t opNameLen, aclTensorDesc **inputDesc, size_t *numInputs,
/// aclTensorDesc **outputDesc, size_t *numOutputs)`: operator information of a failed task
/// of a loaded model; npu-emu runs no offline models, so there is none.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn aclmdlCreateAndGetOpDesc(
    deviceId: u32,
    streamId: u32,
    taskId: u32,
    opName: *mut c_char,
    _opNameLen: usize,
    inputDesc: *mut *mut TensorDesc,
    numInputs: *mut usize,
    outputDesc: *mut *mut TensorDesc,
    numOutputs: *mut usize,
) -> i32 {
    boundary("aclmdlCreateAndGetOpDesc", || {
        crate::ffi::non_null(opName, "opName")?;
        crate::ffi::non_null(inputDesc, "inputDesc")?;
        crate::ffi::non_null(outputDesc, "outputDesc")?;
        crate::ffi::non_null(numInputs, "numInputs")?;
        crate::ffi::non_null(numOutputs, "numOutputs")?;
        Err(Error::new(
            ACL_ERROR_GE_PARAM_INVALID,
            format!(
                "no operator description for task {taskId} of stream {streamId} on device {deviceId}: operator descriptions exist only for tasks of loaded offline models, which npu-emu cannot run"
            ),
        ))
    })
}

// ---------------------------------------------------------------------------------------
// Model descriptions.

/// The object behind an `aclmdlDesc *`: the description of no model (until a model could be
/// loaded, it describes nothing).
pub struct ModelDesc {
    _private: (),
}

/// What an `aclmdlDesc *` is: a handle of [`MDL_DESCS`].
pub static MODEL_DESC: HandleKind = HandleKind::new(*b"Md", "aclmdlDesc", "aclmdlCreateDesc");

/// `aclmdlDesc *aclmdlCreateDesc()`
#[no_mangle]
pub extern "C" fn aclmdlCreateDesc() -> *mut ModelDesc {
    boundary_value("aclmdlCreateDesc", std::ptr::null_mut(), || {
        Ok(add(&MDL_DESCS, ModelDesc { _private: () }))
    })
}

/// `aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc)`
#[no_mangle]
pub extern "C" fn aclmdlDestroyDesc(modelDesc: *mut ModelDesc) -> i32 {
    boundary("aclmdlDestroyDesc", || {
        remove(&MDL_DESCS, modelDesc, "modelDesc").map(drop)
    })
}

/// `aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId)`
#[no_mangle]
pub extern "C" fn aclmdlGetDesc(modelDesc: *mut ModelDesc, modelId: u32) -> i32 {
    boundary("aclmdlGetDesc", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        Err(no_model(modelId))
    })
}

/// `aclError aclmdlGetDescFromFile(aclmdlDesc *modelDesc, const char *modelPath)`
#[no_mangle]
pub extern "C" fn aclmdlGetDescFromFile(
    modelDesc: *mut ModelDesc,
    modelPath: *const c_char,
) -> i32 {
    boundary("aclmdlGetDescFromFile", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        let p = text(modelPath, "modelPath")?;
        Err(refuse_file(&p))
    })
}

/// `aclError aclmdlGetDescFromMem(aclmdlDesc *modelDesc, const void *model, size_t modelSize)`
#[no_mangle]
pub extern "C" fn aclmdlGetDescFromMem(
    modelDesc: *mut ModelDesc,
    model: *const c_void,
    modelSize: usize,
) -> i32 {
    boundary("aclmdlGetDescFromMem", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        Err(refuse_mem(model, modelSize))
    })
}

/// The description's check for a count getter: 0 with a message for a bad handle.
fn desc_count(name: &'static str, d: *const ModelDesc) -> usize {
    boundary_value(name, 0, || with(&MDL_DESCS, d, "modelDesc", |_| Ok(0)))
}

/// Index `index` into a description with no inputs or outputs: always out of range.
fn no_io(d: *const ModelDesc, index: usize, what: &str) -> Result<(), Error> {
    with(&MDL_DESCS, d, "modelDesc", |_| Ok(()))?;
    Err(Error::invalid(format!(
        "index = {index} is out of range: the model description has 0 {what}s (no model is loaded into it)"
    )))
}

/// `size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc)`
#[no_mangle]
pub extern "C" fn aclmdlGetNumInputs(modelDesc: *mut ModelDesc) -> usize {
    desc_count("aclmdlGetNumInputs", modelDesc)
}

/// `size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc)`
#[no_mangle]
pub extern "C" fn aclmdlGetNumOutputs(modelDesc: *mut ModelDesc) -> usize {
    desc_count("aclmdlGetNumOutputs", modelDesc)
}

/// `size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index)`
#[no_mangle]
pub extern "C" fn aclmdlGetInputSizeByIndex(modelDesc: *mut ModelDesc, index: usize) -> usize {
    boundary_value("aclmdlGetInputSizeByIndex", 0, || {
        no_io(modelDesc, index, "input").map(|_| 0)
    })
}

/// `size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index)`
#[no_mangle]
pub extern "C" fn aclmdlGetOutputSizeByIndex(modelDesc: *mut ModelDesc, index: usize) -> usize {
    boundary_value("aclmdlGetOutputSizeByIndex", 0, || {
        no_io(modelDesc, index, "output").map(|_| 0)
    })
}

/// `aclmdlIODims` (1160 bytes).
#[repr(C)]
pub struct IoDims {
    pub name: [c_char; 128],
    pub dim_count: usize,
    pub dims: [i64; 128],
}

/// `aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)`
#[no_mangle]
pub extern "C" fn aclmdlGetInputDims(
    modelDesc: *const ModelDesc,
    index: usize,
    dims: *mut IoDims,
) -> i32 {
    boundary("aclmdlGetInputDims", || {
        crate::ffi::non_null(dims, "dims")?;
        no_io(modelDesc, index, "input")
    })
}

/// `aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)`
#[no_mangle]
pub extern "C" fn aclmdlGetInputDimsV2(
    modelDesc: *const ModelDesc,
    index: usize,
    dims: *mut IoDims,
) -> i32 {
    boundary("aclmdlGetInputDimsV2", || {
        crate::ffi::non_null(dims, "dims")?;
        no_io(modelDesc, index, "input")
    })
}

/// `aclError aclmdlGetInputDimsRange(const aclmdlDesc *modelDesc, size_t index, aclmdlIODimsRange *dims)`
#[no_mangle]
pub extern "C" fn aclmdlGetInputDimsRange(
    modelDesc: *const ModelDesc,
    index: usize,
    dims: *mut c_void,
) -> i32 {
    boundary("aclmdlGetInputDimsRange", || {
        crate::ffi::non_null(dims, "dims")?;
        no_io(modelDesc, index, "input")
    })
}

/// `aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)`
#[no_mangle]
pub extern "C" fn aclmdlGetOutputDims(
    modelDesc: *const ModelDesc,
    index: usize,
    dims: *mut IoDims,
) -> i32 {
    boundary("aclmdlGetOutputDims", || {
        crate::ffi::non_null(dims, "dims")?;
        no_io(modelDesc, index, "output")
    })
}

/// `aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims)`
#[no_mangle]
pub extern "C" fn aclmdlGetCurOutputDims(
    modelDesc: *const ModelDesc,
    index: usize,
    dims: *mut IoDims,
) -> i32 {
    boundary("aclmdlGetCurOutputDims", || {
        crate::ffi::non_null(dims, "dims")?;
        no_io(modelDesc, index, "output")
    })
}

/// `const char *aclmdlGetOpAttr(aclmdlDesc *modelDesc, const char *opName, const char *attr)`
#[no_mangle]
pub extern "C" fn aclmdlGetOpAttr(
    modelDesc: *mut ModelDesc,
    opName: *const c_char,
    attr: *const c_char,
) -> *const c_char {
    boundary_value("aclmdlGetOpAttr", std::ptr::null(), || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        let op = text(opName, "opName")?;
        let a = text(attr, "attr")?;
        Err(Error::invalid(format!(
            "the model description has no operator {op:?} (attribute {a:?}): no model is loaded into it"
        )))
    })
}

/// `const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index)`
#[no_mangle]
pub extern "C" fn aclmdlGetInputNameByIndex(
    modelDesc: *const ModelDesc,
    index: usize,
) -> *const c_char {
    boundary_value("aclmdlGetInputNameByIndex", std::ptr::null(), || {
        no_io(modelDesc, index, "input").map(|_| std::ptr::null())
    })
}

/// `const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index)`
#[no_mangle]
pub extern "C" fn aclmdlGetOutputNameByIndex(
    modelDesc: *const ModelDesc,
    index: usize,
) -> *const c_char {
    boundary_value("aclmdlGetOutputNameByIndex", std::ptr::null(), || {
        no_io(modelDesc, index, "output").map(|_| std::ptr::null())
    })
}

/// `aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index)`:
/// `ACL_FORMAT_UNDEFINED` for an index out of range.
#[no_mangle]
pub extern "C" fn aclmdlGetInputFormat(modelDesc: *const ModelDesc, index: usize) -> i32 {
    boundary_value("aclmdlGetInputFormat", -1, || {
        no_io(modelDesc, index, "input").map(|_| -1)
    })
}

/// `aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index)`
#[no_mangle]
pub extern "C" fn aclmdlGetOutputFormat(modelDesc: *const ModelDesc, index: usize) -> i32 {
    boundary_value("aclmdlGetOutputFormat", -1, || {
        no_io(modelDesc, index, "output").map(|_| -1)
    })
}

/// `aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index)`:
/// `ACL_DT_UNDEFINED` for an index out of range.
#[no_mangle]
pub extern "C" fn aclmdlGetInputDataType(modelDesc: *const ModelDesc, index: usize) -> i32 {
    boundary_value("aclmdlGetInputDataType", -1, || {
        no_io(modelDesc, index, "input").map(|_| -1)
    })
}

/// `aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index)`
#[no_mangle]
pub extern "C" fn aclmdlGetOutputDataType(modelDesc: *const ModelDesc, index: usize) -> i32 {
    boundary_value("aclmdlGetOutputDataType", -1, || {
        no_io(modelDesc, index, "output").map(|_| -1)
    })
}

fn index_by_name(
    d: *const ModelDesc,
    name: *const c_char,
    index: *mut usize,
    what: &str,
) -> Result<(), Error> {
    with(&MDL_DESCS, d, "modelDesc", |_| Ok(()))?;
    let n = text(name, "name")?;
    crate::ffi::non_null(index, "index")?;
    Err(Error::invalid(format!(
        "the model description has no {what} named {n:?} (no model is loaded into it)"
    )))
}

/// `aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t
/// *index)`
#[no_mangle]
pub extern "C" fn aclmdlGetInputIndexByName(
    modelDesc: *const ModelDesc,
    name: *const c_char,
    index: *mut usize,
) -> i32 {
    boundary("aclmdlGetInputIndexByName", || {
        index_by_name(modelDesc, name, index, "input")
    })
}

/// `aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t
/// *index)`
#[no_mangle]
pub extern "C" fn aclmdlGetOutputIndexByName(
    modelDesc: *const ModelDesc,
    name: *const c_char,
    index: *mut usize,
) -> i32 {
    boundary("aclmdlGetOutputIndexByName", || {
        index_by_name(modelDesc, name, index, "output")
    })
}

/// `aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch)`: a model
/// without dynamic batch reports `batchCount` 0, as GE does.
#[no_mangle]
pub extern "C" fn aclmdlGetDynamicBatch(modelDesc: *const ModelDesc, batch: *mut usize) -> i32 {
    boundary("aclmdlGetDynamicBatch", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        // batchCount is the first field of aclmdlBatch.
        out(batch, "batch", 0usize)
    })
}

/// `aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw)`:
/// `hwCount` 0 (no dynamic height/width).
#[no_mangle]
pub extern "C" fn aclmdlGetDynamicHW(
    modelDesc: *const ModelDesc,
    _index: usize,
    hw: *mut usize,
) -> i32 {
    boundary("aclmdlGetDynamicHW", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        out(hw, "hw", 0usize)
    })
}

/// `aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index, size_t
/// *gearCount)`: 0 (no dynamic dims).
#[no_mangle]
pub extern "C" fn aclmdlGetInputDynamicGearCount(
    modelDesc: *const ModelDesc,
    _index: usize,
    gearCount: *mut usize,
) -> i32 {
    boundary("aclmdlGetInputDynamicGearCount", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        out(gearCount, "gearCount", 0usize)
    })
}

/// `aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims
/// *dims, size_t gearCount)`: no gears, nothing written.
#[no_mangle]
pub extern "C" fn aclmdlGetInputDynamicDims(
    modelDesc: *const ModelDesc,
    _index: usize,
    dims: *mut IoDims,
    gearCount: usize,
) -> i32 {
    boundary("aclmdlGetInputDynamicDims", || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        crate::ffi::non_null(dims, "dims")?;
        if gearCount != 0 {
            return Err(Error::invalid(format!(
                "gearCount = {gearCount} does not match the model's 0 dynamic gears (aclmdlGetInputDynamicGearCount)"
            )));
        }
        Ok(())
    })
}

/// `const char *aclmdlGetTensorRealName(const aclmdlDesc *modelDesc, const char *name)`
#[no_mangle]
pub extern "C" fn aclmdlGetTensorRealName(
    modelDesc: *const ModelDesc,
    name: *const c_char,
) -> *const c_char {
    boundary_value("aclmdlGetTensorRealName", std::ptr::null(), || {
        with(&MDL_DESCS, modelDesc, "modelDesc", |_| Ok(()))?;
        let n = text(name, "name")?;
        Err(Error::invalid(format!(
            "the model description has no tensor named {n:?} (no model is loaded into it)"
        )))
    })
}

// ---------------------------------------------------------------------------------------
// Datasets.

/// One buffer of a dataset with its optional tensor description (a copy the dataset owns,
/// registered so the description getters accept it).
struct Blob {
    buf: *mut DataBuffer,
    desc: Option<*mut TensorDesc>,
}

/// The object behind an `aclmdlDataset *`.
pub struct Dataset {
    blobs: Vec<Blob>,
}

// SAFETY: the raw pointers are handles only (checked against their tables before use).
unsafe impl Send for Dataset {}

/// What an `aclmdlDataset *` is: a handle of [`MDL_DATASETS`].
pub static MODEL_DATASET: HandleKind =
    HandleKind::new(*b"Ms", "aclmdlDataset", "aclmdlCreateDataset");

/// `aclmdlDataset *aclmdlCreateDataset()`
#[no_mangle]
pub extern "C" fn aclmdlCreateDataset() -> *mut Dataset {
    boundary_value("aclmdlCreateDataset", std::ptr::null_mut(), || {
        Ok(add(&MDL_DATASETS, Dataset { blobs: Vec::new() }))
    })
}

/// `aclError aclmdlDestroyDataset(const aclmdlDataset *dataset)`: frees the dataset and the
/// tensor descriptions it copied, not the data buffers (which the program destroys).
#[no_mangle]
pub extern "C" fn aclmdlDestroyDataset(dataset: *const Dataset) -> i32 {
    boundary("aclmdlDestroyDataset", || {
        let d = remove(&MDL_DATASETS, dataset, "dataset")?;
        for b in d.blobs {
            if let Some(t) = b.desc {
                crate::api::tensor_desc::aclDestroyTensorDesc(t);
            }
        }
        Ok(())
    })
}

/// `aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer)`
#[no_mangle]
pub extern "C" fn aclmdlAddDatasetBuffer(
    dataset: *mut Dataset,
    dataBuffer: *mut DataBuffer,
) -> i32 {
    boundary("aclmdlAddDatasetBuffer", || {
        with_live(dataBuffer, |_| ())?;
        with(&MDL_DATASETS, dataset, "dataset", |d| {
            d.blobs.push(Blob {
                buf: dataBuffer,
                desc: None,
            });
            Ok(())
        })
    })
}

/// `size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset)`: 0 for NULL.
#[no_mangle]
pub extern "C" fn aclmdlGetDatasetNumBuffers(dataset: *const Dataset) -> usize {
    boundary_value("aclmdlGetDatasetNumBuffers", 0, || {
        with(&MDL_DATASETS, dataset, "dataset", |d| Ok(d.blobs.len()))
    })
}

fn index_check(d: &Dataset, index: usize) -> Result<(), Error> {
    if index >= d.blobs.len() {
        return Err(Error::invalid(format!(
            "index = {index} is out of range: the dataset holds {} buffer(s)",
            d.blobs.len()
        )));
    }
    Ok(())
}

/// `aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index)`: NULL
/// for a bad dataset or index.
#[no_mangle]
pub extern "C" fn aclmdlGetDatasetBuffer(dataset: *const Dataset, index: usize) -> *mut DataBuffer {
    boundary_value("aclmdlGetDatasetBuffer", std::ptr::null_mut(), || {
        with(&MDL_DATASETS, dataset, "dataset", |d| {
            index_check(d, index)?;
            Ok(d.blobs[index].buf)
        })
    })
}

/// `aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc,
/// size_t index)`: the dataset keeps a copy of `tensorDesc` for buffer `index`; NULL removes
/// it.
#[no_mangle]
pub extern "C" fn aclmdlSetDatasetTensorDesc(
    dataset: *mut Dataset,
    tensorDesc: *mut TensorDesc,
    index: usize,
) -> i32 {
    boundary("aclmdlSetDatasetTensorDesc", || {
        let copy = if tensorDesc.is_null() {
            None
        } else {
            Some(snapshot(tensorDesc, "tensorDesc")?)
        };
        let old = with(&MDL_DATASETS, dataset, "dataset", |d| {
            index_check(d, index)?;
            let b = &mut d.blobs[index];
            Ok(std::mem::replace(&mut b.desc, copy.map(register)))
        })?;
        if let Some(t) = old {
            crate::api::tensor_desc::aclDestroyTensorDesc(t);
        }
        Ok(())
    })
}

/// `aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index)`:
/// the dataset's own copy (NULL if none was set); it lives as long as the dataset.
#[no_mangle]
pub extern "C" fn aclmdlGetDatasetTensorDesc(
    dataset: *const Dataset,
    index: usize,
) -> *mut TensorDesc {
    boundary_value("aclmdlGetDatasetTensorDesc", std::ptr::null_mut(), || {
        with(&MDL_DATASETS, dataset, "dataset", |d| {
            index_check(d, index)?;
            Ok(d.blobs[index].desc.unwrap_or(std::ptr::null_mut()))
        })
    })
}

// ---------------------------------------------------------------------------------------
// AIPP parameter sets (GE `acl_aipp.cpp` ranges and checks).

/// Per-batch AIPP parameters (GE's 96-byte `kAippDynamicBatchPara`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AippBatch {
    pub crop: (i8, i32, i32, i32, i32),
    pub scf: (i8, i32, i32, i32, i32),
    pub padding: (i8, i32, i32, i32, i32),
    pub mean: [i16; 4],
    pub min: [u16; 4],
    pub var_reci: [u16; 4],
}

/// The object behind an `aclmdlAIPP *`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aipp {
    pub input_format: i32,
    pub csc_switch: i8,
    pub csc_matrix: [i16; 9],
    pub csc_output_bias: [u8; 3],
    pub csc_input_bias: [u8; 3],
    pub rbuv_swap: i8,
    pub ax_swap: i8,
    pub src_size: (i32, i32),
    pub batches: Vec<AippBatch>,
}

/// What an `aclmdlAIPP *` is: a handle of [`MDL_AIPPS`].
pub static MODEL_AIPP: HandleKind = HandleKind::new(*b"Ma", "aclmdlAIPP", "aclmdlCreateAIPP");

/// Bytes of GE's dynamic-AIPP block without its batch part, and per batch.
pub const AIPP_HEAD_BYTES: usize = 64;
pub const AIPP_BATCH_BYTES: usize = 96;

/// `aclmdlAIPP *aclmdlCreateAIPP(uint64_t batchSize)`: NULL for batch size 0.
#[no_mangle]
pub extern "C" fn aclmdlCreateAIPP(batchSize: u64) -> *mut Aipp {
    boundary_value("aclmdlCreateAIPP", std::ptr::null_mut(), || {
        if batchSize == 0 {
            return Err(Error::invalid(
                "batchSize = 0 is invalid: expected 1 or more",
            ));
        }
        if batchSize > 128 {
            return Err(Error::invalid(format!(
                "batchSize = {batchSize} is too large (an AIPP parameter set holds at most 128 batches)"
            )));
        }
        let one = npu_emu::fp16::float_to_fp16(1.0);
        let b = AippBatch {
            var_reci: [one; 4],
            ..Default::default()
        };
        Ok(add(
            &MDL_AIPPS,
            Aipp {
                batches: vec![b; batchSize as usize],
                ..Default::default()
            },
        ))
    })
}

/// `aclError aclmdlDestroyAIPP(const aclmdlAIPP *aippParmsSet)`
#[no_mangle]
pub extern "C" fn aclmdlDestroyAIPP(aippParmsSet: *const Aipp) -> i32 {
    boundary("aclmdlDestroyAIPP", || {
        remove(&MDL_AIPPS, aippParmsSet, "aippParmsSet").map(drop)
    })
}

/// `aclError aclmdlGetAippDataSize(uint64_t batchSize, size_t *size)`: 64 + 96 × batchSize.
#[no_mangle]
pub extern "C" fn aclmdlGetAippDataSize(batchSize: u64, size: *mut usize) -> i32 {
    boundary("aclmdlGetAippDataSize", || {
        crate::ffi::non_null(size, "size")?;
        if batchSize == 0 {
            return Err(Error::invalid(
                "batchSize = 0 is invalid: expected 1 or more",
            ));
        }
        let n = (batchSize as usize)
            .checked_mul(AIPP_BATCH_BYTES)
            .and_then(|x| x.checked_add(AIPP_HEAD_BYTES))
            .ok_or_else(|| Error::invalid(format!("batchSize = {batchSize} overflows the size")))?;
        out(size, "size", n)
    })
}

fn range<T: PartialOrd + std::fmt::Display + Copy>(
    v: T,
    lo: T,
    hi: T,
    arg: &str,
) -> Result<(), Error> {
    if v < lo || v > hi {
        return Err(Error::invalid(format!(
            "{arg} = {v} is out of range: expected [{lo}, {hi}]"
        )));
    }
    Ok(())
}

fn switch(v: i8, arg: &str) -> Result<(), Error> {
    range(v, 0, 1, arg)
}

fn with_aipp(p: *mut Aipp, f: impl FnOnce(&mut Aipp) -> Result<(), Error>) -> Result<(), Error> {
    with(&MDL_AIPPS, p, "aippParmsSet", f)
}

fn with_batch(
    p: *mut Aipp,
    batch_index: u64,
    f: impl FnOnce(&mut AippBatch) -> Result<(), Error>,
) -> Result<(), Error> {
    with_aipp(p, |a| {
        let n = a.batches.len() as u64;
        if batch_index >= n {
            return Err(Error::invalid(format!(
                "batchIndex = {batch_index} is out of range: the parameter set was created for {n} batch(es)"
            )));
        }
        f(&mut a.batches[batch_index as usize])
    })
}

/// `aclError aclmdlSetAIPPInputFormat(aclmdlAIPP *aippParmsSet, aclAippInputFormat
/// inputFormat)`: one of the 14 `aclAippInputFormat` values.
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPInputFormat(aippParmsSet: *mut Aipp, inputFormat: i32) -> i32 {
    boundary("aclmdlSetAIPPInputFormat", || {
        with_aipp(aippParmsSet, |a| {
            if !(1..=14).contains(&inputFormat) {
                return Err(Error::invalid(format!(
                    "inputFormat = {inputFormat} is not a supported aclAippInputFormat (1 ACL_YUV420SP_U8 .. 14 ACL_RAW24)"
                )));
            }
            a.input_format = inputFormat;
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPCscParams(aclmdlAIPP *aippParmsSet, int8_t cscSwitch, int16_t
/// cscMatrixR0C0, …, uint8_t cscInputBiasR2)`: matrix entries in [-32677, 32676]; with the
/// switch off only the switch is stored.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn aclmdlSetAIPPCscParams(
    aippParmsSet: *mut Aipp,
    cscSwitch: i8,
    r0c0: i16,
    r0c1: i16,
    r0c2: i16,
    r1c0: i16,
    r1c1: i16,
    r1c2: i16,
    r2c0: i16,
    r2c1: i16,
    r2c2: i16,
    ob0: u8,
    ob1: u8,
    ob2: u8,
    ib0: u8,
    ib1: u8,
    ib2: u8,
) -> i32 {
    boundary("aclmdlSetAIPPCscParams", || {
        with_aipp(aippParmsSet, |a| {
            switch(cscSwitch, "cscSwitch")?;
            a.csc_switch = cscSwitch;
            if cscSwitch == 0 {
                return Ok(());
            }
            let m = [r0c0, r0c1, r0c2, r1c0, r1c1, r1c2, r2c0, r2c1, r2c2];
            for (i, v) in m.iter().enumerate() {
                range(*v, -32677, 32676, &format!("cscMatrixR{}C{}", i / 3, i % 3))?;
            }
            a.csc_matrix = m;
            a.csc_output_bias = [ob0, ob1, ob2];
            a.csc_input_bias = [ib0, ib1, ib2];
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t rbuvSwapSwitch)`
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPRbuvSwapSwitch(aippParmsSet: *mut Aipp, rbuvSwapSwitch: i8) -> i32 {
    boundary("aclmdlSetAIPPRbuvSwapSwitch", || {
        with_aipp(aippParmsSet, |a| {
            switch(rbuvSwapSwitch, "rbuvSwapSwitch")?;
            a.rbuv_swap = rbuvSwapSwitch;
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t axSwapSwitch)`
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPAxSwapSwitch(aippParmsSet: *mut Aipp, axSwapSwitch: i8) -> i32 {
    boundary("aclmdlSetAIPPAxSwapSwitch", || {
        with_aipp(aippParmsSet, |a| {
            switch(axSwapSwitch, "axSwapSwitch")?;
            a.ax_swap = axSwapSwitch;
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP *aippParmsSet, int32_t srcImageSizeW,
/// int32_t srcImageSizeH)`: width in [2, 4096], height in [1, 4096].
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPSrcImageSize(
    aippParmsSet: *mut Aipp,
    srcImageSizeW: i32,
    srcImageSizeH: i32,
) -> i32 {
    boundary("aclmdlSetAIPPSrcImageSize", || {
        with_aipp(aippParmsSet, |a| {
            range(srcImageSizeW, 2, 4096, "srcImageSizeW")?;
            range(srcImageSizeH, 1, 4096, "srcImageSizeH")?;
            a.src_size = (srcImageSizeW, srcImageSizeH);
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPScfParams(aclmdlAIPP *aippParmsSet, int8_t scfSwitch, int32_t
/// scfInputSizeW, int32_t scfInputSizeH, int32_t scfOutputSizeW, int32_t scfOutputSizeH,
/// uint64_t batchIndex)`: sizes in [16, 4096] (output width up to 1920).
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPScfParams(
    aippParmsSet: *mut Aipp,
    scfSwitch: i8,
    inW: i32,
    inH: i32,
    outW: i32,
    outH: i32,
    batchIndex: u64,
) -> i32 {
    boundary("aclmdlSetAIPPScfParams", || {
        with_batch(aippParmsSet, batchIndex, |b| {
            switch(scfSwitch, "scfSwitch")?;
            b.scf.0 = scfSwitch;
            if scfSwitch == 0 {
                return Ok(());
            }
            range(inW, 16, 4096, "scfInputSizeW")?;
            range(inH, 16, 4096, "scfInputSizeH")?;
            range(outW, 16, 1920, "scfOutputSizeW")?;
            range(outH, 16, 4096, "scfOutputSizeH")?;
            b.scf = (scfSwitch, inW, inH, outW, outH);
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPCropParams(aclmdlAIPP *aippParmsSet, int8_t cropSwitch, int32_t
/// cropStartPosW, int32_t cropStartPosH, int32_t cropSizeW, int32_t cropSizeH, uint64_t
/// batchIndex)`: start positions in [0, 4095], sizes in [1, 4096].
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPCropParams(
    aippParmsSet: *mut Aipp,
    cropSwitch: i8,
    startW: i32,
    startH: i32,
    sizeW: i32,
    sizeH: i32,
    batchIndex: u64,
) -> i32 {
    boundary("aclmdlSetAIPPCropParams", || {
        with_batch(aippParmsSet, batchIndex, |b| {
            switch(cropSwitch, "cropSwitch")?;
            b.crop.0 = cropSwitch;
            if cropSwitch == 0 {
                return Ok(());
            }
            range(startW, 0, 4095, "cropStartPosW")?;
            range(startH, 0, 4095, "cropStartPosH")?;
            range(sizeW, 1, 4096, "cropSizeW")?;
            range(sizeH, 1, 4096, "cropSizeH")?;
            b.crop = (cropSwitch, startW, startH, sizeW, sizeH);
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP *aippParmsSet, int8_t paddingSwitch, int32_t
/// paddingSizeTop, int32_t paddingSizeBottom, int32_t paddingSizeLeft, int32_t
/// paddingSizeRight, uint64_t batchIndex)`: sizes in [0, 32].
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPPaddingParams(
    aippParmsSet: *mut Aipp,
    paddingSwitch: i8,
    top: i32,
    bottom: i32,
    left: i32,
    right: i32,
    batchIndex: u64,
) -> i32 {
    boundary("aclmdlSetAIPPPaddingParams", || {
        with_batch(aippParmsSet, batchIndex, |b| {
            switch(paddingSwitch, "paddingSwitch")?;
            b.padding.0 = paddingSwitch;
            if paddingSwitch == 0 {
                return Ok(());
            }
            for (v, n) in [
                (top, "paddingSizeTop"),
                (bottom, "paddingSizeBottom"),
                (left, "paddingSizeLeft"),
                (right, "paddingSizeRight"),
            ] {
                range(v, 0, 32, n)?;
            }
            b.padding = (paddingSwitch, top, bottom, left, right);
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP *aippParmsSet, int16_t dtcPixelMeanChn0, …,
/// uint64_t batchIndex)`: each in [0, 255].
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPDtcPixelMean(
    aippParmsSet: *mut Aipp,
    c0: i16,
    c1: i16,
    c2: i16,
    c3: i16,
    batchIndex: u64,
) -> i32 {
    boundary("aclmdlSetAIPPDtcPixelMean", || {
        with_batch(aippParmsSet, batchIndex, |b| {
            let v = [c0, c1, c2, c3];
            for (i, x) in v.iter().enumerate() {
                range(*x, 0, 255, &format!("dtcPixelMeanChn{i}"))?;
            }
            b.mean = v;
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP *aippParmsSet, float dtcPixelMinChn0, …,
/// uint64_t batchIndex)`: each in [0, 255], stored as fp16.
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPDtcPixelMin(
    aippParmsSet: *mut Aipp,
    c0: f32,
    c1: f32,
    c2: f32,
    c3: f32,
    batchIndex: u64,
) -> i32 {
    boundary("aclmdlSetAIPPDtcPixelMin", || {
        with_batch(aippParmsSet, batchIndex, |b| {
            let v = [c0, c1, c2, c3];
            for (i, x) in v.iter().enumerate() {
                range(*x, 0.0, 255.0, &format!("dtcPixelMinChn{i}"))?;
            }
            b.min = v.map(npu_emu::fp16::float_to_fp16);
            Ok(())
        })
    })
}

/// `aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP *aippParmsSet, float dtcPixelVarReciChn0,
/// …, uint64_t batchIndex)`: each in [-65504, 65504], stored as fp16.
#[no_mangle]
pub extern "C" fn aclmdlSetAIPPPixelVarReci(
    aippParmsSet: *mut Aipp,
    c0: f32,
    c1: f32,
    c2: f32,
    c3: f32,
    batchIndex: u64,
) -> i32 {
    boundary("aclmdlSetAIPPPixelVarReci", || {
        with_batch(aippParmsSet, batchIndex, |b| {
            let v = [c0, c1, c2, c3];
            for (i, x) in v.iter().enumerate() {
                range(*x, -65504.0, 65504.0, &format!("dtcPixelVarReciChn{i}"))?;
            }
            b.var_reci = v.map(npu_emu::fp16::float_to_fp16);
            Ok(())
        })
    })
}

/// The parameters stored in a live AIPP set (for tests and messages).
pub fn aipp_snapshot(p: *const Aipp) -> Result<Aipp, Error> {
    with(&MDL_AIPPS, p, "aippParmsSet", |a| Ok(a.clone()))
}

// ---------------------------------------------------------------------------------------
// Load and execute config handles (GE `model_config.cpp`).

/// The object behind an `aclmdlConfigHandle *`.
#[derive(Default)]
pub struct LoadConfig {
    set: HashSet<i32>,
    priority: i32,
    load_type: usize,
    path: Option<String>,
    mem: (usize, usize),
}

/// What an `aclmdlConfigHandle *` is: a handle of [`MDL_LOAD_CONFIGS`].
pub static MODEL_LOAD_CONFIG: HandleKind =
    HandleKind::new(*b"Ml", "aclmdlConfigHandle", "aclmdlCreateConfigHandle");

/// The object behind an `aclmdlExecConfigHandle *`.
#[derive(Default)]
pub struct ExecConfig {
    pub stream_sync_timeout: i32,
    pub event_sync_timeout: i32,
}

/// What an `aclmdlExecConfigHandle *` is: a handle of [`MDL_EXEC_CONFIGS`].
pub static MODEL_EXEC_CONFIG: HandleKind = HandleKind::new(
    *b"Me",
    "aclmdlExecConfigHandle",
    "aclmdlCreateExecConfigHandle",
);

/// `aclmdlConfigHandle *aclmdlCreateConfigHandle()`
#[no_mangle]
pub extern "C" fn aclmdlCreateConfigHandle() -> *mut LoadConfig {
    boundary_value("aclmdlCreateConfigHandle", std::ptr::null_mut(), || {
        Ok(add(&MDL_LOAD_CONFIGS, LoadConfig::default()))
    })
}

/// `aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle *handle)`
#[no_mangle]
pub extern "C" fn aclmdlDestroyConfigHandle(handle: *mut LoadConfig) -> i32 {
    boundary("aclmdlDestroyConfigHandle", || {
        remove(&MDL_LOAD_CONFIGS, handle, "handle").map(drop)
    })
}

fn value_size(valueSize: usize, want: usize, what: &str) -> Result<(), Error> {
    if valueSize != want {
        return Err(Error::invalid(format!(
            "valueSize = {valueSize} is invalid for {what}: it should be {want}"
        )));
    }
    Ok(())
}

/// `aclError aclmdlSetConfigOpt(aclmdlConfigHandle *handle, aclmdlConfigAttr attr, const void
/// *attrValue, size_t valueSize)`: the attributes GE accepts (0–14), with their value sizes
/// (`int32_t`, `size_t` or a pointer) and ranges (priority 0..7, load type 1..6, a path or
/// model address that is not NULL, memory optimization 0..1).
#[no_mangle]
pub extern "C" fn aclmdlSetConfigOpt(
    handle: *mut LoadConfig,
    attr: i32,
    attrValue: *const c_void,
    valueSize: usize,
) -> i32 {
    boundary("aclmdlSetConfigOpt", || {
        with(&MDL_LOAD_CONFIGS, handle, "handle", |_| Ok(()))?;
        crate::ffi::non_null(attrValue, "attrValue")?;
        let ptr = std::mem::size_of::<*const c_void>();
        let sz = std::mem::size_of::<usize>();
        // SAFETY: attrValue points to valueSize readable bytes (checked against the size the
        // attribute needs before each read), non-NULL.
        let read_usize = || unsafe { (attrValue as *const usize).read_unaligned() };
        // SAFETY: as above.
        let read_ptr = || unsafe { (attrValue as *const *const c_void).read_unaligned() };
        with(&MDL_LOAD_CONFIGS, handle, "handle", |h| {
            match attr {
                0 => {
                    value_size(valueSize, 4, "ACL_MDL_PRIORITY_INT32")?;
                    // SAFETY: 4 readable bytes.
                    let p = unsafe { (attrValue as *const i32).read_unaligned() };
                    range(p, 0, 7, "priority (*attrValue)")?;
                    h.priority = p;
                }
                1 => {
                    value_size(valueSize, sz, "ACL_MDL_LOAD_TYPE_SIZET")?;
                    let t = read_usize();
                    range(t, 1, 6, "load type (*attrValue)")?;
                    h.load_type = t;
                }
                2 | 3 | 10 | 12 | 14 => {
                    value_size(valueSize, ptr, "a pointer attribute")?;
                    let v = read_ptr();
                    if v.is_null() {
                        return Err(Error::invalid("*attrValue is NULL: this attribute needs a pointer"));
                    }
                    if attr == 2 {
                        // SAFETY: the model path, a NUL-terminated string (ACL contract).
                        h.path = Some(unsafe { CStr::from_ptr(v as *const c_char) }.to_string_lossy().into_owned());
                    }
                    if attr == 3 {
                        h.mem.0 = v as usize;
                    }
                }
                4 | 6 | 8 | 9 | 11 => {
                    value_size(valueSize, sz, "a size attribute")?;
                    if attr == 4 {
                        h.mem.1 = read_usize();
                    }
                }
                5 | 7 => value_size(valueSize, ptr, "a pointer attribute")?,
                13 => {
                    value_size(valueSize, sz, "ACL_MDL_WORKSPACE_MEM_OPTIMIZE")?;
                    range(read_usize(), 0, 1, "memory optimization (*attrValue)")?;
                }
                _ => {
                    return Err(Error::invalid(format!(
                        "attr = {attr} is invalid: it should be [0 (ACL_MDL_PRIORITY_INT32), 14 (ACL_MDL_WEIGHT_PATH_PTR)]"
                    )))
                }
            }
            h.set.insert(attr);
            Ok(())
        })
    })
}

/// `aclError aclmdlLoadWithConfig(const aclmdlConfigHandle *handle, uint32_t *modelId)`
#[no_mangle]
pub extern "C" fn aclmdlLoadWithConfig(handle: *const LoadConfig, modelId: *mut u32) -> i32 {
    boundary("aclmdlLoadWithConfig", || {
        crate::ffi::non_null(modelId, "modelId")?;
        let (t, path, mem) = with(&MDL_LOAD_CONFIGS, handle, "handle", |h| {
            if !h.set.contains(&1) {
                return Err(Error::invalid(
                    "ACL_MDL_LOAD_TYPE_SIZET is not set in aclmdlConfigHandle",
                ));
            }
            let file = matches!(h.load_type, 1 | 2 | 5);
            if file && !h.set.contains(&2) {
                return Err(Error::invalid(
                    "model path (ACL_MDL_PATH_PTR) is not set in aclmdlConfigHandle when load type is from file",
                ));
            }
            let has_mem = h.set.contains(&3) && h.set.contains(&4);
            if !file && !has_mem {
                return Err(Error::invalid(
                    "model memory (ACL_MDL_MEM_ADDR_PTR and ACL_MDL_MEM_SIZET) is not set in aclmdlConfigHandle when load type is from memory",
                ));
            }
            if matches!(h.load_type, 5 | 6)
                && !(h.set.contains(&9)
                    && h.set.contains(&10)
                    && h.set.contains(&11)
                    && h.set.contains(&12))
            {
                return Err(Error::invalid(
                    "the input and output queues (ACL_MDL_INPUTQ_*, ACL_MDL_OUTPUTQ_*) are not set in aclmdlConfigHandle when load type is with queue",
                ));
            }
            Ok((h.load_type, h.path.clone(), h.mem))
        })?;
        Err(if matches!(t, 1 | 2 | 5) {
            refuse_file(path.as_deref().unwrap_or(""))
        } else {
            refuse_mem(mem.0 as *const c_void, mem.1)
        })
    })
}

/// `aclmdlExecConfigHandle *aclmdlCreateExecConfigHandle()`
#[no_mangle]
pub extern "C" fn aclmdlCreateExecConfigHandle() -> *mut ExecConfig {
    boundary_value("aclmdlCreateExecConfigHandle", std::ptr::null_mut(), || {
        Ok(add(&MDL_EXEC_CONFIGS, ExecConfig::default()))
    })
}

/// `aclError aclmdlDestroyExecConfigHandle(const aclmdlExecConfigHandle *handle)`
#[no_mangle]
pub extern "C" fn aclmdlDestroyExecConfigHandle(handle: *const ExecConfig) -> i32 {
    boundary("aclmdlDestroyExecConfigHandle", || {
        remove(&MDL_EXEC_CONFIGS, handle, "handle").map(drop)
    })
}

/// `aclError aclmdlSetExecConfigOpt(aclmdlExecConfigHandle *handle, aclmdlExecConfigAttr attr,
/// const void *attrValue, size_t valueSize)`: the two timeouts GE accepts (`int32_t`, -1 =
/// forever, up to INT32_MAX ms); other attributes are invalid.
#[no_mangle]
pub extern "C" fn aclmdlSetExecConfigOpt(
    handle: *mut ExecConfig,
    attr: i32,
    attrValue: *const c_void,
    valueSize: usize,
) -> i32 {
    boundary("aclmdlSetExecConfigOpt", || {
        with(&MDL_EXEC_CONFIGS, handle, "handle", |_| Ok(()))?;
        crate::ffi::non_null(attrValue, "attrValue")?;
        if attr != 0 && attr != 1 {
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "attr = {attr} is invalid: it should be ACL_MDL_STREAM_SYNC_TIMEOUT (0) or ACL_MDL_EVENT_SYNC_TIMEOUT (1)"
                ),
            ));
        }
        value_size(valueSize, 4, "a timeout")?;
        // SAFETY: 4 readable bytes (checked), non-NULL.
        let v = unsafe { (attrValue as *const i32).read_unaligned() };
        range(v, -1, i32::MAX, "timeout (*attrValue)")?;
        with(&MDL_EXEC_CONFIGS, handle, "handle", |h| {
            if attr == 0 {
                h.stream_sync_timeout = v;
            } else {
                h.event_sync_timeout = v;
            }
            Ok(())
        })
    })
}
