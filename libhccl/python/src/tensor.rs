//! The tensors a call takes: NPU tensors of torch_npu (used in place: device pointer, dtype,
//! element count and contiguity checked), and host memory — torch CPU tensors, anything with
//! the buffer protocol (numpy, `bytearray`, `array.array`, `memoryview`) or `__dlpack__` —
//! which the call stages through device memory.

use crate::errors::{Error, Result};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use std::ffi::{c_char, c_int, c_void, CStr};

/// The element types HCCL moves (abi.md §2.4), and `bool` (moved as `UINT8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    Bool,
}

impl DType {
    /// The `HcclDataType` value.
    pub fn hccl(self) -> i32 {
        match self {
            DType::I8 => 0,
            DType::I16 => 1,
            DType::I32 => 2,
            DType::F16 => 3,
            DType::F32 => 4,
            DType::I64 => 5,
            DType::U64 => 6,
            DType::U8 | DType::Bool => 7,
            DType::U16 => 8,
            DType::U32 => 9,
            DType::F64 => 10,
            DType::BF16 => 11,
        }
    }
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Bool => "bool",
        }
    }
    fn from_name(n: &str) -> Option<DType> {
        Some(match n {
            "int8" => DType::I8,
            "int16" => DType::I16,
            "int32" => DType::I32,
            "int64" => DType::I64,
            "uint8" => DType::U8,
            "uint16" => DType::U16,
            "uint32" => DType::U32,
            "uint64" => DType::U64,
            "float16" => DType::F16,
            "bfloat16" => DType::BF16,
            "float32" => DType::F32,
            "float64" => DType::F64,
            "bool" => DType::Bool,
            _ => return None,
        })
    }
}

pub const SUPPORTED: &str = "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, \
                             bfloat16, float32, float64 (and bool for the calls that do not reduce)";

/// Where a tensor's memory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Device memory of this NPU (a torch_npu tensor).
    Npu(i32),
    Host,
}

/// What keeps a tensor's memory valid while a call uses it.
enum Keep {
    Obj(#[allow(dead_code)] Py<PyAny>),
    Buffer(Box<PyBufferView>),
    DLPack {
        _capsule: Py<PyAny>,
        managed: usize,
        versioned: bool,
    },
}

/// One tensor argument, checked.
pub struct Tensor {
    /// The argument's name, for messages ("tensor", "output", "input").
    pub arg: &'static str,
    pub place: Place,
    /// Address of the first element.
    pub ptr: usize,
    pub dtype: DType,
    pub count: u64,
    pub writable: bool,
    /// `[4, 4]`, for messages.
    pub shape: String,
    keep: Keep,
}

impl Tensor {
    pub fn bytes(&self) -> usize {
        self.count as usize * self.dtype.size()
    }
    pub fn describe(&self) -> String {
        let place = match self.place {
            Place::Npu(d) => format!("npu:{d}"),
            Place::Host => "host".to_string(),
        };
        format!(
            "{} {} with shape {} ({} elements)",
            place,
            self.dtype.name(),
            self.shape,
            self.count
        )
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        match &mut self.keep {
            Keep::Obj(_) => {}
            Keep::Buffer(view) => {
                Python::attach(|_| {
                    // SAFETY: the view was filled by a successful PyObject_GetBuffer and is
                    // released exactly once, with the GIL held.
                    unsafe { PyBuffer_Release(&mut view.0) }
                });
            }
            Keep::DLPack {
                managed, versioned, ..
            } => {
                let (m, v) = (*managed, *versioned);
                Python::attach(|_| {
                    // SAFETY: `m` is the DLManagedTensor(Versioned) this module consumed from
                    // its capsule (renamed "used_..." so the capsule will not free it); the
                    // DLPack protocol makes the consumer call its deleter once, and producers
                    // may touch Python objects in it, so the GIL is held.
                    unsafe {
                        if v {
                            let p = m as *mut DLManagedTensorVersioned;
                            if let Some(d) = (*p).deleter {
                                d(p)
                            }
                        } else {
                            let p = m as *mut DLManagedTensor;
                            if let Some(d) = (*p).deleter {
                                d(p)
                            }
                        }
                    }
                });
            }
        }
    }
}

// The buffer protocol is in the limited API only from Python 3.11; this module supports 3.9
// (abi3-py39), so the two functions and the struct (unchanged since 3.3) are declared here.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: isize,
    itemsize: isize,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut isize,
    strides: *mut isize,
    suboffsets: *mut isize,
    internal: *mut c_void,
}
struct PyBufferView(RawBuffer);
// SAFETY: the view is only read or released with the GIL held (Tensor::drop attaches).
unsafe impl Send for PyBufferView {}
const PYBUF_FORMAT: c_int = 0x0004;
const PYBUF_STRIDES: c_int = 0x0010 | 0x0008;
extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

// DLPack's three C structs (dlpack.h, v0.8 and v1.x): declared by hand, as a crate for them
// would tie this module to its pyo3 version for ~30 lines of layout.
#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}
#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}
#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}
#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}
#[repr(C)]
struct DLManagedTensorVersioned {
    version: [u32; 2],
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}
const DLPACK_FLAG_READ_ONLY: u64 = 1;
const KDL_CPU: i32 = 1;
const KDL_CUDA_HOST: i32 = 3;

fn shape_str(dims: &[i64]) -> String {
    format!(
        "[{}]",
        dims.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Row-major contiguity of a (shape, strides in elements or bytes) pair.
fn c_contiguous(shape: &[i64], strides: &[i64], unit: i64) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expect = unit;
    for (d, s) in shape.iter().zip(strides).rev() {
        if *d != 1 && *s != expect {
            return false;
        }
        expect *= *d;
    }
    true
}

/// Check and take one tensor argument of `call`. `out`: the call writes it.
pub fn take(
    py: Python<'_>,
    call: &str,
    arg: &'static str,
    obj: &Bound<'_, PyAny>,
    out: bool,
) -> Result<Tensor> {
    if let Some(t) = torch_tensor(py, call, arg, obj)? {
        return finish(call, arg, t, out);
    }
    if let Some(t) = buffer(call, arg, obj)? {
        return finish(call, arg, t, out);
    }
    if obj.hasattr("__dlpack__").unwrap_or(false) {
        return finish(call, arg, dlpack(py, call, arg, obj)?, out);
    }
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(Error::Type(format!(
        "{call}: {arg} must be a torch tensor (on an NPU or the CPU), a numpy array or another \
         object with the buffer protocol or __dlpack__; got {ty}"
    )))
}

fn finish(call: &str, arg: &str, t: Tensor, out: bool) -> Result<Tensor> {
    if out && !t.writable {
        return Err(Error::value(format!(
            "{call}: {arg} is read-only, but {call} writes its result into it"
        )));
    }
    Ok(t)
}

fn torch_tensor(
    py: Python<'_>,
    call: &str,
    arg: &'static str,
    obj: &Bound<'_, PyAny>,
) -> Result<Option<Tensor>> {
    let Some(torch) = py
        .import("sys")
        .and_then(|s| s.getattr("modules"))
        .ok()
        .and_then(|m| m.get_item("torch").ok())
    else {
        return Ok(None);
    };
    let Ok(cls) = torch.getattr("Tensor") else {
        return Ok(None);
    };
    if !obj.is_instance(&cls).unwrap_or(false) {
        return Ok(None);
    }
    let pe = |e: PyErr| Error::Runtime(format!("{call}: cannot inspect {arg}: {e}"));
    let dev = obj.getattr("device").map_err(pe)?;
    let ty: String = dev.getattr("type").and_then(|t| t.extract()).map_err(pe)?;
    let place = match ty.as_str() {
        "npu" => {
            let idx: Option<i32> = dev.getattr("index").and_then(|i| i.extract()).map_err(pe)?;
            Place::Npu(idx.unwrap_or(0))
        }
        "cpu" => Place::Host,
        other => {
            return Err(Error::value(format!(
                "{call}: {arg} is on device {}; hccl takes NPU tensors or host (CPU) memory, not \
                 {other} tensors",
                dev.str().map(|s| s.to_string()).unwrap_or_default()
            )))
        }
    };
    let dts = obj
        .getattr("dtype")
        .and_then(|d| d.str())
        .map_err(pe)?
        .to_string();
    let dtype = DType::from_name(dts.trim_start_matches("torch.")).ok_or_else(|| {
        Error::value(format!(
            "{call}: {arg} has dtype {dts}, which HCCL does not support; supported: {SUPPORTED}"
        ))
    })?;
    let dims: Vec<i64> = obj.getattr("shape").and_then(|s| s.extract()).map_err(pe)?;
    let contiguous: bool = obj
        .call_method0("is_contiguous")
        .and_then(|c| c.extract())
        .map_err(pe)?;
    if !contiguous {
        return Err(Error::value(format!(
            "{call}: {arg} is not contiguous (shape {}, stride {}); pass {arg}.contiguous() (and \
             copy the result back if {call} writes it)",
            shape_str(&dims),
            obj.call_method0("stride")
                .and_then(|s| s.str())
                .map(|s| s.to_string())
                .unwrap_or_default()
        )));
    }
    let ptr: usize = obj
        .call_method0("data_ptr")
        .and_then(|p| p.extract())
        .map_err(pe)?;
    let count: u64 = obj
        .call_method0("numel")
        .and_then(|n| n.extract())
        .map_err(pe)?;
    Ok(Some(Tensor {
        arg,
        place,
        ptr,
        dtype,
        count,
        writable: true,
        shape: shape_str(&dims),
        keep: Keep::Obj(obj.clone().unbind()),
    }))
}

/// The element type of a buffer-protocol format string.
fn buffer_dtype(format: Option<&str>, itemsize: isize) -> Option<DType> {
    let f = format.unwrap_or("B");
    let f = f.trim_start_matches(['@', '=', '<']);
    if f.starts_with(['>', '!']) {
        return None; // big-endian data
    }
    let ints = |signed: bool| -> Option<DType> {
        Some(match (signed, itemsize) {
            (true, 1) => DType::I8,
            (true, 2) => DType::I16,
            (true, 4) => DType::I32,
            (true, 8) => DType::I64,
            (false, 1) => DType::U8,
            (false, 2) => DType::U16,
            (false, 4) => DType::U32,
            (false, 8) => DType::U64,
            _ => return None,
        })
    };
    match f {
        "b" | "h" | "i" | "l" | "q" | "n" => ints(true),
        "B" | "H" | "I" | "L" | "Q" | "N" | "c" => ints(false),
        "e" if itemsize == 2 => Some(DType::F16),
        "f" if itemsize == 4 => Some(DType::F32),
        "d" if itemsize == 8 => Some(DType::F64),
        "?" if itemsize == 1 => Some(DType::Bool),
        _ => None,
    }
}

fn buffer(call: &str, arg: &'static str, obj: &Bound<'_, PyAny>) -> Result<Option<Tensor>> {
    let mut view = Box::new(PyBufferView(RawBuffer {
        buf: std::ptr::null_mut(),
        obj: std::ptr::null_mut(),
        len: 0,
        itemsize: 0,
        readonly: 0,
        ndim: 0,
        format: std::ptr::null_mut(),
        shape: std::ptr::null_mut(),
        strides: std::ptr::null_mut(),
        suboffsets: std::ptr::null_mut(),
        internal: std::ptr::null_mut(),
    }));
    // SAFETY: `obj` is a live object (the GIL is held through `obj`'s lifetime) and `view`
    // points to writable memory of the struct's size; on failure the exporter leaves the view
    // unset and raises, and the error is cleared below.
    let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut view.0, PYBUF_STRIDES | PYBUF_FORMAT) };
    if rc != 0 {
        let e = PyErr::take(obj.py());
        // Not a buffer exporter at all: let the caller try __dlpack__.
        if e.as_ref()
            .is_some_and(|e| e.is_instance_of::<pyo3::exceptions::PyTypeError>(obj.py()))
        {
            return Ok(None);
        }
        return Err(Error::value(format!(
            "{call}: {arg} does not give its memory as one strided buffer: {}",
            e.map(|e| e.to_string()).unwrap_or_default()
        )));
    }
    let v = &view.0;
    // SAFETY: a successful PyObject_GetBuffer with PyBUF_STRIDES|PyBUF_FORMAT fills `shape`,
    // `strides` (ndim entries each, when ndim > 0) and `format` (NUL-terminated or NULL).
    let (dims, strides, format) = unsafe {
        let n = v.ndim.max(0) as usize;
        let dims: Vec<i64> = if v.shape.is_null() || n == 0 {
            vec![]
        } else {
            std::slice::from_raw_parts(v.shape, n)
                .iter()
                .map(|&x| x as i64)
                .collect()
        };
        let strides: Vec<i64> = if v.strides.is_null() || n == 0 {
            vec![]
        } else {
            std::slice::from_raw_parts(v.strides, n)
                .iter()
                .map(|&x| x as i64)
                .collect()
        };
        let format = if v.format.is_null() {
            None
        } else {
            Some(CStr::from_ptr(v.format).to_string_lossy().into_owned())
        };
        (dims, strides, format)
    };
    let mut t = Tensor {
        arg,
        place: Place::Host,
        ptr: v.buf as usize,
        dtype: DType::U8,
        count: 0,
        writable: v.readonly == 0,
        shape: if v.ndim == 0 {
            "[]".into()
        } else {
            shape_str(&dims)
        },
        keep: Keep::Buffer(view),
    };
    let (itemsize, len) = match &t.keep {
        Keep::Buffer(b) => (b.0.itemsize, b.0.len),
        _ => (1, 0),
    };
    let Some(dtype) = buffer_dtype(format.as_deref(), itemsize) else {
        return Err(Error::value(format!(
            "{call}: {arg} has element format '{}' ({itemsize} bytes), which HCCL does not \
             support; supported: {SUPPORTED}",
            format.unwrap_or_else(|| "B".into())
        )));
    };
    if !strides.is_empty() && !c_contiguous(&dims, &strides, itemsize as i64) {
        return Err(Error::value(format!(
            "{call}: {arg} is not contiguous (shape {}, strides {:?} bytes); pass a contiguous \
             copy (numpy.ascontiguousarray)",
            t.shape, strides
        )));
    }
    t.dtype = dtype;
    t.count = (len / itemsize.max(1)) as u64;
    Ok(Some(t))
}

fn dlpack(py: Python<'_>, call: &str, arg: &'static str, obj: &Bound<'_, PyAny>) -> Result<Tensor> {
    let pe = |e: PyErr| Error::value(format!("{call}: {arg}.__dlpack__() failed: {e}"));
    if let Ok(d) = obj.call_method0("__dlpack_device__") {
        if let Ok((ty, id)) = d.extract::<(i32, i32)>() {
            if ty != KDL_CPU && ty != KDL_CUDA_HOST {
                return Err(Error::value(format!(
                    "{call}: {arg} is on DLPack device ({ty}, {id}), not in host memory; hccl \
                     takes NPU tensors of torch_npu or host arrays"
                )));
            }
        }
    }
    let kw = PyDict::new(py);
    let _ = kw.set_item("max_version", PyTuple::new(py, [1, 0]).map_err(pe)?);
    let cap = match obj.call_method("__dlpack__", (), Some(&kw)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            obj.call_method0("__dlpack__").map_err(pe)?
        }
        Err(e) => return Err(pe(e)),
    };
    let cap = cap.cast_into::<PyCapsule>().map_err(|_| {
        Error::value(format!(
            "{call}: {arg}.__dlpack__() did not return a capsule"
        ))
    })?;
    let name = cap
        .name()
        .ok()
        .flatten()
        .map(|n| {
            // SAFETY: the capsule's name is a NUL-terminated string owned by the capsule,
            // which is alive here.
            unsafe { n.as_cstr() }.to_string_lossy().into_owned()
        })
        .unwrap_or_default();
    let versioned = match name.as_str() {
        "dltensor_versioned" => true,
        "dltensor" => false,
        other => {
            return Err(Error::value(format!(
                "{call}: {arg}.__dlpack__() returned a capsule named {other:?} (already consumed?)"
            )))
        }
    };
    let cname: &CStr = if versioned {
        c"dltensor_versioned"
    } else {
        c"dltensor"
    };
    // SAFETY: the capsule is valid with this name (checked above); the pointer it holds is
    // the producer's DLManagedTensor(Versioned), which stays valid until its deleter runs.
    let managed = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), cname.as_ptr()) };
    if managed.is_null() {
        return Err(Error::value(format!(
            "{call}: {arg}.__dlpack__() returned an empty capsule"
        )));
    }
    let used: &'static CStr = if versioned {
        c"used_dltensor_versioned"
    } else {
        c"used_dltensor"
    };
    // SAFETY: renaming marks the capsule consumed (its destructor then leaves the tensor
    // alone), as the DLPack protocol requires of a consumer; `used` is a static string.
    unsafe { ffi::PyCapsule_SetName(cap.as_ptr(), used.as_ptr()) };
    // SAFETY: `managed` points to the struct matching the capsule's name.
    let (dl, readonly) = unsafe {
        if versioned {
            let m = &*(managed as *const DLManagedTensorVersioned);
            (&m.dl_tensor, m.flags & DLPACK_FLAG_READ_ONLY != 0)
        } else {
            (&(*(managed as *const DLManagedTensor)).dl_tensor, false)
        }
    };
    let n = dl.ndim.max(0) as usize;
    // SAFETY: DLPack guarantees `shape` has ndim entries and `strides` is NULL (compact
    // row-major) or has ndim entries.
    let (dims, strides) = unsafe {
        let dims: Vec<i64> = if n == 0 {
            vec![]
        } else {
            std::slice::from_raw_parts(dl.shape, n).to_vec()
        };
        let strides: Vec<i64> = if dl.strides.is_null() || n == 0 {
            vec![]
        } else {
            std::slice::from_raw_parts(dl.strides, n).to_vec()
        };
        (dims, strides)
    };
    let mut t = Tensor {
        arg,
        place: Place::Host,
        ptr: dl.data as usize + dl.byte_offset as usize,
        dtype: DType::U8,
        count: dims.iter().product::<i64>().max(0) as u64,
        writable: !readonly,
        shape: shape_str(&dims),
        keep: Keep::DLPack {
            _capsule: cap.into_any().unbind(),
            managed: managed as usize,
            versioned,
        },
    };
    if dl.device.device_type != KDL_CPU && dl.device.device_type != KDL_CUDA_HOST {
        return Err(Error::value(format!(
            "{call}: {arg} is on DLPack device type {}, not in host memory",
            dl.device.device_type
        )));
    }
    let (code, bits, lanes) = (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes);
    let dtype = match (code, bits, lanes) {
        (0, 8, 1) => DType::I8,
        (0, 16, 1) => DType::I16,
        (0, 32, 1) => DType::I32,
        (0, 64, 1) => DType::I64,
        (1, 8, 1) => DType::U8,
        (1, 16, 1) => DType::U16,
        (1, 32, 1) => DType::U32,
        (1, 64, 1) => DType::U64,
        (2, 16, 1) => DType::F16,
        (2, 32, 1) => DType::F32,
        (2, 64, 1) => DType::F64,
        (4, 16, 1) => DType::BF16,
        (6, 8, 1) => DType::Bool,
        _ => {
            return Err(Error::value(format!(
                "{call}: {arg} has DLPack dtype (code {code}, {bits} bits, {lanes} lanes), which \
                 HCCL does not support; supported: {SUPPORTED}"
            )))
        }
    };
    if !strides.is_empty() && !c_contiguous(&dims, &strides, 1) {
        return Err(Error::value(format!(
            "{call}: {arg} is not contiguous (shape {}, strides {:?} elements); pass a \
             contiguous copy",
            t.shape, strides
        )));
    }
    t.dtype = dtype;
    Ok(t)
}
