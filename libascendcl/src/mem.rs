//! Device and host memory state of this process. PLACEHOLDER (memory helper).
