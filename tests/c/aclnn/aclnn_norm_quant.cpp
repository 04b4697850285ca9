/* The normalisation + quantisation fused family against host references (float64):
 * InplaceAddRmsNorm, GemmaRmsNorm, AddRmsNormCast, DeepNorm (+Grad), RmsNormQuant,
 * AddRmsNormQuant (+V2), RmsNormDynamicQuant, AddRmsNormDynamicQuant (+V2), LayerNormQuant,
 * AddLayerNormQuantV2, SwiGluQuant (+V2), DequantSwigluQuant, Quantize, TransQuantParamV3
 * (bit-exact); each with its
 * documented argument errors (ACLNN_ERR_PARAM_NULLPTR 161001, ACLNN_ERR_PARAM_INVALID
 * 161002, and ACLNN_ERR_INNER_TILING_ERROR 561002 where the page gives it for shapes).
 * Tolerances: float32 outputs to 1e-5 relative; float16/bfloat16 outputs to their rounding
 * (2e-3 / 1.6e-2 relative); int8 outputs within 1 of the float64 reference (the kernels
 * round their float16 intermediates), dynamic scales to 2e-3 relative. */
#include <algorithm>
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_inplace_add_rms_norm.h"
#include "aclnnop/aclnn_gemma_rms_norm.h"
#include "aclnnop/aclnn_add_rms_norm_cast.h"
#include "aclnnop/aclnn_deep_norm.h"
#include "aclnnop/aclnn_deep_norm_grad.h"
#include "aclnnop/aclnn_rms_norm_quant.h"
#include "aclnnop/aclnn_add_rms_norm_quant.h"
#include "aclnnop/aclnn_add_rms_norm_quant_v2.h"
#include "aclnnop/aclnn_rms_norm_dynamic_quant.h"
#include "aclnnop/aclnn_add_rms_norm_dynamic_quant.h"
#include "aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h"
#include "aclnnop/aclnn_layer_norm_quant.h"
#include "aclnnop/aclnn_add_layer_norm_quant_v2.h"
#include "aclnnop/aclnn_quantize.h"
#include "aclnnop/aclnn_trans_quant_param_v3.h"
#include "aclnnop/aclnn_swi_glu_quant.h"
#include "aclnnop/aclnn_swi_glu_quant_v2.h"
#include "aclnnop/aclnn_dequant_swiglu_quant.h"
#include <cstring>

static aclrtStream S;
static uint64_t WS;
static aclOpExecutor *EX;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

/* Integers within 1 of the reference (and at least 90% exact). */
static void compare_q(const char *what, const std::vector<double> &got, const std::vector<double> &want) {
    g_checks++;
    size_t exact = 0;
    for (size_t i = 0; i < want.size(); i++) {
        if (std::fabs(got[i] - want[i]) > 1) {
            printf("FAIL %s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
            g_fail++;
            return;
        }
        exact += got[i] == want[i];
    }
    if (exact * 10 < want.size() * 9) {
        printf("FAIL %s: only %zu of %zu exact\n", what, exact, want.size());
        g_fail++;
    }
}

static double q8(double v) { return std::isnan(v) ? 0 : std::min(127.0, std::max(-128.0, std::nearbyint(v))); }

/* Per-row rstd over n elements. */
static std::vector<double> rstd_of(const std::vector<double> &x, size_t n, double eps) {
    std::vector<double> r;
    for (size_t b = 0; b < x.size(); b += n) {
        double s = 0;
        for (size_t i = 0; i < n; i++) s += x[b + i] * x[b + i];
        r.push_back(1 / std::sqrt(s / n + eps));
    }
    return r;
}

static void rms_family() {
    const double eps = 1e-6;
    { /* InplaceAddRmsNorm, FLOAT16 [2, 3, 8], gamma [8] */
        Shape xs{2, 3, 8};
        auto a = values(48, ACL_FLOAT16, 1), b = values(48, ACL_FLOAT16, 2), g = values(8, ACL_FLOAT16, 3);
        Dev x1 = make(xs, ACL_FLOAT16, a), x2 = make(xs, ACL_FLOAT16, b), ga = make({8}, ACL_FLOAT16, g);
        Dev r = make({2, 3, 1}, ACL_FLOAT, {});
        RUN(S, aclnnInplaceAddRmsNorm, x1.t, x2.t, ga.t, eps, r.t);
        std::vector<double> sum(48), y(48);
        for (size_t i = 0; i < 48; i++) sum[i] = as_type(a[i] + b[i], ACL_FLOAT16);
        auto rs = rstd_of(sum, 8, eps);
        for (size_t i = 0; i < 48; i++) y[i] = sum[i] * rs[i / 8] * g[i % 8];
        compare("InplaceAddRmsNorm x2Ref (sum)", read(x2), sum, 0);
        compare("InplaceAddRmsNorm x1Ref (y)", read(x1), y, 2e-3);
        compare("InplaceAddRmsNorm rstdOut", read(r), rs, 1e-5);
        expect_code("InplaceAddRmsNorm null x2Ref",
                    aclnnInplaceAddRmsNormGetWorkspaceSize(x1.t, nullptr, ga.t, eps, r.t, &WS, &EX), 161001);
        Dev bi = make(xs, ACL_INT32, {});
        expect_code("InplaceAddRmsNorm INT32 x2Ref",
                    aclnnInplaceAddRmsNormGetWorkspaceSize(x1.t, bi.t, ga.t, eps, r.t, &WS, &EX), 161002);
        for (Dev *d : {&x1, &x2, &ga, &r, &bi}) release(*d);
    }
    { /* GemmaRmsNorm, FLOAT [4, 16] strided, gamma [16], rstd [4, 1] */
        auto a = values(64, ACL_FLOAT, 4), g = values(16, ACL_FLOAT, 5);
        Dev x = make({4, 16}, ACL_FLOAT, a, STRIDED), ga = make({16}, ACL_FLOAT, g);
        Dev y = make({4, 16}, ACL_FLOAT, {}), r = make({4, 1}, ACL_FLOAT, {});
        RUN(S, aclnnGemmaRmsNorm, x.t, ga.t, eps, y.t, r.t);
        auto rs = rstd_of(a, 16, eps);
        std::vector<double> want(64);
        for (size_t i = 0; i < 64; i++) want[i] = a[i] * rs[i / 16] * (1 + g[i % 16]);
        compare("GemmaRmsNorm yOut", read(y), want, 1e-5);
        compare("GemmaRmsNorm rstdOut", read(r), rs, 1e-5);
        Dev gh = make({16}, ACL_FLOAT16, g), g8 = make({8}, ACL_FLOAT, g);
        expect_code("GemmaRmsNorm null yOut", aclnnGemmaRmsNormGetWorkspaceSize(x.t, ga.t, eps, nullptr, r.t, &WS, &EX), 161001);
        expect_code("GemmaRmsNorm FLOAT16 gamma", aclnnGemmaRmsNormGetWorkspaceSize(x.t, gh.t, eps, y.t, r.t, &WS, &EX), 161002);
        expect_code("GemmaRmsNorm gamma [8]", aclnnGemmaRmsNormGetWorkspaceSize(x.t, g8.t, eps, y.t, r.t, &WS, &EX), 561002);
        for (Dev *d : {&x, &ga, &y, &r, &gh, &g8}) release(*d);
    }
    { /* AddRmsNormCast, BFLOAT16 [3, 8] */
        auto a = values(24, ACL_BF16, 6), b = values(24, ACL_BF16, 7), g = values(8, ACL_BF16, 8);
        Dev x1 = make({3, 8}, ACL_BF16, a), x2 = make({3, 8}, ACL_BF16, b), ga = make({8}, ACL_BF16, g);
        Dev y1 = make({3, 8}, ACL_FLOAT, {}), y2 = make({3, 8}, ACL_BF16, {}), r = make({3, 1}, ACL_FLOAT, {});
        Dev xo = make({3, 8}, ACL_BF16, {});
        RUN(S, aclnnAddRmsNormCast, x1.t, x2.t, ga.t, eps, y1.t, y2.t, r.t, xo.t);
        std::vector<double> sum(24), y(24);
        for (size_t i = 0; i < 24; i++) sum[i] = as_type(a[i] + b[i], ACL_BF16);
        auto rs = rstd_of(sum, 8, eps);
        for (size_t i = 0; i < 24; i++) y[i] = sum[i] * rs[i / 8] * g[i % 8];
        compare("AddRmsNormCast xOut", read(xo), sum, 0);
        compare("AddRmsNormCast y1Out (float)", read(y1), y, 1e-5);
        compare("AddRmsNormCast y2Out (bfloat16)", read(y2), y, 1.6e-2);
        compare("AddRmsNormCast rstdOut", read(r), rs, 1e-5);
        Dev f = make({3, 8}, ACL_FLOAT, a);
        expect_code("AddRmsNormCast FLOAT x1", aclnnAddRmsNormCastGetWorkspaceSize(f.t, x2.t, ga.t, eps, y1.t, y2.t, r.t, xo.t, &WS, &EX), 161002);
        expect_code("AddRmsNormCast null rstdOut", aclnnAddRmsNormCastGetWorkspaceSize(x1.t, x2.t, ga.t, eps, y1.t, y2.t, nullptr, xo.t, &WS, &EX), 161001);
        for (Dev *d : {&x1, &x2, &ga, &y1, &y2, &r, &xo, &f}) release(*d);
    }
    printf("ok rms\n");
}

static void deep_norm() {
    const double alpha = 0.3, eps = 1e-5;
    const size_t R = 6, N = 16;
    auto a = values(R * N, ACL_FLOAT, 11), b = values(R * N, ACL_FLOAT, 12);
    auto g = values(N, ACL_FLOAT, 13), be = values(N, ACL_FLOAT, 14), dyv = values(R * N, ACL_FLOAT, 15);
    Shape xs{2, 3, 16};
    Dev x = make(xs, ACL_FLOAT, a), gx = make(xs, ACL_FLOAT, b, TRANSPOSED), ga = make({16}, ACL_FLOAT, g);
    Dev bt = make({16}, ACL_FLOAT, be), m = make({2, 3, 1}, ACL_FLOAT, {}), r = make({2, 3, 1}, ACL_FLOAT, {});
    Dev y = make(xs, ACL_FLOAT, {});
    RUN(S, aclnnDeepNorm, x.t, gx.t, bt.t, ga.t, alpha, eps, m.t, r.t, y.t);
    std::vector<double> xp(R * N), mu(R), rs(R), want(R * N);
    for (size_t i = 0; i < R * N; i++) xp[i] = alpha * a[i] + b[i];
    for (size_t k = 0; k < R; k++) {
        double s = 0, v = 0;
        for (size_t i = 0; i < N; i++) s += xp[k * N + i];
        mu[k] = s / N;
        for (size_t i = 0; i < N; i++) v += (xp[k * N + i] - mu[k]) * (xp[k * N + i] - mu[k]);
        rs[k] = 1 / std::sqrt(v / N + eps);
        for (size_t i = 0; i < N; i++) want[k * N + i] = (xp[k * N + i] - mu[k]) * rs[k] * g[i] + be[i];
    }
    compare("DeepNorm yOut", read(y), want, 1e-5);
    compare("DeepNorm meanOut", read(m), mu, 1e-5);
    compare("DeepNorm rstdOut", read(r), rs, 1e-5);
    /* the gradient from the saved statistics */
    Dev dy = make(xs, ACL_FLOAT, dyv), dx = make(xs, ACL_FLOAT, {}), dgx = make(xs, ACL_FLOAT, {});
    Dev db = make({16}, ACL_FLOAT, {}), dg = make({16}, ACL_FLOAT, {});
    RUN(S, aclnnDeepNormGrad, dy.t, x.t, gx.t, ga.t, m.t, r.t, alpha, dx.t, dgx.t, db.t, dg.t);
    auto mf = read(m), rf = read(r); /* the float32 statistics the gradient reads */
    std::vector<double> wdgx(R * N), wdx(R * N), wdb(N, 0), wdg(N, 0);
    for (size_t k = 0; k < R; k++) {
        double s12 = 0, s1 = 0;
        for (size_t i = 0; i < N; i++) {
            double t1 = dyv[k * N + i] * g[i], t2 = xp[k * N + i] - mf[k];
            s12 += t1 * t2;
            s1 += t1;
        }
        for (size_t i = 0; i < N; i++) {
            double t1 = dyv[k * N + i] * g[i], t2 = xp[k * N + i] - mf[k];
            wdgx[k * N + i] = t1 * rf[k] - s12 / N * std::pow(rf[k], 3) * t2 - s1 / N * rf[k];
            wdx[k * N + i] = alpha * wdgx[k * N + i];
            wdb[i] += dyv[k * N + i];
            wdg[i] += dyv[k * N + i] * rf[k] * t2;
        }
    }
    compare("DeepNormGrad dgxOut", read(dgx), wdgx, 1e-5);
    compare("DeepNormGrad dxOut", read(dx), wdx, 1e-5);
    compare("DeepNormGrad dbetaOut", read(db), wdb, 1e-5);
    compare("DeepNormGrad dgammaOut", read(dg), wdg, 1e-5);
    Dev x1d = make({16}, ACL_FLOAT, a), mh = make({2, 3, 1}, ACL_FLOAT16, {});
    expect_code("DeepNorm 1-D x", aclnnDeepNormGetWorkspaceSize(x1d.t, x1d.t, bt.t, ga.t, alpha, eps, m.t, r.t, x1d.t, &WS, &EX), 161002);
    expect_code("DeepNorm FLOAT16 meanOut", aclnnDeepNormGetWorkspaceSize(x.t, gx.t, bt.t, ga.t, alpha, eps, mh.t, r.t, y.t, &WS, &EX), 161002);
    expect_code("DeepNorm null beta", aclnnDeepNormGetWorkspaceSize(x.t, gx.t, nullptr, ga.t, alpha, eps, m.t, r.t, y.t, &WS, &EX), 161001);
    expect_code("DeepNormGrad null dgammaOut", aclnnDeepNormGradGetWorkspaceSize(dy.t, x.t, gx.t, ga.t, m.t, r.t, alpha, dx.t, dgx.t, db.t, nullptr, &WS, &EX), 161001);
    expect_code("DeepNormGrad FLOAT16 rstd", aclnnDeepNormGradGetWorkspaceSize(dy.t, x.t, gx.t, ga.t, m.t, mh.t, alpha, dx.t, dgx.t, db.t, dg.t, &WS, &EX), 161002);
    for (Dev *d : {&x, &gx, &ga, &bt, &m, &r, &y, &dy, &dx, &dgx, &db, &dg, &x1d, &mh}) release(*d);
    printf("ok deep norm\n");
}

static void static_quant() {
    const double eps = 1e-6;
    { /* RmsNormQuant, FLOAT16 [4, 32], gamma [1, 32], beta [32], scale [1], offset INT8 [1] */
        const size_t R = 4, N = 32;
        auto a = values(R * N, ACL_FLOAT16, 21), g = values(N, ACL_FLOAT16, 22), be = values(N, ACL_FLOAT16, 23);
        Dev x = make({4, 32}, ACL_FLOAT16, a), ga = make({1, 32}, ACL_FLOAT16, g), bt = make({32}, ACL_FLOAT16, be);
        Dev sc = make({1}, ACL_FLOAT16, {0.0625}), of = make({1}, ACL_INT8, {3}), y = make({4, 32}, ACL_INT8, {});
        RUN(S, aclnnRmsNormQuant, x.t, ga.t, bt.t, sc.t, of.t, eps, y.t);
        auto rs = rstd_of(a, N, eps);
        std::vector<double> want(R * N);
        for (size_t i = 0; i < R * N; i++) want[i] = q8((a[i] * rs[i / N] * g[i % N] + be[i % N]) / 0.0625 + 3);
        compare_q("RmsNormQuant y", read(y), want);
        Dev yf = make({4, 32}, ACL_FLOAT16, {}), s2 = make({2}, ACL_FLOAT16, {1, 1});
        expect_code("RmsNormQuant FLOAT16 y", aclnnRmsNormQuantGetWorkspaceSize(x.t, ga.t, bt.t, sc.t, of.t, eps, yf.t, &WS, &EX), 161002);
        expect_code("RmsNormQuant scale [2]", aclnnRmsNormQuantGetWorkspaceSize(x.t, ga.t, bt.t, s2.t, of.t, eps, y.t, &WS, &EX), 161002);
        expect_code("RmsNormQuant null offset", aclnnRmsNormQuantGetWorkspaceSize(x.t, ga.t, bt.t, sc.t, nullptr, eps, y.t, &WS, &EX), 161001);
        for (Dev *d : {&x, &ga, &bt, &sc, &of, &y, &yf, &s2}) release(*d);
    }
    { /* AddRmsNormQuant, FLOAT16 [2, 3, 16]: FLOAT scales, INT32 zero points, two outputs */
        const size_t R = 6, N = 16;
        Shape xs{2, 3, 16};
        auto a = values(R * N, ACL_FLOAT16, 24), b = values(R * N, ACL_FLOAT16, 25), g = values(N, ACL_FLOAT16, 26);
        std::vector<double> s1v(N), s2v(N), z1v(N), z2v(N);
        for (size_t i = 0; i < N; i++) {
            s1v[i] = 0.02 + 0.005 * i;
            s2v[i] = 0.05;
            z1v[i] = static_cast<double>(i % 5) - 2;
            z2v[i] = 1;
        }
        Dev x1 = make(xs, ACL_FLOAT16, a), x2 = make(xs, ACL_FLOAT16, b), ga = make({16}, ACL_FLOAT16, g);
        Dev s1 = make({16}, ACL_FLOAT, s1v), s2 = make({16}, ACL_FLOAT, s2v);
        Dev z1 = make({16}, ACL_INT32, z1v), z2 = make({16}, ACL_INT32, z2v);
        Dev y1 = make(xs, ACL_INT8, {}), y2 = make(xs, ACL_INT8, {}), xo = make(xs, ACL_FLOAT16, {});
        RUN(S, aclnnAddRmsNormQuant, x1.t, x2.t, ga.t, s1.t, s2.t, z1.t, z2.t, -1, eps, true, y1.t, y2.t, xo.t);
        std::vector<double> sum(R * N), w1(R * N), w2(R * N);
        for (size_t i = 0; i < R * N; i++) sum[i] = as_type(a[i] + b[i], ACL_FLOAT16);
        auto rs = rstd_of(sum, N, eps);
        for (size_t i = 0; i < R * N; i++) {
            double v = sum[i] * rs[i / N] * g[i % N];
            w1[i] = q8(v / s1v[i % N] + z1v[i % N]);
            w2[i] = q8(v / s2v[i % N] + z2v[i % N]);
        }
        compare("AddRmsNormQuant xOut", read(xo), sum, 0);
        compare_q("AddRmsNormQuant y1Out", read(y1), w1);
        compare_q("AddRmsNormQuant y2Out", read(y2), w2);
        Dev sb = make({16}, ACL_BF16, s1v), yf = make(xs, ACL_FLOAT, {});
        expect_code("AddRmsNormQuant divMode false", aclnnAddRmsNormQuantGetWorkspaceSize(x1.t, x2.t, ga.t, s1.t, nullptr, nullptr, nullptr, -1, eps, false, y1.t, y2.t, xo.t, &WS, &EX), 161002);
        expect_code("AddRmsNormQuant BFLOAT16 scales1 with FLOAT16 x1", aclnnAddRmsNormQuantGetWorkspaceSize(x1.t, x2.t, ga.t, sb.t, nullptr, nullptr, nullptr, -1, eps, true, y1.t, y2.t, xo.t, &WS, &EX), 161002);
        expect_code("AddRmsNormQuant FLOAT y1Out", aclnnAddRmsNormQuantGetWorkspaceSize(x1.t, x2.t, ga.t, s1.t, nullptr, nullptr, nullptr, -1, eps, true, yf.t, y2.t, xo.t, &WS, &EX), 161002);
        expect_code("AddRmsNormQuant null scales1", aclnnAddRmsNormQuantGetWorkspaceSize(x1.t, x2.t, ga.t, nullptr, nullptr, nullptr, nullptr, -1, eps, true, y1.t, y2.t, xo.t, &WS, &EX), 161001);
        for (Dev *d : {&x1, &x2, &ga, &s1, &s2, &z1, &z2, &y1, &y2, &xo, &sb, &yf}) release(*d);
    }
    { /* AddRmsNormQuantV2, BFLOAT16 [4, 16]: BFLOAT16 scales and zero points, beta, rmsNormOut */
        const size_t R = 4, N = 16;
        auto a = values(R * N, ACL_BF16, 27), b = values(R * N, ACL_BF16, 28), g = values(N, ACL_BF16, 29), be = values(N, ACL_BF16, 30);
        std::vector<double> s1v(N, 0.03125), z1v(N, 2);
        Dev x1 = make({4, 16}, ACL_BF16, a), x2 = make({4, 16}, ACL_BF16, b), ga = make({16}, ACL_BF16, g);
        Dev bt = make({16}, ACL_BF16, be), s1 = make({16}, ACL_BF16, s1v), z1 = make({16}, ACL_BF16, z1v);
        Dev y1 = make({4, 16}, ACL_INT8, {}), y2 = make({1}, ACL_INT8, {}), xo = make({4, 16}, ACL_BF16, {});
        Dev rn = make({4, 16}, ACL_BF16, {});
        RUN(S, aclnnAddRmsNormQuantV2, x1.t, x2.t, ga.t, s1.t, nullptr, z1.t, nullptr, bt.t, -1, eps, true, y1.t, y2.t, xo.t, rn.t);
        std::vector<double> sum(R * N), w(R * N), norm(R * N);
        for (size_t i = 0; i < R * N; i++) sum[i] = as_type(a[i] + b[i], ACL_BF16);
        auto rs = rstd_of(sum, N, eps);
        for (size_t i = 0; i < R * N; i++) {
            norm[i] = sum[i] * rs[i / N] * g[i % N];
            w[i] = q8((norm[i] + be[i % N]) / s1v[i % N] + z1v[i % N]);
        }
        compare("AddRmsNormQuantV2 xOut", read(xo), sum, 0);
        compare("AddRmsNormQuantV2 rmsNormOut", read(rn), norm, 1.6e-2);
        compare_q("AddRmsNormQuantV2 y1Out", read(y1), w);
        Dev bh = make({16}, ACL_FLOAT16, be);
        expect_code("AddRmsNormQuantV2 FLOAT16 beta", aclnnAddRmsNormQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, s1.t, nullptr, z1.t, nullptr, bh.t, -1, eps, true, y1.t, y2.t, xo.t, rn.t, &WS, &EX), 161002);
        expect_code("AddRmsNormQuantV2 null xOut", aclnnAddRmsNormQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, s1.t, nullptr, z1.t, nullptr, bt.t, -1, eps, true, y1.t, y2.t, nullptr, rn.t, &WS, &EX), 161001);
        for (Dev *d : {&x1, &x2, &ga, &bt, &s1, &z1, &y1, &y2, &xo, &rn, &bh}) release(*d);
    }
    printf("ok static quant\n");
}

/* Dynamic per-row quantisation of v (rows of n), smoothed by sm (empty: none). */
static void dyn_ref(const std::vector<double> &v, size_t n, const std::vector<double> &sm, std::vector<double> &q, std::vector<double> &sc) {
    q.assign(v.size(), 0);
    sc.clear();
    for (size_t b = 0; b < v.size(); b += n) {
        double m = 0;
        for (size_t i = 0; i < n; i++) m = std::max(m, std::fabs(v[b + i] * (sm.empty() ? 1 : sm[i])));
        double s = m / 127;
        sc.push_back(s);
        for (size_t i = 0; i < n; i++) q[b + i] = q8(v[b + i] * (sm.empty() ? 1 : sm[i]) / s);
    }
}

static void dynamic_quant() {
    const double eps = 1e-6;
    { /* RmsNormDynamicQuant, FLOAT16 [3, 16] with smooth scales and beta */
        const size_t R = 3, N = 16;
        auto a = values(R * N, ACL_FLOAT16, 31), g = values(N, ACL_FLOAT16, 32), be = values(N, ACL_FLOAT16, 33);
        auto sm = values(N, ACL_FLOAT16, 34, true, true);
        Dev x = make({3, 16}, ACL_FLOAT16, a), ga = make({16}, ACL_FLOAT16, g), bt = make({16}, ACL_FLOAT16, be);
        Dev ss = make({16}, ACL_FLOAT16, sm), y = make({3, 16}, ACL_INT8, {}), sc = make({3}, ACL_FLOAT, {});
        RUN(S, aclnnRmsNormDynamicQuant, x.t, ga.t, ss.t, bt.t, eps, 2, y.t, sc.t);
        auto rs = rstd_of(a, N, eps);
        std::vector<double> v(R * N), q, s;
        for (size_t i = 0; i < R * N; i++) v[i] = a[i] * rs[i / N] * g[i % N] + be[i % N];
        dyn_ref(v, N, sm, q, s);
        compare("RmsNormDynamicQuant scaleOut", read(sc), s, 2e-3);
        compare_q("RmsNormDynamicQuant yOut", read(y), q);
        Dev s2 = make({3, 1}, ACL_FLOAT, {});
        expect_code("RmsNormDynamicQuant dstType 3", aclnnRmsNormDynamicQuantGetWorkspaceSize(x.t, ga.t, ss.t, bt.t, eps, 3, y.t, sc.t, &WS, &EX), 161002);
        expect_code("RmsNormDynamicQuant scaleOut [3, 1]", aclnnRmsNormDynamicQuantGetWorkspaceSize(x.t, ga.t, ss.t, bt.t, eps, 2, y.t, s2.t, &WS, &EX), 561002);
        expect_code("RmsNormDynamicQuant null gamma", aclnnRmsNormDynamicQuantGetWorkspaceSize(x.t, nullptr, ss.t, bt.t, eps, 2, y.t, sc.t, &WS, &EX), 161001);
        for (Dev *d : {&x, &ga, &bt, &ss, &y, &sc, &s2}) release(*d);
    }
    { /* AddRmsNormDynamicQuant, BFLOAT16 [2, 2, 16], two smooth scales; y2 flattened [4, 16] */
        const size_t R = 4, N = 16;
        Shape xs{2, 2, 16};
        auto a = values(R * N, ACL_BF16, 35), b = values(R * N, ACL_BF16, 36), g = values(N, ACL_BF16, 37);
        auto sm1 = values(N, ACL_BF16, 38, true, true), sm2 = values(N, ACL_BF16, 39, true, true);
        Dev x1 = make(xs, ACL_BF16, a), x2 = make(xs, ACL_BF16, b), ga = make({16}, ACL_BF16, g);
        Dev ss1 = make({16}, ACL_BF16, sm1), ss2 = make({16}, ACL_BF16, sm2);
        Dev y1 = make(xs, ACL_INT8, {}), y2 = make({4, 16}, ACL_INT8, {}), xo = make(xs, ACL_BF16, {});
        Dev sc1 = make({2, 2}, ACL_FLOAT, {}), sc2 = make({4}, ACL_FLOAT, {});
        RUN(S, aclnnAddRmsNormDynamicQuant, x1.t, x2.t, ga.t, ss1.t, ss2.t, eps, y1.t, y2.t, xo.t, sc1.t, sc2.t);
        std::vector<double> sum(R * N), v(R * N), q1, s1, q2, s2;
        for (size_t i = 0; i < R * N; i++) sum[i] = as_type(a[i] + b[i], ACL_BF16);
        auto rs = rstd_of(sum, N, eps);
        for (size_t i = 0; i < R * N; i++) v[i] = sum[i] * rs[i / N] * g[i % N];
        dyn_ref(v, N, sm1, q1, s1);
        dyn_ref(v, N, sm2, q2, s2);
        compare("AddRmsNormDynamicQuant xOut", read(xo), sum, 0);
        compare("AddRmsNormDynamicQuant scale1Out", read(sc1), s1, 2e-3);
        compare("AddRmsNormDynamicQuant scale2Out", read(sc2), s2, 2e-3);
        compare_q("AddRmsNormDynamicQuant y1Out", read(y1), q1);
        compare_q("AddRmsNormDynamicQuant y2Out", read(y2), q2);
        Dev yh = make(xs, ACL_FLOAT16, {});
        expect_code("AddRmsNormDynamicQuant smooth2 without smooth1", aclnnAddRmsNormDynamicQuantGetWorkspaceSize(x1.t, x2.t, ga.t, nullptr, ss2.t, eps, y1.t, y2.t, xo.t, sc1.t, sc2.t, &WS, &EX), 161002);
        expect_code("AddRmsNormDynamicQuant FLOAT16 xOut", aclnnAddRmsNormDynamicQuantGetWorkspaceSize(x1.t, x2.t, ga.t, ss1.t, ss2.t, eps, y1.t, y2.t, yh.t, sc1.t, sc2.t, &WS, &EX), 161002);
        expect_code("AddRmsNormDynamicQuant null scale2Out", aclnnAddRmsNormDynamicQuantGetWorkspaceSize(x1.t, x2.t, ga.t, ss1.t, ss2.t, eps, y1.t, y2.t, xo.t, sc1.t, nullptr, &WS, &EX), 161001);
        /* V2: outputMask [false, true], smooth2 and beta; y1/scale1 are [1] placeholders */
        auto be = values(N, ACL_BF16, 40);
        Dev bt = make({16}, ACL_BF16, be), p1 = make({1}, ACL_INT8, {}), ps1 = make({1}, ACL_FLOAT, {});
        bool mk[2] = {false, true};
        aclBoolArray *mask = aclCreateBoolArray(mk, 2);
        RUN(S, aclnnAddRmsNormDynamicQuantV2, x1.t, x2.t, ga.t, nullptr, ss2.t, bt.t, eps, mask, p1.t, y2.t, xo.t, ps1.t, sc2.t);
        for (size_t i = 0; i < R * N; i++) v[i] = sum[i] * rs[i / N] * g[i % N] + be[i % N];
        dyn_ref(v, N, sm2, q2, s2);
        compare("AddRmsNormDynamicQuantV2 scale2Out", read(sc2), s2, 2e-3);
        compare_q("AddRmsNormDynamicQuantV2 y2Out", read(y2), q2);
        bool bad[2] = {false, true};
        aclBoolArray *m2 = aclCreateBoolArray(bad, 2);
        expect_code("AddRmsNormDynamicQuantV2 smooth1 with outputMask[0] false", aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, ss1.t, ss2.t, bt.t, eps, m2, y1.t, y2.t, xo.t, sc1.t, sc2.t, &WS, &EX), 161002);
        bool three[3] = {true, true, true};
        aclBoolArray *m3 = aclCreateBoolArray(three, 3);
        expect_code("AddRmsNormDynamicQuantV2 outputMask of 3", aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, ss1.t, ss2.t, bt.t, eps, m3, y1.t, y2.t, xo.t, sc1.t, sc2.t, &WS, &EX), 161002);
        aclDestroyBoolArray(mask);
        aclDestroyBoolArray(m2);
        aclDestroyBoolArray(m3);
        for (Dev *d : {&x1, &x2, &ga, &ss1, &ss2, &y1, &y2, &xo, &sc1, &sc2, &yh, &bt, &p1, &ps1}) release(*d);
    }
    printf("ok dynamic quant\n");
}

/* LayerNorm of rows of n (+ beta), float64. */
static std::vector<double> ln_ref(const std::vector<double> &x, size_t n, const std::vector<double> &g, const std::vector<double> &b, double eps) {
    std::vector<double> y(x.size());
    for (size_t r = 0; r < x.size(); r += n) {
        double mu = 0, var = 0;
        for (size_t i = 0; i < n; i++) mu += x[r + i];
        mu /= n;
        for (size_t i = 0; i < n; i++) var += (x[r + i] - mu) * (x[r + i] - mu);
        double inv = 1 / std::sqrt(var / n + eps);
        for (size_t i = 0; i < n; i++) y[r + i] = (x[r + i] - mu) * inv * g[i] + b[i];
    }
    return y;
}

static void layer_norm_quant() {
    const double eps = 1e-5;
    { /* LayerNormQuant, FLOAT16 [2, 3, 32], gamma/beta [1, 32], scale [1], zeroPoints INT8 [1] */
        const size_t R = 6, N = 32;
        auto a = values(R * N, ACL_FLOAT16, 41), g = values(N, ACL_FLOAT16, 42), be = values(N, ACL_FLOAT16, 43);
        Dev x = make({2, 3, 32}, ACL_FLOAT16, a), ga = make({1, 32}, ACL_FLOAT16, g), bt = make({1, 32}, ACL_FLOAT16, be);
        Dev sc = make({1}, ACL_FLOAT16, {0.125}), zp = make({1}, ACL_INT8, {-4});
        Dev y = make({2, 3, 32}, ACL_INT8, {}), so = make({2, 3}, ACL_FLOAT, {});
        RUN(S, aclnnLayerNormQuant, x.t, ga.t, bt.t, sc.t, zp.t, 0, eps, y.t, so.t);
        auto ln = ln_ref(a, N, g, be, eps);
        std::vector<double> want(R * N);
        for (size_t i = 0; i < R * N; i++) want[i] = q8(ln[i] / 0.125 - 4);
        compare_q("LayerNormQuant res", read(y), want);
        expect_code("LayerNormQuant quantMode 1", aclnnLayerNormQuantGetWorkspaceSize(x.t, ga.t, bt.t, sc.t, zp.t, 1, eps, y.t, so.t, &WS, &EX), 161002);
        Dev g1 = make({32}, ACL_FLOAT16, g);
        expect_code("LayerNormQuant gamma [32]", aclnnLayerNormQuantGetWorkspaceSize(x.t, g1.t, bt.t, sc.t, zp.t, 0, eps, y.t, so.t, &WS, &EX), 161002);
        expect_code("LayerNormQuant null res", aclnnLayerNormQuantGetWorkspaceSize(x.t, ga.t, bt.t, sc.t, zp.t, 0, eps, nullptr, so.t, &WS, &EX), 161001);
        for (Dev *d : {&x, &ga, &bt, &sc, &zp, &y, &so, &g1}) release(*d);
    }
    { /* AddLayerNormQuantV2 static per-tensor, FLOAT [4, 16], bias like x1, y = round(ln * s + z) */
        const size_t R = 4, N = 16;
        auto a = values(R * N, ACL_FLOAT, 44), b = values(R * N, ACL_FLOAT, 45), bi = values(R * N, ACL_FLOAT, 46);
        auto g = values(N, ACL_FLOAT, 47), be = values(N, ACL_FLOAT, 48);
        Dev x1 = make({4, 16}, ACL_FLOAT, a), x2 = make({4, 16}, ACL_FLOAT, b), bs = make({4, 16}, ACL_FLOAT, bi);
        Dev ga = make({1, 16}, ACL_FLOAT, g), bt = make({1, 16}, ACL_FLOAT, be);
        Dev s1 = make({1}, ACL_FLOAT, {20}), z1 = make({1}, ACL_FLOAT, {3});
        Dev y1 = make({4, 16}, ACL_INT8, {}), y2 = make({4, 16}, ACL_INT8, {}), xo = make({4, 16}, ACL_FLOAT, {});
        Dev ln = make({4, 16}, ACL_FLOAT, {}), o1 = make({4}, ACL_FLOAT, {}), o2 = make({4}, ACL_FLOAT, {});
        RUN(S, aclnnAddLayerNormQuantV2, x1.t, x2.t, ga.t, bt.t, bs.t, s1.t, nullptr, z1.t, nullptr, "static", eps, true, false,
            y1.t, y2.t, xo.t, ln.t, o1.t, o2.t);
        std::vector<double> sum(R * N), want(R * N);
        for (size_t i = 0; i < R * N; i++) sum[i] = a[i] + b[i] + bi[i];
        auto lr = ln_ref(sum, N, g, be, eps);
        for (size_t i = 0; i < R * N; i++) want[i] = q8(lr[i] * 20 + 3);
        compare("AddLayerNormQuantV2 xOut (additionalOutput)", read(xo), sum, 1e-6);
        compare("AddLayerNormQuantV2 layernormRes", read(ln), lr, 1e-5);
        compare_q("AddLayerNormQuantV2 y1Out", read(y1), want);
        expect_code("AddLayerNormQuantV2 quantMode \"per_tensor\"", aclnnAddLayerNormQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, bt.t, bs.t, s1.t, nullptr, z1.t, nullptr, "per_tensor", eps, false, false, y1.t, y2.t, xo.t, ln.t, o1.t, o2.t, &WS, &EX), 161002);
        expect_code("AddLayerNormQuantV2 divMode true", aclnnAddLayerNormQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, bt.t, bs.t, s1.t, nullptr, z1.t, nullptr, "static", eps, false, true, y1.t, y2.t, xo.t, ln.t, o1.t, o2.t, &WS, &EX), 161002);
        expect_code("AddLayerNormQuantV2 no scales1", aclnnAddLayerNormQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, bt.t, bs.t, nullptr, nullptr, nullptr, nullptr, "static", eps, false, false, y1.t, y2.t, xo.t, ln.t, o1.t, o2.t, &WS, &EX), 161002);
        expect_code("AddLayerNormQuantV2 null layernormRes", aclnnAddLayerNormQuantV2GetWorkspaceSize(x1.t, x2.t, ga.t, bt.t, bs.t, s1.t, nullptr, z1.t, nullptr, "static", eps, false, false, y1.t, y2.t, xo.t, nullptr, o1.t, o2.t, &WS, &EX), 161001);
        for (Dev *d : {&x1, &x2, &bs, &ga, &bt, &s1, &z1, &y1, &y2, &xo, &ln, &o1, &o2}) release(*d);
    }
    printf("ok layer norm quant\n");
}

/* The float32 bits of v rounded to FP19 (top 19 bits), nearest, ties to even. */
static uint32_t fp19(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    uint32_t e = (b >> 23) & 0xFF, m = b & 0x7FFFFF;
    if (e == 0) return b & 0x80000000u;
    if (e == 0xFF) return b & 0xFFFFE000u;
    uint32_t keep = b & 0xFFFFE000u, rest = b & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (keep & 0x2000))) keep += 0x2000; /* carries into the exponent */
    (void)m;
    return keep;
}

static void quantize() {
    { /* Quantize FLOAT16 [3, 4] along axis -2 (3 scales), INT32 zero points, INT8 out */
        auto a = values(12, ACL_FLOAT16, 51);
        std::vector<double> sv{0.05, 0.1, 0.02}, zv{1, -2, 0};
        Dev x = make({3, 4}, ACL_FLOAT16, a, TRANSPOSED), sc = make({3}, ACL_FLOAT16, sv), zp = make({3}, ACL_INT32, zv);
        Dev o = make({3, 4}, ACL_INT8, {});
        RUN(S, aclnnQuantize, x.t, sc.t, zp.t, ACL_INT8, -2, o.t);
        std::vector<double> want(12);
        for (size_t i = 0; i < 12; i++) {
            float t = static_cast<float>(a[i]) / static_cast<float>(as_type(sv[i / 4], ACL_FLOAT16)) + static_cast<float>(zv[i / 4]);
            want[i] = q8(t);
        }
        compare("Quantize INT8 (axis -2)", read(o), want, 0);
        /* UINT8 with one scale, no zero points */
        Dev s1 = make({1}, ACL_FLOAT16, {0.25}), u = make({3, 4}, ACL_UINT8, {});
        RUN(S, aclnnQuantize, x.t, s1.t, nullptr, ACL_UINT8, 0, u.t);
        for (size_t i = 0; i < 12; i++) want[i] = std::min(255.0, std::max(0.0, static_cast<double>(std::nearbyint(static_cast<float>(a[i]) / 0.25f))));
        compare("Quantize UINT8", read(u), want, 0);
        expect_code("Quantize dtype ACL_FLOAT8_E4M3FN", aclnnQuantizeGetWorkspaceSize(x.t, sc.t, zp.t, static_cast<aclDataType>(36), -2, o.t, &WS, &EX), 161002);
        expect_code("Quantize out INT8 for dtype UINT8", aclnnQuantizeGetWorkspaceSize(x.t, sc.t, zp.t, ACL_UINT8, -2, o.t, &WS, &EX), 161002);
        expect_code("Quantize axis 2", aclnnQuantizeGetWorkspaceSize(x.t, sc.t, zp.t, ACL_INT8, 2, o.t, &WS, &EX), 161002);
        expect_code("Quantize 3 scales along axis 1 (4)", aclnnQuantizeGetWorkspaceSize(x.t, sc.t, zp.t, ACL_INT8, 1, o.t, &WS, &EX), 161002);
        expect_code("Quantize null scales", aclnnQuantizeGetWorkspaceSize(x.t, nullptr, zp.t, ACL_INT8, 0, o.t, &WS, &EX), 161001);
        for (Dev *d : {&x, &sc, &zp, &o, &s1, &u}) release(*d);
    }
    { /* TransQuantParamV3: roundMode 1 rounds the scale to FP19, 0 truncates (as V2) */
        float sv[4];
        uint32_t bits[4] = {0x3DCCCCCDu, 0x3F801000u, 0x3F803000u, 0x3E99F000u};
        memcpy(sv, bits, sizeof sv);
        std::vector<double> s(sv, sv + 4), off{1.6, -300, 2.5, 7};
        Dev sc = make({4}, ACL_FLOAT, s), of = make({4}, ACL_FLOAT, off);
        for (int mode = 0; mode < 2; mode++) {
            Dev o = make({4}, ACL_INT64, {});
            RUN(S, aclnnTransQuantParamV3, sc.t, of.t, mode, o.t);
            std::vector<uint8_t> host(o.bytes);
            CHECK(aclrtMemcpy(host.data(), o.bytes, o.mem, o.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
            g_checks++;
            for (int i = 0; i < 4; i++) {
                uint64_t got;
                memcpy(&got, &host[i * 8], 8);
                uint32_t sb = mode ? fp19(sv[i]) : (bits[i] & 0xFFFFE000u);
                int64_t ov = static_cast<int64_t>(std::nearbyint(off[i]));
                ov = std::min<int64_t>(255, std::max<int64_t>(-256, ov));
                uint64_t want = (static_cast<uint64_t>(sb) | (1ull << 46));
                want = (want & 0x4000FFFFFFFFull) | ((static_cast<uint64_t>(ov) & 0x1FF) << 37);
                if (got != want) {
                    printf("FAIL TransQuantParamV3 roundMode %d element %d: 0x%llx, expected 0x%llx\n", mode, i,
                           static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
                    g_fail++;
                    break;
                }
            }
            release(o);
        }
        Dev o = make({4}, ACL_INT64, {});
        expect_code("TransQuantParamV3 roundMode 2", aclnnTransQuantParamV3GetWorkspaceSize(sc.t, of.t, 2, o.t, &WS, &EX), 161002);
        expect_code("TransQuantParamV3 null scale", aclnnTransQuantParamV3GetWorkspaceSize(nullptr, of.t, 1, o.t, &WS, &EX), 161001);
        for (Dev *d : {&sc, &of, &o}) release(*d);
    }
    printf("ok quantize\n");
}

/* swish(a) * b of each row of x (rows of 2n), a the left half when `left`. */
static std::vector<double> swiglu_ref(const std::vector<double> &x, size_t n, bool left) {
    std::vector<double> r;
    for (size_t b = 0; b < x.size(); b += 2 * n)
        for (size_t c = 0; c < n; c++) {
            double a = x[b + (left ? c : n + c)], v = x[b + (left ? n + c : c)];
            r.push_back(a / (1 + std::exp(-a)) * v);
        }
    return r;
}

static void swiglu_quant() {
    char dyn[] = "dynamic", sta[] = "static", msd[] = "dynamic_msd";
    const size_t R = 6, N = 8;
    auto a = values(R * 2 * N, ACL_BF16, 61);
    auto act = swiglu_ref(a, N, true);
    { /* SwiGluQuant, BFLOAT16 [6, 16], two groups ending at rows 2 and 5 (row 5 in none) */
        auto sm = values(2 * N, ACL_FLOAT, 62, true, true);
        Dev x = make({6, 16}, ACL_BF16, a), ss = make({2, 8}, ACL_FLOAT, sm), gi = make({2}, ACL_INT32, {2, 5});
        Dev y = make({6, 8}, ACL_INT8, {}), sc = make({6}, ACL_FLOAT, {});
        RUN(S, aclnnSwiGluQuant, x.t, ss.t, nullptr, gi.t, true, dyn, y.t, sc.t);
        std::vector<double> q(R * N), s(R);
        for (size_t r = 0; r < R; r++) {
            int g = r < 2 ? 0 : r < 5 ? 1 : -1;
            double m = 0;
            std::vector<double> t(N);
            for (size_t c = 0; c < N; c++) {
                t[c] = act[r * N + c] * (g < 0 ? 1 : sm[g * N + c]);
                m = std::max(m, std::fabs(t[c]));
            }
            s[r] = 127 / m;
            for (size_t c = 0; c < N; c++) q[r * N + c] = q8(t[c] * s[r]);
        }
        compare("SwiGluQuant scaleOut (127 / row max)", read(sc), s, 1e-5);
        compare_q("SwiGluQuant yOut", read(y), q);
        Dev yb = make({6, 16}, ACL_INT8, {});
        expect_code("SwiGluQuant yOut [6, 16]", aclnnSwiGluQuantGetWorkspaceSize(x.t, ss.t, nullptr, gi.t, true, dyn, yb.t, sc.t, &WS, &EX), 161002);
        expect_code("SwiGluQuant quantMode dynamic_msd", aclnnSwiGluQuantGetWorkspaceSize(x.t, ss.t, nullptr, gi.t, true, msd, y.t, sc.t, &WS, &EX), 161002);
        expect_code("SwiGluQuant null smoothScalesOptional", aclnnSwiGluQuantGetWorkspaceSize(x.t, nullptr, nullptr, gi.t, true, dyn, y.t, sc.t, &WS, &EX), 161001);
        for (Dev *d : {&x, &ss, &gi, &y, &sc, &yb}) release(*d);
    }
    { /* SwiGluQuantV2 static per-tensor, activating the right half, count-mode groups {3, 3} */
        std::vector<double> sv{4, 9}, ov{1, -2};
        Dev x = make({6, 16}, ACL_BF16, a), ss = make({2}, ACL_FLOAT, sv), of = make({2}, ACL_FLOAT, ov);
        Dev gi = make({2}, ACL_INT32, {3, 3}), y = make({6, 8}, ACL_INT8, {}), sc = make({6}, ACL_FLOAT, {});
        RUN(S, aclnnSwiGluQuantV2, x.t, ss.t, of.t, gi.t, false, sta, 1, 2, y.t, sc.t);
        auto actr = swiglu_ref(a, N, false);
        std::vector<double> q(R * N);
        for (size_t i = 0; i < R * N; i++) {
            size_t g = i / N < 3 ? 0 : 1;
            q[i] = q8(actr[i] * sv[g] + ov[g]);
        }
        compare_q("SwiGluQuantV2 static yOut", read(y), q);
        /* no groups (non-MoE), dynamic, no smooth scales */
        RUN(S, aclnnSwiGluQuantV2, x.t, nullptr, nullptr, nullptr, true, dyn, 0, 2, y.t, sc.t);
        std::vector<double> s(R);
        for (size_t r = 0; r < R; r++) {
            double m = 0;
            for (size_t c = 0; c < N; c++) m = std::max(m, std::fabs(act[r * N + c]));
            s[r] = 127 / m;
            for (size_t c = 0; c < N; c++) q[r * N + c] = q8(act[r * N + c] * s[r]);
        }
        compare("SwiGluQuantV2 dynamic scaleOut", read(sc), s, 1e-5);
        compare_q("SwiGluQuantV2 dynamic yOut", read(y), q);
        expect_code("SwiGluQuantV2 groupListType 2", aclnnSwiGluQuantV2GetWorkspaceSize(x.t, ss.t, of.t, gi.t, false, sta, 2, 2, y.t, sc.t, &WS, &EX), 161002);
        expect_code("SwiGluQuantV2 dstType 29 (INT4)", aclnnSwiGluQuantV2GetWorkspaceSize(x.t, ss.t, of.t, gi.t, false, sta, 0, 29, y.t, sc.t, &WS, &EX), 161002);
        Dev gf = make({2}, ACL_INT64, {3, 3});
        expect_code("SwiGluQuantV2 INT64 groupIndexOptional", aclnnSwiGluQuantV2GetWorkspaceSize(x.t, ss.t, of.t, gf.t, false, sta, 0, 2, y.t, sc.t, &WS, &EX), 161002);
        expect_code("SwiGluQuantV2 null quantModeOptional", aclnnSwiGluQuantV2GetWorkspaceSize(x.t, ss.t, of.t, gi.t, false, nullptr, 0, 2, y.t, sc.t, &WS, &EX), 161001);
        for (Dev *d : {&x, &ss, &of, &gi, &y, &sc, &gf}) release(*d);
    }
    printf("ok swiglu quant\n");
}

static void dequant_swiglu_quant() {
    char dyn[] = "dynamic", sta[] = "static", bad[] = "per_token";
    const size_t R = 4, H = 16, N = 8;
    std::vector<double> xv(R * H), wv(H), av(R), bv(H), qv(N);
    for (size_t i = 0; i < R * H; i++) xv[i] = static_cast<double>((i * 37) % 61) - 30;
    for (size_t i = 0; i < H; i++) wv[i] = 0.01 + 0.002 * i, bv[i] = 0.1 * (static_cast<double>(i % 3) - 1);
    for (size_t r = 0; r < R; r++) av[r] = 0.5 + 0.25 * r;
    for (size_t c = 0; c < N; c++) qv[c] = 0.5 + 0.1 * c;
    Dev x = make({4, 16}, ACL_INT32, xv), ws = make({16}, ACL_FLOAT, wv), as_ = make({4, 1}, ACL_FLOAT, av);
    Dev bi = make({16}, ACL_FLOAT, bv), qs = make({8}, ACL_FLOAT, qv);
    Dev y = make({4, 8}, ACL_INT8, {}), sc = make({4}, ACL_FLOAT, {});
    /* the dequantised rows, then swish of the left half times the right */
    std::vector<double> d(R * H), act(R * N);
    for (size_t i = 0; i < R * H; i++) d[i] = xv[i] * wv[i % H] * av[i / H] + bv[i % H];
    act = swiglu_ref(d, N, true);
    RUN(S, aclnnDequantSwigluQuant, x.t, ws.t, as_.t, bi.t, qs.t, nullptr, nullptr, true, dyn, y.t, sc.t);
    std::vector<double> q(R * N), s(R);
    for (size_t r = 0; r < R; r++) {
        double m = 0;
        for (size_t c = 0; c < N; c++) m = std::max(m, std::fabs(act[r * N + c] * qv[c]));
        s[r] = m / 127;
        for (size_t c = 0; c < N; c++) q[r * N + c] = q8(act[r * N + c] * qv[c] / s[r]);
    }
    compare("DequantSwigluQuant dynamic scaleOut (row max / 127)", read(sc), s, 1e-5);
    compare_q("DequantSwigluQuant dynamic yOut", read(y), q);
    /* static, activating the right half: round(act / scale + offset) */
    Dev q1 = make({1}, ACL_FLOAT, {0.25}), o1 = make({1}, ACL_FLOAT, {-3});
    RUN(S, aclnnDequantSwigluQuant, x.t, ws.t, as_.t, bi.t, q1.t, o1.t, nullptr, false, sta, y.t, sc.t);
    auto actr = swiglu_ref(d, N, false);
    for (size_t i = 0; i < R * N; i++) q[i] = q8(actr[i] / 0.25 - 3);
    compare_q("DequantSwigluQuant static yOut", read(y), q);
    Dev gi = make({1}, ACL_INT64, {4});
    expect_code("DequantSwigluQuant groupIndexOptional", aclnnDequantSwigluQuantGetWorkspaceSize(x.t, ws.t, as_.t, bi.t, qs.t, nullptr, gi.t, true, dyn, y.t, sc.t, &WS, &EX), 161002);
    expect_code("DequantSwigluQuant quantMode per_token", aclnnDequantSwigluQuantGetWorkspaceSize(x.t, ws.t, as_.t, bi.t, qs.t, nullptr, nullptr, true, bad, y.t, sc.t, &WS, &EX), 161002);
    expect_code("DequantSwigluQuant static quantScale [8]", aclnnDequantSwigluQuantGetWorkspaceSize(x.t, ws.t, as_.t, bi.t, qs.t, nullptr, nullptr, true, sta, y.t, sc.t, &WS, &EX), 161002);
    expect_code("DequantSwigluQuant null yOut", aclnnDequantSwigluQuantGetWorkspaceSize(x.t, ws.t, as_.t, bi.t, qs.t, nullptr, nullptr, true, dyn, nullptr, sc.t, &WS, &EX), 161001);
    for (Dev *dv : {&x, &ws, &as_, &bi, &qs, &y, &sc, &q1, &o1, &gi}) release(*dv);
    printf("ok dequant swiglu quant\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    rms_family();
    deep_norm();
    static_quant();
    dynamic_quant();
    layer_norm_quant();
    quantize();
    swiglu_quant();
    dequant_swiglu_quant();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
