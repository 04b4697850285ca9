//! The LSTM operators of the single-operator API (`aclopCompileAndExecute` / `aclopExecuteV2`
//! with op type "DynamicRNN", "DynamicRNNV2", "DynamicRNNGrad" or "DynamicRNNV2Grad"): the
//! descriptors, buffers and attributes checked here, the computation in
//! `npu_emu::kernels::dynamic_rnn` (which documents the layout).
//!
//! Inputs in CANN's prototype order; an optional input is absent when its descriptor has
//! data type `ACL_DT_UNDEFINED` (torch_npu's empty input), its buffer is NULL with size 0, or
//! (for the gradients' `seq_length`, `mask` and peephole weights, which torch_npu passes as
//! 0-d zeros) it is a scalar:
//! - DynamicRNN: x, w, b, seq_length, init_h, init_c, wci, wcf, wco, mask
//! - DynamicRNNV2: x, weight_input, weight_hidden, b, seq_length, init_h, init_c, wci, wcf,
//!   wco, mask
//! - DynamicRNNGrad: x, w, b, y, init_h, init_c, h, c, dy, dh, dc, i, j, f, o, tanhc,
//!   seq_length, mask, wci, wcf, wco → dw, db, dx, dh_prev, dc_prev
//! - DynamicRNNV2Grad: x, w_x, w_h, y, init_h, init_c, h, c, dy, dh, dc, i, j, f, o, tanhc,
//!   seq_length, wci, wcf, wco, mask → dw_x, dw_h, db, dx, dh_prev, dc_prev
//! - the forward outputs: y, output_h, output_c, i, j, f, o, tanhc.
//!
//! Attributes (all optional, CANN's defaults): `cell_type` "LSTM" (the only one); `direction`
//! "UNIDIRECTIONAL" or "REDIRECTIONAL"; `gate_order` "ijfo" (or "ifjo", "ifco", …);
//! `forget_bias` (0.0); `time_major` true (the only layout); `use_peephole` false, `num_proj`
//! 0, `cell_clip` ≤ 0 (no clipping), `activation` "tanh" and `recurrent_activation` "sigmoid"
//! (the only ones modelled: anything else is `ACL_ERROR_OP_ATTR_NOT_MATCH` naming it);
//! `keep_prob`, `cell_depth`, `is_training`, `stateful`, `merge_mode` are read by nothing
//! (the saved gates are always written).
//!
//! FLOAT and FLOAT16 tensors, each stored ND or FRACTAL_NZ (torch_npu keeps the saved gates in
//! NZ when training). Wrong counts, shapes or data types are `ACL_ERROR_OP_INPUT_NOT_MATCH` /
//! `ACL_ERROR_OP_OUTPUT_NOT_MATCH` naming the tensor.

use super::op::{
    attrs_of, element, AttrValue, Call, ACL_ERROR_OP_ATTR_NOT_MATCH, ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_OP_OUTPUT_NOT_MATCH, ACL_ERROR_UNSUPPORTED_DATA_TYPE,
};
use crate::api::helpers::with_live;
use crate::api::tensor_desc::{format_text, snapshot, TensorDesc};
use crate::runtime;
use npu_emu::formats::{self, C0Rule};
use npu_emu::kernels::dynamic_rnn::{self as k, Attrs, Variant};
use npu_emu::kernels::{self, Operand, Tensor};
use npu_emu::ops::{DType, View};
use npu_emu::Error;
use std::collections::BTreeMap;

const ACL_DT_UNDEFINED: i32 = -1;

/// The four operators: (op type, variant, gradient, input count, output count).
const OPS: [(&str, Variant, bool, usize, usize); 4] = [
    ("DynamicRNN", Variant::Joint, false, 10, 8),
    ("DynamicRNNV2", Variant::Split, false, 11, 8),
    ("DynamicRNNGrad", Variant::Joint, true, 21, 5),
    ("DynamicRNNV2Grad", Variant::Split, true, 21, 6),
];

/// Whether `op` is one of this file's operators.
pub(crate) fn handles(op: &str) -> bool {
    OPS.iter().any(|o| o.0 == op)
}

/// A descriptor and its buffer, or None for an absent optional input.
struct Arg {
    desc: TensorDesc,
    addr: u64,
    size: usize,
}

fn input_arg(c: &Call, i: usize) -> Result<Option<Arg>, Error> {
    arg(c, i, false)
}

fn arg(c: &Call, i: usize, output: bool) -> Result<Option<Arg>, Error> {
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
    if !output && (desc.dtype == ACL_DT_UNDEFINED || (addr == 0 && size == 0)) {
        return Ok(None);
    }
    Ok(Some(Arg { desc, addr, size }))
}

fn mismatch(output: bool, msg: String) -> Error {
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
    fn shape(&self) -> Vec<usize> {
        self.desc.dims.iter().map(|&d| d.max(0) as usize).collect()
    }

    /// The kernel's view of this tensor: the device range as stored, and the conversion of a
    /// FRACTAL_NZ tensor.
    fn tensor(&self, op: &str, name: String, output: bool) -> Result<Tensor, Error> {
        let d = &self.desc;
        let dtype = match DType::from_acl(d.dtype) {
            Some(t @ (DType::F32 | DType::F16)) => t,
            _ => {
                return Err(Error::new(
                    ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                    format!(
                        "op type \"{op}\": {name} has data type {}; the LSTM operators take \
                         float and float16",
                        d.dtype
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
        let private = if sf & 0xff == formats::FORMAT_FRACTAL_NZ {
            let logical = d.dims.clone();
            let plan = |req: formats::Request| {
                formats::plan(&req).map_err(|e| {
                    mismatch(
                        output,
                        format!(
                            "op type \"{op}\": {name} is stored as {} {sshape:?}, which does \
                             not hold its shape {logical:?}: {e}",
                            format_text(sf)
                        ),
                    )
                })
            };
            let to_nd = plan(formats::Request {
                src_format: sf,
                src_shape: &sshape,
                dst_format: formats::FORMAT_ND,
                dst_shape: Some(&logical),
                dtype: d.dtype,
                groups: 1,
                rule: C0Rule::Ge,
            })?;
            let from_nd = plan(formats::Request {
                src_format: formats::FORMAT_ND,
                src_shape: &logical,
                dst_format: sf,
                dst_shape: Some(&sshape),
                dtype: d.dtype,
                groups: 1,
                rule: C0Rule::Ge,
            })?;
            Some((to_nd, from_nd))
        } else if sshape != d.dims {
            return Err(mismatch(
                output,
                format!(
                    "op type \"{op}\": {name} is stored as {} {sshape:?}, not its shape {:?}; \
                     the LSTM operators take ND and FRACTAL_NZ tensors",
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

fn attr_err(op: &str, msg: String) -> Error {
    Error::new(
        ACL_ERROR_OP_ATTR_NOT_MATCH,
        format!("op type \"{op}\": {msg}"),
    )
}

/// A string attr. One set with another kind keeps the default: torch_npu's
/// `Attr("cell_type", "LSTM")` binds the literal to its bool overload (DynamicRNNGrad), and
/// CANN runs that call.
fn get_str<'a>(a: &'a BTreeMap<String, AttrValue>, key: &str, default: &'a str) -> &'a str {
    match a.get(key) {
        Some(AttrValue::String(s)) => s,
        _ => default,
    }
}

fn get_num(
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

/// Read and check the attributes.
fn attrs(op: &str, c: &Call) -> Result<Attrs, Error> {
    let a = attrs_of(c.attr)?;
    let only = |key: &str, default: &str, allowed: &[&str]| -> Result<(), Error> {
        let v = get_str(&a, key, default);
        if allowed.iter().any(|x| x.eq_ignore_ascii_case(v)) {
            Ok(())
        } else {
            Err(attr_err(
                op,
                format!(
                    "attr {key} = \"{v}\" is not modelled by npu-emu (supported: {})",
                    allowed.join(", ")
                ),
            ))
        }
    };
    only("cell_type", "LSTM", &["LSTM"])?;
    only("activation", "tanh", &["tanh"])?;
    only("recurrent_activation", "sigmoid", &["sigmoid"])?;
    let direction = get_str(&a, "direction", "UNIDIRECTIONAL");
    let reverse = match direction {
        "UNIDIRECTIONAL" => false,
        "REDIRECTIONAL" => true,
        other => {
            return Err(attr_err(
                op,
                format!(
                    "attr direction = \"{other}\": the operator runs one direction, \
                     \"UNIDIRECTIONAL\" or \"REDIRECTIONAL\" (run the two directions as two \
                     calls)"
                ),
            ))
        }
    };
    for (key, default, ok, what) in [
        (
            "time_major",
            1.0,
            1.0,
            "true (x is [num_step, batch, input_size])",
        ),
        (
            "use_peephole",
            0.0,
            0.0,
            "false (peephole weights are not modelled)",
        ),
        ("num_proj", 0.0, 0.0, "0 (projection is not modelled)"),
    ] {
        let v = get_num(op, &a, key, default)?;
        if v != ok {
            return Err(attr_err(
                op,
                format!("attr {key} = {v} is not supported: it must be {what}"),
            ));
        }
    }
    let clip = get_num(op, &a, "cell_clip", -1.0)?;
    if clip > 0.0 {
        return Err(attr_err(
            op,
            format!("attr cell_clip = {clip}: clipping the cell state is not modelled (use -1)"),
        ));
    }
    let order = get_str(&a, "gate_order", "ijfo");
    let blocks = k::gate_blocks(order).map_err(|m| attr_err(op, format!("attr {m}")))?;
    Ok(Attrs {
        reverse,
        blocks,
        forget_bias: get_num(op, &a, "forget_bias", 0.0)? as f32,
    })
}

/// Names of each operator's inputs, in prototype order.
fn input_names(op: &str) -> &'static [&'static str] {
    match op {
        "DynamicRNN" => &[
            "x",
            "w",
            "b",
            "seq_length",
            "init_h",
            "init_c",
            "wci",
            "wcf",
            "wco",
            "mask",
        ],
        "DynamicRNNV2" => &[
            "x",
            "weight_input",
            "weight_hidden",
            "b",
            "seq_length",
            "init_h",
            "init_c",
            "wci",
            "wcf",
            "wco",
            "mask",
        ],
        "DynamicRNNGrad" => &[
            "x",
            "w",
            "b",
            "y",
            "init_h",
            "init_c",
            "h",
            "c",
            "dy",
            "dh",
            "dc",
            "i",
            "j",
            "f",
            "o",
            "tanhc",
            "seq_length",
            "mask",
            "wci",
            "wcf",
            "wco",
        ],
        _ => &[
            "x",
            "w_x",
            "w_h",
            "y",
            "init_h",
            "init_c",
            "h",
            "c",
            "dy",
            "dh",
            "dc",
            "i",
            "j",
            "f",
            "o",
            "tanhc",
            "seq_length",
            "wci",
            "wcf",
            "wco",
            "mask",
        ],
    }
}

fn output_names(op: &str) -> &'static [&'static str] {
    match op {
        "DynamicRNN" | "DynamicRNNV2" => &k::OUT_NAMES,
        "DynamicRNNGrad" => &["dw", "db", "dx", "dh_prev", "dc_prev"],
        _ => &["dw_x", "dw_h", "db", "dx", "dh_prev", "dc_prev"],
    }
}

/// Validate one of the four operators and enqueue it on the call's stream.
pub(crate) fn execute(api: &'static str, c: &Call) -> Result<(), Error> {
    let op_type = super::op::op_name(c)?;
    let &(op, variant, grad, nin, nout) = OPS
        .iter()
        .find(|o| o.0 == op_type)
        .ok_or_else(|| Error::invalid(format!("{op_type} is not an LSTM operator")))?;
    let (ni, no) = (c.num_inputs as usize, c.num_outputs as usize);
    // the trailing optional inputs (peephole weights, mask) may be left out
    let min_in = if grad { 16 } else { 3 };
    if ni < min_in || ni > nin {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\" has {nin} inputs ({}; the last {} optional), but numInputs \
                 = {ni}",
                input_names(op).join(", "),
                nin - min_in
            ),
        ));
    }
    if no != nout {
        return Err(mismatch(
            true,
            format!(
                "op type \"{op}\" has {nout} outputs ({}), but numOutputs = {no}",
                output_names(op).join(", ")
            ),
        ));
    }
    let a = attrs(op, c)?;
    let mut ins: Vec<Option<Arg>> = (0..ni).map(|i| input_arg(c, i)).collect::<Result<_, _>>()?;
    ins.resize_with(nin, || None);
    // the gradients' placeholders: 0-d zeros for an absent seq_length, mask, peephole weights
    if grad {
        for slot in &mut ins[16..] {
            if slot.as_ref().is_some_and(|t| t.desc.dims.is_empty()) {
                *slot = None;
            }
        }
    }
    let outs: Vec<Arg> = (0..no)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let names_in = input_names(op);
    let names_out = output_names(op);
    let in_shapes: Vec<Option<Vec<usize>>> =
        ins.iter().map(|t| t.as_ref().map(Arg::shape)).collect();
    let in_refs: Vec<Option<&[usize]>> = in_shapes.iter().map(|s| s.as_deref()).collect();
    let out_shapes: Vec<Vec<usize>> = outs.iter().map(Arg::shape).collect();
    let out_refs: Vec<&[usize]> = out_shapes.iter().map(|s| s.as_slice()).collect();
    let dims = if grad {
        k::grad_dims(variant, &in_refs, &out_refs)
    } else {
        k::forward_dims(variant, &in_refs, &out_refs)
    }
    .map_err(|e| {
        let (side, names) = if e.output {
            ("output", names_out)
        } else {
            ("input", names_in)
        };
        mismatch(
            e.output,
            format!(
                "op type \"{op}\": {side} {} ({}): {}",
                e.index,
                names.get(e.index).copied().unwrap_or("?"),
                e.msg
            ),
        )
    })?;
    // which inputs the computation reads (peephole weights and mask are refused or unused)
    let used: &[usize] = match (variant, grad) {
        (Variant::Joint, false) => &[0, 1, 2, 3, 4, 5],
        (Variant::Split, false) => &[0, 1, 2, 3, 4, 5, 6],
        (Variant::Joint, true) => &[0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
        (Variant::Split, true) => &[0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    };
    let mut tensors: Vec<Option<Tensor>> = vec![None; nin];
    let mut dtype = None;
    for &i in used {
        if let Some(t) = &ins[i] {
            let name = format!("input {i} ({})", names_in[i]);
            let is_seq = names_in[i] == "seq_length";
            let tensor = if is_seq && matches!(t.desc.dtype, 3 | 9) {
                // lengths [B]: INT32 (3) or INT64 (9)
                seq_lengths(op, t, name)?
            } else {
                t.tensor(op, name, false)?
            };
            if !is_seq {
                check_dtype(op, &mut dtype, &tensor, false)?;
            }
            tensors[i] = Some(tensor);
        }
    }
    let out_tensors: Vec<Tensor> = outs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let tensor = t.tensor(op, format!("output {i} ({})", names_out[i]), true)?;
            check_dtype(op, &mut dtype, &tensor, true)?;
            Ok(tensor)
        })
        .collect::<Result<_, Error>>()?;
    let rt = runtime::get()?;
    let stream = rt.stream(c.stream)?;
    kernels::enqueue_tensors(&rt, &stream, api, op, tensors, out_tensors, move |i, o| {
        run(variant, grad, &dims, &a, i, o)
    })
}

/// One data type for every tensor but `seq_length`.
fn check_dtype(
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

/// `seq_length` given as lengths `[B]` (INT32 / INT64).
fn seq_lengths(op: &str, t: &Arg, name: String) -> Result<Tensor, Error> {
    let dtype = DType::from_acl(t.desc.dtype).unwrap_or(DType::I32);
    let shape = t.shape();
    let need = shape.iter().product::<usize>() * dtype.size();
    if t.size < need || (need > 0 && t.addr == 0) {
        return Err(Error::invalid(format!(
            "op type \"{op}\": the buffer of {name} holds {} bytes, but the tensor needs {need}",
            t.size
        )));
    }
    Ok(Tensor {
        name,
        operand: Operand {
            addr: t.addr,
            len: need as u64,
        },
        dtype,
        shape,
        private: None,
    })
}

/// The stream task: hand the views to the kernel by role.
fn run(
    variant: Variant,
    grad: bool,
    d: &k::Dims,
    a: &Attrs,
    i: &[Option<&View>],
    o: &[View],
) -> Result<(), String> {
    let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
    if !grad {
        let (w, rest) = match variant {
            Variant::Joint => (vec![req(1)?], 2),
            Variant::Split => (vec![req(1)?, req(2)?], 3),
        };
        return k::forward(
            d,
            a,
            &k::Forward {
                x: req(0)?,
                w,
                b: i[rest],
                seq: i[rest + 1],
                h0: i[rest + 2],
                c0: i[rest + 3],
                outs: o,
            },
        );
    }
    let (w, dw, rest) = match variant {
        Variant::Joint => (vec![req(1)?], vec![&o[0]], 1),
        Variant::Split => (vec![req(1)?, req(2)?], vec![&o[0], &o[1]], 2),
    };
    k::backward(
        d,
        a,
        &k::Grad {
            x: req(0)?,
            w,
            h0: i[4],
            c0: i[5],
            dy: req(8)?,
            dh: i[9],
            dc: i[10],
            saved: [
                req(11)?,
                req(12)?,
                req(13)?,
                req(14)?,
                req(6)?,
                req(7)?,
                req(15)?,
            ],
            seq: i[16],
            dw,
            db: &o[rest],
            dx: &o[rest + 1],
            dh_prev: &o[rest + 2],
            dc_prev: &o[rest + 3],
        },
    )
}
