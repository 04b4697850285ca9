/* The "norm" operators of the aclnn reference against float64 host references: the
 * SyncBatchNorm family (BatchNormStats, BatchNormGatherStatsWithCounts, BatchNormElemt,
 * BatchNormReduceBackward, BatchNormElemtBackward), run the way nn.SyncBatchNorm chains them
 * for two "devices" whose batches differ in size and dtype; each with documented argument
 * errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID); AddRmsNorm; AddLayerNorm and
 * AddLayerNormGrad; GeGlu, GeGluV3 (+ backward forms); GroupNormSilu (+V2); CrossEntropyLoss (+Grad); FastGelu,
 * Hardshrink, Softshrink and their backward forms (with broadcasting where the reference
 * allows it).
 * Tolerances: float32 results 1e-5 relative (statistics pass through float32 tensors between
 * the calls), float16 results 2e-3. Inputs include transposed and strided views. */
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_batch_norm_stats.h"
#include "aclnnop/aclnn_batch_norm_gather_stats_with_counts.h"
#include "aclnnop/aclnn_batch_norm_elemt.h"
#include "aclnnop/aclnn_batch_norm_backward_reduce.h"
#include "aclnnop/aclnn_batch_norm_elemt_backward.h"
#include "aclnnop/aclnn_add_rms_norm.h"
#include "aclnnop/aclnn_add_layer_norm.h"
#include "aclnnop/aclnn_add_layer_norm_grad.h"
#include "aclnnop/aclnn_fast_gelu.h"
#include "aclnnop/aclnn_fast_gelu_backward.h"
#include "aclnnop/aclnn_geglu.h"
#include "aclnnop/aclnn_geglu_backward.h"
#include "aclnnop/aclnn_group_norm_silu.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_hardshrink.h"
#include "aclnnop/aclnn_hardshrink_backward.h"
#include "aclnnop/aclnn_softshrink.h"
#include "aclnnop/aclnn_softshrink_backward.h"

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

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

/* channel c of row-major [N, C, S] data */
static std::vector<double> channel(const std::vector<double> &x, const Shape &sh, int64_t c) {
    int64_t n = sh[0], C = sh[1], s = numel(sh) / (n * C);
    std::vector<double> r;
    for (int64_t b = 0; b < n; b++)
        for (int64_t i = 0; i < s; i++) r.push_back(x[(b * C + c) * s + i]);
    return r;
}

static double mean_of(const std::vector<double> &v) {
    double s = 0;
    for (double e : v) s += e;
    return s / v.size();
}

static double var_of(const std::vector<double> &v) {
    double m = mean_of(v), s = 0;
    for (double e : v) s += (e - m) * (e - m);
    return s / v.size();
}

static void sync_batch_norm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t C = 3;
    const double eps = 1e-5, momentum = 0.1;
    /* device 0: transposed float [2, 3, 4]; device 1: strided float16 [3, 3, 2, 2] */
    Shape s1{2, C, 4}, s2{3, C, 2, 2};
    std::vector<double> X1 = values(numel(s1), ACL_FLOAT, 11), X2 = values(numel(s2), ACL_FLOAT16, 12);
    Dev x1 = make(s1, ACL_FLOAT, X1, TRANSPOSED), x2 = make(s2, ACL_FLOAT16, X2, STRIDED);
    Dev m1 = make({C}, ACL_FLOAT, {0}), i1 = make({C}, ACL_FLOAT, {0});
    Dev m2 = make({C}, ACL_FLOAT, {0}), i2 = make({C}, ACL_FLOAT, {0});
    RUN(S, aclnnBatchNormStats, x1.t, eps, m1.t, i1.t);
    RUN(S, aclnnBatchNormStats, x2.t, eps, m2.t, i2.t);
    std::vector<double> wm1, wi1, wm2, wi2;
    for (int64_t c = 0; c < C; c++) {
        auto a = channel(X1, s1, c), b = channel(X2, s2, c);
        wm1.push_back(mean_of(a));
        wi1.push_back(1 / std::sqrt(var_of(a) + eps));
        wm2.push_back(mean_of(b));
        wi2.push_back(1 / std::sqrt(var_of(b) + eps));
    }
    compare("BatchNormStats transposed float [2, 3, 4] mean", read(m1), wm1, 1e-6);
    compare("BatchNormStats transposed float [2, 3, 4] invstd", read(i1), wi1, 1e-6);
    compare("BatchNormStats strided float16 [3, 3, 2, 2] mean", read(m2), wm2, 1e-6);
    compare("BatchNormStats strided float16 [3, 3, 2, 2] invstd", read(i2), wi2, 1e-6);
    printf("ok batch norm stats\n");

    /* gather: the per-device rows as all_gather leaves them, counts 8 and 12 */
    std::vector<double> M = read(m1), I = read(i1), M2 = read(m2), I2 = read(i2);
    M.insert(M.end(), M2.begin(), M2.end());
    I.insert(I.end(), I2.begin(), I2.end());
    Dev mall = make({2, C}, ACL_FLOAT, M), iall = make({2, C}, ACL_FLOAT, I), cnt = make({2}, ACL_FLOAT, {8, 12});
    Dev rm = make({C}, ACL_FLOAT, {0.5, -1, 2}), rv = make({C}, ACL_FLOAT, {1.5, 1, 0.25});
    Dev gm = make({C}, ACL_FLOAT, {0}), gi = make({C}, ACL_FLOAT, {0});
    RUN(S, aclnnBatchNormGatherStatsWithCounts, x1.t, mall.t, iall.t, rm.t, rv.t, momentum, eps, cnt.t, gm.t, gi.t);
    std::vector<double> wgm, wgi, wrm, wrv, rm0{0.5, -1, 2}, rv0{1.5, 1, 0.25};
    for (int64_t c = 0; c < C; c++) {
        auto u = channel(X1, s1, c), b = channel(X2, s2, c);
        u.insert(u.end(), b.begin(), b.end());
        double mu = mean_of(u), var = var_of(u);
        wgm.push_back(mu);
        wgi.push_back(1 / std::sqrt(var + eps));
        wrm.push_back((1 - momentum) * rm0[c] + momentum * mu);
        wrv.push_back((1 - momentum) * rv0[c] + momentum * var * 20 / 19);
    }
    compare("BatchNormGatherStatsWithCounts meanAll (counts 8, 12)", read(gm), wgm, 1e-5);
    compare("BatchNormGatherStatsWithCounts invstdAll", read(gi), wgi, 1e-5);
    compare("BatchNormGatherStatsWithCounts runningMean", read(rm), wrm, 1e-5);
    compare("BatchNormGatherStatsWithCounts runningVar (unbiased)", read(rv), wrv, 1e-5);
    /* without running statistics, float16 outputs */
    Dev gmh = make({C}, ACL_FLOAT16, {0}), gih = make({C}, ACL_FLOAT16, {0});
    RUN(S, aclnnBatchNormGatherStatsWithCounts, x1.t, mall.t, iall.t, nullptr, nullptr, momentum, eps, cnt.t, gmh.t,
        gih.t);
    compare("BatchNormGatherStatsWithCounts float16 meanAll, no running statistics", read(gmh), wgm, 2e-3);
    compare("BatchNormGatherStatsWithCounts float16 invstdAll", read(gih), wgi, 2e-3);
    printf("ok batch norm gather stats\n");

    /* elemt: device 0 with weight and bias, device 1 (float16) without */
    std::vector<double> GM = read(gm), GI = read(gi), W{0.5, -2, 1.25}, B{0.1, 0, -3};
    Dev w = make({C}, ACL_FLOAT, W), b = make({C}, ACL_FLOAT, B);
    Dev y1 = make(s1, ACL_FLOAT, {0}), y2 = make(s2, ACL_FLOAT16, {0}, TRANSPOSED);
    RUN(S, aclnnBatchNormElemt, x1.t, w.t, b.t, gm.t, gi.t, eps, y1.t);
    RUN(S, aclnnBatchNormElemt, x2.t, nullptr, nullptr, gm.t, gi.t, eps, y2.t);
    std::vector<double> wy1(X1), wy2(X2);
    for (size_t k = 0; k < wy1.size(); k++) {
        int64_t c = (k / 4) % C;
        wy1[k] = (X1[k] - GM[c]) * GI[c] * W[c] + B[c];
    }
    for (size_t k = 0; k < wy2.size(); k++) {
        int64_t c = (k / 4) % C;
        wy2[k] = (X2[k] - GM[c]) * GI[c];
    }
    compare("BatchNormElemt float [2, 3, 4] with weight and bias", read(y1), wy1, 1e-5);
    compare("BatchNormElemt float16 [3, 3, 2, 2] into a transposed output, no weight or bias", read(y2), wy2, 2e-3);
    printf("ok batch norm elemt\n");

    /* reduce backward on device 0 */
    std::vector<double> DY = values(numel(s1), ACL_FLOAT, 13);
    Dev dy = make(s1, ACL_FLOAT, DY, STRIDED);
    Dev sd = make({C}, ACL_FLOAT, {0}), sdx = make({C}, ACL_FLOAT, {0});
    Dev gw = make({C}, ACL_FLOAT, {0}), gb = make({C}, ACL_FLOAT, {0});
    RUN(S, aclnnBatchNormReduceBackward, dy.t, x1.t, gm.t, gi.t, w.t, true, true, true, sd.t, sdx.t, gw.t, gb.t);
    std::vector<double> wsd, wsdx, wgw;
    for (int64_t c = 0; c < C; c++) {
        auto g = channel(DY, s1, c), xv = channel(X1, s1, c);
        double a = 0, q = 0;
        for (size_t k = 0; k < g.size(); k++) {
            a += g[k];
            q += g[k] * (xv[k] - GM[c]);
        }
        wsd.push_back(a);
        wsdx.push_back(q);
        wgw.push_back(q * GI[c]);
    }
    compare("BatchNormReduceBackward sumDy", read(sd), wsd, 1e-5);
    compare("BatchNormReduceBackward sumDyXmu", read(sdx), wsdx, 1e-5);
    compare("BatchNormReduceBackward gradWeight", read(gw), wgw, 1e-5);
    compare("BatchNormReduceBackward gradBias", read(gb), wsd, 1e-5);
    /* only the input's terms: the weight and bias gradients may be NULL */
    Dev sd2 = make({C}, ACL_FLOAT, {0}), sdx2 = make({C}, ACL_FLOAT, {0});
    RUN(S, aclnnBatchNormReduceBackward, dy.t, x1.t, gm.t, gi.t, nullptr, true, false, false, sd2.t, sdx2.t, nullptr,
        nullptr);
    compare("BatchNormReduceBackward inputG only: sumDy", read(sd2), wsd, 1e-5);
    compare("BatchNormReduceBackward inputG only: sumDyXmu", read(sdx2), wsdx, 1e-5);
    printf("ok batch norm reduce backward\n");

    /* elemt backward: the sums as if all-reduced, counts of both devices in an int32 counter */
    Dev ct = make({2}, ACL_INT32, {8, 12});
    Dev gx = make(s1, ACL_FLOAT, {0}, TRANSPOSED), gx0 = make(s1, ACL_FLOAT, {0});
    RUN(S, aclnnBatchNormElemtBackward, dy.t, x1.t, gm.t, gi.t, w.t, sd.t, sdx.t, ct.t, gx.t);
    RUN(S, aclnnBatchNormElemtBackward, dy.t, x1.t, gm.t, gi.t, nullptr, sd.t, sdx.t, ct.t, gx0.t);
    std::vector<double> wgx(X1), wgx0(X1);
    std::vector<double> SD = read(sd), SDX = read(sdx);
    for (size_t k = 0; k < wgx.size(); k++) {
        int64_t c = (k / 4) % C;
        double v = DY[k] - SD[c] / 20 - (X1[k] - GM[c]) * GI[c] * GI[c] * SDX[c] / 20;
        wgx[k] = v * GI[c] * W[c];
        wgx0[k] = v * GI[c];
    }
    compare("BatchNormElemtBackward with weight (counter 8 + 12)", read(gx), wgx, 1e-5);
    compare("BatchNormElemtBackward without weight", read(gx0), wgx0, 1e-5);
    printf("ok batch norm elemt backward\n");

    /* errors */
    Dev xi = make({2, C}, ACL_INT32, {1}), x1d = make({6}, ACL_FLOAT, {1}), mh = make({C}, ACL_FLOAT16, {0});
    Dev m4 = make({4}, ACL_FLOAT, {0}), bad_mall = make({2, 4}, ACL_FLOAT, {1}), c3 = make({3}, ACL_FLOAT, {1});
    Dev ys = make({2, C, 5}, ACL_FLOAT, {0}), c64 = make({2}, ACL_INT64, {8, 12}), gxh = make(s1, ACL_FLOAT16, {0});
    expect_code("BatchNormStats null input", aclnnBatchNormStatsGetWorkspaceSize(nullptr, eps, m1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("BatchNormStats null invstd", aclnnBatchNormStatsGetWorkspaceSize(x1.t, eps, m1.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("BatchNormStats int32 input", aclnnBatchNormStatsGetWorkspaceSize(xi.t, eps, m1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormStats 1-D input", aclnnBatchNormStatsGetWorkspaceSize(x1d.t, eps, m1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormStats float16 mean", aclnnBatchNormStatsGetWorkspaceSize(x1.t, eps, mh.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormStats mean of 4 for 3 channels",
                aclnnBatchNormStatsGetWorkspaceSize(x1.t, eps, m4.t, i1.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormGatherStatsWithCounts null counts",
                aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize(x1.t, mall.t, iall.t, rm.t, rv.t, momentum, eps,
                                                                    nullptr, gm.t, gi.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("BatchNormGatherStatsWithCounts mean [2, 4] for 3 channels",
                aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize(x1.t, bad_mall.t, iall.t, rm.t, rv.t, momentum,
                                                                    eps, cnt.t, gm.t, gi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormGatherStatsWithCounts counts of 3 for 2 devices",
                aclnnBatchNormGatherStatsWithCountsGetWorkspaceSize(x1.t, mall.t, iall.t, rm.t, rv.t, momentum, eps,
                                                                    c3.t, gm.t, gi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormElemt null mean",
                aclnnBatchNormElemtGetWorkspaceSize(x1.t, w.t, b.t, nullptr, gi.t, eps, y1.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("BatchNormElemt output [2, 3, 5] for input [2, 3, 4]",
                aclnnBatchNormElemtGetWorkspaceSize(x1.t, w.t, b.t, gm.t, gi.t, eps, ys.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormElemt weight of 4",
                aclnnBatchNormElemtGetWorkspaceSize(x1.t, m4.t, b.t, gm.t, gi.t, eps, y1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormReduceBackward inputG with a null sumDy",
                aclnnBatchNormReduceBackwardGetWorkspaceSize(dy.t, x1.t, gm.t, gi.t, w.t, true, true, true, nullptr,
                                                             sdx.t, gw.t, gb.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("BatchNormReduceBackward gradOut [2, 3, 5] for input [2, 3, 4]",
                aclnnBatchNormReduceBackwardGetWorkspaceSize(ys.t, x1.t, gm.t, gi.t, w.t, true, true, true, sd.t,
                                                             sdx.t, gw.t, gb.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormElemtBackward null counter",
                aclnnBatchNormElemtBackwardGetWorkspaceSize(dy.t, x1.t, gm.t, gi.t, w.t, sd.t, sdx.t, nullptr, gx.t,
                                                            &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("BatchNormElemtBackward int64 counter",
                aclnnBatchNormElemtBackwardGetWorkspaceSize(dy.t, x1.t, gm.t, gi.t, w.t, sd.t, sdx.t, c64.t, gx.t,
                                                            &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNormElemtBackward float16 gradInput of a float input",
                aclnnBatchNormElemtBackwardGetWorkspaceSize(dy.t, x1.t, gm.t, gi.t, w.t, sd.t, sdx.t, ct.t, gxh.t,
                                                            &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x1, &x2, &m1, &i1, &m2, &i2, &mall, &iall, &cnt, &rm, &rv, &gm, &gi, &gmh, &gih, &w, &b, &y1, &y2,
                   &dy, &sd, &sdx, &gw, &gb, &sd2, &sdx2, &ct, &gx, &gx0, &xi, &x1d, &mh, &m4, &bad_mall, &c3, &ys,
                   &c64, &gxh})
        release(*d);
    printf("ok sync batch norm errors\n");
}

static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

static void add_rms_norm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double eps = 1e-6;
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        double tol = dt == ACL_FLOAT ? 1e-6 : dt == ACL_FLOAT16 ? 2e-3 : 1.6e-2;
        Shape sh{2, 3, 8};
        std::vector<double> A = values(48, dt, 21), B = values(48, dt, 22), G = values(8, dt, 23, false, true);
        Dev a = make(sh, dt, A, TRANSPOSED), b = make(sh, dt, B, STRIDED), g = make({8}, dt, G);
        Dev y = make(sh, dt, {0}), r = make({2, 3, 1}, ACL_FLOAT, {0}), x = make(sh, dt, {0});
        RUN(S, aclnnAddRmsNorm, a.t, b.t, g.t, eps, y.t, r.t, x.t);
        std::vector<double> wx(48), wy(48), wr(6);
        for (int i = 0; i < 48; i++) wx[i] = as_type(A[i] + B[i], dt);
        for (int row = 0; row < 6; row++) {
            double ms = 0;
            for (int k = 0; k < 8; k++) ms += wx[row * 8 + k] * wx[row * 8 + k];
            wr[row] = 1 / std::sqrt(ms / 8 + eps);
            for (int k = 0; k < 8; k++) wy[row * 8 + k] = wx[row * 8 + k] * wr[row] * G[k];
        }
        char what[128];
        snprintf(what, sizeof what, "AddRmsNorm %s xOut (transposed x1 + strided x2)", dname(dt));
        compare(what, read(x), wx, 0);
        snprintf(what, sizeof what, "AddRmsNorm %s rstdOut", dname(dt));
        compare(what, read(r), wr, 1e-6);
        snprintf(what, sizeof what, "AddRmsNorm %s yOut", dname(dt));
        compare(what, read(y), wy, tol);
        for (Dev *d : {&a, &b, &g, &y, &r, &x}) release(*d);
    }
    /* gamma over the last two dimensions */
    Shape sh{3, 2, 4};
    std::vector<double> A = values(24, ACL_FLOAT, 24), B = values(24, ACL_FLOAT, 25), G = values(8, ACL_FLOAT, 26);
    Dev a = make(sh, ACL_FLOAT, A), b = make(sh, ACL_FLOAT, B), g = make({2, 4}, ACL_FLOAT, G);
    Dev y = make(sh, ACL_FLOAT, {0}), r = make({3, 1, 1}, ACL_FLOAT, {0}), x = make(sh, ACL_FLOAT, {0});
    RUN(S, aclnnAddRmsNorm, a.t, b.t, g.t, 1e-5, y.t, r.t, x.t);
    std::vector<double> wy(24);
    for (int row = 0; row < 3; row++) {
        double ms = 0;
        for (int k = 0; k < 8; k++) ms += (A[row * 8 + k] + B[row * 8 + k]) * (A[row * 8 + k] + B[row * 8 + k]);
        double rs = 1 / std::sqrt(ms / 8 + 1e-5);
        for (int k = 0; k < 8; k++) wy[row * 8 + k] = as_type(A[row * 8 + k] + B[row * 8 + k], ACL_FLOAT) * rs * G[k];
    }
    compare("AddRmsNorm float [3, 2, 4] with gamma [2, 4]", read(y), wy, 1e-6);
    Dev r2 = make({3, 2}, ACL_FLOAT, {0}), rh = make({3, 1, 1}, ACL_FLOAT16, {0}), g3 = make({3}, ACL_FLOAT, {1});
    Dev bh = make(sh, ACL_FLOAT16, {0}), e = make({0, 4}, ACL_FLOAT, {0});
    expect_code("AddRmsNorm null x2", aclnnAddRmsNormGetWorkspaceSize(a.t, nullptr, g.t, 1e-5, y.t, r.t, x.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AddRmsNorm null xOut", aclnnAddRmsNormGetWorkspaceSize(a.t, b.t, g.t, 1e-5, y.t, r.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AddRmsNorm rstd [3, 2] for gamma [2, 4]",
                aclnnAddRmsNormGetWorkspaceSize(a.t, b.t, g.t, 1e-5, y.t, r2.t, x.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRmsNorm float16 rstd", aclnnAddRmsNormGetWorkspaceSize(a.t, b.t, g.t, 1e-5, y.t, rh.t, x.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRmsNorm gamma [3]", aclnnAddRmsNormGetWorkspaceSize(a.t, b.t, g3.t, 1e-5, y.t, r.t, x.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRmsNorm float16 x2 with float x1",
                aclnnAddRmsNormGetWorkspaceSize(a.t, bh.t, g.t, 1e-5, y.t, r.t, x.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRmsNorm empty x1", aclnnAddRmsNormGetWorkspaceSize(e.t, e.t, g3.t, 1e-5, e.t, r.t, e.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&a, &b, &g, &y, &r, &x, &r2, &rh, &g3, &bh, &e}) release(*d);
    printf("ok add rms norm\n");
}

static void add_layer_norm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t R = 6, N = 8;
    Shape sh{2, 3, N};
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16}) {
        bool f32 = dt == ACL_FLOAT;
        double tol = f32 ? 1e-5 : 3e-3, eps = 1e-5;
        std::vector<double> A = values(48, dt, 41), B = values(48, dt, 42), G = values(N, dt, 43, false, true),
                            Be = values(N, dt, 44), Bi = values(N, dt, 45);
        Dev a = make(sh, dt, A, TRANSPOSED), b = make(sh, dt, B, STRIDED), g = make({N}, dt, G), be = make({N}, dt, Be);
        Dev bi = make({N}, dt, Bi), y = make(sh, dt, {0}), m = make({2, 3, 1}, ACL_FLOAT, {0});
        Dev r = make({2, 3, 1}, ACL_FLOAT, {0}), x = make(sh, dt, {7});
        /* float: with a bias and the sum; float16: neither (xOut keeps its 7s) */
        RUN(S, aclnnAddLayerNorm, a.t, b.t, g.t, be.t, f32 ? bi.t : nullptr, eps, f32, y.t, m.t, r.t, x.t);
        std::vector<double> wx(48), wy(48), wm(R), wr(R);
        for (int i = 0; i < 48; i++) wx[i] = A[i] + B[i] + (f32 ? Bi[i % N] : 0);
        for (int row = 0; row < R; row++) {
            double mu = 0, var = 0;
            for (int k = 0; k < N; k++) mu += wx[row * N + k];
            mu /= N;
            for (int k = 0; k < N; k++) var += (wx[row * N + k] - mu) * (wx[row * N + k] - mu);
            wm[row] = mu;
            wr[row] = 1 / std::sqrt(var / N + eps);
            for (int k = 0; k < N; k++) wy[row * N + k] = (wx[row * N + k] - mu) * wr[row] * G[k] + Be[k];
        }
        char what[128];
        snprintf(what, sizeof what, "AddLayerNorm %s yOut", dname(dt));
        compare(what, read(y), wy, tol);
        snprintf(what, sizeof what, "AddLayerNorm %s meanOut", dname(dt));
        compare(what, read(m), wm, 1e-6);
        snprintf(what, sizeof what, "AddLayerNorm %s rstdOut", dname(dt));
        compare(what, read(r), wr, 1e-6);
        snprintf(what, sizeof what, "AddLayerNorm %s xOut (additionalOutput %s)", dname(dt), f32 ? "true" : "false");
        compare(what, read(x), f32 ? as(wx, dt) : std::vector<double>(48, 7), 0);
        /* the gradient from the saved statistics, with dsum */
        std::vector<double> DY = values(48, dt, 46), DS = values(48, dt, 47), M = read(m), RS = read(r);
        Dev dy = make(sh, dt, DY), ds = make(sh, dt, DS), dx = make(sh, dt, {0}, TRANSPOSED);
        Dev dg = make({N}, ACL_FLOAT, {0}), db = make({N}, ACL_FLOAT, {0});
        RUN(S, aclnnAddLayerNormGrad, dy.t, a.t, b.t, r.t, m.t, g.t, ds.t, dx.t, dg.t, db.t);
        std::vector<double> wdx(48), wdg(N, 0), wdb(N, 0);
        for (int row = 0; row < R; row++) {
            double m1 = 0, m2 = 0;
            std::vector<double> xh(N), gy(N);
            for (int k = 0; k < N; k++) {
                int i = row * N + k;
                xh[k] = (A[i] + B[i] - M[row]) * RS[row];
                gy[k] = DY[i] * G[k];
                m1 += gy[k] / N;
                m2 += gy[k] * xh[k] / N;
                wdg[k] += DY[i] * xh[k];
                wdb[k] += DY[i];
            }
            for (int k = 0; k < N; k++) wdx[row * N + k] = RS[row] * (gy[k] - m1 - xh[k] * m2) + DS[row * N + k];
        }
        snprintf(what, sizeof what, "AddLayerNormGrad %s dxOut (with dsum)", dname(dt));
        compare(what, read(dx), wdx, tol);
        snprintf(what, sizeof what, "AddLayerNormGrad %s dgammaOut", dname(dt));
        compare(what, read(dg), wdg, 1e-5);
        snprintf(what, sizeof what, "AddLayerNormGrad %s dbetaOut", dname(dt));
        compare(what, read(db), wdb, 1e-5);
        if (f32) {
            Dev g3 = make({3}, ACL_FLOAT, {1}), m2 = make({2, 3, 2}, ACL_FLOAT, {0}), dgh = make({N}, ACL_FLOAT16, {0});
            Dev z = make({2, 0, N}, ACL_FLOAT, {0});
            expect_code("AddLayerNorm null beta",
                        aclnnAddLayerNormGetWorkspaceSize(a.t, b.t, g.t, nullptr, nullptr, eps, true, y.t, m.t, r.t, x.t,
                                                          &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("AddLayerNorm gamma [3]",
                        aclnnAddLayerNormGetWorkspaceSize(a.t, b.t, g3.t, be.t, nullptr, eps, true, y.t, m.t, r.t, x.t,
                                                          &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("AddLayerNorm meanOut [2, 3, 2]",
                        aclnnAddLayerNormGetWorkspaceSize(a.t, b.t, g.t, be.t, nullptr, eps, true, y.t, m2.t, r.t, x.t,
                                                          &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("AddLayerNorm a dimension of 0",
                        aclnnAddLayerNormGetWorkspaceSize(z.t, z.t, g.t, be.t, nullptr, eps, true, z.t, m.t, r.t, z.t,
                                                          &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("AddLayerNormGrad null dy",
                        aclnnAddLayerNormGradGetWorkspaceSize(nullptr, a.t, b.t, r.t, m.t, g.t, ds.t, dx.t, dg.t, db.t,
                                                              &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("AddLayerNormGrad float16 dgammaOut",
                        aclnnAddLayerNormGradGetWorkspaceSize(dy.t, a.t, b.t, r.t, m.t, g.t, ds.t, dx.t, dgh.t, db.t,
                                                              &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            for (Dev *d : {&g3, &m2, &dgh, &z}) release(*d);
        }
        for (Dev *d : {&a, &b, &g, &be, &bi, &y, &m, &r, &x, &dy, &ds, &dx, &dg, &db}) release(*d);
    }
    printf("ok add layer norm\n");
}

static double fast_gelu_ref(double x) { return x / (1 + std::exp(-1.702 * x)); }

static void fast_gelu() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        double tol = dt == ACL_FLOAT ? 1e-5 : dt == ACL_FLOAT16 ? 2e-3 : 1.6e-2;
        std::vector<double> X = values(24, dt, 31), DY = values(24, dt, 32);
        X[0] = -100;
        X[1] = 0;
        Dev x = make({4, 6}, dt, X, TRANSPOSED), y = make({4, 6}, dt, {0}, STRIDED);
        Dev dy = make({4, 6}, dt, DY), dx = make({4, 6}, dt, {0});
        RUN(S, aclnnFastGelu, x.t, y.t);
        RUN(S, aclnnFastGeluBackward, dy.t, x.t, dx.t);
        std::vector<double> wy(24), wdx(24);
        for (int i = 0; i < 24; i++) {
            double s = 1 / (1 + std::exp(-1.702 * X[i]));
            wy[i] = fast_gelu_ref(X[i]);
            wdx[i] = DY[i] * ((s - 1) * -1.702 * X[i] + 1) * s;
        }
        char what[128];
        snprintf(what, sizeof what, "FastGelu %s transposed into strided", dname(dt));
        compare(what, read(y), wy, tol);
        snprintf(what, sizeof what, "FastGeluBackward %s", dname(dt));
        compare(what, read(dx), wdx, tol);
        for (Dev *d : {&x, &y, &dy, &dx}) release(*d);
    }
    Dev x = make({4, 6}, ACL_FLOAT, {1}), y5 = make({4, 5}, ACL_FLOAT, {0}), xd = make({4, 6}, ACL_DOUBLE, {1});
    Dev yh = make({4, 6}, ACL_FLOAT16, {0}), dyb = make({1, 6}, ACL_FLOAT, {1}), dx = make({4, 6}, ACL_FLOAT, {0});
    expect_code("FastGelu null self", aclnnFastGeluGetWorkspaceSize(nullptr, x.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FastGelu out [4, 5]", aclnnFastGeluGetWorkspaceSize(x.t, y5.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("FastGelu double self", aclnnFastGeluGetWorkspaceSize(xd.t, xd.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("FastGelu float16 out of a float self", aclnnFastGeluGetWorkspaceSize(x.t, yh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FastGeluBackward null gradInput", aclnnFastGeluBackwardGetWorkspaceSize(x.t, x.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FastGeluBackward gradOutput [1, 6] (no broadcasting)",
                aclnnFastGeluBackwardGetWorkspaceSize(dyb.t, x.t, dx.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &y5, &xd, &yh, &dyb, &dx}) release(*d);
    printf("ok fast gelu\n");
}

/* GELU (erf or tanh form) and its derivative */
static void gelu_ref(double x, bool tanh_form, double *g, double *d) {
    if (tanh_form) {
        double k = std::sqrt(2 / M_PI), t = std::tanh(k * (x + 0.044715 * x * x * x));
        *g = 0.5 * x * (1 + t);
        *d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
    } else {
        double cdf = 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
        *g = x * cdf;
        *d = cdf + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    }
}

static void geglu() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* self [2, 6, 3] split along dim 1 (and dim -1 of [3, 4]); every approximate/left pair */
    for (int v3 = 0; v3 < 2; v3++)
        for (int64_t approx = 0; approx < 2; approx++)
            for (int left = 0; left < 2; left++) {
                if (!v3 && left) continue;
                aclDataType dt = left ? ACL_FLOAT16 : ACL_FLOAT;
                double tol = dt == ACL_FLOAT ? 1e-5 : 3e-3;
                Shape sh{2, 6, 3}, hs{2, 3, 3};
                std::vector<double> X = values(36, dt, 51 + approx), DY = values(18, dt, 53);
                Dev x = make(sh, dt, X, STRIDED), o = make(hs, dt, {0}), g = make(hs, dt, {0}, TRANSPOSED);
                if (v3)
                    RUN(S, aclnnGeGluV3, x.t, 1, approx, left != 0, o.t, g.t);
                else
                    RUN(S, aclnnGeGlu, x.t, 1, approx, o.t, g.t);
                std::vector<double> wo(18), wg(18), wdx(36);
                for (int b = 0; b < 2; b++)
                    for (int j = 0; j < 3; j++)
                        for (int i = 0; i < 3; i++) {
                            int ia = (b * 6 + j) * 3 + i, ic = (b * 6 + 3 + j) * 3 + i, k = (b * 3 + j) * 3 + i;
                            int iact = left ? ia : ic, ioth = left ? ic : ia;
                            double gv, dv;
                            gelu_ref(X[iact], approx == 1, &gv, &dv);
                            wg[k] = gv;
                            wo[k] = X[ioth] * gv;
                            wdx[ioth] = DY[k] * as_type(gv, dt);
                            wdx[iact] = DY[k] * X[ioth] * dv;
                        }
                char what[160];
                snprintf(what, sizeof what, "GeGlu%s %s approximate %ld activateLeft %d: out", v3 ? "V3" : "", dname(dt),
                         static_cast<long>(approx), left);
                compare(what, read(o), wo, tol);
                snprintf(what, sizeof what, "GeGlu%s %s approximate %ld activateLeft %d: outGelu", v3 ? "V3" : "",
                         dname(dt), static_cast<long>(approx), left);
                compare(what, read(g), wg, tol);
                Dev dy = make(hs, dt, DY), dx = make(sh, dt, {0});
                if (v3)
                    RUN(S, aclnnGeGluV3Backward, dy.t, x.t, g.t, 1, approx, left != 0, dx.t);
                else
                    RUN(S, aclnnGeGluBackward, dy.t, x.t, g.t, 1, approx, dx.t);
                snprintf(what, sizeof what, "GeGlu%sBackward %s approximate %ld activateLeft %d", v3 ? "V3" : "",
                         dname(dt), static_cast<long>(approx), left);
                compare(what, read(dx), wdx, tol);
                for (Dev *d : {&x, &o, &g, &dy, &dx}) release(*d);
            }
    Dev x = make({3, 4}, ACL_FLOAT, {1}), x5 = make({3, 5}, ACL_FLOAT, {1}), o = make({3, 2}, ACL_FLOAT, {0});
    Dev g = make({3, 2}, ACL_FLOAT, {0}), o4 = make({3, 4}, ACL_FLOAT, {0}), oh = make({3, 2}, ACL_FLOAT16, {0});
    expect_code("GeGluV3 null outGelu", aclnnGeGluV3GetWorkspaceSize(x.t, -1, 1, false, o.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GeGluV3 odd dimension 5", aclnnGeGluV3GetWorkspaceSize(x5.t, -1, 1, false, o.t, g.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeGluV3 approximate 2", aclnnGeGluV3GetWorkspaceSize(x.t, -1, 2, false, o.t, g.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeGlu dim 2 of a 2-D self", aclnnGeGluGetWorkspaceSize(x.t, 2, 1, o.t, g.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeGlu out [3, 4] for the half [3, 2]", aclnnGeGluGetWorkspaceSize(x.t, -1, 1, o4.t, g.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeGluV3Backward null gelu",
                aclnnGeGluV3BackwardGetWorkspaceSize(o.t, x.t, nullptr, -1, 1, false, o4.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GeGluV3Backward float16 gradOutput",
                aclnnGeGluV3BackwardGetWorkspaceSize(oh.t, x.t, g.t, -1, 1, false, o4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &x5, &o, &g, &o4, &oh}) release(*d);
    printf("ok geglu\n");
}

static void group_norm_silu() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t N = 2, C = 6, G = 3, HW = 4;
    Shape sh{N, C, 2, 2};
    for (int v2 = 0; v2 < 3; v2++) {
        /* 0: GroupNormSilu float with gamma/beta; 1: V2 silu off, float16, no gamma/beta;
         * 2: V2 silu on, bfloat16 */
        aclDataType dt = v2 == 0 ? ACL_FLOAT : v2 == 1 ? ACL_FLOAT16 : ACL_BF16;
        double tol = dt == ACL_FLOAT ? 1e-5 : dt == ACL_FLOAT16 ? 3e-3 : 2e-2;
        bool affine = v2 == 0, silu = v2 != 1;
        std::vector<double> X = values(48, dt, 61), Gm = values(C, dt, 62), Bt = values(C, dt, 63);
        Dev x = make(sh, dt, X, TRANSPOSED), g = make({C}, dt, Gm), b = make({C}, dt, Bt);
        Dev o = make(sh, dt, {0}), m = make({N, G}, dt, {0}), r = make({N, G}, dt, {0});
        if (v2 == 0)
            RUN(S, aclnnGroupNormSilu, x.t, g.t, b.t, G, 1e-5, o.t, m.t, r.t);
        else
            RUN(S, aclnnGroupNormSiluV2, x.t, nullptr, nullptr, G, 1e-5, silu, o.t, m.t, r.t);
        std::vector<double> wo(48), wm(N * G), wr(N * G);
        for (int n = 0; n < N; n++)
            for (int grp = 0; grp < G; grp++) {
                int lo = (n * C + grp * 2) * HW, cnt = 2 * HW;
                double mu = 0, var = 0;
                for (int i = 0; i < cnt; i++) mu += X[lo + i] / cnt;
                for (int i = 0; i < cnt; i++) var += (X[lo + i] - mu) * (X[lo + i] - mu) / cnt;
                wm[n * G + grp] = mu;
                wr[n * G + grp] = 1 / std::sqrt(var + 1e-5);
                for (int i = 0; i < cnt; i++) {
                    int ch = grp * 2 + i / HW;
                    double y = (X[lo + i] - mu) * wr[n * G + grp];
                    if (affine) y = y * Gm[ch] + Bt[ch];
                    wo[lo + i] = silu ? y / (1 + std::exp(-y)) : y;
                }
            }
        char what[128];
        snprintf(what, sizeof what, "GroupNormSilu%s %s out", v2 ? "V2" : "", dname(dt));
        compare(what, read(o), wo, tol);
        snprintf(what, sizeof what, "GroupNormSilu%s %s meanOut", v2 ? "V2" : "", dname(dt));
        compare(what, read(m), wm, tol);
        snprintf(what, sizeof what, "GroupNormSilu%s %s rstdOut", v2 ? "V2" : "", dname(dt));
        compare(what, read(r), wr, tol);
        for (Dev *d : {&x, &g, &b, &o, &m, &r}) release(*d);
    }
    Dev x = make(sh, ACL_FLOAT, {1}), o = make(sh, ACL_FLOAT, {0}), m = make({N, G}, ACL_FLOAT, {0});
    Dev r = make({N, G}, ACL_FLOAT, {0}), m4 = make({N, 4}, ACL_FLOAT, {0}), g5 = make({5}, ACL_FLOAT, {1});
    expect_code("GroupNormSilu null rstdOut",
                aclnnGroupNormSiluGetWorkspaceSize(x.t, nullptr, nullptr, G, 1e-5, o.t, m.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GroupNormSilu group 4 of 6 channels",
                aclnnGroupNormSiluGetWorkspaceSize(x.t, nullptr, nullptr, 4, 1e-5, o.t, m4.t, m4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupNormSilu gamma of 5",
                aclnnGroupNormSiluGetWorkspaceSize(x.t, g5.t, nullptr, G, 1e-5, o.t, m.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupNormSiluV2 meanOut [2, 4] for 3 groups",
                aclnnGroupNormSiluV2GetWorkspaceSize(x.t, nullptr, nullptr, G, 1e-5, true, o.t, m4.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &o, &m, &r, &m4, &g5}) release(*d);
    printf("ok group norm silu\n");
}

static void cross_entropy() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int N = 5, C = 4;
    std::vector<double> X = values(N * C, ACL_FLOAT, 71), W{0.5, 1.5, 1, 2};
    std::vector<double> T{3, 0, -100, 1, 2};
    const char *reds[] = {"mean", "sum", "none"};
    for (int r = 0; r < 3; r++)
        for (double sm : {0.0, 0.1}) {
            bool none = r == 2;
            Dev x = make({N, C}, ACL_FLOAT, X, TRANSPOSED), t = make({N}, ACL_INT64, T), w = make({C}, ACL_FLOAT, W);
            Dev lo = none ? make({N}, ACL_FLOAT, {0}) : make({}, ACL_FLOAT, {0}), lp = make({N, C}, ACL_FLOAT, {0});
            Dev z = make({0}, ACL_FLOAT, {0}), lse = make({0}, ACL_FLOAT, {0});
            RUN(S, aclnnCrossEntropyLoss, x.t, t.t, w.t, const_cast<char *>(reds[r]), -100, sm, 0.0, false, lo.t, lp.t,
                z.t, lse.t);
            std::vector<double> wlp(N * C), per(N, 0), G = none ? values(N, ACL_FLOAT, 72, false, true)
                                                                : std::vector<double>{0.75};
            double total = 0, sum = 0;
            for (int i = 0; i < N; i++) {
                double mx = -1e300, se = 0;
                for (int j = 0; j < C; j++) mx = std::max(mx, X[i * C + j]);
                for (int j = 0; j < C; j++) se += std::exp(X[i * C + j] - mx);
                for (int j = 0; j < C; j++) wlp[i * C + j] = X[i * C + j] - mx - std::log(se);
                if (T[i] == -100) continue;
                int ti = static_cast<int>(T[i]);
                double smooth = 0;
                for (int j = 0; j < C; j++) smooth -= W[j] * wlp[i * C + j];
                per[i] = (1 - sm) * W[ti] * -wlp[i * C + ti] + sm / C * smooth;
                total += W[ti];
                sum += per[i];
            }
            std::vector<double> wl = none ? per : std::vector<double>{r == 0 ? sum / total : sum};
            char what[160];
            snprintf(what, sizeof what, "CrossEntropyLoss %s labelSmoothing %g (weights, an ignored target)", reds[r], sm);
            compare(what, read(lo), wl, 1e-5);
            snprintf(what, sizeof what, "CrossEntropyLoss %s logProbOut", reds[r]);
            compare(what, read(lp), wlp, 1e-5);
            /* the gradient from the saved logProb */
            Dev g = none ? make({N}, ACL_FLOAT, G) : make({}, ACL_FLOAT, G), gx = make({N, C}, ACL_FLOAT, {0}, STRIDED);
            RUN(S, aclnnCrossEntropyLossGrad, g.t, lp.t, t.t, w.t, nullptr, nullptr, const_cast<char *>(reds[r]), -100, sm,
                0.0, gx.t);
            std::vector<double> LP = read(lp), wgx(N * C, 0);
            double wsum = W[0] + W[1] + W[2] + W[3];
            for (int i = 0; i < N; i++) {
                if (T[i] == -100) continue;
                int ti = static_cast<int>(T[i]);
                double gi = none ? G[i] : r == 0 ? G[0] / total : G[0];
                for (int j = 0; j < C; j++) {
                    double p = std::exp(LP[i * C + j]);
                    wgx[i * C + j] = gi * ((1 - sm) * W[ti] * (p - (j == ti)) + sm / C * (p * wsum - W[j]));
                }
            }
            snprintf(what, sizeof what, "CrossEntropyLossGrad %s labelSmoothing %g into a strided out", reds[r], sm);
            compare(what, read(gx), wgx, 1e-5);
            for (Dev *d : {&x, &t, &w, &lo, &lp, &z, &lse, &g, &gx}) release(*d);
        }
    Dev x = make({N, C}, ACL_FLOAT, X), t = make({N}, ACL_INT64, T), lo = make({}, ACL_FLOAT, {0});
    Dev lp = make({N, C}, ACL_FLOAT, {0}), t32 = make({N}, ACL_INT32, T), lo5 = make({N}, ACL_FLOAT, {0});
    Dev bad_t = make({N}, ACL_INT64, {9}), ln = make({N}, ACL_FLOAT, {0});
    expect_code("CrossEntropyLoss null target",
                aclnnCrossEntropyLossGetWorkspaceSize(x.t, nullptr, nullptr, const_cast<char *>("mean"), -100, 0.0, 0.0,
                                                      false, lo.t, lp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CrossEntropyLoss int32 target",
                aclnnCrossEntropyLossGetWorkspaceSize(x.t, t32.t, nullptr, const_cast<char *>("mean"), -100, 0.0, 0.0,
                                                      false, lo.t, lp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CrossEntropyLoss reduction \"avg\"",
                aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, nullptr, const_cast<char *>("avg"), -100, 0.0, 0.0,
                                                      false, lo.t, lp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CrossEntropyLoss lossOut [5] for mean",
                aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, nullptr, const_cast<char *>("mean"), -100, 0.0, 0.0,
                                                      false, lo5.t, lp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CrossEntropyLoss returnZloss",
                aclnnCrossEntropyLossGetWorkspaceSize(x.t, t.t, nullptr, const_cast<char *>("mean"), -100, 0.0, 0.0,
                                                      true, lo.t, lp.t, lo.t, ln.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CrossEntropyLossGrad null out",
                aclnnCrossEntropyLossGradGetWorkspaceSize(lo.t, lp.t, t.t, nullptr, nullptr, nullptr,
                                                          const_cast<char *>("mean"), -100, 0.0, 0.0, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    /* a target out of range fails the task at synchronisation */
    {
        uint64_t w2 = 0;
        aclOpExecutor *e2 = nullptr;
        NN(aclnnCrossEntropyLossGetWorkspaceSize(x.t, bad_t.t, nullptr, const_cast<char *>("none"), -100, 0.0, 0.0, false,
                                                 ln.t, lp.t, nullptr, nullptr, &w2, &e2));
        NN(aclnnCrossEntropyLoss(nullptr, 0, e2, S));
        g_checks++;
        if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
            printf("FAIL CrossEntropyLoss target 9 of 4 classes: the stream synchronised without an error\n");
            g_fail++;
        } else {
            printf("out of range: %s\n", aclGetRecentErrMsg());
        }
    }
    for (Dev *d : {&x, &t, &lo, &lp, &t32, &lo5, &bad_t, &ln}) release(*d);
    printf("ok cross entropy loss\n");
}

static void shrink() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    std::vector<double> X{-2, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 3, -0.75, 1, -1, 0.125};
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (float lam : {0.5f, 0.0f, -1.0f}) {
            double l = lam < 0 ? 0 : lam;
            Dev x = make({3, 4}, dt, X, TRANSPOSED), h = make({3, 4}, dt, {0}), s = make({3, 4}, dt, {0});
            aclScalar *ls = fs(lam), *lp = fs(l);
            RUN(S, aclnnHardshrink, x.t, ls, h.t);
            RUN(S, aclnnSoftshrink, x.t, lp, s.t);
            std::vector<double> wh(12), wsft(12);
            for (int i = 0; i < 12; i++) {
                double v = X[i];
                wh[i] = (v > l || v < -l) ? v : 0;
                wsft[i] = v > l ? v - l : v < -l ? v + l : 0;
            }
            char what[128];
            snprintf(what, sizeof what, "Hardshrink %s lambd %g", dname(dt), lam);
            compare(what, read(h), wh, 0);
            snprintf(what, sizeof what, "Softshrink %s lambd %g", dname(dt), l);
            compare(what, read(s), as(wsft, dt), 0);
            aclDestroyScalar(ls);
            aclDestroyScalar(lp);
            for (Dev *d : {&x, &h, &s}) release(*d);
        }
    }
    /* backward: gradOutput [1, 4] broadcast over self [3, 4] */
    std::vector<double> G{1, 2, 3, 4};
    Dev x = make({3, 4}, ACL_FLOAT, X, STRIDED), g = make({1, 4}, ACL_FLOAT, G);
    Dev gh = make({3, 4}, ACL_FLOAT, {0}), gsft = make({3, 4}, ACL_FLOAT, {0}, TRANSPOSED);
    aclScalar *lam = fs(0.5f), *neg = fs(-0.5f);
    RUN(S, aclnnHardshrinkBackward, g.t, x.t, lam, gh.t);
    RUN(S, aclnnSoftshrinkBackward, g.t, x.t, lam, gsft.t);
    std::vector<double> wg(12);
    for (int i = 0; i < 12; i++) wg[i] = (X[i] > 0.5 || X[i] < -0.5) ? G[i % 4] : 0;
    compare("HardshrinkBackward broadcast gradOutput [1, 4], lambd 0.5", read(gh), wg, 0);
    compare("SoftshrinkBackward broadcast gradOutput [1, 4] into a transposed gradInput", read(gsft), wg, 0);
    Dev xi = make({3, 4}, ACL_INT32, {1}), o5 = make({3, 5}, ACL_FLOAT, {0}), gh16 = make({3, 4}, ACL_FLOAT16, {0});
    Dev g3 = make({3, 1, 4}, ACL_FLOAT, {1});
    expect_code("Hardshrink null lambd", aclnnHardshrinkGetWorkspaceSize(x.t, nullptr, gh.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Hardshrink int32 self", aclnnHardshrinkGetWorkspaceSize(xi.t, lam, xi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Softshrink negative lambd", aclnnSoftshrinkGetWorkspaceSize(x.t, neg, gh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Softshrink out [3, 5]", aclnnSoftshrinkGetWorkspaceSize(x.t, lam, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("HardshrinkBackward null self", aclnnHardshrinkBackwardGetWorkspaceSize(g.t, nullptr, lam, gh.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("HardshrinkBackward float16 gradInput",
                aclnnHardshrinkBackwardGetWorkspaceSize(g.t, x.t, lam, gh16.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SoftshrinkBackward gradInput [3, 4] for the broadcast shape [3, 3, 4]",
                aclnnSoftshrinkBackwardGetWorkspaceSize(g3.t, x.t, lam, gh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    aclDestroyScalar(lam);
    aclDestroyScalar(neg);
    for (Dev *d : {&x, &g, &gh, &gsft, &xi, &o5, &gh16, &g3}) release(*d);
    printf("ok shrink\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    sync_batch_norm();
    add_rms_norm();
    add_layer_norm();
    fast_gelu();
    geglu();
    group_norm_silu();
    cross_entropy();
    shrink();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
