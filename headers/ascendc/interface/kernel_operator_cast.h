/* npu-emu Ascend C CPU headers: Cast (vector precision conversion, the calCount form).
 *
 * The value is converted exactly to double, then rounded once to the destination type with the
 * requested RoundMode: CAST_RINT nearest-even, CAST_FLOOR toward -inf, CAST_CEIL toward +inf,
 * CAST_ROUND nearest with ties away from zero, CAST_TRUNC toward zero, CAST_ODD von Neumann
 * (truncate, then make the last bit odd when inexact); CAST_NONE is CAST_RINT when the conversion
 * loses precision. Integer results saturate (NaN -> 0). Type pairs the vector unit does not
 * convert fail to compile. */
#ifndef NPUEMU_KERNEL_OPERATOR_CAST_H
#define NPUEMU_KERNEL_OPERATOR_CAST_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "interface/kernel_operator_vec.h"

namespace AscendC {

enum class RoundMode {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
    CAST_HYBRID,
};

} // namespace AscendC

namespace npuemu {

template <class T> struct float_format;
template <> struct float_format<half> { static constexpr int E = 5, M = 10; using Bits = uint16_t; };
template <> struct float_format<bfloat16_t> { static constexpr int E = 8, M = 7; using Bits = uint16_t; };
template <> struct float_format<float> { static constexpr int E = 8, M = 23; using Bits = uint32_t; };

template <class T> inline double to_double(T v) { return static_cast<double>(v); }
inline double to_double(half v) { return static_cast<double>(static_cast<float>(v)); }
inline double to_double(bfloat16_t v) { return static_cast<double>(static_cast<float>(v)); }

template <class T> inline T from_bits(uint32_t b)
{
    T v;
    typename float_format<T>::Bits bb = static_cast<typename float_format<T>::Bits>(b);
    std::memcpy(&v, &bb, sizeof v);
    return v;
}

/* Next representable value of a sign-magnitude format in direction `up` (toward +inf) or down. */
template <class T> inline uint32_t step_bits(uint32_t b, bool up)
{
    constexpr int W = float_format<T>::E + float_format<T>::M;
    const uint32_t sign = uint32_t(1) << W;
    const uint32_t mag = b & (sign - 1);
    const bool neg = (b & sign) != 0;
    if (neg == up) { /* toward zero */
        if (mag == 0) {
            return up ? 1u : (sign | 1u);
        }
        return (b & sign) | (mag - 1);
    }
    return (b & sign) | (mag + 1);
}

/* Round x (exact in double) to the float type T with `mode`. */
template <class T> inline T round_float(double x, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    constexpr int E = float_format<T>::E, M = float_format<T>::M;
    if (std::isnan(x)) {
        return from_bits<T>(round_from_double<E, M>(x));
    }
    uint32_t b = round_from_double<E, M>(x);
    const double r = to_double(from_bits<T>(b));
    if (r == x || mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT || std::isinf(x)) {
        return from_bits<T>(b);
    }
    const bool above = r > x; /* includes r = +inf for a finite x */
    switch (mode) {
    case RoundMode::CAST_FLOOR:
        if (above) b = step_bits<T>(b, false);
        break;
    case RoundMode::CAST_CEIL:
        if (!above) b = step_bits<T>(b, true);
        break;
    case RoundMode::CAST_TRUNC:
        if (std::fabs(r) > std::fabs(x)) b = step_bits<T>(b, x < 0);
        break;
    case RoundMode::CAST_ROUND: {
        /* nearest-even already; only a tie rounded toward zero must move away from zero */
        if (std::fabs(r) < std::fabs(x)) {
            const uint32_t nb = step_bits<T>(b, x > 0);
            const double n = to_double(from_bits<T>(nb));
            if (x - r == n - x) b = nb;
        }
        break;
    }
    case RoundMode::CAST_ODD: {
        if (std::fabs(r) > std::fabs(x)) b = step_bits<T>(b, x < 0); /* truncate */
        b |= 1u;                                                     /* inexact: odd */
        break;
    }
    default:
        break;
    }
    return from_bits<T>(b);
}

/* x rounded to an integral value with `mode` (CAST_NONE = CAST_RINT). */
inline double round_integral(double x, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    double r;
    switch (mode) {
    case RoundMode::CAST_FLOOR: r = std::floor(x); break;
    case RoundMode::CAST_CEIL: r = std::ceil(x); break;
    case RoundMode::CAST_ROUND: r = std::round(x); break;
    case RoundMode::CAST_TRUNC: r = std::trunc(x); break;
    case RoundMode::CAST_ODD: {
        r = std::trunc(x);
        if (r != x && std::fmod(r, 2.0) == 0.0) r += x < 0 ? -1.0 : 1.0;
        break;
    }
    default: r = std::nearbyint(x); break;
    }
    return r;
}

template <class T> inline T round_int(double x, AscendC::RoundMode mode)
{
    if (std::isnan(x)) {
        return T(0);
    }
    const double r = round_integral(x, mode);
    if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
}

template <class D, bool = std::is_integral<D>::value> struct convert_to {
    static D apply(double x, AscendC::RoundMode m) { return round_int<D>(x, m); }
};
template <class D> struct convert_to<D, false> {
    static D apply(double x, AscendC::RoundMode m) { return round_float<D>(x, m); }
};

template <class D, class S> struct cast_supported : std::false_type {};
#define NPUEMU_CAST_PAIR(D, S) template <> struct cast_supported<D, S> : std::true_type {};
NPUEMU_CAST_PAIR(float, half)
NPUEMU_CAST_PAIR(int32_t, half)
NPUEMU_CAST_PAIR(int16_t, half)
NPUEMU_CAST_PAIR(int8_t, half)
NPUEMU_CAST_PAIR(uint8_t, half)
NPUEMU_CAST_PAIR(half, float)
NPUEMU_CAST_PAIR(bfloat16_t, float)
NPUEMU_CAST_PAIR(float, float)
NPUEMU_CAST_PAIR(int32_t, float)
NPUEMU_CAST_PAIR(int16_t, float)
NPUEMU_CAST_PAIR(int64_t, float)
NPUEMU_CAST_PAIR(float, bfloat16_t)
NPUEMU_CAST_PAIR(int32_t, bfloat16_t)
NPUEMU_CAST_PAIR(float, int32_t)
NPUEMU_CAST_PAIR(int16_t, int32_t)
NPUEMU_CAST_PAIR(int64_t, int32_t)
NPUEMU_CAST_PAIR(half, int16_t)
NPUEMU_CAST_PAIR(float, int16_t)
NPUEMU_CAST_PAIR(half, int8_t)
NPUEMU_CAST_PAIR(half, uint8_t)
NPUEMU_CAST_PAIR(int32_t, int64_t)
NPUEMU_CAST_PAIR(float, int64_t)
#undef NPUEMU_CAST_PAIR

} // namespace npuemu

namespace AscendC {

/* dst[i] = src[i] converted with roundMode, for i < calCount. */
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Cast(const LocalTensor<T> &dst, const LocalTensor<U> &src, const RoundMode &roundMode,
                            const uint32_t calCount)
{
    static_assert(npuemu::cast_supported<T, U>::value,
                  "npu-emu: AscendC::Cast does not convert between these element types (supported: half -> "
                  "float/int32_t/int16_t/int8_t/uint8_t, float -> half/bfloat16_t/float/int32_t/int16_t/int64_t, "
                  "bfloat16_t -> float/int32_t, int32_t -> float/int16_t/int64_t, int16_t -> half/float, "
                  "int8_t/uint8_t -> half, int64_t -> int32_t/float)");
    const char *api = "AscendC::Cast";
    if (roundMode == RoundMode::CAST_HYBRID) {
        npuemu::fault("%s: RoundMode::CAST_HYBRID is only for hif8 results", api);
    }
    const int32_t n = static_cast<int32_t>(calCount);
    npuemu::check_count(api, n);
    npuemu::check_vec_operand(api, "dst", dst, n);
    npuemu::check_vec_operand(api, "src", src, n);
    npuemu::check_overlap(api, "src", dst.addr_, static_cast<uint64_t>(n) * sizeof(T), src.addr_,
                          static_cast<uint64_t>(n) * sizeof(U));
    if (static_cast<const void *>(dst.addr_) == static_cast<const void *>(src.addr_) && sizeof(T) != sizeof(U)) {
        npuemu::fault("%s: in place between %s and %s, whose sizes differ", api, npuemu::type_name<T>::get(),
                      npuemu::type_name<U>::get());
    }
    /* dst and src may overlap only when they start at the same place (in-place of equal widths) */
    if (std::is_same<T, float>::value && std::is_same<U, float>::value) {
        /* float -> float rounds to an integral value (CAST_NONE: unchanged) */
        for (int32_t i = 0; i < n; ++i) {
            const double x = npuemu::to_double(src.addr_[i]);
            dst.addr_[i] = static_cast<T>(roundMode == RoundMode::CAST_NONE || !std::isfinite(x)
                                              ? x
                                              : npuemu::round_integral(x, roundMode));
        }
        return;
    }
    for (int32_t i = 0; i < n; ++i) {
        dst.addr_[i] = npuemu::convert_to<T>::apply(npuemu::to_double(src.addr_[i]), roundMode);
    }
}

/* Scalar conversion of a float: to half (CAST_ODD on the A2 vector unit; any mode here) or to
 * int32_t (CAST_ROUND, CAST_CEIL, CAST_FLOOR, CAST_RINT, ...). */
template <typename T, typename U, RoundMode roundMode>
__aicore__ inline U Cast(T valueIn)
{
    static_assert(std::is_same<T, float>::value && npuemu::one_of<U, half, int32_t>::value,
                  "npu-emu: scalar AscendC::Cast converts float to half or int32_t");
    return npuemu::convert_to<U>::apply(static_cast<double>(valueIn), roundMode);
}

/* bfloat16_t <-> float scalars. */
__aicore__ inline float ToFloat(const bfloat16_t &bVal) { return static_cast<float>(bVal); }
__aicore__ inline bfloat16_t ToBfloat16(const float &fVal) { return bfloat16_t(fVal); }

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_CAST_H */
