//! Random sampling beyond the fills of [`super::random`]: normal draws with tensor means
//! and deviations, random permutations, and multinomial sampling. Every draw comes from the
//! same Philox stream ([`super::random::uniform01`] and [`super::random::normal`]), so the
//! same (seed, offset) and shape give the same values on every run.

use super::dtype::DType;
use super::elem;
use super::iter::map3;
use super::random;
use super::view::{Scratch, View};

/// `out = mean + std * z` with `z` standard normal; `mean` and `std` broadcast to `out`. A
/// negative or NaN deviation is an error.
pub fn normal(mean: &View, std: &View, out: &View, seed: u64, offset: u64) -> Result<(), String> {
    let z = Scratch::new(DType::F64, &out.shape);
    random::normal(&z.view, 0.0, 1.0, seed, offset);
    let bad = std::sync::atomic::AtomicBool::new(false);
    map3::<f64, f64>(&z.view, mean, std, out, |z, m, s| {
        if s.is_nan() || s < 0.0 {
            bad.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        m + s * z
    })?;
    if bad.load(std::sync::atomic::Ordering::Relaxed) {
        return Err("std holds a negative or NaN element; normal needs std >= 0".into());
    }
    Ok(())
}

/// `out` (1-D) = a random permutation of `0..n` (Fisher-Yates over the Philox stream).
pub fn randperm(out: &View, seed: u64, offset: u64) -> Result<(), String> {
    let n = out.numel();
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let u = random::uniform01(seed, offset, n - 1 - i, true);
        let j = ((u * (i + 1) as f64) as usize).min(i);
        p.swap(i, j);
    }
    for (i, v) in p.iter().enumerate() {
        // SAFETY: element i of the checked 1-D output view.
        unsafe { elem::write::<i64>(out.dtype, out.at(&[i]), *v as i64) };
    }
    Ok(())
}

/// `numsamples` category indices per row of `probs` (`[C]` or `[N, C]`, non-negative weights
/// with a positive sum), with or without replacement, into `out` (`[numsamples]` or
/// `[N, numsamples]`). Bad weights are an error naming the row.
pub fn multinomial(
    probs: &View,
    numsamples: usize,
    replacement: bool,
    out: &View,
    seed: u64,
    offset: u64,
) -> Result<(), String> {
    let two_d = probs.ndim() == 2;
    let (rows, c) = if two_d {
        (probs.shape[0], probs.shape[1])
    } else {
        (1, probs.shape[0])
    };
    let mut draw = 0usize;
    for r in 0..rows {
        let mut w: Vec<f64> = (0..c)
            .map(|k| {
                let idx: Vec<usize> = if two_d { vec![r, k] } else { vec![k] };
                // SAFETY: (r, k) is inside the checked input view.
                unsafe { elem::read_f64(probs.dtype, probs.at(&idx)) }
            })
            .collect();
        if let Some(v) = w.iter().find(|v| !v.is_finite() || **v < 0.0) {
            return Err(format!(
                "row {r} of self holds {v}; multinomial needs finite, non-negative weights"
            ));
        }
        let positive = w.iter().filter(|v| **v > 0.0).count();
        if positive == 0 {
            return Err(format!(
                "row {r} of self sums to 0; multinomial needs a positive sum"
            ));
        }
        if !replacement && numsamples > positive {
            return Err(format!(
                "row {r} of self has {positive} categories of non-zero weight, fewer than \
                 numsamples {numsamples} drawn without replacement"
            ));
        }
        for s in 0..numsamples {
            let total: f64 = w.iter().sum();
            let u = random::uniform01(seed, offset, draw, true) * total;
            draw += 1;
            let mut acc = 0.0;
            let mut pick = None;
            for (k, &v) in w.iter().enumerate() {
                if v <= 0.0 {
                    continue;
                }
                acc += v;
                pick = Some(k);
                if u < acc {
                    break;
                }
            }
            let k = pick.unwrap_or(0);
            if !replacement {
                w[k] = 0.0;
            }
            let idx: Vec<usize> = if two_d { vec![r, s] } else { vec![s] };
            // SAFETY: (r, s) is inside the checked output view.
            unsafe { elem::write::<i64>(out.dtype, out.at(&idx), k as i64) };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn randperm_is_a_permutation_and_reproducible() {
        let mut a = vec![0i64; 50];
        let mut b = vec![0i64; 50];
        randperm(&View::of_slice(&mut a, DType::I64, &[50]), 7, 0).unwrap();
        randperm(&View::of_slice(&mut b, DType::I64, &[50]), 7, 0).unwrap();
        assert_eq!(a, b);
        let mut s = a.clone();
        s.sort();
        assert_eq!(s, (0..50).collect::<Vec<i64>>());
        assert_ne!(a, (0..50).collect::<Vec<i64>>());
    }

    #[test]
    fn multinomial_without_replacement_never_repeats() {
        let mut p = vec![0.1f32, 0.0, 5.0, 1.0, 2.0];
        let mut o = vec![0i64; 4];
        let vp = View::of_slice(&mut p, DType::F32, &[5]);
        let vo = View::of_slice(&mut o, DType::I64, &[4]);
        multinomial(&vp, 4, false, &vo, 3, 0).unwrap();
        let mut s = o.clone();
        s.sort();
        assert_eq!(s, vec![0, 2, 3, 4]);
        let mut o5 = vec![0i64; 5];
        let vo5 = View::of_slice(&mut o5, DType::I64, &[5]);
        assert!(multinomial(&vp, 5, false, &vo5, 3, 0).is_err());
    }
}
