//! TODO: fault
