/* npu-emu Ascend C CPU headers: AscendC::printf / AscendC::PRINTF.
 *
 * Conversions %d %i %u %x %X %o %c (integers, bool), %f %e %g %a (float, half, bfloat16_t,
 * double), %s and %p; length modifiers in the format are ignored, the argument's own type decides
 * (as the real API, which records the argument types). One call is written to stdout at once, so
 * lines of parallel blocks do not interleave. -DASCENDC_DUMP=0 turns both off in launched kernels
 * and PRINTF only under ASCENDC_CPU_DEBUG (as CANN documents). */
#ifndef NPUEMU_KERNEL_PRINT_H
#define NPUEMU_KERNEL_PRINT_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "interface/kernel_macros.h"
#include "npuemu/half.h"

namespace npuemu {

struct PrintArg {
    enum Kind { INT, UINT, DBL, STR, PTR } kind;
    long long i;
    unsigned long long u;
    double d;
    const void *p;
};

template <class T, typename std::enable_if<std::is_integral<T>::value && std::is_signed<T>::value, int>::type = 0>
inline PrintArg print_arg(T v) { return PrintArg{PrintArg::INT, static_cast<long long>(v), 0, 0, nullptr}; }
template <class T, typename std::enable_if<std::is_integral<T>::value && !std::is_signed<T>::value, int>::type = 0>
inline PrintArg print_arg(T v) { return PrintArg{PrintArg::UINT, 0, static_cast<unsigned long long>(v), 0, nullptr}; }
template <class T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
inline PrintArg print_arg(T v) { return PrintArg{PrintArg::DBL, 0, 0, static_cast<double>(v), nullptr}; }
template <class T, typename std::enable_if<std::is_enum<T>::value, int>::type = 0>
inline PrintArg print_arg(T v) { return print_arg(static_cast<typename std::underlying_type<T>::type>(v)); }
inline PrintArg print_arg(half v) { return PrintArg{PrintArg::DBL, 0, 0, static_cast<float>(v), nullptr}; }
inline PrintArg print_arg(bfloat16_t v) { return PrintArg{PrintArg::DBL, 0, 0, static_cast<float>(v), nullptr}; }
inline PrintArg print_arg(const char *s) { return PrintArg{PrintArg::STR, 0, 0, 0, s}; }
inline PrintArg print_arg(char *s) { return PrintArg{PrintArg::STR, 0, 0, 0, s}; }
template <class T>
inline PrintArg print_arg(T *p) { return PrintArg{PrintArg::PTR, 0, 0, 0, p}; }

inline void append_one(std::string &out, std::string spec, char conv, const PrintArg *a)
{
    char buf[512];
    if (a == nullptr) {
        out += "<missing argument>";
        return;
    }
    switch (conv) {
    case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': {
        const long long iv = a->kind == PrintArg::INT ? a->i
                             : a->kind == PrintArg::UINT ? static_cast<long long>(a->u)
                             : a->kind == PrintArg::DBL ? static_cast<long long>(a->d) : 0;
        if (conv == 'c') {
            std::snprintf(buf, sizeof buf, (spec + "c").c_str(), static_cast<int>(iv));
        } else if (conv == 'd' || conv == 'i') {
            std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), iv);
        } else {
            const unsigned long long uv = a->kind == PrintArg::UINT ? a->u : static_cast<unsigned long long>(iv);
            std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), uv);
        }
        break;
    }
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
        const double dv = a->kind == PrintArg::DBL ? a->d
                          : a->kind == PrintArg::INT ? static_cast<double>(a->i)
                          : a->kind == PrintArg::UINT ? static_cast<double>(a->u) : 0.0;
        std::snprintf(buf, sizeof buf, (spec + conv).c_str(), dv);
        break;
    }
    case 's':
        std::snprintf(buf, sizeof buf, (spec + "s").c_str(),
                      a->kind == PrintArg::STR && a->p ? static_cast<const char *>(a->p) : "(null)");
        break;
    case 'p':
        std::snprintf(buf, sizeof buf, (spec + "p").c_str(), a->p);
        break;
    default:
        buf[0] = '\0';
    }
    out += buf;
}

/* The printf-formatted text of fmt and args (the argument's type decides each conversion). */
inline std::string vformat_args(const char *fmt, const PrintArg *args, size_t n)
{
    std::string out;
    size_t next = 0;
    for (const char *p = fmt; *p; ++p) {
        if (*p != '%') {
            out += *p;
            continue;
        }
        if (p[1] == '%') {
            out += '%';
            ++p;
            continue;
        }
        std::string spec = "%";
        ++p;
        while (*p && std::strchr("-+ #0123456789.*", *p)) {
            spec += *p++;
        }
        while (*p && std::strchr("hlLqjzt", *p)) {
            ++p; /* the argument's type decides the length */
        }
        if (!*p) {
            break;
        }
        append_one(out, spec, *p, next < n ? &args[next] : nullptr);
        ++next;
    }
    return out;
}

inline void vprint(const char *fmt, const PrintArg *args, size_t n)
{
    const std::string out = vformat_args(fmt, args, n);
    static std::mutex m;
    std::lock_guard<std::mutex> g(m);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
}

/* The printf-formatted text of fmt and args. */
template <class... Args>
inline std::string format_args(const char *fmt, Args &&...args)
{
    const PrintArg a[] = {PrintArg{PrintArg::INT, 0, 0, 0, nullptr}, print_arg(args)...};
    return vformat_args(fmt, a + 1, sizeof...(Args));
}

template <class... Args>
inline void ignore(const Args &...) {}

template <class... Args>
inline void print(const char *fmt, Args &&...args)
{
    const PrintArg a[] = {PrintArg{PrintArg::INT, 0, 0, 0, nullptr}, print_arg(args)...};
    vprint(fmt, a + 1, sizeof...(Args));
}

} // namespace npuemu

namespace AscendC {

template <class... Args>
__aicore__ inline void printf(__gm__ const char *fmt, Args &&...args)
{
#if defined(ASCENDC_DUMP) && (ASCENDC_DUMP == 0) && !defined(ASCENDC_CPU_DEBUG)
    (void)fmt;
    (void)sizeof...(args);
    npuemu::ignore(args...);
#else
    npuemu::print(fmt, std::forward<Args>(args)...);
#endif
}

template <class... Args>
__aicore__ inline void PRINTF(__gm__ const char *fmt, Args &&...args)
{
#if defined(ASCENDC_DUMP) && (ASCENDC_DUMP == 0)
    (void)fmt;
    (void)sizeof...(args);
    npuemu::ignore(args...);
#else
    npuemu::print(fmt, std::forward<Args>(args)...);
#endif
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_PRINT_H */
