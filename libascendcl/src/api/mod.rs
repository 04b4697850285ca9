//! Exported ACL functions, one file per area. `build.rs` scans these files for
//! `pub unsafe extern "C" fn acl…` / `pub extern "C" fn acl…` definitions; every function of
//! `abi/acl_functions.tsv` not found here gets a generated "not supported" stub.

pub mod allocator;
pub mod callback;
pub mod compile_opt;
pub mod context;
pub mod device;
pub mod devres;
pub mod dump;
pub mod errors;
pub mod event;
pub mod fallback;
pub mod helpers;
pub mod host_func;
pub mod init;
pub mod init_cb;
pub mod ipc;
pub mod kernel;
pub mod kernel_bin;
pub mod label;
pub mod log;
pub mod mbuf;
pub mod mdl;
pub mod mdlri;
pub mod mem_async;
pub mod memory;
pub mod notify;
pub mod op;
pub mod op_args;
pub mod op_rnn;
pub mod op_tensor;
pub mod overflow;
pub mod prof;
pub mod prof_tx;
pub mod rt_compat;
pub mod state;
pub mod stream;
pub mod sys_param;
pub mod task_info;
pub mod tdt;
pub mod tdt_queue;
pub mod tensor_desc;
pub mod version;
pub mod vmm;
