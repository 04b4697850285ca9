//! `import hccl`: HCCL's collectives for Python, as a thin binding of the HCCL C API (in the
//! spirit of CuPy's NCCL binding and mpi4py). It loads `libhccl.so` and `libascendcl.so` from
//! the environment at run time, so it runs on npu-emu and on a real CANN install alike.
//! The user guide is `libhccl/python/README.md`.
//!
//! Where things live:
//! - [`ffi`]: the C functions, found with `dlopen` (`LD_LIBRARY_PATH`, `ASCEND_HOME_PATH`).
//! - [`errors`]: `hccl.HcclError` (code, name, HCCL's message) and the error conversions.
//! - [`bootstrap`]: rank, size and device from the launcher's environment (`npu-emu run`'s rank
//!   table, torchrun, OpenMPI, MPICH, Slurm) and the exchange of the root info.
//! - [`comm`]: the world communicator, groups, streams, staging memory, process state.
//! - [`tensor`]: NPU tensors of torch_npu and host arrays (buffer protocol, `__dlpack__`).
//! - [`ops`]: the one path every call takes, and `hccl.Work` (async handles).
//! - this file: the Python functions and classes.
#![allow(clippy::useless_conversion)] // pyo3's #[pyfunction] expansion converts PyResult

mod bootstrap;
mod comm;
mod errors;
mod ffi;
mod ops;
mod tensor;

use comm::Comm;
use errors::Error;
use ops::{Args, Kind, Work};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::sync::Arc;

/// A reduction: `hccl.Sum`, `hccl.Prod`, `hccl.Max`, `hccl.Min` (HcclReduceOp 0..3).
#[pyclass(module = "hccl", eq, eq_int, frozen, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
}

#[pymethods]
impl ReduceOp {
    /// torch.distributed's spelling: `hccl.ReduceOp.SUM` is `hccl.Sum`.
    #[classattr]
    #[allow(non_snake_case)]
    fn SUM() -> ReduceOp {
        ReduceOp::Sum
    }
    #[classattr]
    #[allow(non_snake_case)]
    fn PROD() -> ReduceOp {
        ReduceOp::Prod
    }
    #[classattr]
    #[allow(non_snake_case)]
    fn MAX() -> ReduceOp {
        ReduceOp::Max
    }
    #[classattr]
    #[allow(non_snake_case)]
    fn MIN() -> ReduceOp {
        ReduceOp::Min
    }
}

fn reduce_op(call: &str, op: Option<&Bound<'_, PyAny>>) -> PyResult<i32> {
    let Some(op) = op else {
        return Ok(ReduceOp::Sum as i32);
    };
    if let Ok(r) = op.cast::<ReduceOp>() {
        return Ok(*r.get() as i32);
    }
    if let Ok(i) = op.extract::<i64>() {
        if (0..=3).contains(&i) {
            return Ok(i as i32);
        }
    }
    Err(Error::value(format!(
        "{call}: op={} is not a reduce operation; use hccl.Sum, hccl.Prod, hccl.Max or hccl.Min",
        op.repr().map(|r| r.to_string()).unwrap_or_default()
    ))
    .into())
}

/// A group of ranks, from `hccl.create_group`. A rank outside the group gets a Group too
/// (`is_member` is False), and any use of it raises ValueError.
#[pyclass(module = "hccl", frozen)]
pub struct Group {
    id: u64,
    ranks: Vec<u32>,
    world_rank: u32,
    comm: Option<Arc<Comm>>,
}

impl Group {
    fn comm(&self, call: &str) -> PyResult<Arc<Comm>> {
        match &self.comm {
            Some(c) => Ok(c.clone()),
            None => Err(Error::value(format!(
                "{call}: this process (rank {}) is not a member of group {} (ranks {:?}); every \
                 rank calls create_group, but only its members can use the group",
                self.world_rank, self.id, self.ranks
            ))
            .into()),
        }
    }
}

#[pymethods]
impl Group {
    /// This process's rank in the group (ValueError outside it).
    #[getter]
    fn rank(&self) -> PyResult<u32> {
        Ok(self.comm("Group.rank")?.rank)
    }
    /// The number of ranks in the group.
    #[getter]
    fn size(&self) -> usize {
        self.ranks.len()
    }
    /// The world ranks of the members; member i has rank i in the group.
    #[getter]
    fn ranks(&self) -> Vec<u32> {
        self.ranks.clone()
    }
    /// Whether this process belongs to the group.
    #[getter]
    fn is_member(&self) -> bool {
        self.comm.is_some()
    }
    /// Destroy the group's communicator (after its queued calls finish). Nothing to do on a
    /// rank outside the group, so every rank may call it.
    fn destroy(&self, py: Python<'_>) -> PyResult<()> {
        let Some(c) = self.comm.clone() else {
            return Ok(());
        };
        let a = comm::api_or_err()?;
        py.detach(|| c.destroy(a))?;
        Ok(())
    }
    fn __repr__(&self) -> String {
        let names: Vec<String> = self.ranks.iter().map(|r| format!("rank{r}")).collect();
        match &self.comm {
            Some(c) => format!(
                "<hccl.Group {} [{}], this process is rank {} of {}>",
                self.id,
                names.join(", "),
                c.rank,
                c.size
            ),
            None => format!(
                "<hccl.Group {} [{}], this process (rank {}) is not a member>",
                self.id,
                names.join(", "),
                self.world_rank
            ),
        }
    }
}

/// The communicator a call uses: `group`'s, or the world's (built on first use).
fn comm_of(py: Python<'_>, call: &str, group: Option<&Bound<'_, Group>>) -> PyResult<Arc<Comm>> {
    match group {
        Some(g) => g.get().comm(call),
        None => Ok(comm::world(py)?),
    }
}

fn tensor(
    py: Python<'_>,
    call: &str,
    arg: &'static str,
    obj: &Bound<'_, PyAny>,
    out: bool,
) -> PyResult<tensor::Tensor> {
    Ok(tensor::take(py, call, arg, obj, out)?)
}

fn call1(
    py: Python<'_>,
    call: &str,
    kind: Kind,
    t: &Bound<'_, PyAny>,
    group: Option<&Bound<'_, Group>>,
    async_: bool,
    writes: bool,
) -> PyResult<Option<Work>> {
    let c = comm_of(py, call, group)?;
    let one = tensor(py, call, "tensor", t, writes)?;
    let args = Args {
        one: Some(one),
        output: None,
        input: None,
    };
    Ok(ops::run(py, call, kind, c, args, async_)?)
}

#[allow(clippy::too_many_arguments)]
fn call2(
    py: Python<'_>,
    call: &str,
    kind: Kind,
    output: &Bound<'_, PyAny>,
    input: &Bound<'_, PyAny>,
    group: Option<&Bound<'_, Group>>,
    async_: bool,
) -> PyResult<Option<Work>> {
    let c = comm_of(py, call, group)?;
    let o = tensor(py, call, "output", output, true)?;
    let i = tensor(py, call, "input", input, false)?;
    let args = Args {
        one: None,
        output: Some(o),
        input: Some(i),
    };
    Ok(ops::run(py, call, kind, c, args, async_)?)
}

fn done(w: Option<Work>) -> PyResult<()> {
    debug_assert!(w.is_none());
    Ok(())
}

fn work(w: Option<Work>) -> PyResult<Work> {
    w.ok_or_else(|| Error::Runtime("hccl: internal error: no handle".into()).into())
}

/// Build the world communicator from the launcher's environment (idempotent; every other
/// call does it on first use).
#[pyfunction]
fn init_comm_group(py: Python<'_>) -> PyResult<()> {
    comm::world(py)?;
    Ok(())
}

/// Whether the world communicator exists.
#[pyfunction]
fn is_initialized() -> bool {
    comm::initialized()
}

/// This process's rank in the world (or in `group`).
#[pyfunction]
#[pyo3(signature = (group=None))]
fn get_rank(py: Python<'_>, group: Option<&Bound<'_, Group>>) -> PyResult<u32> {
    Ok(comm_of(py, "get_rank", group)?.rank)
}

/// The number of ranks in the world (or in `group`).
#[pyfunction]
#[pyo3(signature = (group=None))]
fn get_world_size(py: Python<'_>, group: Option<&Bound<'_, Group>>) -> PyResult<u32> {
    Ok(comm_of(py, "get_world_size", group)?.size)
}

/// The NPU this process's communicators use.
#[pyfunction]
fn get_device(py: Python<'_>) -> PyResult<i32> {
    Ok(comm::world(py)?.device)
}

/// A group of world ranks, given as "rankN" names or ints. Every rank of the world calls it
/// with the same list, in the same order as its other create_group calls (as with
/// torch.distributed.new_group); ranks outside the list get a Group whose use raises.
#[pyfunction]
fn create_group(py: Python<'_>, ranks: &Bound<'_, PyAny>) -> PyResult<Group> {
    let w = comm::world(py)?;
    if ranks.is_instance_of::<PyString>() {
        return Err(Error::Type(
            "create_group: ranks must be a list such as [\"rank0\", \"rank1\"] or [0, 1], not a string"
                .into(),
        )
        .into());
    }
    let mut ids: Vec<u32> = Vec::new();
    let items = ranks.try_iter().map_err(|_| {
        Error::Type("create_group: ranks must be a list of \"rankN\" names or ints".into())
    })?;
    for (i, item) in items.enumerate() {
        let item = item?;
        let r: Option<i64> = if let Ok(s) = item.extract::<String>() {
            s.strip_prefix("rank").and_then(|n| n.parse::<i64>().ok())
        } else if item.is_instance_of::<pyo3::types::PyBool>() {
            None
        } else {
            item.extract::<i64>().ok()
        };
        let Some(r) = r else {
            return Err(Error::value(format!(
                "create_group: ranks[{i}]={} is neither a \"rankN\" name nor an int",
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
            .into());
        };
        if r < 0 || r >= w.size as i64 {
            return Err(Error::value(format!(
                "create_group: ranks[{i}] is rank {r}, but the world has ranks 0..{}",
                w.size - 1
            ))
            .into());
        }
        ids.push(r as u32);
    }
    if ids.is_empty() {
        return Err(Error::value("create_group: ranks is empty").into());
    }
    ids.sort_unstable();
    if let Some(d) = ids.windows(2).find(|p| p[0] == p[1]) {
        return Err(Error::value(format!("create_group: rank {} is listed twice", d[0])).into());
    }
    let (id, c) = comm::create_group(py, &ids)?;
    Ok(Group {
        id,
        ranks: ids,
        world_rank: w.rank,
        comm: c,
    })
}

/// Destroy `group`'s communicator, or (no argument) every communicator; the next call then
/// builds a new world.
#[pyfunction]
#[pyo3(signature = (group=None))]
fn destroy(py: Python<'_>, group: Option<&Bound<'_, Group>>) -> PyResult<()> {
    match group {
        Some(g) => g.get().destroy(py),
        None => Ok(comm::destroy_all(py)?),
    }
}

/// Wait for a handle from an *_async call (or a list of them).
#[pyfunction]
#[pyo3(signature = (handle, timeout=None))]
fn wait(handle: &Bound<'_, PyAny>, timeout: Option<f64>) -> PyResult<()> {
    if let Ok(w) = handle.cast::<Work>() {
        return w.call_method1("wait", (timeout,)).map(|_| ());
    }
    if handle.is_instance_of::<PyList>() || handle.is_instance_of::<PyTuple>() {
        for h in handle.try_iter()? {
            wait(&h?, timeout)?;
        }
        return Ok(());
    }
    Err(Error::Type(format!(
        "wait: handle must be what an *_async call returned (hccl.Work), got {}",
        handle
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    ))
    .into())
}

macro_rules! in_place {
    ($name:ident, $aname:ident, $doc:literal, ($($p:ident : $t:ty $(= $d:expr)?),*), $writes:expr, |$call:ident, $py:ident| $kind:expr) => {
        #[doc = $doc]
        #[allow(unused_variables)]
        #[pyfunction]
        #[pyo3(signature = (tensor, $($p $(= $d)?,)* group=None))]
        fn $name($py: Python<'_>, tensor: &Bound<'_, PyAny>, $($p: $t,)* group: Option<&Bound<'_, Group>>) -> PyResult<()> {
            let $call = stringify!($name);
            let kind = $kind;
            done(call1($py, $call, kind, tensor, group, false, $writes)?)
        }
        #[doc = concat!("As ", stringify!($name), ", but returns an hccl.Work at once: wait() on it before reading the result.")]
        #[allow(unused_variables)]
        #[pyfunction]
        #[pyo3(signature = (tensor, $($p $(= $d)?,)* group=None))]
        fn $aname($py: Python<'_>, tensor: &Bound<'_, PyAny>, $($p: $t,)* group: Option<&Bound<'_, Group>>) -> PyResult<Work> {
            let $call = stringify!($aname);
            let kind = $kind;
            work(call1($py, $call, kind, tensor, group, true, $writes)?)
        }
    };
}

macro_rules! out_of_place {
    ($name:ident, $aname:ident, $doc:literal, ($($p:ident : $t:ty = $d:expr),*), |$call:ident, $py:ident| $kind:expr) => {
        #[doc = $doc]
        #[allow(unused_variables)]
        #[pyfunction]
        #[pyo3(signature = (output, input, $($p = $d,)* group=None))]
        fn $name($py: Python<'_>, output: &Bound<'_, PyAny>, input: &Bound<'_, PyAny>, $($p: $t,)* group: Option<&Bound<'_, Group>>) -> PyResult<()> {
            let $call = stringify!($name);
            let kind = $kind;
            done(call2($py, $call, kind, output, input, group, false)?)
        }
        #[doc = concat!("As ", stringify!($name), ", but returns an hccl.Work at once: wait() on it before reading the result.")]
        #[allow(unused_variables)]
        #[pyfunction]
        #[pyo3(signature = (output, input, $($p = $d,)* group=None))]
        fn $aname($py: Python<'_>, output: &Bound<'_, PyAny>, input: &Bound<'_, PyAny>, $($p: $t,)* group: Option<&Bound<'_, Group>>) -> PyResult<Work> {
            let $call = stringify!($aname);
            let kind = $kind;
            work(call2($py, $call, kind, output, input, group, true)?)
        }
    };
}

in_place!(all_reduce, all_reduce_async,
    "Reduce `tensor` over the ranks with `op` (hccl.Sum by default); every rank gets the result in `tensor`.",
    (op: Option<&Bound<'_, PyAny>> = None), true,
    |call, py| Kind::AllReduce { op: reduce_op(call, op)? });
in_place!(broadcast, broadcast_async,
    "Copy `tensor` of rank `root` (a rank of the group) into `tensor` of every rank.",
    (root: u32 = 0), true,
    |call, py| Kind::Broadcast { root });
in_place!(reduce, reduce_async,
    "Reduce `tensor` over the ranks with `op`; rank `root` gets the result in `tensor`, the others' `tensor` is left as it was.",
    (root: u32 = 0, op: Option<&Bound<'_, PyAny>> = None), true,
    |call, py| Kind::Reduce { op: reduce_op(call, op)?, root });
in_place!(send, send_async,
    "Send `tensor` to rank `dst` of the group, which calls recv with the same element count and dtype. Like HcclSend, it completes when the receiver has received.",
    (dst: u32), false,
    |call, py| Kind::Send { peer: dst });
in_place!(recv, recv_async,
    "Receive into `tensor` what rank `src` of the group sends.",
    (src: u32), true,
    |call, py| Kind::Recv { peer: src });

out_of_place!(
    all_gather,
    all_gather_async,
    "Gather `input` of every rank into `output` (group size × input's elements, rank-major).",
    (),
    |call, py| Kind::AllGather
);
out_of_place!(reduce_scatter, reduce_scatter_async,
    "Reduce `input` (group size × output's elements) over the ranks with `op`; rank i gets block i of the result in `output`.",
    (op: Option<&Bound<'_, PyAny>> = None),
    |call, py| Kind::ReduceScatter { op: reduce_op(call, op)? });
out_of_place!(all_to_all, all_to_all_async,
    "Split `input` into group-size equal blocks; block j goes to rank j, and `output`'s block i comes from rank i.",
    (),
    |call, py| Kind::AllToAll);

/// Wait until every rank of the world (or `group`) has called barrier.
#[pyfunction]
#[pyo3(signature = (group=None))]
fn barrier(py: Python<'_>, group: Option<&Bound<'_, Group>>) -> PyResult<()> {
    let c = comm_of(py, "barrier", group)?;
    let args = Args {
        one: None,
        output: None,
        input: None,
    };
    done(ops::run(py, "barrier", Kind::Barrier, c, args, false)?)
}

/// As barrier, but returns an hccl.Work at once.
#[pyfunction]
#[pyo3(signature = (group=None))]
fn barrier_async(py: Python<'_>, group: Option<&Bound<'_, Group>>) -> PyResult<Work> {
    let c = comm_of(py, "barrier_async", group)?;
    let args = Args {
        one: None,
        output: None,
        input: None,
    };
    work(ops::run(py, "barrier_async", Kind::Barrier, c, args, true)?)
}

/// Destroys the communicators at interpreter exit (registered with atexit).
#[pyfunction]
fn _shutdown(py: Python<'_>) {
    let _ = comm::destroy_all(py);
}

#[pymodule]
#[pyo3(name = "hccl")]
fn hccl_python(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let api =
        ffi::api().map_err(|e| pyo3::exceptions::PyImportError::new_err(format!("hccl: {e}")))?;
    // Which libhccl.so / libascendcl.so this process uses.
    m.add("__libraries__", api.found.clone())?;
    m.add("HcclError", py.get_type::<errors::HcclError>())?;
    m.add_class::<ReduceOp>()?;
    m.add_class::<Group>()?;
    m.add_class::<Work>()?;
    for (n, op) in [
        ("Sum", ReduceOp::Sum),
        ("Prod", ReduceOp::Prod),
        ("Max", ReduceOp::Max),
        ("Min", ReduceOp::Min),
    ] {
        m.add(n, op)?;
    }
    m.add_function(wrap_pyfunction!(init_comm_group, m)?)?;
    m.add_function(wrap_pyfunction!(is_initialized, m)?)?;
    m.add_function(wrap_pyfunction!(get_rank, m)?)?;
    m.add_function(wrap_pyfunction!(get_world_size, m)?)?;
    m.add_function(wrap_pyfunction!(get_device, m)?)?;
    m.add_function(wrap_pyfunction!(create_group, m)?)?;
    m.add_function(wrap_pyfunction!(destroy, m)?)?;
    m.add_function(wrap_pyfunction!(wait, m)?)?;
    m.add_function(wrap_pyfunction!(all_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(all_reduce_async, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast_async, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_async, m)?)?;
    m.add_function(wrap_pyfunction!(send, m)?)?;
    m.add_function(wrap_pyfunction!(send_async, m)?)?;
    m.add_function(wrap_pyfunction!(recv, m)?)?;
    m.add_function(wrap_pyfunction!(recv_async, m)?)?;
    m.add_function(wrap_pyfunction!(all_gather, m)?)?;
    m.add_function(wrap_pyfunction!(all_gather_async, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_scatter, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_scatter_async, m)?)?;
    m.add_function(wrap_pyfunction!(all_to_all, m)?)?;
    m.add_function(wrap_pyfunction!(all_to_all_async, m)?)?;
    m.add_function(wrap_pyfunction!(barrier, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_async, m)?)?;
    let shutdown = wrap_pyfunction!(_shutdown, m)?;
    py.import("atexit")?.call_method1("register", (shutdown,))?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // What `from hccl import *` takes (and what maturin's package __init__ re-exports).
    let mut all: Vec<String> = Vec::new();
    for k in m.dict().keys() {
        let k: String = k.extract()?;
        if !k.starts_with('_') || k == "__version__" || k == "__libraries__" {
            all.push(k);
        }
    }
    all.sort();
    m.add("__all__", all)?;
    Ok(())
}
