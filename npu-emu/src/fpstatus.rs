//! Floating-point exception flags of the calling thread (C `<fenv.h>`), which is how the
//! emulator sees that a computation overflowed: an AI Core sets its overflow status when a
//! result is ±inf or NaN; on the CPU the same results raise the IEEE overflow, invalid or
//! divide-by-zero flags. A stream task or a kernel block clears the flags, runs, and tests
//! them (see `Stream::set_overflow_hook` and the AI-core pool).
//!
//! Hand-written over glibc's `fetestexcept`/`feclearexcept`/`feraiseexcept` (in libm,
//! which Rust's std links): the `libc` crate does not bind `<fenv.h>` and no maintained
//! crate does.

use std::os::raw::c_int;

extern "C" {
    fn feclearexcept(excepts: c_int) -> c_int;
    fn fetestexcept(excepts: c_int) -> c_int;
    fn feraiseexcept(excepts: c_int) -> c_int;
}

#[cfg(target_arch = "x86_64")]
mod flags {
    pub const FE_INVALID: i32 = 0x01;
    pub const FE_DIVBYZERO: i32 = 0x04;
    pub const FE_OVERFLOW: i32 = 0x08;
}
#[cfg(target_arch = "aarch64")]
mod flags {
    pub const FE_INVALID: i32 = 0x01;
    pub const FE_DIVBYZERO: i32 = 0x02;
    pub const FE_OVERFLOW: i32 = 0x04;
}

/// The flags that mean "a result was ±inf or NaN".
const WATCHED: c_int = flags::FE_INVALID | flags::FE_DIVBYZERO | flags::FE_OVERFLOW;

/// Clear the watched flags of the calling thread.
pub fn clear() {
    // SAFETY: feclearexcept only changes this thread's floating-point status register.
    unsafe { feclearexcept(WATCHED) };
}

/// Whether a watched flag is set on the calling thread.
pub fn raised() -> bool {
    // SAFETY: fetestexcept only reads this thread's floating-point status register.
    unsafe { fetestexcept(WATCHED) != 0 }
}

/// Set the overflow flag on the calling thread (to pass on what another thread saw; the
/// exceptions are masked, so this never traps).
pub fn raise() {
    // SAFETY: with exceptions masked (the default), feraiseexcept only sets a status flag.
    unsafe { feraiseexcept(flags::FE_OVERFLOW) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_overflow_and_nan() {
        clear();
        assert!(!raised());
        let big = std::hint::black_box(f32::MAX);
        let r = std::hint::black_box(big * 2.0);
        assert!(r.is_infinite());
        assert!(raised());
        clear();
        let z = std::hint::black_box(0.0f32);
        let n = std::hint::black_box(z / z);
        assert!(n.is_nan());
        assert!(raised());
        clear();
        let ok = std::hint::black_box(1.5f32) * 2.0;
        assert_eq!(ok, 3.0);
        assert!(!raised());
        raise();
        assert!(raised());
        clear();
    }
}
