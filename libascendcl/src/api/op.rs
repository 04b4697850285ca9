//! Single-operator API (`acl_op.h`, `acl_op_compiler.h`, abi.md §1.7): operator attributes
//! and the execute calls, with the one operator the emulator has, `TransData` (abi.md §5.4).
//!
//! Operators: `TransData` and `Cast` (also reached through `aclopCast`; the Cast section
//! below gives its element rules).
//!
//! `TransData`: 1 input, 1 output of the same data type; required string attrs `src_format`
//! and `dst_format` (CANN's names: "NCHW", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ", "ND", …),
//! optional int attrs `src_subformat`, `dst_subformat` (the sub-format, i.e. the group count
//! of FRACTAL_Z) and `groups` (default 1). Each tensor is taken in its storage format and
//! shape ([`TensorDesc::storage`]: `aclSetTensorFormat`/`aclSetTensorShape` if set, else the
//! format and shape of `aclCreateTensorDesc`); the attrs must name those formats (the legacy
//! `aclopTransData` wrapper's spelling "NCHW" for an ND tensor is accepted). The conversion is
//! planned by `npu_emu::formats` with GE's C0 rule and runs on the given stream, in order with
//! the stream's other tasks, reading and writing device memory through the node's checked
//! translation. The data buffers must be live device allocations at least as large as the
//! tensors.
//!
//! Error codes (CANN's single-op executor, `op_model_manager` / `AclOpMap::Get`):
//! - an op type with no operator model is `ACL_ERROR_OP_NOT_FOUND` (100024): CANN returns it
//!   when neither the static nor the dynamic op-model map has an entry for the op (and
//!   compile-and-execute of an op GE cannot build has no model either). Not
//!   `ACL_ERROR_OP_TYPE_NOT_MATCH` (a handle's type differs) nor `ACL_ERROR_API_NOT_SUPPORT`
//!   (the API itself is absent): the API works, the operator does not exist here.
//! - input / output tensors that match no model (count, shape, data type) are
//!   `ACL_ERROR_OP_INPUT_NOT_MATCH` (100021) / `ACL_ERROR_OP_OUTPUT_NOT_MATCH` (100022), as
//!   the op map's input/output lookups return; attrs that do not match are
//!   `ACL_ERROR_OP_ATTR_NOT_MATCH` (100023); a format pair TransData has no kernel for is
//!   `ACL_ERROR_FORMAT_NOT_MATCH` (100027); a data type without a layout is
//!   `ACL_ERROR_UNSUPPORTED_DATA_TYPE` (100026).
//! - NULL arguments, dynamic dims, and buffers that are too small or not device memory are
//!   `ACL_ERROR_INVALID_PARAM` (100000).
//!
//! Every failure records a message naming the op type and what is wrong.
//!
//! Attributes: every setter of CANN 8.x `acl_op.h` stores a typed value under its name (the
//! last call for a name wins): bool, int, float, string, data type, and the lists of those
//! plus list-of-list-of-int. A NULL or dead `attr` or a NULL `attrName` is
//! `ACL_ERROR_INVALID_PARAM`, and so are a negative count and a NULL array with a positive
//! count (a NULL array with count 0 is an empty list). Operators read only the attrs they
//! know and ignore the rest, so extra attrs do not stop a TransData or Cast; an attr they
//! need but of another kind is `ACL_ERROR_OP_ATTR_NOT_MATCH` naming both kinds.
//! Op models (`aclopSetModelDir`, `aclopLoad`), handles, `aclopCompile`, compile options,
//! custom kernels and `aclopInferShape` are not-supported stubs (abi/stubgen.rs).

use crate::api::helpers::{with_live, DataBuffer};
use crate::api::tensor_desc::{format_text, snapshot, TensorDesc};
use crate::ffi::{boundary, boundary_value, non_null};
use crate::globals::ATTRS;
use crate::runtime;
use npu_emu::codes::ACL_ERROR_INVALID_PARAM;
use npu_emu::formats::{self, C0Rule};
use npu_emu::kernels::{self, cast, Operand};
use npu_emu::Error;
use npu_emu_ffi::handles::HandleKind;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr};

const ACL_ERROR_OP_INPUT_NOT_MATCH: i32 = 100021;
const ACL_ERROR_OP_OUTPUT_NOT_MATCH: i32 = 100022;
const ACL_ERROR_OP_ATTR_NOT_MATCH: i32 = 100023;
const ACL_ERROR_OP_NOT_FOUND: i32 = 100024;
const ACL_ERROR_UNSUPPORTED_DATA_TYPE: i32 = 100026;
const ACL_ERROR_FORMAT_NOT_MATCH: i32 = 100027;

/// One attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Bool(bool),
    Int(i64),
    Float(f32),
    String(String),
    /// `aclDataType` value (`aclopSetAttrDataType`).
    DataType(i32),
    ListBool(Vec<bool>),
    ListInt(Vec<i64>),
    ListFloat(Vec<f32>),
    ListString(Vec<String>),
    ListListInt(Vec<Vec<i64>>),
    ListDataType(Vec<i32>),
}

impl AttrValue {
    fn kind(&self) -> &'static str {
        match self {
            AttrValue::Bool(_) => "bool (aclopSetAttrBool)",
            AttrValue::Int(_) => "int (aclopSetAttrInt)",
            AttrValue::Float(_) => "float (aclopSetAttrFloat)",
            AttrValue::String(_) => "string (aclopSetAttrString)",
            AttrValue::DataType(_) => "data type (aclopSetAttrDataType)",
            AttrValue::ListBool(_) => "list of bools (aclopSetAttrListBool)",
            AttrValue::ListInt(_) => "list of ints (aclopSetAttrListInt)",
            AttrValue::ListFloat(_) => "list of floats (aclopSetAttrListFloat)",
            AttrValue::ListString(_) => "list of strings (aclopSetAttrListString)",
            AttrValue::ListListInt(_) => "list of lists of ints (aclopSetAttrListListInt)",
            AttrValue::ListDataType(_) => "list of data types (aclopSetAttrListDataType)",
        }
    }
}

/// The object behind an `aclopAttr *`.
#[derive(Clone, Debug, Default)]
pub struct OpAttr {
    pub values: BTreeMap<String, AttrValue>,
}

/// What an `aclopAttr *` is: a handle of [`ATTRS`].
pub static ATTR: HandleKind = HandleKind::new(*b"OA", "aclopAttr", "aclopCreateAttr");

fn with_attr<T>(
    attr: *const OpAttr,
    f: impl FnOnce(&mut OpAttr) -> Result<T, Error>,
) -> Result<T, Error> {
    non_null(attr, "attr")?;
    let mut live = ATTRS.lock();
    f(live.get_mut(attr as u64, "attr")?)
}

/// `aclopAttr *aclopCreateAttr(void)`
#[no_mangle]
pub extern "C" fn aclopCreateAttr() -> *mut OpAttr {
    boundary_value("aclopCreateAttr", std::ptr::null_mut(), || {
        Ok(ATTRS.lock().insert(OpAttr::default()) as *mut OpAttr)
    })
}

/// `void aclopDestroyAttr(const aclopAttr *attr)`: NULL is a no-op; a destroyed or foreign
/// pointer leaves a message and is not touched.
#[no_mangle]
pub extern "C" fn aclopDestroyAttr(attr: *const OpAttr) {
    boundary_value("aclopDestroyAttr", (), || {
        if attr.is_null() {
            return Ok(());
        }
        ATTRS.lock().remove(attr as u64, "attr")?;
        Ok(())
    })
}

fn c_str(p: *const c_char, arg: &str) -> Result<String, Error> {
    non_null(p, arg)?;
    // SAFETY: non-NULL, NUL-terminated per the ACL contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn set_attr(
    name: &'static str,
    attr: *mut OpAttr,
    attr_name: *const c_char,
    value: impl FnOnce() -> Result<AttrValue, Error>,
) -> i32 {
    boundary(name, || {
        with_attr(attr, |a| {
            let n = c_str(attr_name, "attrName")?;
            let v = value()?;
            a.values.insert(n, v);
            Ok(())
        })
    })
}

/// `aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue)`
#[no_mangle]
pub extern "C" fn aclopSetAttrBool(
    attr: *mut OpAttr,
    attrName: *const c_char,
    attrValue: u8,
) -> i32 {
    set_attr("aclopSetAttrBool", attr, attrName, || {
        Ok(AttrValue::Bool(attrValue != 0))
    })
}

/// `aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue)`
#[no_mangle]
pub extern "C" fn aclopSetAttrInt(
    attr: *mut OpAttr,
    attrName: *const c_char,
    attrValue: i64,
) -> i32 {
    set_attr("aclopSetAttrInt", attr, attrName, || {
        Ok(AttrValue::Int(attrValue))
    })
}

/// `aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue)`
#[no_mangle]
pub extern "C" fn aclopSetAttrFloat(
    attr: *mut OpAttr,
    attrName: *const c_char,
    attrValue: f32,
) -> i32 {
    set_attr("aclopSetAttrFloat", attr, attrName, || {
        Ok(AttrValue::Float(attrValue))
    })
}

/// `aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue)`
#[no_mangle]
pub extern "C" fn aclopSetAttrString(
    attr: *mut OpAttr,
    attrName: *const c_char,
    attrValue: *const c_char,
) -> i32 {
    set_attr("aclopSetAttrString", attr, attrName, || {
        Ok(AttrValue::String(c_str(attrValue, "attrValue")?))
    })
}

/// The `numValues` elements at `values` as a slice: `numValues` must be 0 or more, and
/// `values` non-NULL when it is above 0 (NULL with 0 is an empty list, as in CANN).
fn list<'a, T>(values: *const T, num: i32, count_arg: &str, arg: &str) -> Result<&'a [T], Error> {
    if num < 0 {
        return Err(Error::invalid(format!(
            "argument {count_arg} = {num} is invalid: expected 0 or more"
        )));
    }
    if num == 0 {
        return Ok(&[]);
    }
    if values.is_null() {
        return Err(Error::invalid(format!(
            "argument {arg} is NULL but {count_arg} = {num}: expected an array of {num} values"
        )));
    }
    // SAFETY: the caller passes an array of `num` elements (ACL contract).
    Ok(unsafe { std::slice::from_raw_parts(values, num as usize) })
}

/// `aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue)`
#[no_mangle]
pub extern "C" fn aclopSetAttrDataType(
    attr: *mut OpAttr,
    attrName: *const c_char,
    attrValue: i32,
) -> i32 {
    set_attr("aclopSetAttrDataType", attr, attrName, || {
        Ok(AttrValue::DataType(attrValue))
    })
}

/// `aclError aclopSetAttrListDataType(aclopAttr *attr, const char *attrName, int numValues,
/// const aclDataType values[])`
#[no_mangle]
pub extern "C" fn aclopSetAttrListDataType(
    attr: *mut OpAttr,
    attrName: *const c_char,
    numValues: i32,
    values: *const i32,
) -> i32 {
    set_attr("aclopSetAttrListDataType", attr, attrName, || {
        let v = list(values, numValues, "numValues", "values")?;
        Ok(AttrValue::ListDataType(v.to_vec()))
    })
}

/// `aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
/// const uint8_t *values)`: 0 is false, anything else true.
#[no_mangle]
pub extern "C" fn aclopSetAttrListBool(
    attr: *mut OpAttr,
    attrName: *const c_char,
    numValues: i32,
    values: *const u8,
) -> i32 {
    set_attr("aclopSetAttrListBool", attr, attrName, || {
        let v = list(values, numValues, "numValues", "values")?;
        Ok(AttrValue::ListBool(v.iter().map(|&b| b != 0).collect()))
    })
}

/// `aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
/// const int64_t *values)`
#[no_mangle]
pub extern "C" fn aclopSetAttrListInt(
    attr: *mut OpAttr,
    attrName: *const c_char,
    numValues: i32,
    values: *const i64,
) -> i32 {
    set_attr("aclopSetAttrListInt", attr, attrName, || {
        let v = list(values, numValues, "numValues", "values")?;
        Ok(AttrValue::ListInt(v.to_vec()))
    })
}

/// `aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
/// const float *values)`
#[no_mangle]
pub extern "C" fn aclopSetAttrListFloat(
    attr: *mut OpAttr,
    attrName: *const c_char,
    numValues: i32,
    values: *const f32,
) -> i32 {
    set_attr("aclopSetAttrListFloat", attr, attrName, || {
        let v = list(values, numValues, "numValues", "values")?;
        Ok(AttrValue::ListFloat(v.to_vec()))
    })
}

/// `aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues,
/// const char **values)`: every element must be a non-NULL string.
#[no_mangle]
pub extern "C" fn aclopSetAttrListString(
    attr: *mut OpAttr,
    attrName: *const c_char,
    numValues: i32,
    values: *const *const c_char,
) -> i32 {
    set_attr("aclopSetAttrListString", attr, attrName, || {
        let v = list(values, numValues, "numValues", "values")?;
        let strings = v
            .iter()
            .enumerate()
            .map(|(i, &p)| c_str(p, &format!("values[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AttrValue::ListString(strings))
    })
}

/// `aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists,
/// const int *numValues, const int64_t *const values[])`: list `i` has `numValues[i]`
/// elements at `values[i]`.
#[no_mangle]
pub extern "C" fn aclopSetAttrListListInt(
    attr: *mut OpAttr,
    attrName: *const c_char,
    numLists: i32,
    numValues: *const i32,
    values: *const *const i64,
) -> i32 {
    set_attr("aclopSetAttrListListInt", attr, attrName, || {
        let counts = list(numValues, numLists, "numLists", "numValues")?;
        let ptrs = list(values, numLists, "numLists", "values")?;
        let lists = counts
            .iter()
            .zip(ptrs)
            .enumerate()
            .map(|(i, (&n, &p))| {
                list(p, n, &format!("numValues[{i}]"), &format!("values[{i}]")).map(|s| s.to_vec())
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AttrValue::ListListInt(lists))
    })
}

/// The arguments every execute call shares.
struct Call {
    op_type: *const c_char,
    num_inputs: i32,
    input_desc: *const *const TensorDesc,
    inputs: *const *const DataBuffer,
    num_outputs: i32,
    output_desc: *const *const TensorDesc,
    outputs: *const *const DataBuffer,
    attr: *const OpAttr,
    stream: *mut c_void,
}

fn element<T>(arr: *const *const T, i: usize, arg: &str) -> Result<*const T, Error> {
    // SAFETY: non-NULL array (checked by the caller) of at least `num` pointers per the
    // ACL contract; `i < num`.
    let p = unsafe { arr.add(i).read_unaligned() };
    non_null(p, &format!("{arg}[{i}]"))?;
    Ok(p)
}

fn check_arrays(c: &Call) -> Result<(), Error> {
    for (n, what) in [(c.num_inputs, "numInputs"), (c.num_outputs, "numOutputs")] {
        if n < 0 {
            return Err(Error::invalid(format!(
                "{what} = {n} is invalid: expected 0 or more"
            )));
        }
    }
    if c.num_inputs > 0 {
        non_null(c.input_desc, "inputDesc")?;
        non_null(c.inputs, "inputs")?;
    }
    if c.num_outputs > 0 {
        non_null(c.output_desc, "outputDesc")?;
        non_null(c.outputs, "outputs")?;
    }
    Ok(())
}

/// Run one operator call: validate, then enqueue on the stream.
fn execute(api: &'static str, c: Call) -> Result<(), Error> {
    let op_type = c_str(c.op_type, "opType")?;
    check_arrays(&c)?;
    match op_type.as_str() {
        "TransData" => trans_data(api, &c),
        "Cast" => cast_op(api, &c),
        other => Err(Error::new(
            ACL_ERROR_OP_NOT_FOUND,
            format!(
                "op type \"{other}\" is not supported: npu-emu has no operator model for it \
                 (the emulated operators are: TransData, Cast). {}",
                crate::api::fallback::explain(other)
            ),
        )),
    }
}

/// The TransData attributes.
struct TransAttrs {
    src_format: String,
    dst_format: String,
    groups: i64,
    /// Whether `groups` came from an attr (else it is the default 1).
    explicit_groups: bool,
}

fn trans_attrs(attr: *const OpAttr) -> Result<TransAttrs, Error> {
    if attr.is_null() {
        return Err(Error::new(
            ACL_ERROR_OP_ATTR_NOT_MATCH,
            "op type \"TransData\" needs the string attrs src_format and dst_format, but attr \
             is NULL (create one with aclopCreateAttr and set them with aclopSetAttrString)",
        ));
    }
    let values = with_attr(attr, |a| Ok(a.values.clone()))?;
    let string = |k: &str| -> Result<String, Error> {
        match values.get(k) {
            Some(AttrValue::String(s)) => Ok(s.clone()),
            Some(v) => Err(Error::new(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                format!(
                    "op type \"TransData\": attr {k} must be a string (aclopSetAttrString), \
                     but it was set as a {}",
                    v.kind()
                ),
            )),
            None => Err(Error::new(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                format!(
                    "op type \"TransData\" needs the string attr {k} (e.g. \"NCHW\", \
                     \"NC1HWC0\", \"FRACTAL_NZ\"), which is not set"
                ),
            )),
        }
    };
    let int = |k: &str| -> Result<Option<i64>, Error> {
        match values.get(k) {
            Some(AttrValue::Int(v)) => Ok(Some(*v)),
            Some(v) => Err(Error::new(
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                format!(
                    "op type \"TransData\": attr {k} must be an int (aclopSetAttrInt), but it \
                     was set as a {}",
                    v.kind()
                ),
            )),
            None => Ok(None),
        }
    };
    let src_format = string("src_format")?;
    let dst_format = string("dst_format")?;
    let groups_attr = int("groups")?;
    let sub = [int("src_subformat")?, int("dst_subformat")?];
    for (k, v) in [
        ("groups", groups_attr),
        ("src_subformat", sub[0]),
        ("dst_subformat", sub[1]),
    ] {
        if let Some(v) = v {
            if v < 0 || (k == "groups" && v == 0) {
                return Err(Error::new(
                    ACL_ERROR_OP_ATTR_NOT_MATCH,
                    format!(
                        "op type \"TransData\": attr {k} = {v} is invalid: expected {}",
                        if k == "groups" {
                            "1 or more"
                        } else {
                            "0 or more"
                        }
                    ),
                ));
            }
        }
    }
    // The sub-format of FRACTAL_Z is its group count; it must agree with `groups`.
    let sub_groups: Vec<i64> = sub.iter().flatten().copied().filter(|&v| v > 1).collect();
    let groups = groups_attr.or(sub_groups.first().copied()).unwrap_or(1);
    if let Some(&g) = sub_groups.iter().find(|&&g| g != groups) {
        return Err(Error::new(
            ACL_ERROR_OP_ATTR_NOT_MATCH,
            format!(
                "op type \"TransData\": the sub-format (group count) {g} disagrees with groups \
                 = {groups}"
            ),
        ));
    }
    Ok(TransAttrs {
        src_format,
        dst_format,
        groups,
        explicit_groups: groups_attr.is_some() || !sub_groups.is_empty(),
    })
}

/// The rank of a plain format an ND descriptor may stand for in TransData's attrs.
fn plain_rank(format: i32) -> Option<usize> {
    use formats::{
        FORMAT_CN, FORMAT_DHWCN, FORMAT_HWCN, FORMAT_NC, FORMAT_NCDHW, FORMAT_NCHW, FORMAT_NCL,
        FORMAT_NDHWC, FORMAT_NHWC,
    };
    match format {
        FORMAT_NCHW | FORMAT_NHWC | FORMAT_HWCN => Some(4),
        FORMAT_NCDHW | FORMAT_NDHWC | FORMAT_DHWCN => Some(5),
        FORMAT_NC | FORMAT_CN => Some(2),
        FORMAT_NCL => Some(3),
        _ => None,
    }
}

/// An ND descriptor says nothing about what its dimensions mean; TransData's format attr
/// does: an ND tensor whose attr names a plain format of the same rank (NCHW, NHWC, HWCN,
/// NCDHW, NDHWC, DHWCN, NC, CN, NCL) is converted as that format, as CANN's kernel reads
/// the attr.
fn nd_as_attr(actual: i32, attr: &str, rank: usize) -> i32 {
    if actual & 0xff != formats::FORMAT_ND {
        return actual;
    }
    match formats::format_from_name(attr) {
        Some(named) if plain_rank(named) == Some(rank) => named,
        _ => actual,
    }
}

/// The attr naming a tensor's format must name `actual` (the descriptor's storage format),
/// or any plain format when the descriptor is ND ([`nd_as_attr`]).
fn check_format_attr(key: &str, name: &str, actual: i32, side: &str) -> Result<(), Error> {
    let named = formats::format_from_name(name);
    let primary = actual & 0xff;
    let legacy_nd = primary == formats::FORMAT_ND && named.is_some_and(|f| plain_rank(f).is_some());
    if named.is_some_and(|f| f & 0xff == primary) || legacy_nd {
        return Ok(());
    }
    let why = if named.is_none() {
        "which is not a format name"
    } else {
        "which is not the descriptor's format"
    };
    Err(Error::new(
        ACL_ERROR_OP_ATTR_NOT_MATCH,
        format!(
            "op type \"TransData\": attr {key} = \"{name}\", {why}: the {side} descriptor \
             stores its data as {}",
            format_text(actual)
        ),
    ))
}

/// The first data buffer of `arr` as the device range of `need` bytes the operator uses.
fn buffer(
    arr: *const *const DataBuffer,
    arg: &str,
    need: usize,
    what: &str,
    op: &str,
) -> Result<Operand, Error> {
    let b = element(arr, 0, arg)?;
    let (data, size) = with_live(b, |b| (b.data as u64, b.size))?;
    if size < need {
        return Err(Error::invalid(format!(
            "op type \"{op}\": {arg}[0] holds {size} bytes, but the {what} needs {need} \
             bytes"
        )));
    }
    if need > 0 && data == 0 {
        return Err(Error::invalid(format!(
            "op type \"{op}\": {arg}[0] has a NULL data address"
        )));
    }
    Ok(Operand {
        addr: data,
        len: need as u64,
    })
}

fn static_shape(shape: &[i64], side: &str, op: &str) -> Result<(), Error> {
    if shape.iter().any(|&d| d < 0) {
        return Err(Error::invalid(format!(
            "op type \"{op}\": the {side} shape {shape:?} has a dynamic dim (-1/-2); \
             tensor descriptors must be static when executing"
        )));
    }
    Ok(())
}

fn trans_data(api: &'static str, c: &Call) -> Result<(), Error> {
    if c.num_inputs != 1 {
        return Err(Error::new(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            format!(
                "op type \"TransData\" has 1 input, but numInputs = {}",
                c.num_inputs
            ),
        ));
    }
    if c.num_outputs != 1 {
        return Err(Error::new(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            format!(
                "op type \"TransData\" has 1 output, but numOutputs = {}",
                c.num_outputs
            ),
        ));
    }
    let src = snapshot(element(c.input_desc, 0, "inputDesc")?, "inputDesc[0]")?;
    let dst = snapshot(element(c.output_desc, 0, "outputDesc")?, "outputDesc[0]")?;
    let attrs = trans_attrs(c.attr)?;
    if src.dtype != dst.dtype {
        return Err(Error::new(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            format!(
                "op type \"TransData\": the output data type {} differs from the input data \
                 type {} (TransData only moves elements)",
                dst.dtype, src.dtype
            ),
        ));
    }
    let dtype = src.dtype;
    if formats::dtype_size(dtype).is_none() {
        return Err(Error::new(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            format!("op type \"TransData\": data type {dtype} has no private-format layout"),
        ));
    }
    for (d, side) in [(&src, "input"), (&dst, "output")] {
        static_shape(&d.dims, side, "TransData")?;
        static_shape(&d.storage_dims, side, "TransData")?;
    }
    // A packed format value may carry the group count as its sub-format (GE: bits 8..23).
    let packed = [
        src.storage_format,
        src.format,
        dst.storage_format,
        dst.format,
    ]
    .iter()
    .filter(|&&f| f >= 0)
    .map(|&f| i64::from((f >> 8) & 0xffff))
    .find(|&g| g > 1);
    let groups = match (attrs.explicit_groups, packed) {
        (false, Some(g)) => g,
        _ => attrs.groups,
    };
    let (sf, sshape) = src.storage(groups)?;
    let (df, dshape) = dst.storage(groups)?;
    check_format_attr("src_format", &attrs.src_format, sf, "input")?;
    check_format_attr("dst_format", &attrs.dst_format, df, "output")?;
    let sf = nd_as_attr(sf, &attrs.src_format, sshape.len());
    let df = nd_as_attr(df, &attrs.dst_format, dshape.len());
    let req = formats::Request {
        src_format: sf,
        src_shape: &sshape,
        dst_format: df,
        dst_shape: Some(&dshape),
        dtype,
        groups,
        rule: C0Rule::Ge,
    };
    let plan = match formats::plan(&req) {
        Ok(p) => p,
        Err(e) => return Err(plan_error(&req, e)),
    };
    let (src_bytes, dst_bytes) = (plan.src_bytes(), plan.dst_bytes());
    run_unary(api, "TransData", c, src_bytes, dst_bytes, move |s, d| {
        plan.run(s, d).map_err(|e| e.to_string())
    })
}

/// Check the one input and output buffer of a unary operator for `src_bytes` /
/// `dst_bytes`, then enqueue `f(input, output)` on the call's stream
/// ([`kernels::enqueue_unary`]: both device ranges checked now and when the stream runs it).
fn run_unary(
    api: &'static str,
    op: &'static str,
    c: &Call,
    src_bytes: usize,
    dst_bytes: usize,
    f: impl FnOnce(&[u8], &mut [u8]) -> Result<(), String> + Send + 'static,
) -> Result<(), Error> {
    let inb = buffer(c.inputs, "inputs", src_bytes, "input", op)?;
    let outb = buffer(c.outputs, "outputs", dst_bytes, "output", op)?;
    let rt = runtime::get()?;
    let stream = rt.stream(c.stream)?;
    kernels::enqueue_unary(&rt, &stream, api, op, inb, outb, f)
}

/// Tell apart why `formats::plan` refused: no conversion between the formats, or shapes
/// that do not fit (which side).
fn plan_error(req: &formats::Request, e: formats::FormatError) -> Error {
    let (sf, df, dtype, groups) = (req.src_format, req.dst_format, req.dtype, req.groups);
    let pair = format!("{} to {}", format_text(sf), format_text(df));
    if groups > 1
        && !formats::pair_supported(sf, df, dtype, groups)
        && formats::pair_supported(sf, df, dtype, 1)
    {
        return Error::new(
            ACL_ERROR_OP_ATTR_NOT_MATCH,
            format!("op type \"TransData\": groups = {groups} does not fit converting {pair}: {e}"),
        );
    }
    if !formats::pair_supported(sf, df, dtype, groups) {
        return Error::new(
            ACL_ERROR_FORMAT_NOT_MATCH,
            format!(
                "op type \"TransData\": converting {pair} (data type {dtype}, groups {groups}) \
                 is not supported: {e}"
            ),
        );
    }
    let dshape = req.dst_shape.unwrap_or(&[]);
    // Forward (plain → private): the input shape decides the output shape.
    let fwd = formats::plan(&formats::Request {
        dst_shape: None,
        ..*req
    });
    if let Ok(p) = fwd {
        return Error::new(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            format!(
                "op type \"TransData\": the output shape {dshape:?} does not match the input: \
                 input shape {:?} converted {pair} is {:?}",
                req.src_shape,
                p.dst_shape()
            ),
        );
    }
    // Inverse (private → plain): the output (logical) shape decides the input shape.
    if let Ok(expect) = formats::storage_shape(df, dshape, sf, dtype, groups, C0Rule::Ge) {
        return Error::new(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            format!(
                "op type \"TransData\": the input shape {:?} does not match the output: \
                 output shape {dshape:?} stored as {} is {expect:?} ({pair})",
                req.src_shape,
                format_text(sf)
            ),
        );
    }
    Error::new(
        ACL_ERROR_OP_INPUT_NOT_MATCH,
        format!(
            "op type \"TransData\": input shape {:?} and output shape {dshape:?} do not fit \
             a conversion {pair}: {e}",
            req.src_shape
        ),
    )
}

/// `aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
/// aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
/// aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclopExecuteV2(
    opType: *const c_char,
    numInputs: i32,
    inputDesc: *const *const TensorDesc,
    inputs: *const *const DataBuffer,
    numOutputs: i32,
    outputDesc: *const *const TensorDesc,
    outputs: *const *const DataBuffer,
    attr: *const OpAttr,
    stream: *mut c_void,
) -> i32 {
    boundary("aclopExecuteV2", || {
        execute(
            "aclopExecuteV2",
            Call {
                op_type: opType,
                num_inputs: numInputs,
                input_desc: inputDesc,
                inputs,
                num_outputs: numOutputs,
                output_desc: outputDesc,
                outputs,
                attr,
                stream,
            },
        )
    })
}

/// `aclError aclopExecute(…)` (deprecated): as `aclopExecuteV2` with const arrays.
#[no_mangle]
pub unsafe extern "C" fn aclopExecute(
    opType: *const c_char,
    numInputs: i32,
    inputDesc: *const *const TensorDesc,
    inputs: *const *const DataBuffer,
    numOutputs: i32,
    outputDesc: *const *const TensorDesc,
    outputs: *const *const DataBuffer,
    attr: *const OpAttr,
    stream: *mut c_void,
) -> i32 {
    boundary("aclopExecute", || {
        execute(
            "aclopExecute",
            Call {
                op_type: opType,
                num_inputs: numInputs,
                input_desc: inputDesc,
                inputs,
                num_outputs: numOutputs,
                output_desc: outputDesc,
                outputs,
                attr,
                stream,
            },
        )
    })
}

/// `engineType` must be an `aclopEngineType` (0..=2) and `compileFlag` an
/// `aclopCompileType` (0..=1); `opPath` (a custom operator directory) may be NULL and is not
/// read: the emulated operators need no compilation.
fn check_compile(engine: i32, flag: i32) -> Result<(), Error> {
    if !(0..=2).contains(&engine) {
        return Err(Error::new(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "engineType = {engine} is not an aclopEngineType: expected ACL_ENGINE_SYS (0), \
                 ACL_ENGINE_AICORE (1) or ACL_ENGINE_VECTOR (2)"
            ),
        ));
    }
    if !(0..=1).contains(&flag) {
        return Err(Error::new(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "compileFlag = {flag} is not an aclopCompileType: expected ACL_COMPILE_SYS (0) \
                 or ACL_COMPILE_UNREGISTERED (1)"
            ),
        ));
    }
    Ok(())
}

/// `aclError aclopCompileAndExecute(…, aclopEngineType engineType, aclopCompileType
/// compileFlag, const char *opPath, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclopCompileAndExecute(
    opType: *const c_char,
    numInputs: i32,
    inputDesc: *const *const TensorDesc,
    inputs: *const *const DataBuffer,
    numOutputs: i32,
    outputDesc: *const *const TensorDesc,
    outputs: *const *const DataBuffer,
    attr: *const OpAttr,
    engineType: i32,
    compileFlag: i32,
    _opPath: *const c_char,
    stream: *mut c_void,
) -> i32 {
    boundary("aclopCompileAndExecute", || {
        check_compile(engineType, compileFlag)?;
        execute(
            "aclopCompileAndExecute",
            Call {
                op_type: opType,
                num_inputs: numInputs,
                input_desc: inputDesc,
                inputs,
                num_outputs: numOutputs,
                output_desc: outputDesc,
                outputs,
                attr,
                stream,
            },
        )
    })
}

/// `aclError aclopCompileAndExecuteV2(…)`: as `aclopCompileAndExecute` with non-const arrays.
#[no_mangle]
pub unsafe extern "C" fn aclopCompileAndExecuteV2(
    opType: *const c_char,
    numInputs: i32,
    inputDesc: *const *const TensorDesc,
    inputs: *const *const DataBuffer,
    numOutputs: i32,
    outputDesc: *const *const TensorDesc,
    outputs: *const *const DataBuffer,
    attr: *const OpAttr,
    engineType: i32,
    compileFlag: i32,
    _opPath: *const c_char,
    stream: *mut c_void,
) -> i32 {
    boundary("aclopCompileAndExecuteV2", || {
        check_compile(engineType, compileFlag)?;
        execute(
            "aclopCompileAndExecuteV2",
            Call {
                op_type: opType,
                num_inputs: numInputs,
                input_desc: inputDesc,
                inputs,
                num_outputs: numOutputs,
                output_desc: outputDesc,
                outputs,
                attr,
                stream,
            },
        )
    })
}

// ---------------------------------------------------------------------------------------
// Cast (`aclopCast`, and op type "Cast": 1 input, 1 output of the same format and shape;
// optional attrs `dst_type` (int, must be the output's data type) and `truncate` (bool,
// reserved as in CANN's aclopCast documentation, ignored)). The element rules are the
// kernel's: `npu_emu::kernels::cast`.
// ---------------------------------------------------------------------------------------

/// Validate and enqueue a Cast of the call's one input into its one output.
fn cast_op(api: &'static str, c: &Call) -> Result<(), Error> {
    if c.num_inputs != 1 {
        return Err(Error::new(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            format!(
                "op type \"Cast\" has 1 input, but numInputs = {}",
                c.num_inputs
            ),
        ));
    }
    if c.num_outputs != 1 {
        return Err(Error::new(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            format!(
                "op type \"Cast\" has 1 output, but numOutputs = {}",
                c.num_outputs
            ),
        ));
    }
    let src = snapshot(element(c.input_desc, 0, "inputDesc")?, "inputDesc[0]")?;
    let dst = snapshot(element(c.output_desc, 0, "outputDesc")?, "outputDesc[0]")?;
    if !c.attr.is_null() {
        let values = with_attr(c.attr, |a| Ok(a.values.clone()))?;
        match values.get("dst_type") {
            None | Some(AttrValue::Int(_)) => {}
            Some(v) => {
                return Err(Error::new(
                    ACL_ERROR_OP_ATTR_NOT_MATCH,
                    format!(
                        "op type \"Cast\": attr dst_type must be an int (aclopSetAttrInt), but \
                         it was set as a {}",
                        v.kind()
                    ),
                ))
            }
        }
        if let Some(AttrValue::Int(t)) = values.get("dst_type") {
            if *t != i64::from(dst.dtype) {
                return Err(Error::new(
                    ACL_ERROR_OP_ATTR_NOT_MATCH,
                    format!(
                        "op type \"Cast\": attr dst_type = {t} is not the output descriptor's \
                         data type {}",
                        dst.dtype
                    ),
                ));
            }
        }
    }
    cast_descs(api, c, &src, &dst)
}

fn cast_descs(
    api: &'static str,
    c: &Call,
    src: &TensorDesc,
    dst: &TensorDesc,
) -> Result<(), Error> {
    for (d, side) in [(src, "input"), (dst, "output")] {
        if cast::element_size(d.dtype).is_none() {
            return Err(Error::new(
                ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                format!(
                    "op type \"Cast\": the {side} data type {} is not supported (supported: \
                     float, float16, bfloat16, double, bool, int8/16/32/64, uint8/16/32/64)",
                    d.dtype
                ),
            ));
        }
        static_shape(&d.dims, side, "Cast")?;
        static_shape(&d.storage_dims, side, "Cast")?;
    }
    let (sf, sshape) = src.storage(1)?;
    let (df, dshape) = dst.storage(1)?;
    if sf & 0xff != df & 0xff {
        return Err(Error::new(
            ACL_ERROR_FORMAT_NOT_MATCH,
            format!(
                "op type \"Cast\": the output format {} differs from the input format {} (Cast \
                 converts data types only; use TransData for formats)",
                format_text(df),
                format_text(sf)
            ),
        ));
    }
    let n = crate::api::tensor_desc::element_count(&sshape)?;
    if sshape != dshape {
        return Err(Error::new(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            format!(
                "op type \"Cast\": the output shape {dshape:?} differs from the input shape \
                 {sshape:?}"
            ),
        ));
    }
    let (sdt, ddt) = (src.dtype, dst.dtype);
    let (ss, ds) = (
        cast::element_size(sdt).unwrap_or(1),
        cast::element_size(ddt).unwrap_or(1),
    );
    let bytes = |k: usize| {
        n.checked_mul(k).ok_or_else(|| {
            Error::invalid(format!("op type \"Cast\": shape {sshape:?} is too large"))
        })
    };
    let (sb, db) = (bytes(ss)?, bytes(ds)?);
    run_unary(api, "Cast", c, sb, db, move |s, d| {
        cast::convert(sdt, ddt, n, s, d);
        Ok(())
    })
}

/// `aclError aclopCast(const aclTensorDesc *srcDesc, const aclDataBuffer *srcBuffer,
/// const aclTensorDesc *dstDesc, aclDataBuffer *dstBuffer, uint8_t truncate,
/// aclrtStream stream)`: the data type conversion of the "Cast" operator on `stream`;
/// `truncate` is reserved (CANN's documentation) and not read.
#[no_mangle]
pub unsafe extern "C" fn aclopCast(
    srcDesc: *const TensorDesc,
    srcBuffer: *const DataBuffer,
    dstDesc: *const TensorDesc,
    dstBuffer: *const DataBuffer,
    _truncate: u8,
    stream: *mut c_void,
) -> i32 {
    boundary("aclopCast", || {
        non_null(srcDesc, "srcDesc")?;
        non_null(srcBuffer, "srcBuffer")?;
        non_null(dstDesc, "dstDesc")?;
        non_null(dstBuffer, "dstBuffer")?;
        let ind = [srcDesc];
        let outd = [dstDesc];
        let inb = [srcBuffer];
        let outb = [dstBuffer];
        let c = Call {
            op_type: std::ptr::null(),
            num_inputs: 1,
            input_desc: ind.as_ptr(),
            inputs: inb.as_ptr(),
            num_outputs: 1,
            output_desc: outd.as_ptr(),
            outputs: outb.as_ptr(),
            attr: std::ptr::null(),
            stream,
        };
        let src = snapshot(srcDesc, "srcDesc")?;
        let dst = snapshot(dstDesc, "dstDesc")?;
        cast_descs("aclopCast", &c, &src, &dst)
    })
}
