/* The inference helpers of large-model serving against float64 host references:
 * aclnnRotaryPositionEmbeddingV2 (half and interleave without a rotation matrix, and
 * x·cos + (x @ rotate)·sin with one), aclnnInterleaveRope (q = x de-interleaved, then
 * rotate-half), aclnnRopeWithSinCosCache(+V2) (cos/sin gathered from the cache by position;
 * RoPE in GPT-NeoX and GPT-J forms with a pass-through tail; MRoPE by sections, 3 or 4 of
 * them, and V2's interleaved cacheMode 1), aclnnScatterPaKvCache and aclnnGatherPaKvCache (Norm
 * and PA_NZ paged layouts, a 0-D value, lengths or their running sum, block offsets),
 * aclnnTopKTopPSample (top-k, top-p over the kept softmax, the q-weighted sample or the argmax,
 * the kept logits); plus the documented argument errors (nullptr →
 * 161001, data type → 161002, the tiling's shape and value rules → 561002). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_rotary_position_embedding.h"
#include "aclnnop/aclnn_interleave_rope.h"
#include "aclnnop/aclnn_rope_with_sin_cos_cache.h"
#include "aclnnop/aclnn_rope_with_sin_cos_cache_v2.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_top_k_top_p_sample.h"

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

/* Offset of token slot (block, pos) element e (of width) in a paged cache of shape cs. */
static int64_t pa_off(const Shape &cs, bool nz, int64_t blk, int64_t pos, int64_t e, int64_t width) {
    if (nz) return ((blk * cs[1] + e / cs[3]) * cs[2] + pos) * cs[3] + e % cs[3];
    return (blk * cs[1] + pos) * width + e;
}

static void scatter_case(const char *what, aclDataType dt, bool nz, bool withValue) {
    int64_t T = 5, nh = 2, khs = 16, vhs = 8, nb = 3, bs = 4;
    Shape kcs = nz ? Shape{nb, nh * khs / 16, bs, 16} : Shape{nb, bs, nh, khs};
    Shape vcs = nz ? Shape{nb, nh * vhs / 8, bs, 8} : Shape{nb, bs, nh, vhs};
    std::vector<double> slots{7, 0, 11, 4, 9};
    auto kv = values(T * nh * khs, dt, 61), vv = values(T * nh * vhs, dt, 62);
    auto kcv = values(numel(kcs), dt, 63), vcv = values(numel(vcs), dt, 64);
    Dev k = make({T, nh, khs}, dt, kv), v = withValue ? make({T, nh, vhs}, dt, vv) : make({}, dt, {0}),
        kc = make(kcs, dt, kcv), vc = withValue ? make(vcs, dt, vcv) : make({}, dt, {0}),
        sm = make({T}, ACL_INT32, slots);
    char norm[] = "Norm", pa[] = "PA_NZ", none[] = "None";
    std::vector<int64_t> one{1, 1}, zero{0, 0};
    aclIntArray *st = aclCreateIntArray(one.data(), 2), *of = aclCreateIntArray(zero.data(), 2);
    RUN(S, aclnnScatterPaKvCache, k.t, kc.t, sm.t, v.t, vc.t, nullptr, nullptr, nullptr, nz ? pa : norm, none, st, of);
    aclDestroyIntArray(st);
    aclDestroyIntArray(of);
    for (int64_t i = 0; i < T; i++) {
        int64_t s = static_cast<int64_t>(slots[i]);
        for (int64_t e = 0; e < nh * khs; e++) kcv[pa_off(kcs, nz, s / bs, s % bs, e, nh * khs)] = kv[i * nh * khs + e];
        for (int64_t e = 0; e < nh * vhs; e++) vcv[pa_off(vcs, nz, s / bs, s % bs, e, nh * vhs)] = vv[i * nh * vhs + e];
    }
    std::string w(what);
    compare((w + " keyCacheRef").c_str(), read(kc), kcv, 0);
    if (withValue) compare((w + " valueCacheRef").c_str(), read(vc), vcv, 0);
}

static void gather_case(const char *what, aclDataType dt, bool nz, bool cumsum, bool withOffset) {
    int64_t nh = 2, khs = 16, vhs = 32, nb = 5, bs = 4, batch = 3, per = 3;
    Shape kcs = nz ? Shape{nb, nh * khs / 16, bs, 16} : Shape{nb, bs, nh, khs};
    Shape vcs = nz ? Shape{nb, nh * vhs / 16, bs, 16} : Shape{nb, bs, nh, vhs};
    std::vector<int64_t> lens{5, 2, 3}, offs{4, 0, 0}, tables{4, 1, 3, 0, 2, 2, 3, 4, 1};
    if (!withOffset) offs = {0, 0, 0};
    int64_t T = 10;
    std::vector<double> sl;
    if (cumsum) {
        sl = {0};
        for (auto n : lens) sl.push_back(sl.back() + n);
    } else {
        sl.assign(lens.begin(), lens.end());
    }
    auto kcv = values(numel(kcs), dt, 71), vcv = values(numel(vcs), dt, 72);
    Dev kc = make(kcs, dt, kcv), vc = make(vcs, dt, vcv),
        bt = make({batch, per}, ACL_INT32, std::vector<double>(tables.begin(), tables.end())),
        sd = make({static_cast<int64_t>(sl.size())}, ACL_INT32, sl),
        so = make({batch}, ACL_INT32, std::vector<double>(offs.begin(), offs.end())),
        k = make(nz ? Shape{T, nh * khs} : Shape{T, nh, khs}, dt, {0}),
        v = make(nz ? Shape{T, nh * vhs} : Shape{T, nh, vhs}, dt, {0});
    char norm[] = "Norm", pa[] = "PA_NZ";
    RUN(S, aclnnGatherPaKvCache, kc.t, vc.t, bt.t, sd.t, k.t, v.t, withOffset ? so.t : nullptr, nz ? pa : norm,
        cumsum);
    std::vector<double> wk(T * nh * khs, 0), wv(T * nh * vhs, 0);
    int64_t row = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < lens[b]; t++, row++) {
            int64_t blk = tables[b * per + offs[b] / bs + t / bs];
            for (int64_t e = 0; e < nh * khs; e++) wk[row * nh * khs + e] = kcv[pa_off(kcs, nz, blk, t % bs, e, nh * khs)];
            for (int64_t e = 0; e < nh * vhs; e++) wv[row * nh * vhs + e] = vcv[pa_off(vcs, nz, blk, t % bs, e, nh * vhs)];
        }
    std::string w(what);
    compare((w + " keyRef").c_str(), read(k), wk, 0);
    compare((w + " valueRef").c_str(), read(v), wv, 0);
}

static void paged_caches() {
    int f0 = g_fail;
    scatter_case("ScatterPaKvCache Norm FLOAT16", ACL_FLOAT16, false, true);
    scatter_case("ScatterPaKvCache PA_NZ BFLOAT16", ACL_BF16, true, true);
    scatter_case("ScatterPaKvCache Norm INT8 0-D value", ACL_INT8, false, false);
    gather_case("GatherPaKvCache Norm FLOAT16 lengths", ACL_FLOAT16, false, false, false);
    gather_case("GatherPaKvCache Norm BFLOAT16 running sum + offsets", ACL_BF16, false, true, true);
    gather_case("GatherPaKvCache PA_NZ INT8", ACL_INT8, true, false, false);
    /* errors */
    Dev k = make({2, 2, 16}, ACL_FLOAT16, {1}), kc = make({2, 4, 2, 16}, ACL_FLOAT16, {0}),
        sm = make({2}, ACL_INT32, {0, 1}), sm3 = make({3}, ACL_INT32, {0}), sm64 = make({2}, ACL_INT64, {0}),
        kf = make({2, 2, 16}, ACL_FLOAT, {1}), kc8 = make({2, 4, 2, 8}, ACL_FLOAT16, {0}),
        k4 = make({1, 2, 2, 16}, ACL_FLOAT16, {1});
    char norm[] = "Norm", bad[] = "ND", alibi[] = "Alibi";
    auto sc = [&](aclTensor *kt, aclTensor *kct, aclTensor *smt, aclTensor *cl, char *cm, char *sm_) {
        return aclnnScatterPaKvCacheGetWorkspaceSize(kt, kct, smt, kt, kct, cl, nullptr, nullptr, cm, sm_, nullptr,
                                                     nullptr, &ws, &ex);
    };
    expect_code("ScatterPaKvCache null keyCacheRef", sc(k.t, nullptr, sm.t, nullptr, norm, nullptr),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ScatterPaKvCache FLOAT key", sc(kf.t, kc.t, sm.t, nullptr, norm, nullptr), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterPaKvCache cacheMode ND", sc(k.t, kc.t, sm.t, nullptr, bad, nullptr), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterPaKvCache INT64 compressLens for INT32 slots", sc(k.t, kc.t, sm.t, sm64.t, norm, nullptr),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterPaKvCache scatterMode Alibi (not provided)", sc(k.t, kc.t, sm.t, nullptr, norm, alibi),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterPaKvCache slotMapping [3] for 2 tokens", sc(k.t, kc.t, sm3.t, nullptr, norm, nullptr), TILING);
    expect_code("ScatterPaKvCache cache head size 8 for key 16", sc(k.t, kc8.t, sm.t, nullptr, norm, nullptr), TILING);
    expect_code("ScatterPaKvCache 4-D key", sc(k4.t, kc.t, sm.t, nullptr, norm, nullptr), TILING);
    Dev bt = make({2, 2}, ACL_INT32, {0}), bt64 = make({2, 2}, ACL_INT64, {0}), sl = make({2}, ACL_INT32, {1, 1}),
        k2 = make({2, 32}, ACL_FLOAT16, {0});
    auto ga = [&](aclTensor *kct, aclTensor *btt, aclTensor *kt, char *cm, bool cs) {
        return aclnnGatherPaKvCacheGetWorkspaceSize(kct, kct, btt, sl.t, kt, kt, nullptr, cm, cs, &ws, &ex);
    };
    expect_code("GatherPaKvCache null cacheMode", ga(kc.t, bt.t, k.t, nullptr, false), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GatherPaKvCache INT64 blockTables", ga(kc.t, bt64.t, k.t, norm, false), ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherPaKvCache 2-D keyRef with Norm", ga(kc.t, bt.t, k2.t, norm, false), ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherPaKvCache seqLens [2] as a running sum for batch 2", ga(kc.t, bt.t, k.t, norm, true),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherPaKvCache cache head size 8 for keyRef 16", ga(kc8.t, bt.t, k.t, norm, false),
                ACLNN_ERR_PARAM_INVALID);
    section("paged_kv_caches", f0);
}

/* Host reference of TopKTopPSample for one row: the kept indices in descending order. */
static std::vector<int> topkp_keep(const std::vector<double> &row, int64_t k, double p) {
    std::vector<int> ord(row.size());
    std::iota(ord.begin(), ord.end(), 0);
    std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) { return row[a] > row[b]; });
    if (k >= 1 && k <= std::min<int64_t>(row.size(), 1024)) ord.resize(k);
    if (p < 1) {
        double m = row[ord[0]], sum = 0;
        for (int i : ord) sum += std::exp(row[i] - m);
        double before = 0;
        size_t n = 0;
        while (n < ord.size() && before <= p) before += std::exp(row[ord[n++]] - m) / sum;
        ord.resize(std::max<size_t>(n, 1));
    }
    return ord;
}

static void topkp_case(const char *what, aclDataType dt, int64_t B, int64_t V, std::vector<double> ks,
                       std::vector<double> ps, bool withQ, bool needLogits) {
    auto xv = values(B * V, dt, 81);
    std::vector<double> qv(B * V);
    for (size_t i = 0; i < qv.size(); i++) qv[i] = 0.05 + static_cast<double>((i * 37) % 101) / 50.0;
    for (auto &p : ps) p = as_type(p, dt);
    Dev x = make({B, V}, dt, xv), k = make({B}, ACL_INT32, ks), p = make({B}, dt, ps), q = make({B, V}, ACL_FLOAT, qv),
        sel = make({B}, ACL_INT64, {-7}), kept = make({B, V}, ACL_FLOAT, {3.5});
    RUN(S, aclnnTopKTopPSample, x.t, k.t, p.t, withQ ? q.t : nullptr, 1e-8, needLogits, 32, sel.t, kept.t);
    std::vector<double> wsel(B), wkept(B * V, needLogits ? -INFINITY : 3.5);
    for (int64_t b = 0; b < B; b++) {
        std::vector<double> row(xv.begin() + b * V, xv.begin() + (b + 1) * V);
        auto keep = topkp_keep(row, static_cast<int64_t>(ks[b]), ps[b]);
        int pick = keep[0];
        if (withQ) {
            double m = row[keep[0]], sum = 0, best = -INFINITY;
            for (int i : keep) sum += std::exp(row[i] - m);
            for (int i : keep) {
                double sc = std::exp(row[i] - m) / sum / (static_cast<double>(static_cast<float>(qv[b * V + i])) + 1e-8);
                if (sc > best) best = sc, pick = i;
            }
        }
        wsel[b] = pick;
        if (needLogits)
            for (int i : keep) wkept[b * V + i] = row[i];
    }
    std::string w(what);
    compare((w + " logitsSelectIdx").c_str(), read(sel), wsel, 0);
    compare((w + " logitsTopKPSelect").c_str(), read(kept), wkept, 0);
}

static void top_k_top_p_sample() {
    int f0 = g_fail;
    topkp_case("TopKTopPSample argmax only (k 0, p 1)", ACL_FLOAT16, 3, 50, {0, 0, 0}, {1, 1, 1}, false, true);
    topkp_case("TopKTopPSample top-k 5 + q", ACL_FLOAT16, 3, 64, {5, 1, 2000}, {1, 1, 1}, true, true);
    topkp_case("TopKTopPSample top-p 0.3/0.6/0.9 + q", ACL_BF16, 3, 40, {0, 0, 0}, {0.3, 0.6, 0.9}, true, true);
    topkp_case("TopKTopPSample top-k 8 then top-p 0.5 + q", ACL_FLOAT16, 4, 100, {8, 8, 3, 20}, {0.5, 0.25, 0.9, 0.7},
               true, true);
    topkp_case("TopKTopPSample isNeedLogits false leaves the logits output", ACL_FLOAT16, 2, 30, {4, 10}, {0.8, 1},
               true, false);
    Dev x = make({2, 16}, ACL_FLOAT16, {1}), k = make({2}, ACL_INT32, {1}), p = make({2}, ACL_FLOAT16, {1}),
        sel = make({2}, ACL_INT64, {0}), kept = make({2, 16}, ACL_FLOAT, {0});
    Dev xf = make({2, 16}, ACL_FLOAT, {1}), pb = make({2}, ACL_BF16, {1}), k3 = make({3}, ACL_INT32, {1}),
        q15 = make({2, 15}, ACL_FLOAT, {1}), sel32 = make({2}, ACL_INT32, {0});
    auto call = [&](aclTensor *xt, aclTensor *kt, aclTensor *pt, aclTensor *qt, int64_t guess, aclTensor *st) {
        return aclnnTopKTopPSampleGetWorkspaceSize(xt, kt, pt, qt, 1e-8, true, guess, st, kept.t, &ws, &ex);
    };
    expect_code("TopKTopPSample null topP", call(x.t, k.t, nullptr, nullptr, 32, sel.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("TopKTopPSample FLOAT logits", call(xf.t, k.t, p.t, nullptr, 32, sel.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("TopKTopPSample BFLOAT16 topP for FLOAT16 logits", call(x.t, k.t, pb.t, nullptr, 32, sel.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TopKTopPSample INT32 logitsSelectIdx", call(x.t, k.t, p.t, nullptr, 32, sel32.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TopKTopPSample topK [3] for batch 2", call(x.t, k3.t, p.t, nullptr, 32, sel.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TopKTopPSample q [2,15]", call(x.t, k.t, p.t, q15.t, 32, sel.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("TopKTopPSample topKGuess 0", call(x.t, k.t, p.t, nullptr, 0, sel.t), ACLNN_ERR_PARAM_INVALID);
    section("top_k_top_p_sample", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    rotary_v2();
    interleave_rope();
    paged_caches();
    top_k_top_p_sample();
    rope_with_sin_cos_cache();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
