//! Matrix products through `matrixmultiply` (blocked, SIMD micro-kernels, threads for large
//! products): `out = alpha * a @ b (+ beta * bias)`, batched with broadcast batch dimensions.
//!
//! float32 and float64 operands with any strides go straight to `sgemm`/`dgemm`. float16
//! and bfloat16 operands are widened to float32 first (exactly), multiplied in float32 and
//! rounded once into the output, which is what `cubeMathType` KEEP_DTYPE gives on the device
//! (fp16 inputs, fp32 accumulation). Tests compare with a float64 host product to a relative
//! tolerance of 1e-4 × sqrt(K) for float32 (different summation orders), 1e-2 for fp16/bf16.

use super::dtype::{Class, DType};
use super::iter::{self, map2};
use super::view::{Scratch, View};

/// A matrix operand of one gemm call: pointer and element strides.
#[derive(Clone, Copy)]
struct Mat {
    ptr: *mut u8,
    rs: isize,
    cs: isize,
}

fn batch_offsets(v: &View, batch: &[usize]) -> Result<Vec<isize>, String> {
    // the view's batch dims broadcast to `batch`
    let nb = v.ndim() - 2;
    let bv = View {
        ptr: v.ptr,
        dtype: v.dtype,
        shape: v.shape[..nb].to_vec(),
        strides: v.strides[..nb].to_vec(),
    };
    let st = bv.broadcast_strides(batch).ok_or_else(|| {
        format!(
            "batch dimensions {:?} do not broadcast to {:?}",
            bv.shape, batch
        )
    })?;
    let total: usize = batch.iter().product();
    let es = v.esize() as isize;
    let mut offs = Vec::with_capacity(total);
    let mut idx = vec![0usize; batch.len()];
    for _ in 0..total {
        offs.push(
            idx.iter()
                .zip(&st)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>()
                * es,
        );
        for d in (0..batch.len()).rev() {
            idx[d] += 1;
            if idx[d] < batch[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(offs)
}

fn mat(v: &View) -> Mat {
    let n = v.ndim();
    Mat {
        ptr: v.ptr,
        rs: v.strides[n - 2],
        cs: v.strides[n - 1],
    }
}

/// `out = alpha * (a @ b) + beta * bias` (bias broadcast to `out`; `beta` ignored without
/// one). `a` is `[..., M, K]`, `b` `[..., K, N]`, `out` `[..., M, N]`; batch dimensions of
/// `a` and `b` broadcast to those of `out`.
pub fn matmul(
    a: &View,
    b: &View,
    out: &View,
    alpha: f64,
    bias: Option<(&View, f64)>,
) -> Result<(), String> {
    if a.ndim() < 2 || b.ndim() < 2 || out.ndim() < 2 {
        return Err("matmul operands need at least 2 dimensions".into());
    }
    let (m, k) = (a.shape[a.ndim() - 2], a.shape[a.ndim() - 1]);
    let (k2, n) = (b.shape[b.ndim() - 2], b.shape[b.ndim() - 1]);
    let (om, on) = (out.shape[out.ndim() - 2], out.shape[out.ndim() - 1]);
    if k != k2 || om != m || on != n {
        return Err(format!(
            "shapes {:?} @ {:?} -> {:?} do not match",
            a.shape, b.shape, out.shape
        ));
    }
    let f64_path = a.dtype == DType::F64 || b.dtype == DType::F64 || out.dtype == DType::F64;
    let work = if f64_path { DType::F64 } else { DType::F32 };
    // Operands in the work dtype (widened copies when needed).
    let widen = |v: &View| -> Result<Option<Scratch>, String> {
        if v.dtype == work {
            return Ok(None);
        }
        let s = Scratch::new(work, &v.shape);
        iter::copy(v, &s.view)?;
        Ok(Some(s))
    };
    let wa = widen(a)?;
    let wb = widen(b)?;
    let av = wa.as_ref().map(|s| &s.view).unwrap_or(a);
    let bv = wb.as_ref().map(|s| &s.view).unwrap_or(b);
    // The result goes straight to `out` when it has the work dtype and overlaps no operand.
    let direct = out.dtype == work && !out.overlaps(av) && !out.overlaps(bv);
    let scratch = if direct {
        None
    } else {
        Some(Scratch::new(work, &out.shape))
    };
    let ov = scratch.as_ref().map(|s| &s.view).unwrap_or(out);
    let beta_gemm = match bias {
        Some((c, beta)) => {
            // ov = beta * bias (broadcast), then accumulate the product into it.
            if beta == 0.0 {
                iter::fill::<f64>(ov, 0.0)?;
            } else if work == DType::F64 {
                iter::map1::<f64, f64>(c, ov, move |x| beta * x)?;
            } else {
                let bf = beta as f32;
                iter::map1::<f32, f32>(c, ov, move |x| bf * x)?;
            }
            1.0
        }
        None => 0.0,
    };
    let batch = out.shape[..out.ndim() - 2].to_vec();
    let oa = batch_offsets(av, &batch)?;
    let ob = batch_offsets(bv, &batch)?;
    let oo = batch_offsets(ov, &batch)?;
    let (ma, mb, mo) = (mat(av), mat(bv), mat(ov));
    for i in 0..oa.len() {
        let (pa, pb, po) = (
            ma.ptr.wrapping_offset(oa[i]),
            mb.ptr.wrapping_offset(ob[i]),
            mo.ptr.wrapping_offset(oo[i]),
        );
        if m == 0 || n == 0 {
            continue;
        }
        // SAFETY: the three matrices lie inside views the executor checked (or scratch
        // buffers of exactly their shape); strides are the views' own.
        unsafe {
            if work == DType::F64 {
                matrixmultiply::dgemm(
                    m,
                    k,
                    n,
                    alpha,
                    pa as *const f64,
                    ma.rs,
                    ma.cs,
                    pb as *const f64,
                    mb.rs,
                    mb.cs,
                    beta_gemm,
                    po as *mut f64,
                    mo.rs,
                    mo.cs,
                );
            } else {
                matrixmultiply::sgemm(
                    m,
                    k,
                    n,
                    alpha as f32,
                    pa as *const f32,
                    ma.rs,
                    ma.cs,
                    pb as *const f32,
                    mb.rs,
                    mb.cs,
                    beta_gemm as f32,
                    po as *mut f32,
                    mo.rs,
                    mo.cs,
                );
            }
        }
    }
    // `matrixmultiply` computes large products on its own threads, whose floating-point flags
    // the stream task never sees: a non-finite product of finite operands is the overflow the
    // device would report, so it is passed on to this thread's flags.
    if !crate::fpstatus::raised()
        && !all_finite(ov)
        && all_finite(av)
        && all_finite(bv)
        && bias.is_none_or(|(c, _)| all_finite(c))
    {
        crate::fpstatus::raise();
    }
    if let Some(s) = scratch {
        iter::copy(&s.view, out)?;
    }
    Ok(())
}

/// Whether every element of a floating-point view is finite (integer views always are).
fn all_finite(v: &View) -> bool {
    if !matches!(v.dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16) {
        return true;
    }
    let bad = std::sync::atomic::AtomicBool::new(false);
    let es = v.esize() as isize;
    let strides = vec![v.strides.iter().map(|&s| s * es).collect::<Vec<_>>()];
    let dt = v.dtype;
    iter::for_chunks(&v.shape, &[v.ptr], &strides, &|| (), &|_, p, inner, n| {
        if bad.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        for i in 0..n as isize {
            // SAFETY: the chunk lies inside the view, which the executor checked (or a
            // scratch buffer of exactly its shape).
            let x = unsafe { super::elem::read_f64(dt, p[0].offset(i * inner[0])) };
            if !x.is_finite() {
                bad.store(true, std::sync::atomic::Ordering::Relaxed);
                return;
            }
        }
    });
    !bad.into_inner()
}

/// `out = sum(a * b)` of two 1-D views (accumulated in f64, rounded once).
pub fn dot(a: &View, b: &View, out: &View) -> Result<(), String> {
    let n = a.numel();
    if b.numel() != n {
        return Err(format!("dot of {n} and {} elements", b.numel()));
    }
    let prod = Scratch::new(DType::F64, &[n]);
    map2::<f64, f64>(a, b, &prod.view, |x, y| x * y)?;
    // SAFETY: the scratch holds n f64 values.
    let s: f64 = unsafe { std::slice::from_raw_parts(prod.view.ptr as *const f64, n) }
        .iter()
        .sum();
    let _ = Class::F64;
    // SAFETY: out is a checked 0-d/1-element view.
    unsafe { super::elem::write(out.dtype, out.ptr, s) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_products() {
        let mut a: Vec<f32> = (0..6).map(|i| i as f32).collect(); // 2x3
        let mut b: Vec<f32> = (0..12).map(|i| (i as f32) * 0.5).collect(); // 3x4
        let mut o = vec![0f32; 8];
        let va = View::of_slice(&mut a, DType::F32, &[2, 3]);
        let vb = View::of_slice(&mut b, DType::F32, &[3, 4]);
        let vo = View::of_slice(&mut o, DType::F32, &[2, 4]);
        matmul(&va, &vb, &vo, 1.0, None).unwrap();
        for i in 0..2 {
            for j in 0..4 {
                let want: f32 = (0..3).map(|k| a[i * 3 + k] * b[k * 4 + j]).sum();
                assert_eq!(o[i * 4 + j], want);
            }
        }
        // transposed a via strides, bias row broadcast, alpha/beta, f16 output
        let vat = View::of_slice(&mut a, DType::F32, &[3, 2]).permute(&[1, 0]);
        let mut bias = vec![1f32, 2., 3., 4.];
        let vbias = View::of_slice(&mut bias, DType::F32, &[4]);
        let mut oh = vec![0u16; 8];
        let voh = View::of_slice(&mut oh, DType::F16, &[2, 4]);
        matmul(&vat, &vb, &voh, 2.0, Some((&vbias, 0.5))).unwrap();
        for i in 0..2 {
            for j in 0..4 {
                let want: f32 =
                    2.0 * (0..3).map(|k| a[k * 2 + i] * b[k * 4 + j]).sum::<f32>() + 0.5 * bias[j];
                let got = half::f16::from_bits(oh[i * 4 + j]).to_f32();
                assert!((got - want).abs() <= want.abs() * 1e-3, "{got} vs {want}");
            }
        }
    }
}
