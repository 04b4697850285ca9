//! Init and finalize callbacks: `aclInitCallbackRegister`/`UnRegister`,
//! `aclFinalizeCallbackRegister`/`UnRegister` (CANN 8.5's `InitCallbackManager`).
//!
//! - A NULL `cbFunc` is `ACL_ERROR_INVALID_PARAM`. A type other than `ACL_REG_TYPE_OTHER`
//!   holds one callback: registering a second is `ACL_ERROR_INTERNAL_ERROR` (500000), as in
//!   CANN; `ACL_REG_TYPE_OTHER` holds any number. Unregistering a function that is not
//!   registered under that type is also 500000.
//! - `aclInit` calls the init callbacks with the config file's content (and its length;
//!   "" when there is no config) in CANN's order: `ACL_MODEL`, then `ACL_OP_EXECUTOR` (only
//!   when a config path was given), `ACL_DVPP`, and `OTHER` last; the other types are
//!   registered but never called by `aclInit` (their libraries call them in CANN). An init
//!   callback registered while the runtime is initialised runs at once (its result is
//!   ignored, as in CANN). A callback that fails fails `aclInit` with its code and the
//!   runtime stays uninitialised.
//! - The finalizing `aclFinalize`/`aclFinalizeReference` calls the finalize callbacks in
//!   CANN's order: `ACL_OP_COMPILER`, `ACL_MODEL`, `ACL_DVPP`, `OTHER`. A failing callback
//!   fails the finalize with its code (CANN stops there too; the runtime stays up).
//! - Registrations live for the process (across `aclFinalize`/`aclInit`), as CANN's
//!   singleton. Callbacks run without any of our locks held, so they may call ACL; calling
//!   `aclInit`/`aclFinalize` from inside one is refused (it would re-enter the init in
//!   progress).

use crate::ffi::boundary;
use crate::globals::{
    INIT_CALLBACKS as CALLBACKS, INIT_CONFIG as CONFIG, INIT_INITIALIZED as INITIALIZED,
    INIT_IN_CALLBACK as IN_CALLBACK,
};
use npu_emu::codes::{ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_INVALID_PARAM};
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::os::raw::c_char;
use std::sync::atomic::Ordering;

/// `aclInitCallbackFunc`.
pub type InitFn = unsafe extern "C" fn(*const c_char, usize, *mut c_void) -> i32;
/// `aclFinalizeCallbackFunc`.
pub type FinalizeFn = unsafe extern "C" fn(*mut c_void) -> i32;

/// `aclRegisterCallbackType` values (abi.md, acl_rt.h).
pub const ACL_REG_TYPE_ACL_MODEL: i32 = 0;
pub const ACL_REG_TYPE_ACL_OP_EXECUTOR: i32 = 1;
pub const ACL_REG_TYPE_ACL_OP_COMPILER: i32 = 3;
pub const ACL_REG_TYPE_ACL_DVPP: i32 = 6;
pub const ACL_REG_TYPE_OTHER: i32 = 65535;

/// The registered init and finalize callbacks ([`CALLBACKS`]).
pub(crate) struct Callbacks {
    /// (type, function, user data), in registration order.
    pub(crate) init: Vec<(i32, InitFn, usize)>,
    pub(crate) fini: Vec<(i32, FinalizeFn, usize)>,
}

/// Refuse `aclInit`/`aclFinalize` called from inside one of these callbacks.
pub fn check_not_in_callback(what: &str) -> Result<()> {
    if IN_CALLBACK.with(|c| c.get()) {
        return Err(Error::new(
            ACL_ERROR_INTERNAL_ERROR,
            format!("{what} was called from an init or finalize callback, while the ACL runtime is being initialized or finalized"),
        ));
    }
    Ok(())
}

struct InCallback;
impl InCallback {
    fn enter() -> InCallback {
        IN_CALLBACK.with(|c| c.set(true));
        InCallback
    }
}
impl Drop for InCallback {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(false));
    }
}

fn type_name(t: i32) -> String {
    match t {
        0 => "ACL_REG_TYPE_ACL_MODEL".into(),
        1 => "ACL_REG_TYPE_ACL_OP_EXECUTOR".into(),
        2 => "ACL_REG_TYPE_ACL_OP_CBLAS".into(),
        3 => "ACL_REG_TYPE_ACL_OP_COMPILER".into(),
        4 => "ACL_REG_TYPE_ACL_TDT_CHANNEL".into(),
        5 => "ACL_REG_TYPE_ACL_TDT_QUEUE".into(),
        6 => "ACL_REG_TYPE_ACL_DVPP".into(),
        7 => "ACL_REG_TYPE_ACL_RETR".into(),
        65535 => "ACL_REG_TYPE_OTHER".into(),
        t => format!("type {t}"),
    }
}

/// Call the init callbacks of `aclInit` with `config`, in CANN's order; the first failure's
/// code. `with_path`: a config path was given (the op-executor callbacks run only then).
pub fn notify_init(config: &str, with_path: bool) -> Result<()> {
    let mut order = vec![ACL_REG_TYPE_ACL_MODEL];
    if with_path {
        order.push(ACL_REG_TYPE_ACL_OP_EXECUTOR);
    }
    order.extend([ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER]);
    let all = CALLBACKS.lock().init.clone();
    let _g = InCallback::enter();
    for t in order {
        for &(ty, f, ud) in all.iter().filter(|c| c.0 == t) {
            // SAFETY: the user's callback with the documented arguments; `config` outlives
            // the call.
            let r = unsafe {
                f(
                    config.as_ptr() as *const c_char,
                    config.len(),
                    ud as *mut c_void,
                )
            };
            if r != 0 {
                return Err(Error::new(
                    r,
                    format!(
                        "the {} init callback {:#x} failed with {r}",
                        type_name(ty),
                        f as usize
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Remember that the runtime is initialised with `config` (later init callbacks run at
/// once), or (`None`) that it is not.
pub fn set_initialized(config: Option<&str>) {
    *CONFIG.lock() = config.map(str::to_string);
    INITIALIZED.store(config.is_some(), Ordering::SeqCst);
}

/// Call the finalize callbacks, in CANN's order; the first failure's code.
pub fn notify_finalize() -> Result<()> {
    let all = CALLBACKS.lock().fini.clone();
    let _g = InCallback::enter();
    for t in [
        ACL_REG_TYPE_ACL_OP_COMPILER,
        ACL_REG_TYPE_ACL_MODEL,
        ACL_REG_TYPE_ACL_DVPP,
        ACL_REG_TYPE_OTHER,
    ] {
        for &(ty, f, ud) in all.iter().filter(|c| c.0 == t) {
            // SAFETY: the user's callback with its registered user data.
            let r = unsafe { f(ud as *mut c_void) };
            if r != 0 {
                return Err(Error::new(
                    r,
                    format!(
                        "the {} finalize callback {:#x} failed with {r}",
                        type_name(ty),
                        f as usize
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn duplicate(t: i32, what: &str) -> Error {
    Error::new(
        ACL_ERROR_INTERNAL_ERROR,
        format!(
            "a {what} callback is already registered for {}; only ACL_REG_TYPE_OTHER holds several (unregister the first)",
            type_name(t)
        ),
    )
}

fn not_registered(t: i32, f: usize, what: &str) -> Error {
    Error::new(
        ACL_ERROR_INTERNAL_ERROR,
        format!(
            "cbFunc = {f:#x} is not registered as a {what} callback for {}",
            type_name(t)
        ),
    )
}

fn null_fn() -> Error {
    Error::new(ACL_ERROR_INVALID_PARAM, "argument cbFunc is NULL")
}

/// `aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc, void *userData)`
#[no_mangle]
pub unsafe extern "C" fn aclInitCallbackRegister(
    r#type: i32,
    cbFunc: Option<InitFn>,
    userData: *mut c_void,
) -> i32 {
    boundary("aclInitCallbackRegister", || {
        let f = cbFunc.ok_or_else(null_fn)?;
        {
            let mut cbs = CALLBACKS.lock();
            if r#type != ACL_REG_TYPE_OTHER && cbs.init.iter().any(|c| c.0 == r#type) {
                return Err(duplicate(r#type, "init"));
            }
            cbs.init.push((r#type, f, userData as usize));
        }
        // Registered after aclInit: runs now (CANN ignores its result).
        if INITIALIZED.load(Ordering::SeqCst) {
            let config = CONFIG.lock().clone().unwrap_or_default();
            // SAFETY: the user's callback with the documented arguments.
            let _ = unsafe { f(config.as_ptr() as *const c_char, config.len(), userData) };
        }
        Ok(())
    })
}

/// `aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc)`
#[no_mangle]
pub unsafe extern "C" fn aclInitCallbackUnRegister(r#type: i32, cbFunc: Option<InitFn>) -> i32 {
    boundary("aclInitCallbackUnRegister", || {
        let f = cbFunc.ok_or_else(null_fn)?;
        let mut cbs = CALLBACKS.lock();
        let at = cbs
            .init
            .iter()
            .position(|c| c.0 == r#type && c.1 as usize == f as usize)
            .ok_or_else(|| not_registered(r#type, f as usize, "init"))?;
        cbs.init.remove(at);
        Ok(())
    })
}

/// `aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc, void *userData)`
#[no_mangle]
pub unsafe extern "C" fn aclFinalizeCallbackRegister(
    r#type: i32,
    cbFunc: Option<FinalizeFn>,
    userData: *mut c_void,
) -> i32 {
    boundary("aclFinalizeCallbackRegister", || {
        let f = cbFunc.ok_or_else(null_fn)?;
        let mut cbs = CALLBACKS.lock();
        if r#type != ACL_REG_TYPE_OTHER && cbs.fini.iter().any(|c| c.0 == r#type) {
            return Err(duplicate(r#type, "finalize"));
        }
        cbs.fini.push((r#type, f, userData as usize));
        Ok(())
    })
}

/// `aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc)`
#[no_mangle]
pub unsafe extern "C" fn aclFinalizeCallbackUnRegister(
    r#type: i32,
    cbFunc: Option<FinalizeFn>,
) -> i32 {
    boundary("aclFinalizeCallbackUnRegister", || {
        let f = cbFunc.ok_or_else(null_fn)?;
        let mut cbs = CALLBACKS.lock();
        let at = cbs
            .fini
            .iter()
            .position(|c| c.0 == r#type && c.1 as usize == f as usize)
            .ok_or_else(|| not_registered(r#type, f as usize, "finalize"))?;
        cbs.fini.remove(at);
        Ok(())
    })
}
