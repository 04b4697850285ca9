//! Batch normalization over `[N, C, *]` (channel axis 1) and its backward form, as
//! PyTorch's `native_batch_norm` defines them: training mode normalises with the batch's
//! mean and biased variance, returns the mean and `1/sqrt(var + eps)`, and moves the
//! running statistics by `momentum` (the running variance with the unbiased variance);
//! evaluation mode normalises with the running statistics. Statistics are computed in
//! float64 per channel, channels split across threads; results are rounded once.

use super::dtype::DType;
use super::iter::{self, parallel_ranges, threads_for};
use super::view::View;

/// `[N, C, S]` dense float64 copy (S = product of the trailing dimensions).
fn load(v: &View) -> Result<Vec<f64>, String> {
    let mut buf = vec![0f64; v.numel()];
    if !buf.is_empty() {
        iter::copy(v, &View::of_slice(&mut buf, DType::F64, &v.shape))?;
    }
    Ok(buf)
}

fn store(mut buf: Vec<f64>, out: &View) -> Result<(), String> {
    if buf.is_empty() {
        return Ok(());
    }
    let src = View::of_slice(&mut buf, DType::F64, &out.shape);
    iter::copy(&src, out)
}

fn dims(x: &View) -> (usize, usize, usize) {
    let (n, c) = (x.shape[0], x.shape[1]);
    (n, c, x.shape[2..].iter().product())
}

/// Run `f(channel)` for every channel, split across threads.
fn per_channel(c: usize, work: usize, f: &(dyn Fn(usize) + Sync)) {
    parallel_ranges(c, threads_for(work).min(c.max(1)), &|r| r.for_each(f));
}

/// A shared output buffer written at disjoint indices by the channel workers.
struct Out(*mut f64);
// SAFETY: workers write disjoint elements (one channel each).
unsafe impl Sync for Out {}
impl Out {
    /// # Safety
    /// `i` is in bounds and written by one worker only.
    unsafe fn set(&self, i: usize, v: f64) {
        // SAFETY: forwarded.
        unsafe { *self.0.add(i) = v };
    }
}

/// The optional per-channel vector, or `fill`.
fn vec_or(v: Option<&View>, c: usize, fill: f64) -> Result<Vec<f64>, String> {
    match v {
        Some(v) => load(v),
        None => Ok(vec![fill; c]),
    }
}

/// `aclnnBatchNorm`. `save_mean`/`save_invstd` get the batch statistics in training mode
/// and the running ones (as mean and `1/sqrt(var + eps)`) in evaluation mode.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    x: &View,
    weight: Option<&View>,
    bias: Option<&View>,
    running_mean: Option<&View>,
    running_var: Option<&View>,
    training: bool,
    momentum: f64,
    eps: f64,
    out: &View,
    save_mean: Option<&View>,
    save_invstd: Option<&View>,
) -> Result<(), String> {
    let (n, c, s) = dims(x);
    let m = n * s;
    let xb = load(x)?;
    let w = vec_or(weight, c, 1.0)?;
    let b = vec_or(bias, c, 0.0)?;
    let mut rm = vec_or(running_mean, c, 0.0)?;
    let mut rv = vec_or(running_var, c, 1.0)?;
    let mut mean = vec![0f64; c];
    let mut invstd = vec![0f64; c];
    let mut var_unbiased = vec![0f64; c];
    if training {
        let (mo, io, uo) = (
            Out(mean.as_mut_ptr()),
            Out(invstd.as_mut_ptr()),
            Out(var_unbiased.as_mut_ptr()),
        );
        per_channel(c, xb.len(), &|ch| {
            let mut sum = 0.0;
            for bi in 0..n {
                sum += xb[(bi * c + ch) * s..][..s].iter().sum::<f64>();
            }
            let mu = sum / m.max(1) as f64;
            let mut sq = 0.0;
            for bi in 0..n {
                sq += xb[(bi * c + ch) * s..][..s]
                    .iter()
                    .map(|v| (v - mu) * (v - mu))
                    .sum::<f64>();
            }
            let var = sq / m.max(1) as f64;
            // SAFETY: one writer per channel.
            unsafe {
                mo.set(ch, mu);
                io.set(ch, 1.0 / (var + eps).sqrt());
                uo.set(ch, if m > 1 { sq / (m - 1) as f64 } else { f64::NAN });
            }
        });
        for ch in 0..c {
            rm[ch] = (1.0 - momentum) * rm[ch] + momentum * mean[ch];
            rv[ch] = (1.0 - momentum) * rv[ch] + momentum * var_unbiased[ch];
        }
    } else {
        for ch in 0..c {
            mean[ch] = rm[ch];
            invstd[ch] = 1.0 / (rv[ch] + eps).sqrt();
        }
    }
    let mut y = vec![0f64; xb.len()];
    let yo = Out(y.as_mut_ptr());
    per_channel(c, xb.len(), &|ch| {
        let (mu, is, wv, bv) = (mean[ch], invstd[ch], w[ch], b[ch]);
        for bi in 0..n {
            let base = (bi * c + ch) * s;
            for k in 0..s {
                // SAFETY: one writer per channel.
                unsafe { yo.set(base + k, (xb[base + k] - mu) * is * wv + bv) };
            }
        }
    });
    store(y, out)?;
    if training {
        if let Some(v) = running_mean {
            store(rm, v)?;
        }
        if let Some(v) = running_var {
            store(rv, v)?;
        }
    }
    if let Some(v) = save_mean {
        store(mean, v)?;
    }
    if let Some(v) = save_invstd {
        store(invstd, v)?;
    }
    Ok(())
}

/// `aclnnBatchNormBackward`: in training mode from the saved batch statistics, in
/// evaluation mode from the running ones.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_backward(
    gy: &View,
    x: &View,
    weight: Option<&View>,
    running_mean: Option<&View>,
    running_var: Option<&View>,
    save_mean: Option<&View>,
    save_invstd: Option<&View>,
    training: bool,
    eps: f64,
    grad_input: Option<&View>,
    grad_weight: Option<&View>,
    grad_bias: Option<&View>,
) -> Result<(), String> {
    let (n, c, s) = dims(x);
    let m = (n * s).max(1) as f64;
    let xb = load(x)?;
    let g = load(gy)?;
    let w = vec_or(weight, c, 1.0)?;
    let (mean, invstd) = if training {
        (vec_or(save_mean, c, 0.0)?, vec_or(save_invstd, c, 1.0)?)
    } else {
        let rm = vec_or(running_mean, c, 0.0)?;
        let rv = vec_or(running_var, c, 1.0)?;
        (rm, rv.iter().map(|v| 1.0 / (v + eps).sqrt()).collect())
    };
    let mut gx = vec![0f64; xb.len()];
    let mut gw = vec![0f64; c];
    let mut gb = vec![0f64; c];
    let (xo, wo, bo) = (
        Out(gx.as_mut_ptr()),
        Out(gw.as_mut_ptr()),
        Out(gb.as_mut_ptr()),
    );
    per_channel(c, xb.len(), &|ch| {
        let (mu, is) = (mean[ch], invstd[ch]);
        let (mut sg, mut sgx) = (0.0, 0.0);
        for bi in 0..n {
            let base = (bi * c + ch) * s;
            for k in 0..s {
                sg += g[base + k];
                sgx += g[base + k] * (xb[base + k] - mu) * is;
            }
        }
        for bi in 0..n {
            let base = (bi * c + ch) * s;
            for k in 0..s {
                let v = if training {
                    let xh = (xb[base + k] - mu) * is;
                    w[ch] * is * (g[base + k] - sg / m - xh * sgx / m)
                } else {
                    g[base + k] * w[ch] * is
                };
                // SAFETY: one writer per channel.
                unsafe { xo.set(base + k, v) };
            }
        }
        // SAFETY: one writer per channel.
        unsafe {
            wo.set(ch, sgx);
            bo.set(ch, sg);
        }
    });
    if let Some(v) = grad_input {
        store(gx, v)?;
    }
    if let Some(v) = grad_weight {
        store(gw, v)?;
    }
    if let Some(v) = grad_bias {
        store(gb, v)?;
    }
    Ok(())
}
