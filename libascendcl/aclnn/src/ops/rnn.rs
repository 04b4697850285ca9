//! `aclnn_lstm.h`, `aclnn_lstm_backward.h`, `aclnn_gru.h`, `aclnn_gru_backward.h`,
//! `aclnn_thnn_fused_lstm_cell.h`, `aclnn_thnn_fused_lstm_cell_backward.h`: what torch_npu
//! calls for `nn.LSTM` (`_lstm_npu` and its backward), `nn.GRU` (`_gru_npu`) and
//! `nn.LSTMCell` (`_thnn_fused_lstm_cell`). The engine is `npu_emu::ops::rnn`.
//!
//! The weights are PyTorch's (gate blocks i, f, g, o / r, z, n), as torch_npu passes them.
//! FLOAT and FLOAT16, every tensor of the call of one dtype; computed in f32. `dropout` is
//! accepted and not applied (the documented "not supported"); the packed form (a non-empty
//! `batchSizes`) is served for the LSTM (input `[T*B, I]` time-major, rows past a step's batch
//! size keep their state and output 0) and refused for the GRU (161002).

use super::args::{self as a, T};
use super::launch::{phase1, Launch};
use crate::status::{NnError, NnResult};
use npu_emu::ops::dtype::DType;
use npu_emu::ops::rnn::{self as engine, Rnn};
use npu_emu::ops::View;
use std::ffi::c_void;

const RNN_DTYPES: &[DType] = &[DType::F32, DType::F16];

/// An optional `aclTensorList*` (NULL is empty).
fn opt_list(h: *const c_void, arg: &'static str) -> NnResult<Vec<T>> {
    if h.is_null() {
        Ok(Vec::new())
    } else {
        a::tensor_list(h, arg)
    }
}

fn invalid<R>(m: String) -> NnResult<R> {
    Err(NnError::invalid(m))
}

/// `batchSizes`: absent or empty is the fixed-length form; the packed form is not served.
fn fixed_length(batch_sizes: *const c_void, arg: &'static str) -> NnResult<()> {
    if packed(batch_sizes, arg)?.is_some() {
        return invalid(format!(
            "{arg} asks for the packed-sequence form, which this operator does not support \
             (pass nullptr for fixed-length input)"
        ));
    }
    Ok(())
}

/// `batchSizes` of the packed form (`[T]` INT64 or INT32), or None (absent or empty).
fn packed(batch_sizes: *const c_void, arg: &'static str) -> NnResult<Option<T>> {
    match a::opt_tensor(batch_sizes, arg)? {
        Some(bs) if bs.numel() > 0 => {
            a::dtype_in(&bs, a::INDEX)?;
            if bs.ndim() != 1 {
                return invalid(format!(
                    "{arg} must be 1-D [time_step], but its shape is {:?}",
                    bs.shape()
                ));
            }
            Ok(Some(bs))
        }
        _ => Ok(None),
    }
}

/// The batch sizes of a packed call, read when the task runs: non-increasing, the first
/// equal to the batch.
fn batch_sizes(v: &View, b: usize) -> Result<Vec<usize>, String> {
    let mut raw = vec![0i64; v.numel()];
    npu_emu::ops::iter::copy(v, &View::of_slice(&mut raw, DType::I64, &v.shape))?;
    let ok = raw.first() == Some(&(b as i64))
        && raw.windows(2).all(|w| w[1] <= w[0])
        && raw.iter().all(|&n| n > 0);
    if !ok {
        return Err(format!(
            "batchSizes {raw:?} must be positive, non-increasing and start with the batch {b}"
        ));
    }
    Ok(raw.into_iter().map(|n| n as usize).collect())
}

/// Check `input` and `params` of an LSTM (`gates` 4) or GRU (3) call and derive the shape.
#[allow(clippy::too_many_arguments)]
fn geometry(
    x: &T,
    params: &[T],
    gates: usize,
    bias: bool,
    layers: i64,
    bidir: bool,
    batch_first: bool,
    packed_t: Option<usize>,
) -> NnResult<Rnn> {
    a::dtype_in(x, RNN_DTYPES)?;
    if let Some(t) = packed_t {
        if x.ndim() != 2 || !x.shape()[0].is_multiple_of(t) {
            return invalid(format!(
                "with batchSizes input must be 2-D [time_step * batch_size, input_size] with \
                 time_step = {t}, but its shape is {:?}",
                x.shape()
            ));
        }
    } else if x.ndim() != 3 {
        return invalid(format!(
            "input must be 3-D ({}), but its shape is {:?}",
            if batch_first {
                "batch, time, features"
            } else {
                "time, batch, features"
            },
            x.shape()
        ));
    }
    if layers < 1 {
        return invalid(format!("numLayers must be at least 1, got {layers}"));
    }
    let d = if bidir { 2 } else { 1 };
    let per = if bias { 4 } else { 2 };
    let want = per * d * layers as usize;
    if params.len() != want {
        return invalid(format!(
            "params holds {} tensors; {layers} layer(s), {} direction(s) {} biases need {want}",
            params.len(),
            d,
            if bias { "with" } else { "without" }
        ));
    }
    for p in params {
        a::same_dtype(p, x)?;
    }
    let w0 = &params[0];
    if w0.ndim() != 2 || !w0.shape()[0].is_multiple_of(gates) || w0.shape()[0] == 0 {
        return invalid(format!(
            "params[0] (weight_ih of layer 0) must be [{gates} * hidden_size, input_size], \
             but its shape is {:?}",
            w0.shape()
        ));
    }
    let s = x.shape();
    let (t, b) = match packed_t {
        Some(t) => (t, s[0] / t),
        None if batch_first => (s[1], s[0]),
        None => (s[0], s[1]),
    };
    let cfg = Rnn {
        layers: layers as usize,
        bidir,
        bias,
        batch_first: batch_first && packed_t.is_none(),
        t,
        b,
        input: s[s.len() - 1],
        hidden: w0.shape()[0] / gates,
    };
    let (g, h) = (gates * cfg.hidden, cfg.hidden);
    for l in 0..cfg.layers {
        for dir in 0..d {
            let base = (l * d + dir) * per;
            let mut expect = vec![
                (vec![g, cfg.in_size(l)], "weight_ih"),
                (vec![g, h], "weight_hh"),
            ];
            if bias {
                expect.push((vec![g], "bias_ih"));
                expect.push((vec![g], "bias_hh"));
            }
            for (k, (shape, name)) in expect.into_iter().enumerate() {
                let p = &params[base + k];
                if p.shape() != shape.as_slice() {
                    return invalid(format!(
                        "params[{}] ({name} of layer {l}{}) must have shape {shape:?}, but has {:?}",
                        base + k,
                        if dir == 1 { ", reverse" } else { "" },
                        p.shape()
                    ));
                }
            }
        }
    }
    Ok(cfg)
}

fn state_shape(cfg: &Rnn) -> Vec<usize> {
    vec![cfg.layers * cfg.dirs(), cfg.b, cfg.hidden]
}

fn seq_shape(cfg: &Rnn, last: usize) -> Vec<usize> {
    if cfg.batch_first {
        vec![cfg.b, cfg.t, last]
    } else {
        vec![cfg.t, cfg.b, last]
    }
}

fn check(t: &T, x: &T, shape: &[usize]) -> NnResult<()> {
    a::same_dtype(t, x)?;
    a::same_shape(t, shape)
}

/// `dparamsOut` holds one gradient per tensor of `params`, each of its shape and x's type.
fn check_dparams(dps: &[T], ps: &[T], x: &T) -> NnResult<()> {
    if dps.len() != ps.len() {
        return invalid(format!(
            "dparamsOut holds {} tensors, params {}",
            dps.len(),
            ps.len()
        ));
    }
    for (k, (d, p)) in dps.iter().zip(ps).enumerate() {
        a::same_dtype(d, x)?;
        if d.shape() != p.shape() {
            return invalid(format!(
                "dparamsOut[{k}] has shape {:?}, params[{k}] {:?}",
                d.shape(),
                p.shape()
            ));
        }
    }
    Ok(())
}

/// The saved-intermediate lists: in training each must hold `L*D` tensors of `[T, B, H]`.
fn check_lists(lists: &[&Vec<T>], names: &[&str], cfg: &Rnn, x: &T, train: bool) -> NnResult<()> {
    let n = cfg.layers * cfg.dirs();
    for (l, name) in lists.iter().zip(names) {
        for t in l.iter() {
            a::same_dtype(t, x)?;
        }
        if !train {
            continue;
        }
        if l.len() != n {
            return invalid(format!(
                "{name} holds {} tensors, but numLayers * D is {n}",
                l.len()
            ));
        }
        for (i, t) in l.iter().enumerate() {
            if t.numel() != cfg.t * cfg.b * cfg.hidden {
                return invalid(format!(
                    "{name}[{i}] has shape {:?}, expected [{}, {}, {}]",
                    t.shape(),
                    cfg.t,
                    cfg.b,
                    cfg.hidden
                ));
            }
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLSTMGetWorkspaceSize(
    input: *const c_void,
    params: *const c_void,
    hx: *const c_void,
    batchSizes: *const c_void,
    hasBias: bool,
    numLayers: i64,
    _dropout: f64,
    train: bool,
    bidirectional: bool,
    batchFirst: bool,
    output: *mut c_void,
    hy: *mut c_void,
    cy: *mut c_void,
    iOut: *mut c_void,
    jOut: *mut c_void,
    fOut: *mut c_void,
    oOut: *mut c_void,
    hOut: *mut c_void,
    cOut: *mut c_void,
    tanhCOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnLSTMGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(input, "input")?;
        let ps = a::tensor_list(params, "params")?;
        let hxs = opt_list(hx, "hx")?;
        let y = a::tensor(output, "output")?;
        let hy = a::tensor(hy, "hy")?;
        let cy = a::tensor(cy, "cy")?;
        let names = ["iOut", "jOut", "fOut", "oOut", "hOut", "cOut", "tanhCOut"];
        let handles = [iOut, jOut, fOut, oOut, hOut, cOut, tanhCOut];
        let mut lists = Vec::with_capacity(7);
        for (h, n) in handles.into_iter().zip(names) {
            lists.push(if train {
                a::tensor_list(h, n)?
            } else {
                opt_list(h, n)?
            });
        }
        let bs = packed(batchSizes, "batchSizes")?;
        let cfg = geometry(
            &x,
            &ps,
            4,
            hasBias,
            numLayers,
            bidirectional,
            batchFirst,
            bs.as_ref().map(|b| b.numel()),
        )?;
        if !hxs.is_empty() && hxs.len() != 2 {
            return invalid(format!(
                "hx holds {} tensors; it must be empty or hold h0 and c0",
                hxs.len()
            ));
        }
        for h in &hxs {
            check(h, &x, &state_shape(&cfg))?;
        }
        check(&y, &x, &seq_shape(&cfg, cfg.dirs() * cfg.hidden))?;
        check(&hy, &x, &state_shape(&cfg))?;
        check(&cy, &x, &state_shape(&cfg))?;
        check_lists(&lists.iter().collect::<Vec<_>>(), &names, &cfg, &x, train)?;
        let mut l = Launch::new("aclnnLSTM");
        l.input(&x);
        l.inputs(&ps);
        l.inputs(&hxs);
        if let Some(b) = &bs {
            l.input(b);
        }
        let has_bs = bs.is_some();
        l.output(&y);
        l.output(&hy);
        l.output(&cy);
        let mut counts = Vec::with_capacity(7);
        for list in &lists {
            l.outputs(list);
            counts.push(list.len());
        }
        let (np, nh) = (ps.len(), hxs.len());
        l.finish(move |v, _| {
            let params = &v[1..1 + np];
            let st = 1 + np;
            let (h0, c0) = if nh == 2 {
                (Some(&v[st]), Some(&v[st + 1]))
            } else {
                (None, None)
            };
            let sizes = if has_bs {
                Some(batch_sizes(&v[st + nh], cfg.b)?)
            } else {
                None
            };
            let o = st + nh + has_bs as usize;
            let mut at = o + 3;
            let mut saved: Vec<&[View]> = Vec::with_capacity(7);
            for &c in &counts {
                saved.push(&v[at..at + c]);
                at += c;
            }
            engine::lstm(
                &cfg,
                train,
                sizes.as_deref(),
                &engine::unpack_rows(&v[0], cfg.t),
                params,
                h0,
                c0,
                &v[o],
                &v[o + 1],
                &v[o + 2],
                &saved,
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnLstmBackwardGetWorkspaceSize(
    input: *const c_void,
    hx: *const c_void,
    params: *const c_void,
    dy: *const c_void,
    dh: *const c_void,
    dc: *const c_void,
    i: *const c_void,
    j: *const c_void,
    f: *const c_void,
    o: *const c_void,
    h: *const c_void,
    c: *const c_void,
    tanhc: *const c_void,
    batchSizesOptional: *const c_void,
    hasBias: bool,
    numLayers: i64,
    _dropout: f64,
    _train: bool,
    bidirectional: bool,
    batchFirst: bool,
    _outputMask: *const c_void,
    dxOut: *mut c_void,
    dhPrevOut: *mut c_void,
    dcPrevOut: *mut c_void,
    dparamsOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnLstmBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let hxs = opt_list(hx, "hx")?;
            let ps = a::tensor_list(params, "params")?;
            let dy = a::opt_tensor(dy, "dy")?;
            let dh = a::opt_tensor(dh, "dh")?;
            let dc = a::opt_tensor(dc, "dc")?;
            let names = ["i", "j", "f", "o", "h", "c", "tanhc"];
            let handles = [i, j, f, o, h, c, tanhc];
            let mut lists = Vec::with_capacity(7);
            for (hd, n) in handles.into_iter().zip(names) {
                lists.push(a::tensor_list(hd, n)?);
            }
            let dx = a::tensor(dxOut, "dxOut")?;
            let dh0 = a::tensor(dhPrevOut, "dhPrevOut")?;
            let dc0 = a::tensor(dcPrevOut, "dcPrevOut")?;
            let dps = a::tensor_list(dparamsOut, "dparamsOut")?;
            let bs = packed(batchSizesOptional, "batchSizesOptional")?;
            let cfg = geometry(
                &x,
                &ps,
                4,
                hasBias,
                numLayers,
                bidirectional,
                batchFirst,
                bs.as_ref().map(|b| b.numel()),
            )?;
            if !hxs.is_empty() && hxs.len() != 2 {
                return invalid(format!(
                    "hx holds {} tensors; it must be empty or hold h0 and c0",
                    hxs.len()
                ));
            }
            let ss = state_shape(&cfg);
            for t in hxs.iter().chain(&dh).chain(&dc) {
                check(t, &x, &ss)?;
            }
            if let Some(t) = &dy {
                check(t, &x, &seq_shape(&cfg, cfg.dirs() * cfg.hidden))?;
            }
            check_lists(&lists.iter().collect::<Vec<_>>(), &names, &cfg, &x, true)?;
            check(&dx, &x, x.shape())?;
            check(&dh0, &x, &ss)?;
            check(&dc0, &x, &ss)?;
            check_dparams(&dps, &ps, &x)?;
            let mut l = Launch::new("aclnnLstmBackward");
            l.input(&x);
            l.inputs(&hxs);
            l.inputs(&ps);
            let opt = [dy.is_some(), dh.is_some(), dc.is_some()];
            for t in dy.iter().chain(&dh).chain(&dc) {
                l.input(t);
            }
            for list in &lists {
                l.inputs(list);
            }
            if let Some(b) = &bs {
                l.input(b);
            }
            let has_bs = bs.is_some();
            l.output(&dx);
            l.output(&dh0);
            l.output(&dc0);
            l.outputs(&dps);
            let (nh, np, nl) = (hxs.len(), ps.len(), cfg.layers * cfg.dirs());
            l.finish(move |v, _| {
                let (h0, c0) = if nh == 2 {
                    (Some(&v[1]), Some(&v[2]))
                } else {
                    (None, None)
                };
                let params = &v[1 + nh..1 + nh + np];
                let mut at = 1 + nh + np;
                let mut grads = [None; 3];
                for (g, &present) in grads.iter_mut().zip(&opt) {
                    if present {
                        *g = Some(&v[at]);
                        at += 1;
                    }
                }
                let mut saved: Vec<&[View]> = Vec::with_capacity(7);
                for _ in 0..7 {
                    saved.push(&v[at..at + nl]);
                    at += nl;
                }
                let sizes = if has_bs {
                    at += 1;
                    Some(batch_sizes(&v[at - 1], cfg.b)?)
                } else {
                    None
                };
                engine::lstm_backward(
                    &cfg,
                    sizes.as_deref(),
                    &engine::unpack_rows(&v[0], cfg.t),
                    params,
                    h0,
                    c0,
                    grads[0],
                    grads[1],
                    grads[2],
                    &saved,
                    &engine::unpack_rows(&v[at], cfg.t),
                    &v[at + 1],
                    &v[at + 2],
                    &v[at + 3..],
                )
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGRUGetWorkspaceSize(
    input: *const c_void,
    params: *const c_void,
    hx: *const c_void,
    batchSizes: *const c_void,
    hasBias: bool,
    numLayers: i64,
    _dropout: f64,
    train: bool,
    bidirection: bool,
    batchFirst: bool,
    output: *mut c_void,
    hy: *mut c_void,
    rOut: *mut c_void,
    zOut: *mut c_void,
    nOut: *mut c_void,
    hnOut: *mut c_void,
    hOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1("aclnnGRUGetWorkspaceSize", workspaceSize, executor, || {
        let x = a::tensor(input, "input")?;
        let ps = a::tensor_list(params, "params")?;
        let h0 = a::opt_tensor(hx, "hx")?;
        let y = a::tensor(output, "output")?;
        let hy = a::tensor(hy, "hy")?;
        let names = ["rOut", "zOut", "nOut", "hnOut", "hOut"];
        let handles = [rOut, zOut, nOut, hnOut, hOut];
        let mut lists = Vec::with_capacity(5);
        for (h, n) in handles.into_iter().zip(names) {
            lists.push(if train {
                a::tensor_list(h, n)?
            } else {
                opt_list(h, n)?
            });
        }
        fixed_length(batchSizes, "batchSizes")?;
        let cfg = geometry(
            &x,
            &ps,
            3,
            hasBias,
            numLayers,
            bidirection,
            batchFirst,
            None,
        )?;
        if let Some(h) = &h0 {
            check(h, &x, &state_shape(&cfg))?;
        }
        check(&y, &x, &seq_shape(&cfg, cfg.dirs() * cfg.hidden))?;
        check(&hy, &x, &state_shape(&cfg))?;
        check_lists(&lists.iter().collect::<Vec<_>>(), &names, &cfg, &x, train)?;
        let mut l = Launch::new("aclnnGRU");
        l.input(&x);
        l.inputs(&ps);
        if let Some(h) = &h0 {
            l.input(h);
        }
        l.output(&y);
        l.output(&hy);
        let mut counts = Vec::with_capacity(5);
        for list in &lists {
            l.outputs(list);
            counts.push(list.len());
        }
        let (np, has_h0) = (ps.len(), h0.is_some());
        l.finish(move |v, _| {
            let params = &v[1..1 + np];
            let h0 = has_h0.then(|| &v[1 + np]);
            let o = 1 + np + has_h0 as usize;
            let mut at = o + 2;
            let mut saved: Vec<&[View]> = Vec::with_capacity(5);
            for &c in &counts {
                saved.push(&v[at..at + c]);
                at += c;
            }
            engine::gru(&cfg, train, &v[0], params, h0, &v[o], &v[o + 1], &saved)
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn aclnnGRUBackwardGetWorkspaceSize(
    input: *const c_void,
    params: *const c_void,
    hx: *const c_void,
    dy: *const c_void,
    dh: *const c_void,
    r: *const c_void,
    z: *const c_void,
    n: *const c_void,
    hn: *const c_void,
    h: *const c_void,
    batchSizes: *const c_void,
    hasBias: bool,
    numLayers: i64,
    bidirection: bool,
    batchFirst: bool,
    dxOut: *mut c_void,
    dhPrevOut: *mut c_void,
    dparamsOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnGRUBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let x = a::tensor(input, "input")?;
            let ps = a::tensor_list(params, "params")?;
            let h0 = a::opt_tensor(hx, "hx")?;
            let dy = a::tensor(dy, "dy")?;
            let dh = a::tensor(dh, "dh")?;
            let names = ["r", "z", "n", "hn", "h"];
            let handles = [r, z, n, hn, h];
            let mut lists = Vec::with_capacity(5);
            for (hd, nm) in handles.into_iter().zip(names) {
                lists.push(a::tensor_list(hd, nm)?);
            }
            let dx = a::tensor(dxOut, "dxOut")?;
            let dh0 = a::tensor(dhPrevOut, "dhPrevOut")?;
            let dps = a::tensor_list(dparamsOut, "dparamsOut")?;
            fixed_length(batchSizes, "batchSizes")?;
            let cfg = geometry(
                &x,
                &ps,
                3,
                hasBias,
                numLayers,
                bidirection,
                batchFirst,
                None,
            )?;
            let ss = state_shape(&cfg);
            if let Some(t) = &h0 {
                check(t, &x, &ss)?;
            }
            check(&dh, &x, &ss)?;
            check(&dy, &x, &seq_shape(&cfg, cfg.dirs() * cfg.hidden))?;
            check_lists(&lists.iter().collect::<Vec<_>>(), &names, &cfg, &x, true)?;
            check(&dx, &x, x.shape())?;
            check(&dh0, &x, &ss)?;
            check_dparams(&dps, &ps, &x)?;
            let mut l = Launch::new("aclnnGRUBackward");
            l.input(&x);
            l.inputs(&ps);
            if let Some(t) = &h0 {
                l.input(t);
            }
            l.input(&dy);
            l.input(&dh);
            for list in &lists {
                l.inputs(list);
            }
            l.output(&dx);
            l.output(&dh0);
            l.outputs(&dps);
            let (np, has_h0, nl) = (ps.len(), h0.is_some(), cfg.layers * cfg.dirs());
            l.finish(move |v, _| {
                let params = &v[1..1 + np];
                let mut at = 1 + np;
                let h0 = has_h0.then(|| &v[at]);
                at += has_h0 as usize;
                let (dy, dh) = (&v[at], &v[at + 1]);
                at += 2;
                let mut saved: Vec<&[View]> = Vec::with_capacity(5);
                for _ in 0..5 {
                    saved.push(&v[at..at + nl]);
                    at += nl;
                }
                engine::gru_backward(
                    &cfg,
                    &v[0],
                    params,
                    h0,
                    Some(dy),
                    Some(dh),
                    &saved,
                    &v[at],
                    &v[at + 1],
                    &v[at + 2..],
                )
            })
        },
    )
}

/// `[B, 4H]` gates and `[B, H]` state of the fused cell: returns (B, H).
fn cell_shape(gates: &T, c: &T) -> NnResult<(usize, usize)> {
    if c.ndim() != 2 {
        return invalid(format!(
            "{} must be 2-D [batch, hidden], but its shape is {:?}",
            c.arg,
            c.shape()
        ));
    }
    let (b, h) = (c.shape()[0], c.shape()[1]);
    a::same_shape(gates, &[b, 4 * h])?;
    Ok((b, h))
}

#[no_mangle]
pub unsafe extern "C" fn aclnnThnnFusedLstmCellGetWorkspaceSize(
    inputGates: *const c_void,
    hiddenGates: *const c_void,
    cx: *const c_void,
    inputBiasOptional: *const c_void,
    hiddenBiasOptional: *const c_void,
    hyOut: *mut c_void,
    cyOut: *mut c_void,
    storageOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnThnnFusedLstmCellGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let ig = a::tensor(inputGates, "inputGates")?;
            let hg = a::tensor(hiddenGates, "hiddenGates")?;
            let c = a::tensor(cx, "cx")?;
            let bi = a::opt_tensor(inputBiasOptional, "inputBiasOptional")?;
            let bh = a::opt_tensor(hiddenBiasOptional, "hiddenBiasOptional")?;
            let hy = a::tensor(hyOut, "hyOut")?;
            let cy = a::tensor(cyOut, "cyOut")?;
            let st = a::tensor(storageOut, "storageOut")?;
            a::dtype_in(&ig, RNN_DTYPES)?;
            for t in [&hg, &c, &hy, &cy, &st].into_iter().chain(&bi).chain(&bh) {
                a::same_dtype(t, &ig)?;
            }
            let (b, h) = cell_shape(&ig, &c)?;
            a::same_shape(&hg, &[b, 4 * h])?;
            for t in bi.iter().chain(&bh) {
                a::same_shape(t, &[4 * h])?;
            }
            a::same_shape(&hy, &[b, h])?;
            a::same_shape(&cy, &[b, h])?;
            a::same_shape(&st, &[b, 4 * h])?;
            let mut l = Launch::new("aclnnThnnFusedLstmCell");
            l.input(&ig);
            l.input(&hg);
            l.input(&c);
            let (has_bi, has_bh) = (bi.is_some(), bh.is_some());
            for t in bi.iter().chain(&bh) {
                l.input(t);
            }
            l.output(&hy);
            l.output(&cy);
            l.output(&st);
            l.finish(move |v, _| {
                let bi = has_bi.then(|| &v[3]);
                let bh = has_bh.then(|| &v[3 + has_bi as usize]);
                let o = 3 + has_bi as usize + has_bh as usize;
                engine::lstm_cell(&v[0], &v[1], &v[2], bi, bh, &v[o], &v[o + 1], &v[o + 2])
            })
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn aclnnThnnFusedLstmCellBackwardGetWorkspaceSize(
    gradHyOptional: *const c_void,
    gradCOptional: *const c_void,
    cx: *const c_void,
    cy: *const c_void,
    storage: *const c_void,
    hasBias: bool,
    gradGatesOut: *mut c_void,
    gradCxOut: *mut c_void,
    gradBiasOut: *mut c_void,
    workspaceSize: *mut u64,
    executor: *mut *mut c_void,
) -> i32 {
    phase1(
        "aclnnThnnFusedLstmCellBackwardGetWorkspaceSize",
        workspaceSize,
        executor,
        || {
            let ghy = a::opt_tensor(gradHyOptional, "gradHyOptional")?;
            let gcy = a::opt_tensor(gradCOptional, "gradCOptional")?;
            let c0 = a::tensor(cx, "cx")?;
            let c1 = a::tensor(cy, "cy")?;
            let st = a::tensor(storage, "storage")?;
            let gg = a::tensor(gradGatesOut, "gradGatesOut")?;
            let gcx = a::tensor(gradCxOut, "gradCxOut")?;
            let gb = if hasBias {
                Some(a::tensor(gradBiasOut, "gradBiasOut")?)
            } else {
                a::opt_tensor(gradBiasOut, "gradBiasOut")?
            };
            a::dtype_in(&c0, RNN_DTYPES)?;
            let (b, h) = cell_shape(&st, &c0)?;
            for t in [&c1, &st, &gg, &gcx]
                .into_iter()
                .chain(&ghy)
                .chain(&gcy)
                .chain(&gb)
            {
                a::same_dtype(t, &c0)?;
            }
            for t in [&c1, &gcx].into_iter().chain(&ghy).chain(&gcy) {
                a::same_shape(t, &[b, h])?;
            }
            a::same_shape(&gg, &[b, 4 * h])?;
            if let Some(t) = &gb {
                a::same_shape(t, &[4 * h])?;
            }
            let mut l = Launch::new("aclnnThnnFusedLstmCellBackward");
            let (has_h, has_c) = (ghy.is_some(), gcy.is_some());
            for t in ghy.iter().chain(&gcy) {
                l.input(t);
            }
            l.input(&c0);
            l.input(&c1);
            l.input(&st);
            l.output(&gg);
            l.output(&gcx);
            if let Some(t) = &gb {
                l.output(t);
            }
            let has_gb = gb.is_some();
            l.finish(move |v, _| {
                let dh = has_h.then(|| &v[0]);
                let dc = has_c.then(|| &v[has_h as usize]);
                let i = has_h as usize + has_c as usize;
                let db = has_gb.then(|| &v[i + 5]);
                engine::lstm_cell_backward(
                    dh,
                    dc,
                    &v[i],
                    &v[i + 1],
                    &v[i + 2],
                    hasBias,
                    &v[i + 3],
                    &v[i + 4],
                    db,
                )
            })
        },
    )
}

crate::phase2!(
    aclnnLSTM,
    aclnnLstmBackward,
    aclnnGRU,
    aclnnGRUBackward,
    aclnnThnnFusedLstmCell,
    aclnnThnnFusedLstmCellBackward
);
