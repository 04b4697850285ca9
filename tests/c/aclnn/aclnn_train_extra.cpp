/* Experimental Atlas A2 operators of ops-nn / ops-math (`train_extra.rs`) against host
 * references (float64): SiluMul, SortWithIndex, AsStrided, ViewCopy, FusedMulAddN,
 * ApplyAdamD (plain and Nesterov, in place and to separate outputs), ApplyFtrl; each with
 * documented argument errors (ACLNN_ERR_PARAM_NULLPTR 161001 / ACLNN_ERR_PARAM_INVALID
 * 161002). Tolerances: data movement exactly; float32 arithmetic to 1e-6 relative (the
 * engine computes in float32 or float64 and rounds once); float16 to 2e-3. Inputs include
 * transposed and strided views. */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_silu_mul.h"
#include "aclnnop/aclnn_sort_with_index.h"
#include "aclnnop/aclnn_as_strided.h"
#include "aclnnop/aclnn_view_copy.h"
#include "aclnnop/aclnn_fused_mul_add_n.h"
#include "aclnnop/aclnn_apply_adam_d.h"
#include "aclnnop/aclnn_apply_ftrl.h"

static aclrtStream S;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

static aclIntArray *ia(std::vector<int64_t> v) { return aclCreateIntArray(v.data(), v.size()); }

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

static void silu_mul() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        std::vector<double> X = values(12, t, 1), Y = values(12, t, 2), R(12);
        for (int i = 0; i < 12; i++) R[i] = X[i] / (1 + std::exp(-X[i])) * Y[i];
        Dev x = make({3, 4}, t, X, TRANSPOSED), y = make({3, 4}, t, Y, STRIDED), o = make({3, 4}, t, {0});
        RUN(S, aclnnSiluMul, x.t, y.t, o.t);
        compare(t == ACL_FLOAT ? "SiluMul float32" : "SiluMul float16", read(o), as(R, t), t == ACL_FLOAT ? 1e-6 : 2e-3);
        release(x), release(y), release(o);
    }
    Dev x = make({3, 4}, ACL_FLOAT, {1}), o = make({3, 4}, ACL_FLOAT, {0});
    Dev x1 = make({12}, ACL_FLOAT, {1}), xi = make({3, 4}, ACL_INT32, {1});
    expect_code("SiluMul null y", aclnnSiluMulGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SiluMul 1-D x", aclnnSiluMulGetWorkspaceSize(x1.t, x1.t, x1.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SiluMul int32 x", aclnnSiluMulGetWorkspaceSize(xi.t, xi.t, xi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &o, &x1, &xi}) release(*d);
    printf("ok silu mul\n");
}

static void sort_with_index() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int R = 3, N = 6;
    std::vector<double> X = {3, 1, 2, 1, 5, 0, -1, -1, 4, 2, 2, 9, 7, 6, 5, 4, 3, 2}, I(R * N);
    for (int i = 0; i < R * N; i++) I[i] = 100 + i * 3;
    for (bool desc : {false, true}) {
        Dev x = make({R, N}, ACL_FLOAT, X, STRIDED), ix = make({R, N}, ACL_INT32, I);
        Dev v = make({R, N}, ACL_FLOAT, {0}), io = make({R, N}, ACL_INT32, {0});
        RUN(S, aclnnSortWithIndex, x.t, ix.t, -1, desc, true, v.t, io.t);
        std::vector<double> WV(R * N), WI(R * N);
        for (int r = 0; r < R; r++) {
            std::vector<int> p(N);
            std::iota(p.begin(), p.end(), 0);
            std::stable_sort(p.begin(), p.end(), [&](int a, int b) {
                return desc ? X[r * N + a] > X[r * N + b] : X[r * N + a] < X[r * N + b];
            });
            for (int j = 0; j < N; j++) WV[r * N + j] = X[r * N + p[j]], WI[r * N + j] = I[r * N + p[j]];
        }
        compare(desc ? "SortWithIndex descending values" : "SortWithIndex values", read(v), WV, 0);
        compare(desc ? "SortWithIndex descending index" : "SortWithIndex index", read(io), WI, 0);
        if (desc) {
            expect_code("SortWithIndex axis 0",
                        aclnnSortWithIndexGetWorkspaceSize(x.t, ix.t, 0, desc, true, v.t, io.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            Dev i64 = make({R, N}, ACL_INT64, I);
            expect_code("SortWithIndex int64 index",
                        aclnnSortWithIndexGetWorkspaceSize(x.t, i64.t, -1, desc, true, v.t, io.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("SortWithIndex null indicesOut",
                        aclnnSortWithIndexGetWorkspaceSize(x.t, ix.t, -1, desc, true, v.t, nullptr, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            release(i64);
        }
        for (Dev *d : {&x, &ix, &v, &io}) release(*d);
    }
    printf("ok sort with index\n");
}

static void views() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* AsStrided over a transposed [3, 4]: its elements in row-major order are the storage. */
    std::vector<double> X = values(12, ACL_FLOAT, 5);
    Dev x = make({3, 4}, ACL_FLOAT, X, TRANSPOSED), o = make({2, 3}, ACL_FLOAT, {0});
    aclIntArray *sz = ia({2, 3}), *st = ia({1, 3}), *off = ia({2}), *bad = ia({5});
    RUN(S, aclnnAsStrided, x.t, sz, st, off, o.t);
    std::vector<double> W(6);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) W[i * 3 + j] = X[2 + i + 3 * j];
    compare("AsStrided", read(o), W, 0);
    expect_code("AsStrided beyond x", aclnnAsStridedGetWorkspaceSize(x.t, sz, st, bad, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AsStrided null size", aclnnAsStridedGetWorkspaceSize(x.t, nullptr, st, off, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyIntArray(sz), aclDestroyIntArray(st), aclDestroyIntArray(off), aclDestroyIntArray(bad);
    release(x), release(o);

    /* ViewCopy: dst [8] with view (size [2, 2], stride [3, 1], offset 1) takes src [3, 3]'s view
     * (size [2, 2], stride [1, 3], offset 4); dst_out a separate tensor, then dst itself. */
    std::vector<double> D = values(8, ACL_FLOAT, 6), Sv = values(9, ACL_FLOAT, 7);
    for (int inplace = 0; inplace < 2; inplace++) {
        Dev d = make({8}, ACL_FLOAT, D), s = make({3, 3}, ACL_FLOAT, Sv, STRIDED), out = make({8}, ACL_FLOAT, {0});
        Dev dsz = make({2}, ACL_INT32, {2, 2}), dst = make({2}, ACL_INT32, {3, 1}), doff = make({1}, ACL_INT32, {1});
        Dev ssz = make({2}, ACL_INT32, {2, 2}), sst = make({2}, ACL_INT32, {1, 3}), soff = make({1}, ACL_INT32, {4});
        Dev &y = inplace ? d : out;
        RUN(S, aclnnViewCopy, d.t, dsz.t, dst.t, doff.t, s.t, ssz.t, sst.t, soff.t, y.t);
        std::vector<double> WD(D);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) WD[1 + 3 * i + j] = Sv[4 + i + 3 * j];
        compare(inplace ? "ViewCopy in place" : "ViewCopy", read(y), WD, 0);
        if (inplace) {
            Dev s64 = make({2}, ACL_INT64, {1, 3});
            expect_code("ViewCopy int64 src_stride with int32 metadata",
                        aclnnViewCopyGetWorkspaceSize(d.t, dsz.t, dst.t, doff.t, s.t, ssz.t, s64.t, soff.t, y.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ViewCopy two storage offsets",
                        aclnnViewCopyGetWorkspaceSize(d.t, dsz.t, dst.t, dsz.t, s.t, ssz.t, sst.t, soff.t, y.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ViewCopy null src",
                        aclnnViewCopyGetWorkspaceSize(d.t, dsz.t, dst.t, doff.t, nullptr, ssz.t, sst.t, soff.t, y.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            release(s64);
        }
        for (Dev *e : {&d, &s, &out, &dsz, &dst, &doff, &ssz, &sst, &soff}) release(*e);
    }
    printf("ok views\n");
}

static void fused_mul_add_n() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_INT32}) {
        std::vector<double> A = values(6, t, 8), B = values(6, t, 9), R(6);
        double c = t == ACL_FLOAT ? -1.75 : 3;
        for (int i = 0; i < 6; i++) R[i] = A[i] * c + B[i];
        Dev a = make({2, 3}, t, A, TRANSPOSED), b = make({2, 3}, t, B), x3 = make({1, 1}, t, {c}), y = make({2, 3}, t, {0});
        RUN(S, aclnnFusedMulAddN, a.t, b.t, x3.t, y.t);
        compare(t == ACL_FLOAT ? "FusedMulAddN float32" : "FusedMulAddN int32", read(y), as(R, t), t == ACL_FLOAT ? 1e-6 : 0);
        if (t == ACL_INT32) {
            Dev two = make({2}, t, {1, 2}), f = make({2, 3}, ACL_FLOAT, {0});
            expect_code("FusedMulAddN x3 of two elements", aclnnFusedMulAddNGetWorkspaceSize(a.t, b.t, two.t, y.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FusedMulAddN float y for int32 x1", aclnnFusedMulAddNGetWorkspaceSize(a.t, b.t, x3.t, f.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FusedMulAddN null x3", aclnnFusedMulAddNGetWorkspaceSize(a.t, b.t, nullptr, y.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            release(two), release(f);
        }
        for (Dev *d : {&a, &b, &x3, &y}) release(*d);
    }
    printf("ok fused mul add n\n");
}

static void apply_adam_d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double b1p = 0.9 * 0.9, b2p = 0.999 * 0.999, lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    for (int variant = 0; variant < 2; variant++) {
        bool nesterov = variant == 1, inplace = variant == 1;
        std::vector<double> P = values(6, ACL_FLOAT, 11), M = values(6, ACL_FLOAT, 12), G = values(6, ACL_FLOAT, 14);
        std::vector<double> V = values(6, ACL_FLOAT, 13, true, true);
        Dev p = make({2, 3}, ACL_FLOAT, P), m = make({2, 3}, ACL_FLOAT, M, TRANSPOSED), v = make({2, 3}, ACL_FLOAT, V);
        Dev g = make({2, 3}, ACL_FLOAT, G, STRIDED);
        Dev s1 = make({1}, ACL_FLOAT, {b1p}), s2 = make({1}, ACL_FLOAT, {b2p}), s3 = make({}, ACL_FLOAT, {lr});
        Dev s4 = make({1}, ACL_FLOAT, {b1}), s5 = make({1}, ACL_FLOAT, {b2}), s6 = make({1, 1}, ACL_FLOAT, {eps});
        Dev po = make({2, 3}, ACL_FLOAT, {0}), mo = make({2, 3}, ACL_FLOAT, {0}), vo = make({2, 3}, ACL_FLOAT, {0});
        Dev &P2 = inplace ? p : po, &M2 = inplace ? m : mo, &V2 = inplace ? v : vo;
        RUN(S, aclnnApplyAdamD, p.t, m.t, v.t, s1.t, s2.t, s3.t, s4.t, s5.t, s6.t, g.t, false, nesterov, P2.t, M2.t, V2.t);
        /* the kernel reads its scalars as float32 */
        double fb1p = as_type(b1p, ACL_FLOAT), fb2p = as_type(b2p, ACL_FLOAT), flr = as_type(lr, ACL_FLOAT);
        double fb1 = as_type(b1, ACL_FLOAT), fb2 = as_type(b2, ACL_FLOAT), feps = as_type(eps, ACL_FLOAT);
        double lrt = flr * std::sqrt(1 - fb2p) / (1 - fb1p);
        std::vector<double> WP(6), WM(6), WV(6);
        for (int i = 0; i < 6; i++) {
            WM[i] = fb1 * M[i] + (1 - fb1) * G[i];
            WV[i] = fb2 * V[i] + (1 - fb2) * G[i] * G[i];
            double num = nesterov ? WM[i] * fb1 + (1 - fb1) * G[i] : WM[i];
            WP[i] = P[i] - lrt * num / (feps + std::sqrt(WV[i]));
        }
        compare(nesterov ? "ApplyAdamD nesterov in place: var" : "ApplyAdamD: var", read(P2), as(WP, ACL_FLOAT), 1e-6);
        compare("ApplyAdamD: m", read(M2), as(WM, ACL_FLOAT), 1e-6);
        compare("ApplyAdamD: v", read(V2), as(WV, ACL_FLOAT), 1e-6);
        if (!inplace) {
            compare("ApplyAdamD: var input unchanged", read(p), P, 0);
            Dev two = make({2}, ACL_FLOAT, {0.1, 0.2}), h = make({2, 3}, ACL_FLOAT16, {0});
            expect_code("ApplyAdamD lr of two elements",
                        aclnnApplyAdamDGetWorkspaceSize(p.t, m.t, v.t, s1.t, s2.t, two.t, s4.t, s5.t, s6.t, g.t, false, false,
                                                        po.t, mo.t, vo.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ApplyAdamD float16 grad",
                        aclnnApplyAdamDGetWorkspaceSize(p.t, m.t, v.t, s1.t, s2.t, s3.t, s4.t, s5.t, s6.t, h.t, false, false,
                                                        po.t, mo.t, vo.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ApplyAdamD null epsilon",
                        aclnnApplyAdamDGetWorkspaceSize(p.t, m.t, v.t, s1.t, s2.t, s3.t, s4.t, s5.t, nullptr, g.t, false,
                                                        false, po.t, mo.t, vo.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            release(two), release(h);
        }
        for (Dev *d : {&p, &m, &v, &g, &s1, &s2, &s3, &s4, &s5, &s6, &po, &mo, &vo}) release(*d);
    }
    printf("ok apply adam d\n");
}

static void apply_ftrl() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double lr = 0.5, l1 = 0.05, l2 = 0.01, lp = -0.5;
    std::vector<double> P = values(8, ACL_FLOAT, 15), L = values(8, ACL_FLOAT, 16), G = values(8, ACL_FLOAT, 18);
    std::vector<double> A = values(8, ACL_FLOAT, 17, true, true);
    L[0] = 0.01, L[1] = -0.02; /* |linear| <= l1 after the update for small steps too */
    Dev p = make({2, 4}, ACL_FLOAT, P, STRIDED), a = make({2, 4}, ACL_FLOAT, A), l = make({2, 4}, ACL_FLOAT, L, TRANSPOSED);
    Dev g = make({2, 4}, ACL_FLOAT, G);
    Dev slr = make({}, ACL_FLOAT, {lr}), sl1 = make({1}, ACL_FLOAT, {l1}), sl2 = make({1}, ACL_FLOAT, {l2}), slp = make({1}, ACL_FLOAT, {lp});
    RUN(S, aclnnApplyFtrl, p.t, a.t, l.t, g.t, slr.t, sl1.t, sl2.t, slp.t, false);
    double fl1 = as_type(l1, ACL_FLOAT), fl2 = as_type(l2, ACL_FLOAT);
    std::vector<double> WP(8), WA(8), WL(8);
    for (int i = 0; i < 8; i++) {
        double a1 = A[i] + G[i] * G[i];
        WL[i] = as_type(L[i] + G[i] - (std::pow(a1, -lp) - std::pow(A[i], -lp)) / lr * P[i], ACL_FLOAT);
        double q = std::pow(a1, -lp) / lr + 2 * fl2;
        WP[i] = std::fabs(WL[i]) > fl1 ? ((WL[i] > 0 ? 1 : -1) * fl1 - WL[i]) / q : 0;
        WA[i] = a1;
    }
    compare("ApplyFtrl: linear", read(l), WL, 1e-6);
    compare("ApplyFtrl: var", read(p), as(WP, ACL_FLOAT), 1e-6);
    compare("ApplyFtrl: accum", read(a), as(WA, ACL_FLOAT), 1e-6);
    expect_code("ApplyFtrl useLocking", aclnnApplyFtrlGetWorkspaceSize(p.t, a.t, l.t, g.t, slr.t, sl1.t, sl2.t, slp.t, true, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev two = make({2, 1}, ACL_FLOAT, {0.1});
    expect_code("ApplyFtrl 2-D l1", aclnnApplyFtrlGetWorkspaceSize(p.t, a.t, l.t, g.t, slr.t, two.t, sl2.t, slp.t, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ApplyFtrl null grad", aclnnApplyFtrlGetWorkspaceSize(p.t, a.t, l.t, nullptr, slr.t, sl1.t, sl2.t, slp.t, false, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&p, &a, &l, &g, &slr, &sl1, &sl2, &slp, &two}) release(*d);
    printf("ok apply ftrl\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    silu_mul();
    sort_with_index();
    views();
    fused_mul_add_n();
    apply_adam_d();
    apply_ftrl();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
