//! NC1HWC0, NC1HWC0_C04 and NDC1HWC0 (abi.md §5.2):
//! `private[n][d][c1][h][w][c0] = plain(n, c1·C0 + c0, d, h, w)`, zero where the channel ≥ C.
//! The 2-D formats are the D = 1 case. Plain is channels-first (`[N][C][D][H·W]`, NCHW/NCDHW) or
//! channels-last (`[N][D][H·W][C]`, NHWC/NDHWC).

use super::kernels::{Move, Walk};
use std::ops::Range;

/// Positions (h·w) per unit when channels-first, so that a large H·W still splits across
/// threads.
const CHUNK: usize = 4096;
/// Plain elements per unit when channels-last: all C1 blocks of a unit's positions are moved
/// one after the other, so their source (positions × C) should stay in the cache.
const CHUNK_ELEMS_LAST: usize = 16384;

#[derive(Clone, Debug)]
pub(crate) struct C1C0 {
    pub n: usize,
    pub c: usize,
    pub d: usize,
    pub h: usize,
    pub w: usize,
    pub c0: usize,
    pub c1: usize,
    pub channels_last: bool,
    /// NDC1HWC0 (shape carries D).
    pub three_d: bool,
}

impl C1C0 {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        c: usize,
        d: usize,
        h: usize,
        w: usize,
        c0: usize,
        channels_last: bool,
        three_d: bool,
    ) -> Self {
        C1C0 {
            n,
            c,
            d,
            h,
            w,
            c0,
            c1: c.div_ceil(c0),
            channels_last,
            three_d,
        }
    }

    pub fn private_shape(&self) -> Vec<i64> {
        let v = |x: usize| x as i64;
        if self.three_d {
            vec![
                v(self.n),
                v(self.d),
                v(self.c1),
                v(self.h),
                v(self.w),
                v(self.c0),
            ]
        } else {
            vec![v(self.n), v(self.c1), v(self.h), v(self.w), v(self.c0)]
        }
    }

    fn hw(&self) -> usize {
        self.h * self.w
    }

    /// Positions per unit.
    fn chunk(&self) -> usize {
        if self.channels_last {
            (CHUNK_ELEMS_LAST / self.c.max(1)).clamp(16, CHUNK)
        } else {
            CHUNK
        }
    }

    fn chunks(&self) -> usize {
        self.hw().div_ceil(self.chunk())
    }
}

impl Walk for C1C0 {
    fn units(&self, _forward: bool) -> usize {
        self.n * self.d * self.c1 * self.chunks()
    }

    fn walk(&self, units: Range<usize>, _forward: bool, f: &mut impl FnMut(Move)) {
        let (c, d, c0, c1, hw) = (self.c, self.d, self.c0, self.c1, self.hw());
        let (chunk, chunks) = (self.chunk(), self.chunks());
        for u in units {
            // Unit order: (n, d), position chunk, C1 block.
            let (rest, c1i) = (u / c1, u % c1);
            let (nd, ch) = (rest / chunks, rest % chunks);
            let p0 = ch * chunk;
            let np = chunk.min(hw - p0);
            let (ni, di) = (nd / d, nd % d);
            let cs = c1i * c0;
            let cv = c0.min(c - cs);
            let private = ((nd * c1 + c1i) * hw + p0) * c0;
            if self.channels_last {
                f(Move::Rows {
                    plain: (nd * hw + p0) * c + cs,
                    plain_rs: c,
                    private,
                    private_rs: c0,
                    rows: np,
                    len: cv,
                    // The padding channels are written with each row (whole C0 rows).
                    fill: c0 - cv,
                });
            } else {
                f(Move::Transpose {
                    plain: ((ni * c + cs) * d + di) * hw + p0,
                    plain_rs: d * hw,
                    private,
                    private_rs: c0,
                    rows: cv,
                    cols: np,
                    // The padding channels are written with the block (whole C0 rows).
                    fill: c0 - cv,
                });
            }
        }
    }
}
