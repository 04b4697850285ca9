/* More operators of the aclnn reference, against float64 host references: LinalgCross,
 * Im2col, Einsum, InstanceNorm, ApplyAdamW (V1), Frac / InplaceFrac, UpsampleNearest3d and
 * its backward; each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR /
 * ACLNN_ERR_PARAM_INVALID).
 * UniqueDim (output shapes read back with aclGetViewShape).
 * Tolerances: data movement and integer results exactly; float32 values to 1e-6 relative
 * (computed in float64 and rounded once), float16 to one f16 rounding of the reference;
 * Einsum (float64 accumulation, one rounding) to 1e-6; InstanceNorm to 1e-5. Inputs include
 * transposed and strided views and broadcasting. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_linalg_cross.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_einsum.h"
#include "aclnnop/aclnn_instance_norm.h"
#include "aclnnop/aclnn_apply_adam_w.h"
#include "aclnnop/aclnn_frac.h"
#include "aclnnop/aclnn_upsample_nearest_3d.h"
#include "aclnnop/aclnn_upsample_nearest_3d_backward.h"
#include "aclnnop/aclnn_unique_dim.h"

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

static aclTensorList *tl(std::vector<Dev *> ds) {
    std::vector<aclTensor *> ts;
    for (Dev *d : ds) ts.push_back(d->t);
    return aclCreateTensorList(ts.data(), ts.size());
}

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

static void cross() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* [4, 3] x [4, 3] along dim -1, float32 and int32 */
    for (aclDataType t : {ACL_FLOAT, ACL_INT32, ACL_FLOAT16}) {
        std::vector<double> A = values(12, t, 1), B = values(12, t, 2);
        Dev a = make({4, 3}, t, A), b = make({4, 3}, t, B, STRIDED), o = make({4, 3}, t, {0});
        RUN(S, aclnnLinalgCross, a.t, b.t, -1, o.t);
        std::vector<double> want(12);
        for (int r = 0; r < 4; r++)
            for (int k = 0; k < 3; k++) {
                int p = (k + 1) % 3, q = (k + 2) % 3;
                want[r * 3 + k] = as_type(A[r * 3 + p] * B[r * 3 + q] - A[r * 3 + q] * B[r * 3 + p], t);
            }
        char what[96];
        snprintf(what, sizeof what, "LinalgCross %s [4, 3] x strided [4, 3], dim -1", dname(t));
        compare(what, read(o), want, t == ACL_FLOAT ? 1e-6 : 0);
        for (Dev *d : {&a, &b, &o}) release(*d);
    }
    /* dim 0 of a transposed [3, 2] (self) with other [3, 1] broadcast -> [3, 2] */
    std::vector<double> A = values(6, ACL_FLOAT, 3), B = values(3, ACL_FLOAT, 4);
    Dev a = make({3, 2}, ACL_FLOAT, A, TRANSPOSED), b = make({3, 1}, ACL_FLOAT, B), o = make({3, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnLinalgCross, a.t, b.t, 0, o.t);
    std::vector<double> want(6);
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 3; k++) {
            int p = (k + 1) % 3, q = (k + 2) % 3;
            want[k * 2 + c] = as_type(A[p * 2 + c] * B[q] - A[q * 2 + c] * B[p], ACL_FLOAT);
        }
    compare("LinalgCross dim 0, transposed self, broadcast other [3, 1]", read(o), want, 1e-6);
    /* errors */
    Dev bad = make({4, 2}, ACL_FLOAT, {1}), o42 = make({4, 2}, ACL_FLOAT, {0}), oi = make({3, 2}, ACL_INT32, {0});
    Dev c64 = make({3, 2}, ACL_DOUBLE, {1});
    expect_code("LinalgCross null other", aclnnLinalgCrossGetWorkspaceSize(a.t, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LinalgCross dim of size 2", aclnnLinalgCrossGetWorkspaceSize(bad.t, bad.t, -1, o42.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCross int32 out of float inputs", aclnnLinalgCrossGetWorkspaceSize(a.t, b.t, 0, oi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCross double other with float self",
                aclnnLinalgCrossGetWorkspaceSize(a.t, c64.t, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCross dim 2 of 2-D tensors", aclnnLinalgCrossGetWorkspaceSize(a.t, b.t, 2, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&a, &b, &o, &bad, &o42, &oi, &c64}) release(*d);
    printf("ok cross\n");
}

/* unfold of x [N, C, H, W] (dense, row-major) */
static std::vector<double> unfold_ref(const std::vector<double> &x, int n, int c, int h, int w, int kh, int kw, int dh,
                                      int dw, int ph, int pw, int sh, int sw, int *L) {
    int oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
    *L = oh * ow;
    std::vector<double> y(static_cast<size_t>(n * c * kh * kw * oh * ow), 0);
    for (int b = 0; b < n; b++)
        for (int ci = 0; ci < c; ci++)
            for (int i = 0; i < kh; i++)
                for (int j = 0; j < kw; j++)
                    for (int oy = 0; oy < oh; oy++)
                        for (int ox = 0; ox < ow; ox++) {
                            int iy = oy * sh - ph + i * dh, ix = ox * sw - pw + j * dw;
                            double v = (iy < 0 || iy >= h || ix < 0 || ix >= w) ? 0 : x[((b * c + ci) * h + iy) * w + ix];
                            y[(((b * c + ci) * kh + i) * kw + j) * oh * ow + oy * ow + ox] = v;
                        }
    return y;
}

static void im2col() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* [2, 3, 5, 4], kernel (2, 3), dilation (2, 1), padding (1, 0), stride (1, 2) */
    std::vector<double> X = values(2 * 3 * 5 * 4, ACL_FLOAT, 5);
    int L = 0;
    std::vector<double> want = unfold_ref(X, 2, 3, 5, 4, 2, 3, 2, 1, 1, 0, 1, 2, &L);
    Dev x = make({2, 3, 5, 4}, ACL_FLOAT, X), o = make({2, 3 * 6, L}, ACL_FLOAT, {0});
    aclIntArray *k = ia({2, 3}), *d = ia({2, 1}), *p = ia({1, 0}), *s = ia({1, 2});
    RUN(S, aclnnIm2col, x.t, k, d, p, s, o.t);
    compare("Im2col [2, 3, 5, 4] k(2,3) d(2,1) p(1,0) s(1,2)", read(o), want, 0);
    /* 3-D float16 input [2, 4, 4] (strided), kernel 2, stride 2 */
    std::vector<double> X3 = values(32, ACL_FLOAT16, 6);
    int L3 = 0;
    std::vector<double> want3 = unfold_ref(X3, 1, 2, 4, 4, 2, 2, 1, 1, 0, 0, 2, 2, &L3);
    Dev x3 = make({2, 4, 4}, ACL_FLOAT16, X3, STRIDED), o3 = make({8, L3}, ACL_FLOAT16, {0});
    aclIntArray *k2 = ia({2, 2}), *d1 = ia({1, 1}), *p0 = ia({0, 0}), *s2 = ia({2, 2});
    RUN(S, aclnnIm2col, x3.t, k2, d1, p0, s2, o3.t);
    compare("Im2col float16 strided [2, 4, 4] k 2 s 2", read(o3), want3, 0);
    /* errors */
    Dev o_bad = make({2, 18, L + 1}, ACL_FLOAT, {0}), xi = make({2, 3, 5, 4}, ACL_INT32, {0});
    Dev x2 = make({5, 4}, ACL_FLOAT, {0});
    aclIntArray *k0 = ia({0, 3});
    expect_code("Im2col null self", aclnnIm2colGetWorkspaceSize(nullptr, k, d, p, s, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Im2col null kernelSize", aclnnIm2colGetWorkspaceSize(x.t, nullptr, d, p, s, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Im2col out of the wrong shape", aclnnIm2colGetWorkspaceSize(x.t, k, d, p, s, o_bad.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Im2col int32 self", aclnnIm2colGetWorkspaceSize(xi.t, k, d, p, s, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Im2col 2-D self", aclnnIm2colGetWorkspaceSize(x2.t, k, d, p, s, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Im2col kernel size 0", aclnnIm2colGetWorkspaceSize(x.t, k0, d, p, s, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *dv : {&x, &o, &x3, &o3, &o_bad, &xi, &x2}) release(*dv);
    printf("ok im2col\n");
}

static void einsum() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* "abcd,abced->abce" (documented): [2, 2, 3, 4] x [2, 2, 3, 5, 4] -> [2, 2, 3, 5] */
    std::vector<double> A = values(48, ACL_FLOAT, 7), B = values(240, ACL_FLOAT, 8);
    Dev a = make({2, 2, 3, 4}, ACL_FLOAT, A), b = make({2, 2, 3, 5, 4}, ACL_FLOAT, B), o = make({2, 2, 3, 5}, ACL_FLOAT, {0});
    aclTensorList *ab = tl({&a, &b});
    RUN(S, aclnnEinsum, ab, "abcd,abced->abce", o.t);
    std::vector<double> want(60, 0);
    for (int abc = 0; abc < 12; abc++)
        for (int e = 0; e < 5; e++) {
            double acc = 0;
            for (int dd = 0; dd < 4; dd++) acc += A[abc * 4 + dd] * B[(abc * 5 + e) * 4 + dd];
            want[abc * 5 + e] = as_type(acc, ACL_FLOAT);
        }
    compare("Einsum abcd,abced->abce", read(o), want, 1e-6);
    /* "a,b->ab" (documented), int32, the second operand strided */
    std::vector<double> U = values(3, ACL_INT32, 9), V = values(4, ACL_INT32, 10);
    Dev u = make({3}, ACL_INT32, U), v = make({4}, ACL_INT32, V, STRIDED), uv = make({3, 4}, ACL_INT32, {0});
    aclTensorList *l2 = tl({&u, &v});
    RUN(S, aclnnEinsum, l2, "a,b->ab", uv.t);
    std::vector<double> outer;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) outer.push_back(U[i] * V[j]);
    compare("Einsum a,b->ab int32", read(uv), outer, 0);
    /* a general one: matrix product of a transposed float16 operand, "ij,jk" (implicit output) */
    std::vector<double> M = values(6, ACL_FLOAT16, 11), N = values(8, ACL_FLOAT16, 12);
    Dev m = make({3, 2}, ACL_FLOAT16, M, TRANSPOSED), n = make({2, 4}, ACL_FLOAT16, N), mn = make({3, 4}, ACL_FLOAT16, {0});
    aclTensorList *l3 = tl({&m, &n});
    RUN(S, aclnnEinsum, l3, "ij,jk", mn.t);
    std::vector<double> mm;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++) mm.push_back(as_type(M[i * 2] * N[k] + M[i * 2 + 1] * N[4 + k], ACL_FLOAT16));
    compare("Einsum ij,jk (implicit output) float16, transposed operand", read(mn), mm, 0);
    /* errors */
    Dev o_bad = make({2, 2, 3, 4}, ACL_FLOAT, {0}), dbl = make({3}, ACL_DOUBLE, {1});
    aclTensorList *ld = tl({&dbl, &dbl});
    Dev o33 = make({3, 3}, ACL_DOUBLE, {0});
    expect_code("Einsum null equation", aclnnEinsumGetWorkspaceSize(ab, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Einsum null tensors", aclnnEinsumGetWorkspaceSize(nullptr, "a,b->ab", o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Einsum output of the wrong shape", aclnnEinsumGetWorkspaceSize(ab, "abcd,abced->abce", o_bad.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Einsum label sizes that disagree", aclnnEinsumGetWorkspaceSize(ab, "abcd,abcde->abce", o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Einsum double operands", aclnnEinsumGetWorkspaceSize(ld, "a,b->ab", o33.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *dv : {&a, &b, &o, &u, &v, &uv, &m, &n, &mn, &o_bad, &dbl, &o33}) release(*dv);
    printf("ok einsum\n");
}

static void instance_norm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int N = 2, C = 3, H = 4, W = 5;
    const double eps = 1e-5;
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        std::vector<double> X = values(N * C * H * W, ACL_FLOAT, 13), G = values(C, ACL_FLOAT, 14), Bt = values(C, ACL_FLOAT, 15);
        Shape xs = nhwc ? Shape{N, H, W, C} : Shape{N, C, H, W};
        Shape ss = nhwc ? Shape{N, 1, 1, C} : Shape{N, C, 1, 1};
        Dev x = make(xs, ACL_FLOAT, X), g = make({C}, ACL_FLOAT, G), b = make({C}, ACL_FLOAT, Bt);
        Dev y = make(xs, ACL_FLOAT, {0}), mean = make(ss, ACL_FLOAT, {0}), var = make(ss, ACL_FLOAT, {0});
        RUN(S, aclnnInstanceNorm, x.t, g.t, b.t, nhwc ? "NHWC" : "NCHW", eps, y.t, mean.t, var.t);
        std::vector<double> wy(X.size()), wm(N * C), wv(N * C);
        auto at = [&](int n, int c, int hw) { return nhwc ? (n * H * W + hw) * C + c : (n * C + c) * H * W + hw; };
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++) {
                double m = 0, v = 0;
                for (int i = 0; i < H * W; i++) m += X[at(n, c, i)];
                m /= H * W;
                for (int i = 0; i < H * W; i++) v += (X[at(n, c, i)] - m) * (X[at(n, c, i)] - m);
                v /= H * W;
                for (int i = 0; i < H * W; i++) wy[at(n, c, i)] = (X[at(n, c, i)] - m) / std::sqrt(v + eps) * G[c] + Bt[c];
                int si = nhwc ? n * C + c : n * C + c; /* both stat layouts list (n, c) in this order */
                wm[si] = m;
                wv[si] = v;
            }
        compare(nhwc ? "InstanceNorm NHWC y" : "InstanceNorm NCHW y", read(y), wy, 1e-5);
        compare(nhwc ? "InstanceNorm NHWC mean" : "InstanceNorm NCHW mean", read(mean), wm, 1e-5);
        compare(nhwc ? "InstanceNorm NHWC variance" : "InstanceNorm NCHW variance", read(var), wv, 1e-5);
        if (nhwc) {
            Dev gh = make({C}, ACL_FLOAT16, {1}), x3 = make({N, C, H}, ACL_FLOAT, {1});
            expect_code("InstanceNorm null gamma",
                        aclnnInstanceNormGetWorkspaceSize(x.t, nullptr, b.t, "NHWC", eps, y.t, mean.t, var.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("InstanceNorm dataFormat NCDHW",
                        aclnnInstanceNormGetWorkspaceSize(x.t, g.t, b.t, "NCDHW", eps, y.t, mean.t, var.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("InstanceNorm float16 gamma for float x",
                        aclnnInstanceNormGetWorkspaceSize(x.t, gh.t, b.t, "NHWC", eps, y.t, mean.t, var.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("InstanceNorm 3-D x",
                        aclnnInstanceNormGetWorkspaceSize(x3.t, g.t, b.t, "NHWC", eps, y.t, mean.t, var.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("InstanceNorm NHWC x read as NCHW (gamma [3] is not C = 4)",
                        aclnnInstanceNormGetWorkspaceSize(x.t, g.t, b.t, "NCHW", eps, y.t, mean.t, var.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(gh);
            release(x3);
        }
        for (Dev *d : {&x, &g, &b, &y, &mean, &var}) release(*d);
    }
    printf("ok instance norm\n");
}

static void adamw() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, wd = 0.1, eps = 1e-8;
    for (int variant = 0; variant < 2; variant++) {
        bool ams = variant == 1, maximize = variant == 1;
        std::vector<double> P = values(6, ACL_FLOAT, 21), G = values(6, ACL_FLOAT, 22), MX = values(6, ACL_FLOAT, 23, false, true);
        std::vector<double> M = values(6, ACL_FLOAT, 24), V = values(6, ACL_FLOAT, 25, false, true);
        for (auto &e : V) e = as_type(e / 100, ACL_FLOAT);
        for (auto &e : MX) e = as_type(e / 100, ACL_FLOAT);
        const double b1p = as_type(std::pow(b1, 3), ACL_FLOAT), b2p = as_type(std::pow(b2, 3), ACL_FLOAT);
        Dev p = make({2, 3}, ACL_FLOAT, P), m = make({2, 3}, ACL_FLOAT, M), v = make({2, 3}, ACL_FLOAT, V, STRIDED);
        Dev g = make({2, 3}, ACL_FLOAT, G), mx = make({2, 3}, ACL_FLOAT, MX);
        Dev sb1p = make({1}, ACL_FLOAT, {b1p}), sb2p = make({1}, ACL_FLOAT, {b2p}), slr = make({1}, ACL_FLOAT, {lr});
        Dev swd = make({1}, ACL_FLOAT, {wd}), sb1 = make({1}, ACL_FLOAT, {b1}), sb2 = make({1}, ACL_FLOAT, {b2});
        Dev seps = make({1}, ACL_FLOAT, {eps});
        RUN(S, aclnnApplyAdamW, p.t, m.t, v.t, sb1p.t, sb2p.t, slr.t, swd.t, sb1.t, sb2.t, seps.t, g.t,
            ams ? mx.t : nullptr, ams, maximize);
        /* the reference with the stored (float32) scalars */
        double fb1 = as_type(b1, ACL_FLOAT), fb2 = as_type(b2, ACL_FLOAT), flr = as_type(lr, ACL_FLOAT);
        double fwd = as_type(wd, ACL_FLOAT), feps = as_type(eps, ACL_FLOAT);
        for (size_t i = 0; i < P.size(); i++) {
            double gi = maximize ? -G[i] : G[i];
            M[i] = as_type(fb1 * M[i] + (1 - fb1) * gi, ACL_FLOAT);
            V[i] = as_type(fb2 * V[i] + (1 - fb2) * gi * gi, ACL_FLOAT);
            if (ams) V[i] = std::max(V[i], MX[i]);
            double bc1 = 1 - b1p * fb1, bc2 = 1 - b2p * fb2;
            P[i] = as_type(P[i] * (1 - flr * fwd) - flr * (M[i] / bc1) / (std::sqrt(V[i] / bc2) + feps), ACL_FLOAT);
        }
        compare(ams ? "ApplyAdamW amsgrad+maximize: var" : "ApplyAdamW: var", read(p), P, 1e-6);
        compare(ams ? "ApplyAdamW amsgrad+maximize: m" : "ApplyAdamW: m", read(m), M, 1e-6);
        compare(ams ? "ApplyAdamW amsgrad+maximize: v (max with maxGradNorm)" : "ApplyAdamW: v (strided)", read(v), V, 1e-6);
        if (ams) {
            compare("ApplyAdamW: maxGradNormOptional is only read", read(mx), MX, 0);
            Dev two = make({2}, ACL_FLOAT, {1, 2}), gh = make({2, 3}, ACL_FLOAT16, {0});
            expect_code("ApplyAdamW amsgrad without maxGradNormOptional",
                        aclnnApplyAdamWGetWorkspaceSize(p.t, m.t, v.t, sb1p.t, sb2p.t, slr.t, swd.t, sb1.t, sb2.t, seps.t,
                                                        g.t, nullptr, true, false, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("ApplyAdamW null lr",
                        aclnnApplyAdamWGetWorkspaceSize(p.t, m.t, v.t, sb1p.t, sb2p.t, nullptr, swd.t, sb1.t, sb2.t,
                                                        seps.t, g.t, nullptr, false, false, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("ApplyAdamW lr of two elements",
                        aclnnApplyAdamWGetWorkspaceSize(p.t, m.t, v.t, sb1p.t, sb2p.t, two.t, swd.t, sb1.t, sb2.t, seps.t,
                                                        g.t, nullptr, false, false, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ApplyAdamW float16 grad for a float32 var",
                        aclnnApplyAdamWGetWorkspaceSize(p.t, m.t, v.t, sb1p.t, sb2p.t, slr.t, swd.t, sb1.t, sb2.t, seps.t,
                                                        gh.t, nullptr, false, false, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(two);
            release(gh);
        }
        for (Dev *d : {&p, &m, &v, &g, &mx, &sb1p, &sb2p, &slr, &swd, &sb1, &sb2, &seps}) release(*d);
    }
    printf("ok adamw\n");
}

static void frac() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32, ACL_INT8}) {
        std::vector<double> X = values(12, t, 31);
        if (is_float(t)) {
            X[0] = 2.75;
            X[1] = -2.75;
            X[2] = INFINITY;
        }
        Dev x = make({3, 4}, t, X, TRANSPOSED), o = make({3, 4}, t, {0});
        RUN(S, aclnnFrac, x.t, o.t);
        std::vector<double> want;
        for (double e : X) want.push_back(as_type(e - std::trunc(e), t));
        char what[64];
        snprintf(what, sizeof what, "Frac %s (transposed self)", dname(t));
        compare(what, read(o), want, 0);
        RUN(S, aclnnInplaceFrac, x.t);
        snprintf(what, sizeof what, "InplaceFrac %s", dname(t));
        compare(what, read(x), want, 0);
        release(x);
        release(o);
    }
    Dev x = make({4}, ACL_FLOAT, {1.5}), oh = make({4}, ACL_FLOAT16, {0}), o3 = make({3}, ACL_FLOAT, {0});
    Dev xd = make({4}, ACL_DOUBLE, {1.5});
    expect_code("Frac null input", aclnnFracGetWorkspaceSize(nullptr, oh.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Frac float16 out of a float input", aclnnFracGetWorkspaceSize(x.t, oh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Frac out of another shape", aclnnFracGetWorkspaceSize(x.t, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceFrac double", aclnnInplaceFracGetWorkspaceSize(xd.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceFrac null inputRef", aclnnInplaceFracGetWorkspaceSize(nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &oh, &o3, &xd}) release(*d);
    printf("ok frac\n");
}

static void upsample3d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* [1, 2, 2, 3, 2] -> [1, 2, 3, 5, 4]: source index floor(o * in / out) per dimension */
    const int C = 2, D = 2, H = 3, W = 2, OD = 3, OH = 5, OW = 4;
    std::vector<double> X = values(C * D * H * W, ACL_FLOAT, 41);
    Dev x = make({1, C, D, H, W}, ACL_FLOAT, X), o = make({1, C, OD, OH, OW}, ACL_FLOAT, {0});
    aclIntArray *os = ia({OD, OH, OW});
    RUN(S, aclnnUpsampleNearest3d, x.t, os, 0.0, 0.0, 0.0, o.t);
    auto src = [](int o_, int in, int out) { return std::min(static_cast<int>(std::floor(o_ * (double)in / out)), in - 1); };
    std::vector<double> want, grad(X.size(), 0);
    std::vector<double> G = values(C * OD * OH * OW, ACL_FLOAT, 42);
    int gi = 0;
    for (int c = 0; c < C; c++)
        for (int d = 0; d < OD; d++)
            for (int h = 0; h < OH; h++)
                for (int w = 0; w < OW; w++, gi++) {
                    int i = ((c * D + src(d, D, OD)) * H + src(h, H, OH)) * W + src(w, W, OW);
                    want.push_back(X[i]);
                    grad[i] += G[gi];
                }
    compare("UpsampleNearest3d [1, 2, 2, 3, 2] -> (3, 5, 4)", read(o), want, 0);
    const std::vector<double> want0 = want;
    /* scales given (2, 2, 2): source floor(o / 2) */
    Dev o2 = make({1, C, 4, 6, 4}, ACL_FLOAT16, {0}), xh = make({1, C, D, H, W}, ACL_FLOAT16, X, STRIDED);
    aclIntArray *os2 = ia({4, 6, 4});
    RUN(S, aclnnUpsampleNearest3d, xh.t, os2, 2.0, 2.0, 2.0, o2.t);
    want.clear();
    for (int c = 0; c < C; c++)
        for (int d = 0; d < 4; d++)
            for (int h = 0; h < 6; h++)
                for (int w = 0; w < 4; w++) want.push_back(as_type(X[((c * D + d / 2) * H + h / 2) * W + w / 2], ACL_FLOAT16));
    compare("UpsampleNearest3d float16 strided, scales 2", read(o2), want, 0);
    /* the same input in format NDHWC ([N, D, H, W, C] in memory), the output NDHWC too */
    {
        std::vector<double> Xn(X.size()), wantn(want0.size());
        for (int c = 0; c < C; c++)
            for (int i = 0; i < D * H * W; i++) Xn[i * C + c] = X[c * D * H * W + i];
        for (int c = 0; c < C; c++)
            for (int i = 0; i < OD * OH * OW; i++) wantn[i * C + c] = want0[c * OD * OH * OW + i];
        Dev xn = make({1, D, H, W, C}, ACL_FLOAT, Xn), on = make({1, OD, OH, OW, C}, ACL_FLOAT, {0});
        Shape xs{1, D, H, W, C}, os5{1, OD, OH, OW, C};
        aclTensor *xt = aclCreateTensor(xs.data(), 5, ACL_FLOAT, xn.strides.data(), 0, ACL_FORMAT_NDHWC, xs.data(), 5, xn.mem);
        aclTensor *ot = aclCreateTensor(os5.data(), 5, ACL_FLOAT, on.strides.data(), 0, ACL_FORMAT_NDHWC, os5.data(), 5, on.mem);
        RUN(S, aclnnUpsampleNearest3d, xt, os, 0.0, 0.0, 0.0, ot);
        compare("UpsampleNearest3d NDHWC self and out", read(on), wantn, 0);
        aclDestroyTensor(xt);
        aclDestroyTensor(ot);
        release(xn);
        release(on);
    }
    /* backward */
    Dev g = make({1, C, OD, OH, OW}, ACL_FLOAT, G), gx = make({1, C, D, H, W}, ACL_FLOAT, {0});
    aclIntArray *is = ia({1, C, D, H, W});
    RUN(S, aclnnUpsampleNearest3dBackward, g.t, os, is, 0.0, 0.0, 0.0, gx.t);
    compare("UpsampleNearest3dBackward sums the gradients", read(gx), as(grad, ACL_FLOAT), 1e-6);
    /* errors */
    Dev x4 = make({1, C, H, W}, ACL_FLOAT, {1}), xi = make({1, C, D, H, W}, ACL_INT32, {1});
    aclIntArray *os_short = ia({3, 5});
    expect_code("UpsampleNearest3d null self", aclnnUpsampleNearest3dGetWorkspaceSize(nullptr, os, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleNearest3d 4-D self", aclnnUpsampleNearest3dGetWorkspaceSize(x4.t, os, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearest3d int32 self", aclnnUpsampleNearest3dGetWorkspaceSize(xi.t, os, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearest3d outputSize of two", aclnnUpsampleNearest3dGetWorkspaceSize(x.t, os_short, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearest3dBackward null inputSize",
                aclnnUpsampleNearest3dBackwardGetWorkspaceSize(g.t, os, nullptr, 0, 0, 0, gx.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &o, &o2, &xh, &g, &gx, &x4, &xi}) release(*d);
    printf("ok upsample3d\n");
}

/* The view shape of `t` (aclGetViewShape, released with delete[] as CANN documents). */
static Shape view_shape(const aclTensor *t) {
    int64_t *dims = nullptr;
    uint64_t n = 0;
    CHECK(aclGetViewShape(t, &dims, &n));
    Shape sh(dims, dims + n);
    delete[] dims;
    return sh;
}

static void expect_shape(const char *what, const Shape &got, const Shape &want) {
    g_checks++;
    if (got != want) {
        printf("FAIL %s: shape has %zu dims (first %lld), expected %zu\n", what, got.size(),
               got.empty() ? -1LL : static_cast<long long>(got[0]), want.size());
        g_fail++;
    }
}

static void unique_dim() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* the reference's example: rows [2 1 2], [1 2 1], [2 1 2] along dim 0 */
    Dev x = make({3, 3}, ACL_INT32, {2, 1, 2, 1, 2, 1, 2, 1, 2}), v = make({3, 3}, ACL_INT32, {0});
    Dev inv = make({3}, ACL_INT64, {0}), cnt = make({3}, ACL_INT64, {0});
    RUN(S, aclnnUniqueDim, x.t, true, true, 0, v.t, inv.t, cnt.t);
    expect_shape("UniqueDim valueOut view shape", view_shape(v.t), {2, 3});
    expect_shape("UniqueDim countsOut view shape", view_shape(cnt.t), {2});
    std::vector<double> got = read(v);
    compare("UniqueDim values (sorted rows)", {got.begin(), got.begin() + 6}, {1, 2, 1, 2, 1, 2}, 0);
    compare("UniqueDim inverse", read(inv), {1, 0, 1}, 0);
    got = read(cnt);
    compare("UniqueDim counts", {got.begin(), got.begin() + 2}, {1, 2}, 0);
    /* along dim 1 of a float [2, 4] with a transposed layout: columns (3,0) (1,5) (3,0) (-1,2) */
    Dev xf = make({2, 4}, ACL_FLOAT, {3, 1, 3, -1, 0, 5, 0, 2}, TRANSPOSED), vf = make({2, 4}, ACL_FLOAT, {0});
    Dev inf = make({4}, ACL_INT64, {0}), cf = make({4}, ACL_INT64, {0});
    RUN(S, aclnnUniqueDim, xf.t, false, true, -1, vf.t, inf.t, cf.t);
    expect_shape("UniqueDim dim -1 valueOut view shape", view_shape(vf.t), {2, 3});
    got = read(vf);
    compare("UniqueDim dim -1 values (contiguous [2, 3])", {got.begin(), got.begin() + 6}, {-1, 1, 3, 2, 5, 0}, 0);
    compare("UniqueDim dim -1 inverse", read(inf), {2, 1, 2, 0}, 0);
    got = read(cf);
    compare("UniqueDim dim -1 counts", {got.begin(), got.begin() + 3}, {1, 1, 2}, 0);
    /* errors (fresh outputs: a run leaves valueOut and countsOut with the result's view shapes) */
    Dev vbad = make({3, 3}, ACL_FLOAT, {0}), i32 = make({3}, ACL_INT32, {0});
    Dev v2 = make({3, 3}, ACL_INT32, {0}), c2 = make({3}, ACL_INT64, {0});
    expect_code("UniqueDim null self", aclnnUniqueDimGetWorkspaceSize(nullptr, true, true, 0, v.t, inv.t, cnt.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UniqueDim null countsOut", aclnnUniqueDimGetWorkspaceSize(x.t, true, true, 0, v2.t, inv.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UniqueDim dim 2 of a 2-D self", aclnnUniqueDimGetWorkspaceSize(x.t, true, true, 2, v2.t, inv.t, c2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UniqueDim float valueOut of an int32 self",
                aclnnUniqueDimGetWorkspaceSize(x.t, true, true, 0, vbad.t, inv.t, c2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("UniqueDim int32 inverseOut", aclnnUniqueDimGetWorkspaceSize(x.t, true, true, 0, v2.t, i32.t, c2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &v, &inv, &cnt, &xf, &vf, &inf, &cf, &vbad, &i32, &v2, &c2}) release(*d);
    printf("ok unique dim\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    cross();
    im2col();
    einsum();
    instance_norm();
    adamw();
    frac();
    upsample3d();
    unique_dim();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
