//! The second phase of every aclnn call of this library (`CommonOpExecutorRun` in CANN):
//! check the executor, the workspace and the device ranges on the calling thread, then
//! enqueue one task on the stream through the runtime interface. The executor is consumed
//! (also on failure) unless it is repeatable.

use crate::executor::{self, Gather, Op, Taken};
use crate::rt::{self, Rt};
use crate::status::{non_null, NnError, NnResult};
use npu_emu::formats::Plan;
use npu_emu::rtapi::RtTask;
use std::ffi::c_void;
use std::sync::Arc;

/// Run the executor `h` on `stream`.
pub fn execute(
    workspace: *mut c_void,
    workspace_size: u64,
    h: *mut c_void,
    stream: *mut c_void,
) -> NnResult<()> {
    non_null(h, "executor")?;
    if workspace_size > 0 && workspace.is_null() {
        executor::discard_unless_repeatable(h as usize);
        return Err(NnError::nullptr(format!(
            "workspace is nullptr but workspaceSize is {workspace_size}"
        )));
    }
    let taken = executor::take(h as usize)?;
    launch(workspace, workspace_size, taken, stream)
}

/// A task's view of device memory: host aliases checked on the calling thread.
struct Range {
    /// The caller's device address of the range.
    addr: usize,
    ptr: *mut u8,
    len: usize,
}

fn range(rt: &Rt, addr: usize, len: usize, what: &str) -> NnResult<Range> {
    let ptr = rt.device_range(addr as u64, len as u64, what)?;
    Ok(Range { addr, ptr, len })
}

enum Job {
    /// An engine operator with its views (see `crate::ops::launch`).
    Engine(crate::ops::launch::Prepared),
    Cast {
        plan: Arc<Plan>,
        src: Range,
        dst: Range,
    },
    TransWeight {
        plan: Arc<Plan>,
        /// The tensor: read as its view, then overwritten with the private layout.
        tensor: Range,
        gather: Option<(Gather, usize)>,
        workspace: Range,
    },
}

fn overlap(a: usize, alen: usize, b: usize, blen: usize) -> bool {
    a < b + blen && b < a + alen
}

fn launch(
    workspace: *mut c_void,
    workspace_size: u64,
    t: Taken,
    stream: *mut c_void,
) -> NnResult<()> {
    let rt = rt::rt()?;
    if workspace_size < t.workspace_size {
        return Err(NnError::invalid(format!(
            "workspaceSize {workspace_size} is smaller than the {} bytes {}GetWorkspaceSize \
             returned",
            t.workspace_size, t.api
        )));
    }
    let ws = if workspace_size > 0 {
        Some(range(
            rt,
            workspace as usize,
            workspace_size as usize,
            "workspace",
        )?)
    } else {
        None
    };
    let plan = match (&t.op, t.plan) {
        (Op::Engine(k), _) => {
            let ws = ws.as_ref().map(|r| (r.ptr, r.len));
            let job = crate::ops::launch::prepare(rt, t.api, k.clone(), &t.inputs, &t.outputs, ws)?;
            return enqueue_job(rt, stream, Job::Engine(job));
        }
        (Op::Steps(steps), _) => {
            return launch_steps(rt, t.api, steps, &t.inputs, &t.outputs, ws, stream)
        }
        (_, Some(p)) => p,
        (_, None) => {
            return Err(NnError::new(
                crate::status::ACLNN_ERR_INNER,
                format!("{}: executor without a conversion plan", t.api),
            ))
        }
    };
    let job = match t.op {
        Op::Engine(_) | Op::Steps(_) => unreachable!(),
        Op::Cast => {
            let (src_len, dst_len) = (plan.src_bytes(), plan.dst_bytes());
            let (s, d) = (t.inputs[0].data(), t.outputs[0].data());
            if overlap(s, src_len, d, dst_len) {
                return Err(NnError::invalid(format!(
                    "srcTensor data [{s:#x}, +{src_len}) and dstTensor data [{d:#x}, \
                     +{dst_len}) overlap; the conversion is not in place"
                )));
            }
            // A buffer sized for the logical shape instead of the padded storage shape is the
            // usual mistake: say which size the range is.
            let hint = |e: NnError, which: &str| {
                e.with_suffix(format!(
                    " (the device buffer of the {which} must hold its whole storage shape, \
                     padding included: for a private format, the product of the shape \
                     aclnnNpuFormatCastCalculateSizeAndFormat returns, times the element size)"
                ))
            };
            Job::Cast {
                src: range(rt, s, src_len, "srcTensor data").map_err(|e| hint(e, "srcTensor"))?,
                dst: range(rt, d, dst_len, "dstTensor data").map_err(|e| hint(e, "dstTensor"))?,
                plan,
            }
        }
        Op::TransWeight {
            gather,
            read_bytes,
            gather_offset,
        } => {
            let d = t.inputs[0].data();
            let len = read_bytes.max(plan.dst_bytes());
            let tensor = range(rt, d, len, "mmWeightRef data (its private-format size)")?;
            let workspace_addr = workspace as usize;
            let workspace = ws.ok_or_else(|| {
                NnError::invalid(format!(
                    "{} needs a workspace of {} bytes",
                    t.api, t.workspace_size
                ))
            })?;
            if overlap(d, len, workspace_addr, workspace.len) {
                return Err(NnError::invalid(
                    "the workspace overlaps the weight tensor's data".to_string(),
                ));
            }
            Job::TransWeight {
                plan,
                tensor,
                gather: gather.map(|g| (g, gather_offset)),
                workspace,
            }
        }
    };
    enqueue_job(rt, stream, job)
}

/// Enqueue the steps of a several-step executor in order: every engine step's views are
/// checked before anything is enqueued; a collective that fails to enqueue stops the rest.
fn launch_steps(
    rt: &Rt,
    api: &'static str,
    steps: &[crate::ops::launch::Step],
    inputs: &[crate::executor::Io],
    outputs: &[crate::executor::Io],
    ws: Option<Range>,
    stream: *mut c_void,
) -> NnResult<()> {
    use crate::ops::launch::Step;
    let wsp = ws.as_ref().map(|r| (r.ptr, r.len));
    let mut jobs = Vec::with_capacity(steps.len());
    for s in steps {
        jobs.push(match s {
            Step::Engine(k) => Some(crate::ops::launch::prepare(
                rt,
                api,
                k.clone(),
                inputs,
                outputs,
                wsp,
            )?),
            Step::Collective(c) => {
                // The communicator must exist before anything is enqueued.
                crate::collective::comm(&c.group)?;
                None
            }
        });
    }
    let ws_addr = ws.as_ref().map_or(0, |r| r.addr);
    for (s, j) in steps.iter().zip(jobs) {
        match (s, j) {
            (Step::Engine(_), Some(j)) => enqueue_job(rt, stream, Job::Engine(j))?,
            // SAFETY: the caller's stream; ws_addr is the checked workspace's device address.
            (Step::Collective(c), _) => unsafe { c.enqueue(api, ws_addr, stream)? },
            _ => unreachable!(),
        }
    }
    Ok(())
}

fn enqueue_job(rt: &Rt, stream: *mut c_void, job: Job) -> NnResult<()> {
    let what = match &job {
        Job::Engine(e) => e.api,
        Job::Cast { .. } => "aclnnNpuFormatCast",
        Job::TransWeight { .. } => "aclnnTransMatmulWeight",
    };
    let task = RtTask {
        ctx: Box::into_raw(Box::new(job)) as *mut c_void,
        run: job_run,
        drop: job_drop,
    };
    // A job reads its inputs and writes its outputs when it runs, from what it holds (device
    // ranges, views, the plan), and changes nothing of its own: a graph captured on the
    // stream (aclmdlRICaptureBegin, torch.npu.graph) may run it again at every replay.
    // SAFETY: stream is the caller's aclrtStream (or NULL = default stream); the runtime
    // checks it and owns the task from here; job_run only reads the job.
    unsafe { rt.enqueue_repeatable(stream, task, what) }
}

/// Copy the strided view at `src` (element strides, non-negative) into `dst` in row-major
/// order; runs along a unit-stride last dimension are copied at once.
///
/// # Safety
/// Every element of the view lies in readable memory at `src`; `dst` holds the whole view.
unsafe fn gather(g: &Gather, src: *const u8, dst: &mut [u8]) {
    let es = g.esize;
    let n = g.shape.len();
    if n == 0 {
        // SAFETY: a 0-d view is one element at `src` (the function's contract).
        dst[..es].copy_from_slice(unsafe { std::slice::from_raw_parts(src, es) });
        return;
    }
    let inner = g.shape[n - 1] as usize;
    let inner_stride = g.strides[n - 1] as usize;
    let outer: usize = g.shape[..n - 1].iter().map(|&d| d as usize).product();
    let mut idx = vec![0i64; n - 1];
    let mut out = 0usize;
    for _ in 0..outer {
        let base: usize = idx
            .iter()
            .zip(&g.strides)
            .map(|(&i, &s)| (i * s) as usize)
            .sum();
        if inner_stride == 1 {
            let bytes = inner * es;
            // SAFETY: element `base` of the view is inside it (contract: the whole view is readable).
            let p = unsafe { src.add(base * es) };
            // SAFETY: the run of `inner` unit-stride elements from `base` is part of the view.
            dst[out..out + bytes].copy_from_slice(unsafe { std::slice::from_raw_parts(p, bytes) });
            out += bytes;
        } else {
            for k in 0..inner {
                // SAFETY: element `base + k * inner_stride` is part of the view.
                let p = unsafe { src.add((base + k * inner_stride) * es) };
                // SAFETY: as above: one element of the view.
                dst[out..out + es].copy_from_slice(unsafe { std::slice::from_raw_parts(p, es) });
                out += es;
            }
        }
        for d in (0..n - 1).rev() {
            idx[d] += 1;
            if idx[d] < g.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

fn run_job(job: &Job) -> Result<(), String> {
    match job {
        Job::Engine(p) => p.run(),
        Job::Cast { plan, src, dst } => {
            // SAFETY: both ranges were checked to lie in live device allocations and not to
            // overlap when the task was enqueued; the aliases stay mapped.
            let s = unsafe { std::slice::from_raw_parts(src.ptr, src.len) };
            // SAFETY: as above, for the destination range.
            let d = unsafe { std::slice::from_raw_parts_mut(dst.ptr, dst.len) };
            plan.run(s, d).map_err(|e| e.message)
        }
        Job::TransWeight {
            plan,
            tensor,
            gather: g,
            workspace,
        } => {
            // SAFETY: the workspace and the tensor's range were checked at enqueue time and
            // do not overlap.
            let ws = unsafe { std::slice::from_raw_parts_mut(workspace.ptr, workspace.len) };
            let (src_bytes, dst_bytes) = (plan.src_bytes(), plan.dst_bytes());
            let (private, rest) = ws.split_at_mut(dst_bytes);
            match g {
                Some((g, off)) => {
                    let off = off - dst_bytes;
                    let contiguous = &mut rest[off..off + src_bytes];
                    // SAFETY: the view's extent was checked (read_bytes).
                    unsafe { gather(g, tensor.ptr, contiguous) };
                    plan.run(contiguous, private).map_err(|e| e.message)?;
                }
                None => {
                    // SAFETY: the tensor's stored range (`src_bytes` of it) was checked at enqueue time.
                    let s = unsafe { std::slice::from_raw_parts(tensor.ptr, src_bytes) };
                    plan.run(s, private).map_err(|e| e.message)?;
                }
            }
            // SAFETY: the tensor's range holds `dst_bytes` bytes too (checked at enqueue time), and `private` is in the workspace, which does not overlap it.
            let t = unsafe { std::slice::from_raw_parts_mut(tensor.ptr, dst_bytes) };
            t.copy_from_slice(private);
            Ok(())
        }
    }
}

unsafe extern "C" fn job_run(ctx: *mut c_void) -> i32 {
    // SAFETY: ctx is the Box<Job> made in launch, alive until job_drop.
    let job = unsafe { &*(ctx as *const Job) };
    let msg = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_job(job))) {
        Ok(Ok(())) => return 0,
        Ok(Err(m)) => m,
        Err(p) => format!(
            "internal error (panic) in the {}: {}",
            match job {
                Job::Engine(e) => e.api,
                _ => "conversion",
            },
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        ),
    };
    if let Ok(rt) = rt::rt() {
        rt.set_error(&format!("aclnn task: {msg}"));
    }
    npu_emu::codes::ACL_ERROR_INTERNAL_ERROR
}

unsafe extern "C" fn job_drop(ctx: *mut c_void) {
    // SAFETY: made by Box::into_raw in launch; dropped exactly once.
    drop(unsafe { Box::from_raw(ctx as *mut Job) });
}
