//! FRACTAL_NZ and FRACTAL_NZ_C0_{2,4,8,16,32} (abi.md §5.2): plain `[..., H, W]` is stored as
//! `[..., W1, H1, 16, W0]` with `W0 = C0`: `dst[b][w1][h1·16 + h0][w0] = src[b][h1·16 + h0][w1·W0 + w0]`,
//! zero padded. Each W0-wide column strip is stored contiguously over all (padded) rows.
//! A 1-D `[N]` is the column `[N, 1]` (GE's shape helper and torch_npu).

use super::kernels::{Move, Walk};
use std::ops::Range;

/// Rows of one fractal (H0 = 16).
const H0: usize = 16;

#[derive(Clone, Debug)]
pub(crate) struct Nz {
    /// The batch dims (all but the last two of the plain shape).
    pub batch_dims: Vec<i64>,
    pub b: usize,
    pub h: usize,
    pub w: usize,
    pub w0: usize,
    pub w1: usize,
    pub h1: usize,
}

impl Nz {
    pub fn new(batch_dims: Vec<i64>, h: usize, w: usize, w0: usize) -> Self {
        let b = batch_dims.iter().map(|&x| x as usize).product();
        Nz {
            batch_dims,
            b,
            h,
            w,
            w0,
            w1: w.div_ceil(w0),
            h1: h.div_ceil(H0),
        }
    }

    pub fn private_shape(&self) -> Vec<i64> {
        let mut s = self.batch_dims.clone();
        s.extend([self.w1 as i64, self.h1 as i64, H0 as i64, self.w0 as i64]);
        s
    }
}

/// Column strips read together by the inverse: each plain row gets `STRIPS` pieces in a row
/// (one contiguous write) from as many sequential read streams.
const STRIPS: usize = 16;
/// Plain rows per inverse unit.
const ROWS: usize = 512;

impl Nz {
    fn strip_groups(&self) -> usize {
        self.w1.div_ceil(STRIPS)
    }
    fn row_chunks(&self) -> usize {
        self.h.div_ceil(ROWS)
    }
}

impl Walk for Nz {
    fn units(&self, forward: bool) -> usize {
        if forward {
            // 16-row blocks: each strip's piece of the block is one contiguous private range.
            self.b * self.h1
        } else {
            // (batch, row chunk, strip group).
            self.b * self.row_chunks() * self.strip_groups()
        }
    }

    fn walk(&self, units: Range<usize>, forward: bool, f: &mut impl FnMut(Move)) {
        let (h, w, w0, w1, h1) = (self.h, self.w, self.w0, self.w1, self.h1);
        let strip = h1 * H0 * w0;
        if !forward {
            let (groups, chunks) = (self.strip_groups(), self.row_chunks());
            for u in units {
                let (rest, g) = (u / groups, u % groups);
                let (bi, ch) = (rest / chunks, rest % chunks);
                let s0 = g * STRIPS;
                let s1 = (s0 + STRIPS).min(w1);
                // Strips of the group that are full W0 wide; the last strip of the row may not.
                let full_end = s1.min(w / w0);
                let r1 = (ch * ROWS + ROWS).min(h);
                for hh in ch * ROWS..r1 {
                    let plain = (bi * h + hh) * w + s0 * w0;
                    let private = (bi * w1 + s0) * strip + hh * w0;
                    if full_end > s0 {
                        f(Move::Rows {
                            plain,
                            plain_rs: w0,
                            private,
                            private_rs: strip,
                            rows: full_end - s0,
                            len: w0,
                            fill: 0,
                        });
                    }
                    if full_end < s1 {
                        let k = full_end - s0;
                        f(Move::Rows {
                            plain: plain + k * w0,
                            plain_rs: 0,
                            private: private + k * strip,
                            private_rs: 0,
                            rows: 1,
                            len: w - full_end * w0,
                            fill: 0,
                        });
                    }
                }
            }
            return;
        }
        for u in units {
            let (bi, h1i) = (u / h1, u % h1);
            let r0 = h1i * H0;
            let hv = H0.min(h - r0);
            for w1i in 0..w1 {
                let cs = w1i * w0;
                let wv = w0.min(w - cs);
                let private = ((bi * w1 + w1i) * h1 * H0 + r0) * w0;
                f(Move::Rows {
                    plain: (bi * h + r0) * w + cs,
                    plain_rs: w,
                    private,
                    private_rs: w0,
                    rows: hv,
                    len: wv,
                    fill: 0,
                });
                if wv < w0 {
                    f(Move::Pad {
                        private: private + wv,
                        rs: w0,
                        rows: hv,
                        len: w0 - wv,
                    });
                }
                if hv < H0 {
                    f(Move::Pad {
                        private: private + hv * w0,
                        rs: 0,
                        rows: 1,
                        len: (H0 - hv) * w0,
                    });
                }
            }
        }
    }
}
