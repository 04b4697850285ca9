//! TODO: event
