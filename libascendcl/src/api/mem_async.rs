//! Asynchronous memory operations beyond plain copies: `aclrtValueWrite`, `aclrtValueWait`,
//! `aclrtReduceAsync`, `aclrtRandomNumAsync`, `aclrtMemcpyAsyncWithCondition`,
//! `aclrtMemcpyAsyncWithOffset`, memory-copy descriptors (`aclrtGetMemcpyDescSize`,
//! `aclrtSetMemcpyDesc`, `aclrtMemcpyAsyncWithDesc`), cache maintenance (`aclrtCmoAsync`,
//! `aclrtCmoGetDescSize`, `aclrtCmoSetDesc`, `aclrtCmoAsyncWithDesc`), and
//! `aclrtFreeWithDevSync`, `aclrtGetMemUsageInfo`, `aclrtMallocForTaskScheduler`.
//!
//! Every one of them is a stream operation a capture holds and replays; each re-reads its
//! device memory (values, pointers, descriptors) when the stream runs it. Codes follow
//! CANN 8.5's ACL layer (NULL pointers, bad reserved arguments: `ACL_ERROR_INVALID_PARAM`)
//! and runtime (`ACL_ERROR_RT_PARAM_INVALID` for values out of range, addresses that are
//! not device memory, `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` for what Atlas A2 lacks).
//!
//! - Value write/wait: 64-bit device words (8-byte aligned); the wait conditions are GEQ
//!   `(int64)(*addr - value) >= 0`, EQ, AND `(*addr & value) != 0`, NOR
//!   `~(*addr | value) != 0`; `flag` of a write must be 0. A waiting stream polls the word
//!   (other streams and processes write it) and gives up when the stream is aborted.
//! - Reduce (`npu_emu::copy::reduce`): SUM, MAX, MIN of int8/16/32, fp16, bf16, fp32 (the A2
//!   types); EQUAL and the other types CANN maps (int4, uint8/16/32) are 207000 (the API
//!   reference: EQUAL "暂不支持", A2 supports the six types).
//! - Random numbers (`npu_emu::kernels::random`): the checks of CANN's `random_num_task.cc`
//!   (types per function, parameter `isAddr`/`size`); parameters given by address are read
//!   from device memory when the task runs; a non-NULL `randomParaAddr` receives the 16-byte
//!   parameter block at the call, as CANN writes it; the 128-bit counter is read from
//!   `randomCounterAddr`.
//! - Offset copies and descriptors: only `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` (207000
//!   otherwise, as documented). A copy descriptor is 32 bytes of device memory (source,
//!   destination, length, a tag); a cache descriptor 16 (address, length).
//! - Cache maintenance: only `ACL_RT_CMO_TYPE_PREFETCH` (documented for A2/A3); the emulated
//!   device has no cache, so a prefetch checks its range on the stream and moves nothing.
//! - `aclrtGetMemUsageInfo`: one component, "APP": this process's device memory on the
//!   device (current and peak).

use crate::api::memory::{config_device, malloc_impl, MallocConfig};
use crate::ffi::{boundary, non_null, out};
use crate::mem::is_device_addr;
use crate::runtime::{self, Runtime};
use npu_emu::codes::*;
use npu_emu::copy::reduce::{self, ReduceOp, ReduceType};
use npu_emu::copy::translate;
use npu_emu::kernels::random::{self, Dist, RandType};
use npu_emu::memory::Rounding;
use npu_emu::stream::Op;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn rt_invalid(msg: String) -> Error {
    Error::new(ACL_ERROR_RT_PARAM_INVALID, msg)
}

fn unsupported(msg: String) -> Error {
    Error::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, msg)
}

/// `addr..+len` must be device memory of this process (the runtime's pointer attribute
/// check): its physical device.
fn device_range(rt: &Runtime, addr: u64, len: u64, what: &str) -> Result<u32> {
    if !is_device_addr(addr) {
        return Err(rt_invalid(format!(
            "{what} {addr:#x} is not device memory (allocate it with aclrtMalloc)"
        )));
    }
    Ok(rt.node.phys(addr, len, what)?.device)
}

/// The 64-bit device word at `addr` (checked when the stream runs).
fn word(rt: &Runtime, addr: u64, what: &str) -> Result<&'static AtomicU64> {
    let p = translate(rt, addr, 8, true, what)?;
    // SAFETY: an 8-byte aligned (checked at the call) range of a live device allocation;
    // device memory stays mapped while the runtime lives, and concurrent writers use
    // atomics too.
    Ok(unsafe { &*(p as *const AtomicU64) })
}

fn check_word(rt: &Runtime, addr: *mut c_void) -> Result<()> {
    let a = addr as u64;
    device_range(rt, a, 8, "devAddr")?;
    if !a.is_multiple_of(8) {
        return Err(rt_invalid(format!("devAddr {a:#x} is not 8-byte aligned")));
    }
    Ok(())
}

fn on_stream(api: &str, e: Error) -> Error {
    Error::new(e.code, format!("{api} (run on the stream): {}", e.msg))
}

/// `aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtValueWrite(
    devAddr: *mut c_void,
    value: u64,
    flag: u32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtValueWrite", || {
        non_null(devAddr, "devAddr")?;
        if flag != 0 {
            return Err(rt_invalid(format!(
                "flag = {flag} is invalid: it is reserved and must be 0"
            )));
        }
        let rt = runtime::get()?;
        check_word(&rt, devAddr)?;
        let e = rt.stream_entry(stream, "stream")?;
        let a = devAddr as u64;
        let r = rt.clone();
        e.stream.enqueue_op(Op::run(
            "value_write",
            format!("write {value:#x} to {a:#x}"),
            move || {
                word(&r, a, "devAddr")
                    .map_err(|e| on_stream("aclrtValueWrite", e))?
                    .store(value, Ordering::SeqCst);
                Ok(())
            },
        ))
    })
}

/// Whether the word's value `v` meets wait condition `flag` against `value`.
fn condition(flag: u32, v: u64, value: u64) -> bool {
    match flag {
        0 => (v.wrapping_sub(value) as i64) >= 0,
        1 => v == value,
        2 => v & value != 0,
        _ => !(v | value) != 0,
    }
}

/// `aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtValueWait(
    devAddr: *mut c_void,
    value: u64,
    flag: u32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtValueWait", || {
        non_null(devAddr, "devAddr")?;
        if flag > 3 {
            return Err(rt_invalid(format!(
                "flag = {flag} is invalid: expected ACL_VALUE_WAIT_GEQ (0), _EQ (1), _AND (2) or _NOR (3)"
            )));
        }
        let rt = runtime::get()?;
        check_word(&rt, devAddr)?;
        let e = rt.stream_entry(stream, "stream")?;
        let a = devAddr as u64;
        let r = rt.clone();
        const NAMES: [&str; 4] = ["GEQ", "EQ", "AND", "NOR"];
        let what = format!("wait until {a:#x} {} {value:#x}", NAMES[flag as usize]);
        e.stream.enqueue_op(Op::run("value_wait", what, move || {
            let w = word(&r, a, "devAddr").map_err(|e| on_stream("aclrtValueWait", e))?;
            let mut pause = Duration::from_micros(2);
            loop {
                if condition(flag, w.load(Ordering::SeqCst), value) {
                    return Ok(());
                }
                if npu_emu::stream::task_aborted() {
                    return Err(Error::new(
                        ACL_ERROR_RT_STREAM_ABORT,
                        format!("aclrtValueWait on {a:#x} was aborted with its stream"),
                    ));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        }))
    })
}

fn reduce_type(t: i32) -> Result<ReduceType> {
    Ok(match t {
        2 => ReduceType::I8,
        6 => ReduceType::I16,
        3 => ReduceType::I32,
        1 => ReduceType::F16,
        27 => ReduceType::Bf16,
        0 => ReduceType::F32,
        // ACL_INT4, ACL_UINT8, ACL_UINT16, ACL_UINT32: mapped by CANN, not reduced by A2.
        29 | 4 | 7 | 8 => {
            return Err(unsupported(format!(
                "type = {t} is not reduced on this device: Atlas A2/A3 reduce int8, int16, int32, fp16, fp32 and bf16"
            )))
        }
        _ => {
            return Err(Error::invalid(format!(
                "type = {t} is invalid: expected an aclDataType of the reduce engine (int8, int16, int32, fp16, fp32, bf16)"
            )))
        }
    })
}

/// `aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind, aclDataType type, aclrtStream stream, void *reserve)`
#[no_mangle]
pub unsafe extern "C" fn aclrtReduceAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: u64,
    kind: i32,
    r#type: i32,
    stream: *mut c_void,
    reserve: *mut c_void,
) -> i32 {
    boundary("aclrtReduceAsync", || {
        non_null(dst, "dst")?;
        non_null(src, "src")?;
        if !reserve.is_null() {
            return Err(Error::invalid("argument reserve must be NULL"));
        }
        let ty = reduce_type(r#type)?;
        if count == 0 {
            return Err(rt_invalid(
                "count is 0: expected at least one element".into(),
            ));
        }
        let op = match kind {
            10 => ReduceOp::Sum,
            11 => ReduceOp::Max,
            12 => ReduceOp::Min,
            13 => {
                return Err(unsupported(
                    "kind = ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL (13) is not supported (the API reference: EQUAL is not supported yet)".into(),
                ))
            }
            k => {
                return Err(rt_invalid(format!(
                    "kind = {k} is invalid: expected ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM (10), _MAX (11), _MIN (12) or _EQUAL (13)"
                )))
            }
        };
        if op == ReduceOp::Sum && count > 4 << 30 {
            return Err(rt_invalid(format!("count = {count} is larger than 4 GiB")));
        }
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let (d, s) = (dst as u64, src as u64);
        for (a, w) in [(d, "dst"), (s, "src")] {
            device_range(&rt, a, count, w)?;
        }
        reduce::check(&*rt, d, s, count, ty, e.physical)?;
        let r = rt.clone();
        let what = format!("{op:?} of {count} bytes of {ty:?} from {s:#x} into {d:#x}");
        e.stream.enqueue_op(Op::run("reduce", what, move || {
            reduce::run(&*r, op, ty, d, s, count).map_err(|e| on_stream("aclrtReduceAsync", e))
        }))
    })
}

/// `aclrtRandomParaInfo`: a value (its bytes) or a device address.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RandomParaInfo {
    pub is_addr: u8,
    pub value_or_addr: [u8; 8],
    pub size: u8,
    pub rsv: [u8; 6],
}

/// `aclrtRandomNumFuncParaInfo`: the function and up to two parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RandomNumFuncParaInfo {
    pub func_type: i32,
    pub params: [RandomParaInfo; 2],
}

/// `aclrtRandomNumTaskInfo` (104 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RandomNumTaskInfo {
    pub data_type: i32,
    pub func: RandomNumFuncParaInfo,
    pub para_addr: *mut c_void,
    pub result_addr: *mut c_void,
    pub counter_addr: *mut c_void,
    pub seed: RandomParaInfo,
    pub num: RandomParaInfo,
    pub rsv: [u8; 8],
}

const _: () = assert!(std::mem::size_of::<RandomNumTaskInfo>() == 104);

/// A parameter as the task reads it: its bytes, now or from device memory at run time.
#[derive(Clone, Copy)]
enum Param {
    Value([u8; 8]),
    Addr(u64, usize),
}

impl Param {
    fn check(p: &RandomParaInfo, name: &str, data_size: usize) -> Result<Param> {
        let max = if p.is_addr == 1 { 8 } else { data_size };
        if p.is_addr > 1 {
            return Err(rt_invalid(format!(
                "{name}.isAddr = {} is invalid: expected 0 (value) or 1 (address)",
                p.is_addr
            )));
        }
        if p.size == 0 || p.size as usize > max {
            return Err(rt_invalid(format!(
                "{name}.size = {} is out of range [1, {max}]",
                p.size
            )));
        }
        let mut v = [0u8; 8];
        v[..p.size as usize].copy_from_slice(&p.value_or_addr[..p.size as usize]);
        Ok(if p.is_addr == 1 {
            Param::Addr(u64::from_le_bytes(v), data_size)
        } else {
            Param::Value(v)
        })
    }
    /// The value's bytes (read from device memory for an address).
    fn bytes(&self, rt: &Runtime, name: &str) -> Result<[u8; 8]> {
        match *self {
            Param::Value(v) => Ok(v),
            Param::Addr(a, n) => {
                let p = translate(rt, a, n as u64, true, name)?;
                let mut v = [0u8; 8];
                // SAFETY: n <= 8 bytes of a live device allocation (just checked).
                unsafe { std::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), n) };
                Ok(v)
            }
        }
    }
}

/// `aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo, const aclrtStream stream, void *reserve)`
#[no_mangle]
pub unsafe extern "C" fn aclrtRandomNumAsync(
    taskInfo: *const RandomNumTaskInfo,
    stream: *mut c_void,
    reserve: *mut c_void,
) -> i32 {
    boundary("aclrtRandomNumAsync", || {
        non_null(taskInfo, "taskInfo")?;
        // SAFETY: non-null aclrtRandomNumTaskInfo per the ACL contract.
        let t = unsafe { taskInfo.read_unaligned() };
        let ty = RandType::from_acl(t.data_type).ok_or_else(|| {
            Error::invalid(format!(
                "taskInfo->dataType = {} is invalid: expected ACL_INT32, ACL_INT64, ACL_UINT32, ACL_UINT64, ACL_BF16, ACL_FLOAT16 or ACL_FLOAT",
                t.data_type
            ))
        })?;
        if !reserve.is_null() {
            return Err(rt_invalid("argument reserve must be NULL".into()));
        }
        let f = t.func.func_type;
        let allowed = match f {
            0 | 2 | 3 => ty.is_float(),
            1 => true,
            _ => {
                return Err(rt_invalid(format!(
                    "funcType = {f} is invalid: expected DROPOUT_BITMASK (0), UNIFORM_DIS (1), NORMAL_DIS (2) or TRUNCATED_NORMAL_DIS (3)"
                )))
            }
        };
        if !allowed {
            return Err(rt_invalid(format!(
                "dataType {ty:?} is not supported by funcType {f}: it takes bf16, fp16 or fp32"
            )));
        }
        let sz = ty.size();
        let names: &[&str] = match f {
            0 => &["dropoutRation"],
            1 => &["min", "max"],
            _ => &["mean", "stddev"],
        };
        let params: Vec<Param> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Param::check(&t.func.params[i], n, sz))
            .collect::<Result<_>>()?;
        let seed = Param::check(&t.seed, "randomSeed", 8)?;
        let num = Param::check(&t.num, "randomNum", 8)?;
        let seed = match seed {
            Param::Addr(a, _) => Param::Addr(a, 8),
            v => v,
        };
        let num = match num {
            Param::Addr(a, _) => Param::Addr(a, 8),
            v => v,
        };
        non_null(t.result_addr, "taskInfo->randomResultAddr")?;
        non_null(t.counter_addr, "taskInfo->randomCounterAddr")?;
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let (res, ctr) = (t.result_addr as u64, t.counter_addr as u64);
        device_range(&rt, res, 1, "randomResultAddr")?;
        device_range(&rt, ctr, 16, "randomCounterAddr")?;
        if !t.para_addr.is_null() {
            // CANN copies the 16-byte parameter block there at the call.
            let pa = t.para_addr as u64;
            device_range(&rt, pa, 16, "randomParaAddr")?;
            let mut block = [0u8; 16];
            for (i, p) in t.func.params.iter().take(names.len()).enumerate() {
                block[i * 8..i * 8 + p.size as usize]
                    .copy_from_slice(&p.value_or_addr[..p.size as usize]);
            }
            let dst = translate(&*rt, pa, 16, true, "randomParaAddr")?;
            // SAFETY: 16 bytes of a live device allocation, just checked.
            unsafe { std::ptr::copy_nonoverlapping(block.as_ptr(), dst, 16) };
        }
        let r = rt.clone();
        let what = format!("random numbers (function {f}, {ty:?}) into {res:#x}");
        e.stream.enqueue_op(Op::run("random", what, move || {
            let run = || -> Result<()> {
                let pv: Vec<[u8; 8]> = params
                    .iter()
                    .zip(names)
                    .map(|(p, n)| p.bytes(&r, n))
                    .collect::<Result<_>>()?;
                let seed = u64::from_le_bytes(seed.bytes(&r, "randomSeed")?);
                let n = u64::from_le_bytes(num.bytes(&r, "randomNum")?);
                let dist = match f {
                    0 => Dist::DropoutBitmask {
                        ratio: ty.read_f64(pv[0]),
                    },
                    1 if ty.is_float() => Dist::UniformFloat {
                        min: ty.read_f64(pv[0]),
                        max: ty.read_f64(pv[1]),
                    },
                    1 => {
                        let (min, max) = (ty.read_int(pv[0]), ty.read_int(pv[1]));
                        if max <= min {
                            return Err(rt_invalid(format!(
                                "uniform integers need max > min (min {min}, max {max})"
                            )));
                        }
                        Dist::UniformInt { min, max }
                    }
                    2 => Dist::Normal {
                        mean: ty.read_f64(pv[0]),
                        stddev: ty.read_f64(pv[1]),
                    },
                    _ => Dist::TruncatedNormal {
                        mean: ty.read_f64(pv[0]),
                        stddev: ty.read_f64(pv[1]),
                    },
                };
                let bytes = random::result_bytes(dist, ty, n);
                let out = translate(&*r, res, bytes, true, "randomResultAddr")?;
                let c = translate(&*r, ctr, 16, true, "randomCounterAddr")?;
                let mut counter = [0u32; 4];
                for (i, w) in counter.iter_mut().enumerate() {
                    // SAFETY: 16 bytes of a live device allocation, just checked.
                    *w = unsafe { (c.add(i * 4) as *const u32).read_unaligned() };
                }
                // SAFETY: `bytes` bytes of a live device allocation, just checked.
                let out = unsafe { std::slice::from_raw_parts_mut(out, bytes as usize) };
                random::generate(dist, ty, n, seed, counter, out);
                Ok(())
            };
            run().map_err(|e| on_stream("aclrtRandomNumAsync", e))
        }))
    })
}

/// `aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithCondition(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemcpyAsyncWithCondition", || {
        non_null(dst, "dst")?;
        non_null(src, "src")?;
        if !(0..=7).contains(&kind) {
            return Err(Error::invalid(format!(
                "kind = {kind} is not an aclrtMemcpyKind"
            )));
        }
        if kind == 0 {
            return Err(unsupported(
                "kind = ACL_MEMCPY_HOST_TO_HOST: Atlas A2/A3 do not copy host memory asynchronously".into(),
            ));
        }
        if count == 0 {
            return Ok(());
        }
        if count > destMax {
            return Err(rt_invalid(format!(
                "count {count} is larger than destMax {destMax}"
            )));
        }
        let (d, s) = (dst as u64, src as u64);
        if !d.is_multiple_of(64) || !s.is_multiple_of(64) {
            return Err(rt_invalid(format!(
                "dst {d:#x} and src {s:#x} must both be 64-byte aligned"
            )));
        }
        let rt = runtime::get()?;
        let dir = npu_emu::copy::direction::resolve(Some(&*rt), kind, d, s)?;
        if !dir.dst_dev && !dir.src_dev {
            return Err(unsupported(format!(
                "a host-to-host copy (dst {d:#x}, src {s:#x}) is not done asynchronously on Atlas A2/A3"
            )));
        }
        let st = rt.stream(stream)?;
        if npu_emu::copy::direction::pageable_host_end(&*rt, d, s, dir) {
            crate::api::mdlri::check_unsafe_call(
                &rt,
                "aclrtMemcpyAsyncWithCondition with pageable host memory",
            )?;
        }
        // SAFETY: host memory stays valid until the stream ran the copy (the program's
        // contract); pageable host memory is copied before returning.
        unsafe {
            npu_emu::copy::linear::copy_async(
                &rt,
                &st,
                "aclrtMemcpyAsyncWithCondition",
                d,
                s,
                count as u64,
                dir,
                false,
            )
        }
    })
}

/// `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`.
const INNER_D2D: i32 = 6;

fn inner_d2d_only(kind: i32) -> Result<()> {
    if !(0..=7).contains(&kind) {
        return Err(Error::invalid(format!(
            "kind = {kind} is not an aclrtMemcpyKind"
        )));
    }
    if kind != INNER_D2D {
        return Err(unsupported(format!(
            "kind = {kind}: only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6) is supported"
        )));
    }
    Ok(())
}

/// Copy `count` bytes from `s` to `d` (device memory of one device), checked now.
fn copy_d2d(rt: &Runtime, d: u64, s: u64, count: u64) -> Result<()> {
    let dp = rt.node.phys(d, count, "dst")?;
    let sp = rt.node.phys(s, count, "src")?;
    if dp.device != sp.device {
        return Err(rt_invalid(format!(
            "dst {d:#x} (device {}) and src {s:#x} (device {}) are not on one device: this copy is within a device",
            dp.device, sp.device
        )));
    }
    let dst = translate(rt, d, count, true, "dst")?;
    let src = translate(rt, s, count, true, "src")?;
    // SAFETY: both ranges were just checked; `copy` handles overlap.
    unsafe { std::ptr::copy(src as *const u8, dst, count as usize) };
    Ok(())
}

/// Read the 64-bit value at device address `a`.
fn read_u64(rt: &Runtime, a: u64, what: &str) -> Result<u64> {
    let p = translate(rt, a, 8, true, what)?;
    // SAFETY: 8 bytes of a live device allocation, just checked.
    Ok(unsafe { (p as *const u64).read_unaligned() })
}

/// `aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src, size_t count, size_t srcDataOffset, aclrtMemcpyKind kind, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithOffset(
    dst: *mut *mut c_void,
    destMax: usize,
    dstDataOffset: usize,
    src: *const *const c_void,
    count: usize,
    srcDataOffset: usize,
    kind: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemcpyAsyncWithOffset", || {
        non_null(dst, "dst")?;
        non_null(src, "src")?;
        inner_d2d_only(kind)?;
        if count > destMax {
            return Err(rt_invalid(format!(
                "count {count} is larger than destMax {destMax}"
            )));
        }
        let rt = runtime::get()?;
        let (d, s) = (dst as u64, src as u64);
        device_range(
            &rt,
            d,
            8,
            "dst (the device word holding the destination base)",
        )?;
        device_range(&rt, s, 8, "src (the device word holding the source base)")?;
        let e = rt.stream_entry(stream, "stream")?;
        let r = rt.clone();
        let (doff, soff, n) = (dstDataOffset as u64, srcDataOffset as u64, count as u64);
        let what = format!("copy {n} bytes from *{s:#x}+{soff} to *{d:#x}+{doff}");
        e.stream.enqueue_op(Op::run("memcpy", what, move || {
            let run = || -> Result<()> {
                let db = read_u64(&r, d, "dst")?;
                let sb = read_u64(&r, s, "src")?;
                copy_d2d(&r, db.wrapping_add(doff), sb.wrapping_add(soff), n)
            };
            run().map_err(|e| on_stream("aclrtMemcpyAsyncWithOffset", e))
        }))
    })
}

/// Bytes of a copy descriptor: source, destination, length, tag (four `u64`).
const MEMCPY_DESC_SIZE: usize = 32;
const MEMCPY_DESC_TAG: u64 = 0x4E50_5545_4D43_5059; // "NPUEMCPY"
/// Bytes of a cache-maintenance descriptor: address, length.
const CMO_DESC_SIZE: usize = 16;

/// `aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetMemcpyDescSize(kind: i32, descSize: *mut usize) -> i32 {
    boundary("aclrtGetMemcpyDescSize", || {
        non_null(descSize, "descSize")?;
        inner_d2d_only(kind)?;
        out(descSize, "descSize", MEMCPY_DESC_SIZE)
    })
}

/// Write `words` into the descriptor at device address `desc` (checked: device memory).
fn write_desc(rt: &Runtime, desc: u64, words: &[u64], what: &str) -> Result<()> {
    let n = (words.len() * 8) as u64;
    device_range(rt, desc, n, what)?;
    let p = translate(rt, desc, n, true, what)?;
    for (i, w) in words.iter().enumerate() {
        // SAFETY: n bytes of a live device allocation, just checked.
        unsafe { (p.add(i * 8) as *mut u64).write_unaligned(*w) };
    }
    Ok(())
}

/// `aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count, void *config)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetMemcpyDesc(
    desc: *mut c_void,
    kind: i32,
    srcAddr: *mut c_void,
    dstAddr: *mut c_void,
    count: usize,
    config: *mut c_void,
) -> i32 {
    boundary("aclrtSetMemcpyDesc", || {
        non_null(desc, "desc")?;
        inner_d2d_only(kind)?;
        non_null(srcAddr, "srcAddr")?;
        non_null(dstAddr, "dstAddr")?;
        if count == 0 {
            return Err(Error::invalid("count is 0: expected a positive length"));
        }
        if !config.is_null() {
            return Err(Error::invalid(
                "argument config is reserved and must be NULL",
            ));
        }
        let rt = runtime::get()?;
        device_range(&rt, srcAddr as u64, count as u64, "srcAddr")?;
        device_range(&rt, dstAddr as u64, count as u64, "dstAddr")?;
        write_desc(
            &rt,
            desc as u64,
            &[
                srcAddr as u64,
                dstAddr as u64,
                count as u64,
                MEMCPY_DESC_TAG,
            ],
            "desc",
        )
    })
}

/// `aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithDesc(
    desc: *mut c_void,
    kind: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtMemcpyAsyncWithDesc", || {
        non_null(desc, "desc")?;
        inner_d2d_only(kind)?;
        non_null(stream, "stream")?;
        let rt = runtime::get()?;
        let d = desc as u64;
        device_range(&rt, d, MEMCPY_DESC_SIZE as u64, "desc")?;
        let e = rt.stream_entry(stream, "stream")?;
        let r = rt.clone();
        e.stream.enqueue_op(Op::run(
            "memcpy",
            format!("copy by the descriptor at {d:#x}"),
            move || {
                let run = || -> Result<()> {
                    if read_u64(&r, d + 24, "desc")? != MEMCPY_DESC_TAG {
                        return Err(rt_invalid(format!(
                            "desc {d:#x} was not set by aclrtSetMemcpyDesc"
                        )));
                    }
                    let s = read_u64(&r, d, "desc")?;
                    let t = read_u64(&r, d + 8, "desc")?;
                    let n = read_u64(&r, d + 16, "desc")?;
                    copy_d2d(&r, t, s, n)
                };
                run().map_err(|e| on_stream("aclrtMemcpyAsyncWithDesc", e))
            },
        ))
    })
}

/// Only prefetches are documented for Atlas A2/A3.
fn cmo_type(t: i32) -> Result<()> {
    match t {
        0 => Ok(()),
        1..=3 => Err(unsupported(format!(
            "cmoType = {t}: only ACL_RT_CMO_TYPE_PREFETCH (0) is supported"
        ))),
        _ => Err(Error::invalid(format!(
            "cmoType = {t} is not an aclrtCmoType"
        ))),
    }
}

/// Enqueue a prefetch of `addr..+size` on stream entry `e` (checked when it runs; there is
/// no cache to fill).
fn enqueue_prefetch(
    rt: &Arc<Runtime>,
    e: &runtime::StreamEntry,
    api: &'static str,
    range: impl Fn(&Runtime) -> Result<(u64, u64)> + Send + Sync + 'static,
) -> Result<()> {
    let r = rt.clone();
    let device = e.physical;
    e.stream.enqueue_op(Op::run("cmo", format!("{api} prefetch"), move || {
        let run = || -> Result<()> {
            let (a, n) = range(&r)?;
            let p = r.node.phys(a, n, "src")?;
            if p.device != device {
                return Err(rt_invalid(format!(
                    "src {a:#x} is memory of device {}: cache operations are for the stream's device {device}",
                    p.device
                )));
            }
            Ok(())
        };
        run().map_err(|e| on_stream(api, e))
    }))
}

/// `aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCmoAsync(
    src: *mut c_void,
    size: usize,
    cmoType: i32,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtCmoAsync", || {
        non_null(src, "src")?;
        cmo_type(cmoType)?;
        let rt = runtime::get()?;
        let e = rt.stream_entry(stream, "stream")?;
        let (a, n) = (src as u64, size as u64);
        let dev = device_range(&rt, a, n, "src")?;
        if dev != e.physical {
            return Err(rt_invalid(format!(
                "src {a:#x} is memory of device {dev}: cache operations are for the stream's device"
            )));
        }
        enqueue_prefetch(&rt, &e, "aclrtCmoAsync", move |_| Ok((a, n)))
    })
}

/// `aclError aclrtCmoGetDescSize(size_t *size)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCmoGetDescSize(size: *mut usize) -> i32 {
    boundary("aclrtCmoGetDescSize", || {
        non_null(size, "size")?;
        out(size, "size", CMO_DESC_SIZE)
    })
}

/// `aclError aclrtCmoSetDesc(void *cmoDesc, void *src, size_t size)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCmoSetDesc(
    cmoDesc: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> i32 {
    boundary("aclrtCmoSetDesc", || {
        non_null(cmoDesc, "cmoDesc")?;
        non_null(src, "src")?;
        let rt = runtime::get()?;
        device_range(&rt, src as u64, size as u64, "src")?;
        write_desc(&rt, cmoDesc as u64, &[src as u64, size as u64], "cmoDesc")
    })
}

/// `aclError aclrtCmoAsyncWithDesc(void *cmoDesc, aclrtCmoType cmoType, aclrtStream stream, const void *reserve)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCmoAsyncWithDesc(
    cmoDesc: *mut c_void,
    cmoType: i32,
    stream: *mut c_void,
    reserve: *const c_void,
) -> i32 {
    boundary("aclrtCmoAsyncWithDesc", || {
        non_null(cmoDesc, "cmoDesc")?;
        if !reserve.is_null() {
            return Err(Error::invalid("argument reserve must be NULL"));
        }
        cmo_type(cmoType)?;
        let rt = runtime::get()?;
        let d = cmoDesc as u64;
        device_range(&rt, d, CMO_DESC_SIZE as u64, "cmoDesc")?;
        let e = rt.stream_entry(stream, "stream")?;
        enqueue_prefetch(&rt, &e, "aclrtCmoAsyncWithDesc", move |r| {
            Ok((read_u64(r, d, "cmoDesc")?, read_u64(r, d + 8, "cmoDesc")?))
        })
    })
}

/// `aclError aclrtFreeWithDevSync(void *devPtr)`: wait for the streams of the memory's
/// device, then free it.
#[no_mangle]
pub unsafe extern "C" fn aclrtFreeWithDevSync(devPtr: *mut c_void) -> i32 {
    boundary("aclrtFreeWithDevSync", || {
        non_null(devPtr, "devPtr")?;
        let rt = runtime::get()?;
        let a = devPtr as u64;
        if !is_device_addr(a) {
            return Err(Error::invalid(format!(
                "devPtr {devPtr:p} is not device memory"
            )));
        }
        let info = rt.node.lookup(a).ok_or_else(|| {
            Error::invalid(format!("devPtr {devPtr:p} is not a live device allocation"))
        })?;
        let streams: Vec<_> = rt
            .reg
            .lock()
            .streams
            .values()
            .filter(|s| s.physical == info.device)
            .cloned()
            .collect();
        for s in streams {
            // Errors of other work stay with their streams.
            if let Err(e) = s.stream.synchronize(None) {
                rt.log(
                    npu_emu::config::LogLevel::Warning,
                    &format!(
                        "aclrtFreeWithDevSync: {} reported: {}",
                        s.stream.label(),
                        e.msg
                    ),
                );
            }
        }
        rt.node.free(a)?;
        Ok(())
    })
}

/// `aclrtMemUsageInfo`.
#[repr(C)]
pub struct MemUsageInfo {
    pub name: [u8; 32],
    pub cur_mem_size: u64,
    pub mem_peak_size: u64,
    pub reserved: [usize; 8],
}

/// `aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum, size_t *outputNum)`
#[no_mangle]
pub unsafe extern "C" fn aclrtGetMemUsageInfo(
    deviceId: i32,
    memUsageInfo: *mut MemUsageInfo,
    inputNum: usize,
    outputNum: *mut usize,
) -> i32 {
    boundary("aclrtGetMemUsageInfo", || {
        non_null(outputNum, "outputNum")?;
        out(outputNum, "outputNum", 0)?;
        non_null(memUsageInfo, "memUsageInfo")?;
        if inputNum == 0 {
            return Err(rt_invalid("inputNum is 0: expected at least 1".into()));
        }
        let rt = runtime::get()?;
        let phys = rt.physical_device(deviceId)?;
        if !rt.reg.lock().default_ctx.contains_key(&deviceId) {
            return Err(Error::new(
                ACL_ERROR_RT_CONTEXT_NULL,
                format!("device {deviceId} is not set in this process: call aclrtSetDevice({deviceId}) first"),
            ));
        }
        let (cur, peak) = rt.node.process_bytes(phys);
        let mut name = [0u8; 32];
        name[..3].copy_from_slice(b"APP");
        let info = MemUsageInfo {
            name,
            cur_mem_size: cur,
            mem_peak_size: peak,
            reserved: [0; 8],
        };
        // SAFETY: the caller's array holds inputNum >= 1 entries.
        unsafe { memUsageInfo.write_unaligned(info) };
        out(outputNum, "outputNum", 1)
    })
}

/// `aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)`:
/// device memory as `aclrtMallocWithCfg` gives (the emulated task scheduler reads any device
/// memory).
#[no_mangle]
pub unsafe extern "C" fn aclrtMallocForTaskScheduler(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: i32,
    cfg: *mut MallocConfig,
) -> i32 {
    boundary("aclrtMallocForTaskScheduler", || {
        let device = config_device(cfg)?;
        malloc_impl(devPtr, size, policy, Rounding::Padded, device)
    })
}

#[cfg(test)]
mod tests {
    use super::condition;

    #[test]
    fn wait_conditions() {
        assert!(condition(0, 5, 5) && condition(0, 6, 5) && !condition(0, 4, 5));
        assert!(condition(0, 0, u64::MAX)); // (int64)(0 - MAX) = 1 >= 0
        assert!(condition(1, 7, 7) && !condition(1, 7, 8));
        assert!(condition(2, 0b110, 0b010) && !condition(2, 0b100, 0b010));
        assert!(condition(3, 0, 0) && !condition(3, u64::MAX, 0));
    }
}
