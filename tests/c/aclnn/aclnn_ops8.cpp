/* The operators torch_npu reaches for losses, cumulative extremes, creation, unique,
 * interpolation and random sampling, against host references (float64): L1Loss,
 * SmoothL1Loss, BinaryCrossEntropy, BinaryCrossEntropyWithLogits, KlDiv (each with its
 * backward), Cummax, Cummin, LogSpace, Eye, Unique, Unique2, UniqueConsecutive (output shape
 * read back with aclGetViewShape), UpsampleNearest1d/2d (+V2, Exact, backward),
 * UpsampleLinear1d, UpsampleBilinear2d (+backward), InplaceRandom, Randperm, Multinomial;
 * each family with argument errors. Tolerances: selection, indices and integer results
 * exactly; float32 losses to 1e-5 relative (float64 accumulation, one rounding); float16
 * to 1e-3. Inputs include transposed and strided views. */
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include "ops_ref.h"
#include "aclnnop/aclnn_l1_loss.h"
#include "aclnnop/aclnn_l1_loss_backward.h"
#include "aclnnop/aclnn_smooth_l1_loss.h"
#include "aclnnop/aclnn_smooth_l1_loss_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy.h"
#include "aclnnop/aclnn_binary_cross_entropy_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_kl_div.h"
#include "aclnnop/aclnn_kl_div_backward.h"
#include "aclnnop/aclnn_cummax.h"
#include "aclnnop/aclnn_cummin.h"
#include "aclnnop/aclnn_logspace.h"
#include "aclnnop/aclnn_eye.h"
#include "aclnnop/aclnn_histc.h"
#include "aclnnop/aclnn_bincount.h"
#include "aclnnop/aclnn_unique.h"
#include "aclnnop/aclnn_argsort.h"
#include "aclnnop/aclnn_searchsorted.h"
#include "aclnnop/aclnn_unique2.h"
#include "aclnnop/aclnn_unique_consecutive.h"
#include "aclnnop/aclnn_upsample_nearest_1d.h"
#include "aclnnop/aclnn_upsample_nearest_2d.h"
#include "aclnnop/aclnn_upsample_nearest_2d_v2.h"
#include "aclnnop/aclnn_upsample_nearest_2d_backward.h"
#include "aclnnop/aclnn_upsample_nearest_exact2d.h"
#include "aclnnop/aclnn_upsample_linear_1d.h"
#include "aclnnop/aclnn_upsample_bilinear_2d.h"
#include "aclnnop/aclnn_upsample_bilinear_2d_backward.h"
#include "aclnnop/aclnn_random.h"
#include "aclnnop/aclnn_randperm.h"
#include "aclnnop/aclnn_multinomial.h"

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

/* The view shape of `t` (aclGetViewShape, released with delete[] as CANN documents). */
static Shape view_shape(const aclTensor *t) {
    int64_t *dims = nullptr;
    uint64_t n = 0;
    CHECK(aclGetViewShape(t, &dims, &n));
    Shape s(dims, dims + n);
    delete[] dims;
    return s;
}

static void expect_shape(const char *what, const Shape &got, const Shape &want) {
    g_checks++;
    if (got != want) {
        printf("FAIL %s: shape has %zu dims (first %lld), expected %zu\n", what, got.size(),
               got.empty() ? -1LL : static_cast<long long>(got[0]), want.size());
        g_fail++;
    }
}

static double mean_or_sum(const std::vector<double> &l, int64_t red) {
    double s = 0;
    for (double v : l) s += v;
    return red == 1 ? s / l.size() : s;
}

static void losses() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int n = 12;
    std::vector<double> X = values(n, ACL_FLOAT, 1), T = values(n, ACL_FLOAT, 2);
    Dev x = make({3, 4}, ACL_FLOAT, X, TRANSPOSED), t = make({3, 4}, ACL_FLOAT, T, STRIDED);
    Dev none = make({3, 4}, ACL_FLOAT, {0}), sc = make({}, ACL_FLOAT, {0}), g = make({3, 4}, ACL_FLOAT, {0});
    Dev one = make({}, ACL_FLOAT, {1.0});
    /* L1: none, mean, sum; backward of mean */
    std::vector<double> l1(n), d1(n);
    for (int i = 0; i < n; i++) {
        double d = X[i] - T[i];
        l1[i] = std::fabs(d);
        d1[i] = (d > 0 ? 1 : d < 0 ? -1 : 0) / static_cast<double>(n);
    }
    RUN(S, aclnnL1Loss, x.t, t.t, 0, none.t);
    compare("L1Loss none (transposed self, strided target)", read(none), l1, 1e-6);
    RUN(S, aclnnL1Loss, x.t, t.t, 1, sc.t);
    compare("L1Loss mean", read(sc), {mean_or_sum(l1, 1)}, 1e-6);
    RUN(S, aclnnL1Loss, x.t, t.t, 2, sc.t);
    compare("L1Loss sum", read(sc), {mean_or_sum(l1, 2)}, 1e-6);
    RUN(S, aclnnL1LossBackward, one.t, x.t, t.t, 1, g.t);
    compare("L1LossBackward mean", read(g), d1, 1e-6);
    /* float16, broadcast target [4] */
    Dev xh = make({3, 4}, ACL_FLOAT16, X), th = make({4}, ACL_FLOAT16, T), oh = make({3, 4}, ACL_FLOAT16, {0});
    std::vector<double> lh(n);
    for (int i = 0; i < n; i++) lh[i] = std::fabs(as_type(X[i], ACL_FLOAT16) - as_type(T[i % 4], ACL_FLOAT16));
    RUN(S, aclnnL1Loss, xh.t, th.t, 0, oh.t);
    compare("L1Loss float16 with a broadcast target", read(oh), lh, 1e-3);
    expect_code("L1Loss reduction 3", aclnnL1LossGetWorkspaceSize(x.t, t.t, 3, sc.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("L1Loss none into a 0-d out", aclnnL1LossGetWorkspaceSize(x.t, t.t, 0, sc.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("L1Loss null target", aclnnL1LossGetWorkspaceSize(x.t, nullptr, 1, sc.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    Dev xi = make({3, 4}, ACL_INT32, {1});
    expect_code("L1Loss int32 self", aclnnL1LossGetWorkspaceSize(xi.t, t.t, 1, sc.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* SmoothL1 with beta 0.5: sum and backward of none */
    const double beta = 0.5;
    std::vector<double> ls(n), ds(n);
    for (int i = 0; i < n; i++) {
        double d = X[i] - T[i], a = std::fabs(d);
        ls[i] = a < beta ? 0.5 * d * d / beta : a - 0.5 * beta;
        ds[i] = a < beta ? d / beta : (d > 0 ? 1 : -1);
    }
    RUN(S, aclnnSmoothL1Loss, x.t, t.t, 2, 0.5f, sc.t);
    compare("SmoothL1Loss beta 0.5 sum", read(sc), {mean_or_sum(ls, 2)}, 1e-5);
    Dev gn = make({3, 4}, ACL_FLOAT, {1.0});
    RUN(S, aclnnSmoothL1LossBackward, gn.t, x.t, t.t, 0, 0.5f, g.t);
    compare("SmoothL1LossBackward none", read(g), ds, 1e-6);
    expect_code("SmoothL1Loss beta -1", aclnnSmoothL1LossGetWorkspaceSize(x.t, t.t, 1, -1.0f, sc.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* BCE on probabilities with a weight [4]; backward of mean */
    std::vector<double> P(n), Y(n), W = {0.5, 1, 1.5, 2};
    for (int i = 0; i < n; i++) {
        P[i] = 0.05 + 0.9 * (i % 7) / 6.0;
        Y[i] = (i * 5) % 3 == 0 ? 1 : 0;
    }
    Dev p = make({3, 4}, ACL_FLOAT, P), y = make({3, 4}, ACL_FLOAT, Y), w = make({4}, ACL_FLOAT, W);
    std::vector<double> lb(n), db(n);
    for (int i = 0; i < n; i++) {
        double pf = as_type(P[i], ACL_FLOAT);
        lb[i] = -W[i % 4] * (Y[i] * std::log(pf) + (1 - Y[i]) * std::log(1 - pf));
        db[i] = W[i % 4] * (pf - Y[i]) / ((1 - pf) * pf) / n;
    }
    RUN(S, aclnnBinaryCrossEntropy, p.t, y.t, w.t, 1, sc.t);
    compare("BinaryCrossEntropy weighted mean", read(sc), {mean_or_sum(lb, 1)}, 1e-5);
    RUN(S, aclnnBinaryCrossEntropyBackward, one.t, p.t, y.t, w.t, 1, g.t);
    compare("BinaryCrossEntropyBackward weighted mean", read(g), db, 1e-5);
    expect_code("BinaryCrossEntropy target of another shape",
                aclnnBinaryCrossEntropyGetWorkspaceSize(p.t, w.t, nullptr, 1, sc.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* self outside [0, 1] fails the task at the synchronisation */
    Dev bad = make({3, 4}, ACL_FLOAT, {1.5});
    NN(aclnnBinaryCrossEntropyGetWorkspaceSize(bad.t, y.t, nullptr, 1, sc.t, &ws, &ex));
    NN(aclnnBinaryCrossEntropy(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL BinaryCrossEntropy of 1.5 succeeded\n");
        g_fail++;
    }

    /* BCE with logits, posWeight [4], none; backward of sum */
    std::vector<double> lw(n), dw(n);
    for (int i = 0; i < n; i++) {
        double xf = as_type(X[i], ACL_FLOAT), pw = W[i % 4], s = 1 / (1 + std::exp(-xf));
        lw[i] = -(pw * Y[i] * std::log(s) + (1 - Y[i]) * std::log(1 - s));
        dw[i] = (pw * Y[i] + 1 - Y[i]) * s - pw * Y[i];
    }
    Dev xc = make({3, 4}, ACL_FLOAT, X);
    RUN(S, aclnnBinaryCrossEntropyWithLogits, xc.t, y.t, nullptr, w.t, 0, none.t);
    compare("BinaryCrossEntropyWithLogits posWeight none", read(none), lw, 1e-5);
    RUN(S, aclnnBinaryCrossEntropyWithLogitsBackward, one.t, xc.t, y.t, nullptr, w.t, 2, g.t);
    compare("BinaryCrossEntropyWithLogitsBackward posWeight sum", read(g), dw, 1e-5);

    /* KlDiv: log-probability input, probability target; sum and batchmean backward */
    std::vector<double> lq(n), Q(n), lk(n), dk(n);
    for (int i = 0; i < n; i++) {
        lq[i] = std::log(0.1 + (i % 5) * 0.2);
        Q[i] = i % 4 == 0 ? 0 : 0.05 * (i + 1);
        double lqf = as_type(lq[i], ACL_FLOAT), qf = as_type(Q[i], ACL_FLOAT);
        lk[i] = qf == 0 ? 0 : qf * (std::log(qf) - lqf);
        dk[i] = -qf / 3;
    }
    Dev kx = make({3, 4}, ACL_FLOAT, lq), kt = make({3, 4}, ACL_FLOAT, Q);
    RUN(S, aclnnKlDiv, kx.t, kt.t, 2, false, sc.t);
    compare("KlDiv sum", read(sc), {mean_or_sum(lk, 2)}, 1e-5);
    RUN(S, aclnnKlDivBackward, one.t, kx.t, kt.t, 3, false, g.t);
    compare("KlDivBackward batchmean", read(g), dk, 1e-6);
    expect_code("KlDivBackward reduction 4", aclnnKlDivBackwardGetWorkspaceSize(one.t, kx.t, kt.t, 4, false, g.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &t, &none, &sc, &g, &one, &xh, &th, &oh, &xi, &gn, &p, &y, &w, &bad, &xc, &kx, &kt}) release(*d);
    printf("ok losses\n");
}

static void scans() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Cummax / Cummin along dim 1 of [2, 5] with ties and a NaN */
    const double nan = std::nan("");
    std::vector<double> X = {1, 3, 3, 2, 5, 4, nan, 1, 9, 0};
    Dev x = make({2, 5}, ACL_FLOAT, X), v = make({2, 5}, ACL_FLOAT, {0}), i64 = make({2, 5}, ACL_INT64, {0});
    RUN(S, aclnnCummax, x.t, 1, v.t, i64.t);
    compare("Cummax values (ties, NaN wins)", read(v), {1, 3, 3, 3, 5, 4, nan, nan, nan, nan}, 0);
    compare("Cummax indices (ties take the later index)", read(i64), {0, 1, 2, 2, 4, 0, 1, 1, 1, 1}, 0);
    Dev i32 = make({2, 5}, ACL_INT32, {0});
    RUN(S, aclnnCummin, x.t, -1, v.t, i32.t);
    compare("Cummin values", read(v), {1, 1, 1, 1, 1, 4, nan, nan, nan, nan}, 0);
    compare("Cummin INT32 indices", read(i32), {0, 0, 0, 0, 0, 0, 1, 1, 1, 1}, 0);
    Dev xi = make({5, 2}, ACL_INT64, {4, 1, 2, 7, 2, 0, 5, 7, 1, 8}, TRANSPOSED), vi = make({5, 2}, ACL_INT64, {0}),
        ii = make({5, 2}, ACL_INT64, {0});
    RUN(S, aclnnCummin, xi.t, 0, vi.t, ii.t);
    /* xi (transposed) holds row-major values 4 1 2 7 2 0 5 7 1 8 as a [5, 2] */
    compare("Cummin INT64 of a transposed view, dim 0", read(vi), {4, 1, 2, 1, 2, 0, 2, 0, 1, 0}, 0);
    compare("Cummin INT64 indices", read(ii), {0, 0, 1, 0, 2, 2, 2, 2, 4, 2}, 0);
    expect_code("Cummax dim 2 of a 2-D self", aclnnCummaxGetWorkspaceSize(x.t, 2, v.t, i64.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev fi = make({2, 5}, ACL_FLOAT, {0});
    expect_code("Cummax float indices", aclnnCummaxGetWorkspaceSize(x.t, 0, v.t, fi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Cummin null valuesOut", aclnnCumminGetWorkspaceSize(x.t, 0, nullptr, i64.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);

    /* LogSpace 0..2, 5 steps, base 10 and base 2 (float16) */
    float s0 = 0, s1 = 2;
    aclScalar *st = aclCreateScalar(&s0, ACL_FLOAT), *en = aclCreateScalar(&s1, ACL_FLOAT);
    Dev ls = make({5}, ACL_FLOAT, {0}), lh = make({5}, ACL_FLOAT16, {0});
    RUN(S, aclnnLogSpace, st, en, 5, 10.0, ls.t);
    compare("LogSpace base 10", read(ls), {1, std::pow(10, 0.5), 10, std::pow(10, 1.5), 100}, 1e-6);
    RUN(S, aclnnLogSpace, st, en, 5, 2.0, lh.t);
    compare("LogSpace base 2 float16", read(lh), {1, std::sqrt(2.0), 2, std::pow(2, 1.5), 4}, 1e-3);
    expect_code("LogSpace steps 4 into 5 elements", aclnnLogSpaceGetWorkspaceSize(st, en, 4, 10.0, ls.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev lint = make({5}, ACL_INT32, {0});
    expect_code("LogSpace int32 result", aclnnLogSpaceGetWorkspaceSize(st, en, 5, 10.0, lint.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* Eye 3 x 5 (int32) */
    Dev e = make({3, 5}, ACL_INT32, {7});
    RUN(S, aclnnEye, 3, 5, e.t);
    compare("Eye 3 x 5", read(e), {1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, 0);
    expect_code("Eye n -1", aclnnEyeGetWorkspaceSize(-1, 5, e.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Eye shape (5, 3) into [3, 5]", aclnnEyeGetWorkspaceSize(5, 3, e.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Histc: 4 bins over [-2, 2] (max in the last bin, outside values and NaN skipped) */
    float lo = -2, hi = 2, zero = 0;
    aclScalar *smin = aclCreateScalar(&lo, ACL_FLOAT), *smax = aclCreateScalar(&hi, ACL_FLOAT),
              *sz = aclCreateScalar(&zero, ACL_FLOAT);
    Dev hx = make({3, 3}, ACL_FLOAT, {-2, -1.5, -0.5, 0, 0.2, 1.99, 2, 3, nan}, TRANSPOSED), hb = make({4}, ACL_FLOAT, {0});
    RUN(S, aclnnHistc, hx.t, 4, smin, smax, hb.t);
    compare("Histc 4 bins over [-2, 2]", read(hb), {2, 1, 2, 2}, 0);
    /* min == max: the data's range [1, 5] */
    Dev hy = make({5}, ACL_INT32, {1, 2, 2, 5, 3}), hi32 = make({2}, ACL_INT32, {0});
    RUN(S, aclnnHistc, hy.t, 2, sz, sz, hi32.t);
    compare("Histc min == max uses the data range", read(hi32), {3, 2}, 0);
    expect_code("Histc bins 0", aclnnHistcGetWorkspaceSize(hx.t, 0, smin, smax, hb.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Histc min > max", aclnnHistcGetWorkspaceSize(hx.t, 4, smax, smin, hb.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Bincount with weights and minlength */
    Dev bx = make({5}, ACL_INT64, {0, 3, 3, 1, 3}), bw = make({5}, ACL_FLOAT, {0.5, 1, 2, 4, 8}),
        bo = make({6}, ACL_FLOAT, {0}), bc = make({4}, ACL_INT64, {0});
    RUN(S, aclnnBincount, bx.t, bw.t, 6, bo.t);
    compare("Bincount weighted, minlength 6", read(bo), {0.5, 4, 0, 11, 0, 0}, 0);
    RUN(S, aclnnBincount, bx.t, nullptr, 0, bc.t);
    compare("Bincount counts", read(bc), {1, 1, 0, 3}, 0);
    Dev bf = make({5}, ACL_FLOAT, {0});
    expect_code("Bincount float self", aclnnBincountGetWorkspaceSize(bf.t, nullptr, 0, bc.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* an out of the wrong length fails the task at the synchronisation */
    NN(aclnnBincountGetWorkspaceSize(bx.t, nullptr, 0, bo.t, &ws, &ex));
    NN(aclnnBincount(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL Bincount into 6 elements for values up to 3 succeeded\n");
        g_fail++;
    }
    for (aclScalar *q : {smin, smax, sz}) aclDestroyScalar(q);
    aclDestroyScalar(st);
    aclDestroyScalar(en);
    for (Dev *d : {&x, &v, &i64, &i32, &xi, &vi, &ii, &fi, &ls, &lh, &lint, &e, &hx, &hb, &hy, &hi32, &bx, &bw, &bo, &bc, &bf})
        release(*d);
    printf("ok scans\n");
}

static void uniques() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Unique2 of a [2, 5] with counts and inverse: the value count is read back */
    std::vector<double> X = {3, 1, 3, 2, 1, 7, 3, 2, 2, 1};
    Dev x = make({2, 5}, ACL_INT32, X), v = make({10}, ACL_INT32, {0}), inv = make({2, 5}, ACL_INT64, {0}),
        cnt = make({10}, ACL_INT64, {0});
    RUN(S, aclnnUnique2, x.t, true, true, true, v.t, inv.t, cnt.t);
    expect_shape("Unique2 valueOut view shape", view_shape(v.t), {4});
    expect_shape("Unique2 countsOut view shape", view_shape(cnt.t), {4});
    std::vector<double> got = read(v);
    compare("Unique2 values", {got.begin(), got.begin() + 4}, {1, 2, 3, 7}, 0);
    got = read(cnt);
    compare("Unique2 counts", {got.begin(), got.begin() + 4}, {3, 3, 3, 1}, 0);
    compare("Unique2 inverse", read(inv), {2, 0, 2, 1, 0, 3, 2, 1, 1, 0}, 0);
    /* Unique of floats with -0.0 == 0.0, no inverse */
    Dev xf = make({6}, ACL_FLOAT, {0.5, -0.0, 2, 0.0, 0.5, -1}, STRIDED), vf = make({6}, ACL_FLOAT, {0});
    RUN(S, aclnnUnique, xf.t, true, false, vf.t, nullptr);
    expect_shape("Unique valueOut view shape", view_shape(vf.t), {4});
    got = read(vf);
    compare("Unique values of a strided view", {got.begin(), got.begin() + 4}, {-1, 0, 0.5, 2}, 0);
    /* UniqueConsecutive flattened (dim 1000 means none) */
    Dev xc = make({8}, ACL_INT64, {1, 1, 2, 2, 3, 1, 1, 2}), vc = make({8}, ACL_INT64, {0}),
        ic = make({8}, ACL_INT64, {0}), cc = make({8}, ACL_INT64, {0});
    RUN(S, aclnnUniqueConsecutive, xc.t, true, true, 1000, vc.t, ic.t, cc.t);
    expect_shape("UniqueConsecutive valueOut view shape", view_shape(vc.t), {5});
    got = read(vc);
    compare("UniqueConsecutive values", {got.begin(), got.begin() + 5}, {1, 2, 3, 1, 2}, 0);
    got = read(cc);
    compare("UniqueConsecutive counts", {got.begin(), got.begin() + 5}, {2, 2, 1, 2, 1}, 0);
    compare("UniqueConsecutive inverse", read(ic), {0, 0, 1, 1, 2, 3, 3, 4}, 0);
    /* UniqueConsecutive along dim 1 of [2, 4]: columns 0 == 1 and 2 == 3 collapse */
    Dev xd = make({2, 4}, ACL_FLOAT, {1, 1, 5, 5, 2, 2, 6, 6}), vd = make({2, 4}, ACL_FLOAT, {0}),
        id = make({4}, ACL_INT64, {0}), cd = make({4}, ACL_INT64, {0});
    RUN(S, aclnnUniqueConsecutive, xd.t, true, true, 1, vd.t, id.t, cd.t);
    expect_shape("UniqueConsecutive dim 1 valueOut view shape", view_shape(vd.t), {2, 2});
    got = read(vd);
    compare("UniqueConsecutive dim 1 values (contiguous [2, 2])", {got.begin(), got.begin() + 4}, {1, 5, 2, 6}, 0);
    compare("UniqueConsecutive dim 1 inverse", read(id), {0, 0, 1, 1}, 0);
    /* CANN asks for room for every element; CANN's own examples size the outputs for the
       result: a shorter valueOut works while the 4 values fit, and fails the task when not */
    Dev vfit = make({4}, ACL_INT32, {0}), cfit = make({4}, ACL_INT64, {0});
    RUN(S, aclnnUnique2, x.t, true, false, true, vfit.t, inv.t, cfit.t);
    compare("Unique2 values in a valueOut just long enough", read(vfit), {1, 2, 3, 7}, 0);
    compare("Unique2 counts in a countsOut just long enough", read(cfit), {3, 3, 3, 1}, 0);
    Dev vshort = make({3}, ACL_INT32, {0});
    NN(aclnnUnique2GetWorkspaceSize(x.t, true, false, false, vshort.t, inv.t, cnt.t, &ws, &ex));
    NN(aclnnUnique2(nullptr, 0, ex, S));
    {
        aclError e = aclrtSynchronizeStream(S);
        const char *m0 = aclGetRecentErrMsg();
        std::string m = m0 ? m0 : "";
        printf("synchronize after a Unique2 whose values do not fit: %d: %s\n", static_cast<int>(e), m.c_str());
        g_checks += 2;
        if (e == ACL_SUCCESS || m.find("the result needs 4 elements but valueOut has room for 3") == std::string::npos) g_fail++;
    }
    Dev vsmall = make({3, 3}, ACL_INT32, {0});
    expect_code("Unique2 valueOut not 1-D", aclnnUnique2GetWorkspaceSize(x.t, true, false, false, vsmall.t, inv.t, cnt.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev vbad = make({10}, ACL_FLOAT, {0});
    expect_code("Unique2 valueOut of another dtype",
                aclnnUnique2GetWorkspaceSize(x.t, true, false, false, vbad.t, inv.t, cnt.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Unique null valueOut", aclnnUniqueGetWorkspaceSize(x.t, true, false, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    /* Argsort descending (stable), SearchSorted left/right, with a sorter and per row */
    Dev as = make({6}, ACL_FLOAT, {2, 5, 2, 9, 5, 1}), ao = make({6}, ACL_INT64, {0});
    RUN(S, aclnnArgsort, as.t, 0, true, ao.t);
    compare("Argsort descending, stable among equals", read(ao), {3, 1, 4, 0, 2, 5}, 0);
    Dev sq = make({5}, ACL_FLOAT, {1, 3, 3, 5, 7}), sv = make({2, 3}, ACL_FLOAT, {0, 3, 8, 5, 6, 1}),
        so = make({2, 3}, ACL_INT64, {0}), so32 = make({2, 3}, ACL_INT32, {0});
    RUN(S, aclnnSearchSorted, sq.t, sv.t, false, false, nullptr, so.t);
    compare("SearchSorted left", read(so), {0, 1, 5, 3, 4, 0}, 0);
    RUN(S, aclnnSearchSorted, sq.t, sv.t, true, true, nullptr, so32.t);
    compare("SearchSorted right, INT32", read(so32), {0, 3, 5, 4, 4, 1}, 0);
    Dev uq = make({5}, ACL_FLOAT, {7, 1, 5, 3, 3}), srt = make({5}, ACL_INT64, {1, 3, 4, 2, 0});
    RUN(S, aclnnSearchSorted, uq.t, sv.t, false, false, srt.t, so.t);
    compare("SearchSorted with a sorter", read(so), {0, 1, 5, 3, 4, 0}, 0);
    Dev rq = make({2, 3}, ACL_INT32, {1, 2, 3, 10, 20, 30}), rv = make({2, 2}, ACL_INT32, {2, 4, 5, 25}),
        ro = make({2, 2}, ACL_INT64, {0});
    RUN(S, aclnnSearchSorted, rq.t, rv.t, false, false, nullptr, ro.t);
    compare("SearchSorted per row", read(ro), {1, 3, 0, 2}, 0);
    expect_code("SearchSorted outInt32 with an INT64 out",
                aclnnSearchSortedGetWorkspaceSize(sq.t, sv.t, true, false, nullptr, so.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev r3 = make({3, 3}, ACL_INT32, {1});
    expect_code("SearchSorted rows that differ",
                aclnnSearchSortedGetWorkspaceSize(rq.t, r3.t, false, false, nullptr, so.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Argsort dim 1 of 1-D", aclnnArgsortGetWorkspaceSize(as.t, 1, false, ao.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &v, &inv, &cnt, &xf, &vf, &xc, &vc, &ic, &cc, &xd, &vd, &id, &cd, &vbad, &vsmall, &vfit, &cfit, &vshort, &as, &ao, &sq, &sv,
                   &so, &so32, &uq, &srt, &rq, &rv, &ro, &r3})
        release(*d);
    printf("ok uniques\n");
}

/* PyTorch's source index of nearest (legacy) and the linear taps, for the references. */
static int nearest_src(int o, double r, int n) { return std::min(static_cast<int>(std::floor(o * r)), n - 1); }

static void interpolation() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int H = 3, W = 4;
    std::vector<double> X(2 * H * W);
    for (size_t i = 0; i < X.size(); i++) X[i] = static_cast<double>(i) * 0.5 - 3;
    Dev x = make({1, 2, H, W}, ACL_FLOAT, X);
    /* nearest to (5, 7): r = in / out */
    Dev o = make({1, 2, 5, 7}, ACL_FLOAT, {0});
    aclIntArray *os = ia({5, 7});
    RUN(S, aclnnUpsampleNearest2d, x.t, os, o.t);
    std::vector<double> want;
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 5; h++)
            for (int w = 0; w < 7; w++) want.push_back(X[(c * H + nearest_src(h, 3.0 / 5, H)) * W + nearest_src(w, 4.0 / 7, W)]);
    compare("UpsampleNearest2d to (5, 7)", read(o), want, 0);
    /* V2 with scale factors 2: r = 1 / 2 */
    Dev o2 = make({1, 2, 6, 8}, ACL_FLOAT, {0});
    aclIntArray *os2 = ia({6, 8});
    RUN(S, aclnnUpsampleNearest2dV2, x.t, os2, 2.0f, 2.0f, o2.t);
    want.clear();
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 6; h++)
            for (int w = 0; w < 8; w++) want.push_back(X[(c * H + h / 2) * W + w / 2]);
    compare("UpsampleNearest2dV2 scale 2", read(o2), want, 0);
    /* backward of the (5, 7) upsampling: each input gets the count of outputs that read it */
    Dev gy = make({1, 2, 5, 7}, ACL_FLOAT, {1.0}), gx = make({1, 2, H, W}, ACL_FLOAT, {0});
    aclIntArray *is = ia({1, 2, H, W});
    RUN(S, aclnnUpsampleNearest2dBackward, gy.t, os, is, 0.0, 0.0, gx.t);
    std::vector<double> cnt(2 * H * W, 0);
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 5; h++)
            for (int w = 0; w < 7; w++) cnt[(c * H + nearest_src(h, 3.0 / 5, H)) * W + nearest_src(w, 4.0 / 7, W)] += 1;
    compare("UpsampleNearest2dBackward counts", read(gx), cnt, 0);
    /* exact: floor((o + 0.5) * r) */
    RUN(S, aclnnUpsampleNearestExact2d, x.t, os, 0.0, 0.0, o.t);
    want.clear();
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 5; h++)
            for (int w = 0; w < 7; w++) {
                int sh = std::min(static_cast<int>(std::floor((h + 0.5) * 3.0 / 5)), H - 1);
                int sw = std::min(static_cast<int>(std::floor((w + 0.5) * 4.0 / 7)), W - 1);
                want.push_back(X[(c * H + sh) * W + sw]);
            }
    compare("UpsampleNearestExact2d to (5, 7)", read(o), want, 0);
    /* nearest 1-D of a [1, 2, 4] (uint8) to 6 */
    Dev x1 = make({1, 2, 4}, ACL_UINT8, {1, 2, 3, 4, 5, 6, 7, 8}), o1 = make({1, 2, 6}, ACL_UINT8, {0});
    aclIntArray *os1 = ia({6});
    RUN(S, aclnnUpsampleNearest1d, x1.t, os1, o1.t);
    compare("UpsampleNearest1d uint8 to 6", read(o1), {1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8}, 0);
    /* bilinear, align_corners true and false, to (5, 7); backward sums to the output count */
    for (int align = 0; align < 2; align++) {
        RUN(S, aclnnUpsampleBilinear2d, x.t, os, align != 0, 0.0, 0.0, o.t);
        want.clear();
        auto src = [&](int o_, int in, int out) {
            double r = align ? (out > 1 ? (in - 1.0) / (out - 1.0) : 0) : static_cast<double>(in) / out;
            double s = align ? r * o_ : std::max(r * (o_ + 0.5) - 0.5, 0.0);
            int i0 = std::min(static_cast<int>(std::floor(s)), in - 1);
            int i1 = i0 < in - 1 ? i0 + 1 : i0;
            return std::make_tuple(i0, i1, s - i0);
        };
        for (int c = 0; c < 2; c++)
            for (int h = 0; h < 5; h++)
                for (int w = 0; w < 7; w++) {
                    auto [h0, h1, lh] = src(h, H, 5);
                    auto [w0, w1, lw] = src(w, W, 7);
                    auto at = [&](int a, int b) { return X[(c * H + a) * W + b]; };
                    want.push_back((1 - lh) * ((1 - lw) * at(h0, w0) + lw * at(h0, w1)) +
                                   lh * ((1 - lw) * at(h1, w0) + lw * at(h1, w1)));
                }
        compare(align ? "UpsampleBilinear2d align_corners" : "UpsampleBilinear2d", read(o), want, 1e-5);
        RUN(S, aclnnUpsampleBilinear2dBackward, gy.t, os, is, align != 0, 0.0, 0.0, gx.t);
        std::vector<double> g = read(gx);
        double s = 0;
        for (double v : g) s += v;
        compare("UpsampleBilinear2dBackward of ones sums to the output count", {s}, {70}, 1e-5);
    }
    /* linear 1-D of [1, 2, 4] float to 7, align_corners true: exact thirds */
    Dev xl = make({1, 1, 4}, ACL_FLOAT, {0, 3, 6, 9}), ol = make({1, 1, 7}, ACL_FLOAT, {0});
    aclIntArray *osl = ia({7});
    RUN(S, aclnnUpsampleLinear1d, xl.t, osl, true, 0.0, ol.t);
    compare("UpsampleLinear1d align_corners", read(ol), {0, 1.5, 3, 4.5, 6, 7.5, 9}, 1e-6);
    expect_code("UpsampleNearest2d 3-D self", aclnnUpsampleNearest2dGetWorkspaceSize(xl.t, os, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclIntArray *os0 = ia({0, 7});
    expect_code("UpsampleNearest2d outputSize 0", aclnnUpsampleNearest2dGetWorkspaceSize(x.t, os0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearest2d out of another shape", aclnnUpsampleNearest2dGetWorkspaceSize(x.t, os2, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBilinear2d uint8", aclnnUpsampleBilinear2dGetWorkspaceSize(x1.t, os1, false, 0.0, 0.0, o1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearest2dBackward null inputSize",
                aclnnUpsampleNearest2dBackwardGetWorkspaceSize(gy.t, os, nullptr, 0.0, 0.0, gx.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (aclIntArray *a : {os, os2, is, os1, osl, os0}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &o2, &gy, &gx, &x1, &o1, &xl, &ol}) release(*d);
    printf("ok interpolation\n");
}

static void sampling() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* InplaceRandom [3, 9) into int64 and float: range, every value seen, reproducible */
    Dev r = make({4000}, ACL_INT64, {0}), r2 = make({4000}, ACL_INT64, {0}), rf = make({500}, ACL_FLOAT, {0});
    RUN(S, aclnnInplaceRandom, r.t, 3, 9, 42, 0);
    RUN(S, aclnnInplaceRandom, r2.t, 3, 9, 42, 0);
    std::vector<double> a = read(r), b = read(r2);
    compare("InplaceRandom same seed and offset, same values", a, b, 0);
    std::set<double> seen(a.begin(), a.end());
    g_checks++;
    if (seen.size() != 6 || *seen.begin() != 3 || *seen.rbegin() != 8) {
        printf("FAIL InplaceRandom [3, 9): %zu distinct values from %g to %g\n", seen.size(), *seen.begin(), *seen.rbegin());
        g_fail++;
    }
    RUN(S, aclnnInplaceRandom, r2.t, 3, 9, 42, 4);
    g_checks++;
    if (read(r2) == a) {
        printf("FAIL InplaceRandom with another offset gave the same values\n");
        g_fail++;
    }
    RUN(S, aclnnInplaceRandom, rf.t, -2, 2, 7, 0);
    for (double v : read(rf)) {
        if (v < -2 || v > 1 || v != std::floor(v)) {
            printf("FAIL InplaceRandom float [-2, 2) gave %g\n", v);
            g_fail++;
            break;
        }
    }
    g_checks++;
    Dev r8 = make({10}, ACL_INT8, {0});
    expect_code("InplaceRandom to 300 into int8", aclnnInplaceRandomGetWorkspaceSize(r8.t, 0, 300, 1, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceRandom from == to", aclnnInplaceRandomGetWorkspaceSize(r.t, 5, 5, 1, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Randperm 50 (int32): a permutation */
    Dev pm = make({50}, ACL_INT32, {0});
    RUN(S, aclnnRandperm, 50, 3, 0, pm.t);
    std::vector<double> perm = read(pm), sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> iota(50);
    for (int i = 0; i < 50; i++) iota[i] = i;
    compare("Randperm 50 is a permutation", sorted, iota, 0);
    g_checks++;
    if (perm == iota) {
        printf("FAIL Randperm 50 left the identity\n");
        g_fail++;
    }
    expect_code("Randperm n -1", aclnnRandpermGetWorkspaceSize(-1, 3, 0, pm.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Multinomial: zero-weight categories never drawn; without replacement all distinct */
    Dev pr = make({2, 4}, ACL_FLOAT, {0.1, 0, 0.9, 0, 1, 1, 1, 1}), mo = make({2, 300}, ACL_INT64, {0});
    RUN(S, aclnnMultinomial, pr.t, 300, true, 5, 0, mo.t);
    std::vector<double> m = read(mo);
    int twos = 0, bad = 0;
    for (int j = 0; j < 300; j++) {
        if (m[j] == 1 || m[j] == 3) bad++;
        if (m[j] == 2) twos++;
    }
    compare("Multinomial never draws a zero-weight category", {static_cast<double>(bad)}, {0}, 0);
    g_checks++;
    if (twos < 240) {
        printf("FAIL Multinomial drew category 2 (p 0.9) %d times of 300\n", twos);
        g_fail++;
    }
    Dev mo2 = make({2, 2}, ACL_INT64, {0});
    RUN(S, aclnnMultinomial, pr.t, 2, false, 5, 0, mo2.t);
    std::vector<double> m2 = read(mo2);
    std::vector<double> first = {m2[0], m2[1]};
    std::sort(first.begin(), first.end());
    compare("Multinomial without replacement of a row with two categories", first, {0, 2}, 0);
    expect_code("Multinomial 5 without replacement of 4 categories",
                aclnnMultinomialGetWorkspaceSize(pr.t, 5, false, 5, 0, mo2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev mf = make({2, 300}, ACL_FLOAT, {0});
    expect_code("Multinomial float out", aclnnMultinomialGetWorkspaceSize(pr.t, 300, true, 5, 0, mf.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&r, &r2, &rf, &r8, &pm, &pr, &mo, &mo2, &mf}) release(*d);
    printf("ok sampling\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    losses();
    scans();
    uniques();
    interpolation();
    sampling();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
