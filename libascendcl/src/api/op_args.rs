//! What the single-operator API's operators share (`op_rnn.rs`, `op_tensor.rs`): one
//! input or output of a call as a descriptor and its buffer ([`Arg`]), turned into the
//! kernel's [`Tensor`] (device range, data type, shape, FRACTAL_NZ conversion), integer
//! lists given as host or constant tensors ([`int_list`]), the attribute readers and the
//! error codes of a tensor that does not fit.

use super::op::{
    element, AttrValue, Call, ACL_ERROR_OP_ATTR_NOT_MATCH, ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_OP_OUTPUT_NOT_MATCH, ACL_ERROR_UNSUPPORTED_DATA_TYPE,
};
use crate::api::helpers::with_live;
use crate::api::tensor_desc::{format_text, snapshot, TensorDesc};
use npu_emu::formats::{self, C0Rule};
use npu_emu::kernels::{self, Operand, Tensor};
use npu_emu::memory::Space;
use npu_emu::ops::{DType, View};
use npu_emu::Error;
use std::collections::BTreeMap;

pub(crate) const ACL_DT_UNDEFINED: i32 = -1;

/// A descriptor and its buffer, or None for an absent optional input.
pub(crate) struct Arg {
    pub(crate) desc: TensorDesc,
    pub(crate) addr: u64,
    pub(crate) size: usize,
}

pub(crate) fn input_arg(c: &Call, i: usize) -> Result<Option<Arg>, Error> {
    arg(c, i, false)
}

pub(crate) fn arg(c: &Call, i: usize, output: bool) -> Result<Option<Arg>, Error> {
    let (descs, bufs, side) = if output {
        (c.output_desc, c.outputs, "outputDesc")
    } else {
        (c.input_desc, c.inputs, "inputDesc")
    };
    // SAFETY: non-NULL arrays of at least `num` entries (checked by the caller), `i < num`.
    let (dp, bp) = unsafe { (descs.add(i).read_unaligned(), bufs.add(i).read_unaligned()) };
    if dp.is_null() && !output {
        return Ok(None);
    }
    let desc = snapshot(element(descs, i, side)?, &format!("{side}[{i}]"))?;
    let (addr, size) = if bp.is_null() {
        (0, 0)
    } else {
        with_live(bp, |b| (b.data as u64, b.size))?
    };
    // an input is left out by an undefined data type, or by an empty buffer without a
    // constant value (a constant input's value is in its description: aclSetTensorConst)
    if !output
        && (desc.dtype == ACL_DT_UNDEFINED || (addr == 0 && size == 0 && desc.const_data.is_none()))
    {
        return Ok(None);
    }
    Ok(Some(Arg { desc, addr, size }))
}

pub(crate) fn mismatch(output: bool, msg: String) -> Error {
    Error::new(
        if output {
            ACL_ERROR_OP_OUTPUT_NOT_MATCH
        } else {
            ACL_ERROR_OP_INPUT_NOT_MATCH
        },
        msg,
    )
}

impl Arg {
    pub(crate) fn shape(&self) -> Vec<usize> {
        self.desc.dims.iter().map(|&d| d.max(0) as usize).collect()
    }

    /// The kernel's view of this tensor: the device range as stored, and the conversion of a
    /// FRACTAL_NZ tensor.
    pub(crate) fn tensor(
        &self,
        op: &str,
        name: String,
        output: bool,
        dtypes: &[DType],
    ) -> Result<Tensor, Error> {
        let d = &self.desc;
        let dtype = match DType::from_acl(d.dtype) {
            Some(t) if dtypes.contains(&t) => t,
            _ => {
                return Err(Error::new(
                    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                    format!(
                        "op type \"{op}\": {name} has data type {}; the operator takes {}",
                        d.dtype,
                        npu_emu::ops::dtype::names(dtypes)
                    ),
                ))
            }
        };
        if d.dims.iter().chain(&d.storage_dims).any(|&v| v < 0) {
            return Err(Error::invalid(format!(
                "op type \"{op}\": {name} has a dynamic shape {:?}; tensor descriptors must be \
                 static when executing",
                d.dims
            )));
        }
        let shape = self.shape();
        let (sf, sshape) = d.storage(1)?;
        // A private storage format (FRACTAL_NZ, FRACTAL_Z, NC1HWC0, …) is converted to and
        // from the tensor's origin format; an ND origin of 4 (5) dimensions stands for NCHW
        // (NCDHW) except beside FRACTAL_NZ, as torch_npu describes its tensors.
        let private = if !super::op::is_plain(sf) {
            let logical = d.dims.clone();
            let nz = sf & 0xff == formats::FORMAT_FRACTAL_NZ;
            let origin = if d.format < 0 {
                formats::FORMAT_ND
            } else {
                super::op::base_format(d.format, logical.len(), nz)
            };
            let groups = i64::from((sf >> 8) & 0xffff).max(1);
            // one conversion each way: storage -> origin, origin -> storage, with the C0 the
            // storage shape was made with (`plan_any_c0`)
            let plan = |from: (i32, &[i64]), to: (i32, &[i64])| {
                super::op::plan_any_c0(&formats::Request {
                    src_format: from.0,
                    src_shape: from.1,
                    dst_format: to.0,
                    dst_shape: Some(to.1),
                    dtype: d.dtype,
                    groups,
                    rule: C0Rule::Ge,
                })
                .map_err(|e| {
                    mismatch(
                        output,
                        format!(
                            "op type \"{op}\": {name} is stored as {} {sshape:?}, which does \
                             not hold its shape {logical:?} ({}): {e}",
                            format_text(sf),
                            format_text(origin)
                        ),
                    )
                })
            };
            let to_nd = plan((sf, &sshape), (origin, &logical))?;
            let from_nd = plan((origin, &logical), (sf, &sshape))?;
            Some((to_nd, from_nd))
        } else if sshape != d.dims {
            return Err(mismatch(
                output,
                format!(
                    "op type \"{op}\": {name} is stored as {} {sshape:?}, not its shape {:?}",
                    format_text(sf),
                    d.dims
                ),
            ));
        } else {
            None
        };
        let need = match &private {
            Some((to_nd, _)) => to_nd.src_bytes(),
            None => shape.iter().product::<usize>() * dtype.size(),
        };
        if self.size < need {
            return Err(Error::invalid(format!(
                "op type \"{op}\": the buffer of {name} holds {} bytes, but the tensor needs \
                 {need}",
                self.size
            )));
        }
        if need > 0 && self.addr == 0 {
            return Err(Error::invalid(format!(
                "op type \"{op}\": {name} has a NULL data address"
            )));
        }
        Ok(Tensor {
            name,
            operand: Operand {
                addr: self.addr,
                len: need as u64,
            },
            dtype,
            shape,
            private,
        })
    }
}

pub(crate) fn attr_err(op: &str, msg: String) -> Error {
    Error::new(
        ACL_ERROR_OP_ATTR_NOT_MATCH,
        format!("op type \"{op}\": {msg}"),
    )
}

/// A string attr. One set with another kind keeps the default: torch_npu's
/// `Attr("cell_type", "LSTM")` binds the literal to its bool overload (DynamicRNNGrad), and
/// CANN runs that call.
pub(crate) fn get_str<'a>(
    a: &'a BTreeMap<String, AttrValue>,
    key: &str,
    default: &'a str,
) -> &'a str {
    match a.get(key) {
        Some(AttrValue::String(s)) => s,
        _ => default,
    }
}

pub(crate) fn get_num(
    op: &str,
    a: &BTreeMap<String, AttrValue>,
    key: &str,
    default: f64,
) -> Result<f64, Error> {
    match a.get(key) {
        None => Ok(default),
        Some(AttrValue::Float(f)) => Ok(f64::from(*f)),
        Some(AttrValue::Int(i)) => Ok(*i as f64),
        Some(AttrValue::Bool(b)) => Ok(f64::from(u8::from(*b))),
        Some(v) => Err(attr_err(
            op,
            format!(
                "attr {key} must be a number, but it was set as a {}",
                v.kind()
            ),
        )),
    }
}

/// One data type for every tensor but `seq_length`.
pub(crate) fn check_dtype(
    op: &str,
    dtype: &mut Option<(DType, String)>,
    t: &Tensor,
    output: bool,
) -> Result<(), Error> {
    match dtype {
        None => {
            *dtype = Some((t.dtype, t.name.clone()));
            Ok(())
        }
        Some((d, first)) if *d != t.dtype => Err(mismatch(
            output,
            format!(
                "op type \"{op}\": {} is {}, but {first} is {}; every tensor of the call has one \
                 data type",
                t.name,
                t.dtype.name(),
                d.name()
            ),
        )),
        _ => Ok(()),
    }
}

/// Enqueue an operator's kernel on the call's stream ([`kernels::enqueue_tensors`] on this
/// process's runtime).
pub(crate) fn enqueue(
    api: &'static str,
    op: &'static str,
    c: &Call,
    in_place: bool,
    inputs: Vec<Option<Tensor>>,
    outputs: Vec<Tensor>,
    f: impl FnOnce(&[Option<&View>], &[View]) -> Result<(), String> + Send + 'static,
) -> Result<(), Error> {
    let rt = crate::runtime::get()?;
    let stream = rt.stream(c.stream)?;
    kernels::enqueue_tensors(&rt, &stream, api, op, in_place, inputs, outputs, f)
}

/// `ACL_MEMTYPE_HOST` (`aclSetTensorPlaceMent`): the buffer is host memory.
const ACL_MEMTYPE_HOST: i32 = 1;

/// An integer list given as a tensor (INT32 or INT64, 0-D or 1-D): torch_npu passes
/// `IntArrayRef` inputs (a transpose's `perm`, a slice's `offsets`) as host tensors, with the
/// values also set as the descriptor's constant (`aclSetTensorConst`). Read from the constant,
/// else from a host buffer (placement ACL_MEMTYPE_HOST, or an address that is no device
/// allocation), else from device memory (a synchronous read: the list decides the plan).
pub(crate) fn int_list(op: &str, a: &Arg, name: &str) -> Result<Vec<i64>, Error> {
    let d = &a.desc;
    let (es, wide) = match d.dtype {
        3 => (4usize, false),
        9 => (8, true),
        t => {
            return Err(mismatch(
                false,
                format!(
                "op type \"{op}\": {name} must be an INT32 or INT64 list, but its data type is {t}"
            ),
            ))
        }
    };
    if d.dims.len() > 1 {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\": {name} must be a 1-D list, but its shape is {:?}",
                d.dims
            ),
        ));
    }
    let n = d.dims.first().map_or(1, |&v| v.max(0) as usize);
    let bytes = n * es;
    let raw = match host_bytes(op, a, name, bytes)? {
        Some(v) => v,
        None => {
            let rt = crate::runtime::get()?;
            let p = rt.node().check(a.addr, bytes as u64, name)?;
            // SAFETY: `p` is the alias of a checked device range of `bytes` bytes.
            unsafe { std::slice::from_raw_parts(p as *const u8, bytes) }.to_vec()
        }
    };
    Ok(raw
        .chunks(es)
        .map(|c| {
            if wide {
                i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))
            } else {
                i64::from(i32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
            }
        })
        .collect())
}

/// The first `bytes` bytes of a tensor that is not in device memory: its constant
/// (`aclSetTensorConst`), or its buffer when placed in host memory (ACL_MEMTYPE_HOST) or at an
/// address that is no device allocation. None for a tensor in device memory.
pub(crate) fn host_bytes(
    op: &str,
    a: &Arg,
    name: &str,
    bytes: usize,
) -> Result<Option<Vec<u8>>, Error> {
    if let Some(c) = &a.desc.const_data {
        if c.len() < bytes {
            return Err(Error::invalid(format!(
                "op type \"{op}\": {name}'s constant data holds {} bytes, but it needs {bytes}",
                c.len()
            )));
        }
        return Ok(Some(c[..bytes].to_vec()));
    }
    if a.size < bytes || (bytes > 0 && a.addr == 0) {
        return Err(Error::invalid(format!(
            "op type \"{op}\": the buffer of {name} holds {} bytes, but it needs {bytes}",
            a.size
        )));
    }
    let rt = crate::runtime::get()?;
    if a.desc.placement != ACL_MEMTYPE_HOST && rt.node().check(a.addr, bytes as u64, name).is_ok() {
        return Ok(None);
    }
    let mut v = vec![0u8; bytes];
    if bytes > 0 {
        // SAFETY: a host buffer of at least `bytes` bytes (the ACL contract for a tensor placed
        // in host memory; its size was checked above).
        v.copy_from_slice(unsafe { std::slice::from_raw_parts(a.addr as *const u8, bytes) });
    }
    Ok(Some(v))
}

/// A list-of-ints attr (required).
pub(crate) fn get_list(
    op: &str,
    a: &BTreeMap<String, AttrValue>,
    key: &str,
) -> Result<Vec<i64>, Error> {
    match a.get(key) {
        Some(AttrValue::ListInt(v)) => Ok(v.clone()),
        None => Err(attr_err(
            op,
            format!("attr {key} is required (aclopSetAttrListInt)"),
        )),
        Some(v) => Err(attr_err(
            op,
            format!(
                "attr {key} must be a list of ints (aclopSetAttrListInt), but it was set as a {}",
                v.kind()
            ),
        )),
    }
}

/// An int attr (or a bool, as 0 / 1).
pub(crate) fn get_int(
    op: &str,
    a: &BTreeMap<String, AttrValue>,
    key: &str,
    default: Option<i64>,
) -> Result<i64, Error> {
    match (a.get(key), default) {
        (Some(AttrValue::Int(i)), _) => Ok(*i),
        (Some(AttrValue::Bool(b)), _) => Ok(i64::from(*b)),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(attr_err(
            op,
            format!("attr {key} is required (aclopSetAttrInt)"),
        )),
        (Some(v), _) => Err(attr_err(
            op,
            format!(
                "attr {key} must be an int (aclopSetAttrInt), but it was set as a {}",
                v.kind()
            ),
        )),
    }
}
