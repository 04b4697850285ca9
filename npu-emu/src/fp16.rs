//! TODO: fp16
