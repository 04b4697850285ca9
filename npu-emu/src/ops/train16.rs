//! Training-path operators torch_npu 2.9 reaches by name beyond the older families:
//! `scatter_reduce` (sum, prod, mean, amax, amin, with or without `self`), Cholesky
//! (`torch.linalg.cholesky`), the gradients of `Tensor.unfold`, `torch.logit` and
//! `torch.cdist`, `F.multilabel_margin_loss` and `torch._add_relu`.
//!
//! All of them load their operands densely (`extra::load`), compute in f64 (i64 for
//! integer scatter reductions) and store once, so half types round once.

use super::dtype::{Class, DType};
use super::extra::{load, store};
use super::iter::map2;
use super::nn::Reduction;
use super::view::{contiguous_strides, View};

/// The `reduce` of aclnnScatterReduce: 0 replace, 1 add, 2 multiply, 3 max, 4 min, 5 mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    None,
    Sum,
    Prod,
    Max,
    Min,
    Mean,
}

impl ScatterReduce {
    /// The reduction of aclnn's integer code, if it is one.
    pub fn from_code(c: i64) -> Option<ScatterReduce> {
        Some(match c {
            0 => ScatterReduce::None,
            1 => ScatterReduce::Sum,
            2 => ScatterReduce::Prod,
            3 => ScatterReduce::Max,
            4 => ScatterReduce::Min,
            5 => ScatterReduce::Mean,
            _ => return None,
        })
    }
}

/// An accumulator type of [`scatter_reduce`]: f64 for floating dtypes, i64 (wrapping) for the
/// integer ones and BOOL.
trait Acc: Copy + Default + Clone + PartialOrd {
    const DT: DType;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    /// `self / n` (floor division for integers, as torch's mean of integers).
    fn div(self, n: u32) -> Self;
}

impl Acc for f64 {
    const DT: DType = DType::F64;
    fn add(self, o: f64) -> f64 {
        self + o
    }
    fn mul(self, o: f64) -> f64 {
        self * o
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn div(self, n: u32) -> f64 {
        self / n as f64
    }
}

impl Acc for i64 {
    const DT: DType = DType::I64;
    fn add(self, o: i64) -> i64 {
        self.wrapping_add(o)
    }
    fn mul(self, o: i64) -> i64 {
        self.wrapping_mul(o)
    }
    fn is_nan(self) -> bool {
        false
    }
    fn div(self, n: u32) -> i64 {
        self.div_euclid(n as i64)
    }
}

/// The row-major coordinates of flat position `i` of `shape`, into `coord`.
fn coords(mut i: usize, shape: &[usize], coord: &mut [usize]) {
    for d in (0..shape.len()).rev() {
        coord[d] = i % shape[d].max(1);
        i /= shape[d].max(1);
    }
}

fn run_scatter<T: Acc>(
    x: &View,
    dim: usize,
    index: &View,
    src: &View,
    reduce: ScatterReduce,
    include_self: bool,
    out: &View,
) -> Result<(), String> {
    let mut acc: Vec<T> = load(x, T::DT)?;
    let idx: Vec<i64> = load(index, DType::I64)?;
    let s: Vec<T> = load(src, T::DT)?;
    let (ostr, sstr) = (contiguous_strides(&x.shape), contiguous_strides(&src.shape));
    let n = x.shape.get(dim).copied().unwrap_or(1) as i64;
    let mut count = vec![0u32; acc.len()];
    let mut coord = vec![0usize; index.ndim()];
    for (i, &t) in idx.iter().enumerate() {
        coords(i, &index.shape, &mut coord);
        if t < 0 || t >= n {
            return Err(format!(
                "index {t} at position {coord:?} is out of range for dimension {dim} of size {n}"
            ));
        }
        let (mut o, mut si) = (0isize, 0isize);
        for (d, &c) in coord.iter().enumerate() {
            o += if d == dim { t as isize } else { c as isize } * ostr[d];
            si += c as isize * sstr[d];
        }
        let (o, v) = (o as usize, s[si as usize]);
        let first = count[o] == 0 && !include_self;
        acc[o] = if first || reduce == ScatterReduce::None {
            v
        } else {
            let a = acc[o];
            match reduce {
                ScatterReduce::Sum | ScatterReduce::Mean => a.add(v),
                ScatterReduce::Prod => a.mul(v),
                // NaN wins, as in torch's amax/amin
                ScatterReduce::Max if a.is_nan() || v.is_nan() => {
                    if a.is_nan() {
                        a
                    } else {
                        v
                    }
                }
                ScatterReduce::Min if a.is_nan() || v.is_nan() => {
                    if a.is_nan() {
                        a
                    } else {
                        v
                    }
                }
                ScatterReduce::Max => {
                    if v > a {
                        v
                    } else {
                        a
                    }
                }
                ScatterReduce::Min => {
                    if v < a {
                        v
                    } else {
                        a
                    }
                }
                ScatterReduce::None => v,
            }
        };
        count[o] += 1;
    }
    if reduce == ScatterReduce::Mean {
        for (a, &c) in acc.iter_mut().zip(&count) {
            if c > 0 {
                *a = a.div(c + include_self as u32);
            }
        }
    }
    store(acc, T::DT, out)
}

/// `torch.scatter_reduce(self, dim, index, src, reduce, include_self)` into `out` (`self`'s
/// shape; `out` may be `self`): every position `p` of `index` sends `src[p]` to
/// `out[p with p[dim] = index[p]]`, combined by `reduce`. With `include_self` the original
/// value takes part (counted once for mean); without it the first value sent replaces it.
/// Positions no index names keep `self`. Mean of integers divides with floor. An index
/// outside `[0, self.shape[dim])` fails the task.
pub fn scatter_reduce(
    x: &View,
    dim: usize,
    index: &View,
    src: &View,
    reduce: ScatterReduce,
    include_self: bool,
    out: &View,
) -> Result<(), String> {
    match out.dtype.class() {
        Class::Int => run_scatter::<i64>(x, dim, index, src, reduce, include_self, out),
        _ => run_scatter::<f64>(x, dim, index, src, reduce, include_self, out),
    }
}

/// `torch.linalg.cholesky` of each `[n, n]` matrix of `x` (batched over the leading
/// dimensions): `L` lower with `A = L Lᵀ` reading `A`'s lower triangle, or with `upper` the
/// `U = Lᵀ` of `A`'s upper triangle; the other triangle of `out` is zero. A matrix that is not
/// positive-definite fails the task, naming the batch and the leading minor.
pub fn cholesky(x: &View, upper: bool, out: &View) -> Result<(), String> {
    let nd = x.ndim();
    let n = x.shape[nd - 1];
    let a: Vec<f64> = load(x, DType::F64)?;
    if n == 0 || a.is_empty() {
        return Ok(());
    }
    let mut r = vec![0f64; a.len()];
    for (b, (m, l)) in a.chunks(n * n).zip(r.chunks_mut(n * n)).enumerate() {
        // the triangle read: A[i][j] for i >= j (lower) or A[j][i] (upper, transposed)
        let at = |i: usize, j: usize| if upper { m[j * n + i] } else { m[i * n + j] };
        for j in 0..n {
            let mut d = at(j, j);
            for k in 0..j {
                d -= l[j * n + k] * l[j * n + k];
            }
            if d.is_nan() || d <= 0.0 {
                return Err(format!(
                    "the input of batch {b} is not positive-definite (the leading minor of \
                     order {} is not positive-definite)",
                    j + 1
                ));
            }
            let djj = d.sqrt();
            l[j * n + j] = djj;
            for i in j + 1..n {
                let mut s = at(i, j);
                for k in 0..j {
                    s -= l[i * n + k] * l[j * n + k];
                }
                l[i * n + j] = s / djj;
            }
        }
        if upper {
            for i in 0..n {
                for j in 0..i {
                    l[j * n + i] = l[i * n + j];
                    l[i * n + j] = 0.0;
                }
            }
        }
    }
    store(r, DType::F64, out)
}

/// The gradient of `Tensor.unfold(dim, size, step)`: `grad` is the unfolded shape (the input
/// shape with dimension `dim` replaced by the window count, then a last dimension `size`);
/// `out` (the input's shape) receives, at each position, the sum of the window elements that
/// were read from it (zero for positions no window covers).
pub fn unfold_grad(
    grad: &View,
    dim: usize,
    size: usize,
    step: usize,
    out: &View,
) -> Result<(), String> {
    let g: Vec<f64> = load(grad, DType::F64)?;
    let pre: usize = out.shape[..dim].iter().product();
    let post: usize = out.shape[dim + 1..].iter().product();
    let len = out.shape[dim];
    let win = grad.shape[dim];
    let mut r = vec![0f64; out.numel()];
    for p in 0..pre {
        for w in 0..win {
            for q in 0..post {
                for k in 0..size {
                    let gi = ((p * win + w) * post + q) * size + k;
                    r[(p * len + w * step + k) * post + q] += g[gi];
                }
            }
        }
    }
    store(r, DType::F64, out)
}

/// The gradient of `torch.logit(x, eps)`: `dy / (x (1 - x))`; outside `[eps, 1 - eps]` it is 0
/// when `eps >= 0`, and outside `[0, 1]` NaN when `eps < 0` (no clamping).
pub fn logit_grad(x: &View, dy: &View, eps: f64, out: &View) -> Result<(), String> {
    map2::<f64, f64>(x, dy, out, move |v, g| {
        if eps < 0.0 {
            if !(0.0..=1.0).contains(&v) {
                f64::NAN
            } else {
                g / (v * (1.0 - v))
            }
        } else if v < eps || v > 1.0 - eps {
            0.0
        } else {
            g / (v * (1.0 - v))
        }
    })
}

/// `aclnnHardswishBackwardV2`: `g` times 0 for `x <= -3`, `x / 3 + 0.5` for `-3 < x < 3`, 1 for
/// `x >= 3` (torch's gradient, 0 at -3 and 1 at 3, which the first version's `-3 <= x <= 3`
/// middle piece does not give).
pub fn hardswish_backward_v2(g: &View, x: &View, out: &View) -> Result<(), String> {
    map2::<f64, f64>(g, x, out, |g, x| {
        if x <= -3.0 {
            0.0
        } else if x < 3.0 {
            g * (x / 3.0 + 0.5)
        } else {
            g
        }
    })
}

/// `torch._add_relu` (`aclnnAddRelu`): `max(x + alpha y, 0)` with broadcasting, computed in
/// the promoted type `ct`'s class (f64 for floating types, wrapping i64 for integers) and
/// stored once into `out`. A NaN sum stays NaN.
pub fn add_relu(
    x: &View,
    y: &View,
    alpha: (f64, i64),
    ct: DType,
    out: &View,
) -> Result<(), String> {
    match ct.class() {
        Class::Int => map2::<i64, i64>(x, y, out, move |a, b| {
            a.wrapping_add(alpha.1.wrapping_mul(b)).max(0)
        }),
        _ => map2::<f64, f64>(x, y, out, move |a, b| {
            let v = a + alpha.0 * b;
            if v > 0.0 || v.is_nan() {
                v
            } else {
                0.0
            }
        }),
    }
}

/// The gradient of `torch.cdist(x1, x2, p)` with respect to `x1`: `x1` `[B…, P, M]`, `x2`
/// `[B…, R, M]`, `grad` and `dist` `[B…, P, R]` (same batch dimensions), `out` `x1`'s shape.
/// `p` is a non-negative value or -1 for infinity. Per pair, with `d = x1 - x2`: p = 0 gives 0;
/// p = 1 `sign(d)`; p = 2 `d / dist`; p = inf `sign(d)` where `|d| = dist`; p < 2 otherwise
/// `sign(d) |d|^(p-1) / dist^(p-1)` (0 where `d = 0` and p < 1); larger p
/// `d |d|^(p-2) / dist^(p-1)`; every pair at distance 0 contributes 0. Summed over `x2`'s rows,
/// times `grad`.
pub fn cdist_backward(
    grad: &View,
    x1: &View,
    x2: &View,
    dist: &View,
    p: f64,
    out: &View,
) -> Result<(), String> {
    let nd = x1.ndim();
    let (pn, m, rn) = (x1.shape[nd - 2], x1.shape[nd - 1], x2.shape[nd - 2]);
    let g: Vec<f64> = load(grad, DType::F64)?;
    let a: Vec<f64> = load(x1, DType::F64)?;
    let b: Vec<f64> = load(x2, DType::F64)?;
    let dd: Vec<f64> = load(dist, DType::F64)?;
    let batches: usize = x1.shape[..nd - 2].iter().product();
    let mut r = vec![0f64; a.len()];
    let sign = |v: f64| {
        if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            0.0
        }
    };
    for bt in 0..batches {
        for i in 0..pn {
            for j in 0..rn {
                let gd = g[(bt * pn + i) * rn + j];
                let ds = dd[(bt * pn + i) * rn + j];
                if p == 0.0 || ds == 0.0 {
                    continue;
                }
                for k in 0..m {
                    let d = a[(bt * pn + i) * m + k] - b[(bt * rn + j) * m + k];
                    let v = if p == 1.0 {
                        sign(d)
                    } else if p == 2.0 {
                        d / ds
                    } else if p < 0.0 {
                        if d.abs() == ds {
                            sign(d)
                        } else {
                            0.0
                        }
                    } else if p < 2.0 {
                        if d == 0.0 && p < 1.0 {
                            0.0
                        } else {
                            sign(d) * d.abs().powf(p - 1.0) / ds.powf(p - 1.0)
                        }
                    } else {
                        d * d.abs().powf(p - 2.0) / ds.powf(p - 1.0)
                    };
                    r[(bt * pn + i) * m + k] += v * gd;
                }
            }
        }
    }
    store(r, DType::F64, out)
}

/// `F.multilabel_margin_loss`: `x` `[C]` or `[N, C]`, `target` (integer, same shape) lists
/// each sample's classes up to the first -1. Per sample
/// `sum_{j target} sum_{i not target} max(0, 1 - (x[j] - x[i])) / C`; `out` holds them
/// (reduction none: `[N]`, or 0-d for a 1-D `x`) or their mean / sum (0-d). `is_target`
/// (`target`'s shape) gets 1 at each sample's target classes, 0 elsewhere. A target outside
/// `[-1, C)` fails the task.
pub fn multilabel_margin_loss(
    x: &View,
    target: &View,
    r: Reduction,
    out: &View,
    is_target: &View,
) -> Result<(), String> {
    let c = *x.shape.last().unwrap_or(&1);
    let xs: Vec<f64> = load(x, DType::F64)?;
    let ts: Vec<i64> = load(target, DType::I64)?;
    let n = if x.ndim() == 2 { x.shape[0] } else { 1 };
    let mut loss = vec![0f64; n];
    let mut mark = vec![0f64; ts.len()];
    for s in 0..n {
        let (row, trow) = (&xs[s * c..(s + 1) * c], &ts[s * c..(s + 1) * c]);
        let mut targets = Vec::new();
        for &t in trow {
            if t == -1 {
                break;
            }
            if t < -1 || t >= c as i64 {
                return Err(format!(
                    "target {t} of sample {s} is outside [-1, {c}) (the {c} classes)"
                ));
            }
            targets.push(t as usize);
            mark[s * c + t as usize] = 1.0;
        }
        let mut sum = 0.0;
        for &j in &targets {
            for i in 0..c {
                if mark[s * c + i] == 0.0 {
                    sum += (1.0 - (row[j] - row[i])).max(0.0);
                }
            }
        }
        loss[s] = if c == 0 { 0.0 } else { sum / c as f64 };
    }
    store(mark, DType::F64, is_target)?;
    match r {
        Reduction::None => store(loss, DType::F64, out),
        Reduction::Sum => store(vec![loss.iter().sum::<f64>()], DType::F64, out),
        Reduction::Mean => {
            let m = loss.iter().sum::<f64>() / n as f64;
            store(vec![m], DType::F64, out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_reduce_forms() {
        // self [1, 2, 3, 4], index [0, 0, 2], src [5, 6, 7]
        let run = |red: ScatterReduce, inc: bool| {
            let (mut x, mut i, mut s, mut o) = (
                vec![1f32, 2., 3., 4.],
                vec![0i64, 0, 2],
                vec![5f32, 6., 7.],
                vec![0f32; 4],
            );
            let xv = View::of_slice(&mut x, DType::F32, &[4]);
            let iv = View::of_slice(&mut i, DType::I64, &[3]);
            let sv = View::of_slice(&mut s, DType::F32, &[3]);
            let ov = View::of_slice(&mut o, DType::F32, &[4]);
            scatter_reduce(&xv, 0, &iv, &sv, red, inc, &ov).unwrap();
            o
        };
        assert_eq!(run(ScatterReduce::Sum, true), vec![12., 2., 10., 4.]);
        assert_eq!(run(ScatterReduce::Sum, false), vec![11., 2., 7., 4.]);
        assert_eq!(run(ScatterReduce::Prod, true), vec![30., 2., 21., 4.]);
        assert_eq!(run(ScatterReduce::Mean, true), vec![4., 2., 5., 4.]);
        assert_eq!(run(ScatterReduce::Mean, false), vec![5.5, 2., 7., 4.]);
        assert_eq!(run(ScatterReduce::Max, false), vec![6., 2., 7., 4.]);
        assert_eq!(run(ScatterReduce::Min, true), vec![1., 2., 3., 4.]);
        assert_eq!(run(ScatterReduce::Min, false), vec![5., 2., 7., 4.]);
    }

    #[test]
    fn cholesky_of_a_known_matrix() {
        // A = [[4, 2], [2, 5]] = L Lᵀ with L = [[2, 0], [1, 2]]
        let (mut a, mut o) = (vec![4f64, 2., 2., 5.], vec![9f64; 4]);
        let av = View::of_slice(&mut a, DType::F64, &[2, 2]);
        let ov = View::of_slice(&mut o, DType::F64, &[2, 2]);
        cholesky(&av, false, &ov).unwrap();
        assert_eq!(o, vec![2., 0., 1., 2.]);
        cholesky(&av, true, &ov).unwrap();
        assert_eq!(o, vec![2., 1., 0., 2.]);
        let mut bad = vec![1f64, 2., 2., 1.];
        let bv = View::of_slice(&mut bad, DType::F64, &[2, 2]);
        assert!(cholesky(&bv, false, &ov).unwrap_err().contains("order 2"));
    }

    #[test]
    fn unfold_grad_sums_overlaps() {
        // x of 5 elements unfolded (0, 2, 1): windows [0,1] [1,2] [2,3] [3,4], grad all ones
        let (mut g, mut o) = (vec![1f32; 8], vec![0f32; 5]);
        let gv = View::of_slice(&mut g, DType::F32, &[4, 2]);
        let ov = View::of_slice(&mut o, DType::F32, &[5]);
        unfold_grad(&gv, 0, 2, 1, &ov).unwrap();
        assert_eq!(o, vec![1., 2., 2., 2., 1.]);
    }
}
