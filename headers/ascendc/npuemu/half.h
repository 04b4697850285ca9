/* npu-emu Ascend C CPU headers: the `half` (IEEE 754 binary16) and `bfloat16_t` element types.
 *
 * On the NPU these are arithmetic types of the kernel compiler. Here they are 16-bit classes:
 * conversions from any arithmetic type round to nearest, ties to even (directly from the double
 * value, so there is no double rounding), conversions to float are exact, and arithmetic computes
 * in float and rounds the result back, as the vector unit produces fp16 results. Mixed
 * expressions follow C's usual conversions for _Float16: half op integer -> half,
 * half op float -> float, half op double -> double. */
#ifndef NPUEMU_HALF_H
#define NPUEMU_HALF_H

#include <cstdint>
#include <cstring>
#include <type_traits>

/* Small conversions used in the headers' bulk loops: always inlined, so that they are inlined
 * into the loops compiled without the kernel-code access instrumentation too (GCC inlines a
 * function into one with other sanitizer settings only when it is always_inline). */
#ifndef NPUEMU_ALWAYS_INLINE
#define NPUEMU_ALWAYS_INLINE inline __attribute__((always_inline))
#endif

namespace npuemu {

/* Round a double to a binary floating format with E exponent bits and M mantissa bits
 * (round to nearest, ties to even; overflow to infinity; NaN stays NaN). Returns the bits. */
template <int E, int M>
NPUEMU_ALWAYS_INLINE uint32_t round_from_double(double d)
{
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    const uint32_t sign = static_cast<uint32_t>(b >> 63) << (E + M);
    const int exp = static_cast<int>((b >> 52) & 0x7ff);
    const uint64_t mant = b & ((uint64_t(1) << 52) - 1);
    const int bias = (1 << (E - 1)) - 1;
    const uint32_t inf = static_cast<uint32_t>((1 << E) - 1) << M;
    if (exp == 0x7ff) {
        if (mant == 0) {
            return sign | inf;
        }
        return sign | inf | (uint32_t(1) << (M - 1)) | static_cast<uint32_t>(mant >> (52 - M));
    }
    if (exp == 0) {
        return sign; /* double subnormals are far below the smallest target subnormal */
    }
    const int e = exp - 1023;
    if (e > bias) {
        return sign | inf;
    }
    const uint64_t m = mant | (uint64_t(1) << 52);
    int shift;
    uint32_t base;
    if (e >= 1 - bias) {
        shift = 52 - M;
        base = static_cast<uint32_t>(e + bias) << M;
        /* round the fraction only; a carry out of it bumps the exponent, which is right */
        const uint64_t q = mant >> shift;
        const uint64_t r = mant & ((uint64_t(1) << shift) - 1);
        const uint64_t halfway = uint64_t(1) << (shift - 1);
        uint64_t v = base + q;
        if (r > halfway || (r == halfway && (q & 1))) {
            ++v;
        }
        return sign | static_cast<uint32_t>(v);
    }
    shift = 53 - bias - M - e; /* subnormal: units of 2^(1-bias-M) */
    if (shift >= 64) {
        return sign;
    }
    const uint64_t q = m >> shift;
    const uint64_t r = m & ((uint64_t(1) << shift) - 1);
    const uint64_t halfway = uint64_t(1) << (shift - 1);
    uint64_t v = q;
    if (r > halfway || (r == halfway && (q & 1))) {
        ++v;
    }
    return sign | static_cast<uint32_t>(v);
}

NPUEMU_ALWAYS_INLINE float half_bits_to_float(uint16_t h)
{
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        int e = 113;
        while ((mant & 0x400) == 0) {
            mant <<= 1;
            --e;
        }
        bits = sign | (static_cast<uint32_t>(e) << 23) | ((mant & 0x3ff) << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

NPUEMU_ALWAYS_INLINE float bf16_bits_to_float(uint16_t h)
{
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

template <class T>
struct is_arith : std::integral_constant<bool, std::is_arithmetic<T>::value> {};

} // namespace npuemu

#define NPUEMU_DEFINE_16BIT_FLOAT(NAME, EBITS, MBITS, TO_FLOAT)                                     \
    struct NAME {                                                                                   \
        uint16_t bits_;                                                                             \
        NAME() = default;                                                                           \
        template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>    \
        NPUEMU_ALWAYS_INLINE NAME(T v) : bits_(static_cast<uint16_t>(                               \
                        npuemu::round_from_double<EBITS, MBITS>(static_cast<double>(v))))           \
        {                                                                                           \
        }                                                                                           \
        NPUEMU_ALWAYS_INLINE operator float() const { return TO_FLOAT(bits_); }                     \
        static NAME from_bits(uint16_t b)                                                           \
        {                                                                                           \
            NAME h;                                                                                 \
            h.bits_ = b;                                                                            \
            return h;                                                                               \
        }                                                                                           \
        uint16_t to_bits() const { return bits_; }                                                  \
        NAME operator-() const { return from_bits(static_cast<uint16_t>(bits_ ^ 0x8000)); }         \
        NAME operator+() const { return *this; }                                                    \
        NAME &operator++() { return *this = NAME(float(*this) + 1.0f); }                            \
        NAME &operator--() { return *this = NAME(float(*this) - 1.0f); }                            \
        NAME operator++(int) { NAME o = *this; ++*this; return o; }                                 \
        NAME operator--(int) { NAME o = *this; --*this; return o; }                                 \
    };

NPUEMU_DEFINE_16BIT_FLOAT(half, 5, 10, npuemu::half_bits_to_float)
NPUEMU_DEFINE_16BIT_FLOAT(bfloat16_t, 8, 7, npuemu::bf16_bits_to_float)

namespace npuemu {
/* Result type of a mixed expression with a 16-bit float H and another arithmetic type T. */
template <class H, class T, bool = std::is_floating_point<T>::value>
struct mixed { using type = H; };
template <class H, class T>
struct mixed<H, T, true> { using type = typename std::conditional<(sizeof(T) > sizeof(float)), T, float>::type; };
} // namespace npuemu

#define NPUEMU_16BIT_OPS(NAME)                                                                      \
    inline NAME operator+(NAME a, NAME b) { return NAME(float(a) + float(b)); }                     \
    inline NAME operator-(NAME a, NAME b) { return NAME(float(a) - float(b)); }                     \
    inline NAME operator*(NAME a, NAME b) { return NAME(float(a) * float(b)); }                     \
    inline NAME operator/(NAME a, NAME b) { return NAME(float(a) / float(b)); }                     \
    inline bool operator==(NAME a, NAME b) { return float(a) == float(b); }                         \
    inline bool operator!=(NAME a, NAME b) { return float(a) != float(b); }                         \
    inline bool operator<(NAME a, NAME b) { return float(a) < float(b); }                           \
    inline bool operator>(NAME a, NAME b) { return float(a) > float(b); }                           \
    inline bool operator<=(NAME a, NAME b) { return float(a) <= float(b); }                         \
    inline bool operator>=(NAME a, NAME b) { return float(a) >= float(b); }                         \
    NPUEMU_16BIT_MIXED(NAME, +) NPUEMU_16BIT_MIXED(NAME, -) NPUEMU_16BIT_MIXED(NAME, *)             \
    NPUEMU_16BIT_MIXED(NAME, /)                                                                     \
    NPUEMU_16BIT_CMP(NAME, ==) NPUEMU_16BIT_CMP(NAME, !=) NPUEMU_16BIT_CMP(NAME, <)                 \
    NPUEMU_16BIT_CMP(NAME, >) NPUEMU_16BIT_CMP(NAME, <=) NPUEMU_16BIT_CMP(NAME, >=)                 \
    inline NAME &operator+=(NAME &a, NAME b) { return a = a + b; }                                  \
    inline NAME &operator-=(NAME &a, NAME b) { return a = a - b; }                                  \
    inline NAME &operator*=(NAME &a, NAME b) { return a = a * b; }                                  \
    inline NAME &operator/=(NAME &a, NAME b) { return a = a / b; }

#define NPUEMU_16BIT_MIXED(NAME, OP)                                                                \
    template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>        \
    inline typename npuemu::mixed<NAME, T>::type operator OP(NAME a, T b)                           \
    {                                                                                               \
        using R = typename npuemu::mixed<NAME, T>::type;                                            \
        using C = typename std::conditional<std::is_same<R, NAME>::value, float, R>::type;          \
        return R(static_cast<C>(a) OP static_cast<C>(b));                                           \
    }                                                                                               \
    template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>        \
    inline typename npuemu::mixed<NAME, T>::type operator OP(T a, NAME b)                           \
    {                                                                                               \
        using R = typename npuemu::mixed<NAME, T>::type;                                            \
        using C = typename std::conditional<std::is_same<R, NAME>::value, float, R>::type;          \
        return R(static_cast<C>(a) OP static_cast<C>(b));                                           \
    }

#define NPUEMU_16BIT_CMP(NAME, OP)                                                                  \
    template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>        \
    inline bool operator OP(NAME a, T b)                                                            \
    {                                                                                               \
        return static_cast<double>(float(a)) OP static_cast<double>(b);                             \
    }                                                                                               \
    template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>        \
    inline bool operator OP(T a, NAME b)                                                            \
    {                                                                                               \
        return static_cast<double>(a) OP static_cast<double>(float(b));                             \
    }

NPUEMU_16BIT_OPS(half)
NPUEMU_16BIT_OPS(bfloat16_t)

#undef NPUEMU_16BIT_OPS
#undef NPUEMU_16BIT_MIXED
#undef NPUEMU_16BIT_CMP
#undef NPUEMU_DEFINE_16BIT_FLOAT

static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit element types");
static_assert(std::is_trivially_copyable<half>::value, "half is a plain 16-bit value");

#endif /* NPUEMU_HALF_H */
