/* npu-emu Ascend C CPU headers: bounds checks of scalar accesses through __gm__ pointers.
 *
 * Kernel code may read and write global memory through its pointer arguments directly
 * (`x[block_idx] += 1`, `*tilingLength`). npu-emu hands a kernel its pointer arguments as
 * addresses of its read-write view of device memory, and compiles kernel translation units with
 * GCC's instrumentation for every load and store (`-fsanitize=kernel-address` with
 * `--param asan-instrumentation-with-call-threshold=0`; the build modules and the ccec / bisheng
 * drivers add it, together with -D__NPUEMU_GM_CHECK__=1). The compiler then calls the functions
 * below before each access; they check it like a GlobalTensor access (npuemu::raw_check in
 * context.h): an access in device memory but outside every buffer passed to the kernel fails the
 * block, naming the kernel, the block and the canonical address. No sanitizer runtime is used.
 *
 * A translation unit compiled without the instrumentation does not define
 * __NPUEMU_GM_CHECK__: its kernels receive canonical device addresses, and a raw dereference
 * stops the process with SIGSEGV and a message naming the kernel and the block. */
#ifndef NPUEMU_RAW_ACCESS_H
#define NPUEMU_RAW_ACCESS_H

#include "npuemu/context.h"

#if defined(__NPUEMU_GM_CHECK__)
#if !defined(__SANITIZE_ADDRESS__)
#error "npu-emu: __NPUEMU_GM_CHECK__ is defined but the translation unit is not instrumented: compile kernels with -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0 --param asan-stack=0 --param asan-globals=0 (the ccec / bisheng drivers and ascendc.cmake do)"
#endif

/* Weak: every kernel translation unit carries the same definitions, the linker keeps one. */
#define NPUEMU_RAW_CB extern "C" __attribute__((weak, used, no_sanitize_address))
NPUEMU_RAW_CB void __asan_load1_noabort(void *p) { npuemu::raw_check(p, 1, false); }
NPUEMU_RAW_CB void __asan_load2_noabort(void *p) { npuemu::raw_check(p, 2, false); }
NPUEMU_RAW_CB void __asan_load4_noabort(void *p) { npuemu::raw_check(p, 4, false); }
NPUEMU_RAW_CB void __asan_load8_noabort(void *p) { npuemu::raw_check(p, 8, false); }
NPUEMU_RAW_CB void __asan_load16_noabort(void *p) { npuemu::raw_check(p, 16, false); }
NPUEMU_RAW_CB void __asan_loadN_noabort(void *p, long n) { npuemu::raw_check(p, static_cast<uint64_t>(n), false); }
NPUEMU_RAW_CB void __asan_store1_noabort(void *p) { npuemu::raw_check(p, 1, true); }
NPUEMU_RAW_CB void __asan_store2_noabort(void *p) { npuemu::raw_check(p, 2, true); }
NPUEMU_RAW_CB void __asan_store4_noabort(void *p) { npuemu::raw_check(p, 4, true); }
NPUEMU_RAW_CB void __asan_store8_noabort(void *p) { npuemu::raw_check(p, 8, true); }
NPUEMU_RAW_CB void __asan_store16_noabort(void *p) { npuemu::raw_check(p, 16, true); }
NPUEMU_RAW_CB void __asan_storeN_noabort(void *p, long n) { npuemu::raw_check(p, static_cast<uint64_t>(n), true); }
/* Called before noreturn calls (throw): nothing to unpoison without shadow memory. */
NPUEMU_RAW_CB void __asan_handle_no_return() {}
/* Around a translation unit's dynamic initialisers (initialisation-order checking): nothing to
 * do without the sanitizer runtime. */
NPUEMU_RAW_CB void __asan_before_dynamic_init(const void *) {}
NPUEMU_RAW_CB void __asan_after_dynamic_init() {}
#undef NPUEMU_RAW_CB

#endif /* __NPUEMU_GM_CHECK__ */

#endif /* NPUEMU_RAW_ACCESS_H */
