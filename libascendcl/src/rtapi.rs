//! The table exported to libhccl and libnnopbase (`npuemu_runtime_api`, see [`npu_emu::rtapi`]).
//!
//! Every entry reaches the one runtime instance of this process; errors record their
//! message for the calling thread (`aclGetRecentErrMsg`) and return the ACL code.

use crate::ffi;
use crate::runtime;
use npu_emu::codes::ACL_ERROR_INVALID_PARAM;
use npu_emu::config::LogLevel;
use npu_emu::rtapi::{RtApi, RtGate, RtPhys, RtTask, RtTemplate, RT_API_VERSION};
use npu_emu::stream::{Op, Replay};
use npu_emu::Error;
use std::ffi::c_void;
use std::sync::Arc;

unsafe extern "C" fn current_device(logical: *mut i32, physical: *mut u32) -> i32 {
    ffi::boundary("npuemu_runtime_api.current_device", || {
        let (l, p) = runtime::get()?.current_device()?;
        ffi::out(logical, "logical", l)?;
        ffi::out(physical, "physical", p)
    })
}

unsafe extern "C" fn logical_to_physical(logical: i32, physical: *mut u32) -> i32 {
    ffi::boundary("npuemu_runtime_api.logical_to_physical", || {
        let p = runtime::get()?.physical_device(logical)?;
        ffi::out(physical, "physical", p)
    })
}

/// Owns an `RtTask` so it is dropped exactly once, whether it runs or not.
struct OwnedTask(RtTask);

impl Drop for OwnedTask {
    fn drop(&mut self) {
        // SAFETY: the producer's drop function, called exactly once.
        unsafe { (self.0.drop)(self.0.ctx) };
    }
}

/// The error of a runtime-interface call that returned `code` after recording its message
/// on this thread.
fn taken_error(code: i32) -> Error {
    let p = ffi::recent_error_ptr();
    let msg = if p.is_null() {
        format!("a runtime-interface task failed with code {code}")
    } else {
        // SAFETY: NUL-terminated, valid until the next message on this thread.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    };
    Error::new(code, msg)
}

/// Run an owned task once (on the worker).
fn run_owned(t: &OwnedTask) -> Result<(), Error> {
    // SAFETY: the producer's run function on its context.
    let code = unsafe { (t.0.run)(t.0.ctx) };
    if code == 0 {
        Ok(())
    } else {
        // The task recorded its message on this (worker) thread.
        Err(taken_error(code))
    }
}

unsafe extern "C" fn enqueue(stream: *mut c_void, task: RtTask) -> i32 {
    let owned = OwnedTask(task);
    ffi::boundary("npuemu_runtime_api.enqueue", move || {
        let s = runtime::get()?.stream(stream)?;
        s.enqueue(Box::new(move || run_owned(&owned)))
    })
}

unsafe extern "C" fn stream_capturing(stream: *mut c_void, capturing: *mut i32) -> i32 {
    ffi::boundary("npuemu_runtime_api.stream_capturing", || {
        let s = runtime::get()?.stream(stream)?;
        ffi::out(capturing, "capturing", s.is_capturing() as i32)
    })
}

/// A stream that is not a live stream of this process is "not idle" (no error, nothing
/// logged): the operation then takes the ordinary path, whose enqueue reports the bad stream
/// once, with the caller's name.
unsafe extern "C" fn stream_idle(stream: *mut c_void, idle: *mut i32) -> i32 {
    ffi::boundary("npuemu_runtime_api.stream_idle", || {
        let v = match runtime::get().and_then(|r| r.stream(stream)) {
            Ok(s) if s.is_idle() && !s.has_error() && !s.is_capturing() => {
                if s.is_gated() {
                    2
                } else {
                    1
                }
            }
            _ => 0,
        };
        ffi::out(idle, "idle", v)
    })
}

/// A kind string from C as one of the static kinds models know.
unsafe fn kind_of(kind: *const u8, len: usize) -> &'static str {
    // SAFETY: per the caller's contract.
    match unsafe { text(kind, len) }.as_str() {
        "hccl" => "hccl",
        "aclnn" => "aclnn",
        "kernel" => "kernel",
        "memcpy" => "memcpy",
        _ => "task",
    }
}

/// Owns an `RtTemplate` so it is dropped exactly once.
struct OwnedTemplate(RtTemplate);

impl Drop for OwnedTemplate {
    fn drop(&mut self) {
        // SAFETY: the producer's drop function, called exactly once.
        unsafe { (self.0.drop)(self.0.ctx) };
    }
}

impl OwnedTemplate {
    fn instantiate(&self) -> Result<OwnedTask, Error> {
        let mut t = std::mem::MaybeUninit::<RtTask>::uninit();
        // SAFETY: the producer's instantiate function, which fills `t` when it returns 0.
        let code = unsafe { (self.0.instantiate)(self.0.ctx, t.as_mut_ptr()) };
        if code != 0 {
            return Err(taken_error(code));
        }
        // SAFETY: filled by instantiate (it returned 0).
        Ok(OwnedTask(unsafe { t.assume_init() }))
    }
}

unsafe extern "C" fn enqueue_template(
    stream: *mut c_void,
    tmpl: RtTemplate,
    kind: *const u8,
    kind_len: usize,
    what: *const u8,
    what_len: usize,
) -> i32 {
    let owned = Arc::new(OwnedTemplate(tmpl));
    ffi::boundary("npuemu_runtime_api.enqueue_template", move || {
        let s = runtime::get()?.stream(stream)?;
        // SAFETY: the caller passes kind_len / what_len readable bytes.
        let (kind, what) = unsafe { (kind_of(kind, kind_len), text(what, what_len)) };
        let op = Op {
            kind,
            what,
            replay: Replay::Host(Arc::new(move || {
                let t = owned.instantiate()?;
                Ok(Box::new(move || run_owned(&t)))
            })),
        };
        s.enqueue_op(op)
    })
}

unsafe extern "C" fn enqueue_repeatable(
    stream: *mut c_void,
    task: RtTask,
    kind: *const u8,
    kind_len: usize,
    what: *const u8,
    what_len: usize,
) -> i32 {
    let owned = OwnedTask(task);
    ffi::boundary("npuemu_runtime_api.enqueue_repeatable", move || {
        let s = runtime::get()?.stream(stream)?;
        // SAFETY: the caller passes kind_len / what_len readable bytes.
        let (kind, what) = unsafe { (kind_of(kind, kind_len), text(what, what_len)) };
        // One execution at a time: the producer promised repeatable runs, not concurrent ones.
        let owned = parking_lot::Mutex::new(owned);
        s.enqueue_op(Op::run(kind, what, move || run_owned(&owned.lock())))
    })
}

unsafe extern "C" fn synchronize(stream: *mut c_void) -> i32 {
    ffi::boundary("npuemu_runtime_api.synchronize", || {
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        crate::api::stream::sync_entry(&e, None)
    })
}

unsafe extern "C" fn translate(addr: u64, len: u64, out: *mut RtPhys) -> i32 {
    ffi::boundary("npuemu_runtime_api.translate", || {
        ffi::non_null(out, "out")?;
        let p = runtime::get()?.node.phys(addr, len, "device")?;
        ffi::out(out, "out", p)
    })
}

unsafe extern "C" fn phys_to_host(phys: RtPhys, len: u64) -> *mut u8 {
    ffi::boundary_value(
        "npuemu_runtime_api.phys_to_host",
        std::ptr::null_mut(),
        || {
            let rt = runtime::get()?;
            rt.node.phys_to_host(phys, len).ok_or_else(|| {
                Error::new(
                    ACL_ERROR_INVALID_PARAM,
                    format!(
                    "physical range device {} offset {:#x} length {len} leaves the device's HBM",
                    phys.device, phys.offset
                ),
                )
            })
        },
    )
}

unsafe extern "C" fn set_error(msg: *const u8, len: usize) {
    let text = if msg.is_null() {
        String::new()
    } else {
        // SAFETY: caller passes `len` readable bytes.
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(msg, len) }).into_owned()
    };
    ffi::record_error(&text);
    crate::api::errors::note_foreign_failure();
}

/// Bytes from C as text; empty for NULL.
///
/// # Safety
/// `p` is NULL or points to `len` readable bytes.
unsafe fn text(p: *const u8, len: usize) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: per the function's contract.
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p, len) }).into_owned()
    }
}

unsafe extern "C" fn set_error_module(
    module: *const u8,
    module_len: usize,
    msg: *const u8,
    len: usize,
) {
    // Called from another library's boundary: never unwind into it.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the caller passes `module_len` and `len` readable bytes.
        let (module, msg) = unsafe { (text(module, module_len), text(msg, len)) };
        let module = if module.is_empty() {
            "ASCENDCL"
        } else {
            module.as_str()
        };
        ffi::set_recent(&msg);
        runtime::log_module(LogLevel::Error, module, &msg);
        crate::api::errors::note_foreign_failure();
    });
}

unsafe extern "C" fn stream_id(stream: *mut c_void, id: *mut i32) -> i32 {
    ffi::boundary("npuemu_runtime_api.stream_id", || {
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        ffi::out(id, "id", e.id)
    })
}

unsafe extern "C" fn translate_serial(
    addr: u64,
    len: u64,
    out: *mut RtPhys,
    serial: *mut u64,
) -> i32 {
    ffi::boundary("npuemu_runtime_api.translate_serial", || {
        ffi::non_null(out, "out")?;
        ffi::non_null(serial, "serial")?;
        let (p, s) = runtime::get()?.node.phys_serial(addr, len, "device")?;
        ffi::out(out, "out", p)?;
        ffi::out(serial, "serial", s)
    })
}

unsafe extern "C" fn peer_to_host(pid: u32, phys: RtPhys, len: u64) -> *mut u8 {
    ffi::boundary_value(
        "npuemu_runtime_api.peer_to_host",
        std::ptr::null_mut(),
        || {
            let rt = runtime::get()?;
            let bad = |why: &str| {
                Error::new(
                    ACL_ERROR_INVALID_PARAM,
                    format!(
                        "device {} offset {:#x} length {len} {why}",
                        phys.device, phys.offset
                    ),
                )
            };
            let p = rt
                .node
                .phys_to_host(phys, len)
                .ok_or_else(|| bad("leaves the device's HBM"))?;
            if !rt.node.held_by(pid, phys, len) {
                return Err(bad(&format!(
                    "is not device memory of process {pid} (a buffer it published must lie \
                     in memory it holds)"
                )));
            }
            Ok(p)
        },
    )
}

unsafe extern "C" fn hold() -> *const c_void {
    // `runtime::get` only clones the `Arc` (or says the runtime is not there): it cannot
    // panic, so no boundary is needed.
    match runtime::get() {
        Ok(rt) => Arc::into_raw(rt) as *const c_void,
        Err(_) => std::ptr::null(),
    }
}

unsafe extern "C" fn release(token: *const c_void) {
    if token.is_null() {
        return;
    }
    // The last reference may be this one (another thread finalized meanwhile): dropping
    // the runtime then unmaps its memory and stops its threads, inside the boundary like
    // every other entry of the table (a panic is recorded, never unwound into C).
    let _ = ffi::boundary("npuemu_runtime_api.release", || {
        // SAFETY: `token` came from `hold` (`Arc::into_raw` of a runtime) and is given back
        // once (the caller's guard owns it).
        drop(unsafe { Arc::from_raw(token as *const runtime::Runtime) });
        Ok(())
    });
}

/// Owns an `RtGate` so it is dropped exactly once.
struct OwnedGate(RtGate);

// SAFETY: the producer's contract (set_gate): the gate may run and be dropped on any host
// thread, one at a time (the stream holds it under a mutex).
unsafe impl Send for OwnedGate {}

impl Drop for OwnedGate {
    fn drop(&mut self) {
        // SAFETY: the producer's drop function, called exactly once.
        unsafe { (self.0.drop)(self.0.ctx) };
    }
}

unsafe extern "C" fn set_gate(stream: *mut c_void, gate: RtGate) -> i32 {
    let owned = OwnedGate(gate);
    ffi::boundary("npuemu_runtime_api.set_gate", move || {
        let s = runtime::get()?.stream(stream)?;
        s.set_gate(Box::new(move |block| {
            let g = &owned;
            // SAFETY: the producer's run function on its context.
            match unsafe { (g.0.run)(g.0.ctx, block as i32) } {
                0 => Ok(true),
                1 => Ok(false),
                code => Err(taken_error(code)),
            }
        }));
        Ok(())
    })
}

unsafe extern "C" fn pass_gate(stream: *mut c_void, block: i32, pending: *mut i32) -> i32 {
    ffi::boundary("npuemu_runtime_api.pass_gate", || {
        let s = runtime::get()?.stream(stream)?;
        let still = s.pass_gate(block != 0);
        ffi::out(pending, "pending", still as i32)
    })
}

unsafe extern "C" fn task_waits_for_network() {
    // Sets a flag of the calling thread's task, if any; it cannot panic or fail.
    npu_emu::stream::task_waits_for_network();
}

static API: RtApi = RtApi {
    version: RT_API_VERSION,
    current_device,
    logical_to_physical,
    enqueue,
    synchronize,
    translate,
    phys_to_host,
    set_error,
    stream_id,
    set_error_module,
    translate_serial,
    peer_to_host,
    stream_capturing,
    enqueue_template,
    enqueue_repeatable,
    stream_idle,
    hold,
    release,
    set_gate,
    pass_gate,
    task_waits_for_network,
};

/// The runtime interface for `libhccl` (DESIGN §1).
#[no_mangle]
pub extern "C" fn npuemu_runtime_api() -> *const RtApi {
    &API
}
