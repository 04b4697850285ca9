//! FRACTAL_Z (convolution weights, with `groups`) and FRACTAL_Z_3D (abi.md §5.2).
//!
//! Stored shape `[g_dim·D·C1·H·W, N1, 16, C0]`. For output channel `co` of group
//! `g = co / Cout_g` (local index `nl`) and input channel `ci < Cin` (per group):
//! `e_val = g % e`, `dst_ci = e_val·Cin + ci`, `dst_co = e_val·Cout_g + nl`,
//! row `= ((g / e)·D + d)·C1 + dst_ci / C0)·H·W + h·W + w`, and the element sits at
//! `(row·N1·16 + dst_co)·C0 + dst_ci % C0` — GE's `TransFormatHwcnToFzWithGroups`; with
//! `groups = 1` this is the plain FRACTAL_Z mapping `dst[(c1·H+h)·W+w][n1][n0][c0] = src[n][c]…`.
//! Everything else is zero.

use super::kernels::{Move, Walk};
use std::ops::Range;

/// Output channels per unit (one fractal's N0).
const CO_BLOCK: usize = 16;

/// Memory order of the plain weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FzPlain {
    /// `[Cout][Cin][D][H·W]` (NCHW, NCDHW, 4-D ND).
    ChannelsFirst,
    /// `[D][H·W][Cin][Cout]` (HWCN, DHWCN, 2-D ND `[K, N]`).
    Hwcn,
    /// `[Cout][D][H·W][Cin]` (NHWC, NDHWC).
    ChannelsLast,
}

#[derive(Clone, Debug)]
pub(crate) struct Fz {
    /// Total output channels (N of the plain shape).
    pub cout: usize,
    /// Input channels per group (C of the plain shape).
    pub cin: usize,
    pub d: usize,
    pub h: usize,
    pub w: usize,
    pub c0: usize,
    pub groups: usize,
    /// Groups packed into one block (GE's `e_mult`).
    pub e: usize,
    pub g_dim: usize,
    pub c1: usize,
    pub n1: usize,
    pub plain: FzPlain,
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: usize, b: usize) -> usize {
    a / gcd(a, b) * b
}

impl Fz {
    /// Geometry for `groups ≥ 1`; the caller has checked `cout % groups == 0` and, for
    /// `groups > 1`, `cin > 0` and `cout > 0`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cout: usize,
        cin: usize,
        d: usize,
        h: usize,
        w: usize,
        c0: usize,
        groups: usize,
        plain: FzPlain,
    ) -> Self {
        let cout_g = cout / groups;
        // GE's e_mult = min(lcm(lcm(Cin, C0) / Cin, lcm(Cout_g, 16) / Cout_g), groups).
        let e = if groups <= 1 {
            1
        } else {
            lcm(lcm(cin, c0) / cin, lcm(cout_g, 16) / cout_g).min(groups)
        };
        Fz {
            cout,
            cin,
            d,
            h,
            w,
            c0,
            groups,
            e,
            g_dim: groups.div_ceil(e),
            c1: (e * cin).div_ceil(c0),
            n1: (e * cout_g).div_ceil(16),
            plain,
        }
    }

    pub fn private_shape(&self) -> Vec<i64> {
        vec![
            (self.g_dim * self.d * self.c1 * self.h * self.w) as i64,
            self.n1 as i64,
            16,
            self.c0 as i64,
        ]
    }

    fn cout_g(&self) -> usize {
        self.cout / self.groups
    }

    /// Private index of (group g, local output channel nl, input channel ci, d, position p).
    fn private_index(&self, g: usize, nl: usize, ci: usize, di: usize, p: usize) -> usize {
        let (ge, ev) = (g / self.e, g % self.e);
        let dci = ev * self.cin + ci;
        let dco = ev * self.cout_g() + nl;
        let row = ((ge * self.d + di) * self.c1 + dci / self.c0) * self.h * self.w + p;
        (row * self.n1 * 16 + dco) * self.c0 + dci % self.c0
    }

    /// The input channels of group `g` split where they cross a C0 block: (first ci, count).
    fn segments(&self, g: usize) -> impl Iterator<Item = (usize, usize)> {
        let (cin, c0) = (self.cin, self.c0);
        let base = (g % self.e) * cin;
        let mut ci = 0;
        std::iter::from_fn(move || {
            if ci >= cin {
                return None;
            }
            let dci = base + ci;
            let len = (cin - ci).min((dci / c0 + 1) * c0 - dci);
            let seg = (ci, len);
            ci += len;
            Some(seg)
        })
    }
}

impl Walk for Fz {
    fn units(&self, _forward: bool) -> usize {
        match self.plain {
            FzPlain::ChannelsFirst | FzPlain::ChannelsLast => self.cout.div_ceil(CO_BLOCK),
            FzPlain::Hwcn => self.d * self.h * self.w,
        }
    }

    fn walk(&self, units: Range<usize>, _forward: bool, f: &mut impl FnMut(Move)) {
        let (cin, d, hw, c0) = (self.cin, self.d, self.h * self.w, self.c0);
        let cout_g = self.cout_g();
        let row_stride = self.n1 * 16 * c0;
        match self.plain {
            FzPlain::ChannelsFirst | FzPlain::ChannelsLast => {
                let last = self.plain == FzPlain::ChannelsLast;
                for u in units {
                    // A block of output channels, segment by segment: the block's pieces of one
                    // private row are adjacent (N0-major fractals), so they are written together.
                    let (co0, co1) = (u * CO_BLOCK, (u * CO_BLOCK + CO_BLOCK).min(self.cout));
                    let mut segs: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
                    for co in co0..co1 {
                        let g = co / cout_g;
                        if !segs.iter().any(|(sg, _)| *sg == g) {
                            segs.push((g, self.segments(g).collect()));
                        }
                    }
                    let seg_of = |g: usize| &segs.iter().find(|(sg, _)| *sg == g).unwrap().1;
                    let max_k = segs.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
                    for di in 0..d {
                        for k in 0..max_k {
                            for co in co0..co1 {
                                let (g, nl) = (co / cout_g, co % cout_g);
                                let Some(&(ci, len)) = seg_of(g).get(k) else {
                                    continue;
                                };
                                let private = self.private_index(g, nl, ci, di, 0);
                                f(if last {
                                    Move::Rows {
                                        plain: (co * d + di) * hw * cin + ci,
                                        plain_rs: cin,
                                        private,
                                        private_rs: row_stride,
                                        rows: hw,
                                        len,
                                        fill: 0,
                                    }
                                } else {
                                    Move::Transpose {
                                        plain: ((co * cin + ci) * d + di) * hw,
                                        plain_rs: d * hw,
                                        private,
                                        private_rs: row_stride,
                                        rows: len,
                                        cols: hw,
                                        fill: 0,
                                    }
                                });
                            }
                        }
                    }
                }
            }
            FzPlain::Hwcn => {
                for u in units {
                    let (di, p) = (u / hw, u % hw);
                    for g in 0..self.groups {
                        for (ci, len) in self.segments(g) {
                            f(Move::Transpose {
                                plain: ((di * hw + p) * cin + ci) * self.cout + g * cout_g,
                                plain_rs: self.cout,
                                private: self.private_index(g, 0, ci, di, p),
                                private_rs: c0,
                                rows: len,
                                cols: cout_g,
                                fill: 0,
                            });
                        }
                    }
                }
            }
        }
    }
}

/// FRACTAL_Z_C04 from NCHW with C ≤ 4: C padded to 4, `K = H·W·4` with `k = (h·W + w)·4 + c`,
/// stored as `[ceil(K/C0), N1, 16, C0]`: `dst[k / C0][n1][n0][k % C0] = src[n1·16 + n0][c][h][w]`.
#[derive(Clone, Debug)]
pub(crate) struct FzC04 {
    pub n: usize,
    pub c: usize,
    pub hw: usize,
    pub c0: usize,
    pub k1: usize,
    pub n1: usize,
}

impl FzC04 {
    pub fn new(n: usize, c: usize, h: usize, w: usize, c0: usize) -> Self {
        let hw = h * w;
        FzC04 {
            n,
            c,
            hw,
            c0,
            k1: (4 * hw).div_ceil(c0),
            n1: n.div_ceil(16),
        }
    }

    pub fn private_shape(&self) -> Vec<i64> {
        vec![self.k1 as i64, self.n1 as i64, 16, self.c0 as i64]
    }
}

impl Walk for FzC04 {
    fn units(&self, _forward: bool) -> usize {
        self.n
    }

    fn walk(&self, units: Range<usize>, _forward: bool, f: &mut impl FnMut(Move)) {
        let (c, hw, c0) = (self.c, self.hw, self.c0);
        // Positions per K block (C0 is a multiple of 4 here; else one position per move).
        let per = (c0 / 4).max(1);
        for n in units {
            let mut p0 = 0;
            while p0 < hw {
                let np = per.min(hw - p0);
                let k = p0 * 4;
                f(Move::Transpose {
                    plain: n * c * hw + p0,
                    plain_rs: hw,
                    private: ((k / c0) * self.n1 * 16 + n) * c0 + k % c0,
                    private_rs: 4,
                    rows: c,
                    cols: np,
                    fill: 0,
                });
                p0 += np;
            }
        }
    }
}
