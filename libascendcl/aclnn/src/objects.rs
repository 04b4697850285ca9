//! The objects behind the opaque aclnn handles (`aclTensor`, `aclScalar`, `aclIntArray`,
//! `aclFloatArray`, `aclBoolArray`, `aclTensorList`, `aclScalarList`, `aclOpExecutor`).
//!
//! Every live object is in one registry keyed by its handle (the address of its heap
//! allocation), so a destroyed, foreign or wrongly typed handle is reported as
//! `ACLNN_ERR_PARAM_INVALID` with a message instead of being dereferenced.

use crate::executor::Executor;
use crate::status::{NnError, NnResult};
use parking_lot::Mutex;
use std::collections::HashMap;

/// An `aclTensor`: a view (shape, strides, offset in elements, format) over device memory
/// whose stored layout is `storage_shape` in `storage_format` (CANN's `aclTensor`: the
/// `format` argument of `aclCreateTensor` is both the view and the storage format).
#[derive(Clone, Debug)]
pub struct Tensor {
    pub view_shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
    pub format: i32,
    pub dtype: i32,
    pub storage_shape: Vec<i64>,
    pub storage_format: i32,
    pub addr: usize,
}

#[derive(Clone, Debug)]
pub struct Scalar {
    pub dtype: i32,
    pub bytes: Vec<u8>,
}

pub enum Object {
    Tensor(Tensor),
    Scalar(Scalar),
    IntArray(Vec<i64>),
    FloatArray(Vec<f32>),
    BoolArray(Vec<bool>),
    /// Handles of the tensors (owned: destroying the list destroys them).
    TensorList(Vec<usize>),
    ScalarList(Vec<usize>),
    Executor(Executor),
}

impl Object {
    pub fn kind(&self) -> &'static str {
        match self {
            Object::Tensor(_) => "aclTensor",
            Object::Scalar(_) => "aclScalar",
            Object::IntArray(_) => "aclIntArray",
            Object::FloatArray(_) => "aclFloatArray",
            Object::BoolArray(_) => "aclBoolArray",
            Object::TensorList(_) => "aclTensorList",
            Object::ScalarList(_) => "aclScalarList",
            Object::Executor(_) => "aclOpExecutor",
        }
    }
}

/// Live objects: handle -> object. The handle is the address of a 1-byte heap block we own
/// (never handed out twice while live, never dereferenced by the caller).
static LIVE: Mutex<Option<HashMap<usize, Object>>> = Mutex::new(None);

/// Register `obj` and give its new handle.
pub fn insert(obj: Object) -> usize {
    let h = Box::into_raw(Box::new(0u8)) as usize;
    LIVE.lock().get_or_insert_with(HashMap::new).insert(h, obj);
    h
}

/// Remove and return the object of `h` (its handle block is freed).
pub fn remove(h: usize) -> Option<Object> {
    let o = LIVE.lock().get_or_insert_with(HashMap::new).remove(&h);
    if o.is_some() {
        // SAFETY: h came from Box::into_raw in insert and is freed once (it was live).
        drop(unsafe { Box::from_raw(h as *mut u8) });
    }
    o
}

fn not_live(h: usize, kind: &str, arg: &str) -> NnError {
    NnError::invalid(format!(
        "{arg} ({h:#x}) is not a live {kind} (already destroyed, or not created by aclCreate*)"
    ))
}

/// Run `f` on the live object of `h`, which must be of the kind `want`.
pub fn with<R>(
    h: usize,
    want: &'static str,
    arg: &str,
    f: impl FnOnce(&mut Object) -> NnResult<R>,
) -> NnResult<R> {
    let mut g = LIVE.lock();
    let map = g.get_or_insert_with(HashMap::new);
    match map.get_mut(&h) {
        Some(o) if o.kind() == want => f(o),
        Some(o) => Err(NnError::invalid(format!(
            "{arg} ({h:#x}) is an {}, not an {want}",
            o.kind()
        ))),
        None => Err(not_live(h, want, arg)),
    }
}

/// A copy of the live tensor `h`.
pub fn tensor(h: usize, arg: &str) -> NnResult<Tensor> {
    with(h, "aclTensor", arg, |o| match o {
        Object::Tensor(t) => Ok(t.clone()),
        _ => unreachable!(),
    })
}

/// Change the live tensor `h`.
pub fn tensor_mut<R>(h: usize, arg: &str, f: impl FnOnce(&mut Tensor) -> R) -> NnResult<R> {
    with(h, "aclTensor", arg, |o| match o {
        Object::Tensor(t) => Ok(f(t)),
        _ => unreachable!(),
    })
}

/// Whether `h` is a live object of kind `want`.
pub fn is_live(h: usize, want: &str) -> bool {
    LIVE.lock()
        .get_or_insert_with(HashMap::new)
        .get(&h)
        .is_some_and(|o| o.kind() == want)
}
