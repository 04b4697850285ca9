//! The C boundary, written once for every library (the idea of rustls-ffi's
//! `ffi_panic_boundary!` and `PanicOrDefault`, in our own form).
//!
//! An exported function runs its body through [`call`] (functions returning a status code)
//! or [`call_value`] (functions returning a value: a handle, a size, a pointer). The body
//! returns the library's `Result`; the boundary turns `Err` into the library's code and a
//! panic into the library's internal-error code, and in both cases records a readable
//! message `"<function>: <what went wrong>"` where the library keeps its recent-error
//! messages (`aclGetRecentErrMsg`) and logs. No panic crosses into C.
//!
//! A library describes its conventions once, by implementing [`Convention`] on a marker
//! type: its C code type (`aclError`, `HcclResult`, `aclnnStatus`), its success and
//! internal-error codes, how an error shows in the message, and where the message goes.

use std::any::Any;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The error conventions of one C library.
pub trait Convention {
    /// The C type of a status (`aclError`, `HcclResult` and `aclnnStatus` are all `int`).
    type Code: Copy;
    /// The library's error type: a code and a message.
    type Error;
    /// The status of a successful call.
    const SUCCESS: Self::Code;
    /// What a panic becomes (the library's "internal error").
    const PANIC: Self::Code;
    /// The status an error maps to.
    fn code(e: &Self::Error) -> Self::Code;
    /// How an error reads in the recorded message, after `"<function>: "`.
    fn describe(e: &Self::Error) -> Cow<'_, str>;
    /// The error for a NULL pointer argument `arg` ([`non_null`], [`out`]).
    fn null_argument(arg: &str) -> Self::Error;
    /// Keep `msg` (already prefixed with the function's name) as the calling thread's
    /// recent error and log it; `code` is the status the call returns.
    fn record(code: Self::Code, msg: &str);
}

/// Run an exported function that returns a status: `Ok` is [`Convention::SUCCESS`], `Err`
/// its code, a panic [`Convention::PANIC`]; failures are recorded as
/// `"{name}: {message}"` (a panic as `"{name}: internal error: {panic text}"`).
pub fn call<C: Convention>(name: &str, f: impl FnOnce() -> Result<(), C::Error>) -> C::Code {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => C::SUCCESS,
        Ok(Err(e)) => fail::<C>(name, &e),
        Err(p) => panicked::<C>(name, p.as_ref()),
    }
}

/// Run an exported function that returns a value: `fallback` on error or panic (which are
/// recorded as by [`call`]).
pub fn call_value<C: Convention, T>(
    name: &str,
    fallback: T,
    f: impl FnOnce() -> Result<T, C::Error>,
) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            fail::<C>(name, &e);
            fallback
        }
        Err(p) => {
            panicked::<C>(name, p.as_ref());
            fallback
        }
    }
}

fn fail<C: Convention>(name: &str, e: &C::Error) -> C::Code {
    let code = C::code(e);
    C::record(code, &format!("{name}: {}", C::describe(e)));
    code
}

fn panicked<C: Convention>(name: &str, p: &(dyn Any + Send)) -> C::Code {
    C::record(
        C::PANIC,
        &format!("{name}: internal error: {}", panic_text(p)),
    );
    C::PANIC
}

/// Run `f`, turning a panic into its text (for callers that are not C exports: a stream
/// task, a callback into another library).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_text(p.as_ref()))
}

/// The message of a panic payload (`panic!("...")` carries a `&str` or a `String`).
pub fn panic_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// `ptr` must not be NULL: the library's NULL-argument error naming `arg` otherwise.
pub fn non_null<C: Convention, T>(ptr: *const T, arg: &str) -> Result<(), C::Error> {
    if ptr.is_null() {
        Err(C::null_argument(arg))
    } else {
        Ok(())
    }
}

/// Write `v` through a C out-parameter that must not be NULL.
///
/// Safe to call by design: the pointer comes straight from a C caller, and the C contract
/// (which nothing can check beyond NULL) is that out-parameters are valid for writes.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn out<C: Convention, T>(ptr: *mut T, arg: &str, v: T) -> Result<(), C::Error> {
    non_null::<C, T>(ptr, arg)?;
    // SAFETY: non-NULL checked; the caller's C contract makes out-parameters valid for
    // writes (unaligned writes are allowed, so packed C structs are fine too).
    unsafe { ptr.write_unaligned(v) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        static SEEN: RefCell<Vec<(i32, String)>> = const { RefCell::new(Vec::new()) };
    }

    struct Lib;
    impl Convention for Lib {
        type Code = i32;
        type Error = (i32, String);
        const SUCCESS: i32 = 0;
        const PANIC: i32 = 99;
        fn code(e: &(i32, String)) -> i32 {
            e.0
        }
        fn describe(e: &(i32, String)) -> Cow<'_, str> {
            Cow::Borrowed(&e.1)
        }
        fn null_argument(arg: &str) -> (i32, String) {
            (7, format!("{arg} is NULL"))
        }
        fn record(code: i32, msg: &str) {
            SEEN.with(|s| s.borrow_mut().push((code, msg.to_string())));
        }
    }

    fn seen() -> Vec<(i32, String)> {
        SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
    }

    #[test]
    fn codes_and_messages() {
        assert_eq!(call::<Lib>("f", || Ok(())), 0);
        assert!(seen().is_empty());
        assert_eq!(call::<Lib>("f", || Err((3, "bad x".into()))), 3);
        assert_eq!(seen(), vec![(3, "f: bad x".to_string())]);
        assert_eq!(call::<Lib>("g", || panic!("boom {}", 1)), 99);
        assert_eq!(seen(), vec![(99, "g: internal error: boom 1".to_string())]);
        assert_eq!(call_value::<Lib, _>("h", 5u32, || Ok(6)), 6);
        assert_eq!(call_value::<Lib, _>("h", 5u32, || panic!("p")), 5);
        assert_eq!(seen(), vec![(99, "h: internal error: p".to_string())]);
        assert_eq!(catch(|| -> u8 { panic!("q") }), Err("q".to_string()));
    }

    #[test]
    fn null_arguments() {
        let mut x = 0u64;
        assert_eq!(out::<Lib, _>(&mut x, "x", 9), Ok(()));
        assert_eq!(x, 9);
        let e = out::<Lib, u64>(std::ptr::null_mut(), "y", 1).unwrap_err();
        assert_eq!(e, (7, "y is NULL".to_string()));
    }
}
