//! The mHC (manifold-constrained hyper-connections) post mapping of `aclnnMhcPost` and its
//! gradient `aclnnMhcPostBackward`, over rows of `n` residual streams of width `D`
//! (`x` `[..., n, D]`, `hRes` `[..., n, n]`, `hOut` `[..., D]`, `hPost` `[..., n]`, the leading
//! dimensions `[B, S]` or `[T]` flattened into rows).
//!
//! Operands are loaded in f64 (the device computes in f32) and each output is rounded once.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

fn f64s(v: &View) -> Result<Vec<f64>, String> {
    load(v, DType::F64)
}

/// `(rows, n, D)` of an `x` shaped `[..., n, D]`.
fn dims(x: &View) -> Result<(usize, usize, usize), String> {
    let nd = x.shape.len();
    if nd < 2 {
        return Err(format!("mhc: x must have at least 2 dimensions, not {nd}"));
    }
    let rows = x.shape[..nd - 2].iter().product();
    Ok((rows, x.shape[nd - 2], x.shape[nd - 1]))
}

/// `aclnnMhcPost`: per row, `out[j, d] = Σ_i hRes[i, j] · x[i, d] + hOut[d] · hPost[j]`
/// (`hResᵀ · x + hOut ⊗ hPost`); without `hRes`, `out[j, d] = x[j, d] + hOut[d] · hPost[j]`.
pub fn mhc_post(
    x: &View,
    h_res: Option<&View>,
    h_out: &View,
    h_post: &View,
    out: &View,
) -> Result<(), String> {
    let (rows, n, d) = dims(x)?;
    let xs = f64s(x)?;
    let hr = h_res.map(f64s).transpose()?;
    let ho = f64s(h_out)?;
    let hp = f64s(h_post)?;
    let mut y = vec![0f64; rows * n * d];
    for r in 0..rows {
        let xr = &xs[r * n * d..(r + 1) * n * d];
        for j in 0..n {
            let post = hp[r * n + j];
            let yr = &mut y[(r * n + j) * d..(r * n + j + 1) * d];
            for (k, o) in yr.iter_mut().enumerate() {
                *o = ho[r * d + k] * post;
            }
            match &hr {
                Some(h) => {
                    for i in 0..n {
                        let w = h[r * n * n + i * n + j];
                        for (o, xv) in yr.iter_mut().zip(&xr[i * d..(i + 1) * d]) {
                            *o += w * xv;
                        }
                    }
                }
                None => {
                    for (o, xv) in yr.iter_mut().zip(&xr[j * d..(j + 1) * d]) {
                        *o += xv;
                    }
                }
            }
        }
    }
    store(y, DType::F64, out)
}

/// The gradients of `aclnnMhcPostBackward`.
pub struct MhcPostGrads<'a> {
    pub x: &'a View,
    pub h_res: &'a View,
    pub h_out: &'a View,
    pub h_post: &'a View,
}

/// `aclnnMhcPostBackward`, per row with `g` the gradient of the output:
/// `gradX = hRes · g` (`[i, d] = Σ_j hRes[i, j] · g[j, d]`), `gradHRes = x · gᵀ`
/// (`[i, j] = Σ_d x[i, d] · g[j, d]`), `gradHOut[d] = Σ_j g[j, d] · hPost[j]`,
/// `gradHPost[j] = Σ_d g[j, d] · hOut[d]`.
pub fn mhc_post_backward(
    grad: &View,
    x: &View,
    h_res: &View,
    h_out: &View,
    h_post: &View,
    out: MhcPostGrads,
) -> Result<(), String> {
    let (rows, n, d) = dims(x)?;
    let g = f64s(grad)?;
    let xs = f64s(x)?;
    let hr = f64s(h_res)?;
    let ho = f64s(h_out)?;
    let hp = f64s(h_post)?;
    let mut gx = vec![0f64; rows * n * d];
    let mut ghr = vec![0f64; rows * n * n];
    let mut gho = vec![0f64; rows * d];
    let mut ghp = vec![0f64; rows * n];
    for r in 0..rows {
        let gr = &g[r * n * d..(r + 1) * n * d];
        let xr = &xs[r * n * d..(r + 1) * n * d];
        let hor = &ho[r * d..(r + 1) * d];
        for i in 0..n {
            let dst = &mut gx[(r * n + i) * d..(r * n + i + 1) * d];
            for j in 0..n {
                let w = hr[r * n * n + i * n + j];
                for (o, gv) in dst.iter_mut().zip(&gr[j * d..(j + 1) * d]) {
                    *o += w * gv;
                }
                ghr[r * n * n + i * n + j] = xr[i * d..(i + 1) * d]
                    .iter()
                    .zip(&gr[j * d..(j + 1) * d])
                    .map(|(a, b)| a * b)
                    .sum();
            }
        }
        for j in 0..n {
            let gj = &gr[j * d..(j + 1) * d];
            let post = hp[r * n + j];
            for (o, gv) in gho[r * d..(r + 1) * d].iter_mut().zip(gj) {
                *o += gv * post;
            }
            ghp[r * n + j] = gj.iter().zip(hor).map(|(a, b)| a * b).sum();
        }
    }
    store(gx, DType::F64, out.x)?;
    store(ghr, DType::F64, out.h_res)?;
    store(gho, DType::F64, out.h_out)?;
    store(ghp, DType::F64, out.h_post)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(buf: &mut [f64], shape: &[usize]) -> View {
        View::of_slice(buf, DType::F64, shape)
    }

    #[test]
    fn post_and_its_gradient_on_one_row() {
        // n = 2, D = 2
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        let mut hr = vec![0.5, 0.25, 0.75, 1.0];
        let mut ho = vec![10.0, 20.0];
        let mut hp = vec![1.0, 2.0];
        let mut y = vec![0.0; 4];
        mhc_post(
            &view(&mut x, &[1, 2, 2]),
            Some(&view(&mut hr, &[1, 2, 2])),
            &view(&mut ho, &[1, 2]),
            &view(&mut hp, &[1, 2]),
            &view(&mut y, &[1, 2, 2]),
        )
        .unwrap();
        // y[j, d] = Σ_i hr[i, j] x[i, d] + ho[d] hp[j]
        assert_eq!(
            y,
            vec![
                0.5 + 2.25 + 10.0,
                1.0 + 3.0 + 20.0,
                0.25 + 3.0 + 20.0,
                0.5 + 4.0 + 40.0
            ]
        );
        let mut y2 = vec![0.0; 4];
        mhc_post(
            &view(&mut x, &[1, 2, 2]),
            None,
            &view(&mut ho, &[1, 2]),
            &view(&mut hp, &[1, 2]),
            &view(&mut y2, &[1, 2, 2]),
        )
        .unwrap();
        assert_eq!(y2, vec![11.0, 22.0, 23.0, 44.0]);

        let mut g = vec![1.0, 0.0, 0.0, 2.0];
        let (mut gx, mut ghr, mut gho, mut ghp) =
            (vec![0.0; 4], vec![0.0; 4], vec![0.0; 2], vec![0.0; 2]);
        mhc_post_backward(
            &view(&mut g, &[1, 2, 2]),
            &view(&mut x, &[1, 2, 2]),
            &view(&mut hr, &[1, 2, 2]),
            &view(&mut ho, &[1, 2]),
            &view(&mut hp, &[1, 2]),
            MhcPostGrads {
                x: &view(&mut gx, &[1, 2, 2]),
                h_res: &view(&mut ghr, &[1, 2, 2]),
                h_out: &view(&mut gho, &[1, 2]),
                h_post: &view(&mut ghp, &[1, 2]),
            },
        )
        .unwrap();
        assert_eq!(gx, vec![0.5, 0.5, 0.75, 2.0]);
        assert_eq!(ghr, vec![1.0, 4.0, 3.0, 8.0]);
        assert_eq!(gho, vec![1.0, 4.0]);
        assert_eq!(ghp, vec![10.0, 40.0]);
    }
}
