//! Shape rules: which pairs convert, the stored shape of each private format, and the checks of
//! a conversion request.

use super::fractal_nz::Nz;
use super::fractal_z::{Fz, FzC04, FzPlain};
use super::nc1hwc0::C1C0;
use super::*;

/// Plain (logical) formats: a shape in one of these is the tensor's own shape.
fn is_plain(p: i32) -> bool {
    matches!(
        p,
        FORMAT_NCHW
            | FORMAT_NHWC
            | FORMAT_ND
            | FORMAT_HWCN
            | FORMAT_CHWN
            | FORMAT_NDHWC
            | FORMAT_NCDHW
            | FORMAT_DHWCN
            | FORMAT_DHWNC
            | FORMAT_CN
            | FORMAT_NC
            | FORMAT_NCL
    )
}

fn is_nz(p: i32) -> bool {
    matches!(
        p,
        FORMAT_FRACTAL_NZ
            | FORMAT_FRACTAL_NZ_C0_16
            | FORMAT_FRACTAL_NZ_C0_32
            | FORMAT_FRACTAL_NZ_C0_2
            | FORMAT_FRACTAL_NZ_C0_4
            | FORMAT_FRACTAL_NZ_C0_8
    )
}

/// Private formats this module converts.
fn is_private(p: i32) -> bool {
    is_nz(p)
        || matches!(
            p,
            FORMAT_NC1HWC0
                | FORMAT_NC1HWC0_C04
                | FORMAT_FRACTAL_Z_C04
                | FORMAT_NDC1HWC0
                | FORMAT_FRACTAL_Z
                | FORMAT_FRACTAL_Z_3D
        )
}

/// The plain formats each private format converts from and to.
fn plain_partners(private: i32) -> &'static str {
    match private {
        FORMAT_NC1HWC0 | FORMAT_NC1HWC0_C04 => "NCHW, NHWC",
        FORMAT_NDC1HWC0 => "NCDHW, NDHWC",
        FORMAT_FRACTAL_Z => "NCHW, NHWC, HWCN, ND (2-D [K, N] or 4-D as NCHW)",
        FORMAT_FRACTAL_Z_3D => "NCDHW, NDHWC, DHWCN",
        FORMAT_FRACTAL_Z_C04 => "NCHW (C <= 4)",
        _ => "any plain format of rank >= 1 (ND, NCHW, NHWC, NC, NCL, ...)",
    }
}

const SUPPORTED: &str = "NCHW/NHWC <-> NC1HWC0 and NC1HWC0_C04, NCDHW/NDHWC <-> NDC1HWC0, \
     NCHW/NHWC/HWCN/ND <-> FRACTAL_Z (groups >= 1), NCHW (C <= 4) <-> FRACTAL_Z_C04, \
     NCDHW/NDHWC/DHWCN <-> FRACTAL_Z_3D, \
     ND (any plain format, rank >= 1) <-> FRACTAL_NZ and FRACTAL_NZ_C0_2/4/8/16/32, \
     and a copy between equal formats";

fn shape_str(s: &[i64]) -> String {
    let v: Vec<String> = s.iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(", "))
}

/// Dims as usize, refusing negative (unknown) dims.
fn dims(shape: &[i64], format: i32, what: &str) -> Result<Vec<usize>, FormatError> {
    let mut out = Vec::with_capacity(shape.len());
    for &d in shape {
        if d < 0 {
            fail!(
                "{what}: {} shape {} has a negative dimension; a conversion needs a known shape",
                fmt_format(format),
                shape_str(shape)
            );
        }
        out.push(d as usize);
    }
    // Bound the index space so that padded private shapes cannot overflow (zero dims count as
    // one: the other dims still shape the padded layout).
    let mut span: u128 = 1;
    for &d in &out {
        span = span.saturating_mul(d.max(1) as u128);
    }
    if span > MAX_SPAN {
        fail!(
            "{what}: {} shape {} is too large (more than 2^44 elements)",
            fmt_format(format),
            shape_str(shape)
        );
    }
    Ok(out)
}

/// Largest product of (non-zero) dims a conversion accepts.
const MAX_SPAN: u128 = 1 << 44;

fn need_rank(shape: &[i64], format: i32, rank: usize, what: &str) -> Result<(), FormatError> {
    if shape.len() != rank {
        fail!(
            "{what}: {} shape {} has {} dims, but {} needs {rank}",
            fmt_format(format),
            shape_str(shape),
            shape.len(),
            fmt_format(format)
        );
    }
    Ok(())
}

/// The group count of a FRACTAL_Z conversion: `groups` or the sub-format of the format value.
fn effective_groups(private: i32, groups: i64, what: &str) -> Result<usize, FormatError> {
    if groups < 0 {
        fail!("{what}: groups must be >= 1, got {groups}");
    }
    let g = groups.max(1);
    let sub = sub_format(private);
    if sub > 1 {
        if g > 1 && g != sub {
            fail!(
                "{what}: groups {g} disagrees with the group count {sub} packed in the format \
                 value {private:#x}"
            );
        }
        return Ok(sub as usize);
    }
    Ok(g as usize)
}

/// Build the geometry of `plain_format`/`plain_shape` stored as `private` (a private format).
pub(crate) fn geometry(
    plain_format: i32,
    plain_shape: &[i64],
    private: i32,
    dtype: i32,
    groups: i64,
    rule: C0Rule,
    what: &str,
) -> Result<(Geometry, usize), FormatError> {
    let pp = primary_format(plain_format);
    let vp = primary_format(private);
    let c0 = c0(dtype, private, rule)?;
    let d = dims(plain_shape, plain_format, what)?;
    let unsupported = || -> Result<(Geometry, usize), FormatError> {
        fail!(
            "{what}: {} cannot be converted to or from {} (it pairs with {}); supported: {SUPPORTED}",
            fmt_format(plain_format),
            fmt_format(private),
            plain_partners(vp)
        )
    };
    if !is_plain(pp) {
        return unsupported();
    }
    let groups_ok = |g: usize| -> Result<(), FormatError> {
        if g > 1 && vp != FORMAT_FRACTAL_Z && vp != FORMAT_FRACTAL_Z_3D {
            fail!(
                "{what}: groups = {g} applies to FRACTAL_Z and FRACTAL_Z_3D only, not to {}",
                fmt_format(private)
            );
        }
        Ok(())
    };
    let geo = match vp {
        FORMAT_NC1HWC0 | FORMAT_NC1HWC0_C04 => {
            groups_ok(effective_groups(private, groups, what)?)?;
            if !matches!(pp, FORMAT_NCHW | FORMAT_NHWC) {
                return unsupported();
            }
            need_rank(plain_shape, plain_format, 4, what)?;
            let (n, c, h, w, last) = match pp {
                FORMAT_NCHW => (d[0], d[1], d[2], d[3], false),
                FORMAT_NHWC => (d[0], d[3], d[1], d[2], true),
                _ => return unsupported(),
            };
            Geometry::C1C0(C1C0::new(n, c, 1, h, w, c0, last, false))
        }
        FORMAT_NDC1HWC0 => {
            groups_ok(effective_groups(private, groups, what)?)?;
            if !matches!(pp, FORMAT_NCDHW | FORMAT_NDHWC) {
                return unsupported();
            }
            need_rank(plain_shape, plain_format, 5, what)?;
            let (n, c, dd, h, w, last) = match pp {
                FORMAT_NCDHW => (d[0], d[1], d[2], d[3], d[4], false),
                FORMAT_NDHWC => (d[0], d[4], d[1], d[2], d[3], true),
                _ => return unsupported(),
            };
            Geometry::C1C0(C1C0::new(n, c, dd, h, w, c0, last, true))
        }
        FORMAT_FRACTAL_Z | FORMAT_FRACTAL_Z_3D => {
            let g = effective_groups(private, groups, what)?;
            let (cout, cin, dd, h, w, plain) = if vp == FORMAT_FRACTAL_Z {
                match (pp, d.len()) {
                    (FORMAT_NCHW, 4) | (FORMAT_ND, 4) => {
                        (d[0], d[1], 1, d[2], d[3], FzPlain::ChannelsFirst)
                    }
                    (FORMAT_NHWC, 4) => (d[0], d[3], 1, d[1], d[2], FzPlain::ChannelsLast),
                    (FORMAT_HWCN, 4) => (d[3], d[2], 1, d[0], d[1], FzPlain::Hwcn),
                    (FORMAT_ND, 2) => (d[1], d[0], 1, 1, 1, FzPlain::Hwcn),
                    (FORMAT_NCHW | FORMAT_NHWC | FORMAT_HWCN, _) => {
                        need_rank(plain_shape, plain_format, 4, what)?;
                        return unsupported();
                    }
                    (FORMAT_ND, _) => fail!(
                        "{what}: ND shape {} has {} dims, but ND -> FRACTAL_Z needs 2 ([K, N]) \
                         or 4 (read as NCHW)",
                        shape_str(plain_shape),
                        plain_shape.len()
                    ),
                    _ => return unsupported(),
                }
            } else {
                if !matches!(pp, FORMAT_NCDHW | FORMAT_NDHWC | FORMAT_DHWCN) {
                    return unsupported();
                }
                need_rank(plain_shape, plain_format, 5, what)?;
                match pp {
                    FORMAT_NCDHW => (d[0], d[1], d[2], d[3], d[4], FzPlain::ChannelsFirst),
                    FORMAT_NDHWC => (d[0], d[4], d[1], d[2], d[3], FzPlain::ChannelsLast),
                    FORMAT_DHWCN => (d[4], d[3], d[0], d[1], d[2], FzPlain::Hwcn),
                    _ => return unsupported(),
                }
            };
            if g > 1 {
                if cout % g != 0 {
                    fail!(
                        "{what}: groups = {g} does not divide the output channels N = {cout} of \
                         {} shape {}",
                        fmt_format(plain_format),
                        shape_str(plain_shape)
                    );
                }
                if cout == 0 || cin == 0 {
                    fail!(
                        "{what}: groups = {g} needs non-zero N and C, got {} shape {}",
                        fmt_format(plain_format),
                        shape_str(plain_shape)
                    );
                }
            }
            Geometry::Fz(Fz::new(cout, cin, dd, h, w, c0, g, plain))
        }
        FORMAT_FRACTAL_Z_C04 => {
            groups_ok(effective_groups(private, groups, what)?)?;
            if pp != FORMAT_NCHW {
                return unsupported();
            }
            need_rank(plain_shape, plain_format, 4, what)?;
            if d[1] > 4 {
                fail!(
                    "{what}: FRACTAL_Z_C04 holds at most 4 input channels, but NCHW shape {} has \
                     C = {}",
                    shape_str(plain_shape),
                    d[1]
                );
            }
            if c0 % 4 != 0 {
                fail!("{what}: FRACTAL_Z_C04 needs C0 to be a multiple of 4, got C0 {c0}");
            }
            Geometry::FzC04(FzC04::new(d[0], d[1], d[2], d[3], c0))
        }
        p if is_nz(p) => {
            groups_ok(effective_groups(private, groups, what)?)?;
            let (batch, h, w) = match d.len() {
                0 => fail!(
                    "{what}: a scalar (rank 0) has no FRACTAL_NZ layout; {} needs rank >= 1",
                    fmt_format(private)
                ),
                1 => (Vec::new(), d[0], 1),
                r => (plain_shape[..r - 2].to_vec(), d[r - 2], d[r - 1]),
            };
            Geometry::Nz(Nz::new(batch, h, w, c0))
        }
        _ => {
            fail!(
                "{what}: {} is not a private format this emulator converts; supported: {SUPPORTED}",
                fmt_format(private)
            )
        }
    };
    Ok((geo, c0))
}

fn private_shape(g: &Geometry) -> Vec<i64> {
    match g {
        Geometry::Copy => Vec::new(),
        Geometry::C1C0(x) => x.private_shape(),
        Geometry::Fz(x) => x.private_shape(),
        Geometry::FzC04(x) => x.private_shape(),
        Geometry::Nz(x) => x.private_shape(),
    }
}

/// Element count of a shape, checked against overflow (bytes must fit in usize and i64).
fn elems(shape: &[i64], elem: usize, what: &str) -> Result<usize, FormatError> {
    let mut n: usize = 1;
    for &d in shape {
        n = n
            .checked_mul(d.max(0) as usize)
            .filter(|&n| n.checked_mul(elem).is_some_and(|b| b <= i64::MAX as usize))
            .ok_or_else(|| {
                FormatError::new(format!("{what}: shape {} is too large", shape_str(shape)))
            })?;
    }
    Ok(n)
}

/// Reorder a plain shape between plain formats with the same axes (NCHW ↔ NHWC ↔ HWCN ↔ CHWN,
/// NCDHW ↔ NDHWC ↔ DHWCN ↔ DHWNC, NC ↔ CN); ND keeps the shape.
fn permute_plain(from: i32, shape: &[i64], to: i32) -> Option<Vec<i64>> {
    if from == FORMAT_ND || to == FORMAT_ND {
        return Some(shape.to_vec());
    }
    let axes = |f: i32| -> Option<&'static str> {
        Some(match f {
            FORMAT_NCHW => "NCHW",
            FORMAT_NHWC => "NHWC",
            FORMAT_HWCN => "HWCN",
            FORMAT_CHWN => "CHWN",
            FORMAT_NCDHW => "NCDHW",
            FORMAT_NDHWC => "NDHWC",
            FORMAT_DHWCN => "DHWCN",
            FORMAT_DHWNC => "DHWNC",
            FORMAT_NC => "NC",
            FORMAT_CN => "CN",
            _ => return None,
        })
    };
    let (a, b) = (axes(from)?, axes(to)?);
    if a.len() != b.len() || a.len() != shape.len() {
        return None;
    }
    b.chars()
        .map(|ch| a.find(ch).map(|i| shape[i]))
        .collect::<Option<Vec<i64>>>()
}

/// The storage shape of a tensor whose logical shape is `origin_shape` in `origin_format` when
/// it is stored as `format` (e.g. NCHW `[2,3,5,7]` fp16 as NC1HWC0 → `[2,1,5,7,16]`). Same format →
/// same shape; between plain formats the axes are reordered (ND keeps the shape).
pub fn storage_shape(
    origin_format: i32,
    origin_shape: &[i64],
    format: i32,
    dtype: i32,
    groups: i64,
    rule: C0Rule,
) -> Result<Vec<i64>, FormatError> {
    let (op, fp) = (primary_format(origin_format), primary_format(format));
    let what = format!(
        "storage shape of {} {} ({}) as {}",
        fmt_format(origin_format),
        shape_str(origin_shape),
        dtype_name(dtype),
        fmt_format(format)
    );
    if op == fp {
        return Ok(origin_shape.to_vec());
    }
    if is_plain(op) && is_plain(fp) {
        return match permute_plain(op, origin_shape, fp) {
            Some(s) => Ok(s),
            None => fail!(
                "{what}: the axes of {} do not map onto {}",
                fmt_format(origin_format),
                fmt_format(format)
            ),
        };
    }
    if !is_plain(op) {
        fail!(
            "{what}: the origin format must be a plain format (ND, NCHW, NHWC, HWCN, NCDHW, ...), \
             not {}",
            fmt_format(origin_format)
        );
    }
    let elem = element_size(dtype, &what)?;
    let (g, _) = geometry(
        origin_format,
        origin_shape,
        format,
        dtype,
        groups,
        rule,
        &what,
    )?;
    let s = private_shape(&g);
    elems(&s, elem, &what)?;
    Ok(s)
}

/// Check a conversion request and build its plan.
pub(crate) fn plan(req: &Request) -> Result<Plan, FormatError> {
    let (sp, dp) = (
        primary_format(req.src_format),
        primary_format(req.dst_format),
    );
    let mut what = format!(
        "format conversion {} {} -> {} ({})",
        fmt_format(req.src_format),
        shape_str(req.src_shape),
        fmt_format(req.dst_format),
        dtype_name(req.dtype)
    );
    let elem = element_size(req.dtype, &what)?;
    dims(req.src_shape, req.src_format, &what)?;
    if sp == dp {
        if let Some(ds) = req.dst_shape {
            if ds != req.src_shape {
                fail!(
                    "{what}: the destination shape {} differs from the source shape {} of the \
                     same format",
                    shape_str(ds),
                    shape_str(req.src_shape)
                );
            }
        }
        let n = elems(req.src_shape, elem, &what)?;
        return Ok(Plan {
            src_bytes: n * elem,
            dst_bytes: n * elem,
            dst_shape: req.src_shape.to_vec(),
            c0: 1,
            elem,
            forward: true,
            prefill: false,
            geometry: Geometry::Copy,
            what,
        });
    }
    let forward = if is_plain(sp) && is_private(dp) {
        true
    } else if is_private(sp) && is_plain(dp) {
        false
    } else {
        fail!(
            "{what}: converting {} to {} is not supported; supported: {SUPPORTED}",
            fmt_format(req.src_format),
            fmt_format(req.dst_format)
        );
    };
    let (plain_format, plain_shape, private) = if forward {
        (req.src_format, req.src_shape, req.dst_format)
    } else {
        let Some(ds) = req.dst_shape else {
            fail!(
                "{what}: the inverse conversion needs the destination (logical) {} shape: the {} \
                 shape {} has lost the padding of its dims",
                fmt_format(req.dst_format),
                fmt_format(req.src_format),
                shape_str(req.src_shape)
            );
        };
        what = format!("{what} to {}", shape_str(ds));
        (req.dst_format, ds, req.src_format)
    };
    let (geo, c0) = geometry(
        plain_format,
        plain_shape,
        private,
        req.dtype,
        req.groups,
        req.rule,
        &what,
    )?;
    what = format!("{what} with C0 {c0}");
    let pshape = private_shape(&geo);
    let plain_n = elems(plain_shape, elem, &what)?;
    let private_n = elems(&pshape, elem, &what)?;
    let dst_shape = if forward {
        if let Some(ds) = req.dst_shape {
            if ds != pshape.as_slice() {
                fail!(
                    "{what}: the destination shape {} does not match the {} storage shape {}",
                    shape_str(ds),
                    fmt_format(req.dst_format),
                    shape_str(&pshape)
                );
            }
        }
        pshape
    } else {
        if req.src_shape != pshape.as_slice() {
            fail!(
                "{what}: the source shape {} does not match the {} storage shape {} of {} {}",
                shape_str(req.src_shape),
                fmt_format(req.src_format),
                shape_str(&pshape),
                fmt_format(req.dst_format),
                shape_str(plain_shape)
            );
        }
        plain_shape.to_vec()
    };
    let (src_n, dst_n) = if forward {
        (plain_n, private_n)
    } else {
        (private_n, plain_n)
    };
    let prefill = matches!(geo, Geometry::Fz(_) | Geometry::FzC04(_)) && private_n != plain_n;
    Ok(Plan {
        src_bytes: src_n * elem,
        dst_bytes: dst_n * elem,
        dst_shape,
        c0,
        elem,
        forward,
        prefill,
        geometry: geo,
        what,
    })
}
