/* npu-emu Ascend C CPU headers: `#include "utils/debug/asc_assert.h"`.
 *
 *   assert(expr);  assert(expr, fmt, args...);  ascendc_assert(...) likewise
 *
 * When expr is false in kernel code, the assertion and the formatted message are printed to
 * stdout and the block fails (the launch's next synchronize returns 507015 with the message,
 * as the NPU stops the kernel); in host code the message goes to stderr and the process aborts,
 * as the C library's assert does. Like CANN's, the macros replace `assert` of <cassert> in the
 * translation unit, and are empty with NDEBUG or ASCENDC_DUMP=0. */
#ifndef NPUEMU_UTILS_DEBUG_ASC_ASSERT_H
#define NPUEMU_UTILS_DEBUG_ASC_ASSERT_H

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernel_operator.h"

namespace npuemu {

template <class... Args>
inline void assert_fail(const char *expr, const char *file, int line, const char *fmt = nullptr, Args &&...args)
{
    std::string msg = std::string("[ASSERT] ") + file + ":" + std::to_string(line) + ": Assertion `" + expr + "'";
    if (fmt != nullptr) {
        msg += " " + format_args(fmt, std::forward<Args>(args)...);
    }
    if (ctx().active) {
        std::printf("%s\n", msg.c_str());
        std::fflush(stdout);
        fault("%s", msg.c_str());
    }
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", msg.c_str());
    std::abort();
}

} // namespace npuemu

#define NPUEMU_ASSERT_EXPR(expr) (static_cast<bool>(expr) ? void(0) : npuemu::assert_fail(#expr, __FILE__, __LINE__))
#define NPUEMU_ASSERT_FMT(expr, ...)                                                                \
    (static_cast<bool>(expr) ? void(0) : npuemu::assert_fail(#expr, __FILE__, __LINE__, __VA_ARGS__))
#define NPUEMU_ASSERT_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, NAME, ...) NAME

#undef assert
#undef ascendc_assert
#if !(defined(ASCENDC_DUMP) && ASCENDC_DUMP == 0) && !defined(NDEBUG)
#define assert(...)                                                                                 \
    NPUEMU_ASSERT_PICK(__VA_ARGS__, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, \
                       NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT,  \
                       NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT,  \
                       NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_FMT, NPUEMU_ASSERT_EXPR) \
    (__VA_ARGS__)
#define ascendc_assert(...) assert(__VA_ARGS__)
#else
#define assert(...) ((void)0)
#define ascendc_assert(...) ((void)0)
#endif

#endif /* NPUEMU_UTILS_DEBUG_ASC_ASSERT_H */
