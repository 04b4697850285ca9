//! TODO: node
