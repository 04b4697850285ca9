//! One path for every call: check the arguments, pick the stream (torch_npu's current stream
//! when an NPU tensor takes part, else this module's stream of the communicator), stage host
//! memory through device memory, enqueue the HCCL call, then either wait for the stream
//! (the plain functions) or return a [`Work`] (the `*_async` ones).

use crate::comm::{lock, with_device, Comm, DevBuf, Event};
use crate::errors::{check_acl, check_hccl, Error, Result, HCCL_E_RUNTIME, HCCL_E_TIMEOUT};
use crate::ffi::{self, Api, Ptr};
use crate::tensor::{DType, Place, Tensor};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The HCCL call to make.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    AllReduce { op: i32 },
    Broadcast { root: u32 },
    Reduce { op: i32, root: u32 },
    AllGather,
    ReduceScatter { op: i32 },
    AllToAll,
    Send { peer: u32 },
    Recv { peer: u32 },
    Barrier,
}

impl Kind {
    fn reduce_op(self) -> Option<i32> {
        match self {
            Kind::AllReduce { op } | Kind::Reduce { op, .. } | Kind::ReduceScatter { op } => {
                Some(op)
            }
            _ => None,
        }
    }
}

/// One tensor of a call, with its device memory.
struct Slot {
    t: Tensor,
    /// Staging memory when `t` is host memory.
    stage: Option<DevBuf>,
    /// The call reads it (host memory is copied in first).
    read: bool,
    /// The call writes it (host memory is copied back after).
    write: bool,
}

impl Slot {
    fn dev(&self) -> usize {
        match &self.stage {
            Some(b) => b.ptr,
            None => self.t.ptr,
        }
    }
}

/// `tensor` (in-place calls) or `output` and `input`, checked against `comm`.
pub struct Args {
    pub one: Option<Tensor>,
    pub output: Option<Tensor>,
    pub input: Option<Tensor>,
}

fn check(call: &str, kind: Kind, c: &Comm, a: &Args) -> Result<()> {
    let all = [&a.one, &a.output, &a.input];
    for t in all.iter().copied().flatten() {
        if let Place::Npu(d) = t.place {
            if d != c.device {
                return Err(Error::value(format!(
                    "{call}: {} is on npu:{d}, but this process's communicator is on npu:{} \
                     (call torch.npu.set_device({}) before creating tensors, or move it there)",
                    t.arg, c.device, c.device
                )));
            }
        }
        if kind.reduce_op().is_some() && t.dtype == DType::Bool {
            return Err(Error::value(format!(
                "{call}: {} is a bool tensor, which HCCL cannot reduce; convert it to uint8 or \
                 int32 first",
                t.arg
            )));
        }
    }
    let size = c.size as u64;
    let rank_arg = |name: &str, r: u32| -> Result<()> {
        if r >= c.size {
            return Err(Error::value(format!(
                "{call}: {name}={r} is not a rank of the {} communicator, whose ranks are 0..{}",
                c.label,
                c.size - 1
            )));
        }
        Ok(())
    };
    match kind {
        Kind::Broadcast { root } | Kind::Reduce { root, .. } => rank_arg("root", root)?,
        Kind::Send { peer } | Kind::Recv { peer } => {
            let name = if matches!(kind, Kind::Send { .. }) {
                "dst"
            } else {
                "src"
            };
            rank_arg(name, peer)?;
            if peer == c.rank {
                return Err(Error::value(format!(
                    "{call}: {name}={peer} is this process's own rank; HCCL sends only to other ranks"
                )));
            }
        }
        _ => {}
    }
    if let (Some(o), Some(i)) = (&a.output, &a.input) {
        if o.dtype != i.dtype {
            return Err(Error::value(format!(
                "{call}: output has dtype {} but input has dtype {}; they must match",
                o.dtype.name(),
                i.dtype.name()
            )));
        }
        let (want_out, rule) = match kind {
            Kind::AllGather => (i.count * size, "input's elements × the group size"),
            Kind::ReduceScatter { .. } => {
                if i.count % size != 0 {
                    return Err(Error::value(format!(
                        "{call}: input has {} elements, which do not split evenly among {size} \
                         ranks",
                        i.count
                    )));
                }
                (i.count / size, "input's elements ÷ the group size")
            }
            _ => {
                if i.count % size != 0 {
                    return Err(Error::value(format!(
                        "{call}: input has {} elements, which do not split evenly into {size} \
                         blocks (one per rank)",
                        i.count
                    )));
                }
                (i.count, "input's elements")
            }
        };
        if o.count != want_out {
            return Err(Error::value(format!(
                "{call}: output has {} elements ({}), but input is {} and the group has {size} \
                 ranks, so output must have {want_out} ({rule})",
                o.count,
                o.describe(),
                i.describe()
            )));
        }
    }
    Ok(())
}

/// torch_npu's current stream on `device`. Both ways of asking empty torch_npu's task queue
/// first (`NPUStream::stream()`), so everything torch queued before is on the stream before the
/// HCCL call: `torch_npu._C._npu_getCurrentRawStream(device)` (0.2 µs), else
/// `torch.npu.current_stream(device).npu_stream` (25 µs: it builds a Stream object).
fn torch_stream(py: Python<'_>, device: i32) -> Result<usize> {
    static RAW: PyOnceLock<Option<Py<PyAny>>> = PyOnceLock::new();
    let raw = RAW.get_or_init(py, || {
        py.import("torch_npu._C")
            .and_then(|c| c.getattr("_npu_getCurrentRawStream"))
            .ok()
            .map(Bound::unbind)
    });
    let r = match raw {
        Some(f) => f.bind(py).call1((device,)),
        None => py
            .import("torch")
            .and_then(|t| t.getattr("npu"))
            .and_then(|n| n.call_method1("current_stream", (device,)))
            .and_then(|s| s.getattr("npu_stream")),
    };
    r.and_then(|p| p.extract::<usize>()).map_err(|e| {
        Error::Runtime(format!(
            "hccl: cannot get torch_npu's current stream on npu:{device}: {e}"
        ))
    })
}

/// The error of a failed stream synchronisation: HCCL's code when the communicator has one
/// (`HcclGetCommAsyncError`), with the message HCCL left.
fn stream_failure(a: &Api, call: &str, h: usize, code: i32) -> Error {
    let msg = a.recent();
    let mut ae = 0;
    // SAFETY: `h` is a live HcclComm; `ae` a valid out-pointer.
    unsafe { (a.get_async_error)(h as Ptr, &mut ae) };
    if ae != 0 {
        let m = if msg.is_empty() {
            a.error_string(ae)
        } else {
            msg
        };
        return Error::hccl(ae, m);
    }
    let detail = if msg.is_empty() {
        String::new()
    } else {
        format!(": {msg}")
    };
    Error::hccl(
        HCCL_E_RUNTIME,
        format!("{call}: waiting for the stream failed with ACL error {code}{detail}"),
    )
}

/// Copy `bytes` between host and device with the GIL released.
fn copy(
    py: Python<'_>,
    a: &'static Api,
    device: i32,
    dst: usize,
    src: usize,
    bytes: usize,
    kind: i32,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    py.detach(|| {
        with_device(a, device, || {
            // SAFETY: `dst` and `src` are `bytes` long: a staging block of at least that size
            // and a host buffer the call keeps alive (a Tensor holding its exporter).
            let rc = unsafe { (a.memcpy)(dst as Ptr, bytes, src as *const _, bytes, kind) };
            check_acl(a, "aclrtMemcpy", rc)
        })
    })
}

/// What an enqueued call needs until it completes.
pub struct Inflight {
    call: String,
    comm: Arc<Comm>,
    handle: usize,
    stream: usize,
    event: Arc<Event>,
    slots: Vec<Slot>,
}

/// Run `kind` on `comm`. `async_`: return a [`Work`] instead of waiting.
pub fn run(
    py: Python<'_>,
    call: &str,
    kind: Kind,
    comm: Arc<Comm>,
    args: Args,
    async_: bool,
) -> Result<Option<Work>> {
    check(call, kind, &comm, &args)?;
    let a = crate::comm::api_or_err()?;
    let h = comm.handle(call)?;
    let Args { one, output, input } = args;
    let rank = comm.rank;
    let mut slots: Vec<Slot> = Vec::new();
    if let Some(t) = one {
        let (read, write) = match kind {
            Kind::AllReduce { .. } => (true, true),
            Kind::Broadcast { root } => (rank == root, rank != root),
            Kind::Reduce { root, .. } => (true, rank == root),
            Kind::Send { .. } => (true, false),
            Kind::Recv { .. } => (false, true),
            _ => (true, true),
        };
        slots.push(Slot {
            t,
            stage: None,
            read,
            write,
        });
    }
    if let Some(t) = output {
        slots.push(Slot {
            t,
            stage: None,
            read: false,
            write: true,
        });
    }
    if let Some(t) = input {
        slots.push(Slot {
            t,
            stage: None,
            read: true,
            write: false,
        });
    }
    let npu = slots.iter().any(|s| matches!(s.t.place, Place::Npu(_)));
    let stream = if npu {
        torch_stream(py, comm.device)?
    } else {
        comm.stream
    };
    for s in slots.iter_mut() {
        if s.t.place == Place::Host {
            let b = DevBuf::get(a, comm.device, s.t.bytes())?;
            if s.read {
                copy(
                    py,
                    a,
                    comm.device,
                    b.ptr,
                    s.t.ptr,
                    s.t.bytes(),
                    ffi::ACL_MEMCPY_HOST_TO_DEVICE,
                )?;
            }
            s.stage = Some(b);
        }
    }
    let ptrs: Vec<usize> = slots.iter().map(Slot::dev).collect();
    let counts: Vec<u64> = slots.iter().map(|s| s.t.count).collect();
    let count = counts.first().copied().unwrap_or(0);
    let dt = slots.first().map(|s| s.t.dtype.hccl()).unwrap_or(0);
    let c2 = comm.clone();
    let event = py.detach(|| -> Result<Option<Arc<Event>>> {
        let _serial = lock(&c2.serial);
        a.drain();
        with_device(a, c2.device, || {
            // Calls of one communicator run in call order, even across streams.
            if let Some((s, ev)) = lock(&c2.pending).take() {
                if s != stream {
                    // SAFETY: live stream and event of this process.
                    let rc = unsafe { (a.stream_wait_event)(stream as Ptr, ev.0 as Ptr) };
                    check_acl(a, "aclrtStreamWaitEvent", rc)?;
                }
            }
            let (hp, sp) = (h as Ptr, stream as Ptr);
            let p = |i: usize| ptrs[i] as Ptr;
            // SAFETY: every pointer is device memory of at least the size HCCL reads or writes
            // (counts checked in `check`), on this communicator's device; `h` and `stream` are
            // live handles.
            let (name, rc) = unsafe {
                match kind {
                    Kind::AllReduce { op } => (
                        "HcclAllReduce",
                        (a.all_reduce)(p(0), p(0), count, dt, op, hp, sp),
                    ),
                    Kind::Broadcast { root } => (
                        "HcclBroadcast",
                        (a.broadcast)(p(0), count, dt, root, hp, sp),
                    ),
                    Kind::Reduce { op, root } => (
                        "HcclReduce",
                        (a.reduce)(p(0), p(0), count, dt, op, root, hp, sp),
                    ),
                    Kind::Send { peer } => ("HcclSend", (a.send)(p(0), count, dt, peer, hp, sp)),
                    Kind::Recv { peer } => ("HcclRecv", (a.recv)(p(0), count, dt, peer, hp, sp)),
                    Kind::AllGather => (
                        "HcclAllGather",
                        (a.all_gather)(p(1), p(0), counts[1], dt, hp, sp),
                    ),
                    Kind::ReduceScatter { op } => (
                        "HcclReduceScatter",
                        (a.reduce_scatter)(p(1), p(0), count, dt, op, hp, sp),
                    ),
                    Kind::AllToAll => {
                        let per = count / c2.size as u64;
                        (
                            "HcclAlltoAll",
                            (a.all_to_all)(p(1), per, dt, p(0), per, dt, hp, sp),
                        )
                    }
                    Kind::Barrier => ("HcclBarrier", (a.barrier)(hp, sp)),
                }
            };
            check_hccl(a, name, rc)?;
            if async_ {
                let ev = Arc::new(Event::new(a)?);
                // SAFETY: live event and stream.
                check_acl(a, "aclrtRecordEvent", unsafe {
                    (a.record_event)(ev.0 as Ptr, sp)
                })?;
                *lock(&c2.pending) = Some((stream, ev.clone()));
                return Ok(Some(ev));
            }
            // SAFETY: live stream; -1 waits until the stream is done (HCCL_EXEC_TIMEOUT bounds
            // every HCCL task on it).
            let rc = unsafe { (a.sync_stream_timeout)(sp, -1) };
            if rc != 0 {
                return Err(stream_failure(a, name, h, rc));
            }
            Ok(None)
        })
    })?;
    match event {
        Some(event) => Ok(Some(Work {
            state: Mutex::new(State::Running(Box::new(Inflight {
                call: call.to_string(),
                comm,
                handle: h,
                stream,
                event,
                slots,
            }))),
        })),
        None => {
            copy_back(py, a, comm.device, &slots)?;
            Ok(None)
        }
    }
}

fn copy_back(py: Python<'_>, a: &'static Api, device: i32, slots: &[Slot]) -> Result<()> {
    for s in slots {
        if let (true, Some(b)) = (s.write, &s.stage) {
            copy(
                py,
                a,
                device,
                s.t.ptr,
                b.ptr,
                s.t.bytes(),
                ffi::ACL_MEMCPY_DEVICE_TO_HOST,
            )?;
        }
    }
    Ok(())
}

enum State {
    Running(Box<Inflight>),
    Done(Option<(i32, String)>),
}

/// The handle of an asynchronous call: `wait(timeout=None)` until it is done (copying results
/// into host arrays), `is_completed()` to ask without waiting.
#[pyclass(module = "hccl", name = "Work")]
pub struct Work {
    state: Mutex<State>,
}

impl Work {
    /// Wait at most `timeout` seconds (`None`: until done). `Ok(false)`: not done yet.
    fn finish(&self, py: Python<'_>, timeout: Option<f64>) -> Result<bool> {
        let infl = {
            let mut st = lock(&self.state);
            match &mut *st {
                State::Done(None) => return Ok(true),
                State::Done(Some((code, msg))) => return Err(Error::hccl(*code, msg.clone())),
                State::Running(_) => match std::mem::replace(&mut *st, State::Done(None)) {
                    State::Running(f) => f,
                    State::Done(_) => return Ok(true),
                },
            }
        };
        let a = crate::comm::api_or_err()?;
        let (ev, dev) = (infl.event.0, infl.comm.device);
        let r = py.detach(|| {
            a.drain();
            with_device(a, dev, || {
                if let Some(t) = timeout {
                    // Poll (a timed-out aclrtSynchronizeEventWithTimeout would log an error
                    // for what is the caller's own limit).
                    let deadline = Instant::now() + Duration::from_secs_f64(t);
                    let mut nap = Duration::from_micros(20);
                    loop {
                        let mut st = 0;
                        // SAFETY: live event, valid out-pointer.
                        check_acl(a, "aclrtQueryEventStatus", unsafe {
                            (a.query_event)(ev as Ptr, &mut st)
                        })?;
                        if st == ffi::ACL_EVENT_RECORDED_STATUS_COMPLETE {
                            break;
                        }
                        let now = Instant::now();
                        if now >= deadline {
                            return Ok(false);
                        }
                        std::thread::sleep(nap.min(deadline - now));
                        nap = (nap * 2).min(Duration::from_millis(1));
                    }
                }
                // SAFETY: live event (complete already when a timeout was given).
                let rc = unsafe { (a.sync_event_timeout)(ev as Ptr, -1) };
                check_acl(a, "aclrtSynchronizeEventWithTimeout", rc)?;
                if infl.comm.handle(&infl.call).is_err() {
                    // Destroyed since (destroy waited for the call): nothing left to ask HCCL.
                    return Ok(true);
                }
                let mut ae = 0;
                // SAFETY: live HcclComm, valid out-pointer.
                unsafe { (a.get_async_error)(infl.handle as Ptr, &mut ae) };
                if ae != 0 {
                    // SAFETY: live stream: collect the failure and its message.
                    let rc = unsafe { (a.sync_stream_timeout)(infl.stream as Ptr, -1) };
                    return Err(stream_failure(
                        a,
                        &infl.call,
                        infl.handle,
                        if rc == 0 { ae } else { rc },
                    ));
                }
                Ok(true)
            })
        });
        let done = match r {
            Ok(d) => d,
            Err(e) => {
                *lock(&self.state) = State::Done(match &e {
                    Error::Hccl { code, msg } => Some((*code, msg.clone())),
                    other => Some((HCCL_E_RUNTIME, format!("{other:?}"))),
                });
                return Err(e);
            }
        };
        if !done {
            *lock(&self.state) = State::Running(infl);
            return Ok(false);
        }
        if let Err(e) = copy_back(py, a, infl.comm.device, &infl.slots) {
            if let Error::Hccl { code, msg } = &e {
                *lock(&self.state) = State::Done(Some((*code, msg.clone())));
            }
            return Err(e);
        }
        Ok(true)
    }
}

#[pymethods]
impl Work {
    /// Block until the call is done (at most `timeout` seconds; None waits as long as HCCL's
    /// own HCCL_EXEC_TIMEOUT allows). Raises HcclError if the call failed, or HcclError with
    /// name "HCCL_E_TIMEOUT" if the timeout passed first (the call keeps running; wait again).
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
        if let Some(t) = timeout {
            if !(t >= 0.0 && t.is_finite()) {
                return Err(Error::value(format!(
                    "wait: timeout={t} must be a non-negative number of seconds or None"
                ))
                .into());
            }
        }
        if self.finish(py, timeout)? {
            return Ok(());
        }
        let call = match &*lock(&self.state) {
            State::Running(f) => f.call.clone(),
            State::Done(_) => "the call".into(),
        };
        Err(Error::hccl(
            HCCL_E_TIMEOUT,
            format!(
                "wait(timeout={}): {call} did not complete within {} s; it is still running (call \
                 wait() again; its output must not be read before)",
                timeout.unwrap_or(0.0),
                timeout.unwrap_or(0.0)
            ),
        )
        .into())
    }

    /// Whether the call has finished (results are then in place, as after wait()). A failed
    /// call is finished too: wait() raises its error.
    fn is_completed(&self, py: Python<'_>) -> PyResult<bool> {
        match self.finish(py, Some(0.0)) {
            Ok(d) => Ok(d),
            Err(_) => Ok(true),
        }
    }

    fn __repr__(&self) -> String {
        match &*lock(&self.state) {
            State::Running(f) => format!("<hccl.Work {} running>", f.call),
            State::Done(None) => "<hccl.Work done>".into(),
            State::Done(Some((c, _))) => {
                format!("<hccl.Work failed with {}>", crate::errors::code_name(*c))
            }
        }
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        // An unwaited call still owns its memory: let it finish, then land its results.
        let running = matches!(&*lock(&self.state), State::Running(_));
        if running {
            Python::attach(|py| {
                let _ = self.finish(py, None);
            });
        }
    }
}
