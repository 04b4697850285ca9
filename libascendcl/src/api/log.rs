//! `aclAppLog`: application log lines through the runtime's logger.
//!
//! The real function is C-variadic (`const char *fmt, ...`). Defining a C-variadic function
//! needs nightly Rust (`c_variadic`) and there is no C build step, so on x86-64 and aarch64
//! Linux the definition spells out the registers and stack slots where the platform's
//! calling convention puts variadic arguments:
//!
//! - x86-64 System V: the first integer/pointer argument after `fmt` arrives in `r9`, the
//!   following ones in the caller's stack slots, in order; `double`s arrive in `xmm0..7`.
//! - AArch64 (AAPCS64, Linux): integer/pointer arguments after `fmt` in `x5..x7`, then the
//!   stack slots; `double`s in `v0..v7`.
//!
//! Declared as ordinary parameters of those classes, they are exactly what the caller passed.
//! `fmt` is then split into conversions, and each conversion is rendered by the C library's
//! `snprintf` with its argument at the right type. Formats this cannot map safely (more than
//! 8 floating-point arguments, `long double`, `%n`, more than 16 integer arguments, unknown
//! conversions) are printed verbatim with "(arguments not formatted)"; so is every format on
//! other platforms.

use npu_emu::config::LogLevel;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-null NUL-terminated string per the ACL contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The variadic arguments as the calling convention delivered them.
struct VaRegs<'a> {
    ints: &'a [u64],
    floats: &'a [f64],
}

/// One piece of a format: literal text, or a conversion with its class.
#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    /// `spec` (without `*`s, which consume integer arguments first), the class.
    Conv {
        spec: String,
        stars: usize,
        class: Class,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    Int32,
    Int64,
    Double,
    Str,
    Ptr,
}

/// Split `fmt` into pieces; `None` if it has a conversion we cannot render safely.
fn parse(fmt: &[u8]) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            lit.push(fmt[i]);
            i += 1;
            continue;
        }
        if fmt.get(i + 1) == Some(&b'%') {
            lit.push(b'%');
            i += 2;
            continue;
        }
        if !lit.is_empty() {
            out.push(Piece::Text(String::from_utf8_lossy(&lit).into_owned()));
            lit.clear();
        }
        let start = i;
        i += 1;
        let mut stars = 0;
        while i < fmt.len() && b"-+ #0'".contains(&fmt[i]) {
            i += 1;
        }
        while i < fmt.len() && (fmt[i].is_ascii_digit() || fmt[i] == b'*' || fmt[i] == b'.') {
            if fmt[i] == b'*' {
                stars += 1;
            }
            i += 1;
        }
        let mut long = false;
        while i < fmt.len() && b"hlqjztL".contains(&fmt[i]) {
            match fmt[i] {
                b'L' => return None, // long double
                b'l' | b'q' | b'j' | b'z' | b't' => long = true,
                _ => {}
            }
            i += 1;
        }
        let conv = *fmt.get(i)?;
        i += 1;
        let class = match conv {
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c' => {
                if long {
                    Class::Int64
                } else {
                    Class::Int32
                }
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => Class::Double,
            b's' if !long => Class::Str,
            b'p' => Class::Ptr,
            _ => return None, // %n, %ls, %m and anything unknown
        };
        let spec = String::from_utf8_lossy(&fmt[start..i]).into_owned();
        out.push(Piece::Conv { spec, stars, class });
    }
    if !lit.is_empty() {
        out.push(Piece::Text(String::from_utf8_lossy(&lit).into_owned()));
    }
    Some(out)
}

/// Render `pieces` with the arguments in `va`; `None` if they run out.
fn render(pieces: &[Piece], va: &VaRegs) -> Option<String> {
    let (mut ni, mut nf) = (0usize, 0usize);
    let mut s = String::new();
    let mut buf = vec![0u8; 4096];
    for p in pieces {
        let (spec, stars, class) = match p {
            Piece::Text(t) => {
                s.push_str(t);
                continue;
            }
            Piece::Conv { spec, stars, class } => (spec, *stars, *class),
        };
        let mut spec = spec.clone();
        for _ in 0..stars {
            let v = *va.ints.get(ni)? as i32;
            ni += 1;
            spec = spec.replacen('*', &v.to_string(), 1);
        }
        let cspec = CString::new(spec).ok()?;
        let f = cspec.as_ptr();
        let b = buf.as_mut_ptr() as *mut c_char;
        let n = buf.len();
        // SAFETY: snprintf with one conversion and an argument of the matching type.
        let written = unsafe {
            match class {
                Class::Int32 => {
                    let v = *va.ints.get(ni)? as i32;
                    ni += 1;
                    libc::snprintf(b, n, f, v)
                }
                Class::Int64 => {
                    let v = *va.ints.get(ni)? as i64;
                    ni += 1;
                    libc::snprintf(b, n, f, v)
                }
                Class::Ptr => {
                    let v = *va.ints.get(ni)? as usize as *const libc::c_void;
                    ni += 1;
                    libc::snprintf(b, n, f, v)
                }
                Class::Str => {
                    let v = *va.ints.get(ni)? as usize as *const c_char;
                    ni += 1;
                    if v.is_null() {
                        let null = CString::new("(null)").unwrap();
                        libc::snprintf(b, n, f, null.as_ptr())
                    } else {
                        libc::snprintf(b, n, f, v)
                    }
                }
                Class::Double => {
                    let v = *va.floats.get(nf)?;
                    nf += 1;
                    libc::snprintf(b, n, f, v)
                }
            }
        };
        if written < 0 {
            return None;
        }
        let len = (written as usize).min(n - 1);
        s.push_str(&String::from_utf8_lossy(&buf[..len]));
    }
    Some(s)
}

fn emit(
    level: i32,
    func: *const c_char,
    file: *const c_char,
    line: u32,
    fmt: *const c_char,
    va: Option<VaRegs>,
) {
    let level = match level {
        0 => LogLevel::Debug,
        1 => LogLevel::Info,
        2 => LogLevel::Warning,
        _ => LogLevel::Error,
    };
    // SAFETY: C strings from the caller.
    let (func, file, raw) = unsafe { (text(func), text(file), text(fmt)) };
    let formatted = va.and_then(|va| {
        // SAFETY: fmt is the caller's NUL-terminated format.
        let bytes = if fmt.is_null() {
            &[][..]
        } else {
            // SAFETY: as above: non-NULL here.
            unsafe { CStr::from_ptr(fmt) }.to_bytes()
        };
        parse(bytes).and_then(|p| render(&p, &va))
    });
    let body = match formatted {
        Some(t) => t,
        None => {
            let note = if raw.replace("%%", "").contains('%') {
                " (arguments not formatted)"
            } else {
                ""
            };
            format!("{raw}{note}")
        }
    };
    let msg = format!("[{file}:{line}][{func}] {}", body.trim_end_matches('\n'));
    crate::api::fallback::note_log(&msg);
    crate::runtime::log(level, &msg);
}

/// `void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)`
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclAppLog(
    logLevel: i32,
    func: *const c_char,
    file: *const c_char,
    line: u32,
    fmt: *const c_char,
    r9: u64,
    s0: u64,
    s1: u64,
    s2: u64,
    s3: u64,
    s4: u64,
    s5: u64,
    s6: u64,
    s7: u64,
    s8: u64,
    s9: u64,
    s10: u64,
    s11: u64,
    s12: u64,
    s13: u64,
    s14: u64,
    x0: f64,
    x1: f64,
    x2: f64,
    x3: f64,
    x4: f64,
    x5: f64,
    x6: f64,
    x7: f64,
) {
    let ints = [
        r9, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14,
    ];
    let floats = [x0, x1, x2, x3, x4, x5, x6, x7];
    let _ = std::panic::catch_unwind(|| {
        emit(
            logLevel,
            func,
            file,
            line,
            fmt,
            Some(VaRegs {
                ints: &ints,
                floats: &floats,
            }),
        )
    });
}

/// `void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)`
#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclAppLog(
    logLevel: i32,
    func: *const c_char,
    file: *const c_char,
    line: u32,
    fmt: *const c_char,
    x5: u64,
    x6: u64,
    x7: u64,
    s0: u64,
    s1: u64,
    s2: u64,
    s3: u64,
    s4: u64,
    s5: u64,
    s6: u64,
    s7: u64,
    s8: u64,
    s9: u64,
    s10: u64,
    s11: u64,
    s12: u64,
    v0: f64,
    v1: f64,
    v2: f64,
    v3: f64,
    v4: f64,
    v5: f64,
    v6: f64,
    v7: f64,
) {
    let ints = [
        x5, x6, x7, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12,
    ];
    let floats = [v0, v1, v2, v3, v4, v5, v6, v7];
    let _ = std::panic::catch_unwind(|| {
        emit(
            logLevel,
            func,
            file,
            line,
            fmt,
            Some(VaRegs {
                ints: &ints,
                floats: &floats,
            }),
        )
    });
}

/// `void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)`
/// (other platforms: `fmt` verbatim).
#[cfg(not(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux"
)))]
#[no_mangle]
pub unsafe extern "C" fn aclAppLog(
    logLevel: i32,
    func: *const c_char,
    file: *const c_char,
    line: u32,
    fmt: *const c_char,
) {
    let _ = std::panic::catch_unwind(|| emit(logLevel, func, file, line, fmt, None));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_mixed_arguments() {
        let hello = CString::new("hello").unwrap();
        let ints = [42u64, (-7i64) as u64, hello.as_ptr() as u64, 5, 3];
        let floats = [2.5f64];
        let p = parse(b"a=%d b=%lld s=%s f=%.2f w=[%*d] %% end").unwrap();
        let s = render(
            &p,
            &VaRegs {
                ints: &ints,
                floats: &floats,
            },
        )
        .unwrap();
        assert_eq!(s, "a=42 b=-7 s=hello f=2.50 w=[    3] % end");
    }

    #[test]
    fn refuses_what_it_cannot_map() {
        assert!(parse(b"%Lf").is_none());
        assert!(parse(b"%n").is_none());
        assert!(parse(b"%ls").is_none());
        let p = parse(b"%d %d").unwrap();
        assert!(render(
            &p,
            &VaRegs {
                ints: &[1],
                floats: &[]
            }
        )
        .is_none());
    }
}
