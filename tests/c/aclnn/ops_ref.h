/* Host side of the aclnn operator tests: device tensors of any dtype, shape, strides and
 * offset built from host values, read back as doubles, and an independent reference of the
 * element types (fp16/bf16 rounding written here from IEEE 754, not taken from the emulator).
 *
 * A tensor is described by Spec: its view shape, and a layout kind (contiguous, transposed
 * in its last two dimensions, or every other element of a twice-as-long storage). The host
 * values are kept in row-major order of the view. */
#ifndef NPU_EMU_TEST_ACLNN_OPS_REF_H
#define NPU_EMU_TEST_ACLNN_OPS_REF_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"
#include "common.h"

typedef std::vector<int64_t> Shape;

static int g_fail = 0;
static int g_checks = 0;

static inline int64_t numel(const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

/* ---- element types ---- */

static inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
    int e = static_cast<int>(exp) - 127 + 15;
    if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return static_cast<uint16_t>(sign);
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = (static_cast<uint32_t>(e) << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return static_cast<uint16_t>(sign | h);
}

static inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0) {
        v = std::ldexp(static_cast<float>(man), -24);
    } else if (exp == 31) {
        v = man ? NAN : INFINITY;
    } else {
        v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
    }
    uint32_t b;
    memcpy(&b, &v, 4);
    b |= sign;
    memcpy(&v, &b, 4);
    return v;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);
    uint32_t lsb = (x >> 16) & 1;
    x += 0x7fff + lsb;
    return static_cast<uint16_t>(x >> 16);
}

static inline float bf16_to_f32(uint16_t h) {
    uint32_t x = static_cast<uint32_t>(h) << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static inline size_t dsize(aclDataType t) { return aclDataTypeSize(t); }

static inline bool is_float(aclDataType t) {
    return t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16 || t == ACL_DOUBLE;
}

static inline const char *dname(aclDataType t) {
    switch (t) {
    case ACL_FLOAT: return "f32";
    case ACL_FLOAT16: return "f16";
    case ACL_BF16: return "bf16";
    case ACL_DOUBLE: return "f64";
    case ACL_INT8: return "i8";
    case ACL_INT16: return "i16";
    case ACL_INT32: return "i32";
    case ACL_INT64: return "i64";
    case ACL_UINT8: return "u8";
    case ACL_BOOL: return "bool";
    default: return "?";
    }
}

/* The value v stored as type t, read back: the rounding/wrapping of a store. */
static inline double as_type(double v, aclDataType t) {
    switch (t) {
    case ACL_FLOAT: return static_cast<float>(v);
    case ACL_FLOAT16: return f16_to_f32(f32_to_f16(static_cast<float>(v)));
    case ACL_BF16: return bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
    case ACL_DOUBLE: return v;
    case ACL_INT8: return static_cast<int8_t>(static_cast<int64_t>(v));
    case ACL_INT16: return static_cast<int16_t>(static_cast<int64_t>(v));
    case ACL_INT32: return static_cast<int32_t>(static_cast<int64_t>(v));
    case ACL_INT64: return static_cast<double>(static_cast<int64_t>(v));
    case ACL_UINT8: return static_cast<uint8_t>(static_cast<int64_t>(v));
    case ACL_BOOL: return v != 0 ? 1 : 0;
    default: return v;
    }
}

static inline void put(uint8_t *p, aclDataType t, double v) {
    switch (t) {
    case ACL_FLOAT: { float f = static_cast<float>(v); memcpy(p, &f, 4); break; }
    case ACL_FLOAT16: { uint16_t h = f32_to_f16(static_cast<float>(v)); memcpy(p, &h, 2); break; }
    case ACL_BF16: { uint16_t h = f32_to_bf16(static_cast<float>(v)); memcpy(p, &h, 2); break; }
    case ACL_DOUBLE: memcpy(p, &v, 8); break;
    case ACL_INT8: { int8_t x = static_cast<int8_t>(static_cast<int64_t>(v)); memcpy(p, &x, 1); break; }
    case ACL_INT16: { int16_t x = static_cast<int16_t>(static_cast<int64_t>(v)); memcpy(p, &x, 2); break; }
    case ACL_INT32: { int32_t x = static_cast<int32_t>(static_cast<int64_t>(v)); memcpy(p, &x, 4); break; }
    case ACL_INT64: { int64_t x = static_cast<int64_t>(v); memcpy(p, &x, 8); break; }
    case ACL_UINT8: { uint8_t x = static_cast<uint8_t>(static_cast<int64_t>(v)); memcpy(p, &x, 1); break; }
    case ACL_BOOL: { uint8_t x = v != 0; memcpy(p, &x, 1); break; }
    default: break;
    }
}

static inline double get(const uint8_t *p, aclDataType t) {
    switch (t) {
    case ACL_FLOAT: { float f; memcpy(&f, p, 4); return f; }
    case ACL_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return f16_to_f32(h); }
    case ACL_BF16: { uint16_t h; memcpy(&h, p, 2); return bf16_to_f32(h); }
    case ACL_DOUBLE: { double d; memcpy(&d, p, 8); return d; }
    case ACL_INT8: { int8_t x; memcpy(&x, p, 1); return x; }
    case ACL_INT16: { int16_t x; memcpy(&x, p, 2); return x; }
    case ACL_INT32: { int32_t x; memcpy(&x, p, 4); return x; }
    case ACL_INT64: { int64_t x; memcpy(&x, p, 8); return static_cast<double>(x); }
    case ACL_UINT8: case ACL_BOOL: { uint8_t x; memcpy(&x, p, 1); return x; }
    default: return 0;
    }
}

/* ---- device tensors ---- */

enum Layout { CONTIG, TRANSPOSED, STRIDED };

static inline const char *lname(Layout l) { return l == CONTIG ? "contig" : l == TRANSPOSED ? "transposed" : "strided"; }

struct Dev {
    aclTensor *t = nullptr;
    void *mem = nullptr;
    size_t bytes = 0;
    aclDataType dt = ACL_FLOAT;
    Shape shape, strides;
    int64_t offset = 0;
};

/* Strides (and storage elements) of `shape` laid out as `l`. */
static inline Shape strides_for(const Shape &shape, Layout l, int64_t *storage, int64_t *offset) {
    size_t n = shape.size();
    Shape st(n, 1);
    *offset = 0;
    if (l == TRANSPOSED && n >= 2) {
        /* column-major in the last two dims: storage is [..., W, H] */
        Shape phys(shape);
        std::swap(phys[n - 1], phys[n - 2]);
        Shape ps(n, 1);
        for (int i = static_cast<int>(n) - 2; i >= 0; i--) ps[i] = ps[i + 1] * phys[i + 1];
        st = ps;
        std::swap(st[n - 1], st[n - 2]);
        *storage = numel(shape);
    } else if (l == STRIDED) {
        if (n > 0) {
            st[n - 1] = 2;
            for (int i = static_cast<int>(n) - 2; i >= 0; i--) st[i] = st[i + 1] * shape[i + 1];
        }
        *offset = 1;
        *storage = numel(shape) * 2 + 1;
    } else {
        for (int i = static_cast<int>(n) - 2; i >= 0; i--) st[i] = st[i + 1] * shape[i + 1];
        *storage = numel(shape);
    }
    return st;
}

/* Element offset of row-major index i of the view. */
static inline int64_t elem_off(const Dev &d, int64_t i) {
    int64_t off = d.offset;
    for (int k = static_cast<int>(d.shape.size()) - 1; k >= 0; k--) {
        off += (i % d.shape[k]) * d.strides[k];
        i /= d.shape[k];
    }
    return off;
}

static inline Dev make(const Shape &shape, aclDataType dt, const std::vector<double> &vals, Layout l = CONTIG) {
    Dev d;
    d.dt = dt;
    d.shape = shape;
    int64_t storage = 0;
    d.strides = strides_for(shape, l, &storage, &d.offset);
    d.bytes = static_cast<size_t>(storage > 0 ? storage : 1) * dsize(dt);
    std::vector<uint8_t> host(d.bytes, 0xcd);
    for (int64_t i = 0; i < numel(shape); i++)
        put(&host[static_cast<size_t>(elem_off(d, i)) * dsize(dt)], dt, vals.empty() ? 0 : vals[static_cast<size_t>(i) % vals.size()]);
    CHECK(aclrtMalloc(&d.mem, d.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(d.mem, d.bytes, host.data(), d.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    Shape storage_shape{storage};
    d.t = aclCreateTensor(shape.data(), shape.size(), dt, d.strides.data(), d.offset, ACL_FORMAT_ND,
                          storage_shape.data(), 1, d.mem);
    if (d.t == nullptr) {
        fprintf(stderr, "FAIL aclCreateTensor: %s\n", test_msg());
        exit(1);
    }
    return d;
}

/* An INT8 weight [E, K, N] in FRACTAL_NZ, packed on the host from the layout's definition:
 * storage [E, ceil(N/32), ceil(K/16), 16, 32] (C0 32 along N), padding zero. */
static inline Dev nz_weight_i8(const std::vector<double> &W, int64_t E, int64_t K, int64_t N) {
    int64_t k1 = (K + 15) / 16, n1 = (N + 31) / 32, per = n1 * k1 * 16 * 32;
    std::vector<int8_t> host(static_cast<size_t>(E * per), 0);
    for (int64_t g = 0; g < E; g++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t n = 0; n < N; n++)
                host[static_cast<size_t>(g * per + ((n / 32) * k1 + k / 16) * 512 + (k % 16) * 32 + n % 32)] =
                    static_cast<int8_t>(W[static_cast<size_t>((g * K + k) * N + n)]);
    Dev d;
    d.dt = ACL_INT8;
    d.bytes = host.size();
    d.shape = Shape{E, K, N};
    d.strides = Shape{K * N, N, 1};
    CHECK(aclrtMalloc(&d.mem, d.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(d.mem, d.bytes, host.data(), d.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    Shape storage{E, n1, k1, 16, 32};
    d.t = aclCreateTensor(d.shape.data(), 3, ACL_INT8, d.strides.data(), 0, ACL_FORMAT_FRACTAL_NZ, storage.data(), 5, d.mem);
    if (d.t == nullptr) {
        fprintf(stderr, "FAIL aclCreateTensor (INT8 FRACTAL_NZ): %s\n", test_msg());
        exit(1);
    }
    return d;
}

static inline std::vector<double> read(const Dev &d) {
    std::vector<uint8_t> host(d.bytes);
    CHECK(aclrtMemcpy(host.data(), d.bytes, d.mem, d.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    std::vector<double> v(static_cast<size_t>(numel(d.shape)));
    for (size_t i = 0; i < v.size(); i++) v[i] = get(&host[static_cast<size_t>(elem_off(d, static_cast<int64_t>(i))) * dsize(d.dt)], d.dt);
    return v;
}

static inline void release(Dev &d) {
    if (d.t) aclDestroyTensor(d.t);
    if (d.mem) aclrtFree(d.mem);
    d.t = nullptr;
    d.mem = nullptr;
}

/* Values of a pattern suited to dtype t (small integers for integer types, fractions
 * otherwise; never zero when `nonzero`). */
static inline std::vector<double> values(int64_t n, aclDataType t, unsigned seed, bool nonzero = false, bool positive = false) {
    std::vector<double> v(static_cast<size_t>(n));
    uint32_t x = 2463534242u ^ (seed * 2654435761u);
    for (auto &e : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        double r;
        if (t == ACL_BOOL) r = x & 1;
        else if (is_float(t)) r = (static_cast<int>(x % 2001) - 1000) / 173.0;
        else if (t == ACL_UINT8) r = x % 200;
        else r = static_cast<int>(x % 201) - 100;
        if (positive) r = std::fabs(r) + (is_float(t) ? 0.25 : 1);
        if (nonzero && r == 0) r = 1;
        e = as_type(r, t);
    }
    return v;
}

/* Compare: exact (tol 0) or relative+absolute tolerance. */
static inline bool compare(const char *what, const std::vector<double> &got, const std::vector<double> &want, double tol) {
    g_checks++;
    for (size_t i = 0; i < want.size(); i++) {
        double g = got[i], w = want[i];
        bool ok = (std::isnan(g) && std::isnan(w)) || g == w || (tol > 0 && std::fabs(g - w) <= tol * (1 + std::fabs(w)));
        if (!ok) {
            printf("FAIL %s: element %zu is %.9g, expected %.9g\n", what, i, g, w);
            g_fail++;
            return false;
        }
    }
    return true;
}

#define NN(call)                                                                               \
    do {                                                                                       \
        aclnnStatus s_ = (call);                                                               \
        if (s_ != 0) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,     \
                    static_cast<int>(s_), test_msg());                                         \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* Run a two-phase operator: `first` is the GetWorkspaceSize call with (&ws, &ex) appended. */
#define RUN(stream, second, ...)                                                               \
    do {                                                                                       \
        uint64_t ws_ = 0;                                                                      \
        aclOpExecutor *ex_ = nullptr;                                                          \
        NN(second##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_));                                 \
        void *w_ = nullptr;                                                                    \
        if (ws_ > 0) CHECK(aclrtMalloc(&w_, ws_, ACL_MEM_MALLOC_HUGE_FIRST));                  \
        NN(second(w_, ws_, ex_, stream));                                                      \
        CHECK(aclrtSynchronizeStream(stream));                                                 \
        if (w_) aclrtFree(w_);                                                                 \
    } while (0)

#endif
