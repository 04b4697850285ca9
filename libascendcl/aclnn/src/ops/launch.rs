//! The two phases of an engine operator.
//!
//! Phase 1 (`aclnnXxxGetWorkspaceSize`): the family file checks its arguments, then builds a
//! [`Launch`]: the input and output tensors (their layouts and storage addresses) and the
//! kernel, a closure over the engine (`npu_emu::ops`) that receives the views in the order
//! the tensors were added (inputs first, then outputs). [`Launch::finish`] stores it as an
//! executor and writes the workspace size and executor handle. [`phase1`] wraps all of it:
//! NULL out-pointers, the boundary, the messages.
//!
//! Phase 2 (`aclnnXxx`, made by [`phase2!`]): `crate::run::execute` checks the executor and
//! workspace; [`prepare`] checks each tensor's device range against this process's
//! allocations (the runtime's translation) and maps it to the machine's alias; the
//! [`Prepared`] job then runs on the stream worker, in stream order.

use crate::executor::{Executor, Io, Op};
use crate::objects::{self, Object};
use crate::rt::Rt;
use crate::status::{boundary, out, NnError, NnResult};
use npu_emu::ops::{Layout, View};
use std::ffi::c_void;
use std::sync::Arc;

use super::args::T;

/// The kernel of an executor: views in (inputs, outputs) order and the workspace.
pub type KernelFn = dyn Fn(&[View], &mut [u8]) -> Result<(), String> + Send + Sync;

/// What an engine executor runs: the layouts of its tensors (inputs, then outputs) and the
/// kernel.
pub struct Kernel {
    pub layouts: Vec<Layout>,
    /// The argument name of each tensor (`self`, `x1`, …), for messages.
    pub names: Vec<&'static str>,
    pub ninputs: usize,
    /// The operator's arguments as added: (first slot, count, is a tensor list), inputs and
    /// outputs separately (the IR indices of `aclSetDynamic*TensorAddr`).
    pub in_groups: Vec<(usize, usize, bool)>,
    pub out_groups: Vec<(usize, usize, bool)>,
    pub run: Box<KernelFn>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("layouts", &self.layouts)
            .field("ninputs", &self.ninputs)
            .finish()
    }
}

/// An operator being built by phase 1.
pub struct Launch {
    pub api: &'static str,
    ins: Vec<T>,
    outs: Vec<T>,
    in_groups: Vec<(usize, usize, bool)>,
    out_groups: Vec<(usize, usize, bool)>,
    workspace: u64,
}

impl Launch {
    pub fn new(api: &'static str) -> Launch {
        Launch {
            api,
            ins: Vec::new(),
            outs: Vec::new(),
            in_groups: Vec::new(),
            out_groups: Vec::new(),
            workspace: 0,
        }
    }

    /// Add an input tensor; its view is `views[index]` in the kernel.
    pub fn input(&mut self, t: &T) -> usize {
        self.in_groups.push((self.ins.len(), 1, false));
        self.ins.push(t.clone());
        self.ins.len() - 1
    }

    /// Add inputs; returns the index of the first.
    pub fn inputs(&mut self, ts: &[T]) -> usize {
        let first = self.ins.len();
        self.in_groups.push((first, ts.len(), true));
        self.ins.extend(ts.iter().cloned());
        first
    }

    /// Add an output tensor; its view is `views[ninputs + index]`. Call after all inputs.
    pub fn output(&mut self, t: &T) -> usize {
        self.out_groups.push((self.outs.len(), 1, false));
        self.outs.push(t.clone());
        self.ins.len() + self.outs.len() - 1
    }

    /// Add outputs; returns the view index of the first.
    pub fn outputs(&mut self, ts: &[T]) -> usize {
        let first = self.ins.len() + self.outs.len();
        self.out_groups.push((self.outs.len(), ts.len(), true));
        self.outs.extend(ts.iter().cloned());
        first
    }

    /// Ask for a device workspace of `bytes` (the kernel gets it as its second argument).
    pub fn workspace(&mut self, bytes: u64) {
        self.workspace = bytes;
    }

    /// Store the executor: `kernel(views, workspace)`.
    pub fn finish(
        self,
        kernel: impl Fn(&[View], &mut [u8]) -> Result<(), String> + Send + Sync + 'static,
    ) -> NnResult<Built> {
        let io = |t: &T| Io {
            addr: t.addr,
            view_bytes: (t.layout.offset * t.layout.dtype.size() as isize) as usize,
        };
        let k = Kernel {
            layouts: self
                .ins
                .iter()
                .chain(&self.outs)
                .map(|t| Layout {
                    offset: 0,
                    ..t.layout.clone()
                })
                .collect(),
            names: self.ins.iter().chain(&self.outs).map(|t| t.arg).collect(),
            ninputs: self.ins.len(),
            in_groups: self.in_groups,
            out_groups: self.out_groups,
            run: Box::new(kernel),
        };
        Ok(Built(Executor {
            api: self.api,
            op: Op::Engine(Arc::new(k)),
            plan: None,
            inputs: self.ins.iter().map(io).collect(),
            outputs: self.outs.iter().map(io).collect(),
            workspace_size: self.workspace,
            repeatable: false,
        }))
    }
}

/// One step of a several-step executor ([`Launch::finish_steps`]).
pub enum Step {
    /// An engine kernel over the views of all the executor's tensors and the workspace.
    Engine(Arc<Kernel>),
    /// A collective of libhccl over workspace buffers.
    Collective(crate::collective::Collective),
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Engine(k) => k.fmt(f),
            Step::Collective(c) => c.fmt(f),
        }
    }
}

/// What [`Launch::finish_steps`] takes: a kernel or a collective, in stream order.
pub enum StepSpec {
    Kernel(Box<KernelFn>),
    Collective(crate::collective::Collective),
}

impl StepSpec {
    pub fn kernel(
        k: impl Fn(&[View], &mut [u8]) -> Result<(), String> + Send + Sync + 'static,
    ) -> StepSpec {
        StepSpec::Kernel(Box::new(k))
    }
}

impl Launch {
    /// Store an executor of several steps run in order on the stream: each kernel sees the
    /// views of every tensor added (inputs, then outputs) and the workspace.
    pub fn finish_steps(self, specs: Vec<StepSpec>) -> NnResult<Built> {
        let Built(mut e) = self.finish(|_, _| Ok(()))?;
        let Op::Engine(base) = &e.op else {
            unreachable!()
        };
        let steps = specs
            .into_iter()
            .map(|s| match s {
                StepSpec::Kernel(run) => Step::Engine(Arc::new(Kernel {
                    layouts: base.layouts.clone(),
                    names: base.names.clone(),
                    ninputs: base.ninputs,
                    in_groups: base.in_groups.clone(),
                    out_groups: base.out_groups.clone(),
                    run,
                })),
                StepSpec::Collective(c) => Step::Collective(c),
            })
            .collect();
        e.op = Op::Steps(Arc::new(steps));
        Ok(Built(e))
    }
}

/// A finished phase 1, to be handed out by [`phase1`].
pub struct Built(Executor);

/// Run phase 1 of `api` (`aclnnXxxGetWorkspaceSize`, the name used in messages): check the
/// out-pointers, run `f`, hand out the workspace size and the executor.
pub fn phase1(
    name: &'static str,
    workspace_size: *mut u64,
    executor: *mut *mut c_void,
    f: impl FnOnce() -> NnResult<Built>,
) -> i32 {
    boundary(name, || {
        crate::status::non_null(workspace_size, "workspaceSize")?;
        crate::status::non_null(executor, "executor")?;
        let Built(e) = f()?;
        let ws = e.workspace_size;
        let h = objects::insert(Object::Executor(e));
        out(workspace_size, "workspaceSize", ws)?;
        out(executor, "executor", h as *mut c_void)
    })
}

/// The refusal of an operator CANN's reference lists for Ascend 950PR/950DT (DAV_3510) only:
/// on the Atlas A2/A3 SoCs npu-emu emulates by default, ACLNN_ERR_PARAM_INVALID with a message
/// that opens with the platform, as CANN's (its op_api checks the NPU architecture first); on
/// an emulated Ascend 950 the same code, saying npu-emu does not implement `what`.
pub fn only_on_ascend950(what: &str) -> NnError {
    let soc = match crate::rt::rt() {
        Ok(rt) => rt.soc_name(),
        Err(e) => return e,
    };
    if soc.starts_with("Ascend950") || soc.starts_with("Ascend910_95") {
        NnError::invalid(format!("{what} on {soc} is not implemented by npu-emu"))
    } else {
        NnError::invalid(format!(
            "platform {soc}: {what} is supported on Ascend 950PR/Ascend 950DT (DAV_3510) \
             only, not on Atlas A2/A3"
        ))
    }
}

/// Define the second-phase export `aclnnXxx(workspace, workspaceSize, executor, stream)`.
#[macro_export]
macro_rules! phase2 {
    ($($name:ident),+ $(,)?) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $name(
                workspace: *mut std::ffi::c_void,
                workspaceSize: u64,
                executor: *mut std::ffi::c_void,
                stream: *mut std::ffi::c_void,
            ) -> i32 {
                $crate::status::boundary(stringify!($name), || {
                    $crate::run::execute(workspace, workspaceSize, executor, stream)
                })
            }
        )+
    };
}

/// An engine job ready for the stream: views over the machine's aliases of device memory.
pub struct Prepared {
    pub api: &'static str,
    kernel: Arc<Kernel>,
    views: Vec<View>,
    workspace: (*mut u8, usize),
}

// SAFETY: the pointers are aliases of device memory checked at enqueue time; the job runs
// once on the stream worker.
unsafe impl Send for Prepared {}

impl Prepared {
    pub fn run(&self) -> Result<(), String> {
        let ws: &mut [u8] = if self.workspace.1 == 0 {
            &mut []
        } else {
            // SAFETY: the workspace range was checked to lie in a device allocation.
            unsafe { std::slice::from_raw_parts_mut(self.workspace.0, self.workspace.1) }
        };
        (self.kernel.run)(&self.views, ws).map_err(|m| format!("{}: {m}", self.api))
    }
}

/// Check every tensor's device range and build the views (phase 2, calling thread).
pub fn prepare(
    rt: &Rt,
    _api: &'static str,
    kernel: Arc<Kernel>,
    inputs: &[Io],
    outputs: &[Io],
    workspace: Option<(*mut u8, usize)>,
) -> NnResult<Prepared> {
    let mut views = Vec::with_capacity(kernel.layouts.len());
    for (i, (l, io)) in kernel
        .layouts
        .iter()
        .zip(inputs.iter().chain(outputs))
        .enumerate()
    {
        let (lo, hi) = l.extent();
        let es = l.dtype.size() as isize;
        let data = io.data();
        let ptr = if lo == hi {
            std::ptr::NonNull::<u64>::dangling().as_ptr() as *mut u8
        } else {
            let what = if i < kernel.ninputs {
                format!("input {} (tensor {i}) data", kernel.names[i])
            } else {
                format!(
                    "output {} (tensor {}) data",
                    kernel.names[i],
                    i - kernel.ninputs
                )
            };
            let start = (data as isize + lo * es) as u64;
            let len = ((hi - lo) * es) as u64;
            let p = rt.device_range(start, len, &what)?;
            p.wrapping_offset(-lo * es)
        };
        views.push(l.view_at(ptr));
    }
    Ok(Prepared {
        api: _api,
        kernel,
        views,
        workspace: workspace.unwrap_or((std::ptr::null_mut(), 0)),
    })
}

/// An error of the engine reported in phase 1 (a shape/dtype rule the engine checks).
pub fn engine_err(e: String) -> NnError {
    NnError::invalid(e)
}
