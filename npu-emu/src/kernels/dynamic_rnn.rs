//! The LSTM operators of the single-operator API: `DynamicRNN`, `DynamicRNNV2` and their
//! gradients `DynamicRNNGrad`, `DynamicRNNV2Grad`. torch_npu reaches them for every `nn.LSTM`
//! that `aclnnLSTM` does not take (more than one layer, bidirectional, no biases, packed
//! sequences: one call per layer and direction) and for `nn.LSTMCell` (`DynamicRNNV2`, one
//! time step). The recurrence is [`crate::ops::rnn`]'s; this file maps the operators' layout
//! onto it.
//!
//! The operators' layout (CANN's op prototypes):
//! - time major: `x [T, B, I]`; states `init_h`, `init_c` `[1, B, H]` (the gradients also take
//!   `[B, H]`); every per-step output `y`, `output_h`, `output_c`, `i`, `j`, `f`, `o`, `tanhc`
//!   is `[T, B, H]`, `output_h` / `output_c` holding the state after each step;
//! - weights transposed against PyTorch's and gate blocks in `gate_order` ("ijfo", CANN's
//!   default, or "ifjo" / "ifco", PyTorch's order, `c` naming `j`): `DynamicRNN`'s one
//!   `w [I + H, 4H]` (input rows, then hidden rows), `DynamicRNNV2`'s `weight_input [I, 4H]` and
//!   `weight_hidden [H, 4H]`; `b [4H]` (optional for V2); `forget_bias` is added to the forget
//!   gate;
//! - `direction` "REDIRECTIONAL" runs the sequence from the last step to the first (the state
//!   after the whole sequence is then at step 0);
//! - `seq_length` (optional): per batch row, which steps are real. Either lengths `[B]`
//!   (INT32/INT64) or torch_npu's mask `[T, B, H]` (non-zero = real). A row past its length
//!   keeps its state (`output_h` / `output_c` repeat it) and outputs 0 in `y`; the rows still
//!   running at each step must be the first ones (sorted by length, as packed sequences are).
//! - the saved gates `i, j, f, o` are after activation, `tanhc = tanh(c)`; the gradients read
//!   them with `output_h`, `output_c` and the initial state.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::iter;
use crate::ops::rnn::{self, Rnn};
use crate::ops::View;

/// Which operator of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `DynamicRNN` / `DynamicRNNGrad`: one weight `[I + H, 4H]`.
    Joint,
    /// `DynamicRNNV2` / `DynamicRNNV2Grad`: `weight_input [I, 4H]`, `weight_hidden [H, 4H]`.
    Split,
}

/// The attributes the computation depends on.
#[derive(Clone, Copy, Debug)]
pub struct Attrs {
    /// "REDIRECTIONAL": from the last step to the first.
    pub reverse: bool,
    /// For each gate block of the operator's weights, PyTorch's block (i 0, f 1, g 2, o 3).
    pub blocks: [usize; 4],
    pub forget_bias: f32,
}

/// Parse a `gate_order` attr into [`Attrs::blocks`].
pub fn gate_blocks(order: &str) -> Result<[usize; 4], String> {
    let mut blocks = [0usize; 4];
    let mut seen = [false; 4];
    let chars: Vec<char> = order.chars().collect();
    if chars.len() != 4 {
        return Err(format!(
            "gate_order \"{order}\" must name the 4 gates once each (i, j or c, f, o), e.g. \
             \"ijfo\" or \"ifjo\""
        ));
    }
    for (k, ch) in chars.iter().enumerate() {
        let p = match ch {
            'i' => 0,
            'f' => 1,
            'j' | 'c' => 2,
            'o' => 3,
            _ => {
                return Err(format!(
                    "gate_order \"{order}\" has '{ch}': the gates are i, j (or c), f and o"
                ))
            }
        };
        if seen[p] {
            return Err(format!("gate_order \"{order}\" names a gate twice"));
        }
        seen[p] = true;
        blocks[k] = p;
    }
    Ok(blocks)
}

/// Steps, batch, input and hidden sizes of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub t: usize,
    pub b: usize,
    pub input: usize,
    pub hidden: usize,
}

fn numel(s: &[usize]) -> usize {
    s.iter().product()
}

/// A shape check failure: which side (input or output), its index, and the message.
#[derive(Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub output: bool,
    pub index: usize,
    pub msg: String,
}

pub(super) fn bad<R>(output: bool, index: usize, msg: String) -> Result<R, ShapeError> {
    Err(ShapeError { output, index, msg })
}

/// Check the weights (`w` shapes in the operator's input order) against `x [T, B, I]` and
/// return the sizes. `wi` is the index of the first weight input.
fn weight_dims(v: Variant, x: &[usize], w: &[&[usize]], wi: usize) -> Result<Dims, ShapeError> {
    let (t, b, input) = match x {
        [t, b, i] => (*t, *b, *i),
        // one step given as [batch, input_size] (nn.LSTMCell's input in DynamicRNNV2Grad)
        [b, i] => (1, *b, *i),
        _ => {
            return bad(
                false,
                0,
                format!("x must be 3-D [num_step, batch, input_size] (time major), got {x:?}"),
            )
        }
    };
    let four_h = match w[0] {
        [_, n] if n % 4 == 0 && *n > 0 => *n,
        s => {
            return bad(
                false,
                wi,
                format!("the weight must be 2-D [rows, 4 * hidden_size], got {s:?}"),
            )
        }
    };
    let hidden = four_h / 4;
    match v {
        Variant::Joint => {
            if w[0][0] != input + hidden {
                return bad(
                    false,
                    wi,
                    format!(
                        "w must be [input_size + hidden_size, 4 * hidden_size] = [{}, {four_h}] \
                         for x {x:?}, got {:?}",
                        input + hidden,
                        w[0]
                    ),
                );
            }
        }
        Variant::Split => {
            if w[0][0] != input {
                return bad(
                    false,
                    wi,
                    format!(
                        "weight_input must be [input_size, 4 * hidden_size] = [{input}, \
                         {four_h}] for x {x:?}, got {:?}",
                        w[0]
                    ),
                );
            }
            if w[1] != [hidden, four_h] {
                return bad(
                    false,
                    wi + 1,
                    format!(
                        "weight_hidden must be [hidden_size, 4 * hidden_size] = [{hidden}, \
                         {four_h}], got {:?}",
                        w[1]
                    ),
                );
            }
        }
    }
    Ok(Dims {
        t,
        b,
        input,
        hidden,
    })
}

/// An optional `[4H]` bias.
fn check_bias(b: Option<&[usize]>, i: usize, d: &Dims) -> Result<(), ShapeError> {
    match b {
        Some(s) if numel(s) != 4 * d.hidden || s.len() != 1 => bad(
            false,
            i,
            format!(
                "b must be [4 * hidden_size] = [{}], got {s:?}",
                4 * d.hidden
            ),
        ),
        _ => Ok(()),
    }
}

/// A state: `[1, B, H]` or `[B, H]`.
pub(super) fn check_state(
    s: Option<&[usize]>,
    output: bool,
    i: usize,
    name: &str,
    d: &Dims,
) -> Result<(), ShapeError> {
    match s {
        Some(s) if !(s == [1, d.b, d.hidden] || s == [d.b, d.hidden]) => bad(
            output,
            i,
            format!(
                "{name} must be [1, batch, hidden_size] = [1, {}, {}] (or [{}, {}]), got {s:?}",
                d.b, d.hidden, d.b, d.hidden
            ),
        ),
        _ => Ok(()),
    }
}

/// A per-step tensor `[T, B, H]` (`[B, H]` for one step: nn.LSTMCell's saved state).
fn check_steps(
    s: &[usize],
    output: bool,
    i: usize,
    name: &str,
    d: &Dims,
) -> Result<(), ShapeError> {
    if s != [d.t, d.b, d.hidden] && !(d.t == 1 && s == [d.b, d.hidden]) {
        return bad(
            output,
            i,
            format!(
                "{name} must be [num_step, batch, hidden_size] = [{}, {}, {}], got {s:?}",
                d.t, d.b, d.hidden
            ),
        );
    }
    Ok(())
}

/// `seq_length`: lengths `[B]` or a mask `[T, B, H]`.
fn check_seq(s: Option<&[usize]>, i: usize, d: &Dims) -> Result<(), ShapeError> {
    match s {
        Some(s) if !(s == [d.b] || s == [d.t, d.b, d.hidden]) => bad(
            false,
            i,
            format!(
                "seq_length must be the lengths [batch] = [{}] or a mask [num_step, batch, \
                 hidden_size] = [{}, {}, {}], got {s:?}",
                d.b, d.t, d.b, d.hidden
            ),
        ),
        _ => Ok(()),
    }
}

/// The forward operator's inputs (None: absent) and outputs, by role.
pub struct Forward<'a> {
    pub x: &'a View,
    /// `[w]` (Joint) or `[weight_input, weight_hidden]` (Split).
    pub w: Vec<&'a View>,
    pub b: Option<&'a View>,
    pub seq: Option<&'a View>,
    pub h0: Option<&'a View>,
    pub c0: Option<&'a View>,
    /// y, output_h, output_c, i, j, f, o, tanhc.
    pub outs: &'a [View],
}

/// Check the shapes of a forward call: `ins` x, the weight(s), b, seq_length, init_h, init_c
/// in the operator's order (None: absent); `outs` its 8 outputs.
pub fn forward_dims(
    v: Variant,
    ins: &[Option<&[usize]>],
    outs: &[&[usize]],
) -> Result<Dims, ShapeError> {
    let nw = if v == Variant::Joint { 1 } else { 2 };
    let x = ins[0].unwrap_or(&[]);
    let mut w = Vec::new();
    for k in 0..nw {
        match ins[1 + k] {
            Some(s) => w.push(s),
            None => return bad(false, 1 + k, "the weight is required".into()),
        }
    }
    let d = weight_dims(v, x, &w, 1)?;
    let bi = 1 + nw;
    if v == Variant::Joint && ins[bi].is_none() {
        return bad(false, bi, "b is required".into());
    }
    check_bias(ins[bi], bi, &d)?;
    check_seq(ins[bi + 1], bi + 1, &d)?;
    check_state(ins[bi + 2], false, bi + 2, "init_h", &d)?;
    check_state(ins[bi + 3], false, bi + 3, "init_c", &d)?;
    for (k, name) in OUT_NAMES.iter().enumerate() {
        check_steps(outs[k], true, k, name, &d)?;
    }
    Ok(d)
}

/// The forward operators' outputs.
pub const OUT_NAMES: [&str; 8] = ["y", "output_h", "output_c", "i", "j", "f", "o", "tanhc"];

/// The gradient operators' inputs that are per-step tensors `[T, B, H]`, by their index in
/// `DynamicRNNGrad` / `DynamicRNNV2Grad` (the same in both): y, h, c, dy, i, j, f, o, tanhc.
pub const GRAD_STEP_INPUTS: [(usize, &str); 9] = [
    (3, "y"),
    (6, "h"),
    (7, "c"),
    (8, "dy"),
    (11, "i"),
    (12, "j"),
    (13, "f"),
    (14, "o"),
    (15, "tanhc"),
];

/// Check the shapes of a gradient call: `ins` in the operator's order (21 inputs; None:
/// absent), `outs` its outputs (Joint: dw, db, dx, dh_prev, dc_prev; Split: dw_x, dw_h, db,
/// dx, dh_prev, dc_prev).
pub fn grad_dims(
    v: Variant,
    ins: &[Option<&[usize]>],
    outs: &[&[usize]],
) -> Result<Dims, ShapeError> {
    let x = ins[0].unwrap_or(&[]);
    let (w, nw): (Vec<&[usize]>, usize) = match v {
        Variant::Joint => (vec![ins[1].unwrap_or(&[])], 1),
        Variant::Split => (vec![ins[1].unwrap_or(&[]), ins[2].unwrap_or(&[])], 2),
    };
    let d = weight_dims(v, x, &w, 1)?;
    if v == Variant::Joint {
        check_bias(ins[2], 2, &d)?;
    }
    check_state(ins[4], false, 4, "init_h", &d)?;
    check_state(ins[5], false, 5, "init_c", &d)?;
    for (i, name) in GRAD_STEP_INPUTS {
        match ins[i] {
            Some(s) => check_steps(s, false, i, name, &d)?,
            None => return bad(false, i, format!("{name} is required")),
        }
    }
    check_state(ins[9], false, 9, "dh", &d)?;
    check_state(ins[10], false, 10, "dc", &d)?;
    check_seq(ins[16], 16, &d)?;
    // outputs
    let mut k = 0;
    for (n, name) in w.iter().zip(["dw", "dw_h"]) {
        let name = if v == Variant::Split && k == 0 {
            "dw_x"
        } else {
            name
        };
        if outs[k] != *n {
            return bad(
                true,
                k,
                format!(
                    "{name} must have the weight's shape {n:?}, got {:?}",
                    outs[k]
                ),
            );
        }
        k += 1;
    }
    debug_assert_eq!(k, nw);
    if numel(outs[k]) != 4 * d.hidden || outs[k].len() != 1 {
        return bad(
            true,
            k,
            format!(
                "db must be [4 * hidden_size] = [{}], got {:?}",
                4 * d.hidden,
                outs[k]
            ),
        );
    }
    if outs[k + 1] != x {
        return bad(
            true,
            k + 1,
            format!("dx must have x's shape {x:?}, got {:?}", outs[k + 1]),
        );
    }
    check_state(Some(outs[k + 2]), true, k + 2, "dh_prev", &d)?;
    check_state(Some(outs[k + 3]), true, k + 3, "dc_prev", &d)?;
    Ok(d)
}

fn f32s(v: &View) -> Result<Vec<f32>, String> {
    load::<f32>(v, DType::F32)
}

fn put(buf: Vec<f32>, out: &View) -> Result<(), String> {
    store(buf, DType::F32, out)
}

/// `v` (`[T, …]`, 3-D) with its first (time) dimension reversed when `reverse`; a 2-D
/// tensor is one step.
pub(crate) fn flip(v: &View, reverse: bool) -> View {
    let mut f = v.clone();
    if reverse && v.ndim() == 3 && v.shape[0] > 1 {
        let s0 = v.strides[0];
        // SAFETY: element (T-1, 0, …) lies inside the view's extent.
        f.ptr = unsafe {
            v.ptr
                .offset((v.shape[0] as isize - 1) * s0 * v.esize() as isize)
        };
        f.strides[0] = -s0;
    }
    f
}

/// Between the operator's layout `[rows, 4H]` (gate blocks in `blocks` order) and PyTorch's
/// transposed one `[4H, rows]` (blocks i, f, g, o): to PyTorch's when `to_torch`, else back.
/// The weights `[I + H, 4H]` become `weight_ih | weight_hh` side by side; a bias is one row.
fn regate(m: &[f32], rows: usize, h: usize, blocks: &[usize; 4], to_torch: bool) -> Vec<f32> {
    let gh = 4 * h;
    let mut out = vec![0f32; rows * gh];
    for (k, &p) in blocks.iter().enumerate() {
        for r in 0..h {
            let (col, row) = (k * h + r, p * h + r);
            for c in 0..rows {
                let (op, torch) = (c * gh + col, row * rows + c);
                if to_torch {
                    out[torch] = m[op];
                } else {
                    out[op] = m[torch];
                }
            }
        }
    }
    out
}

/// PyTorch's `weight_ih | weight_hh` `[4H, I + H]` and bias `[4H]` (+ `forget_bias` on the
/// forget gate) from the operator's weights.
struct Torch {
    w: Vec<f32>,
    b: Vec<f32>,
}

fn torch_params(d: &Dims, a: &Attrs, w: &[&View], b: Option<&View>) -> Result<Torch, String> {
    let h = d.hidden;
    // rows of the operator's weights: input features, then hidden features
    let rows: Vec<f32> = match w {
        [j] => f32s(j)?,
        [wi, wh] => {
            let mut r = f32s(wi)?;
            r.extend(f32s(wh)?);
            r
        }
        _ => return Err("the LSTM takes one or two weights".into()),
    };
    let mut bias = match b {
        Some(b) => regate(&f32s(b)?, 1, h, &a.blocks, true),
        None => vec![0f32; 4 * h],
    };
    bias[h..2 * h].iter_mut().for_each(|v| *v += a.forget_bias);
    Ok(Torch {
        w: regate(&rows, d.input + h, h, &a.blocks, true),
        b: bias,
    })
}

/// The engine's parameter views over PyTorch's `[4H, I + H]` weights: `weight_ih` and
/// `weight_hh` as strided views into it, then `b` and `b2` as the two biases (the second a
/// zero one in the forward, its gradient in the backward).
fn torch_views(d: &Dims, w: &mut [f32], b: &mut [f32], b2: &mut [f32]) -> [View; 4] {
    let (gh, cols) = (4 * d.hidden, d.input + d.hidden);
    let whole = View::of_slice(w, DType::F32, &[gh, cols]);
    let part = |at: usize, n: usize| View {
        // SAFETY: column `at` of row 0 lies inside `w` (at < cols, or at == cols with n == 0).
        ptr: unsafe { whole.ptr.add(at * 4) },
        dtype: DType::F32,
        shape: vec![gh, n],
        strides: vec![cols as isize, 1],
    };
    [
        part(0, d.input),
        part(d.input, d.hidden),
        View::of_slice(b, DType::F32, &[gh]),
        View::of_slice(b2, DType::F32, &[gh]),
    ]
}

/// The engine's shape of a one-layer, one-direction call.
fn engine_cfg(d: &Dims) -> Rnn {
    Rnn {
        layers: 1,
        bidir: false,
        bias: true,
        batch_first: false,
        t: d.t,
        b: d.b,
        input: d.input,
        hidden: d.hidden,
    }
}

/// The batch rows running at each step (in processing order), from `seq_length`.
fn running(seq: Option<&View>, d: &Dims, reverse: bool) -> Result<Option<Vec<usize>>, String> {
    let Some(s) = seq else { return Ok(None) };
    let (t, b) = (d.t, d.b);
    let live: Vec<bool> = if s.ndim() == 1 {
        let mut len = vec![0i64; b];
        iter::copy(s, &View::of_slice(&mut len, DType::I64, &[b]))?;
        if let Some(l) = len.iter().find(|&&l| l < 0 || l as usize > t) {
            return Err(format!("seq_length holds {l}, outside 0..={t} (num_step)"));
        }
        (0..t * b).map(|k| (k / b) < len[k % b] as usize).collect()
    } else {
        let m = f32s(s)?;
        (0..t * b).map(|k| m[k * d.hidden] != 0.0).collect()
    };
    let mut counts = Vec::with_capacity(t);
    for ti in 0..t {
        let row = &live[ti * b..(ti + 1) * b];
        let n = row.iter().take_while(|&&l| l).count();
        if row[n..].iter().any(|&l| l) {
            return Err(format!(
                "seq_length: at step {ti} batch row {} runs after a row that has ended; the \
                 rows must be sorted by decreasing length (as packed sequences are)",
                n + row[n..].iter().position(|&l| l).unwrap_or(0)
            ));
        }
        counts.push(n);
    }
    if reverse {
        counts.reverse();
    }
    Ok(Some(counts))
}

/// Run `DynamicRNN` / `DynamicRNNV2`.
pub fn forward(d: &Dims, a: &Attrs, f: &Forward) -> Result<(), String> {
    let cfg = engine_cfg(d);
    let mut p = torch_params(d, a, &f.w, f.b)?;
    let mut zeros = vec![0f32; 4 * d.hidden];
    let params = torch_views(d, &mut p.w, &mut p.b, &mut zeros);
    let bs = running(f.seq, d, a.reverse)?;
    let r = a.reverse;
    let outs: Vec<View> = f.outs.iter().map(|o| flip(o, r)).collect();
    let (mut hy, mut cy) = (vec![0f32; d.b * d.hidden], vec![0f32; d.b * d.hidden]);
    let shape = [1, d.b, d.hidden];
    let hy = View::of_slice(&mut hy, DType::F32, &shape);
    let cy = View::of_slice(&mut cy, DType::F32, &shape);
    // the engine's saved lists: i, j, f, o, h, c, tanh(c)
    let saved: Vec<&[View]> = [3, 4, 5, 6, 1, 2, 7]
        .iter()
        .map(|&k| std::slice::from_ref(&outs[k]))
        .collect();
    rnn::lstm(
        &cfg,
        true,
        bs.as_deref(),
        &flip(f.x, r),
        &params,
        f.h0,
        f.c0,
        &outs[0],
        &hy,
        &cy,
        &saved,
    )
}

/// The gradient operator's inputs and outputs, by role.
pub struct Grad<'a> {
    pub x: &'a View,
    pub w: Vec<&'a View>,
    pub h0: Option<&'a View>,
    pub c0: Option<&'a View>,
    pub dy: &'a View,
    pub dh: Option<&'a View>,
    pub dc: Option<&'a View>,
    /// i, j, f, o, h, c, tanhc: the forward's saved outputs.
    pub saved: [&'a View; 7],
    pub seq: Option<&'a View>,
    /// `[dw]` (Joint) or `[dw_x, dw_h]` (Split).
    pub dw: Vec<&'a View>,
    pub db: &'a View,
    pub dx: &'a View,
    pub dh_prev: &'a View,
    pub dc_prev: &'a View,
}

/// Run `DynamicRNNGrad` / `DynamicRNNV2Grad`.
pub fn backward(d: &Dims, a: &Attrs, g: &Grad) -> Result<(), String> {
    let cfg = engine_cfg(d);
    let (i_n, h) = (d.input, d.hidden);
    let gh = 4 * h;
    let mut p = torch_params(d, a, &g.w, None)?;
    let mut zeros = vec![0f32; gh];
    let params = torch_views(d, &mut p.w, &mut p.b, &mut zeros);
    // the engine writes the gradients of weight_ih and weight_hh into one [4H, I + H] buffer
    // (and the second bias's gradient, equal to the first's, into `db2`)
    let (mut dw, mut db, mut db2) = (vec![0f32; gh * (i_n + h)], vec![0f32; gh], vec![0f32; gh]);
    let dparams = torch_views(d, &mut dw, &mut db, &mut db2);
    let r = a.reverse;
    let bs = running(g.seq, d, r)?;
    let saved: Vec<View> = g.saved.iter().map(|v| flip(v, r)).collect();
    let lists: Vec<&[View]> = saved.iter().map(std::slice::from_ref).collect();
    rnn::lstm_backward(
        &cfg,
        bs.as_deref(),
        &flip(g.x, r),
        &params,
        g.h0,
        g.c0,
        Some(&flip(g.dy, r)),
        g.dh,
        g.dc,
        &lists,
        &flip(g.dx, r),
        g.dh_prev,
        g.dc_prev,
        &dparams,
    )?;
    // back to the operator's layout: rows (input features, then hidden), gate blocks in order
    let mut rows = regate(&dw, i_n + h, h, &a.blocks, false);
    let bias = regate(&db, 1, h, &a.blocks, false);
    match g.dw.as_slice() {
        [dw] => put(rows, dw)?,
        [dwx, dwh] => {
            let hidden = rows.split_off(i_n * gh);
            put(rows, dwx)?;
            put(hidden, dwh)?;
        }
        _ => return Err("the LSTM gradient has one or two weight outputs".into()),
    }
    put(bias, g.db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_orders_map_onto_pytorchs_blocks() {
        assert_eq!(gate_blocks("ijfo"), Ok([0, 2, 1, 3]));
        assert_eq!(gate_blocks("ifjo"), Ok([0, 1, 2, 3]));
        assert_eq!(gate_blocks("ifco"), Ok([0, 1, 2, 3]));
        assert!(gate_blocks("iifo").unwrap_err().contains("twice"));
        assert!(gate_blocks("ijf").unwrap_err().contains("4 gates"));
        assert!(gate_blocks("ijfx").unwrap_err().contains("'x'"));
    }

    #[test]
    fn shapes_name_the_tensor_that_does_not_fit() {
        let (x, w, b, st) = ([5usize, 2, 3], [7usize, 16], [16usize], [1usize, 2, 4]);
        let step = [5usize, 2, 4];
        let outs: Vec<&[usize]> = vec![&step; 8];
        let ins: Vec<Option<&[usize]>> = vec![Some(&x), Some(&w), Some(&b), None, Some(&st), None];
        let d = forward_dims(Variant::Joint, &ins, &outs).unwrap();
        assert_eq!((d.t, d.b, d.input, d.hidden), (5, 2, 3, 4));
        let bad_w = [8usize, 16];
        let ins: Vec<Option<&[usize]>> = vec![Some(&x), Some(&bad_w), Some(&b), None, None, None];
        let e = forward_dims(Variant::Joint, &ins, &outs).unwrap_err();
        assert_eq!((e.output, e.index), (false, 1));
        let short = [4usize, 2, 4];
        let mut outs2 = outs.clone();
        outs2[5] = &short;
        let ins: Vec<Option<&[usize]>> = vec![Some(&x), Some(&w), Some(&b), None, None, None];
        let e = forward_dims(Variant::Joint, &ins, &outs2).unwrap_err();
        assert_eq!((e.output, e.index), (true, 5));
        assert!(e.msg.starts_with("f must be"), "{}", e.msg);
    }
}
