//! `aclOpExecutor`: what the first phase of a two-phase aclnn call prepared for the second.
//!
//! As in CANN (`CommonOpExecutorRun`), an executor is used once and freed by the execute
//! call — whether it succeeds or fails — unless `aclSetAclOpExecutorRepeatable` marked it
//! repeatable; a repeatable one runs any number of times until `aclDestroyAclOpExecutor`.
//! `aclSet{Input,Output}TensorAddr(executor, index, tensor, addr)` set the tensor's storage
//! address and the address the executor uses for its input/output `index`; the plain
//! `aclSetTensorAddr` counts the inputs first, then the outputs. The FormatCast executor has
//! one input (srcTensor) and one output (dstTensor) and no dynamic (tensor-list) arguments.

use crate::objects::{self, Object};
use crate::status::{boundary, NnError, NnResult};
use npu_emu::formats::Plan;
use std::ffi::c_void;
use std::sync::Arc;

/// `ACLNN_ERR_INNER_NULLPTR`: CANN's code for a NULL tensor/executor in the address setters.
pub const ACLNN_ERR_INNER_NULLPTR: i32 = 561103;

/// One input or output of an executor: the tensor's storage address and the byte offset of
/// its view (`offset` elements).
#[derive(Clone, Copy, Debug)]
pub struct Io {
    pub addr: usize,
    pub view_bytes: usize,
}

impl Io {
    pub fn data(&self) -> usize {
        self.addr.wrapping_add(self.view_bytes)
    }
}

/// A strided view to gather into contiguous order first (a non-contiguous input).
#[derive(Clone, Debug)]
pub struct Gather {
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub esize: usize,
}

/// What the executor does when it runs.
#[derive(Clone, Debug)]
pub enum Op {
    /// `outputs[0]` = `plan(inputs[0])` (aclnnNpuFormatCast).
    Cast,
    /// In place (aclnnTransMatmulWeight): the ND view of `inputs[0]` (gathered first into the
    /// workspace when strided) is converted into the workspace, then copied over the tensor.
    TransWeight {
        gather: Option<Gather>,
        /// Bytes of the tensor read (from its data address): the extent of the view.
        read_bytes: usize,
        /// Workspace offset of the gathered contiguous copy (when `gather` is set).
        gather_offset: usize,
    },
    /// An operator of the engine (`crate::ops`): the tensors' layouts and the kernel.
    Engine(Arc<crate::ops::launch::Kernel>),
    /// Several steps enqueued in order on the stream: engine kernels (each over all the
    /// executor's tensors and the workspace) and collectives of libhccl (the fused
    /// matmul+communication operators, `crate::collective`).
    Steps(Arc<Vec<crate::ops::launch::Step>>),
}

pub struct Executor {
    /// The aclnn API that made it (`aclnnNpuFormatCast`).
    pub api: &'static str,
    pub op: Op,
    /// The format conversion plan (Cast, TransWeight).
    pub plan: Option<Arc<Plan>>,
    pub inputs: Vec<Io>,
    pub outputs: Vec<Io>,
    pub workspace_size: u64,
    pub repeatable: bool,
}

/// What the execute call needs from a live executor: a copy of it, the executor being
/// removed from the registry unless it is repeatable (CANN frees it after the run).
pub struct Taken {
    pub api: &'static str,
    pub op: Op,
    pub plan: Option<Arc<Plan>>,
    pub inputs: Vec<Io>,
    pub outputs: Vec<Io>,
    pub workspace_size: u64,
}

/// Take the executor `h` for one run (see [`Taken`]).
pub fn take(h: usize) -> NnResult<Taken> {
    let (t, repeatable) = objects::with(h, "aclOpExecutor", "executor", |o| match o {
        Object::Executor(e) => Ok((
            Taken {
                api: e.api,
                op: e.op.clone(),
                plan: e.plan.clone(),
                inputs: e.inputs.clone(),
                outputs: e.outputs.clone(),
                workspace_size: e.workspace_size,
            },
            e.repeatable,
        )),
        _ => unreachable!(),
    })?;
    if !repeatable {
        objects::remove(h);
    }
    Ok(t)
}

/// Free a non-repeatable executor after a failed execute call (CANN deletes it too).
pub fn discard_unless_repeatable(h: usize) {
    let repeatable = objects::with(h, "aclOpExecutor", "executor", |o| match o {
        Object::Executor(e) => Ok(e.repeatable),
        _ => unreachable!(),
    });
    if let Ok(false) = repeatable {
        objects::remove(h);
    }
}

fn with_executor<R>(h: *mut c_void, f: impl FnOnce(&mut Executor) -> NnResult<R>) -> NnResult<R> {
    if h.is_null() {
        return Err(NnError::new(ACLNN_ERR_INNER_NULLPTR, "executor is nullptr"));
    }
    objects::with(h as usize, "aclOpExecutor", "executor", |o| match o {
        Object::Executor(e) => f(e),
        _ => unreachable!(),
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetAclOpExecutorRepeatable(executor: *mut c_void) -> i32 {
    boundary("aclSetAclOpExecutorRepeatable", || {
        with_executor(executor, |e| {
            e.repeatable = true;
            Ok(())
        })
    })
}

/// Destroy an executor (a repeatable one, or one that was never run).
#[no_mangle]
pub unsafe extern "C" fn aclDestroyAclOpExecutor(executor: *mut c_void) -> i32 {
    boundary("aclDestroyAclOpExecutor", || {
        with_executor(executor, |_| Ok(()))?;
        objects::remove(executor as usize);
        Ok(())
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
    /// Inputs first, then outputs (`aclSetTensorAddr`).
    Any,
}

fn set_addr(
    executor: *mut c_void,
    side: Side,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> NnResult<()> {
    if tensor.is_null() {
        return Err(NnError::new(ACLNN_ERR_INNER_NULLPTR, "tensor is nullptr"));
    }
    let t = objects::tensor_mut(tensor as usize, "tensor", |t| {
        t.addr = addr as usize;
        t.clone()
    })?;
    let esize = crate::meta::dtype_size(t.dtype).unwrap_or(1) as i64;
    let io = Io {
        addr: addr as usize,
        view_bytes: (t.offset * esize) as usize,
    };
    with_executor(executor, |e| {
        let (list, i, what) = match side {
            Side::Input => (&mut e.inputs, index, "input"),
            Side::Output => (&mut e.outputs, index, "output"),
            Side::Any if index < e.inputs.len() => (&mut e.inputs, index, "input"),
            Side::Any => {
                let n = e.inputs.len();
                (&mut e.outputs, index - n, "output")
            }
        };
        let n = list.len();
        match list.get_mut(i) {
            Some(slot) => {
                *slot = io;
                Ok(())
            }
            None => Err(NnError::invalid(format!(
                "index {index} is out of range: the {} executor has {n} {what} tensor(s)",
                e.api
            ))),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetInputTensorAddr(
    executor: *mut c_void,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("aclSetInputTensorAddr", || {
        set_addr(executor, Side::Input, index, tensor, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn AclSetInputTensorAddr(
    executor: *mut c_void,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("AclSetInputTensorAddr", || {
        set_addr(executor, Side::Input, index, tensor, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetOutputTensorAddr(
    executor: *mut c_void,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("aclSetOutputTensorAddr", || {
        set_addr(executor, Side::Output, index, tensor, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn AclSetOutputTensorAddr(
    executor: *mut c_void,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("AclSetOutputTensorAddr", || {
        set_addr(executor, Side::Output, index, tensor, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetTensorAddr(
    executor: *mut c_void,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("aclSetTensorAddr", || {
        set_addr(executor, Side::Any, index, tensor, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn AclSetTensorAddr(
    executor: *mut c_void,
    index: usize,
    tensor: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("AclSetTensorAddr", || {
        set_addr(executor, Side::Any, index, tensor, addr)
    })
}

/// The dynamic (tensor-list) setters: check the list and index as CANN does, set the
/// tensor's address; the executors of this library have no dynamic arguments, so a live
/// executor is an error naming that.
fn set_dynamic(
    executor: *mut c_void,
    side: Side,
    ir_index: usize,
    relative: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> NnResult<()> {
    if tensors.is_null() {
        return Err(NnError::new(ACLNN_ERR_INNER_NULLPTR, "tensors is nullptr"));
    }
    let items = objects::with(tensors as usize, "aclTensorList", "tensors", |o| match o {
        Object::TensorList(v) => Ok(v.clone()),
        _ => unreachable!(),
    })?;
    let t = *items.get(relative).ok_or_else(|| {
        NnError::invalid(format!(
            "relativeIndex {relative} is out of the tensor list's size {}",
            items.len()
        ))
    })?;
    if t == 0 {
        return Err(NnError::new(
            ACLNN_ERR_INNER_NULLPTR,
            format!("tensors[{relative}] is nullptr"),
        ));
    }
    let tensor = objects::tensor_mut(t, "tensor", |t| {
        t.addr = addr as usize;
        t.clone()
    })?;
    let esize = crate::meta::dtype_size(tensor.dtype).unwrap_or(1) as i64;
    let io = Io {
        addr: addr as usize,
        view_bytes: (tensor.offset * esize) as usize,
    };
    with_executor(executor, |e| {
        let k = match &e.op {
            Op::Engine(k) => k.clone(),
            _ => {
                return Err(NnError::invalid(format!(
                    "irIndex {ir_index}: the {} executor has no dynamic (tensor list) arguments",
                    e.api
                )))
            }
        };
        // the argument groups of this side (Any: inputs first, then outputs)
        let (groups, on_input, index) = match side {
            Side::Input => (&k.in_groups, true, ir_index),
            Side::Output => (&k.out_groups, false, ir_index),
            Side::Any if ir_index < k.in_groups.len() => (&k.in_groups, true, ir_index),
            Side::Any => (&k.out_groups, false, ir_index - k.in_groups.len()),
        };
        let &(first, len, list) = groups.get(index).ok_or_else(|| {
            NnError::invalid(format!(
                "irIndex {ir_index} is out of range: the {} executor has {} {} argument(s)",
                e.api,
                groups.len(),
                if on_input { "input" } else { "output" }
            ))
        })?;
        if !list {
            return Err(NnError::invalid(format!(
                "irIndex {ir_index} of the {} executor is a single tensor, not a tensor list \
                 (use aclSet{}TensorAddr)",
                e.api,
                if on_input { "Input" } else { "Output" }
            )));
        }
        if relative >= len {
            return Err(NnError::invalid(format!(
                "relativeIndex {relative} is out of range: irIndex {ir_index} of the {} executor \
                 holds {len} tensors",
                e.api
            )));
        }
        let slots = if on_input {
            &mut e.inputs
        } else {
            &mut e.outputs
        };
        slots[first + relative] = io;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetDynamicInputTensorAddr(
    executor: *mut c_void,
    irIndex: usize,
    relativeIndex: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("aclSetDynamicInputTensorAddr", || {
        set_dynamic(executor, Side::Input, irIndex, relativeIndex, tensors, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn AclSetDynamicInputTensorAddr(
    executor: *mut c_void,
    irIndex: usize,
    relativeIndex: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("AclSetDynamicInputTensorAddr", || {
        set_dynamic(executor, Side::Input, irIndex, relativeIndex, tensors, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetDynamicOutputTensorAddr(
    executor: *mut c_void,
    irIndex: usize,
    relativeIndex: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("aclSetDynamicOutputTensorAddr", || {
        set_dynamic(
            executor,
            Side::Output,
            irIndex,
            relativeIndex,
            tensors,
            addr,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn AclSetDynamicOutputTensorAddr(
    executor: *mut c_void,
    irIndex: usize,
    relativeIndex: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("AclSetDynamicOutputTensorAddr", || {
        set_dynamic(
            executor,
            Side::Output,
            irIndex,
            relativeIndex,
            tensors,
            addr,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclSetDynamicTensorAddr(
    executor: *mut c_void,
    irIndex: usize,
    relativeIndex: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("aclSetDynamicTensorAddr", || {
        set_dynamic(executor, Side::Any, irIndex, relativeIndex, tensors, addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn AclSetDynamicTensorAddr(
    executor: *mut c_void,
    irIndex: usize,
    relativeIndex: usize,
    tensors: *mut c_void,
    addr: *mut c_void,
) -> i32 {
    boundary("AclSetDynamicTensorAddr", || {
        set_dynamic(executor, Side::Any, irIndex, relativeIndex, tensors, addr)
    })
}
