//! TODO: wait
