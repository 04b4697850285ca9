//! Arrays handed to the caller, who frees them with C++ `delete[]`.
//!
//! `aclnnNpuFormatCastCalculateSizeAndFormat` and `aclGetViewShape`/`aclGetStorageShape`/
//! `aclGetViewStrides` return `int64_t` arrays that CANN allocates with `new int64_t[n]` and
//! documents as freed by the caller (`delete[] dstShape;` in the official samples). For a
//! trivially destructible element type `new[]` stores no array cookie, so the matching
//! allocation is exactly a call of the program's `operator new[](size_t, const
//! std::nothrow_t&)` (`_ZnamRKSt9nothrow_t` on LP64): we look it up in the process's global
//! scope, so the block comes from whatever `operator new[]` the program uses — libstdc++'s,
//! libc++'s, a replacement (tcmalloc), or AddressSanitizer's, which then sees a matching
//! new[]/delete[] pair. The nothrow form returns NULL instead of throwing a C++ exception
//! through Rust frames. Only when no C++ runtime is loaded (a C program, which cannot call
//! `delete[]` anyway) do we fall back to `malloc`, which libstdc++'s `operator delete[]`
//! releases with `free` too.

use std::ffi::c_void;

type NewArray = unsafe extern "C" fn(usize, *const c_void) -> *mut c_void;

fn new_array() -> Option<(NewArray, *const c_void)> {
    let f = crate::globals::NEW_ARRAY.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT only reads the loader's tables.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_ZnamRKSt9nothrow_t".as_ptr()) };
        if f.is_null() {
            return None;
        }
        // SAFETY: as above.
        let tag = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_ZSt7nothrow".as_ptr()) };
        static DUMMY: u8 = 0;
        let tag = if tag.is_null() {
            &DUMMY as *const u8 as usize
        } else {
            tag as usize
        };
        Some((f as usize, tag))
    });
    // SAFETY: the address is the C++ runtime's operator new[](size_t, const nothrow_t&).
    f.map(|(f, t)| {
        (
            // SAFETY: the address is the C++ runtime's operator new[](size_t, const nothrow_t&), whose signature NewArray spells.
            unsafe { std::mem::transmute::<usize, NewArray>(f) },
            t as *const c_void,
        )
    })
}

/// A copy of `v` in memory the caller frees with `delete[]`; NULL if allocation failed.
pub fn new_i64_array(v: &[i64]) -> *mut i64 {
    // new int64_t[0] still returns a unique non-null pointer; allocate at least one element.
    let bytes = std::mem::size_of_val(v).max(8);
    let p = match new_array() {
        // SAFETY: plain allocation call.
        Some((f, tag)) => unsafe { f(bytes, tag) },
        // SAFETY: malloc takes any size.
        None => unsafe { libc::malloc(bytes) },
    } as *mut i64;
    if !p.is_null() {
        // SAFETY: p holds at least v.len() elements.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    }
    p
}
