//! The collective step of a fused matmul+communication operator (CANN's MC2 operators:
//! `aclnnMatmulAllReduce`, `aclnnAllGatherMatmul`, `aclnnMatmulReduceScatter`, ...).
//!
//! These operators name their communicator by the string `HcclGetCommName` returns
//! (`group`). The communication itself is libhccl's: this module finds libhccl's own exports
//! at run time (`dlsym(RTLD_DEFAULT)`, or the already loaded `libhccl.so` when the program
//! loaded it with local scope, as Python extension modules are), looks the communicator up
//! with `HcclCommGetHandleWithName` and enqueues `HcclAllReduce` / `HcclAllGather` /
//! `HcclReduceScatter` on the caller's stream, between the operator's engine steps. A
//! program without libhccl has no communicator, so then the `group` is unknown.

use crate::status::{NnError, NnResult, ACLNN_ERR_INNER, ACLNN_ERR_PARAM_INVALID};
use npu_emu::ops::dtype::DType;
use std::ffi::{c_char, c_void, CString};

type HcclComm = *mut c_void;
type GetByName = unsafe extern "C" fn(*const c_char, *mut HcclComm) -> i32;
type GetRankSize = unsafe extern "C" fn(HcclComm, *mut u32) -> i32;
type GetRankId = unsafe extern "C" fn(HcclComm, *mut u32) -> i32;
type AllReduce =
    unsafe extern "C" fn(*mut c_void, *mut c_void, u64, i32, i32, HcclComm, *mut c_void) -> i32;
type AllGather =
    unsafe extern "C" fn(*mut c_void, *mut c_void, u64, i32, HcclComm, *mut c_void) -> i32;
type ReduceScatter =
    unsafe extern "C" fn(*mut c_void, *mut c_void, u64, i32, i32, HcclComm, *mut c_void) -> i32;

/// `HCCL_REDUCE_SUM`.
const HCCL_REDUCE_SUM: i32 = 0;

/// Which collective a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `count` elements, in place.
    AllReduce,
    /// `count` elements from each rank, gathered rank-major.
    AllGather,
    /// `count` elements to each rank, summed.
    ReduceScatter,
}

/// One collective of an executor: buffers are byte offsets in the operator's workspace.
#[derive(Clone, Debug)]
pub struct Collective {
    pub kind: Kind,
    pub send: usize,
    pub recv: usize,
    pub count: u64,
    pub dtype: DType,
    pub group: String,
}

/// A communicator found by name, with its size and this process's rank in it.
pub struct Comm {
    pub handle: HcclComm,
    pub ranks: u32,
    pub rank: u32,
}

/// The address of libhccl's export `name`, if this process loaded libhccl.
fn symbol(name: &str) -> Option<*mut c_void> {
    let c = CString::new(name).ok()?;
    // SAFETY: dlsym/dlopen with valid NUL-terminated strings; RTLD_NOLOAD only returns a
    // library already loaded (its reference is dropped again at once).
    unsafe {
        let p = libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr());
        if !p.is_null() {
            return Some(p);
        }
        for lib in [c"libhccl.so", c"libhccl_fwk.so"] {
            let h = libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
            if !h.is_null() {
                let p = libc::dlsym(h, c.as_ptr());
                libc::dlclose(h);
                if !p.is_null() {
                    return Some(p);
                }
            }
        }
        None
    }
}

fn need(name: &str, group: &str) -> NnResult<*mut c_void> {
    symbol(name).ok_or_else(|| {
        NnError::invalid(format!(
            "group \"{group}\" names no communicator: libhccl.so is not loaded in this process \
             ({name} not found), so there is no HCCL communicator to use"
        ))
    })
}

/// libhccl's export `$name` as the function pointer type `$ty`.
macro_rules! export {
    ($name:literal, $ty:ty, $group:expr) => {{
        let p = need($name, $group)?;
        // SAFETY: `p` is libhccl's export of that name, whose C signature `$ty` declares
        // (abi/hccl_functions.tsv); a data pointer and a function pointer have one size here.
        unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
    }};
}

/// The communicator named `group` (phase 1 checks it; phase 2 finds it again).
pub fn comm(group: &str) -> NnResult<Comm> {
    let by_name = export!("HcclCommGetHandleWithName", GetByName, group);
    let size = export!("HcclGetRankSize", GetRankSize, group);
    let id = export!("HcclGetRankId", GetRankId, group);
    let name = CString::new(group)
        .map_err(|_| NnError::invalid("group contains a NUL character".to_string()))?;
    let mut h: HcclComm = std::ptr::null_mut();
    // SAFETY: libhccl's exports with their documented signatures; valid out-pointers.
    let r = unsafe { by_name(name.as_ptr(), &mut h) };
    if r != 0 || h.is_null() {
        return Err(NnError::invalid(format!(
            "group \"{group}\" names no live HCCL communicator of this process \
             (HcclCommGetHandleWithName returned {r}); pass the name HcclGetCommName gives"
        )));
    }
    let (mut n, mut me) = (0u32, 0u32);
    // SAFETY: as above.
    let (r1, r2) = unsafe { (size(h, &mut n), id(h, &mut me)) };
    if r1 != 0 || r2 != 0 {
        return Err(NnError::invalid(format!(
            "group \"{group}\": HcclGetRankSize/HcclGetRankId returned {r1}/{r2}"
        )));
    }
    Ok(Comm {
        handle: h,
        ranks: n,
        rank: me,
    })
}

/// The `HcclDataType` of `d`, or an error naming `arg`.
pub fn hccl_dtype(d: DType, arg: &str) -> NnResult<i32> {
    Ok(match d {
        DType::F16 => 3,
        DType::F32 => 4,
        DType::BF16 => 11,
        _ => {
            return Err(NnError::new(
                ACLNN_ERR_PARAM_INVALID,
                format!("{arg}: dtype {d:?} cannot be communicated by this operator"),
            ))
        }
    })
}

impl Collective {
    /// Enqueue the collective on `stream`, its buffers at `workspace` + offsets.
    ///
    /// # Safety
    /// `stream` is the caller's `aclrtStream` (or NULL); `workspace` is the device address of
    /// a workspace holding the buffers (phase 2 checked it against the asked size).
    pub unsafe fn enqueue(&self, api: &str, workspace: usize, stream: *mut c_void) -> NnResult<()> {
        let c = comm(&self.group)?;
        let dt = hccl_dtype(self.dtype, "output")?;
        let send = (workspace + self.send) as *mut c_void;
        let recv = (workspace + self.recv) as *mut c_void;
        let (h, n, g) = (c.handle, self.count, &self.group);
        let (r, what) = match self.kind {
            Kind::AllReduce => {
                let f = export!("HcclAllReduce", AllReduce, g);
                // SAFETY: libhccl's export; the buffers lie in the workspace; the caller's stream.
                let r = unsafe { f(send, recv, n, dt, HCCL_REDUCE_SUM, h, stream) };
                (r, "HcclAllReduce")
            }
            Kind::AllGather => {
                let f = export!("HcclAllGather", AllGather, g);
                // SAFETY: as above.
                let r = unsafe { f(send, recv, n, dt, h, stream) };
                (r, "HcclAllGather")
            }
            Kind::ReduceScatter => {
                let f = export!("HcclReduceScatter", ReduceScatter, g);
                // SAFETY: as above.
                let r = unsafe { f(send, recv, n, dt, HCCL_REDUCE_SUM, h, stream) };
                (r, "HcclReduceScatter")
            }
        };
        if r != 0 {
            return Err(NnError::new(
                ACLNN_ERR_INNER,
                format!("{api}: {what} on group \"{}\" returned {r}", self.group),
            ));
        }
        Ok(())
    }
}
