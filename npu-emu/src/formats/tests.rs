//! Tests of the format conversions: round trips against a per-element reference written from
//! abi.md §5.2 (and GE's group loop), literal hand-computed examples, and bad input.
//! Run with `cargo test --release -p npu-emu formats`; throughput: `cargo run --release -p npu-emu
//! --example formats_bench`.

use super::*;

// ---------------------------------------------------------------------------------------------
// Helpers

/// `n` elements of `es` bytes; every element is non-zero and (for es ≥ 2, n < 65535) distinct.
fn pattern(n: usize, es: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * es);
    for i in 0..n {
        let x: u128 = if es == 1 {
            (i % 255) as u128 + 1
        } else {
            (i as u128 + 1) | (0xA5C3_9E17_u128 << 16) | (0x5A_u128 << 100)
        };
        v.extend_from_slice(&x.to_le_bytes()[..es]);
    }
    v
}

fn prod(s: &[i64]) -> usize {
    s.iter().map(|&x| x as usize).product()
}

#[allow(clippy::too_many_arguments)]
fn conv(
    src_format: i32,
    src_shape: &[i64],
    dst_format: i32,
    dst_shape: Option<&[i64]>,
    dtype: i32,
    groups: i64,
    rule: C0Rule,
    src: &[u8],
) -> Result<(Vec<u8>, Vec<i64>), FormatError> {
    let p = plan(&Request {
        src_format,
        src_shape,
        dst_format,
        dst_shape,
        dtype,
        groups,
        rule,
    })?;
    let mut dst = vec![0xEEu8; p.dst_bytes()];
    p.run(src, &mut dst)?;
    Ok((dst, p.dst_shape().to_vec()))
}

fn ceil(a: usize, b: usize) -> usize {
    a.div_ceil(b)
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

/// Reference: for each plain element, its private linear index, computed per element straight
/// from the formulas of abi.md §5.2. Returns (private shape, map private index → plain index).
fn reference(
    plain_format: i32,
    plain_shape: &[i64],
    private: i32,
    c0: usize,
    groups: usize,
) -> (Vec<i64>, Vec<Option<usize>>) {
    let s: Vec<usize> = plain_shape.iter().map(|&x| x as usize).collect();
    let p = primary_format(private);
    let total = prod(plain_shape);
    // Unravel a plain index into its coordinates.
    let coords = |mut i: usize| -> Vec<usize> {
        let mut c = vec![0; s.len()];
        for k in (0..s.len()).rev() {
            c[k] = i % s[k];
            i /= s[k];
        }
        c
    };
    if matches!(p, 29 | 50..=54) {
        let r = s.len();
        let (h, w) = if r == 1 {
            (s[0], 1)
        } else {
            (s[r - 2], s[r - 1])
        };
        let batch: usize = if r <= 2 {
            1
        } else {
            s[..r - 2].iter().product()
        };
        let (w1, h1) = (ceil(w, c0), ceil(h, 16));
        let mut pshape: Vec<i64> = if r <= 2 {
            vec![]
        } else {
            plain_shape[..r - 2].to_vec()
        };
        pshape.extend([w1 as i64, h1 as i64, 16, c0 as i64]);
        let mut map = vec![None; batch * w1 * h1 * 16 * c0];
        for i in 0..total {
            let (b, hh, ww) = (i / (h * w), (i / w) % h, i % w);
            let dst = b * w1 * h1 * 16 * c0 + (ww / c0) * (h1 * 16 * c0) + hh * c0 + ww % c0;
            assert!(map[dst].is_none());
            map[dst] = Some(i);
        }
        return (pshape, map);
    }
    if p == FORMAT_FRACTAL_Z_C04 {
        // NCHW, C <= 4 padded to 4, k = (h·W + w)·4 + c.
        let (n, c, hw) = (s[0], s[1], s[2] * s[3]);
        let (k1, n1) = (ceil(4 * hw, c0), ceil(n, 16));
        let pshape = vec![k1 as i64, n1 as i64, 16, c0 as i64];
        let mut map = vec![None; prod(&pshape)];
        for i in 0..total {
            let (nn, cc, pp) = (i / (c * hw), (i / hw) % c, i % hw);
            let k = pp * 4 + cc;
            let dst = ((k / c0) * n1 * 16 + nn) * c0 + k % c0;
            assert!(map[dst].is_none());
            map[dst] = Some(i);
        }
        return (pshape, map);
    }
    // Named axes n, c, d, h, w of the plain shape.
    let letters: &str = match (plain_format, s.len()) {
        (FORMAT_NCHW, 4) | (FORMAT_ND, 4) => "NCHW",
        (FORMAT_NHWC, 4) => "NHWC",
        (FORMAT_HWCN, 4) => "HWCN",
        (FORMAT_NCDHW, 5) => "NCDHW",
        (FORMAT_NDHWC, 5) => "NDHWC",
        (FORMAT_DHWCN, 5) => "DHWCN",
        (FORMAT_ND, 2) => "CN",
        _ => panic!("no reference for format {plain_format} rank {}", s.len()),
    };
    let dim = |ch: char| letters.find(ch).map(|k| s[k]).unwrap_or(1);
    let (nn, cc, dd, hh, ww) = (dim('N'), dim('C'), dim('D'), dim('H'), dim('W'));
    let at = |co: &[usize], ch: char| letters.find(ch).map(|k| co[k]).unwrap_or(0);
    match p {
        3 | 12 | 32 => {
            let c1 = ceil(cc, c0);
            let pshape: Vec<i64> = if p == 32 {
                vec![nn, dd, c1, hh, ww, c0]
            } else {
                vec![nn, c1, hh, ww, c0]
            }
            .into_iter()
            .map(|x| x as i64)
            .collect();
            let mut map = vec![None; prod(&pshape)];
            for i in 0..total {
                let co = coords(i);
                let (n, c, d, h, w) = (
                    at(&co, 'N'),
                    at(&co, 'C'),
                    at(&co, 'D'),
                    at(&co, 'H'),
                    at(&co, 'W'),
                );
                let dst = ((((n * dd + d) * c1 + c / c0) * hh + h) * ww + w) * c0 + c % c0;
                assert!(map[dst].is_none());
                map[dst] = Some(i);
            }
            (pshape, map)
        }
        4 | 33 => {
            // GE's TransFormatHwcnToFzWithGroups loop, element by element.
            let (cin, cout_g) = (cc, nn / groups);
            let e = if groups == 1 {
                1
            } else {
                lcm(lcm(cin, c0) / cin, lcm(cout_g, 16) / cout_g).min(groups)
            };
            let c1 = ceil(e * cin, c0);
            let g_dim = ceil(groups, e);
            let cout_opt = ceil(e * cout_g, 16) * 16;
            let pshape = vec![
                (g_dim * dd * c1 * hh * ww) as i64,
                (cout_opt / 16) as i64,
                16,
                c0 as i64,
            ];
            let mut map = vec![None; prod(&pshape)];
            for i in 0..total {
                let co = coords(i);
                let (n, c, d, h, w) = (
                    at(&co, 'N'),
                    at(&co, 'C'),
                    at(&co, 'D'),
                    at(&co, 'H'),
                    at(&co, 'W'),
                );
                let (g, nl) = (n / cout_g, n % cout_g);
                let ev = g % e;
                let dci = ev * cin + c;
                let dco = ev * cout_g + nl;
                let dst = (g / e) * dd * c1 * hh * ww * cout_opt * c0
                    + d * c1 * hh * ww * cout_opt * c0
                    + (dci / c0) * hh * ww * cout_opt * c0
                    + (h * ww + w) * cout_opt * c0
                    + dco * c0
                    + dci % c0;
                assert!(map[dst].is_none());
                map[dst] = Some(i);
            }
            (pshape, map)
        }
        _ => panic!("no reference for private format {private}"),
    }
}

/// Forward against the reference, padding zero, every source element exactly once, then the
/// inverse restores the source.
#[allow(clippy::too_many_arguments)]
fn round_trip(
    plain_format: i32,
    plain_shape: &[i64],
    private: i32,
    dtype: i32,
    groups: i64,
    rule: C0Rule,
    expect_c0: usize,
) {
    let es = dtype_size(dtype).unwrap();
    let n = prod(plain_shape);
    let src = pattern(n, es);
    let label = format!(
        "{} {:?} -> {} {} groups {groups} {rule:?}",
        fmt_format(plain_format),
        plain_shape,
        fmt_format(private),
        dtype_name(dtype)
    );
    let p = plan(&Request {
        src_format: plain_format,
        src_shape: plain_shape,
        dst_format: private,
        dst_shape: None,
        dtype,
        groups,
        rule,
    })
    .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(p.c0(), expect_c0, "{label}: C0");
    let mut dst = vec![0xEEu8; p.dst_bytes()];
    p.run(&src, &mut dst).unwrap();
    let eff_groups = if sub_format(private) > 1 {
        sub_format(private)
    } else {
        groups.max(1)
    };
    let (rshape, map) = reference(
        plain_format,
        plain_shape,
        private,
        expect_c0,
        eff_groups as usize,
    );
    assert_eq!(p.dst_shape(), rshape.as_slice(), "{label}: storage shape");
    assert_eq!(
        storage_shape(plain_format, plain_shape, private, dtype, groups, rule).unwrap(),
        rshape,
        "{label}: storage_shape()"
    );
    assert_eq!(dst.len(), map.len() * es, "{label}: dst bytes");
    // Counting: the non-padding positions hold exactly the source elements, once each.
    let mut seen = vec![false; n];
    let mut data_positions = 0;
    for (k, m) in map.iter().enumerate() {
        let got = &dst[k * es..(k + 1) * es];
        match m {
            Some(i) => {
                assert!(!seen[*i], "{label}: source element {i} twice");
                seen[*i] = true;
                data_positions += 1;
                assert_eq!(
                    got,
                    &src[i * es..(i + 1) * es],
                    "{label}: private element {k}"
                );
            }
            None => assert!(
                got.iter().all(|&b| b == 0),
                "{label}: padding element {k} not zero"
            ),
        }
    }
    assert_eq!(data_positions, n, "{label}: data positions");
    // Inverse.
    let (back, bshape) = conv(
        private,
        &rshape,
        plain_format,
        Some(plain_shape),
        dtype,
        groups,
        rule,
        &dst,
    )
    .unwrap_or_else(|e| panic!("{label} inverse: {e}"));
    assert_eq!(bshape, plain_shape, "{label}: inverse shape");
    assert!(back == src, "{label}: inverse is not the identity");
}

const DTYPES: [(i32, usize, usize); 4] = [
    // dtype, C0 under Ge, C0 under Aclnn (32-byte rule)
    (DT_FLOAT16, 16, 16),
    (DT_FLOAT, 16, 8),
    (DT_INT8, 32, 32),
    (DT_BF16, 16, 16),
];

// ---------------------------------------------------------------------------------------------
// Round trips (N = 17, C = 19, H = 3, W = 5: no dim a multiple of C0 or 16)

/// How a case picks C0: the dtype rule (`Ge` / `Aclnn` column of [`DTYPES`]) or a fixed value.
#[derive(Clone, Copy)]
enum C0Of {
    Ge,
    Aclnn,
    /// The Aclnn rule on a format it does not change (the Ge value).
    AclnnAsGe,
    Fixed(usize, C0Rule),
}

/// (plain format, plain shape, private format, groups, C0) for every dtype of [`DTYPES`].
type Case = (i32, &'static [i64], i32, i64, C0Of);

fn run_cases(cases: &[Case]) {
    for (dt, c0_ge, c0_aclnn) in DTYPES {
        for &(pf, shape, private, groups, c0) in cases {
            let (rule, c0) = match c0 {
                C0Of::Ge => (C0Rule::Ge, c0_ge),
                C0Of::Aclnn => (C0Rule::Aclnn, c0_aclnn),
                C0Of::AclnnAsGe => (C0Rule::Aclnn, c0_ge),
                C0Of::Fixed(c, rule) => (rule, c),
            };
            round_trip(pf, shape, private, dt, groups, rule, c0);
        }
    }
}

const NCHW: i32 = FORMAT_NCHW;
const NHWC: i32 = FORMAT_NHWC;
const HWCN: i32 = FORMAT_HWCN;
const NCDHW: i32 = FORMAT_NCDHW;
const NDHWC: i32 = FORMAT_NDHWC;
const DHWCN: i32 = FORMAT_DHWCN;
const ND: i32 = FORMAT_ND;
const FZ: i32 = FORMAT_FRACTAL_Z;
const FZ3D: i32 = FORMAT_FRACTAL_Z_3D;
const NZ: i32 = FORMAT_FRACTAL_NZ;
const C04: C0Of = C0Of::Fixed(4, C0Rule::Ge);

#[test]
fn formats_round_trip_nc1hwc0() {
    run_cases(&[
        (NCHW, &[17, 19, 3, 5], FORMAT_NC1HWC0, 1, C0Of::Ge),
        (NHWC, &[17, 3, 5, 19], FORMAT_NC1HWC0, 1, C0Of::Ge),
        // Partial C0 blocks of 11 (27 for int8) channels: 22, 27 and 44-byte runs.
        (NHWC, &[3, 2, 5, 27], FORMAT_NC1HWC0, 1, C0Of::Ge),
        (NCHW, &[3, 27, 2, 5], FORMAT_NC1HWC0, 1, C0Of::Ge),
        // The Aclnn rule: C0 = 32 bytes / element (fp32 -> 8).
        (NCHW, &[17, 19, 3, 5], FORMAT_NC1HWC0, 1, C0Of::Aclnn),
        (NHWC, &[3, 2, 5, 27], FORMAT_NC1HWC0, 1, C0Of::Aclnn),
        (NCHW, &[2, 3, 3, 5], FORMAT_NC1HWC0_C04, 1, C04),
        (NCHW, &[17, 19, 3, 5], FORMAT_NC1HWC0_C04, 1, C04),
        (NHWC, &[17, 3, 5, 19], FORMAT_NC1HWC0_C04, 1, C04),
    ]);
}

#[test]
fn formats_round_trip_ndc1hwc0() {
    run_cases(&[
        (NCDHW, &[3, 19, 2, 3, 5], FORMAT_NDC1HWC0, 1, C0Of::Ge),
        (NDHWC, &[3, 2, 3, 5, 19], FORMAT_NDC1HWC0, 1, C0Of::Ge),
        (NCDHW, &[3, 19, 2, 3, 5], FORMAT_NDC1HWC0, 1, C0Of::Aclnn),
        (NDHWC, &[3, 2, 3, 5, 19], FORMAT_NDC1HWC0, 1, C0Of::Aclnn),
    ]);
}

#[test]
fn formats_round_trip_fractal_z() {
    run_cases(&[
        (NCHW, &[17, 19, 3, 5], FZ, 1, C0Of::Ge),
        (HWCN, &[3, 5, 19, 17], FZ, 1, C0Of::Ge),
        (NHWC, &[17, 3, 5, 19], FZ, 1, C0Of::Ge),
        (NCHW, &[17, 19, 3, 5], FZ, 1, C0Of::Aclnn),
        (HWCN, &[3, 5, 19, 17], FZ, 1, C0Of::Aclnn),
        (ND, &[19, 17], FZ, 1, C0Of::Ge),
        (ND, &[17, 19, 3, 5], FZ, 1, C0Of::Ge),
    ]);
}

#[test]
fn formats_round_trip_fractal_z_c04() {
    run_cases(&[
        (NCHW, &[17, 1, 3, 5], FORMAT_FRACTAL_Z_C04, 1, C0Of::Ge),
        (NCHW, &[17, 2, 3, 5], FORMAT_FRACTAL_Z_C04, 1, C0Of::Ge),
        (NCHW, &[17, 3, 3, 5], FORMAT_FRACTAL_Z_C04, 1, C0Of::Ge),
        (NCHW, &[17, 4, 3, 5], FORMAT_FRACTAL_Z_C04, 1, C0Of::Ge),
        (NCHW, &[33, 3, 7, 7], FORMAT_FRACTAL_Z_C04, 1, C0Of::Ge),
        // The Aclnn 32-byte rule does not reach FRACTAL_Z_C04.
        (
            NCHW,
            &[17, 3, 3, 5],
            FORMAT_FRACTAL_Z_C04,
            1,
            C0Of::AclnnAsGe,
        ),
    ]);
}

#[test]
fn formats_round_trip_fractal_z_groups() {
    run_cases(&[
        // Cout = 34 in 2 groups (17 each), Cin = 19 per group.
        (NCHW, &[34, 19, 3, 5], FZ, 2, C0Of::Ge),
        (HWCN, &[3, 5, 19, 34], FZ, 2, C0Of::Ge),
        (NHWC, &[34, 3, 5, 19], FZ, 2, C0Of::Ge),
        // Several groups packed in one block (e > 1) and g_dim > 1: Cin 3, Cout_g 5, 7 groups.
        (NCHW, &[35, 3, 3, 5], FZ, 7, C0Of::Ge),
        (HWCN, &[3, 5, 3, 35], FZ, 7, C0Of::Ge),
        (NHWC, &[35, 3, 5, 3], FZ, 7, C0Of::Ge),
        // Cin = 32 and Cout_g = 16: e = 1, one group per block.
        (NCHW, &[48, 32, 1, 3], FZ, 3, C0Of::Ge),
        // Groups from the sub-format bits of the format value.
        (NCHW, &[35, 3, 3, 5], FZ | (7 << 8), 1, C0Of::Ge),
    ]);
}

#[test]
fn formats_round_trip_fractal_z_3d() {
    run_cases(&[
        (NCDHW, &[17, 19, 2, 3, 5], FZ3D, 1, C0Of::Ge),
        (DHWCN, &[2, 3, 5, 19, 17], FZ3D, 1, C0Of::Ge),
        (NDHWC, &[17, 2, 3, 5, 19], FZ3D, 1, C0Of::Ge),
        (NCDHW, &[17, 19, 2, 3, 5], FZ3D, 1, C0Of::Aclnn),
        (NCDHW, &[34, 5, 2, 3, 3], FZ3D, 2, C0Of::Ge),
    ]);
}

#[test]
fn formats_round_trip_fractal_nz() {
    let mut cases: Vec<Case> = vec![
        (ND, &[19, 37], NZ, 1, C0Of::Ge),
        (ND, &[19, 37], NZ, 1, C0Of::Aclnn),
        (ND, &[2, 3, 17, 19], NZ, 1, C0Of::Ge),
        (NCHW, &[2, 3, 17, 19], NZ, 1, C0Of::Ge),
        (FORMAT_NCL, &[2, 17, 19], NZ, 1, C0Of::Aclnn),
        (ND, &[37], NZ, 1, C0Of::Ge),
        (ND, &[1, 1], NZ, 1, C0Of::Ge),
        // Packed C0 bits (c = 4 → C0 = 8) win over the dtype rule.
        (ND, &[19, 37], NZ | (4 << 24), 1, C0Of::Fixed(8, C0Rule::Ge)),
    ];
    for (f, w0) in [
        (FORMAT_FRACTAL_NZ_C0_2, 2),
        (FORMAT_FRACTAL_NZ_C0_4, 4),
        (FORMAT_FRACTAL_NZ_C0_8, 8),
        (FORMAT_FRACTAL_NZ_C0_16, 16),
        (FORMAT_FRACTAL_NZ_C0_32, 32),
    ] {
        cases.push((ND, &[19, 37], f, 1, C0Of::Fixed(w0, C0Rule::Ge)));
        cases.push((ND, &[3, 17, 5], f, 1, C0Of::Fixed(w0, C0Rule::Aclnn)));
    }
    run_cases(&cases);
}

#[test]
fn formats_round_trip_other_dtypes() {
    for (dt, c0) in [
        (DT_UINT8, 32),
        (DT_INT16, 16),
        (DT_UINT16, 16),
        (DT_INT32, 16),
        (DT_UINT32, 16),
        (DT_INT64, 16),
        (DT_UINT64, 16),
        (DT_DOUBLE, 16),
        (DT_BOOL, 16),
        (DT_HIFLOAT8, 16),
        (DT_FLOAT8_E5M2, 16),
        (DT_FLOAT8_E4M3FN, 16),
        (DT_FLOAT8_E8M0, 16),
        (DT_COMPLEX32, 16),
        (DT_COMPLEX64, 16),
        (DT_COMPLEX128, 16),
    ] {
        let ge = C0Rule::Ge;
        round_trip(NCHW, &[3, 19, 3, 5], FORMAT_NC1HWC0, dt, 1, ge, c0);
        round_trip(NHWC, &[3, 3, 5, 19], FORMAT_NC1HWC0, dt, 1, ge, c0);
        round_trip(NCDHW, &[3, 19, 2, 1, 5], FORMAT_NDC1HWC0, dt, 1, ge, c0);
        round_trip(NCHW, &[18, 19, 1, 3], FZ, dt, 2, ge, c0);
        round_trip(HWCN, &[1, 3, 19, 17], FZ, dt, 1, ge, c0);
        round_trip(NCDHW, &[17, 19, 2, 1, 3], FZ3D, dt, 1, ge, c0);
        round_trip(ND, &[19, 37], NZ, dt, 1, ge, c0);
    }
}

/// Shapes big enough to run on several threads and through whole transpose tiles.
#[test]
fn formats_round_trip_large() {
    let (ge, f16) = (C0Rule::Ge, DT_FLOAT16);
    round_trip(NCHW, &[2, 40, 64, 67], FORMAT_NC1HWC0, f16, 1, ge, 16);
    round_trip(NCHW, &[1, 35, 129, 129], FORMAT_NC1HWC0, DT_INT8, 1, ge, 32);
    round_trip(
        NCHW,
        &[1, 33, 100, 130],
        FORMAT_NC1HWC0,
        DT_FLOAT,
        1,
        ge,
        16,
    );
    round_trip(NHWC, &[2, 64, 67, 40], FORMAT_NC1HWC0, f16, 1, ge, 16);
    round_trip(ND, &[3, 301, 700], NZ, f16, 1, ge, 16);
    round_trip(ND, &[1001, 517], NZ, DT_INT8, 1, ge, 32);
    round_trip(NCHW, &[130, 70, 3, 3], FZ, f16, 1, ge, 16);
    round_trip(HWCN, &[3, 3, 70, 130], FZ, DT_FLOAT, 1, ge, 16);
}

/// Destinations of 16 MiB and more are written with non-temporal stores.
#[test]
fn formats_round_trip_streaming() {
    let (ge, f16) = (C0Rule::Ge, DT_FLOAT16);
    round_trip(NCHW, &[1, 19, 600, 800], FORMAT_NC1HWC0, f16, 1, ge, 16);
    round_trip(
        NCHW,
        &[1, 17, 512, 520],
        FORMAT_NC1HWC0,
        DT_FLOAT,
        1,
        ge,
        16,
    );
    round_trip(NCHW, &[1, 64, 600, 500], FORMAT_NC1HWC0, DT_INT8, 1, ge, 32);
    round_trip(NHWC, &[1, 600, 800, 19], FORMAT_NC1HWC0, f16, 1, ge, 16);
    round_trip(ND, &[4100, 2100], NZ, f16, 1, ge, 16);
    round_trip(ND, &[2, 2049, 2051], NZ, DT_FLOAT, 1, C0Rule::Aclnn, 8);
}

// ---------------------------------------------------------------------------------------------
// Fixed expected values, written out by hand

fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Rows of `width` elements, the first ones given, the rest zero.
fn rows16(width: usize, rows: &[&[u16]]) -> Vec<u16> {
    let mut v = Vec::new();
    for r in rows {
        let mut row = r.to_vec();
        row.resize(width, 0);
        v.extend(row);
    }
    v
}

fn fwd(
    src_format: i32,
    shape: &[i64],
    dst: i32,
    dtype: i32,
    groups: i64,
    src: &[u8],
) -> (Vec<u8>, Vec<i64>) {
    let (out, pshape) = conv(src_format, shape, dst, None, dtype, groups, C0Rule::Ge, src).unwrap();
    // The inverse of the (literally checked) private data gives back the literal source.
    let ge = C0Rule::Ge;
    let (back, _) = conv(
        dst,
        &pshape,
        src_format,
        Some(shape),
        dtype,
        groups,
        ge,
        &out,
    )
    .unwrap();
    assert_eq!(
        back,
        src,
        "inverse of {} -> {}",
        fmt_format(src_format),
        fmt_format(dst)
    );
    (out, pshape)
}

#[test]
fn formats_fixed_nc1hwc0() {
    // NCHW [1,3,2,2] int8, src[c][h][w] = 1 + 4c + 2h + w; C0 = 32.
    let src: Vec<u8> = (1..=12).collect();
    let (dst, shape) = fwd(FORMAT_NCHW, &[1, 3, 2, 2], FORMAT_NC1HWC0, DT_INT8, 1, &src);
    assert_eq!(shape, [1, 1, 2, 2, 32]);
    let mut want = vec![0u8; 128];
    want[0..3].copy_from_slice(&[1, 5, 9]); // (h0, w0): channels 0, 1, 2
    want[32..35].copy_from_slice(&[2, 6, 10]); // (h0, w1)
    want[64..67].copy_from_slice(&[3, 7, 11]); // (h1, w0)
    want[96..99].copy_from_slice(&[4, 8, 12]); // (h1, w1)
    assert_eq!(dst, want);

    // The same tensor in fp16: C0 = 16.
    let src = u16s(&(1..=12).collect::<Vec<u16>>());
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[1, 3, 2, 2],
        FORMAT_NC1HWC0,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [1, 1, 2, 2, 16]);
    let want = rows16(16, &[&[1, 5, 9], &[2, 6, 10], &[3, 7, 11], &[4, 8, 12]]);
    assert_eq!(dst, u16s(&want));

    // NHWC [1,2,2,3] holding the same values (src[h][w][c]) gives the same NC1HWC0.
    let nhwc = u16s(&[1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12]);
    let (dst2, _) = fwd(
        FORMAT_NHWC,
        &[1, 2, 2, 3],
        FORMAT_NC1HWC0,
        DT_FLOAT16,
        1,
        &nhwc,
    );
    assert_eq!(dst2, u16s(&want));

    // N = 2, C = 17 fp16: C1 = 2, the second block holds channel 16 only.
    // src[n][c][0][0] = 100n + c.
    let src: Vec<u16> = (0..2)
        .flat_map(|n| (0..17).map(move |c| 100 * n + c))
        .collect();
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[2, 17, 1, 1],
        FORMAT_NC1HWC0,
        DT_FLOAT16,
        1,
        &u16s(&src),
    );
    assert_eq!(shape, [2, 2, 1, 1, 16]);
    let want = rows16(
        16,
        &[
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
            &[16],
            &[
                100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115,
            ],
            &[116],
        ],
    );
    assert_eq!(dst, u16s(&want));
}

#[test]
fn formats_fixed_nc1hwc0_c04() {
    // NCHW [1,3,1,2] fp16, src[c][w] = 1 + 2c + w; C0 = 4.
    let src = u16s(&[1, 2, 3, 4, 5, 6]);
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[1, 3, 1, 2],
        FORMAT_NC1HWC0_C04,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [1, 1, 1, 2, 4]);
    assert_eq!(dst, u16s(&[1, 3, 5, 0, 2, 4, 6, 0]));
    // fp32 too: C0 stays 4.
    let src: Vec<u8> = [1u32, 2, 3, 4, 5, 6]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let (dst, _) = fwd(
        FORMAT_NCHW,
        &[1, 3, 1, 2],
        FORMAT_NC1HWC0_C04,
        DT_FLOAT,
        1,
        &src,
    );
    let want: Vec<u8> = [1u32, 3, 5, 0, 2, 4, 6, 0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(dst, want);
}

#[test]
fn formats_fixed_ndc1hwc0() {
    // NCDHW [1,2,2,1,1] fp16, src[c][d] = 1 + 2c + d → [N, D, C1, H, W, C0] = [1,2,1,1,1,16].
    let src = u16s(&[1, 2, 3, 4]);
    let (dst, shape) = fwd(
        FORMAT_NCDHW,
        &[1, 2, 2, 1, 1],
        FORMAT_NDC1HWC0,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [1, 2, 1, 1, 1, 16]);
    assert_eq!(dst, u16s(&rows16(16, &[&[1, 3], &[2, 4]])));
    // Aclnn rule, fp32: C0 = 8.
    let src: Vec<u8> = [1u32, 2, 3, 4]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let (dst, shape) = conv(
        FORMAT_NCDHW,
        &[1, 2, 2, 1, 1],
        FORMAT_NDC1HWC0,
        None,
        DT_FLOAT,
        1,
        C0Rule::Aclnn,
        &src,
    )
    .unwrap();
    assert_eq!(shape, [1, 2, 1, 1, 1, 8]);
    let want: Vec<u8> = [1u32, 3, 0, 0, 0, 0, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(dst, want);
}

#[test]
fn formats_fixed_fractal_z() {
    // NCHW [2,3,1,1] fp16 (N = Cout = 2, C = Cin = 3), w[n][c] = 1 + 3n + c.
    // [C1·H·W, N1, 16, C0] = [1, 1, 16, 16]; fractal row n0 holds channel c0 of output n0.
    let src = u16s(&[1, 2, 3, 4, 5, 6]);
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[2, 3, 1, 1],
        FORMAT_FRACTAL_Z,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [1, 1, 16, 16]);
    let want = u16s(&rows16(
        16,
        &[
            &[1, 2, 3],
            &[4, 5, 6],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
            &[],
        ],
    ));
    assert_eq!(dst, want);
    // The same weight as HWCN [1,1,3,2] (src[c][n]) and NHWC [2,1,1,3].
    let hwcn = u16s(&[1, 4, 2, 5, 3, 6]);
    assert_eq!(
        fwd(
            FORMAT_HWCN,
            &[1, 1, 3, 2],
            FORMAT_FRACTAL_Z,
            DT_FLOAT16,
            1,
            &hwcn
        )
        .0,
        want
    );
    assert_eq!(
        fwd(
            FORMAT_NHWC,
            &[2, 1, 1, 3],
            FORMAT_FRACTAL_Z,
            DT_FLOAT16,
            1,
            &src
        )
        .0,
        want
    );

    // NCHW [1,2,1,2] fp16: rows are (c1, h, w): w = 0 then w = 1. w[c][x] = 1 + 2c + x.
    let src = u16s(&[1, 2, 3, 4]);
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[1, 2, 1, 2],
        FORMAT_FRACTAL_Z,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [2, 1, 16, 16]);
    let mut want = vec![0u16; 512];
    want[0..2].copy_from_slice(&[1, 3]); // row (w=0), n0 = 0: channels 0, 1
    want[256..258].copy_from_slice(&[2, 4]); // row (w=1)
    assert_eq!(dst, u16s(&want));

    // 2-D ND [K=3, N=2]: [ceil(K/C0), ceil(N/16), 16, C0]; row n0 holds K values of column n0.
    let src = u16s(&[1, 2, 3, 4, 5, 6]); // src[k][n] = 1 + 2k + n
    let (dst, shape) = fwd(FORMAT_ND, &[3, 2], FORMAT_FRACTAL_Z, DT_FLOAT16, 1, &src);
    assert_eq!(shape, [1, 1, 16, 16]);
    let mut want = vec![0u16; 256];
    want[0..3].copy_from_slice(&[1, 3, 5]);
    want[16..19].copy_from_slice(&[2, 4, 6]);
    assert_eq!(dst, u16s(&want));
}

#[test]
fn formats_fixed_fractal_z_c04() {
    // NCHW [2,3,1,2] fp16, w[n][c][p] = 1 + 6n + 2c + p. K = H·W·4 = 8 with k = p·4 + c, C padded
    // to 4: row n0 of the single fractal is [c0 c1 c2 0 | same at p = 1].
    let src = u16s(&(1..=12).collect::<Vec<u16>>());
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[2, 3, 1, 2],
        FORMAT_FRACTAL_Z_C04,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [1, 1, 16, 16]);
    let mut want = vec![0u16; 256];
    want[0..8].copy_from_slice(&[1, 3, 5, 0, 2, 4, 6, 0]);
    want[16..24].copy_from_slice(&[7, 9, 11, 0, 8, 10, 12, 0]);
    assert_eq!(dst, u16s(&want));
    // C > 4 is refused.
    let m = err(req(
        FORMAT_NCHW,
        &[2, 5, 1, 1],
        FORMAT_FRACTAL_Z_C04,
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("FRACTAL_Z_C04") && m.contains("C = 5"), "{m}");
}

#[test]
fn formats_fixed_fractal_z_groups() {
    // NCHW [4,2,1,1] fp16, groups 2: Cout_g = 2, Cin = 2, w[co][ci] = 1 + 2co + ci.
    // e = min(lcm(8, 8), 2) = 2: both groups share one block, block-diagonal:
    // dst_co = e_val·2 + nl, dst_ci = e_val·2 + ci. Shape [1, 1, 16, 16].
    let src = u16s(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[4, 2, 1, 1],
        FORMAT_FRACTAL_Z,
        DT_FLOAT16,
        2,
        &src,
    );
    assert_eq!(shape, [1, 1, 16, 16]);
    let mut want = vec![0u16; 256];
    want[0..2].copy_from_slice(&[1, 2]); // co 0
    want[16..18].copy_from_slice(&[3, 4]); // co 1
    want[32 + 2..32 + 4].copy_from_slice(&[5, 6]); // co 2 → row 2, channels 2, 3
    want[48 + 2..48 + 4].copy_from_slice(&[7, 8]); // co 3
    assert_eq!(dst, u16s(&want));

    // Cin = 16, Cout_g = 16, groups 2, fp16: e = 1, g_dim = 2 → [2, 1, 16, 16], group g in
    // block g. w[co][ci] = co·16 + ci + 1 (ci < 16).
    let src: Vec<u16> = (0..32 * 16).map(|i| i as u16 + 1).collect();
    let (dst, shape) = fwd(
        FORMAT_NCHW,
        &[32, 16, 1, 1],
        FORMAT_FRACTAL_Z,
        DT_FLOAT16,
        2,
        &u16s(&src),
    );
    assert_eq!(shape, [2, 1, 16, 16]);
    // Block 0 row 0 = output 0; block 1 row 0 = output 16; block 1 row 15 = output 31.
    let at = |k: usize| u16::from_le_bytes([dst[2 * k], dst[2 * k + 1]]);
    assert_eq!((at(0), at(1), at(15)), (1, 2, 16));
    assert_eq!((at(256), at(257)), (16 * 16 + 1, 16 * 16 + 2));
    assert_eq!(at(256 + 15 * 16 + 15), 32 * 16);
}

#[test]
fn formats_fixed_fractal_z_3d() {
    // NCDHW [2,2,2,1,1] fp16, w[n][c][d] = 1 + 4n + 2c + d; rows (d, c1): [2, 1, 16, 16].
    let src = u16s(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let (dst, shape) = fwd(
        FORMAT_NCDHW,
        &[2, 2, 2, 1, 1],
        FORMAT_FRACTAL_Z_3D,
        DT_FLOAT16,
        1,
        &src,
    );
    assert_eq!(shape, [2, 1, 16, 16]);
    let mut want = vec![0u16; 512];
    want[0..2].copy_from_slice(&[1, 3]); // d 0, n 0: c 0, 1
    want[16..18].copy_from_slice(&[5, 7]); // d 0, n 1
    want[256..258].copy_from_slice(&[2, 4]); // d 1, n 0
    want[272..274].copy_from_slice(&[6, 8]); // d 1, n 1
    assert_eq!(dst, u16s(&want));
}

#[test]
fn formats_fixed_fractal_nz() {
    // ND [3,5] fp16, src[h][w] = 1 + 5h + w, C0 16: [W1, H1, 16, W0] = [1, 1, 16, 16].
    let src: Vec<u16> = (1..=15).collect();
    let (dst, shape) = fwd(
        FORMAT_ND,
        &[3, 5],
        FORMAT_FRACTAL_NZ,
        DT_FLOAT16,
        1,
        &u16s(&src),
    );
    assert_eq!(shape, [1, 1, 16, 16]);
    let mut rows: Vec<&[u16]> = vec![&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10], &[11, 12, 13, 14, 15]];
    rows.resize(16, &[]);
    assert_eq!(dst, u16s(&rows16(16, &rows)));

    // The same with W0 = 4 (FRACTAL_NZ_C0_4): two column strips, each over all 16 rows.
    let (dst, shape) = fwd(
        FORMAT_ND,
        &[3, 5],
        FORMAT_FRACTAL_NZ_C0_4,
        DT_FLOAT16,
        1,
        &u16s(&src),
    );
    assert_eq!(shape, [2, 1, 16, 4]);
    let mut strip0: Vec<&[u16]> = vec![&[1, 2, 3, 4], &[6, 7, 8, 9], &[11, 12, 13, 14]];
    strip0.resize(16, &[]);
    let mut strip1: Vec<&[u16]> = vec![&[5], &[10], &[15]];
    strip1.resize(16, &[]);
    let mut want = rows16(4, &strip0);
    want.extend(rows16(4, &strip1));
    assert_eq!(dst, u16s(&want));

    // ND [20, 18] int8 with FRACTAL_NZ_C0_16: W1 = 2, H1 = 2; element (h=17, w=17) sits in strip
    // 1, row 17, column 1: index 1·(2·16·16) + 17·16 + 1.
    let src: Vec<u8> = (0..360).map(|i| (i % 251) as u8 + 1).collect();
    let (dst, shape) = fwd(
        FORMAT_ND,
        &[20, 18],
        FORMAT_FRACTAL_NZ_C0_16,
        DT_INT8,
        1,
        &src,
    );
    assert_eq!(shape, [2, 2, 16, 16]);
    assert_eq!(dst[512 + 17 * 16 + 1], src[17 * 18 + 17]);
    assert_eq!(dst[17 * 16 + 15], src[17 * 18 + 15]);
    assert_eq!(dst[512 + 17 * 16 + 2], 0);

    // 1-D [3] is the column [3, 1]: [1, 1, 16, 16] with the values down column 0.
    let (dst, shape) = fwd(
        FORMAT_ND,
        &[3],
        FORMAT_FRACTAL_NZ,
        DT_FLOAT16,
        1,
        &u16s(&[7, 8, 9]),
    );
    assert_eq!(shape, [1, 1, 16, 16]);
    let mut rows: Vec<&[u16]> = vec![&[7], &[8], &[9]];
    rows.resize(16, &[]);
    assert_eq!(dst, u16s(&rows16(16, &rows)));
}

// ---------------------------------------------------------------------------------------------
// Names, C0, storage shapes

#[test]
fn formats_names_and_c0() {
    assert_eq!(format_name(FORMAT_NC1HWC0), Some("NC1HWC0"));
    assert_eq!(format_name(FORMAT_FRACTAL_Z_3D), Some("FRACTAL_Z_3D"));
    assert_eq!(
        format_name(FORMAT_FRACTAL_NZ_C0_32),
        Some("FRACTAL_NZ_C0_32")
    );
    assert_eq!(format_name(FORMAT_FRACTAL_Z | (2 << 8)), Some("FRACTAL_Z"));
    assert_eq!(format_name(-1), None);
    assert_eq!(format_from_name("FRACTAL_NZ"), Some(29));
    assert_eq!(format_from_name("NC1HWC0_C04"), Some(12));
    assert_eq!(format_from_name("FRACTAL_Zn"), Some(4));
    assert_eq!(format_from_name("nd"), Some(2));
    assert_eq!(format_from_name("NOPE"), None);
    assert_eq!(dtype_size(DT_BF16), Some(2));
    assert_eq!(dtype_size(DT_INT4), None);
    assert_eq!(dtype_size(DT_FLOAT8_E4M3FN), Some(1));
    let ge = C0Rule::Ge;
    let an = C0Rule::Aclnn;
    assert_eq!(c0(DT_FLOAT16, FORMAT_NC1HWC0, ge).unwrap(), 16);
    assert_eq!(c0(DT_FLOAT, FORMAT_NC1HWC0, ge).unwrap(), 16);
    assert_eq!(c0(DT_INT8, FORMAT_FRACTAL_Z, ge).unwrap(), 32);
    assert_eq!(c0(DT_FLOAT, FORMAT_FRACTAL_NZ, an).unwrap(), 8);
    assert_eq!(c0(DT_FLOAT, FORMAT_NC1HWC0, an).unwrap(), 8);
    assert_eq!(c0(DT_FLOAT, FORMAT_FRACTAL_Z, an).unwrap(), 8);
    assert_eq!(c0(DT_FLOAT, FORMAT_NC1HWC0_C04, an).unwrap(), 4);
    assert_eq!(c0(DT_INT64, FORMAT_FRACTAL_NZ, an).unwrap(), 4);
    assert_eq!(c0(DT_FLOAT, FORMAT_FRACTAL_NZ_C0_16, an).unwrap(), 16);
    assert_eq!(c0(DT_FLOAT16, FORMAT_NC1HWC0_C04, ge).unwrap(), 4);
    assert_eq!(c0(DT_FLOAT16, FORMAT_FRACTAL_Z_C04, ge).unwrap(), 16);
    assert_eq!(c0(DT_INT8, FORMAT_FRACTAL_Z_C04, ge).unwrap(), 32);
    assert_eq!(c0(DT_FLOAT16, FORMAT_NC1HWC0 | (3 << 24), ge).unwrap(), 4);
    assert_eq!(c0(DT_FLOAT, FORMAT_FRACTAL_NZ | (5 << 24), an).unwrap(), 16);
    let e = c0(DT_INT4, FORMAT_NC1HWC0, ge).unwrap_err();
    assert!(
        e.message.contains("ACL_INT4") && e.message.contains("sub-byte"),
        "{e}"
    );
}

#[test]
fn formats_storage_shapes() {
    let s = |of, shape: &[i64], f, dt, g, rule| storage_shape(of, shape, f, dt, g, rule).unwrap();
    let ge = C0Rule::Ge;
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[2, 3, 5, 7],
            FORMAT_NC1HWC0,
            DT_FLOAT16,
            1,
            ge
        ),
        [2, 1, 5, 7, 16]
    );
    assert_eq!(
        s(FORMAT_NHWC, &[2, 5, 7, 33], FORMAT_NC1HWC0, DT_INT8, 1, ge),
        [2, 2, 5, 7, 32]
    );
    // GE transformer unit-test values.
    assert_eq!(
        s(FORMAT_ND, &[18, 34], FORMAT_FRACTAL_Z, DT_UINT8, 1, ge),
        [1, 3, 16, 32]
    );
    assert_eq!(
        s(FORMAT_ND, &[18, 34], FORMAT_FRACTAL_Z, DT_FLOAT, 1, ge),
        [2, 3, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_ND,
            &[48, 512, 5, 5],
            FORMAT_FRACTAL_Z,
            DT_FLOAT16,
            1,
            ge
        ),
        [800, 3, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_ND,
            &[48, 512, 5, 5],
            FORMAT_FRACTAL_Z,
            DT_INT8,
            1,
            ge
        ),
        [400, 3, 16, 32]
    );
    assert_eq!(
        s(FORMAT_ND, &[34], FORMAT_FRACTAL_NZ_C0_16, DT_FLOAT16, 1, ge),
        [1, 3, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_ND,
            &[34, 1],
            FORMAT_FRACTAL_NZ_C0_16,
            DT_FLOAT16,
            1,
            ge
        ),
        [1, 3, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_ND,
            &[18, 34],
            FORMAT_FRACTAL_NZ_C0_16,
            DT_FLOAT,
            1,
            ge
        ),
        [3, 2, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_ND,
            &[1, 18, 34],
            FORMAT_FRACTAL_NZ_C0_32,
            DT_INT8,
            1,
            ge
        ),
        [1, 2, 2, 16, 32]
    );
    assert_eq!(
        s(FORMAT_ND, &[34], FORMAT_FRACTAL_NZ_C0_32, DT_FLOAT16, 1, ge),
        [1, 3, 16, 32]
    );
    // Aclnn: fp32 ND → NZ uses C0 = 8.
    assert_eq!(
        s(
            FORMAT_ND,
            &[18, 34],
            FORMAT_FRACTAL_NZ,
            DT_FLOAT,
            1,
            C0Rule::Aclnn
        ),
        [5, 2, 16, 8]
    );
    // Groups (GE TransShapeToFzWithGroups): Cout 4, Cin 2, groups 2 → e 2, one block.
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[4, 2, 3, 3],
            FORMAT_FRACTAL_Z,
            DT_FLOAT16,
            2,
            ge
        ),
        [9, 1, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[32, 16, 3, 3],
            FORMAT_FRACTAL_Z,
            DT_FLOAT16,
            2,
            ge
        ),
        [18, 1, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[32, 16, 3, 3],
            FORMAT_FRACTAL_Z | (2 << 8),
            DT_FLOAT16,
            1,
            ge
        ),
        [18, 1, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_NCDHW,
            &[17, 19, 2, 3, 5],
            FORMAT_FRACTAL_Z_3D,
            DT_FLOAT16,
            1,
            ge
        ),
        [60, 2, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_NCDHW,
            &[3, 19, 2, 3, 5],
            FORMAT_NDC1HWC0,
            DT_FLOAT,
            1,
            ge
        ),
        [3, 2, 2, 3, 5, 16]
    );
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[1, 3, 5, 5],
            FORMAT_NC1HWC0_C04,
            DT_FLOAT16,
            1,
            ge
        ),
        [1, 1, 5, 5, 4]
    );
    // FRACTAL_Z_C04: [ceil(4·H·W/C0), ceil(N/16), 16, C0].
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[20, 3, 5, 5],
            FORMAT_FRACTAL_Z_C04,
            DT_FLOAT16,
            1,
            ge
        ),
        [7, 2, 16, 16]
    );
    assert_eq!(
        s(
            FORMAT_NCHW,
            &[20, 3, 5, 5],
            FORMAT_FRACTAL_Z_C04,
            DT_INT8,
            1,
            ge
        ),
        [4, 2, 16, 32]
    );
    // Same format, plain reorderings.
    assert_eq!(
        s(
            FORMAT_NC1HWC0,
            &[1, 2, 3, 4, 16],
            FORMAT_NC1HWC0,
            DT_FLOAT16,
            1,
            ge
        ),
        [1, 2, 3, 4, 16]
    );
    assert_eq!(
        s(FORMAT_NCHW, &[1, 2, 3, 4], FORMAT_NHWC, DT_FLOAT16, 1, ge),
        [1, 3, 4, 2]
    );
    assert_eq!(
        s(FORMAT_NCHW, &[1, 2, 3, 4], FORMAT_HWCN, DT_FLOAT16, 1, ge),
        [3, 4, 2, 1]
    );
    assert_eq!(
        s(FORMAT_NCHW, &[1, 2, 3, 4], FORMAT_ND, DT_FLOAT16, 1, ge),
        [1, 2, 3, 4]
    );
}

#[test]
fn formats_same_format_copy() {
    let src = pattern(60, 2);
    let (dst, shape) = conv(
        FORMAT_ND,
        &[3, 20],
        FORMAT_ND,
        None,
        DT_FLOAT16,
        1,
        C0Rule::Ge,
        &src,
    )
    .unwrap();
    assert_eq!((dst, shape), (src, vec![3, 20]));
}

// ---------------------------------------------------------------------------------------------
// Bad input

fn err(req: Request) -> String {
    match plan(&req) {
        Ok(_) => panic!("{req:?} was accepted"),
        Err(e) => e.message,
    }
}

fn req<'a>(sf: i32, ss: &'a [i64], df: i32, ds: Option<&'a [i64]>, dt: i32) -> Request<'a> {
    Request {
        src_format: sf,
        src_shape: ss,
        dst_format: df,
        dst_shape: ds,
        dtype: dt,
        groups: 1,
        rule: C0Rule::Ge,
    }
}

#[test]
fn formats_bad_input() {
    // Unsupported pairs name both formats.
    let m = err(req(
        FORMAT_NC1HWC0,
        &[1, 1, 2, 2, 16],
        FORMAT_FRACTAL_Z,
        None,
        DT_FLOAT16,
    ));
    assert!(
        m.contains("NC1HWC0") && m.contains("FRACTAL_Z") && m.contains("not supported"),
        "{m}"
    );
    let m = err(req(
        FORMAT_HWCN,
        &[1, 1, 2, 2],
        FORMAT_NC1HWC0,
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("HWCN") && m.contains("NC1HWC0"), "{m}");
    let m = err(req(
        FORMAT_NCHW,
        &[1, 2, 3, 4],
        FORMAT_NHWC,
        None,
        DT_FLOAT16,
    ));
    assert!(
        m.contains("NCHW") && m.contains("NHWC") && m.contains("not supported"),
        "{m}"
    );
    let m = err(req(FORMAT_NCHW, &[1, 2, 3, 4], 5, None, DT_FLOAT16));
    assert!(
        m.contains("NC1C0HWPAD") && m.contains("not supported"),
        "{m}"
    );
    let m = err(req(
        FORMAT_NCDHW,
        &[1, 2, 3, 4, 5],
        FORMAT_NC1HWC0,
        None,
        DT_FLOAT16,
    ));
    assert!(
        m.contains("NCDHW") && m.contains("pairs with NCHW, NHWC"),
        "{m}"
    );
    // Rank mismatch.
    let m = err(req(
        FORMAT_NCHW,
        &[2, 3, 4],
        FORMAT_NC1HWC0,
        None,
        DT_FLOAT16,
    ));
    assert!(
        m.contains("NCHW") && m.contains("[2, 3, 4]") && m.contains("needs 4"),
        "{m}"
    );
    let m = err(req(
        FORMAT_NCHW,
        &[2, 3, 4],
        FORMAT_FRACTAL_Z,
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("needs 4"), "{m}");
    let m = err(req(
        FORMAT_ND,
        &[2, 3, 4],
        FORMAT_FRACTAL_Z,
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("ND") && m.contains("FRACTAL_Z"), "{m}");
    let m = err(req(FORMAT_ND, &[], FORMAT_FRACTAL_NZ, None, DT_FLOAT16));
    assert!(m.contains("FRACTAL_NZ") && m.contains("rank"), "{m}");
    let m = err(req(
        FORMAT_NCHW,
        &[2, -1, 4, 4],
        FORMAT_NC1HWC0,
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("negative"), "{m}");
    let huge = 1i64 << 40;
    let m = err(req(
        FORMAT_NCHW,
        &[0, huge, huge, huge],
        FORMAT_FRACTAL_Z,
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("too large"), "{m}");
    let m = err(req(
        FORMAT_ND,
        &[3, 5],
        FORMAT_FRACTAL_NZ | (12 << 24),
        None,
        DT_FLOAT16,
    ));
    assert!(m.contains("packed C0 2048"), "{m}");
    // Inverse without the logical shape.
    let m = err(req(
        FORMAT_NC1HWC0,
        &[1, 1, 2, 2, 16],
        FORMAT_NCHW,
        None,
        DT_FLOAT16,
    ));
    assert!(
        m.contains("NC1HWC0") && m.contains("NCHW") && m.contains("destination"),
        "{m}"
    );
    // Inverse whose source shape is not the storage shape of the given logical shape.
    let m = err(req(
        FORMAT_NC1HWC0,
        &[1, 2, 2, 2, 16],
        FORMAT_NCHW,
        Some(&[1, 3, 2, 2]),
        DT_FLOAT16,
    ));
    assert!(
        m.contains("[1, 2, 2, 2, 16]") && m.contains("[1, 1, 2, 2, 16]") && m.contains("NC1HWC0"),
        "{m}"
    );
    let m = err(req(
        FORMAT_FRACTAL_NZ,
        &[1, 1, 16, 16],
        FORMAT_ND,
        Some(&[3, 17]),
        DT_FLOAT16,
    ));
    assert!(
        m.contains("FRACTAL_NZ") && m.contains("[2, 1, 16, 16]"),
        "{m}"
    );
    // Forward with a wrong destination shape.
    let m = err(req(
        FORMAT_NCHW,
        &[1, 3, 2, 2],
        FORMAT_NC1HWC0,
        Some(&[1, 1, 2, 2, 32]),
        DT_FLOAT16,
    ));
    assert!(
        m.contains("[1, 1, 2, 2, 32]") && m.contains("[1, 1, 2, 2, 16]"),
        "{m}"
    );
    // Sub-byte and unknown dtypes.
    let m = err(req(
        FORMAT_NCHW,
        &[1, 3, 2, 2],
        FORMAT_NC1HWC0,
        None,
        DT_INT4,
    ));
    assert!(m.contains("ACL_INT4") && m.contains("NC1HWC0"), "{m}");
    let m = err(req(FORMAT_ND, &[4, 4], FORMAT_FRACTAL_NZ, None, DT_STRING));
    assert!(m.contains("ACL_STRING"), "{m}");
    // Groups that do not divide N, groups on a format without groups, conflicting groups.
    let mut r = req(
        FORMAT_NCHW,
        &[5, 2, 1, 1],
        FORMAT_FRACTAL_Z,
        None,
        DT_FLOAT16,
    );
    r.groups = 2;
    let m = err(r);
    assert!(m.contains("groups = 2") && m.contains("N = 5"), "{m}");
    let mut r = req(FORMAT_NCHW, &[4, 2, 1, 1], FORMAT_NC1HWC0, None, DT_FLOAT16);
    r.groups = 2;
    assert!(err(r).contains("groups"));
    let mut r = req(
        FORMAT_NCHW,
        &[6, 2, 1, 1],
        FORMAT_FRACTAL_Z | (2 << 8),
        None,
        DT_FLOAT16,
    );
    r.groups = 3;
    assert!(err(r).contains("disagrees"));
    // Too-small buffers.
    let p = plan(&req(
        FORMAT_NCHW,
        &[1, 3, 2, 2],
        FORMAT_NC1HWC0,
        None,
        DT_FLOAT16,
    ))
    .unwrap();
    assert_eq!((p.src_bytes(), p.dst_bytes()), (24, 128));
    let mut dst = vec![0u8; 128];
    let m = p.run(&[0u8; 23], &mut dst).unwrap_err().message;
    assert!(
        m.contains("NCHW") && m.contains("NC1HWC0") && m.contains("23") && m.contains("24"),
        "{m}"
    );
    let mut small = vec![0u8; 127];
    let m = p.run(&[0u8; 24], &mut small).unwrap_err().message;
    assert!(
        m.contains("destination") && m.contains("127") && m.contains("128"),
        "{m}"
    );
}

#[test]
fn pairs_supported_whatever_the_shape() {
    let f = |n| format_from_name(n).unwrap();
    let (nchw, nc1hwc0, fz, nz, nd) = (
        f("NCHW"),
        f("NC1HWC0"),
        f("FRACTAL_Z"),
        f("FRACTAL_NZ"),
        f("ND"),
    );
    // Both directions of a plain ↔ private pair, for fp16 (dtype 1).
    assert!(pair_supported(nchw, nc1hwc0, 1, 1));
    assert!(pair_supported(nc1hwc0, nchw, 1, 1));
    assert!(pair_supported(nd, nz, 1, 1));
    assert!(pair_supported(nchw, fz, 1, 4), "FRACTAL_Z with groups");
    // No kernel between two private formats; no layout for STRING (13).
    assert!(!pair_supported(nc1hwc0, nz, 1, 1));
    assert!(!pair_supported(nchw, nc1hwc0, 13, 1));
}
