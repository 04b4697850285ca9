//! TODO: memory
