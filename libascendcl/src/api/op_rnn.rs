//! The LSTM operators of the single-operator API (`aclopCompileAndExecute` / `aclopExecuteV2`
//! with op type "DynamicRNN", "DynamicRNNV2", "DynamicRNNGrad" or "DynamicRNNV2Grad"): the
//! descriptors, buffers and attributes checked here, the computation in
//! `npu_emu::kernels::dynamic_rnn` (which documents the layout). The GRU operators
//! "DynamicGRUV2" and "DynamicGRUV2Grad" (`torch_npu.npu_gru`) are read the same way
//! ([`execute_gru`]), computed by `npu_emu::kernels::dynamic_gru`.
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

use super::op::{attrs_of, AttrValue, Call};
use super::op_args::{
    arg, attr_err, check_dtype, enqueue, get_num, get_str, input_arg, mismatch, Arg,
};
use npu_emu::kernels::dynamic_gru as g;
use npu_emu::kernels::dynamic_rnn::{self as k, Attrs, Variant};
use npu_emu::kernels::{Operand, Tensor};
use npu_emu::ops::{DType, View};
use npu_emu::Error;
use std::collections::BTreeMap;

/// The data types of every tensor but `seq_length`.
const RNN_DTYPES: &[DType] = &[DType::F32, DType::F16];

/// The four operators: (op type, variant, gradient, input count, output count).
const OPS: [(&str, Variant, bool, usize, usize); 4] = [
    ("DynamicRNN", Variant::Joint, false, 10, 8),
    ("DynamicRNNV2", Variant::Split, false, 11, 8),
    ("DynamicRNNGrad", Variant::Joint, true, 21, 5),
    ("DynamicRNNV2Grad", Variant::Split, true, 21, 6),
];

/// The GRU operators: (op type, gradient, input count, output count).
const GRU_OPS: [(&str, bool, usize, usize); 2] = [
    ("DynamicGRUV2", false, 7, 6),
    ("DynamicGRUV2Grad", true, 14, 6),
];

/// Whether `op` is one of this file's operators.
pub(crate) fn handles(op: &str) -> bool {
    OPS.iter().any(|o| o.0 == op) || GRU_OPS.iter().any(|o| o.0 == op)
}

/// This file's operator types.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    OPS.iter().map(|o| o.0).chain(GRU_OPS.iter().map(|o| o.0))
}

/// Read and check the attributes.
/// attr `direction`: whether the operator runs backwards in time ("REDIRECTIONAL", CANN's
/// spelling) or forwards ("UNIDIRECTIONAL"); one call runs one direction.
fn direction(op: &str, a: &BTreeMap<String, AttrValue>) -> Result<bool, Error> {
    match get_str(a, "direction", "UNIDIRECTIONAL") {
        "UNIDIRECTIONAL" => Ok(false),
        "REDIRECTIONAL" => Ok(true),
        other => Err(attr_err(
            op,
            format!(
                "attr direction = \"{other}\": the operator runs one direction, \
                 \"UNIDIRECTIONAL\" or \"REDIRECTIONAL\" (run the two directions as two calls)"
            ),
        )),
    }
}

/// A numeric attr that must hold one value: (name, default, the value, what it means).
type Fixed = (&'static str, f64, f64, &'static str);
const TIME_MAJOR: Fixed = (
    "time_major",
    1.0,
    1.0,
    "true (x is [num_step, batch, input_size])",
);
const NO_PROJECTION: Fixed = ("num_proj", 0.0, 0.0, "0 (projection is not modelled)");

/// Refuse any of `list` set to another value than its one.
fn fixed(op: &str, a: &BTreeMap<String, AttrValue>, list: &[Fixed]) -> Result<(), Error> {
    for &(key, default, ok, what) in list {
        let v = get_num(op, a, key, default)?;
        if v != ok {
            return Err(attr_err(
                op,
                format!("attr {key} = {v} is not supported: it must be {what}"),
            ));
        }
    }
    Ok(())
}

/// attr `cell_clip`: only -1 (no clipping) is modelled.
fn no_clip(op: &str, a: &BTreeMap<String, AttrValue>) -> Result<(), Error> {
    let clip = get_num(op, a, "cell_clip", -1.0)?;
    if clip > 0.0 {
        return Err(attr_err(
            op,
            format!("attr cell_clip = {clip}: clipping the cell state is not modelled (use -1)"),
        ));
    }
    Ok(())
}

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
    let reverse = direction(op, &a)?;
    fixed(
        op,
        &a,
        &[
            TIME_MAJOR,
            (
                "use_peephole",
                0.0,
                0.0,
                "false (peephole weights are not modelled)",
            ),
            NO_PROJECTION,
        ],
    )?;
    no_clip(op, &a)?;
    let order = get_str(&a, "gate_order", "ijfo");
    let blocks = k::gate_blocks(order).map_err(|m| attr_err(op, format!("attr {m}")))?;
    Ok(Attrs {
        reverse,
        blocks,
        forget_bias: get_num(op, &a, "forget_bias", 0.0)? as f32,
    })
}

/// The outputs of an LSTM or GRU operator, each FLOAT16 or FLOAT and of the inputs' type.
fn output_tensors(
    op: &str,
    outs: &[Arg],
    names_out: &[&str],
    dtype: &mut Option<(DType, String)>,
) -> Result<Vec<Tensor>, Error> {
    outs.iter()
        .enumerate()
        .map(|(i, t)| {
            let tensor = t.tensor(
                op,
                format!("output {i} ({})", names_out[i]),
                true,
                RNN_DTYPES,
            )?;
            check_dtype(op, dtype, &tensor, true)?;
            Ok(tensor)
        })
        .collect()
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
    if let Some(&g) = GRU_OPS.iter().find(|o| o.0 == op_type) {
        return execute_gru(api, c, g);
    }
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
                t.tensor(op, name, false, RNN_DTYPES)?
            };
            if !is_seq {
                check_dtype(op, &mut dtype, &tensor, false)?;
            }
            tensors[i] = Some(tensor);
        }
    }
    let out_tensors = output_tensors(op, &outs, names_out, &mut dtype)?;
    enqueue(api, op, c, false, tensors, out_tensors, move |i, o| {
        run(variant, grad, &dims, &a, i, o)
    })
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

/// The GRU operators' attributes: `direction`, `gate_order` ("zrh" default, "rzh"),
/// `activation` "tanh", `reset_after` true, `time_major` true, `num_proj` 0, `cell_clip` ≤ 0
/// (the only values modelled); `cell_depth`, `keep_prob`, `is_training` and the gradient's
/// `bias_type` are read by nothing.
fn gru_attrs(op: &str, c: &Call) -> Result<g::GruAttrs, Error> {
    let a = attrs_of(c.attr)?;
    let v = get_str(&a, "activation", "tanh");
    if v != "tanh" {
        return Err(attr_err(
            op,
            format!("attr activation = \"{v}\" is not supported (only \"tanh\")"),
        ));
    }
    let reverse = direction(op, &a)?;
    fixed(
        op,
        &a,
        &[
            TIME_MAJOR,
            (
                "reset_after",
                1.0,
                1.0,
                "true (the reset gate applied after the product)",
            ),
            NO_PROJECTION,
        ],
    )?;
    no_clip(op, &a)?;
    let blocks = g::gru_gate_blocks(get_str(&a, "gate_order", "zrh"))
        .map_err(|m| attr_err(op, format!("attr {m}")))?;
    Ok(g::GruAttrs { reverse, blocks })
}

const GRU_IN: [&str; 7] = [
    "x",
    "weight_input",
    "weight_hidden",
    "bias_input",
    "bias_hidden",
    "seq_length",
    "init_h",
];
const GRU_GRAD_IN: [&str; 14] = [
    "x",
    "weight_input",
    "weight_hidden",
    "y",
    "init_h",
    "h",
    "dy",
    "dh",
    "update",
    "reset",
    "new",
    "hidden_new",
    "seq_length",
    "mask",
];
const GRU_GRAD_OUT: [&str; 6] = [
    "dw_input",
    "dw_hidden",
    "db_input",
    "db_hidden",
    "dx",
    "dh_prev",
];

/// DynamicGRUV2 / DynamicGRUV2Grad: x, weight_input and weight_hidden FLOAT16 (the
/// prototype's only type); every other tensor FLOAT16 or FLOAT, all of one type (y's). Wrong
/// counts, shapes or data types are `ACL_ERROR_OP_INPUT_NOT_MATCH` /
/// `ACL_ERROR_OP_OUTPUT_NOT_MATCH` (data types `ACL_ERROR_UNSUPPORTED_DATA_TYPE`) naming the
/// tensor.
fn execute_gru(
    api: &'static str,
    c: &Call,
    (op, grad, nin, nout): (&'static str, bool, usize, usize),
) -> Result<(), Error> {
    let (names_in, names_out): (&[&str], &[&str]) = if grad {
        (&GRU_GRAD_IN, &GRU_GRAD_OUT)
    } else {
        (&GRU_IN, &g::GRU_OUT_NAMES)
    };
    let (ni, no) = (c.num_inputs as usize, c.num_outputs as usize);
    let min_in = if grad { 12 } else { 3 };
    if ni < min_in || ni > nin {
        return Err(mismatch(
            false,
            format!(
                "op type \"{op}\" has {nin} inputs ({}; the last {} optional), but numInputs = {ni}",
                names_in.join(", "),
                nin - min_in
            ),
        ));
    }
    if no != nout {
        return Err(mismatch(
            true,
            format!(
                "op type \"{op}\" has {nout} outputs ({}), but numOutputs = {no}",
                names_out.join(", ")
            ),
        ));
    }
    let a = gru_attrs(op, c)?;
    let mut ins: Vec<Option<Arg>> = (0..ni).map(|i| input_arg(c, i)).collect::<Result<_, _>>()?;
    ins.resize_with(nin, || None);
    // torch_npu's placeholders: 0-d zeros for seq_length and mask
    let placeholders: &[usize] = if grad { &[12, 13] } else { &[5] };
    for &i in placeholders {
        if ins[i].as_ref().is_some_and(|t| t.desc.dims.is_empty()) {
            ins[i] = None;
        }
    }
    let outs: Vec<Arg> = (0..no)
        .map(|i| arg(c, i, true)?.ok_or_else(|| Error::invalid(format!("outputDesc[{i}] is NULL"))))
        .collect::<Result<_, _>>()?;
    let in_shapes: Vec<Option<Vec<usize>>> =
        ins.iter().map(|t| t.as_ref().map(Arg::shape)).collect();
    let in_refs: Vec<Option<&[usize]>> = in_shapes.iter().map(|s| s.as_deref()).collect();
    let out_shapes: Vec<Vec<usize>> = outs.iter().map(Arg::shape).collect();
    let out_refs: Vec<&[usize]> = out_shapes.iter().map(|s| s.as_slice()).collect();
    let dims = if grad {
        g::gru_grad_dims(&in_refs, &out_refs)
    } else {
        g::gru_forward_dims(&in_refs, &out_refs)
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
    let mut tensors: Vec<Option<Tensor>> = vec![None; nin];
    let mut dtype = None;
    for (i, t) in ins.iter().enumerate() {
        let Some(t) = t else { continue };
        let name = format!("input {i} ({})", names_in[i]);
        if i < 3 {
            tensors[i] = Some(t.tensor(op, name, false, &[DType::F16])?);
        } else {
            let tensor = t.tensor(op, name, false, RNN_DTYPES)?;
            check_dtype(op, &mut dtype, &tensor, false)?;
            tensors[i] = Some(tensor);
        }
    }
    let out_tensors = output_tensors(op, &outs, names_out, &mut dtype)?;
    enqueue(api, op, c, false, tensors, out_tensors, move |i, o| {
        let req = |k: usize| i[k].ok_or_else(|| format!("input {k} is missing"));
        if grad {
            g::gru_backward(
                &dims,
                &a,
                &g::GruGrad {
                    x: req(0)?,
                    wi: req(1)?,
                    wh: req(2)?,
                    h0: i[4],
                    h: req(5)?,
                    dy: req(6)?,
                    dh: i[7],
                    gates: [req(8)?, req(9)?, req(10)?, req(11)?],
                    outs: o,
                },
            )
        } else {
            g::gru_forward(
                &dims,
                &a,
                &g::GruForward {
                    x: req(0)?,
                    wi: req(1)?,
                    wh: req(2)?,
                    bi: i[3],
                    bh: i[4],
                    h0: i[6],
                    outs: o,
                },
            )
        }
    })
}
