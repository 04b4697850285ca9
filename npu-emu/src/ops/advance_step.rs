//! vLLM's `advance_step_flashattn` (`aclnnAdvanceStep`, `aclnnAdvanceStepV2`;
//! `torch_npu.npu_advance_step_flashattn`): the in-place update of a decode step's
//! bookkeeping (all INT64).
//!
//! Without speculation, for query `i < numQueries`: `inputTokens[i] = sampledTokenIds[i, 0]`,
//! `inputPositions[i] = seqLens[i]`, `seqLens[i] += 1`, `slotMapping[i] =
//! blockTables[i, pos / blockSize] * blockSize + pos % blockSize` with `pos` the new position;
//! the padding sequences `numQueries <= i < numSeqs` get token 0, position 0 and slot -1.
//! With speculation (`T = 1 + specNum` tokens per request, flat `[numSeqs * T]` tensors):
//! `inputPositions[j] += acceptedNum[j / T] + 1`, `seqLens[j] = inputPositions[j] + 1`, the
//! request's first token becomes its last accepted sampled token (the one before the first
//! minimum of `[sampledTokenIds[i, :], -1]`, i.e. before the first -1), the others its
//! `specToken` row, and `slotMapping[j]` follows the new position as above.

use super::dtype::DType;
use super::extra::{load, store};
use super::View;

/// The slot of position `pos` of request `req`: block `pos / bs` counted from the request's
/// row of the (contiguous) block table, as the kernel's pointer arithmetic reads it; an entry
/// past the whole table fails the task.
fn slot(bt: &[i64], cols: usize, req: usize, pos: i64, bs: i64) -> Result<i64, String> {
    if pos < 0 {
        return Err(format!("request {req}: position {pos} is negative"));
    }
    let at = req * cols + (pos / bs) as usize;
    match bt.get(at) {
        Some(b) => Ok(b * bs + pos % bs),
        None => Err(format!(
            "request {req}: position {pos} reads blockTables entry {at}, past its {} entries",
            bt.len()
        )),
    }
}

/// The views in the order of the C API; `spec`/`accepted` absent for `aclnnAdvanceStep`.
#[allow(clippy::too_many_arguments)]
pub fn advance_step(
    tokens: &View,
    sampled: &View,
    positions: &View,
    seq_lens: &View,
    slots: &View,
    block_tables: &View,
    spec: Option<&View>,
    accepted: Option<&View>,
    num_seqs: usize,
    num_queries: usize,
    block_size: i64,
) -> Result<(), String> {
    let mut tk: Vec<i64> = load(tokens, DType::I64)?;
    let sm: Vec<i64> = load(sampled, DType::I64)?;
    let mut ps: Vec<i64> = load(positions, DType::I64)?;
    let mut sl: Vec<i64> = load(seq_lens, DType::I64)?;
    let mut st: Vec<i64> = load(slots, DType::I64)?;
    let bt: Vec<i64> = load(block_tables, DType::I64)?;
    let cols = block_tables.shape[1];
    let scols = sampled.shape.get(1).copied().unwrap_or(1);
    if spec.is_none() && accepted.is_none() {
        for i in 0..num_queries {
            tk[i] = sm[i * scols];
            let pos = sl[i];
            ps[i] = pos;
            sl[i] = pos + 1;
            st[i] = slot(&bt, cols, i, pos, block_size)?;
        }
        for i in num_queries..num_seqs {
            tk[i] = 0;
            ps[i] = 0;
            st[i] = -1;
        }
    } else {
        let t = tk.len() / num_seqs;
        let sp: Vec<i64> = spec
            .map(|v| load(v, DType::I64))
            .transpose()?
            .unwrap_or_default();
        let acc: Vec<i64> = accepted
            .map(|v| load(v, DType::I64))
            .transpose()?
            .unwrap_or_default();
        for i in 0..num_seqs {
            let row = &sm[i * scols..(i + 1) * scols];
            let m = row.iter().copied().fold(-1, i64::min);
            // the appended -1 is column `scols`
            let first_min = row.iter().position(|&x| x == m).unwrap_or(scols);
            let last = if first_min == 0 {
                scols - 1
            } else {
                first_min - 1
            };
            tk[i * t] = row[last];
            for s in 1..t {
                tk[i * t + s] = sp[i * (t - 1) + s - 1];
            }
            for j in i * t..(i + 1) * t {
                ps[j] += acc.get(i).copied().unwrap_or(0) + 1;
                sl[j] = ps[j] + 1;
                st[j] = slot(&bt, cols, i, ps[j], block_size)?;
            }
        }
    }
    store(tk, DType::I64, tokens)?;
    store(ps, DType::I64, positions)?;
    store(sl, DType::I64, seq_lens)?;
    store(st, DType::I64, slots)
}
