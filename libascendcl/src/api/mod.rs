//! Exported ACL functions, one file per area. `build.rs` scans these files for
//! `pub unsafe extern "C" fn acl…` / `pub extern "C" fn acl…` definitions; every function of
//! `abi/acl_functions.tsv` not found here gets a generated "not supported" stub.
pub mod helpers;
pub mod memory;
pub mod prof;
pub mod vmm;
