/* Every vector operation and Cast of the kernel headers against a host reference computed
 * independently of them (GCC's _Float16 for fp16; the neighbours of x enumerated from all 16-bit
 * patterns for the rounding modes). Prints one "PASS <op> <type>" line per case; exits with the
 * number of failures. */
#include "tikicpulib.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "host_f16.h"
#include "vec_ops.h"

extern "C" __global__ __aicore__ void vec_ops_half(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n);
extern "C" __global__ __aicore__ void vec_ops_float(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n);
extern "C" __global__ __aicore__ void vec_ops_int16(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n);
extern "C" __global__ __aicore__ void vec_ops_int32(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n);
extern "C" __global__ __aicore__ void level0_ops(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t which);
extern "C" __global__ __aicore__ void atomic_ops(GM_ADDR x, GM_ADDR z, uint32_t op);
extern "C" __global__ __aicore__ void cmpsel_ops(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t which);
extern "C" __global__ __aicore__ void cast_ops(GM_ADDR x, GM_ADDR z, uint32_t kind, uint32_t mode, uint32_t n);

static const char *op_names[OP_COUNT] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls",
                                         "Maxs", "Mins", "Exp", "Ln", "Abs", "Sqrt", "Relu", "Rsqrt",
                                         "Reciprocal", "LeakyRelu", "Duplicate", "And", "Or", "Not"};

static const uint32_t PER_BLOCK = 77, BLOCKS = 2, TOTAL = PER_BLOCK * BLOCKS;
static int failures = 0;

static bool positive_input(int op) { return op == OP_LN || op == OP_SQRT || op == OP_RSQRT; }

/* Floating reference: value computed in float (or double for float) by the obvious formula. */
template <class F>
static F fp_ref(int op, F a, F b, F s)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_MAX: return a > b ? a : b;
    case OP_MIN: return a < b ? a : b;
    case OP_ADDS: return a + s;
    case OP_MULS: return a * s;
    case OP_MAXS: return a > s ? a : s;
    case OP_MINS: return a < s ? a : s;
    case OP_EXP: return std::exp(a);
    case OP_LN: return std::log(a);
    case OP_ABS: return std::fabs(a);
    case OP_SQRT: return std::sqrt(a);
    case OP_RELU: return a > 0 ? a : F(0);
    case OP_RSQRT: return F(1) / std::sqrt(a);
    case OP_RECIP: return F(1) / a;
    case OP_LEAKY: return a >= 0 ? a : a * s;
    case OP_DUP: return s;
    default: return 0;
    }
}

template <class I>
static I int_ref(int op, I a, I b, I s)
{
    int64_t r = 0;
    switch (op) {
    case OP_ADD: r = int64_t(a) + b; break;
    case OP_SUB: r = int64_t(a) - b; break;
    case OP_MUL: r = int64_t(a) * b; break;
    case OP_MAX: r = a > b ? a : b; break;
    case OP_MIN: r = a < b ? a : b; break;
    case OP_ADDS: r = int64_t(a) + s; break;
    case OP_MULS: r = int64_t(a) * s; break;
    case OP_MAXS: r = a > s ? a : s; break;
    case OP_MINS: r = a < s ? a : s; break;
    case OP_RELU: r = a > 0 ? a : 0; break;
    case OP_DUP: r = s; break;
    case OP_AND: r = a & b; break;
    case OP_OR: r = a | b; break;
    case OP_NOT: r = ~a; break;
    default: break;
    }
    return static_cast<I>(static_cast<uint64_t>(r));
}

typedef void (*Kernel)(GM_ADDR, GM_ADDR, GM_ADDR, uint32_t, uint32_t);

template <class Fill, class Check>
static void run_case(const char *type, int op, Kernel k, size_t elem, Fill fill, Check check)
{
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(TOTAL * elem);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(TOTAL * elem);
    uint8_t *z = (uint8_t *)AscendC::GmAlloc(TOTAL * elem);
    fill(x, y);
    ICPU_RUN_KF(k, BLOCKS, x, y, z, (uint32_t)op, PER_BLOCK);
    if (check(x, y, z)) {
        std::printf("FAIL %s %s\n", op_names[op], type);
        failures++;
    } else {
        std::printf("PASS %s %s\n", op_names[op], type);
    }
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
}

static void test_half(int op)
{
    run_case(
        "half", op, vec_ops_half, 2,
        [&](uint8_t *x, uint8_t *y) {
            fill_f16(x, TOTAL, 10 + op, positive_input(op) ? 60.0f : 6.0f);
            fill_f16(y, TOTAL, 20 + op, 8.0f);
            uint16_t *xx = (uint16_t *)x, *yy = (uint16_t *)y;
            for (uint32_t i = 0; i < TOTAL; ++i) {
                if (positive_input(op)) xx[i] = f16_bits((_Float16)std::fabs((float)f16_from_bits(xx[i])) + (_Float16)0.25f);
                if (f16_from_bits(yy[i]) == (_Float16)0.0f) yy[i] = f16_bits((_Float16)1.0f);
            }
        },
        [&](uint8_t *x, uint8_t *y, uint8_t *z) {
            return check_f16(op_names[op], z, TOTAL,
                             [&](size_t i) { return fp_ref<float>(op, f16_val(x, i), f16_val(y, i), 1.5f); });
        });
}

static void test_float(int op)
{
    run_case(
        "float", op, vec_ops_float, 4,
        [&](uint8_t *x, uint8_t *y) {
            float *xx = (float *)x, *yy = (float *)y;
            for (uint32_t i = 0; i < TOTAL; ++i) {
                xx[i] = (float)((int)(i * 7919 % 2001) - 1000) / 37.0f;
                if (positive_input(op)) xx[i] = std::fabs(xx[i]) + 0.25f;
                yy[i] = (float)((int)(i * 104729 % 1999) - 999) / 13.0f;
                if (yy[i] == 0.0f) yy[i] = 1.0f;
            }
        },
        [&](uint8_t *x, uint8_t *y, uint8_t *z) {
            const float *xx = (const float *)x, *yy = (const float *)y, *zz = (const float *)z;
            for (uint32_t i = 0; i < TOTAL; ++i) {
                const float w = fp_ref<float>(op, xx[i], yy[i], 1.5f);
                if (std::memcmp(&w, &zz[i], 4) != 0) {
                    std::fprintf(stderr, "%s float: element %u is %g, expected %g\n", op_names[op], i, zz[i], w);
                    return 1;
                }
            }
            return 0;
        });
}

template <class I>
static void test_int(const char *type, int op, Kernel k)
{
    run_case(
        type, op, k, sizeof(I),
        [&](uint8_t *x, uint8_t *y) {
            I *xx = (I *)x, *yy = (I *)y;
            for (uint32_t i = 0; i < TOTAL; ++i) {
                xx[i] = static_cast<I>(static_cast<uint64_t>(i * 2654435761u) >> 7);
                yy[i] = static_cast<I>(static_cast<uint64_t>(i * 40503u + 17u));
            }
            xx[0] = std::numeric_limits<I>::max(); /* wraps on Add / Mul */
            yy[0] = 2;
        },
        [&](uint8_t *x, uint8_t *y, uint8_t *z) {
            const I *xx = (const I *)x, *yy = (const I *)y, *zz = (const I *)z;
            for (uint32_t i = 0; i < TOTAL; ++i) {
                const I w = int_ref<I>(op, xx[i], yy[i], 3);
                if (w != zz[i]) {
                    std::fprintf(stderr, "%s %s: element %u is %lld, expected %lld\n", op_names[op], type, i,
                                 (long long)zz[i], (long long)w);
                    return 1;
                }
            }
            return 0;
        });
}

/* ---- Cast reference: round x to a 16-bit float format by enumerating its values ---- */

struct Table {
    std::vector<std::pair<double, uint16_t>> v; /* finite and infinite values, sorted; no -0 */
};

static Table make_table(double (*decode)(uint16_t))
{
    Table t;
    for (uint32_t b = 0; b < 65536; ++b) {
        const double d = decode((uint16_t)b);
        if (std::isnan(d) || (d == 0 && (b & 0x8000))) continue;
        t.v.push_back({d, (uint16_t)b});
    }
    std::sort(t.v.begin(), t.v.end());
    return t;
}
static double dec_f16(uint16_t b) { return (double)(float)f16_from_bits(b); }
static double dec_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

/* x rounded into the table with a RoundMode (1 RINT, 2 FLOOR, 3 CEIL, 4 ROUND, 5 TRUNC, 6 ODD);
 * `overflow` is the first value beyond the largest finite one (where ties to infinity are decided). */
static uint16_t ref_round(const Table &t, double x, int mode, double overflow)
{
    auto it = std::lower_bound(t.v.begin(), t.v.end(), std::make_pair(x, (uint16_t)0));
    if (it != t.v.end() && it->first == x) return it->second;
    const auto hi = *it, lo = *(it - 1);
    auto val = [&](const std::pair<double, uint16_t> &p) {
        return std::isinf(p.first) ? (p.first > 0 ? overflow : -overflow) : p.first;
    };
    const double dl = x - val(lo), dh = val(hi) - x;
    const bool hi_smaller_mag = std::fabs(val(hi)) < std::fabs(val(lo));
    switch (mode) {
    case 2: return lo.second;
    case 3: return hi.second;
    case 5: return hi_smaller_mag ? hi.second : lo.second;
    case 4:
        if (dl != dh) return dl < dh ? lo.second : hi.second;
        return hi_smaller_mag ? lo.second : hi.second;
    case 6: {
        const auto &tr = hi_smaller_mag ? hi : lo, &aw = hi_smaller_mag ? lo : hi;
        if (std::isinf(tr.first)) return aw.second;
        return (tr.second & 1) ? tr.second : (std::isinf(aw.first) ? tr.second : aw.second);
    }
    default:
        if (dl != dh) return dl < dh ? lo.second : hi.second;
        return (lo.second & 1) ? hi.second : lo.second;
    }
}

static int32_t ref_int(double x, int mode)
{
    double r;
    switch (mode) {
    case 2: r = std::floor(x); break;
    case 3: r = std::ceil(x); break;
    case 4: r = std::round(x); break;
    case 5: r = std::trunc(x); break;
    case 6: r = std::trunc(x); if (r != x && std::fmod(r, 2.0) == 0) r += x < 0 ? -1 : 1; break;
    default: r = std::nearbyint(x); break;
    }
    if (r >= 2147483647.0) return INT32_MAX;
    if (r <= -2147483648.0) return INT32_MIN;
    return (int32_t)r;
}

static double ref_integral(double x, int mode) { return mode == 0 ? x : (double)ref_int(x, mode) ; }

static void run_cast(const char *name, uint32_t kind, uint32_t mode, const std::vector<uint8_t> &in, size_t din,
                     size_t dout, const std::function<int(const uint8_t *, const uint8_t *, size_t)> &check)
{
    const size_t n = in.size() / din;
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(in.size());
    uint8_t *z = (uint8_t *)AscendC::GmAlloc(n * dout);
    std::memcpy(x, in.data(), in.size());
    ICPU_RUN_KF(cast_ops, 1, x, z, kind, mode, (uint32_t)n);
    if (check(x, z, n)) {
        std::printf("FAIL Cast %s mode %u\n", name, mode);
        failures++;
    } else {
        std::printf("PASS Cast %s mode %u\n", name, mode);
    }
    AscendC::GmFree(x);
    AscendC::GmFree(z);
}

static void test_cast()
{
    /* floats: ties and near-ties of fp16 / bf16 / integers, overflow, subnormal range */
    std::vector<float> f = {0.0f, 1.0f, -1.0f, 2.5f, -2.5f, 3.5f, -3.5f, 0.5f, -0.5f, 1.4999f, 7.0f,
                            1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -(1.0f + 1.0f / 2048), 1.0f + 1.0f / 4096,
                            65504.0f, 65519.0f, 65520.0f, 70000.0f, -70000.0f, 1e-8f, -1e-8f, 2.98e-8f,
                            5.96e-8f * 1.5f, 6.1e-5f, 3.0e9f, -3.0e9f, 123456.789f, 1.00390625f, 1.01171875f,
                            -1.00390625f, 3.4e38f, 16777216.0f};
    for (int i = 0; i < 64; ++i) f.push_back(((float)(i * 7919 % 1000) - 500.0f) / 7.3f);
    while (f.size() % 16) f.push_back(0.25f);
    std::vector<uint8_t> fin(f.size() * 4);
    std::memcpy(fin.data(), f.data(), fin.size());
    static const Table t16 = make_table(dec_f16), tbf = make_table(dec_bf16);
    for (uint32_t mode = 0; mode <= 6; ++mode) {
        const int m = mode == 0 ? 1 : (int)mode;
        run_cast("float->half", CAST_F32_F16, mode, fin, 4, 2, [&](const uint8_t *x, const uint8_t *z, size_t n) {
            for (size_t i = 0; i < n; ++i) {
                const float v = ((const float *)x)[i];
                const uint16_t w = ref_round(t16, v, m, 65536.0), g = ((const uint16_t *)z)[i];
                if (w != g && !(dec_f16(w) == 0 && dec_f16(g) == 0)) {
                    std::fprintf(stderr, "Cast float->half mode %u: %.9g -> 0x%04x, expected 0x%04x\n", mode, v, g, w);
                    return 1;
                }
            }
            return 0;
        });
        run_cast("float->bfloat16_t", CAST_F32_BF16, mode, fin, 4, 2, [&](const uint8_t *x, const uint8_t *z, size_t n) {
            for (size_t i = 0; i < n; ++i) {
                const float v = ((const float *)x)[i];
                const uint16_t w = ref_round(tbf, v, m, std::ldexp(1.0, 128)), g = ((const uint16_t *)z)[i];
                if (w != g && !(dec_bf16(w) == 0 && dec_bf16(g) == 0)) {
                    std::fprintf(stderr, "Cast float->bf16 mode %u: %.9g -> 0x%04x, expected 0x%04x\n", mode, v, g, w);
                    return 1;
                }
            }
            return 0;
        });
        run_cast("float->int32_t", CAST_F32_S32, mode, fin, 4, 4, [&](const uint8_t *x, const uint8_t *z, size_t n) {
            for (size_t i = 0; i < n; ++i) {
                const float v = ((const float *)x)[i];
                const int32_t w = ref_int(v, m), g = ((const int32_t *)z)[i];
                if (w != g) {
                    std::fprintf(stderr, "Cast float->int32 mode %u: %.9g -> %d, expected %d\n", mode, v, g, w);
                    return 1;
                }
            }
            return 0;
        });
        run_cast("float->float", CAST_F32_F32, mode, fin, 4, 4, [&](const uint8_t *x, const uint8_t *z, size_t n) {
            for (size_t i = 0; i < n; ++i) {
                const float v = ((const float *)x)[i];
                if (std::fabs(v) > 2e9f) continue; /* beyond int32: the reference saturates */
                const float w = (float)ref_integral(v, (int)mode), g = ((const float *)z)[i];
                if (w != g) {
                    std::fprintf(stderr, "Cast float->float mode %u: %.9g -> %.9g, expected %.9g\n", mode, v, g, w);
                    return 1;
                }
            }
            return 0;
        });
    }
    /* half -> float (exact) and half -> int32 */
    std::vector<uint8_t> hin(2 * 512);
    for (int i = 0; i < 512; ++i) {
        const uint16_t b = (uint16_t)(i * 127 + 3) & 0x7bff; /* finite */
        std::memcpy(&hin[2 * i], &b, 2);
    }
    run_cast("half->float", CAST_F16_F32, 0, hin, 2, 4, [&](const uint8_t *x, const uint8_t *z, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            if (((const float *)z)[i] != (float)f16_from_bits(((const uint16_t *)x)[i])) return 1;
        }
        return 0;
    });
    for (uint32_t mode = 1; mode <= 5; ++mode) {
        run_cast("half->int32_t", CAST_F16_S32, mode, hin, 2, 4, [&](const uint8_t *x, const uint8_t *z, size_t n) {
            for (size_t i = 0; i < n; ++i) {
                if (((const int32_t *)z)[i] != ref_int(dec_f16(((const uint16_t *)x)[i]), (int)mode)) return 1;
            }
            return 0;
        });
    }
    /* int32 -> float: directed rounding above 2^24 */
    std::vector<int32_t> iv = {0, 1, -1, 16777217, -16777217, 16777219, 2147483647, -2147483647 - 1, 123456789};
    while (iv.size() % 8) iv.push_back(5);
    std::vector<uint8_t> iin(iv.size() * 4);
    std::memcpy(iin.data(), iv.data(), iin.size());
    for (uint32_t mode = 0; mode <= 5; ++mode) {
        run_cast("int32_t->float", CAST_S32_F32, mode, iin, 4, 4, [&](const uint8_t *x, const uint8_t *z, size_t n) {
            for (size_t i = 0; i < n; ++i) {
                const double v = ((const int32_t *)x)[i];
                float r = (float)v, lo = r, hi = r;
                if ((double)r > v) lo = std::nextafter(r, -INFINITY);
                if ((double)r < v) hi = std::nextafter(r, INFINITY);
                float w = r;
                if (mode == 2) w = lo;
                if (mode == 3) w = hi;
                if (mode == 5) w = std::fabs(lo) < std::fabs(hi) ? lo : hi;
                if (mode == 4 && v - lo == hi - v) w = v > 0 ? hi : lo;
                if (((const float *)z)[i] != w) {
                    std::fprintf(stderr, "Cast int32->float mode %u: %.0f -> %.9g, expected %.9g\n", mode, v,
                                 ((const float *)z)[i], w);
                    return 1;
                }
            }
            return 0;
        });
    }
}

/* Level-0 forms: the expected z computed from the mask / repeat / stride rules by hand. */
static void test_level0()
{
    for (uint32_t which = 0; which < 6; ++which) {
        const bool h = which == 0 || which == 2 || which == 4;
        uint8_t *x = (uint8_t *)AscendC::GmAlloc(1024), *y = (uint8_t *)AscendC::GmAlloc(1024),
                *z = (uint8_t *)AscendC::GmAlloc(1024);
        if (h) {
            fill_f16(x, 512, 40 + which, 4.0f);
            fill_f16(y, 512, 50 + which, 4.0f);
        } else {
            for (int i = 0; i < 256; ++i) {
                ((float *)x)[i] = (float)(i % 37) - 18.5f;
                ((float *)y)[i] = (float)(i % 11) * 0.75f;
            }
        }
        ICPU_RUN_KF(level0_ops, 1, x, y, z, which);
        std::vector<float> want(h ? 512 : 256, 0.0f);
        auto xv = [&](int i) { return h ? f16_val(x, i) : ((float *)x)[i]; };
        auto yv = [&](int i) { return h ? f16_val(y, i) : ((float *)y)[i]; };
        if (which == 0)
            for (int i = 0; i < 256; ++i) want[i] = xv(i) + yv(i);
        if (which == 1)
            for (int r = 0; r < 3; ++r)
                for (int e = 0; e < 64; ++e)
                    if ((0xF0F0F0F0F0F0F0F0ull >> e) & 1) want[r * 64 + e] = xv(r * 64 + e) * yv(r * 64 + e);
        if (which == 2)
            for (int r = 0; r < 2; ++r)
                for (int e = 0; e < 64; ++e) want[r * 128 + e] = xv(r * 256 + (e / 16) * 32 + e % 16) + 2.0f;
        if (which == 3)
            for (int r = 0; r < 4; ++r)
                for (int e = 0; e < 16; ++e) want[r * 64 + e] = 7.0f;
        if (which == 4) want[64] = std::exp(xv(64));
        if (which == 5)
            for (int i = 0; i < 40; ++i) want[i] = xv(i) - yv(i);
        int bad = 0;
        for (size_t i = 0; i < want.size() && !bad; ++i) {
            const float got = h ? f16_val(z, i) : ((float *)z)[i];
            const float w = h ? (float)(_Float16)want[i] : want[i];
            if (got != w) {
                std::fprintf(stderr, "level-0 case %u: element %zu is %g, expected %g\n", which, i, got, w);
                bad = 1;
            }
        }
        std::printf("%s level0 case %u\n", bad ? "FAIL" : "PASS", which);
        failures += bad;
        AscendC::GmFree(x);
        AscendC::GmFree(y);
        AscendC::GmFree(z);
    }
}

/* Atomic add / max from 8 parallel blocks into one 64-element slice (integer-valued data, so the
 * order the blocks arrive in cannot change the result). */
static void test_atomic()
{
    for (uint32_t op = 0; op < 3; ++op) {
        uint8_t *x = (uint8_t *)AscendC::GmAlloc(8 * 64 * 4), *z = (uint8_t *)AscendC::GmAlloc(64 * 4);
        for (int i = 0; i < 8 * 64; ++i) {
            const int v = (i * 37) % 101 - 50;
            if (op == 0) ((float *)x)[i] = (float)v;
            if (op == 1) ((int32_t *)x)[i] = v * 1000;
            if (op == 2) ((uint16_t *)x)[i] = f16_bits((_Float16)v);
        }
        for (int i = 0; i < 64; ++i) {
            if (op == 0) ((float *)z)[i] = 0.5f;
            if (op == 1) ((int32_t *)z)[i] = 7;
            if (op == 2) ((uint16_t *)z)[i] = f16_bits((_Float16)1.0f);
        }
        ICPU_RUN_KF(atomic_ops, 8, x, z, op);
        int bad = 0;
        for (int i = 0; i < 64 && !bad; ++i) {
            double want = op == 0 ? 0.5 : op == 1 ? 7 : 1.0;
            if (op == 2 && i >= 20) {
                want = 1.0; /* DataCopyPad moved 20 elements */
            } else {
                for (int b = 0; b < 8; ++b) {
                    const double v = op == 0 ? ((float *)x)[b * 64 + i] : op == 1 ? ((int32_t *)x)[b * 64 + i]
                                                                                  : f16_val(x, b * 64 + i);
                    want = op == 1 ? (v > want ? v : want) : want + v;
                }
            }
            const double got = op == 0 ? ((float *)z)[i] : op == 1 ? ((int32_t *)z)[i] : f16_val(z, i);
            if (got != want) {
                std::fprintf(stderr, "atomic op %u: element %d is %g, expected %g\n", op, i, got, want);
                bad = 1;
            }
        }
        std::printf("%s atomic case %u\n", bad ? "FAIL" : "PASS", op);
        failures += bad;
        AscendC::GmFree(x);
        AscendC::GmFree(z);
    }
}

static void test_cmpsel()
{
    for (uint32_t which = 0; which < 2; ++which) {
        uint8_t *x = (uint8_t *)AscendC::GmAlloc(256), *y = (uint8_t *)AscendC::GmAlloc(256),
                *z = (uint8_t *)AscendC::GmAlloc(256);
        if (which == 0) {
            fill_f16(x, 128, 61, 5.0f);
            fill_f16(y, 128, 62, 5.0f);
        } else {
            for (int i = 0; i < 64; ++i) ((float *)x)[i] = (float)((i * 13) % 29) - 14.0f;
        }
        ICPU_RUN_KF(cmpsel_ops, 1, x, y, z, which);
        int bad = 0;
        for (int i = 0; i < (which == 0 ? 128 : 64) && !bad; ++i) {
            float want, got;
            if (which == 0) {
                want = f16_val(x, i) < f16_val(y, i) ? f16_val(x, i) : f16_val(y, i);
                got = f16_val(z, i);
            } else {
                want = i == 63 ? 42.0f : ((float *)x)[i] >= 0 ? ((float *)x)[i] : -1.0f;
                got = ((float *)z)[i];
            }
            if (want != got) {
                std::fprintf(stderr, "cmpsel case %u: element %d is %g, expected %g\n", which, i, got, want);
                bad = 1;
            }
        }
        std::printf("%s cmpsel case %u\n", bad ? "FAIL" : "PASS", which);
        failures += bad;
        AscendC::GmFree(x);
        AscendC::GmFree(y);
        AscendC::GmFree(z);
    }
}

int main()
{
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    for (int op = 0; op < OP_COUNT; ++op) {
        const bool fp_only = op == OP_DIV || (op >= OP_EXP && op <= OP_LEAKY && op != OP_RELU);
        const bool logic = op == OP_AND || op == OP_OR || op == OP_NOT;
        if (!logic) {
            test_half(op);
            test_float(op);
        }
        if (!fp_only && !logic) {
            test_int<int32_t>("int32_t", op, vec_ops_int32);
            if (op != OP_RELU) test_int<int16_t>("int16_t", op, vec_ops_int16);
        }
        if (logic) test_int<int16_t>("int16_t", op, vec_ops_int16);
    }
    test_cast();
    test_level0();
    test_atomic();
    test_cmpsel();
    std::printf("%d failures\n", failures);
    return failures;
}
