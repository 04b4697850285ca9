//! Notifies and count notifies (`acl_rt.h`), local and shared between processes.
//!
//! A notify is a flag in a node slot ([`npu_emu::ipc`]): `aclrtRecordNotify` sets it when
//! its stream reaches the record; `aclrtWaitAndResetNotify` makes its stream wait until the
//! flag is set, then clears it (each set releases one wait); `aclrtNotifyBatchReset` clears
//! flags at once. Because the slot is in the node, a notify exported with
//! `aclrtNotifyGetExportKey` and opened elsewhere with `aclrtNotifyImportByKey` links
//! streams of different processes. Export with `ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT` needs the
//! importer on the allow-list (`aclrtNotifySetImportPid`); `…_DISABLE_PID_VALIDATION` (0x2)
//! lets any process import. Timeouts are in seconds, 0 = wait forever (as CANN 8.5
//! documents); a wait that times out fails its stream with `ACL_ERROR_RT_TASK_TIMEOUT`.
//!
//! A count notify holds a 32-bit count: records set, add, or, and into it
//! (`aclrtCntNotifyRecordMode`); waits block their stream until the count is less, equal,
//! bigger, bigger-or-equal, or equal under a bit mask (`aclrtCntNotifyWaitMode`), and may
//! clear it afterwards.
//!
//! Records and waits are stream operations a capture holds and replays.

use crate::ffi::{boundary, non_null, out};
use crate::runtime::{
    self, bad_handle, new_handle, NotifyEntry, Runtime, StreamEntry, CNT_NOTIFY, NOTIFY,
};
use npu_emu::codes::*;
use npu_emu::ipc::{Ipc, Kind as SlotKind, SlotRef};
use npu_emu::stream::Op;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::HandleKind;
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use std::time::Duration;

fn entry(
    rt: &Runtime,
    h: *mut c_void,
    kind: &'static HandleKind,
    arg: &str,
) -> Result<NotifyEntry> {
    non_null(h, arg)?;
    let reg = rt.reg.lock();
    match reg.notifies.get(&(h as u64)) {
        Some(n) if kind.tags(h as u64) => Ok(n.clone()),
        _ => Err(bad_handle(kind, arg, h as u64)),
    }
}

fn create(out_h: *mut *mut c_void, flag: u64, kind: &'static HandleKind) -> Result<()> {
    non_null(
        out_h,
        if std::ptr::eq(kind, &NOTIFY) {
            "notify"
        } else {
            "cntNotify"
        },
    )?;
    if flag > 1 {
        return Err(Error::invalid(format!(
            "flag = {flag:#x} is invalid: expected ACL_NOTIFY_DEFAULT (0) or ACL_NOTIFY_DEVICE_USE_ONLY (1)"
        )));
    }
    let rt = runtime::get()?;
    let (logical, physical) = rt.current_device()?;
    let sk = if std::ptr::eq(kind, &NOTIFY) {
        SlotKind::Notify
    } else {
        SlotKind::CntNotify
    };
    let slot = rt.ipc()?.claim(sk, physical)?;
    let (h, _) = new_handle(kind);
    rt.reg.lock().notifies.insert(
        h,
        NotifyEntry {
            logical,
            slot,
            imported: false,
            keys: Vec::new(),
        },
    );
    out(out_h, "notify", h as *mut c_void)
}

fn destroy(h: *mut c_void, kind: &'static HandleKind, arg: &str) -> Result<()> {
    let rt = runtime::get()?;
    let n = entry(&rt, h, kind, arg)?;
    rt.reg.lock().notifies.remove(&(h as u64));
    let ipc = rt.ipc()?;
    for k in &n.keys {
        let _ = ipc.withdraw(k);
    }
    ipc.release(n.slot);
    Ok(())
}

/// `aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateNotify(notify: *mut *mut c_void, flag: u64) -> i32 {
    boundary("aclrtCreateNotify", || create(notify, flag, &NOTIFY))
}

/// `aclError aclrtDestroyNotify(aclrtNotify notify)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyNotify(notify: *mut c_void) -> i32 {
    boundary("aclrtDestroyNotify", || destroy(notify, &NOTIFY, "notify"))
}

/// `aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId)`: the node slot, the
/// same number in every process that opened the notify.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetNotifyId(notify: *mut c_void, notifyId: *mut u32) -> i32 {
    boundary("aclrtGetNotifyId", || {
        non_null(notifyId, "notifyId")?;
        let rt = runtime::get()?;
        let n = entry(&rt, notify, &NOTIFY, "notify")?;
        out(notifyId, "notifyId", n.slot.index)
    })
}

fn live(ipc: &Ipc, slot: SlotRef, kind: SlotKind) -> Result<()> {
    ipc.check(slot, kind)
}

fn stream_op(rt: &Runtime, s: &StreamEntry, op: Op) -> Result<()> {
    let _ = rt;
    s.stream.enqueue_op(op)
}

/// `aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtRecordNotify(notify: *mut c_void, stream: *mut c_void) -> i32 {
    boundary("aclrtRecordNotify", || {
        let rt = runtime::get()?;
        let n = entry(&rt, notify, &NOTIFY, "notify")?;
        let s = rt.stream_entry(stream, "stream")?;
        let ipc = rt.ipc()?;
        live(&ipc, n.slot, SlotKind::Notify)?;
        let slot = n.slot;
        stream_op(
            &rt,
            &s,
            Op::run(
                "notify_record",
                format!("record of notify {}", slot.index),
                move || {
                    ipc.check(slot, SlotKind::Notify)?;
                    ipc.notify_set(slot);
                    Ok(())
                },
            ),
        )
    })
}

/// Seconds (0 = forever) as a wait bound.
fn seconds(t: u32) -> Option<Duration> {
    (t != 0).then(|| Duration::from_secs(t as u64))
}

/// `aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t
/// timeout)`: `timeout` in seconds, 0 = forever.
#[no_mangle]
pub unsafe extern "C" fn aclrtWaitAndResetNotify(
    notify: *mut c_void,
    stream: *mut c_void,
    timeout: u32,
) -> i32 {
    boundary("aclrtWaitAndResetNotify", || {
        let rt = runtime::get()?;
        let n = entry(&rt, notify, &NOTIFY, "notify")?;
        let s = rt.stream_entry(stream, "stream")?;
        let ipc = rt.ipc()?;
        live(&ipc, n.slot, SlotKind::Notify)?;
        let slot = n.slot;
        let t = seconds(timeout);
        stream_op(
            &rt,
            &s,
            Op::run(
                "notify_wait",
                format!("wait and reset of notify {}", slot.index),
                move || {
                    if ipc.notify_wait_reset(slot, t)? {
                        Ok(())
                    } else {
                        Err(Error::new(
                            ACL_ERROR_RT_TASK_TIMEOUT,
                            format!(
                            "a wait on notify {} timed out after {timeout} s (nothing recorded it)",
                            slot.index
                        ),
                        ))
                    }
                },
            ),
        )
    })
}

/// `aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num)`: clear the notifies
/// now.
#[no_mangle]
pub unsafe extern "C" fn aclrtNotifyBatchReset(notifies: *mut *mut c_void, num: usize) -> i32 {
    boundary("aclrtNotifyBatchReset", || {
        non_null(notifies, "notifies")?;
        if num == 0 {
            return Err(Error::invalid("num = 0: give at least one notify"));
        }
        let rt = runtime::get()?;
        // SAFETY: the caller passes num notify handles.
        let hs = unsafe { std::slice::from_raw_parts(notifies, num) };
        let mut slots = Vec::new();
        for (i, &h) in hs.iter().enumerate() {
            slots.push(entry(&rt, h, &NOTIFY, &format!("notifies[{i}]"))?.slot);
        }
        let ipc = rt.ipc()?;
        for s in slots {
            ipc.notify_reset(s);
        }
        Ok(())
    })
}

/// `aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t
/// flags)`
#[no_mangle]
pub unsafe extern "C" fn aclrtNotifyGetExportKey(
    notify: *mut c_void,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> i32 {
    boundary("aclrtNotifyGetExportKey", || {
        non_null(key, "key")?;
        if flags != 0 && flags != 2 {
            return Err(Error::invalid(format!(
                "flags = {flags:#x} is invalid: expected ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT (0) or ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION (0x2)"
            )));
        }
        let rt = runtime::get()?;
        let n = entry(&rt, notify, &NOTIFY, "notify")?;
        if n.imported {
            return Err(Error::invalid(
                "notify was imported from another process: only its owner can export it",
            ));
        }
        let ipc = rt.ipc()?;
        let k = ipc.new_key("ntf");
        if len < k.len() + 1 {
            return Err(Error::invalid(format!(
                "len = {len} is too small for the key ({} bytes with its NUL; pass a buffer of 65 bytes)",
                k.len() + 1
            )));
        }
        let device = ipc
            .slot(n.slot.index)
            .device
            .load(std::sync::atomic::Ordering::SeqCst);
        let mut e = ipc.export("notify", device, 0, 0, flags == 0);
        e.slot = Some(n.slot);
        ipc.publish(&k, &e)?;
        // SAFETY: len >= key length + 1, checked.
        unsafe {
            std::ptr::copy_nonoverlapping(k.as_ptr(), key as *mut u8, k.len());
            *key.add(k.len()) = 0;
        }
        if let Some(x) = rt.reg.lock().notifies.get_mut(&(notify as u64)) {
            x.keys.push(k);
        }
        Ok(())
    })
}

fn notify_keys(rt: &Runtime, notify: *mut c_void) -> Result<Vec<String>> {
    let n = entry(rt, notify, &NOTIFY, "notify")?;
    if n.keys.is_empty() {
        return Err(Error::invalid(
            "notify was not exported (call aclrtNotifyGetExportKey first)",
        ));
    }
    Ok(n.keys)
}

/// `aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num)`
#[no_mangle]
pub unsafe extern "C" fn aclrtNotifySetImportPid(
    notify: *mut c_void,
    pid: *mut i32,
    num: usize,
) -> i32 {
    boundary("aclrtNotifySetImportPid", || {
        non_null(pid, "pid")?;
        if num == 0 {
            return Err(Error::invalid("num = 0: give at least one pid"));
        }
        // SAFETY: the caller passes num pids.
        let p = unsafe { std::slice::from_raw_parts(pid, num) }.to_vec();
        let rt = runtime::get()?;
        let ipc = rt.ipc()?;
        for k in notify_keys(&rt, notify)? {
            ipc.update(&k, |e| {
                e.pids.extend(&p);
                Ok(())
            })?;
        }
        Ok(())
    })
}

/// `aclError aclrtNotifySetImportPidInterServer(aclrtNotify notify, aclrtServerPid
/// *serverPids, size_t num)`: one emulated server; the pids are allowed whatever the
/// super-pod device id.
#[no_mangle]
pub unsafe extern "C" fn aclrtNotifySetImportPidInterServer(
    notify: *mut c_void,
    serverPids: *mut crate::api::ipc::ServerPid,
    num: usize,
) -> i32 {
    boundary("aclrtNotifySetImportPidInterServer", || {
        non_null(serverPids, "serverPids")?;
        if num == 0 {
            return Err(Error::invalid("num = 0: give at least one server"));
        }
        let mut all = Vec::new();
        // SAFETY: the caller passes num aclrtServerPid entries, each with num pids.
        for s in unsafe { std::slice::from_raw_parts(serverPids, num) } {
            non_null(s.pid, "serverPids[].pid")?;
            // SAFETY: s.pid is non-NULL and holds s.num pids (the caller's contract).
            let p = unsafe { std::slice::from_raw_parts(s.pid, s.num) };
            all.extend(p.iter().map(|&x| (s.sdid, x)));
        }
        let rt = runtime::get()?;
        let ipc = rt.ipc()?;
        for k in notify_keys(&rt, notify)? {
            ipc.update(&k, |e| {
                e.server_pids.extend(&all);
                Ok(())
            })?;
        }
        Ok(())
    })
}

/// `aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags)`:
/// a notify of this process on the exporter's slot; destroy it with `aclrtDestroyNotify`.
#[no_mangle]
pub unsafe extern "C" fn aclrtNotifyImportByKey(
    notify: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> i32 {
    boundary("aclrtNotifyImportByKey", || {
        non_null(notify, "notify")?;
        non_null(key, "key")?;
        if flags != 0 && flags != 2 {
            return Err(Error::invalid(format!(
                "flags = {flags:#x} is invalid: expected ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT (0) or ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS (0x2)"
            )));
        }
        // SAFETY: NUL-terminated key, non-NULL.
        let k = unsafe { std::ffi::CStr::from_ptr(key) }
            .to_string_lossy()
            .into_owned();
        let rt = runtime::get()?;
        let (logical, _) = rt.current_device()?;
        let ipc = rt.ipc()?;
        let e = ipc.lookup(&k)?;
        let slot = match (e.kind.as_str(), e.slot) {
            ("notify", Some(s)) => s,
            _ => return Err(Error::invalid(format!("key {k} is not a notify key"))),
        };
        e.allows(crate::api::ipc::my_pid(), &k)?;
        ipc.attach(slot, SlotKind::Notify)?;
        let (h, _) = new_handle(&NOTIFY);
        rt.reg.lock().notifies.insert(
            h,
            NotifyEntry {
                logical,
                slot,
                imported: true,
                keys: Vec::new(),
            },
        );
        out(notify, "notify", h as *mut c_void)
    })
}

// ---------------------------------------------------------------------------------------
// Count notifies.

/// `aclrtCntNotifyRecordInfo` (8 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CntRecordInfo {
    pub mode: i32,
    pub value: u32,
}

/// `aclrtCntNotifyWaitInfo` (16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CntWaitInfo {
    pub mode: i32,
    pub value: u32,
    pub timeout: u32,
    pub is_clear: u8,
    pub rsv: [u8; 3],
}

/// `aclError aclrtCntNotifyCreate(aclrtCntNotify *cntNotify, uint64_t flag)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCntNotifyCreate(cntNotify: *mut *mut c_void, flag: u64) -> i32 {
    boundary("aclrtCntNotifyCreate", || {
        create(cntNotify, flag, &CNT_NOTIFY)
    })
}

/// `aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCntNotifyDestroy(cntNotify: *mut c_void) -> i32 {
    boundary("aclrtCntNotifyDestroy", || {
        destroy(cntNotify, &CNT_NOTIFY, "cntNotify")
    })
}

/// `aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t *notifyId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCntNotifyGetId(cntNotify: *mut c_void, notifyId: *mut u32) -> i32 {
    boundary("aclrtCntNotifyGetId", || {
        non_null(notifyId, "notifyId")?;
        let rt = runtime::get()?;
        let n = entry(&rt, cntNotify, &CNT_NOTIFY, "cntNotify")?;
        out(notifyId, "notifyId", n.slot.index)
    })
}

/// `aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream,
/// aclrtCntNotifyRecordInfo *info)`: SET_VALUE (0), ADD (1), BIT_OR (2), BIT_AND (4).
#[no_mangle]
pub unsafe extern "C" fn aclrtCntNotifyRecord(
    cntNotify: *mut c_void,
    stream: *mut c_void,
    info: *mut CntRecordInfo,
) -> i32 {
    boundary("aclrtCntNotifyRecord", || {
        non_null(info, "info")?;
        // SAFETY: the caller's aclrtCntNotifyRecordInfo, non-NULL.
        let i = unsafe { info.read_unaligned() };
        let f: fn(u32, u32) -> u32 = match i.mode {
            0 => |_, v| v,
            1 => |c, v| c.wrapping_add(v),
            2 => |c, v| c | v,
            4 => |c, v| c & v,
            m => {
                return Err(Error::invalid(format!(
                    "info->mode = {m} is not an aclrtCntNotifyRecordMode (0 SET_VALUE, 1 ADD, 2 BIT_OR, 4 BIT_AND)"
                )))
            }
        };
        let rt = runtime::get()?;
        let n = entry(&rt, cntNotify, &CNT_NOTIFY, "cntNotify")?;
        let s = rt.stream_entry(stream, "stream")?;
        let ipc = rt.ipc()?;
        live(&ipc, n.slot, SlotKind::CntNotify)?;
        let slot = n.slot;
        let v = i.value;
        stream_op(
            &rt,
            &s,
            Op::run(
                "cnt_notify_record",
                format!(
                    "record of count notify {} (mode {}, value {v})",
                    slot.index, i.mode
                ),
                move || {
                    ipc.check(slot, SlotKind::CntNotify)?;
                    ipc.count_update(slot, |c| f(c, v));
                    Ok(())
                },
            ),
        )
    })
}

/// `aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream)`: the count
/// becomes 0 when the stream reaches the reset.
#[no_mangle]
pub unsafe extern "C" fn aclrtCntNotifyReset(cntNotify: *mut c_void, stream: *mut c_void) -> i32 {
    boundary("aclrtCntNotifyReset", || {
        let rt = runtime::get()?;
        let n = entry(&rt, cntNotify, &CNT_NOTIFY, "cntNotify")?;
        let s = rt.stream_entry(stream, "stream")?;
        let ipc = rt.ipc()?;
        let slot = n.slot;
        stream_op(
            &rt,
            &s,
            Op::run(
                "cnt_notify_reset",
                format!("reset of count notify {}", slot.index),
                move || {
                    ipc.count_update(slot, |_| 0);
                    Ok(())
                },
            ),
        )
    })
}

/// `aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify, aclrtStream stream,
/// aclrtCntNotifyWaitInfo *info)`: the stream waits until the count is LESS (0), EQUAL (1),
/// BIGGER (2), BIGGER_OR_EQUAL (3) than `value`, or EQUAL_WITH_BITMASK (4) (`count & value ==
/// value`); `timeout` in seconds (0 = forever); `isClear` clears the count afterwards.
#[no_mangle]
pub unsafe extern "C" fn aclrtCntNotifyWaitWithTimeout(
    cntNotify: *mut c_void,
    stream: *mut c_void,
    info: *mut CntWaitInfo,
) -> i32 {
    boundary("aclrtCntNotifyWaitWithTimeout", || {
        non_null(info, "info")?;
        // SAFETY: the caller's aclrtCntNotifyWaitInfo, non-NULL.
        let i = unsafe { info.read_unaligned() };
        let cond: fn(u32, u32) -> bool = match i.mode {
            0 => |c, v| c < v,
            1 => |c, v| c == v,
            2 => |c, v| c > v,
            3 => |c, v| c >= v,
            4 => |c, v| c & v == v,
            m => {
                return Err(Error::invalid(format!(
                    "info->mode = {m} is not an aclrtCntNotifyWaitMode (0 LESS, 1 EQUAL, 2 BIGGER, 3 BIGGER_OR_EQUAL, 4 EQUAL_WITH_BITMASK)"
                )))
            }
        };
        if i.is_clear > 1 {
            return Err(Error::invalid(format!(
                "info->isClear = {} is invalid: expected 0 or 1",
                i.is_clear
            )));
        }
        let rt = runtime::get()?;
        let n = entry(&rt, cntNotify, &CNT_NOTIFY, "cntNotify")?;
        let s = rt.stream_entry(stream, "stream")?;
        let ipc: Arc<Ipc> = rt.ipc()?;
        let slot = n.slot;
        let (v, clear, t) = (i.value, i.is_clear == 1, seconds(i.timeout));
        let timeout = i.timeout;
        stream_op(
            &rt,
            &s,
            Op::run(
                "cnt_notify_wait",
                format!(
                    "wait on count notify {} (mode {}, value {v})",
                    slot.index, i.mode
                ),
                move || {
                    let ok = ipc.wait(slot, SlotKind::CntNotify, t, |s| {
                        cond(s.word.value.load(std::sync::atomic::Ordering::SeqCst), v)
                    })?;
                    if !ok {
                        return Err(Error::new(
                            ACL_ERROR_RT_TASK_TIMEOUT,
                            format!(
                                "a wait on count notify {} timed out after {timeout} s (count {})",
                                slot.index,
                                ipc.count(slot)
                            ),
                        ));
                    }
                    if clear {
                        ipc.count_update(slot, |_| 0);
                    }
                    Ok(())
                },
            ),
        )
    })
}
