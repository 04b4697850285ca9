//! Models (`aclmdlRI`): stream operations held for later and run any number of times.
//!
//! A model is made two ways, as in CANN:
//! - **captured** (`aclmdlRICaptureBegin` … `aclmdlRICaptureEnd`): the operations enqueued on
//!   the capturing stream go to lane 0 instead of running. A stream that waits on an event
//!   recorded in the capture joins it as a further lane; such a lane must end with a record
//!   the origin lane (or another lane) waits for, or the capture is "unjoined". Every lane
//!   starts when the model runs.
//! - **built** (`aclmdlRIBuildBegin`, `aclmdlRIBindStream` … `aclmdlRIBuildEnd`): each bound
//!   stream is a lane; only head lanes (bind flag 0) start, the others when an
//!   `aclrtActiveStream` / `aclrtSwitchStream` of a running lane starts them. Labels
//!   (`aclrtSetLabel`) mark positions; `aclrtSwitchLabelByIndex` stops its lane and continues
//!   at the chosen label (on that label's lane).
//!
//! Running a model (`aclmdlRIExecuteAsync` on a stream) enqueues one task on that stream: it
//! runs lane 0 (or the first head lane) on the stream's worker and the other lanes on helper
//! streams the model owns, and finishes when every started lane has finished, so the model
//! is ordered with the other work of the stream like any task. Records and waits between
//! lanes use per-execution latches, so executions never see each other's records. An
//! operation whose host call takes a ticket ([`Replay::Host`]: an HCCL collective's sequence
//! number, a record of a real event) is made on the launching thread, in capture order.
//!
//! Task groups (`aclmdlRICaptureTaskGrpBegin`/`End`) mark captured operations that may be
//! replaced later: an update (`aclmdlRICaptureTaskUpdateBegin`/`End` on some stream)
//! collects operations of the same kinds, and the replacement takes effect when that stream
//! reaches the end of the update, in order with the stream's other work.

use crate::codes::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, ACL_ERROR_RT_STREAM_MODEL,
    ACL_ERROR_RT_STREAM_UNJOINED, ACL_ERROR_STREAM_TASK_GROUP_STATUS,
};
use crate::error::{Error, Result};
use crate::globals::NEXT_TASK_GROUP as NEXT_GROUP;
use crate::stream::{Op, Replay, Sink, Stream, Task};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// A condition a model evaluates when it runs (it reads device memory).
pub type Cond = Arc<dyn Fn() -> Result<bool> + Send + Sync>;
/// A label index a model reads when it runs.
pub type Index = Arc<dyn Fn() -> Result<u32> + Send + Sync>;

/// One element of a lane.
#[derive(Clone)]
pub enum Node {
    /// A stream operation.
    Op(Op),
    /// Operation `i` of a task group (replaceable by an update).
    Slot(Arc<Group>, usize),
    /// Record of the capture's internal event `e`.
    Record(usize),
    /// Wait for record `k` (1-based) of internal event `e`.
    Wait(usize, u64),
    /// `aclrtActiveStream`: start lane `l`.
    Activate(usize),
    /// `aclrtSwitchStream`: start lane `lane` when `cond` holds.
    Switch {
        cond: Cond,
        lane: usize,
        what: String,
    },
    /// `aclrtSetLabel`: the position of label `id`.
    Label(u64),
    /// `aclrtSwitchLabelByIndex`: continue at `labels[min(index, len-1)]`.
    Jump {
        index: Index,
        labels: Vec<u64>,
        what: String,
    },
    /// `aclmdlRIEndTask`.
    End,
}

impl Node {
    fn describe(&self) -> String {
        match self {
            Node::Op(op) => format!("{}: {}", op.kind, op.what),
            Node::Slot(g, i) => {
                let ops = g.ops.lock();
                match ops.get(*i) {
                    Some(op) => {
                        format!("{}: {} (task group {}, updatable)", op.kind, op.what, g.id)
                    }
                    None => format!("task group {} slot {i}", g.id),
                }
            }
            Node::Record(e) => format!("event_record: capture event {e}"),
            Node::Wait(e, k) => format!("event_wait: capture event {e} (record {k})"),
            Node::Activate(l) => format!("stream_active: start lane {l}"),
            Node::Switch { lane, what, .. } => {
                format!("stream_switch: {what}, true -> lane {lane}")
            }
            Node::Label(id) => format!("label_set: label {id:#x}"),
            Node::Jump { labels, what, .. } => format!(
                "label_switch: {what} over {} labels [{}]",
                labels.len(),
                labels
                    .iter()
                    .map(|l| format!("{l:#x}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Node::End => "end_graph".to_string(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Node::Op(op) => op.kind,
            Node::Slot(g, i) => g.ops.lock().get(*i).map_or("task", |o| o.kind),
            Node::Record(_) => "event_record",
            Node::Wait(..) => "event_wait",
            Node::Activate(_) => "stream_active",
            Node::Switch { .. } => "stream_switch",
            Node::Label(_) => "label_set",
            Node::Jump { .. } => "label_switch",
            Node::End => "end_graph",
        }
    }
}

/// A task group: captured operations that an update may replace (same count, same kinds).
pub struct Group {
    pub id: u64,
    ops: Mutex<Vec<Op>>,
    /// Model that owns the group (weak: a handle may outlive its model).
    model: Weak<Model>,
}

impl Group {
    /// The model the group belongs to, if it is still alive.
    pub fn model(&self) -> Option<Arc<Model>> {
        self.model.upgrade()
    }

    /// Number of operations in the group.
    pub fn len(&self) -> usize {
        self.ops.lock().len()
    }

    /// Whether the group holds no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Check that `new` can replace the group's operations (same count, same kinds).
    pub fn check_update(&self, new: &[Op]) -> Result<()> {
        let old = self.ops.lock();
        if old.len() != new.len() {
            return Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "the update of task group {} issued {} task(s), but the group holds {} ({}): an update must issue the same tasks with new arguments",
                    self.id,
                    new.len(),
                    old.len(),
                    old.iter().map(|o| o.kind).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        for (i, (a, b)) in old.iter().zip(new).enumerate() {
            if a.kind != b.kind {
                return Err(Error::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "the update of task group {}: task {i} is a {} task, but the group holds a {} task there ({})",
                        self.id, b.kind, a.kind, a.what
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Replace the group's operations (checked by [`Group::check_update`]).
    pub fn replace(&self, new: Vec<Op>) {
        *self.ops.lock() = new;
    }

    fn op(&self, i: usize) -> Option<Op> {
        self.ops.lock().get(i).cloned()
    }
}

/// How a model was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Captured,
    Built,
}

/// Where the model is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Being captured or built: operations are still coming in.
    Open,
    /// A capture error happened; the reason.
    Invalid(String),
    /// Complete: may run.
    Ready,
}

/// One lane: the operations of one stream.
pub struct Lane {
    pub name: String,
    /// Starts when the model runs (captured lanes, built head lanes).
    pub head: bool,
    pub nodes: Vec<Node>,
    /// Task group being filled on this lane.
    open_group: Option<Arc<Group>>,
    /// Set by `aclmdlRIEndTask`: no operation may follow.
    ended: bool,
}

struct State {
    name: String,
    status: Status,
    lanes: Vec<Lane>,
    /// Records issued so far per internal event.
    records: Vec<u64>,
    groups: Vec<Arc<Group>>,
}

/// A model.
pub struct Model {
    pub id: u32,
    pub origin: Origin,
    /// Device (logical id) the model's streams belong to.
    pub device: i32,
    st: Mutex<State>,
    /// Helper streams for lanes 1.. (made on first use).
    helpers: Mutex<Vec<Arc<Stream>>>,
    /// Stream of `aclmdlRIExecute` (made on first use).
    own: Mutex<Option<Arc<Stream>>>,
    /// Executions before this number were aborted (`aclmdlRIAbort`).
    abort_gen: AtomicU64,
    launches: AtomicU64,
    /// Executions started and not finished.
    running: Arc<(Mutex<u32>, Condvar)>,
}

impl Model {
    /// A new model; a captured one starts with its origin lane, named `origin_lane`.
    pub fn new(id: u32, origin: Origin, device: i32, origin_lane: Option<&str>) -> Arc<Model> {
        let lanes = origin_lane
            .map(|n| {
                vec![Lane {
                    name: n.to_string(),
                    head: true,
                    nodes: Vec::new(),
                    open_group: None,
                    ended: false,
                }]
            })
            .unwrap_or_default();
        Arc::new(Model {
            id,
            origin,
            device,
            st: Mutex::new(State {
                name: String::new(),
                status: Status::Open,
                lanes,
                records: Vec::new(),
                groups: Vec::new(),
            }),
            helpers: Mutex::new(Vec::new()),
            own: Mutex::new(None),
            abort_gen: AtomicU64::new(0),
            launches: AtomicU64::new(0),
            running: Arc::new((Mutex::new(0), Condvar::new())),
        })
    }

    /// The model's name (`aclmdlRISetName`).
    pub fn name(&self) -> String {
        self.st.lock().name.clone()
    }

    pub fn set_name(&self, name: &str) {
        self.st.lock().name = name.to_string();
    }

    pub fn status(&self) -> Status {
        self.st.lock().status.clone()
    }

    /// Mark a capture invalid (the first reason is kept).
    pub fn invalidate(&self, reason: &str) {
        let mut st = self.st.lock();
        if st.status == Status::Open {
            st.status = Status::Invalid(reason.to_string());
        }
    }

    /// Add a lane (a stream joining the capture, or a bound stream); its index.
    pub fn add_lane(&self, name: &str, head: bool) -> Result<usize> {
        let mut st = self.st.lock();
        if st.status == Status::Ready {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_MODEL,
                format!("model {} is already built: no stream can join it", self.id),
            ));
        }
        st.lanes.push(Lane {
            name: name.to_string(),
            head,
            nodes: Vec::new(),
            open_group: None,
            ended: false,
        });
        Ok(st.lanes.len() - 1)
    }

    /// Number of lanes.
    pub fn lanes(&self) -> usize {
        self.st.lock().lanes.len()
    }

    /// Number of nodes over all lanes.
    pub fn nodes(&self) -> usize {
        self.st.lock().lanes.iter().map(|l| l.nodes.len()).sum()
    }

    /// Append a node to lane `lane`; an operation goes into the lane's open task group.
    pub fn push(self: &Arc<Self>, lane: usize, node: Node) -> Result<()> {
        let mut st = self.st.lock();
        if st.status != Status::Open {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_MODEL,
                format!(
                    "model {} is {}: it takes no more tasks",
                    self.id,
                    match &st.status {
                        Status::Ready => "already complete".to_string(),
                        Status::Invalid(r) => format!("an invalidated capture ({r})"),
                        Status::Open => unreachable!(),
                    }
                ),
            ));
        }
        let model_id = self.id;
        let l = st.lanes.get_mut(lane).ok_or_else(|| {
            Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("model {model_id} has no lane {lane}"),
            )
        })?;
        if l.ended {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_MODEL,
                format!(
                    "{} of model {model_id} already has its end task (aclmdlRIEndTask): no task may follow it",
                    l.name
                ),
            ));
        }
        let node = match (node, &l.open_group) {
            (Node::Op(op), Some(g)) => {
                let mut ops = g.ops.lock();
                ops.push(op);
                Node::Slot(g.clone(), ops.len() - 1)
            }
            (n, _) => n,
        };
        if matches!(node, Node::End) {
            l.ended = true;
        }
        l.nodes.push(node);
        Ok(())
    }

    /// A new internal event of the capture (an event recorded on a capturing stream).
    pub fn new_event(&self) -> usize {
        let mut st = self.st.lock();
        st.records.push(0);
        st.records.len() - 1
    }

    /// Record internal event `e` on lane `lane`; the record's number.
    pub fn record(self: &Arc<Self>, lane: usize, e: usize) -> Result<u64> {
        self.push(lane, Node::Record(e))?;
        let mut st = self.st.lock();
        st.records[e] += 1;
        Ok(st.records[e])
    }

    /// Make lane `lane` wait for the latest record of internal event `e`.
    pub fn wait(self: &Arc<Self>, lane: usize, e: usize) -> Result<()> {
        let k = self.st.lock().records.get(e).copied().unwrap_or(0);
        if k == 0 {
            return Ok(());
        }
        self.push(lane, Node::Wait(e, k))
    }

    /// Open a task group on lane `lane`.
    pub fn begin_group(self: &Arc<Self>, lane: usize) -> Result<()> {
        let mut st = self.st.lock();
        let l = &mut st.lanes[lane];
        if l.open_group.is_some() {
            return Err(Error::new(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                format!(
                    "{} already has an open task group (call aclmdlRICaptureTaskGrpEnd first)",
                    l.name
                ),
            ));
        }
        let g = Arc::new(Group {
            id: NEXT_GROUP.fetch_add(1, Ordering::Relaxed),
            ops: Mutex::new(Vec::new()),
            model: Arc::downgrade(self),
        });
        l.open_group = Some(g.clone());
        st.groups.push(g);
        Ok(())
    }

    /// Close the task group of lane `lane`.
    pub fn end_group(&self, lane: usize) -> Result<Arc<Group>> {
        let mut st = self.st.lock();
        let l = &mut st.lanes[lane];
        l.open_group.take().ok_or_else(|| {
            Error::new(
                ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                format!(
                    "{} has no open task group (call aclmdlRICaptureTaskGrpBegin first)",
                    l.name
                ),
            )
        })
    }

    /// Whether `g` belongs to this model.
    pub fn owns_group(&self, g: &Arc<Group>) -> bool {
        self.st.lock().groups.iter().any(|x| Arc::ptr_eq(x, g))
    }

    /// Finish the capture or build: check it and make the model ready to run.
    pub fn complete(&self) -> Result<()> {
        let mut st = self.st.lock();
        if let Status::Invalid(r) = &st.status {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                format!("the capture of model {} was invalidated: {r}", self.id),
            ));
        }
        for l in &st.lanes {
            if l.open_group.is_some() {
                return Err(Error::new(
                    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                    format!(
                        "{} has a task group that was never closed (aclmdlRICaptureTaskGrpEnd)",
                        l.name
                    ),
                ));
            }
        }
        if self.origin == Origin::Captured {
            // Every joined lane must end with a record that another lane waits for.
            for l in st.lanes.iter().skip(1) {
                let joined = match l.nodes.last() {
                    Some(Node::Record(e)) => {
                        let k = st
                            .lanes
                            .iter()
                            .flat_map(|x| &x.nodes)
                            .any(|n| matches!(n, Node::Wait(e2, _) if e2 == e));
                        k && {
                            let last = l
                                .nodes
                                .iter()
                                .filter(|n| matches!(n, Node::Record(e2) if e2 == e))
                                .count() as u64;
                            st.lanes
                                .iter()
                                .flat_map(|x| &x.nodes)
                                .any(|n| matches!(n, Node::Wait(e2, k2) if e2 == e && *k2 >= last))
                        }
                    }
                    _ => false,
                };
                if !joined {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_UNJOINED,
                        format!(
                            "{} joined the capture of model {} (it waited on an event recorded in it) but was not joined back: its last task must be a record of an event that the capturing stream waits for before aclmdlRICaptureEnd",
                            l.name, self.id
                        ),
                    ));
                }
            }
        } else if !st.lanes.iter().any(|l| l.head) {
            return Err(Error::new(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "model {} has no head stream: bind one stream with flag 0 (head) before aclmdlRIBuildEnd",
                    self.id
                ),
            ));
        }
        st.status = Status::Ready;
        Ok(())
    }

    /// Lines describing the model (`aclmdlRIDebugPrint`).
    pub fn describe(&self) -> Vec<String> {
        let st = self.st.lock();
        let mut out = vec![format!(
            "model {} ({}{}, {} lane(s), {} task(s), status {:?}, executed {} time(s))",
            self.id,
            match self.origin {
                Origin::Captured => "captured",
                Origin::Built => "built",
            },
            if st.name.is_empty() {
                String::new()
            } else {
                format!(" \"{}\"", st.name)
            },
            st.lanes.len(),
            st.lanes.iter().map(|l| l.nodes.len()).sum::<usize>(),
            st.status,
            self.launches.load(Ordering::SeqCst)
        )];
        for (i, l) in st.lanes.iter().enumerate() {
            out.push(format!(
                "  lane {i}: {}{}",
                l.name,
                if l.head && self.origin == Origin::Built {
                    " (head)"
                } else {
                    ""
                }
            ));
            for (j, n) in l.nodes.iter().enumerate() {
                out.push(format!("    task {j}: {}", n.describe()));
            }
        }
        out
    }

    /// The model as JSON (`aclmdlRIDebugJsonPrint`).
    pub fn to_json(&self) -> serde_json::Value {
        let st = self.st.lock();
        serde_json::json!({
            "model_id": self.id,
            "name": st.name,
            "origin": match self.origin { Origin::Captured => "capture", Origin::Built => "build" },
            "device": self.device,
            "status": format!("{:?}", st.status),
            "executions": self.launches.load(Ordering::SeqCst),
            "streams": st.lanes.iter().enumerate().map(|(i, l)| serde_json::json!({
                "lane": i,
                "stream": l.name,
                "head": l.head,
                "tasks": l.nodes.iter().enumerate().map(|(j, n)| serde_json::json!({
                    "index": j,
                    "type": n.kind(),
                    "detail": n.describe(),
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// Stop executions started before now (`aclmdlRIAbort`): they stop between tasks and
    /// finish without error.
    pub fn abort(&self) {
        self.abort_gen
            .store(self.launches.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// Executions started and not finished.
    pub fn running(&self) -> u32 {
        *self.running.0.lock()
    }

    /// Run the model on `stream` (`aclmdlRIExecuteAsync`): host-side operations are made
    /// now; the rest runs when the stream reaches the model.
    pub fn launch(self: &Arc<Self>, stream: &Stream) -> Result<()> {
        let run = self.prepare()?;
        let running = self.running.clone();
        *running.0.lock() += 1;
        struct Done(Arc<(Mutex<u32>, Condvar)>);
        impl Drop for Done {
            fn drop(&mut self) {
                let mut n = self.0 .0.lock();
                *n -= 1;
                self.0 .1.notify_all();
            }
        }
        let done = Done(running);
        stream.enqueue(Box::new(move || {
            let _done = done;
            run.execute()
        }))
    }

    /// Run the model on its own stream and wait up to `timeout` (`aclmdlRIExecute`).
    pub fn execute(self: &Arc<Self>, timeout: Option<std::time::Duration>) -> Result<()> {
        let s = {
            let mut own = self.own.lock();
            match &*own {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new(Stream::new(&format!(
                        "execute stream of model {}",
                        self.id
                    ))?);
                    *own = Some(s.clone());
                    s
                }
            }
        };
        self.launch(&s)?;
        s.synchronize(timeout)
    }

    /// Wait until no execution of the model runs (before it is destroyed).
    pub fn wait_idle(&self) {
        let (m, cv) = &*self.running;
        let mut n = m.lock();
        while *n > 0 {
            cv.wait(&mut n);
        }
    }

    /// Stop the model's helper streams (after [`Model::wait_idle`]).
    pub fn shut_down(&self) {
        for h in self.helpers.lock().drain(..) {
            h.destroy(false);
        }
        if let Some(s) = self.own.lock().take() {
            s.destroy(false);
        }
    }

    fn helper(&self, lane: usize) -> Result<Arc<Stream>> {
        let mut h = self.helpers.lock();
        while h.len() < lane {
            let n = h.len() + 1;
            h.push(Arc::new(Stream::new(&format!(
                "lane {n} of model {}",
                self.id
            ))?));
        }
        Ok(h[lane - 1].clone())
    }

    fn prepare(self: &Arc<Self>) -> Result<Arc<Run>> {
        let (lanes, events) = {
            let st = self.st.lock();
            match &st.status {
                Status::Ready => {}
                Status::Open => {
                    return Err(Error::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!(
                            "model {} is not complete yet (end the capture with aclmdlRICaptureEnd, or the build with aclmdlRIBuildEnd, first)",
                            self.id
                        ),
                    ))
                }
                Status::Invalid(r) => {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                        format!("model {} is an invalidated capture: {r}", self.id),
                    ))
                }
            }
            let lanes: Vec<Vec<Node>> = st.lanes.iter().map(|l| l.nodes.clone()).collect();
            let heads: Vec<bool> = st.lanes.iter().map(|l| l.head).collect();
            ((lanes, heads), st.records.len())
        };
        let (lanes, heads) = lanes;
        // Host-side operations, made now in capture order.
        let mut host = HashMap::new();
        for (li, nodes) in lanes.iter().enumerate() {
            for (ni, n) in nodes.iter().enumerate() {
                if let Node::Op(Op {
                    replay: Replay::Host(make),
                    ..
                }) = n
                {
                    host.insert((li, ni), make()?);
                }
            }
        }
        let mut labels = HashMap::new();
        for (li, nodes) in lanes.iter().enumerate() {
            for (ni, n) in nodes.iter().enumerate() {
                if let Node::Label(id) = n {
                    labels.insert(*id, (li, ni));
                }
            }
        }
        let gen = self.launches.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(Arc::new(Run {
            model: self.clone(),
            gen,
            lanes,
            heads,
            labels,
            host: Mutex::new(host),
            latches: (0..events).map(|_| Latch::default()).collect(),
            error: Mutex::new(None),
            cancel: AtomicBool::new(false),
            active: Mutex::new(0),
            active_cv: Condvar::new(),
        }))
    }
}

#[derive(Default)]
struct Latch {
    n: Mutex<u64>,
    cv: Condvar,
}

/// One execution of a model.
struct Run {
    model: Arc<Model>,
    gen: u64,
    lanes: Vec<Vec<Node>>,
    heads: Vec<bool>,
    labels: HashMap<u64, (usize, usize)>,
    host: Mutex<HashMap<(usize, usize), Task>>,
    latches: Vec<Latch>,
    error: Mutex<Option<Error>>,
    cancel: AtomicBool,
    /// Lanes started on helper streams and not finished.
    active: Mutex<u32>,
    active_cv: Condvar,
}

impl Run {
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
            || self.model.abort_gen.load(Ordering::SeqCst) >= self.gen
    }

    fn fail(&self, e: Error) {
        let mut err = self.error.lock();
        if err.is_none() {
            *err = Some(e);
        }
        self.cancel.store(true, Ordering::SeqCst);
        for l in &self.latches {
            let _g = l.n.lock();
            l.cv.notify_all();
        }
    }

    /// Body of the model's task on the launching stream.
    fn execute(self: Arc<Self>) -> Result<()> {
        let starts: Vec<usize> = (0..self.lanes.len()).filter(|&l| self.heads[l]).collect();
        let Some((&first, rest)) = starts.split_first() else {
            return Ok(());
        };
        for &l in rest {
            self.spawn(l, 0);
        }
        self.run_lane(first, 0);
        // Join every lane started on a helper stream.
        let mut a = self.active.lock();
        while *a > 0 {
            self.active_cv.wait(&mut a);
        }
        drop(a);
        match self.error.lock().take() {
            Some(e) => Err(Error::new(
                e.code,
                format!("model {}: {}", self.model.id, e.msg),
            )),
            None => Ok(()),
        }
    }

    fn spawn(self: &Arc<Self>, lane: usize, pc: usize) {
        let h = match self.model.helper(lane.max(1)) {
            Ok(h) => h,
            Err(e) => return self.fail(e),
        };
        *self.active.lock() += 1;
        let me = self.clone();
        let r = h.enqueue(Box::new(move || {
            me.run_lane(lane, pc);
            let mut a = me.active.lock();
            *a -= 1;
            me.active_cv.notify_all();
            Ok(())
        }));
        if let Err(e) = r {
            let mut a = self.active.lock();
            *a -= 1;
            self.active_cv.notify_all();
            drop(a);
            self.fail(e);
        }
    }

    fn run_lane(self: &Arc<Self>, lane: usize, mut pc: usize) {
        let nodes = &self.lanes[lane];
        while pc < nodes.len() {
            if self.cancelled() {
                return;
            }
            let r = self.step(lane, pc, &nodes[pc]);
            match r {
                Ok(Next::Go) => pc += 1,
                Ok(Next::Jump(l, p)) => {
                    if l == lane {
                        pc = p;
                    } else {
                        self.spawn(l, p);
                        return;
                    }
                }
                Ok(Next::Stop) => return,
                Err(e) => {
                    let name = self.model.st.lock().lanes[lane].name.clone();
                    self.fail(Error::new(
                        e.code,
                        format!("task {pc} of {name} ({}): {}", nodes[pc].kind(), e.msg),
                    ));
                    return;
                }
            }
        }
    }

    fn step(self: &Arc<Self>, lane: usize, pc: usize, n: &Node) -> Result<Next> {
        match n {
            Node::Op(op) => match &op.replay {
                Replay::Run(f) => f()?,
                Replay::Host(make) => {
                    let t = self.host.lock().remove(&(lane, pc));
                    match t {
                        Some(t) => t()?,
                        // Reached a second time (a label loop): made again here.
                        None => make()?()?,
                    }
                }
            },
            Node::Slot(g, i) => {
                let op = g.op(*i).ok_or_else(|| {
                    Error::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("task group {} lost its task {i}", g.id),
                    )
                })?;
                op.into_task()?()?
            }
            Node::Record(e) => {
                let l = &self.latches[*e];
                *l.n.lock() += 1;
                l.cv.notify_all();
            }
            Node::Wait(e, k) => {
                let l = &self.latches[*e];
                let mut n = l.n.lock();
                while *n < *k {
                    if self.cancelled() {
                        return Ok(Next::Stop);
                    }
                    l.cv.wait_for(&mut n, std::time::Duration::from_millis(20));
                }
            }
            Node::Activate(l) => self.spawn(*l, 0),
            Node::Switch { cond, lane: l, .. } => {
                if cond()? {
                    self.spawn(*l, 0)
                }
            }
            Node::Label(_) => {}
            Node::Jump { index, labels, .. } => {
                if labels.is_empty() {
                    return Ok(Next::Go);
                }
                let i = (index()? as usize).min(labels.len() - 1);
                let id = labels[i];
                return match self.labels.get(&id) {
                    Some(&(l, p)) => Ok(Next::Jump(l, p)),
                    None => Err(Error::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!(
                            "label {i} ({id:#x}) of the switch was never set on a stream of model {} (aclrtSetLabel)",
                            self.model.id
                        ),
                    )),
                };
            }
            Node::End => return Ok(Next::Stop),
        }
        Ok(Next::Go)
    }
}

enum Next {
    Go,
    Jump(usize, usize),
    Stop,
}

/// The sink of one lane of a model: a capturing or bound stream hands its operations here.
pub struct LaneSink {
    pub model: Arc<Model>,
    pub lane: usize,
    /// Name of the stream (for messages).
    pub stream: String,
}

impl Sink for LaneSink {
    fn capture(&self, op: Op) -> Result<()> {
        self.model.push(self.lane, Node::Op(op))
    }

    fn refuse(&self, what: &str) -> Error {
        let msg = format!(
            "{what} cannot be put into model {} by npu-emu ({} is {} it)",
            self.model.id,
            self.stream,
            match self.model.origin {
                Origin::Captured => "being captured into",
                Origin::Built => "bound to",
            }
        );
        self.model.invalidate(&msg);
        Error::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, msg)
    }
}

/// The sink of a task-group update: collects the new operations.
pub struct UpdateSink {
    pub group: Arc<Group>,
    pub ops: Mutex<Vec<Op>>,
    pub stream: String,
}

impl Sink for UpdateSink {
    fn capture(&self, op: Op) -> Result<()> {
        self.ops.lock().push(op);
        Ok(())
    }

    fn refuse(&self, what: &str) -> Error {
        Error::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "{what} cannot update task group {} ({} is in a task update)",
                self.group.id, self.stream
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counter_op(c: &Arc<AtomicUsize>, add: usize) -> Op {
        let c = c.clone();
        Op::run("test", format!("add {add}"), move || {
            c.fetch_add(add, Ordering::SeqCst);
            Ok(())
        })
    }

    #[test]
    fn captured_ops_replay_each_launch() {
        let m = Model::new(1, Origin::Captured, 0, Some("stream 1"));
        let c = Arc::new(AtomicUsize::new(0));
        m.push(0, Node::Op(counter_op(&c, 1))).unwrap();
        m.push(0, Node::Op(counter_op(&c, 10))).unwrap();
        m.complete().unwrap();
        let s = Stream::new("exec").unwrap();
        for _ in 0..3 {
            m.launch(&s).unwrap();
        }
        s.synchronize(None).unwrap();
        assert_eq!(c.load(Ordering::SeqCst), 33);
        m.wait_idle();
        m.shut_down();
    }

    #[test]
    fn lanes_fork_and_join_through_events() {
        let m = Model::new(2, Origin::Captured, 0, Some("origin"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let push = |v: u32| {
            let log = log.clone();
            Node::Op(Op::run("test", format!("{v}"), move || {
                log.lock().push(v);
                Ok(())
            }))
        };
        let fork = m.new_event();
        m.push(0, push(1)).unwrap();
        m.record(0, fork).unwrap();
        let l1 = m.add_lane("side", true).unwrap();
        m.wait(l1, fork).unwrap();
        m.push(l1, push(2)).unwrap();
        let join = m.new_event();
        m.record(l1, join).unwrap();
        m.wait(0, join).unwrap();
        m.push(0, push(3)).unwrap();
        m.complete().unwrap();
        let s = Stream::new("exec").unwrap();
        m.launch(&s).unwrap();
        m.launch(&s).unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(*log.lock(), vec![1, 2, 3, 1, 2, 3]);
        m.shut_down();
    }

    #[test]
    fn unjoined_lane_is_refused() {
        let m = Model::new(3, Origin::Captured, 0, Some("origin"));
        let e = m.new_event();
        m.record(0, e).unwrap();
        let l1 = m.add_lane("side", true).unwrap();
        m.wait(l1, e).unwrap();
        let err = m.complete().unwrap_err();
        assert_eq!(err.code, ACL_ERROR_RT_STREAM_UNJOINED);
    }

    #[test]
    fn group_update_replaces_ops() {
        let m = Model::new(4, Origin::Captured, 0, Some("origin"));
        let c = Arc::new(AtomicUsize::new(0));
        m.begin_group(0).unwrap();
        m.push(0, Node::Op(counter_op(&c, 1))).unwrap();
        let g = m.end_group(0).unwrap();
        m.complete().unwrap();
        let s = Stream::new("exec").unwrap();
        m.launch(&s).unwrap();
        s.synchronize(None).unwrap();
        assert!(g.check_update(&[]).is_err());
        let new = vec![counter_op(&c, 100)];
        g.check_update(&new).unwrap();
        g.replace(new);
        m.launch(&s).unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(c.load(Ordering::SeqCst), 101);
        m.shut_down();
    }

    #[test]
    fn errors_name_the_task_and_stop_the_model() {
        let m = Model::new(5, Origin::Captured, 0, Some("origin"));
        let c = Arc::new(AtomicUsize::new(0));
        m.push(
            0,
            Node::Op(Op::run("memcpy", "bad", || Err(Error::invalid("boom")))),
        )
        .unwrap();
        m.push(0, Node::Op(counter_op(&c, 1))).unwrap();
        m.complete().unwrap();
        let s = Stream::new("exec").unwrap();
        m.launch(&s).unwrap();
        let e = s.synchronize(None).unwrap_err();
        assert!(e.msg.contains("model 5") && e.msg.contains("memcpy") && e.msg.contains("boom"));
        assert_eq!(c.load(Ordering::SeqCst), 0);
        m.shut_down();
    }

    #[test]
    fn built_model_switches_and_jumps() {
        let m = Model::new(6, Origin::Built, 0, None);
        let c = Arc::new(AtomicUsize::new(0));
        let head = m.add_lane("head", true).unwrap();
        let other = m.add_lane("other", false).unwrap();
        m.push(head, Node::Activate(other)).unwrap();
        m.push(
            head,
            Node::Jump {
                index: Arc::new(|| Ok(7)),
                labels: vec![100, 200],
                what: "x".into(),
            },
        )
        .unwrap();
        m.push(head, Node::Label(100)).unwrap();
        m.push(head, Node::Op(counter_op(&c, 1000))).unwrap();
        m.push(head, Node::Label(200)).unwrap();
        m.push(head, Node::Op(counter_op(&c, 1))).unwrap();
        m.push(head, Node::End).unwrap();
        m.push(other, Node::Op(counter_op(&c, 10))).unwrap();
        m.complete().unwrap();
        let s = Stream::new("exec").unwrap();
        m.launch(&s).unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(c.load(Ordering::SeqCst), 11);
        m.shut_down();
    }
}
