//! `F.embedding_bag` / `nn.EmbeddingBag` (aclnnEmbeddingBag): rows of `weight` picked by
//! `indices`, grouped into bags by `offsets`, reduced by sum (optionally weighted per
//! sample), mean or max. Computed in f64, rounded once into the output's type.
//!
//! Bag `b` holds the indices `offsets[b] .. offsets[b + 1]` (the last bag runs to the end of
//! `indices` unless `include_last_offset`, where the last offset closes it). An index equal
//! to `padding_idx` (when non-negative) contributes nothing and is not counted. Empty bags
//! give zeros (max index -1 in max mode).

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// The reduction of a bag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Sum,
    Mean,
    Max,
}

/// Options of [`embedding_bag`].
#[derive(Clone, Copy, Debug)]
pub struct Bag {
    pub mode: Mode,
    pub include_last_offset: bool,
    pub padding_idx: i64,
}

/// The auxiliary outputs torch keeps for the backward pass; each is written only when it has
/// the size documented for it (torch_npu passes an empty `offset2bag` in sum mode).
pub struct Aux<'a> {
    pub offset2bag: &'a View,
    pub bag_size: &'a View,
    pub max_indices: &'a View,
}

pub fn embedding_bag(
    weight: &View,
    indices: &View,
    offsets: &View,
    psw: Option<&View>,
    o: Bag,
    out: &View,
    aux: Aux,
) -> Result<(), String> {
    let rows = weight.shape[0];
    let dim = weight.shape[1];
    let w: Vec<f64> = load(weight, DType::F64)?;
    let idx: Vec<i64> = load(indices, DType::I64)?;
    let offs: Vec<i64> = load(offsets, DType::I64)?;
    let ps: Option<Vec<f64>> = psw.map(|p| load(p, DType::F64)).transpose()?;
    let n = idx.len();
    let bags = if o.include_last_offset {
        offs.len().saturating_sub(1)
    } else {
        offs.len()
    };
    let mut res = vec![0f64; bags * dim];
    let mut argmax = vec![-1i64; bags * dim];
    let mut sizes = vec![0i64; bags];
    let mut which = vec![0i64; n];
    for b in 0..bags {
        let start = offs[b];
        let end = if b + 1 < offs.len() {
            offs[b + 1]
        } else {
            n as i64
        };
        if start < 0 || end < start || end as usize > n {
            return Err(format!(
                "bag {b} spans offsets {start}..{end}, outside the {n} indices (offsets must be non-decreasing from 0)"
            ));
        }
        let row = &mut res[b * dim..(b + 1) * dim];
        let am = &mut argmax[b * dim..(b + 1) * dim];
        let mut count = 0i64;
        for i in start as usize..end as usize {
            which[i] = b as i64;
            let k = idx[i];
            if k < 0 || k as usize >= rows {
                return Err(format!(
                    "index {k} at position {i} is out of range for weight's {rows} rows"
                ));
            }
            if o.padding_idx >= 0 && k == o.padding_idx {
                continue;
            }
            let src = &w[k as usize * dim..(k as usize + 1) * dim];
            let scale = ps.as_ref().map_or(1.0, |p| p[i]);
            for d in 0..dim {
                match o.mode {
                    Mode::Max => {
                        if count == 0 || src[d] > row[d] {
                            row[d] = src[d];
                            am[d] = k;
                        }
                    }
                    _ => row[d] += src[d] * scale,
                }
            }
            count += 1;
        }
        if o.mode == Mode::Mean && count > 0 {
            row.iter_mut().for_each(|v| *v /= count as f64);
        }
        sizes[b] = count;
    }
    store(res, DType::F64, out)?;
    if aux.offset2bag.numel() == n && n > 0 {
        store(which, DType::I64, aux.offset2bag)?;
    }
    if aux.bag_size.numel() == bags && bags > 0 {
        store(sizes.clone(), DType::I64, aux.bag_size)?;
    }
    if o.mode == Mode::Max {
        if aux.max_indices.numel() == bags * dim && bags * dim > 0 {
            store(argmax, DType::I64, aux.max_indices)?;
        }
    } else if aux.max_indices.numel() == bags && bags > 0 {
        store(sizes, DType::I64, aux.max_indices)?;
    }
    Ok(())
}
