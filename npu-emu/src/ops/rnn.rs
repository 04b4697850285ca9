//! Recurrent layers: the multi-layer, optionally bidirectional LSTM and GRU that torch_npu's
//! `nn.LSTM` / `nn.GRU` reach (`aclnnLSTM`, `aclnnLstmBackward`, `aclnnGRU`,
//! `aclnnGRUBackward`) and the fused LSTM cell of `nn.LSTMCell` (`aclnnThnnFusedLstmCell`
//! and its backward).
//!
//! Weights are in PyTorch's layout, the one torch_npu passes unchanged: per layer and
//! direction `weight_ih [G*H, in]`, `weight_hh [G*H, H]` (and `bias_ih`, `bias_hh [G*H]`),
//! the gate blocks in the order i, f, g, o for the LSTM and r, z, n for the GRU. The saved
//! intermediates are per (layer, direction) `[T, B, H]` at the time index of the step (the
//! reverse direction fills them from the end): LSTM i, j (= g, the cell candidate), f, o,
//! h, c, tanh(c); GRU r, z, n, hn (`W_hn h + b_hn`), h. The backward forms read exactly
//! these. Everything is computed in f32 (f16 operands widened, results rounded once); the
//! products go through [`super::matmul::matmul`].

use super::dtype::DType;
use super::extra::{load, store};
use super::matmul::matmul;
use super::view::{contiguous_strides, View};

/// The shape of a recurrent call.
#[derive(Clone, Copy, Debug)]
pub struct Rnn {
    pub layers: usize,
    pub bidir: bool,
    pub bias: bool,
    pub batch_first: bool,
    /// Time steps, batch, input features, hidden size.
    pub t: usize,
    pub b: usize,
    pub input: usize,
    pub hidden: usize,
}

impl Rnn {
    pub fn dirs(&self) -> usize {
        if self.bidir {
            2
        } else {
            1
        }
    }
    /// Parameters per (layer, direction): weight_ih, weight_hh (, bias_ih, bias_hh).
    pub fn per(&self) -> usize {
        if self.bias {
            4
        } else {
            2
        }
    }
    /// Input features of layer `l`.
    pub fn in_size(&self, l: usize) -> usize {
        if l == 0 {
            self.input
        } else {
            self.dirs() * self.hidden
        }
    }
}

fn sig(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn f32s(v: &View) -> Result<Vec<f32>, String> {
    load::<f32>(v, DType::F32)
}

fn put(buf: Vec<f32>, out: &View) -> Result<(), String> {
    store(buf, DType::F32, out)
}

/// A time-major view of a `[B, T, …]` tensor when `batch_first`.
fn time_major(v: &View, batch_first: bool) -> View {
    if batch_first {
        v.permute(&[1, 0, 2])
    } else {
        v.clone()
    }
}

/// A packed-form tensor `[T*B, F]` seen as `[T, B, F]` (its rows are time-major).
pub fn unpack_rows(v: &View, t: usize) -> View {
    if v.ndim() != 2 {
        return v.clone();
    }
    let b = v.shape[0].checked_div(t).unwrap_or(0);
    View {
        ptr: v.ptr,
        dtype: v.dtype,
        shape: vec![t, b, v.shape[1]],
        strides: vec![v.strides[0] * b as isize, v.strides[0], v.strides[1]],
    }
}

/// Whether batch row `bi` takes part in time step `ti` (`bs`: the packed form's batch sizes
/// per step; None: every row, every step).
fn live(bs: Option<&[usize]>, ti: usize, bi: usize) -> bool {
    bs.is_none_or(|v| bi < v[ti])
}

/// The `[rows, cols]` matrix `p` holds, read transposed (`p` stores `[cols, rows]`) when `t`.
fn mat(p: &[f32], rows: usize, cols: usize, t: bool) -> View {
    let stored = if t { [cols, rows] } else { [rows, cols] };
    let v = View {
        ptr: p.as_ptr() as *mut u8,
        dtype: DType::F32,
        shape: stored.to_vec(),
        strides: contiguous_strides(&stored),
    };
    if t {
        v.permute(&[1, 0])
    } else {
        v
    }
}

/// `out (+)= op(a) @ op(b)`, `op(a)` `[m, k]`, `op(b)` `[k, n]`, `out` `[m, n]` row-major.
#[allow(clippy::too_many_arguments)]
fn mm(
    a: &[f32],
    ta: bool,
    b: &[f32],
    tb: bool,
    m: usize,
    k: usize,
    n: usize,
    out: &mut [f32],
    acc: bool,
) -> Result<(), String> {
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        if !acc {
            out.fill(0.0);
        }
        return Ok(());
    }
    let (av, bv) = (mat(a, m, k, ta), mat(b, k, n, tb));
    if acc {
        let mut tmp = vec![0f32; m * n];
        matmul(
            &av,
            &bv,
            &View::of_slice(&mut tmp, DType::F32, &[m, n]),
            1.0,
            None,
        )?;
        out.iter_mut().zip(&tmp).for_each(|(o, t)| *o += t);
        Ok(())
    } else {
        matmul(
            &av,
            &bv,
            &View::of_slice(out, DType::F32, &[m, n]),
            1.0,
            None,
        )
    }
}

/// Column sums of a `[rows, cols]` matrix.
fn colsum(a: &[f32], cols: usize) -> Vec<f32> {
    let mut s = vec![0f64; cols];
    for row in a.chunks(cols) {
        s.iter_mut().zip(row).for_each(|(s, v)| *s += *v as f64);
    }
    s.into_iter().map(|v| v as f32).collect()
}

/// The parameters of one (layer, direction): weights and the (possibly absent) biases.
struct Params {
    w_ih: Vec<f32>,
    w_hh: Vec<f32>,
    b_ih: Option<Vec<f32>>,
    b_hh: Option<Vec<f32>>,
}

fn params_of(cfg: &Rnn, params: &[View], l: usize, d: usize) -> Result<Params, String> {
    let base = (l * cfg.dirs() + d) * cfg.per();
    Ok(Params {
        w_ih: f32s(&params[base])?,
        w_hh: f32s(&params[base + 1])?,
        b_ih: if cfg.bias {
            Some(f32s(&params[base + 2])?)
        } else {
            None
        },
        b_hh: if cfg.bias {
            Some(f32s(&params[base + 3])?)
        } else {
            None
        },
    })
}

/// The initial state `[L*D, B, H]` (zeros when absent).
fn state(v: Option<&View>, n: usize) -> Result<Vec<f32>, String> {
    match v {
        Some(v) => f32s(v),
        None => Ok(vec![0f32; n]),
    }
}

/// Store a per-step `[T, B, H]` buffer into a saved-intermediate tensor: the whole sequence
/// when it has `T*B*H` elements, the last step when it has `B*H` (an inference-mode
/// `hOut`/`cOut`); inference-mode placeholders of any other size are left alone.
fn save(buf: &[f32], last: &[f32], out: &View, train: bool) -> Result<(), String> {
    if out.numel() == buf.len() {
        put(buf.to_vec(), out)
    } else if out.numel() == last.len() {
        put(last.to_vec(), out)
    } else if train {
        Err(format!(
            "a saved intermediate has shape {:?}, expected {} elements",
            out.shape,
            buf.len()
        ))
    } else {
        Ok(())
    }
}

/// The layer-input buffer (time-major `[T, B, in]`) of layer `l` from the previous layer's
/// per-direction outputs `[T, B, H]`.
fn concat_dirs(outs: &[Vec<f32>], t: usize, b: usize, h: usize) -> Vec<f32> {
    let d = outs.len();
    let mut x = vec![0f32; t * b * d * h];
    for (di, o) in outs.iter().enumerate() {
        for r in 0..t * b {
            x[r * d * h + di * h..r * d * h + (di + 1) * h].copy_from_slice(&o[r * h..(r + 1) * h]);
        }
    }
    x
}

/// `pre = X @ W_ih^T (+ b_ih (+ b_hh))` for all steps at once: `[T*B, G*H]`.
fn input_gates(
    x: &[f32],
    rows: usize,
    inp: usize,
    p: &Params,
    gh: usize,
    with_bhh: bool,
) -> Result<Vec<f32>, String> {
    let mut pre = vec![0f32; rows * gh];
    mm(x, false, &p.w_ih, true, rows, inp, gh, &mut pre, false)?;
    for row in pre.chunks_mut(gh) {
        if let Some(bi) = &p.b_ih {
            row.iter_mut().zip(bi).for_each(|(r, v)| *r += v);
        }
        if with_bhh {
            if let Some(bh) = &p.b_hh {
                row.iter_mut().zip(bh).for_each(|(r, v)| *r += v);
            }
        }
    }
    Ok(pre)
}

/// The step order of direction `d`: forward in time, or backward for the reverse direction.
fn step_time(d: usize, step: usize, t: usize) -> usize {
    if d == 0 {
        step
    } else {
        t - 1 - step
    }
}

/// `nn.LSTM`'s forward. `views`: `x`, the parameters, `h0`/`c0` (optional), then `y`
/// (`[T, B, D*H]`, batch first when `cfg.batch_first`), `hy`, `cy` (`[L*D, B, H]`) and
/// `saved` — empty, or the seven lists i, j, f, o, h, c, tanh(c) of `L*D` tensors each.
///
/// `bs` (the packed form): the batch size of each step, non-increasing; rows at or past it
/// keep their state, output 0, and save the kept state as h and c (what the backward
/// passes through).
#[allow(clippy::too_many_arguments)]
pub fn lstm(
    cfg: &Rnn,
    train: bool,
    bs: Option<&[usize]>,
    x: &View,
    params: &[View],
    h0: Option<&View>,
    c0: Option<&View>,
    y: &View,
    hy: &View,
    cy: &View,
    saved: &[&[View]],
) -> Result<(), String> {
    let (t, b, h, nd) = (cfg.t, cfg.b, cfg.hidden, cfg.dirs());
    let gh = 4 * h;
    let h0 = state(h0, cfg.layers * nd * b * h)?;
    let c0 = state(c0, cfg.layers * nd * b * h)?;
    let mut hy_buf = vec![0f32; cfg.layers * nd * b * h];
    let mut cy_buf = hy_buf.clone();
    let mut inp = f32s(&time_major(x, cfg.batch_first))?;
    for l in 0..cfg.layers {
        let in_size = cfg.in_size(l);
        let mut outs = Vec::with_capacity(nd);
        for d in 0..nd {
            let k = l * nd + d;
            let p = params_of(cfg, params, l, d)?;
            let pre = input_gates(&inp, t * b, in_size, &p, gh, true)?;
            let mut hcur = h0[k * b * h..(k + 1) * b * h].to_vec();
            let mut ccur = c0[k * b * h..(k + 1) * b * h].to_vec();
            // i, j, f, o, h, c, tanh(c) per step
            let mut sv: Vec<Vec<f32>> = (0..7).map(|_| vec![0f32; t * b * h]).collect();
            let mut g = vec![0f32; b * gh];
            for step in 0..t {
                let ti = step_time(d, step, t);
                g.copy_from_slice(&pre[ti * b * gh..(ti + 1) * b * gh]);
                mm(&hcur, false, &p.w_hh, true, b, h, gh, &mut g, true)?;
                for bi in 0..b {
                    let gr = &g[bi * gh..(bi + 1) * gh];
                    if !live(bs, ti, bi) {
                        for j in 0..h {
                            let s = bi * h + j;
                            let at = ti * b * h + s;
                            sv[4][at] = hcur[s];
                            sv[5][at] = ccur[s];
                        }
                        continue;
                    }
                    for j in 0..h {
                        let ig = sig(gr[j]);
                        let fg = sig(gr[h + j]);
                        let cg = gr[2 * h + j].tanh();
                        let og = sig(gr[3 * h + j]);
                        let s = bi * h + j;
                        let c = fg * ccur[s] + ig * cg;
                        let tc = c.tanh();
                        ccur[s] = c;
                        hcur[s] = og * tc;
                        let at = ti * b * h + s;
                        for (q, v) in [ig, cg, fg, og, og * tc, c, tc].into_iter().enumerate() {
                            sv[q][at] = v;
                        }
                    }
                }
            }
            hy_buf[k * b * h..(k + 1) * b * h].copy_from_slice(&hcur);
            cy_buf[k * b * h..(k + 1) * b * h].copy_from_slice(&ccur);
            for (q, list) in saved.iter().enumerate() {
                let last = if q == 5 { &ccur } else { &hcur };
                if let Some(o) = list.get(k) {
                    save(&sv[q], last, o, train)?;
                }
            }
            let mut out = std::mem::take(&mut sv[4]);
            mask_rows(&mut out, bs, b, h);
            outs.push(out);
        }
        inp = concat_dirs(&outs, t, b, h);
    }
    put(inp, &time_major(y, cfg.batch_first))?;
    put(hy_buf, hy)?;
    put(cy_buf, cy)
}

/// Zero the rows of a `[T, B, w]` buffer that a packed step does not cover.
fn mask_rows(buf: &mut [f32], bs: Option<&[usize]>, b: usize, w: usize) {
    if let Some(v) = bs {
        for (ti, &n) in v.iter().enumerate() {
            buf[(ti * b + n.min(b)) * w..(ti + 1) * b * w].fill(0.0);
        }
    }
}

/// The gradients of [`lstm`]. `dy` `[T, B, D*H]` (batch first when `cfg.batch_first`),
/// `dhy`, `dcy` `[L*D, B, H]` (None = zeros), `saved` the seven lists [`lstm`] filled in
/// training. Writes `dx` (the input's shape), `dh0`, `dc0` `[L*D, B, H]` and `dparams` (the
/// parameters' layout).
#[allow(clippy::too_many_arguments)]
pub fn lstm_backward(
    cfg: &Rnn,
    bs: Option<&[usize]>,
    x: &View,
    params: &[View],
    h0: Option<&View>,
    c0: Option<&View>,
    dy: Option<&View>,
    dhy: Option<&View>,
    dcy: Option<&View>,
    saved: &[&[View]],
    dx: &View,
    dh0: &View,
    dc0: &View,
    dparams: &[View],
) -> Result<(), String> {
    let (t, b, h, nd) = (cfg.t, cfg.b, cfg.hidden, cfg.dirs());
    let gh = 4 * h;
    let ld = cfg.layers * nd;
    let h0 = state(h0, ld * b * h)?;
    let c0 = state(c0, ld * b * h)?;
    let dhy = state(dhy, ld * b * h)?;
    let dcy = state(dcy, ld * b * h)?;
    let mut dout = match dy {
        Some(v) => f32s(&time_major(v, cfg.batch_first))?,
        None => vec![0f32; t * b * nd * h],
    };
    let sv = |q: usize, k: usize| -> Result<Vec<f32>, String> { f32s(&saved[q][k]) };
    let mut dh0_buf = vec![0f32; ld * b * h];
    let mut dc0_buf = dh0_buf.clone();
    for l in (0..cfg.layers).rev() {
        let in_size = cfg.in_size(l);
        let inp = if l == 0 {
            f32s(&time_major(x, cfg.batch_first))?
        } else {
            let mut prev: Vec<Vec<f32>> = (0..nd)
                .map(|d| sv(4, (l - 1) * nd + d))
                .collect::<Result<_, _>>()?;
            prev.iter_mut().for_each(|p| mask_rows(p, bs, b, h));
            concat_dirs(&prev, t, b, h)
        };
        let mut dinp = vec![0f32; t * b * in_size];
        for d in 0..nd {
            let k = l * nd + d;
            let p = params_of(cfg, params, l, d)?;
            let (ig, jg, fg, og, hs, cs, tcs) = (
                sv(0, k)?,
                sv(1, k)?,
                sv(2, k)?,
                sv(3, k)?,
                sv(4, k)?,
                sv(5, k)?,
                sv(6, k)?,
            );
            let h_init = &h0[k * b * h..(k + 1) * b * h];
            let c_init = &c0[k * b * h..(k + 1) * b * h];
            let mut dh = dhy[k * b * h..(k + 1) * b * h].to_vec();
            let mut dc = dcy[k * b * h..(k + 1) * b * h].to_vec();
            let mut dg = vec![0f32; t * b * gh];
            let mut hprev = vec![0f32; t * b * h];
            for step in (0..t).rev() {
                let ti = step_time(d, step, t);
                let (hp, cp): (&[f32], &[f32]) = if step == 0 {
                    (h_init, c_init)
                } else {
                    let pt = step_time(d, step - 1, t);
                    (
                        &hs[pt * b * h..(pt + 1) * b * h],
                        &cs[pt * b * h..(pt + 1) * b * h],
                    )
                };
                hprev[ti * b * h..(ti + 1) * b * h].copy_from_slice(hp);
                let kept = dh.clone();
                for bi in 0..b {
                    if !live(bs, ti, bi) {
                        continue;
                    }
                    for j in 0..h {
                        let s = bi * h + j;
                        let at = ti * b * h + s;
                        let dht = dh[s] + dout[(ti * b + bi) * nd * h + d * h + j];
                        let (i, g, f, o, tc) = (ig[at], jg[at], fg[at], og[at], tcs[at]);
                        let dct = dc[s] + dht * o * (1.0 - tc * tc);
                        let row = &mut dg[(ti * b + bi) * gh..(ti * b + bi + 1) * gh];
                        row[j] = dct * g * i * (1.0 - i);
                        row[h + j] = dct * cp[s] * f * (1.0 - f);
                        row[2 * h + j] = dct * i * (1.0 - g * g);
                        row[3 * h + j] = dht * tc * o * (1.0 - o);
                        dc[s] = dct * f;
                    }
                }
                // dh for the previous step: dG[t] @ W_hh (rows outside the step pass through)
                mm(
                    &dg[ti * b * gh..(ti + 1) * b * gh],
                    false,
                    &p.w_hh,
                    false,
                    b,
                    gh,
                    h,
                    &mut dh,
                    false,
                )?;
                for bi in (0..b).filter(|&bi| !live(bs, ti, bi)) {
                    dh[bi * h..(bi + 1) * h].copy_from_slice(&kept[bi * h..(bi + 1) * h]);
                }
            }
            dh0_buf[k * b * h..(k + 1) * b * h].copy_from_slice(&dh);
            dc0_buf[k * b * h..(k + 1) * b * h].copy_from_slice(&dc);
            let base = k * cfg.per();
            let mut dw = vec![0f32; gh * in_size];
            mm(&dg, true, &inp, false, gh, t * b, in_size, &mut dw, false)?;
            put(dw, &dparams[base])?;
            let mut dw = vec![0f32; gh * h];
            mm(&dg, true, &hprev, false, gh, t * b, h, &mut dw, false)?;
            put(dw, &dparams[base + 1])?;
            if cfg.bias {
                let db = colsum(&dg, gh);
                put(db.clone(), &dparams[base + 2])?;
                put(db, &dparams[base + 3])?;
            }
            mm(
                &dg,
                false,
                &p.w_ih,
                false,
                t * b,
                gh,
                in_size,
                &mut dinp,
                true,
            )?;
        }
        dout = dinp;
    }
    put(dout, &time_major(dx, cfg.batch_first))?;
    put(dh0_buf, dh0)?;
    put(dc0_buf, dc0)
}

/// `nn.GRU`'s forward. `h0` optional; `y`, `hy` as for [`lstm`]; `saved` empty or the five
/// lists r, z, n, hn, h.
#[allow(clippy::too_many_arguments)]
pub fn gru(
    cfg: &Rnn,
    train: bool,
    x: &View,
    params: &[View],
    h0: Option<&View>,
    y: &View,
    hy: &View,
    saved: &[&[View]],
) -> Result<(), String> {
    let (t, b, h, nd) = (cfg.t, cfg.b, cfg.hidden, cfg.dirs());
    let gh = 3 * h;
    let h0 = state(h0, cfg.layers * nd * b * h)?;
    let mut hy_buf = vec![0f32; cfg.layers * nd * b * h];
    let mut inp = f32s(&time_major(x, cfg.batch_first))?;
    for l in 0..cfg.layers {
        let in_size = cfg.in_size(l);
        let mut outs = Vec::with_capacity(nd);
        for d in 0..nd {
            let k = l * nd + d;
            let p = params_of(cfg, params, l, d)?;
            let pre = input_gates(&inp, t * b, in_size, &p, gh, false)?;
            let mut hcur = h0[k * b * h..(k + 1) * b * h].to_vec();
            // r, z, n, hn, h per step
            let mut sv: Vec<Vec<f32>> = (0..5).map(|_| vec![0f32; t * b * h]).collect();
            let mut hg = vec![0f32; b * gh];
            for step in 0..t {
                let ti = step_time(d, step, t);
                mm(&hcur, false, &p.w_hh, true, b, h, gh, &mut hg, false)?;
                if let Some(bh) = &p.b_hh {
                    for row in hg.chunks_mut(gh) {
                        row.iter_mut().zip(bh).for_each(|(r, v)| *r += v);
                    }
                }
                for bi in 0..b {
                    let pr = &pre[(ti * b + bi) * gh..(ti * b + bi + 1) * gh];
                    let hr = &hg[bi * gh..(bi + 1) * gh];
                    for j in 0..h {
                        let r = sig(pr[j] + hr[j]);
                        let z = sig(pr[h + j] + hr[h + j]);
                        let hn = hr[2 * h + j];
                        let n = (pr[2 * h + j] + r * hn).tanh();
                        let s = bi * h + j;
                        let hnew = (1.0 - z) * n + z * hcur[s];
                        hcur[s] = hnew;
                        let at = ti * b * h + s;
                        for (q, v) in [r, z, n, hn, hnew].into_iter().enumerate() {
                            sv[q][at] = v;
                        }
                    }
                }
            }
            hy_buf[k * b * h..(k + 1) * b * h].copy_from_slice(&hcur);
            for (q, list) in saved.iter().enumerate() {
                if let Some(o) = list.get(k) {
                    save(&sv[q], &hcur, o, train)?;
                }
            }
            outs.push(std::mem::take(&mut sv[4]));
        }
        inp = concat_dirs(&outs, t, b, h);
    }
    put(inp, &time_major(y, cfg.batch_first))?;
    put(hy_buf, hy)
}

/// The gradients of [`gru`]: `saved` the five lists r, z, n, hn, h; writes `dx`, `dh0`
/// `[L*D, B, H]` and `dparams`.
#[allow(clippy::too_many_arguments)]
pub fn gru_backward(
    cfg: &Rnn,
    x: &View,
    params: &[View],
    h0: Option<&View>,
    dy: Option<&View>,
    dhy: Option<&View>,
    saved: &[&[View]],
    dx: &View,
    dh0: &View,
    dparams: &[View],
) -> Result<(), String> {
    let (t, b, h, nd) = (cfg.t, cfg.b, cfg.hidden, cfg.dirs());
    let gh = 3 * h;
    let ld = cfg.layers * nd;
    let h0 = state(h0, ld * b * h)?;
    let dhy = state(dhy, ld * b * h)?;
    let mut dout = match dy {
        Some(v) => f32s(&time_major(v, cfg.batch_first))?,
        None => vec![0f32; t * b * nd * h],
    };
    let sv = |q: usize, k: usize| -> Result<Vec<f32>, String> { f32s(&saved[q][k]) };
    let mut dh0_buf = vec![0f32; ld * b * h];
    for l in (0..cfg.layers).rev() {
        let in_size = cfg.in_size(l);
        let inp = if l == 0 {
            f32s(&time_major(x, cfg.batch_first))?
        } else {
            let prev: Vec<Vec<f32>> = (0..nd)
                .map(|d| sv(4, (l - 1) * nd + d))
                .collect::<Result<_, _>>()?;
            concat_dirs(&prev, t, b, h)
        };
        let mut dinp = vec![0f32; t * b * in_size];
        for d in 0..nd {
            let k = l * nd + d;
            let p = params_of(cfg, params, l, d)?;
            let (rs, zs, ns, hns, hs) = (sv(0, k)?, sv(1, k)?, sv(2, k)?, sv(3, k)?, sv(4, k)?);
            let h_init = &h0[k * b * h..(k + 1) * b * h];
            let mut dh = dhy[k * b * h..(k + 1) * b * h].to_vec();
            let mut dgi = vec![0f32; t * b * gh];
            let mut dgh = vec![0f32; t * b * gh];
            let mut hprev = vec![0f32; t * b * h];
            let mut direct = vec![0f32; b * h];
            for step in (0..t).rev() {
                let ti = step_time(d, step, t);
                let hp: &[f32] = if step == 0 {
                    h_init
                } else {
                    let pt = step_time(d, step - 1, t);
                    &hs[pt * b * h..(pt + 1) * b * h]
                };
                hprev[ti * b * h..(ti + 1) * b * h].copy_from_slice(hp);
                for bi in 0..b {
                    for j in 0..h {
                        let s = bi * h + j;
                        let at = ti * b * h + s;
                        let dht = dh[s] + dout[(ti * b + bi) * nd * h + d * h + j];
                        let (r, z, n, hn) = (rs[at], zs[at], ns[at], hns[at]);
                        let dan = dht * (1.0 - z) * (1.0 - n * n);
                        let dar = dan * hn * r * (1.0 - r);
                        let daz = dht * (hp[s] - n) * z * (1.0 - z);
                        let o = (ti * b + bi) * gh;
                        dgi[o + j] = dar;
                        dgi[o + h + j] = daz;
                        dgi[o + 2 * h + j] = dan;
                        dgh[o + j] = dar;
                        dgh[o + h + j] = daz;
                        dgh[o + 2 * h + j] = dan * r;
                        direct[s] = dht * z;
                    }
                }
                mm(
                    &dgh[ti * b * gh..(ti + 1) * b * gh],
                    false,
                    &p.w_hh,
                    false,
                    b,
                    gh,
                    h,
                    &mut dh,
                    false,
                )?;
                dh.iter_mut().zip(&direct).for_each(|(a, v)| *a += v);
            }
            dh0_buf[k * b * h..(k + 1) * b * h].copy_from_slice(&dh);
            let base = k * cfg.per();
            let mut dw = vec![0f32; gh * in_size];
            mm(&dgi, true, &inp, false, gh, t * b, in_size, &mut dw, false)?;
            put(dw, &dparams[base])?;
            let mut dw = vec![0f32; gh * h];
            mm(&dgh, true, &hprev, false, gh, t * b, h, &mut dw, false)?;
            put(dw, &dparams[base + 1])?;
            if cfg.bias {
                put(colsum(&dgi, gh), &dparams[base + 2])?;
                put(colsum(&dgh, gh), &dparams[base + 3])?;
            }
            mm(
                &dgi,
                false,
                &p.w_ih,
                false,
                t * b,
                gh,
                in_size,
                &mut dinp,
                true,
            )?;
        }
        dout = dinp;
    }
    put(dout, &time_major(dx, cfg.batch_first))?;
    put(dh0_buf, dh0)
}

/// `_thnn_fused_lstm_cell`: `gates = input_gates + hidden_gates (+ b_ih + b_hh)` `[B, 4H]`
/// in the order i, f, g, o; `cy = f*cx + i*g`, `hy = o*tanh(cy)`; `storage` receives the
/// activated gates `[i, f, g, o]` (what the backward reads).
#[allow(clippy::too_many_arguments)]
pub fn lstm_cell(
    igates: &View,
    hgates: &View,
    cx: &View,
    b_ih: Option<&View>,
    b_hh: Option<&View>,
    hy: &View,
    cy: &View,
    storage: &View,
) -> Result<(), String> {
    let (b, h) = (cx.shape[0], cx.shape[1]);
    let gh = 4 * h;
    let mut g = f32s(igates)?;
    let hg = f32s(hgates)?;
    g.iter_mut().zip(&hg).for_each(|(a, v)| *a += v);
    for bias in [b_ih, b_hh].into_iter().flatten() {
        let bv = f32s(bias)?;
        for row in g.chunks_mut(gh) {
            row.iter_mut().zip(&bv).for_each(|(a, v)| *a += v);
        }
    }
    let c0 = f32s(cx)?;
    let mut hb = vec![0f32; b * h];
    let mut cb = vec![0f32; b * h];
    for bi in 0..b {
        let row = &mut g[bi * gh..(bi + 1) * gh];
        for j in 0..h {
            let (i, f, cg, o) = (
                sig(row[j]),
                sig(row[h + j]),
                row[2 * h + j].tanh(),
                sig(row[3 * h + j]),
            );
            let c = f * c0[bi * h + j] + i * cg;
            cb[bi * h + j] = c;
            hb[bi * h + j] = o * c.tanh();
            row[j] = i;
            row[h + j] = f;
            row[2 * h + j] = cg;
            row[3 * h + j] = o;
        }
    }
    put(hb, hy)?;
    put(cb, cy)?;
    put(g, storage)
}

/// The gradient of [`lstm_cell`] with respect to the pre-activation gates (the same for the
/// input and hidden gates), `cx`, and the bias (the gates' gradient summed over the batch;
/// zeros without bias). `dhy` / `dcy` None are zeros.
#[allow(clippy::too_many_arguments)]
pub fn lstm_cell_backward(
    dhy: Option<&View>,
    dcy: Option<&View>,
    cx: &View,
    cy: &View,
    storage: &View,
    has_bias: bool,
    dgates: &View,
    dcx: &View,
    dbias: Option<&View>,
) -> Result<(), String> {
    let (b, h) = (cx.shape[0], cx.shape[1]);
    let gh = 4 * h;
    let dh = state(dhy, b * h)?;
    let dc = state(dcy, b * h)?;
    let (c0, c1, st) = (f32s(cx)?, f32s(cy)?, f32s(storage)?);
    let mut dg = vec![0f32; b * gh];
    let mut dcp = vec![0f32; b * h];
    for bi in 0..b {
        let gr = &st[bi * gh..(bi + 1) * gh];
        let o = &mut dg[bi * gh..(bi + 1) * gh];
        for j in 0..h {
            let s = bi * h + j;
            let (i, f, g, og) = (gr[j], gr[h + j], gr[2 * h + j], gr[3 * h + j]);
            let tc = c1[s].tanh();
            let dct = dc[s] + dh[s] * og * (1.0 - tc * tc);
            o[j] = dct * g * i * (1.0 - i);
            o[h + j] = dct * c0[s] * f * (1.0 - f);
            o[2 * h + j] = dct * i * (1.0 - g * g);
            o[3 * h + j] = dh[s] * tc * og * (1.0 - og);
            dcp[s] = dct * f;
        }
    }
    if let Some(db) = dbias {
        let v = if has_bias {
            colsum(&dg, gh)
        } else {
            vec![0f32; db.numel()]
        };
        put(v, db)?;
    }
    put(dg, dgates)?;
    put(dcp, dcx)
}
