//! Tensor data transfer channels (`acl/acl_tdt.h`; CANN's `libacl_tdt_channel.so`, which the
//! install links to `libascendcl.so`): data items, datasets and channels.
//!
//! A data item describes one tensor (`ACL_TENSOR_DATA_TENSOR`: dims, data type, data) or a
//! control marker (end of sequence, abnormal: no dims, no data). An item made by
//! `acltdtCreateDataItem` refers to the caller's data (not copied, as CANN); a dataset holds
//! items in order. A channel is a queue of datasets on a device, as CANN's capacity channels
//! are one memory queue that `acltdtSendTensor` enqueues to and `acltdtReceiveTensor`
//! dequeues from. On the emulated machine nothing on the device side consumes or produces
//! channel data (no AI CPU data-loading operators), so both ends are host threads of this
//! process: every handle of a process that names the same (device, name) is the same queue.
//! `acltdtCreateChannel` (CANN's TDT mode) is the same queue without a capacity limit.
//!
//! Send copies each item's data (host memory, or device memory of this process) into the
//! queue; receive fills an empty dataset with new items that own the data and are destroyed
//! with the dataset (such a dataset takes no `acltdtAddDataItem`:
//! `ACL_ERROR_FEATURE_UNSUPPORTED`, as CANN). `timeout` is in ms: -1 waits for ever, 0 does
//! not wait; a full queue is `ACL_ERROR_RT_QUEUE_FULL` and an empty one
//! `ACL_ERROR_RT_QUEUE_EMPTY` once the timeout passed. `acltdtStopChannel` wakes and fails
//! the waiting calls of every handle of the queue (and later ones, until it is destroyed).
//!
//! CANN's checks: dims NULL with `dimNum` > 0 or the reverse, more than 128 dims, dims for a
//! control item, an index past the end, `dimNum` smaller than the item's dims, and a receive
//! into a non-empty dataset are `ACL_ERROR_INVALID_PARAM`; NULL handles too (NULL for the
//! functions that return a pointer, `ACL_TENSOR_DATA_UNDEFINED` / `ACL_DT_UNDEFINED` / 0 for
//! the getters). Items of one dataset must all be host or all device memory.

use crate::ffi::{boundary, boundary_value, non_null, out};
use crate::globals::{TDT_CHANNELS, TDT_DATASETS, TDT_ITEMS, TDT_QUEUES};
use crate::runtime;
use npu_emu::codes::*;
use npu_emu::{Error, Result};
use npu_emu_ffi::handles::HandleKind;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Arc;
use std::time::{Duration, Instant};

use npu_emu::codes::{ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL};

const ACL_TENSOR_DATA_UNDEFINED: i32 = -1;
const ACL_TENSOR_DATA_TENSOR: i32 = 0;
const ACL_TENSOR_DATA_END_OF_SEQUENCE: i32 = 1;
const ACL_TENSOR_DATA_ABNORMAL: i32 = 2;
const ACL_DT_UNDEFINED: i32 = -1;
/// Most dims of an item (CANN's `MAX_DIM_CNT`).
const MAX_DIMS: usize = 128;
/// Longest channel name with its NUL (CANN's `RT_MQ_MAX_NAME_LEN`).
const MAX_NAME: usize = 128;

/// What an `acltdtDataItem *` is.
pub static ITEM: HandleKind = HandleKind::new(*b"TI", "acltdtDataItem", "acltdtCreateDataItem");
/// What an `acltdtDataset *` is.
pub static DATASET: HandleKind = HandleKind::new(*b"TS", "acltdtDataset", "acltdtCreateDataset");
/// What an `acltdtChannelHandle *` is.
pub static CHANNEL: HandleKind =
    HandleKind::new(*b"TC", "acltdtChannelHandle", "acltdtCreateChannel");

/// An item's data: the caller's (made by `acltdtCreateDataItem`) or its own (received).
enum Data {
    Borrowed(usize, usize),
    Owned(Vec<u8>),
}

/// The object behind an `acltdtDataItem *`.
pub struct Item {
    tdt_type: i32,
    dims: Vec<i64>,
    dtype: i32,
    data: Data,
}

impl Item {
    fn addr(&self) -> *mut c_void {
        match &self.data {
            Data::Borrowed(p, _) => *p as *mut c_void,
            Data::Owned(v) if v.is_empty() => std::ptr::null_mut(),
            Data::Owned(v) => v.as_ptr() as *mut c_void,
        }
    }
    fn size(&self) -> usize {
        match &self.data {
            Data::Borrowed(_, n) => *n,
            Data::Owned(v) => v.len(),
        }
    }
}

/// The object behind an `acltdtDataset *`.
pub struct Dataset {
    items: Vec<u64>,
    /// Filled by a receive: the items are its own and go with it.
    owns: bool,
    name: CString,
}

/// One queued dataset: (type, dims, data type, bytes) per item.
type Message = Vec<(i32, Vec<i64>, i32, Vec<u8>)>;

/// The queue of a (device, name): shared by every handle naming it.
pub struct Queue {
    st: Mutex<QueueState>,
    cv: Condvar,
}

struct QueueState {
    q: VecDeque<Message>,
    /// Most datasets queued (`None`: no limit).
    capacity: Option<usize>,
    stopped: bool,
    /// Live handles of this queue.
    handles: usize,
}

/// The object behind an `acltdtChannelHandle *`.
pub struct Channel {
    device: u32,
    name: String,
    queue: Arc<Queue>,
}

fn item_of<T>(h: *const c_void, f: impl FnOnce(&Item) -> T) -> Result<T> {
    let items = TDT_ITEMS.lock();
    Ok(f(items.get(h as u64, "dataItem")?))
}

/// Run a getter of an item: `fallback` (and the message) for a NULL or dead item.
fn get<T>(name: &'static str, h: *const c_void, fallback: T, f: impl FnOnce(&Item) -> T) -> T {
    boundary_value(name, fallback, || item_of(h, f))
}

/// `acltdtTensorType acltdtGetTensorTypeFromItem(const acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtGetTensorTypeFromItem(dataItem: *const c_void) -> i32 {
    get(
        "acltdtGetTensorTypeFromItem",
        dataItem,
        ACL_TENSOR_DATA_UNDEFINED,
        |i| i.tdt_type,
    )
}

/// `aclDataType acltdtGetDataTypeFromItem(const acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtGetDataTypeFromItem(dataItem: *const c_void) -> i32 {
    get(
        "acltdtGetDataTypeFromItem",
        dataItem,
        ACL_DT_UNDEFINED,
        |i| i.dtype,
    )
}

/// `void *acltdtGetDataAddrFromItem(const acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtGetDataAddrFromItem(dataItem: *const c_void) -> *mut c_void {
    get(
        "acltdtGetDataAddrFromItem",
        dataItem,
        std::ptr::null_mut(),
        Item::addr,
    )
}

/// `size_t acltdtGetDataSizeFromItem(const acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtGetDataSizeFromItem(dataItem: *const c_void) -> usize {
    get("acltdtGetDataSizeFromItem", dataItem, 0, Item::size)
}

/// `size_t acltdtGetDimNumFromItem(const acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtGetDimNumFromItem(dataItem: *const c_void) -> usize {
    get("acltdtGetDimNumFromItem", dataItem, 0, |i| i.dims.len())
}

/// `aclError acltdtGetSliceInfoFromItem(const acltdtDataItem *dataItem, size_t *sliceNum,
/// size_t *sliceId)`: items here are never slices (one slice, number 0).
#[no_mangle]
pub extern "C" fn acltdtGetSliceInfoFromItem(
    dataItem: *const c_void,
    sliceNum: *mut usize,
    sliceId: *mut usize,
) -> i32 {
    boundary("acltdtGetSliceInfoFromItem", || {
        item_of(dataItem, |_| ())?;
        non_null(sliceNum, "sliceNum")?;
        non_null(sliceId, "sliceId")?;
        out(sliceNum, "sliceNum", 0)?;
        out(sliceId, "sliceId", 0)
    })
}

/// Check a dims argument pair as CANN does.
fn check_dims(dims: *const i64, dimNum: usize) -> Result<()> {
    if dims.is_null() && dimNum != 0 {
        return Err(Error::invalid(format!(
            "dims is NULL but dimNum = {dimNum}: if dims is NULL, dimNum must be 0"
        )));
    }
    if !dims.is_null() && dimNum == 0 {
        return Err(Error::invalid(
            "dims is not NULL but dimNum = 0: if dims is not NULL, dimNum must be greater than 0",
        ));
    }
    Ok(())
}

/// `aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims,
/// size_t dimNum)`
#[no_mangle]
pub unsafe extern "C" fn acltdtGetDimsFromItem(
    dataItem: *const c_void,
    dims: *mut i64,
    dimNum: usize,
) -> i32 {
    boundary("acltdtGetDimsFromItem", || {
        let d = item_of(dataItem, |i| i.dims.clone())?;
        check_dims(dims, dimNum)?;
        if dimNum < d.len() {
            return Err(Error::invalid(format!(
                "dimNum = {dimNum} is less than the item's {} dims",
                d.len()
            )));
        }
        for (k, v) in d.iter().enumerate() {
            // SAFETY: dims holds dimNum >= d.len() elements (the caller's contract).
            unsafe { dims.add(k).write_unaligned(*v) };
        }
        Ok(())
    })
}

/// `acltdtDataItem *acltdtCreateDataItem(acltdtTensorType tdtType, const int64_t *dims,
/// size_t dimNum, aclDataType dataType, void *data, size_t size)`
#[no_mangle]
pub unsafe extern "C" fn acltdtCreateDataItem(
    tdtType: i32,
    dims: *const i64,
    dimNum: usize,
    dataType: i32,
    data: *mut c_void,
    size: usize,
) -> *mut c_void {
    boundary_value("acltdtCreateDataItem", std::ptr::null_mut(), || {
        check_dims(dims, dimNum)?;
        if dimNum > MAX_DIMS {
            return Err(Error::invalid(format!(
                "dimNum = {dimNum} is larger than {MAX_DIMS}"
            )));
        }
        let item = if tdtType != ACL_TENSOR_DATA_TENSOR {
            if !dims.is_null() {
                return Err(Error::invalid(format!(
                    "tdtType = {tdtType} is not ACL_TENSOR_DATA_TENSOR: dims must be NULL"
                )));
            }
            Item {
                tdt_type: tdtType,
                dims: Vec::new(),
                dtype: ACL_DT_UNDEFINED,
                data: Data::Owned(Vec::new()),
            }
        } else {
            let d = if dimNum == 0 {
                Vec::new()
            } else {
                // SAFETY: non-NULL with dimNum elements (checked above; caller's contract).
                unsafe { std::slice::from_raw_parts(dims, dimNum) }.to_vec()
            };
            Item {
                tdt_type: tdtType,
                dims: d,
                dtype: dataType,
                data: Data::Borrowed(data as usize, size),
            }
        };
        Ok(TDT_ITEMS.lock().insert(item) as *mut c_void)
    })
}

/// `aclError acltdtDestroyDataItem(acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtDestroyDataItem(dataItem: *mut c_void) -> i32 {
    boundary("acltdtDestroyDataItem", || {
        TDT_ITEMS.lock().remove(dataItem as u64, "dataItem")?;
        Ok(())
    })
}

/// `acltdtDataset *acltdtCreateDataset(void)`
#[no_mangle]
pub extern "C" fn acltdtCreateDataset() -> *mut c_void {
    boundary_value("acltdtCreateDataset", std::ptr::null_mut(), || {
        Ok(TDT_DATASETS.lock().insert(Dataset {
            items: Vec::new(),
            owns: false,
            name: CString::default(),
        }) as *mut c_void)
    })
}

/// `aclError acltdtDestroyDataset(acltdtDataset *dataset)`: a received dataset destroys
/// its items too.
#[no_mangle]
pub extern "C" fn acltdtDestroyDataset(dataset: *mut c_void) -> i32 {
    boundary("acltdtDestroyDataset", || {
        let d = TDT_DATASETS.lock().remove(dataset as u64, "dataset")?;
        if d.owns {
            let mut items = TDT_ITEMS.lock();
            for h in d.items {
                let _ = items.remove(h, "item");
            }
        }
        Ok(())
    })
}

/// `acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)`
#[no_mangle]
pub extern "C" fn acltdtGetDataItem(dataset: *const c_void, index: usize) -> *mut c_void {
    boundary_value("acltdtGetDataItem", std::ptr::null_mut(), || {
        let sets = TDT_DATASETS.lock();
        let d = sets.get(dataset as u64, "dataset")?;
        d.items
            .get(index)
            .map(|h| *h as *mut c_void)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "index = {index} is greater than or equal to the dataset size {}",
                    d.items.len()
                ))
            })
    })
}

/// Whether an item's data is device memory (`None`: it has none).
fn on_device(i: &Item) -> Option<bool> {
    match i.data {
        Data::Borrowed(p, _) if p != 0 => Some(npu_emu::memory::is_canonical(p as u64)),
        _ => None,
    }
}

/// `aclError acltdtAddDataItem(acltdtDataset *dataset, acltdtDataItem *dataItem)`
#[no_mangle]
pub extern "C" fn acltdtAddDataItem(dataset: *mut c_void, dataItem: *mut c_void) -> i32 {
    boundary("acltdtAddDataItem", || {
        let mut sets = TDT_DATASETS.lock();
        let items = TDT_ITEMS.lock();
        let d = sets.get_mut(dataset as u64, "dataset")?;
        let new = items.get(dataItem as u64, "dataItem")?;
        if d.owns {
            return Err(Error::new(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                "the dataset was filled by acltdtReceiveTensor and owns its items: no item can be added",
            ));
        }
        if let Some(dev) = on_device(new) {
            let other = d
                .items
                .iter()
                .filter_map(|h| items.peek(*h).and_then(on_device))
                .next();
            if other.is_some_and(|o| o != dev) {
                return Err(Error::invalid(
                    "the items of a dataset must all be host memory or all device memory",
                ));
            }
        }
        d.items.push(dataItem as u64);
        Ok(())
    })
}

/// `size_t acltdtGetDatasetSize(const acltdtDataset *dataset)`
#[no_mangle]
pub extern "C" fn acltdtGetDatasetSize(dataset: *const c_void) -> usize {
    boundary_value("acltdtGetDatasetSize", 0, || {
        Ok(TDT_DATASETS
            .lock()
            .get(dataset as u64, "dataset")?
            .items
            .len())
    })
}

/// `const char *acltdtGetDatasetName(const acltdtDataset *dataset)`: the channel name a
/// received dataset came from ("" otherwise).
#[no_mangle]
pub extern "C" fn acltdtGetDatasetName(dataset: *const c_void) -> *const c_char {
    boundary_value("acltdtGetDatasetName", std::ptr::null(), || {
        // The CString lives as long as the dataset (its heap buffer does not move).
        Ok(TDT_DATASETS
            .lock()
            .get(dataset as u64, "dataset")?
            .name
            .as_ptr())
    })
}

fn create_channel(device: u32, name: *const c_char, capacity: Option<usize>) -> Result<u64> {
    non_null(name, "name")?;
    // SAFETY: non-NULL, NUL-terminated (the caller's contract).
    let n = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    if n.len() + 1 > MAX_NAME {
        return Err(Error::invalid(format!(
            "name {n:?} is {} bytes long with its NUL: at most {MAX_NAME}",
            n.len() + 1
        )));
    }
    if capacity == Some(0) {
        return Err(Error::invalid(
            "capacity = 0: a channel holds at least one dataset",
        ));
    }
    let rt = runtime::get()?;
    let dev = i32::try_from(device).unwrap_or(i32::MAX);
    rt.physical_device(dev)?;
    let queue = {
        let mut queues = TDT_QUEUES.lock();
        let q = queues
            .entry((device, n.clone()))
            .or_insert_with(|| {
                Arc::new(Queue {
                    st: Mutex::new(QueueState {
                        q: VecDeque::new(),
                        capacity,
                        stopped: false,
                        handles: 0,
                    }),
                    cv: Condvar::new(),
                })
            })
            .clone();
        q.st.lock().handles += 1;
        q
    };
    Ok(TDT_CHANNELS.lock().insert(Channel {
        device,
        name: n,
        queue,
    }))
}

/// `acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name)`
#[no_mangle]
pub unsafe extern "C" fn acltdtCreateChannel(deviceId: u32, name: *const c_char) -> *mut c_void {
    boundary_value("acltdtCreateChannel", std::ptr::null_mut(), || {
        Ok(create_channel(deviceId, name, None)? as *mut c_void)
    })
}

/// `acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId, const char *name,
/// size_t capacity)`
#[no_mangle]
pub unsafe extern "C" fn acltdtCreateChannelWithCapacity(
    deviceId: u32,
    name: *const c_char,
    capacity: usize,
) -> *mut c_void {
    boundary_value(
        "acltdtCreateChannelWithCapacity",
        std::ptr::null_mut(),
        || Ok(create_channel(deviceId, name, Some(capacity))? as *mut c_void),
    )
}

/// The queue of a channel handle, how messages name it, and its name.
fn queue_of(handle: *const c_void) -> Result<(Arc<Queue>, String, String)> {
    let chans = TDT_CHANNELS.lock();
    let c = chans.get(handle as u64, "handle")?;
    Ok((
        c.queue.clone(),
        format!("channel {:?} of device {}", c.name, c.device),
        c.name.clone(),
    ))
}

/// `aclError acltdtStopChannel(acltdtChannelHandle *handle)`
#[no_mangle]
pub extern "C" fn acltdtStopChannel(handle: *mut c_void) -> i32 {
    boundary("acltdtStopChannel", || {
        let (q, _, _) = queue_of(handle)?;
        q.st.lock().stopped = true;
        q.cv.notify_all();
        Ok(())
    })
}

/// `aclError acltdtDestroyChannel(acltdtChannelHandle *handle)`: the queue goes with its
/// last handle.
#[no_mangle]
pub extern "C" fn acltdtDestroyChannel(handle: *mut c_void) -> i32 {
    boundary("acltdtDestroyChannel", || {
        let c = TDT_CHANNELS.lock().remove(handle as u64, "handle")?;
        let last = {
            let mut st = c.queue.st.lock();
            st.handles -= 1;
            if st.handles == 0 {
                st.stopped = true;
            }
            st.handles == 0
        };
        c.queue.cv.notify_all();
        if last {
            TDT_QUEUES.lock().remove(&(c.device, c.name));
        }
        Ok(())
    })
}

/// `aclError acltdtCleanChannel(acltdtChannelHandle *handle)`: drop every queued dataset.
#[no_mangle]
pub extern "C" fn acltdtCleanChannel(handle: *mut c_void) -> i32 {
    boundary("acltdtCleanChannel", || {
        let (q, _, _) = queue_of(handle)?;
        q.st.lock().q.clear();
        q.cv.notify_all();
        Ok(())
    })
}

/// The deadline of a `timeout` in ms (-1: none), or an error for other negative values.
fn deadline(timeout: i32) -> Result<Option<Instant>> {
    match timeout {
        -1 => Ok(None),
        t if t >= 0 => Ok(Some(Instant::now() + Duration::from_millis(t as u64))),
        t => Err(Error::invalid(format!(
            "timeout = {t} is invalid: expected -1 (wait for ever) or a number of ms >= 0"
        ))),
    }
}

/// Copy the bytes of an item for the queue.
fn payload(i: &Item) -> Result<Vec<u8>> {
    let (p, n) = match i.data {
        Data::Borrowed(p, n) => (p, n),
        Data::Owned(ref v) => return Ok(v.clone()),
    };
    if n == 0 {
        return Ok(Vec::new());
    }
    if p == 0 {
        return Err(Error::invalid(format!(
            "a data item has {n} bytes of data at NULL"
        )));
    }
    let src = if npu_emu::memory::is_canonical(p as u64) {
        runtime::get()?
            .node
            .check(p as u64, n as u64, "the data item's data")?
    } else {
        p as *mut u8
    };
    // SAFETY: device memory checked by the node; host memory is the caller's `size` bytes at
    // `data` (acltdtCreateDataItem's contract).
    Ok(unsafe { std::slice::from_raw_parts(src, n) }.to_vec())
}

/// `aclError acltdtSendTensor(const acltdtChannelHandle *handle, const acltdtDataset *dataset,
/// int32_t timeout)`
#[no_mangle]
pub extern "C" fn acltdtSendTensor(
    handle: *const c_void,
    dataset: *const c_void,
    timeout: i32,
) -> i32 {
    boundary("acltdtSendTensor", || {
        let (q, what, _) = queue_of(handle)?;
        let until = deadline(timeout)?;
        let msg: Message = {
            let sets = TDT_DATASETS.lock();
            let items = TDT_ITEMS.lock();
            let d = sets.get(dataset as u64, "dataset")?;
            let mut m = Vec::with_capacity(d.items.len());
            for (k, h) in d.items.iter().enumerate() {
                let i = items.get(*h, &format!("item {k} of the dataset"))?;
                if ![
                    ACL_TENSOR_DATA_TENSOR,
                    ACL_TENSOR_DATA_END_OF_SEQUENCE,
                    ACL_TENSOR_DATA_ABNORMAL,
                ]
                .contains(&i.tdt_type)
                {
                    return Err(Error::invalid(format!(
                        "item {k}: tdtType = {} is invalid: expected ACL_TENSOR_DATA_TENSOR, ACL_TENSOR_DATA_END_OF_SEQUENCE or ACL_TENSOR_DATA_ABNORMAL",
                        i.tdt_type
                    )));
                }
                m.push((i.tdt_type, i.dims.clone(), i.dtype, payload(i)?));
            }
            m
        };
        let mut st = q.st.lock();
        loop {
            if st.stopped {
                return Err(Error::new(
                    ACL_ERROR_FAILURE,
                    format!("{what} was stopped (acltdtStopChannel) or destroyed"),
                ));
            }
            if st.capacity.is_none_or(|c| st.q.len() < c) {
                st.q.push_back(msg);
                q.cv.notify_all();
                return Ok(());
            }
            if !wait(&q.cv, &mut st, until) {
                return Err(Error::new(
                    ACL_ERROR_RT_QUEUE_FULL,
                    format!(
                        "{what} is full ({} datasets) and stayed so for timeout = {timeout} ms",
                        st.q.len()
                    ),
                ));
            }
        }
    })
}

/// Wait on the queue until notified or `until`; false when `until` passed.
fn wait(
    cv: &Condvar,
    st: &mut parking_lot::MutexGuard<'_, QueueState>,
    until: Option<Instant>,
) -> bool {
    match until {
        None => {
            cv.wait(st);
            true
        }
        Some(u) => {
            if Instant::now() >= u {
                return false;
            }
            cv.wait_until(st, u);
            true
        }
    }
}

/// `aclError acltdtReceiveTensor(const acltdtChannelHandle *handle, acltdtDataset *dataset,
/// int32_t timeout)`
#[no_mangle]
pub extern "C" fn acltdtReceiveTensor(
    handle: *const c_void,
    dataset: *mut c_void,
    timeout: i32,
) -> i32 {
    boundary("acltdtReceiveTensor", || {
        let (q, what, name) = queue_of(handle)?;
        let until = deadline(timeout)?;
        {
            let sets = TDT_DATASETS.lock();
            let d = sets.get(dataset as u64, "dataset")?;
            if !d.items.is_empty() {
                return Err(Error::invalid(format!(
                    "dataset has {} items: it must be empty to receive into",
                    d.items.len()
                )));
            }
        }
        let msg = {
            let mut st = q.st.lock();
            loop {
                if let Some(m) = st.q.pop_front() {
                    q.cv.notify_all();
                    break m;
                }
                if st.stopped {
                    return Err(Error::new(
                        ACL_ERROR_FAILURE,
                        format!("{what} was stopped (acltdtStopChannel) or destroyed"),
                    ));
                }
                if !wait(&q.cv, &mut st, until) {
                    return Err(Error::new(
                        ACL_ERROR_RT_QUEUE_EMPTY,
                        format!("{what} is empty and stayed so for timeout = {timeout} ms"),
                    ));
                }
            }
        };
        let name = CString::new(name).unwrap_or_default();
        let hs: Vec<u64> = {
            let mut items = TDT_ITEMS.lock();
            msg.into_iter()
                .map(|(t, dims, dtype, bytes)| {
                    items.insert(Item {
                        tdt_type: t,
                        dims,
                        dtype,
                        data: Data::Owned(bytes),
                    })
                })
                .collect()
        };
        let mut sets = TDT_DATASETS.lock();
        match sets.get_mut(dataset as u64, "dataset") {
            Ok(d) => {
                d.items = hs;
                d.owns = true;
                d.name = name;
                Ok(())
            }
            Err(e) => {
                // Destroyed while we waited: the items go too.
                let mut items = TDT_ITEMS.lock();
                for h in hs {
                    let _ = items.remove(h, "item");
                }
                Err(e.into())
            }
        }
    })
}

/// `aclError acltdtQueryChannelSize(const acltdtChannelHandle *handle, size_t *size)`: the
/// datasets queued now.
#[no_mangle]
pub extern "C" fn acltdtQueryChannelSize(handle: *const c_void, size: *mut usize) -> i32 {
    boundary("acltdtQueryChannelSize", || {
        let (q, _, _) = queue_of(handle)?;
        let n = q.st.lock().q.len();
        out(size, "size", n)
    })
}
