/*
 * npu-emu: CANN's `aclnn/opdev/fp16_t.h`, the host half-precision type `op::fp16_t` the
 * operator reference's example programs fill their float16 buffers with
 * (`std::vector<op::fp16_t> q(n, 1.0)`, `static_cast<float>(result[i])`). Written by hand:
 * two bytes holding IEEE binary16 bits in `val`; built from any arithmetic value (rounded to
 * nearest, ties to even; overflow to infinity; NaN kept), converted back exactly, and
 * arithmetic and comparisons computed in float.
 */
#ifndef OP_API_OP_API_COMMON_INC_OPDEV_FP16_T_H
#define OP_API_OP_API_COMMON_INC_OPDEV_FP16_T_H

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace op {

struct fp16_t {
    uint16_t val;

    fp16_t() : val(0) {}
    fp16_t(const fp16_t &other) = default;
    fp16_t &operator=(const fp16_t &other) = default;
    /* Any arithmetic value, converted (not reinterpreted) to half precision. */
    template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
    fp16_t(const T &value) : val(FromFloat(static_cast<float>(value))) {}
    template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
    fp16_t &operator=(const T &value) {
        val = FromFloat(static_cast<float>(value));
        return *this;
    }

    float ToFloat() const { return ToFloatBits(val); }
    double ToDouble() const { return static_cast<double>(ToFloat()); }
    int8_t ToInt8() const { return static_cast<int8_t>(ToFloat()); }
    uint8_t ToUInt8() const { return static_cast<uint8_t>(ToFloat()); }
    int16_t ToInt16() const { return static_cast<int16_t>(ToFloat()); }
    uint16_t ToUInt16() const { return static_cast<uint16_t>(ToFloat()); }
    int32_t ToInt32() const { return static_cast<int32_t>(ToFloat()); }
    uint32_t ToUInt32() const { return static_cast<uint32_t>(ToFloat()); }
    int IsInf() const { return (val & 0x7FFFu) == 0x7C00u ? ((val & 0x8000u) ? -1 : 1) : 0; }

    operator float() const { return ToFloat(); }
    operator double() const { return ToDouble(); }
    operator int8_t() const { return ToInt8(); }
    operator uint8_t() const { return ToUInt8(); }
    operator int16_t() const { return ToInt16(); }
    operator uint16_t() const { return ToUInt16(); }
    operator int32_t() const { return ToInt32(); }
    operator uint32_t() const { return ToUInt32(); }
    operator int64_t() const { return static_cast<int64_t>(ToFloat()); }
    operator uint64_t() const { return static_cast<uint64_t>(ToFloat()); }

    fp16_t operator+(const fp16_t &o) const { return fp16_t(ToFloat() + o.ToFloat()); }
    fp16_t operator-(const fp16_t &o) const { return fp16_t(ToFloat() - o.ToFloat()); }
    fp16_t operator*(const fp16_t &o) const { return fp16_t(ToFloat() * o.ToFloat()); }
    fp16_t operator/(const fp16_t &o) const { return fp16_t(ToFloat() / o.ToFloat()); }
    fp16_t operator-() const {
        fp16_t r;
        r.val = static_cast<uint16_t>(val ^ 0x8000u);
        return r;
    }
    fp16_t &operator+=(const fp16_t &o) { return *this = *this + o; }
    fp16_t &operator-=(const fp16_t &o) { return *this = *this - o; }
    fp16_t &operator*=(const fp16_t &o) { return *this = *this * o; }
    fp16_t &operator/=(const fp16_t &o) { return *this = *this / o; }
    bool operator==(const fp16_t &o) const { return ToFloat() == o.ToFloat(); }
    bool operator!=(const fp16_t &o) const { return ToFloat() != o.ToFloat(); }
    bool operator<(const fp16_t &o) const { return ToFloat() < o.ToFloat(); }
    bool operator<=(const fp16_t &o) const { return ToFloat() <= o.ToFloat(); }
    bool operator>(const fp16_t &o) const { return ToFloat() > o.ToFloat(); }
    bool operator>=(const fp16_t &o) const { return ToFloat() >= o.ToFloat(); }

    /* IEEE binary16 bits of `f`: round to nearest, ties to even. */
    static uint16_t FromFloat(float f) {
        uint32_t x;
        std::memcpy(&x, &f, sizeof(x));
        const uint32_t sign = (x >> 16) & 0x8000u;
        const uint32_t absx = x & 0x7FFFFFFFu;
        if (absx >= 0x7F800000u) { /* inf or NaN */
            return static_cast<uint16_t>(sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u | ((absx >> 13) & 0x3FFu) : 0u));
        }
        if (absx >= 0x477FF000u) { /* rounds to at least 65520: infinity */
            return static_cast<uint16_t>(sign | 0x7C00u);
        }
        if (absx < 0x38800000u) { /* below the smallest normal half: a subnormal or zero */
            if (absx < 0x33000000u) {
                return static_cast<uint16_t>(sign);
            }
            const uint32_t exp = absx >> 23;
            const uint32_t mant = (absx & 0x7FFFFFu) | 0x800000u;
            const uint32_t shift = 126u - exp; /* 14..24 */
            uint32_t h = mant >> shift;
            const uint32_t rest = mant & ((1u << shift) - 1u);
            const uint32_t half = 1u << (shift - 1u);
            if (rest > half || (rest == half && (h & 1u))) {
                h++;
            }
            return static_cast<uint16_t>(sign | h);
        }
        uint32_t h = ((absx - 0x38000000u) >> 13); /* rebias the exponent 127 -> 15 */
        const uint32_t rest = absx & 0x1FFFu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) {
            h++;
        }
        return static_cast<uint16_t>(sign | h);
    }

    /* The float `bits` (binary16) holds, exactly. */
    static float ToFloatBits(uint16_t bits) {
        const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
        uint32_t exp = (bits >> 10) & 0x1Fu;
        uint32_t mant = bits & 0x3FFu;
        uint32_t x;
        if (exp == 0x1Fu) {
            x = sign | 0x7F800000u | (mant << 13);
        } else if (exp != 0) {
            x = sign | ((exp + 112u) << 23) | (mant << 13);
        } else if (mant == 0) {
            x = sign;
        } else { /* subnormal: normalise */
            exp = 113u;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                exp--;
            }
            x = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
        }
        float f;
        std::memcpy(&f, &x, sizeof(f));
        return f;
    }
};

static_assert(sizeof(fp16_t) == 2, "op::fp16_t is two bytes, as a float16 tensor element");

}  // namespace op

#endif /* OP_API_OP_API_COMMON_INC_OPDEV_FP16_T_H */
