//! The GRU operators of the single-operator API: `DynamicGRUV2` and its gradient
//! `DynamicGRUV2Grad`, what `torch_npu.npu_gru` (one layer, one direction a call: op-plugin's
//! `GruKernelNpu.cpp`) and its autograd backward reach. The recurrence is
//! [`crate::ops::rnn::gru`]'s (PyTorch's `nn.GRU` with `reset_after`); this file maps the
//! operators' layout onto it.
//!
//! The operators' layout (CANN's op prototype and its TBE implementation):
//! - time major: `x [T, B, I]`; `init_h` `[1, B, H]` or `[B, H]` (zeros when absent); every
//!   output `y`, `output_h`, `update`, `reset`, `new`, `hidden_new` is `[T, B, H]`:
//!   `output_h` (and `y`) the state after each step, `update` = z, `reset` = r, `new` = n
//!   after their activations, `hidden_new` = `W_hn h + b_hn` (the hidden part of the
//!   candidate before the reset gate multiplies it);
//! - weights transposed against PyTorch's: `weight_input [I, 3H]`, `weight_hidden [H, 3H]`,
//!   biases `bias_input`, `bias_hidden` `[3H]` (optional: zeros), the gate blocks in
//!   `gate_order` "zrh" (CANN's default) or "rzh" (PyTorch's r, z, n, what torch_npu passes);
//! - `r = σ(x W_ir + b_ir + h W_hr + b_hr)`, `z = σ(x W_iz + b_iz + h W_hz + b_hz)`,
//!   `n = tanh(x W_in + b_in + r ∘ (h W_hn + b_hn))`, `h' = (1 - z) ∘ n + z ∘ h`;
//! - `direction` "REDIRECTIONAL" runs from the last step to the first.
//!
//! The gradient takes x, weight_input, weight_hidden, y, init_h, h (`output_h`), dy, dh (the
//! gradient of the final state `[B, H]` or `[1, B, H]`), update, reset, new, hidden_new and
//! writes dw_input, dw_hidden, db_input, db_hidden, dx, dh_prev.

use super::dynamic_rnn::{bad, check_state, flip, Dims, ShapeError};
use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::rnn::{self, Rnn};
use crate::ops::View;

/// The attributes the computation depends on.
#[derive(Clone, Copy, Debug)]
pub struct GruAttrs {
    /// "REDIRECTIONAL": from the last step to the first.
    pub reverse: bool,
    /// For each of PyTorch's gates r, z, n, its block in the operator's weights.
    pub blocks: [usize; 3],
}

/// Parse a `gate_order` attr ("zrh" or "rzh") into [`GruAttrs::blocks`].
pub fn gru_gate_blocks(order: &str) -> Result<[usize; 3], String> {
    match order {
        "rzh" => Ok([0, 1, 2]),
        "zrh" => Ok([1, 0, 2]),
        _ => Err(format!(
            "gate_order \"{order}\" is not supported: DynamicGRUV2 takes \"zrh\" or \"rzh\""
        )),
    }
}

/// The forward outputs, in order.
pub const GRU_OUT_NAMES: [&str; 6] = ["y", "output_h", "update", "reset", "new", "hidden_new"];

/// `x [T, B, I]`, `weight_input [I, 3H]`, `weight_hidden [H, 3H]` → the sizes.
fn gru_weight_dims(x: &[usize], wi: &[usize], wh: &[usize]) -> Result<Dims, ShapeError> {
    let [t, b, input] = *x else {
        return bad(
            false,
            0,
            format!("x must be 3-D [num_step, batch, input_size] (time major), got {x:?}"),
        );
    };
    let three_h = match wi {
        [i, n] if *i == input && n % 3 == 0 && *n > 0 => *n,
        _ => {
            return bad(
                false,
                1,
                format!(
                    "weight_input must be [input_size, 3 * hidden_size] with input_size {input} \
                     (x {x:?}), got {wi:?}"
                ),
            )
        }
    };
    let hidden = three_h / 3;
    if wh != [hidden, three_h] {
        return bad(
            false,
            2,
            format!("weight_hidden must be [hidden_size, 3 * hidden_size] = [{hidden}, {three_h}], got {wh:?}"),
        );
    }
    Ok(Dims {
        t,
        b,
        input,
        hidden,
    })
}

fn check_bias(s: Option<&[usize]>, i: usize, d: &Dims, output: bool) -> Result<(), ShapeError> {
    match s {
        Some(s) if s != [3 * d.hidden] => bad(
            output,
            i,
            format!(
                "a bias must be [3 * hidden_size] = [{}], got {s:?}",
                3 * d.hidden
            ),
        ),
        _ => Ok(()),
    }
}

fn check_steps(
    s: &[usize],
    output: bool,
    i: usize,
    name: &str,
    d: &Dims,
) -> Result<(), ShapeError> {
    if s != [d.t, d.b, d.hidden] {
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

/// Check a forward call: `ins` x, weight_input, weight_hidden, bias_input, bias_hidden,
/// seq_length, init_h (None: absent); `outs` its six outputs.
pub fn gru_forward_dims(ins: &[Option<&[usize]>], outs: &[&[usize]]) -> Result<Dims, ShapeError> {
    let need = |i: usize, name: &str| {
        ins[i].ok_or_else(|| ShapeError {
            output: false,
            index: i,
            msg: format!("{name} is required"),
        })
    };
    let d = gru_weight_dims(
        need(0, "x")?,
        need(1, "weight_input")?,
        need(2, "weight_hidden")?,
    )?;
    check_bias(ins[3], 3, &d, false)?;
    check_bias(ins[4], 4, &d, false)?;
    if ins[5].is_some() {
        return bad(
            false,
            5,
            "seq_length (variable sequence lengths) is not modelled: leave it out".into(),
        );
    }
    check_state(ins[6], false, 6, "init_h", &d)?;
    for (k, name) in GRU_OUT_NAMES.iter().enumerate() {
        check_steps(outs[k], true, k, name, &d)?;
    }
    Ok(d)
}

/// The gradient's inputs that are per-step `[T, B, H]`, by index.
const GRAD_STEPS: [(usize, &str); 7] = [
    (3, "y"),
    (5, "h"),
    (6, "dy"),
    (8, "update"),
    (9, "reset"),
    (10, "new"),
    (11, "hidden_new"),
];

/// Check a gradient call: `ins` x, weight_input, weight_hidden, y, init_h, h, dy, dh,
/// update, reset, new, hidden_new, seq_length, mask; `outs` dw_input, dw_hidden, db_input,
/// db_hidden, dx, dh_prev.
pub fn gru_grad_dims(ins: &[Option<&[usize]>], outs: &[&[usize]]) -> Result<Dims, ShapeError> {
    let x = ins[0].unwrap_or(&[]);
    let (wi, wh) = (ins[1].unwrap_or(&[]), ins[2].unwrap_or(&[]));
    let d = gru_weight_dims(x, wi, wh)?;
    check_state(ins[4], false, 4, "init_h", &d)?;
    for (i, name) in GRAD_STEPS {
        match ins[i] {
            Some(s) => check_steps(s, false, i, name, &d)?,
            None => return bad(false, i, format!("{name} is required")),
        }
    }
    check_state(ins[7], false, 7, "dh", &d)?;
    if ins[12].is_some() || ins[13].is_some() {
        return bad(
            false,
            12,
            "seq_length and mask (variable sequence lengths) are not modelled: pass 0-d \
             placeholders or leave them out"
                .into(),
        );
    }
    for (k, (want, name)) in [(wi, "dw_input"), (wh, "dw_hidden")]
        .into_iter()
        .enumerate()
    {
        if outs[k] != want {
            return bad(
                true,
                k,
                format!(
                    "{name} must have the weight's shape {want:?}, got {:?}",
                    outs[k]
                ),
            );
        }
    }
    check_bias(Some(outs[2]), 2, &d, true)?;
    check_bias(Some(outs[3]), 3, &d, true)?;
    if outs[4] != x {
        return bad(
            true,
            4,
            format!("dx must have x's shape {x:?}, got {:?}", outs[4]),
        );
    }
    check_state(Some(outs[5]), true, 5, "dh_prev", &d)?;
    Ok(d)
}

fn f32s(v: &View) -> Result<Vec<f32>, String> {
    load::<f32>(v, DType::F32)
}

/// An operator weight `[rows, 3H]` (blocks in the operator's order) as PyTorch's `[3H, rows]`
/// (blocks r, z, n); a bias is one row.
fn to_torch(m: &[f32], rows: usize, h: usize, blocks: &[usize; 3]) -> Vec<f32> {
    let gh = 3 * h;
    let mut out = vec![0f32; rows * gh];
    for (g, &blk) in blocks.iter().enumerate() {
        for j in 0..h {
            for r in 0..rows {
                out[(g * h + j) * rows + r] = m[r * gh + blk * h + j];
            }
        }
    }
    out
}

/// PyTorch's `[3H, rows]` back to the operator's `[rows, 3H]`.
fn from_torch(m: &[f32], rows: usize, h: usize, blocks: &[usize; 3]) -> Vec<f32> {
    let gh = 3 * h;
    let mut out = vec![0f32; rows * gh];
    for (g, &blk) in blocks.iter().enumerate() {
        for j in 0..h {
            for r in 0..rows {
                out[r * gh + blk * h + j] = m[(g * h + j) * rows + r];
            }
        }
    }
    out
}

/// PyTorch-layout parameters of one call: w_ih, w_hh, b_ih, b_hh.
struct Params {
    bufs: [Vec<f32>; 4],
    shapes: [Vec<usize>; 4],
}

impl Params {
    fn new(
        d: &Dims,
        a: &GruAttrs,
        wi: &View,
        wh: &View,
        bi: Option<&View>,
        bh: Option<&View>,
    ) -> Result<Params, String> {
        let (i, h) = (d.input, d.hidden);
        let bias = |b: Option<&View>| -> Result<Vec<f32>, String> {
            match b {
                Some(b) => Ok(to_torch(&f32s(b)?, 1, h, &a.blocks)),
                None => Ok(vec![0f32; 3 * h]),
            }
        };
        Ok(Params {
            bufs: [
                to_torch(&f32s(wi)?, i, h, &a.blocks),
                to_torch(&f32s(wh)?, h, h, &a.blocks),
                bias(bi)?,
                bias(bh)?,
            ],
            shapes: [vec![3 * h, i], vec![3 * h, h], vec![3 * h], vec![3 * h]],
        })
    }

    fn views(&mut self) -> Vec<View> {
        self.bufs
            .iter_mut()
            .zip(&self.shapes)
            .map(|(b, s)| View::of_slice(b.as_mut_slice(), DType::F32, s))
            .collect()
    }
}

fn cfg(d: &Dims) -> Rnn {
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

/// The forward operator's tensors, by role.
pub struct GruForward<'a> {
    pub x: &'a View,
    pub wi: &'a View,
    pub wh: &'a View,
    pub bi: Option<&'a View>,
    pub bh: Option<&'a View>,
    pub h0: Option<&'a View>,
    /// y, output_h, update, reset, new, hidden_new.
    pub outs: &'a [View],
}

/// DynamicGRUV2.
pub fn gru_forward(d: &Dims, a: &GruAttrs, f: &GruForward) -> Result<(), String> {
    let mut p = Params::new(d, a, f.wi, f.wh, f.bi, f.bh)?;
    let params = p.views();
    let fl = |v: &View| flip(v, a.reverse);
    let o: Vec<View> = f.outs.iter().map(fl).collect();
    let mut hy = vec![0f32; d.b * d.hidden];
    let hy_v = View::of_slice(hy.as_mut_slice(), DType::F32, &[1, d.b, d.hidden]);
    // rnn::gru saves r, z, n, hn, h
    let saved: [&[View]; 5] = [
        std::slice::from_ref(&o[3]),
        std::slice::from_ref(&o[2]),
        std::slice::from_ref(&o[4]),
        std::slice::from_ref(&o[5]),
        std::slice::from_ref(&o[1]),
    ];
    rnn::gru(&cfg(d), true, &fl(f.x), &params, f.h0, &o[0], &hy_v, &saved)
}

/// The gradient operator's tensors, by role.
pub struct GruGrad<'a> {
    pub x: &'a View,
    pub wi: &'a View,
    pub wh: &'a View,
    pub h0: Option<&'a View>,
    pub h: &'a View,
    pub dy: &'a View,
    pub dh: Option<&'a View>,
    /// update, reset, new, hidden_new.
    pub gates: [&'a View; 4],
    /// dw_input, dw_hidden, db_input, db_hidden, dx, dh_prev.
    pub outs: &'a [View],
}

/// DynamicGRUV2Grad: the gradients of [`gru_forward`] from the saved gates.
pub fn gru_backward(d: &Dims, a: &GruAttrs, g: &GruGrad) -> Result<(), String> {
    let (i, h) = (d.input, d.hidden);
    let mut p = Params::new(d, a, g.wi, g.wh, None, None)?;
    let params = p.views();
    let fl = |v: &View| flip(v, a.reverse);
    let (z, r, n, hn, hs) = (
        fl(g.gates[0]),
        fl(g.gates[1]),
        fl(g.gates[2]),
        fl(g.gates[3]),
        fl(g.h),
    );
    let saved: [&[View]; 5] = [
        std::slice::from_ref(&r),
        std::slice::from_ref(&z),
        std::slice::from_ref(&n),
        std::slice::from_ref(&hn),
        std::slice::from_ref(&hs),
    ];
    let mut dp: [Vec<f32>; 4] = [
        vec![0f32; 3 * h * i],
        vec![0f32; 3 * h * h],
        vec![0f32; 3 * h],
        vec![0f32; 3 * h],
    ];
    let shapes = [vec![3 * h, i], vec![3 * h, h], vec![3 * h], vec![3 * h]];
    let dviews: Vec<View> = dp
        .iter_mut()
        .zip(&shapes)
        .map(|(b, s)| View::of_slice(b.as_mut_slice(), DType::F32, s))
        .collect();
    let mut dh0 = vec![0f32; d.b * h];
    let dh0_v = View::of_slice(dh0.as_mut_slice(), DType::F32, &[1, d.b, h]);
    rnn::gru_backward(
        &cfg(d),
        &fl(g.x),
        &params,
        g.h0,
        Some(&fl(g.dy)),
        g.dh,
        &saved,
        &fl(&g.outs[4]),
        &dh0_v,
        &dviews,
    )?;
    drop(dviews);
    let o = g.outs;
    store(from_torch(&dp[0], i, h, &a.blocks), DType::F32, &o[0])?;
    store(from_torch(&dp[1], h, h, &a.blocks), DType::F32, &o[1])?;
    store(from_torch(&dp[2], 1, h, &a.blocks), DType::F32, &o[2])?;
    store(from_torch(&dp[3], 1, h, &a.blocks), DType::F32, &o[3])?;
    store(dh0, DType::F32, &o[5])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(buf: &mut [f32], shape: &[usize]) -> View {
        View::of_slice(buf, DType::F32, shape)
    }

    /// Run the forward on `x [T, B, I]` with weights in `order`; returns the six outputs.
    fn run(d: &Dims, a: &GruAttrs, x: &[f32], wi: &[f32], wh: &[f32], b: &[f32]) -> Vec<Vec<f32>> {
        let (t, bt, i, h) = (d.t, d.b, d.input, d.hidden);
        let (mut x, mut wi, mut wh) = (x.to_vec(), wi.to_vec(), wh.to_vec());
        let (mut bi, mut bh) = (b.to_vec(), b.iter().map(|v| v * 0.5).collect::<Vec<f32>>());
        let mut outs: Vec<Vec<f32>> = (0..6).map(|_| vec![0f32; t * bt * h]).collect();
        let views: Vec<View> = outs.iter_mut().map(|o| v(o, &[t, bt, h])).collect();
        gru_forward(
            d,
            a,
            &GruForward {
                x: &v(&mut x, &[t, bt, i]),
                wi: &v(&mut wi, &[i, 3 * h]),
                wh: &v(&mut wh, &[h, 3 * h]),
                bi: Some(&v(&mut bi, &[3 * h])),
                bh: Some(&v(&mut bh, &[3 * h])),
                h0: None,
                outs: &views,
            },
        )
        .unwrap();
        drop(views);
        outs
    }

    /// The first two gate blocks of each row swapped (rzh <-> zrh).
    fn swap_rz(m: &[f32], h: usize) -> Vec<f32> {
        m.chunks(3 * h)
            .flat_map(|r| [&r[h..2 * h], &r[..h], &r[2 * h..]].concat())
            .collect()
    }

    #[test]
    fn gate_order_and_direction_are_layouts_of_one_recurrence() {
        let d = Dims {
            t: 4,
            b: 2,
            input: 3,
            hidden: 2,
        };
        let h = d.hidden;
        let f = |n: usize, k: f32| -> Vec<f32> {
            (0..n).map(|j| ((j as f32 * k).sin()) * 0.6).collect()
        };
        let (x, wi, wh, b) = (f(24, 0.7), f(18, 1.3), f(12, 2.1), f(6, 0.9));
        let rzh = GruAttrs {
            reverse: false,
            blocks: gru_gate_blocks("rzh").unwrap(),
        };
        let zrh = GruAttrs {
            reverse: false,
            blocks: gru_gate_blocks("zrh").unwrap(),
        };
        let a = run(&d, &rzh, &x, &wi, &wh, &b);
        let z = run(
            &d,
            &zrh,
            &x,
            &swap_rz(&wi, h),
            &swap_rz(&wh, h),
            &swap_rz(&b, h),
        );
        assert_eq!(a, z);
        // REDIRECTIONAL on x is UNIDIRECTIONAL on x reversed in time, its outputs reversed
        let step = d.b * d.input;
        let xr: Vec<f32> = x.chunks(step).rev().flatten().copied().collect();
        let fwd = run(&d, &rzh, &xr, &wi, &wh, &b);
        let rev = run(
            &d,
            &GruAttrs {
                reverse: true,
                ..rzh
            },
            &x,
            &wi,
            &wh,
            &b,
        );
        let hs = d.b * h;
        for (o, r) in fwd.iter().zip(&rev) {
            let flipped: Vec<f32> = o.chunks(hs).rev().flatten().copied().collect();
            assert_eq!(&flipped, r);
        }
        // the saved gates hold z, r and n of the formula: h' = (1 - z) n + z h
        let (y, upd, new) = (&a[0], &a[2], &a[4]);
        for k in 0..hs {
            let want = (1.0 - upd[k]) * new[k];
            assert!((y[k] - want).abs() < 1e-6, "{} vs {want}", y[k]);
        }
    }

    #[test]
    fn gate_blocks_round_trip() {
        let h = 2;
        let rows = 3;
        let m: Vec<f32> = (0..rows * 3 * h).map(|v| v as f32).collect();
        for order in ["zrh", "rzh"] {
            let b = gru_gate_blocks(order).unwrap();
            assert_eq!(from_torch(&to_torch(&m, rows, h, &b), rows, h, &b), m);
        }
        // zrh: PyTorch's r block (rows 0..h of the transpose) is the operator's second block
        let t = to_torch(&m, rows, h, &gru_gate_blocks("zrh").unwrap());
        assert_eq!(t[0], m[h]);
        assert!(gru_gate_blocks("hzr").is_err());
    }
}
