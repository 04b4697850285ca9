/* The inference helpers of large-model serving against float64 host references:
 * aclnnRotaryPositionEmbeddingV2 (half and interleave without a rotation matrix, and
 * x·cos + (x @ rotate)·sin with one), aclnnInterleaveRope (q = x de-interleaved, then
 * rotate-half), aclnnRopeWithSinCosCache(+V2) (cos/sin gathered from the cache by position;
 * RoPE in GPT-NeoX and GPT-J forms with a pass-through tail; MRoPE by sections, 3 or 4 of
 * them, and V2's interleaved cacheMode 1); plus the documented argument errors (nullptr →
 * 161001, data type → 161002, the tiling's shape and value rules → 561002). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_rotary_position_embedding.h"
#include "aclnnop/aclnn_interleave_rope.h"
#include "aclnnop/aclnn_rope_with_sin_cos_cache.h"
#include "aclnnop/aclnn_rope_with_sin_cos_cache_v2.h"

static aclrtStream S;
static uint64_t ws = 0;
static aclOpExecutor *ex = nullptr;
static const int TILING = 561002;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

static void section(const char *name, int fails_before) {
    if (g_fail == fails_before) printf("ok %s\n", name);
}

static std::vector<double> rounded(std::vector<double> v, aclDataType dt) {
    for (auto &e : v) e = as_type(e, dt);
    return v;
}

/* cos/sin index of x's element i for a cos/sin of shape cs broadcast to xs (same rank). */
static int64_t bcast_index(const Shape &xs, const Shape &cs, int64_t i) {
    int64_t off = 0, stride = 1;
    for (int d = static_cast<int>(xs.size()) - 1; d >= 0; d--) {
        int64_t k = i % xs[d];
        i /= xs[d];
        if (cs[d] != 1) off += k * stride;
        stride *= cs[d];
    }
    return off;
}

/* y = x·cos + rot(x)·sin; mode 0 half, 1 interleave, 3 interleave-half; or x @ R when R is given. */
static std::vector<double> rope_ref(const std::vector<double> &x, const Shape &xs, const std::vector<double> &c,
                                    const std::vector<double> &s, const Shape &cs, int mode,
                                    const std::vector<double> *R) {
    int64_t D = xs.back(), n = numel(xs), h = D / 2;
    std::vector<double> y(n);
    for (int64_t r = 0; r < n / D; r++) {
        const double *xr = &x[r * D];
        std::vector<double> a(D), b(D);
        for (int64_t j = 0; j < D; j++) {
            if (R) {
                a[j] = xr[j];
                b[j] = 0;
                for (int64_t k = 0; k < D; k++) b[j] += xr[k] * (*R)[k * D + j];
            } else if (mode == 0) {
                a[j] = xr[j];
                b[j] = j < h ? -xr[j + h] : xr[j - h];
            } else if (mode == 1) {
                a[j] = xr[j];
                b[j] = j % 2 == 0 ? -xr[j + 1] : xr[j - 1];
            } else {
                /* q = cat(x[::2], x[1::2]); RotateHalf(q) */
                a[j] = j < h ? xr[2 * j] : xr[2 * (j - h) + 1];
                b[j] = j < h ? -xr[2 * j + 1] : xr[2 * (j - h)];
            }
        }
        for (int64_t j = 0; j < D; j++) {
            int64_t ci = bcast_index(xs, cs, r * D + j);
            y[r * D + j] = a[j] * c[ci] + b[j] * s[ci];
        }
    }
    return y;
}

static void rpe_v2_case(const char *what, aclDataType dt, Shape xs, Shape cs, int mode, bool withRotate, double tol) {
    int64_t D = xs.back();
    auto xv = values(numel(xs), dt, 31), cv = values(numel(cs), dt, 32), sv = values(numel(cs), dt, 33);
    std::vector<double> R(D * D, 0);
    /* the reference's interleave helper matrix (pairs swapped), plus a sign and one extra entry */
    for (int64_t i = 0; i + 1 < D; i += 2) {
        R[i * D + i + 1] = 1;
        R[(i + 1) * D + i] = -1;
    }
    R[0 * D + D - 1] = 0.5;
    Dev x = make(xs, dt, xv), c = make(cs, dt, cv), s = make(cs, dt, sv), r = make({D, D}, dt, R),
        o = make(xs, dt, {0});
    RUN(S, aclnnRotaryPositionEmbeddingV2, x.t, c.t, s.t, mode, withRotate ? r.t : nullptr, o.t);
    auto want = rope_ref(xv, xs, cv, sv, cs, mode, withRotate ? &R : nullptr);
    compare(what, read(o), rounded(want, dt), tol);
}

static void rotary_v2() {
    int f0 = g_fail;
    rpe_v2_case("RotaryPositionEmbeddingV2 half BNSD cos 11SD", ACL_FLOAT, {2, 3, 5, 8}, {1, 1, 5, 8}, 0, false, 1e-12);
    rpe_v2_case("RotaryPositionEmbeddingV2 interleave BSND cos 1S1D", ACL_FLOAT, {2, 5, 3, 8}, {1, 5, 1, 8}, 1, false,
                1e-12);
    rpe_v2_case("RotaryPositionEmbeddingV2 half FLOAT16 SBND cos SB1D", ACL_FLOAT16, {4, 2, 3, 16}, {4, 2, 1, 16}, 0,
                false, 0);
    rpe_v2_case("RotaryPositionEmbeddingV2 rotate [8,8] BSND", ACL_FLOAT, {2, 3, 2, 8}, {1, 3, 1, 8}, 1, true, 1e-12);
    rpe_v2_case("RotaryPositionEmbeddingV2 rotate [16,16] BFLOAT16 3-D", ACL_BF16, {3, 2, 16}, {3, 1, 16}, 0, true, 0);
    Dev x = make({1, 2, 3, 8}, ACL_FLOAT, {1}), c = make({1, 1, 3, 8}, ACL_FLOAT, {1}), o = make({1, 2, 3, 8}, ACL_FLOAT, {0});
    Dev r = make({8, 8}, ACL_FLOAT, {0}), r6 = make({6, 6}, ACL_FLOAT, {0}), rh = make({8, 8}, ACL_FLOAT16, {0});
    Dev xi = make({1, 2, 3, 8}, ACL_INT32, {0}), c5 = make({1, 1, 5, 8}, ACL_FLOAT, {0}), o2 = make({1, 2, 3, 4}, ACL_FLOAT, {0});
    auto call = [&](aclTensor *xt, aclTensor *ct, int64_t mode, aclTensor *rt, aclTensor *ot) {
        return aclnnRotaryPositionEmbeddingV2GetWorkspaceSize(xt, ct, ct, mode, rt, ot, &ws, &ex);
    };
    expect_code("RotaryPositionEmbeddingV2 null x", call(nullptr, c.t, 0, nullptr, o.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("RotaryPositionEmbeddingV2 null out", call(x.t, c.t, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("RotaryPositionEmbeddingV2 INT32 x", call(xi.t, c.t, 0, nullptr, o.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("RotaryPositionEmbeddingV2 FLOAT16 rotate for FLOAT x", call(x.t, c.t, 0, rh.t, o.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("RotaryPositionEmbeddingV2 mode 4", call(x.t, c.t, 4, nullptr, o.t), TILING);
    expect_code("RotaryPositionEmbeddingV2 cos [1,1,5,8] for S 3", call(x.t, c5.t, 0, nullptr, o.t), TILING);
    expect_code("RotaryPositionEmbeddingV2 rotate [6,6] for D 8", call(x.t, c.t, 0, r6.t, o.t), TILING);
    expect_code("RotaryPositionEmbeddingV2 out [1,2,3,4]", call(x.t, c.t, 0, nullptr, o2.t), TILING);
    section("rotary_position_embedding_v2", f0);
}

static void interleave_rope() {
    int f0 = g_fail;
    for (aclDataType dt : {ACL_FLOAT16, ACL_BF16}) {
        for (Shape cs : {Shape{2, 1, 4, 64}, Shape{2, 1, 1, 64}}) {
            Shape xs{2, 3, 4, 64};
            auto xv = values(numel(xs), dt, 41), cv = values(numel(cs), dt, 42), sv = values(numel(cs), dt, 43);
            Dev x = make(xs, dt, xv), c = make(cs, dt, cv), s = make(cs, dt, sv), o = make(xs, dt, {0});
            RUN(S, aclnnInterleaveRope, x.t, c.t, s.t, o.t);
            auto want = rounded(rope_ref(xv, xs, cv, sv, cs, 3, nullptr), dt);
            std::string w = std::string("InterleaveRope ") + dname(dt) + (cs[2] == 1 ? " cos B11D" : " cos B1SD");
            compare(w.c_str(), read(o), want, 0);
        }
    }
    Dev x = make({2, 3, 4, 64}, ACL_FLOAT16, {1}), c = make({2, 1, 4, 64}, ACL_FLOAT16, {1}),
        o = make({2, 3, 4, 64}, ACL_FLOAT16, {0});
    Dev xf = make({2, 3, 4, 64}, ACL_FLOAT, {1}), x32 = make({2, 3, 4, 32}, ACL_FLOAT16, {1}),
        c32 = make({2, 1, 4, 32}, ACL_FLOAT16, {1}), o32 = make({2, 3, 4, 32}, ACL_FLOAT16, {0});
    Dev cN = make({2, 3, 4, 64}, ACL_FLOAT16, {1}), cB = make({1, 1, 4, 64}, ACL_FLOAT16, {1}),
        x3 = make({6, 4, 64}, ACL_FLOAT16, {1});
    auto call = [&](aclTensor *xt, aclTensor *ct, aclTensor *ot) {
        return aclnnInterleaveRopeGetWorkspaceSize(xt, ct, ct, ot, &ws, &ex);
    };
    expect_code("InterleaveRope null cos", call(x.t, nullptr, o.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("InterleaveRope FLOAT x", call(xf.t, c.t, o.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("InterleaveRope D 32", call(x32.t, c32.t, o32.t), TILING);
    expect_code("InterleaveRope cos N 3", call(x.t, cN.t, o.t), TILING);
    expect_code("InterleaveRope cos B 1 for x B 2", call(x.t, cB.t, o.t), TILING);
    expect_code("InterleaveRope 3-D x", call(x3.t, c.t, o.t), TILING);
    section("interleave_rope", f0);
}

/* Host reference of RopeWithSinCosCache: positions [T] or [m, T], q/k [T, heads*hs]. */
static std::vector<double> cache_ref(const std::vector<int64_t> &pos, int m, const std::vector<double> &x, int T,
                                     int width, const std::vector<double> &cache, int rd, int hs, bool neox,
                                     const std::vector<int64_t> &sec, int cacheMode) {
    std::vector<double> y = x;
    int h = rd / 2;
    for (int t = 0; t < T; t++) {
        std::vector<double> c(h), s(h);
        for (int j = 0; j < h; j++) {
            int row = 0;
            if (m > 1) {
                if (cacheMode == 1) {
                    if (j % 3 == 1 && j < 3 * sec[1]) row = 1;
                    if (j % 3 == 2 && j < 3 * sec[2]) row = 2;
                } else {
                    int64_t acc = 0;
                    for (int i = 0; i < m; i++) {
                        acc += sec[i];
                        if (j < acc) {
                            row = i;
                            break;
                        }
                    }
                }
            }
            int64_t p = pos[row * T + t];
            c[j] = cache[p * rd + j];
            s[j] = cache[p * rd + h + j];
        }
        for (int head = 0; head < width / hs; head++) {
            const double *xr = &x[t * width + head * hs];
            double *yr = &y[t * width + head * hs];
            for (int i = 0; i < h; i++) {
                int a = neox ? i : 2 * i, b = neox ? i + h : 2 * i + 1;
                yr[a] = xr[a] * c[i] - xr[b] * s[i];
                yr[b] = xr[b] * c[i] + xr[a] * s[i];
            }
        }
    }
    return y;
}

static void cache_case(const char *what, bool v2, aclDataType dt, int T, int nq, int nk, int hs, int rd, int maxSeq,
                       bool neox, std::vector<int64_t> sec, int cacheMode, aclDataType pdt, double tol) {
    int m = sec.empty() ? 1 : static_cast<int>(sec.size());
    std::vector<int64_t> pos(m * T);
    for (size_t i = 0; i < pos.size(); i++) pos[i] = (i * 7 + 3) % maxSeq;
    std::vector<double> posd(pos.begin(), pos.end());
    auto qv = values(T * nq * hs, dt, 51), kv = values(T * nk * hs, dt, 52), cv = values(maxSeq * rd, dt, 53);
    Dev p = make(sec.empty() ? Shape{T} : Shape{m, T}, pdt, posd), q = make({T, nq * hs}, dt, qv),
        k = make({T, nk * hs}, dt, kv), c = make({maxSeq, rd}, dt, cv), qo = make({T, nq * hs}, dt, {0}),
        ko = make({T, nk * hs}, dt, {0});
    std::vector<int64_t> zeros{0, 0, 0};
    aclIntArray *sa = sec.empty() ? aclCreateIntArray(zeros.data(), 3) : aclCreateIntArray(sec.data(), sec.size());
    if (v2)
        RUN(S, aclnnRopeWithSinCosCacheV2, p.t, q.t, k.t, c.t, sa, hs, neox, cacheMode, qo.t, ko.t);
    else
        RUN(S, aclnnRopeWithSinCosCache, p.t, q.t, k.t, c.t, sa, hs, neox, qo.t, ko.t);
    aclDestroyIntArray(sa);
    std::string w(what);
    compare((w + " queryOut").c_str(), read(qo),
            rounded(cache_ref(pos, m, qv, T, nq * hs, cv, rd, hs, neox, sec, cacheMode), dt), tol);
    compare((w + " keyOut").c_str(), read(ko),
            rounded(cache_ref(pos, m, kv, T, nk * hs, cv, rd, hs, neox, sec, cacheMode), dt), tol);
}

static void rope_with_sin_cos_cache() {
    int f0 = g_fail;
    cache_case("RopeWithSinCosCache NeoX FLOAT rd 32 = hs", false, ACL_FLOAT, 5, 2, 1, 32, 32, 9, true, {}, 0,
               ACL_INT64, 1e-12);
    cache_case("RopeWithSinCosCache GPT-J FLOAT rd 16 < hs 32 (tail passes)", false, ACL_FLOAT, 4, 3, 2, 32, 16, 6,
               false, {}, 0, ACL_INT32, 1e-12);
    cache_case("RopeWithSinCosCache NeoX FLOAT16 hs 64 rd 32", false, ACL_FLOAT16, 3, 2, 1, 64, 32, 4, true, {}, 0,
               ACL_INT64, 0);
    cache_case("RopeWithSinCosCache MRoPE [2,3,3] NeoX FLOAT", false, ACL_FLOAT, 4, 2, 1, 16, 16, 7, true, {2, 3, 3},
               0, ACL_INT64, 1e-12);
    cache_case("RopeWithSinCosCacheV2 MRoPE [2,3,3] cacheMode 1 GPT-J", true, ACL_FLOAT, 4, 2, 2, 32, 16, 7, false,
               {2, 3, 3}, 1, ACL_INT64, 1e-12);
    cache_case("RopeWithSinCosCacheV2 MRoPE [2,2,2,2] BFLOAT16", true, ACL_BF16, 3, 1, 1, 32, 32, 5, true,
               {4, 4, 4, 4}, 0, ACL_INT64, 0);
    cache_case("RopeWithSinCosCacheV2 RoPE cacheMode 0 FLOAT", true, ACL_FLOAT, 6, 1, 1, 16, 16, 8, true, {}, 0,
               ACL_INT64, 1e-12);
    /* errors */
    std::vector<double> pz{0, 1, 2, 3};
    Dev p = make({4}, ACL_INT64, pz), p32 = make({4}, ACL_INT32, pz), p3 = make({3}, ACL_INT64, pz),
        pm = make({3, 4}, ACL_INT64, pz);
    Dev q = make({4, 64}, ACL_FLOAT, {1}), k = make({4, 32}, ACL_FLOAT, {1}), c = make({8, 16}, ACL_FLOAT, {1});
    Dev qo = make({4, 64}, ACL_FLOAT, {0}), ko = make({4, 32}, ACL_FLOAT, {0}), qh = make({4, 64}, ACL_FLOAT16, {0});
    Dev c48 = make({8, 48}, ACL_FLOAT, {1}), c24 = make({8, 24}, ACL_FLOAT, {1}), q3 = make({1, 4, 64}, ACL_FLOAT, {1});
    std::vector<int64_t> good{2, 3, 3}, bad{2, 2, 2};
    aclIntArray *sg = aclCreateIntArray(good.data(), 3), *sb = aclCreateIntArray(bad.data(), 3);
    auto v1 = [&](aclTensor *pt, aclTensor *qt, aclTensor *ct, aclIntArray *sa, int64_t hs, aclTensor *qot) {
        return aclnnRopeWithSinCosCacheGetWorkspaceSize(pt, qt, k.t, ct, sa, hs, true, qot, ko.t, &ws, &ex);
    };
    auto v2 = [&](aclTensor *pt, int64_t mode) {
        return aclnnRopeWithSinCosCacheV2GetWorkspaceSize(pt, q.t, k.t, c.t, sg, 32, true, mode, qo.t, ko.t, &ws, &ex);
    };
    expect_code("RopeWithSinCosCache null positions", v1(nullptr, q.t, c.t, sg, 32, qo.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("RopeWithSinCosCache null queryOut", v1(p.t, q.t, c.t, sg, 32, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("RopeWithSinCosCache FLOAT16 queryOut for FLOAT query", v1(p.t, q.t, c.t, sg, 32, qh.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("RopeWithSinCosCacheV2 INT32 positions", v2(p32.t, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("RopeWithSinCosCache positions [3] for 4 tokens", v1(p3.t, q.t, c.t, sg, 32, qo.t), TILING);
    expect_code("RopeWithSinCosCache headSize 24", v1(p.t, q.t, c.t, sg, 24, qo.t), TILING);
    expect_code("RopeWithSinCosCache rotary dim 48 > headSize 32", v1(p.t, q.t, c48.t, sg, 32, qo.t), TILING);
    expect_code("RopeWithSinCosCache rotary dim 24 not a multiple of 16", v1(p.t, q.t, c24.t, sg, 32, qo.t), TILING);
    expect_code("RopeWithSinCosCache 3-D query", v1(p.t, q3.t, c.t, sg, 32, qo.t), TILING);
    expect_code("RopeWithSinCosCache MRoPE sections [2,2,2] sum 6 != 8", v1(pm.t, q.t, c.t, sb, 32, qo.t), TILING);
    expect_code("RopeWithSinCosCacheV2 cacheMode 2", v2(p.t, 2), ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(sg);
    aclDestroyIntArray(sb);
    /* a position past the cache fails the task at synchronize */
    {
        std::vector<double> far{0, 1, 8, 3};
        Dev pf = make({4}, ACL_INT64, far);
        NN(aclnnRopeWithSinCosCacheGetWorkspaceSize(pf.t, q.t, k.t, c.t, nullptr, 32, true, qo.t, ko.t, &ws, &ex));
        NN(aclnnRopeWithSinCosCache(nullptr, ws, ex, S));
        g_checks++;
        aclError e = aclrtSynchronizeStream(S);
        if (e == ACL_SUCCESS) {
            printf("FAIL RopeWithSinCosCache position 8 past 8 cache rows: synchronize succeeded\n");
            g_fail++;
        } else {
            printf("error RopeWithSinCosCache position 8 past 8 cache rows: synchronize %d\n", static_cast<int>(e));
        }
    }
    section("rope_with_sin_cos_cache", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    rotary_v2();
    interleave_rope();
    rope_with_sin_cos_cache();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
