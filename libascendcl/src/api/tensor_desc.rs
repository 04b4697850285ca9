//! Tensor descriptors (`acl_base_mdl.h`, abi.md §1.2, §5.3): `aclCreateTensorDesc`,
//! `aclDestroyTensorDesc`, the getters and setters, `aclTransTensorDescFormat`.
//!
//! The model follows CANN's `aclTensorDesc` (GE package, `tensor_desc.cpp`):
//! - `format` / `dims` are what `aclCreateTensorDesc` sets; `aclSetTensorOriginFormat` /
//!   `aclSetTensorOriginShape` change them, and every getter (`aclGetTensorDescFormat`,
//!   `…NumDims`, `…DimV2`, `…ElementCount`, `…Size`) reads them;
//! - `storage_format` / `storage_dims` are set by `aclSetTensorFormat` / `aclSetTensorShape`
//!   (and the deprecated `…Storage…` twins); storage format stays `ACL_FORMAT_UNDEFINED`
//!   until set. They have no getter; the operator API reads them (see [`TensorDesc::storage`]).
//! - `aclGetTensorDescElementCount`: product of the dims, 1 for a scalar (no dims), 0 if a
//!   dim is negative (-1 dynamic, -2 unknown rank) or the product overflows.
//!   `aclGetTensorDescSize` = that count × `aclDataTypeSize(dtype)` (0 on overflow, 0 for
//!   `ACL_DT_UNDEFINED`/`ACL_STRING`).
//! - `aclGetTensorDescNumDims` is `ACL_UNKNOWN_RANK` when the first dim is -2.
//! - NULL descriptors: getters return their documented fallback (`ACL_DT_UNDEFINED`,
//!   `ACL_FORMAT_UNDEFINED`, 0, -1, NULL, `""`); functions returning `aclError` give
//!   `ACL_ERROR_INVALID_PARAM` — except `aclSetTensorFormat`, `aclSetTensorStorageFormat` and
//!   `aclSetTensorOriginFormat`, which CANN's implementation lets succeed as no-ops (we do the
//!   same, with a warning and a recent message). Every NULL leaves a message for
//!   `aclGetRecentErrMsg`.
//!
//! Descriptors are kept in a registry of live handles, so a destroyed or foreign pointer is
//! reported like a NULL one (with its own message) instead of being dereferenced.
//! None of these functions needs `aclInit`, as in CANN.

use crate::api::helpers::data_type_size;
use crate::ffi::{boundary, boundary_value, non_null, out};
use crate::globals::DESCS;
use npu_emu::codes::ACL_ERROR_INVALID_PARAM;
use npu_emu::config::LogLevel;
use npu_emu::formats::{self, C0Rule};
use npu_emu::Error;
use npu_emu_ffi::handles::HandleKind;
use std::ffi::{c_char, c_void, CStr, CString};

/// `ACL_FORMAT_UNDEFINED`.
pub const FORMAT_UNDEFINED: i32 = -1;
/// `ACL_DT_UNDEFINED`.
pub const DT_UNDEFINED: i32 = -1;
/// `ACL_UNKNOWN_RANK` (`0xFFFFFFFFFFFFFFFE`).
pub const UNKNOWN_RANK: usize = 0xFFFF_FFFF_FFFF_FFFE;
/// The dim value that marks an unknown rank (GE `UNKNOWN_RANK`).
const DIM_UNKNOWN_RANK: i64 = -2;
/// `ACL_ERROR_GE_FORMAT_INVALID`, `…_SHAPE_INVALID`, `…_DATATYPE_INVALID`: what GE's shape
/// transfer returns (passed through by `aclTransTensorDescFormat`, `ACL_GET_ERRCODE_GE`).
const GE_FORMAT_INVALID: i32 = 145020;
const GE_SHAPE_INVALID: i32 = 145021;
const GE_DATATYPE_INVALID: i32 = 145022;

/// The object behind an `aclTensorDesc *`.
#[derive(Clone, Debug)]
pub struct TensorDesc {
    pub dtype: i32,
    /// Origin format (what `aclCreateTensorDesc` and `aclSetTensorOriginFormat` set).
    pub format: i32,
    /// Origin shape.
    pub dims: Vec<i64>,
    /// `ACL_FORMAT_UNDEFINED` until `aclSetTensorFormat`.
    pub storage_format: i32,
    /// Empty until `aclSetTensorShape`.
    pub storage_dims: Vec<i64>,
    pub name: CString,
    pub shape_range: Vec<(i64, i64)>,
    pub value_range: Vec<(i64, i64)>,
    pub const_data: Option<Vec<u8>>,
    /// `aclMemType` of `aclSetTensorPlaceMent` (device by default).
    pub placement: i32,
    pub dynamic_input: Option<String>,
}

impl TensorDesc {
    fn new(dtype: i32, dims: Vec<i64>, format: i32) -> TensorDesc {
        TensorDesc {
            dtype,
            format,
            dims,
            storage_format: FORMAT_UNDEFINED,
            storage_dims: Vec::new(),
            name: CString::default(),
            shape_range: Vec::new(),
            value_range: Vec::new(),
            const_data: None,
            placement: 0,
            dynamic_input: None,
        }
    }

    /// The format and shape the data is stored in, as the operator API reads them: the
    /// storage format if one was set (its shape: the storage shape if set, else the origin
    /// shape converted to it), else the origin format and shape.
    pub fn storage(&self, groups: i64) -> Result<(i32, Vec<i64>), Error> {
        if self.storage_format == FORMAT_UNDEFINED || self.storage_format == self.format {
            let dims = if self.storage_dims.is_empty() {
                self.dims.clone()
            } else {
                self.storage_dims.clone()
            };
            return Ok((self.format, dims));
        }
        if !self.storage_dims.is_empty() {
            return Ok((self.storage_format, self.storage_dims.clone()));
        }
        let s = formats::storage_shape(
            self.format,
            &self.dims,
            self.storage_format,
            self.dtype,
            groups,
            C0Rule::Ge,
        )
        .map_err(|e| {
            Error::invalid(format!(
                "the descriptor's storage format {} was set without a storage shape, and its \
                 origin shape {:?} ({}) cannot be converted to it: {e}",
                format_text(self.storage_format),
                self.dims,
                format_text(self.format)
            ))
        })?;
        Ok((self.storage_format, s))
    }
}

/// `"NC1HWC0 (3)"`, or the number alone for a value without a name.
pub fn format_text(f: i32) -> String {
    if f == FORMAT_UNDEFINED {
        return "ACL_FORMAT_UNDEFINED (-1)".to_string();
    }
    if f < 0 {
        return format!("{f}");
    }
    match formats::format_name(f) {
        Some(n) if f & !0xff == 0 => format!("{n} ({f})"),
        Some(n) => format!("{n} ({f:#x})"),
        None => format!("{f}"),
    }
}

/// What an `aclTensorDesc *` is: a handle of [`DESCS`].
pub static DESC: HandleKind = HandleKind::new(
    *b"TD",
    "aclTensorDesc",
    "aclCreateTensorDesc / aclTransTensorDescFormat",
);

/// Run `f` on a live descriptor; NULL or dead pointers are `ACL_ERROR_INVALID_PARAM` naming
/// `arg`. The registry lock is held meanwhile, so no destroy can free it under `f`.
pub fn with_desc<T>(
    desc: *const TensorDesc,
    arg: &str,
    f: impl FnOnce(&mut TensorDesc) -> Result<T, Error>,
) -> Result<T, Error> {
    non_null(desc, arg)?;
    let mut live = DESCS.lock();
    f(live.get_mut(desc as u64, arg)?)
}

/// A copy of a live descriptor.
pub fn snapshot(desc: *const TensorDesc, arg: &str) -> Result<TensorDesc, Error> {
    with_desc(desc, arg, |d| Ok(d.clone()))
}

/// Register a descriptor (a new one, or a copy another object owns) as live.
pub fn register(d: TensorDesc) -> *mut TensorDesc {
    DESCS.lock().insert(d) as *mut TensorDesc
}

/// Read `num` dims from a C array (`numDims > 0` needs a non-NULL `dims`).
fn read_dims(num: i32, dims: *const i64, what: &str) -> Result<Vec<i64>, Error> {
    if num <= 0 {
        return Ok(Vec::new());
    }
    non_null(dims, what)?;
    // SAFETY: the caller promises `num` readable int64_t values (ACL contract), non-NULL.
    Ok(unsafe { std::slice::from_raw_parts(dims, num as usize) }.to_vec())
}

/// Note a call CANN lets succeed although its input is unusable: warning + recent message.
fn warn_noop(msg: String) {
    crate::ffi::set_recent(&msg);
    crate::runtime::log(LogLevel::Warning, &msg);
}

/// `aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims,
/// aclFormat format)`: NULL (with a message) if `numDims < 0`, or `dims` is NULL while
/// `numDims > 0`. `numDims == 0` is a scalar.
#[no_mangle]
pub extern "C" fn aclCreateTensorDesc(
    dataType: i32,
    numDims: i32,
    dims: *const i64,
    format: i32,
) -> *mut TensorDesc {
    boundary_value("aclCreateTensorDesc", std::ptr::null_mut(), || {
        if numDims < 0 {
            return Err(Error::invalid(format!(
                "numDims = {numDims} is invalid: expected 0 (a scalar) or more"
            )));
        }
        if numDims > 0 && dims.is_null() {
            return Err(Error::invalid(format!(
                "argument dims is NULL while numDims = {numDims} > 0"
            )));
        }
        let d = read_dims(numDims, dims, "dims")?;
        Ok(register(TensorDesc::new(dataType, d, format)))
    })
}

/// `void aclDestroyTensorDesc(const aclTensorDesc *desc)`: NULL is a no-op (CANN deletes a
/// null pointer); a destroyed or foreign pointer leaves a message and is not touched.
#[no_mangle]
pub extern "C" fn aclDestroyTensorDesc(desc: *const TensorDesc) {
    boundary_value("aclDestroyTensorDesc", (), || {
        if desc.is_null() {
            return Ok(());
        }
        DESCS.lock().remove(desc as u64, "desc")?;
        Ok(())
    })
}

/// `aclDataType aclGetTensorDescType(const aclTensorDesc *desc)`: `ACL_DT_UNDEFINED` for NULL.
#[no_mangle]
pub extern "C" fn aclGetTensorDescType(desc: *const TensorDesc) -> i32 {
    boundary_value("aclGetTensorDescType", DT_UNDEFINED, || {
        with_desc(desc, "desc", |d| Ok(d.dtype))
    })
}

/// `aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc)`: the format given at
/// creation (or by `aclSetTensorOriginFormat`); `ACL_FORMAT_UNDEFINED` for NULL.
#[no_mangle]
pub extern "C" fn aclGetTensorDescFormat(desc: *const TensorDesc) -> i32 {
    boundary_value("aclGetTensorDescFormat", FORMAT_UNDEFINED, || {
        with_desc(desc, "desc", |d| Ok(d.format))
    })
}

/// Element count of `dims` (CANN's rule; see the module docs).
pub fn element_count(dims: &[i64]) -> Result<usize, Error> {
    let mut n: usize = 1;
    for &d in dims {
        if d < 0 {
            return Err(Error::invalid(format!(
                "shape {dims:?} has a negative dim {d} (dynamic -1 or unknown rank -2): the \
                 element count is 0"
            )));
        }
        n = n.checked_mul(d as usize).ok_or_else(|| {
            Error::invalid(format!(
                "the element count of shape {dims:?} overflows size_t: it is reported as 0"
            ))
        })?;
    }
    Ok(n)
}

/// `size_t aclGetTensorDescElementCount(const aclTensorDesc *desc)`: 0 for NULL.
#[no_mangle]
pub extern "C" fn aclGetTensorDescElementCount(desc: *const TensorDesc) -> usize {
    boundary_value("aclGetTensorDescElementCount", 0, || {
        with_desc(desc, "desc", |d| element_count(&d.dims))
    })
}

/// `size_t aclGetTensorDescSize(const aclTensorDesc *desc)`: element count × dtype size;
/// 0 for NULL.
#[no_mangle]
pub extern "C" fn aclGetTensorDescSize(desc: *const TensorDesc) -> usize {
    boundary_value("aclGetTensorDescSize", 0, || {
        with_desc(desc, "desc", |d| {
            let n = element_count(&d.dims)?;
            n.checked_mul(data_type_size(d.dtype)).ok_or_else(|| {
                Error::invalid(format!(
                    "the byte size of shape {:?} (data type {}) overflows size_t: it is \
                     reported as 0",
                    d.dims, d.dtype
                ))
            })
        })
    })
}

/// `size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)`: `ACL_UNKNOWN_RANK` when the
/// first dim is -2; 0 for NULL.
#[no_mangle]
pub extern "C" fn aclGetTensorDescNumDims(desc: *const TensorDesc) -> usize {
    boundary_value("aclGetTensorDescNumDims", 0, || {
        with_desc(desc, "desc", |d| {
            Ok(if d.dims.first() == Some(&DIM_UNKNOWN_RANK) {
                UNKNOWN_RANK
            } else {
                d.dims.len()
            })
        })
    })
}

fn dim_at(d: &TensorDesc, index: usize) -> Result<i64, Error> {
    d.dims.get(index).copied().ok_or_else(|| {
        Error::invalid(format!(
            "index = {index} is out of range: the descriptor has {} dims (shape {:?})",
            d.dims.len(),
            d.dims
        ))
    })
}

/// `int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index)` (deprecated): -1
/// for NULL or an index out of range.
#[no_mangle]
pub extern "C" fn aclGetTensorDescDim(desc: *const TensorDesc, index: usize) -> i64 {
    boundary_value("aclGetTensorDescDim", -1, || {
        with_desc(desc, "desc", |d| dim_at(d, index))
    })
}

/// `aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize)`
#[no_mangle]
pub extern "C" fn aclGetTensorDescDimV2(
    desc: *const TensorDesc,
    index: usize,
    dimSize: *mut i64,
) -> i32 {
    boundary("aclGetTensorDescDimV2", || {
        let v = with_desc(desc, "desc", |d| {
            non_null(dimSize, "dimSize")?;
            dim_at(d, index)
        })?;
        out(dimSize, "dimSize", v)
    })
}

/// `aclError aclGetTensorDescDimRange(const aclTensorDesc *desc, size_t index,
/// size_t dimRangeNum, int64_t *dimRange)`: the `index`-th range of
/// `aclSetTensorShapeRange`; `dimRangeNum` must be at least 2.
#[no_mangle]
pub unsafe extern "C" fn aclGetTensorDescDimRange(
    desc: *const TensorDesc,
    index: usize,
    dimRangeNum: usize,
    dimRange: *mut i64,
) -> i32 {
    boundary("aclGetTensorDescDimRange", || {
        let (lo, hi) = with_desc(desc, "desc", |d| {
            non_null(dimRange, "dimRange")?;
            let r = d.shape_range.get(index).copied().ok_or_else(|| {
                Error::invalid(format!(
                    "index = {index} is out of range: the descriptor has {} shape ranges \
                     (set by aclSetTensorShapeRange)",
                    d.shape_range.len()
                ))
            })?;
            if dimRangeNum < 2 {
                return Err(Error::invalid(format!(
                    "dimRangeNum = {dimRangeNum} is too small: expected at least 2 \
                     (ACL_TENSOR_SHAPE_RANGE_NUM)"
                )));
            }
            Ok(r)
        })?;
        // SAFETY: non-NULL, and the caller promised dimRangeNum >= 2 writable values.
        unsafe {
            dimRange.write_unaligned(lo);
            dimRange.add(1).write_unaligned(hi);
        }
        Ok(())
    })
}

/// Read `count` `[min, max]` pairs.
fn read_ranges(
    count: usize,
    ranges: *const [i64; 2],
    what: &str,
) -> Result<Vec<(i64, i64)>, Error> {
    if count == 0 {
        return Ok(Vec::new());
    }
    non_null(ranges, what)?;
    // SAFETY: non-NULL; the caller promised `count` rows of two int64_t.
    let rows = unsafe { std::slice::from_raw_parts(ranges, count) };
    Ok(rows.iter().map(|r| (r[0], r[1])).collect())
}

/// `aclError aclSetTensorShapeRange(aclTensorDesc *desc, size_t dimsCount,
/// int64_t dimsRange[][ACL_TENSOR_SHAPE_RANGE_NUM])`
#[no_mangle]
pub extern "C" fn aclSetTensorShapeRange(
    desc: *mut TensorDesc,
    dimsCount: usize,
    dimsRange: *const [i64; 2],
) -> i32 {
    boundary("aclSetTensorShapeRange", || {
        with_desc(desc, "desc", |d| {
            d.shape_range = read_ranges(dimsCount, dimsRange, "dimsRange")?;
            Ok(())
        })
    })
}

/// `aclError aclSetTensorValueRange(aclTensorDesc *desc, size_t valueCount,
/// int64_t valueRange[][ACL_TENSOR_VALUE_RANGE_NUM])`
#[no_mangle]
pub extern "C" fn aclSetTensorValueRange(
    desc: *mut TensorDesc,
    valueCount: usize,
    valueRange: *const [i64; 2],
) -> i32 {
    boundary("aclSetTensorValueRange", || {
        with_desc(desc, "desc", |d| {
            d.value_range = read_ranges(valueCount, valueRange, "valueRange")?;
            Ok(())
        })
    })
}

/// `void aclSetTensorDescName(aclTensorDesc *desc, const char *name)`: a NULL name clears it.
#[no_mangle]
pub unsafe extern "C" fn aclSetTensorDescName(desc: *mut TensorDesc, name: *const c_char) {
    boundary_value("aclSetTensorDescName", (), || {
        with_desc(desc, "desc", |d| {
            d.name = if name.is_null() {
                CString::default()
            } else {
                // SAFETY: a NUL-terminated C string per the ACL contract.
                unsafe { CStr::from_ptr(name) }.to_owned()
            };
            Ok(())
        })
    })
}

/// `const char *aclGetTensorDescName(aclTensorDesc *desc)`: `""` for NULL (as CANN). The
/// string lives until the name changes or the descriptor is destroyed.
#[no_mangle]
pub extern "C" fn aclGetTensorDescName(desc: *mut TensorDesc) -> *const c_char {
    static EMPTY: &CStr = c"";
    boundary_value("aclGetTensorDescName", EMPTY.as_ptr(), || {
        with_desc(desc, "desc", |d| Ok(d.name.as_ptr()))
    })
}

/// `aclError aclTransTensorDescFormat(const aclTensorDesc *srcDesc, aclFormat dstFormat,
/// aclTensorDesc **dstDesc)`: a new descriptor whose shape is the source's (origin) shape
/// stored as `dstFormat` (abi.md §5.2, C0 by GE's rule), data type and name-less; no data
/// moves. Its format is `dstFormat`, as CANN documents ("creates new aclTensorDesc with the
/// dstFormat format"; the GE source passes the source format instead), and its storage
/// format and shape are the same. Failures are GE's shape-transfer codes, which CANN passes
/// through: `ACL_ERROR_GE_FORMAT_INVALID` (no conversion between the formats),
/// `ACL_ERROR_GE_SHAPE_INVALID` (the shape does not fit the source format),
/// `ACL_ERROR_GE_DATATYPE_INVALID`.
#[no_mangle]
pub extern "C" fn aclTransTensorDescFormat(
    srcDesc: *const TensorDesc,
    dstFormat: i32,
    dstDesc: *mut *mut TensorDesc,
) -> i32 {
    boundary("aclTransTensorDescFormat", || {
        non_null(srcDesc, "srcDesc")?;
        non_null(dstDesc, "dstDesc")?;
        let src = snapshot(srcDesc, "srcDesc")?;
        let shape = trans_shape(&src, dstFormat)?;
        let mut d = TensorDesc::new(src.dtype, shape.clone(), dstFormat);
        d.storage_format = dstFormat;
        d.storage_dims = shape;
        out(dstDesc, "dstDesc", register(d))
    })
}

fn trans_shape(src: &TensorDesc, dst_format: i32) -> Result<Vec<i64>, Error> {
    let what = || {
        format!(
            "cannot convert shape {:?} from {} to {} (data type {})",
            src.dims,
            format_text(src.format),
            format_text(dst_format),
            src.dtype
        )
    };
    if src.format == dst_format {
        return Ok(src.dims.clone());
    }
    if formats::dtype_size(src.dtype).is_none() {
        return Err(Error::new(
            GE_DATATYPE_INVALID,
            format!("{}: the data type has no private-format layout", what()),
        ));
    }
    match formats::storage_shape(src.format, &src.dims, dst_format, src.dtype, 1, C0Rule::Ge) {
        Ok(s) => Ok(s),
        Err(e) => {
            let code = if formats::pair_supported(src.format, dst_format, src.dtype, 1) {
                GE_SHAPE_INVALID
            } else {
                GE_FORMAT_INVALID
            };
            Err(Error::new(code, format!("{}: {e}", what())))
        }
    }
}

/// The three format setters CANN lets succeed on a NULL descriptor.
fn set_format(name: &'static str, desc: *mut TensorDesc, format: i32, storage: bool) -> i32 {
    boundary(name, || {
        if desc.is_null() {
            warn_noop(format!(
                "{name}: argument desc is NULL; nothing was set (CANN returns ACL_SUCCESS here)"
            ));
            return Ok(());
        }
        with_desc(desc, "desc", |d| {
            if storage {
                d.storage_format = format;
            } else {
                d.format = format;
            }
            Ok(())
        })
    })
}

fn set_shape(
    name: &'static str,
    desc: *mut TensorDesc,
    num: i32,
    dims: *const i64,
    storage: bool,
) -> i32 {
    boundary(name, || {
        with_desc(desc, "desc", |d| {
            non_null(dims, "dims")?;
            let v = read_dims(num, dims, "dims")?;
            if storage {
                d.storage_dims = v;
            } else {
                d.dims = v;
            }
            Ok(())
        })
    })
}

/// `aclError aclSetTensorStorageFormat(aclTensorDesc *desc, aclFormat format)` (deprecated):
/// as `aclSetTensorFormat`.
#[no_mangle]
pub extern "C" fn aclSetTensorStorageFormat(desc: *mut TensorDesc, format: i32) -> i32 {
    set_format("aclSetTensorStorageFormat", desc, format, true)
}

/// `aclError aclSetTensorStorageShape(aclTensorDesc *desc, int numDims, const int64_t *dims)`
/// (deprecated): as `aclSetTensorShape`.
#[no_mangle]
pub extern "C" fn aclSetTensorStorageShape(
    desc: *mut TensorDesc,
    numDims: i32,
    dims: *const i64,
) -> i32 {
    set_shape("aclSetTensorStorageShape", desc, numDims, dims, true)
}

/// `aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format)`: the storage format.
#[no_mangle]
pub extern "C" fn aclSetTensorFormat(desc: *mut TensorDesc, format: i32) -> i32 {
    set_format("aclSetTensorFormat", desc, format, true)
}

/// `aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims)`: the
/// storage shape (`dims` must not be NULL, even for 0 dims, as in CANN).
#[no_mangle]
pub extern "C" fn aclSetTensorShape(desc: *mut TensorDesc, numDims: i32, dims: *const i64) -> i32 {
    set_shape("aclSetTensorShape", desc, numDims, dims, true)
}

/// `aclError aclSetTensorOriginFormat(aclTensorDesc *desc, aclFormat format)`: the format the
/// getters report.
#[no_mangle]
pub extern "C" fn aclSetTensorOriginFormat(desc: *mut TensorDesc, format: i32) -> i32 {
    set_format("aclSetTensorOriginFormat", desc, format, false)
}

/// `aclError aclSetTensorOriginShape(aclTensorDesc *desc, int numDims, const int64_t *dims)`:
/// the shape the getters report.
#[no_mangle]
pub extern "C" fn aclSetTensorOriginShape(
    desc: *mut TensorDesc,
    numDims: i32,
    dims: *const i64,
) -> i32 {
    set_shape("aclSetTensorOriginShape", desc, numDims, dims, false)
}

/// `aclTensorDesc *aclGetTensorDescByIndex(aclTensorDesc *desc, size_t index)`: CANN returns
/// `desc + index` for descriptor arrays of model APIs; a descriptor of `aclCreateTensorDesc`
/// is an array of one, so index 0 gives it back and any other index is NULL with a message.
#[no_mangle]
pub extern "C" fn aclGetTensorDescByIndex(desc: *mut TensorDesc, index: usize) -> *mut TensorDesc {
    boundary_value("aclGetTensorDescByIndex", std::ptr::null_mut(), || {
        with_desc(desc, "desc", |_| {
            if index != 0 {
                return Err(Error::invalid(format!(
                    "index = {index} is out of range: a descriptor from aclCreateTensorDesc is \
                     an array of one (expected 0)"
                )));
            }
            Ok(desc)
        })
    })
}

/// `void *aclGetTensorDescAddress(const aclTensorDesc *desc)`: the device address model APIs
/// attach to a descriptor; NULL for descriptors of `aclCreateTensorDesc` (and for NULL, with
/// a message).
#[no_mangle]
pub extern "C" fn aclGetTensorDescAddress(desc: *const TensorDesc) -> *mut c_void {
    boundary_value("aclGetTensorDescAddress", std::ptr::null_mut(), || {
        with_desc(desc, "desc", |_| Ok(std::ptr::null_mut()))
    })
}

/// `aclError aclSetTensorDynamicInput(aclTensorDesc *desc, const char *dynamicInputName)`
#[no_mangle]
pub unsafe extern "C" fn aclSetTensorDynamicInput(
    desc: *mut TensorDesc,
    dynamicInputName: *const c_char,
) -> i32 {
    boundary("aclSetTensorDynamicInput", || {
        with_desc(desc, "desc", |d| {
            non_null(dynamicInputName, "dynamicInputName")?;
            // SAFETY: non-NULL, NUL-terminated per the ACL contract.
            let n = unsafe { CStr::from_ptr(dynamicInputName) };
            d.dynamic_input = Some(n.to_string_lossy().into_owned());
            Ok(())
        })
    })
}

/// `aclError aclSetTensorConst(aclTensorDesc *desc, void *dataBuffer, size_t length)`: the
/// host data is copied; `length` 0 is `ACL_ERROR_INVALID_PARAM`.
#[no_mangle]
pub extern "C" fn aclSetTensorConst(
    desc: *mut TensorDesc,
    dataBuffer: *mut c_void,
    length: usize,
) -> i32 {
    boundary("aclSetTensorConst", || {
        with_desc(desc, "desc", |d| {
            non_null(dataBuffer, "dataBuffer")?;
            if length == 0 {
                return Err(Error::new(
                    ACL_ERROR_INVALID_PARAM,
                    "length = 0 is invalid: the const data must have at least one byte",
                ));
            }
            if crate::mem::is_device_addr(dataBuffer as u64) {
                return Err(Error::invalid(format!(
                    "dataBuffer {dataBuffer:p} is device memory: the const data is read on the \
                     host (pass host memory)"
                )));
            }
            // SAFETY: non-NULL host memory of `length` bytes per the ACL contract.
            let bytes = unsafe { std::slice::from_raw_parts(dataBuffer as *const u8, length) };
            d.const_data = Some(bytes.to_vec());
            Ok(())
        })
    })
}

/// `aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType)`
#[no_mangle]
pub extern "C" fn aclSetTensorPlaceMent(desc: *mut TensorDesc, memType: i32) -> i32 {
    boundary("aclSetTensorPlaceMent", || {
        with_desc(desc, "desc", |d| {
            if !(0..=2).contains(&memType) {
                return Err(Error::invalid(format!(
                    "memType = {memType} is not an aclMemType: expected ACL_MEMTYPE_DEVICE (0), \
                     ACL_MEMTYPE_HOST (1) or ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT (2)"
                )));
            }
            d.placement = memType;
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_get_destroy() {
        let dims = [2i64, 3, 5, 7];
        let d = aclCreateTensorDesc(1, 4, dims.as_ptr(), 0);
        assert!(!d.is_null());
        assert_eq!(aclGetTensorDescType(d), 1);
        assert_eq!(aclGetTensorDescFormat(d), 0);
        assert_eq!(aclGetTensorDescNumDims(d), 4);
        assert_eq!(aclGetTensorDescElementCount(d), 210);
        assert_eq!(aclGetTensorDescSize(d), 420);
        assert_eq!(aclGetTensorDescDim(d, 3), 7);
        assert_eq!(aclGetTensorDescDim(d, 4), -1);
        aclDestroyTensorDesc(d);
        assert_eq!(aclGetTensorDescSize(d), 0);
        assert_eq!(aclGetTensorDescType(std::ptr::null()), -1);
    }

    #[test]
    fn scalar_dynamic_and_unknown_rank() {
        let s = aclCreateTensorDesc(0, 0, std::ptr::null(), 2);
        assert_eq!(aclGetTensorDescElementCount(s), 1);
        assert_eq!(aclGetTensorDescSize(s), 4);
        let dynd = [4i64, -1];
        let d = aclCreateTensorDesc(0, 2, dynd.as_ptr(), 2);
        assert_eq!(aclGetTensorDescSize(d), 0);
        let ur = [-2i64];
        let u = aclCreateTensorDesc(0, 1, ur.as_ptr(), 2);
        assert_eq!(aclGetTensorDescNumDims(u), UNKNOWN_RANK);
        assert!(aclCreateTensorDesc(0, -1, std::ptr::null(), 2).is_null());
        assert!(aclCreateTensorDesc(0, 1, std::ptr::null(), 2).is_null());
        for p in [s, d, u] {
            aclDestroyTensorDesc(p);
        }
    }
}
