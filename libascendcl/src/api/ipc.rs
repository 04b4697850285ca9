//! Sharing between processes (`acl_rt.h`): IPC memory by key with its pid allow-list, IPC
//! events, and the shareable handles of the virtual-memory API. The shared state lives in
//! the node ([`npu_emu::ipc`]), so any process of the user on the node (the same job or
//! another) can import what another exported.
//!
//! IPC memory: `aclrtIpcMemGetExportKey` publishes `[devPtr, devPtr+size)` (inside one
//! allocation of this process) under a new key; with flag `ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT`
//! only the processes named by `aclrtIpcMemSetImportPid` (pids as `aclrtDeviceGetBareTgid`
//! gives them) may import it, `…_DISABLE_PID_VALIDATION` lets any process import.
//! `aclrtIpcMemImportByKey` returns the same device address in the importing process (device
//! addresses are global on the emulated node) and lets the process use the range; a process
//! not on the allow-list gets `ACL_ERROR_RT_NO_PERMISSION`. `aclrtIpcMemClose` withdraws the
//! key (exporter) or ends the import (importer). The exporter must keep the memory
//! allocated while importers use it, as on hardware; an import checks that the exporting
//! process still runs and still owns the memory.
//!
//! IPC events: an event made with `ACL_EVENT_IPC` lives in a node slot;
//! `aclrtIpcGetEventHandle` gives a 64-byte handle naming the slot, and
//! `aclrtIpcOpenEventHandle` in another process makes a local event on the same slot:
//! records, stream waits, synchronizes and status queries on either side see each other.
//!
//! Shareable VMM handles: `aclrtMemExportToShareableHandle(V2)` publishes a physical
//! allocation (`aclrtMallocPhysical`) under a 64-bit shareable handle (or a 128-byte fabric
//! handle); `aclrtMemImportFromShareableHandle(V2)` makes a local physical handle on the
//! same pages, which `aclrtMapMem` maps into the importer's own reserved range.

use crate::ffi::{boundary, non_null, out};
use crate::mem::VmmHandle;
use crate::runtime::{self, EventEntry, Runtime, StreamEntry};
use npu_emu::codes::*;
use npu_emu::ipc::{Kind, SlotRef};
use npu_emu::memory::device_addr;
use npu_emu::{Error, Result};
use std::ffi::{c_char, c_void, CStr};
use std::time::Duration;

/// `ACL_EVENT_IPC`.
pub const ACL_EVENT_IPC: u32 = 0x40;
/// Bytes of a key buffer the key needs (with its NUL); CANN's samples pass 65.
pub const KEY_LEN: usize = 65;

/// This process's pid as importers are named in allow-lists (`aclrtDeviceGetBareTgid`).
pub fn my_pid() -> i32 {
    std::process::id() as i32
}

fn key_arg(p: *const c_char) -> Result<String> {
    non_null(p, "key")?;
    // SAFETY: a NUL-terminated key from the caller, checked non-NULL.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Write `key` and its NUL into the caller's buffer of `len` bytes.
fn write_key(key: &str, buf: *mut c_char, len: usize) -> Result<()> {
    non_null(buf, "key")?;
    if len < key.len() + 1 {
        return Err(Error::invalid(format!(
            "len = {len} is too small for the key ({} bytes with its NUL; pass a buffer of {KEY_LEN} bytes)",
            key.len() + 1
        )));
    }
    // SAFETY: the caller's buffer holds len >= key.len()+1 bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(key.as_ptr(), buf as *mut u8, key.len());
        *buf.add(key.len()) = 0;
    }
    Ok(())
}

/// The pids of a C array (`num` > 0, `pid` not NULL).
fn pids(pid: *const i32, num: usize) -> Result<Vec<i32>> {
    non_null(pid, "pid")?;
    if num == 0 {
        return Err(Error::invalid("num = 0: give at least one pid"));
    }
    // SAFETY: the caller passes num readable pids.
    Ok(unsafe { std::slice::from_raw_parts(pid, num) }.to_vec())
}

/// `aclrtServerPid` (24 bytes).
#[repr(C)]
pub struct ServerPid {
    pub sdid: u32,
    pub pid: *const i32,
    pub num: usize,
}

fn server_pids(p: *const ServerPid, num: usize) -> Result<Vec<(u32, i32)>> {
    non_null(p, "serverPids")?;
    if num == 0 {
        return Err(Error::invalid("num = 0: give at least one server"));
    }
    let mut out = Vec::new();
    // SAFETY: the caller passes num readable aclrtServerPid entries.
    for (i, s) in unsafe { std::slice::from_raw_parts(p, num) }
        .iter()
        .enumerate()
    {
        let v = pids(s.pid, s.num)
            .map_err(|e| Error::invalid(format!("serverPids[{i}]: {}", e.msg)))?;
        out.extend(v.into_iter().map(|p| (s.sdid, p)));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// IPC memory.

/// `aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len,
/// uint64_t flags)`
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcMemGetExportKey(
    devPtr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> i32 {
    boundary("aclrtIpcMemGetExportKey", || {
        non_null(devPtr, "devPtr")?;
        non_null(key, "key")?;
        if flags > 1 {
            return Err(Error::invalid(format!(
                "flags = {flags:#x} is invalid: expected ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT (0) or ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION (1)"
            )));
        }
        if size == 0 {
            return Err(Error::invalid("size = 0: export at least one byte"));
        }
        let rt = runtime::get()?;
        let addr = devPtr as u64;
        let a = rt.node.lookup(addr).ok_or_else(|| {
            Error::invalid(format!(
                "devPtr = {addr:#x} is not device memory allocated by this process (aclrtMalloc)"
            ))
        })?;
        if rt.reg.lock().mem_imports.values().any(|&x| x == a.addr) {
            return Err(Error::invalid(format!(
                "devPtr = {addr:#x} is IPC memory this process imported: only its owner can export it"
            )));
        }
        if addr + size as u64 > a.addr + a.size {
            return Err(Error::invalid(format!(
                "devPtr = {addr:#x} with size {size} runs past the end of its allocation {:#x} ({} bytes)",
                a.addr, a.size
            )));
        }
        let ipc = rt.ipc()?;
        let k = ipc.new_key("mem");
        write_key(&k, key, len)?;
        let e = ipc.export("mem", a.device, addr, size as u64, flags == 0);
        ipc.publish(&k, &e)?;
        rt.reg.lock().mem_exports.insert(k, (addr, size as u64));
        Ok(())
    })
}

fn own_export(rt: &Runtime, key: &str) -> Result<()> {
    if rt.reg.lock().mem_exports.contains_key(key) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "key {key} was not exported by this process (aclrtIpcMemGetExportKey)"
        )))
    }
}

/// `aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num)`
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcMemSetImportPid(
    key: *const c_char,
    pid: *mut i32,
    num: usize,
) -> i32 {
    boundary("aclrtIpcMemSetImportPid", || {
        let k = key_arg(key)?;
        let p = pids(pid, num)?;
        let rt = runtime::get()?;
        own_export(&rt, &k)?;
        rt.ipc()?.update(&k, |e| {
            e.pids.extend(p);
            Ok(())
        })
    })
}

/// `aclError aclrtIpcMemImportPidInterServer(const char *key, aclrtServerPid *serverPids,
/// size_t num)`: the emulated node is one server; the pids are allowed whatever the
/// super-pod device id.
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcMemImportPidInterServer(
    key: *const c_char,
    serverPids: *mut ServerPid,
    num: usize,
) -> i32 {
    boundary("aclrtIpcMemImportPidInterServer", || {
        let k = key_arg(key)?;
        let p = server_pids(serverPids, num)?;
        let rt = runtime::get()?;
        own_export(&rt, &k)?;
        rt.ipc()?.update(&k, |e| {
            e.server_pids.extend(p);
            Ok(())
        })
    })
}

/// `aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type, uint64_t attr)`:
/// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` with `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO` (0) or
/// `…_HCCS` (1); recorded with the key (the emulated devices share one memory, so both
/// links reach it).
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcMemSetAttr(key: *const c_char, type_: i32, attr: u64) -> i32 {
    boundary("aclrtIpcMemSetAttr", || {
        let k = key_arg(key)?;
        if type_ != 0 {
            return Err(Error::invalid(format!(
                "type = {type_} is not an aclrtIpcMemAttrType (expected ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0)"
            )));
        }
        if attr > 1 {
            return Err(Error::invalid(format!(
                "attr = {attr} is invalid: expected ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO (0) or ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS (1)"
            )));
        }
        let rt = runtime::get()?;
        own_export(&rt, &k)?;
        rt.ipc()?.update(&k, |e| {
            e.attrs.retain(|&(t, _)| t != type_);
            e.attrs.push((type_, attr));
            Ok(())
        })
    })
}

/// `aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags)`
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcMemImportByKey(
    devPtr: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> i32 {
    boundary("aclrtIpcMemImportByKey", || {
        non_null(devPtr, "devPtr")?;
        let k = key_arg(key)?;
        if flags > 1 {
            return Err(Error::invalid(format!(
                "flags = {flags:#x} is invalid: expected ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT (0) or ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS (1)"
            )));
        }
        let rt = runtime::get()?;
        let ipc = rt.ipc()?;
        let e = ipc.lookup(&k)?;
        if e.kind != "mem" {
            return Err(Error::invalid(format!("key {k} is not an IPC memory key")));
        }
        e.allows(my_pid(), &k)?;
        let off = e.addr - device_addr(e.device, 0);
        if rt.node.memory_owner(e.device, off) != Some(e.owner_pid) {
            return Err(Error::invalid(format!(
                "the memory of key {k} ({:#x}, {} bytes on device {}) is no longer held by its exporter, process {}: it was freed",
                e.addr, e.size, e.device, e.owner_pid
            )));
        }
        let (cur, cur_phys) = rt.current_device()?;
        if flags == 1 && cur_phys != e.device {
            // ENABLE_PEER_ACCESS: as if aclrtDeviceEnablePeerAccess had been called.
            if let Some(l) = (0..rt.cfg.visible_count() as i32)
                .find(|&l| rt.physical_device(l).ok() == Some(e.device))
            {
                rt.reg.lock().peers.insert((cur, l));
            }
        }
        if e.owner_pid != std::process::id() {
            rt.node.import_range(e.device, e.addr, e.size)?;
        }
        rt.reg.lock().mem_imports.insert(k, e.addr);
        out(devPtr, "devPtr", e.addr as *mut c_void)
    })
}

/// `aclError aclrtIpcMemClose(const char *key)`: the exporter withdraws the key (later
/// imports fail); an importer ends its import.
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcMemClose(key: *const c_char) -> i32 {
    boundary("aclrtIpcMemClose", || {
        let k = key_arg(key)?;
        let rt = runtime::get()?;
        let imported = rt.reg.lock().mem_imports.remove(&k);
        if let Some(addr) = imported {
            if !rt.reg.lock().mem_exports.contains_key(&k) {
                rt.node.drop_import(addr);
            }
            return Ok(());
        }
        if rt.reg.lock().mem_exports.remove(&k).is_some() {
            return rt.ipc()?.withdraw(&k);
        }
        Err(Error::invalid(format!(
            "key {k} is neither exported nor imported by this process"
        )))
    })
}

/// `aclError aclrtDeviceGetBareTgid(int32_t *pid)`: the pid other processes name this one
/// by in allow-lists (the host pid; the emulator runs in one pid namespace per node).
#[no_mangle]
pub unsafe extern "C" fn aclrtDeviceGetBareTgid(pid: *mut i32) -> i32 {
    boundary("aclrtDeviceGetBareTgid", || out(pid, "pid", my_pid()))
}

// ---------------------------------------------------------------------------------------
// IPC events.

/// `aclrtIpcEventHandle` (64 bytes, passed by value).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IpcEventHandle {
    pub reserved: [u8; 64],
}

const EVENT_MAGIC: &[u8; 8] = b"NPUEIPC1";

/// `aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle)`: the
/// event must have been created with `ACL_EVENT_IPC`.
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcGetEventHandle(
    event: *mut c_void,
    handle: *mut IpcEventHandle,
) -> i32 {
    boundary("aclrtIpcGetEventHandle", || {
        non_null(handle, "handle")?;
        let rt = runtime::get()?;
        let e = rt.event_entry(event, "event")?;
        let slot = e.ipc.ok_or_else(|| {
            Error::invalid(format!(
                "event {} was not created with ACL_EVENT_IPC (0x40): only IPC events have a handle",
                e.id
            ))
        })?;
        let ipc = rt.ipc()?;
        let s = ipc.slot(slot.index);
        let mut h = IpcEventHandle { reserved: [0; 64] };
        h.reserved[..8].copy_from_slice(EVENT_MAGIC);
        h.reserved[8..12].copy_from_slice(&slot.index.to_le_bytes());
        h.reserved[12..16].copy_from_slice(&slot.gen.to_le_bytes());
        let owner = s.owner_pid.load(std::sync::atomic::Ordering::SeqCst);
        h.reserved[16..20].copy_from_slice(&owner.to_le_bytes());
        out(handle, "handle", h)
    })
}

/// `aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event)`: an
/// event of the current device on the same node slot; destroy it with `aclrtDestroyEvent`.
#[no_mangle]
pub unsafe extern "C" fn aclrtIpcOpenEventHandle(
    handle: IpcEventHandle,
    event: *mut *mut c_void,
) -> i32 {
    boundary("aclrtIpcOpenEventHandle", || {
        non_null(event, "event")?;
        if &handle.reserved[..8] != EVENT_MAGIC {
            return Err(Error::invalid(
                "handle is not an IPC event handle made by aclrtIpcGetEventHandle",
            ));
        }
        let slot = SlotRef {
            index: u32::from_le_bytes(handle.reserved[8..12].try_into().unwrap()),
            gen: u32::from_le_bytes(handle.reserved[12..16].try_into().unwrap()),
        };
        let rt = runtime::get()?;
        let (logical, _) = rt.current_device()?;
        rt.ipc()?.attach(slot, Kind::Event)?;
        let h = rt.insert_event(ACL_EVENT_IPC, true, logical, Some(slot))?;
        out(event, "event", h as *mut c_void)
    })
}

/// Record of an IPC event on `s`.
pub fn event_record(rt: &Runtime, ev: &EventEntry, slot: SlotRef, s: &StreamEntry) -> Result<()> {
    let ipc = rt.ipc()?;
    ipc.check(slot, Kind::Event)?;
    let n = ipc.event_issue(slot);
    s.stream
        .enqueue(Box::new(move || {
            ipc.event_complete(slot, n);
            Ok(())
        }))
        .map_err(|e| Error::new(e.code, format!("event {}: {}", ev.id, e.msg)))
}

/// A stream wait on an IPC event: for the latest record issued (by any process) now.
pub fn event_wait(
    rt: &Runtime,
    slot: SlotRef,
    s: &StreamEntry,
    timeout: Option<Duration>,
) -> Result<()> {
    let ipc = rt.ipc()?;
    ipc.check(slot, Kind::Event)?;
    let target = ipc.event_issued(slot);
    if target == 0 {
        return Ok(());
    }
    s.stream.enqueue(Box::new(move || {
        if ipc.wait(slot, Kind::Event, timeout, |_| ipc.event_done(slot, target))? {
            Ok(())
        } else {
            Err(Error::new(
                ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                format!(
                    "a stream wait on an IPC event timed out after {} ms (record {target} never finished)",
                    timeout.map_or(0, |d| d.as_millis())
                ),
            ))
        }
    }))
}

/// Block the host until the latest record of an IPC event finished.
pub fn event_sync(rt: &Runtime, slot: SlotRef, timeout: Option<Duration>) -> Result<()> {
    let ipc = rt.ipc()?;
    let target = ipc.event_issued(slot);
    if ipc.wait(slot, Kind::Event, timeout, |_| ipc.event_done(slot, target))? {
        Ok(())
    } else {
        Err(Error::new(
            ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
            format!(
                "the IPC event did not complete within {} ms",
                timeout.map_or(0, |d| d.as_millis())
            ),
        ))
    }
}

/// Status of an IPC event: (ever recorded, every record issued so far finished).
pub fn event_status(rt: &Runtime, slot: SlotRef) -> Result<(bool, bool)> {
    let ipc = rt.ipc()?;
    ipc.check(slot, Kind::Event)?;
    let n = ipc.event_issued(slot);
    Ok((n > 0, ipc.event_done(slot, n)))
}

// ---------------------------------------------------------------------------------------
// Shareable handles of the virtual-memory API.

/// `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT` / `_FABRIC`.
const SHARE_DEFAULT: i32 = 1;
const SHARE_FABRIC: i32 = 2;
const FABRIC_MAGIC: &[u8; 8] = b"NPUEVMM1";

fn vmm_key(shareable: u64) -> String {
    format!("vmm{shareable:x}")
}

fn local_handle(rt: &Runtime, handle: *mut c_void) -> Result<VmmHandle> {
    non_null(handle, "handle")?;
    Ok(*rt.mem.handles.lock().get(handle as u64, "handle")?)
}

fn export_vmm(handle: *mut c_void, flags: u64) -> Result<u64> {
    if flags > 1 {
        return Err(Error::invalid(format!(
            "flags = {flags:#x} is invalid: expected ACL_RT_VMM_EXPORT_FLAG_DEFAULT (0) or ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION (1)"
        )));
    }
    let rt = runtime::get()?;
    let h = local_handle(&rt, handle)?;
    let info = rt
        .node
        .physical(h.id)
        .ok_or_else(|| Error::invalid("the physical handle vanished"))?;
    let ipc = rt.ipc()?;
    // The shareable handle: this pid and a counter, unique on the node.
    let serial =
        crate::globals::SHAREABLE_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let shareable = ((my_pid() as u64) << 32) | serial as u64;
    let mut e = ipc.export("vmm", info.device, info.phys.offset, info.size, flags == 0);
    e.attrs.push((0, h.mem_attr as u64));
    ipc.publish(&vmm_key(shareable), &e)?;
    Ok(shareable)
}

/// `aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType
/// handleType, uint64_t flags, uint64_t *shareableHandle)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemExportToShareableHandle(
    handle: *mut c_void,
    handleType: i32,
    flags: u64,
    shareableHandle: *mut u64,
) -> i32 {
    boundary("aclrtMemExportToShareableHandle", || {
        non_null(shareableHandle, "shareableHandle")?;
        if handleType != 0 {
            return Err(Error::invalid(format!(
                "handleType = {handleType} is invalid: expected ACL_MEM_HANDLE_TYPE_NONE (0)"
            )));
        }
        let s = export_vmm(handle, flags)?;
        out(shareableHandle, "shareableHandle", s)
    })
}

/// The 64-bit shareable handle a C shareable-handle argument of `shareType` holds.
fn read_shareable(p: *const c_void, shareType: i32) -> Result<u64> {
    non_null(p, "shareableHandle")?;
    match shareType {
        // SAFETY: a uint64_t of the caller.
        SHARE_DEFAULT => Ok(unsafe { (p as *const u64).read_unaligned() }),
        SHARE_FABRIC => {
            // SAFETY: an aclrtMemFabricHandle (128 bytes) of the caller.
            let b = unsafe { std::slice::from_raw_parts(p as *const u8, 128) };
            if &b[..8] != FABRIC_MAGIC {
                return Err(Error::invalid(
                    "shareableHandle is not a fabric handle made by aclrtMemExportToShareableHandleV2",
                ));
            }
            Ok(u64::from_le_bytes(b[8..16].try_into().unwrap()))
        }
        t => Err(Error::invalid(format!(
            "shareType = {t} is invalid: expected ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT (1) or ACL_MEM_SHARE_HANDLE_TYPE_FABRIC (2)"
        ))),
    }
}

/// `aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
/// aclrtMemSharedHandleType shareType, void *shareableHandle)`: `shareableHandle` is a
/// `uint64_t` (DEFAULT) or an `aclrtMemFabricHandle` (FABRIC).
#[no_mangle]
pub unsafe extern "C" fn aclrtMemExportToShareableHandleV2(
    handle: *mut c_void,
    flags: u64,
    shareType: i32,
    shareableHandle: *mut c_void,
) -> i32 {
    boundary("aclrtMemExportToShareableHandleV2", || {
        non_null(shareableHandle, "shareableHandle")?;
        if shareType != SHARE_DEFAULT && shareType != SHARE_FABRIC {
            return Err(Error::invalid(format!(
                "shareType = {shareType} is invalid: expected ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT (1) or ACL_MEM_SHARE_HANDLE_TYPE_FABRIC (2)"
            )));
        }
        let s = export_vmm(handle, flags)?;
        if shareType == SHARE_DEFAULT {
            return out(shareableHandle as *mut u64, "shareableHandle", s);
        }
        let mut b = [0u8; 128];
        b[..8].copy_from_slice(FABRIC_MAGIC);
        b[8..16].copy_from_slice(&s.to_le_bytes());
        out(shareableHandle as *mut [u8; 128], "shareableHandle", b)
    })
}

fn set_pids(shareable: u64, p: Vec<i32>) -> Result<()> {
    let rt = runtime::get()?;
    rt.ipc()?.update(&vmm_key(shareable), |e| {
        e.pids.extend(p);
        Ok(())
    })
}

/// `aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t
/// pidNum)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandle(
    shareableHandle: u64,
    pid: *mut i32,
    pidNum: usize,
) -> i32 {
    boundary("aclrtMemSetPidToShareableHandle", || {
        set_pids(shareableHandle, pids(pid, pidNum)?)
    })
}

/// `aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle, aclrtMemSharedHandleType
/// shareType, int32_t *pid, size_t pidNum)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandleV2(
    shareableHandle: *mut c_void,
    shareType: i32,
    pid: *mut i32,
    pidNum: usize,
) -> i32 {
    boundary("aclrtMemSetPidToShareableHandleV2", || {
        let s = read_shareable(shareableHandle, shareType)?;
        set_pids(s, pids(pid, pidNum)?)
    })
}

fn import_vmm(shareable: u64, logical: Option<i32>, handle: *mut *mut c_void) -> Result<()> {
    non_null(handle, "handle")?;
    let rt = runtime::get()?;
    if let Some(l) = logical {
        rt.physical_device(l)?;
    }
    let key = vmm_key(shareable);
    let e = rt.ipc()?.lookup(&key).map_err(|_| {
        Error::invalid(format!(
            "shareableHandle = {shareable:#x} is not exported on this node (never exported, or its exporter exited)"
        ))
    })?;
    e.allows(my_pid(), &format!("shareable handle {shareable:#x}"))?;
    if rt.node.memory_owner(e.device, e.addr) != Some(e.owner_pid) {
        return Err(Error::invalid(format!(
            "the physical memory of shareable handle {shareable:#x} was freed by its exporter, process {}",
            e.owner_pid
        )));
    }
    let info = rt.node.import_physical(
        e.device,
        e.size,
        npu_emu::rtapi::RtPhys {
            device: e.device,
            _pad: 0,
            offset: e.addr,
        },
    )?;
    let mem_attr = e.attrs.iter().find(|a| a.0 == 0).map_or(1, |a| a.1 as i32);
    let logical = logical.unwrap_or_else(|| {
        (0..rt.cfg.visible_count() as i32)
            .find(|&l| rt.physical_device(l).ok() == Some(e.device))
            .unwrap_or(0)
    });
    let h = rt.mem.handles.lock().insert(VmmHandle {
        id: info.id,
        device: e.device,
        logical,
        size: info.size,
        mem_attr,
    });
    out(handle, "handle", h as *mut c_void)
}

/// `aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
/// aclrtDrvMemHandle *handle)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandle(
    shareableHandle: u64,
    deviceId: i32,
    handle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtMemImportFromShareableHandle", || {
        import_vmm(shareableHandle, Some(deviceId), handle)
    })
}

/// `aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
/// aclrtMemSharedHandleType shareType, uint64_t flags, aclrtDrvMemHandle *handle)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandleV2(
    shareableHandle: *mut c_void,
    shareType: i32,
    flags: u64,
    handle: *mut *mut c_void,
) -> i32 {
    let _ = flags;
    boundary("aclrtMemImportFromShareableHandleV2", || {
        let s = read_shareable(shareableHandle, shareType)?;
        import_vmm(s, None, handle)
    })
}

/// `aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle)`: the
/// physical handle mapped at `virPtr`.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemRetainAllocationHandle(
    virPtr: *mut c_void,
    handle: *mut *mut c_void,
) -> i32 {
    boundary("aclrtMemRetainAllocationHandle", || {
        non_null(virPtr, "virPtr")?;
        non_null(handle, "handle")?;
        let rt = runtime::get()?;
        let (_, h, _, _) = rt.node.mapping_at(virPtr as u64).ok_or_else(|| {
            Error::invalid(format!(
                "virPtr = {virPtr:p} is not inside a mapped range of this process (aclrtMapMem)"
            ))
        })?;
        // The handle of the physical allocation behind the mapping (the machine's id `h`).
        let found = rt
            .mem
            .handles
            .lock()
            .iter()
            .find(|(_, x)| x.id == h)
            .map(|(k, _)| k);
        let k = found.ok_or_else(|| {
            Error::invalid(format!(
                "virPtr = {virPtr:p} is mapped to a physical allocation this process holds no handle of"
            ))
        })?;
        out(handle, "handle", k as *mut c_void)
    })
}

/// `aclrtMemLocation` (8 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemLocation {
    pub id: u32,
    pub type_: i32,
}

/// `aclrtMemAccessDesc` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemAccessDesc {
    pub flags: i32,
    pub location: MemLocation,
    pub rsv: [u8; 12],
}

/// `aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t
/// count)`: record the access flags (`NONE`, `READ`, `READWRITE`) of locations on the mapped
/// range at `virPtr`; `aclrtMemGetAccess` reports them.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemSetAccess(
    virPtr: *mut c_void,
    size: usize,
    desc: *mut MemAccessDesc,
    count: usize,
) -> i32 {
    boundary("aclrtMemSetAccess", || {
        non_null(virPtr, "virPtr")?;
        non_null(desc, "desc")?;
        if count == 0 {
            return Err(Error::invalid(
                "count = 0: give at least one access descriptor",
            ));
        }
        let rt = runtime::get()?;
        let (start, _, _, msize) = rt.node.mapping_at(virPtr as u64).ok_or_else(|| {
            Error::invalid(format!(
                "virPtr = {virPtr:p} is not inside a mapped range of this process (aclrtMapMem)"
            ))
        })?;
        if virPtr as u64 + size as u64 > start + msize || size == 0 {
            return Err(Error::invalid(format!(
                "virPtr = {virPtr:p} with size {size} is not inside the mapping at {start:#x} ({msize} bytes)"
            )));
        }
        // SAFETY: the caller passes count descriptors.
        let d = unsafe { std::slice::from_raw_parts(desc, count) };
        let mut v = Vec::new();
        for (i, x) in d.iter().enumerate() {
            if ![0, 1, 3].contains(&x.flags) {
                return Err(Error::invalid(format!(
                    "desc[{i}].flags = {} is not an aclrtMemAccessFlags (0 NONE, 1 READ, 3 READWRITE)",
                    x.flags
                )));
            }
            if x.location.type_ == 1 {
                rt.physical_device(x.location.id as i32)?;
            } else if x.location.type_ != 0 {
                return Err(Error::invalid(format!(
                    "desc[{i}].location.type = {} is invalid: expected HOST (0) or DEVICE (1)",
                    x.location.type_
                )));
            }
            v.push(((x.location.type_, x.location.id), x.flags as u64));
        }
        let mut reg = rt.reg.lock();
        let cur = reg.vmm_access.entry(start).or_default();
        for (loc, f) in v {
            cur.retain(|(l, _)| *l != loc);
            cur.push((loc, f));
        }
        Ok(())
    })
}

/// `aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)`:
/// `ACL_RT_MEM_ACCESS_FLAGS_READWRITE` for the mapping's own device unless set otherwise,
/// `NONE` for locations never given access.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemGetAccess(
    virPtr: *mut c_void,
    location: *mut MemLocation,
    flag: *mut u64,
) -> i32 {
    boundary("aclrtMemGetAccess", || {
        non_null(virPtr, "virPtr")?;
        non_null(location, "location")?;
        non_null(flag, "flag")?;
        let rt = runtime::get()?;
        let (start, h, _, _) = rt.node.mapping_at(virPtr as u64).ok_or_else(|| {
            Error::invalid(format!(
                "virPtr = {virPtr:p} is not inside a mapped range of this process (aclrtMapMem)"
            ))
        })?;
        // SAFETY: non-null aclrtMemLocation of the caller.
        let loc = unsafe { location.read_unaligned() };
        let set = rt.reg.lock().vmm_access.get(&start).and_then(|v| {
            v.iter()
                .find(|(l, _)| *l == (loc.type_, loc.id))
                .map(|x| x.1)
        });
        let own = rt
            .mem
            .handles
            .lock()
            .values()
            .find(|x| x.id == h)
            .map(|x| x.logical);
        let f = match set {
            Some(f) => f,
            None if loc.type_ == 1 && own == Some(loc.id as i32) => 3,
            None => 0,
        };
        out(flag, "flag", f)
    })
}
