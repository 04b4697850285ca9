//! Labels and stream activation (`acl_rt.h`): the control flow of a built model
//! (`aclmdlRIBuildBegin` / `aclmdlRIBindStream`, see [`crate::api::mdlri`]).
//!
//! - `aclrtActiveStream(activeStream, stream)`: when the model reaches this task of `stream`,
//!   `activeStream` starts running (both must be bound to the same model).
//! - `aclrtSwitchStream(left, cond, right, dataType, trueStream, falseStream, stream)`:
//!   compares the `int32_t`/`int64_t` values at two device addresses when the model runs
//!   there, and starts `trueStream` when the condition holds (`falseStream` is reserved:
//!   NULL, as CANN documents).
//! - `aclrtSetLabel(label, stream)` marks a position of `stream`;
//!   `aclrtSwitchLabelByIndex(ptr, maxValue, labelList, stream)` reads the `uint32_t` index at
//!   `ptr` when the model runs there, stops `stream`, and continues at label
//!   `labelList[min(index, maxValue - 1)]` on that label's stream.
//!
//! Outside a model these tasks have no meaning: a stream that is not bound to a model (or
//! capturing into one) is `ACL_ERROR_RT_STREAM_MODEL` (107005), as in CANN.

use crate::api::mdlri::model_lane;
use crate::ffi::{boundary, non_null, out};
use crate::runtime::{self, bad_handle, new_handle, Runtime, LABEL, LABEL_LIST};
use npu_emu::capture::Node;
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// `aclError aclrtCreateLabel(aclrtLabel *label)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateLabel(label: *mut *mut c_void) -> i32 {
    boundary("aclrtCreateLabel", || {
        non_null(label, "label")?;
        let rt = runtime::get()?;
        rt.current_device()?;
        let (h, _) = new_handle(&LABEL);
        rt.reg.lock().labels.insert(h, None);
        out(label, "label", h as *mut c_void)
    })
}

fn live_label(rt: &Runtime, label: *mut c_void, arg: &str) -> Result<u64> {
    non_null(label, arg)?;
    let h = label as u64;
    if rt.reg.lock().labels.contains_key(&h) {
        Ok(h)
    } else {
        Err(bad_handle(&LABEL, arg, h))
    }
}

/// `aclError aclrtDestroyLabel(aclrtLabel label)`
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyLabel(label: *mut c_void) -> i32 {
    boundary("aclrtDestroyLabel", || {
        let rt = runtime::get()?;
        let h = live_label(&rt, label, "label")?;
        rt.reg.lock().labels.remove(&h);
        Ok(())
    })
}

/// `aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList)`
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateLabelList(
    labels: *mut *mut c_void,
    num: usize,
    labelList: *mut *mut c_void,
) -> i32 {
    boundary("aclrtCreateLabelList", || {
        non_null(labels, "labels")?;
        non_null(labelList, "labelList")?;
        if num == 0 {
            return Err(Error::invalid(
                "num = 0: a label list holds at least one label",
            ));
        }
        let rt = runtime::get()?;
        // SAFETY: the caller passes num label handles.
        let ls = unsafe { std::slice::from_raw_parts(labels, num) };
        let mut v = Vec::new();
        for (i, &l) in ls.iter().enumerate() {
            v.push(live_label(&rt, l, &format!("labels[{i}]"))?);
        }
        let (h, _) = new_handle(&LABEL_LIST);
        rt.reg.lock().label_lists.insert(h, v);
        out(labelList, "labelList", h as *mut c_void)
    })
}

/// `aclError aclrtDestroyLabelList(aclrtLabelList labelList)`: the labels stay.
#[no_mangle]
pub unsafe extern "C" fn aclrtDestroyLabelList(labelList: *mut c_void) -> i32 {
    boundary("aclrtDestroyLabelList", || {
        non_null(labelList, "labelList")?;
        let rt = runtime::get()?;
        let removed = rt.reg.lock().label_lists.remove(&(labelList as u64));
        removed
            .map(|_| ())
            .ok_or_else(|| bad_handle(&LABEL_LIST, "labelList", labelList as u64))
    })
}

/// `aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSetLabel(label: *mut c_void, stream: *mut c_void) -> i32 {
    boundary("aclrtSetLabel", || {
        let rt = runtime::get()?;
        let h = live_label(&rt, label, "label")?;
        let s = rt.stream_entry(stream, "stream")?;
        let (m, lane) = model_lane(&rt, &s, "a label")?;
        let mh = rt.reg.lock().members.get(&s.handle).map(|x| x.model);
        {
            let mut reg = rt.reg.lock();
            let slot = reg.labels.get_mut(&h).expect("checked live");
            if slot.is_some() && *slot == mh {
                return Err(Error::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "label {h:#x} is already set in model {}: a label marks one position",
                        m.id
                    ),
                ));
            }
            *slot = mh;
        }
        m.push(lane, Node::Label(h))
    })
}

/// Read a `T` from device memory at `addr` when the model runs.
fn read_device<T: Copy>(addr: u64, what: &'static str) -> Result<T> {
    let rt = runtime::get()?;
    let p = rt.node.check(addr, std::mem::size_of::<T>() as u64, what)?;
    // SAFETY: checked to be size_of::<T>() readable bytes of device memory.
    Ok(unsafe { (p as *const T).read_unaligned() })
}

/// `aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList,
/// aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtSwitchLabelByIndex(
    ptr: *mut c_void,
    maxValue: u32,
    labelList: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtSwitchLabelByIndex", || {
        non_null(ptr, "ptr")?;
        non_null(labelList, "labelList")?;
        let rt = runtime::get()?;
        rt.node.check(ptr as u64, 4, "ptr")?;
        let labels = rt
            .reg
            .lock()
            .label_lists
            .get(&(labelList as u64))
            .cloned()
            .ok_or_else(|| bad_handle(&LABEL_LIST, "labelList", labelList as u64))?;
        if maxValue == 0 || maxValue as usize > labels.len() {
            return Err(Error::invalid(format!(
                "maxValue = {maxValue} is invalid: the label list holds {} label(s)",
                labels.len()
            )));
        }
        let s = rt.stream_entry(stream, "stream")?;
        let (m, lane) = model_lane(&rt, &s, "a label switch")?;
        let addr = ptr as u64;
        m.push(
            lane,
            Node::Jump {
                index: Arc::new(move || read_device::<u32>(addr, "ptr (label index)")),
                labels: labels[..maxValue as usize].to_vec(),
                what: format!("index at {addr:#x}"),
            },
        )
    })
}

/// `aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream)`
#[no_mangle]
pub unsafe extern "C" fn aclrtActiveStream(activeStream: *mut c_void, stream: *mut c_void) -> i32 {
    boundary("aclrtActiveStream", || {
        non_null(activeStream, "activeStream")?;
        let rt = runtime::get()?;
        let s = rt.stream_entry(stream, "stream")?;
        let a = rt.stream_entry(activeStream, "activeStream")?;
        let (m, lane) = model_lane(&rt, &s, "stream activation")?;
        let (m2, target) = model_lane(&rt, &a, "stream activation")?;
        if !Arc::ptr_eq(&m, &m2) {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_MODEL,
                format!(
                    "{} belongs to model {} but {} to model {}: activation works within one model",
                    s.stream.label(),
                    m.id,
                    a.stream.label(),
                    m2.id
                ),
            ));
        }
        m.push(lane, Node::Activate(target))
    })
}

/// `aclError aclrtSwitchStream(void *leftValue, aclrtCondition cond, void *rightValue,
/// aclrtCompareDataType dataType, aclrtStream trueStream, aclrtStream falseStream,
/// aclrtStream stream)`
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclrtSwitchStream(
    leftValue: *mut c_void,
    cond: i32,
    rightValue: *mut c_void,
    dataType: i32,
    trueStream: *mut c_void,
    falseStream: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    boundary("aclrtSwitchStream", || {
        non_null(leftValue, "leftValue")?;
        non_null(rightValue, "rightValue")?;
        non_null(trueStream, "trueStream")?;
        if !falseStream.is_null() {
            return Err(Error::invalid(
                "falseStream is reserved and must be NULL (only trueStream is activated)",
            ));
        }
        if !(0..=5).contains(&cond) {
            return Err(Error::invalid(format!(
                "cond = {cond} is not an aclrtCondition (0 EQUAL .. 5 LESS_OR_EQUAL)"
            )));
        }
        let wide = match dataType {
            0 => false,
            1 => true,
            d => {
                return Err(Error::invalid(format!(
                    "dataType = {d} is not an aclrtCompareDataType (0 INT32, 1 INT64)"
                )))
            }
        };
        let rt = runtime::get()?;
        let n = if wide { 8 } else { 4 };
        rt.node.check(leftValue as u64, n, "leftValue")?;
        rt.node.check(rightValue as u64, n, "rightValue")?;
        let s = rt.stream_entry(stream, "stream")?;
        let t = rt.stream_entry(trueStream, "trueStream")?;
        let (m, lane) = model_lane(&rt, &s, "a stream switch")?;
        let (m2, target) = model_lane(&rt, &t, "a stream switch")?;
        if !Arc::ptr_eq(&m, &m2) {
            return Err(Error::new(
                ACL_ERROR_RT_STREAM_MODEL,
                format!(
                    "trueStream belongs to model {}, not to model {}",
                    m2.id, m.id
                ),
            ));
        }
        let (l, r) = (leftValue as u64, rightValue as u64);
        let test = move || -> Result<bool> {
            let (a, b) = if wide {
                (
                    read_device::<i64>(l, "leftValue")?,
                    read_device::<i64>(r, "rightValue")?,
                )
            } else {
                (
                    read_device::<i32>(l, "leftValue")? as i64,
                    read_device::<i32>(r, "rightValue")? as i64,
                )
            };
            Ok(match cond {
                0 => a == b,
                1 => a != b,
                2 => a > b,
                3 => a >= b,
                4 => a < b,
                _ => a <= b,
            })
        };
        const OPS: [&str; 6] = ["==", "!=", ">", ">=", "<", "<="];
        m.push(
            lane,
            Node::Switch {
                cond: Arc::new(test),
                lane: target,
                what: format!("*{l:#x} {} *{r:#x}", OPS[cond as usize]),
            },
        )
    })
}
