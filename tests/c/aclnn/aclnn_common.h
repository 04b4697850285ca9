/* Helpers of the aclnn test programs: device tensors, a host reference of the private
 * layouts written from abi.md §5.2 (independently of the emulator's conversion code), and
 * byte patterns whose elements are never zero (so padding is recognisable). */
#ifndef NPU_EMU_TEST_ACLNN_COMMON_H
#define NPU_EMU_TEST_ACLNN_COMMON_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_npu_format_cast.h"
#include "aclnnop/aclnn_trans_matmul_weight.h"
#include "common.h"

typedef std::vector<int64_t> Shape;

static inline int64_t numel(const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline size_t esize(aclDataType t) { return aclDataTypeSize(t); }

static inline Shape strides_of(const Shape &s) {
    Shape st(s.size(), 1);
    for (int i = static_cast<int>(s.size()) - 2; i >= 0; i--)
        st[static_cast<size_t>(i)] = st[static_cast<size_t>(i) + 1] * s[static_cast<size_t>(i) + 1];
    return st;
}

/* Element i of a pattern: `es` bytes, none zero, differing between elements. */
static inline std::vector<uint8_t> pattern(int64_t n, size_t es, unsigned seed) {
    std::vector<uint8_t> v(static_cast<size_t>(n) * es);
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < v.size(); i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = static_cast<uint8_t>(1 + x % 255);
    }
    return v;
}

static inline void put(std::vector<uint8_t> &dst, int64_t di, const std::vector<uint8_t> &src, int64_t si,
                size_t es) {
    memcpy(&dst[static_cast<size_t>(di) * es], &src[static_cast<size_t>(si) * es], es);
}

/* C0 of aclnnNpuFormatCast on Atlas A2/A3: 32 bytes per C0 block. */
static inline int64_t c0_of(size_t es) { return 32 / static_cast<int64_t>(es); }

/* ND [..., H, W] -> FRACTAL_NZ [..., ceil(W/C0), ceil(H/16), 16, C0]. */
static inline Shape nz_shape_c0(const Shape &s, int64_t c0) {
    Shape r(s.begin(), s.end() - 2);
    r.push_back(cdiv(s[s.size() - 1], c0));
    r.push_back(cdiv(s[s.size() - 2], 16));
    r.push_back(16);
    r.push_back(c0);
    return r;
}

static inline Shape nz_shape(const Shape &s, size_t es) { return nz_shape_c0(s, c0_of(es)); }

static inline std::vector<uint8_t> ref_nz_c0(const Shape &s, const std::vector<uint8_t> &src, size_t es,
                                             int64_t c0) {
    int64_t H = s[s.size() - 2], W = s[s.size() - 1];
    int64_t B = numel(s) / (H * W), W1 = cdiv(W, c0), H1 = cdiv(H, 16);
    std::vector<uint8_t> dst(static_cast<size_t>(B * W1 * H1 * 16 * c0) * es, 0);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) {
                int64_t w1 = w / c0, w0 = w % c0;
                int64_t d = (((b * W1 + w1) * H1 * 16) + h) * c0 + w0;
                put(dst, d, src, (b * H + h) * W + w, es);
            }
    return dst;
}

static inline std::vector<uint8_t> ref_nz(const Shape &s, const std::vector<uint8_t> &src, size_t es) {
    return ref_nz_c0(s, src, es, c0_of(es));
}

/* NCDHW -> NDC1HWC0 [N, D, C1, H, W, C0]. */
static inline Shape ndc1hwc0_shape(const Shape &s, size_t es) {
    int64_t c0 = c0_of(es);
    return Shape{s[0], s[2], cdiv(s[1], c0), s[3], s[4], c0};
}

static inline std::vector<uint8_t> ref_ndc1hwc0(const Shape &s, const std::vector<uint8_t> &src, size_t es) {
    int64_t c0 = c0_of(es), N = s[0], C = s[1], D = s[2], H = s[3], W = s[4], C1 = cdiv(C, c0);
    std::vector<uint8_t> dst(static_cast<size_t>(N * D * C1 * H * W * c0) * es, 0);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t d = 0; d < D; d++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        int64_t di = ((((n * D + d) * C1 + c / c0) * H + h) * W + w) * c0 + c % c0;
                        put(dst, di, src, (((n * C + c) * D + d) * H + h) * W + w, es);
                    }
    return dst;
}

/* NCDHW -> FRACTAL_Z_3D [D*C1*H*W, N1, 16, C0]. */
static inline Shape fz3d_shape(const Shape &s, size_t es) {
    int64_t c0 = c0_of(es);
    return Shape{s[2] * cdiv(s[1], c0) * s[3] * s[4], cdiv(s[0], 16), 16, c0};
}

static inline std::vector<uint8_t> ref_fz3d(const Shape &s, const std::vector<uint8_t> &src, size_t es) {
    int64_t c0 = c0_of(es), N = s[0], C = s[1], D = s[2], H = s[3], W = s[4];
    int64_t C1 = cdiv(C, c0), N1 = cdiv(N, 16);
    std::vector<uint8_t> dst(static_cast<size_t>(D * C1 * H * W * N1 * 16 * c0) * es, 0);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t d = 0; d < D; d++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        int64_t row = ((d * C1 + c / c0) * H + h) * W + w;
                        int64_t di = (row * N1 * 16 + n) * c0 + c % c0;
                        put(dst, di, src, (((n * C + c) * D + d) * H + h) * W + w, es);
                    }
    return dst;
}

/* The aclnn call must return `code` with a message containing `sub` (NULL: any). */
#define EXPECT_NN(call, code, sub) EXPECT_CODE(static_cast<aclError>(call), code, sub)

/* The aclnn call must succeed. */
#define CHECK_NN(call)                                                                      \
    do {                                                                                    \
        aclnnStatus s_ = (call);                                                            \
        if (s_ != ACLNN_SUCCESS) {                                                          \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,  \
                    static_cast<int>(s_), test_msg());                                      \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

/* A device buffer of `bytes` holding `host` (or filled with `fill`). */
static inline void *dev_alloc(size_t bytes, const std::vector<uint8_t> *host, int fill) {
    void *p = nullptr;
    CHECK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    if (host != nullptr)
        CHECK(aclrtMemcpy(p, bytes, host->data(), host->size(), ACL_MEMCPY_HOST_TO_DEVICE));
    else
        CHECK(aclrtMemset(p, bytes, fill, bytes));
    return p;
}

static inline std::vector<uint8_t> dev_read(const void *p, size_t bytes) {
    std::vector<uint8_t> v(bytes);
    CHECK(aclrtMemcpy(v.data(), bytes, p, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    return v;
}

/* A contiguous tensor: view `view`, storage `storage` in `fmt`. */
static aclTensor *tensor(const Shape &view, aclDataType dt, aclFormat fmt, const Shape &storage, void *data) {
    Shape st = strides_of(view);
    aclTensor *t = aclCreateTensor(view.data(), view.size(), dt, st.data(), 0, fmt, storage.data(),
                                   storage.size(), data);
    if (t == nullptr) {
        fprintf(stderr, "FAIL aclCreateTensor returned NULL: %s\n", test_msg());
        exit(1);
    }
    return t;
}

static inline void init_device(aclrtStream *stream) {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(stream));
}

#endif
