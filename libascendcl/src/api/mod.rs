//! Exported ACL functions, one file per area. `build.rs` scans these files for
//! `pub unsafe extern "C" fn acl…` / `pub extern "C" fn acl…` definitions; every function of
//! `abi/acl_functions.tsv` not found here gets a generated "not supported" stub.

pub mod callback;
pub mod compile_opt;
pub mod context;
pub mod device;
pub mod errors;
pub mod event;
pub mod fallback;
pub mod helpers;
pub mod init;
pub mod kernel;
pub mod kernel_bin;
pub mod log;
pub mod memory;
pub mod op;
pub mod prof;
pub mod rt_compat;
pub mod stream;
pub mod sys_param;
pub mod tensor_desc;
pub mod version;
pub mod vmm;
