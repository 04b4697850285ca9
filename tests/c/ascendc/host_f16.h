/* Host-side helpers for the Ascend C tests: an fp16 reference independent of the kernel headers
 * (GCC's _Float16, correctly rounded), deterministic inputs, and checks. */
#ifndef HOST_F16_H
#define HOST_F16_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static inline uint16_t f16_bits(_Float16 h)
{
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
}
static inline _Float16 f16_from_bits(uint16_t b)
{
    _Float16 h;
    std::memcpy(&h, &b, 2);
    return h;
}
/* Deterministic pseudo-random fp16 values in [-range, range). */
static inline void fill_f16(void *p, size_t n, uint32_t seed, float range)
{
    uint16_t *d = static_cast<uint16_t *>(p);
    uint32_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        float v = (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f) * range;
        d[i] = f16_bits(static_cast<_Float16>(v));
    }
}
static inline float f16_val(const void *p, size_t i)
{
    return static_cast<float>(f16_from_bits(static_cast<const uint16_t *>(p)[i]));
}
/* Exact check: got[i] must be the fp16 rounding of want(i). Prints the first mismatch. */
template <class F>
static inline int check_f16(const char *what, const void *got, size_t n, F want)
{
    const uint16_t *g = static_cast<const uint16_t *>(got);
    for (size_t i = 0; i < n; ++i) {
        const uint16_t w = f16_bits(static_cast<_Float16>(want(i)));
        if (g[i] != w) {
            std::fprintf(stderr, "%s: element %zu is 0x%04x (%g), expected 0x%04x (%g)\n", what, i, g[i],
                         static_cast<double>(static_cast<float>(f16_from_bits(g[i]))), w,
                         static_cast<double>(static_cast<float>(f16_from_bits(w))));
            return 1;
        }
    }
    return 0;
}

#endif /* HOST_F16_H */
