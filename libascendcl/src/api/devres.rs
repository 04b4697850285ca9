//! Device ids, topology and capabilities, memory types, and resource limits:
//! `aclrtGetLogicDevIdByUserDevId`, `aclrtGetUserDevIdByLogicDevId`,
//! `aclrtGetLogicDevIdByPhyDevId`, `aclrtGetPhyDevIdByLogicDevId`, `aclrtGetDevicesTopo`,
//! `aclrtGetDeviceCapability`, `aclrtCheckArchCompatibility`, `aclrtCheckMemType`,
//! `aclrtSet/Get/ResetDeviceResLimit`, `aclrtSet/Get/ResetStreamResLimit`,
//! `aclrtUse/UnuseStreamResInCurrentThread`, `aclrtGetResInCurrentThread`,
//! `aclrtGetStreamAvailableNum`, `aclrtGetEventAvailNum`.
//!
//! Ids (CANN's three kinds): the *user* id is what `aclrtSetDevice` takes (an index into
//! `ASCEND_RT_VISIBLE_DEVICES`), the *logical* id is the device of the node it names, and
//! the *physical* id equals the logical one (npu-emu is never in a container). An id out of
//! range is `ACL_ERROR_RT_INVALID_DEVICEID` (107001).
//!
//! Topology: the devices of an emulated node are one server: two devices of an Ascend910B
//! node are linked by HCCS (`ACL_RT_DEVS_TOPOLOGY_HCCS`), of an Ascend910_93 node by an HCCS
//! switch (`ACL_RT_DEVS_TOPOLOGY_HCCS_SW`); a device with itself is HCCS (CANN's rule).
//!
//! Capabilities: `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV` and
//! `ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV` are both `ACL_DEV_FEATURE_NOT_SUPPORT` (npu-emu
//! has no task-update engine and no memory queues); they need a current context on the
//! device (107002); other types are 107000.
//!
//! `aclrtCheckArchCompatibility`: a SoC name of the same architecture as the emulated one
//! is compatible (the Ascend910B and Ascend910_93 families are one architecture, C220); an
//! unknown name is 107000.
//!
//! `aclrtCheckMemType`: `ACL_RT_MEM_TYPE_DEV` is memory from `aclrtMalloc*` (and imported
//! IPC memory), `ACL_RT_MEM_TYPE_RSVD` addresses inside an `aclrtReserveMemAddress` range;
//! npu-emu has no DVPP memory. `checkResult` is 1 when every address is of a type in
//! `memType`. Needs a current context; `reserve` must be 0, `size` > 0, `memType` a
//! combination of DEV, DVPP, RSVD (else 107000).
//!
//! Resource limits (CANN 8.5): cube and vector core limits per device (until the device's
//! last reset), per stream, and per thread (the stream it "uses"). A limit above the
//! device's cores is 107000; a device that is not set is `ACL_ERROR_RT_DEV_SETUP_ERROR`
//! (507033). `aclrtGetResInCurrentThread` gives the thread's stream's limit when it has one,
//! else the current device's. Ascend C kernels read them through
//! `aclrtGetResInCurrentThread` to size their launches; npu-emu itself does not cap the
//! cores a launch uses.
//!
//! Availability: a device takes at most 32768 streams and 65536 events (CANN's
//! `maxAllocStreamNum` / `stubEventCount` for Ascend910B); the available numbers are those
//! minus what the process has on the current device.

use crate::ffi::{boundary, non_null, out};
use crate::globals::{DEVICE_LIMITS, STREAM_LIMITS, THREAD_STREAM};
use crate::runtime::{self, Runtime};
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use std::ffi::{c_void, CStr};
use std::os::raw::c_char;

/// `ACL_ERROR_RT_DEV_SETUP_ERROR`.
const ACL_ERROR_RT_DEV_SETUP_ERROR: i32 = 507033;
const TOPOLOGY_HCCS: u64 = 0x01;
const TOPOLOGY_HCCS_SW: u64 = 0x40;
const MEM_TYPE_DEV: u32 = 0x2;
const MEM_TYPE_DVPP: u32 = 0x8;
const MEM_TYPE_RSVD: u32 = 0x10;
const MAX_STREAMS: u32 = 32 * 1024;
const MAX_EVENTS: u32 = 65536;

fn topology_kind(rt: &Runtime) -> u64 {
    if rt.cfg.soc_name.starts_with("Ascend910_93") {
        TOPOLOGY_HCCS_SW
    } else {
        TOPOLOGY_HCCS
    }
}

/// The node device a user device id names.
fn logic_of_user(rt: &Runtime, user: i32) -> Result<u32> {
    rt.physical_device(user)
}

/// A logical (node) device id, checked.
fn check_logic(rt: &Runtime, logic: i32, arg: &str) -> Result<u32> {
    if logic < 0 || logic as u32 >= rt.node.devices() {
        return Err(Error::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!(
                "{arg} = {logic} is out of range: the node has devices 0..={}",
                rt.node.devices().saturating_sub(1)
            ),
        ));
    }
    Ok(logic as u32)
}

/// `aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetLogicDevIdByUserDevId(
    userDevid: i32,
    logicDevId: *mut i32,
) -> i32 {
    boundary("aclrtGetLogicDevIdByUserDevId", || {
        non_null(logicDevId, "logicDevId")?;
        let rt = runtime::get()?;
        let l = logic_of_user(&rt, userDevid)?;
        out(logicDevId, "logicDevId", l as i32)
    })
}

/// `aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetUserDevIdByLogicDevId(
    logicDevId: i32,
    userDevid: *mut i32,
) -> i32 {
    boundary("aclrtGetUserDevIdByLogicDevId", || {
        non_null(userDevid, "userDevid")?;
        let rt = runtime::get()?;
        let l = check_logic(&rt, logicDevId, "logicDevId")?;
        let user = (0..rt.cfg.visible_count() as i32)
            .find(|&u| rt.cfg.physical(u) == Some(l))
            .ok_or_else(|| {
                Error::new(
                    ACL_ERROR_RT_INVALID_DEVICEID,
                    format!("logicDevId = {logicDevId} is not visible to this process (ASCEND_RT_VISIBLE_DEVICES)"),
                )
            })?;
        out(userDevid, "userDevid", user)
    })
}

/// `aclError aclrtGetLogicDevIdByPhyDevId(int32_t phyDevId, int32_t *const logicDevId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetLogicDevIdByPhyDevId(phyDevId: i32, logicDevId: *mut i32) -> i32 {
    boundary("aclrtGetLogicDevIdByPhyDevId", || {
        non_null(logicDevId, "logicDevId")?;
        let rt = runtime::get()?;
        let p = check_logic(&rt, phyDevId, "phyDevId")?;
        out(logicDevId, "logicDevId", p as i32)
    })
}

/// `aclError aclrtGetPhyDevIdByLogicDevId(int32_t logicDevId, int32_t *const phyDevId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetPhyDevIdByLogicDevId(logicDevId: i32, phyDevId: *mut i32) -> i32 {
    boundary("aclrtGetPhyDevIdByLogicDevId", || {
        non_null(phyDevId, "phyDevId")?;
        let rt = runtime::get()?;
        let l = check_logic(&rt, logicDevId, "logicDevId")?;
        out(phyDevId, "phyDevId", l as i32)
    })
}

/// `aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId, uint64_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDevicesTopo(
    deviceId: u32,
    otherDeviceId: u32,
    value: *mut u64,
) -> i32 {
    boundary("aclrtGetDevicesTopo", || {
        non_null(value, "value")?;
        let rt = runtime::get()?;
        let a = logic_of_user(&rt, deviceId as i32)?;
        let b = logic_of_user(&rt, otherDeviceId as i32)?;
        let v = if a == b {
            TOPOLOGY_HCCS
        } else {
            topology_kind(&rt)
        };
        out(value, "value", v)
    })
}

/// The current context must be on user device `dev` (CANN's `CheckCurCtxValid`).
fn require_context_on(rt: &Runtime, dev: i32) -> Result<()> {
    rt.physical_device(dev)?;
    let c = rt.current_context()?;
    if c.logical != dev {
        return Err(Error::new(
            ACL_ERROR_RT_CONTEXT_NULL,
            format!(
                "the current context is on device {}, not on deviceId {dev}: set device {dev} first",
                c.logical
            ),
        ));
    }
    Ok(())
}

/// `aclError aclrtGetDeviceCapability(int32_t deviceId, aclrtDevFeatureType devFeatureType, int32_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceCapability(
    deviceId: i32,
    devFeatureType: i32,
    value: *mut i32,
) -> i32 {
    boundary("aclrtGetDeviceCapability", || {
        non_null(value, "value")?;
        let rt = runtime::get()?;
        match devFeatureType {
            // ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV
            1 | 21 => {
                require_context_on(&rt, deviceId)?;
                out(value, "value", 0)
            }
            t => Err(Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("devFeatureType = {t} is invalid: expected ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV (1) or ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV (21)"),
            )),
        }
    })
}

/// Architecture family of a SoC name (CANN's platform table), `None` if unknown.
fn arch_of(soc: &str) -> Option<&'static str> {
    const C220: [&str; 6] = [
        "Ascend910B1",
        "Ascend910B2",
        "Ascend910B2C",
        "Ascend910B3",
        "Ascend910B4",
        "Ascend910B4-1",
    ];
    if C220.contains(&soc)
        || (soc.starts_with("Ascend910_93") && soc.len() == "Ascend910_9391".len())
    {
        return Some("C220");
    }
    match soc {
        "Ascend910A" | "Ascend910ProA" | "Ascend910B" | "Ascend910ProB" | "Ascend910PremiumA" => {
            Some("C100")
        }
        "Ascend310" => Some("M100"),
        "Ascend310P1" | "Ascend310P3" | "Ascend310P5" | "Ascend310P7" => Some("M200"),
        "Ascend310B1" | "Ascend310B2" | "Ascend310B3" | "Ascend310B4" => Some("M300"),
        _ => None,
    }
}

/// `aclError aclrtCheckArchCompatibility(const char *socVersion, int32_t *canCompatible)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCheckArchCompatibility(
    socVersion: *const c_char,
    canCompatible: *mut i32,
) -> i32 {
    boundary("aclrtCheckArchCompatibility", || {
        non_null(socVersion, "socVersion")?;
        non_null(canCompatible, "canCompatible")?;
        // SAFETY: non-null, NUL-terminated per the ACL contract.
        let soc = unsafe { CStr::from_ptr(socVersion) }
            .to_string_lossy()
            .into_owned();
        let rt = runtime::get()?;
        let bad = |why: &str| {
            Error::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("socVersion {soc:?} is invalid: {why}"),
            )
        };
        if soc.is_empty() {
            return Err(bad("it is empty"));
        }
        let want = arch_of(&soc).ok_or_else(|| bad("not a known Ascend SoC"))?;
        let have = arch_of(&rt.cfg.soc_name).unwrap_or("C220");
        out(canCompatible, "canCompatible", (want == have) as i32)
    })
}

/// `aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult, uint32_t reserve)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCheckMemType(
    addrList: *mut *mut c_void,
    size: u32,
    memType: u32,
    checkResult: *mut u32,
    reserve: u32,
) -> i32 {
    boundary("aclrtCheckMemType", || {
        non_null(addrList, "addrList")?;
        non_null(checkResult, "checkResult")?;
        out(checkResult, "checkResult", 0)?;
        let bad = |m: String| Error::new(ACL_ERROR_RT_PARAM_INVALID, m);
        if reserve != 0 {
            return Err(bad(format!("reserve = {reserve} must be 0")));
        }
        if size == 0 {
            return Err(bad("size = 0: expected at least one address".into()));
        }
        if memType & !(MEM_TYPE_DEV | MEM_TYPE_DVPP | MEM_TYPE_RSVD) != 0 {
            return Err(bad(format!(
                "memType = {memType:#x} is invalid: expected ACL_RT_MEM_TYPE_DEV (0x2), ACL_RT_MEM_TYPE_DVPP (0x8), ACL_RT_MEM_TYPE_RSVD (0x10) or a combination"
            )));
        }
        let rt = runtime::get()?;
        rt.current_context()?;
        // SAFETY: the caller passes `size` addresses.
        let addrs = unsafe { std::slice::from_raw_parts(addrList as *const u64, size as usize) };
        let all = addrs.iter().all(|&a| {
            let ty = if rt.node.reservation_at(a).is_some() {
                MEM_TYPE_RSVD
            } else if rt.node.lookup(a).is_some() {
                MEM_TYPE_DEV
            } else {
                0
            };
            ty != 0 && ty & memType != 0
        });
        out(checkResult, "checkResult", all as u32)
    })
}

/// Resource limits: [cube, vector] (`None` = no limit set).
pub(crate) type Limits = [Option<u32>; 2];

fn res_type(t: i32) -> Result<usize> {
    match t {
        0 | 1 => Ok(t as usize),
        _ => Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("type = {t} is invalid: expected ACL_RT_DEV_RES_CUBE_CORE (0) or ACL_RT_DEV_RES_VECTOR_CORE (1)"),
        )),
    }
}

fn type_name(t: usize) -> &'static str {
    if t == 0 {
        "cube"
    } else {
        "vector"
    }
}

/// The device's cores of kind `t`.
fn cores(rt: &Runtime, t: usize) -> u32 {
    let c = npu_emu::aicore::soc_cores(&rt.cfg.soc_name);
    if t == 0 {
        c.cube_core
    } else {
        c.vector_core
    }
}

/// The default context handle of user device `dev`, which must be set.
fn device_ctx(rt: &Runtime, dev: i32) -> Result<u64> {
    rt.physical_device(dev)?;
    rt.reg
        .lock()
        .default_ctx
        .get(&dev)
        .map(|e| e.0)
        .ok_or_else(|| {
            Error::new(
                ACL_ERROR_RT_DEV_SETUP_ERROR,
                format!(
                    "device {dev} is not set in this process: call aclrtSetDevice({dev}) first"
                ),
            )
        })
}

fn check_value(rt: &Runtime, t: usize, value: u32) -> Result<()> {
    let n = cores(rt, t);
    if value > n {
        return Err(Error::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "value = {value} exceeds the {n} {} cores of {}",
                type_name(t),
                rt.cfg.soc_name
            ),
        ));
    }
    Ok(())
}

/// The limit of kind `t` in force on user device `dev` (its cores when none is set).
fn device_value(rt: &Runtime, ctx: u64, t: usize) -> u32 {
    DEVICE_LIMITS
        .lock()
        .get(&ctx)
        .and_then(|l| l[t])
        .unwrap_or_else(|| cores(rt, t))
}

/// `aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetDeviceResLimit(deviceId: i32, r#type: i32, value: u32) -> i32 {
    boundary("aclrtSetDeviceResLimit", || {
        let t = res_type(r#type)?;
        let rt = runtime::get()?;
        let ctx = device_ctx(&rt, deviceId)?;
        check_value(&rt, t, value)?;
        DEVICE_LIMITS.lock().entry(ctx).or_default()[t] = Some(value);
        Ok(())
    })
}

/// `aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetDeviceResLimit(
    deviceId: i32,
    r#type: i32,
    value: *mut u32,
) -> i32 {
    boundary("aclrtGetDeviceResLimit", || {
        let t = res_type(r#type)?;
        non_null(value, "value")?;
        let rt = runtime::get()?;
        let ctx = device_ctx(&rt, deviceId)?;
        out(value, "value", device_value(&rt, ctx, t))
    })
}

/// `aclError aclrtResetDeviceResLimit(int32_t deviceId)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetDeviceResLimit(deviceId: i32) -> i32 {
    boundary("aclrtResetDeviceResLimit", || {
        let rt = runtime::get()?;
        let ctx = device_ctx(&rt, deviceId)?;
        DEVICE_LIMITS.lock().remove(&ctx);
        Ok(())
    })
}

/// `aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetStreamResLimit(
    stream: *mut c_void,
    r#type: i32,
    value: u32,
) -> i32 {
    boundary("aclrtSetStreamResLimit", || {
        let t = res_type(r#type)?;
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        check_value(&rt, t, value)?;
        STREAM_LIMITS.lock().entry(e.handle).or_default()[t] = Some(value);
        Ok(())
    })
}

/// `aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetStreamResLimit(
    stream: *mut c_void,
    r#type: i32,
    value: *mut u32,
) -> i32 {
    boundary("aclrtGetStreamResLimit", || {
        let t = res_type(r#type)?;
        non_null(value, "value")?;
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let own = STREAM_LIMITS.lock().get(&e.handle).and_then(|l| l[t]);
        let v = match own {
            Some(v) => v,
            None => {
                let ctx = rt.reg.lock().default_ctx.get(&e.logical).map(|x| x.0);
                ctx.map_or_else(|| cores(&rt, t), |c| device_value(&rt, c, t))
            }
        };
        out(value, "value", v)
    })
}

/// `aclError aclrtResetStreamResLimit(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtResetStreamResLimit(stream: *mut c_void) -> i32 {
    boundary("aclrtResetStreamResLimit", || {
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        STREAM_LIMITS.lock().remove(&e.handle);
        Ok(())
    })
}

/// `aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtUseStreamResInCurrentThread(stream: *mut c_void) -> i32 {
    boundary("aclrtUseStreamResInCurrentThread", || {
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        THREAD_STREAM.with(|s| s.set(e.handle));
        Ok(())
    })
}

/// `aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)`: the thread stops using
/// `stream`'s limits (another stream than the one it uses changes nothing, as in CANN).
#[no_mangle]
pub unsafe extern "C" fn aclrtUnuseStreamResInCurrentThread(stream: *mut c_void) -> i32 {
    boundary("aclrtUnuseStreamResInCurrentThread", || {
        let e = runtime::get()?.stream_entry(stream, "stream")?;
        THREAD_STREAM.with(|s| {
            if s.get() == e.handle {
                s.set(0);
            }
        });
        Ok(())
    })
}

/// `aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetResInCurrentThread(r#type: i32, value: *mut u32) -> i32 {
    boundary("aclrtGetResInCurrentThread", || {
        let t = res_type(r#type)?;
        non_null(value, "value")?;
        let rt = runtime::get()?;
        let s = THREAD_STREAM.with(|s| s.get());
        let live = s != 0 && rt.reg.lock().streams.contains(s);
        if let Some(v) = live
            .then(|| STREAM_LIMITS.lock().get(&s).and_then(|l| l[t]))
            .flatten()
        {
            return out(value, "value", v);
        }
        let ctx = rt.current_context()?;
        let dctx = rt.reg.lock().default_ctx.get(&ctx.logical).map(|x| x.0);
        let v = dctx.map_or_else(|| cores(&rt, t), |c| device_value(&rt, c, t));
        out(value, "value", v)
    })
}

/// Live objects of the current device: (streams, events).
fn device_counts(rt: &Runtime) -> Result<(u32, u32)> {
    let ctx = rt.current_context()?;
    let reg = rt.reg.lock();
    let s = reg
        .streams
        .values()
        .filter(|s| s.logical == ctx.logical)
        .count() as u32;
    let e = reg
        .events
        .values()
        .filter(|e| e.logical == ctx.logical)
        .count() as u32;
    Ok((s, e))
}

/// `aclError aclrtGetStreamAvailableNum(uint32_t *streamCount)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetStreamAvailableNum(streamCount: *mut u32) -> i32 {
    boundary("aclrtGetStreamAvailableNum", || {
        non_null(streamCount, "streamCount")?;
        let (s, _) = device_counts(&*runtime::get()?)?;
        out(streamCount, "streamCount", MAX_STREAMS.saturating_sub(s))
    })
}

/// `aclError aclrtGetEventAvailNum(uint32_t *eventCount)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetEventAvailNum(eventCount: *mut u32) -> i32 {
    boundary("aclrtGetEventAvailNum", || {
        non_null(eventCount, "eventCount")?;
        let (_, e) = device_counts(&*runtime::get()?)?;
        out(eventCount, "eventCount", MAX_EVENTS.saturating_sub(e))
    })
}
