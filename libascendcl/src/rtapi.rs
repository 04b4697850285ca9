//! The table exported to libhccl. PLACEHOLDER.
