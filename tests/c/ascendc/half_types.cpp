/* The headers' `half` and `bfloat16_t` against GCC's _Float16 and a bit-level bfloat16 reference:
 * every half -> float, many float and double -> half / bfloat16_t roundings (ties, overflow,
 * subnormals, NaN), and the arithmetic and mixed-type rules. */
#include "kernel_operator.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

#include "host_f16.h"

static int fails = 0;
#define EXPECT(c)                                                                                   \
    do {                                                                                            \
        if (!(c)) {                                                                                 \
            std::fprintf(stderr, "line %d: %s\n", __LINE__, #c);                                    \
            if (++fails > 20) return 1;                                                             \
        }                                                                                           \
    } while (0)

static uint16_t bf16_ref(double d) /* round a double to bfloat16, nearest even, via float bits */
{
    const float f = (float)d; /* exact for the test values below (they are floats) */
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) return (uint16_t)((u >> 16) | 0x40);
    const uint32_t lsb = (u >> 16) & 1;
    u += 0x7fff + lsb;
    return (uint16_t)(u >> 16);
}

int main()
{
    for (uint32_t b = 0; b < 65536; ++b) {
        const float want = (float)f16_from_bits((uint16_t)b), got = (float)half::from_bits((uint16_t)b);
        if (std::isnan(want)) {
            EXPECT(std::isnan(got));
        } else {
            EXPECT(std::memcmp(&want, &got, 4) == 0);
        }
        /* float -> half round trip of every half, and of the midpoints between neighbours */
        if (!std::isnan(want)) {
            EXPECT(half(want).to_bits() == f16_bits((_Float16)want));
        }
        const uint16_t nb = (uint16_t)(b + 1);
        if ((b & 0x7c00) != 0x7c00 && (nb & 0x7fff) != 0 && ((nb & 0x7c00) != 0x7c00) && ((b ^ nb) & 0x8000) == 0) {
            const double mid = ((double)(float)f16_from_bits((uint16_t)b) + (double)(float)f16_from_bits(nb)) / 2;
            EXPECT(half(mid).to_bits() == f16_bits((_Float16)mid));
            EXPECT(half(std::nextafter(mid, 0.0)).to_bits() == f16_bits((_Float16)std::nextafter(mid, 0.0)));
            EXPECT(half(std::nextafter(mid, 1e9 * mid)).to_bits() == f16_bits((_Float16)std::nextafter(mid, 1e9 * mid)));
        }
    }
    /* doubles just beyond a float-representable midpoint: rounding straight from the double */
    const double tricky = 1.0 + 1.0 / 2048 + 1e-12;
    EXPECT(half(tricky).to_bits() == f16_bits((_Float16)tricky));
    EXPECT(half(tricky).to_bits() == 0x3c01);
    EXPECT(half(65519.0).to_bits() == 0x7bff);
    EXPECT(half(65520.0).to_bits() == 0x7c00);
    EXPECT(half(-1e9).to_bits() == 0xfc00);
    EXPECT(half(std::ldexp(1.0, -25)).to_bits() == 0x0000);              /* tie to even: 0 */
    EXPECT(half(std::ldexp(1.0, -25) * 1.0000001).to_bits() == 0x0001); /* above the tie */
    EXPECT(half(std::ldexp(3.0, -25)).to_bits() == 0x0002);              /* tie to even: 2 */
    EXPECT(std::isnan((float)half(NAN)));
    EXPECT(half(7).to_bits() == 0x4700);
    /* bfloat16_t */
    for (uint32_t i = 0; i < 200000; ++i) {
        uint32_t u = i * 2654435761u;
        float f;
        std::memcpy(&f, &u, 4);
        if (std::isnan(f)) continue;
        EXPECT(bfloat16_t(f).to_bits() == bf16_ref(f));
        uint32_t back = (uint32_t)bfloat16_t(f).to_bits() << 16;
        float fb;
        std::memcpy(&fb, &back, 4);
        EXPECT((float)bfloat16_t(f) == fb || std::isnan(fb));
    }
    /* arithmetic: computed in float, rounded to half */
    half a = 1.0f, b = half(1.0 / 2048);
    EXPECT((a + b).to_bits() == 0x3c00); /* 1 + 2^-11 ties to even */
    EXPECT((a + b + b).to_bits() == 0x3c00);
    EXPECT((half(1000.0f) * half(1000.0f)).to_bits() == 0x7c00); /* overflow to inf */
    EXPECT((half(1.0f) / half(3.0f)).to_bits() == f16_bits((_Float16)(1.0f / 3.0f)));
    static_assert(std::is_same<decltype(a + 1), half>::value, "half + int is half");
    static_assert(std::is_same<decltype(a + 1.0f), float>::value, "half + float is float");
    static_assert(std::is_same<decltype(2.0 * a), double>::value, "double * half is double");
    EXPECT(a + 1.0f == 2.0f);
    EXPECT(a < 2 && a >= 1.0 && !(a != 1));
    half c = a;
    c += half(0.5f);
    c *= 2;
    EXPECT(c == 3);
    EXPECT(-c == -3.0f);
    EXPECT(static_cast<int>(half(2.75f)) == 2);
    EXPECT((bfloat16_t(1.0f) + bfloat16_t(1.0f / 256)).to_bits() == 0x3f80);
    /* scalar conversions */
    EXPECT((AscendC::Cast<float, int32_t, AscendC::RoundMode::CAST_ROUND>(2.5f)) == 3);
    EXPECT((AscendC::Cast<float, int32_t, AscendC::RoundMode::CAST_RINT>(2.5f)) == 2);
    EXPECT((AscendC::Cast<float, int32_t, AscendC::RoundMode::CAST_FLOOR>(-2.5f)) == -3);
    EXPECT((AscendC::Cast<float, half, AscendC::RoundMode::CAST_ODD>(1.0f + 1.0f / 4096)).to_bits() == 0x3c01);
    EXPECT(AscendC::ToFloat(AscendC::ToBfloat16(3.0f)) == 3.0f);
    if (fails == 0) {
        std::printf("half/bfloat16_t: PASS\n");
    }
    return fails;
}
