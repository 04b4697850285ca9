//! Drop-in `libnnopbase.so` and `libopapi.so` (a symlink to it): the aclnn argument objects
//! of `aclnn/acl_meta.h` and `aclnn/aclnn_base.h`, and the format conversion
//! `aclnnNpuFormatCast` of `aclnnop/aclnn_npu_format_cast.h` (abi.md §5.5).
//!
//! Like libhccl, this library holds no runtime of its own: it reaches the one runtime of
//! the process (in `libascendcl.so`) through the `npuemu_runtime_api` table ([`rt`]), so a
//! device buffer from `aclrtMalloc` and a stream from `aclrtCreateStream` are the ones the
//! aclnn calls use. Conversions are `npu_emu::formats` plans run as stream tasks.
//!
//! - [`status`]: aclnn status codes, the panic/error boundary, messages for
//!   `aclGetRecentErrMsg`;
//! - [`objects`]: the objects behind the handles (one handle table, a tag per kind);
//! - [`meta`]: `aclCreateTensor` and the other `acl_meta.h` / `aclnn_base.h` functions;
//! - [`executor`]: `aclOpExecutor` (single use unless repeatable) and its address setters;
//! - [`format_cast`]: the three `aclnnNpuFormatCast*` functions;
//! - [`trans_weight`]: `aclnnTransMatmulWeight*` and `aclnnCalculateMatmulWeightSize[V2]`;
//! - [`run`]: the second phase of every call (checks, then one task on the stream);
//! - [`cxx`]: arrays the caller frees with `delete[]`;
//! - [`ops`]: the operators (`aclnnop/aclnn_*.h`), one file per family, over the machine's
//!   operator engine (`npu_emu::ops`);
//! - [`custom_op`]: `npuemu_aclnn_*_array`, the list attributes of custom operators' generated
//!   aclnn APIs (`register/npuemu_op_runtime.h`);
//! - [`globals`]: every process-global item of the library and why it is global.
//! - Shared with the other C-interface libraries (crate `npu-emu-ffi`): the panic boundary
//!   ([`status`] holds aclnn's conventions for it), the handle table behind the objects, and
//!   the runtime-table client ([`rt`]).

// Exports are C functions taking raw pointers from C callers; their contract is the C header.
#![allow(non_snake_case, clippy::missing_safety_doc)]

pub mod collective;
pub mod custom_op;
pub mod cxx;
pub mod executor;
pub mod format_cast;
pub mod globals;
pub mod meta;
pub mod objects;
pub mod ops;
pub mod rt;
pub mod run;
pub mod status;
pub mod trans_weight;
