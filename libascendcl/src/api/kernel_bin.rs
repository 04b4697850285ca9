//! Kernel binaries and launches by name: `aclrtBinaryLoadFromFile` / `FromData` / `aclrtBinaryLoad`,
//! `aclrtBinaryGetFunction(ByEntry)`, the `aclrtKernelArgs*` builder, `aclrtLaunchKernel`,
//! `…V2`, `…WithConfig`, `…WithHostArgs`, and the function queries. The binaries are the shared
//! objects of npu-emu's `ascendc_fatbin_library` ([`npu_emu::kernel_bin`]); a launch goes to
//! the same AI-core emulation as `ACLRT_LAUNCH_KERNEL` ([`super::kernel`]), in stream order.
//!
//! Argument blocks: the kernel's parameters in order, each at its natural alignment (a pointer
//! 8 bytes; a tiling struct by value inline), as the binary's kernel table describes them.
//! - `aclrtLaunchKernel(V2)`: `argsData` is device memory, read when the launch runs (after the
//!   copies queued before it on the stream).
//! - `aclrtKernelArgsAppend` fills the next parameter (its size must be the parameter's);
//!   `…AppendPlaceHolder` takes the next pointer parameter, whose data
//!   (`…GetPlaceHolderBuffer`, host memory owned by the handle) is copied to device memory at
//!   the launch; that memory lives until the launch has run.
//! - `…WithHostArgs`: the whole host block is copied to device memory at the launch and each
//!   placeholder's pointer (at `addrOffset`) set to the copy of its data (at `dataOffset`).
//!
//! `aclrtBinaryGetFunctionByEntry` (a reserved interface in CANN 8.x): the entry is the tiling
//! key the kernel runs with (`TILING_KEY_IS`); the binary must hold exactly one kernel.
//! Launch configuration (`aclrtLaunchKernelCfg`): every attribute is checked and accepted; a
//! non-zero `BLOCKDIM_OFFSET` is not supported (207000); the others do not change the result.

use super::kernel::{check_block_dim, execute, regions_of, submit, submit_task};
use crate::ffi::{self, boundary, non_null, out};
use crate::globals::{KERNEL_STUBS as STUBS, KERNEL_TABLES as TABLES};
use crate::runtime;
use npu_emu::codes::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
use npu_emu::kernel_bin::{KernelBinary, KernelInfo};
use npu_emu::kernels::launch::Launch;
use npu_emu::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// `ACL_ERROR_RT_PARAM_INVALID`.
const RT_PARAM_INVALID: i32 = 107000;

/// A loaded binary: its handle points to it.
pub(crate) struct Bin {
    pub(crate) bin: KernelBinary,
    /// `aclrtBinaryGetDevAddress`: a device copy of the binary's bytes, made on first use.
    dev: Mutex<Option<u64>>,
}

impl Drop for Bin {
    fn drop(&mut self) {
        if let Some(addr) = self.dev.lock().take() {
            if let Ok(rt) = runtime::get() {
                let _ = rt.node.free(addr);
            }
        }
    }
}

/// A function handle: a kernel of a binary and the tiling key it runs with.
pub(crate) struct Func {
    pub(crate) bin: Arc<Bin>,
    pub(crate) index: usize,
    pub(crate) tiling_key: u64,
}

impl Func {
    pub(crate) fn kernel(&self) -> &KernelInfo {
        &self.bin.bin.kernels[self.index]
    }
}

/// An argument list being built (`aclrtArgsHandle`).
struct Args {
    func: Arc<Func>,
    data: Vec<u8>,
    /// Parameters filled so far (the next one to append).
    next: usize,
    /// Placeholder parameters: (parameter index, their host data).
    placeholders: Vec<(usize, Vec<u8>)>,
    finalized: bool,
}

/// The kernel binaries, functions, argument lists and binaries of the process
/// ([`TABLES`]), by the handle handed to C.
#[derive(Default)]
pub(crate) struct Tables {
    bins: HashMap<usize, Arc<Bin>>,
    funcs: HashMap<usize, Arc<Func>>,
    args: HashMap<usize, Args>,
    binaries: HashMap<usize, Vec<u8>>,
}

fn with_tables<T>(f: impl FnOnce(&mut Tables) -> T) -> T {
    let mut g = TABLES.lock();
    f(g.get_or_insert_with(Tables::default))
}

fn bin_of(h: *mut c_void) -> Result<Arc<Bin>> {
    non_null(h, "binHandle")?;
    with_tables(|t| t.bins.get(&(h as usize)).cloned()).ok_or_else(|| {
        Error::invalid(format!(
            "binHandle {h:p} is not a loaded kernel binary (from aclrtBinaryLoadFromFile / FromData, not unloaded)"
        ))
    })
}

pub(crate) fn func_of(h: *mut c_void) -> Result<Arc<Func>> {
    non_null(h, "funcHandle")?;
    with_tables(|t| t.funcs.get(&(h as usize)).cloned()).ok_or_else(|| {
        Error::invalid(format!(
            "funcHandle {h:p} is not a kernel function handle (from aclrtBinaryGetFunction of a loaded binary)"
        ))
    })
}

/// Register a loaded binary; returns its handle.
pub(crate) fn register_bin(bin: KernelBinary) -> *mut c_void {
    let b = Arc::new(Bin {
        bin,
        dev: Mutex::new(None),
    });
    let h = Arc::as_ptr(&b) as usize;
    with_tables(|t| t.bins.insert(h, b));
    h as *mut c_void
}

/// A function handle for kernel `index` of `bin`.
pub(crate) fn register_func(bin: Arc<Bin>, index: usize, tiling_key: u64) -> *mut c_void {
    let f = Arc::new(Func {
        bin,
        index,
        tiling_key,
    });
    let h = Arc::as_ptr(&f) as usize;
    with_tables(|t| t.funcs.insert(h, f));
    h as *mut c_void
}

fn check_load_options(options: *const c_void) -> Result<()> {
    #[repr(C)]
    struct Options {
        options: *const [u32; 5],
        num: usize,
    }
    if options.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null aclrtBinaryLoadOptions from the caller.
    let o = unsafe { &*(options as *const Options) };
    if o.num > 0 && o.options.is_null() {
        return Err(Error::invalid(format!(
            "options->options is NULL with options->numOpt = {}",
            o.num
        )));
    }
    for i in 0..o.num {
        // SAFETY: numOpt entries of 20 bytes (type + 16-byte value union).
        let ty = unsafe { (*o.options.add(i))[0] };
        if !(1..=3).contains(&ty) {
            return Err(Error::invalid(format!(
                "options->options[{i}].type = {ty} is not an aclrtBinaryLoadOptionType (1 LAZY_LOAD, 2 MAGIC, 3 CPU_KERNEL_MODE)"
            )));
        }
    }
    Ok(())
}

fn load(bin: Result<KernelBinary>, options: *const c_void, handle: *mut *mut c_void) -> Result<()> {
    non_null(handle, "binHandle")?;
    check_load_options(options)?;
    let _rt = runtime::get()?;
    let h = register_bin(bin?);
    out(handle, "binHandle", h)
}

/// `aclrtBinaryLoadFromFile`.
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryLoadFromFile(
    binPath: *const c_char,
    options: *mut c_void,
    binHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtBinaryLoadFromFile", || {
        non_null(binPath, "binPath")?;
        // SAFETY: a NUL-terminated path from the caller.
        let path = unsafe { CStr::from_ptr(binPath) }
            .to_string_lossy()
            .into_owned();
        load(
            KernelBinary::load_file(std::path::Path::new(&path)),
            options,
            binHandle,
        )
    })
}

/// `aclrtBinaryLoadFromData`.
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryLoadFromData(
    data: *const c_void,
    length: usize,
    options: *const c_void,
    binHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtBinaryLoadFromData", || {
        non_null(data, "data")?;
        if length == 0 {
            return Err(Error::invalid("length is 0"));
        }
        // SAFETY: length readable bytes at data (caller contract).
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, length) };
        load(KernelBinary::load_data(bytes), options, binHandle)
    })
}

/// `aclrtCreateBinary`: keeps a copy of the bytes for `aclrtBinaryLoad`. NULL on error.
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateBinary(data: *const c_void, dataLen: usize) -> *mut c_void {
    ffi::boundary_value("aclrtCreateBinary", std::ptr::null_mut(), || {
        non_null(data, "data")?;
        if dataLen == 0 {
            return Err(Error::invalid("dataLen is 0"));
        }
        // SAFETY: dataLen readable bytes at data (caller contract).
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, dataLen) }.to_vec();
        let b = Box::new(0u8);
        let h = Box::into_raw(b) as usize;
        with_tables(|t| t.binaries.insert(h, bytes));
        Ok(h as *mut c_void)
    })
}

/// `aclrtDestroyBinary`.
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyBinary(binary: *mut c_void) -> i32 {
    boundary("aclrtDestroyBinary", || {
        non_null(binary, "binary")?;
        if with_tables(|t| t.binaries.remove(&(binary as usize))).is_none() {
            return Err(Error::invalid(format!(
                "binary {binary:p} is not from aclrtCreateBinary (or was destroyed already)"
            )));
        }
        // SAFETY: the handle was made by Box::into_raw in aclrtCreateBinary, removed once.
        drop(unsafe { Box::from_raw(binary as *mut u8) });
        Ok(())
    })
}

/// `aclrtBinaryLoad`.
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryLoad(binary: *mut c_void, binHandle: *mut *mut c_void) -> i32 {
    boundary("aclrtBinaryLoad", || {
        non_null(binary, "binary")?;
        let bytes =
            with_tables(|t| t.binaries.get(&(binary as usize)).cloned()).ok_or_else(|| {
                Error::invalid(format!("binary {binary:p} is not from aclrtCreateBinary"))
            })?;
        load(KernelBinary::load_data(&bytes), std::ptr::null(), binHandle)
    })
}

/// `aclrtBinaryUnLoad`: launches already queued keep the binary until they have run.
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryUnLoad(binHandle: *mut c_void) -> i32 {
    boundary("aclrtBinaryUnLoad", || {
        let b = bin_of(binHandle)?;
        with_tables(|t| {
            t.bins.remove(&(binHandle as usize));
            t.funcs.retain(|_, f| !Arc::ptr_eq(&f.bin, &b));
            t.args.retain(|_, a| !Arc::ptr_eq(&a.func.bin, &b));
        });
        Ok(())
    })
}

/// `aclrtBinaryGetFunction`.
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryGetFunction(
    binHandle: *mut c_void,
    kernelName: *const c_char,
    funcHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtBinaryGetFunction", || {
        let b = bin_of(binHandle)?;
        non_null(kernelName, "kernelName")?;
        non_null(funcHandle, "funcHandle")?;
        // SAFETY: a NUL-terminated name from the caller.
        let name = unsafe { CStr::from_ptr(kernelName) }
            .to_string_lossy()
            .into_owned();
        b.bin.kernel(&name)?;
        let index = b
            .bin
            .kernels
            .iter()
            .position(|k| k.name == name)
            .unwrap_or(0);
        out(funcHandle, "funcHandle", register_func(b, index, 0))
    })
}

/// `aclrtBinaryGetFunctionByEntry`: the entry is the tiling key (see the module doc).
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryGetFunctionByEntry(
    binHandle: *mut c_void,
    funcEntry: u64,
    funcHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtBinaryGetFunctionByEntry", || {
        let b = bin_of(binHandle)?;
        non_null(funcHandle, "funcHandle")?;
        if b.bin.kernels.len() != 1 {
            let names: Vec<&str> = b.bin.kernels.iter().map(|k| k.name.as_str()).collect();
            return Err(Error::new(
                npu_emu::kernel_bin::ACL_ERROR_RT_KERNEL_LOOKUP,
                format!(
                    "{} holds {} kernels ({}): npu-emu takes funcEntry as the tiling key of a binary's only kernel; get a function of this binary by name with aclrtBinaryGetFunction",
                    b.bin.origin,
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
        out(funcHandle, "funcHandle", register_func(b, 0, funcEntry))
    })
}

/// `aclrtBinaryGetDevAddress`: a device copy of the binary (made on the current device on first
/// use, freed when the binary is unloaded).
#[no_mangle]
pub unsafe extern "C" fn aclrtBinaryGetDevAddress(
    binHandle: *mut c_void,
    binAddr: *mut *mut c_void,
    binSize: *mut usize,
) -> i32 {
    boundary("aclrtBinaryGetDevAddress", || {
        let b = bin_of(binHandle)?;
        non_null(binAddr, "binAddr")?;
        non_null(binSize, "binSize")?;
        let rt = runtime::get()?;
        let mut dev = b.dev.lock();
        let addr = match *dev {
            Some(a) => a,
            None => {
                let (_, phys) = rt.current_device()?;
                let n = b.bin.bytes.len() as u64;
                let info = rt.node.alloc(phys, n.next_multiple_of(32) + 32, n)?;
                let host = rt.node.check(info.addr, n, "the binary's device copy")?;
                // SAFETY: n bytes of the new allocation's alias; the bytes are n long.
                unsafe { std::ptr::copy_nonoverlapping(b.bin.bytes.as_ptr(), host, n as usize) };
                *dev = Some(info.addr);
                info.addr
            }
        };
        out(binAddr, "binAddr", addr as *mut c_void)?;
        out(binSize, "binSize", b.bin.bytes.len())
    })
}

/// `aclrtGetFunctionAddr`: the block function's address (AIV for vector kernels, AIC for cube
/// kernels; NULL for the other core type).
#[no_mangle]
pub unsafe extern "C" fn aclrtGetFunctionAddr(
    funcHandle: *mut c_void,
    aicAddr: *mut *mut c_void,
    aivAddr: *mut *mut c_void,
) -> i32 {
    boundary("aclrtGetFunctionAddr", || {
        let f = func_of(funcHandle)?;
        non_null(aicAddr, "aicAddr")?;
        non_null(aivAddr, "aivAddr")?;
        let k = f.kernel();
        let addr = k.func as usize as *mut c_void;
        let cube = k.kernel_type == 1;
        out(
            aicAddr,
            "aicAddr",
            if cube { addr } else { std::ptr::null_mut() },
        )?;
        out(
            aivAddr,
            "aivAddr",
            if cube { std::ptr::null_mut() } else { addr },
        )
    })
}

/// `aclrtGetFunctionName`.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetFunctionName(
    funcHandle: *mut c_void,
    maxLen: u32,
    name: *mut c_char,
) -> i32 {
    boundary("aclrtGetFunctionName", || {
        let f = func_of(funcHandle)?;
        non_null(name, "name")?;
        let n = &f.kernel().name;
        if (maxLen as usize) < n.len() + 1 {
            return Err(Error::invalid(format!(
                "maxLen {maxLen} is too small for the name {n:?} ({} bytes with its NUL)",
                n.len() + 1
            )));
        }
        // SAFETY: maxLen writable bytes at name, checked to hold the name and its NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(n.as_ptr(), name as *mut u8, n.len());
            *name.add(n.len()) = 0;
        }
        Ok(())
    })
}

/// `aclrtGetFunctionAttribute`: `ACL_FUNC_ATTR_KERNEL_TYPE` (1) gives the `aclrtKernelType`.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetFunctionAttribute(
    funcHandle: *mut c_void,
    attrType: i32,
    attrValue: *mut i64,
) -> i32 {
    boundary("aclrtGetFunctionAttribute", || {
        let f = func_of(funcHandle)?;
        non_null(attrValue, "attrValue")?;
        if attrType != 1 {
            return Err(Error::invalid(format!(
                "attrType {attrType} is not an aclrtFuncAttribute (1 ACL_FUNC_ATTR_KERNEL_TYPE)"
            )));
        }
        out(attrValue, "attrValue", f.kernel().kernel_type as i64)
    })
}

/// Bytes of an `aclrtArgsHandle` given by the user (aclrtKernelArgsInitByUserMem).
const HANDLE_MEM: usize = 64;

/// `aclrtKernelArgsGetHandleMemSize`.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsGetHandleMemSize(
    funcHandle: *mut c_void,
    memSize: *mut usize,
) -> i32 {
    boundary("aclrtKernelArgsGetHandleMemSize", || {
        func_of(funcHandle)?;
        out(memSize, "memSize", HANDLE_MEM)
    })
}

/// `aclrtKernelArgsGetMemSize`: the argument block plus the user's extra bytes, 32-byte aligned.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsGetMemSize(
    funcHandle: *mut c_void,
    userArgsSize: usize,
    actualArgsSize: *mut usize,
) -> i32 {
    boundary("aclrtKernelArgsGetMemSize", || {
        let f = func_of(funcHandle)?;
        let n = f.kernel().args_size.max(userArgsSize).next_multiple_of(32);
        out(actualArgsSize, "actualArgsSize", n)
    })
}

fn new_args(f: Arc<Func>) -> Args {
    let size = f.kernel().args_size;
    Args {
        func: f,
        data: vec![0u8; size],
        next: 0,
        placeholders: Vec::new(),
        finalized: false,
    }
}

/// `aclrtKernelArgsInit`.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsInit(
    funcHandle: *mut c_void,
    argsHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtKernelArgsInit", || {
        let f = func_of(funcHandle)?;
        non_null(argsHandle, "argsHandle")?;
        let h = Box::into_raw(Box::new([0u8; HANDLE_MEM])) as usize;
        with_tables(|t| t.args.insert(h, new_args(f)));
        out(argsHandle, "argsHandle", h as *mut c_void)
    })
}

/// `aclrtKernelArgsInitByUserMem`: the handle is the user's memory (its contents are not used).
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsInitByUserMem(
    funcHandle: *mut c_void,
    argsHandle: *mut c_void,
    userHostMem: *mut c_void,
    actualArgsSize: usize,
) -> i32 {
    boundary("aclrtKernelArgsInitByUserMem", || {
        let f = func_of(funcHandle)?;
        non_null(argsHandle, "argsHandle")?;
        non_null(userHostMem, "userHostMem")?;
        if actualArgsSize < f.kernel().args_size {
            return Err(Error::invalid(format!(
                "actualArgsSize {actualArgsSize} is less than the {} bytes kernel {} takes (aclrtKernelArgsGetMemSize)",
                f.kernel().args_size,
                f.kernel().name
            )));
        }
        with_tables(|t| t.args.insert(argsHandle as usize, new_args(f)));
        Ok(())
    })
}

fn with_args<T>(h: *mut c_void, f: impl FnOnce(&mut Args) -> Result<T>) -> Result<T> {
    non_null(h, "argsHandle")?;
    let mut g = TABLES.lock();
    let t = g.get_or_insert_with(Tables::default);
    let a = t.args.get_mut(&(h as usize)).ok_or_else(|| {
        Error::invalid(format!(
            "argsHandle {h:p} is not an argument list (from aclrtKernelArgsInit / InitByUserMem)"
        ))
    })?;
    f(a)
}

fn param_handle(index: usize) -> *mut c_void {
    (index + 1) as *mut c_void
}

fn param_index(a: &Args, h: *mut c_void) -> Result<usize> {
    let i = (h as usize).wrapping_sub(1);
    if h.is_null() || i >= a.next {
        return Err(Error::invalid(format!(
            "paramHandle {h:p} is not a parameter appended to this argument list"
        )));
    }
    Ok(i)
}

/// `aclrtKernelArgsAppend`: the next parameter's value (paramSize must be its size).
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsAppend(
    argsHandle: *mut c_void,
    param: *mut c_void,
    paramSize: usize,
    paramHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtKernelArgsAppend", || {
        non_null(param, "param")?;
        non_null(paramHandle, "paramHandle")?;
        let h = with_args(argsHandle, |a| {
            if a.finalized {
                return Err(Error::invalid("the argument list is finalized already"));
            }
            let k = a.func.kernel();
            let Some(p) = k.params.get(a.next) else {
                return Err(Error::invalid(format!(
                    "kernel {} takes {} parameters, all appended already ({})",
                    k.name,
                    k.params.len(),
                    k.describe_params()
                )));
            };
            if p.size != paramSize {
                return Err(Error::invalid(format!(
                    "parameter {} ({}) of kernel {} is {} bytes, paramSize is {paramSize}",
                    a.next + 1,
                    p.name,
                    k.name,
                    p.size
                )));
            }
            let (off, n) = (p.offset, p.size);
            // SAFETY: paramSize readable bytes at param (caller contract); data holds the block.
            unsafe {
                std::ptr::copy_nonoverlapping(param as *const u8, a.data[off..].as_mut_ptr(), n)
            };
            a.next += 1;
            Ok(param_handle(a.next - 1))
        })?;
        out(paramHandle, "paramHandle", h)
    })
}

/// `aclrtKernelArgsAppendPlaceHolder`: the next parameter, a pointer to data given later.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsAppendPlaceHolder(
    argsHandle: *mut c_void,
    paramHandle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtKernelArgsAppendPlaceHolder", || {
        non_null(paramHandle, "paramHandle")?;
        let h = with_args(argsHandle, |a| {
            if a.finalized {
                return Err(Error::invalid("the argument list is finalized already"));
            }
            let k = a.func.kernel();
            let Some(p) = k.params.get(a.next) else {
                return Err(Error::invalid(format!(
                    "kernel {} takes {} parameters, all appended already",
                    k.name,
                    k.params.len()
                )));
            };
            if !p.pointer {
                return Err(Error::invalid(format!(
                    "parameter {} ({}) of kernel {} is a {}-byte value, not a pointer: a placeholder stands for a pointer parameter",
                    a.next + 1,
                    p.name,
                    k.name,
                    p.size
                )));
            }
            a.placeholders.push((a.next, Vec::new()));
            a.next += 1;
            Ok(param_handle(a.next - 1))
        })?;
        out(paramHandle, "paramHandle", h)
    })
}

/// `aclrtKernelArgsGetPlaceHolderBuffer`: host memory of `dataSize` bytes, owned by the list.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsGetPlaceHolderBuffer(
    argsHandle: *mut c_void,
    paramHandle: *mut c_void,
    dataSize: usize,
    bufferAddr: *mut *mut c_void,
) -> i32 {
    boundary("aclrtKernelArgsGetPlaceHolderBuffer", || {
        non_null(bufferAddr, "bufferAddr")?;
        if dataSize == 0 {
            return Err(Error::invalid("dataSize is 0"));
        }
        let p = with_args(argsHandle, |a| {
            let i = param_index(a, paramHandle)?;
            let Some(ph) = a.placeholders.iter_mut().find(|(j, _)| *j == i) else {
                return Err(Error::invalid(format!(
                    "paramHandle {paramHandle:p} was appended with aclrtKernelArgsAppend, not as a placeholder"
                )));
            };
            if ph.1.len() < dataSize {
                ph.1.resize(dataSize, 0);
            }
            Ok(ph.1.as_mut_ptr() as *mut c_void)
        })?;
        out(bufferAddr, "bufferAddr", p)
    })
}

/// `aclrtKernelArgsParaUpdate`: a new value for an appended (non-placeholder) parameter.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsParaUpdate(
    argsHandle: *mut c_void,
    paramHandle: *mut c_void,
    param: *mut c_void,
    paramSize: usize,
) -> i32 {
    boundary("aclrtKernelArgsParaUpdate", || {
        non_null(param, "param")?;
        with_args(argsHandle, |a| {
            let i = param_index(a, paramHandle)?;
            if a.placeholders.iter().any(|(j, _)| *j == i) {
                return Err(Error::invalid(
                    "paramHandle is a placeholder: change its data through aclrtKernelArgsGetPlaceHolderBuffer",
                ));
            }
            let p = a.func.kernel().params[i].clone();
            if p.size != paramSize {
                return Err(Error::invalid(format!(
                    "parameter {} ({}) is {} bytes, paramSize is {paramSize}",
                    i + 1,
                    p.name,
                    p.size
                )));
            }
            // SAFETY: paramSize readable bytes at param; the block holds the parameter.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    param as *const u8,
                    a.data[p.offset..].as_mut_ptr(),
                    p.size,
                )
            };
            Ok(())
        })
    })
}

/// `aclrtKernelArgsFinalize`: every parameter must have been appended.
#[no_mangle]
pub unsafe extern "C" fn aclrtKernelArgsFinalize(argsHandle: *mut c_void) -> i32 {
    boundary("aclrtKernelArgsFinalize", || {
        with_args(argsHandle, |a| {
            let k = a.func.kernel();
            if a.next != k.params.len() {
                return Err(Error::invalid(format!(
                    "{} of the {} parameters of kernel {} were appended ({})",
                    a.next,
                    k.params.len(),
                    k.name,
                    k.describe_params()
                )));
            }
            a.finalized = true;
            Ok(())
        })
    })
}

/// Check a launch configuration (`aclrtLaunchKernelCfg`).
fn check_cfg(cfg: *const c_void) -> Result<()> {
    #[repr(C)]
    struct Cfg {
        attrs: *const [u32; 5],
        num: usize,
    }
    if cfg.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null aclrtLaunchKernelCfg from the caller.
    let c = unsafe { &*(cfg as *const Cfg) };
    if c.num > 0 && c.attrs.is_null() {
        return Err(Error::invalid(format!(
            "cfg->attrs is NULL with cfg->numAttrs = {}",
            c.num
        )));
    }
    for i in 0..c.num {
        // SAFETY: numAttrs attributes of 20 bytes (id + 16-byte value union).
        let a = unsafe { *c.attrs.add(i) };
        match a[0] {
            4 if a[1] != 0 => {
                return Err(Error::new(
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    format!(
                        "cfg->attrs[{i}]: ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET = {} is not supported by npu-emu",
                        a[1]
                    ),
                ))
            }
            1..=8 => {}
            id => {
                return Err(Error::invalid(format!(
                    "cfg->attrs[{i}].id = {id} is not an aclrtLaunchKernelAttrId (1..=8)"
                )))
            }
        }
    }
    Ok(())
}

/// Device memory for the data of a launch, freed when the launch is dropped (after it ran).
struct DeviceData {
    addrs: Vec<u64>,
    _bin: Arc<Bin>,
}

impl Drop for DeviceData {
    fn drop(&mut self) {
        if let Ok(rt) = runtime::get() {
            for a in self.addrs.drain(..) {
                let _ = rt.node.free(a);
            }
        }
    }
}

/// Copy `bytes` to new device memory of `physical`; its canonical address.
fn to_device(rt: &runtime::Runtime, physical: u32, bytes: &[u8], what: &str) -> Result<u64> {
    let n = bytes.len().max(1) as u64;
    let info = rt.node.alloc(physical, n.next_multiple_of(32) + 32, n)?;
    let host = rt.node.check(info.addr, n, what)?;
    // SAFETY: bytes.len() bytes of the new allocation's alias.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), host, bytes.len()) };
    Ok(info.addr)
}

/// Launch `f` with the argument block `args` (host memory, complete) on `stream`; `device_data`
/// holds device memory made for the launch.
pub(crate) fn launch_block(
    f: &Arc<Func>,
    block_dim: u32,
    stream: *mut c_void,
    args: &[u8],
    device_data: Vec<u64>,
) -> Result<()> {
    let rt = runtime::get()?;
    let free_on_error = |rt: &runtime::Runtime, v: &[u64]| {
        for a in v {
            let _ = rt.node.free(*a);
        }
    };
    let r = (|| {
        check_block_dim(block_dim)?;
        let entry = rt.stream_entry(stream, "stream")?;
        let k = f.kernel();
        k.check_args_size(args.len(), "the argument block")?;
        let regions = regions_of(&rt, &entry, &k.pointers(args))?;
        Ok((entry, regions))
    })();
    let (entry, regions) = match r {
        Ok(v) => v,
        Err(e) => {
            free_on_error(&rt, &device_data);
            return Err(e);
        }
    };
    let k = f.kernel();
    // SAFETY: the kernel table's block function has the npuemu_block_fn type.
    let func: super::kernel::npuemu_block_fn = unsafe { std::mem::transmute(k.func) };
    let launch = Launch::new(&k.name, block_dim, func, args, regions)
        .with_tiling_key(f.tiling_key)
        .keeping(Box::new(DeviceData {
            addrs: device_data,
            _bin: f.bin.clone(),
        }));
    drop(rt);
    submit(&entry, launch)
}

fn launch_device_args(
    func_handle: *mut c_void,
    block_dim: u32,
    args_data: *const c_void,
    args_size: usize,
    cfg: *const c_void,
    stream: *mut c_void,
) -> Result<()> {
    let f = func_of(func_handle)?;
    check_cfg(cfg)?;
    check_block_dim(block_dim)?;
    let k = f.kernel().clone();
    if k.args_size > 0 {
        non_null(args_data, "argsData")?;
    }
    k.check_args_size(args_size, "argsData")?;
    let rt = runtime::get()?;
    let entry = rt.stream_entry(stream, "stream")?;
    let addr = args_data as u64;
    if k.args_size > 0 {
        if !npu_emu::memory::is_canonical(addr) {
            return Err(Error::new(
                RT_PARAM_INVALID,
                format!(
                    "argsData {args_data:p} is not device memory: aclrtLaunchKernel reads the kernel's arguments from device memory (copy them there with aclrtMemcpy, or use aclrtLaunchKernelWithHostArgs)"
                ),
            ));
        }
        rt.node.check(addr, args_size as u64, "argsData")?;
    }
    // SAFETY: the kernel table's block function has the npuemu_block_fn type.
    let func: super::kernel::npuemu_block_fn = unsafe { std::mem::transmute(k.func) };
    let physical = entry.physical;
    let task_entry = entry.clone();
    let bin = f.bin.clone();
    let key = f.tiling_key;
    drop(rt);
    // The argument block is read when the launch runs, after the copies queued before it.
    let what = format!("{}<<<{block_dim}>>>", k.name);
    submit_task(&entry, what, move || {
        let rt = runtime::get()?;
        let size = k.args_size;
        let src = rt
            .node
            .check(addr, size as u64, "argsData")
            .map_err(|e| Error::new(RT_PARAM_INVALID, format!("kernel {}: {}", k.name, e.msg)))?;
        let mut bytes = vec![0u8; size];
        // SAFETY: size bytes of device memory (checked above) into a buffer as large.
        unsafe { std::ptr::copy_nonoverlapping(src, bytes.as_mut_ptr(), size) };
        let regions = regions_of(&rt, &task_entry, &k.pointers(&bytes)).map_err(|e| {
            Error::new(
                e.code,
                format!(
                    "kernel {}: the argument block at 0x{addr:x}: {}",
                    k.name, e.msg
                ),
            )
        })?;
        drop(rt);
        let launch = Launch::new(&k.name, block_dim, func, &bytes, regions)
            .with_tiling_key(key)
            .keeping(Box::new(bin.clone()));
        execute(&launch, physical)
    })
}

/// `aclrtLaunchKernel`: arguments in device memory.
#[no_mangle]
pub unsafe extern "C" fn aclrtLaunchKernel(
    funcHandle: *mut c_void,
    blockDim: u32,
    argsData: *const c_void,
    argsSize: usize,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtLaunchKernel", || {
        launch_device_args(
            funcHandle,
            blockDim,
            argsData,
            argsSize,
            std::ptr::null(),
            stream,
        )
    })
}

/// `aclrtLaunchKernelV2`: arguments in device memory, with a configuration.
#[no_mangle]
pub unsafe extern "C" fn aclrtLaunchKernelV2(
    funcHandle: *mut c_void,
    blockDim: u32,
    argsData: *const c_void,
    argsSize: usize,
    cfg: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtLaunchKernelV2", || {
        launch_device_args(funcHandle, blockDim, argsData, argsSize, cfg, stream)
    })
}

/// `aclrtLaunchKernelWithConfig`: arguments from an `aclrtArgsHandle`.
#[no_mangle]
pub unsafe extern "C" fn aclrtLaunchKernelWithConfig(
    funcHandle: *mut c_void,
    blockDim: u32,
    stream: *mut c_void,
    cfg: *mut c_void,
    argsHandle: *mut c_void,
    reserve: *mut c_void,
) -> i32 {
    boundary("aclrtLaunchKernelWithConfig", || {
        let _ = reserve;
        let f = func_of(funcHandle)?;
        check_cfg(cfg)?;
        let (mut data, placeholders, func_of_args) = with_args(argsHandle, |a| {
            if !a.finalized {
                return Err(Error::invalid(
                    "the argument list is not finalized (aclrtKernelArgsFinalize)",
                ));
            }
            Ok((a.data.clone(), a.placeholders.clone(), a.func.clone()))
        })?;
        if func_of_args.kernel().name != f.kernel().name || !Arc::ptr_eq(&func_of_args.bin, &f.bin)
        {
            return Err(Error::invalid(format!(
                "argsHandle was built for kernel {}, funcHandle is kernel {}",
                func_of_args.kernel().name,
                f.kernel().name
            )));
        }
        let rt = runtime::get()?;
        let entry = rt.stream_entry(stream, "stream")?;
        let mut made = Vec::new();
        for (i, bytes) in &placeholders {
            let p = &f.kernel().params[*i];
            if bytes.is_empty() {
                for a in &made {
                    let _ = rt.node.free(*a);
                }
                return Err(Error::invalid(format!(
                    "placeholder parameter {} ({}) has no data (aclrtKernelArgsGetPlaceHolderBuffer)",
                    i + 1,
                    p.name
                )));
            }
            let addr = to_device(
                &rt,
                entry.physical,
                bytes,
                &format!("placeholder {}", p.name),
            )?;
            made.push(addr);
            data[p.offset..p.offset + 8].copy_from_slice(&addr.to_le_bytes());
        }
        drop(rt);
        launch_block(&f, blockDim, stream, &data, made)
    })
}

/// `aclrtLaunchKernelWithHostArgs`: the argument block in host memory, with placeholders.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclrtLaunchKernelWithHostArgs(
    funcHandle: *mut c_void,
    blockDim: u32,
    stream: *mut c_void,
    cfg: *mut c_void,
    hostArgs: *mut c_void,
    argsSize: usize,
    placeHolderArray: *mut c_void,
    placeHolderNum: usize,
) -> i32 {
    boundary("aclrtLaunchKernelWithHostArgs", || {
        let f = func_of(funcHandle)?;
        check_cfg(cfg)?;
        if argsSize > 0 {
            non_null(hostArgs, "hostArgs")?;
        }
        if placeHolderNum > 0 {
            non_null(placeHolderArray, "placeHolderArray")?;
        }
        f.kernel().check_args_size(argsSize, "hostArgs")?;
        let mut data = if argsSize > 0 {
            // SAFETY: argsSize readable bytes at hostArgs (caller contract).
            unsafe { std::slice::from_raw_parts(hostArgs as *const u8, argsSize) }.to_vec()
        } else {
            Vec::new()
        };
        let mut made = Vec::new();
        if placeHolderNum > 0 {
            let rt = runtime::get()?;
            let entry = rt.stream_entry(stream, "stream")?;
            let mut ph = Vec::with_capacity(placeHolderNum);
            for i in 0..placeHolderNum {
                // SAFETY: placeHolderNum entries of two u32 (aclrtPlaceHolderInfo).
                let e = unsafe { *(placeHolderArray as *const [u32; 2]).add(i) };
                let (ao, dof) = (e[0] as usize, e[1] as usize);
                if ao + 8 > argsSize || dof >= argsSize.max(1) {
                    return Err(Error::invalid(format!(
                        "placeHolderArray[{i}] = {{addrOffset {ao}, dataOffset {dof}}} lies outside the {argsSize}-byte hostArgs"
                    )));
                }
                ph.push((ao, dof));
            }
            let base = to_device(&rt, entry.physical, &data, "hostArgs")?;
            made.push(base);
            for (ao, dof) in ph {
                data[ao..ao + 8].copy_from_slice(&(base + dof as u64).to_le_bytes());
            }
            // the device copy gets the patched pointers too
            let host = rt.node.check(base, data.len() as u64, "hostArgs")?;
            // SAFETY: data.len() bytes of the copy made above.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), host, data.len()) };
        }
        launch_block(&f, blockDim, stream, &data, made)
    })
}

// ---------------------------------------------------------------------------------------
// The older runtime path of CANN's libruntime (torch_npu imports it): rtDevBinaryRegister
// registers a kernel binary given as bytes, rtFunctionRegister binds a host-side stub address
// to one of its kernels, rtKernelLaunch launches the kernel of a stub with the argument block
// in host memory (copied at the call), in stream order like aclrtLaunchKernelWithHostArgs.
// The exported symbols live in `rt_compat.rs`; they call these.

/// `rtDevBinary_t`: magic, version, the binary's bytes.
#[repr(C)]
struct RtDevBinary {
    magic: u32,
    version: u32,
    data: *const c_void,
    length: u64,
}

/// The runtime's own code for a bad argument (`ACL_ERROR_RT_PARAM_INVALID`, 107000) where the
/// shared checks say `ACL_ERROR_INVALID_PARAM`: the rt functions return runtime codes.
fn rt_codes(r: Result<()>) -> Result<()> {
    r.map_err(|mut e| {
        if e.code == npu_emu::codes::ACL_ERROR_INVALID_PARAM {
            e.code = RT_PARAM_INVALID;
        }
        e
    })
}

/// `rtDevBinaryRegister(const rtDevBinary_t *bin, void **hdl)`.
pub(crate) unsafe fn rt_dev_binary_register(
    bin: *const c_void,
    hdl: *mut *mut c_void,
) -> Result<()> {
    // SAFETY: forwarded caller contract.
    rt_codes(unsafe { dev_binary_register(bin, hdl) })
}

unsafe fn dev_binary_register(bin: *const c_void, hdl: *mut *mut c_void) -> Result<()> {
    non_null(bin, "bin")?;
    non_null(hdl, "hdl")?;
    // SAFETY: a non-null rtDevBinary_t from the caller.
    let b = unsafe { &*(bin as *const RtDevBinary) };
    let _ = (b.magic, b.version);
    non_null(b.data, "bin->data")?;
    if b.length == 0 {
        return Err(Error::invalid(
            "bin->length is 0: the binary holds no bytes",
        ));
    }
    // SAFETY: bin->length readable bytes at bin->data (caller contract).
    let bytes = unsafe { std::slice::from_raw_parts(b.data as *const u8, b.length as usize) };
    let _rt = runtime::get()?;
    let h = register_bin(KernelBinary::load_data(bytes)?);
    out(hdl, "hdl", h)
}

/// `rtDevBinaryUnRegister(void *hdl)`: the binary and the stubs bound to its kernels go.
pub(crate) fn rt_dev_binary_unregister(hdl: *mut c_void) -> Result<()> {
    rt_codes(dev_binary_unregister(hdl))
}

fn dev_binary_unregister(hdl: *mut c_void) -> Result<()> {
    let b = bin_of(hdl)?;
    with_tables(|t| {
        t.bins.remove(&(hdl as usize));
        t.funcs.retain(|_, f| !Arc::ptr_eq(&f.bin, &b));
        t.args.retain(|_, a| !Arc::ptr_eq(&a.func.bin, &b));
    });
    if let Some(m) = STUBS.lock().as_mut() {
        m.retain(|_, f| !Arc::ptr_eq(&f.bin, &b));
    }
    Ok(())
}

/// `rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName, const void
/// *kernelInfoExt, uint32_t funcMode)`: `stubFunc` (any unique host address) now stands for the
/// kernel named by `kernelInfoExt` (the device function's name), or by `stubName` when that
/// names no kernel of the binary.
pub(crate) unsafe fn rt_function_register(
    bin_handle: *mut c_void,
    stub_func: *const c_void,
    stub_name: *const c_char,
    kernel_info_ext: *const c_void,
    func_mode: u32,
) -> Result<()> {
    // SAFETY: forwarded caller contract.
    rt_codes(unsafe {
        function_register(bin_handle, stub_func, stub_name, kernel_info_ext, func_mode)
    })
}

unsafe fn function_register(
    bin_handle: *mut c_void,
    stub_func: *const c_void,
    stub_name: *const c_char,
    kernel_info_ext: *const c_void,
    func_mode: u32,
) -> Result<()> {
    let _ = func_mode;
    let b = bin_of(bin_handle)?;
    non_null(stub_func, "stubFunc")?;
    let text = |p: *const c_char| -> Option<String> {
        // SAFETY: a NUL-terminated name from the caller when non-null.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    let dev = text(kernel_info_ext as *const c_char);
    let stub = text(stub_name);
    let index = [dev.as_deref(), stub.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|n| b.bin.kernels.iter().position(|k| k.name == n));
    let Some(index) = index else {
        let asked = dev.or(stub).unwrap_or_else(|| "(none)".into());
        return Err(b.bin.kernel(&asked).err().unwrap_or_else(|| {
            Error::invalid("stubName and kernelInfoExt are both NULL: name the kernel to register")
        }));
    };
    let f = Arc::new(Func {
        bin: b,
        index,
        tiling_key: 0,
    });
    STUBS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(stub_func as usize, f);
    Ok(())
}

/// `rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
/// rtSmDesc_t *smDesc, rtStream_t stream)`: the argument block in host memory.
pub(crate) unsafe fn rt_kernel_launch(
    stub_func: *const c_void,
    block_dim: u32,
    args: *mut c_void,
    args_size: u32,
    sm_desc: *mut c_void,
    stream: *mut c_void,
) -> Result<()> {
    // SAFETY: forwarded caller contract.
    rt_codes(unsafe { kernel_launch(stub_func, block_dim, args, args_size, sm_desc, stream) })
}

unsafe fn kernel_launch(
    stub_func: *const c_void,
    block_dim: u32,
    args: *mut c_void,
    args_size: u32,
    sm_desc: *mut c_void,
    stream: *mut c_void,
) -> Result<()> {
    let _ = sm_desc;
    non_null(stub_func, "stubFunc")?;
    let f = STUBS
        .lock()
        .as_ref()
        .and_then(|m| m.get(&(stub_func as usize)).cloned())
        .ok_or_else(|| {
            Error::invalid(format!(
                "stubFunc {stub_func:p} is not registered (rtFunctionRegister of a binary from rtDevBinaryRegister)"
            ))
        })?;
    let size = args_size as usize;
    if size > 0 {
        non_null(args, "args")?;
    }
    f.kernel().check_args_size(size, "args")?;
    let bytes = if size > 0 {
        // SAFETY: `size` readable bytes at args (caller contract).
        unsafe { std::slice::from_raw_parts(args as *const u8, size) }.to_vec()
    } else {
        Vec::new()
    };
    launch_block(&f, block_dim, stream, &bytes, Vec::new())
}
