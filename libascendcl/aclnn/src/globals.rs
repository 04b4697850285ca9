//! Every piece of process-global state of libnnopbase, and why it must be global.
//!
//! A C caller holds plain handles and calls plain functions, with no context object to hang
//! state on, so what outlives one call lives here.

use crate::objects::{Object, KINDS};
use crate::status::NnError;
use npu_emu_ffi::handles::HandleTable;
use npu_emu_ffi::rt::Cached;
use parking_lot::Mutex;
use std::sync::OnceLock;

/// The ACL runtime of this process, reached through libascendcl's table ([`crate::rt`]):
/// loaded once and kept while the process lives (the one runtime instance is
/// libascendcl's; this is only our way to it).
pub static RT: Cached<NnError> = Cached::new("libnnopbase.so", crate::rt::MODULE);

/// The C++ runtime's `operator new[](size_t, const std::nothrow_t&)` and `std::nothrow`
/// addresses ([`crate::cxx`]), looked up once: the loaded C++ runtime does not change.
pub static NEW_ARRAY: OnceLock<Option<(usize, usize)>> = OnceLock::new();

/// Every live aclnn object (`aclTensor`, `aclScalar`, the arrays and lists,
/// `aclOpExecutor`), by handle. The C API creates and destroys them with free functions,
/// from any thread, independent of any runtime call.
pub static OBJECTS: Mutex<HandleTable<Object>> = Mutex::new(HandleTable::new(&KINDS[0]));
