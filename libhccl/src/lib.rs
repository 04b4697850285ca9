//! `libhccl.so`: HCCL communicators and collectives over the npu-emu shared-memory fabric.
#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc)]

mod stubs {
    include!(concat!(env!("OUT_DIR"), "/stubs.rs"));
}
