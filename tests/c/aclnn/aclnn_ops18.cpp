/* Operators of the aclnn reference whose documentation examples did not build on npu-emu,
 * against host references written from the documented formulas:
 * - activations: SeluBackward, Shrink, Swish (+Backward), SquaredRelu, Softsign (+Backward),
 *   GeluMul, FatreluMul;
 * - SoftmaxCrossEntropyWithLogits, ScaledMaskedSoftmax (+Backward);
 * - MaxPool, MaxUnpool2dBackward, MaxUnpool3dBackward, GatherV3, ScatterNdUpdate,
 *   TfScatterAdd, ScatterList;
 * - Gemm, TransposeBatchMatMul, BatchNormReduce, SyncBatchNormGatherStats,
 *   FastBatchNormBackward, GroupNormSwish (+Grad, checked against central differences of the
 *   host forward), ForeachRoundOffNumber (+V2), ChamferDistanceBackward;
 * each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: data movement exact; float32 results 1e-5 relative (1e-4 for the matrix
 * products and reductions), float16 2e-3, bfloat16 1e-2. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_selu_backward.h"
#include "aclnnop/aclnn_shrink.h"
#include "aclnnop/aclnn_swish.h"
#include "aclnnop/aclnn_swish_backward.h"
#include "aclnnop/aclnn_squared_relu.h"
#include "aclnnop/aclnn_softsign.h"
#include "aclnnop/aclnn_softsign_backward.h"
#include "aclnnop/aclnn_gelu_mul.h"
#include "aclnnop/aclnn_fatrelu_mul.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_scaled_masked_softmax.h"
#include "aclnnop/aclnn_scaled_masked_softmax_backward.h"
#include "aclnnop/aclnn_max_pool.h"
#include "aclnnop/aclnn_max_unpool2d_backward.h"
#include "aclnnop/aclnn_max_unpool3d_backward.h"
#include "aclnnop/aclnn_gather_v3.h"
#include "aclnnop/aclnn_scatter_nd_update.h"
#include "aclnnop/aclnn_tf_scatter_add.h"
#include "aclnnop/aclnn_scatter_list.h"
#include "aclnnop/aclnn_gemm.h"
#include "aclnnop/aclnn_transpose_batch_mat_mul.h"
#include "aclnnop/aclnn_batch_norm_reduce.h"
#include "aclnnop/aclnn_sync_batch_norm_gather_stats.h"
#include "aclnnop/aclnn_fast_batch_norm_backward.h"
#include "aclnnop/aclnn_group_norm_swish.h"
#include "aclnnop/aclnn_group_norm_swish_grad.h"
#include "aclnnop/aclnn_foreach_round_off_number.h"
#include "aclnnop/aclnn_foreach_round_off_number_v2.h"
#include "aclnnop/aclnn_chamfer_distance_backward.h"

static aclrtStream S;
static uint64_t ws = 0;
static aclOpExecutor *ex = nullptr;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

static double tol_of(aclDataType t) { return t == ACL_FLOAT16 ? 2e-3 : t == ACL_BF16 ? 1e-2 : 1e-5; }

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }
static double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

/* ---- activations ---- */

static void activations() {
    const double A = 1.6732632423543772848170429916717, L = 1.0507009873554804934193349852946;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout lay : {CONTIG, STRIDED}) {
            Shape sh{3, 4};
            std::vector<double> X = values(12, t, 1), G = values(12, t, 2);
            X[0] = 0;
            Dev x = make(sh, t, X, lay), g = make(sh, t, G, lay), o = make(sh, t, {9}, lay);
            char what[96];
            auto check = [&](const char *name, std::function<double(double, double)> f) {
                std::vector<double> want(12);
                for (int i = 0; i < 12; i++) want[i] = as_type(f(X[i], G[i]), t);
                snprintf(what, sizeof what, "%s %s %s", name, dname(t), lname(lay));
                compare(what, read(o), want, tol_of(t));
            };
            /* SeluBackward: x holds the forward result y here */
            RUN(S, aclnnSeluBackward, g.t, x.t, o.t);
            check("SeluBackward", [&](double y, double gv) { return y > 0 ? gv * L : gv * (y + A * L); });
            aclScalar *lam = fs(1.5f), *bias = fs(0.25f);
            if (t != ACL_BF16) {
                RUN(S, aclnnShrink, x.t, lam, bias, o.t);
                check("Shrink", [](double v, double) { return v > 1.5 ? v - 0.25 : v < -1.5 ? v + 0.25 : 0.0; });
            }
            RUN(S, aclnnSwish, x.t, nullptr, o.t);
            check("Swish beta 1", [](double v, double) { return v * sigm(v); });
            aclScalar *beta = fs(2.0f);
            RUN(S, aclnnSwish, x.t, beta, o.t);
            check("Swish beta 2", [](double v, double) { return v * sigm(2 * v); });
            RUN(S, aclnnSwishBackward, g.t, x.t, beta, o.t);
            check("SwishBackward beta 2", [](double v, double gv) {
                double s = sigm(2 * v);
                return gv * s * (1 + 2 * v * (1 - s));
            });
            RUN(S, aclnnSquaredRelu, x.t, o.t);
            check("SquaredRelu", [](double v, double) { return v > 0 ? v * v : 0.0; });
            RUN(S, aclnnSoftsign, x.t, o.t);
            check("Softsign", [](double v, double) { return v / (1 + std::fabs(v)); });
            RUN(S, aclnnSoftsignBackward, g.t, x.t, o.t);
            check("SoftsignBackward", [](double v, double gv) { return gv / ((1 + std::fabs(v)) * (1 + std::fabs(v))); });
            aclDestroyScalar(lam);
            aclDestroyScalar(bias);
            aclDestroyScalar(beta);
            release(x);
            release(g);
            release(o);
        }
    }
    /* SeluBackward on INT32 */
    {
        Dev g = make({4}, ACL_INT32, {2, 3, -1, 4}), y = make({4}, ACL_INT32, {1, 0, -1, 5}), o = make({4}, ACL_INT32, {0});
        RUN(S, aclnnSeluBackward, g.t, y.t, o.t);
        std::vector<double> want = {std::trunc(2 * L), std::trunc(3 * (0 + A * L)), std::trunc(-1 * (-1 + A * L)),
                                    std::trunc(4 * L)};
        compare("SeluBackward int32", read(o), want, 0);
        release(g);
        release(y);
        release(o);
    }
    /* GeluMul (none / tanh) and FatreluMul: [2, 3, 8] -> [2, 3, 4] */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        std::vector<double> X = values(48, t, 5);
        Dev x = make({2, 3, 8}, t, X, STRIDED), o = make({2, 3, 4}, t, {0});
        for (int tanh_mode = 0; tanh_mode < 2; tanh_mode++) {
            char mode[8];
            strcpy(mode, tanh_mode ? "tanh" : "none");
            RUN(S, aclnnGeluMul, x.t, mode, o.t);
            std::vector<double> want(24);
            for (int r = 0; r < 6; r++)
                for (int j = 0; j < 4; j++) {
                    double a = X[r * 8 + j], b = X[r * 8 + 4 + j];
                    double ge = tanh_mode ? 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)))
                                          : 0.5 * a * (1 + std::erf(a / std::sqrt(2.0)));
                    want[r * 4 + j] = as_type(ge * b, t);
                }
            char what[64];
            snprintf(what, sizeof what, "GeluMul %s %s", mode, dname(t));
            compare(what, read(o), want, tol_of(t));
        }
        RUN(S, aclnnGeluMul, x.t, nullptr, o.t);
        Dev th = make({1}, t, {0.5});
        RUN(S, aclnnFatreluMul, x.t, th.t, o.t);
        std::vector<double> want(24);
        for (int r = 0; r < 6; r++)
            for (int j = 0; j < 4; j++) {
                double a = X[r * 8 + j], b = X[r * 8 + 4 + j];
                want[r * 4 + j] = as_type(a >= 0.5 ? a * b : 0.0, t);
            }
        compare(t == ACL_FLOAT ? "FatreluMul float" : "FatreluMul float16", read(o), want, tol_of(t));
        release(th);
        release(x);
        release(o);
    }
    /* errors */
    Dev x = make({2, 4}, ACL_FLOAT, {1}), h = make({2, 4}, ACL_FLOAT16, {1}), o = make({2, 4}, ACL_FLOAT, {0});
    Dev o3 = make({2, 3}, ACL_FLOAT, {0}), o2 = make({2, 2}, ACL_FLOAT, {0}), x5 = make({2, 5}, ACL_FLOAT, {1});
    Dev i32 = make({2, 4}, ACL_INT32, {1}), th2 = make({2}, ACL_FLOAT, {0}), d = make({2, 4}, ACL_DOUBLE, {1});
    Dev v1 = make({4}, ACL_FLOAT, {1}), o1 = make({2}, ACL_FLOAT, {0});
    aclScalar *neg = fs(-1.0f), *one = fs(1.0f);
    expect_code("SeluBackward null gradOutput", aclnnSeluBackwardGetWorkspaceSize(nullptr, x.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SeluBackward float16 result with float gradOutput",
                aclnnSeluBackwardGetWorkspaceSize(x.t, h.t, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SeluBackward shape mismatch", aclnnSeluBackwardGetWorkspaceSize(x.t, x.t, o3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Shrink null lambd", aclnnShrinkGetWorkspaceSize(x.t, nullptr, one, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Shrink negative lambd", aclnnShrinkGetWorkspaceSize(x.t, neg, one, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Shrink int32 self", aclnnShrinkGetWorkspaceSize(i32.t, one, one, i32.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Swish null out", aclnnSwishGetWorkspaceSize(x.t, nullptr, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Swish double self", aclnnSwishGetWorkspaceSize(d.t, nullptr, d.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Swish float16 out of a float self", aclnnSwishGetWorkspaceSize(x.t, nullptr, h.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SwishBackward shape mismatch", aclnnSwishBackwardGetWorkspaceSize(x.t, x5.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SquaredRelu null input", aclnnSquaredReluGetWorkspaceSize(nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SquaredRelu int32 input", aclnnSquaredReluGetWorkspaceSize(i32.t, i32.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Softsign out shape", aclnnSoftsignGetWorkspaceSize(x.t, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SoftsignBackward null features", aclnnSoftsignBackwardGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SoftsignBackward dtypes differ", aclnnSoftsignBackwardGetWorkspaceSize(x.t, h.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    char bad[] = "erf";
    expect_code("GeluMul approximate \"erf\"", aclnnGeluMulGetWorkspaceSize(x.t, bad, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeluMul odd last dimension", aclnnGeluMulGetWorkspaceSize(x5.t, nullptr, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeluMul 1-D input", aclnnGeluMulGetWorkspaceSize(v1.t, nullptr, o1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GeluMul out not halved", aclnnGeluMulGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FatreluMul null threshold", aclnnFatreluMulGetWorkspaceSize(x.t, nullptr, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FatreluMul threshold of 2 elements", aclnnFatreluMulGetWorkspaceSize(x.t, th2.t, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *p : {&x, &h, &o, &o3, &o2, &x5, &i32, &th2, &d, &v1, &o1}) release(*p);
    aclDestroyScalar(neg);
    aclDestroyScalar(one);
    printf("ok activations\n");
}

/* ---- softmax losses ---- */

static void softmaxes() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        int n = 3, c = 5;
        std::vector<double> X = values(n * c, t, 7), Y = as(std::vector<double>(n * c, 0), t);
        for (int r = 0; r < n; r++) {
            Y[r * c + r] = as_type(0.75, t);
            Y[r * c + (r + 2) % c] = as_type(0.25, t);
        }
        Dev x = make({n, c}, t, X, TRANSPOSED), y = make({n, c}, t, Y), l = make({n}, t, {0}), b = make({n, c}, t, {0});
        RUN(S, aclnnSoftmaxCrossEntropyWithLogits, x.t, y.t, l.t, b.t);
        std::vector<double> wl(n), wb(n * c);
        for (int r = 0; r < n; r++) {
            double m = -1e300, s = 0;
            for (int j = 0; j < c; j++) m = std::max(m, X[r * c + j]);
            for (int j = 0; j < c; j++) s += std::exp(X[r * c + j] - m);
            double lse = m + std::log(s), loss = 0;
            for (int j = 0; j < c; j++) {
                double lp = X[r * c + j] - lse;
                loss -= Y[r * c + j] * lp;
                wb[r * c + j] = as_type(std::exp(lp) - Y[r * c + j], t);
            }
            wl[r] = as_type(loss, t);
        }
        compare(t == ACL_FLOAT ? "SoftmaxCrossEntropyWithLogits loss float" : "SoftmaxCrossEntropyWithLogits loss float16",
                read(l), wl, tol_of(t));
        compare(t == ACL_FLOAT ? "SoftmaxCrossEntropyWithLogits backprop float"
                               : "SoftmaxCrossEntropyWithLogits backprop float16",
                read(b), wb, tol_of(t));
        release(x);
        release(y);
        release(l);
        release(b);
    }
    /* ScaledMaskedSoftmax (+Backward): x [2, 2, 3, 4], mask [1, 2, 3, 4] */
    for (aclDataType t : {ACL_FLOAT, ACL_BF16}) {
        Shape sh{2, 2, 3, 4}, ms{1, 2, 3, 4};
        int nx = 48, s2 = 4;
        std::vector<double> X = values(nx, t, 9), G = values(nx, t, 10), M(24);
        for (int i = 0; i < 24; i++) M[i] = (i % 5 == 1);
        Dev x = make(sh, t, X), m = make(ms, ACL_BOOL, M), y = make(sh, t, {0}), g = make(sh, t, G), o = make(sh, t, {0});
        double scale = 0.5;
        RUN(S, aclnnScaledMaskedSoftmax, x.t, m.t, scale, false, y.t);
        std::vector<double> want(nx), yv(nx);
        for (int r = 0; r < nx / s2; r++) {
            double row[4], mx = -1e300, sum = 0;
            for (int j = 0; j < s2; j++) {
                int i = r * s2 + j;
                row[j] = M[i % 24] ? -10000.0 : scale * X[i];
                mx = std::max(mx, row[j]);
            }
            for (int j = 0; j < s2; j++) sum += std::exp(row[j] - mx);
            for (int j = 0; j < s2; j++) {
                yv[r * s2 + j] = std::exp(row[j] - mx) / sum;
                want[r * s2 + j] = as_type(yv[r * s2 + j], t);
            }
        }
        compare(t == ACL_FLOAT ? "ScaledMaskedSoftmax float" : "ScaledMaskedSoftmax bfloat16", read(y), want, tol_of(t));
        std::vector<double> Yd = read(y);
        RUN(S, aclnnScaledMaskedSoftmaxBackward, g.t, y.t, m.t, scale, false, o.t);
        for (int r = 0; r < nx / s2; r++) {
            double dot = 0;
            for (int j = 0; j < s2; j++) dot += G[r * s2 + j] * Yd[r * s2 + j];
            for (int j = 0; j < s2; j++) {
                int i = r * s2 + j;
                want[i] = as_type(M[i % 24] ? 0.0 : scale * (G[i] * Yd[i] - dot * Yd[i]), t);
            }
        }
        compare(t == ACL_FLOAT ? "ScaledMaskedSoftmaxBackward float" : "ScaledMaskedSoftmaxBackward bfloat16", read(o),
                want, tol_of(t) * 2);
        release(x);
        release(m);
        release(y);
        release(g);
        release(o);
    }
    Dev x = make({2, 3}, ACL_FLOAT, {1}), l = make({2}, ACL_FLOAT, {0}), l3 = make({3}, ACL_FLOAT, {0});
    Dev i = make({2, 3}, ACL_INT32, {1}), x3 = make({2, 3, 1}, ACL_FLOAT, {1});
    expect_code("SoftmaxCrossEntropyWithLogits null labels",
                aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(x.t, nullptr, l.t, x.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SoftmaxCrossEntropyWithLogits int32 features",
                aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(i.t, i.t, l.t, i.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SoftmaxCrossEntropyWithLogits loss of 3", aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(x.t, x.t, l3.t, x.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev x4 = make({1, 1, 2, 4}, ACL_FLOAT, {1}), m4 = make({1, 1, 2, 4}, ACL_BOOL, {0}), mf = make({1, 1, 2, 4}, ACL_FLOAT, {0});
    Dev m3 = make({1, 1, 3, 4}, ACL_BOOL, {0}), big = make({1, 1, 1, 4097}, ACL_FLOAT, {0}), mb = make({1, 1, 1, 4097}, ACL_BOOL, {0});
    expect_code("ScaledMaskedSoftmax null x", aclnnScaledMaskedSoftmaxGetWorkspaceSize(nullptr, m4.t, 1.0, false, x4.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ScaledMaskedSoftmax float mask", aclnnScaledMaskedSoftmaxGetWorkspaceSize(x4.t, mf.t, 1.0, false, x4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScaledMaskedSoftmax 3-D x", aclnnScaledMaskedSoftmaxGetWorkspaceSize(x3.t, m4.t, 1.0, false, x3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScaledMaskedSoftmax mask does not broadcast",
                aclnnScaledMaskedSoftmaxGetWorkspaceSize(x4.t, m3.t, 1.0, false, x4.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScaledMaskedSoftmax last dimension 4097",
                aclnnScaledMaskedSoftmaxGetWorkspaceSize(big.t, mb.t, 1.0, false, big.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScaledMaskedSoftmaxBackward fixTriuMask true",
                aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(x4.t, x4.t, m4.t, 1.0, true, x4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *p : {&x, &l, &l3, &i, &x3, &x4, &m4, &mf, &m3, &big, &mb}) release(*p);
    printf("ok softmax\n");
}

/* ---- pooling and indexing ---- */

static void pooling() {
    struct C {
        aclDataType t;
        int64_t k, s, pad, ceil;
    };
    for (C c : {C{ACL_FLOAT, 3, 2, 1, 0}, C{ACL_FLOAT, 3, 2, 1, 1}, C{ACL_INT32, 2, 2, 0, 1}, C{ACL_FLOAT16, 2, 1, 1, 0}}) {
        int64_t N = 1, Ch = 2, H = 5, W = 6;
        std::vector<double> X = values(N * Ch * H * W, c.t, 13);
        auto olen = [&](int64_t i) {
            int64_t num = i + 2 * c.pad - c.k;
            int64_t o = c.ceil ? (num + c.s - 1) / c.s + 1 : num / c.s + 1;
            if ((o - 1) * c.s >= i + c.pad) o--;
            return o;
        };
        int64_t oh = olen(H), ow = olen(W);
        Dev x = make({N, Ch, H, W}, c.t, X, STRIDED), o = make({N, Ch, oh, ow}, c.t, {0});
        std::vector<int64_t> kk{c.k, c.k}, ss{c.s}, pp{c.pad, c.pad, c.pad, c.pad}, dd{1, 1};
        aclIntArray *ka = aclCreateIntArray(kk.data(), 2), *sa = aclCreateIntArray(ss.data(), 1),
                    *pa = aclCreateIntArray(pp.data(), 4), *da = aclCreateIntArray(dd.data(), 2);
        RUN(S, aclnnMaxPool, x.t, ka, sa, 0, pa, da, c.ceil, o.t);
        std::vector<double> want;
        for (int64_t p = 0; p < N * Ch; p++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t xx = 0; xx < ow; xx++) {
                    double best = -1e300;
                    for (int64_t a = 0; a < c.k; a++)
                        for (int64_t b = 0; b < c.k; b++) {
                            int64_t iy = y * c.s + a - c.pad, ix = xx * c.s + b - c.pad;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W) best = std::max(best, X[(p * H + iy) * W + ix]);
                        }
                    want.push_back(best);
                }
        char what[96];
        snprintf(what, sizeof what, "MaxPool %s k%lld s%lld pad%lld ceil%lld -> [%lld, %lld]", dname(c.t),
                 (long long)c.k, (long long)c.s, (long long)c.pad, (long long)c.ceil, (long long)oh, (long long)ow);
        compare(what, read(o), want, 0);
        aclDestroyIntArray(ka);
        aclDestroyIntArray(sa);
        aclDestroyIntArray(pa);
        aclDestroyIntArray(da);
        release(x);
        release(o);
    }
    /* errors */
    Dev x = make({1, 1, 4, 4}, ACL_FLOAT, {1}), o = make({1, 1, 2, 2}, ACL_FLOAT, {0}), o3 = make({1, 1, 3, 3}, ACL_FLOAT, {0});
    Dev x2 = make({4, 4}, ACL_FLOAT, {1}), xd = make({1, 1, 4, 4}, ACL_DOUBLE, {1});
    std::vector<int64_t> k2{2, 2}, k0{0, 2}, k3{2, 2, 2}, d2{2, 2}, p4{3, 0, 0, 0};
    aclIntArray *ka = aclCreateIntArray(k2.data(), 2), *kz = aclCreateIntArray(k0.data(), 2),
                *kt = aclCreateIntArray(k3.data(), 3), *dl = aclCreateIntArray(d2.data(), 2), *pb = aclCreateIntArray(p4.data(), 4);
    expect_code("MaxPool null self", aclnnMaxPoolGetWorkspaceSize(nullptr, ka, ka, 0, nullptr, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxPool kernel of 3 values", aclnnMaxPoolGetWorkspaceSize(x.t, kt, ka, 0, nullptr, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool kernel 0", aclnnMaxPoolGetWorkspaceSize(x.t, kz, ka, 0, nullptr, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool dilation 2", aclnnMaxPoolGetWorkspaceSize(x.t, ka, ka, 0, nullptr, dl, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool autoPad 1", aclnnMaxPoolGetWorkspaceSize(x.t, ka, ka, 1, nullptr, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool pads beyond the kernel", aclnnMaxPoolGetWorkspaceSize(x.t, ka, ka, 0, pb, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool wrong out shape", aclnnMaxPoolGetWorkspaceSize(x.t, ka, ka, 0, nullptr, nullptr, 0, o3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool 2-D self", aclnnMaxPoolGetWorkspaceSize(x2.t, ka, ka, 0, nullptr, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool double self", aclnnMaxPoolGetWorkspaceSize(xd.t, ka, ka, 0, nullptr, nullptr, 0, xd.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {ka, kz, kt, dl, pb}) aclDestroyIntArray(a);
    for (Dev *p : {&x, &o, &o3, &x2, &xd}) release(*p);
    printf("ok max pool\n");
}

static void unpool_backward() {
    /* 2-D: self [2, 2, 2] (C, H, W), gradOutput [2, 3, 3], out[c][i] = g[c][idx[c][i]] */
    for (aclDataType t : {ACL_FLOAT, ACL_INT64}) {
        std::vector<double> G = values(18, t, 21), I = {0, 4, 8, 2, 1, 3, 5, 7};
        Dev g = make({2, 3, 3}, t, G, STRIDED), x = make({2, 2, 2}, t, {0}), i = make({2, 2, 2}, ACL_INT64, I),
            o = make({2, 2, 2}, t, {0});
        std::vector<int64_t> sz{3, 3};
        aclIntArray *s = aclCreateIntArray(sz.data(), 2);
        RUN(S, aclnnMaxUnpool2dBackward, g.t, x.t, i.t, s, o.t);
        std::vector<double> want(8);
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < 4; k++) want[c * 4 + k] = G[c * 9 + (int)I[c * 4 + k]];
        compare(t == ACL_FLOAT ? "MaxUnpool2dBackward float" : "MaxUnpool2dBackward int64", read(o), want, 0);
        expect_code("MaxUnpool2dBackward null indices", aclnnMaxUnpool2dBackwardGetWorkspaceSize(g.t, x.t, nullptr, s, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        std::vector<int64_t> bad{3, 4};
        aclIntArray *b = aclCreateIntArray(bad.data(), 2);
        expect_code("MaxUnpool2dBackward outputSize not gradOutput's", aclnnMaxUnpool2dBackwardGetWorkspaceSize(g.t, x.t, i.t, b, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyIntArray(b);
        aclDestroyIntArray(s);
        release(g);
        release(x);
        release(i);
        release(o);
    }
    /* index out of range fails the task */
    {
        Dev g = make({1, 2, 2}, ACL_FLOAT, {1}), x = make({1, 1, 2}, ACL_FLOAT, {0}), i = make({1, 1, 2}, ACL_INT64, {0, 4}),
            o = make({1, 1, 2}, ACL_FLOAT, {0});
        std::vector<int64_t> sz{2, 2};
        aclIntArray *s = aclCreateIntArray(sz.data(), 2);
        NN(aclnnMaxUnpool2dBackwardGetWorkspaceSize(g.t, x.t, i.t, s, o.t, &ws, &ex));
        NN(aclnnMaxUnpool2dBackward(nullptr, 0, ex, S));
        g_checks++;
        if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
            printf("FAIL MaxUnpool2dBackward index 4 of a 2x2 gradOutput succeeded\n");
            g_fail++;
        } else {
            printf("error MaxUnpool2dBackward index 4: %s\n", aclGetRecentErrMsg());
        }
        aclDestroyIntArray(s);
        release(g);
        release(x);
        release(i);
        release(o);
    }
    /* 3-D: self [1, 2, 1, 2, 2] (N, C, D, H, W), gradOutput [1, 2, 2, 2, 2] */
    {
        std::vector<double> G = values(16, ACL_FLOAT, 22), I = {7, 0, 3, 5, 1, 2, 6, 4};
        Dev g = make({1, 2, 2, 2, 2}, ACL_FLOAT, G), x = make({1, 2, 1, 2, 2}, ACL_FLOAT, {0}),
            i = make({1, 2, 1, 2, 2}, ACL_INT64, I), o = make({1, 2, 1, 2, 2}, ACL_FLOAT, {0});
        std::vector<int64_t> sz{2, 2, 2}, st{2, 2, 2}, pd{0, 0, 0};
        aclIntArray *s = aclCreateIntArray(sz.data(), 3), *sa = aclCreateIntArray(st.data(), 3), *pa = aclCreateIntArray(pd.data(), 3);
        RUN(S, aclnnMaxUnpool3dBackward, g.t, x.t, i.t, s, sa, pa, o.t);
        std::vector<double> want(8);
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < 4; k++) want[c * 4 + k] = G[c * 8 + (int)I[c * 4 + k]];
        compare("MaxUnpool3dBackward float", read(o), want, 0);
        std::vector<int64_t> two{2, 2};
        aclIntArray *t2 = aclCreateIntArray(two.data(), 2);
        expect_code("MaxUnpool3dBackward stride of 2 values", aclnnMaxUnpool3dBackwardGetWorkspaceSize(g.t, x.t, i.t, s, t2, pa, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("MaxUnpool3dBackward null padding", aclnnMaxUnpool3dBackwardGetWorkspaceSize(g.t, x.t, i.t, s, sa, nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        Dev i32 = make({1, 2, 1, 2, 2}, ACL_INT32, I);
        expect_code("MaxUnpool3dBackward int32 indices", aclnnMaxUnpool3dBackwardGetWorkspaceSize(g.t, x.t, i32.t, s, sa, pa, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (aclIntArray *a : {s, sa, pa, t2}) aclDestroyIntArray(a);
        for (Dev *p : {&g, &x, &i, &o, &i32}) release(*p);
    }
    printf("ok max unpool backward\n");
}

static void gather_scatter() {
    /* GatherV3, batchDims 0: self [3, 4], dim 1, index [2, 2] -> [3, 2, 2] */
    {
        std::vector<double> X = values(12, ACL_FLOAT, 31), I = {3, 0, 1, 1};
        Dev x = make({3, 4}, ACL_FLOAT, X, TRANSPOSED), i = make({2, 2}, ACL_INT64, I), o = make({3, 2, 2}, ACL_FLOAT, {0});
        RUN(S, aclnnGatherV3, x.t, 1, i.t, 0, 0, o.t);
        std::vector<double> want;
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 4; k++) want.push_back(X[r * 4 + (int)I[k]]);
        compare("GatherV3 batchDims 0 dim 1", read(o), want, 0);
        release(x);
        release(i);
        release(o);
    }
    /* batchDims 1: self [2, 3, 2] int32, dim 1, index [2, 2] int32 -> [2, 2, 2] */
    {
        std::vector<double> X = values(12, ACL_INT32, 32), I = {2, 0, 1, 1};
        Dev x = make({2, 3, 2}, ACL_INT32, X), i = make({2, 2}, ACL_INT32, I), o = make({2, 2, 2}, ACL_INT32, {0});
        RUN(S, aclnnGatherV3, x.t, -2, i.t, 1, 1, o.t);
        std::vector<double> want;
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < 2; k++)
                for (int j = 0; j < 2; j++) want.push_back(X[(b * 3 + (int)I[b * 2 + k]) * 2 + j]);
        compare("GatherV3 batchDims 1 dim -2", read(o), want, 0);
        Dev o2 = make({2, 2, 3}, ACL_INT32, {0}), of = make({2, 2, 2}, ACL_FLOAT, {0});
        expect_code("GatherV3 null index", aclnnGatherV3GetWorkspaceSize(x.t, 1, nullptr, 1, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GatherV3 batchDims 2 above dim 1", aclnnGatherV3GetWorkspaceSize(x.t, 1, i.t, 2, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GatherV3 dim 3", aclnnGatherV3GetWorkspaceSize(x.t, 3, i.t, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("GatherV3 mode 3", aclnnGatherV3GetWorkspaceSize(x.t, 1, i.t, 1, 3, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("GatherV3 wrong out shape", aclnnGatherV3GetWorkspaceSize(x.t, 1, i.t, 1, 0, o2.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GatherV3 float out of int32 self", aclnnGatherV3GetWorkspaceSize(x.t, 1, i.t, 1, 0, of.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *p : {&x, &i, &o, &o2, &of}) release(*p);
    }
    /* ScatterNdUpdate: var [4, 3], indices [2, 1] -> rows; var [2, 3] with indices [2, 2] -> elements */
    {
        std::vector<double> V = values(12, ACL_FLOAT, 33), U = values(6, ACL_FLOAT, 34);
        Dev v = make({4, 3}, ACL_FLOAT, V), i = make({2, 1}, ACL_INT64, {3, 1}), u = make({2, 3}, ACL_FLOAT, U);
        RUN(S, aclnnScatterNdUpdate, v.t, i.t, u.t);
        std::vector<double> want(V);
        for (int j = 0; j < 3; j++) {
            want[9 + j] = U[j];
            want[3 + j] = U[3 + j];
        }
        compare("ScatterNdUpdate rows", read(v), want, 0);
        Dev v2 = make({2, 3}, ACL_INT64, {0}), i2 = make({2, 2}, ACL_INT32, {1, 2, 0, 0}), u2 = make({2}, ACL_INT64, {7, -9});
        RUN(S, aclnnScatterNdUpdate, v2.t, i2.t, u2.t);
        compare("ScatterNdUpdate elements int64", read(v2), {-9, 0, 0, 0, 0, 7}, 0);
        Dev ub = make({3, 3}, ACL_FLOAT, {0}), uh = make({2, 3}, ACL_FLOAT16, {0});
        expect_code("ScatterNdUpdate null updates", aclnnScatterNdUpdateGetWorkspaceSize(v.t, i.t, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("ScatterNdUpdate updates [3, 3]", aclnnScatterNdUpdateGetWorkspaceSize(v.t, i.t, ub.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScatterNdUpdate float16 updates", aclnnScatterNdUpdateGetWorkspaceSize(v.t, i.t, uh.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *p : {&v, &i, &u, &v2, &i2, &u2, &ub, &uh}) release(*p);
    }
    /* TfScatterAdd: rows (updates = indices.shape + var.shape[1:]) with a repeat, and nd form */
    for (aclDataType t : {ACL_FLOAT, ACL_INT32}) {
        std::vector<double> V = values(8, t, 35), U = values(6, t, 36);
        Dev v = make({4, 2}, t, V), i = make({3}, ACL_INT32, {1, 3, 1}), u = make({3, 2}, t, U);
        RUN(S, aclnnTfScatterAdd, v.t, i.t, u.t);
        std::vector<double> want(V);
        int rows[3] = {1, 3, 1};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 2; j++) want[rows[k] * 2 + j] += U[k * 2 + j];
        compare(t == ACL_FLOAT ? "TfScatterAdd rows float" : "TfScatterAdd rows int32", read(v), as(want, t), tol_of(t));
        release(v);
        release(i);
        release(u);
    }
    {
        Dev v = make({2, 2}, ACL_FLOAT, {1, 2, 3, 4}), i = make({3, 2}, ACL_INT64, {0, 1, 1, 0, 0, 1}), u = make({3}, ACL_FLOAT, {10, 20, 30});
        RUN(S, aclnnTfScatterAdd, v.t, i.t, u.t);
        compare("TfScatterAdd nd", read(v), {1, 42, 23, 4}, 0);
        /* an index outside varRef is skipped (CANN's ScatterAdd / ScatterNdAdd kernels) */
        Dev io = make({3}, ACL_INT64, {9, -1, 1}), uo = make({3, 2}, ACL_FLOAT, {100, 200, 300, 400, 5, 6});
        RUN(S, aclnnTfScatterAdd, v.t, io.t, uo.t);
        compare("TfScatterAdd skips indices 9 and -1", read(v), {1, 42, 28, 10}, 0);
        release(io);
        release(uo);
        Dev ub = make({2}, ACL_FLOAT, {0}), vd = make({2, 2}, ACL_DOUBLE, {0});
        expect_code("TfScatterAdd updates [2] for indices [3, 2]", aclnnTfScatterAddGetWorkspaceSize(v.t, i.t, ub.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("TfScatterAdd double varRef", aclnnTfScatterAddGetWorkspaceSize(vd.t, i.t, vd.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("TfScatterAdd null varRef", aclnnTfScatterAddGetWorkspaceSize(nullptr, i.t, u.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        for (Dev *p : {&v, &i, &u, &ub, &vd}) release(*p);
    }
    /* ScatterList: two var tensors [3, 4]; updates [2, 2, 4], axis -2 */
    {
        Dev v0 = make({3, 4}, ACL_FLOAT, {0}), v1 = make({3, 4}, ACL_FLOAT, {0});
        std::vector<double> U = values(16, ACL_FLOAT, 37);
        Dev u = make({2, 2, 4}, ACL_FLOAT, U), i1 = make({2}, ACL_INT64, {1, 0}), i2 = make({2, 2}, ACL_INT32, {0, 1, 2, 5});
        aclTensor *vs[2] = {v0.t, v1.t};
        aclTensorList *vl = aclCreateTensorList(vs, 2);
        char upd[] = "update";
        RUN(S, aclnnScatterList, vl, i1.t, u.t, nullptr, upd, -2);
        std::vector<double> w0(12, 0), w1(12, 0);
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 4; j++) {
                w0[(1 + r) * 4 + j] = U[r * 4 + j];
                w1[r * 4 + j] = U[8 + r * 4 + j];
            }
        compare("ScatterList 1-D indice tensor 0", read(v0), w0, 0);
        compare("ScatterList 1-D indice tensor 1", read(v1), w1, 0);
        /* (start, len) pairs; the mask skips tensor 0; len 5 is capped at updates' 2 rows... */
        Dev m = make({2}, ACL_UINT8, {0, 1});
        Dev i3 = make({2, 2}, ACL_INT32, {0, 1, 1, 5});
        RUN(S, aclnnScatterList, vl, i3.t, u.t, m.t, nullptr, 1);
        std::vector<double> w1b(w1);
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 4; j++) w1b[(1 + r) * 4 + j] = U[8 + r * 4 + j];
        compare("ScatterList masked tensor 0 unchanged", read(v0), w0, 0);
        compare("ScatterList pairs tensor 1", read(v1), w1b, 0);
        char sum[] = "add";
        Dev ub = make({2, 4, 4}, ACL_FLOAT, {0}), ui = make({2, 2, 4}, ACL_INT32, {0});
        expect_code("ScatterList reduce \"add\"", aclnnScatterListGetWorkspaceSize(vl, i1.t, u.t, nullptr, sum, -2, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScatterList axis 0", aclnnScatterListGetWorkspaceSize(vl, i1.t, u.t, nullptr, nullptr, 0, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScatterList updates wider than varRef", aclnnScatterListGetWorkspaceSize(vl, i1.t, ub.t, nullptr, nullptr, -2, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScatterList int32 updates for float varRef", aclnnScatterListGetWorkspaceSize(vl, i1.t, ui.t, nullptr, nullptr, -2, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScatterList null indice", aclnnScatterListGetWorkspaceSize(vl, nullptr, u.t, nullptr, nullptr, -2, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyTensorList(vl);
        for (Dev *p : {&u, &i1, &i2, &m, &i3, &ub, &ui}) release(*p);
        v0.t = v1.t = nullptr; /* destroyed with the list */
        aclrtFree(v0.mem);
        aclrtFree(v1.mem);
    }
    printf("ok gather scatter\n");
}

/* ---- matrix products ---- */

static void products() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                int64_t M = 3, K = 4, N = 5;
                std::vector<double> A = values(M * K, t, 41), B = values(K * N, t, 42), C = values(N, t, 43);
                Dev a = make(ta ? Shape{K, M} : Shape{M, K}, t, A), b = make(tb ? Shape{N, K} : Shape{K, N}, t, B, STRIDED);
                Dev c = make({1, N}, t, C), o = make({M, N}, t, {0});
                RUN(S, aclnnGemm, a.t, b.t, c.t, 0.5f, 2.0f, ta, tb, o.t, 0);
                std::vector<double> want(M * N);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double s = 0;
                        for (int64_t k = 0; k < K; k++)
                            s += (ta ? A[k * M + i] : A[i * K + k]) * (tb ? B[j * K + k] : B[k * N + j]);
                        want[i * N + j] = as_type(0.5 * s + 2.0 * C[j], t);
                    }
                char what[64];
                snprintf(what, sizeof what, "Gemm %s transA %d transB %d", dname(t), ta, tb);
                compare(what, read(o), want, t == ACL_FLOAT ? 1e-5 : 4e-3);
                release(a);
                release(b);
                release(c);
                release(o);
            }
    }
    {
        Dev a = make({3, 4}, ACL_FLOAT, {1}), b = make({5, 5}, ACL_FLOAT, {1}), c = make({3, 5}, ACL_FLOAT, {1}),
            o = make({3, 5}, ACL_FLOAT, {0}), i = make({3, 4}, ACL_INT32, {1}), a3 = make({1, 3, 4}, ACL_FLOAT, {1});
        Dev b4 = make({4, 5}, ACL_FLOAT, {1}), c2 = make({2, 5}, ACL_FLOAT, {1});
        expect_code("Gemm null C", aclnnGemmGetWorkspaceSize(a.t, b4.t, nullptr, 1, 1, 0, 0, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        expect_code("Gemm inner sizes 4 and 5", aclnnGemmGetWorkspaceSize(a.t, b.t, c.t, 1, 1, 0, 0, o.t, 0, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("Gemm int32 A", aclnnGemmGetWorkspaceSize(i.t, b4.t, c.t, 1, 1, 0, 0, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Gemm 3-D A", aclnnGemmGetWorkspaceSize(a3.t, b4.t, c.t, 1, 1, 0, 0, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Gemm C [2, 5]", aclnnGemmGetWorkspaceSize(a.t, b4.t, c2.t, 1, 1, 0, 0, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Gemm cubeMathType 9", aclnnGemmGetWorkspaceSize(a.t, b4.t, c.t, 1, 1, 0, 0, o.t, 9, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *p : {&a, &b, &c, &o, &i, &a3, &b4, &c2}) release(*p);
    }
    /* TransposeBatchMatMul: x1 [M, B, K] with permX1 (1, 0, 2), x2 [B, N, K] with (0, 2, 1) */
    for (int split : {1, 2}) {
        int64_t B = 4, M = 2, K = 3, N = 5;
        std::vector<double> X1 = values(M * B * K, ACL_FLOAT, 44), X2 = values(B * N * K, ACL_FLOAT, 45);
        Dev a = make({M, B, K}, ACL_FLOAT, X1), b = make({B, N, K}, ACL_FLOAT, X2);
        Shape os = split == 1 ? Shape{M, B, N} : Shape{split, M, B * N / split};
        Dev o = make(os, ACL_FLOAT, {0});
        std::vector<int64_t> p1{1, 0, 2}, p2{0, 2, 1}, py{1, 0, 2};
        aclIntArray *q1 = aclCreateIntArray(p1.data(), 3), *q2 = aclCreateIntArray(p2.data(), 3), *qy = aclCreateIntArray(py.data(), 3);
        RUN(S, aclnnTransposeBatchMatMul, a.t, b.t, nullptr, nullptr, q1, q2, qy, 0, split, o.t);
        std::vector<double> want(M * B * N);
        int64_t per = B / split;
        for (int64_t bi = 0; bi < B; bi++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++) {
                    double s = 0;
                    for (int64_t k = 0; k < K; k++) s += X1[(m * B + bi) * K + k] * X2[(bi * N + n) * K + k];
                    int64_t at = split == 1 ? (m * B + bi) * N + n
                                            : ((bi / per) * M + m) * (per * N) + (bi % per) * N + n;
                    want[at] = as_type(s, ACL_FLOAT);
                }
        compare(split == 1 ? "TransposeBatchMatMul [M, B, N]" : "TransposeBatchMatMul batchSplitFactor 2", read(o), want, 1e-5);
        if (split == 1) {
            std::vector<int64_t> bad{0, 1, 2};
            aclIntArray *qb = aclCreateIntArray(bad.data(), 3);
            expect_code("TransposeBatchMatMul permY (0, 1, 2)",
                        aclnnTransposeBatchMatMulGetWorkspaceSize(a.t, b.t, nullptr, nullptr, q1, q2, qb, 0, 1, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("TransposeBatchMatMul batchSplitFactor 3",
                        aclnnTransposeBatchMatMulGetWorkspaceSize(a.t, b.t, nullptr, nullptr, q1, q2, qy, 0, 3, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("TransposeBatchMatMul null x2",
                        aclnnTransposeBatchMatMulGetWorkspaceSize(a.t, nullptr, nullptr, nullptr, q1, q2, qy, 0, 1, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("TransposeBatchMatMul permX2 (0, 1, 2) for x2 [B, N, K]",
                        aclnnTransposeBatchMatMulGetWorkspaceSize(a.t, b.t, nullptr, nullptr, q1, qb, qy, 0, 1, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            aclDestroyIntArray(qb);
        }
        for (aclIntArray *q : {q1, q2, qy}) aclDestroyIntArray(q);
        release(a);
        release(b);
        release(o);
    }
    printf("ok products\n");
}

/* ---- batch and group norm ---- */

static void norms() {
    /* BatchNormReduce: x [2, 3, 2, 2] float16 */
    {
        std::vector<double> X = values(24, ACL_FLOAT16, 51);
        Dev x = make({2, 3, 2, 2}, ACL_FLOAT16, X, STRIDED), s = make({3}, ACL_FLOAT, {0}), q = make({3}, ACL_FLOAT, {0});
        RUN(S, aclnnBatchNormReduce, x.t, s.t, q.t);
        std::vector<double> ws_(3, 0), wq(3, 0);
        for (int n = 0; n < 2; n++)
            for (int c = 0; c < 3; c++)
                for (int k = 0; k < 4; k++) {
                    double v = X[(n * 3 + c) * 4 + k];
                    ws_[c] += v;
                    wq[c] += v * v;
                }
        compare("BatchNormReduce sum", read(s), as(ws_, ACL_FLOAT), 1e-6);
        compare("BatchNormReduce squareSum", read(q), as(wq, ACL_FLOAT), 1e-6);
        Dev x3 = make({2, 3, 4}, ACL_FLOAT, {1}), s2 = make({2}, ACL_FLOAT, {0}), sh = make({3}, ACL_FLOAT16, {0});
        expect_code("BatchNormReduce null sum", aclnnBatchNormReduceGetWorkspaceSize(x.t, nullptr, q.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        expect_code("BatchNormReduce 3-D x", aclnnBatchNormReduceGetWorkspaceSize(x3.t, s.t, q.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("BatchNormReduce sum of 2", aclnnBatchNormReduceGetWorkspaceSize(x.t, s2.t, q.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("BatchNormReduce float16 sum", aclnnBatchNormReduceGetWorkspaceSize(x.t, sh.t, q.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        for (Dev *p : {&x, &s, &q, &x3, &s2, &sh}) release(*p);
    }
    /* SyncBatchNormGatherStats: 2 devices, 3 channels */
    {
        std::vector<double> SUM = {4, 8, -2, 6, 0, 1}, SQ = {20, 40, 9, 30, 10, 5}, CNT = {4, 6}, RM = {0.5, -1, 2}, RV = {1, 2, 0.5};
        Dev s = make({2, 3}, ACL_FLOAT, SUM), q = make({2, 3}, ACL_FLOAT, SQ), n = make({2}, ACL_INT32, CNT);
        Dev m = make({3}, ACL_FLOAT, RM), v = make({3}, ACL_FLOAT, RV), bm = make({3}, ACL_FLOAT, {0}), bi = make({3}, ACL_FLOAT, {0});
        float mom = 0.1f, eps = 1e-5f;
        RUN(S, aclnnSyncBatchNormGatherStats, s.t, q.t, n.t, m.t, v.t, mom, eps, bm.t, bi.t);
        std::vector<double> wm(3), wi(3), wrm(3), wrv(3);
        double N = 10;
        for (int c = 0; c < 3; c++) {
            double mean = (SUM[c] + SUM[3 + c]) / N, var = (SQ[c] + SQ[3 + c]) / N - mean * mean;
            wm[c] = mean;
            wi[c] = 1 / std::sqrt(var + (double)eps);
            wrm[c] = RM[c] * (1 - (double)mom) + (double)mom * mean;
            wrv[c] = RV[c] * (1 - (double)mom) + (double)mom * var * N / (N - 1);
        }
        compare("SyncBatchNormGatherStats batchMean", read(bm), as(wm, ACL_FLOAT), 1e-5);
        compare("SyncBatchNormGatherStats batchInvstd", read(bi), as(wi, ACL_FLOAT), 1e-5);
        compare("SyncBatchNormGatherStats running mean", read(m), as(wrm, ACL_FLOAT), 1e-5);
        compare("SyncBatchNormGatherStats running var", read(v), as(wrv, ACL_FLOAT), 1e-5);
        Dev n3 = make({3}, ACL_INT32, {1}), sh = make({2, 3}, ACL_FLOAT16, {1}), nd = make({2}, ACL_DOUBLE, {1});
        expect_code("SyncBatchNormGatherStats null batchMean",
                    aclnnSyncBatchNormGatherStatsGetWorkspaceSize(s.t, q.t, n.t, m.t, v.t, mom, eps, nullptr, bi.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("SyncBatchNormGatherStats sampleCount of 3",
                    aclnnSyncBatchNormGatherStatsGetWorkspaceSize(s.t, q.t, n3.t, m.t, v.t, mom, eps, bm.t, bi.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("SyncBatchNormGatherStats float16 totalSquareSum",
                    aclnnSyncBatchNormGatherStatsGetWorkspaceSize(s.t, sh.t, n.t, m.t, v.t, mom, eps, bm.t, bi.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("SyncBatchNormGatherStats double sampleCount",
                    aclnnSyncBatchNormGatherStatsGetWorkspaceSize(s.t, q.t, nd.t, m.t, v.t, mom, eps, bm.t, bi.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *p : {&s, &q, &n, &m, &v, &bm, &bi, &n3, &sh, &nd}) release(*p);
    }
    /* FastBatchNormBackward (training): x [3, 2, 2], reference from the documented formula */
    {
        int N = 3, C = 2, L = 2, cnt = N * L;
        std::vector<double> X = values(12, ACL_FLOAT, 52), G = values(12, ACL_FLOAT, 53), W = {1.5, -0.5};
        std::vector<double> mean(C, 0), inv(C, 0);
        for (int c = 0; c < C; c++) {
            double s = 0, q = 0;
            for (int n = 0; n < N; n++)
                for (int l = 0; l < L; l++) s += X[(n * C + c) * L + l];
            mean[c] = s / cnt;
            for (int n = 0; n < N; n++)
                for (int l = 0; l < L; l++) q += std::pow(X[(n * C + c) * L + l] - mean[c], 2);
            inv[c] = 1 / std::sqrt(q / cnt + 1e-5);
        }
        Dev g = make({N, C, L}, ACL_FLOAT, G), x = make({N, C, L}, ACL_FLOAT, X), w = make({C}, ACL_FLOAT, W);
        Dev rm = make({C}, ACL_FLOAT, {0}), rv = make({C}, ACL_FLOAT, {1}), sm = make({C}, ACL_FLOAT, as(mean, ACL_FLOAT)),
            si = make({C}, ACL_FLOAT, as(inv, ACL_FLOAT));
        Dev gi = make({N, C, L}, ACL_FLOAT, {0}), gw = make({C}, ACL_FLOAT, {0}), gb = make({C}, ACL_FLOAT, {0});
        bool mk[3] = {true, true, true};
        aclBoolArray *mask = aclCreateBoolArray(mk, 3);
        RUN(S, aclnnFastBatchNormBackward, g.t, x.t, w.t, rm.t, rv.t, sm.t, si.t, true, 1e-5, mask, 0, gi.t, gw.t, gb.t);
        std::vector<double> wgi(12), wgw(C, 0), wgb(C, 0);
        for (int c = 0; c < C; c++) {
            double sg = 0, sgx = 0;
            double m_ = as_type(mean[c], ACL_FLOAT), r_ = as_type(inv[c], ACL_FLOAT);
            for (int n = 0; n < N; n++)
                for (int l = 0; l < L; l++) {
                    int i = (n * C + c) * L + l;
                    sg += G[i];
                    sgx += G[i] * (X[i] - m_) * r_;
                }
            wgb[c] = sg;
            wgw[c] = sgx;
            for (int n = 0; n < N; n++)
                for (int l = 0; l < L; l++) {
                    int i = (n * C + c) * L + l;
                    double xh = (X[i] - m_) * r_;
                    wgi[i] = W[c] * r_ / cnt * (cnt * G[i] - sg - xh * sgx);
                }
        }
        compare("FastBatchNormBackward gradInput", read(gi), as(wgi, ACL_FLOAT), 1e-4);
        compare("FastBatchNormBackward gradWeight", read(gw), as(wgw, ACL_FLOAT), 1e-4);
        compare("FastBatchNormBackward gradBias", read(gb), as(wgb, ACL_FLOAT), 1e-4);
        expect_code("FastBatchNormBackward version 2",
                    aclnnFastBatchNormBackwardGetWorkspaceSize(g.t, x.t, w.t, rm.t, rv.t, sm.t, si.t, true, 1e-5, mask, 2, gi.t, gw.t,
                                                               gb.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("FastBatchNormBackward null gradInput with outputMask[0]",
                    aclnnFastBatchNormBackwardGetWorkspaceSize(g.t, x.t, w.t, rm.t, rv.t, sm.t, si.t, true, 1e-5, mask, 1, nullptr, gw.t,
                                                               gb.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyBoolArray(mask);
        for (Dev *p : {&g, &x, &w, &rm, &rv, &sm, &si, &gi, &gw, &gb}) release(*p);
    }
    /* GroupNormSwish (+Grad): x [2, 4, 3], 2 groups, swishScale 1.5 */
    {
        const int N = 2, C = 4, L = 3, G_ = 2, cg = C / G_;
        const double eps = 1e-5, sc = 1.5;
        std::vector<double> X = values(N * C * L, ACL_FLOAT, 54), GA = {1.2, 0.8, -0.5, 1.0}, BE = {0.1, -0.2, 0.3, 0.0};
        std::vector<double> DY = values(N * C * L, ACL_FLOAT, 55);
        /* host forward in double: y(x, gamma, beta) with swish, plus mean and rstd */
        auto forward = [&](const std::vector<double> &x, const std::vector<double> &ga, const std::vector<double> &be,
                           std::vector<double> *mean, std::vector<double> *rstd) {
            std::vector<double> y(x.size());
            for (int n = 0; n < N; n++)
                for (int g = 0; g < G_; g++) {
                    int lo = (n * C + g * cg) * L, m = cg * L;
                    double mu = 0, var = 0;
                    for (int k = 0; k < m; k++) mu += x[lo + k];
                    mu /= m;
                    for (int k = 0; k < m; k++) var += (x[lo + k] - mu) * (x[lo + k] - mu);
                    double r = 1 / std::sqrt(var / m + eps);
                    if (mean) (*mean)[n * G_ + g] = mu;
                    if (rstd) (*rstd)[n * G_ + g] = r;
                    for (int k = 0; k < m; k++) {
                        int c = g * cg + k / L;
                        double v = (x[lo + k] - mu) * r * ga[c] + be[c];
                        y[lo + k] = v / (1 + std::exp(-sc * v));
                    }
                }
            return y;
        };
        std::vector<double> wm(N * G_), wr(N * G_);
        std::vector<double> wy = forward(X, GA, BE, &wm, &wr);
        Dev x = make({N, C, L}, ACL_FLOAT, X, STRIDED), ga = make({C}, ACL_FLOAT, GA), be = make({C}, ACL_FLOAT, BE);
        Dev y = make({N, C, L}, ACL_FLOAT, {0}), m = make({N, G_}, ACL_FLOAT, {0}), r = make({N, G_}, ACL_FLOAT, {0});
        char fmt[] = "NCHW";
        RUN(S, aclnnGroupNormSwish, x.t, ga.t, be.t, G_, fmt, eps, true, sc, y.t, m.t, r.t);
        compare("GroupNormSwish yOut", read(y), as(wy, ACL_FLOAT), 1e-5);
        compare("GroupNormSwish meanOut", read(m), as(wm, ACL_FLOAT), 1e-5);
        compare("GroupNormSwish rstdOut", read(r), as(wr, ACL_FLOAT), 1e-5);
        /* gradient: central differences of sum(dy * y) */
        auto loss = [&](const std::vector<double> &x_, const std::vector<double> &g_, const std::vector<double> &b_) {
            std::vector<double> yy = forward(x_, g_, b_, nullptr, nullptr);
            double s = 0;
            for (size_t i = 0; i < yy.size(); i++) s += DY[i] * yy[i];
            return s;
        };
        const double h = 1e-6;
        std::vector<double> wdx(X.size()), wdg(C), wdb(C);
        for (size_t i = 0; i < X.size(); i++) {
            std::vector<double> a(X), b(X);
            a[i] += h;
            b[i] -= h;
            wdx[i] = (loss(a, GA, BE) - loss(b, GA, BE)) / (2 * h);
        }
        for (int c = 0; c < C; c++) {
            std::vector<double> a(GA), b(GA);
            a[c] += h;
            b[c] -= h;
            wdg[c] = (loss(X, a, BE) - loss(X, b, BE)) / (2 * h);
            std::vector<double> a2(BE), b2(BE);
            a2[c] += h;
            b2[c] -= h;
            wdb[c] = (loss(X, GA, a2) - loss(X, GA, b2)) / (2 * h);
        }
        Dev dy = make({N, C, L}, ACL_FLOAT, DY), dx = make({N, C, L}, ACL_FLOAT, {0}), dg = make({C}, ACL_FLOAT, {0}),
            db = make({C}, ACL_FLOAT, {9});
        RUN(S, aclnnGroupNormSwishGrad, dy.t, m.t, r.t, x.t, ga.t, be.t, G_, fmt, sc, true, true, dx.t, dg.t, db.t);
        compare("GroupNormSwishGrad dx", read(dx), wdx, 1e-4);
        compare("GroupNormSwishGrad dgamma", read(dg), wdg, 1e-4);
        compare("GroupNormSwishGrad dbeta", read(db), wdb, 1e-4);
        /* dbetaIsRequire false leaves dbetaOut alone */
        Dev db2 = make({C}, ACL_FLOAT, {9});
        RUN(S, aclnnGroupNormSwishGrad, dy.t, m.t, r.t, x.t, ga.t, be.t, G_, nullptr, sc, true, false, dx.t, dg.t, db2.t);
        compare("GroupNormSwishGrad dbetaIsRequire false", read(db2), {9, 9, 9, 9}, 0);
        /* errors */
        Dev g3 = make({3}, ACL_FLOAT, {1}), mh = make({N, G_}, ACL_FLOAT16, {0}), xi = make({N, C, L}, ACL_INT32, {0});
        expect_code("GroupNormSwish numGroups 3 for 4 channels",
                    aclnnGroupNormSwishGetWorkspaceSize(x.t, ga.t, be.t, 3, nullptr, eps, true, sc, y.t, m.t, r.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupNormSwish gamma of 3", aclnnGroupNormSwishGetWorkspaceSize(x.t, g3.t, be.t, G_, nullptr, eps, true, sc, y.t, m.t, r.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupNormSwish null beta", aclnnGroupNormSwishGetWorkspaceSize(x.t, ga.t, nullptr, G_, nullptr, eps, true, sc, y.t, m.t, r.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GroupNormSwish int32 x", aclnnGroupNormSwishGetWorkspaceSize(xi.t, ga.t, be.t, G_, nullptr, eps, true, sc, xi.t, m.t, r.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupNormSwishGrad float16 mean",
                    aclnnGroupNormSwishGradGetWorkspaceSize(dy.t, mh.t, r.t, x.t, ga.t, be.t, G_, nullptr, sc, true, true, dx.t, dg.t, db.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupNormSwishGrad null dxOut",
                    aclnnGroupNormSwishGradGetWorkspaceSize(dy.t, m.t, r.t, x.t, ga.t, be.t, G_, nullptr, sc, true, true, nullptr, dg.t, db.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        for (Dev *p : {&x, &ga, &be, &y, &m, &r, &dy, &dx, &dg, &db, &db2, &g3, &mh, &xi}) release(*p);
    }
    printf("ok norms\n");
}

/* ---- rounding, chamfer ---- */

static void misc() {
    std::vector<double> X = {1.5, 2.5, -1.5, -2.7, 3.2, -0.4, 0.5, 7.0};
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        for (int mode = 1; mode <= 7; mode++) {
            Dev a = make({2, 2}, t, std::vector<double>(X.begin(), X.begin() + 4)), b = make({4}, t, std::vector<double>(X.begin() + 4, X.end()));
            Dev oa = make({2, 2}, t, {0}), ob = make({4}, t, {0});
            aclTensor *xs[2] = {a.t, b.t}, *os[2] = {oa.t, ob.t};
            aclTensorList *xl = aclCreateTensorList(xs, 2), *ol = aclCreateTensorList(os, 2);
            int8_t m8 = static_cast<int8_t>(mode);
            if (mode % 2) {
                aclScalar *ms = aclCreateScalar(&m8, ACL_INT8);
                RUN(S, aclnnForeachRoundOffNumberV2, xl, ms, ol);
                aclDestroyScalar(ms);
            } else {
                Dev mt = make({1}, ACL_INT8, {static_cast<double>(mode)});
                RUN(S, aclnnForeachRoundOffNumber, xl, mt.t, ol);
                release(mt);
            }
            std::vector<double> got = read(oa), got2 = read(ob);
            got.insert(got.end(), got2.begin(), got2.end());
            std::vector<double> want;
            for (double v0 : X) {
                double v = as_type(v0, t);
                double w = mode == 1 || mode == 6 ? std::nearbyint(v)
                           : mode == 2           ? std::floor(v)
                           : mode == 3           ? std::ceil(v)
                           : mode == 4           ? std::round(v)
                           : mode == 5           ? std::trunc(v)
                                                 : v - std::trunc(v);
                want.push_back(as_type(w, t));
            }
            char what[64];
            snprintf(what, sizeof what, "ForeachRoundOffNumber%s %s mode %d", mode % 2 ? "V2" : "", dname(t), mode);
            compare(what, got, want, 0);
            /* lists are destroyed with their tensors */
            aclDestroyTensorList(xl);
            aclDestroyTensorList(ol);
            for (Dev *p : {&a, &b, &oa, &ob}) {
                aclrtFree(p->mem);
                p->t = nullptr;
            }
        }
    }
    {
        Dev a = make({3}, ACL_INT16, {5, -7, 12}), oa = make({3}, ACL_INT16, {0}), od = make({3}, ACL_FLOAT, {0}), m2 = make({2}, ACL_INT8, {1, 1});
        aclTensor *xs[1] = {a.t}, *os[1] = {oa.t}, *osd[1] = {od.t};
        aclTensorList *xl = aclCreateTensorList(xs, 1), *ol = aclCreateTensorList(os, 1), *old = aclCreateTensorList(osd, 1);
        int8_t m8 = 2;
        aclScalar *ms = aclCreateScalar(&m8, ACL_INT8);
        RUN(S, aclnnForeachRoundOffNumberV2, xl, ms, ol);
        compare("ForeachRoundOffNumberV2 int16 unchanged", read(oa), {5, -7, 12}, 0);
        float f = 1;
        aclScalar *mf = aclCreateScalar(&f, ACL_FLOAT);
        expect_code("ForeachRoundOffNumberV2 float roundMode", aclnnForeachRoundOffNumberV2GetWorkspaceSize(xl, mf, ol, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ForeachRoundOffNumberV2 float out of int16 x", aclnnForeachRoundOffNumberV2GetWorkspaceSize(xl, ms, old, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ForeachRoundOffNumber roundMode of 2 elements", aclnnForeachRoundOffNumberGetWorkspaceSize(xl, m2.t, ol, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ForeachRoundOffNumber null roundMode", aclnnForeachRoundOffNumberGetWorkspaceSize(xl, nullptr, ol, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyScalar(ms);
        aclDestroyScalar(mf);
        aclDestroyTensorList(xl);
        aclDestroyTensorList(ol);
        aclDestroyTensorList(old);
        aclrtFree(a.mem);
        aclrtFree(oa.mem);
        aclrtFree(od.mem);
        release(m2);
    }
    /* ChamferDistanceBackward: B 1, N 3, M 2 */
    {
        std::vector<double> P1 = {0, 0, 1, 2, -1, 0.5}, P2 = {0.5, 0.5, -2, 1}, I1 = {0, 0, 1}, I2 = {0, 2}, G1 = {1, 0.5, -1}, G2 = {2, 0.25};
        Dev p1 = make({1, 3, 2}, ACL_FLOAT, P1), p2 = make({1, 2, 2}, ACL_FLOAT, P2), i1 = make({1, 3}, ACL_INT32, I1),
            i2 = make({1, 2}, ACL_INT32, I2), g1 = make({1, 3}, ACL_FLOAT, G1), g2 = make({1, 2}, ACL_FLOAT, G2);
        Dev o1 = make({1, 3, 2}, ACL_FLOAT, {7}), o2 = make({1, 2, 2}, ACL_FLOAT, {7});
        RUN(S, aclnnChamferDistanceBackward, p1.t, p2.t, i1.t, i2.t, g1.t, g2.t, o1.t, o2.t);
        std::vector<double> w1(6, 0), w2(4, 0);
        for (int i = 0; i < 3; i++) {
            int j = (int)I1[i];
            for (int k = 0; k < 2; k++) {
                double d = 2 * G1[i] * (P1[i * 2 + k] - P2[j * 2 + k]);
                w1[i * 2 + k] += d;
                w2[j * 2 + k] -= d;
            }
        }
        for (int j = 0; j < 2; j++) {
            int i = (int)I2[j];
            for (int k = 0; k < 2; k++) {
                double d = 2 * G2[j] * (P2[j * 2 + k] - P1[i * 2 + k]);
                w2[j * 2 + k] += d;
                w1[i * 2 + k] -= d;
            }
        }
        compare("ChamferDistanceBackward gradXyz1", read(o1), w1, 1e-6);
        compare("ChamferDistanceBackward gradXyz2", read(o2), w2, 1e-6);
        Dev i64 = make({1, 3}, ACL_INT64, I1), p3 = make({1, 3, 3}, ACL_FLOAT, {0});
        expect_code("ChamferDistanceBackward int64 idx1",
                    aclnnChamferDistanceBackwardGetWorkspaceSize(p1.t, p2.t, i64.t, i2.t, g1.t, g2.t, o1.t, o2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("ChamferDistanceBackward xyz1 [1, 3, 3]",
                    aclnnChamferDistanceBackwardGetWorkspaceSize(p3.t, p2.t, i1.t, i2.t, g1.t, g2.t, p3.t, o2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("ChamferDistanceBackward null gradDist2",
                    aclnnChamferDistanceBackwardGetWorkspaceSize(p1.t, p2.t, i1.t, i2.t, g1.t, nullptr, o1.t, o2.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        for (Dev *p : {&p1, &p2, &i1, &i2, &g1, &g2, &o1, &o2, &i64, &p3}) release(*p);
    }
    printf("ok misc\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    activations();
    softmaxes();
    pooling();
    unpool_backward();
    gather_scatter();
    products();
    norms();
    misc();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
