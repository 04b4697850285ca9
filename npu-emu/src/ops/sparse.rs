//! Sparse COO helpers: `coalesce_sparse` (`aclnnCoalesceSparse`, the value summation of
//! `torch.Tensor.coalesce()` once the caller has found the unique flattened indices).

use super::dtype::DType;
use super::extra::{load, store};
use super::view::View;

/// CoalesceSparse: for each entry `i` of the `n` COO entries, `u = unique_indices[i]` (the
/// position of its flattened index among the unique ones) takes `new_indices[u, :] =
/// indices[i, :]` and `new_values[u, ...] += values[i, ...]`. The sums start from what
/// `new_values` holds (CANN's kernel adds atomically into it: the caller zeroes it first),
/// in f64, rounded once. A position outside `new_values`' first dimension fails the task.
pub fn coalesce_sparse(
    unique_indices: &View,
    indices: &View,
    values: &View,
    new_indices: &View,
    new_values: &View,
) -> Result<(), String> {
    let n = indices.shape[0];
    let m = indices.shape[1];
    let rows = new_values.shape[0];
    let inner: usize = values.shape[1..].iter().product();
    let pos: Vec<i64> = load(unique_indices, DType::I64)?;
    let idx: Vec<i64> = load(indices, DType::I64)?;
    let val: Vec<f64> = load(values, DType::F64)?;
    let mut ni: Vec<i64> = load(new_indices, DType::I64)?;
    let mut nv: Vec<f64> = load(new_values, DType::F64)?;
    for i in 0..n {
        let u = pos[i];
        if u < 0 || u as usize >= rows {
            return Err(format!(
                "uniqueIndices[{i}] = {u} is outside newValues' {rows} rows"
            ));
        }
        let u = u as usize;
        ni[u * m..(u + 1) * m].copy_from_slice(&idx[i * m..(i + 1) * m]);
        for (d, s) in nv[u * inner..(u + 1) * inner]
            .iter_mut()
            .zip(&val[i * inner..(i + 1) * inner])
        {
            *d += s;
        }
    }
    store(ni, DType::I64, new_indices)?;
    store(nv, DType::F64, new_values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_summed_into_their_unique_row() {
        // entries (1, 2), (0, 0), (1, 2): unique sorted (0, 0), (1, 2)
        let mut pos = [1i32, 0, 1];
        let mut idx = [1i32, 2, 0, 0, 1, 2];
        let mut val = [1f32, 10.0, 2.0, 20.0, 3.0, 30.0];
        let mut ni = [0i32; 4];
        let mut nv = [0f32; 4];
        coalesce_sparse(
            &View::of_slice(&mut pos, DType::I32, &[3]),
            &View::of_slice(&mut idx, DType::I32, &[3, 2]),
            &View::of_slice(&mut val, DType::F32, &[3, 2]),
            &View::of_slice(&mut ni, DType::I32, &[2, 2]),
            &View::of_slice(&mut nv, DType::F32, &[2, 2]),
        )
        .unwrap();
        assert_eq!(ni, [0, 0, 1, 2]);
        assert_eq!(nv, [2.0, 20.0, 4.0, 40.0]);
        let mut bad = [2i32, 0, 1];
        let e = coalesce_sparse(
            &View::of_slice(&mut bad, DType::I32, &[3]),
            &View::of_slice(&mut idx, DType::I32, &[3, 2]),
            &View::of_slice(&mut val, DType::F32, &[3, 2]),
            &View::of_slice(&mut ni, DType::I32, &[2, 2]),
            &View::of_slice(&mut nv, DType::F32, &[2, 2]),
        );
        assert!(e.unwrap_err().contains("uniqueIndices[0] = 2"));
    }
}
