//! The objects behind the opaque aclnn handles (`aclTensor`, `aclScalar`, `aclIntArray`,
//! `aclFloatArray`, `aclBoolArray`, `aclTensorList`, `aclScalarList`, `aclOpExecutor`).
//!
//! Every live object is in one handle table ([`crate::globals::OBJECTS`]; the handle is a
//! tagged id, one tag per kind), so a destroyed, foreign or wrongly typed handle is reported
//! as `ACLNN_ERR_PARAM_INVALID` with a message instead of being dereferenced.

use crate::executor::Executor;
use crate::globals::OBJECTS;
use crate::status::NnResult;
use npu_emu_ffi::handles::HandleKind;

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

/// The kinds of handle, one per object type (tags `T?`).
pub static KINDS: [HandleKind; 8] = [
    HandleKind::new(*b"Tt", "aclTensor", "aclCreateTensor"),
    HandleKind::new(*b"Ts", "aclScalar", "aclCreateScalar"),
    HandleKind::new(*b"Ti", "aclIntArray", "aclCreateIntArray"),
    HandleKind::new(*b"Tf", "aclFloatArray", "aclCreateFloatArray"),
    HandleKind::new(*b"Tb", "aclBoolArray", "aclCreateBoolArray"),
    HandleKind::new(*b"TT", "aclTensorList", "aclCreateTensorList"),
    HandleKind::new(*b"TS", "aclScalarList", "aclCreateScalarList"),
    HandleKind::new(*b"TE", "aclOpExecutor", "an aclnn*GetWorkspaceSize call"),
];

/// The handle kind named `name` (one of [`Object::kind`]'s names).
fn kind_named(name: &str) -> &'static HandleKind {
    KINDS
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("{name} is not an aclnn object kind"))
}

impl Object {
    pub fn kind(&self) -> &'static str {
        self.handle_kind().name
    }

    fn handle_kind(&self) -> &'static HandleKind {
        let i = match self {
            Object::Tensor(_) => 0,
            Object::Scalar(_) => 1,
            Object::IntArray(_) => 2,
            Object::FloatArray(_) => 3,
            Object::BoolArray(_) => 4,
            Object::TensorList(_) => 5,
            Object::ScalarList(_) => 6,
            Object::Executor(_) => 7,
        };
        &KINDS[i]
    }
}

/// Register `obj` and give its new handle.
pub fn insert(obj: Object) -> usize {
    let kind = obj.handle_kind();
    OBJECTS.lock().insert_as(kind, obj) as usize
}

/// Remove and return the live object of `h`, whatever its kind.
pub fn remove(h: usize) -> Option<Object> {
    let mut live = OBJECTS.lock();
    let kind = live.peek(h as u64)?.handle_kind();
    live.remove_as(kind, h as u64, "handle").ok()
}

/// Run `f` on the live object of `h`, which must be of the kind `want`.
pub fn with<R>(
    h: usize,
    want: &'static str,
    arg: &str,
    f: impl FnOnce(&mut Object) -> NnResult<R>,
) -> NnResult<R> {
    let mut live = OBJECTS.lock();
    f(live.get_mut_as(kind_named(want), h as u64, arg)?)
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
    OBJECTS
        .lock()
        .get_as(kind_named(want), h as u64, "handle")
        .is_ok()
}
