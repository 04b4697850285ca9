//! `CdistGrad`: the gradient of `torch.cdist(x1, x2, p)` with respect to `x1`, which
//! torch_npu computes with this aclop operator for p in [0, 2] and p = inf on Atlas A2
//! (op-plugin's `_cdist_backward`; other p values take `aclnnCdistBackward`).
//!
//! torch_npu broadcasts every input to `[B…, P, R, M]` before the call: `grad` and `cdist`
//! (`[B…, P, R]`) along M, `x1` (`[B…, P, M]`) along R, `x2` (`[B…, R, M]`) along P. The
//! output is `x1`'s shape `[B…, P, M]`: `out[…, i, k] = sum_j grad · t(x1 - x2, cdist)` over
//! the R axis, with the attr `p` (-1 for infinity) and, per element, `t` = 0 for p = 0 or a
//! zero distance; `sign(d)` for p = 1; `d / dist` for p = 2; `sign(d)` where `|d| = dist` (else
//! 0) for p = inf; `sign(d) |d|^(p-1) / dist^(p-1)` for other p < 2 (0 where d = 0 and p < 1);
//! `d |d|^(p-2) / dist^(p-1)` above 2 — torch's own `_cdist_backward` rule. `d` is taken in
//! f32 and, for the comparison of p = inf, `|d|` rounded to `cdist`'s data type, as the
//! forward computed it, so that p = inf finds the pair's largest difference also in FLOAT16.

use crate::ops::dtype::DType;
use crate::ops::extra::{load, store};
use crate::ops::View;

/// `v` at the precision of `dt` (FLOAT16 and BFLOAT16 round to nearest even).
fn round_as(dt: DType, v: f64) -> f64 {
    match dt {
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::BF16 => half::bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

/// The term of one element: `d = x1 - x2`, `dist` the pair's distance (for p = inf, `dist`
/// is compared with `|d|` as given: the caller rounds it to the distance's precision).
fn term(d: f64, dist: f64, p: f64) -> f64 {
    let sign = if d > 0.0 {
        1.0
    } else if d < 0.0 {
        -1.0
    } else {
        0.0
    };
    if p == 0.0 || dist == 0.0 {
        0.0
    } else if p == 1.0 {
        sign
    } else if p == 2.0 {
        d / dist
    } else if p < 0.0 {
        if d.abs() == dist {
            sign
        } else {
            0.0
        }
    } else if p < 2.0 {
        if d == 0.0 && p < 1.0 {
            0.0
        } else {
            sign * d.abs().powf(p - 1.0) / dist.powf(p - 1.0)
        }
    } else {
        d * d.abs().powf(p - 2.0) / dist.powf(p - 1.0)
    }
}

/// CdistGrad: `grad`, `x1`, `x2`, `cdist` `[B…, P, R, M]` -> `out` `[B…, P, M]`.
pub fn cdist_grad(
    grad: &View,
    x1: &View,
    x2: &View,
    cdist: &View,
    p: f64,
    out: &View,
) -> Result<(), String> {
    let s = &x1.shape;
    let nd = s.len();
    if nd < 3 || [grad, x2, cdist].iter().any(|v| &v.shape != s) {
        return Err(format!(
            "grad {:?}, x1 {s:?}, x2 {:?} and cdist {:?} must be one broadcast shape [B…, P, R, M]",
            grad.shape, x2.shape, cdist.shape
        ));
    }
    let (r, m) = (s[nd - 2], s[nd - 1]);
    let mut want = s[..nd - 2].to_vec();
    want.push(m);
    if out.shape != want {
        return Err(format!("the output {:?} must be {want:?}", out.shape));
    }
    let g: Vec<f64> = load(grad, DType::F64)?;
    let a: Vec<f64> = load(x1, DType::F64)?;
    let b: Vec<f64> = load(x2, DType::F64)?;
    let dd: Vec<f64> = load(cdist, DType::F64)?;
    let rows: usize = s[..nd - 2].iter().product();
    let mut o = vec![0f64; rows * m];
    for i in 0..rows {
        for j in 0..r {
            for k in 0..m {
                let e = (i * r + j) * m + k;
                // the difference as the forward took it, in f32: p = inf compares it with
                // the distance for equality
                let d = f64::from(a[e] as f32 - b[e] as f32);
                let d = if p < 0.0 {
                    round_as(cdist.dtype, d.abs()).copysign(d)
                } else {
                    d
                };
                o[i * m + k] += g[e] * term(d, dd[e], p);
            }
        }
    }
    store(o, DType::F64, out)
}

#[cfg(test)]
mod tests {
    use super::term;

    #[test]
    fn terms_follow_torch_for_each_p() {
        assert_eq!(term(-0.5, 2.0, 1.0), -1.0);
        assert_eq!(term(0.5, 2.0, 2.0), 0.25);
        assert_eq!(term(0.5, 2.0, 0.0), 0.0);
        assert_eq!(term(-2.0, 2.0, -1.0), -1.0);
        assert_eq!(term(-1.0, 2.0, -1.0), 0.0);
        assert_eq!(term(1.0, 0.0, 2.0), 0.0);
        assert!((term(0.25, 1.0, 1.5) - 0.5).abs() < 1e-12);
    }
}
