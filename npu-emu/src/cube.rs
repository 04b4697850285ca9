//! The cube unit's arithmetic: `C += A × B` on float matrices, for `Mmad` and the `Matmul` API of
//! the Ascend C kernel headers (they convert their fractal operands to row-major float, call
//! this through `npuemu_gemm_f32` of libascendcl, and convert the result back).
//!
//! Every element of C is computed as `c = fma(a[i][k], b[k][j], c)` for k = 0, 1, …, K-1 in that
//! order: a product of two half, bfloat16 or int8 values is exact in float, so each step rounds
//! once (the sum), and the result does not depend on the CPU (the AVX2/FMA path and the portable
//! path perform the same fused operations in the same order). How close to the cube unit: the
//! products are exact on both; the NPU adds them in its own (undocumented) order with its own
//! internal width, so sums may differ in the last bits of float.

/// `C[i][j] += Σ_k A[i][k] · B[k][j]` (row-major, leading dimensions in elements), k in order.
///
/// # Panics
/// If a slice is shorter than its dimensions and leading dimension require.
#[allow(clippy::too_many_arguments)]
pub fn gemm_f32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    assert!(lda >= k && ldb >= n && ldc >= n, "leading dimensions");
    assert!(a.len() >= (m - 1) * lda + k, "A is too short");
    assert!(b.len() >= (k - 1) * ldb + n, "B is too short");
    assert!(c.len() >= (m - 1) * ldc + n, "C is too short");
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked above); the bounds were checked.
            unsafe { gemm_avx2(m, n, k, a, lda, b, ldb, c, ldc) };
            return;
        }
    }
    gemm_portable(m, n, k, a, lda, b, ldb, c, ldc);
}

/// IEEE binary16 values (as bits) to float, exactly; with the CPU's F16C instructions when it
/// has them (the `half` crate detects them at run time). For the kernel headers' staging copies
/// of fp16 matrices (`npuemu_f16_to_f32`).
///
/// # Panics
/// If the slices differ in length.
pub fn f16_to_f32(src: &[u16], dst: &mut [f32]) {
    use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
    src.reinterpret_cast::<half::f16>()
        .convert_to_f32_slice(dst);
}

#[allow(clippy::too_many_arguments)]
fn gemm_portable(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    for i in 0..m {
        let crow = &mut c[i * ldc..i * ldc + n];
        for kk in 0..k {
            let av = a[i * lda + kk];
            let brow = &b[kk * ldb..kk * ldb + n];
            for (cv, bv) in crow.iter_mut().zip(brow) {
                *cv = av.mul_add(*bv, *cv);
            }
        }
    }
}

/// Depth of a block of k: one block's panel of B (KB × 16 floats) stays in the L1 cache. C is
/// stored between blocks, so every element still sees its k in order.
#[cfg(target_arch = "x86_64")]
const KB: usize = 256;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_avx2(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    let (ap, bp, cp) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let n16 = n / 16 * 16;
    let mut k0 = 0;
    while k0 < k {
        let k1 = (k0 + KB).min(k);
        let mut i = 0;
        while i + 6 <= m {
            let mut j = 0;
            while j < n16 {
                // SAFETY: rows i..i+6 < m, columns j..j+16 <= n, k0..k1 <= k: within the checked
                // bounds of a, b and c.
                unsafe { block_avx2::<6>(ap, lda, bp, ldb, cp, ldc, i, j, k0, k1) };
                j += 16;
            }
            i += 6;
        }
        while i < m {
            let mut j = 0;
            while j < n16 {
                // SAFETY: as above, one row.
                unsafe { block_avx2::<1>(ap, lda, bp, ldb, cp, ldc, i, j, k0, k1) };
                j += 16;
            }
            i += 1;
        }
        k0 = k1;
    }
    // The columns past the last whole 16: one element at a time, k in order.
    for r in 0..m {
        for jj in n16..n {
            let mut cv = c[r * ldc + jj];
            for kk in 0..k {
                cv = a[r * lda + kk].mul_add(b[kk * ldb + jj], cv);
            }
            c[r * ldc + jj] = cv;
        }
    }
}

/// R rows × 16 columns of C at (i, j): C += A[i.., k0..k1] × B[k0..k1, j..], k in order, with
/// the 2·R accumulators in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn block_avx2<const R: usize>(
    ap: *const f32,
    lda: usize,
    bp: *const f32,
    ldb: usize,
    cp: *mut f32,
    ldc: usize,
    i: usize,
    j: usize,
    k0: usize,
    k1: usize,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller guarantees rows i..i+R, columns j..j+16 and k0..k1 lie within A, B and
    // C; AVX2 and FMA are available (target_feature of the caller, checked at run time).
    unsafe {
        let mut acc = [[_mm256_setzero_ps(); 2]; R];
        for (r, row) in acc.iter_mut().enumerate() {
            row[0] = _mm256_loadu_ps(cp.add((i + r) * ldc + j));
            row[1] = _mm256_loadu_ps(cp.add((i + r) * ldc + j + 8));
        }
        for kk in k0..k1 {
            let b0 = _mm256_loadu_ps(bp.add(kk * ldb + j));
            let b1 = _mm256_loadu_ps(bp.add(kk * ldb + j + 8));
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(&*ap.add((i + r) * lda + kk));
                row[0] = _mm256_fmadd_ps(av, b0, row[0]);
                row[1] = _mm256_fmadd_ps(av, b1, row[1]);
            }
        }
        for (r, row) in acc.iter().enumerate() {
            _mm256_storeu_ps(cp.add((i + r) * ldc + j), row[0]);
            _mm256_storeu_ps(cp.add((i + r) * ldc + j + 8), row[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        for i in 0..m {
            for j in 0..n {
                let mut cv = c[i * n + j];
                for kk in 0..k {
                    cv = a[i * k + kk].mul_add(b[kk * n + j], cv);
                }
                c[i * n + j] = cv;
            }
        }
    }

    #[test]
    fn every_path_matches_the_sequential_fma_order_bit_for_bit() {
        for (m, n, k) in [
            (1, 1, 1),
            (4, 16, 3),
            (7, 33, 65),
            (16, 48, 128),
            (5, 17, 1),
            (13, 40, 600),
            (6, 32, 257),
        ] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 3.0)
                .collect();
            let init: Vec<f32> = (0..m * n).map(|i| i as f32 * 0.25).collect();
            let mut want = init.clone();
            reference(m, n, k, &a, &b, &mut want);
            let mut got = init.clone();
            gemm_f32(m, n, k, &a, k, &b, n, &mut got, n);
            assert_eq!(got, want, "{m}x{n}x{k}");
            let mut port = init.clone();
            gemm_portable(m, n, k, &a, k, &b, n, &mut port, n);
            assert_eq!(port, want, "{m}x{n}x{k} portable");
        }
    }

    #[test]
    fn f16_conversion_is_exact() {
        let bits: Vec<u16> = (0..=u16::MAX).step_by(7).collect();
        let mut out = vec![0.0f32; bits.len()];
        f16_to_f32(&bits, &mut out);
        for (b, f) in bits.iter().zip(&out) {
            let want = half::f16::from_bits(*b).to_f32();
            assert!(
                want.to_bits() == f.to_bits() || (want.is_nan() && f.is_nan()),
                "{b:#x}"
            );
        }
    }

    #[test]
    fn leading_dimensions_and_empty_shapes() {
        // A 2x2 block inside 3-wide rows.
        let a = [1.0, 2.0, 99.0, 3.0, 4.0, 99.0];
        let b = [5.0, 6.0, 99.0, 7.0, 8.0, 99.0];
        let mut c = [0.0, 0.0, -1.0, 0.0, 0.0, -1.0];
        gemm_f32(2, 2, 2, &a, 3, &b, 3, &mut c, 3);
        assert_eq!(c, [19.0, 22.0, -1.0, 43.0, 50.0, -1.0]);
        gemm_f32(0, 2, 2, &[], 2, &b, 3, &mut c, 3);
        assert_eq!(c[2], -1.0);
    }
}
