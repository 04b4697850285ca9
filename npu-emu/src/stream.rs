//! TODO: stream
