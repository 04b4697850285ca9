//! Device and host memory state of this process, beyond what [`npu_emu::node::Node`]
//! keeps (host allocations from `aclrtMallocHost`, VMM handles, …). Owned by the
//! acl-memory helper; `MemState::new` is called by `aclInit`.

/// Memory bookkeeping of this process.
#[derive(Default)]
pub struct MemState {}

impl MemState {
    /// Fresh state for a new runtime.
    pub fn new() -> MemState {
        MemState::default()
    }
}
