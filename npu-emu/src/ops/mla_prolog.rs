//! Multi-head latent attention preprocessing (`aclnnMlaProlog`, `…V2WeightNz`, `…V3WeightNz`),
//! the non-quantized path of CANN's pages:
//!
//! - `c^Q = RmsNorm(x·W^DQ)`, `[q^C | q^R'] = c^Q·W^UQQR` per head, `q^N = α_q · q^C·W^UK[n]`,
//!   `q^R = ROPE(q^R')`;
//! - `[c^KV' | k^R'] = x·W^DKVKR`, `k^C = α_kv · RmsNorm(c^KV')`, `k^R = ROPE(k^R')`, both
//!   written to their caches at row `cacheIndex[t]` (a negative index skips the token).
//!
//! ROPE is the kernel's: the input is de-interleaved (`[x0, x2, …, x1, x3, …]`) and rotated,
//! `y = x'·cos + rotate_half(x')·sin`. Matmuls accumulate in f64; `c^Q` and `q^C` are rounded
//! to BFLOAT16 before the next matmul, as the kernel feeds them to the cube unit.
//! Weights are ND `[K, N]` or FRACTAL_NZ (`[N/c0, K/16, 16, c0]`, read as such).

use super::dtype::DType;
use super::iter;
use super::view::View;

/// The checked sizes and attributes of a call.
#[derive(Clone, Debug)]
pub struct MlaProlog {
    pub t: usize,
    pub he: usize,
    pub hcq: usize,
    pub n: usize,
    pub d: usize,
    pub dr: usize,
    pub hckv: usize,
    pub eps_cq: f64,
    pub eps_ckv: f64,
    /// FRACTAL_NZ c0 of weightDq, weightUqQr, weightDkvKr (None: ND).
    pub nz: [Option<usize>; 3],
    /// Cache block size and whether the caches are PA_NZ (c0 16 for BFLOAT16).
    pub block: usize,
    pub cache_nz: bool,
    /// V3's scale factors (1 for V1/V2).
    pub q_scale: f64,
    pub kv_scale: f64,
}

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
    let shape = out.shape.clone();
    iter::copy(&View::of_slice(&mut buf, DType::F64, &shape), out)
}

/// Round to BFLOAT16 (ties to even), as a value.
pub fn bf16(x: f64) -> f64 {
    let f = x as f32;
    if f.is_nan() {
        return f as f64;
    }
    let b = f.to_bits();
    let r = b.wrapping_add(0x7fff + ((b >> 16) & 1)) & 0xffff_0000;
    f32::from_bits(r) as f64
}

/// A `[K, N]` weight as row-major ND, from ND or FRACTAL_NZ storage.
fn weight(raw: Vec<f64>, k: usize, n: usize, nz: Option<usize>) -> Vec<f64> {
    let Some(c0) = nz else { return raw };
    let k1 = k / 16;
    let mut w = vec![0f64; k * n];
    for kk in 0..k {
        for nn in 0..n {
            w[kk * n + nn] = raw[((nn / c0) * k1 + kk / 16) * 16 * c0 + (kk % 16) * c0 + nn % c0];
        }
    }
    w
}

/// `a [m, k] · b [k, n]`.
fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        let row = &mut c[i * n..][..n];
        for (kk, &av) in a[i * k..][..k].iter().enumerate() {
            if av == 0.0 {
                continue;
            }
            for (cv, bv) in row.iter_mut().zip(&b[kk * n..][..n]) {
                *cv += av * bv;
            }
        }
    }
    c
}

fn rms_norm(x: &[f64], gamma: &[f64], eps: f64) -> Vec<f64> {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len().max(1) as f64;
    let r = 1.0 / (ms + eps).sqrt();
    x.iter().zip(gamma).map(|(v, g)| v * r * g).collect()
}

/// The kernel's ROPE of one row: de-interleave, then `x·cos + rotate_half(x)·sin`.
pub fn rope(x: &[f64], sin: &[f64], cos: &[f64]) -> Vec<f64> {
    let h = x.len() / 2;
    let de: Vec<f64> = (0..h)
        .map(|i| x[2 * i])
        .chain((0..h).map(|i| x[2 * i + 1]))
        .collect();
    (0..2 * h)
        .map(|i| {
            let rot = if i < h { -de[i + h] } else { de[i - h] };
            de[i] * cos[i] + rot * sin[i]
        })
        .collect()
}

/// Element offset of cache row `row`, channel `c` of a cache of width `w` (Nkv = 1).
fn cache_off(p: &MlaProlog, row: usize, c: usize, w: usize) -> usize {
    if p.cache_nz {
        let c0 = 16;
        let (blk, pos) = (row / p.block, row % p.block);
        blk * p.block * w + ((c / c0) * p.block + pos) * c0 + c % c0
    } else {
        row * w + c
    }
}

/// The whole operator. Views in the order: x, weightDq, weightUqQr, weightUk, weightDkvKr,
/// gammaCq, gammaCkv, sin, cos, cacheIndex, kvCache, krCache, queryOut, queryRopeOut.
pub fn mla_prolog(v: &[View], p: &MlaProlog) -> Result<(), String> {
    let (t, he, hcq, n, d, dr, hckv) = (p.t, p.he, p.hcq, p.n, p.d, p.dr, p.hckv);
    let x = load(&v[0])?;
    let wdq = weight(load(&v[1])?, he, hcq, p.nz[0]);
    let wuq = weight(load(&v[2])?, hcq, n * (d + dr), p.nz[1]);
    let wuk = load(&v[3])?;
    let wkv = weight(load(&v[4])?, he, hckv + dr, p.nz[2]);
    let (gq, gkv, sin, cos, idx) = (
        load(&v[5])?,
        load(&v[6])?,
        load(&v[7])?,
        load(&v[8])?,
        load(&v[9])?,
    );
    let mut kvc = load(&v[10])?;
    let mut krc = load(&v[11])?;
    let rows = kvc.len() / hckv.max(1);
    // Validate the cache indices before anything is written.
    for (i, &r) in idx.iter().enumerate() {
        if r >= 0.0 && r as usize >= rows {
            return Err(format!(
                "cacheIndex[{i}] = {r} lies outside the cache's {rows} rows"
            ));
        }
    }
    let mut qn = vec![0f64; t * n * hckv];
    let mut qr = vec![0f64; t * n * dr];
    let cq_raw = matmul(&x, &wdq, t, he, hcq);
    let mut cq = Vec::with_capacity(t * hcq);
    for r in 0..t {
        cq.extend(
            rms_norm(&cq_raw[r * hcq..][..hcq], &gq, p.eps_cq)
                .into_iter()
                .map(bf16),
        );
    }
    let qcqr: Vec<f64> = matmul(&cq, &wuq, t, hcq, n * (d + dr))
        .into_iter()
        .map(bf16)
        .collect();
    let kvkr = matmul(&x, &wkv, t, he, hckv + dr);
    for r in 0..t {
        let (s, c) = (&sin[r * dr..][..dr], &cos[r * dr..][..dr]);
        for h in 0..n {
            let base = &qcqr[(r * n + h) * (d + dr)..][..d + dr];
            let qc = &base[..d];
            let out = &mut qn[(r * n + h) * hckv..][..hckv];
            for (dd, &qv) in qc.iter().enumerate() {
                for (o, wv) in out.iter_mut().zip(&wuk[(h * d + dd) * hckv..][..hckv]) {
                    *o += qv * wv;
                }
            }
            for o in out.iter_mut() {
                *o *= p.q_scale;
            }
            qr[(r * n + h) * dr..][..dr].copy_from_slice(&rope(&base[d..], s, c));
        }
        let row = &kvkr[r * (hckv + dr)..][..hckv + dr];
        let ckv: Vec<f64> = rms_norm(&row[..hckv], &gkv, p.eps_ckv)
            .into_iter()
            .map(|y| y * p.kv_scale)
            .collect();
        let kr = rope(&row[hckv..], s, c);
        let ci = idx[r];
        if ci < 0.0 {
            continue;
        }
        let ci = ci as usize;
        for (ch, &y) in ckv.iter().enumerate() {
            kvc[cache_off(p, ci, ch, hckv)] = y;
        }
        for (ch, &y) in kr.iter().enumerate() {
            krc[cache_off(p, ci, ch, dr)] = y;
        }
    }
    store(kvc, &v[10])?;
    store(krc, &v[11])?;
    store(qn, &v[12])?;
    store(qr, &v[13])
}
